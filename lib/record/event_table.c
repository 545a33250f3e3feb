/* The events firn records and their statistics, as rows (see event_table.h). */
#include "record/event_table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#include "../../bpf/firn.h"
#include "../../bpf/alloc.bpf.h"
#include "base/strput.h"
#include "model/profile.h"
#include "record/recorder.h"
#include "source/sampler.h"
#include "record/usdt.h"

#define OFFCPU(f) offsetof(struct sampler_offcpu_stats, f)
#define GPU(f) offsetof(struct sampler_gpu_stats, f)
#define UNWIND(i) ((i) * sizeof(uint64_t))

_Static_assert(sizeof(((struct recorder_stats *)0)->off_cpu) == sizeof(struct sampler_offcpu_stats) &&
	       sizeof(((struct recorder_stats *)0)->gpu) == sizeof(struct sampler_gpu_stats),
	       "the recorder's statistics are the sampler's structs");

/* off_cpu.not_ended: waits begun that neither ended, were short nor lost (the recording's end
 * could not end them). */
static uint64_t offcpu_not_ended(const void *stats, const struct event_params *p)
{
	const struct sampler_offcpu_stats *o = stats;
	uint64_t done = o->counted + o->short_waits + o->lost_counts_full + o->lost_stacks_full;

	(void)p;
	return o->waits > done ? o->waits - done : 0;
}

/* off_cpu.min_us: the minimum wait added, as asked. */
static uint64_t offcpu_min_us(const void *stats, const struct event_params *p)
{
	(void)stats;
	return p->off_cpu_min_ns / 1000;
}

/* off_cpu.rate: 1 wait in this many was sampled. */
static uint64_t offcpu_rate(const void *stats, const struct event_params *p)
{
	(void)stats;
	return p->off_cpu_rate > 1 ? p->off_cpu_rate : 1;
}

static const struct event_stat offcpu_fields[] = {
	{ "waits", "count", NULL, OFFCPU(waits) },
	{ "counted", "count", NULL, OFFCPU(counted) },
	{ "ns", "nanoseconds", NULL, OFFCPU(ns) },
	{ "short", "count", NULL, OFFCPU(short_waits) },
	{ "short_ns", "nanoseconds", NULL, OFFCPU(short_ns) },
	{ "at_end", "count", NULL, OFFCPU(at_end) },
	{ "late", "count", NULL, OFFCPU(late) },
	{ "at_start", "count", NULL, OFFCPU(at_start) },
	{ "not_ended", "count", NULL, 0, offcpu_not_ended },
	{ "lost.no_slot", "count", "no thread slot", OFFCPU(lost_no_slot) },
	{ "lost.counts_full", "count", "counts map full", OFFCPU(lost_counts_full) },
	{ "lost.stacks_full", "count", "stack map full", OFFCPU(lost_stacks_full) },
	{ "min_us", "microseconds", NULL, 0, offcpu_min_us, .setting = true },
	{ "rate", "count", NULL, 0, offcpu_rate, { "1 in ", " (times scaled by it)" }, true },
	{ "unsampled", "count", NULL, OFFCPU(unsampled) },
};
static const struct event_stat_group offcpu_stats = {
	"off_cpu.", offcpu_fields, sizeof(offcpu_fields) / sizeof(offcpu_fields[0]),
	sizeof(struct sampler_offcpu_stats)
};

static const struct event_stat gpu_fields[] = {
	{ "launches", "count", NULL, GPU(launches) },
	{ "kernels", "count", NULL, GPU(kernels) },
	{ "kernels_without_launch", "count", NULL, GPU(kernels_unmatched) },
	{ "copies", "count", NULL, GPU(memcpys) },
	{ "launches_without_record", "count", NULL, GPU(launches_unmatched) },
	{ "launches_remembered", "count", NULL, GPU(launches_pending) },
	{ "lost", "count", NULL, GPU(lost) },
};
static const struct event_stat_group gpu_stats = {
	"gpu.", gpu_fields, sizeof(gpu_fields) / sizeof(gpu_fields[0]), sizeof(struct sampler_gpu_stats)
};

