/* Helpers the commands share: reading a profile with one clear error line, naming inputs,
 * formatting counts, writing a finished output atomically. */
#ifndef FIRN_COMMON_H
#define FIRN_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "format/folded.h"
#include "model/profile.h"
#include "base/unit.h"

struct cmd;

/* The input as messages name it: "<stdin>" for "-". */
const char *input_name(const char *path);
/* Reads a profile (pprof or folded) into p; prints the error (returns 1) or the malformed-lines
 * warning (returns 0). */
int load_profile(struct profile *p, const char *path);
/* load_profile of a regular file only: a FIFO, device or directory at path is refused at once
 * ("cannot open 'x': not a regular file", returns 1) instead of blocking on it; for reading a
 * file nobody chose (the completion reads ./firn.pb.gz). */
int load_profile_regular(struct profile *p, const char *path);
/* Writes s to f with control characters escaped (escape_char: "\x1b"), so that names from a
 * profile cannot command the terminal, then spaces up to width bytes (0: none). */
void put_text(FILE *f, const char *s, size_t width);

/* Writes ", 2026-12-01 21:00:00 to 21:10:00 UTC (600.0 s)": the time range of p (the merged
 * range of several files), for a header line. */
void put_time_range(FILE *f, const struct profile *p);
/* Writes lines of text (separated by newlines, which stay) with put_text, each ending in a
 * newline; text is cut at its newlines. */
void put_lines(FILE *f, char *text);
/* The bytes put_text writes for s, padding aside. */
size_t text_len(const char *s);
/* Adds src's comments to dst's, for FILE...: a count ("lost: 12", "off_cpu.waits: 3": a counter's
 * key and a decimal value) is added to dst's line of the same key, any other line ("command: ...",
 * "frequency: 99") is kept once per distinct text, so each file's command stays listed. 0, or
 * -ENOMEM (dst keeps what was merged). */
int merge_comments(struct profile *dst, const struct profile *src);
/* load_profile reading the first frame of folded stacks as comm says (folded_read_comm). */
int load_profile_comm(struct profile *p, const char *path, enum folded_comm comm);
/* Formats v with thousands separators ("2,041") into buf (32 bytes); returns buf. */
const char *group_digits(int64_t v, char *buf);
/* Formats v in scale u with thousands separators ("2,041", "1,234.5") into buf (48 bytes);
 * returns buf. */
const char *group_value(const struct unit_scale *u, int64_t v, char *buf);
/* The sample type of p that --sample-type spec chooses (NULL: the default) for cmd, path naming
 * the file (NULL: "in this recording", for top): its index (0 when p has no types and spec is NULL), or -1 after printing the one
 * line "firn CMD: no sample type 'x' in 'FILE': it has 0 samples/count, 1 cpu/nanoseconds" (the
 * first 8 types, then "and N more")
 * (the caller exits 2). */
int sample_type_choose(const struct cmd *cmd, const struct profile *p, const char *spec,
		       const char *path);
/* Why writing the output path failed (err < 0), for "cannot write 'x': REASON": strerror's
 * words, or plainer ones for a FIFO that no process reads and for a block device or socket. */
const char *output_strerror(const char *path, int err);
/* Writes a finished output with file_replace_atomic (a new file gets mode less umask; an old
 * file stays on failure; devices and FIFOs are written through), or to stdout when path is
 * NULL or "-". Prints the error and returns 1, or returns 0. */
int output_write(const char *path, const void *buf, size_t len, mode_t mode);
/* Checks the CA file of a push option (opt: "cacert", "push-cacert") before anything is sent or
 * recorded (push_check_cacert): 0, or prints "cannot use 'FILE' for --OPT: WHY" and returns 1. */
int cacert_check(const char *path, const char *opt);
/* s with control characters escaped (escape_text: "\r" as "\x0d") in buf (len bytes, cut to
 * fit): what the user typed, quoted in a one-line message. Returns buf. */
const char *text_escaped(char *buf, size_t len, const char *s);
/* The service.name label (OpenTelemetry's process context, lib/runtimes/otelthread.c) p's
 * samples carry, when every sample carries it and no other name, and it can name a pushed
 * service (no braces, commas or control characters); else NULL. Points into p. */
const char *profile_service(const struct profile *p);
/* Checks the value of a push option that goes into a header (--tenant): push_value_ok, or
 * prints "invalid value 'V' for --OPT (...)" and returns 2. */
int push_value_check(const struct cmd *cmd, const char *opt, const char *value);
/* Prints the usage error of a --label that push_labels_add refused; returns 2. */
int push_label_error(const struct cmd *cmd, const char *arg);
/* Checks a push URL before anything is sent or recorded (push_check_url): 0, or prints the
 * usage error "invalid value 'URL' for --OPT (...)" ("invalid URL 'URL' (...)" when opt is
 * NULL, an operand) with the URL as push_url_shown shows it, escaped, and returns 2 (1 out of
 * memory). */
int push_url_check(const struct cmd *cmd, const char *url, const char *opt);
/* The push protocols (lib/record/push.h's backends, in order) into buf (len bytes, cut to fit):
 * joined by sep, the last by last, the first (the default) followed by note ("" none):
 * "pyroscope (default), parca or otlp". Returns buf. */
const char *push_protocols(char *buf, size_t len, const char *sep, const char *last,
			   const char *note);
/* Parses the protocol of --OPT (--to, --push-to) into *proto: 0, or prints "invalid value 'X'
 * for --OPT (pyroscope, parca, otlp)" and returns 2. */
int push_proto_option(const struct cmd *cmd, const char *opt, const char *arg, int *proto);
/* Whether stdout takes colour: a terminal, TERM set and not "dumb", NO_COLOR unset or empty
 * (https://no-color.org). */
bool color_terminal(void);

/* One line per file whose sampled code has no symbols (lib/analyze/nosym.h: each of 1 % of the
 * samples of value index vi or more), the largest first, at most 3: PREFIX "no symbols: 'FILE'
 * in N samples (S%); for names install PKG, or set DEBUGINFOD_URLS" (escaped: put_text). */
void put_nosym_lines(FILE *f, const struct profile *p, uint32_t vi, const char *prefix);

#endif
