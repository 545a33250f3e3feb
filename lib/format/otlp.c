/* A struct profile as an OTLP ExportProfilesServiceRequest (otlp.h). Field numbers are
 * opentelemetry-proto v1.11.0's (profiles/v1development/profiles.proto,
 * collector/profiles/v1development/profiles_service.proto, common/v1, resource/v1). The
 * Profiles are written first: the stacks and attributes they use are added to the dictionary
 * as they are met, and the dictionary (its string table last) after them. */
#include "format/otlp.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/hashtab.h"
#include "base/pbenc.h"
#include "base/vec.h"

/* ExportProfilesServiceRequest, ResourceProfiles, ScopeProfiles, Profile, Sample... */
enum {
	REQ_RESOURCE_PROFILES = 1, REQ_DICTIONARY = 2,
	RP_RESOURCE = 1, RP_SCOPE_PROFILES = 2,
	RES_ATTRIBUTES = 1,
	KV_KEY = 1, KV_VALUE = 2,
	ANY_STRING = 1, ANY_INT = 3,
	SP_SCOPE = 1, SP_PROFILES = 2,
	SCOPE_NAME = 1,
	PR_SAMPLE_TYPE = 1, PR_SAMPLES = 2, PR_TIME = 3, PR_DURATION = 4, PR_PERIOD_TYPE = 5,
	PR_PERIOD = 6, PR_PROFILE_ID = 7,
	VT_TYPE = 1, VT_UNIT = 2,
	SA_STACK = 1, SA_ATTRIBUTES = 2, SA_LINK = 3, SA_VALUES = 4,
	DICT_MAPPINGS = 1, DICT_LOCATIONS = 2, DICT_FUNCTIONS = 3, DICT_LINKS = 4, DICT_STRINGS = 5,
	DICT_ATTRIBUTES = 6, DICT_STACKS = 7,
	MAP_START = 1, MAP_LIMIT = 2, MAP_OFFSET = 3, MAP_FILENAME = 4, MAP_ATTRIBUTES = 5,
	STACK_LOCATIONS = 1,
	LOC_MAPPING = 1, LOC_ADDRESS = 2, LOC_LINES = 3, LOC_ATTRIBUTES = 4,
	LINE_FUNCTION = 1, LINE_LINE = 2,
	FN_NAME = 1, FN_SYSTEM_NAME = 2, FN_FILENAME = 3, FN_START_LINE = 4,
	LINK_TRACE_ID = 1, LINK_SPAN_ID = 2,
	KVU_KEY = 1, KVU_VALUE = 2, KVU_UNIT = 3,
};

#define BUILD_ID_KEY "process.executable.build_id.gnu"
#define FRAME_TYPE_KEY "profile.frame.type"

/* A location's profile.frame.type (OpenTelemetry's semantic conventions) by its mapping's
 * runtime (frame_kind.h: set by the capture, restored from the name for saved profiles), so that
 * a new runtime is one row here; other user-space mappings are native code, JIT code and the
 * rest get none. */
static const char *const runtime_frame_types[FRAME_RUNTIMES] = {
	[FRAME_PYTHON] = "cpython",
	[FRAME_JAVASCRIPT] = "v8js",
	[FRAME_JAVA] = "jvm",
};

/* An attribute_table entry: key and unit are string_table indexes; the value is lit (a static
 * string) when set, else str, a string id of the profile, unless is_num. */
struct attr {
	uint32_t key, str, unit;
	int64_t num;
	bool is_num;
	const char *lit;
};

/* A link_table entry: a span's W3C ids (entry 0 all zeros: no span). */
struct link {
	uint8_t trace_id[16], span_id[8];
};

struct enc {
	const struct profile *p;
	struct link *links;            /* link_table[1..] */
	size_t nlinks, cap_links;
	struct hashtab link_index;
	struct pbenc e;
	struct strtab strs;            /* the string_table */
	struct attr *attrs;            /* attribute_table[1..] */
	size_t nattrs, cap_attrs;
	struct hashtab attr_index;
	const struct profile_sample **stacks; /* stack_table[1..]: a sample with that stack */
	size_t nstacks, cap_stacks;
	struct hashtab stack_index;
	int err;
};

/* The string_table index of s (added when new); 0 after a failure (kept in x->err). */
static uint32_t str_of(struct enc *x, const char *s)
{
	int64_t id = strtab_intern(&x->strs, s, strlen(s));

	if (id < 0 || id > INT32_MAX) {
		x->err = id < 0 ? (int)id : -EOVERFLOW;
		return 0;
	}
	return (uint32_t)id;
}

