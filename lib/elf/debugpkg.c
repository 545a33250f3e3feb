/* Which Debian package gives a file's debug information; see debugpkg.h. */
#include "elf/debugpkg.h"

#include <dirent.h>
#include <errno.h>
#include <lz4frame.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/safeopen.h"

#define LIST_MAX ((size_t)16 << 20)   /* the most read of one dpkg .list */
#define STATUS_MAX ((size_t)64 << 20) /* of dpkg's status */
#define SCAN_CHUNK ((size_t)1 << 20)  /* apt's lists are searched in pieces this large */
#define SCAN_KEEP 256                 /* what a piece keeps of the one before (a name's line) */
#define NAME_MAX_LEN 128              /* a package name, with its -dbg / -dbgsym */

/* Whether buf[at..at+n) is a whole line of buf[0..len). */
static bool whole_line(const char *buf, size_t len, size_t at, size_t n)
{
	return (at == 0 || buf[at - 1] == '\n') && (at + n == len || buf[at + n] == '\n');
}

bool debugpkg_list_has(const char *buf, size_t len, const char *path)
{
	size_t n = strlen(path);
	const char *p = buf, *end = buf + len;

	while (n && p < end && (p = memmem(p, end - p, path, n))) {
		if (whole_line(buf, len, p - buf, n))
			return true;
		p++;
	}
	return false;
}

/* The offset of the paragraph of a "Package: name" line in buf, or -1. */
static ptrdiff_t paragraph_of(const char *buf, size_t len, const char *name)
{
	char line[NAME_MAX_LEN + 16];
	int n = snprintf(line, sizeof(line), "Package: %s", name);
	const char *p = buf, *end = buf + len;

	if (n < 0 || (size_t)n >= sizeof(line))
		return -1;
	while (p < end && (p = memmem(p, end - p, line, n))) {
		if (whole_line(buf, len, p - buf, n))
			return p - buf;
		p++;
	}
	return -1;
}

bool debugpkg_packages_has(const char *buf, size_t len, const char *name)
{
	return paragraph_of(buf, len, name) >= 0;
}

int debugpkg_status_source(const char *buf, size_t len, const char *pkg, char *src, size_t size)
{
	ptrdiff_t at = paragraph_of(buf, len, pkg);

	if (at < 0)
		return -ENOENT;
	const char *p = buf + at, *end = buf + len;
	const char *stop = memmem(p, end - p, "\n\n", 2);
	const char *word = pkg;
	size_t n = strlen(pkg);
	for (end = stop ? stop : end; p < end; p++) {
		if (p[0] != '\n' || end - p < 9 || memcmp(p + 1, "Source: ", 8))
			continue;
		word = p + 9;
		for (n = 0; word + n < end && (unsigned char)word[n] > ' '; n++)
			;
		break;
	}
	if (!n || n >= size)
		return n ? -ENAMETOOLONG : -ENOENT;
	memcpy(src, word, n);
	src[n] = '\0';
	return 0;
}

/* Reads the regular file at path (at most max bytes) into *buf (malloc'd, *len); 0 or -errno. */
static int read_all(const char *path, size_t max, char **buf, size_t *len)
{
	struct stat st;
	int fd = safeopen(path, 0, 0, &st);

	if (fd < 0)
		return fd;
	size_t want = (size_t)st.st_size < max ? (size_t)st.st_size : max;
	char *b = malloc(want ? want : 1);
	ssize_t got = 0, r = 0;
	while (b && (size_t)got < want && (r = read(fd, b + got, want - got)) > 0)
		got += r;
	int err = !b ? -ENOMEM : r < 0 ? -errno : 0;
	close(fd);
	if (err) {
		free(b);
		return err;
	}
	*buf = b;
	*len = (size_t)got;
	return 0;
}

/* Whether the dpkg list at dir/name holds path or alt (NULL: none). */
static bool list_holds(const char *dir, const char *name, const char *path, const char *alt)
{
	char file[4096], *buf;
	size_t len;

	if ((size_t)snprintf(file, sizeof(file), "%s/%s", dir, name) >= sizeof(file) ||
	    read_all(file, LIST_MAX, &buf, &len))
		return false;
	bool has = debugpkg_list_has(buf, len, path) || (alt && debugpkg_list_has(buf, len, alt));
	free(buf);
	return has;
}

/* The package whose dpkg list holds path (or alt) into pkg: 0, -ENOENT, -ENAMETOOLONG. */
static int owner(const char *info, const char *path, const char *alt, char *pkg, size_t size)
{
	DIR *d = opendir(info);
	struct dirent *e;
	int err = -ENOENT;

	if (!d)
		return -ENOENT;
	while (err == -ENOENT && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n <= 5 || strcmp(e->d_name + n - 5, ".list") ||
		    !list_holds(info, e->d_name, path, alt))
			continue;
		n -= 5;
		if (memchr(e->d_name, ':', n)) /* "libc6:amd64.list" */
			n = strchr(e->d_name, ':') - e->d_name;
		err = n < size ? 0 : -ENAMETOOLONG;
		if (!err) {
			memcpy(pkg, e->d_name, n);
			pkg[n] = '\0';
		}
	}
	closedir(d);
	return err;
}

