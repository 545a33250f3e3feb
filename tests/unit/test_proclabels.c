/* Unit tests for lib/record/proclabels: live processes' exe and cgroup labels, noted again
 * after an exec, forgotten one by one in any order, and what a gone or unknown pid gets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model/profile.h"
#include "record/proclabels.h"

#define NKIDS 7

/* A child that waits until it is killed. */
static pid_t spawn(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (!pid) {
		pause();
		_exit(0);
	}
	return pid;
}

/* "exe=" and the program pid runs, as the kernel names it, into buf. */
static void exe_label(pid_t pid, char *buf, size_t len)
{
	char path[64], exe[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	assert_true((n = readlink(path, exe, sizeof(exe) - 1)) > 0);
	exe[n] = 0;
	snprintf(buf, len, "exe=%s", exe);
}

/* The labels pid has in t, as "key=value" joined by spaces into buf (""): how many. */
static int labels_of(struct proclabels *t, pid_t pid, char *buf, size_t len)
{
	struct profile p;
	struct profile_label out[PROCLABELS_MAX];
	size_t off = 0;

	assert_int_equal(profile_init(&p), 0);
	int n = proclabels_fill(t, (uint32_t)pid, &p, out);
	buf[0] = 0;
	for (int i = 0; i < n; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s=%s", i ? " " : "",
					profile_str(&p, out[i].key), profile_str(&p, out[i].str));
	profile_release(&p);
	return n;
}

/* Every child has its program as its exe label; forgotten in an order that is neither
 * sorted nor reversed, each goes and the others keep theirs; noted again, one's labels are the
 * same. */
static void test_note_fill_forget(void **state)
{
	struct proclabels *t = proclabels_new();
	char want[PATH_MAX + 8], got[2 * PATH_MAX];
	pid_t kids[NKIDS];
	static const int order[NKIDS] = { 3, 0, 6, 2, 5, 1, 4 };

	(void)state;
	assert_non_null(t);
	for (int i = 0; i < NKIDS; i++) {
		kids[i] = spawn();
		assert_int_equal(proclabels_note(t, kids[i]), 0);
	}
	assert_int_equal(proclabels_note(t, kids[2]), 0); /* again, as after an exec */
	for (int k = 0; k < NKIDS; k++) {
		for (int i = 0; i < NKIDS; i++) {
			bool gone = false;
			for (int j = 0; j < k; j++)
				gone |= order[j] == i;
			int got_n = labels_of(t, kids[i], got, sizeof(got));
			if (gone) {
				assert_int_equal(got_n, 0);
				continue;
			}
			assert_true(got_n >= 1);
			exe_label(kids[i], want, sizeof(want));
			assert_memory_equal(got, want, strlen(want));
		}
		proclabels_forget(t, kids[order[k]]);
	}
	proclabels_forget(t, kids[0]); /* not there: nothing */
	for (int i = 0; i < NKIDS; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	proclabels_free(t);
}

/* A pid with no process: -ENOENT, and no labels; one never noted: none; freeing a table that
 * still holds processes frees them (ASan's build sees a leak otherwise). */
static void test_gone(void **state)
{
	struct proclabels *t = proclabels_new();
	pid_t kid = spawn();
	char got[64];

	(void)state;
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	assert_int_equal(proclabels_note(t, kid), -ENOENT);
	assert_int_equal(labels_of(t, kid, got, sizeof(got)), 0);
	assert_int_equal(labels_of(t, getpid(), got, sizeof(got)), 0);
	assert_int_equal(proclabels_note(t, getpid()), 0);
	assert_true(labels_of(t, getpid(), got, sizeof(got)) >= 1);
	proclabels_free(t);
	proclabels_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_note_fill_forget),
		cmocka_unit_test(test_gone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
