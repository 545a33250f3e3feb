/* Unit tests for lib/elf/otelproc: OTEP 4719 process context payloads decoded (the fixture's
 * ProcessContext: service.name, a string attribute, the key map; a bare Resource; attributes that
 * are not strings) and refused (truncated, a group, too many keys); the header read through a fake
 * memory (no signature, another version, being updated, changed while read, too large); the
 * mapping found in maps text; and, live, the otelctx fixture's context: its service name and the
 * key map's http_route. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "otelfix.h"
#include "elf/otelproc.h"

/* A protobuf writer into a fixed buffer, as the fixture's (tests/fixtures/otelctx.c). */
struct buf {
	uint8_t b[4096];
	size_t n;
};

static void put_varint(struct buf *o, uint64_t v)
{
	for (; v >= 0x80; v >>= 7)
		o->b[o->n++] = (uint8_t)(v | 0x80);
	o->b[o->n++] = (uint8_t)v;
}

/* Appends field num holding len bytes of data (length-delimited). */
static void put_field(struct buf *o, int num, const void *data, size_t len)
{
	put_varint(o, (uint64_t)num << 3 | 2);
	put_varint(o, len);
	memcpy(o->b + o->n, data, len);
	o->n += len;
}

/* Appends KeyValue{key, AnyValue{string_value}} as field num. */
static void put_kv(struct buf *o, int num, const char *key, const char *value)
{
	struct buf any = { .n = 0 }, kv = { .n = 0 };

	put_field(&any, 1, value, strlen(value));
	put_field(&kv, 1, key, strlen(key));
	put_field(&kv, 2, any.b, any.n);
	put_field(o, num, kv.b, kv.n);
}

/* Appends the key map naming keys[0..n) as field num. */
static void put_key_map(struct buf *o, int num, const char *const *keys, size_t n)
{
	struct buf arr = { .n = 0 }, any = { .n = 0 }, kv = { .n = 0 }, one;

	for (size_t i = 0; i < n; i++) {
		one.n = 0;
		put_field(&one, 1, keys[i], strlen(keys[i]));
		put_field(&arr, 1, one.b, one.n);
	}
	put_field(&any, 5, arr.b, arr.n);
	put_field(&kv, 1, "threadlocal.attribute_key_map", 29);
	put_field(&kv, 2, any.b, any.n);
	put_field(o, num, kv.b, kv.n);
}

/* The fixture's payload: resource {service.name}, the schema version, the key map. */
static void fixture_payload(struct buf *o)
{
	static const char *const keys[] = { "http_route", "http_method" };
	struct buf res = { .n = 0 };

	o->n = 0;
	put_kv(&res, 1, "service.name", "checkout");
	put_kv(&res, 1, "deployment.environment.name", "prod");
	put_field(o, 1, res.b, res.n);
	put_kv(o, 2, "threadlocal.schema_version", "tlsdesc_v1");
	put_key_map(o, 2, keys, 2);
}

static void test_decode(void **state)
{
	struct buf o;
	struct otelproc c;

	(void)state;
	fixture_payload(&o);
	assert_int_equal(otelproc_decode(&c, o.b, o.n), 0);
	assert_string_equal(c.service_name, "checkout");
	assert_int_equal(c.nkeys, 2);
	assert_string_equal(otelproc_key(&c, 0), "http_route");
	assert_string_equal(otelproc_key(&c, 1), "http_method");
	assert_null(otelproc_key(&c, 2));
	assert_string_equal(otelproc_attr(&c, "deployment.environment.name"), "prod");
	assert_string_equal(otelproc_attr(&c, "threadlocal.schema_version"), "tlsdesc_v1");
	assert_string_equal(otelproc_attr(&c, "service.name"), "checkout");
	assert_int_equal(c.nattrs, 2);
	otelproc_release(&c);
	/* a bare Resource, as the OTEP's other text has it; an int attribute is dropped */
	o.n = 0;
	put_kv(&o, 1, "service.name", "bare");
	uint8_t intval[] = { 0x0a, 3, 'p', 'i', 'd', 0x12, 2, 0x18, 7 };
	put_field(&o, 1, intval, sizeof(intval));
	assert_int_equal(otelproc_decode(&c, o.b, o.n), 0);
	assert_string_equal(c.service_name, "bare");
	assert_int_equal(c.dropped, 1);
	assert_int_equal(c.nkeys, 0);
	otelproc_release(&c);
}

static void test_refused(void **state)
{
	struct buf o;
	struct otelproc c;
	static const char *keys[OTELPROC_KEYS_MAX + 1];

	(void)state;
	fixture_payload(&o);
	for (size_t cut = 1; cut < o.n; cut += 7) { /* truncated: never read past the end */
		int rc = otelproc_decode(&c, o.b, o.n - cut);
		assert_true(rc == 0 || rc == -EPROTO);
		if (rc)
			assert_null(c.service_name);
		otelproc_release(&c);
	}
	uint8_t group[] = { 0x0b, 0x0c };
	assert_int_equal(otelproc_decode(&c, group, sizeof(group)), -EPROTO);
	otelproc_release(&c);
	for (size_t i = 0; i <= OTELPROC_KEYS_MAX; i++)
		keys[i] = "k";
	o.n = 0;
	put_key_map(&o, 2, keys, OTELPROC_KEYS_MAX + 1);
	assert_int_equal(otelproc_decode(&c, o.b, o.n), -EPROTO);
	assert_int_equal(c.nkeys, 0);
	otelproc_release(&c);
}

