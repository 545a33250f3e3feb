/* Top functions: per-key self and total values over the filtered samples of a profile. */
#include "analyze/hist.h"
#include "base/vec.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What one sample walk needs besides the hist: options, caches and scratch buffers. */
struct hist_walk {
	const struct hist_opts *o;
	uint32_t *module_of;  /* per mapping id: module string id + 1, 0 = not computed */
	uint32_t kernel_id, unknown_id;
	struct profile_frame *frames;
	size_t cap;
	uint32_t *keys;       /* per kept frame: entry index */
	size_t keycap;
	int64_t *pids;
	size_t npids, pidcap;
};

/* Mixes a (name, module) pair into a table index. */
static uint64_t key_hash(uint32_t name, uint32_t module)
{
	uint64_t h = ((uint64_t)name << 32 | module) * 0x9e3779b97f4a7c15ULL;

	return h ^ h >> 29;
}

/* Whether entry id is (name, module): key points to the pair. */
static bool entry_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct hist_entry *e = &((const struct hist *)ctx)->entries[id];
	const uint32_t *k = key;

	return e->name_id == k[0] && e->module_id == k[1];
}

/* The index of the entry for (name, module), or -1. */
static int64_t entry_find(const struct hist *h, uint32_t name, uint32_t module)
{
	uint32_t k[2] = { name, module };

	return hashtab_find(&h->index, key_hash(name, module), entry_eq, h, k);
}

/* Rebuilds the index of the entries (after they moved): the table has room, so it cannot fail. */
static void reindex(struct hist *h)
{
	hashtab_clear(&h->index);
	for (size_t e = 0; e < h->n; e++)
		hashtab_add(&h->index, key_hash(h->entries[e].name_id, h->entries[e].module_id), e);
}

/* Returns the index of the entry for (name, module), adding it if new, or -ENOMEM. */
static int64_t entry_get(struct hist *h, uint32_t name, uint32_t module, enum frame_kind kind)
{
	int64_t id = entry_find(h, name, module);

	if (id >= 0)
		return id;
	if (VEC_GROW(h->entries, h->cap, h->n + 1) || VEC_GROW(h->seen, h->cap_seen, h->n + 1) ||
	    hashtab_add(&h->index, key_hash(name, module), h->n))
		return -ENOMEM;
	h->entries[h->n] = (struct hist_entry){ profile_str(h->profile, name),
						profile_str(h->profile, module), name, module, kind, 0, 0 };
	h->seen[h->n] = 0;
	return h->n++;
}

/* String id of a frame's module: its mapping file's base name ("[kernel.kallsyms]" for a kernel
 * mapping without a name), or -ENOMEM. */
static int64_t module_compute(struct profile *p, const struct profile_frame *f, struct hist_walk *w)
{
	const char *file = "";

	if (f->mapping_id && f->mapping_id <= p->nmappings)
		file = profile_str(p, p->mappings[f->mapping_id - 1].filename);
	const char *base = strrchr(file, '/');
	base = base && base[1] ? base + 1 : file;
	if (!*base && f->kind == FRAME_KERNEL)
		return w->kernel_id;
	return profile_intern(p, base);
}

/* Module string id of a frame (cached per mapping), or -ENOMEM. */
static int64_t module_id(struct profile *p, const struct profile_frame *f, struct hist_walk *w)
{
	uint64_t m = f->mapping_id <= p->nmappings ? f->mapping_id : 0;

	if (!m)
		return f->kind == FRAME_KERNEL ? w->kernel_id : 0;
	if (!w->module_of[m]) {
		int64_t id = module_compute(p, f, w);
		if (id < 0)
			return id;
		w->module_of[m] = id + 1;
	}
	return w->module_of[m] - 1;
}

/* String id of "function (file:line)" for a frame, or -ENOMEM. */
static int64_t line_name(struct profile *p, const struct profile_frame *f, uint32_t name)
{
	const char *fn = profile_str(p, name), *file = profile_str(p, f->filename);
	const char *base = strrchr(file, '/');
	char *s = NULL;
	int len;

	base = base && base[1] ? base + 1 : file;
	if (!*base)
		return name;
	if (f->line > 0)
		len = asprintf(&s, "%s (%s:%lld)", fn, base, (long long)f->line);
	else
		len = asprintf(&s, "%s (%s)", fn, base);
	if (len < 0)
		return -ENOMEM;
	int64_t id = profile_intern(p, s);
	free(s);
	return id;
}

