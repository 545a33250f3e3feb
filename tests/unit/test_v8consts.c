/* Unit tests for lib/runtimes/v8consts: the v8dbg_* constants of the libv8fake fixtures (node 20's values
 * in a small shared object; .bss constants read as 0), a missing constant, an implausible value
 * and coinciding frame slots refused with their reason, a file without V8, garbage, and — where
 * they are installed — node's own binary and Debian's libnode.so.108 (node 18). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "symfix.h"
#include "runtimes/v8consts.h"

/* Reads path's constants; returns the reader's result (-ENOENT for a file that cannot open). */
static int read_path(const char *path, struct v8consts *c)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	int err = v8consts_read_fd(c, fd);
	close(fd);
	return err;
}

/* The constants' table is sorted, as the reader's binary search needs. */
static void test_table_sorted(void **state)
{
	(void)state;
	assert_true(v8consts_count() > 40);
	for (size_t i = 1; i < v8consts_count(); i++)
		assert_true(strcmp(v8consts_name(i - 1), v8consts_name(i)) < 0);
	assert_null(v8consts_name(v8consts_count()));
}

/* The whole fake: every value as the fixture defines it, zeros from .bss included. */
static void test_fake(void **state)
{
	struct v8consts c;
	(void)state;
	assert_int_equal(read_path(built_fixture("libv8fake.so"), &c), 0);
	assert_string_equal(c.reason, "");
	assert_int_equal(c.off_fp_function, -16);
	assert_int_equal(c.off_fp_context, -8);
	assert_int_equal(c.off_fp_bytecode_array, -32);
	assert_int_equal(c.off_fp_bytecode_offset, -40);
	assert_int_equal(c.heap_object_tag, 1);
	assert_int_equal(c.heap_object_tag_mask, 3);
	assert_int_equal(c.smi_shift_size, 31);
	assert_int_equal(c.heap_object_map, 0);
	assert_int_equal(c.js_function_shared, 24);
	assert_int_equal(c.sfi_name_or_scope_info, 16);
	assert_int_equal(c.type_js_function, 2058);
	assert_int_equal(c.type_shared_function_info, 253);
	assert_int_equal(c.two_byte_string_tag, 0);
	assert_int_equal(c.frame_type[V8_FRAME_OPTIMIZED], 16); /* TurbofanFrame */
	assert_int_equal(v8consts_frame_type(&c, 13), V8_FRAME_INTERPRETED);
	assert_int_equal(v8consts_frame_type(&c, 99), -1);
	assert_int_equal(c.found, v8consts_count() - 1); /* TurbofanFrame, not OptimizedFrame */
}

/* Damaged fakes are refused, each with the reason a user would need. */
static void test_refused(void **state)
{
	struct v8consts c;
	(void)state;
	assert_int_equal(read_path(built_fixture("libv8fake-missing.so"), &c), -EPROTO);
	assert_string_equal(c.reason, "V8 constant v8dbg_off_fp_function is missing");
	assert_int_equal(read_path(built_fixture("libv8fake-badtag.so"), &c), -EPROTO);
	assert_string_equal(c.reason, "V8 constant v8dbg_HeapObjectTag has an implausible value");
	assert_int_equal(read_path(built_fixture("libv8fake-sameslots.so"), &c), -EPROTO);
	assert_non_null(strstr(c.reason, "frame slots that coincide"));
}

/* A file with no V8 is not one (found 0), and garbage is not ELF. */
static void test_not_v8(void **state)
{
	struct v8consts c;
	static const char junk[] = "\177ELF but not really an ELF file at all";
	(void)state;
	assert_int_equal(read_path(built_fixture("libfirnfix.so"), &c), -ENOENT);
	assert_int_equal(c.found, 0);
	assert_int_equal(v8consts_read_memory(&c, junk, sizeof(junk)), -EINVAL);
	assert_int_equal(v8consts_read_memory(&c, junk, 0), -EINVAL);
}

/* A real V8 where one is installed: node's own layout (the frame slots PLATFORM.md lists). */
static void check_real(const char *path)
{
	struct v8consts c;
	int err = read_path(path, &c);

	if (err == -ENOENT && access(path, R_OK)) {
		print_message("skipped: no '%s'\n", path);
		skip();
	}
	if (err)
		print_message("'%s': %s\n", path, c.reason);
	assert_int_equal(err, 0);
	assert_true(c.found > 400);
	assert_int_equal(c.off_fp_function, -16);
	assert_int_equal(c.off_fp_context, -8);
	assert_int_equal(c.off_fp_bytecode_array, -32);
	assert_int_equal(c.off_fp_bytecode_offset, -40);
	assert_int_equal(c.heap_object_tag, 1);
	assert_true(c.type_js_function > 0 && c.type_js_function != c.type_shared_function_info);
}

static void test_node(void **state)
{
	(void)state;
	check_real("/usr/bin/node");
}

static void test_libnode108(void **state)
{
	(void)state;
	check_real("/usr/lib/x86_64-linux-gnu/libnode.so.108");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_sorted), cmocka_unit_test(test_fake),
		cmocka_unit_test(test_refused),      cmocka_unit_test(test_not_v8),
		cmocka_unit_test(test_node),         cmocka_unit_test(test_libnode108),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
