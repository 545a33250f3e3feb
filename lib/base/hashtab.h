/* An open-addressing hash table of entry ids: the caller keeps the entries (in an array, say) and
 * supplies each key's hash and an equality test; the table maps a key to the id of its entry.
 * Linear probing; it doubles before it gets more than half full. */
#ifndef FIRN_HASHTAB_H
#define FIRN_HASHTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hash.h"

/* A zeroed struct hashtab is an empty table. It owns only slots; the entries are the caller's. */
struct hashtab {
	uint64_t *slots; /* per slot: 0 (empty), or the entry's 32-bit hash << 32 | (id + 1) */
	size_t nslots;   /* 0 or a power of two */
	size_t n;        /* entries */
};

/* Whether entry id's key equals key (key is what the caller passed to hashtab_find). */
typedef bool (*hashtab_eq_fn)(const void *ctx, uint32_t id, const void *key);

/* The 32 bits of a caller's 64-bit hash the table keeps: they place and pre-filter entries, so
 * the caller's hash must be well mixed (hash.h's hash_mix64 mixes an integer). */
static inline uint32_t hashtab_hash32(uint64_t hash)
{
	return (uint32_t)(hash >> 32) ^ (uint32_t)hash;
}

/* The id of the entry whose key equals key (hash is key's hash), or -1 when none does. eq is only
 * called for entries whose hash matches; a static eq is inlined. */
static inline int64_t hashtab_find(const struct hashtab *t, uint64_t hash, hashtab_eq_fn eq,
				   const void *ctx, const void *key)
{
	if (!t->nslots)
		return -1;
	uint32_t h = hashtab_hash32(hash);
	size_t mask = t->nslots - 1;

	for (size_t i = h & mask; t->slots[i]; i = (i + 1) & mask) {
		uint64_t s = t->slots[i];
		if ((uint32_t)(s >> 32) == h && eq(ctx, (uint32_t)s - 1, key))
			return (uint32_t)s - 1;
	}
	return -1;
}

/* The commonest key, an entry's 64-bit id: entries in an array of stride-byte structs whose
 * uint64_t at offset off is the id (hashtab_find_id's ctx). */
struct hashtab_id_key {
	const void *arr;
	size_t stride, off;
};

/* hashtab_find's eq for a struct hashtab_id_key ctx and a uint64_t key. */
static inline bool hashtab_id_eq(const void *ctx, uint32_t i, const void *key)
{
	const struct hashtab_id_key *k = ctx;
	uint64_t id;

	__builtin_memcpy(&id, (const char *)k->arr + (size_t)i * k->stride + k->off, sizeof(id));
	return id == *(const uint64_t *)key;
}

/* The id of the entry of arr (stride bytes each, its uint64_t id at off) whose id is id, the
 * entries added with hashtab_add(t, hash_mix64(id), i); -1 when none. See HASHTAB_FIND_ID. */
static inline int64_t hashtab_find_id(const struct hashtab *t, const void *arr, size_t stride,
				      size_t off, uint64_t id)
{
	const struct hashtab_id_key k = { arr, stride, off };

	return hashtab_find(t, hash_mix64(id), hashtab_id_eq, &k, &id);
}

/* HASHTAB_FIND_ID(t, arr, member, id): the element of array arr whose uint64_t member is id, or
 * NULL (hashtab_find_id). arr is evaluated more than once: a plain lvalue only. */
#define HASHTAB_FIND_ID(t, arr, member, id)                                                        \
	__extension__({                                                                            \
		int64_t hf_i_ = hashtab_find_id((t), (arr), sizeof(*(arr)),                        \
						__builtin_offsetof(__typeof__(*(arr)), member), (id)); \
		hf_i_ < 0 ? NULL : &(arr)[hf_i_];                                                  \
	})

/* Starts loading the slot where a key of this hash is probed first (for lookups in a batch).
 * always_inline: gcc 12 finds a function that only prefetches free of side effects (ipa-pure-const)
 * and drops its calls before inlining them, prefetch and all. */
static inline __attribute__((always_inline)) void hashtab_prefetch(const struct hashtab *t,
								    uint64_t hash)
{
	if (t->nslots)
		__builtin_prefetch(&t->slots[hashtab_hash32(hash) & (t->nslots - 1)]);
}

/* The id of the entry in the slot where a key of this hash is probed first, when that slot's
 * stored hash is this hash's (the likely match, still to be compared), else -1: a batch of
 * lookups can start loading their entries before comparing any (hashtab_prefetch first). */
static inline int64_t hashtab_peek(const struct hashtab *t, uint64_t hash)
{
	if (!t->nslots)
		return -1;
	uint32_t h = hashtab_hash32(hash);
	uint64_t s = t->slots[h & (t->nslots - 1)];

	return s && (uint32_t)(s >> 32) == h ? (int64_t)(uint32_t)s - 1 : -1;
}

/* Adds entry id (below UINT32_MAX) with its key's hash, without checking that the key is new
 * (hashtab_find first); grows the table as needed. 0, or -ENOMEM (out of memory, or id too large);
 * on failure the table is unchanged. After hashtab_reserve(t, t->n + 1) it cannot fail. */
int hashtab_add(struct hashtab *t, uint64_t hash, uint32_t id);
/* Grows the table to hold n entries without growing again. 0 or -ENOMEM (table unchanged). */
int hashtab_reserve(struct hashtab *t, size_t n);
/* Empties the table, keeping its slots for the entries to come (no allocation). */
void hashtab_clear(struct hashtab *t);
/* Frees the slots; the table is empty (and reusable) afterwards. */
void hashtab_release(struct hashtab *t);

#endif
