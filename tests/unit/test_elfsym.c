/* Unit tests for lib/elf/elfsym: symbols of this test binary and of the symfix fixtures (PIE, non-PIE,
 * stripped, shared library) at addresses the dynamic linker reports, build ids, segments, and
 * damaged or non-ELF input (which must give errors, never crashes). */
#include <elf.h>
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
#include <unistd.h>

#include <cmocka.h>

#include "elf/elfsym.h"
#include "proc/procmap.h"
#include "symfix.h"

/* A global function of this test whose name we look up. */
__attribute__((noinline)) int elfsym_test_global(int x)
{
	return x * 7;
}

/* A static one (only in .symtab). */
__attribute__((noinline)) static int elfsym_test_static(int x)
{
	return x * 11;
}

/* Converts a runtime address of this process to an ELF vaddr of its file through its maps. */
static uint64_t self_vaddr(const struct elfsym *e, uint64_t addr)
{
	struct procmap m;
	uint64_t vaddr;

	assert_int_equal(procmap_read(&m, getpid()), 0);
	const struct procmap_entry *me = procmap_find(&m, addr);
	assert_non_null(me);
	assert_int_equal(elfsym_file_offset_to_vaddr(e, addr - me->start + me->offset, &vaddr), 0);
	procmap_release(&m);
	return vaddr;
}

static void test_self(void **state)
{
	struct elfsym e;
	const char *name;
	uint64_t start, vaddr;

	assert_int_equal(elfsym_init_path(&e, "/proc/self/exe"), 0);
	assert_int_equal(e.type, ET_DYN);
	vaddr = self_vaddr(&e, (uintptr_t)elfsym_test_global);
	assert_int_equal(elfsym_lookup(&e, vaddr, &name, &start), 0);
	assert_string_equal(name, "elfsym_test_global");
	assert_int_equal(start, vaddr);
	assert_int_equal(elfsym_lookup(&e, vaddr + 4, &name, &start), 0);
	assert_string_equal(name, "elfsym_test_global");
	assert_int_equal(start, vaddr);
	vaddr = self_vaddr(&e, (uintptr_t)elfsym_test_static);
	assert_int_equal(elfsym_lookup(&e, vaddr + 1, &name, NULL), 0);
	assert_string_equal(name, "elfsym_test_static");
	assert_int_equal(elfsym_test_global(1) + elfsym_test_static(1), 18);
	elfsym_release(&e);
}

/* Runs fixture NAME for its function list; asserts it ran. */
static int fixture_fns(const char *name, struct symfix_fn *fns)
{
	int n;

	assert_true(symfix_run(built_fixture(name), 0, fns, &n) > 0);
	assert_true(n >= 3);
	return n;
}

/* Asserts that every function in fns from a file ending in suffix has its name in e. */
static void assert_names(const struct elfsym *e, const struct symfix_fn *fns, int n,
			 const char *suffix)
{
	int checked = 0;

	for (int i = 0; i < n; i++) {
		size_t fl = strlen(fns[i].file), sl = strlen(suffix);
		if (fl < sl || strcmp(fns[i].file + fl - sl, suffix))
			continue;
		const char *name;
		uint64_t start;
		assert_int_equal(elfsym_lookup(e, fns[i].vaddr, &name, &start), 0);
		assert_string_equal(name, fns[i].name);
		assert_int_equal(start, fns[i].vaddr);
		assert_int_equal(elfsym_lookup(e, fns[i].vaddr + 3, &name, &start), 0);
		assert_string_equal(name, fns[i].name);
		checked++;
	}
	assert_true(checked >= 1);
}

static void test_pie(void **state)
{
	struct symfix_fn fns[16];
	int n = fixture_fns("symfix", fns);
	struct elfsym e;

	assert_int_equal(elfsym_init_path(&e, built_fixture("symfix")), 0);
	assert_int_equal(e.type, ET_DYN);
	assert_true(e.nsegments >= 2);
	assert_int_equal(e.segments[0].vaddr, 0);
	assert_int_equal(e.segments[0].offset, 0);
	assert_int_equal(strlen(e.build_id), 40);
	assert_names(&e, fns, n, "/symfix");
	assert_int_equal(elfsym_lookup(&e, 0, NULL, NULL), -ENOENT);
	elfsym_release(&e);
}

