/* The Poisson rule of libfirn-alloc.so (alloc/firn_alloc.c), as pure functions: bytes are
 * sampled as points of a Poisson process of mean interval R bytes, so an allocation of S bytes
 * is sampled with probability 1 - e^(-S/R) and, when it is, counts S / (1 - e^(-S/R)) bytes:
 * the totals are unbiased estimates of the true totals. Header-only: the library and
 * tests/unit/test_alloc_poisson.c include it. No allocation, no global state. */
#ifndef FIRN_ALLOC_POISSON_H
#define FIRN_ALLOC_POISSON_H

#include <math.h>
#include <stdint.h>

#define ALLOC_RATE_DEFAULT 524288ULL /* --alloc-rate's default: 512 KiB */

/* The weight of a sampled allocation of size bytes at mean rate: size / (1 - e^(-size/rate)),
 * rounded; at least size (a rate of 0 or 1 samples every byte: the weight is size). */
static inline uint64_t alloc_poisson_weight(uint64_t size, uint64_t rate)
{
	if (rate <= 1 || !size)
		return size;
	double p = -expm1(-(double)size / (double)rate); /* 1 - e^(-S/R), exact for small S/R */
	double w = (double)size / p;
	return w >= 1.8e19 ? UINT64_MAX : (uint64_t)(w + 0.5);
}

/* The next state of a xorshift64* generator (state must not be 0); returns a 64-bit draw. */
static inline uint64_t alloc_poisson_rand(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* Bytes to the next sample: an exponential draw of mean rate (at least 1). */
static inline int64_t alloc_poisson_next(uint64_t *state, uint64_t rate)
{
	if (rate <= 1)
		return 1;
	/* u in (0, 1]: 53 random bits, never 0 */
	double u = ((alloc_poisson_rand(state) >> 11) + 1) * (1.0 / 9007199254740992.0);
	double d = -log(u) * (double)rate;
	return d < 1 ? 1 : d > 4e18 ? (int64_t)4e18 : (int64_t)d;
}

#endif
