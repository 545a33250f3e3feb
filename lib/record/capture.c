/* Sampler entries → profile samples, symbolized and labelled. */
#include "record/capture.h"
#include "base/diag.h"
#include "record/event_table.h"
#include "base/hash.h"
#include "base/hashtab.h"
#include "symbolize/intern.h"
#include "format/spill.h"
#include "base/vec.h"

#include <linux/types.h>

#include "../../bpf/firn.h"
#include "../../bpf/alloc.bpf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An event's counts go to sample type col, times scale (1, or cpu-clock's period for time). */
struct column_use {
	uint32_t event;
	int col;
	int64_t scale;
};

struct capture {
	struct profile *p;
	struct spill spill;       /* samples of processes that have ended */
	struct symbolizer *sym;
	struct intern in;         /* what the symbolizer's lookups became in p */
	uint64_t *locs;
	size_t cap;
	int64_t period;
	int64_t alloc_rate; /* capture_meta's */
	int64_t k_pid, k_tid, k_comm, k_thread;
	int64_t *values;  /* one per sample type (scratch) */
	struct column_use *uses; /* where each event's counts go */
	unsigned nuses, capuses;
	uint64_t parked;  /* samples parked (of processes that ended during the recording) */
	bool spill_failed; /* the temporary file could not be made or written: samples stay here */
	bool stale;        /* p's samples are a cut's, handed out: dropped before any is added */
	struct frame_resolver resolvers[FIRN_FRAME_KINDS]; /* by kind (resolve NULL: none) */
	int64_t resolver_maps[FIRN_FRAME_KINDS];           /* their mappings' ids (0: not yet) */
	struct resolved_loc *rlocs;  /* tagged values resolved so far, and their locations */
	size_t nrlocs, caprlocs;
	struct hashtab rindex;       /* (pid, value) → index into rlocs */
	unsigned worst;              /* the entry being symbolized: its worst frame's reason */
	struct capture_frame_stats fs; /* cpu-clock samples by their worst frame */
	int (*process_labels)(void *ctx, uint32_t pid, struct profile *p, struct profile_label *out);
	void *process_labels_ctx;    /* capture_meta's */
};

/* pid, tid, comm, thread, the process's and the label context's */
#define NLABELS \
	(4 + CAPTURE_PROCESS_LABELS + CAPTURE_RUNTIME_PROC_LABELS + CAPTURE_CONTEXT_LABELS)
#define RENEW_MIN_LOCATIONS 1024 /* smaller tables are kept (capture_outgrown) */
#define RENEW_FACTOR 4            /* larger are renewed past this many times what a cut used */

/* A tagged value of a process, and the location it became. */
struct resolved_loc {
	uint64_t v;
	uint32_t pid;
	int64_t loc;
};

/* Most functions one tagged value stands for. */
#define RESOLVED_MAX 16

int capture_set_resolver(struct capture *c, unsigned kind, const struct frame_resolver *r)
{
	if (!kind || kind >= FIRN_FRAME_KINDS)
		return -EINVAL;
	c->resolvers[kind] = *r;
	c->resolver_maps[kind] = 0;
	return 0;
}

/* The location of a resolved frame's functions (innermost first) in the resolver's mapping. */
static int64_t intern_resolved(struct capture *c, const struct frame_resolver *r, int64_t map,
			       uint64_t v, const struct resolved_frame *f, int n)
{
	struct profile_line lines[RESOLVED_MAX];

	for (int i = 0; i < n; i++) {
		int64_t fn = profile_function(c->p, f[i].name,
					      f[i].system_name ? f[i].system_name : f[i].name,
					      f[i].file ? f[i].file : "", 0);
		if (fn < 0)
			return fn;
		lines[i] = (struct profile_line){ .function_id = (uint64_t)fn, .line = f[i].line };
	}
	return profile_add_location(c->p, (uint64_t)map, v, lines, (uint32_t)n);
}

/* What the resolver of v's kind makes of it, as a new location in the resolver's mapping (marked
 * with the resolver's kind); without lines when it cannot resolve v. */