/* Entry index for one frame under o->by, or -ENOMEM. */
static int64_t frame_entry(struct hist *h, const struct profile_frame *f, struct hist_walk *w)
{
	struct profile *p = h->profile;
	int64_t mod = module_id(p, f, w), name = f->name ? f->name : w->unknown_id;

	if (mod < 0)
		return mod;
	if (w->o->by == HIST_BY_MODULE)
		name = mod ? mod : w->unknown_id;
	else if (w->o->by == HIST_BY_LINE)
		name = line_name(p, f, name);
	if (name < 0)
		return name;
	return entry_get(h, name, mod, f->kind);
}

bool hist_sample_match(const struct profile *p, const struct profile_sample *s,
		       const struct hist_opts *o)
{
	if (o->npids) {
		int64_t pid = profile_label_num(p, s, "pid", -1);
		size_t i = 0;
		while (i < o->npids && o->pids[i] != pid)
			i++;
		if (i == o->npids)
			return false;
	}
	if (o->comm) {
		const char *comm = profile_label_str(p, s, "comm");
		if (!comm || (strcmp(comm, o->comm) && fnmatch(o->comm, comm, 0)))
			return false;
	}
	return !o->no_idle || !hist_sample_idle(p, s);
}

bool hist_sample_idle(const struct profile *p, const struct profile_sample *s)
{
	int64_t pid = profile_label_num(p, s, "pid", -1);
	const char *comm = profile_label_str(p, s, "comm");

	if (pid >= 0)
		return pid == 0;
	if (!comm)
		return false;
	if (!strcmp(comm, "[idle]") || !strcmp(comm, "swapper"))
		return true;
	if (strncmp(comm, "swapper/", 8) || !comm[8])
		return false;
	return strspn(comm + 8, "0123456789") == strlen(comm + 8);
}

/* Collects the entry indexes of the kept frames of sample s into w->keys; returns their count,
 * or -1 when the sample is dropped (only kernel frames under no_kernel), or -ENOMEM. */
static int64_t sample_keys(struct hist *h, const struct profile_sample *s, struct hist_walk *w)
{
	int64_t n = profile_kept_frames(h->profile, s, &w->frames, &w->cap, w->o->inline_frames,
					w->o->no_kernel);

	if (n < 0)
		return n;
	if (VEC_GROW(w->keys, w->keycap, (size_t)n))
		return -ENOMEM;
	for (int64_t i = 0; i < n; i++) {
		int64_t e = frame_entry(h, &w->frames[i], w);
		if (e < 0)
			return e;
		w->keys[i] = e;
	}
	return n;
}

/* Remembers the pid label of a counted sample (for nprocesses); pid 0, the idle task, is not a
 * process (record's summary does not count it either). */
static int pid_note(struct hist_walk *w, const struct profile *p, const struct profile_sample *s)
{
	int64_t pid = profile_label_num(p, s, "pid", -1);

	if (pid <= 0)
		return 0;
	if (w->npids && w->pids[w->npids - 1] == pid)
		return 0;
	if (VEC_GROW(w->pids, w->pidcap, w->npids + 1))
		return -ENOMEM;
	w->pids[w->npids++] = pid;
	return 0;
}

/* Adds one sample's value to its entries: self to the leaf, total once per distinct entry. */
/* The events behind a sample of value v whose companion count is c (see struct hist): c, at
 * least 1; in a heap profile the sampled allocations behind c objects of v bytes, the inverse
 * of the Poisson weights (pprof's heap unscaling: each of c objects of v / c bytes was sampled
 * with probability 1 - e^(-v / (c R))). */
static double sample_events(const struct hist *h, int64_t v, int64_t c)
{
	if (c <= 0)
		return 1;
	if (h->heap_rate <= 0)
		return (double)c;
	double n = (double)c * -expm1(-(double)v / ((double)c * h->heap_rate));
	return n > 1 ? n : 1;
}

