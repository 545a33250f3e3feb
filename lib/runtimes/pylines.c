/* CPython line-table decoders (see pylines.h); every read is bounded by the table's length. */
#include "runtimes/pylines.h"

#include <limits.h>

/* A running line out of int's range comes only from a damaged table: no line. */
static int line_or_none(int64_t line)
{
	return line < INT_MIN || line > INT_MAX ? -1 : (int)line;
}

/* co_lnotab (3.8, 3.9): the line advances by each pair whose address is at or below offset;
 * as PyCode_Addr2Line in 3.8's Objects/codeobject.c. */
static int lnotab_line(const uint8_t *t, size_t len, int64_t line, uint32_t offset)
{
	uint64_t addr = 0;

	for (size_t i = 0; i + 1 < len; i += 2) {
		addr += t[i];
		if (addr > offset)
			break;
		line += (int8_t)t[i + 1];
	}
	return line_or_none(line);
}

/* 3.10 co_linetable: ranges [start, start + sdelta) with line deltas; -128 marks a range with no
 * line and leaves the running line alone (3.10's Objects/codeobject.c advance()). */
static int linetable310_line(const uint8_t *t, size_t len, int64_t line, uint32_t offset)
{
	uint64_t end = 0;

	for (size_t i = 0; i + 1 < len; i += 2) {
		uint64_t start = end;
		int8_t ldelta = (int8_t)t[i + 1];

		end = start + t[i];
		if (ldelta != -128)
			line += ldelta;
		if (start <= offset && offset < end)
			return ldelta == -128 ? -1 : line_or_none(line);
	}
	return -1;
}

/* A locations.md varint: 6-bit chunks, least significant first, bit 6 = more follow. -1 when
 * the table ends inside it or it overflows 32 bits. */
static int64_t read_varint(const uint8_t *t, size_t len, size_t *i)
{
	uint64_t v = 0;

	for (unsigned shift = 0; *i < len && shift < 36; shift += 6) {
		uint8_t b = t[(*i)++];
		v |= (uint64_t)(b & 63) << shift;
		if (!(b & 64))
			return (int64_t)v;
	}
	return -1;
}

/* A signed varint: the low bit of the unsigned value is the sign. */
static int64_t read_svarint(const uint8_t *t, size_t len, size_t *i, int *ok)
{
	int64_t u = read_varint(t, len, i);

	*ok = u >= 0;
	if (u < 0)
		return 0;
	return (u & 1) ? -(u >> 1) : (u >> 1);
}

/* Decodes one 3.11+ entry's line delta (and skips its columns): 0 or -1 when malformed.
 * *noline is set for code 15 (no location). */
static int location_entry(const uint8_t *t, size_t len, size_t *i, int code, int64_t *delta, int *noline)
{
	int ok = 1;

	*delta = 0, *noline = 0;
	if (code == 15) {
		*noline = 1;
	} else if (code == 14) { /* long form: line, end line, column, end column */
		*delta = read_svarint(t, len, i, &ok);
		for (int k = 0; k < 3 && ok; k++)
			ok = read_varint(t, len, i) >= 0;
	} else if (code == 13) { /* no column */
		*delta = read_svarint(t, len, i, &ok);
	} else if (code >= 10) { /* one-line form: delta = code - 10, two column bytes */
		*delta = code - 10;
		ok = *i + 2 <= len, *i += 2;
	} else { /* short form: same line, one column byte */
		ok = *i + 1 <= len, *i += 1;
	}
	return ok ? 0 : -1;
}

/* 3.11+ location table: entries start with a byte whose bit 7 is set, bits 3-6 the code and
 * bits 0-2 the length - 1 in code units (2 bytes). */
static int locations_line(const uint8_t *t, size_t len, int64_t line, uint32_t offset)
{
	uint64_t unit = offset / 2, end = 0;
	size_t i = 0;

	while (i < len) {
		uint8_t first = t[i++];
		int64_t delta;
		int noline;
		uint64_t start = end;

		if (!(first & 0x80))
			return -1;
		end = start + (first & 7) + 1;
		if (location_entry(t, len, &i, (first >> 3) & 15, &delta, &noline))
			return -1;
		line += delta; /* |delta| < 2^35: a line past 2^40 is damage, never an overflow */
		if (line > (1LL << 40) || line < -(1LL << 40))
			return -1;
		if (start <= unit && unit < end)
			return noline ? -1 : line_or_none(line);
	}
	return -1;
}

int pylines_addr2line(enum pylines_format fmt, const uint8_t *table, size_t len, int firstlineno,
		      uint32_t offset)
{
	switch (fmt) {
	case PYLINES_LNOTAB:
		return lnotab_line(table, len, firstlineno, offset);
	case PYLINES_LINETABLE:
		return linetable310_line(table, len, firstlineno, offset);
	case PYLINES_LOCATIONS:
		return locations_line(table, len, firstlineno, offset);
	}
	return -1;
}
