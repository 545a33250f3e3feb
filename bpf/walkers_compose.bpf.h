/* The runtime walkers composed into the sampling programs, from FIRN_WALKERS (bpf/walkers.h):
 * their headers, then one function per hook that calls that hook of every row, in the list's
 * order, where its walker runs (WALKER_ON: read-only, the verifier drops the others). Included
 * by bpf/profile.bpf.c after the helpers the walkers use, before the unwinder's frame loop;
 * every event's stack taker calls these and names no walker. */
#ifndef FIRN_BPF_WALKERS_COMPOSE_H
#define FIRN_BPF_WALKERS_COMPOSE_H

#include "walkers_inc.h"

/* Which rows' stack hooks walkers_stack calls. */
#define FIRN_W_ALL 0u      /* every row's */
#define FIRN_W_INLINE 1u   /* the rows without a program of their own (FIRN_NO_PROG) */
#define FIRN_W_DEFERRED 2u /* the FIRN_WALK_DEFER rows' */
#define FIRN_W_TAILED_FIRN_PROG 1
#define FIRN_W_TAILED_FIRN_NO_PROG 0

#define FIRN_W_BEGIN(n, tag, h, begin, ...) \
	if (WALKER_ON(tag))                 \
		(void)begin(pid);

/* Starts every walker's walk of a user stack of pid (before the native walk). */
static __always_inline void walkers_begin(__u32 pid)
{
	FIRN_WALKERS(FIRN_W_BEGIN)
}

#define FIRN_W_FRAME(n, tag, h, b, frame, s, pr, flags, ...)                            \
	if (WALKER_ON(tag) && !after_fp == !((flags) & FIRN_WALK_FP_FRAMES) &&              \
	    (r = frame(u, &u->emit)) != FIRN_FRAME_OTHER)                                  \
		return r;

/* The walkers' frame hooks on the unwinder's current frame (u->emit), until one claims it:
 * FIRN_FRAME_OTHER (none did), FIRN_FRAME_EMIT or FIRN_FRAME_STEPPED (bpf/walkers.h). after_fp:
 * after a frame-pointer step (u->fp_frame: the FIRN_WALK_FP_FRAMES rows' hooks), else before the
 * native step (the others': a hook called after would see the caller's registers as its frame's). */
static __always_inline int walkers_frame(struct firn_unwind_state *u, bool after_fp)
{
	int r = FIRN_FRAME_OTHER;

	FIRN_WALKERS(FIRN_W_FRAME)
	return r;
}

#define FIRN_W_STACK(n, tag, h, b, f, stack, pr, flags, ...)                          \
	if (WALKER_ON(tag) && (which != FIRN_W_INLINE || !FIRN_W_TAILED_##pr) &&     \
	    (which != FIRN_W_DEFERRED || ((flags) & FIRN_WALK_DEFER)))               \
		id |= stack(s, big && ((flags) & FIRN_WALK_BIG));

/* The stack hooks of the rows which selects (FIRN_W_*) on user stack s (big: it may outgrow
 * s, a timed sample's); returns the id in big_stacks of the stack when one stored it there,
 * else 0. */
static __always_inline __u64 walkers_stack(struct firn_stack *s, bool big, __u32 which)
{
	__u64 id = 0;

	FIRN_WALKERS(FIRN_W_STACK)
	return id;
}

#define FIRN_W_CTX(n, tag, h, b, f, s, pr, flags, wh, maps, nm, ctx)                       \
	if (!c && WALKER_ON(tag) && (which != FIRN_W_INLINE || !FIRN_W_TAILED_##pr))        \
		c = ctx(pid, task);

/* The label context of a sample or wait of pid on task (bpf/firn.h's FIRN_CTX; 0: none): the
 * first of the ctx hooks of the rows which selects (FIRN_W_ALL or FIRN_W_INLINE) that gives one. */
static __always_inline __u32 walkers_ctx(__u32 pid, struct task_struct *task, __u32 which)
{
	__u32 c = 0;

	FIRN_WALKERS(FIRN_W_CTX)
	return c;
}

#define FIRN_W_DEFER_PROC(n, tag, h, b, f, s, pr, flags, ...) \
	|| (((flags) & FIRN_WALK_DEFER) && walker_proc(tag, pid))

/* Whether a FIRN_WALK_DEFER walker was told of pid: its waits at the start wait for their
 * system call's exit (bpf/offcpu_start.bpf.h). */
static __always_inline bool walkers_deferred(__u32 pid)
{
	return 0 FIRN_WALKERS(FIRN_W_DEFER_PROC);
}

#define FIRN_W_FORGET(n, tag, ...) walker_forget(tag, pid);

/* Forgets what every walker was told of pid (its exec: a new image, user space looks again; its
 * end), whether or not its walker runs in this object (a late one's entries are the same map). */
static __always_inline void walkers_forget(__u32 pid)
{
	FIRN_WALKERS(FIRN_W_FORGET)
}

#endif
