/* Allocations (firn record -e alloc), included by profile.bpf.c: its USDT program hands hits of
 * the otel_memory probes (libfirn-alloc.so's, or any library's that fires them) here by their
 * attachment cookie. alloc(ptr, size, weighted_bytes) comes only for a sampled allocation: its
 * stack is counted under alloc_objects (the objects it stands for: weight / size) and
 * alloc_space (the weighted bytes); free(ptr) only for a sampled pointer. What cannot be stored
 * is counted (enum firn_alloc_stat), never dropped silently. The ids and counters are shared
 * with user space (lib/record/event_table.c). */
#ifndef FIRN_BPF_ALLOC_H
#define FIRN_BPF_ALLOC_H

/* Event numbers (firn_key.event; the probes' cookies): above the toy's, below the GPU ones. */
#define FIRN_EVENT_ALLOC_OBJECTS 0xffffffe8u /* the alloc probe's cookie too */
#define FIRN_EVENT_ALLOC_SPACE 0xffffffe9u
#define FIRN_EVENT_ALLOC_FREE 0xffffffeau    /* the free probe's cookie only */

/* Indexes of the alloc_stats counters (struct alloc_stats in user space, same order). */
enum firn_alloc_stat {
	FIRN_ALLOC_SAMPLED = 0, /* alloc probe hits of targets */
	FIRN_ALLOC_BYTES,       /* their weighted bytes: the estimated bytes allocated */
	FIRN_ALLOC_FREES,       /* free probe hits of targets (sampled pointers freed) */
	FIRN_ALLOC_LOST,        /* a stack or count not stored (counts or stack map full) */
	FIRN_ALLOC_NR,
};

#ifdef __bpf__
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FIRN_ALLOC_NR);
	__type(key, __u32);
	__type(value, __u64);
} alloc_stats SEC(".maps");

/* Adds n to an allocation counter of this CPU. */
static __always_inline void count_alloc(__u32 stat, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&alloc_stats, &stat);

	if (v)
		*v += n;
}

/* The alloc probe: the allocating stack counted under alloc_objects and alloc_space. */
static __always_inline int alloc_sampled(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id;
	struct firn_stack *user, *kernel;
	long size = 0, weight = 0;

	if (!is_target(pid) || bpf_usdt_arg(ctx, 1, &size) || bpf_usdt_arg(ctx, 2, &weight))
		return 0;
	count_alloc(FIRN_ALLOC_SAMPLED, 1);
	count_alloc(FIRN_ALLOC_BYTES, (__u64)weight);
	struct task_struct *task = bpf_get_current_task_btf();
	announce(pid);
	note_comm(tid, task);
	take_stacks(ctx, true, pid, task, &user, &kernel);
	struct firn_key key = { .pid = pid, .tid = tid, .event = FIRN_EVENT_ALLOC_OBJECTS,
				.ustack = python_big_id() };
	__u64 objs = size > 0 ? ((__u64)weight + (__u64)size / 2) / (__u64)size : 1;
	if (!count_stacks(&key, user, NULL, objs ? objs : 1, &alloc_stats, FIRN_ALLOC_LOST,
			  FIRN_ALLOC_LOST))
		return 0;
	key.event = FIRN_EVENT_ALLOC_SPACE; /* the same stack, stored already */
	count_stacks(&key, user, NULL, (__u64)weight, &alloc_stats, FIRN_ALLOC_LOST, FIRN_ALLOC_LOST);
	return 0;
}

/* The free probe: a sampled pointer freed. */
static __always_inline int alloc_freed(struct pt_regs *ctx)
{
	if (is_target(bpf_get_current_pid_tgid() >> 32))
		count_alloc(FIRN_ALLOC_FREES, 1);
	return 0;
}

/* Routes a hit of an otel_memory probe by its cookie; false for any other cookie. */
static __always_inline bool alloc_hit(struct pt_regs *ctx, __u32 cookie)
{
	if (cookie == FIRN_EVENT_ALLOC_OBJECTS)
		alloc_sampled(ctx);
	else if (cookie == FIRN_EVENT_ALLOC_FREE)
		alloc_freed(ctx);
	else
		return false;
	return true;
}
#endif

#endif