/* The string_table index of the profile's string id. */
static uint32_t pstr(struct enc *x, uint32_t id)
{
	return str_of(x, profile_str(x->p, id));
}

static uint64_t attr_hash(const struct attr *a)
{
	return hash_mix64(((uint64_t)a->key << 32 ^ a->str) + hash_mix64((uint64_t)a->num ^
			  ((uint64_t)a->unit << 1 | a->is_num) ^ (uintptr_t)a->lit));
}

static bool attr_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct attr *a = &((const struct enc *)ctx)->attrs[id], *b = key;

	return a->key == b->key && a->str == b->str && a->num == b->num && a->unit == b->unit &&
	       a->is_num == b->is_num && a->lit == b->lit;
}

/* INTERN(x, rows, n, cap, index, h, eq, key, row): the 1-based index in the dictionary table
 * rows (n rows, room for cap, looked up by index) of the row whose key is key (hash h, compared
 * by eq), appending row when none is; 0 after a failure (kept in x->err). The attribute and stack
 * tables are interned alike: ids must fit the format's int32, the table and its index grow
 * together. */
#define INTERN(x, rows, n, cap, index, h, eq, key, row)                                            \
	__extension__({                                                                            \
		uint64_t in_h_ = (h);                                                              \
		int64_t in_id_ = hashtab_find(&(x)->index, in_h_, eq, (x), (key));                 \
		if (in_id_ < 0 && (x)->n >= INT32_MAX - 1)                                         \
			(x)->err = -EOVERFLOW;                                                     \
		else if (in_id_ < 0 && (VEC_GROW((x)->rows, (x)->cap, (x)->n + 1) ||             \
					hashtab_add(&(x)->index, in_h_, (uint32_t)(x)->n)))          \
			(x)->err = -ENOMEM;                                                        \
		else if (in_id_ < 0)                                                               \
			(x)->rows[in_id_ = (int64_t)(x)->n++] = (row);                             \
		in_id_ < 0 ? 0u : (uint32_t)in_id_ + 1;                                            \
	})

/* The attribute_table index of a (added when new); 0 after a failure. */
static uint32_t attr_of(struct enc *x, const struct attr *a)
{
	return INTERN(x, attrs, nattrs, cap_attrs, attr_index, attr_hash(a), attr_eq, a, *a);
}

/* The attribute of a sample label. */
static uint32_t label_attr(struct enc *x, const struct profile_label *l)
{
	struct attr a = { pstr(x, l->key), l->str, l->num_unit ? pstr(x, l->num_unit) : 0,
			  l->str ? 0 : l->num, !l->str, NULL };

	return attr_of(x, &a);
}

static uint64_t stack_hash(const struct profile_sample *s)
{
	uint64_t h = s->nlocs;

	for (uint32_t i = 0; i < s->nlocs; i++)
		h = hash_mix64(h ^ s->location_ids[i]);
	return h;
}

static bool stack_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct profile_sample *a = ((const struct enc *)ctx)->stacks[id], *b = key;

	return a->nlocs == b->nlocs &&
	       !memcmp(a->location_ids, b->location_ids, a->nlocs * sizeof(*a->location_ids));
}

/* The stack_table index of s's locations (added when new); 0 after a failure. */
static uint32_t stack_of(struct enc *x, const struct profile_sample *s)
{
	return INTERN(x, stacks, nstacks, cap_stacks, stack_index, stack_hash(s), stack_eq, s, s);
}

static uint64_t link_hash(const struct link *l)
{
	uint64_t a, b, c;

	memcpy(&a, l->trace_id, 8);
	memcpy(&b, l->trace_id + 8, 8);
	memcpy(&c, l->span_id, 8);
	return hash_mix64(a ^ hash_mix64(b ^ hash_mix64(c)));
}

static bool link_eq(const void *ctx, uint32_t id, const void *key)
{
	return !memcmp(&((const struct enc *)ctx)->links[id], key, sizeof(struct link));
}

/* n bytes from 2n lowercase or uppercase hex digits (and nothing more); false otherwise. */
static bool unhex(const char *s, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < 2 * n; i++) {
		char c = s[i];
		int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (v < 0)
			return false;
		out[i / 2] = (uint8_t)(i % 2 ? out[i / 2] << 4 | v : v);
	}
	return s[2 * n] == 0;
}

