/* Unit tests for the in-memory profile model: interning, dedupe, sample merging, frames, merge. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>

#include "model/profile.h"

static void test_intern(void **state)
{
	struct strtab t;

	assert_int_equal(strtab_init(&t), 0);
	assert_int_equal(strtab_intern(&t, "", 0), 0);
	int64_t a = strtab_intern(&t, "alpha", 5), b = strtab_intern(&t, "beta", 4);
	assert_true(a > 0 && b > 0 && a != b);
	assert_int_equal(strtab_intern(&t, "alpha", 5), a);
	assert_int_equal(strtab_find(&t, "beta", 4), b);
	assert_int_equal(strtab_find(&t, "gamma", 5), -1);
	for (int i = 0; i < 5000; i++) { /* through several rehashes */
		char buf[32];
		int n = snprintf(buf, sizeof(buf), "s%d", i);
		assert_true(strtab_intern(&t, buf, n) > 0);
	}
	assert_string_equal(strtab_get(&t, a), "alpha");
	assert_int_equal(strtab_intern(&t, "s4999", 5), strtab_find(&t, "s4999", 5));
	strtab_release(&t);
}

static void test_functions_and_locations_dedupe(void **state)
{
	struct profile p;

	profile_init(&p);
	int64_t f1 = profile_function(&p, "main", NULL, "a.c", 3);
	int64_t f2 = profile_function(&p, "main", NULL, "a.c", 3);
	int64_t f3 = profile_function(&p, "main", NULL, "b.c", 3);
	assert_int_equal(f1, f2);
	assert_int_not_equal(f1, f3);
	int64_t m = profile_add_mapping(&p, 0, 0, 0, "[kernel.kallsyms]", "");
	assert_int_equal(p.mappings[m - 1].kind, FRAME_KERNEL);
	int64_t l1 = profile_simple_location(&p, m, f1, FRAME_KERNEL);
	assert_int_equal(profile_simple_location(&p, m, f1, FRAME_KERNEL), l1);
	assert_int_not_equal(profile_simple_location(&p, 0, f1, FRAME_USER), l1);
	assert_int_equal(profile_kind_of_mapping("[vdso]"), FRAME_USER);
	assert_int_equal(profile_kind_of_mapping("/tmp/perf-12.map"), FRAME_JIT);
	assert_int_equal(profile_kind_of_mapping("/usr/lib/libc.so.6"), FRAME_USER);
	profile_release(&p);
}

/* Builds a two-frame sample main→leaf with a pid label. */
static int add(struct profile *p, const char *leaf, int64_t pid, int64_t n)
{
	uint64_t locs[2] = {
		profile_simple_location(p, 0, profile_function(p, leaf, NULL, "", 0), FRAME_USER),
		profile_simple_location(p, 0, profile_function(p, "main", NULL, "", 0), FRAME_USER),
	};
	struct profile_label l = { .key = profile_intern(p, "pid"), .num = pid };
	int64_t v[1] = { n };
	return profile_add_sample(p, locs, 2, v, &l, 1);
}

static void test_samples_merge(void **state)
{
	struct profile p;

	profile_init(&p);
	profile_add_sample_type(&p, "samples", "count");
	assert_int_equal(add(&p, "a", 1, 5), 0);
	assert_int_equal(add(&p, "a", 1, 7), 0);
	assert_int_equal(add(&p, "a", 2, 1), 0); /* other label: another sample */
	assert_int_equal(add(&p, "b", 1, 3), 0);
	assert_int_equal(p.nsamples, 3);
	assert_int_equal(p.samples[0].values[0], 12);
	assert_int_equal(profile_label_num(&p, &p.samples[1], "pid", -1), 2);
	assert_null(profile_label_str(&p, &p.samples[1], "comm"));
	for (int i = 0; i < 3000; i++) { /* the index grows; merges still find their sample */
		char leaf[16];
		snprintf(leaf, sizeof(leaf), "f%d", i);
		assert_int_equal(add(&p, leaf, 1, 1), 0);
	}
	assert_int_equal(add(&p, "a", 1, INT64_MAX), 0); /* saturates instead of overflowing */
	assert_int_equal(p.samples[0].values[0], INT64_MAX);
	assert_int_equal(p.nsamples, 3003);
	profile_release(&p);
}