static int64_t resolve_new(struct capture *c, pid_t pid, uint64_t v)
{
	unsigned kind = resolver_kind_of(v);
	const struct frame_resolver *r = &c->resolvers[kind];
	struct resolved_frame f[RESOLVED_MAX];
	int n = 0;

	if (!c->resolver_maps[kind]) {
		int64_t m = profile_add_mapping(c->p, 0, 0, 0, r->mapping ? r->mapping : "[unknown]",
						"");
		if (m < 0)
			return m;
		c->p->mappings[m - 1].runtime = r->runtime;
		c->resolver_maps[kind] = m;
	}
	if (r->resolve && (n = r->resolve(r->ctx, pid, v, f, RESOLVED_MAX)) < 0)
		return n;
	int64_t id = intern_resolved(c, r, c->resolver_maps[kind], v, f, n);
	if (id > 0)
		c->p->locations[id - 1].kind = r->kind;
	return id;
}

/* Whether entry id of the resolved values is key (a struct resolved_loc). */
static bool rloc_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct resolved_loc *a = &((const struct capture *)ctx)->rlocs[id], *b = key;

	return a->v == b->v && a->pid == b->pid;
}

/* Remembers that (pid, v) became location loc: each tagged value is resolved once. */
static int rloc_add(struct capture *c, const struct resolved_loc *k, uint64_t hash)
{
	int err = VEC_GROW(c->rlocs, c->caprlocs, c->nrlocs + 1);

	if (err || (err = hashtab_add(&c->rindex, hash, (uint32_t)c->nrlocs)))
		return err;
	c->rlocs[c->nrlocs++] = *k;
	return 0;
}

/* Forgets every resolved value and frees its table (empty and reusable after). */
static void rlocs_release(struct capture *c)
{
	hashtab_release(&c->rindex);
	free(c->rlocs);
	c->rlocs = NULL;
	c->nrlocs = c->caprlocs = 0;
}

/* A tagged user-stack value → the location of what its kind's resolver makes of it (a location
 * without lines in its mapping when it cannot, or when no resolver of its kind is set); the
 * same (pid, value) gives the same location. */
static int64_t resolved_location(struct capture *c, pid_t pid, uint64_t v)
{
	struct resolved_loc k = { .v = v, .pid = (uint32_t)pid };
	uint64_t hash = hash_mix64(v ^ ((uint64_t)(uint32_t)pid << 40 | (uint32_t)pid));
	int64_t at = hashtab_find(&c->rindex, hash, rloc_eq, c, &k);

	if (at >= 0)
		return c->rlocs[at].loc;
	if ((k.loc = resolve_new(c, pid, v)) < 0)
		return k.loc;
	int err = rloc_add(c, &k, hash);
	return err ? err : k.loc;
}


/* Whether location id is in the code that runs a BPF program at a tracepoint (the program
 * itself, bpf_trace_run4, __bpf_trace_sched_switch, __traceiter_...): a kernel stack taken at
 * sched_switch starts there, above __schedule. */
