/* The recording session: the sampler, the symbolizer, the capture and the process lifecycle
 * (first sample, exec, exit, retire/park/forget), USDT attachment and the kallsyms prefetch,
 * behind one object (see recorder.h). */
#include "recorder.h"

#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>

#include "../bpf/firn.h"
#include "capture.h"
#include "diag.h"
#include "events.h"
#include "procevents.h"
#include "procmap.h"
#include "runtime.h"
#include "sample_source.h"
#include "symbolize.h"
#include "unwind.h"
#include "clock.h"
#include "vec.h"

#define TRIM_INTERVAL_NS 10000000000ULL /* malloc_trim after retirements, every 10 s at most */
#define PREFETCH_AFTER_NS 250000000ULL  /* kallsyms is loaded ahead after 250 ms of recording */
#define PARK_LIVE_INTERVAL_NS 1000000000ULL /* live entries are parked once a second at most */
#define MAX_ENTRIES_DEFAULT 65536
#define SWEEP_AFTER_NS 10000000000ULL /* ended processes stay in the table 10 s (first samples) */
#define EVENT_BATCH 256
#define RECENT_EXEC_NS 1000000000ULL /* a first sample this soon after an exec may predate it */
#define EXEC_BATCH_NS 200000000ULL /* with events, execs are handled together (one drain) */
#define EXEC_WAIT_NS 1000000000ULL /* or after the next regular drain (none then), this long at most */
#define SWEEP_INTERVAL_NS 1000000000ULL
#define LOST_DISTRUST_NS 2000000000ULL /* after lost records, new processes are read from /proc */

/* A known process that called exec: its new image's snapshot waits until the samples it took
 * before are symbolized with the old one. */
struct pending_exec {
	pid_t pid;
	struct symbolizer_snapshot *next; /* NULL when it could not be taken (yet) */
	uint64_t exec_ns; /* when it called exec, or later (CLOCK_MONOTONIC) */
};


/* State of one recording. */
struct recorder {
	struct recorder_opts o; /* spill_dir: a copy, owned */
	struct symbolizer *sym;
	struct sample_source *ss; /* the samples: the BPF sampler, or the options' source */
	struct unwinder *unw;  /* the DWARF unwinder's tables (NULL: frame pointers only) */
	struct profile prof;
	bool prof_init;
	struct capture *cap;   /* fills prof: processes that end are symbolized as they go */
	uint64_t retired_since_trim, last_trim_ns; /* see retire_ended */
	struct pending_exec *execs; /* known processes that called exec (handle_execs) */
	size_t nexecs, cap_execs;
	struct pending_exec *handling; /* the ones handle_execs works on (events come meanwhile) */
	size_t nhandling;
	uint64_t first_exec_ns; /* when the oldest of execs was queued */
	uint64_t last_park_live_ns;
	uint64_t start_ns, end_ns;
	uint64_t cut_ns;       /* wall clock of the last cut (or the start) */
	uint64_t cut_stored;   /* samples handed out by earlier cuts (the source counts from the last) */
	bool cut;              /* the profile holds a cut's samples (recorder_finish drops them) */
	bool prefetched;       /* kallsyms is loading (or not needed) */
	bool finished;
	struct sampler_stats final; /* at recorder_finish */
	struct events ev;
	struct runtime_host host; /* what the runtimes are given (borrowed by them) */
	struct runtime_set rts;   /* the runtimes of this recording (lib/runtime.h) */
	/* the process model: fed by the event source (the kernel's side-band records, or the
	 * options' source); without one, processes are snapshotted from /proc as they show up */
	struct proc_source *src;
	bool own_src;
	struct proctab procs;
	struct proc_event *evbuf; /* EVENT_BATCH */
	pid_t *dirty;          /* processes whose mappings changed since their snapshot */
	size_t ndirty, cap_dirty;
	bool reading;          /* read_events is running (a callback may come back to it) */
	uint64_t lost_ns;      /* when the kernel last lost process records (0: never) */
	uint64_t lost_records; /* process records the kernel lost (side band) */
	uint64_t last_sweep_ns;
	char err[1024];        /* the last failure's message */
};

/* Notes the message of a failure for recorder_error; returns err (-errno). */
__attribute__((format(printf, 3, 4)))
static int fail(struct recorder *r, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	return err < 0 ? err : -EINVAL;
}

/* For the recording's start and end (the profile's time). */
static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The sampler's unwinding mode for the recorder's. */
static enum sampler_unwind sampler_unwind_of(enum recorder_unwind u)
{
	return u == RECORDER_UNWIND_FP ? UNWIND_FP : u == RECORDER_UNWIND_DWARF ? UNWIND_DWARF
									 : UNWIND_AUTO;
}

/* pid's pending exec (queued, or being handled), or NULL. */
static struct pending_exec *exec_pending(const struct recorder *r, pid_t pid)
{
	for (size_t i = 0; i < r->nexecs; i++)
		if (r->execs[i].pid == pid)
			return &r->execs[i];
	for (size_t i = 0; i < r->nhandling; i++)
		if (r->handling[i].pid == pid)
			return &r->handling[i];
	return NULL;
}

/* Takes the new image's snapshot of a pending exec now (again when the first sample after the
 * exec announces the process: its libraries are mapped by then); a failed take keeps the
 * earlier one. */
