/* Scales for showing sample values: nanoseconds as ms or s, bytes as KiB/MiB/GiB. */
#include "base/unit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Decimals that show a ten-thousandth of max (in the scale's units) with a digit, 0 to 3. */
static int decimals_for(double max)
{
	if (!(max > 0))
		return 0;
	double d = ceil(4 - log10(max));
	return d < 0 ? 0 : d > 3 ? 3 : (int)d;
}

/* Sets u to divide by div and call the result name. */
static void set(struct unit_scale *u, const char *name, double div, int64_t max)
{
	u->name = name;
	u->div = div;
	u->scaled = true;
	u->decimals = decimals_for(max / div);
}

void unit_scale_init(struct unit_scale *u, const char *unit, int64_t max)
{
	const double kib = 1024, mib = kib * 1024, gib = mib * 1024;

	memset(u, 0, sizeof(*u));
	u->div = 1;
	u->name = !unit || !*unit || !strcmp(unit, "count") ? "samples" : unit;
	if (!unit)
		return;
	if (!strcmp(unit, "nanoseconds"))
		set(u, max >= 10e9 ? "s" : "ms", max >= 10e9 ? 1e9 : 1e6, max);
	else if (!strcmp(unit, "bytes"))
		set(u, max >= 10 * gib ? "GiB" : max >= 10 * mib ? "MiB" : "KiB",
		    max >= 10 * gib ? gib : max >= 10 * mib ? mib : kib, max);
}

const char *unit_format(const struct unit_scale *u, int64_t v, char *buf, size_t len)
{
	if (u->scaled)
		snprintf(buf, len, "%.*f", u->decimals, v / u->div);
	else
		snprintf(buf, len, "%lld", (long long)v);
	return buf;
}
