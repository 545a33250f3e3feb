/* Commands and options declared as data: the tables produce --help, parse argv with getopt_long
 * and answer `firn help --options CMD` (used by the completion and man page sync tests). */
#ifndef FIRN_OPT_H
#define FIRN_OPT_H

#include <stdbool.h>
#include <stdio.h>

struct opt {
	const char *long_name; /* without dashes */
	int short_name;        /* 0 when none */
	const char *arg;       /* metavariable ("HZ"), NULL for a flag */
	const char *help;      /* one line (an option whose values a table describes, as -e's
				* events: what follows that description) */
	int id;                /* passed to the handler; use the short name or a value >= 256 */
};

#define OPT_END { NULL, 0, NULL, NULL, 0 }

#define OPT_GROUPS 6

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	const char *usage; /* lines after "usage: ", separated by \n */
	const struct opt *opts[OPT_GROUPS]; /* option groups (e.g. the command's own, then the
					      * flame graph options shared by report and diff, or
					      * rows made from a lib/ table), NULL after the last */
	/* Fills the groups made from lib/'s tables (record's --no-NAME from the runtime
	 * registry); cmd/main.c calls it once at start-up, before any group is read. NULL: none. */
	void (*init)(void);
};

/* Iterates over every option of every group of cmd. */
#define for_each_opt(o, cmd) \
	for (int g_ = 0; g_ < OPT_GROUPS && (cmd)->opts[g_]; g_++) \
		for (const struct opt *o = (cmd)->opts[g_]; o->long_name; o++)

/* Called once per option: return 0, or 2 after printing a usage error. */
typedef int (*opt_handler)(void *ctx, int id, const char *arg);

/* Parses options of cmd (stopping at "--" or, when stop_at_arg, at the first operand; otherwise
 * options and operands may be mixed); on -h/--help prints help and returns -1; on a usage error
 * prints it and returns 2. On success returns 0 and sets *argi so that the operands (in order,
 * then whatever followed "--") are argv[*argi .. argc). */
int opt_parse(const struct cmd *cmd, int argc, char **argv, bool stop_at_arg, opt_handler fn,
	      void *ctx, int *argi);

/* The values option o of cmd takes when they are a fixed set, separated by spaces ("self total"),
 * or NULL; a value ending in ':' is the start of one ("usdt:"). The string is a literal, or
 * written into buf (len bytes: the events, from the event table). Completions get them through
 * `firn help --values CMD`; tests/cli/test_completion.sh checks them against the parsers. */
const char *opt_values(const struct cmd *cmd, const struct opt *o, char *buf, size_t len);

/* Prints the usage lines and the option table. */
void opt_print_help(const struct cmd *cmd, FILE *f);

/* Prints "firn CMD: message" and a hint to stderr; returns 2 (a usage error's exit code). */
int usage_error(const struct cmd *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints "firn: message" on stderr (errno text appended by the caller); returns 1. */
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "firn: warning: message" on stderr. */
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The one strict reading of a decimal integer: s starts with a digit (or '-' and a digit: no
 * blank, no '+'); *end is set past the digits (the caller checks what follows: nothing, or a
 * list's ','). Returns 0 with *v set, -EINVAL when s does not start so, -ERANGE past a long. */
int opt_strtol(const char *s, char **end, long *v);
/* Parses a number option, strictly: opt_long with opt_strtol, in min..max, nothing after it;
 * opt_double decimal, starting with a digit, '-' or '.' ("1.5", ".5" and "2e3", not " 1",
 * "+1", "0x10" or "inf"). On failure prints the one-line usage error and returns 2. */
int opt_long(const struct cmd *cmd, const char *name, const char *arg, long min, long max,
	     long *out);
int opt_double(const struct cmd *cmd, const char *name, const char *arg, double min, double max,
	       double *out);

/* Each command file defines its descriptor; cmd/main.c lists them. */
extern const struct cmd record_cmd, report_cmd, top_cmd;
extern const struct cmd diff_cmd;
extern const struct cmd usdt_list_cmd;
extern const struct cmd push_cmd;
const struct cmd *cmd_find(const char *name);

/* Global flags from cmd/main.c. */
extern int firn_verbose;

/* Closes stdout and reports a write error (full disk, a closed descriptor) as exit 1, in one
 * line, unless output_error said it already; a reader that went away (EPIPE) is exit 0. */
int close_stdout(void);
/* Reports the write error err (an errno) on stdout once ("cannot write output: Bad file
 * descriptor") and returns 1; for EPIPE (the reader is gone) says nothing and returns 0, so a
 * command that stops writing there ends as `firn ... | head` expects. */
int output_error(int err);

#endif