static void retake(struct recorder *r, struct pending_exec *x)
{
	struct symbolizer_snapshot *snap = symbolizer_take(r->sym, x->pid);

	if (!snap)
		return;
	symbolizer_snapshot_free(r->sym, x->next);
	x->next = snap;
}

/* Queues a known process that called exec for handle_execs; false when out of memory (then its
 * snapshot is simply replaced, as before). */
static bool queue_exec(struct recorder *r, pid_t pid, uint64_t exec_ns)
{
	if (VEC_GROW(r->execs, r->cap_execs, r->nexecs + 1))
		return false;
	if (!r->nexecs)
		r->first_exec_ns = mono_ns();
	r->execs[r->nexecs] = (struct pending_exec){ pid, NULL, exec_ns };
	if (!r->src) /* with events, the process table has the new image when it is installed */
		retake(r, &r->execs[r->nexecs]);
	r->nexecs++;
	return true;
}

/* Notes that pid's snapshot lags behind the process table (an mmap after its first sample). */
static void mark_dirty(struct recorder *r, pid_t pid)
{
	for (size_t i = 0; i < r->ndirty; i++)
		if (r->dirty[i] == pid)
			return;
	if (VEC_GROW(r->dirty, r->cap_dirty, r->ndirty + 1))
		return; /* out of memory: the snapshot stays as it was */
	r->dirty[r->ndirty++] = pid;
}

/* A sampled process mapped code: a runtime loaded by dlopen (or mapped after the first sample)
 * is found now. */
static void note_runtime_mapping(struct recorder *r, const struct proc_event *ev)
{
	char path[PATH_MAX];
	struct procmap_entry e = procmap_entry_of_event(ev, path, sizeof(path));

	runtime_set_on_mapping(&r->rts, ev->pid, &e, mono_ns());
}

/* Applies one process event to the table. A snapshotted process that calls exec keeps its old
 * image until handle_execs; one that maps more code gets it in its snapshot (update_dirty). A
 * process FORK reusing the pid of one not yet retired leaves that one's snapshot alone: the new
 * one's first sample replaces it, as without events. */
static int handle_event(struct recorder *r, const struct proc_event *ev)
{
	int pid = proctab_apply(&r->procs, ev, r->o.all);

	if (ev->kind == PROC_EV_LOST)
		r->lost_ns = mono_ns(), r->lost_records += ev->lost;
	if (pid > 0 && ev->kind == PROC_EV_MMAP && r->rts.n && symbolizer_has_process(r->sym, pid))
		note_runtime_mapping(r, ev);
	if (pid <= 0 || ev->kind == PROC_EV_FORK || !symbolizer_has_process(r->sym, pid))
		return pid < 0 ? pid : 0;
	if (exec_pending(r, pid))
		return 0;
	if (ev->kind == PROC_EV_EXEC && queue_exec(r, pid, ev->time))
		return 0;
	mark_dirty(r, pid);
	return 0;
}

/* Brings the snapshots of the dirty processes up to the table (unless an exec is pending). */
static int update_dirty(struct recorder *r)
{
	int err = 0;

	for (size_t i = 0; i < r->ndirty && !err; i++) {
		struct proctab_proc *p = proctab_find(&r->procs, r->dirty[i]);
		if (p && !exec_pending(r, p->pid) && symbolizer_has_process(r->sym, p->pid))
			err = symbolizer_set_maps(r->sym, p->pid, &p->image);
		if (!err && p && procmap_runs_jit(&p->image) && symbolizer_has_process(r->sym, p->pid))
			symbolizer_note_jit(r->sym, p->pid);
	}
	r->ndirty = 0;
	return err;
}

/* Reads every process event waiting and applies it (see handle_event). 0 or -errno. */
static int read_events(struct recorder *r)
{
	int n = 0, err = 0;

	if (!r->src || r->reading)
		return 0;
	r->reading = true;
	while (!err && (n = proc_source_read(r->src, r->evbuf, EVENT_BATCH)) > 0)
		for (int i = 0; i < n && !err; i++)
			err = handle_event(r, &r->evbuf[i]);
	if (!err && n < 0)
		err = n;
	if (!err)
		err = update_dirty(r);
	r->reading = false;
	return err;
}

/* Snapshots pid from the process table: the events that made it first (its fork, exec and
 * mmap records may still wait), else one read of /proc/PID/maps (a process older than the
 * events, or one whose parent the table did not know, or any while the kernel has lately lost
 * records). A process that called exec just before
 * (its first samples may predate it: a fork's child caught in execve) starts with its image
 * before the exec, and the exec is handled as for a process known before it. Its perf map is
 * opened now, while it lives, when it has JIT memory or was read from /proc (as before). */
static void snapshot_from_table(struct recorder *r, pid_t pid)
{
	bool from_proc = false;

	read_events(r);
	struct proctab_proc *p = proctab_find(&r->procs, pid);
	/* records lost lately: the table may lack this process's mappings, /proc has them */
	bool distrust = r->lost_ns && mono_ns() - r->lost_ns < LOST_DISTRUST_NS;
	if ((!p || (!p->image.n && !p->execs) || distrust) && !proctab_read(&r->procs, pid)) {
		p = proctab_find(&r->procs, pid);
		from_proc = true;
	}
	if (!p)
		return;
	if (p->prev.n && p->exec_time + RECENT_EXEC_NS >= mono_ns() &&
	    !symbolizer_set_maps(r->sym, pid, &p->prev) && queue_exec(r, pid, p->exec_time))
		return;
	/* a JIT process's perf map is opened while it lives (one older than the recording too) */
	if (!symbolizer_set_maps(r->sym, pid, &p->image) && (from_proc || procmap_runs_jit(&p->image)))
		symbolizer_note_jit(r->sym, pid);
}

