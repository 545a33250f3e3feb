/* A decaying window over the cuts of one recording (firn top's table): per stack — a cut
 * sample's locations and labels — a weight that is multiplied by 2^(-dt / half-life) at every
 * cut and gains the cut's value at full weight. A stack whose weight falls under
 * WINDOW_MIN_WEIGHT leaves the window.
 * The cuts must be one profile object whose ids persist from cut to cut (recorder_cut's): the
 * window keeps location and string ids, not copies of what they name. Its samples are views
 * for hist_build (hist_opts.samples), disasm and profile_frames over that profile. */
#ifndef FIRN_WINDOW_H
#define FIRN_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#include "base/hashtab.h"
#include "model/profile.h"

#define WINDOW_SCALE 1000       /* window values are thousandths of a sample */
#define WINDOW_MIN_WEIGHT 0.01  /* a lighter stack leaves the window */

struct window_entry;

struct window {
	double half_life_s;
	/* The window: one sample per stack with weight, its value (weight x WINDOW_SCALE) in the
	 * column of the sample type followed, 0 in the others. Owned; valid until the next
	 * window_add or window_release. */
	struct profile_sample *samples;
	size_t nsamples;
	int64_t last;               /* the last cut's value (the sum over its samples) */

	/* private */
	struct window_entry *entries; /* weight 0: dead (dropped when many) */
	size_t n, cap;
	struct hashtab index;       /* (locations, labels) -> entry */
	size_t cap_samples;
};

/* An empty window whose weights halve every half_life_s seconds (0: a cut replaces the window:
 * it holds the last cut alone). */
void window_init(struct window *w, double half_life_s);
/* Decays every weight by dt_s seconds, then adds the samples of cut with a value in column
 * value_index (cut's sample types must not change from call to call) and rebuilds samples.
 * 0 or -ENOMEM (the window is then as the decay left it, without samples). */
int window_add(struct window *w, const struct profile *cut, uint32_t value_index, double dt_s);
/* Stacks followed now (with weight or not yet dropped). */
size_t window_stacks(const struct window *w);
void window_release(struct window *w);

#endif
