/* Unit tests for lib/elf/debugpkg: the debug package of a file from a made-up dpkg and apt (its
 * .list files, status, plain and lz4 package lists): SOURCE-dbg before PKG-dbg, PKG-dbgsym when
 * apt knows neither, merged /usr, PKG:ARCH lists; and the three parsers on edge cases. */
#include <errno.h>
#include <lz4frame.h>
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

#include "elf/debugpkg.h"

static char root[] = "/tmp/firn-debugpkg-XXXXXX";
static char info[64], status[64], lists[64];

/* Writes root/name with text (lz4: as an LZ4 frame). */
static void put(const char *name, const char *text, int lz4)
{
	char path[128], *buf = (char *)text;
	size_t len = strlen(text);
	snprintf(path, sizeof(path), "%s/%s", root, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	if (lz4) {
		buf = malloc(LZ4F_compressFrameBound(len, NULL));
		len = LZ4F_compressFrame(buf, LZ4F_compressFrameBound(len, NULL), text, len, NULL);
		assert_false(LZ4F_isError(len));
	}
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
	if (lz4)
		free(buf);
}

/* A dpkg with python3.11-minimal (source python3.11), libc6:amd64 (listed under /lib), xz-utils
 * (no Source: field) and tool (source toolsrc); apt knows python3.11-dbg (plain list) and
 * libc6-dbg and toolsrc-dbg's neighbour (lz4 list). */
static int setup(void **state)
{
	assert_non_null(mkdtemp(root));
	snprintf(info, sizeof(info), "%s/info", root);
	snprintf(status, sizeof(status), "%s/status", root);
	snprintf(lists, sizeof(lists), "%s/lists", root);
	mkdir(info, 0700);
	mkdir(lists, 0700);
	put("info/python3.11-minimal.list", "/.\n/usr\n/usr/bin\n/usr/bin/python3.11\n", 0);
	put("info/python3.list", "/usr/bin/python3\n/usr/bin/python3.11-config\n", 0);
	put("info/libc6:amd64.list", "/lib/x86_64-linux-gnu/libc.so.6\n", 0);
	put("info/xz-utils.list", "/usr/bin/xz", 0);
	put("info/tool.list", "/usr/bin/tool\n", 0);
	put("info/tool.md5sums", "/usr/bin/other\n", 0);
	put("status", "Package: python3\nStatus: install ok installed\n\n"
		      "Package: python3.11-minimal\nVersion: 3.11.2\nSource: python3.11 (3.11.2-6)\n\n"
		      "Package: xz-utils\nVersion: 5.4.1\n\n"
		      "Package: libc6\nSource: glibc\n\nPackage: tool\nSource: toolsrc\n", 0);
	put("lists/deb_main_binary-amd64_Packages",
	    "Package: python3.11-dbg\nSource: python3.11\n\nPackage: python3.11-dev\n", 0);
	put("lists/deb_main_binary-amd64_Packages.lz4",
	    "Package: libc6-dbg\nSource: glibc\n\nPackage: toolsrc-dbgx\n\n"
	    "Package: tool-dbg\n", 1);
	put("lists/deb_main_Sources", "Package: xz-utils-dbg\n", 0);
	*state = NULL;
	return 0;
}

static int teardown(void **state)
{
	char cmd[96];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	return system(cmd) != 0;
}

/* The hint for path, or the error as "-N". */
static const char *hint_of(const char *path)
{
	static char hint[64];
	struct debugpkg_dirs d = { info, status, lists };
	int err = debugpkg_find(&d, path, hint, sizeof(hint));
	if (err)
		snprintf(hint, sizeof(hint), "%d", err);
	return hint;
}

static void test_find(void **state)
{
	assert_string_equal(hint_of("/usr/bin/python3.11"), "python3.11-dbg"); /* the source's */
	assert_string_equal(hint_of("/usr/lib/x86_64-linux-gnu/libc.so.6"), "libc6-dbg"); /* lz4 */
	assert_string_equal(hint_of("/usr/bin/xz"), "xz-utils-dbgsym"); /* no -dbg in Packages */
	assert_string_equal(hint_of("/usr/bin/tool"), "tool-dbg");      /* the package's own */
	assert_string_equal(hint_of("/usr/bin/other"), "-2");           /* .md5sums is no list */
	assert_string_equal(hint_of("/usr/bin/python3.1"), "-2");       /* whole lines only */
	assert_string_equal(hint_of("/usr/bin"), "python3.11-dbg");     /* a listed directory */
	struct debugpkg_dirs none = { "/nonexistent", NULL, NULL };
	char h[8];
	assert_int_equal(debugpkg_find(&none, "/usr/bin/python3.11", h, sizeof(h)), -ENOENT);
	struct debugpkg_dirs d = { info, status, lists };
	assert_int_equal(debugpkg_find(&d, "/usr/bin/python3.11", h, sizeof(h)), -ENAMETOOLONG);
}

static void test_parsers(void **state)
{
	static const char st[] = "Package: a\nSource: \n\nPackage: b\nSource: src";
	char src[8];
	assert_int_equal(debugpkg_status_source(st, sizeof(st) - 1, "a", src, sizeof(src)), -ENOENT);
	assert_int_equal(debugpkg_status_source(st, sizeof(st) - 1, "b", src, sizeof(src)), 0);
	assert_string_equal(src, "src");
	assert_int_equal(debugpkg_status_source(st, sizeof(st) - 1, "b", src, 3), -ENAMETOOLONG);
	assert_int_equal(debugpkg_status_source(st, 20, "b", src, sizeof(src)), -ENOENT);
	assert_true(debugpkg_list_has("/x\n/y", 5, "/y"));
	assert_false(debugpkg_list_has("/x\n/y", 4, "/y"));
	assert_false(debugpkg_list_has("/x\n/y", 5, ""));
	assert_true(debugpkg_packages_has("Package: a", 10, "a"));
	assert_false(debugpkg_packages_has("Package: ab", 11, "a"));
	assert_false(debugpkg_packages_has("XPackage: a", 11, "a"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_parsers),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
