/* The recording session: the sampler, the symbolizer, the capture and the process lifecycle
 * (first sample, exec, exit, retire/park/forget), the events (lib/record/events.h: their USDT and CUDA
 * probes) and the kallsyms prefetch, behind one object (see recorder.h). */
#include "record/recorder.h"

#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "record/capture.h"
#include "base/diag.h"
#include "record/event_table.h"
#include "record/events.h"
#include "source/procdispatch.h"
#include "proc/procmap.h"
#include "record/proclabels.h"
#include "record/procsnap.h"
#include "record/unwind_listen.h"
#include "record/runtimes.h"
#include "source/sample_source.h"
#include "symbolize/symbolize.h"
#include "unwind/unwind.h"
#include "base/clock.h"
#include "base/vec.h"

#define TRIM_INTERVAL_NS 10000000000ULL /* malloc_trim after retirements, cuts: 10 s at most */
#define PREFETCH_AFTER_NS 250000000ULL  /* kallsyms is loaded ahead after 250 ms of recording */
#define PARK_LIVE_INTERVAL_NS 1000000000ULL /* live entries are parked once a second at most */
#define MAX_ENTRIES_DEFAULT 65536
#define EXEC_BATCH_NS 200000000ULL /* with events, execs are handled together (one drain) */
#define EXEC_WAIT_NS 1000000000ULL /* or after the next regular drain (none then), this long at most */

