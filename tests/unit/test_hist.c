/* Unit tests for lib/analyze/hist: self and total values, recursion, filters, kernel and inline frames,
 * grouping by module and line, sorting, and the filtered profile copy. */
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

#include "analyze/hist.h"
#include "model/profile.h"

/* A profile with three mappings (app, libc, kernel) and one sample type "samples". */
struct fixture {
	struct profile p;
	uint64_t app, libc, kernel;
};

static void fixture_init(struct fixture *fx)
{
	assert_int_equal(profile_init(&fx->p), 0);
	assert_int_equal(profile_add_sample_type(&fx->p, "samples", "count"), 0);
	fx->app = profile_add_mapping(&fx->p, 0x1000, 0x2000, 0, "/usr/bin/app", "");
	fx->libc = profile_add_mapping(&fx->p, 0x7000, 0x8000, 0, "/lib/x86_64-linux-gnu/libc.so.6", "");
	fx->kernel = profile_add_mapping(&fx->p, 0, 0, 0, "[kernel.kallsyms]", "");
	assert_true(fx->app == 1 && fx->libc == 2 && fx->kernel == 3);
}

/* Location id for one frame spec: "name" (app), "c:name" (libc), "k:name" (kernel),
 * "K:name" (kernel, no mapping), "outer+inner" (inner inlined into outer, app), and "name@N"
 * for a line number N in app.c. */
static uint64_t frame_loc(struct fixture *fx, const char *spec)
{
	char buf[128];
	const char *plus = strchr(spec, '+'), *at = strchr(spec, '@');

	if (plus) {
		snprintf(buf, sizeof(buf), "%.*s", (int)(plus - spec), spec);
		struct profile_line lines[2] = {
			{ profile_function(&fx->p, plus + 1, NULL, "app.c", 0), 7 },
			{ profile_function(&fx->p, buf, NULL, "app.c", 0), 30 },
		};
		return profile_add_location(&fx->p, fx->app, 0x1100, lines, 2);
	}
	if (at) {
		snprintf(buf, sizeof(buf), "%.*s", (int)(at - spec), spec);
		struct profile_line line = { profile_function(&fx->p, buf, NULL, "/src/app.c", 0),
					     atoi(at + 1) };
		return profile_add_location(&fx->p, fx->app, 0x1200, &line, 1);
	}
	uint64_t m = fx->app;
	enum frame_kind kind = FRAME_USER;
	if (spec[0] && spec[1] == ':') {
		m = spec[0] == 'c' ? fx->libc : spec[0] == 'k' ? fx->kernel : 0;
		kind = spec[0] == 'c' ? FRAME_USER : FRAME_KERNEL;
		spec += 2;
	}
	int64_t fn = profile_function(&fx->p, spec, NULL, "", 0);
	assert_true(fn > 0);
	return profile_simple_location(&fx->p, m, fn, kind);
}

/* Adds a sample "root;...;leaf" with value v and optional pid (>= 0) and comm labels. */
static void add(struct fixture *fx, const char *stack, int64_t v, int64_t pid, const char *comm)
{
	uint64_t locs[32];
	uint32_t n = 0;
	char *copy = strdup(stack), *save = NULL;
	struct profile_label labels[2];
	uint32_t nl = 0;

	for (char *t = strtok_r(copy, ";", &save); t; t = strtok_r(NULL, ";", &save))
		locs[n++] = frame_loc(fx, t);
	free(copy);
	for (uint32_t i = 0; i < n / 2; i++) { /* leaf first */
		uint64_t x = locs[i];
		locs[i] = locs[n - 1 - i];
		locs[n - 1 - i] = x;
	}
	if (pid >= 0)
		labels[nl++] = (struct profile_label){ profile_intern(&fx->p, "pid"), 0, pid, 0 };
	if (comm)
		labels[nl++] = (struct profile_label){ profile_intern(&fx->p, "comm"),
						       profile_intern(&fx->p, comm), 0, 0 };
	assert_int_equal(profile_add_sample(&fx->p, locs, n, &v, labels, nl), 0);
}

