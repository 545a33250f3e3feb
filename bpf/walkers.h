/* The runtime walkers: one list, FIRN_WALKERS, a row per runtime whose frames BPF makes, from
 * which everything else is made. bpf/profile.bpf.c expands it into the walkers' includes
 * (walkers_inc.h), into the calls of their hooks in every event's stack taker (cpu-clock,
 * off-CPU, usdt, cuda, alloc: one composition) and into the tail-called program of each row
 * that has one; user space (lib/source/sampler.c) into firn_walkers[], the one table it loads
 * them by, naming no runtime; tests/unit/test_bpfverify.c into the programs' budgets. A runtime
 * adds its header and one row here.
 *
 * A row: X(name, tag, header, begin, frame, stack, prog, flags, what, maps, names, ctx)
 *   name    the walker's name: its program is on_sample_NAME
 *   tag     its FIRN_FRAME_KIND_* (bpf/firn.h, or its header): the 4-bit tag of its frames, its
 *           walker_procs / walker_stats entries and its announcements; unique (asserted in
 *           walkers_inc.h)
 *   header  its file under bpf/ (struct and tag first, BPF code under #ifdef __bpf__); a runtime
 *           without a BPF walker of its own names "firn.h"
 *   begin   FIRN_NONE, or `NAME_begin(__u32 pid)`: once per user stack, before the native walk
 *   frame   FIRN_NONE, or `int NAME_frame(struct firn_unwind_state *u, __u64 *emit)`: for each
 *           native frame, inside the unwinder's frame loop (bpf/profile.bpf.c's unwind_frame).
 *           Called first before the native step, u->fp_frame 0 (u->ip, sp, bp: the frame's;
 *           *emit: what the stack gets for it, u->ip): returns FIRN_FRAME_OTHER (0, not its),
 *           FIRN_FRAME_EMIT (rewrote *emit; the native step goes on) or FIRN_FRAME_STEPPED (it
 *           stepped u to the caller itself: ip, sp, bp, exact, stop; as a frame of code with no
 *           frame pointer whose size it knows). When the native step went by frame pointer
 *           (code without a table: a JIT's), the FIRN_WALK_FP_FRAMES rows' hooks are called
 *           after it instead, u->fp_frame the frame's fp, u's registers the caller's:
 *           FIRN_FRAME_EMIT rewrites *emit (V8's JavaScript); none per frame of code with a table
 *   stack   FIRN_NONE, or `__u64 NAME_stack(struct firn_stack *s, __u32 big)`: on the finished
 *           user stack s (splices, adds frames); big: the result may outgrow s (a timed sample's,
 *           FIRN_WALK_BIG rows), stored in big_stacks: its id returned (0: s holds it)
 *   prog    FIRN_PROG: cpu-clock samples of a process it was told of run its stack hook in a
 *           program of its own (on_sample_NAME, at its tag of the unwinders array, loaded when
 *           needed: sampler_opts.walkers_late); FIRN_NO_PROG: in on_sample itself. Its begin
 *           and frame hooks run in the native walk, in every program
 *   flags   FIRN_WALK_BIG: its stacks may outgrow firn_stack (big_stacks is sized for it);
 *           FIRN_WALK_DEFER: off-CPU waits at the start are counted at their system call's
 *           exit, where its stack hook can read the frames (bpf/offcpu_start.bpf.h);
 *           FIRN_WALK_FP_FRAMES: its frame hook wants only frames stepped by frame pointer
 *   what    for messages: "the Python unwinder"
 *   maps    FIRN_MAPS(...): maps only its walk uses (one entry in an object where it does not
 *           run; a late object has its own), at most FIRN_WALKER_OWN_MAPS
 *   names   its names by payload (__u64 key, a string value) user space reads back, or NULL
 *   ctx     FIRN_NONE, or `__u32 NAME(__u32 pid, struct task_struct *task)`: the sample's label
 *           context (bpf/firn.h's FIRN_CTX(tag, id), 0: none) of a process it was told of, for
 *           the key of every cpu-clock sample and off-CPU wait; the first row's that gives one.
 *           A FIRN_PROG row's runs in its program, before the others'
 *
 * Hooks whose cost the verifier would pay at each caller (the stack hooks: every event's stack
 * taker calls them; a frame hook in the frame loop's callback) are global functions, FIRN_HOOK:
 * verified once per program. Weak, so clang keeps their signature whole: it passes no register
 * for an argument the one definition it sees leaves unread, and the verifier refuses the call. */
#ifndef FIRN_BPF_WALKERS_H
#define FIRN_BPF_WALKERS_H

