/* The symbolizer: turns (pid, user address) and kernel addresses into locations of a profile.
 * It snapshots what a process needs while the process lives (its maps, an open file per
 * executable mapping, its JIT perf map), so addresses are resolved later even when the process
 * has exited or its binary was deleted. Files are cached by (dev, inode, size, mtime) and indexed
 * once, on first use; debug information (DWARF in the binary, else a separate debug file found by
 * build id, .gnu_debuglink or debuginfod) is cached by build id.
 * A resolved user address becomes a location with one line per function of its inline chain,
 * innermost first, each with its source file and line when DWARF has them; names are demangled
 * unless the options say otherwise (the raw name is the function's system_name). Addresses in
 * anonymous memory resolve through the process's /tmp/perf-PID.map (looked up inside its mount
 * namespace, with its namespaced pid) into a FRAME_JIT mapping named after the map.
 * An address that cannot be resolved is data, not an error: it becomes a location without lines
 * (in its file's mapping, or in "[unknown]"), and the reason is counted in the stats.
 * A file's (and the vDSO's) mapping in a profile is shared by every process that maps it: its
 * range and its locations' addresses are the file's own (ELF virtual addresses, not where one
 * process loaded it), so the processes of one binary share its locations — memory follows the
 * code seen, not the processes. Files nothing uses any more stay indexed, the 16 most recent.
 * Location and mapping ids are cached for one profile at a time: passing another profile starts
 * the caches afresh, and so does one re-initialized at the same address while it holds fewer
 * mappings or locations than the symbolizer made. pids are process ids (tgid).
 * One thread at a time (symbolizer_index_ahead and symbolizer_prefetch_kernel start threads of
 * the symbolizer's own, which the calls wait for where needed).
 * Files that cannot be opened are reported through diag() at DIAG_DEBUG; a debuginfod server
 * that runs out of time, once, at DIAG_WARN. */
#ifndef FIRN_SYMBOLIZE_H
#define FIRN_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "profile.h"

struct symbolizer;
struct symbolizer_file;

struct symbolizer_opts {
	bool demangle;             /* C++ and Rust names demangled (default true) */
	bool debuginfod;           /* ask the DEBUGINFOD_URLS servers for missing debug files (default
				    * true; nothing is asked when DEBUGINFOD_URLS is unset or empty) */
	int debuginfod_timeout_ms; /* per query (default 5000); after one runs out, no more are made */
	const char *debug_dir;     /* global debug directory (default "/usr/lib/debug"); copied */
};

/* Counts of addresses asked for, by outcome (every call counts, cached or not). */
struct symbolizer_stats {
	uint64_t resolved;      /* a function name was found */
	uint64_t no_process;    /* pid was never added */
	uint64_t no_mapping;    /* the address is in none of the process's mappings (nor its perf map) */
	uint64_t no_symbol;     /* the file (or kallsyms) was read but has no symbol there */
	uint64_t no_file;       /* the file (or kallsyms) could not be opened or parsed */
	uint64_t no_jit_symbol; /* anonymous (JIT) memory that no perf map entry covers */
	uint64_t with_lines;    /* of resolved: with a source file and line from DWARF */
	/* held now */
	uint64_t processes, files, idle_files, cached_locations;
};

/* Sets the defaults. */
void symbolizer_opts_init(struct symbolizer_opts *o);
/* NULL + errno on failure. symbolizer_new() uses the defaults. */
struct symbolizer *symbolizer_new(void);
struct symbolizer *symbolizer_new_opts(const struct symbolizer_opts *o);
void symbolizer_free(struct symbolizer *s);

/* Snapshots pid's mappings and opens each executable file mapping (through
 * /proc/PID/map_files/START-END, else /proc/PID/root/PATH, else PATH, checking the inode), and its
 * perf map /proc/PID/root/tmp/perf-NSPID.map when there is one.
 * Replaces an earlier snapshot of pid (after exec). A process caught exiting has no mappings
 * left: nothing is added or replaced, -ESRCH. 0 or -errno (-ENOENT: no such process). */
int symbolizer_add_process(struct symbolizer *s, pid_t pid);
bool symbolizer_has_process(struct symbolizer *s, pid_t pid);
/* Makes pid's snapshot from map (a process's mappings as the process table has them, built from
 * the kernel's mmap records): mappings the snapshot had already keep their open files; the files
 * of new executable mappings are found in the cache by their device and inode, else opened as
 * symbolizer_add_process does, checked against the inode. Replaces an earlier snapshot of pid;
 * its perf map stays. The map is taken as complete: an address outside its mappings is not
 * looked up in the perf map (JIT code lives in anonymous executable mappings, which the kernel
 * reports too). 0 or -ENOMEM. */
struct procmap;
int symbolizer_set_maps(struct symbolizer *s, pid_t pid, const struct procmap *map);
/* Whether pid's snapshot maps addr to a file (not anonymous memory, not outside every
 * mapping). */
bool symbolizer_maps_file(struct symbolizer *s, pid_t pid, uint64_t addr);
/* A snapshot taken now and installed later, so that the one in use stays meanwhile (the
 * samples a process took before its exec are symbolized with its old image). take: NULL +
 * errno (ESRCH: the process has no mappings left). install replaces pid's snapshot and takes
 * the one given over (0 or -ENOMEM: then it is freed). */
