/* Where the recorder's samples come from: the aggregated entries (counts of a pid, tid, stacks
 * and event) and the notices of a process's first sample, exec and exit, behind one interface,
 * so that the recording lifecycle (lib/record/recorder) does not depend on BPF. The BPF sampler
 * (lib/source/sampler.h) is one transport (sample_source_bpf_new); unit tests give a fake one. Each op
 * means what the sampler function of the same name says (sampler.h); the notices go to the
 * callbacks of the struct sampler_opts the source was made with. Optional ops may be NULL:
 * add_target, unwind_maps, attach_usdt, attach_uprobe, set_proc, walker_stats, walker_name,
 * map_update, map_percpu_sum, reset_counts,
 * event_fd (then those features are not available: -ENOTSUP, or zeros; recorder_cut needs
 * reset_counts). The runtime walkers are reached by tag (a FIRN_FRAME_KIND_*): the source
 * names no runtime, each runtime hands its walker its own struct and reads its own counters.
 * One thread at a time. */
#ifndef FIRN_SAMPLE_SOURCE_H
#define FIRN_SAMPLE_SOURCE_H

#include <errno.h>
#include <stddef.h>
#include <sys/types.h>

#include "source/sampler.h"

struct sample_source;

struct sample_source_ops {
	int (*add_target)(struct sample_source *s, pid_t pid, bool held);
	/* the BPF maps of the DWARF unwinder's tables (sampler_unwind_maps) */
	int (*unwind_maps)(struct sample_source *s, struct sampler_unwind_maps *m);
	int (*attach_usdt)(struct sample_source *s, pid_t pid, const char *path,
			   const char *provider, const char *name, uint32_t event);
	int (*attach_uprobe)(struct sample_source *s, const char *prog, pid_t pid, const char *path,
			     const char *func, bool retprobe);
	int (*start)(struct sample_source *s, const char **why);
	void (*stop)(struct sample_source *s);
	int (*poll)(struct sample_source *s, int timeout_ms);
	int (*handle_events)(struct sample_source *s);
	int (*drain)(struct sample_source *s);
	int (*for_each)(struct sample_source *s, int (*fn)(void *ctx, const struct sampler_entry *e),
			void *ctx);
	int (*retire)(struct sample_source *s, const struct sampler_retire_ops *ops);
	int (*park_live)(struct sample_source *s, const struct sampler_retire_ops *ops);
	int (*park_process)(struct sample_source *s, pid_t pid, const struct sampler_retire_ops *ops);
	size_t (*entry_count)(const struct sample_source *s);
	void (*get_stats)(struct sample_source *s, struct sampler_stats *st);
	/* optional: st's bpf_map_bytes and bpf_maps (sampler_map_memory), once at the end */
	void (*map_memory)(struct sample_source *s, struct sampler_stats *st);
	/* optional: sampler_map_update */
	int (*map_update)(struct sample_source *s, const char *map, const void *key,
			  const void *value);
	/* optional: sampler_map_percpu_sum */
	uint64_t (*map_percpu_sum)(struct sample_source *s, const char *map, uint32_t key,
				   size_t off);
	int (*ncpus)(const struct sample_source *s);
	void (*free)(struct sample_source *s);
	/* optional: when (CLOCK_MONOTONIC ns) the last drain flipped the counts maps: every sample
	 * taken before it is in user space (NULL: not known; an exec is then handled with a drain) */
	uint64_t (*last_flip_ns)(const struct sample_source *s);
	/* optional: when (CLOCK_MONOTONIC ns) poll next has timed work (a drain) to do (NULL: not
	 * known; the caller polls every RECORDER_POLL_MS) */
	uint64_t (*next_poll_ns)(const struct sample_source *s);
	/* optional: a runtime walker's per-process values, its counters and its names, by tag
	 * (sampler_set_proc, sampler_walker_stats, sampler_walker_name) */
	int (*set_proc)(struct sample_source *s, unsigned tag, pid_t pid, const void *blob,
			size_t len);
	void (*walker_stats)(struct sample_source *s, unsigned tag, uint64_t *out, size_t n);
	int (*walker_name)(struct sample_source *s, unsigned tag, uint64_t key, char *buf,
			   size_t n);
	void (*reset_counts)(struct sample_source *s);
	int (*event_fd)(const struct sample_source *s);
};

