/* Option tables → getopt_long, --help text and usage errors. */
#include "opt.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "opt_filter.h"
#include "record/event_table.h"

/* Builds the getopt short-option string and long-option array from the table. */
static int build_getopt(const struct cmd *cmd, char *shorts, size_t shorts_len,
			struct option *longs, size_t nlongs)
{
	size_t s = 0, l = 0;

	shorts[s++] = '+';
	shorts[s++] = ':';
	shorts[s++] = 'h';
	for_each_opt(o, cmd) {
		if (o->short_name && s + 3 < shorts_len) {
			shorts[s++] = o->short_name;
			if (o->arg)
				shorts[s++] = ':';
		}
		if (l + 2 < nlongs)
			longs[l++] = (struct option){ o->long_name, o->arg ? required_argument : no_argument,
						      NULL, o->id };
	}
	longs[l++] = (struct option){ "help", no_argument, NULL, 'h' };
	longs[l] = (struct option){ 0 };
	shorts[s] = 0;
	return 0;
}

/* Name of the option that caused a getopt error, for the message. */
static const char *bad_option_name(char **argv, int idx, int optopt_c, char *buf, size_t len)
{
	if (optopt_c > 0 && optopt_c < 128 && isprint(optopt_c))
		snprintf(buf, len, "-%c", optopt_c);
	else
		snprintf(buf, len, "%s", argv[idx > 0 ? idx - 1 : 0]);
	return buf;
}

int opt_parse(const struct cmd *cmd, int argc, char **argv, bool stop_at_arg, opt_handler fn,
	      void *ctx, int *argi)
{
	char shorts[256], namebuf[128];
	struct option longs[160];
	int c, longidx;

	build_getopt(cmd, shorts, sizeof(shorts), longs, sizeof(longs) / sizeof(longs[0]));
	if (!stop_at_arg)
		shorts[0] = '-';
	optind = 1;
	opterr = 0;
	int nops = 0;
	char **ops = calloc(argc + 1, sizeof(*ops));
	if (!ops)
		return error("out of memory");
	while ((c = getopt_long(argc, argv, shorts, longs, &longidx)) != -1) {
		int rc = 0;
		if (c == 1) {
			ops[nops++] = optarg;
			continue;
		}
		if (c == 'h') {
			opt_print_help(cmd, stdout);
			free(ops);
			return -1;
		}
		if (c == '?')
			rc = usage_error(cmd, "unknown option '%s'",
					 bad_option_name(argv, optind, optopt, namebuf, sizeof(namebuf)));
		else if (c == ':')
			rc = usage_error(cmd, "option '%s' needs an argument",
					 bad_option_name(argv, optind, optopt, namebuf, sizeof(namebuf)));
		else
			rc = fn(ctx, c, optarg);
		if (rc) {
			free(ops);
			return rc;
		}
	}
	/* In permuting mode operands were collected: move them (then what followed "--") to the
	 * end of argv, so the operands are argv[*argi .. argc). */
	if (!stop_at_arg) {
		int rest = argc - optind;
		for (int i = 0; i < rest; i++)
			ops[nops + i] = argv[optind + i];
		optind = argc - (nops + rest);
		memcpy(argv + optind, ops, (nops + rest) * sizeof(*argv));
	}
	free(ops);
	*argi = optind;
	return 0;
}

/* Options that take one of a fixed set of values, by long name (one name takes the same values
 * in every command that has it; only, when set, names the one command that accepts it); fill,
 * when set, writes them, and describe the help that describes them (the events, from
 * lib/record/event_table.h's rows; the push protocols, from lib/record/push.h's backends),
 * before the option's help or, when after is set, after it. */
struct value_set {
	const char *name, *values, *only;
	const char *(*fill)(char *buf, size_t len);
	const char *(*describe)(char *buf, size_t len);
	bool after;
};

/* The push protocols as --to's and --push-to's values: "pyroscope parca otlp". */
static const char *push_values(char *buf, size_t len)
{
	return push_protocols(buf, len, " ", " ", "");
}

/* ... as their help says them: "pyroscope (default), parca or otlp". */
static const char *push_help(char *buf, size_t len)
{
	return push_protocols(buf, len, ", ", " or ", " (default)");
}