/* The process table's mappings of pid for the DWARF unwinder's description (NULL: not known,
 * the unwinder reads /proc). */
static const struct procmap *maps_of(void *ctx, pid_t pid)
{
	struct recorder *r = ctx;

	read_events(r); /* the mappings made since the last poll (a library just loaded) */
	struct proctab_proc *p = r->src ? proctab_find(&r->procs, pid) : NULL;
	return p && p->image.n ? &p->image : NULL;
}

/* The process table's mappings of pid for the runtimes (NULL: /proc); events are not read
 * here (a runtime may be in the middle of a look). */
static const struct procmap *runtime_maps(void *ctx, pid_t pid)
{
	struct recorder *r = ctx;
	struct proctab_proc *p = r->src ? proctab_find(&r->procs, pid) : NULL;

	return p && p->image.n ? &p->image : NULL;
}

/* Snapshots a process's mappings while it lives (first sample, exec, or a target). */
static void see_process(void *ctx, pid_t pid, bool exec)
{
	struct recorder *r = ctx;
	struct pending_exec *x;

	events_watch(&r->ev, pid);
	if (r->rts.n) {
		read_events(r); /* its mappings, for the runtimes' look (runtime_maps) */
		runtime_set_attach(&r->rts, pid, exec, mono_ns());
	}

	if (!events_take_announced(&r->ev, pid) && symbolizer_has_process(r->sym, pid)) {
		if ((x = exec_pending(r, pid))) {
			if (!r->src)
				retake(r, x); /* the first sample after the exec announces it again */
			return;
		}
		if (exec && queue_exec(r, pid, mono_ns()))
			return; /* handle_execs: its samples so far are symbolized with its old image */
	}
	if (r->src) {
		snapshot_from_table(r, pid);
		return;
	}
	symbolizer_add_process(r->sym, pid);
	symbolizer_add_process_later(r->sym, pid, mono_ns()); /* on failure the first one stays */
}

/* A stack drained for the first time: the runtimes read what its frames name while it lives. */
static void on_stack(void *ctx, pid_t pid, const uint64_t *ips, uint32_t len)
{
	struct recorder *r = ctx;

	runtime_set_on_stack(&r->rts, pid, ips, len);
}

/* A runtime's walker announced a code object's identity. */
static void on_announce(void *ctx, unsigned tag, const void *rec, size_t len)
{
	struct recorder *r = ctx;

	runtime_set_on_code(&r->rts, tag, rec, len);
}

/* Describes pid's mappings to the DWARF unwinder (from the process table, else /proc), building
 * the tables it lacks; lazy: only the files sampled code is in. */
static void describe_process(struct recorder *r, pid_t pid, bool lazy)
{
	const struct procmap *pm = r->unw ? maps_of(r, pid) : NULL;

	if (!r->unw)
		return;
	if (pm)
		unwinder_add_process_maps(r->unw, pid, pm, lazy);
	else
		unwinder_add_process(r->unw, pid, lazy);
}

/* Sampler callback: a process's first sample, or its exec. Its snapshot comes first: a short
 * process may be gone once its tables are built. */
static void on_process(void *ctx, pid_t pid, bool exec)
{
	struct recorder *r = ctx;

	see_process(r, pid, exec);
	describe_process(r, pid, r->o.all);
}

/* Sampler callback: a sampled process ended; its unwind slot is free again. */
static void on_process_exit(void *ctx, pid_t pid)
{
	struct recorder *r = ctx;

	if (r->unw)
		unwinder_remove_process(r->unw, pid);
	symbolizer_note_exit(r->sym, pid); /* before its samples are symbolized */
}

/* Adds pid to the sampled processes (held: a command not yet exec'd, described at its exec). */
static int add_target(struct recorder *r, pid_t pid, bool held)
{
	int err = sample_source_add_target(r->ss, pid, held);

	if (!err && !held)
		describe_process(r, pid, false);
	return err;
}

/* The unwinder met code without a table at addr: with -a the file's table is built (a library
 * mapped since), else the whole process is described again. */
static void describe_code(struct recorder *r, pid_t pid, uint64_t addr)
{
	const struct procmap *pm = r->unw ? maps_of(r, pid) : NULL;

	if (!r->unw)
		return;
	if (!r->o.all)
		describe_process(r, pid, false);
	else if (pm)
		unwinder_add_code_maps(r->unw, pid, addr, pm);
	else
		unwinder_add_code(r->unw, pid, addr);
}

/* The unwinder met code without a table (JIT code): the process's perf map may have appeared
 * since its snapshot, which must open it while the process lives. */
static void on_code(void *ctx, pid_t pid, uint64_t addr)
{
	struct recorder *r = ctx;
	struct proctab_proc *p = r->src ? proctab_find(&r->procs, pid) : NULL;
	const struct procmap_entry *e = p ? procmap_find(&p->image, addr) : NULL;

	/* with events, code in a file mapping is a file's whose table is not built yet, no JIT */
	if (!e || e->kind != PROCMAP_FILE)
		symbolizer_note_jit(r->sym, pid);
	/* a runtime's library mapped: its interpreter may be found now */
	runtime_set_on_mapping(&r->rts, pid, NULL, mono_ns());
	describe_code(r, pid, addr);
}

