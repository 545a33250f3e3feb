/* Flame graph options (flamegraph.pl's names and meanings), shared by report and diff.
 * Each sets a field of struct flamegraph_opts; the handler validates and reports usage errors. */
#include "opt_flamegraph.h"

#include <stdlib.h>
#include <string.h>

#include "common.h"

enum {
	OPT_TITLE = OPT_FLAMEGRAPH_FIRST,
	OPT_SUBTITLE,
	OPT_WIDTH,
	OPT_HEIGHT,
	OPT_MINWIDTH,
	OPT_COLORS,
	OPT_PALETTE,
	OPT_INVERTED,
	OPT_REVERSE,
	OPT_COUNTNAME,
	OPT_NAMETYPE,
	OPT_NOTES,
};

const struct opt flamegraph_option_table[] = {
	{ "title", 0, "TEXT", "flame graph title (\"Flame Graph\", \"Icicle Graph\" with --inverted)",
	  OPT_TITLE },
	{ "subtitle", 0, "TEXT", "second title line", OPT_SUBTITLE },
	{ "width", 0, "PX", "image width in pixels (1200)", OPT_WIDTH },
	{ "height", 0, "PX", "frame height in pixels (16)", OPT_HEIGHT },
	{ "minwidth", 0, "PX|PCT%", "omit frames narrower than PX pixels or PCT% of the total (0.1)",
	  OPT_MINWIDTH },
	{ "colors", 0, "SCHEME", "default (by frame kind), hot, mem, io, red, green, blue, aqua, ...",
	  OPT_COLORS },
	{ "palette", 0, "FILE", "keep colors in FILE (name->rgb(r,g,b) lines), reused across runs",
	  OPT_PALETTE },
	{ "inverted", 0, NULL, "icicle graph: root at the top", OPT_INVERTED },
	{ "reverse", 0, NULL, "merge stacks from the leaves (leaf frames at the bottom)", OPT_REVERSE },
	{ "countname", 0, "TEXT", "what the counts are, in tooltips (\"samples\")", OPT_COUNTNAME },
	{ "nametype", 0, "TEXT", "what the names are, in the details line (\"Function:\")",
	  OPT_NAMETYPE },
	{ "notes", 0, "TEXT", "text kept in a comment of the SVG", OPT_NOTES },
	OPT_END
};

/* --minwidth PX or PCT%. */
static int parse_minwidth(const struct cmd *cmd, struct flamegraph_opts *o, const char *arg)
{
	size_t len = strlen(arg);
	bool pct = len && arg[len - 1] == '%';
	char *num = strndup(arg, pct ? len - 1 : len);
	double v;
	int rc;

	if (!num)
		return error("out of memory");
	rc = opt_double(cmd, "minwidth", num, 0, pct ? 100 : 1e6, &v);
	free(num);
	if (rc)
		return rc;
	o->minwidth = v;
	o->minwidth_percent = pct;
	return 0;
}

/* --colors SCHEME (flame_colors_parse's names, but not "diff": that is diff's own). */
static int parse_colors(const struct cmd *cmd, struct flamegraph_opts *o, const char *arg)
{
	int c = flame_colors_parse(arg);

	if (c < 0 || c == FLAME_COLORS_DIFF)
		return usage_error(cmd, "invalid value '%s' for --colors (default, hot, mem, io, red, "
				   "green, blue, aqua, yellow, purple or orange)", arg);
	o->colors = c;
	return 0;
}

/* --notes TEXT: it goes into an XML comment, which cannot hold "--", '<' or '>'. */
static int parse_notes(const struct cmd *cmd, struct flamegraph_opts *o, const char *arg)
{
	if (strpbrk(arg, "<>") || strstr(arg, "--"))
		return usage_error(cmd, "invalid value for --notes: it cannot contain '<', '>' or '--'");
	o->notes = arg;
	return 0;
}

/* One flame graph option: sets its field of o, or prints why arg is not valid. */
int flamegraph_option(const struct cmd *cmd, struct flamegraph_opts *o, int id, const char *arg)
{
	long v;

	switch (id) {
	case OPT_TITLE: o->title = arg; return 0;
	case OPT_SUBTITLE: o->subtitle = arg; return 0;
	case OPT_PALETTE: o->palette = arg; return 0;
	case OPT_INVERTED: o->inverted = true; return 0;
	case OPT_REVERSE: o->reverse = true; return 0;
	case OPT_COUNTNAME: o->countname = arg; return 0;
	case OPT_NAMETYPE: o->nametype = arg; return 0;
	case OPT_NOTES: return parse_notes(cmd, o, arg);
	case OPT_MINWIDTH: return parse_minwidth(cmd, o, arg);
	case OPT_COLORS: return parse_colors(cmd, o, arg);
	case OPT_WIDTH:
		if (opt_long(cmd, "width", arg, 100, 100000, &v))
			return 2;
		o->width = v;
		return 0;
	case OPT_HEIGHT:
		if (opt_long(cmd, "height", arg, 2, 1000, &v))
			return 2;
		o->height = v;
		return 0;
	}
	return usage_error(cmd, "unknown flame graph option %d", id);
}

/* The palette is its own file: its errors must not read as the input's. */
int flamegraph_palette_error(const struct flamegraph_opts *o, enum flame_palette_step step,
			     int err)
{
	if (step == FLAME_PALETTE_READ)
		return error("cannot read palette '%s': %s", o->palette, strerror(-err));
	if (step == FLAME_PALETTE_WRITE)
		return error("cannot write palette '%s': %s", o->palette,
			     output_strerror(o->palette, err));
	return 0;
}
