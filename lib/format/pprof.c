/* profile.proto encoder and decoder: the protobuf wire format by hand, gzip through zlib. */
#include "format/pprof.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/hash.h"
#include "base/hashtab.h"
#include "base/vec.h"

/* Field numbers of message Profile. */
enum {
	P_SAMPLE_TYPE = 1, P_SAMPLE, P_MAPPING, P_LOCATION, P_FUNCTION, P_STRING_TABLE,
	P_DROP_FRAMES, P_KEEP_FRAMES, P_TIME_NANOS, P_DURATION_NANOS, P_PERIOD_TYPE, P_PERIOD,
	P_COMMENT, P_DEFAULT_SAMPLE_TYPE,
};

/* Wire types. */
enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

/* ---- encoding ---- */

/* Growing output buffer. */
struct pbuf {
	uint8_t *b;
	size_t len, cap;
};

/* Bytes a varint of v takes. */
static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Size of an optional varint field (proto3 leaves zeros out); every field number here is < 16,
 * so a key is one byte. */
static size_t fvarint_size(uint64_t v)
{
	return v ? 1 + varint_len(v) : 0;
}

/* Size of a length-delimited field with a body of n bytes. */
static size_t flen_size(size_t n)
{
	return 1 + varint_len(n) + n;
}

/* Makes room for n more bytes. */
static int pbuf_reserve(struct pbuf *b, size_t n)
{
	return n > SIZE_MAX - b->len ? -ENOMEM : VEC_GROW(b->b, b->cap, b->len + n);
}

/* Appends a varint; room must be reserved. */
static void put_varint(struct pbuf *b, uint64_t v)
{
	uint8_t *o = b->b + b->len;

	while (v >= 0x80) {
		*o++ = (uint8_t)v | 0x80;
		v >>= 7;
	}
	*o++ = (uint8_t)v;
	b->len = o - b->b;
}

/* Appends a varint field unless v is zero. */
static void put_fvarint(struct pbuf *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	b->b[b->len++] = field << 3 | WT_VARINT;
	put_varint(b, v);
}

/* Appends the key and length of a length-delimited field; its n body bytes follow. */
static void put_flen(struct pbuf *b, unsigned field, size_t n)
{
	b->b[b->len++] = field << 3 | WT_LEN;
	put_varint(b, n);
}

/* Body size of a packed run of varints. */
static size_t packed_size(const uint64_t *v, size_t n)
{
	size_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += varint_len(v[i]);
	return s;
}

/* Appends a packed repeated field (nothing for an empty run). */
static void put_packed(struct pbuf *b, unsigned field, const uint64_t *v, size_t n)
{
	if (!n)
		return;
	put_flen(b, field, packed_size(v, n));
	for (size_t i = 0; i < n; i++)
		put_varint(b, v[i]);
}

/* Size of a packed field, key included (0 for an empty run). */
static size_t fpacked_size(const uint64_t *v, size_t n)
{
	return n ? flen_size(packed_size(v, n)) : 0;
}

/* Body size of a ValueType message. */
static size_t value_type_size(const struct profile_value_type *vt)
{
	return fvarint_size(vt->type) + fvarint_size(vt->unit);
}

/* Appends a ValueType message as field `field`. */
static int put_value_type(struct pbuf *b, unsigned field, const struct profile_value_type *vt)
{
	size_t n = value_type_size(vt);

	if (pbuf_reserve(b, flen_size(n)))
		return -ENOMEM;
	put_flen(b, field, n);
	put_fvarint(b, 1, vt->type);
	put_fvarint(b, 2, vt->unit);
	return 0;
}

/* Body size of a Label message. */
static size_t label_size(const struct profile_label *l)
{
	return fvarint_size(l->key) + fvarint_size(l->str) + fvarint_size((uint64_t)l->num) +
	       fvarint_size(l->num_unit);
}

/* Body size of a Sample message. */
static size_t sample_size(const struct profile *p, const struct profile_sample *s)
{
	size_t n = fpacked_size(s->location_ids, s->nlocs) +
		   fpacked_size((const uint64_t *)s->values, p->nsample_types);

	for (uint32_t i = 0; i < s->nlabels; i++)
		n += flen_size(label_size(&s->labels[i]));
	return n;
}

/* Appends one Sample message. */
static int put_sample(struct pbuf *b, const struct profile *p, const struct profile_sample *s)
{
	size_t n = sample_size(p, s);

	if (pbuf_reserve(b, flen_size(n)))
		return -ENOMEM;
	put_flen(b, P_SAMPLE, n);
	put_packed(b, 1, s->location_ids, s->nlocs);
	put_packed(b, 2, (const uint64_t *)s->values, p->nsample_types);
	for (uint32_t i = 0; i < s->nlabels; i++) {
		const struct profile_label *l = &s->labels[i];
		put_flen(b, 3, label_size(l));
		put_fvarint(b, 1, l->key);
		put_fvarint(b, 2, l->str);
		put_fvarint(b, 3, (uint64_t)l->num);
		put_fvarint(b, 4, l->num_unit);
	}
	return 0;
}

/* Appends, as field `field`, a message whose fields 1..n are the varints v (zeros left out, as
 * proto3 does): Mapping, Function and Line are all of this shape. */
static int put_fields(struct pbuf *b, unsigned field, const uint64_t *v, size_t n)
{
	size_t len = 0;

	for (size_t i = 0; i < n; i++)
		len += fvarint_size(v[i]);
	if (pbuf_reserve(b, flen_size(len)))
		return -ENOMEM;
	put_flen(b, field, len);
	for (size_t i = 0; i < n; i++)
		put_fvarint(b, i + 1, v[i]);
	return 0;
}

/* Appends one Mapping message with id `id`. */
static int put_mapping(struct pbuf *b, uint64_t id, const struct profile_mapping *m)
{
	const uint64_t v[] = { id, m->start, m->limit, m->offset, m->filename, m->build_id,
			       m->has_functions, m->has_filenames, m->has_line_numbers,
			       m->has_inline_frames };

	return put_fields(b, P_MAPPING, v, sizeof(v) / sizeof(v[0]));
}

/* Body size of a Line message. */
static size_t line_size(const struct profile_line *l)
{
	return fvarint_size(l->function_id) + fvarint_size((uint64_t)l->line);
}

