/* Unit tests for lib/format/pprof: exact wire bytes, round trips (raw and gzip), decoding of arbitrary
 * ids and unpacked fields, the compact form (pprof_encode_flags), rejection of malformed input (every truncation, bad indexes, missing
 * ids, garbage gzip, a decompression bomb) and a profile written by Go's runtime/pprof. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "format/folded.h"
#include "format/pprof.h"
#include "model/profile.h"

/* A profile with every feature the format carries: two sample types, metadata, comments, a
 * user and a kernel mapping, an inlined line, string and numeric labels, negative line numbers. */
static void build_profile(struct profile *p)
{
	assert_int_equal(profile_init(p), 0);
	assert_int_equal(profile_add_sample_type(p, "samples", "count"), 0);
	assert_int_equal(profile_add_sample_type(p, "cpu", "nanoseconds"), 1);
	p->period_type.type = profile_intern(p, "cpu");
	p->period_type.unit = profile_intern(p, "nanoseconds");
	p->period = 10101010;
	p->time_nanos = 1700000000123456789LL;
	p->duration_nanos = 2500000000LL;
	p->default_sample_type = profile_intern(p, "cpu");
	assert_int_equal(profile_add_comment(p, "recorded by firn"), 0);
	assert_int_equal(profile_add_comment(p, "second comment"), 0);
	int64_t app = profile_add_mapping(p, 0x400000, 0x4a0000, 0x1000, "/usr/bin/app", "abc123");
	int64_t kern = profile_add_mapping(p, 0, 0, 0, "[kernel.kallsyms]", "");
	assert_true(app == 1 && kern == 2);
	p->mappings[0].has_functions = p->mappings[0].has_line_numbers = true;
	p->mappings[0].has_inline_frames = true;
	int64_t fmain = profile_function(p, "main", NULL, "app.c", 10);
	int64_t fwork = profile_function(p, "work", "_Z4workv", "app.c", -3);
	int64_t fhelp = profile_function(p, "helper", NULL, "util.h", 0);
	int64_t fread_ = profile_function(p, "ksys_read", NULL, "", 0);
	int64_t lmain = profile_simple_location(p, app, fmain, FRAME_USER);
	struct profile_line inl[2] = { { fhelp, 7 }, { fwork, 42 } };
	int64_t lwork = profile_add_location(p, app, 0x401234, inl, 2);
	int64_t lk = profile_simple_location(p, kern, fread_, FRAME_KERNEL);
	int64_t lraw = profile_add_location(p, app, 0x40ffff, NULL, 0);
	assert_true(lmain == 1 && lwork == 2 && lk == 3 && lraw == 4);

	struct profile_label labels[2] = {
		{ .key = profile_intern(p, "comm"), .str = profile_intern(p, "app") },
		{ .key = profile_intern(p, "pid"), .num = 4242, .num_unit = profile_intern(p, "id") },
	};
	uint64_t s1[] = { lk, lwork, lmain }, s2[] = { lwork, lmain }, s3[] = { lraw, lmain };
	int64_t v1[] = { 3, 30000000 }, v2[] = { 1, 5 }, v3[] = { 7, 1LL << 40 };
	assert_int_equal(profile_add_sample(p, s1, 3, v1, labels, 2), 0);
	assert_int_equal(profile_add_sample(p, s2, 2, v2, labels, 1), 0);
	assert_int_equal(profile_add_sample(p, s3, 2, v3, labels, 0), 0);
	assert_int_equal(p->nsamples, 3);
}

/* Asserts two profiles hold the same strings, tables, samples and metadata. */
static void assert_same_meta(const struct profile *a, const struct profile *b)
{
	assert_int_equal(a->strings.n, b->strings.n);
	for (uint32_t i = 0; i < a->strings.n; i++) {
		assert_int_equal(a->strings.lens[i], b->strings.lens[i]);
		assert_memory_equal(a->strings.strs[i], b->strings.strs[i], a->strings.lens[i]);
	}
	assert_int_equal(a->nsample_types, b->nsample_types);
	assert_memory_equal(a->sample_types, b->sample_types, a->nsample_types * sizeof(*a->sample_types));
	assert_int_equal(a->period_type.type, b->period_type.type);
	assert_int_equal(a->period_type.unit, b->period_type.unit);
	assert_int_equal(a->period, b->period);
	assert_int_equal(a->time_nanos, b->time_nanos);
	assert_int_equal(a->duration_nanos, b->duration_nanos);
	assert_int_equal(a->default_sample_type, b->default_sample_type);
	assert_int_equal(a->ncomments, b->ncomments);
	if (a->ncomments)
		assert_memory_equal(a->comments, b->comments, a->ncomments * sizeof(*a->comments));
}

/* Asserts equal mappings, functions and locations. */
static void assert_same_tables(const struct profile *a, const struct profile *b)
{
	assert_int_equal(a->nmappings, b->nmappings);
	for (uint64_t i = 0; i < a->nmappings; i++) {
		const struct profile_mapping *x = &a->mappings[i], *y = &b->mappings[i];
		assert_true(x->start == y->start && x->limit == y->limit && x->offset == y->offset);
		assert_true(x->filename == y->filename && x->build_id == y->build_id);
		assert_true(x->has_functions == y->has_functions && x->has_filenames == y->has_filenames);
		assert_true(x->has_line_numbers == y->has_line_numbers &&
			    x->has_inline_frames == y->has_inline_frames);
		assert_int_equal(x->kind, y->kind);
	}
	assert_int_equal(a->nfunctions, b->nfunctions);
	for (uint64_t i = 0; i < a->nfunctions; i++) {
		const struct profile_function *x = &a->functions[i], *y = &b->functions[i];
		assert_true(x->name == y->name && x->system_name == y->system_name);
		assert_true(x->filename == y->filename && x->start_line == y->start_line);
	}
	assert_int_equal(a->nlocations, b->nlocations);
	for (uint64_t i = 0; i < a->nlocations; i++) {
		const struct profile_location *x = &a->locations[i], *y = &b->locations[i];
		assert_int_equal(x->mapping_id, y->mapping_id);
		assert_int_equal(x->address, y->address);
		assert_int_equal(x->kind, y->kind);
		assert_int_equal(x->nlines, y->nlines);
		for (uint32_t j = 0; j < x->nlines; j++) {
			assert_int_equal(x->lines[j].function_id, y->lines[j].function_id);
			assert_int_equal(x->lines[j].line, y->lines[j].line);
		}
	}
}

