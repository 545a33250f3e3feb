/* The symbolizer front: process snapshots (maps, open files, perf maps), a file cache keyed by
 * (dev, inode, size, mtime), a debug-information cache keyed by build id, the vDSO, kallsyms,
 * and the mapping keys its callers cache what they make of an address by. */
#include "symbolize/symbolize.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "elf/debuginfo.h"
#include "base/demangle.h"
#include "base/diag.h"
#include "elf/dwarfsym.h"
#include "elf/elfsym.h"
#include "base/fileid.h"
#include "base/pidindex.h"
#include "elf/funcbounds.h"
#include "elf/gopclntab.h"
#include "base/hash.h"
#include "base/hashtab.h"
#include "symbolize/ksym.h"
#include "elf/perfmap.h"
#include "proc/procmap.h"
#include "base/safeopen.h"
#include "base/vec.h"

/* Short names of the reasons. */
#define R_RESOLVED SYMBOLIZER_RESOLVED
#define R_NO_PROCESS SYMBOLIZER_NO_PROCESS
#define R_NO_MAPPING SYMBOLIZER_NO_MAPPING
#define R_NO_SYMBOL SYMBOLIZER_NO_SYMBOL
#define R_NO_FILE SYMBOLIZER_NO_FILE
#define R_NO_JIT_SYMBOL SYMBOLIZER_NO_JIT_SYMBOL

#define MAX_FRAMES SYMBOLIZER_MAX_FRAMES

/* What symbolizer_resolve resolves (struct symbolizer_loc.source). */
enum loc_source { LS_UNKNOWN, LS_SNAPMAP, LS_JIT, LS_LOOSE, LS_KERNEL };

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

/* A file segment's mapping key, shared by every process that maps it: addresses are the file's
 * own (ELF) addresses, so processes of one binary share their cache keys whatever their load
 * addresses. Found by the file's cache key and the mapping's file offset (dev and ino 0: the
 * vDSO). */
struct shared_map {
	struct file_id id; /* of the file; zero for the vDSO */
	uint64_t offset;
	uint32_t key;
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

/* A file looked up by path, not through a process (symbolizer_file_find, ..._frames). */
struct symbolizer_file {
	struct symfile *file;
	char *path;
	uint32_t key;         /* its mapping key; 0 until first used */
};

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

/* A process to snapshot again at due_ns (CLOCK_MONOTONIC). */
struct resnap {
	pid_t pid;
	uint64_t due_ns;
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

/* ---- demangling cache ---- */

/* Empties the demangling cache. */
static void dm_clear(struct dm_cache *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->slots[i].name);
	free(c->slots);
	hashtab_release(&c->index);
	memset(c, 0, sizeof(*c));
}

/* The hash of a raw name pointer. */
static uint64_t dm_hash(const char *raw)
{
	return hash_mix64((uintptr_t)raw);
}

/* Whether entry id is the one of raw name pointer key. */
static bool dm_eq(const void *ctx, uint32_t id, const void *key)
{
	return ((const struct dm_cache *)ctx)->slots[id].raw == key;
}

/* The name to show for raw: demangled (cached by the raw pointer, which stays valid while its
 * file is cached) unless the options say not to or it is not mangled. NULL on -ENOMEM. */
static const char *display_name(struct symbolizer *s, const char *raw)
{
	if (!s->opts.demangle || !demangle_candidate(raw))
		return raw;
	struct dm_cache *c = &s->dms;
	int64_t id = hashtab_find(&c->index, dm_hash(raw), dm_eq, c, raw);
	if (id < 0) {
		if (VEC_GROW(c->slots, c->cap, c->n + 1) || hashtab_reserve(&c->index, c->n + 1))
			return NULL;
		char *dm = demangle_name(raw);
		if (!dm && errno == ENOMEM)
			return NULL;
		c->slots[c->n] = (struct dm_slot){ raw, dm };
		hashtab_add(&c->index, dm_hash(raw), c->n); /* reserved: cannot fail */
		id = c->n++;
	}
	return c->slots[id].name ? c->slots[id].name : raw;
}

/* Empties the caches keyed by name pointers, before what they point into is freed, and tells
 * the callers (symbolizer_names_gen). */
static void forget_names(struct symbolizer *s)
{
	s->names_gen++;
	dm_clear(&s->dms);
}

uint64_t symbolizer_names_gen(const struct symbolizer *s)
{
	return s->names_gen;
}

/* ---- debug information ---- */

/* Drops a reference to a debugfile; frees it with the last. */
static void debug_put(struct symbolizer *s, struct debugfile *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&s->lock);
	bool last = !--d->refs;
	for (size_t i = 0; last && i < s->ndebugs; i++) {
		if (s->debugs[i] != d)
			continue;
		s->debugs[i] = s->debugs[--s->ndebugs];
		break;
	}
	pthread_mutex_unlock(&s->lock);
	if (!last)
		return;
	forget_names(s);
	elfsym_release(&d->syms);
	dwarfsym_free(d->dwarf);
	free(d);
}

/* The shared debugfile of a build id for a file of owner, with a reference taken, or NULL. */
static struct debugfile *debug_shared(struct symbolizer *s, const char *build_id, uid_t owner)
{
	if (!build_id[0])
		return NULL;
	for (size_t i = 0; i < s->ndebugs; i++) {
		if (!strcmp(s->debugs[i]->build_id, build_id) && s->debugs[i]->owner == owner) {
			s->debugs[i]->refs++;
			return s->debugs[i];
		}
	}
	return NULL;
}

/* The debuginfod client, made on first use; NULL when there is none. */
static struct debuginfo_client *debuginfod(struct symbolizer *s)
{
	if (!s->dic_state && s->opts.debuginfod) {
		s->dic = debuginfo_client_new(s->opts.debuginfod_timeout_ms);
		s->dic_state = s->dic ? 1 : -errno;
		if (!s->dic && errno == ENOSYS)
			diag(DIAG_INFO, "cannot load libdebuginfod.so.1: debuginfod is not asked");
	}
	return s->dic;
}

/* Opens the separate debug file of f: local candidates, then debuginfod; fd or -1. */
static int open_debug_file(struct symbolizer *s, const struct symfile *f, char *found, size_t len)
{
	char root[64];
	struct debuginfo_query q = {
		.build_id = f->elf.build_id,
		.path = f->path,
		.debuglink = f->elf.debuglink[0] ? f->elf.debuglink : NULL,
		.crc = f->elf.debuglink_crc,
		.debug_dir = s->opts.debug_dir,
	};

	if (f->pid > 0) {
		snprintf(root, sizeof(root), "/proc/%d/root", (int)f->pid);
		q.root = root;
	}
	int fd = debuginfo_find(&q, found, len);
	if (fd >= 0 || !f->elf.build_id[0])
		return fd;
	pthread_mutex_lock(&s->dic_lock);
	if (debuginfod(s)) {
		fd = debuginfo_client_fetch(s->dic, f->elf.build_id);
		if (fd == -ETIMEDOUT && s->dic_state == 1) {
			diag(DIAG_WARN, "debuginfod gave no answer for build id %s within %d ms; "
			     "not asking it again", f->elf.build_id, s->opts.debuginfod_timeout_ms);
			s->dic_state = -ETIMEDOUT;
		}
		snprintf(found, len, "debuginfod:%s", f->elf.build_id);
	}
	pthread_mutex_unlock(&s->dic_lock);
	return fd;
}

/* Fills a fresh debugfile for f: the binary's own DWARF, else a separate file's. */
static void debug_fill(struct symbolizer *s, struct symfile *f, struct debugfile *d)
{
	char found[PATH_MAX] = "";

	if (f->elf.has_dwarf) {
		d->dwarf = dwarfsym_new_fd(f->fd);
		return;
	}
	int fd = open_debug_file(s, f, found, sizeof(found));
	if (fd < 0)
		return;
	diag(DIAG_DEBUG, "debug information of '%s' from '%s'", f->path ? f->path : "?", found);
	if (elfsym_init_fd(&d->syms, fd))
		memset(&d->syms, 0, sizeof(d->syms));
	d->dwarf = dwarfsym_new_fd(fd);
	close(fd);
}

/* Adds d to the shared table, unless another thread added its build id meanwhile: then that
 * one is returned (with a reference) and d is freed. NULL on -ENOMEM (d freed). Under s->lock. */
static struct debugfile *debug_publish(struct symbolizer *s, struct debugfile *d)
{
	struct debugfile *other = debug_shared(s, d->build_id, d->owner);

	if (!other && !VEC_GROW(s->debugs, s->cap_debugs, s->ndebugs + 1)) {
		s->debugs[s->ndebugs++] = d;
		return d;
	}
	elfsym_release(&d->syms);
	dwarfsym_free(d->dwarf);
	free(d);
	return other;
}

