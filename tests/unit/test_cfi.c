/* Unit tests for lib/elf/cfi (the CFI program interpreter) and unwind_table_row (rules → row):
 * instruction sequences give the rows and rules libdw gives (where each row starts, the CFA,
 * rbp and return address rules, remember/restore_state, restore from the CIE), invalid programs
 * stop where libdw stops, the remember stack is bounded, reads stay inside the program. */
#include <dwarf.h>
#include <elf.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "elf/cfi.h"
#include "base/leb128.h"
#include "unwind/unwind_table.h"

/* gcc's x86-64 CIE: CFA = rsp + 8, return address at CFA - 8. */
static const uint8_t std_cie[] = { DW_CFA_def_cfa, 7, 8, DW_CFA_offset + 16, 1 };

/* The rows one program produced. */
struct rows {
	unsigned n;
	uint64_t pc[80];
	struct cfi_state s[80];
	int stop_at; /* return -ENOMEM for this row (0: never) */
};

static int collect(void *ctx, uint64_t pc, const struct cfi_state *s)
{
	struct rows *r = ctx;

	assert_true(r->n < 80);
	if (r->stop_at && (int)r->n + 1 == r->stop_at)
		return -ENOMEM;
	r->pc[r->n] = pc;
	r->s[r->n++] = *s;
	return 0;
}

/* The section both programs live in (set_loc reads relative to it). */
static uint8_t sec[512];

/* Runs cie then fde (as one section, the CIE first) over [start, end): the interpreter's
 * return, rows in *r. code_align 1, data_align -8 unless the CIE tells otherwise. */
static int run_full(uint16_t machine, uint64_t caf, int64_t daf, uint8_t enc, const uint8_t *cie,
		    size_t cie_len, const uint8_t *fde, size_t fde_len, uint64_t start, uint64_t end,
		    struct rows *r)
{
	struct cfi_env env = { .sec = sec, .sec_len = cie_len + fde_len, .sec_addr = 0x10000,
			       .machine = machine };
	struct cfi_cie c = { .code_align = caf, .data_align = daf, .insns = sec,
			     .insns_end = sec + cie_len, .fde_enc = enc };
	struct cfi_fde f = { start, end, sec + cie_len, sec + cie_len + fde_len };
	struct cfi_state init;
	int stop = r->stop_at;

	assert_true(cie_len + fde_len <= sizeof(sec));
	if (cie_len)
		memcpy(sec, cie, cie_len);
	if (fde_len)
		memcpy(sec + cie_len, fde, fde_len);
	memset(r, 0, sizeof(*r));
	r->stop_at = stop;
	int err = cfi_cie_state(&env, &c, &init);
	if (err)
		return err;
	return cfi_fde_rows(&env, &c, &init, &f, collect, r);
}

static int run(const uint8_t *fde, size_t fde_len, uint64_t start, uint64_t end, struct rows *r)
{
	return run_full(EM_X86_64, 1, -8, DW_EH_PE_pcrel | DW_EH_PE_sdata4, std_cie,
			sizeof(std_cie), fde, fde_len, start, end, r);
}

/* Row i: CFA = reg + off. */
static void assert_cfa(const struct rows *r, unsigned i, uint64_t pc, uint64_t reg, int64_t off)
{
	assert_true(i < r->n);
	assert_int_equal(r->pc[i], pc);
	assert_int_equal(r->s[i].cfa, CFI_CFA_OFFSET);
	assert_int_equal(r->s[i].cfa_reg, reg);
	assert_int_equal((int64_t)r->s[i].cfa_off, off);
}

static void assert_reg(const struct cfi_reg *reg, uint8_t rule, int64_t value)
{
	assert_int_equal(reg->rule, rule);
	assert_int_equal(reg->value, value);
}

