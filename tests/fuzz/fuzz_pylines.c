/* libFuzzer harness: CPython line tables (read from the profiled process's code objects, so
 * hostile). Input: byte 0 picks the format (pylines_format, modulo 3), bytes 1-4 the first line
 * (little endian), the rest is the table. Invariants: decoding is deterministic; an empty table
 * gives the first line (co_lnotab) or no line; a 3.11+ table answers an odd offset as the code
 * unit holding it; past the table's last address co_lnotab keeps its last line. */
#include <string.h>

#include "fuzz.h"
#include "runtimes/pylines.h"

/* Sum of co_lnotab's address deltas: every offset from there on has the same line. */
static uint32_t lnotab_end(const uint8_t *t, size_t len)
{
	uint32_t end = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		end += t[i];
	return end;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum pylines_format fmt;
	const uint8_t *t;
	int32_t first;
	size_t len;

	if (size < 5)
		return 0;
	fmt = (enum pylines_format)(data[0] % 3);
	memcpy(&first, data + 1, 4);
	first &= 0xffffff; /* real first lines are small; keep line sums away from int overflow */
	t = data + 5, len = size - 5;
	if (!len)
		FUZZ_ASSERT(pylines_addr2line(fmt, t, 0, first, 0) == (fmt == PYLINES_LNOTAB ? first : -1));
	for (uint32_t off = 0; off < 64; off++) {
		uint32_t o = off < 48 ? off : fuzz_u64(data, size, off) & 0xffff;
		int line = pylines_addr2line(fmt, t, len, first, o);
		FUZZ_ASSERT(line == pylines_addr2line(fmt, t, len, first, o));
		if (fmt == PYLINES_LOCATIONS && (o & 1))
			FUZZ_ASSERT(line == pylines_addr2line(fmt, t, len, first, o - 1));
	}
	if (fmt == PYLINES_LNOTAB)
		FUZZ_ASSERT(pylines_addr2line(fmt, t, len, first, UINT32_MAX) ==
			    pylines_addr2line(fmt, t, len, first, lnotab_end(t, len)));
	return 0;
}
