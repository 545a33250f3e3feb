/* Unit tests for lib/elf/debug_cache and its use by lib/elf/dwarfsym: a file with compressed DWARF
 * (the inlinefix-dwarf4 fixture, gcc -gz) read twice with an empty cache is inflated once and
 * mapped from the cache the second time, with the same frames at every address; a damaged,
 * truncated, foreign-owned, group-writable or symlinked cache file, or a changed debug file, is
 * not used (the sections are inflated again, frames unchanged) and is rewritten (the next read
 * maps it); so is one whose section bytes were damaged (a byte in the middle of a section, a
 * function's name in .debug_str: the name is never served); FIRN_DEBUG_CACHE=0 writes nothing;
 * the file format refuses what does not check out; the size bound evicts firn's own files only;
 * a file checked once is trusted while its identity holds (its bodies are not read again: a
 * change that keeps the identity is served), and checked again when it was written to or
 * replaced by one of the same size. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "elf/debug_cache.h"
#include "elf/dwarfsym.h"
#include "elf/elfsym.h"
#include "symfix.h"

static char dir[64];
static char fixture[128]; /* a copy of inlinefix-dwarf4 in dir (its identity can change) */
static char entry[256];   /* the cache file that copy gets */

/* dir/name into a static buffer. */
static const char *at(const char *name)
{
	static char path[2][256];
	static int i;

	i = (i + 1) % 2;
	snprintf(path[i], sizeof(path[i]), "%s/%s", dir, name);
	return path[i];
}

/* The build id of the ELF file at path (lowercase hex). */
static void build_id_of(const char *path, char *out, size_t len)
{
	struct elfsym e;

	assert_int_equal(elfsym_init_path(&e, path), 0);
	assert_true(e.build_id[0]);
	snprintf(out, len, "%s", e.build_id);
	elfsym_release(&e);
}

/* A scratch folder with the cache in dir/cache and a copy of the fixture. */
static int setup(void **state)
{
	char cmd[4400], id[160];

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/firn-dbc.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(fixture, sizeof(fixture), "%s/fix", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", built_fixture("inlinefix-dwarf4"), fixture);
	if (system(cmd))
		return -1;
	build_id_of(fixture, id, sizeof(id));
	snprintf(entry, sizeof(entry), "%s/cache/%s.dbg", dir, id);
	return setenv("FIRN_DEBUG_CACHE", at("cache"), 1);
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	unsetenv("FIRN_DEBUG_CACHE");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

/* Reads the fixture copy's DWARF; *inflated and *cached: its sections' sources. */
static struct dwarfsym *open_copy(unsigned *inflated, unsigned *cached)
{
	int fd = open(fixture, O_RDONLY);

	assert_true(fd >= 0);
	struct dwarfsym *d = dwarfsym_new_fd(fd);
	close(fd);
	assert_non_null(d);
	dwarfsym_sections(d, inflated, cached);
	return d;
}

/* Whether two strings are equal, NULLs included. */
static bool same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Checks that a and b give the same chains (names, files, lines) over the fixture's text. */
static void same_frames(struct dwarfsym *a, struct dwarfsym *b)
{
	struct dwarfsym_frame fa[8], fb[8];
	uint64_t start = 0, end = 0;
	struct elfsym e;
	int named = 0;

	assert_int_equal(elfsym_init_path(&e, fixture), 0);
	for (size_t i = 0; i < e.nsyms; i++) {
		if (!strcmp(elfsym_name(&e, &e.syms[i]), "outer_work")) {
			start = e.syms[i].start;
			end = elfsym_end(&e, &e.syms[i]);
		}
	}
	elfsym_release(&e);
	assert_true(start && end > start);
	for (uint64_t pc = start - 256; pc < end + 256; pc++) {
		int n = dwarfsym_lookup(a, pc, fa, 8);
		assert_int_equal(dwarfsym_lookup(b, pc, fb, 8), n);
		for (int k = 0; k < n; k++) {
			assert_true(same(fa[k].name, fb[k].name));
			assert_true(same(fa[k].file, fb[k].file));
			assert_int_equal(fa[k].line, fb[k].line);
			named += fa[k].name && fa[k].line;
		}
	}
	assert_true(named > (int)(end - start)); /* real chains were compared */
}

/* A first read with an empty cache inflates and writes; the next maps; frames are equal. */
static void test_second_read_maps(void **state)
{
	unsigned inf1, hit1, inf2, hit2;

	(void)state;
	struct dwarfsym *a = open_copy(&inf1, &hit1);
	assert_true(inf1 >= 3); /* info, abbrev, line at least */
	assert_int_equal(hit1, 0);
	assert_int_equal(access(entry, F_OK), 0);
	struct dwarfsym *b = open_copy(&inf2, &hit2);
	assert_int_equal(inf2, 0);
	assert_int_equal(hit2, inf1);
	same_frames(a, b);
	dwarfsym_free(b);
	dwarfsym_free(a);
}

/* After spoil(entry) the cache file is not used: sections inflated again, same frames; the file
 * is written again and the next read maps it. */
static void check_refused(void (*spoil)(void))
{
	unsigned inf, hit, inf1;
	struct dwarfsym *a = open_copy(&inf1, &hit);

	assert_int_equal(access(entry, F_OK), 0);
	spoil();
	struct dwarfsym *b = open_copy(&inf, &hit);
	assert_true(inf >= 3);
	assert_int_equal(hit, 0);
	same_frames(a, b);
	dwarfsym_free(b);
	b = open_copy(&inf, &hit);
	assert_int_equal(inf, 0);
	assert_int_equal(hit, inf1);
	same_frames(a, b);
	dwarfsym_free(b);
	dwarfsym_free(a);
}

/* Flips a byte of the entry at off. */
static void poke(off_t off)
{
	uint8_t b;
	int fd = open(entry, O_RDWR);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &b, 1, off), 1);
	b ^= 0x5a;
	assert_int_equal(pwrite(fd, &b, 1, off), 1);
	close(fd);
}