/* Appends one Location message with id `id` and its Line messages. */
static int put_location(struct pbuf *b, uint64_t id, const struct profile_location *l)
{
	size_t n = fvarint_size(id) + fvarint_size(l->mapping_id) + fvarint_size(l->address);

	for (uint32_t i = 0; i < l->nlines; i++)
		n += flen_size(line_size(&l->lines[i]));
	if (pbuf_reserve(b, flen_size(n)))
		return -ENOMEM;
	put_flen(b, P_LOCATION, n);
	put_fvarint(b, 1, id);
	put_fvarint(b, 2, l->mapping_id);
	put_fvarint(b, 3, l->address);
	for (uint32_t i = 0; i < l->nlines; i++) {
		const uint64_t v[] = { l->lines[i].function_id, (uint64_t)l->lines[i].line };
		if (put_fields(b, 4, v, 2))
			return -ENOMEM;
	}
	return 0;
}

/* Appends one Function message with id `id`. */
static int put_function(struct pbuf *b, uint64_t id, const struct profile_function *f)
{
	const uint64_t v[] = { id, f->name, f->system_name, f->filename, (uint64_t)f->start_line };

	return put_fields(b, P_FUNCTION, v, sizeof(v) / sizeof(v[0]));
}

/* Appends the string table (every string, "" at index 0 included). */
static int put_strings(struct pbuf *b, const struct strtab *t)
{
	for (uint32_t i = 0; i < t->n; i++) {
		if (pbuf_reserve(b, flen_size(t->lens[i])))
			return -ENOMEM;
		put_flen(b, P_STRING_TABLE, t->lens[i]);
		memcpy(b->b + b->len, t->strs[i], t->lens[i]);
		b->len += t->lens[i];
	}
	return 0;
}

/* Appends the scalar Profile fields after the string table. */
static int put_scalars(struct pbuf *b, const struct profile *p)
{
	uint64_t *c = NULL;

	if (pbuf_reserve(b, 3 * 11))
		return -ENOMEM;
	put_fvarint(b, P_TIME_NANOS, (uint64_t)p->time_nanos);
	put_fvarint(b, P_DURATION_NANOS, (uint64_t)p->duration_nanos);
	if ((p->period_type.type || p->period_type.unit) &&
	    put_value_type(b, P_PERIOD_TYPE, &p->period_type))
		return -ENOMEM;
	if (p->ncomments && !(c = malloc(p->ncomments * sizeof(*c))))
		return -ENOMEM;
	for (uint32_t i = 0; i < p->ncomments; i++)
		c[i] = p->comments[i];
	int err = pbuf_reserve(b, 11 + 11 + fpacked_size(c, p->ncomments) + 11);
	if (!err) {
		put_fvarint(b, P_PERIOD, (uint64_t)p->period);
		put_packed(b, P_COMMENT, c, p->ncomments);
		put_fvarint(b, P_DEFAULT_SAMPLE_TYPE, p->default_sample_type);
	}
	free(c);
	return err;
}

/* Appends every message of p in field order, as Go's encoder does. */
static int put_profile(struct pbuf *b, const struct profile *p)
{
	int err = 0;

	for (uint32_t i = 0; i < p->nsample_types && !err; i++)
		err = put_value_type(b, P_SAMPLE_TYPE, &p->sample_types[i]);
	for (uint64_t i = 0; i < p->nsamples && !err; i++)
		err = put_sample(b, p, &p->samples[i]);
	uint64_t main_id = profile_main_mapping(p); /* first: pprof's main program */
	if (main_id)
		err = put_mapping(b, main_id, &p->mappings[main_id - 1]);
	for (uint64_t i = 0; i < p->nmappings && !err; i++)
		if (i + 1 != main_id)
			err = put_mapping(b, i + 1, &p->mappings[i]);
	for (uint64_t i = 0; i < p->nlocations && !err; i++)
		err = put_location(b, i + 1, &p->locations[i]);
	for (uint64_t i = 0; i < p->nfunctions && !err; i++)
		err = put_function(b, i + 1, &p->functions[i]);
	if (!err)
		err = put_strings(b, &p->strings);
	if (!err)
		err = put_scalars(b, p);
	return err;
}

/* True when every string id of the tables and metadata exists. */
static bool check_tables(const struct profile *p)
{
	uint32_t ns = p->strings.n;
	bool ok = p->period_type.type < ns && p->period_type.unit < ns &&
		  p->default_sample_type < ns;

	for (uint32_t i = 0; i < p->nsample_types; i++)
		ok &= p->sample_types[i].type < ns && p->sample_types[i].unit < ns;
	for (uint32_t i = 0; i < p->ncomments; i++)
		ok &= p->comments[i] < ns;
	for (uint64_t i = 0; i < p->nmappings; i++)
		ok &= p->mappings[i].filename < ns && p->mappings[i].build_id < ns;
	for (uint64_t i = 0; i < p->nfunctions; i++) {
		const struct profile_function *f = &p->functions[i];
		ok &= f->name < ns && f->system_name < ns && f->filename < ns;
	}
	for (uint64_t i = 0; i < p->nlocations; i++) {
		const struct profile_location *l = &p->locations[i];
		ok &= l->mapping_id <= p->nmappings;
		for (uint32_t j = 0; j < l->nlines; j++)
			ok &= l->lines[j].function_id <= p->nfunctions;
	}
	return ok;
}

/* True when every sample references existing locations and strings. */
static bool check_samples(const struct profile *p)
{
	uint32_t ns = p->strings.n;
	bool ok = true;

	for (uint64_t i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		for (uint32_t j = 0; j < s->nlocs; j++)
			ok &= s->location_ids[j] - 1 < p->nlocations;
		for (uint32_t j = 0; j < s->nlabels; j++)
			ok &= s->labels[j].key < ns && s->labels[j].str < ns &&
			      s->labels[j].num_unit < ns;
	}
	return ok;
}

/* Gzips in[0..len) into a malloc'd buffer at zlib's default level: about 10% smaller than the
 * fastest level (Go's runtime/pprof uses it) for a few ms more on a 30 s system-wide profile. */
static int gzip_buf(const uint8_t *in, size_t len, void **out, size_t *olen)
{
	z_stream z;
	int rc;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	size_t cap = deflateBound(&z, len) + 64, in_left = len, out_left = cap;
	uint8_t *o = malloc(cap);
	if (!o) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)in;
	z.next_out = o;
	do {
		uInt ai = in_left > UINT_MAX ? UINT_MAX : in_left;
		uInt ao = out_left > UINT_MAX ? UINT_MAX : out_left;
		z.avail_in = ai;
		z.avail_out = ao;
		rc = deflate(&z, ai == in_left ? Z_FINISH : Z_NO_FLUSH);
		in_left -= ai - z.avail_in;
		out_left -= ao - z.avail_out;
	} while (rc == Z_OK);
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(o);
		return -ENOMEM;
	}
	*out = o;
	*olen = cap - out_left;
	return 0;
}

