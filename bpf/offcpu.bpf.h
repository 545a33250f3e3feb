/* Off-CPU time (-e off-cpu), included by profile.bpf.c after the stack takers: a wait slot per
 * thread, taken at its switch-out (wait_begins: its stacks, through take_stacks as every event's)
 * and counted at its switch-in (wait_ends) with the time it was off the CPU, less the CPU time it
 * had since; the waits still going at the end counted by end_waits; those of a FIRN_WALK_DEFER
 * walker begun before the start counted at their system call's exit (offcpu_start.bpf.h). */
#ifndef FIRN_BPF_OFFCPU_H
#define FIRN_BPF_OFFCPU_H

/* Off-CPU accounting (enum firn_offcpu_stat). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FIRN_OFF_NR);
	__type(key, __u32);
	__type(value, __u64);
} offcpu_stats SEC(".maps");

/* A wait in progress: when its thread stopped, and its stacks then (taken at the switch-out,
 * while the thread is current; hashed and stored only at the switch-in, if it was long enough). */
struct firn_wait {
	__u64 start;    /* 0: none remembered */
	__u64 runtime;  /* the thread's CPU time then (se.sum_exec_runtime) */
	__u32 pid;
	__u32 at_start; /* 1: in progress at the start (its stacks taken by start_waits) */
	__u64 pending;  /* a wait begun before the start, of a Python process, ended: its ns, counted
			 * at the thread's system call exit with its Python frames (offcpu_start.bpf.h) */
	__u32 ctx, ctx_pad; /* its label context when it began (walkers_ctx) */
	struct firn_stack user, kernel;
};

/* One wait slot per thread, allocated at its first switch-out, freed with the thread. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct firn_wait);
} waits SEC(".maps");

/* Adds n to an off-CPU counter (enum firn_offcpu_stat) of this CPU. */
static __always_inline void count_offcpu(__u32 stat, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&offcpu_stats, &stat);

	if (v)
		*v += n;
}

/* TASK_DEAD in a task's state: its last switch-out, no wait. */
#define FIRN_TASK_DEAD 0x80

static __always_inline bool count_wait(struct task_struct *task, struct firn_wait *w,
				       struct firn_stack *user, __u64 ns);
static __always_inline bool defer_wait(struct firn_wait *w, __u64 ns);

/* Ends the wait of task when it has one: adds the time it was off the CPU (x the sampling rate)
 * to the wait's stacks, if it lasted the minimum; else counts it as short. Off the CPU = the time
 * since the wait began less the CPU time the thread had since: 0 when the task is being switched
 * in, the run it had when its switch-in went unseen (ended at its next switch-out) or when it is
 * on a CPU at the end of the recording. True when added. at_switch: at the switch-in, where a
 * wait of a Python process begun before the start is deferred to its system call exit. */
static __always_inline bool wait_ends(struct task_struct *task, bool at_switch)
{
	struct firn_wait *w = bpf_task_storage_get(&waits, task, 0, 0);

	if (!w || !w->start)
		return false;
	__u64 ran = BPF_CORE_READ(task, se.sum_exec_runtime) - w->runtime;
	__u64 ns = bpf_ktime_get_ns() - w->start;
	ns = ns > ran ? ns - ran : 0;
	w->start = 0;
	if (ns < off_cpu_min_ns) {
		count_offcpu(FIRN_OFF_SHORT, 1);
		count_offcpu(FIRN_OFF_SHORT_NS, ns);
		return false;
	}
	if (at_switch && defer_wait(w, ns))
		return false; /* counted at its system call's exit */
	return count_wait(task, w, &w->user, ns);
}

/* Adds a wait of task that ended (ns off the CPU) to its stacks: the kept kernel stack and user
 * (the kept one, or one with Python frames spliced in). True when added. */
static __always_inline bool count_wait(struct task_struct *task, struct firn_wait *w,
				       struct firn_stack *user, __u64 ns)
{
	struct firn_key key = {};