/* Locations, values and labels of samples of every shape (none of some) come back intact
 * after the sample array and index grow, merged values too. */
static void test_samples_keep_their_data(void **state)
{
	struct profile p;
	uint64_t locs[4];
	struct profile_label l[2];

	profile_init(&p);
	profile_add_sample_type(&p, "samples", "count");
	profile_add_sample_type(&p, "cpu", "nanoseconds");
	profile_add_sample_type(&p, "alloc", "bytes");
	uint32_t key = profile_intern(&p, "k"), str = profile_intern(&p, "v");
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 2000; i++) {
			int64_t v[3] = { i, -i, 2 * i + round };
			for (int k = 0; k < i % 5; k++)
				locs[k] = 1000 * i + k + 1;
			for (int k = 0; k < i % 3; k++)
				l[k] = (struct profile_label){ key, k ? str : 0, i + k, k };
			assert_int_equal(profile_add_sample(&p, locs, i % 5, v, l, i % 3), 0);
		}
	}
	/* i = 0, 15, 30 ... have neither locations nor labels: one sample */
	assert_int_equal(p.nsamples, 2000 - 2000 / 15);
	uint64_t next = 1;
	int64_t empty[3] = { 0 };
	for (int i = 0; i < 2000; i++) {
		const struct profile_sample *s = &p.samples[i % 15 ? next++ : 0];
		if (!(i % 15)) {
			empty[0] += 2 * i, empty[1] -= 2 * i, empty[2] += 4 * i + 1;
			continue;
		}
		assert_int_equal(s->nlocs, i % 5);
		for (int k = 0; k < i % 5; k++)
			assert_int_equal(s->location_ids[k], 1000 * i + k + 1);
		assert_int_equal(s->values[0], 2 * i);
		assert_int_equal(s->values[1], -2 * i);
		assert_int_equal(s->values[2], 4 * i + 1);
		assert_int_equal(s->nlabels, i % 3);
		for (int k = 0; k < i % 3; k++) {
			assert_int_equal(s->labels[k].key, key);
			assert_int_equal(s->labels[k].str, k ? str : 0);
			assert_int_equal(s->labels[k].num, i + k);
			assert_int_equal(s->labels[k].num_unit, k);
		}
	}
	assert_memory_equal(p.samples[0].values, empty, sizeof(empty));
	profile_release(&p);
}

static void test_frames_root_first_with_inline(void **state)
{
	struct profile p;
	struct profile_frame *fr = NULL;
	size_t cap = 0;

	profile_init(&p);
	profile_add_sample_type(&p, "samples", "count");
	int64_t m = profile_add_mapping(&p, 0x1000, 0x2000, 0, "/bin/app", "ab");
	struct profile_line lines[2] = {
		{ profile_function(&p, "inlined", NULL, "x.c", 0), 10 },
		{ profile_function(&p, "outer", NULL, "x.c", 0), 20 },
	};
	uint64_t locs[3] = {
		profile_add_location(&p, m, 0x1010, lines, 2),
		profile_add_location(&p, m, 0x1020, NULL, 0),
		profile_simple_location(&p, 0, profile_function(&p, "main", NULL, "", 0), FRAME_USER),
	};
	int64_t one = 1;
	assert_int_equal(profile_add_sample(&p, locs, 3, &one, NULL, 0), 0);
	int64_t n = profile_frames(&p, &p.samples[0], &fr, &cap);
	assert_int_equal(n, 4);
	assert_string_equal(profile_str(&p, fr[0].name), "main");
	assert_string_equal(profile_str(&p, fr[1].name), "[app]");
	assert_string_equal(profile_str(&p, fr[2].name), "outer");
	assert_int_equal(fr[2].kind, FRAME_USER);
	assert_string_equal(profile_str(&p, fr[3].name), "inlined");
	assert_int_equal(fr[3].kind, FRAME_INLINE);
	assert_int_equal(fr[3].line, 10);
	free(fr);
	profile_release(&p);
}

