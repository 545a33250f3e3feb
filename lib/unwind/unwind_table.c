/* .eh_frame → sorted unwind rows: each FDE's CFI program run once (lib/elf/cfi.c); libdw walks the
 * section's entries. The former builder, libdw's interpreter asked row by row, is kept as the
 * reference the tests compare against (unwind_table_build_libdw): the rows are the same for
 * every executable and library here; they differ for FDEs that overlap (relocatable objects,
 * never mapped), where libdw's answer depends on which FDEs it has already looked up. */
#include "unwind/unwind_table.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "elf/cfi.h"
#include "elf/elffile.h"
#include "base/leb128.h"
#include "unwind/unwind_go.h"
#include "base/vec.h"

#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16

/* An FDE's code range, its instructions (NULL: an FDE libdw refuses) and its CIE (index). */
struct fde_range {
	uint64_t start, end;
	const uint8_t *insns, *insns_end;
	uint32_t cie;
};

/* A CIE, by section offset: its pointer encoding ('R' augmentation), what its FDEs' programs
 * need, and the state its initial instructions leave (state: 0 not run yet, 1 run, -1 invalid). */
struct cie_enc {
	uint64_t off;
	uint8_t enc;
	bool sized, signal; /* 'z': FDEs carry augmentation data; 'S': a signal frame */
	int state;
	struct cfi_cie cie;
	struct cfi_state init;
};

struct builder {
	struct unwind_table *t;
	struct fde_range *fdes;
	size_t nfdes, cap_fdes;
	struct cie_enc *cies;
	size_t ncies, cap_cies;
	uint64_t sh_addr;        /* .eh_frame's address, for pc-relative pointers */
	const uint8_t *sec;      /* its bytes */
	size_t sec_len;
	struct cfi_env env;
};

/* One rule for a row vector: coalesce what the last row already says. */
int unwind_rows_append(struct firn_row **rows, uint32_t *n, uint32_t *cap, const struct firn_row *r)
{
	if (*n) {
		struct firn_row *last = &(*rows)[*n - 1];
		if (last->type == r->type && last->cfa_off == r->cfa_off &&
		    last->rbp_off8 == r->rbp_off8)
			return 0; /* same rule continues: one row covers both ranges */
		if (last->pc == r->pc) {
			*last = *r; /* an empty range (a gap marker overwritten by an FDE) */
			return 0;
		}
	}
	if (VEC_GROW(*rows, *cap, (size_t)*n + 1))
		return -ENOMEM;
	(*rows)[(*n)++] = *r;
	return 0;
}

/* A row of an FDE, unless an earlier overlapping FDE already covers its pc (the first one wins). */
static int push_row(struct unwind_table *t, const struct firn_row *r)
{
	if (t->n && r->pc < t->rows[t->n - 1].pc)
		return 0; /* inside an earlier, overlapping FDE: the first one wins */
	return unwind_rows_append(&t->rows, &t->n, &t->cap, r);
}

/* Reads a pointer in DW_EH_PE encoding enc at p (bounded by end); 0 or -EINVAL. */
static int read_encoded(const uint8_t *p, const uint8_t *end, uint8_t enc, uint64_t pcrel_base,
			uint64_t *out)
{
	uint64_t v;
	size_t size;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: case DW_EH_PE_udata8: case DW_EH_PE_sdata8: size = 8; break;
	case DW_EH_PE_udata4: case DW_EH_PE_sdata4: size = 4; break;
	case DW_EH_PE_udata2: case DW_EH_PE_sdata2: size = 2; break;
	default: return -EINVAL;
	}
	if (p + size > end)
		return -EINVAL;
	if (size == 8)
		memcpy(&v, p, 8);
	else if (size == 4) {
		uint32_t u;
		memcpy(&u, p, 4);
		v = (enc & 0x0f) == DW_EH_PE_sdata4 ? (uint64_t)(int64_t)(int32_t)u : u;
	} else {
		uint16_t u;
		memcpy(&u, p, 2);
		v = (enc & 0x0f) == DW_EH_PE_sdata2 ? (uint64_t)(int64_t)(int16_t)u : u;
	}
	if ((enc & 0x70) == DW_EH_PE_pcrel)
		v += pcrel_base;
	else if ((enc & 0x70) != 0)
		return -EINVAL; /* datarel, textrel, funcrel: not used in .eh_frame FDEs */
	*out = v;
	return 0;
}