/* Asserts the entry (name, module) exists with these values. */
static void expect(const struct hist *h, const char *name, const char *module, int64_t self,
		   int64_t total)
{
	const struct hist_entry *e = hist_find(h, name, module);

	if (!e)
		fail_msg("no entry (%s, %s)", name, module);
	assert_string_equal(e->name, name);
	assert_string_equal(e->module, module);
	assert_int_equal(e->self, self);
	assert_int_equal(e->total, total);
}

static void test_self_and_total(void **state)
{
	struct fixture fx;
	struct hist h;
	struct hist_opts o = { 0 };

	fixture_init(&fx);
	add(&fx, "main;a;b", 5, -1, NULL);
	add(&fx, "main;a", 3, -1, NULL);
	add(&fx, "main;c;c:memcpy", 2, -1, NULL);
	assert_int_equal(hist_build(&h, &fx.p, &o), 0);
	assert_int_equal(h.total, 10);
	assert_int_equal(h.all_total, 10);
	assert_int_equal(h.nsamples, 3);
	assert_int_equal(h.nprocesses, 0);
	assert_int_equal(h.n, 5);
	expect(&h, "main", "app", 0, 10);
	expect(&h, "a", "app", 3, 8);
	expect(&h, "b", "app", 5, 5);
	expect(&h, "c", "app", 0, 2);
	expect(&h, "memcpy", "libc.so.6", 2, 2);
	assert_null(hist_find(&h, "memcpy", "app"));
	hist_release(&h);
	profile_release(&fx.p);
}

static void test_recursion_counted_once(void **state)
{
	struct fixture fx;
	struct hist h;
	struct hist_opts o = { 0 };

	fixture_init(&fx);
	add(&fx, "main;f;f;f", 4, -1, NULL);
	add(&fx, "main;f;g;f", 3, -1, NULL);
	add(&fx, "main;f", 1, -1, NULL);
	assert_int_equal(hist_build(&h, &fx.p, &o), 0);
	assert_int_equal(h.total, 8);
	expect(&h, "f", "app", 8, 8);
	expect(&h, "g", "app", 0, 3);
	expect(&h, "main", "app", 0, 8);
	hist_release(&h);
	profile_release(&fx.p);
}

/* Samples for the filter tests: pids 1, 2, 3 and one without labels. */
static void add_processes(struct fixture *fx)
{
	add(fx, "main;one", 3, 1, "alpha");
	add(fx, "main;two", 4, 2, "beta");
	add(fx, "main;three", 5, 3, "alpha");
	add(fx, "main;three", 6, 3, "alpha2");
	add(fx, "main;none", 7, -1, NULL);
}

static void test_pid_filter(void **state)
{
	struct fixture fx;
	struct hist h;
	int64_t pids[] = { 1, 3 }, one[] = { 2 }, missing[] = { 99 };
	struct hist_opts o = { .pids = pids, .npids = 2 };

	fixture_init(&fx);
	add_processes(&fx);
	assert_int_equal(hist_build(&h, &fx.p, &o), 0);
	assert_int_equal(h.total, 14);
	assert_int_equal(h.all_total, 25);
	assert_int_equal(h.nprocesses, 2);
	expect(&h, "one", "app", 3, 3);
	expect(&h, "three", "app", 11, 11);
	assert_null(hist_find(&h, "two", "app"));
	assert_null(hist_find(&h, "none", "app"));
	hist_release(&h);

	o = (struct hist_opts){ .pids = one, .npids = 1 };
	assert_int_equal(hist_build(&h, &fx.p, &o), 0);
	assert_int_equal(h.total, 4);
	assert_int_equal(h.n, 2);
	expect(&h, "two", "app", 4, 4);
	hist_release(&h);

	o = (struct hist_opts){ .pids = missing, .npids = 1 };
	assert_int_equal(hist_build(&h, &fx.p, &o), 0);
	assert_int_equal(h.total, 0);
	assert_int_equal(h.n, 0);
	hist_release(&h);
	profile_release(&fx.p);
}