static void test_merge_profiles(void **state)
{
	struct profile a, b, other;

	profile_init(&a);
	profile_init(&b);
	profile_init(&other);
	profile_add_sample_type(&a, "samples", "count");
	profile_add_sample_type(&b, "samples", "count");
	profile_add_sample_type(&other, "cpu", "nanoseconds");
	add(&a, "x", 1, 2);
	add(&b, "x", 1, 3);
	add(&b, "y", 1, 4);
	/* a line number on an address-less location survives the merge */
	struct profile_line ln = { profile_function(&b, "z", NULL, "z.c", 0), 42 };
	uint64_t loc = profile_add_location(&b, 0, 0, &ln, 1);
	int64_t one = 1;
	profile_add_sample(&b, &loc, 1, &one, NULL, 0);
	assert_int_equal(profile_merge(&a, &b), 0);
	assert_int_equal(a.nsamples, 3);
	assert_int_equal(a.samples[0].values[0], 5);
	const struct profile_location *l = &a.locations[a.samples[2].location_ids[0] - 1];
	assert_int_equal(l->lines[0].line, 42);
	assert_int_equal(profile_merge(&a, &other), -EINVAL);
	profile_release(&a);
	profile_release(&b);
	profile_release(&other);
}

/* A profile of one sample type with one sample per value (stacks f1, f2...). */
static void values_profile(struct profile *p, const int64_t *v, size_t n)
{
	static const struct profile_label none;

	assert_int_equal(profile_init(p), 0);
	assert_int_equal(profile_add_sample_type(p, "samples", "count"), 0);
	for (size_t i = 0; i < n; i++) {
		char name[16];
		snprintf(name, sizeof(name), "f%zu", i + 1);
		uint64_t loc = profile_simple_location(p, 0, profile_function(p, name, NULL, "", 0), 0);
		assert_int_equal(profile_add_sample(p, &loc, 1, &v[i], &none, 0), 0);
	}
}

/* Values summing to INT64_MAX pass, past it (alone or with a profile to merge) -EOVERFLOW, a
 * negative value -ERANGE. */
static void test_values_check(void **state)
{
	struct profile a, b, neg;
	const int64_t va[] = { INT64_MAX - 10, 5 }, vb[] = { 5 }, vb2[] = { 6 }, vn[] = { 1, -1 };

	values_profile(&a, va, 2);
	values_profile(&b, vb, 1);
	assert_int_equal(profile_values_check(&a, NULL), 0);
	assert_int_equal(profile_values_check(&a, &b), 0);
	profile_release(&b);
	values_profile(&b, vb2, 1);
	assert_int_equal(profile_values_check(&a, &b), -EOVERFLOW);
	assert_int_equal(profile_values_check(&b, &a), -EOVERFLOW);
	values_profile(&neg, vn, 2);
	assert_int_equal(profile_values_check(&neg, NULL), -ERANGE);
	profile_release(&a);
	profile_release(&b);
	profile_release(&neg);
}

/* Durations from two files (any values) add up saturating instead of overflowing. */
static void test_merge_duration_saturates(void **state)
{
	struct profile a, b;
	const int64_t v[] = { 1 };

	values_profile(&a, v, 1);
	values_profile(&b, v, 1);
	a.duration_nanos = b.duration_nanos = INT64_MAX - 1;
	assert_int_equal(profile_merge(&a, &b), 0);
	assert_int_equal(a.duration_nanos, INT64_MAX);
	profile_release(&a);
	profile_release(&b);
}

