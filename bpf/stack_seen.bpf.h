/* A wait's stacks seen at its thread's last wait (bpf/offcpu.bpf.h): a thread that waits again
 * where it waited last (a ping-pong's read, a worker's queue) has the same frames, and the id they
 * were stored under is kept with them, so the switch-in neither copies nor hashes them again. The
 * frames are compared exactly, so the id is the one store_stack would give: identical profiles. */
#ifndef FIRN_BPF_STACK_SEEN_H
#define FIRN_BPF_STACK_SEEN_H

/* 1 when stacks a and b hold the same frames (length and every address), else 0. In blocks of
 * FIRN_HASH_BLOCK frames as firn_stack_hash, and a global function for the same reason. */
__attribute__((noinline)) int firn_stack_same(const struct firn_stack *a, const struct firn_stack *b)
{
	if (!a || !b)
		return 0;
	__u64 len = a->len, diff = 0;

	if (len != b->len || len > FIRN_MAX_FRAMES)
		return 0;
	for (__u32 blk = 0; blk < FIRN_MAX_FRAMES; blk += FIRN_HASH_BLOCK) {
		if (blk >= len)
			break;
#pragma unroll
		for (__u32 j = 0; j < FIRN_HASH_BLOCK; j++) {
			__u64 i = blk + j;
			if (i >= FIRN_MAX_FRAMES)
				break;
			__s64 d = i - len; /* < 0: a frame of the stack */
			opaque(d);
			diff |= (a->ips[i] ^ b->ips[i]) & (__u64)(d >> 63);
		}
		if (diff)
			return 0;
	}
	return 1;
}

/* Keeps the stack taken (from, in scratch; NULL: none) in a wait's slot (to) unless the slot
 * holds the same frames from the thread's last wait: then *id, the id they were stored under
 * then (0: not stored), stays. Otherwise *id is 0 until the switch-in stores them. */
static __always_inline void keep_seen(struct firn_stack *to, const struct firn_stack *from,
				      __u64 *id)
{
	if (*id && from && firn_stack_same(to, from))
		return;
	*id = 0;
	keep_stack(to, from);
}

/* The id of a stack stored at an earlier wait (0: none) while the stacks map still holds it (a
 * drain removes what it read), else 0: the caller stores the stack again, under the same id. */
static __always_inline __u64 seen_stored(__u64 id)
{
	return id && id != FIRN_STACK_LOST && bpf_map_lookup_elem(&stacks, &id) ? id : 0;
}

#endif
