/* report --group-by LABEL: a profile's samples ranked by the value of one label (pprof labels:
 * firn's pid, comm, tid, thread; Go's runtime/pprof labels; any a pprof file carries), with the
 * top function under each value, and the stacks with "LABEL=value" as their root frame (what go
 * tool pprof's -tagroot draws). Samples without the label go under the value "(none)". */
#ifndef FIRN_GROUP_H
#define FIRN_GROUP_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/hist.h"
#include "model/profile.h"

/* The value samples without the label are grouped under. */
#define GROUP_NONE "(none)"

/* One value of the label. Strings point into the profile's string table. */
struct group_row {
	const char *value;        /* the label's value (a number as decimal text), or GROUP_NONE */
	int64_t total;            /* sum of its samples' values (the chosen sample type) */
	uint64_t nsamples;        /* profile samples (stacks) with it */
	const char *top_function; /* the function of the largest self value under it ("" none) */
	const char *top_module;
	int64_t top_self;
};

/* Rows ranked by total, largest first (ties by value, strcmp). */
struct group {
	struct group_row *rows;
	size_t n;
	int64_t total;            /* of the samples that pass o's filters */
	int64_t none;             /* of those without the label */
	uint32_t value_index;     /* the sample type summed */
};

/* Builds g over p's samples that pass o (its pid, comm, idle, kernel and inline settings, and its
 * sample type, as hist_build takes them) by the label key. p gains interned strings (numbers'
 * text). Returns 0, -ENOMEM or -EINVAL (as hist_build). g must be released even on failure. */
int group_build(struct group *g, struct profile *p, const char *key, const struct hist_opts *o);
void group_release(struct group *g);

/* The text of s's first label key (a number's decimal text, interned in p), or NULL when s has
 * none. NULL with errno ENOMEM when interning fails. */
const char *group_label_value(struct profile *p, const struct profile_sample *s, const char *key);

/* Copies into dst (initialized, empty) p's profile-wide fields and its samples, each with a new
 * root frame "KEY=value" ("KEY=(none)" without the label): a function of that name in no
 * mapping. p gains those functions and locations. Returns 0 or -ENOMEM (dst partly filled). */
int group_root(struct profile *dst, struct profile *p, const char *key);

#endif
