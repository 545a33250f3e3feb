/* libFuzzer harness: the hand-written DWARF decoder (compile unit index, line tables, inline
 * scopes) on mutated ELF files with debug info, looking up addresses taken from the input and
 * around the entry point. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elf/dwarfsym.h"
#include "fuzz.h"

volatile size_t touched;

/* No debug section cache: a mutated input would write a file each run (the cache's reader has
 * its own harness, fuzz_debug_cache). */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return setenv("FIRN_DEBUG_CACHE", "0", 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dwarfsym_frame frames[16];
	struct dwarfsym *d = dwarfsym_new_fd(fuzz_memfd(data, size));

	if (!d) {
		FUZZ_ASSERT(errno == ENODATA || errno == ENOEXEC || errno == ENOMEM ||
			    errno == EINVAL);
		return 0;
	}
	/* e_entry of a 64-bit ELF, then addresses near it and from the input */
	uint64_t entry = 0;
	if (size >= 32)
		memcpy(&entry, data + 24, 8);
	for (int i = 0; i < 24; i++) {
		uint64_t a = i < 8 ? entry + i * 7 : fuzz_u64(data, size, i * 8) & 0xffffff;
		int n = dwarfsym_lookup(d, a, frames, 16);
		FUZZ_ASSERT(n >= 0 && n <= 16);
		for (int k = 0; k < n; k++) /* every string must be readable to its end */
			touched += (frames[k].name ? strlen(frames[k].name) : 0) +
				   (frames[k].file ? strlen(frames[k].file) : 0);
	}
	dwarfsym_free(d);
	return 0;
}
