/* Resolvers of frames that are not addresses in an ELF file: an interpreter's functions, GPU
 * kernels. Such frames reach user space as tagged values in a user stack (bpf/firn.h,
 * FIRN_FRAME(kind, payload)); the capture asks the resolver registered for the value's kind to
 * turn it into plain frames, and interns them itself into a mapping of the resolver's name, so a
 * resolver never sees a profile (the symbolizer's split, issue 14: resolve to plain values, the
 * caller interns).
 * A resolver is called on the recorder's thread. The process may be gone by the time its frames
 * are resolved: a resolver that needs the live process reads what it needs earlier (a runtime's
 * on_stack and on_code, lib/runtimes/runtime.h) and caches it. */
#ifndef FIRN_RESOLVER_H
#define FIRN_RESOLVER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/frame_kind.h"

/* One function of a resolved frame (innermost first when a value stands for several). The
 * strings stay valid while the resolver lives. */
struct resolved_frame {
	const char *name;        /* as shown (demangled, qualified) */
	const char *system_name; /* as the runtime names it (NULL: name) */
	const char *file;        /* source file, NULL when unknown */
	uint32_t line;           /* 0 when unknown */
};

/* One label of a sample's label context (bpf/firn.h's FIRN_CTX): strings valid while the
 * resolver lives. */
struct resolved_label {
	const char *key, *value;
};

struct frame_resolver {
	const char *mapping;     /* the profile mapping its frames go in (frame_runtime_mapping) */
	enum frame_kind kind;    /* how its frames are marked in the profile */
	enum frame_runtime runtime; /* what its mapping is marked with */
	/* Fills up to max frames for tagged value v of process pid; returns how many (0: cannot be
	 * resolved, the frame becomes "[unknown]" in the mapping), or -errno (the recording cannot
	 * go on: -ENOMEM). */
	int (*resolve)(void *ctx, pid_t pid, uint64_t v, struct resolved_frame *out, int max);
	/* Fills up to max labels for the label context id (FIRN_CTX_IDOF of a sample's ctx whose
	 * tag is the resolver's) of process pid; returns how many (0: none known, the sample is
	 * left without them) or -errno (-ENOMEM). NULL: the runtime makes no label contexts. */
	int (*labels)(void *ctx, pid_t pid, uint32_t id, struct resolved_label *out, int max);
	/* Fills up to max labels of process pid itself, on every sample of it whatever its
	 * context (OpenTelemetry's process context: service.name, its attributes); how many (0:
	 * none) or -errno. NULL: the runtime has none. */
	int (*proc_labels)(void *ctx, pid_t pid, struct resolved_label *out, int max);
	void *ctx;
};

/* The kind of a user-stack value: 0 for a native address, else FIRN_FRAME_KIND_*. */
unsigned resolver_kind_of(uint64_t v);
/* The payload of a tagged value (its low 56 bits). */
uint64_t resolver_payload(uint64_t v);

#endif
