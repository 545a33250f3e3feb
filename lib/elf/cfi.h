/* CFI programs (DWARF call frame instructions, .eh_frame): an interpreter that runs a CIE's
 * initial instructions and an FDE's instructions once, from the first to the last, and reports
 * the rules in force over each address range of the FDE — the same ranges and rules libdw
 * (0.188) gives when asked address by address (dwarf_cfi_addrframe), at a fraction of the cost.
 * Kept are only the rules the unwind tables use: the CFA's, rbp's (DWARF register 6) and the
 * return address's (register 16); the others are checked and dropped.
 * Untrusted input: every read is bounds-checked, nothing recurses, the remember_state stack
 * holds at most CFI_STACK_MAX states (one more is an invalid program). */
#ifndef FIRN_CFI_H
#define FIRN_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CFI_STACK_MAX 64
#define CFI_REG_RBP 6
#define CFI_REG_RA 16

enum cfi_cfa_rule { CFI_CFA_UNDEFINED, CFI_CFA_OFFSET, CFI_CFA_EXPR, CFI_CFA_INVALID };

enum cfi_reg_rule {
	CFI_UNSPECIFIED, /* never mentioned: undefined (libdw's x86 backends leave it so) */
	CFI_UNDEFINED,
	CFI_SAME,
	CFI_OFFSET,     /* saved at CFA + value */
	CFI_VAL_OFFSET, /* is CFA + value */
	CFI_REGISTER,   /* in register value */
	CFI_EXPR,       /* saved at the address expr computes (CFA pushed first) */
	CFI_VAL_EXPR,   /* is the value expr computes */
};

/* One register's rule. value is kept as libdw keeps it (61 bits, sign-extended). */
struct cfi_reg {
	uint8_t rule; /* enum cfi_reg_rule */
	int64_t value;
	const uint8_t *expr; /* CFI_EXPR, CFI_VAL_EXPR: the expression's bytes (in the section) */
	uint64_t len;
};

/* The rules in force at an address. CFA_OFFSET: CFA = register cfa_reg + (int64_t)cfa_off;
 * CFA_EXPR: CFA = the value of cfa_expr[0..cfa_len). */
struct cfi_state {
	uint8_t cfa; /* enum cfi_cfa_rule */
	uint64_t cfa_reg, cfa_off;
	const uint8_t *cfa_expr;
	uint64_t cfa_len;
	struct cfi_reg rbp, ra;
};

/* Where the program's bytes live: the section (for DW_CFA_set_loc's pc-relative operands, read
 * as libdw reads them: bounded by the section's end) and the file's machine and class. */
struct cfi_env {
	const uint8_t *sec;
	size_t sec_len;
	uint64_t sec_addr;
	uint16_t machine; /* e_machine: EM_386's defaults, else x86-64's */
	bool elf32;
};

/* Reads a pointer in DW_EH_PE encoding enc from [*p, end): 0 and *p past it, or -EINVAL
 * (truncated, indirect, or an application other than absolute, pc-relative — pc is the address
 * of *p — and data-relative — to datarel). Absolute pointers are elf32 ? 4 : 8 bytes. */
int cfi_pointer(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t pc,
		uint64_t datarel, bool elf32, uint64_t *v);

/* What the interpreter needs of a CIE (libdw's Dwarf_CIE fields; fde_enc: the 'R' encoding). */
struct cfi_cie {
	uint64_t code_align;
	int64_t data_align;
	const uint8_t *insns, *insns_end; /* initial instructions, inside env->sec */
	uint8_t fde_enc;
};

/* An FDE: its code range [start, end) and its instructions, inside env->sec. */
struct cfi_fde {
	uint64_t start, end;
	const uint8_t *insns, *insns_end;
};

/* Called for each row: the rules s hold from pc up to the next row's pc (or the FDE's end).
 * A nonzero return stops the program and is returned by cfi_fde_rows. */
typedef int (*cfi_row_fn)(void *ctx, uint64_t pc, const struct cfi_state *s);

/* The state cie's initial instructions leave, starting from the ABI's defaults for
 * env->machine, into *out. 0, or -EINVAL when they are invalid (an advance, a restore, a
 * truncated or unknown instruction, a register number libdw refuses): libdw then gives no frame
 * for any FDE of the CIE. */
int cfi_cie_state(const struct cfi_env *env, const struct cfi_cie *cie, struct cfi_state *out);

/* Runs fde's program from init (cfi_cie_state's result for its CIE) and calls fn once per row,
 * in address order: the first at fde->start, the next where the location first moves past the
 * previous row's start, up to fde->end. 0 when the program ends or moves past fde->end; -EINVAL
 * at an invalid instruction (the rows before it were reported: libdw fails from there on); or
 * fn's nonzero return. */
int cfi_fde_rows(const struct cfi_env *env, const struct cfi_cie *cie,
		 const struct cfi_state *init, const struct cfi_fde *fde, cfi_row_fn fn, void *ctx);

#endif