/* The link_table index of the span s's trace_id and span_id labels name (firn's thread context
 * labels, lib/runtimes/otelthread.h); 0 when it has none (or after a failure). */
static uint32_t link_of(struct enc *x, const struct profile_sample *s)
{
	const char *t = profile_label_str(x->p, s, "trace_id");
	const char *sp = profile_label_str(x->p, s, "span_id");
	struct link l;

	if (!t || !sp || !unhex(t, l.trace_id, 16) || !unhex(sp, l.span_id, 8))
		return 0;
	return INTERN(x, links, nlinks, cap_links, link_index, link_hash(&l), link_eq, &l, l);
}

/* A varint field, left out when zero (proto3's default). */
static void put_uint(struct enc *x, uint32_t field, uint64_t v)
{
	if (v)
		pbenc_uint(&x->e, field, v);
}

/* A ValueType message. */
static void put_value_type(struct enc *x, uint32_t field, const struct profile_value_type *vt)
{
	size_t m = pbenc_begin(&x->e, field);

	put_uint(x, VT_TYPE, pstr(x, vt->type));
	put_uint(x, VT_UNIT, pstr(x, vt->unit));
	pbenc_end(&x->e, m);
}

/* One Sample of type t: its stack, its labels as attributes, its one value. */
static void put_sample(struct enc *x, const struct profile_sample *s, uint32_t t)
{
	size_t m = pbenc_begin(&x->e, PR_SAMPLES), a;

	put_uint(x, SA_STACK, stack_of(x, s));
	if (s->nlabels) {
		a = pbenc_begin(&x->e, SA_ATTRIBUTES);
		for (uint32_t i = 0; i < s->nlabels; i++)
			pbenc_varint(&x->e, label_attr(x, &s->labels[i]));
		pbenc_end(&x->e, a);
	}
	put_uint(x, SA_LINK, link_of(x, s));
	a = pbenc_begin(&x->e, SA_VALUES);
	pbenc_varint(&x->e, (uint64_t)s->values[t]);
	pbenc_end(&x->e, a);
	pbenc_end(&x->e, m);
}

/* The Profile of sample type t (samples whose value of t is 0 are left out). */
static void put_profile(struct enc *x, uint32_t t, const uint8_t *id)
{
	const struct profile *p = x->p;
	size_t m = pbenc_begin(&x->e, SP_PROFILES);

	put_value_type(x, PR_SAMPLE_TYPE, &p->sample_types[t]);
	for (uint64_t i = 0; i < p->nsamples && !x->err; i++)
		if (p->samples[i].values[t])
			put_sample(x, &p->samples[i], t);
	if (p->time_nanos)
		pbenc_fixed64(&x->e, PR_TIME, (uint64_t)p->time_nanos);
	put_uint(x, PR_DURATION, p->duration_nanos > 0 ? (uint64_t)p->duration_nanos : 0);
	if (p->period_type.type || p->period_type.unit)
		put_value_type(x, PR_PERIOD_TYPE, &p->period_type);
	put_uint(x, PR_PERIOD, (uint64_t)p->period);
	if (id)
		pbenc_bytes(&x->e, PR_PROFILE_ID, id, 16);
	pbenc_end(&x->e, m);
}

/* A resource attribute (KeyValue with a string AnyValue); none when value is NULL or "". */
static void put_kv(struct enc *x, const char *key, const char *value)
{
	if (!value || !*value)
		return;
	size_t m = pbenc_begin(&x->e, RES_ATTRIBUTES), v;
	pbenc_string(&x->e, KV_KEY, key);
	v = pbenc_begin(&x->e, KV_VALUE);
	pbenc_string(&x->e, ANY_STRING, value);
	pbenc_end(&x->e, v);
	pbenc_end(&x->e, m);
}