/* Checks every id, encodes in one buffer, gzips it when asked. */
int pprof_encode(const struct profile *p, bool gzip, void **out, size_t *len)
{
	struct pbuf b = { 0 };
	int err;

	*out = NULL;
	*len = 0;
	if (!check_tables(p) || !check_samples(p))
		return -EINVAL;
	err = put_profile(&b, p);
	if (!err && !b.b)
		err = pbuf_reserve(&b, 1);
	if (err) {
		free(b.b);
		return err;
	}
	if (!gzip) {
		*out = b.b;
		*len = b.len;
		return 0;
	}
	err = gzip_buf(b.b, b.len, out, len);
	free(b.b);
	return err;
}

/* ---- the compact form (pprof_encode_flags) ---- */

/* Source ids → ids in the compact copy, and the table that shares one location per
 * (mapping, lines). */
struct compactor {
	const struct profile *src;
	struct profile *dst;
	unsigned flags;
	uint64_t *map_ids, *fn_ids, *loc_ids; /* [src id] → dst id ([0] = 0); before the copy,
					       * 1 marks the mappings and functions used */
	uint64_t *loc_uses;                   /* [src id - 1] → references from samples */
	struct hashtab locs;                  /* dst location ids - 1 by mapping and lines */
	int64_t k_tid, k_thread;              /* src string ids of the dropped keys, or -1 */
};

/* Copies the profile-wide fields (profile_copy_scalars) and the interval's time. */
static int compact_scalars(struct compactor *c)
{
	int err = profile_copy_scalars(c->dst, c->src);

	c->dst->time_nanos = c->src->time_nanos;
	c->dst->duration_nanos = c->src->duration_nanos;
	return err;
}

/* Counts the samples' references to each location, and marks (1) the mappings and functions
 * of the locations referenced: the copy keeps only those. A recorder's profile keeps every
 * location it ever resolved (recorder.h), so an interval of a long recording copied in full
 * carried the whole recording's tables: its size and the cost of each cut grew with the age of
 * the recording (18 kB an interval after 20 minutes, 6 kB at first). */
static void mark_used(struct compactor *c)
{
	const struct profile *s = c->src;

	for (uint64_t i = 0; i < s->nsamples; i++)
		for (uint32_t j = 0; j < s->samples[i].nlocs; j++)
			c->loc_uses[s->samples[i].location_ids[j] - 1]++;
	for (uint64_t i = 0; i < s->nlocations; i++) {
		const struct profile_location *l = &s->locations[i];
		if (!c->loc_uses[i])
			continue;
		if (l->mapping_id)
			c->map_ids[l->mapping_id] = 1;
		for (uint32_t j = 0; j < l->nlines; j++)
			if (l->lines[j].function_id)
				c->fn_ids[l->lines[j].function_id] = 1;
	}
}

/* Copies the mappings and functions mark_used marked, remembering their new ids. */
static int compact_tables(struct compactor *c)
{
	const struct profile *s = c->src;

	for (uint64_t i = 0; i < s->nmappings; i++) {
		const struct profile_mapping *m = &s->mappings[i];
		if (!c->map_ids[i + 1])
			continue;
		int64_t id = profile_add_mapping(c->dst, m->start, m->limit, m->offset,
						 profile_str(s, m->filename), profile_str(s, m->build_id));
		if (id < 0)
			return (int)id;
		struct profile_mapping *dm = &c->dst->mappings[id - 1];
		dm->has_functions = m->has_functions;
		dm->has_filenames = m->has_filenames;
		dm->has_line_numbers = m->has_line_numbers;
		dm->has_inline_frames = m->has_inline_frames;
		dm->kind = m->kind;
		c->map_ids[i + 1] = id;
	}
	for (uint64_t i = 0; i < s->nfunctions; i++) {
		const struct profile_function *f = &s->functions[i];
		bool sys = !(c->flags & PPROF_NO_SYSTEM_NAMES); /* else "" */
		if (!c->fn_ids[i + 1])
			continue;
		int64_t id = profile_function(c->dst, profile_str(s, f->name),
					      sys ? profile_str(s, f->system_name) : "",
					      profile_str(s, f->filename), f->start_line);
		if (id < 0)
			return (int)id;
		c->fn_ids[i + 1] = id;
	}
	return 0;
}

/* Hash of a location's mapping and lines (in the copy's ids). */
static uint64_t compact_loc_hash(const struct profile_location *l)
{
	uint64_t h = hash_mix64(l->mapping_id ^ (uint64_t)l->nlines << 48);

	for (uint32_t i = 0; i < l->nlines; i++)
		h = hash_mix64(h ^ l->lines[i].function_id ^ (uint64_t)l->lines[i].line << 32);
	return h;
}

/* Whether two locations name the same mapping and the same lines. */
static bool compact_loc_same(const struct profile_location *a, const struct profile_location *b)
{
	return a->mapping_id == b->mapping_id && a->nlines == b->nlines && a->kind == b->kind &&
	       (!a->nlines || !memcmp(a->lines, b->lines, a->nlines * sizeof(*a->lines)));
}

/* Whether location id + 1 of the copy (ctx) is the location key. */
static bool compact_loc_eq(const void *ctx, uint32_t id, const void *key)
{
	return compact_loc_same(key, &((const struct profile *)ctx)->locations[id]);
}

/* Adds location i of the source to the copy (lines: room for its lines). With
 * PPROF_FUNCTION_LINES one location per mapping and lines, so the samples of every instruction of
 * a line share it, at the lowest of their addresses (report --annotate and pprof -disasm then
 * find the line's code, not each instruction), at address 0 for kernel and JIT code (which is
 * never annotated) and for the unresolved addresses of a mapping (one "[mapping]" frame to
 * every report: the addresses, often garbage of a broken unwind, stay with --addresses). */
static int compact_location_of(struct compactor *c, uint64_t i, struct profile_line *lines)
{
	const struct profile_location *l = &c->src->locations[i];
	bool share = c->flags & PPROF_FUNCTION_LINES;
	bool no_addr = !l->nlines || l->kind == FRAME_KERNEL || l->kind == FRAME_JIT;
	uint64_t addr = share && no_addr ? 0 : l->address;

	for (uint32_t j = 0; j < l->nlines; j++)
		lines[j] = (struct profile_line){ c->fn_ids[l->lines[j].function_id],
						  l->lines[j].line };
	struct profile_location key = { .mapping_id = c->map_ids[l->mapping_id],
					.lines = lines, .nlines = l->nlines, .kind = l->kind };
	uint64_t h = compact_loc_hash(&key);
	int64_t found = share ? hashtab_find(&c->locs, h, compact_loc_eq, c->dst, &key) : -1;
	if (found >= 0) {
		struct profile_location *d = &c->dst->locations[found];
		d->address = d->address < addr ? d->address : addr;
		c->loc_ids[i + 1] = found + 1;
		return 0;
	}
	if (share && c->dst->nlocations >= UINT32_MAX - 1)
		return -ENOMEM;
	int64_t id = profile_add_location(c->dst, key.mapping_id, addr, lines, l->nlines);
	if (id < 0)
		return (int)id;
	c->dst->locations[id - 1].kind = l->kind;
	c->loc_ids[i + 1] = id;
	return share ? hashtab_add(&c->locs, h, id - 1) : 0;
}