struct sample_source {
	const struct sample_source_ops *ops;
};

/* Makes a sample source from the options (their callbacks receive its notices); NULL + errno,
 * *why naming the step that failed. arg: the maker's own. */
typedef struct sample_source *sample_source_new_fn(const struct sampler_opts *o, void *arg,
						   const char **why);

/* The BPF sampler as a sample source (sampler_new; arg unused). */
struct sample_source *sample_source_bpf_new(const struct sampler_opts *o, void *arg,
					    const char **why);

/* The ops, callable on any source. */
static inline int sample_source_add_target(struct sample_source *s, pid_t pid, bool held)
{
	return s->ops->add_target ? s->ops->add_target(s, pid, held) : -ENOTSUP;
}
static inline int sample_source_unwind_maps(struct sample_source *s,
					    struct sampler_unwind_maps *m)
{
	return s->ops->unwind_maps ? s->ops->unwind_maps(s, m) : -ENOENT;
}
static inline int sample_source_attach_usdt(struct sample_source *s, pid_t pid, const char *path,
					    const char *provider, const char *name, uint32_t event)
{
	return s->ops->attach_usdt ? s->ops->attach_usdt(s, pid, path, provider, name, event)
				   : -ENOTSUP;
}
static inline int sample_source_attach_uprobe(struct sample_source *s, const char *prog,
					      pid_t pid, const char *path, const char *func,
					      bool retprobe)
{
	return s->ops->attach_uprobe ? s->ops->attach_uprobe(s, prog, pid, path, func, retprobe)
				     : -ENOTSUP;
}
static inline int sample_source_reset_counts(struct sample_source *s)
{
	if (!s->ops->reset_counts)
		return -ENOTSUP;
	s->ops->reset_counts(s);
	return 0;
}
static inline int sample_source_event_fd(const struct sample_source *s)
{
	return s->ops->event_fd ? s->ops->event_fd(s) : -ENOTSUP;
}
/* sampler_set_proc: -ENOTSUP on a source without walkers. */
static inline int sample_source_set_proc(struct sample_source *s, unsigned tag, pid_t pid,
					 const void *blob, size_t len)
{
	return s->ops->set_proc ? s->ops->set_proc(s, tag, pid, blob, len) : -ENOTSUP;
}
/* sampler_walker_stats: out[0..n) zeros on a source without walkers (or with no s). */
static inline void sample_source_walker_stats(struct sample_source *s, unsigned tag,
					      uint64_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = 0;
	if (s && s->ops->walker_stats)
		s->ops->walker_stats(s, tag, out, n);
}
/* sampler_walker_name: -ENOTSUP on a source without walkers. */
static inline int sample_source_walker_name(struct sample_source *s, unsigned tag, uint64_t key,
					    char *buf, size_t n)
{
	return s->ops->walker_name ? s->ops->walker_name(s, tag, key, buf, n) : -ENOTSUP;
}
/* sampler_map_update: -ENOTSUP on a source without BPF maps. */
static inline int sample_source_map_update(struct sample_source *s, const char *map,
					   const void *key, const void *value)
{
	return s->ops->map_update ? s->ops->map_update(s, map, key, value) : -ENOTSUP;
}
/* sampler_map_percpu_sum: 0 on a source without BPF maps. */
static inline uint64_t sample_source_map_percpu_sum(struct sample_source *s, const char *map,
						    uint32_t key, size_t off)
{
	return s->ops->map_percpu_sum ? s->ops->map_percpu_sum(s, map, key, off) : 0;
}
static inline void sample_source_free(struct sample_source *s)
{
	if (s)
		s->ops->free(s);
}

#endif
