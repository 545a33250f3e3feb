/* firn record: sample CPU stacks (or take a stack at every USDT probe hit) of a command, of
 * processes or of the whole system with eBPF, symbolize them before the processes vanish, and
 * write a pprof (or folded) profile. */
#include "opt.h"
#include "target.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <libgen.h>
#include <malloc.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "folded.h"
#include "capture.h"
#include "common.h"
#include "diag.h"
#include "input.h"
#include "pprof.h"
#include "procmap.h"
#include "profile.h"
#include "sampler.h"
#include "symbolize.h"
#include "usdt.h"

enum record_format { FORMAT_PPROF, FORMAT_FOLDED };

struct record_opts {
	unsigned freq;
	double duration;        /* seconds, 0 = until the command exits or a signal */
	const char *output;
	struct target t;        /* -a, -p, or the command; --as-root */
	bool no_kernel, quiet, no_demangle;
	enum record_format format;
	unsigned pprof_flags;   /* what the pprof leaves out (PPROF_*); --addresses, --thread-labels */
	const char *call_graph;
	enum sampler_unwind unwind;
	long unwind_memory_mb;
	const char **events;    /* -e values in order; none: cpu-clock */
	int nevents;
};

#define TRIM_INTERVAL_NS 10000000000ULL /* malloc_trim after retirements, every 10 s at most */
#define PREFETCH_AFTER_NS 250000000ULL  /* kallsyms is loaded ahead after 250 ms of recording */
#define PARK_LIVE_INTERVAL_NS 1000000000ULL /* live entries are parked once a second at most */
#define MAX_ENTRIES_DEFAULT 65536       /* FIRN_MAX_ENTRIES */

enum { OPT_NO_KERNEL = 256, OPT_CALL_GRAPH, OPT_FORMAT, OPT_AS_ROOT, OPT_UNWIND_MEMORY, OPT_NO_DEMANGLE,
       OPT_ADDRESSES, OPT_THREAD_LABELS };

/* Splits "PATH:PROVIDER:NAME" (in place) at its last two colons; false when a part is empty. */
static bool split_usdt_spec(char *s, char **provider, char **name)
{
	char *c2 = strrchr(s, ':');

	if (!c2 || c2 == s)
		return false;
	*c2 = 0;
	char *c1 = strrchr(s, ':');
	*c2 = ':';
	if (!c1 || c1 == s || c1 + 1 == c2 || !c2[1])
		return false;
	*c1 = *c2 = 0;
	*provider = c1 + 1;
	*name = c2 + 1;
	return true;
}

/* Adds an -e value: "cpu-clock" or "usdt:PATH:PROVIDER:NAME". */
static int add_event(struct record_opts *o, const char *arg)
{
	char *copy, *provider, *name;
	bool ok = !strcmp(arg, "cpu-clock");

	if (!ok && !strncmp(arg, "usdt:", 5)) {
		if (!(copy = strdup(arg + 5)))
			return error("out of memory");
		ok = split_usdt_spec(copy, &provider, &name);
		free(copy);
	}
	if (!ok)
		return usage_error(&record_cmd, "invalid event '%s' (cpu-clock or usdt:PATH:PROVIDER:NAME)",
				   arg);
	const char **n = realloc(o->events, (o->nevents + 1) * sizeof(*n));
	if (!n)
		return error("out of memory");
	o->events = n;
	o->events[o->nevents++] = arg;
	return 0;
}

static int record_option(void *ctx, int id, const char *arg)
{
	struct record_opts *o = ctx;
	long v;

	switch (id) {
	case 'e':
		return add_event(o, arg);
	case 'F':
		if (opt_long(&record_cmd, "freq", arg, 1, 100000, &v))
			return 2;
		o->freq = v;
		return 0;
	case 'd':
		return opt_double(&record_cmd, "duration", arg, 0.001, 1e7, &o->duration);
	case 'o':
		o->output = arg;
		return 0;
	case 'p':
		return target_parse_pids(&o->t, &record_cmd, arg);
	case 'a':
		o->t.all = true;
		return 0;
	case 'q':
		o->quiet = true;
		return 0;
	case OPT_NO_KERNEL:
		o->no_kernel = true;
		return 0;
	case OPT_NO_DEMANGLE:
		o->no_demangle = true;
		return 0;
	case OPT_ADDRESSES:
		o->pprof_flags &= ~PPROF_FUNCTION_LINES;
		return 0;
	case OPT_THREAD_LABELS:
		o->pprof_flags &= ~PPROF_NO_THREAD_LABELS;
		return 0;
	case OPT_AS_ROOT:
		o->t.as_root = true;
		return 0;
	case OPT_CALL_GRAPH:
		o->call_graph = arg;
		return target_parse_call_graph(&record_cmd, arg, &o->unwind);
	case OPT_UNWIND_MEMORY:
		return opt_long(&record_cmd, "unwind-memory", arg, 1, 4096, &o->unwind_memory_mb);
	case OPT_FORMAT:
		if (!strcmp(arg, "pprof"))
			o->format = FORMAT_PPROF;
		else if (!strcmp(arg, "folded"))
			o->format = FORMAT_FOLDED;
		else
			return usage_error(&record_cmd, "invalid value '%s' for --format (pprof, folded)", arg);
		return 0;
	}
	return 2;
}

/* An object with attached probes. */
struct probed_object {
	dev_t dev;
	ino_t ino;
	char *path;  /* as attached (owned) */
	bool mapped; /* some process of the recording was seen mapping it */
};

/* A probe attached for the -e value spec (an index into record_opts.events) in object obj,
 * counted as event id. */
struct usdt_use {
	int spec;
	size_t obj;
	uint32_t id;
};

/* A process of the recording whose maps are looked at (at its first event, half a second
 * later, and at the end) for objects with attached probes, while one was never seen mapped. */
struct watched {
	pid_t pid;
	int checks;
	uint64_t due_ns;
};

#define WATCH_AGAIN_NS 500000000ULL /* libraries are mapped by then (dlopen at start-up) */

/* The events of a recording: cpu-clock and the USDT probes the -e specs matched, in sample
 * type order. Type names are owned. */