/* The ResourceProfiles: the resource's attributes, the scope "firn", one Profile per type. */
static void put_resource_profiles(struct enc *x, const struct otlp_opts *o)
{
	const struct profile *p = x->p;
	size_t m = pbenc_begin(&x->e, REQ_RESOURCE_PROFILES), r, s, sc;
	uint32_t first = p->nsample_types ? profile_value_index(p) : 0;
	uint8_t id[16];

	r = pbenc_begin(&x->e, RP_RESOURCE);
	put_kv(x, "service.name", o->service ? o->service : "firn");
	put_kv(x, "host.name", o->host);
	put_kv(x, "container.id", o->container);
	for (size_t i = 0; i < o->nattrs; i++)
		put_kv(x, o->attrs[i].key, o->attrs[i].value);
	pbenc_end(&x->e, r);
	s = pbenc_begin(&x->e, RP_SCOPE_PROFILES);
	sc = pbenc_begin(&x->e, SP_SCOPE);
	pbenc_string(&x->e, SCOPE_NAME, "firn");
	pbenc_end(&x->e, sc);
	if (o->profile_id)
		memcpy(id, o->profile_id, sizeof(id));
	for (uint32_t k = 0; k < p->nsample_types; k++) {
		uint32_t t = k == 0 ? first : (k <= first ? k - 1 : k);
		id[15] = (uint8_t)(o->profile_id ? o->profile_id[15] + k : 0);
		put_profile(x, t, o->profile_id ? id : NULL);
	}
	pbenc_end(&x->e, s);
	pbenc_end(&x->e, m);
}

/* A dictionary table: its zero value (an empty message) at index 0, then row(x, i) for each of
 * its n rows, each in its own message, until an error. Every table is written so. */
static void put_table(struct enc *x, uint32_t field, uint64_t n,
		      void (*row)(struct enc *x, uint64_t i))
{
	pbenc_end(&x->e, pbenc_begin(&x->e, field));
	for (uint64_t i = 0; i < n && !x->err; i++) {
		size_t m = pbenc_begin(&x->e, field);
		row(x, i);
		pbenc_end(&x->e, m);
	}
}

/* Mapping i; a build id becomes the mapping's attribute. */
static void put_mapping(struct enc *x, uint64_t i)
{
	const struct profile *p = x->p;
	const struct profile_mapping *mp = &p->mappings[i];

	put_uint(x, MAP_START, mp->start);
	put_uint(x, MAP_LIMIT, mp->limit);
	put_uint(x, MAP_OFFSET, mp->offset);
	put_uint(x, MAP_FILENAME, pstr(x, mp->filename));
	if (mp->build_id && *profile_str(p, mp->build_id)) {
		struct attr a = { str_of(x, BUILD_ID_KEY), mp->build_id, 0, 0, false, NULL };
		size_t ai = pbenc_begin(&x->e, MAP_ATTRIBUTES);
		pbenc_varint(&x->e, attr_of(x, &a));
		pbenc_end(&x->e, ai);
	}
}

/* The profile.frame.type of l (a static string), or NULL when it is not known. */
static const char *frame_type(const struct enc *x, const struct profile_location *l)
{
	const struct profile *p = x->p;
	const struct profile_mapping *pm = l->mapping_id && l->mapping_id <= p->nmappings ?
		&p->mappings[l->mapping_id - 1] : NULL;
	const char *m = pm ? profile_str(p, pm->filename) : "";
	const char *type = NULL;

	if (l->kind == FRAME_KERNEL)
		type = "kernel";
	else if (pm && (unsigned)pm->runtime < FRAME_RUNTIMES)
		type = runtime_frame_types[pm->runtime];
	if (!type && l->kind == FRAME_USER && *m && (*m != '[' || !strcmp(m, "[vdso]")))
		type = "native";
	return type;
}

/* Location i: mapping, address, lines (inlined first, as pprof has them), its
 * profile.frame.type where known. */
static void put_location(struct enc *x, uint64_t i)
{
	const struct profile *p = x->p;
	const struct profile_location *l = &p->locations[i];

	if (l->mapping_id > p->nmappings)
		x->err = -EINVAL;
	put_uint(x, LOC_MAPPING, l->mapping_id);
	put_uint(x, LOC_ADDRESS, l->address);
	for (uint32_t k = 0; k < l->nlines; k++) {
		size_t ln = pbenc_begin(&x->e, LOC_LINES);
		if (l->lines[k].function_id > p->nfunctions)
			x->err = -EINVAL;
		put_uint(x, LINE_FUNCTION, l->lines[k].function_id);
		put_uint(x, LINE_LINE, (uint64_t)l->lines[k].line);
		pbenc_end(&x->e, ln);
	}
	const char *ft = frame_type(x, l);
	if (ft) {
		struct attr a = { str_of(x, FRAME_TYPE_KEY), 0, 0, 0, false, ft };
		size_t ai = pbenc_begin(&x->e, LOC_ATTRIBUTES);
		pbenc_varint(&x->e, attr_of(x, &a));
		pbenc_end(&x->e, ai);
	}
}

