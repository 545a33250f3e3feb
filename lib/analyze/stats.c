/* The standard normal distribution (from libm's erfc), its quantile (Acklam's rational
 * approximation refined by one Halley step), the two-proportion z test, and score-based
 * confidence bounds of a proportion, of a difference and of a ratio of two proportions.
 *
 * References for the bounds:
 *   E. B. Wilson, Probable inference, the law of succession, and statistical inference,
 *     JASA 22 (1927) 209-212.
 *   R. G. Newcombe, Interval estimation for the difference between independent proportions:
 *     comparison of eleven methods, Statistics in Medicine 17 (1998) 873-890 (method 10, the
 *     hybrid score interval: coverage close to nominal down to a few events).
 *   G. Y. Zou, A. Donner, Construction of confidence limits about effect measures: a general
 *     approach (MOVER), Statistics in Medicine 27 (2008) 1693-1702.
 *   A. Donner, G. Y. Zou, Closed-form confidence intervals for functions of the normal mean and
 *     standard deviation (MOVER-R), Statistical Methods in Medical Research 21 (2012) 347-359.
 *   M. W. Fagerland, S. Lydersen, P. Laake, Recommended confidence intervals for two independent
 *     binomial proportions, Statistical Methods in Medical Research 24 (2015) 224-254 (they
 *     recommend Newcombe's hybrid score interval for the difference and MOVER-R Wilson for the
 *     ratio among the closed-form methods). */
#include "analyze/stats.h"

#include <math.h>
#include <stdbool.h>

double stats_norm_cdf(double z)
{
	return 0.5 * erfc(-z / M_SQRT2);
}

double stats_norm_sf(double z)
{
	return 0.5 * erfc(z / M_SQRT2);
}

