/* Scales for showing sample values: nanoseconds as ms or s, bytes as KiB/MiB/GiB, counts as
 * they are; decimals enough for a ten-thousandth of the largest value. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "base/unit.h"

/* Formats v in the scale chosen for unit and max. */
static const char *fmt(const char *unit, int64_t max, int64_t v, const char **name)
{
	static char buf[64];
	struct unit_scale u;

	unit_scale_init(&u, unit, max);
	*name = u.name;
	return unit_format(&u, v, buf, sizeof(buf));
}

static void test_nanoseconds(void **state)
{
	const char *name;

	(void)state;
	/* 6 s in all: ms, 1 decimal (6000 ms / 10^4 = 0.6 ms) */
	assert_string_equal(fmt("nanoseconds", 6000000000LL, 3000000000LL, &name), "3000.0");
	assert_string_equal(name, "ms");
	assert_string_equal(fmt("nanoseconds", 6000000000LL, 1234567, &name), "1.2");
	/* 10 s and up: seconds, 3 decimals (1 ms) */
	assert_string_equal(fmt("nanoseconds", 60000000000LL, 30000000000LL, &name), "30.000");
	assert_string_equal(name, "s");
	assert_string_equal(fmt("nanoseconds", 10000000000LL, 1500000, &name), "0.002");
	/* 5 ms in all: 3 decimals, a microsecond */
	assert_string_equal(fmt("nanoseconds", 5000000, 1000, &name), "0.001");
	assert_string_equal(name, "ms");
	/* 50000 s: no decimals (a ten-thousandth is 5 s) */
	assert_string_equal(fmt("nanoseconds", 50000000000000LL, 2500000000000LL, &name), "2500");
	assert_string_equal(fmt("nanoseconds", 0, 0, &name), "0");
}

static void test_bytes(void **state)
{
	const char *name;

	(void)state;
	assert_string_equal(fmt("bytes", 4096, 1536, &name), "1.500");
	assert_string_equal(name, "KiB");
	assert_string_equal(fmt("bytes", 20 << 20, 5 << 20, &name), "5.000");
	assert_string_equal(name, "MiB");
	assert_string_equal(fmt("bytes", 20LL << 30, 1LL << 29, &name), "0.500");
	assert_string_equal(name, "GiB");
}

static void test_counts_and_others(void **state)
{
	const char *name;
	struct unit_scale u;

	(void)state;
	assert_string_equal(fmt("count", 123456789, 123456789, &name), "123456789");
	assert_string_equal(name, "samples");
	assert_string_equal(fmt("", 10, 7, &name), "7");
	assert_string_equal(name, "samples");
	assert_string_equal(fmt("microseconds", 10, 7, &name), "7"); /* not scaled: as it is */
	assert_string_equal(name, "microseconds");
	unit_scale_init(&u, NULL, 5);
	assert_false(u.scaled);
	assert_string_equal(u.name, "samples");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nanoseconds),
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_counts_and_others),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
