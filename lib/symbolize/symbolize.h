/* The symbolizer: turns (pid, user address) and kernel addresses into frames, as plain values.
 * It snapshots what a process needs while the process lives (its maps, an open file per
 * executable mapping, its JIT perf map), so addresses are resolved later even when the process
 * has exited or its binary was deleted. Files are cached by (dev, inode, size, mtime) and indexed
 * once, on first use; debug information (DWARF in the binary, else a separate debug file found by
 * build id, .gnu_debuglink or debuginfod) is cached by build id.
 * A resolved user address gives one frame per function of its inline chain, innermost first,
 * each with its source file and line when DWARF has them; names are demangled unless the
 * options say otherwise (the raw name is the frame's system_name). Addresses in anonymous memory
 * resolve through the process's /tmp/perf-PID.map (looked up inside its mount namespace, with
 * its namespaced pid) into a FRAME_JIT mapping named after the map.
 * An address that cannot be resolved is data, not an error: it has no frames, a mapping (its
 * file's, or "[unknown]") and a reason (enum symbolizer_reason).
 * It knows no profile (the split of issue 14, as blazesym and perf do it): a lookup is in two
 * steps, so that its caller can cache what it makes of an address (lib/symbolize/intern.h interns the
 * frames into a profile). symbolizer_*_find says where an address is — a cache key that does
 * not depend on any profile, the address its location keeps and the mapping it is in —, and
 * symbolizer_resolve then gives its frames. A file's (and the vDSO's) mapping is shared by every
 * process that maps it: its range and its addresses are the file's own (ELF virtual addresses,
 * not where one process loaded it), so the processes of one binary share its cache keys — memory
 * follows the code seen, not the processes. Files nothing uses any more stay indexed, the 16 most
 * recent, for 10 to 20 s (freed at a symbolizer_refresh_due past that). pids are process ids (tgid).
 * One thread at a time (symbolizer_index_ahead and symbolizer_prefetch_kernel start threads of
 * the symbolizer's own, which the calls wait for where needed).
 * Files that cannot be opened are reported through diag() at DIAG_DEBUG; a debuginfod server
 * that runs out of time, once, at DIAG_WARN. */
#ifndef FIRN_SYMBOLIZE_H
#define FIRN_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/frame_kind.h"
#include "model/resolver.h"

struct symbolizer;
struct symbolizer_file;

struct symbolizer_opts {
	bool demangle;             /* C++ and Rust names demangled (default true) */
	bool debuginfod;           /* ask the DEBUGINFOD_URLS servers for missing debug files (default
				    * true; nothing is asked when DEBUGINFOD_URLS is unset or empty) */
	int debuginfod_timeout_ms; /* per query (default 5000); after one runs out, no more are made */
	const char *debug_dir;     /* global debug directory (default "/usr/lib/debug"); copied */
};

/* Why an address resolved as it did. */
enum symbolizer_reason {
	SYMBOLIZER_RESOLVED,      /* a function name was found */
	SYMBOLIZER_NO_PROCESS,    /* pid was never added */
	SYMBOLIZER_NO_MAPPING,    /* the address is in none of the process's mappings (nor its perf map) */
	SYMBOLIZER_NO_SYMBOL,     /* the file (or kallsyms) was read but has no symbol there */
	SYMBOLIZER_NO_FILE,       /* the file (or kallsyms) could not be opened or parsed */
	SYMBOLIZER_NO_JIT_SYMBOL, /* anonymous (JIT) memory that no perf map entry covers */
	SYMBOLIZER_REASONS
};

/* What the symbolizer holds now (the outcomes of lookups are counted where they are cached:
 * intern_stats). */
struct symbolizer_stats {
	uint64_t processes, files, idle_files;
	uint64_t jit_no_map; /* processes (held or removed) whose JIT frames had no perf map */
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
 * that has exited meanwhile) and frees the files unused for 10 s or more (see above); returns
 * when the next snapshot is due (UINT64_MAX: none). */
uint64_t symbolizer_refresh_due(struct symbolizer *s, uint64_t now_ns);
/* Whether pid waits for its second snapshot (its stacks are better symbolized after it). */
bool symbolizer_refresh_pending(const struct symbolizer *s, pid_t pid);
/* pid ran code outside its mapped files (JIT code): opens its perf map now if its snapshot found
 * none (a runtime writes it some time after it starts), while the process lives to be asked.
 * 0 or -ENOENT (no snapshot of pid). */
int symbolizer_note_jit(struct symbolizer *s, pid_t pid);
/* pid has exited (its snapshot stays until removed): a JIT process that had no perf map yet has
 * it looked for again at next use, through its root directory as it was (a JVM with
 * -XX:+DumpPerfMapAtExit writes it as it exits). 0 or -ENOENT (no snapshot of pid). */
int symbolizer_note_exit(struct symbolizer *s, pid_t pid);
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

/* The longest inline chain resolved (the outermost frames of a longer one are dropped). */
#define SYMBOLIZER_MAX_FRAMES 32

