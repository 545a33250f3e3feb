/* The BPF sampler behind the sample source interface: each op calls the sampler function of
 * the same name. */
#include "source/sample_source.h"

#include <stdlib.h>

struct bpf_source {
	struct sample_source base;
	struct sampler *s;
};

/* The sampler of a source made here. */
static struct sampler *sam(const struct sample_source *src)
{
	return ((const struct bpf_source *)src)->s;
}

static int bpf_add_target(struct sample_source *s, pid_t pid, bool held)
{
	return sampler_add_target(sam(s), pid, held);
}

static int bpf_unwind_maps(struct sample_source *s, struct sampler_unwind_maps *m)
{
	return sampler_unwind_maps(sam(s), m);
}

static int bpf_attach_usdt(struct sample_source *s, pid_t pid, const char *path,
			   const char *provider, const char *name, uint32_t event)
{
	return sampler_attach_usdt(sam(s), pid, path, provider, name, event);
}

static int bpf_attach_uprobe(struct sample_source *s, const char *prog, pid_t pid,
			     const char *path, const char *func, bool retprobe)
{
	return sampler_attach_uprobe(sam(s), prog, pid, path, func, retprobe);
}

static int bpf_start(struct sample_source *s, const char **why)
{
	return sampler_start(sam(s), why);
}

static void bpf_stop(struct sample_source *s)
{
	sampler_stop(sam(s));
}

static int bpf_poll(struct sample_source *s, int timeout_ms)
{
	return sampler_poll(sam(s), timeout_ms);
}

static int bpf_handle_events(struct sample_source *s)
{
	return sampler_handle_events(sam(s));
}

static int bpf_drain(struct sample_source *s)
{
	return sampler_drain(sam(s));
}

static int bpf_for_each(struct sample_source *s,
			int (*fn)(void *ctx, const struct sampler_entry *e), void *ctx)
{
	return sampler_for_each(sam(s), fn, ctx);
}

static int bpf_retire(struct sample_source *s, const struct sampler_retire_ops *ops)
{
	return sampler_retire(sam(s), ops);
}

static int bpf_park_live(struct sample_source *s, const struct sampler_retire_ops *ops)
{
	return sampler_park_live(sam(s), ops);
}

static int bpf_park_process(struct sample_source *s, pid_t pid,
			    const struct sampler_retire_ops *ops)
{
	return sampler_park_process(sam(s), pid, ops);
}

static size_t bpf_entry_count(const struct sample_source *s)
{
	return sampler_entry_count(sam(s));
}

static void bpf_get_stats(struct sample_source *s, struct sampler_stats *st)
{
	sampler_get_stats(sam(s), st);
}

static int bpf_ncpus(const struct sample_source *s)
{
	return sampler_ncpus(sam(s));
}

static uint64_t bpf_next_poll_ns(const struct sample_source *s)
{
	return sampler_next_drain_ns(sam(s));
}

static uint64_t bpf_last_flip_ns(const struct sample_source *s)
{
	return sampler_last_flip_ns(sam(s));
}

static void bpf_reset_counts(struct sample_source *s)
{
	sampler_reset_counts(sam(s));
}

static int bpf_event_fd(const struct sample_source *s)
{
	return sampler_event_fd(sam(s));
}

static int bpf_walker_name(struct sample_source *s, unsigned tag, uint64_t key, char *buf,
			   size_t n)
{
	return sampler_walker_name(sam(s), tag, key, buf, n);
}

static void bpf_free(struct sample_source *s)
{
	sampler_free(sam(s));
	free(s);
}

static int bpf_set_proc(struct sample_source *s, unsigned tag, pid_t pid, const void *blob,
			size_t len)
{
	return sampler_set_proc(sam(s), tag, pid, blob, len);
}

static void bpf_walker_stats(struct sample_source *s, unsigned tag, uint64_t *out, size_t n)
{
	sampler_walker_stats(sam(s), tag, out, n);
}

static int bpf_map_update(struct sample_source *s, const char *map, const void *key,
			  const void *value)
{
	return sampler_map_update(sam(s), map, key, value);
}

static uint64_t bpf_map_percpu_sum(struct sample_source *s, const char *map, uint32_t key,
				   size_t off)
{
	return sampler_map_percpu_sum(sam(s), map, key, off);
}

static void bpf_map_memory(struct sample_source *s, struct sampler_stats *st)
{
	(void)s;
	sampler_map_memory(st);
}

static const struct sample_source_ops bpf_ops = {
	.add_target = bpf_add_target, .unwind_maps = bpf_unwind_maps,
	.attach_usdt = bpf_attach_usdt, .attach_uprobe = bpf_attach_uprobe,
	.start = bpf_start, .stop = bpf_stop, .poll = bpf_poll,
	.handle_events = bpf_handle_events, .drain = bpf_drain, .for_each = bpf_for_each,
	.retire = bpf_retire, .park_live = bpf_park_live, .park_process = bpf_park_process,
	.entry_count = bpf_entry_count, .get_stats = bpf_get_stats, .ncpus = bpf_ncpus,
	.free = bpf_free, .set_proc = bpf_set_proc, .walker_stats = bpf_walker_stats,
	.walker_name = bpf_walker_name, .reset_counts = bpf_reset_counts, .event_fd = bpf_event_fd,
	.last_flip_ns = bpf_last_flip_ns, .next_poll_ns = bpf_next_poll_ns,
	.map_memory = bpf_map_memory, .map_update = bpf_map_update,
	.map_percpu_sum = bpf_map_percpu_sum,
};

struct sample_source *sample_source_bpf_new(const struct sampler_opts *o, void *arg,
					    const char **why)
{
	struct bpf_source *b = calloc(1, sizeof(*b));

	(void)arg;
	if (!b)
		return NULL;
	b->base.ops = &bpf_ops;
	if (!(b->s = sampler_new(o, why))) {
		free(b);
		return NULL;
	}
	return &b->base;
}