static void test_nopie(void **state)
{
	struct symfix_fn fns[16];
	int n = fixture_fns("symfix-nopie", fns);
	struct elfsym e;
	uint64_t vaddr;

	assert_int_equal(elfsym_init_path(&e, built_fixture("symfix-nopie")), 0);
	assert_int_equal(e.type, ET_EXEC);
	assert_string_equal(e.build_id, "0123456789abcdef");
	assert_int_equal(e.segments[0].vaddr, 0x400000);
	for (int i = 0; i < n; i++)
		assert_int_equal(fns[i].runtime, fns[i].vaddr); /* not relocated */
	assert_names(&e, fns, n, "/symfix-nopie");
	/* the code segment maps file offset X at vaddr p_vaddr + (X - p_offset) */
	for (size_t i = 0; i < e.nsegments; i++) {
		const struct elfsym_segment *s = &e.segments[i];
		if (!(s->flags & PF_X))
			continue;
		assert_int_equal(elfsym_file_offset_to_vaddr(&e, s->offset + 0x10, &vaddr), 0);
		assert_int_equal(vaddr, s->vaddr + 0x10);
	}
	assert_int_equal(elfsym_file_offset_to_vaddr(&e, 1ULL << 40, &vaddr), -ENOENT);
	elfsym_release(&e);
}

static void test_stripped(void **state)
{
	struct symfix_fn fns[16];
	int n = fixture_fns("symfix-stripped", fns);
	struct elfsym e;
	const char *name;

	assert_int_equal(elfsym_init_path(&e, built_fixture("symfix-stripped")), 0);
	for (int i = 0; i < n; i++) {
		if (!strcmp(fns[i].name, "firn_fix_static")) {
			/* gone with .symtab; the sized neighbours do not cover it */
			assert_int_equal(elfsym_lookup(&e, fns[i].vaddr, &name, NULL), -ENOENT);
			continue;
		}
		assert_int_equal(elfsym_lookup(&e, fns[i].vaddr, &name, NULL), 0);
		assert_string_equal(name, fns[i].name);
	}
	elfsym_release(&e);
}

/* Start of symbol name in e (0 when absent). */
static uint64_t find_symbol(const struct elfsym *e, const char *name)
{
	for (size_t i = 0; i < e->nsyms; i++)
		if (!strcmp(elfsym_name(e, &e->syms[i]), name))
			return e->syms[i].start;
	return 0;
}

/* MiniDebugInfo as Fedora makes it (gdb's recipe): the function symbols that .dynsym lacks, in
 * an xz-compressed ELF in .gnu_debugdata of the stripped binary. */
static void test_minidebuginfo(void **state)
{
	char dir[] = "/tmp/firn-minidebug-XXXXXX", cmd[4096], path[128];
	const char *fix = built_fixture("shortfix");
	struct elfsym e, full;
	const char *name;

	assert_non_null(mkdtemp(dir));
	int n = snprintf(cmd, sizeof(cmd),
		 "cd %s && nm -D %s --format=posix --defined-only | awk '{print $1}' | sort >dyn && "
		 "nm %s --format=posix --defined-only | awk '$2==\"T\"||$2==\"t\" {print $1}' | sort >fn && "
		 "comm -13 dyn fn >keep && objcopy --only-keep-debug %s debug && "
		 "objcopy -S --remove-section .gdb_index --remove-section .comment "
		 "--keep-symbols=keep debug mini && xz mini && strip -s -o plain %s && "
		 "objcopy --add-section .gnu_debugdata=mini.xz plain prog", dir, fix, fix, fix, fix);
	assert_true(n > 0 && (size_t)n < sizeof(cmd));
	assert_int_equal(system(cmd), 0);
	assert_int_equal(elfsym_init_path(&full, fix), 0);
	uint64_t hot = find_symbol(&full, "short_hot");
	assert_true(hot != 0);
	assert_true(full.has_dwarf);
	assert_false(full.has_minidebuginfo);
	snprintf(path, sizeof(path), "%s/plain", dir);
	assert_int_equal(elfsym_init_path(&e, path), 0);
	assert_false(e.has_dwarf);
	assert_true(elfsym_lookup(&e, hot + 4, &name, NULL) || strcmp(name, "short_hot"));
	elfsym_release(&e);
	snprintf(path, sizeof(path), "%s/prog", dir);
	assert_int_equal(elfsym_init_path(&e, path), 0);
	assert_true(e.has_minidebuginfo);
	assert_false(e.has_dwarf);
	assert_int_equal(elfsym_lookup(&e, hot + 4, &name, NULL), 0);
	assert_string_equal(name, "short_hot");
	assert_string_equal(e.build_id, full.build_id);
	elfsym_release(&e);
	elfsym_release(&full);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_shared_library(void **state)
{
	struct symfix_fn fns[16];
	int n = fixture_fns("symfix-lib", fns);
	struct elfsym e;
	int fd = open(built_fixture("libfirnfix.so"), O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(elfsym_init_fd(&e, fd), 0);
	assert_true(fcntl(fd, F_GETFD) >= 0); /* still open: ours to close */
	close(fd);
	assert_int_equal(e.type, ET_DYN);
	assert_names(&e, fns, n, "/libfirnfix.so");
	elfsym_release(&e);
}

/* Reads a whole file into memory. */
static char *slurp(const char *path, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	char *buf;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc(st.st_size);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, st.st_size), st.st_size);
	close(fd);
	*len = st.st_size;
	return buf;
}

