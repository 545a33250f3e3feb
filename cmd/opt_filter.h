/* The stack filters shared by `firn report`, `firn diff` and `firn top` (--focus, --ignore,
 * --show-from, --thread, --module, --runtime, --tag-focus, --tag-ignore): an option group
 * (struct cmd's opts[]) whose ids lie in 450..469, and the handler that compiles them into a struct filter. */
#ifndef FIRN_OPT_FILTER_H
#define FIRN_OPT_FILTER_H

#include <stddef.h>

#include "analyze/filter.h"
#include "opt.h"

#define OPT_FILTER_FIRST 450
#define OPT_FILTER_LAST 469

extern const struct opt filter_option_table[];

/* Applies option id (450..469) with arg to f; returns 0, 2 after printing a usage error (a
 * regular expression that does not compile, an unknown runtime), or 1 after printing that
 * memory ran out. */
int filter_option(const struct cmd *cmd, struct filter *f, int id, const char *arg);

/* The runtimes --runtime takes, separated by spaces, written into buf (len bytes): the frame
 * kind table's names. Returns buf. */
const char *filter_runtime_values(char *buf, size_t len);

#endif