/* Searching a stream for the first of several names in apt's lists, piece by piece. */
struct scan {
	char *buf;                /* SCAN_KEEP + SCAN_CHUNK bytes */
	size_t len;
	const char *const *names; /* in order of preference */
	int n, found;             /* found: the first name seen so far (n: none) */
};

/* Searches the piece held, keeping its end for the next one. */
static void scan_piece(struct scan *s)
{
	for (int i = 0; i < s->found; i++)
		if (debugpkg_packages_has(s->buf, s->len, s->names[i]))
			s->found = i;
	size_t keep = s->len < SCAN_KEEP ? s->len : SCAN_KEEP;
	memmove(s->buf, s->buf + s->len - keep, keep);
	s->len = keep;
}

/* Adds data to the piece, searching each full one. */
static void scan_feed(struct scan *s, const char *data, size_t n)
{
	while (n) {
		size_t room = SCAN_KEEP + SCAN_CHUNK - s->len, take = n < room ? n : room;
		memcpy(s->buf + s->len, data, take);
		s->len += take;
		data += take;
		n -= take;
		if (s->len == SCAN_KEEP + SCAN_CHUNK)
			scan_piece(s);
	}
}

/* Feeds the file at fd to s, decompressed when lz4 (an LZ4 frame). 0 or -errno. */
static int scan_fd(struct scan *s, int fd, bool lz4)
{
	static const size_t in_size = 1 << 16;
	LZ4F_dctx *dctx = NULL;
	char *in = malloc(in_size), *out = malloc(SCAN_CHUNK);
	ssize_t r;
	int err = 0;

	if (!in || !out || (lz4 && LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION))))
		err = -ENOMEM;
	while (!err && (r = read(fd, in, in_size)) > 0) {
		if (!lz4)
			scan_feed(s, in, r);
		for (size_t at = 0; lz4 && at < (size_t)r;) {
			size_t src = r - at, dst = SCAN_CHUNK;
			if (LZ4F_isError(LZ4F_decompress(dctx, out, &dst, in + at, &src, NULL))) {
				err = -EINVAL;
				break;
			}
			scan_feed(s, out, dst);
			at += src;
		}
	}
	if (!err && r < 0)
		err = -errno;
	scan_piece(s);
	LZ4F_freeDecompressionContext(dctx);
	free(in);
	free(out);
	return err;
}

/* The first of names that apt's lists in dir hold: its index, or n (none, or no lists). */
static int apt_first(const char *dir, const char *const *names, int n)
{
	struct scan s = { malloc(SCAN_KEEP + SCAN_CHUNK), 1, names, n, n };
	DIR *d = opendir(dir);
	struct dirent *e;

	while (s.buf && d && s.found && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		bool lz4 = len > 13 && !strcmp(e->d_name + len - 13, "_Packages.lz4");
		char file[4096];
		if ((!lz4 && (len <= 9 || strcmp(e->d_name + len - 9, "_Packages"))) ||
		    (size_t)snprintf(file, sizeof(file), "%s/%s", dir, e->d_name) >= sizeof(file))
			continue;
		int fd = safeopen(file, SAFEOPEN_NOWARN, 0, NULL);
		if (fd < 0)
			continue;
		s.buf[0] = '\n'; /* a file's first paragraph starts a line */
		s.len = 1;
		scan_fd(&s, fd, lz4);
		close(fd);
	}
	if (d)
		closedir(d);
	free(s.buf);
	return s.found;
}

/* The candidates for pkg of source src, in order of preference, and the hint: the first -dbg
 * package apt knows, else pkg-dbgsym. */
static int pick(const struct debugpkg_dirs *dirs, const char *pkg, const char *src, char *hint,
		size_t size)
{
	char a[NAME_MAX_LEN + 8], b[NAME_MAX_LEN + 8];
	const char *names[2] = { a, b };

	snprintf(a, sizeof(a), "%s-dbg", src);
	snprintf(b, sizeof(b), "%s-dbg", pkg);
	int n = strcmp(src, pkg) ? 2 : 1;
	int i = apt_first(dirs && dirs->apt_lists ? dirs->apt_lists : "/var/lib/apt/lists", names, n);
	int w = i < n ? snprintf(hint, size, "%s", names[i]) : snprintf(hint, size, "%s-dbgsym", pkg);
	return w < 0 || (size_t)w >= size ? -ENAMETOOLONG : 0;
}

int debugpkg_find(const struct debugpkg_dirs *dirs, const char *path, char *hint, size_t size)
{
	const char *info = dirs && dirs->dpkg_info ? dirs->dpkg_info : "/var/lib/dpkg/info";
	const char *status = dirs && dirs->dpkg_status ? dirs->dpkg_status : "/var/lib/dpkg/status";
	const char *alt = !strncmp(path, "/usr/", 5) ? path + 4 : NULL; /* merged /usr */
	char pkg[NAME_MAX_LEN], src[NAME_MAX_LEN], *buf;
	size_t len;

	int err = owner(info, path, alt, pkg, sizeof(pkg));
	if (err)
		return err;
	err = -ENOENT;
	if (!read_all(status, STATUS_MAX, &buf, &len)) {
		err = debugpkg_status_source(buf, len, pkg, src, sizeof(src));
		free(buf);
	}
	if (err)
		snprintf(src, sizeof(src), "%s", pkg);
	return pick(dirs, pkg, src, hint, size);
}
