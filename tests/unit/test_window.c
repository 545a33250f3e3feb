/* Unit tests for lib/analyze/window (firn top's decaying window over the cuts of one profile) and
 * lib/analyze/calls (callers and callees over such samples): decay by half-life, one entry per stack and
 * labels, the column followed, the last cut alone with a half-life of 0, stacks leaving the
 * window (and being dropped when many), hist_build over the window's samples; profile_clear_samples between cuts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <string.h>

#include "analyze/calls.h"
#include "analyze/hist.h"
#include "model/profile.h"
#include "analyze/window.h"

/* One profile cut again and again: types samples and cpu, functions main, hot, cold in app. */
struct fixture {
	struct profile p;
	uint64_t main_loc, hot_loc, cold_loc;
	int64_t k_pid;
};

static uint64_t loc_of(struct profile *p, uint64_t m, const char *name, uint64_t addr)
{
	struct profile_line line = { profile_function(p, name, NULL, "app.c", 0), 1 };

	return profile_add_location(p, m, addr, &line, 1);
}

static void fixture_init(struct fixture *fx)
{
	assert_int_equal(profile_init(&fx->p), 0);
	assert_int_equal(profile_add_sample_type(&fx->p, "samples", "count"), 0);
	assert_int_equal(profile_add_sample_type(&fx->p, "cpu", "nanoseconds"), 1);
	int64_t m = profile_add_mapping(&fx->p, 0x1000, 0x2000, 0, "/usr/bin/app", "");
	fx->main_loc = loc_of(&fx->p, m, "main", 0x1010);
	fx->hot_loc = loc_of(&fx->p, m, "hot", 0x1020);
	fx->cold_loc = loc_of(&fx->p, m, "cold", 0x1030);
	fx->k_pid = profile_intern(&fx->p, "pid");
}

/* Adds n samples of leaf (called by main) in process pid to the cut, cpu = 10 x n. */
static void add(struct fixture *fx, uint64_t leaf, int64_t pid, int64_t n)
{
	uint64_t locs[2] = { leaf, fx->main_loc };
	int64_t values[2] = { n, 10 * n };
	struct profile_label l = { .key = fx->k_pid, .num = pid };

	assert_int_equal(profile_add_sample(&fx->p, locs, 2, values, &l, 1), 0);
}

/* The window value (column vi) of the stack ending in leaf of pid; -1 when not in the window. */
static int64_t value_of(const struct window *w, uint64_t leaf, int64_t pid, uint32_t vi)
{
	for (size_t i = 0; i < w->nsamples; i++)
		if (w->samples[i].location_ids[0] == leaf && w->samples[i].labels[0].num == pid)
			return w->samples[i].values[vi];
	return -1;
}

/* Weights halve every half-life; a cut's samples come in at full weight, once per stack. */
static void test_decay(void **state)
{
	struct fixture fx;
	struct window w;

	(void)state;
	fixture_init(&fx);
	window_init(&w, 2.0);
	add(&fx, fx.hot_loc, 7, 10);
	add(&fx, fx.cold_loc, 7, 5);
	assert_int_equal(window_add(&w, &fx.p, 0, 1.0), 0);
	assert_int_equal(w.nsamples, 2);
	assert_int_equal(w.last, 15);
	assert_int_equal(value_of(&w, fx.hot_loc, 7, 0), 10 * WINDOW_SCALE);
	assert_int_equal(value_of(&w, fx.cold_loc, 7, 0), 5 * WINDOW_SCALE);

	/* the next cut: hot again (4), cold not; one half-life later */
	profile_clear_samples(&fx.p);
	assert_int_equal(fx.p.nsamples, 0);
	add(&fx, fx.hot_loc, 7, 4);
	assert_int_equal(window_add(&w, &fx.p, 0, 2.0), 0);
	assert_int_equal(w.last, 4);
	assert_int_equal(value_of(&w, fx.hot_loc, 7, 0), 9 * WINDOW_SCALE);
	assert_int_equal(value_of(&w, fx.cold_loc, 7, 0), 2500);
	assert_int_equal(window_stacks(&w), 2);

	/* the same stack in another process is another entry */
	profile_clear_samples(&fx.p);
	add(&fx, fx.hot_loc, 8, 3);
	assert_int_equal(window_add(&w, &fx.p, 0, 0), 0);
	assert_int_equal(value_of(&w, fx.hot_loc, 8, 0), 3 * WINDOW_SCALE);
	assert_int_equal(value_of(&w, fx.hot_loc, 7, 0), 9 * WINDOW_SCALE);
	window_release(&w);
	profile_release(&fx.p);
}

/* A stack whose weight falls under WINDOW_MIN_WEIGHT leaves the window's samples. */
static void test_fade_out(void **state)
{
	struct fixture fx;
	struct window w;

	(void)state;
	fixture_init(&fx);
	window_init(&w, 1.0);
	add(&fx, fx.cold_loc, 1, 1);
	assert_int_equal(window_add(&w, &fx.p, 0, 1.0), 0);
	profile_clear_samples(&fx.p);
	/* 1 x 2^-6 = 0.0156 stays, 2^-7 = 0.0078 goes */
	assert_int_equal(window_add(&w, &fx.p, 0, 6.0), 0);
	assert_int_equal(value_of(&w, fx.cold_loc, 1, 0), 16);
	assert_int_equal(window_add(&w, &fx.p, 0, 1.0), 0);
	assert_int_equal(w.nsamples, 0);
	assert_int_equal(value_of(&w, fx.cold_loc, 1, 0), -1);
	window_release(&w);
	profile_release(&fx.p);
}

