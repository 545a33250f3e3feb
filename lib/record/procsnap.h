/* The symbolizer's snapshots as a process listener (lib/source/procdispatch.h): a process is
 * snapshotted at its first sample (from the process table, or /proc without side-band records),
 * its snapshot follows what it maps later, and a snapshotted process that calls exec keeps its
 * old image's snapshot until the samples it took before are parked with it (the recorder's
 * handle_execs: procsnap_take_execs, then procsnap_install each); a process first sampled just
 * after its exec starts with its image before it. JIT processes have their perf maps opened
 * while they live.
 * Ownership: the symbolizer and dispatcher are borrowed; the pending snapshots are owned. */
#ifndef FIRN_PROCSNAP_H
#define FIRN_PROCSNAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "source/procdispatch.h"

struct symbolizer;
struct symbolizer_snapshot;

/* A known process that called exec: its new image's snapshot waits until the samples it took
 * before are symbolized with the old one. */
struct pending_exec {
	pid_t pid;
	struct symbolizer_snapshot *next; /* NULL when it could not be taken (yet) */
	uint64_t exec_ns; /* when it called exec, or later (CLOCK_MONOTONIC) */
};

/* Whether pid was snapshotted ahead (by the USDT/CUDA attachment) and is first seen now. */
typedef bool procsnap_announced_fn(void *ctx, pid_t pid);

struct procsnap {
	struct symbolizer *sym;
	struct procdispatch *pd;
	procsnap_announced_fn *announced; /* may be NULL */
	void *ctx;
	struct pending_exec *execs;    /* queued */
	size_t nexecs, cap_execs;
	struct pending_exec *handling; /* taken by procsnap_take_execs, not yet ended */
	size_t nhandling;
	uint64_t first_exec_ns;        /* when the oldest of execs was queued */
	pid_t *dirty;                  /* processes whose mappings changed since their snapshot */
	size_t ndirty, cap_dirty;
};

void procsnap_init(struct procsnap *ps, struct symbolizer *sym, struct procdispatch *pd,
		   procsnap_announced_fn *announced, void *ctx);
void procsnap_release(struct procsnap *ps);
/* Its listener (ctx: ps), for procdispatch_listen. */
struct procdispatch_listener procsnap_listener(struct procsnap *ps);
/* Whether pid has an exec pending (queued or being handled): its old snapshot is in place. */
bool procsnap_exec_pending(const struct procsnap *ps, pid_t pid);
/* Whether every queued exec happened before flip_ns (every sample before them is drained). */
bool procsnap_execs_before(const struct procsnap *ps, uint64_t flip_ns);
/* Takes the queued execs over for handling (*n of them; execs queued meanwhile wait for the
 * next take); NULL when none. */
struct pending_exec *procsnap_take_execs(struct procsnap *ps, size_t *n);
/* Installs the image of a handled exec: the table's, else a snapshot taken now and again later. */
void procsnap_install(struct procsnap *ps, struct pending_exec *x);
struct sampler_entry;
/* Before a cut: a process of the entries (for_each over src) whose second snapshot is not due
 * yet is snapshotted again now, so that the cut's samples of it (all taken by now) find the
 * libraries it has mapped since its first one; the second snapshot still comes when due. A
 * process that has ended keeps its snapshot. */
void procsnap_resnap_young(struct procsnap *ps,
			   int (*for_each)(void *src, int (*fn)(void *ctx, const struct sampler_entry *e),
					   void *ctx),
			   void *src);
/* Ends the handling of what procsnap_take_execs gave. */
void procsnap_end_handling(struct procsnap *ps);

#endif
