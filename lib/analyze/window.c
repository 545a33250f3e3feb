/* A decaying window over the cuts of one recording (see window.h). */
#include "analyze/window.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/vec.h"

/* One stack of the window: its sample (one block for locations, values and labels, owned
 * through location_ids, as profile.c allocates them) and its weight. */
struct window_entry {
	struct profile_sample s;
	uint64_t hash;
	double weight;
};

/* Hash of a sample's locations and labels (its identity in the window). */
static uint64_t sample_hash(const struct profile_sample *s)
{
	uint64_t h = hash_mix64(s->nlocs ^ (uint64_t)s->nlabels << 32);

	for (uint32_t i = 0; i < s->nlocs; i++)
		h = hash_mix64(h ^ s->location_ids[i]);
	for (uint32_t i = 0; i < s->nlabels; i++) {
		const struct profile_label *l = &s->labels[i];
		h = hash_mix64(h ^ (l->key | (uint64_t)l->str << 32));
		h = hash_mix64(h ^ (uint64_t)l->num ^ (uint64_t)l->num_unit << 48);
	}
	return h;
}

/* hashtab_eq_fn: whether entry id has the locations and labels of the sample key. */
static bool same_stack(const void *ctx, uint32_t id, const void *key)
{
	const struct profile_sample *a = &((const struct window *)ctx)->entries[id].s, *b = key;

	if (a->nlocs != b->nlocs || a->nlabels != b->nlabels ||
	    memcmp(a->location_ids, b->location_ids, a->nlocs * sizeof(*a->location_ids)))
		return false;
	for (uint32_t i = 0; i < a->nlabels; i++)
		if (a->labels[i].key != b->labels[i].key || a->labels[i].str != b->labels[i].str ||
		    a->labels[i].num != b->labels[i].num || a->labels[i].num_unit != b->labels[i].num_unit)
			return false;
	return true;
}

/* Drops (and frees) the entries without weight: the others move down, the index is rebuilt.
 * 0 or -ENOMEM (the window is then empty). */
static int drop_dead(struct window *w)
{
	size_t kept = 0;

	hashtab_release(&w->index);
	for (size_t i = 0; i < w->n; i++) {
		if (w->entries[i].weight == 0)
			free(w->entries[i].s.location_ids);
		else
			w->entries[kept++] = w->entries[i];
	}
	w->n = kept;
	if (hashtab_reserve(&w->index, kept)) {
		for (size_t i = 0; i < kept; i++)
			free(w->entries[i].s.location_ids);
		w->n = 0;
		return -ENOMEM;
	}
	for (size_t i = 0; i < kept; i++)
		hashtab_add(&w->index, w->entries[i].hash, i); /* reserved: cannot fail */
	return 0;
}

/* Multiplies every weight by decay (one under WINDOW_MIN_WEIGHT becomes 0); returns how many
 * entries have no weight left. */
static size_t decay(struct window *w, double factor)
{
	size_t dead = 0;

	for (size_t i = 0; i < w->n; i++) {
		struct window_entry *e = &w->entries[i];
		e->weight *= factor;
		if (e->weight < WINDOW_MIN_WEIGHT)
			e->weight = 0;
		dead += e->weight == 0;
	}
	return dead;
}

/* Copies sample s (ntypes values, zeroed) into a new entry e; 0 or -ENOMEM. */
static int entry_init(struct window_entry *e, const struct profile_sample *s, uint64_t h,
		      uint32_t ntypes)
{
	size_t nl = s->nlocs * sizeof(*s->location_ids), nv = ntypes * sizeof(int64_t);
	char *block = calloc(1, nl + nv + s->nlabels * sizeof(*s->labels) + 1);

	if (!block)
		return -ENOMEM;
	*e = (struct window_entry){ .hash = h };
	e->s.location_ids = (uint64_t *)block;
	e->s.values = (int64_t *)(block + nl);
	e->s.labels = (struct profile_label *)(block + nl + nv);
	e->s.nlocs = s->nlocs;
	e->s.nlabels = s->nlabels;
	memcpy(e->s.location_ids, s->location_ids, nl);
	memcpy(e->s.labels, s->labels, s->nlabels * sizeof(*s->labels));
	return 0;
}

/* Adds the value v of cut sample s to its entry (made if new); 0 or -ENOMEM. */
static int add_sample(struct window *w, const struct profile_sample *s, int64_t v,
		      uint32_t ntypes)
{
	uint64_t h = sample_hash(s);
	int64_t id = hashtab_find(&w->index, h, same_stack, w, s);

	if (id < 0) {
		if (w->n >= UINT32_MAX - 1 || VEC_GROW(w->entries, w->cap, w->n + 1) ||
		    hashtab_reserve(&w->index, w->n + 1) || entry_init(&w->entries[w->n], s, h, ntypes))
			return -ENOMEM;
		hashtab_add(&w->index, h, w->n); /* reserved: cannot fail */
		id = w->n++;
	}
	w->entries[id].weight += v;
	return 0;
}

/* The window's samples: the entries with weight, valued in column vi. 0 or -ENOMEM. */
static int build_samples(struct window *w, uint32_t vi)
{
	w->nsamples = 0;
	if (VEC_GROW(w->samples, w->cap_samples, w->n))
		return -ENOMEM;
	for (size_t i = 0; i < w->n; i++) {
		struct window_entry *e = &w->entries[i];
		if (e->weight == 0)
			continue;
		e->s.values[vi] = llround(e->weight * WINDOW_SCALE);
		w->samples[w->nsamples++] = e->s;
	}
	return 0;
}

void window_init(struct window *w, double half_life_s)
{
	memset(w, 0, sizeof(*w));
	w->half_life_s = half_life_s;
}

int window_add(struct window *w, const struct profile *cut, uint32_t value_index, double dt_s)
{
	double factor = w->half_life_s > 0 ? exp2(-(dt_s > 0 ? dt_s : 0) / w->half_life_s) : 0;
	size_t dead = decay(w, factor);
	int err = 0;

	w->nsamples = 0;
	w->last = 0;
	if (value_index >= cut->nsample_types)
		return -EINVAL;
	/* many dead entries: dropped (a later sample of their stack makes a new one) */
	if (dead > 1024 && dead * 2 > w->n)
		err = drop_dead(w);
	for (uint64_t i = 0; i < cut->nsamples && !err; i++) {
		int64_t v = cut->samples[i].values[value_index];
		if (v <= 0)
			continue;
		err = add_sample(w, &cut->samples[i], v, cut->nsample_types);
		w->last += v;
	}
	return err ? err : build_samples(w, value_index);
}

size_t window_stacks(const struct window *w)
{
	return w->n;
}

void window_release(struct window *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->entries[i].s.location_ids);
	free(w->entries);
	hashtab_release(&w->index);
	free(w->samples);
	memset(w, 0, sizeof(*w));
}