static void test_comm_filter(void **state)
{
	struct fixture fx;
	struct hist h;
	int64_t pids[] = { 1, 2 };
	struct hist_opts o = { .comm = "alpha" };

	fixture_init(&fx);
	add_processes(&fx);
	assert_int_equal(hist_build(&h, &fx.p, &o), 0);
	assert_int_equal(h.total, 8); /* exact match: "alpha2" is not "alpha" */
	assert_int_equal(h.nprocesses, 2);
	expect(&h, "one", "app", 3, 3);
	expect(&h, "three", "app", 5, 5);
	hist_release(&h);

	o.pids = pids; /* both filters must pass */
	o.npids = 2;
	assert_int_equal(hist_build(&h, &fx.p, &o), 0);
	assert_int_equal(h.total, 3);
	assert_int_equal(h.nprocesses, 1);
	hist_release(&h);
	profile_release(&fx.p);
}

static void test_all_processes_counted(void **state)
{
	struct fixture fx;
	struct hist h;
	struct hist_opts o = { 0 };

	fixture_init(&fx);
	add_processes(&fx);
	assert_int_equal(hist_build(&h, &fx.p, &o), 0);
	assert_int_equal(h.total, 25);
	assert_int_equal(h.nsamples, 5);
	assert_int_equal(h.nprocesses, 3);
	hist_release(&h);
	profile_release(&fx.p);
}

/* Kernel frames below user ones, a kernel-only sample and a plain user sample. */
static void add_kernel_mix(struct fixture *fx)
{
	add(fx, "main;c:read;k:sys_read;k:vfs_read", 6, -1, NULL);
	add(fx, "k:worker;K:idle", 4, -1, NULL);
	add(fx, "main;b", 2, -1, NULL);
}

static void test_kernel_frames_kept(void **state)
{
	struct fixture fx;
	struct hist h;
	struct hist_opts o = { 0 };

	fixture_init(&fx);
	add_kernel_mix(&fx);
	assert_int_equal(hist_build(&h, &fx.p, &o), 0);
	assert_int_equal(h.total, 12);
	expect(&h, "vfs_read", "[kernel.kallsyms]", 6, 6);
	expect(&h, "sys_read", "[kernel.kallsyms]", 0, 6);
	expect(&h, "idle", "[kernel.kallsyms]", 4, 4); /* no mapping: still the kernel */
	expect(&h, "read", "libc.so.6", 0, 6);
	assert_int_equal(hist_find(&h, "idle", "[kernel.kallsyms]")->kind, FRAME_KERNEL);
	hist_release(&h);
	profile_release(&fx.p);
}

static void test_no_kernel(void **state)
{
	struct fixture fx;
	struct hist h;
	struct hist_opts o = { .no_kernel = true };

	fixture_init(&fx);
	add_kernel_mix(&fx);
	assert_int_equal(hist_build(&h, &fx.p, &o), 0);
	assert_int_equal(h.total, 8);
	assert_int_equal(h.all_total, 12);
	assert_int_equal(h.nsamples, 2);
	assert_int_equal(h.n, 3);
	expect(&h, "read", "libc.so.6", 6, 6);
	expect(&h, "b", "app", 2, 2);
	expect(&h, "main", "app", 0, 8);
	assert_null(hist_find(&h, "vfs_read", "[kernel.kallsyms]"));
	assert_null(hist_find(&h, "idle", "[kernel.kallsyms]"));
	hist_release(&h);
	profile_release(&fx.p);
}

static void test_inline_folded(void **state)
{
	struct fixture fx;
	struct hist h;
	struct hist_opts o = { 0 };

	fixture_init(&fx);
	add(&fx, "main;caller+inl", 5, -1, NULL);
	add(&fx, "main;caller+inl;leaf", 2, -1, NULL);
	assert_int_equal(hist_build(&h, &fx.p, &o), 0);
	assert_int_equal(h.n, 3);
	expect(&h, "caller", "app", 5, 7);
	expect(&h, "leaf", "app", 2, 2);
	assert_null(hist_find(&h, "inl", "app"));
	hist_release(&h);

	o.inline_frames = true;
	assert_int_equal(hist_build(&h, &fx.p, &o), 0);
	assert_int_equal(h.n, 4);
	expect(&h, "caller", "app", 0, 7);
	expect(&h, "inl", "app", 5, 7);
	expect(&h, "leaf", "app", 2, 2);
	assert_int_equal(hist_find(&h, "inl", "app")->kind, FRAME_INLINE);
	assert_int_equal(hist_find(&h, "caller", "app")->kind, FRAME_USER);
	hist_release(&h);
	profile_release(&fx.p);
}

