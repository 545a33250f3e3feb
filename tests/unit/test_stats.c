/* Unit tests for lib/analyze/stats: the normal distribution, its quantile, the two-proportion z test,
 * the smallest detectable change, and the Wilson, Newcombe and MOVER-R bounds (against published
 * tables, a closed form, and their exact coverage at 100 samples a side). Reference values of
 * the normal distribution computed with mpmath at 40 digits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "analyze/stats.h"

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

static const double Z95 = 1.959963984540054, Z99 = 2.3263478740408408;

/* Wilson's interval against Newcombe (1998, single proportion), Table I, method 3. */
static void test_wilson(void **state)
{
	static const double t[][4] = {
		{ 81, 263, 0.2553, 0.3662 }, { 15, 148, 0.0624, 0.1605 }, { 0, 20, 0, 0.1611 },
		{ 1, 29, 0.0061, 0.1718 },   { 29, 29, 0.8830, 1 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct stats_interval w = stats_wilson(t[i][0], t[i][1], Z95);
		assert_close(w.lo, t[i][2], 6e-5 / (t[i][2] ? t[i][2] : 1));
		assert_close(w.hi, t[i][3], 6e-5 / t[i][3]);
	}
	assert_true(stats_wilson(0, 20, Z95).lo == 0 && stats_wilson(20, 20, Z95).hi == 1);
	assert_true(isnan(stats_wilson(1, 0, Z95).lo));
}

/* Newcombe's hybrid score interval of p2 - p1 (MOVER with c = 1) against Newcombe (1998,
 * difference), Table II, method 10: his theta = pi1 - pi2 is our p2 - p1 with the sides swapped. */
static void test_newcombe(void **state)
{
	static const double t[][6] = {
		{ 48, 80, 56, 70, 0.0524, 0.3339 }, { 3, 10, 9, 10, 0.1705, 0.8090 },
		{ 0, 29, 5, 56, -0.0381, 0.1926 },  { 0, 20, 0, 10, -0.1611, 0.2775 },
		{ 0, 10, 0, 10, -0.2775, 0.2775 },  { 0, 20, 10, 10, 0.6791, 1 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct stats_interval d = stats_mover_diff(t[i][0], t[i][1], t[i][2], t[i][3], 1, Z95);
		assert_close(d.lo, t[i][4], 6e-5 / fabs(t[i][4]));
		assert_close(d.hi, t[i][5], 6e-5 / t[i][5]);
	}
	/* p2 - 1.5 p1 for 20 % -> 30 %: centered on 0 */
	struct stats_interval d = stats_mover_diff(2000, 10000, 3000, 10000, 1.5, Z99);
	assert_true(d.lo < 0 && d.hi > 0);
	assert_true(isnan(stats_mover_diff(1, 0, 1, 10, 1, Z95).hi));
}

/* MOVER-R Wilson bounds of p2 / p1 against Donner and Zou's closed form (2012, eq. 6),
 * computed independently in double precision. */
static void test_mover_ratio(void **state)
{
	static const double t[][6] = {
		{ 48, 80, 56, 70, 1.078295, 1.662920 },   { 3, 10, 9, 10, 1.322396, 8.368906 },
		{ 100, 1000, 140, 1000, 1.052317, 1.862216 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		double z = i < 2 ? Z95 : Z99;
		struct stats_interval r = stats_mover_ratio(t[i][0], t[i][1], t[i][2], t[i][3], z);
		assert_close(r.lo, t[i][4], 1e-6);
		assert_close(r.hi, t[i][5], 1e-6);
		/* the bounds are where the MOVER bounds of p2 - c p1 reach 0 */
		assert_true(fabs(stats_mover_diff(t[i][0], t[i][1], t[i][2], t[i][3], r.lo, z).lo) < 1e-9);
		assert_true(fabs(stats_mover_diff(t[i][0], t[i][1], t[i][2], t[i][3], r.hi, z).hi) < 1e-9);
	}
	struct stats_interval r = stats_mover_ratio(0, 100, 10, 100, Z99);
	assert_true(r.lo > 0 && isinf(r.hi));
	r = stats_mover_ratio(10, 100, 0, 100, Z99);
	assert_true(r.lo == 0 && r.hi > 0 && r.hi < 1);
	assert_true(isnan(stats_mover_ratio(1, 10, 1, 0, Z99).lo));
}

/* Binomial probabilities of 0..n successes in n trials at p. */
static void binomial(double *pmf, int n, double p)
{
	for (int k = 0; k <= n; k++)
		pmf[k] = exp(lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1) +
			     (k ? k * log(p) : 0) + (n - k ? (n - k) * log1p(-p) : 0));
}

/* The exact probability that Newcombe's lower (upper) bound at z lies above (below) the true
 * p2 - p1 for n samples a side: each one-sided bound's error rate, which the gate promises to
 * keep near 1 - Phi(z). */
static void miss_rates(int n, double p1, double p2, double z, double miss[2])
{
	double a[201], b[201];

	assert_true(n <= 200);
	binomial(a, n, p1);
	binomial(b, n, p2);
	miss[0] = miss[1] = 0;
	for (int k1 = 0; k1 <= n; k1++)
		for (int k2 = 0; k2 <= n; k2++) {
			struct stats_interval d = stats_mover_diff(k1, n, k2, n, 1, z);
			miss[0] += d.lo > p2 - p1 ? a[k1] * b[k2] : 0;
			miss[1] += d.hi < p2 - p1 ? a[k1] * b[k2] : 0;
		}
}

/* At 100 samples a side each bound at z = 2.33 errs about 1 % of the time (at most 1.15 % here:
 * the interval's coverage is close to nominal at small counts, as Newcombe found). */
static void test_newcombe_coverage(void **state)
{
	static const double p[][2] = { { 0.05, 0.05 }, { 0.2, 0.2 }, { 0.5, 0.5 }, { 0.1, 0.2 },
				       { 0.3, 0.1 },   { 0.4, 0.24 }, { 0.02, 0.1 } };
	(void)state;
	for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++) {
		double miss[2];
		miss_rates(100, p[i][0], p[i][1], Z99, miss);
		if (miss[0] > 0.0125 || miss[1] > 0.0125)
			fail_msg("%g -> %g: bounds miss %g and %g", p[i][0], p[i][1], miss[0], miss[1]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cdf),
		cmocka_unit_test(test_quantile),
		cmocka_unit_test(test_quantile_round_trip),
		cmocka_unit_test(test_z2prop),
		cmocka_unit_test(test_min_detectable),
		cmocka_unit_test(test_wilson),
		cmocka_unit_test(test_newcombe),
		cmocka_unit_test(test_mover_ratio),
		cmocka_unit_test(test_newcombe_coverage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
