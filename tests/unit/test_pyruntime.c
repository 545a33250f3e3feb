/* Unit tests for lib/runtimes/pylines and lib/runtimes/pyruntime: the three CPython line-table formats against
 * tables compiled by CPython itself (and the examples of Objects/locations.md and
 * lnotab_notes.txt), then live interpreters: tests/fixtures/pystack.py runs under each
 * installed CPython (Debian's stripped /usr/bin/python3.11 and pyenv's 3.8-3.13 libpython
 * builds) and its stacks are read 50 times from user space; 2.7, 3.6 and 3.7 must be refused.
 * An interpreter that is not installed is skipped, with a note. A file name of 758 characters
 * read from an image is kept whole, one of 5000 cut visibly. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "proc/procmap.h"
#include "runtimes/pyruntime.h"
#include "runtimes/pylines.h"

struct lt_range {
	int start, end, line; /* bytes [start, end) have line (-1: none) */
};

/* The tables below are of this function, dumped with co_lnotab + dis.findlinestarts (3.9) or
 * co_linetable + co_lines() (3.10+) by each pyenv interpreter:
 *
 * def sample(a, b):
 *     x = a + b
 *     if x > 3:
 *         y = [i
 *              for i in range(x)]
 *     else:
 *         y = None
 *
 *
 *     try:
 *         z = a / b
 *     except ZeroDivisionError:
 *         z = 0
 *     return (x,
 *             y,
 *             z)
 */
/* v39: sample() above, compiled by CPython 3.9.18 */
static const uint8_t v39_table[] = {0x00, 0x01, 0x08, 0x01, 0x08, 0x01, 0x06, 0x01, 0x06, 0xff, 0x08, 0x03, 0x04, 0x03, 0x02, 0x01, 0x0c, 0x01, 0x0c, 0x01, 0x0a, 0x01, 0x02, 0x01, 0x02, 0x01, 0x02, 0xfe};
static const struct lt_range v39_ranges[] = {{0, 8, 3}, {8, 16, 4}, {16, 22, 5}, {22, 28, 6}, {28, 36, 5}, {36, 40, 8}, {40, 42, 11}, {42, 54, 12}, {54, 66, 13}, {66, 76, 14}, {76, 78, 15}, {78, 80, 16}, {80, 82, 17}, {82, 86, 15}};
static const int v39_firstlineno = 2;
/* v310: sample() above, compiled by CPython 3.10.13 */
static const uint8_t v310_table[] = {0x08, 0x01, 0x08, 0x01, 0x06, 0x01, 0x06, 0x01, 0x08, 0xff, 0x04, 0x03, 0x02, 0x03, 0x0c, 0x01, 0x0c, 0x01, 0x08, 0x01, 0x02, 0xff, 0x02, 0x02, 0x02, 0x01, 0x02, 0x01, 0x04, 0xfe};
static const struct lt_range v310_ranges[] = {{0, 8, 3}, {8, 16, 4}, {16, 22, 5}, {22, 28, 6}, {28, 36, 5}, {36, 40, 8}, {40, 42, 11}, {42, 54, 12}, {54, 66, 13}, {66, 74, 14}, {74, 76, 13}, {76, 78, 15}, {78, 80, 16}, {80, 82, 17}, {82, 86, 15}};
static const int v310_firstlineno = 2;
/* v311: sample() above, compiled by CPython 3.11.7 */
static const uint8_t v311_table[] = {0x80, 0x00, 0xd8, 0x08, 0x09, 0x88, 0x41, 0x89, 0x05, 0x80, 0x41, 0xd8, 0x07, 0x08, 0x88, 0x31, 0x82, 0x75, 0x80, 0x75, 0xf0, 0x02, 0x01, 0x0d, 0x20, 0xf0, 0x00, 0x01, 0x0d, 0x20, 0xdd, 0x16, 0x1b, 0x98, 0x41, 0x91, 0x68, 0x94, 0x68, 0xf0, 0x03, 0x01, 0x0d, 0x20, 0xf1, 0x00, 0x01, 0x0d, 0x20, 0xf4, 0x00, 0x01, 0x0d, 0x20, 0x88, 0x01, 0x88, 0x01, 0xf0, 0x06, 0x00, 0x0d, 0x11, 0x88, 0x01, 0xf0, 0x06, 0x03, 0x05, 0x0e, 0xd8, 0x0c, 0x0d, 0x90, 0x01, 0x89, 0x45, 0x88, 0x01, 0x88, 0x01, 0xf8, 0xdd, 0x0b, 0x1c, 0xf0, 0x00, 0x01, 0x05, 0x0e, 0xf0, 0x00, 0x01, 0x05, 0x0e, 0xf0, 0x00, 0x01, 0x05, 0x0e, 0xd8, 0x0c, 0x0d, 0x88, 0x01, 0x88, 0x01, 0x88, 0x01, 0xf0, 0x03, 0x01, 0x05, 0x0e, 0xf8, 0xf8, 0xf8, 0xe0, 0x0c, 0x0d, 0xd8, 0x0c, 0x0d, 0xd8, 0x0c, 0x0d, 0xf0, 0x05, 0x02, 0x0c, 0x0f, 0xf0, 0x00, 0x02, 0x05, 0x0f};
static const struct lt_range v311_ranges[] = {{0, 2, 2}, {2, 4, 3}, {4, 6, 3}, {6, 10, 3}, {10, 12, 3}, {12, 14, 4}, {14, 16, 4}, {16, 22, 4}, {22, 24, 4}, {24, 26, 5}, {26, 28, 5}, {28, 40, 6}, {40, 42, 6}, {42, 46, 6}, {46, 56, 6}, {56, 58, 5}, {58, 62, 5}, {62, 72, 5}, {72, 74, 5}, {74, 76, 5}, {76, 78, 8}, {78, 80, 8}, {80, 82, 11}, {82, 84, 12}, {84, 86, 12}, {86, 90, 12}, {90, 92, 12}, {92, 94, 12}, {94, 96, -1}, {96, 108, 13}, {108, 110, 13}, {110, 112, 13}, {112, 114, 13}, {114, 116, 14}, {116, 118, 14}, {118, 120, 14}, {120, 122, 14}, {122, 124, 13}, {124, 126, -1}, {126, 128, -1}, {128, 130, -1}, {130, 132, 15}, {132, 134, 16}, {134, 136, 17}, {136, 138, 15}, {138, 140, 15}};
static const int v311_firstlineno = 2;
/* v312: sample() above, compiled by CPython 3.12.1 */
static const uint8_t v312_table[] = {0x80, 0x00, 0xd8, 0x08, 0x09, 0x88, 0x41, 0x89, 0x05, 0x80, 0x41, 0xd8, 0x07, 0x08, 0x88, 0x31, 0x82, 0x75, 0xe4, 0x16, 0x1b, 0x98, 0x41, 0x93, 0x68, 0xf6, 0x03, 0x01, 0x0d, 0x20, 0xd8, 0x11, 0x12, 0xf2, 0x03, 0x00, 0x0e, 0x0f, 0xf0, 0x00, 0x01, 0x0d, 0x20, 0x88, 0x01, 0xf1, 0x00, 0x01, 0x0d, 0x20, 0xf0, 0x06, 0x00, 0x0d, 0x11, 0x88, 0x01, 0xf0, 0x06, 0x03, 0x05, 0x0e, 0xd8, 0x0c, 0x0d, 0x90, 0x01, 0x89, 0x45, 0x88, 0x01, 0xf0, 0x06, 0x00, 0x0d, 0x0e, 0xd8, 0x0c, 0x0d, 0xd8, 0x0c, 0x0d, 0xf0, 0x05, 0x02, 0x0c, 0x0f, 0xf0, 0x00, 0x02, 0x05, 0x0f, 0xf9, 0xf2, 0x15, 0x01, 0x0d, 0x20, 0xf8, 0xf4, 0x10, 0x00, 0x0c, 0x1d, 0xf2, 0x00, 0x01, 0x05, 0x0e, 0xd8, 0x0c, 0x0d, 0x8a, 0x01, 0xf0, 0x03, 0x01, 0x05, 0x0e, 0xfa};
static const struct lt_range v312_ranges[] = {{0, 2, 2}, {2, 12, 3}, {12, 22, 4}, {22, 42, 6}, {42, 56, 5}, {56, 58, 6}, {58, 72, 5}, {72, 76, 8}, {76, 78, 11}, {78, 88, 12}, {88, 90, 15}, {90, 92, 16}, {92, 94, 17}, {94, 98, 15}, {98, 102, -1}, {102, 108, 5}, {108, 110, -1}, {110, 126, 13}, {126, 134, 14}, {134, 136, 13}, {136, 142, -1}};
static const int v312_firstlineno = 2;
/* v313: sample() above, compiled by CPython 3.13.0 */
static const uint8_t v313_table[] = {0x80, 0x00, 0xd8, 0x08, 0x09, 0x89, 0x05, 0x80, 0x41, 0xd8, 0x07, 0x08, 0x88, 0x31, 0x83, 0x75, 0xe4, 0x16, 0x1b, 0x98, 0x41, 0x94, 0x68, 0xf3, 0x03, 0x01, 0x0d, 0x20, 0xd9, 0x16, 0x1e, 0x90, 0x11, 0xf3, 0x03, 0x00, 0x0e, 0x0f, 0xd9, 0x16, 0x1e, 0xf0, 0x03, 0x00, 0x09, 0x0a, 0xf0, 0x00, 0x01, 0x0d, 0x20, 0x88, 0x01, 0xf0, 0x06, 0x00, 0x0d, 0x11, 0x88, 0x01, 0xf0, 0x06, 0x03, 0x05, 0x0e, 0xd8, 0x0c, 0x0d, 0x89, 0x45, 0x88, 0x01, 0xf0, 0x06, 0x00, 0x0d, 0x0e, 0xd8, 0x0c, 0x0d, 0xd8, 0x0c, 0x0d, 0xf0, 0x05, 0x02, 0x0c, 0x0f, 0xf0, 0x00, 0x02, 0x05, 0x0f, 0xf9, 0xf2, 0x15, 0x01, 0x0d, 0x20, 0xf8, 0xf4, 0x10, 0x00, 0x0c, 0x1d, 0xf3, 0x00, 0x01, 0x05, 0x0e, 0xd8, 0x0c, 0x0d, 0x8a, 0x01, 0xf0, 0x03, 0x01, 0x05, 0x0e, 0xfa};
static const struct lt_range v313_ranges[] = {{0, 2, 2}, {2, 10, 3}, {10, 22, 4}, {22, 44, 6}, {44, 52, 5}, {52, 58, 6}, {58, 66, 5}, {66, 70, 6}, {70, 76, 5}, {76, 80, 8}, {80, 82, 11}, {82, 90, 12}, {90, 92, 15}, {92, 94, 16}, {94, 96, 17}, {96, 100, 15}, {100, 104, -1}, {104, 110, 5}, {110, 112, -1}, {112, 130, 13}, {130, 138, 14}, {138, 140, 13}, {140, 146, -1}};
static const int v313_firstlineno = 2;

