/* firn report: reads a profile (pprof or folded stacks) and prints its top functions, or converts
 * it to folded stacks, JSON, a flame graph (SVG) or pprof, or annotates a function's instructions. */
#include "common.h"
#include "opt.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analyze/disasm.h"
#include "analyze/group.h"
#include "base/escape.h"
#include "format/flamegraph.h"
#include "format/folded.h"
#include "analyze/hist.h"
#include "format/input.h"
#include "base/json.h"
#include "opt_filter.h"
#include "opt_flamegraph.h"
#include "format/pprof.h"
#include "base/safeopen.h"
#include "base/vec.h"

#define REPORT_USAGE \
	"[--top N] [--sort self|total] [--lines] [--sample-type TYPE] [FILTERS] [-o OUT] [FILE...]\n" \
	"--group-by LABEL [--folded|--json|--svg] [OPTIONS] [-o OUT] [FILE...]\n" \
	"--folded|--json|--svg|--pprof [OPTIONS] [-o OUT] [FILE...]\n" \
	"--annotate FUNCTION [FILTERS] [-o OUT] [FILE]"

#define DEFAULT_INPUT "firn.pb.gz"
#define DEFAULT_TOP 20

enum report_mode { MODE_TABLE, MODE_FOLDED, MODE_JSON, MODE_SVG, MODE_PPROF, MODE_ANNOTATE };

enum {
	OPT_FOLDED = 256, OPT_JSON, OPT_SVG, OPT_PPROF, OPT_PID, OPT_COMM, OPT_NO_KERNEL,
	OPT_INLINE, OPT_LINES, OPT_TOP, OPT_SORT, OPT_ANNOTATE, OPT_FOLDED_COMM, OPT_NO_FOLDED_COMM,
	OPT_NO_IDLE, OPT_SAMPLE_TYPE, OPT_GROUP_BY,
};

struct report_opts {
	const char *input;         /* "-" for stdin; the first of inputs */
	char **inputs;             /* FILE... (merged); NULL: input alone */
	int ninputs;
	size_t cap_inputs;
	const char *output;        /* NULL or "-" for stdout */
	enum report_mode mode;
	int mode_id;               /* the option that chose the mode, 0 for the table */
	long top;                  /* rows; 0 = all */
	enum hist_sort sort;
	struct hist_opts hist;     /* pid/comm filters, no_kernel, inline, by */
	int64_t *pids;             /* owned; hist.pids points here */
	size_t cap_pids;
	struct flamegraph_opts fg;
	uint32_t given;            /* bit (id - 256) for each option given */
	int fg_id;                 /* the first flame graph option given, 0 if none */
	const char *annotate;      /* --annotate FUNCTION */
	enum folded_comm folded_comm; /* how folded input's first frame is read */
	const char *sample_type;   /* --sample-type NAME|INDEX, NULL: the profile's default */
	int value_index;           /* the sample type chosen (sample_type_choose) */
	struct filter filter;      /* --focus, --ignore, --show-from, --thread, --module, --runtime */
	struct filter_stats kept;  /* what the filter kept of the chosen type's values */
	const char *group_by;      /* --group-by LABEL: rows (or root frames) by its values */
};

/* Defaults: firn.pb.gz, the table, 20 rows by self value, flamegraph.pl's flame graph. */
static void report_opts_init(struct report_opts *ro)
{
	memset(ro, 0, sizeof(*ro));
	ro->input = DEFAULT_INPUT;
	ro->top = DEFAULT_TOP;
	ro->sort = HIST_SORT_SELF;
	flamegraph_opts_init(&ro->fg);
	filter_init(&ro->filter);
}

/* Frees what the options hold. */
static void report_opts_release(struct report_opts *ro)
{
	free(ro->pids);
	free(ro->inputs);
	filter_release(&ro->filter);
}

#define MODE_BIT(m) (1u << (m))
#define ALL_MODES 0x3fu

/* Output modes each option applies to; an option given for another mode is a usage error. */
static const struct {
	int id;
	unsigned modes;
} option_modes[] = {
	{ OPT_TOP, MODE_BIT(MODE_TABLE) | MODE_BIT(MODE_JSON) },
	{ OPT_SORT, MODE_BIT(MODE_TABLE) | MODE_BIT(MODE_JSON) },
	{ OPT_LINES, MODE_BIT(MODE_TABLE) | MODE_BIT(MODE_JSON) },
	{ OPT_INLINE, MODE_BIT(MODE_TABLE) | MODE_BIT(MODE_JSON) | MODE_BIT(MODE_FOLDED) },
	{ OPT_GROUP_BY, MODE_BIT(MODE_TABLE) | MODE_BIT(MODE_JSON) | MODE_BIT(MODE_FOLDED) |
			MODE_BIT(MODE_SVG) },
};

