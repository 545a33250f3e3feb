/* The events firn records, as data: one descriptor per event (as perf's evsel and bpftool's
 * cmds[] are) with its -e name and argument parser, its sample type (unit, whether a hit carries
 * a weight), the BPF programs it needs, its statistics as named fields and its summary line.
 * The table drives -e parsing and its error message, the completions' values, the sampler's
 * settings (its programs by name), the profile's sample types and comments, and the summary: an
 * event is one row here plus its BPF program (and its man page text); tests/toy/toy_event.h and
 * bpf/toy.bpf.h are the model.
 *
 * The statistics of a recording are groups of named fields (a comment key, a unit, a summary
 * label) over the structs lib/source/sampler.h fills, so the comments and the summary loop over them
 * instead of indexing literals. Pure data and functions of their arguments. */
#ifndef FIRN_EVENT_TABLE_H
#define FIRN_EVENT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct profile;

/* The BPF programs an event needs (the sampler's settings). */
enum event_prog {
	EVENT_PROG_CPU_CLOCK = 1, /* the timed perf event on every CPU */
	EVENT_PROG_OFF_CPU = 2,   /* the sched_switch program */
	EVENT_PROG_USDT = 4,      /* the USDT program (probes attached at recorder_new) */
	EVENT_PROG_CUDA = 8,      /* the GPU maps (libfirn-cuda's probes, through the USDT program) */
	EVENT_PROG_ALLOC = 16,    /* the otel_memory probes' path of the USDT program */
};

/* What the getters and the summary lines read besides the statistics: the options of the
 * events (off-CPU: the rate, the minimum, preemptions counted) and the profile written. */
struct event_params {
	uint32_t off_cpu_rate;     /* 1 wait in this many was sampled (0, 1: all) */
	uint64_t off_cpu_min_ns;   /* shorter waits were not added */
	bool off_cpu_runnable;     /* preempted switch-outs counted too */
	const struct profile *prof; /* the summary's: the profile written (NULL in comments) */
};

/* One statistic: "PREFIX.name: value" in the profile's comments, "label value" in a summary
 * list. Its value is the uint64_t at offset in the group's struct, or what get returns. */
struct event_stat {
	const char *name;   /* comment key after the group's prefix ("lost.no_slot") */
	const char *unit;   /* "count", "nanoseconds", "microseconds" */
	const char *label;  /* in the summary ("no thread slot"); NULL: not listed */
	size_t offset;
	uint64_t (*get)(const void *stats, const struct event_params *p); /* NULL: at offset */
	const char *around[2]; /* the comment's text before and after the value (NULL: none) */
	bool setting;       /* an option of the recording, not a count: it does not add up when
			     * recordings are merged (report A B) */
};

/* A group of statistics over one struct (sampler_offcpu_stats, sampler_gpu_stats, the unwind
 * stops), in comment order. */
struct event_stat_group {
	const char *prefix; /* "off_cpu.", "gpu.", "unwind." */
	const struct event_stat *fields;
	size_t n;
	size_t size; /* the struct's bytes, copied by event_stats_copy (0: nothing to copy) */
};

/* Writes the summary line(s) of an event into buf (each ending in '\n'; "" for none): stats is
 * its group's struct (NULL without one). Returns the length, truncated at len - 1. */
typedef size_t event_summary_fn(const void *stats, const struct event_params *p, char *buf,
				size_t len);