/* Finds (or shares) the debug information of an indexed file; NULL on -ENOMEM. Any thread:
 * the table is looked at under s->lock, the debug file read outside it. */
static struct debugfile *debug_get(struct symbolizer *s, struct symfile *f)
{
	pthread_mutex_lock(&s->lock);
	struct debugfile *d = debug_shared(s, f->elf.build_id, f->owner);
	pthread_mutex_unlock(&s->lock);

	if (d)
		return d;
	if (!(d = calloc(1, sizeof(*d))))
		return NULL;
	d->refs = 1;
	strcpy(d->build_id, f->elf.build_id);
	d->owner = f->owner;
	debug_fill(s, f, d);
	if (!d->build_id[0])
		return d;
	pthread_mutex_lock(&s->lock);
	d = debug_publish(s, d);
	pthread_mutex_unlock(&s->lock);
	return d;
}

/* ---- file cache ---- */

/* Finds the slot of the file with st's key: its index (*found set) or where it would go. */
static size_t file_slot(const struct symbolizer *s, const struct stat *st, bool *found)
{
	struct file_id k = file_id_of(st);
	size_t at = PARTITION_POINT(s->nfiles, i, file_id_cmp(&s->files[i]->id, &k) < 0);

	*found = at < s->nfiles && file_id_eq(&s->files[at]->id, &k);
	return at;
}

/* Inserts a new file for fd (taking it over) at slot i; NULL on -ENOMEM. */
static struct symfile *file_insert(struct symbolizer *s, size_t i, int fd, const struct stat *st,
				   const char *path, pid_t pid)
{
	struct symfile *f;

	if (VEC_GROW(s->files, s->cap_files, s->nfiles + 1))
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(path))) {
		free(f);
		return NULL;
	}
	f->id = file_id_of(st);
	f->owner = st->st_uid;
	f->fd = fd;
	__atomic_add_fetch(&s->nheld, 1, __ATOMIC_RELAXED);
	f->pid = pid;
	f->refs = 1;
	memmove(&s->files[i + 1], &s->files[i], (s->nfiles - i) * sizeof(*s->files));
	s->files[i] = f;
	s->nfiles++;
	return f;
}

/* Takes a reference to a cached file (an idle one is in use again). */
static struct symfile *file_ref(struct symbolizer *s, struct symfile *f)
{
	if (!f->refs++)
		s->nidle--;
	return f;
}

static int file_index(struct symbolizer *s, struct symfile *f);

/* Descriptors this process has open now; 0 when /proc/self/fd cannot be read. */
static size_t open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	size_t n = 0;

	if (!d)
		return 0;
	while (readdir(d))
		n++;
	closedir(d);
	return n > 3 ? n - 3 : 0; /* ".", ".." and the directory's own */
}

/* How many unindexed files may hold their descriptor: half of what the soft limit on open
 * files leaves when the first file is opened (the rest is for snapshots, perf maps, the spill
 * file), computed once. */
static size_t fd_budget(struct symbolizer *s)
{
	struct rlimit rl;

	if (!s->fd_budget) {
		s->fd_budget = SIZE_MAX;
		if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY) {
			size_t used = open_fds(), left = rl.rlim_cur > used ? rl.rlim_cur - used : 0;
			s->fd_budget = left / 2 > 4 ? left / 2 : 4;
		}
	}
	return s->fd_budget;
}

/* Indexes one unindexed file now (which closes it) when the held descriptors reach the budget,
 * or always when force: indexing early costs time, a file that cannot be opened costs its
 * symbols. True when one was closed. */
static bool relieve_fds(struct symbolizer *s, bool force)
{
	struct symfile *f = NULL;

	if (!force && __atomic_load_n(&s->nheld, __ATOMIC_RELAXED) < fd_budget(s))
		return false;
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->nfiles && !f; i++)
		if (s->files[i]->fd >= 0 && !s->files[i]->state && !s->files[i]->indexing)
			f = s->files[i];
	pthread_mutex_unlock(&s->lock);
	if (f)
		file_index(s, f);
	return f && f->fd < 0;
}

/* safeopen, indexing held files to free descriptors while it fails with EMFILE; the warning
 * comes only when that does not help. */
static int open_relieved(struct symbolizer *s, const char *path, int flags, struct stat *st)
{
	int fd;

	relieve_fds(s, false);
	for (int tries = 0;; tries++) {
		fd = safeopen(path, flags | SAFEOPEN_NOWARN, 0, st);
		if ((fd != -EMFILE && fd != -ENFILE) || tries == 8 || !relieve_fds(s, true))
			break;
	}
	safeopen_note_error(fd);
	return fd;
}

/* Returns the cached file at open_path (stat'ed first, opened only when new, through safeopen
 * with flags) with a reference taken; NULL + errno (EINVAL: not a regular file). want_ino (when
 * non-zero) must match the file's inode. path is the name the process knows it by. */
static struct symfile *file_get(struct symbolizer *s, const char *open_path, int flags,
				uint64_t want_ino, const char *path, pid_t pid)
{
	struct stat st;
	bool found;
	int fd;

	int err = safeopen_stat(open_path, &st); /* inside a process's root, as safeopen opens it */
	if (err) {
		errno = -err;
		return NULL;
	}
	if (want_ino && st.st_ino != want_ino) {
		errno = ESTALE;
		return NULL;
	}
	size_t i = file_slot(s, &st, &found);
	if (found)
		return file_ref(s, s->files[i]);
	fd = open_relieved(s, open_path, flags, &st);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	if (want_ino && st.st_ino != want_ino) {
		close(fd);
		errno = ESTALE;
		return NULL;
	}
	i = file_slot(s, &st, &found);
	if (found) {
		close(fd);
		return file_ref(s, s->files[i]);
	}
	struct symfile *f = file_insert(s, i, fd, &st, path, pid);
	if (!f) {
		close(fd);
		errno = ENOMEM;
	}
	return f;
}

/* Takes f back from the indexing worker: out of its queue, or waits for the worker to finish
 * it. Afterwards this thread alone touches f. */
static void file_claim(struct symbolizer *s, struct symfile *f)
{
	if (!s->worker_on)
		return;
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; f->queued && i < s->nqueue; i++) {
		if (s->queue[i] != f)
			continue;
		memmove(&s->queue[i], &s->queue[i + 1], (s->nqueue - i - 1) * sizeof(*s->queue));
		s->nqueue--;
		f->queued = false;
	}
	while (f->indexing)
		pthread_cond_wait(&s->done, &s->lock);
	pthread_mutex_unlock(&s->lock);
}

/* Frees a file's contents and the file. */
static void file_free(struct symbolizer *s, struct symfile *f)
{
	file_claim(s, f);
	if (f->fd >= 0) {
		close(f->fd);
		__atomic_sub_fetch(&s->nheld, 1, __ATOMIC_RELAXED);
	}
	forget_names(s);
	elfsym_release(&f->elf);
	debug_put(s, f->debug);
	gopclntab_free(f->go);
	for (size_t i = 0; f->bound_names && i < f->bounds.n; i++)
		free(f->bound_names[i]);
	free(f->bound_names);
	funcbounds_release(&f->bounds);
	free(f->path);
	free(f);
}

/* Removes a file from the cache and frees it. */
static void file_drop(struct symbolizer *s, struct symfile *f)
{
	for (size_t i = 0; i < s->nfiles; i++) {
		if (s->files[i] != f)
			continue;
		memmove(&s->files[i], &s->files[i + 1], (s->nfiles - i - 1) * sizeof(*s->files));
		s->nfiles--;
		break;
	}
	file_free(s, f);
}

/* Drops a reference. A file nothing uses stays cached, indexed, while it is one of the
 * MAX_IDLE_FILES most recently unused (the next process of the same binary finds it); the
 * longest unused goes beyond that. */
static void file_put(struct symbolizer *s, struct symfile *f)
{
	if (!f || --f->refs)
		return;
	f->idle = ++s->idle_clock;
	if (++s->nidle <= MAX_IDLE_FILES)
		return;
	struct symfile *oldest = NULL;
	for (size_t i = 0; i < s->nfiles; i++)
		if (!s->files[i]->refs && (!oldest || s->files[i]->idle < oldest->idle))
			oldest = s->files[i];
	s->nidle--;
	file_drop(s, oldest);
}

/* funcbounds_filter's test: whether a function's bounds name an address no symbol names. */
static bool bounds_uncovered(void *ctx, const struct funcbounds_range *r)
{
	const struct symfile *f = ctx;

	return !elfsym_covers(&f->elf, r->start, r->end) &&
	       !(f->debug && elfsym_covers(&f->debug->syms, r->start, r->end));
}

