/* Comparing two profiles: their histograms joined by function, the significance test on each
 * change, the gate's rules (parsed from text, evaluated per function), and the stacks of both
 * profiles joined line by line for difffolded output and differential flame graphs. */
#ifndef FIRN_DIFF_H
#define FIRN_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "format/flamegraph.h"
#include "format/folded.h"
#include "analyze/hist.h"

enum { DIFF_BASE = 0, DIFF_NEW = 1 };

enum diff_metric {
	DIFF_SELF = 0,
	DIFF_TOTAL,
};

/* One function (or module, or line: whatever the hists were built by) with its values on both
 * sides; a function missing from one side has zeros there. name and module point into the
 * strings of the profile it came from (the new one when both have it). */
struct diff_entry {
	const char *name, *module;
	int64_t self[2], total[2]; /* [DIFF_BASE], [DIFF_NEW] */
};

/* The joined table. total[side] is that side's hist total: the denominator of its shares;
 * events[side] its hist's events: how many independent events the total stands for, the n of
 * the significance tests (0: total, the values are counts). */
struct diff {
	struct diff_entry *entries;
	size_t n;
	int64_t total[2];
	double events[2];
};

/* How diff_join pairs the entries left without a partner of the same (name, module). */
enum diff_match {
	DIFF_MATCH_MODULE = 0, /* same name, and a module unknown on one side (folded stacks), or
				* the same module in another version (libssl.so.1.1 and libssl.so.3,
				* libfoo.so and libfoo.so.1.2, python3.11 and python3.12: equal once a
				* version after ".so" or a trailing run of digits, '.', '-' and '_' is
				* dropped), or the main executables of the two sides whatever their
				* names (./base and ./new) */
	DIFF_MATCH_NAME,       /* also same name whatever the modules (--ignore-module) */
};

/* The module of p's main executable, the one diff_join pairs with the other side's whatever
 * their names: of the program files (mappings of user code that are no shared object by name,
 * no pseudo file such as "[vdso]", no runtime's or JIT's), the one that the most value of
 * sample type value_index passes through, over p's samples that pass o's pid, comm and idle
 * filters (hist_sample_match); mappings of one base name add up, and a tie goes to the first in
 * p's table (pprof's first mapping is the main binary). For one program's recording, its
 * executable. Returns its base name (as hist names modules; a pointer into p's strings), "" when
 * p has none (folded stacks, a kernel-only profile), or NULL with errno ENOMEM. */
const char *diff_main_module(const struct profile *p, const struct hist_opts *o,
			     uint32_t value_index);

/* How diff_join pairs entries across the two sides. */
struct diff_join_opts {
	enum diff_match match;
	const char *mains[2]; /* each side's main executable (diff_main_module); NULL or "": none */
	bool by_module;       /* the hists are by module (HIST_BY_MODULE): an entry is named after
			       * its module and pairs as the module does (versions, main executables) */
};

/* Joins two hists (each from its own profile, which must outlive d) by (name, module). Then an
 * entry left without a partner is joined with an unpaired entry of the same name on the other
 * side as o->match allows, the closest modules first (unknown, then versions or the main
 * executables, then any); by module, an entry with an unpaired one of a module that pairs. The
 * pair shows NEW's module (and name, by module) unless that is unknown. o NULL: DIFF_MATCH_MODULE,
 * no main executables, by function. So folded and pprof profiles compare, and so do two builds
 * whose files are named differently. Entries come base order first, then new-only ones. Returns
 * 0 or -ENOMEM; d must be released even on failure. */
int diff_join(struct diff *d, const struct hist *base, const struct hist *new_,
	      const struct diff_join_opts *o);
void diff_release(struct diff *d);

/* Value of e's metric on a side. */
int64_t diff_value(const struct diff_entry *e, enum diff_metric m, int side);
/* Share of e's metric on a side, as a fraction of that side's total (0 when the total is 0). */
double diff_share(const struct diff *d, const struct diff_entry *e, enum diff_metric m, int side);
/* The n of a side's tests: its events, or its total when events is 0. */
double diff_events(const struct diff *d, int side);
/* One-sided p-value of e's change of metric m in direction dir (+1: grew, -1: shrank), by the
 * two-proportion z test (stats_z2prop) on the shares over each side's events (diff_events: the
 * counts themselves for a count type); 1 when a side has no samples. */
double diff_p_value(const struct diff *d, const struct diff_entry *e, enum diff_metric m, int dir);

/* Sorts entries by the size of the change of metric by, largest first: the change of share
 * (in percentage points), or of the raw value when counts; then the size of the change of the
 * other metric; then name and module in byte order. */
void diff_sort(struct diff *d, enum diff_metric by, bool counts);

/* ---- the gate ---- */

enum diff_unit {
	DIFF_PP = 0, /* percentage points of the profile: new% - base% */
	DIFF_REL,    /* percent of the base share: (new% - base%) / base% * 100 */
};

/* A rule "KIND:PATTERN>+Npp", "KIND:PATTERN>+N%", "any:METRIC>+N..." (or "<-N..." for a
 * shrink). KIND is self or total; PATTERN is an fnmatch(3) glob on the entry's name. */
struct diff_rule {
	const char *text;       /* as given; not owned */
	char *pattern;          /* owned; NULL for an any: rule (every function) */
	enum diff_metric metric;
	int dir;                /* +1: trips when the metric grew by more; -1: shrank by more */
	double threshold;       /* >= 0, in unit */
	enum diff_unit unit;
};

/* Parses text into r. The operator is the last '>' or '<' followed by a threshold that runs to
 * the end ("self:std::vector<int>::push>+2pp" parses). Returns 0 or -EINVAL (r is then empty),
 * -ENOMEM. */
