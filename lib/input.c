/* Profile files: format detection and loading, atomic saving. */
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pprof.h"

#define PEEK_BYTES 65536

/* An input being loaded: its descriptor and the first bytes already read from it. */
struct source {
	int fd;
	bool own_fd;
	char *buf;
	size_t len, cap, pos;
};

/* Reads until n bytes or end of file; returns the count or -errno. */
static ssize_t read_full(int fd, char *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, buf + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (!r)
			break;
		got += r;
	}
	return got;
}

/* Opens path ("-" = stdin) and reads its first bytes. */
static int source_open(struct source *s, const char *path)
{
	struct stat st;

	memset(s, 0, sizeof(*s));
	s->fd = 0;
	if (strcmp(path, "-")) {
		s->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (s->fd < 0)
			return -errno;
		s->own_fd = true;
	}
	if (fstat(s->fd, &st))
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	s->cap = PEEK_BYTES;
	if (S_ISREG(st.st_mode) && st.st_size > PEEK_BYTES)
		s->cap = st.st_size + 1;
	if (!(s->buf = malloc(s->cap)))
		return -ENOMEM;
	ssize_t n = read_full(s->fd, s->buf, PEEK_BYTES);
	if (n < 0)
		return (int)n;
	s->len = n;
	return 0;
}

/* Closes the descriptor (not stdin) and frees the peeked bytes. */
static void source_close(struct source *s)
{
	if (s->own_fd)
		close(s->fd);
	free(s->buf);
}

/* Reads the rest of the input after the peeked bytes. */
static int source_slurp(struct source *s)
{
	for (;;) {
		if (s->len == s->cap) {
			char *n = realloc(s->buf, s->cap * 2);
			if (!n)
				return -ENOMEM;
			s->buf = n;
			s->cap *= 2;
		}
		ssize_t r = read_full(s->fd, s->buf + s->len, s->cap - s->len);
		if (r < 0)
			return (int)r;
		if (!r)
			return 0;
		s->len += r;
	}
}

/* fopencookie read: the peeked bytes first, then the descriptor. */
static ssize_t source_cookie_read(void *cookie, char *buf, size_t n)
{
	struct source *s = cookie;

	if (s->pos < s->len) {
		size_t k = s->len - s->pos < n ? s->len - s->pos : n;
		memcpy(buf, s->buf + s->pos, k);
		s->pos += k;
		return k;
	}
	for (;;) {
		ssize_t r = read(s->fd, buf, n);
		if (r >= 0 || errno != EINTR)
			return r;
	}
}

/* Whether byte b can start a Profile message: the key of one of its fields. */
static bool is_profile_key(unsigned char b)
{
	unsigned field = b >> 3, wt = b & 7;

	if (field < 1 || field > 14)
		return false;
	if (field <= 6 || field == 11)
		return wt == 2;
	return wt == 0 || (wt == 2 && (field == 7 || field == 8 || field == 13));
}

/* Whether bytes contain control characters that text does not (tab, CR, LF aside). */
static bool looks_binary(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = buf[i];
		if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f)
			return true;
	}
	return false;
}

/* Streams the input as folded text; text without one parsable line is -EINVAL. */
static int load_folded(struct profile *p, struct source *s, enum folded_comm comm,
		       struct folded_stats *st)
{
	cookie_io_functions_t io = { .read = source_cookie_read };
	FILE *f = fopencookie(s, "r", io);

	if (!f)
		return -ENOMEM;
	int err = folded_read_comm(p, f, comm, st);
	fclose(f);
	if (err)
		return err;
	if (!st->lines)
		return -ENODATA;
	return st->lines == st->bad_lines ? -EINVAL : 0;
}

int profile_load(struct profile *p, const char *path, struct folded_stats *st)
{
	return profile_load_comm(p, path, FOLDED_COMM_AUTO, st);
}

/* Peeks at the first bytes to pick the format; only pprof input is read whole. */
int profile_load_comm(struct profile *p, const char *path, enum folded_comm comm,
		      struct folded_stats *st)
{
	struct folded_stats none;
	struct source s;
	int err;

