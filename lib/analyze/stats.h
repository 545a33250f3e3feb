/* Small statistics for firn diff's significance test and gate: the standard normal distribution,
 * the two-proportion z test with pooled variance, and confidence bounds of the difference and of
 * the ratio of two binomial proportions. Pure functions of their arguments. */
#ifndef FIRN_STATS_H
#define FIRN_STATS_H

/* Phi(z), the standard normal distribution function. */
double stats_norm_cdf(double z);

/* 1 - Phi(z), accurate far into the upper tail (stats_norm_sf(10) is about 7.6e-24). */
double stats_norm_sf(double z);

/* The z with Phi(z) = p, for 0 < p < 1 (relative error below 1e-13); -INFINITY for p = 0,
 * INFINITY for p = 1, NaN outside [0, 1]. */
double stats_norm_quantile(double p);

/* z statistic of the difference p2 - p1 of two proportions, p1 observed over n1 trials and p2
 * over n2, with the pooled variance pbar (1 - pbar) (1/n1 + 1/n2), where pbar is the share over
 * both: (p1 n1 + p2 n2) / (n1 + n2). Positive when p2 > p1. 0 when the pooled variance is 0
 * (both shares 0 or both 1); NaN when n1 or n2 is not positive. */
double stats_z2prop(double p1, double n1, double p2, double n2);

/* The smallest change d > 0 for which a share p over n1 trials moving to p + dir * d over n2
 * trials reaches stats_z2prop(...) * dir >= z: the smallest change in the direction dir (+1 or
 * -1) that the test finds significant at critical value z. NaN when not even the largest
 * possible change (to 1, or to 0) does, or when n1 or n2 is not positive. */
double stats_min_detectable(double p, double n1, double n2, double z, int dir);

/* Lower and upper confidence bounds. */
struct stats_interval {
	double lo, hi;
};

/* Wilson's score interval of a proportion, k successes of n trials, at critical value z > 0
 * (each bound a one-sided bound at level Phi(z)); k is clamped to [0, n]. {NaN, NaN} when n is
 * not positive. */
struct stats_interval stats_wilson(double k, double n, double z);

/* Bounds of p2 - c p1 (c >= 0) for p1 = k1 / n1 and p2 = k2 / n2, by the method of variance
 * estimates recovery (MOVER) from the Wilson intervals of both at z. For c = 1 this is Newcombe's
 * hybrid score interval of a difference. {NaN, NaN} when n1 or n2 is not positive. */
struct stats_interval stats_mover_diff(double k1, double n1, double k2, double n2, double c,
				       double z);

/* Bounds of the ratio p2 / p1 by MOVER-R from the Wilson intervals at z: the c where the MOVER
 * bounds of p2 - c p1 reach 0. lo is 0 when k2 is 0; hi is INFINITY when k1 is 0. {NaN, NaN}
 * when n1 or n2 is not positive. */
struct stats_interval stats_mover_ratio(double k1, double n1, double k2, double n2, double z);

#endif