/* Asserts every even offset of every range decodes to the range's line. */
static void check_ranges(enum pylines_format fmt, const uint8_t *t, size_t len, int first,
			 const struct lt_range *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (int off = r[i].start; off < r[i].end; off += 2) {
			int got = pylines_addr2line(fmt, t, len, first, (uint32_t)off);
			if (got != r[i].line)
				fail_msg("offset %d: line %d, want %d", off, got, r[i].line);
		}
}

#define CHECK(fmt, v) check_ranges(fmt, v##_table, sizeof(v##_table), v##_firstlineno, v##_ranges, \
				   sizeof(v##_ranges) / sizeof(v##_ranges[0]))

/* Tables compiled by CPython 3.9 to 3.13 give the lines CPython itself reports. */
static void test_lines_cpython(void **state)
{
	CHECK(PYLINES_LNOTAB, v39);
	CHECK(PYLINES_LINETABLE, v310);
	CHECK(PYLINES_LOCATIONS, v311);
	CHECK(PYLINES_LOCATIONS, v312);
	CHECK(PYLINES_LOCATIONS, v313);
}

/* lnotab_notes.txt's example (offsets 0, 6, 50, 350, 361 start lines 1, 2, 7, 207, 208): the
 * 300-byte and 200-line jumps are split into several pairs; a negative delta goes back. */
static void test_lines_lnotab(void **state)
{
	static const uint8_t t[] = { 6, 1, 44, 5, 255, 0, 45, 127, 0, 73, 11, 1, 4, 0xfd };
	static const int want[][2] = { { 0, 1 }, { 4, 1 }, { 6, 2 }, { 48, 2 }, { 50, 7 }, { 348, 7 },
				       { 350, 207 }, { 360, 207 }, { 361, 208 }, { 364, 208 }, { 365, 205 },
				       { 1000, 205 } };

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(pylines_addr2line(PYLINES_LNOTAB, t, sizeof(t), 1, (uint32_t)want[i][0]), want[i][1]);
	/* an odd byte at the end is ignored, an empty table keeps the first line */
	assert_int_equal(pylines_addr2line(PYLINES_LNOTAB, t, 3, 1, 100), 2);
	assert_int_equal(pylines_addr2line(PYLINES_LNOTAB, t, 0, 9, 100), 9);
}

/* 3.10: -128 is a range without a line that leaves the running line alone; past the end: -1. */
static void test_lines_310(void **state)
{
	static const uint8_t t[] = { 4, 0, 6, 2, 2, 0x80, 4, 1 };

	assert_int_equal(pylines_addr2line(PYLINES_LINETABLE, t, sizeof(t), 10, 0), 10);
	assert_int_equal(pylines_addr2line(PYLINES_LINETABLE, t, sizeof(t), 10, 4), 12);
	assert_int_equal(pylines_addr2line(PYLINES_LINETABLE, t, sizeof(t), 10, 10), -1);
	assert_int_equal(pylines_addr2line(PYLINES_LINETABLE, t, sizeof(t), 10, 12), 13);
	assert_int_equal(pylines_addr2line(PYLINES_LINETABLE, t, sizeof(t), 10, 16), -1);
}

/* locations.md's forms: short (codes 0-9), one-line (10-12), no-column (13, signed varint),
 * long (14: line delta, end line, columns as varints, here with a 2-chunk varint), none (15). */
static void test_lines_locations(void **state)
{
	static const uint8_t t[] = {
		0x80 | 0 << 3 | 1, 5,              /* units 0-1: short form, line 20 */
		0x80 | 12 << 3 | 0, 1, 2,          /* unit 2: one-line, +2 -> 22 */
		0x80 | 13 << 3 | 2, 7,             /* units 3-5: no column, -3 -> 19 */
		0x80 | 15 << 3 | 0,                /* unit 6: no location (line stays 19) */
		0x80 | 14 << 3 | 0, 0x40 | 8, 1, 0, 3, 4, /* unit 7: long, +(72 >> 1) = +36 -> 55 */
		0x80 | 13 << 3 | 0, 0x40,          /* unit 8: truncated varint: malformed */
	};

	assert_int_equal(pylines_addr2line(PYLINES_LOCATIONS, t, sizeof(t), 20, 0), 20);
	assert_int_equal(pylines_addr2line(PYLINES_LOCATIONS, t, sizeof(t), 20, 2), 20);
	assert_int_equal(pylines_addr2line(PYLINES_LOCATIONS, t, sizeof(t), 20, 4), 22);
	assert_int_equal(pylines_addr2line(PYLINES_LOCATIONS, t, sizeof(t), 20, 6), 19);
	assert_int_equal(pylines_addr2line(PYLINES_LOCATIONS, t, sizeof(t), 20, 10), 19);
	assert_int_equal(pylines_addr2line(PYLINES_LOCATIONS, t, sizeof(t), 20, 12), -1);
	assert_int_equal(pylines_addr2line(PYLINES_LOCATIONS, t, sizeof(t), 20, 14), 55);
	assert_int_equal(pylines_addr2line(PYLINES_LOCATIONS, t, sizeof(t), 20, 16), -1);
	assert_int_equal(pylines_addr2line(PYLINES_LOCATIONS, t, sizeof(t), 20, 100), -1);
	/* an entry that does not start with bit 7 set is malformed */
	assert_int_equal(pylines_addr2line(PYLINES_LOCATIONS, (const uint8_t *)"\x05", 1, 20, 0), -1);
}

/* ---- memory images (the fuzz seeds of tests/fuzz/corpus/fuzz_pyruntime) ---- */

#define IMAGE_BASE 0x10000000ULL

/* Loads seed-v3MINOR: byte 0 the version, then a 4 KiB image written by
 * tests/fuzz/pyruntime_seeds.py: runtime 0x000, interp 0x100, thread 0x200, frames 0x400 and
 * 0x480 (one code object at 0x600, lasti 4, first line 10, lines +1 per 2 bytes), file 0xa00,
 * name 0xa80. */
static size_t load_seed(int minor, uint8_t *img, size_t cap)
{
	const char *root = getenv("ROOT");
	char path[PATH_MAX];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/fuzz/corpus/fuzz_pyruntime/seed-v3%d", root ? root : ".", minor);
	assert_non_null(f = fopen(path, "rb"));
	n = fread(img, 1, cap, f);
	fclose(f);
	assert_int_equal(img[0], minor);
	return n;
}

struct image_walk {
	struct pyruntime *rt;
	size_t nframes;
	bool truncated;
	struct pyframe leaf;
	char leafname[64];
};

static int on_image_thread(const struct pythread *t, void *arg)
{
	struct image_walk *w = arg;

	w->nframes = t->nframes, w->truncated = t->truncated;
	assert_int_equal(t->thread_id, 0x1234);
	if (t->nframes) {
		assert_int_equal(pycode_resolve(w->rt, t->frames[0].code, t->frames[0].lasti, &w->leaf), 0);
		snprintf(w->leafname, sizeof(w->leafname), "%s", w->leaf.qualname);
	}
	return 0;
}

/* An image walks to two frames of func in /tmp/x.py; a frame chain that loops is cut at the
 * depth cap and counted; a code object whose name changed at the same address is re-read. */
static void image_checks(int minor, size_t fr_back, size_t co_name)
{
	static uint8_t img[8192];
	struct pyruntime r;
	struct image_walk w = { &r };
	size_t n = load_seed(minor, img, sizeof(img)) - 1;
	uint64_t loop = IMAGE_BASE + 0x400, other = IMAGE_BASE + 0xa00;

	assert_int_equal(pyruntime_init_image(&r, img + 1, n, IMAGE_BASE, minor), 0);
	assert_int_equal(pyruntime_stacks(&r, on_image_thread, &w), 0);
	assert_int_equal(w.nframes, 2);
	assert_false(w.truncated);
	assert_string_equal(w.leafname, "func");
	assert_string_equal(w.leaf.filename, "/tmp/x.py");
	assert_int_equal(w.leaf.firstlineno, 10);
	assert_int_equal(w.leaf.line, 12); /* byte 4: the third code unit, second entry */
	memcpy(img + 1 + 0x480 + fr_back, &loop, 8); /* the caller's caller is the leaf again */
	memcpy(img + 1 + 0x600 + co_name, &other, 8); /* the code's name is now the file name */
	if (minor >= 11)
		memcpy(img + 1 + 0x600 + co_name + 8, &other, 8); /* co_qualname too */
	assert_int_equal(pyruntime_stacks(&r, on_image_thread, &w), 0);
	assert_int_equal(w.nframes, PYRUNTIME_MAX_DEPTH);
	assert_true(w.truncated);
	assert_int_equal(r.errors[PYRT_ERR_DEPTH], 1);
	assert_string_equal(w.leafname, "/tmp/x.py");
	pyruntime_release(&r);
}

static void test_image_39(void **state)
{
	image_checks(9, 24, 112);
}

static void test_image_312(void **state)
{
	image_checks(12, 8, 120);
}

/* 3.14 (seed-v314: _Py_DebugOffsets at the image's start): f_executable's tag bit is cleared,
 * the interpreter's entry frame between the two Python frames is skipped (owner 3), as a C-stack
 * shim would be (owner 4). */
static void test_image_314(void **state)
{
	static uint8_t img[0x4000 + 1];
	struct pyruntime r;
	struct image_walk w = { &r };
	size_t n = load_seed(14, img, sizeof(img)) - 1;

	(void)state;
	assert_int_equal(n, 0x4000);
	assert_int_equal(pyruntime_init_image(&r, img + 1, n, IMAGE_BASE, 14), 0);
	assert_int_equal(pyruntime_stacks(&r, on_image_thread, &w), 0);
	assert_int_equal(w.nframes, 2);
	assert_false(w.truncated);
	assert_string_equal(w.leafname, "func");
	assert_string_equal(w.leaf.filename, "/tmp/x.py");
	assert_int_equal(w.leaf.line, 12);
	img[1 + 0x3480 + 74] = 4; /* FRAME_OWNED_BY_CSTACK */
	assert_int_equal(pyruntime_stacks(&r, on_image_thread, &w), 0);
	assert_int_equal(w.nframes, 2);
	img[1 + 0x3480 + 74] = 0; /* told as a Python frame: its executable (0) is no code object */
	assert_int_equal(pyruntime_stacks(&r, on_image_thread, &w), 0);
	assert_int_equal(w.nframes, 1);
	assert_true(w.truncated);
	pyruntime_release(&r);
}

/* Puts an ASCII str of n copies of ch (the first one '/') at off of the image (a copy of the
 * seed's file name's header) and points the code object's co_filename at it. */
static void put_filename(uint8_t *img, const struct pyoffsets *o, size_t off, char ch, int64_t n)
{
	uint64_t addr = IMAGE_BASE + off;

	memcpy(img + off, img + 0xa00, o->unicode_ascii_size);
	memcpy(img + off + o->unicode_length, &n, 8);
	memset(img + off + o->unicode_ascii_size, ch, (size_t)n);
	img[off + o->unicode_ascii_size] = '/';
	memcpy(img + 0x600 + o->co_filename, &addr, 8);
}

/* A file name of 758 characters is kept whole (report --lines shows it; it was cut to 512
 * silently); one of 5000 keeps PATH_MAX characters and ends in "...". */
static void test_long_filename(void **state)
{
	static uint8_t img[1 + 0x4000];
	struct pyruntime r;
	struct pyframe f;
	char want[759];

	(void)state;
	load_seed(12, img, sizeof(img));
	assert_int_equal(pyruntime_init_image(&r, img + 1, sizeof(img) - 1, IMAGE_BASE, 12), 0);
	put_filename(img + 1, &r.off, 0x1000, 'x', 758);
	memset(want, 'x', 758);
	want[0] = '/', want[758] = 0;
	assert_int_equal(pycode_resolve(&r, IMAGE_BASE + 0x600, 4, &f), 0);
	assert_string_equal(f.filename, want);
	assert_string_equal(f.qualname, "func");
	put_filename(img + 1, &r.off, 0x2000, 'y', 5000);
	assert_int_equal(pycode_resolve(&r, IMAGE_BASE + 0x600, 4, &f), 0);
	assert_int_equal(strlen(f.filename), 4096 + 3);
	assert_int_equal(strspn(f.filename + 1, "y"), 4095);
	assert_string_equal(f.filename + 4096, "...");
	pyruntime_release(&r);
}

/* The code cache starts small and grows only when the sampled code does not fit: a process
 * with a few code objects keeps 64 slots however often it is sampled; 600 code objects (copies
 * of the seed's at 512-byte steps) looked up in turn grow it, and every answer stays right. */
static void test_code_cache_grows(void **state)
{
	enum { COPIES = 600, STEP = 512 };
	static uint8_t img[4096 + COPIES * STEP + 1];
	struct pyruntime r;
	struct pyframe f;
	size_t n = load_seed(12, img, 4097) - 1;

	(void)state;
	assert_int_equal(n, 4096);
	for (size_t i = 0; i < COPIES; i++)
		memcpy(img + 1 + 4096 + i * STEP, img + 1 + 0x600, STEP);
	assert_int_equal(pyruntime_init_image(&r, img + 1, sizeof(img) - 1, IMAGE_BASE, 12), 0);
	assert_int_equal(r.cache_bits, 6);
	for (int k = 0; k < 10000; k++) { /* the seed's one code object and two copies */
		uint64_t code = k % 3 ? IMAGE_BASE + 4096 + (uint64_t)(k % 3) * STEP : IMAGE_BASE + 0x600;
		assert_int_equal(pycode_resolve(&r, code, 4, &f), 0);
	}
	assert_int_equal(r.cache_bits, 6);
	for (int round = 0; round < 20; round++)
		for (size_t i = 0; i < COPIES; i++) {
			assert_int_equal(pycode_resolve(&r, IMAGE_BASE + 4096 + i * STEP, 4, &f), 0);
			assert_string_equal(f.qualname, "func");
			assert_string_equal(f.filename, "/tmp/x.py");
			assert_int_equal(f.line, 12);
		}
	print_message("code cache: 2^%u slots for %d code objects\n", r.cache_bits, COPIES);
	assert_in_range(r.cache_bits, 10, 12);
	pyruntime_release(&r);
}

/* A _Py_DebugOffsets as CPython writes it: the fields firn reads, with the word each has in
 * the 3.13 layout (73 words) and the 3.14 one (95), and the value of Debian's 3.14.10 (read
 * from its _PyRuntime's initial bytes). */
static const struct { uint8_t w13, w14; uint64_t v; } debug_rows[] = {
	{ 3, 3, 316616 } /* runtime size */, { 5, 5, 808 } /* interpreters.head */,
	{ 6, 6, 225864 } /* interpreter size */, { 9, 9, 7344 } /* threads.head */,
	{ 19, 22, 832 } /* thread state size */, { 21, 24, 8 } /* next */, { 22, 25, 16 } /* interp */,
	{ 23, 26, 72 } /* current_frame */, { 24, 27, 152 } /* thread_id */, { 25, 28, 160 } /* native */,
	{ 28, 31, 88 } /* frame size */, { 29, 32, 8 } /* previous */, { 30, 33, 0 } /* f_executable */,
	{ 31, 34, 56 } /* instr_ptr */, { 33, 36, 74 } /* owner */, { 34, 39, 216 } /* code size */,
	{ 35, 40, 112 } /* co_filename */, { 36, 41, 120 } /* co_name */, { 37, 42, 128 } /* co_qualname */,
	{ 38, 43, 136 } /* co_linetable */, { 39, 44, 68 } /* co_firstlineno */,
	{ 43, 48, 208 } /* co_code_adaptive */, { 44, 50, 16 } /* PyObject size */, { 45, 51, 8 } /* ob_type */,
	{ 46, 52, 416 } /* type size */, { 47, 53, 24 } /* tp_name */, { 64, 74, 40 } /* bytes size */,
	{ 65, 75, 16 } /* ob_size */, { 66, 76, 32 } /* ob_sval */, { 67, 77, 64 } /* unicode size */,
	{ 68, 78, 32 } /* state */, { 69, 79, 16 } /* length */, { 70, 80, 40 } /* ascii size */,
};

/* Writes a sane _Py_DebugOffsets of version 3.minor (hex: its PY_VERSION_HEX) into d (96 words)
 * in the 3.13 or 3.14 layout. */
static void debug_image(uint64_t *d, int layout, uint64_t hex)
{
	memset(d, 0, 96 * 8);
	memcpy(d, "xdebugpy", 8);
	d[1] = hex;
	for (size_t i = 0; i < sizeof(debug_rows) / sizeof(debug_rows[0]); i++)
		d[layout == 13 ? debug_rows[i].w13 : debug_rows[i].w14] = debug_rows[i].v;
}

/* Whether init_image refuses d as 3.minor, with a reason holding note. */
static void refused(uint64_t *d, int minor, const char *note)
{
	struct pyruntime r;

	assert_int_equal(pyruntime_init_image(&r, d, 96 * 8, IMAGE_BASE, minor), -EPROTONOSUPPORT);
	if (!strstr(r.reason, note))
		fail_msg("reason '%s' does not say '%s'", r.reason, note);
	pyruntime_release(&r);
}

/* 3.13's and 3.14's _Py_DebugOffsets give their offsets; each is refused with a wrong cookie,
 * another version, a free-threaded build (by name) or an offset outside its struct. */
static void test_debug_offsets(void **state)
{
	uint64_t d[96];
	struct pyruntime r;

	debug_image(d, 13, 0x030d00f0);
	assert_int_equal(pyruntime_init_image(&r, d, sizeof(d), IMAGE_BASE, 13), 0);
	assert_int_equal(r.off.rt_interp_head, 808);
	assert_int_equal(r.off.interp_tstate_head, 7344);
	assert_int_equal(r.off.ts_frame, 72);
	assert_int_equal(r.off.ts_native_tid, 160);
	assert_int_equal(r.off.unicode_compact_size, 56);
	pyruntime_release(&r);
	refused(d, 14, "cookie or version"); /* 3.13's offsets told as 3.14's */
	debug_image(d, 14, 0x030e0af0);
	assert_int_equal(pyruntime_init_image(&r, d, sizeof(d), IMAGE_BASE, 14), 0);
	assert_int_equal(r.off.ts_frame, 72);
	assert_int_equal(r.off.ts_native_tid, 160);
	assert_int_equal(r.off.fr_code, 0);
	assert_int_equal(r.off.fr_owner, 74);
	assert_int_equal(r.off.co_qualname, 128);
	assert_int_equal(r.off.co_code_adaptive, 208);
	assert_int_equal(r.off.rt_autotss, 0); /* not known: tstates are found by native tid */
	pyruntime_release(&r);
	refused(d, 13, "cookie or version");
	d[2] = 1;
	refused(d, 14, "python 3.14t (free-threaded) is not supported");
	d[2] = 0, d[26] = 832; /* current_frame at the thread state's end */
	refused(d, 14, "out of range in the layout of 3.14");
	d[26] = 72, d[0] ^= 1;
	refused(d, 14, "cookie or version");
	/* a table version reads no debug offsets */
	d[0] ^= 1;
	refused(d, 7, "python 3.7 is not supported (3.8 to 3.14 are)");
	/* zeros (ld.so has not mapped the data segment yet): looked at again, not refused */
	memset(d, 0, sizeof(d));
	assert_int_equal(pyruntime_init_image(&r, d, sizeof(d), IMAGE_BASE, 13), -EAGAIN);
	assert_non_null(strstr(r.reason, "not mapped yet"));
	pyruntime_release(&r);
}

/* A later 3.x whose _Py_DebugOffsets still has 3.14's layout is read through it; one whose
 * layout moved (a word added in the thread state) is refused with the reason. */
static void test_debug_offsets_later(void **state)
{
	uint64_t d[96];
	struct pyruntime r;

	debug_image(d, 14, 0x030f00a1);
	assert_int_equal(pyruntime_init_image(&r, d, sizeof(d), IMAGE_BASE, 15), 0);
	assert_int_equal(r.off.ts_frame, 72);
	assert_non_null(strstr(r.offsets_source, "newest layout"));
	pyruntime_release(&r);
	memmove(d + 25, d + 24, (95 - 24) * 8); /* every field from the thread state's next on moves */
	refused(d, 15, "python 3.15: _Py_DebugOffsets is not in the layout of 3.14");
}

/* ---- live interpreters ---- */

#define ROUNDS 50

struct interp {
	const char *path; /* the interpreter */
	int minor;        /* 3.minor (0: a refused one) */
	const char *refused_note; /* for refused versions: a word the reason must contain */
};

/* Lines of the fixture's functions: [def, next top-level def). */
struct fn_range {
	const char *name;
	int def, end;
};

static char fixture[PATH_MAX];
static char src[128][128]; /* the fixture's lines, src[n] is line n */
static struct fn_range fns[] = { { "parse" }, { "render" }, { "run" }, { "worker_alpha" },
				 { "worker_beta" }, { "worker_deep" }, { "main" } };
#define NFNS (sizeof(fns) / sizeof(fns[0]))

/* Finds the fixture and the line range of each of its functions from its source (a grep). */
static int setup_fixture(void **state)
{
	const char *root = getenv("ROOT");
	char line[512];
	int n = 0, last = 0;
	FILE *f;

	snprintf(line, sizeof(line), "%s/tests/fixtures/pystack.py", root ? root : ".");
	if (!realpath(line, fixture) || !(f = fopen(fixture, "r")))
		return -1;
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (n < 128)
			snprintf(src[n], sizeof(src[n]), "%.120s", line);
		if (strncmp(line, "def ", 4))
			continue;
		for (size_t i = 0; i < NFNS; i++)
			if (fns[i].def == 0 && !strncmp(line + 4, fns[i].name, strlen(fns[i].name)) &&
			    line[4 + strlen(fns[i].name)] == '(')
				fns[i].def = n;
		for (size_t i = 0; i < NFNS; i++)
			if (fns[i].def == last && last)
				fns[i].end = n;
		last = n;
	}
	fclose(f);
	for (size_t i = 0; i < NFNS; i++) {
		if (fns[i].def && !fns[i].end) /* the last function runs to the end of the file */
			fns[i].end = n + 1;
		if (!fns[i].def)
			return -1;
	}
	return 0;
}

