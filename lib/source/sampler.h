/* The BPF sampler's lifecycle: load the skeleton, open a cpu-clock perf event on every online CPU,
 * attach (and attach USDT probes), drain the in-kernel counts while recording (double-buffered,
 * so no increment is lost), and keep every stack and count in user space, by event. Process
 * events (first sample, exec) are passed to a callback so the caller can snapshot what
 * symbolization needs while the process lives. */
#ifndef FIRN_SAMPLER_H
#define FIRN_SAMPLER_H

#include <bpf/libbpf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sampler;
struct procmap;

/* How user stacks are unwound. */
enum sampler_unwind {
	UNWIND_FP = 0,  /* frame pointers (bpf_get_stack) */
	UNWIND_DWARF,   /* CFI tables evaluated in the kernel; no table: the unwind stops */
	UNWIND_AUTO,    /* CFI tables where a mapping has them, frame pointers elsewhere */
};

#define SAMPLER_MAX_PROGS 8 /* event programs (and counter maps) of one recording */
#define SAMPLER_COUNTERS 16 /* the counters of those events, all together */

struct sampler_opts {
	unsigned freq;          /* samples per second per CPU */
	bool all;               /* every process; otherwise only targets (sampler_add_target) */
	bool follow_children;   /* children of targets become targets */
	bool kernel, user;      /* which stacks to take */
	enum sampler_unwind unwind;
	uint64_t unwind_memory; /* bytes of unwind rows at most (DWARF and AUTO) */
	uint32_t stack_entries; /* stacks the kernel holds between drains (0: 16384) */
	bool no_cpu_clock;      /* no timed samples (sampler_start opens no perf event) */
	bool usdt;              /* load the USDT program (for sampler_attach_usdt) */
	/* off-CPU time: the sched_switch program adds the time a target thread waits to the stacks
	 * it stopped with, as event FIRN_EVENT_OFF_CPU (its count is nanoseconds) */
	bool off_cpu;
	bool off_cpu_runnable;  /* preempted switch-outs are waits too (run-queue time) */
	uint64_t off_cpu_min_ns; /* shorter waits are counted in the statistics only */
	uint32_t off_cpu_rate;  /* 1 switch-out in this many is sampled, its time x this (0: 1) */
	/* off-CPU: the target threads already off the CPU at sampler_start get a wait from then
	 * (targets that exist before the recording: pids, all). A kernel that cannot load the
	 * iterator doing it (sleepable, bpf_copy_from_user_task: 5.18+) gets a warning and the
	 * waits begun from the start only. */
	bool off_cpu_at_start;
	bool cuda;              /* size the GPU maps (libfirn-cuda's probes, attached as usdt) */
	bool alloc;             /* route the otel_memory probes (-e alloc, attached as usdt) */
	uint32_t alloc_live;    /* entries of the map that follows sampled allocations to their
				 * free (0: FIRN_ALLOC_LIVE_MAX); more are counted as overflow */
	uint64_t alloc_rate;    /* -e alloc's uprobes: mean bytes between samples (0: 512 KiB) */
	/* programs of '?uprobe'/'?uretprobe' sections loaded for sampler_attach_uprobe (an event's
	 * probes on functions of a file: -e alloc's on the malloc family) */
	const char *uprobe_progs[SAMPLER_MAX_PROGS];
	size_t nuprobe_progs;
	/* the programs of the events that name theirs (lib/record/event_table.h's bpf_progs; their
	 * sections start with '?': loaded only when named here): loaded, attached by their section
	 * at sampler_start and detached at sampler_stop; none may be named twice */
	const char *progs[SAMPLER_MAX_PROGS];
	size_t nprogs;
	/* the per-CPU arrays of u64 counters those events count into (bpf_counters), each summed
	 * over the CPUs into n uint64_t at byte offset at of struct sampler_stats (its counters) */
	struct sampler_counters {
		const char *map;
		size_t at, n;
	} counters[SAMPLER_MAX_PROGS];
	size_t ncounters;
	/* --cgroup: only tasks in (or below) these cgroup v2 directories are sampled, checked in the
	 * kernel before anything else (lib/proc/cgroup.h; at most CGROUP_FILTER_MAX); 0: every task */
	const char *const *cgroups;
	int ncgroups;
	bool retire;            /* keep the processes that end for sampler_retire */
	/* the in-kernel counts may be drained this far apart (0 or less: every 500 ms) when the
	 * frequency bounds what the maps get meanwhile (cpu-clock samples alone): fewer system
	 * calls and wake-ups where the drains' latency does not matter (continuous recordings).
	 * Processes that end are retired two drains later; a recorder drains for an exec anyway. */
	uint64_t drain_max_ns;
	void (*on_process)(void *ctx, pid_t pid, bool exec); /* first sample of a process, or exec */
	/* a sampled process called exec, at time_ns (CLOCK_MONOTONIC, as the kernel's side-band
	 * records are stamped); NULL: on_process(exec true) hears of it */
	void (*on_exec)(void *ctx, pid_t pid, uint64_t time_ns);
	/* the unwinder met code without a table at addr (0: unknown) in pid — JIT code, or a
	 * library mapped since (at most every 50 ms per process); may be NULL */
	void (*on_code)(void *ctx, pid_t pid, uint64_t addr);
	/* a sampled process ended (its entries wait for sampler_retire); may be NULL */
	void (*on_exit)(void *ctx, pid_t pid);
	/* the runtime walkers that run (1 << tag, a FIRN_FRAME_KIND_*): their frames for the
	 * processes told with sampler_set_proc; bpf/walkers.h says what each row needs */
	uint32_t walkers;
	/* of those, the walkers whose program (a bpf/walkers.h row's prog, which the cpu-clock
	 * program tail-calls; its own maps) is loaded only after sampler_set_proc first names a
	 * process of theirs (at the next sampler_poll or sampler_handle_events, not inside the event
	 * callback) and put in its slot: nothing else is reloaded or re-attached; samples taken
	 * before have native frames only. Ignored with usdt, off_cpu or cuda (their programs walk
	 * the frames themselves). */
	uint32_t walkers_late;
	/* a user stack of pid was drained into user space for the first time (its process may still
	 * live: what it names can be read now); may be NULL */
	void (*on_stack)(void *ctx, pid_t pid, const uint64_t *ips, uint32_t len);
	/* a runtime's walker announced a code object (tag: its FIRN_FRAME_KIND_*, from the ring
	 * record's header, FIRN_EV_ANNOUNCE(tag); rec, len bytes: the walker's record, which only
	 * its runtime reads); may be NULL */
	void (*on_announce)(void *ctx, unsigned tag, const void *rec, size_t len);
	void *ctx;
};

