/* firn diff: compares two profiles function by function (or their stacks, as difffolded text or
 * a differential flame graph) and gates on rules: exit 3 when a significant change trips one
 * (an undecided rule is a warning; exit 4 for it with --strict). */
#include "common.h"
#include "opt.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/diff.h"
#include "format/flamegraph.h"
#include "format/folded.h"
#include "analyze/hist.h"
#include "format/input.h"
#include "base/json.h"
#include "opt_filter.h"
#include "opt_flamegraph.h"
#include "base/vec.h"

#define DIFF_USAGE \
	"[OPTIONS] BASE NEW\n" \
	"[OPTIONS] --base FILE... --new FILE...\n" \
	"--folded|--json|--svg [OPTIONS] BASE NEW\n" \
	"--fail-on RULE... [--confidence P] [--strict] [OPTIONS] BASE NEW"

#define DEFAULT_TOP 20
#define DEFAULT_CONFIDENCE 0.99
#define GATE_TRIPPED 3
#define GATE_INCONCLUSIVE 4
#define MAX_LISTED 5 /* functions listed per rule on stderr */

enum diff_mode { MODE_TABLE, MODE_FOLDED, MODE_JSON, MODE_SVG };

enum {
	OPT_BASE = 256, OPT_NEW, OPT_BY, OPT_TOP, OPT_SORT, OPT_ABS, OPT_FOLDED, OPT_JSON, OPT_SVG,
	OPT_FAIL_ON, OPT_CONFIDENCE, OPT_NEGATE, OPT_COLOR_BY, OPT_COMM, OPT_NO_KERNEL, OPT_INLINE,
	OPT_IGNORE_MODULE, OPT_SAMPLE_TYPE, OPT_STRICT,
};

/* The files of one side, in order; merged into one profile. */
struct side {
	char **files;
	size_t n, cap;
};

struct diff_opts {
	struct side sides[2];     /* DIFF_BASE, DIFF_NEW */
	struct side plain;        /* operands given without --base/--new */
	int current;              /* side that operands after --base/--new go to; -1: plain */
	const char *output;       /* NULL or "-" for stdout */
	enum diff_mode mode;
	int mode_id;
	long top;
	enum diff_metric sort;
	bool abs;
	struct diff_rule *rules;
	size_t nrules, cap_rules;
	double confidence;
	bool strict;              /* an inconclusive gate exits 4 (else 0, with a warning) */
	bool negate;
	enum diff_metric color_by;
	struct hist_opts hist;
	enum diff_match match;    /* how functions of differing modules pair */
	struct flamegraph_opts fg;
	uint32_t given;           /* bit (id - 256) for each option given */
	int fg_id;                /* the first flame graph option given, 0 if none */
	const char *sample_type;  /* --sample-type NAME|INDEX, NULL: the profiles' default */
	struct filter filter;     /* --focus, --ignore, --show-from, ...: on both sides */
};

/* What each side holds once loaded: the merged profile and its hist. */
struct loaded {
	struct profile p[2];
	struct hist h[2];
	bool have_p[2], have_h[2];
	struct diff d;
	bool counts;              /* the summed values are counts (else times, sizes...) */
	const char *type, *unit;  /* the sample type summed */
	struct unit_scale scale;  /* how its values are shown (ms, s, KiB...; counts as they are) */
	struct filter_stats kept[2]; /* what --focus, --ignore... kept of each side's values */
};

/* Defaults: the table of the 20 largest changes of self share, confidence 0.99. */
static void diff_opts_init(struct diff_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->current = -1;
	o->top = DEFAULT_TOP;
	o->sort = DIFF_SELF;
	o->confidence = DEFAULT_CONFIDENCE;
	o->color_by = DIFF_SELF;
	flamegraph_opts_init(&o->fg);
	filter_init(&o->filter);
}

static void diff_opts_release(struct diff_opts *o)
{
	for (size_t i = 0; i < o->nrules; i++)
		diff_rule_release(&o->rules[i]);
	free(o->rules);
	free(o->sides[0].files);
	free(o->sides[1].files);
	free(o->plain.files);
	filter_release(&o->filter);
}

#define MODE_BIT(m) (1u << (m))
#define ALL_MODES 0xfu

/* Output modes each option applies to; an option given for another mode is a usage error. */
static const struct {
	int id;
	unsigned modes;
} option_modes[] = {
	{ OPT_TOP, MODE_BIT(MODE_TABLE) | MODE_BIT(MODE_JSON) },
	{ OPT_SORT, MODE_BIT(MODE_TABLE) | MODE_BIT(MODE_JSON) },
	{ OPT_NEGATE, MODE_BIT(MODE_SVG) },
	{ OPT_COLOR_BY, MODE_BIT(MODE_SVG) },
	{ OPT_INLINE, ALL_MODES & ~MODE_BIT(MODE_SVG) },
};

/* The long name of an option of diff_cmd, for messages. */
static const char *option_name(int id)
{
	for_each_opt(o, &diff_cmd)
		if (o->id == id)
			return o->long_name;
	return "?";
}

/* How a mode is named in messages. */
static const char *mode_name(enum diff_mode m)
{
	static const char *const names[] = { "the table", "--folded", "--json", "--svg" };

	return names[m];
}

/* Chooses the output mode; two different modes are a usage error. */
static int set_mode(struct diff_opts *o, int id)
{
	if (o->mode_id && o->mode_id != id)
		return usage_error(&diff_cmd, "--%s and --%s cannot be used together",
				   option_name(o->mode_id), option_name(id));
	o->mode_id = id;
	o->mode = id == OPT_FOLDED ? MODE_FOLDED : id == OPT_JSON ? MODE_JSON : MODE_SVG;
	return 0;
}

/* Appends file to a side's list. */
static int side_add(struct side *s, char *file)
{
	if (VEC_GROW(s->files, s->cap, s->n + 1))
		return error("out of memory");
	s->files[s->n++] = file;
	return 0;
}

