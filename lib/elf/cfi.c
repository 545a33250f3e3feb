/* CFI programs run once each (see cfi.h). The rules follow libdw 0.188's interpreter, except on
 * input libdw mishandles or never meets on x86: where libdw reads past a truncated program, this
 * refuses it; set_loc's aligned and indirect encodings are refused; a remember_state stack
 * deeper than CFI_STACK_MAX is invalid; machines other than i386 get x86-64's default rules. */
#include "elf/cfi.h"

#include <dwarf.h>
#include <elf.h>
#include <errno.h>
#include <string.h>

#include "base/leb128.h"

/* libdw refuses register numbers from here up (its register array's size would overflow). */
#define REG_LIMIT ((uint64_t)INT32_MAX / 8)

/* A running program: where it is, its location counter, the rules, the remembered states. */
struct vm {
	const struct cfi_env *env;
	const struct cfi_cie *cie;
	const struct cfi_state *init; /* the CIE's state; NULL while running the CIE's own */
	const uint8_t *p, *end;
	uint64_t loc;
	struct cfi_state cur;
	unsigned depth;
	struct cfi_state *stack; /* CFI_STACK_MAX states, the caller's (not zeroed by vm_start) */
};

/* Reads an n-byte little-endian number (n <= 8) from [*p, end). */
static int read_fixed(const uint8_t **p, const uint8_t *end, unsigned n, uint64_t *v)
{
	uint64_t acc = 0;

	if ((size_t)(end - *p) < n)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++)
		acc |= (uint64_t)(*p)[i] << (8 * i);
	*p += n;
	*v = acc;
	return 0;
}

/* A value as libdw's 61-bit register rule field keeps it. */
static int64_t keep61(uint64_t v)
{
	return (int64_t)(v << 3) >> 3;
}

/* The ABI's rules before any CIE: libdw's x86-64 and i386 backends (rbp/esi and, on x86-64
 * only, the return address column 16 keep their value; the CFA is undefined). */
static void abi_defaults(uint16_t machine, struct cfi_state *s)
{
	memset(s, 0, sizeof(*s));
	s->cfa = CFI_CFA_UNDEFINED;
	s->rbp.rule = CFI_SAME;
	s->ra.rule = machine == EM_386 ? CFI_UNSPECIFIED : CFI_SAME;
}

/* Sets register reg's rule (only rbp's and the return address's are kept). */
static int set_rule(struct vm *vm, uint64_t reg, uint8_t rule, uint64_t value,
		    const uint8_t *expr, uint64_t len)
{
	struct cfi_reg *r = reg == CFI_REG_RBP ? &vm->cur.rbp
			    : reg == CFI_REG_RA ? &vm->cur.ra : NULL;

	if (reg >= REG_LIMIT)
		return -EINVAL;
	if (r)
		*r = (struct cfi_reg){ .rule = rule, .value = keep61(value), .expr = expr,
				       .len = len };
	return 0;
}

/* DW_CFA_restore*: back to the CIE's rule; invalid inside the CIE itself. */
static int restore(struct vm *vm, uint64_t reg)
{
	if (!vm->init || reg >= REG_LIMIT)
		return -EINVAL;
	if (reg == CFI_REG_RBP)
		vm->cur.rbp = vm->init->rbp;
	else if (reg == CFI_REG_RA)
		vm->cur.ra = vm->init->ra;
	return 0;
}

/* Moves the location by delta code units: 1 (a new row), or -EINVAL inside a CIE. */
static int advance(struct vm *vm, uint64_t delta)
{
	vm->loc += delta * vm->cie->code_align;
	return vm->init ? 1 : -EINVAL;
}

