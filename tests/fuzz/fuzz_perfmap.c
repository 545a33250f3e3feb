/* libFuzzer harness: perf-PID.map text (written by the JIT of the profiled process, so hostile):
 * entries sorted by start and non-empty (but for one whose end saturates at the top), every
 * lookup at or above the start of the entry it returns. */
#include <errno.h>

#include "fuzz.h"
#include "elf/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap m;

	FUZZ_ASSERT(perfmap_parse(&m, (const char *)data, size) == 0);
	for (size_t i = 0; i < m.n; i++) {
		/* non-empty, but for an entry at the very top (its end saturates) */
		FUZZ_ASSERT(m.entries[i].start < m.entries[i].end || m.entries[i].end == UINT64_MAX);
		FUZZ_ASSERT(m.entries[i].name < m.names_len);
		if (i)
			FUZZ_ASSERT(m.entries[i - 1].start <= m.entries[i].start);
	}
	for (size_t i = 0; i < 16 + m.n && i < 64; i++) {
		const char *name;
		uint64_t start, a = i < m.n ? m.entries[i].start : fuzz_u64(data, size, i * 8);
		if (!perfmap_lookup(&m, a, &name, &start))
			FUZZ_ASSERT(start <= a);
	}
	perfmap_release(&m);
	return 0;
}