/* --fail-on RULE: parsed now, so that a bad rule is a usage error. */
static int add_rule(struct diff_opts *o, const char *arg)
{
	if (VEC_GROW(o->rules, o->cap_rules, o->nrules + 1))
		return error("out of memory");
	int err = diff_rule_parse(&o->rules[o->nrules], arg);
	if (err == -ENOMEM)
		return error("out of memory");
	if (err)
		return usage_error(&diff_cmd, "invalid rule '%s' (KIND:PATTERN>+Npp or >+N%%, KIND "
				   "self or total; any:self or any:total for every function; <-N for "
				   "a shrink)", arg);
	o->nrules++;
	return 0;
}

/* Parses "self" or "total" (--sort, --color-by). */
static int parse_metric(const char *name, const char *arg, enum diff_metric *m)
{
	if (!strcmp(arg, "self"))
		*m = DIFF_SELF;
	else if (!strcmp(arg, "total"))
		*m = DIFF_TOTAL;
	else
		return usage_error(&diff_cmd, "invalid value '%s' for --%s (self or total)", arg, name);
	return 0;
}

/* --by function|module|line */
static int parse_by(struct diff_opts *o, const char *arg)
{
	if (!strcmp(arg, "function"))
		o->hist.by = HIST_BY_FUNCTION;
	else if (!strcmp(arg, "module"))
		o->hist.by = HIST_BY_MODULE;
	else if (!strcmp(arg, "line"))
		o->hist.by = HIST_BY_LINE;
	else
		return usage_error(&diff_cmd, "invalid value '%s' for --by (function, module or line)",
				   arg);
	return 0;
}

/* The flame graph options that make no sense for a differential graph (colors show change). */
static int flamegraph_option_diff(struct diff_opts *o, int id, const char *arg)
{
	for (const struct opt *f = flamegraph_option_table; f->long_name; f++)
		if (f->id == id && (!strcmp(f->long_name, "colors") || !strcmp(f->long_name, "palette")))
			return usage_error(&diff_cmd, "--%s does not apply to diff: frames are colored "
					   "by change (see --color-by)", f->long_name);
	o->fg_id = o->fg_id ? o->fg_id : id;
	return flamegraph_option(&diff_cmd, &o->fg, id, arg);
}

/* Options that take a value or set a flag (the rest of diff_option). */
static int value_option(struct diff_opts *o, int id, const char *arg)
{
	long v;

	switch (id) {
	case OPT_BY:
		return parse_by(o, arg);
	case OPT_TOP:
		if (opt_long(&diff_cmd, "top", arg, 0, INT_MAX, &v))
			return 2;
		o->top = v;
		return 0;
	case OPT_SORT:
		return parse_metric("sort", arg, &o->sort);
	case OPT_COLOR_BY:
		return parse_metric("color-by", arg, &o->color_by);
	case OPT_CONFIDENCE:
		return opt_double(&diff_cmd, "confidence", arg, 0.5, 0.999999, &o->confidence);
	case OPT_FAIL_ON:
		return add_rule(o, arg);
	case OPT_COMM:
		o->hist.comm = arg;
		return 0;
	case OPT_SAMPLE_TYPE:
		o->sample_type = arg;
		return 0;
	}
	o->abs |= id == OPT_ABS;
	o->negate |= id == OPT_NEGATE;
	o->strict |= id == OPT_STRICT;
	o->hist.no_kernel |= id == OPT_NO_KERNEL;
	o->hist.inline_frames |= id == OPT_INLINE;
	if (id == OPT_IGNORE_MODULE)
		o->match = DIFF_MATCH_NAME;
	return 0;
}

/* Option handler for opt_parse. */
static int diff_option(void *ctx, int id, const char *arg)
{
	struct diff_opts *o = ctx;

	if (id >= OPT_FLAMEGRAPH_FIRST && id <= OPT_FLAMEGRAPH_LAST)
		return flamegraph_option_diff(o, id, arg);
	if (id >= OPT_FILTER_FIRST && id <= OPT_FILTER_LAST)
		return filter_option(&diff_cmd, &o->filter, id, arg);
	if (id >= 256 && id < 256 + 32)
		o->given |= 1u << (id - 256);
	switch (id) {
	case 'o':
		o->output = arg;
		return 0;
	case OPT_FOLDED: case OPT_JSON: case OPT_SVG:
		return set_mode(o, id);
	case OPT_BASE: case OPT_NEW:
		o->current = id == OPT_BASE ? DIFF_BASE : DIFF_NEW;
		return side_add(&o->sides[o->current], (char *)arg);
	}
	return value_option(o, id, arg);
}

/* Rejects options that do not apply to the chosen output mode. */
static int check_modes(const struct diff_opts *o)
{
	for (size_t i = 0; i < sizeof(option_modes) / sizeof(option_modes[0]); i++)
		if ((o->given & 1u << (option_modes[i].id - 256)) &&
		    !(option_modes[i].modes & MODE_BIT(o->mode)))
			return usage_error(&diff_cmd, "--%s does not apply to %s output",
					   option_name(option_modes[i].id), mode_name(o->mode));
	if (o->fg_id && o->mode != MODE_SVG)
		return usage_error(&diff_cmd, "--%s applies to --svg output only",
				   option_name(o->fg_id));
	if (o->match == DIFF_MATCH_NAME && o->hist.by == HIST_BY_MODULE)
		return usage_error(&diff_cmd, "--ignore-module does not apply to --by module");
	if (o->strict && !o->nrules)
		return usage_error(&diff_cmd, "--strict applies to a gate only (--fail-on)");
	return 0;
}