/* Reads the bounds of the file's functions that its symbols leave unnamed (kept only for
 * those: a file with every symbol keeps none). 0 or -ENOMEM. */
static int bounds_read(struct symfile *f)
{
	int err = funcbounds_init_fd(&f->bounds, f->fd);

	if (err)
		return err == -ENOMEM ? err : 0; /* no .eh_frame to read: no bounds */
	funcbounds_filter(&f->bounds, bounds_uncovered, f);
	return 0;
}

/* Reads a Go binary's pclntab (names, lines and inlined frames where .symtab and DWARF are
 * gone); 0 (none: f->go NULL) or -ENOMEM. */
static int go_read(struct symfile *f)
{
	f->go = gopclntab_new_fd(f->fd);
	return !f->go && errno == ENOMEM ? -ENOMEM : 0;
}

/* Reads the file's symbols and finds its debug information (and closes it); returns its new
 * state (1 or the indexing -errno), or 0 on -ENOMEM (state unchanged: tried again later). Runs
 * in whichever thread owns f for now (the worker while f->indexing). */
static int index_file(struct symbolizer *s, struct symfile *f)
{
	int err = elfsym_init_fd(&f->elf, f->fd);

	if (!err && !(f->debug = debug_get(s, f)))
		err = -ENOMEM;
	if (!err)
		err = go_read(f);
	if (!err)
		err = bounds_read(f);
	if (err == -ENOMEM) {
		elfsym_release(&f->elf);
		debug_put(s, f->debug);
		f->debug = NULL;
		gopclntab_free(f->go);
		f->go = NULL;
		return 0;
	}
	close(f->fd);
	f->fd = -1;
	__atomic_sub_fetch(&s->nheld, 1, __ATOMIC_RELAXED);
	return err ? err : 1;
}

/* Indexes the file on first use (here, unless the worker has done it); returns 0, -ENOMEM
 * (not remembered) or the indexing -errno. */
static int file_index(struct symbolizer *s, struct symfile *f)
{
	file_claim(s, f);
	if (f->state == 0) {
		int state = index_file(s, f);
		if (!state)
			return -ENOMEM;
		f->state = state;
	}
	return f->state < 0 ? f->state : 0;
}

/* The worker: indexes queued files, oldest first, until told to stop. */
static void *index_worker(void *arg)
{
	struct symbolizer *s = arg;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (!s->nqueue && !s->worker_stop)
			pthread_cond_wait(&s->work, &s->lock);
		if (s->worker_stop)
			break;
		struct symfile *f = s->queue[0];
		memmove(&s->queue[0], &s->queue[1], --s->nqueue * sizeof(*s->queue));
		f->queued = false;
		f->indexing = true;
		pthread_mutex_unlock(&s->lock);
		int state = f->state ? f->state : index_file(s, f);
		pthread_mutex_lock(&s->lock);
		if (state)
			f->state = state;
		f->indexing = false;
		pthread_cond_broadcast(&s->done);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* Whether f is indexed; when not, hands it to the worker (once) and says no. */
static bool file_ready(struct symbolizer *s, struct symfile *f)
{
	pthread_mutex_lock(&s->lock);
	bool ready = f->state != 0 && !f->indexing;
	if (!ready && !f->queued && !f->indexing) {
		if (!VEC_GROW(s->queue, s->cap_queue, s->nqueue + 1)) {
			s->queue[s->nqueue++] = f;
			f->queued = true;
			pthread_cond_signal(&s->work);
		} else {
			ready = true; /* out of memory: the caller indexes it itself */
		}
	}
	pthread_mutex_unlock(&s->lock);
	return ready;
}

/* ---- snapshots ---- */

/* A cached file with the device and inode a mapping names (no system call: the processes of one
 * binary share it), with a reference taken; NULL when none is cached. */
static struct symfile *file_known(struct symbolizer *s, const struct procmap_entry *e)
{
	dev_t dev = makedev(e->dev_major, e->dev_minor);

	if (!e->inode)
		return NULL;
	/* the first file at or after (dev, inode): the cache is sorted by them */
	size_t lo = PARTITION_POINT(s->nfiles, i, s->files[i]->id.dev < dev ||
				    (s->files[i]->id.dev == dev && s->files[i]->id.ino < e->inode));
	if (lo < s->nfiles && s->files[lo]->id.dev == dev && s->files[lo]->id.ino == e->inode)
		return file_ref(s, s->files[lo]);
	return NULL;
}

/* Opens the file behind a snapshot's file mapping: the cached one with its device and inode,
 * else map_files (works for deleted files while the process lives), then the path as the
 * process sees it, then the path as we see it — each checked against the mapping's inode. */
static struct symfile *snapshot_open(struct symbolizer *s, pid_t pid, const struct procmap_entry *e)
{
	char path[PATH_MAX + 64];
	struct symfile *f = file_known(s, e);

	if (f)
		return f;
	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)e->start, (unsigned long long)e->end);
	f = file_get(s, path, 0, e->inode, e->path, pid); /* a link the kernel made: followed */
	if (f || errno == ENOMEM || e->deleted || e->path[0] != '/')
		return f;
	/* maps names the file itself, never a symlink: one found there now is someone else's */
	if ((size_t)snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, e->path) < sizeof(path)) {
		f = file_get(s, path, SAFEOPEN_NOFOLLOW, e->inode, e->path, pid);
		if (f || errno == ENOMEM)
			return f;
	}
	return file_get(s, e->path, SAFEOPEN_NOFOLLOW, e->inode, e->path, pid);
}

/* A non-executable file mapping shares the file of a nearby executable mapping of the same inode
 * (the segments of one file are adjacent in maps). */
static struct symfile *sibling_file(const struct snapshot *snap, size_t i)
{
	const struct procmap_entry *e = &snap->map.entries[i];
	size_t lo = i > 8 ? i - 8 : 0, hi = i + 9 < snap->map.n ? i + 9 : snap->map.n;

	for (size_t j = lo; j < hi; j++) {
		const struct procmap_entry *o = &snap->map.entries[j];
		if (j != i && snap->maps[j].file && o->inode == e->inode &&
		    o->dev_major == e->dev_major && o->dev_minor == e->dev_minor &&
		    !strcmp(o->path, e->path))
			return snap->maps[j].file;
	}
	return NULL;
}

/* Attaches symbol sources to every mapping of a fresh snapshot; 0 or -ENOMEM. */
static int snapshot_attach(struct symbolizer *s, struct snapshot *snap)
{
	for (size_t i = 0; i < snap->map.n; i++) {
		const struct procmap_entry *e = &snap->map.entries[i];
		struct snapmap *m = &snap->maps[i];
		if (e->kind == PROCMAP_VDSO)
			m->src = SRC_VDSO;
		if (e->kind != PROCMAP_FILE || !e->x)
			continue;
		m->src = SRC_FILE;
		m->file = snapshot_open(s, snap->pid, e);
		if (!m->file && errno == ENOMEM)
			return -ENOMEM;
		if (!m->file)
			diag(DIAG_DEBUG, "cannot open '%s' of pid %d: %s", e->path, (int)snap->pid,
			     safeopen_strerror(-errno));
	}
	for (size_t i = 0; i < snap->map.n; i++) {
		const struct procmap_entry *e = &snap->map.entries[i];
		struct snapmap *m = &snap->maps[i];
		if (e->kind != PROCMAP_FILE || e->x || !(m->file = sibling_file(snap, i)))
			continue;
		m->src = SRC_FILE;
		m->file->refs++;
	}
	return 0;
}

/* The pid of a process in its own (innermost) pid namespace, from /proc/PID/status; pid when
 * that cannot be read. */
static pid_t namespaced_pid(pid_t pid)
{
	char path[64], line[256];
	pid_t ns = pid;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return pid;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6))
			continue;
		char *last = strrchr(line, '\t');
		if (last && atoi(last + 1) > 0)
			ns = atoi(last + 1);
		break;
	}
	fclose(f);
	return ns;
}

/* Opens the snapshot's perf map inside the process's mount namespace, when there is one: a
 * regular file (a FIFO there must not hang us), not a symlink, owned by the process's user or
 * root and not writable by others (its names are trusted as the process's own), as perf does. */
