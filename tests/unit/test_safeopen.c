/* Unit tests for lib/base/safeopen: a FIFO, a directory and a symlink (with SAFEOPEN_NOFOLLOW) are
 * refused at once (a FIFO without blocking), a regular file opens (through a symlink too without
 * NOFOLLOW); the owner rule (root or the given uid, not writable by others); the warning about
 * running out of file descriptors comes once; the owner of a process. */
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
		cmocka_unit_test(test_out_of_fds),
		cmocka_unit_test(test_process_uid),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
