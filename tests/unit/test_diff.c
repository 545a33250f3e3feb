/* Unit tests for lib/analyze/diff: joining hists (also across unknown modules, versions of a module,
 * the main executables of two builds and, by name alone, any modules), a profile's main
 * executable, ordering, rule parsing,
 * rule evaluation (bounds of the change against the threshold, Bonferroni, too few samples,
 * a shrunk function over 100 samples a side), the calibration of the
 * test on simulated unchanged and changed pairs, joined folded stacks, the differential tree and
 * its colors by total. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/diff.h"
#include "format/flamegraph.h"
#include "format/folded.h"
#include "analyze/hist.h"
#include "model/profile.h"
#include "analyze/stats.h"

/* Two profiles read from folded text, their hists and the join. */
struct pair {
	struct profile p[2];
	struct hist h[2];
	struct diff d;
};

/* Reads folded text into p. */
static void load_folded(struct profile *p, const char *text)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");

	assert_non_null(f);
	assert_int_equal(profile_init(p), 0);
	assert_int_equal(folded_read(p, f, NULL), 0);
	fclose(f);
}

/* Builds both hists (default options) and joins them. */
static void pair_join(struct pair *pr)
{
	struct hist_opts o = { 0 };

	for (int s = 0; s < 2; s++)
		assert_int_equal(hist_build(&pr->h[s], &pr->p[s], &o), 0);
	assert_int_equal(diff_join(&pr->d, &pr->h[0], &pr->h[1], NULL), 0);
}

static void pair_init(struct pair *pr, const char *base, const char *new_)
{
	load_folded(&pr->p[0], base);
	load_folded(&pr->p[1], new_);
	pair_join(pr);
}

static void pair_release(struct pair *pr)
{
	diff_release(&pr->d);
	for (int s = 0; s < 2; s++) {
		hist_release(&pr->h[s]);
		profile_release(&pr->p[s]);
	}
}

/* The joined entry named name (any module), or a test failure. */
static const struct diff_entry *entry(const struct diff *d, const char *name)
{
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->entries[i].name, name))
			return &d->entries[i];
	fail_msg("no entry '%s'", name);
	return NULL;
}

static const char BASE[] = "main;parse;lex 20\nmain;parse 10\nmain;compute;hot 50\n"
			   "main;compute 10\nmain;gone 10\n";
static const char NEW[] = "main;parse;lex 80\nmain;parse 20\nmain;compute;hot 60\n"
			  "main;compute 20\nmain;added 20\n";

static void test_join(void **state)
{
	struct pair pr;
	(void)state;

	pair_init(&pr, BASE, NEW);
	assert_int_equal(pr.d.n, 7);
	assert_int_equal(pr.d.total[DIFF_BASE], 100);
	assert_int_equal(pr.d.total[DIFF_NEW], 200);
	const struct diff_entry *e = entry(&pr.d, "lex");
	assert_int_equal(e->self[DIFF_BASE], 20);
	assert_int_equal(e->self[DIFF_NEW], 80);
	e = entry(&pr.d, "parse");
	assert_int_equal(e->total[DIFF_BASE], 30);
	assert_int_equal(e->total[DIFF_NEW], 100);
	e = entry(&pr.d, "gone");
	assert_int_equal(e->self[DIFF_BASE], 10);
	assert_int_equal(e->self[DIFF_NEW], 0);
	e = entry(&pr.d, "added");
	assert_int_equal(e->self[DIFF_BASE], 0);
	assert_int_equal(e->total[DIFF_NEW], 20);
	/* shares are normalized to each side's total */
	assert_true(fabs(diff_share(&pr.d, entry(&pr.d, "lex"), DIFF_SELF, DIFF_NEW) - 0.4) < 1e-15);
	assert_true(fabs(diff_share(&pr.d, entry(&pr.d, "hot"), DIFF_SELF, DIFF_NEW) - 0.3) < 1e-15);
	pair_release(&pr);
}

/* A profile with mapping "/usr/bin/app": functions main, f, g (g only in app's profile). */
static void load_mapped(struct profile *p)
{
	assert_int_equal(profile_init(p), 0);
	assert_int_equal(profile_add_sample_type(p, "samples", "count"), 0);
	int64_t m = profile_add_mapping(p, 0x1000, 0x2000, 0, "/usr/bin/app", "");
	uint64_t main_l = profile_simple_location(p, m, profile_function(p, "main", NULL, NULL, 0),
						  FRAME_USER);
	uint64_t f_l = profile_simple_location(p, m, profile_function(p, "f", NULL, NULL, 0),
					       FRAME_USER);
	uint64_t locs[2] = { f_l, main_l };
	int64_t v = 30;
	assert_int_equal(profile_add_sample(p, locs, 2, &v, NULL, 0), 0);
	v = 10;
	assert_int_equal(profile_add_sample(p, &main_l, 1, &v, NULL, 0), 0);
}

/* Folded stacks have no modules: their functions still pair with a pprof profile's by name. */
static void test_join_unknown_module(void **state)
{
	struct pair pr;
	(void)state;

	load_folded(&pr.p[0], "main;f 5\nmain 5\nmain;h 10\n");
	load_mapped(&pr.p[1]);
	pair_join(&pr);
	assert_int_equal(pr.d.n, 3); /* main, f, h */
	const struct diff_entry *e = entry(&pr.d, "f");
	assert_string_equal(e->module, "app");
	assert_int_equal(e->self[DIFF_BASE], 5);
	assert_int_equal(e->self[DIFF_NEW], 30);
	e = entry(&pr.d, "main");
	assert_string_equal(e->module, "app");
	assert_int_equal(e->total[DIFF_BASE], 20);
	assert_int_equal(e->total[DIFF_NEW], 40);
	e = entry(&pr.d, "h");
	assert_int_equal(e->self[DIFF_NEW], 0);
	pair_release(&pr);
}

/* A profile of one-frame samples: function names[i] in a mapping of file files[i], values[i]
 * samples. */