/* Sorts out the operands: BASE NEW, or the lists of --base and --new. */
static int check_sides(struct diff_opts *o)
{
	bool lists = o->sides[0].n || o->sides[1].n;

	if (lists && o->plain.n)
		return usage_error(&diff_cmd, "'%s': give files after --base or --new, or two "
				   "operands BASE NEW, not both", o->plain.files[0]);
	if (!lists) {
		if (o->plain.n < 2)
			return usage_error(&diff_cmd, "two profiles needed: BASE NEW");
		if (o->plain.n > 2)
			return usage_error(&diff_cmd, "too many arguments: '%s'", o->plain.files[2]);
		side_add(&o->sides[DIFF_BASE], o->plain.files[0]);
		return side_add(&o->sides[DIFF_NEW], o->plain.files[1]);
	}
	if (!o->sides[DIFF_BASE].n || !o->sides[DIFF_NEW].n)
		return usage_error(&diff_cmd, "--%s needs --%s too", o->sides[0].n ? "base" : "new",
				   o->sides[0].n ? "new" : "base");
	return 0;
}

/* Parses options and operands; an operand goes to the side of the last --base or --new (parsing
 * stops at each operand and resumes behind it); "--" ends the options. */
static int parse_args(struct diff_opts *o, int argc, char **argv)
{
	int argi, rc = opt_parse(&diff_cmd, argc, argv, true, diff_option, o, &argi);

	while (!rc && argi < argc) {
		bool dashdash = !strcmp(argv[argi - 1], "--");
		for (int i = argi; i < (dashdash ? argc : argi + 1) && !rc; i++)
			rc = side_add(o->current < 0 ? &o->plain : &o->sides[o->current], argv[i]);
		if (rc || dashdash)
			break;
		argc -= argi;
		argv += argi; /* the operand stands in for argv[0] */
		rc = opt_parse(&diff_cmd, argc, argv, true, diff_option, o, &argi);
	}
	if (!rc)
		rc = check_sides(o);
	return rc ? rc : check_modes(o);
}

/* ---- loading ---- */

/* Loads the files of one side into p, merging the second and later ones into the first. */
static int load_side(struct profile *p, const struct side *s)
{
	int rc = load_profile(p, s->files[0]);

	for (size_t i = 1; i < s->n && !rc; i++) {
		struct profile q;
		if (profile_init(&q))
			return error("out of memory");
		rc = load_profile(&q, s->files[i]);
		int err = rc ? 0 : profile_values_check(p, &q); /* sums over the merge must fit */
		if (!err && !rc)
			err = profile_merge(p, &q);
		if (err == -EOVERFLOW)
			rc = error("cannot merge '%s' with '%s': sample counts overflow",
				   input_name(s->files[i]), input_name(s->files[0]));
		else if (err == -EINVAL)
			rc = error("cannot merge '%s' with '%s': different sample types",
				   input_name(s->files[i]), input_name(s->files[0]));
		else if (err)
			rc = error("cannot merge '%s': %s", input_name(s->files[i]), strerror(-err));
		profile_release(&q);
	}
	return rc;
}

/* True when p has a sample type named type. */
static bool has_type(const struct profile *p, const char *type)
{
	for (uint32_t i = 0; i < p->nsample_types; i++)
		if (!strcmp(profile_str(p, p->sample_types[i].type), type))
			return true;
	return false;
}

/* The name of the sample type that spec (--sample-type, NULL: the default) chooses in side s,
 * NULL when it has none; *rc 2 (the error printed) when spec names none of its types. */
static const char *side_type(const struct loaded *l, const struct diff_opts *o, int s, int *rc)
{
	const struct profile *p = &l->p[s];
	int i = sample_type_choose(&diff_cmd, p, o->sample_type, o->sides[s].files[0]);

	if (i < 0)
		*rc = 2;
	return i >= 0 && p->nsample_types ? profile_str(p, p->sample_types[i].type) : NULL;
}

/* The sample type both sides are summed by: the one --sample-type names, which both must have
 * (by the same name); else the default type when both defaults have the same name (or a side
 * has no types), else "samples" when both have it. */
static int choose_type(struct loaded *l, struct diff_opts *o)
{
	int rc = 0;
	const char *tb = side_type(l, o, DIFF_BASE, &rc), *tn = rc ? NULL : side_type(l, o, DIFF_NEW, &rc);

	if (rc)
		return rc;
	if (tb && tn && strcmp(tb, tn) && o->sample_type) { /* an index naming two types */
		fprintf(stderr, "firn diff: sample type %s is '%s' in '%s' but '%s' in '%s'\n",
			o->sample_type, tb, input_name(o->sides[0].files[0]), tn,
			input_name(o->sides[1].files[0]));
		return 2;
	}
	if (tb && tn && strcmp(tb, tn)) {
		if (!has_type(&l->p[DIFF_BASE], "samples") || !has_type(&l->p[DIFF_NEW], "samples"))
			return error("cannot compare '%s' values with '%s' values (choose a type both "
				     "have with --sample-type)", tb, tn);
		tb = "samples";
	}
	o->hist.sample_type = tb ? tb : tn;
	return 0;
}

/* Joins the two hists, the main executables of the two sides as one module whatever their
 * names (two builds: ./base and ./new). */
static int join_sides(struct loaded *l, const struct diff_opts *o)
{
	struct diff_join_opts jo = { o->match, { NULL, NULL }, o->hist.by == HIST_BY_MODULE };

	for (int s = 0; s < 2; s++)
		if (!(jo.mains[s] = diff_main_module(&l->p[s], &o->hist, l->h[s].value_index)))
			return error("out of memory");
	if (diff_join(&l->d, &l->h[DIFF_BASE], &l->h[DIFF_NEW], &jo))
		return error("out of memory");
	return 0;
}

/* Applies the stack filters to both sides once the type is chosen, so that each header can say
 * how much of that type they kept ("60 of 100 samples"). The chosen type's name lives in a
 * profile's strings, which filtering replaces: it is found again in the filtered base. */
static int filter_sides(struct loaded *l, struct diff_opts *o)
{
	int vi[2];

	for (int s = 0; s < 2; s++)
		vi[s] = profile_sample_type_find(&l->p[s], o->hist.sample_type);
	for (int s = 0; s < 2; s++)
		if (filter_apply(&l->p[s], &o->filter, vi[s] < 0 ? 0 : (uint32_t)vi[s], &l->kept[s]))
			return error("out of memory");
	if (o->hist.sample_type && vi[0] >= 0)
		o->hist.sample_type = profile_str(&l->p[0], l->p[0].sample_types[vi[0]].type);
	return 0;
}