/* Reads a value in DW_EH_PE format fmt (the low nibble of an encoding) from [*p, end). */
static int read_encoded(const uint8_t **p, const uint8_t *end, uint8_t fmt, bool elf32,
			uint64_t *v)
{
	int64_t s;

	switch (fmt) {
	case DW_EH_PE_absptr: return read_fixed(p, end, elf32 ? 4 : 8, v);
	case DW_EH_PE_udata2: return read_fixed(p, end, 2, v);
	case DW_EH_PE_udata4: return read_fixed(p, end, 4, v);
	case DW_EH_PE_udata8: case DW_EH_PE_sdata8: return read_fixed(p, end, 8, v);
	case DW_EH_PE_uleb128: return leb128_u(p, end, v);
	case DW_EH_PE_sdata2:
		if (read_fixed(p, end, 2, v))
			return -EINVAL;
		*v = (uint64_t)(int16_t)*v;
		return 0;
	case DW_EH_PE_sdata4:
		if (read_fixed(p, end, 4, v))
			return -EINVAL;
		*v = (uint64_t)(int32_t)*v;
		return 0;
	case DW_EH_PE_sleb128:
		if (leb128_s(p, end, &s))
			return -EINVAL;
		*v = (uint64_t)s;
		return 0;
	}
	return -EINVAL;
}

int cfi_pointer(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t pc,
		uint64_t datarel, bool elf32, uint64_t *v)
{
	uint64_t base = 0;

	switch (enc & 0x70) {
	case DW_EH_PE_absptr: break;
	case DW_EH_PE_pcrel: base = pc; break;
	case DW_EH_PE_datarel: base = datarel; break;
	default: return -EINVAL; /* textrel, funcrel, aligned: not in .eh_frame on x86 */
	}
	if ((enc & DW_EH_PE_indirect) || read_encoded(p, end, enc & 0x0f, elf32, v))
		return -EINVAL;
	*v += base;
	return 0;
}

/* DW_CFA_set_loc: an address in the CIE's FDE encoding, read within the section as libdw
 * does. 1 (a new row) or -EINVAL. */
static int set_loc(struct vm *vm)
{
	const struct cfi_env *env = vm->env;
	uint8_t enc = vm->cie->fde_enc;
	uint64_t v, base = 0;

	if (vm->p < env->sec || vm->p > env->sec + env->sec_len)
		return -EINVAL; /* a program outside the section (a caller's mistake) */
	if ((enc & 0x70) == DW_EH_PE_pcrel)
		base = env->sec_addr + (uint64_t)(vm->p - env->sec);
	else if ((enc & 0x70) > DW_EH_PE_funcrel || (enc & DW_EH_PE_indirect))
		return -EINVAL; /* aligned, indirect or unknown */
	if (read_encoded(&vm->p, env->sec + env->sec_len, enc & 0x0f, env->elf32, &v))
		return -EINVAL;
	vm->loc = base + v;
	return vm->init ? 1 : -EINVAL;
}

/* The instructions that move the location: 1 (a new row), 0 (not one of them), -EINVAL. */
static int loc_op(struct vm *vm, uint8_t op)
{
	uint64_t v;
	int err;

	switch (op) {
	case DW_CFA_set_loc: return set_loc(vm);
	case DW_CFA_advance_loc1: err = read_fixed(&vm->p, vm->end, 1, &v); break;
	case DW_CFA_advance_loc2: err = read_fixed(&vm->p, vm->end, 2, &v); break;
	case DW_CFA_advance_loc4: err = read_fixed(&vm->p, vm->end, 4, &v); break;
	case DW_CFA_MIPS_advance_loc8: err = read_fixed(&vm->p, vm->end, 8, &v); break;
	default: return 0;
	}
	return err ? err : advance(vm, v);
}

/* Requires an offset CFA rule before changing its register or offset (else: invalid CFA). */
static void require_cfa_offset(struct vm *vm)
{
	if (vm->cur.cfa != CFI_CFA_OFFSET)
		vm->cur.cfa = CFI_CFA_INVALID;
}

/* Reads an expression block (ULEB128 length, bytes) that must fit in the program. */
static int read_block(struct vm *vm, const uint8_t **expr, uint64_t *len)
{
	if (leb128_u(&vm->p, vm->end, len) || *len > (uint64_t)(vm->end - vm->p))
		return -EINVAL;
	*expr = vm->p;
	vm->p += *len;
	return 0;
}

