/* JavaScript frames in recorded stacks: finds the V8 of each process the recorder meets (node,
 * or a program that maps libnode.so), reads its v8dbg_* constants once per file (lib/runtimes/v8consts.h),
 * tells the BPF JavaScript walker (bpf/v8.bpf.h) the per-process values (struct firn_v8_proc,
 * through a callback), and resolves the tagged JavaScript frames it records to function name,
 * script and line as a frame_resolver of the "[javascript]" mapping.
 * A frame names a function by the walker's id, which stands for one SharedFunctionInfo as it was
 * (an address reused by another function, or met again after exec, gets a new id). The walker
 * announces each id (struct firn_v8_func_event); its SharedFunctionInfo is read then, while the
 * process most likely lives, and kept by id, so frames of a process that has ended resolve.
 * Process memory is read through a struct v8mem (process_vm_readv by default; tests give a fake
 * one): every pointer is checked for its tag and the object's type before it is followed, every
 * length bounded, so a hostile process's garbage gives "[unknown]" frames, never a crash.
 * One thread at a time. */
#ifndef FIRN_V8FRAMES_H
#define FIRN_V8FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/resolver.h"
#include "runtimes/runtime.h"
#include "runtimes/v8consts.h"

struct firn_v8_proc;
struct firn_v8_func_event;
struct procmap;
struct procmap_entry;
struct v8frames;

/* Called with what the BPF walker needs of a process that runs a V8 it can walk (p NULL: forget
 * the process); returns 0 or -errno (the process then keeps native frames). */
typedef int (*v8frames_set_fn)(void *ctx, pid_t pid, const struct firn_v8_proc *p);

/* Reads len bytes at addr of process pid into buf: 0, or -EFAULT. */
struct v8mem {
	int (*read)(void *ctx, pid_t pid, uint64_t addr, void *buf, size_t len);
	void *ctx;
};

struct v8frames_stats {
	uint64_t processes;   /* processes whose V8 the walker was told about */
	uint64_t refused;     /* V8 processes refused (constants missing, unknown layout) */
	uint64_t functions;   /* functions announced and read */
	uint64_t unreadable;  /* ... whose SharedFunctionInfo could not be read, or was no longer
			       * the one the walker saw (moved by the GC): "[unknown]" */
	uint64_t perf_maps;   /* V8 processes that also had /tmp/perf-PID.map (named by the walker) */
	char last_refusal[200]; /* why the last one was refused */
	/* the BPF walker's frames by outcome (enum firn_v8_stat order, FIRN_V8_NR of them):
	 * filled by the runtime (lib/runtimes/v8runtime.c), zeros from v8frames_get_stats */
	uint64_t bpf[7];
};

/* NULL + errno (ENOMEM). set and ctx are kept. */
struct v8frames *v8frames_new(v8frames_set_fn set, void *ctx);
void v8frames_free(struct v8frames *v8);
/* Takes the mappings of processes from maps (called with the ctx of v8frames_new). */
void v8frames_set_maps(struct v8frames *v8, runtime_maps_fn maps);
/* Reads process memory through mem instead of process_vm_readv (tests). */
void v8frames_set_mem(struct v8frames *v8, const struct v8mem *mem);
/* A process was first seen, or called exec: looks for a V8 in its mappings now (files named
 * node* or libnode*, each file's constants read once). A process known already is left as it is,
 * unless exec. */
void v8frames_add_process(struct v8frames *v8, pid_t pid, bool exec);
/* pid mapped e (its mmap record): a new mapping of its V8's file (V8 maps its embedded builtins
 * again at start-up) is V8's code too, and the walker is told; a libnode mapped after the
 * process's first sample (dlopen) is looked at now. */
void v8frames_note_mapping(struct v8frames *v8, pid_t pid, const struct procmap_entry *e);
/* The walker gave a function an id: its name, script and line are read now. 0 or -ENOMEM. */
int v8frames_func_event(struct v8frames *v8, const struct firn_v8_func_event *e);
/* The process ended: forgotten (what was read of its functions stays). */
void v8frames_forget(struct v8frames *v8, pid_t pid);
/* Resolves tagged JavaScript frame v of pid (as struct frame_resolver's resolve): 1 frame, or 0
 * when its function was never read ("[unknown]"). */
int v8frames_resolve(struct v8frames *v8, pid_t pid, uint64_t v, struct resolved_frame *out, int max);
void v8frames_get_stats(const struct v8frames *v8, struct v8frames_stats *st);

/* The runtime (lib/runtimes/runtime.h, lib/runtimes/v8runtime.c) of these frames: "js" (--no-js), its stats a
 * struct v8frames_stats. */
struct runtime_ops;
extern const struct runtime_ops runtime_v8;

/* The walker's values for a V8 with constants c (its code ranges p->text and epoch left for the
 * caller): 0 with *p filled, or -EPROTO with the reason in why (len bytes): a layout the walker
 * cannot read (pointer compression, offsets out of its reach). */
int v8frames_proc_of(const struct v8consts *c, struct firn_v8_proc *p, char *why, size_t len);

#define V8FUNC_SCRIPT_MAX 4096 /* a script name's room: a path of PATH_MAX bytes, with its NUL */
#define V8FUNC_CUT "..."       /* how a name or script name too long for its room ends */

/* One function as read from process memory: name ("" for an anonymous one), script name ("":
 * none) and line of its start (0: unknown). A name or script name longer than its room is cut
 * visibly: at a character's boundary, ending in V8FUNC_CUT. */
struct v8func {
	char name[256];
	char script[V8FUNC_SCRIPT_MAX];
	uint32_t line;
};
/* Reads the SharedFunctionInfo at tagged pointer sfi of pid with constants c through mem.
 * 0, -EFAULT (unreadable), -EINVAL (not a SharedFunctionInfo). For tests and fuzzing too. */
int v8frames_read_func(const struct v8consts *c, const struct v8mem *mem, pid_t pid, uint64_t sfi,
		       struct v8func *out);

#endif