/* One aggregated entry: counts of a (pid, tid, user stack, kernel stack, event). Stacks leaf
 * first. event: one of bpf/firn.h's FIRN_EVENT_* (cpu-clock samples, hits of the USDT probes
 * attached as event N, nanoseconds off the CPU, GPU time and launches). */
struct sampler_entry {
	uint32_t pid, tid;
	uint32_t event;
	uint32_t ctx; /* the label context (bpf/firn.h's FIRN_CTX), 0: none */
	uint64_t count;
	const uint64_t *ustack, *kstack;
	uint32_t ulen, klen;
	const char *comm, *thread; /* process and thread names ("" when unknown) */
};

/* Off-CPU accounting: every wait begun (a target thread's switch-out that was sampled) is
 * counted (its ns added), short (under the minimum) or lost (by reason); the waits still going
 * when sampling stops end then (at_end: those of the counted ones), until then they are open.
 * lost_no_slot: switch-outs whose wait could not be begun (not among waits). ns: as measured
 * (the profile's are x rate). */
struct sampler_offcpu_stats {
	uint64_t waits, counted, ns, short_waits, short_ns;
	uint64_t lost_no_slot, lost_counts_full, lost_stacks_full;
	uint64_t unsampled; /* switch-outs the rate left out */
	uint64_t at_end;
	uint64_t late; /* ended at the thread's next switch-out: its switch-in went unseen */
	uint64_t at_start; /* of the waits: already going at the start, counted from it */
	uint64_t at_start_oldest_ns; /* how long before the start the oldest of those began */
};