/* The long name of an option of report_cmd, for messages. */
static const char *option_name(int id)
{
	for_each_opt(o, &report_cmd)
		if (o->id == id)
			return o->long_name;
	return "?";
}

/* How a mode is named in messages. */
static const char *mode_name(enum report_mode m)
{
	static const char *const names[] = { "the table", "--folded", "--json", "--svg", "--pprof",
					     "--annotate" };

	return names[m];
}

/* Chooses the output mode; two different modes are a usage error. */
static int set_mode(struct report_opts *ro, int id)
{
	if (ro->mode_id && ro->mode_id != id)
		return usage_error(&report_cmd, "--%s and --%s cannot be used together",
				   option_name(ro->mode_id), option_name(id));
	ro->mode_id = id;
	ro->mode = id == OPT_FOLDED ? MODE_FOLDED : id == OPT_JSON ? MODE_JSON
		 : id == OPT_SVG    ? MODE_SVG
		 : id == OPT_PPROF  ? MODE_PPROF
				    : MODE_ANNOTATE;
	return 0;
}

/* Appends the comma-separated process ids of arg to the pid filter. */
static int parse_pids(struct report_opts *ro, const char *arg)
{
	const char *s = arg;

	do {
		char *end;
		long v;
		if (opt_strtol(s, &end, &v) || v < 0 || v > INT_MAX || (*end && *end != ','))
			return usage_error(&report_cmd, "invalid value '%s' for --pid (process ids "
				"separated by commas)", arg);
		if (VEC_GROW(ro->pids, ro->cap_pids, ro->hist.npids + 1))
			return error("out of memory");
		ro->pids[ro->hist.npids++] = v;
		s = *end ? end + 1 : end;
	} while (*s || s[-1] == ',');
	ro->hist.pids = ro->pids;
	return 0;
}

/* --sort self|total */
static int parse_sort(struct report_opts *ro, const char *arg)
{
	if (!strcmp(arg, "self"))
		ro->sort = HIST_SORT_SELF;
	else if (!strcmp(arg, "total"))
		ro->sort = HIST_SORT_TOTAL;
	else
		return usage_error(&report_cmd, "invalid value '%s' for --sort (self or total)", arg);
	return 0;
}

/* --folded-comm or --no-folded-comm; both together are a usage error. */
static int set_folded_comm(struct report_opts *ro, int id)
{
	enum folded_comm c = id == OPT_FOLDED_COMM ? FOLDED_COMM_YES : FOLDED_COMM_NO;

	if (ro->folded_comm && ro->folded_comm != c)
		return usage_error(&report_cmd, "--folded-comm and --no-folded-comm cannot be used "
				   "together");
	ro->folded_comm = c;
	return 0;
}

/* Option handler for opt_parse. */
static int report_option(void *ctx, int id, const char *arg)
{
	struct report_opts *ro = ctx;
	long v;

	if (id >= OPT_FLAMEGRAPH_FIRST && id <= OPT_FLAMEGRAPH_LAST) {
		ro->fg_id = ro->fg_id ? ro->fg_id : id;
		return flamegraph_option(&report_cmd, &ro->fg, id, arg);
	}
	if (id >= OPT_FILTER_FIRST && id <= OPT_FILTER_LAST)
		return filter_option(&report_cmd, &ro->filter, id, arg);
	if (id >= 256 && id < 256 + 32)
		ro->given |= 1u << (id - 256);
	switch (id) {
	case 'o':
		ro->output = arg;
		return 0;
	case OPT_FOLDED: case OPT_JSON: case OPT_SVG: case OPT_PPROF:
		return set_mode(ro, id);
	case OPT_ANNOTATE:
		if (!*arg)
			return usage_error(&report_cmd, "option '--annotate' needs a function name");
		ro->annotate = arg;
		return set_mode(ro, id);
	case OPT_PID:
		return parse_pids(ro, arg);
	case OPT_COMM:
		ro->hist.comm = arg;
		return 0;
	case OPT_NO_KERNEL:
		ro->hist.no_kernel = true;
		return 0;
	case OPT_NO_IDLE:
		ro->hist.no_idle = true;
		return 0;
	case OPT_INLINE:
		ro->hist.inline_frames = true;
		return 0;
	case OPT_FOLDED_COMM: case OPT_NO_FOLDED_COMM:
		return set_folded_comm(ro, id);
	case OPT_LINES:
		ro->hist.by = HIST_BY_LINE;
		return 0;
	case OPT_TOP:
		if (opt_long(&report_cmd, "top", arg, 0, INT_MAX, &v))
			return 2;
		ro->top = v;
		return 0;
	case OPT_SORT:
		return parse_sort(ro, arg);
	case OPT_SAMPLE_TYPE:
		ro->sample_type = arg;
		ro->hist.sample_type = arg;
		return 0;
	case OPT_GROUP_BY:
		if (!*arg)
			return usage_error(&report_cmd, "option '--group-by' needs a label name");
		ro->group_by = arg;
		return 0;
	}
	return 0;
}

