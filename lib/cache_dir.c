/* cache_dir: the trusted directory under firn's caches (see cache_dir.h). */
#include "cache_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int cache_dir_default(char *out, size_t len, const char *leaf)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (geteuid() == 0)
		n = snprintf(out, len, "/var/cache/firn/%s", leaf);
	else if (xdg && xdg[0] == '/')
		n = snprintf(out, len, "%s/firn/%s", xdg, leaf);
	else if (home && home[0] == '/')
		n = snprintf(out, len, "%s/.cache/firn/%s", home, leaf);
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
static uint64_t count_bytes(const struct cache_dir *cd);

int cache_dir_open(struct cache_dir *cd, const char *dir, const char *leaf, const char *suffix,
		   uint64_t max_bytes)
{
	char path[4096];
	struct stat st;
	int err = dir ? 0 : cache_dir_default(path, sizeof(path), leaf);

	memset(cd, 0, sizeof(*cd));
	cd->dirfd = -1;
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
	if (err) {
		if (fd >= 0)
			close(fd);
		return err;
	}
	cd->dirfd = fd;
	cd->suffix = suffix;
	cd->max_bytes = max_bytes;
	cd->bytes = count_bytes(cd);
	return 0;
}

void cache_dir_close(struct cache_dir *cd)
{
	if (cd->dirfd >= 0)
		close(cd->dirfd);
	cd->dirfd = -1;
}

int cache_dir_open_file(struct cache_dir *cd, const char *name, struct stat *st)
{
	int fd = openat(cd->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return -errno;
	int err = fstat(fd, st) ? -errno : 0;
	if (!err && !S_ISREG(st->st_mode))
		err = -EINVAL;
	if (!err && (st->st_uid != geteuid() || (st->st_mode & 022)))
		err = -EPERM;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
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

static void evict(struct cache_dir *cd);

int cache_dir_put(struct cache_dir *cd, const char *name, const struct iovec *iov, int n)
{
	char tmp[64];
	uint64_t total = 0;
	int err = 0;

	snprintf(tmp, sizeof(tmp), ".tmp-%d-%d-%u", (int)getpid(), (int)gettid(), cd->seq++);
	int fd = openat(cd->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	for (int i = 0; i < n && !err; i++) {
		err = write_all(fd, iov[i].iov_base, iov[i].iov_len);
		total += iov[i].iov_len;
	}
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat(cd->dirfd, tmp, cd->dirfd, name))
		err = -errno;
	if (err) {
		unlinkat(cd->dirfd, tmp, 0);
		return err;
	}
	cd->bytes += total;
	if (cd->bytes > cd->max_bytes)
		evict(cd);
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

/* Whether name is one of the cache's files by its name (not a temporary one). */
static bool is_cache_name(const struct cache_dir *cd, const char *name, size_t len)
{
	size_t sl = strlen(cd->suffix);

	return len > sl && len < sizeof(((struct entry *)0)->name) &&
	       !strcmp(name + len - sl, cd->suffix);
}

/* Lists the cache's files (regular, not symlinks) into a new array; *n entries. */
static struct entry *list_files(const struct cache_dir *cd, size_t *n)
{
	int fd = openat(cd->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
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
			drop_stale(cd->dirfd, de->d_name);
		if (!is_cache_name(cd, de->d_name, len) ||
		    fstatat(cd->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
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

static uint64_t count_bytes(const struct cache_dir *cd)
{
	size_t n;
	struct entry *v = list_files(cd, &n);
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
static void evict(struct cache_dir *cd)
{
	size_t n;
	struct entry *v = list_files(cd, &n);
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += v[i].size;
	if (n)
		qsort(v, n, sizeof(*v), by_mtime);
	for (size_t i = 0; i < n && sum > cd->max_bytes; i++) {
		if (!unlinkat(cd->dirfd, v[i].name, 0))
			sum -= v[i].size;
	}
	cd->bytes = sum;
	free(v);
}

bool cache_dir_file_name(const char *build_id, size_t id_max, const char *suffix, char *out,
			 size_t len)
{
	size_t n = strlen(build_id), sn = strlen(suffix);

	if (!n || n >= id_max || n + sn + 1 > len || strspn(build_id, "0123456789abcdef") != n)
		return false;
	memcpy(out, build_id, n);
	memcpy(out + n, suffix, sn + 1);
	return true;
}
