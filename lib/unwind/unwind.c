/* DWARF unwinding, user space: per-file tables loaded once into the BPF rows array, and per-process
 * mapping descriptions for the BPF unwinder. */
#include "unwind/unwind.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/types.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <pthread.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "../../bpf/firn.h"
#include "base/clock.h"
#include "elf/debuginfo.h"
#include "base/diag.h"
#include "elf/elffile.h"
#include "base/fileid.h"
#include "proc/procmap.h"
#include "unwind/unwind_cache.h"
#include "unwind/unwind_table.h"
#include "base/safeopen.h"
#include "base/vec.h"

struct run;

#define UNBUILT_MAX 1024 /* files remembered as having no table built (the oldest go first) */

/* A file whose table is loaded (or known to have none). */
struct utable {
	struct file_id id;
	uid_t uid;          /* the file's owner: rows are shared only between files of one owner */
	bool loaded;        /* rows are in the BPF array */
	uint32_t row_start, row_count;
	struct { uint64_t offset, filesz; int64_t delta; } segs[4];
	uint32_t nsegs;
	char build_id[129]; /* "" when none: copies of a file share its rows */
};

/* A built table waiting to be written to the on-disk cache (its rows owned). */
struct cache_job {
	struct cache_job *next;
	char build_id[129];
	struct unwind_cache_src src;
	struct unwind_table t;
};

/* The cache's writer: a thread that writes built tables to the cache after they are in the
 * kernel, so that no file mapped meanwhile waits for a write (the first write of a recording
 * counts the cache's folder: 12-16 ms with 1,500 files). It alone writes to the cache; the
 * caller's thread only reads it. */
struct cache_writer {
	pthread_mutex_t lock;
	pthread_cond_t more;
	pthread_t thread;
	bool running, stopping;
	struct cache_job *head, **tail; /* first in, first written */
};

struct unwinder {
	int rows_fd;        /* the BPF array of row chunks (bpf/firn.h FIRN_ROWS_CHUNK) */
	int *chunks;        /* the chunks created so far (descriptors; chunk i holds rows from
			     * i * FIRN_ROWS_CHUNK) */
	uint32_t nchunks;
	/* until unwinder_settle: chunks go into rows_fd from a thread (each insertion into an
	 * array of maps waits an RCU grace period, 8-20 ms here), the recorder's start-up meanwhile */
	bool settled;
	bool inserting;      /* insert_thread runs */
	pthread_t insert_thread;
	struct chunk_insert { int rows_fd; uint32_t from, to; const int *fds; int err; } ins;
	bool rows_unmappable; /* a chunk is no BPF_F_MMAPABLE map: rows go by syscall */
	uint32_t max_rows, used;
	int pids_fd, umaps_fd, files_fd;
	uint32_t max_umaps;  /* entries of the BPF mappings pool */
	struct run *runs;    /* the pool's used parts, sorted by first */
	ssize_t vdso;        /* index of the vdso's table in tables, -1 when none */
	size_t nruns, cap_runs;
	struct utable *tables;
	size_t ntables, cap_tables;
	/* files seen without a built table (lazy descriptions): not opened again to find out */
	struct { dev_t dev; ino_t ino; } unbuilt[UNBUILT_MAX];
	size_t nunbuilt;
	struct unwind_cache *cache; /* NULL: disabled or unusable */
	struct cache_writer cw;
	struct unwinder_stats st;
};

static int load_vdso(struct unwinder *u);

/* The table cache FIRN_UNWIND_CACHE asks for (unwind_cache_open_env); NULL when it is off or
 * cannot be used (tables are then built every time). */
static struct unwind_cache *open_cache(void)
{
	struct unwind_cache *c = unwind_cache_open_env();

	if (!c && errno != ECANCELED)
		diag(DIAG_DEBUG, "no unwind table cache: %s", strerror(errno));
	return c;
}

/* Puts chunks [from, to) into the rows array (a thread's body: ctx is the struct
 * chunk_insert; err set to 0 or -errno). */
static void *insert_chunks(void *ctx)
{
	struct chunk_insert *c = ctx;

	c->err = 0;
	for (__u32 key = c->from; key < c->to && !c->err; key++)
		if (bpf_map_update_elem(c->rows_fd, &key, &c->fds[key], BPF_ANY))
			c->err = -errno;
	return NULL;
}

/* Waits for the insertion thread, if one runs; its 0 or -errno. */
static int join_insert(struct unwinder *u)
{
	if (!u->inserting)
		return 0;
	pthread_join(u->insert_thread, NULL);
	u->inserting = false;
	return u->ins.err;
}

int unwinder_settle(struct unwinder *u)
{
	u->settled = true;
	return join_insert(u);
}

/* Puts the chunks from `from` on in the rows array: from a thread before unwinder_settle
 * (started alone: an earlier insertion is waited for first), else at once. 0 or -errno. */