/* Asserts equal samples: locations, values, labels. */
static void assert_same_samples(const struct profile *a, const struct profile *b)
{
	assert_int_equal(a->nsamples, b->nsamples);
	for (uint64_t i = 0; i < a->nsamples; i++) {
		const struct profile_sample *x = &a->samples[i], *y = &b->samples[i];
		assert_int_equal(x->nlocs, y->nlocs);
		assert_memory_equal(x->location_ids, y->location_ids, x->nlocs * sizeof(uint64_t));
		assert_memory_equal(x->values, y->values, a->nsample_types * sizeof(int64_t));
		assert_int_equal(x->nlabels, y->nlabels);
		for (uint32_t j = 0; j < x->nlabels; j++) {
			assert_int_equal(x->labels[j].key, y->labels[j].key);
			assert_int_equal(x->labels[j].str, y->labels[j].str);
			assert_int_equal(x->labels[j].num, y->labels[j].num);
			assert_int_equal(x->labels[j].num_unit, y->labels[j].num_unit);
		}
	}
}

/* Asserts two profiles have identical content. */
static void assert_same_profile(const struct profile *a, const struct profile *b)
{
	assert_same_meta(a, b);
	assert_same_tables(a, b);
	assert_same_samples(a, b);
}

/* Encodes, decodes and compares with the original. */
static void round_trip(bool gzip)
{
	struct profile p, q;
	void *buf;
	size_t len;

	build_profile(&p);
	assert_int_equal(pprof_encode(&p, gzip, &buf, &len), 0);
	assert_true(len > 20);
	const uint8_t *b = buf;
	assert_int_equal(b[0] == 0x1f && b[1] == 0x8b, gzip);
	assert_int_equal(profile_init(&q), 0);
	assert_int_equal(pprof_decode(&q, buf, len), 0);
	assert_same_profile(&p, &q);
	assert_int_equal(q.locations[2].kind, FRAME_KERNEL);
	assert_int_equal(q.samples[1].values[1], 5);
	free(buf);
	profile_release(&p);
	profile_release(&q);
}

/* Round trip without gzip. */
static void test_round_trip_raw(void **state)
{
	round_trip(false);
}

/* Round trip with gzip. */
static void test_round_trip_gzip(void **state)
{
	round_trip(true);
}

/* Encoding twice gives the same bytes; re-encoding a decoded profile too. */
static void test_encode_deterministic(void **state)
{
	struct profile p, q;
	void *a, *b;
	size_t alen, blen;

	build_profile(&p);
	assert_int_equal(pprof_encode(&p, false, &a, &alen), 0);
	assert_int_equal(profile_init(&q), 0);
	assert_int_equal(pprof_decode(&q, a, alen), 0);
	assert_int_equal(pprof_encode(&q, false, &b, &blen), 0);
	assert_int_equal(alen, blen);
	assert_memory_equal(a, b, alen);
	free(a);
	free(b);
	profile_release(&p);
	profile_release(&q);
}

/* A profile as record takes it: one location per sampled address (8 addresses on each of three
 * lines of a leaf function), an inlined caller, kernel frames, two unresolved addresses, a
 * mangled name, two processes, five threads; labels pid, tid, comm and thread on every sample. */
static void build_recorded(struct profile *p)
{
	assert_int_equal(profile_init(p), 0);
	assert_int_equal(profile_add_sample_type(p, "samples", "count"), 0);
	assert_int_equal(profile_add_sample_type(p, "cpu", "nanoseconds"), 1);
	int64_t app = profile_add_mapping(p, 0x400000, 0x4a0000, 0, "/usr/bin/app", "abc123");
	int64_t kern = profile_add_mapping(p, 0, 0, 0, "[kernel.kallsyms]", "");
	int64_t fleaf = profile_function(p, "leaf", "_Z4leafv", "app.c", 10);
	int64_t finl = profile_function(p, "inl", NULL, "app.h", 3);
	int64_t fmain = profile_function(p, "main", NULL, "app.c", 30);
	int64_t fk[2] = { profile_function(p, "ksys_read", NULL, "", 0),
			  profile_function(p, "vfs_read", NULL, "", 0) };
	struct profile_line mid[2] = { { finl, 4 }, { fmain, 33 } }, top = { fmain, 35 };
	int64_t lmid = profile_add_location(p, app, 0x401800, mid, 2);
	int64_t lmain = profile_add_location(p, app, 0x401900, &top, 1);
	int64_t lraw[2] = { profile_add_location(p, app, 0x40ffff, NULL, 0),
			    profile_add_location(p, app, 0x40fff0, NULL, 0) };
	uint64_t leaf[24], kl[4];
	for (int i = 0; i < 24; i++) {
		struct profile_line l = { fleaf, 11 + i % 3 };
		leaf[i] = profile_add_location(p, app, 0x401000 + 0x40 * (i % 3) + 23 - i, &l, 1);
	}
	for (int i = 0; i < 4; i++) {
		struct profile_line l = { fk[i % 2], 0 };
		kl[i] = profile_add_location(p, kern, 0xffffffff81000000ULL + 0x10 * i, &l, 1);
	}
	for (int i = 0; i < 240; i++) {
		int t = i % 5;
		struct profile_label lb[4] = {
			{ .key = profile_intern(p, "pid"), .num = t < 4 ? 42 : 7 },
			{ .key = profile_intern(p, "tid"), .num = 100 + t },
			{ .key = profile_intern(p, "comm"), .str = profile_intern(p, t < 4 ? "app" : "other") },
			{ .key = profile_intern(p, "thread"), .str = profile_intern(p, t ? "worker" : "app") },
		};
		uint64_t st[] = { kl[i % 4], leaf[i % 24], lmid, lmain }, raw[] = { lraw[i % 2], lmain };
		int64_t v[] = { 1 + i % 2, 10101010 * (1 + i % 2) };
		bool k = i % 3 == 0;
		assert_int_equal(i % 7 == 0 ? profile_add_sample(p, raw, 2, v, lb, 4)
			       : profile_add_sample(p, st + !k, 4 - !k, v, lb, 4), 0);
	}
}