/* Loads both sides, builds their hists and joins them. */
static int load_all(struct loaded *l, struct diff_opts *o)
{
	int rc = 0;

	for (int s = 0; s < 2 && !rc; s++) {
		if (profile_init(&l->p[s]))
			return error("out of memory");
		l->have_p[s] = true;
		rc = load_side(&l->p[s], &o->sides[s]);
	}
	if (!rc)
		rc = choose_type(l, o);
	if (!rc)
		rc = filter_sides(l, o);
	for (int s = 0; s < 2 && !rc; s++) {
		l->have_h[s] = true;
		int err = hist_build(&l->h[s], &l->p[s], &o->hist);
		if (err == -EINVAL)
			rc = error("cannot build the table of '%s': the profile has no sample type to compare",
				   input_name(o->sides[s].files[0]));
		else if (err)
			rc = error("cannot build the table of '%s': %s", input_name(o->sides[s].files[0]),
				   strerror(-err));
	}
	if (!rc)
		rc = join_sides(l, o);
	if (rc)
		return rc;
	int s = l->p[DIFF_NEW].nsample_types ? DIFF_NEW : DIFF_BASE;
	const struct profile *p = &l->p[s];
	const struct profile_value_type *vt = p->nsample_types ?
		&p->sample_types[l->h[s].value_index] : NULL;
	l->type = vt ? profile_str(p, vt->type) : "samples";
	l->unit = vt ? profile_str(p, vt->unit) : "count";
	l->counts = !strcmp(l->unit, "count");
	int64_t max = l->h[0].all_total > l->h[1].all_total ? l->h[0].all_total : l->h[1].all_total;
	unit_scale_init(&l->scale, l->unit, max);
	return 0;
}

static void loaded_release(struct loaded *l)
{
	diff_release(&l->d);
	for (int s = 0; s < 2; s++) {
		if (l->have_h[s])
			hist_release(&l->h[s]);
		if (l->have_p[s])
			profile_release(&l->p[s]);
	}
}

/* ---- the table ---- */

/* A share (a fraction) in percent. */
static double pct(double share)
{
	return share * 100;
}

/* Two-sided p-value of e's change of m. */
static double p_two_sided(const struct loaded *l, const struct diff_entry *e, enum diff_metric m)
{
	double up = diff_p_value(&l->d, e, m, 1), down = diff_p_value(&l->d, e, m, -1);
	double p = 2 * (up < down ? up : down);

	return p < 1 ? p : 1;
}

/* True when e's change of m is significant: two-sided, Bonferroni over every row. */
static bool significant(const struct loaded *l, const struct diff_opts *o,
			const struct diff_entry *e, enum diff_metric m)
{
	double alpha = round((1 - o->confidence) * 1e12) / 1e12 / (l->d.n ? l->d.n : 1);

	return p_two_sided(l, e, m) < alpha;
}

/* "# base: A + B: 2,041 samples", or "# base: A: 6,000.0 ms off_cpu (26 events)": one header
 * line per side; a type other than counts says how many independent events its values stand
 * for (hist.events), what its significance tests go by. */
static void header_side(FILE *f, const struct diff_opts *o, const struct loaded *l, int s)
{
	char a[48], b[48];
	const struct hist *h = &l->h[s];

	fprintf(f, "# %s:%s ", s ? "new" : "base", s ? " " : "");
	for (size_t i = 0; i < o->sides[s].n; i++) {
		fputs(i ? " + " : "", f);
		put_text(f, input_name(o->sides[s].files[i]), 0);
	}
	int64_t all = filter_active(&o->filter) ? l->kept[s].total : h->all_total;
	fprintf(f, ": %s", group_value(&l->scale, h->total, a));
	if (h->total != all)
		fprintf(f, " of %s", group_value(&l->scale, all, b));
	if (l->scale.scaled)
		fprintf(f, " %s", l->scale.name);
	fputc(' ', f);
	put_text(f, !strcmp(l->type, "samples") && all == 1 ? "sample" : l->type, 0);
	if (!l->counts)
		fprintf(f, " (%.0f events)", diff_events(&l->d, s));
	if (o->sides[s].n > 1 && l->have_p[s] && l->p[s].time_nanos > 0)
		put_time_range(f, &l->p[s]); /* several files: the range they cover together */
	fputc('\n', f);
}

/* Rows the table and JSON show. */
static size_t rows_shown(const struct diff_opts *o, const struct diff *d)
{
	return o->top && (size_t)o->top < d->n ? (size_t)o->top : d->n;
}

/* Writes a change: "+13.33", "-0.50", "0.00" (pp); raw values with a sign in scale u (counts,
 * or ms, s, KiB...) when u is not NULL. */
static void put_change(FILE *f, int w, double v, const struct unit_scale *u, bool mark)
{
	char buf[48];

	if (u)
		snprintf(buf, sizeof(buf), v ? "%+.*f" : "%.*f", u->decimals, v / u->div);
	else
		snprintf(buf, sizeof(buf), fabs(v) < 0.005 ? "%.2f" : "%+.2f", fabs(v) < 0.005 ? 0 : v);
	fprintf(f, "  %*s%c", w, buf, mark ? '*' : ' ');
}

/* One metric's three columns of a row. */
static void put_metric(FILE *f, int w, const struct loaded *l, const struct diff_opts *o,
		       const struct diff_entry *e, enum diff_metric m)
{
	bool mark = significant(l, o, e, m);

	if (o->abs) {
		char b[48], n[48];
		fprintf(f, "  %*s  %*s", w, unit_format(&l->scale, diff_value(e, m, DIFF_BASE), b,
							sizeof(b)),
			w, unit_format(&l->scale, diff_value(e, m, DIFF_NEW), n, sizeof(n)));
		put_change(f, w, (double)diff_value(e, m, DIFF_NEW) - diff_value(e, m, DIFF_BASE),
			   &l->scale, mark);
		return;
	}
	double b = pct(diff_share(&l->d, e, m, DIFF_BASE)), n = pct(diff_share(&l->d, e, m, DIFF_NEW));
	fprintf(f, "  %*.2f  %*.2f", w, b, w, n);
	put_change(f, w, n - b, NULL, mark);
}

