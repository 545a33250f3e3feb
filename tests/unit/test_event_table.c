/* The event table drives everything an event needs: every row is reachable by -e parsing (or
 * its option), named in the completions' values and the usage error, asks for its BPF
 * programs, gives the profile its sample type through the capture, its statistics as comments
 * and its summary line. A toy event, one row compiled into this test's copy of the table (and
 * nowhere else), proves that a new row needs nothing more. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "../../lib/record/event_table.h"
#include "../../lib/record/capture.h"
#include "../../lib/model/profile.h"
#include "../../lib/record/recorder.h"
#include "../../lib/symbolize/symbolize.h"

/* The toy (tests/toy/toy_event.h): a stack at every fork from its own BPF program, one counter
 * of its own, and a summary line. */
#include "../toy/toy_event.h"
#include "../../lib/record/event_table.c"

/* The -e value that names row d ("usdt:PATH:PROVIDER:NAME": its argument's syntax parses). */
static void spec_of(const struct event_desc *d, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", d->name, d->arg ? ":" : "", d->arg ? d->arg : "");
}

/* Whether the space-separated words of list hold word. */
static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (!p[n] || p[n] == ' '))
			return true;
	return false;
}

/* Every -e row parses from its spec and no other, and the completions and the usage error
 * name it; an option's row is recorded with its option only. */
static void test_rows_parse(void **state)
{
	char spec[128], values[256], syntax[256], help[512], word[64];
	const char *arg;

	(void)state;
	event_values(values, sizeof(values));
	event_syntax(syntax, sizeof(syntax));
	event_help(help, sizeof(help));
	for (size_t i = 0; i < event_table_n; i++) {
		const struct event_desc *d = &event_table[i];
		const char *specs[1] = { spec };
		assert_ptr_equal(event_by_id(d->id), d);
		if (d->with) { /* recorded with its -e event, with its programs */
			const char *with[1] = { d->with };
			assert_true(event_recorded(d, with, 1, false));
			assert_false(event_recorded(d, NULL, 0, true));
			assert_int_equal(event_progs(with, 1, false) & d->progs, d->progs);
			continue;
		}
		if (!d->name) {
			assert_non_null(d->option);
			assert_true(event_recorded(d, NULL, 0, true));
			assert_false(event_recorded(d, NULL, 0, false));
			assert_int_equal(event_progs(NULL, 0, true) & d->progs, d->progs);
			continue;
		}
		spec_of(d, spec, sizeof(spec));
		arg = NULL;
		assert_ptr_equal(event_find(spec, &arg), d);
		if (d->arg)
			assert_string_equal(arg, d->arg);
		assert_true(event_recorded(d, specs, 1, false));
		assert_int_equal(event_progs(specs, 1, false), d->progs);
		snprintf(word, sizeof(word), "%s%s", d->name, d->arg ? ":" : "");
		assert_true(has_word(values, word));
		assert_non_null(strstr(syntax, spec));
		assert_non_null(strstr(help, spec));
		assert_true(!d->help || strstr(help, d->help));
		snprintf(spec, sizeof(spec), "%s%s", d->name, d->arg ? ":" : "x");
		assert_null(event_find(spec, NULL)); /* an empty argument, a longer name */
	}
	assert_string_equal(values, "cpu-clock off-cpu usdt: alloc toy");
	assert_string_equal(syntax, "cpu-clock, off-cpu, usdt:PATH:PROVIDER:NAME, alloc or toy");
	/* -e's --help line (cmd/opt.c adds "; repeatable"): the rows' help, a new row's too */
	assert_string_equal(help, "cpu-clock (default), off-cpu (time threads wait, by stack), "
				  "usdt:PATH:PROVIDER:NAME: a stack at every probe hit, alloc (allocations by stack, "
				  "sampled by bytes), or toy (a stack at every fork)");
	assert_null(event_find("bogus", NULL));
	assert_null(event_find("usdt:a:b", NULL));
	assert_null(event_find("usdt:a::c", NULL));
	assert_ptr_equal(event_by_id(7), event_find("usdt:a:b:c", NULL)); /* a probe's id */
	/* no -e: cpu-clock alone, its program only */
	assert_int_equal(event_progs(NULL, 0, false), EVENT_PROG_CPU_CLOCK);
}

/* Every row gives the profile its sample type (with its unit; a timed one "cpu" too) through
 * the capture, and its statistics as comments under the group's prefix. */