/* The instructions that define the CFA: 1 done, 0 not one of them, -EINVAL. */
static int cfa_op(struct vm *vm, uint8_t op)
{
	struct cfi_state *s = &vm->cur;
	uint64_t reg, off;
	int64_t soff;

	switch (op) {
	case DW_CFA_def_cfa:
	case DW_CFA_def_cfa_sf:
		if (leb128_u(&vm->p, vm->end, &reg))
			return -EINVAL;
		if (op == DW_CFA_def_cfa ? leb128_u(&vm->p, vm->end, &off)
					 : leb128_s(&vm->p, vm->end, &soff))
			return -EINVAL;
		if (op == DW_CFA_def_cfa_sf)
			off = (uint64_t)soff * (uint64_t)vm->cie->data_align;
		s->cfa = CFI_CFA_OFFSET, s->cfa_reg = reg, s->cfa_off = off;
		return 1;
	case DW_CFA_def_cfa_register:
		if (leb128_u(&vm->p, vm->end, &reg))
			return -EINVAL;
		require_cfa_offset(vm);
		s->cfa_reg = reg;
		return 1;
	case DW_CFA_def_cfa_offset:
	case DW_CFA_def_cfa_offset_sf:
		if (op == DW_CFA_def_cfa_offset ? leb128_u(&vm->p, vm->end, &off)
						: leb128_s(&vm->p, vm->end, &soff))
			return -EINVAL;
		if (op == DW_CFA_def_cfa_offset_sf)
			off = (uint64_t)soff * (uint64_t)vm->cie->data_align;
		require_cfa_offset(vm);
		s->cfa_off = off;
		return 1;
	case DW_CFA_def_cfa_expression:
		if (read_block(vm, &s->cfa_expr, &s->cfa_len))
			return -EINVAL;
		s->cfa = CFI_CFA_EXPR;
		return 1;
	}
	return 0;
}

/* Register rules with an offset operand (factored by the data alignment), or a register. */
static int offset_op(struct vm *vm, uint8_t op, uint64_t reg)
{
	uint64_t v, daf = (uint64_t)vm->cie->data_align;
	bool sf = op == DW_CFA_offset_extended_sf || op == DW_CFA_val_offset_sf;
	int64_t s;

	if (sf ? leb128_s(&vm->p, vm->end, &s) : leb128_u(&vm->p, vm->end, &v))
		return -EINVAL;
	if (sf)
		v = (uint64_t)s;
	switch (op) {
	case DW_CFA_offset:
	case DW_CFA_offset_extended:
	case DW_CFA_offset_extended_sf:
		return set_rule(vm, reg, CFI_OFFSET, v * daf, NULL, 0);
	case DW_CFA_GNU_negative_offset_extended:
		return set_rule(vm, reg, CFI_OFFSET, (0 - v) * daf, NULL, 0);
	case DW_CFA_val_offset:
	case DW_CFA_val_offset_sf:
		return set_rule(vm, reg, CFI_VAL_OFFSET, v * daf, NULL, 0);
	case DW_CFA_register:
		return set_rule(vm, reg, CFI_REGISTER, v, NULL, 0);
	}
	return -EINVAL;
}

/* True for the instructions whose first operand is a register number. */
static bool takes_reg(uint8_t op)
{
	switch (op) {
	case DW_CFA_offset_extended: case DW_CFA_offset_extended_sf:
	case DW_CFA_GNU_negative_offset_extended: case DW_CFA_val_offset:
	case DW_CFA_val_offset_sf: case DW_CFA_register: case DW_CFA_restore_extended:
	case DW_CFA_undefined: case DW_CFA_same_value: case DW_CFA_expression:
	case DW_CFA_val_expression:
		return true;
	}
	return false;
}

/* The instructions that take a register number first: 1 done, 0 not one of them, -EINVAL. */
static int reg_op(struct vm *vm, uint8_t op)
{
	const uint8_t *expr;
	uint64_t reg, len;
	int err;

	if (!takes_reg(op))
		return 0;
	if (leb128_u(&vm->p, vm->end, &reg))
		return -EINVAL;
	switch (op) {
	case DW_CFA_restore_extended: err = restore(vm, reg); break;
	case DW_CFA_undefined: err = set_rule(vm, reg, CFI_UNDEFINED, 0, NULL, 0); break;
	case DW_CFA_same_value: err = set_rule(vm, reg, CFI_SAME, 0, NULL, 0); break;
	case DW_CFA_expression:
	case DW_CFA_val_expression:
		err = read_block(vm, &expr, &len);
		if (!err)
			err = set_rule(vm, reg, op == DW_CFA_expression ? CFI_EXPR : CFI_VAL_EXPR,
				       0, expr, len);
		break;
	default: err = offset_op(vm, op, reg);
	}
	return err ? err : 1;
}

