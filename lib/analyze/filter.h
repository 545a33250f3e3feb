/* Stack filters with go tool pprof's meaning (report, diff and top's --focus, --ignore,
 * --show-from, --thread, --module, --tag-focus, --tag-ignore) and one runtime's view of the stacks (--runtime). They make a
 * profile of their own from a profile's samples, once, before any writer reads it: tables,
 * folded stacks, SVG, JSON and pprof all see the same filtered stacks. */
#ifndef FIRN_FILTER_H
#define FIRN_FILTER_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/profile.h"

/* What a regular expression (POSIX extended, unanchored) is matched against. A frame (a
 * location) matches FOCUS, IGNORE or SHOW_FROM as in pprof: when one of its lines' function
 * name or source file name matches, or its mapping's file name does. */
enum filter_field {
	FILTER_FOCUS,     /* keep the samples with a matching frame */
	FILTER_IGNORE,    /* drop the samples with a matching frame */
	FILTER_SHOW_FROM, /* drop the frames above (callers of) the outermost matching frame, and
			   * the inlined lines around it outside the matching one; drop the
			   * samples without a matching frame */
	FILTER_THREAD,    /* keep the samples whose "thread" label matches (none: dropped) */
	FILTER_MODULE,    /* keep the samples with a frame whose module matches: its mapping's
			   * base name as lib/analyze/hist names it ("[kernel.kallsyms]" for the
			   * kernel's) */
	FILTER_TAG_FOCUS, /* keep the samples with a label of the field's key whose value matches
			   * (pprof's -tagfocus KEY=REGEX); a numeric label matches as its decimal
			   * text; a sample without the key is dropped */
	FILTER_TAG_IGNORE, /* drop the samples with such a label (pprof's -tagignore) */
	FILTER_FIELDS
};

struct filter {
	regex_t re[FILTER_FIELDS];
	bool set[FILTER_FIELDS];
	char *key[FILTER_FIELDS]; /* FILTER_TAG_*: the label's key; owned */
	enum frame_runtime runtime; /* FRAME_NATIVE: none; else each sample keeps only this
				     * runtime's frames (its innermost one gets the self value)
				     * and a sample without any is dropped */
};

/* What filter_profile kept, in the values of one sample type. */
struct filter_stats {
	int64_t total;      /* of every sample given */
	int64_t kept;       /* of the samples kept */
	int64_t no_runtime; /* of the samples that passed the regular expressions but had no
			     * frame of the runtime */
};

/* An empty filter: keeps everything. */
void filter_init(struct filter *f);
void filter_release(struct filter *f);

/* Sets the expression of one field (replacing an earlier one). Returns 0, -EINVAL when regex
 * does not compile (why gets regerror's text, len bytes), or -ENOMEM. */
int filter_set(struct filter *f, enum filter_field field, const char *regex, char *why,
	       size_t len);

/* Sets a tag field (FILTER_TAG_FOCUS or FILTER_TAG_IGNORE) from spec "KEY=REGEX" as pprof's
 * -tagfocus reads it: split at the first '=', REGEX a comma-separated list of expressions of
 * which any may match (replacing an earlier one). Returns 0, -EINVAL when spec has no '=' or an
 * empty key (why gets "expected KEY=REGEX") or REGEX does not compile (regerror's text), or
 * -ENOMEM. */
int filter_set_tag(struct filter *f, enum filter_field field, const char *spec, char *why,
		   size_t len);

/* Whether f drops or changes anything. */
bool filter_active(const struct filter *f);

/* Copies into dst (initialized, empty) src's profile-wide fields (sample types, period,
 * comments, default type) and the samples that pass f, cut as f says, with the mappings,
 * functions and locations they use. The samples are samples[0..nsamples) over src's ids (a
 * window's: firn top), or src's own when samples is NULL. st (may be NULL) gets the values in
 * column value_index. src is not changed. Returns 0 or -ENOMEM (dst partly filled). */
int filter_profile(struct profile *dst, const struct profile *src,
		   const struct profile_sample *samples, uint64_t nsamples, const struct filter *f,
		   uint32_t value_index, struct filter_stats *st);
/* filter_profile of p's own samples whose result replaces p (every id of p changes; p's sample
 * types keep their order). Nothing is done when f is not active. 0, or -ENOMEM with p unchanged. */
int filter_apply(struct profile *p, const struct filter *f, uint32_t value_index,
		 struct filter_stats *st);

#endif