/* Rejects options that do not apply to the chosen output mode. */
static int check_modes(const struct report_opts *ro)
{
	for (size_t i = 0; i < sizeof(option_modes) / sizeof(option_modes[0]); i++)
		if ((ro->given & 1u << (option_modes[i].id - 256)) &&
		    !(option_modes[i].modes & MODE_BIT(ro->mode)))
			return usage_error(&report_cmd, "--%s does not apply to %s output",
					   option_name(option_modes[i].id), mode_name(ro->mode));
	if (ro->fg_id && ro->mode != MODE_SVG)
		return usage_error(&report_cmd, "--%s applies to --svg output only",
				   option_name(ro->fg_id));
	if (ro->mode == MODE_PPROF && (!ro->output || !strcmp(ro->output, "-")) && isatty(1))
		return usage_error(&report_cmd, "--pprof writes binary data: use -o FILE or a pipe");
	return 0;
}

/* The value of the comment line "key: value" of p, or NULL. */
static const char *comment_value(const struct profile *p, const char *key)
{
	size_t len = strlen(key);

	for (uint32_t i = 0; i < p->ncomments; i++) {
		const char *c = profile_str(p, p->comments[i]);
		if (!strncmp(c, key, len) && c[len] == ':' && c[len + 1] == ' ')
			return c + len + 2;
	}
	return NULL;
}

/* Writes " (cpu-clock 99 Hz)" from the recording's comments, or from the pprof period. */
static void header_event(FILE *f, const struct profile *p)
{
	const char *event = comment_value(p, "event"), *freq = comment_value(p, "frequency");

	if (!event && !freq && p->period > 0 &&
	    !strcmp(profile_str(p, p->period_type.unit), "nanoseconds")) {
		fprintf(f, " (%s%s%.0f Hz)", profile_str(p, p->period_type.type),
			p->period_type.type ? " " : "", 1e9 / p->period);
		return;
	}
	if (event || freq)
		fprintf(f, " (%s%s%s%s)", event ? event : "", event && freq ? " " : "",
			freq ? freq : "", freq ? " Hz" : "");
}

/* Writes " (stack map full 12)": the reasons of the lost samples the recording's comments give. */
static void header_lost_reasons(FILE *f, const struct profile *p)
{
	static const char *const reasons[][2] = { { "lost.counts_full", "counts map full" },
						  { "lost.stacks_full", "stack map full" } };
	const char *sep = " (";

	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		const char *v = comment_value(p, reasons[i][0]);
		if (!v || !strcmp(v, "0"))
			continue;
		fprintf(f, "%s%s %s", sep, reasons[i][1], v);
		sep = ", ";
	}
	if (*sep == ',')
		fputc(')', f);
}

/* The name and unit of the sample type h sums ("samples", "count" without one). */
static void hist_type(const struct profile *p, const struct hist *h, const char **type,
		      const char **unit)
{
	*type = "samples";
	*unit = "count";
	if (p->nsample_types) {
		*type = profile_str(p, p->sample_types[h->value_index].type);
		*unit = profile_str(p, p->sample_types[h->value_index].unit);
	}
}

/* The sum of every sample's value before any filter: the "M" of the header's "N of M". */
static int64_t all_total(const struct report_opts *ro, const struct hist *h)
{
	return filter_active(&ro->filter) ? ro->kept.total : h->all_total;
}

/* "# FILE: 2,041 samples (cpu-clock 99 Hz), 3 processes", or "# FILE: 1,234.5 ms off_cpu ...":
 * what the table covers, without the newline; its names (file, sample type, comments) come as
 * they are. */