/* compact_location_of with a buffer for the location's lines. */
static int compact_location(struct compactor *c, uint64_t i)
{
	struct profile_line *lines = malloc((c->src->locations[i].nlines + 1) * sizeof(*lines));
	int err = lines ? compact_location_of(c, i, lines) : -ENOMEM;

	free(lines);
	return err;
}

/* Whether the copy keeps label l. */
static bool compact_keeps(const struct compactor *c, const struct profile_label *l)
{
	return !(c->flags & PPROF_NO_THREAD_LABELS) || (l->key != c->k_tid && l->key != c->k_thread);
}

/* Adds one source sample to the copy (profile_add_sample merges it into an equal one), without
 * the tid and thread labels under PPROF_NO_THREAD_LABELS. */
static int compact_sample(struct compactor *c, const struct profile_sample *s)
{
	uint64_t *locs = malloc((s->nlocs + 1) * sizeof(*locs));
	struct profile_label *labels = malloc((s->nlabels + 1) * sizeof(*labels));
	uint32_t nl = 0;
	int err = locs && labels ? 0 : -ENOMEM;

	for (uint32_t i = 0; !err && i < s->nlocs; i++)
		locs[i] = c->loc_ids[s->location_ids[i]];
	for (uint32_t i = 0; !err && i < s->nlabels; i++) {
		const struct profile_label *l = &s->labels[i];
		if (!compact_keeps(c, l))
			continue;
		int64_t k = profile_intern(c->dst, profile_str(c->src, l->key));
		int64_t v = l->str ? profile_intern(c->dst, profile_str(c->src, l->str)) : 0;
		int64_t u = l->num_unit ? profile_intern(c->dst, profile_str(c->src, l->num_unit)) : 0;
		if (k < 0 || v < 0 || u < 0)
			err = -ENOMEM;
		labels[nl++] = (struct profile_label){ k, v, l->num, u };
	}
	if (!err)
		err = profile_add_sample(c->dst, locs, s->nlocs, s->values, labels, nl);
	free(locs);
	free(labels);
	return err;
}

/* A source id and how often the copy refers to it, to number the copy's most used strings and
 * locations first: their ids, written again in every sample, then take one varint byte. */
struct id_count {
	uint64_t count, id;
};

/* qsort order: most used first, then by source id (deterministic output). */
static int id_count_cmp(const void *a, const void *b)
{
	const struct id_count *x = a, *y = b;

	return CMP3(y->count, x->count) ?: CMP3(x->id, y->id);
}

/* Counts, per source string, the references the copy will make to it (kept labels of every
 * sample, the functions and mappings it keeps; the few profile-wide ones are left to come
 * last). */
static void count_strings(const struct compactor *c, uint32_t *n)
{
	const struct profile *s = c->src;

	for (uint64_t i = 0; i < s->nsamples; i++)
		for (uint32_t j = 0; j < s->samples[i].nlabels; j++) {
			const struct profile_label *l = &s->samples[i].labels[j];
			if (compact_keeps(c, l))
				n[l->key]++, n[l->str]++, n[l->num_unit]++;
		}
	for (uint64_t i = 0; i < s->nfunctions; i++) {
		const struct profile_function *f = &s->functions[i];
		if (!c->fn_ids[i + 1])
			continue;
		n[f->name]++, n[f->filename]++;
		n[c->flags & PPROF_NO_SYSTEM_NAMES ? 0 : f->system_name]++;
	}
	for (uint64_t i = 0; i < s->nmappings; i++)
		if (c->map_ids[i + 1])
			n[s->mappings[i].filename]++, n[s->mappings[i].build_id]++;
}

/* Interns the strings the copy refers to 8 times or more, most used first ("" stays id 0);
 * the others are interned as the copy first uses them. */
static int intern_by_use(struct compactor *c)
{
	uint32_t ns = c->src->strings.n;
	uint32_t *n = calloc(ns + 1, sizeof(*n));
	struct id_count *often = NULL;
	size_t k = 0, cap = 0;
	int err = n ? 0 : -ENOMEM;

	if (!err)
		count_strings(c, n);
	for (uint32_t i = 1; !err && i < ns; i++)
		if (n[i] >= 8 && !(err = VEC_GROW(often, cap, k + 1)))
			often[k++] = (struct id_count){ n[i], i };
	if (!err && k)
		qsort(often, k, sizeof(*often), id_count_cmp);
	for (uint32_t i = 0; !err && i < k; i++)
		if (profile_intern(c->dst, profile_str(c->src, often[i].id)) < 0)
			err = -ENOMEM;
	free(n);
	free(often);
	return err;
}

/* Adds the locations the samples use to the copy, the most sampled first. */
static int copy_locations_by_use(struct compactor *c)
{
	const struct profile *s = c->src;
	struct id_count *n = NULL;
	size_t k = 0, cap = 0;
	int err = 0;

	for (uint64_t i = 0; !err && i < s->nlocations; i++)
		if (c->loc_uses[i] && !(err = VEC_GROW(n, cap, k + 1)))
			n[k++] = (struct id_count){ c->loc_uses[i], i };
	if (!err && (c->flags & PPROF_FUNCTION_LINES) && hashtab_reserve(&c->locs, k))
		err = -ENOMEM;
	if (!err && k)
		qsort(n, k, sizeof(*n), id_count_cmp);
	for (uint64_t i = 0; !err && i < k; i++)
		err = compact_location(c, n[i].id);
	free(n);
	return err;
}

/* Fills dst (initialized, empty) with the compact copy of src. */
static int compact_copy(struct compactor *c)
{
	const struct profile *s = c->src;
	int err;

	c->map_ids = calloc(s->nmappings + 1, sizeof(uint64_t));
	c->fn_ids = calloc(s->nfunctions + 1, sizeof(uint64_t));
	c->loc_ids = calloc(s->nlocations + 1, sizeof(uint64_t));
	c->loc_uses = calloc(s->nlocations + 1, sizeof(uint64_t));
	c->k_tid = strtab_find(&s->strings, "tid", 3);
	c->k_thread = strtab_find(&s->strings, "thread", 6);
	err = c->map_ids && c->fn_ids && c->loc_ids && c->loc_uses ? 0 : -ENOMEM;
	if (!err)
		mark_used(c);
	if (!err)
		err = intern_by_use(c);
	if (!err)
		err = compact_scalars(c);
	if (!err)
		err = compact_tables(c);
	if (!err)
		err = copy_locations_by_use(c);
	for (uint64_t i = 0; !err && i < s->nsamples; i++)
		err = compact_sample(c, &s->samples[i]);
	free(c->map_ids);
	free(c->fn_ids);
	free(c->loc_ids);
	free(c->loc_uses);
	hashtab_release(&c->locs);
	return err;
}

