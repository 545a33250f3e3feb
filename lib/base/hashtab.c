/* The open-addressing table of entry ids (hashtab.h): growing and adding. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hashtab.h"

/* The fewest slots a table has once it holds anything. */
#define HASHTAB_MIN_SLOTS 16

/* Puts a filled slot value into the first empty slot of its probe run (slots has room). */
static void place(uint64_t *slots, size_t nslots, uint64_t s)
{
	size_t mask = nslots - 1, i = (uint32_t)(s >> 32) & mask;

	while (slots[i])
		i = (i + 1) & mask;
	slots[i] = s;
}

/* Replaces the slots by nslots (a power of two, more than twice the entries) empty ones and
 * re-places every entry by its stored hash: no key is hashed again. */
static int rehash(struct hashtab *t, size_t nslots)
{
	uint64_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->nslots; i++)
		if (t->slots[i])
			place(slots, nslots, t->slots[i]);
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return 0;
}

int hashtab_reserve(struct hashtab *t, size_t n)
{
	size_t nslots = t->nslots ? t->nslots : HASHTAB_MIN_SLOTS;

	if (n > SIZE_MAX / 4 / sizeof(*t->slots))
		return -ENOMEM;
	while (n * 2 > nslots)
		nslots *= 2;
	return nslots == t->nslots ? 0 : rehash(t, nslots);
}

int hashtab_add(struct hashtab *t, uint64_t hash, uint32_t id)
{
	if (id == UINT32_MAX)
		return -ENOMEM; /* id + 1 must fit the slot's 32 bits */
	int err = hashtab_reserve(t, t->n + 1);
	if (err)
		return err;
	place(t->slots, t->nslots, (uint64_t)hashtab_hash32(hash) << 32 | (id + 1));
	t->n++;
	return 0;
}

void hashtab_clear(struct hashtab *t)
{
	if (t->slots)
		memset(t->slots, 0, t->nslots * sizeof(*t->slots));
	t->n = 0;
}

void hashtab_release(struct hashtab *t)
{
	free(t->slots);
	t->slots = NULL;
	t->nslots = t->n = 0;
}