/* Column width: 7 ("+100.00"), or wider for raw values. */
static int column_width(const struct diff_opts *o, const struct loaded *l, size_t rows)
{
	char buf[48];
	int w = 7;

	for (size_t i = 0; o->abs && i < rows; i++)
		for (int s = 0; s < 2; s++) {
			const struct diff_entry *e = &l->d.entries[i];
			int a = strlen(unit_format(&l->scale, e->total[s], buf, sizeof(buf))) + 1;
			w = a > w ? a : w;
		}
	return w;
}

/* The table: headers, then per row self base/new/change, total base/new/change, module, name. */
static void table_write(FILE *f, const struct diff_opts *o, const struct loaded *l)
{
	size_t rows = rows_shown(o, &l->d);
	int w = column_width(o, l, rows), mw = strlen("module"), gw = 3 * (w + 2) + 1;

	for (size_t i = 0; i < rows; i++) {
		int m = text_len(*l->d.entries[i].module ? l->d.entries[i].module : "-");
		mw = m > mw ? m : mw;
	}
	header_side(f, o, l, DIFF_BASE);
	header_side(f, o, l, DIFF_NEW);
	char self[64], total[64];
	snprintf(self, sizeof(self), l->scale.scaled ? "  self %s" : "  self", l->scale.name);
	snprintf(total, sizeof(total), l->scale.scaled ? "total %s" : "total", l->scale.name);
	fprintf(f, "%-*s%s\n", gw, o->abs ? self : "  self%", o->abs ? total : "total%");
	for (int g = 0; g < 2; g++)
		fprintf(f, "  %*s  %*s  %*s ", w, "base", w, "new", w, "change");
	fprintf(f, "  %-*s  %s\n", mw, "module", "function");
	for (size_t i = 0; i < rows; i++) {
		const struct diff_entry *e = &l->d.entries[i];
		put_metric(f, w, l, o, e, DIFF_SELF);
		put_metric(f, w, l, o, e, DIFF_TOTAL);
		fputs("  ", f);
		put_text(f, *e->module ? e->module : "-", mw); /* names escaped: any binary's */
		fputs("  ", f);
		put_text(f, e->name, 0);
		fputc('\n', f);
	}
	fprintf(f, "# * significant at %g%% (two-sided z test, Bonferroni over %zu "
		"functions)\n", o->confidence * 100, l->d.n);
}

/* ---- JSON ---- */

/* Writes a number, or null when it is not finite. */
static void jw_num(struct json_writer *w, double v)
{
	if (isfinite(v))
		jw_double(w, v);
	else
		jw_null(w);
}

/* A side's object: files, total, all_total. */
static void json_side(struct json_writer *w, const struct diff_opts *o, const struct loaded *l,
		      int s)
{
	jw_name(w, s ? "new" : "base");
	jw_begin_object(w);
	jw_name(w, "files");
	jw_begin_array(w);
	for (size_t i = 0; i < o->sides[s].n; i++)
		jw_string(w, o->sides[s].files[i]);
	jw_end_array(w);
	jw_name(w, "total");
	jw_int(w, l->h[s].total);
	jw_name(w, "all_total");
	jw_int(w, l->h[s].all_total);
	jw_name(w, "events");
	jw_double(w, diff_events(&l->d, s));
	jw_end_object(w);
}

/* One metric of a row: counts, shares, changes, p-value, significance. */
static void json_metric(struct json_writer *w, const struct diff_opts *o, const struct loaded *l,
			const struct diff_entry *e, enum diff_metric m)
{
	double b = diff_share(&l->d, e, m, DIFF_BASE), n = diff_share(&l->d, e, m, DIFF_NEW);

	jw_name(w, m == DIFF_SELF ? "self" : "total");
	jw_begin_object(w);
	jw_name(w, "base");
	jw_int(w, diff_value(e, m, DIFF_BASE));
	jw_name(w, "new");
	jw_int(w, diff_value(e, m, DIFF_NEW));
	jw_name(w, "base_pct");
	jw_double(w, b * 100);
	jw_name(w, "new_pct");
	jw_double(w, n * 100);
	jw_name(w, "change_pp");
	jw_double(w, (n - b) * 100);
	jw_name(w, "change_rel");
	jw_num(w, b > 0 ? (n - b) / b * 100 : NAN);
	jw_name(w, "p_value");
	jw_num(w, p_two_sided(l, e, m));
	jw_name(w, "significant");
	jw_bool(w, significant(l, o, e, m));
	jw_end_object(w);
}

/* One finding of a rule. */
static void json_finding(struct json_writer *w, const struct diff *d, const struct diff_finding *f)
{
	jw_begin_object(w);
	jw_name(w, "name");
	jw_string(w, d->entries[f->entry].name);
	jw_name(w, "module");
	jw_string(w, d->entries[f->entry].module);
	jw_name(w, "base_pct");
	jw_double(w, f->base_pct);
	jw_name(w, "new_pct");
	jw_double(w, f->new_pct);
	jw_name(w, "change");
	jw_num(w, f->change);
	jw_name(w, "low");
	jw_num(w, f->low);
	jw_name(w, "high");
	jw_num(w, f->high);
	jw_name(w, "p_value");
	jw_double(w, f->p_value);
	jw_name(w, "detectable");
	jw_num(w, f->detectable);
	jw_end_object(w);
}

static const char *const verdict_names[] = { "passed", "tripped", "inconclusive" };

