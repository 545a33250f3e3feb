/* Unit tests for lib/proc/procmap: parsing maps text (spaces in paths, deleted files, pseudo paths,
 * anonymous mappings), lookups, and reading our own /proc/self/maps. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "proc/procmap.h"

static const char maps_text[] =
	"55d4c3a00000-55d4c3a02000 r--p 00000000 08:01 1234                       /usr/bin/prog\n"
	"55d4c3a02000-55d4c3a05000 r-xp 00002000 08:01 1234                       /usr/bin/prog\n"
	"55d4c4000000-55d4c4021000 rw-p 00000000 00:00 0                          [heap]\n"
	"7f0000000000-7f0000001000 rwxp 00000000 00:00 0 \n"
	"7f0000100000-7f0000180000 r-xp 00001000 fd:02 98765                      /opt/my dir/lib x.so\n"
	"7f0000200000-7f0000201000 r-xs 00000000 00:05 4242                       /memfd:jit (deleted)\n"
	"7f0000300000-7f0000302000 r-xp 00000000 103:04 777                       /tmp/a b (deleted)\n"
	"7f0000400000-7f0000401000 rw-p 00000000 00:00 0                          [anon:firn arena]\n"
	"7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]\n"
	"7ffd00100000-7ffd00102000 r-xp 00000000 00:00 0                          [vdso]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n";

/* Parses maps_text into m, asserting success. */
static void parse_fixture(struct procmap *m)
{
	assert_int_equal(procmap_parse(m, maps_text, strlen(maps_text)), 0);
	assert_int_equal(m->n, 11);
}

static void test_fields(void **state)
{
	struct procmap m;

	parse_fixture(&m);
	const struct procmap_entry *e = &m.entries[1];
	assert_int_equal(e->start, 0x55d4c3a02000);
	assert_int_equal(e->end, 0x55d4c3a05000);
	assert_int_equal(e->offset, 0x2000);
	assert_int_equal(e->dev_major, 8);
	assert_int_equal(e->dev_minor, 1);
	assert_int_equal(e->inode, 1234);
	assert_true(e->r && !e->w && e->x && !e->shared && !e->deleted);
	assert_int_equal(e->kind, PROCMAP_FILE);
	assert_string_equal(e->path, "/usr/bin/prog");
	e = &m.entries[6];
	assert_int_equal(e->dev_major, 0x103);
	assert_int_equal(e->dev_minor, 4);
	procmap_release(&m);
	assert_null(m.entries);
}

static void test_paths(void **state)
{
	struct procmap m;

	parse_fixture(&m);
	assert_string_equal(m.entries[4].path, "/opt/my dir/lib x.so");
	assert_int_equal(m.entries[4].kind, PROCMAP_FILE);
	assert_false(m.entries[4].deleted);
	assert_string_equal(m.entries[5].path, "/memfd:jit");
	assert_true(m.entries[5].deleted && m.entries[5].shared);
	assert_int_equal(m.entries[5].kind, PROCMAP_FILE);
	assert_string_equal(m.entries[6].path, "/tmp/a b");
	assert_true(m.entries[6].deleted);
	assert_string_equal(m.entries[3].path, "");
	assert_int_equal(m.entries[3].kind, PROCMAP_ANON);
	assert_true(m.entries[3].x && m.entries[3].w);
	assert_int_equal(m.entries[2].kind, PROCMAP_HEAP);
	assert_int_equal(m.entries[7].kind, PROCMAP_PSEUDO);
	assert_string_equal(m.entries[7].path, "[anon:firn arena]");
	assert_int_equal(m.entries[8].kind, PROCMAP_STACK);
	assert_int_equal(m.entries[9].kind, PROCMAP_VDSO);
	assert_int_equal(m.entries[10].kind, PROCMAP_VSYSCALL);
	assert_int_equal(m.entries[10].start, 0xffffffffff600000);
	assert_false(m.entries[10].r);
	procmap_release(&m);
}

static void test_find(void **state)
{
	struct procmap m;

	parse_fixture(&m);
	assert_ptr_equal(procmap_find(&m, 0x55d4c3a00000), &m.entries[0]);
	assert_ptr_equal(procmap_find(&m, 0x55d4c3a01fff), &m.entries[0]);
	assert_ptr_equal(procmap_find(&m, 0x55d4c3a02000), &m.entries[1]);
	assert_ptr_equal(procmap_find(&m, 0x55d4c3a04fff), &m.entries[1]);
	assert_null(procmap_find(&m, 0x55d4c3a05000)); /* gap before [heap] */
	assert_null(procmap_find(&m, 0x1000));          /* before the first */
	assert_ptr_equal(procmap_find(&m, 0x7f0000150000), &m.entries[4]);
	assert_ptr_equal(procmap_find(&m, 0xffffffffff600400), &m.entries[10]);
	assert_null(procmap_find(&m, 0xffffffffff601000));
	procmap_release(&m);
}