static int insert_from(struct unwinder *u, uint32_t from)
{
	int err = join_insert(u);

	u->ins = (struct chunk_insert){ u->rows_fd, from, u->nchunks, u->chunks, 0 };
	if (err || u->settled || pthread_create(&u->insert_thread, NULL, insert_chunks, &u->ins)) {
		insert_chunks(&u->ins);
		err = err ? err : u->ins.err;
		while (err && u->nchunks > from) /* not in place: no rows go there */
			close(u->chunks[--u->nchunks]);
		return err;
	}
	u->inserting = true;
	return 0;
}

/* Creates the chunks of the rows array up to the one holding row end - 1 (each mappable, 512
 * KiB, put in the chunk array the BPF unwinder reads): the rows take the memory of the tables
 * loaded. 0 or -errno. */
static int chunks_reserve(struct unwinder *u, uint64_t end)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);
	uint32_t want = (end + FIRN_ROWS_CHUNK - 1) / FIRN_ROWS_CHUNK;

	uint32_t from = u->nchunks;

	if (want <= u->nchunks)
		return 0;
	int err = join_insert(u); /* the thread reads chunks: not moved under it */
	int *n = err ? NULL : realloc(u->chunks, want * sizeof(*n));
	if (!n)
		return err ? err : -ENOMEM;
	u->chunks = n;
	while (u->nchunks < want) {
		int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unwind_rows", sizeof(__u32),
					sizeof(struct firn_row), FIRN_ROWS_CHUNK, &o);
		if (fd < 0)
			break;
		u->chunks[u->nchunks++] = fd;
	}
	err = u->nchunks < want ? -errno : 0;
	/* what was created goes in (a chunk left out would hold rows no program finds) */
	int ierr = u->nchunks > from ? insert_from(u, from) : 0;
	return err ? err : ierr;
}

/* Copies n rows into chunk fd at entry at through a mapping of just the pages they go to (a
 * BPF_F_MMAPABLE map: the kernel maps every page of a mapping at once). 0, or -errno when the
 * chunk cannot be mapped. */
static int map_copy_rows(int fd, uint32_t at_row, const struct firn_row *rows, uint32_t n)
{
	size_t page = sysconf(_SC_PAGESIZE), at = (size_t)at_row * sizeof(*rows);
	size_t off = at / page * page, len = at - off + (size_t)n * sizeof(*rows);
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);

	if (m == MAP_FAILED)
		return -errno;
	memcpy((char *)m + (at - off), rows, (size_t)n * sizeof(*rows));
	__sync_synchronize();
	munmap(m, len);
	return 0;
}

/* Takes chunk fd, already in slot 0 of the rows array, as the first chunk (a copy of it), so
 * that the first tables wait for no insertion. 0, or -1 with errno set (no chunk then). */
static int adopt_chunk(struct unwinder *u, int fd)
{
	int own = (u->chunks = malloc(sizeof(*u->chunks))) ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;

	if (own < 0)
		return -1;
	u->chunks[u->nchunks++] = own;
	return 0;
}

/* Writes one job to the cache and frees it (failures only noted: the table is rebuilt next
 * time). */
static void cache_job_write(struct unwind_cache *c, struct cache_job *j)
{
	int err = unwind_cache_put(c, j->build_id, &j->src, &j->t);

	if (err)
		diag(DIAG_DEBUG, "cannot cache the unwind table of %s: %s", j->build_id, strerror(-err));
	unwind_table_release(&j->t);
	free(j);
}

/* The writer thread's body (ctx: the unwinder): writes the queued jobs in order until told to
 * stop with none left. */
static void *cache_writer_run(void *ctx)
{
	struct unwinder *u = ctx;
	struct cache_writer *w = &u->cw;

	for (;;) {
		pthread_mutex_lock(&w->lock);
		while (!w->head && !w->stopping)
			pthread_cond_wait(&w->more, &w->lock);
		struct cache_job *j = w->head;
		if (j && !(w->head = j->next))
			w->tail = &w->head;
		pthread_mutex_unlock(&w->lock);
		if (!j)
			return NULL;
		cache_job_write(u->cache, j);
	}
}

/* Hands the table t just built from src (moved: the caller no longer owns its rows) to the
 * cache's writer, started at the first; written at once where no thread can start. */
static void cache_later(struct unwinder *u, const char *build_id,
			const struct unwind_cache_src *src, struct unwind_table *t)
{
	struct cache_writer *w = &u->cw;
	struct cache_job *j = calloc(1, sizeof(*j));

	if (!j) {
		unwind_table_release(t);
		return;
	}
	snprintf(j->build_id, sizeof(j->build_id), "%s", build_id);
	j->src = *src;
	j->t = *t;
	if (!w->running && pthread_create(&w->thread, NULL, cache_writer_run, u)) {
		cache_job_write(u->cache, j);
		return;
	}
	w->running = true;
	pthread_mutex_lock(&w->lock);
	*w->tail = j;
	w->tail = &j->next;
	pthread_cond_signal(&w->more);
	pthread_mutex_unlock(&w->lock);
}

/* Lets the writer finish the queued writes, then ends it (unwinder_free). */
static void cache_writer_stop(struct unwinder *u)
{
	struct cache_writer *w = &u->cw;

	if (w->running) {
		pthread_mutex_lock(&w->lock);
		w->stopping = true;
		pthread_cond_signal(&w->more);
		pthread_mutex_unlock(&w->lock);
		pthread_join(w->thread, NULL);
		w->running = false;
	}
	pthread_cond_destroy(&w->more);
	pthread_mutex_destroy(&w->lock);
}

