/* The recording session: one object that owns the sampler, the DWARF unwinder's tables, the
 * symbolizer, the capture (and its spill of parked samples) and the process lifecycle, so that a
 * command only says what to record and writes what comes out. The sampler is transport only:
 * BPF maps, drains and notices (first sample, exec, exit, code without a table), which the
 * recorder turns into snapshots and unwind tables.
 *
 * One process model: a table of every process's executable mappings (lib/proc/procmap.h), fed by
 * process events (lib/proc/procevents.h: the kernel's side-band exec/mmap/fork/exit records, opened
 * at recorder_new; a fake source in tests); /proc/PID/maps is read once, only for a process
 * older than the events. The table is the process dispatcher's (lib/source/procdispatch.h), where the
 * side-band records and the sample source's notices meet; its listeners are the runtimes
 * (lib/runtimes/runtime.h), the snapshots (lib/record/procsnap.h), the unwinder and the USDT/CUDA watching. The symbolizer's snapshots and the DWARF unwinder's process
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
 * Warnings and notes go through lib/base/diag.h (DIAG_WARN: "cannot attach to USDT probe ...", "cannot
 * find 'x' in process N ...", "no hits for ..."; DIAG_INFO: what was attached, what was held at
 * the end). Failures return -errno (or NULL + errno) and leave a one-line message, ready to print
 * after "firn: ", in the why buffer (recorder_new) or in recorder_error.
 *
 * Cutting into intervals (firn top, a continuous mode): recorder_cut hands out the profile of
 * what was counted since the last cut (or the start). The recorder keeps one profile for its
 * whole life: its strings, mappings, functions and locations only grow (ids and string pointers
 * stay valid until recorder_free, and the symbolizer's location cache with them: an address is
 * not resolved again at every cut), while its samples are replaced at every cut. A continuous
 * recording that keeps no running profile (opts.renew_tables) lets the tables go instead once
 * they hold many times what a cut uses: its memory follows the interval, not its age. So a cut costs
 * what the interval sampled (plus a pass over the entries held): the sample source's counts
 * are reset (reset_counts) after each cut, and the samples of processes that ended meanwhile
 * wait parked (spilled) for the next cut. The process events that came before a cut's samples
 * are applied first; without them (/proc polling), processes first sampled less than the
 * second-snapshot delay ago are snapshotted again before a cut symbolizes them. No running
 * profile is kept across cuts: a caller that wants one keeps it over the cuts' location ids
 * (firn top: a decaying window, lib/analyze/window.h).
 *
 * Exists now: new, add_command, start, poll, event_fd, profile, cut, stop, finish, stats, error, free.
 * Samples come through a sample source (lib/source/sample_source.h): the BPF sampler is its transport;
 * tests give a fake one and a fake event source, and run the whole lifecycle without root.
 * One thread at a time. */
#ifndef FIRN_RECORDER_H
#define FIRN_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "record/capture.h"
#include "model/profile.h"

struct recorder;
struct proc_source;   /* lib/proc/procevents.h */
struct sample_source; /* lib/source/sample_source.h */
struct sampler_opts;  /* lib/source/sampler.h */
struct runtime_ops;   /* lib/runtimes/runtime.h */
struct runtime_set;

/* How user stacks are unwound. */
enum recorder_unwind {
	RECORDER_UNWIND_FP = 0, /* frame pointers */
	RECORDER_UNWIND_DWARF,  /* CFI tables evaluated in the kernel; no table: the unwind stops */
	RECORDER_UNWIND_AUTO,   /* CFI tables where a mapping has them, frame pointers elsewhere */
};

/* How often a caller that waits on recorder_event_fd itself should call recorder_poll anyway
 * when it does not ask recorder_wait_ms: second snapshots of new processes come due and the
 * in-kernel counts are drained then. */
#define RECORDER_POLL_MS 50
/* The longest recorder_wait_ms gives: a recording with nothing due sleeps this long between
 * looks (its events wake it sooner). */
#define RECORDER_IDLE_MS 500