/* A fake process: the header at 0x1000, the payload at 0x2000; after `flip_after` reads the
 * header's published_at_ns becomes flip_at (an update meanwhile). */
struct fake {
	uint8_t header[OTELPROC_HEADER_SIZE];
	struct buf payload;
	int reads, flip_after;
	uint64_t flip_at;
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = ctx;

	if (f->flip_after && ++f->reads > f->flip_after)
		memcpy(f->header + 16, &f->flip_at, 8);
	if (addr == 0x1000 && len <= sizeof(f->header))
		memcpy(buf, f->header, len);
	else if (addr == 0x2000 && len <= f->payload.n)
		memcpy(buf, f->payload.b, len);
	else
		return -EFAULT;
	return 0;
}

/* The header of a published context: version, payload size, time, payload pointer. */
static void header(struct fake *f, uint32_t version, uint32_t size, uint64_t at)
{
	uint64_t ptr = 0x2000;

	memcpy(f->header, "OTEL_CTX", 8);
	memcpy(f->header + 8, &version, 4);
	memcpy(f->header + 12, &size, 4);
	memcpy(f->header + 16, &at, 8);
	memcpy(f->header + 24, &ptr, 8);
	f->reads = f->flip_after = 0;
}

static void test_read_fake(void **state)
{
	struct fake f;
	struct tlsctx_mem mem = { fake_read, &f };
	struct otelproc c;

	(void)state;
	memset(&f, 0, sizeof(f));
	fixture_payload(&f.payload);
	assert_int_equal(otelproc_read(&c, 0x1000, &mem), -ENOENT); /* no signature yet */
	otelproc_release(&c);
	header(&f, 2, f.payload.n, 42);
	assert_int_equal(otelproc_read(&c, 0x1000, &mem), 0);
	assert_string_equal(c.service_name, "checkout");
	assert_int_equal(c.published_at_ns, 42);
	otelproc_release(&c);
	header(&f, 1, f.payload.n, 42);
	assert_int_equal(otelproc_read(&c, 0x1000, &mem), -EPROTONOSUPPORT);
	header(&f, 2, f.payload.n, 0); /* being updated */
	assert_int_equal(otelproc_read(&c, 0x1000, &mem), -EAGAIN);
	header(&f, 2, f.payload.n, 42);
	f.flip_after = 2; /* updated between the payload and the header read again */
	f.flip_at = 43;
	assert_int_equal(otelproc_read(&c, 0x1000, &mem), -EAGAIN);
	assert_null(c.service_name);
	header(&f, 2, OTELPROC_PAYLOAD_MAX + 1, 42);
	assert_int_equal(otelproc_read(&c, 0x1000, &mem), -E2BIG);
	header(&f, 2, f.payload.n + 1, 42); /* a payload running off the mapping */
	assert_int_equal(otelproc_read(&c, 0x1000, &mem), -EFAULT);
	otelproc_release(&c);
}

static void test_find(void **state)
{
	static const char maps[] =
		"555555554000-555555556000 r-xp 00000000 08:01 1234 /usr/bin/app\n"
		"7ffff7fb0000-7ffff7fb2000 rw-s 00000000 00:01 99 /memfd:OTEL_CTX (deleted)\n";
	static const char anon[] = "7ffff7fb0000-7ffff7fb2000 rw-p 00000000 00:00 0 [anon:OTEL_CTX]\n";
	struct procmap m;
	uint64_t addr = 0;

	(void)state;
	assert_int_equal(procmap_parse(&m, maps, strlen(maps)), 0);
	assert_int_equal(otelproc_find(&m, &addr), 0);
	assert_int_equal(addr, 0x7ffff7fb0000);
	procmap_release(&m);
	assert_int_equal(procmap_parse(&m, anon, strlen(anon)), 0);
	assert_int_equal(otelproc_find(&m, &addr), 0);
	procmap_release(&m);
	assert_int_equal(procmap_parse(&m, maps, 64), 0);
	assert_int_equal(otelproc_find(&m, &addr), -ENOENT);
	procmap_release(&m);
}

/* Live: the otelctx fixture's published context read from its memory. */
static void test_live(void **state)
{
	struct otelfix f;
	struct tlsctx_mem mem = { otelfix_read, &f };
	struct procmap m;
	struct otelproc c;
	uint64_t addr = 0;

	(void)state;
	if (otelfix_start(&f, "otelctx", 250)) {
		otelfix_stop(&f);
		skip();
	}
	assert_int_equal(procmap_read(&m, f.pid), 0);
	assert_int_equal(otelproc_find(&m, &addr), 0);
	procmap_release(&m);
	assert_int_equal(otelproc_read(&c, addr, &mem), 0);
	assert_string_equal(c.service_name, "otelctx-fixture");
	assert_string_equal(otelproc_key(&c, 0), "http_route");
	assert_string_equal(otelproc_attr(&c, "threadlocal.schema_version"), "tlsdesc_v1");
	assert_true(c.published_at_ns > 0);
	otelproc_release(&c);
	otelfix_stop(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_read_fake),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_live),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