static void header_text(FILE *f, const struct report_opts *ro, const struct profile *p,
			const struct hist *h, const struct unit_scale *u)
{
	char a[48], b[48];
	const char *type, *unit;
	int64_t all = all_total(ro, h);

	hist_type(p, h, &type, &unit);
	fprintf(f, "# %s", input_name(ro->input));
	if (ro->ninputs > 1)
		fprintf(f, " + %d more", ro->ninputs - 1);
	fprintf(f, ": %s", group_value(u, h->total, a));
	if (h->total != all)
		fprintf(f, " of %s", group_value(u, all, b));
	if (!strcmp(type, "samples") && all == 1)
		type = "sample";
	if (u->scaled)
		fprintf(f, " %s", u->name);
	fprintf(f, " %s", type);
	if (!u->scaled && *unit && strcmp(unit, "count"))
		fprintf(f, " %s", unit);
	header_event(f, p);
	if (ro->ninputs > 1 && p->time_nanos > 0)
		put_time_range(f, p);
	if (h->nprocesses)
		fprintf(f, ", %llu process%s", (unsigned long long)h->nprocesses,
			h->nprocesses == 1 ? "" : "es");
	const char *lost = comment_value(p, "lost");
	if (lost && strcmp(lost, "0")) {
		fprintf(f, ", %s lost", lost);
		header_lost_reasons(f, p);
	}
	if (ro->filter.runtime != FRAME_NATIVE)
		fprintf(f, ", %s without %s frames left out", group_value(u, ro->kept.no_runtime, a),
			frame_runtime_name(ro->filter.runtime));
}

/* The header line, its names escaped (put_text). */
static void header_write(FILE *f, const struct report_opts *ro, const struct profile *p,
			 const struct hist *h, const struct unit_scale *u)
{
	char *line = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&line, &len);

	if (m) {
		header_text(m, ro, p, h, u);
		fclose(m);
	}
	put_text(f, line ? line : "", 0);
	fputc('\n', f);
	free(line);
}

/* Share of v in total, in percent (0 for an empty total). */
static double pct(int64_t v, int64_t total)
{
	return total ? v * 100.0 / total : 0.0;
}

/* Number of rows --top allows. */
static size_t rows_shown(const struct report_opts *ro, const struct hist *h)
{
	return ro->top && (size_t)ro->top < h->n ? (size_t)ro->top : h->n;
}

/* The top functions table: header line, column names, one row per entry; self values in the
 * type's unit ("off_cpu ms", scaled from the total). Names are escaped (put_text): they come
 * from any binary and any process. */
static void table_write(FILE *f, const struct report_opts *ro, const struct profile *p,
			const struct hist *h)
{
	size_t rows = rows_shown(ro, h);
	const char *type, *unit;
	struct unit_scale u;
	char v[48];

	hist_type(p, h, &type, &unit);
	unit_scale_init(&u, unit, h->all_total);
	int cw = text_len(type) + (u.scaled ? 1 + strlen(u.name) : 0); /* "off_cpu ms" */
	int mw = strlen("module"), sw = cw;
	for (size_t i = 0; i < rows; i++) {
		const struct hist_entry *e = &h->entries[i];
		int m = text_len(*e->module ? e->module : "-");
		int s = strlen(unit_format(&u, e->self, v, sizeof(v)));
		mw = m > mw ? m : mw;
		sw = s > sw ? s : sw;
	}
	header_write(f, ro, p, h, &u);
	put_nosym_lines(f, p, h->value_index, "# ");
	fprintf(f, "%7s %7s  %*s", "self%", "total%", sw - cw, "");
	put_text(f, type, 0);
	if (u.scaled)
		fprintf(f, " %s", u.name);
	fprintf(f, "  %-*s  %s\n", mw, "module", "function");
	for (size_t i = 0; i < rows; i++) {
		const struct hist_entry *e = &h->entries[i];
		fprintf(f, "%7.2f %7.2f  %*s  ", pct(e->self, h->total), pct(e->total, h->total), sw,
			unit_format(&u, e->self, v, sizeof(v)));
		put_text(f, *e->module ? e->module : "-", mw);
		fputs("  ", f);
		put_text(f, e->name, 0);
		fputc('\n', f);
	}
}

/* The --group-by table: the header line, then per value of the label its share, its value of
 * the sample type and its top function (with that function's share of the value's samples).
 * Values and names are escaped (put_text): labels are any text. */
static void group_table_write(FILE *f, const struct report_opts *ro, const struct profile *p,
			      const struct hist *h, const struct group *g)
{
	size_t rows = ro->top && (size_t)ro->top < g->n ? (size_t)ro->top : g->n;
	const char *type, *unit;
	struct unit_scale u;
	char v[48];

	hist_type(p, h, &type, &unit);
	unit_scale_init(&u, unit, h->all_total);
	int cw = text_len(type) + (u.scaled ? 1 + strlen(u.name) : 0), sw = cw;
	int lw = text_len(ro->group_by);
	for (size_t i = 0; i < rows; i++) {
		int s = strlen(unit_format(&u, g->rows[i].total, v, sizeof(v)));
		int l = text_len(g->rows[i].value);
		sw = s > sw ? s : sw;
		lw = l > lw ? l : lw;
	}
	header_write(f, ro, p, h, &u);
	fprintf(f, "%7s  %*s", "share%", sw - cw, "");
	put_text(f, type, 0);
	fprintf(f, "%s%s  ", u.scaled ? " " : "", u.scaled ? u.name : "");
	put_text(f, ro->group_by, lw);
	fputs("  top function\n", f);
	for (size_t i = 0; i < rows; i++) {
		const struct group_row *r = &g->rows[i];
		fprintf(f, "%7.2f  %*s  ", pct(r->total, g->total), sw,
			unit_format(&u, r->total, v, sizeof(v)));
		put_text(f, r->value, lw);
		fputs("  ", f);
		put_text(f, *r->top_function ? r->top_function : "-", 0);
		fprintf(f, " (%.2f%%)\n", pct(r->top_self, r->total));
	}
}

