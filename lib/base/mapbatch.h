/* Draining a BPF hash map from user space in batches: BPF_MAP_LOOKUP_AND_DELETE_BATCH hands out
 * and deletes up to MAPBATCH_N entries per system call, where an entry-by-entry walk costs three
 * (get_next_key, lookup, delete). For maps no BPF program writes while they are drained (the
 * sampler's flipped counts maps), or whose programs only insert whole values (BPF_NOEXIST: the
 * sampler's stacks and thread names; one inserted meanwhile is drained whole or left for the
 * next drain), never changed in place; not for per-CPU maps. */
#ifndef FIRN_MAPBATCH_H
#define FIRN_MAPBATCH_H

#include <stddef.h>

#define MAPBATCH_N 256 /* entries per system call */

/* Called for each entry drained; a non-zero return stops the drain and is returned. */
typedef int (*mapbatch_fn)(void *ctx, const void *key, const void *value);

/* Calls fn for every entry of the hash map fd (keys of key_size bytes, values of value_size)
 * and deletes them: in batches, or entry by entry on a kernel without batch calls (before 5.6)
 * or when a bucket holds more than a batch. Returns 0, fn's non-zero return, or -errno
 * (-ENOMEM). When fn stops the drain, the entries of later batches stay in the map; those of
 * its own batch that fn did not see are gone (fewer than MAPBATCH_N). */
int mapbatch_drain(int fd, size_t key_size, size_t value_size, mapbatch_fn fn, void *ctx);

#endif
