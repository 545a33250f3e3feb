/* The one-line summaries record prints on stderr after writing a profile: samples and the file
 * written, USDT hits, off-CPU waits, unwinding, Python frames and GPU kernels. Kept apart from
 * record.c so the command keeps its options and output; tests/cli parse these lines. */
#ifndef FIRN_SUMMARY_H
#define FIRN_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/profile.h"
#include "record/recorder.h"

/* Which of the optional lines to print, and what the events' lines need to know. */
struct summary_opts {
	const char *const *events; /* the -e values (lib/record/event_table.h: each recorded event's line) */
	int nevents;
	long off_cpu_min_us;   /* --off-cpu-min (<= 0: none) */
	long off_cpu_rate;     /* --off-cpu-rate (<= 1: every wait) */
	bool off_cpu_runnable; /* --off-cpu-runnable */
	bool unwind_dwarf;     /* unwinding other than frame pointers: the unwinding line */
	bool gpu;              /* --cuda: the GPU line (its events') */
	bool processes_given;  /* processes counted by the caller (intervals), not from prof */
	uint64_t processes;
	bool pushed;           /* out is the --push URL: bytes went there in pushed_intervals */
	uint64_t pushed_intervals;
};

/* Prints the summary lines of a finished recording to stderr: rec and prof are the recorder and
 * the profile it finished (the Python line and the process count come from them), st its stats,
 * bytes and out what was written where ("-": standard output; so->pushed: what was sent to the
 * URL out). Borrows everything. */
void summary_print(const struct recorder *rec, const struct profile *prof,
		   const struct recorder_stats *st, const struct summary_opts *so, size_t bytes,
		   const char *out);

#endif
