/* The symbolizer's snapshots of the recorded processes, kept by process events (see procsnap.h). */
#include "record/procsnap.h"

#include <stdlib.h>

#include "base/clock.h"
#include "proc/procevents.h"
#include "source/sampler.h"
#include "symbolize/symbolize.h"
#include "base/vec.h"

#define RECENT_EXEC_NS 1000000000ULL /* a first sample this soon after an exec may predate it */

void procsnap_init(struct procsnap *ps, struct symbolizer *sym, struct procdispatch *pd,
		   procsnap_announced_fn *announced, void *ctx)
{
	*ps = (struct procsnap){ .sym = sym, .pd = pd, .announced = announced, .ctx = ctx };
}

void procsnap_release(struct procsnap *ps)
{
	for (size_t i = 0; i < ps->nexecs; i++)
		symbolizer_snapshot_free(ps->sym, ps->execs[i].next);
	free(ps->execs);
	free(ps->dirty);
	*ps = (struct procsnap){ 0 };
}

/* pid's pending exec (queued, or being handled), or NULL. */
static struct pending_exec *exec_find(const struct procsnap *ps, pid_t pid)
{
	for (size_t i = 0; i < ps->nexecs; i++)
		if (ps->execs[i].pid == pid)
			return &ps->execs[i];
	for (size_t i = 0; i < ps->nhandling; i++)
		if (ps->handling[i].pid == pid)
			return &ps->handling[i];
	return NULL;
}

bool procsnap_exec_pending(const struct procsnap *ps, pid_t pid)
{
	return exec_find(ps, pid) != NULL;
}

/* Takes the new image's snapshot of a pending exec now (again when the first sample after the
 * exec announces the process: its libraries are mapped by then); a failed take keeps the
 * earlier one. */
static void retake(struct procsnap *ps, struct pending_exec *x)
{
	struct symbolizer_snapshot *snap = symbolizer_take(ps->sym, x->pid);

	if (!snap)
		return;
	symbolizer_snapshot_free(ps->sym, x->next);
	x->next = snap;
}

/* Queues a known process that called exec for handle_execs; false when out of memory (then its
 * snapshot is simply replaced, as before). */
static bool queue_exec(struct procsnap *ps, pid_t pid, uint64_t exec_ns)
{
	if (VEC_GROW(ps->execs, ps->cap_execs, ps->nexecs + 1))
		return false;
	if (!ps->nexecs)
		ps->first_exec_ns = mono_ns();
	ps->execs[ps->nexecs] = (struct pending_exec){ pid, NULL, exec_ns };
	/* with records, the process table has the new image when it is installed */
	if (!procdispatch_has_records(ps->pd))
		retake(ps, &ps->execs[ps->nexecs]);
	ps->nexecs++;
	return true;
}

/* Notes that pid's snapshot lags behind the process table (an mmap after its first sample). */
static void mark_dirty(struct procsnap *ps, pid_t pid)
{
	for (size_t i = 0; i < ps->ndirty; i++)
		if (ps->dirty[i] == pid)
			return;
	if (VEC_GROW(ps->dirty, ps->cap_dirty, ps->ndirty + 1))
		return; /* out of memory: the snapshot stays as it was */
	ps->dirty[ps->ndirty++] = pid;
}

/* A record applied to the table. A snapshotted process that maps more code gets it in its
 * snapshot (on_records_done). One that called exec keeps its old image until handle_execs:
 * from its exec record on (the dispatcher holds the exec pending until it is told, then
 * on_process queues it). A process FORK reusing the pid of one not yet retired leaves that
 * one's snapshot alone: the new one's first sample replaces it, as without records. */
static int on_record(void *ctx, const struct proc_event *ev, pid_t pid)
{
	struct procsnap *ps = ctx;

	if (pid <= 0 || ev->kind == PROC_EV_FORK || ev->kind == PROC_EV_EXEC ||
	    !symbolizer_has_process(ps->sym, pid))
		return 0;
	if (exec_find(ps, pid) || procdispatch_exec_pending(ps->pd, pid))
		return 0;
	mark_dirty(ps, pid);
	return 0;
}

