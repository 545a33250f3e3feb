/* Stack filters (pprof's focus, ignore, show_from, tag and module filters) and a runtime's view:
 * a filtered copy of a profile's samples. */
#include "analyze/filter.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per location, what it matches (computed once): bit 0 computed, then 1 << (1 + field). */
#define LOC_DONE 1u
#define LOC_BIT(field) (1u << (1 + (field)))

/* One pass of filter_profile: the filter, the view being built and its scratch. */
struct filter_walk {
	const struct filter *f;
	const struct profile *src;
	struct profile *view;     /* a shallow copy of src, its samples and locations ours */
	uint8_t *bits;            /* per location id: LOC_* */
	uint64_t *cut;            /* per location id: its show_from copy's id + 1, 0: not made */
	uint64_t *ids;            /* the kept samples' location ids */
	uint64_t nids;
};

void filter_init(struct filter *f)
{
	memset(f, 0, sizeof(*f));
}

void filter_release(struct filter *f)
{
	for (int i = 0; i < FILTER_FIELDS; i++) {
		if (f->set[i])
			regfree(&f->re[i]);
		free(f->key[i]);
	}
	memset(f, 0, sizeof(*f));
}

int filter_set(struct filter *f, enum filter_field field, const char *regex, char *why,
	       size_t len)
{
	regex_t re;
	int rc = regcomp(&re, regex, REG_EXTENDED | REG_NOSUB);

	if (rc) {
		if (why && len)
			regerror(rc, &re, why, len);
		return rc == REG_ESPACE ? -ENOMEM : -EINVAL;
	}
	if (f->set[field])
		regfree(&f->re[field]);
	f->re[field] = re;
	f->set[field] = true;
	return 0;
}

/* pprof's comma-separated alternatives "a,b" as one expression "(a)|(b)"; NULL: no memory. */
static char *tag_alternatives(const char *re)
{
	size_t n = strlen(re), commas = 0;

	for (size_t i = 0; i < n; i++)
		commas += re[i] == ',';
	char *out = malloc(n + 4 * commas + 3), *o = out;
	if (!out)
		return NULL;
	*o++ = '(';
	for (size_t i = 0; i < n; i++) {
		if (re[i] == ',') {
			memcpy(o, ")|(", 3);
			o += 3;
		} else {
			*o++ = re[i];
		}
	}
	*o++ = ')';
	*o = 0;
	return out;
}

int filter_set_tag(struct filter *f, enum filter_field field, const char *spec, char *why,
		   size_t len)
{
	const char *eq = strchr(spec, '=');

	if (!eq || eq == spec) {
		if (why && len)
			snprintf(why, len, "expected KEY=REGEX");
		return -EINVAL;
	}
	char *key = strndup(spec, eq - spec), *re = tag_alternatives(eq + 1);
	int err = key && re ? filter_set(f, field, re, why, len) : -ENOMEM;
	free(re);
	if (err) {
		free(key);
		return err;
	}
	free(f->key[field]);
	f->key[field] = key;
	return 0;
}

bool filter_active(const struct filter *f)
{
	for (int i = 0; i < FILTER_FIELDS; i++)
		if (f->set[i])
			return true;
	return f->runtime != FRAME_NATIVE;
}

/* Whether field's expression matches s. */
static bool field_match(const struct filter *f, enum filter_field field, const char *s)
{
	return regexec(&f->re[field], s, 0, NULL, 0) == 0;
}

/* The file name of location l's mapping ("" without one). */
static const char *mapping_file(const struct profile *p, const struct profile_location *l)
{
	if (!l->mapping_id || l->mapping_id > p->nmappings)
		return "";
	return profile_str(p, p->mappings[l->mapping_id - 1].filename);
}

/* The index of l's outermost line whose function's name or file matches field, or -1 (pprof's
 * lastMatchedLineIndex). */
static int64_t last_line_match(const struct filter *f, enum filter_field field,
			       const struct profile *p, const struct profile_location *l)
{
	for (uint32_t i = l->nlines; i-- > 0;) {
		uint64_t fn = l->lines[i].function_id;
		if (!fn || fn > p->nfunctions)
			continue;
		const struct profile_function *func = &p->functions[fn - 1];
		if (field_match(f, field, profile_str(p, func->name)) ||
		    field_match(f, field, profile_str(p, func->filename)))
			return i;
	}
	return -1;
}

/* Whether location l matches field as pprof's matchesName: a line, or its mapping's file. */
static bool loc_match(const struct filter *f, enum filter_field field, const struct profile *p,
		      const struct profile_location *l)
{
	return last_line_match(f, field, p, l) >= 0 || field_match(f, field, mapping_file(p, l));
}

