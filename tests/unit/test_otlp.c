/* lib/format/otlp: a small profile (two sample types, an inlined frame, a build id, two samples of one
 * stack that differ by a label) as an ExportProfilesServiceRequest, read back field by field
 * with the wire format's rules (v1.11.0's field numbers): zero values at index 0 of every
 * table, one stack for the two samples, labels as attributes, native frames, the default type's Profile first,
 * the resource's service.name, host.name and container.id. tests/cli/test_push.sh decodes
 * firn's requests with protoc. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/otlp.h"

/* One field of a message. */
struct fld {
	uint32_t num;
	unsigned wire;
	uint64_t v;            /* varint or fixed64 */
	const uint8_t *p;      /* length-delimited contents */
	size_t len;
};

static uint64_t varint(const uint8_t **c, const uint8_t *end)
{
	uint64_t v = 0;

	for (int s = 0; *c < end && s < 64; s += 7) {
		uint8_t b = *(*c)++;
		v |= (uint64_t)(b & 0x7f) << s;
		if (b < 0x80)
			return v;
	}
	fail_msg("bad varint");
	return 0;
}

/* The n-th (0-based) field numbered num of the message [p, p+len); fails the test when none. */
static struct fld field(const uint8_t *p, size_t len, uint32_t num, size_t n)
{
	const uint8_t *c = p, *end = p + len;

	while (c < end) {
		uint64_t k = varint(&c, end);
		struct fld f = { (uint32_t)(k >> 3), (unsigned)(k & 7), 0, NULL, 0 };
		if (f.wire == 0) {
			f.v = varint(&c, end);
		} else if (f.wire == 1) {
			assert_true(end - c >= 8);
			for (int i = 0; i < 8; i++)
				f.v |= (uint64_t)c[i] << (8 * i);
			c += 8;
		} else {
			assert_int_equal(f.wire, 2);
			f.len = varint(&c, end);
			assert_true(f.len <= (size_t)(end - c));
			f.p = c;
			c += f.len;
		}
		if (f.num == num && !n--)
			return f;
	}
	fail_msg("no field %u #%zu", num, n);
	return (struct fld){ 0 };
}

/* How many fields numbered num the message has. */
static size_t count(const uint8_t *p, size_t len, uint32_t num)
{
	size_t n = 0;
	const uint8_t *c = p, *end = p + len;

	while (c < end) {
		uint64_t k = varint(&c, end);
		if ((k & 7) == 0)
			varint(&c, end);
		else if ((k & 7) == 1)
			c += 8;
		else
			c += varint(&c, end);
		n += (k >> 3) == num;
	}
	return n;
}

#define SUB(f, num, n) field((f).p, (f).len, num, n)
#define COUNT(f, num) count((f).p, (f).len, num)

static struct profile prof;
static struct fld req, dict;
static void *buf;

/* The string_table entry i as a C string (the test's strings are short). */
static const char *str(uint64_t i)
{
	static char s[8][64];
	static int k;
	struct fld f = SUB(dict, 5, i);

	k = (k + 1) % 8;
	assert_true(f.len < sizeof(s[k]));
	memcpy(s[k], f.p, f.len);
	s[k][f.len] = 0;
	return s[k];
}

/* Value of the string AnyValue in field vf of the message m. */
static const char *any_str(struct fld m, uint32_t vf)
{
	static char s[64];
	struct fld v = SUB(SUB(m, vf, 0), 1, 0);

	memcpy(s, v.p, v.len < 63 ? v.len : 63);
	s[v.len < 63 ? v.len : 63] = 0;
	return s;
}

