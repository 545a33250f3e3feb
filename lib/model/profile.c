/* In-memory profile model: string interning, dedupe indexes and the frame view writers use. */
#include "model/profile.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/vec.h"

/* Hash of 64-bit words (multiply-xorshift per word): location ids and labels hash 8 bytes a step. */
static uint64_t hash_words(uint64_t h, const uint64_t *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= w[i] * 0x9e3779b97f4a7c15ULL;
		h = (h << 27 | h >> 37) * 0xbf58476d1ce4e5b9ULL;
	}
	return h;
}

/* Final avalanche so low bits are usable as a table index. */
static uint64_t hash_mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}


/* ---- strtab ---- */

int strtab_init(struct strtab *t)
{
	memset(t, 0, sizeof(*t));
	return strtab_intern(t, "", 0) < 0 ? -ENOMEM : 0;
}

void strtab_release(struct strtab *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		free(t->strs[i]);
	free(t->strs);
	free(t->lens);
	hashtab_release(&t->index);
	memset(t, 0, sizeof(*t));
}

/* A string to look up: its bytes. */
struct strkey {
	const char *s;
	size_t len;
};

/* Whether string id is the key's bytes. */
static bool strtab_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct strtab *t = ctx;
	const struct strkey *k = key;

	return t->lens[id] == k->len && !memcmp(t->strs[id], k->s, k->len);
}

int64_t strtab_find(const struct strtab *t, const char *s, size_t len)
{
	struct strkey k = { s, len };

	return hashtab_find(&t->index, hash_mix(hash_bytes(HASH_SEED, s, len)), strtab_eq, t, &k);
}

/* Appends a copy of s[0..len) as string t->n; 0 or -ENOMEM. */
static int strtab_append(struct strtab *t, const char *s, size_t len)
{
	if (t->n == UINT32_MAX - 1 || len > UINT32_MAX)
		return -ENOMEM;
	uint32_t lcap = t->cap; /* lens first: t->cap grows only once both have room */
	if (VEC_GROW(t->lens, lcap, t->n + 1) || VEC_GROW(t->strs, t->cap, t->n + 1))
		return -ENOMEM;
	char *copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, s, len);
	copy[len] = 0;
	t->strs[t->n] = copy;
	t->lens[t->n] = len;
	return 0;
}

int64_t strtab_intern(struct strtab *t, const char *s, size_t len)
{
	uint64_t h = hash_mix(hash_bytes(HASH_SEED, s, len));
	struct strkey k = { s, len };
	int64_t id = hashtab_find(&t->index, h, strtab_eq, t, &k);

	if (id >= 0)
		return id;
	if (strtab_append(t, s, len))
		return -ENOMEM;
	if (hashtab_add(&t->index, h, t->n)) {
		free(t->strs[t->n]);
		return -ENOMEM;
	}
	return t->n++;
}

/* ---- profile ---- */

int profile_init(struct profile *p)
{
	memset(p, 0, sizeof(*p));
	return strtab_init(&p->strings);
}

void profile_release(struct profile *p)
{
	for (uint64_t i = 0; i < p->nlocations; i++)
		free(p->locations[i].lines);
	arena_release(&p->sample_arena); /* every sample's block */
	FREE_ALL(p->sample_types, p->comments, p->mappings, p->functions, p->locations, p->samples);
	hashtab_release(&p->fn_index);
	hashtab_release(&p->loc_index);
	hashtab_release(&p->sample_index);
	strtab_release(&p->strings);
	memset(p, 0, sizeof(*p));
}

int profile_copy_scalars(struct profile *dst, const struct profile *src)
{
	int err = 0;

	for (uint32_t i = 0; i < src->nsample_types && !err; i++)
		err = profile_add_sample_type(dst, profile_str(src, src->sample_types[i].type),
					      profile_str(src, src->sample_types[i].unit)) < 0;
	int64_t pt = profile_intern(dst, profile_str(src, src->period_type.type));
	int64_t pu = profile_intern(dst, profile_str(src, src->period_type.unit));
	int64_t ds = profile_intern(dst, profile_str(src, src->default_sample_type));
	if (err || pt < 0 || pu < 0 || ds < 0)
		return -ENOMEM;
	dst->period_type = (struct profile_value_type){ pt, pu };
	dst->default_sample_type = ds;
	dst->period = src->period;
	for (uint32_t i = 0; i < src->ncomments; i++)
		if (profile_add_comment(dst, profile_str(src, src->comments[i])))
			return -ENOMEM;
	return 0;
}

