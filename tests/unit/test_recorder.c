/* Unit tests (no root, no BPF) of the recorder's process lifecycle: the recorder runs against a
 * fake sample source (entries, drains, first-sample/exec/exit notices, retirement and parking as
 * the BPF sampler does them: through the same stack store, lib/source/stackstore.h) and a fake process
 * event source (exec, mmap, fork, exit records).
 * The processes are made up (pids above pid_max); their mappings are this test's executable and
 * libc, replayed as mmap records, so frames resolve to real names: recorder_test_work in the
 * executable, abort in libc. Cuts (recorder_cut) too: each holds its interval's samples once. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/clock.h"

#include "proc/procevents.h"
#include "proc/procmap.h"
#include "record/recorder.h"
#include "record/runtimes.h"
#include "source/sample_source.h"
#include "source/stackstore.h"
#include "stub_runtime.h"

#define PID 4000000 /* above pid_max: no such process */
#define MAX_ENTRIES 64

__attribute__((noinline)) int recorder_test_work(int x)
{
	return x * 7 + 3;
}

/* ---- a fake sample source ---- */

enum notice_kind { N_FIRST, N_EXEC, N_EXIT, N_ANNOUNCE };

struct fake_entry {
	pid_t pid, tid;
	uint64_t ip, count;
	uint32_t ctx; /* the label context (bpf/firn.h's FIRN_CTX) */
};

struct fake {
	struct sample_source base;
	struct sampler_opts o;                 /* the recorder's callbacks */
	struct fake_entry taken[MAX_ENTRIES];  /* samples not drained yet */
	size_t ntaken;
	struct stackstore store;               /* drained: what for_each shows (one-frame stacks,
						* each by its ip) */
	struct { enum notice_kind kind; pid_t pid; unsigned tag; } notices[MAX_ENTRIES];
	size_t nnotices;
	uint64_t drains;
	uint64_t taken_total; /* every sample take() made: the kernel's "taken" */
	bool inside; /* a retire or park loop runs: the recorder must not call the source again */
	const uint64_t *clock; /* the events' clock: drains tell when they flipped (NULL: they do not) */
	uint64_t flip_ns;
	uint64_t next_poll_ns; /* its next timed work (the flips fake's next_poll_ns) */
	/* its walkers, by tag: what set_proc was told last, and the counters walker_stats reads */
	struct { int calls; unsigned tag; pid_t pid; size_t len; uint8_t blob[16]; } set;
	uint64_t walker_counts[16][2];
};

static struct fake *fake_of(const struct sample_source *s)
{
	return (struct fake *)s;
}

static int f_start(struct sample_source *s, const char **why) { return 0; }
static void f_stop(struct sample_source *s) {}
static int f_ncpus(const struct sample_source *s) { return 1; }
static void f_free(struct sample_source *s) { stackstore_release(&fake_of(s)->store); }

/* Hands the notices to the recorder, in order; an exit waits for the next drain. */
static int f_handle_events(struct sample_source *s)
{
	struct fake *f = fake_of(s);

	assert_false(f->inside); /* no re-entry from a retire or park callback */
	for (size_t i = 0; i < f->nnotices; i++) {
		if (f->notices[i].kind == N_ANNOUNCE) { /* a record whose header names its walker */
			uint32_t rec[2] = { 0x100u | f->notices[i].tag, (uint32_t)f->notices[i].pid };
			f->o.on_announce(f->o.ctx, f->notices[i].tag, rec, sizeof(rec));
		} else if (f->notices[i].kind == N_EXIT)
			stackstore_exit(&f->store, f->notices[i].pid);
		else
			f->o.on_process(f->o.ctx, f->notices[i].pid, f->notices[i].kind == N_EXEC);
	}
	f->nnotices = 0;
	return 0;
}

/* Moves the samples taken into the store (one entry per pid, tid, ip); a new entry's stack is
 * told to the recorder (on_stack), as the BPF sampler does. */
static int f_drain(struct sample_source *s)
{
	struct fake *f = fake_of(s);

	assert_false(f->inside);
	for (size_t i = 0; i < f->ntaken; i++) {
		const struct fake_entry *t = &f->taken[i];
		struct stackstore_key k = { .pid = t->pid, .tid = t->tid, .ustack = t->ip,
					    .ctx = t->ctx };
		assert_int_equal(stackstore_put_stack(&f->store, t->ip, &t->ip, 1), 0);
		assert_int_equal(stackstore_set_name(&f->store, t->tid, "prog", "prog"), 0);
		int fresh = stackstore_add(&f->store, &k, t->count);
		assert_true(fresh >= 0);
		if (fresh && f->o.on_stack)
			f->o.on_stack(f->o.ctx, t->pid, &t->ip, 1);
	}
	f->ntaken = 0;
	f->drains++;
	stackstore_drained(&f->store);
	if (f->clock)
		f->flip_ns = *f->clock + 1; /* after every event so far */
	return 0;
}

static int f_poll(struct sample_source *s, int timeout_ms)
{
	f_handle_events(s);
	return f_drain(s);
}

static int f_for_each(struct sample_source *s, int (*fn)(void *, const struct sampler_entry *),
		      void *ctx)
{
	return stackstore_for_each(&fake_of(s)->store, fn, ctx);
}

/* Runs a retire or park loop of the store, noting that it runs (see inside). */
#define LOOP(f, call)                          \
	({                                     \
		assert_false((f)->inside);     \
		(f)->inside = true;            \
		int rc_ = (call);              \
		(f)->inside = false;           \
		rc_;                           \
	})

/* Retires at once (no batches: the tests count processes). */
static int f_retire(struct sample_source *s, const struct sampler_retire_ops *ops)
{
	return LOOP(fake_of(s), stackstore_retire(&fake_of(s)->store, ops, 0, 0));
}

static int f_park_process(struct sample_source *s, pid_t pid, const struct sampler_retire_ops *ops)
{
	return LOOP(fake_of(s), stackstore_park_process(&fake_of(s)->store, pid, ops));
}

