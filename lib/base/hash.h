/* Hashes for the tables of lib/base/hashtab.h: a 64-bit finalizer for integer keys, FNV-1a for
 * byte strings. */
#ifndef FIRN_HASH_H
#define FIRN_HASH_H

#include <stddef.h>
#include <stdint.h>

/* The FNV-1a offset basis: the usual seed of hash_bytes. */
#define HASH_SEED 0xcbf29ce484222325ULL

/* murmur3's fmix64: mixes an integer key (or a hash_bytes result) for a table index. */
static inline uint64_t hash_mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

/* FNV-1a over len bytes of data, from h (HASH_SEED, or an earlier result to chain): weak in
 * the low bits, so mix it before it picks a slot. */
static inline uint64_t hash_bytes(uint64_t h, const void *data, size_t len)
{
	const unsigned char *b = data;

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

#endif