/* gcc's frame: push rbp; mov rsp, rbp; ...; leave: one row per advance, rbp saved at CFA-16. */
static void test_prologue(void **state)
{
	static const uint8_t p[] = { DW_CFA_advance_loc + 1, DW_CFA_def_cfa_offset, 16,
				     DW_CFA_offset + 6, 2, DW_CFA_advance_loc + 3,
				     DW_CFA_def_cfa_register, 6, DW_CFA_advance_loc + 20,
				     DW_CFA_def_cfa, 7, 8 };
	struct rows r = { 0 };

	(void)state;
	assert_int_equal(run(p, sizeof(p), 0x1000, 0x1019, &r), 0);
	assert_int_equal(r.n, 4);
	assert_cfa(&r, 0, 0x1000, 7, 8);
	assert_reg(&r.s[0].ra, CFI_OFFSET, -8);
	assert_reg(&r.s[0].rbp, CFI_SAME, 0);
	assert_cfa(&r, 1, 0x1001, 7, 16);
	assert_reg(&r.s[1].rbp, CFI_OFFSET, -16);
	assert_cfa(&r, 2, 0x1004, 6, 16);
	assert_cfa(&r, 3, 0x1018, 7, 8);
	assert_reg(&r.s[3].rbp, CFI_OFFSET, -16);
}

/* advance_loc1/2/4 and MIPS_advance_loc8 scaled by the code alignment; an advance of 0 starts
 * no row (its rules join the current one). */
static void test_advance_forms(void **state)
{
	static const uint8_t p[] = { DW_CFA_advance_loc + 0, DW_CFA_def_cfa_offset, 16,
				     DW_CFA_advance_loc1, 0x10, DW_CFA_def_cfa_offset, 24,
				     DW_CFA_advance_loc2, 0x00, 0x01, DW_CFA_def_cfa_offset, 32,
				     DW_CFA_advance_loc4, 0x01, 0, 0, 0, DW_CFA_def_cfa_offset, 40,
				     DW_CFA_MIPS_advance_loc8, 2, 0, 0, 0, 0, 0, 0, 0,
				     DW_CFA_def_cfa_offset, 48 };
	struct rows r = { 0 };

	(void)state;
	assert_int_equal(run_full(EM_X86_64, 4, -8, 0x1b, std_cie, sizeof(std_cie), p, sizeof(p),
				  0x1000, 0x3000, &r), 0);
	assert_int_equal(r.n, 5);
	assert_cfa(&r, 0, 0x1000, 7, 16);
	assert_cfa(&r, 1, 0x1000 + 0x40, 7, 24);
	assert_cfa(&r, 2, 0x1040 + 0x400, 7, 32);
	assert_cfa(&r, 3, 0x1440 + 4, 7, 40);
	assert_cfa(&r, 4, 0x1444 + 8, 7, 48);
}

/* An advance to or past the FDE's end ends its rows: what follows is never run (not even an
 * invalid instruction). An empty program: one row, the CIE's rules. */
static void test_advance_past_end(void **state)
{
	static const uint8_t p[] = { DW_CFA_advance_loc + 4, DW_CFA_def_cfa_offset, 16,
				     DW_CFA_advance_loc + 8, 0x3e };
	struct rows r = { 0 };

	(void)state;
	assert_int_equal(run(p, sizeof(p), 0x1000, 0x100a, &r), 0);
	assert_int_equal(r.n, 2);
	assert_cfa(&r, 0, 0x1000, 7, 8);
	assert_cfa(&r, 1, 0x1004, 7, 16);
	assert_int_equal(run(p, 0, 0x1000, 0x1004, &r), 0);
	assert_int_equal(r.n, 1);
	assert_cfa(&r, 0, 0x1000, 7, 8);
	/* the location moving backwards (set_loc) starts no row until it passes the last one */
	static const uint8_t back[] = { DW_CFA_advance_loc + 8, DW_CFA_def_cfa_offset, 16,
					DW_CFA_set_loc, 0x00, 0x10, 0, 0, 0, 0, 0, 0,
					DW_CFA_def_cfa_offset, 24, DW_CFA_advance_loc + 9,
					DW_CFA_def_cfa_offset, 32 };
	assert_int_equal(run_full(EM_X86_64, 1, -8, DW_EH_PE_udata8, std_cie, sizeof(std_cie),
				  back, sizeof(back), 0x1000, 0x1020, &r), 0);
	assert_int_equal(r.n, 3);
	assert_cfa(&r, 1, 0x1008, 7, 24);
	assert_cfa(&r, 2, 0x1009, 7, 32);
}