struct events {
	struct capture_event *list;
	unsigned n, cap;
	uint32_t next_id; /* of the next USDT probe (ids count from 1) */
	struct probed_object *objs; /* objects with attached probes (for -a: who maps them) */
	size_t nobjs;
	struct usdt_use *uses; /* which -e spec attached which probe where (warn_unmapped) */
	size_t nuses;
	int cur_spec;     /* the -e value being attached */
	struct watched *watch; /* processes whose maps tell whether they map a probed object */
	size_t nwatch;
	pid_t *announced; /* processes snapshotted before their first event (not yet counted) */
	size_t nannounced;
};

/* A known process that called exec: its new image's snapshot waits until the samples it took
 * before are symbolized with the old one. */
struct pending_exec {
	pid_t pid;
	struct symbolizer_snapshot *next; /* NULL when it could not be taken (yet) */
};

/* State of one recording. */
struct recording {
	struct record_opts *o;
	struct symbolizer *sym;
	struct sampler *sampler;
	struct profile prof;
	struct capture *cap;   /* fills prof: processes that end are symbolized as they go */
	char *spill_dir;       /* the output's folder (parked samples); NULL: $TMPDIR (stdout, devices) */
	uint64_t retired_since_trim, last_trim_ns; /* see retire_ended */
	size_t max_entries;    /* entries held before live processes' are parked too */
	uint32_t stack_entries; /* FIRN_STACK_MAP_ENTRIES (0: the sampler's default) */
	struct pending_exec *execs; /* known processes that called exec (handle_execs) */
	size_t nexecs, cap_execs;
	struct pending_exec *handling; /* the ones handle_execs works on (events come meanwhile) */
	size_t nhandling;
	uint64_t last_park_live_ns;
	uint64_t start_ns, end_ns;
	struct events ev;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* pid's pending exec (queued, or being handled), or NULL. */
static struct pending_exec *exec_pending(const struct recording *r, pid_t pid)
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
static void retake(struct recording *r, struct pending_exec *x)
{
	struct symbolizer_snapshot *snap = symbolizer_take(r->sym, x->pid);

	if (!snap)
		return;
	symbolizer_snapshot_free(r->sym, x->next);
	x->next = snap;
}

/* Queues a known process that called exec for handle_execs; false when out of memory (then its
 * snapshot is simply replaced, as before). */
static bool queue_exec(struct recording *r, pid_t pid)
{
	if (r->nexecs == r->cap_execs) {
		size_t ncap = r->cap_execs ? r->cap_execs * 2 : 16;
		struct pending_exec *n = realloc(r->execs, ncap * sizeof(*n));
		if (!n)
			return false;
		r->execs = n;
		r->cap_execs = ncap;
	}
	r->execs[r->nexecs] = (struct pending_exec){ pid, NULL };
	retake(r, &r->execs[r->nexecs++]);
	return true;
}

static int cpu_clock_events(const struct record_opts *o);

/* With USDT events of -p or a command: has the loop look at pid's maps (check_watched) at once,
 * whether it maps an object with probes. Out of memory: not watched. */
static void watch_process(struct recording *r, pid_t pid)
{
	struct watched *n;

	if (r->o->t.all || r->o->nevents == cpu_clock_events(r->o))
		return;
	for (size_t i = 0; i < r->ev.nwatch; i++)
		if (r->ev.watch[i].pid == pid) {
			r->ev.watch[i].checks = 0; /* exec: a new image */
			r->ev.watch[i].due_ns = 0;
			return;
		}
	if (!(n = realloc(r->ev.watch, (r->ev.nwatch + 1) * sizeof(*n))))
		return;
	r->ev.watch = n;
	r->ev.watch[r->ev.nwatch++] = (struct watched){ pid, 0, 0 };
}

/* Sampler callback: snapshot a process's mappings while it lives. */
static void on_process(void *ctx, pid_t pid, bool exec)
{
	struct recording *r = ctx;
	struct pending_exec *x;
	bool announced = false;

	watch_process(r, pid);

	for (size_t i = 0; i < r->ev.nannounced && !announced; i++)
		if ((announced = r->ev.announced[i] == pid))
			r->ev.announced[i] = r->ev.announced[--r->ev.nannounced];
	if (!announced && symbolizer_has_process(r->sym, pid)) {
		if ((x = exec_pending(r, pid))) {
			retake(r, x); /* the first sample after the exec announces it again */
			return;
		}
		if (exec && queue_exec(r, pid))
			return; /* handle_execs: its samples so far are symbolized with its old image */
	}
	symbolizer_add_process(r->sym, pid);
	symbolizer_add_process_later(r->sym, pid, mono_ns()); /* on failure the first one stays */
}


/* The unwinder met code without a table (JIT code): the process's perf map may have appeared
 * since its snapshot, which must open it while the process lives. */
static void on_code(void *ctx, pid_t pid, uint64_t addr)
{
	struct recording *r = ctx;

	(void)addr;
	symbolizer_note_jit(r->sym, pid);
}

/* sampler_retire callbacks: an entry of a process that ended is symbolized once its files are
 * indexed (by the symbolizer's worker, so the loop never waits for one), then the process's
 * snapshot goes. Process events are handled between entries: new processes are snapshotted
 * while ended ones are symbolized. */
static bool entry_ready(void *ctx, const struct sampler_entry *e)
{
	struct recording *r = ctx;

	return capture_ready(r->cap, e);
}

/* Live processes waiting for their second snapshot are better symbolized after it. */
static bool live_entry_ready(void *ctx, const struct sampler_entry *e)
{
	struct recording *r = ctx;

	return !symbolizer_refresh_pending(r->sym, e->pid) && capture_ready(r->cap, e);
}

static int park_entry(void *ctx, const struct sampler_entry *e)
{
	struct recording *r = ctx;

	sampler_handle_events(r->sampler);
	return capture_park(r->cap, e);
}

static void forget_process(void *ctx, pid_t pid)
{
	struct recording *r = ctx;

	symbolizer_remove_process(r->sym, pid);
}

/* Whether an entry of a process that called exec was taken before it: every user frame is in a
 * file of the old image (the snapshot still in place); those after it run the new image. */
static bool of_old_image(void *ctx, const struct sampler_entry *e)
{
	struct recording *r = ctx;

	for (uint32_t i = 0; i < e->ulen; i++)
		if (!symbolizer_maps_file(r->sym, e->pid, e->ustack[i]))
			return false;
	return true;
}

/* The samples a process took before its exec: drained now, told from the ones after it by their
 * addresses (of_old_image), symbolized with the snapshot of its old image and parked; then the
 * new image's snapshot (taken at the exec, or at the first sample after it) is installed. Runs
 * from the loop, never inside a sampler callback. */
static int handle_execs(struct recording *r)
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
		int n = sampler_park_process(r->sampler, xs[i].pid, &old);
		err = n < 0 ? n : 0;
	}
	if (!err)
		err = sampler_drain(r->sampler);
	for (size_t i = 0; i < nx; i++) {
		int n = err ? 0 : sampler_park_process(r->sampler, xs[i].pid, &old);
		err = n < 0 ? n : err;
		retake(r, &xs[i]); /* the latest is the most complete, if the process still lives */
		if (xs[i].next)
			symbolizer_install(r->sym, xs[i].next);
		symbolizer_add_process_later(r->sym, xs[i].pid, mono_ns());
		xs[i].pid = 0; /* handled: its next first-sample announcement is an ordinary one */
	}
	r->handling = NULL;
	r->nhandling = 0;
	free(xs);
	return err;
}

