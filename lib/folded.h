/* flamegraph.pl "folded stacks" text: one line per stack, frames root first joined by ';', then
 * a space and the count ("main;run;work 42"). Kernel frames carry the suffix "_[k]", JIT frames
 * "_[j]", inlined frames "_[i]", as stackcollapse-perf.pl writes them. */
#ifndef FIRN_FOLDED_H
#define FIRN_FOLDED_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "profile.h"

struct folded_opts {
	bool comm_first;      /* first frame: the sample's "comm" label ("[unknown]" without one) */
	bool pid;             /* with comm_first: "comm-PID" from the numeric "pid" label */
	bool tid;             /* with comm_first: "comm-PID/TID" from "pid" and "tid" */
	bool annotate_inline; /* suffix inlined frames with "_[i]" (they are written either way) */
	bool no_kernel;       /* leave kernel frames (and frames inlined into them) out */
	uint32_t value_index; /* which sample value to count (see profile_value_index) */
};

/* Writes p as folded stacks: lines with the same text are merged, lines are sorted by stack
 * text (byte order, as LC_ALL=C sort does) and lines whose total is not positive are left out.
 * Characters that would break the format are replaced in names: ';' by ':', newlines by ' ';
 * other control characters, which a terminal would obey, are escaped ("\x1b", escape_char).
 * Returns 0, -EINVAL for a value_index out of range, -ENOMEM, or -EIO on a write error. */
int folded_write(struct profile *p, FILE *f, const struct folded_opts *o);

#define FOLDED_MAX_LINE (64u << 20) /* longest line folded_read parses (64 MiB) */

struct folded_stats {
	uint64_t lines;     /* non-blank lines read */
	uint64_t bad_lines; /* lines that did not parse (no count, empty stack, negative count...) */
	uint64_t samples;   /* sum of the counts of the good lines (at most INT64_MAX) */
	uint64_t line;      /* lines read (1-based number of the last); on failure, where it stopped */
};

/* Reads folded stacks from f into p, which must be freshly profile_init'ed: one sample type
 * "samples"/"count"; a decimal count is rounded. Frames ending in "_[k]" become kernel
 * locations (mapping "[kernel.kallsyms]"), "_[j]" JIT locations (mapping "[jit]"); a run of
 * "_[i]" frames becomes inline lines of the location of the frame before it (a leading one, a
 * FRAME_INLINE location of its own); other frames are user frames without a mapping. Streams
 * line by line. Bad lines are counted in st (may be NULL), not fatal; a line longer than
 * FOLDED_MAX_LINE bytes is a bad line, read without being held in memory. Returns 0, -EINVAL at
 * a NUL byte (text has none: binary data, /dev/zero), -EOVERFLOW when the counts sum past
 * INT64_MAX (st->line is the line whose count did it; no sum over samples can overflow after a
 * successful read), -ENOMEM or -EIO on a read error. */
int folded_read(struct profile *p, FILE *f, struct folded_stats *st);

#endif