/* remember_state/restore_state bring back every rule, the CFA's too, nested. */
static void test_remember_restore(void **state)
{
	static const uint8_t p[] = { DW_CFA_advance_loc + 1, DW_CFA_def_cfa_offset, 16,
				     DW_CFA_offset + 6, 2, DW_CFA_advance_loc + 1,
				     DW_CFA_remember_state, DW_CFA_def_cfa_offset, 8,
				     DW_CFA_restore + 6, DW_CFA_advance_loc + 1,
				     DW_CFA_remember_state, DW_CFA_def_cfa_offset, 24,
				     DW_CFA_advance_loc + 2, DW_CFA_restore_state,
				     DW_CFA_advance_loc + 2, DW_CFA_restore_state };
	struct rows r = { 0 };

	(void)state;
	assert_int_equal(run(p, sizeof(p), 0, 0x20, &r), 0);
	assert_int_equal(r.n, 6);
	assert_cfa(&r, 2, 2, 7, 8);
	assert_reg(&r.s[2].rbp, CFI_SAME, 0);
	assert_cfa(&r, 3, 3, 7, 24);
	assert_cfa(&r, 4, 5, 7, 8);
	assert_reg(&r.s[4].rbp, CFI_SAME, 0);
	assert_cfa(&r, 5, 7, 7, 16);
	assert_reg(&r.s[5].rbp, CFI_OFFSET, -16);
}

/* restore and restore_extended go back to the CIE's rule (after its instructions). */
static void test_restore_cie_rule(void **state)
{
	static const uint8_t p[] = { DW_CFA_undefined, 16, DW_CFA_offset + 6, 3,
				     DW_CFA_advance_loc + 1, DW_CFA_restore + 16,
				     DW_CFA_restore_extended, 6 };
	struct rows r = { 0 };

	(void)state;
	assert_int_equal(run(p, sizeof(p), 0, 8, &r), 0);
	assert_int_equal(r.n, 2);
	assert_reg(&r.s[0].ra, CFI_UNDEFINED, 0);
	assert_reg(&r.s[0].rbp, CFI_OFFSET, -24);
	assert_reg(&r.s[1].ra, CFI_OFFSET, -8);
	assert_reg(&r.s[1].rbp, CFI_SAME, 0);
}

/* An invalid instruction ends the program: the rows before it are reported, then -EINVAL. */
static void assert_stops(const uint8_t *bad, size_t len)
{
	uint8_t p[64] = { DW_CFA_advance_loc + 2, DW_CFA_def_cfa_offset, 16, DW_CFA_advance_loc + 2 };
	struct rows r = { 0 };

	assert_true(len + 4 <= sizeof(p));
	memcpy(p + 4, bad, len);
	assert_int_equal(run(p, 4 + len, 0, 0x10, &r), -EINVAL);
	assert_int_equal(r.n, 2);
	assert_cfa(&r, 1, 2, 7, 16);
}

static void test_invalid_stops(void **state)
{
	(void)state;
	assert_stops((const uint8_t[]){ 0x3e }, 1);                             /* unknown */
	assert_stops((const uint8_t[]){ DW_CFA_restore_state }, 1);            /* nothing kept */
	assert_stops((const uint8_t[]){ DW_CFA_def_cfa_offset, 0x80 }, 2);     /* truncated */
	assert_stops((const uint8_t[]){ DW_CFA_def_cfa, 7 }, 2);               /* operand missing */
	assert_stops((const uint8_t[]){ DW_CFA_advance_loc2, 1 }, 2);
	assert_stops((const uint8_t[]){ DW_CFA_def_cfa_expression, 3, 0x77, 8 }, 4); /* overruns */
	assert_stops((const uint8_t[]){ DW_CFA_expression, 16, 2, 0x23 }, 4);
	/* register numbers libdw refuses: 2^28 - 1 and up */
	assert_stops((const uint8_t[]){ DW_CFA_undefined, 0xff, 0xff, 0xff, 0x7f }, 5);
	assert_stops((const uint8_t[]){ DW_CFA_restore_extended, 0xff, 0xff, 0xff, 0x7f }, 5);
	/* eleven bytes of ULEB128 */
	assert_stops((const uint8_t[]){ DW_CFA_GNU_args_size, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					0x80, 0x80, 0x80, 0x80, 0x00 }, 12);
	/* one below the limit is a register like any other */
	static const uint8_t ok[] = { DW_CFA_undefined, 0xfe, 0xff, 0xff, 0x7f };
	struct rows r = { 0 };
	assert_int_equal(run(ok, sizeof(ok), 0, 4, &r), 0);
	assert_int_equal(r.n, 1);
}

