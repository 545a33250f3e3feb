/* Unit tests for lib/elf/dwarfsym: the inline chain of the inlinefix fixture as gcc (DWARF 5 with
 * .debug_aranges), clang (no .debug_aranges) and gcc -gdwarf-4 -gz (DWARF 4, compressed
 * sections) emit it, C++ linkage names, files without DWARF, damaged input, the mapped
 * file's pages left out of the resident set once read, and trimmed tables changing no answer. */
#include <dlfcn.h>
#include <stdlib.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "elf/dwarfsym.h"
#include "elf/elfsym.h"
#include "symfix.h"

/* Line of the first line of tests/fixtures/NAME containing marker, or 0. */
static uint32_t marker_line(const char *name, const char *marker)
{
	char line[512];
	uint32_t n = 0;
	FILE *f = fopen(source_fixture(name), "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, marker)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	return 0;
}

/* The [start, end) of the ELF symbol name in the fixture at path. */
static void symbol_range(const char *path, const char *name, uint64_t *start, uint64_t *end)
{
	struct elfsym e;

	assert_int_equal(elfsym_init_path(&e, path), 0);
	*start = *end = 0;
	for (size_t i = 0; i < e.nsyms; i++) {
		if (!strcmp(elfsym_name(&e, &e.syms[i]), name)) {
			*start = e.syms[i].start;
			*end = elfsym_end(&e, &e.syms[i]);
		}
	}
	elfsym_release(&e);
	assert_true(*start && *end > *start);
}

/* Opens the DWARF of a built fixture. */
static struct dwarfsym *open_fixture(const char *name)
{
	int fd = open(built_fixture(name), O_RDONLY);

	assert_true(fd >= 0);
	struct dwarfsym *d = dwarfsym_new_fd(fd);
	close(fd);
	assert_non_null(d);
	return d;
}

/* Whether path ends with "/" suffix. */
static bool is_file(const char *path, const char *base)
{
	size_t n = path ? strlen(path) : 0, m = strlen(base);

	return n > m && path[n - m - 1] == '/' && !strcmp(path + n - m, base);
}

/* Checks the inline chain somewhere in outer_work, and lines everywhere in it. */
static void check_inline_fixture(const char *name)
{
	uint32_t hot = marker_line("inlinefix.c", "HOT_LINE");
	uint32_t call = marker_line("inlinefix.c", "CALL_LINE");
	struct dwarfsym_frame f[8];
	struct dwarfsym *d = open_fixture(name);
	uint64_t start, end;
	int chains = 0, lines = 0;

	assert_true(dwarfsym_units(d) >= 1);
	symbol_range(built_fixture(name), "outer_work", &start, &end);
	for (uint64_t a = start; a < end; a++) {
		int n = dwarfsym_lookup(d, a, f, 8);
		assert_true(n >= 1);
		assert_string_equal(f[n - 1].name, "outer_work");
		assert_true(is_file(f[0].file, "inlinefix.c"));
		lines += f[0].line > 0; /* clang gives some code line 0: no source line */
		if (n != 2)
			continue;
		chains++;
		assert_string_equal(f[0].name, "mix_helper");
		assert_true(is_file(f[1].file, "inlinefix.c"));
		assert_int_equal(f[1].line, call);
		if (f[0].line == hot)
			chains += 1000;
	}
	assert_true(chains > 1000); /* some of it is the inlined loop, at its line */
	assert_true(lines * 2 > (int)(end - start));
	assert_int_equal(dwarfsym_lookup(d, 0x10, f, 8), 0);
	assert_int_equal(dwarfsym_lookup(d, start, f, 0), 0);
	dwarfsym_free(d);
}

static void test_gcc(void **state)
{
	check_inline_fixture("inlinefix");
}

static void test_clang_no_aranges(void **state)
{
	check_inline_fixture("inlinefix-clang");
}

static void test_dwarf4_compressed(void **state)
{
	check_inline_fixture("inlinefix-dwarf4");
}

static void test_cxx_linkage_name(void **state)
{
	struct dwarfsym_frame f[8];
	struct dwarfsym *d = open_fixture("cxxfix");
	uint64_t start, end;

	symbol_range(built_fixture("cxxfix"), "_ZN7firnfix6shapes11AccumulatorIdE4spinEl", &start, &end);
	int n = dwarfsym_lookup(d, start + 4, f, 8);
	assert_true(n >= 1);
	assert_string_equal(f[n - 1].name, "_ZN7firnfix6shapes11AccumulatorIdE4spinEl");
	assert_true(is_file(f[0].file, "cxxfix.cc"));
	dwarfsym_free(d);
}

static void test_no_dwarf(void **state)
{
	int fd = open(built_fixture("symfix-stripped"), O_RDONLY);

	assert_true(fd >= 0);
	errno = 0;
	assert_null(dwarfsym_new_fd(fd));
	assert_int_equal(errno, ENODATA);
	close(fd);
	fd = open(source_fixture("kallsyms.txt"), O_RDONLY);
	assert_true(fd >= 0);
	errno = 0;
	assert_null(dwarfsym_new_fd(fd));
	assert_int_equal(errno, ENOEXEC);
	close(fd);
}

/* Copies a built fixture into a memory file, flipping bytes from off on with mask. */
static int damaged_copy(const char *name, size_t off, size_t len, uint8_t mask)
{
	char buf[1 << 16];
	int in = open(built_fixture(name), O_RDONLY), out = memfd_create("dwarf", MFD_CLOEXEC);
	ssize_t r;
	size_t pos = 0;

	assert_true(in >= 0 && out >= 0);
	while ((r = read(in, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < r; i++)
			if (pos + i >= off && pos + i < off + len)
				buf[i] ^= mask;
		assert_int_equal(write(out, buf, r), r);
		pos += r;
	}
	close(in);
	return out;
}

/* Damaged DWARF answers what it can and never crashes: every byte of the file flipped in
 * turn, in steps, then every address of outer_work looked up. */
static void test_damaged(void **state)
{
	struct dwarfsym_frame f[8];
	uint64_t start, end;
	off_t size;
	int fd = open(built_fixture("inlinefix-clang"), O_RDONLY);

	assert_true(fd >= 0);
	size = lseek(fd, 0, SEEK_END);
	close(fd);
	symbol_range(built_fixture("inlinefix-clang"), "outer_work", &start, &end);
	for (off_t off = 0; off < size; off += 7) {
		int mfd = damaged_copy("inlinefix-clang", off, 5, off & 1 ? 0xff : 0x80);
		struct dwarfsym *d = dwarfsym_new_fd(mfd);
		close(mfd);
		if (!d) {
			assert_true(errno == ENODATA || errno == ENOEXEC);
			continue;
		}
		for (uint64_t a = start; a < end; a += 3)
			assert_true(dwarfsym_lookup(d, a, f, 8) >= 0);
		dwarfsym_free(d);
	}
}

/* The DWARF of this test binary (libfirn built with -g), indexed. */
static struct dwarfsym *self_dwarf(void)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	struct dwarfsym *d = dwarfsym_new_fd(fd);
	close(fd);
	assert_non_null(d);
	return d;
}

/* What indexing read stays out of the resident set: this test's own DWARF (hundreds of KiB:
 * libfirn with -g), just indexed, has at most a fault's 64 KiB of pages mapped, where every
 * unit head read at init used to keep the whole file resident; lookups still answer (and read
 * the names they return from the file again). */
static void test_pages_dropped(void **state)
{
	struct dwarfsym_frame f[8];
	Dl_info info;
	size_t mapped, resident;
	struct dwarfsym *d = self_dwarf();

	(void)state;
	dwarfsym_pages(d, &mapped, &resident);
	print_message("%zu KiB mapped, %zu KiB resident after init\n", mapped >> 10, resident >> 10);
	assert_true(mapped >= 256 << 10);
	assert_in_range(resident, 0, 64 << 10);
	assert_true(dladdr((void *)test_pages_dropped, &info));
	int n = dwarfsym_lookup(d, (uintptr_t)test_pages_dropped - (uintptr_t)info.dli_fbase, f, 8);
	assert_true(n >= 1);
	assert_string_equal(f[0].name, "test_pages_dropped");
	dwarfsym_free(d);
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Trimming (dwarfsym_trim frees the abbreviation tables) changes no answer: lookups over this
 * test's own code, every one after a trim, give the chains an untrimmed reader gives; the
 * tables are read again from the mapping by whatever lookup needs them. */
static void test_trim(void **state)
{
	struct dwarfsym_frame a[8], b[8];
	Dl_info info;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	struct dwarfsym *plain = dwarfsym_new_fd(fd), *trimmed = dwarfsym_new_fd(fd);
	close(fd);
	assert_non_null(plain);
	assert_non_null(trimmed);
	assert_true(dladdr((void *)test_trim, &info));
	uint64_t mid = (uintptr_t)test_trim - (uintptr_t)info.dli_fbase, named = 0;
	for (uint64_t v = mid > (256 << 10) ? mid - (256 << 10) : 0; v < mid + (256 << 10); v += 61) {
		int n = dwarfsym_lookup(plain, v, a, 8);
		dwarfsym_trim(trimmed);
		assert_int_equal(dwarfsym_lookup(trimmed, v, b, 8), n);
		for (int i = 0; i < n; i++) {
			assert_true(same_str(a[i].name, b[i].name));
			assert_true(same_str(a[i].file, b[i].file));
			assert_int_equal(a[i].line, b[i].line);
		}
		named += n > 0 && a[0].name;
	}
	print_message("%lu addresses named\n", (unsigned long)named);
	assert_true(named > 500);
	dwarfsym_trim(NULL);
	dwarfsym_free(plain);
	dwarfsym_free(trimmed);
}

/* A trim unloads the units no lookup used since the previous trim, and a lookup decodes them
 * again: the same chains, with the same name and path pointers (a path is not joined again, so
 * the path arena does not grow with reloads: a long recording's memory stays flat). */
static void test_trim_unloads(void **state)
{
	enum { N = 64, F = 8 };
	struct dwarfsym_frame a[N][F], b[F];
	int na[N];
	Dl_info info;
	struct dwarfsym *d = self_dwarf();

	(void)state;
	assert_true(dladdr((void *)test_trim_unloads, &info));
	uint64_t mid = (uintptr_t)test_trim_unloads - (uintptr_t)info.dli_fbase;
	uint64_t lo = mid > (128 << 10) ? mid - (128 << 10) : 0, step = (256 << 10) / N;
	assert_int_equal(dwarfsym_units_loaded(d), 0);
	for (int i = 0; i < N; i++)
		na[i] = dwarfsym_lookup(d, lo + (uint64_t)i * step, a[i], F);
	size_t loaded = dwarfsym_units_loaded(d);
	assert_true(loaded >= 2); /* this test's unit and cmocka's, at least */
	dwarfsym_trim(d); /* used since the last trim (none): kept */
	assert_int_equal(dwarfsym_units_loaded(d), loaded);
	assert_true(dwarfsym_lookup(d, mid, b, F) >= 1); /* keeps this test's unit in use */
	dwarfsym_trim(d); /* the others were not used since the first trim */
	assert_int_equal(dwarfsym_units_loaded(d), 1);
	dwarfsym_trim(d);
	assert_int_equal(dwarfsym_units_loaded(d), 0);
	for (int i = 0; i < N; i++) {
		assert_int_equal(dwarfsym_lookup(d, lo + (uint64_t)i * step, b, F), na[i]);
		for (int k = 0; k < na[i]; k++) {
			assert_ptr_equal(b[k].name, a[i][k].name);
			assert_ptr_equal(b[k].file, a[i][k].file);
			assert_int_equal(b[k].line, a[i][k].line);
		}
	}
	assert_int_equal(dwarfsym_units_loaded(d), loaded);
	dwarfsym_free(d);
}

int main(void)
{
	/* the compressed fixture's sections are inflated here, not read from (or written to) the
	 * machine's debug-section cache: test_debug_cache covers that */
	setenv("FIRN_DEBUG_CACHE", "0", 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gcc),
		cmocka_unit_test(test_clang_no_aranges),
		cmocka_unit_test(test_dwarf4_compressed),
		cmocka_unit_test(test_cxx_linkage_name),
		cmocka_unit_test(test_no_dwarf),
		cmocka_unit_test(test_damaged),
		cmocka_unit_test(test_pages_dropped),
		cmocka_unit_test(test_trim),
		cmocka_unit_test(test_trim_unloads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
