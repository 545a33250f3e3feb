/* Unit tests for lib/unwind/unwind_table: the table built by running each FDE's program once equals,
 * row for row, the one libdw's per-row interpreter gives (unwind_table_build_libdw, the former
 * builder) for real files — libc, ld.so, python3.11, libstdc++, libjvm when present, firn itself,
 * fixtures and the fuzz seeds — and for 3000 random well-formed programs put in the fixture's
 * scratch FDE; and the fixture of hand-written CFI programs (tests/fixtures/cfi_cases.S) gives
 * the rows each of its functions is written to give. */
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "symfix.h"
#include "unwind/unwind_table.h"

/* Builds the table of the file open on fd both ways and asserts the same outcome: the same
 * error, or the same rows, counts and segments. Returns the row count (0: no table). */
static uint32_t assert_same_table_fd(int fd, const char *path)
{
	struct unwind_table a, b;
	int ea = unwind_table_build_libdw(&a, fd);
	int eb = unwind_table_build(&b, fd);

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

/* assert_same_table_fd on the file at path (0 when it is missing). */
static uint32_t assert_same_table(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	uint32_t n = assert_same_table_fd(fd, path);
	close(fd);
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
		{ "cfi_scratch", 4097, GAP, 0, 0 },
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

/* A small deterministic generator (xorshift64). */
static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rnd_state ^= rnd_state << 13, rnd_state ^= rnd_state >> 7, rnd_state ^= rnd_state << 17;
	return (uint32_t)(rnd_state % n);
}

/* Appends ULEB128 v (signed: SLEB128) at *p. */
static void put_leb(uint8_t **p, uint64_t v, bool sgn)
{
	for (;;) {
		uint8_t b = v & 0x7f;
		v = sgn ? (uint64_t)((int64_t)v >> 7) : v >> 7;
		bool done = sgn ? (v == 0 && !(b & 0x40)) || (v == UINT64_MAX && (b & 0x40)) : !v;
		*(*p)++ = b | (done ? 0 : 0x80);
		if (done)
			return;
	}
}

/* A register number: mostly rbp, rsp, the return address, others (not the huge ones libdw
 * refuses: below its limit it allocates room for that many registers, each row). */
static uint64_t rnd_reg(void)
{
	static const uint64_t regs[] = { 6, 7, 16, 6, 7, 16, 0, 3, 17, 300, 70 };
	return regs[rnd(rnd(8) ? 9 : 11)];
}

/* An operand: mostly small, sometimes 61 bits and more. */
static uint64_t rnd_val(void)
{
	return rnd(10) ? rnd(40) : rnd(2) ? (1ull << 61) + rnd(40) : (uint64_t)-(int64_t)rnd(40);
}

/* An expression block (length, bytes) the row decision looks at, or one it does not know. */
static void put_expr(uint8_t **p)
{
	uint8_t e[16], *q = e;

	switch (rnd(7)) {
	case 0: *q++ = DW_OP_breg0 + (uint8_t)rnd(8), put_leb(&q, rnd(64) - 16, true); break;
	case 1: *q++ = DW_OP_bregx, put_leb(&q, rnd_reg(), false), put_leb(&q, rnd(64), true); break;
	case 2: *q++ = DW_OP_plus_uconst, put_leb(&q, rnd(2) ? rnd(40) : (uint64_t)-8, false); break;
	case 3: /* the PLT's, with a random threshold */
		*q++ = DW_OP_breg7, *q++ = 8, *q++ = DW_OP_breg16, *q++ = 0, *q++ = DW_OP_lit15;
		*q++ = DW_OP_and, *q++ = DW_OP_lit0 + (uint8_t)rnd(20), *q++ = DW_OP_ge;
		*q++ = DW_OP_lit3, *q++ = DW_OP_shl, *q++ = DW_OP_plus;
		break;
	case 4: *q++ = DW_OP_breg7, *q++ = 8, *q++ = DW_OP_deref; break;
	case 5: *q++ = DW_OP_plus_uconst, *q++ = 8, *q++ = DW_OP_nop; break;
	default: break; /* empty */
	}
	*(*p)++ = (uint8_t)(q - e);
	memcpy(*p, e, (size_t)(q - e));
	*p += q - e;
}

/* Appends one well-formed instruction (every operand complete) at *p. */
static void put_insn(uint8_t **p)
{
	static const uint8_t reg_ops[] = {
		DW_CFA_offset_extended, DW_CFA_offset_extended_sf, DW_CFA_val_offset,
		DW_CFA_val_offset_sf, DW_CFA_GNU_negative_offset_extended, DW_CFA_register,
	};
	uint8_t op;

	switch (rnd(20)) {
	case 0: case 1: case 2: case 3: *(*p)++ = DW_CFA_advance_loc + (uint8_t)rnd(24); return;
	case 4: *(*p)++ = DW_CFA_advance_loc1, *(*p)++ = (uint8_t)rnd(200); return;
	case 5: *(*p)++ = DW_CFA_advance_loc2, *(*p)++ = (uint8_t)rnd(256), *(*p)++ = !rnd(20); return;
	case 6: *(*p)++ = (uint8_t)(rnd(2) ? DW_CFA_def_cfa : DW_CFA_def_cfa_sf);
		put_leb(p, rnd_reg(), false), put_leb(p, rnd_val(), (*p)[-1] == DW_CFA_def_cfa_sf);
		return;
	case 7: *(*p)++ = DW_CFA_def_cfa_offset, put_leb(p, rnd(64) * 8, false); return;
	case 8: *(*p)++ = DW_CFA_def_cfa_offset_sf, put_leb(p, -(int64_t)rnd(8), true); return;
	case 9: *(*p)++ = DW_CFA_def_cfa_register, put_leb(p, rnd_reg(), false); return;
	case 10: *(*p)++ = DW_CFA_def_cfa_expression, put_expr(p); return;
	case 11: *(*p)++ = (uint8_t)(rnd(2) ? DW_CFA_expression : DW_CFA_val_expression);
		put_leb(p, rnd_reg(), false), put_expr(p);
		return;
	case 12: *(*p)++ = DW_CFA_offset + (uint8_t)rnd_reg() % 64, put_leb(p, rnd_val(), false);
		return;
	case 13: op = reg_ops[rnd(6)], *(*p)++ = op, put_leb(p, rnd_reg(), false);
		put_leb(p, rnd_val(), op == DW_CFA_offset_extended_sf || op == DW_CFA_val_offset_sf);
		return;
	case 14: *(*p)++ = DW_CFA_restore + (uint8_t)(rnd_reg() % 64); return;
	case 15: *(*p)++ = (uint8_t)(rnd(2) ? DW_CFA_undefined : rnd(2) ? DW_CFA_same_value
									 : DW_CFA_restore_extended);
		put_leb(p, rnd_reg(), false);
		return;
	case 16: case 17: *(*p)++ = (uint8_t)(rnd(2) ? DW_CFA_remember_state : DW_CFA_restore_state);
		return;
	case 18: *(*p)++ = DW_CFA_GNU_args_size, put_leb(p, rnd(100), false); return;
	default: *(*p)++ = (uint8_t)(rnd(8) ? DW_CFA_nop : rnd(2) ? DW_CFA_GNU_window_save : 0x3e);
	}
}

/* Random well-formed programs in the fixture's scratch FDE: both builders give the same rows. */
static void test_random_programs(void **state)
{
	static const uint8_t marker[] = { DW_CFA_GNU_args_size, 0xde, 0xd7, 0x2a };
	int in = open(built_fixture("libcfi_cases.so"), O_RDONLY | O_CLOEXEC);
	int fd = memfd_create("cfi-random", MFD_CLOEXEC);
	static uint8_t img[1 << 18];
	char name[64];

	(void)state;
	assert_true(in >= 0 && fd >= 0);
	ssize_t len = read(in, img, sizeof(img));
	close(in);
	assert_true(len > 0 && len < (ssize_t)sizeof(img));
	uint8_t *area = memmem(img, (size_t)len, marker, sizeof(marker));
	assert_non_null(area);
	area += sizeof(marker);
	for (int i = 0; i < 240; i++)
		assert_int_equal(area[i], DW_CFA_nop);
	for (int n = 0; n < 3000; n++) {
		uint8_t prog[240 + 64], *p = prog, *last = prog;
		unsigned want = rnd(60);
		for (unsigned k = 0; k < want && p - prog <= 240; k++)
			last = p, put_insn(&p);
		if (p - prog > 240)
			p = last; /* the one that did not fit goes */
		memset(area, DW_CFA_nop, 240);
		memcpy(area, prog, (size_t)(p - prog));
		assert_int_equal(pwrite(fd, img, (size_t)len, 0), len);
		snprintf(name, sizeof(name), "random program %d", n);
		assert_true(assert_same_table_fd(fd, name) > 20);
	}
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_rows),
		cmocka_unit_test(test_fixture_rows),
		cmocka_unit_test(test_random_programs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