static int f_park_live(struct sample_source *s, const struct sampler_retire_ops *ops)
{
	return LOOP(fake_of(s), stackstore_park_live(&fake_of(s)->store, ops));
}

static size_t f_entry_count(const struct sample_source *s)
{
	return fake_of(s)->store.nentries;
}

static void f_get_stats(struct sample_source *s, struct sampler_stats *st)
{
	struct fake *f = fake_of(s);

	memset(st, 0, sizeof(*st));
	st->taken = f->taken_total;
	st->stored = stackstore_stored(&f->store);
	st->entries = f->store.nentries;
	st->retired_processes = f->store.retired_processes;
}

/* The counts start again from 0 (recorder_cut). */
static void f_reset_counts(struct sample_source *s)
{
	stackstore_reset_counts(&fake_of(s)->store);
}

/* A walker is told of a process: the fake keeps what it was told. */
static int f_set_proc(struct sample_source *s, unsigned tag, pid_t pid, const void *blob,
		      size_t len)
{
	struct fake *f = fake_of(s);

	f->set.calls++;
	f->set.tag = tag, f->set.pid = pid, f->set.len = len;
	memcpy(f->set.blob, blob, len < sizeof(f->set.blob) ? len : sizeof(f->set.blob));
	return 0;
}

/* A walker's counters, by its tag. */
static void f_walker_stats(struct sample_source *s, unsigned tag, uint64_t *out, size_t n)
{
	for (size_t i = 0; i < n && i < 2 && tag < 16; i++)
		out[i] = fake_of(s)->walker_counts[tag][i];
}

static const struct sample_source_ops fake_ops = {
	.start = f_start, .stop = f_stop, .poll = f_poll, .handle_events = f_handle_events,
	.drain = f_drain, .for_each = f_for_each, .retire = f_retire, .park_live = f_park_live,
	.park_process = f_park_process, .entry_count = f_entry_count, .get_stats = f_get_stats,
	.ncpus = f_ncpus, .free = f_free, .reset_counts = f_reset_counts, .set_proc = f_set_proc,
	.walker_stats = f_walker_stats,
};

static uint64_t f_last_flip_ns(const struct sample_source *s)
{
	return fake_of(s)->flip_ns;
}

static uint64_t f_next_poll_ns(const struct sample_source *s)
{
	return fake_of(s)->next_poll_ns;
}

/* The fake of a source whose drains tell when they flipped its counts and that says when it
 * next drains (the BPF sampler's). */
static const struct sample_source_ops fake_ops_flips = {
	.start = f_start, .stop = f_stop, .poll = f_poll, .handle_events = f_handle_events,
	.drain = f_drain, .for_each = f_for_each, .retire = f_retire, .park_live = f_park_live,
	.park_process = f_park_process, .entry_count = f_entry_count, .get_stats = f_get_stats,
	.ncpus = f_ncpus, .free = f_free, .reset_counts = f_reset_counts, .set_proc = f_set_proc,
	.walker_stats = f_walker_stats,
	.last_flip_ns = f_last_flip_ns, .next_poll_ns = f_next_poll_ns,
};

/* The recorder's maker of its sample source: the test's fake, with the recorder's callbacks. */
static struct sample_source *fake_new(const struct sampler_opts *o, void *arg, const char **why)
{
	struct fake *f = arg;

	f->base.ops = f->clock ? &fake_ops_flips : &fake_ops;
	f->o = *o;
	stackstore_init(&f->store, true, 0xfffffff0u /* FIRN_EVENT_GPU_TIME */);
	return &f->base;
}

/* ---- the test's world: a recorder over both fakes ---- */

struct world {
	struct fake samples;
	struct proc_source *events;
	struct recorder *rec;
	struct profile *prof;
	uint64_t t;     /* event time (ns) */
};

static void take(struct world *w, pid_t pid, pid_t tid, uint64_t ip, uint64_t n)
{
	w->samples.taken[w->samples.ntaken++] = (struct fake_entry){ pid, tid, ip, n };
	w->samples.taken_total += n;
}

/* take, the samples carrying label context ctx. */
static void take_ctx(struct world *w, pid_t pid, uint64_t ip, uint64_t n, uint32_t ctx)
{
	take(w, pid, pid, ip, n);
	w->samples.taken[w->samples.ntaken - 1].ctx = ctx;
}

static void notice(struct world *w, enum notice_kind kind, pid_t pid)
{
	w->samples.notices[w->samples.nnotices].kind = kind;
	w->samples.notices[w->samples.nnotices].tag = 0;
	w->samples.notices[w->samples.nnotices++].pid = pid;
}

/* The walker of tag announces something of pid (a ring record headed FIRN_EV_ANNOUNCE(tag)). */
static void announce(struct world *w, unsigned tag, pid_t pid)
{
	notice(w, N_ANNOUNCE, pid);
	w->samples.notices[w->samples.nnotices - 1].tag = tag;
}

static void event(struct world *w, struct proc_event ev)
{
	ev.time = w->t += 100000; /* 0.1 ms apart */
	assert_int_equal(procevents_fake_add(w->events, &ev), 0);
}

static void task(struct world *w, enum proc_event_kind kind, pid_t pid, pid_t tid, pid_t ppid)
{
	event(w, (struct proc_event){ .kind = kind, .pid = pid, .tid = tid, .ppid = ppid });
}

/* Records pid's mmap of this process's executable mapping that contains addr. */
static void mmap_of(struct world *w, pid_t pid, uint64_t addr)
{
	struct procmap m;
	const struct procmap_entry *e;

	assert_int_equal(procmap_read(&m, getpid()), 0);
	assert_non_null(e = procmap_find(&m, addr));
	event(w, (struct proc_event){
		.kind = PROC_EV_MMAP, .pid = pid, .tid = pid, .start = e->start,
		.len = e->end - e->start, .pgoff = e->offset, .maj = e->dev_major,
		.min = e->dev_minor, .ino = e->inode, .prot = PROT_READ | PROT_EXEC,
		.flags = MAP_PRIVATE, .filename = e->path });
	procmap_release(&m);
}

