/* See strput.h. */
#include "base/strput.h"

#include <stdarg.h>
#include <stdio.h>

/* One helper for every summary writer, so that none of them gets the truncation arithmetic
 * wrong (vsnprintf returns what it would have written, not what it wrote). */
void strput(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;

	if (*off >= len)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	*off = n < 0 ? *off : *off + (size_t)n < len ? *off + (size_t)n : len - 1;
}