/* Names of the sorted entries joined by spaces, "name/module" when module is not "app". */
static void expect_order(const struct hist *h, const char *want)
{
	char got[512] = "";
	size_t len = 0;

	for (size_t i = 0; i < h->n; i++)
		len += snprintf(got + len, sizeof(got) - len, "%s%s%s%s", i ? " " : "",
				h->entries[i].name, strcmp(h->entries[i].module, "app") ? "/" : "",
				strcmp(h->entries[i].module, "app") ? h->entries[i].module : "");
	assert_string_equal(got, want);
}

static void test_sort_ties_deterministic(void **state)
{
	struct fixture fx;
	struct hist h;
	struct hist_opts o = { 0 };

	fixture_init(&fx);
	add(&fx, "main;zeta", 3, -1, NULL);
	add(&fx, "main;c:zeta", 3, -1, NULL);
	add(&fx, "main;alpha", 3, -1, NULL);
	add(&fx, "main;mid;beta", 3, -1, NULL);
	add(&fx, "main;mid", 1, -1, NULL);
	add(&fx, "main;top", 9, -1, NULL);
	assert_int_equal(hist_build(&h, &fx.p, &o), 0);
	hist_sort(&h, HIST_SORT_SELF);
	expect_order(&h, "top alpha beta zeta zeta/libc.so.6 mid main");
	/* the lookup table follows the new order */
	expect(&h, "zeta", "libc.so.6", 3, 3);
	expect(&h, "mid", "app", 1, 4);
	hist_sort(&h, HIST_SORT_TOTAL);
	expect_order(&h, "main top mid alpha beta zeta zeta/libc.so.6");
	expect(&h, "main", "app", 0, 22);
	hist_release(&h);
	profile_release(&fx.p);
}

static void test_by_module(void **state)
{
	struct fixture fx;
	struct hist h;
	struct hist_opts o = { .by = HIST_BY_MODULE };

	fixture_init(&fx);
	add_kernel_mix(&fx);
	assert_int_equal(hist_build(&h, &fx.p, &o), 0);
	assert_int_equal(h.n, 3);
	expect(&h, "app", "app", 2, 8);
	expect(&h, "libc.so.6", "libc.so.6", 0, 6);
	expect(&h, "[kernel.kallsyms]", "[kernel.kallsyms]", 10, 10);
	hist_release(&h);
	profile_release(&fx.p);
}

static void test_by_line(void **state)
{
	struct fixture fx;
	struct hist h;
	struct hist_opts o = { .by = HIST_BY_LINE };

	fixture_init(&fx);
	add(&fx, "main@10;work@20", 4, -1, NULL);
	add(&fx, "main@10;work@21", 1, -1, NULL);
	add(&fx, "main@12;caller+inl", 2, -1, NULL);
	add(&fx, "main@12;nofile", 3, -1, NULL);
	assert_int_equal(hist_build(&h, &fx.p, &o), 0);
	expect(&h, "main (app.c:10)", "app", 0, 5);
	expect(&h, "main (app.c:12)", "app", 0, 5);
	expect(&h, "work (app.c:20)", "app", 4, 4);
	expect(&h, "work (app.c:21)", "app", 1, 1);
	expect(&h, "caller (app.c:30)", "app", 2, 2); /* the call site of the inlined code */
	expect(&h, "nofile", "app", 3, 3);
	hist_release(&h);

	o.inline_frames = true;
	assert_int_equal(hist_build(&h, &fx.p, &o), 0);
	expect(&h, "inl (app.c:7)", "app", 2, 2);
	expect(&h, "caller (app.c:30)", "app", 0, 2);
	hist_release(&h);
	profile_release(&fx.p);
}

