/* Waits already in progress when an off-CPU recording starts (included by profile.bpf.c, after
 * its off-CPU programs). start_waits, a sleepable task iterator that user space runs once right
 * after on_switch is attached, gives every target thread that is off the CPU then a wait slot as
 * if it had just switched out: its kernel stack (bpf_get_task_stack), its user stack (its pages
 * copied from the task with bpf_copy_from_user_task, then walked by the one unwinder through
 * the stack window), its CPU time. The wait counts from the start of the recording: the profile
 * covers the recording's time only. When it began (the task's scheduler statistics) goes to the
 * summary: how long before the start the oldest of them began. A thread whose mmap_lock is
 * taken for writing or awaited gets no user stack (the copy would wait with it). A Python
 * process's waits get their Python frames when they end, at the thread's system call exit
 * (start_wait_exit, below). */

/* The user stack pages of the thread being taken (copied while the program may sleep: the
 * per-CPU window is filled from it only once nothing sleeps). One entry: iterators run one at
 * a time (user space reads it once, at the start). */
struct firn_start_copy {
	__u32 loaded; /* bit per page copied */
	__u32 pad;
	__u8 data[FIRN_WINDOW];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct firn_start_copy);
} start_copy SEC(".maps");

/* How long before the start the oldest wait in progress began, in ns (read after the run). */
__u64 start_oldest_ns = 0;

/* Whether task is a target's thread off the CPU (waiting; or runnable but preempted, with
 * off_cpu_runnable) and not firn, an exiting thread or the idle task. */
static __always_inline bool off_cpu_now(struct task_struct *task, __u32 pid)
{
	unsigned int state = BPF_CORE_READ(task, __state);

	if (!pid || BPF_CORE_READ(task, on_cpu) || BPF_CORE_READ(task, exit_state) ||
	    (state & FIRN_TASK_DEAD) || (!state && !off_cpu_runnable))
		return false;
	return pid_is_target(pid) && cgroup_task_in(task); /* not the current task */
}

/* How long ago task went off the CPU: it last arrived on one at sched_info.last_arrival and ran
 * sum_exec_runtime - prev_sum_exec_runtime then (both in ns of the run-queue clock). Now is the
 * clock of this CPU's run queue, found through firn's own task (the runqueues symbol is not
 * in kallsyms without CONFIG_KALLSYMS_ALL); stale by a tick at most: firn runs here. */
static __always_inline __u64 off_for_ns(struct task_struct *task)
{
	struct task_struct *self = bpf_get_current_task_btf();
	__u64 off = BPF_CORE_READ(task, sched_info.last_arrival) +
		    BPF_CORE_READ(task, se.sum_exec_runtime) -
		    BPF_CORE_READ(task, se.prev_sum_exec_runtime);
	__u64 now = BPF_CORE_READ(self, se.cfs_rq, rq, clock);

	return now > off ? now - off : 0;
}

/* Whether reading task's memory could wait: the copy takes its mmap_lock for reading, which
 * waits while a writer holds it or waits for it (rwsem count bits 0-2: writer, waiters,
 * handoff) — the very state of a process stuck in mmap or a page fault. */
static __always_inline bool mm_busy(struct task_struct *task)
{
	return BPF_CORE_READ(task, mm, mmap_lock.count.counter) & 7;
}

/* Copies the user stack pages of task above sp into start_copy (may sleep: page faults). */
static __always_inline struct firn_start_copy *copy_task_stack(struct task_struct *task, __u64 sp)
{
	__u32 zero = 0;
	struct firn_start_copy *c = bpf_map_lookup_elem(&start_copy, &zero);
	__u64 base = sp & ~4095ULL;

	if (!c)
		return NULL;
	c->loaded = 0;
#pragma unroll
	for (__u32 p = 0; p < FIRN_WINDOW_PAGES; p++)
		if (!bpf_copy_from_user_task(&c->data[p << 12], 4096, (void *)(base + (p << 12)), task, 0))
			c->loaded |= 1u << p;
	return c;
}

/* Unwinds the user stack of task (off the CPU, not current) into scratch slot 0 (len 0: none):
 * its saved registers, its pages from start_copy through the window (nothing else of its memory
 * is read: other reads fail), no VMA lookup (that would be firn's). Python frames are not
 * spliced in (the walk reads the current task's memory). */
