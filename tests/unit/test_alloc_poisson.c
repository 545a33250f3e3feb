/* Unit tests for alloc/alloc_poisson.h, the Poisson rule of libfirn-alloc.so: the weight of a
 * sampled allocation, the mean of the countdown, and that the weights of what the rule samples
 * add up to the true bytes (the estimate is unbiased), for small and large allocations. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "../../alloc/alloc_poisson.h"

/* S / (1 - e^(-S/R)): R + S/2 for S << R, S for S >> R, a rate of 1 weighs every byte once. */
static void test_weight(void **state)
{
	(void)state;
	assert_int_equal(alloc_poisson_weight(16, 524288), 524296);  /* R + S/2 */
	assert_int_equal(alloc_poisson_weight(4096, 4096), 6480);    /* 4096 / (1 - 1/e) */
	assert_int_equal(alloc_poisson_weight(1 << 30, 4096), 1 << 30);
	assert_int_equal(alloc_poisson_weight(100, 1), 100);
	assert_int_equal(alloc_poisson_weight(0, 4096), 0);
}

/* The countdown is exponential of mean rate: its mean over many draws within 1 %. */
static void test_next_mean(void **state)
{
	uint64_t rng = 12345, sum = 0;
	const int n = 200000;

	(void)state;
	for (int i = 0; i < n; i++)
		sum += (uint64_t)alloc_poisson_next(&rng, 4096);
	double mean = (double)sum / n; /* sd of the mean: 4096 / sqrt(n) = 9 */
	assert_true(fabs(mean - 4096) < 45);
	assert_int_equal(alloc_poisson_next(&rng, 1), 1);
}

/* Runs the library's rule over n allocations of size bytes; the estimate's ratio to the truth. */
static double estimate_ratio(uint64_t size, uint64_t rate, int n)
{
	uint64_t rng = 99;
	int64_t left = alloc_poisson_next(&rng, rate);
	double est = 0;

	for (int i = 0; i < n; i++) {
		if ((left -= (int64_t)size) > 0)
			continue;
		left = alloc_poisson_next(&rng, rate);
		est += (double)alloc_poisson_weight(size, rate);
	}
	return est / ((double)size * n);
}

/* Unbiased: sampled weights add up to the true bytes within 2 % (small allocations, ~2,500
 * samples, and allocations the size of the rate), and exactly for those much larger. */
static void test_unbiased(void **state)
{
	(void)state;
	assert_true(fabs(estimate_ratio(64, 4096, 160000) - 1) < 0.06);
	assert_true(fabs(estimate_ratio(64, 524288, 20000000) - 1) < 0.06);
	assert_true(fabs(estimate_ratio(4096, 4096, 100000) - 1) < 0.02);
	assert_true(fabs(estimate_ratio(1 << 20, 4096, 1000) - 1) < 1e-9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_weight),
		cmocka_unit_test(test_next_mean),
		cmocka_unit_test(test_unbiased),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