static int setup(void **state)
{
	static const uint8_t id[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	struct otlp_attr more = { "env", "test" };
	struct otlp_opts o = { "svc", "h1", "c0ffee", &more, 1, id };
	size_t len = 0;

	(void)state;
	assert_int_equal(profile_init(&prof), 0);
	profile_add_sample_type(&prof, "samples", "count");
	profile_add_sample_type(&prof, "cpu", "nanoseconds");
	prof.default_sample_type = (uint32_t)profile_intern(&prof, "cpu");
	prof.time_nanos = 1700000000123456789;
	prof.duration_nanos = 10000000000;
	int64_t m = profile_add_mapping(&prof, 0x1000, 0x9000, 0, "/bin/app", "abcd");
	int64_t fmain = profile_function(&prof, "main", "main", "app.c", 1);
	int64_t fwork = profile_function(&prof, "work", "work", "app.c", 10);
	int64_t finl = profile_function(&prof, "inl", "inl", "app.h", 3);
	struct profile_line l1[] = { { (uint64_t)finl, 4 }, { (uint64_t)fwork, 12 } };
	struct profile_line l2[] = { { (uint64_t)fmain, 2 } };
	uint64_t stack[] = { (uint64_t)profile_add_location(&prof, (uint64_t)m, 0x1234, l1, 2),
			     (uint64_t)profile_add_location(&prof, (uint64_t)m, 0x1100, l2, 1) };
	struct profile_label a[] = { { (uint32_t)profile_intern(&prof, "pid"), 0, 42, 0 },
				     { (uint32_t)profile_intern(&prof, "comm"),
				       (uint32_t)profile_intern(&prof, "app"), 0, 0 } };
	int64_t v1[] = { 3, 30000000 }, v2[] = { 5, 50000000 };
	assert_int_equal(profile_add_sample(&prof, stack, 2, v1, a, 2), 0);
	a[0].num = 43;
	assert_int_equal(profile_add_sample(&prof, stack, 2, v2, a, 2), 0);
	assert_int_equal(otlp_encode(&prof, &o, &buf, &len), 0);
	req = (struct fld){ 0, 2, 0, buf, len };
	assert_int_equal(COUNT(req, 1), 1);
	assert_int_equal(COUNT(req, 2), 1);
	dict = SUB(req, 2, 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(buf);
	profile_release(&prof);
	return 0;
}

/* Every table starts with its zero value; the two samples share one stack. */
static void test_dictionary(void **state)
{
	(void)state;
	assert_string_equal(str(0), "");
	assert_int_equal(COUNT(dict, 1), 2); /* mappings */
	assert_int_equal(COUNT(dict, 2), 3); /* locations */
	assert_int_equal(COUNT(dict, 3), 4); /* functions */
	assert_int_equal(COUNT(dict, 4), 1); /* links: only the zero one */
	assert_int_equal(COUNT(dict, 7), 2); /* stacks */
	assert_int_equal(COUNT(dict, 6), 6); /* attributes: pid 42, pid 43, comm, build id, native */
	for (uint32_t t = 1; t <= 7; t++)
		if (t != 4 && t != 5)
			assert_int_equal(SUB(dict, t, 0).len, 0);
	struct fld link = SUB(dict, 4, 0);
	assert_int_equal(SUB(link, 1, 0).len, 16);
	assert_int_equal(SUB(link, 2, 0).len, 8);
	struct fld mp = SUB(dict, 1, 1);
	assert_int_equal(SUB(mp, 1, 0).v, 0x1000);
	assert_int_equal(SUB(mp, 2, 0).v, 0x9000);
	assert_string_equal(str(SUB(mp, 4, 0).v), "/bin/app");
	/* the leaf location: the inlined function first, then its caller */
	struct fld loc = SUB(dict, 2, 1);
	assert_int_equal(SUB(loc, 1, 0).v, 1);
	assert_int_equal(SUB(loc, 2, 0).v, 0x1234);
	struct fld ln0 = SUB(loc, 3, 0), ln1 = SUB(loc, 3, 1);
	assert_string_equal(str(SUB(SUB(dict, 3, SUB(ln0, 1, 0).v), 1, 0).v), "inl");
	assert_int_equal(SUB(ln0, 2, 0).v, 4);
	assert_string_equal(str(SUB(SUB(dict, 3, SUB(ln1, 1, 0).v), 1, 0).v), "work");
	/* the stack: leaf first */
	struct fld st = SUB(SUB(dict, 7, 1), 1, 0);
	assert_int_equal(st.len, 2);
	assert_int_equal(st.p[0], 1);
	assert_int_equal(st.p[1], 2);
}

/* The mapping's build id is its attribute process.executable.build_id.gnu. */
static void test_build_id(void **state)
{
	(void)state;
	struct fld mp = SUB(dict, 1, 1), ai = SUB(mp, 5, 0);
	assert_int_equal(ai.len, 1);
	struct fld a = SUB(dict, 6, ai.p[0]);
	assert_string_equal(str(SUB(a, 1, 0).v), "process.executable.build_id.gnu");
	assert_string_equal(any_str(a, 2), "abcd");
}

/* Locations in a file's mapping are native frames (profile.frame.type), both sharing one
 * attribute. */
static void test_frame_type(void **state)
{
	(void)state;
	for (size_t i = 1; i <= 2; i++) {
		struct fld ai = SUB(SUB(dict, 2, i), 4, 0);
		assert_int_equal(ai.len, 1);
		struct fld a = SUB(dict, 6, ai.p[0]);
		assert_string_equal(str(SUB(a, 1, 0).v), "profile.frame.type");
		assert_string_equal(any_str(a, 2), "native");
		assert_int_equal(ai.p[0], SUB(SUB(dict, 2, 1), 4, 0).p[0]);
	}
}

/* Whether the encoding of a one-location profile in a mapping named name (its runtime set to
 * rt when rt >= 0) holds the frame type "cpython". */
static bool has_cpython(const char *name, int rt)
{
	struct profile q;
	struct otlp_opts o = { "svc", NULL, NULL, NULL, 0, NULL };
	void *out = NULL;
	size_t len = 0;

	assert_int_equal(profile_init(&q), 0);
	profile_add_sample_type(&q, "samples", "count");
	int64_t m = profile_add_mapping(&q, 0, 0, 0, name, "");
	if (rt >= 0)
		q.mappings[m - 1].runtime = (enum frame_runtime)rt;
	struct profile_line l = { (uint64_t)profile_function(&q, "f", "f", "f.py", 1), 2 };
	uint64_t loc = (uint64_t)profile_add_location(&q, (uint64_t)m, 0, &l, 1);
	int64_t v = 1;
	assert_int_equal(profile_add_sample(&q, &loc, 1, &v, NULL, 0), 0);
	assert_int_equal(otlp_encode(&q, &o, &out, &len), 0);
	bool found = memmem(out, len, "cpython", 7) != NULL;
	free(out);
	profile_release(&q);
	return found;
}

/* Python frames are "cpython" by their mapping's runtime (frame_kind.h), not by its name: a
 * saved profile's "[python]" mapping gets it back from the name, a native mapping none. */
static void test_frame_type_runtime(void **state)
{
	(void)state;
	assert_true(has_cpython("[python]", -1));
	assert_true(has_cpython("py-frames", FRAME_PYTHON));
	assert_false(has_cpython("[python]", FRAME_NATIVE));
	assert_false(has_cpython("/usr/bin/python3", -1));
}

/* The resource's attributes, then one Profile per sample type, the default (cpu) first. */
static void test_profiles(void **state)
{
	(void)state;
	struct fld rp = SUB(req, 1, 0), res = SUB(rp, 1, 0);
	const char *want[][2] = { { "service.name", "svc" }, { "host.name", "h1" },
				  { "container.id", "c0ffee" }, { "env", "test" } };
	assert_int_equal(COUNT(res, 1), 4);
	for (size_t i = 0; i < 4; i++) {
		struct fld kv = SUB(res, 1, i), k = SUB(kv, 1, 0);
		assert_int_equal(k.len, strlen(want[i][0]));
		assert_memory_equal(k.p, want[i][0], k.len);
		assert_string_equal(any_str(kv, 2), want[i][1]);
	}
	struct fld sp = SUB(rp, 2, 0);
	assert_int_equal(COUNT(sp, 2), 2);
	struct fld p0 = SUB(sp, 2, 0), p1 = SUB(sp, 2, 1);
	assert_string_equal(str(SUB(SUB(p0, 1, 0), 1, 0).v), "cpu");
	assert_string_equal(str(SUB(SUB(p0, 1, 0), 2, 0).v), "nanoseconds");
	assert_string_equal(str(SUB(SUB(p1, 1, 0), 1, 0).v), "samples");
	assert_int_equal(SUB(p0, 3, 0).wire, 1);
	assert_int_equal(SUB(p0, 3, 0).v, 1700000000123456789ULL);
	assert_int_equal(SUB(p0, 4, 0).v, 10000000000ULL);
	assert_int_equal(SUB(p0, 7, 0).len, 16);
	assert_int_equal(COUNT(p0, 2), 2);
	int64_t sum = 0;
	for (size_t i = 0; i < 2; i++) {
		struct fld s = SUB(p1, 2, i), ai = SUB(s, 2, 0), vals = SUB(s, 4, 0);
		assert_int_equal(SUB(s, 1, 0).v, 1); /* the one stack */
		assert_int_equal(ai.len, 2);
		struct fld pid = SUB(dict, 6, ai.p[0]), comm = SUB(dict, 6, ai.p[1]);
		assert_string_equal(str(SUB(pid, 1, 0).v), "pid");
		assert_int_equal(SUB(SUB(pid, 2, 0), 3, 0).v, 42 + i);
		assert_string_equal(any_str(comm, 2), "app");
		assert_int_equal(vals.len, 1);
		sum += vals.p[0];
	}
	assert_int_equal(sum, 8);
}

/* A sample with a span's trace_id and span_id labels (firn's thread context labels) links to
 * that span: its link_index names a link_table entry with the ids as bytes, after the zero
 * one; a sample without them (or with ids that are not hex of the right length) has none. */
static void test_links(void **state)
{
	struct profile p;
	void *out = NULL;
	size_t len = 0;
	(void)state;
	assert_int_equal(profile_init(&p), 0);
	profile_add_sample_type(&p, "samples", "count");
	int64_t m = profile_add_mapping(&p, 0x1000, 0x9000, 0, "/bin/app", "");
	struct profile_line l[] = { { (uint64_t)profile_function(&p, "main", "main", "a.c", 1), 2 } };
	uint64_t loc = (uint64_t)profile_add_location(&p, (uint64_t)m, 0x1234, l, 1);
	uint32_t kt = (uint32_t)profile_intern(&p, "trace_id"), ks = (uint32_t)profile_intern(&p, "span_id");
	struct profile_label span[] = {
		{ kt, (uint32_t)profile_intern(&p, "101112131415161718191a1b1c1d1e1f"), 0, 0 },
		{ ks, (uint32_t)profile_intern(&p, "a0a1a2a3a4a5a6a7"), 0, 0 } };
	struct profile_label bad[] = { { kt, (uint32_t)profile_intern(&p, "other"), 0, 0 },
				       { ks, (uint32_t)profile_intern(&p, "other"), 0, 0 } };
	int64_t v1[] = { 3 }, v2[] = { 5 }, v3[] = { 7 };
	assert_int_equal(profile_add_sample(&p, &loc, 1, v1, span, 2), 0);
	assert_int_equal(profile_add_sample(&p, &loc, 1, v2, NULL, 0), 0);
	assert_int_equal(profile_add_sample(&p, &loc, 1, v3, bad, 2), 0);
	assert_int_equal(otlp_encode(&p, NULL, &out, &len), 0);
	struct fld r = { 0, 2, 0, out, len }, d = SUB(r, 2, 0);
	struct fld pr = SUB(SUB(SUB(r, 1, 0), 2, 0), 2, 0);
	assert_int_equal(COUNT(d, 4), 2);
	struct fld link = SUB(d, 4, 1), t = SUB(link, 1, 0), s = SUB(link, 2, 0);
	assert_int_equal(t.len, 16);
	assert_int_equal(s.len, 8);
	for (int i = 0; i < 16; i++)
		assert_int_equal(t.p[i], 0x10 + i);
	for (int i = 0; i < 8; i++)
		assert_int_equal(s.p[i], 0xa0 + i);
	assert_int_equal(COUNT(pr, 2), 3);
	assert_int_equal(COUNT(SUB(pr, 2, 0), 3), 1);
	assert_int_equal(SUB(SUB(pr, 2, 0), 3, 0).v, 1);
	assert_int_equal(COUNT(SUB(pr, 2, 1), 3), 0);
	assert_int_equal(COUNT(SUB(pr, 2, 2), 3), 0);
	free(out);
	profile_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dictionary),
		cmocka_unit_test(test_build_id),
		cmocka_unit_test(test_frame_type),
		cmocka_unit_test(test_frame_type_runtime),
		cmocka_unit_test(test_profiles),
		cmocka_unit_test(test_links),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
