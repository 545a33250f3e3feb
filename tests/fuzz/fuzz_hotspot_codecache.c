/* libFuzzer harness: pcs looked up in a JVM's CodeCache (lib/runtimes/hotspot_codecache.c:
 * hotspot_codecache_read, then hotspot_codecache_find over struct hotspot_mem). The input is the
 * process's memory at BASE, laid out as test_hotspot_codecache's fake (seed: that fake, written
 * with FIRN_HOTSPOT_SEEDS=DIR): the heaps are read from it, and pcs across its heap are looked
 * up both in the heaps read and in the fake's heap as given (so the lookup is fuzzed even where
 * the read refuses). A blob found holds the pc and its code start, its kind is one of four, an
 * nmethod alone has a Method*; on an error the blob is zeroed; nothing is read outside the
 * input. */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "runtimes/hotspot_codecache.h"

#define BASE 0x7f0000000000ULL

/* Looks pc up in cc and checks what comes back. */
static void check_find(const struct hotspot_structs *hs, const struct hotspot_codecache *cc,
		       const struct hotspot_mem *mem, uint64_t pc)
{
	struct hotspot_blob b;
	static const struct hotspot_blob zero;

	int err = hotspot_codecache_find(hs, cc, mem, 1, pc, &b);
	FUZZ_ASSERT(err == 0 || err == -ENOENT || err == -EFAULT || err == -EINVAL ||
		    err == -ELOOP);
	if (err) {
		FUZZ_ASSERT(!memcmp(&b, &zero, sizeof(b)));
		return;
	}
	FUZZ_ASSERT(b.addr <= pc && pc - b.addr < b.size);
	FUZZ_ASSERT(b.addr <= b.code_begin && b.code_begin - b.addr < b.size);
	FUZZ_ASSERT(b.kind <= HS_BLOB_STUB && b.name[0] && memchr(b.name, 0, sizeof(b.name)));
	FUZZ_ASSERT(b.kind == HS_BLOB_NMETHOD || b.method == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_image im = { data, size, BASE };
	struct hotspot_mem mem = { fuzz_image_read, &im };
	struct hotspot_structs hs = {
		.codecache_low_bound = BASE + 0x10, .codecache_high_bound = BASE + 0x18,
		.codecache_heaps = BASE + 0x20, .array_len = 0, .array_data = 8,
		.codeheap_memory = 0x10, .vspace_low = 0x8, .vspace_high_boundary = 0x18,
		.codeheap_segmap = 0x40, .codeheap_log2_segment = 0x80, .heapblock_used = 8,
		.size_heapblock = 16, .blob_name = 0, .blob_size = 8, .blob_frame_size = 12,
		.blob_code_begin = 16, .nm_method = 24,
	};
	struct hotspot_codecache cc, fixed = { .nheaps = 1 };

	fixed.heap[0] = (struct hotspot_codeheap){ BASE + 0x1000, BASE + 0x2000, BASE + 0x200, 4 };
	if (!hotspot_codecache_read(&hs, &mem, 1, &cc)) {
		FUZZ_ASSERT(cc.nheaps >= 1 && cc.nheaps <= HS_CODEHEAPS_MAX);
		for (unsigned i = 0; i < cc.nheaps; i++)
			FUZZ_ASSERT(cc.heap[i].low < cc.heap[i].high);
		for (unsigned i = 0; i < 64; i++)
			check_find(&hs, &cc, &mem, cc.heap[0].low + i * 61);
	}
	for (unsigned i = 0; i < 64; i++)
		check_find(&hs, &fixed, &mem, BASE + 0x1000 + i * 61);
	return 0;
}