/* "group_by", "without_label" and "values": the --group-by rows in JSON. */
static void json_groups(struct json_writer *w, const struct report_opts *ro, const struct group *g)
{
	size_t rows = ro->top && (size_t)ro->top < g->n ? (size_t)ro->top : g->n;

	jw_name(w, "group_by");
	jw_string(w, ro->group_by);
	jw_name(w, "without_label");
	jw_int(w, g->none);
	jw_name(w, "values");
	jw_begin_array(w);
	for (size_t i = 0; i < rows; i++) {
		const struct group_row *r = &g->rows[i];
		jw_begin_object(w);
		jw_name(w, "value");
		jw_string(w, r->value);
		jw_name(w, "total");
		jw_int(w, r->total);
		jw_name(w, "pct");
		jw_double(w, pct(r->total, g->total));
		jw_name(w, "stacks");
		jw_uint(w, r->nsamples);
		jw_name(w, "top_function");
		jw_string(w, r->top_function);
		jw_name(w, "top_module");
		jw_string(w, r->top_module);
		jw_name(w, "top_self");
		jw_int(w, r->top_self);
		jw_end_object(w);
	}
	jw_end_array(w);
}

/* One row of the JSON table. */
static void json_entry(struct json_writer *w, const struct hist_entry *e, int64_t total)
{
	jw_begin_object(w);
	jw_name(w, "name");
	jw_string(w, e->name);
	jw_name(w, "module");
	jw_string(w, e->module);
	jw_name(w, "self");
	jw_int(w, e->self);
	jw_name(w, "total");
	jw_int(w, e->total);
	jw_name(w, "self_pct");
	jw_double(w, pct(e->self, total));
	jw_name(w, "total_pct");
	jw_double(w, pct(e->total, total));
	jw_end_object(w);
}

/* "sample_types": every type of p with its unit, and which is p's default and which is summed. */
static void json_types(struct json_writer *w, const struct profile *p, const struct hist *h)
{
	uint32_t def = profile_value_index(p);

	jw_name(w, "sample_types");
	jw_begin_array(w);
	for (uint32_t i = 0; i < p->nsample_types; i++) {
		jw_begin_object(w);
		jw_name(w, "index");
		jw_uint(w, i);
		jw_name(w, "name");
		jw_string(w, profile_str(p, p->sample_types[i].type));
		jw_name(w, "unit");
		jw_string(w, profile_str(p, p->sample_types[i].unit));
		jw_name(w, "default");
		jw_bool(w, i == def);
		jw_name(w, "chosen");
		jw_bool(w, i == h->value_index);
		jw_end_object(w);
	}
	jw_end_array(w);
}

/* The top functions as one JSON object (schema in man/firn-report.1). */
static int json_write(FILE *f, const struct report_opts *ro, const struct profile *p,
		      const struct hist *h, const struct group *g)
{
	struct json_writer *w = jw_new(f, true);
	const char *type, *unit;

	if (!w)
		return -ENOMEM;
	hist_type(p, h, &type, &unit);
	jw_begin_object(w);
	jw_name(w, "file");
	jw_string(w, ro->input);
	jw_name(w, "sample_type");
	jw_string(w, type);
	jw_name(w, "unit");
	jw_string(w, unit);
	json_types(w, p, h);
	jw_name(w, "total");
	jw_int(w, h->total);
	jw_name(w, "all_total");
	jw_int(w, all_total(ro, h));
	jw_name(w, "runtime");
	jw_string(w, frame_runtime_name(ro->filter.runtime));
	jw_name(w, "without_runtime");
	jw_int(w, ro->kept.no_runtime);
	if (g)
		json_groups(w, ro, g);
	jw_name(w, "functions");
	jw_begin_array(w);
	for (size_t i = 0; i < rows_shown(ro, h); i++)
		json_entry(w, &h->entries[i], h->total);
	jw_end_array(w);
	jw_end_object(w);
	int err = jw_error(w);
	jw_free(w);
	return err;
}

