/* cache_dir: the trusted directory under firn's caches (see cache_dir.h). */
#include "base/cache_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/vec.h"

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

/* Whether real (a canonical absolute path) is a folder no cache may be or be made in: "/",
 * a folder right under it, the system's trees, the home folder. */
static bool system_folder(const char *real)
{
	static const char *const trees[] = { "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32",
					     "/lib64", "/libx32", "/boot", "/dev", "/proc", "/sys" };
	const char *home = getenv("HOME");
	char rhome[PATH_MAX];

	if (real[0] != '/' || !strchr(real + 1, '/'))
		return true;
	for (size_t i = 0; i < sizeof(trees) / sizeof(trees[0]); i++) {
		size_t n = strlen(trees[i]);
		if (!strncmp(real, trees[i], n) && (real[n] == '/' || !real[n]))
			return true;
	}
	return home && realpath(home, rhome) && !strcmp(rhome, real);
}

/* Makes the missing folder path (0700) unless it would be made in a system folder (-EACCES);
 * an existing one is left as it is (cache_dir_open checks the last). */
static int make_dir(const char *path)
{
	char parent[PATH_MAX], real[PATH_MAX];
	struct stat st;

	if (!lstat(path, &st))
		return 0;
	if (errno != ENOENT)
		return -errno;
	const char *base = strrchr(path, '/');
	snprintf(parent, sizeof(parent), "%.*s", (int)(base - path), path);
	if (!realpath(parent[0] ? parent : "/", real))
		return -errno;
	size_t n = strlen(real);
	if (snprintf(real + n, sizeof(real) - n, "%s%s", n > 1 ? "/" : "", base + 1) >=
	    (int)(sizeof(real) - n))
		return -ENAMETOOLONG;
	if (system_folder(real))
		return -EACCES;
	return mkdir(path, 0700) && errno != EEXIST ? -errno : 0;
}

/* mkdir -p path, each missing part 0700 (existing ones are left as they are). */
static int make_dirs(char *path)
{
	for (char *p = path + 1;; p++) {
		if (*p && *p != '/')
			continue;
		char c = *p;
		*p = 0;
		int err = p[-1] == '/' ? 0 : make_dir(path);
		*p = c;
		if (err)
			return err;
		if (!c)
			return 0;
	}
}

/* Whether the open folder fd may hold a cache: not a system folder (-EACCES), owned by the
 * effective user and closed to others (-EPERM). 0 or -errno. */
static int check_dir(int fd, const char *path)
{
	char link[64], real[PATH_MAX];
	struct stat st;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, real, sizeof(real) - 1);
	if (n > 0)
		real[n] = 0;
	else if (!realpath(path, real))
		return -errno;
	if (system_folder(real))
		return -EACCES;
	if (fstat(fd, &st))
		return -errno;
	return st.st_uid != geteuid() || (st.st_mode & 022) ? -EPERM : 0;
}

int cache_dir_open(struct cache_dir *cd, const char *dir, const struct cache_kind *kind,
		   uint64_t max_bytes)
{
	char path[4096];
	int err = dir ? 0 : cache_dir_default(path, sizeof(path), kind->leaf);

	memset(cd, 0, sizeof(*cd));
	cd->dirfd = -1;
	if (!err && dir && snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path))
		err = -ENAMETOOLONG;
	if (!err && path[0] != '/')
		err = -EINVAL;
	if (!err)
		err = make_dirs(path);
	int fd = err ? -1 : open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (!err && fd < 0)
		err = errno == ENOTDIR ? -ELOOP : -errno;
	if (!err)
		err = check_dir(fd, path);
	if (err) {
		if (fd >= 0)
			close(fd);
		return err;
	}
	cd->dirfd = fd;
	cd->kind = kind;
	cd->max_bytes = max_bytes;
	return 0;
}

const char *cache_dir_strerror(int err)
{
	if (err == -EACCES)
		return "a system or home folder";
	if (err == -EPERM)
		return "not owned by the effective user, or writable by others";
	if (err == -ELOOP)
		return "a symlink";
	return strerror(-err);
}