/* GPU records (opts.cuda): launch hits, kernel records (those whose launch was not seen or was
 * forgotten: unmatched), memcpy records, those lost (a stack or count not stored); launches no
 * kernel record matched (unmatched: at the end of a recording, their activity never arrived or
 * came after the launch was forgotten), of which launches_pending are still remembered. */
struct sampler_gpu_stats {
	uint64_t launches, kernels, kernels_unmatched, memcpys, lost, launches_unmatched,
		launches_pending;
};

/* Sample accounting: taken = every sample the program saw for a target = stored + the samples
 * lost (counts_full + stacks_full: dropped, their stack or count could not be kept). Samples
 * whose user or kernel stack could not be read are stored without it (user/kernel_stack_errors).
 * Off-CPU waits are not samples: they have their own accounting (off_cpu). */
struct sampler_stats {
	uint64_t taken, stored;
	struct sampler_offcpu_stats off_cpu;
	uint64_t counts_full, stacks_full, events_full, user_stack_errors, kernel_stack_errors;
	/* DWARF unwinds by how they ended (enum firn_unwind_stop order: complete, no mapping,
	 * no row, unsupported rule, bad read, depth, no user stack — these add up to every sample
	 * taken; then samples that used frame pointers somewhere, samples that met a mapping their
	 * process's description lacked (found through the kernel's VMA lookup), samples that
	 * used frame pointers where a table had no row for the pc) */
	uint64_t unwind[10];
	/* unwind tables (filled by the recorder's unwinder, not the sampler) */
	uint64_t unwind_files, unwind_rows, unwind_bytes, unwind_max_bytes, unwind_no_table,
		unwind_over_limit, unwind_build_ns;
	uint64_t unwind_too_many_maps; /* mappings left out of a process's description (limit) */
	uint64_t unwind_cached;        /* tables read from the on-disk cache */
	/* held in user space now (entries of processes that ended go with sampler_retire) */
	uint64_t entries, stacks, threads, retired_processes;
	uint64_t drains;        /* of the counts maps, since the start */
	struct sampler_gpu_stats gpu; /* opts.cuda */
	uint64_t cgroup_filtered; /* hits of tasks outside opts.cgroups, left out in the kernel */
	uint64_t counters[SAMPLER_COUNTERS]; /* opts.counters: the events' BPF counters */
	/* the kernel memory of every BPF map this process holds (their fdinfo's memlock: what a
	 * map allocated, for a hash without preallocation what it holds now), and their number:
	 * sampler_map_memory's, not sampler_get_stats' */
	uint64_t bpf_map_bytes, bpf_maps;
};

/* A libbpf print function that hands libbpf's messages to the diagnostics reporter (diag.h), a
 * line each: warnings at DIAG_INFO, the rest at DIAG_DEBUG. The program installs it
 * (libbpf_set_print) before anything loads BPF: lib/ leaves libbpf's global hook alone. */
int sampler_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap);

/* Loads the BPF programs (not yet sampling). NULL + errno on failure; *why names the step. */
struct sampler *sampler_new(const struct sampler_opts *o, const char **why);
void sampler_free(struct sampler *s);
/* Adds a process to sample (all of its threads). held: the process has not exec'd its program
 * yet (a command held before exec). */
int sampler_add_target(struct sampler *s, pid_t pid, bool held);
/* The BPF maps the DWARF unwinder's tables go to (the caller's unwinder, lib/unwind/unwind.h, fills
 * them; the sampler only transports). Descriptors owned by the sampler. */