/* Brings the snapshots of the dirty processes up to the table (unless an exec is pending). */
static int on_records_done(void *ctx)
{
	struct procsnap *ps = ctx;
	int err = 0;

	for (size_t i = 0; i < ps->ndirty && !err; i++) {
		struct proctab_proc *p = procdispatch_find(ps->pd, ps->dirty[i]);
		if (p && (exec_find(ps, p->pid) || procdispatch_exec_pending(ps->pd, p->pid)))
			continue; /* its old image stays until handle_execs */
		if (p && symbolizer_has_process(ps->sym, p->pid))
			err = symbolizer_set_maps(ps->sym, p->pid, &p->image);
		if (!err && p && procmap_runs_jit(&p->image) && symbolizer_has_process(ps->sym, p->pid))
			symbolizer_note_jit(ps->sym, p->pid);
	}
	ps->ndirty = 0;
	return err;
}

/* Snapshots pid from the process table: the records that made it first (its fork, exec and
 * mmap records may still wait), else one read of /proc/PID/maps (a process older than the
 * records, or one whose parent the table did not know, or any while the kernel has lately lost
 * records). A process that called exec just before (its first samples may predate it: a fork's
 * child caught in execve) starts with its image before the exec, and the exec is handled as for
 * a process known before it. Its perf map is opened now, while it lives, when it has JIT memory
 * or was read from /proc (as before). */
static void snapshot_from_table(struct procsnap *ps, pid_t pid)
{
	procdispatch_read(ps->pd);
	procdispatch_learn(ps->pd, pid); /* (the runtimes' listener may have read it already) */
	struct proctab_proc *p = procdispatch_find(ps->pd, pid);
	if (!p)
		return;
	bool from_proc = p->read_ns; /* an image read from /proc: a process older than the records */
	if (p->prev.n && p->exec_time + RECENT_EXEC_NS >= mono_ns() &&
	    !symbolizer_set_maps(ps->sym, pid, &p->prev) && queue_exec(ps, pid, p->exec_time))
		return;
	/* a JIT process's perf map is opened while it lives (one older than the recording too) */
	if (!symbolizer_set_maps(ps->sym, pid, &p->image) && (from_proc || procmap_runs_jit(&p->image)))
		symbolizer_note_jit(ps->sym, pid);
}

/* When pid's exec that was just told happened: the dispatcher's time of it, else now (without
 * records the source's notice is all there is, and it came just now). */
static uint64_t exec_time(const struct procsnap *ps, pid_t pid)
{
	uint64_t at = procdispatch_exec_ns(ps->pd, pid);

	return at ? at : mono_ns();
}

/* Snapshots a process's mappings while it lives (first sample, exec, or a target). */
static void on_process(void *ctx, pid_t pid, bool exec)
{
	struct procsnap *ps = ctx;
	struct pending_exec *x;
	bool announced = ps->announced && ps->announced(ps->ctx, pid);

	if (!announced && symbolizer_has_process(ps->sym, pid)) {
		if ((x = exec_find(ps, pid))) {
			if (!procdispatch_has_records(ps->pd))
				retake(ps, x); /* the first sample after the exec announces it again */
			return;
		}
		if (exec && queue_exec(ps, pid, exec_time(ps, pid)))
			return; /* handle_execs: its samples so far are symbolized with its old image */
	}
	if (procdispatch_has_records(ps->pd)) {
		snapshot_from_table(ps, pid);
		return;
	}
	symbolizer_add_process(ps->sym, pid);
	symbolizer_add_process_later(ps->sym, pid, mono_ns()); /* on failure the first one stays */
}

