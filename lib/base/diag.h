/* Diagnostics from lib/: one replaceable reporter, as libbpf_set_print does. lib/ never prints;
 * it hands warnings and debug notes to the reporter that cmd/ installs (default: none). */
#ifndef FIRN_DIAG_H
#define FIRN_DIAG_H

enum diag_level { DIAG_WARN, DIAG_INFO, DIAG_DEBUG };

typedef void (*diag_fn)(enum diag_level level, const char *msg);

/* Installs fn (NULL silences); returns the previous reporter. */
diag_fn diag_set_reporter(diag_fn fn);
/* Formats a message and passes it to the reporter, if any. */
void diag(enum diag_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
