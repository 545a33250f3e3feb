/* GPU kernels (firn record --cuda), included at the end of profile.bpf.c: its USDT program hands
 * hits of libfirn-cuda.so's probes here by their attachment cookie (FIRN_EVENT_GPU_*).
 * launch: the launching CPU stack is counted under gpu_launches and remembered by (process,
 * CUPTI correlation id); kernel: its run time is added under gpu_time to that stack with the kernel
 * as a leaf frame (FIRN_FRAME_KIND_GPU, the hash of its name; the name is kept in gpu_names for
 * user space); memcpy: its time under a one-frame stack naming the direction (the library reports
 * no launch for copies, so there is no CPU stack to give them). Whatever cannot be matched is
 * counted (enum firn_gpu_stat), never dropped silently. */

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FIRN_GPU_MAX_LAUNCHES);
	__type(key, struct firn_gpu_corr);
	__type(value, struct firn_gpu_launch);
} gpu_launches SEC(".maps");

/* Kernel names by their hash (the payload of their frames). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, struct firn_gpu_name);
} gpu_names SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FIRN_GPU_NR);
	__type(key, __u32);
	__type(value, __u64);
} gpu_stats SEC(".maps");

/* Scratch for a launch record and a name (too large for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct firn_gpu_launch);
} gpu_launch_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct firn_gpu_name);
} gpu_name_scratch SEC(".maps");

/* Adds 1 to a GPU counter of this CPU. */
static __always_inline void count_gpu(__u32 stat)
{
	__u64 *v = bpf_map_lookup_elem(&gpu_stats, &stat);

	if (v)
		(*v)++;
}

/* The launch probe: counts the launching stack under gpu_launches and remembers it. */
static __always_inline int gpu_launch(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id, zero = 0;
	struct firn_key key = { .pid = pid, .tid = tid, .event = FIRN_EVENT_GPU_LAUNCHES };
	struct firn_stack *user, *kernel;
	long corr = 0;

	if (!is_target(pid) || bpf_usdt_arg(ctx, 0, &corr))
		return 0;
	struct firn_gpu_launch *l = bpf_map_lookup_elem(&gpu_launch_scratch, &zero);
	if (!l)
		return 0;
	count_gpu(FIRN_GPU_LAUNCHES);
	struct task_struct *task = bpf_get_current_task_btf();
	announce(pid);
	note_comm(tid, task);
	take_stacks(ctx, true, pid, task, &user, &kernel);
	l->pid = pid;
	l->tid = tid;
	l->matched = 0;
	keep_stack(&l->user, user);
	struct firn_gpu_corr c = { pid, (__u32)corr };
	bpf_map_update_elem(&gpu_launches, &c, l, BPF_ANY);
	count_stacks(&key, user, NULL, 1, &gpu_stats, FIRN_GPU_LOST, FIRN_GPU_LOST);
	return 0;
}

/* Keeps the name at user address p in gpu_names; returns its hash (the frame's payload). */
static __always_inline __u64 gpu_name(const char *p)
{
	__u32 zero = 0;
	struct firn_gpu_name *n = bpf_map_lookup_elem(&gpu_name_scratch, &zero);
	__u64 h = 0xcbf29ce484222325ULL;

	if (!n)
		return 0;
	__builtin_memset(n->name, 0, sizeof(n->name));
	long len = bpf_probe_read_user_str(n->name, sizeof(n->name), p);
	for (int i = 0; i < FIRN_GPU_NAME_LEN && len > 0; i++) {
		if (i >= len || !n->name[i])
			break;
		h = (h ^ (__u8)n->name[i]) * 0x100000001b3ULL;
	}
	h &= FIRN_FRAME_PAYLOAD_MASK & ~FIRN_GPU_MEMCPY_FRAME;
	bpf_map_update_elem(&gpu_names, &h, n, BPF_NOEXIST);
	return h;
}

/* Counts value under event with stack = leaf, then the len frames of rest (may be NULL). */
static __always_inline void gpu_add(__u32 pid, __u32 tid, __u64 leaf, struct firn_stack *rest,
				    __u64 value)
{
	__u32 zero = 0, len = rest ? rest->len : 0;
	struct firn_stack *s = bpf_map_lookup_elem(&scratch, &zero);
	struct firn_key key = { .pid = pid, .tid = tid, .event = FIRN_EVENT_GPU_TIME };

	if (!s)
		return;
	if (len > FIRN_MAX_FRAMES - 1)
		len = FIRN_MAX_FRAMES - 1;
	s->ips[0] = leaf;
	if (len)
		bpf_probe_read_kernel(&s->ips[1], (len & 127) * sizeof(__u64), rest->ips);
	__u32 n = len + 1;
	/* hide n's bound from the compiler: the inlined stack hash must keep its own bound of
	 * FIRN_MAX_FRAMES, which the verifier follows */
	asm volatile("" : "+r"(n));
	s->len = n;
	count_stacks(&key, s, NULL, value, &gpu_stats, FIRN_GPU_LOST, FIRN_GPU_LOST);
}

/* The kernel probe: adds end - start to the launching stack, the kernel as its leaf. */
static __always_inline int gpu_kernel(struct pt_regs *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	long start = 0, end = 0, corr = 0, name = 0;

	if (!is_target(pid) || bpf_usdt_arg(ctx, 0, &start) || bpf_usdt_arg(ctx, 1, &end) ||
	    bpf_usdt_arg(ctx, 2, &corr) || bpf_usdt_arg(ctx, 5, &name))
		return 0;
	count_gpu(FIRN_GPU_KERNELS);
	struct firn_gpu_corr c = { pid, (__u32)corr };
	struct firn_gpu_launch *l = bpf_map_lookup_elem(&gpu_launches, &c);
	if (!l) {
		count_gpu(FIRN_GPU_KERNELS_UNMATCHED);
		return 0;
	}
	/* a process's records come from CUPTI's buffer thread one at a time: no race on matched */
	if (!l->matched)
		count_gpu(FIRN_GPU_LAUNCHES_MATCHED);
	__sync_fetch_and_add(&l->matched, 1);
	__u64 leaf = FIRN_FRAME(FIRN_FRAME_KIND_GPU, gpu_name((const char *)name));
	gpu_add(l->pid, l->tid, leaf, &l->user, end > start ? end - start : 0);
	return 0;
}

/* The memcpy probe: its time under "[memcpy KIND]" (the payload carries the kind). */
static __always_inline int gpu_memcpy(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	long start = 0, end = 0, kind = 0;

	if (!is_target(id >> 32) || bpf_usdt_arg(ctx, 0, &start) || bpf_usdt_arg(ctx, 1, &end) ||
	    bpf_usdt_arg(ctx, 4, &kind))
		return 0;
	count_gpu(FIRN_GPU_MEMCPYS);
	announce(id >> 32);
	__u64 leaf = FIRN_FRAME(FIRN_FRAME_KIND_GPU, FIRN_GPU_MEMCPY_FRAME | (kind & 0xff));
	gpu_add(id >> 32, (__u32)id, leaf, NULL, end > start ? end - start : 0);
	return 0;
}

/* Routes a hit of a libfirn-cuda probe by its cookie; false for any other cookie. */
static __always_inline bool gpu_hit(struct pt_regs *ctx, __u32 cookie)
{
	if (cookie == FIRN_EVENT_GPU_LAUNCHES)
		gpu_launch(ctx);
	else if (cookie == FIRN_EVENT_GPU_TIME)
		gpu_kernel(ctx);
	else if (cookie == FIRN_EVENT_GPU_MEMCPY)
		gpu_memcpy(ctx);
	else
		return false;
	return true;
}