struct recorder_opts {
	/* targets: every process (all), these processes (pids), or neither (a command, added
	 * with recorder_add_command) */
	bool all;
	const pid_t *pids;          /* borrowed for the recorder's life */
	int npids;
	/* the -e values ("cpu-clock", "usdt:PATH:PROVIDER:NAME": events of lib/record/event_table.h,
	 * validated by the caller), in order; none: cpu-clock alone. Borrowed for the recorder's
	 * life. */
	const char *const *events;
	/* libfirn-cuda.so (NULL: no GPU events): its probes are attached (in the -p processes that
	 * map a file of its name, else wherever its file is mapped) and the sample types gpu_time
	 * (nanoseconds) and gpu_launches (count) follow the events' */
	const char *cuda_lib;
	/* libfirn-alloc.so (-e alloc; NULL: none): its otel_memory probes are attached wherever its
	 * file is mapped (the command preloads it) */
	const char *alloc_lib;
	/* -e alloc's --alloc-rate (the mean bytes between samples; 0: unknown): the profile's
	 * period when alloc is its first event (capture_meta.alloc_rate) */
	int64_t alloc_rate;
	uint32_t alloc_live; /* -e alloc: sampled allocations followed at a time (0: 65536) */
	/* -e alloc: where allocations are seen. PRELOAD: alloc_lib's probes only (a command
	 * preloads it). UPROBE: uprobes on the malloc family of each target's libc, sampled in
	 * BPF at alloc_rate (bpf/alloc.bpf.h; a command's: wherever the host's libc is mapped).
	 * AUTO: a command's preloaded library; -p processes that map no libfirn-alloc.so, -a and
	 * --cgroup: uprobes. */
	enum recorder_alloc_mode {
		RECORDER_ALLOC_AUTO, RECORDER_ALLOC_PRELOAD, RECORDER_ALLOC_UPROBE
	} alloc_mode;
	int nevents;
	/* --cgroup: only the tasks in (or below) these cgroup v2 directories (lib/proc/cgroup.h:
	 * cgroup_resolve's, at most CGROUP_FILTER_MAX), filtered in the kernel; borrowed. With pids
	 * or a command: those of them in the cgroups. 0: no filter */
	const char *const *cgroups;
	int ncgroups;
	/* samples are labelled with their process's exe, cgroup (v2 path) and container_id too
	 * (lib/record/proclabels.h), read at its first sample */
	bool process_labels;
	/* off-cpu: preempted switch-outs count too; waits under off_cpu_min_ns are counted only in
	 * the statistics; 1 wait in off_cpu_rate is sampled, its time scaled by it (0: 1) */
	bool off_cpu_runnable;
	uint64_t off_cpu_min_ns;
	uint32_t off_cpu_rate;
	unsigned freq;              /* samples per second per CPU */
	const char *call_graph;     /* as the user named it (a comment of the profile) */
	enum recorder_unwind unwind;
	uint64_t unwind_memory;     /* bytes of unwind rows at most */
	bool kernel;                /* take kernel stacks */
	bool demangle;              /* C++ and Rust names demangled */
	/* runtimes turned off by name (--no-python: "python", --no-js: "js") and the opt_in ones
	 * turned on ("gpu" with cuda_lib), by the names of the registry (lib/record/runtimes.h);
	 * borrowed */
	const char *const *runtimes_off;
	int nruntimes_off;
	const char *const *runtimes_on;
	int nruntimes_on;
	/* the runtimes that may give frames (NULL-terminated; NULL: lib/record/runtimes.c's runtimes[]),
	 * borrowed */
	const struct runtime_ops *const *runtimes;
	const char *spill_dir;      /* where parked samples go (NULL: $TMPDIR, else /tmp); copied */
	size_t max_entries;         /* entries held before live processes' are parked (0: 65536) */
	uint32_t stack_entries;     /* stacks the kernel holds between drains (0: the sampler's) */
	/* the in-kernel counts may be drained this far apart, and the recorder sleeps as long
	 * when nothing else is due (lib/source/sampler.h's drain_max_ns; 0: RECORDER_IDLE_MS):
	 * for continuous recordings, whose cost counts over hours */
	uint64_t drain_max_ns;
	/* a continuous recording whose cuts are not merged: at a cut, tables that hold many times
	 * the locations the cut's samples use are started afresh (capture_renew) before anything
	 * is added again, so memory follows what an interval uses, not what the recording ever
	 * resolved; the addresses are resolved again. A cut's ids and strings are then valid only
	 * until the next recorder_poll, recorder_cut or recorder_finish */
	bool renew_tables;
	/* recorder_finish counts the BPF maps' kernel memory (recorder_stats' bpf_map_bytes and
	 * bpf_maps, else 0): an fdinfo file read per descriptor firn holds, ~1-2 ms at the end of a
	 * recording that only -v's summary shows */
	bool map_memory;
	int argc;                   /* the profiled command line, for the profile's comments */
	char **argv;
	/* where process events come from (exec, mmap, fork, exit: lib/proc/procevents.h); borrowed.
	 * NULL: the kernel's side-band records, or /proc where those cannot be opened */
	struct proc_source *events_source;
	/* where samples come from (lib/source/sample_source.h), made at recorder_new with the
	 * recorder's callbacks; NULL: the BPF sampler. arg is passed to it */
	struct sample_source *(*sample_source_new)(const struct sampler_opts *o, void *arg,
						   const char **why); /* a sample_source_new_fn */
	void *sample_source_arg;
};

/* What a recording counted, for the summary; counts are of the whole session (cuts do not
 * reset them). After recorder_finish, as it was when the samples were last drained.
 * taken = every sample the BPF program saw for a target = stored + lost (counts_full +
 * stacks_full); samples whose user or kernel stack could not be read are stored without it. */
