/* flamegraph.pl "folded stacks" text: one line per stack, frames root first joined by ';', then
 * a space and the count ("main;run;work 42"). Kernel frames carry the suffix "_[k]", JIT frames
 * "_[j]", inlined frames "_[i]", as stackcollapse-perf.pl writes them. As in stackcollapse-perf.pl
 * output, the first frame may be the process name ("comm"); firn marks its own such output with
 * the comment line FOLDED_COMM_HEADER so that reading it back needs no option. */
#ifndef FIRN_FOLDED_H
#define FIRN_FOLDED_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model/profile.h"

struct folded_opts {
	bool comm_first;      /* first frame: the sample's "comm" label ("[unknown]" without one) */
	bool comm_header;     /* with comm_first: start with the line FOLDED_COMM_HEADER */
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

/* The first line of folded text whose first frames are process names (see folded_read_comm). */
#define FOLDED_COMM_HEADER "# firn folded stacks: the first frame is the process name"

#define FOLDED_MAX_LINE (64u << 20) /* longest line folded_read parses (64 MiB) */

struct folded_stats {
	uint64_t lines;     /* non-blank lines read */
	uint64_t bad_lines; /* lines that did not parse (no count, empty stack, negative count...) */
	uint64_t samples;   /* sum of the counts of the good lines (at most INT64_MAX) */
	uint64_t line;      /* lines read (1-based number of the last); on failure, where it stopped */
	uint64_t bad_sample, bad_sample_values; /* pprof, on -EPROTO: the sample (1-based) whose
						 * number of values is not the number of types */
};

/* How folded_read_comm reads the first frame of each stack. */
enum folded_comm {
	FOLDED_COMM_AUTO = 0, /* the process name when FOLDED_COMM_HEADER precedes the first stack,
			       * else a function */
	FOLDED_COMM_YES,      /* always the process name (stackcollapse-perf.pl output) */
	FOLDED_COMM_NO,       /* always a function (FOLDED_COMM_HEADER is then just a comment) */
};

/* Reads folded stacks from f into p, which must be freshly profile_init'ed: one sample type
 * "samples"/"count"; a decimal count is rounded. A first frame read as the process name becomes
 * the sample's "comm" label (its text as is, suffix included), not a frame; a stack of that frame
 * alone is a sample without frames. A line starting with '#' that is not a stack is a comment
 * (not counted in st). Frames ending in "_[k]" become kernel
 * locations (mapping "[kernel.kallsyms]"), "_[j]" JIT locations (mapping "[jit]"), after an
 * unnamed first mapping (pprof's main binary, which the kernel is not); a run of
 * "_[i]" frames becomes inline lines of the location of the frame before it (a leading one, a
 * FRAME_INLINE location of its own); other frames are user frames without a mapping. Streams
 * line by line. Bad lines are counted in st (may be NULL), not fatal; a line longer than
 * FOLDED_MAX_LINE bytes is a bad line, read without being held in memory. Returns 0, -EINVAL at
 * a NUL byte (text has none: binary data, /dev/zero), -EOVERFLOW when the counts sum past
 * INT64_MAX (st->line is the line whose count did it; no sum over samples can overflow after a
 * successful read), -ENOMEM or -EIO on a read error. */
int folded_read_comm(struct profile *p, FILE *f, enum folded_comm comm, struct folded_stats *st);

/* folded_read_comm with FOLDED_COMM_AUTO. */
int folded_read(struct profile *p, FILE *f, struct folded_stats *st);

#endif