struct unwinder *unwinder_new(int rows_fd, int first_chunk_fd, uint32_t max_rows, int pids_fd,
			      int umaps_fd, uint32_t max_umaps, int files_fd)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	*u = (struct unwinder){ .rows_fd = rows_fd, .max_rows = max_rows, .pids_fd = pids_fd,
				.umaps_fd = umaps_fd, .files_fd = files_fd, .max_umaps = max_umaps,
				.vdso = -1, .st.max_rows = max_rows, .cache = open_cache() };
	pthread_mutex_init(&u->cw.lock, NULL);
	pthread_cond_init(&u->cw.more, NULL);
	u->cw.tail = &u->cw.head;
	if (first_chunk_fd >= 0 && adopt_chunk(u, first_chunk_fd)) /* (else chunk 0 is made) */
		diag(DIAG_DEBUG, "first row chunk not taken: %s", strerror(errno));
	load_vdso(u); /* without it, vdso frames fall back to frame pointers */
	return u;
}

void unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	unwinder_settle(u);
	cache_writer_stop(u);
	for (uint32_t i = 0; i < u->nchunks; i++)
		close(u->chunks[i]);
	free(u->chunks);
	free(u->tables);
	free(u->runs);
	unwind_cache_close(u->cache);
	free(u);
}

void unwinder_get_stats(const struct unwinder *u, struct unwinder_stats *st)
{
	*st = u->st;
	st->rows = u->used;
	st->bytes = (uint64_t)u->used * sizeof(struct firn_row);
}

/* The cached table of the file behind st, or NULL. */
static struct utable *table_find(struct unwinder *u, const struct stat *st)
{
	struct file_id key = file_id_of(st);

	for (size_t i = 0; i < u->ntables; i++)
		if (file_id_eq(&u->tables[i].id, &key))
			return &u->tables[i];
	return NULL;
}

/* Copies n rows (within one chunk) into chunk fd at entry at by syscall, in batches (one per 64k
 * rows, which stores them one by one: 6 ms for libc's 28k): for a kernel whose arrays cannot be
 * mapped. */
static int batch_copy_rows(int fd, uint32_t at, const struct firn_row *rows, uint32_t n)
{
	__u32 *keys = malloc(n * sizeof(*keys)), count = n;
	int err = 0;

	if (!keys)
		return -ENOMEM;
	for (__u32 i = 0; i < n; i++)
		keys[i] = at + i;
	if (n && bpf_map_update_batch(fd, keys, rows, &count, NULL))
		err = -errno;
	free(keys);
	return err;
}

/* Copies n rows to the rows array at u->used, chunk by chunk (created as needed): through a
 * mapping, else by syscall. The rows are in place before the file entry naming them is
 * published. 0 or -errno (errno set). */
static int copy_rows(struct unwinder *u, const struct firn_row *rows, uint32_t n)
{
	int err = chunks_reserve(u, (uint64_t)u->used + n);

	for (uint32_t done = 0; !err && done < n;) {
		uint32_t at = u->used + done, c = at / FIRN_ROWS_CHUNK, k = at % FIRN_ROWS_CHUNK;
		uint32_t count = n - done < FIRN_ROWS_CHUNK - k ? n - done : FIRN_ROWS_CHUNK - k;
		if (u->rows_unmappable || map_copy_rows(u->chunks[c], k, rows + done, count)) {
			u->rows_unmappable = true;
			err = batch_copy_rows(u->chunks[c], k, rows + done, count);
		}
		done += count;
	}
	if (err)
		errno = -err;
	return err;
}

/* The page index of rows[0, n) (sorted by pc, n > 0), as bpf/firn.h lays it out before the
 * rows; *len: its rows. NULL (errno ENOMEM) when out of memory. The caller frees it. */
static struct firn_row *page_index(const struct firn_row *rows, uint32_t n, uint32_t *len)
{
	uint32_t shift = FIRN_PAGE_SHIFT, p0, pages;

	for (;; shift++) {
		p0 = rows[0].pc >> shift;
		pages = (rows[n - 1].pc >> shift) - p0 + 1;
		if (pages <= 65535 && pages <= (uint64_t)n + 16)
			break;
	}
	struct firn_table_head h = { .first_page = p0, .pages = pages, .shift = shift };
	struct firn_row *idx = calloc(FIRN_INDEX_ROWS(pages), sizeof(*idx));

	_Static_assert(sizeof(h) == sizeof(*idx), "the header is one row");
	if (!idx)
		return NULL;
	memcpy(&idx[0], &h, sizeof(h));
	uint32_t r = 0;
	for (uint32_t k = 0; k <= pages; k++) {
		uint64_t start = (uint64_t)(p0 + k) << shift;
		while (r + 1 < n && rows[r + 1].pc <= start)
			r++;
		idx[1 + k].pc = r;
	}
	*len = FIRN_INDEX_ROWS(pages);
	return idx;
}

