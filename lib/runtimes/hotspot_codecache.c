/* A pc in a live JVM's CodeCache to its CodeBlob: see hotspot_codecache.h. */
#include "runtimes/hotspot_codecache.h"

#include <errno.h>
#include <string.h>

#define SEG_FREE 0xFF /* HotSpot's free_sentinel: a segment no block has */

/* Reads the heap at heap (a CodeHeap*) into *h, checked against the CodeCache's [lo, hi). */
static int read_heap(const struct hotspot_structs *hs, const struct hotspot_mem *mem, pid_t pid,
		     uint64_t heap, uint64_t lo, uint64_t hi, struct hotspot_codeheap *h)
{
	uint64_t vs = heap + hs->codeheap_memory;
	int32_t log2;
	int err;

	if ((err = hotspot_mem_word(mem, pid, vs + hs->vspace_low, &h->low)) ||
	    (err = hotspot_mem_word(mem, pid, vs + hs->vspace_high_boundary, &h->high)) ||
	    (err = hotspot_mem_word(mem, pid, heap + hs->codeheap_segmap + hs->vspace_low, &h->segmap)) ||
	    (err = hotspot_mem_read(mem, pid, heap + hs->codeheap_log2_segment, &log2, sizeof(log2))))
		return err;
	if (h->low < lo || h->low >= h->high || h->high > hi || !h->segmap || log2 < 4 || log2 > 16)
		return -EINVAL;
	h->log2_segment = (unsigned)log2;
	return 0;
}

int hotspot_codecache_read(const struct hotspot_structs *hs, const struct hotspot_mem *mem,
			   pid_t pid, struct hotspot_codecache *cc)
{
	uint64_t lo, hi, heaps, data, heap;
	int32_t n;
	int err;

	memset(cc, 0, sizeof(*cc));
	if ((err = hotspot_mem_word(mem, pid, hs->codecache_low_bound, &lo)) ||
	    (err = hotspot_mem_word(mem, pid, hs->codecache_high_bound, &hi)) ||
	    (err = hotspot_mem_word(mem, pid, hs->codecache_heaps, &heaps)) ||
	    (err = hotspot_mem_read(mem, pid, heaps + hs->array_len, &n, sizeof(n))) ||
	    (err = hotspot_mem_word(mem, pid, heaps + hs->array_data, &data)))
		return err;
	if (n < 1 || n > HS_CODEHEAPS_MAX || lo >= hi)
		return -EINVAL;
	for (int32_t i = 0; i < n; i++)
		if ((err = hotspot_mem_word(mem, pid, data + 8 * (uint64_t)i, &heap)) ||
		    (err = read_heap(hs, mem, pid, heap, lo, hi, &cc->heap[i])))
			return (memset(cc, 0, sizeof(*cc)), err);
	cc->nheaps = (unsigned)n;
	return 0;
}

/* The heap of cc whose reserved memory holds pc, or NULL. */
static const struct hotspot_codeheap *heap_for(const struct hotspot_codecache *cc, uint64_t pc)
{
	for (unsigned i = 0; i < cc->nheaps && i < HS_CODEHEAPS_MAX; i++)
		if (cc->heap[i].low <= pc && pc < cc->heap[i].high)
			return &cc->heap[i];
	return NULL;
}

/* The start of the block holding pc in h, back through the segment map (find_block_for). */
static int block_start(const struct hotspot_mem *mem, pid_t pid, const struct hotspot_codeheap *h,
		       uint64_t pc, uint64_t *block)
{
	uint64_t seg = (pc - h->low) >> h->log2_segment;
	uint8_t hop;
	int err;

	for (int i = 0; i <= HS_SEGMAP_MAX_HOPS; i++) {
		if ((err = hotspot_mem_read(mem, pid, h->segmap + seg, &hop, 1)))
			return err;
		if (hop == SEG_FREE)
			return -ENOENT;
		if (hop == 0) {
			*block = h->low + (seg << h->log2_segment);
			return 0;
		}
		if (hop > seg)
			return -EINVAL;
		seg -= hop;
	}
	return -ELOOP;
}

/* Reads the C string at addr into buf (len bytes, NUL-terminated, truncated), a page at a time
 * so that a name at the end of a mapping reads. */