/* One rule and its result. */
static void json_rule(struct json_writer *w, const struct diff *d, const struct diff_rule *r,
		      const struct diff_result *res)
{
	jw_begin_object(w);
	jw_name(w, "rule");
	jw_string(w, r->text);
	jw_name(w, "metric");
	jw_string(w, r->metric == DIFF_SELF ? "self" : "total");
	jw_name(w, "pattern");
	jw_string(w, r->pattern);
	jw_name(w, "direction");
	jw_string(w, r->dir > 0 ? "grew" : "shrank");
	jw_name(w, "threshold");
	jw_double(w, r->threshold);
	jw_name(w, "unit");
	jw_string(w, r->unit == DIFF_PP ? "pp" : "%");
	jw_name(w, "verdict");
	jw_string(w, verdict_names[res->verdict]);
	jw_name(w, "tested");
	jw_uint(w, res->ntested);
	jw_name(w, "alpha");
	jw_num(w, res->alpha);
	jw_name(w, "z_critical");
	jw_num(w, res->z_critical);
	const char *names[2] = { "tripped", "inconclusive" };
	for (int k = 0; k < 2; k++) {
		jw_name(w, names[k]);
		jw_begin_array(w);
		for (size_t i = 0; i < (k ? res->ninconclusive : res->ntripped); i++)
			json_finding(w, d, k ? &res->inconclusive[i] : &res->tripped[i]);
		jw_end_array(w);
	}
	jw_end_object(w);
}

/* The gate's verdict from its rules' results: a rule that trips decides it, else one that
 * could not be decided. */
static enum diff_verdict gate_verdict(const struct diff_result *res, size_t n)
{
	enum diff_verdict v = DIFF_PASS;

	for (size_t i = 0; i < n; i++) {
		if (res[i].verdict == DIFF_TRIPPED)
			return DIFF_TRIPPED;
		if (res[i].verdict == DIFF_INCONCLUSIVE)
			v = DIFF_INCONCLUSIVE;
	}
	return v;
}

/* The exit status of a verdict: an inconclusive gate fails only with --strict (as benchstat's
 * users expect: only a change shown to be significant fails a build). */
static int gate_status(enum diff_verdict v, bool strict)
{
	return v == DIFF_TRIPPED ? GATE_TRIPPED : v == DIFF_INCONCLUSIVE && strict ? GATE_INCONCLUSIVE : 0;
}

/* "gate": null without rules, else the verdict and every rule. */
static void json_gate(struct json_writer *w, const struct diff_opts *o, const struct loaded *l,
		      const struct diff_result *res)
{
	jw_name(w, "gate");
	if (!o->nrules) {
		jw_null(w);
		return;
	}
	enum diff_verdict v = gate_verdict(res, o->nrules);
	jw_begin_object(w);
	jw_name(w, "verdict");
	jw_string(w, verdict_names[v]);
	jw_name(w, "strict");
	jw_bool(w, o->strict);
	jw_name(w, "exit_status");
	jw_int(w, gate_status(v, o->strict));
	jw_name(w, "rules");
	jw_begin_array(w);
	for (size_t i = 0; i < o->nrules; i++)
		json_rule(w, &l->d, &o->rules[i], &res[i]);
	jw_end_array(w);
	jw_end_object(w);
}

static const char *const by_names[] = { "function", "module", "line" };

/* The whole comparison as one JSON object (schema: man/firn-diff.schema.json). */
static int json_write(FILE *f, const struct diff_opts *o, const struct loaded *l,
		      const struct diff_result *res)
{
	struct json_writer *w = jw_new(f, true);

	if (!w)
		return -ENOMEM;
	jw_begin_object(w);
	json_side(w, o, l, DIFF_BASE);
	json_side(w, o, l, DIFF_NEW);
	jw_name(w, "sample_type");
	jw_string(w, l->type);
	jw_name(w, "unit");
	jw_string(w, l->unit);
	jw_name(w, "by");
	jw_string(w, by_names[o->hist.by]);
	jw_name(w, "confidence");
	jw_double(w, o->confidence);
	jw_name(w, "functions");
	jw_begin_array(w);
	for (size_t i = 0; i < rows_shown(o, &l->d); i++) {
		const struct diff_entry *e = &l->d.entries[i];
		jw_begin_object(w);
		jw_name(w, "name");
		jw_string(w, e->name);
		jw_name(w, "module");
		jw_string(w, e->module);
		json_metric(w, o, l, e, DIFF_SELF);
		json_metric(w, o, l, e, DIFF_TOTAL);
		jw_end_object(w);
	}
	jw_end_array(w);
	json_gate(w, o, l, res);
	jw_end_object(w);
	int err = jw_error(w);
	jw_free(w);
	return err;
}

/* ---- stacks: --folded and --svg ---- */

/* True when samples carry a "comm" label (recorded profiles do; folded text does not). */
static bool has_comm(const struct profile *p)
{
	for (uint64_t i = 0; i < p->nsamples; i++)
		if (profile_label_str(p, &p->samples[i], "comm"))
			return true;
	return false;
}

/* The default subtitle of a differential flame graph: what is compared, and how to read it. */
static char *subtitle_of(const struct diff_opts *o)
{
	char *s = NULL;

	if (asprintf(&s, "%s%s -> %s%s: widths from %s; red grew, blue shrank%s",
		     input_name(o->sides[0].files[0]), o->sides[0].n > 1 ? " + ..." : "",
		     input_name(o->sides[1].files[0]), o->sides[1].n > 1 ? " + ..." : "",
		     o->negate ? "BASE" : "NEW", o->color_by == DIFF_TOTAL ? " (total)" : "") < 0)
		return NULL;
	return s;
}

/* The differential flame graph of the joined stacks. */
static int svg_write(FILE *f, struct diff_opts *o, const struct diff_stacks *ds)
{
	struct strtab names;
	struct flame_tree t;
	struct diff_total_colors tc;
	char *sub = o->fg.subtitle ? NULL : subtitle_of(o);
	int err = strtab_init(&names);

	if (err || (!o->fg.subtitle && !sub)) {
		free(sub);
		return err ? err : -ENOMEM;
	}
	flame_tree_init(&t, &names);
	err = diff_stacks_tree(ds, &t, !o->abs, o->negate, o->fg.reverse);
	o->fg.colors = FLAME_COLORS_DIFF;
	o->fg.negate = o->negate;
	o->fg.title = o->fg.title ? o->fg.title : "Differential Flame Graph";
	o->fg.subtitle = o->fg.subtitle ? o->fg.subtitle : sub;
	if (!err && o->color_by == DIFF_TOTAL) {
		err = diff_total_colors_init(&tc, &t, o->negate);
		o->fg.color_fn = diff_total_color;
		o->fg.color_ctx = &tc;
	}
	if (!err)
		err = flamegraph_write_tree(&t, f, &o->fg);
	flame_tree_release(&t);
	strtab_release(&names);
	free(sub);
	return err;
}