/* How a test's recorder is set up: flips: the sample source tells when its drains flipped;
 * labels: process labels (exe, cgroup, container_id); reg: the runtimes (NULL: the
 * registry's), off and on: one runtime name each turns off and on (NULL: none); renew,
 * drain_max_ns: the continuous recording's options. */
struct setup_cfg {
	bool flips, labels, renew;
	uint64_t drain_max_ns;
	const struct runtime_ops *const *reg;
	const char *const *off, *const *on;
	const char *spill_dir; /* NULL: /tmp */
};

/* A recorder over the fakes, set up as cfg says. */
static int setup_cfg(void **state, struct setup_cfg cfg)
{
	struct world *w = calloc(1, sizeof(*w));
	char why[256];

	assert_non_null(w);
	if (cfg.flips)
		w->samples.clock = &w->t;
	assert_non_null(w->events = procevents_fake_new(NULL, 0, 0));
	struct recorder_opts o = {
		.freq = 99, .call_graph = "fp", .unwind = RECORDER_UNWIND_FP, .kernel = false,
		.demangle = true, .spill_dir = cfg.spill_dir ? cfg.spill_dir : "/tmp",
		.events_source = w->events,
		.sample_source_new = fake_new, .sample_source_arg = &w->samples,
		.process_labels = cfg.labels,
		.runtimes = cfg.reg,
		.runtimes_off = cfg.off, .nruntimes_off = cfg.off != NULL,
		.runtimes_on = cfg.on, .nruntimes_on = cfg.on != NULL,
		.renew_tables = cfg.renew,
		.drain_max_ns = cfg.drain_max_ns,
	};
	w->rec = recorder_new(&o, why, sizeof(why));
	if (!w->rec)
		fail_msg("recorder_new: %s", why);
	assert_int_equal(recorder_start(w->rec), 0);
	*state = w;
	return 0;
}

static int setup_with(void **state, bool flips, bool labels)
{
	return setup_cfg(state, (struct setup_cfg){ .flips = flips, .labels = labels });
}

static int setup(void **state)
{
	return setup_with(state, false, false);
}

static int setup_flips(void **state)
{
	return setup_with(state, true, false);
}

static int setup_renew(void **state)
{
	return setup_cfg(state, (struct setup_cfg){ .renew = true });
}

static int setup_drain_max(void **state)
{
	return setup_cfg(state, (struct setup_cfg){ .flips = true, .drain_max_ns = 2000000000ULL });
}

static int setup_labels(void **state)
{
	return setup_with(state, false, true);
}

static int teardown(void **state)
{
	struct world *w = *state;

	recorder_free(w->rec);
	proc_source_free(w->events);
	free(w);
	return 0;
}

static void poll_n(struct world *w, int n)
{
	while (n--)
		assert_int_equal(recorder_poll(w->rec, 0), 0);
}

/* Polls until n processes were retired (the symbolizer's worker indexes their files meanwhile:
 * a poll never waits for it), for 5 s at most. */
static void poll_until_retired(struct world *w, uint64_t n)
{
	for (int i = 0; i < 500 && w->samples.store.retired_processes < n; i++) {
		assert_int_equal(recorder_poll(w->rec, 0), 0);
		if (w->samples.store.retired_processes < n)
			usleep(10000);
	}
	assert_int_equal(w->samples.store.retired_processes, n);
}

static void finish(struct world *w)
{
	recorder_stop(w->rec);
	assert_non_null(w->prof = recorder_finish(w->rec));
}

/* The samples of pid (0: any) whose leaf is named name ("[unknown]": no name). */
static int64_t samples_named(const struct world *w, pid_t pid, const char *name)
{
	const struct profile *p = w->prof;
	int64_t n = 0;

	for (size_t i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		bool of_pid = !pid;
		for (uint32_t j = 0; j < s->nlabels && !of_pid; j++)
			of_pid = !strcmp(profile_str(p, s->labels[j].key), "pid") &&
				 s->labels[j].num == pid;
		if (!of_pid || !s->nlocs)
			continue;
		const struct profile_location *l = &p->locations[s->location_ids[0] - 1];
		const char *leaf = l->nlines ? profile_str(p, p->functions[l->lines[l->nlines - 1]
								 .function_id - 1].name)
					     : "[unknown]";
		if (!strcmp(leaf, name))
			n += s->values[0];
	}
	return n;
}

/* The value of the profile's comment "key: N". */
static long comment(const struct world *w, const char *key)
{
	size_t len = strlen(key);

	for (uint32_t i = 0; i < w->prof->ncomments; i++) {
		const char *c = profile_str(w->prof, w->prof->comments[i]);
		if (!strncmp(c, key, len) && c[len] == ':')
			return atol(c + len + 1);
	}
	return -1;
}

#define WORK ((uintptr_t)recorder_test_work)
#define LIBC ((uintptr_t)abort)

/* A process that execs, maps its program and exits within 1 ms, sampled meanwhile: its
 * samples are named (and parked as it ends), though it is gone before the recorder looks. */
static void test_exec_then_exit(void **state)
{
	struct world *w = *state;

	task(w, PROC_EV_FORK, PID, PID, 1);
	task(w, PROC_EV_EXEC, PID, PID, 0);
	mmap_of(w, PID, WORK);
	task(w, PROC_EV_EXIT, PID, PID, 1);
	notice(w, N_FIRST, PID);
	take(w, PID, PID, WORK, 3);
	notice(w, N_EXIT, PID);
	poll_until_retired(w, 1);
	finish(w);
	assert_int_equal(samples_named(w, PID, "recorder_test_work"), 3);
	assert_int_equal(samples_named(w, 0, "[unknown]"), 0);
	assert_int_equal(w->samples.store.retired, 3);    /* symbolized as it ended, */
	assert_int_equal(comment(w, "samples.parked"), 1); /* as one sample of the profile */
}

/* An exec replaces the image: the samples taken before it keep the old image's names (its
 * executable), those after it get the new one's (libc only). */
