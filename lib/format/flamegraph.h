/* Flame graphs: an interactive SVG with flamegraph.pl's layout (same rectangles, widths, sibling
 * order, pruning, labels and --hash colors for the same input), built from the profile model.
 *
 * The merged tree is kept in the form flamegraph.pl itself merges from: the distinct stacks,
 * sorted as flamegraph.pl sorts its folded lines (multikey quicksort on ranked frame names) and
 * walked the way its flow() walks them: a frame is a run of consecutive sorted stacks with the
 * same frames up to its depth, reported to a callback when it closes. No node is materialized:
 * memory is 4 bytes a frame of each distinct stack and about 32 bytes a stack, never the input's
 * text. Every stack carries two values, `value` (the widths) and `base` (a second profile's),
 * so the differential flame graph of `firn diff` reuses this writer: its colors come from a
 * node's self delta (FLAME_COLORS_DIFF, flamegraph.pl's difference colors) or from a callback,
 * and its tooltips read "NAME (N samples, P%; base M; +D%)". */
#ifndef FIRN_FLAMEGRAPH_H
#define FIRN_FLAMEGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/profile.h"
#include "base/unit.h"

/* Where an error about the palette file came from (flamegraph_opts.palette_failed). */
enum flame_palette_step { FLAME_PALETTE_OK, FLAME_PALETTE_READ, FLAME_PALETTE_WRITE };

/* Color schemes, flamegraph.pl's palettes plus firn's default and the differential one. */
enum flame_colors {
	FLAME_COLORS_DEFAULT = 0, /* by frame kind: user red, kernel orange, JIT green, inlined aqua,
				   * Python yellow, GPU purple */
	FLAME_COLORS_HOT,
	FLAME_COLORS_MEM,
	FLAME_COLORS_IO,
	FLAME_COLORS_RED,
	FLAME_COLORS_GREEN,
	FLAME_COLORS_BLUE,
	FLAME_COLORS_AQUA,
	FLAME_COLORS_YELLOW,
	FLAME_COLORS_PURPLE,
	FLAME_COLORS_ORANGE,
	FLAME_COLORS_DIFF,        /* by self delta (value - base): red grew, blue shrank, as
				   * flamegraph.pl colors a two-column (difffolded) input */
	FLAME_COLORS_COUNT
};

/* Kinds a tree gives user frames of a runtime's profile mapping (enum frame_runtime: a
 * flame_node's kind may be one): drawn in their own colors, written to folded output as plain
 * user frames (flamegraph.pl has no annotation for them). */
#define FLAME_KIND_OF_RUNTIME(r) (FRAME_INLINE + (unsigned)(r))
enum {
	FLAME_KIND_PYTHON = FLAME_KIND_OF_RUNTIME(FRAME_PYTHON),
	FLAME_KIND_GPU = FLAME_KIND_OF_RUNTIME(FRAME_GPU),
	FLAME_KIND_JAVASCRIPT = FLAME_KIND_OF_RUNTIME(FRAME_JAVASCRIPT),
	FLAME_KIND_JAVA = FLAME_KIND_OF_RUNTIME(FRAME_JAVA),
	FLAME_NKINDS = FLAME_KIND_OF_RUNTIME(FRAME_RUNTIMES)
};

/* One merged frame, as flame_tree_walk reports it. Values are in sample units. */
struct flame_node {
	uint32_t name;           /* string id in the tree's names; the root has name 0, depth 0 */
	enum frame_kind kind;
	uint32_t depth;          /* 0 = the root ("all"); 1 = the outermost frame */
	int64_t start;           /* left edge: sum of the values of the stacks sorted before it */
	int64_t value, self;     /* inclusive value (the width) and the value of stacks ending here */
	int64_t base, base_self; /* the same sums of the stacks' second value */
};

/* Chooses a node's fill: stores it in rgb and returns 1, or returns 0 to use the scheme. */
typedef int (*flame_color_fn)(void *ctx, const struct flame_node *n, const char *name,
			      uint8_t rgb[3]);

struct flamegraph_opts {
	const char *title;       /* NULL: "Flame Graph", or "Icicle Graph" when inverted */
	const char *subtitle;    /* NULL or "": none */
	int width;               /* image width in px (1200) */
	int height;              /* frame height in px (16) */
	double minwidth;         /* frames narrower than this are left out (0.1) */
	bool minwidth_percent;   /* minwidth is a percentage of the total, not pixels */
	enum flame_colors colors;
	const char *palette;     /* NULL, or a palette file ("name->rgb(r,g,b)" lines, flamegraph.pl's
				  * palette.map): colors found there are used, new ones added, and the
				  * file is rewritten after the SVG, keeping lines it could not parse
				  * verbatim (first, in their order; then the entries sorted by name) */
	enum flame_palette_step *palette_failed; /* NULL, or set when the error returned came
						   * from reading or writing the palette file */
	bool inverted;           /* icicle graph: root at the top */
	bool reverse;            /* merge stacks from the leaves: frames leaf first */
	bool negate;             /* FLAME_COLORS_DIFF: swap red and blue */
	const char *countname;   /* "samples" (values in a unit that unit.h scales show it instead) */
	const char *unit;        /* NULL, or the values' unit: "nanoseconds" and "bytes" are shown
				  * in a scale chosen from the total (unit_scale_init: ms or s, KiB,
				  * MiB or GiB) in tooltips; others as integers */
	const char *title_type;  /* NULL, or a sample type the title names after a colon, with the
				  * scale's unit: "Flame Graph: off_cpu (ms)" */
	const char *nametype;    /* "Function:" */
	const char *notes;       /* NULL, or a note kept in an SVG comment (no '<', '>' or "--") */
	int value_index;         /* sample type to draw; -1: profile_value_index() */
	bool no_kernel;          /* leave kernel frames out */
	bool annotate;           /* frame kinds are part of a frame's name as flamegraph.pl's _[k] _[j]
				  * _[i] suffixes are (merging, sorting, colors) (true) */
	bool comm_root;          /* the sample's "comm" label (or "[unknown]") becomes its first frame,
				  * as folded output's comm_first writes it (false) */
	const char *fonttype;    /* "Verdana" */
	double fontsize;         /* 12 */
	double fontwidth;        /* 0.59: average glyph width relative to fontsize */
	flame_color_fn color_fn; /* NULL, or a per-node color callback (before any scheme) */
	void *color_ctx;
};

