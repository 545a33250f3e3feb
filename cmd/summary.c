/* The one-line summaries record prints on stderr; see summary.h. */
#include "summary.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "record/event_table.h"
#include "opt.h"
#include "record/runtimes.h"

/* The unwinding line: every sample, complete or truncated (by reason), or without a user stack
 * (the stop reasons add up to every sample), over the unwind statistics' named fields. */
static void print_unwind_summary(const struct recorder_stats *st)
{
	static const char *const stops[] = { "complete", "no_mapping", "no_row", "unsupported",
					     "bad_read", "depth", "no_user_stack", NULL };
	static const char *const truncated_by[] = { "no_mapping", "no_row", "unsupported",
						    "bad_read", "depth", NULL };
	const struct event_stat_group *g = &event_unwind_stats;
	uint64_t all, truncated;
	char reasons[256];

#define UNW(name) event_stat_value(event_stat_find(g, name), st->unwind, NULL)
	event_stat_list(g, stops, st->unwind, NULL, reasons, sizeof(reasons), &all);
	event_stat_list(g, truncated_by, st->unwind, NULL, reasons, sizeof(reasons), &truncated);
	uint64_t user = all - UNW("no_user_stack");
	fprintf(stderr,
		"firn: dwarf unwinding: %llu samples, %llu with a user stack: %.1f%% complete, "
		"%llu truncated (%s); frame pointers used in %llu (%llu where a table had no row), "
		"mappings found by the kernel in %llu; tables: %llu files, %llu rows, %.1f MiB",
		(unsigned long long)all, (unsigned long long)user,
		user ? 100.0 * UNW("complete") / user : 0.0, (unsigned long long)truncated, reasons,
		(unsigned long long)UNW("fp_fallback"), (unsigned long long)UNW("no_row_fp_fallback"),
		(unsigned long long)UNW("vma_lookup"), (unsigned long long)st->unwind_files,
		(unsigned long long)st->unwind_rows, st->unwind_bytes / 1048576.0);
#undef UNW
	if (st->unwind_too_many_maps)
		fprintf(stderr, ", %llu mappings past the per-process limit",
			(unsigned long long)st->unwind_too_many_maps);
	fprintf(stderr, ", %llu from the cache", (unsigned long long)st->unwind_cached);
	fputc('\n', stderr);
}

/* The lines of the recorded events that come first (or last) in the summary, each as its row
 * of the event table writes it, over its statistics. */
static void print_event_summaries(const struct profile *prof, const struct recorder_stats *st,
				  const struct summary_opts *so, bool last)
{
	struct event_params p = {
		.off_cpu_rate = so->off_cpu_rate > 1 ? (uint32_t)so->off_cpu_rate : 1,
		.off_cpu_min_ns = so->off_cpu_min_us > 0 ? (uint64_t)so->off_cpu_min_us * 1000 : 0,
		.off_cpu_runnable = so->off_cpu_runnable,
		.prof = prof,
	};
	char buf[2048];

	for (size_t i = 0; i < event_table_n; i++) {
		const struct event_desc *d = &event_table[i];
		if (!d->summary || d->summary_last != last ||
		    !event_recorded(d, so->events, so->nevents, so->gpu))
			continue;
		const void *stats = d->stats ? (const char *)st + d->recorder_stats_at : NULL;
		d->summary(stats, &p, buf, sizeof(buf));
		fputs(buf, stderr);
	}
}

/* The runtimes' lines (Python, JavaScript...), each as its runtime writes it. */
static void print_runtime_summaries(const struct recorder *rec)
{
	char buf[2048];

	runtime_set_summary(recorder_runtimes(rec), buf, sizeof(buf));
	fputs(buf, stderr);
}

/* The frames line: every cpu-clock sample, named or not; those with unnamed frames by the worst
 * reason among them; and the process records and notices lost (why mappings may be missing). */
static void print_frames_summary(const struct recorder_stats *st)
{
	const struct capture_frame_stats *f = &st->frames;
	uint64_t unnamed = 0;

	for (int i = 0; i < SYMBOLIZER_REASONS; i++)
		unnamed += f->unnamed[i];
	if (!f->named && !unnamed && !st->stored)
		return;
	fprintf(stderr,
		"firn: frames: %llu samples, %llu with every frame named, %llu with unnamed frames "
		"(process gone before it was seen %llu, address in no known mapping %llu, file "
		"unreadable %llu, JIT code without a perf map entry %llu, no symbol %llu); lost by "
		"the kernel: %llu process records, %llu notices\n",
		(unsigned long long)(f->named + unnamed), (unsigned long long)f->named,
		(unsigned long long)unnamed,
		(unsigned long long)f->unnamed[SYMBOLIZER_NO_PROCESS],
		(unsigned long long)f->unnamed[SYMBOLIZER_NO_MAPPING],
		(unsigned long long)f->unnamed[SYMBOLIZER_NO_FILE],
		(unsigned long long)f->unnamed[SYMBOLIZER_NO_JIT_SYMBOL],
		(unsigned long long)f->unnamed[SYMBOLIZER_NO_SYMBOL],
		(unsigned long long)st->proc_records_lost, (unsigned long long)st->events_full);
}

