/* Unit tests for lib/unwind_table: the table built by running each FDE's program once equals,
 * row for row, the one libdw's per-row interpreter gives (unwind_table_build_libdw, the former
 * builder) for real files — libc, ld.so, python3.11, libstdc++, libjvm when present, firn itself,
 * fixtures and the fuzz seeds — and the fixture of hand-written CFI programs
 * (tests/fixtures/cfi_cases.S) gives the rows each of its functions is written to give. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "symfix.h"
#include "unwind_table.h"

/* Builds path's table both ways and asserts the same outcome: the same error, or the same rows,
 * counts and segments. Returns the row count (0 when the file is missing or has no table). */
static uint32_t assert_same_table(const char *path)
{
	struct unwind_table a, b;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	int ea = unwind_table_build_libdw(&a, fd);
	int eb = unwind_table_build(&b, fd);
	close(fd);
	if (ea != eb)
		fail_msg("%s: libdw builder %d, CFI builder %d", path, ea, eb);
	if (ea)
		return 0;
	for (uint32_t i = 0; i < a.n && i < b.n; i++)
		if (memcmp(&a.rows[i], &b.rows[i], sizeof(a.rows[i])))
			fail_msg("%s: row %u: libdw pc %#x type %d cfa %d rbp %d, CFI pc %#x type %d "
				 "cfa %d rbp %d", path, i, a.rows[i].pc, a.rows[i].type,
				 a.rows[i].cfa_off, a.rows[i].rbp_off8, b.rows[i].pc, b.rows[i].type,
				 b.rows[i].cfa_off, b.rows[i].rbp_off8);
	assert_int_equal(a.n, b.n);
	assert_memory_equal(a.by_type, b.by_type, sizeof(a.by_type));
	assert_int_equal(a.fdes, b.fdes);
	assert_int_equal(a.nsegs, b.nsegs);
	assert_memory_equal(a.segs, b.segs, sizeof(a.segs));
	uint32_t n = a.n;
	unwind_table_release(&a);
	unwind_table_release(&b);
	return n;
}

/* The same rows from both builders for the system's libraries and programs that are here
 * (libc and ld.so always are), firn, the fixtures and the fuzz seeds. */
static void test_same_rows(void **state)
{
	static const char *const system[] = {
		"/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2",
		"/usr/bin/python3.11", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
		"/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so",
	};
	static const char *const built[] = { "../firn", "libcfi_cases.so", "deep", "cxxfix",
					     "split", "libfirnfix.so" };
	static const char *const seeds[] = { "seed-libex.so", "seed-libex-stripped.so",
					     "seed-tiny-clang4", "seed-tiny-clang5", "seed-tiny-gcc",
					     "seed-tiny-gz" };
	char path[PATH_MAX];

	(void)state;
	assert_true(assert_same_table(system[0]) > 1000); /* libc */
	assert_true(assert_same_table(system[1]) > 100);  /* ld.so */
	for (size_t i = 2; i < sizeof(system) / sizeof(*system); i++)
		assert_same_table(system[i]);
	assert_true(assert_same_table(built_fixture(built[0])) > 1000); /* firn */
	assert_true(assert_same_table(built_fixture(built[1])) > 30);
	for (size_t i = 2; i < sizeof(built) / sizeof(*built); i++)
		assert_same_table(built_fixture(built[i]));
	for (size_t i = 0; i < sizeof(seeds) / sizeof(*seeds); i++) {
		snprintf(path, sizeof(path), "%s", source_fixture("../fuzz/corpus/fuzz_unwind_table"));
		snprintf(path + strlen(path), sizeof(path) - strlen(path), "/%s", seeds[i]);
		assert_same_table(path);
	}
}

/* The address of the dynamic symbol name in the ELF file at path (0 if none). */
static uint64_t sym_addr(const char *path, const char *name)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;
	uint64_t addr = 0;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	assert_non_null(elf = elf_begin(fd, ELF_C_READ, NULL));
	while (!addr && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !d || !sh.sh_entsize)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++)
			if (gelf_getsym(d, (int)i, &sym) &&
			    !strcmp(elf_strptr(elf, sh.sh_link, sym.st_name), name))
				addr = sym.st_value;
	}
	elf_end(elf);
	close(fd);
	return addr;
}

/* One expectation: the row covering symbol + off. */
struct want {
	const char *sym;
	uint32_t off;
	uint8_t type;
	int16_t cfa;
	int8_t rbp;
};

