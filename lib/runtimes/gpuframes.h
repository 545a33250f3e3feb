/* GPU frames: the resolver of the tagged frames the CUDA probes push at the leaf end of a
 * launching stack (bpf/cuda.bpf.h): a kernel, by the hash of its name (the name is read from the
 * sample source's kernel map, demangled on request), or a copy by direction ("[memcpy HtoD]").
 * Frames go in the FRAME_GPU mapping. It is the runtime runtime_gpu (lib/runtimes/runtime.h) of the
 * registry, running with --cuda. */
#ifndef FIRN_GPUFRAMES_H
#define FIRN_GPUFRAMES_H

#include <stdbool.h>

#include "model/resolver.h"
#include "runtimes/runtime.h"
#include "source/sample_source.h"

struct gpu_frames;

/* A resolver reading names from ss (borrowed; must outlive it). NULL + errno (ENOMEM). */
struct gpu_frames *gpu_frames_new(struct sample_source *ss, bool demangle);
void gpu_frames_free(struct gpu_frames *g);
/* The frame_resolver of g (for capture_set_resolver, kind FIRN_FRAME_KIND_GPU). */
struct frame_resolver gpu_frames_resolver(struct gpu_frames *g);
/* The GPU frames as a runtime (lib/runtimes/runtime.h): tag FIRN_FRAME_KIND_GPU, opt_in: running
 * when the recording turns "gpu" on (record --cuda). */
extern const struct runtime_ops runtime_gpu;
/* The name of a copy of CUPTI kind (CUpti_ActivityMemcpyKind): "HtoD", ...; "unknown" otherwise. */
const char *gpu_memcpy_kind_name(unsigned kind);

#endif