static void spoil_header(void) { poke(20); }          /* in the build id */
static void spoil_entries(void) { poke(256 + 30); }   /* a section's compressed size */
static void spoil_truncate(void) { assert_int_equal(truncate(entry, 1000), 0); }
static void spoil_short(void) { assert_int_equal(truncate(entry, 100), 0); }
/* A byte in the middle of the sections' bytes (past the header and entries). */
static void spoil_body(void)
{
	struct stat st;

	assert_int_equal(stat(entry, &st), 0);
	assert_true(st.st_size > 2048);
	poke(1024 + (st.st_size - 1024) / 2);
}

/* The name "outer_work" in the cached .debug_str changed to one of the same length. */
static void spoil_name(void)
{
	static const char name[] = "outer_work", evil[] = "EVIL_WORK!";
	struct stat st;
	int fd = open(entry, O_RDWR);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	char *b = malloc(st.st_size);
	assert_int_equal(pread(fd, b, st.st_size, 0), st.st_size);
	char *p = memmem(b, st.st_size, name, sizeof(name)); /* with its NUL: the string itself */
	assert_non_null(p);
	assert_int_equal(pwrite(fd, evil, sizeof(evil) - 1, p - b), sizeof(evil) - 1);
	free(b);
	close(fd);
}

static void spoil_mode(void) { assert_int_equal(chmod(entry, 0622), 0); }
static void spoil_owner(void) { assert_int_equal(chown(entry, 1, 1), 0); }

/* The entry replaced by a symlink to a good copy of itself. */
static void spoil_symlink(void)
{
	char copy[300], cmd[700];

	snprintf(copy, sizeof(copy), "%s.keep", entry);
	snprintf(cmd, sizeof(cmd), "mv '%s' '%s'", entry, copy);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(symlink(copy, entry), 0);
}

/* The debug file changed (its mtime): bytes made from the old one are not served. */
static void spoil_debug_file(void)
{
	struct timespec ts[2] = { { 1000, 0 }, { 1000, 0 } };

	assert_int_equal(utimensat(AT_FDCWD, fixture, ts, 0), 0);
}