static void perfmap_open(struct symbolizer *s, struct snapshot *snap)
{
	char path[96];
	uid_t uid;

	if (snap->perfmap_fd >= 0 || snap->perfmap_refused)
		return;
	if (!snap->perfmap_name[0]) /* a snapshot made from events: named at first need */
		snprintf(snap->perfmap_name, sizeof(snap->perfmap_name), "/tmp/perf-%d.map",
			 (int)namespaced_pid(snap->pid));
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)snap->pid, snap->perfmap_name);
	int fd = safeopen_process_uid(snap->pid, &uid);
	if (fd && snap->root_fd >= 0) { /* gone: its root as it was while it lived */
		snprintf(path, sizeof(path), "/proc/self/fd/%d%s", snap->root_fd, snap->perfmap_name);
		uid = snap->root_uid;
		fd = 0;
	}
	if (!fd)
		fd = safeopen(path, SAFEOPEN_NOFOLLOW | SAFEOPEN_OWNER, uid, NULL);
	if ((fd == -EINVAL || fd == -EPERM || fd == -ELOOP) && s->perfmap_noted != snap->pid)
		diag(DIAG_INFO, "ignoring '%s' of pid %d: %s", snap->perfmap_name, (int)snap->pid,
		     fd == -ELOOP ? "a symbolic link" : safeopen_strerror(fd));
	if (fd == -EINVAL || fd == -EPERM || fd == -ELOOP) {
		s->perfmap_noted = snap->pid;
		snap->perfmap_refused = true;
	}
	snap->perfmap_fd = fd < 0 ? -1 : fd;
}

/* Frees a snapshot and drops its file references. */
static void snapshot_free(struct symbolizer *s, struct snapshot *snap)
{
	if (!snap)
		return;
	for (size_t i = 0; snap->maps && i < snap->map.n; i++)
		file_put(s, snap->maps[i].file);
	free(snap->maps);
	procmap_release(&snap->map);
	if (snap->perfmap_fd >= 0)
		close(snap->perfmap_fd);
	if (snap->root_fd >= 0) {
		close(snap->root_fd);
		s->nroot_fds--;
	}
	perfmap_release(&snap->perfmap);
	free(snap);
}

/* Reads pid's maps and opens its files; NULL + errno. */
static struct snapshot *snapshot_new(struct symbolizer *s, pid_t pid)
{
	struct snapshot *snap = calloc(1, sizeof(*snap));
	int err;

	if (!snap)
		return NULL;
	snap->pid = pid;
	snap->perfmap_fd = -1;
	snap->root_fd = -1;
	err = procmap_read(&snap->map, pid);
	if (!err) {
		snap->maps = calloc(snap->map.n ? snap->map.n : 1, sizeof(*snap->maps));
		err = snap->maps ? snapshot_attach(s, snap) : -ENOMEM;
	}
	if (err) {
		safeopen_note_error(err);
		snapshot_free(s, snap);
		errno = -err;
		return NULL;
	}
	snprintf(snap->perfmap_name, sizeof(snap->perfmap_name), "/tmp/perf-%d.map",
		 (int)namespaced_pid(pid));
	perfmap_open(s, snap);
	return snap;
}

/* The snapshot of pid, or NULL when s has none. */
static struct snapshot *snapshot_of(const struct symbolizer *s, pid_t pid)
{
	return pidindex_get(&s->procs, pid);
}

/* Puts snap into the process table, replacing an older snapshot of its pid; 0 or -ENOMEM. */
static int proc_put(struct symbolizer *s, struct snapshot *snap)
{
	void *old;
	int err = pidindex_put(&s->procs, snap->pid, snap, &old);

	if (old)
		snapshot_free(s, old);
	return err;
}

struct symbolizer_snapshot *symbolizer_take(struct symbolizer *s, pid_t pid)
{
	struct snapshot *snap = snapshot_new(s, pid);

	if (snap && !snap->map.n) { /* a zombie: nothing to keep */
		snapshot_free(s, snap);
		errno = ESRCH;
		return NULL;
	}
	return (struct symbolizer_snapshot *)snap;
}

int symbolizer_install(struct symbolizer *s, struct symbolizer_snapshot *taken)
{
	struct snapshot *snap = (struct snapshot *)taken;

	if (proc_put(s, snap)) {
		snapshot_free(s, snap);
		return -ENOMEM;
	}
	return 0;
}

void symbolizer_snapshot_free(struct symbolizer *s, struct symbolizer_snapshot *taken)
{
	snapshot_free(s, (struct snapshot *)taken);
}

int symbolizer_add_process(struct symbolizer *s, pid_t pid)
{
	/* a process caught exiting (a zombie) has no mappings left: keep what was seen alive */
	struct symbolizer_snapshot *snap = symbolizer_take(s, pid);

	return snap ? symbolizer_install(s, snap) : -errno;
}

/* The symbol source of mapping e of a snapshot being made: old's (the snapshot it replaces)
 * when old has the same mapping, else opened now. 0 or -ENOMEM. */
static int snapmap_attach(struct symbolizer *s, const struct snapshot *old,
			  const struct procmap_entry *e, struct snapmap *m, pid_t pid)
{
	const struct procmap_entry *o = old ? procmap_find(&old->map, e->start) : NULL;

	if (o && o->start == e->start && o->end == e->end && o->offset == e->offset &&
	    o->inode == e->inode && o->kind == e->kind && !strcmp(o->path, e->path)) {
		*m = old->maps[o - old->map.entries];
		if (m->file)
			file_ref(s, m->file);
		return 0;
	}
	if (e->kind == PROCMAP_VDSO)
		m->src = SRC_VDSO;
	if (e->kind != PROCMAP_FILE || !e->x)
		return 0;
	m->src = SRC_FILE;
	if (!(m->file = snapshot_open(s, pid, e)) && errno == ENOMEM)
		return -ENOMEM;
	if (!m->file)
		diag(DIAG_DEBUG, "cannot open '%s' of pid %d: %s", e->path, (int)pid,
		     safeopen_strerror(-errno));
	return 0;
}

/* Moves old's perf map (open descriptor, what was read, its name) to snap. */
static void perfmap_move(struct snapshot *snap, struct snapshot *old)
{
	snap->perfmap_fd = old->perfmap_fd;
	snap->perfmap_state = old->perfmap_state;
	snap->perfmap_refused = old->perfmap_refused;
	snap->perfmap = old->perfmap;
	memcpy(snap->perfmap_name, old->perfmap_name, sizeof(snap->perfmap_name));
	snap->jit_key = old->jit_key;
	snap->jit_seen = old->jit_seen;
	snap->root_fd = old->root_fd;
	snap->root_uid = old->root_uid;
	old->perfmap_fd = -1;
	old->root_fd = -1;
	memset(&old->perfmap, 0, sizeof(old->perfmap));
}

int symbolizer_set_maps(struct symbolizer *s, pid_t pid, const struct procmap *map)
{
	struct snapshot *snap = calloc(1, sizeof(*snap));
	struct snapshot *old = snapshot_of(s, pid);
	int err = snap ? procmap_copy(&snap->map, map, false) : -ENOMEM;

	if (!snap)
		return err;
	snap->pid = pid;
	snap->perfmap_fd = -1;
	snap->root_fd = -1;
	snap->from_events = true;
	if (!err && !(snap->maps = calloc(snap->map.n ? snap->map.n : 1, sizeof(*snap->maps))))
		err = -ENOMEM;
	for (size_t j = 0; !err && j < snap->map.n; j++)
		err = snapmap_attach(s, old, &snap->map.entries[j], &snap->maps[j], pid);
	if (!err && old)
		perfmap_move(snap, old);
	if (!err)
		err = proc_put(s, snap);
	if (err)
		snapshot_free(s, snap);
	return err;
}

bool symbolizer_maps_file(struct symbolizer *s, pid_t pid, uint64_t addr)
{
	const struct snapshot *snap = snapshot_of(s, pid);
	const struct procmap_entry *e = snap ? procmap_find(&snap->map, addr) : NULL;

	return e && e->kind == PROCMAP_FILE;
}

/* Keeps the root folder of a process that runs JIT code without a map so far, for a map it
 * writes as it exits. Only processes with anonymous executable memory, and a few at once: each
 * holds a descriptor, and a recording of many processes needs its descriptors for their files. */
static void keep_root(struct symbolizer *s, struct snapshot *snap)
{
	char root[32];

	if (snap->perfmap_fd >= 0 || snap->root_fd >= 0 || snap->perfmap_refused ||
	    s->nroot_fds >= SYMBOLIZER_ROOT_FDS || !procmap_runs_jit(&snap->map) ||
	    safeopen_process_uid(snap->pid, &snap->root_uid))
		return;
	snprintf(root, sizeof(root), "/proc/%d/root", (int)snap->pid);
	snap->root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	s->nroot_fds += snap->root_fd >= 0;
}

int symbolizer_note_jit(struct symbolizer *s, pid_t pid)
{
	struct snapshot *snap = snapshot_of(s, pid);

	if (!snap)
		return -ENOENT;
	if (!snap->perfmap_state)
		perfmap_open(s, snap);
	keep_root(s, snap);
	return 0;
}

