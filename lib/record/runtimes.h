/* The registry of runtimes (one line each, as git's commands[]) and the set of them running in
 * one recording, which calls their ops (lib/runtimes/runtime.h) as the recording goes: the layer
 * above the runtimes, so that the runtimes call nothing of it. */
#ifndef FIRN_RECORD_RUNTIMES_H
#define FIRN_RECORD_RUNTIMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/resolver.h"
#include "runtimes/runtime.h"

struct procdispatch;
struct procdispatch_listener;

/* The registry: every runtime firn has, NULL-terminated (at most 15: one tag each). */
extern const struct runtime_ops *const runtimes[];

/* The runtimes running in one recording. */
struct runtime_set {
	struct runtime_slot {
		const struct runtime_ops *ops;
		struct runtime *rt;
	} *slots;
	size_t n;
	/* runtime_set_listener's: the dispatcher, and which processes are sampled */
	struct procdispatch *pd;
	bool (*sampled)(void *ctx, pid_t pid);
	void *sampled_ctx;
};

struct recorder_opts;
/* The host of a recording with options o (lib/record/recorder.h; the sample source left NULL),
 * maps and ctx as struct runtime_host's. Its off bits follow o's runtime names by the registry
 * o->runtimes (NULL: runtimes[]): an entry named in runtimes_off is off, and an opt_in entry is
 * off unless named in runtimes_on; a name no entry has turns nothing off or on. */
void runtime_host_of_opts(struct runtime_host *h, const struct recorder_opts *o,
			  runtime_maps_fn maps, void *ctx);
/* Lets each runtime of reg (NULL: runtimes[]) that is not off in h set what its walker needs
 * in so. */
void runtime_set_configure(const struct runtime_ops *const *reg, const struct runtime_host *h,
			   struct sampler_opts *so);
/* Starts each runtime of reg (NULL-terminated; NULL: runtimes[]) that is not off in h and wants
 * this recording. 0 or -errno (-ENOMEM; -EINVAL: two runtimes with one tag, or a tag outside
 * 1..15), the set then empty. */
int runtime_set_init(struct runtime_set *s, const struct runtime_ops *const *reg,
		     const struct runtime_host *h);
void runtime_set_release(struct runtime_set *s);
/* The running state of ops in s (NULL: not running). */
struct runtime *runtime_set_find(const struct runtime_set *s, const struct runtime_ops *ops);
/* The ops, to every running runtime that has them. */
void runtime_set_attach(struct runtime_set *s, pid_t pid, bool exec, uint64_t now_ns);
void runtime_set_on_mapping(struct runtime_set *s, pid_t pid, const struct procmap_entry *e,
			    uint64_t now_ns);
/* To the runtime of tag only. */
void runtime_set_on_code(struct runtime_set *s, unsigned tag, const void *rec, size_t len);
void runtime_set_on_stack(struct runtime_set *s, pid_t pid, const uint64_t *ips, uint32_t len);
/* Polls every runtime; returns the earliest time one wants to be polled again (0: none). */
uint64_t runtime_set_poll(struct runtime_set *s, uint64_t now_ns);
void runtime_set_detach(struct runtime_set *s, pid_t pid);
/* Tells every runtime that a cut's samples were named (its ops' cut). */
void runtime_set_cut(struct runtime_set *s);
/* The resolver of slot i's frames, for capture_set_resolver(cap, slot's tag, ...): its
 * mapping name and runtime from lib/model/frame_kind.h's table. ctx: the slot (valid while s is). */
struct frame_resolver runtime_set_resolver(const struct runtime_set *s, size_t i);
/* The runtimes as a process listener of pd (lib/source/procdispatch.h), ctx s: attach at a process's
 * first sample or exec (after the records waiting are read), on_mapping at an mmap record of a
 * process that sampled(ctx, pid) says is sampled and at code without a table, on_code, on_stack. */
void runtime_set_listener(struct runtime_set *s, struct procdispatch *pd,
			  bool (*sampled)(void *ctx, pid_t pid), void *ctx,
			  struct procdispatch_listener *out);
/* The stats of the running ops into out (zeros when it is not running): as its stats op. */
int runtime_set_stats(const struct runtime_set *s, const struct runtime_ops *ops, void *out,
		      size_t size);
/* The summary lines of every running runtime with a summary op, in registry order, into buf
 * (len bytes; "" when none has anything to say). Returns the length, truncated at len - 1. */
size_t runtime_set_summary(const struct runtime_set *s, char *buf, size_t len);

#endif