static const struct fn_range *fn_named(const char *name)
{
	for (size_t i = 0; i < NFNS; i++)
		if (!strcmp(fns[i].name, name))
			return &fns[i];
	return NULL;
}

/* Starts the fixture under the interpreter and waits for its "ready" line: its pid, or -1. */
static pid_t spawn(const char *python)
{
	int fds[2];
	char buf[16] = "";
	struct pollfd p;
	pid_t pid;

	if (pipe(fds))
		return -1;
	if ((pid = fork()) == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the test */
		dup2(fds[1], 1);
		close(fds[0]), close(fds[1]);
		execl(python, python, fixture, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	p = (struct pollfd){ .fd = fds[0], .events = POLLIN };
	if (pid < 0 || poll(&p, 1, 20000) != 1 || read(fds[0], buf, sizeof(buf) - 1) <= 0 ||
	    strncmp(buf, "ready", 5)) {
		if (pid > 0)
			kill(pid, SIGKILL), waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(fds[0]);
	return pid;
}

static pid_t child = -1; /* the running fixture, killed by the teardown even after a failure */
static struct pyruntime rt; /* the attached runtime, released by the teardown */

/* Teardown: ends the fixture process and releases the runtime. */
static int reap(void **state)
{
	pyruntime_release(&rt);
	if (child > 0)
		kill(child, SIGKILL), waitpid(child, NULL, 0);
	child = -1;
	return 0;
}

/* What one round of stacks showed. */
struct seen {
	struct pyruntime *rt;
	int alpha, beta, deep, deep_frames, threads;
	double deep_ns;          /* time spent reading the deep thread's stack */
	struct timespec last;    /* end of the previous callback: a thread's walk starts there */
	char tbad[256];          /* what was wrong with the thread being looked at */
	char bad[256];           /* the first fault of a thread but the last */
	/* the last thread state of the list is the main thread's (new ones are pushed at the head) */
	int main_kind;           /* main_stack() of the last thread; -1 when its lines disagreed */
	char main_desc[512];     /* the last thread's stack, for messages */
	uint32_t tids[8];        /* native thread ids, in list order */
};

static double since(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e9 + (double)(b->tv_nsec - a->tv_nsec);
}

/* The exact line a fixture frame must be at: a caller at the line calling its callee, a
 * sleeping worker at its time.sleep. 0 when the frame's line is only known to lie in range. */
static bool line_fits(const char *name, const char *callee, int line)
{
	char call[64];

	if (line <= 0 || line >= 128)
		return false;
	if (!callee) /* a worker sleeps, or runs its loop between two sleeps (a loaded host) */
		return strncmp(name, "worker_", 7) || strstr(src[line], "time.sleep(") ||
		       strstr(src[line], "while True:");
	if (strrchr(callee, '.'))
		callee = strrchr(callee, '.') + 1; /* a 3.11+ qualname: render.<locals>.<genexpr> */
	if (callee[0] == '<') /* a comprehension: its own frame, no call by name */
		return true;
	snprintf(call, sizeof(call), "%s(", callee);
	return strstr(src[line], call) != NULL;
}

/* Resolves frame i of t, checks the file, that the first line is the def and that the line lies
 * in the function (and is the call of the frame below, or the sleep of a worker). */
static const char *resolve_check(struct seen *s, const struct pythread *t, size_t i, const char **names,
				 struct pyframe *pf)
{
	const struct fn_range *r;

	if (pycode_resolve(s->rt, t->frames[i].code, t->frames[i].lasti, pf))
		return snprintf(s->tbad, sizeof(s->tbad), "frame %zu unresolved", i), NULL;
	if (strcmp(pf->filename, fixture))
		return pf->qualname;
	r = fn_named(pf->qualname);
	if (r && (pf->firstlineno != r->def || pf->line <= r->def || pf->line >= r->end))
		snprintf(s->tbad, sizeof(s->tbad), "%s: first line %d, line %d, want %d and in (%d, %d)",
			 pf->qualname, pf->firstlineno, pf->line, r->def, r->def, r->end);
	else if (!line_fits(pf->qualname, i ? names[i - 1] : NULL, pf->line))
		snprintf(s->tbad, sizeof(s->tbad), "%s calling %s at line %d: '%.60s'", pf->qualname,
			 i ? names[i - 1] : "nothing", pf->line, pf->line > 0 && pf->line < 128 ? src[pf->line] : "");
	return pf->qualname;
}

/* The main thread reads <module> -> main -> run at its root (the walk races with the running
 * thread, so a round may catch it between calls or torn): 1 for that base, 2 when the frame
 * above run is parse or render, 0 for anything else. */
static int main_stack(const char **names, size_t n)
{
	if (n < 3 || strcmp(names[n - 1], "<module>") || strcmp(names[n - 2], "main") || strcmp(names[n - 3], "run"))
		return 0;
	return n > 3 && (!strcmp(names[n - 4], "parse") || !strcmp(names[n - 4], "render")) ? 2 : 1;
}

/* Describes a stack as "leaf:line;...;root:line" into buf. */
static void describe(const char **names, const int *lines, size_t n, char *buf, size_t size)
{
	size_t o = 0;

	buf[0] = 0;
	for (size_t i = 0; i < n && o + 64 < size; i++)
		o += (size_t)snprintf(buf + o, size - o, "%s:%d;", names[i], lines[i]);
}

/* Callback: classifies one thread's stack. A fault of this thread is only a failure once a
 * later thread shows it was not the main thread (the last one, which runs while read). */
static int on_thread(const struct pythread *t, void *arg)
{
	struct seen *s = arg;
	const char *names[PYRUNTIME_MAX_DEPTH];
	char kept[PYRUNTIME_MAX_DEPTH][128]; /* names copied: a frame's strings last only until the
					       * next pycode_resolve (the cache slot may be refilled) */
	int lines[PYRUNTIME_MAX_DEPTH];
	struct pyframe pf;
	struct timespec now;
	uint64_t ts = 0;
	int ndeep = 0;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (s->tbad[0] && !s->bad[0]) /* the previous thread was not the last */
		memcpy(s->bad, s->tbad, sizeof(s->bad));
	s->tbad[0] = 0;
	for (size_t i = 0; i < t->nframes; i++) {
		names[i] = "?", lines[i] = -1;
		if (!s->tbad[0] && (names[i] = resolve_check(s, t, i, names, &pf))) {
			lines[i] = pf.line;
			snprintf(kept[i], sizeof(kept[i]), "%s", names[i]);
			names[i] = kept[i];
		}
		names[i] = names[i] ? names[i] : "?";
		ndeep += !strcmp(names[i], "worker_deep");
	}
	if (s->threads < 8)
		s->tids[s->threads] = t->native_tid;
	/* every thread's PyGILState slot holds its state (what the BPF unwinder will read) */
	if (pyruntime_tstate_of(s->rt, t->thread_id, &ts) || ts != t->tstate)
		snprintf(s->bad, sizeof(s->bad), "thread %u: tss slot %#llx, state %#llx", t->native_tid,
			 (unsigned long long)ts, (unsigned long long)t->tstate);
	s->threads++;
	s->main_kind = s->tbad[0] ? -1 : main_stack(names, t->nframes);
	describe(names, lines, t->nframes, s->main_desc, sizeof(s->main_desc));
	s->alpha += t->nframes && !strcmp(names[0], "worker_alpha");
	s->beta += t->nframes && !strcmp(names[0], "worker_beta");
	if (ndeep == 27 && !strcmp(names[0], "worker_deep"))
		s->deep++, s->deep_frames = (int)t->nframes, s->deep_ns += since(&s->last, &now);
	clock_gettime(CLOCK_MONOTONIC, &s->last);
	return 0;
}

/* Attaches to pid, retrying while the interpreter is still starting. */
static struct pyfile_cache *files; /* shared by the attaches, as the recorder's is */

/* Finds the interpreter the way the recorder does: from the executable mappings only (its
 * process table has no others; a shared library's text starts past file offset 0), each file's
 * symbols read once through the shared cache. */
static int attach(pid_t pid, struct pyruntime *out)
{
	int err = -EAGAIN;

	if (!files)
		assert_non_null(files = pyfile_cache_new());
	for (int i = 0; i < 50 && err == -EAGAIN; i++) {
		struct procmap all, x;
		if (i)
			pyruntime_release(out), usleep(20000);
		assert_int_equal(procmap_read(&all, pid), 0);
		assert_int_equal(procmap_copy(&x, &all, true), 0);
		procmap_release(&all);
		err = pyruntime_find_in(pid, &x, files, out);
		procmap_release(&x);
	}
	return err;
}

/* Thread ids: the main thread's (the last) is the pid, every other one a distinct task of it. */
static void check_tids(const struct seen *s, pid_t pid)
{
	char path[64];

	assert_int_equal(s->tids[s->threads - 1], pid);
	for (int i = 0; i + 1 < s->threads; i++) {
		snprintf(path, sizeof(path), "/proc/%d/task/%u", (int)pid, s->tids[i]);
		assert_int_equal(access(path, F_OK), 0);
		assert_int_not_equal(s->tids[i], pid);
		for (int j = 0; j < i; j++)
			assert_int_not_equal(s->tids[i], s->tids[j]);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Reads the fixture's stacks ROUNDS times: every round names the main thread's run path and
 * each worker's own function, with the fixture's file and lines in the right functions. */
static void test_live(void **state)
{
	const struct interp *ip = *state;
	struct seen s;
	double ns[ROUNDS];
	int base = 0, hot = 0, torn = 0;
	pid_t pid;
	int err;

	if (access(ip->path, X_OK)) {
		print_message("skipped: %s is not installed\n", ip->path);
		skip();
	}
	assert_true((child = pid = spawn(ip->path)) > 0);
	err = attach(pid, &rt);
	if (err)
		print_message("%s: %s\n", ip->path, rt.reason);
	assert_int_equal(err, 0);
	assert_int_equal(rt.major, 3);
	assert_int_equal(rt.minor, ip->minor);
	assert_true(rt.tss_ok);
	for (int round = 0; round < ROUNDS; round++) {
		/* spread the rounds over 100+ ms: back to back they all fit in one scheduler slice of
		 * the fixture (caught right after its "ready", still in flush) */
		usleep(2000);
		memset(&s, 0, sizeof(s));
		s.rt = &rt;
		clock_gettime(CLOCK_MONOTONIC, &s.last);
		assert_int_equal(pyruntime_stacks(&rt, on_thread, &s), 0);
		if (s.bad[0])
			fail_msg("%s round %d: %s", ip->path, round, s.bad);
		if (s.alpha != 1 || s.beta != 1 || s.deep != 1 || s.threads != 4)
			fail_msg("%s round %d: alpha %d beta %d deep %d of %d threads", ip->path, round,
				 s.alpha, s.beta, s.deep, s.threads);
		check_tids(&s, pid);
		/* the main thread runs while read: a stack that changed under the walk is torn */
		base += s.main_kind > 0, hot += s.main_kind == 2, torn += s.main_kind < 0;
		if (s.main_kind < 2)
			print_message("%s round %d: main thread read as %s%s\n", ip->path, round, s.main_desc,
				      s.main_kind < 0 ? s.tbad : "");
		assert_int_equal(s.deep_frames, 30);
		ns[round] = s.deep_ns;
	}
	qsort(ns, ROUNDS, sizeof(ns[0]), cmp_double);
	/* the main thread spends most of its time in parse (a CPU loop) */
	if (base + torn < ROUNDS - ROUNDS / 10 || torn > ROUNDS / 5 || hot < ROUNDS / 2)
		fail_msg("%s: main thread's base in %d of %d rounds, in parse/render in %d, torn in %d",
			 ip->path, base, ROUNDS, hot, torn);
	print_message("python %d.%d.%d (%s, %s): %.1f us per 30-frame stack (median), %llu reads, %llu failed, %llu not code\n",
		      rt.major, rt.minor, rt.micro, rt.elf_path, rt.offsets_source, ns[ROUNDS / 2] / 1000,
		      (unsigned long long)rt.reads, (unsigned long long)rt.errors[PYRT_ERR_READ],
		      (unsigned long long)rt.errors[PYRT_ERR_TYPE]);
	/* a frame freed under the walk can point anywhere: rare, never a steady state */
	assert_in_range(rt.errors[PYRT_ERR_TYPE] + rt.errors[PYRT_ERR_DEPTH], 0, ROUNDS / 10);
}

/* 2.7, 3.6 and 3.7 are CPythons this module cannot read: refused with a reason naming them. */
static void test_refused(void **state)
{
	const struct interp *ip = *state;
	pid_t pid;
	int err;

	if (access(ip->path, X_OK)) {
		print_message("skipped: %s is not installed\n", ip->path);
		skip();
	}
	assert_true((child = pid = spawn(ip->path)) > 0);
	err = attach(pid, &rt);
	print_message("%s: %s\n", ip->path, rt.reason);
	assert_int_equal(err, -EPROTONOSUPPORT);
	assert_non_null(strstr(rt.reason, ip->refused_note));
}

/* A process without CPython (this test) is -ENOENT; a process that does not exist, -ESRCH. */
static void test_not_python(void **state)
{
	assert_int_equal(pyruntime_find(getpid(), &rt), -ENOENT);
	pyruntime_release(&rt);
	assert_int_equal(pyruntime_find(INT_MAX, &rt), -ESRCH);
	pyruntime_release(&rt);
}

#define PYENV "/root/.pyenv/versions/"

/* A mapping of path as the process table holds one: executable, past file offset 0. */
static int mapping_of(const char *path, struct procmap_entry *e)
{
	struct stat st;

	if (stat(path, &st))
		return -1;
	*e = (struct procmap_entry){ .start = 0x7f0000001000, .end = 0x7f0000100000, .offset = 0x1000,
				     .inode = st.st_ino, .dev_major = major(st.st_dev),
				     .dev_minor = minor(st.st_dev), .r = true, .x = true, .path = path };
	return 0;
}

/* The per-file decision: a file without CPython is read once, then known (a process of known
 * files reads none); libpython is told apart; a file replaced in place is read again (once the
 * trust in a recent stat has passed). */
static void test_file_cache(void **state)
{
	static const char *libpy = PYENV "3.11.7/lib/libpython3.11.so.1.0";
	struct pyfile_cache *c = pyfile_cache_new();
	struct procmap all, x;
	struct procmap_entry e;
	char self[PATH_MAX], tmp[] = "/tmp/firn-pyfile-XXXXXX";
	uint64_t probes;

	assert_non_null(c);
	assert_true(realpath("/proc/self/exe", self) != NULL);
	assert_int_equal(mapping_of(self, &e), 0);
	assert_int_equal(pyfile_is_python(c, getpid(), &e), 0);
	assert_int_equal(pyfile_is_python(c, getpid(), &e), 0);
	assert_int_equal(pyfile_cache_probes(c), 1);
	/* this process: every executable file read once, none again the second time */
	assert_int_equal(procmap_read(&all, getpid()), 0);
	assert_int_equal(procmap_copy(&x, &all, true), 0);
	assert_int_equal(pyruntime_find_in(getpid(), &x, c, &rt), -ENOENT);
	pyruntime_release(&rt);
	probes = pyfile_cache_probes(c);
	assert_in_range(probes, 2, x.n);
	assert_int_equal(pyruntime_find_in(getpid(), &x, c, &rt), -ENOENT);
	pyruntime_release(&rt);
	assert_int_equal(pyfile_cache_probes(c), probes);
	procmap_release(&x), procmap_release(&all);
	/* a copy of this binary, then libpython written over it: the same inode, read again */
	int fd = mkstemp(tmp);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(mapping_of(tmp, &e), 0);
	assert_int_equal(pyfile_is_python(c, getpid(), &e), -ENOEXEC); /* empty: not ELF */
	if (!access(libpy, R_OK)) {
		char cmd[PATH_MAX + 256];
		snprintf(cmd, sizeof(cmd), "sleep 0.01; cat %s > %s", libpy, tmp);
		assert_int_equal(system(cmd), 0);
		/* the same (dev, inode) from /proc is taken on trust for PYFILE_RECENT_NS (how long
		 * system() took is not known here: only the read after that time is checked) */
		usleep(PYFILE_RECENT_NS / 1000 + 10000);
		assert_int_equal(mapping_of(tmp, &e), 0);
		assert_int_equal(pyfile_is_python(c, getpid(), &e), 1);
		assert_int_equal(mapping_of(libpy, &e), 0);
		assert_int_equal(pyfile_is_python(c, getpid(), &e), 1);
		assert_int_equal(pyfile_cache_probes(c), probes + 3);
	} else {
		print_message("skipped the libpython part: %s is not installed\n", libpy);
	}
	unlink(tmp);
	pyfile_cache_free(c);
}
static const struct interp debian311 = { "/usr/bin/python3.11", 11, NULL };
static const struct interp py38 = { PYENV "3.8.18/bin/python3.8", 8, NULL };
static const struct interp py39 = { PYENV "3.9.18/bin/python3.9", 9, NULL };
static const struct interp py310 = { PYENV "3.10.13/bin/python3.10", 10, NULL };
static const struct interp py311 = { PYENV "3.11.7/bin/python3.11", 11, NULL };
static const struct interp py312 = { PYENV "3.12.1/bin/python3.12", 12, NULL };
static const struct interp py313 = { PYENV "3.13.0/bin/python3.13", 13, NULL };
static const struct interp py27 = { PYENV "2.7.18/bin/python2.7", 0, "python 2.7" };
static const struct interp py36 = { PYENV "3.6.15/bin/python3.6", 0, "python 3.6" };
static const struct interp py37 = { PYENV "3.7.16/bin/python3.7", 0, "python 3.7" };

/* A mapping from an mmap record (with the inode's generation) is known after its first look
 * without a stat (the path is not even looked up); another generation is another file; one
 * from /proc (no generation) is looked up. */
static void test_file_generation(void **state)
{
	struct pyfile_cache *c = pyfile_cache_new();
	struct procmap_entry e;
	char self[PATH_MAX];

	assert_non_null(c);
	assert_true(realpath("/proc/self/exe", self) != NULL);
	assert_int_equal(mapping_of(self, &e), 0);
	e.ino_generation = 12345, e.from_record = true;
	assert_int_equal(pyfile_is_python(c, getpid(), &e), 0);
	e.path = "/nonexistent/firn-test";
	assert_int_equal(pyfile_is_python(c, getpid(), &e), 0);
	assert_int_equal(pyfile_cache_probes(c), 1);
	e.ino_generation = 12346;
	assert_int_equal(pyfile_is_python(c, getpid(), &e), -ENOENT);
	e.ino_generation = 12345, e.from_record = false;
	assert_int_equal(pyfile_is_python(c, getpid(), &e), -ENOENT);
	pyfile_cache_free(c);
}

#define LIVE(ip) cmocka_unit_test_prestate_setup_teardown(test_live, NULL, reap, (void *)&ip)
#define REFUSED(ip) cmocka_unit_test_prestate_setup_teardown(test_refused, NULL, reap, (void *)&ip)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_cpython),
		cmocka_unit_test(test_lines_lnotab),
		cmocka_unit_test(test_lines_310),
		cmocka_unit_test(test_lines_locations),
		cmocka_unit_test(test_not_python),
		cmocka_unit_test(test_file_cache),
		cmocka_unit_test(test_file_generation),
		cmocka_unit_test(test_image_39),
		cmocka_unit_test(test_image_312),
		cmocka_unit_test(test_image_314),
		cmocka_unit_test(test_code_cache_grows),
		cmocka_unit_test(test_long_filename),
		cmocka_unit_test(test_debug_offsets),
		cmocka_unit_test(test_debug_offsets_later),
		LIVE(debian311), LIVE(py38), LIVE(py39), LIVE(py310), LIVE(py311), LIVE(py312), LIVE(py313),
		REFUSED(py27), REFUSED(py36), REFUSED(py37),
	};

	int failed = cmocka_run_group_tests(tests, setup_fixture, NULL);

	pyfile_cache_free(files);
	return failed;
}