static void load_modules(struct profile *p, size_t n, const char *const files[],
			 const char *const names[], const int64_t values[])
{
	assert_int_equal(profile_init(p), 0);
	assert_int_equal(profile_add_sample_type(p, "samples", "count"), 0);
	for (size_t i = 0; i < n; i++) {
		int64_t m = profile_add_mapping(p, 0x10000 * (i + 1), 0x10000 * (i + 2), 0, files[i], "");
		assert_true(m > 0);
		int64_t f = profile_function(p, names[i], NULL, NULL, 0);
		int64_t l = profile_simple_location(p, m, f, FRAME_USER);
		uint64_t loc = l;
		assert_true(f > 0 && l > 0);
		assert_int_equal(profile_add_sample(p, &loc, 1, &values[i], NULL, 0), 0);
	}
}

/* The number of joined entries named name. */
static size_t count_named(const struct diff *d, const char *name)
{
	size_t n = 0;

	for (size_t i = 0; i < d->n; i++)
		n += !strcmp(d->entries[i].name, name);
	return n;
}

/* A name in two modules on one side ("_start" of the program and of the dynamic loader) and
 * with no module on the other (folded stacks): the unknown one pairs with the largest, in
 * whichever order the profile's tables list them. */
static void test_join_unknown_module_largest(void **state)
{
	const char *const files[] = { "/lib/ld-linux-x86-64.so.2", "/usr/bin/split" };
	const char *const names[] = { "_start", "_start" };
	const int64_t small_first[] = { 1, 229 }, large_first[] = { 229, 1 };
	(void)state;

	for (int order = 0; order < 2; order++) {
		struct pair pr;
		const char *const f2[] = { files[1], files[0] };
		load_modules(&pr.p[0], 2, order ? f2 : files, names, order ? large_first : small_first);
		load_folded(&pr.p[1], "_start 230\n");
		pair_join(&pr);
		assert_int_equal(pr.d.n, 2);
		for (size_t i = 0; i < pr.d.n; i++) {
			const struct diff_entry *e = &pr.d.entries[i];
			bool prog = !strcmp(e->module, "split");
			assert_true(prog || !strcmp(e->module, "ld-linux-x86-64.so.2"));
			assert_int_equal(e->self[DIFF_BASE], prog ? 229 : 1);
			assert_int_equal(e->self[DIFF_NEW], prog ? 230 : 0);
		}
		pair_release(&pr);
	}
}

/* Two builds whose files are named differently: versions of one module pair by default, the
 * same module first; other modules pair only with DIFF_MATCH_NAME (--ignore-module). */
static void test_join_modules(void **state)
{
	static const char *const bf[] = { "/lib/liba.so", "/usr/bin/app-1.2", "/lib/libssl.so.1.1",
					  "/lib/libh.so", "/usr/bin/app-1.2", "/lib/libm.so.6",
					  "/lib/libp.so.1", "/opt/q" };
	static const char *const nf[] = { "/usr/bin/app-1.3", "/lib/liba.so", "/lib/libssl.so.3",
					  "/opt/other", "/usr/bin/tool", "/usr/bin/libm",
					  "/opt/r", "/lib/libp.so.2" };
	static const char *const names[] = { "init", "init", "g", "h", "k", "m", "x", "x" };
	static const int64_t bv[] = { 10, 20, 30, 40, 50, 60, 70, 80 };
	static const int64_t nv[] = { 21, 11, 31, 41, 51, 61, 81, 71 };
	struct pair pr;
	(void)state;

	for (int match = DIFF_MATCH_MODULE; match <= DIFF_MATCH_NAME; match++) {
		struct hist_opts o = { 0 };
		load_modules(&pr.p[0], 8, bf, names, bv);
		load_modules(&pr.p[1], 8, nf, names, nv);
		for (int s = 0; s < 2; s++)
			assert_int_equal(hist_build(&pr.h[s], &pr.p[s], &o), 0);
		struct diff_join_opts jo = { .match = match };
		assert_int_equal(diff_join(&pr.d, &pr.h[0], &pr.h[1], &jo), 0);
		/* init: liba.so with liba.so (exact, though listed second), app-1.2 with app-1.3 */
		assert_int_equal(count_named(&pr.d, "init"), 2);
		for (size_t i = 0; i < pr.d.n; i++) {
			const struct diff_entry *e = &pr.d.entries[i];
			if (!strcmp(e->name, "init") && !strcmp(e->module, "liba.so"))
				assert_true(e->self[0] == 10 && e->self[1] == 11);
			else if (!strcmp(e->name, "init"))
				assert_true(!strcmp(e->module, "app-1.3") && e->self[0] == 20 &&
					    e->self[1] == 21);
		}
		const struct diff_entry *g = entry(&pr.d, "g");
		assert_string_equal(g->module, "libssl.so.3"); /* NEW's */
		assert_true(g->self[0] == 30 && g->self[1] == 31);
		/* different programs, or a library and a program: apart unless names decide */
		size_t apart = match == DIFF_MATCH_NAME ? 1 : 2;
		assert_int_equal(count_named(&pr.d, "h"), apart);
		assert_int_equal(count_named(&pr.d, "k"), apart);
		assert_int_equal(count_named(&pr.d, "m"), apart);
		/* x: libp.so.1 with libp.so.2 before q with r, whatever the order */
		assert_int_equal(count_named(&pr.d, "x"), match == DIFF_MATCH_NAME ? 2 : 3);
		for (size_t i = 0; i < pr.d.n; i++) {
			const struct diff_entry *e = &pr.d.entries[i];
			if (!strcmp(e->name, "x") && !strcmp(e->module, "libp.so.2"))
				assert_true(e->self[0] == 70 && e->self[1] == 71);
			else if (!strcmp(e->name, "x") && match == DIFF_MATCH_NAME)
				assert_true(!strcmp(e->module, "r") && e->self[0] == 80 && e->self[1] == 81);
		}
		assert_int_equal(pr.d.n, match == DIFF_MATCH_NAME ? 8 : 12);
		if (match == DIFF_MATCH_NAME) {
			const struct diff_entry *k = entry(&pr.d, "k");
			assert_string_equal(k->module, "tool");
			assert_true(k->self[0] == 50 && k->self[1] == 51);
		}
		pair_release(&pr);
	}
}

/* One frame of a built profile: function fn in the file of mapping map (an index into the files
 * given); fn NULL ends a stack. */
struct bframe {
	int map;
	const char *fn;
};

/* A profile with one mapping per file (in that order, the kernel's marked so) and one sample per
 * stack (leaf first, at most 4 frames) of value values[i]. */
