/* Unit tests for lib/elf/perfmap: the /tmp/perf-PID.map format (with and without 0x, names with
 * spaces), overlapping entries (the later line wins), malformed and unfinished lines, and
 * reading a file descriptor. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "elf/perfmap.h"

/* Asserts that addr resolves to name (NULL: not at all). */
static void expect(const struct perfmap *m, uint64_t addr, const char *name)
{
	const char *got = NULL;
	uint64_t start = 0;
	int err = perfmap_lookup(m, addr, &got, &start);

	if (!name) {
		assert_int_equal(err, -ENOENT);
		return;
	}
	assert_int_equal(err, 0);
	assert_string_equal(got, name);
}

static const char text[] =
	"7f0000001000 40 JS:*firnHotLoop /x/jitfix.js:6:21\n"
	"0x7f0000002000 0x20 py::main:/x/app.py\n"
	"7f0000003000 100 LazyCompile:old\n"
	"not a line\n"
	"7f0000003040 10 LazyCompile:new\n"
	"7f0000004000 0 zero size\n"
	"7f0000005000 10\n"
	"7f0000006000 10 unfinished";

static void test_parse(void **state)
{
	struct perfmap m;

	assert_int_equal(perfmap_parse(&m, text, sizeof(text) - 1), 0);
	assert_int_equal(m.n, 4);
	assert_int_equal(m.bad_lines, 3);
	expect(&m, 0x7f0000000fff, NULL);
	expect(&m, 0x7f0000001000, "JS:*firnHotLoop /x/jitfix.js:6:21");
	expect(&m, 0x7f000000103f, "JS:*firnHotLoop /x/jitfix.js:6:21");
	expect(&m, 0x7f0000001040, NULL);
	expect(&m, 0x7f0000002010, "py::main:/x/app.py");
	expect(&m, 0x7f0000003010, "LazyCompile:old");
	expect(&m, 0x7f0000003040, "LazyCompile:new"); /* later line wins where they overlap */
	expect(&m, 0x7f0000003050, "LazyCompile:old");
	expect(&m, 0x7f0000004000, NULL);
	expect(&m, 0x7f0000006000, NULL); /* its line was still being written */
	perfmap_release(&m);
	assert_int_equal(perfmap_parse(&m, "", 0), 0);
	expect(&m, 1, NULL);
	perfmap_release(&m);
}

static void test_read_fd(void **state)
{
	struct perfmap m;
	int fd = memfd_create("perfmap", MFD_CLOEXEC);
	char big[200];

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	for (int i = 0; i < 5000; i++) { /* grows past the first read buffer */
		int n = snprintf(big, sizeof(big), "%x 10 fn_%d\n", 0x100000 + i * 0x10, i);
		assert_int_equal(write(fd, big, n), n);
	}
	assert_int_equal(perfmap_read_fd(&m, fd, PERFMAP_MAX_BYTES), 0);
	assert_int_equal(m.n, 5004);
	assert_false(m.truncated);
	expect(&m, 0x7f0000001000, "JS:*firnHotLoop /x/jitfix.js:6:21");
	expect(&m, 0x100000 + 4999 * 0x10 + 5, "fn_4999");
	perfmap_release(&m);
	close(fd);
	assert_int_equal(perfmap_read_fd(&m, -1, PERFMAP_MAX_BYTES), -EBADF);
}

/* A map longer than the limit is cut there: the whole lines before the cut are kept, the line
 * the cut falls in is dropped, and truncated says so; a map of exactly the limit is whole. */
static void test_read_fd_limit(void **state)
{
	struct perfmap m;
	int fd = memfd_create("perfmap", MFD_CLOEXEC);
	const char *lines = "1000 10 a\n2000 10 b\n3000 10 c\n"; /* 10 bytes a line */

	assert_true(fd >= 0);
	assert_int_equal(write(fd, lines, 30), 30);
	assert_int_equal(perfmap_read_fd(&m, fd, 25), 0);
	assert_true(m.truncated);
	assert_int_equal(m.n, 2);
	expect(&m, 0x2005, "b");
	expect(&m, 0x3005, NULL);
	perfmap_release(&m);
	assert_int_equal(perfmap_read_fd(&m, fd, 30), 0);
	assert_false(m.truncated);
	assert_int_equal(m.n, 3);
	perfmap_release(&m);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_read_fd),
		cmocka_unit_test(test_read_fd_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
