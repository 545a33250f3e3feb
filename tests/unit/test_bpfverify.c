/* Unit test for the verifier's work on the BPF sampler (bpf/profile.bpf.c), each program loaded
 * alone as `firn record` loads it (DWARF unwinding, or frame pointers only): on_sample (the
 * native unwinders) is verified in fewer than 20,000 instructions (it was 47,738, ~50 ms of every
 * start: loops the verifier followed iteration by iteration); so is each walker's program that
 * on_sample tail-calls (bpf/walkers.h's FIRN_PROG rows: on_sample_python, ...), loaded on its own; so are start_waits
 * (bpf/offcpu_start.bpf.h: the sleepable iterator that takes the waits in progress at the start
 * of -e off-cpu, the same unwinder) and start_wait_exit (their Python frames); on_usdt, which
 * walks both inline, has budgets of its own, and an event's own program (on_toy, the toy
 * event's) stays within the common one. A kernel that verifies bpf_loop callbacks until their states converge (6.18.44-fc-v1252 here) took on_sample
 * to 92,228 while the stack reads, the V8 frame check and the VMA look-up were inlined in the
 * frame loop's callback: they are global functions, verified once (14,279 there). The
 * build's minimized kernel BTF gives each program what the full BTF gives. Needs root and BPF:
 * skipped without them. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <linux/types.h>

#include "../../bpf/firn.h"
#include "../../bpf/walkers.h"
#include "profile.skel.h"
#include "profile.minbtf.h"
#include "source/kbtf.h"

#define MAX_VERIFIED 20000

/* Quiet libbpf (a failed load prints the whole verifier log). */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level, (void)fmt, (void)ap;
	return 0;
}

static bool gpu;             /* the next loads are --cuda's (want_gpu) */
static bool alloc;           /* the next loads are -e alloc's (want_alloc) */
static const char *btf_path; /* the next loads relocate against this BTF (NULL: vmlinux) */

/* Loads program name alone with these settings; returns its verified instructions (0: no BPF). */
static uint32_t verified(const char *name, bool dwarf)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = btf_path);
	struct profile_bpf *s = profile_bpf__open_opts(&oo);
	struct bpf_program *p, *want;
	struct bpf_prog_info info;
	uint32_t len = sizeof(info), n = 0;

	assert_non_null(s);
	want = bpf_object__find_program_by_name(s->obj, name);
	assert_non_null(want);
	s->rodata->filter_pids = 1;
	s->rodata->walkers_on = ~0u; /* every runtime's walker, and the tail calls into theirs */
	for (size_t i = 0; i < FIRN_NWALKERS; i++)
		if (firn_walkers[i].prog)
			s->rodata->walkers_tail |= 1u << firn_walkers[i].tag;
	s->rodata->dwarf_unwind = dwarf;
	s->rodata->fp_fallback = dwarf;
	s->rodata->want_gpu = gpu;
	s->rodata->want_alloc = alloc;
	bpf_map__set_max_entries(s->maps.unwind_rows, 16);
	bpf_map__set_max_entries(s->maps.unwind_umaps, 4096);
	bpf_object__for_each_program(p, s->obj)
		bpf_program__set_autoload(p, p == want);
	if (!profile_bpf__load(s)) {
		memset(&info, 0, sizeof(info));
		assert_int_equal(bpf_obj_get_info_by_fd(bpf_program__fd(want), &info, &len), 0);
		n = info.verified_insns;
	}
	profile_bpf__destroy(s);
	return n;
}

/* Program name, loaded with each unwinder, stays within budget verified instructions. */
static void check_budget(const char *name, uint32_t budget)
{
	if (geteuid() != 0)
		skip();
	uint32_t dwarf = verified(name, true), fp = verified(name, false);
	if (!dwarf && !fp && !verified("on_sample", false))
		skip(); /* no BPF here */
	print_message("%s%s verified instructions: dwarf %u, fp %u\n", name, gpu ? " (--cuda)" : alloc ? " (-e alloc)" : "",
		      dwarf, fp);
	assert_in_range(dwarf, 1, budget);
	assert_in_range(fp, 1, budget);
}

/* Program name within the common budget. */
static void check_program(const char *name)
{
	check_budget(name, MAX_VERIFIED);
}

/* Both native unwinders' on_sample stay within a budget of its own: 12,028 with DWARF when this
 * was written (18,648 while the mapping's and the row's look-ups were inlined in the frame
 * loop's callback, their paths multiplying its states: 1,203 -> 807, the verification time
 * about halved; 13,448 while the label context, walkers_ctx, was inlined at its end, verified
 * once per state reaching it: 807 -> 680 states; issue 51). */
#define ON_SAMPLE_VERIFIED 13000
static void test_verified_insns(void **state)
{
	(void)state;
	check_budget("on_sample", ON_SAMPLE_VERIFIED);
}

/* Every walker's program (the FIRN_PROG rows of bpf/walkers.h: on_sample_python, firn-toy's
 * on_sample_stub, ...), loaded alone as a late load does, within the common budget. */
static void test_walkers_verified(void **state)
{
	(void)state;
	for (size_t i = 0; i < FIRN_NWALKERS; i++)
		if (firn_walkers[i].prog)
			check_program(firn_walkers[i].prog);
}

/* The start_waits iterator loads (sleepable, with both unwinders) within the same budget. */
#define START_WAITS_VERIFIED 9000 /* 7,386 with DWARF when this was written (12,578 inlined) */
static void test_start_waits_verified(void **state)
{
	(void)state;
	check_budget("start_waits", START_WAITS_VERIFIED);
}