/* Encodes p with flags, decodes it into q; returns the encoded size. */
static size_t encode_decode(struct profile *p, unsigned flags, struct profile *q)
{
	void *buf;
	size_t len;

	assert_int_equal(pprof_encode_flags(p, false, flags, &buf, &len), 0);
	assert_int_equal(profile_init(q), 0);
	assert_int_equal(pprof_decode(q, buf, len), 0);
	free(buf);
	return len;
}

/* Folded stacks with the process name and pid first, as report --folded writes them. */
static char *folded_text(struct profile *p)
{
	struct folded_opts o = { .comm_first = true, .pid = true, .annotate_inline = true };
	char *text = NULL;
	size_t len;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(folded_write(p, f, &o), 0);
	fclose(f);
	return text;
}

/* The sum over samples of value * a hash of its frames' names and lines (what report --lines
 * counts), so two profiles that count the same lines agree. */
static uint64_t lines_digest(struct profile *p)
{
	struct profile_frame *fr = NULL;
	size_t cap = 0;
	uint64_t sum = 0;

	for (uint64_t i = 0; i < p->nsamples; i++) {
		int64_t n = profile_frames(p, &p->samples[i], &fr, &cap);
		uint64_t h = 1469598103934665603ULL;
		assert_true(n > 0);
		for (int64_t j = 0; j < n; j++) {
			const char *name = profile_str(p, fr[j].name);
			for (const char *c = name; *c; c++)
				h = (h ^ (uint8_t)*c) * 1099511628211ULL;
			h = (h ^ (uint64_t)fr[j].line) * 1099511628211ULL;
		}
		sum += h * (uint64_t)p->samples[i].values[1];
	}
	free(fr);
	return sum;
}

/* Whether any sample of p has a label named key. */
static bool has_label(const struct profile *p, const char *key)
{
	for (uint64_t i = 0; i < p->nsamples; i++)
		for (uint32_t j = 0; j < p->samples[i].nlabels; j++)
			if (!strcmp(profile_str(p, p->samples[i].labels[j].key), key))
				return true;
	return false;
}

/* The compact form: one location per line (at its lowest address; kernel and unresolved ones at
 * 0, one unresolved per mapping), no tid or thread labels, no mangled names, under a fifth of the
 * bytes, and the same folded stacks, lines, pids and comms. */
static void test_encode_compact(void **state)
{
	struct profile p, full, c;

	build_recorded(&p);
	size_t flen = encode_decode(&p, 0, &full);
	size_t clen = encode_decode(&p, PPROF_FUNCTION_LINES | PPROF_NO_THREAD_LABELS |
				    PPROF_NO_SYSTEM_NAMES, &c);
	assert_int_equal(full.nlocations, 32);
	assert_int_equal(c.nlocations, 3 + 3 + 2); /* mid, main, raw; 3 leaf lines; 2 kernel */
	for (uint64_t i = 0; i < c.nlocations; i++) {
		const struct profile_location *l = &c.locations[i];
		if (l->kind == FRAME_KERNEL || !l->nlines)
			assert_int_equal(l->address, 0);
		else if (l->nlines == 1 && l->lines[0].line >= 11 && l->lines[0].line <= 13)
			assert_int_equal(l->address, 0x401002 + 0x3f * (l->lines[0].line - 11));
	}
	assert_true(has_label(&full, "tid") && has_label(&full, "thread"));
	assert_false(has_label(&c, "tid") || has_label(&c, "thread"));
	assert_true(has_label(&c, "pid") && has_label(&c, "comm"));
	assert_int_not_equal(strtab_find(&full.strings, "_Z4leafv", 8), -1);
	assert_int_equal(strtab_find(&c.strings, "_Z4leafv", 8), -1);
	char *a = folded_text(&full), *b = folded_text(&c);
	assert_string_equal(a, b);
	assert_true(lines_digest(&full) == lines_digest(&c));
	printf("# compact form: %zu of %zu bytes\n", clen, flen);
	assert_true(clen * 5 < flen);
	free(a);
	free(b);
	profile_release(&p);
	profile_release(&full);
	profile_release(&c);
}

/* A recorder's profile keeps every location it ever resolved (recorder.h), so the copy holds
 * only what its samples use: the recorded profile with 5,000 locations, functions and mappings
 * of earlier intervals added (no sample uses them) encodes to the very bytes it encodes to
 * without them, for every flag. */