/* DW_CFA_remember_state / restore_state: push or pop the whole rule set (the CFA's too). */
static int state_op(struct vm *vm, uint8_t op)
{
	if (op == DW_CFA_remember_state) {
		if (vm->depth == CFI_STACK_MAX)
			return -EINVAL;
		vm->stack[vm->depth++] = vm->cur;
		return 0;
	}
	if (!vm->depth)
		return -EINVAL;
	vm->cur = vm->stack[--vm->depth];
	return 0;
}

/* Runs one instruction: 1 when it moved the location (a new row), 0 otherwise, or -EINVAL. */
static int step(struct vm *vm)
{
	uint8_t op = *vm->p++;
	uint64_t u;
	int rc;

	switch (op & 0xc0) {
	case DW_CFA_advance_loc: return advance(vm, op & 0x3f);
	case DW_CFA_offset: return offset_op(vm, DW_CFA_offset, op & 0x3f);
	case DW_CFA_restore: return restore(vm, op & 0x3f);
	}
	if ((rc = loc_op(vm, op)))
		return rc;
	if ((rc = cfa_op(vm, op)) || (rc = reg_op(vm, op)))
		return rc < 0 ? rc : 0;
	switch (op) {
	case DW_CFA_nop: return 0;
	case DW_CFA_remember_state: case DW_CFA_restore_state: return state_op(vm, op);
	case DW_CFA_GNU_args_size: return leb128_u(&vm->p, vm->end, &u);
	case DW_CFA_GNU_window_save:
		/* SPARC's register window shorthand (a no-op on AArch64): column 16 at CFA + 0 */
		if (vm->env->machine != EM_AARCH64)
			vm->cur.ra = (struct cfi_reg){ .rule = CFI_OFFSET };
		return 0;
	}
	return -EINVAL;
}

/* Starts a program [p, end) at location loc (init: the CIE's state, NULL for the CIE's own)
 * with the remember_state stack stack. */
static void vm_start(struct vm *vm, const struct cfi_env *env, const struct cfi_cie *cie,
		     const struct cfi_state *init, const uint8_t *p, const uint8_t *end,
		     uint64_t loc, struct cfi_state stack[CFI_STACK_MAX])
{
	*vm = (struct vm){ .env = env, .cie = cie, .init = init, .p = p, .end = end, .loc = loc,
			   .stack = stack };
}

int cfi_cie_state(const struct cfi_env *env, const struct cfi_cie *cie, struct cfi_state *out)
{
	struct cfi_state stack[CFI_STACK_MAX];
	struct vm vm;

	vm_start(&vm, env, cie, NULL, cie->insns, cie->insns_end, 0, stack);
	abi_defaults(env->machine, &vm.cur);
	while (vm.p < vm.end) {
		int rc = step(&vm);
		if (rc < 0)
			return rc;
	}
	*out = vm.cur; /* states still remembered are dropped, as libdw drops them */
	return 0;
}

int cfi_fde_rows(const struct cfi_env *env, const struct cfi_cie *cie,
		 const struct cfi_state *init, const struct cfi_fde *fde, cfi_row_fn fn, void *ctx)
{
	struct cfi_state stack[CFI_STACK_MAX];
	struct vm vm;
	uint64_t pc = fde->start;

	if (pc >= fde->end)
		return 0;
	vm_start(&vm, env, cie, init, fde->insns, fde->insns_end, fde->start, stack);
	vm.cur = *init;
	while (vm.p < vm.end) {
		int rc = step(&vm);
		if (rc < 0)
			return rc;
		/* a row ends where the location first moves past it (libdw: find_pc < loc) */
		if (rc == 0 || vm.loc <= pc)
			continue;
		if ((rc = fn(ctx, pc, &vm.cur)))
			return rc;
		pc = vm.loc;
		if (pc >= fde->end)
			return 0;
	}
	return fn(ctx, pc, &vm.cur);
}