#define FIRN_WALKERS(X)                                                                         \
	X(python, FIRN_FRAME_KIND_PYTHON, "python.bpf.h", FIRN_NONE, FIRN_NONE, python_stack,    \
	  FIRN_PROG, FIRN_WALK_BIG | FIRN_WALK_DEFER, "the Python unwinder",                     \
	  FIRN_MAPS("python_codes", "python_tstates"), NULL, FIRN_NONE)                         \
	X(gpu, FIRN_FRAME_KIND_GPU, "firn.h", FIRN_NONE, FIRN_NONE, FIRN_NONE, FIRN_NO_PROG, 0,  \
	  "the GPU kernels", FIRN_MAPS(NULL), "gpu_names", FIRN_NONE)                           \
	X(v8, FIRN_FRAME_KIND_V8, "v8.bpf.h", v8_begin, v8_frame, FIRN_NONE, FIRN_NO_PROG,       \
	  FIRN_WALK_FP_FRAMES, "the JavaScript unwinder", FIRN_MAPS(NULL), NULL, FIRN_NONE)     \
	X(java, FIRN_FRAME_KIND_JAVA, "hotspot.bpf.h", hotspot_begin, firn_hotspot_frame,        \
	  FIRN_NONE, FIRN_NO_PROG, 0, "the Java unwinder", FIRN_MAPS("java_methods"), NULL,      \
	  FIRN_NONE)                                                                            \
	X(otel, FIRN_OTEL_TAG, "otelctx.bpf.h", FIRN_NONE, FIRN_NONE, FIRN_NONE, FIRN_NO_PROG,   \
	  0, "the OpenTelemetry context reader", FIRN_MAPS("otel_ctxs"), NULL, otel_ctx)        \
	X(go, FIRN_GO_TAG, "golabels.bpf.h", FIRN_NONE, FIRN_NONE, FIRN_NONE, FIRN_PROG, 0,      \
	  "the Go labels walker", FIRN_MAPS("go_ctxs", "go_scratch"), NULL, go_ctx)             \
	X(stub, FIRN_FRAME_KIND_STUB, "stub.bpf.h", FIRN_NONE, FIRN_NONE, stub_stack, FIRN_PROG, \
	  0, "the stub walker", FIRN_MAPS(NULL), NULL, FIRN_NONE)

#define FIRN_WALK_BIG 1u
#define FIRN_WALK_DEFER 2u
#define FIRN_WALK_FP_FRAMES 4u

/* The frame hook's answers. */
#define FIRN_FRAME_OTHER 0
#define FIRN_FRAME_EMIT 1
#define FIRN_FRAME_STEPPED 2

#define FIRN_NONE(...) 0
#define FIRN_HOOK __attribute__((noinline, weak))
#define FIRN_MAPS(...) { __VA_ARGS__ }
#define FIRN_WALKER_OWN_MAPS 2

/* The rows' count and their tags' sum and union, in #if and static assertions. */
#define FIRN_W_ONE(...) +1
#define FIRN_W_SUM(n, tag, ...) +(1u << (tag))
#define FIRN_W_OR(n, tag, ...) | (1u << (tag))
#define FIRN_NWALKERS_LISTED (0 FIRN_WALKERS(FIRN_W_ONE))

/* Frame tags: each row's its own (no two rows share one), below FIRN_FRAME_KINDS, not 0 (a
 * native address), and not FIRN_FRAME_KINDS_RESERVED; checked where the rows' headers are
 * included (walkers_inc.h: the tags are theirs). */
#define FIRN_FRAME_KINDS_RESERVED (1u << 15) /* tags (1 << tag) of runtimes of no walker: 15,
                                              * tests/toy/toy_runtime.h's toy runtime */

#ifndef __bpf__
#include "walkers_inc.h"

#include <stdbool.h>
#include <stddef.h>

struct firn_walker_row {
	unsigned tag;          /* its FIRN_FRAME_KIND_* */
	const char *what;      /* for messages: "the Python unwinder" */
	const char *prog;      /* its program (FIRN_PROG): on_sample_NAME; NULL: none */
	const char *own_maps[FIRN_WALKER_OWN_MAPS]; /* maps only its walk uses */
	const char *names;     /* its names by payload (__u64 key, a string value), or NULL */
	bool big_stacks;       /* FIRN_WALK_BIG */
	bool defer_at_start;   /* FIRN_WALK_DEFER */
};

#define FIRN_PROG(name) "on_sample_" #name
#define FIRN_NO_PROG(name) NULL
#define FIRN_W_ROW(n, tg, h, b, f, s, pr, flags, wh, maps, nm, ctx)                          \
	{ .tag = (tg), .what = wh, .prog = pr(n), .own_maps = maps, .names = nm,            \
	  .big_stacks = !!((flags) & FIRN_WALK_BIG), .defer_at_start = !!((flags) & FIRN_WALK_DEFER) },

static const struct firn_walker_row firn_walkers[] = { FIRN_WALKERS(FIRN_W_ROW) };
#define FIRN_NWALKERS (sizeof(firn_walkers) / sizeof(firn_walkers[0]))
#endif

#endif