/* Function i. */
static void put_function(struct enc *x, uint64_t i)
{
	const struct profile_function *f = &x->p->functions[i];

	put_uint(x, FN_NAME, pstr(x, f->name));
	put_uint(x, FN_SYSTEM_NAME, pstr(x, f->system_name));
	put_uint(x, FN_FILENAME, pstr(x, f->filename));
	put_uint(x, FN_START_LINE, (uint64_t)f->start_line);
}

/* Stack i (location ids are location_table indexes: both 1-based, in order). */
static void put_stack(struct enc *x, uint64_t i)
{
	const struct profile_sample *s = x->stacks[i];
	size_t l = pbenc_begin(&x->e, STACK_LOCATIONS);

	for (uint32_t k = 0; k < s->nlocs; k++) {
		if (!s->location_ids[k] || s->location_ids[k] > x->p->nlocations)
			x->err = -EINVAL;
		pbenc_varint(&x->e, s->location_ids[k]);
	}
	pbenc_end(&x->e, l);
}

/* Attribute i (KeyValueAndUnit: key, a string or int AnyValue, unit). */
static void put_attribute(struct enc *x, uint64_t i)
{
	const struct attr *a = &x->attrs[i];
	size_t v;

	put_uint(x, KVU_KEY, a->key);
	v = pbenc_begin(&x->e, KVU_VALUE);
	if (a->is_num)
		pbenc_int(&x->e, ANY_INT, a->num);
	else
		pbenc_string(&x->e, ANY_STRING, a->lit ? a->lit : profile_str(x->p, a->str));
	pbenc_end(&x->e, v);
	put_uint(x, KVU_UNIT, a->unit);
}

/* The dictionary; strings last, once every table has interned its own. */
static void put_dictionary(struct enc *x)
{
	static const uint8_t zero[16];
	size_t m = pbenc_begin(&x->e, REQ_DICTIONARY), l;

	put_table(x, DICT_MAPPINGS, x->p->nmappings, put_mapping);
	put_table(x, DICT_LOCATIONS, x->p->nlocations, put_location);
	put_table(x, DICT_FUNCTIONS, x->p->nfunctions, put_function);
	put_table(x, DICT_STACKS, x->nstacks, put_stack);
	put_table(x, DICT_ATTRIBUTES, x->nattrs, put_attribute); /* last: the others add to it */
	l = pbenc_begin(&x->e, DICT_LINKS); /* Link{16 zero bytes, 8 zero bytes}, as advised */
	pbenc_bytes(&x->e, LINK_TRACE_ID, zero, 16);
	pbenc_bytes(&x->e, LINK_SPAN_ID, zero, 8);
	pbenc_end(&x->e, l);
	for (size_t i = 0; i < x->nlinks; i++) { /* the samples' spans */
		l = pbenc_begin(&x->e, DICT_LINKS);
		pbenc_bytes(&x->e, LINK_TRACE_ID, x->links[i].trace_id, 16);
		pbenc_bytes(&x->e, LINK_SPAN_ID, x->links[i].span_id, 8);
		pbenc_end(&x->e, l);
	}
	for (uint32_t i = 0; i < x->strs.n; i++)
		pbenc_bytes(&x->e, DICT_STRINGS, x->strs.strs[i], x->strs.lens[i]);
	pbenc_end(&x->e, m);
}

int otlp_encode(const struct profile *p, const struct otlp_opts *o, void **out, size_t *len)
{
	static const struct otlp_opts none;
	struct enc x = { .p = p };
	int err;

	if (p->nmappings > INT32_MAX - 1 || p->nlocations > INT32_MAX - 1 ||
	    p->nfunctions > INT32_MAX - 1)
		return -EOVERFLOW;
	if ((err = strtab_init(&x.strs)))
		return err;
	pbenc_init(&x.e);
	put_resource_profiles(&x, o ? o : &none);
	if (!x.err)
		put_dictionary(&x);
	err = x.err ? x.err : x.e.err;
	if (err)
		pbenc_release(&x.e);
	else
		err = pbenc_finish(&x.e, out, len);
	strtab_release(&x.strs);
	hashtab_release(&x.attr_index);
	hashtab_release(&x.stack_index);
	hashtab_release(&x.link_index);
	free(x.links);
	free(x.attrs);
	free(x.stacks);
	return err;
}