/* A continuous recording's tables would otherwise hold every address it ever resolved. */
int profile_renew(struct profile *p)
{
	struct profile fresh;
	int err = profile_init(&fresh);

	if (!err)
		err = profile_copy_scalars(&fresh, p);
	if (!err)
		fresh.time_nanos = p->time_nanos, fresh.duration_nanos = p->duration_nanos;
	if (err) {
		profile_release(&fresh);
		return err;
	}
	profile_release(p);
	*p = fresh;
	return 0;
}

int64_t profile_intern(struct profile *p, const char *s)
{
	return strtab_intern(&p->strings, s ? s : "", s ? strlen(s) : 0);
}

int profile_add_sample_type(struct profile *p, const char *type, const char *unit)
{
	int64_t t = profile_intern(p, type), u = profile_intern(p, unit);

	if (t < 0 || u < 0)
		return -ENOMEM;
	if (VEC_GROW(p->sample_types, p->cap_sample_types, p->nsample_types + 1))
		return -ENOMEM;
	p->sample_types[p->nsample_types] = (struct profile_value_type){ (uint32_t)t, (uint32_t)u };
	return p->nsample_types++;
}

int profile_add_comment(struct profile *p, const char *text)
{
	int64_t id = profile_intern(p, text);

	if (id < 0)
		return -ENOMEM;
	if (VEC_GROW(p->comments, p->cap_comments, p->ncomments + 1))
		return -ENOMEM;
	p->comments[p->ncomments++] = id;
	return 0;
}

/* Whether a bracketed mapping name is one the kernel gives user memory ("[vdso]", "[stack:TID]",
 * "[anon:NAME]", "[uprobes]", ...) rather than a kernel module's name. */
static bool user_pseudo_mapping(const char *f)
{
	static const char *const exact[] = { "[vdso]", "[vvar]", "[vvar_vclock]", "[vsyscall]",
					     "[heap]", "[jit]", "[unknown]", "[uprobes]" };
	static const char *const prefix[] = { "[stack", "[anon" };

	if (frame_runtime_of_mapping(f) != FRAME_NATIVE) /* a runtime's frames (frame_kind.h) */
		return true;
	for (size_t i = 0; i < sizeof(exact) / sizeof(*exact); i++)
		if (!strcmp(f, exact[i]))
			return true;
	for (size_t i = 0; i < sizeof(prefix) / sizeof(*prefix); i++)
		if (!strncmp(f, prefix[i], strlen(prefix[i])))
			return true;
	return false;
}

enum frame_kind profile_kind_of_mapping(const char *f)
{
	if (!f || f[0] == 0)
		return FRAME_USER;
	if (!strcmp(f, "[jit]") || !strncmp(f, "/tmp/perf-", 10) || !strncmp(f, "//anon", 6) ||
	    !strcmp(f, "[anon]") || !strncmp(f, "[anon:", 6))
		return FRAME_JIT;
	if (!strncmp(f, "[kernel", 7) || (f[0] == '[' && !user_pseudo_mapping(f)))
		return FRAME_KERNEL;
	return FRAME_USER;
}

int64_t profile_add_mapping(struct profile *p, uint64_t start, uint64_t limit, uint64_t offset,
			    const char *filename, const char *build_id)
{
	int64_t f = profile_intern(p, filename), b = profile_intern(p, build_id);

	if (f < 0 || b < 0 || VEC_GROW(p->mappings, p->cap_mappings, p->nmappings + 1))
		return -ENOMEM;
	struct profile_mapping *m = &p->mappings[p->nmappings++];
	memset(m, 0, sizeof(*m));
	m->start = start;
	m->limit = limit;
	m->offset = offset;
	m->filename = f;
	m->build_id = b;
	m->kind = profile_kind_of_mapping(filename);
	m->runtime = frame_runtime_of_mapping(filename);
	return p->nmappings;
}

