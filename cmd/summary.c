/* The one-line summaries record prints on stderr; see summary.h. */
#include "summary.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <linux/types.h>

#include "../bpf/firn.h"

#include "opt.h"
#include "pyframes.h"
#include "runtime.h"
#include "v8frames.h" /* FIRN-V8 */

/* The unwinding line: every sample, complete or truncated (by reason), or without a user stack. */
static void print_unwind_summary(const struct recorder_stats *st)
{
	uint64_t all = 0, truncated = 0;

	for (int i = 0; i < 7; i++)
		all += st->unwind[i];
	for (int i = 1; i < 6; i++)
		truncated += st->unwind[i];
	uint64_t user = all - st->unwind[6];
	fprintf(stderr,
		"firn: dwarf unwinding: %llu samples, %llu with a user stack: %.1f%% complete, "
		"%llu truncated (no mapping %llu, no row %llu, unsupported rule %llu, "
		"unreadable stack %llu, depth %llu); frame pointers used in %llu (%llu where a "
		"table had no row), mappings found by the kernel in %llu; tables: %llu files, "
		"%llu rows, %.1f MiB",
		(unsigned long long)all, (unsigned long long)user,
		user ? 100.0 * st->unwind[0] / user : 0.0, (unsigned long long)truncated,
		(unsigned long long)st->unwind[1], (unsigned long long)st->unwind[2],
		(unsigned long long)st->unwind[3], (unsigned long long)st->unwind[4],
		(unsigned long long)st->unwind[5], (unsigned long long)st->unwind[7],
		(unsigned long long)st->unwind[9], (unsigned long long)st->unwind[8], (unsigned long long)st->unwind_files,
		(unsigned long long)st->unwind_rows, st->unwind_bytes / 1048576.0);
	if (st->unwind_too_many_maps)
		fprintf(stderr, ", %llu mappings past the per-process limit",
			(unsigned long long)st->unwind_too_many_maps);
	fprintf(stderr, ", %llu from the cache", (unsigned long long)st->unwind_cached);
	fputc('\n', stderr);
}

/* The off-CPU line: what became of every wait begun (added, under the minimum, lost by reason;
 * not ended: the end of the recording could not end it) and the time added, as the profile has
 * it (x the rate). */
static void print_offcpu_summary(const struct summary_opts *o, const struct recorder_offcpu_stats *w)
{
	/* a wait whose start found no slot was never begun: it is seen, and lost */
	uint64_t lost = w->lost_counts_full + w->lost_stacks_full + w->lost_no_slot;
	uint64_t seen = w->waits + w->lost_no_slot, done = w->counted + w->short_waits + lost;
	long rate = o->off_cpu_rate > 1 ? o->off_cpu_rate : 1;

	fprintf(stderr,
		"firn: off-cpu: %llu waits%s: %llu added (%.3f s off the CPU%s; %llu of them still "
		"waiting at the end, added up to it), %llu under %ld us (%.3f s, not added), %llu lost "
		"(counts map full %llu, stack map full %llu, no thread slot %llu), %llu not ended",
		(unsigned long long)seen, o->off_cpu_runnable ? " (preemptions included)" : "",
		(unsigned long long)w->counted, w->ns * rate / 1e9,
		rate > 1 ? ", scaled by the rate" : "", (unsigned long long)w->at_end,
		(unsigned long long)w->short_waits,
		o->off_cpu_min_us > 0 ? o->off_cpu_min_us : 0, w->short_ns / 1e9,
		(unsigned long long)lost, (unsigned long long)w->lost_counts_full,
		(unsigned long long)w->lost_stacks_full, (unsigned long long)w->lost_no_slot,
		(unsigned long long)(seen > done ? seen - done : 0));
	if (rate > 1)
		fprintf(stderr, "; 1 wait in %ld sampled (%llu left out)", rate,
			(unsigned long long)w->unsampled);
	if (w->late)
		fprintf(stderr, "; %llu ended at the thread's next switch-out (its switch-in unseen)",
			(unsigned long long)w->late);
	if (w->at_start)
		fprintf(stderr, "; %llu already waiting at the start, counted from it (the oldest "
			"since %.3f s before)", (unsigned long long)w->at_start,
			w->at_start_oldest_ns / 1e9);
	fputc('\n', stderr);
}

/* The Python line, when a process ran a CPython: its samples by outcome, failures by reason. */
static void print_python_summary(const struct recorder *rec)
{
	struct pyframes_stats ps;
	uint64_t b[FIRN_PY_NR], all = 0;

	recorder_python_stats(rec, &ps, b);
	for (int i = 0; i < FIRN_PY_CODES; i++) /* the outcomes of samples */
		all += b[i];
	if (!ps.processes && !ps.unknown_version)
		return;
	fprintf(stderr,
		"firn: python: %llu process%s, %llu samples: %.1f%% complete, truncated %llu, "
		"no thread state %llu, unreadable frame %llu; code objects %llu (announcements lost %llu), "
		"unreadable %llu; unknown version %llu%s%s\n",
		(unsigned long long)ps.processes, ps.processes == 1 ? "" : "es",
		(unsigned long long)all, all ? 100.0 * b[FIRN_PY_COMPLETE] / all : 0.0,
		(unsigned long long)b[FIRN_PY_TRUNCATED], (unsigned long long)b[FIRN_PY_NO_THREAD],
		(unsigned long long)b[FIRN_PY_BAD_READ], (unsigned long long)b[FIRN_PY_CODES],
		(unsigned long long)b[FIRN_PY_CODES_LOST], (unsigned long long)ps.unreadable,
		(unsigned long long)ps.unknown_version, ps.unknown_version ? ": " : "",
		ps.unknown_version ? ps.last_refusal : "");
}

