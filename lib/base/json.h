/* A small streaming JSON writer (after bpftool's json_writer.c): values go straight to a FILE,
 * commas, colons and (when pretty) two-space indentation are added by the writer. */
#ifndef FIRN_JSON_H
#define FIRN_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Output shape: compact `{"a":[1,2]}`; pretty as Python's json.dumps(indent=2):
 *   {
 *     "a": [
 *       1,
 *       2
 *     ]
 *   }
 * Empty containers are `{}` and `[]` in both. Each complete top-level value is followed by "\n".
 * Strings: `"` `\` and control characters are escaped (\b \f \n \r \t, else \u00XX); bytes that are
 * not valid UTF-8 become \ufffd, one per maximal invalid subsequence. Doubles are written in the
 * shortest form that reads back exactly; NaN and infinities are written as null. */
struct json_writer;

/* Returns a writer on f (not closed by jw_free), or NULL with errno = ENOMEM. */
struct json_writer *jw_new(FILE *f, bool pretty);
void jw_free(struct json_writer *w);

void jw_begin_object(struct json_writer *w);
void jw_end_object(struct json_writer *w);
void jw_begin_array(struct json_writer *w);
void jw_end_array(struct json_writer *w);
/* The name of the next member of the current object. */
void jw_name(struct json_writer *w, const char *name);

void jw_string(struct json_writer *w, const char *s); /* NULL is written as null */
void jw_string_len(struct json_writer *w, const char *s, size_t len);
void jw_int(struct json_writer *w, int64_t v);
void jw_uint(struct json_writer *w, uint64_t v);
void jw_double(struct json_writer *w, double v);
void jw_bool(struct json_writer *w, bool v);
void jw_null(struct json_writer *w);

/* 0 while the calls made a well-formed document so far; -EINVAL after a misplaced call (a value
 * without a name in an object, a name outside one, an unmatched end), -ENOMEM when nesting could
 * not grow. The FILE's own errors are left to ferror(). */
int jw_error(const struct json_writer *w);
/* Current nesting depth (0 when every container is closed). */
unsigned jw_depth(const struct json_writer *w);

#endif
