/* The runtimes' profile mapping names: one table (see frame_kind.h). */
#include "model/frame_kind.h"

#include <string.h>

/* By enum frame_runtime. A new runtime adds its rows (and its colours: lib/format/flamegraph.c). */
static const char *const mappings[FRAME_RUNTIMES] = {
	[FRAME_NATIVE] = "",
	[FRAME_PYTHON] = "[python]",
	[FRAME_GPU] = "[gpu]",
	[FRAME_JAVASCRIPT] = "[javascript]",
	[FRAME_JAVA] = "[java]",
};

/* The names users give them (report --runtime), by enum frame_runtime. */
static const char *const names[FRAME_RUNTIMES] = {
	[FRAME_NATIVE] = "",
	[FRAME_PYTHON] = "python",
	[FRAME_GPU] = "gpu",
	[FRAME_JAVASCRIPT] = "javascript",
	[FRAME_JAVA] = "java",
};

const char *frame_runtime_mapping(enum frame_runtime r)
{
	return (unsigned)r < FRAME_RUNTIMES && mappings[r] ? mappings[r] : "";
}

enum frame_runtime frame_runtime_of_mapping(const char *name)
{
	for (unsigned r = FRAME_NATIVE + 1; name && *name == '[' && r < FRAME_RUNTIMES; r++)
		if (mappings[r] && !strcmp(name, mappings[r]))
			return (enum frame_runtime)r;
	return FRAME_NATIVE;
}

const char *frame_runtime_name(enum frame_runtime r)
{
	return (unsigned)r < FRAME_RUNTIMES && names[r] ? names[r] : "";
}

enum frame_runtime frame_runtime_of_name(const char *name)
{
	for (unsigned r = FRAME_NATIVE + 1; name && *name && r < FRAME_RUNTIMES; r++)
		if (names[r] && !strcmp(name, names[r]))
			return (enum frame_runtime)r;
	return FRAME_NATIVE;
}
