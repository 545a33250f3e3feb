/* Unit tests for lib/analyze/filter: pprof's focus, ignore and show_from (inlined lines, the
 * mapping's file, recursion), the thread and module filters, a runtime's view, the counts, bad
 * expressions, and filtering a window's samples. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/filter.h"
#include "model/profile.h"

/* A profile with four mappings (app, libc, the kernel's, JavaScript), one type "samples". */
struct fixture {
	struct profile p;
	uint64_t app, libc, kernel, js;
};

static void fixture_init(struct fixture *fx)
{
	assert_int_equal(profile_init(&fx->p), 0);
	assert_int_equal(profile_add_sample_type(&fx->p, "samples", "count"), 0);
	fx->app = profile_add_mapping(&fx->p, 0x1000, 0x2000, 0, "/usr/bin/app", "");
	fx->libc = profile_add_mapping(&fx->p, 0x7000, 0x8000, 0, "/lib/x86_64-linux-gnu/libc.so.6", "");
	fx->kernel = profile_add_mapping(&fx->p, 0, 0, 0, "[kernel.kallsyms]", "");
	fx->js = profile_add_mapping(&fx->p, 0, 0, 0, "[javascript]", "");
}

/* Location of one frame: "name" (app, file app.c), "c:name" (libc), "k:name" (kernel),
 * "j:name" (JavaScript), "outer+inner" (inner inlined into outer, app). */
static uint64_t frame_loc(struct fixture *fx, const char *spec)
{
	const char *plus = strchr(spec, '+');
	char buf[64];

	if (plus) {
		snprintf(buf, sizeof(buf), "%.*s", (int)(plus - spec), spec);
		struct profile_line lines[2] = {
			{ profile_function(&fx->p, plus + 1, NULL, "app.c", 0), 7 },
			{ profile_function(&fx->p, buf, NULL, "app.c", 0), 30 },
		};
		return profile_add_location(&fx->p, fx->app, 0x1100, lines, 2);
	}
	uint64_t m = fx->app;
	enum frame_kind kind = FRAME_USER;
	const char *file = "app.c";
	if (spec[0] && spec[1] == ':') {
		m = spec[0] == 'c' ? fx->libc : spec[0] == 'k' ? fx->kernel : fx->js;
		kind = spec[0] == 'k' ? FRAME_KERNEL : FRAME_USER;
		file = spec[0] == 'j' ? "split.js" : "";
		spec += 2;
	}
	int64_t fn = profile_function(&fx->p, spec, NULL, file, 0);
	assert_true(fn > 0);
	return profile_simple_location(&fx->p, m, fn, kind);
}

/* Adds a sample "root;...;leaf" of value v, with a "thread" label when thread is set. */
static void add(struct fixture *fx, const char *stack, int64_t v, const char *thread)
{
	uint64_t locs[32], tmp;
	uint32_t n = 0;
	char *copy = strdup(stack), *save = NULL;
	struct profile_label l = { (uint32_t)profile_intern(&fx->p, "thread"),
				   thread ? (uint32_t)profile_intern(&fx->p, thread) : 0, 0, 0 };

	for (char *t = strtok_r(copy, ";", &save); t; t = strtok_r(NULL, ";", &save))
		locs[n++] = frame_loc(fx, t);
	free(copy);
	for (uint32_t i = 0; i < n / 2; i++) /* leaf first */
		tmp = locs[i], locs[i] = locs[n - 1 - i], locs[n - 1 - i] = tmp;
	assert_int_equal(profile_add_sample(&fx->p, locs, n, &v, &l, thread ? 1 : 0), 0);
}