static void load_stacks(struct profile *p, const char *const files[], size_t nfiles,
			const struct bframe stacks[][5], const int64_t values[], size_t n)
{
	int64_t maps[8];

	assert_true(nfiles <= 8);
	assert_int_equal(profile_init(p), 0);
	assert_int_equal(profile_add_sample_type(p, "samples", "count"), 0);
	for (size_t i = 0; i < nfiles; i++)
		assert_true((maps[i] = profile_add_mapping(p, 0x10000 * (i + 1), 0x10000 * (i + 2), 0,
							   files[i], "")) > 0);
	for (size_t i = 0; i < n; i++) {
		uint64_t locs[4];
		uint32_t k = 0;
		for (; k < 4 && stacks[i][k].fn; k++) {
			const struct bframe *f = &stacks[i][k];
			int64_t fn = profile_function(p, f->fn, NULL, NULL, 0);
			int64_t l = profile_simple_location(p, maps[f->map], fn,
							    p->mappings[maps[f->map] - 1].kind);
			assert_true(fn > 0 && l > 0);
			locs[k] = l;
		}
		assert_int_equal(profile_add_sample(p, locs, k, &values[i], NULL, 0), 0);
	}
}

/* The main executable: the program file most samples go through, whatever comes first in the
 * mapping table (the kernel, here) and however many samples a library has; a tie to the first;
 * a file mapped twice adds up; none in folded stacks. */
static void test_main_module(void **state)
{
	static const char *const files[] = { "[kernel.kallsyms]", "/usr/lib/libjvm.so", "[vdso]",
					     "/tmp/b1/base", "/usr/bin/sh", "/opt/app" };
	static const struct bframe stacks[][5] = {
		{ { 3, "work" }, { 3, "main" } },
		{ { 1, "gc" }, { 1, "thread_start" } },
		{ { 0, "do_syscall" }, { 2, "__vdso_gettime" }, { 3, "main" } },
		{ { 4, "sh_main" } },
		{ { 5, "app_main" } },
	};
	static const int64_t values[] = { 60, 200, 30, 80, 80 };
	struct hist_opts o = { 0 };
	struct profile p;
	(void)state;

	load_stacks(&p, files, 6, stacks, values, 5);
	assert_string_equal(diff_main_module(&p, &o, 0), "base"); /* 90 beats 80 and libjvm's 200 */
	profile_release(&p);
	load_stacks(&p, files, 6, stacks + 3, values + 3, 2);
	assert_string_equal(diff_main_module(&p, &o, 0), "sh"); /* a tie: the first mapping */
	profile_release(&p);
	static const char *const twice[] = { "/opt/app", "/usr/bin/sh", "/opt/app" };
	static const struct bframe one[][5] = { { { 0, "a" } }, { { 1, "s" } }, { { 2, "b" } } };
	static const int64_t v3[] = { 50, 80, 50 };
	load_stacks(&p, twice, 3, one, v3, 3);
	assert_string_equal(diff_main_module(&p, &o, 0), "app"); /* 50 + 50 beats 80 */
	profile_release(&p);
	load_stacks(&p, files, 6, stacks + 1, values + 1, 1); /* a library's samples only */
	assert_string_equal(diff_main_module(&p, &o, 0), "");
	profile_release(&p);
	load_folded(&p, "main;f 5\n");
	assert_string_equal(diff_main_module(&p, &o, 0), "");
	profile_release(&p);
}

/* Two builds of one program under other names (./base in one build directory, ./new in
 * another), its library in two versions: the main executables pair, and so do the versions;
 * another program or another library (libfoo and libbar) keeps its functions apart. So an any:
 * gate passes on the unchanged program, and trips where a function grew. */
static void test_join_builds(void **state)
{
	static const char *const bf[] = { "/b1/base", "/lib/libfoo.so.1.2", "/lib/libfoo.so",
					   "/usr/bin/tool" };
	static const char *const nf[] = { "/b2/new", "/lib/libfoo.so.1.3", "/lib/libbar.so",
					   "/usr/bin/helper" };
	static const struct bframe stacks[][5] = {
		{ { 0, "work_a" }, { 0, "main" } },
		{ { 0, "work_b" }, { 0, "main" } },
		{ { 1, "compress" }, { 0, "main" } },
		{ { 2, "h" }, { 0, "main" } },
		{ { 3, "k" } },
	};
	static const int64_t bv[] = { 3000, 3000, 2000, 10, 10 };
	static const int64_t same[] = { 3000, 3000, 2000, 10, 10 };
	static const int64_t grew[] = { 4500, 3000, 2000, 10, 10 }; /* work_a: 37 % -> 47 % */
	struct diff_rule r;
	(void)state;

	assert_int_equal(diff_rule_parse(&r, "any:self>+3pp"), 0);
	for (int g = 0; g < 3; g++) {
		struct pair pr;
		struct hist_opts o = { 0 };
		struct diff_result res;
		load_stacks(&pr.p[0], bf, 4, stacks, bv, 5);
		load_stacks(&pr.p[1], nf, 4, stacks, g == 2 ? grew : same, 5);
		struct diff_join_opts jo = { DIFF_MATCH_MODULE, { NULL, NULL }, false };
		for (int s = 0; s < 2; s++) {
			assert_int_equal(hist_build(&pr.h[s], &pr.p[s], &o), 0);
			jo.mains[s] = g ? diff_main_module(&pr.p[s], &o, 0) : NULL;
		}
		if (g)
			assert_true(!strcmp(jo.mains[0], "base") && !strcmp(jo.mains[1], "new"));
		assert_int_equal(diff_join(&pr.d, &pr.h[0], &pr.h[1], &jo), 0);
		assert_int_equal(diff_rule_eval(&pr.d, &r, 0.99, &res), 0);
		if (!g) { /* without the main executables: work_a and work_b look new */
			assert_int_equal(count_named(&pr.d, "work_a"), 2);
			assert_int_equal(res.verdict, DIFF_TRIPPED);
		} else {
			const struct diff_entry *e = entry(&pr.d, "work_a");
			assert_int_equal(count_named(&pr.d, "work_a"), 1);
			assert_int_equal(count_named(&pr.d, "main"), 1);
			assert_string_equal(e->module, "new"); /* NEW's name */
			assert_int_equal(e->self[DIFF_BASE], 3000);
			assert_int_equal(e->self[DIFF_NEW], g == 2 ? 4500 : 3000);
			e = entry(&pr.d, "compress");
			assert_string_equal(e->module, "libfoo.so.1.3");
			assert_true(e->self[DIFF_BASE] == 2000 && e->self[DIFF_NEW] == 2000);
			assert_int_equal(count_named(&pr.d, "h"), 2); /* libfoo.so, libbar.so */
			assert_int_equal(count_named(&pr.d, "k"), 2); /* tool, helper */
			assert_int_equal(pr.d.n, 8);
			assert_int_equal(res.verdict, g == 2 ? DIFF_TRIPPED : DIFF_PASS);
			if (g == 2)
				assert_true(res.ntripped == 1 &&
					    !strcmp(pr.d.entries[res.tripped[0].entry].name, "work_a"));
		}
		diff_result_release(&res);
		pair_release(&pr);
	}
	diff_rule_release(&r);
}