/* Folded stacks or SVG from both profiles (the samples that pass --comm). */
static int render_stacks(FILE *f, struct diff_opts *o, struct loaded *l)
{
	struct profile filtered[2], *p[2] = { &l->p[0], &l->p[1] };
	struct folded_opts fo[2];
	struct diff_stacks ds = { 0 };
	bool comm = has_comm(p[0]) && has_comm(p[1]);
	int err = 0, nf = 0;

	for (int s = 0; s < 2 && o->hist.comm && !err; s++, nf++) {
		err = profile_init(&filtered[s]);
		if (!err)
			err = hist_filter_profile(&filtered[s], p[s], &o->hist);
		p[s] = &filtered[s];
	}
	for (int s = 0; s < 2; s++)
		fo[s] = (struct folded_opts){ .comm_first = comm, .no_kernel = o->hist.no_kernel,
			.annotate_inline = o->mode == MODE_SVG || o->hist.inline_frames,
			.value_index = l->h[s].value_index };
	if (!err)
		err = diff_stacks_build(&ds, p[0], &fo[0], p[1], &fo[1]);
	if (!err && o->mode == MODE_SVG && !ds.total[o->negate ? DIFF_BASE : DIFF_NEW])
		err = -ENODATA;
	o->fg.unit = l->unit; /* tooltips in the type's unit, the title naming it */
	if (!o->fg.title && (strcmp(l->type, "samples") || !l->counts))
		o->fg.title_type = l->type;
	if (!err)
		err = o->mode == MODE_SVG ? svg_write(f, o, &ds)
					  : diff_stacks_write_folded(&ds, f, !o->abs);
	diff_stacks_release(&ds);
	while (nf-- > 0)
		profile_release(&filtered[nf]);
	return err;
}

/* ---- the gate's report on stderr ---- */

/* "+13.39pp" or "+66.9%" (or "+inf%"), a change in a rule's unit. */
static const char *fmt_change(const struct diff_rule *r, double v, char *buf, size_t len)
{
	if (isinf(v))
		snprintf(buf, len, "%sinf%%", v > 0 ? "+" : "-");
	else
		snprintf(buf, len, "%+.2f%s", v, r->unit == DIFF_PP ? "pp" : "%");
	return buf;
}

/* The line of one function a rule tripped on, or could not decide: its shares, its change and
 * the bounds of the change that decided it. */
static void report_finding(const struct loaded *l, const struct diff_rule *r,
			   const struct diff_finding *f, bool tripped)
{
	const struct diff_entry *e = &l->d.entries[f->entry];
	char c[48], lo[48], hi[48], t[48];

	fprintf(stderr, "firn diff: rule '%s' %s: ", r->text, tripped ? "tripped" : "inconclusive");
	put_text(stderr, e->name, 0); /* any binary's names: escaped */
	if (*e->module) {
		fputs(" (", stderr);
		put_text(stderr, e->module, 0);
		fputc(')', stderr);
	}
	fprintf(stderr, " %s %.2f%% -> %.2f%%, %s", r->metric == DIFF_SELF ? "self" : "total",
		f->base_pct, f->new_pct, fmt_change(r, f->change, c, sizeof(c)));
	if (isnan(f->low)) {
		fprintf(stderr, ": a side has no samples\n");
		return;
	}
	fprintf(stderr, ", between %s and %s", fmt_change(r, f->low, lo, sizeof(lo)),
		fmt_change(r, f->high, hi, sizeof(hi)));
	if (tripped)
		fprintf(stderr, "\n");
	else if (l->counts)
		fprintf(stderr, ": too few samples to tell from %s (%lld base and %lld new samples)\n",
			fmt_change(r, r->dir * r->threshold, t, sizeof(t)), (long long)l->d.total[0],
			(long long)l->d.total[1]);
	else
		fprintf(stderr, ": too few events to tell from %s (%s %s base and %s %s new, as many "
			"as %.0f and %.0f events)\n", fmt_change(r, r->dir * r->threshold, t, sizeof(t)),
			unit_format(&l->scale, l->d.total[0], lo, sizeof(lo)), l->scale.name,
			unit_format(&l->scale, l->d.total[1], hi, sizeof(hi)), l->scale.name,
			diff_events(&l->d, 0), diff_events(&l->d, 1));
}

/* One rule's lines: each tripped function, then each inconclusive one (a few of each). */
static void report_rule(const struct loaded *l, const struct diff_rule *r,
			const struct diff_result *res)
{
	for (int k = 0; k < 2; k++) {
		const struct diff_finding *fs = k ? res->inconclusive : res->tripped;
		size_t n = k ? res->ninconclusive : res->ntripped;
		if (k && res->ntripped)
			break; /* a tripped rule's verdict is settled */
		for (size_t i = 0; i < n && i < MAX_LISTED; i++)
			report_finding(l, r, &fs[i], !k);
		if (n > MAX_LISTED)
			fprintf(stderr, "firn diff: rule '%s': and %zu more function%s %s\n", r->text,
				n - MAX_LISTED, n - MAX_LISTED == 1 ? "" : "s",
				k ? "with too few samples" : "tripped it");
	}
	if (!res->ntested)
		fprintf(stderr, "firn diff: rule '%s' inconclusive: it matches no function\n", r->text);
}

