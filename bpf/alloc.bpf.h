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
	take_stacks(ctx, true, pid, task, &user, &kernel);
	struct firn_key key = { .pid = pid, .tid = tid, .event = FIRN_EVENT_ALLOC_OBJECTS,
				.ustack = python_big_id() };
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
 * when it runs out, and the weight S / (1 - e^(-S/R)), in integers (alloc_gap, alloc_weight).
 * An unsampled call costs its traps, a hash lookup and an update; a sampled one is held in
 * alloc_pending by thread until its return, then counted as the USDT alloc probe's. */
const volatile __u64 alloc_rate = 524288; /* --alloc-rate: mean bytes between samples */

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

/* 2^(-i/16) and log2(1 + i/64) in Q30 (round(x * 2^30)): the weights' exponentials and the
 * draws' logarithms, in integers (BPF has no floating point). */
static const __u64 exp2_neg16[16] = {
	1073741824, 1028218693, 984625594, 942880699, 902905651, 864625413, 827968132, 792865000,
	759250125, 727060411, 696235434, 666717336, 638450708, 611382493, 585461881, 560640218,
};
static const __u64 log2_1p64[65] = {
	0, 24017256, 47667823, 70962728, 93912511, 116527248, 138816582, 160789745, 182455581,
	203822568, 224898839, 245692198, 266210141, 286459867, 306448299, 326182095, 345667660,
	364911162, 383918542, 402695523, 421247625, 439580170, 457698295, 475606957, 493310944,
	510814882, 528123241, 545240343, 562170370, 578917365, 595485245, 611877800, 628098702,
	644151509, 660039669, 675766525, 691335320, 706749198, 722011213, 737124328, 752091421,
	766915285, 781598637, 796144114, 810554283, 824831638, 838978604, 852997541, 866890747,
	880660455, 894308843, 907838029, 921250079, 934547002, 947730758, 960803257, 973766362,
	986621888, 999371606, 1012017244, 1024560487, 1037002979, 1049346328, 1061592099, 1073741824,
};
#define Q30 (1ULL << 30)
#define LN2_Q28 186065280ULL   /* ln 2 * 2^28 */
#define LN2_Q30 744261118ULL   /* ln 2 * 2^30 */
#define LOG2E_Q28 387270501ULL /* log2 e * 2^28 */

/* The whole part of log2(v) in Q30 for v in [1, 2^32]: the top bit's place (alloc_log2_frac
 * adds the mantissa's). */
static __always_inline __u64 alloc_log2_q30(__u64 v)
{
	__u64 k = 0;

	if (v >> 32)
		return 32 * Q30;
	if (v >> 16) { v >>= 16; k += 16; }
	if (v >> 8) { v >>= 8; k += 8; }
	if (v >> 4) { v >>= 4; k += 4; }
	if (v >> 2) { v >>= 2; k += 2; }
	if (v >> 1) k += 1;
	return k * Q30;
}

/* log2 of v's mantissa (v's top bit at place k < 32) in Q30: the 64-step table, linearly
 * interpolated (at most 4.4e-5 under the true value: log2 is concave). */
static __always_inline __u64 alloc_log2_frac(__u64 v, __u64 k)
{
	__u64 f = ((v << (32 - k)) & 0xffffffffULL); /* the fraction below the top bit, Q32 */
	__u32 i = (__u32)(f >> 26) & 63;
	__u64 r = f & ((1ULL << 26) - 1);

	return log2_1p64[i] + (((log2_1p64[i + 1] - log2_1p64[i]) * r) >> 26);
}

/* Bytes to the next sample: an exponential draw of mean alloc_rate, -ln(u) * R with u = (a
 * random 32-bit value + 1) / 2^32, in integers (mean within 1e-4 of R); at least 1. */
static __always_inline __s64 alloc_gap(void)
{
	__u64 v = (__u64)bpf_get_prandom_u32() + 1;
	__u64 lg = alloc_log2_q30(v);

	if (lg < 32 * Q30)
		lg += alloc_log2_frac(v, lg >> 30);
	__u64 nl = ((32 * Q30 - lg) * LN2_Q28) >> 28; /* -ln u, Q30 */
	__u64 gap = ((nl >> 15) * alloc_rate) >> 15;
	return gap ? (__s64)gap : 1;
}

/* 1 - e^(-x) in Q30 for x = xq / 2^30 in [1/8, 32): e^(-x) = 2^(-y), y = x log2 e, as a power
 * of two, the table's 2^(-i/16) and a three-term series of the rest (error under 2e-7). */
static __always_inline __u64 alloc_one_minus_exp(__u64 xq)
{
	__u64 y = (xq * LOG2E_Q28) >> 28, k = y >> 30, f = y & (Q30 - 1);
	__u64 t = ((f & ((1ULL << 26) - 1)) * LN2_Q30) >> 30; /* the rest, times ln 2: < 0.044 */
	__u64 t2 = (t * t) >> 30, t3 = (t2 * t) >> 30;
	__u64 et = Q30 - t + t2 / 2 - t3 / 6;
	__u64 e = (exp2_neg16[(f >> 26) & 15] * et) >> 30;

	return Q30 - (k < 63 ? e >> k : 0);
}

/* The weight of a sampled allocation of size bytes: size / (1 - e^(-size/R)), as the
 * preloaded library's alloc_poisson_weight, in integers (relative error under 1e-6): for
 * size < R/8 the series R + S/2 + S^2/(12R); from 32 R on, size itself. */
static __always_inline __u64 alloc_weight(__u64 size)
{
	__u64 r = alloc_rate, sh = 0;

	if (r <= 1 || !size || size >= 32 * r)
		return size;
	if (size * 8 < r)
		return r + size / 2 + ((size * ((size << 24) / r)) / 12 >> 24);
	if (size >> 33) /* an allocation of 8 GiB or more: fewer bits of each */
		sh = 12;
	__u64 p = alloc_one_minus_exp(((size >> sh) << 30) / (r >> sh));
	return p ? (size / p) * Q30 + ((size % p) * Q30 + p / 2) / p : size;
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
