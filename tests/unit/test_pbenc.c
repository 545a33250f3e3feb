/* lib/base/pbenc: the protobuf wire format's bytes, checked against the examples of protobuf's
 * encoding guide (150 as 08 96 01, "testing", an embedded message) and its rules for negative
 * int64 (ten bytes), fixed64 (little-endian) and lengths past 127 (two-byte varints). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/pbenc.h"

/* Finishes e and checks its bytes. */
static void expect(struct pbenc *e, const uint8_t *want, size_t n)
{
	void *buf = NULL;
	size_t len = 0;

	assert_int_equal(pbenc_finish(e, &buf, &len), 0);
	assert_int_equal(len, n);
	assert_memory_equal(buf, want, n);
	free(buf);
}

static void test_guide_examples(void **state)
{
	static const uint8_t want[] = { 0x08, 0x96, 0x01,
		0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g',
		0x1a, 0x03, 0x08, 0x96, 0x01 };
	struct pbenc e;

	(void)state;
	pbenc_init(&e);
	pbenc_uint(&e, 1, 150);
	pbenc_string(&e, 2, "testing");
	size_t m = pbenc_begin(&e, 3);
	pbenc_uint(&e, 1, 150);
	pbenc_end(&e, m);
	expect(&e, want, sizeof(want));
}

static void test_negative_and_fixed(void **state)
{
	static const uint8_t want[] = { 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
		0x19, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,
		0x22, 0x00 };
	struct pbenc e;

	(void)state;
	pbenc_init(&e);
	pbenc_int(&e, 1, -1);
	pbenc_fixed64(&e, 3, 0x0102030405060708ULL);
	pbenc_end(&e, pbenc_begin(&e, 4)); /* an empty message: key and length 0 */
	expect(&e, want, sizeof(want));
}

/* Nested messages longer than 127 bytes get two-byte lengths; the outer length counts them. */
static void test_long_nested(void **state)
{
	uint8_t want[3 + 3 + 200], body[200];
	struct pbenc e;

	(void)state;
	memset(body, 'x', sizeof(body));
	want[0] = 0x0a, want[1] = 0xcb, want[2] = 0x01; /* field 1, length 203 */
	want[3] = 0x12, want[4] = 0xc8, want[5] = 0x01; /* field 2, length 200 */
	memcpy(want + 6, body, sizeof(body));
	pbenc_init(&e);
	size_t outer = pbenc_begin(&e, 1);
	size_t inner = pbenc_begin(&e, 2);
	pbenc_raw(&e, body, sizeof(body));
	pbenc_end(&e, inner);
	pbenc_end(&e, outer);
	expect(&e, want, sizeof(want));
}

/* A packed repeated field, and an empty encoder still hands out a buffer. */
static void test_packed_and_empty(void **state)
{
	static const uint8_t want[] = { 0x0a, 0x04, 0x03, 0x8e, 0x02, 0x00 };
	struct pbenc e;
	void *buf = NULL;
	size_t len = 1;

	(void)state;
	pbenc_init(&e);
	size_t m = pbenc_begin(&e, 1);
	pbenc_varint(&e, 3);
	pbenc_varint(&e, 270);
	pbenc_varint(&e, 0);
	pbenc_end(&e, m);
	expect(&e, want, sizeof(want));
	assert_int_equal(pbenc_finish(&e, &buf, &len), 0);
	assert_non_null(buf);
	assert_int_equal(len, 0);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_guide_examples),
		cmocka_unit_test(test_negative_and_fixed),
		cmocka_unit_test(test_long_nested),
		cmocka_unit_test(test_packed_and_empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