/* By module, entries are named after their modules and pair as the modules do: the main
 * executables and libfoo's versions, under NEW's names; libfoo.so and libbar.so, tool and helper
 * stay apart. */
static void test_join_builds_by_module(void **state)
{
	static const char *const bf[] = { "/b1/base", "/lib/libfoo.so.1.2", "/lib/libfoo.so",
					   "/usr/bin/tool" };
	static const char *const nf[] = { "/b2/new", "/lib/libfoo.so.1.3", "/lib/libbar.so",
					   "/usr/bin/helper" };
	static const struct bframe stacks[][5] = {
		{ { 0, "work" }, { 0, "main" } },
		{ { 1, "compress" }, { 0, "main" } },
		{ { 2, "h" }, { 0, "main" } },
		{ { 3, "k" } },
	};
	static const int64_t v[] = { 300, 200, 100, 10 };
	struct hist_opts o = { .by = HIST_BY_MODULE };
	struct diff_join_opts jo = { DIFF_MATCH_MODULE, { NULL, NULL }, true };
	struct pair pr;
	(void)state;

	load_stacks(&pr.p[0], bf, 4, stacks, v, 4);
	load_stacks(&pr.p[1], nf, 4, stacks, v, 4);
	for (int s = 0; s < 2; s++) {
		assert_int_equal(hist_build(&pr.h[s], &pr.p[s], &o), 0);
		jo.mains[s] = diff_main_module(&pr.p[s], &o, 0);
	}
	assert_int_equal(diff_join(&pr.d, &pr.h[0], &pr.h[1], &jo), 0);
	const struct diff_entry *e = entry(&pr.d, "new");
	assert_string_equal(e->module, "new");
	assert_true(e->total[DIFF_BASE] == 600 && e->total[DIFF_NEW] == 600 && e->self[DIFF_NEW] == 300);
	e = entry(&pr.d, "libfoo.so.1.3");
	assert_true(e->self[DIFF_BASE] == 200 && e->self[DIFF_NEW] == 200);
	assert_int_equal(entry(&pr.d, "libfoo.so")->self[DIFF_NEW], 0);
	assert_int_equal(entry(&pr.d, "libbar.so")->self[DIFF_BASE], 0);
	assert_int_equal(entry(&pr.d, "tool")->self[DIFF_NEW], 0);
	assert_int_equal(entry(&pr.d, "helper")->self[DIFF_BASE], 0);
	assert_int_equal(pr.d.n, 6);
	pair_release(&pr);
}

/* Largest change of share first (pp), then the other metric, then name; or of raw counts. */
static void test_sort(void **state)
{
	struct pair pr;
	(void)state;

	pair_init(&pr, BASE, NEW);
	diff_sort(&pr.d, DIFF_SELF, false);
	/* self pp: lex +20, hot -20, gone -10, added +10, parse and compute 0 (total +20, -20),
	 * main 0; equal changes compare equal exactly (by name then) */
	const char *want[] = { "hot", "lex", "added", "gone", "compute", "parse", "main" };
	for (size_t i = 0; i < 7; i++)
		assert_string_equal(pr.d.entries[i].name, want[i]);
	diff_sort(&pr.d, DIFF_SELF, true);
	/* raw self: lex +60, added +20, hot +10, gone -10, parse +10 (total +70), compute +10 */
	const char *want_abs[] = { "lex", "added", "parse", "compute", "gone", "hot", "main" };
	for (size_t i = 0; i < 7; i++)
		assert_string_equal(pr.d.entries[i].name, want_abs[i]);
	diff_sort(&pr.d, DIFF_TOTAL, false);
	/* total pp: hot, lex, compute, parse all 20 (self 20, 20, 0, 0), then added, gone */
	const char *want_total[] = { "hot", "lex", "compute", "parse", "added", "gone", "main" };
	for (size_t i = 0; i < 7; i++)
		assert_string_equal(pr.d.entries[i].name, want_total[i]);
	pair_release(&pr);
}

static void test_rule_parse(void **state)
{
	struct diff_rule r;
	(void)state;

	assert_int_equal(diff_rule_parse(&r, "self:parse_*>+2pp"), 0);
	assert_string_equal(r.pattern, "parse_*");
	assert_int_equal(r.metric, DIFF_SELF);
	assert_int_equal(r.dir, 1);
	assert_true(r.threshold == 2 && r.unit == DIFF_PP);
	diff_rule_release(&r);
	assert_int_equal(diff_rule_parse(&r, "total:handle_request>+10%"), 0);
	assert_true(r.metric == DIFF_TOTAL && r.threshold == 10 && r.unit == DIFF_REL);
	diff_rule_release(&r);
	assert_int_equal(diff_rule_parse(&r, "any:self>+3pp"), 0);
	assert_null(r.pattern);
	assert_true(r.metric == DIFF_SELF && r.threshold == 3);
	assert_int_equal(diff_rule_parse(&r, "any:total>0.5pp"), 0);
	assert_true(r.metric == DIFF_TOTAL && r.threshold == 0.5 && r.dir == 1);
	assert_int_equal(diff_rule_parse(&r, "self:io_*<-25%"), 0);
	assert_true(r.dir == -1 && r.threshold == 25 && r.unit == DIFF_REL);
	diff_rule_release(&r);
	/* C++ names: the operator is the last '<' or '>' */
	assert_int_equal(diff_rule_parse(&r, "self:std::vector<int>::push_back>+1.5pp"), 0);
	assert_string_equal(r.pattern, "std::vector<int>::push_back");
	assert_true(r.threshold == 1.5);
	diff_rule_release(&r);
	const char *bad[] = { "", "self", "self:", "self:>+2pp", "self:f", "self:f>2", "self:f>+2",
			      "self:f>+2ms", "self:f>-2pp", "self:f<+2pp", "self:f<2pp", "self:f>+pp",
			      "self:f>+inf%", "self:f>+nanpp", "any:f>+2pp", "any:>+2pp",
			      "cumulative:f>+2pp", "f>+2pp", "self:f>+2pp ", "self:f>+-2pp" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (diff_rule_parse(&r, bad[i]) != -EINVAL)
			fail_msg("rule '%s' parsed", bad[i]);
		assert_null(r.pattern);
	}
}

