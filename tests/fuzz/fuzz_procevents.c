/* libFuzzer harness: the kernel's side-band records (MMAP2, COMM, FORK, EXIT, LOST) as read from a
 * ring buffer shared with the kernel: the input is a run of records, each parsed where the one
 * before ends. A parsed event has a known kind; an mmap's filename ends within the name buffer;
 * a build id never exceeds its array. */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "proc/procevents.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[64];
	size_t off = 0;

	while (off + 8 <= size) {
		struct proc_event ev;
		uint16_t len;
		int rc = procevents_parse(data + off, size - off, &ev, name, sizeof(name));
		FUZZ_ASSERT(rc == 1 || rc == 0 || rc == -EINVAL);
		if (rc == 1) {
			FUZZ_ASSERT(ev.kind >= PROC_EV_EXEC && ev.kind <= PROC_EV_LOST);
			FUZZ_ASSERT(ev.build_id_size <= PROC_EV_BUILD_ID_MAX);
			FUZZ_ASSERT(memchr(ev.comm, 0, sizeof(ev.comm)));
			if (ev.kind == PROC_EV_MMAP)
				FUZZ_ASSERT(ev.filename == name && memchr(name, 0, sizeof(name)));
		}
		memcpy(&len, data + off + 6, sizeof(len));
		if (rc < 0 || len < 8)
			break;
		off += len;
	}
	return 0;
}