/* Copies a table's page index and rows to the BPF array at u->used (then past them); *start:
 * where the table starts (its row_start). -ENOSPC when they do not fit, -errno else. */
static int load_rows(struct unwinder *u, const struct firn_row *rows, uint32_t n, uint32_t *start)
{
	uint32_t len = 0, used = u->used;
	struct firn_row *idx;
	int err = 0;

	*start = used;
	if (!n) /* no rows, no index: the unwinder never reads it */
		return 0;
	idx = page_index(rows, n, &len);
	if (!idx)
		return -ENOMEM;
	if ((uint64_t)used + len + n > u->max_rows)
		err = -ENOSPC;
	else if (copy_rows(u, idx, len))
		err = -errno;
	u->used += len;
	if (!err && copy_rows(u, rows, n))
		err = -errno;
	free(idx);
	if (err) {
		u->used = used;
		return err;
	}
	u->used += n;
	return 0;
}

/* Tells the BPF unwinder where the rows of the file named key (kernel dev encoding) are, so it
 * can unwind through the file's mappings before a process description names them. */
static void register_file(struct unwinder *u, const struct firn_file_key *key,
			  const struct stat *st, const struct utable *t)
{
	struct firn_file f = { .row_start = t->row_start, .row_count = t->row_count,
			       .size = st->st_size, .mtime_sec = st->st_mtim.tv_sec,
			       .mtime_nsec = st->st_mtim.tv_nsec };

	for (uint32_t i = 0; i < t->nsegs && i < FIRN_FILE_SEGS; i++) {
		f.segs[i].offset = t->segs[i].offset;
		f.segs[i].filesz = t->segs[i].filesz;
		f.segs[i].delta = t->segs[i].delta;
		f.nsegs++;
	}
	if (u->files_fd >= 0 && bpf_map_update_elem(u->files_fd, key, &f, BPF_ANY))
		diag(DIAG_DEBUG, "cannot register an unwind table: %s", strerror(errno));
}

/* The name the kernel gives the file behind st (struct firn_file_key). */
static struct firn_file_key file_key(const struct stat *st)
{
	return (struct firn_file_key){
		.dev = (uint64_t)major(st->st_dev) << 20 | minor(st->st_dev),
		.ino = st->st_ino,
	};
}

/* When a loaded table came from a file with the same build id, size and owner (a copy of the
 * file, the same library in another container layer), ut shares its rows: no build, no memory.
 * True then. A build id is anyone's to copy: another user's file never lends its rows. */
static bool share_rows(struct unwinder *u, struct utable *ut, int fd, const struct stat *st,
		       const struct firn_file_key *key)
{
	if (debuginfo_build_id(fd, ut->build_id))
		return false;
	for (size_t i = 0; i + 1 < u->ntables; i++) {
		const struct utable *o = &u->tables[i];
		if (!o->loaded || o->id.size != (uint64_t)st->st_size || o->uid != st->st_uid ||
		    strcmp(o->build_id, ut->build_id))
			continue;
		ut->loaded = true;
		ut->row_start = o->row_start;
		ut->row_count = o->row_count;
		memcpy(ut->segs, o->segs, sizeof(ut->segs));
		ut->nsegs = o->nsegs;
		struct firn_file_key k = key ? *key : file_key(st);
		register_file(u, &k, st, ut);
		u->st.files++;
		return true;
	}
	return false;
}

/* The table of the file open on fd (src: that file; build id: "" for none) from the cache when
 * it was built from this very file, else built; *fresh: built and to be cached (cache_later,
 * once its rows are in the kernel). */
static int table_build(struct unwinder *u, struct unwind_table *t, int fd,
		       const struct unwind_cache_src *src, const char *build_id, const char *path,
		       bool *fresh)
{
	int err = u->cache && build_id[0] ? unwind_cache_get(u->cache, build_id, src, t) : -ENOENT;

	*fresh = false;
	if (!err) {
		u->st.cached++;
		return 0;
	}
	if (err != -ENOENT)
		diag(DIAG_DEBUG, "ignoring the cached unwind table of %s: %s", build_id,
		     err == -ESTALE ? "built from another file" : strerror(-err));
	uint64_t t0 = mono_ns();
	err = unwind_table_build(t, fd);
	uint64_t ns = mono_ns() - t0;
	u->st.build_ns += ns;
	if (!err)
		diag(DIAG_DEBUG, "built the unwind table of '%s' (%u rows, %.1f ms)%s", path, t->n,
		     ns / 1e6, build_id[0] ? "" : ": no build id, not cached");
	*fresh = !err && u->cache && build_id[0];
	return err;
}

/* Builds the table of the file open on fd and copies its rows into the BPF array; key: how the
 * BPF unwinder finds it (NULL: by st). */