/* The FDE pointer encoding of a CIE: the 'R' entry of its augmentation data. */
static uint8_t cie_encoding(const Dwarf_CIE *cie)
{
	const char *aug = cie->augmentation;
	const uint8_t *d = cie->augmentation_data;
	size_t left = cie->augmentation_data_size;

	if (!aug || aug[0] != 'z' || !d)
		return DW_EH_PE_absptr;
	for (const char *c = aug + 1; *c && left; c++) {
		if (*c == 'R')
			return *d;
		if (*c == 'L') {
			d++, left--;
		} else if (*c == 'P') {
			uint8_t enc = *d;
			size_t sz = (enc & 0x0f) == DW_EH_PE_udata4 || (enc & 0x0f) == DW_EH_PE_sdata4 ? 4
				    : (enc & 0x0f) == DW_EH_PE_udata2 || (enc & 0x0f) == DW_EH_PE_sdata2 ? 2 : 8;
			if (left < sz + 1)
				break;
			d += sz + 1, left -= sz + 1;
		} else if (*c != 'S' && *c != 'B') {
			break;
		}
	}
	return DW_EH_PE_absptr;
}

/* True when libdw marks the CIE's FDEs as signal frames: an 'S' before the first letter it
 * does not know (with 'z', unknown letters are skipped). */
static bool cie_signal(const char *aug)
{
	bool sized = false;

	for (const char *c = aug; c && *c; c++) {
		if (*c == 'z')
			sized = true;
		else if (*c == 'S')
			return true;
		else if (*c != 'L' && *c != 'R' && *c != 'P' && !sized)
			break;
	}
	return false;
}

/* Records a CIE: its encoding, and what running its FDEs' programs takes. */
static int add_cie(struct builder *b, uint64_t off, const Dwarf_CIE *c)
{
	uint8_t enc = cie_encoding(c);
	uint8_t fde_enc = enc; /* libdw reads absolute pointers as the ELF class's size */

	if ((enc & 0x0f) == DW_EH_PE_absptr)
		fde_enc |= b->env.elf32 ? DW_EH_PE_udata4 : DW_EH_PE_udata8;
	if (VEC_GROW(b->cies, b->cap_cies, b->ncies + 1))
		return -ENOMEM;
	b->cies[b->ncies++] = (struct cie_enc){
		.off = off, .enc = enc,
		.sized = c->augmentation && c->augmentation[0] == 'z',
		.signal = cie_signal(c->augmentation),
		.cie = { .code_align = c->code_alignment_factor,
			 .data_align = c->data_alignment_factor,
			 .insns = c->initial_instructions,
			 .insns_end = c->initial_instructions_end,
			 .fde_enc = fde_enc },
	};
	return 0;
}

/* The index of the CIE at section offset off, or -1. */
static int64_t find_cie(const struct builder *b, uint64_t off)
{
	for (size_t i = b->ncies; i-- > 0;)
		if (b->cies[i].off == off)
			return (int64_t)i;
	return -1;
}

/* Where an FDE's instructions start, past its pointers of sz bytes each and (with 'z') its
 * augmentation data; NULL when that data overruns the entry (libdw refuses the FDE). */
static const uint8_t *fde_insns(const struct cie_enc *c, const Dwarf_FDE *fde, size_t sz)
{
	const uint8_t *p = fde->start + 2 * sz;
	uint64_t len;

	if (p > fde->end)
		return NULL;
	if (!c->sized)
		return p;
	if (leb128_u(&p, fde->end, &len) || len > (uint64_t)(fde->end - p))
		return NULL;
	return p + len;
}

/* Records an FDE's [start, end) from its encoded initial location and range. */
static int add_fde(struct builder *b, const Dwarf_FDE *fde)
{
	int64_t ci = find_cie(b, fde->CIE_pointer);
	uint64_t start, range;

	if (ci < 0 || fde->start < b->sec || fde->start >= b->sec + b->sec_len)
		return 0; /* unusable entry: skipped */
	uint8_t enc = b->cies[ci].enc;
	uint64_t base = b->sh_addr + (fde->start - b->sec);
	const uint8_t *end = b->sec + b->sec_len;
	size_t sz = (enc & 0x0f) == DW_EH_PE_udata4 || (enc & 0x0f) == DW_EH_PE_sdata4 ? 4
		    : (enc & 0x0f) == DW_EH_PE_udata2 || (enc & 0x0f) == DW_EH_PE_sdata2 ? 2 : 8;
	if (read_encoded(fde->start, end, enc, base, &start) ||
	    read_encoded(fde->start + sz, end, enc & 0x0f, 0, &range) || !range)
		return 0;
	if (VEC_GROW(b->fdes, b->cap_fdes, b->nfdes + 1))
		return -ENOMEM;
	b->fdes[b->nfdes++] = (struct fde_range){ start, start + range,
						  fde_insns(&b->cies[ci], fde, sz), fde->end,
						  (uint32_t)ci };
	return 0;
}