/* Hash of a function's key (its strings and start line). */
static uint64_t fn_hash(const struct profile_function *f)
{
	uint64_t k[3] = { f->name | (uint64_t)f->system_name << 32, f->filename,
			  (uint64_t)f->start_line };
	return hash_mix(hash_bytes(HASH_SEED, k, sizeof(k)));
}

/* Whether function id + 1 has the key of the function key. */
static bool fn_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct profile_function *o = &((const struct profile *)ctx)->functions[id], *f = key;

	return o->name == f->name && o->system_name == f->system_name &&
	       o->filename == f->filename && o->start_line == f->start_line;
}

int64_t profile_function(struct profile *p, const char *name, const char *system_name,
			 const char *filename, int64_t start_line)
{
	int64_t n = profile_intern(p, name), s = profile_intern(p, system_name ? system_name : name);
	int64_t f = profile_intern(p, filename);

	if (n < 0 || s < 0 || f < 0)
		return -ENOMEM;
	struct profile_function key = { n, s, f, start_line };
	uint64_t h = fn_hash(&key);
	int64_t id = hashtab_find(&p->fn_index, h, fn_eq, p, &key);
	if (id >= 0)
		return id + 1;
	if (VEC_GROW(p->functions, p->cap_functions, p->nfunctions + 1) ||
	    hashtab_add(&p->fn_index, h, p->nfunctions))
		return -ENOMEM;
	p->functions[p->nfunctions] = key;
	return ++p->nfunctions;
}

int64_t profile_add_location(struct profile *p, uint64_t mapping_id, uint64_t address,
			     const struct profile_line *lines, uint32_t nlines)
{
	if (VEC_GROW(p->locations, p->cap_locations, p->nlocations + 1))
		return -ENOMEM;
	struct profile_location *l = &p->locations[p->nlocations];
	memset(l, 0, sizeof(*l));
	if (nlines) {
		l->lines = malloc(nlines * sizeof(*lines));
		if (!l->lines)
			return -ENOMEM;
		memcpy(l->lines, lines, nlines * sizeof(*lines));
	}
	l->nlines = nlines;
	l->mapping_id = mapping_id;
	l->address = address;
	l->kind = mapping_id && mapping_id <= p->nmappings ? p->mappings[mapping_id - 1].kind
							   : FRAME_USER;
	return ++p->nlocations;
}

/* Whether location id + 1 is the simple location (mapping, function, kind) of key[0..3). */
static bool loc_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct profile_location *l = &((const struct profile *)ctx)->locations[id];
	const uint64_t *k = key;

	return l->mapping_id == k[0] && l->nlines == 1 && l->lines[0].function_id == k[1] &&
	       l->kind == k[2];
}

int64_t profile_simple_location(struct profile *p, uint64_t mapping_id, uint64_t function_id,
				enum frame_kind kind)
{
	struct profile_line line = { function_id, 0 };
	uint64_t k[3] = { mapping_id, function_id, kind };
	uint64_t h = hash_mix(hash_bytes(HASH_SEED, k, sizeof(k)));
	int64_t id = hashtab_find(&p->loc_index, h, loc_eq, p, k);

	if (id >= 0)
		return id + 1;
	if (p->nlocations >= UINT32_MAX - 1 || hashtab_reserve(&p->loc_index, p->loc_index.n + 1))
		return -ENOMEM;
	id = profile_add_location(p, mapping_id, 0, &line, 1);
	if (id < 0)
		return id;
	p->locations[id - 1].kind = kind;
	hashtab_add(&p->loc_index, h, id - 1); /* reserved: cannot fail */
	return id;
}

static uint64_t sample_key_hash(const uint64_t *locs, uint32_t nlocs,
				const struct profile_label *labels, uint32_t nlabels)
{
	uint64_t h = hash_words(HASH_SEED, locs, nlocs);

	for (uint32_t i = 0; i < nlabels; i++) {
		uint64_t k[3] = { labels[i].key | (uint64_t)labels[i].str << 32,
				  (uint64_t)labels[i].num, labels[i].num_unit };
		h = hash_words(h, k, 3);
	}
	return hash_mix(h ^ nlocs);
}

