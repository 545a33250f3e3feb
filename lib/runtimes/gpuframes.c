/* GPU frames: kernel names by hash and copy directions (see gpuframes.h). */
#include "runtimes/gpuframes.h"

#include <errno.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../bpf/firn.h"
#include "base/demangle.h"
#include "base/vec.h"

struct gpu_name {
	uint64_t payload;
	char *name, *system_name; /* as shown; as CUPTI gives it (mangled) */
};

struct gpu_frames {
	struct sample_source *ss;
	bool demangle;
	struct gpu_name *names; /* resolved so far (the capture asks once per value) */
	size_t n, cap;
	char memcpy_names[11][24];
};

const char *gpu_memcpy_kind_name(unsigned kind)
{
	static const char *const names[] = { "unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
					     "AtoD", "DtoA", "DtoD", "HtoH", "PtoP" };

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "unknown";
}

struct gpu_frames *gpu_frames_new(struct sample_source *ss, bool demangle)
{
	struct gpu_frames *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->ss = ss;
	g->demangle = demangle;
	for (unsigned k = 0; k < 11; k++)
		snprintf(g->memcpy_names[k], sizeof(g->memcpy_names[k]), "[memcpy %s]",
			 gpu_memcpy_kind_name(k));
	return g;
}

void gpu_frames_free(struct gpu_frames *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n; i++)
		FREE_ALL(g->names[i].name, g->names[i].system_name);
	FREE_ALL(g->names, g);
}

/* The kernel named by payload, looked up once and kept; NULL when unknown (or out of memory). */
static const struct gpu_name *kernel_name(struct gpu_frames *g, uint64_t payload)
{
	char buf[FIRN_GPU_NAME_LEN];

	for (size_t i = 0; i < g->n; i++)
		if (g->names[i].payload == payload)
			return &g->names[i];
	if (sample_source_walker_name(g->ss, FIRN_FRAME_KIND_GPU, payload, buf, sizeof(buf)) || !*buf)
		return NULL;
	if (VEC_GROW(g->names, g->cap, g->n + 1))
		return NULL;
	struct gpu_name *n = &g->names[g->n];
	n->payload = payload;
	n->system_name = strdup(buf);
	n->name = g->demangle && demangle_candidate(buf) ? demangle_name(buf) : NULL;
	if (!n->name)
		n->name = strdup(buf);
	if (!n->name || !n->system_name) {
		free(n->name);
		free(n->system_name);
		return NULL;
	}
	return &g->names[g->n++];
}

/* frame_resolver.resolve: one frame, the kernel's name or the copy's direction. */
static int resolve(void *ctx, pid_t pid, uint64_t v, struct resolved_frame *out, int max)
{
	struct gpu_frames *g = ctx;
	uint64_t payload = resolver_payload(v);

	(void)pid;
	if (max < 1)
		return 0;
	memset(out, 0, sizeof(*out));
	if (payload & FIRN_GPU_MEMCPY_FRAME) {
		unsigned kind = payload & 0xff;
		out->name = g->memcpy_names[kind < 11 ? kind : 0];
		return 1;
	}
	const struct gpu_name *n = kernel_name(g, payload);
	if (!n)
		return 0;
	out->name = n->name;
	out->system_name = n->system_name;
	return 1;
}

struct frame_resolver gpu_frames_resolver(struct gpu_frames *g)
{
	return (struct frame_resolver){ .mapping = frame_runtime_mapping(FRAME_GPU),
					.kind = FRAME_USER, .runtime = FRAME_GPU, .resolve = resolve,
					.ctx = g };
}

/* ---- runtime_gpu: the ops (lib/runtimes/runtime.h) ---- */

/* The state of a --cuda recording (names from the host's sample source). */
static struct runtime *rt_new(const struct runtime_host *h)
{
	struct gpu_frames *g = gpu_frames_new(h->ss, h->demangle);
	if (!g)
		errno = ENOMEM;
	return (struct runtime *)g;
}

static void rt_free(struct runtime *rt)
{
	gpu_frames_free((struct gpu_frames *)rt);
}

static int rt_resolve(struct runtime *rt, pid_t pid, uint64_t v, struct resolved_frame *out,
		      int max)
{
	return resolve(rt, pid, v, out, max);
}

const struct runtime_ops runtime_gpu = {
	.name = "gpu", .opt_in = true, .tag = FIRN_FRAME_KIND_GPU, .frames = FRAME_GPU,
	.new = rt_new, .free = rt_free, .resolve = rt_resolve,
};
