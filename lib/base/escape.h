/* Names shown as text: function names come from any binary and process names from any process,
 * and a control character in them (ESC ] 0 ; ... BEL retitles an xterm, ESC [ ... recolors it)
 * must reach a terminal as visible characters, never as a command. */
#ifndef FIRN_ESCAPE_H
#define FIRN_ESCAPE_H

#include <stddef.h>

#define ESCAPE_MAX 8 /* the longest escape of one character: "\xc2\x9b" */

/* Looks at the character starting at s[0] (n > 0 bytes left): a C0 control (0x00-0x1f, tab and
 * newline too), DEL (0x7f), a C1 control (U+0080-U+009F, UTF-8 c2 80-c2 9f) or a bidirectional
 * control (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069: they reorder what follows, so
 * a name could read as another or shift a table's columns). For one, writes its escape to out
 * (ESCAPE_MAX bytes, not NUL-terminated: "\x1b", "\xc2\x9b", "\u202e") and returns the
 * escape's length; otherwise returns 0. *used: the bytes of s the character takes (1 to 3).
 * Every table and message that shows a name from a profile or binary escapes it with this.
 * Other bytes, UTF-8 text included, need no escape. A backslash is not escaped: the result is
 * for reading, not for parsing back. */
size_t escape_char(const char *s, size_t n, char *out, size_t *used);

/* Writes s[0..n) into dst (cap bytes; NUL-terminated when cap > 0, cut where it does not fit)
 * with every character escape_char escapes escaped. Returns the length of the whole escaped
 * text, as snprintf does: dst may be NULL when cap is 0. */
size_t escape_text(char *dst, size_t cap, const char *s, size_t n);

#endif