static struct utable *table_load(struct unwinder *u, int fd, const struct stat *st, const char *path,
				 const struct firn_file_key *key)
{
	struct unwind_table t;

	if (VEC_GROW(u->tables, u->cap_tables, u->ntables + 1))
		return NULL;
	struct utable *ut = &u->tables[u->ntables++];
	memset(ut, 0, sizeof(*ut));
	ut->id = file_id_of(st);
	ut->uid = st->st_uid;
	if (share_rows(u, ut, fd, st, key))
		return ut;
	/* the vdso (a key given) is copied from firn's own memory into a new memfd each time: the
	 * kernel's image, trusted under its build id (the zero source no file has) */
	struct unwind_cache_src src = key ? (struct unwind_cache_src){ 0 } : unwind_cache_src_of(st);
	bool fresh;
	int err = table_build(u, &t, fd, &src, ut->build_id, path, &fresh);
	if (err) {
		diag(DIAG_DEBUG, "no unwind table for '%s': %s", path, strerror(-err));
		return ut;
	}
	memcpy(ut->segs, t.segs, sizeof(ut->segs));
	ut->nsegs = t.nsegs;
	err = load_rows(u, t.rows, t.n, &ut->row_start);
	if (err == -ENOSPC)
		diag(DIAG_INFO, "unwind table memory limit reached: '%s' (%u rows) uses frame pointers",
		     path, t.n);
	else if (err)
		diag(DIAG_INFO, "cannot load the unwind table of '%s': %s", path, strerror(-err));
	if (err) {
		unwind_table_release(&t);
		return ut;
	}
	ut->row_count = t.n;
	ut->loaded = true;
	struct firn_file_key k = key ? *key : file_key(st);
	register_file(u, &k, st, ut);
	u->st.files++;
	if (fresh) /* written after: the next file's rows need not wait for it */
		cache_later(u, ut->build_id, &src, &t);
	else
		unwind_table_release(&t);
	return ut;
}

/* Opens the file of a mapping as the process sees it. */
static int open_mapping(pid_t pid, const struct procmap_entry *e)
{
	char path[4200];

	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", pid,
		 (unsigned long long)e->start, (unsigned long long)e->end);
	int fd = safeopen(path, 0, 0, NULL);
	if (fd >= 0)
		return fd;
	snprintf(path, sizeof(path), "/proc/%d/root%s", pid, e->path);
	return safeopen(path, SAFEOPEN_NOFOLLOW, 0, NULL);
}

/* The table of the file with the device and inode a mapping names, or NULL: no system call for
 * the files most processes share. */
static struct utable *table_known(struct unwinder *u, const struct procmap_entry *e)
{
	dev_t dev = makedev(e->dev_major, e->dev_minor);

	for (size_t i = 0; e->inode && i < u->ntables; i++)
		if (u->tables[i].id.dev == dev && u->tables[i].id.ino == e->inode)
			return &u->tables[i];
	return NULL;
}

/* The table of a mapping's file: known by device and inode, else found (or, with build, built)
 * through the file opened as the process sees it. */
static struct utable *mapping_table(struct unwinder *u, pid_t pid, const struct procmap_entry *e,
				    bool build)
{
	struct utable *t = table_known(u, e);
	dev_t dev = makedev(e->dev_major, e->dev_minor);
	struct stat st;
	int fd;

	for (size_t i = 0; !t && !build && e->inode && i < u->nunbuilt && i < UNBUILT_MAX; i++)
		if (u->unbuilt[i].dev == dev && u->unbuilt[i].ino == e->inode)
			return NULL;
	if (t || (fd = open_mapping(pid, e)) < 0)
		return t;
	t = fstat(fd, &st) ? NULL : table_find(u, &st);
	if (!t && build && !fstat(fd, &st))
		t = table_load(u, fd, &st, e->path, NULL);
	close(fd);
	if (!t && !build && e->inode)
		u->unbuilt[u->nunbuilt++ % UNBUILT_MAX] = (typeof(u->unbuilt[0])){ dev, e->inode };
	return t;
}

/* Describes one executable mapping into m; false when it has no usable table (or, unless build,
 * when its table is not built yet). */
static bool describe_mapping(struct unwinder *u, pid_t pid, const struct procmap_entry *e,
			     struct firn_umap *m, bool build)
{
	struct utable *t = mapping_table(u, pid, e, build);

	if (!t && !build)
		return false;
	if (!t || !t->loaded) {
		if (t && t->nsegs && !t->row_count)
			u->st.over_limit++;
		else
			u->st.no_table++;
		return false;
	}
	for (uint32_t i = 0; i < t->nsegs; i++) {
		uint64_t lo = t->segs[i].offset & ~0xfffULL;
		if (e->offset < lo || e->offset >= t->segs[i].offset + t->segs[i].filesz)
			continue;
		/* vaddr = addr - start + offset + delta, so bias = start - offset - delta */
		m->start = e->start;
		m->end = e->end;
		m->bias = e->start - e->offset - t->segs[i].delta;
		m->row_start = t->row_start;
		m->row_count = t->row_count;
		return true;
	}
	return false;
}

/* Describes the process's vdso mapping with the vdso's table (file offset 0 at its start). */
static bool describe_vdso(const struct unwinder *u, const struct procmap_entry *e,
			  struct firn_umap *m)
{
	const struct utable *t = u->vdso >= 0 ? &u->tables[u->vdso] : NULL;

