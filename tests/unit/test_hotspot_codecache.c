/* Unit tests for lib/runtimes/hotspot_codecache: pcs looked up in a hand-built CodeCache in fake
 * memory — one code heap of 16-byte segments holding an nmethod, the interpreter (reached by
 * several hops of its segment map), an adapter and a free block, the rest never allocated —
 * and damaged ones refused (hops before the heap's start, a loop of hops, a blob that does not
 * hold the pc, heaps outside the CodeCache's bounds, unreadable memory). The live lookups are in
 * test_hotspot_names (every blob of a real JVM's code heaps). With $FIRN_HOTSPOT_SEEDS=DIR the
 * fake is written there: tests/fuzz/corpus/fuzz_hotspot_codecache. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtimes/hotspot_codecache.h"

/* The fake's layout, shared with tests/fuzz/fuzz_hotspot_codecache.c. */
#define BASE 0x7f0000000000ULL
#define FAKE_SIZE 0x2000
#define LOW_BOUND 0x10  /* CodeCache::_low_bound, _high_bound, _heaps */
#define HEAPS 0x40      /* GrowableArray: _len, _data */
#define DATA 0x60       /* its one CodeHeap* */
#define CODEHEAP 0x80   /* CodeHeap: _memory at +0x10, _segmap at +0x40, log2 at +0x80 */
#define NAMES 0x180     /* the blobs' names, 16 bytes each */
#define SEGMAP 0x200    /* 256 segments */
#define HEAP 0x1000     /* the heap's memory: 256 segments of 16 bytes */
#define METHOD 0x7f0000001234ULL

#include "hotspot_fake.h"

/* The offsets the fake is laid out with (JDK 17's shape: a name tells an nmethod). */
static void offsets(struct hotspot_structs *hs)
{
	memset(hs, 0, sizeof(*hs));
	hs->codecache_low_bound = BASE + LOW_BOUND, hs->codecache_high_bound = BASE + LOW_BOUND + 8;
	hs->codecache_heaps = BASE + LOW_BOUND + 16, hs->array_len = 0, hs->array_data = 8;
	hs->codeheap_memory = 0x10, hs->vspace_low = 0x8, hs->vspace_high_boundary = 0x18;
	hs->codeheap_segmap = 0x40, hs->codeheap_log2_segment = 0x80;
	hs->heapblock_length = 0, hs->heapblock_used = 8, hs->size_heapblock = 16;
	hs->blob_name = 0, hs->blob_size = 8, hs->blob_frame_size = 12, hs->blob_code_begin = 16;
	hs->nm_method = 24;
}

/* A used block of len segments at segment seg holding a blob named names[name] of size bytes,
 * its code 16 bytes in, its segment map counting hops of at most hop segments back. */
static void put_blob(struct fake *f, unsigned seg, unsigned len, unsigned hop, int name,
		     uint32_t size)
{
	size_t block = HEAP + 16 * (size_t)seg, blob = block + 16;

	for (unsigned i = 0; i < len; i++)
		f->mem[SEGMAP + seg + i] = (uint8_t)(i % hop ? i % hop : i ? hop : 0);
	poke_u32(f, block, len);
	f->mem[block + 8] = 1;
	poke_ptr(f, blob, BASE + NAMES + 16 * (size_t)name);
	poke_u32(f, blob + 8, size);
	poke_u32(f, blob + 12, 2);
	poke_ptr(f, blob + 16, BASE + blob + 16);
	poke_ptr(f, blob + 24, METHOD);
}

/* The CodeCache: an nmethod in segments 0-3, the interpreter in 4-103 (hops of 7), an adapter
 * in 104-106, a free block in 107-110, segments 111-255 never allocated. */
static void build(struct fake *f)
{
	static const char names[][16] = { "nmethod", "Interpreter", "I2C/C2I adapters" };

	memset(f, 0, sizeof(*f));
	poke_ptr(f, LOW_BOUND, BASE + HEAP);
	poke_ptr(f, LOW_BOUND + 8, BASE + HEAP + 0x1000);
	poke_ptr(f, LOW_BOUND + 16, BASE + HEAPS);
	poke_u32(f, HEAPS, 1);
	poke_ptr(f, HEAPS + 8, BASE + DATA);
	poke_ptr(f, DATA, BASE + CODEHEAP);
	poke_ptr(f, CODEHEAP + 0x10 + 0x8, BASE + HEAP);
	poke_ptr(f, CODEHEAP + 0x10 + 0x18, BASE + HEAP + 0x1000);
	poke_ptr(f, CODEHEAP + 0x40 + 0x8, BASE + SEGMAP);
	poke_u32(f, CODEHEAP + 0x80, 4);
	poke(f, NAMES, names, sizeof(names));
	memset(f->mem + SEGMAP, 0xFF, 256);
	put_blob(f, 0, 4, 254, 0, 4 * 16 - 16);
	put_blob(f, 4, 100, 7, 1, 100 * 16 - 16);
	put_blob(f, 104, 3, 254, 2, 3 * 16 - 16);
	put_blob(f, 107, 4, 254, 0, 4 * 16 - 16);
	f->mem[HEAP + 107 * 16 + 8] = 0; /* free */
}

/* Reads the fake's code cache, then looks pc (an offset from BASE) up. */
static int find(struct fake *f, uint64_t pc, struct hotspot_blob *b)
{
	struct hotspot_structs hs;
	struct hotspot_mem mem = { fake_read, f };
	struct hotspot_codecache cc;
	int err;

	offsets(&hs);
	if ((err = hotspot_codecache_read(&hs, &mem, 1, &cc)))
		return err;
	assert_int_equal(cc.nheaps, 1);
	assert_int_equal(cc.heap[0].log2_segment, 4);
	return hotspot_codecache_find(&hs, &cc, &mem, 1, BASE + pc, b);
}