struct sampler_unwind_maps {
	int rows_fd, pids_fd, umaps_fd, files_fd;
	uint32_t rows, umaps; /* entries of the rows and mappings arrays */
	int first_chunk_fd;   /* chunk 0, already in rows_fd's slot 0 (unwinder_new takes it); -1 */
};
/* 0, or -ENOENT when the sampler unwinds with frame pointers only (no tables). */
int sampler_unwind_maps(const struct sampler *s, struct sampler_unwind_maps *m);
/* Opens the perf events and attaches: sampling starts. */
int sampler_start(struct sampler *s, const char **why);
/* Attaches the USDT program (opts.usdt) to every site of probe provider:name in the object at
 * path, in process pid (-1: in every process mapping it); its hits count as event (>= 1). libbpf
 * sets the probe's semaphore while attached. Counting starts at once. Returns 0 or -errno. */
int sampler_attach_usdt(struct sampler *s, pid_t pid, const char *path, const char *provider,
			const char *name, uint32_t event);
/* Attaches program prog (one of opts.uprobe_progs) to the entry of function func (a symbol of
 * the ELF file at path; retprobe: its return) in process pid (-1: every process mapping the
 * file). Counting starts at once; detached by sampler_stop. Returns 0, -EINVAL (prog not
 * loaded) or -errno (-ENOENT: no such function in the file). */
int sampler_attach_uprobe(struct sampler *s, const char *prog, pid_t pid, const char *path,
			  const char *func, bool retprobe);
/* Stops sampling (detaches the perf events and USDT probes); entries stay readable. */
void sampler_stop(struct sampler *s);
/* Waits up to timeout_ms for process events and handles them; drains the counts when due. */
int sampler_poll(struct sampler *s, int timeout_ms);
/* Handles the process events waiting (no waiting, no drain): safe from a sampler_retire
 * callback, so that new processes are snapshotted while ended ones are symbolized. */
int sampler_handle_events(struct sampler *s);
/* Moves everything counted so far into user space. */
int sampler_drain(struct sampler *s);
/* When (CLOCK_MONOTONIC ns) the last complete drain flipped the counts maps: every sample taken
 * before that time is in user space (0: no drain yet). */
uint64_t sampler_last_flip_ns(const struct sampler *s);
/* When (CLOCK_MONOTONIC ns) sampler_poll drains next: the regular interval, sooner while the
 * stack map fills (events wake the poll before that, a drain does not). */
uint64_t sampler_next_drain_ns(const struct sampler *s);
/* Calls fn for every aggregated entry; stops early when fn returns non-zero (and returns that). */
int sampler_for_each(struct sampler *s, int (*fn)(void *ctx, const struct sampler_entry *e),
		     void *ctx);
/* What sampler_retire does with the entries of ended processes (any callback may be NULL). */
struct sampler_retire_ops {
	/* false: a process's entries cannot be handled yet without waiting (it stays for a later
	 * call) */
	bool (*ready)(void *ctx, const struct sampler_entry *e);
	int (*park)(void *ctx, const struct sampler_entry *e); /* each entry; -errno stops */
	/* sampler_park_*: false leaves an entry where it is (NULL: every entry goes) */
	bool (*select)(void *ctx, const struct sampler_entry *e);
	void (*gone)(void *ctx, pid_t pid);                    /* each process, after its entries */
	void *ctx;
};

/* With opts.retire: for the processes that have ended and whose samples are all drained (the
 * drain after their end) and whose entries are all ready, calls park for each of their entries,
 * then forgets those entries, their threads' names and the stacks nothing else uses, then calls
 * gone for each such process — so memory follows the live processes. Returns how many
 * processes went, or -ENOMEM or park's -errno (the recording cannot go on: some entries may
 * have been parked). Their samples still count in the "stored" statistic. Pointers from earlier sampler_for_each calls
 * may be left dangling: use it where nothing keeps them (not firn top). */
