/* The symbolizer's file cache: files by (dev, inode, size, mtime), their indexing (here or in the
 * worker thread), their debug information shared by build id and owner, idle files kept and
 * swept (symbolize/filecache.h). */
#include "symbolize/filecache.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/safeopen.h"
#include "base/vec.h"
#include "elf/debuginfo.h"
#include "elf/dwarfsym.h"
#include "elf/gopclntab.h"
#include "proc/procmap.h"
#include "symbolize/symbolize_impl.h"

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
	symbolizer_forget_names(s);
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
struct symfile *filecache_ref(struct symbolizer *s, struct symfile *f)
{
	if (!f->refs++)
		s->nidle--;
	return f;
}

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
		filecache_index(s, f);
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
struct symfile *filecache_get(struct symbolizer *s, const char *open_path, int flags,
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
		return filecache_ref(s, s->files[i]);
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
		return filecache_ref(s, s->files[i]);
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
	symbolizer_forget_names(s);
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
void filecache_put(struct symbolizer *s, struct symfile *f)
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
int filecache_index(struct symbolizer *s, struct symfile *f)
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
bool filecache_ready(struct symbolizer *s, struct symfile *f)
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


/* A cached file with the device and inode a mapping names (no system call: the processes of one
 * binary share it), with a reference taken; NULL when none is cached. */
struct symfile *filecache_known(struct symbolizer *s, const struct procmap_entry *e)
{
	dev_t dev = makedev(e->dev_major, e->dev_minor);

	if (!e->inode)
		return NULL;
	/* the first file at or after (dev, inode): the cache is sorted by them */
	size_t lo = PARTITION_POINT(s->nfiles, i, s->files[i]->id.dev < dev ||
				    (s->files[i]->id.dev == dev && s->files[i]->id.ino < e->inode));
	if (lo < s->nfiles && s->files[lo]->id.dev == dev && s->files[lo]->id.ino == e->inode)
		return filecache_ref(s, s->files[lo]);
	return NULL;
}

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

/* Frees the idle files that were idle at the last sweep already (unused for IDLE_KEEP_NS at
 * least), once per IDLE_KEEP_NS. */
void filecache_sweep(struct symbolizer *s, uint64_t now_ns)
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

/* Stops the indexing worker (the files it had not reached stay unindexed). */
void filecache_stop_worker(struct symbolizer *s)
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

int filecache_start_worker(struct symbolizer *s)
{
	if (s->worker_on)
		return 0;
	int err = pthread_create(&s->worker, NULL, index_worker, s);
	s->worker_on = !err;
	return -err;
}

void filecache_release(struct symbolizer *s)
{
	filecache_stop_worker(s);
	while (s->nfiles) /* files still referenced (they should not be) */
		file_free(s, s->files[--s->nfiles]);
	free(s->files);
	while (s->ndebugs) { /* all released with their files, unless references leaked */
		s->debugs[s->ndebugs - 1]->refs = 1;
		debug_put(s, s->debugs[s->ndebugs - 1]);
	}
	free(s->debugs);
	debuginfo_client_free(s->dic);
	free(s->queue);
}