static void test_exec_replaces_image(void **state)
{
	struct world *w = *state;

	task(w, PROC_EV_EXEC, PID, PID, 0);
	mmap_of(w, PID, WORK);
	notice(w, N_FIRST, PID);
	take(w, PID, PID, WORK, 2);
	poll_n(w, 1);
	task(w, PROC_EV_EXEC, PID, PID, 0);
	mmap_of(w, PID, LIBC);
	notice(w, N_EXEC, PID);
	take(w, PID, PID, LIBC, 3);
	poll_n(w, 1);
	finish(w);
	assert_int_equal(samples_named(w, PID, "recorder_test_work"), 2);
	assert_int_equal(samples_named(w, PID, "abort"), 3);
	assert_int_equal(samples_named(w, PID, "[unknown]"), 0);
}

/* A pid used again by a new process after the first one was retired: each one's samples are
 * named from its own image. */
static void test_pid_reuse(void **state)
{
	struct world *w = *state;

	task(w, PROC_EV_EXEC, PID, PID, 0);
	mmap_of(w, PID, WORK);
	notice(w, N_FIRST, PID);
	take(w, PID, PID, WORK, 2);
	task(w, PROC_EV_EXIT, PID, PID, 1);
	notice(w, N_EXIT, PID);
	poll_until_retired(w, 1);
	task(w, PROC_EV_FORK, PID, PID, 1);
	task(w, PROC_EV_EXEC, PID, PID, 0);
	mmap_of(w, PID, LIBC);
	notice(w, N_FIRST, PID);
	take(w, PID, PID, LIBC, 4);
	poll_n(w, 1);
	finish(w);
	assert_int_equal(samples_named(w, PID, "recorder_test_work"), 2);
	assert_int_equal(samples_named(w, PID, "abort"), 4);
	assert_int_equal(samples_named(w, 0, "[unknown]"), 0);
}

/* A thread that ends before its process: its samples stay named, the process is not retired
 * before its own exit. */
static void test_thread_exits_first(void **state)
{
	struct world *w = *state;

	task(w, PROC_EV_EXEC, PID, PID, 0);
	mmap_of(w, PID, WORK);
	task(w, PROC_EV_FORK, PID, PID + 1, PID);
	notice(w, N_FIRST, PID);
	take(w, PID, PID + 1, WORK, 2);
	take(w, PID, PID, WORK, 1);
	task(w, PROC_EV_EXIT, PID, PID + 1, PID);
	poll_n(w, 2);
	assert_int_equal(w->samples.store.retired_processes, 0);
	take(w, PID, PID, WORK, 1);
	finish(w);
	assert_int_equal(samples_named(w, PID, "recorder_test_work"), 4);
	assert_int_equal(w->samples.store.retired, 0);
}

/* Processes ending between drains, their exits and samples interleaved: each is retired once
 * all of its samples are drained, and every sample is named. */
static void test_exits_between_drains(void **state)
{
	struct world *w = *state;

	for (int i = 0; i < 3; i++) {
		task(w, PROC_EV_EXEC, PID + i, PID + i, 0);
		mmap_of(w, PID + i, WORK);
		notice(w, N_FIRST, PID + i);
	}
	take(w, PID, PID, WORK, 1);
	take(w, PID + 1, PID + 1, WORK, 1);
	notice(w, N_EXIT, PID);
	poll_n(w, 1);               /* PID's exit came before this drain: retired after the next */
	take(w, PID + 1, PID + 1, WORK, 1);
	take(w, PID + 2, PID + 2, WORK, 1);
	notice(w, N_EXIT, PID + 1);
	poll_until_retired(w, 2);
	take(w, PID + 2, PID + 2, WORK, 2);
	notice(w, N_EXIT, PID + 2);
	poll_until_retired(w, 3);
	finish(w);
	assert_int_equal(samples_named(w, 0, "recorder_test_work"), 6);
	assert_int_equal(w->samples.store.retired, 6);
}

/* Notices that come while ended processes are retired (a new process's first sample, another's
 * exit) wait for the next batch: the recorder never calls the source from inside its retire
 * loop (the fake fails any call then), and both are handled after it. */
static void test_no_reentry_while_retiring(void **state)
{
	struct world *w = *state;

	task(w, PROC_EV_EXEC, PID, PID, 0);
	mmap_of(w, PID, WORK);
	notice(w, N_FIRST, PID);
	take(w, PID, PID, WORK, 2);
	notice(w, N_EXIT, PID);
	poll_n(w, 1);
	task(w, PROC_EV_EXEC, PID + 1, PID + 1, 0);
	mmap_of(w, PID + 1, WORK);
	notice(w, N_FIRST, PID + 1); /* waiting while PID is retired */
	take(w, PID + 1, PID + 1, WORK, 3);
	notice(w, N_EXIT, PID + 1);
	poll_until_retired(w, 2);
	finish(w);
	assert_int_equal(samples_named(w, PID, "recorder_test_work"), 2);
	assert_int_equal(samples_named(w, PID + 1, "recorder_test_work"), 3);
	assert_int_equal(w->samples.store.retired, 5);
}

/* A library mapped after the process's first sample (its snapshot was made then): the samples
 * in it are named once the mmap record is read. */
static void test_mmap_after_first_sample(void **state)
{
	struct world *w = *state;

	task(w, PROC_EV_EXEC, PID, PID, 0);
	mmap_of(w, PID, WORK);
	notice(w, N_FIRST, PID);
	take(w, PID, PID, WORK, 1);
	poll_n(w, 1);
	mmap_of(w, PID, LIBC);
	take(w, PID, PID, LIBC, 2);
	poll_n(w, 1);
	finish(w);
	assert_int_equal(samples_named(w, PID, "recorder_test_work"), 1);
	assert_int_equal(samples_named(w, PID, "abort"), 2);
}

/* After the kernel lost records, a new process's mappings are read from /proc (the table may
 * lack them): this test's own process, whose exec the events showed but none of its mmaps. */
static void test_lost_records(void **state)
{
	struct world *w = *state;
	pid_t self = getpid();

	task(w, PROC_EV_EXEC, self, self, 0);
	event(w, (struct proc_event){ .kind = PROC_EV_LOST, .lost = 12 });
	notice(w, N_FIRST, self);
	take(w, self, self, WORK, 2);
	poll_n(w, 1);
	finish(w);
	assert_int_equal(samples_named(w, self, "recorder_test_work"), 2);
}