static void test_encode_compact_used_only(void **state)
{
	const unsigned flags[] = { PPROF_FUNCTION_LINES | PPROF_NO_THREAD_LABELS |
				   PPROF_NO_SYSTEM_NAMES, PPROF_FUNCTION_LINES,
				   PPROF_NO_THREAD_LABELS, PPROF_NO_SYSTEM_NAMES };
	struct profile plain, aged;

	(void)state;
	build_recorded(&plain);
	build_recorded(&aged);
	for (int i = 0; i < 5000; i++) { /* what earlier intervals resolved */
		char name[32], path[32];
		snprintf(name, sizeof(name), "old_fn_%d", i);
		snprintf(path, sizeof(path), "/usr/lib/old%d.so", i % 50);
		int64_t m = profile_add_mapping(&aged, 0x7f0000000000ULL + (uint64_t)(i % 50) * 0x100000,
						0x7f0000000000ULL + (uint64_t)(i % 50 + 1) * 0x100000,
						0, path, "");
		struct profile_line l = { profile_function(&aged, name, name, "old.c", i), 1 };
		assert_true(m > 0 && l.function_id > 0);
		assert_true(profile_add_location(&aged, (uint64_t)m, 0x7f0000001000ULL + (uint64_t)i,
						 &l, 1) > 0);
	}
	for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++) {
		void *a, *b;
		size_t alen, blen;
		assert_int_equal(pprof_encode_flags(&plain, false, flags[f], &a, &alen), 0);
		assert_int_equal(pprof_encode_flags(&aged, false, flags[f], &b, &blen), 0);
		assert_int_equal(blen, alen);
		assert_memory_equal(a, b, alen);
		free(a);
		free(b);
	}
	profile_release(&plain);
	profile_release(&aged);
}

/* Each flag alone does only its part; no flags is pprof_encode. */
static void test_encode_compact_flags(void **state)
{
	struct profile p, q;
	void *a, *b;
	size_t alen, blen;

	build_recorded(&p);
	encode_decode(&p, PPROF_FUNCTION_LINES, &q);
	assert_int_equal(q.nlocations, 8);
	assert_true(has_label(&q, "tid") && has_label(&q, "thread"));
	assert_int_not_equal(strtab_find(&q.strings, "_Z4leafv", 8), -1);
	profile_release(&q);
	encode_decode(&p, PPROF_NO_THREAD_LABELS, &q);
	assert_int_equal(q.nlocations, 32);
	assert_false(has_label(&q, "tid"));
	assert_true(q.nsamples < p.nsamples);
	profile_release(&q);
	encode_decode(&p, PPROF_NO_SYSTEM_NAMES, &q);
	assert_int_equal(q.nlocations, 32);
	assert_true(has_label(&q, "tid"));
	assert_int_equal(strtab_find(&q.strings, "_Z4leafv", 8), -1);
	profile_release(&q);
	assert_int_equal(pprof_encode_flags(&p, true, 0, &a, &alen), 0);
	assert_int_equal(pprof_encode(&p, true, &b, &blen), 0);
	assert_true(alen == blen && !memcmp(a, b, alen));
	free(a);
	free(b);
	profile_release(&p);
}

/* The wire bytes of a tiny profile, worked out by hand from the protobuf encoding rules. */
static const uint8_t tiny_bytes[] = {
	0x0a, 0x04, 0x08, 0x01, 0x10, 0x02,                   /* sample_type {type 1 unit 2} */
	0x12, 0x06, 0x0a, 0x01, 0x01, 0x12, 0x01, 0x03,       /* sample {location_id [1] value [3]} */
	0x1a, 0x0a, 0x08, 0x01, 0x10, 0x80, 0x20, 0x18, 0x80, 0x40, 0x28, 0x04, /* mapping */
	0x22, 0x08, 0x08, 0x01, 0x10, 0x01, 0x22, 0x02, 0x08, 0x01, /* location {id 1 mapping 1 line} */
	0x2a, 0x06, 0x08, 0x01, 0x10, 0x03, 0x18, 0x03,       /* function {id 1 name 3 sys 3} */
	0x32, 0x00,                                           /* "" */
	0x32, 0x07, 's', 'a', 'm', 'p', 'l', 'e', 's',
	0x32, 0x05, 'c', 'o', 'u', 'n', 't',
	0x32, 0x01, 'f',
	0x32, 0x03, 'b', 'i', 'n',
	0x48, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, /* time_nanos -1 */
	0x50, 0xac, 0x02,                                     /* duration_nanos 300 */
	0x60, 0xe8, 0x07,                                     /* period 1000 */
	0x6a, 0x01, 0x03,                                     /* comment [3] */
	0x70, 0x01,                                           /* default_sample_type 1 */
};

/* The profile tiny_bytes encodes. */
static void build_tiny(struct profile *p)
{
	assert_int_equal(profile_init(p), 0);
	assert_int_equal(profile_add_sample_type(p, "samples", "count"), 0);
	int64_t f = profile_function(p, "f", NULL, "", 0);
	int64_t m = profile_add_mapping(p, 0x1000, 0x2000, 0, "bin", "");
	int64_t l = profile_simple_location(p, m, f, FRAME_USER);
	uint64_t locs[] = { (uint64_t)l };
	int64_t v = 3;
	struct profile_label none = { 0 };
	assert_int_equal(profile_add_sample(p, locs, 1, &v, &none, 0), 0);
	p->time_nanos = -1;
	p->duration_nanos = 300;
	p->period = 1000;
	assert_int_equal(profile_add_comment(p, "f"), 0);
	p->default_sample_type = 1;
}

