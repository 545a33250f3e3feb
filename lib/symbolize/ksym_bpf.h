/* The kernel's own symbol lookup, run from user space: a BPF syscall program (bpf/ksym.bpf.c,
 * run with BPF_PROG_RUN) names a batch of kernel addresses as the kernel's stack traces do
 * ("func+0x12/0x340 [module]"), so that naming kernel frames costs a lookup per address instead
 * of a read of all /proc/kallsyms. Needs CAP_BPF and CAP_PERFMON (root) and a kernel with
 * syscall programs, bpf_loop and bpf_kallsyms_lookup_name (5.17); lib/symbolize/ksym falls back to
 * /proc/kallsyms where it cannot open. One thread at a time. */
#ifndef FIRN_KSYM_BPF_H
#define FIRN_KSYM_BPF_H

#include <stddef.h>
#include <stdint.h>

struct ksym_bpf;

/* What the kernel says of one address. */
struct ksym_bpf_hit {
	const char *name;   /* NULL when no symbol covers the address */
	const char *module; /* NULL: core kernel or a BPF program (the kernel names no module) */
	uint64_t offset;    /* of the address from the symbol's start */
	uint64_t size;      /* of the symbol */
};

/* Loads the program and finds the core kernel's text range ([start, end): _stext to the end of
 * the init text). NULL with errno: EPERM without the capabilities or where kernel addresses are
 * hidden (kptr_restrict), EINVAL/ENOENT where the kernel lacks what the program needs, ENOMEM. */
struct ksym_bpf *ksym_bpf_open(uint64_t *core_start, uint64_t *core_end);
void ksym_bpf_close(struct ksym_bpf *b);

/* How many addresses one ksym_bpf_lookup takes at most (bpf/ksym.bpf.c's KSYM_BATCH). */
#define KSYM_BPF_BATCH 256

/* Names addrs[0..n) (n up to KSYM_BPF_BATCH) into hits[0..n) in one run of the program. The
 * strings point into b and stay until the next lookup or ksym_bpf_close. 0, -EINVAL when n is
 * too large, or the run's -errno. */
int ksym_bpf_lookup(struct ksym_bpf *b, const uint64_t *addrs, size_t n, struct ksym_bpf_hit *hits);

/* Parses one "name+0xOFF/0xSIZE [module]" text in place (NUL-terminating name and module) into
 * hit. 0, or -ENOENT for anything else (the kernel prints "0xADDR" for an unnamed address). */
int ksym_bpf_parse(char *text, struct ksym_bpf_hit *hit);

#endif