int cache_dir_open_env(struct cache_dir *cd, const struct cache_kind *kind, uint64_t max_bytes,
		       int *warned)
{
	const char *env = getenv(kind->env);

	memset(cd, 0, sizeof(*cd));
	cd->dirfd = -1;
	if (env && !strcmp(env, "0"))
		return -ECANCELED;
	bool named = env && env[0] == '/';
	int err = cache_dir_open(cd, named ? env : NULL, kind, max_bytes);
	/* one flag per cache for the process: the folder is named once, its refusal said once */
	if (err && named && !__atomic_exchange_n(warned, 1, __ATOMIC_RELAXED))
		diag(DIAG_WARN, "cannot use the cache folder '%s' (%s): %s; not caching", env,
		     kind->env, cache_dir_strerror(err));
	return err;
}

void cache_dir_close(struct cache_dir *cd)
{
	if (cd->dirfd >= 0)
		close(cd->dirfd);
	cd->dirfd = -1;
}

bool cache_dir_id_ok(const struct cache_kind *kind, const char *build_id)
{
	size_t n = strlen(build_id);

	return n && n < kind->id_max && strspn(build_id, "0123456789abcdef") == n;
}

/* The name of build_id's file (the id, then the kind's suffix) into out (len bytes); false
 * when the id cannot name one or out is too small. */
static bool file_name(const struct cache_kind *kind, const char *build_id, char *out, size_t len)
{
	size_t n = strlen(build_id), sn = strlen(kind->suffix);

	if (!cache_dir_id_ok(kind, build_id) || n + sn + 1 > len)
		return false;
	memcpy(out, build_id, n);
	memcpy(out + n, kind->suffix, sn + 1);
	return true;
}

struct cache_dir *cache_dir_new(const char *dir, bool env, const struct cache_kind *kind,
				uint64_t max_bytes, int *warned)
{
	struct cache_dir *cd = calloc(1, sizeof(*cd));
	int err = !cd ? -ENOMEM
		  : env ? cache_dir_open_env(cd, kind, max_bytes, warned)
			: cache_dir_open(cd, dir, kind, max_bytes);

	if (err) {
		free(cd);
		errno = -err;
		return NULL;
	}
	return cd;
}

void cache_dir_free(struct cache_dir *cd)
{
	if (!cd)
		return;
	cache_dir_close(cd);
	free(cd);
}