/* Encodes p, first rewritten into the compact form flags ask for (ids checked first). */
int pprof_encode_flags(const struct profile *p, bool gzip, unsigned flags, void **out,
		       size_t *len)
{
	struct profile d;
	struct compactor c = { .src = p, .dst = &d, .flags = flags };
	int err;

	*out = NULL;
	*len = 0;
	if (!flags)
		return pprof_encode(p, gzip, out, len);
	if (!check_tables(p) || !check_samples(p))
		return -EINVAL;
	if (profile_init(&d))
		return -ENOMEM;
	err = compact_copy(&c);
	if (!err)
		err = pprof_encode(&d, gzip, out, len);
	profile_release(&d);
	return err;
}

/* ---- decoding ---- */

/* A range of input bytes being read. */
struct pbr {
	const uint8_t *p, *end;
};

/* One field as read: number, wire type, value (varint or fixed) or body (length-delimited). */
struct pbf {
	uint32_t num;
	int wt;
	uint64_t v;
	struct pbr sub;
};

/* Reads a varint of at most 10 bytes. */
static int rd_varint(struct pbr *r, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (r->p == r->end)
			return -EINVAL;
		uint8_t c = *r->p++;
		x |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -EINVAL;
}

/* Reads n little-endian bytes. */
static int rd_fixed(struct pbr *r, unsigned n, uint64_t *v)
{
	if ((size_t)(r->end - r->p) < n)
		return -EINVAL;
	*v = 0;
	for (unsigned i = 0; i < n; i++)
		*v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return 0;
}

/* Reads one field (key and payload); groups and unknown wire types are errors. */
static int rd_field(struct pbr *r, struct pbf *f)
{
	uint64_t key;

	if (rd_varint(r, &key) || key >> 3 == 0 || key >> 3 > 0x1fffffff)
		return -EINVAL;
	f->num = key >> 3;
	f->wt = key & 7;
	switch (f->wt) {
	case WT_VARINT:
		return rd_varint(r, &f->v);
	case WT_I64:
		return rd_fixed(r, 8, &f->v);
	case WT_I32:
		return rd_fixed(r, 4, &f->v);
	case WT_LEN:
		if (rd_varint(r, &f->v) || f->v > (uint64_t)(r->end - r->p))
			return -EINVAL;
		f->sub = (struct pbr){ r->p, r->p + f->v };
		r->p += f->v;
		return 0;
	}
	return -EINVAL;
}

/* Reads the varint fields numbered 1..n-1 of a message into v[num]; other fields are skipped,
 * a known field with another wire type is an error. */
static int rd_scalars(struct pbr r, uint64_t *v, unsigned n)
{
	struct pbf f;

	while (r.p < r.end) {
		if (rd_field(&r, &f))
			return -EINVAL;
		if (f.num >= n)
			continue;
		if (f.wt != WT_VARINT)
			return -EINVAL;
		v[f.num] = f.v;
	}
	return 0;
}

/* A growing array of 64-bit values. */
struct u64vec {
	uint64_t *v;
	size_t n, cap;
};

/* Appends x, growing the array. */
static int u64vec_push(struct u64vec *a, uint64_t x)
{
	if (VEC_GROW(a->v, a->cap, a->n + 1))
		return -ENOMEM;
	a->v[a->n++] = x;
	return 0;
}

/* Appends a repeated varint field: one value (unpacked) or a packed run. */
static int rd_repeated(const struct pbf *f, struct u64vec *out)
{
	if (f->wt == WT_VARINT)
		return u64vec_push(out, f->v);
	if (f->wt != WT_LEN)
		return -EINVAL;
	struct pbr r = f->sub;
	while (r.p < r.end) {
		uint64_t v;
		if (rd_varint(&r, &v))
			return -EINVAL;
		if (u64vec_push(out, v))
			return -ENOMEM;
	}
	return 0;
}

/* File ids (any nonzero uint64) to our dense ids: a plain array while the file's ids run 1, 2,
 * 3..., then the file id of each value and a hash table of them once they do not. */
struct idmap {
	struct u64vec vals; /* in the order put */
	struct u64vec keys; /* sparse: the file id of each value */
	struct hashtab index; /* sparse: indexes into vals by file id */
	bool sparse;
};

/* Frees the map's arrays. */
static void idmap_release(struct idmap *m)
{
	free(m->vals.v);
	free(m->keys.v);
	hashtab_release(&m->index);
}

/* Whether value id of the map (ctx) was put for file id *key. */
static bool idmap_eq(const void *ctx, uint32_t id, const void *key)
{
	return ((const struct idmap *)ctx)->keys.v[id] == *(const uint64_t *)key;
}

/* Index of the value of file id key in a sparse map, or -1. */
static int64_t idmap_find(const struct idmap *m, uint64_t key)
{
	return hashtab_find(&m->index, hash_mix64(key), idmap_eq, m, &key);
}

/* Makes the map sparse: keys and the index for the values put so far (file ids 1..n). */
static int idmap_make_sparse(struct idmap *m)
{
	if (m->vals.n >= UINT32_MAX || hashtab_reserve(&m->index, m->vals.n + 1))
		return -ENOMEM;
	for (size_t i = 0; i < m->vals.n; i++)
		if (u64vec_push(&m->keys, i + 1) || hashtab_add(&m->index, hash_mix64(i + 1), i))
			return -ENOMEM;
	m->sparse = true;
	return 0;
}

/* Records file id key (nonzero) as val; a repeated id is -EINVAL. */
static int idmap_put(struct idmap *m, uint64_t key, uint64_t val)
{
	if (!key)
		return -EINVAL;
	if (!m->sparse && key == m->vals.n + 1)
		return u64vec_push(&m->vals, val);
	if (!m->sparse && idmap_make_sparse(m))
		return -ENOMEM;
	if (idmap_find(m, key) >= 0)
		return -EINVAL; /* the same id twice */
	if (m->vals.n >= UINT32_MAX || u64vec_push(&m->keys, key) || u64vec_push(&m->vals, val) ||
	    hashtab_add(&m->index, hash_mix64(key), m->vals.n - 1))
		return -ENOMEM;
	return 0;
}

