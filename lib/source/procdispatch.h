/* The process dispatcher: one stream of process lifecycle events for a recording, heard by many
 * listeners (perf's machine__process_event). Two sources report a process's life — the kernel's
 * side-band records (lib/proc/procevents.h: exec, mmap, fork, exit, lost) and the sample source's
 * ring-buffer notices (first sample, exec, exit, code without a table, a runtime's code
 * announcement) — and both meet here. The records are applied to the process table as they are
 * read (it must follow the kernel's order) and told to the listeners then; the notices are
 * queued (procdispatch_notice, called from the sample source's callbacks) and delivered by
 * procdispatch_flush, which the recorder calls between batches — never from inside the source's
 * callbacks, drains or retire loops, so no listener re-enters the source that reported them.
 *
 * The two streams merge here into one lifecycle per sampled process: on_process(exec false) at
 * its first sample (the source's), on_process(exec true) once per exec — reported by its record
 * and by the source, told by whichever comes first (their times tell one exec from the next;
 * the exec record is queued like a notice, and the process's exec is pending until then) — and
 * on_exit when its last thread ended (the source's: a record's EXIT is its leader's, which may
 * end first; the table marks it for sweeping only). The table's record of the process carries
 * what the dispatcher heard of it (struct proctab_heard).
 *
 * The process table (lib/proc/procmap.h: every process's executable mappings) is the dispatcher's:
 * one record per process that the listeners look up (procdispatch_find, procdispatch_maps).
 * Listeners hear events in the order they were added; any op may be NULL: the runtimes
 * (lib/runtimes/runtime.h), the symbolizer's snapshots (lib/record/procsnap.h), the DWARF unwinder's process
 * descriptions, the USDT/CUDA watching (lib/record/events.h).
 *
 * Without side-band records (they cannot be opened: no perf_event_open for them) the table is
 * empty: procdispatch_has_records is false and listeners read /proc themselves.
 *
 * Ownership: listeners are copied (their ctx borrowed); a queued announcement's bytes are
 * copied; a borrowed record source must outlive the dispatcher. One thread at a time. */
#ifndef FIRN_PROCDISPATCH_H
#define FIRN_PROCDISPATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proc/procmap.h"

struct proc_event;
struct proc_source;
struct procdispatch;

/* What the sample source reported (its notices). */
enum procdispatch_kind {
	PD_PROCESS = 1, /* a process's first sample (exec false), or its exec (exec true) */
	PD_EXIT,        /* a sampled process ended (its entries wait to be retired) */
	PD_NO_TABLE,    /* the unwinder met code without a table at addr (0: unknown) */
	PD_CODE,        /* a runtime's BPF walker announced a code object (tag, rec, len) */
};

struct procdispatch_listener {
	/* a side-band record was applied to the table; pid: the process whose image it changed
	 * (0: none). -errno stops the read (the recording cannot go on) */
	int (*on_record)(void *ctx, const struct proc_event *ev, pid_t pid);
	/* every record waiting was read and applied */
	int (*on_records_done)(void *ctx);
	/* the sample source's notices */
	void (*on_process)(void *ctx, pid_t pid, bool exec);
	void (*on_exit)(void *ctx, pid_t pid);
	void (*on_no_table)(void *ctx, pid_t pid, uint64_t addr);
	void (*on_code)(void *ctx, unsigned tag, const void *rec, size_t len);
	/* a user stack drained for the first time (told at once, from inside the drain: no
	 * lifecycle event, and its process may still live) */
	void (*on_stack)(void *ctx, pid_t pid, const uint64_t *ips, uint32_t len);
	void *ctx;
};

/* What the dispatcher counted. */
struct procdispatch_stats {
	uint64_t processes;    /* in the table now */
	uint64_t proc_reads;   /* /proc/PID/maps reads */
	uint64_t records_lost; /* side-band records the kernel lost */
	uint64_t notices_lost; /* notices that could not be queued (out of memory) */
	uint64_t execs_merged; /* exec reports dropped: the other stream told that exec first */
	uint64_t records;      /* side-band records applied */
};