/* Symbolizes and forgets the processes that have ended; gives freed memory back to the system
 * now and then (glibc keeps it otherwise, and RSS would only ever grow). */
static int retire_ended(struct recording *r)
{
	struct sampler_retire_ops ops = { .ready = entry_ready, .park = park_entry,
					  .gone = forget_process, .ctx = r };
	uint64_t now = mono_ns();
	int n = sampler_retire(r->sampler, &ops);

	if (n < 0)
		return n;
	r->retired_since_trim += n;
	/* live processes that keep making new stacks: park their entries too, past the bound */
	if (sampler_entry_count(r->sampler) > r->max_entries &&
	    now - r->last_park_live_ns >= PARK_LIVE_INTERVAL_NS) {
		struct sampler_retire_ops live = { .select = live_entry_ready, .park = park_entry,
						   .ctx = r };
		int k = sampler_park_live(r->sampler, &live);
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

static void check_watched(struct recording *r, bool final);

/* The sampling loop: until the command exits, the duration passes or a signal arrives. */
static int sample_loop(struct recording *r)
{
	uint64_t limit = r->o->duration > 0 ? (uint64_t)(r->o->duration * 1e9) : 0;
	bool prefetched = r->o->no_kernel;

	for (;;) {
		/* kallsyms loads in a thread once the recording outlives a short command (which
		 * may need no kernel frame at all), before the first processes are retired */
		if (!prefetched && wall_ns() - r->start_ns >= PREFETCH_AFTER_NS)
			prefetched = !symbolizer_prefetch_kernel(r->sym);
		int err = sampler_poll(r->sampler, 50);
		if (err && err != -EINTR)
			return error("cannot read samples: %s", strerror(-err));
		if ((err = handle_execs(r)))
			return error("cannot symbolize the samples taken before an exec: %s",
				     strerror(-err));
		if ((err = retire_ended(r)))
			return error("cannot symbolize the samples of ended processes: %s",
				     strerror(-err));
		symbolizer_refresh_due(r->sym, mono_ns());
		check_watched(r, false);
		target_reap(&r->o->t, WNOHANG);
		if (r->o->t.child_done || target_stop_signal())
			return 0;
		if (limit && wall_ns() - r->start_ns >= limit)
			return 0;
		if (r->o->t.npids && !target_pids_alive(&r->o->t))
			return 0;
	}
}

/* Writes buf to stdout for "-", else with file_replace_atomic as w says (a device or FIFO is
 * written through). */
static int emit(const char *out, const void *buf, size_t len, struct file_write *w)
{
	if (strcmp(out, "-"))
		return file_replace_atomic(out, buf, len, w);
	if (fwrite(buf, 1, len, stdout) != len || fflush(stdout))
		return -errno;
	return 0;
}

/* Encodes the profile as gzipped pprof or folded text into *buf (malloc'd). */
static int encode_profile(struct recording *r, void **buf, size_t *len)
{
	if (r->o->format == FORMAT_PPROF)
		return pprof_encode_flags(&r->prof, true, r->o->pprof_flags, buf, len);
	char *text = NULL;
	FILE *f = open_memstream(&text, len);
	if (!f)
		return -errno;
	struct folded_opts fo = { .comm_first = true, .comm_header = true,
				  .annotate_inline = true, .value_index = 0 };
	int err = folded_write(&r->prof, f, &fo);
	if (fclose(f) && !err)
		err = -EIO;
	*buf = text;
	return err;
}

/* How the profile is written: mode 0600 (it holds the kernel's addresses), the old file kept
 * as FILE.old, and under sudo given to the invoking user before it appears. */
static struct file_write profile_write_opts(void)
{
	struct file_write w = { .mode = 0600, .keep_old = true };
	const char *u = getenv("SUDO_UID"), *g = getenv("SUDO_GID");

	if (getuid() == 0 && u && g) {
		w.chown = true;
		w.uid = strtoul(u, NULL, 10);
		w.gid = strtoul(g, NULL, 10);
	}
	return w;
}

/* The output failed at the end (full disk, FILE.old a directory): rather than lose the
 * recording, saves it as a new file in $TMPDIR (default /tmp) and says where; returns 1. */
static int save_elsewhere(struct recording *r, const void *buf, size_t len, int err,
			  const struct file_write *w, char **saved)
{
	const char *out = r->o->output, *dir = getenv("TMPDIR");
	const char *ext = r->o->format == FORMAT_PPROF ? ".pb.gz" : ".folded";
	char *old = NULL, *tmpl = NULL;

	if (w->old_failed && asprintf(&old, "%s.old", out) < 0)
		old = NULL;
	const char *verb = old ? "replace" : "write";
	const char *name = old ? old : strcmp(out, "-") ? out : "<stdout>";
	const char *why = old ? strerror(-err) : output_strerror(out, err);
	if (!dir || !*dir)
		dir = "/tmp";
	int serr = asprintf(&tmpl, "%s/firn-XXXXXX%s", dir, ext) < 0 ? -ENOMEM : 0;
	if (!serr)
		serr = file_write_new(tmpl, strlen(ext), buf, len, w);
	if (serr)
		error("cannot %s '%s': %s; cannot save the profile in '%s' either: %s", verb, name,
		      why, dir, strerror(-serr));
	else
		error("cannot %s '%s': %s; the profile was saved as '%s'", verb, name, why, tmpl);
	free(old);
	if (serr)
		free(tmpl);
	else
		*saved = tmpl;
	return 1;
}

/* Output: encode the profile, write it, or save it elsewhere when that fails (*saved: where,
 * malloc'd; the error is printed, 1 returned). */
static int write_profile(struct recording *r, size_t *bytes, char **saved)
{
	struct file_write w = profile_write_opts();
	void *buf = NULL;
	size_t len = 0;
	int err = encode_profile(r, &buf, &len);

	if (err) {
		free(buf);
		return error("cannot encode the profile: %s", strerror(-err));
	}
	if ((err = emit(r->o->output, buf, len, &w)))
		err = save_elsewhere(r, buf, len, err, &w, saved);
	free(buf);
	*bytes = len;
	return err;
}

/* The sum of the values of sample type name in p. */
static int64_t type_total(const struct profile *p, const char *name)
{
	int64_t sum = 0;

	for (uint32_t t = 0; t < p->nsample_types; t++) {
		if (strcmp(profile_str(p, p->sample_types[t].type), name))
			continue;
		for (uint64_t i = 0; i < p->nsamples; i++)
			sum += p->samples[i].values[t];
	}
	return sum;
}

/* The unwinding line: every sample, complete or truncated (by reason), or without a user stack. */
static void print_unwind_summary(const struct sampler_stats *st)
{
	uint64_t all = 0, truncated = 0;

	for (int i = 0; i < 7; i++)
		all += st->unwind[i];
	for (int i = 1; i < 6; i++)
		truncated += st->unwind[i];
	uint64_t user = all - st->unwind[6];
	fprintf(stderr,
		"firn: dwarf unwinding: %llu samples, %llu with a user stack: %.1f%% complete, "
		"%llu truncated (no mapping %llu, no row %llu, unsupported rule %llu, "
		"unreadable stack %llu, depth %llu); frame pointers used in %llu, mappings found "
		"by the kernel in %llu; tables: %llu files, %llu rows, %.1f MiB",
		(unsigned long long)all, (unsigned long long)user,
		user ? 100.0 * st->unwind[0] / user : 0.0, (unsigned long long)truncated,
		(unsigned long long)st->unwind[1], (unsigned long long)st->unwind[2],
		(unsigned long long)st->unwind[3], (unsigned long long)st->unwind[4],
		(unsigned long long)st->unwind[5], (unsigned long long)st->unwind[7],
		(unsigned long long)st->unwind[8], (unsigned long long)st->unwind_files,
		(unsigned long long)st->unwind_rows, st->unwind_bytes / 1048576.0);
	if (st->unwind_too_many_maps)
		fprintf(stderr, ", %llu mappings past the per-process limit",
			(unsigned long long)st->unwind_too_many_maps);
	fputc('\n', stderr);
}

/* The summary line on stderr (and one line per USDT probe: its hits): samples taken = samples
 * in the profile + lost; out: the file written. */
static void print_summary(struct recording *r, const struct sampler_stats *st, size_t bytes,
			  const char *out)
{
	uint64_t lost = st->taken > st->stored ? st->taken - st->stored : 0;
	bool std = !strcmp(out, "-"); /* "wrote standard output", not "wrote '-'" */
	/* the processes in the profile, counted as firn report counts them */
	uint64_t procs = profile_distinct_pids(&r->prof);

	fprintf(stderr,
		"firn: %llu samples, %llu lost (counts map full %llu, stack map full %llu), "
		"%llu taken (user stack unreadable in %llu), %llu process%s, %.2f s, wrote %s%s%s "
		"(%zu bytes)\n",
		(unsigned long long)st->stored, (unsigned long long)lost,
		(unsigned long long)st->counts_full, (unsigned long long)st->stacks_full,
		(unsigned long long)st->taken, (unsigned long long)st->user_stack_errors,
		(unsigned long long)procs, procs == 1 ? "" : "es", (r->end_ns - r->start_ns) / 1e9,
		std ? "" : "'",
		std ? "standard output" : out, std ? "" : "'", bytes);
	for (unsigned i = 0; i < r->ev.n; i++) {
		if (!r->ev.list[i].id)
			continue;
		long long hits = type_total(&r->prof, r->ev.list[i].type);
		fprintf(stderr, "firn: %s: %lld hit%s\n", r->ev.list[i].type, hits, hits == 1 ? "" : "s");
	}
	if (r->o->unwind != UNWIND_FP)
		print_unwind_summary(st);
}

/* What the capture knows from the start: the events, the frequency, where to park samples. */
static struct capture_meta capture_meta_of(const struct recording *r)
{
	return (struct capture_meta){
		.freq = r->o->freq,
		.call_graph = r->o->call_graph,
		.events = r->ev.n ? r->ev.list : NULL,
		.nevents = r->ev.n,
		.event_specs = r->o->events,
		.nevent_specs = r->o->nevents,
		.spill_dir = r->spill_dir,
	};
}

/* Starts the profile once the events are known (before sampling). */
static int start_capture(struct recording *r)
{
	struct capture_meta m;

	/* a device or FIFO's folder (/dev) is no place for them: $TMPDIR is */
	if (strcmp(r->o->output, "-") && file_write_kind(r->o->output) == FILE_WRITE_REPLACE) {
		char *copy = strdup(r->o->output);
		r->spill_dir = copy ? strdup(dirname(copy)) : NULL;
		free(copy);
		if (!r->spill_dir)
			return error("out of memory");
	}
	m = capture_meta_of(r);
	if (profile_init(&r->prof))
		return error("out of memory");
	if (!(r->cap = capture_new(&r->prof, r->sym, &m)))
		return error("cannot start the profile: %s", strerror(errno));
	/* a thread indexes the files that the processes that end need (kallsyms: see
	 * sample_loop) */
	symbolizer_index_ahead(r->sym);
	return 0;
}

/* After sampling: drain, symbolize into a profile, write it, print the summary. */
static int finish_recording(struct recording *r, int argc, char **argv)
{
	struct sampler_stats st;
	struct utsname un;
	size_t bytes = 0;
	int err = sampler_drain(r->sampler);

	if (!err)
		err = sampler_drain(r->sampler);
	if (!err)
		err = handle_execs(r);
	if (err)
		return error("cannot read samples: %s", strerror(-err));
	sampler_get_stats(r->sampler, &st);
	uname(&un);
	struct capture_meta m = capture_meta_of(r);
	m.start_ns = r->start_ns;
	m.end_ns = r->end_ns;
	m.argc = argc;
	m.argv = argv;
	m.kernel = un.release;
	m.ncpus = sampler_ncpus(r->sampler);
	m.stats = &st;
	struct symbolizer_stats ss;
	symbolizer_stats(r->sym, &ss);
	diag(DIAG_INFO, "held at the end: %llu entries, %llu stacks, %llu threads; %llu snapshots, "
	     "%llu files (%llu unused); %llu processes retired", (unsigned long long)st.entries,
	     (unsigned long long)st.stacks, (unsigned long long)st.threads,
	     (unsigned long long)ss.processes, (unsigned long long)ss.files,
	     (unsigned long long)ss.idle_files, (unsigned long long)st.retired_processes);
	if ((err = capture_finish(r->cap, r->sampler, &m)))
		return error("cannot build the profile: %s", strerror(-err));
	char *saved = NULL;
	err = write_profile(r, &bytes, &saved);
	if (!r->o->quiet && (!err || saved))
		print_summary(r, &st, bytes, saved ? saved : r->o->output);
	free(saved);
	return err;
}

#define RECORD_USAGE                       \
	"[OPTIONS] -- COMMAND [ARGS...]\n" \
	"[OPTIONS] -p PID[,PID...]\n"      \
	"[OPTIONS] -a"

static const struct opt record_opts[] = {
	{ "all-cpus", 'a', NULL, "profile the whole system", 'a' },
	{ "pid", 'p', "PID[,PID...]", "profile these processes (all their threads)", 'p' },
	{ "event", 'e', "EVENT", "cpu-clock (default), or usdt:PATH:PROVIDER:NAME: a stack at every probe hit; repeatable", 'e' },
	{ "freq", 'F', "HZ", "samples per second per CPU (default 99)", 'F' },
	{ "duration", 'd', "SECONDS", "stop after this long (default: when the command exits, or Ctrl-C)", 'd' },
	{ "output", 'o', "FILE", "write the profile here (default firn.pb.gz; - for stdout)", 'o' },
	{ "format", 0, "FORMAT", "output format: pprof (default) or folded", OPT_FORMAT },
	{ "call-graph", 0, "MODE", "how user stacks are unwound: auto (default), dwarf or fp", OPT_CALL_GRAPH },
	{ "unwind-memory", 0, "MB", "memory for DWARF unwind tables (default 32)", OPT_UNWIND_MEMORY },
	{ "no-kernel", 0, NULL, "do not take kernel stacks", OPT_NO_KERNEL },
	{ "no-demangle", 0, NULL, "show C++ and Rust names as the binary has them", OPT_NO_DEMANGLE },
	{ "addresses", 0, NULL, "one pprof location per sampled address (for report --annotate), not per source line", OPT_ADDRESSES },
	{ "thread-labels", 0, NULL, "label pprof samples with tid and thread (thread name) too", OPT_THREAD_LABELS },
	{ "as-root", 0, NULL, "under sudo, run the command as root instead of the invoking user", OPT_AS_ROOT },
	{ "quiet", 'q', NULL, "do not print the summary line", 'q' },
	OPT_END,
};

/* Appends an event (taking type); returns 0 or -ENOMEM (type freed). */
static int events_push(struct events *ev, uint32_t id, char *type)
{
	if (ev->n == ev->cap) {
		unsigned ncap = ev->cap ? ev->cap * 2 : 8;
		struct capture_event *n = realloc(ev->list, ncap * sizeof(*n));
		if (!n) {
			free(type);
			return -ENOMEM;
		}
		ev->list = n;
		ev->cap = ncap;
	}
	ev->list[ev->n++] = (struct capture_event){ id, type };
	return 0;
}

static void events_release(struct events *ev)
{
	for (unsigned i = 0; i < ev->n; i++)
		free((char *)ev->list[i].type);
	free(ev->list);
	for (size_t i = 0; i < ev->nobjs; i++)
		free(ev->objs[i].path);
	free(ev->objs);
	free(ev->uses);
	free(ev->watch);
	free(ev->announced);
}

/* Remembers the object at path (it has attached probes): its index, or -ENOMEM; -ENOENT when
 * it cannot be looked at (then it is not remembered). */
static long events_add_object(struct events *ev, const char *path)
{
	struct probed_object *n;
	struct stat st;

	if (stat(path, &st))
		return -ENOENT;
	for (size_t i = 0; i < ev->nobjs; i++)
		if (ev->objs[i].dev == st.st_dev && ev->objs[i].ino == st.st_ino)
			return i;
	char *copy = strdup(path);
	if (!copy || !(n = realloc(ev->objs, (ev->nobjs + 1) * sizeof(*n)))) {
		free(copy);
		return -ENOMEM;
	}
	ev->objs = n;
	ev->objs[ev->nobjs] = (struct probed_object){ st.st_dev, st.st_ino, copy, false };
	return ev->nobjs++;
}

/* True when process pid maps one of the objects with attached probes (each one it maps is
 * marked mapped); -1 when its maps cannot be read (it is gone). */
static int maps_probed_object(struct events *ev, pid_t pid)
{
	struct procmap m;
	bool found = false;

	if (procmap_read(&m, pid))
		return -1;
	for (size_t i = 0; i < m.n; i++)
		for (size_t j = 0; j < ev->nobjs; j++)
			if (m.entries[i].kind == PROCMAP_FILE && m.entries[i].inode == ev->objs[j].ino &&
			    makedev(m.entries[i].dev_major, m.entries[i].dev_minor) == ev->objs[j].dev)
				found = ev->objs[j].mapped = true;
	size_t n = m.n;
	procmap_release(&m);
	return n ? found : -1; /* no maps: a zombie */
}

/* Looks at the maps of the watched processes that are due (all of them when final), while
 * some object was never seen mapped; forgets those that are gone. After two looks a process
 * waits for the final one. */
static void check_watched(struct recording *r, bool final)
{
	struct events *ev = &r->ev;
	uint64_t now = mono_ns();
	bool unmapped = false;
	size_t kept = 0;

	for (size_t j = 0; j < ev->nobjs && !unmapped; j++)
		unmapped = !ev->objs[j].mapped;
	for (size_t i = 0; i < ev->nwatch; i++) {
		struct watched w = ev->watch[i];
		if (unmapped && (final || w.due_ns <= now)) {
			if (maps_probed_object(ev, w.pid) < 0)
				continue;
			w.due_ns = ++w.checks == 1 ? now + WATCH_AGAIN_NS : UINT64_MAX;
		}
		ev->watch[kept++] = w;
	}
	ev->nwatch = unmapped ? kept : 0;
}

/* After a -p or command recording: a -e usdt spec without a hit whose objects no process of
 * the recording was seen mapping gets a warning naming them (a program name resolved to a
 * different file than the command ran: a pyenv shim, a container's copy). */
static void warn_unmapped(struct recording *r)
{
	for (int s = 0; s < r->o->nevents && !r->o->t.all; s++) {
		int64_t hits = 0;
		bool mapped = false, *used = calloc(r->ev.nobjs + 1, sizeof(*used));
		char paths[1024] = "";
		if (!used)
			return;
		for (size_t u = 0; u < r->ev.nuses; u++) {
			const struct usdt_use *use = &r->ev.uses[u];
			if (use->spec != s)
				continue;
			for (unsigned i = 0; i < r->ev.n; i++)
				if (r->ev.list[i].id == use->id)
					hits += type_total(&r->prof, r->ev.list[i].type);
			mapped |= r->ev.objs[use->obj].mapped;
			used[use->obj] = true;
		}
		for (size_t j = 0, len = 0; j < r->ev.nobjs && len < sizeof(paths); j++)
			if (used[j])
				len += snprintf(paths + len, sizeof(paths) - len, "%s'%s'", len ? ", " : "",
						r->ev.objs[j].path);
		if (*paths && !hits && !mapped)
			warning("no hits for '%s': no process of the recording was seen mapping %s, where "
				"its probes were attached", r->o->events[s], paths);
		free(used);
	}
}

/* -a: snapshots and loads the unwind tables of the processes that map a probed object now, so
 * that their first hits (often a burst) unwind and symbolize; they count as processes of the
 * recording at their first event. */
static void announce_mappers(struct recording *r)
{
	DIR *d = opendir("/proc");

	for (struct dirent *de; d && (de = readdir(d));) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || pid == getpid() || maps_probed_object(&r->ev, pid) <= 0)
			continue;
		pid_t *n = realloc(r->ev.announced, (r->ev.nannounced + 1) * sizeof(*n));
		if (!n)
			break;
		r->ev.announced = n;
		if (sampler_add_target(r->sampler, pid, false) || symbolizer_add_process(r->sym, pid))
			continue;
		r->ev.announced[r->ev.nannounced++] = pid;
	}
	if (d)
		closedir(d);
}