/* The table or JSON: builds the histogram (and under --group-by the label's rows) and writes
 * it. */
static int render_top(FILE *f, struct report_opts *ro, struct profile *p)
{
	struct group g = { 0 };
	struct hist h;
	int err = hist_build(&h, p, &ro->hist);

	if (!err && ro->group_by)
		err = group_build(&g, p, ro->group_by, &ro->hist);
	if (!err) {
		hist_sort(&h, ro->sort);
		if (ro->mode == MODE_JSON)
			err = json_write(f, ro, p, &h, ro->group_by ? &g : NULL);
		else if (ro->group_by)
			group_table_write(f, ro, p, &h, &g);
		else
			table_write(f, ro, p, &h);
	}
	group_release(&g);
	hist_release(&h);
	return err;
}

/* True when samples carry a "comm" label (recorded profiles do; folded text does when its first
 * frames were read as process names, else they stay frames). */
static bool has_comm(const struct profile *p)
{
	for (uint64_t i = 0; i < p->nsamples; i++)
		if (profile_label_str(p, &p->samples[i], "comm"))
			return true;
	return false;
}

/* Tells the flame graph writer the sample type it draws: the values' unit for the tooltips, and
 * the type's name for the title unless it is plain samples or the title was given. */
static void svg_type(struct flamegraph_opts *fg, const struct profile *p, int vi)
{
	const char *type, *unit;

	fg->value_index = vi;
	if (!p->nsample_types)
		return;
	type = profile_str(p, p->sample_types[vi].type);
	unit = profile_str(p, p->sample_types[vi].unit);
	fg->unit = unit;
	if (!fg->title && (strcmp(type, "samples") || strcmp(unit, "count")))
		fg->title_type = type;
}

/* Folded stacks or SVG from p, or from the samples of p that pass --pid and --comm; under
 * --group-by each stack's root is its "LABEL=value" frame (in place of the process name). */
static int render_stacks(FILE *f, struct report_opts *ro, struct profile *p)
{
	struct profile filtered, rooted;
	bool has_filtered = false, has_rooted = false;
	int err = 0;

	if (ro->hist.npids || ro->hist.comm || ro->hist.no_idle) {
		err = profile_init(&filtered);
		has_filtered = !err;
		if (!err)
			err = hist_filter_profile(&filtered, p, &ro->hist);
		p = &filtered;
	}
	if (!err && ro->group_by) {
		err = profile_init(&rooted);
		has_rooted = !err;
		if (!err)
			err = group_root(&rooted, p, ro->group_by);
		p = &rooted;
	}
	bool comm = !err && !ro->group_by && has_comm(p);
	if (!err && ro->mode == MODE_SVG && !p->nsamples)
		err = -ENODATA;
	if (err)
		goto out;
	if (ro->mode == MODE_FOLDED) {
		struct folded_opts fo = { .comm_first = comm, .comm_header = true,
					  .annotate_inline = true, /* read back as inline frames */
					  .no_kernel = ro->hist.no_kernel,
					  .value_index = ro->value_index };
		err = folded_write(p, f, &fo);
	} else {
		ro->fg.no_kernel = ro->hist.no_kernel;
		ro->fg.comm_root = comm;
		svg_type(&ro->fg, p, ro->value_index);
		err = flamegraph_write(p, f, &ro->fg);
	}
out:
	if (has_rooted)
		profile_release(&rooted);
	if (has_filtered)
		profile_release(&filtered);
	return err;
}

/* Prints why --annotate failed (exit 1). */
static int annotate_error(const struct report_opts *ro, const struct disasm *d, int err)
{
	const char *fn = ro->annotate, *in = input_name(ro->input);

	if (err == -EOPNOTSUPP)
		return error("cannot annotate '%s': it is not in a file (kernel or JIT code)", fn);
	if (err == -ENOENT && !d->path)
		return error("cannot annotate '%s': no samples of it in '%s'", fn, in);
	if (err == -ENOENT && d->path && access(d->path, F_OK) == 0)
		return error("cannot annotate '%s': '%s' has no symbol at the sampled addresses "
			     "(was it rebuilt?)", fn, d->path);
	if (err == -ENOEXEC)
		return error("cannot annotate '%s': '%s' is not an ELF file of a known machine", fn,
			     d->path);
	if (err == -ELIBACC)
		return error("cannot annotate '%s': cannot load the disassembler library '%s'", fn,
			     disasm_library());
	if (d->path)
		return error("cannot annotate '%s': cannot open '%s': %s", fn, d->path,
			     safeopen_strerror(err));
	return error("cannot annotate '%s': %s", fn, strerror(-err));
}