/* Our id for file id key, 0 when unknown. */
static uint64_t idmap_get(const struct idmap *m, uint64_t key)
{
	if (!m->sparse)
		return key - 1 < m->vals.n ? m->vals.v[key - 1] : 0;
	int64_t i = idmap_find(m, key);
	return i >= 0 ? m->vals.v[i] : 0;
}

/* Decoder state: file string indexes and ids to ours, scratch arrays reused per message. */
struct dec {
	struct profile *p;
	struct pbr in;
	uint32_t *strs; /* file string index -> our string id */
	size_t nstrs, cap_strs;
	struct idmap maps, fns, locs;
	struct u64vec ids, vals;
	struct profile_label *labels;
	size_t nlabels, cap_labels;
	struct profile_line *lines;
	size_t nlines, cap_lines;
	bool missing_ref;   /* an id or string index referred to nothing (-EBADMSG, not -EINVAL) */
	uint64_t nsamples;  /* samples read so far */
	struct pprof_fault *fault; /* where -EPROTO came from (may be NULL) */
	int64_t *totals;    /* per sample type: the sum of the values read so far */
};

/* Converts a file string index to our string id. */
static int dec_str(struct dec *d, uint64_t idx, uint32_t *id)
{
	if (idx >= d->nstrs) {
		d->missing_ref = true;
		return -EINVAL;
	}
	*id = d->strs[idx];
	return 0;
}

/* Runs fn on every top-level field of the input. */
static int dec_pass(struct dec *d, int (*fn)(struct dec *, const struct pbf *))
{
	struct pbr r = d->in;
	struct pbf f;

	while (r.p < r.end) {
		int err = rd_field(&r, &f);
		if (!err)
			err = fn(d, &f);
		if (err)
			return err;
	}
	return 0;
}

/* Whether a known Profile field has its wire type (comments: varint or packed). */
static bool top_wire_type_ok(const struct pbf *f)
{
	switch (f->num) {
	case P_SAMPLE_TYPE: case P_SAMPLE: case P_MAPPING: case P_LOCATION: case P_FUNCTION:
	case P_STRING_TABLE: case P_PERIOD_TYPE:
		return f->wt == WT_LEN;
	case P_DROP_FRAMES: case P_KEEP_FRAMES: case P_TIME_NANOS: case P_DURATION_NANOS:
	case P_PERIOD: case P_DEFAULT_SAMPLE_TYPE:
		return f->wt == WT_VARINT;
	case P_COMMENT:
		return f->wt == WT_VARINT || f->wt == WT_LEN;
	}
	return true;
}

/* Pass 1: checks wire types and interns the string table. */
static int pass_strings(struct dec *d, const struct pbf *f)
{
	if (!top_wire_type_ok(f))
		return -EINVAL;
	if (f->num != P_STRING_TABLE)
		return 0;
	size_t len = f->sub.end - f->sub.p;
	if (len > UINT32_MAX - 1 || (!d->nstrs && len))
		return -EINVAL; /* string_table[0] must be "" */
	if (VEC_GROW(d->strs, d->cap_strs, d->nstrs + 1))
		return -ENOMEM;
	int64_t id = strtab_intern(&d->p->strings, (const char *)f->sub.p, len);
	if (id < 0)
		return (int)id;
	d->strs[d->nstrs++] = id;
	return 0;
}

/* Decodes a ValueType message. */
static int dec_value_type(struct dec *d, struct pbr r, struct profile_value_type *vt)
{
	uint64_t v[3] = { 0 };

	if (rd_scalars(r, v, 3) || dec_str(d, v[1], &vt->type) || dec_str(d, v[2], &vt->unit))
		return -EINVAL;
	return 0;
}

/* Appends a sample type. */
static int dec_sample_type(struct dec *d, struct pbr r)
{
	struct profile *p = d->p;
	struct profile_value_type vt;

	if (dec_value_type(d, r, &vt))
		return -EINVAL;
	if (p->nsample_types == UINT32_MAX)
		return -EINVAL;
	if (VEC_GROW(p->sample_types, p->cap_sample_types, p->nsample_types + 1))
		return -ENOMEM;
	p->sample_types[p->nsample_types++] = vt;
	return 0;
}

/* Appends comments (string indexes, packed or not). */
static int dec_comments(struct dec *d, const struct pbf *f)
{
	struct profile *p = d->p;
	int err;

	d->ids.n = 0;
	if ((err = rd_repeated(f, &d->ids)))
		return err;
	if (d->ids.n > UINT32_MAX - p->ncomments)
		return -EINVAL;
	if (VEC_GROW(p->comments, p->cap_comments, (size_t)p->ncomments + d->ids.n))
		return -ENOMEM;
	for (size_t i = 0; i < d->ids.n; i++)
		if (dec_str(d, d->ids.v[i], &p->comments[p->ncomments++]))
			return -EINVAL;
	return 0;
}

/* Decodes a Mapping message and records its id. */
static int dec_mapping(struct dec *d, struct pbr r)
{
	struct profile *p = d->p;
	uint64_t v[11] = { 0 };
	uint32_t file, build_id;

	if (rd_scalars(r, v, 11) || !v[1] || dec_str(d, v[5], &file) || dec_str(d, v[6], &build_id))
		return -EINVAL;
	int64_t id = profile_add_mapping(p, v[2], v[3], v[4], profile_str(p, file),
					 profile_str(p, build_id));
	if (id < 0)
		return (int)id;
	struct profile_mapping *m = &p->mappings[id - 1];
	m->filename = file;
	m->build_id = build_id;
	m->has_functions = v[7];
	m->has_filenames = v[8];
	m->has_line_numbers = v[9];
	m->has_inline_frames = v[10];
	return idmap_put(&d->maps, v[1], id);
}

/* Decodes a Function message (deduplicated by profile_function) and records its id. */
static int dec_function(struct dec *d, struct pbr r)
{
	struct profile *p = d->p;
	uint64_t v[6] = { 0 };
	uint32_t name, sys, file;

	if (rd_scalars(r, v, 6) || !v[1] || dec_str(d, v[2], &name) || dec_str(d, v[3], &sys) ||
	    dec_str(d, v[4], &file))
		return -EINVAL;
	int64_t id = profile_function(p, profile_str(p, name), profile_str(p, sys),
				      profile_str(p, file), (int64_t)v[5]);
	if (id < 0)
		return (int)id;
	return idmap_put(&d->fns, v[1], id);
}