struct symbolizer_snapshot;
struct symbolizer_snapshot *symbolizer_take(struct symbolizer *s, pid_t pid);
int symbolizer_install(struct symbolizer *s, struct symbolizer_snapshot *snap);
void symbolizer_snapshot_free(struct symbolizer *s, struct symbolizer_snapshot *snap);
/* Snapshots pid again SYMBOLIZER_RESNAP_NS after now_ns (CLOCK_MONOTONIC), at the first
 * symbolizer_refresh_due after that: a process's first sample may come while the dynamic loader
 * is still mapping its libraries. 0 or -ENOMEM. */
#define SYMBOLIZER_RESNAP_NS 150000000ULL
int symbolizer_add_process_later(struct symbolizer *s, pid_t pid, uint64_t now_ns);
/* Takes the snapshots due by now_ns (the symbolizer keeps an earlier snapshot of a process
 * that has exited meanwhile); returns when the next one is due (UINT64_MAX: none). */
uint64_t symbolizer_refresh_due(struct symbolizer *s, uint64_t now_ns);
/* Whether pid waits for its second snapshot (its stacks are better symbolized after it). */
bool symbolizer_refresh_pending(const struct symbolizer *s, pid_t pid);
/* pid ran code outside its mapped files (JIT code): opens its perf map now if its snapshot found
 * none (a runtime writes it some time after it starts), while the process lives to be asked.
 * 0 or -ENOENT (no snapshot of pid). */
int symbolizer_note_jit(struct symbolizer *s, pid_t pid);
/* Forgets pid's snapshot and its pending second snapshot (its files are closed once no
 * snapshot uses them). 0 or -ENOENT. */
int symbolizer_remove_process(struct symbolizer *s, pid_t pid);

/* Starts a worker thread that indexes files (symbols, debug information) ahead of their use,
 * when symbolizer_user_ready asks for them; 0 or -errno. Every other call stays on the
 * caller's thread (a file the worker holds is waited for). */
int symbolizer_index_ahead(struct symbolizer *s);
/* Whether a user address of pid resolves without reading a file now: true unless the file
 * behind it is not indexed yet — then the worker (symbolizer_index_ahead) is asked to index
 * it. Always true without the worker. */
bool symbolizer_user_ready(struct symbolizer *s, pid_t pid, uint64_t addr);
/* Whether kernel addresses resolve without waiting for kallsyms (see
 * symbolizer_prefetch_kernel). */
bool symbolizer_kernel_ready(struct symbolizer *s);

/* Returns the location id in p of a user address of pid (adding mapping, function and location
 * entries to p), or -ENOMEM. The same (snapshot mapping, address, is_return_address) gives the
 * same id. is_return_address: addr is a return address (a caller's frame), so the symbol is
 * looked up at addr - 1; the location keeps addr. */
int64_t symbolizer_user_location(struct symbolizer *s, struct profile *p, pid_t pid, uint64_t addr,
				 bool is_return_address);
/* The same for ELF virtual address vaddr of the file at path (no process needed): the location
 * is in a mapping named path, with address vaddr. */
int64_t symbolizer_file_location(struct symbolizer *s, struct profile *p, const char *path,
				 uint64_t vaddr, bool is_return_address);

/* One function of an address's inline chain (symbolizer_file_frames). */
struct symbolizer_frame {
	const char *name;        /* demangled unless the options say otherwise */
	const char *system_name; /* as in the symbol table or DWARF */
	const char *file;        /* source file, NULL when unknown */
	uint32_t line;           /* 0 when unknown */
};

/* A file whose addresses are symbolized without a process: the file at path, opened now (its
 * symbols and debug information are read on first use) and kept until symbolizer_free.
 * NULL + errno. */
struct symbolizer_file *symbolizer_file(struct symbolizer *s, const char *path);
/* Resolves ELF virtual address vaddr of f without a profile: fills up to max frames, innermost
 * (inlined) first, and returns how many (0 when unresolved), or -ENOMEM. The strings stay valid
 * while the symbolizer lives. */
int symbolizer_file_frames(struct symbolizer *s, struct symbolizer_file *f, uint64_t vaddr,
			   bool is_return_address, struct symbolizer_frame *frames, int max);

/* Returns the location id in p of a kernel address, or -ENOMEM. Core kernel functions are in
 * mapping "[kernel.kallsyms]", module functions in a mapping "[MODULE]" (BPF programs: "[bpf]").
 * kernel symbols (lib/ksym) are loaded on first use. is_return_address as for user addresses. */
int64_t symbolizer_kernel_frame(struct symbolizer *s, struct profile *p, uint64_t addr,
				bool is_return_address);
/* Starts loading kallsyms in a thread of its own, so that the first kernel lookup (which waits
 * for it) does not; 0 or -errno. */
int symbolizer_prefetch_kernel(struct symbolizer *s);
/* Names the addresses of one kernel stack (ips[0] the sampled address, the others return
 * addresses) in one run of the kernel's symbol lookup, which symbolizer_kernel_frame would ask
 * one at a time (nothing to do where kallsyms was read). 0 or -ENOMEM; other failures are left
 * to symbolizer_kernel_frame. */
int symbolizer_kernel_prepare(struct symbolizer *s, const uint64_t *ips, size_t n);
/* symbolizer_kernel_frame(s, p, addr, false). */
int64_t symbolizer_kernel_location(struct symbolizer *s, struct profile *p, uint64_t addr);
/* Reads kernel symbols from path (a file in kallsyms format) instead of /proc/kallsyms. Call it
 * before the first kernel lookup; 0 or -ENOMEM. */
int symbolizer_set_kallsyms(struct symbolizer *s, const char *path);

void symbolizer_stats(const struct symbolizer *s, struct symbolizer_stats *st);

#endif
