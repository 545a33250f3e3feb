/* The symbolizer's state, shared by the files of lib/symbolize that make it: symbolize.c
 * (resolving, mapping keys, the vDSO, kallsyms, demangling, the lifecycle), snapshot.c (process
 * snapshots) and filecache.c (files, their indexing and their debug information). Private to
 * lib/symbolize: everyone else goes through symbolize/symbolize.h. */
#ifndef FIRN_SYMBOLIZE_IMPL_H
#define FIRN_SYMBOLIZE_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/hashtab.h"
#include "base/pidindex.h"
#include "elf/elfsym.h"
#include "symbolize/filecache.h"
#include "symbolize/ksym.h"
#include "symbolize/snapshot.h"
#include "symbolize/symbolize.h"

/* A cached demangling: raw name pointer -> demangled name (owned). */
struct dm_slot {
	const char *raw;
	char *name;                 /* NULL: raw is not a mangled name */
};

/* The demangling cache: entries in arrival order, found by raw pointer through index. */
struct dm_cache {
	struct dm_slot *slots;
	size_t n, cap;
	struct hashtab index;
};

#define SYMBOLIZER_ROOT_FDS 8 /* JIT processes whose map written at exit can be read */

struct symbolizer {
	struct symbolizer_opts opts;
	struct pidindex procs;   /* pid -> struct snapshot * (owned) */
	uint64_t jit_no_map;     /* processes removed that ran JIT code without a perf map */
	size_t nroot_fds;        /* snapshots holding a root_fd, at most SYMBOLIZER_ROOT_FDS */
	struct symfile **files;  /* sorted by cache key */
	size_t nfiles, cap_files;
	struct debugfile **debugs; /* shared debug information, by build id */
	size_t ndebugs, cap_debugs;
	struct debuginfo_client *dic;
	int dic_state;           /* 0 not tried, 1 usable, -errno */
	struct symbolizer_file **loose; /* each held until symbolizer_free */
	size_t nloose, cap_loose;

	struct shared_map *shared; /* file segments' mapping keys */
	size_t nshared, cap_shared;
	struct resnap *resnap;   /* processes to snapshot again (symbolizer_add_process_later) */
	size_t nresnap, cap_resnap;
	uint64_t idle_clock;     /* counts files becoming unused */
	size_t nidle;            /* files with no reference kept for reuse */
	uint64_t sweep_ns;       /* when idle files were last swept (0: not yet; CLOCK_MONOTONIC) */
	uint64_t sweep_clock;    /* idle_clock then: files idle since before were unused since */

	/* Indexing ahead (symbolizer_index_ahead): a worker thread indexes the files that
	 * symbolizer_user_ready asks for. s->lock guards the queue, the files' state, queued and
	 * indexing fields, and the debug-information table; dic_lock the debuginfod client. */
	pthread_mutex_t lock, dic_lock;
	pthread_cond_t work, done;
	pthread_t worker;
	bool worker_on, worker_stop;
	struct symfile **queue;
	size_t nqueue, cap_queue;
	struct dm_cache dms;
	uint64_t names_gen;      /* counts the times names given out were freed */
	uint32_t next_key;       /* the last mapping key given */
	uint32_t unknown_key;

	int vdso_state;          /* 0 not loaded, 1 loaded, -errno */
	struct elfsym vdso;

	int ksym_state;          /* 0 not loaded, 1 loaded, -errno */
	struct ksym ksym;
	pthread_t ksym_thread;   /* loading ksym ahead (symbolizer_prefetch_kernel) */
	bool ksym_loading;
	int ksym_async_err;
	bool ksym_done;          /* the prefetch thread has finished (atomic) */
	char *kallsyms_path;     /* NULL: /proc/kallsyms */
	uint32_t kernel_key;
	uint32_t kernel_cache_key; /* of every kernel address, until kallsyms changes */
	uint32_t *module_keys;   /* ksym.nmodules keys (0: not given yet) */
	uint64_t *module_limits; /* each module's end when its key was given (the kernel's
				  * lookup grows "bpf"'s: its mapping keeps the first) */
	char module_name[256];   /* "[MODULE]" of the last kernel address resolved */

	pid_t perfmap_noted;     /* the last pid whose perf map was refused (noted once) */
	size_t nheld;            /* files holding their descriptor until indexed (atomic) */
	size_t fd_budget;        /* how many may (0: not computed yet) */
};

/* Empties the caches keyed by name pointers, before what they point into is freed, and tells
 * the callers (symbolizer_names_gen). */
void symbolizer_forget_names(struct symbolizer *s);

#endif