int cache_dir_open_file(struct cache_dir *cd, const char *build_id, struct stat *st)
{
	char name[NAME_MAX + 1];

	if (!file_name(cd->kind, build_id, name, sizeof(name)))
		return -ENOENT;
	int fd = openat(cd->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return -errno;
	int err = fstat(fd, st) ? -errno : 0;
	if (!err && !S_ISREG(st->st_mode))
		err = -EINVAL;
	if (!err && (st->st_uid != geteuid() || (st->st_mode & 022)))
		err = -EPERM;
	if (!err && ((uint64_t)st->st_size < cd->kind->min_size ||
		     (cd->kind->max_size && (uint64_t)st->st_size > cd->kind->max_size)))
		err = -EBADMSG;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* Reads all of fd (size bytes) into a new buffer; NULL + errno (EBADMSG: it is shorter). */
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

int cache_dir_get(struct cache_dir *cd, const char *build_id, cache_dir_read_fn *fn, void *ctx)
{
	struct stat st;
	bool used = false;
	int fd = cache_dir_open_file(cd, build_id, &st);

	if (fd < 0)
		return fd;
	void *buf = read_all(fd, st.st_size);
	int err = buf ? fn(ctx, buf, st.st_size, &used) : -errno;
	if (used)
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

static void evict(struct cache_dir *cd);

int cache_dir_put(struct cache_dir *cd, const char *build_id, const struct iovec *iov, int n)
{
	char tmp[64], name[NAME_MAX + 1];
	uint64_t total = 0;
	int err = 0;

	if (!file_name(cd->kind, build_id, name, sizeof(name)))
		return -EINVAL;
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
	if (!cd->counted || cd->bytes > cd->max_bytes)
		evict(cd); /* the first put counts what is there (and drops stale temporary files) */
	return 0;
}

struct entry {
	char name[160];
	struct timespec mtime;
	uint64_t size;
};

/* Whether the file name in the folder is trusted as firn's: a regular file (not a symlink) of
 * the effective user, closed to others; *st filled. */
static bool owned_file(int dirfd, const char *name, struct stat *st)
{
	return !fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st->st_mode) &&
	       st->st_uid == geteuid() && !(st->st_mode & 022);
}

/* Whether name is one cache_dir_put gives a temporary file: ".tmp-PID-TID-SEQ". */
static bool is_temp_name(const char *name)
{
	if (strncmp(name, ".tmp-", 5))
		return false;
	name += 5;
	for (int part = 0; part < 3; part++) {
		size_t n = strspn(name, "0123456789");
		if (!n || name[n] != (part < 2 ? '-' : 0))
			return false;
		name += n + 1;
	}
	return true;
}

/* Removes the temporary file name when it is firn's and older than an hour (its writer died
 * mid-write). */
static void drop_stale(int dirfd, const char *name)
{
	struct stat st;

	if (is_temp_name(name) && owned_file(dirfd, name, &st) && st.st_mtime < time(NULL) - 3600)
		unlinkat(dirfd, name, 0);
}

/* Whether name is one of the kind's file names: a build id, then the suffix, and nothing else. */
static bool is_entry_name(const struct cache_kind *k, const char *name)
{
	size_t len = strlen(name), sl = strlen(k->suffix), id = len - sl;

	return len > sl && id < k->id_max && len < sizeof(((struct entry *)0)->name) &&
	       !strcmp(name + id, k->suffix) && strspn(name, "0123456789abcdef") == id;
}

/* Whether the file name is one of firn's entries of this cache (see cache_dir.h); *st filled. */
static bool is_entry(const struct cache_dir *cd, const char *name, struct stat *st)
{
	const struct cache_kind *k = cd->kind;
	char magic[16];

	if (!is_entry_name(k, name) || !owned_file(cd->dirfd, name, st) ||
	    (uint64_t)st->st_size < k->magic_len || k->magic_len > sizeof(magic))
		return false;
	int fd = openat(cd->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return false;
	struct stat fst;
	bool ok = !fstat(fd, &fst) && fst.st_ino == st->st_ino && fst.st_dev == st->st_dev &&
		  pread(fd, magic, k->magic_len, 0) == (ssize_t)k->magic_len &&
		  !memcmp(magic, k->magic, k->magic_len);
	close(fd);
	return ok;
}

/* Lists the cache's entries (firn's own files only) into a new array; *n entries. */
static struct entry *list_entries(const struct cache_dir *cd, size_t *n)
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
		drop_stale(cd->dirfd, de->d_name);
		if (!is_entry(cd, de->d_name, &st))
			continue;
		if (VEC_GROW(v, cap, *n + 1))
			break;
		snprintf(v[*n].name, sizeof(v[*n].name), "%s", de->d_name);
		v[*n].mtime = st.st_mtim;
		v[(*n)++].size = st.st_size;
	}
	closedir(d);
	return v;
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

/* Counts the entries and, past the bound, removes the least recently used down to the low-water
 * mark, so that the saves after it add a tenth of the bound before the folder is listed again
 * (not each one). (The folder is closed to others: what was checked is what is removed.) */
static void evict(struct cache_dir *cd)
{
	size_t n;
	struct entry *v = list_entries(cd, &n);
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += v[i].size;
	uint64_t goal = sum > cd->max_bytes ? CACHE_DIR_LOW_WATER(cd->max_bytes) : sum;
	if (n)
		qsort(v, n, sizeof(*v), by_mtime);
	for (size_t i = 0; i < n && sum > goal; i++) {
		if (!unlinkat(cd->dirfd, v[i].name, 0))
			sum -= v[i].size;
	}
	cd->bytes = sum;
	cd->counted = true;
	free(v);
}