static bool labels_equal(const struct profile_label *a, const struct profile_label *b, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (a[i].key != b[i].key || a[i].str != b[i].str || a[i].num != b[i].num ||
		    a[i].num_unit != b[i].num_unit)
			return false;
	return true;
}

/* Copies a new sample into the array; returns its id or -ENOMEM. Its locations, values and
 * labels share one block of the profile's sample arena (not a malloc each, nor three: no chunk
 * headers, no free per sample, consecutive samples on the same pages). */
static int64_t sample_append(struct profile *p, const uint64_t *locs, uint32_t nlocs,
			     const int64_t *values, const struct profile_label *labels,
			     uint32_t nlabels)
{
	size_t nl = nlocs * sizeof(*locs), nv = p->nsample_types * sizeof(*values);
	char *block;

	if (VEC_GROW(p->samples, p->cap_samples, p->nsamples + 1) ||
	    !(block = arena_alloc(&p->sample_arena, nl + nv + (size_t)nlabels * sizeof(*labels))))
		return -ENOMEM;
	struct profile_sample *s = &p->samples[p->nsamples];
	memset(s, 0, sizeof(*s));
	s->location_ids = (uint64_t *)block;
	s->values = (int64_t *)(block + nl);
	s->labels = (struct profile_label *)(block + nl + nv);
	if (nlocs)
		memcpy(s->location_ids, locs, nlocs * sizeof(*locs));
	if (p->nsample_types)
		memcpy(s->values, values, p->nsample_types * sizeof(*values));
	if (nlabels)
		memcpy(s->labels, labels, nlabels * sizeof(*labels));
	s->nlocs = nlocs;
	s->nlabels = nlabels;
	return ++p->nsamples;
}

/* A sample's key to look up: its locations and labels, and their hash. */
struct sample_key {
	const uint64_t *locs;
	const struct profile_label *labels;
	uint32_t nlocs, nlabels;
	uint64_t hash;
};

/* Whether sample id + 1 has the locations and labels of the sample_key key. */
static bool sample_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct profile_sample *s = &((const struct profile *)ctx)->samples[id];
	const struct sample_key *k = key;

	return s->hash == k->hash && s->nlocs == k->nlocs && s->nlabels == k->nlabels &&
	       !memcmp(s->location_ids, k->locs, k->nlocs * sizeof(*k->locs)) &&
	       labels_equal(s->labels, k->labels, k->nlabels);
}

uint64_t profile_prefetch_sample(const struct profile *p, const uint64_t *locs, uint32_t nlocs,
				 const struct profile_label *labels, uint32_t nlabels)
{
	uint64_t h = sample_key_hash(locs, nlocs, labels, nlabels);

	hashtab_prefetch(&p->sample_index, h);
	return h;
}

int profile_add_sample(struct profile *p, const uint64_t *locs, uint32_t nlocs,
		       const int64_t *values, const struct profile_label *labels, uint32_t nlabels)
{
	return profile_add_sample_hashed(p, sample_key_hash(locs, nlocs, labels, nlabels), locs,
					 nlocs, values, labels, nlabels);
}

int profile_add_sample_hashed(struct profile *p, uint64_t hash, const uint64_t *locs,
			      uint32_t nlocs, const int64_t *values,
			      const struct profile_label *labels, uint32_t nlabels)
{
	struct sample_key k = { locs, labels, nlocs, nlabels, hash };
	int64_t i = hashtab_find(&p->sample_index, k.hash, sample_eq, p, &k);

	if (i >= 0) {
		struct profile_sample *s = &p->samples[i];
		for (uint32_t v = 0; v < p->nsample_types; v++)
			if (__builtin_add_overflow(s->values[v], values[v], &s->values[v]))
				s->values[v] = values[v] < 0 ? INT64_MIN : INT64_MAX; /* saturate */
		return 0;
	}
	if (p->nsamples >= UINT32_MAX - 1 ||
	    hashtab_reserve(&p->sample_index, p->sample_index.n + 1))
		return -ENOMEM;
	int64_t id = sample_append(p, locs, nlocs, values, labels, nlabels);
	if (id < 0)
		return (int)id;
	p->samples[id - 1].hash = k.hash;
	hashtab_add(&p->sample_index, k.hash, id - 1); /* reserved: cannot fail */
	return 0;
}