/* FIRN-V8: the JavaScript line, when a process ran a V8: its frames by outcome, functions
 * read, refusals with the reason, and which source named the frames where a perf map exists. */
static void print_v8_summary(const struct recorder *rec)
{
	struct v8frames_stats vs;
	const uint64_t *b = vs.bpf;

	if (runtime_set_stats(recorder_runtimes(rec), &runtime_v8, &vs, sizeof(vs)))
		return;
	if (!vs.processes && !vs.refused)
		return;
	fprintf(stderr,
		"firn: javascript: %llu process%s, %llu V8 frames: %llu JavaScript, %llu typed (entry, "
		"exit, stub: native), %llu unreadable; functions %llu (announcements lost %llu), "
		"unreadable %llu; refused %llu%s%s",
		(unsigned long long)vs.processes, vs.processes == 1 ? "" : "es",
		(unsigned long long)b[FIRN_V8_FRAMES], (unsigned long long)b[FIRN_V8_JS],
		(unsigned long long)b[FIRN_V8_TYPED], (unsigned long long)b[FIRN_V8_BAD_READ],
		(unsigned long long)b[FIRN_V8_FUNCS], (unsigned long long)b[FIRN_V8_FUNCS_LOST],
		(unsigned long long)vs.unreadable, (unsigned long long)vs.refused,
		vs.refused ? ": " : "", vs.refused ? vs.last_refusal : "");
	if (vs.perf_maps)
		fprintf(stderr, "; %llu with /tmp/perf-PID.map: JavaScript named by V8's frames, "
			"not the map (--no-js: by the map)", (unsigned long long)vs.perf_maps);
	fputc('\n', stderr);
}

/* What the GPU probes saw, with what could not be matched (never dropped silently). */
static void print_gpu_summary(const struct recorder_gpu_stats *g)
{
	fprintf(stderr,
		"firn: gpu: %llu launches (%llu without a kernel record, %llu of them remembered to "
		"the end), %llu kernels (%llu without a seen launch), %llu copies, %llu lost\n",
		(unsigned long long)g->launches, (unsigned long long)g->launches_unmatched,
		(unsigned long long)g->launches_pending, (unsigned long long)g->kernels,
		(unsigned long long)g->kernels_unmatched, (unsigned long long)g->memcpys,
		(unsigned long long)g->lost);
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

/* The summary line on stderr (and one line per USDT probe: its hits): samples taken = samples
 * in the profile + lost; out: the file written. */
void summary_print(const struct recorder *rec, const struct profile *prof,
		   const struct recorder_stats *st, const struct summary_opts *so, size_t bytes,
		   const char *out)
{
	uint64_t lost = st->taken > st->stored ? st->taken - st->stored : 0;
	bool std = !strcmp(out, "-"); /* "wrote standard output", not "wrote '-'" */
	/* the processes in the profile, counted as firn report counts them */
	uint64_t procs = so->processes_given ? so->processes : profile_distinct_pids(prof);

	fprintf(stderr,
		"firn: %llu samples, %llu lost (counts map full %llu, stack map full %llu), "
		"%llu taken (user stack unreadable in %llu), %llu process%s, %.2f s, wrote %s%s%s "
		"(%zu bytes)\n",
		(unsigned long long)st->stored, (unsigned long long)lost,
		(unsigned long long)st->counts_full, (unsigned long long)st->stacks_full,
		(unsigned long long)st->taken, (unsigned long long)st->user_stack_errors,
		(unsigned long long)procs, procs == 1 ? "" : "es", (st->end_ns - st->start_ns) / 1e9,
		std ? "" : "'",
		std ? "standard output" : out, std ? "" : "'", bytes);
	/* the USDT events' sample types, in event order */
	for (uint32_t t = 0; t < prof->nsample_types; t++) {
		const char *type = profile_str(prof, prof->sample_types[t].type);
		if (strncmp(type, "usdt_", 5))
			continue;
		long long hits = profile_type_total(prof, type);
		fprintf(stderr, "firn: %s: %lld hit%s\n", type, hits, hits == 1 ? "" : "s");
	}
	if (so->off_cpu)
		print_offcpu_summary(so, &st->off_cpu);
	print_frames_summary(st);
	if (so->unwind_dwarf)
		print_unwind_summary(st);
	if (st->jit_no_map)
		fprintf(stderr, "firn: JIT code: %llu process%s ran JIT code without a perf map "
			"(/tmp/perf-PID.map): its frames are [anon]\n",
			(unsigned long long)st->jit_no_map, st->jit_no_map == 1 ? "" : "es");
	print_python_summary(rec);
	print_v8_summary(rec); /* FIRN-V8 */
	if (so->gpu)
		print_gpu_summary(&st->gpu);
	if (firn_verbose)
		fprintf(stderr, "firn: BPF maps: %llu, %.1f MiB of kernel memory\n",
			(unsigned long long)st->bpf_maps, st->bpf_map_bytes / 1048576.0);
}
