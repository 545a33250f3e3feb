/* The recording session: one object that owns the sampler, the symbolizer, the capture (and its
 * spill of parked samples) and the process lifecycle, so that a command only says what to record
 * and writes what comes out.
 *
 * One process model: a table of every process's executable mappings (lib/procmap.h), fed by
 * process events (lib/procevents.h: the kernel's side-band exec/mmap/fork/exit records, opened
 * at recorder_new; a fake source in tests); /proc/PID/maps is read once, only for a process
 * older than the events. The symbolizer's snapshots and the DWARF unwinder's process
 * descriptions are made from it. Where the side-band event cannot be opened, processes are
 * snapshotted from /proc at their first sample and again shortly after, as before.
 *
 * What it does between recorder_start and recorder_finish, in recorder_poll:
 * - process events are read and applied; a process is snapshotted at its first sample, and its
 *   snapshot follows what it maps later; JIT code met without a table reopens its perf map;
 * - a process that calls exec keeps its old image's snapshot until the samples it took before
 *   the exec are symbolized with it and parked; then the new image's snapshot is installed (a
 *   process first sampled just after its exec starts with its image before it);
 * - ended processes are symbolized (once their files are indexed, by a worker thread), parked on
 *   disk and forgotten; past max_entries held entries, live processes' entries are parked too;
 *   freed memory goes back to the system now and then (malloc_trim);
 * - kallsyms is loaded in a thread once the recording outlives a short command;
 * - with USDT events: the probes of each -e usdt spec are attached at recorder_new (one sample
 *   type per probe, in spec order); with -a the processes mapping a probed object are snapshotted
 *   ahead; with -p or a command the processes' maps are watched to tell, at the end, a spec
 *   without hits whose objects no process mapped (a warning through diag()).
 *
 * Warnings and notes go through lib/diag.h (DIAG_WARN: "cannot attach to USDT probe ...", "cannot
 * find 'x' in process N ...", "no hits for ..."; DIAG_INFO: what was attached, what was held at
 * the end). Failures return -errno (or NULL + errno) and leave a one-line message, ready to print
 * after "firn: ", in the why buffer (recorder_new) or in recorder_error.
 *
 * Exists now: new, add_command, start, poll, stop, finish, stats, error, free.
 * Samples come through a sample source (lib/sample_source.h): the BPF sampler is its transport;
 * tests give a fake one and a fake event source, and run the whole lifecycle without root.
 * Comes next (not declared yet): recorder_cut() -> the profile of the interval since the last cut
 * (for firn top and a continuous mode).
 * One thread at a time. */
#ifndef FIRN_RECORDER_H
#define FIRN_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "profile.h"
#include "sample_source.h"
#include "sampler.h"

struct recorder;

struct recorder_opts {
	/* targets: every process (all), these processes (pids), or neither (a command, added
	 * with recorder_add_command) */
	bool all;
	const pid_t *pids;          /* borrowed for the recorder's life */
	int npids;
	/* "cpu-clock", "off-cpu" or "usdt:PATH:PROVIDER:NAME" (validated by the caller), in order;
	 * none: cpu-clock alone. Borrowed for the recorder's life. */
	const char *const *events;
	/* libfirn-cuda.so (NULL: no GPU events): its probes are attached (in the -p processes that
	 * map a file of its name, else wherever its file is mapped) and the sample types gpu_time
	 * (nanoseconds) and gpu_launches (count) follow the events' */
	const char *cuda_lib;
	int nevents;
	/* off-cpu: preempted switch-outs count too; waits under off_cpu_min_ns are counted only in
	 * the statistics; 1 wait in off_cpu_rate is sampled, its time scaled by it (0: 1) */
	bool off_cpu_runnable;
	uint64_t off_cpu_min_ns;
	uint32_t off_cpu_rate;
	unsigned freq;              /* samples per second per CPU */
	const char *call_graph;     /* as the user named it (a comment of the profile) */
	enum sampler_unwind unwind;
	uint64_t unwind_memory;     /* bytes of unwind rows at most */
	bool kernel;                /* take kernel stacks */
	bool demangle;              /* C++ and Rust names demangled */
	bool no_python;             /* no Python frames: the interpreter's native frames only */
	const char *spill_dir;      /* where parked samples go (NULL: $TMPDIR, else /tmp); copied */
	size_t max_entries;         /* entries held before live processes' are parked (0: 65536) */
	uint32_t stack_entries;     /* stacks the kernel holds between drains (0: the sampler's) */
	int argc;                   /* the profiled command line, for the profile's comments */
	char **argv;
	/* where process events come from (exec, mmap, fork, exit: lib/procevents.h); borrowed.
	 * NULL: the kernel's side-band records, or /proc where those cannot be opened */
	struct proc_source *events_source;
	/* where samples come from (lib/sample_source.h), made at recorder_new with the
	 * recorder's callbacks; NULL: the BPF sampler. arg is passed to it */
	sample_source_new_fn *sample_source_new;
	void *sample_source_arg;
};

/* What a recording counted, for the summary. After recorder_finish, as it was when the samples
 * were last drained. */
struct recorder_stats {
	struct sampler_stats sampler;
	uint64_t start_ns, end_ns;  /* wall clock (end_ns 0 until recorder_stop) */
};

/* Loads the BPF programs, starts the symbolizer, adds the pids and attaches the USDT probes of
 * the events; the profile is started (not yet sampling). NULL + errno on failure, with the
 * message in why (len bytes). */
struct recorder *recorder_new(const struct recorder_opts *o, char *why, size_t len);
/* Adds a command held before exec (pid): it is sampled from its exec on, and the unwind tables
 * of its program (file, argv[0]) and of what it maps at exec are built ahead, so its first
 * samples unwind completely. 0 or -errno (recorder_error). */
int recorder_add_command(struct recorder *r, pid_t pid, const char *file);
/* Opens the perf events and attaches: sampling starts, and the recording's time with it.
 * 0 or -errno (recorder_error). */
int recorder_start(struct recorder *r);
/* Waits up to timeout_ms for process events and handles the lifecycle (see above). A signal
 * is no failure. 0 or -errno (recorder_error): the recording cannot go on. */
int recorder_poll(struct recorder *r, int timeout_ms);
/* Ends sampling (the recording's end time); entries stay to be finished. */
void recorder_stop(struct recorder *r);
/* Drains what is left, symbolizes every sample into the profile and adds the metadata. Returns
 * the profile, owned by the recorder (valid until recorder_free), or NULL + errno
 * (recorder_error). */
struct profile *recorder_finish(struct recorder *r);
/* Fills st (see struct recorder_stats). */
void recorder_stats(const struct recorder *r, struct recorder_stats *st);
struct pyframes_stats;
/* Python frames: what user space counted (st) and the BPF unwinder's samples of Python
 * processes by outcome (bpf[4], enum firn_py_stat order). Zeros with no_python. */
void recorder_python_stats(const struct recorder *r, struct pyframes_stats *st, uint64_t bpf[4]);
/* The message of the last failure ("cannot read samples: ..."); "" when none. */
const char *recorder_error(const struct recorder *r);
/* Ends what still runs and frees everything (NULL: nothing). */
void recorder_free(struct recorder *r);

#endif