void profile_clear_samples(struct profile *p)
{
	arena_reset(&p->sample_arena); /* every sample's block; its newest chunk kept for reuse */
	p->nsamples = 0;
	hashtab_release(&p->sample_index); /* empty, reusable */
}

const char *profile_label_str(const struct profile *p, const struct profile_sample *s,
			      const char *key)
{
	for (uint32_t i = 0; i < s->nlabels; i++)
		if (s->labels[i].str && !strcmp(profile_str(p, s->labels[i].key), key))
			return profile_str(p, s->labels[i].str);
	return NULL;
}

int64_t profile_label_num(const struct profile *p, const struct profile_sample *s,
			  const char *key, int64_t def)
{
	for (uint32_t i = 0; i < s->nlabels; i++)
		if (!s->labels[i].str && !strcmp(profile_str(p, s->labels[i].key), key))
			return s->labels[i].num;
	return def;
}

uint32_t profile_value_index(const struct profile *p)
{
	if (!p->nsample_types)
		return 0;
	for (uint32_t i = 0; p->default_sample_type && i < p->nsample_types; i++)
		if (p->sample_types[i].type == p->default_sample_type)
			return i;
	for (uint32_t i = 0; i < p->nsample_types; i++)
		if (!strcmp(profile_str(p, p->sample_types[i].type), "samples"))
			return i;
	return p->nsample_types - 1;
}

int profile_sample_type_find(const struct profile *p, const char *spec)
{
	if (!p->nsample_types)
		return -ENOENT;
	if (!spec)
		return profile_value_index(p);
	for (uint32_t i = 0; i < p->nsample_types; i++)
		if (!strcmp(profile_str(p, p->sample_types[i].type), spec))
			return i;
	size_t n = strspn(spec, "0123456789");
	if (!n || spec[n] || n > 9)
		return -EINVAL;
	unsigned long i = strtoul(spec, NULL, 10);
	return i < p->nsample_types ? (int)i : -EINVAL;
}

/* Name of a location that has no lines: its mapping's base name in brackets, or [unknown]. */
static int64_t unresolved_name(struct profile *p, const struct profile_location *l)
{
	char buf[512];
	const char *f = l->mapping_id && l->mapping_id <= p->nmappings
				? profile_str(p, p->mappings[l->mapping_id - 1].filename)
				: "";
	const char *base = strrchr(f, '/');

	base = base ? base + 1 : f;
	if (!*base)
		return profile_intern(p, "[unknown]");
	if (base[0] == '[')
		return profile_intern(p, base);
	snprintf(buf, sizeof(buf), "[%s]", base);
	return profile_intern(p, buf);
}

int64_t profile_frames(struct profile *p, const struct profile_sample *s,
		       struct profile_frame **frames, size_t *cap)
{
	size_t n = 0;

	for (uint32_t i = s->nlocs; i-- > 0;) {
		uint64_t lid = s->location_ids[i];
		if (!lid || lid > p->nlocations)
			continue;
		const struct profile_location *l = &p->locations[lid - 1];
		if (VEC_GROW(*frames, *cap, n + (l->nlines ? l->nlines : 1)))
			return -ENOMEM;
		if (!l->nlines) {
			int64_t name = unresolved_name(p, l);
			if (name < 0)
				return -ENOMEM;
			l = &p->locations[lid - 1];
			(*frames)[n++] = (struct profile_frame){ .name = name, .mapping_id = l->mapping_id,
								 .kind = l->kind };
			continue;
		}
		for (uint32_t j = l->nlines; j-- > 0;) {
			const struct profile_line *ln = &l->lines[j];
			const struct profile_function *f = ln->function_id && ln->function_id <= p->nfunctions
								   ? &p->functions[ln->function_id - 1]
								   : NULL;
			(*frames)[n++] = (struct profile_frame){
				.name = f ? f->name : 0,
				.filename = f ? f->filename : 0,
				.line = ln->line,
				.function_id = ln->function_id,
				.mapping_id = l->mapping_id,
				.kind = j == l->nlines - 1 ? l->kind : FRAME_INLINE,
			};
		}
	}
	return n;
}

