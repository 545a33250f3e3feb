/* Unit tests for lib/elf/debugpkg_cache: a made-up dpkg and apt, whose .list files are then
 * rewritten in place (their folder keeps its mtime) so that an answer served from the cache
 * differs from a fresh look-up; a changed dpkg status, dpkg info folder or apt lists folder
 * makes it be found again; "no package" is cached too; and the record's parser. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "elf/debugpkg_cache.h"

static char root[] = "/tmp/firn-debugpkg-cache-XXXXXX";
static char info[80], status[80], lists[80], cache[80];

/* Writes root/name with text, in place where it exists. */
static void put(const char *name, const char *text)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/%s", root, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	fclose(f);
}

/* Sets path's mtime s seconds ahead of now (a change the cache must see at any granularity). */
static void touch_ahead(const char *path, int s)
{
	struct timespec t[2];
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec += s;
	t[1] = t[0];
	assert_int_equal(utimensat(AT_FDCWD, path, t, 0), 0);
}

/* A dpkg with tool (/usr/bin/tool) and apt knowing tool-dbg. */
static int setup(void **state)
{
	assert_non_null(mkdtemp(root));
	snprintf(info, sizeof(info), "%s/info", root);
	snprintf(status, sizeof(status), "%s/status", root);
	snprintf(lists, sizeof(lists), "%s/lists", root);
	snprintf(cache, sizeof(cache), "%s/cache", root);
	mkdir(info, 0700);
	mkdir(lists, 0700);
	put("info/tool.list", "/usr/bin/tool\n");
	put("status", "Package: tool\nVersion: 1\n");
	put("lists/deb_main_binary-amd64_Packages", "Package: tool-dbg\n");
	*state = NULL;
	return 0;
}

static int teardown(void **state)
{
	char cmd[96];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	return system(cmd) != 0;
}

/* The hint for path through a cache opened for this look-up (as each recording does; NULL
 * cache: none), or the error as "-N". */
static const char *hint_of(bool cached, const char *path)
{
	static char hint[64];
	struct debugpkg_dirs d = { info, status, lists };
	struct debugpkg_cache *c = cached ? debugpkg_cache_open(cache, 1 << 20) : NULL;
	if (cached)
		assert_non_null(c);
	int err = debugpkg_cache_find(c, &d, path, hint, sizeof(hint));
	debugpkg_cache_close(c);
	if (err)
		snprintf(hint, sizeof(hint), "%d", err);
	return hint;
}

static void test_cached_until_changed(void **state)
{
	assert_string_equal(hint_of(true, "/usr/bin/tool"), "tool-dbg");
	assert_string_equal(hint_of(true, "/usr/bin/gone"), "-2");
	put("info/tool.list", "/usr/bin/gone\n"); /* in place: the folder's mtime stays */
	assert_string_equal(hint_of(false, "/usr/bin/tool"), "-2"); /* what dpkg says now */
	assert_string_equal(hint_of(false, "/usr/bin/gone"), "tool-dbg");
	assert_string_equal(hint_of(true, "/usr/bin/tool"), "tool-dbg"); /* the cache's */
	assert_string_equal(hint_of(true, "/usr/bin/gone"), "-2");       /* "none" is kept */
	touch_ahead(status, 10); /* a package installed or removed */
	assert_string_equal(hint_of(true, "/usr/bin/tool"), "-2");
	assert_string_equal(hint_of(true, "/usr/bin/gone"), "tool-dbg");
	put("info/tool.list", "/usr/bin/tool\n");
	touch_ahead(info, 20); /* a .list renamed in */
	assert_string_equal(hint_of(true, "/usr/bin/tool"), "tool-dbg");
	put("lists/deb_main_binary-amd64_Packages", "Package: other\n");
	assert_string_equal(hint_of(true, "/usr/bin/tool"), "tool-dbg");
	touch_ahead(lists, 30); /* apt update */
	assert_string_equal(hint_of(true, "/usr/bin/tool"), "tool-dbgsym");
}

static void test_decode(void **state)
{
	struct debugpkg_key key = { .file = { 1, 2, 3, 4, 5 }, .apt_lists = { 6 } }, other = key;
	static char rec[DEBUGPKG_CACHE_RECORD], bad[DEBUGPKG_CACHE_RECORD];
	char hint[16];

	other.dpkg_status.mtime_nsec = 1;
	assert_int_equal(debugpkg_cache_encode("/a", &key, 0, "a-dbg", rec), 0);
	assert_int_equal(debugpkg_cache_decode(rec, sizeof(rec), "/a", &key, hint, 16), 0);
	assert_string_equal(hint, "a-dbg");
	assert_int_equal(debugpkg_cache_decode(rec, sizeof(rec), "/a", &key, hint, 5),
			 -ENAMETOOLONG);
	assert_int_equal(debugpkg_cache_decode(rec, sizeof(rec), "/b", &key, hint, 16), -EBADMSG);
	assert_int_equal(debugpkg_cache_decode(rec, sizeof(rec), "/a", &other, hint, 16), -EBADMSG);
	assert_int_equal(debugpkg_cache_decode(rec, sizeof(rec) - 1, "/a", &key, hint, 16),
			 -EBADMSG);
	memcpy(bad, rec, sizeof(bad));
	memset(bad + sizeof(bad) - DEBUGPKG_CACHE_HINT_MAX, 'x', DEBUGPKG_CACHE_HINT_MAX);
	assert_int_equal(debugpkg_cache_decode(bad, sizeof(bad), "/a", &key, hint, 16), -EBADMSG);
	assert_int_equal(debugpkg_cache_encode("/a", &key, -ENOENT, NULL, rec), 0);
	assert_int_equal(debugpkg_cache_decode(rec, sizeof(rec), "/a", &key, hint, 16), -ENOENT);
	char path[DEBUGPKG_CACHE_PATH_MAX + 1];
	memset(path, 'p', sizeof(path) - 1);
	path[sizeof(path) - 1] = '\0';
	assert_int_equal(debugpkg_cache_encode(path, &key, 0, "a", rec), -ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cached_until_changed),
		cmocka_unit_test(test_decode),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
