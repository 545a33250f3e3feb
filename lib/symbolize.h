/* The symbolizer: turns (pid, user address) and kernel addresses into locations of a profile.
 * It snapshots what a process needs while the process lives (its maps and an open file per
 * executable mapping), so addresses are resolved later even when the process has exited or its
 * binary was deleted. Files are cached by (dev, inode, size, mtime) and indexed once, on first use.
 * An address that cannot be resolved is data, not an error: it becomes a location without lines
 * (in its file's mapping, or in "[unknown]"), and the reason is counted in the stats.
 * Location and mapping ids are cached for one profile at a time: passing another profile starts
 * the caches afresh, and so does one re-initialized at the same address while it holds fewer
 * mappings or locations than the symbolizer made. pids are process ids (tgid). One thread at a time.
 * Files that cannot be opened are reported through diag() at DIAG_DEBUG. */
#ifndef FIRN_SYMBOLIZE_H
#define FIRN_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "profile.h"

struct symbolizer;

/* Counts of addresses asked for, by outcome (every call counts, cached or not). */
struct symbolizer_stats {
	uint64_t resolved;   /* a function name was found */
	uint64_t no_process; /* pid was never added */
	uint64_t no_mapping; /* the address is in none of the process's mappings */
	uint64_t no_symbol;  /* the file (or kallsyms) was read but has no symbol there */
	uint64_t no_file;    /* the file (or kallsyms) could not be opened or parsed */
};

/* NULL + errno on failure. */
struct symbolizer *symbolizer_new(void);
void symbolizer_free(struct symbolizer *s);

/* Snapshots pid's mappings and opens each executable file mapping (through
 * /proc/PID/map_files/START-END, else /proc/PID/root/PATH, else PATH, checking the inode).
 * Replaces an earlier snapshot of pid (after exec). 0 or -errno (-ENOENT: no such process). */
int symbolizer_add_process(struct symbolizer *s, pid_t pid);
bool symbolizer_has_process(struct symbolizer *s, pid_t pid);
/* Forgets pid's snapshot (its files are closed once no snapshot uses them). 0 or -ENOENT. */
int symbolizer_remove_process(struct symbolizer *s, pid_t pid);

/* Returns the location id in p of a user address of pid (adding mapping, function and location
 * entries to p), or -ENOMEM. The same (snapshot mapping, address, is_return_address) gives the
 * same id. is_return_address: addr is a return address (a caller's frame), so the symbol is
 * looked up at addr - 1; the location keeps addr. */
int64_t symbolizer_user_location(struct symbolizer *s, struct profile *p, pid_t pid, uint64_t addr,
				 bool is_return_address);

/* Returns the location id in p of a kernel address, or -ENOMEM. Core kernel functions are in
 * mapping "[kernel.kallsyms]", module functions in a mapping "[MODULE]" (BPF programs: "[bpf]").
 * kallsyms is loaded on first use. */
int64_t symbolizer_kernel_location(struct symbolizer *s, struct profile *p, uint64_t addr);
/* Reads kernel symbols from path (a file in kallsyms format) instead of /proc/kallsyms. Call it
 * before the first kernel lookup; 0 or -ENOMEM. */
int symbolizer_set_kallsyms(struct symbolizer *s, const char *path);

void symbolizer_stats(const struct symbolizer *s, struct symbolizer_stats *st);

#endif
