/* What a frame is: decides its folded suffix, its flame graph color and the --no-kernel filter.
 * Its own header so that the resolvers (lib/symbolize/symbolize.h, lib/model/resolver.h) can say what their
 * frames are without knowing the profile model. */
#ifndef FIRN_FRAME_KIND_H
#define FIRN_FRAME_KIND_H

enum frame_kind {
	FRAME_USER = 0,
	FRAME_KERNEL,   /* "_[k]" */
	FRAME_JIT,      /* "_[j]" */
	FRAME_INLINE,   /* "_[i]": a Line of a location that is not its outermost */
};

/* Which runtime a mapping's frames come from (lib/runtimes/runtime.h): carried on the profile mapping
 * (struct profile_mapping.runtime), so that writers tell interpreter and GPU frames apart
 * (their flame graph colours) without comparing names. Their locations stay FRAME_USER. */
enum frame_runtime {
	FRAME_NATIVE = 0, /* an ELF file's, the kernel's, a JIT's */
	FRAME_PYTHON,     /* CPython functions (lib/runtimes/pyframes.h) */
	FRAME_GPU,        /* GPU kernels and copies (lib/runtimes/gpuframes.h) */
	FRAME_JAVASCRIPT, /* JavaScript functions read from V8 (lib/runtimes/v8frames.h) */
	FRAME_JAVA,       /* Java methods read from HotSpot (lib/runtimes/hotspot_runtime.h) */
	FRAME_RUNTIMES
};

/* The profile mapping name of a runtime's frames ("[python]"; "" for FRAME_NATIVE): the one
 * table of them, which a saved profile is read back by. */
const char *frame_runtime_mapping(enum frame_runtime r);
/* The runtime whose mapping is named name (FRAME_NATIVE: none; name may be NULL). */
enum frame_runtime frame_runtime_of_mapping(const char *name);
/* A runtime's name as users type it ("python", "javascript"; "" for FRAME_NATIVE): the same
 * table's column. */
const char *frame_runtime_name(enum frame_runtime r);
/* The runtime named name ("javascript"), or FRAME_NATIVE when none is (name may be NULL). */
enum frame_runtime frame_runtime_of_name(const char *name);

#endif
