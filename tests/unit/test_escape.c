/* Unit tests for lib/base/escape: which characters a terminal would obey (C0, DEL, UTF-8 C1) and how
 * they are written ("\x1b"), what stays as it is (printable ASCII, UTF-8 text, a backslash), and
 * escape_text's snprintf-like truncation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "base/escape.h"

/* Escapes s whole into a buffer large enough; asserts the length and the text. */
static void expect(const char *s, size_t n, const char *want)
{
	char buf[256];

	assert_int_equal(escape_text(buf, sizeof(buf), s, n), strlen(want));
	assert_string_equal(buf, want);
}

/* One character at a time: its escape and the bytes it takes. */
static void test_char(void **state)
{
	char out[ESCAPE_MAX];
	size_t used;

	assert_int_equal(escape_char("\x1b[", 2, out, &used), 4);
	assert_memory_equal(out, "\\x1b", 4);
	assert_int_equal(used, 1);
	assert_int_equal(escape_char("\xc2\x9b", 2, out, &used), 8);
	assert_memory_equal(out, "\\xc2\\x9b", 8);
	assert_int_equal(used, 2);
	assert_int_equal(escape_char("\xc2", 1, out, &used), 0); /* cut off: not a C1 control */
	assert_int_equal(escape_char("\xc2\xa0", 2, out, &used), 0);
	assert_int_equal(escape_char("\x7f", 1, out, &used), 4);
	assert_memory_equal(out, "\\x7f", 4);
	assert_int_equal(escape_char("a", 1, out, &used), 0);
	assert_int_equal(used, 1);
}

/* Terminal commands become visible; text, UTF-8 and backslashes stay. */
static void test_text(void **state)
{
	expect("\x1b]0;pwned\a", 10, "\\x1b]0;pwned\\x07");
	expect("a\tb\nc\rd", 7, "a\\x09b\\x0ac\\x0dd");
	expect("x\0y", 3, "x\\x00y");
	expect("\xc2\x80\xc2\x9f\xc2\xa0", 6, "\\xc2\\x80\\xc2\\x9f\xc2\xa0");
	expect("caf\xc3\xa9 \xe2\x82\xac std::vector<int> C:\\dir", 33,
	       "caf\xc3\xa9 \xe2\x82\xac std::vector<int> C:\\dir");
	expect("", 0, "");
}

/* Like snprintf: the full length whatever the room, a NUL within cap, nothing written at 0. */
static void test_truncation(void **state)
{
	char buf[6] = "zzzzz";

	assert_int_equal(escape_text(NULL, 0, "\x1b\x1b", 2), 8);
	assert_int_equal(escape_text(buf, sizeof(buf), "\x1b\x1b", 2), 8);
	assert_string_equal(buf, "\\x1b\\");
	assert_int_equal(escape_text(buf, 1, "ab", 2), 2);
	assert_string_equal(buf, "");
}

/* Bidirectional controls (they reorder what follows on screen) become \uXXXX; their neighbours,
 * other three-byte characters and cut-off sequences stay. */
static void test_bidi(void **state)
{
	char out[ESCAPE_MAX];
	size_t used;

	assert_int_equal(escape_char("\xe2\x80\xae", 3, out, &used), 6);
	assert_memory_equal(out, "\\u202e", 6);
	assert_int_equal(used, 3);
	assert_int_equal(escape_char("\xd8\x9c", 2, out, &used), 6);
	assert_memory_equal(out, "\\u061c", 6);
	assert_int_equal(used, 2);
	assert_int_equal(escape_char("\xe2\x80\xae", 2, out, &used), 0); /* cut off */
	expect("x\xe2\x80\xaegnp.exe", 11, "x\\u202egnp.exe");
	expect("\xe2\x80\x8e\xe2\x80\x8f\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad", 18,
	       "\\u200e\\u200f\\u202a\\u202b\\u202c\\u202d");
	expect("\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9", 12,
	       "\\u2066\\u2067\\u2068\\u2069");
	/* neighbours that are text: U+200D (ZWJ), U+202F, U+2065 (unassigned), U+2070, U+061B */
	expect("\xe2\x80\x8d\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xb0\xd8\x9b", 14,
	       "\xe2\x80\x8d\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xb0\xd8\x9b");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_char),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_bidi),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
