/* OTEP 4719 process context: the mapping found, the header checked, the payload decoded with
 * bounds checks (a protobuf reader of its own: the payload is another process's memory). */
#include "elf/otelproc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/leb128.h"

/* The mapping names the OTEP's reading protocol looks for (and the anonymous fallback's name). */
static const char *const mapping_names[] = { "/memfd:OTEL_CTX", "[anon_shmem:OTEL_CTX]",
					     "[anon:OTEL_CTX]" };

/* A protobuf message being read: [p, end). */
struct pb {
	const uint8_t *p, *end;
};

/* One field: its number and, for a length-delimited one, its bytes. */
struct pb_field {
	uint32_t num;
	unsigned wire;
	struct pb data; /* wire type 2: the bytes */
};

int otelproc_find(const struct procmap *m, uint64_t *addr)
{
	for (size_t i = 0; i < m->n; i++)
		for (size_t k = 0; k < sizeof(mapping_names) / sizeof(*mapping_names); k++)
			if (!strncmp(m->entries[i].path, mapping_names[k], strlen(mapping_names[k])) &&
			    m->entries[i].offset == 0) {
				*addr = m->entries[i].start;
				return 0;
			}
	return -ENOENT;
}

/* Reads the next field of b into f: 0, 1 at the message's end, -EPROTO when it runs past it or
 * has a wire type protobuf no longer uses (groups). Scalars are skipped over. */
static int pb_next(struct pb *b, struct pb_field *f)
{
	uint64_t tag, v;

	if (b->p >= b->end)
		return 1;
	if (leb128_u(&b->p, b->end, &tag) || tag >> 3 == 0 || tag >> 3 > UINT32_MAX)
		return -EPROTO;
	f->num = (uint32_t)(tag >> 3);
	f->wire = tag & 7;
	switch (f->wire) {
	case 0:
		return leb128_u(&b->p, b->end, &v) ? -EPROTO : 0;
	case 1: case 5: {
		size_t n = f->wire == 1 ? 8 : 4;
		if ((size_t)(b->end - b->p) < n)
			return -EPROTO;
		b->p += n;
		return 0;
	}
	case 2:
		if (leb128_u(&b->p, b->end, &v) || v > (uint64_t)(b->end - b->p))
			return -EPROTO;
		f->data = (struct pb){ b->p, b->p + v };
		b->p += v;
		return 0;
	}
	return -EPROTO;
}

/* Copies s (its bytes up to a NUL) into c's strings; the copy, or NULL when they are full
 * (cannot happen: they hold the payload twice over). */
static const char *keep(struct otelproc *c, struct pb s)
{
	size_t n = (size_t)(s.end - s.p);
	const uint8_t *nul = n ? memchr(s.p, 0, n) : NULL;

	n = nul ? (size_t)(nul - s.p) : n;
	if (c->nstrs + n + 1 > c->cap_strs)
		return NULL;
	char *out = c->strs + c->nstrs;
	if (n)
		memcpy(out, s.p, n);
	out[n] = 0;
	c->nstrs += n + 1;
	return out;
}

/* The string_value of an AnyValue, in *s: 0, 1 when it holds another kind, -EPROTO. */
static int any_string(struct pb any, struct pb *s)
{
	struct pb_field f;
	int rc;

	while (!(rc = pb_next(&any, &f)))
		if (f.num == 1 && f.wire == 2) {
			*s = f.data;
			return 0;
		}
	return rc < 0 ? rc : 1;
}

/* The key map: an AnyValue holding an ArrayValue of strings, key index i the i-th. */
static int key_map(struct otelproc *c, struct pb any)
{
	struct pb_field f, g;
	int rc;

	while (!(rc = pb_next(&any, &f))) {
		if (f.num != 5 || f.wire != 2)
			continue;
		struct pb arr = f.data, s;
		c->nkeys = 0;
		while (!(rc = pb_next(&arr, &g))) {
			if (g.num != 1 || g.wire != 2)
				continue;
			if (c->nkeys >= OTELPROC_KEYS_MAX)
				return -EPROTO;
			int k = any_string(g.data, &s);
			if (k < 0)
				return k;
			c->keys[c->nkeys++] = keep(c, k ? (struct pb){ 0 } : s);
		}
		if (rc < 0)
			return rc;
	}
	return rc < 0 ? rc : 0;
}

/* One KeyValue: service.name (in_resource), the key map, or a string attribute. -EPROTO when it
 * is not a KeyValue (no key, a malformed field). */