/* sampler_retire callbacks: an entry of a process that ended is symbolized once its files are
 * indexed (by the symbolizer's worker, so recorder_poll never waits for one), then the process's
 * snapshot goes. Process events are handled between entries: new processes are snapshotted
 * while ended ones are symbolized. */
static bool entry_ready(void *ctx, const struct sampler_entry *e)
{
	struct recorder *r = ctx;

	/* a process whose exec waits for handle_execs still has its old image's snapshot */
	return !exec_pending(r, e->pid) && capture_ready(r->cap, e);
}

/* Live processes waiting for their second snapshot are better symbolized after it. */
static bool live_entry_ready(void *ctx, const struct sampler_entry *e)
{
	struct recorder *r = ctx;

	return !symbolizer_refresh_pending(r->sym, e->pid) && !exec_pending(r, e->pid) &&
	       capture_ready(r->cap, e);
}

/* Parks an entry; new processes are snapshotted meanwhile (events keep coming). */
static int park_entry(void *ctx, const struct sampler_entry *e)
{
	struct recorder *r = ctx;

	r->ss->ops->handle_events(r->ss);
	return capture_park(r->cap, e);
}

/* An ended process's entries are parked: its snapshot goes. */
static void forget_process(void *ctx, pid_t pid)
{
	struct recorder *r = ctx;

	symbolizer_remove_process(r->sym, pid);
	runtime_set_detach(&r->rts, pid);
}

/* Whether an entry of a process that called exec was taken before it: every user frame is in a
 * file of the old image (the snapshot still in place); those after it run the new image. */
static bool of_old_image(void *ctx, const struct sampler_entry *e)
{
	struct recorder *r = ctx;

	for (uint32_t i = 0; i < e->ulen; i++)
		if (!symbolizer_maps_file(r->sym, e->pid, e->ustack[i]))
			return false;
	return true;
}

/* Installs the image of a process after its exec: the process table's (the events have it
 * whole), else a snapshot taken now (the latest is the most complete, if the process still
 * lives), and another one later. */
static void install_new_image(struct recorder *r, struct pending_exec *x)
{
	struct proctab_proc *p = r->src ? proctab_find(&r->procs, x->pid) : NULL;

	if (p) {
		symbolizer_set_maps(r->sym, x->pid, &p->image);
		return;
	}
	retake(r, x);
	if (x->next)
		symbolizer_install(r->sym, x->next);
	x->next = NULL;
	symbolizer_add_process_later(r->sym, x->pid, mono_ns());
}

/* Whether every sample taken before these execs is in user space already: the last drain
 * flipped the counts maps after the last of them (then handling them needs no drain of its own:
 * under process churn, that drain was most of the cost of an exec). */
static bool execs_drained(const struct recorder *r, const struct pending_exec *xs, size_t nx)
{
	uint64_t flip = r->ss->ops->last_flip_ns ? r->ss->ops->last_flip_ns(r->ss) : 0;

	for (size_t i = 0; i < nx; i++)
		if (xs[i].exec_ns >= flip)
			return false;
	return true;
}

/* The samples a process took before its exec: drained now, told from the ones after it by their
 * addresses (of_old_image), symbolized with the snapshot of its old image and parked; then the
 * new image's snapshot (taken at the exec, or at the first sample after it) is installed. Runs
 * from recorder_poll, never inside a sampler callback. */
static int handle_execs(struct recorder *r)
{
	struct sampler_retire_ops old = { .park = park_entry, .select = of_old_image, .ctx = r };
	/* the list is taken over: events handled while parking may queue new execs */
	struct pending_exec *xs = r->execs;
	size_t nx = r->nexecs;
	int err = 0;

	if (!nx)
		return 0;
	r->execs = NULL;
	r->nexecs = r->cap_execs = 0;
	r->handling = xs;
	r->nhandling = nx;
	/* what is drained already first, with the old process name, then what the drain adds */
	for (size_t i = 0; i < nx && !err; i++) {
		int n = r->ss->ops->park_process(r->ss, xs[i].pid, &old);
		err = n < 0 ? n : 0;
	}
	bool drain = !execs_drained(r, xs, nx);
	if (!err && drain)
		err = r->ss->ops->drain(r->ss);
	for (size_t i = 0; i < nx; i++) {
		int n = err || !drain ? 0 : r->ss->ops->park_process(r->ss, xs[i].pid, &old);
		err = n < 0 ? n : err;
		install_new_image(r, &xs[i]);
		xs[i].pid = 0; /* handled: its next first-sample announcement is an ordinary one */
	}
	r->handling = NULL;
	r->nhandling = 0;
	free(xs);
	return err;
}

/* Symbolizes and forgets the processes that have ended; gives freed memory back to the system
 * now and then (glibc keeps it otherwise, and RSS would only ever grow). */
