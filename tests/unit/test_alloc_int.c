/* Unit tests for bpf/alloc_int.h, the Poisson rule of -e alloc's uprobe mode in integers:
 * its weights against alloc/alloc_poisson.h's doubles over sizes from 1 byte to 64 rates, and
 * its draws against -ln(u) * rate over a grid of the random values, whose mean is the rate. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "../../alloc/alloc_poisson.h"
#include "../../bpf/alloc_int.h"

/* Each weight within 1e-6 of size / (1 - e^(-size/rate)) (and 1 byte), for sizes spread over
 * every regime (the series below R/8, the tables up to 32 R, the size itself beyond). */
static void test_weight(void **state)
{
	static const uint64_t rates[] = { 2, 4096, 524288, 1ULL << 30, 1ULL << 40 };
	(void)state;

	for (size_t r = 0; r < sizeof(rates) / sizeof(*rates); r++) {
		for (double s = 1; s < 64.0 * (double)rates[r]; s = s * 1.07 + 1) {
			uint64_t size = (uint64_t)s, rate = rates[r];
			double want = (double)alloc_poisson_weight(size, rate);
			double got = (double)alloc_int_weight(size, rate);
			if (fabs(got - want) > 1e-6 * want + 1)
				fail_msg("weight of %llu at %llu: %.0f, want %.0f",
					 (unsigned long long)size, (unsigned long long)rate, got, want);
		}
	}
	assert_int_equal(alloc_int_weight(16, 524288), 524296); /* R + S/2 */
	assert_int_equal(alloc_int_weight(4096, 4096), 6480);   /* 4096 / (1 - 1/e) */
	assert_int_equal(alloc_int_weight(0, 4096), 0);
	assert_int_equal(alloc_int_weight(100, 1), 100);
}

/* Each draw within 1e-4 x rate (+1 byte) of -ln(u) x rate, and their mean over an even grid
 * of the random values (the integral of the exponential's quantiles) within 1e-4 of rate. */
static void test_gap(void **state)
{
	const uint64_t rate = 524288;
	const int n = 1 << 20;
	double sum = 0;
	(void)state;

	for (int i = 0; i < n; i++) {
		uint32_t rnd = ((uint32_t)i << 12) | 0x800;
		double u = ((double)rnd + 1) / 4294967296.0, want = -log(u) * (double)rate;
		double got = (double)alloc_int_gap(rnd, rate);
		if (fabs(got - want) > 1e-4 * (double)rate + 1)
			fail_msg("gap for %u: %.0f, want %.0f", rnd, got, want);
		sum += got;
	}
	double mean = sum / n;
	if (fabs(mean - (double)rate) > 1e-4 * (double)rate)
		fail_msg("mean gap %.1f, want %llu", mean, (unsigned long long)rate);
	assert_int_equal(alloc_int_gap(0xffffffffu, rate), 1); /* u = 1: at least a byte */
	assert_true(alloc_int_gap(0, rate) > 22 * rate);       /* u = 2^-32: ln 2^32 = 22.2 */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_weight),
		cmocka_unit_test(test_gap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
