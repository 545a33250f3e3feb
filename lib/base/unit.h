/* How values of a sample type are shown to people: nanoseconds as ms or s, bytes as KiB, MiB or
 * GiB, counts as samples; one scale for all the values of one output (a table, a flame graph),
 * chosen from the largest of them, so that they compare at a glance. */
#ifndef FIRN_UNIT_H
#define FIRN_UNIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct unit_scale {
	const char *name; /* "ms", "s", "KiB", "MiB", "GiB"; for other units the unit itself, and
			   * "samples" for "count" and "" */
	double div;       /* a value is shown as value / div */
	int decimals;     /* 0 to 3: enough that a ten-thousandth of max shows a digit */
	bool scaled;      /* false: values are shown as they are (integers), div 1 */
};

/* The scale for values in unit (a pprof unit string: "nanoseconds", "bytes", "count"...) up to
 * max: seconds from 10 s on, else milliseconds; GiB from 10 GiB, MiB from 10 MiB, else KiB.
 * Always succeeds (an unknown unit is shown as it is). */
void unit_scale_init(struct unit_scale *u, const char *unit, int64_t max);

/* Writes v in scale u into buf ("1234.5", or "1234" unscaled); returns buf. */
const char *unit_format(const struct unit_scale *u, int64_t v, char *buf, size_t len);

#endif
