/* unwind_cache: unwind tables on disk, keyed by build id (see unwind_cache.h). */
#include "unwind_cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define SUFFIX ".tbl"
#define MAX_ROWS (1u << 26) /* far above any real table; bounds what a file may ask for */

static const char MAGIC[8] = "FIRNUWC";

/* A cache file: this header, then nrows struct firn_row. crc: CRC-32 of the whole file with
 * crc itself zero. */
struct cache_header {
	char magic[8];
	uint32_t version, row_size;
	char build_id[128]; /* lowercase hex, NUL-padded */
	uint32_t nrows, nsegs, fdes, crc;
	struct { uint64_t offset, filesz; int64_t delta; } segs[4];
};

_Static_assert(sizeof(struct cache_header) == 256, "the file format's header is 256 bytes");

struct unwind_cache {
	int dirfd;
	uint64_t max_bytes, bytes; /* bytes: the files' sizes as last counted plus those written */
	unsigned seq;              /* temporary names */
};

int unwind_cache_default_dir(char *out, size_t len)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (geteuid() == 0)
		n = snprintf(out, len, "/var/cache/firn/unwind");
	else if (xdg && xdg[0] == '/')
		n = snprintf(out, len, "%s/firn/unwind", xdg);
	else if (home && home[0] == '/')
		n = snprintf(out, len, "%s/.cache/firn/unwind", home);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* mkdir -p path, each missing part 0700 (existing ones are left as they are). */
static int make_dirs(char *path)
{
	for (char *p = path + 1;; p++) {
		if (*p && *p != '/')
			continue;
		char c = *p;
		*p = 0;
		int err = mkdir(path, 0700) && errno != EEXIST ? -errno : 0;
		*p = c;
		if (err)
			return err;
		if (!c)
			return 0;
	}
}

/* The sum of the cache files' sizes, counted once at open. */
static uint64_t count_bytes(int dirfd);

struct unwind_cache *unwind_cache_open(const char *dir, uint64_t max_bytes)
{
	char path[4096];
	struct stat st;
	int err = dir ? 0 : unwind_cache_default_dir(path, sizeof(path));

	if (!err && dir && snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path))
		err = -ENAMETOOLONG;
	if (!err)
		err = make_dirs(path);
	int fd = err ? -1 : open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (!err && fd < 0)
		err = errno == ENOTDIR ? -ELOOP : -errno;
	if (!err && fstat(fd, &st))
		err = -errno;
	if (!err && (st.st_uid != geteuid() || (st.st_mode & 022)))
		err = -EPERM;
	struct unwind_cache *c = err ? NULL : calloc(1, sizeof(*c));
	if (!c) {
		if (fd >= 0)
			close(fd);
		errno = err ? -err : ENOMEM;
		return NULL;
	}
	c->dirfd = fd;
	c->max_bytes = max_bytes;
	c->bytes = count_bytes(fd);
	return c;
}

void unwind_cache_close(struct unwind_cache *c)
{
	if (!c)
		return;
	close(c->dirfd);
	free(c);
}

/* The file name of build_id's table; false when the id is empty, too long or not hex. */
static bool file_name(const char *build_id, char *out, size_t len)
{
	size_t n = strlen(build_id);

	if (!n || n >= sizeof(((struct cache_header *)0)->build_id) || n + sizeof(SUFFIX) > len)
		return false;
	if (strspn(build_id, "0123456789abcdef") != n)
		return false;
	memcpy(out, build_id, n);
	memcpy(out + n, SUFFIX, sizeof(SUFFIX));
	return true;
}

/* The CRC-32 of a file's bytes with the header's crc field taken as zero. */
static uint32_t file_crc(const struct cache_header *h, const void *rows, size_t rows_len)
{
	struct cache_header tmp = *h;

	tmp.crc = 0;
	uLong crc = crc32(0, (const Bytef *)&tmp, sizeof(tmp));
	return (uint32_t)crc32(crc, rows, (uInt)rows_len);
}

/* Whether the rows can be trusted as a table: strictly sorted by pc, known types. */
static bool rows_ok(const struct firn_row *rows, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if (rows[i].type >= 8 || (i && rows[i - 1].pc >= rows[i].pc))
			return false;
	}
	return true;
}

int unwind_cache_decode(const void *buf, size_t len, const char *build_id, struct unwind_table *t)
{
	struct cache_header h;

	memset(t, 0, sizeof(*t));
	if (len < sizeof(h))
		return -EBADMSG;
	memcpy(&h, buf, sizeof(h));
	if (memcmp(h.magic, MAGIC, sizeof(MAGIC)) || h.version != UNWIND_CACHE_VERSION ||
	    h.row_size != sizeof(struct firn_row) || h.nsegs > 4 || h.nrows > MAX_ROWS ||
	    len - sizeof(h) != (uint64_t)h.nrows * sizeof(struct firn_row) ||
	    strnlen(h.build_id, sizeof(h.build_id)) == sizeof(h.build_id) ||
	    strcmp(h.build_id, build_id))
		return -EBADMSG;
	const uint8_t *rows = (const uint8_t *)buf + sizeof(h);
	if (file_crc(&h, rows, len - sizeof(h)) != h.crc)
		return -EBADMSG;
	t->rows = malloc(h.nrows ? len - sizeof(h) : 1);
	if (!t->rows)
		return -ENOMEM;
	memcpy(t->rows, rows, len - sizeof(h));
	if (!rows_ok(t->rows, h.nrows)) {
		unwind_table_release(t);
		return -EBADMSG;
	}
	t->n = t->cap = h.nrows;
	for (uint32_t i = 0; i < h.nrows; i++)
		t->by_type[t->rows[i].type]++;
	t->fdes = h.fdes;
	t->nsegs = h.nsegs;
	memcpy(t->segs, h.segs, sizeof(t->segs));
	return 0;
}