/* CFI_STACK_MAX remembered states fit; one more is an invalid program. */
static void test_stack_bound(void **state)
{
	uint8_t p[2 * CFI_STACK_MAX + 8];
	struct rows r = { 0 };
	size_t n = 0;

	(void)state;
	for (int i = 0; i < CFI_STACK_MAX; i++)
		p[n++] = DW_CFA_remember_state;
	for (int i = 0; i < CFI_STACK_MAX; i++)
		p[n++] = DW_CFA_restore_state;
	assert_int_equal(run(p, n, 0, 4, &r), 0);
	assert_int_equal(r.n, 1);
	for (n = 0; n <= CFI_STACK_MAX; n++)
		p[n] = DW_CFA_remember_state;
	assert_int_equal(run(p, n, 0, 4, &r), -EINVAL);
	assert_int_equal(r.n, 0);
}

/* In a CIE: an advance or a restore is invalid; states left remembered are dropped; the ABI's
 * defaults differ for i386 (the return address column is undefined). */
static void test_cie_rules(void **state)
{
	static const uint8_t adv[] = { DW_CFA_def_cfa, 7, 8, DW_CFA_advance_loc + 1 };
	static const uint8_t rst[] = { DW_CFA_def_cfa, 7, 8, DW_CFA_restore + 6 };
	static const uint8_t kept[] = { DW_CFA_def_cfa, 7, 8, DW_CFA_remember_state,
					DW_CFA_def_cfa_offset, 16 };
	static const uint8_t none[] = { DW_CFA_def_cfa_offset, 16 };
	struct rows r = { 0 };

	(void)state;
	assert_int_equal(run_full(EM_X86_64, 1, -8, 0, adv, sizeof(adv), NULL, 0, 0, 4, &r), -EINVAL);
	assert_int_equal(run_full(EM_X86_64, 1, -8, 0, rst, sizeof(rst), NULL, 0, 0, 4, &r), -EINVAL);
	assert_int_equal(run_full(EM_X86_64, 1, -8, 0, kept, sizeof(kept), NULL, 0, 0, 4, &r), 0);
	assert_cfa(&r, 0, 0, 7, 16);
	assert_reg(&r.s[0].ra, CFI_SAME, 0);
	assert_reg(&r.s[0].rbp, CFI_SAME, 0);
	assert_int_equal(run_full(EM_386, 1, -4, 0, kept, sizeof(kept), NULL, 0, 0, 4, &r), 0);
	assert_reg(&r.s[0].ra, CFI_UNSPECIFIED, 0);
	assert_reg(&r.s[0].rbp, CFI_SAME, 0);
	/* changing the CFA's offset without an offset rule makes it invalid */
	assert_int_equal(run_full(EM_X86_64, 1, -8, 0, none, sizeof(none), NULL, 0, 0, 4, &r), 0);
	assert_int_equal(r.s[0].cfa, CFI_CFA_INVALID);
}

/* Expression rules keep their bytes; def_cfa_register after an expression: invalid CFA;
 * the _sf forms factor by the data alignment; values are kept in 61 bits as libdw keeps them. */