int64_t profile_kept_frames(struct profile *p, const struct profile_sample *s,
			    struct profile_frame **frames, size_t *cap, bool inline_frames,
			    bool no_kernel)
{
	int64_t n = profile_frames(p, s, frames, cap), k = 0;

	for (int64_t i = 0; i < n; i++) {
		enum frame_kind kind = (*frames)[i].kind;
		if (!(no_kernel && kind == FRAME_KERNEL) && (inline_frames || kind != FRAME_INLINE))
			(*frames)[k++] = (*frames)[i];
	}
	if (n < 0)
		return n;
	return !k && n && no_kernel ? -1 : k;
}

/* Id maps from src to dst, built while merging. */
struct merge_maps {
	uint64_t *mapping, *function, *location;
	const struct merge_maps *used; /* NULL, or nonzero per entry src's samples use */
};

static int merge_tables(struct profile *dst, const struct profile *src, struct merge_maps *mm)
{
	for (uint64_t i = 0; i < src->nmappings; i++) {
		const struct profile_mapping *m = &src->mappings[i];
		if (mm->used && !mm->used->mapping[i])
			continue;
		int64_t id = profile_add_mapping(dst, m->start, m->limit, m->offset,
						 profile_str(src, m->filename),
						 profile_str(src, m->build_id));
		if (id < 0)
			return (int)id;
		struct profile_mapping *d = &dst->mappings[id - 1];
		d->has_functions = m->has_functions;
		d->has_filenames = m->has_filenames;
		d->has_line_numbers = m->has_line_numbers;
		d->has_inline_frames = m->has_inline_frames;
		d->kind = m->kind;
		mm->mapping[i] = id;
	}
	for (uint64_t i = 0; i < src->nfunctions; i++) {
		const struct profile_function *f = &src->functions[i];
		if (mm->used && !mm->used->function[i])
			continue;
		int64_t id = profile_function(dst, profile_str(src, f->name),
					      profile_str(src, f->system_name),
					      profile_str(src, f->filename), f->start_line);
		if (id < 0)
			return (int)id;
		mm->function[i] = id;
	}
	return 0;
}

static int merge_locations(struct profile *dst, const struct profile *src, struct merge_maps *mm)
{
	struct profile_line *lines = NULL;
	uint32_t cap = 0;

	for (uint64_t i = 0; i < src->nlocations; i++) {
		const struct profile_location *l = &src->locations[i];
		if (mm->used && !mm->used->location[i])
			continue;
		if (VEC_GROW(lines, cap, l->nlines))
			goto nomem;
		for (uint32_t j = 0; j < l->nlines; j++) {
			uint64_t f = l->lines[j].function_id;
			lines[j].function_id = f && f <= src->nfunctions ? mm->function[f - 1] : 0;
			lines[j].line = l->lines[j].line;
		}
		uint64_t m = l->mapping_id && l->mapping_id <= src->nmappings
				     ? mm->mapping[l->mapping_id - 1]
				     : 0;
		int64_t id = l->address || l->nlines != 1 || lines[0].line
				     ? profile_add_location(dst, m, l->address, lines, l->nlines)
				     : profile_simple_location(dst, m, lines[0].function_id, l->kind);
		if (id < 0)
			goto nomem;
		dst->locations[id - 1].kind = l->kind;
		mm->location[i] = id;
	}
	free(lines);
	return 0;
nomem:
	free(lines);
	return -ENOMEM;
}

static int merge_samples(struct profile *dst, const struct profile *src, struct merge_maps *mm)
{
	uint64_t *locs = NULL;
	struct profile_label *labels = NULL;
	size_t cap_locs = 0, cap_labels = 0;
	int err = 0;

	for (uint64_t i = 0; i < src->nsamples && !err; i++) {
		const struct profile_sample *s = &src->samples[i];
		if (VEC_GROW(locs, cap_locs, s->nlocs + 1) ||
		    VEC_GROW(labels, cap_labels, s->nlabels + 1)) {
			err = -ENOMEM;
			break;
		}
		for (uint32_t j = 0; j < s->nlocs; j++) {
			uint64_t l = s->location_ids[j];
			locs[j] = l && l <= src->nlocations ? mm->location[l - 1] : 0;
		}
		for (uint32_t j = 0; j < s->nlabels && !err; j++) {
			int64_t k = profile_intern(dst, profile_str(src, s->labels[j].key));
			int64_t v = s->labels[j].str ? profile_intern(dst, profile_str(src, s->labels[j].str)) : 0;
			int64_t u = s->labels[j].num_unit
					    ? profile_intern(dst, profile_str(src, s->labels[j].num_unit))
					    : 0;
			if (k < 0 || v < 0 || u < 0)
				err = -ENOMEM;
			labels[j] = (struct profile_label){ k, v, s->labels[j].num, u };
		}
		if (!err)
			err = profile_add_sample(dst, locs, s->nlocs, s->values, labels, s->nlabels);
	}
	free(locs);
	free(labels);
	return err;
}

