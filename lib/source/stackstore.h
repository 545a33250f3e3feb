/* The stack store: the samples a recording holds in user space — stacks (by the transport's
 * id, with the count of entries that use them), entries (counts of a pid, tid, user stack,
 * kernel stack and event), thread names, and the processes that ended — with the policy of
 * letting them go: retire (the entries of ended processes whose samples are all drained are
 * handed out and forgotten, with their names and the stacks only they used), park (the same
 * for live processes, or one process after its exec) and forget. A plain structure with no BPF
 * in it: the BPF sampler (lib/source/sampler.c) fills it from its maps at each drain, a fake sample
 * source (tests/unit/test_recorder.c) from its made-up samples, and tests/unit/test_stackstore.c
 * tests the policy without root.
 *
 * A drain is: for each counted key its stacks (stackstore_has_stack / stackstore_put_stack, each
 * met stack marked seen by it), then stackstore_add; then stackstore_drained. An ended process
 * (stackstore_exit) is retired once a drain has completed after its end. A stack no entry
 * uses is freed once no count that a later drain may bring can name it (not met by the last
 * drain). Pointers handed out by for_each (stacks, names) stay valid until the next retire,
 * park, forget or reset.
 * One thread at a time. */
#ifndef FIRN_STACKSTORE_H
#define FIRN_STACKSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/hashtab.h"
#include "source/sampler.h"

/* What one entry counts (bpf/firn.h's struct firn_key, field for field). */
struct stackstore_key {
	uint32_t pid, tid;
	uint64_t ustack, kstack; /* the transport's stack ids (0: none) */
	uint32_t event, ctx; /* ctx: the label context (bpf/firn.h's FIRN_CTX; 0: none) */
};

struct stackstore_stack {
	uint64_t id;
	uint32_t len, refs; /* refs: entries that use it */
	uint64_t *ips;      /* owned */
	uint64_t seen;      /* the drain that last met it */
};

struct stackstore_entry {
	struct stackstore_key key;
	uint64_t count;
	bool parked; /* handed to a park callback: forgotten after it */
};

struct stackstore_name {
	uint32_t tid;
	bool used; /* false: forgotten (removed by the forget under way) */
	char thread[16], process[16];
};

struct stackstore_exited {
	pid_t pid;
	uint64_t gen; /* the drains completed when it ended */
};

/* Three arrays in the order their elements came (removals keep the order of the rest), each
 * with a hashtab index by key (stack id, entry key, tid), refiled after removals. */
struct stackstore {
	struct stackstore_stack *stacks;
	size_t nstacks, cap_stacks;
	struct hashtab stack_index;
	struct stackstore_entry *entries;
	size_t nentries, cap_entries;
	struct hashtab entry_index;
	struct stackstore_name *names;
	size_t nnames, cap_names;
	struct hashtab name_index;
	struct stackstore_exited *exited; /* ended processes waiting to be retired */
	size_t nexited, cap_exited;
	bool retire;               /* keep ended processes for stackstore_retire */
	uint64_t drains;           /* drains completed */
	uint64_t retired;          /* samples of entries forgotten since the last reset (off-CPU
				    * waits not counted) */
	uint64_t retired_processes;
	uint32_t uncounted_from;   /* events from this one up are not samples (off-CPU, GPU) */
	uint32_t level_from, level_to; /* events whose counts are levels (kept by a reset) */
};

/* retire: ended processes wait for stackstore_retire (else they are not tracked);
 * uncounted_from: the first event id whose counts are no samples (for the stored statistic). */
void stackstore_init(struct stackstore *st, bool retire, uint32_t uncounted_from);
void stackstore_release(struct stackstore *st);
/* A drain completed: the processes that ended before it may be retired. */
void stackstore_drained(struct stackstore *st);
/* Whether stack id is held (id 0: no stack, always true); marks it seen by this drain. */
bool stackstore_has_stack(struct stackstore *st, uint64_t id);
/* Holds stack id (ips copied, len frames), seen by this drain; 0 or -ENOMEM. */
int stackstore_put_stack(struct stackstore *st, uint64_t id, const uint64_t *ips, uint32_t len);
/* The held stack id (NULL: none). */
const struct stackstore_stack *stackstore_stack(const struct stackstore *st, uint64_t id);
/* Adds count to k's entry (its stacks must be held); 1 when the entry is new, 0, or -ENOMEM. */
int stackstore_add(struct stackstore *st, const struct stackstore_key *k, uint64_t count);
/* Sets the names of thread tid (and of its process, as the thread sees it). 0 or -ENOMEM. */
int stackstore_set_name(struct stackstore *st, uint32_t tid, const char *thread,
			const char *process);
/* pid ended (now, in the drain under way): it is retired after the next complete drain. */
void stackstore_exit(struct stackstore *st, pid_t pid);
bool stackstore_has_exited(const struct stackstore *st, pid_t pid);
/* Calls fn for every entry, in the order the entries were first added (stops early at fn's
 * non-zero, returned). */
int stackstore_for_each(struct stackstore *st,
			int (*fn)(void *ctx, const struct sampler_entry *e), void *ctx);
/* As sampler_retire, sampler_park_live and sampler_park_process (lib/source/sampler.h), which are
 * these. batch: retire only once this many ended processes are ready or one has waited
 * wait_drains drains (forgetting rebuilds the tables); 0: at once. */
int stackstore_retire(struct stackstore *st, const struct sampler_retire_ops *ops, size_t batch,
		      uint64_t wait_drains);
int stackstore_park_live(struct stackstore *st, const struct sampler_retire_ops *ops);
int stackstore_park_process(struct stackstore *st, pid_t pid,
			    const struct sampler_retire_ops *ops);
/* The events from..to (inclusive) count levels, not tallies: what is live now (-e alloc's
 * inuse_*, an allocation's bytes less its free's), which a reset keeps. None by default. */
void stackstore_set_levels(struct stackstore *st, uint32_t from, uint32_t to);
/* Forgets every entry's counts (sampler_reset_counts) but the levels' that are not 0, and the
 * stacks only the forgotten used that the last drain did not meet; the stored statistic
 * (retired too) starts again from 0. */
void stackstore_reset_counts(struct stackstore *st);
/* Samples held now plus those forgotten (the stored statistic). */
uint64_t stackstore_stored(const struct stackstore *st);

#endif
