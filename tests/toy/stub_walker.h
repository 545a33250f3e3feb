/* The stub runtime with a BPF walker of its own (bpf/stub.bpf.h): what a runtime with a walker
 * costs, its own files (this one, the walker) plus a row in the registry and one in
 * bpf/walkers.h. Compiled only into build/tests/firn-toy's registry (tests/toy/toy_runtime.h adds
 * its line), and on there only with FIRN_TOY_STUB set in the environment, so firn-toy's other
 * tests record without it. Its walker is told of every process attached (struct firn_stub_proc
 * by its tag), adds one frame per sample, which it resolves to "stub_frame", and counts by tag
 * what its summary line reports (tests/cli/test_stub_walker.sh). */
#ifndef FIRN_TESTS_STUB_WALKER_H
#define FIRN_TESTS_STUB_WALKER_H

#include <errno.h>
#include <stdlib.h>

#include <linux/types.h>

#include "../../bpf/firn.h"
#include "../../bpf/stub.bpf.h"
#include "base/strput.h"
#include "runtimes/runtime.h"
#include "source/sample_source.h"
#include "source/sampler.h"

#define STUB_WALKER_MAGIC 0x57ab

/* Its state in one recording: the host and the processes told. */
struct stub_walker {
	const struct runtime_host *h;
	unsigned told;
};

/* On only where the test asks for it (FIRN_TOY_STUB): firn-toy's other recordings stay as they were. */
static bool stub_walker_wanted(void)
{
	return getenv("FIRN_TOY_STUB") != NULL;
}

/* Its walker runs in this recording: its program goes in the unwinders array at its tag. */
static void stub_walker_configure(const struct runtime_host *h, struct sampler_opts *so)
{
	(void)h;
	if (stub_walker_wanted())
		so->walkers |= 1u << FIRN_FRAME_KIND_STUB;
}

/* Its state; declines (NULL, errno 0) where the test did not ask for it. */
static struct runtime *stub_walker_new(const struct runtime_host *h)
{
	struct stub_walker *s;

	errno = 0;
	if (!stub_walker_wanted())
		return NULL;
	if (!(s = calloc(1, sizeof(*s)))) {
		errno = ENOMEM;
		return NULL;
	}
	s->h = h;
	return (struct runtime *)s;
}

/* Frees what new made. */
static void stub_walker_free(struct runtime *rt)
{
	free(rt);
}

/* Tells the walker of the process by its tag alone (the sample source names no runtime). */
static void stub_walker_attach(struct runtime *rt, pid_t pid, bool exec, uint64_t now_ns)
{
	struct stub_walker *s = (struct stub_walker *)rt;
	struct firn_stub_proc p = { STUB_WALKER_MAGIC, (__u32)pid };

	(void)exec, (void)now_ns;
	if (sample_source_set_proc(s->h->ss, FIRN_FRAME_KIND_STUB, pid, &p, sizeof(p)) == 0)
		s->told++;
}

/* Its frame, whatever the payload: one plain frame named stub_frame. */
static int stub_walker_resolve(struct runtime *rt, pid_t pid, uint64_t v,
			       struct resolved_frame *out, int max)
{
	(void)rt, (void)pid;
	if (max < 1 || (v & FIRN_FRAME_PAYLOAD_MASK) != STUB_WALKER_MAGIC)
		return 0;
	out[0] = (struct resolved_frame){ .name = "stub_frame", .file = "stub.bpf.h" };
	return 1;
}

/* "firn: stub: N processes, A frames added, F full": from its walker's counters, by tag. */
static size_t stub_walker_summary(const struct runtime *rt, char *buf, size_t len)
{
	const struct stub_walker *s = (const struct stub_walker *)rt;
	uint64_t c[FIRN_STUB_NR];
	size_t off = 0;

	if (!s->told)
		return 0;
	sample_source_walker_stats(s->h->ss, FIRN_FRAME_KIND_STUB, c, FIRN_STUB_NR);
	strput(buf, len, &off, "firn: stub: %u processes, %llu frames added, %llu full\n", s->told,
	       (unsigned long long)c[FIRN_STUB_ADDED], (unsigned long long)c[FIRN_STUB_FULL]);
	return off;
}

static const struct runtime_ops stub_walker_runtime = {
	.name = "stub", .tag = FIRN_FRAME_KIND_STUB, .frames = FRAME_NATIVE,
	.configure = stub_walker_configure, .new = stub_walker_new, .free = stub_walker_free,
	.attach = stub_walker_attach, .resolve = stub_walker_resolve,
	.summary = stub_walker_summary,
};

#endif