static int read_name(const struct hotspot_mem *mem, pid_t pid, uint64_t addr, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len - 1) {
		size_t n = 4096 - ((addr + got) & 4095);
		n = n < len - 1 - got ? n : len - 1 - got;
		if (hotspot_mem_read(mem, pid, addr + got, buf + got, n))
			return (buf[0] = 0, -EFAULT);
		got += n;
		if (memchr(buf + got - n, 0, n))
			return 0;
	}
	buf[len - 1] = 0;
	return 0;
}

/* What the blob is: its kind where the JDK has one (23+), its name everywhere. */
static enum hotspot_blob_kind classify(const struct hotspot_structs *hs, uint8_t kind,
				       const char *name)
{
	if (hs->blob_kind_nmethod ? kind == hs->blob_kind_nmethod
				  : !strcmp(name, "nmethod") || !strcmp(name, "native nmethod"))
		return HS_BLOB_NMETHOD;
	if (!strcmp(name, "Interpreter"))
		return HS_BLOB_INTERPRETER;
	if (!strcmp(name, "I2C/C2I adapters") || !strcmp(name, "MethodHandles adapters"))
		return HS_BLOB_ADAPTER;
	return HS_BLOB_STUB;
}

/* The start of the blob's code: a pointer field up to JDK 22, an offset from the blob after. */
static int read_code_begin(const struct hotspot_structs *hs, const struct hotspot_mem *mem,
			   pid_t pid, struct hotspot_blob *b)
{
	int32_t off;
	int err;

	if (hs->blob_code_offset) {
		if ((err = hotspot_mem_read(mem, pid, b->addr + hs->blob_code_offset, &off, sizeof(off))))
			return err;
		b->code_begin = b->addr + (uint64_t)(int64_t)off;
		return off >= 0 ? 0 : -EINVAL;
	}
	return hotspot_mem_word(mem, pid, b->addr + hs->blob_code_begin, &b->code_begin);
}

/* Reads the CodeBlob at b->addr, checks that it holds pc, tells its kind. */
static int read_blob(const struct hotspot_structs *hs, const struct hotspot_mem *mem, pid_t pid,
		     uint64_t pc, struct hotspot_blob *b)
{
	uint64_t name;
	uint8_t kind = 0;
	int err;

	if ((err = hotspot_mem_read(mem, pid, b->addr + hs->blob_size, &b->size, sizeof(b->size))) ||
	    (err = hotspot_mem_read(mem, pid, b->addr + hs->blob_frame_size, &b->frame_size,
			   sizeof(b->frame_size))) ||
	    (err = read_code_begin(hs, mem, pid, b)) ||
	    (err = hotspot_mem_word(mem, pid, b->addr + hs->blob_name, &name)) ||
	    (err = read_name(mem, pid, name, b->name, sizeof(b->name))) ||
	    (hs->blob_kind_nmethod && (err = hotspot_mem_read(mem, pid, b->addr + hs->blob_kind, &kind, 1))))
		return err;
	if (pc - b->addr >= b->size)
		return -ENOENT;
	if (b->code_begin < b->addr || b->code_begin - b->addr >= b->size || b->frame_size < -1 ||
	    b->frame_size > (1 << 20) || !b->name[0])
		return -EINVAL;
	b->kind = classify(hs, kind, b->name);
	if (b->kind == HS_BLOB_NMETHOD)
		return hotspot_mem_word(mem, pid, b->addr + hs->nm_method, &b->method);
	return 0;
}

int hotspot_codecache_find(const struct hotspot_structs *hs, const struct hotspot_codecache *cc,
			   const struct hotspot_mem *mem, pid_t pid, uint64_t pc,
			   struct hotspot_blob *out)
{
	const struct hotspot_codeheap *h = heap_for(cc, pc);
	uint64_t block;
	uint8_t used;
	int err;

	memset(out, 0, sizeof(*out));
	if (!h)
		return -ENOENT;
	if ((err = block_start(mem, pid, h, pc, &block)) ||
	    (err = hotspot_mem_read(mem, pid, block + hs->heapblock_used, &used, 1)))
		return err;
	if (!used)
		return -ENOENT;
	out->addr = block + hs->size_heapblock;
	if ((err = read_blob(hs, mem, pid, pc, out)))
		memset(out, 0, sizeof(*out));
	return err;
}

const char *hotspot_blob_kind_name(enum hotspot_blob_kind kind)
{
	static const char *const names[] = { "nmethod", "interpreter", "adapter", "stub" };

	return (unsigned)kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "?";
}