/* The pids of the samples, each once; pid 0 (idle) and samples without a pid are not processes. */
static void test_distinct_pids(void **state)
{
	struct profile p;
	const int64_t pids[] = { 7, 3, 7, 0, 12, 3 };
	int64_t one = 1;

	assert_int_equal(profile_init(&p), 0);
	assert_true(profile_add_sample_type(&p, "samples", "count") >= 0);
	int64_t key = profile_intern(&p, "pid"), fn = profile_function(&p, "f", NULL, "", 0);
	assert_true(key > 0 && fn > 0);
	uint64_t loc = profile_simple_location(&p, 0, fn, FRAME_USER);
	assert_int_equal(profile_distinct_pids(&p), 0);
	assert_int_equal(profile_add_sample(&p, &loc, 1, &one, NULL, 0), 0); /* no pid label */
	for (size_t i = 0; i < sizeof(pids) / sizeof(pids[0]); i++) {
		struct profile_label l = { .key = key, .num = pids[i] };
		uint64_t locs[2] = { loc, loc };
		/* a different stack each time, so the samples do not merge */
		assert_int_equal(profile_add_sample(&p, locs, 1 + i % 2, &one, &l, 1), 0);
	}
	assert_int_equal(profile_distinct_pids(&p), 3); /* 3, 7, 12 */
	profile_release(&p);
}

/* The locations the samples use, each once (a location in two samples, twice in one, and one in
 * none); renewing keeps the sample types, period, default type, comments and time, nothing else. */
static void test_locations_used_and_renew(void **state)
{
	struct profile p;
	int64_t one[] = { 1, 10 };

	assert_int_equal(profile_init(&p), 0);
	assert_true(profile_add_sample_type(&p, "samples", "count") >= 0);
	assert_true(profile_add_sample_type(&p, "cpu", "nanoseconds") >= 0);
	p.period_type = (struct profile_value_type){ profile_intern(&p, "cpu"),
						     profile_intern(&p, "nanoseconds") };
	p.period = 10;
	p.default_sample_type = profile_intern(&p, "cpu");
	p.time_nanos = 5;
	assert_int_equal(profile_add_comment(&p, "a note"), 0);
	uint64_t l[4];
	for (int i = 0; i < 4; i++) {
		char name[8];
		snprintf(name, sizeof(name), "f%d", i);
		l[i] = profile_simple_location(&p, 0, profile_function(&p, name, NULL, "", 0), FRAME_USER);
	}
	assert_int_equal(profile_locations_used(&p), 0);
	uint64_t s1[] = { l[0], l[1], l[0] }, s2[] = { l[1], l[2] };
	assert_int_equal(profile_add_sample(&p, s1, 3, one, NULL, 0), 0);
	assert_int_equal(profile_add_sample(&p, s2, 2, one, NULL, 0), 0);
	assert_int_equal(profile_locations_used(&p), 3); /* l[3] is in no sample */
	assert_int_equal(profile_renew(&p), 0);
	assert_int_equal(p.nlocations + p.nfunctions + p.nmappings + p.nsamples, 0);
	assert_int_equal(p.nsample_types, 2);
	assert_string_equal(profile_str(&p, p.sample_types[1].type), "cpu");
	assert_string_equal(profile_str(&p, p.sample_types[1].unit), "nanoseconds");
	assert_string_equal(profile_str(&p, p.period_type.unit), "nanoseconds");
	assert_string_equal(profile_str(&p, p.default_sample_type), "cpu");
	assert_int_equal(p.period, 10);
	assert_int_equal(p.time_nanos, 5);
	assert_int_equal(p.ncomments, 1);
	assert_string_equal(profile_str(&p, p.comments[0]), "a note");
	uint32_t nstrings = p.strings.n;
	assert_int_equal(profile_intern(&p, "f0"), nstrings); /* its strings went too: a new id */
	profile_release(&p);
}