static int retire_ended(struct recorder *r)
{
	struct sampler_retire_ops ops = { .ready = entry_ready, .park = park_entry,
					  .gone = forget_process, .ctx = r };
	uint64_t now = mono_ns();
	int n = r->ss->ops->retire(r->ss, &ops);

	if (n < 0)
		return n;
	r->retired_since_trim += n;
	/* live processes that keep making new stacks: park their entries too, past the bound */
	if (r->ss->ops->entry_count(r->ss) > r->o.max_entries &&
	    now - r->last_park_live_ns >= PARK_LIVE_INTERVAL_NS) {
		struct sampler_retire_ops live = { .select = live_entry_ready, .park = park_entry,
						   .ctx = r };
		int k = r->ss->ops->park_live(r->ss, &live);
		if (k < 0)
			return k;
		r->last_park_live_ns = now;
		r->retired_since_trim += k > 0;
	}
	if (r->retired_since_trim && now - r->last_trim_ns >= TRIM_INTERVAL_NS) {
		malloc_trim(0);
		r->retired_since_trim = 0;
		r->last_trim_ns = now;
	}
	return 0;
}

/* Events callback: a process that maps a probed object now becomes a target, snapshotted. */
static int announce(void *ctx, pid_t pid)
{
	struct recorder *r = ctx;
	int err = add_target(r, pid, false);

	return err ? err : symbolizer_add_process(r->sym, pid);
}

/* Attaches the -e events in order, then --cuda's; their sample types follow that order. */
static int attach_events(struct recorder *r)
{
	return events_attach(&r->ev, r->ss);
}

/* The sample source's statistics, with the unwind tables' (the recorder's unwinder). */
static void source_stats(const struct recorder *r, struct sampler_stats *st)
{
	struct unwinder_stats us;

	r->ss->ops->get_stats(r->ss, st);
	st->stored += r->cut_stored; /* stored counts the whole recording, as taken does */
	if (!r->unw)
		return;
	unwinder_get_stats(r->unw, &us);
	st->unwind_files = us.files;
	st->unwind_rows = us.rows;
	st->unwind_bytes = us.bytes;
	st->unwind_max_bytes = us.max_rows * sizeof(struct firn_row);
	st->unwind_no_table = us.no_table;
	st->unwind_over_limit = us.over_limit;
	st->unwind_build_ns = us.build_ns;
	st->unwind_too_many_maps = us.too_many_maps;
	st->unwind_cached = us.cached;
}

/* The DWARF unwinder over the sample source's table maps (none with frame pointers), with the
 * tables of what nearly every process maps ready before the first sample. */
static int start_unwinder(struct recorder *r)
{
	static const char *const common[] = { "libc.so", "ld-linux", NULL };
	struct sampler_unwind_maps m;

	if (sample_source_unwind_maps(r->ss, &m))
		return 0;
	if (!(r->unw = unwinder_new(m.rows_fd, m.rows, m.pids_fd, m.umaps_fd, m.umaps, m.files_fd)))
		return fail(r, -ENOMEM, "cannot prepare the unwind tables: %s", strerror(ENOMEM));
	unwinder_preload(r->unw, getpid(), common);
	return 0;
}

/* What the runtimes are given: the options they read, the process table (ss: once made). */
static void set_host(struct recorder *r)
{
	bool command = !r->o.all && !r->o.npids;

	r->host = (struct runtime_host){
		.demangle = r->o.demangle, .all = r->o.all, .no_python = r->o.no_python,
		.off = r->o.runtimes_off, .noff = r->o.nruntimes_off, .cuda_lib = r->o.cuda_lib,
		.argc = command ? r->o.argc : 0, .argv = r->o.argv, .maps = runtime_maps, .ctx = r,
	};
}

/* Starts the symbolizer and loads the sampler (not yet sampling). */
static int setup_sampler(struct recorder *r)
{
	const char *why = "";
	int err;
	struct sampler_opts so = {
		.freq = r->o.freq,
		.all = r->o.all,
		.follow_children = true,
		.kernel = r->o.kernel,
		.user = true,
		.unwind = sampler_unwind_of(r->o.unwind),
		.unwind_memory = r->o.unwind_memory,
		.stack_entries = r->o.stack_entries,
		.off_cpu_runnable = r->o.off_cpu_runnable,
		.off_cpu_min_ns = r->o.off_cpu_min_ns,
		.off_cpu_rate = r->o.off_cpu_rate,
		.off_cpu_at_start = r->o.npids > 0 || r->o.all, /* a command has no waits yet */
		.retire = true,
		.on_process = on_process,
		.on_code = on_code,
		.on_exit = on_process_exit,
		.on_stack = on_stack,
		.on_announce = on_announce,
		.ctx = r,
	};
	struct symbolizer_opts syo;

	events_sampler_opts(&r->o, &so);
	symbolizer_opts_init(&syo);
	syo.demangle = r->o.demangle;
	if (!(r->sym = symbolizer_new_opts(&syo)))
		return fail(r, -errno, "cannot start the symbolizer: %s", strerror(errno));
	set_host(r);
	runtime_set_configure(r->o.runtimes, &r->host, &so);
	sample_source_new_fn *make = r->o.sample_source_new ? r->o.sample_source_new
							    : sample_source_bpf_new;
	if (!(r->ss = make(&so, r->o.sample_source_arg, &why)))
		return fail(r, -errno, "cannot %s: %s", why, strerror(errno));
	r->host.ss = r->ss;
	if ((err = runtime_set_init(&r->rts, r->o.runtimes, &r->host)))
		return fail(r, err, "cannot start the runtimes: %s", strerror(-err));
	return start_unwinder(r);
}