/* qsort callback over strings. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* p's stacks as sorted "root;...;leaf v" lines (inline lines as frames), joined by '\n'. */
static char *stacks(struct profile *p)
{
	char **lines = calloc(p->nsamples + 1, sizeof(*lines)), *out = NULL;
	struct profile_frame *fr = NULL;
	size_t cap = 0, len = 0;
	FILE *m = open_memstream(&out, &len);

	for (uint64_t i = 0; i < p->nsamples; i++) {
		int64_t n = profile_frames(p, &p->samples[i], &fr, &cap);
		char *s = NULL;
		size_t sl = 0;
		FILE *f = open_memstream(&s, &sl);
		for (int64_t j = 0; j < n; j++)
			fprintf(f, "%s%s", j ? ";" : "", profile_str(p, fr[j].name));
		fprintf(f, " %lld", (long long)p->samples[i].values[0]);
		fclose(f);
		lines[i] = s;
	}
	qsort(lines, p->nsamples, sizeof(*lines), cmp_str);
	for (uint64_t i = 0; i < p->nsamples; i++) {
		fprintf(m, "%s%s", i ? "\n" : "", lines[i]);
		free(lines[i]);
	}
	fclose(m);
	free(lines);
	free(fr);
	return out;
}

/* The fixture's profile: parse and render under main, a libc allocation, a thread each. */
static void standard(struct fixture *fx)
{
	fixture_init(fx);
	add(fx, "main;parse;lex", 30, "worker-1");
	add(fx, "main;parse;alloc;c:malloc", 10, "worker-1");
	add(fx, "main;render;draw;k:sys_write", 40, "main");
	add(fx, "main;render;alloc;c:malloc", 20, "worker-2");
}

/* Filters fx's profile with field set to re (and runtime r); checks the stacks and counts. */
static void expect(struct fixture *fx, enum filter_field field, const char *re,
		   enum frame_runtime r, const char *want, int64_t kept, int64_t no_runtime)
{
	struct filter f;
	struct filter_stats st;
	struct profile out;
	char why[64];
	int64_t total = 0;

	for (uint64_t i = 0; i < fx->p.nsamples; i++)
		total += fx->p.samples[i].values[0];
	filter_init(&f);
	if (re)
		assert_int_equal(filter_set(&f, field, re, why, sizeof(why)), 0);
	f.runtime = r;
	assert_true(filter_active(&f));
	assert_int_equal(profile_init(&out), 0);
	assert_int_equal(filter_profile(&out, &fx->p, NULL, 0, &f, 0, &st), 0);
	char *got = stacks(&out);
	assert_string_equal(got, want);
	assert_int_equal(st.total, total);
	assert_int_equal(st.kept, kept);
	assert_int_equal(st.no_runtime, no_runtime);
	free(got);
	profile_release(&out);
	filter_release(&f);
}

/* --focus keeps whole stacks through a matching function; --ignore drops them. */
static void test_focus_ignore(void **state)
{
	struct fixture fx;

	(void)state;
	standard(&fx);
	expect(&fx, FILTER_FOCUS, "^alloc$", 0,
	       "main;parse;alloc;malloc 10\nmain;render;alloc;malloc 20", 30, 0);
	expect(&fx, FILTER_FOCUS, "ars", 0, /* unanchored, as pprof's */
	       "main;parse;alloc;malloc 10\nmain;parse;lex 30", 40, 0);
	expect(&fx, FILTER_IGNORE, "^alloc$", 0,
	       "main;parse;lex 30\nmain;render;draw;sys_write 40", 70, 0);
	/* a frame matches by its mapping's file too (pprof's matchesName) */
	expect(&fx, FILTER_FOCUS, "libc\\.so", 0,
	       "main;parse;alloc;malloc 10\nmain;render;alloc;malloc 20", 30, 0);
	expect(&fx, FILTER_FOCUS, "nothing", 0, "", 0, 0);
	profile_release(&fx.p);
}

/* A sample without frames has no focused frame: --ignore drops it too, as pprof does. */
static void test_empty_stack(void **state)
{
	struct fixture fx;

	(void)state;
	fixture_init(&fx);
	add(&fx, "main;work", 70, NULL);
	add(&fx, "", 30, NULL);
	expect(&fx, FILTER_IGNORE, "nothing", 0, "main;work 70", 70, 0);
	expect(&fx, FILTER_FOCUS, ".", 0, "main;work 70", 70, 0);
	profile_release(&fx.p);
}

/* --show-from drops the callers of the outermost match and the stacks without one. */
static void test_show_from(void **state)
{
	struct fixture fx;

	(void)state;
	standard(&fx);
	add(&fx, "main;alloc;render;alloc;c:malloc", 5, NULL); /* recursion: the outermost wins */
	expect(&fx, FILTER_SHOW_FROM, "^alloc$", 0,
	       "alloc;malloc 10\nalloc;malloc 20\nalloc;render;alloc;malloc 5", 35, 0);
	profile_release(&fx.p);
}