static void test_rows_types_and_comments(void **state)
{
	(void)state;
	for (size_t i = 0; i < event_table_n; i++) {
		const struct event_desc *d = &event_table[i];
		char type[64];
		snprintf(type, sizeof(type), "%s%s", d->type ? d->type : d->type_prefix,
			 d->type ? "" : "test_probe");
		struct capture_event ev = { d->id, type, d };
		struct sampler_stats st = { 0 };
		struct capture_meta m = { .freq = 99, .call_graph = "fp", .stats = &st,
					  .events = &ev, .nevents = 1 };
		struct symbolizer *sym = symbolizer_new();
		struct profile p;
		assert_non_null(d->unit);
		assert_int_equal(profile_init(&p), 0);
		struct capture *c = capture_new(&p, sym, &m);
		assert_non_null(c);
		assert_int_equal(p.nsample_types, d->timed ? 2 : 1);
		assert_string_equal(profile_str(&p, p.sample_types[0].type), type);
		assert_string_equal(profile_str(&p, p.sample_types[0].unit), d->unit);
		if (d->timed)
			assert_string_equal(profile_str(&p, p.sample_types[1].type), "cpu");
		assert_int_equal(capture_finish_from(c, NULL, NULL, &m), 0);
		size_t found = 0;
		for (size_t k = 0; d->stats && k < p.ncomments; k++)
			found += !strncmp(profile_str(&p, p.comments[k]), d->stats->prefix,
					  strlen(d->stats->prefix));
		assert_int_equal(found, d->stats ? d->stats->n : 0);
		capture_free(c);
		profile_release(&p);
		symbolizer_free(sym);
	}
}

/* Every row with a summary writes its line(s) over its statistics (zeros here); the toy's and
 * off-CPU's name their fields by label. */
static void test_rows_summary(void **state)
{
	struct recorder_stats st = { 0 };
	struct profile p;
	char buf[1024];

	(void)state;
	assert_int_equal(profile_init(&p), 0);
	assert_true(profile_add_sample_type(&p, "usdt_test_probe", "count") >= 0);
	struct event_params params = { .prof = &p };
	for (size_t i = 0; i < event_table_n; i++) {
		const struct event_desc *d = &event_table[i];
		if (!d->summary)
			continue;
		const void *stats = d->stats ? (const char *)&st + d->recorder_stats_at : NULL;
		size_t n = d->summary(stats, &params, buf, sizeof(buf));
		assert_int_equal(n, strlen(buf));
		assert_true(n > 6 && !strncmp(buf, "firn: ", 6) && buf[n - 1] == '\n');
	}
	st.counters[0] = 3;
	assert_true(profile_add_sample_type(&p, "toy_hits", "count") >= 0);
	event_find("toy", NULL)->summary(st.counters, &params, buf, sizeof(buf));
	assert_string_equal(buf, "firn: toy: forks 3, 0 hits\n");
	event_by_id(FIRN_EVENT_USDT_FIRST)->summary(NULL, &params, buf, sizeof(buf));
	assert_string_equal(buf, "firn: usdt_test_probe: 0 hits\n");
	st.off_cpu.lost_counts_full = 2;
	st.off_cpu.lost_no_slot = 1;
	event_find("off-cpu", NULL)->summary(&st.off_cpu, &params, buf, sizeof(buf));
	assert_non_null(strstr(buf, "3 lost (counts map full 2, stack map full 0, no thread slot 1)"));
	profile_release(&p);
}

/* The statistics' fields: named once per group, the off-CPU derived ones computed, the unwind
 * group's names those the summary's unwinding line asks for. */
static void test_stat_fields(void **state)
{
	static const char *const names[] = { "complete", "no_mapping", "no_row", "unsupported",
					     "bad_read", "depth", "no_user_stack", "fp_fallback",
					     "vma_lookup", "no_row_fp_fallback", NULL };
	struct sampler_offcpu_stats o = { .waits = 10, .counted = 4, .short_waits = 3,
					  .lost_counts_full = 1 };
	struct event_params p = { .off_cpu_rate = 5, .off_cpu_min_ns = 2500 };
	const struct event_stat_group *g = event_find("off-cpu", NULL)->stats;
	uint64_t unwind[FIRN_UNW_NR] = { 5, 1, 2, 3, 4, 6, 7 }, sum;
	char buf[256];

	(void)state;
	assert_int_equal(event_stat_value(event_stat_find(g, "not_ended"), &o, &p), 2);
	assert_int_equal(event_stat_value(event_stat_find(g, "min_us"), &o, &p), 2);
	assert_int_equal(event_stat_value(event_stat_find(g, "rate"), &o, &p), 5);
	for (size_t i = 0; names[i]; i++)
		assert_ptr_equal(event_stat_find(&event_unwind_stats, names[i]),
				 &event_unwind_stats.fields[i]);
	event_stat_list(&event_unwind_stats, names + 1, unwind, NULL, buf, sizeof(buf), &sum);
	assert_int_equal(sum, 1 + 2 + 3 + 4 + 6 + 7);
	assert_non_null(strstr(buf, "no mapping 1, no row 2, unsupported rule 3, unreadable stack 4, "
				    "depth 6, no_user_stack 7, "));
}

/* Every row's statistics reach the recorder's figures through the table (event_stats_copy):
 * off-CPU's waits and the GPU's launches, copied struct for struct, and nothing else. */
