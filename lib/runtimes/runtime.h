/* Runtimes: the code that gives a recording frames which are not addresses in an ELF file — an
 * interpreter's functions (CPython, V8's JavaScript), GPU kernels — behind one ops table, as the
 * OpenTelemetry profiler's interpreters are (Loader → Attach → Instance{SynchronizeMappings,
 * Symbolize, Detach}). A runtime is one `struct runtime_ops` and one line in the registry
 * (lib/record/runtimes.c: `runtimes[]`, as git's `commands[]`); the recorder loops over the registry and
 * names no runtime.
 *
 * The life of a runtime in one recording (lib/record/recorder.c calls these through runtime_set_*):
 *   configure    before the sample source is made (no state yet): the settings its BPF walker
 *                needs in struct sampler_opts (loaded ahead, or late when first needed);
 *   new          at recorder_new, with the host (the sample source, the options, the process
 *                table's mappings); may decline (an option turned it off, --cuda not given);
 *   probe        a file a process maps: is it this runtime's (libpython, libnode/node)? Each
 *                file is read once (the runtime caches by file identity);
 *   attach       a process was first sampled, or called exec (a new image): find the runtime in
 *                it and hand the BPF walker the per-process values it needs (through the sample
 *                source's op for that walker, e.g. sample_source_set_python), or look again later;
 *   on_mapping   a sampled process (attached, or told at its exec) mapped a file (its mmap
 *                record: the loader mapping libpython just after the exec, or a dlopen), or ran
 *                code the unwinder has no table for (entry NULL): the runtime is found now;
 *   on_code      the BPF walker announced a code object's identity (a ring-buffer record of the
 *                runtime's tag: struct firn_py_code_event for Python): read what it names while
 *                the process lives;
 *   on_stack     a user stack of the process was drained for the first time (it may live): read
 *                what its tagged frames need;
 *   poll         between batches: retries that came due;
 *   resolve      a tagged frame (bpf/firn.h: FIRN_FRAME(tag, payload)) → plain frames, after the
 *                process may have ended (the capture interns them into the runtime's mapping);
 *   stats        the runtime's own counters, into its own struct (its header names it);
 *   summary      its line of record's summary ("firn: python: ..."), written from those counters
 *                by the runtime itself, so the command names no runtime;
 *   detach       the process ended and its samples are parked: forget it;
 *   free         at recorder_free.
 * Every op but name, new and free may be NULL (nothing to do). Ops are called on the recorder's
 * thread, never from inside a sample source's drain or retire loop, with the process events
 * applied before (the host's maps are current).
 *
 * A second interpreter (V8) fits the same shape: probe reads a libnode's or node's v8dbg_*
 * constants (lib/runtimes/v8consts.h) once per file; attach hands the JavaScript walker that process's
 * values; on_code takes its code-identity announcements (a function's name and script); resolve
 * names JavaScript frames; its frames go in its own mapping with its own enum frame_runtime. */
#ifndef FIRN_RUNTIME_H
#define FIRN_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/frame_kind.h"
#include "model/resolver.h"

struct procmap;
struct procmap_entry;
struct sample_source;
struct sampler_opts;
struct procdispatch;
struct procdispatch_listener;
struct runtime; /* a runtime's state in one recording: each runtime's own type */

/* What a recording offers its runtimes: borrowed, valid for the recording's life. */
struct runtime_host {
	struct sample_source *ss; /* the transport: the ops of each runtime's BPF walker (NULL
				   * in configure) */
	bool demangle;            /* names demangled (C++, CUDA kernels) */
	bool all;                 /* every process is sampled (-a) */
	/* the names of the runtimes turned off (--no-python: "python"); n of them */
	const char *const *off;
	int noff;
	bool no_python;           /* recorder_opts.no_python: as "python" in off */
	/* the profiled command's argv (argc 0: -p or -a, no command) */
	int argc;
	char *const *argv;
	const char *cuda_lib;     /* --cuda's library (NULL: no GPU frames) */
	/* The process table's executable mappings of pid (valid until the next process event is
	 * applied), NULL when not known (the runtime reads /proc/PID/maps then). Never reads
	 * events itself: safe from inside any op. */
	const struct procmap *(*maps)(void *ctx, pid_t pid);
	void *ctx;
};

/* The host's process table as a runtime's lookup of a process's mappings (ctx: the host, a
 * const struct runtime_host *): what each runtime hands its interpreter reader. */
static inline const struct procmap *runtime_host_maps(void *ctx, pid_t pid)
{
	const struct runtime_host *h = ctx;

	return h->maps ? h->maps(h->ctx, pid) : NULL;
}

