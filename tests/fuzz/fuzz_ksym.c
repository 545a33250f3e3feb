/* libFuzzer harness: kallsyms-format text (firn reads it from /proc or from a file a user
 * names): symbols sorted by address, lookups land on a symbol at or below the address. */
#include <errno.h>

#include "fuzz.h"
#include "symbolize/ksym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ksym k;

	int err = ksym_load(&k, fuzz_memfd_path(data, size));
	FUZZ_ASSERT(err == 0 || err == -EINVAL || err == -ENOENT || err == -EPERM ||
		    err == -ENODATA);
	if (err)
		return 0;
	for (size_t i = 1; i < k.nsyms; i++)
		FUZZ_ASSERT(k.syms[i - 1].addr < k.syms[i].addr);
	for (size_t i = 0; i < 32; i++) {
		const char *name, *module;
		uint64_t a = i < k.nsyms ? k.syms[i].addr + i : fuzz_u64(data, size, i * 8);
		ksym_lookup(&k, a, &name, &module);
	}
	ksym_release(&k);
	return 0;
}