/* Sets flamegraph.pl's defaults. */
void flamegraph_opts_init(struct flamegraph_opts *o);

/* Returns the scheme named s ("default", "hot", ..., "diff"), or -1. */
int flame_colors_parse(const char *s);
/* Returns the name of a scheme. */
const char *flame_colors_name(enum flame_colors c);
/* Fills rgb with scheme c's color for a frame called name of that kind, as flamegraph.pl's
 * color() does with --hash (a deterministic function of the name). */
void flame_color_of(enum flame_colors c, const char *name, size_t len, enum frame_kind kind,
		    uint8_t rgb[3]);

/* The distinct stacks of a profile (or two), ready for flamegraph.pl's merge. Frames are stored
 * as indexes into a table of distinct (name, kind) keys; names are string ids in `names`, which
 * the tree does not own (usually &profile->strings) and into which it may intern. */
struct flame_tree {
	struct strtab *names;
	/* private */
	uint32_t *key_name;      /* per key: string id */
	uint8_t *key_kind;       /* per key: enum frame_kind or FLAME_KIND_* */
	uint32_t nkeys, cap_keys, cap_kinds; /* cap_*: of key_name, of key_kind */
	uint32_t *key_of;        /* name id * FLAME_NKINDS + kind -> key + 1 */
	size_t key_of_len;
	uint32_t *frames;        /* keys of all stacks, each stack's root first, at its off */
	size_t nframes, cap_frames;
	struct flame_stack {
		size_t off;
		uint32_t len;
		int64_t value, base;
	} *stacks;               /* in flamegraph.pl's order when `sorted` */
	size_t nstacks, cap_stacks;
	uint32_t *rank;          /* per key * 2 + (frame has a child): place in byte order */
	uint32_t maxlen;         /* the longest stack */
	bool sorted;             /* stacks sorted and merged since the last add */
	bool has_base;           /* some stack has a base value: tooltips show it */
	int64_t total, base_total;
};

int flame_tree_init(struct flame_tree *t, struct strtab *names);
void flame_tree_release(struct flame_tree *t);

/* Adds one stack, frames root first (names: string ids in t->names; kinds may be NULL: user).
 * Negative values count as 0; a stack whose value and base are both 0 is ignored. Returns 0,
 * -EINVAL for a name id not in t->names, or -ENOMEM. */
int flame_tree_add(struct flame_tree *t, const uint32_t *names, const enum frame_kind *kinds,
		   size_t n, int64_t value, int64_t base);

/* Adds every sample of p (value o->value_index) as flamegraph_write would draw it: comm root,
 * no_kernel, annotate and reverse applied. With as_base the sample values go to `base`.
 * p's names are interned into t->names when p->strings is not t->names. Returns 0 or -errno. */
int flame_tree_add_profile(struct flame_tree *t, struct profile *p,
			   const struct flamegraph_opts *o, bool as_base);

/* Sorts the stacks in flamegraph.pl's order (the byte order of their folded lines) and merges
 * equal ones. Adding after this is allowed (the next walk sorts again). Returns 0 or -ENOMEM. */
int flame_tree_finish(struct flame_tree *t);

/* Walks the merged frames as flamegraph.pl's flow() does, calling fn for each frame when it
 * closes (children before their parent; the root last). A frame whose stacks are not adjacent
 * in the sorted order (a sibling's name sorts between them) is reported once per run, as
 * flamegraph.pl draws it. fn returns 0 to go on, or an error that the walk returns. */
int flame_tree_walk(struct flame_tree *t, int (*fn)(void *ctx, const struct flame_node *n),
		    void *ctx);

/* Writes the flame graph of tree t as SVG to f (buffered, fwrite). Without samples it writes
 * flamegraph.pl's error SVG and returns -ENODATA. Returns 0, -EINVAL for options it cannot draw
 * with (width <= 20, height < 2, minwidth < 0 or a percentage over 100, fontsize or fontwidth
 * <= 0, an unknown scheme, notes with '<', '>' or "--"), -ENOMEM, -EIO on a write error, or
 * -errno from the palette file (read following a link only when its owner is the effective user
 * or root; written as file_replace_atomic does, mode 0644). */
int flamegraph_write_tree(struct flame_tree *t, FILE *f, const struct flamegraph_opts *o);

/* Builds the tree of profile p and writes its flame graph to f. */
int flamegraph_write(struct profile *p, FILE *f, const struct flamegraph_opts *o);

#endif