/* Walks .eh_frame's CIEs and FDEs, collecting FDE ranges. */
static int collect_fdes(struct builder *b, Elf *elf, Elf_Data *data)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;

	for (;;) {
		int rc = dwarf_next_cfi(ident, data, true, off, &next, &e);
		if (rc > 0)
			break;
		if (rc < 0) {
			if (next == (Dwarf_Off)-1 || next <= off)
				break;
			off = next;
			continue;
		}
		int err = dwarf_cfi_cie_p(&e) ? add_cie(b, off, &e.cie) : add_fde(b, &e.fde);
		if (err)
			return err;
		off = next;
	}
	return 0;
}

static bool is_op(const Dwarf_Op *op, uint8_t atom)
{
	return op->atom == atom;
}

/* The PLT's CFA expression: breg7 N; breg16 0; lit15; and; litT; ge; lit3; shl; plus. */
static bool plt_expression(const Dwarf_Op *o, size_t n, struct firn_row *r)
{
	if (n != 9 || !is_op(&o[0], DW_OP_breg7) || !is_op(&o[1], DW_OP_breg16) ||
	    !is_op(&o[2], DW_OP_lit15) || !is_op(&o[3], DW_OP_and) || o[4].atom < DW_OP_lit0 ||
	    o[4].atom > DW_OP_lit15 || !is_op(&o[5], DW_OP_ge) || !is_op(&o[6], DW_OP_lit3) ||
	    !is_op(&o[7], DW_OP_shl) || !is_op(&o[8], DW_OP_plus))
		return false;
	if ((int64_t)o[0].number < INT16_MIN || (int64_t)o[0].number > INT16_MAX)
		return false;
	r->type = FIRN_ROW_PLT;
	r->cfa_off = (int16_t)o[0].number;
	r->rbp_off8 = o[4].atom - DW_OP_lit0; /* the threshold on rip & 15 */
	return true;
}

/* Fills the CFA rule of r from the frame; false when it cannot be expressed. */
static bool cfa_rule(Dwarf_Frame *f, struct firn_row *r)
{
	Dwarf_Op *ops;
	size_t n;

	if (dwarf_frame_cfa(f, &ops, &n) || n == 0)
		return false;
	if (n == 1) {
		int reg = -1;
		int64_t off = 0;
		if (ops[0].atom == DW_OP_bregx)
			reg = ops[0].number, off = (int64_t)ops[0].number2;
		else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31)
			reg = ops[0].atom - DW_OP_breg0, off = (int64_t)ops[0].number;
		if ((reg != REG_RSP && reg != REG_RBP) || off < INT16_MIN || off > INT16_MAX)
			return false;
		r->type = reg == REG_RSP ? FIRN_ROW_CFA_RSP : FIRN_ROW_CFA_RBP;
		r->cfa_off = off;
		return true;
	}
	return plt_expression(ops, n, r);
}

