/* A 64-bit finalizer (murmur3's fmix64), for open-addressing tables keyed by integers. */
#ifndef FIRN_HASH_H
#define FIRN_HASH_H

#include <stdint.h>

static inline uint64_t hash_mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

#endif
