/* In-memory profile model shared by every reader and writer (pprof, folded, SVG, JSON, tables).
 * It mirrors profile.proto: interned strings, mappings, functions, locations (with inline lines),
 * samples (location ids leaf first, one value per sample type, labels). */
#ifndef FIRN_PROFILE_H
#define FIRN_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/hashtab.h"
#include "model/frame_kind.h"

/* Interned strings. Id 0 is always the empty string; ids are dense and stable. */
struct strtab {
	char **strs;      /* strs[id], NUL-terminated, owned */
	uint32_t *lens;   /* lens[id] */
	uint32_t n, cap;
	struct hashtab index; /* ids by string */
};

int strtab_init(struct strtab *t);
void strtab_release(struct strtab *t);
/* Returns the id of s[0..len) (adding it if new), or -ENOMEM. */
int64_t strtab_intern(struct strtab *t, const char *s, size_t len);
/* Returns the id of s, or -1 when s was never interned. */
int64_t strtab_find(const struct strtab *t, const char *s, size_t len);
static inline const char *strtab_get(const struct strtab *t, uint32_t id)
{
	return id < t->n ? t->strs[id] : "";
}

/* All ids below are 1-based indexes into the matching array (0 = none). */
struct profile_value_type {
	uint32_t type, unit; /* string ids */
};

struct profile_mapping {
	uint64_t start, limit, offset;
	uint32_t filename, build_id; /* string ids */
	bool has_functions, has_filenames, has_line_numbers, has_inline_frames;
	enum frame_kind kind;        /* FRAME_KERNEL for "[kernel.kallsyms]" and modules, FRAME_JIT for JIT maps */
	enum frame_runtime runtime;  /* whose frames: a runtime's mapping (FRAME_PYTHON...), from its
				      * name (frame_runtime_of_mapping) or set by its maker */
};

struct profile_function {
	uint32_t name, system_name, filename; /* string ids */
	int64_t start_line;
};

struct profile_line {
	uint64_t function_id;
	int64_t line;
};

struct profile_location {
	uint64_t mapping_id, address;
	struct profile_line *lines; /* innermost (inlined) first, outermost last; owned */
	uint32_t nlines;
	enum frame_kind kind;       /* of the outermost line; inner lines are FRAME_INLINE */
};

struct profile_label {
	uint32_t key, str; /* string ids; str 0 for numeric labels */
	int64_t num;
	uint32_t num_unit;
};

struct profile_sample {
	uint64_t *location_ids;     /* leaf first; one block with values and labels, in the
				     * profile's sample_arena (a view's samples: the caller's) */
	uint32_t nlocs, nlabels;
	int64_t *values;            /* nsample_types values; in location_ids's block */
	struct profile_label *labels; /* in location_ids's block */
	uint64_t hash;              /* private: of locations and labels, for merging */
};

struct profile {
	struct strtab strings;
	struct profile_value_type *sample_types;
	uint32_t nsample_types, cap_sample_types;
	struct profile_value_type period_type;
	int64_t period, time_nanos, duration_nanos;
	uint32_t default_sample_type; /* string id */
	uint32_t *comments;           /* string ids */
	uint32_t ncomments, cap_comments;

	struct profile_mapping *mappings;
	struct profile_function *functions;
	struct profile_location *locations;
	struct profile_sample *samples;
	uint64_t nmappings, nfunctions, nlocations, nsamples;
	uint64_t cap_mappings, cap_functions, cap_locations, cap_samples;

	/* private dedupe indexes (ids - 1 of functions, of simple locations, of samples) */
	struct hashtab fn_index, loc_index, sample_index;
	struct arena sample_arena; /* private: the samples' blocks, freed with the profile */
};

int profile_init(struct profile *p);
void profile_release(struct profile *p);

/* Copies src's profile-wide fields into dst by string: its sample types (added after dst's),
 * period type, period, default type and comments. Only those strings are interned, in the
 * order they are used. 0 or -ENOMEM (dst partly filled). */
int profile_copy_scalars(struct profile *dst, const struct profile *src);
/* Starts p's tables afresh: its strings, mappings, functions, locations and samples go (every
 * id and string pointer of p is invalid after it); the profile-wide fields and the time stay.
 * 0, or -ENOMEM with p unchanged. */
int profile_renew(struct profile *p);

/* Interns s; returns its string id or -ENOMEM. */
int64_t profile_intern(struct profile *p, const char *s);
static inline const char *profile_str(const struct profile *p, uint32_t id)
{
	return strtab_get(&p->strings, id);
}

/* Adds a sample type ("samples", "count"); returns its index or -errno. */
int profile_add_sample_type(struct profile *p, const char *type, const char *unit);
int profile_add_comment(struct profile *p, const char *text);

/* Adds a mapping; returns its id (>= 1) or -errno. kind is derived from filename when 0 (see
 * profile_kind_of_mapping). */
int64_t profile_add_mapping(struct profile *p, uint64_t start, uint64_t limit, uint64_t offset,
			    const char *filename, const char *build_id);
/* Kind implied by a mapping's file name: "[jit]", "[anon]", "[anon:NAME]", "//anon" and
 * "/tmp/perf-N.map" are JIT; "[kernel.kallsyms]" and other bracketed names ("[module]", "[bpf]")
 * kernel, except the process's own pseudo mappings ("[vdso]", "[vvar]", "[heap]", "[stack]",
 * "[stack:TID]", "[vsyscall]", "[uprobes]", "[unknown]"); everything else user. */
enum frame_kind profile_kind_of_mapping(const char *filename);

/* Returns the id of the function (name, system_name, filename, start_line), adding it if new. */
int64_t profile_function(struct profile *p, const char *name, const char *system_name,
			 const char *filename, int64_t start_line);