/* The cache key of addresses in no known mapping (their flags: the reason). */
#define SYMBOLIZER_KEY_UNKNOWN 0u

/* A mapping, described without a profile. key names it while the symbolizer lives: keys are
 * 1, 2, 3... in the order mappings (and the kernel's cache keys) are first looked at (a caller
 * may index an array by them), never reused. The strings are valid until the next call into
 * the symbolizer. */
struct symbolizer_mapping {
	uint32_t key;               /* 0: not known yet (a kernel address before symbolizer_resolve) */
	enum frame_kind kind;
	bool inline_frames;         /* resolved with DWARF (inline frames where there are some) */
	uint64_t start, limit, offset; /* a file's: its own addresses; limit grows as processes map
					* more of it (keep the largest) */
	const char *name;           /* the file's path, "[vdso]", "[anon]", "[kernel.kallsyms]",
				     * "[MODULE]", "/tmp/perf-PID.map", "[unknown]" */
	const char *build_id;       /* lowercase hex, "" when none */
};

/* One address being looked up. symbolizer_*_find fills it up to map; symbolizer_resolve fills
 * the rest. The same (key, flags, addr) resolves to the same frames and mapping while the
 * symbolizer lives, whichever process asked, except that the strings of frames are only valid
 * until the next call into the symbolizer that changes symbolizer_names_gen. */
struct symbolizer_loc {
	uint32_t key;               /* cache key: map.key, SYMBOLIZER_KEY_UNKNOWN, or the key of
				     * every kernel address (until symbolizer_set_kallsyms) */
	uint32_t flags;             /* is_return_address (unknown addresses: their reason) */
	uint64_t addr;              /* the address the location keeps (a file's own for files) */
	struct symbolizer_mapping map;
	/* set by symbolizer_resolve */
	enum symbolizer_reason reason;
	int n;                      /* frames, innermost first (0: unresolved) */
	struct resolved_frame frames[SYMBOLIZER_MAX_FRAMES];
	/* what symbolizer_resolve needs (private) */
	int source;
	uint64_t at;
	void *priv[2];
};

/* Where a user address of pid is: fills l's key, flags, addr and map. is_return_address: addr
 * is a return address (a caller's frame), so the symbol is looked up at addr - 1; the location
 * keeps addr. 0 or -ENOMEM. */
int symbolizer_user_find(struct symbolizer *s, pid_t pid, uint64_t addr, bool is_return_address,
			 struct symbolizer_loc *l);
/* The same for ELF virtual address vaddr of the file at path (no process needed): the mapping
 * is named path, the address is vaddr. */
int symbolizer_file_find(struct symbolizer *s, const char *path, uint64_t vaddr,
			 bool is_return_address, struct symbolizer_loc *l);
/* The same for a kernel address: one cache key for all; the mapping (core kernel functions
 * in "[kernel.kallsyms]", module functions in "[MODULE]", BPF programs "[bpf]") comes with the
 * frames. Kernel symbols (lib/symbolize/ksym) are loaded then, on first use. */
int symbolizer_kernel_find(struct symbolizer *s, uint64_t addr, bool is_return_address,
			   struct symbolizer_loc *l);
/* Resolves l (filled by a find call just before, with no other call into the symbolizer between):
 * its frames, reason and (for a kernel address) map. 0 or -ENOMEM. */
int symbolizer_resolve(struct symbolizer *s, struct symbolizer_loc *l);
/* Changes whenever strings the symbolizer gave out (frames' names and files) are freed: a
 * caller that keeps them (or compares their addresses) forgets them then. */
uint64_t symbolizer_names_gen(const struct symbolizer *s);

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
/* Resolves ELF virtual address vaddr of f without a cache key: fills up to max frames, innermost
 * (inlined) first, and returns how many (0 when unresolved), or -ENOMEM. The strings stay valid
 * while the symbolizer lives. */
int symbolizer_file_frames(struct symbolizer *s, struct symbolizer_file *f, uint64_t vaddr,
			   bool is_return_address, struct symbolizer_frame *frames, int max);

/* Starts loading kallsyms in a thread of its own, so that the first kernel lookup (which waits
 * for it) does not; 0 or -errno. */
int symbolizer_prefetch_kernel(struct symbolizer *s);
/* Names the addresses of one kernel stack (ips[0] the sampled address, the others return
 * addresses) in one run of the kernel's symbol lookup, which symbolizer_resolve would ask one
 * at a time (nothing to do where kallsyms was read). 0 or -ENOMEM; other failures are left to
 * symbolizer_resolve. */
int symbolizer_kernel_prepare(struct symbolizer *s, const uint64_t *ips, size_t n);
/* Reads kernel symbols from path (a file in kallsyms format) instead of /proc/kallsyms. Call it
 * before the first kernel lookup; 0 or -ENOMEM. */
int symbolizer_set_kallsyms(struct symbolizer *s, const char *path);

void symbolizer_stats(const struct symbolizer *s, struct symbolizer_stats *st);

#endif