static int sample_add(struct hist *h, uint64_t idx, struct hist_walk *w)
{
	const struct profile_sample *s = w->o->samples ? &w->o->samples[idx]
						       : &h->profile->samples[idx];
	int64_t v = s->values[h->value_index];

	h->all_total += v;
	if (!v || !hist_sample_match(h->profile, s, w->o))
		return 0; /* a stack without this type's events (another type's) is no row */
	int64_t n = sample_keys(h, s, w);
	if (n == -1)
		return 0;
	if (n < 0)
		return n;
	h->total += v;
	h->nsamples++;
	if (v > 0) {
		int64_t c = h->companion >= 0 ? s->values[h->companion] : 1;
		h->sumsq += (double)v * v / sample_events(h, v, c);
	}
	for (int64_t i = 0; i < n; i++) {
		uint32_t e = w->keys[i];
		if (h->seen[e] != idx + 1) {
			h->seen[e] = idx + 1;
			h->entries[e].total += v;
		}
	}
	if (n)
		h->entries[w->keys[n - 1]].self += v;
	return pid_note(w, h->profile, s);
}

/* Sorts int64 values ascending (qsort callback). */
static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return CMP3(x, y);
}

/* Counts distinct pids among those noted. */
static uint64_t distinct_pids(struct hist_walk *w)
{
	uint64_t n = 0;

	if (!w->npids)
		return 0;
	qsort(w->pids, w->npids, sizeof(*w->pids), cmp_i64);
	for (size_t i = 0; i < w->npids; i++)
		n += !i || w->pids[i] != w->pids[i - 1];
	return n;
}

/* The count type that counts the events of type vi: the one just before it when its unit is
 * "count" (Go's pairs: samples/cpu, contentions/delay, alloc_objects/alloc_space); -1: none. */
static int companion_index(const struct profile *p, uint32_t vi)
{
	if (!strcmp(profile_str(p, p->sample_types[vi].unit), "count") || !vi)
		return -1;
	return strcmp(profile_str(p, p->sample_types[vi - 1].unit), "count") ? -1 : (int)vi - 1;
}

/* How many independent events h->total stands for (see struct hist). */
static double effective_events(const struct hist *h)
{
	const struct profile *p = h->profile;

	if (!strcmp(profile_str(p, p->sample_types[h->value_index].unit), "count"))
		return h->total;
	return h->sumsq > 0 ? (double)h->total * h->total / h->sumsq : 0;
}

int hist_build(struct hist *h, struct profile *p, const struct hist_opts *o)
{
	struct hist_walk w = { .o = o };
	int err = 0;

	memset(h, 0, sizeof(*h));
	h->profile = p;
	int vi = profile_sample_type_find(p, o->sample_type);
	if (vi < 0)
		return p->nsamples || o->sample_type ? -EINVAL : 0;
	h->value_index = vi;
	h->companion = companion_index(p, vi);
	if (h->companion >= 0 && p->period > 0 && !strcmp(profile_str(p, p->period_type.unit), "bytes"))
		h->heap_rate = (double)p->period;
	w.module_of = calloc(p->nmappings + 1, sizeof(*w.module_of));
	int64_t kid = profile_intern(p, "[kernel.kallsyms]"), uid = profile_intern(p, "[unknown]");
	if (!w.module_of || kid < 0 || uid < 0)
		err = -ENOMEM;
	w.kernel_id = kid;
	w.unknown_id = uid;
	uint64_t nsamples = o->samples ? o->nsamples : p->nsamples;
	for (uint64_t i = 0; i < nsamples && !err; i++)
		err = sample_add(h, i, &w);
	if (!err) {
		h->nprocesses = distinct_pids(&w);
		h->events = effective_events(h);
	}
	free(w.module_of);
	free(w.frames);
	free(w.keys);
	free(w.pids);
	return err;
}

/* qsort_r callback: larger value first (arg: enum hist_sort), then name, then module. */
static int cmp_entry(const void *a, const void *b, void *arg)
{
	const struct hist_entry *x = a, *y = b;
	enum hist_sort by = *(const enum hist_sort *)arg;
	int64_t vx = by == HIST_SORT_TOTAL ? x->total : x->self;
	int64_t vy = by == HIST_SORT_TOTAL ? y->total : y->self;

	if (vx != vy)
		return vx > vy ? -1 : 1;
	int c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->module, y->module);
}