/* Adds a location (lines copied); returns its id or -errno. No deduplication. */
int64_t profile_add_location(struct profile *p, uint64_t mapping_id, uint64_t address,
			     const struct profile_line *lines, uint32_t nlines);
/* Returns the id of the address-less location of one function in one mapping with that kind,
 * adding it if new: how folded input and name-only frames become locations. */
int64_t profile_simple_location(struct profile *p, uint64_t mapping_id, uint64_t function_id,
				enum frame_kind kind);

/* Adds a sample; when a sample with the same locations and labels exists, its values are added
 * to that one instead. values has nsample_types entries. Returns 0 or -errno. */
int profile_add_sample(struct profile *p, const uint64_t *location_ids, uint32_t nlocs,
		       const int64_t *values, const struct profile_label *labels, uint32_t nlabels);

/* Starts loading the slot of p's sample index where profile_add_sample looks up a sample of
 * these locations and labels, and returns the sample's hash for profile_add_sample_hashed: a
 * caller adding many distinct samples prefetches one and adds it after its next one's work, so
 * the index's cache misses overlap that work. */
uint64_t profile_prefetch_sample(const struct profile *p, const uint64_t *location_ids,
				 uint32_t nlocs, const struct profile_label *labels,
				 uint32_t nlabels);
/* profile_add_sample with the hash profile_prefetch_sample returned for the same locations and
 * labels (not hashed again). */
int profile_add_sample_hashed(struct profile *p, uint64_t hash, const uint64_t *location_ids,
			      uint32_t nlocs, const int64_t *values,
			      const struct profile_label *labels, uint32_t nlabels);

/* Removes every sample (the tables, sample types and comments stay): the next interval of a
 * recording cut into intervals. */
void profile_clear_samples(struct profile *p);

/* How many distinct locations p's samples use (nlocations when that cannot be counted: out of
 * memory). */
uint64_t profile_locations_used(const struct profile *p);
/* How many distinct processes (pid labels above 0: pid 0 is the idle task) p's samples name; 0
 * when they carry no pid. */
uint64_t profile_distinct_pids(const struct profile *p);
/* The mapping pprof should take for the main program (its first; go tool pprof's "File:"): of
 * the mappings of files (a path, user code, no runtime's) that are not shared libraries (no
 * ".so" or ".so.N" name), the one holding the outermost such frame of the most samples; 0 when
 * no sample has one. */
uint64_t profile_main_mapping(const struct profile *p);
/* The sum of the values of the sample type(s) named name over p's samples (0: no such type). */
int64_t profile_type_total(const struct profile *p, const char *name);
/* Label lookups on a sample: the string value (or NULL) and the numeric value (or def). */
const char *profile_label_str(const struct profile *p, const struct profile_sample *s,
			      const char *key);
int64_t profile_label_num(const struct profile *p, const struct profile_sample *s,
			  const char *key, int64_t def);

/* Index of the sample type to report by default: the one named by default_sample_type, else
 * "samples", else the last one. */
uint32_t profile_value_index(const struct profile *p);
/* The one choice of the sample type that report and diff sum (their --sample-type): spec NULL
 * for profile_value_index(), else a type name ("off_cpu": the first type of that name) or a
 * 0-based index in decimal ("2"), as go tool pprof's -sample_index takes it. Returns the index,
 * -ENOENT when p has no sample types, or -EINVAL when spec names none of them. */
int profile_sample_type_find(const struct profile *p, const char *spec);

/* One frame of a sample as writers see it, root first after profile_frames. */
struct profile_frame {
	uint32_t name;            /* function name string id (module in brackets when unresolved) */
	uint32_t filename;        /* source file string id, 0 if unknown */
	int64_t line;
	uint64_t function_id;     /* 0 for synthetic frames */
	uint64_t mapping_id;
	enum frame_kind kind;
};

/* Expands sample s into frames, ROOT FIRST (outermost caller at [0], leaf last), inline lines as
 * their own FRAME_INLINE frames. *frames is grown with realloc as needed (*cap entries).
 * Returns the frame count or -ENOMEM. Locations without lines give a frame named after their
 * mapping ("[libfoo.so]") or "[unknown]". */
int64_t profile_frames(struct profile *p, const struct profile_sample *s,
		       struct profile_frame **frames, size_t *cap);
/* profile_frames, then the filters of report's tables (hist) and call views (calls): kernel
 * frames dropped under no_kernel, FRAME_INLINE frames unless inline_frames (an inlined call
 * counts for its caller). The kept frames are compacted to the front of *frames, root first.
 * Returns their count, -1 when no_kernel leaves none of a sample that had frames (the sample
 * drops out), or -ENOMEM. */
int64_t profile_kept_frames(struct profile *p, const struct profile_sample *s,
			    struct profile_frame **frames, size_t *cap, bool inline_frames,
			    bool no_kernel);

/* Moves every sample of src into dst (interning strings, remapping ids), adding values of samples
 * that have the same stacks. Sample types must match by name; returns -EINVAL when they do not. */
int profile_merge(struct profile *dst, const struct profile *src);
/* profile_merge copying only the mappings, functions and locations that src's samples use, in
 * src's order, and the first mapping (pprof's main binary) whether used or not. */
int profile_merge_used(struct profile *dst, const struct profile *src);

/* Whether the sample values of a, and of b too when it is not NULL and has as many sample types,
 * keep the invariant profile_load gives: none negative, and for each type a sum of at most
 * INT64_MAX, so that no sum over samples overflows (check before profile_merge). Returns 0,
 * -ERANGE for a negative value or -EOVERFLOW. */
int profile_values_check(const struct profile *a, const struct profile *b);

#endif