/* show_from on an inlined line: the lines of that location outside it go (pprof cuts Line). */
static void test_show_from_inline(void **state)
{
	struct fixture fx;

	(void)state;
	fixture_init(&fx);
	add(&fx, "main;outer+inner;c:memcpy", 60, NULL);
	add(&fx, "main;other", 40, NULL);
	expect(&fx, FILTER_SHOW_FROM, "^inner$", 0, "inner;memcpy 60", 60, 0);
	/* the outer line matching keeps the location whole */
	expect(&fx, FILTER_SHOW_FROM, "^outer$", 0, "outer;inner;memcpy 60", 60, 0);
	/* a mapping's file matches too */
	expect(&fx, FILTER_SHOW_FROM, "libc\\.so", 0, "memcpy 60", 60, 0);
	profile_release(&fx.p);
}

/* --thread matches the "thread" label (a sample without one never matches); --module the
 * module's base name, as the table shows it. */
static void test_thread_module(void **state)
{
	struct fixture fx;

	(void)state;
	standard(&fx);
	add(&fx, "main;idle", 100, NULL);
	expect(&fx, FILTER_THREAD, "^worker-", 0,
	       "main;parse;alloc;malloc 10\nmain;parse;lex 30\nmain;render;alloc;malloc 20", 60, 0);
	expect(&fx, FILTER_MODULE, "^libc\\.so", 0,
	       "main;parse;alloc;malloc 10\nmain;render;alloc;malloc 20", 30, 0);
	expect(&fx, FILTER_MODULE, "^\\[kernel", 0, "main;render;draw;sys_write 40", 40, 0);
	profile_release(&fx.p);
}

/* Filters fx's profile with the tag field set to spec; checks the stacks and the kept count. */
static void expect_tag(struct fixture *fx, enum filter_field field, const char *spec,
		       const char *want, int64_t kept)
{
	struct filter f;
	struct filter_stats st;
	struct profile out;
	char why[64];

	filter_init(&f);
	assert_int_equal(filter_set_tag(&f, field, spec, why, sizeof(why)), 0);
	assert_true(filter_active(&f));
	assert_int_equal(profile_init(&out), 0);
	assert_int_equal(filter_profile(&out, &fx->p, NULL, 0, &f, 0, &st), 0);
	char *got = stacks(&out);
	assert_string_equal(got, want);
	assert_int_equal(st.kept, kept);
	free(got);
	profile_release(&out);
	filter_release(&f);
}

/* --tag-focus and --tag-ignore KEY=REGEX: pprof's -tagfocus/-tagignore over string labels (the
 * thread label here), commas as alternatives, a sample without the key dropped by focus and kept
 * by ignore, a numeric label matched as its decimal text, and the bad specs. */