static const struct event_stat unwind_fields[] = {
	{ "complete", "count", NULL, UNWIND(FIRN_UNW_COMPLETE) },
	{ "no_mapping", "count", "no mapping", UNWIND(FIRN_UNW_NO_MAPPING) },
	{ "no_row", "count", "no row", UNWIND(FIRN_UNW_NO_ROW) },
	{ "unsupported", "count", "unsupported rule", UNWIND(FIRN_UNW_UNSUPPORTED) },
	{ "bad_read", "count", "unreadable stack", UNWIND(FIRN_UNW_BAD_READ) },
	{ "depth", "count", "depth", UNWIND(FIRN_UNW_DEPTH) },
	{ "no_user_stack", "count", NULL, UNWIND(FIRN_UNW_NO_USER) },
	{ "fp_fallback", "count", NULL, UNWIND(FIRN_UNW_FP_FALLBACK) },
	{ "vma_lookup", "count", NULL, UNWIND(FIRN_UNW_VMA) },
	{ "no_row_fp_fallback", "count", NULL, UNWIND(FIRN_UNW_ROW_FALLBACK) },
};
_Static_assert(sizeof(unwind_fields) / sizeof(unwind_fields[0]) == FIRN_UNW_NR &&
	       sizeof(((struct sampler_stats *)0)->unwind) == FIRN_UNW_NR * sizeof(uint64_t),
	       "one field per unwind stop");
const struct event_stat_group event_unwind_stats = {
	"unwind.", unwind_fields, sizeof(unwind_fields) / sizeof(unwind_fields[0])
};

/* The USDT lines: the hits of every usdt_ sample type of the profile, in event order. */
static size_t usdt_summary(const void *stats, const struct event_params *p, char *buf, size_t len)
{
	size_t off = 0;

	(void)stats;
	buf[0] = 0;
	for (uint32_t t = 0; p->prof && t < p->prof->nsample_types; t++) {
		const char *type = profile_str(p->prof, p->prof->sample_types[t].type);
		if (strncmp(type, "usdt_", 5))
			continue;
		long long hits = profile_type_total(p->prof, type);
		strput(buf, len, &off, "firn: %s: %lld hit%s\n", type, hits, hits == 1 ? "" : "s");
	}
	return off;
}

/* The off-CPU line: what became of every wait begun (added, under the minimum, lost by reason;
 * not ended: the end of the recording could not end it) and the time added, as the profile has
 * it (x the rate). */
static size_t offcpu_summary(const void *stats, const struct event_params *p, char *buf,
			     size_t len)
{
	static const char *const lost_by[] = { "lost.counts_full", "lost.stacks_full",
					       "lost.no_slot", NULL };
	const struct sampler_offcpu_stats *w = stats;
	char reasons[256];
	uint64_t lost;
	size_t off = 0;

	event_stat_list(&offcpu_stats, lost_by, w, p, reasons, sizeof(reasons), &lost);
	/* a wait whose start found no slot was never begun: it is seen, and lost */
	uint64_t seen = w->waits + w->lost_no_slot, done = w->counted + w->short_waits + lost;
	long rate = (long)offcpu_rate(w, p);
	strput(buf, len, &off,
	    "firn: off-cpu: %llu waits%s: %llu added (%.3f s off the CPU%s; %llu of them still "
	    "waiting at the end, added up to it), %llu under %llu us (%.3f s, not added), %llu lost "
	    "(%s), %llu not ended",
	    (unsigned long long)seen, p->off_cpu_runnable ? " (preemptions included)" : "",
	    (unsigned long long)w->counted, w->ns * rate / 1e9, rate > 1 ? ", scaled by the rate" : "",
	    (unsigned long long)w->at_end, (unsigned long long)w->short_waits,
	    (unsigned long long)offcpu_min_us(w, p), w->short_ns / 1e9, (unsigned long long)lost,
	    reasons, (unsigned long long)(seen > done ? seen - done : 0));
	if (rate > 1)
		strput(buf, len, &off, "; 1 wait in %ld sampled (%llu left out)", rate,
		    (unsigned long long)w->unsampled);
	if (w->late)
		strput(buf, len, &off, "; %llu ended at the thread's next switch-out (its switch-in unseen)",
		    (unsigned long long)w->late);
	if (w->at_start)
		strput(buf, len, &off, "; %llu already waiting at the start, counted from it (the oldest "
		    "since %.3f s before)", (unsigned long long)w->at_start, w->at_start_oldest_ns / 1e9);
	strput(buf, len, &off, "\n");
	return off;
}

