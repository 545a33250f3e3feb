/* The runtime walkers of bpf/profile.bpf.c as user space loads them: a row per walker that has
 * more than its walker_procs entries and walker_stats counters (bpf/firn.h), which every walker
 * has and which the sampler reaches by tag alone. User space only (lib/source/sampler.c): the
 * sampler names no runtime, it reads this table. A walker inlined in the sampling programs and
 * without maps of its own (V8's, bpf/v8.bpf.h) needs no row. */
#ifndef FIRN_BPF_WALKERS_H
#define FIRN_BPF_WALKERS_H

#include <stdbool.h>

#include "firn.h"
#include "stub.bpf.h"
#include "golabels.bpf.h"

#define FIRN_WALKER_OWN_MAPS 2

struct firn_walker_row {
	unsigned tag;          /* its FIRN_FRAME_KIND_* */
	const char *what;      /* for messages: "the Python unwinder" */
	/* its program in the unwinders array (at its tag), tail-called by on_sample for a process
	 * that has a walker_procs entry of tag; NULL: none. A recording may load it late, when the
	 * first process needs it (sampler_opts.walkers_late), in an object of its own */
	const char *prog;
	/* maps only its walk uses: one entry unless it runs; a late object has its own */
	const char *own_maps[FIRN_WALKER_OWN_MAPS];
	const char *names;     /* its names by payload (__u64 key, a string value), or NULL */
	bool big_stacks;       /* its stacks may outgrow firn_stack: big_stacks is sized for it */
	bool defer_at_start;   /* off-CPU waits at the start are counted at their system call's
				* exit, where its frames can be read (bpf/offcpu_start.bpf.h) */
};

static const struct firn_walker_row firn_walkers[] = {
	{ .tag = FIRN_FRAME_KIND_PYTHON, .what = "the Python unwinder", .prog = "on_sample_python",
	  .own_maps = { "python_codes", "python_tstates" },
	  .big_stacks = true, .defer_at_start = true },
	{ .tag = FIRN_FRAME_KIND_GPU, .what = "the GPU kernels", .names = "gpu_names" },
	{ .tag = FIRN_FRAME_KIND_STUB, .what = "the stub walker", .prog = "on_sample_stub" },
	{ .tag = FIRN_GO_TAG, .what = "the Go labels walker", .prog = "on_sample_go",
	  .own_maps = { "go_ctxs", "go_scratch" } },
};
#define FIRN_NWALKERS (sizeof(firn_walkers) / sizeof(firn_walkers[0]))

#endif