static void test_tags(void **state)
{
	struct fixture fx;
	struct filter f;
	char why[64];

	(void)state;
	standard(&fx);
	add(&fx, "main;idle", 100, NULL);
	struct profile_label pid = { (uint32_t)profile_intern(&fx.p, "pid"), 0, 4242, 0 };
	uint64_t loc = frame_loc(&fx, "numbered");
	int64_t v = 5;
	assert_int_equal(profile_add_sample(&fx.p, &loc, 1, &v, &pid, 1), 0);
	expect_tag(&fx, FILTER_TAG_FOCUS, "thread=^worker-1$",
		   "main;parse;alloc;malloc 10\nmain;parse;lex 30", 40);
	expect_tag(&fx, FILTER_TAG_FOCUS, "thread=-2$,^main",
		   "main;render;alloc;malloc 20\nmain;render;draw;sys_write 40", 60);
	expect_tag(&fx, FILTER_TAG_IGNORE, "thread=worker",
		   "main;idle 100\nmain;render;draw;sys_write 40\nnumbered 5", 145);
	expect_tag(&fx, FILTER_TAG_FOCUS, "pid=^4242$", "numbered 5", 5);
	expect_tag(&fx, FILTER_TAG_FOCUS, "thread=a=b", "", 0); /* the key ends at the first = */
	filter_init(&f);
	assert_int_equal(filter_set_tag(&f, FILTER_TAG_FOCUS, "thread", why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "expected KEY=REGEX");
	assert_int_equal(filter_set_tag(&f, FILTER_TAG_FOCUS, "=x", why, sizeof(why)), -EINVAL);
	assert_int_equal(filter_set_tag(&f, FILTER_TAG_IGNORE, "k=a[", why, sizeof(why)), -EINVAL);
	assert_false(filter_active(&f));
	filter_release(&f);
	profile_release(&fx.p);
}

/* --runtime: only the runtime's frames, self at the innermost; the rest counted apart. */
static void test_runtime(void **state)
{
	struct fixture fx;

	(void)state;
	fixture_init(&fx);
	add(&fx, "main;uv_run;j:run;j:fib;Builtins_Call;k:sys_write", 50, NULL);
	add(&fx, "main;uv_run;j:run;v8_gc", 30, NULL);
	add(&fx, "main;uv_run;epoll_wait", 20, NULL);
	expect(&fx, FILTER_FOCUS, NULL, FRAME_JAVASCRIPT, "run 30\nrun;fib 50", 80, 20);
	/* after the expressions: what they dropped is not counted as without the runtime */
	expect(&fx, FILTER_FOCUS, "fib|epoll", FRAME_JAVASCRIPT, "run;fib 50", 50, 20);
	expect(&fx, FILTER_IGNORE, "epoll", FRAME_JAVASCRIPT, "run 30\nrun;fib 50", 80, 0);
	profile_release(&fx.p);
}

/* A bad expression is -EINVAL with regerror's text; an empty filter is not active. */
static void test_bad_regex(void **state)
{
	struct filter f;
	char why[64] = "";

	(void)state;
	filter_init(&f);
	assert_false(filter_active(&f));
	assert_int_equal(filter_set(&f, FILTER_FOCUS, "(", why, sizeof(why)), -EINVAL);
	assert_true(*why);
	assert_false(filter_active(&f));
	assert_int_equal(filter_set(&f, FILTER_IGNORE, "a[", why, sizeof(why)), -EINVAL);
	assert_int_equal(filter_set(&f, FILTER_IGNORE, "a|b", why, sizeof(why)), 0);
	assert_int_equal(filter_set(&f, FILTER_IGNORE, "c", why, sizeof(why)), 0); /* replaces */
	assert_true(filter_active(&f));
	filter_release(&f);
}

/* Samples given apart (a window's, over the profile's ids) are filtered, not the profile's;
 * filter_apply replaces the profile. */
static void test_samples_and_apply(void **state)
{
	struct fixture fx;
	struct filter f;
	struct profile out;
	struct filter_stats st;

	(void)state;
	standard(&fx);
	filter_init(&f);
	assert_int_equal(filter_set(&f, FILTER_FOCUS, "malloc", NULL, 0), 0);
	assert_int_equal(profile_init(&out), 0);
	assert_int_equal(filter_profile(&out, &fx.p, &fx.p.samples[2], 2, &f, 0, &st), 0);
	char *got = stacks(&out);
	assert_string_equal(got, "main;render;alloc;malloc 20");
	assert_int_equal(st.total, 60);
	free(got);
	profile_release(&out);
	assert_int_equal(filter_apply(&fx.p, &f, 0, &st), 0);
	got = stacks(&fx.p);
	assert_string_equal(got, "main;parse;alloc;malloc 10\nmain;render;alloc;malloc 20");
	assert_int_equal(fx.p.nsample_types, 1);
	free(got);
	filter_release(&f);
	profile_release(&fx.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_focus_ignore),
		cmocka_unit_test(test_empty_stack),
		cmocka_unit_test(test_show_from),
		cmocka_unit_test(test_show_from_inline),
		cmocka_unit_test(test_thread_module),
		cmocka_unit_test(test_tags),
		cmocka_unit_test(test_runtime),
		cmocka_unit_test(test_bad_regex),
		cmocka_unit_test(test_samples_and_apply),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