/* The samples (of prof's default type) with an unnamed JIT frame ([anon]: a location without
 * lines in a JIT mapping), and the total. */
static void jit_unnamed(const struct profile *p, int64_t *unnamed, int64_t *total)
{
	uint32_t vi = profile_value_index(p);

	*unnamed = *total = 0;
	for (uint64_t i = 0; p->nsample_types && i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		*total += s->values[vi];
		for (uint32_t k = 0; k < s->nlocs; k++) {
			const struct profile_location *l = &p->locations[s->location_ids[k] - 1];
			if (!l->nlines && l->mapping_id && p->mappings[l->mapping_id - 1].kind == FRAME_JIT) {
				*unnamed += s->values[vi];
				break;
			}
		}
	}
}

/* The JIT line: processes whose JIT code neither a perf map nor a runtime (V8's walker) named,
 * and what share of the samples that left [anon] (a runtime may name nearly all of it: the
 * line said "its frames are [anon]" under a javascript line that had named them). */
static void print_jit_summary(const struct profile *prof, uint64_t procs)
{
	int64_t unnamed, total;
	char a[32], b[32];

	jit_unnamed(prof, &unnamed, &total);
	fprintf(stderr, "firn: JIT code: %llu process%s ran JIT code that no perf map "
		"(/tmp/perf-PID.map) or runtime named: [anon] frames in %s of %s samples (%.1f%%)\n",
		(unsigned long long)procs, procs == 1 ? "" : "es", group_digits(unnamed, a),
		group_digits(total, b), total ? 100.0 * unnamed / total : 0.0);
}

/* The end of the summary line: where the profile went, in bytes ("wrote 'FILE'", "wrote standard
 * output", or what reached the --push store: an interval-only recording writes no file). */
static void print_destination(const struct summary_opts *so, size_t bytes, const char *out)
{
	if (so->pushed)
		fprintf(stderr, "pushed %llu interval%s to '%s' (%zu bytes)\n",
			(unsigned long long)so->pushed_intervals, so->pushed_intervals == 1 ? "" : "s",
			out, bytes);
	else if (!strcmp(out, "-")) /* "wrote standard output", not "wrote '-'" */
		fprintf(stderr, "wrote standard output (%zu bytes)\n", bytes);
	else
		fprintf(stderr, "wrote '%s' (%zu bytes)\n", out, bytes);
}

/* The summary line on stderr (and one line per USDT probe: its hits): samples taken = samples
 * in the profile + lost; out: the file written. */
void summary_print(const struct recorder *rec, const struct profile *prof,
		   const struct recorder_stats *st, const struct summary_opts *so, size_t bytes,
		   const char *out)
{
	uint64_t lost = st->taken > st->stored ? st->taken - st->stored : 0;
	/* the processes in the profile, counted as firn report counts them */
	uint64_t procs = so->processes_given ? so->processes : profile_distinct_pids(prof);

	fprintf(stderr,
		"firn: %llu samples, %llu lost (counts map full %llu, stack map full %llu), "
		"%llu taken (user stack unreadable in %llu), %llu process%s, %.2f s, ",
		(unsigned long long)st->stored, (unsigned long long)lost,
		(unsigned long long)st->counts_full, (unsigned long long)st->stacks_full,
		(unsigned long long)st->taken, (unsigned long long)st->user_stack_errors,
		(unsigned long long)procs, procs == 1 ? "" : "es", (st->end_ns - st->start_ns) / 1e9);
	print_destination(so, bytes, out);
	print_event_summaries(prof, st, so, false);
	print_frames_summary(st);
	put_nosym_lines(stderr, prof, profile_value_index(prof), "firn: ");
	if (so->unwind_dwarf)
		print_unwind_summary(st);
	if (st->jit_no_map)
		print_jit_summary(prof, st->jit_no_map);
	print_runtime_summaries(rec);
	print_event_summaries(prof, st, so, true);
	if (firn_verbose)
		fprintf(stderr, "firn: BPF maps: %llu, %.1f MiB of kernel memory\n",
			(unsigned long long)st->bpf_maps, st->bpf_map_bytes / 1048576.0);
}
