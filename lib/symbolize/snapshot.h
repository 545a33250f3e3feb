/* The symbolizer's process snapshots: what a process needs for its addresses to be resolved
 * after it has gone: its maps (struct procmap), one struct snapmap per mapping (the file-cache
 * file behind an executable file mapping, with a reference, or the vDSO) and its JIT perf map.
 * Snapshots live in s->procs (pid -> struct snapshot *, owned); a second snapshot of a process
 * may be due later (s->resnap). The public symbolizer_add_process, _set_maps, _take, _install,
 * _note_jit, _note_exit, _refresh_due and _remove_process are defined in snapshot.c. Private to
 * lib/symbolize. */
#ifndef FIRN_SYMBOLIZE_SNAPSHOT_H
#define FIRN_SYMBOLIZE_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "elf/perfmap.h"
#include "proc/procmap.h"

struct symbolizer;
struct symfile;

/* Where a snapshot mapping's symbols come from. */
enum source { SRC_NONE, SRC_FILE, SRC_VDSO };

/* A mapping of a snapshot, parallel to its procmap entry. */
struct snapmap {
	enum source src;
	struct symfile *file; /* SRC_FILE: NULL when it could not be opened */
	uint32_t key;         /* its mapping key; 0 until first used */
	bool dwarf;           /* (set with key) resolved with DWARF */
	uint64_t bias;        /* (set with key) runtime address - file address (0 unless shared) */
	const char *build_id; /* (set with key) its file's (or the vDSO's), "" when none */
};

struct snapshot {
	pid_t pid;
	struct procmap map;
	struct snapmap *maps;
	int perfmap_fd;       /* the JIT map, open from the snapshot on; -1 when none */
	int perfmap_state;    /* 0 not read, 1 read, -errno */
	bool perfmap_refused; /* the map is not one to trust (noted once) */
	int root_fd;          /* a JIT process's root directory (O_PATH), kept while it had no map:
			       * a map written as it exits (-XX:+DumpPerfMapAtExit) is opened
			       * through it once the process is gone; -1 when none */
	uid_t root_uid;       /* the process's owner when root_fd was opened */
	bool from_events;     /* its maps came from the kernel's mmap records: every executable
			       * mapping is known, none outside them holds JIT code */
	struct perfmap perfmap;
	char perfmap_name[48]; /* "/tmp/perf-NSPID.map" */
	uint32_t jit_key;     /* its perf map's mapping key; 0 until first used */
	bool jit_seen;        /* a frame of its JIT code was looked up (with a map or not) */
};

/* A process to snapshot again at due_ns (CLOCK_MONOTONIC). */
struct resnap {
	pid_t pid;
	uint64_t due_ns;
};

/* The snapshot of pid, or NULL when s has none (s keeps it). */
struct snapshot *snapshot_of(const struct symbolizer *s, pid_t pid);
/* Frees snap (NULL: nothing) and drops its file references. */
void snapshot_free(struct symbolizer *s, struct snapshot *snap);
/* Reads snap's perf map on first use (opening it now if it appeared after the snapshot, while
 * the process still lives); 0 or -errno (the map's state, remembered, but -ENOMEM). */
int snapshot_perfmap_ready(struct symbolizer *s, struct snapshot *snap);
/* Whether the process ran JIT code that its perf map did not describe: it had none. */
bool snapshot_no_map(const struct snapshot *snap);

#endif
