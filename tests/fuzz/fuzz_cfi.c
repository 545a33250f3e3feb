/* libFuzzer harness: the CFI program interpreter (lib/elf/cfi) and the row decision
 * (unwind_table_row) on raw programs. Input: byte 0 flags (bit 0: i386 defaults, bit 1: 32-bit
 * class, bit 2: signal frame), byte 1 code alignment, byte 2 data alignment (signed), byte 3 the
 * FDE pointer encoding, byte 4 the CIE program's length, bytes 5-6 the FDE's code length (LE),
 * then the CIE's program and the FDE's; the whole input is the section. Invariants: only 0 or
 * -EINVAL come back; rows start at the FDE's start, rise strictly, stay below its end and are no
 * more than the program's bytes + 1; rule expressions lie inside the input; rows are typed. */
#include <elf.h>
#include <errno.h>
#include <string.h>

#include "elf/cfi.h"
#include "fuzz.h"
#include "unwind/unwind_table.h"

#define START 0x1000

/* What the rows seen so far must continue. */
struct seen {
	const uint8_t *lo, *hi;
	uint64_t end, last;
	size_t n, max;
	bool signal;
};

/* True when [p, p + len) lies inside the input. */
static bool inside(const struct seen *s, const uint8_t *p, uint64_t len)
{
	return p >= s->lo && p <= s->hi && len <= (uint64_t)(s->hi - p);
}

static int on_row(void *ctx, uint64_t pc, const struct cfi_state *st)
{
	struct seen *s = ctx;
	struct firn_row r;

	FUZZ_ASSERT(s->n ? pc > s->last : pc == START);
	FUZZ_ASSERT(pc < s->end && ++s->n <= s->max);
	s->last = pc;
	if (st->cfa == CFI_CFA_EXPR)
		FUZZ_ASSERT(inside(s, st->cfa_expr, st->cfa_len));
	if (st->ra.rule == CFI_EXPR || st->ra.rule == CFI_VAL_EXPR)
		FUZZ_ASSERT(inside(s, st->ra.expr, st->ra.len));
	if (st->rbp.rule == CFI_EXPR || st->rbp.rule == CFI_VAL_EXPR)
		FUZZ_ASSERT(inside(s, st->rbp.expr, st->rbp.len));
	unwind_table_row(st, pc, s->signal, &r);
	FUZZ_ASSERT(r.pc == (uint32_t)pc && r.type >= FIRN_ROW_CFA_RSP &&
		    r.type <= FIRN_ROW_UNSUPPORTED && r.type != FIRN_ROW_GAP);
	FUZZ_ASSERT(r.type != FIRN_ROW_PLT || (r.rbp_off8 >= 0 && r.rbp_off8 <= 15));
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 7)
		return 0;
	size_t cie_len = data[4] < size - 7 ? data[4] : size - 7;
	const uint8_t *cie_p = data + 7, *fde_p = cie_p + cie_len, *end = data + size;
	struct cfi_env env = { .sec = data, .sec_len = size, .sec_addr = 0x400000,
			       .machine = data[0] & 1 ? EM_386 : EM_X86_64, .elf32 = data[0] & 2 };
	struct cfi_cie cie = { .code_align = data[1], .data_align = (int8_t)data[2],
			       .insns = cie_p, .insns_end = fde_p, .fde_enc = data[3] };
	struct cfi_fde fde = { START, START + 1 + (data[5] | data[6] << 8), fde_p, end };
	struct seen s = { .lo = data, .hi = end, .end = fde.end, .max = (size_t)(end - fde_p) + 1,
			  .signal = data[0] & 4 };
	struct cfi_state init;

	int err = cfi_cie_state(&env, &cie, &init);
	FUZZ_ASSERT(err == 0 || err == -EINVAL);
	if (err)
		return 0;
	err = cfi_fde_rows(&env, &cie, &init, &fde, on_row, &s);
	FUZZ_ASSERT(err == 0 || err == -EINVAL);
	FUZZ_ASSERT(err || s.n >= 1); /* a program that ends well has a first row */
	return 0;
}