/* The total of a sample type by name: every sample's value of that type, 0 for an unknown name. */
static void test_type_total(void **state)
{
	struct profile p;
	int64_t v1[] = { 3, 300 }, v2[] = { 4, 400 };

	assert_int_equal(profile_init(&p), 0);
	assert_true(profile_add_sample_type(&p, "samples", "count") >= 0);
	assert_true(profile_add_sample_type(&p, "cpu", "nanoseconds") >= 0);
	int64_t fn = profile_function(&p, "f", NULL, "", 0), fn2 = profile_function(&p, "g", NULL, "", 0);
	uint64_t a = profile_simple_location(&p, 0, fn, FRAME_USER);
	uint64_t b = profile_simple_location(&p, 0, fn2, FRAME_USER);
	assert_int_equal(profile_add_sample(&p, &a, 1, v1, NULL, 0), 0);
	assert_int_equal(profile_add_sample(&p, &b, 1, v2, NULL, 0), 0);
	assert_int_equal(profile_type_total(&p, "samples"), 7);
	assert_int_equal(profile_type_total(&p, "cpu"), 700);
	assert_int_equal(profile_type_total(&p, "wall"), 0);
	profile_release(&p);
}

/* --sample-type's one choice: a name, else a 0-based index, else the default; errors for an
 * unknown name, an index out of range or a profile without types. */
static void test_sample_type_find(void **state)
{
	struct profile p;

	assert_int_equal(profile_init(&p), 0);
	assert_int_equal(profile_sample_type_find(&p, NULL), -ENOENT);
	assert_int_equal(profile_sample_type_find(&p, "samples"), -ENOENT);
	assert_true(profile_add_sample_type(&p, "samples", "count") >= 0);
	assert_true(profile_add_sample_type(&p, "cpu", "nanoseconds") >= 0);
	assert_true(profile_add_sample_type(&p, "off_cpu", "nanoseconds") >= 0);
	assert_true(profile_add_sample_type(&p, "7", "count") >= 0); /* a name that looks like an index */
	assert_int_equal(profile_sample_type_find(&p, NULL), 0); /* no default: "samples" */
	p.default_sample_type = profile_intern(&p, "off_cpu");
	assert_int_equal(profile_sample_type_find(&p, NULL), 2);
	assert_int_equal(profile_sample_type_find(&p, "cpu"), 1);
	assert_int_equal(profile_sample_type_find(&p, "1"), 1);
	assert_int_equal(profile_sample_type_find(&p, "0"), 0);
	assert_int_equal(profile_sample_type_find(&p, "7"), 3); /* the name wins */
	assert_int_equal(profile_sample_type_find(&p, "4"), -EINVAL);
	assert_int_equal(profile_sample_type_find(&p, "99999999999999999999"), -EINVAL);
	assert_int_equal(profile_sample_type_find(&p, "-1"), -EINVAL);
	assert_int_equal(profile_sample_type_find(&p, "1x"), -EINVAL);
	assert_int_equal(profile_sample_type_find(&p, ""), -EINVAL);
	assert_int_equal(profile_sample_type_find(&p, "cpu/nanoseconds"), -EINVAL);
	assert_int_equal(profile_sample_type_find(&p, "wall"), -EINVAL);
	profile_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intern),
		cmocka_unit_test(test_functions_and_locations_dedupe),
		cmocka_unit_test(test_samples_merge),
		cmocka_unit_test(test_samples_keep_their_data),
		cmocka_unit_test(test_frames_root_first_with_inline),
		cmocka_unit_test(test_merge_profiles),
		cmocka_unit_test(test_values_check),
		cmocka_unit_test(test_merge_duration_saturates),
		cmocka_unit_test(test_distinct_pids),
		cmocka_unit_test(test_locations_used_and_renew),
		cmocka_unit_test(test_type_total),
		cmocka_unit_test(test_sample_type_find),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