/* What the GPU probes saw, with what could not be matched (never dropped silently). */
static size_t gpu_summary(const void *stats, const struct event_params *p, char *buf, size_t len)
{
	const struct sampler_gpu_stats *g = stats;

	(void)p;
	int n = snprintf(buf, len,
			 "firn: gpu: %llu launches (%llu without a kernel record, %llu of them "
			 "remembered to the end), %llu kernels (%llu without a seen launch), %llu "
			 "copies, %llu lost\n",
			 (unsigned long long)g->launches, (unsigned long long)g->launches_unmatched,
			 (unsigned long long)g->launches_pending, (unsigned long long)g->kernels,
			 (unsigned long long)g->kernels_unmatched, (unsigned long long)g->memcpys,
			 (unsigned long long)g->lost);
	return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

/* -e alloc's counters (enum firn_alloc_stat's order, at struct sampler_stats' counters). */
struct alloc_stats {
	uint64_t sampled, bytes, frees, lost, live, live_full, freed, untracked, exited, live_bytes,
		freed_bytes;
};
#define ALLOC(f) offsetof(struct alloc_stats, f)

static const struct event_stat alloc_fields[] = {
	{ "sampled", "count", NULL, ALLOC(sampled) },
	{ "bytes", "bytes", NULL, ALLOC(bytes) },
	{ "frees", "count", NULL, ALLOC(frees) },
	{ "lost", "count", "lost", ALLOC(lost) },
	{ "followed", "count", NULL, ALLOC(live) },
	{ "overflow", "count", NULL, ALLOC(live_full) },
	{ "freed", "count", NULL, ALLOC(freed) },
	{ "untracked_frees", "count", NULL, ALLOC(untracked) },
	{ "exited", "count", NULL, ALLOC(exited) },
	{ "followed_bytes", "bytes", NULL, ALLOC(live_bytes) },
	{ "freed_bytes", "bytes", NULL, ALLOC(freed_bytes) },
};
_Static_assert(sizeof(struct alloc_stats) == FIRN_ALLOC_NR * sizeof(uint64_t),
	       "one field per allocation counter");
static const struct event_stat_group alloc_stats = {
	"alloc.", alloc_fields, sizeof(alloc_fields) / sizeof(alloc_fields[0]),
	sizeof(struct alloc_stats)
};

/* The alloc line: the sampled allocations and the bytes they stand for; those live at the end
 * (or at their process's exit: of them, in processes that exited) and their bytes; the
 * allocations not followed (the live map full), frees of pointers not followed, what could not
 * be stored. */
static size_t alloc_summary(const void *stats, const struct event_params *p, char *buf, size_t len)
{
	const struct alloc_stats *a = stats;
	uint64_t live = a->live > a->freed ? a->live - a->freed : 0;
	uint64_t bytes = a->live_bytes > a->freed_bytes ? a->live_bytes - a->freed_bytes : 0;

	(void)p;
	int n = snprintf(buf, len, "firn: alloc: %llu allocations sampled, %.1f MB estimated, %llu "
			 "live at end (%.1f MB; %llu in processes that exited), overflow %llu, %llu "
			 "frees of untracked pointers, lost %llu\n", (unsigned long long)a->sampled,
			 a->bytes / 1e6, (unsigned long long)live, bytes / 1e6,
			 (unsigned long long)a->exited, (unsigned long long)a->live_full,
			 (unsigned long long)a->untracked, (unsigned long long)a->lost);
	if (n >= 0 && (size_t)n < len && a->live_full)
		n += snprintf(buf + n, len - (size_t)n, "firn: warning: alloc: %llu sampled allocations "
			      "not followed to their free (the map of live ones was full): inuse_* "
			      "leave them out, their frees count as untracked; --alloc-live raises "
			      "the bound\n", (unsigned long long)a->live_full);
	return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

/* A usdt argument: "PATH:PROVIDER:NAME", no part empty. */
static int usdt_parse(const char *arg)
{
	char *copy = strdup(arg), *provider, *name;
	bool ok = copy && usdt_split_spec(copy, &provider, &name);

	free(copy);
	return ok ? 0 : copy ? -EINVAL : -ENOMEM;
}

#define STATS_AT(f) offsetof(struct sampler_stats, f), offsetof(struct recorder_stats, f)

const struct event_desc event_table[] = {
	{ .name = "cpu-clock", .help = "default", .id = FIRN_EVENT_CPU_CLOCK, .type = "samples",
	  .unit = "count", .timed = true, .progs = EVENT_PROG_CPU_CLOCK },
	{ .name = "off-cpu", .help = "time threads wait, by stack", .id = FIRN_EVENT_OFF_CPU, .type = "off_cpu", .unit = "nanoseconds",
	  .weighted = true, .wait = true, .progs = EVENT_PROG_OFF_CPU, .stats = &offcpu_stats,
	  STATS_AT(off_cpu), .summary = offcpu_summary },
	{ .name = "usdt", .arg = "PATH:PROVIDER:NAME", .help = "a stack at every probe hit",
	  .parse = usdt_parse, .id = FIRN_EVENT_USDT_FIRST,
	  .type_prefix = "usdt_", .unit = "count", .progs = EVENT_PROG_USDT,
	  .summary = usdt_summary },
	{ .option = "--cuda", .id = FIRN_EVENT_GPU_TIME, .type = "gpu_time", .unit = "nanoseconds",
	  .weighted = true, .progs = EVENT_PROG_USDT | EVENT_PROG_CUDA, .stats = &gpu_stats,
	  STATS_AT(gpu), .summary = gpu_summary, .summary_last = true },
	{ .option = "--cuda", .id = FIRN_EVENT_GPU_LAUNCHES, .type = "gpu_launches", .unit = "count",
	  .progs = EVENT_PROG_USDT | EVENT_PROG_CUDA },
	/* Go's heap profiles' names, so go tool pprof -sample_index=alloc_space reads them */
	{ .name = "alloc", .help = "allocations by stack, sampled by bytes",
	  .id = FIRN_EVENT_ALLOC_OBJECTS, .type = "alloc_objects", .unit = "count", .weighted = true,
	  .progs = EVENT_PROG_USDT | EVENT_PROG_ALLOC, .bpf_counters = "alloc_stats",
	  .stats = &alloc_stats, .sampler_stats_at = offsetof(struct sampler_stats, counters),
	  .recorder_stats_at = offsetof(struct recorder_stats, counters), .summary = alloc_summary },
	{ .with = "alloc", .id = FIRN_EVENT_ALLOC_SPACE, .type = "alloc_space", .unit = "bytes",
	  .weighted = true, .progs = EVENT_PROG_USDT | EVENT_PROG_ALLOC },
	/* what is still live at the end, or at its process's exit (allocated less freed) */
	{ .with = "alloc", .id = FIRN_EVENT_INUSE_OBJECTS, .type = "inuse_objects", .unit = "count",
	  .weighted = true, .progs = EVENT_PROG_USDT | EVENT_PROG_ALLOC },
	{ .with = "alloc", .id = FIRN_EVENT_INUSE_SPACE, .type = "inuse_space", .unit = "bytes",
	  .weighted = true, .progs = EVENT_PROG_USDT | EVENT_PROG_ALLOC },
#ifdef FIRN_TEST_TOY_EVENT
	FIRN_TEST_TOY_EVENT
#endif
};
const size_t event_table_n = sizeof(event_table) / sizeof(event_table[0]);

const struct event_desc *event_find(const char *spec, const char **arg)
{
	for (size_t i = 0; i < event_table_n; i++) {
		const struct event_desc *d = &event_table[i];
		size_t n = d->name ? strlen(d->name) : 0;
		if (!d->name || strncmp(spec, d->name, n))
			continue;
		if (!d->arg && !spec[n])
			return d;
		if (d->arg && spec[n] == ':' && (!d->parse || !d->parse(spec + n + 1))) {
			if (arg)
				*arg = spec + n + 1;
			return d;
		}
	}
	return NULL;
}

const struct event_desc *event_by_id(uint32_t id)
{
	const struct event_desc *usdt = NULL;

	for (size_t i = 0; i < event_table_n; i++) {
		if (event_table[i].id == id)
			return &event_table[i];
		if (event_table[i].arg && event_table[i].id == FIRN_EVENT_USDT_FIRST)
			usdt = &event_table[i];
	}
	return id >= FIRN_EVENT_USDT_FIRST && id < FIRN_EVENT_GPU_TIME ? usdt : NULL;
}

const char *event_values(char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	for (size_t i = 0; i < event_table_n; i++)
		if (event_table[i].name)
			strput(buf, len, &off, "%s%s%s", off ? " " : "", event_table[i].name,
			    event_table[i].arg ? ":" : "");
	return buf;
}

/* The -e events as a list ("a, b" then last_sep before the last), each with its help when
 * help is set ("name (help)", "name:ARG: help"), into buf; returns buf. */
static const char *event_list(char *buf, size_t len, const char *last_sep, bool help)
{
	size_t off = 0, n = 0, k = 0;

	for (size_t i = 0; i < event_table_n; i++)
		n += event_table[i].name != NULL;
	buf[0] = 0;
	for (size_t i = 0; i < event_table_n; i++) {
		const struct event_desc *d = &event_table[i];
		if (!d->name)
			continue;
		k++;
		strput(buf, len, &off, "%s%s%s%s", k == 1 ? "" : k == n ? last_sep : ", ", d->name,
		    d->arg ? ":" : "", d->arg ? d->arg : "");
		if (help && d->help)
			strput(buf, len, &off, d->arg ? ": %s" : " (%s)", d->help);
	}
	return buf;
}

const char *event_syntax(char *buf, size_t len)
{
	return event_list(buf, len, " or ", false);
}

const char *event_help(char *buf, size_t len)
{
	return event_list(buf, len, ", or ", true);
}

bool event_recorded(const struct event_desc *d, const char *const *specs, int n, bool cuda)
{
	if (d->option)
		return cuda;
	if (d->with) {
		const struct event_desc *w = event_find(d->with, NULL);
		return w && event_recorded(w, specs, n, cuda);
	}
	if (!n)
		return d->id == FIRN_EVENT_CPU_CLOCK;
	for (int i = 0; i < n; i++)
		if (event_find(specs[i], NULL) == d)
			return true;
	return false;
}

/* Whether name is one of names[0..n). */
static bool name_in(const char *name, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

unsigned event_progs(const char *const *specs, int n, bool cuda)
{
	unsigned progs = 0;

	for (size_t i = 0; i < event_table_n; i++)
		if (event_recorded(&event_table[i], specs, n, cuda))
			progs |= event_table[i].progs;
	return progs;
}

int event_bpf_progs(const char *const *specs, int nspecs, bool cuda, const char **names, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < event_table_n; i++) {
		const struct event_desc *d = &event_table[i];
		for (size_t j = 0; d->bpf_progs && d->bpf_progs[j]; j++) {
			if (!event_recorded(d, specs, nspecs, cuda) || name_in(d->bpf_progs[j], names, k))
				continue;
			if (k == n)
				return -E2BIG;
			names[k++] = d->bpf_progs[j];
		}
	}
	return (int)k;
}

void event_stats_copy(const struct sampler_stats *s, struct recorder_stats *st)
{
	for (size_t i = 0; i < event_table_n; i++) {
		const struct event_desc *d = &event_table[i];
		if (d->stats)
			memcpy((char *)st + d->recorder_stats_at, (const char *)s + d->sampler_stats_at,
			       d->stats->size);
	}
}

uint64_t event_stat_value(const struct event_stat *f, const void *stats,
			  const struct event_params *p)
{
	uint64_t v;

	if (f->get)
		return f->get(stats, p);
	memcpy(&v, (const char *)stats + f->offset, sizeof(v));
	return v;
}

const struct event_stat *event_stat_find(const struct event_stat_group *g, const char *name)
{
	for (size_t i = 0; i < g->n; i++)
		if (!strcmp(g->fields[i].name, name))
			return &g->fields[i];
	return NULL;
}

size_t event_stat_list(const struct event_stat_group *g, const char *const *names,
		       const void *stats, const struct event_params *p, char *buf, size_t len,
		       uint64_t *sum)
{
	size_t off = 0;
	uint64_t total = 0;

	buf[0] = 0;
	for (size_t i = 0; names[i]; i++) {
		const struct event_stat *f = event_stat_find(g, names[i]);
		if (!f)
			continue;
		uint64_t v = event_stat_value(f, stats, p);
		total += v;
		strput(buf, len, &off, "%s%s %llu", off ? ", " : "", f->label ? f->label : f->name,
		    (unsigned long long)v);
	}
	if (sum)
		*sum = total;
	return off;
}

int event_stat_comments(const struct event_stat_group *g, const void *stats,
			const struct event_params *params, struct profile *p)
{
	char line[512];
	int err = 0;

	for (size_t i = 0; i < g->n; i++) {
		const struct event_stat *f = &g->fields[i];
		snprintf(line, sizeof(line), "%s%s: %s%llu%s", g->prefix, f->name,
			 f->around[0] ? f->around[0] : "",
			 (unsigned long long)event_stat_value(f, stats, params),
			 f->around[1] ? f->around[1] : "");
		err |= profile_add_comment(p, line);
	}
	return err ? -ENOMEM : 0;
}