/* Attaches probe p (found in the object at path) for pid under its event ("usdt_PROVIDER_NAME",
 * added on the first success). A failure is a warning; *attached counts successes. */
static int attach_probe(struct recording *r, pid_t pid, const char *path,
			const struct usdt_probe *p, int *attached)
{
	char *type = NULL;
	unsigned i;

	if (asprintf(&type, "usdt_%s_%s", p->provider, p->name) < 0)
		return error("out of memory");
	for (i = 0; i < r->ev.n && strcmp(r->ev.list[i].type, type); i++)
		;
	uint32_t id = i < r->ev.n ? r->ev.list[i].id : r->ev.next_id;
	int err = sampler_attach_usdt(r->sampler, pid, path, p->provider, p->name, id);
	if (err) {
		warning("cannot attach to USDT probe %s:%s of '%s': %s", p->provider, p->name, path,
			strerror(-err));
		free(type);
		return 0;
	}
	if (pid > 0)
		diag(DIAG_INFO, "%s: attached %s:%s in '%s' for process %d",
		     r->o->events[r->ev.cur_spec], p->provider, p->name, path, (int)pid);
	else
		diag(DIAG_INFO, "%s: attached %s:%s in '%s'", r->o->events[r->ev.cur_spec],
		     p->provider, p->name, path);
	(*attached)++;
	struct usdt_use *u = realloc(r->ev.uses, (r->ev.nuses + 1) * sizeof(*u));
	if (!u) {
		free(type);
		return error("out of memory");
	}
	r->ev.uses = u;
	r->ev.uses[r->ev.nuses++] = (struct usdt_use){ r->ev.cur_spec, SIZE_MAX, id };
	if (i < r->ev.n) {
		free(type);
		return 0;
	}
	r->ev.next_id++;
	return events_push(&r->ev, id, type) ? error("out of memory") : 0;
}