struct recorder_stats {
	uint64_t taken, stored;
	uint64_t counts_full, stacks_full, events_full, user_stack_errors, kernel_stack_errors;
	/* DWARF unwinds by how they ended: complete, no mapping, no row, unsupported rule, bad
	 * read, depth, no user stack (these add up to every sample taken); then samples that used
	 * frame pointers somewhere, samples that met a mapping found through the kernel's VMA
	 * lookup, samples that used frame pointers where a table had no row */
	uint64_t unwind[10];
	/* unwind tables */
	uint64_t unwind_files, unwind_rows, unwind_bytes, unwind_max_bytes, unwind_no_table,
		unwind_over_limit, unwind_build_ns, unwind_too_many_maps;
	uint64_t unwind_cached; /* tables read from the on-disk cache (not built) */
	/* kernel memory of firn's BPF maps, and their number (after recorder_finish with
	 * opts.map_memory; else 0) */
	uint64_t bpf_map_bytes, bpf_maps;
	/* held now: sampler entries, stacks, threads; process snapshots; processes retired */
	uint64_t entries, stacks, threads, snapshots, retired_processes;
	/* cpu-clock samples by whether all their frames were named, the others by the worst reason
	 * (capture_frame_stats); process records the kernel lost (missed mappings) */
	struct capture_frame_stats frames;
	uint64_t proc_records_lost;
	uint64_t jit_no_map; /* processes that ran JIT code without a perf map to name it */
	uint64_t cgroup_filtered; /* --cgroup: hits outside the cgroups, left out in the kernel */
	int ncpus;                  /* CPUs sampled */
	uint64_t start_ns, end_ns;  /* wall clock (end_ns 0 until recorder_stop) */
	/* the events' statistics, as the sampler counts them (lib/source/sampler.h; their fields are
	 * named in lib/record/event_table.h): -e off-cpu's waits, --cuda's launches and records */
	struct sampler_offcpu_stats off_cpu;
	struct sampler_gpu_stats gpu;
	uint64_t counters[SAMPLER_COUNTERS]; /* the BPF counters of events that name theirs */
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
/* A descriptor that becomes readable when process events wait, for poll(2) next to other
 * inputs (a keyboard); then call recorder_poll with a timeout of 0 (and at least every
 * RECORDER_POLL_MS anyway). */
int recorder_event_fd(const struct recorder *r);
/* How long a caller may wait on recorder_event_fd before the next recorder_poll: until the
 * recorder's next timed work (the source's next drain, a process's second snapshot, a runtime's
 * retry, a watched process's check; RECORDER_POLL_MS while execs wait to be handled), at most
 * max_ms and RECORDER_IDLE_MS (or opts.drain_max_ns, when longer), at least 1. An idle
 * recording wakes about twice a second instead of every RECORDER_POLL_MS. */
int recorder_wait_ms(const struct recorder *r, int max_ms);
/* The profile of the interval since the last cut (or recorder_start): every sample counted
 * since then, of live processes and of those that ended meanwhile, symbolized, with the sample
 * types of the events (the first is the default) and time_nanos/duration_nanos of the interval;
 * no comments. Owned by the recorder, and the same object at every cut and at recorder_finish
 * (whose samples are then those since the last cut). Its samples are valid until the next
 * recorder_cut or recorder_finish; its ids and strings until recorder_free (with
 * opts.renew_tables: until the next recorder_poll, recorder_cut or recorder_finish). The caller may
 * intern strings in it (hist_build does) and read it with samples of its own; it must not
 * change its samples. NULL + errno (recorder_error): the recording cannot go on. */
struct profile *recorder_cut(struct recorder *r);
/* The profile that recorder_cut fills, before any cut: its sample types (those of the events,
 * the default one named) are set from recorder_new on, so a caller can choose one ahead; no
 * samples. Owned by the recorder, valid until recorder_free. */
const struct profile *recorder_profile(const struct recorder *r);
/* Ends sampling (the recording's end time); entries stay to be finished. */
void recorder_stop(struct recorder *r);
/* Drains what is left, symbolizes every sample into the profile and adds the metadata. Returns
 * the profile, owned by the recorder (valid until recorder_free), or NULL + errno
 * (recorder_error). */
struct profile *recorder_finish(struct recorder *r);
/* Fills st (see struct recorder_stats). */
void recorder_stats(const struct recorder *r, struct recorder_stats *st);
/* The runtimes running in the recording (lib/record/runtimes.h: runtime_set_stats reads their
 * counts, runtime_set_summary their summary lines); owned by the recorder. */
const struct runtime_set *recorder_runtimes(const struct recorder *r);
/* The message of the last failure ("cannot read samples: ..."); "" when none. */
const char *recorder_error(const struct recorder *r);
/* Ends what still runs and frees everything (NULL: nothing). */
void recorder_free(struct recorder *r);

#endif
