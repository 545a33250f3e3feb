/* The callers and callees of one function over a set of samples (firn top's calls view): which
 * functions call it, which it calls, each with the value of the samples where it does (once per
 * sample, even when the function recurses). Functions are (name, module) as lib/analyze/hist names
 * them; inline frames are folded into their callers, as the hist's default does. */
#ifndef FIRN_CALLS_H
#define FIRN_CALLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/profile.h"

/* A caller or callee. name and module point into the profile's strings, or are "[root]" (the
 * function is the outermost frame: no caller) and "[self]" (its own code: no callee), with
 * module "". */
struct calls_row {
	const char *name, *module;
	int64_t value;
};

struct calls {
	struct calls_row *callers, *callees; /* largest value first, then by name */
	size_t ncallers, ncallees;
	int64_t total;  /* value of the samples with the function on their stack */
	int64_t self;   /* of those, where it is the innermost frame (the [self] callee) */
};

/* What to look at: samples of p (ids of p), their value in column value_index, the function
 * (name, module); no_kernel drops kernel frames (a sample with only kernel frames drops out). */
struct calls_query {
	const struct profile_sample *samples;
	size_t nsamples;
	uint32_t value_index;
	const char *function, *module;
	bool no_kernel;
};

/* Fills c (any earlier content released) from q over p. 0 or -ENOMEM. */
int calls_compute(struct calls *c, struct profile *p, const struct calls_query *q);
/* The module of a frame as lib/analyze/hist names it: its mapping file's base name,
 * "[kernel.kallsyms]" for kernel frames without one, "" when unknown. */
const char *calls_frame_module(const struct profile *p, const struct profile_frame *f);
void calls_release(struct calls *c);

#endif