/* A diff of hand-made counts: one entry per (name, base self, new self), totals given. */
static void make_diff(struct diff *d, struct diff_entry *e, size_t n, int64_t nb, int64_t nn)
{
	for (size_t i = 0; i < n; i++) {
		e[i].module = "";
		e[i].total[0] = e[i].self[0];
		e[i].total[1] = e[i].self[1];
	}
	*d = (struct diff){ e, n, { nb, nn } };
}

/* Evaluates rule text on d. */
static enum diff_verdict eval(const struct diff *d, const char *text, struct diff_result *res)
{
	struct diff_rule r;

	assert_int_equal(diff_rule_parse(&r, text), 0);
	assert_int_equal(diff_rule_eval(d, &r, 0.99, res), 0);
	diff_rule_release(&r);
	return res->verdict;
}

/* Asserts finding f's bounds are the MOVER bounds (pp or relative) of entry e at z. */
static void assert_bounds(const struct diff *d, const struct diff_finding *f, bool rel, double z)
{
	const struct diff_entry *e = &d->entries[f->entry];
	struct stats_interval iv = rel ? stats_mover_ratio(e->self[0], d->total[0], e->self[1],
							   d->total[1], z)
				       : stats_mover_diff(e->self[0], d->total[0], e->self[1],
							  d->total[1], 1, z);
	double lo = rel ? (iv.lo - 1) * 100 : iv.lo * 100, hi = rel ? (iv.hi - 1) * 100 : iv.hi * 100;

	assert_true(fabs(f->low - lo) < 1e-9 && fabs(f->high - hi) < 1e-9);
}

/* Each rule is decided by the bounds of the change: trip above, pass below, inconclusive when
 * they hold the threshold; in pp and in percent, growth and shrink. */
static void test_rule_eval(void **state)
{
	struct diff_entry e[] = {
		{ "parse_a", "", { 2000, 3000 }, { 0 } }, /* 20 % -> 30 %: +10 pp, +50 % */
		{ "parse_b", "", { 1000, 1000 }, { 0 } }, /* 10 % -> 10 % */
		{ "hot", "", { 5000, 4000 }, { 0 } },     /* 50 % -> 40 % */
		{ "rare", "", { 10, 30 }, { 0 } },        /* 0.1 % -> 0.3 %: +200 % of almost nothing */
	};
	struct diff d;
	struct diff_result res;
	(void)state;

	make_diff(&d, e, 4, 10000, 10000);
	assert_int_equal(eval(&d, "self:parse_*>+2pp", &res), DIFF_TRIPPED);
	assert_int_equal(res.ntested, 2);
	assert_true(fabs(res.alpha - 0.005) < 1e-12);
	assert_true(fabs(res.z_critical - 2.5758293035489) < 1e-9);
	assert_int_equal(res.ntripped, 1);
	assert_int_equal(res.tripped[0].entry, 0);
	assert_true(fabs(res.tripped[0].change - 10) < 1e-9);
	assert_true(fabs(res.tripped[0].base_pct - 20) < 1e-9 && fabs(res.tripped[0].new_pct - 30) < 1e-9);
	assert_true(res.tripped[0].p_value < 1e-50);
	assert_bounds(&d, &res.tripped[0], false, res.z_critical);
	assert_true(res.tripped[0].low > 8 && res.tripped[0].high < 12);
	diff_result_release(&res);
	/* over the threshold but the other way: surely below it */
	assert_int_equal(eval(&d, "self:hot>+2pp", &res), DIFF_PASS);
	diff_result_release(&res);
	/* +10 pp, between +8.58 and +11.41 pp at z = 2.33: 11 pp inside, 12 pp above */
	assert_int_equal(eval(&d, "self:parse_a>+11pp", &res), DIFF_INCONCLUSIVE);
	assert_int_equal(res.ninconclusive, 1);
	assert_bounds(&d, &res.inconclusive[0], false, res.z_critical);
	assert_true(res.inconclusive[0].low < 11 && res.inconclusive[0].high > 11);
	diff_result_release(&res);
	assert_int_equal(eval(&d, "self:parse_a>+12pp", &res), DIFF_PASS);
	diff_result_release(&res);
	assert_int_equal(eval(&d, "self:parse_a>+8pp", &res), DIFF_TRIPPED);
	diff_result_release(&res);
	/* shrink rules mirror it: -10 pp, between -11.62 and -8.37 pp */
	assert_int_equal(eval(&d, "self:hot<-5pp", &res), DIFF_TRIPPED);
	diff_result_release(&res);
	assert_int_equal(eval(&d, "self:hot<-10pp", &res), DIFF_INCONCLUSIVE);
	diff_result_release(&res);
	assert_int_equal(eval(&d, "self:hot<-12pp", &res), DIFF_PASS);
	diff_result_release(&res);
	/* relative: +50 %, between +41.5 % and +59.0 % (MOVER-R) */
	assert_int_equal(eval(&d, "total:parse_a>+40%", &res), DIFF_TRIPPED);
	assert_true(fabs(res.tripped[0].change - 50) < 1e-9);
	assert_bounds(&d, &res.tripped[0], true, res.z_critical);
	diff_result_release(&res);
	assert_int_equal(eval(&d, "total:parse_a>+49%", &res), DIFF_INCONCLUSIVE);
	diff_result_release(&res);
	assert_int_equal(eval(&d, "total:parse_a>+60%", &res), DIFF_PASS);
	diff_result_release(&res);
	/* +200 % of 10 samples: at least +29 %, at most +585 % */
	assert_int_equal(eval(&d, "self:rare>+20%", &res), DIFF_TRIPPED);
	diff_result_release(&res);
	assert_int_equal(eval(&d, "self:rare>+100%", &res), DIFF_INCONCLUSIVE);
	assert_true(res.inconclusive[0].detectable > 20);
	diff_result_release(&res);
	/* it surely did not shrink, however few its samples */
	assert_int_equal(eval(&d, "self:rare<-20%", &res), DIFF_PASS);
	diff_result_release(&res);
	/* a pattern that matches nothing cannot pass */
	assert_int_equal(eval(&d, "self:lex*>+2pp", &res), DIFF_INCONCLUSIVE);
	assert_int_equal(res.ntested, 0);
	assert_int_equal(res.ninconclusive, 0);
	diff_result_release(&res);
}