static void cut(struct world *w)
{
	assert_non_null(w->prof = recorder_cut(w->rec));
}

/* cut() twice in a row: each cut holds what was sampled since the previous one (drained by the
 * cut itself: no poll between), the same stack again in a later cut, nothing twice; a cut with
 * nothing new is empty; finish after cuts holds what came since the last one. */
static void test_cut_twice(void **state)
{
	struct world *w = *state;

	task(w, PROC_EV_EXEC, PID, PID, 0);
	mmap_of(w, PID, WORK);
	notice(w, N_FIRST, PID);
	take(w, PID, PID, WORK, 3);
	cut(w);
	assert_int_equal(samples_named(w, PID, "recorder_test_work"), 3);
	take(w, PID, PID, WORK, 2);
	take(w, PID, PID + 1, LIBC, 1);
	mmap_of(w, PID, LIBC);
	cut(w);
	assert_int_equal(samples_named(w, PID, "recorder_test_work"), 2);
	assert_int_equal(samples_named(w, PID, "abort"), 1);
	assert_int_equal(w->prof->nsamples, 2);
	cut(w);
	assert_int_equal(w->prof->nsamples, 0);
	take(w, PID, PID, WORK, 4);
	finish(w);
	assert_int_equal(samples_named(w, PID, "recorder_test_work"), 4);
	assert_int_equal(samples_named(w, 0, "[unknown]"), 0);
}

/* A process pid that execs, maps this test's executable (or libc: addr) and is first sampled. */
static void started(struct world *w, pid_t pid, uint64_t addr)
{
	task(w, PROC_EV_EXEC, pid, pid, 0);
	mmap_of(w, pid, addr);
	notice(w, N_FIRST, pid);
}

/* A process that ends between two cuts: its samples (symbolized and parked as it is retired by
 * a poll) are in the next cut, once; then it is forgotten. */
static void cut_after_exit(struct world *w)
{
	started(w, PID, WORK);
	take(w, PID, PID, WORK, 1);
	cut(w);
	assert_int_equal(samples_named(w, PID, "recorder_test_work"), 1);
	take(w, PID, PID, WORK, 5);
	task(w, PROC_EV_EXIT, PID, PID, 1);
	notice(w, N_EXIT, PID);
	poll_until_retired(w, 1);
	assert_int_equal(w->samples.store.retired, 5); /* the cut's count was 0: not parked again */
	cut(w);
	assert_int_equal(samples_named(w, PID, "recorder_test_work"), 5);
	cut(w);
	assert_int_equal(w->prof->nsamples, 0);
}

static void test_cut_after_exit(void **state)
{
	cut_after_exit(*state);
}

/* The samples of the profile cut last (or finished): its "samples" type's total. */
static uint64_t cut_total(const struct world *w)
{
	return (uint64_t)profile_type_total(w->prof, "samples");
}

/* Processes that end across cuts (parked between two, or after the last): the summary's
 * identity holds for the whole recording, not once per cut — stored (the summary's "N
 * samples") is what the cuts and the finish hold together, nothing lost, so it is taken; and
 * the frames line counts each sample once too. A cut used to count again every sample parked
 * before an earlier cut. */
static void test_cuts_identity(void **state)
{
	struct world *w = *state;
	struct recorder_stats st;
	uint64_t sum = 0;

	started(w, PID, WORK);
	started(w, PID + 1, WORK);
	take(w, PID, PID, WORK, 2);
	take(w, PID + 1, PID + 1, WORK, 3);
	cut(w);
	sum += cut_total(w);
	take(w, PID, PID, WORK, 4);
	task(w, PROC_EV_EXIT, PID, PID, 1);
	notice(w, N_EXIT, PID);
	poll_until_retired(w, 1); /* parked: in the next cut */
	take(w, PID + 1, PID + 1, WORK, 1);
	cut(w);
	sum += cut_total(w);
	take(w, PID + 1, PID + 1, WORK, 5);
	task(w, PROC_EV_EXIT, PID + 1, PID + 1, 1);
	notice(w, N_EXIT, PID + 1);
	poll_until_retired(w, 2);
	started(w, PID + 2, LIBC);
	take(w, PID + 2, PID + 2, LIBC, 2);
	cut(w);
	sum += cut_total(w);
	cut(w); /* an empty one */
	sum += cut_total(w);
	take(w, PID + 2, PID + 2, LIBC, 3);
	task(w, PROC_EV_EXIT, PID + 2, PID + 2, 1);
	notice(w, N_EXIT, PID + 2);
	poll_until_retired(w, 3);
	finish(w);
	sum += cut_total(w);
	recorder_stats(w->rec, &st);
	assert_int_equal(sum, 20);
	assert_int_equal(st.taken, 20);
	assert_int_equal(st.stored, sum); /* taken = stored + lost, lost 0 */
	uint64_t frames = st.frames.named;
	for (int i = 0; i < SYMBOLIZER_REASONS; i++)
		frames += st.frames.unnamed[i];
	assert_int_equal(frames, sum);
}

/* Cuts of n distinct addresses of this test's executable (the from-th on, 16 bytes apart), 64
 * a cut (the fake's room): what a long recording meets as a host's programs run code they had
 * not run before. */
static void cut_distinct(struct world *w, uint64_t from, uint64_t n)
{
	struct procmap m;
	const struct procmap_entry *e;

	assert_int_equal(procmap_read(&m, getpid()), 0);
	assert_non_null(e = procmap_find(&m, WORK));
	assert_true(e->start + (from + n) * 16 < e->end);
	for (uint64_t i = 0; i < n; i += 64) {
		for (uint64_t j = i; j < i + 64 && j < n; j++)
			take(w, PID, PID, e->start + (from + j) * 16, 1);
		cut(w);
		assert_int_equal(w->prof->nsamples, i + 64 <= n ? 64 : n - i);
	}
	procmap_release(&m);
}