/* Whether l's module (as lib/analyze/hist names it) matches --module. */
static bool module_match(const struct filter *f, const struct profile *p,
			 const struct profile_location *l)
{
	const char *file = mapping_file(p, l), *base = strrchr(file, '/');

	base = base && base[1] ? base + 1 : file;
	if (!*base && l->kind == FRAME_KERNEL)
		base = "[kernel.kallsyms]";
	return field_match(f, FILTER_MODULE, base);
}

/* What location id matches (LOC_BIT per field), computed on first use. */
static unsigned loc_bits(struct filter_walk *w, uint64_t id)
{
	const struct profile *p = w->src;

	if (!id || id > p->nlocations)
		return LOC_DONE;
	if (w->bits[id] & LOC_DONE)
		return w->bits[id];
	const struct profile_location *l = &p->locations[id - 1];
	unsigned b = LOC_DONE;
	for (int k = FILTER_FOCUS; k <= FILTER_SHOW_FROM; k++)
		if (w->f->set[k] && loc_match(w->f, k, p, l))
			b |= LOC_BIT(k);
	if (w->f->set[FILTER_MODULE] && module_match(w->f, p, l))
		b |= LOC_BIT(FILTER_MODULE);
	return w->bits[id] = b;
}

/* Whether s has a label of field's key whose value (a number as its decimal text) matches. */
static bool tag_match(const struct filter *f, enum filter_field field, const struct profile *p,
		      const struct profile_sample *s)
{
	char num[24];

	for (uint32_t i = 0; i < s->nlabels; i++) {
		const struct profile_label *l = &s->labels[i];
		if (strcmp(profile_str(p, l->key), f->key[field]))
			continue;
		const char *v = profile_str(p, l->str);
		if (!l->str)
			snprintf(num, sizeof(num), "%" PRId64, l->num), v = num;
		if (field_match(f, field, v))
			return true;
	}
	return false;
}

/* Whether sample s passes focus, ignore, module (over its frames), thread and the tags (its
 * labels). */
static bool sample_passes(struct filter_walk *w, const struct profile_sample *s)
{
	const struct filter *f = w->f;
	unsigned any = 0;

	if (f->set[FILTER_TAG_FOCUS] && !tag_match(f, FILTER_TAG_FOCUS, w->src, s))
		return false;
	if (f->set[FILTER_TAG_IGNORE] && tag_match(f, FILTER_TAG_IGNORE, w->src, s))
		return false;
	if (f->set[FILTER_THREAD]) {
		const char *t = profile_label_str(w->src, s, "thread");
		if (!t || !field_match(f, FILTER_THREAD, t))
			return false;
	}
	if (!s->nlocs && (f->set[FILTER_FOCUS] || f->set[FILTER_IGNORE]))
		return false; /* pprof's focusedAndNotIgnored: no frame, no focused one */
	for (uint32_t i = 0; i < s->nlocs; i++)
		any |= loc_bits(w, s->location_ids[i]);
	if (f->set[FILTER_IGNORE] && (any & LOC_BIT(FILTER_IGNORE)))
		return false;
	if (f->set[FILTER_FOCUS] && !(any & LOC_BIT(FILTER_FOCUS)))
		return false;
	return !f->set[FILTER_MODULE] || (any & LOC_BIT(FILTER_MODULE));
}

/* The id of location id cut for show_from: its lines up to the outermost matching one (a copy
 * in the view sharing src's lines), or id itself when the mapping matched or nothing is cut. */
static uint64_t cut_location(struct filter_walk *w, uint64_t id)
{
	const struct profile *p = w->src;
	const struct profile_location *l = &p->locations[id - 1];

	if (w->cut[id])
		return w->cut[id] - 1;
	int64_t i = last_line_match(w->f, FILTER_SHOW_FROM, p, l);
	uint64_t c = id;
	if (i >= 0 && (uint64_t)i + 1 < l->nlines &&
	    !field_match(w->f, FILTER_SHOW_FROM, mapping_file(p, l))) {
		struct profile_location *n = &w->view->locations[w->view->nlocations++];
		*n = *l;
		n->nlines = i + 1; /* lines are innermost first: the outer ones go */
		c = w->view->nlocations;
	}
	w->cut[id] = c + 1;
	return c;
}

/* show_from on the ids (leaf first) of a kept sample: the outermost match ends the stack. 0 when
 * no frame matches (the sample drops out), else the new count. */
