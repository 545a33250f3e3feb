/* The "top functions" model shared by report, diff and top: self and total values per function
 * (or per module, or per source line), summed over the samples of a profile that pass filters. */
#ifndef FIRN_HIST_H
#define FIRN_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hashtab.h"
#include "model/profile.h"

/* What one entry stands for. */
enum hist_by {
	HIST_BY_FUNCTION = 0, /* key (function name, module) */
	HIST_BY_MODULE,       /* key (module, module) */
	HIST_BY_LINE,         /* key ("function (file:line)", module); file is the base name */
};

enum hist_sort {
	HIST_SORT_SELF = 0,
	HIST_SORT_TOTAL,
};

/* Filters and grouping. All-zero means: every sample, kernel frames kept, inline frames folded
 * into their callers, one entry per function, the profile's default sample type. */
struct hist_opts {
	/* the samples to sum instead of the profile's (over its ids: firn top's window); NULL:
	 * the profile's */
	const struct profile_sample *samples;
	uint64_t nsamples;
	const int64_t *pids;     /* keep samples whose numeric "pid" label is one of these */
	size_t npids;            /* 0: no pid filter */
	const char *comm;        /* keep samples whose "comm" label equals this or matches it as a
				  * shell glob (fnmatch, no flags); NULL: all */
	bool no_idle;            /* drop idle samples (hist_sample_idle) */
	bool no_kernel;          /* drop kernel frames: the innermost user frame gets the self value;
				  * samples with only kernel frames are dropped (not in total) */
	bool inline_frames;      /* inline frames are entries of their own; when false their value
				  * goes to the function they were inlined into */
	enum hist_by by;
	const char *sample_type; /* the sample type to sum, a name or an index (see
				  * profile_sample_type_find); NULL: profile_value_index() */
};

/* One row. name and module point into the profile's string table (valid while it lives).
 * module is the base name of the mapping's file, "[kernel.kallsyms]" for kernel frames without
 * one, "" when unknown. total counts each sample once, even when the function recurses. */
struct hist_entry {
	const char *name, *module;
	uint32_t name_id, module_id; /* string ids in the profile */
	enum frame_kind kind;        /* kind of the first frame seen */
	int64_t self, total;
};

/* Entries in build order until hist_sort. Shares: self * 100.0 / total. */
struct hist {
	struct hist_entry *entries;
	size_t n;
	int64_t total;        /* sum of the values of the samples that passed the filters */
	int64_t all_total;    /* sum of the values of every sample */
	uint64_t nsamples;    /* profile samples (stacks) that passed */
	uint64_t nprocesses;  /* distinct "pid" labels among those, 0 (the idle task) aside */
	uint32_t value_index; /* the sample type summed */
	double events;        /* how many independent events total stands for, for significance
			       * tests: total itself for a type in unit "count"; else Kish's
			       * effective sample size (sum v)^2 / sum(v^2 / c) over the samples
			       * that passed, c the sample's value of the count type just before
			       * the summed one (Go's pairs: samples and cpu, contentions and delay,
			       * alloc_objects and alloc_space), or c = 1 without one or where it is
			       * 0: each sample one event, a lower bound since a sample adds up
			       * events (within a sample, events are taken as of equal weight); in
			       * a heap profile sampled every R bytes on average (period type in
			       * bytes, period R: Go's, firn's -e alloc) c is the objects' samples,
			       * c (1 - e^(-v / (c R))), not the objects they stand for */

	/* private */
	int companion;        /* index of the count type of the summed one's events, or -1 */
	double sumsq;         /* sum of v^2 / c */
	double heap_rate;     /* R of a heap profile (see events), 0: none */
	struct profile *profile;
	size_t cap, cap_seen; /* of entries, of seen */
	uint64_t *seen;       /* per entry: 1 + the last sample that added to its total */
	struct hashtab index; /* (name id, module id) -> entry index */
};

/* Builds h from p (p may gain interned strings: module and line names). Returns 0, -ENOMEM, or
 * -EINVAL when o->sample_type names no sample type of p (or p has none but has samples). h must
 * be released even on failure. */
int hist_build(struct hist *h, struct profile *p, const struct hist_opts *o);

/* Sorts entries by self or total value, largest first; ties by name, then module (strcmp). */
void hist_sort(struct hist *h, enum hist_sort by);

/* Returns the entry for (name, module), or NULL. */
const struct hist_entry *hist_find(const struct hist *h, const char *name, const char *module);

void hist_release(struct hist *h);

/* True when sample s passes the pid, comm and idle filters of o (no_kernel is not checked here). */
bool hist_sample_match(const struct profile *p, const struct profile_sample *s,
		       const struct hist_opts *o);

/* True when s is a sample of the idle task: its "pid" label is 0, or, without a pid label, its
 * "comm" label is "[idle]", "swapper" or "swapper/N" (folded input). */
bool hist_sample_idle(const struct profile *p, const struct profile_sample *s);

/* Copies into dst (initialized, empty) the sample types, period, comments and the samples of src
 * that pass the pid, comm and idle filters of o: a filtered profile for writers without filters.
 * Returns 0 or -errno. */
int hist_filter_profile(struct profile *dst, const struct profile *src, const struct hist_opts *o);

/* hist_filter_profile for a profile saved as a file (pprof): under o->no_kernel the kept samples
 * lose their kernel locations too (a sample with only kernel frames is dropped, as hist_build
 * drops it), and only the mappings, functions and locations the kept samples use are copied, in
 * src's order. Returns 0 or -errno. */
int hist_extract(struct profile *dst, const struct profile *src, const struct hist_opts *o);

#endif