static void test_rule_kinds(void **state)
{
	static const uint8_t p[] = {
		DW_CFA_def_cfa_expression, 2, DW_OP_breg7, 16,
		DW_CFA_expression, 6, 2, DW_OP_plus_uconst, 16,
		DW_CFA_val_expression, 16, 0, DW_CFA_advance_loc + 1,
		DW_CFA_def_cfa_register, 6, DW_CFA_val_offset, 16, 1, DW_CFA_register, 6, 3,
		DW_CFA_advance_loc + 1,
		DW_CFA_def_cfa_sf, 7, 0x7e, DW_CFA_offset_extended_sf, 6, 0x7d,
		DW_CFA_val_offset_sf, 16, 0x02, DW_CFA_advance_loc + 1,
		DW_CFA_def_cfa_offset_sf, 0x7d, DW_CFA_GNU_negative_offset_extended, 6, 2,
		/* values keep the 61 bits libdw keeps: 2^61 + 5 is 5, 2^60 is -2^60 */
		DW_CFA_register, 16, 0x85, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20,
		DW_CFA_advance_loc + 1,
		DW_CFA_register, 6, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10,
		DW_CFA_nop, DW_CFA_GNU_args_size, 0x10,
	};
	struct rows r = { 0 };

	(void)state;
	assert_int_equal(run(p, sizeof(p), 0, 8, &r), 0);
	assert_int_equal(r.n, 5);
	assert_int_equal(r.s[0].cfa, CFI_CFA_EXPR);
	assert_int_equal(r.s[0].cfa_len, 2);
	assert_ptr_equal(r.s[0].cfa_expr, sec + sizeof(std_cie) + 2);
	assert_int_equal(r.s[0].rbp.rule, CFI_EXPR);
	assert_int_equal(r.s[0].rbp.len, 2);
	assert_int_equal(r.s[0].rbp.expr[0], DW_OP_plus_uconst);
	assert_int_equal(r.s[0].ra.rule, CFI_VAL_EXPR);
	assert_int_equal(r.s[0].ra.len, 0);
	assert_int_equal(r.s[1].cfa, CFI_CFA_INVALID);
	assert_reg(&r.s[1].ra, CFI_VAL_OFFSET, -8);
	assert_reg(&r.s[1].rbp, CFI_REGISTER, 3);
	assert_cfa(&r, 2, 2, 7, 16);
	assert_reg(&r.s[2].rbp, CFI_OFFSET, 24);
	assert_reg(&r.s[2].ra, CFI_VAL_OFFSET, -16);
	assert_cfa(&r, 3, 3, 7, 24);
	assert_reg(&r.s[3].rbp, CFI_OFFSET, 16);
	assert_reg(&r.s[3].ra, CFI_REGISTER, 5);
	assert_reg(&r.s[4].rbp, CFI_REGISTER, -(1ll << 60));
}

/* set_loc: pc-relative to the operand's address in the section, or absolute. */
static void test_set_loc(void **state)
{
	static const uint8_t p[] = { DW_CFA_set_loc, 0x10, 0, 0, 0, DW_CFA_def_cfa_offset, 16 };
	static const uint8_t aligned[] = { DW_CFA_set_loc, 0, 0, 0, 0, 0, 0, 0, 0 };
	struct rows r = { 0 };

	(void)state;
	/* the operand lies at section offset 6 (after the CIE): 0x10000 + 6 + 0x10 */
	assert_int_equal(run_full(EM_X86_64, 1, -8, DW_EH_PE_pcrel | DW_EH_PE_sdata4, std_cie,
				  sizeof(std_cie), p, sizeof(p), 0x10000, 0x10100, &r), 0);
	assert_int_equal(r.n, 2);
	assert_cfa(&r, 1, 0x10016, 7, 16);
	assert_int_equal(run_full(EM_X86_64, 1, -8, DW_EH_PE_udata4, std_cie, sizeof(std_cie), p,
				  sizeof(p), 0, 0x100, &r), 0);
	assert_cfa(&r, 1, 0x10, 7, 16);
	assert_int_equal(run_full(EM_X86_64, 1, -8, DW_EH_PE_aligned, std_cie, sizeof(std_cie),
				  aligned, sizeof(aligned), 0, 0x100, &r), -EINVAL);
	/* its operand must lie in the section: 4 bytes where 2 are left */
	assert_int_equal(run_full(EM_X86_64, 1, -8, DW_EH_PE_udata4, std_cie, sizeof(std_cie), p,
				  3, 0, 0x100, &r), -EINVAL);
}

/* window_save: the return address column at CFA + 0 (SPARC's shorthand), a no-op on AArch64. */
static void test_window_save(void **state)
{
	static const uint8_t p[] = { DW_CFA_GNU_window_save };
	struct rows r = { 0 };

	(void)state;
	assert_int_equal(run(p, sizeof(p), 0, 4, &r), 0);
	assert_reg(&r.s[0].ra, CFI_OFFSET, 0);
	assert_int_equal(run_full(EM_AARCH64, 1, -8, 0, std_cie, sizeof(std_cie), p, sizeof(p), 0,
				  4, &r), 0);
	assert_reg(&r.s[0].ra, CFI_OFFSET, -8);
}

