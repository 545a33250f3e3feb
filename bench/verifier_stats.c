/* The kernel verifier's own statistics of one program of bpf/profile.bpf.c, loaded alone with
 * the settings of a recording (as tests/unit/test_bpfverify.c loads it): "processed N insns ...
 * total_states ... peak_states ... verification time X usec" (log level 4, BPF_LOG_STATS), and
 * the load's wall time. Usage: verifier_stats PROG [fp] [walkers-mask] [reps]; walkers-mask
 * is rodata's walkers_on (default: every walker). Needs root. Issue 51. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../bpf/firn.h"
#include "../bpf/walkers.h"
#include "profile.skel.h"

static char log_buf[64 << 20];

/* Quiet libbpf. */
static int quiet(enum libbpf_print_level l, const char *f, va_list ap)
{
	(void)l, (void)f, (void)ap;
	return 0;
}

/* Loads prog alone once; prints its stats line and the load's wall time; returns 0 or -1. */
static int load_once(const char *prog, int dwarf, unsigned mask)
{
	struct profile_bpf *s = profile_bpf__open();
	struct bpf_program *p, *want;
	struct timespec a, b;

	if (!s || !(want = bpf_object__find_program_by_name(s->obj, prog)))
		return -1;
	s->rodata->filter_pids = 1;
	s->rodata->walkers_on = mask;
	for (size_t i = 0; i < FIRN_NWALKERS; i++)
		if (firn_walkers[i].prog)
			s->rodata->walkers_tail |= 1u << firn_walkers[i].tag;
	s->rodata->dwarf_unwind = dwarf;
	s->rodata->fp_fallback = dwarf;
	s->rodata->want_user = 1;
	s->rodata->want_kernel = 1;
	bpf_object__for_each_program(p, s->obj)
		bpf_program__set_autoload(p, p == want);
	bpf_program__set_log_buf(want, log_buf, sizeof(log_buf));
	bpf_program__set_log_level(want, getenv("VS_LOG") ? atoi(getenv("VS_LOG")) : 4);
	log_buf[0] = 0;
	clock_gettime(CLOCK_MONOTONIC, &a);
	int err = profile_bpf__load(s);
	clock_gettime(CLOCK_MONOTONIC, &b);
	char *line = strstr(log_buf, "processed ");
	char *vt = strstr(log_buf, "verification time");
	printf("%s %s mask=%#x load=%.1f ms err=%d | %.*s| %.*s\n", prog, dwarf ? "dwarf" : "fp", mask,
	       (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6, err,
	       vt ? (int)strcspn(vt, "\n") : 0, vt ? vt : "", line ? (int)strcspn(line, "\n") : 0,
	       line ? line : "");
	if (getenv("VS_DUMP")) {
		FILE *f = fopen(getenv("VS_DUMP"), "w");
		if (f)
			fputs(log_buf, f), fclose(f);
	}
	profile_bpf__destroy(s);
	return err ? -1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	int dwarf = !(argc > 2 && !strcmp(argv[2], "fp"));
	unsigned mask = argc > 3 ? strtoul(argv[3], NULL, 0) : ~0u;
	int reps = argc > 4 ? atoi(argv[4]) : 1;

	libbpf_set_print(quiet);
	for (int i = 0; i < reps; i++)
		if (load_once(argv[1], dwarf, mask))
			return 1;
	return 0;
}