	key.pid = w->pid;
	key.tid = BPF_CORE_READ(task, pid);
	key.event = FIRN_EVENT_OFF_CPU;
	key.ctx = w->ctx;
	announce(key.pid);
	note_comm(key.tid, task);
	if (!count_stacks(&key, user, &w->kernel, ns * off_cpu_rate, &offcpu_stats,
			  FIRN_OFF_LOST_COUNTS_FULL, FIRN_OFF_LOST_STACKS_FULL))
		return false;
	count_offcpu(FIRN_OFF_COUNTED, 1);
	count_offcpu(FIRN_OFF_NS, ns);
	return true;
}

/* A wait in progress at the start (its user stack walked from another task: no Python frames)
 * of a process whose CPython user space described has ended: its time is kept (pending) and
 * counted at the thread's next system call exit, in its own context, where its Python frames
 * are read as they were during the wait (nothing ran since: it returns from the call it
 * waited in; offcpu_start.bpf.h). True when deferred. */
__u64 start_pending = 0; /* waits pending (start_wait_exit returns at once when none) */
static __always_inline bool defer_wait(struct firn_wait *w, __u64 ns)
{
	if (!w->at_start || !start_defer || !walkers_deferred(w->pid))
		return false;
	w->at_start = 0;
	w->pending = ns ? ns : 1;
	__sync_fetch_and_add(&start_pending, 1);
	return true;
}

/* Counts a deferred wait of task as it was kept (no system call exit came: the thread ran
 * anyway, or the recording ends). */
static __always_inline void flush_deferred(struct task_struct *task, struct firn_wait *w)
{
	__u64 ns = w->pending;

	if (!ns)
		return;
	w->pending = 0;
	__sync_fetch_and_add(&start_pending, -1);
	count_wait(task, w, &w->user, ns);
}

/* The current task (prev) is switched out: when it is a target's thread that stops to wait
 * (not preempted while runnable, unless off_cpu_runnable), remembers when, with its stacks,
 * in its slot. Nothing is hashed or stored yet: most waits may end up short. */
static __always_inline void wait_begins(void *ctx, struct task_struct *prev, bool preempt,
					unsigned int state)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32;
	struct firn_stack *user, *kernel;

	if (!pid || (state & FIRN_TASK_DEAD) || (!off_cpu_runnable && (preempt || !state)) ||
	    !is_target(pid))
		return;
	if (off_cpu_rate > 1 && bpf_get_prandom_u32() % off_cpu_rate) {
		count_offcpu(FIRN_OFF_UNSAMPLED, 1);
		return;
	}
	struct firn_wait *w = bpf_task_storage_get(&waits, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!w) {
		count_offcpu(FIRN_OFF_LOST_NO_SLOT, 1);
		return;
	}
	/* a switch-in the program did not see (rare): that wait ends now, its CPU time since
	 * taken off, before the slot is reused */
	if (w->start) {
		count_offcpu(FIRN_OFF_LATE, 1);
		wait_ends(prev, false);
	}
	flush_deferred(prev, w); /* it ran without a system call exit seen */
	w->at_start = 0;
	take_stacks(ctx, false, pid, prev, &user, &kernel);
	keep_stack(&w->user, user);
	keep_stack(&w->kernel, kernel);
	w->pid = pid;
	w->ctx = walkers_ctx(pid, prev, FIRN_W_INLINE);
	w->runtime = BPF_CORE_READ(prev, se.sum_exec_runtime);
	count_offcpu(FIRN_OFF_WAITS, 1);
	w->start = bpf_ktime_get_ns();
}

/* Off-CPU time (loaded only for -e off-cpu): the thread switched out may begin a wait, the one
 * switched in ends one. Never waits itself: per-thread storage and per-CPU counters only. */
SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	wait_begins(ctx, prev, preempt, prev_state);
	wait_ends(next, true);
	return 0;
}

/* Run once at the end, after on_switch is detached (a task iterator): the waits still going end
 * now, so a thread that waited through the end of the recording shows that time too. */
SEC("iter/task")
int end_waits(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;

	struct firn_wait *w = task ? bpf_task_storage_get(&waits, task, 0, 0) : NULL;

	if (w)
		flush_deferred(task, w);
	if (task && wait_ends(task, false))
		count_offcpu(FIRN_OFF_AT_END, 1);
	return 0;
}

#endif