/* One event. */
struct event_desc {
	const char *name;   /* as -e names it ("cpu-clock"); NULL for one an option adds */
	const char *arg;    /* the argument after "name:" ("PATH:PROVIDER:NAME"); NULL: none */
	const char *option; /* the option that adds it instead (--cuda); NULL for an -e event */
	/* the -e event it comes with (its sample type right after that one's): "alloc"'s
	 * alloc_space; NULL: none */
	const char *with;
	const char *help;   /* what it records, for -e's --help (event_help); NULL: nothing */
	/* checks the argument (arg != NULL): 0 or -EINVAL */
	int (*parse)(const char *arg);
	uint32_t id;        /* FIRN_EVENT_*; arg events: the first, the next ones count up */
	/* its sample type: a name (NULL: named by what is attached: "usdt_PROVIDER_NAME" after
	 * type_prefix) and unit; weighted: a hit's count is a weight in unit, not 1 */
	const char *type, *type_prefix, *unit;
	bool weighted;
	bool timed;   /* its hits are periods of the sampling clock: a "cpu" type follows (hits x
		       * period), the frequency is a comment, and it is part of "wall" */
	bool wait;    /* its weight is time off the CPU: part of "wall" */
	unsigned progs;                     /* enum event_prog */
	/* the BPF programs of bpf/profile.bpf.c that record it (NULL-ended; NULL: none beyond
	 * progs): sections beginning with '?', so only a recording of this event loads them; the
	 * sampler attaches each by its section and detaches it at the end. A new event's program
	 * needs nothing else from the sampler (bpf/toy.bpf.h is the model). */
	const char *const *bpf_progs;
	/* the per-CPU array of u64 counters its programs count into (NULL: none): summed at the
	 * end into its stats group's struct (at sampler_stats_at; stats->size / 8 counters) */
	const char *bpf_counters;
	const struct event_stat_group *stats; /* its comments; NULL: none */
	/* where its statistics are in struct sampler_stats (and the same struct in struct
	 * recorder_stats) */
	size_t sampler_stats_at, recorder_stats_at;
	event_summary_fn *summary;          /* NULL: no line */
	bool summary_last; /* its line comes after the frames and runtimes lines */
};

/* The table, in the order completions list the -e events and the summary prints their lines. */
extern const struct event_desc event_table[];
extern const size_t event_table_n;

/* The event an -e value names ("cpu-clock", "usdt:PATH:PROVIDER:NAME"), its argument (after
 * the ':') in *arg when arg is not NULL; NULL when none does or the argument does not parse. */
const struct event_desc *event_find(const char *spec, const char **arg);

/* The row of event number id (FIRN_EVENT_*; a USDT probe's: the usdt row); NULL: none. */
const struct event_desc *event_by_id(uint32_t id);

/* The -e values, for the completions: "cpu-clock off-cpu usdt:" (an argument's event ends in
 * ':'), into buf (len bytes); returns buf. */
const char *event_values(char *buf, size_t len);

/* What an -e value may be, for a usage error: "cpu-clock, off-cpu or usdt:PATH:PROVIDER:NAME",
 * into buf; returns buf. */
const char *event_syntax(char *buf, size_t len);

/* -e's description for --help: "cpu-clock (default), off-cpu (time threads wait, by stack), or
 * usdt:PATH:PROVIDER:NAME: a stack at every probe hit", into buf; returns buf. */
const char *event_help(char *buf, size_t len);

/* The names of the BPF programs of the recorded events (their rows' bpf_progs), each once, into
 * names (n at most); returns how many, or -E2BIG when they do not fit. */
int event_bpf_progs(const char *const *specs, int nspecs, bool cuda, const char **names, size_t n);

/* The enum event_prog bits the -e values (none: cpu-clock) and --cuda (cuda) need; values that
 * name no event count for nothing. */
unsigned event_progs(const char *const *specs, int n, bool cuda);

/* Whether desc is recorded: named by one of the -e values (none: cpu-clock), or added by its
 * option (cuda, the only one). */
bool event_recorded(const struct event_desc *d, const char *const *specs, int n, bool cuda);

struct recorder_stats;
struct sampler_stats;
/* Copies each event's statistics (its stats group's struct) from the sampler's figures into the
 * recorder's, at the row's two offsets: the recorder names no event's or runtime's counters. */
void event_stats_copy(const struct sampler_stats *s, struct recorder_stats *st);

/* A field's value in stats (its group's struct). */
uint64_t event_stat_value(const struct event_stat *f, const void *stats,
			  const struct event_params *p);

/* The field of group g named name (NULL: none). */
const struct event_stat *event_stat_find(const struct event_stat_group *g, const char *name);

/* "label value, label value..." of the named fields of g (names: NULL-ended), into buf; their
 * sum in *sum when sum is not NULL. Returns the length, truncated at len - 1. */
size_t event_stat_list(const struct event_stat_group *g, const char *const *names,
		       const void *stats, const struct event_params *p, char *buf, size_t len,
		       uint64_t *sum);

/* Adds g's fields to p's comments ("off_cpu.waits: 12"). 0 or -ENOMEM. */
int event_stat_comments(const struct event_stat_group *g, const void *stats,
			const struct event_params *params, struct profile *p);

/* The DWARF unwinder's statistics (enum firn_unwind_stop order, over uint64_t unwind[10] of
 * struct sampler_stats and struct recorder_stats), for the comments and the unwinding line. */
extern const struct event_stat_group event_unwind_stats;

#endif