struct runtime_ops {
	const char *name;             /* "python", "gpu": its --no-NAME, its stats */
	unsigned tag;                 /* FIRN_FRAME_KIND_* of the values it resolves (1..15) */
	enum frame_runtime frames;    /* the runtime its profile mapping is marked with */
	void (*configure)(const struct runtime_host *h, struct sampler_opts *so);
	/* Its state for a recording: NULL + errno ENOMEM fails the recording; NULL + errno 0 means
	 * not wanted in it (turned off, its option not given). */
	struct runtime *(*new)(const struct runtime_host *h);
	void (*free)(struct runtime *rt);
	/* 1: the file of e (mapped by pid) is this runtime's; 0: not; -errno: cannot tell. */
	int (*probe)(struct runtime *rt, pid_t pid, const struct procmap_entry *e);
	void (*attach)(struct runtime *rt, pid_t pid, bool exec, uint64_t now_ns);
	void (*on_mapping)(struct runtime *rt, pid_t pid, const struct procmap_entry *e,
			   uint64_t now_ns);
	/* rec: len bytes of the walker's announcement (the type its header names); 0 or -ENOMEM
	 * (the code stays unnamed, the recording goes on) */
	int (*on_code)(struct runtime *rt, const void *rec, size_t len);
	void (*on_stack)(struct runtime *rt, pid_t pid, const uint64_t *ips, uint32_t len);
	/* timed work (retries); returns when it next wants to be polled (CLOCK_MONOTONIC ns), 0:
	 * no more until an event */
	uint64_t (*poll)(struct runtime *rt, uint64_t now_ns);
	/* As struct frame_resolver's resolve (lib/model/resolver.h): frames filled, 0, or -errno. */
	int (*resolve)(struct runtime *rt, pid_t pid, uint64_t v, struct resolved_frame *out,
		       int max);
	/* Fills out (size bytes: the runtime's own stats struct, e.g. struct pyframes_stats);
	 * 0, or -EINVAL when size is not its struct's. */
	int (*stats)(const struct runtime *rt, void *out, size_t size);
	/* Its summary line(s) into buf (len bytes, each line ending in '\n'; "" when it has nothing
	 * to say: no process ran it). Returns the length, truncated at len - 1 (as snprintf's,
	 * capped). Called after the recording ended, before free. */
	size_t (*summary)(const struct runtime *rt, char *buf, size_t len);
	void (*detach)(struct runtime *rt, pid_t pid);
};

/* The registry: every runtime firn has, NULL-terminated (lib/record/runtimes.c). */
extern const struct runtime_ops *const runtimes[];

/* The runtimes running in one recording. */
struct runtime_set {
	struct runtime_slot {
		const struct runtime_ops *ops;
		struct runtime *rt;
	} *slots;
	size_t n;
	/* runtime_set_listener's: the dispatcher, and which processes are sampled */
	struct procdispatch *pd;
	bool (*sampled)(void *ctx, pid_t pid);
	void *sampled_ctx;
};

struct recorder_opts;
/* The host of a recording with options o (lib/record/recorder.h; the runtimes' options read there,
 * the sample source left NULL), maps and ctx as struct runtime_host's. */
void runtime_host_of_opts(struct runtime_host *h, const struct recorder_opts *o,
			  const struct procmap *(*maps)(void *ctx, pid_t pid), void *ctx);
/* Lets each runtime of reg (NULL: runtimes[]) that is not off set what its walker needs in so. */
void runtime_set_configure(const struct runtime_ops *const *reg, const struct runtime_host *h,
			   struct sampler_opts *so);
/* Starts each runtime of reg (NULL-terminated; NULL: runtimes[]) that wants this recording.
 * 0 or -errno (-ENOMEM; -EINVAL: two runtimes with one tag), the set then empty. */
int runtime_set_init(struct runtime_set *s, const struct runtime_ops *const *reg,
		     const struct runtime_host *h);
void runtime_set_release(struct runtime_set *s);
/* Whether runtime name is off in h (--no-NAME). For a runtime's new. */
bool runtime_host_off(const struct runtime_host *h, const char *name);
/* The running state of ops in s (NULL: not running). */
struct runtime *runtime_set_find(const struct runtime_set *s, const struct runtime_ops *ops);
/* The ops, to every running runtime that has them. */
void runtime_set_attach(struct runtime_set *s, pid_t pid, bool exec, uint64_t now_ns);
void runtime_set_on_mapping(struct runtime_set *s, pid_t pid, const struct procmap_entry *e,
			    uint64_t now_ns);
/* To the runtime of tag only. */
void runtime_set_on_code(struct runtime_set *s, unsigned tag, const void *rec, size_t len);
void runtime_set_on_stack(struct runtime_set *s, pid_t pid, const uint64_t *ips, uint32_t len);
/* Polls every runtime; returns the earliest time one wants to be polled again (0: none). */
uint64_t runtime_set_poll(struct runtime_set *s, uint64_t now_ns);
void runtime_set_detach(struct runtime_set *s, pid_t pid);
/* The resolver of slot i's frames, for capture_set_resolver(cap, slot's tag, ...): its
 * mapping name and runtime from lib/model/frame_kind.h's table. ctx: the slot (valid while s is). */
struct frame_resolver runtime_set_resolver(const struct runtime_set *s, size_t i);
/* The runtimes as a process listener of pd (lib/source/procdispatch.h), ctx s: attach at a process's
 * first sample or exec (after the records waiting are read), on_mapping at an mmap record of a
 * process that sampled(ctx, pid) says is sampled and at code without a table, on_code, on_stack. */
void runtime_set_listener(struct runtime_set *s, struct procdispatch *pd,
			  bool (*sampled)(void *ctx, pid_t pid), void *ctx,
			  struct procdispatch_listener *out);
/* The stats of the running ops into out (zeros when it is not running): as its stats op. */
int runtime_set_stats(const struct runtime_set *s, const struct runtime_ops *ops, void *out,
		      size_t size);
/* The summary lines of every running runtime with a summary op, in registry order, into buf
 * (len bytes; "" when none has anything to say). Returns the length, truncated at len - 1. */
size_t runtime_set_summary(const struct runtime_set *s, char *buf, size_t len);

#endif