/* True when register reg is saved at CFA + off (*off set). */
static bool saved_at_cfa(const Dwarf_Op *ops, size_t n, int64_t *off)
{
	if (n == 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		*off = 0;
		return true;
	}
	if (n == 2 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	return false;
}

/* Starts the row at pc, the same for both deciders (frame_row, unwind_table_row): empty, or a
 * signal frame's, which says no more. True when that is all. */
static bool row_start(struct firn_row *r, uint64_t pc, bool signal)
{
	memset(r, 0, sizeof(*r));
	r->pc = pc;
	if (signal)
		r->type = FIRN_ROW_SIGNAL;
	return signal;
}

/* Converts the frame state at one pc into a row. */
static void frame_row(Dwarf_Frame *f, uint64_t pc, bool signal, struct firn_row *r)
{
	Dwarf_Op mem[3], *ops;
	size_t n;
	int64_t off;

	if (row_start(r, pc, signal))
		return;
	if (dwarf_frame_register(f, REG_RA, mem, &ops, &n) == 0 && n == 0 && ops) {
		r->type = FIRN_ROW_END;
		return;
	}
	if (!cfa_rule(f, r) || !(n && saved_at_cfa(ops, n, &off) && off == -8)) {
		r->type = FIRN_ROW_UNSUPPORTED;
		r->cfa_off = 0;
		r->rbp_off8 = 0;
		return;
	}
	/* rbp saved at CFA + off (a multiple of 8, within reach); anything else leaves it as is */
	if (r->type != FIRN_ROW_PLT && !dwarf_frame_register(f, REG_RBP, mem, &ops, &n) && n &&
	    saved_at_cfa(ops, n, &off) && off && off % 8 == 0 && off / 8 >= INT8_MIN &&
	    off / 8 <= INT8_MAX)
		r->rbp_off8 = off / 8;
}

/* The reference: emits the rows of one FDE's range, asking libdw for each row (which finds the
 * FDE and runs its program from the start again), then a gap marker at its end. */
static int fde_rows_libdw(struct builder *b, Dwarf_CFI *cfi, const struct fde_range *fr)
{
	uint64_t pc = fr->start;
	struct firn_row r;
	int err;

	while (pc < fr->end) {
		Dwarf_Frame *f;
		Dwarf_Addr s, e;
		bool signal = false;
		if (dwarf_cfi_addrframe(cfi, pc, &f))
			break;
		dwarf_frame_info(f, &s, &e, &signal);
		frame_row(f, pc, signal, &r);
		free(f);
		if ((err = push_row(b->t, &r)))
			return err;
		b->t->by_type[r.type & 7]++;
		if (e <= pc)
			break;
		pc = e;
	}
	memset(&r, 0, sizeof(r));
	r.pc = fr->end;
	r.type = FIRN_ROW_GAP;
	return push_row(b->t, &r);
}

/* True when the return address reads as undefined through libdw (no ops in the caller's
 * buffer): undefined, never mentioned, or an empty expression. */
static bool ra_undefined(const struct cfi_reg *ra)
{
	return ra->rule == CFI_UNDEFINED || ra->rule == CFI_UNSPECIFIED ||
	       ((ra->rule == CFI_EXPR || ra->rule == CFI_VAL_EXPR) && !ra->len);
}

/* True when the register is saved at CFA + *off: an offset rule, or the expression
 * "plus_uconst N" (libdw: call_frame_cfa; plus_uconst N). */
static bool reg_at_cfa(const struct cfi_reg *r, int64_t *off)
{
	const uint8_t *p, *end;
	uint64_t v;

	if (r->rule == CFI_OFFSET) {
		*off = r->value;
		return true;
	}
	if (r->rule != CFI_EXPR || !r->len || r->expr[0] != DW_OP_plus_uconst)
		return false;
	p = r->expr + 1, end = r->expr + r->len;
	if (leb128_u(&p, end, &v) || p != end)
		return false;
	*off = (int64_t)v;
	return true;
}

/* A CFA of register reg + off as a row; false unless rsp or rbp and a 16-bit offset. */
static bool cfa_reg_row(int reg, int64_t off, struct firn_row *r)
{
	if ((reg != REG_RSP && reg != REG_RBP) || off < INT16_MIN || off > INT16_MAX)
		return false;
	r->type = reg == REG_RSP ? FIRN_ROW_CFA_RSP : FIRN_ROW_CFA_RBP;
	r->cfa_off = off;
	return true;
}

/* The PLT's CFA expression (see plt_expression) in bytes: exactly those nine operations. */
static bool plt_bytes(const uint8_t *p, const uint8_t *end, struct firn_row *r)
{
	int64_t off, any;

	if (p == end || *p++ != DW_OP_breg7 || leb128_s(&p, end, &off) || p == end ||
	    *p++ != DW_OP_breg16 || leb128_s(&p, end, &any) || end - p != 7)
		return false;
	if (p[0] != DW_OP_lit15 || p[1] != DW_OP_and || p[2] < DW_OP_lit0 || p[2] > DW_OP_lit15 ||
	    p[3] != DW_OP_ge || p[4] != DW_OP_lit3 || p[5] != DW_OP_shl || p[6] != DW_OP_plus ||
	    off < INT16_MIN || off > INT16_MAX)
		return false;
	r->type = FIRN_ROW_PLT;
	r->cfa_off = (int16_t)off;
	r->rbp_off8 = p[2] - DW_OP_lit0; /* the threshold on rip & 15 */
	return true;
}

/* A CFA expression as a row: one breg/bregx operation (as an offset rule), or the PLT's. */
static bool cfa_expr_row(const uint8_t *p, uint64_t len, struct firn_row *r)
{
	const uint8_t *end, *q;
	uint64_t reg;
	int64_t off;

	if (!len)
		return false;
	end = p + len, q = p + 1;
	if (p[0] >= DW_OP_breg0 && p[0] <= DW_OP_breg31 && !leb128_s(&q, end, &off) && q == end)
		return cfa_reg_row(p[0] - DW_OP_breg0, off, r);
	q = p + 1;
	if (p[0] == DW_OP_bregx && !leb128_u(&q, end, &reg) && q < end &&
	    !leb128_s(&q, end, &off) && q == end)
		return cfa_reg_row((int)reg, off, r);
	return plt_bytes(p, end, r);
}

/* Decides as frame_row decides from libdw's answers. */
void unwind_table_row(const struct cfi_state *s, uint64_t pc, bool signal, struct firn_row *r)
{
	int64_t off;
	bool cfa;

	if (row_start(r, pc, signal))
		return;
	if (ra_undefined(&s->ra)) {
		r->type = FIRN_ROW_END;
		return;
	}
	cfa = s->cfa == CFI_CFA_OFFSET ? cfa_reg_row((int)s->cfa_reg, (int64_t)s->cfa_off, r)
	      : s->cfa == CFI_CFA_EXPR ? cfa_expr_row(s->cfa_expr, s->cfa_len, r) : false;
	if (!cfa || !reg_at_cfa(&s->ra, &off) || off != -8) {
		r->type = FIRN_ROW_UNSUPPORTED;
		r->cfa_off = 0;
		r->rbp_off8 = 0;
		return;
	}
	if (r->type != FIRN_ROW_PLT && reg_at_cfa(&s->rbp, &off) && off && off % 8 == 0 &&
	    off / 8 >= INT8_MIN && off / 8 <= INT8_MAX)
		r->rbp_off8 = off / 8;
}

/* Rows of one FDE being made: the builder and whether its CIE marks a signal frame. */
struct fde_run {
	struct builder *b;
	bool signal;
};

/* cfi_fde_rows's callback: one row into the table. */
static int push_state(void *ctx, uint64_t pc, const struct cfi_state *s)
{
	struct fde_run *run = ctx;
	struct firn_row r;
	int err;

	unwind_table_row(s, pc, run->signal, &r);
	if ((err = push_row(run->b->t, &r)))
		return err;
	run->b->t->by_type[r.type & 7]++;
	return 0;
}

/* The state a CIE's initial instructions leave, run once per CIE; NULL when invalid. */
static const struct cfi_state *cie_state(struct builder *b, struct cie_enc *c)
{
	if (!c->state)
		c->state = cfi_cie_state(&b->env, &c->cie, &c->init) ? -1 : 1;
	return c->state > 0 ? &c->init : NULL;
}

/* Emits the rows of one FDE's range, running its program once, then a gap marker at its end. */
static int fde_rows(struct builder *b, const struct fde_range *fr)
{
	struct cie_enc *c = &b->cies[fr->cie];
	const struct cfi_state *init = fr->insns ? cie_state(b, c) : NULL;
	struct fde_run run = { b, c->signal };
	struct firn_row r;

	if (init) {
		struct cfi_fde fde = { fr->start, fr->end, fr->insns, fr->insns_end };
		int err = cfi_fde_rows(&b->env, &c->cie, init, &fde, push_state, &run);
		/* an invalid program ends its rows where it fails, as in libdw */
		if (err && err != -EINVAL)
			return err;
	}
	memset(&r, 0, sizeof(r));
	r.pc = fr->end;
	r.type = FIRN_ROW_GAP;
	return push_row(b->t, &r);
}

static int cmp_fde(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;

	return CMP3(x->start, y->start);
}

/* Finds .eh_frame: its data and address. */
static Elf_Data *find_eh_frame(Elf *elf, uint64_t *addr)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elffile_next(elf, NULL, ".eh_frame", SHT_PROGBITS, &sh);

	if (!scn)
		return NULL;
	*addr = sh.sh_addr;
	return elf_getdata(scn, NULL);
}