/* Attaches the probes of object obj (a path, or a name resolved in pid when pid > 0) matching
 * the globs provider:name, each name once (libbpf attaches all of its sites). For pid > 0 the
 * object is the one the process sees, reached through /proc/PID/root (a container's). */
static int attach_object(struct recording *r, pid_t pid, const char *obj, const char *provider,
			 const char *name, int *attached)
{
	char path[PATH_MAX];
	struct usdt_list l;
	size_t uses = r->ev.nuses;
	int before = *attached, err = usdt_resolve_in_root(obj, pid, path, sizeof(path));

	if (err && pid > 0) {
		/* one of several processes may lack it: the event fails only if none has it */
		warning("cannot find '%s' in process %d: %s", obj, (int)pid, strerror(-err));
		return 0;
	}
	if (err)
		return error("cannot find '%s': %s", obj, strerror(-err));
	usdt_list_init(&l);
	int n = usdt_list_file(&l, path, NULL);
	if (n < 0)
		err = error("cannot read the USDT probes of '%s': %s", path,
			    n == -ENOEXEC ? "not an ELF file" : strerror(-n));
	for (size_t i = 0; i < l.n && !err; i++) {
		const struct usdt_probe *p = &l.probes[i];
		bool dup = false;
		for (size_t j = 0; j < i && !dup; j++)
			dup = !strcmp(l.probes[j].provider, p->provider) && !strcmp(l.probes[j].name, p->name);
		if (!dup && !fnmatch(provider, p->provider, 0) && !fnmatch(name, p->name, 0))
			err = attach_probe(r, pid, path, p, attached);
	}
	usdt_list_release(&l);
	long idx = !err && *attached > before ? events_add_object(&r->ev, path) : -ENOENT;
	if (idx == -ENOMEM)
		err = error("out of memory");
	/* an object that cannot be looked at (idx -ENOENT) is not known to warn_unmapped */
	while (r->ev.nuses > uses && idx < 0)
		r->ev.nuses--;
	for (size_t u = uses; u < r->ev.nuses; u++)
		r->ev.uses[u].obj = idx;
	return err;
}