static __always_inline struct firn_stack *task_user_stack(struct task_struct *task, __u32 pid)
{
	__u32 zero = 0;
	struct firn_stack *s = bpf_map_lookup_elem(&scratch, &zero);
	struct firn_unwind_state *u = bpf_map_lookup_elem(&unwind_state, &zero);
	struct firn_stack_window *w = bpf_map_lookup_elem(&stack_window, &zero);
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

	if (!s || !u || !w)
		return NULL;
	s->len = 0;
	if (!want_user || !BPF_CORE_READ(task, mm) || !regs)
		return s;
	u->ip = BPF_CORE_READ(regs, ip);
	u->sp = BPF_CORE_READ(regs, sp);
	u->bp = BPF_CORE_READ(regs, bp);
	struct firn_start_copy *c = u->ip && !mm_busy(task) ? copy_task_stack(task, u->sp) : NULL;
	if (!c)
		return s;
	/* from here on nothing sleeps: the per-CPU window and state stay this program's */
	bpf_probe_read_kernel(w->data, sizeof(w->data), c->data);
	w->base = u->sp & ~4095ULL;
	w->loaded = c->loaded;
	w->remote = 1;
	struct firn_pid_maps *maps = dwarf_unwind ? bpf_map_lookup_elem(&unwind_pids, &pid) : NULL;
	u->first = maps ? maps->first : 0;
	u->count = maps ? maps->count : 0;
	u->stop = FIRN_UNW_NR;
	u->exact = 1;
	u->fp = u->vma = 0;
	u->unknown_pc = 0;
	u->looked = 1;
	u->pid = pid;
	u->found.row_count = 0;
	bpf_loop(FIRN_MAX_FRAMES, unwind_frame, NULL, 0);
	w->remote = 0;
	return s;
}

/* The kernel stack of task (off the CPU) into scratch slot 1 (NULL: not wanted). */
static __always_inline struct firn_stack *task_kernel_stack(struct task_struct *task)
{
	__u32 one = 1;
	struct firn_stack *s = want_kernel ? bpf_map_lookup_elem(&scratch, &one) : NULL;

	if (!s)
		return NULL;
	long n = bpf_get_task_stack(task, s->ips, sizeof(s->ips), 0);
	s->len = n > 0 ? n / sizeof(__u64) : 0; /* none: the wait is kept, as a switch-out's */
	return s;
}

/* Gives task, off the CPU at the start, a wait from now with its stacks, unless it has one (it
 * switched out since on_switch was attached). Sampled as switch-outs are (off_cpu_rate). */
static __always_inline void wait_in_progress(struct task_struct *task, __u32 pid)
{
	if (off_cpu_rate > 1 && bpf_get_prandom_u32() % off_cpu_rate) {
		count_offcpu(FIRN_OFF_UNSAMPLED, 1);
		return;
	}
	struct firn_wait *w = bpf_task_storage_get(&waits, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!w) {
		count_offcpu(FIRN_OFF_LOST_NO_SLOT, 1);
		return;
	}
	if (w->start)
		return;
	__u64 before = off_for_ns(task);
	struct firn_stack *user = task_user_stack(task, pid), *kernel = task_kernel_stack(task);
	keep_stack(&w->user, user);
	keep_stack(&w->kernel, kernel);
	w->pid = pid;
	w->runtime = BPF_CORE_READ(task, se.sum_exec_runtime);
	/* a switch-out on another CPU meanwhile keeps its own wait */
	if (__sync_val_compare_and_swap(&w->start, 0, bpf_ktime_get_ns()))
		return;
	w->at_start = 1; /* its Python frames wait for its system call exit (start_wait_exit) */
	count_offcpu(FIRN_OFF_WAITS, 1);
	count_offcpu(FIRN_OFF_AT_START, 1);
	if (before > start_oldest_ns)
		start_oldest_ns = before;
}

/* Run once at the start, after on_switch is attached (loaded only for -e off-cpu with targets
 * that exist before the recording: -p, -a). */
SEC("iter.s/task")
int start_waits(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;

	if (task && off_cpu_now(task, BPF_CORE_READ(task, tgid)))
		wait_in_progress(task, BPF_CORE_READ(task, tgid));
	return 0;
}

/* A thread whose wait was in progress at the start, of a Python process, returns from the
 * system call it waited in (defer_wait kept the wait's time): its Python frames, which the start
 * could not read (they are in another task's memory), are those of now — nothing ran since — and
 * are spliced into the kept user stack before the wait is counted. Attached for -e off-cpu with
 * waits at the start and Python frames; returns at once when no wait is pending. */
SEC("?raw_tp/sys_exit")
int BPF_PROG(start_wait_exit)
{
	struct task_struct *task;
	struct firn_wait *w;
	struct firn_stack *s;
	__u32 zero = 0;

	if (!start_pending)
		return 0;
	task = bpf_get_current_task_btf();
	w = bpf_task_storage_get(&waits, task, 0, 0);
	if (!w || !w->pending || !(s = bpf_map_lookup_elem(&scratch, &zero)))
		return 0;
	__u64 ns = w->pending;
	w->pending = 0;
	__sync_fetch_and_add(&start_pending, -1);
	keep_stack(s, &w->user);
	walkers_stack(s, false, FIRN_W_DEFERRED);
	count_wait(task, w, s, ns);
	return 0;
}
