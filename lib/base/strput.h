/* Appending formatted text to a fixed buffer, as the summary lines are written (the event rows',
 * the runtimes'): never past the end, always NUL-terminated. */
#ifndef FIRN_STRPUT_H
#define FIRN_STRPUT_H

#include <stddef.h>

/* Appends to buf (len bytes, len > 0) at *off as snprintf would, *off advanced by what was
 * written, at most to len - 1 (the text is then cut there). Does nothing when *off >= len. */
__attribute__((format(printf, 4, 5)))
void strput(char *buf, size_t len, size_t *off, const char *fmt, ...);

#endif