/* Every rule's findings, then the verdict line. */
static void gate_report(const struct diff_opts *o, const struct loaded *l,
			const struct diff_result *res, enum diff_verdict v)
{
	size_t tripped = 0, undecided = 0;

	for (size_t i = 0; i < o->nrules; i++) {
		report_rule(l, &o->rules[i], &res[i]);
		tripped += res[i].verdict == DIFF_TRIPPED;
		undecided += res[i].verdict == DIFF_INCONCLUSIVE;
	}
	if (v == DIFF_TRIPPED)
		fprintf(stderr, "firn diff: gate tripped: %zu of %zu rule%s\n", tripped, o->nrules,
			o->nrules == 1 ? "" : "s");
	else if (v == DIFF_INCONCLUSIVE)
		fprintf(stderr, "firn diff: gate inconclusive: %zu of %zu rule%s could not be decided "
			"(too few samples or no matching function)%s\n", undecided, o->nrules,
			o->nrules == 1 ? "" : "s", o->strict ? "" : "; a warning, not a failure "
			"(--strict: exit 4)");
	else
		fprintf(stderr, "firn diff: gate passed: %zu rule%s\n", o->nrules,
			o->nrules == 1 ? "" : "s");
}

/* ---- running ---- */

/* Evaluates every rule into res (o->nrules entries), on any sample type: over the events its
 * values stand for (diff_events). */
static int gate_eval(const struct diff_opts *o, const struct loaded *l, struct diff_result *res)
{
	for (size_t i = 0; i < o->nrules; i++)
		if (diff_rule_eval(&l->d, &o->rules[i], o->confidence, &res[i]))
			return error("out of memory");
	return 0;
}


/* Renders the chosen output into memory, then writes it out (an old -o file stays on failure). */
static int render(struct diff_opts *o, struct loaded *l, const struct diff_result *res)
{
	char *buf = NULL;
	size_t len = 0;
	int err = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return error("out of memory");
	if (o->mode == MODE_TABLE)
		table_write(f, o, l);
	else if (o->mode == MODE_JSON)
		err = json_write(f, o, l, res);
	else
		err = render_stacks(f, o, l);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err == -ENODATA)
		err = error("cannot draw '%s': no samples", input_name(o->sides[o->negate ? 0 : 1].files[0]));
	else if (err)
		err = error("cannot compare the profiles: %s", strerror(-err));
	else
		err = output_write(o->output, buf, len, 0644);
	free(buf);
	return err;
}

static const struct opt diff_options[] = {
	{ "base", 0, "FILE", "a base profile; more files may follow (merged)", OPT_BASE },
	{ "new", 0, "FILE", "a new profile; more files may follow (merged)", OPT_NEW },
	{ "folded", 0, NULL, "write \"stack base new\" lines (difffolded) instead of the table",
	  OPT_FOLDED },
	{ "json", 0, NULL, "write the table and the gate's verdict as JSON", OPT_JSON },
	{ "svg", 0, NULL, "write a differential flame graph (SVG)", OPT_SVG },
	{ "output", 'o', "FILE", "write to FILE (replaced atomically) instead of stdout", 'o' },
	{ "by", 0, "KEY", "match by function (default), module or line", OPT_BY },
	{ "ignore-module", 0, NULL, "match functions by name alone, whatever their modules",
	  OPT_IGNORE_MODULE },
	{ "top", 0, "N", "show the N largest changes (default 20, 0 = all)", OPT_TOP },
	{ "sort", 0, "KEY", "order by the change of self (default) or total", OPT_SORT },
	{ "abs", 0, NULL, "raw counts instead of shares of each profile's total", OPT_ABS },
	{ "fail-on", 0, "RULE", "exit 3 when RULE trips, e.g. self:parse_*>+2pp (repeatable)",
	  OPT_FAIL_ON },
	{ "confidence", 0, "P", "confidence a change needs to count (default 0.99)", OPT_CONFIDENCE },
	{ "strict", 0, NULL, "exit 4 when a rule cannot be decided (default: a warning, exit 0)",
	  OPT_STRICT },
	{ "negate", 0, NULL, "SVG widths from BASE, so that vanished stacks show", OPT_NEGATE },
	{ "color-by", 0, "KEY", "color SVG frames by the change of self (default) or total",
	  OPT_COLOR_BY },
	{ "comm", 0, "NAME", "only samples of processes named NAME", OPT_COMM },
	{ "no-kernel", 0, NULL, "leave kernel frames out", OPT_NO_KERNEL },
	{ "inline", 0, NULL, "inlined functions as functions of their own", OPT_INLINE },
	{ "sample-type", 0, "TYPE", "compare this sample type: a name, or an index from 0 (default: the profiles')", OPT_SAMPLE_TYPE },
	OPT_END
};

/* Loads, compares, renders and gates; returns the exit status. */
static int diff_run(struct diff_opts *o)
{
	struct loaded l;
	struct diff_result *res = calloc(o->nrules + 1, sizeof(*res));
	int rc = res ? 0 : error("out of memory");

	memset(&l, 0, sizeof(l));
	if (!rc)
		rc = load_all(&l, o);
	if (!rc) {
		diff_sort(&l.d, o->sort, o->abs);
		rc = gate_eval(o, &l, res);
	}
	if (!rc)
		rc = render(o, &l, res);
	if (!rc && o->nrules) {
		enum diff_verdict v = gate_verdict(res, o->nrules);
		gate_report(o, &l, res, v);
		rc = gate_status(v, o->strict);
	}
	for (size_t i = 0; res && i < o->nrules; i++)
		diff_result_release(&res[i]);
	free(res);
	loaded_release(&l);
	return rc;
}

static int cmd_diff(int argc, char **argv)
{
	struct diff_opts o;
	int rc;

	diff_opts_init(&o);
	rc = parse_args(&o, argc, argv);
	if (!rc)
		rc = diff_run(&o);
	diff_opts_release(&o);
	return rc < 0 ? 0 : rc;
}

const struct cmd diff_cmd = {
	"diff", cmd_diff, "compare two profiles: changed functions, differential flame graph, CI gate",
	DIFF_USAGE, { diff_options, filter_option_table, flamegraph_option_table },
};