/* A continuous recording's tables (renew_tables) are started afresh once they hold many times
 * what a cut uses (past 1024 locations): after 1280 distinct addresses, 64 a cut, a cut holds
 * only what came since; names still resolve. Under 1024 they are kept. */
static void test_renew_tables(void **state)
{
	struct world *w = *state;

	started(w, PID, WORK);
	cut_distinct(w, 0, 640);
	assert_true(w->prof->nlocations >= 640); /* kept: a small recording's ids do not change */
	cut_distinct(w, 640, 640);
	assert_true(w->prof->nlocations <= 4 * 64); /* renewed after the cut past 1024 */
	take(w, PID, PID, WORK, 3);
	cut(w);
	assert_int_equal(samples_named(w, PID, "recorder_test_work"), 3);
	assert_int_equal(samples_named(w, 0, "[unknown]"), 0);
	take(w, PID, PID, WORK, 2);
	finish(w);
	assert_int_equal(samples_named(w, PID, "recorder_test_work"), 2);
}

/* Without renew_tables, the ids stay for the recording's life (firn top's window keeps them). */
static void test_tables_kept(void **state)
{
	struct world *w = *state;

	started(w, PID, WORK);
	cut_distinct(w, 0, 1280);
	assert_true(w->prof->nlocations >= 1280);
	finish(w);
}

/* A continuous recording (drain_max_ns) sleeps until the source's next drain up to that long,
 * not RECORDER_IDLE_MS. */
static void test_wait_drain_max(void **state)
{
	struct world *w = *state;

	w->samples.next_poll_ns = mono_ns() + 1500000000ULL;
	poll_n(w, 1);
	assert_in_range(recorder_wait_ms(w->rec, INT_MAX), 1400, 1500);
	w->samples.next_poll_ns = mono_ns() + 5000000000ULL;
	poll_n(w, 1);
	assert_int_equal(recorder_wait_ms(w->rec, INT_MAX), 2000);
	assert_int_equal(recorder_wait_ms(w->rec, 700), 700);
	finish(w);
}

static int setup_no_spill(void **state)
{
	return setup_cfg(state, (struct setup_cfg){ .spill_dir = "/nonexistent/firn-test" });
}

/* Where no temporary file can be made, parked samples stay in memory, and a cut still holds
 * them: the samples of a process that ended between two cuts, in the next cut, once; and those
 * of one that ended after the last cut, at the finish. */
static void test_parked_in_memory(void **state)
{
	struct world *w = *state;

	cut_after_exit(w);
	started(w, PID + 1, LIBC);
	take(w, PID + 1, PID + 1, LIBC, 4);
	task(w, PROC_EV_EXIT, PID + 1, PID + 1, 1);
	notice(w, N_EXIT, PID + 1);
	poll_until_retired(w, 2);
	finish(w);
	assert_int_equal(samples_named(w, PID + 1, "abort"), 4);
	assert_int_equal(samples_named(w, PID, "recorder_test_work"), 0);
}

/* An exec that the next regular drain's flip follows needs no drain of its own (under churn
 * that drain was most of an exec's cost): the samples before it are in user space already,
 * named with the old image, the ones after it with the new one. */
static void test_exec_before_flip_no_drain(void **state)
{
	struct world *w = *state;

	started(w, PID, WORK);
	take(w, PID, PID, WORK, 2);
	poll_n(w, 1);
	task(w, PROC_EV_EXEC, PID, PID, 0);
	mmap_of(w, PID, LIBC);
	notice(w, N_EXEC, PID);
	take(w, PID, PID, LIBC, 3);
	poll_n(w, 1); /* its drain flips after the exec: the exec is handled, without a drain */
	assert_int_equal(w->samples.store.retired, 2); /* the old image's samples, */
	assert_int_equal(w->samples.drains, 2); /* and the polls' own drains only */
	finish(w);
	assert_int_equal(samples_named(w, PID, "recorder_test_work"), 2);
	assert_int_equal(samples_named(w, PID, "abort"), 3);
	assert_int_equal(samples_named(w, PID, "[unknown]"), 0);
}

/* recorder_wait_ms: a caller sleeps until the recorder's next timed work — the source's next
 * drain, RECORDER_IDLE_MS at most, its max_ms at most — instead of every RECORDER_POLL_MS; a
 * source that cannot say when it drains is looked at every RECORDER_POLL_MS; execs waiting to
 * be handled are looked at soon. */
static void test_wait_until_due(void **state)
{
	struct world *w = *state;

	w->samples.next_poll_ns = mono_ns() + 300000000ULL;
	poll_n(w, 1);
	int ms = recorder_wait_ms(w->rec, 10000);
	assert_in_range(ms, 200, 300);
	assert_int_equal(recorder_wait_ms(w->rec, 20), 20);
	w->samples.next_poll_ns = mono_ns() + 5000000000ULL;
	poll_n(w, 1);
	assert_int_equal(recorder_wait_ms(w->rec, 10000), RECORDER_IDLE_MS);
	finish(w);
}

/* Without the source's next drain time, the old pace. */
static void test_wait_unknown_source(void **state)
{
	struct world *w = *state;

	poll_n(w, 1);
	assert_in_range(recorder_wait_ms(w->rec, 10000), 1, RECORDER_POLL_MS);
	finish(w);
}

/* The label key of sample s, as a string ("" when it has none). */
static const char *label_str(const struct profile *p, const struct profile_sample *s, const char *key)
{
	for (uint32_t j = 0; j < s->nlabels; j++)
		if (!strcmp(profile_str(p, s->labels[j].key), key))
			return profile_str(p, s->labels[j].str);
	return "";
}

/* process_labels: a live process's samples carry its exe and its cgroup v2 path as
 * /proc/PID/exe and /proc/PID/cgroup give them; without the option, pid and comm only (and
 * tid, thread), as before. */