	if (!st)
		st = &none;
	memset(st, 0, sizeof(*st));
	err = source_open(&s, path);
	if (!err && !s.len)
		err = -ENODATA;
	if (err) {
		source_close(&s);
		return err;
	}
	const unsigned char *b = (const unsigned char *)s.buf;
	bool gz = s.len >= 2 && b[0] == 0x1f && b[1] == 0x8b;
	if (gz || (is_profile_key(b[0]) && looks_binary(s.buf, s.len))) {
		err = source_slurp(&s);
		if (!err)
			err = pprof_decode(p, s.buf, s.len);
		/* not pprof after all, and no NUL byte (pprof has one: string_table[0] is ""): text
		 * with control characters */
		if (err == -EINVAL && !gz && !memchr(s.buf, 0, s.len)) {
			profile_release(p);
			err = profile_init(p);
			if (!err)
				err = load_folded(p, &s, comm, st);
		}
	} else {
		err = load_folded(p, &s, comm, st);
	}
	source_close(&s);
	return err;
}

/* Writes all of buf to fd. */
static int write_all(int fd, const void *buf, size_t len)
{
	const char *b = buf;

	while (len) {
		ssize_t w = write(fd, b, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		b += w;
		len -= w;
	}
	return 0;
}

/* Formats "path.tmp.XXXXXX" with a fresh random-looking suffix; returns a malloc'd name. */
static char *temp_name(const char *path, unsigned attempt)
{
	static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	struct timespec ts;
	char suffix[7];
	char *name;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t x = ((uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^ (uint64_t)getpid() << 40) +
		     attempt * 0x9e3779b97f4a7c15ULL;
	x *= 0xff51afd7ed558ccdULL;
	for (int i = 0; i < 6; i++, x /= 36)
		suffix[i] = digits[x % 36];
	suffix[6] = 0;
	return asprintf(&name, "%s.tmp.%s", path, suffix) < 0 ? NULL : name;
}

/* Creates a new temporary file next to path; returns its descriptor or -errno, *tmp its name. */
static int temp_create(const char *path, char **tmp)
{
	for (unsigned attempt = 0; attempt < 100; attempt++) {
		char *name = temp_name(path, attempt);
		if (!name)
			return -ENOMEM;
		int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0) {
			*tmp = name;
			return fd;
		}
		int err = -errno;
		free(name);
		if (err != -EEXIST)
			return err;
	}
	return -EEXIST;
}

/* Hard-links path to a fresh temporary name; returns 0 and *lnk, or -errno. */
static int link_temp(const char *path, char **lnk)
{
	for (unsigned attempt = 0; attempt < 100; attempt++) {
		char *name = temp_name(path, attempt);
		if (!name)
			return -ENOMEM;
		if (!link(path, name)) {
			*lnk = name;
			return 0;
		}
		int err = -errno;
		free(name);
		if (err != -EEXIST)
			return err;
	}
	return -EEXIST;
}

/* Makes path.old hold the current path: a hard link renamed into place, so that path itself
 * stays, or a rename where hard links fail. A missing path is not an error. */
static int keep_old_file(const char *path)
{
	char *old, *lnk = NULL;

	if (asprintf(&old, "%s.old", path) < 0)
		return -ENOMEM;
	int err = link_temp(path, &lnk);
	if (!err) {
		if (rename(lnk, old)) {
			err = -errno;
			unlink(lnk);
		}
		free(lnk);
	} else if (err == -ENOENT) {
		err = 0;
	} else if (err != -ENOMEM) {
		err = rename(path, old) && errno != ENOENT ? -errno : 0;
	}
	free(old);
	return err;
}

/* fsyncs the directory holding path, so the rename is durable (errors ignored). */
static void sync_parent(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(dir);
}

/* Temporary file, fsync, optional .old, rename, fsync of the directory. */
int file_replace_atomic(const char *path, const void *buf, size_t len, bool keep_old)
{
	struct stat st;
	char *tmp = NULL;
	int err = 0;

	if (!lstat(path, &st) && S_ISDIR(st.st_mode))
		return -EISDIR;
	int fd = temp_create(path, &tmp);
	if (fd < 0)
		return fd;
	err = write_all(fd, buf, len);
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && keep_old)
		err = keep_old_file(path);
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	else
		sync_parent(path);
	free(tmp);
	return err;
}

/* Encodes, then writes to stdout or replaces path atomically. */
int profile_save(const struct profile *p, const char *path, bool gzip, bool keep_old)
{
	void *buf;
	size_t len;
	int err = pprof_encode(p, gzip, &buf, &len);

	if (err)
		return err;
	err = strcmp(path, "-") ? file_replace_atomic(path, buf, len, keep_old)
				: write_all(STDOUT_FILENO, buf, len);
	free(buf);
	return err;
}