static void test_damaged_header(void **s) { (void)s; check_refused(spoil_header); }
static void test_damaged_entries(void **s) { (void)s; check_refused(spoil_entries); }
static void test_damaged_body(void **s) { (void)s; check_refused(spoil_body); }
static void test_truncated(void **s) { (void)s; check_refused(spoil_truncate); }
static void test_too_short(void **s) { (void)s; check_refused(spoil_short); }
static void test_group_writable(void **s) { (void)s; check_refused(spoil_mode); }
static void test_symlink(void **s) { (void)s; check_refused(spoil_symlink); }
static void test_changed_debug_file(void **s) { (void)s; check_refused(spoil_debug_file); }

static void test_foreign_owner(void **s)
{
	(void)s;
	if (geteuid() != 0)
		skip();
	check_refused(spoil_owner);
}

/* Whether a frame in the fixture's text is named name. */
static bool names_frame(struct dwarfsym *d, const char *name)
{
	struct dwarfsym_frame f[8];

	for (uint64_t pc = 0; pc < 0x10000; pc++) {
		int n = dwarfsym_lookup(d, pc, f, 8);
		for (int k = 0; k < n; k++)
			if (f[k].name && strstr(f[k].name, name))
				return true;
	}
	return false;
}

/* A changed name in the cached sections is never served: the next read has the real one. */
static void test_damaged_name(void **state)
{
	unsigned inf, hit;

	(void)state;
	check_refused(spoil_name);
	struct dwarfsym *d = open_copy(&inf, &hit);
	assert_int_equal(inf, 0);
	assert_true(names_frame(d, "outer_work"));
	assert_false(names_frame(d, "EVIL"));
	dwarfsym_free(d);
}

/* FIRN_DEBUG_CACHE=0: every read inflates, nothing is written. */
static void test_disabled(void **state)
{
	unsigned inf, hit;

	(void)state;
	setenv("FIRN_DEBUG_CACHE", "0", 1);
	for (int i = 0; i < 2; i++) {
		dwarfsym_free(open_copy(&inf, &hit));
		assert_true(inf >= 3);
		assert_int_equal(hit, 0);
	}
	assert_int_not_equal(access(entry, F_OK), 0);
}

/* The format: a put file maps back; a wrong build id, identity or name is refused. */
static void test_format(void **state)
{
	struct file_id id = { 1, 2, 3, 4, 5 }, other = { 1, 2, 3, 4, 6 };
	struct debug_cache_sect s[2] = { { ".debug_info", 10, "abcdefg", 7 },
					 { ".zdebug_line", 20, "xyz", 3 } };
	struct debug_cache_file f;
	uint64_t size;

	(void)state;
	struct debug_cache *c = debug_cache_open(at("fmt"), 1 << 20);
	assert_non_null(c);
	assert_int_equal(debug_cache_put(c, "../x", &id, s, 2), -EINVAL);
	assert_int_equal(debug_cache_put(c, "ab01", &id, s, 2), 0);
	assert_int_equal(debug_cache_map(c, "ab01", &other, &f), -EBADMSG);
	assert_int_equal(debug_cache_map(c, "ab02", &id, &f), -ENOENT);
	assert_int_equal(debug_cache_map(c, "ab01", &id, &f), 0);
	const char *p = debug_cache_find(&f, ".zdebug_line", 20, &size);
	assert_non_null(p);
	assert_int_equal(size, 3);
	assert_memory_equal(p, "xyz", 3);
	assert_null(debug_cache_find(&f, ".debug_line", 20, &size));
	assert_null(debug_cache_find(&f, ".debug_info", 11, &size));
	assert_int_equal((uintptr_t)debug_cache_find(&f, ".debug_info", 10, &size) % 16, 0);
	debug_cache_unmap(&f);
	debug_cache_close(c);
}

/* Writes len bytes (beginning with start) as dir/fmt/name, mode 0600, mtime long ago. */
static void plant(const char *name, const char *start, size_t len)
{
	char path[300];
	char *b = calloc(1, len);

	assert_non_null(b);
	memset(b, 'u', len);
	memcpy(b, start, strlen(start));
	snprintf(path, sizeof(path), "%s/%s", at("fmt"), name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b, len), (ssize_t)len);
	close(fd);
	free(b);
	struct timespec ts[2] = { { 100, 0 }, { 100, 0 } };
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

