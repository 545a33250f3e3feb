/* libFuzzer harness: the kernel's "name+0xOFF/0xSIZE [module]" text that ksym_bpf_parse reads
 * from its lookup program: a name and module are NUL-terminated inside the text, never empty. */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "symbolize/ksym_bpf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[1024];
	struct ksym_bpf_hit h;

	if (size >= sizeof(text))
		size = sizeof(text) - 1;
	memcpy(text, data, size);
	text[size] = 0;
	int err = ksym_bpf_parse(text, &h);
	FUZZ_ASSERT(err == 0 || err == -ENOENT);
	FUZZ_ASSERT(!err == !!h.name);
	if (err)
		return 0;
	FUZZ_ASSERT(h.name == text && h.name[0]);
	FUZZ_ASSERT(strlen(h.name) < size);
	FUZZ_ASSERT(!h.module || (h.module > text && h.module < text + size && h.module[0]));
	return 0;
}