/* The callback's error stops the program and comes back. */
static void test_callback_error(void **state)
{
	static const uint8_t p[] = { DW_CFA_advance_loc + 1, DW_CFA_advance_loc + 1,
				     DW_CFA_advance_loc + 1 };
	struct rows r = { .stop_at = 2 };

	(void)state;
	assert_int_equal(run(p, sizeof(p), 0, 8, &r), -ENOMEM);
	assert_int_equal(r.n, 1);
}

/* LEB128: one byte, several, the longest (10), too long, truncated, signs. */
static void test_leb(void **state)
{
	static const uint8_t u[] = { 0xe5, 0x8e, 0x26 };
	static const uint8_t max[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	static const uint8_t min[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f };
	static const uint8_t neg[] = { 0x7e, 0xc0, 0xbb, 0x78 };
	const uint8_t *p = u;
	uint64_t v;
	int64_t s;

	(void)state;
	assert_int_equal(leb128_u(&p, u + 3, &v), 0);
	assert_int_equal(v, 624485);
	assert_ptr_equal(p, u + 3);
	p = u;
	assert_int_equal(leb128_u(&p, u + 2, &v), -EINVAL);
	assert_ptr_equal(p, u);
	p = max;
	assert_int_equal(leb128_u(&p, max + 10, &v), 0);
	assert_true(v == UINT64_MAX);
	p = max;
	assert_int_equal(leb128_s(&p, max + 10, &s), 0);
	assert_int_equal(s, -1);
	p = min;
	assert_int_equal(leb128_s(&p, min + 10, &s), 0);
	assert_true(s == INT64_MIN);
	p = neg;
	assert_int_equal(leb128_s(&p, neg + 1, &s), 0);
	assert_int_equal(s, -2);
	assert_int_equal(leb128_s(&p, neg + 4, &s), 0);
	assert_int_equal(s, -123456);

	/* padded to 10 bytes: read, the bits past 64 dropped; 11 bytes: refused, as libdw does */
	static const uint8_t pad[] = { 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00,
				       0x00 };
	p = pad;
	assert_int_equal(leb128_u(&p, pad + 10, &v), 0);
	assert_int_equal(v, 1);
	assert_ptr_equal(p, pad + 10);
	static const uint8_t eleven[] = { 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					  0x80, 0x00 };
	p = eleven;
	assert_int_equal(leb128_u(&p, eleven + sizeof(eleven), &v), -EINVAL);
	assert_int_equal(leb128_s(&p, eleven + sizeof(eleven), &s), -EINVAL);
	assert_ptr_equal(p, eleven);
}

/* A state with CFA = rsp + 8 and the return address at CFA - 8. */
static struct cfi_state plain(void)
{
	return (struct cfi_state){ .cfa = CFI_CFA_OFFSET, .cfa_reg = 7, .cfa_off = 8,
				   .rbp = { .rule = CFI_SAME }, .ra = { .rule = CFI_OFFSET, .value = -8 } };
}

/* unwind_table_row: each row type from the rules, as the libdw-based builder decided. */
static void test_row_types(void **state)
{
	static const uint8_t plt[] = { DW_OP_breg7, 8, DW_OP_breg16, 0, DW_OP_lit15, DW_OP_and,
				       DW_OP_lit11, DW_OP_ge, DW_OP_lit3, DW_OP_shl, DW_OP_plus };
	static const uint8_t bregx[] = { DW_OP_bregx, 6, 0x18 };
	static const uint8_t rbp_at[] = { DW_OP_plus_uconst, 16 };
	struct cfi_state s = plain();
	struct firn_row r;

	(void)state;
	unwind_table_row(&s, 0x40, false, &r);
	assert_int_equal(r.type, FIRN_ROW_CFA_RSP);
	assert_int_equal(r.cfa_off, 8);
	assert_int_equal(r.pc, 0x40);
	unwind_table_row(&s, 0x40, true, &r);
	assert_int_equal(r.type, FIRN_ROW_SIGNAL);
	s.rbp = (struct cfi_reg){ .rule = CFI_EXPR, .expr = rbp_at, .len = 2 };
	s.cfa_expr = bregx, s.cfa_len = 3, s.cfa = CFI_CFA_EXPR;
	unwind_table_row(&s, 0x40, false, &r);
	assert_int_equal(r.type, FIRN_ROW_CFA_RBP);
	assert_int_equal(r.cfa_off, 24);
	assert_int_equal(r.rbp_off8, 2);
	s.cfa_expr = plt, s.cfa_len = sizeof(plt);
	unwind_table_row(&s, 0x40, false, &r);
	assert_int_equal(r.type, FIRN_ROW_PLT);
	assert_int_equal(r.cfa_off, 8);
	assert_int_equal(r.rbp_off8, 11);
	s.cfa_len = sizeof(plt) - 1; /* "plus" missing */
	unwind_table_row(&s, 0x40, false, &r);
	assert_int_equal(r.type, FIRN_ROW_UNSUPPORTED);
	s = plain();
	s.ra = (struct cfi_reg){ .rule = CFI_EXPR, .expr = rbp_at, .len = 0 };
	unwind_table_row(&s, 0x40, false, &r);
	assert_int_equal(r.type, FIRN_ROW_END);
	s.ra.rule = CFI_UNSPECIFIED;
	unwind_table_row(&s, 0x40, false, &r);
	assert_int_equal(r.type, FIRN_ROW_END);
}

/* unwind_table_row: what makes a row UNSUPPORTED, and rbp offsets a row cannot hold. */
static void test_row_limits(void **state)
{
	struct cfi_state s = plain();
	struct firn_row r;

	(void)state;
	s.cfa_off = 40000;
	unwind_table_row(&s, 0, false, &r);
	assert_int_equal(r.type, FIRN_ROW_UNSUPPORTED);
	assert_int_equal(r.cfa_off, 0);
	s = plain(), s.cfa_reg = 0; /* rax */
	unwind_table_row(&s, 0, false, &r);
	assert_int_equal(r.type, FIRN_ROW_UNSUPPORTED);
	s = plain(), s.cfa_reg = (1ull << 32) | 7; /* libdw's int truncation: rsp */
	unwind_table_row(&s, 0, false, &r);
	assert_int_equal(r.type, FIRN_ROW_CFA_RSP);
	s = plain(), s.ra.value = -16;
	unwind_table_row(&s, 0, false, &r);
	assert_int_equal(r.type, FIRN_ROW_UNSUPPORTED);
	s = plain(), s.ra.rule = CFI_SAME;
	unwind_table_row(&s, 0, false, &r);
	assert_int_equal(r.type, FIRN_ROW_UNSUPPORTED);
	s = plain(), s.cfa = CFI_CFA_INVALID;
	unwind_table_row(&s, 0, false, &r);
	assert_int_equal(r.type, FIRN_ROW_UNSUPPORTED);
	s = plain(), s.rbp = (struct cfi_reg){ .rule = CFI_OFFSET, .value = -4096 };
	unwind_table_row(&s, 0, false, &r);
	assert_int_equal(r.type, FIRN_ROW_CFA_RSP);
	assert_int_equal(r.rbp_off8, 0);
	s.rbp.value = -1016;
	unwind_table_row(&s, 0, false, &r);
	assert_int_equal(r.rbp_off8, -127);
	s.rbp.value = -12; /* not a multiple of 8 */
	unwind_table_row(&s, 0, false, &r);
	assert_int_equal(r.rbp_off8, 0);
	s.rbp.rule = CFI_VAL_OFFSET, s.rbp.value = -16;
	unwind_table_row(&s, 0, false, &r);
	assert_int_equal(r.rbp_off8, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prologue),
		cmocka_unit_test(test_advance_forms),
		cmocka_unit_test(test_advance_past_end),
		cmocka_unit_test(test_remember_restore),
		cmocka_unit_test(test_restore_cie_rule),
		cmocka_unit_test(test_invalid_stops),
		cmocka_unit_test(test_stack_bound),
		cmocka_unit_test(test_cie_rules),
		cmocka_unit_test(test_rule_kinds),
		cmocka_unit_test(test_set_loc),
		cmocka_unit_test(test_window_save),
		cmocka_unit_test(test_callback_error),
		cmocka_unit_test(test_leb),
		cmocka_unit_test(test_row_types),
		cmocka_unit_test(test_row_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
