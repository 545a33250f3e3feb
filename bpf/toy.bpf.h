/* The toy event: the model of an event that is one row of lib/record/event_table.c plus its BPF
 * program. It counts every fork of a target process (the parent's stack, one hit each) and its
 * forks in a counter the row names; the shipped table has no row for it, so no recording loads
 * it: the tests' build of the table does (tests/toy/toy_event.h, tests/cli/test_toy_event.sh).
 * A new event's program follows it: a '?' section (loaded only when a row names the program),
 * count_hit for a stack, a per-CPU array of u64 for the row's counters. */
#ifndef FIRN_BPF_TOY_H
#define FIRN_BPF_TOY_H

/* Its event number, one of firn_key.event's (bpf/firn.h: below the GPU ones, far above any
 * USDT probe's). */
#define FIRN_EVENT_TOY 0xffffffe0u

#ifdef __bpf__
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} toy_counts SEC(".maps");

/* A target forked: a hit with its stacks, and one more fork counted. */
SEC("?raw_tp/sched_process_fork")
int BPF_PROG(on_toy, struct task_struct *parent, struct task_struct *child)
{
	__u32 zero = 0, pid = bpf_get_current_pid_tgid() >> 32;
	__u64 *forks = bpf_map_lookup_elem(&toy_counts, &zero);

	if (!is_target(pid))
		return 0;
	if (forks)
		*forks += 1;
	return count_hit(ctx, false, FIRN_EVENT_TOY);
}
#endif
#endif