/* start_wait_exit (the frames of the FIRN_WALK_DEFER walkers, Python's, of a wait in progress
 * at the start, at its system call's exit: their stack hooks) within the same budget. */
static void test_start_wait_exit_verified(void **state)
{
	(void)state;
	check_program("start_wait_exit");
}

/* The USDT program (a probe's stack, with the native unwinder inline and every walker's stack
 * hook, global functions: it cannot tail-call the perf_event programs) within its budget: 19,621
 * with DWARF when this was written (21,997 while the Python walker was inlined, without the
 * stub's; 42,568 before the GPU paths were left out without --cuda). With --cuda the GPU
 * probes' paths (a launch takes its stacks too) are walked as well: 35,281 (40,668 inlined). */
/* The look-ups of the frame loop global functions (issue 51): 14,595, --cuda 22,575 (19,795
 * and 34,984 before). */
#define USDT_VERIFIED 17000
#define USDT_CUDA_VERIFIED 26000
/* With -e alloc the otel_memory path (an allocation's stack, counted twice) is walked too:
 * 37,002 with DWARF (the live heap's map and inuse counts included) when this was written;
 * 18,230 since the frame loop's look-ups are global functions (30,639 before). */
#define USDT_ALLOC_VERIFIED 21000
static void test_usdt_verified(void **state)
{
	(void)state;
	check_budget("on_usdt", USDT_VERIFIED);
	gpu = true;
	check_budget("on_usdt", USDT_CUDA_VERIFIED);
	gpu = false;
	alloc = true;
	check_budget("on_usdt", USDT_ALLOC_VERIFIED);
	alloc = false;
}

/* An event's own program (bpf/toy.bpf.h, the model of one: a '?' section, loaded only when a
 * row names it) takes its stacks with count_hit, both unwinders inline: 18,014 with DWARF when
 * this was written, 20,290 with the Java walker's global functions (~2,250, as on_sample's);
 * 14,303 since the frame loop's look-ups are global functions (19,503 before). */
#define EVENT_VERIFIED 17000
static void test_event_prog_verified(void **state)
{
	(void)state;
	check_budget("on_toy", EVENT_VERIFIED);
}

/* -e alloc's uprobe programs (bpf/alloc.bpf.h): the return's takes an allocation's stack as
 * the otel_memory probe does, within the same budget; the entries' Poisson rule (a countdown,
 * integer logarithms and exponentials: no loops) within the common one. */
static void test_alloc_uprobes_verified(void **state)
{
	static const char *const entries[] = { "alloc_malloc", "alloc_calloc", "alloc_realloc",
					       "alloc_memalign", "alloc_posix_memalign", "alloc_free" };
	(void)state;
	alloc = true;
	check_budget("alloc_ret", USDT_ALLOC_VERIFIED);
	for (size_t i = 0; i < sizeof(entries) / sizeof(*entries); i++)
		check_program(entries[i]);
	alloc = false;
}

/* Whether keys a and b ("RELEASE BUILD_ID SIZE") have the same release and size. */
static bool same_kernel(const char *a, const char *b)
{
	size_t ra = strcspn(a, " "), rb = strcspn(b, " ");
	const char *sa = strrchr(a, ' '), *sb = strrchr(b, ' ');

	return ra == rb && !strncmp(a, b, ra) && sa && sb && !strcmp(sa, sb);
}

/* Program name verifies the same against the minimized BTF (fd) as against the full one. */
static void same_with_min_btf(const char *name, int fd)
{
	char path[32];
	uint32_t full = verified(name, true);

	btf_path = kbtf_path(fd, path, sizeof(path));
	uint32_t min = verified(name, true);
	btf_path = NULL;
	print_message("%s: %u verified with the full BTF, %u with the minimized\n", name, full, min);
	assert_true(full > 0);
	assert_int_equal(min, full);
}

/* The build's minimized kernel BTF (lib/source/kbtf.h) is complete: on a kernel whose key it
 * has, every program loads against it alone with what the full BTF gives, instruction for
 * instruction; another kernel's key is refused. */
static void test_min_btf(void **state)
{
	char key[512];
	(void)state;

	assert_int_equal(kbtf_open("0.0 none 1", profile_min_btf, profile_min_btf_len), -ESTALE);
	assert_int_equal(kbtf_open(profile_min_btf_key, profile_min_btf, 0), -ENOENT);
	if (geteuid() != 0 || kbtf_key(key, sizeof(key)))
		skip();
	if (!profile_min_btf_len || !same_kernel(key, profile_min_btf_key))
		skip(); /* built on another kernel, or without a blob */
	/* the same release and BTF size: bpf/min_btf.sh and kbtf_key read the same build ID */
	int fd = kbtf_open(profile_min_btf_key, profile_min_btf, profile_min_btf_len);
	assert_true(fd >= 0);
	static const char *const progs[] = {"on_sample", "on_usdt", "start_waits", "start_wait_exit",
					     "on_toy"};
	for (size_t i = 0; i < sizeof(progs) / sizeof(*progs); i++)
		same_with_min_btf(progs[i], fd);
	for (size_t i = 0; i < FIRN_NWALKERS; i++)
		if (firn_walkers[i].prog)
			same_with_min_btf(firn_walkers[i].prog, fd);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verified_insns),
		cmocka_unit_test(test_walkers_verified),
		cmocka_unit_test(test_start_waits_verified),
		cmocka_unit_test(test_start_wait_exit_verified),
		cmocka_unit_test(test_usdt_verified),
		cmocka_unit_test(test_event_prog_verified),
		cmocka_unit_test(test_alloc_uprobes_verified),
		cmocka_unit_test(test_min_btf),
	};

	libbpf_set_print(quiet);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
