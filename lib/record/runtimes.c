/* The registry of runtimes (one line each, as git's commands[]) and the set running in one
 * recording (see runtimes.h). */
#include "record/runtimes.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "source/procdispatch.h"
#include "proc/procevents.h"

#include "runtimes/goruntime.h"
#include "runtimes/gpuframes.h"
#include "runtimes/pyframes.h"
#include "record/recorder.h"
#include "runtimes/otelthread.h"
#include "runtimes/v8frames.h"
#include "runtimes/hotspot_runtime.h"

const struct runtime_ops *const runtimes[] = {
	&runtime_python,
	&runtime_gpu,
	&runtime_v8,
	&runtime_java,
	&runtime_otel,
	&runtime_go,
#ifdef FIRN_TEST_TOY_RUNTIME
	FIRN_TEST_TOY_RUNTIME
#endif
	NULL,
};

/* Whether entry i of a registry is off in h (bits past 31: never turned off). */
static bool is_off(const struct runtime_host *h, size_t i)
{
	return i < 32 && (h->off >> i & 1);
}

void runtime_set_configure(const struct runtime_ops *const *reg, const struct runtime_host *h,
			   struct sampler_opts *so)
{
	reg = reg ? reg : runtimes;
	for (size_t i = 0; reg[i]; i++)
		if (reg[i]->configure && !is_off(h, i))
			reg[i]->configure(h, so);
}

/* Whether tag is taken by a runtime of s already (each tag has one resolver). */
static bool tag_taken(const struct runtime_set *s, unsigned tag)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->slots[i].ops->tag == tag)
			return true;
	return false;
}

/* Starts one runtime (it may decline: 0 with nothing added). */
static int start_one(struct runtime_set *s, const struct runtime_ops *ops,
		     const struct runtime_host *h)
{
	if (!ops->tag || ops->tag > 15 || tag_taken(s, ops->tag))
		return -EINVAL;
	errno = 0;
	struct runtime *rt = ops->new(h);
	if (!rt)
		return errno ? -errno : 0;
	s->slots[s->n++] = (struct runtime_slot){ ops, rt };
	return 0;
}

int runtime_set_init(struct runtime_set *s, const struct runtime_ops *const *reg,
		     const struct runtime_host *h)
{
	size_t n = 0;
	int err = 0;

	*s = (struct runtime_set){ 0 };
	reg = reg ? reg : runtimes;
	while (reg[n])
		n++;
	if (n && !(s->slots = calloc(n, sizeof(*s->slots))))
		return -ENOMEM;
	for (size_t i = 0; i < n && !err; i++)
		err = is_off(h, i) ? 0 : start_one(s, reg[i], h);
	if (err)
		runtime_set_release(s);
	return err;
}

void runtime_set_release(struct runtime_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		s->slots[i].ops->free(s->slots[i].rt);
	free(s->slots);
	*s = (struct runtime_set){ 0 };
}

struct runtime *runtime_set_find(const struct runtime_set *s, const struct runtime_ops *ops)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->slots[i].ops == ops)
			return s->slots[i].rt;
	return NULL;
}

/* Calls op of every running runtime that has it (the rest of the call its arguments). */
#define EACH(s, op, ...)                                                        \
	for (size_t i_ = 0; i_ < (s)->n; i_++)                                  \
		if ((s)->slots[i_].ops->op)                                     \
			(s)->slots[i_].ops->op((s)->slots[i_].rt, __VA_ARGS__)

void runtime_set_attach(struct runtime_set *s, pid_t pid, bool exec, uint64_t now_ns)
{
	EACH(s, attach, pid, exec, now_ns);
}

void runtime_set_on_mapping(struct runtime_set *s, pid_t pid, const struct procmap_entry *e,
			    uint64_t now_ns)
{
	EACH(s, on_mapping, pid, e, now_ns);
}

void runtime_set_on_code(struct runtime_set *s, unsigned tag, const void *rec, size_t len)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->slots[i].ops->tag == tag && s->slots[i].ops->on_code)
			(void)s->slots[i].ops->on_code(s->slots[i].rt, rec, len); /* -ENOMEM: unnamed */
}

void runtime_set_on_stack(struct runtime_set *s, pid_t pid, const uint64_t *ips, uint32_t len)
{
	EACH(s, on_stack, pid, ips, len);
}

uint64_t runtime_set_poll(struct runtime_set *s, uint64_t now_ns)
{
	uint64_t next = 0;

	for (size_t i = 0; i < s->n; i++) {
		uint64_t due = s->slots[i].ops->poll ? s->slots[i].ops->poll(s->slots[i].rt, now_ns) : 0;
		if (due && (!next || due < next))
			next = due;
	}
	return next;
}

void runtime_set_detach(struct runtime_set *s, pid_t pid)
{
	EACH(s, detach, pid);
}

void runtime_set_cut(struct runtime_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->slots[i].ops->cut)
			s->slots[i].ops->cut(s->slots[i].rt);
}

/* frame_resolver.resolve of a slot: its runtime's resolve. */
static int slot_resolve(void *ctx, pid_t pid, uint64_t v, struct resolved_frame *out, int max)
{
	const struct runtime_slot *slot = ctx;

	return slot->ops->resolve ? slot->ops->resolve(slot->rt, pid, v, out, max) : 0;
}