static void test_stats_copy(void **state)
{
	struct sampler_stats s = { .taken = 7 };
	struct recorder_stats st = { 0 };

	(void)state;
	s.off_cpu.waits = 11;
	s.off_cpu.unsampled = 12;
	s.gpu.launches = 13;
	s.gpu.launches_pending = 14;
	event_stats_copy(&s, &st);
	assert_int_equal(st.off_cpu.waits, 11);
	assert_int_equal(st.off_cpu.unsampled, 12);
	assert_int_equal(st.gpu.launches, 13);
	assert_int_equal(st.gpu.launches_pending, 14);
	assert_int_equal(st.taken, 0); /* the recorder's own fields are stats_of's */
	s.counters[0] = 15; /* the toy's forks, counted by its BPF program */
	event_stats_copy(&s, &st);
	assert_int_equal(st.counters[0], 15);
}

/* The BPF programs of the recorded rows, each once: the toy's for -e toy, none for the shipped
 * events (their programs are the sampler's own), and a list that does not fit is refused. */
static void test_bpf_progs(void **state)
{
	const char *toy[] = { "toy", "cpu-clock", "toy" }, *names[4];

	(void)state;
	assert_int_equal(event_bpf_progs(toy, 3, false, names, 4), 1);
	assert_string_equal(names[0], "on_toy");
	assert_int_equal(event_bpf_progs(toy + 1, 1, true, names, 4), 0);
	assert_int_equal(event_bpf_progs(NULL, 0, false, names, 4), 0);
	assert_int_equal(event_bpf_progs(toy, 1, false, names, 0), -E2BIG);
}

/* The comments and summary lines of off-CPU and GPU are the text they were before the table
 * (pinned: tests/cli parse them, and profiles keep them). */
static void test_exact_text(void **state)
{
	static const char *const want[] = {
		"off_cpu.waits: 10", "off_cpu.counted: 4", "off_cpu.ns: 5000000000", "off_cpu.short: 3",
		"off_cpu.short_ns: 7", "off_cpu.at_end: 1", "off_cpu.late: 2", "off_cpu.at_start: 1",
		"off_cpu.not_ended: 2", "off_cpu.lost.no_slot: 1", "off_cpu.lost.counts_full: 1",
		"off_cpu.lost.stacks_full: 0", "off_cpu.min_us: 2",
		"off_cpu.rate: 1 in 5 (times scaled by it)", "off_cpu.unsampled: 6",
	};
	struct sampler_offcpu_stats o = { .waits = 10, .counted = 4, .ns = 5000000000ULL,
					  .short_waits = 3, .short_ns = 7, .lost_no_slot = 1,
					  .lost_counts_full = 1, .unsampled = 6, .at_end = 1,
					  .late = 2, .at_start = 1 };
	struct sampler_gpu_stats g = { .launches = 9, .kernels = 12, .kernels_unmatched = 3,
				       .memcpys = 2, .launches_unmatched = 1,
				       .launches_pending = 1 };
	struct event_params p = { .off_cpu_rate = 5, .off_cpu_min_ns = 2500 };
	const struct event_desc *off = event_find("off-cpu", NULL);
	struct profile prof;
	char buf[1024];

	(void)state;
	assert_int_equal(profile_init(&prof), 0);
	assert_int_equal(event_stat_comments(off->stats, &o, &p, &prof), 0);
	assert_int_equal(prof.ncomments, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < prof.ncomments; i++)
		assert_string_equal(profile_str(&prof, prof.comments[i]), want[i]);
	profile_release(&prof);
	off->summary(&o, &p, buf, sizeof(buf));
	assert_string_equal(buf,
		"firn: off-cpu: 11 waits: 4 added (25.000 s off the CPU, scaled by the rate; 1 of them "
		"still waiting at the end, added up to it), 3 under 2 us (0.000 s, not added), 2 lost "
		"(counts map full 1, stack map full 0, no thread slot 1), 2 not ended; 1 wait in 5 "
		"sampled (6 left out); 2 ended at the thread's next switch-out (its switch-in unseen); "
		"1 already waiting at the start, counted from it (the oldest since 0.000 s before)\n");
	p.off_cpu_runnable = true;
	p.off_cpu_rate = 0;
	o.late = o.at_start = 0;
	off->summary(&o, &p, buf, sizeof(buf));
	assert_string_equal(buf,
		"firn: off-cpu: 11 waits (preemptions included): 4 added (5.000 s off the CPU; 1 of "
		"them still waiting at the end, added up to it), 3 under 2 us (0.000 s, not added), 2 "
		"lost (counts map full 1, stack map full 0, no thread slot 1), 2 not ended\n");
	event_by_id(FIRN_EVENT_GPU_TIME)->summary(&g, &p, buf, sizeof(buf));
	assert_string_equal(buf, "firn: gpu: 9 launches (1 without a kernel record, 1 of them "
				 "remembered to the end), 12 kernels (3 without a seen launch), 2 "
				 "copies, 0 lost\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_parse),
		cmocka_unit_test(test_rows_types_and_comments),
		cmocka_unit_test(test_rows_summary),
		cmocka_unit_test(test_stat_fields),
		cmocka_unit_test(test_stats_copy),
		cmocka_unit_test(test_bpf_progs),
		cmocka_unit_test(test_exact_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