/* The case: a function that shrank by 16 pp over 100 samples a side passes a rule on its
 * growth (the verdict used to come from the power to see +5 pp, and said inconclusive). */
static void test_shrunk_decides(void **state)
{
	struct diff_entry e[] = {
		{ "c", "", { 40, 24 }, { 0 } }, /* 40 % -> 24 %: between -30.4 and -0.65 pp */
		{ "b", "", { 35, 46 }, { 0 } },
		{ "a", "", { 25, 30 }, { 0 } },
	};
	struct diff d;
	struct diff_result res;
	(void)state;

	make_diff(&d, e, 3, 100, 100);
	assert_int_equal(eval(&d, "total:c>+5pp", &res), DIFF_PASS);
	assert_int_equal(res.ninconclusive, 0);
	diff_result_release(&res);
	assert_int_equal(eval(&d, "total:c>+10%", &res), DIFF_PASS);
	diff_result_release(&res);
	/* whether it shrank by more than 5 pp, 100 samples cannot tell */
	assert_int_equal(eval(&d, "total:c<-5pp", &res), DIFF_INCONCLUSIVE);
	assert_true(res.inconclusive[0].low < -5 && res.inconclusive[0].high > -5);
	assert_true(res.inconclusive[0].high < 0);
	diff_result_release(&res);
	/* the mirror: a function that grew by 16 pp passes a shrink rule */
	e[0].self[0] = e[0].total[0] = 24;
	e[0].self[1] = e[0].total[1] = 40;
	assert_int_equal(eval(&d, "total:c<-5pp", &res), DIFF_PASS);
	diff_result_release(&res);
}

/* A change whose lower bound is above 0 at alpha but not at alpha / 4 trips a rule on that one
 * function and not an any: rule over 4 (Bonferroni): that rule passes at a threshold of 0 and is
 * inconclusive at one the interval holds. */
static void test_bonferroni(void **state)
{
	/* 1000 vs 1000 samples; f 10 % -> 14 %: z = 2.76, one-sided p = 0.0029; bounds +0.62 pp
	 * at z(0.01) = 2.33, -0.09 pp at z(0.0025) = 2.81 */
	struct diff_entry e[] = {
		{ "f", "", { 100, 140 }, { 0 } },
		{ "g", "", { 300, 300 }, { 0 } },
		{ "h", "", { 300, 280 }, { 0 } },
		{ "k", "", { 300, 280 }, { 0 } },
	};
	struct diff d;
	struct diff_result res;
	(void)state;

	make_diff(&d, e, 4, 1000, 1000);
	double p = diff_p_value(&d, &e[0], DIFF_SELF, 1);
	assert_true(p > 0.0025 && p < 0.01);
	assert_int_equal(eval(&d, "self:f>+0pp", &res), DIFF_TRIPPED);
	assert_true(res.tripped[0].low > 0.5);
	diff_result_release(&res);
	assert_int_equal(eval(&d, "any:self>+0pp", &res), DIFF_PASS);
	assert_int_equal(res.ntested, 4);
	diff_result_release(&res);
	assert_int_equal(eval(&d, "self:f>+0.5pp", &res), DIFF_TRIPPED);
	diff_result_release(&res);
	assert_int_equal(eval(&d, "any:self>+0.5pp", &res), DIFF_INCONCLUSIVE);
	diff_result_release(&res);
}

/* With too few samples for the threshold, the verdict says so instead of passing. */
static void test_too_few_samples(void **state)
{
	struct diff_entry e[] = {
		{ "a", "", { 20, 21 }, { 0 } },
		{ "b", "", { 80, 79 }, { 0 } },
	};
	struct diff d;
	struct diff_result res;
	(void)state;

	make_diff(&d, e, 2, 100, 100);
	assert_int_equal(eval(&d, "self:a>+3pp", &res), DIFF_INCONCLUSIVE);
	assert_int_equal(res.ninconclusive, 1);
	/* at 100 samples a side, a change from 20 % must reach about 14 pp */
	double want = stats_min_detectable(0.2, 100, 100, res.z_critical, 1) * 100;
	assert_true(fabs(res.inconclusive[0].detectable - want) < 1e-9);
	assert_true(want > 12 && want < 16);
	diff_result_release(&res);
	/* the same shares over 10,000 samples decide it */
	e[0].self[0] = e[0].total[0] = 2000;
	e[0].self[1] = e[0].total[1] = 2100;
	e[1].self[0] = e[1].total[0] = 8000;
	e[1].self[1] = e[1].total[1] = 7900;
	d.total[0] = d.total[1] = 10000;
	assert_int_equal(eval(&d, "self:a>+3pp", &res), DIFF_PASS);
	diff_result_release(&res);
	/* a threshold of 0 asks for any significant growth: nothing to be underpowered for */
	d.total[0] = d.total[1] = 100;
	e[0].self[0] = 20, e[0].self[1] = 21, e[1].self[0] = 80, e[1].self[1] = 79;
	assert_int_equal(eval(&d, "self:a>+0pp", &res), DIFF_PASS);
	diff_result_release(&res);
	/* an empty side decides nothing */
	d.total[1] = 0;
	assert_int_equal(eval(&d, "any:self>+1pp", &res), DIFF_INCONCLUSIVE);
	assert_int_equal(res.ninconclusive, 2);
	diff_result_release(&res);
}