/* A sampled process ended: noted before its samples are symbolized. */
static void on_ended(void *ctx, pid_t pid)
{
	struct procsnap *ps = ctx;

	symbolizer_note_exit(ps->sym, pid);
}

/* The unwinder met code without a table (JIT code): the process's perf map may have appeared
 * since its snapshot, which must open it while the process lives. With records, code in a file
 * mapping is a file's whose table is not built yet, no JIT. An ask without an address (every
 * frame's mapping found, some by the kernel's VMA lookup: a new program's first samples under
 * -a) met no code without a table: no perf map to look for (its open of /proc/PID/root and
 * read of /proc/PID/status were most of firn's /proc work beside a loop of short programs). */
static void on_no_table(void *ctx, pid_t pid, uint64_t addr)
{
	struct procsnap *ps = ctx;

	if (!addr)
		return;
	struct proctab_proc *p = procdispatch_find(ps->pd, pid);
	const struct procmap_entry *e = p ? procmap_find(&p->image, addr) : NULL;

	if (!e || e->kind != PROCMAP_FILE)
		symbolizer_note_jit(ps->sym, pid);
}

struct procdispatch_listener procsnap_listener(struct procsnap *ps)
{
	return (struct procdispatch_listener){
		.on_record = on_record, .on_records_done = on_records_done, .on_process = on_process,
		.on_exit = on_ended, .on_no_table = on_no_table, .ctx = ps,
	};
}

bool procsnap_execs_before(const struct procsnap *ps, uint64_t flip_ns)
{
	for (size_t i = 0; i < ps->nexecs; i++)
		if (ps->execs[i].exec_ns >= flip_ns)
			return false;
	return true;
}

struct pending_exec *procsnap_take_execs(struct procsnap *ps, size_t *n)
{
	struct pending_exec *xs = ps->execs;

	*n = ps->nexecs;
	if (!*n)
		return NULL;
	ps->execs = NULL;
	ps->nexecs = ps->cap_execs = 0;
	ps->handling = xs;
	ps->nhandling = *n;
	return xs;
}

void procsnap_install(struct procsnap *ps, struct pending_exec *x)
{
	struct proctab_proc *p = procdispatch_find(ps->pd, x->pid);

	if (p) {
		symbolizer_set_maps(ps->sym, x->pid, &p->image);
	} else {
		retake(ps, x);
		if (x->next)
			symbolizer_install(ps->sym, x->next);
		x->next = NULL;
		symbolizer_add_process_later(ps->sym, x->pid, mono_ns());
	}
	x->pid = 0; /* handled: its next first-sample announcement is an ordinary one */
}

void procsnap_end_handling(struct procsnap *ps)
{
	free(ps->handling);
	ps->handling = NULL;
	ps->nhandling = 0;
}

/* The pids (distinct) of the entries with a count whose process waits for its second snapshot. */
struct young {
	struct procsnap *ps;
	pid_t *pids;
	size_t n, cap;
};

/* for_each callback of procsnap_resnap_young. */
static int note_young(void *ctx, const struct sampler_entry *e)
{
	struct young *y = ctx;

	if (!e->count || !symbolizer_refresh_pending(y->ps->sym, e->pid))
		return 0;
	for (size_t i = 0; i < y->n; i++)
		if (y->pids[i] == (pid_t)e->pid)
			return 0;
	if (VEC_GROW(y->pids, y->cap, y->n + 1))
		return 0; /* not snapshotted again: its first snapshot stays */
	y->pids[y->n++] = e->pid;
	return 0;
}

void procsnap_resnap_young(struct procsnap *ps,
			   int (*for_each)(void *src, int (*fn)(void *ctx, const struct sampler_entry *e),
					   void *ctx),
			   void *src)
{
	struct young y = { ps, NULL, 0, 0 };

	for_each(src, note_young, &y);
	for (size_t i = 0; i < y.n; i++)
		symbolizer_add_process(ps->sym, y.pids[i]);
	free(y.pids);
}
