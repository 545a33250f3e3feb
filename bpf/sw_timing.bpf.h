/* By hand only (FIRN_SW_TIMING, bench/bpf_kinds.sh): on_sample's run time by the kind of sample
 * (idle, kernel thread, described or not, user or kernel mode, the deep fixture) and by stage,
 * per CPU, with the frames walked and the VMA lookups made; off, nothing. Included by
 * bpf/profile.bpf.c before the stack takers. */
#ifndef FIRN_BPF_SW_TIMING_H
#define FIRN_BPF_SW_TIMING_H

#ifdef FIRN_SW_TIMING
#define SW_KINDS 8
#define SW_STAGES 8
struct sw_timing {
	__u64 last, kind, on, n[SW_KINDS], frames[SW_KINDS], vma[SW_KINDS], kframes[SW_KINDS], ann[SW_KINDS];
	__u64 ns[SW_KINDS][SW_STAGES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sw_timing);
} sw_timing SEC(".maps");

/* The kind of the current sample: 0 idle, 1 kernel thread, 2/3 described (user/kernel mode),
 * 4/5 not described, 6/7 the deep fixture (user/kernel mode). */
static __always_inline __u64 sw_kind(void *ctx, __u32 pid, struct task_struct *task)
{
	char c[8] = {};

	if (!pid)
		return 0;
	if (!BPF_CORE_READ(task, mm))
		return 1;
	bool km = !user_mode(ctx);
	BPF_CORE_READ_STR_INTO(&c, task, group_leader, comm);
	if (c[0] == 'd' && c[1] == 'e' && c[2] == 'e' && c[3] == 'p' && !c[4])
		return 6 + km;
	return (bpf_map_lookup_elem(&unwind_pids, &pid) ? 2 : 4) + km;
}

/* Starts a sample's marks: its kind, the time. */
static __always_inline void sw_begin(void *ctx, __u32 pid, struct task_struct *task)
{
	__u32 z = 0;
	struct sw_timing *t = bpf_map_lookup_elem(&sw_timing, &z);

	if (!t)
		return;
	t->kind = sw_kind(ctx, pid, task);
	t->on = 1;
	t->last = bpf_ktime_get_ns();
}

/* Adds the time since the last mark to stage i of the sample's kind. */
static __always_inline void sw_mark(__u32 i)
{
	__u32 z = 0;
	__u64 now = bpf_ktime_get_ns();
	struct sw_timing *t = bpf_map_lookup_elem(&sw_timing, &z);

	if (!t || !t->on)
		return;
	__u64 k = t->kind & (SW_KINDS - 1);
	t->ns[k][i % SW_STAGES] += now - t->last;
	t->last = bpf_ktime_get_ns();
}

/* Ends a sample's marks (the last stage) and counts it, its frames and VMA lookups. */
static __always_inline void sw_end(void)
{
	__u32 z = 0, one = 1;
	struct sw_timing *t = bpf_map_lookup_elem(&sw_timing, &z);
	struct firn_unwind_state *u = bpf_map_lookup_elem(&unwind_state, &z);
	struct firn_stack *s = bpf_map_lookup_elem(&scratch, &z);
	struct firn_stack *ks = bpf_map_lookup_elem(&scratch, &one);

	sw_mark(SW_STAGES - 1);
	if (!t || !t->on)
		return;
	__u64 k = t->kind & (SW_KINDS - 1);
	t->on = 0;
	t->n[k]++;
	t->frames[k] += s ? s->len : 0;
	t->kframes[k] += ks ? ks->len : 0;
	t->vma[k] += u && k ? u->looked : 0;
}
/* Counts an announcement (a process's first sample, or its first after an exec). */
static __always_inline void sw_announced(void)
{
	__u32 z = 0;
	struct sw_timing *t = bpf_map_lookup_elem(&sw_timing, &z);

	if (t && t->on)
		t->ann[t->kind & (SW_KINDS - 1)]++;
}
#define SW_ANNOUNCED() sw_announced()

#define SW_BEGIN(ctx, pid, task) sw_begin(ctx, pid, task)
#define SW_MARK(i) sw_mark(i)
#define SW_END() sw_end()
#else
#define SW_ANNOUNCED()
#define SW_BEGIN(ctx, pid, task)
#define SW_MARK(i)
#define SW_END()
#endif

#endif