	for (uint32_t i = 0; t && i < t->nsegs; i++) {
		if (t->segs[i].offset >= 4096)
			continue;
		*m = (struct firn_umap){ .start = e->start, .end = e->end,
					 .bias = e->start - t->segs[i].delta,
					 .row_start = t->row_start, .row_count = t->row_count };
		return true;
	}
	return false;
}

/* Where a process's mappings are in the BPF mappings pool: [first, first + count). */
struct run {
	pid_t pid;
	uint32_t first, count;
};

/* Index in u->runs of pid's run, or -1 (a process has one run, but for the moment publish
 * switches it to a new one). */
static ssize_t run_of(const struct unwinder *u, pid_t pid)
{
	for (size_t i = 0; i < u->nruns; i++)
		if (u->runs[i].pid == pid)
			return i;
	return -1;
}

/* Forgets run i (its pool entries become free). */
static void run_drop(struct unwinder *u, size_t i)
{
	memmove(&u->runs[i], &u->runs[i + 1], (u->nruns - i - 1) * sizeof(*u->runs));
	u->nruns--;
}

/* First fit of n entries in the pool between the runs (kept sorted by first): the index of the
 * run it goes before and *first, or -1. */
static ssize_t run_gap(const struct unwinder *u, uint32_t n, uint32_t *first)
{
	uint32_t at = 0;

	for (size_t i = 0; i <= u->nruns; i++) {
		uint32_t end = i < u->nruns ? u->runs[i].first : u->max_umaps;
		if (end >= at && end - at >= n) {
			*first = at;
			return i;
		}
		if (i < u->nruns && u->runs[i].first + u->runs[i].count > at)
			at = u->runs[i].first + u->runs[i].count;
	}
	return -1;
}

/* Frees the runs of processes that have exited without an exit event (missed, or before). */
static void reclaim_dead(struct unwinder *u)
{
	for (size_t i = u->nruns; i-- > 0;) {
		if (!kill(u->runs[i].pid, 0) || errno != ESRCH)
			continue;
		__u32 key = u->runs[i].pid;
		bpf_map_delete_elem(u->pids_fd, &key);
		run_drop(u, i);
	}
}

/* Reserves n pool entries for pid (a new run beside its old one, which publish frees after the
 * switch); -ENOSPC when the pool is full, -ENOMEM. */
static int64_t run_alloc(struct unwinder *u, pid_t pid, uint32_t n)
{
	uint32_t first;
	ssize_t at = run_gap(u, n, &first);

	if (at < 0) {
		reclaim_dead(u);
		at = run_gap(u, n, &first);
	}
	if (at < 0)
		return -ENOSPC;
	if (VEC_GROW(u->runs, u->cap_runs, u->nruns + 1))
		return -ENOMEM;
	memmove(&u->runs[at + 1], &u->runs[at], (u->nruns - at) * sizeof(*u->runs));
	u->runs[at] = (struct run){ pid, first, n };
	u->nruns++;
	return first;
}

/* Copies n mappings into the pool at first: one batch (one system call a process, not one a
 * mapping), else one by one (a kernel without batch updates of arrays). 0 or -errno. */
static int copy_umaps(struct unwinder *u, uint32_t first, const struct firn_umap *maps, uint32_t n)
{
	__u32 keys[FIRN_MAX_UMAPS], count = n;

	for (uint32_t i = 0; i < n && i < FIRN_MAX_UMAPS; i++)
		keys[i] = first + i;
	if (!n || !bpf_map_update_batch(u->umaps_fd, keys, maps, &count, NULL))
		return 0;
	for (uint32_t i = 0; i < n; i++)
		if (bpf_map_update_elem(u->umaps_fd, &keys[i], &maps[i], BPF_ANY))
			return -errno;
	return 0;
}

/* Copies pid's n mappings (sorted by start) into the pool, points pid at them, then frees the
 * run the process had before (or, when that failed, the new one). A process with no mapping
 * has no run. */
static int publish(struct unwinder *u, pid_t pid, const struct firn_umap *maps, uint32_t n)
{
	int64_t first = n ? run_alloc(u, pid, n) : 0;
	int err = 0;

	if (first < 0) {
		u->st.no_slot++;
		return (int)first;
	}
	err = copy_umaps(u, (uint32_t)first, maps, n);
	struct firn_pid_maps val = { (uint32_t)first, n };
	__u32 p = pid;
	if (!err && bpf_map_update_elem(u->pids_fd, &p, &val, BPF_ANY))
		err = -errno;
	for (size_t i = 0; i < u->nruns; i++) {
		bool fresh = n && u->runs[i].first == (uint32_t)first;
		if (u->runs[i].pid == pid && fresh == (err != 0)) {
			run_drop(u, i);
			break;
		}
	}
	return err;
}

int unwinder_add_process(struct unwinder *u, pid_t pid, bool lazy)
{
	struct procmap pm;
	int err = procmap_read(&pm, pid);

	if (err)
		return err;
	err = unwinder_add_process_maps(u, pid, &pm, lazy);
	procmap_release(&pm);
	return err;
}

