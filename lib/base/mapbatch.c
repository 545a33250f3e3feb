/* BPF hash maps drained in batches (see mapbatch.h). */
#include "base/mapbatch.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/vec.h"

/* The entry-by-entry walk: every key first (deleting while walking would skip entries), then
 * lookup, fn and delete for each. */
static int drain_each(int fd, size_t ksz, size_t vsz, mapbatch_fn fn, void *ctx)
{
	uint8_t *keys = NULL, *v = malloc(vsz);
	size_t n = 0, cap = 0;
	int ret = v ? 0 : -ENOMEM;

	while (!ret) {
		if (vec_grow((void **)&keys, &cap, n + 1, ksz)) { /* ksz: a run-time element size */
			ret = -ENOMEM;
			break;
		}
		if (bpf_map_get_next_key(fd, n ? keys + (n - 1) * ksz : NULL, keys + n * ksz))
			break;
		n++;
	}
	for (size_t i = 0; i < n && !ret; i++) {
		if (!bpf_map_lookup_elem(fd, keys + i * ksz, v))
			ret = fn(ctx, keys + i * ksz, v);
		bpf_map_delete_elem(fd, keys + i * ksz);
	}
	free(keys), free(v);
	return ret;
}

/* Hands out n entries of a batch to fn; its first non-zero return. */
static int hand_out(const uint8_t *keys, const uint8_t *vals, uint32_t n, size_t ksz, size_t vsz,
		    mapbatch_fn fn, void *ctx)
{
	int ret = 0;

	for (uint32_t i = 0; i < n && !ret; i++)
		ret = fn(ctx, keys + i * ksz, vals + i * vsz);
	return ret;
}

/* The batches: 0 when the map is drained, 1 when the caller should walk the rest entry by
 * entry (no batch calls, or a bucket larger than a batch), fn's return, -errno. */
static int drain_batches(int fd, size_t ksz, size_t vsz, uint8_t *keys, uint8_t *vals, mapbatch_fn fn,
			 void *ctx)
{
	uint64_t tok[2][4]; /* the kernel's batch position (a u32 bucket for hash maps) */
	LIBBPF_OPTS(bpf_map_batch_opts, opts);

	for (int i = 0;; i++) {
		uint32_t n = MAPBATCH_N;
		int rc = bpf_map_lookup_and_delete_batch(fd, i ? tok[(i - 1) & 1] : NULL, tok[i & 1], keys,
							 vals, &n, &opts);
		int e = rc ? errno : 0;
		if (rc && e != ENOENT)
			n = 0; /* nothing was handed out */
		int ret = hand_out(keys, vals, n, ksz, vsz, fn, ctx);
		if (ret || (rc && e == ENOENT))
			return ret;
		if (rc)
			return e == EINVAL || e == ENOTSUP || e == ENOSYS || e == ENOSPC || e == EPERM ? 1 : -e;
	}
}

int mapbatch_drain(int fd, size_t key_size, size_t value_size, mapbatch_fn fn, void *ctx)
{
	uint8_t *keys = malloc(MAPBATCH_N * key_size), *vals = malloc(MAPBATCH_N * value_size);
	int ret = keys && vals ? drain_batches(fd, key_size, value_size, keys, vals, fn, ctx) : -ENOMEM;

	free(keys), free(vals);
	return ret == 1 ? drain_each(fd, key_size, value_size, fn, ctx) : ret;
}
