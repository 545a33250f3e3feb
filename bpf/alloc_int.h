/* The Poisson rule of -e alloc's uprobe mode (bpf/alloc.bpf.h) in integers, BPF having no
 * floating point: the exponential draw of the bytes to the next sample and the weight of a
 * sampled allocation, as alloc/alloc_poisson.h computes them in doubles. Pure functions of
 * their arguments; tests/unit/test_alloc_int.c checks them against alloc_poisson.h. */
#ifndef FIRN_BPF_ALLOC_INT_H
#define FIRN_BPF_ALLOC_INT_H

#ifdef __bpf__
#define ALLOC_INT_FN static __always_inline
#else
#include <linux/types.h>
#define ALLOC_INT_FN static inline
#endif

/* 2^(-i/16) and log2(1 + i/64) in Q30 (round(x * 2^30)): the weights' exponentials and the
 * draws' logarithms, in integers (BPF has no floating point). */
static const __u64 exp2_neg16[16] = {
	1073741824, 1028218693, 984625594, 942880699, 902905651, 864625413, 827968132, 792865000,
	759250125, 727060411, 696235434, 666717336, 638450708, 611382493, 585461881, 560640218,
};
static const __u64 log2_1p64[65] = {
	0, 24017256, 47667823, 70962728, 93912511, 116527248, 138816582, 160789745, 182455581,
	203822568, 224898839, 245692198, 266210141, 286459867, 306448299, 326182095, 345667660,
	364911162, 383918542, 402695523, 421247625, 439580170, 457698295, 475606957, 493310944,
	510814882, 528123241, 545240343, 562170370, 578917365, 595485245, 611877800, 628098702,
	644151509, 660039669, 675766525, 691335320, 706749198, 722011213, 737124328, 752091421,
	766915285, 781598637, 796144114, 810554283, 824831638, 838978604, 852997541, 866890747,
	880660455, 894308843, 907838029, 921250079, 934547002, 947730758, 960803257, 973766362,
	986621888, 999371606, 1012017244, 1024560487, 1037002979, 1049346328, 1061592099, 1073741824,
};
#define Q30 (1ULL << 30)
#define LN2_Q28 186065280ULL   /* ln 2 * 2^28 */
#define LN2_Q30 744261118ULL   /* ln 2 * 2^30 */
#define LOG2E_Q28 387270501ULL /* log2 e * 2^28 */

/* The whole part of log2(v) in Q30 for v in [1, 2^32]: the top bit's place (alloc_log2_frac
 * adds the mantissa's). */
ALLOC_INT_FN __u64 alloc_log2_q30(__u64 v)
{
	__u64 k = 0;

	if (v >> 32)
		return 32 * Q30;
	if (v >> 16) { v >>= 16; k += 16; }
	if (v >> 8) { v >>= 8; k += 8; }
	if (v >> 4) { v >>= 4; k += 4; }
	if (v >> 2) { v >>= 2; k += 2; }
	if (v >> 1) k += 1;
	return k * Q30;
}

/* log2 of v's mantissa (v's top bit at place k < 32) in Q30: the 64-step table, linearly
 * interpolated (at most 4.4e-5 under the true value: log2 is concave). */
ALLOC_INT_FN __u64 alloc_log2_frac(__u64 v, __u64 k)
{
	__u64 f = ((v << (32 - k)) & 0xffffffffULL); /* the fraction below the top bit, Q32 */
	__u32 i = (__u32)(f >> 26) & 63;
	__u64 r = f & ((1ULL << 26) - 1);

	return log2_1p64[i] + (((log2_1p64[i + 1] - log2_1p64[i]) * r) >> 26);
}

/* Bytes to the next sample at mean rate: an exponential draw -ln(u) * rate with u = (rnd +
 * 1) / 2^32, rnd a random 32-bit value (mean within 1e-4 of rate); at least 1. */
ALLOC_INT_FN __u64 alloc_int_gap(__u32 rnd, __u64 rate)
{
	__u64 v = (__u64)rnd + 1;
	__u64 lg = alloc_log2_q30(v);

	if (lg < 32 * Q30)
		lg += alloc_log2_frac(v, lg >> 30);
	__u64 nl = ((32 * Q30 - lg) * LN2_Q28) >> 28; /* -ln u, Q30 */
	__u64 gap = ((nl >> 15) * rate) >> 15;
	return gap ? gap : 1;
}

/* 1 - e^(-x) in Q30 for x = xq / 2^30 in [1/8, 32): e^(-x) = 2^(-y), y = x log2 e, as a power
 * of two, the table's 2^(-i/16) and a three-term series of the rest (error under 2e-7). */
ALLOC_INT_FN __u64 alloc_one_minus_exp(__u64 xq)
{
	__u64 y = (xq * LOG2E_Q28) >> 28, k = y >> 30, f = y & (Q30 - 1);
	__u64 t = ((f & ((1ULL << 26) - 1)) * LN2_Q30) >> 30; /* the rest, times ln 2: < 0.044 */
	__u64 t2 = (t * t) >> 30, t3 = (t2 * t) >> 30;
	__u64 et = Q30 - t + t2 / 2 - t3 / 6;
	__u64 e = (exp2_neg16[(f >> 26) & 15] * et) >> 30;

	return Q30 - (k < 63 ? e >> k : 0);
}

/* The weight of a sampled allocation of size bytes at mean rate R: size / (1 - e^(-size/R)),
 * as the preloaded library's alloc_poisson_weight, in integers (relative error under 1e-6):
 * for size < R/8 the series R + S/2 + S^2/(12R); from 32 R on, size itself. */
ALLOC_INT_FN __u64 alloc_int_weight(__u64 size, __u64 rate)
{
	__u64 r = rate, sh = 0;

	if (r <= 1 || !size || size >= 32 * r)
		return size;
	if (size * 8 < r)
		return r + size / 2 + ((size * ((size << 24) / r)) / 12 >> 24);
	if (size >> 33) /* an allocation of 8 GiB or more: fewer bits of each */
		sh = 12;
	__u64 p = alloc_one_minus_exp(((size >> sh) << 30) / (r >> sh));
	return p ? (size / p) * Q30 + ((size % p) * Q30 + p / 2) / p : size;
}

#endif