static void test_process_labels(void **state)
{
	struct world *w = *state;
	pid_t self = getpid();
	char exe[4096], cg[4096] = "";
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *f = fopen("/proc/self/cgroup", "r");
	char line[4096];

	assert_true(n > 0);
	exe[n] = 0;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3))
			snprintf(cg, sizeof(cg), "%.*s", (int)strcspn(line + 3, "\n"), line + 3);
	if (f)
		fclose(f);
	task(w, PROC_EV_EXEC, self, self, 0);
	mmap_of(w, self, WORK);
	notice(w, N_FIRST, self);
	take(w, self, self, WORK, 3);
	poll_n(w, 1);
	finish(w);
	assert_int_equal(w->prof->nsamples, 1);
	const struct profile_sample *s = &w->prof->samples[0];
	assert_string_equal(label_str(w->prof, s, "exe"), exe);
	assert_string_equal(label_str(w->prof, s, "cgroup"), cg);
	assert_int_equal(s->nlabels, 4 + 1 + (*cg != 0)); /* no container here */
}

static void test_no_process_labels(void **state)
{
	struct world *w = *state;
	pid_t self = getpid();

	task(w, PROC_EV_EXEC, self, self, 0);
	mmap_of(w, self, WORK);
	notice(w, N_FIRST, self);
	take(w, self, self, WORK, 3);
	poll_n(w, 1);
	finish(w);
	assert_int_equal(w->prof->nsamples, 1);
	assert_int_equal(w->prof->samples[0].nlabels, 4);
	assert_string_equal(label_str(w->prof, &w->prof->samples[0], "exe"), "");
}

/* The stub runtime's registry: one line. */
static const struct runtime_ops *const stub_registry[] = { &stub_runtime, NULL };

static int setup_stub(void **state)
{
	memset(&stub_log, 0, sizeof(stub_log));
	return setup_cfg(state, (struct setup_cfg){ .reg = stub_registry });
}

/* A runtime in the registry is driven through a whole recording by the recorder, which names
 * none: attached at the process's first sample (its walker told of the process through the
 * source, by its tag), told of its stack (with the tagged frame) when drained, told of its
 * walker's announcements (by their tag: not of another walker's), asked to resolve that frame
 * (named in the profile, in a mapping of its own, under the native caller), detached when the
 * process is retired; its summary line, with its walker's counters read by tag, is the
 * recording's; freed at the end. */
static void test_stub_runtime(void **state)
{
	struct world *w = *state;
	uint64_t v = ((0xa0ULL | STUB_TAG) << 56) | 42; /* FIRN_FRAME(STUB_TAG, 42) */

	assert_int_equal(stub_log.news, 1);
	w->samples.walker_counts[STUB_TAG][1] = 5;
	w->samples.walker_counts[1][1] = 99; /* another walker's */
	started(w, PID, WORK);
	take(w, PID, PID, v, 3);
	poll_n(w, 1);
	announce(w, 1, PID); /* Python's: not the stub's */
	announce(w, STUB_TAG, PID);
	task(w, PROC_EV_EXIT, PID, PID, 1);
	notice(w, N_EXIT, PID);
	poll_until_retired(w, 1);
	assert_int_equal(stub_log.attaches, 1);
	assert_int_equal(stub_log.attached, PID);
	assert_int_equal(stub_log.set_rc, 0);
	assert_int_equal(w->samples.set.calls, 1);
	assert_int_equal(w->samples.set.tag, STUB_TAG);
	assert_int_equal(w->samples.set.pid, PID);
	assert_int_equal(w->samples.set.len, sizeof(struct stub_proc));
	struct stub_proc told;
	memcpy(&told, w->samples.set.blob, sizeof(told));
	assert_int_equal(told.magic, STUB_MAGIC);
	assert_int_equal(told.pid, PID);
	assert_int_equal(stub_log.codes, 1);
	assert_int_equal(stub_log.code, 0x100u | STUB_TAG);
	assert_int_equal(stub_log.stacks, 1);
	assert_int_equal(stub_log.stacked, PID);
	assert_true(stub_log.stack_value == v);
	assert_int_equal(stub_log.resolves, 1); /* once per (pid, value) */
	assert_int_equal(stub_log.resolved, PID);
	assert_int_equal(stub_log.detaches, 1);
	assert_int_equal(stub_log.detached, PID);
	finish(w);
	assert_int_equal(samples_named(w, PID, "stub_fn"), 3);
	char line[64];
	assert_int_equal(runtime_set_summary(recorder_runtimes(w->rec), line, sizeof(line)),
			 strlen("firn: stub: 1 attached, 1 resolved, 5 walked\n"));
	assert_string_equal(line, "firn: stub: 1 attached, 1 resolved, 5 walked\n");
	/* a buffer too small: cut, terminated, its length what fits */
	assert_int_equal(runtime_set_summary(recorder_runtimes(w->rec), line, 8), 7);
	assert_string_equal(line, "firn: s");
	recorder_free(w->rec);
	w->rec = NULL;
	assert_int_equal(stub_log.frees, 1);
}

/* A process told only after it ended (its exit record read, no such pid left: most short
 * programs under churn) is not looked at by the runtimes, which would find nothing in /proc;
 * its samples are named from the records as before, and a live one is still attached. */
static void test_gone_not_attached(void **state)
{
	struct world *w = *state;

	task(w, PROC_EV_EXEC, PID, PID, 0);
	mmap_of(w, PID, WORK);
	take(w, PID, PID, WORK, 3);
	task(w, PROC_EV_EXIT, PID, PID, 1);
	notice(w, N_FIRST, PID);
	notice(w, N_EXIT, PID);
	poll_until_retired(w, 1);
	assert_int_equal(stub_log.attaches, 0);
	pid_t self = getpid();
	task(w, PROC_EV_EXEC, self, self, 0);
	mmap_of(w, self, WORK);
	notice(w, N_FIRST, self);
	take(w, self, self, WORK, 2);
	poll_n(w, 1);
	assert_int_equal(stub_log.attaches, 1);
	assert_int_equal(stub_log.attached, self);
	finish(w);
	assert_int_equal(samples_named(w, PID, "recorder_test_work"), 3);
	assert_int_equal(samples_named(w, self, "recorder_test_work"), 2);
}