static uint32_t show_from(struct filter_walk *w, uint64_t *ids, uint32_t n)
{
	for (uint32_t i = n; i-- > 0;)
		if (loc_bits(w, ids[i]) & LOC_BIT(FILTER_SHOW_FROM)) {
			ids[i] = cut_location(w, ids[i]);
			return i + 1;
		}
	return 0;
}

/* --runtime: keeps the ids (leaf first) of the runtime's frames; returns how many. */
static uint32_t runtime_frames(struct filter_walk *w, uint64_t *ids, uint32_t n)
{
	const struct profile *p = w->src;
	uint32_t k = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t id = ids[i];
		if (!id || id > p->nlocations)
			continue;
		uint64_t m = p->locations[id - 1].mapping_id;
		if (m && m <= p->nmappings && p->mappings[m - 1].runtime == w->f->runtime)
			ids[k++] = id;
	}
	return k;
}

/* Adds sample s to the view when it passes, its stack cut; counts its value in st. */
static void sample_add(struct filter_walk *w, const struct profile_sample *s, uint32_t vi,
		       struct filter_stats *st)
{
	int64_t v = vi < w->src->nsample_types ? s->values[vi] : 0;
	struct profile_sample c = *s;

	st->total += v;
	if (!sample_passes(w, s))
		return;
	c.location_ids = w->ids + w->nids;
	memcpy(c.location_ids, s->location_ids, s->nlocs * sizeof(*c.location_ids));
	if (w->f->set[FILTER_SHOW_FROM] && !(c.nlocs = show_from(w, c.location_ids, c.nlocs)))
		return;
	if (w->f->runtime != FRAME_NATIVE && !(c.nlocs = runtime_frames(w, c.location_ids, c.nlocs))) {
		st->no_runtime += v;
		return;
	}
	w->nids += c.nlocs;
	w->view->samples[w->view->nsamples++] = c;
	st->kept += v;
}

/* Allocates the walk's tables: per location bits and cuts, the view's samples, ids and (for
 * show_from's cut copies) locations. 0 or -ENOMEM. */
static int walk_alloc(struct filter_walk *w, const struct profile_sample *samples, uint64_t n)
{
	const struct profile *p = w->src;
	uint64_t nids = 0;

	for (uint64_t i = 0; i < n; i++)
		nids += samples[i].nlocs;
	w->bits = calloc(p->nlocations + 1, 1);
	w->cut = calloc(p->nlocations + 1, sizeof(*w->cut));
	w->ids = malloc((nids ? nids : 1) * sizeof(*w->ids));
	w->view->samples = malloc((n ? n : 1) * sizeof(*w->view->samples));
	w->view->locations = malloc((2 * p->nlocations + 1) * sizeof(*w->view->locations));
	if (!w->bits || !w->cut || !w->ids || !w->view->samples || !w->view->locations)
		return -ENOMEM;
	if (p->nlocations)
		memcpy(w->view->locations, p->locations, p->nlocations * sizeof(*p->locations));
	w->view->nsamples = 0;
	return 0;
}

int filter_profile(struct profile *dst, const struct profile *src,
		   const struct profile_sample *samples, uint64_t nsamples, const struct filter *f,
		   uint32_t value_index, struct filter_stats *st)
{
	struct profile view = *src;
	struct filter_walk w = { .f = f, .src = src, .view = &view };
	struct filter_stats dummy;
	int err;

	st = st ? st : &dummy;
	memset(st, 0, sizeof(*st));
	if (!samples) {
		samples = src->samples;
		nsamples = src->nsamples;
	}
	view.samples = NULL;
	view.locations = NULL;
	err = walk_alloc(&w, samples, nsamples);
	for (uint64_t i = 0; i < nsamples && !err; i++)
		sample_add(&w, &samples[i], value_index, st);
	if (!err)
		err = profile_copy_scalars(dst, src);
	if (!err)
		err = profile_merge_used(dst, &view);
	free(w.bits);
	free(w.cut);
	free(w.ids);
	free(view.samples);
	free(view.locations);
	return err;
}

int filter_apply(struct profile *p, const struct filter *f, uint32_t value_index,
		 struct filter_stats *st)
{
	struct profile q;
	int err;

	if (st)
		memset(st, 0, sizeof(*st));
	if (!filter_active(f))
		return 0;
	if (profile_init(&q))
		return -ENOMEM;
	err = filter_profile(&q, p, NULL, 0, f, value_index, st);
	if (err) {
		profile_release(&q);
		return err;
	}
	profile_release(p);
	*p = q; /* the profile holds no pointer to itself */
	return 0;
}
