/* Unwind tables: an ELF file's .eh_frame CFI turned (lib/elf/cfi.c) into compact sorted rows that
 * the BPF unwinder evaluates (struct firn_row in bpf/firn.h). Gap rows mark ranges no FDE covers;
 * END rows mark outermost frames (return address undefined); rows the unwinder cannot evaluate
 * are kept as UNSUPPORTED so it stops cleanly there, and counted. */
#ifndef FIRN_UNWIND_TABLE_H
#define FIRN_UNWIND_TABLE_H

#include <linux/types.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../bpf/firn.h"
#include "elf/cfi.h"

struct unwind_table {
	struct firn_row *rows; /* sorted by pc; owned */
	uint32_t n, cap;
	/* counts of rows by type (index: enum firn_row_type), and of FDEs read */
	uint32_t by_type[8];
	uint32_t fdes;
	/* executable PT_LOAD segments: file offset → virtual address deltas */
	struct { uint64_t offset, filesz; int64_t delta; } segs[4];
	uint32_t nsegs;
};

/* Builds the table of the ELF file open on fd (fd stays the caller's). Returns 0, -ENOEXEC for a
 * non-ELF, -ENODATA when the file has no .eh_frame (and no Go functions: their rows come from
 * Go's pclntab where no FDE covers them, lib/unwind/unwind_go.h), -EFBIG for addresses beyond
 * 4 GiB, -ENOMEM. */
int unwind_table_build(struct unwind_table *t, int fd);
/* The same table built the former way, asking libdw for every row (slow: each row finds its FDE
 * and runs its program from the start): the reference the tests compare unwind_table_build to. */
int unwind_table_build_libdw(struct unwind_table *t, int fd);
void unwind_table_release(struct unwind_table *t);

/* Appends r to the n rows (cap allocated, in pc order) unless it says what the last one says (that
 * row covers it then); one at the last one's pc replaces it (an empty range). 0, or -ENOMEM (rows
 * unchanged). The FDEs' rows and Go's (lib/unwind/unwind_go.c) both go through it. */
int unwind_rows_append(struct firn_row **rows, uint32_t *n, uint32_t *cap, const struct firn_row *r);

/* The row for the CFI rules s in force from pc (signal: the FDE's CIE marks a signal frame):
 * SIGNAL; END when the return address is undefined; CFA_RSP/CFA_RBP for a CFA of rsp or rbp
 * plus a 16-bit offset (a rule or a one-operation expression), PLT for the PLT's expression, each
 * only with the return address saved at CFA - 8 (and rbp_off8 when rbp is saved at CFA + 8k);
 * UNSUPPORTED otherwise. Reads expressions within their bounds only. */
void unwind_table_row(const struct cfi_state *s, uint64_t pc, bool signal, struct firn_row *r);

/* vaddr - file offset for the executable segment holding file offset off; false if none. */
bool unwind_table_delta(const struct unwind_table *t, uint64_t off, int64_t *delta);

/* Index of the row covering pc (the last row with row.pc <= pc), or -1. */
int64_t unwind_table_find(const struct unwind_table *t, uint64_t pc);

#endif
