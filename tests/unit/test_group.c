/* Unit tests for lib/analyze/group (report --group-by): the rows of a string and a numeric label,
 * "(none)" for samples without it, the top function under each value, the hist filters applied
 * first, and the "KEY=value" root frames. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "analyze/group.h"
#include "model/profile.h"

/* Adds a sample of one or two frames (root first: outer;inner) with value v and, when route is
 * set, an "http_route" label; every sample gets a numeric "pid" label. */
static void add(struct profile *p, const char *outer, const char *inner, int64_t v,
		const char *route, int64_t pid)
{
	uint64_t m = 1, locs[2];
	uint32_t n = 0;
	struct profile_label l[2] = {
		{ (uint32_t)profile_intern(p, "pid"), 0, pid, 0 },
		{ (uint32_t)profile_intern(p, "http_route"),
		  route ? (uint32_t)profile_intern(p, route) : 0, 0, 0 },
	};

	if (inner)
		locs[n++] = profile_simple_location(p, m, profile_function(p, inner, NULL, "", 0), FRAME_USER);
	locs[n++] = profile_simple_location(p, m, profile_function(p, outer, NULL, "", 0), FRAME_USER);
	assert_int_equal(profile_add_sample(p, locs, n, &v, l, route ? 2 : 1), 0);
}

static void fixture(struct profile *p)
{
	assert_int_equal(profile_init(p), 0);
	assert_int_equal(profile_add_sample_type(p, "samples", "count"), 0);
	assert_true(profile_add_mapping(p, 0x1000, 0x2000, 0, "/usr/bin/app", "") == 1);
	add(p, "main", "parse", 30, "/a", 7);
	add(p, "main", "render", 10, "/a", 7);
	add(p, "main", "render", 25, "/b", 8);
	add(p, "main", NULL, 5, NULL, 0); /* no route; the idle task's pid */
}

/* Rows by total, the top function of each, "(none)" counted; a numeric label's text. */
static void test_rows(void **state)
{
	struct profile p;
	struct group g;
	struct hist_opts o = { 0 };

	(void)state;
	fixture(&p);
	assert_int_equal(group_build(&g, &p, "http_route", &o), 0);
	assert_int_equal(g.n, 3);
	assert_int_equal(g.total, 70);
	assert_int_equal(g.none, 5);
	assert_string_equal(g.rows[0].value, "/a");
	assert_int_equal(g.rows[0].total, 40);
	assert_int_equal(g.rows[0].nsamples, 2);
	assert_string_equal(g.rows[0].top_function, "parse");
	assert_int_equal(g.rows[0].top_self, 30);
	assert_string_equal(g.rows[1].value, "/b");
	assert_string_equal(g.rows[1].top_function, "render");
	assert_string_equal(g.rows[2].value, GROUP_NONE);
	assert_string_equal(g.rows[2].top_function, "main");
	group_release(&g);
	o.no_idle = true; /* the filters first: pid 0 goes, and with it the (none) row */
	assert_int_equal(group_build(&g, &p, "pid", &o), 0);
	assert_int_equal(g.n, 2);
	assert_string_equal(g.rows[0].value, "7");
	assert_int_equal(g.rows[0].total, 40);
	assert_string_equal(g.rows[1].value, "8");
	assert_int_equal(g.none, 0);
	group_release(&g);
	profile_release(&p);
}

/* group_root: each stack's outermost frame is "KEY=value", the rest as it was. */
static void test_root(void **state)
{
	struct profile p, q;
	struct profile_frame *fr = NULL;
	size_t cap = 0;
	int found = 0;

	(void)state;
	fixture(&p);
	assert_int_equal(profile_init(&q), 0);
	assert_int_equal(group_root(&q, &p, "http_route"), 0);
	assert_int_equal(q.nsamples, 4);
	for (uint64_t i = 0; i < q.nsamples; i++) {
		int64_t n = profile_frames(&q, &q.samples[i], &fr, &cap);
		assert_true(n >= 2);
		const char *root = profile_str(&q, fr[0].name), *next = profile_str(&q, fr[1].name);
		assert_string_equal(next, "main");
		if (q.samples[i].values[0] == 5)
			assert_string_equal(root, "http_route=(none)"), found++;
		if (q.samples[i].values[0] == 25)
			assert_string_equal(root, "http_route=/b"), found++;
		if (q.samples[i].values[0] == 30)
			assert_string_equal(root, "http_route=/a"), found++;
	}
	assert_int_equal(found, 3);
	free(fr);
	profile_release(&q);
	profile_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_root),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
