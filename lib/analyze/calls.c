/* Callers and callees of one function over a set of samples (see calls.h). */
#include "analyze/calls.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"

/* One side (callers or callees) while samples are walked. */
struct side {
	struct calls_row *rows;
	uint64_t *last;   /* per row: 1 + the last sample that added to it */
	size_t n, cap_rows, cap_last;
};

/* The walk's scratch: one sample's kept frames. */
struct walk {
	const struct calls_query *q;
	struct side side[2]; /* callers, callees */
	struct profile_frame *frames;
	size_t cap;
};

const char *calls_frame_module(const struct profile *p, const struct profile_frame *f)
{
	const char *file = f->mapping_id && f->mapping_id <= p->nmappings
				   ? profile_str(p, p->mappings[f->mapping_id - 1].filename)
				   : "";
	const char *base = strrchr(file, '/');

	base = base && base[1] ? base + 1 : file;
	return !*base && f->kind == FRAME_KERNEL ? "[kernel.kallsyms]" : base;
}

/* Adds value to the (name, module) row of a side, once per sample. 0 or -ENOMEM. */
static int side_add(struct side *sd, const char *name, const char *module, int64_t value,
		    uint64_t sample)
{
	size_t i = 0;

	while (i < sd->n && (sd->rows[i].name != name || strcmp(sd->rows[i].module, module)))
		i++;
	if (i == sd->n) {
		if (VEC_GROW(sd->rows, sd->cap_rows, sd->n + 1) ||
		    VEC_GROW(sd->last, sd->cap_last, sd->n + 1))
			return -ENOMEM;
		sd->rows[sd->n++] = (struct calls_row){ name, module, 0 };
		sd->last[i] = 0;
	}
	if (sd->last[i] != sample + 1) {
		sd->last[i] = sample + 1;
		sd->rows[i].value += value;
	}
	return 0;
}

/* The frames of sample s kept (inline frames folded, kernel ones under no_kernel), root first,
 * into w->frames; returns their count, -1 for a sample that drops out, or -ENOMEM. */
static long kept_frames(struct profile *p, struct walk *w, const struct profile_sample *s)
{
	return profile_kept_frames(p, s, &w->frames, &w->cap, false, w->q->no_kernel);
}

/* Name and module of kept frame j of the current sample. */
static const char *kept_name(const struct profile *p, const struct walk *w, long j)
{
	uint32_t id = w->frames[j].name;

	return id ? profile_str(p, id) : "[unknown]";
}

static const char *kept_module(const struct profile *p, const struct walk *w, long j)
{
	return calls_frame_module(p, &w->frames[j]);
}

/* Adds sample idx to the callers and callees of the function; 0 or -ENOMEM. */
static int add_sample(struct calls *c, struct profile *p, struct walk *w, uint64_t idx)
{
	const struct calls_query *q = w->q;
	const struct profile_sample *s = &q->samples[idx];
	int64_t v = s->values[q->value_index];
	long k = kept_frames(p, w, s);
	bool hit = false;
	int err = 0;

	if (k < -1)
		return (int)k;
	for (long j = 0; j < k && !err; j++) {
		if (strcmp(kept_name(p, w, j), q->function) || strcmp(kept_module(p, w, j), q->module))
			continue;
		hit = true;
		err = side_add(&w->side[0], j ? kept_name(p, w, j - 1) : "[root]",
			       j ? kept_module(p, w, j - 1) : "", v, idx);
		if (!err)
			err = side_add(&w->side[1], j + 1 < k ? kept_name(p, w, j + 1) : "[self]",
				       j + 1 < k ? kept_module(p, w, j + 1) : "", v, idx);
	}
	if (hit)
		c->total += v;
	return err;
}

/* qsort callback: larger value first, then by name. */
static int row_cmp(const void *a, const void *b)
{
	const struct calls_row *x = a, *y = b;

	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return strcmp(x->name, y->name);
}

int calls_compute(struct calls *c, struct profile *p, const struct calls_query *q)
{
	struct walk w = { .q = q };
	int err = 0;

	calls_release(c);
	for (size_t i = 0; i < q->nsamples && !err; i++)
		err = add_sample(c, p, &w, i);
	for (int s = 0; s < 2; s++) {
		if (w.side[s].n) /* rows is NULL when none: qsort(NULL, 0) is undefined */
			qsort(w.side[s].rows, w.side[s].n, sizeof(*w.side[s].rows), row_cmp);
		free(w.side[s].last);
	}
	c->callers = w.side[0].rows;
	c->ncallers = w.side[0].n;
	c->callees = w.side[1].rows;
	c->ncallees = w.side[1].n;
	for (size_t i = 0; i < c->ncallees; i++)
		if (!strcmp(c->callees[i].name, "[self]"))
			c->self = c->callees[i].value;
	free(w.frames);
	if (err)
		calls_release(c);
	return err;
}

void calls_release(struct calls *c)
{
	free(c->callers);
	free(c->callees);
	memset(c, 0, sizeof(*c));
}
