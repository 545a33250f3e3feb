/* The stub walker: the model of a runtime's BPF walker, reached by its tag alone. For a process
 * user space told it of (a walker_procs entry of FIRN_FRAME_KIND_STUB holding struct
 * firn_stub_proc) it adds one frame, FIRN_FRAME(FIRN_FRAME_KIND_STUB, magic), at the root end of
 * each sample's user stack and counts it in walker_stats by its tag. The shipped firn never sets
 * its bit in sampler_opts.walkers, so no recording of it loads or runs it; the tests' firn-toy
 * does (tests/toy/stub_walker.h, its runtime; tests/cli/test_stub_walker.sh records it).
 * cpu-clock samples reach it as a program of the unwinders array (on_sample_stub, its
 * bpf/walkers.h row); off-CPU waits through wait_begins (stub_frames): take_stacks, and so
 * usdt, cuda and alloc stacks, has no room in on_usdt's verifier budget for it. */
#ifndef FIRN_BPF_STUB_H
#define FIRN_BPF_STUB_H

/* Its tag: a frame kind no shipped runtime uses. */
#define FIRN_FRAME_KIND_STUB 14

/* What user space tells it of a process (sample_source_set_proc by its tag). */
struct firn_stub_proc {
	__u32 magic; /* its frames' payload */
	__u32 pid;
};

/* Its counters in walker_stats (at most FIRN_WALKER_STATS). */
enum firn_stub_stat {
	FIRN_STUB_ADDED = 0, /* frames added to a sample's stack */
	FIRN_STUB_FULL,      /* samples of a told process whose stack had no room left */
	FIRN_STUB_NR,
};

#ifdef __bpf__
/* Adds the stub's frame to stack s of the current process, where user space told it of it. */
static __always_inline void stub_frames(struct firn_stack *s)
{
	if (!WALKER_ON(FIRN_FRAME_KIND_STUB)) /* first: off, the verifier drops the rest */
		return;
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct firn_stub_proc *p = pid ? walker_proc(FIRN_FRAME_KIND_STUB, pid) : NULL;

	if (!p)
		return;
	__u32 len = s->len;
	if (len >= FIRN_MAX_FRAMES) {
		walker_count(FIRN_FRAME_KIND_STUB, FIRN_STUB_FULL);
		return;
	}
	s->ips[len] = FIRN_FRAME(FIRN_FRAME_KIND_STUB, p->magic);
	s->len = len + 1;
	walker_count(FIRN_FRAME_KIND_STUB, FIRN_STUB_ADDED);
}

static __always_inline int count_sample(__u64 ustack);

/* Its program (slot FIRN_FRAME_KIND_STUB of the unwinders array): the frame added to the native
 * stack on_sample left in scratch slot 0, then the sample counted. */
SEC("perf_event")
int on_sample_stub(struct bpf_perf_event_data *ctx)
{
	__u32 zero = 0;
	struct firn_stack *user = bpf_map_lookup_elem(&scratch, &zero);

	if (user && user->len)
		stub_frames(user);
	return count_sample(0);
}
#endif
#endif