int symbolizer_note_exit(struct symbolizer *s, pid_t pid)
{
	struct snapshot *snap = snapshot_of(s, pid);

	if (!snap)
		return -ENOENT;
	/* a JIT process without a map so far: the one it wrote as it exited is read at next use */
	if (snap->root_fd >= 0 && snap->perfmap_fd < 0 && snap->perfmap_state < 0 &&
	    !snap->perfmap_refused)
		snap->perfmap_state = 0;
	return 0;
}

bool symbolizer_has_process(struct symbolizer *s, pid_t pid)
{
	return snapshot_of(s, pid) != NULL;
}

int symbolizer_add_process_later(struct symbolizer *s, pid_t pid, uint64_t now_ns)
{
	if (VEC_GROW(s->resnap, s->cap_resnap, s->nresnap + 1))
		return -ENOMEM;
	s->resnap[s->nresnap++] = (struct resnap){ pid, now_ns + SYMBOLIZER_RESNAP_NS };
	return 0;
}

/* Frees the idle files that were idle at the last sweep already (unused for IDLE_KEEP_NS at
 * least), once per IDLE_KEEP_NS. */
/* Takes the pages of the indexed files' mappings (symbol names, DWARF) out of the resident set:
 * what lookups read since stays mapped otherwise, and a long recording's RSS would grow with
 * every name it ever read (they stay in the page cache; a later lookup reads them again). */
static void drop_file_pages(struct symbolizer *s)
{
	for (size_t i = 0; i < s->nfiles; i++) {
		struct symfile *f = s->files[i];
		pthread_mutex_lock(&s->lock);
		bool indexed = f->state == 1 && !f->indexing;
		pthread_mutex_unlock(&s->lock);
		if (!indexed)
			continue; /* the worker may be filling it */
		elfsym_drop_pages(&f->elf);
		if (f->go)
			gopclntab_drop_pages(f->go);
		if (f->debug) {
			elfsym_drop_pages(&f->debug->syms);
			dwarfsym_drop_pages(f->debug->dwarf);
			dwarfsym_trim(f->debug->dwarf);
		}
	}
}

static void sweep_idle(struct symbolizer *s, uint64_t now_ns)
{
	if (s->sweep_ns && now_ns - s->sweep_ns < IDLE_KEEP_NS)
		return;
	if (s->sweep_ns)
		drop_file_pages(s);
	for (size_t i = s->nfiles; s->sweep_ns && i-- > 0;) {
		struct symfile *f = s->files[i];
		if (!f->refs && f->idle && f->idle <= s->sweep_clock) {
			s->nidle--;
			file_drop(s, f);
		}
	}
	s->sweep_ns = now_ns ? now_ns : 1;
	s->sweep_clock = s->idle_clock;
}

uint64_t symbolizer_refresh_due(struct symbolizer *s, uint64_t now_ns)
{
	uint64_t next = UINT64_MAX;
	size_t kept = 0;

	sweep_idle(s, now_ns);

	for (size_t i = 0; i < s->nresnap; i++) {
		if (s->resnap[i].due_ns <= now_ns) {
			symbolizer_add_process(s, s->resnap[i].pid);
			continue;
		}
		if (s->resnap[i].due_ns < next)
			next = s->resnap[i].due_ns;
		s->resnap[kept++] = s->resnap[i];
	}
	s->nresnap = kept;
	return next;
}

bool symbolizer_refresh_pending(const struct symbolizer *s, pid_t pid)
{
	for (size_t i = 0; i < s->nresnap; i++)
		if (s->resnap[i].pid == pid)
			return true;
	return false;
}

/* Drops pid's pending second snapshot (the process has gone). */
static void drop_resnap(struct symbolizer *s, pid_t pid)
{
	size_t kept = 0;

	for (size_t i = 0; i < s->nresnap; i++)
		if (s->resnap[i].pid != pid)
			s->resnap[kept++] = s->resnap[i];
	s->nresnap = kept;
}

/* Whether the process ran JIT code that its perf map did not describe: it had none. */
static bool no_map(const struct snapshot *snap)
{
	return snap->jit_seen && snap->perfmap_state != 1;
}

int symbolizer_remove_process(struct symbolizer *s, pid_t pid)
{
	struct snapshot *snap;

	drop_resnap(s, pid);
	if (!(snap = pidindex_take(&s->procs, pid)))
		return -ENOENT;
	s->jit_no_map += no_map(snap);
	snapshot_free(s, snap);
	return 0;
}

/* ---- mapping keys ---- */

/* A key never given before (never 0). */
static uint32_t new_key(struct symbolizer *s)
{
	return ++s->next_key;
}

/* Fills l for an address outside every known mapping: in "[unknown]", cached by its reason. */
static int unknown_loc(struct symbolizer *s, struct symbolizer_loc *l, uint64_t addr,
		       enum symbolizer_reason why)
{
	if (!s->unknown_key)
		s->unknown_key = new_key(s);
	l->key = SYMBOLIZER_KEY_UNKNOWN;
	l->flags = why;
	l->addr = addr;
	l->map = (struct symbolizer_mapping){ .key = s->unknown_key, .kind = FRAME_USER,
					      .name = "[unknown]", .build_id = "" };
	l->source = LS_UNKNOWN;
	return 0;
}

/* Turns resolved frames into l's frames, names demangled unless told not to; 0 or -ENOMEM. */
static int set_frames(struct symbolizer *s, struct symbolizer_loc *l,
		      const struct dwarfsym_frame *fr, int n)
{
	for (int i = 0; i < n; i++) {
		const char *shown = display_name(s, fr[i].name);
		if (!shown)
			return -ENOMEM;
		l->frames[i] = (struct resolved_frame){ shown, fr[i].name, fr[i].file, fr[i].line };
	}
	l->n = n;
	return 0;
}

/* ---- resolving in files ---- */

/* Loads the vDSO's symbols from our own process image (the same for every 64-bit process). */
static int vdso_load(struct symbolizer *s)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR);
	struct procmap self;
	const struct procmap_entry *e;
	int err;

	if (s->vdso_state)
		return s->vdso_state < 0 ? s->vdso_state : 0;
	err = base ? procmap_read(&self, getpid()) : -ENOENT;
	if (!err) {
		e = procmap_find(&self, base);
		err = e ? elfsym_init_memory(&s->vdso, (const void *)(uintptr_t)base, e->end - base)
			: -ENOENT;
		procmap_release(&self);
	}
	s->vdso_state = err ? err : 1;
	return err;
}

/* Whether an indexed file's addresses are resolved with inline frames and lines: by DWARF, or
 * by a Go binary's pclntab. */
static bool file_has_dwarf(const struct symfile *f)
{
	return f && ((f->debug && f->debug->dwarf) || f->go);
}

/* The ELF symbol at vaddr: the debug file's symbol table first, then the binary's. */
static const char *symbol_at(const struct symfile *f, uint64_t vaddr)
{
	const char *name = NULL;

	if (f->debug && !elfsym_lookup(&f->debug->syms, vaddr, &name, NULL))
		return name;
	if (!elfsym_lookup(&f->elf, vaddr, &name, NULL))
		return name;
	return NULL;
}

/* Drops unnamed inner frames of a chain (its outermost frame keeps its place). */
static int drop_unnamed(struct dwarfsym_frame *fr, int n)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		if (fr[i].name || i == n - 1)
			fr[k++] = fr[i];
	return k;
}

/* A Go binary's chain from its pclntab in place of DWARF's n frames, where DWARF has no
 * function there or no inlined frames that the pclntab has (a Go binary without DWARF, or
 * whose DWARF left the inlines out). Returns the frame count, n when DWARF's stays. */
static int resolve_go(const struct symfile *f, uint64_t vaddr, struct dwarfsym_frame *fr, int n)
{
	struct gopclntab_frame gf[MAX_FRAMES];
	int m;

	if (!f->go || n > 1 || (m = gopclntab_lookup(f->go, vaddr, gf, MAX_FRAMES)) < 1 ||
	    (m == n && fr[0].name))
		return n;
	for (int i = 0; i < m; i++)
		fr[i] = (struct dwarfsym_frame){ gf[i].name, gf[i].file, gf[i].line };
	return m;
}

/* Resolves ELF address vaddr of an indexed file into frames (innermost first): DWARF's inline
 * chain with lines (a Go binary's pclntab where DWARF has none), the outermost name falling
 * back to the symbol table. Returns the frame count (0: no function there) or -ENOMEM. */
