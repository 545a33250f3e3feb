/* libFuzzer harness: demangling of symbol names read from ELF files (C++ and Rust, through
 * libiberty's callback demanglers): never crashes, returns a string or NULL with errno set. */
#include <errno.h>
#include <string.h>

#include "base/demangle.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *name = malloc(size + 1);

	if (!name)
		abort();
	memcpy(name, data, size);
	name[size] = 0;
	if (demangle_candidate(name)) {
		errno = 0;
		char *out = demangle_name(name);
		FUZZ_ASSERT(out || errno == EINVAL || errno == ENOMEM);
		free(out);
	}
	free(name);
	return 0;
}