/* The value of label key on the samples of pid whose label key is value (their sum). */
static int64_t samples_labelled(const struct world *w, const char *key, const char *value)
{
	const struct profile *p = w->prof;
	int64_t n = 0;

	for (size_t i = 0; i < p->nsamples; i++) {
		const char *v = profile_label_str(p, &p->samples[i], key);
		if (value ? v && !strcmp(v, value) : !v)
			n += p->samples[i].values[0];
	}
	return n;
}

/* A sample's label context (its key's ctx) becomes the labels its tag's runtime names: two
 * contexts of one stack stay two samples, the folded id is the runtime's "other", a context
 * it does not know and one of a tag without a runtime leave the sample unlabelled. */
static void test_context_labels(void **state)
{
	struct world *w = *state;
	uint64_t v = ((0xa0ULL | STUB_TAG) << 56) | 42;

	started(w, PID, WORK);
	take_ctx(w, PID, v, 3, (uint32_t)STUB_TAG << 24 | 1);
	take_ctx(w, PID, v, 4, (uint32_t)STUB_TAG << 24 | 2);
	take_ctx(w, PID, v, 5, (uint32_t)STUB_TAG << 24 | 0xffffff);
	take_ctx(w, PID, v, 6, (uint32_t)STUB_TAG << 24 | 7);
	take_ctx(w, PID, v, 2, (uint32_t)9 << 24 | 1);
	take(w, PID, PID, v, 1);
	poll_n(w, 1);
	finish(w);
	assert_int_equal(samples_labelled(w, "span", "s1"), 3);
	assert_int_equal(samples_labelled(w, "span", "s2"), 4);
	assert_int_equal(samples_labelled(w, "span", "other"), 5);
	assert_int_equal(samples_labelled(w, "span", NULL), 6 + 2 + 1);
	assert_int_equal(samples_named(w, PID, "stub_fn"), 21);
}

/* The stub as a runtime off until a recording turns it on (as --cuda turns "gpu" on). */
static const struct runtime_ops stub_opt_in = {
	.name = "stub", .opt_in = true, .tag = STUB_TAG, .frames = FRAME_NATIVE, .new = stub_new,
	.free = stub_free,
};
static const struct runtime_ops *const opt_in_registry[] = { &stub_opt_in, NULL };

/* The registry turns runtimes off and on by name for every runtime alike (no runtime reads an
 * option of its own): one named off is never made, whatever its new would do, another name
 * leaves it on; an opt_in one is made only when named on, and off wins over on. */
static void test_runtime_off_by_name(void **state)
{
	static const char *const stub[] = { "stub" }, *const python[] = { "python" };
	const struct {
		const struct runtime_ops *const *reg;
		const char *const *off, *const *on;
		int news;
	} cases[] = {
		{ stub_registry, stub, NULL, 0 },        { stub_registry, python, NULL, 1 },
		{ stub_registry, NULL, python, 1 },      { opt_in_registry, NULL, NULL, 0 },
		{ opt_in_registry, NULL, python, 0 },    { opt_in_registry, NULL, stub, 1 },
		{ opt_in_registry, stub, stub, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&stub_log, 0, sizeof(stub_log));
		setup_cfg(state, (struct setup_cfg){ .reg = cases[i].reg, .off = cases[i].off,
						     .on = cases[i].on });
		struct world *w = *state;
		if (stub_log.news != cases[i].news)
			fail_msg("case %zu: %d made, wanted %d", i, stub_log.news, cases[i].news);
		assert_int_equal(runtime_set_find(recorder_runtimes(w->rec), cases[i].reg[0]) != NULL,
				 cases[i].news);
		teardown(state);
		assert_int_equal(stub_log.frees, cases[i].news);
	}
}

static int setup_stub_renew(void **state)
{
	memset(&stub_log, 0, sizeof(stub_log));
	return setup_cfg(state, (struct setup_cfg){ .reg = stub_registry, .renew = true });
}

/* Renewed tables forget the runtimes' resolved frames with the rest: a tagged value met again
 * after a renewal is resolved again and named, not given a location id of the old tables. */
static void test_renew_runtime_frames(void **state)
{
	struct world *w = *state;
	uint64_t v = ((0xa0ULL | STUB_TAG) << 56) | 42; /* FIRN_FRAME(STUB_TAG, 42) */

	started(w, PID, WORK);
	take(w, PID, PID, v, 3);
	cut(w);
	assert_int_equal(samples_named(w, PID, "stub_fn"), 3);
	assert_int_equal(stub_log.resolves, 1);
	cut_distinct(w, 0, 1280);
	assert_true(w->prof->nlocations <= 4 * 64);
	take(w, PID, PID, v, 2);
	cut(w);
	assert_int_equal(samples_named(w, PID, "stub_fn"), 2);
	assert_int_equal(stub_log.resolves, 2);
	finish(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exec_then_exit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_replaces_image, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pid_reuse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thread_exits_first, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exits_between_drains, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mmap_after_first_sample, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lost_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cut_twice, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cut_after_exit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cuts_identity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cuts_identity, setup_no_spill, teardown),
		cmocka_unit_test_setup_teardown(test_parked_in_memory, setup_no_spill, teardown),
		cmocka_unit_test_setup_teardown(test_process_labels, setup_labels, teardown),
		cmocka_unit_test_setup_teardown(test_no_process_labels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wait_until_due, setup_flips, teardown),
		cmocka_unit_test_setup_teardown(test_wait_unknown_source, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wait_drain_max, setup_drain_max, teardown),
		cmocka_unit_test_setup_teardown(test_renew_tables, setup_renew, teardown),
		cmocka_unit_test_setup_teardown(test_tables_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_before_flip_no_drain, setup_flips,
						teardown),
		cmocka_unit_test_setup_teardown(test_stub_runtime, setup_stub, teardown),
		cmocka_unit_test_setup_teardown(test_gone_not_attached, setup_stub, teardown),
		cmocka_unit_test_setup_teardown(test_context_labels, setup_stub, teardown),
		cmocka_unit_test(test_runtime_off_by_name),
		cmocka_unit_test_setup_teardown(test_renew_runtime_frames, setup_stub_renew,
						teardown),
		cmocka_unit_test_setup_teardown(test_no_reentry_while_retiring, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