/* Pass 2: sample types, mappings, functions and the scalar fields. */
static int pass_tables(struct dec *d, const struct pbf *f)
{
	struct profile *p = d->p;
	uint32_t unused;

	switch (f->num) {
	case P_SAMPLE_TYPE:
		return dec_sample_type(d, f->sub);
	case P_MAPPING:
		return dec_mapping(d, f->sub);
	case P_FUNCTION:
		return dec_function(d, f->sub);
	case P_DROP_FRAMES: case P_KEEP_FRAMES:
		return dec_str(d, f->v, &unused);
	case P_TIME_NANOS:
		p->time_nanos = (int64_t)f->v;
		return 0;
	case P_DURATION_NANOS:
		p->duration_nanos = (int64_t)f->v;
		return 0;
	case P_PERIOD_TYPE:
		return dec_value_type(d, f->sub, &p->period_type);
	case P_PERIOD:
		p->period = (int64_t)f->v;
		return 0;
	case P_COMMENT:
		return dec_comments(d, f);
	case P_DEFAULT_SAMPLE_TYPE:
		return dec_str(d, f->v, &p->default_sample_type);
	}
	return 0;
}

/* Appends one Line message of a location to the scratch lines. */
static int dec_line(struct dec *d, struct pbr r)
{
	uint64_t v[3] = { 0 };

	if (rd_scalars(r, v, 3))
		return -EINVAL;
	uint64_t fn = v[1] ? idmap_get(&d->fns, v[1]) : 0;
	if (v[1] && !fn) {
		d->missing_ref = true;
		return -EINVAL; /* a function that does not exist */
	}
	if (d->nlines >= UINT32_MAX ||
	    VEC_GROW(d->lines, d->cap_lines, d->nlines + 1))
		return d->nlines >= UINT32_MAX ? -EINVAL : -ENOMEM;
	d->lines[d->nlines++] = (struct profile_line){ fn, (int64_t)v[2] };
	return 0;
}

/* Reads the fields of a Location message: v[1] id, v[2] mapping_id, v[3] address; lines into
 * the scratch array. */
static int rd_location(struct dec *d, struct pbr r, uint64_t *v)
{
	struct pbf f;
	int err;

	d->nlines = 0;
	while (r.p < r.end) {
		if (rd_field(&r, &f))
			return -EINVAL;
		if (f.num == 4 && f.wt == WT_LEN) {
			if ((err = dec_line(d, f.sub)))
				return err;
		} else if (f.num <= 5 && f.wt == WT_VARINT) {
			v[f.num] = f.v;
		} else if (f.num <= 5) {
			return -EINVAL;
		}
	}
	return 0;
}

/* Pass 3: locations (mapping and function references checked). */
static int pass_locations(struct dec *d, const struct pbf *f)
{
	struct profile *p = d->p;
	uint64_t v[6] = { 0 };
	int64_t id;
	int err;

	if (f->num != P_LOCATION)
		return 0;
	if ((err = rd_location(d, f->sub, v)))
		return err;
	uint64_t m = v[2] ? idmap_get(&d->maps, v[2]) : 0;
	d->missing_ref |= v[2] && !m;
	if (!v[1] || (v[2] && !m))
		return -EINVAL;
	if (!v[3] && d->nlines == 1 && !d->lines[0].line) /* name-only frame: interned */
		id = profile_simple_location(p, m, d->lines[0].function_id,
					     m ? p->mappings[m - 1].kind : FRAME_USER);
	else
		id = profile_add_location(p, m, v[3], d->lines, d->nlines);
	if (id < 0)
		return (int)id;
	return idmap_put(&d->locs, v[1], id);
}

/* Appends one Label message of a sample to the scratch labels. */
static int dec_label(struct dec *d, struct pbr r)
{
	uint64_t v[5] = { 0 };
	struct profile_label l;

	if (rd_scalars(r, v, 5) || dec_str(d, v[1], &l.key) || dec_str(d, v[2], &l.str) ||
	    dec_str(d, v[4], &l.num_unit) || d->nlabels >= UINT32_MAX)
		return -EINVAL;
	l.num = (int64_t)v[3];
	if (VEC_GROW(d->labels, d->cap_labels, d->nlabels + 1))
		return -ENOMEM;
	d->labels[d->nlabels++] = l;
	return 0;
}

/* Reads the fields of a Sample message into the scratch arrays. */
static int rd_sample(struct dec *d, struct pbr r)
{
	struct pbf f;
	int err = 0;

	d->ids.n = d->vals.n = d->nlabels = 0;
	while (r.p < r.end && !err) {
		if (rd_field(&r, &f))
			return -EINVAL;
		if (f.num == 1)
			err = rd_repeated(&f, &d->ids);
		else if (f.num == 2)
			err = rd_repeated(&f, &d->vals);
		else if (f.num == 3)
			err = f.wt == WT_LEN ? dec_label(d, f.sub) : -EINVAL;
	}
	return err;
}

/* Adds a sample's values to the per-type totals: a negative value (pprof -diff_base writes
 * them) is -ERANGE, a total past INT64_MAX -EOVERFLOW, so that no sum over samples overflows. */
static int add_totals(struct dec *d)
{
	for (size_t i = 0; i < d->vals.n; i++) {
		int64_t v = (int64_t)d->vals.v[i];
		if (v < 0)
			return -ERANGE;
		if (__builtin_add_overflow(d->totals[i], v, &d->totals[i]))
			return -EOVERFLOW;
	}
	return 0;
}

/* Pass 4: samples (location ids remapped, value count checked), merged by profile_add_sample. */
static int pass_samples(struct dec *d, const struct pbf *f)
{
	int err;

	if (f->num != P_SAMPLE)
		return 0;
	if ((err = rd_sample(d, f->sub)))
		return err;
	d->nsamples++;
	if (d->vals.n != d->p->nsample_types) {
		if (!d->p->nsample_types) /* no types at all: not a profile, rather than a bad one */
			return -EINVAL;
		if (d->fault)
			*d->fault = (struct pprof_fault){ d->nsamples, d->vals.n };
		return -EPROTO;
	}
	if (d->ids.n > UINT32_MAX)
		return -EINVAL;
	if ((err = add_totals(d)))
		return err;
	for (size_t i = 0; i < d->ids.n; i++) {
		if (!(d->ids.v[i] = idmap_get(&d->locs, d->ids.v[i]))) {
			d->missing_ref = true;
			return -EINVAL;
		}
	}
	return profile_add_sample(d->p, d->ids.v, d->ids.n, (const int64_t *)d->vals.v, d->labels,
				  d->nlabels);
}

/* Decodes raw (not gzipped) protobuf bytes. */
static int decode_raw(struct profile *p, const uint8_t *data, size_t len,
		      struct pprof_fault *fault)
{
	struct dec d;
	int err;

