/* Profile files: format detection and loading; saving that never destroys what is at the path. */
#include "format/input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "format/pprof.h"
#include "base/vec.h"

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

/* pprof_decode of the slurped input; a sample with the wrong number of values goes into st. */
static int decode_pprof(struct profile *p, const struct source *s, struct folded_stats *st)
{
	struct pprof_fault fault = { 0 };
	int err = pprof_decode_fault(p, s->buf, s->len, &fault);

	st->bad_sample = fault.sample;
	st->bad_sample_values = fault.nvalues;
	return err;
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
		s->cap = (uint64_t)st.st_size < PPROF_MAX_SIZE ? (size_t)st.st_size + 1 : PPROF_MAX_SIZE + 1;
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

/* Reads the rest of the input after the peeked bytes; more than PPROF_MAX_SIZE bytes (a
 * profile that large could not be decoded, or endless input) is -EFBIG. */
static int source_slurp(struct source *s)
{
	for (;;) {
		if (s->len > PPROF_MAX_SIZE)
			return -EFBIG;
		/* doubles, up to PPROF_MAX_SIZE + 1 bytes */
		if (s->len == s->cap &&
		    vec_grow_max((void **)&s->buf, &s->cap, s->cap + 1, 1, PPROF_MAX_SIZE + 1))
			return -ENOMEM;
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

/* The stream's buffer for folded text: a cookie stream's default one (8 KiB) made a read(2)
 * and a refill per 8 KiB, 9500 for an 80 MB input. */
#define FOLDED_BUFSIZ (1u << 20)

/* Streams the input as folded text; text without one parsable line is -EINVAL. */
static int load_folded(struct profile *p, struct source *s, enum folded_comm comm,
		       struct folded_stats *st)
{
	cookie_io_functions_t io = { .read = source_cookie_read };
	FILE *f = fopencookie(s, "r", io);
	char *buf = f ? malloc(FOLDED_BUFSIZ) : NULL;

	if (!f)
		return -ENOMEM;
	if (buf)
		setvbuf(f, buf, _IOFBF, FOLDED_BUFSIZ); /* else the default one */
	int err = folded_read_comm(p, f, comm, st);
	fclose(f);
	free(buf);
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
	if (gz || (is_profile_key(b[0]) && looks_binary(s.buf, s.len) &&
		   pprof_plausible(s.buf, s.len))) {
		err = source_slurp(&s);
		if (!err)
			err = decode_pprof(p, &s, st);
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
	char suffix[7];
	char *name;
	uint64_t x = (mono_ns() ^ (uint64_t)getpid() << 40) + attempt * 0x9e3779b97f4a7c15ULL;
	x *= 0xff51afd7ed558ccdULL;
	for (int i = 0; i < 6; i++, x /= 36)
		suffix[i] = digits[x % 36];
	suffix[6] = 0;
	return asprintf(&name, "%s.tmp.%s", path, suffix) < 0 ? NULL : name;
}

/* Creates a new temporary file next to path; returns its descriptor or -errno, *tmp its name. */
static int temp_create(const char *path, mode_t mode, char **tmp)
{
	for (unsigned attempt = 0; attempt < 100; attempt++) {
		char *name = temp_name(path, attempt);
		if (!name)
			return -ENOMEM;
		int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
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

/* Gives a new file to w's owner before anyone can open it by its final name. */
static void give_away(int fd, const struct file_write *w)
{
	if (w->chown && fchown(fd, w->uid, w->gid))
		return; /* best effort: the file stays the caller's */
}

/* A new file's contents: its owner as w says, buf, fsync, close (fd is closed in any case).
 * Returns 0 or -errno. */
static int fill_new_file(int fd, const void *buf, size_t len, const struct file_write *w)
{
	give_away(fd, w);
	int err = write_all(fd, buf, len);
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

/* Temporary file, owner, fsync, optional .old, rename, fsync of the directory. */
static int replace_regular(const char *path, const void *buf, size_t len, struct file_write *w)
{
	char *tmp = NULL;
	int fd = temp_create(path, w->mode, &tmp);

	if (fd < 0)
		return fd;
	int err = fill_new_file(fd, buf, len, w);
	if (!err && w->keep_old && (err = keep_old_file(path)))
		w->old_failed = true;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	else
		sync_parent(path);
	free(tmp);
	return err;
}

/* open(2) for writing without blocking: a FIFO with no reader is tried again every 10 ms for
 * FIFO_READER_WAIT_MS (a reader started at the same time may not have opened it yet), then
 * fails with -ENXIO instead of hanging. */
static int open_nonblock_wait(const char *path, int flags)
{
	for (int waited = 0;; waited += 10) {
		int fd = open(path, flags | O_NONBLOCK);
		if (fd >= 0 || errno != ENXIO || waited >= FIFO_READER_WAIT_MS)
			return fd < 0 ? -errno : fd;
		usleep(10000);
	}
}

/* Opens what path is (or, following a link, leads to) for writing through it without
 * blocking on a FIFO that has no reader (-ENXIO), then makes writes blocking again. */
static int open_through(const char *path, bool follow, struct stat *st)
{
	int fd = open_nonblock_wait(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));

	if (fd < 0)
		return fd;
	int fl = fcntl(fd, F_GETFL), err = 0;
	if (fstat(fd, st) || fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK))
		err = -errno;
	else if (!S_ISCHR(st->st_mode) && !S_ISFIFO(st->st_mode) && !(follow && S_ISREG(st->st_mode)))
		err = -EOPNOTSUPP; /* swapped since it was looked at */
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* Writes through a device, a FIFO or (behind a trusted link) a regular file, in place. */
static int write_through(const char *path, bool follow, const void *buf, size_t len)
{
	struct stat st;
	int fd = open_through(path, follow, &st), err = 0;

	if (fd < 0)
		return fd;
	bool reg = S_ISREG(st.st_mode);
	if (reg && ftruncate(fd, 0))
		err = -errno;
	if (!err)
		err = write_all(fd, buf, len);
	if (!err && reg && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

/* Whether a link may be followed: only its owner or root could have made it, so one planted
 * in a shared folder by another user is not. */
static bool link_trusted(const struct stat *st)
{
	return st->st_uid == geteuid() || st->st_uid == 0;
}

/* Block devices and sockets are refused: a profile is no disk image. */
int file_write_kind(const char *path)
{
	struct stat st;
	bool follow = false;

	if (lstat(path, &st))
		return errno == ENOENT ? FILE_WRITE_REPLACE : -errno;
	if (S_ISLNK(st.st_mode)) {
		if (!link_trusted(&st) || stat(path, &st))
			return FILE_WRITE_REPLACE; /* not followed, or leads nowhere: replaced */
		follow = true;
	}
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (S_ISREG(st.st_mode))
		return follow ? FILE_WRITE_FOLLOW : FILE_WRITE_REPLACE;
	if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
		return follow ? FILE_WRITE_FOLLOW : FILE_WRITE_THROUGH;
	return -EOPNOTSUPP;
}

/* Picks by what path is now: replace a regular file, write through a device or FIFO. */
int file_replace_atomic(const char *path, const void *buf, size_t len, struct file_write *w)
{
	int kind = file_write_kind(path);

	w->old_failed = false;
	if (kind < 0)
		return kind;
	if (kind == FILE_WRITE_REPLACE)
		return replace_regular(path, buf, len, w);
	return write_through(path, kind == FILE_WRITE_FOLLOW, buf, len);
}

/* mkostemps, owner, write, fsync; the file is removed again on failure. */
int file_write_new(char *tmpl, int suffixlen, const void *buf, size_t len,
		   const struct file_write *w)
{
	int fd = mkostemps(tmpl, suffixlen, O_CLOEXEC);

	if (fd < 0)
		return -errno;
	int err = fill_new_file(fd, buf, len, w);
	if (err)
		unlink(tmpl);
	return err;
}

/* O_NOFOLLOW first; a link is opened only after its owner is checked. */
int file_open_read(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0 || errno != ELOOP)
		return fd >= 0 ? fd : -errno;
	if (lstat(path, &st))
		return -errno;
	if (S_ISLNK(st.st_mode) && !link_trusted(&st))
		return -EACCES;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd >= 0 ? fd : -errno;
}

/* Encodes, then writes to stdout or replaces path atomically. */
int profile_save(const struct profile *p, const char *path, bool gzip, bool keep_old)
{
	void *buf;
	size_t len;
	int err = pprof_encode(p, gzip, &buf, &len);

	if (err)
		return err;
	struct file_write w = { .mode = 0600, .keep_old = keep_old };

	err = strcmp(path, "-") ? file_replace_atomic(path, buf, len, &w)
				: write_all(STDOUT_FILENO, buf, len);
	free(buf);
	return err;
}