/* Builds rows for every FDE, in address order (cfi: libdw's, for the reference; else NULL). */
static int build_rows(struct builder *b, Dwarf_CFI *cfi)
{
	int err = 0;

	if (b->nfdes)
		qsort(b->fdes, b->nfdes, sizeof(*b->fdes), cmp_fde);
	for (size_t i = 0; i < b->nfdes && !err; i++) {
		if (b->fdes[i].end > UINT32_MAX) {
			err = -EFBIG;
			break;
		}
		err = cfi ? fde_rows_libdw(b, cfi, &b->fdes[i]) : fde_rows(b, &b->fdes[i]);
	}
	b->t->fdes = b->nfdes;
	return err;
}

/* build_rows through libdw's interpreter, row by row: the reference. */
static int build_rows_libdw(struct builder *b, Elf *elf)
{
	Dwarf_CFI *cfi = dwarf_getcfi_elf(elf);

	if (!cfi)
		return -ENODATA;
	int err = build_rows(b, cfi);
	dwarf_cfi_end(cfi);
	return err;
}

/* Keeps the executable PT_LOAD segments (for address → ELF vaddr conversion). */
static void read_segments(struct unwind_table *t, Elf *elf)
{
	size_t n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return;
	for (size_t i = 0; i < n && t->nsegs < 4; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		t->segs[t->nsegs].offset = ph.p_offset;
		t->segs[t->nsegs].filesz = ph.p_filesz;
		t->segs[t->nsegs].delta = (int64_t)(ph.p_vaddr - ph.p_offset);
		t->nsegs++;
	}
}