/* --annotate: the function's instructions from its file with the shares of the samples. */
static int render_annotate(FILE *f, struct report_opts *ro, struct profile *p)
{
	struct profile filtered;
	struct disasm d;
	int err = 0;

	if (ro->hist.npids || ro->hist.comm || ro->hist.no_idle) {
		if ((err = profile_init(&filtered)) || (err = hist_filter_profile(&filtered, p, &ro->hist)))
			return error("cannot annotate '%s': %s", ro->annotate, strerror(-err));
		p = &filtered;
	}
	struct disasm_query q = { ro->annotate, NULL, ro->value_index, ro->hist.no_kernel };
	err = disasm_annotate(&d, p, p->samples, p->nsamples, &q);
	if (err) {
		err = annotate_error(ro, &d, err);
	} else {
		char rec[2 * 64 * 4 + 1]; /* the profile's build id, any text: escaped */
		escape_text(rec, sizeof(rec), d.recorded_build_id, strlen(d.recorded_build_id));
		if (d.build_id_differs)
			warning("build id of '%s' is %s, the recording's was %s: the file changed, the "
				"annotation may be wrong", d.path, *d.build_id ? d.build_id : "(none)", rec);
		bool color = (!ro->output || !strcmp(ro->output, "-")) && color_terminal();
		if (disasm_write(&d, f, color))
			err = error("out of memory");
	}
	disasm_release(&d);
	if (p == &filtered)
		profile_release(&filtered);
	return err;
}

/* Under --sample-type, the chosen type becomes the written profile's default (pprof's
 * default_sample_type), so that readers show it first. */
static int set_default_type(struct profile *p, const struct report_opts *ro)
{
	if (!ro->sample_type || !p->nsample_types)
		return 0;
	int64_t t = profile_intern(p, profile_str(p, p->sample_types[ro->value_index].type));
	if (t < 0)
		return (int)t;
	p->default_sample_type = t;
	return 0;
}

/* --pprof: the whole profile, or the samples that pass the filters (without kernel locations
 * under --no-kernel). */
static int render_pprof(struct report_opts *ro, struct profile *p)
{
	const struct hist_opts *o = &ro->hist;
	struct profile filtered;
	void *data = NULL;
	size_t len = 0;
	int err = 0;

	if (o->npids || o->comm || o->no_idle || o->no_kernel) {
		if ((err = profile_init(&filtered)) || (err = hist_extract(&filtered, p, o)))
			goto out;
		p = &filtered;
	}
	err = set_default_type(p, ro);
	if (!err)
		err = pprof_encode(p, true, &data, &len);
out:
	if (p == &filtered)
		profile_release(&filtered);
	if (err)
		return error("cannot encode the profile: %s", strerror(-err));
	err = output_write(ro->output, data, len, 0600); /* kernel addresses */
	free(data);
	return err;
}

/* Renders the chosen output into memory, then writes it out (an old -o file stays on failure). */
static int report_run(struct report_opts *ro, struct profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	int err;

	if (ro->mode == MODE_PPROF)
		return render_pprof(ro, p);
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return error("out of memory");
	if (ro->mode == MODE_ANNOTATE) {
		err = render_annotate(f, ro, p);
		if (fclose(f) && !err)
			err = error("out of memory");
		if (!err)
			err = output_write(ro->output, buf, len, 0644);
		free(buf);
		return err;
	}
	enum flame_palette_step pal = FLAME_PALETTE_OK;
	ro->fg.palette_failed = &pal;
	if (ro->mode == MODE_TABLE || ro->mode == MODE_JSON)
		err = render_top(f, ro, p);
	else
		err = render_stacks(f, ro, p);
	ro->fg.palette_failed = NULL;
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err && pal != FLAME_PALETTE_OK)
		err = flamegraph_palette_error(&ro->fg, pal, err);
	else if (err == -EINVAL)
		err = error("cannot report '%s': invalid profile", input_name(ro->input));
	else if (err == -ENODATA)
		err = error("cannot report '%s': no samples to draw", input_name(ro->input));
	else if (err)
		err = error("cannot report '%s': %s", input_name(ro->input), strerror(-err));
	else
		err = output_write(ro->output, buf, len, 0644);
	free(buf);
	return err;
}