/* Opens the process events (the options' source, else the kernel's side-band records): from
 * here on the process table follows every exec, mapping and exit. Where the kernel's cannot be
 * opened, processes are snapshotted from /proc as they show up (a note says why). */
static int open_events(struct recorder *r)
{
	proctab_init(&r->procs);
	if (!(r->evbuf = calloc(EVENT_BATCH, sizeof(*r->evbuf))))
		return fail(r, -ENOMEM, "out of memory");
	r->src = r->o.events_source;
	if (r->src)
		return 0;
	if ((r->src = procevents_kernel_new(0)))
		r->own_src = true;
	else
		diag(DIAG_INFO, "cannot open the kernel's process events: %s; reading /proc instead",
		     strerror(errno));
	return 0;
}

/* Adds the pids as targets, each snapshotted now. */
static int add_pids(struct recorder *r)
{
	for (int i = 0; i < r->o.npids; i++) {
		int err = add_target(r, r->o.pids[i], false);
		if (err)
			return fail(r, err, "cannot add pid %d: %s", r->o.pids[i], strerror(-err));
		on_process(r, r->o.pids[i], false);
	}
	return 0;
}

/* What the capture knows from the start: the events, the frequency, where to park samples. */
static struct capture_meta capture_meta_of(const struct recorder *r)
{
	return (struct capture_meta){
		.freq = r->o.freq,
		.call_graph = r->o.call_graph,
		.events = r->ev.n ? r->ev.list : NULL,
		.nevents = r->ev.n,
		.event_specs = r->o.events,
		.nevent_specs = r->o.nevents,
		.off_cpu_rate = r->o.off_cpu_rate,
		.off_cpu_min_ns = r->o.off_cpu_min_ns,
		.spill_dir = r->o.spill_dir,
	};
}

/* Starts the profile once the events are known (before sampling). */
static int start_capture(struct recorder *r)
{
	struct capture_meta m = capture_meta_of(r);

	if (profile_init(&r->prof))
		return fail(r, -ENOMEM, "out of memory");
	r->prof_init = true;
	if (!(r->cap = capture_new(&r->prof, r->sym, &m)))
		return fail(r, -errno, "cannot start the profile: %s", strerror(errno));
	for (size_t i = 0; i < r->rts.n; i++) {
		struct frame_resolver res = runtime_set_resolver(&r->rts, i);
		int err = capture_set_resolver(r->cap, r->rts.slots[i].ops->tag, &res);
		if (err)
			return fail(r, err, "cannot name %s frames: %s", r->rts.slots[i].ops->name,
				    strerror(-err));
	}
	/* a thread indexes the files that the processes that end need (kallsyms: see
	 * recorder_poll) */
	symbolizer_index_ahead(r->sym);
	return 0;
}

/* Copies the options (spill_dir owned), with the defaults. */
static int copy_opts(struct recorder *r, const struct recorder_opts *o)
{
	r->o = *o;
	r->o.spill_dir = NULL;
	if (!r->o.max_entries)
		r->o.max_entries = MAX_ENTRIES_DEFAULT;
	if (o->spill_dir && !(r->o.spill_dir = strdup(o->spill_dir)))
		return fail(r, -ENOMEM, "out of memory");
	r->prefetched = !o->kernel;
	events_init(&r->ev, &r->o, announce, r, r->err, sizeof(r->err));
	return 0;
}

struct recorder *recorder_new(const struct recorder_opts *o, char *why, size_t len)
{
	struct recorder *r = calloc(1, sizeof(*r));
	int err;

