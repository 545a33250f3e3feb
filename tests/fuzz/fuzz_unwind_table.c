/* libFuzzer harness: the CFI unwind table builder on mutated ELF files (given as a memory
 * file's descriptor): rows must come out strictly sorted by pc, and findable. */
#include <errno.h>

#include "fuzz.h"
#include "unwind/unwind_table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct unwind_table t;
	int64_t delta;

	int err = unwind_table_build(&t, fuzz_memfd(data, size));
	FUZZ_ASSERT(err == 0 || err == -ENOEXEC || err == -ENODATA || err == -EFBIG ||
		    err == -EINVAL || err == -ENOMEM);
	if (err)
		return 0;
	FUZZ_ASSERT(t.nsegs <= 4);
	for (uint32_t i = 1; i < t.n; i++)
		FUZZ_ASSERT(t.rows[i - 1].pc < t.rows[i].pc);
	for (uint32_t i = 0; i < t.n && i < 64; i++)
		FUZZ_ASSERT(t.rows[unwind_table_find(&t, t.rows[i].pc)].pc == t.rows[i].pc);
	for (size_t i = 0; i < 8; i++) {
		unwind_table_find(&t, fuzz_u64(data, size, i * 8));
		unwind_table_delta(&t, fuzz_u64(data, size, i * 8 + 3) & 0xfffff, &delta);
	}
	unwind_table_release(&t);
	return 0;
}
