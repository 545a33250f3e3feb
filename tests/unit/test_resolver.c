/* Unit tests for frames that are not ELF addresses: a tagged user-stack value goes to the
 * resolver of its kind, its frames are interned once per (process, value) into the resolver's
 * mapping, marked with its kind; a kind without a resolver gives a location without lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include <linux/types.h>

#include "../../bpf/firn.h"
#include "record/capture.h"
#include "model/profile.h"
#include "symbolize/symbolize.h"

/* A resolver of kind PYTHON: payload 1 = one function, 2 = an inline chain of two. */
static int calls;

static int fake_resolve(void *ctx, pid_t pid, uint64_t v, struct resolved_frame *out, int max)
{
	(void)ctx;
	calls++;
	assert_int_equal(pid, 42);
	assert_true(max >= 2);
	switch (resolver_payload(v)) {
	case 1:
		out[0] = (struct resolved_frame){ .name = "parse", .file = "app.py", .line = 7 };
		return 1;
	case 2:
		out[0] = (struct resolved_frame){ .name = "inner", .file = "app.py", .line = 20 };
		out[1] = (struct resolved_frame){ .name = "run", .system_name = "app.run",
						  .file = "app.py", .line = 30 };
		return 2;
	}
	return 0;
}

/* The name of line i of location id. */
static const char *line_name(const struct profile *p, uint64_t id, uint32_t i)
{
	const struct profile_location *l = &p->locations[id - 1];

	return profile_str(p, p->functions[l->lines[i].function_id - 1].name);
}

/* The name of location id's mapping. */
static const char *map_name(const struct profile *p, uint64_t id)
{
	return profile_str(p, p->mappings[p->locations[id - 1].mapping_id - 1].filename);
}

/* Parks entries whose user stacks are tagged values and reads the profile back. */
static void test_tagged_frames(void **state)
{
	(void)state;
	struct profile p;
	struct symbolizer *sym = symbolizer_new();
	struct sampler_stats st = { 0 };
	struct capture_meta m = { .freq = 99, .call_graph = "fp", .stats = &st };
	struct frame_resolver r = { .mapping = "[python]", .kind = FRAME_JIT,
				    .resolve = fake_resolve };
	uint64_t a[] = { FIRN_FRAME(FIRN_FRAME_KIND_PYTHON, 1), FIRN_FRAME(FIRN_FRAME_KIND_PYTHON, 2) };
	uint64_t b[] = { FIRN_FRAME(FIRN_FRAME_KIND_GPU, 5), FIRN_FRAME(FIRN_FRAME_KIND_PYTHON, 2) };
	struct sampler_entry e1 = { .pid = 42, .tid = 42, .count = 3, .ustack = a, .ulen = 2,
				    .comm = "py", .thread = "py" };
	struct sampler_entry e2 = e1;

	e2.ustack = b;
	e2.count = 1;
	assert_non_null(sym);
	assert_int_equal(profile_init(&p), 0);
	struct capture *c = capture_new(&p, sym, &m);
	assert_non_null(c);
	assert_int_equal(capture_set_resolver(c, 0, &r), -EINVAL);
	assert_int_equal(capture_set_resolver(c, FIRN_FRAME_KINDS, &r), -EINVAL);
	assert_int_equal(capture_set_resolver(c, FIRN_FRAME_KIND_PYTHON, &r), 0);
	assert_true(capture_ready(c, &e1));
	assert_int_equal(capture_park(c, &e1), 0);
	assert_int_equal(capture_park(c, &e2), 0);
	assert_int_equal(capture_park(c, &e1), 0);
	assert_int_equal(capture_finish(c, NULL, &m), 0);
	/* (42, payload 2) was resolved once although three samples carry it */
	assert_int_equal(calls, 2);
	assert_int_equal(p.nsamples, 2);
	const struct profile_sample *s1 = &p.samples[0], *s2 = &p.samples[1];
	if (s1->values[0] != 6) {
		const struct profile_sample *t = s1;
		s1 = s2;
		s2 = t;
	}
	assert_int_equal(s1->values[0], 6);
	assert_int_equal(s1->nlocs, 2);
	assert_string_equal(map_name(&p, s1->location_ids[0]), "[python]");
	assert_string_equal(line_name(&p, s1->location_ids[0], 0), "parse");
	assert_int_equal(p.locations[s1->location_ids[0] - 1].lines[0].line, 7);
	assert_int_equal(p.locations[s1->location_ids[0] - 1].kind, FRAME_JIT);
	assert_int_equal(p.locations[s1->location_ids[1] - 1].nlines, 2);
	assert_string_equal(line_name(&p, s1->location_ids[1], 0), "inner");
	assert_string_equal(line_name(&p, s1->location_ids[1], 1), "run");
	/* the GPU kind has no resolver: a location without lines in "[unknown]" */
	assert_int_equal(s2->values[0], 1);
	assert_string_equal(map_name(&p, s2->location_ids[0]), "[unknown]");
	assert_int_equal(p.locations[s2->location_ids[0] - 1].nlines, 0);
	assert_int_equal(s2->location_ids[1], s1->location_ids[1]);
	capture_free(c);
	symbolizer_free(sym);
	profile_release(&p);
}

/* Native addresses have no kind; tagged values keep their payload. */
static void test_kinds(void **state)
{
	(void)state;
	assert_int_equal(resolver_kind_of(0x7fffdeadbeefULL), 0);
	assert_int_equal(resolver_kind_of(0xffffffff81000000ULL), 0);
	assert_int_equal(resolver_kind_of(FIRN_FRAME(FIRN_FRAME_KIND_GPU, 9)), FIRN_FRAME_KIND_GPU);
	assert_int_equal(resolver_payload(FIRN_FRAME(FIRN_FRAME_KIND_PYTHON, 0x7f0012345678ULL)),
			 0x7f0012345678ULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tagged_frames),
		cmocka_unit_test(test_kinds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
