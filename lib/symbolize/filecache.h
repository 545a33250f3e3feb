/* The symbolizer's file cache: one struct symfile per file (by dev, inode, size, mtime), shared
 * by every snapshot mapping (and file lookup) that names it, each holding a reference. A file is
 * opened when first seen and holds its descriptor until indexed (its symbols, its Go pclntab, its
 * .eh_frame function bounds and its debug information, read on first use here or ahead by the
 * indexing worker), then closes it. Debug information is shared by build id among files of one
 * owner (struct debugfile). A file nothing uses stays cached, indexed, while it is one of the
 * MAX_IDLE_FILES most recently unused and for IDLE_KEEP_NS at least; filecache_sweep frees the
 * older ones. The cache lives in struct symbolizer (symbolize/symbolize_impl.h): its files,
 * debug table, queue and worker fields; s->lock guards what the worker touches. Private to
 * lib/symbolize. */
#ifndef FIRN_SYMBOLIZE_FILECACHE_H
#define FIRN_SYMBOLIZE_FILECACHE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/fileid.h"
#include "elf/elfsym.h"
#include "elf/funcbounds.h"

struct dwarfsym;
struct gopclntab;
struct procmap_entry;
struct symbolizer;

/* Debug information of one build id and owner (or of one file without a build id): a build id
 * is anyone's to copy, so files of different owners never share it. */
struct debugfile {
	char build_id[2 * 64 + 1]; /* "" when not shared */
	uid_t owner;               /* the owner of the file it was found for */
	struct elfsym syms;        /* the debug file's own symbols (when it is a separate file) */
	struct dwarfsym *dwarf;    /* NULL when there is no readable DWARF */
	unsigned refs;
};

/* One file, shared by every snapshot that maps it. */
struct symfile {
	struct file_id id; /* the cache's key (files are sorted by it) */
	uid_t owner;
	int fd;           /* open until indexed, then -1 */
	int state;        /* 0 not indexed yet, 1 indexed, -errno when indexing failed */
	struct elfsym elf;
	struct debugfile *debug; /* set when indexed */
	struct gopclntab *go;     /* (set when indexed) a Go binary's pclntab, or NULL */
	struct funcbounds bounds; /* (set when indexed) .eh_frame's functions no symbol covers */
	char **bound_names;       /* "module+0xSTART" of bounds.r[i], made on first use */
	char *path;       /* the path its first process saw (for the debuglink search) */
	pid_t pid;        /* that process (for its root) */
	unsigned refs;    /* snapshot mappings (and file lookups) using it */
	uint64_t idle;    /* refs 0: when it became unused (s->idle_clock), for eviction */
	bool queued, indexing; /* waiting for, or in, the indexing worker (under s->lock) */
};

/* Files kept, indexed, after their last user goes (a binary that runs again and again). */
#define MAX_IDLE_FILES 16
/* ...and for how long at least (at most twice that): one that no process used again within it
 * is freed, its symbols and debug information with it (system-wide at 19 Hz, the idle files
 * were most of firn's memory held for nothing; a binary that runs every few seconds stays). */
#define IDLE_KEEP_NS 10000000000ULL

/* Returns the cached file at open_path (stat'ed first, opened only when new, through safeopen
 * with flags) with a reference taken; NULL + errno (EINVAL: not a regular file, ESTALE: not
 * inode want_ino when that is non-zero, ENOMEM). path is the name the process knows it by
 * (copied), pid that process (0: none). */
struct symfile *filecache_get(struct symbolizer *s, const char *open_path, int flags,
			      uint64_t want_ino, const char *path, pid_t pid);
/* The cached file with the device and inode mapping e names, with a reference taken; NULL when
 * none is cached (no system call). */
struct symfile *filecache_known(struct symbolizer *s, const struct procmap_entry *e);
/* Takes one more reference to a cached file (an idle one is in use again); returns f. */
struct symfile *filecache_ref(struct symbolizer *s, struct symfile *f);
/* Drops a reference (f may be NULL); the last keeps f idle, and evicts the longest idle file
 * beyond MAX_IDLE_FILES. */
void filecache_put(struct symbolizer *s, struct symfile *f);

/* Indexes f on first use (here, unless the worker has done it): 0, -ENOMEM (not remembered:
 * tried again at next use) or the indexing -errno (remembered; -ENOEXEC: not ELF). */
int filecache_index(struct symbolizer *s, struct symfile *f);
/* Whether f is indexed; when not, queues it for the worker (once) and returns false. */
bool filecache_ready(struct symbolizer *s, struct symfile *f);
/* Starts the indexing worker (once): a thread that indexes the files filecache_ready queues,
 * oldest first. 0 or -errno (pthread_create's). */
int filecache_start_worker(struct symbolizer *s);
/* Stops the worker, if running (files it had not reached stay unindexed). */
void filecache_stop_worker(struct symbolizer *s);
/* At most once per IDLE_KEEP_NS (CLOCK_MONOTONIC now_ns): drops the resident pages of indexed
 * files and frees the files idle since the sweep before. */
void filecache_sweep(struct symbolizer *s, uint64_t now_ns);

/* Frees the cache: every file (referenced or not: the snapshots and file lookups that held
 * them are gone), the debug information, the debuginfod client and the worker's queue; stops
 * the worker first if running. */
void filecache_release(struct symbolizer *s);

#endif
