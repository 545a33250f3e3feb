/* safeopen: one way to open the files that processes and profiles name (see safeopen.h). */
#include "base/safeopen.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/diag.h"

/* Whether the file at st may be trusted as written by uid: owned by root or uid, and not
 * writable by others (perf's rule for perf maps, plus the mode). */
static bool owner_ok(const struct stat *st, uid_t uid)
{
	return (st->st_uid == 0 || st->st_uid == uid) && !(st->st_mode & S_IWOTH);
}

int safeopen(const char *path, int flags, uid_t uid, struct stat *st)
{
	struct stat tmp;
	int oflags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;

	if (!st)
		st = &tmp;
	if (flags & SAFEOPEN_NOFOLLOW)
		oflags |= O_NOFOLLOW;
	int fd = open(path, oflags);
	if (fd < 0) {
		int err = -errno;
		if (!(flags & SAFEOPEN_NOWARN))
			safeopen_note_error(err);
		return err;
	}
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
