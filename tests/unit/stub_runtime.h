/* A stub runtime (lib/runtimes/runtime.h) for tests: it resolves tagged frames of tag STUB_TAG to
 * "stub_fn" and logs every op it gets, so that a test can tell the recorder drove it through a
 * recording (attach, stack, resolve, summary, detach). Its walker is reached through the sample
 * source by its tag alone, as every runtime's: attach hands it struct stub_proc
 * (sample_source_set_proc), its announcements come back by tag (on_code), and its summary
 * reads its walker's counters (sample_source_walker_stats). A runtime is its own files plus one
 * registry line: this file, and the test's `{ &stub_runtime, NULL }`. */
#ifndef FIRN_TEST_STUB_RUNTIME_H
#define FIRN_TEST_STUB_RUNTIME_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strput.h"
#include "runtimes/runtime.h"
#include "source/sample_source.h"

#define STUB_TAG 15
#define STUB_MAGIC 0x57ab

/* What the stub's walker is told of a process. */
struct stub_proc {
	uint32_t magic, pid;
};

/* What the stub was told (one stub at a time: the test's). */
struct stub_log {
	int news, frees, attaches, stacks, resolves, detaches, codes;
	pid_t attached, stacked, resolved, detached; /* the last pid of each */
	uint64_t stack_value;                        /* a tagged value of the last stack */
	int set_rc;                                  /* sample_source_set_proc's, at attach */
	uint32_t code;                               /* the last announcement's first word */
	const struct runtime_host *h;
};
static struct stub_log stub_log;

static struct runtime *stub_new(const struct runtime_host *h)
{
	stub_log.h = h;
	stub_log.news++;
	return (struct runtime *)&stub_log;
}

static void stub_free(struct runtime *rt)
{
	(void)rt;
	stub_log.frees++;
}

static void stub_attach(struct runtime *rt, pid_t pid, bool exec, uint64_t now_ns)
{
	struct stub_proc p = { STUB_MAGIC, (uint32_t)pid };

	(void)rt, (void)exec, (void)now_ns;
	stub_log.attaches++;
	stub_log.attached = pid;
	stub_log.set_rc = sample_source_set_proc(stub_log.h->ss, STUB_TAG, pid, &p, sizeof(p));
}

/* An announcement of its walker (the source routed it here by its tag). */
static int stub_on_code(struct runtime *rt, const void *rec, size_t len)
{
	(void)rt;
	stub_log.codes++;
	if (len >= sizeof(stub_log.code))
		memcpy(&stub_log.code, rec, sizeof(stub_log.code));
	return 0;
}

static void stub_on_stack(struct runtime *rt, pid_t pid, const uint64_t *ips, uint32_t len)
{
	(void)rt;
	stub_log.stacks++;
	stub_log.stacked = pid;
	for (uint32_t i = 0; i < len; i++)
		if (resolver_kind_of(ips[i]) == STUB_TAG)
			stub_log.stack_value = ips[i];
}

static int stub_resolve(struct runtime *rt, pid_t pid, uint64_t v, struct resolved_frame *out,
			int max)
{
	(void)rt, (void)v;
	stub_log.resolves++;
	stub_log.resolved = pid;
	if (max < 1)
		return 0;
	out[0] = (struct resolved_frame){ .name = "stub_fn", .file = "stub.src", .line = 7 };
	return 1;
}

/* Its label contexts: id N is {span: "sN"}, the folded id {span: "other"}, 7 unknown. */
static int stub_labels(struct runtime *rt, pid_t pid, uint32_t id, struct resolved_label *out,
		       int max)
{
	static char value[16];

	(void)rt, (void)pid;
	if (max < 1 || id == 7)
		return 0;
	if (id == 0xffffffu)
		snprintf(value, sizeof(value), "other");
	else
		snprintf(value, sizeof(value), "s%u", id);
	out[0] = (struct resolved_label){ .key = "span", .value = value };
	return 1;
}

/* Its summary: the ops it was given, as a runtime writes its line from its own counters. */
static size_t stub_summary(const struct runtime *rt, char *buf, size_t len)
{
	const struct stub_log *l = (const struct stub_log *)rt;
	uint64_t walked[2];
	size_t off = 0;

	sample_source_walker_stats(l->h->ss, STUB_TAG, walked, 2);
	strput(buf, len, &off, "firn: stub: %d attached, %d resolved, %llu walked\n", l->attaches,
	       l->resolves, (unsigned long long)walked[1]);
	return off;
}

static void stub_detach(struct runtime *rt, pid_t pid)
{
	(void)rt;
	stub_log.detaches++;
	stub_log.detached = pid;
}

static const struct runtime_ops stub_runtime = {
	.name = "stub", .tag = STUB_TAG, .frames = FRAME_NATIVE, .new = stub_new,
	.free = stub_free, .attach = stub_attach, .on_code = stub_on_code, .on_stack = stub_on_stack,
	.resolve = stub_resolve, .labels = stub_labels, .summary = stub_summary, .detach = stub_detach,
};

#endif
