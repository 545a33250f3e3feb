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
#include <sys/mman.h>
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

/* Whether name lies in e's pool (names copied or made up at init). */
static bool in_pool(const struct elfsym *e, const char *name)
{
	return e->pool && name >= e->pool && name < e->pool + e->pool_len;
}

/* A file's names are not copied: the one looked up lies in a read-only mapping of the file
 * itself, at the file offset where its string table holds it; only made-up names are in the pool,
 * and the heap holds the 16-byte symbols, the segments, the spans and that pool. */
static void test_names_in_place(void **state)
{
	struct elfsym e;
	struct procmap m;
	struct stat st;
	const char *name;
	char buf[64];

	assert_int_equal(elfsym_init_path(&e, "/proc/self/exe"), 0);
	assert_int_equal(sizeof(struct elfsym_symbol), 16);
	assert_int_equal(elfsym_heap_bytes(&e), e.nsegments * sizeof(*e.segments) +
			 e.nsyms * sizeof(*e.syms) + e.nspans * sizeof(*e.spans) + e.pool_len);
	assert_int_equal(elfsym_lookup(&e, self_vaddr(&e, (uintptr_t)elfsym_test_global), &name,
				       NULL), 0);
	assert_string_equal(name, "elfsym_test_global");
	assert_int_equal(procmap_read(&m, getpid()), 0);
	const struct procmap_entry *me = procmap_find(&m, (uintptr_t)name);
	assert_non_null(me);
	assert_int_equal(stat("/proc/self/exe", &st), 0);
	assert_int_equal(me->inode, st.st_ino);
	assert_false(me->w);
	int fd = open("/proc/self/exe", O_RDONLY);
	assert_true(fd >= 0);
	off_t at = me->offset + ((uintptr_t)name - me->start);
	ssize_t n = pread(fd, buf, sizeof("elfsym_test_global"), at);
	assert_int_equal(n, sizeof("elfsym_test_global"));
	assert_string_equal(buf, "elfsym_test_global");
	close(fd);
	procmap_release(&m);
	for (size_t i = 0; i < e.nsyms; i++) {
		const char *s = elfsym_name(&e, &e.syms[i]);
		size_t len = strlen(s);
		if (in_pool(&e, s))
			assert_true(!strcmp(s, "_init") || !strcmp(s, "_fini") ||
				    (len > 4 && !strcmp(s + len - 4, "@plt")));
	}
	elfsym_release(&e);
}

/* The Rss (KiB) of this process's mapping that starts at p, from /proc/self/smaps (-1: none). */
static long rss_at(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	unsigned long lo, hi;
	long kb = -1;
	bool in = false;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in = lo == (uintptr_t)p;
		else if (in && sscanf(line, "Rss: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return in ? kb : -1;
}

/* elfsym_drop_pages: the string tables' pages a lookup read leave the resident set, and the
 * names stay readable (from the file again). */
static void test_drop_pages(void **state)
{
	struct elfsym e;
	const char *name;
	long before = 0, after = 0;

	(void)state;
	assert_int_equal(elfsym_init_path(&e, "/proc/self/exe"), 0);
	assert_int_equal(elfsym_lookup(&e, self_vaddr(&e, (uintptr_t)elfsym_test_global), &name,
				       NULL), 0);
	assert_string_equal(name, "elfsym_test_global");
	for (size_t i = 0; i < e.nspans; i++)
		if (e.spans[i].map)
			before += rss_at(e.spans[i].map);
	elfsym_drop_pages(&e);
	for (size_t i = 0; i < e.nspans; i++)
		if (e.spans[i].map)
			after += rss_at(e.spans[i].map);
	print_message("string tables resident: %ld KiB, %ld KiB after the drop\n", before, after);
	assert_true(before > 0);
	assert_int_equal(after, 0);
	assert_string_equal(name, "elfsym_test_global");
	elfsym_release(&e);
}

/* An image's names are copied (its caller may free it after the call): read from memory that
 * is then scribbled over and freed, the symbols are those read from the file, name for name. */
static void test_image_names_copied(void **state)
{
	const char *fixtures[] = { "symfix", "symfix-stripped", "libfirnfix.so" };

	for (size_t f = 0; f < sizeof(fixtures) / sizeof(fixtures[0]); f++) {
		struct stat st;
		struct elfsym file, img;
		int fd = open(built_fixture(fixtures[f]), O_RDONLY);
		assert_true(fd >= 0 && !fstat(fd, &st));
		char *buf = malloc(st.st_size);
		assert_int_equal(read(fd, buf, st.st_size), st.st_size);
		close(fd);
		assert_int_equal(elfsym_init_memory(&img, buf, st.st_size), 0);
		memset(buf, 'x', st.st_size);
		free(buf);
		assert_int_equal(elfsym_init_path(&file, built_fixture(fixtures[f])), 0);
		assert_true(file.nsyms >= 3);
		assert_int_equal(img.nsyms, file.nsyms);
		for (size_t i = 0; i < file.nsyms; i++) {
			assert_int_equal(img.syms[i].start, file.syms[i].start);
			assert_int_equal(elfsym_end(&img, &img.syms[i]), elfsym_end(&file, &file.syms[i]));
			assert_string_equal(elfsym_name(&img, &img.syms[i]),
					    elfsym_name(&file, &file.syms[i]));
			assert_true(in_pool(&img, elfsym_name(&img, &img.syms[i])));
		}
		elfsym_release(&img);
		elfsym_release(&file);
	}
}

/* The section header of section name in an ELF64 image, or NULL. */
static Elf64_Shdr *shdr_named(char *elf, size_t len, const char *name)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)elf;
	Elf64_Shdr *sh = (Elf64_Shdr *)(elf + eh->e_shoff);

	assert_true(eh->e_shoff + eh->e_shnum * sizeof(*sh) <= len && eh->e_shstrndx < eh->e_shnum);
	for (size_t i = 0; i < eh->e_shnum; i++)
		if (!strcmp(elf + sh[eh->e_shstrndx].sh_offset + sh[i].sh_name, name))
			return &sh[i];
	return NULL;
}

