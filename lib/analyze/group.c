/* report --group-by: samples ranked by one label's value, and that value as a root frame. */
#include "analyze/group.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The string id a sample is grouped by: its label's value, NONE_ID without one. */
#define NONE_ID UINT32_MAX

/* A sample's place in the grouping: its value's string id and its index. */
struct group_key {
	uint32_t id;
	uint64_t index;
};

/* The string id of s's first label key (a number's decimal text interned), NONE_ID without
 * one, or -ENOMEM. */
static int64_t label_id(struct profile *p, const struct profile_sample *s, const char *key)
{
	char num[24];

	for (uint32_t i = 0; i < s->nlabels; i++) {
		const struct profile_label *l = &s->labels[i];
		if (strcmp(profile_str(p, l->key), key))
			continue;
		if (l->str)
			return l->str;
		snprintf(num, sizeof(num), "%" PRId64, l->num);
		return profile_intern(p, num);
	}
	return NONE_ID;
}

const char *group_label_value(struct profile *p, const struct profile_sample *s, const char *key)
{
	int64_t id = label_id(p, s, key);

	if (id < 0)
		errno = ENOMEM;
	return id < 0 || id == NONE_ID ? NULL : profile_str(p, (uint32_t)id);
}

/* qsort callback: by value id, then sample index (a stable order within a value). */
static int cmp_key(const void *a, const void *b)
{
	const struct group_key *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* qsort callback: larger total first, then the value's text. */
static int cmp_row(const void *a, const void *b)
{
	const struct group_row *x = a, *y = b;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return strcmp(x->value, y->value);
}

/* Adds the row of one value from its samples (a run of keys): their histogram under o gives the
 * total and the top function. 0, -ENOMEM or -EINVAL. */
static int add_row(struct group *g, struct profile *p, const struct group_key *run, size_t n,
		   struct profile_sample *scratch, const struct hist_opts *o)
{
	struct hist_opts ho = *o;
	struct hist h;

	for (size_t i = 0; i < n; i++)
		scratch[i] = p->samples[run[i].index];
	ho.samples = scratch;
	ho.nsamples = n;
	int err = hist_build(&h, p, &ho);
	if (!err && h.nsamples) {
		struct group_row *r = &g->rows[g->n++];
		hist_sort(&h, HIST_SORT_SELF);
		r->value = run[0].id == NONE_ID ? GROUP_NONE : profile_str(p, run[0].id);
		r->total = h.total;
		r->nsamples = h.nsamples;
		r->top_function = h.n ? h.entries[0].name : "";
		r->top_module = h.n ? h.entries[0].module : "";
		r->top_self = h.n ? h.entries[0].self : 0;
		g->total += h.total;
		g->none += run[0].id == NONE_ID ? h.total : 0;
		g->value_index = h.value_index;
	}
	hist_release(&h);
	return err;
}

int group_build(struct group *g, struct profile *p, const char *key, const struct hist_opts *o)
{
	uint64_t n = p->nsamples;
	struct group_key *keys = malloc((n ? n : 1) * sizeof(*keys));
	struct profile_sample *scratch = malloc((n ? n : 1) * sizeof(*scratch));
	int err = 0;

	memset(g, 0, sizeof(*g));
	g->rows = malloc((n ? n : 1) * sizeof(*g->rows));
	if (!keys || !scratch || !g->rows)
		err = -ENOMEM;
	for (uint64_t i = 0; i < n && !err; i++) {
		int64_t id = label_id(p, &p->samples[i], key);
		keys[i] = (struct group_key){ (uint32_t)id, i };
		err = id < 0 ? (int)id : 0;
	}
	if (!err)
		qsort(keys, n, sizeof(*keys), cmp_key);
	for (uint64_t i = 0, j; i < n && !err; i = j) {
		for (j = i + 1; j < n && keys[j].id == keys[i].id; j++)
			;
		err = add_row(g, p, keys + i, j - i, scratch, o);
	}
	if (!err && g->n)
		qsort(g->rows, g->n, sizeof(*g->rows), cmp_row);
	free(keys);
	free(scratch);
	return err;
}

void group_release(struct group *g)
{
	free(g->rows);
	memset(g, 0, sizeof(*g));
}

/* The id of the root location "KEY=value" of sample s (a function in no mapping), added to p
 * when new. >= 1, or -ENOMEM. */
static int64_t root_location(struct profile *p, const struct profile_sample *s, const char *key)
{
	int64_t id = label_id(p, s, key);

	if (id < 0)
		return id;
	const char *v = id == NONE_ID ? GROUP_NONE : profile_str(p, (uint32_t)id);
	size_t len = strlen(key) + 1 + strlen(v) + 1;
	char *name = malloc(len);
	if (!name)
		return -ENOMEM;
	snprintf(name, len, "%s=%s", key, v);
	int64_t fn = profile_function(p, name, name, "", 0);
	free(name);
	return fn < 0 ? fn : profile_simple_location(p, 0, fn, FRAME_USER);
}

/* The view of p whose samples end (outermost) in their root locations roots[i]: its samples and
 * ids allocated here (*ids), the rest p's. 0 or -ENOMEM. */
static int rooted_view(struct profile *view, const struct profile *p, const uint64_t *roots,
		       uint64_t **ids)
{
	uint64_t nids = 0;

	*view = *p;
	for (uint64_t i = 0; i < p->nsamples; i++)
		nids += p->samples[i].nlocs + 1;
	view->samples = malloc((p->nsamples ? p->nsamples : 1) * sizeof(*view->samples));
	*ids = malloc((nids ? nids : 1) * sizeof(**ids));
	if (!view->samples || !*ids)
		return -ENOMEM;
	uint64_t *next = *ids;
	for (uint64_t i = 0; i < p->nsamples; i++) {
		struct profile_sample *s = &view->samples[i];
		*s = p->samples[i];
		memcpy(next, s->location_ids, s->nlocs * sizeof(*next));
		next[s->nlocs] = roots[i]; /* leaf first: the root goes last */
		s->location_ids = next;
		next += ++s->nlocs;
	}
	return 0;
}

int group_root(struct profile *dst, struct profile *p, const char *key)
{
	uint64_t *roots = malloc((p->nsamples ? p->nsamples : 1) * sizeof(*roots)), *ids = NULL;
	struct profile view = { 0 };
	int err = roots ? 0 : -ENOMEM;

	for (uint64_t i = 0; i < p->nsamples && !err; i++) {
		int64_t id = root_location(p, &p->samples[i], key);
		roots[i] = id;
		err = id < 0 ? (int)id : 0;
	}
	if (!err)
		err = rooted_view(&view, p, roots, &ids);
	if (!err)
		err = profile_copy_scalars(dst, p);
	if (!err)
		err = profile_merge_used(dst, &view);
	if (view.samples != p->samples)
		free(view.samples);
	free(ids);
	free(roots);
	return err;
}
