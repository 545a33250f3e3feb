/* Unwind rows for Go code from Go's own pclntab (lib/elf/gopclntab). Go's linker writes no
 * .eh_frame for Go functions (and -ldflags=-w drops .debug_frame), and Go assembly uses rbp as
 * a general register, so frame pointers lose the callers of crypto/sha256.block and its kind.
 * Go's runtime unwinds from each function's SP-delta table (pcsp; runtime/traceback.go), as
 * the OpenTelemetry profiler does; so do these rows: CFA = rsp + delta + 8, the return address
 * at CFA - 8, and rbp, in a function compiled from Go whose frame is set up (delta >= 8), at
 * CFA - 16 where its prologue saved it (assembly: left as it is, since a PUSHQ there moves SP
 * without saving rbp; its Go caller's row recovers rbp). The runtime's outermost functions (goexit, mstart, rt0_go, and any flagged
 * TOPFRAME) end a stack; the stack switchers (mcall, systemstack, morestack) stop it as
 * UNSUPPORTED: their callers are on another stack. */
#ifndef FIRN_UNWIND_GO_H
#define FIRN_UNWIND_GO_H

#include <linux/types.h>
#include <stdint.h>

#include "../../bpf/firn.h"
#include "elf/gopclntab.h"
#include "unwind/unwind_table.h"

/* The row for the run of fn's pcsp table from pc on, where SP lies delta bytes below its value
 * at entry: CFA_RSP; END; UNSUPPORTED for the stack switchers and a negative delta; GAP (frame
 * pointers) for a CFA offset beyond 16 bits (main.main's 80 KiB of arrays, runtime.callN). */
void unwind_go_row(const struct gopclntab_fn *fn, uint64_t pc, int32_t delta, struct firn_row *r);

/* The rows of g's functions in address order, each function's pcsp runs then (where the next
 * function does not start there) a GAP at its end; a function whose table is missing or
 * malformed is one GAP row (frame pointers, as before). Stops at the first function beyond
 * 4 GiB or out of order. *rows (owned by the caller, free()) and *n; 0 or -ENOMEM. */
int unwind_go_rows(const struct gopclntab *g, struct firn_row **rows, uint32_t *n);

/* Adds to t, built from the file's .eh_frame or empty, the rows of the Go functions of the ELF
 * file open on fd (the caller keeps fd) where t has none: in its gaps, before and after its
 * rows. Returns 0 when rows were added (t's by_type recounted), -ENOENT when the file has no
 * pclntab, or none of x86-64 (t unchanged), -ENOMEM. */
int unwind_go_add(struct unwind_table *t, int fd);

#endif
