/* USDT probes (-e usdt:..., and the probes --cuda and -e alloc route: cuda.bpf.h, alloc.bpf.h),
 * included by profile.bpf.c after the stack takers: one program for every probe attached, the
 * event of each hit named by its attachment's cookie. */
#ifndef FIRN_BPF_USDT_HIT_H
#define FIRN_BPF_USDT_HIT_H

#include "cuda.bpf.h"

const volatile __u32 want_gpu = 0; /* 1: --cuda, the USDT program routes libfirn-cuda's probes */

#include "alloc.bpf.h"

const volatile __u32 want_alloc = 0; /* 1: -e alloc, the USDT program routes otel_memory's probes */

/* A USDT probe was hit (in user mode: no kernel stack): count the stack under the event the
 * attachment's cookie names. */
SEC("usdt")
int BPF_USDT(on_usdt)
{
	__u32 cookie = (__u32)bpf_usdt_cookie(ctx);

	/* libfirn-cuda's probes (--cuda) have cookies of their own; without --cuda the verifier
	 * drops the GPU paths (want_gpu is read-only), a third of what it walks here */
	if (want_alloc && alloc_hit(ctx, cookie)) /* -e alloc's, the same way */
		return 0;
	return want_gpu && gpu_hit(ctx, cookie) ? 0 : count_hit(ctx, true, cookie);
}

#endif
