/* Unit tests for lib/stats: the normal distribution, its quantile, the two-proportion z test and
 * the smallest detectable change. Reference values computed with mpmath at 40 digits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "stats.h"

/* Asserts |got - want| <= rel * |want| (or <= rel when want is 0). */
static void assert_close(double got, double want, double rel)
{
	double tol = want ? rel * fabs(want) : rel;

	if (!(fabs(got - want) <= tol))
		fail_msg("got %.17g, want %.17g (rel %g)", got, want, rel);
}

static void test_cdf(void **state)
{
	(void)state;
	assert_close(stats_norm_cdf(0), 0.5, 1e-15);
	assert_close(stats_norm_cdf(1.959963984540054), 0.975, 1e-14);
	assert_close(stats_norm_cdf(-1), 0.15865525393145707, 1e-14);
	assert_close(stats_norm_sf(1), 0.15865525393145707, 1e-14);
	/* the upper tail keeps its precision where 1 - cdf would be 0 */
	assert_close(stats_norm_sf(10), 7.619853024160526e-24, 1e-12);
	assert_close(stats_norm_sf(-10), 1.0, 1e-15);
}

static void test_quantile(void **state)
{
	(void)state;
	assert_close(stats_norm_quantile(0.5), 0, 1e-15);
	assert_close(stats_norm_quantile(0.975), 1.959963984540054, 1e-13);
	assert_close(stats_norm_quantile(0.99), 2.3263478740408408, 1e-13);
	assert_close(stats_norm_quantile(0.01), -2.3263478740408408, 1e-13);
	assert_close(stats_norm_quantile(0.02), -2.0537489106318225, 1e-13); /* near the seam */
	assert_close(stats_norm_quantile(0.03), -1.8807936081512509, 1e-13);
	assert_close(stats_norm_quantile(1e-10), -6.3613409024040557, 1e-13);
	assert_close(stats_norm_quantile(1e-300), -37.047096299361199, 1e-12);
	assert_true(isinf(stats_norm_quantile(0)) && stats_norm_quantile(0) < 0);
	assert_true(isinf(stats_norm_quantile(1)) && stats_norm_quantile(1) > 0);
	assert_true(isnan(stats_norm_quantile(-0.1)));
	assert_true(isnan(stats_norm_quantile(1.5)));
	assert_true(isnan(stats_norm_quantile(NAN)));
}

/* cdf(quantile(p)) gives p back over the whole range, both tails included. */
static void test_quantile_round_trip(void **state)
{
	(void)state;
	for (double e = -15; e <= -0.31; e += 0.01) {
		double p = pow(10, e);
		assert_close(stats_norm_cdf(stats_norm_quantile(p)), p, 1e-12);
		/* the upper half mirrors the lower half exactly */
		assert_true(stats_norm_quantile(1 - p) == -stats_norm_quantile(1 - (1 - p)));
	}
}

static void test_z2prop(void **state)
{
	(void)state;
	/* 20 of 100 vs 40 of 100: pooled 0.3, variance 0.21 * 0.02 */
	assert_close(stats_z2prop(0.2, 100, 0.4, 100), 0.2 / sqrt(0.0042), 1e-14);
	assert_close(stats_z2prop(0.4, 100, 0.2, 100), -0.2 / sqrt(0.0042), 1e-14);
	/* unequal sizes: 50 of 1000 vs 30 of 200 */
	double pbar = 80.0 / 1200;
	assert_close(stats_z2prop(0.05, 1000, 0.15, 200),
		     0.1 / sqrt(pbar * (1 - pbar) * (1.0 / 1000 + 1.0 / 200)), 1e-14);
	assert_true(stats_z2prop(0, 100, 0, 50) == 0);
	assert_true(stats_z2prop(1, 100, 1, 50) == 0);
	assert_true(isnan(stats_z2prop(0.1, 0, 0.2, 10)));
	assert_true(isnan(stats_z2prop(0.1, 10, 0.2, -1)));
}

/* The smallest detectable change reaches the critical value, and anything smaller does not. */
static void test_min_detectable(void **state)
{
	const double z = 2.3263478740408408;
	(void)state;
	for (double p = 0; p <= 0.9; p += 0.1)
		for (int dir = -1; dir <= 1; dir += 2) {
			double d = stats_min_detectable(p, 990, 990, z, dir);
			if (dir < 0 && p < 0.05) {
				assert_true(isnan(d)); /* nothing to shrink from */
				continue;
			}
			assert_false(isnan(d));
			assert_close(stats_z2prop(p, 990, p + dir * d, 990) * dir, z, 1e-9);
			assert_true(stats_z2prop(p, 990, p + dir * d * 0.999, 990) * dir < z);
		}
	/* 99 Hz over 10 s, 990 samples a side, one function at 20 %: about 4.3 pp */
	assert_close(stats_min_detectable(0.2, 990, 990, z, 1), 0.0431, 0.01);
	/* 10 samples a side cannot show any change at z = 10 */
	assert_true(isnan(stats_min_detectable(0.5, 10, 10, 10, 1)));
	assert_true(isnan(stats_min_detectable(0.5, 0, 10, 2, 1)));
	assert_true(stats_min_detectable(0.5, 10, 10, 0, 1) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cdf),
		cmocka_unit_test(test_quantile),
		cmocka_unit_test(test_quantile_round_trip),
		cmocka_unit_test(test_z2prop),
		cmocka_unit_test(test_min_detectable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
