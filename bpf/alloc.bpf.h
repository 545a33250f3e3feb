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

/* Follows a sampled allocation at ptr (its key's stack stored) to its free: remembered in
 * alloc_live, added to the inuse counts; a full map is counted. */
static __always_inline void alloc_follow(struct firn_key *key, __u64 ptr, __u64 bytes,
					 __u64 objects)
{
	struct firn_alloc_ptr k = { .pid = key->pid, .ptr = ptr };
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

/* A sampled allocation of size bytes at ptr standing for weight bytes (the USDT probe's or the
 * uprobes' of a target): the allocating stack counted under alloc_objects and alloc_space. */
static __always_inline void alloc_count(struct pt_regs *ctx, __u64 ptr, __u64 size, __u64 weight)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id;
	struct firn_stack *user, *kernel;

	count_alloc(FIRN_ALLOC_SAMPLED, 1);
	count_alloc(FIRN_ALLOC_BYTES, weight);
	struct task_struct *task = bpf_get_current_task_btf();
	announce(pid);
	note_comm(tid, task);
	__u64 big = take_stacks(ctx, true, pid, task, &user, &kernel); /* in big_stacks, or 0 */
	struct firn_key key = { .pid = pid, .tid = tid, .event = FIRN_EVENT_ALLOC_OBJECTS,
				.ustack = big };
	__u64 objs = size ? (weight + size / 2) / size : 1;
	if (!count_stacks(&key, user, NULL, objs ? objs : 1, &alloc_stats, FIRN_ALLOC_LOST,
			  FIRN_ALLOC_LOST))
		return;
	key.event = FIRN_EVENT_ALLOC_SPACE; /* the same stack, stored already */
	if (count_stacks(&key, user, NULL, weight, &alloc_stats, FIRN_ALLOC_LOST, FIRN_ALLOC_LOST))
		alloc_follow(&key, ptr, weight, objs ? objs : 1);
}

/* The alloc probe (otel_memory:alloc(ptr, size, weighted_bytes)) of a target. */
static __always_inline int alloc_sampled(struct pt_regs *ctx)
{
	long ptr = 0, size = 0, weight = 0;

	if (!is_target(bpf_get_current_pid_tgid() >> 32) || bpf_usdt_arg(ctx, 0, &ptr) ||
	    bpf_usdt_arg(ctx, 1, &size) || bpf_usdt_arg(ctx, 2, &weight))
		return 0;
	alloc_count(ctx, (__u64)ptr, (__u64)size, (__u64)weight);
	return 0;
}

/* A free of ptr by process pid (a target): a followed one is taken off the inuse counts of its
 * allocation's stack and forgotten; any other is counted as untracked if count_untracked. */
static __always_inline void alloc_free_ptr(__u32 pid, __u64 ptr, bool count_untracked)
{
	struct firn_alloc_ptr k = { .pid = pid, .ptr = ptr };
	struct firn_alloc_live *v = bpf_map_lookup_elem(&alloc_live, &k);

	if (!v) {
		if (count_untracked)
			count_alloc(FIRN_ALLOC_UNTRACKED, 1);
		return;
	}
	struct firn_key key = { .pid = pid, .tid = v->tid, .ustack = v->ustack };
	__u64 bytes = v->bytes, objects = v->objects;
	if (bpf_map_delete_elem(&alloc_live, &k)) /* a racing free of the same pointer took it */
		return;
	count_alloc(FIRN_ALLOC_FREED, 1);
	count_alloc(FIRN_ALLOC_FREED_BYTES, bytes);
	alloc_inuse(&key, -bytes, -objects);
}

/* The free probe: a sampled pointer freed. */
static __always_inline int alloc_freed(struct pt_regs *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	long ptr = 0;

	if (!is_target(pid) || bpf_usdt_arg(ctx, 0, &ptr))
		return 0;
	count_alloc(FIRN_ALLOC_FREES, 1);
	alloc_free_ptr(pid, (__u64)ptr, true);
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

/* ---- uprobe mode: the malloc family's own functions, sampled here ----
 * Uprobes on entry see (size); the uretprobe on return sees the pointer. The Poisson rule runs
 * in BPF: a per-thread countdown of bytes (alloc_left), an exponential draw of mean alloc_rate
 * when it runs out, and the weight S / (1 - e^(-S/R)), in integers (bpf/alloc_int.h).
 * An unsampled call costs its traps, a hash lookup and an update; a sampled one is held in
 * alloc_pending by thread until its return, then counted as the USDT alloc probe's. */
const volatile __u64 alloc_rate = 524288; /* --alloc-rate: mean bytes between samples */

#include "alloc_int.h"

#define FIRN_ALLOC_THREADS 16384 /* threads with a countdown (LRU: ended ones make room) */

/* A sampled call in progress (alloc_pending's value, by thread). */
struct firn_alloc_call {
	__u64 size, weight;
	__u64 memptr; /* posix_memalign: where the pointer is written (0: the return value) */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FIRN_ALLOC_THREADS);
	__type(key, __u32);
	__type(value, __s64);
} alloc_left SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct firn_alloc_call);
} alloc_pending SEC(".maps");

