// SPDX-License-Identifier: GPL-2.0
/* Kernel symbol names from the kernel's own lookup: user space fills ksym_addrs and ksym_n and
 * runs ksym_format (BPF_PROG_RUN), which writes "func+0x12/0x340 [module]" (the kernel's %pS,
 * the text of a stack trace) for each address into ksym_text; an address outside every
 * symbol gives "0xffff...". ksym_core finds the core kernel's text range once. So naming the
 * kernel frames of a profile costs a lookup per address seen, not a read of all /proc/kallsyms. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

#define KSYM_BATCH 256 /* addresses a run names (a power of two: the index is masked) */
#define KSYM_TEXT 704  /* the kernel's KSYM_SYMBOL_LEN, rounded up */

__u64 ksym_addrs[KSYM_BATCH];
__u32 ksym_n;
__s32 ksym_lens[KSYM_BATCH];       /* bpf_snprintf's result: the length with the NUL, or -errno */
char ksym_text[KSYM_BATCH][KSYM_TEXT];
__u64 ksym_core_start, ksym_core_end; /* _stext, and the end of the init text (ksym_core) */
__s32 ksym_core_err;

/* Names one address (bpf_loop's callback). */
static long format_one(__u32 i, void *ctx)
{
	__u64 addr;

	i &= KSYM_BATCH - 1;
	addr = ksym_addrs[i];
	ksym_lens[i] = bpf_snprintf(ksym_text[i], KSYM_TEXT, "%pS", &addr, sizeof(addr));
	return 0;
}

SEC("syscall")
int ksym_format(void *ctx)
{
	__u32 n = ksym_n;

	bpf_loop(n < KSYM_BATCH ? n : KSYM_BATCH, format_one, NULL, 0);
	return 0;
}

/* The address of a core kernel symbol: 0 or -errno (-EPERM when addresses are hidden). */
static long core_symbol(const char *name, int size, __u64 *addr)
{
	return bpf_kallsyms_lookup_name(name, size, 0, addr);
}

SEC("syscall")
int ksym_core(void *ctx)
{
	static const char stext[] = "_stext", etext[] = "_etext", einittext[] = "_einittext";
	__u64 end = 0, initend = 0;
	long err;

	err = core_symbol(stext, sizeof(stext), &ksym_core_start);
	if (!err)
		err = core_symbol(etext, sizeof(etext), &end);
	if (!err && !core_symbol(einittext, sizeof(einittext), &initend) && initend > end)
		end = initend;
	ksym_core_end = end + 1;
	ksym_core_err = err;
	return 0;
}