/* Reads a (possibly damaged) image; on success, every lookup must stay in bounds. */
static void try_image(const char *buf, size_t len)
{
	struct elfsym e;
	int err = elfsym_init_memory(&e, buf, len);
	const char *name;
	uint64_t v;

	assert_true(err == 0 || err == -ENOEXEC || err == -ENOMEM);
	if (err)
		return;
	for (uint64_t a = 0; a < 0x3000; a += 0x40)
		if (!elfsym_lookup(&e, a, &name, NULL))
			assert_true(strlen(name) < len);
	elfsym_file_offset_to_vaddr(&e, 0x1000, &v);
	elfsym_release(&e);
}

static void test_truncated(void **state)
{
	size_t len;
	char *elf = slurp(built_fixture("symfix"), &len);

	for (size_t n = 0; n < len; n += n < 1024 ? 1 : 61)
		try_image(elf, n);
	try_image(elf, len);
	free(elf);
}

/* xorshift64: a fixed sequence, so failures reproduce. */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void test_corrupted(void **state)
{
	size_t len;
	char *elf = slurp(built_fixture("symfix"), &len);
	char *copy = malloc(len);
	uint64_t seed = 0x9e3779b97f4a7c15ULL;

	for (int round = 0; round < 3000; round++) {
		memcpy(copy, elf, len);
		int flips = 1 + next_rand(&seed) % 8;
		for (int i = 0; i < flips; i++) {
			/* headers, section headers and symbol tables are where damage hurts */
			size_t at = next_rand(&seed) % 4 ? next_rand(&seed) % 64 : next_rand(&seed) % len;
			if (next_rand(&seed) % 2)
				at = len - 1 - next_rand(&seed) % 2048;
			copy[at] = next_rand(&seed);
		}
		try_image(copy, len);
	}
	for (int round = 0; round < 200; round++) {
		for (size_t i = 0; i < 4096; i++)
			copy[i] = next_rand(&seed);
		if (round % 2)
			memcpy(copy, ELFMAG "\2\1\1", 7); /* plausible ident, random rest */
		try_image(copy, 4096);
	}
	free(copy);
	free(elf);
}

static void test_not_elf(void **state)
{
	struct elfsym e;

	assert_int_equal(elfsym_init_path(&e, source_fixture("symfix.c")), -ENOEXEC);
	assert_int_equal(elfsym_init_memory(&e, "", 0), -ENOEXEC);
	assert_int_equal(elfsym_init_memory(&e, "\177ELF", 4), -ENOEXEC);
	assert_int_equal(elfsym_init_path(&e, "/nonexistent/firn"), -ENOENT);
	assert_int_equal(elfsym_init_fd(&e, -1), -EBADF);
	assert_int_equal(elfsym_lookup(&e, 0x1000, NULL, NULL), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_pie),
		cmocka_unit_test(test_nopie),
		cmocka_unit_test(test_stripped),
		cmocka_unit_test(test_shared_library),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_corrupted),
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_minidebuginfo),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
