/* Unit tests for lib/base/json: exact bytes of compact and pretty output, escaping, numbers, misuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"

/* A writer on a memory stream; buf/len are valid after capture_end. */
struct capture {
	FILE *f;
	char *buf;
	size_t len;
	struct json_writer *w;
};

static void capture_begin(struct capture *c, bool pretty)
{
	memset(c, 0, sizeof(*c));
	c->f = open_memstream(&c->buf, &c->len);
	assert_non_null(c->f);
	c->w = jw_new(c->f, pretty);
	assert_non_null(c->w);
}

/* Finishes the capture and checks the bytes and the writer's error state. */
static void capture_expect(struct capture *c, const char *want, int want_err)
{
	int err = jw_error(c->w);

	jw_free(c->w);
	assert_int_equal(fclose(c->f), 0);
	assert_string_equal(c->buf, want);
	assert_int_equal(strlen(c->buf), c->len);
	assert_int_equal(err, want_err);
	free(c->buf);
}

/* Writes the same small document used by the compact and pretty tests. */
static void write_doc(struct json_writer *w)
{
	jw_begin_object(w);
	jw_name(w, "file");
	jw_string(w, "firn.pb.gz");
	jw_name(w, "total");
	jw_int(w, 2041);
	jw_name(w, "functions");
	jw_begin_array(w);
	jw_begin_object(w);
	jw_name(w, "name");
	jw_string(w, "main");
	jw_name(w, "self_pct");
	jw_double(w, 12.5);
	jw_end_object(w);
	jw_uint(w, 18446744073709551615ULL);
	jw_begin_array(w);
	jw_end_array(w);
	jw_end_array(w);
	jw_name(w, "empty");
	jw_begin_object(w);
	jw_end_object(w);
	jw_name(w, "ok");
	jw_bool(w, true);
	jw_name(w, "no");
	jw_bool(w, false);
	jw_name(w, "nothing");
	jw_null(w);
	jw_end_object(w);
}

static void test_compact(void **state)
{
	struct capture c;

	capture_begin(&c, false);
	write_doc(c.w);
	assert_int_equal(jw_depth(c.w), 0);
	capture_expect(&c,
		       "{\"file\":\"firn.pb.gz\",\"total\":2041,\"functions\":[{\"name\":\"main\","
		       "\"self_pct\":12.5},18446744073709551615,[]],\"empty\":{},\"ok\":true,"
		       "\"no\":false,\"nothing\":null}\n",
		       0);
}

static void test_pretty(void **state)
{
	struct capture c;

	capture_begin(&c, true);
	write_doc(c.w);
	capture_expect(&c,
		       "{\n"
		       "  \"file\": \"firn.pb.gz\",\n"
		       "  \"total\": 2041,\n"
		       "  \"functions\": [\n"
		       "    {\n"
		       "      \"name\": \"main\",\n"
		       "      \"self_pct\": 12.5\n"
		       "    },\n"
		       "    18446744073709551615,\n"
		       "    []\n"
		       "  ],\n"
		       "  \"empty\": {},\n"
		       "  \"ok\": true,\n"
		       "  \"no\": false,\n"
		       "  \"nothing\": null\n"
		       "}\n",
		       0);
}

static void test_top_level_scalars(void **state)
{
	struct capture c;

	capture_begin(&c, false);
	jw_int(c.w, -9223372036854775807LL - 1);
	jw_string(c.w, "x");
	jw_string(c.w, NULL);
	capture_expect(&c, "-9223372036854775808\n\"x\"\nnull\n", 0);
}

static void test_escape_ascii(void **state)
{
	struct capture c;

	capture_begin(&c, false);
	jw_string(c.w, "q\"b\\s/\b\f\n\r\t\x01\x1f\x7f end");
	capture_expect(&c, "\"q\\\"b\\\\s/\\b\\f\\n\\r\\t\\u0001\\u001f\\u007f end\"\n", 0);
}

static void test_escape_nul_with_len(void **state)
{
	struct capture c;

	capture_begin(&c, false);
	jw_string_len(c.w, "a\0b", 3);
	capture_expect(&c, "\"a\\u0000b\"\n", 0);
}

