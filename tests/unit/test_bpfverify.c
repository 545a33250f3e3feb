/* Unit test for the verifier's work on the BPF sampler (bpf/profile.bpf.c): on_sample, loaded as
 * `firn record` loads it (DWARF and Python unwinding, or frame pointers only), is verified in
 * fewer than 20,000 instructions (it was 47,738, ~50 ms of every start: loops the verifier
 * followed iteration by iteration). Needs root and BPF: skipped without them. */
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

#include "profile.skel.h"

#define MAX_VERIFIED 20000

/* Quiet libbpf (a failed load prints the whole verifier log). */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level, (void)fmt, (void)ap;
	return 0;
}

/* Loads on_sample alone with these settings; returns its verified instructions (0: no BPF). */
static uint32_t verified(bool dwarf)
{
	struct profile_bpf *s = profile_bpf__open();
	struct bpf_program *p;
	struct bpf_prog_info info;
	uint32_t len = sizeof(info), n = 0;

	assert_non_null(s);
	s->rodata->filter_pids = 1;
	s->rodata->python_unwind = 1;
	s->rodata->dwarf_unwind = dwarf;
	s->rodata->fp_fallback = dwarf;
	bpf_map__set_max_entries(s->maps.unwind_rows, 1 << 20);
	bpf_map__set_max_entries(s->maps.unwind_umaps, 4096);
	bpf_object__for_each_program(p, s->obj)
		bpf_program__set_autoload(p, p == s->progs.on_sample);
	if (!profile_bpf__load(s)) {
		memset(&info, 0, sizeof(info));
		assert_int_equal(bpf_obj_get_info_by_fd(bpf_program__fd(s->progs.on_sample), &info, &len), 0);
		n = info.verified_insns;
	}
	profile_bpf__destroy(s);
	return n;
}

/* Both unwinders' on_sample stay within the budget. */
static void test_verified_insns(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	uint32_t dwarf = verified(true), fp = verified(false);
	if (!dwarf && !fp)
		skip(); /* no BPF here */
	print_message("on_sample verified instructions: dwarf %u, fp %u\n", dwarf, fp);
	assert_in_range(dwarf, 1, MAX_VERIFIED);
	assert_in_range(fp, 1, MAX_VERIFIED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verified_insns),
	};

	libbpf_set_print(quiet);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