static const struct value_set value_sets[] = {
	{ "event", NULL, NULL, event_values, event_help },
	{ "format", "pprof folded", NULL },
	{ "call-graph", "auto dwarf fp", NULL },
	{ "alloc-mode", "auto preload uprobe", NULL },
	{ "sort", "self total", NULL },
	{ "by", "function module line", NULL },
	{ "color-by", "self total", NULL },
	{ "push-to", NULL, NULL, push_values, push_help, true },
	{ "to", NULL, NULL, push_values, push_help, true },
	{ "colors", "default hot mem io red green blue aqua yellow purple orange", "report" },
	{ "runtime", NULL, NULL, filter_runtime_values },
};

/* The value set of option o of cmd, or NULL. */
static const struct value_set *value_set_of(const struct cmd *cmd, const struct opt *o)
{
	for (size_t i = 0; i < sizeof(value_sets) / sizeof(value_sets[0]); i++)
		if (o->arg && !strcmp(o->long_name, value_sets[i].name) &&
		    (!value_sets[i].only || !strcmp(cmd->name, value_sets[i].only)))
			return &value_sets[i];
	return NULL;
}

const char *opt_values(const struct cmd *cmd, const struct opt *o, char *buf, size_t len)
{
	const struct value_set *v = value_set_of(cmd, o);

	return !v ? NULL : v->fill ? v->fill(buf, len) : v->values;
}

/* o's help line: its values' description from their table, then o->help after "; " (the
 * events of -e), or o->help then the description (after: the push protocols); else o->help. */
static const char *opt_help(const struct cmd *cmd, const struct opt *o, char *buf, size_t len)
{
	const struct value_set *v = value_set_of(cmd, o);
	size_t n = 0;

	if (!v || !v->describe)
		return o->help;
	if (v->after && (n = strlen(o->help)) < len)
		memcpy(buf, o->help, n + 1);
	if (n >= len)
		return o->help;
	v->describe(buf + n, len - n);
	if (!v->after) {
		n = strlen(buf);
		snprintf(buf + n, len - n, "; %s", o->help);
	}
	return buf;
}

void opt_print_help(const struct cmd *cmd, FILE *f)
{
	const char *u = cmd->usage;

	while (u && *u) {
		const char *nl = strchr(u, '\n');
		int len = nl ? (int)(nl - u) : (int)strlen(u);
		fprintf(f, "%s firn %s %.*s\n", u == cmd->usage ? "usage:" : "   or:", cmd->name, len, u);
		u = nl ? nl + 1 : u + len;
	}
	fprintf(f, "\n%s\n\n", cmd->summary);
	for_each_opt(o, cmd) {
		char left[64], help[512];
		if (o->short_name)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", o->short_name, o->long_name,
				 o->arg ? " " : "", o->arg ? o->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", o->long_name, o->arg ? " " : "",
				 o->arg ? o->arg : "");
		fprintf(f, "  %-28s %s\n", left, opt_help(cmd, o, help, sizeof(help)));
	}
	fprintf(f, "  %-28s %s\n", "-h, --help", "show this help");
}

int usage_error(const struct cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "firn %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'firn %s --help' for more information.\n", cmd->name);
	return 2;
}

int error(const char *fmt, ...)
{
	va_list ap;

	fputs("firn: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	fputs("firn: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int opt_strtol(const char *s, char **end, long *v)
{
	const char *d = s + (*s == '-');

	*end = (char *)s;
	/* strtol alone would take " 5" and "+5" (and -p ' 1' would be pid 1) */
	if (*d < '0' || *d > '9')
		return -EINVAL;
	errno = 0;
	*v = strtol(s, end, 10);
	return errno ? -errno : 0;
}

int opt_long(const struct cmd *cmd, const char *name, const char *arg, long min, long max,
	     long *out)
{
	char *end;
	long v;

	if (opt_strtol(arg, &end, &v) || *end || v < min || v > max)
		return usage_error(cmd, "invalid value '%s' for --%s (an integer from %ld to %ld)",
				   arg, name, min, max);
	*out = v;
	return 0;
}

int opt_double(const struct cmd *cmd, const char *name, const char *arg, double min, double max,
	       double *out)
{
	char *end;

	errno = 0;
	/* decimal only: strtod would also take "0x10" (16), "inf", "nan", leading blanks and '+' */
	const char *d = arg + (*arg == '-');
	bool decimal = arg[strspn(arg, "0123456789.eE+-")] == 0 &&
		       ((*d >= '0' && *d <= '9') || (*d == '.' && d[1] >= '0' && d[1] <= '9'));
	double v = strtod(arg, &end);
	if (!decimal || errno || end == arg || *end || !isfinite(v) || v < min || v > max)
		return usage_error(cmd, "invalid value '%s' for --%s (a number from %g to %g)", arg,
				   name, min, max);
	*out = v;
	return 0;
}
