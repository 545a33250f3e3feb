/* The process dispatcher: one stream of process lifecycle events for a recording, heard by many
 * listeners (perf's machine__process_event). Two sources report a process's life — the kernel's
 * side-band records (lib/procevents.h: exec, mmap, fork, exit, lost) and the sample source's
 * ring-buffer notices (first sample, exec, exit, code without a table, a runtime's code
 * announcement) — and both are queued here, merged, and applied between batches by
 * procdispatch_flush, never from inside a sample source's callback, drain or retire loop: so no
 * listener re-enters the source that reported the event.
 *
 * The process table (lib/procmap.h: every process's executable mappings) is the dispatcher's own
 * and is updated first; then each listener, in the order added, hears the event through its
 * ops (any op NULL: not interested): the symbolizer's snapshots, the DWARF unwinder's process
 * descriptions, the runtimes (lib/runtime.h), the USDT/CUDA watching.
 *
 * Ownership: listeners are borrowed (they outlive the dispatcher); queued events are copied
 * (a code announcement's bytes too). One thread at a time. */
#ifndef FIRN_PROCDISPATCH_H
#define FIRN_PROCDISPATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "procmap.h"

struct proc_event;
struct procdispatch;

/* What the sample source reported (its notices; queued by procdispatch_notice_*). */
enum procdispatch_kind {
	PD_FIRST_SAMPLE = 1, /* a process's first sample (or first after an exec) */
	PD_EXEC,             /* a sampled process called exec */
	PD_EXIT,             /* a sampled process ended (its entries wait to be retired) */
	PD_NO_TABLE,         /* the unwinder met code without a table at addr */
	PD_CODE,             /* a runtime's BPF walker announced a code object (tag, rec, len) */
};

struct procdispatch_listener {
	/* a process to follow: first sampled (exec false) or after an exec (exec true) */
	void (*on_process)(void *ctx, pid_t pid, bool exec);
	/* a followed process mapped e (from the side band; its table entry is up to date) */
	void (*on_mapping)(void *ctx, pid_t pid, const struct procmap_entry *e);
	/* the unwinder met code without a table at addr (0: unknown) */
	void (*on_no_table)(void *ctx, pid_t pid, uint64_t addr);
	/* a runtime's code announcement (lib/runtime.h's on_code) */
	void (*on_code)(void *ctx, unsigned tag, const void *rec, size_t len);
	/* a sampled process ended */
	void (*on_exit)(void *ctx, pid_t pid);
	void *ctx;
};

/* NULL + errno (ENOMEM). */
struct procdispatch *procdispatch_new(void);
void procdispatch_free(struct procdispatch *d);
/* Adds a listener (copied); 0 or -ENOMEM. */
int procdispatch_listen(struct procdispatch *d, const struct procdispatch_listener *l);
/* The process table, updated from the side-band records (for lookups between flushes). */
struct proctab *procdispatch_table(struct procdispatch *d);
/* Queues a notice of the sample source (rec: copied, len bytes; NULL for the others).
 * 0 or -ENOMEM (the notice is lost: counted in procdispatch_lost). */
int procdispatch_notice(struct procdispatch *d, enum procdispatch_kind k, pid_t pid,
			uint64_t addr, unsigned tag, const void *rec, size_t len);
/* Applies a side-band record to the table now (the table must follow the kernel's order) and
 * queues what listeners should hear of it. Returns the pid it concerns (0: none), or -errno. */
int procdispatch_record(struct procdispatch *d, const struct proc_event *ev, bool read_unknown);
/* Delivers every queued event to the listeners, in arrival order (events a listener queues
 * meanwhile are delivered in the same flush). 0 or -ENOMEM. */
int procdispatch_flush(struct procdispatch *d);
/* Notices lost for want of memory. */
uint64_t procdispatch_lost(const struct procdispatch *d);

#endif