int unwinder_add_process_maps(struct unwinder *u, pid_t pid, const struct procmap *pmp, bool lazy)
{
	const struct procmap pm = *pmp;
	struct firn_umap *maps;
	uint32_t n = 0;
	int err;

	maps = calloc(pm.n ? pm.n : 1, sizeof(*maps));
	for (size_t i = 0; maps && i < pm.n; i++) {
		const struct procmap_entry *e = &pm.entries[i];
		if (!e->x || (e->kind != PROCMAP_FILE && e->kind != PROCMAP_VDSO) || !e->path[0])
			continue;
		if (n == FIRN_MAX_UMAPS) {
			u->st.too_many_maps++;
			continue;
		}
		n += e->kind == PROCMAP_VDSO ? describe_vdso(u, e, &maps[n])
					     : describe_mapping(u, pid, e, &maps[n], !lazy);
	}
	err = maps ? publish(u, pid, maps, n) : -ENOMEM;
	if (!err)
		u->st.processes++;
	free(maps);
	return err;
}

int unwinder_load_mapping(struct unwinder *u, pid_t pid, const struct procmap_entry *e)
{
	struct firn_umap m;

	if (!e->x || e->kind != PROCMAP_FILE || !e->path[0])
		return -ENOENT;
	return describe_mapping(u, pid, e, &m, true) ? 0 : -ENOENT;
}

int unwinder_remove_process(struct unwinder *u, pid_t pid)
{
	ssize_t i = run_of(u, pid);
	__u32 key = pid;
	bool described = !bpf_map_delete_elem(u->pids_fd, &key);

	if (i >= 0)
		run_drop(u, i);
	return described || i >= 0 ? 0 : -ENOENT;
}

/* True when the base name of path starts with one of prefixes. */
static bool name_matches(const char *path, const char *const *prefixes)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	for (; *prefixes; prefixes++)
		if (!strncmp(base, *prefixes, strlen(*prefixes)))
			return true;
	return false;
}

int unwinder_preload(struct unwinder *u, pid_t pid, const char *const *prefixes)
{
	struct procmap pm;
	struct firn_umap m;
	int err = procmap_read(&pm, pid);

	if (err)
		return err;
	for (size_t i = 0; i < pm.n; i++) {
		const struct procmap_entry *e = &pm.entries[i];
		if (e->x && e->kind == PROCMAP_FILE && name_matches(e->path, prefixes))
			describe_mapping(u, pid, e, &m, true);
	}
	procmap_release(&pm);
	return 0;
}

int unwinder_add_code(struct unwinder *u, pid_t pid, uint64_t pc)
{
	struct procmap pm;
	int err = procmap_read(&pm, pid);

	if (err)
		return err;
	err = unwinder_add_code_maps(u, pid, pc, &pm);
	procmap_release(&pm);
	return err;
}

int unwinder_add_code_maps(struct unwinder *u, pid_t pid, uint64_t pc, const struct procmap *pm)
{
	struct firn_umap m;
	const struct procmap_entry *e = procmap_find(pm, pc);
	bool built = e && e->x && e->kind == PROCMAP_FILE && e->path[0] &&
		     describe_mapping(u, pid, e, &m, true);

	return built || !pc ? unwinder_add_process_maps(u, pid, pm, true) : 0;
}

/* The size of the ELF image at base (the vdso): up to the end of its section headers or of its
 * last segment. */
static size_t elf_image_size(const Elf64_Ehdr *eh)
{
	size_t size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)((const char *)eh + eh->e_phoff);

	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_offset + ph[i].p_filesz > size)
			size = ph[i].p_offset + ph[i].p_filesz;
	return size;
}

/* Loads the table of the vdso (the kernel's, the same in every process: read from ours) under
 * the key {0, 0} the BPF unwinder uses for a process's vdso mapping. */
static int load_vdso(struct unwinder *u)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	struct firn_file_key key = { 0, 0 };
	struct stat st;

	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return -ENOENT;
	size_t size = elf_image_size(eh);
	int fd = memfd_create("firn-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	int err = write(fd, eh, size) == (ssize_t)size && !fstat(fd, &st) ? 0 : -EIO;
	struct utable *t = err ? NULL : table_load(u, fd, &st, "[vdso]", &key);
	if (t && t->loaded)
		u->vdso = t - u->tables;
	close(fd);
	return err;
}

#define PREPARE_MAX_FILES 64 /* files an exec's closure may bring in (ELF interpreter, libraries) */

/* Files still to load for unwinder_prepare_exec (paths owned). */
struct worklist {
	char *paths[PREPARE_MAX_FILES];
	size_t n;
};

/* Appends path unless it is there already (or the list is full). */
static void work_add(struct worklist *w, const char *path)
{
	for (size_t i = 0; i < w->n; i++)
		if (!strcmp(w->paths[i], path))
			return;
	if (w->n < PREPARE_MAX_FILES && (w->paths[w->n] = strdup(path)))
		w->n++;
}

/* Finds a DT_NEEDED library as ld.so would in the common case: the object's RUNPATH/RPATH
 * ($ORIGIN expanded), then the default directories. false when not found. */