static int resolve_file(const struct symfile *f, uint64_t vaddr, struct dwarfsym_frame *fr)
{
	int n = 0;

	if (f->debug && f->debug->dwarf)
		n = dwarfsym_lookup(f->debug->dwarf, vaddr, fr, MAX_FRAMES);
	if (n < 0)
		return n;
	n = resolve_go(f, vaddr, fr, n);
	if (n == 0)
		fr[n++] = (struct dwarfsym_frame){ NULL, NULL, 0 };
	if (!fr[n - 1].name && !(fr[n - 1].name = symbol_at(f, vaddr)))
		return 0;
	for (int i = 0; i < n - 1; i++)
		if (!fr[i].name)
			return drop_unnamed(fr, n);
	return n;
}

/* Names code no symbol covers by the function .eh_frame bounds it in: "module+0xSTART", the
 * file's base name and the function's start as an ELF address (the addresses its locations
 * keep), one string per function, kept with the file. 1 frame, 0 when no FDE holds vaddr, or
 * -ENOMEM. */
static int bounds_frame(struct symfile *f, uint64_t vaddr, struct dwarfsym_frame *fr)
{
	ptrdiff_t i = funcbounds_find(&f->bounds, vaddr);

	if (i < 0)
		return 0;
	if (!f->bound_names && !(f->bound_names = calloc(f->bounds.n, sizeof(*f->bound_names))))
		return -ENOMEM;
	if (!f->bound_names[i]) {
		const char *base = f->path ? strrchr(f->path, '/') : NULL;
		base = base ? base + 1 : f->path ? f->path : "";
		if (asprintf(&f->bound_names[i], "%s+0x%" PRIx64, base, f->bounds.r[i].start) < 0) {
			f->bound_names[i] = NULL;
			return -ENOMEM;
		}
	}
	fr[0] = (struct dwarfsym_frame){ f->bound_names[i], NULL, 0 };
	return 1;
}

/* resolve_file, then (no function there) the bounds' name; frames or 0 or -ENOMEM, and
 * whether a symbol (or DWARF) named them in *named. */
static int resolve_named(struct symfile *f, uint64_t vaddr, struct dwarfsym_frame *fr,
			 bool *named)
{
	int n = resolve_file(f, vaddr, fr);

	*named = n > 0;
	return n ? n : bounds_frame(f, vaddr, fr);
}

/* ---- user addresses ---- */

/* Reads the snapshot's perf map on first use (opening it now if it appeared after the
 * snapshot, while the process still lives); 0 or -errno. */
static int perfmap_ready(struct symbolizer *s, struct snapshot *snap)
{
	if (!snap->perfmap_state) {
		perfmap_open(s, snap);
		int err = snap->perfmap_fd < 0 ? -ENOENT
			  : perfmap_read_fd(&snap->perfmap, snap->perfmap_fd, PERFMAP_MAX_BYTES);
		if (err == -ENOMEM)
			return err;
		if (!err && snap->perfmap.truncated)
			diag(DIAG_WARN, "'%s' of pid %d is longer than %zu MiB: read up to there",
			     snap->perfmap_name, (int)snap->pid, PERFMAP_MAX_BYTES >> 20);
		snap->perfmap_state = err ? err : 1;
	}
	return snap->perfmap_state < 0 ? snap->perfmap_state : 0;
}

/* Fills l when the snapshot's perf map covers addr (in its FRAME_JIT mapping): 1, else 0, or
 * -ENOMEM. */
static int jit_find(struct symbolizer *s, struct snapshot *snap, uint64_t addr, bool ret,
		    struct symbolizer_loc *l)
{
	const char *name = NULL;

	snap->jit_seen = true;
	if (perfmap_ready(s, snap) == -ENOMEM)
		return -ENOMEM;
	if (snap->perfmap_state != 1 || perfmap_lookup(&snap->perfmap, ret ? addr - 1 : addr,
						       &name, NULL))
		return 0;
	if (!snap->jit_key)
		snap->jit_key = new_key(s);
	l->key = snap->jit_key;
	l->addr = addr;
	l->map = (struct symbolizer_mapping){ .key = snap->jit_key, .kind = FRAME_JIT,
					      .name = snap->perfmap_name, .build_id = "" };
	l->source = LS_JIT;
	l->priv[0] = (void *)name;
	return 1;
}

/* The symbol source of a snapshot mapping, indexed: R_RESOLVED with *f / *vdso set, or why
 * there is none (-ENOMEM in *err). */
static enum symbolizer_reason source_of(struct symbolizer *s, const struct snapmap *m,
					struct symfile **f, const struct elfsym **vdso, int *err)
{
	*f = NULL;
	*vdso = NULL;
	*err = 0;
	if (m->src == SRC_VDSO) {
		if (vdso_load(s))
			return R_NO_FILE;
		*vdso = &s->vdso;
		return R_RESOLVED;
	}
	if (m->src != SRC_FILE)
		return R_NO_SYMBOL;
	int e = m->file ? file_index(s, m->file) : -ENOENT;
	if (e) {
		if (e == -ENOMEM)
			*err = e;
		return R_NO_FILE;
	}
	*f = m->file;
	return R_RESOLVED;
}

/* Mapping name of a process mapping. */
static const char *mapping_name(const struct procmap_entry *e)
{
	return e->kind == PROCMAP_ANON ? "[anon]" : e->path;
}

/* Kind of a process mapping's frames: anonymous memory is JIT code. */
static enum frame_kind mapping_kind(const struct procmap_entry *e)
{
	if (e->kind == PROCMAP_ANON || (e->kind == PROCMAP_PSEUDO && !strncmp(e->path, "[anon:", 6)))
		return FRAME_JIT;
	return FRAME_USER;
}

/* The shared mapping key entry of (file f or the vDSO, offset), or NULL. */
static struct shared_map *shared_find(struct symbolizer *s, const struct symfile *f,
				      uint64_t offset)
{
	for (size_t i = 0; i < s->nshared; i++) {
		struct shared_map *sm = &s->shared[i];
		if (sm->offset == offset &&
		    (f ? file_id_eq(&sm->id, &f->id) : !sm->id.dev && !sm->id.ino))
			return sm;
	}
	return NULL;
}

/* Gives (f or the vDSO, offset) a shared mapping key; 0 or -ENOMEM. */
static int shared_add(struct symbolizer *s, const struct symfile *f, uint64_t offset,
		      uint32_t key)
{
	if (VEC_GROW(s->shared, s->cap_shared, s->nshared + 1))
		return -ENOMEM;
	s->shared[s->nshared++] = (struct shared_map){
		.id = f ? f->id : (struct file_id){ 0 }, .offset = offset, .key = key,
	};
	return 0;
}

/* The load bias of a file (or vDSO) mapping: addr minus the ELF address it runs; false when
 * addr's file offset is in no segment. */
static bool mapping_bias(const struct elfsym *segs, const struct procmap_entry *e, uint64_t addr,
			 uint64_t *bias)
{
	uint64_t vaddr;

	if (elfsym_file_offset_to_vaddr(segs, addr - e->start + e->offset, &vaddr))
		return false;
	*bias = addr - vaddr;
	return true;
}

/* Gives a snapshot mapping its key on first use (addr: an address in it). A file's (or the
 * vDSO's) mapping shares the key of every process's mapping of the same file segment: its
 * range and addresses are the file's own, m->bias below the process's. 0 or -ENOMEM. */
static int snapmap_place(struct symbolizer *s, const struct procmap_entry *e, struct snapmap *m,
			 uint64_t addr)
{
	struct symfile *f;
	const struct elfsym *vdso;
	struct shared_map *sm = NULL;
	uint64_t bias = 0;
	int err;

	source_of(s, m, &f, &vdso, &err);
	if (err)
		return err;
	bool shared = (f || vdso) && mapping_bias(f ? &f->elf : vdso, e, addr, &bias);
	uint32_t key = shared && (sm = shared_find(s, f, e->offset)) ? sm->key : new_key(s);
	if (shared && !sm && shared_add(s, f, e->offset, key))
		return -ENOMEM;
	m->bias = bias;
	m->build_id = f ? f->elf.build_id : vdso ? vdso->build_id : "";
	m->dwarf = file_has_dwarf(f);
	m->key = key;
	return 0;
}

/* Fills l for addr in a snapshot mapping; 0 or -ENOMEM. */
static int snapmap_find(struct symbolizer *s, const struct procmap_entry *e, struct snapmap *m,
			uint64_t addr, struct symbolizer_loc *l)
{
	int err;

	if (!m->key && (err = snapmap_place(s, e, m, addr)))
		return err;
	l->key = m->key;
	l->addr = addr - m->bias;
	l->map = (struct symbolizer_mapping){
		.key = m->key, .kind = mapping_kind(e), .inline_frames = m->dwarf,
		.start = e->start - m->bias, .limit = e->end - m->bias, .offset = e->offset,
		.name = mapping_name(e), .build_id = m->build_id,
	};
	l->source = LS_SNAPMAP;
	l->priv[0] = (void *)e;
	l->priv[1] = m;
	return 0;
}

