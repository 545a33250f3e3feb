/* The runtimes' profile mapping names: one table (see frame_kind.h). */
#include "model/frame_kind.h"

#include <stdbool.h>
#include <string.h>

/* A runtime's two names: its profile mapping's and the one users give it (report --runtime). */
struct runtime_names {
	const char *mapping, *name;
};

/* A runtime's row: its mapping is its name in brackets. */
#define RUNTIME(r, n) [r] = { "[" n "]", n }

/* By enum frame_runtime. A new runtime adds its row (and its colours: lib/format/flamegraph.c). */
static const struct runtime_names runtimes[FRAME_RUNTIMES] = {
	[FRAME_NATIVE] = { "", "" },
	RUNTIME(FRAME_PYTHON, "python"),
	RUNTIME(FRAME_GPU, "gpu"),
	RUNTIME(FRAME_JAVASCRIPT, "javascript"),
	RUNTIME(FRAME_JAVA, "java"),
};

/* Runtime r's mapping name (user: the name users give it); "" past the table. */
static const char *column(enum frame_runtime r, bool user)
{
	const struct runtime_names *n = (unsigned)r < FRAME_RUNTIMES ? &runtimes[r] : NULL;
	const char *s = !n ? NULL : user ? n->name : n->mapping;

	return s ? s : "";
}

/* The runtime whose mapping name (user: name) is s (FRAME_NATIVE: none, or s NULL or empty). */
static enum frame_runtime runtime_of(const char *s, bool user)
{
	for (unsigned r = FRAME_NATIVE + 1; s && *s && r < FRAME_RUNTIMES; r++)
		if (!strcmp(s, column((enum frame_runtime)r, user)))
			return (enum frame_runtime)r;
	return FRAME_NATIVE;
}

const char *frame_runtime_mapping(enum frame_runtime r)
{
	return column(r, false);
}

enum frame_runtime frame_runtime_of_mapping(const char *name)
{
	return name && *name == '[' ? runtime_of(name, false) : FRAME_NATIVE;
}

const char *frame_runtime_name(enum frame_runtime r)
{
	return column(r, true);
}

enum frame_runtime frame_runtime_of_name(const char *name)
{
	return runtime_of(name, true);
}