/* Acklam's approximation of the quantile for 0 < p <= 0.5 (relative error about 1e-9). */
static double quantile_rough(double p)
{
	static const double a[] = { -3.969683028665376e+01, 2.209460984245205e+02,
				    -2.759285104469687e+02, 1.383577518672690e+02,
				    -3.066479806614716e+01, 2.506628277459239e+00 };
	static const double b[] = { -5.447609879822406e+01, 1.615858368580409e+02,
				    -1.556989798598866e+02, 6.680131188771972e+01,
				    -1.328068155288572e+01 };
	static const double c[] = { -7.784894002430293e-03, -3.223964580411365e-01,
				    -2.400758277161838e+00, -2.549732539343734e+00,
				    4.374664141464968e+00, 2.938163982698783e+00 };
	static const double d[] = { 7.784695709041462e-03, 3.224671290700398e-01,
				    2.445134137142996e+00, 3.754408661907416e+00 };

	if (p < 0.02425) {
		double q = sqrt(-2 * log(p));
		return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		       ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	}
	double q = p - 0.5, r = q * q;
	return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
	       (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

double stats_norm_quantile(double p)
{
	if (isnan(p) || p < 0 || p > 1)
		return NAN;
	if (p == 0)
		return -INFINITY;
	if (p == 1)
		return INFINITY;
	if (p > 0.5)
		return -stats_norm_quantile(1 - p); /* 1 - p is exact here */
	double x = quantile_rough(p);
	double e = stats_norm_cdf(x) - p;
	double u = e * sqrt(2 * M_PI) * exp(x * x / 2);
	return x - u / (1 + x * u / 2);
}

double stats_z2prop(double p1, double n1, double p2, double n2)
{
	if (!(n1 > 0) || !(n2 > 0))
		return NAN;
	double pbar = (p1 * n1 + p2 * n2) / (n1 + n2);
	double var = pbar * (1 - pbar) * (1 / n1 + 1 / n2);
	if (!(var > 0))
		return 0;
	return (p2 - p1) / sqrt(var);
}

/* The test's z for a change d from p in direction dir. */
static double z_of_change(double p, double n1, double n2, int dir, double d)
{
	return stats_z2prop(p, n1, p + dir * d, n2) * dir;
}

double stats_min_detectable(double p, double n1, double n2, double z, int dir)
{
	double hi = dir > 0 ? 1 - p : p, lo = 0;

	if (!(n1 > 0) || !(n2 > 0) || !(hi > 0) || !(z_of_change(p, n1, n2, dir, hi) >= z))
		return NAN;
	if (z <= 0)
		return 0;
	/* z grows with d: bisect to a relative precision far below what is printed */
	for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
		double mid = (lo + hi) / 2;
		if (z_of_change(p, n1, n2, dir, mid) >= z)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

struct stats_interval stats_wilson(double k, double n, double z)
{
	if (!(n > 0))
		return (struct stats_interval){ NAN, NAN };
	k = k < 0 ? 0 : k > n ? n : k;
	double z2 = z * z, mid = (k + z2 / 2) / (n + z2);
	double half = z / (n + z2) * sqrt(k * (n - k) / n + z2 / 4);
	double lo = k == 0 ? 0 : mid - half, hi = k == n ? 1 : mid + half;

	return (struct stats_interval){ lo < 0 ? 0 : lo, hi > 1 ? 1 : hi };
}

/* Both Wilson intervals of a MOVER computation, with the point estimates. */
struct mover {
	double p1, p2;
	struct stats_interval w1, w2;
};

/* Fills m for k1 of n1 and k2 of n2 at z; false when a side has no trials. */
static bool mover_init(struct mover *m, double k1, double n1, double k2, double n2, double z)
{
	if (!(n1 > 0) || !(n2 > 0))
		return false;
	m->w1 = stats_wilson(k1, n1, z);
	m->w2 = stats_wilson(k2, n2, z);
	m->p1 = fmin(fmax(k1, 0), n1) / n1;
	m->p2 = fmin(fmax(k2, 0), n2) / n2;
	return true;
}

/* The MOVER lower (upper when hi) bound of p2 - c p1: the estimate less (plus) the root of the
 * sum of the squared distances to the bounds of each term in that direction. */
static double mover_bound(const struct mover *m, double c, bool hi)
{
	double d = m->p2 - c * m->p1;

	if (hi)
		return d + hypot(m->w2.hi - m->p2, c * (m->p1 - m->w1.lo));
	return d - hypot(m->p2 - m->w2.lo, c * (m->w1.hi - m->p1));
}

struct stats_interval stats_mover_diff(double k1, double n1, double k2, double n2, double c,
				       double z)
{
	struct mover m;

	if (!mover_init(&m, k1, n1, k2, n2, z))
		return (struct stats_interval){ NAN, NAN };
	return (struct stats_interval){ mover_bound(&m, c, false), mover_bound(&m, c, true) };
}

/* The c >= 0 where the MOVER bound of p2 - c p1 crosses 0 (both bounds fall as c grows:
 * d/dc <= -p1 - ... for the lower one, <= -(Wilson lower of p1) for the upper one); INFINITY
 * when it stays positive. */
static double ratio_root(const struct mover *m, bool hi)
{
	double lo = 0, up = 1;

	if (!(mover_bound(m, 0, hi) > 0))
		return 0;
	while (mover_bound(m, up, hi) > 0) {
		if (up > 1e300)
			return INFINITY;
		lo = up;
		up *= 2;
	}
	for (int i = 0; i < 200 && up - lo > 1e-13 * up; i++) {
		double mid = lo + (up - lo) / 2;
		if (mover_bound(m, mid, hi) > 0)
			lo = mid;
		else
			up = mid;
	}
	return lo + (up - lo) / 2;
}

struct stats_interval stats_mover_ratio(double k1, double n1, double k2, double n2, double z)
{
	struct mover m;

	if (!mover_init(&m, k1, n1, k2, n2, z))
		return (struct stats_interval){ NAN, NAN };
	if (m.p1 == 0)
		return (struct stats_interval){ ratio_root(&m, false), INFINITY };
	return (struct stats_interval){ ratio_root(&m, false), ratio_root(&m, true) };
}
