/* The registry of runtimes (one line each, as git's commands[]) and the set running in one
 * recording (see runtime.h). */
#include "runtime.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpuframes.h"
#include "pyframes.h"
#include "recorder.h"
#include "v8frames.h"

const struct runtime_ops *const runtimes[] = {
	&runtime_python,
	&runtime_gpu,
	&runtime_v8,
	NULL,
};

bool runtime_host_off(const struct runtime_host *h, const char *name)
{
	if (h->no_python && !strcmp(name, runtime_python.name))
		return true;
	for (int i = 0; i < h->noff; i++)
		if (!strcmp(h->off[i], name))
			return true;
	return false;
}

void runtime_set_configure(const struct runtime_ops *const *reg, const struct runtime_host *h,
			   struct sampler_opts *so)
{
	for (reg = reg ? reg : runtimes; *reg; reg++)
		if ((*reg)->configure && !runtime_host_off(h, (*reg)->name))
			(*reg)->configure(h, so);
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
		err = start_one(s, reg[i], h);
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

void runtime_set_poll(struct runtime_set *s, uint64_t now_ns)
{
	EACH(s, poll, now_ns);
}

void runtime_set_detach(struct runtime_set *s, pid_t pid)
{
	EACH(s, detach, pid);
}

/* frame_resolver.resolve of a slot: its runtime's resolve. */
static int slot_resolve(void *ctx, pid_t pid, uint64_t v, struct resolved_frame *out, int max)
{
	const struct runtime_slot *slot = ctx;

	return slot->ops->resolve ? slot->ops->resolve(slot->rt, pid, v, out, max) : 0;
}

struct frame_resolver runtime_set_resolver(const struct runtime_set *s, size_t i)
{
	const struct runtime_slot *slot = &s->slots[i];

	return (struct frame_resolver){
		/* a runtime without a mapping of its own: "[unknown]" (lib/capture.c) */
		.mapping = slot->ops->frames ? frame_runtime_mapping(slot->ops->frames) : NULL,
		.kind = FRAME_USER,
		.runtime = slot->ops->frames, .resolve = slot_resolve, .ctx = (void *)slot,
	};
}

int runtime_set_stats(const struct runtime_set *s, const struct runtime_ops *ops, void *out,
		      size_t size)
{
	struct runtime *rt = runtime_set_find(s, ops);

	memset(out, 0, size);
	return rt && ops->stats ? ops->stats(rt, out, size) : 0;
}

void recorder_python_stats(const struct recorder *r, struct pyframes_stats *st, uint64_t *bpf)
{
	runtime_set_stats(recorder_runtimes(r), &runtime_python, st, sizeof(*st));
	memcpy(bpf, st->bpf, sizeof(st->bpf));
}
