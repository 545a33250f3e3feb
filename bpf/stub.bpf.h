/* The stub walker: the model of a runtime's BPF walker, its own file plus its row in
 * bpf/walkers.h. For a process user space told it of (a walker_procs entry of
 * FIRN_FRAME_KIND_STUB holding struct firn_stub_proc) its stack hook adds one frame,
 * FIRN_FRAME(FIRN_FRAME_KIND_STUB, magic), at the root end of each user stack every event takes
 * and counts it in walker_stats by its tag; cpu-clock samples run it in its program,
 * on_sample_stub (its row's FIRN_PROG, made by bpf/profile.bpf.c). The shipped firn never sets
 * its bit in sampler_opts.walkers, so no recording of it loads or runs it; the tests' firn-toy
 * does (tests/toy/stub_walker.h, its runtime; tests/cli/test_stub_walker.sh records it). */
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
/* Its stack hook (bpf/walkers.h): adds its frame at the root end of user stack s of the current
 * process, where user space told it of it. A global function: every event's stack taker calls
 * it, the verifier checks it once. Returns 0: s holds the stack. */
FIRN_HOOK __u64 stub_stack(struct firn_stack *s, __u32 big)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct firn_stub_proc *p = pid ? walker_proc(FIRN_FRAME_KIND_STUB, pid) : NULL;

	if (!p || !s)
		return 0;
	__u32 len = s->len;
	if (len >= FIRN_MAX_FRAMES) {
		walker_count(FIRN_FRAME_KIND_STUB, FIRN_STUB_FULL);
		return 0;
	}
	s->ips[len] = FIRN_FRAME(FIRN_FRAME_KIND_STUB, p->magic);
	s->len = len + 1;
	walker_count(FIRN_FRAME_KIND_STUB, FIRN_STUB_ADDED);
	return 0;
}
#endif
#endif