/* Attaches one "usdt:PATH:PROVIDER:NAME" event: in each -p process, else in every process (the
 * BPF target filter keeps a command's). No match at all is an error. */
static int attach_usdt_event(struct recording *r, const char *spec)
{
	char *copy = strdup(spec + 5), *provider, *name;
	int attached = 0, err = 0;

	if (!copy || !split_usdt_spec(copy, &provider, &name)) {
		free(copy);
		return error("out of memory");
	}
	for (int i = 0; i < r->o->t.npids && !err; i++)
		err = attach_object(r, r->o->t.pids[i], copy, provider, name, &attached);
	if (!r->o->t.npids)
		err = attach_object(r, -1, copy, provider, name, &attached);
	if (!err && !attached)
		err = error("no USDT probe matches '%s'", spec);
	free(copy);
	return err;
}

/* Attaches the -e events in order; their sample types follow that order. */
static int attach_events(struct recording *r)
{
	bool cpu = false;

	r->ev.next_id = 1;
	for (int i = 0; i < r->o->nevents; i++) {
		int err = 0;
		r->ev.cur_spec = i;
		if (strcmp(r->o->events[i], "cpu-clock"))
			err = attach_usdt_event(r, r->o->events[i]);
		else if (!cpu) {
			char *type = strdup("samples");
			cpu = true;
			err = !type || events_push(&r->ev, 0, type) ? error("out of memory") : 0;
		}
		if (err)
			return err;
	}
	if (r->o->t.all && r->ev.nobjs)
		announce_mappers(r);
	return 0;
}

