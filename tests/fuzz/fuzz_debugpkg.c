/* libFuzzer harness: dpkg's .list and status text and apt's package lists (lib/elf/debugpkg),
 * read as they are on the recording machine (root's files, but parsed with bounds checks all
 * the same). Byte 0 picks the name looked for: a source found is a non-empty word of the input
 * that fits, or the package itself. */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "elf/debugpkg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "a", "python3.11-minimal", "/usr/bin/python3.11", "" };
	const char *name = names[size ? data[0] % 4 : 0];
	const char *buf = (const char *)data + (size ? 1 : 0);
	size_t len = size ? size - 1 : 0;
	char src[16];

	debugpkg_list_has(buf, len, name);
	debugpkg_packages_has(buf, len, name);
	int err = debugpkg_status_source(buf, len, name, src, sizeof(src));
	FUZZ_ASSERT(err == 0 || err == -ENOENT || err == -ENAMETOOLONG);
	if (!err) {
		FUZZ_ASSERT(strlen(src) > 0 && strlen(src) < sizeof(src));
		FUZZ_ASSERT(!strcmp(src, name) || memmem(buf, len, src, strlen(src)));
		FUZZ_ASSERT(!strchr(src, ' ') && !strchr(src, '\n'));
	}
	return 0;
}