/* Reads image into e through a descriptor (a memfd), as files are read. */
static int init_via_fd(struct elfsym *e, const char *image, size_t len)
{
	int fd = memfd_create("elfsym", MFD_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, image, len), (ssize_t)len);
	int err = elfsym_init_fd(e, fd);
	close(fd);
	return err;
}

/* A symbol whose end is 8 GiB past its start (.fini claiming that size: the zero-size _fini of
 * .symtab, or the made-up one of a stripped file, ends at the section's end) is looked up as far
 * as it reaches, read from memory and from a descriptor: a 16-byte symbol keeps a 32-bit length,
 * and the longer end sits beside it. */
static void test_long_end(void **state)
{
	const char *fixtures[] = { "symfix", "symfix-stripped" };
	const uint64_t size = 1ULL << 33;

	for (size_t f = 0; f < 2; f++) {
		size_t len;
		char *elf = slurp(built_fixture(fixtures[f]), &len);
		Elf64_Shdr *fini = shdr_named(elf, len, ".fini");
		assert_non_null(fini);
		uint64_t at = fini->sh_addr;
		fini->sh_size = size;
		for (int via_fd = 0; via_fd < 2; via_fd++) {
			struct elfsym e;
			const char *name;
			uint64_t start;
			assert_int_equal(via_fd ? init_via_fd(&e, elf, len)
						: elfsym_init_memory(&e, elf, len), 0);
			assert_int_equal(elfsym_lookup(&e, at + size - 1, &name, &start), 0);
			assert_string_equal(name, "_fini");
			assert_int_equal(start, at);
			assert_int_equal(elfsym_lookup(&e, at + size, &name, &start), -ENOENT);
			assert_true(elfsym_covers(&e, at + (1ULL << 32), at + size));
			assert_int_equal(e.nlong_ends, 1);
			elfsym_release(&e);
		}
		free(elf);
	}
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

/* Reads a (possibly damaged) image, from memory and through a descriptor (where the string
 * tables are mapped); on success, every lookup must stay in bounds. */
static void try_image(const char *buf, size_t len)
{
	for (int via_fd = 0; via_fd < 2; via_fd++) {
		struct elfsym e;
		int err = via_fd ? init_via_fd(&e, buf, len) : elfsym_init_memory(&e, buf, len);
		const char *name;
		uint64_t v;

		assert_true(err == 0 || err == -ENOEXEC || err == -ENOMEM);
		if (err)
			continue;
		for (uint64_t a = 0; a < 0x3000; a += 0x40)
			if (!elfsym_lookup(&e, a, &name, NULL))
				assert_true(strlen(name) < len + 8);
		elfsym_file_offset_to_vaddr(&e, 0x1000, &v);
		elfsym_release(&e);
	}
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
		cmocka_unit_test(test_names_in_place),
		cmocka_unit_test(test_drop_pages),
		cmocka_unit_test(test_image_names_copied),
		cmocka_unit_test(test_long_end),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