/* How many -e values are cpu-clock. */
static int cpu_clock_events(const struct record_opts *o)
{
	int n = 0;

	for (int i = 0; i < o->nevents; i++)
		n += !strcmp(o->events[i], "cpu-clock");
	return n;
}

/* Sets up the symbolizer and the sampler, the targets and the USDT probes. */
static int setup(struct recording *r)
{
	const char *why = "";
	struct sampler_opts so = {
		.freq = r->o->freq,
		.all = r->o->t.all,
		.follow_children = true,
		.kernel = !r->o->no_kernel,
		.user = true,
		.unwind = r->o->unwind,
		.unwind_memory = (uint64_t)r->o->unwind_memory_mb << 20,
		.stack_entries = r->stack_entries,
		.no_cpu_clock = r->o->nevents && !cpu_clock_events(r->o),
		.usdt = r->o->nevents > cpu_clock_events(r->o),
		.retire = true,
		.on_process = on_process,
		.on_code = on_code,
		.ctx = r,
	};

	struct symbolizer_opts syo;
	symbolizer_opts_init(&syo);
	syo.demangle = !r->o->no_demangle;
	r->sym = symbolizer_new_opts(&syo);
	if (!r->sym)
		return error("cannot start the symbolizer: %s", strerror(errno));
	r->sampler = sampler_new(&so, &why);
	if (!r->sampler)
		return error("cannot %s: %s", why, strerror(errno));
	for (int i = 0; i < r->o->t.npids; i++) {
		int err = sampler_add_target(r->sampler, r->o->t.pids[i], false);
		if (err)
			return error("cannot add pid %d: %s", r->o->t.pids[i], strerror(-err));
		on_process(r, r->o->t.pids[i], false);
	}
	return attach_events(r);
}

/* Starts sampling (and the command, held until the sampler is attached). */
static int start(struct recording *r, char **argv)
{
	struct target *t = &r->o->t;
	const char *why = "";
	int err;

	if (argv && argv[0]) {
		if ((err = target_start_command(t, argv)))
			return error("cannot start '%s': %s", argv[0], strerror(-err));
		if ((err = sampler_add_target(r->sampler, t->child, true)))
			return error("cannot add pid %d: %s", t->child, strerror(-err));
		sampler_prepare_exec(r->sampler, argv[0]); /* its first samples need the tables */
	}
	if ((err = sampler_start(r->sampler, &why))) {
		if (t->child)
			kill(t->child, SIGKILL), target_reap(t, 0);
		return error("cannot %s: %s", why, strerror(-err));
	}
	r->start_ns = wall_ns();
	if (t->child && (err = target_release_command(t))) {
		error("cannot run '%s': %s", argv[0], strerror(err));
		return err == ENOENT ? 127 : 126;
	}
	return 0;
}