static void test_sample_type(void **state)
{
	struct profile p;
	struct hist h;
	struct hist_opts o = { 0 };
	int64_t v[2] = { 3, 3000 };

	assert_int_equal(profile_init(&p), 0);
	assert_int_equal(profile_add_sample_type(&p, "cpu", "nanoseconds"), 0);
	assert_int_equal(profile_add_sample_type(&p, "samples", "count"), 1);
	uint64_t loc = profile_simple_location(&p, 0, profile_function(&p, "f", NULL, "", 0), FRAME_USER);
	/* values are (cpu, samples) in type order */
	v[0] = 3000, v[1] = 3;
	assert_int_equal(profile_add_sample(&p, &loc, 1, v, NULL, 0), 0);
	assert_int_equal(hist_build(&h, &p, &o), 0);
	assert_int_equal(h.value_index, 1);
	assert_int_equal(h.total, 3);
	expect(&h, "f", "", 3, 3);
	hist_release(&h);

	o.sample_type = "cpu";
	assert_int_equal(hist_build(&h, &p, &o), 0);
	assert_int_equal(h.value_index, 0);
	assert_int_equal(h.total, 3000);
	hist_release(&h);

	o.sample_type = "wall";
	assert_int_equal(hist_build(&h, &p, &o), -EINVAL);
	hist_release(&h);
	profile_release(&p);
}

/* Adds a one-frame sample of function name with values v (one per type). */
static void add_one(struct profile *p, const char *name, const int64_t *v)
{
	uint64_t loc = profile_simple_location(p, 0, profile_function(p, name, NULL, "", 0),
					       FRAME_USER);

	assert_int_equal(profile_add_sample(p, &loc, 1, v, NULL, 0), 0);
}