/* Writes the fake to DIR/NAME when $FIRN_HOTSPOT_SEEDS names DIR (the fuzzer's seed). */
static void write_seed(const struct fake *f, const char *name)
{
	const char *dir = getenv("FIRN_HOTSPOT_SEEDS");
	char path[PATH_MAX];

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *out = fopen(path, "w");
	assert_non_null(out);
	assert_int_equal(fwrite(f->mem, 1, FAKE_SIZE, out), FAKE_SIZE);
	fclose(out);
}

/* Every pc of each blob finds it, of its kind; an nmethod's Method* comes with it. */
static void test_fake(void **state)
{
	static struct fake f;
	struct hotspot_blob b;
	(void)state;
	build(&f);
	write_seed(&f, "seed-codecache");
	for (uint64_t pc = HEAP + 16; pc < HEAP + 64; pc++) {
		assert_int_equal(find(&f, pc, &b), 0);
		assert_int_equal(b.addr, BASE + HEAP + 16);
		assert_int_equal(b.kind, HS_BLOB_NMETHOD);
		assert_int_equal(b.method, METHOD);
	}
	assert_string_equal(b.name, "nmethod");
	assert_int_equal(b.code_begin, BASE + HEAP + 32);
	assert_int_equal(b.size, 48);
	assert_int_equal(b.frame_size, 2);
	for (uint64_t pc = HEAP + 4 * 16 + 16; pc < HEAP + 104 * 16; pc++) {
		assert_int_equal(find(&f, pc, &b), 0);
		assert_int_equal(b.addr, BASE + HEAP + 4 * 16 + 16);
		assert_int_equal(b.kind, HS_BLOB_INTERPRETER);
		assert_int_equal(b.method, 0);
	}
	assert_int_equal(find(&f, HEAP + 104 * 16 + 20, &b), 0);
	assert_int_equal(b.kind, HS_BLOB_ADAPTER);
	assert_string_equal(hotspot_blob_kind_name(b.kind), "adapter");
}

/* What no blob holds, or a damaged map, is refused with out zeroed, never another blob. */
static void test_refused(void **state)
{
	static struct fake f;
	struct hotspot_blob b;
	(void)state;
	build(&f);
	assert_int_equal(find(&f, HEAP + 8, &b), -ENOENT);            /* the header, not the blob */
	assert_int_equal(find(&f, HEAP + 108 * 16, &b), -ENOENT);     /* a free block */
	assert_int_equal(find(&f, HEAP + 200 * 16, &b), -ENOENT);     /* never allocated */
	assert_int_equal(find(&f, HEAP + 0x1000, &b), -ENOENT);       /* past the heap */
	assert_int_equal(b.addr, 0);
	f.mem[SEGMAP + 5] = 6; /* hops from segment 5 to before segment 0 */
	assert_int_equal(find(&f, HEAP + 5 * 16, &b), -EINVAL);
	build(&f);
	for (unsigned i = 4; i < 104; i++)
		f.mem[SEGMAP + i] = i == 4 ? 0 : 1;
	assert_int_equal(find(&f, HEAP + 100 * 16, &b), 0); /* 96 hops back */
	f.mem[SEGMAP + 4] = 1; /* the interpreter's start lost: back to segment 0's nmethod... */
	assert_int_equal(find(&f, HEAP + 103 * 16, &b), -ENOENT); /* ...which does not hold it */
	assert_int_equal(b.addr, 0);
	build(&f);
	poke_u32(&f, HEAP + 16 + 8, 0x100000); /* the nmethod's size past its block: still checked */
	assert_int_equal(find(&f, HEAP + 20 * 16, &b), 0);
	assert_int_equal(b.kind, HS_BLOB_INTERPRETER);
	poke_ptr(&f, HEAP + 16 + 16, BASE + HEAP); /* code before the blob */
	assert_int_equal(find(&f, HEAP + 20, &b), -EINVAL);
	build(&f);
	poke_ptr(&f, HEAP + 16, BASE + FAKE_SIZE); /* a name unreadable */
	assert_int_equal(find(&f, HEAP + 20, &b), -EFAULT);
	build(&f);
	poke_ptr(&f, CODEHEAP + 0x10 + 0x18, BASE + HEAP + 0x1001); /* past the CodeCache */
	assert_int_equal(find(&f, HEAP + 20, &b), -EINVAL);
	build(&f);
	poke_u32(&f, CODEHEAP + 0x80, 3); /* 8-byte segments */
	assert_int_equal(find(&f, HEAP + 20, &b), -EINVAL);
	build(&f);
	poke_u32(&f, HEAPS, 9);
	assert_int_equal(find(&f, HEAP + 20, &b), -EINVAL);
}

/* More hops than HS_SEGMAP_MAX_HOPS: refused, not followed. */
static void test_hops_bounded(void **state)
{
	static struct fake f;
	struct hotspot_structs hs;
	struct hotspot_mem mem = { fake_read, &f };
	struct hotspot_codecache cc = { .nheaps = 1 };
	struct hotspot_blob b;
	(void)state;
	build(&f);
	offsets(&hs);
	/* a heap of 0x1000 segments of 16 bytes whose map is all hops of 1 (the fake's heap
	 * memory read as a map): 4095 hops from its last segment */
	memset(f.mem + HEAP, 1, 0x1000);
	cc.heap[0] = (struct hotspot_codeheap){ BASE, BASE + 0x10000, BASE + HEAP, 4 };
	assert_int_equal(hotspot_codecache_find(&hs, &cc, &mem, 1, BASE + 0xFFFF, &b), -ELOOP);
	assert_int_equal(hotspot_blob_kind_name(9)[0], '?');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fake),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_hops_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
