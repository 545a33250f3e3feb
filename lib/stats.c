/* The standard normal distribution (from libm's erfc), its quantile (Acklam's rational
 * approximation refined by one Halley step) and the two-proportion z test. */
#include "stats.h"

#include <math.h>

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
