/* libFuzzer harness: CPython interpreter memory (read from the profiled process, so hostile):
 * byte 0 picks the version (3.byte), the rest is a memory image holding _PyRuntime at its start
 * (3.13+: _Py_DebugOffsets). Walks every thread and resolves every frame. Invariants: the walk
 * ends (bounded threads and depth), frames fit the array, resolved names are NUL-terminated
 * and no longer than the cap's UTF-8, and a second resolve of a frame gives the same answer. */
#include <string.h>

#include "fuzz.h"
#include "runtimes/pyruntime.h"

#define BASE 0x10000000ULL

static int on_thread(const struct pythread *t, void *arg)
{
	struct pyruntime *rt = arg;

	FUZZ_ASSERT(t->nframes <= PYRUNTIME_MAX_DEPTH);
	for (size_t i = 0; i < t->nframes; i++) {
		struct pyframe a, b;
		char name[4 * 512 + 1];

		if (pycode_resolve(rt, t->frames[i].code, t->frames[i].lasti, &a))
			continue;
		FUZZ_ASSERT(strlen(a.qualname) <= 4 * 512 && strlen(a.filename) <= 4 * 512);
		snprintf(name, sizeof(name), "%s", a.qualname);
		FUZZ_ASSERT(pycode_resolve(rt, t->frames[i].code, t->frames[i].lasti, &b) == 0);
		FUZZ_ASSERT(!strcmp(name, b.qualname) && a.line == b.line && a.firstlineno == b.firstlineno);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pyruntime *rt;

	if (size < 1 || !(rt = malloc(sizeof(*rt))))
		return 0;
	if (!pyruntime_init_image(rt, data + 1, size - 1, BASE, data[0]))
		pyruntime_stacks(rt, on_thread, rt);
	pyruntime_release(rt);
	free(rt);
	return 0;
}