static void test_unsorted_and_no_newline(void **state)
{
	static const char text[] = "2000-3000 r-xp 00000000 00:00 0 [b]\n"
				   "1000-2000 r--p 00000000 00:00 0 /a";
	struct procmap m;

	assert_int_equal(procmap_parse(&m, text, strlen(text)), 0);
	assert_int_equal(m.n, 2);
	assert_string_equal(m.entries[0].path, "/a");
	assert_string_equal(m.entries[1].path, "[b]");
	assert_ptr_equal(procmap_find(&m, 0x2500), &m.entries[1]);
	procmap_release(&m);
	assert_int_equal(procmap_parse(&m, "", 0), 0);
	assert_int_equal(m.n, 0);
	assert_null(procmap_find(&m, 0));
	procmap_release(&m);
}

static void test_malformed(void **state)
{
	static const char *bad[] = {
		"1000-2000 r-xp 00000000 00:00\n",          /* no inode */
		"1000 r-xp 00000000 00:00 0 /a\n",          /* no end */
		"1000-2000 rxxp 00000000 00:00 0 /a\n",     /* perms */
		"3000-2000 r-xp 00000000 00:00 0 /a\n",     /* end before start */
		"1000-2000 r-xp 0000zz00 00:00 0 /a\n",     /* offset */
		"11112222333344445-2000 r-xp 0 00:00 0 /a\n", /* 17 hex digits */
		"1000-2000 r-xp 00000000 00:00 0x /a\n",    /* inode */
	};
	struct procmap m;

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		assert_int_equal(procmap_parse(&m, bad[i], strlen(bad[i])), -EINVAL);
		assert_null(m.entries);
		assert_null(m.buf);
	}
	assert_int_equal(procmap_parse(&m, "1000-2000\0", 10), -EINVAL);
}

/* A function of this test whose address we look for. */
__attribute__((noinline)) int procmap_test_marker(int x)
{
	return x + 1;
}

static void test_read_self(void **state)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct procmap m;
	int x;

	assert_true(n > 0);
	exe[n] = 0;
	assert_int_equal(procmap_read(&m, getpid()), 0);
	assert_true(m.n > 5);
	for (size_t i = 1; i < m.n; i++)
		assert_true(m.entries[i - 1].end <= m.entries[i].start);
	const struct procmap_entry *e = procmap_find(&m, (uintptr_t)procmap_test_marker);
	assert_non_null(e);
	assert_true(e->x && e->r && !e->w);
	assert_int_equal(e->kind, PROCMAP_FILE);
	assert_string_equal(e->path, exe);
	e = procmap_find(&m, (uintptr_t)&x);
	assert_non_null(e); /* [stack], or anonymous under valgrind */
	assert_true(e->r && e->w && !e->x);
	procmap_release(&m);
	assert_int_equal(procmap_read(&m, INT_MAX), -ENOENT);
}

/* procmap_add does what mmap does to a process's map: a mapping over part of another splits it
 * (the right part's file offset moved along), one over a whole entry replaces it; entries stay
 * sorted, paths are the map's own copies. procmap_copy keeps the executable ones on request. */
static void test_add(void **state)
{
	struct procmap m, x;
	char path[] = "/lib/a.so";
	struct procmap_entry a = { .start = 0x1000, .end = 0x5000, .offset = 0x100, .x = true,
				   .kind = PROCMAP_FILE, .path = path };
	struct procmap_entry b = { .start = 0x2000, .end = 0x3000, .kind = PROCMAP_ANON, .path = "" };
	struct procmap_entry c = { .start = 0x0, .end = 0x8000, .x = true, .kind = PROCMAP_FILE,
				   .path = "/lib/c.so" };

	procmap_init(&m);
	assert_int_equal(procmap_add(&m, &a), 0);
	strcpy(path, "/changed");
	assert_string_equal(m.entries[0].path, "/lib/a.so");
	assert_int_equal(procmap_add(&m, &b), 0);
	assert_int_equal(m.n, 3);
	assert_int_equal(m.entries[0].start, 0x1000);
	assert_int_equal(m.entries[0].end, 0x2000);
	assert_int_equal(m.entries[1].kind, PROCMAP_ANON);
	assert_int_equal(m.entries[2].start, 0x3000);
	assert_int_equal(m.entries[2].end, 0x5000);
	assert_int_equal(m.entries[2].offset, 0x100 + 0x2000);
	assert_string_equal(m.entries[2].path, "/lib/a.so");
	assert_ptr_equal(procmap_find(&m, 0x2800), &m.entries[1]);
	assert_int_equal(procmap_copy(&x, &m, true), 0);
	assert_int_equal(x.n, 2);
	assert_int_equal(x.entries[1].start, 0x3000);
	assert_int_equal(procmap_add(&m, &c), 0);
	assert_int_equal(m.n, 1);
	assert_string_equal(m.entries[0].path, "/lib/c.so");
	assert_string_equal(x.entries[0].path, "/lib/a.so");
	procmap_release(&x);
	procmap_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_unsorted_and_no_newline),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_read_self),
		cmocka_unit_test(test_add),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
