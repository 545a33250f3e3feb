/* Structs shared by the BPF sampler (bpf/profile.bpf.c) and user space (lib/sampler.c).
 * Plain fixed-width types only: this header is included by both sides. */
#ifndef FIRN_BPF_FIRN_H
#define FIRN_BPF_FIRN_H

#define FIRN_MAX_FRAMES 127
#define FIRN_COMM_LEN 16

/* Aggregation key: one count per (process, thread, user stack, kernel stack). Stack ids are
 * 64-bit content hashes; 0 means "no stack". */
struct firn_key {
	__u32 pid;
	__u32 tid;
	__u64 ustack;
	__u64 kstack;
};

/* A stack as stored in the stacks map: instruction pointers, leaf first. */
struct firn_stack {
	__u32 len;
	__u32 pad;
	__u64 ips[FIRN_MAX_FRAMES];
};

/* Names of a thread: its own (comm) and its process's (group leader's comm). */
struct firn_comm {
	char thread[FIRN_COMM_LEN];
	char process[FIRN_COMM_LEN];
};

/* Events sent to user space through the ring buffer. */
enum firn_event_type {
	FIRN_EV_NEW_PROCESS = 1, /* first sample of a process (or first after exec) */
	FIRN_EV_EXEC = 2,
	FIRN_EV_EXIT = 3,
};

struct firn_event {
	__u32 type;
	__u32 pid;
};

/* Reasons a sample was not stored or is incomplete (indexes of the lost counters). */
enum firn_lost {
	FIRN_LOST_COUNTS_FULL = 0, /* the counts map was full */
	FIRN_LOST_STACKS_FULL,     /* a stack could not be stored: the sample kept no stack */
	FIRN_LOST_EVENTS_FULL,     /* a process event did not fit in the ring buffer */
	FIRN_LOST_USER_STACK,      /* the user stack could not be read */
	FIRN_LOST_KERNEL_STACK,    /* the kernel stack could not be read */
	FIRN_LOST_NR,
};

#endif