/* A dispatcher over the records of src (borrowed), or, src NULL, the kernel's side-band records
 * (opened here, of the tasks in the ncgroups cgroup directories cgroups only when there are
 * some: --cgroup; where they cannot be opened, none: a DIAG_INFO note says why). read_unknown:
 * a process the table does not know is read from /proc at its first record (-a). NULL + errno
 * (ENOMEM). */
struct procdispatch *procdispatch_new(struct proc_source *src, bool read_unknown,
				      const char *const *cgroups, int ncgroups);
void procdispatch_free(struct procdispatch *d);
/* Adds a listener (copied); 0 or -ENOMEM. */
int procdispatch_listen(struct procdispatch *d, const struct procdispatch_listener *l);
/* Whether side-band records feed the table (false: listeners read /proc). */
bool procdispatch_has_records(const struct procdispatch *d);
/* A descriptor readable when records wait (-1: none). */
int procdispatch_fd(const struct procdispatch *d);
/* Reads and applies every record waiting, telling the listeners (a listener may call it again
 * from inside: it returns 0 then). 0 or -errno. */
int procdispatch_read(struct procdispatch *d);
/* pid's record in the table (NULL: not known, or no records). */
struct proctab_proc *procdispatch_find(const struct procdispatch *d, pid_t pid);
/* pid's executable mappings in the table (NULL: not known, none, or no records). */
const struct procmap *procdispatch_maps(const struct procdispatch *d, pid_t pid);
/* Makes the table know pid's mappings before its listeners look, so that /proc/PID/maps is read
 * once for all of them: reads it (proctab_read) when the table has no image of a live pid (a
 * process older than the records), or when the kernel lost records lately and the image was not
 * read since. 1 when read, 0 when not needed (or no records), -errno. */
int procdispatch_learn(struct procdispatch *d, pid_t pid);
/* Whether pid has ended for good: the table read its exit record and kill(2) finds no such
 * process (not a zombie, the pid not reused). Nothing of it is left in /proc for a listener to
 * read: under churn most short processes are told only after this. No errno. */
bool procdispatch_gone(const struct procdispatch *d, pid_t pid);
/* Forgets the processes that ended long before now (at most once a second). */
void procdispatch_sweep(struct procdispatch *d, uint64_t now_ns);
/* Queues a notice of the sample source (rec: len bytes, copied; NULL otherwise; a PD_PROCESS
 * exec's time in addr, 0: now). A notice that cannot be queued (out of memory) is counted in
 * notices_lost. */
void procdispatch_notice(struct procdispatch *d, enum procdispatch_kind k, pid_t pid, bool exec,
			 uint64_t addr, unsigned tag, const void *rec, size_t len);
struct sampler_opts;
/* Points the notice callbacks of a sample source's options (on_process, on_exec, on_exit,
 * on_code, on_announce, on_stack; ctx) at d. */
void procdispatch_source_opts(struct procdispatch *d, struct sampler_opts *so);
/* Delivers the queued notices to the listeners, in arrival order (notices queued meanwhile are
 * delivered in the same flush). */
void procdispatch_flush(struct procdispatch *d);
/* Whether an exec record of pid waits to be told (its image in the table is the new one, the
 * listeners' view still the old: leave it alone until on_process(exec true)). */
bool procdispatch_exec_pending(const struct procdispatch *d, pid_t pid);
/* Whether the listeners were told of pid (on_process: its first sample, or its exec) and no
 * exec record of it waits: its mmap records from now on belong to the image they know. False
 * without records. */
bool procdispatch_told(const struct procdispatch *d, pid_t pid);
/* The time (CLOCK_MONOTONIC ns) of the exec of pid told last; 0: none, or no records. */
uint64_t procdispatch_exec_ns(const struct procdispatch *d, pid_t pid);
void procdispatch_get_stats(const struct procdispatch *d, struct procdispatch_stats *st);

#endif