void hist_sort(struct hist *h, enum hist_sort by)
{
	if (!h->n)
		return;
	qsort_r(h->entries, h->n, sizeof(*h->entries), cmp_entry, &by);
	reindex(h); /* indexes moved */
}

const struct hist_entry *hist_find(const struct hist *h, const char *name, const char *module)
{
	if (!h->n || !h->profile)
		return NULL;
	int64_t n = strtab_find(&h->profile->strings, name, strlen(name));
	int64_t m = strtab_find(&h->profile->strings, module, strlen(module));
	if (n < 0 || m < 0)
		return NULL;
	int64_t e = entry_find(h, n, m);
	return e >= 0 ? &h->entries[e] : NULL;
}

void hist_release(struct hist *h)
{
	free(h->entries);
	free(h->seen);
	hashtab_release(&h->index);
	memset(h, 0, sizeof(*h));
}

/* Copies the header fields writers use (default type, comments) from src to dst. */
static int copy_header(struct profile *dst, const struct profile *src)
{
	int64_t t = profile_intern(dst, profile_str(src, src->default_sample_type));

	if (t < 0)
		return -ENOMEM;
	dst->default_sample_type = t;
	for (uint32_t i = 0; i < src->ncomments; i++)
		if (profile_add_comment(dst, profile_str(src, src->comments[i])))
			return -ENOMEM;
	return 0;
}

int hist_filter_profile(struct profile *dst, const struct profile *src, const struct hist_opts *o)
{
	struct profile view = *src;
	uint64_t n = 0;

	view.samples = malloc((src->nsamples ? src->nsamples : 1) * sizeof(*view.samples));
	if (!view.samples)
		return -ENOMEM;
	for (uint64_t i = 0; i < src->nsamples; i++)
		if (hist_sample_match(src, &src->samples[i], o))
			view.samples[n++] = src->samples[i];
	view.nsamples = n;
	int err = profile_merge(dst, &view);
	if (!err)
		err = copy_header(dst, src);
	free(view.samples);
	return err;
}

/* Points view (a shallow copy of src) at the samples of src that pass o; under no_kernel their
 * kernel locations are left out (the kept ids go to *ids, which the caller frees) and a sample
 * left without any is dropped, as hist_build drops it. */
static int view_samples(struct profile *view, const struct profile *src, const struct hist_opts *o,
			uint64_t **ids)
{
	uint64_t nids = 0, n = 0, k = 0;

	for (uint64_t i = 0; i < src->nsamples; i++)
		nids += src->samples[i].nlocs;
	view->samples = malloc((src->nsamples ? src->nsamples : 1) * sizeof(*view->samples));
	*ids = malloc((nids ? nids : 1) * sizeof(**ids));
	if (!view->samples || !*ids)
		return -ENOMEM;
	for (uint64_t i = 0; i < src->nsamples; i++) {
		const struct profile_sample *s = &src->samples[i];
		struct profile_sample c = *s;
		if (!hist_sample_match(src, s, o))
			continue;
		if (o->no_kernel) {
			c.location_ids = *ids + k;
			c.nlocs = 0;
			for (uint32_t j = 0; j < s->nlocs; j++) {
				uint64_t id = s->location_ids[j];
				if (!id || id > src->nlocations || src->locations[id - 1].kind != FRAME_KERNEL)
					(*ids)[k + c.nlocs++] = id;
			}
			k += c.nlocs;
			if (!c.nlocs && s->nlocs)
				continue;
		}
		view->samples[n++] = c;
	}
	view->nsamples = n;
	return 0;
}

int hist_extract(struct profile *dst, const struct profile *src, const struct hist_opts *o)
{
	struct profile view = *src;
	uint64_t *ids = NULL;
	int err = view_samples(&view, src, o, &ids);

	if (!err)
		err = profile_merge_used(dst, &view);
	if (!err)
		err = copy_header(dst, src);
	free(view.samples);
	free(ids);
	return err;
}