/* State of one recording. */
struct recorder {
	struct recorder_opts o; /* spill_dir: a copy, owned */
	uint64_t wake_ns;       /* when recorder_poll next has timed work (next_wake) */
	struct symbolizer *sym;
	struct sample_source *ss; /* the samples: the BPF sampler, or the options' source */
	struct unwinder *unw;  /* the DWARF unwinder's tables (NULL: frame pointers only) */
	struct profile prof;
	bool prof_init;
	struct capture *cap;   /* fills prof: processes that end are symbolized as they go */
	uint64_t retired_since_trim, last_trim_ns; /* see retire_ended */
	uint64_t last_park_live_ns;
	uint64_t start_ns, end_ns;
	uint64_t cut_ns;       /* wall clock of the last cut (or the start) */
	uint64_t cut_stored;   /* samples handed out by earlier cuts (the source counts from the last) */
	bool cut;              /* a cut was made: the finish holds what came since the last */
	bool renew_due;        /* the last cut found the tables outgrown (renew_if_due) */
	uint64_t renewals;     /* tables started afresh (o.renew_tables) */
	bool prefetched;       /* kallsyms is loading (or not needed) */
	bool finished;
	struct sampler_stats final; /* at recorder_finish */
	struct events ev;
	struct runtime_host host; /* what the runtimes are given (borrowed by them) */
	struct runtime_set rts;   /* the runtimes of this recording (lib/record/runtimes.h) */
	/* the process model: the dispatcher's table, fed by the side-band records (the options'
	 * source, else the kernel's; without them processes are snapshotted from /proc), and the
	 * sample source's notices, queued and delivered between batches to the listeners */
	struct procdispatch *pd;
	struct procsnap snaps; /* the symbolizer's snapshots, one of the listeners */
	struct unwind_listen ul; /* the unwinder's process descriptions, another */
	char err[1024];        /* the last failure's message */
	struct proclabels *plabels; /* o.process_labels: exe, cgroup, container_id (else NULL) */
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

/* The sampler's unwinding mode for the recorder's. */
static enum sampler_unwind sampler_unwind_of(enum recorder_unwind u)
{
	return u == RECORDER_UNWIND_FP ? UNWIND_FP : u == RECORDER_UNWIND_DWARF ? UNWIND_DWARF
									 : UNWIND_AUTO;
}

/* The process table's mappings of pid for the runtimes (NULL: /proc); records are not read
 * here (a runtime may be in the middle of a look). */
static const struct procmap *runtime_maps(void *ctx, pid_t pid)
{
	return procdispatch_maps(((struct recorder *)ctx)->pd, pid);
}

/* ---- the dispatcher's listeners (each module's own: lib/record/events.h, proclabels.h,
 * runtimes.h, procsnap.h, unwind_listen.h) ---- */

/* Whether pid is a sampled process (snapshotted, or told to the listeners: an exec'd command
 * whose snapshot is not installed yet, its libpython mapped just after the exec was looked at):
 * the runtimes hear of its mappings. */
static bool sampled(void *ctx, pid_t pid)
{
	struct recorder *r = ctx;

	return symbolizer_has_process(r->sym, pid) || procdispatch_told(r->pd, pid);
}

/* Adds pid to the sampled processes (held: a command not yet exec'd, described at its exec). */
static int add_target(struct recorder *r, pid_t pid, bool held)
{
	int err = sample_source_add_target(r->ss, pid, held);

	if (!err && !held)
		unwind_listen_describe(&r->ul, pid, false);
	return err;
}

/* The listeners, in the order they hear each event: the USDT/CUDA watching, the process labels,
 * the runtimes (before the snapshot, as the look reads the table), the snapshots, the unwinder. */
static int listen_all(struct recorder *r)
{
	struct procdispatch_listener ev = events_listener(&r->ev), rt, un;
	struct procdispatch_listener sn = procsnap_listener(&r->snaps);
	struct procdispatch_listener lb = proclabels_listener(r->plabels);
	int err = procdispatch_listen(r->pd, &ev);

	runtime_set_listener(&r->rts, r->pd, sampled, r, &rt);
	r->ul = (struct unwind_listen){ r->unw, r->pd, r->o.all };
	un = unwind_listen_ops(&r->ul);

	if (!err && r->plabels)
		err = procdispatch_listen(r->pd, &lb);
	if (!err && r->rts.n)
		err = procdispatch_listen(r->pd, &rt);
	if (!err)
		err = procdispatch_listen(r->pd, &sn);
	if (!err)
		err = procdispatch_listen(r->pd, &un);
	return err ? fail(r, err, "out of memory") : 0;
}

/* Reads the side-band records and delivers the queued notices: between batches. */
static int dispatch(struct recorder *r)
{
	int err = procdispatch_read(r->pd);

	procdispatch_flush(r->pd);
	return err;
}

/* sampler_retire callbacks: an entry of a process that ended is symbolized once its files are
 * indexed (by the symbolizer's worker, so recorder_poll never waits for one), then the process's
 * snapshot goes. Process events are handled between entries: new processes are snapshotted
 * while ended ones are symbolized. */
static bool entry_ready(void *ctx, const struct sampler_entry *e)
{
	struct recorder *r = ctx;

	/* a process whose exec waits for handle_execs still has its old image's snapshot */
	return !procsnap_exec_pending(&r->snaps, e->pid) && capture_ready(r->cap, e);
}

/* Live processes waiting for their second snapshot are better symbolized after it. */
static bool live_entry_ready(void *ctx, const struct sampler_entry *e)
{
	struct recorder *r = ctx;

	return !symbolizer_refresh_pending(r->sym, e->pid) && !procsnap_exec_pending(&r->snaps, e->pid) &&
	       capture_ready(r->cap, e);
}

/* Parks an entry. The source is not asked for events from inside its own loop: its notices
 * wait for the next batch. */
static int park_entry(void *ctx, const struct sampler_entry *e)
{
	struct recorder *r = ctx;

	return capture_park(r->cap, e);
}

/* An ended process's entries are parked: its snapshot goes. */
static void forget_process(void *ctx, pid_t pid)
{
	struct recorder *r = ctx;

	symbolizer_remove_process(r->sym, pid);
	runtime_set_detach(&r->rts, pid);
	if (r->plabels)
		proclabels_forget(r->plabels, pid);
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

/* Whether every sample taken before these execs is in user space already: the last drain
 * flipped the counts maps after the last of them (then handling them needs no drain of its own:
 * under process churn, that drain was most of the cost of an exec). */
static bool execs_drained(const struct recorder *r)
{
	uint64_t flip = r->ss->ops->last_flip_ns ? r->ss->ops->last_flip_ns(r->ss) : 0;

	return procsnap_execs_before(&r->snaps, flip);
}

/* The samples a process took before its exec: drained now, told from the ones after it by their
 * addresses (of_old_image), symbolized with the snapshot of its old image and parked; then the
 * new image's snapshot (taken at the exec, or at the first sample after it) is installed. Runs
 * from recorder_poll, never inside a sampler callback. */
static int handle_execs(struct recorder *r)
{
	struct sampler_retire_ops old = { .park = park_entry, .select = of_old_image, .ctx = r };
	bool drain = !execs_drained(r);
	size_t nx;
	/* the list is taken over: notices delivered meanwhile may queue new execs */
	struct pending_exec *xs = procsnap_take_execs(&r->snaps, &nx);
	int err = 0;

	if (!nx)
		return 0;
	/* what is drained already first, with the old process name, then what the drain adds */
	for (size_t i = 0; i < nx && !err; i++) {
		int n = r->ss->ops->park_process(r->ss, xs[i].pid, &old);
		err = n < 0 ? n : 0;
	}
	if (!err && drain)
		err = r->ss->ops->drain(r->ss);
	for (size_t i = 0; i < nx; i++) {
		int n = err || !drain ? 0 : r->ss->ops->park_process(r->ss, xs[i].pid, &old);
		err = n < 0 ? n : err;
		procsnap_install(&r->snaps, &xs[i]);
	}
	procsnap_end_handling(&r->snaps);
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

/* The sample source's statistics, with the unwind tables' (the recorder's unwinder). */
static void source_stats(const struct recorder *r, struct sampler_stats *st)
{
	r->ss->ops->get_stats(r->ss, st);
	st->stored += r->cut_stored; /* stored counts the whole recording, as taken does */
	unwind_listen_stats(&r->ul, st);
}

/* The DWARF unwinder over the sample source's table maps (none with frame pointers), with the
 * tables of what nearly every process maps ready before the first sample. */
static int start_unwinder(struct recorder *r)
{
	static const char *const common[] = { "libc.so", "ld-linux", NULL };
	struct sampler_unwind_maps m;

	if (sample_source_unwind_maps(r->ss, &m))
		return 0;
	if (!(r->unw = unwinder_new(m.rows_fd, m.first_chunk_fd, m.rows, m.pids_fd, m.umaps_fd,
				    m.umaps, m.files_fd)))
		return fail(r, -ENOMEM, "cannot prepare the unwind tables: %s", strerror(ENOMEM));
	unwinder_preload(r->unw, getpid(), common);
	return 0;
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
		.drain_max_ns = r->o.drain_max_ns,
		.off_cpu_runnable = r->o.off_cpu_runnable,
		.off_cpu_min_ns = r->o.off_cpu_min_ns,
		.off_cpu_rate = r->o.off_cpu_rate,
		.alloc_live = r->o.alloc_live,
		.off_cpu_at_start = r->o.npids > 0 || r->o.all, /* a command has no waits yet */
		.retire = true,
		.cgroups = r->o.cgroups,
		.ncgroups = r->o.ncgroups,
	};
	struct symbolizer_opts syo;

	if ((err = events_sampler_opts(&r->o, &so)))
		return fail(r, err, "too many events with BPF programs of their own");
	procdispatch_source_opts(r->pd, &so); /* its notices go to the dispatcher */
	symbolizer_opts_init(&syo);
	syo.demangle = r->o.demangle;
	if (!(r->sym = symbolizer_new_opts(&syo)))
		return fail(r, -errno, "cannot start the symbolizer: %s", strerror(errno));
	runtime_host_of_opts(&r->host, &r->o, runtime_maps, r);
	runtime_set_configure(r->o.runtimes, &r->host, &so);
	sample_source_new_fn *make = r->o.sample_source_new ? r->o.sample_source_new
							    : sample_source_bpf_new;
	if (!(r->ss = make(&so, r->o.sample_source_arg, &why)))
		return fail(r, -errno, "cannot %s: %s", why, strerror(errno));
	r->host.ss = r->ss;
	if ((err = runtime_set_init(&r->rts, r->o.runtimes, &r->host)))
		return fail(r, err, "cannot start the runtimes: %s", strerror(-err));
	procsnap_init(&r->snaps, r->sym, r->pd, events_take_announced, &r->ev);
	return (err = start_unwinder(r)) ? err : listen_all(r);
}

/* Opens the process events (the options' source, else the kernel's side-band records): from
 * here on the process table follows every exec, mapping and exit. Where the kernel's cannot be
 * opened, processes are snapshotted from /proc as they show up (a note says why). */
static int open_events(struct recorder *r)
{
	if (!(r->pd = procdispatch_new(r->o.events_source, r->o.all, r->o.cgroups, r->o.ncgroups)))
		return fail(r, -ENOMEM, "out of memory");
	return 0;
}

/* Adds the pids as targets, each snapshotted now. */
static int add_pids(struct recorder *r)
{
	for (int i = 0; i < r->o.npids; i++) {
		int err = add_target(r, r->o.pids[i], false);
		if (err)
			return fail(r, err, "cannot add pid %d: %s", r->o.pids[i], strerror(-err));
		procdispatch_notice(r->pd, PD_PROCESS, r->o.pids[i], false, 0, 0, NULL, 0);
		procdispatch_flush(r->pd);
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
		.alloc_rate = r->o.alloc_rate,
		.spill_dir = r->o.spill_dir,
		.process_labels = r->plabels ? proclabels_fill : NULL,
		.process_labels_ctx = r->plabels,
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
	if (o->process_labels && !(r->plabels = proclabels_new()))
		return fail(r, -ENOMEM, "out of memory");
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
	    (err = events_attach(&r->ev, r->ss)) || (err = start_capture(r))) {
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
	/* the tables loaded so far reachable by the programs before they sample */
	int err = r->unw ? unwinder_settle(r->unw) : 0;

	if (err)
		return fail(r, err, "cannot prepare the unwind tables: %s", strerror(-err));
	if ((err = r->ss->ops->start(r->ss, &why)))
		return fail(r, err, "cannot %s: %s", why, strerror(-err));
	r->start_ns = r->cut_ns = wall_ns();
	return 0;
}

/* Starts the tables afresh when the last cut found them outgrown: from the first recorder call
 * after it, when the caller is done with the cut's profile and nothing is parked yet. */
static int renew_if_due(struct recorder *r)
{
	if (!r->renew_due)
		return 0;
	int err = capture_renew(r->cap);
	if (err)
		return fail(r, err, "cannot start the profile's tables afresh: %s", strerror(-err));
	r->renew_due = false;
	r->renewals++;
	r->retired_since_trim++; /* malloc_trim soon: the old tables' memory goes back */
	return 0;
}

/* The longest sleep with nothing due: RECORDER_IDLE_MS, or the drains' longest pace. */
static int idle_ms(const struct recorder *r)
{
	uint64_t ms = r->o.drain_max_ns / 1000000ULL;

	return ms > RECORDER_IDLE_MS && ms < 60000 ? (int)ms : RECORDER_IDLE_MS;
}

/* When recorder_poll next has timed work (see recorder_wait_ms): the earliest of the source's
 * next drain, the next second snapshot (resnap; UINT64_MAX: none), the runtimes' next retry and
 * the next watched process's check (0: none), soon while execs wait; idle_ms at most. */
static uint64_t next_wake(const struct recorder *r, uint64_t now, uint64_t resnap, uint64_t retry)
{
	const uint64_t soon = now + RECORDER_POLL_MS * 1000000ULL;
	uint64_t due[] = {
		r->ss->ops->next_poll_ns ? r->ss->ops->next_poll_ns(r->ss) : soon,
		resnap == UINT64_MAX ? 0 : resnap, retry, events_next_due_ns(&r->ev),
		r->snaps.nexecs ? soon : 0,
	};
	uint64_t wake = now + (uint64_t)idle_ms(r) * 1000000ULL;

	for (size_t i = 0; i < sizeof(due) / sizeof(due[0]); i++)
		if (due[i] && due[i] < wake)
			wake = due[i];
	return wake;
}

int recorder_poll(struct recorder *r, int timeout_ms)
{
	/* kallsyms loads in a thread once the recording outlives a short command (which may need
	 * no kernel frame at all), before the first processes are retired */
	if (!r->prefetched && wall_ns() - r->start_ns >= PREFETCH_AFTER_NS)
		r->prefetched = !symbolizer_prefetch_kernel(r->sym);
	int err = renew_if_due(r);
	if (err)
		return err;
	if ((err = dispatch(r)))
		return fail(r, err, "cannot read process events: %s", strerror(-err));
	err = r->ss->ops->poll(r->ss, timeout_ms);
	if (err && err != -EINTR)
		return fail(r, err, "cannot read samples: %s", strerror(-err));
	/* the source's notices, and the records of what was sampled meanwhile, before its
	 * processes are symbolized */
	if ((err = dispatch(r)))
		return fail(r, err, "cannot read process events: %s", strerror(-err));
	uint64_t now = mono_ns();
	procdispatch_sweep(r->pd, now);
	/* each handling drains the samples: with events, execs wait a little to be handled
	 * together (their processes are not retired meanwhile: entry_ready) */
	bool execs_due = !procdispatch_has_records(r->pd) || execs_drained(r) ||
			 now - r->snaps.first_exec_ns >= (r->ss->ops->last_flip_ns ? EXEC_WAIT_NS
										    : EXEC_BATCH_NS);
	if (execs_due && (err = handle_execs(r)))
		return fail(r, err, "cannot symbolize the samples taken before an exec: %s",
			    strerror(-err));
	if ((err = retire_ended(r)))
		return fail(r, err, "cannot symbolize the samples of ended processes: %s",
			    strerror(-err));
	uint64_t resnap = symbolizer_refresh_due(r->sym, mono_ns());
	uint64_t retry = runtime_set_poll(&r->rts, mono_ns());
	events_check_watched(&r->ev, false);
	r->wake_ns = next_wake(r, mono_ns(), resnap, retry);
	return 0;
}

int recorder_wait_ms(const struct recorder *r, int max_ms)
{
	uint64_t now = mono_ns(), ms = r->wake_ns > now ? (r->wake_ns - now + 999999) / 1000000 : 1;

	if (max_ms > idle_ms(r))
		max_ms = idle_ms(r);
	return ms < 1 ? 1 : ms > (uint64_t)max_ms ? max_ms : (int)ms;
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

/* The opening of recorder_cut and recorder_finish: a renewal due since the last cut, then the
 * process records read and the samples drained. False when the renewal failed (errno and its
 * message set: the caller returns NULL), else true with *err the reading's 0 or -errno. */
static bool drained(struct recorder *r, int *err)
{
	if ((*err = renew_if_due(r))) {
		errno = -*err;
		return false;
	}
	*err = dispatch(r);
	if (!*err)
		*err = r->ss->ops->drain(r->ss);
	return true;
}

struct profile *recorder_cut(struct recorder *r)
{
	uint64_t now = wall_ns();
	int err;

	if (!drained(r, &err))
		return NULL;
	if (!err) /* the first-sample and exec notices of what was drained */
		err = r->ss->ops->handle_events(r->ss);
	if (!err) /* the records of what was sampled meanwhile, before it is symbolized */
		err = dispatch(r);
	if (!err)
		err = handle_execs(r); /* pre-exec samples: parked, so in this cut */
	if (!err)
		procsnap_resnap_young(&r->snaps, for_each_entry, r->ss);
	if (!err)
		err = capture_cut(r->cap, for_each_entry, r->ss, r->cut_ns, now);
	if (!err) /* the cut's labels are taken: a runtime may let go of what it no longer uses */
		runtime_set_cut(&r->rts);
	if (!err) { /* the next cut counts from here; what this one stored stays counted */
		struct sampler_stats st;
		r->ss->ops->get_stats(r->ss, &st);
		r->cut_stored += st.stored;
		err = sample_source_reset_counts(r->ss);
		r->retired_since_trim++; /* the reset let go of the interval's entries and stacks */
	}
	r->cut_ns = now;
	r->cut = true;
	r->renew_due = !err && r->o.renew_tables && capture_outgrown(r->cap);
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
	     "%llu files (%llu unused); %llu processes retired; %llu drains",
	     (unsigned long long)st->entries, (unsigned long long)st->stacks,
	     (unsigned long long)st->threads, (unsigned long long)ss.processes,
	     (unsigned long long)ss.files, (unsigned long long)ss.idle_files,
	     (unsigned long long)st->retired_processes, (unsigned long long)st->drains);
	diag(DIAG_INFO, "profile tables: %llu locations, %llu functions, %llu mappings; started "
	     "afresh %llu times", (unsigned long long)r->prof.nlocations,
	     (unsigned long long)r->prof.nfunctions, (unsigned long long)r->prof.nmappings,
	     (unsigned long long)r->renewals);
	struct procdispatch_stats ps;
	procdispatch_get_stats(r->pd, &ps);
	if (procdispatch_has_records(r->pd))
		diag(DIAG_INFO, "process table: %llu processes; %llu event records read, %llu lost; "
		     "/proc/PID/maps read %llu times; %llu execs reported by both streams",
		     (unsigned long long)ps.processes, (unsigned long long)ps.records,
		     (unsigned long long)ps.records_lost, (unsigned long long)ps.proc_reads,
		     (unsigned long long)ps.execs_merged);
}

struct profile *recorder_finish(struct recorder *r)
{
	struct utsname un;
	int err;

	if (!drained(r, &err))
		return NULL;
	if (!err)
		err = r->ss->ops->drain(r->ss);
	if (!err)
		err = handle_execs(r);
	if (err) {
		errno = -fail(r, err, "cannot read samples: %s", strerror(-err));
		return NULL;
	}
	source_stats(r, &r->final);
	if (r->o.map_memory && r->ss->ops->map_memory) /* the BPF maps' memory: once, at the end */
		r->ss->ops->map_memory(r->ss, &r->final);
	r->finished = true;
	struct capture_meta m = final_meta(r, &un);
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
		.retired_processes = s->retired_processes, .cgroup_filtered = s->cgroup_filtered,
	};
	_Static_assert(sizeof(st->unwind) == sizeof(s->unwind), "unwind stop reasons");
	memcpy(st->unwind, s->unwind, sizeof(st->unwind));
	event_stats_copy(s, st); /* off-CPU's and the GPU's counters, by the event table */
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
	struct procdispatch_stats ps;
	procdispatch_get_stats(r->pd, &ps);
	st->proc_records_lost = ps.records_lost;
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
	procsnap_release(&r->snaps);
	symbolizer_free(r->sym);
	if (r->prof_init)
		profile_release(&r->prof);
	free((char *)r->o.spill_dir);
	events_release(&r->ev);
	procdispatch_free(r->pd);
	proclabels_free(r->plabels);
	free(r);
}