/* Whether dir/fmt/name is still exactly what plant wrote. */
static bool planted_intact(const char *name, const char *start, size_t len)
{
	char path[300];
	char *b = malloc(len + 1), *want = malloc(len);

	memset(want, 'u', len);
	memcpy(want, start, strlen(start));
	snprintf(path, sizeof(path), "%s/%s", at("fmt"), name);
	int fd = open(path, O_RDONLY);
	bool ok = fd >= 0 && read(fd, b, len + 1) == (ssize_t)len && !memcmp(b, want, len);
	if (fd >= 0)
		close(fd);
	free(b);
	free(want);
	return ok;
}

/* The bound evicts firn's own files, least recently used first, down to 90 % of it; a user's
 * myapp.dbg (larger than the bound) and a foreign file under a build id's name are neither
 * counted nor removed. */
static void test_evicts_own_only(void **state)
{
	struct file_id id = { 1, 2, 3, 4, 5 };
	static char body[3000];
	struct debug_cache_sect s = { ".debug_info", 10, body, sizeof(body) };
	struct debug_cache_file f;

	(void)state;
	struct debug_cache *c = debug_cache_open(at("fmt"), 10000); /* three files of 3.3 kB */
	assert_non_null(c);
	plant("myapp.dbg", "\177ELF", 50000);
	plant("ab00.dbg", "not firn's", 5000);
	plant("notes.tbl", "FIRNDSC", 5000);
	for (int i = 1; i <= 3; i++) { /* written in turn (file times are coarse: set them) */
		char name[8], path[300];
		snprintf(name, sizeof(name), "ab%02d", i);
		assert_int_equal(debug_cache_put(c, name, &id, &s, 1), 0);
		snprintf(path, sizeof(path), "%s/%s.dbg", at("fmt"), name);
		struct timespec ts[2] = { { 1000 * i, 0 }, { 1000 * i, 0 } };
		assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
	}
	assert_int_equal(debug_cache_map(c, "ab01", &id, &f), 0); /* the least recently used: ab02 */
	debug_cache_unmap(&f);
	/* over the bound: down to the low-water mark (90 %: two files), ab02 then ab03 */
	assert_int_equal(debug_cache_put(c, "ab04", &id, &s, 1), 0);
	assert_int_equal(debug_cache_map(c, "ab02", &id, &f), -ENOENT);
	assert_int_equal(debug_cache_map(c, "ab03", &id, &f), -ENOENT);
	const char *kept[] = { "ab01", "ab04" };
	for (int i = 0; i < 2; i++) {
		assert_int_equal(debug_cache_map(c, kept[i], &id, &f), 0);
		debug_cache_unmap(&f);
	}
	assert_true(planted_intact("myapp.dbg", "\177ELF", 50000));
	assert_true(planted_intact("ab00.dbg", "not firn's", 5000));
	assert_true(planted_intact("notes.tbl", "FIRNDSC", 5000));
	debug_cache_close(c);
}

/* The path of dir/fmt/NAME.dbg. */
static const char *fmt_file(const char *name)
{
	static char path[300];

	snprintf(path, sizeof(path), "%s/%s.dbg", at("fmt"), name);
	return path;
}

/* Maps name's file, expecting err; when 0, *checked: whether its bodies were checked, and *b the
 * first byte of .debug_info. */
static void map_one(struct debug_cache *c, const char *name, const struct file_id *id, int err,
		    bool *checked, char *b)
{
	struct debug_cache_file f;
	uint64_t size;

	assert_int_equal(debug_cache_map(c, name, id, &f), err);
	if (err)
		return;
	*checked = f.checked;
	const char *p = debug_cache_find(&f, ".debug_info", 10, &size);
	assert_non_null(p);
	*b = *p;
	debug_cache_unmap(&f);
}

/* Puts ab01 (.debug_info "abcdefg") and maps it twice: checked the first time, trusted the
 * next; skips where the file system keeps no user extended attributes. The offset of the
 * section's bytes into *off. */
static struct debug_cache *put_and_trust(const struct file_id *id, off_t *off)
{
	struct debug_cache_sect s = { ".debug_info", 10, "abcdefg", 7 };
	bool checked;
	char b;

