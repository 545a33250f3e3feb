/* The flame graph options shared by `firn report --svg` and `firn diff --svg`: an option group
 * (struct cmd's opts[1]) whose ids lie in 400..449, and the handler that applies them. */
#ifndef FIRN_OPT_FLAMEGRAPH_H
#define FIRN_OPT_FLAMEGRAPH_H

#include "format/flamegraph.h"
#include "opt.h"

#define OPT_FLAMEGRAPH_FIRST 400
#define OPT_FLAMEGRAPH_LAST 449

extern const struct opt flamegraph_option_table[];

/* Applies option id (400..449) with arg to o; returns 0, or 2 after printing a usage error. */
int flamegraph_option(const struct cmd *cmd, struct flamegraph_opts *o, int id, const char *arg);

/* When rendering failed on the palette file (step not FLAME_PALETTE_OK), prints the error
 * naming the palette, not the input, and returns 1; else returns 0. */
int flamegraph_palette_error(const struct flamegraph_opts *o, enum flame_palette_step step,
			     int err);

#endif