int diff_rule_parse(struct diff_rule *r, const char *text);
void diff_rule_release(struct diff_rule *r);
/* True when rule r tests entry e (any: rules test every entry). */
bool diff_rule_matches(const struct diff_rule *r, const struct diff_entry *e);

enum diff_verdict {
	DIFF_PASS = 0,     /* every tested function's change is surely below the threshold */
	DIFF_TRIPPED,      /* some function's change surely exceeds it */
	DIFF_INCONCLUSIVE, /* none tripped, but for some the interval of the change holds the
			    * threshold (too few samples), or the pattern matched no function */
};

/* One function a rule tripped on, or could not decide. Changes are in the rule's unit. */
struct diff_finding {
	size_t entry;          /* index into d->entries */
	double base_pct, new_pct;
	double change;         /* pp, or percent (INFINITY when the base share is 0) */
	double low, high;      /* the bounds of the change (diff_rule_eval); NaN when a side has
				* no samples, high INFINITY for a relative change from 0 */
	double p_value;        /* one-sided, in the rule's direction, of the z test of no change */
	double detectable;     /* the smallest change in the rule's direction that would be
				* significant, in the rule's unit; NaN when none would */
};

struct diff_result {
	enum diff_verdict verdict;
	size_t ntested;            /* entries the rule tests (0: the pattern matched none) */
	double alpha;              /* per-function level: (1 - confidence) / ntested, with
				    * 1 - confidence rounded to 12 decimals (0.01, not 0.0100...09) */
	double z_critical;         /* the one-sided critical z at alpha */
	struct diff_finding *tripped, *inconclusive; /* owned, in entry order */
	size_t ntripped, ninconclusive;
	size_t captripped, capinconclusive; /* their capacities */
};

/* Evaluates rule r on d at confidence (0 < confidence < 1), from confidence bounds of each
 * tested function's change: low and high are one-sided bounds at level 1 - alpha, alpha =
 * (1 - confidence) / ntested (Bonferroni over the functions the rule tests), computed from the
 * shares over each side's events (diff_events: for a count type the counts themselves; for
 * times or sizes the effective number of events, hist.events) by Newcombe's hybrid score
 * interval of p2 - p1 (pp rules) or the MOVER-R Wilson interval of p2 / p1 (relative rules; see stats.h). A function
 * trips a growth rule when low > threshold, passes when high < threshold, and is inconclusive
 * otherwise; a shrink rule mirrors this (trips when high < -threshold, passes when low >
 * -threshold). A function that did not trip passes when the threshold is 0 (no interval can
 * exclude a change of exactly 0) or when a relative rule meets a base count of 0 (no base to be
 * relative to), and is inconclusive when a side has no samples. Returns 0 or -ENOMEM. */
int diff_rule_eval(const struct diff *d, const struct diff_rule *r, double confidence,
		   struct diff_result *res);
void diff_result_release(struct diff_result *res);

/* ---- stacks of both sides, for --folded and --svg ---- */

/* The distinct folded stacks of both profiles, in byte order, each with its value on both sides
 * (0 where a side lacks it). Stack text is folded_write's (with its ';' and newline
 * replacements and _[k] _[j] _[i] suffixes). */
struct diff_stacks {
	struct diff_stack {
		const char *stack; /* points into text[0] or text[1]; not NUL-terminated */
		size_t len;
		int64_t value[2];
	} *s;
	size_t n;
	int64_t total[2];
	char *text[2];         /* owned: each side's folded text */
};

/* Writes each profile as folded stacks (with its own options: value_index differs) and joins
 * the lines. Returns 0 or folded_write's error; ds must be released even on failure. */
int diff_stacks_build(struct diff_stacks *ds, struct profile *base, const struct folded_opts *bo,
		      struct profile *new_, const struct folded_opts *no);
void diff_stacks_release(struct diff_stacks *ds);

/* A stack's value on side, scaled to the other side's total when normalize (rounded half away
 * from zero; 0 when this side's total is 0). */
int64_t diff_stacks_value(const struct diff_stacks *ds, size_t i, int side, bool normalize);

/* Writes "STACK BASE NEW" lines (difffolded.pl's format), BASE scaled to NEW's total when
 * normalize (as difffolded.pl -n does). Returns 0 or -EIO. */
int diff_stacks_write_folded(const struct diff_stacks *ds, FILE *f, bool normalize);

/* Adds every stack to t (names interned into t->names, _[k] _[j] _[i] suffixes turned into
 * frame kinds, frames reversed when reverse): widths from NEW and base values from BASE, or the
 * other way round when negate; the base values are scaled to the width side's total when
 * normalize. Returns 0 or -ENOMEM. */
int diff_stacks_tree(const struct diff_stacks *ds, struct flame_tree *t, bool normalize,
		     bool negate, bool reverse);

/* Coloring a differential flame graph by the change of each frame's total (inclusive) value
 * rather than its self value: a flame_color_fn and its context. */
struct diff_total_colors {
	int64_t maxdelta; /* the largest |value - base| of a frame below the root (at least 1) */
	bool negate;      /* the tree's value is BASE (diff_stacks_tree's negate) */
};

/* Walks t (finishing it) for maxdelta. Returns 0 or the walk's error. */
int diff_total_colors_init(struct diff_total_colors *c, struct flame_tree *t, bool negate);
/* flame_color_fn with ctx a struct diff_total_colors: flamegraph.pl's scale from white, to red
 * as the total grew from BASE to NEW, to blue as it shrank, saturated at maxdelta; returns 1.
 * Leaves the gray separator frames "-" and "--" to the writer (returns 0). */
int diff_total_color(void *ctx, const struct flame_node *n, const char *name, uint8_t rgb[3]);

#endif