/* Resolves addr in a snapshot mapping into frames: R_RESOLVED with *n frames, or the reason
 * (*n = -ENOMEM on allocation failure). */
static enum symbolizer_reason resolve_user(struct symbolizer *s, const struct procmap_entry *e,
					   const struct snapmap *m, uint64_t addr, bool ret,
					   struct dwarfsym_frame *fr, int *n)
{
	struct symfile *f;
	const struct elfsym *vdso;
	int err;
	enum symbolizer_reason why = source_of(s, m, &f, &vdso, &err);
	uint64_t at = ret && addr > e->start ? addr - 1 : addr, vaddr;
	const struct elfsym *segs = f ? &f->elf : vdso;

	*n = err;
	if (why != R_RESOLVED || err)
		return mapping_kind(e) == FRAME_JIT ? R_NO_JIT_SYMBOL : why;
	if (elfsym_file_offset_to_vaddr(segs, at - e->start + e->offset, &vaddr))
		return R_NO_SYMBOL;
	if (vdso) {
		fr[0] = (struct dwarfsym_frame){ NULL, NULL, 0 };
		*n = elfsym_lookup(vdso, vaddr, &fr[0].name, NULL) ? 0 : 1;
	} else {
		bool named;
		*n = resolve_named(f, vaddr, fr, &named);
		if (*n > 0 && !named)
			return R_NO_SYMBOL; /* named by its bounds */
	}
	return *n > 0 ? R_RESOLVED : *n == 0 ? R_NO_SYMBOL : R_NO_FILE;
}

/* Whether a snapshot mapping has no ELF symbols, so its code may be JIT code. */
static bool maybe_jit(struct symbolizer *s, const struct snapmap *m)
{
	if (m->src == SRC_VDSO)
		return false;
	if (m->src != SRC_FILE || !m->file)
		return true;
	return file_index(s, m->file) == -ENOEXEC;
}

int symbolizer_user_find(struct symbolizer *s, pid_t pid, uint64_t addr, bool is_return_address,
			 struct symbolizer_loc *l)
{
	const struct procmap_entry *e;
	int err;

	l->flags = is_return_address;
	l->at = addr;
	struct snapshot *snap = snapshot_of(s, pid);
	if (!snap)
		return unknown_loc(s, l, addr, R_NO_PROCESS);
	if (!(e = procmap_find(&snap->map, addr))) {
		err = snap->from_events ? 0 : jit_find(s, snap, addr, is_return_address, l);
		return err ? (err < 0 ? err : 0) : unknown_loc(s, l, addr, R_NO_MAPPING);
	}
	struct snapmap *m = &snap->maps[e - snap->map.entries];
	if (maybe_jit(s, m) && (err = jit_find(s, snap, addr, is_return_address, l)))
		return err < 0 ? err : 0;
	return snapmap_find(s, e, m, addr, l);
}

int symbolizer_index_ahead(struct symbolizer *s)
{
	if (s->worker_on)
		return 0;
	int err = pthread_create(&s->worker, NULL, index_worker, s);
	s->worker_on = !err;
	return -err;
}

bool symbolizer_user_ready(struct symbolizer *s, pid_t pid, uint64_t addr)
{
	const struct snapshot *snap = snapshot_of(s, pid);

	if (!snap || !s->worker_on)
		return true;
	const struct procmap_entry *e = procmap_find(&snap->map, addr);
	if (!e)
		return true;
	struct snapmap *m = &snap->maps[e - snap->map.entries];
	return m->src != SRC_FILE || !m->file || file_ready(s, m->file);
}

/* Stops the indexing worker (the files it had not reached stay unindexed). */
static void stop_worker(struct symbolizer *s)
{
	if (!s->worker_on)
		return;
	pthread_mutex_lock(&s->lock);
	s->worker_stop = true;
	pthread_cond_broadcast(&s->work);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->worker, NULL);
	for (size_t i = 0; i < s->nqueue; i++)
		s->queue[i]->queued = false;
	s->nqueue = 0;
	s->worker_on = false;
}

struct symbolizer_file *symbolizer_file(struct symbolizer *s, const char *path)
{
	for (size_t i = 0; i < s->nloose; i++)
		if (!strcmp(s->loose[i]->path, path))
			return s->loose[i];
	if (VEC_GROW(s->loose, s->cap_loose, s->nloose + 1))
		return NULL;
	struct symbolizer_file *l = calloc(1, sizeof(*l));
	if (!l || !(l->path = strdup(path))) {
		free(l);
		errno = ENOMEM;
		return NULL;
	}
	if (!(l->file = file_get(s, path, 0, 0, path, 0))) {
		int err = errno;
		free(l->path);
		free(l);
		errno = err;
		return NULL;
	}
	s->loose[s->nloose++] = l;
	return l;
}

int symbolizer_file_find(struct symbolizer *s, const char *path, uint64_t vaddr,
			 bool is_return_address, struct symbolizer_loc *l)
{
	struct symbolizer_file *lf;
	int err;

	l->flags = is_return_address;
	l->at = vaddr;
	if (!(lf = symbolizer_file(s, path)))
		return errno == ENOMEM ? -ENOMEM : unknown_loc(s, l, vaddr, R_NO_FILE);
	if ((err = file_index(s, lf->file)) == -ENOMEM)
		return err;
	if (!lf->key)
		lf->key = new_key(s);
	l->key = lf->key;
	l->addr = vaddr;
	l->map = (struct symbolizer_mapping){
		.key = lf->key, .kind = FRAME_USER, .inline_frames = !err && file_has_dwarf(lf->file),
		.name = lf->path, .build_id = err ? "" : lf->file->elf.build_id,
	};
	l->source = LS_LOOSE;
	l->priv[0] = lf;
	return 0;
}

/* Resolves l of a file looked up by path (symbolizer_file_find). */
static int resolve_loose(struct symbolizer *s, struct symbolizer_loc *l)
{
	struct dwarfsym_frame fr[MAX_FRAMES];
	struct symbolizer_file *lf = l->priv[0];
	int err = lf->file->state < 0 ? lf->file->state : 0, n; /* indexed by the find */
	bool named = false;

	n = err ? 0 : resolve_named(lf->file, l->flags ? l->at - 1 : l->at, fr, &named);
	if (n < 0)
		return n;
	l->reason = err ? R_NO_FILE : named ? R_RESOLVED : R_NO_SYMBOL;
	return set_frames(s, l, fr, n);
}

int symbolizer_file_frames(struct symbolizer *s, struct symbolizer_file *l, uint64_t vaddr,
			   bool is_return_address, struct symbolizer_frame *frames, int max)
{
	struct dwarfsym_frame fr[MAX_FRAMES];
	int n, err;

	if ((err = file_index(s, l->file)))
		return err == -ENOMEM ? err : 0;
	n = resolve_file(l->file, is_return_address ? vaddr - 1 : vaddr, fr);
	if (n > max)
		n = max;
	for (int i = 0; i < n; i++) {
		const char *shown = fr[i].name[0] == '_' ? display_name(s, fr[i].name) : fr[i].name;
		if (!shown)
			return -ENOMEM;
		frames[i] = (struct symbolizer_frame){ shown, fr[i].name, fr[i].file, fr[i].line };
	}
	return n;
}

/* ---- kernel addresses ---- */

/* The prefetch thread: loads kallsyms into s->ksym, which nothing else touches meanwhile. */
static void *ksym_prefetch(void *arg)
{
	struct symbolizer *s = arg;

	s->ksym_async_err = ksym_load(&s->ksym, s->kallsyms_path);
	__atomic_store_n(&s->ksym_done, true, __ATOMIC_RELEASE);
	return NULL;
}

int symbolizer_prefetch_kernel(struct symbolizer *s)
{
	if (s->ksym_state || s->ksym_loading)
		return 0;
	int err = pthread_create(&s->ksym_thread, NULL, ksym_prefetch, s);
	s->ksym_loading = !err;
	return -err;
}

bool symbolizer_kernel_ready(struct symbolizer *s)
{
	return !s->ksym_loading || __atomic_load_n(&s->ksym_done, __ATOMIC_ACQUIRE);
}

/* Waits for a prefetch of kallsyms; returns its -errno, or 1 when none was running. */
static int ksym_join(struct symbolizer *s)
{
	if (!s->ksym_loading)
		return 1;
	pthread_join(s->ksym_thread, NULL);
	s->ksym_loading = false;
	return s->ksym_async_err;
}