int sampler_retire(struct sampler *s, const struct sampler_retire_ops *ops);
/* Entries held now. */
size_t sampler_entry_count(const struct sampler *s);
/* Parks the entries of every process (live ones too) whose entries are all ready, as
 * sampler_retire does for ended ones, and forgets them (names and exit tracking stay): for a
 * long recording whose live processes keep making new stacks, when sampler_entry_count passes
 * a bound. The same stack counted again later makes a new entry (parked samples merge when
 * loaded). Returns how many entries went, or -errno. */
int sampler_park_live(struct sampler *s, const struct sampler_retire_ops *ops);
/* The same for the entries of one process (drain first to have all of its samples) that
 * ops->select takes: before the process's snapshot changes, after an exec. */
int sampler_park_process(struct sampler *s, pid_t pid, const struct sampler_retire_ops *ops);
/* With opts.retire: whether pid has ended and waits for sampler_retire. */
bool sampler_has_exited(const struct sampler *s, pid_t pid);
/* The figures of st, but bpf_map_bytes and bpf_maps (0: sampler_map_memory). */
void sampler_get_stats(struct sampler *s, struct sampler_stats *st);
/* st's bpf_map_bytes and bpf_maps: every BPF map this process holds. It opens an fdinfo file
 * per descriptor (about 90 system-wide), so it is asked for once, at the end, not with the
 * statistics every interval cut and every top refresh reads. */
void sampler_map_memory(struct sampler_stats *st);
/* Number of CPUs sampled. */
int sampler_ncpus(const struct sampler *s);
/* The name the walker of tag (a FIRN_FRAME_KIND_*) stored for frame payload key (its
 * bpf/walkers.h row's names map: the GPU kernels', opts.cuda), copied into buf (n bytes,
 * NUL-terminated, truncated): 0, -ENOENT when the map has no such name, -ENOTSUP when that
 * walker keeps no names, -EINVAL when n is 0. */
int sampler_walker_name(struct sampler *s, unsigned tag, uint64_t key, char *buf, size_t n);
/* Sets key to *value in the BPF map named map (a walker's: one map, shared by the objects of
 * late walkers), or deletes key when value is NULL; key and value are the map's sizes. 0 or
 * -errno (-ENOENT: no such map, or no such key to delete). */
int sampler_map_update(struct sampler *s, const char *map, const void *key, const void *value);
/* The 64-bit counter at byte off of entry key of the per-CPU array named map, summed over the
 * CPUs (a walker's counts kept beside other data, not yet added to walker_stats): the sum, or 0
 * where there is no such map, key or field. */
uint64_t sampler_map_percpu_sum(struct sampler *s, const char *map, uint32_t key, size_t off);

/* Forgets the counts of every entry (firn top: the next sampler_for_each shows only what was
 * drained since, so a refresh costs what the last interval sampled, not the whole session).
 * Stacks, process names and the stack pointers sampler_for_each handed out stay valid; the
 * "stored" statistic counts from the reset. */
void sampler_reset_counts(struct sampler *s);
/* A descriptor that becomes readable when process events wait, for poll(2) next to other inputs
 * (then call sampler_poll with a timeout of 0). */
int sampler_event_fd(const struct sampler *s);

/* Has the BPF walker of tag (a FIRN_FRAME_KIND_*) read the frames of process pid: blob, len
 * bytes, is what it needs of the process (its own struct in bpf/firn.h, at most
 * FIRN_WALKER_PROC_SIZE: copied); NULL: no more. With tag in opts.walkers_late, the first such
 * call has that walker's program loaded by the next sampler_poll or sampler_handle_events (tens
 * of ms; a failure is reported through diag, and the samples keep native frames). 0 or -errno
 * (-EINVAL: tag or len out of range; -E2BIG: too many processes; -ENOENT: none to remove). */
int sampler_set_proc(struct sampler *s, unsigned tag, pid_t pid, const void *blob, size_t len);
/* The first n counters of the walker of tag (its enum's order in bpf/firn.h; n at most
 * FIRN_WALKER_STATS, 8: the rest of out is left alone), summed over the CPUs, into out. */
void sampler_walker_stats(struct sampler *s, unsigned tag, uint64_t *out, size_t n);

#endif