	struct debug_cache *c = debug_cache_open(at("fmt"), 1 << 20);
	assert_non_null(c);
	assert_int_equal(debug_cache_put(c, "ab01", id, &s, 1), 0);
	map_one(c, "ab01", id, 0, &checked, &b);
	assert_true(checked); /* the first use after it was written */
	if (getxattr(fmt_file("ab01"), "user.firn.checked", NULL, 0) < 0 && errno == ENOTSUP) {
		debug_cache_close(c);
		skip();
	}
	map_one(c, "ab01", id, 0, &checked, &b);
	assert_false(checked);
	assert_int_equal(b, 'a');
	*off = (256 + 56 + 15) / 16 * 16; /* after the header and one entry, at a multiple of 16 */
	return c;
}

/* Flips the byte at off of path, keeping its mtime when keep. */
static void flip(const char *path, off_t off, bool keep)
{
	struct stat st;
	uint8_t b;
	int fd = open(path, O_RDWR);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(pread(fd, &b, 1, off), 1);
	b ^= 0x20;
	assert_int_equal(pwrite(fd, &b, 1, off), 1);
	struct timespec ts[2] = { st.st_atim, st.st_mtim };
	if (keep)
		assert_int_equal(futimens(fd, ts), 0);
	close(fd);
}

/* The identity the trust tests' file stands for. */
static const struct file_id TRUST_ID = { 1, 2, 3, 4, 5 };

/* Identity unchanged: the bodies are not read again (a flipped byte with the mtime put back is
 * served: no checksum was computed); a write that changes the mtime is caught. */
static void trusted_identity(struct debug_cache *c, off_t off, bool *checked, char *b)
{
	flip(fmt_file("ab01"), off, true);
	map_one(c, "ab01", &TRUST_ID, 0, checked, b);
	assert_false(*checked);
	assert_int_equal(*b, 'A');
	flip(fmt_file("ab01"), off + 1, false);
	map_one(c, "ab01", &TRUST_ID, -EBADMSG, checked, b);
}

/* Copies path to a new file with the byte at off flipped when off >= 0, mtime as path's, and
 * renames it over path: a replacement of the same size (and mtime). */
static void replace(const char *path, off_t off)
{
	char tmp[320], cmd[700];
	struct stat st;

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	snprintf(cmd, sizeof(cmd), "cp -p '%s' '%s'", path, tmp);
	assert_int_equal(system(cmd), 0);
	if (off >= 0)
		flip(tmp, off, true);
	assert_int_equal(stat(path, &st), 0);
	struct timespec ts[2] = { st.st_atim, st.st_mtim };
	assert_int_equal(utimensat(AT_FDCWD, tmp, ts, 0), 0);
	assert_int_equal(rename(tmp, path), 0);
}

/* A file replaced by one of the same size and mtime is checked again: a damaged one refused, a
 * good one checked and then trusted. */
static void replaced_rechecked(struct debug_cache *c, off_t off, bool *checked, char *b)
{
	replace(fmt_file("ab01"), off);
	map_one(c, "ab01", &TRUST_ID, -EBADMSG, checked, b);
	replace(fmt_file("ab01"), off); /* flipped back: good bytes again */
	map_one(c, "ab01", &TRUST_ID, 0, checked, b);
	assert_true(*checked);
	assert_int_equal(*b, 'a');
	map_one(c, "ab01", &TRUST_ID, 0, checked, b);
	assert_false(*checked);
}

/* Runs body on a file checked once and trusted since (put_and_trust). */
static void with_trusted(void (*body)(struct debug_cache *, off_t, bool *, char *))
{
	bool checked;
	off_t off;
	char b;
	struct debug_cache *c = put_and_trust(&TRUST_ID, &off);

	body(c, off, &checked, &b);
	debug_cache_close(c);
}

static void test_trusted_identity(void **s) { (void)s; with_trusted(trusted_identity); }
static void test_replaced_rechecked(void **s) { (void)s; with_trusted(replaced_rechecked); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_second_read_maps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_header, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_entries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_body, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_too_short, setup, teardown),
		cmocka_unit_test_setup_teardown(test_group_writable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_owner, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_changed_debug_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disabled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_format, setup, teardown),
		cmocka_unit_test_setup_teardown(test_evicts_own_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trusted_identity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replaced_rechecked, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