/* Marks in u the locations src's samples use, and the functions and mappings of those. */
static void mark_used(const struct profile *src, struct merge_maps *u)
{
	for (uint64_t i = 0; i < src->nsamples; i++)
		for (uint32_t j = 0; j < src->samples[i].nlocs; j++) {
			uint64_t l = src->samples[i].location_ids[j];
			if (l && l <= src->nlocations)
				u->location[l - 1] = 1;
		}
	for (uint64_t i = 0; i < src->nlocations; i++) {
		const struct profile_location *l = &src->locations[i];
		if (!u->location[i])
			continue;
		if (l->mapping_id && l->mapping_id <= src->nmappings)
			u->mapping[l->mapping_id - 1] = 1;
		for (uint32_t j = 0; j < l->nlines; j++)
			if (l->lines[j].function_id && l->lines[j].function_id <= src->nfunctions)
				u->function[l->lines[j].function_id - 1] = 1;
	}
}

/* profile_merge, copying only the entries marked in used when it is not NULL. */
static int merge(struct profile *dst, const struct profile *src, const struct merge_maps *used)
{
	struct merge_maps mm = { .used = used };
	int err = -ENOMEM;

	if (!dst->nsample_types) {
		for (uint32_t i = 0; i < src->nsample_types; i++)
			if (profile_add_sample_type(dst, profile_str(src, src->sample_types[i].type),
						    profile_str(src, src->sample_types[i].unit)) < 0)
				return -ENOMEM;
		dst->period = src->period;
		dst->period_type.type = profile_intern(dst, profile_str(src, src->period_type.type));
		dst->period_type.unit = profile_intern(dst, profile_str(src, src->period_type.unit));
	}
	if (dst->nsample_types != src->nsample_types)
		return -EINVAL;
	for (uint32_t i = 0; i < src->nsample_types; i++)
		if (strcmp(profile_str(dst, dst->sample_types[i].type),
			   profile_str(src, src->sample_types[i].type)))
			return -EINVAL;
	mm.mapping = calloc(src->nmappings + 1, sizeof(uint64_t));
	mm.function = calloc(src->nfunctions + 1, sizeof(uint64_t));
	mm.location = calloc(src->nlocations + 1, sizeof(uint64_t));
	if (mm.mapping && mm.function && mm.location) {
		err = merge_tables(dst, src, &mm);
		if (!err)
			err = merge_locations(dst, src, &mm);
		if (!err)
			err = merge_samples(dst, src, &mm);
	}
	if (__builtin_add_overflow(dst->duration_nanos, src->duration_nanos, &dst->duration_nanos))
		dst->duration_nanos = src->duration_nanos < 0 ? INT64_MIN : INT64_MAX; /* any file's */
	if (!dst->time_nanos || (src->time_nanos && src->time_nanos < dst->time_nanos))
		dst->time_nanos = src->time_nanos;
	free(mm.mapping);
	free(mm.function);
	free(mm.location);
	return err;
}

/* Adds p's values of type t to *sum; -ERANGE, -EOVERFLOW as profile_values_check. */
static int values_sum(const struct profile *p, uint32_t t, int64_t *sum)
{
	for (uint64_t i = 0; i < p->nsamples; i++) {
		int64_t v = p->samples[i].values[t];
		if (v < 0)
			return -ERANGE;
		if (__builtin_add_overflow(*sum, v, sum))
			return -EOVERFLOW;
	}
	return 0;
}