static bool tracing_frame(const struct profile *p, uint64_t id)
{
	static const char *const prefixes[] = { "bpf_prog_", "bpf_trace_run", "__bpf_trace_",
						"__traceiter_" };
	const struct profile_location *l = id ? &p->locations[id - 1] : NULL;

	if (!l || !l->nlines)
		return false;
	const char *name = profile_str(p, p->functions[l->lines[l->nlines - 1].function_id - 1].name);
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* How bad an unresolved frame's reason is, so that a sample counts under its worst one: a
 * process never seen, then an address in no known mapping, then a file that could not be read,
 * JIT code without a perf map entry, a file without a symbol there. */
static unsigned reason_rank(unsigned reason)
{
	static const unsigned rank[SYMBOLIZER_REASONS] = {
		[SYMBOLIZER_RESOLVED] = 0, [SYMBOLIZER_NO_SYMBOL] = 1,
		[SYMBOLIZER_NO_JIT_SYMBOL] = 2, [SYMBOLIZER_NO_FILE] = 3,
		[SYMBOLIZER_NO_MAPPING] = 4, [SYMBOLIZER_NO_PROCESS] = 5,
	};

	return reason < SYMBOLIZER_REASONS ? rank[reason] : 0;
}

/* Notes the reason of the lookup just made for the entry being symbolized. */
static void note_reason(struct capture *c, unsigned reason)
{
	if (reason_rank(reason) > reason_rank(c->worst))
		c->worst = reason;
}

/* Counts a cpu-clock entry's samples under the worst reason of its frames. */
static void count_frames(struct capture *c, const struct sampler_entry *e)
{
	if (e->event != FIRN_EVENT_CPU_CLOCK)
		return; /* other events' counts are no samples */
	if (c->worst == SYMBOLIZER_RESOLVED)
		c->fs.named += e->count;
	else
		c->fs.unnamed[c->worst] += e->count;
}

/* Appends the locations of one stack (leaf first); frames after the first are return addresses.
 * An off-CPU entry's kernel stack was taken at a tracepoint: its leading tracing frames go. */
static int add_frames(struct capture *c, const struct sampler_entry *e, bool kernel, size_t *n)
{
	const uint64_t *ips = kernel ? e->kstack : e->ustack;
	uint32_t len = kernel ? e->klen : e->ulen;
	bool leading = kernel && e->event == FIRN_EVENT_OFF_CPU;
	int err = kernel ? symbolizer_kernel_prepare(c->sym, ips, len) : 0; /* one lookup run */

	if (err)
		return err;
	for (uint32_t i = 0; i < len; i++) {
		int64_t id = kernel ? intern_kernel(&c->in, c->sym, c->p, ips[i], i > 0)
			   : resolver_kind_of(ips[i]) ? resolved_location(c, e->pid, ips[i])
			   : intern_user(&c->in, c->sym, c->p, e->pid, ips[i], i > 0);
		if (id < 0)
			return (int)id;
		if (!resolver_kind_of(ips[i]) || kernel)
			note_reason(c, c->in.last_reason);
		if (leading && (leading = tracing_frame(c->p, id)))
			continue;
		if (id)
			c->locs[(*n)++] = id;
	}
	return 0;
}

/* pid 0 is the idle task of every CPU; the name of the first one sampled ("swapper/0") would
 * stand for all of them. */
const char *capture_comm(uint32_t pid, const char *name)
{
	return pid ? name : CAPTURE_IDLE;
}

/* The labels of e's label context (its tag's resolver names them), interned, into out (at
 * most CAPTURE_CONTEXT_LABELS); how many, or -ENOMEM. A context no resolver names: none. */
static int context_labels(struct capture *c, const struct sampler_entry *e,
			  struct profile_label *out)
{
	unsigned tag = FIRN_CTX_TAG(e->ctx);
	struct resolved_label l[CAPTURE_CONTEXT_LABELS];
	int n = 0;

	if (!e->ctx || tag >= FIRN_FRAME_KINDS || !c->resolvers[tag].labels)
		return 0;
	n = c->resolvers[tag].labels(c->resolvers[tag].ctx, (pid_t)e->pid, FIRN_CTX_IDOF(e->ctx),
				     l, CAPTURE_CONTEXT_LABELS);
	for (int i = 0; i < n && i < CAPTURE_CONTEXT_LABELS; i++) {
		int64_t k = profile_intern(c->p, l[i].key), v = profile_intern(c->p, l[i].value);
		if (k < 0 || v < 0)
			return -ENOMEM;
		out[i] = (struct profile_label){ .key = (uint32_t)k, .str = (uint32_t)v };
	}
	return n < CAPTURE_CONTEXT_LABELS ? n : CAPTURE_CONTEXT_LABELS;
}

/* The labels the runtimes' resolvers give of e's process itself (proc_labels), interned,
 * into out (at most CAPTURE_RUNTIME_PROC_LABELS); how many, or -ENOMEM. */
static int runtime_proc_labels(struct capture *c, const struct sampler_entry *e,
			       struct profile_label *out)
{
	struct resolved_label l[CAPTURE_RUNTIME_PROC_LABELS];
	int n = 0;

	for (unsigned t = 1; t < FIRN_FRAME_KINDS && n < CAPTURE_RUNTIME_PROC_LABELS; t++) {
		if (!c->resolvers[t].proc_labels)
			continue;
		int k = c->resolvers[t].proc_labels(c->resolvers[t].ctx, (pid_t)e->pid, l,
						    CAPTURE_RUNTIME_PROC_LABELS - n);
		if (k < 0)
			return k;
		for (int i = 0; i < k && n < CAPTURE_RUNTIME_PROC_LABELS; i++, n++) {
			int64_t ki = profile_intern(c->p, l[i].key), v = profile_intern(c->p, l[i].value);
			if (ki < 0 || v < 0)
				return -ENOMEM;
			out[n] = (struct profile_label){ .key = (uint32_t)ki, .str = (uint32_t)v };
		}
	}
	return n;
}

/* Symbolizes one sampler entry into c->locs (*n of them), c->values and labels (*nlabels);
 * 1 when the entry makes a sample, 0 when its event is not recorded, or -errno. */
static int entry_sample(struct capture *c, const struct sampler_entry *e, size_t *n,
			struct profile_label labels[NLABELS], uint32_t *nlabels)
{
	int err;
	bool used = false;

	for (unsigned i = 0; i < c->nuses && !used; i++)
		used = c->uses[i].event == e->event;
	if (!used)
		return 0;
	if (!e->count)
		return 0; /* counted in an earlier cut (capture_cut) */
	if (VEC_GROW(c->locs, c->cap, e->ulen + e->klen + 1))
		return -ENOMEM;
	*n = 0;
	c->worst = SYMBOLIZER_RESOLVED;
	if ((err = add_frames(c, e, true, n)) || (err = add_frames(c, e, false, n)))
		return err;
	count_frames(c, e);
	int64_t comm = profile_intern(c->p, capture_comm(e->pid, e->comm));
	int64_t thread = profile_intern(c->p, capture_comm(e->pid, e->thread));
	if (comm < 0 || thread < 0)
		return -ENOMEM;
	labels[0] = (struct profile_label){ .key = c->k_pid, .num = e->pid };
	labels[1] = (struct profile_label){ .key = c->k_tid, .num = e->tid };
	labels[2] = (struct profile_label){ .key = c->k_comm, .str = comm };
	labels[3] = (struct profile_label){ .key = c->k_thread, .str = thread };
	int np = c->process_labels ?
		 c->process_labels(c->process_labels_ctx, e->pid, c->p, labels + 4) : 0;
	if (np < 0)
		return np;
	int nr = runtime_proc_labels(c, e, labels + 4 + np);
	if (nr < 0)
		return nr;
	np += nr;
	int nc = context_labels(c, e, labels + 4 + np);
	if (nc < 0)
		return nc;
	*nlabels = 4 + (uint32_t)np + (uint32_t)nc;
	memset(c->values, 0, c->p->nsample_types * sizeof(*c->values));
	for (unsigned i = 0; i < c->nuses; i++)
		if (c->uses[i].event == e->event)
			c->values[c->uses[i].col] += (int64_t)e->count * c->uses[i].scale;
	return 1;
}

/* One sampler entry → one profile sample. */
static int add_entry(void *ctx, const struct sampler_entry *e)
{
	struct capture *c = ctx;
	struct profile_label labels[NLABELS];
	size_t n;
	uint32_t nl;
	int rc = entry_sample(c, e, &n, labels, &nl);

	return rc <= 0 ? rc : profile_add_sample(c->p, c->locs, n, c->values, labels, nl);
}

bool capture_ready(struct capture *c, const struct sampler_entry *e)
{
	if (e->klen && !symbolizer_kernel_ready(c->sym))
		return false;
	for (uint32_t i = 0; i < e->ulen; i++)
		if (!resolver_kind_of(e->ustack[i]) && !symbolizer_user_ready(c->sym, e->pid, i ? e->ustack[i] - 1 : e->ustack[i]))
			return false;
	return true;
}

/* Drops the samples of the cut handed out last, before the next interval's are added: not at
 * the cut itself, since samples parked in memory since then are the next interval's. */
static void drop_stale(struct capture *c)
{
	if (c->stale)
		profile_clear_samples(c->p);
	c->stale = false;
}

int capture_park(struct capture *c, const struct sampler_entry *e)
{
	struct profile_label labels[NLABELS];
	size_t n;
	uint32_t nl;
	int rc = entry_sample(c, e, &n, labels, &nl);

	if (rc <= 0)
		return rc;
	if (!c->spill_failed) {
		rc = spill_add(&c->spill, c->locs, n, c->values, c->p->nsample_types, labels, nl);
		if (!rc) {
			c->parked++;
			return 0;
		}
		/* no room on disk: the samples stay in memory, nothing is lost */
		diag(DIAG_WARN, "cannot park samples in a temporary file: %s; keeping them in memory",
		     strerror(-rc));
		c->spill_failed = true;
	}
	drop_stale(c);
	return profile_add_sample(c->p, c->locs, n, c->values, labels, nl);
}

/* The statistics of the recorded events that have them (off-CPU waits, GPU records), each
 * row's once, in event order, as comments. */
static int add_event_comments(struct profile *p, const struct capture_meta *m)
{
	struct event_params params = { .off_cpu_rate = m->off_cpu_rate,
				       .off_cpu_min_ns = m->off_cpu_min_ns };
	int err = 0;

	for (unsigned i = 0; i < m->nevents; i++) {
		const struct event_desc *d = m->events[i].desc;
		bool dup = false;
		for (unsigned j = 0; j < i && !dup; j++)
			dup = m->events[j].desc->stats == d->stats;
		if (d->stats && !dup)
			err |= event_stat_comments(d->stats, (const char *)m->stats + d->sampler_stats_at,
						   &params, p);
	}
	return err;
}

/* Metadata lines ("key: value") kept in the profile's comments. */
static int add_comments(struct profile *p, const struct capture_meta *m, uint64_t parked)
{
	char buf[4096] = "";
	size_t off = 0;
	const struct sampler_stats *st = m->stats;
	int err = 0;

	for (int i = 0; i < m->argc && off < sizeof(buf) - 1; i++)
		off += snprintf(buf + off, sizeof(buf) - off, "%s%s", i ? " " : "", m->argv[i]);
	char line[512];
#define COMMENT(...) (snprintf(line, sizeof(line), __VA_ARGS__), err |= profile_add_comment(p, line))
	if (m->argc) {
		char cmdline[4200];
		snprintf(cmdline, sizeof(cmdline), "command: %s", buf);
		err |= profile_add_comment(p, cmdline);
	}
	COMMENT("recorder: firn record");
	for (unsigned i = 0; i < m->nevent_specs; i++)
		COMMENT("event: %s", m->event_specs[i]);
	if (!m->nevent_specs)
		COMMENT("event: cpu-clock");
	bool cpu = !m->events;
	for (unsigned i = 0; i < m->nevents; i++)
		cpu |= m->events[i].desc->timed;
	if (cpu)
		COMMENT("frequency: %u", m->freq);
	COMMENT("call-graph: %s", m->call_graph);
	COMMENT("kernel: %s", m->kernel ? m->kernel : "");
	COMMENT("cpus: %d", m->ncpus);
	COMMENT("samples: %llu", (unsigned long long)st->stored);
	COMMENT("samples.taken: %llu", (unsigned long long)st->taken);
	COMMENT("samples.parked: %llu", (unsigned long long)parked);
	COMMENT("lost: %llu", (unsigned long long)(st->taken > st->stored ? st->taken - st->stored : 0));
	COMMENT("lost.counts_full: %llu", (unsigned long long)st->counts_full);
	COMMENT("lost.stacks_full: %llu", (unsigned long long)st->stacks_full);
	COMMENT("lost.user_stack: %llu", (unsigned long long)st->user_stack_errors);
	COMMENT("lost.kernel_stack: %llu", (unsigned long long)st->kernel_stack_errors);
	err |= add_event_comments(p, m);
	if (!strcmp(m->call_graph, "fp")) {
#undef COMMENT
		return err ? -ENOMEM : 0;
	}
	err |= event_stat_comments(&event_unwind_stats, st->unwind, NULL, p);
	snprintf(line, sizeof(line), "unwind.tables: %llu files, %llu rows, %llu bytes of %llu, "
		 "%llu mappings without CFI, %llu over the memory limit, built in %.1f ms",
		 (unsigned long long)st->unwind_files, (unsigned long long)st->unwind_rows,
		 (unsigned long long)st->unwind_bytes, (unsigned long long)st->unwind_max_bytes,
		 (unsigned long long)st->unwind_no_table, (unsigned long long)st->unwind_over_limit,
		 st->unwind_build_ns / 1e6);
	err |= profile_add_comment(p, line);
	return err ? -ENOMEM : 0;
}

/* Sends event's counts to sample type col, times scale. */
static int use_column(struct capture *c, uint32_t event, int col, int64_t scale)
{
	if (col < 0 || VEC_GROW(c->uses, c->capuses, c->nuses + 1))
		return -ENOMEM;
	c->uses[c->nuses++] = (struct column_use){ event, col, scale };
	return 0;
}

/* The "wall" type when both on-CPU samples and off-CPU time are recorded: the sum of their
 * times per stack. Returns 1 when added, 0 when not needed, or -ENOMEM. */
static int add_wall(struct capture *c, const struct capture_event *ev, unsigned n)
{
	bool cpu = false, wait = false;

	/* GPU time is nanoseconds too, but not the CPU's: no part of wall */
	for (unsigned i = 0; i < n; i++) {
		cpu |= ev[i].desc->timed;
		wait |= ev[i].desc->wait;
	}
	if (!cpu || !wait)
		return 0;
	int col = profile_add_sample_type(c->p, "wall", "nanoseconds");
	for (unsigned i = 0; i < n && col >= 0; i++)
		if ((ev[i].desc->timed && use_column(c, ev[i].id, col, c->period)) ||
		    (ev[i].desc->wait && use_column(c, ev[i].id, col, 1)))
			return -ENOMEM;
	return col < 0 ? -ENOMEM : 1;
}

/* Adds the sample types of the events (cpu-clock: samples and cpu; wall: see capture_event),
 * the period type and the default type (wall, else the first event's); fills c->uses. */
static int add_types(struct capture *c, const struct capture_event *ev, unsigned n)
{
	struct profile *p = c->p;
	bool cpu = false;

	for (unsigned i = 0; i < n; i++) {
		const struct event_desc *d = ev[i].desc;
		int col = profile_add_sample_type(p, ev[i].type, d->unit);
		if (use_column(c, ev[i].id, col, 1))
			return -ENOMEM;
		if (d->timed &&
		    use_column(c, ev[i].id, profile_add_sample_type(p, "cpu", "nanoseconds"), c->period))
			return -ENOMEM;
		cpu |= d->timed;
	}
	int wall = add_wall(c, ev, n);
	if (wall < 0)
		return wall;
	bool heap = !cpu && ev[0].id == FIRN_EVENT_ALLOC_OBJECTS && c->alloc_rate > 0;
	p->period_type.type = profile_intern(p, cpu ? "cpu" : heap ? "space" : ev[0].type);
	p->period_type.unit = profile_intern(p, cpu ? "nanoseconds" : heap ? "bytes" : ev[0].desc->unit);
	p->period = cpu ? c->period : heap ? c->alloc_rate : 1;
	p->default_sample_type = profile_intern(p, wall ? "wall" : ev[0].type);
	c->values = calloc(p->nsample_types, sizeof(*c->values));
	return c->values ? 0 : -ENOMEM;
}

/* The label keys every sample carries, interned in c's profile. */
static int intern_keys(struct capture *c)
{
	c->k_pid = profile_intern(c->p, "pid");
	c->k_tid = profile_intern(c->p, "tid");
	c->k_comm = profile_intern(c->p, "comm");
	c->k_thread = profile_intern(c->p, "thread");
	return c->k_pid >= 0 && c->k_tid >= 0 && c->k_comm >= 0 && c->k_thread >= 0 ? 0 : -ENOMEM;
}

struct capture *capture_new(struct profile *p, struct symbolizer *sym,
			    const struct capture_meta *m)
{
	const struct capture_event cpu_clock = { FIRN_EVENT_CPU_CLOCK, "samples", event_by_id(FIRN_EVENT_CPU_CLOCK) };
	struct capture *c = calloc(1, sizeof(*c));
	int err = c ? spill_init(&c->spill, m->spill_dir) : -ENOMEM;

	if (err)
		goto fail;
	c->p = p;
	c->sym = sym;
	intern_init(&c->in);
	c->period = 1000000000LL / (m->freq ? m->freq : 1);
	c->alloc_rate = m->alloc_rate;
	err = m->events && !m->nevents ? -EINVAL : 0;
	if (!err)
		err = add_types(c, m->events ? m->events : &cpu_clock, m->events ? m->nevents : 1);
	if (err)
		goto fail;
	c->process_labels = m->process_labels;
	c->process_labels_ctx = m->process_labels_ctx;
	if (!(err = intern_keys(c)))
		return c;
fail:
	capture_free(c);
	errno = -err;
	return NULL;
}

/* sampler_for_each, for capture_finish_from. */
static int sampler_entries(void *s, int (*fn)(void *ctx, const struct sampler_entry *e), void *ctx)
{
	return sampler_for_each(s, fn, ctx);
}

int capture_finish(struct capture *c, struct sampler *s, const struct capture_meta *m)
{
	return capture_finish_from(c, s ? sampler_entries : NULL, s, m);
}

int capture_finish_from(struct capture *c,
			int (*for_each)(void *src, int (*fn)(void *ctx, const struct sampler_entry *e),
					void *ctx),
			void *src, const struct capture_meta *m)
{
	drop_stale(c);
	int err = for_each ? for_each(src, add_entry, c) : 0;

	if (!err)
		err = spill_load(&c->spill, c->p);
	if (err)
		return err;
	c->p->time_nanos = m->start_ns;
	c->p->duration_nanos = m->end_ns - m->start_ns;
	return add_comments(c->p, m, c->parked);
}

int capture_cut(struct capture *c,
		int (*for_each)(void *src, int (*fn)(void *ctx, const struct sampler_entry *e), void *ctx),
		void *src, uint64_t start_ns, uint64_t end_ns)
{
	drop_stale(c); /* what was parked in memory since is this cut's */
	int err = spill_load(&c->spill, c->p);

	if (!err)
		err = for_each(src, add_entry, c);
	c->p->time_nanos = start_ns;
	c->p->duration_nanos = end_ns - start_ns;
	c->stale = true;
	return err;
}

/* Whether the tables hold far more locations than the cut's samples use. A long recording's
 * tables keep every address it resolved: a host's programs touch new code slowly but for ever
 * (issue 28: growth with the recording's age). */
bool capture_outgrown(const struct capture *c)
{
	return c->p->nlocations > RENEW_MIN_LOCATIONS &&
	       c->p->nlocations / RENEW_FACTOR > profile_locations_used(c->p);
}

int capture_renew(struct capture *c)
{
	int err = c->spill.n || (!c->stale && c->p->nsamples) ? -EBUSY : profile_renew(c->p);

	if (err)
		return err;
	c->stale = false; /* profile_renew dropped the samples */
	intern_release(&c->in); /* its ids were the old tables' */
	intern_init(&c->in);
	memset(c->resolver_maps, 0, sizeof(c->resolver_maps));
	rlocs_release(c);
	return intern_keys(c);
}

void capture_free(struct capture *c)
{
	if (!c)
		return;
	spill_release(&c->spill);
	free(c->locs);
	intern_release(&c->in);
	rlocs_release(c);
	free(c->values);
	free(c->uses);
	free(c);
}

void capture_frame_stats(const struct capture *c, struct capture_frame_stats *st)
{
	*st = c->fs;
}
