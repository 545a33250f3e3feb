/* Allocations (firn record -e alloc), included by profile.bpf.c: its USDT program hands hits of
 * the otel_memory probes (libfirn-alloc.so's, or any library's that fires them) here by their
 * attachment cookie. alloc(ptr, size, weighted_bytes) comes only for a sampled allocation: its
 * stack is counted under alloc_objects (the objects it stands for: weight / size) and
 * alloc_space (the weighted bytes); free(ptr) only for a sampled pointer.
 * Live heap: a sampled allocation is also added to inuse_objects and inuse_space and remembered
 * in alloc_live by (process, pointer) with its stack and weight; its free takes the same values
 * back off the same key (counts are u64: the sum over a recording is what is still live, which
 * the profile reads as int64) and forgets it. A process that exits keeps what it never freed
 * (its leak) and user space forgets its alloc_live entries (FIRN_ALLOC_EXITED). A full
 * alloc_live is counted (FIRN_ALLOC_LIVE_FULL): that allocation counts under alloc_* only.
 * What cannot be stored is counted (enum firn_alloc_stat), never dropped silently. The ids and
 * counters are shared with user space (lib/record/event_table.c, lib/source/sampler.c). */
#ifndef FIRN_BPF_ALLOC_H
#define FIRN_BPF_ALLOC_H

/* Event numbers (firn_key.event; the probes' cookies): above the toy's, below the GPU ones. */
#define FIRN_EVENT_ALLOC_OBJECTS 0xffffffe8u /* the alloc probe's cookie too */
#define FIRN_EVENT_ALLOC_SPACE 0xffffffe9u
#define FIRN_EVENT_ALLOC_FREE 0xffffffeau    /* the free probe's cookie only */
#define FIRN_EVENT_INUSE_OBJECTS 0xffffffebu
#define FIRN_EVENT_INUSE_SPACE 0xffffffecu

#define FIRN_ALLOC_LIVE_MAX 65536 /* sampled allocations followed to their free, all processes */

/* A sampled allocation followed to its free (alloc_live's key and value). */
struct firn_alloc_ptr {
	__u32 pid;
	__u32 pad;
	__u64 ptr;
};
struct firn_alloc_live {
	__u64 ustack; /* its stack id (stored) */
	__u64 bytes, objects; /* what it added to inuse_space, inuse_objects */
	__u32 tid;    /* the allocating thread (of the inuse key) */
	__u32 pad;
};

/* Indexes of the alloc_stats counters (struct alloc_stats in user space, same order). */
enum firn_alloc_stat {
	FIRN_ALLOC_SAMPLED = 0, /* alloc probe hits of targets */
	FIRN_ALLOC_BYTES,       /* their weighted bytes: the estimated bytes allocated */
	FIRN_ALLOC_FREES,       /* free probe hits of targets (sampled pointers freed) */
	FIRN_ALLOC_LOST,        /* a stack or count not stored (counts or stack map full) */
	FIRN_ALLOC_LIVE,        /* sampled allocations followed (in alloc_live) */
	FIRN_ALLOC_LIVE_FULL,   /* ... not followed: alloc_live full (overflow) */
	FIRN_ALLOC_FREED,       /* followed allocations freed (taken off inuse) */
	FIRN_ALLOC_UNTRACKED,   /* free hits of pointers not followed (a double free, overflow) */
	FIRN_ALLOC_EXITED,      /* followed allocations of processes that exited (user space) */
	FIRN_ALLOC_LIVE_BYTES,  /* bytes of those followed (freed or not) */
	FIRN_ALLOC_FREED_BYTES, /* bytes of those freed */
	FIRN_ALLOC_NR,
};

#ifdef __bpf__
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FIRN_ALLOC_NR);
	__type(key, __u32);
	__type(value, __u64);
} alloc_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FIRN_ALLOC_LIVE_MAX);
	__type(key, struct firn_alloc_ptr);
	__type(value, struct firn_alloc_live);
} alloc_live SEC(".maps");

/* Adds n to an allocation counter of this CPU. */
static __always_inline void count_alloc(__u32 stat, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&alloc_stats, &stat);

	if (v)
		*v += n;
}

/* Adds bytes and objects (negated: taken back) to the inuse counts of key's stack. */
static __always_inline void alloc_inuse(struct firn_key *key, __u64 bytes, __u64 objects)
{
	key->event = FIRN_EVENT_INUSE_OBJECTS;
	if (!count_stacks(key, NULL, NULL, objects, &alloc_stats, FIRN_ALLOC_LOST, FIRN_ALLOC_LOST))
		return;
	key->event = FIRN_EVENT_INUSE_SPACE;
	count_stacks(key, NULL, NULL, bytes, &alloc_stats, FIRN_ALLOC_LOST, FIRN_ALLOC_LOST);
}

/* Follows a sampled allocation (its key's stack stored) to its free: remembered in alloc_live,
 * added to the inuse counts; a full map is counted. */
static __always_inline void alloc_follow(struct pt_regs *ctx, struct firn_key *key, __u64 bytes,
					 __u64 objects)
{
	long ptr = 0;

	if (bpf_usdt_arg(ctx, 0, &ptr))
		return;
	struct firn_alloc_ptr k = { .pid = key->pid, .ptr = (__u64)ptr };
	struct firn_alloc_live v = { .ustack = key->ustack, .bytes = bytes, .objects = objects,
				     .tid = key->tid };
	if (bpf_map_update_elem(&alloc_live, &k, &v, BPF_NOEXIST)) {
		count_alloc(FIRN_ALLOC_LIVE_FULL, 1);
		return;
	}
	count_alloc(FIRN_ALLOC_LIVE, 1);
	count_alloc(FIRN_ALLOC_LIVE_BYTES, bytes);
	alloc_inuse(key, bytes, objects);
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
	if (count_stacks(&key, user, NULL, (__u64)weight, &alloc_stats, FIRN_ALLOC_LOST,
			 FIRN_ALLOC_LOST))
		alloc_follow(ctx, &key, (__u64)weight, objs ? objs : 1);
	return 0;
}

/* The free probe: a sampled pointer freed; a followed one is taken off the inuse counts of its
 * allocation's stack and forgotten. */
static __always_inline int alloc_freed(struct pt_regs *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	long ptr = 0;

	if (!is_target(pid) || bpf_usdt_arg(ctx, 0, &ptr))
		return 0;
	count_alloc(FIRN_ALLOC_FREES, 1);
	struct firn_alloc_ptr k = { .pid = pid, .ptr = (__u64)ptr };
	struct firn_alloc_live *v = bpf_map_lookup_elem(&alloc_live, &k);
	if (!v) {
		count_alloc(FIRN_ALLOC_UNTRACKED, 1);
		return 0;
	}
	struct firn_key key = { .pid = pid, .tid = v->tid, .ustack = v->ustack };
	__u64 bytes = v->bytes, objects = v->objects;
	if (bpf_map_delete_elem(&alloc_live, &k)) /* a racing free of the same pointer took it */
		return 0;
	count_alloc(FIRN_ALLOC_FREED, 1);
	count_alloc(FIRN_ALLOC_FREED_BYTES, bytes);
	alloc_inuse(&key, -bytes, -objects);
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
