/* Unit tests for lib/base/safeopen: a FIFO, a directory and a symlink (with SAFEOPEN_NOFOLLOW) are
 * refused at once (a FIFO without blocking), a regular file opens (through a symlink too without
 * NOFOLLOW); the owner rule (root or the given uid, not writable by others); the warning about
 * running out of file descriptors comes once; the owner of a process. A name inside a process's
 * root (/proc/PID/root/..., /proc/self/fd/N/...) resolves inside that root, by openat2 and by the
 * walk for kernels without it: an absolute symlink (a container's /tmp pointing at a host folder
 * with a planted perf map) or ".." never leads to the host's file, absolute links inside the root
 * resolve there, NOFOLLOW still refuses a symlink at the end. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/diag.h"
#include "base/safeopen.h"

static char dir[64];

/* dir/name into a static buffer. */
static const char *at(const char *name)
{
	static char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

/* A scratch folder with: file (0644), fifo, sub/, link -> file. */
static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/firn-safeopen.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	int fd = open(at("file"), O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0 || write(fd, "x\n", 2) != 2 || close(fd))
		return -1;
	if (mkfifo(at("fifo"), 0644) || mkdir(at("sub"), 0755) || symlink("file", at("link")))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	const char *names[] = { "file", "fifo", "link" };

	for (size_t i = 0; i < 3; i++)
		unlink(at(names[i]));
	rmdir(at("sub"));
	rmdir(dir);
	return 0;
}

static void test_kinds(void **state)
{
	struct stat st;
	int fd = safeopen(at("file"), SAFEOPEN_NOFOLLOW, 0, &st);

	assert_true(fd >= 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, 2);
	close(fd);
	/* a FIFO with no writer: refused at once, not waited on */
	assert_int_equal(safeopen(at("fifo"), 0, 0, NULL), -EINVAL);
	assert_int_equal(safeopen(at("sub"), 0, 0, NULL), -EINVAL);
	assert_int_equal(safeopen(at("link"), SAFEOPEN_NOFOLLOW, 0, NULL), -ELOOP);
	assert_true((fd = safeopen(at("link"), 0, 0, NULL)) >= 0);
	close(fd);
	assert_int_equal(safeopen(at("missing"), 0, 0, NULL), -ENOENT);
	assert_string_equal(safeopen_strerror(-EINVAL), "not a regular file");
	assert_string_equal(safeopen_strerror(-ENOENT), strerror(ENOENT));
}

/* A chroot-ish root in a scratch folder: host/perf-1.map planted outside it; inside, /tmp an
 * absolute symlink to the host folder's path, /data/real.map, /lib -> /data (absolute, meant
 * inside the root), /up -> ../../.. /data (climbing past the root), /data/link -> real.map. */
struct fakeroot {
	char top[64], root[96], host[96];
	int rootfd;
	ino_t real_ino;
};