static const struct opt report_opts[] = {
	{ "folded", 0, NULL, "write folded stacks (flamegraph.pl input) instead of the table", OPT_FOLDED },
	{ "json", 0, NULL, "write the top functions as JSON", OPT_JSON },
	{ "svg", 0, NULL, "write a flame graph (SVG)", OPT_SVG },
	{ "pprof", 0, NULL, "write the whole profile as gzipped pprof", OPT_PPROF },
	{ "output", 'o', "FILE", "write to FILE (replaced atomically) instead of stdout", 'o' },
	{ "pid", 0, "PID[,PID...]", "only samples of these processes", OPT_PID },
	{ "comm", 0, "NAME", "only samples of processes named NAME (or matching the glob NAME)", OPT_COMM },
	{ "no-kernel", 0, NULL, "leave kernel frames out", OPT_NO_KERNEL },
	{ "no-idle", 0, NULL, "leave out samples of the idle task ([idle], pid 0)", OPT_NO_IDLE },
	{ "inline", 0, NULL, "show inlined functions as functions of their own", OPT_INLINE },
	{ "lines", 0, NULL, "one row per source line: function (file:line)", OPT_LINES },
	{ "top", 0, "N", "show the first N rows (default 20, 0 = all)", OPT_TOP },
	{ "sort", 0, "KEY", "order rows by self or total (default self)", OPT_SORT },
	{ "sample-type", 0, "TYPE", "sum this sample type: a name, or an index from 0 (default: the profile's)", OPT_SAMPLE_TYPE },
	{ "group-by", 0, "LABEL", "rank the values of the sample label LABEL (pid, comm, thread, a pprof file's)", OPT_GROUP_BY },
	{ "annotate", 0, "FUNCTION", "show FUNCTION's instructions with their share of the samples", OPT_ANNOTATE },
	{ "folded-comm", 0, NULL, "folded input: the first frame of each stack is the process name", OPT_FOLDED_COMM },
	{ "no-folded-comm", 0, NULL, "folded input: the first frame is a function, even in firn's own output", OPT_NO_FOLDED_COMM },
	OPT_END
};

/* Parses options before and after the FILE operand (parsing stops at an operand, then resumes
 * behind it, so that the operand count is exact); "--" ends the options. */
static int parse_args(struct report_opts *ro, int argc, char **argv)
{
	int argi, rc = opt_parse(&report_cmd, argc, argv, true, report_option, ro, &argi);

	while (!rc && argi < argc) {
		bool dashdash = !strcmp(argv[argi - 1], "--");
		for (int i = argi; i < (dashdash ? argc : argi + 1); i++) {
			if (VEC_GROW(ro->inputs, ro->cap_inputs, (size_t)ro->ninputs + 1))
				return error("out of memory");
			ro->inputs[ro->ninputs++] = argv[i];
		}
		ro->input = ro->inputs[0];
		if (dashdash)
			break;
		argc -= argi;
		argv += argi; /* the operand stands in for argv[0] */
		rc = opt_parse(&report_cmd, argc, argv, true, report_option, ro, &argi);
	}
	return rc ? rc : check_modes(ro);
}

/* Loads path and merges it into p (FILE...: one table of several files). */
static int merge_input(struct profile *p, const struct report_opts *ro, const char *path)
{
	struct profile q;

	if (profile_init(&q))
		return error("out of memory");
	int rc = load_profile_comm(&q, path, ro->folded_comm);
	int err = rc ? 0 : profile_values_check(p, &q);
	if (!rc && !err)
		err = profile_merge(p, &q);
	if (!rc && !err)
		err = merge_comments(p, &q);
	if (err == -EINVAL)
		rc = error("cannot merge '%s' with '%s': different sample types", input_name(path),
			   input_name(ro->input));
	else if (err)
		rc = error("cannot merge '%s': %s", input_name(path), strerror(-err));
	profile_release(&q);
	return rc;
}

static int cmd_report(int argc, char **argv)
{
	struct report_opts ro;
	struct profile p;
	int rc;

	report_opts_init(&ro);
	rc = parse_args(&ro, argc, argv);
	if (rc) {
		report_opts_release(&ro);
		return rc < 0 ? 0 : rc;
	}
	if (profile_init(&p)) {
		report_opts_release(&ro);
		return error("out of memory");
	}
	rc = load_profile_comm(&p, ro.input, ro.folded_comm);
	for (int i = 1; i < ro.ninputs && !rc; i++)
		rc = merge_input(&p, &ro, ro.inputs[i]);
	if (!rc && (ro.value_index = sample_type_choose(&report_cmd, &p, ro.sample_type, ro.input)) < 0)
		rc = 2;
	if (!rc && filter_apply(&p, &ro.filter, ro.value_index, &ro.kept))
		rc = error("out of memory");
	if (!rc)
		rc = report_run(&ro, &p);
	profile_release(&p);
	report_opts_release(&ro);
	return rc;
}

const struct cmd report_cmd = {
	"report", cmd_report, "print or convert a profile: top functions, folded stacks, JSON, SVG, pprof",
	REPORT_USAGE, { report_opts, filter_option_table, flamegraph_option_table },
};