int symbolizer_set_kallsyms(struct symbolizer *s, const char *path)
{
	char *copy = path ? strdup(path) : NULL;

	if (path && !copy)
		return -ENOMEM;
	ksym_join(s);
	free(s->kallsyms_path);
	s->kallsyms_path = copy;
	free(s->module_keys);
	free(s->module_limits);
	s->module_keys = NULL;
	s->module_limits = NULL;
	forget_names(s);
	ksym_release(&s->ksym);
	s->ksym_state = 0;
	s->kernel_key = 0; /* its range may differ: a mapping of its own */
	s->kernel_cache_key = 0; /* and what was found in the old kallsyms goes */
	return 0;
}

/* Loads kallsyms on first use; 0 or its -errno (remembered). */
static int ksym_ready(struct symbolizer *s)
{
	if (!s->ksym_state) {
		int err = ksym_join(s);
		if (err == 1)
			err = ksym_load(&s->ksym, s->kallsyms_path);
		if (err == -EPERM) /* every address 0: said once, as every kernel frame is unnamed */
			diag(DIAG_WARN, "kernel symbols are hidden (kptr_restrict): kernel frames "
			     "unnamed; run as root");
		else if (err)
			diag(DIAG_INFO, "cannot read kernel symbols from '%s': %s",
			     s->kallsyms_path ? s->kallsyms_path : "/proc/kallsyms", strerror(-err));
		if (!err) {
			s->module_keys = calloc(s->ksym.nmodules + 1, sizeof(*s->module_keys));
			s->module_limits = calloc(s->ksym.nmodules + 1, sizeof(*s->module_limits));
			if (!s->module_keys || !s->module_limits) {
				free(s->module_keys);
				free(s->module_limits);
				s->module_keys = NULL;
				s->module_limits = NULL;
				ksym_release(&s->ksym);
				return -ENOMEM; /* not remembered: may work next time */
			}
		}
		s->ksym_state = err ? err : 1;
	}
	return s->ksym_state < 0 ? s->ksym_state : 0;
}

/* The mapping of the core kernel (module NULL) or of a module, its key given on first use. */
static void kernel_map(struct symbolizer *s, const char *module, struct symbolizer_mapping *m)
{
	size_t i = 0;

	while (module && i < s->ksym.nmodules && s->ksym.modules[i].name != module)
		i++;
	if (!module || i == s->ksym.nmodules) {
		if (!s->kernel_key)
			s->kernel_key = new_key(s);
		*m = (struct symbolizer_mapping){ .key = s->kernel_key, .kind = FRAME_KERNEL,
						  .start = s->ksym.core_start,
						  .limit = s->ksym.core_end,
						  .name = "[kernel.kallsyms]", .build_id = "" };
		return;
	}
	if (!s->module_keys[i]) {
		s->module_keys[i] = new_key(s);
		s->module_limits[i] = s->ksym.modules[i].end;
	}
	snprintf(s->module_name, sizeof(s->module_name), "[%s]", module);
	*m = (struct symbolizer_mapping){ .key = s->module_keys[i], .kind = FRAME_KERNEL,
					  .start = s->ksym.modules[i].start,
					  .limit = s->module_limits[i],
					  .name = s->module_name, .build_id = "" };
}

int symbolizer_kernel_find(struct symbolizer *s, uint64_t addr, bool is_return_address,
			   struct symbolizer_loc *l)
{
	if (!s->kernel_cache_key)
		s->kernel_cache_key = new_key(s);
	l->key = s->kernel_cache_key;
	l->flags = is_return_address;
	l->addr = l->at = addr;
	l->map.key = 0;
	l->source = LS_KERNEL;
	return 0;
}

/* Resolves l of a kernel address (kallsyms loaded now on first use): its frame and mapping. */
static int resolve_kernel(struct symbolizer *s, struct symbolizer_loc *l)
{
	struct dwarfsym_frame fr = { NULL, NULL, 0 };
	const char *module = NULL;
	int err = ksym_ready(s);

	if (err == -ENOMEM)
		return err;
	l->reason = R_RESOLVED;
	if (err)
		l->reason = R_NO_FILE;
	else if (ksym_lookup(&s->ksym, l->flags ? l->at - 1 : l->at, &fr.name, &module))
		l->reason = R_NO_SYMBOL;
	kernel_map(s, module, &l->map);
	return set_frames(s, l, &fr, fr.name ? 1 : 0);
}

/* Resolves l of a snapshot mapping (symbolizer_user_find). */
static int resolve_snapmap(struct symbolizer *s, struct symbolizer_loc *l)
{
	struct dwarfsym_frame fr[MAX_FRAMES];
	int n;

	l->reason = resolve_user(s, l->priv[0], l->priv[1], l->at, l->flags, fr, &n);
	if (n < 0)
		return n;
	return set_frames(s, l, fr, n);
}

int symbolizer_resolve(struct symbolizer *s, struct symbolizer_loc *l)
{
	struct dwarfsym_frame fr = { NULL, NULL, 0 };

	switch (l->source) {
	case LS_SNAPMAP:
		return resolve_snapmap(s, l);
	case LS_JIT:
		l->reason = R_RESOLVED;
		fr.name = l->priv[0];
		return set_frames(s, l, &fr, 1);
	case LS_LOOSE:
		return resolve_loose(s, l);
	case LS_KERNEL:
		return resolve_kernel(s, l);
	default:
		l->reason = l->flags;
		l->n = 0;
		return 0;
	}
}

int symbolizer_kernel_prepare(struct symbolizer *s, const uint64_t *ips, size_t n)
{
	uint64_t addrs[128];
	int err = ksym_ready(s);

	for (size_t i = 0; !err && i < n; i += 128) {
		size_t m = n - i < 128 ? n - i : 128;
		for (size_t j = 0; j < m; j++) /* what symbolizer_resolve looks up */
			addrs[j] = i + j ? ips[i + j] - 1 : ips[0];
		err = ksym_prepare(&s->ksym, addrs, m);
	}
	return err == -ENOMEM ? err : 0;
}

/* ---- lifecycle ---- */

void symbolizer_opts_init(struct symbolizer_opts *o)
{
	*o = (struct symbolizer_opts){
		.demangle = true,
		.debuginfod = true,
		.debuginfod_timeout_ms = 5000,
		.debug_dir = NULL,
	};
}

struct symbolizer *symbolizer_new_opts(const struct symbolizer_opts *o)
{
	struct symbolizer *s = calloc(1, sizeof(struct symbolizer));

	if (!s)
		return NULL;
	s->opts = *o;
	if (o->debug_dir && !(s->opts.debug_dir = strdup(o->debug_dir))) {
		free(s);
		return NULL;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->dic_lock, NULL);
	pthread_cond_init(&s->work, NULL);
	pthread_cond_init(&s->done, NULL);
	return s;
}

struct symbolizer *symbolizer_new(void)
{
	struct symbolizer_opts o;

	symbolizer_opts_init(&o);
	return symbolizer_new_opts(&o);
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	stop_worker(s);
	for (size_t i = 0; i < s->procs.n; i++)
		snapshot_free(s, s->procs.vals[i]);
	pidindex_release(&s->procs);
	for (size_t i = 0; i < s->nloose; i++) {
		file_put(s, s->loose[i]->file);
		free(s->loose[i]->path);
		free(s->loose[i]);
	}
	free(s->loose);
	while (s->nfiles) /* files still referenced (they should not be) */
		file_free(s, s->files[--s->nfiles]);
	free(s->files);
	while (s->ndebugs) { /* all released with their files, unless references leaked */
		s->debugs[s->ndebugs - 1]->refs = 1;
		debug_put(s, s->debugs[s->ndebugs - 1]);
	}
	free(s->debugs);
	debuginfo_client_free(s->dic);
	dm_clear(&s->dms);
	elfsym_release(&s->vdso);
	ksym_join(s);
	ksym_release(&s->ksym);
	FREE_ALL(s->kallsyms_path, s->module_keys, s->module_limits, s->shared, s->queue, s->resnap);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->dic_lock);
	pthread_cond_destroy(&s->work);
	pthread_cond_destroy(&s->done);
	free((char *)s->opts.debug_dir);
	free(s);
}

void symbolizer_stats(const struct symbolizer *s, struct symbolizer_stats *st)
{
	*st = (struct symbolizer_stats){
		.processes = s->procs.n,
		.files = s->nfiles,
		.idle_files = s->nidle,
		.jit_no_map = s->jit_no_map,
	};
	for (size_t i = 0; i < s->procs.n; i++)
		st->jit_no_map += no_map(s->procs.vals[i]);
}