/* Times (ns) are tested over the events they stand for (diff.events), not as if each
 * nanosecond were a sample: 20 % -> 21 % of 10 s is undecided over 100 events a side and the
 * same as the counts 20 -> 21 of 100; over 10,000 events it passes, as the counts do. */
static void test_events(void **state)
{
	struct diff_entry e[] = {
		{ "a", "", { 2000000000, 2100000000 }, { 0 } },
		{ "b", "", { 8000000000, 7900000000 }, { 0 } },
	};
	struct diff_entry c[] = {
		{ "a", "", { 20, 21 }, { 0 } },
		{ "b", "", { 80, 79 }, { 0 } },
	};
	struct diff d, dc;
	struct diff_result res, rc;
	(void)state;

	make_diff(&d, e, 2, 10000000000, 10000000000);
	make_diff(&dc, c, 2, 100, 100);
	d.events[0] = d.events[1] = 100;
	assert_true(diff_events(&d, 0) == 100 && diff_events(&dc, 1) == 100); /* 0: the total */
	assert_int_equal(eval(&d, "self:a>+3pp", &res), DIFF_INCONCLUSIVE);
	assert_int_equal(eval(&dc, "self:a>+3pp", &rc), DIFF_INCONCLUSIVE);
	assert_float_equal(res.inconclusive[0].low, rc.inconclusive[0].low, 1e-9);
	assert_float_equal(res.inconclusive[0].high, rc.inconclusive[0].high, 1e-9);
	assert_float_equal(res.inconclusive[0].detectable, rc.inconclusive[0].detectable, 1e-9);
	assert_float_equal(diff_p_value(&d, &e[0], DIFF_SELF, 1), diff_p_value(&dc, &c[0], DIFF_SELF, 1),
			   1e-12);
	diff_result_release(&res);
	diff_result_release(&rc);
	d.events[0] = d.events[1] = 10000;
	assert_int_equal(eval(&d, "self:a>+3pp", &res), DIFF_PASS);
	diff_result_release(&res);
	/* relative rules too: the same bounds as the counts */
	d.events[0] = d.events[1] = 100;
	assert_int_equal(eval(&d, "self:a>+50%", &res), DIFF_INCONCLUSIVE);
	assert_int_equal(eval(&dc, "self:a>+50%", &rc), DIFF_INCONCLUSIVE);
	assert_float_equal(res.inconclusive[0].high, rc.inconclusive[0].high, 1e-9);
	diff_result_release(&res);
	diff_result_release(&rc);
}

/* xorshift64*: a fixed-seed generator for the simulations. */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

/* Draws n samples over k functions with probabilities p into counts. */
static void draw(uint64_t *seed, const double *p, size_t k, int64_t n, int64_t *counts)
{
	memset(counts, 0, k * sizeof(*counts));
	for (int64_t i = 0; i < n; i++) {
		double u = (rng_next(seed) >> 11) * 0x1.0p-53, c = 0;
		size_t j = 0;
		while (j + 1 < k && u >= (c += p[j]))
			j++;
		counts[j]++;
	}
}

/* Trips of rule text over pairs simulated from shares pb (base) and pn (new), n samples each. */
static int simulate(const char *text, const double *pb, const double *pn, size_t k, int64_t n,
		    int pairs, uint64_t seed)
{
	struct diff_entry e[16];
	int64_t cb[16], cn[16];
	char names[16][4];
	struct diff d;
	struct diff_result res;
	int trips = 0;

	for (int i = 0; i < pairs; i++) {
		draw(&seed, pb, k, n, cb);
		draw(&seed, pn, k, n, cn);
		for (size_t j = 0; j < k; j++) {
			snprintf(names[j], sizeof(names[j]), "f%zu", j);
			e[j] = (struct diff_entry){ names[j], "", { cb[j], cn[j] }, { 0 } };
		}
		make_diff(&d, e, k, n, n);
		trips += eval(&d, text, &res) == DIFF_TRIPPED;
		diff_result_release(&res);
	}
	return trips;
}

/* The test is calibrated: unchanged pairs trip a zero-threshold rule about 1 % of the time
 * (one function) or less (every function, Bonferroni); a 3 pp threshold trips at most as often
 * at 1000 samples and never once samples make 3 pp far larger than the noise; a real change is
 * found. */
static void test_calibration(void **state)
{
	static const double p[] = { 0.2, 0.4, 0.3, 0.05, 0.03, 0.02 };
	static const double q[] = { 0.25, 0.37, 0.28, 0.05, 0.03, 0.02 }; /* f0 +5 pp */
	(void)state;

	int one = simulate("self:f1>+0pp", p, p, 6, 1000, 2000, 1);
	assert_in_range(one, 8, 35); /* 1 % of 2000 is 20 */
	int any = simulate("any:self>+0pp", p, p, 6, 1000, 2000, 2);
	assert_in_range(any, 0, 30); /* without the correction: about 80 */
	assert_in_range(simulate("any:self>+3pp", p, p, 6, 1000, 1000, 3), 0, 15);
	assert_int_equal(simulate("any:self>+3pp", p, p, 6, 20000, 100, 5), 0);
	/* +5 pp at 20 % over 1000 samples: z about 2.7 against 2.33, found in most pairs */
	int found = simulate("self:f0>+0pp", p, q, 6, 1000, 500, 4);
	assert_in_range(found, 300, 500);
}

static const char SB[] = "main;a 50\nmain;p;b 30\nmain;c 10\nmain;p;e 10\n";
static const char SN[] = "main;a 100\nmain;p;b 20\nmain;d 40\nmain;p;e 40\n";

/* Builds the joined stacks of two folded texts. */
static void stacks_of(struct diff_stacks *ds, struct profile p[2], const char *b, const char *n)
{
	struct folded_opts o = { 0 };

	load_folded(&p[0], b);
	load_folded(&p[1], n);
	assert_int_equal(diff_stacks_build(ds, &p[0], &o, &p[1], &o), 0);
}

/* Writes ds as difffolded text into a fresh string. */
static char *folded_text(const struct diff_stacks *ds, bool normalize)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_int_equal(diff_stacks_write_folded(ds, f, normalize), 0);
	fclose(f);
	return buf;
}

