/* Stack filters (go tool pprof's -focus, -ignore, -show_from, -tagfocus, -tagignore; a thread's
 * and a module's), shared
 * by report, diff and top; each compiles into the command's struct filter (lib/analyze/filter.h). */
#include "opt_filter.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "model/frame_kind.h"

enum {
	OPT_FOCUS = OPT_FILTER_FIRST,
	OPT_IGNORE,
	OPT_SHOW_FROM,
	OPT_THREAD,
	OPT_MODULE,
	OPT_RUNTIME,
	OPT_TAG_FOCUS,
	OPT_TAG_IGNORE,
};

const struct opt filter_option_table[] = {
	{ "focus", 0, "REGEX", "only stacks with a frame matching REGEX (function, file or mapping)",
	  OPT_FOCUS },
	{ "ignore", 0, "REGEX", "leave out stacks with a frame matching REGEX", OPT_IGNORE },
	{ "show-from", 0, "REGEX", "cut each stack at its outermost frame matching REGEX (its callers go)",
	  OPT_SHOW_FROM },
	{ "thread", 0, "REGEX", "only samples of threads whose name matches REGEX", OPT_THREAD },
	{ "module", 0, "REGEX", "only stacks with a frame in a module (file base name) matching REGEX",
	  OPT_MODULE },
	{ "runtime", 0, "NAME", "only NAME's frames, each sample counted at its innermost one", OPT_RUNTIME },
	{ "tag-focus", 0, "KEY=REGEX", "only samples with a label KEY whose value matches REGEX", OPT_TAG_FOCUS },
	{ "tag-ignore", 0, "KEY=REGEX", "leave out samples with a label KEY whose value matches REGEX",
	  OPT_TAG_IGNORE },
	OPT_END
};

const char *filter_runtime_values(char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (int r = FRAME_NATIVE + 1; r < FRAME_RUNTIMES && n < len; r++)
		n += snprintf(buf + n, len - n, "%s%s", n ? " " : "", frame_runtime_name(r));
	return buf;
}

/* --runtime NAME: a runtime of the frame kind table; the usage error lists them ("a, b or c"). */
static int set_runtime(const struct cmd *cmd, struct filter *f, const char *arg)
{
	char list[128];
	size_t n = 0;

	f->runtime = frame_runtime_of_name(arg);
	if (f->runtime != FRAME_NATIVE)
		return 0;
	list[0] = 0;
	for (int r = FRAME_NATIVE + 1; r < FRAME_RUNTIMES && n < sizeof(list); r++)
		n += snprintf(list + n, sizeof(list) - n, "%s%s",
			      r == FRAME_NATIVE + 1 ? "" : r == FRAME_RUNTIMES - 1 ? " or " : ", ",
			      frame_runtime_name(r));
	return usage_error(cmd, "invalid value '%s' for --runtime (%s)", arg, list);
}

/* The long name of option id of the table, for messages. */
static const char *option_name(int id)
{
	for (const struct opt *o = filter_option_table; o->long_name; o++)
		if (o->id == id)
			return o->long_name;
	return "?";
}

/* --tag-focus, --tag-ignore KEY=REGEX: pprof's -tagfocus, -tagignore. */
static int set_tag(const struct cmd *cmd, struct filter *f, int id, const char *arg)
{
	enum filter_field field = id == OPT_TAG_FOCUS ? FILTER_TAG_FOCUS : FILTER_TAG_IGNORE;
	char why[128];
	int err = filter_set_tag(f, field, arg, why, sizeof(why));

	if (err == -ENOMEM)
		return error("out of memory");
	if (err)
		return usage_error(cmd, "invalid value '%s' for --%s: %s", arg, option_name(id), why);
	return 0;
}

int filter_option(const struct cmd *cmd, struct filter *f, int id, const char *arg)
{
	char why[128];

	if (id == OPT_RUNTIME)
		return set_runtime(cmd, f, arg);
	if (id == OPT_TAG_FOCUS || id == OPT_TAG_IGNORE)
		return set_tag(cmd, f, id, arg);
	if (id < OPT_FOCUS || id > OPT_MODULE)
		return 0;
	/* the options are in enum filter_field's order */
	int err = filter_set(f, (enum filter_field)(id - OPT_FOCUS), arg, why, sizeof(why));
	if (err == -ENOMEM)
		return error("out of memory");
	if (err)
		return usage_error(cmd, "invalid regular expression '%s' for --%s: %s", arg,
				   option_name(id), why);
	return 0;
}
