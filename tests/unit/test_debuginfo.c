/* Unit tests for lib/elf/debuginfo: separate debug files found by build id (and a file with the wrong
 * id refused), by .gnu_debuglink next to the binary, in its .debug/ and under the debug directory
 * (and a CRC mismatch refused), inside a process root first; and the debuginfod client's "not
 * configured" answer. The files are made with objcopy in a scratch directory. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "elf/debuginfo.h"
#include "elf/elfsym.h"
#include "symfix.h"

/* The scratch directory of the test run. */
static char dir[64];

/* Runs a shell command built like printf; asserts it succeeds. */
static void sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	assert_int_equal(system(cmd), 0);
}

/* dir/rel as a path, in one of 8 buffers used in turn (copy what must last longer). */
static const char *at(const char *rel)
{
	static char path[8][PATH_MAX];
	static int k;

	k = (k + 1) % 8;
	assert_true((size_t)snprintf(path[k], sizeof(path[k]), "%s/%s", dir, rel) < sizeof(path[k]));
	return path[k];
}

/* Build id of the ELF file at path. */
static void build_id_of(const char *path, char *out)
{
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(debuginfo_build_id(fd, out), 0);
	close(fd);
}

/* Sets up: bin/prog (stripped, with build id), prog.debug (its debug file), link/prog (stripped,
 * no build id, a debuglink to prog.debug) and other.debug (another program's). */
static int setup(void **state)
{
	strcpy(dir, "/tmp/firn-debuginfo-XXXXXX");
	assert_non_null(mkdtemp(dir));
	const char *fix = built_fixture("shortfix");
	sh("mkdir -p %s/bin %s/link %s/dbg", dir, dir, dir);
	sh("strip -s -o %s/bin/prog %s && objcopy --only-keep-debug %s %s/prog.debug", dir, fix, fix,
	   dir);
	sh("objcopy --remove-section=.note.gnu.build-id --add-gnu-debuglink=%s/prog.debug "
	   "%s/bin/prog %s/link/prog", dir, dir, dir);
	sh("objcopy --only-keep-debug %s %s/other.debug", built_fixture("inlinefix"), dir);
	return 0;
}

static int teardown(void **state)
{
	sh("rm -rf %s", dir);
	return 0;
}

/* Asserts that q finds want (a path under dir), or nothing when want is NULL. */
static void expect(const struct debuginfo_query *q, const char *want)
{
	char found[PATH_MAX] = "";
	int fd = debuginfo_find(q, found, sizeof(found));

	if (!want) {
		assert_int_equal(fd, -ENOENT);
		return;
	}
	assert_true(fd >= 0);
	close(fd);
	assert_string_equal(found, at(want));
}

static void test_build_id(void **state)
{
	char id[129], path[PATH_MAX];
	struct elfsym e;

	build_id_of(at("bin/prog"), id);
	assert_int_equal(elfsym_init_path(&e, built_fixture("shortfix")), 0);
	assert_string_equal(id, e.build_id); /* strip keeps the note */
	elfsym_release(&e);
	char dbg[PATH_MAX];
	strcpy(dbg, at("dbg"));
	struct debuginfo_query q = { .build_id = id, .path = "/usr/bin/prog", .debug_dir = dbg };
	expect(&q, NULL);
	snprintf(path, sizeof(path), "dbg/.build-id/%.2s", id);
	sh("mkdir -p %s && cp %s %s/%s.debug", at(path), at("other.debug"), at(path), id + 2);
	expect(&q, NULL); /* the file there has another build id */
	sh("cp %s %s/%s.debug", at("prog.debug"), at(path), id + 2);
	snprintf(path, sizeof(path), "dbg/.build-id/%.2s/%s.debug", id, id + 2);
	expect(&q, path);
	char root[PATH_MAX];
	strcpy(root, at("root"));
	snprintf(path, sizeof(path), "root/usr/lib/debug/.build-id/%.2s", id);
	sh("mkdir -p %s && cp %s %s/%s.debug", at(path), at("prog.debug"), at(path), id + 2);
	struct debuginfo_query in_root = { .build_id = id, .root = root, .debug_dir = NULL };
	snprintf(path, sizeof(path), "root/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
	expect(&in_root, path); /* the process's root first */
}

static void test_debuglink(void **state)
{
	struct elfsym e;
	char bindir[PATH_MAX], prog[PATH_MAX], dbg[PATH_MAX];

	strcpy(prog, at("link/prog"));
	strcpy(dbg, at("dbg"));
	assert_int_equal(elfsym_init_path(&e, prog), 0);
	assert_string_equal(e.debuglink, "prog.debug");
	assert_string_equal(e.build_id, "");
	assert_false(e.has_dwarf);
	struct debuginfo_query q = {
		.path = prog, .debuglink = e.debuglink, .crc = e.debuglink_crc, .debug_dir = dbg,
	};
	expect(&q, NULL);
	sh("mkdir -p %s/dbg%s/link", dir, dir);
	sh("cp %s %s/dbg%s/link/prog.debug", at("prog.debug"), dir, dir);
	assert_true((size_t)snprintf(bindir, sizeof(bindir), "dbg%s/link/prog.debug", dir) <
		    sizeof(bindir));
	expect(&q, bindir); /* DEBUG_DIR/BINARY_DIR/NAME */
	sh("mkdir -p %s/link/.debug && cp %s %s/link/.debug/", dir, at("prog.debug"), dir);
	expect(&q, "link/.debug/prog.debug");
	sh("cp %s %s/link/prog.debug", at("other.debug"), dir);
	expect(&q, "link/.debug/prog.debug"); /* next to it, but the CRC does not match */
	sh("cp %s %s/link/prog.debug", at("prog.debug"), dir);
	expect(&q, "link/prog.debug");
	q.debuglink = "../prog.debug";
	expect(&q, NULL); /* a debuglink is a file name, not a path */
	elfsym_release(&e);
}

static void test_client(void **state)
{
	const char *old = getenv("DEBUGINFOD_URLS");
	char *saved = old ? strdup(old) : NULL;

	unsetenv("DEBUGINFOD_URLS");
	errno = 0;
	assert_null(debuginfo_client_new(1000));
	assert_int_equal(errno, ENOENT);
	setenv("DEBUGINFOD_URLS", "", 1);
	assert_null(debuginfo_client_new(1000));
	assert_int_equal(errno, ENOENT);
	if (saved)
		setenv("DEBUGINFOD_URLS", saved, 1);
	else
		unsetenv("DEBUGINFOD_URLS");
	free(saved);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_id),
		cmocka_unit_test(test_debuglink),
		cmocka_unit_test(test_client),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