/* frame_resolver.labels of a slot: its runtime's labels. */
static int slot_labels(void *ctx, pid_t pid, uint32_t id, struct resolved_label *out, int max)
{
	const struct runtime_slot *slot = ctx;

	return slot->ops->labels ? slot->ops->labels(slot->rt, pid, id, out, max) : 0;
}

/* frame_resolver.proc_labels of a slot: its runtime's proc_labels. */
static int slot_proc_labels(void *ctx, pid_t pid, struct resolved_label *out, int max)
{
	const struct runtime_slot *slot = ctx;

	return slot->ops->proc_labels ? slot->ops->proc_labels(slot->rt, pid, out, max) : 0;
}

struct frame_resolver runtime_set_resolver(const struct runtime_set *s, size_t i)
{
	const struct runtime_slot *slot = &s->slots[i];

	return (struct frame_resolver){
		/* a runtime without a mapping of its own: "[unknown]" (lib/record/capture.c) */
		.mapping = slot->ops->frames ? frame_runtime_mapping(slot->ops->frames) : NULL,
		.kind = FRAME_USER,
		.runtime = slot->ops->frames, .resolve = slot_resolve,
		.labels = slot->ops->labels ? slot_labels : NULL,
		.proc_labels = slot->ops->proc_labels ? slot_proc_labels : NULL, .ctx = (void *)slot,
	};
}

/* A sampled process mapped code: a runtime loaded by dlopen (or mapped after the first sample)
 * is found now. */
static int on_record(void *ctx, const struct proc_event *ev, pid_t pid)
{
	struct runtime_set *s = ctx;
	char path[PATH_MAX];

	if (pid <= 0 || ev->kind != PROC_EV_MMAP || !s->sampled(s->sampled_ctx, pid))
		return 0;
	struct procmap_entry e = procmap_entry_of_event(ev, path, sizeof(path));
	runtime_set_on_mapping(s, ev->pid, &e, mono_ns());
	return 0;
}

/* A process first sampled or exec'd: each runtime looks for itself in it, with its mappings
 * (not in one that is gone: its /proc and memory are, too). */
static void on_process(void *ctx, pid_t pid, bool exec)
{
	struct runtime_set *s = ctx;

	procdispatch_read(s->pd);
	if (procdispatch_gone(s->pd, pid))
		return;
	procdispatch_learn(s->pd, pid); /* one /proc read for every runtime (and the snapshot) */
	runtime_set_attach(s, pid, exec, mono_ns());
}

/* Code without a table: a runtime's library may have been mapped (found now). */
static void on_no_table(void *ctx, pid_t pid, uint64_t addr)
{
	(void)addr;
	runtime_set_on_mapping(ctx, pid, NULL, mono_ns());
}

static void on_code(void *ctx, unsigned tag, const void *rec, size_t len)
{
	runtime_set_on_code(ctx, tag, rec, len);
}

static void on_stack(void *ctx, pid_t pid, const uint64_t *ips, uint32_t len)
{
	runtime_set_on_stack(ctx, pid, ips, len);
}

void runtime_set_listener(struct runtime_set *s, struct procdispatch *pd,
			  bool (*sampled)(void *ctx, pid_t pid), void *ctx,
			  struct procdispatch_listener *out)
{
	s->pd = pd;
	s->sampled = sampled;
	s->sampled_ctx = ctx;
	*out = (struct procdispatch_listener){
		.on_record = on_record, .on_process = on_process, .on_no_table = on_no_table,
		.on_code = on_code, .on_stack = on_stack, .ctx = s,
	};
}

int runtime_set_stats(const struct runtime_set *s, const struct runtime_ops *ops, void *out,
		      size_t size)
{
	struct runtime *rt = runtime_set_find(s, ops);

	memset(out, 0, size);
	return rt && ops->stats ? ops->stats(rt, out, size) : 0;
}

size_t runtime_set_summary(const struct runtime_set *s, char *buf, size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < s->n && used + 1 < len; i++) {
		const struct runtime_slot *sl = &s->slots[i];
		if (sl->ops->summary)
			used += sl->ops->summary(sl->rt, buf + used, len - used);
	}
	return used;
}

/* Whether name is one of the n names in list. */
static bool named(const char *const *list, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(list[i], name))
			return true;
	return false;
}

/* The off bits of o's runtime names over reg: --no-NAME turns one off, an opt_in one is off
 * until named on, so the host names no runtime. */
static uint32_t off_bits(const struct runtime_ops *const *reg, const struct recorder_opts *o)
{
	uint32_t off = 0;

	for (size_t i = 0; i < 32 && reg[i]; i++)
		if (named(o->runtimes_off, o->nruntimes_off, reg[i]->name) ||
		    (reg[i]->opt_in && !named(o->runtimes_on, o->nruntimes_on, reg[i]->name)))
			off |= 1u << i;
	return off;
}

void runtime_host_of_opts(struct runtime_host *h, const struct recorder_opts *o,
			  runtime_maps_fn maps, void *ctx)
{
	bool command = !o->all && !o->npids;

	*h = (struct runtime_host){
		.demangle = o->demangle, .all = o->all,
		.off = off_bits(o->runtimes ? o->runtimes : runtimes, o),
		.argc = command ? o->argc : 0, .argv = o->argv, .maps = maps, .ctx = ctx,
	};
}