/* A profile of types t (name, unit pairs; n of them) with the samples of f, g and z. */
static void types_profile(struct profile *p, const char *const *t, int n, const int64_t *f,
			  const int64_t *g, const int64_t *z)
{
	assert_int_equal(profile_init(p), 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(profile_add_sample_type(p, t[2 * i], t[2 * i + 1]), i);
	add_one(p, "f", f);
	add_one(p, "g", g);
	if (z)
		add_one(p, "z", z);
}

/* events: the total itself for counts; Kish's effective size for times, from the count type
 * just before (the events of each sample), else each sample one event. A sample whose value
 * is 0 (a stack of another type only) is no row and no sample. */
static void test_events(void **state)
{
	static const char *const cpu[] = { "samples", "count", "cpu", "nanoseconds" };
	static const char *const off[] = { "waits", "count", "off_cpu", "nanoseconds" };
	static const char *const bare[] = { "off_cpu", "nanoseconds" };
	struct profile p;
	struct hist h;
	struct hist_opts o = { 0 };

	/* cpu: 3 samples of 1000 ns in f, 1 in g: 4 events of equal weight; z only off-CPU */
	types_profile(&p, cpu, 2, (int64_t[]){ 3, 3000 }, (int64_t[]){ 1, 1000 },
		      (int64_t[]){ 0, 0 });
	assert_int_equal(hist_build(&h, &p, &o), 0);
	assert_int_equal(h.total, 4);
	assert_true(h.events == 4);
	assert_int_equal(h.nsamples, 2);
	assert_null(hist_find(&h, "z", ""));
	hist_release(&h);
	o.sample_type = "cpu";
	assert_int_equal(hist_build(&h, &p, &o), 0);
	assert_int_equal(h.total, 4000);
	assert_float_equal(h.events, 4, 1e-12);
	hist_release(&h);
	profile_release(&p);

	/* off_cpu: f 2 waits of 100, g 1 wait of 600: 800^2 / (200^2 / 2 + 600^2) */
	o.sample_type = "off_cpu";
	types_profile(&p, off, 2, (int64_t[]){ 2, 200 }, (int64_t[]){ 1, 600 }, NULL);
	assert_int_equal(hist_build(&h, &p, &o), 0);
	assert_float_equal(h.events, 640000.0 / 380000, 1e-12);
	hist_release(&h);
	profile_release(&p);

	/* no count type before it: each sample one event, 800^2 / (200^2 + 600^2) */
	types_profile(&p, bare, 1, (int64_t[]){ 200 }, (int64_t[]){ 600 }, NULL);
	assert_int_equal(hist_build(&h, &p, &o), 0);
	assert_float_equal(h.events, 640000.0 / 400000, 1e-12);
	hist_release(&h);
	profile_release(&p);
}

/* A heap profile (period type in bytes, period R): the events behind c objects of v bytes are
 * the samples taken, c (1 - e^(-v / (c R))), not the objects: f 100 objects of 64 bytes each at
 * R 6400 stand for 100 (1 - e^-0.01) = 0.995 samples (at least 1), g 2 of 64 KiB for
 * 2 (1 - e^-10.24); without the period, the objects (102). */
static void test_events_heap(void **state)
{
	static const char *const heap[] = { "alloc_objects", "count", "alloc_space", "bytes" };
	struct profile p;
	struct hist h;
	struct hist_opts o = { .sample_type = "alloc_space" };

	(void)state;
	types_profile(&p, heap, 2, (int64_t[]){ 100, 6400 }, (int64_t[]){ 2, 131072 }, NULL);
	assert_int_equal(hist_build(&h, &p, &o), 0);
	double all = 6400.0 + 131072, objects = all * all / (6400.0 * 6400 / 100 + 131072.0 * 131072 / 2);
	assert_float_equal(h.events, objects, 1e-9);
	hist_release(&h);
	p.period_type.type = profile_intern(&p, "space");
	p.period_type.unit = profile_intern(&p, "bytes");
	p.period = 6400;
	assert_int_equal(hist_build(&h, &p, &o), 0);
	double g = 2 * -expm1(-10.24), sampled = all * all / (6400.0 * 6400 / 1 + 131072.0 * 131072 / g);
	assert_float_equal(h.events, sampled, 1e-9);
	assert_true(h.events < 3); /* about 3 samples, not 102 objects */
	hist_release(&h);
	profile_release(&p);
}

static void test_empty_profile(void **state)
{
	struct profile p;
	struct hist h;
	struct hist_opts o = { 0 };

	assert_int_equal(profile_init(&p), 0);
	assert_int_equal(hist_build(&h, &p, &o), 0);
	assert_int_equal(h.n, 0);
	assert_int_equal(h.total, 0);
	hist_sort(&h, HIST_SORT_SELF);
	assert_null(hist_find(&h, "main", ""));
	hist_release(&h);
	profile_release(&p);
}

static void test_filter_profile(void **state)
{
	struct fixture fx;
	struct profile out;
	struct hist h;
	struct hist_opts o = { .comm = "alpha" }, all = { 0 };

	fixture_init(&fx);
	add_processes(&fx);
	assert_int_equal(profile_add_comment(&fx.p, "frequency: 99"), 0);
	assert_int_equal(profile_init(&out), 0);
	assert_int_equal(hist_filter_profile(&out, &fx.p, &o), 0);
	assert_int_equal(out.nsamples, 2);
	assert_int_equal(out.ncomments, 1);
	assert_string_equal(profile_str(&out, out.comments[0]), "frequency: 99");
	assert_int_equal(hist_build(&h, &out, &all), 0);
	assert_int_equal(h.total, 8);
	expect(&h, "three", "app", 5, 5);
	assert_string_equal(profile_label_str(&out, &out.samples[0], "comm"), "alpha");
	hist_release(&h);
	profile_release(&out);
	profile_release(&fx.p);
}

/* --comm takes a glob; a name that is itself glob syntax ("[idle]") still matches as is. */
static void test_comm_glob(void **state)
{
	struct fixture fx;
	struct hist h;
	struct hist_opts o = { .comm = "alp*" };

	fixture_init(&fx);
	add_processes(&fx);
	add(&fx, "main;halt", 9, 0, "[idle]");
	assert_int_equal(hist_build(&h, &fx.p, &o), 0);
	assert_int_equal(h.total, 3 + 5 + 6); /* alpha and alpha2 */
	hist_release(&h);
	o.comm = "?eta";
	assert_int_equal(hist_build(&h, &fx.p, &o), 0);
	assert_int_equal(h.total, 4);
	hist_release(&h);
	o.comm = "[idle]";
	assert_int_equal(hist_build(&h, &fx.p, &o), 0);
	assert_int_equal(h.total, 9);
	hist_release(&h);
	profile_release(&fx.p);
}

/* no_idle drops pid 0 (and, without pids, the idle task's names): the shares of the rest add up
 * to 100 %; pid 0 is never counted as a process. */
static void test_no_idle(void **state)
{
	struct fixture fx;
	struct hist h;
	struct hist_opts o = { .no_idle = true }, all = { 0 };

	fixture_init(&fx);
	add_processes(&fx);
	add(&fx, "k:do_idle;k:halt", 10, 0, "[idle]");
	add(&fx, "k:do_idle;k:halt", 2, -1, "swapper/1");
	add(&fx, "k:do_idle;k:halt", 1, -1, "[idle]");
	add(&fx, "main;swap", 4, -1, "swapper2"); /* not the idle task */
	assert_int_equal(hist_build(&h, &fx.p, &all), 0);
	assert_int_equal(h.total, 25 + 10 + 2 + 1 + 4);
	assert_int_equal(h.nprocesses, 3); /* pid 0 is not a process */
	hist_release(&h);
	assert_int_equal(hist_build(&h, &fx.p, &o), 0);
	assert_int_equal(h.total, 25 + 4);
	assert_int_equal(h.all_total, 25 + 10 + 2 + 1 + 4);
	assert_null(hist_find(&h, "halt", "[kernel.kallsyms]"));
	expect(&h, "main", "app", 0, 29);
	hist_release(&h);
	profile_release(&fx.p);
}

/* hist_extract: the samples that pass, without kernel locations under no_kernel (kernel-only
 * samples dropped), and only the tables they use, the first mapping kept. */
static void test_extract(void **state)
{
	struct fixture fx;
	struct profile out;
	struct hist h;
	int64_t pid3[] = { 3 };
	struct hist_opts o = { .pids = pid3, .npids = 1, .no_kernel = true }, all = { 0 };

	fixture_init(&fx);
	add_processes(&fx);
	add(&fx, "main;c:read;k:sys_read", 5, 3, "alpha");
	add(&fx, "k:kthread;k:work", 2, 3, "alpha");
	add(&fx, "main;c:write;k:sys_write", 1, 1, "alpha");
	assert_int_equal(profile_add_comment(&fx.p, "frequency: 99"), 0);
	assert_int_equal(profile_init(&out), 0);
	assert_int_equal(hist_extract(&out, &fx.p, &o), 0);
	assert_int_equal(out.ncomments, 1);
	for (uint64_t i = 0; i < out.nsamples; i++)
		assert_int_equal(profile_label_num(&out, &out.samples[i], "pid", -1), 3);
	for (uint64_t i = 0; i < out.nlocations; i++)
		assert_int_not_equal(out.locations[i].kind, FRAME_KERNEL);
	assert_int_equal(out.nmappings, 2); /* app (the main binary) and libc; no kernel */
	assert_string_equal(profile_str(&out, out.mappings[0].filename), "/usr/bin/app");
	for (uint64_t i = 0; i < out.nfunctions; i++) /* "one", "write": other processes' */
		assert_true(strcmp(profile_str(&out, out.functions[i].name), "one") &&
			    strcmp(profile_str(&out, out.functions[i].name), "write"));
	assert_int_equal(hist_build(&h, &out, &all), 0);
	assert_int_equal(h.total, 5 + 6 + 5); /* the kernel-only sample is gone */
	expect(&h, "read", "libc.so.6", 5, 5);
	hist_release(&h);
	profile_release(&out);
	profile_release(&fx.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self_and_total),
		cmocka_unit_test(test_recursion_counted_once),
		cmocka_unit_test(test_pid_filter),
		cmocka_unit_test(test_comm_filter),
		cmocka_unit_test(test_all_processes_counted),
		cmocka_unit_test(test_kernel_frames_kept),
		cmocka_unit_test(test_no_kernel),
		cmocka_unit_test(test_inline_folded),
		cmocka_unit_test(test_sort_ties_deterministic),
		cmocka_unit_test(test_by_module),
		cmocka_unit_test(test_by_line),
		cmocka_unit_test(test_sample_type),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_events_heap),
		cmocka_unit_test(test_empty_profile),
		cmocka_unit_test(test_filter_profile),
		cmocka_unit_test(test_comm_glob),
		cmocka_unit_test(test_no_idle),
		cmocka_unit_test(test_extract),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
