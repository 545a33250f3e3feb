// SPDX-License-Identifier: GPL-2.0
/* The sampler: a perf_event program on every CPU takes the user and kernel stacks of the
 * running task and counts them in the kernel, keyed by (pid, tid, user stack, kernel stack). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "firn.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space before load. */
const volatile __u32 filter_pids = 0;     /* 1: only processes in the targets map */
const volatile __u32 follow_children = 0; /* 1: children of targets become targets */
const volatile __u32 want_kernel = 1;
const volatile __u32 want_user = 1;
const volatile __u32 self_pid = 0;        /* firn itself, never sampled */

/* Which counts map the program writes; user space flips it and drains the other. */
__u32 active_buf = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct firn_key);
	__type(value, __u64);
} counts0 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct firn_key);
	__type(value, __u64);
} counts1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct firn_stack);
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct firn_comm);
} comms SEC(".maps");

/* Processes already announced to user space. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FIRN_LOST_NR + 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

/* Scratch space for one stack (too large for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct firn_stack);
} scratch SEC(".maps");

/* Total samples seen by the program (index FIRN_LOST_NR of the lost array). */
static __always_inline void count_lost(__u32 reason)
{
	__u64 *v = bpf_map_lookup_elem(&lost, &reason);

	if (v)
		(*v)++;
}

static __always_inline void send_event(__u32 type, __u32 pid)
{
	struct firn_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		count_lost(FIRN_LOST_EVENTS_FULL);
		return;
	}
	e->type = type;
	e->pid = pid;
	bpf_ringbuf_submit(e, 0);
}

/* Content hash of a stack (never 0: 0 means "no stack"). */
static __always_inline __u64 stack_hash(const struct firn_stack *s)
{
	__u64 h = 0xcbf29ce484222325ULL ^ s->len;

	for (int i = 0; i < FIRN_MAX_FRAMES; i++) {
		if (i >= s->len)
			break;
		h = (h ^ s->ips[i]) * 0x100000001b3ULL;
		h ^= h >> 29;
	}
	return h ? h : 1;
}

/* Takes one stack into scratch slot idx and stores it; returns its id or 0. */
static __always_inline __u64 take_stack(void *ctx, __u32 idx, __u64 flags, __u32 fail_reason)
{
	struct firn_stack *s = bpf_map_lookup_elem(&scratch, &idx);

	if (!s)
		return 0;
	long n = bpf_get_stack(ctx, s->ips, sizeof(s->ips), flags);
	if (n <= 0) {
		/* -EFAULT for the kernel stack of a user-mode sample: simply no kernel stack */
		if (n < 0 && n != -14)
			count_lost(fail_reason);
		return 0;
	}
	s->len = n / sizeof(__u64);
	s->pad = 0;
	__u64 id = stack_hash(s);
	if (bpf_map_update_elem(&stacks, &id, s, BPF_NOEXIST) && !bpf_map_lookup_elem(&stacks, &id)) {
		count_lost(FIRN_LOST_STACKS_FULL);
		return 0;
	}
	return id;
}

/* Records thread and process names the first time a thread is seen. */
static __always_inline void note_comm(__u32 tid, struct task_struct *task)
{
	struct firn_comm c;

	if (bpf_map_lookup_elem(&comms, &tid))
		return;
	bpf_get_current_comm(c.thread, sizeof(c.thread));
	struct task_struct *leader = BPF_CORE_READ(task, group_leader);
	BPF_CORE_READ_STR_INTO(&c.process, leader, comm);
	bpf_map_update_elem(&comms, &tid, &c, BPF_NOEXIST);
}

static __always_inline void add_count(struct firn_key *key)
{
	void *map = active_buf ? (void *)&counts1 : (void *)&counts0;
	__u64 one = 1, *v = bpf_map_lookup_elem(map, key);

	if (v) {
		__sync_fetch_and_add(v, 1);
		return;
	}
	if (bpf_map_update_elem(map, key, &one, BPF_NOEXIST)) {
		v = bpf_map_lookup_elem(map, key);
		if (v)
			__sync_fetch_and_add(v, 1);
		else
			count_lost(FIRN_LOST_COUNTS_FULL);
	}
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id;
	struct firn_key key = {};

	if (pid == self_pid && pid)
		return 0;
	if (filter_pids && !bpf_map_lookup_elem(&targets, &pid))
		return 0;
	count_lost(FIRN_LOST_NR);
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u8 one = 1;
	if (pid && !bpf_map_update_elem(&seen, &pid, &one, BPF_NOEXIST))
		send_event(FIRN_EV_NEW_PROCESS, pid);
	note_comm(tid, task);
	key.pid = pid;
	key.tid = tid;
	if (want_user && pid)
		key.ustack = take_stack(ctx, 0, BPF_F_USER_STACK, FIRN_LOST_USER_STACK);
	if (want_kernel)
		key.kstack = take_stack(ctx, 1, 0, FIRN_LOST_KERNEL_STACK);
	add_count(&key);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ppid = BPF_CORE_READ(parent, tgid), cpid = BPF_CORE_READ(child, tgid);
	__u8 one = 1;

	if (!follow_children || ppid == cpid || !bpf_map_lookup_elem(&targets, &ppid))
		return 0;
	bpf_map_update_elem(&targets, &cpid, &one, BPF_ANY);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 pid = BPF_CORE_READ(p, tgid);

	if (filter_pids && !bpf_map_lookup_elem(&targets, &pid))
		return 0;
	if (!bpf_map_lookup_elem(&seen, &pid))
		return 0;
	/* the next sample announces the process again, once its libraries are mapped */
	bpf_map_delete_elem(&seen, &pid);
	bpf_map_delete_elem(&comms, &pid);
	send_event(FIRN_EV_EXEC, pid);
	return 0;
}