/* Many stacks without weight are dropped from the window; a dropped stack that comes back starts
 * afresh, and the index still finds the survivors. */
static void test_drop_dead(void **state)
{
	struct fixture fx;
	struct window w;

	(void)state;
	fixture_init(&fx);
	window_init(&w, 1.0);
	for (int pid = 1; pid <= 3000; pid++)
		add(&fx, fx.cold_loc, pid, 1);
	add(&fx, fx.hot_loc, 1, 1000);
	assert_int_equal(window_add(&w, &fx.p, 0, 0), 0);
	assert_int_equal(window_stacks(&w), 3001);
	profile_clear_samples(&fx.p);
	/* 10 half-lives: 1 sample weighs 0.001 (dead), 1000 weigh 0.98 */
	add(&fx, fx.cold_loc, 2, 2);
	assert_int_equal(window_add(&w, &fx.p, 0, 10.0), 0);
	assert_int_equal(window_stacks(&w), 2);
	assert_int_equal(w.nsamples, 2);
	assert_int_equal(value_of(&w, fx.cold_loc, 2, 0), 2 * WINDOW_SCALE);
	assert_int_equal(value_of(&w, fx.hot_loc, 1, 0), 977);
	assert_int_equal(value_of(&w, fx.cold_loc, 1, 0), -1);
	profile_clear_samples(&fx.p);
	add(&fx, fx.hot_loc, 1, 1);
	assert_int_equal(window_add(&w, &fx.p, 0, 0), 0);
	assert_int_equal(window_stacks(&w), 2);
	assert_int_equal(value_of(&w, fx.hot_loc, 1, 0), 1977);
	window_release(&w);
	profile_release(&fx.p);
}

/* Half-life 0: the window is the last cut alone (firn top -z). */
static void test_last_cut_only(void **state)
{
	struct fixture fx;
	struct window w;

	(void)state;
	fixture_init(&fx);
	window_init(&w, 0);
	add(&fx, fx.hot_loc, 1, 10);
	assert_int_equal(window_add(&w, &fx.p, 0, 0), 0);
	profile_clear_samples(&fx.p);
	add(&fx, fx.cold_loc, 1, 3);
	assert_int_equal(window_add(&w, &fx.p, 0, 0.5), 0);
	assert_int_equal(w.nsamples, 1);
	assert_int_equal(value_of(&w, fx.cold_loc, 1, 0), 3 * WINDOW_SCALE);
	assert_int_equal(value_of(&w, fx.hot_loc, 1, 0), -1);
	window_release(&w);
	profile_release(&fx.p);
}

/* The column followed is the one asked for; the others are 0; a column the cut lacks fails. */
static void test_column(void **state)
{
	struct fixture fx;
	struct window w;

	(void)state;
	fixture_init(&fx);
	window_init(&w, 2.0);
	add(&fx, fx.hot_loc, 1, 2);
	assert_int_equal(window_add(&w, &fx.p, 1, 0), 0);
	assert_int_equal(w.last, 20);
	assert_int_equal(value_of(&w, fx.hot_loc, 1, 1), 20 * WINDOW_SCALE);
	assert_int_equal(value_of(&w, fx.hot_loc, 1, 0), 0);
	assert_int_equal(window_add(&w, &fx.p, 2, 0), -EINVAL);
	window_release(&w);
	profile_release(&fx.p);
}

/* hist_build and calls_compute over the window's samples, with the profile's ids. */
static void test_hist_and_calls(void **state)
{
	struct fixture fx;
	struct window w;
	struct hist h;
	struct calls c = { 0 };

	(void)state;
	fixture_init(&fx);
	window_init(&w, 2.0);
	add(&fx, fx.hot_loc, 1, 6);
	add(&fx, fx.cold_loc, 1, 2);
	assert_int_equal(window_add(&w, &fx.p, 0, 0), 0);
	profile_clear_samples(&fx.p); /* the profile's own samples play no part */
	add(&fx, fx.cold_loc, 2, 100);
	struct hist_opts ho = { .samples = w.samples, .nsamples = w.nsamples };
	assert_int_equal(hist_build(&h, &fx.p, &ho), 0);
	assert_int_equal(h.total, 8 * WINDOW_SCALE);
	assert_int_equal(hist_find(&h, "hot", "app")->self, 6 * WINDOW_SCALE);
	assert_int_equal(hist_find(&h, "main", "app")->total, 8 * WINDOW_SCALE);
	hist_release(&h);

	struct calls_query q = { w.samples, w.nsamples, 0, "main", "app", false };
	assert_int_equal(calls_compute(&c, &fx.p, &q), 0);
	assert_int_equal(c.total, 8 * WINDOW_SCALE);
	assert_int_equal(c.ncallers, 1);
	assert_string_equal(c.callers[0].name, "[root]");
	assert_int_equal(c.ncallees, 2);
	assert_string_equal(c.callees[0].name, "hot");
	assert_int_equal(c.callees[0].value, 6 * WINDOW_SCALE);
	assert_string_equal(c.callees[1].name, "cold");
	assert_int_equal(c.self, 0);
	calls_release(&c);
	window_release(&w);
	profile_release(&fx.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decay),
		cmocka_unit_test(test_fade_out),
		cmocka_unit_test(test_drop_dead),
		cmocka_unit_test(test_last_cut_only),
		cmocka_unit_test(test_column),
		cmocka_unit_test(test_hist_and_calls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