int profile_values_check(const struct profile *a, const struct profile *b)
{
	if (b && b->nsample_types != a->nsample_types)
		b = NULL;
	for (uint32_t t = 0; t < a->nsample_types; t++) {
		int64_t sum = 0;
		int err = values_sum(a, t, &sum);
		if (!err && b)
			err = values_sum(b, t, &sum);
		if (err)
			return err;
	}
	return 0;
}

int profile_merge_used(struct profile *dst, const struct profile *src)
{
	struct merge_maps u = {
		calloc(src->nmappings + 1, sizeof(uint64_t)), calloc(src->nfunctions + 1, sizeof(uint64_t)),
		calloc(src->nlocations + 1, sizeof(uint64_t)), NULL
	};
	int err = -ENOMEM;

	if (u.mapping && u.function && u.location) {
		mark_used(src, &u);
		u.mapping[0] = 1; /* pprof's main binary stays */
		err = merge(dst, src, &u);
	}
	free(u.mapping);
	free(u.function);
	free(u.location);
	return err;
}

int profile_merge(struct profile *dst, const struct profile *src)
{
	return merge(dst, src, NULL);
}

/* Orders pids for counting the distinct ones. */
static int pid_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Sorts the pids of the samples that have one and counts the runs. */
uint64_t profile_locations_used(const struct profile *p)
{
	uint8_t *seen = calloc(p->nlocations / 8 + 1, 1);
	uint64_t n = 0;

	if (!seen)
		return p->nlocations;
	for (uint64_t i = 0; i < p->nsamples; i++)
		for (uint32_t j = 0; j < p->samples[i].nlocs; j++) {
			uint64_t id = p->samples[i].location_ids[j];
			if (id && id <= p->nlocations && !(seen[id / 8] & 1u << id % 8)) {
				seen[id / 8] |= (uint8_t)(1u << id % 8);
				n++;
			}
		}
	free(seen);
	return n;
}

uint64_t profile_distinct_pids(const struct profile *p)
{
	int64_t *pids = malloc((p->nsamples + 1) * sizeof(*pids));
	uint64_t n = 0, distinct = 0;

	if (!pids)
		return 0;
	for (uint64_t i = 0; i < p->nsamples; i++) {
		int64_t pid = profile_label_num(p, &p->samples[i], "pid", -1);
		if (pid > 0)
			pids[n++] = pid;
	}
	qsort(pids, n, sizeof(*pids), pid_cmp);
	for (uint64_t i = 0; i < n; i++)
		distinct += !i || pids[i] != pids[i - 1];
	free(pids);
	return distinct;
}

/* Every type of that name counts (a profile may repeat one); loading bounds the sums. */
int64_t profile_type_total(const struct profile *p, const char *name)
{
	int64_t sum = 0;

	for (uint32_t t = 0; t < p->nsample_types; t++) {
		if (strcmp(profile_str(p, p->sample_types[t].type), name))
			continue;
		for (uint64_t i = 0; i < p->nsamples; i++)
			sum += p->samples[i].values[t];
	}
	return sum;
}

/* Whether mapping m is a program's file (a path, user code, not a shared library). */
static bool program_mapping(const struct profile *p, const struct profile_mapping *m)
{
	const char *file = profile_str(p, m->filename), *base = strrchr(file, '/');
	const char *so = base ? strstr(base, ".so") : NULL;

	if (file[0] != '/' || m->kind != FRAME_USER || m->runtime != FRAME_NATIVE)
		return false;
	return !so || (so[3] && so[3] != '.' && so[3] != '_' && so[3] != ' ');
}

/* pprof's main program: see profile.h. */
uint64_t profile_main_mapping(const struct profile *p)
{
	uint64_t *n = calloc(p->nmappings + 1, sizeof(*n)), best = 0;

	for (uint64_t i = 0; n && i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		for (uint32_t k = s->nlocs; k-- > 0;) {
			uint64_t loc = s->location_ids[k];
			uint64_t m = loc && loc <= p->nlocations ? p->locations[loc - 1].mapping_id : 0;
			if (m && m <= p->nmappings && program_mapping(p, &p->mappings[m - 1])) {
				n[m]++;
				break;
			}
		}
	}
	for (uint64_t m = 1; n && m <= p->nmappings; m++)
		if (n[m] > n[best])
			best = m;
	free(n);
	return best;
}