/* Whether replacing the file at path (which exists, st) in the folder dir would be refused: in
 * a sticky folder (/tmp) only the file's or the folder's owner may, and a process without
 * CAP_FOWNER is not exempt (root is). */
static bool sticky_refuses(const char *dir, const struct stat *st)
{
	struct stat dst;
	uid_t me = geteuid();

	return me != 0 && !stat(dir, &dst) && (dst.st_mode & S_ISVTX) && st->st_uid != me &&
	       dst.st_uid != me;
}

/* FIRN_MAX_ENTRIES (default MAX_ENTRIES_DEFAULT) into *max; prints the error and returns 1 when
 * it is not a number of entries. */
static int max_entries(size_t *max)
{
	const char *v = getenv("FIRN_MAX_ENTRIES");
	char *end;

	*max = MAX_ENTRIES_DEFAULT;
	if (!v || !*v)
		return 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (*end || !n || n > SIZE_MAX / 64)
		return error("invalid FIRN_MAX_ENTRIES '%s' (a number of entries, 1 or more)", v);
	*max = n;
	return 0;
}

/* FIRN_STACK_MAP_ENTRIES (stacks the kernel holds between drains; unset: the sampler's default)
 * into *n; prints the error and returns 1 when it is not a number from 1 to 2^24. */
static int stack_map_entries(uint32_t *n)
{
	const char *v = getenv("FIRN_STACK_MAP_ENTRIES");
	char *end;

	*n = 0;
	if (!v || !*v)
		return 0;
	unsigned long long x = strtoull(v, &end, 10);
	if (*end || !x || x > 1u << 24)
		return error("invalid FIRN_STACK_MAP_ENTRIES '%s' (a number of stacks, 1 to 16777216)", v);
	*n = x;
	return 0;
}

/* Whether FILE.old, where the file at path is kept at the end, could not be replaced then:
 * a directory, or another user's file in a sticky folder dir. Prints the error (1) or 0. */
static int check_old(const char *path, const char *dir)
{
	struct stat st;
	char *old = NULL;
	int err = 0;

	if (asprintf(&old, "%s.old", path) < 0)
		return error("out of memory");
	if (!lstat(old, &st) && S_ISDIR(st.st_mode))
		err = EISDIR;
	else if (!lstat(old, &st) && sticky_refuses(dir, &st))
		err = EPERM;
	if (err)
		error("cannot replace '%s': %s", old, strerror(err));
	free(old);
	return err ? 1 : 0;
}

/* Fails before recording when the output cannot be written (a directory, a block device or
 * socket; a folder that is missing or not writable; another user's file in a sticky folder;
 * a FILE.old that cannot be replaced), rather than losing the recording at the end. A device
 * or FIFO (also behind a trusted link) is written through at the end: nothing to check. */
static int check_output(const char *path)
{
	struct stat st;
	int err = 0, kind = strcmp(path, "-") ? file_write_kind(path) : FILE_WRITE_THROUGH;

	if (kind < 0)
		return error("cannot write '%s': %s", path, output_strerror(path, kind));
	if (kind != FILE_WRITE_REPLACE)
		return 0;
	bool exists = !lstat(path, &st);
	char *copy = strdup(path);
	if (!copy)
		return error("out of memory");
	const char *dir = dirname(copy);
	if (access(dir, W_OK | X_OK))
		err = errno;
	else if (exists && sticky_refuses(dir, &st))
		err = EPERM;
	if (err)
		error("cannot write '%s': %s", path, strerror(err));
	else if (exists)
		err = check_old(path, dir);
	free(copy);
	return err ? 1 : 0;
}

static int cmd_record(int argc, char **argv)
{
	struct record_opts o = { .freq = 99, .output = "firn.pb.gz", .call_graph = "auto",
				 .unwind = UNWIND_AUTO, .unwind_memory_mb = 32,
				 .pprof_flags = PPROF_FUNCTION_LINES | PPROF_NO_THREAD_LABELS |
						PPROF_NO_SYSTEM_NAMES,
				 .t = { .go_fd = -1, .err_fd = -1 } };
	struct recording r = { .o = &o };
	int argi, rc;

	rc = opt_parse(&record_cmd, argc, argv, true, record_option, &o, &argi);
	if (rc) {
		rc = rc < 0 ? 0 : rc;
		goto out;
	}
	o.t.stdout_to_stderr = !strcmp(o.output, "-"); /* the command's output is no profile */
	if ((rc = target_check(&o.t, &record_cmd, argc - argi)) ||
	    (rc = target_check_privileges(&record_cmd)) || (rc = check_output(o.output)) ||
	    (rc = max_entries(&r.max_entries)) || (rc = stack_map_entries(&r.stack_entries)))
		goto out;
	if (o.nevents == 0 || cpu_clock_events(&o))
		target_check_freq(&o.freq);
	target_install_signals();
	target_raise_fd_limit(&o.t);
	if ((rc = setup(&r)) || (rc = start_capture(&r)) ||
	    (rc = start(&r, argi < argc ? argv + argi : NULL)))
		goto out;
	if ((rc = sample_loop(&r)))
		goto out;
	r.end_ns = wall_ns();
	check_watched(&r, true);
	sampler_stop(r.sampler);
	target_end_command(&o.t);
	rc = finish_recording(&r, argc - argi, argv + argi);
	if (!rc)
		warn_unmapped(&r);
	if (!rc)
		rc = target_command_status(&o.t);
out:
	target_release(&o.t);
	capture_free(r.cap);
	sampler_free(r.sampler);
	for (size_t i = 0; i < r.nexecs; i++)
		symbolizer_snapshot_free(r.sym, r.execs[i].next);
	symbolizer_free(r.sym);
	profile_release(&r.prof);
	free(r.spill_dir);
	free(r.execs);
	free(o.events);
	events_release(&r.ev);
	return rc;
}

const struct cmd record_cmd = {
	.name = "record",
	.fn = cmd_record,
	.summary = "sample CPU stacks (or stacks at USDT probes) with eBPF and write a profile",
	.usage = RECORD_USAGE,
	.opts = { record_opts },
};