/* The fixture's functions give the rows they are written to give (cfi_cases.S). */
static void test_fixture_rows(void **state)
{
	enum { RSP = FIRN_ROW_CFA_RSP, RBP = FIRN_ROW_CFA_RBP, PLT = FIRN_ROW_PLT,
	       SIG = FIRN_ROW_SIGNAL, END = FIRN_ROW_END, GAP = FIRN_ROW_GAP,
	       UNS = FIRN_ROW_UNSUPPORTED };
	static const struct want want[] = {
		{ "cfi_frame", 0, RSP, 8, 0 }, { "cfi_frame", 1, RSP, 16, -2 },
		{ "cfi_frame", 4, RBP, 16, -2 }, { "cfi_frame", 24, RSP, 8, -2 },
		{ "cfi_remember", 2, RSP, 8, 0 }, { "cfi_remember", 3, RSP, 24, 0 },
		{ "cfi_remember", 5, RSP, 8, 0 }, { "cfi_remember", 7, RSP, 16, -2 },
		{ "cfi_outermost", 3, END, 0, 0 }, { "cfi_signal", 3, SIG, 0, 0 },
		{ "cfi_cfa_expr", 2, RSP, 16, 0 }, { "cfi_cfa_expr", 4, RBP, 24, 0 },
		{ "cfi_cfa_expr", 6, PLT, 8, 11 }, { "cfi_cfa_expr", 8, UNS, 0, 0 },
		{ "cfi_cfa_expr", 10, UNS, 0, 0 }, { "cfi_cfa_expr", 12, RSP, 8, 0 },
		{ "cfi_ra_rules", 2, RSP, 8, 0 }, { "cfi_ra_rules", 4, END, 0, 0 },
		{ "cfi_ra_rules", 6, UNS, 0, 0 }, { "cfi_ra_rules", 15, UNS, 0, 0 },
		{ "cfi_ra_rules", 16, RSP, 8, 0 },
		{ "cfi_rbp_rules", 2, RSP, 8, 2 }, { "cfi_rbp_rules", 4, RSP, 8, 0 },
		{ "cfi_rbp_rules", 6, RSP, 8, 0 }, { "cfi_rbp_rules", 8, RSP, 16, 0 },
		{ "cfi_rbp_rules", 10, RSP, 24, 0 }, { "cfi_rbp_rules", 12, RSP, 24, 3 },
		{ "cfi_rbp_rules", 14, RSP, 24, 2 }, { "cfi_rbp_rules", 16, UNS, 0, 0 },
		{ "cfi_far", 99, RSP, 8, 0 }, { "cfi_far", 100, RSP, 16, 0 },
		{ "cfi_far", 1100, RSP, 24, 0 }, { "cfi_far", 71100, RSP, 32, 0 },
		{ "cfi_far", 71116, RSP, 8, 0 },
		/* rows stop at the invalid instruction: its row goes on to the FDE's end */
		{ "cfi_invalid", 2, RSP, 16, 0 }, { "cfi_invalid", 6, RSP, 16, 0 },
		{ "cfi_bad_restore", 6, RSP, 16, 0 }, { "cfi_bad_restore", 7, GAP, 0, 0 },
		{ "cfi_after_gap", 0, RSP, 8, 0 }, { "cfi_after_gap", 2, RSP, 16, 0 },
		{ "cfi_after_gap", 5, GAP, 0, 0 },
	};
	const char *path = built_fixture("libcfi_cases.so");
	struct unwind_table t;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(unwind_table_build(&t, fd), 0);
	close(fd);
	for (size_t i = 0; i < sizeof(want) / sizeof(*want); i++) {
		const struct want *w = &want[i];
		uint64_t pc = sym_addr(path, w->sym) + w->off;
		int64_t k = unwind_table_find(&t, pc);
		assert_true(pc > w->off && k >= 0);
		const struct firn_row *r = &t.rows[k];
		if (r->type != w->type || r->cfa_off != w->cfa || r->rbp_off8 != w->rbp)
			fail_msg("%s+%u: type %d cfa %d rbp %d, want type %d cfa %d rbp %d", w->sym,
				 w->off, r->type, r->cfa_off, r->rbp_off8, w->type, w->cfa, w->rbp);
	}
	unwind_table_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_rows),
		cmocka_unit_test(test_fixture_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