static int key_value(struct otelproc *c, struct pb kv, bool in_resource)
{
	struct pb_field f;
	struct pb key = { 0 }, any = { 0 }, s;
	bool has_key = false;
	int rc;

	while (!(rc = pb_next(&kv, &f)))
		if (f.num == 1 && f.wire == 2)
			key = f.data, has_key = true;
		else if (f.num == 2 && f.wire == 2)
			any = f.data;
	if (rc < 0 || !has_key)
		return -EPROTO;
	size_t klen = (size_t)(key.end - key.p);
	if (klen == 29 && !memcmp(key.p, "threadlocal.attribute_key_map", 29))
		return key_map(c, any);
	if ((rc = any_string(any, &s)) < 0)
		return rc;
	if (!rc && in_resource && klen == 12 && !memcmp(key.p, "service.name", 12) &&
	    !c->service_name) {
		c->service_name = keep(c, s);
		return 0;
	}
	if (rc || c->nattrs >= OTELPROC_ATTRS_MAX) {
		c->dropped++;
		return 0;
	}
	c->attrs[c->nattrs].key = keep(c, key);
	c->attrs[c->nattrs++].value = keep(c, s);
	return 0;
}

/* A Resource: its attributes (field 1), each a KeyValue. */
static int resource(struct otelproc *c, struct pb r)
{
	struct pb_field f;
	int rc;

	while (!(rc = pb_next(&r, &f)))
		if (f.num == 1 && f.wire == 2 && (rc = key_value(c, f.data, true)))
			return rc;
	return rc < 0 ? rc : 0;
}

/* A ProcessContext: the resource (field 1) and the attributes of its own (field 2). -EBADMSG
 * when field 1 is not a Resource (the payload may be one itself). */
static int process_context(struct otelproc *c, struct pb m)
{
	struct pb_field f;
	int rc;

	while (!(rc = pb_next(&m, &f))) {
		if (f.wire != 2)
			continue;
		if (f.num == 1 && (rc = resource(c, f.data)))
			return rc == -EPROTO ? -EBADMSG : rc;
		if (f.num == 2 && (rc = key_value(c, f.data, false)))
			return rc;
	}
	return rc < 0 ? rc : 0;
}

/* Empties what a decode filled, keeping the string buffer. */
static void clear(struct otelproc *c)
{
	char *strs = c->strs;
	size_t cap = c->cap_strs;
	uint64_t at = c->published_at_ns;

	memset(c, 0, sizeof(*c));
	c->strs = strs;
	c->cap_strs = cap;
	c->published_at_ns = at;
}

int otelproc_decode(struct otelproc *c, const uint8_t *payload, size_t len)
{
	struct pb m = { payload, payload + len };

	memset(c, 0, sizeof(*c));
	c->cap_strs = 2 * len + 1; /* a string costs its bytes and a NUL, at most twice the payload */
	if (!(c->strs = malloc(c->cap_strs)))
		return -ENOMEM;
	int rc = process_context(c, m);
	if (rc == -EBADMSG) { /* a bare Resource (the OTEP's other text) */
		clear(c);
		rc = resource(c, m);
	}
	if (rc)
		clear(c);
	return rc;
}

/* Reads and checks the header at addr: the payload's address and size, and published_at_ns. */
static int read_header(uint64_t addr, const struct tlsctx_mem *mem, uint64_t *payload,
		       uint32_t *size, uint64_t *at)
{
	uint8_t h[OTELPROC_HEADER_SIZE];
	uint32_t version;
	int err = mem->read(mem->ctx, addr, h, sizeof(h));

	if (err)
		return err;
	if (memcmp(h, OTELPROC_SIGNATURE, 8))
		return -ENOENT;
	memcpy(&version, h + 8, 4);
	memcpy(size, h + 12, 4);
	memcpy(at, h + 16, 8);
	memcpy(payload, h + 24, 8);
	if (version != OTELPROC_VERSION)
		return -EPROTONOSUPPORT;
	if (!*at)
		return -EAGAIN;
	return *size > OTELPROC_PAYLOAD_MAX ? -E2BIG : 0;
}

int otelproc_read(struct otelproc *c, uint64_t addr, const struct tlsctx_mem *mem)
{
	uint64_t payload, payload2, at, at2;
	uint32_t size, size2;
	int err;

	memset(c, 0, sizeof(*c));
	if ((err = read_header(addr, mem, &payload, &size, &at)))
		return err;
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return -ENOMEM;
	err = size ? mem->read(mem->ctx, payload, buf, size) : 0;
	if (!err && (err = read_header(addr, mem, &payload2, &size2, &at2)) == 0 &&
	    (at2 != at || payload2 != payload || size2 != size))
		err = -EAGAIN;
	if (err == -ENOENT)
		err = -EAGAIN; /* unpublished meanwhile */
	if (!err && !(err = otelproc_decode(c, buf, size)))
		c->published_at_ns = at;
	free(buf);
	return err;
}

const char *otelproc_key(const struct otelproc *c, unsigned index)
{
	return index < c->nkeys ? c->keys[index] : NULL;
}

const char *otelproc_attr(const struct otelproc *c, const char *key)
{
	if (c->service_name && !strcmp(key, "service.name"))
		return c->service_name;
	for (size_t i = 0; i < c->nattrs; i++)
		if (!strcmp(c->attrs[i].key, key))
			return c->attrs[i].value;
	return NULL;
}

void otelproc_release(struct otelproc *c)
{
	free(c->strs);
	memset(c, 0, sizeof(*c));
}
