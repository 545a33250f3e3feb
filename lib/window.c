/* A decaying window over the cuts of one recording (see window.h). */
#include "window.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"

/* One stack of the window: its sample (one block for locations, values and labels, owned
 * through location_ids, as profile.c allocates them) and its weight. */
struct window_entry {
	struct profile_sample s;
	uint64_t hash;
	double weight;
	bool used;
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

/* Whether two samples have the same locations and labels. */
static bool same_stack(const struct profile_sample *a, const struct profile_sample *b)
{
	if (a->nlocs != b->nlocs || a->nlabels != b->nlabels ||
	    memcmp(a->location_ids, b->location_ids, a->nlocs * sizeof(*a->location_ids)))
		return false;
	for (uint32_t i = 0; i < a->nlabels; i++)
		if (a->labels[i].key != b->labels[i].key || a->labels[i].str != b->labels[i].str ||
		    a->labels[i].num != b->labels[i].num || a->labels[i].num_unit != b->labels[i].num_unit)
			return false;
	return true;
}

/* The slot of s (hash h) in entries: its entry's, or the empty one where it goes. */
static struct window_entry *slot_of(struct window_entry *entries, size_t nslots,
				    const struct profile_sample *s, uint64_t h)
{
	size_t mask = nslots - 1;

	for (size_t i = h & mask;; i = (i + 1) & mask) {
		struct window_entry *e = &entries[i];
		if (!e->used || (e->hash == h && same_stack(&e->s, s)))
			return e;
	}
}

/* Moves the entries into nslots slots, dropping (and freeing) those without weight when drop
 * is set; 0 or -ENOMEM. */
static int rehash(struct window *w, size_t nslots, bool drop)
{
	struct window_entry *entries = calloc(nslots, sizeof(*entries));

	if (!entries)
		return -ENOMEM;
	w->n = 0;
	for (size_t i = 0; i < w->nslots; i++) {
		struct window_entry *o = &w->entries[i];
		if (!o->used)
			continue;
		if (drop && o->weight == 0) {
			free(o->s.location_ids);
			continue;
		}
		*slot_of(entries, nslots, &o->s, o->hash) = *o;
		w->n++;
	}
	free(w->entries);
	w->entries = entries;
	w->nslots = nslots;
	return 0;
}

/* Multiplies every weight by decay (one under WINDOW_MIN_WEIGHT becomes 0); returns how many
 * entries have no weight left. */
static size_t decay(struct window *w, double factor)
{
	size_t dead = 0;

	for (size_t i = 0; i < w->nslots; i++) {
		struct window_entry *e = &w->entries[i];
		if (!e->used)
			continue;
		e->weight *= factor;
		if (e->weight < WINDOW_MIN_WEIGHT)
			e->weight = 0;
		dead += e->weight == 0;
	}
	return dead;
}

/* Copies sample s (ntypes values, zeroed) into the free entry e; 0 or -ENOMEM. */
static int entry_new(struct window_entry *e, const struct profile_sample *s, uint64_t h,
		     uint32_t ntypes)
{
	size_t nl = s->nlocs * sizeof(*s->location_ids), nv = ntypes * sizeof(int64_t);
	char *block = calloc(1, nl + nv + s->nlabels * sizeof(*s->labels) + 1);

	if (!block)
		return -ENOMEM;
	*e = (struct window_entry){ .hash = h, .used = true };
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
	if ((w->n + 1) * 2 > w->nslots && rehash(w, w->nslots ? w->nslots * 2 : 1024, false))
		return -ENOMEM;
	uint64_t h = sample_hash(s);
	struct window_entry *e = slot_of(w->entries, w->nslots, s, h);
	if (!e->used) {
		if (entry_new(e, s, h, ntypes))
			return -ENOMEM;
		w->n++;
	}
	e->weight += v;
	return 0;
}

/* The window's samples: the entries with weight, valued in column vi. 0 or -ENOMEM. */
static int build_samples(struct window *w, uint32_t vi)
{
	w->nsamples = 0;
	if (w->n > w->cap_samples) {
		struct profile_sample *n = realloc(w->samples, w->n * sizeof(*n));
		if (!n)
			return -ENOMEM;
		w->samples = n;
		w->cap_samples = w->n;
	}
	for (size_t i = 0; i < w->nslots; i++) {
		struct window_entry *e = &w->entries[i];
		if (!e->used || e->weight == 0)
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
		err = rehash(w, w->nslots, true);
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
	for (size_t i = 0; i < w->nslots; i++)
		if (w->entries[i].used)
			free(w->entries[i].s.location_ids);
	free(w->entries);
	free(w->samples);
	memset(w, 0, sizeof(*w));
}