bool unwind_table_delta(const struct unwind_table *t, uint64_t off, int64_t *delta)
{
	for (uint32_t i = 0; i < t->nsegs; i++) {
		/* mappings start at page boundaries below the segment's offset */
		uint64_t lo = t->segs[i].offset & ~0xfffULL;
		if (off >= lo && off < t->segs[i].offset + t->segs[i].filesz) {
			*delta = t->segs[i].delta;
			return true;
		}
	}
	return false;
}

/* build_rows running each FDE's program once; -ENODATA where libdw finds no CFI (a bad
 * .eh_frame_hdr, say), as the reference does. */
static int build_rows_cfi(struct builder *b, Elf *elf)
{
	Dwarf_CFI *cfi = dwarf_getcfi_elf(elf);

	if (!cfi)
		return -ENODATA;
	dwarf_cfi_end(cfi);
	return build_rows(b, NULL);
}

/* The table's rows with the Go functions' added from the file's pclntab (lib/unwind/unwind_go.h)
 * where the CFI has none: err, the CFI's outcome, unless Go rows were added (0) or failed. */
static int with_go(struct unwind_table *t, int fd, int err)
{
	int gerr = err && err != -ENODATA ? -ENOENT : unwind_go_add(t, fd);

	return gerr == -ENOENT ? err : gerr;
}

/* The builder behind both entry points (libdw: the reference's row source). */
static int build(struct unwind_table *t, int fd, bool libdw)
{
	struct builder b = { .t = t };
	GElf_Ehdr eh;
	int err;

	memset(t, 0, sizeof(*t));
	struct elffile ef;
	if (elffile_open_fd(&ef, fd, ELFFILE_MAPPED))
		return -ENOEXEC;
	Elf *elf = ef.elf;
	read_segments(t, elf);
	Elf_Data *data = find_eh_frame(elf, &b.sh_addr);
	if (!data || !data->d_buf || !data->d_size || !gelf_getehdr(elf, &eh)) {
		elffile_close(&ef);
		return with_go(t, fd, -ENODATA);
	}
	b.sec = data->d_buf;
	b.sec_len = data->d_size;
	b.env = (struct cfi_env){ .sec = b.sec, .sec_len = b.sec_len, .sec_addr = b.sh_addr,
				  .machine = eh.e_machine,
				  .elf32 = eh.e_ident[EI_CLASS] == ELFCLASS32 };
	err = collect_fdes(&b, elf, data);
	if (!err)
		err = libdw ? build_rows_libdw(&b, elf) : build_rows_cfi(&b, elf);
	free(b.fdes);
	free(b.cies);
	elffile_close(&ef);
	err = with_go(t, fd, err);
	if (err)
		unwind_table_release(t);
	return err;
}

int unwind_table_build(struct unwind_table *t, int fd)
{
	return build(t, fd, false);
}

int unwind_table_build_libdw(struct unwind_table *t, int fd)
{
	return build(t, fd, true);
}

void unwind_table_release(struct unwind_table *t)
{
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

int64_t unwind_table_find(const struct unwind_table *t, uint64_t pc)
{
	return (int64_t)UPPER_BOUND(t->rows, t->n, pc, pc) - 1;
}