	if (!r) {
		snprintf(why, len, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	if ((err = copy_opts(r, o)) || (err = open_events(r)) || (err = setup_sampler(r)) ||
	    (err = add_pids(r)) ||
	    (err = attach_events(r)) || (err = start_capture(r))) {
		snprintf(why, len, "%s", r->err);
		recorder_free(r);
		errno = -err;
		return NULL;
	}
	return r;
}

int recorder_add_command(struct recorder *r, pid_t pid, const char *file)
{
	int err = add_target(r, pid, true);

	if (err)
		return fail(r, err, "cannot add pid %d: %s", pid, strerror(-err));
	if (r->unw)
		unwinder_prepare_exec(r->unw, file); /* its first samples need the tables */
	return 0;
}

int recorder_start(struct recorder *r)
{
	const char *why = "";
	int err = r->ss->ops->start(r->ss, &why);

	if (err)
		return fail(r, err, "cannot %s: %s", why, strerror(-err));
	r->start_ns = r->cut_ns = wall_ns();
	return 0;
}

int recorder_poll(struct recorder *r, int timeout_ms)
{
	/* kallsyms loads in a thread once the recording outlives a short command (which may need
	 * no kernel frame at all), before the first processes are retired */
	if (!r->prefetched && wall_ns() - r->start_ns >= PREFETCH_AFTER_NS)
		r->prefetched = !symbolizer_prefetch_kernel(r->sym);
	int err = read_events(r);
	if (err)
		return fail(r, err, "cannot read process events: %s", strerror(-err));
	err = r->ss->ops->poll(r->ss, timeout_ms);
	if (err && err != -EINTR)
		return fail(r, err, "cannot read samples: %s", strerror(-err));
	/* the records of what was sampled meanwhile, before its processes are symbolized */
	if ((err = read_events(r)))
		return fail(r, err, "cannot read process events: %s", strerror(-err));
	uint64_t now = mono_ns();
	if (r->src && now - r->last_sweep_ns >= SWEEP_INTERVAL_NS) {
		proctab_sweep(&r->procs, now - SWEEP_AFTER_NS);
		r->last_sweep_ns = now;
	}
	/* each handling drains the samples: with events, execs wait a little to be handled
	 * together (their processes are not retired meanwhile: entry_ready) */
	bool execs_due = !r->src || execs_drained(r, r->execs, r->nexecs) ||
			 now - r->first_exec_ns >= (r->ss->ops->last_flip_ns ? EXEC_WAIT_NS
									      : EXEC_BATCH_NS);
	if (execs_due && (err = handle_execs(r)))
		return fail(r, err, "cannot symbolize the samples taken before an exec: %s",
			    strerror(-err));
	if ((err = retire_ended(r)))
		return fail(r, err, "cannot symbolize the samples of ended processes: %s",
			    strerror(-err));
	symbolizer_refresh_due(r->sym, mono_ns());
	runtime_set_poll(&r->rts, mono_ns());
	events_check_watched(&r->ev, false);
	return 0;
}

/* The pids (distinct) of the entries with a count whose process waits for its second snapshot. */
struct young {
	struct recorder *r;
	pid_t *pids;
	size_t n, cap;
};

/* sampler_for_each callback of resnap_young. */
static int note_young(void *ctx, const struct sampler_entry *e)
{
	struct young *y = ctx;

	if (!e->count || !symbolizer_refresh_pending(y->r->sym, e->pid))
		return 0;
	for (size_t i = 0; i < y->n; i++)
		if (y->pids[i] == (pid_t)e->pid)
			return 0;
	if (VEC_GROW(y->pids, y->cap, y->n + 1))
		return 0; /* not snapshotted again: its first snapshot stays */
	y->pids[y->n++] = e->pid;
	return 0;
}

/* Before a cut: a process whose second snapshot is not due yet is snapshotted again now, so
 * that the cut's samples of it (all taken by now) find the libraries it has mapped since its
 * first one; the second snapshot still comes when due. A process that has ended keeps its
 * snapshot. */
static void resnap_young(struct recorder *r)
{
	struct young y = { r, NULL, 0, 0 };

	r->ss->ops->for_each(r->ss, note_young, &y);
	for (size_t i = 0; i < y.n; i++)
		symbolizer_add_process(r->sym, y.pids[i]);
	free(y.pids);
}

void recorder_stop(struct recorder *r)
{
	r->end_ns = wall_ns();
	events_check_watched(&r->ev, true);
	r->ss->ops->stop(r->ss);
}

/* The source's entries, for the capture. */
static int for_each_entry(void *src, int (*fn)(void *ctx, const struct sampler_entry *e), void *ctx)
{
	struct sample_source *ss = src;

	return ss->ops->for_each(ss, fn, ctx);
}

int recorder_event_fd(const struct recorder *r)
{
	return sample_source_event_fd(r->ss);
}

const struct profile *recorder_profile(const struct recorder *r)
{
	return &r->prof;
}

struct profile *recorder_cut(struct recorder *r)
{
	uint64_t now = wall_ns();
	int err = read_events(r);

	if (!err)
		err = r->ss->ops->drain(r->ss);
	if (!err) /* the first-sample and exec notices of what was drained */
		err = r->ss->ops->handle_events(r->ss);
	if (!err) /* the records of what was sampled meanwhile, before it is symbolized */
		err = read_events(r);
	if (!err)
		err = handle_execs(r); /* pre-exec samples: parked, so in this cut */
	if (!err)
		resnap_young(r);
	if (!err)
		err = capture_cut(r->cap, for_each_entry, r->ss, r->cut_ns, now);
	if (!err) { /* the next cut counts from here; what this one stored stays counted */
		struct sampler_stats st;
		r->ss->ops->get_stats(r->ss, &st);
		r->cut_stored += st.stored;
		err = sample_source_reset_counts(r->ss);
	}
	r->cut_ns = now;
	r->cut = true;
	/* ended processes whose samples are in this cut are forgotten now (nothing left to park) */
	if (!err)
		err = retire_ended(r);
	if (err) {
		errno = -fail(r, err, "cannot cut the profile: %s", strerror(-err));
		return NULL;
	}
	return &r->prof;
}

/* The capture's metadata at the end: the time, the command, the machine, the counts. */
static struct capture_meta final_meta(const struct recorder *r, struct utsname *un)
{
	struct capture_meta m = capture_meta_of(r);

	uname(un);
	m.start_ns = r->cut ? r->cut_ns : r->start_ns; /* after cuts: the last interval's */
	m.end_ns = r->end_ns;
	m.argc = r->o.argc;
	m.argv = r->o.argv;
	m.kernel = un->release;
	m.ncpus = r->ss->ops->ncpus(r->ss);
	m.stats = &r->final;
	return m;
}

/* A debug note of what the recording holds at the end (memory follows live processes). */
static void note_held(const struct recorder *r)
{
	const struct sampler_stats *st = &r->final;
	struct symbolizer_stats ss;

	symbolizer_stats(r->sym, &ss);
	diag(DIAG_INFO, "held at the end: %llu entries, %llu stacks, %llu threads; %llu snapshots, "
	     "%llu files (%llu unused); %llu processes retired", (unsigned long long)st->entries,
	     (unsigned long long)st->stacks, (unsigned long long)st->threads,
	     (unsigned long long)ss.processes, (unsigned long long)ss.files,
	     (unsigned long long)ss.idle_files, (unsigned long long)st->retired_processes);
	if (r->src)
		diag(DIAG_INFO, "process table: %zu processes; /proc/PID/maps read %llu times; %llu "
		     "event records lost", r->procs.n, (unsigned long long)r->procs.proc_reads,
		     (unsigned long long)r->procs.lost);
}

struct profile *recorder_finish(struct recorder *r)
{
	struct utsname un;
	int err = read_events(r);

	if (!err)
		err = r->ss->ops->drain(r->ss);

	if (!err)
		err = r->ss->ops->drain(r->ss);
	if (!err)
		err = handle_execs(r);
	if (err) {
		errno = -fail(r, err, "cannot read samples: %s", strerror(-err));
		return NULL;
	}
	source_stats(r, &r->final);
	r->finished = true;
	struct capture_meta m = final_meta(r, &un);
	if (r->cut)
		profile_clear_samples(&r->prof); /* the last cut's: handed out already */
	note_held(r);
	if ((err = capture_finish_from(r->cap, for_each_entry, r->ss, &m))) {
		errno = -fail(r, err, "cannot build the profile: %s", strerror(-err));
		return NULL;
	}
	events_warn_unmapped(&r->ev, &r->prof);
	return &r->prof;
}

/* The sampler's figures in the recorder's terms. */
static void stats_of(const struct sampler_stats *s, struct recorder_stats *st)
{
	*st = (struct recorder_stats){
		.taken = s->taken, .stored = s->stored, .counts_full = s->counts_full,
		.stacks_full = s->stacks_full, .events_full = s->events_full,
		.user_stack_errors = s->user_stack_errors,
		.kernel_stack_errors = s->kernel_stack_errors,
		.unwind_files = s->unwind_files, .unwind_rows = s->unwind_rows,
		.unwind_bytes = s->unwind_bytes, .unwind_max_bytes = s->unwind_max_bytes,
		.unwind_no_table = s->unwind_no_table, .unwind_over_limit = s->unwind_over_limit,
		.unwind_build_ns = s->unwind_build_ns, .unwind_too_many_maps = s->unwind_too_many_maps,
		.unwind_cached = s->unwind_cached,
		.bpf_map_bytes = s->bpf_map_bytes, .bpf_maps = s->bpf_maps,
		.entries = s->entries, .stacks = s->stacks, .threads = s->threads,
		.retired_processes = s->retired_processes,
	};
	_Static_assert(sizeof(st->unwind) == sizeof(s->unwind), "unwind stop reasons");
	memcpy(st->unwind, s->unwind, sizeof(st->unwind));
	st->off_cpu = (struct recorder_offcpu_stats){
		s->off_cpu.waits, s->off_cpu.counted, s->off_cpu.ns, s->off_cpu.short_waits,
		s->off_cpu.short_ns, s->off_cpu.lost_no_slot, s->off_cpu.lost_counts_full,
		s->off_cpu.lost_stacks_full, s->off_cpu.unsampled, s->off_cpu.at_end, s->off_cpu.late,
		s->off_cpu.at_start, s->off_cpu.at_start_oldest_ns,
	};
	st->gpu = (struct recorder_gpu_stats){
		s->gpu.launches, s->gpu.kernels, s->gpu.kernels_unmatched, s->gpu.memcpys, s->gpu.lost,
		s->gpu.launches_unmatched, s->gpu.launches_pending,
	};
}

void recorder_stats(const struct recorder *r, struct recorder_stats *st)
{
	struct sampler_stats s;
	struct symbolizer_stats ss;

	if (r->finished)
		s = r->final;
	else
		source_stats(r, &s);
	stats_of(&s, st);
	symbolizer_stats(r->sym, &ss);
	st->snapshots = ss.processes;
	st->proc_records_lost = r->lost_records;
	if (r->cap)
		capture_frame_stats(r->cap, &st->frames);
	st->jit_no_map = ss.jit_no_map;
	st->ncpus = r->ss->ops->ncpus(r->ss);
	st->start_ns = r->start_ns;
	st->end_ns = r->end_ns;
}

const struct runtime_set *recorder_runtimes(const struct recorder *r)
{
	return &r->rts;
}

const char *recorder_error(const struct recorder *r)
{
	return r->err;
}

void recorder_free(struct recorder *r)
{
	if (!r)
		return;
	capture_free(r->cap);
	runtime_set_release(&r->rts); /* after the capture, which resolved through it */
	unwinder_free(r->unw); /* before the source that owns its maps */
	sample_source_free(r->ss);
	for (size_t i = 0; i < r->nexecs; i++)
		symbolizer_snapshot_free(r->sym, r->execs[i].next);
	symbolizer_free(r->sym);
	if (r->prof_init)
		profile_release(&r->prof);
	free((char *)r->o.spill_dir);
	free(r->execs);
	events_release(&r->ev);
	if (r->own_src)
		proc_source_free(r->src);
	proctab_release(&r->procs);
	free(r->evbuf);
	free(r->dirty);
	free(r);
}