/* Writes text to path (0644); asserts. */
static void put_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* Makes the fake root (see struct fakeroot); asserts. */
static void fakeroot_make(struct fakeroot *f)
{
	char p[256];
	struct stat st;

	snprintf(f->top, sizeof(f->top), "/tmp/firn-inroot.XXXXXX");
	assert_non_null(mkdtemp(f->top));
	snprintf(f->root, sizeof(f->root), "%s/root", f->top);
	snprintf(f->host, sizeof(f->host), "%s/host", f->top);
	assert_int_equal(mkdir(f->root, 0755) | mkdir(f->host, 0755), 0);
	snprintf(p, sizeof(p), "%s/perf-1.map", f->host);
	put_file(p, "1000 10 planted_by_the_host\n");
	snprintf(p, sizeof(p), "%s/data", f->root);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/data/real.map", f->root);
	put_file(p, "1000 10 the_containers_own\n");
	assert_int_equal(stat(p, &st), 0);
	f->real_ino = st.st_ino;
	snprintf(p, sizeof(p), "%s/tmp", f->root);
	assert_int_equal(symlink(f->host, p), 0);
	snprintf(p, sizeof(p), "%s/lib", f->root);
	assert_int_equal(symlink("/data", p), 0);
	snprintf(p, sizeof(p), "%s/up", f->root);
	assert_int_equal(symlink("../../../../../data", p), 0);
	snprintf(p, sizeof(p), "%s/data/link", f->root);
	assert_int_equal(symlink("real.map", p), 0);
	f->rootfd = open(f->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(f->rootfd >= 0);
}

static void fakeroot_remove(struct fakeroot *f)
{
	char cmd[128];

	close(f->rootfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->top);
	assert_int_equal(system(cmd), 0);
}

/* Whether fd (closed here) is the root's real.map; false for an error. */
static bool is_real(const struct fakeroot *f, int fd)
{
	struct stat st;

	if (fd < 0)
		return false;
	bool ok = !fstat(fd, &st) && st.st_ino == f->real_ino;
	close(fd);
	return ok;
}

static void test_in_root(void **state)
{
	struct fakeroot f;
	char p[128];
	struct stat st;

	(void)state;
	fakeroot_make(&f);
	/* the planted host file is reachable from here through the symlink, as the old open found it */
	snprintf(p, sizeof(p), "%s/tmp/perf-1.map", f.root);
	assert_int_equal(stat(p, &st), 0);
	/* openat2 (or the walk, on a kernel without it); the host path begins with /tmp, which
	 * inside the root is the symlink itself again: a loop */
	assert_int_equal(safeopen_at(f.rootfd, "/tmp/perf-1.map", SAFEOPEN_NOFOLLOW, 0, NULL), -ELOOP);
	assert_true(is_real(&f, safeopen_at(f.rootfd, "/lib/real.map", 0, 0, NULL)));
	assert_true(is_real(&f, safeopen_at(f.rootfd, "/up/real.map", 0, 0, NULL)));
	assert_true(is_real(&f, safeopen_at(f.rootfd, "/../../data/./real.map", 0, 0, NULL)));
	assert_int_equal(safeopen_at(f.rootfd, "/data/link", SAFEOPEN_NOFOLLOW, 0, NULL), -ELOOP);
	assert_true(is_real(&f, safeopen_at(f.rootfd, "/lib/link", 0, 0, NULL)));
	/* the names firn builds: /proc/self/fd/N/... as /proc/PID/root/... */
	snprintf(p, sizeof(p), "/proc/self/fd/%d/tmp/perf-1.map", f.rootfd);
	assert_int_equal(safeopen(p, SAFEOPEN_NOFOLLOW | SAFEOPEN_OWNER, getuid(), NULL), -ELOOP);
	assert_int_equal(safeopen_stat(p, &st), -ELOOP);
	snprintf(p, sizeof(p), "/proc/self/fd/%d/up/real.map", f.rootfd);
	assert_true(is_real(&f, safeopen(p, SAFEOPEN_NOFOLLOW, 0, NULL)));
	assert_int_equal(safeopen_stat(p, &st), 0);
	assert_int_equal(st.st_ino, f.real_ino);
	fakeroot_remove(&f);
}

/* The walk for kernels without openat2: the same answers. */
static void test_walk(void **state)
{
	struct fakeroot f;
	int flags = O_RDONLY | O_NONBLOCK;

	(void)state;
	fakeroot_make(&f);
	assert_int_equal(safeopen_walk(f.rootfd, "/tmp/perf-1.map", flags | O_NOFOLLOW), -ELOOP);
	assert_int_equal(safeopen_walk(f.rootfd, "/tmp/perf-1.map", flags), -ELOOP);
	assert_int_equal(safeopen_walk(f.rootfd, "/lib/perf-1.map", flags), -ENOENT);
	assert_true(is_real(&f, safeopen_walk(f.rootfd, "/lib/real.map", flags)));
	assert_true(is_real(&f, safeopen_walk(f.rootfd, "/up/real.map", flags)));
	assert_true(is_real(&f, safeopen_walk(f.rootfd, "/../../data/./real.map", flags)));
	assert_true(is_real(&f, safeopen_walk(f.rootfd, "//data///real.map", flags)));
	assert_int_equal(safeopen_walk(f.rootfd, "/data/link", flags | O_NOFOLLOW), -ELOOP);
	assert_true(is_real(&f, safeopen_walk(f.rootfd, "/lib/link", flags)));
	assert_int_equal(safeopen_walk(f.rootfd, "/data/real.map/x", flags), -ENOTDIR);
	assert_int_equal(safeopen_walk(f.rootfd, "/data/real.map/", flags), -ENOTDIR);
	assert_int_equal(safeopen_walk(f.rootfd, "", flags), -ENOENT);
	/* a loop of links ends */
	char p[160];
	snprintf(p, sizeof(p), "%s/loop", f.root);
	assert_int_equal(symlink("/loop", p), 0);
	assert_int_equal(safeopen_walk(f.rootfd, "/loop/x", flags), -ELOOP);
	fakeroot_remove(&f);
}

static void test_owner(void **state)
{
	int fd;

	if (geteuid() != 0)
		skip(); /* chown needs root */
	assert_int_equal(chown(at("file"), 12345, 12345), 0);
	assert_int_equal(safeopen(at("file"), SAFEOPEN_OWNER, 0, NULL), -EPERM);
	assert_int_equal(safeopen(at("file"), SAFEOPEN_OWNER, 999, NULL), -EPERM);
	assert_true((fd = safeopen(at("file"), SAFEOPEN_OWNER, 12345, NULL)) >= 0);
	close(fd);
	assert_int_equal(chmod(at("file"), 0666), 0); /* anyone may rewrite it: nobody's */
	assert_int_equal(safeopen(at("file"), SAFEOPEN_OWNER, 12345, NULL), -EPERM);
	assert_int_equal(chown(at("file"), 0, 0), 0);
	assert_int_equal(safeopen(at("file"), SAFEOPEN_OWNER, 12345, NULL), -EPERM);
	assert_int_equal(chmod(at("file"), 0644), 0);
	assert_true((fd = safeopen(at("file"), SAFEOPEN_OWNER, 12345, NULL)) >= 0); /* root's */
	close(fd);
}

static int warnings;
static char last[256];

/* Counts the warnings. */
static void count_warn(enum diag_level level, const char *msg)
{
	if (level == DIAG_WARN) {
		warnings++;
		snprintf(last, sizeof(last), "%s", msg);
	}
}

/* Out of descriptors for real (the soft limit lowered to what is open): SAFEOPEN_NOWARN leaves
 * the warning to the caller, else it comes once, naming the limit. */
static void test_out_of_fds(void **state)
{
	diag_fn old = diag_set_reporter(count_warn);
	struct rlimit rl, low;
	char want[128];
	int fd = dup(0);

	assert_true(fd >= 0);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	low = (struct rlimit){ fd + 1, rl.rlim_max };
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0); /* no descriptor above fd */
	safeopen_note_error(-ENOENT);
	assert_int_equal(safeopen(at("file"), SAFEOPEN_NOWARN, 0, NULL), -EMFILE);
	assert_int_equal(warnings, 0);
	assert_int_equal(safeopen(at("file"), 0, 0, NULL), -EMFILE);
	assert_int_equal(safeopen(at("file"), 0, 0, NULL), -EMFILE);
	safeopen_note_error(-ENFILE);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	close(fd);
	assert_int_equal(warnings, 1);
	snprintf(want, sizeof(want), "out of file descriptors (limit %d): some symbols are missing",
		 fd + 1);
	assert_string_equal(last, want);
	diag_set_reporter(old);
}

static void test_process_uid(void **state)
{
	uid_t uid = 1;

	assert_int_equal(safeopen_process_uid(getpid(), &uid), 0);
	assert_int_equal(uid, geteuid());
	assert_int_equal(safeopen_process_uid(-5, &uid), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_owner),
		cmocka_unit_test(test_in_root),
		cmocka_unit_test(test_walk),
		cmocka_unit_test(test_out_of_fds),
		cmocka_unit_test(test_process_uid),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