/* Reads all of fd (size bytes) into a new buffer; NULL + errno. */
static void *read_all(int fd, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1);

	for (size_t done = 0; buf && done < size;) {
		ssize_t n = pread(fd, buf + done, size - done, done);
		if (n <= 0) {
			free(buf);
			errno = n ? errno : EBADMSG;
			return NULL;
		}
		done += n;
	}
	return buf;
}

int unwind_cache_get(struct unwind_cache *c, const char *build_id, struct unwind_table *t)
{
	char name[160];
	struct stat st;

	memset(t, 0, sizeof(*t));
	if (!file_name(build_id, name, sizeof(name)))
		return -ENOENT;
	int fd = openat(c->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	int err = fstat(fd, &st) ? -errno : 0;
	if (!err && !S_ISREG(st.st_mode))
		err = -EINVAL;
	if (!err && (st.st_uid != geteuid() || (st.st_mode & 022)))
		err = -EPERM;
	if (!err && (uint64_t)st.st_size > sizeof(struct cache_header) +
						   (uint64_t)MAX_ROWS * sizeof(struct firn_row))
		err = -EBADMSG;
	void *buf = err ? NULL : read_all(fd, st.st_size);
	if (!err && !buf)
		err = -errno;
	if (!err)
		err = unwind_cache_decode(buf, st.st_size, build_id, t);
	if (!err)
		futimens(fd, NULL); /* recently used: evicted last */
	free(buf);
	close(fd);
	return err;
}

/* Writes len bytes at fd's offset; 0 or -errno. */
static int write_all(int fd, const void *buf, size_t len)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = write(fd, (const uint8_t *)buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? -errno : -EIO;
		done += n;
	}
	return 0;
}

static void evict(struct unwind_cache *c);

int unwind_cache_put(struct unwind_cache *c, const char *build_id, const struct unwind_table *t)
{
	struct cache_header h = { .version = UNWIND_CACHE_VERSION, .row_size = sizeof(struct firn_row),
				  .nrows = t->n, .nsegs = t->nsegs, .fdes = t->fdes };
	char name[160], tmp[64];
	size_t rows_len = (size_t)t->n * sizeof(struct firn_row);

	if (!file_name(build_id, name, sizeof(name)) || t->nsegs > 4 || t->n > MAX_ROWS)
		return -EINVAL;
	memcpy(h.magic, MAGIC, sizeof(MAGIC));
	strcpy(h.build_id, build_id);
	memcpy(h.segs, t->segs, sizeof(h.segs));
	h.crc = file_crc(&h, t->rows, rows_len);
	snprintf(tmp, sizeof(tmp), ".tmp-%d-%u", (int)getpid(), c->seq++);
	int fd = openat(c->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int err = write_all(fd, &h, sizeof(h));
	if (!err)
		err = write_all(fd, t->rows, rows_len);
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat(c->dirfd, tmp, c->dirfd, name))
		err = -errno;
	if (err) {
		unlinkat(c->dirfd, tmp, 0);
		return err;
	}
	c->bytes += sizeof(h) + rows_len;
	if (c->bytes > c->max_bytes)
		evict(c);
	return 0;
}

struct entry {
	char name[160];
	struct timespec mtime;
	uint64_t size;
};

/* Removes the temporary file name when it is older than an hour (its writer died mid-write). */
static void drop_stale(int dirfd, const char *name)
{
	struct stat st;

	if (!fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) && st.st_mtime < time(NULL) - 3600)
		unlinkat(dirfd, name, 0);
}

/* Lists the cache's table files (regular, not symlinks) into a new array; *n entries. */
static struct entry *list_files(int dirfd, size_t *n)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct entry *v = NULL;
	size_t cap = 0;
	struct dirent *de;
	struct stat st;

	*n = 0;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (!strncmp(de->d_name, ".tmp-", 5))
			drop_stale(dirfd, de->d_name);
		if (len <= strlen(SUFFIX) || len >= sizeof(v->name) ||
		    strcmp(de->d_name + len - strlen(SUFFIX), SUFFIX) ||
		    fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (*n == cap) {
			struct entry *nv = realloc(v, (cap = cap ? cap * 2 : 64) * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		memcpy(v[*n].name, de->d_name, len + 1);
		v[*n].mtime = st.st_mtim;
		v[(*n)++].size = st.st_size;
	}
	closedir(d);
	return v;
}

static uint64_t count_bytes(int dirfd)
{
	size_t n;
	struct entry *v = list_files(dirfd, &n);
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += v[i].size;
	free(v);
	return sum;
}

/* Oldest first. */
static int by_mtime(const void *a, const void *b)
{
	const struct timespec *x = &((const struct entry *)a)->mtime;
	const struct timespec *y = &((const struct entry *)b)->mtime;

	if (x->tv_sec != y->tv_sec)
		return x->tv_sec < y->tv_sec ? -1 : 1;
	return (x->tv_nsec > y->tv_nsec) - (x->tv_nsec < y->tv_nsec);
}

/* Removes the least recently used files until the cache fits its bound again. */
static void evict(struct unwind_cache *c)
{
	size_t n;
	struct entry *v = list_files(c->dirfd, &n);
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += v[i].size;
	if (n)
		qsort(v, n, sizeof(*v), by_mtime);
	for (size_t i = 0; i < n && sum > c->max_bytes; i++) {
		if (!unlinkat(c->dirfd, v[i].name, 0))
			sum -= v[i].size;
	}
	c->bytes = sum;
	free(v);
}