static void test_stacks_folded(void **state)
{
	struct diff_stacks ds;
	struct profile p[2];
	(void)state;

	stacks_of(&ds, p, SB, SN);
	assert_int_equal(ds.n, 5);
	assert_int_equal(ds.total[0], 100);
	assert_int_equal(ds.total[1], 200);
	char *t = folded_text(&ds, false);
	assert_string_equal(t, "main;a 50 100\nmain;c 10 0\nmain;d 0 40\nmain;p;b 30 20\n"
			       "main;p;e 10 40\n");
	free(t);
	t = folded_text(&ds, true);
	assert_string_equal(t, "main;a 100 100\nmain;c 20 0\nmain;d 0 40\nmain;p;b 60 20\n"
			       "main;p;e 20 40\n");
	free(t);
	/* scaling rounds half away from zero: 1 of 3 against 2 -> 0.67 -> 1 */
	diff_stacks_release(&ds);
	profile_release(&p[0]);
	profile_release(&p[1]);
	stacks_of(&ds, p, "x 1\ny 2\n", "x 1\ny 1\n");
	assert_int_equal(diff_stacks_value(&ds, 0, DIFF_BASE, true), 1);
	assert_int_equal(diff_stacks_value(&ds, 1, DIFF_BASE, true), 1);
	assert_int_equal(diff_stacks_value(&ds, 1, DIFF_NEW, true), 2); /* 1 * 3 / 2 = 1.5 -> 2 */
	diff_stacks_release(&ds);
	profile_release(&p[0]);
	profile_release(&p[1]);
}

/* What the walk saw of each named frame. */
struct seen {
	struct strtab *names;
	char buf[1024];
	size_t len;
	struct diff_total_colors *tc;
};

/* flame_tree_walk callback: "name:value/base rgb;" for each frame below the root. */
static int note_node(void *ctx, const struct flame_node *n)
{
	struct seen *s = ctx;
	uint8_t rgb[3] = { 0, 0, 0 };

	if (!n->depth)
		return 0;
	const char *name = strtab_get(s->names, n->name);
	if (s->tc)
		assert_int_equal(diff_total_color(s->tc, n, name, rgb), strcmp(name, "-") != 0);
	s->len += snprintf(s->buf + s->len, sizeof(s->buf) - s->len, "%s%s:%lld/%lld %d,%d,%d;",
			   name, n->kind == FRAME_KERNEL ? "_[k]" : "", (long long)n->value,
			   (long long)n->base, rgb[0], rgb[1], rgb[2]);
	return 0;
}

/* Walks a tree of ds and returns the frames it saw. */
static void walk_tree(const struct diff_stacks *ds, bool normalize, bool negate, bool total,
		      struct seen *s)
{
	struct strtab names;
	struct flame_tree t;
	struct diff_total_colors tc;

	assert_int_equal(strtab_init(&names), 0);
	flame_tree_init(&t, &names);
	assert_int_equal(diff_stacks_tree(ds, &t, normalize, negate, false), 0);
	memset(s, 0, sizeof(*s));
	s->names = &names;
	if (total) {
		assert_int_equal(diff_total_colors_init(&tc, &t, negate), 0);
		s->tc = &tc;
	}
	assert_int_equal(flame_tree_walk(&t, note_node, s), 0);
	flame_tree_release(&t);
	strtab_release(&names);
}

static void test_stacks_tree(void **state)
{
	struct diff_stacks ds;
	struct profile p[2];
	struct seen s;
	(void)state;

	stacks_of(&ds, p, SB, SN);
	walk_tree(&ds, true, false, true, &s);
	/* widths from NEW, BASE scaled to NEW's total (x2); colored by total change, max 40 */
	assert_string_equal(s.buf, "a:100/100 255,255,255;c:0/20 105,105,255;d:40/0 255,0,0;"
				   "b:20/60 0,0,255;e:40/20 255,105,105;p:60/80 105,105,255;"
				   "main:200/200 255,255,255;");
	walk_tree(&ds, false, true, false, &s);
	/* negate: widths from BASE, raw NEW as the base values */
	assert_string_equal(s.buf, "a:50/100 0,0,0;c:10/0 0,0,0;d:0/40 0,0,0;b:30/20 0,0,0;"
				   "e:10/40 0,0,0;p:40/60 0,0,0;main:100/200 0,0,0;");
	walk_tree(&ds, true, true, true, &s);
	/* negate, normalized: NEW scaled to BASE's total; red still means grew */
	assert_string_equal(s.buf, "a:50/50 255,255,255;c:10/0 105,105,255;d:0/20 255,0,0;"
				   "b:30/10 0,0,255;e:10/20 255,105,105;p:40/30 105,105,255;"
				   "main:100/100 255,255,255;");
	diff_stacks_release(&ds);
	profile_release(&p[0]);
	profile_release(&p[1]);
	/* "-" separators keep the writer's gray */
	stacks_of(&ds, p, "main;-;x 5\n", "main;-;x 10\n");
	walk_tree(&ds, false, false, true, &s);
	assert_string_equal(s.buf, "x:10/5 255,0,0;-:10/5 0,0,0;main:10/5 255,0,0;");
	diff_stacks_release(&ds);
	profile_release(&p[0]);
	profile_release(&p[1]);
	/* suffixes become kinds */
	stacks_of(&ds, p, "main;read;sys_read_[k] 5\n", "main;read;sys_read_[k] 5\n");
	walk_tree(&ds, false, false, false, &s);
	assert_string_equal(s.buf, "sys_read_[k]:5/5 0,0,0;read:5/5 0,0,0;main:5/5 0,0,0;");
	diff_stacks_release(&ds);
	profile_release(&p[0]);
	profile_release(&p[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_join),
		cmocka_unit_test(test_join_unknown_module),
		cmocka_unit_test(test_join_unknown_module_largest),
		cmocka_unit_test(test_join_modules),
		cmocka_unit_test(test_main_module),
		cmocka_unit_test(test_join_builds),
		cmocka_unit_test(test_join_builds_by_module),
		cmocka_unit_test(test_sort),
		cmocka_unit_test(test_rule_parse),
		cmocka_unit_test(test_rule_eval),
		cmocka_unit_test(test_shrunk_decides),
		cmocka_unit_test(test_bonferroni),
		cmocka_unit_test(test_too_few_samples),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_calibration),
		cmocka_unit_test(test_stacks_folded),
		cmocka_unit_test(test_stacks_tree),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
