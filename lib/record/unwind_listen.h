/* The DWARF unwinder (lib/unwind/unwind.h) as a process listener (lib/source/procdispatch.h): a process is
 * described to it (its mappings, from the dispatcher's table, else /proc) at its first sample
 * or exec, after its snapshot; code it maps after (dlopen) has its file's table loaded as the
 * record is read, in the order mapped (not -a: there only sampled code is); code met without a
 * table has its file's table built (-a) or the process described again, once for the records
 * read since the last description; an ended process frees its slot.
 * The unwinder and dispatcher are borrowed. */
#ifndef FIRN_UNWIND_LISTEN_H
#define FIRN_UNWIND_LISTEN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "source/procdispatch.h"

struct sampler_stats;
struct unwinder;

struct unwind_listen {
	struct unwinder *unw; /* NULL: frame pointers only (nothing to describe) */
	struct procdispatch *pd;
	bool all;             /* -a: describe lazily, build a file's table when met */
	/* the last description: its process and the records applied by then (none since: the
	 * same description, not made again) */
	pid_t last_pid;
	uint64_t last_records;
};

/* Its listener (ctx: ul; no ops without an unwinder). */
struct procdispatch_listener unwind_listen_ops(struct unwind_listen *ul);
/* Describes pid now (a target added); lazy: only the tables of files sampled code is in. */
void unwind_listen_describe(struct unwind_listen *ul, pid_t pid, bool lazy);
/* Sets st's unwind_* figures from the unwinder's tables (left as they are without one). */
void unwind_listen_stats(const struct unwind_listen *ul, struct sampler_stats *st);

#endif
