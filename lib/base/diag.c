/* Diagnostics reporter for lib/. */
#include "base/diag.h"

#include <stdarg.h>
#include <stdio.h>

static diag_fn reporter;

diag_fn diag_set_reporter(diag_fn fn)
{
	diag_fn old = reporter;

	reporter = fn;
	return old;
}

void diag(enum diag_level level, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	if (!reporter)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	reporter(level, buf);
}
