/* Runtimes: the code that gives a recording frames which are not addresses in an ELF file — an
 * interpreter's functions (CPython, V8's JavaScript), GPU kernels — behind one ops table, as the
 * OpenTelemetry profiler's interpreters are (Loader → Attach → Instance{SynchronizeMappings,
 * Symbolize, Detach}). A runtime is one `struct runtime_ops` and one line in the registry
 * (lib/record/runtimes.h: `runtimes[]`, as git's `commands[]`); the recorder loops over the registry and
 * names no runtime. This layer holds the ops and what a runtime is given; the registry and the set
 * of runtimes running in a recording, which call the ops, sit above it in lib/record.
 *
 * The life of a runtime in one recording (lib/record/recorder.c calls these through runtime_set_*;
 * a runtime the recording turns off, --no-NAME, or does not turn on, opt_in, gets no call):
 *   configure    before the sample source is made (no state yet): the settings its BPF walker
 *                needs in struct sampler_opts, by its tag (walkers: it runs; walkers_late: its
 *                program is loaded when first needed);
 *   new          at recorder_new, with the host (the sample source, the options, the process
 *                table's mappings); may decline (nothing to do in this recording);
 *   attach       a process was first sampled, or called exec (a new image): find the runtime in
 *                it and hand the BPF walker the per-process values it needs (its own struct,
 *                sample_source_set_proc with its tag), or look again later;
 *   on_mapping   a sampled process (attached, or told at its exec) mapped a file (its mmap
 *                record: the loader mapping libpython just after the exec, or a dlopen), or ran
 *                code the unwinder has no table for (entry NULL): the runtime is found now;
 *   on_code      the BPF walker announced a code object's identity (a ring-buffer record whose
 *                header names the runtime's tag, FIRN_EV_ANNOUNCE(tag): struct firn_py_code_event
 *                for Python; its size is the runtime's to check): read what it names while the
 *                process lives;
 *   on_stack     a user stack of the process was drained for the first time (it may live): read
 *                what its tagged frames need;
 *   poll         between batches: retries that came due;
 *   resolve      a tagged frame (bpf/firn.h: FIRN_FRAME(tag, payload)) → plain frames, after the
 *                process may have ended (the capture interns them into the runtime's mapping);
 *   labels       a sample's label context (bpf/firn.h: FIRN_CTX(tag, id)) → key/value labels;
 *   stats        the runtime's own counters, into its own struct (its header names it);
 *   summary      its line of record's summary ("firn: python: ..."), written from those counters
 *                by the runtime itself, so the command names no runtime;
 *   detach       the process ended and its samples are parked: forget it;
 *   free         at recorder_free.
 * Every op but name, new and free may be NULL (nothing to do). Ops are called on the recorder's
 * thread, never from inside a sample source's drain or retire loop, with the process events
 * applied before (the host's maps are current).
 *
 * A second interpreter (V8) fits the same shape: attach and on_mapping read a libnode's or node's v8dbg_*
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
struct runtime; /* a runtime's state in one recording: each runtime's own type */

/* The executable mappings of process pid as the caller knows them (a recording's process table,
 * fed by the kernel's mmap records), valid until the caller's next change to them; NULL when it
 * does not know the process (/proc/PID/maps is read then). What a recording hands its runtimes
 * and each runtime its interpreter reader (pyframes_set_maps, v8frames_set_maps). */
typedef const struct procmap *(*runtime_maps_fn)(void *ctx, pid_t pid);

/* What a recording offers its runtimes: borrowed, valid for the recording's life. */
struct runtime_host {
	struct sample_source *ss; /* the transport: each runtime's BPF walker by its tag
				   * (set_proc, walker_stats, walker_name; NULL in configure) */
	bool demangle;            /* names demangled (C++, CUDA kernels) */
	bool all;                 /* every process is sampled (-a) */
	/* the profiled command's argv (argc 0: -p or -a, no command) */
	int argc;
	char *const *argv;
	/* bit i: entry i of the registry is off in this recording, so it is neither configured nor
	 * made (lib/record/runtimes.h reads it; a runtime need not) */
	uint32_t off;
	/* The process table's executable mappings of pid (valid until the next process event is
	 * applied), NULL when not known (the runtime reads /proc/PID/maps then). Never reads
	 * events itself: safe from inside any op. */
	runtime_maps_fn maps;
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
	/* the help line of record's --no-NAME, which turns it off (cmd/record.c makes the option
	 * from this row); NULL: no such option (an opt_in runtime's) */
	const char *off_help;
	bool opt_in;                  /* off unless the recording turns it on by name (--cuda: "gpu") */
	unsigned tag;                 /* FIRN_FRAME_KIND_* of the values it resolves (1..15) */
	enum frame_runtime frames;    /* the runtime its profile mapping is marked with */
	void (*configure)(const struct runtime_host *h, struct sampler_opts *so);
	/* Its state for a recording: NULL + errno ENOMEM fails the recording; NULL + errno 0 means
	 * nothing to do in it. A runtime turned off is never made (see opt_in). */
	struct runtime *(*new)(const struct runtime_host *h);
	void (*free)(struct runtime *rt);
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
	/* As struct frame_resolver's labels: the labels of the label context id its walker put in
	 * a sample's key (bpf/firn.h's FIRN_CTX with its tag), up to max; how many, or -errno. */
	int (*labels)(struct runtime *rt, pid_t pid, uint32_t id, struct resolved_label *out,
		      int max);
	/* As struct frame_resolver's proc_labels: the labels of every sample of process pid, up
	 * to max; how many, or -errno. Answers from what it read before (no /proc on this path). */
	int (*proc_labels)(struct runtime *rt, pid_t pid, struct resolved_label *out, int max);
	/* Fills out (size bytes: the runtime's own stats struct, e.g. struct pyframes_stats);
	 * 0, or -EINVAL when size is not its struct's. */
	int (*stats)(const struct runtime *rt, void *out, size_t size);
	/* Its summary line(s) into buf (len bytes, each line ending in '\n'; "" when it has nothing
	 * to say: no process ran it). Returns the length, truncated at len - 1 (as snprintf's,
	 * capped). Called after the recording ended, before free. */
	size_t (*summary)(const struct runtime *rt, char *buf, size_t len);
	void (*detach)(struct runtime *rt, pid_t pid);
	/* A cut's samples were named (recorder_cut): what no cut asked for since may go. */
	void (*cut)(struct runtime *rt);
};

#endif