static void test_utf8_valid_passes(void **state)
{
	struct capture c;

	/* 2, 3 and 4 byte sequences, the edges of the ranges */
	capture_begin(&c, false);
	jw_string(c.w, "\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5 \xed\x9f\xbf \xf4\x8f\xbf\xbf \xc2\xa0");
	capture_expect(&c, "\"\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5 \xed\x9f\xbf \xf4\x8f\xbf\xbf \xc2\xa0\"\n",
		       0);
}

/* C1 controls (U+0080-U+009F: U+009B is CSI) and DEL are escaped: a terminal would obey them. */
static void test_escape_c1(void **state)
{
	struct capture c;

	capture_begin(&c, false);
	jw_string(c.w, "a\xc2\x80" "b\xc2\x9b" "2J\xc2\x9f" "c\x7f" "\xc2\xa0");
	capture_expect(&c, "\"a\\u0080b\\u009b2J\\u009fc\\u007f\xc2\xa0\"\n", 0);
}

static void test_utf8_invalid_replaced(void **state)
{
	struct capture c;

	capture_begin(&c, false);
	/* lone continuation; overlong C0 80 (two bytes, each invalid); surrogate ED A0 80 (three);
	 * truncated E2 82 before 'x' (one maximal subpart); F5 (never valid); above U+10FFFF;
	 * truncated 4-byte sequence at the end */
	jw_string(c.w, "a\x80" "b\xc0\x80" "c\xed\xa0\x80" "d\xe2\x82x" "\xf5" "e\xf4\x90\x80\x80" "f\xf0\x9f\x94");
	capture_expect(&c,
		       "\"a\\ufffdb\\ufffd\\ufffdc\\ufffd\\ufffd\\ufffdd\\ufffdx\\ufffde"
		       "\\ufffd\\ufffd\\ufffd\\ufffdf\\ufffd\"\n",
		       0);
}

static void test_names_escaped(void **state)
{
	struct capture c;

	capture_begin(&c, true);
	jw_begin_object(c.w);
	jw_name(c.w, "a\"b");
	jw_int(c.w, 1);
	jw_end_object(c.w);
	capture_expect(&c, "{\n  \"a\\\"b\": 1\n}\n", 0);
}

static void test_doubles(void **state)
{
	struct capture c;

	capture_begin(&c, false);
	jw_begin_array(c.w);
	jw_double(c.w, 0.0);
	jw_double(c.w, 100.0);
	jw_double(c.w, 33.333333333333336);
	jw_double(c.w, 0.1);
	jw_double(c.w, -2.5e-7);
	jw_double(c.w, 1e300);
	jw_double(c.w, -0.0);
	jw_double(c.w, 1234567.25);
	jw_double(c.w, NAN);
	jw_double(c.w, INFINITY);
	jw_double(c.w, -INFINITY);
	jw_end_array(c.w);
	capture_expect(&c, "[0,100,33.333333333333336,0.1,-2.5e-07,1e+300,-0,1234567.25,null,null,null]\n", 0);
}

static void test_value_without_name_is_error(void **state)
{
	struct capture c;

	capture_begin(&c, false);
	jw_begin_object(c.w);
	jw_int(c.w, 1);
	jw_end_object(c.w);
	capture_expect(&c, "{1}\n", -EINVAL);
}

static void test_unmatched_end_is_error(void **state)
{
	struct capture c;

	capture_begin(&c, false);
	jw_begin_array(c.w);
	jw_end_object(c.w);
	assert_int_equal(jw_depth(c.w), 1);
	jw_end_array(c.w);
	capture_expect(&c, "[]\n", -EINVAL);
}

static void test_name_outside_object_is_error(void **state)
{
	struct capture c;

	capture_begin(&c, false);
	jw_begin_array(c.w);
	jw_name(c.w, "x");
	jw_end_array(c.w);
	capture_expect(&c, "[]\n", -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compact),
		cmocka_unit_test(test_pretty),
		cmocka_unit_test(test_top_level_scalars),
		cmocka_unit_test(test_escape_ascii),
		cmocka_unit_test(test_escape_nul_with_len),
		cmocka_unit_test(test_escape_c1),
		cmocka_unit_test(test_utf8_valid_passes),
		cmocka_unit_test(test_utf8_invalid_replaced),
		cmocka_unit_test(test_names_escaped),
		cmocka_unit_test(test_doubles),
		cmocka_unit_test(test_value_without_name_is_error),
		cmocka_unit_test(test_unmatched_end_is_error),
		cmocka_unit_test(test_name_outside_object_is_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