/* Bytes to the next sample: an exponential draw of mean alloc_rate (bpf/alloc_int.h). */
static __always_inline __s64 alloc_gap(void)
{
	return (__s64)alloc_int_gap(bpf_get_prandom_u32(), alloc_rate);
}

/* The weight of a sampled allocation of size bytes at alloc_rate (bpf/alloc_int.h). */
static __always_inline __u64 alloc_weight(__u64 size)
{
	return alloc_int_weight(size, alloc_rate);
}

/* An allocation of size bytes begins in a target (memptr: posix_memalign's out pointer, else
 * 0): the thread's countdown runs down by size; when it runs out the call is sampled, held in
 * alloc_pending with its weight until its return (alloc_ret), and a new countdown drawn. */
static __always_inline void alloc_enter(__u64 size, __u64 memptr)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;

	if (!size || !is_target(id >> 32))
		return;
	__s64 *left = bpf_map_lookup_elem(&alloc_left, &tid);
	__s64 rest = (left ? *left : alloc_gap()) - (__s64)size;
	bool sampled = rest <= 0;
	if (sampled)
		rest = alloc_gap(); /* memoryless: from the end of this allocation */
	if (left)
		*left = rest;
	else
		bpf_map_update_elem(&alloc_left, &tid, &rest, BPF_ANY);
	if (!sampled)
		return;
	struct firn_alloc_call c = { .size = size, .weight = alloc_weight(size), .memptr = memptr };
	bpf_map_update_elem(&alloc_pending, &tid, &c, BPF_ANY);
}

/* malloc(size), valloc(size), pvalloc(size). */
SEC("?uprobe")
int BPF_KPROBE(alloc_malloc, __u64 size)
{
	alloc_enter(size, 0);
	return 0;
}

/* calloc(n, size). */
SEC("?uprobe")
int BPF_KPROBE(alloc_calloc, __u64 n, __u64 size)
{
	alloc_enter(n * size, 0);
	return 0;
}

/* memalign(align, size) (aligned_alloc: its alias in glibc). */
SEC("?uprobe")
int BPF_KPROBE(alloc_memalign, __u64 align, __u64 size)
{
	alloc_enter(size, 0);
	return 0;
}

/* posix_memalign(memptr, align, size): the pointer is read from *memptr at the return. */
SEC("?uprobe")
int BPF_KPROBE(alloc_posix_memalign, __u64 memptr, __u64 align, __u64 size)
{
	alloc_enter(size, memptr);
	return 0;
}

/* realloc(ptr, size): a free of ptr and an allocation of size. glibc's realloc(NULL, n) calls
 * malloc and realloc(p, 0) free, whose own probes count them. */
SEC("?uprobe")
int BPF_KPROBE(alloc_realloc, __u64 ptr, __u64 size)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;

	if (!ptr || !size || !is_target(pid))
		return 0;
	alloc_free_ptr(pid, ptr, false);
	alloc_enter(size, 0);
	return 0;
}

/* free(ptr): a followed pointer is taken off the live heap. Frees of pointers not sampled are
 * most frees here, so they are not counted as untracked (nor a double free told apart). */
SEC("?uprobe")
int BPF_KPROBE(alloc_free, __u64 ptr)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;

	if (ptr && is_target(pid))
		alloc_free_ptr(pid, ptr, false);
	return 0;
}

/* The return of an allocating function: a sampled call's pointer, counted as the USDT alloc
 * probe's (a failed allocation is not). */
SEC("?uretprobe")
int BPF_KRETPROBE(alloc_ret, __u64 ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct firn_alloc_call *p = bpf_map_lookup_elem(&alloc_pending, &tid);

	if (!p)
		return 0;
	struct firn_alloc_call c = *p;
	__u64 ptr = ret;
	bpf_map_delete_elem(&alloc_pending, &tid);
	if (c.memptr && (ret || bpf_probe_read_user(&ptr, sizeof(ptr), (void *)c.memptr)))
		return 0;
	if (ptr)
		alloc_count(ctx, ptr, c.size, c.weight);
	return 0;
}
#endif

#endif