	if (len > PPROF_MAX_SIZE)
		return -EFBIG;
	memset(&d, 0, sizeof(d));
	d.p = p;
	d.fault = fault;
	d.in = (struct pbr){ data, data + len };
	/* scratch arrays start allocated: profile_add_sample memcpy's from them even when empty */
	err = u64vec_push(&d.ids, 0) || u64vec_push(&d.vals, 0) ||
	      VEC_GROW(d.labels, d.cap_labels, 1) ? -ENOMEM : 0;
	if (!err)
		err = dec_pass(&d, pass_strings);
	if (!err && !d.nstrs) {
		d.strs = malloc(sizeof(*d.strs));
		err = d.strs ? 0 : -ENOMEM;
		if (d.strs)
			d.strs[d.nstrs++] = 0;
	}
	if (!err)
		err = dec_pass(&d, pass_tables);
	if (!err)
		err = dec_pass(&d, pass_locations);
	if (!err && !(d.totals = calloc(p->nsample_types + 1, sizeof(*d.totals))))
		err = -ENOMEM;
	if (!err)
		err = dec_pass(&d, pass_samples);
	free(d.totals);
	free(d.strs);
	idmap_release(&d.maps);
	idmap_release(&d.fns);
	idmap_release(&d.locs);
	free(d.ids.v);
	free(d.vals.v);
	free(d.labels);
	free(d.lines);
	return err == -EINVAL && d.missing_ref ? -EBADMSG : err;
}

/* PPROF_GUNZIP_RATIO x len, clamped to [PPROF_GUNZIP_MIN, PPROF_MAX_SIZE]. */
size_t pprof_gunzip_limit(size_t len)
{
	uint64_t lim = len > PPROF_MAX_SIZE / PPROF_GUNZIP_RATIO ? PPROF_MAX_SIZE
								 : (uint64_t)len * PPROF_GUNZIP_RATIO;

	return lim < PPROF_GUNZIP_MIN ? PPROF_GUNZIP_MIN : lim;
}

/* Grows the gunzip output buffer, refusing to pass limit. */
static int gunzip_grow(uint8_t **buf, size_t *cap, size_t in_len, size_t limit)
{
	if (*cap >= limit)
		return -EFBIG;
	size_t need = *cap ? *cap * 2 : in_len * 4 + 65536;
	return vec_grow_max((void **)buf, cap, need < limit ? need : limit, 1, limit);
}

/* Reads a varint from b[*pos..len); 1 when the bytes end first, -EINVAL when it is too long. */
static int scan_varint(const uint8_t *b, size_t len, size_t *pos, uint64_t *v)
{
	struct pbr r = { b + *pos, b + len };

	if (!rd_varint(&r, v)) {
		*pos = r.p - b;
		return 0;
	}
	return len - *pos < 10 ? 1 : -EINVAL; /* cut off (it ran out), or too long */
}

/* Checks the top-level fields of the bytes inflated so far, from *pos (where the next field
 * starts) on, so that output that is not a Profile (a bomb of zeros) stops at its first bytes:
 * a bad key or wire type, or a field longer than any profile, is -EINVAL; a field longer than
 * the limit -EFBIG. */
static int scan_fields(const uint8_t *b, size_t len, size_t *pos, size_t limit)
{
	while (*pos < len) {
		size_t at = *pos;
		uint64_t key, v;
		int rc = scan_varint(b, len, &at, &key);
		if (rc)
			return rc < 0 ? rc : 0;
		struct pbf f = { .num = key >> 3, .wt = key & 7 };
		if (!f.num || key >> 3 > 0x1fffffff || !top_wire_type_ok(&f) ||
		    (f.wt != WT_VARINT && f.wt != WT_LEN && f.wt != WT_I64 && f.wt != WT_I32))
			return -EINVAL;
		if (f.wt == WT_I64 || f.wt == WT_I32) {
			*pos = at + (f.wt == WT_I64 ? 8 : 4);
			continue;
		}
		if ((rc = scan_varint(b, len, &at, &v)))
			return rc < 0 ? rc : 0;
		if (f.wt == WT_LEN && v > limit - at)
			return v > PPROF_MAX_SIZE ? -EINVAL : -EFBIG;
		*pos = at + (f.wt == WT_LEN ? v : 0);
	}
	return 0;
}

/* The top-level scan of the gunzipped bytes, on raw bytes. */
bool pprof_plausible(const void *data, size_t len)
{
	size_t pos = 0;

	return !scan_fields(data, len, &pos, PPROF_MAX_SIZE);
}

/* Inflates one or more concatenated gzip members into a malloc'd buffer, checking the fields
 * as they come out. */
static int gunzip(const uint8_t *in, size_t len, uint8_t **out, size_t *olen)
{
	z_stream z;
	size_t limit = pprof_gunzip_limit(len), cap = 0, used = 0, in_left = len, scanned = 0;
	uint8_t *buf = NULL;
	int err = 0;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)in;
	while (!err) {
		if (used == cap && (err = gunzip_grow(&buf, &cap, len, limit)))
			break;
		uInt ai = in_left > UINT_MAX ? UINT_MAX : in_left;
		uInt ao = cap - used > UINT_MAX ? UINT_MAX : cap - used;
		z.avail_in = ai;
		z.next_out = buf + used;
		z.avail_out = ao;
		int rc = inflate(&z, Z_NO_FLUSH);
		in_left -= ai - z.avail_in;
		used += ao - z.avail_out;
		if ((err = scan_fields(buf, used, &scanned, limit)))
			break;
		if (rc == Z_STREAM_END && !in_left)
			break;
		if (rc == Z_STREAM_END && in_left >= 2 && z.next_in[0] == 0x1f && z.next_in[1] == 0x8b)
			err = inflateReset(&z) == Z_OK ? 0 : -EINVAL; /* next member */
		else if (rc == Z_MEM_ERROR)
			err = -ENOMEM;
		else if (rc == Z_STREAM_END || (rc != Z_OK && rc != Z_BUF_ERROR))
			err = -EINVAL;
		else if (!in_left && used < cap)
			err = -EINVAL; /* truncated */
	}
	inflateEnd(&z);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*olen = used;
	return 0;
}

/* Inflates gzip input first, then decodes the raw bytes. */
int pprof_decode(struct profile *p, const void *data, size_t len)
{
	return pprof_decode_fault(p, data, len, NULL);
}

int pprof_decode_fault(struct profile *p, const void *data, size_t len, struct pprof_fault *fault)
{
	const uint8_t *b = data;
	uint8_t *raw;
	size_t rawlen;
	int err;

	if (!len)
		return -ENODATA;
	if (len < 2 || b[0] != 0x1f || b[1] != 0x8b)
		return decode_raw(p, b, len, fault);
	if ((err = gunzip(b, len, &raw, &rawlen)))
		return err;
	err = rawlen ? decode_raw(p, raw, rawlen, fault) : -ENODATA;
	free(raw);
	return err;
}