/* The encoder writes tiny_bytes exactly, and the decoder reads them back. */
static void test_exact_bytes(void **state)
{
	struct profile p, q;
	void *buf;
	size_t len;

	build_tiny(&p);
	assert_int_equal(pprof_encode(&p, false, &buf, &len), 0);
	assert_int_equal(len, sizeof(tiny_bytes));
	assert_memory_equal(buf, tiny_bytes, len);
	assert_int_equal(profile_init(&q), 0);
	assert_int_equal(pprof_decode(&q, tiny_bytes, sizeof(tiny_bytes)), 0);
	assert_same_profile(&p, &q);
	free(buf);
	profile_release(&p);
	profile_release(&q);
}

/* Go writes gzip'd profiles; ours must inflate to the raw bytes. */
static void test_gzip_bytes(void **state)
{
	struct profile p;
	void *buf;
	size_t len;
	uint8_t raw[256];
	uLongf rawlen = sizeof(raw);

	build_tiny(&p);
	assert_int_equal(pprof_encode(&p, true, &buf, &len), 0);
	z_stream z = { .next_in = buf, .avail_in = len, .next_out = raw, .avail_out = rawlen };
	assert_int_equal(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	assert_int_equal(z.total_out, sizeof(tiny_bytes));
	assert_memory_equal(raw, tiny_bytes, sizeof(tiny_bytes));
	inflateEnd(&z);
	free(buf);
	profile_release(&p);
}

/* Decodes bytes into a fresh profile and returns the result code; the profile is released. */
static int decode_rc(const void *data, size_t len)
{
	struct profile p;

	assert_int_equal(profile_init(&p), 0);
	int rc = pprof_decode(&p, data, len);
	profile_release(&p);
	return rc;
}

/* Arbitrary file ids (location 1000 and 5, mapping 9, function 77), unpacked and packed
 * repeated fields, tables after the samples that use them, strings interleaved, a location
 * without mapping, a Line without function, an unknown field, and two samples that merge. */
static void test_decode_unusual(void **state)
{
	static const uint8_t in[] = {
		/* sample {location_id 1000, location_id 5 (unpacked), value 2, label {comm: x}} */
		0x12, 0x0d, 0x08, 0xe8, 0x07, 0x08, 0x05, 0x10, 0x02, 0x1a, 0x04, 0x08, 0x01, 0x10, 0x03,
		/* the same stack, locations packed, value 4 */
		0x12, 0x0d, 0x0a, 0x03, 0xe8, 0x07, 0x05, 0x10, 0x04, 0x1a, 0x04, 0x08, 0x01, 0x10, 0x03,
		0x32, 0x00, 0x32, 0x04, 'c', 'o', 'm', 'm',
		0x0a, 0x04, 0x08, 0x02, 0x10, 0x02, /* sample_type {samples, samples} */
		/* location {id 1000, mapping_id 9, line {function_id 77, line 12}} */
		0x22, 0x0b, 0x08, 0xe8, 0x07, 0x10, 0x09, 0x22, 0x04, 0x08, 0x4d, 0x10, 0x0c,
		0x1a, 0x04, 0x08, 0x09, 0x28, 0x04, /* mapping {id 9, filename "[kernel.kal"} */
		0x2a, 0x04, 0x08, 0x4d, 0x10, 0x03, /* function {id 77, name "x"} */
		0x32, 0x07, 's', 'a', 'm', 'p', 'l', 'e', 's',
		0x22, 0x06, 0x08, 0x05, 0x22, 0x02, 0x10, 0x09, /* location {id 5, line {line 9}} */
		0x32, 0x01, 'x',
		0x32, 0x0b, '[', 'k', 'e', 'r', 'n', 'e', 'l', '.', 'k', 'a', 'l',
		0xf8, 0x07, 0x01, /* field 127 */
	};
	struct profile p;

	assert_int_equal(profile_init(&p), 0);
	assert_int_equal(pprof_decode(&p, in, sizeof(in)), 0);
	assert_int_equal(p.nsample_types, 1);
	assert_string_equal(profile_str(&p, p.sample_types[0].type), "samples");
	assert_int_equal(p.nmappings, 1);
	assert_string_equal(profile_str(&p, p.mappings[0].filename), "[kernel.kal");
	assert_int_equal(p.nfunctions, 1);
	assert_string_equal(profile_str(&p, p.functions[0].name), "x");
	assert_int_equal(p.nlocations, 2);
	assert_int_equal(p.locations[0].mapping_id, 1);
	assert_int_equal(p.locations[0].kind, FRAME_KERNEL);
	assert_int_equal(p.locations[1].kind, FRAME_USER);
	assert_int_equal(p.locations[0].lines[0].function_id, 1);
	assert_int_equal(p.locations[0].lines[0].line, 12);
	assert_int_equal(p.locations[1].mapping_id, 0);
	assert_int_equal(p.locations[1].nlines, 1);
	assert_int_equal(p.locations[1].lines[0].function_id, 0);
	assert_int_equal(p.locations[1].lines[0].line, 9);
	assert_int_equal(p.nsamples, 1); /* the two samples merged */
	assert_int_equal(p.samples[0].nlocs, 2);
	assert_int_equal(p.samples[0].location_ids[0], 1);
	assert_int_equal(p.samples[0].location_ids[1], 2);
	assert_int_equal(p.samples[0].values[0], 6);
	assert_string_equal(profile_label_str(&p, &p.samples[0], "comm"), "x");
	profile_release(&p);
}

/* Every proper prefix of a valid encoding either decodes or fails cleanly; gzip prefixes fail. */
static void test_truncated_prefixes(void **state)
{
	struct profile p;
	void *raw, *gz;
	size_t rawlen, gzlen, ok = 0;

	build_profile(&p);
	assert_int_equal(pprof_encode(&p, false, &raw, &rawlen), 0);
	assert_int_equal(pprof_encode(&p, true, &gz, &gzlen), 0);
	for (size_t n = 0; n < rawlen; n++) {
		uint8_t *copy = malloc(n ? n : 1); /* exact size, so ASan sees overreads */
		memcpy(copy, raw, n);
		int rc = decode_rc(copy, n);
		assert_true(rc == 0 || rc == -EINVAL || rc == -EBADMSG || rc == -ENODATA ||
			    rc == -EPROTO || rc == -ERANGE || rc == -EOVERFLOW);
		ok += rc == 0;
		free(copy);
	}
	assert_true(ok < rawlen / 4); /* most prefixes are inconsistent */
	assert_int_equal(decode_rc(raw, rawlen), 0);
	for (size_t n = 1; n < gzlen; n++) {
		uint8_t *copy = malloc(n);
		memcpy(copy, gz, n);
		assert_true(decode_rc(copy, n) < 0);
		free(copy);
	}
	free(raw);
	free(gz);
	profile_release(&p);
}

/* Flipping each byte of a valid encoding never crashes the decoder. */
static void test_corrupted_bytes(void **state)
{
	struct profile p;
	void *raw;
	size_t len;

	build_profile(&p);
	assert_int_equal(pprof_encode(&p, false, &raw, &len), 0);
	uint8_t *copy = malloc(len);
	for (size_t i = 0; i < len; i++) {
		static const uint8_t flips[] = { 0xff, 0x80, 0x01, 0x7f };
		for (size_t k = 0; k < sizeof(flips); k++) {
			memcpy(copy, raw, len);
			copy[i] ^= flips[k];
			int rc = decode_rc(copy, len);
			assert_true(rc == 0 || rc == -EINVAL || rc == -EBADMSG || rc == -ERANGE ||
				    rc == -EOVERFLOW || rc == -EPROTO);
		}
	}
	free(copy);
	free(raw);
	profile_release(&p);
}

#define REJECT_AS(err, ...)                                          \
	do {                                                         \
		static const uint8_t in_[] = { __VA_ARGS__ };        \
		assert_int_equal(decode_rc(in_, sizeof(in_)), err);  \
	} while (0)
#define REJECT(...) REJECT_AS(-EINVAL, __VA_ARGS__)
#define REJECT_REF(...) REJECT_AS(-EBADMSG, __VA_ARGS__)

/* Malformed or inconsistent input is -EINVAL, a reference to nothing -EBADMSG, never a crash. */
static void test_rejects(void **state)
{
	/* a sample type naming string 5 of 2 */
	REJECT_REF(0x0a, 0x04, 0x08, 0x05, 0x10, 0x01, 0x32, 0x00, 0x32, 0x01, 'a');
	/* a sample referencing location 9, which does not exist */
	REJECT_REF(0x0a, 0x02, 0x08, 0x01, 0x12, 0x04, 0x08, 0x09, 0x10, 0x01, 0x32, 0x00, 0x32, 0x01, 'a');
	/* a value count that differs from the sample type count: -EPROTO, naming the sample */
	REJECT_AS(-EPROTO, 0x0a, 0x02, 0x08, 0x01, 0x12, 0x04, 0x12, 0x02, 0x01, 0x02, 0x32, 0x00, 0x32, 0x01, 'a');
	/* a location whose mapping does not exist */
	REJECT_REF(0x22, 0x04, 0x08, 0x01, 0x10, 0x02, 0x32, 0x00);
	/* a line whose function does not exist */
	REJECT_REF(0x22, 0x06, 0x08, 0x01, 0x22, 0x02, 0x08, 0x03, 0x32, 0x00);
	/* two locations with id 1; a location with id 0 */
	REJECT(0x22, 0x02, 0x08, 0x01, 0x22, 0x02, 0x08, 0x01, 0x32, 0x00);
	REJECT(0x22, 0x02, 0x10, 0x00, 0x32, 0x00);
	/* a label key out of range */
	REJECT_REF(0x12, 0x04, 0x1a, 0x02, 0x08, 0x07, 0x32, 0x00);
	/* string_table[0] is not "" */
	REJECT(0x32, 0x01, 'a');
	/* a truncated varint, an 11-byte varint, a length past the end */
	REJECT(0x48, 0xff);
	REJECT(0x48, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01);
	REJECT(0x32, 0x00, 0x32, 0x7f, 'a');
	REJECT(0x32, 0x00, 0x32, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01);
	/* field number 0, a group, a known field with the wrong wire type */
	REJECT(0x02, 0x00);
	REJECT(0x0b, 0x0c);
	REJECT(0x08, 0x01, 0x32, 0x00);
	REJECT(0x32, 0x00, 0x4a, 0x00);
	REJECT(0x32, 0x00, 0x49, 0, 0, 0, 0, 0, 0, 0, 0);
	/* a comment out of range */
	REJECT_REF(0x32, 0x00, 0x68, 0x01);
	/* garbage after the gzip magic; a gzip stream followed by junk */
	REJECT(0x1f, 0x8b, 0x08, 0x00, 0xde, 0xad, 0xbe, 0xef, 0x00, 0x03, 0x01, 0x02, 0x03);
	REJECT(0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x33, 0x62, 0x00, 0x00,
	       0x8e, 0x46, 0xa9, 0xac, 0x02, 0x00, 0x00, 0x00, 0x42);
	assert_int_equal(decode_rc("", 0), -ENODATA);
}

/* A valid one-member gzip of the two bytes 32 00 (string table [""]) decodes; so do two
 * members back to back, as gzip(1) concatenations are. */
static void test_gzip_members(void **state)
{
	static const uint8_t one[] = { 0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03,
				       0x33, 0x62, 0x00, 0x00, 0x8e, 0x46, 0xa9, 0xac, 0x02, 0x00,
				       0x00, 0x00 };
	uint8_t two[2 * sizeof(one)];

	memcpy(two, one, sizeof(one));
	memcpy(two + sizeof(one), one, sizeof(one));
	assert_int_equal(decode_rc(one, sizeof(one)), 0);
	assert_int_equal(decode_rc(two, sizeof(two)), 0);
}

/* The decompression limit: 256x the input, at least 64 MiB, at most 1 GiB. */
static void test_gunzip_limit(void **state)
{
	assert_int_equal(pprof_gunzip_limit(1), 64ULL << 20);
	assert_int_equal(pprof_gunzip_limit(1000000), 256000000ULL);
	assert_int_equal(pprof_gunzip_limit(100000000), 1ULL << 30);
	assert_int_equal(pprof_gunzip_limit(SIZE_MAX), 1ULL << 30);
}

/* Gzips len bytes into a malloc'd buffer (level 9); *zlen its size. */
static uint8_t *gzip_level9(const uint8_t *in, size_t len, size_t *zlen)
{
	z_stream z = { 0 };
	size_t cap = len / 100 + 4096;
	uint8_t *out = malloc(cap);

	assert_int_equal(deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = (Bytef *)in;
	z.avail_in = len;
	z.next_out = out;
	z.avail_out = cap;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	*zlen = z.total_out;
	deflateEnd(&z);
	return out;
}

/* 65 gzip members of 4 MiB of zeros each (260 MiB from about 265 KiB): not a Profile from its
 * first byte, refused as soon as the first bytes come out, whatever the limit. */
static void test_gzip_bomb(void **state)
{
	size_t chunk = 4 << 20, members = 65, len;
	uint8_t *zeros = calloc(1, chunk), *member = gzip_level9(zeros, chunk, &len);
	uint8_t *bomb = malloc(members * len);

	for (size_t i = 0; i < members; i++)
		memcpy(bomb + i * len, member, len);
	assert_true(members * chunk > pprof_gunzip_limit(members * len));
	assert_int_equal(decode_rc(bomb, members * len), -EINVAL);
	free(bomb);
	free(zeros);
	free(member);
}

/* A valid Profile prefix, then 80 strings of 1 MiB of zeros: 80 MiB from about 80 KiB, over
 * 256x and the 64 MiB floor: -EFBIG. Half of it inflates and decodes. A string whose length
 * is over the limit is refused before its bytes inflate. */
static void test_gzip_bomb_fields(void **state)
{
	size_t n = 80, field = 4 + (1 << 20), len;
	uint8_t *raw = calloc(1, 2 + n * field);

	raw[0] = 0x32; /* "" */
	for (size_t i = 0; i < n; i++)
		memcpy(raw + 2 + i * field, "\x32\x80\x80\x40", 4); /* a string of 1 MiB */
	uint8_t *gz = gzip_level9(raw, 2 + n * field, &len);
	assert_true(n * field > pprof_gunzip_limit(len));
	assert_int_equal(decode_rc(gz, len), -EFBIG);
	free(gz);
	gz = gzip_level9(raw, 2 + n / 2 * field, &len);
	assert_int_equal(decode_rc(gz, len), 0);
	free(gz);
	/* "" then a string that says 128 MiB, 16 bytes of it: refused without inflating them */
	memcpy(raw + 2, "\x32\x80\x80\x80\x40", 5);
	gz = gzip_level9(raw, 2 + 5 + 16, &len);
	assert_int_equal(decode_rc(gz, len), -EFBIG);
	free(gz);
	free(raw);
}

/* Every prefix of a valid encoding may start a Profile (a field cut anywhere); zeros, a group,
 * an 11-byte varint and a field longer than PPROF_MAX_SIZE may not. */
static void test_plausible(void **state)
{
	struct profile p;
	void *raw;
	size_t len;

	build_profile(&p);
	assert_int_equal(pprof_encode(&p, false, &raw, &len), 0);
	for (size_t n = 0; n <= len; n++)
		assert_true(pprof_plausible(raw, n));
	free(raw);
	profile_release(&p);
	assert_false(pprof_plausible("\0\0\0\0", 4));
	assert_false(pprof_plausible("\x32\x00\x0b", 3));
	assert_false(pprof_plausible("\x48\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12));
	assert_false(pprof_plausible("\x32\x81\x80\x80\x80\x04", 6)); /* 1 GiB + 1 */
	assert_true(pprof_plausible("\x32\x80\x80\x80\x80\x02", 6));  /* 512 MiB, cut off */
	assert_true(pprof_plausible("\x48\xff\xff", 3));
}

/* Sample values: negative ones (pprof -diff_base) are -ERANGE; values of one type summing past
 * INT64_MAX are -EOVERFLOW, even on one stack (where merging would saturate); exactly INT64_MAX
 * is fine, and each type has its own total. */
static void test_sample_values(void **state)
{
#define ONE_TYPE 0x0a, 0x04, 0x08, 0x01, 0x10, 0x01
#define STRINGS 0x32, 0x00, 0x32, 0x01, 'a'
#define MAX_VALUE 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f
	REJECT_AS(-ERANGE, ONE_TYPE, 0x12, 0x0b, 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		  0xff, 0x01, STRINGS);
	REJECT_AS(-EOVERFLOW, ONE_TYPE, 0x12, 0x0a, 0x10, MAX_VALUE, 0x12, 0x0a, 0x10, MAX_VALUE,
		  STRINGS);
	REJECT_AS(-EOVERFLOW, ONE_TYPE, 0x12, 0x0a, 0x10, MAX_VALUE, 0x12, 0x02, 0x10, 0x01, STRINGS);
	static const uint8_t max[] = { ONE_TYPE, 0x12, 0x0a, 0x10, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff,
				       0xff, 0xff, 0x7f, 0x12, 0x02, 0x10, 0x01, STRINGS };
	struct profile p;
	assert_int_equal(profile_init(&p), 0);
	assert_int_equal(pprof_decode(&p, max, sizeof(max)), 0);
	assert_int_equal(p.nsamples, 1);
	assert_int_equal(p.samples[0].values[0], INT64_MAX);
	profile_release(&p);
	/* two types, each at INT64_MAX on its own */
	static const uint8_t two[] = { ONE_TYPE, ONE_TYPE, 0x12, 0x0c, 0x12, 0x0a, MAX_VALUE, 0x00,
				       0x12, 0x0c, 0x12, 0x0a, 0x00, MAX_VALUE, STRINGS };
	assert_int_equal(decode_rc(two, sizeof(two)), 0);
#undef ONE_TYPE
#undef STRINGS
#undef MAX_VALUE
}

/* Encoding refuses ids that do not exist rather than writing a file nobody can read. */
static void test_encode_rejects_bad_ids(void **state)
{
	struct profile p;
	void *buf = (void *)1;
	size_t len = 1;

	build_profile(&p);
	p.samples[0].location_ids[0] = 0;
	assert_int_equal(pprof_encode(&p, false, &buf, &len), -EINVAL);
	assert_null(buf);
	p.samples[0].location_ids[0] = p.nlocations + 1;
	assert_int_equal(pprof_encode(&p, false, &buf, &len), -EINVAL);
	p.samples[0].location_ids[0] = 1;
	p.locations[1].lines[0].function_id = 99;
	assert_int_equal(pprof_encode(&p, false, &buf, &len), -EINVAL);
	p.locations[1].lines[0].function_id = 1;
	p.mappings[0].filename = p.strings.n;
	assert_int_equal(pprof_encode(&p, false, &buf, &len), -EINVAL);
	p.mappings[0].filename = 0;
	assert_int_equal(pprof_encode(&p, false, &buf, &len), 0);
	free(buf);
	profile_release(&p);
}

/* Reads a whole file into a malloc'd buffer. */
static void *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	void *buf = malloc(n + 1);
	assert_int_equal(fread(buf, 1, n, f), n);
	fclose(f);
	*len = n;
	return buf;
}

/* A CPU profile written by Go 1.19's runtime/pprof (1 s busy loop with an inlined callee). */
static void test_go_profile(void **state)
{
	const char *root = getenv("ROOT");
	char path[4096];
	struct profile p, q;
	size_t len;

	snprintf(path, sizeof(path), "%s/tests/fixtures/go-cpu.pb.gz", root && *root ? root : ".");
	void *data = read_file(path, &len);
	assert_int_equal(profile_init(&p), 0);
	assert_int_equal(pprof_decode(&p, data, len), 0);
	assert_int_equal(p.nsample_types, 2);
	assert_string_equal(profile_str(&p, p.sample_types[0].type), "samples");
	assert_string_equal(profile_str(&p, p.sample_types[0].unit), "count");
	assert_string_equal(profile_str(&p, p.sample_types[1].type), "cpu");
	assert_string_equal(profile_str(&p, p.sample_types[1].unit), "nanoseconds");
	assert_string_equal(profile_str(&p, p.period_type.type), "cpu");
	assert_int_equal(p.period, 10000000);
	assert_true(p.nsamples > 0 && p.time_nanos > 0 && p.duration_nanos > 900000000);
	int64_t total = 0;
	for (uint64_t i = 0; i < p.nsamples; i++) {
		total += p.samples[i].values[0];
		assert_int_equal(p.samples[i].values[1], p.samples[i].values[0] * p.period);
	}
	assert_true(total > 50);
	bool inlined = false;
	for (uint64_t i = 0; i < p.nlocations; i++) {
		const struct profile_location *l = &p.locations[i];
		if (l->nlines == 2 &&
		    !strcmp(profile_str(&p, p.functions[l->lines[0].function_id - 1].name), "main.mix") &&
		    !strcmp(profile_str(&p, p.functions[l->lines[1].function_id - 1].name), "main.busy"))
			inlined = true;
		assert_int_equal(l->kind, FRAME_USER);
	}
	assert_true(inlined);
	/* and it survives our own round trip */
	void *buf;
	assert_int_equal(pprof_encode(&p, true, &buf, &len), 0);
	assert_int_equal(profile_init(&q), 0);
	assert_int_equal(pprof_decode(&q, buf, len), 0);
	assert_same_profile(&p, &q);
	free(buf);
	free(data);
	profile_release(&p);
	profile_release(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_raw),
		cmocka_unit_test(test_round_trip_gzip),
		cmocka_unit_test(test_encode_deterministic),
		cmocka_unit_test(test_encode_compact),
		cmocka_unit_test(test_encode_compact_flags),
		cmocka_unit_test(test_encode_compact_used_only),
		cmocka_unit_test(test_exact_bytes),
		cmocka_unit_test(test_gzip_bytes),
		cmocka_unit_test(test_decode_unusual),
		cmocka_unit_test(test_truncated_prefixes),
		cmocka_unit_test(test_corrupted_bytes),
		cmocka_unit_test(test_rejects),
		cmocka_unit_test(test_gzip_members),
		cmocka_unit_test(test_gunzip_limit),
		cmocka_unit_test(test_gzip_bomb),
		cmocka_unit_test(test_gzip_bomb_fields),
		cmocka_unit_test(test_sample_values),
		cmocka_unit_test(test_plausible),
		cmocka_unit_test(test_encode_rejects_bad_ids),
		cmocka_unit_test(test_go_profile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