static bool find_library(const char *name, const char *runpath, const char *origin, char *out,
			 size_t len)
{
	static const char *const dirs[] = { "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
					    "/lib64", "/usr/lib64", "/lib", "/usr/lib", NULL };
	char buf[1024];

	if (strchr(name, '/'))
		return snprintf(out, len, "%s", name) < (int)len && !access(out, R_OK);
	snprintf(buf, sizeof(buf), "%s", runpath ? runpath : "");
	for (char *save, *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		bool o = !strncmp(d, "$ORIGIN", 7);
		if (snprintf(out, len, "%s%s/%s", o ? origin : "", o ? d + 7 : d, name) < (int)len &&
		    !access(out, R_OK))
			return true;
	}
	for (int i = 0; dirs[i]; i++)
		if (snprintf(out, len, "%s/%s", dirs[i], name) < (int)len && !access(out, R_OK))
			return true;
	return false;
}

/* Adds the ELF interpreter (PT_INTERP) of the object open as elf to w. */
static void add_interpreter(Elf *elf, struct worklist *w)
{
	size_t size = 0, nph;
	char *raw = elf_rawfile(elf, &size);

	for (size_t i = 0; raw && !elf_getphdrnum(elf, &nph) && i < nph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_INTERP && ph.p_filesz &&
		    ph.p_filesz < 256 && ph.p_offset < size && ph.p_filesz <= size - ph.p_offset &&
		    !raw[ph.p_offset + ph.p_filesz - 1])
			work_add(w, raw + ph.p_offset);
	}
}

/* Adds the ELF interpreter and the DT_NEEDED libraries of the object at path (open as elf) to w. */
static void add_dependencies(Elf *elf, const char *path, struct worklist *w)
{
	char origin[PATH_MAX], lib[PATH_MAX], *slash;
	const char *runpath = NULL, *needed[PREPARE_MAX_FILES];
	size_t nneeded = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	add_interpreter(elf, w);
	snprintf(origin, sizeof(origin), "%s", path);
	*((slash = strrchr(origin, '/')) ? slash : origin) = 0;
	while ((scn = elffile_next(elf, scn, NULL, SHT_DYNAMIC, &sh))) {
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		for (size_t i = 0; sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			if (!gelf_getdyn(d, i, &dyn) || dyn.d_tag == DT_NULL)
				break;
			bool rp = dyn.d_tag == DT_RUNPATH || dyn.d_tag == DT_RPATH;
			const char *str = rp || dyn.d_tag == DT_NEEDED ?
				elf_strptr(elf, sh.sh_link, dyn.d_un.d_val) : NULL;
			if (str && !rp && nneeded < PREPARE_MAX_FILES)
				needed[nneeded++] = str;
			else if (str && rp)
				runpath = str;
		}
	}
	for (size_t i = 0; i < nneeded; i++)
		if (find_library(needed[i], runpath, origin, lib, sizeof(lib)))
			work_add(w, lib);
}

/* Loads the table of the file at path (unless loaded) and queues what it needs at exec. */
static void prepare_file(struct unwinder *u, const char *path, struct worklist *w)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO would block */

	if (fd < 0)
		return;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && !table_find(u, &st))
		table_load(u, fd, &st, path, NULL);
	struct elffile ef;
	if (!elffile_open_fd(&ef, fd, ELFFILE_MAPPED))
		add_dependencies(ef.elf, path, w);
	elffile_close(&ef);
	close(fd);
}

/* The file execvp would run for file (PATH lookup), into out; false when none. */
static bool find_program(const char *file, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (strchr(file, '/'))
		return snprintf(out, len, "%s", file) < (int)len && !access(out, X_OK);
	snprintf(buf, sizeof(buf), "%s", path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (char *save, *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save))
		if (snprintf(out, len, "%s/%s", *d ? d : ".", file) < (int)len && !access(out, X_OK))
			return true;
	return false;
}

/* The program a "#!" script at path runs (one level; "/usr/bin/env NAME" looks NAME up), into
 * out; false when path is no script. */
static bool script_interpreter(const char *path, char *out, size_t len)
{
	char line[256] = "", *save, *prog, *arg;
	FILE *f = fopen(path, "re");

	if (!f)
		return false;
	bool script = fgets(line, sizeof(line), f) && !strncmp(line, "#!", 2);
	fclose(f);
	if (!script || !(prog = strtok_r(line + 2, " \t\n", &save)))
		return false;
	arg = strtok_r(NULL, " \t\n", &save);
	if (!strcmp(prog, "/usr/bin/env") && arg && *arg != '-')
		return find_program(arg, out, len);
	return snprintf(out, len, "%s", prog) < (int)len;
}

int unwinder_prepare_exec(struct unwinder *u, const char *file)
{
	char prog[PATH_MAX], interp[PATH_MAX];
	struct worklist w = { .n = 0 };

	if (!find_program(file, prog, sizeof(prog)))
		return -ENOENT;
	work_add(&w, prog);
	if (script_interpreter(prog, interp, sizeof(interp)))
		work_add(&w, interp);
	for (size_t i = 0; i < w.n; i++)
		prepare_file(u, w.paths[i], &w);
	for (size_t i = 0; i < w.n; i++)
		free(w.paths[i]);
	return 0;
}
