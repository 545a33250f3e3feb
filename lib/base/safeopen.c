/* safeopen: one way to open the files that processes and profiles name (see safeopen.h). */
#include "base/safeopen.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/diag.h"

/* Whether the file at st may be trusted as written by uid: owned by root or uid, and not
 * writable by others (perf's rule for perf maps, plus the mode). */
static bool owner_ok(const struct stat *st, uid_t uid)
{
	return (st->st_uid == 0 || st->st_uid == uid) && !(st->st_mode & S_IWOTH);
}

#define WALK_LINKS 40 /* symlinks one walk follows (the kernel's own limit) */

/* open(2)'s flags for safeopen's flags. */
static int open_flags(int flags)
{
	return O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (flags & SAFEOPEN_NOFOLLOW ? O_NOFOLLOW : 0);
}

/* Checks what safeopen opened (a regular file; the owner rule): fd, or -errno with fd closed. */
static int check_opened(int fd, int flags, uid_t uid, struct stat *st)
{
	struct stat tmp;

	if (!st)
		st = &tmp;
	int err = fstat(fd, st) ? -errno : 0;
	if (!err && !S_ISREG(st->st_mode))
		err = -EINVAL;
	if (!err && (flags & SAFEOPEN_OWNER) && !owner_ok(st, uid))
		err = -EPERM;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* The length of path's prefix naming a process's root (/proc/PID/root or /proc/self/fd/N, then
 * a '/'), or 0 when it names none: such a path is resolved inside that root. */
static size_t root_prefix(const char *path)
{
	bool fd = !strncmp(path, "/proc/self/fd/", 14);
	const char *p = fd ? path + 14 : path + 6, *d = p;

	if (!fd && strncmp(path, "/proc/", 6))
		return 0;
	while (*d >= '0' && *d <= '9')
		d++;
	if (d == p || *d != '/')
		return 0;
	if (fd)
		return d - path;
	return strncmp(d, "/root/", 6) ? 0 : (size_t)(d + 5 - path);
}

/* Opens the root folder the first n bytes of path name (O_PATH); fd or -errno. */
static int open_root(const char *path, size_t n)
{
	char root[64];

	if (n >= sizeof(root))
		return -ENAMETOOLONG;
	memcpy(root, path, n);
	root[n] = 0;
	int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Opens path inside rootfd with oflags, never leaving it: openat2, or the walk where the
 * kernel has none (or keeps answering EAGAIN: a ".." while renames go on elsewhere). fd or
 * -errno. */
static int open_in_root(int rootfd, const char *path, int oflags)
{
	struct open_how how = { .flags = (uint64_t)oflags,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };

	for (int tries = 0; tries < 4; tries++) {
		long fd = syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
		if (fd >= 0)
			return (int)fd;
		if (errno != EAGAIN && errno != ENOSYS)
			return -errno;
		if (errno == ENOSYS)
			break;
	}
	return safeopen_walk(rootfd, path, oflags);
}

int safeopen_at(int rootfd, const char *path, int flags, uid_t uid, struct stat *st)
{
	int fd = open_in_root(rootfd, path, open_flags(flags));

	if (fd < 0) {
		if (!(flags & SAFEOPEN_NOWARN))
			safeopen_note_error(fd);
		return fd;
	}
	return check_opened(fd, flags, uid, st);
}

int safeopen(const char *path, int flags, uid_t uid, struct stat *st)
{
	size_t n = root_prefix(path);

	if (n) {
		int rootfd = open_root(path, n);
		if (rootfd < 0) {
			if (!(flags & SAFEOPEN_NOWARN))
				safeopen_note_error(rootfd);
			return rootfd;
		}
		int fd = safeopen_at(rootfd, path + n, flags, uid, st);
		close(rootfd);
		return fd;
	}
	int fd = open(path, open_flags(flags));
	if (fd < 0) {
		int err = -errno;
		if (!(flags & SAFEOPEN_NOWARN))
			safeopen_note_error(err);
		return err;
	}
	return check_opened(fd, flags, uid, st);
}

int safeopen_stat(const char *path, struct stat *st)
{
	size_t n = root_prefix(path);

	if (!n)
		return stat(path, st) ? -errno : 0;
	int rootfd = open_root(path, n);
	if (rootfd < 0)
		return rootfd;
	int fd = open_in_root(rootfd, path + n, O_PATH | O_CLOEXEC);
	close(rootfd);
	if (fd < 0)
		return fd;
	int err = fstat(fd, st) ? -errno : 0;
	close(fd);
	return err;
}

/* A walk inside a root: the folder reached (cur), its path from the root, what is left. */
struct walk {
	int rootfd, cur;
	int links;
	char done[PATH_MAX];     /* "/a/b" ("" at the root) */
	char rest[2 * PATH_MAX]; /* "c/d" */
};

/* Opens the folder w->done names again from the root, following no symlink (".." and absolute
 * links come back this way). 0 or -errno. */
static int walk_reopen(struct walk *w)
{
	char buf[PATH_MAX], *save;
	int fd = openat(w->rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);

	strcpy(buf, w->done);
	for (char *c = strtok_r(buf, "/", &save); fd >= 0 && c; c = strtok_r(NULL, "/", &save)) {
		int next = openat(fd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int err = errno;
		close(fd);
		fd = next;
		errno = err;
	}
	if (fd < 0)
		return -errno;
	close(w->cur);
	w->cur = fd;
	return 0;
}

/* Takes the next component of what is left into name: 1, 0 when none is left, -ENAMETOOLONG. */
static int walk_next(struct walk *w, char *name, size_t len)
{
	char *p = w->rest + strspn(w->rest, "/");
	size_t n = strcspn(p, "/");

	if (!n)
		return 0;
	if (n >= len)
		return -ENAMETOOLONG;
	memcpy(name, p, n);
	name[n] = 0;
	memmove(w->rest, p + n, strlen(p + n) + 1);
	return 1;
}

/* Puts the target of the symlink name (in the folder reached) before what is left; an
 * absolute one is walked from the root. 0 or -errno. */
static int walk_link(struct walk *w, const char *name)
{
	char target[PATH_MAX], rest[sizeof(w->rest)];

	if (++w->links > WALK_LINKS)
		return -ELOOP;
	ssize_t n = readlinkat(w->cur, name, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = 0;
	if ((size_t)snprintf(rest, sizeof(rest), "%s%s%s", target, w->rest[0] ? "/" : "", w->rest) >=
	    sizeof(rest))
		return -ENAMETOOLONG;
	strcpy(w->rest, rest);
	if (target[0] != '/')
		return 0;
	w->done[0] = 0;
	return walk_reopen(w);
}

/* One component: "..", a folder, a symlink, or the file at the end (opened into *fd). 0 to go
 * on, 1 when *fd is open, or -errno. */
static int walk_step(struct walk *w, const char *name, int oflags, int *fd)
{
	struct stat st;
	bool last = !w->rest[strspn(w->rest, "/")];

	if (!strcmp(name, ".")) /* ".." at the root stays there, as RESOLVE_IN_ROOT does */
		return 0;
	if (!strcmp(name, "..")) {
		char *slash = strrchr(w->done, '/');
		if (slash)
			*slash = 0;
		return walk_reopen(w);
	}
	if (fstatat(w->cur, name, &st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	if (S_ISLNK(st.st_mode))
		return last && (oflags & O_NOFOLLOW) ? -ELOOP : walk_link(w, name);
	if (last) { /* "name/": a folder, as the kernel wants it */
		*fd = openat(w->cur, name, oflags | O_NOFOLLOW | O_CLOEXEC | (w->rest[0] ? O_DIRECTORY : 0));
		return *fd < 0 ? -errno : 1;
	}
	int next = openat(w->cur, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (next < 0)
		return -errno;
	if (strlen(w->done) + strlen(name) + 2 > sizeof(w->done)) {
		close(next);
		return -ENAMETOOLONG;
	}
	strcat(strcat(w->done, "/"), name);
	close(w->cur);
	w->cur = next;
	return 0;
}

int safeopen_walk(int rootfd, const char *path, int oflags)
{
	struct walk w = { .rootfd = rootfd };
	char name[NAME_MAX + 1];
	int fd = -1, err = 0;

	if (!path[0]) /* as open(2) */
		return -ENOENT;
	if (strlen(path) >= sizeof(w.rest))
		return -ENAMETOOLONG;
	strcpy(w.rest, path);
	w.cur = openat(rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (w.cur < 0)
		return -errno;
	while (!err) {
		err = walk_next(&w, name, sizeof(name));
		if (err == 0) { /* nothing left: the folder reached itself */
			fd = openat(w.cur, ".", oflags | O_CLOEXEC);
			err = fd < 0 ? -errno : 1;
		} else if (err == 1) {
			err = walk_step(&w, name, oflags, &fd);
		}
	}
	close(w.cur);
	return err == 1 ? fd : err;
}

const char *safeopen_strerror(int err)
{
	if (err == -EINVAL)
		return "not a regular file";
	if (err == -EPERM)
		return "not owned by the process's user or root, or writable by others";
	return strerror(-err);
}

void safeopen_note_error(int err)
{
	/* one process-wide flag for one process-wide limit: the warning says it once */
	static int warned;
	struct rlimit rl;

	if (err != -EMFILE && err != -ENFILE)
		return;
	if (__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		return;
	if (err == -ENFILE || getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		diag(DIAG_WARN, "out of file descriptors (%s): some symbols are missing",
		     err == -ENFILE ? "system-wide" : "no limit");
	else
		diag(DIAG_WARN, "out of file descriptors (limit %llu): some symbols are missing",
		     (unsigned long long)rl.rlim_cur);
}

int safeopen_process_uid(pid_t pid, uid_t *uid)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st))
		return -errno;
	*uid = st.st_uid;
	return 0;
}
