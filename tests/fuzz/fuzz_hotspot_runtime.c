/* libFuzzer harness: the names of the Java walker's announcements (lib/runtimes/hotspot_runtime.c:
 * hotspot_announced_name over struct hotspot_mem) with JDK 17's offsets. The input is the
 * process's memory at BASE as test_hotspot_runtime's fake lays it out (seed: that fake, written
 * with FIRN_HOTSPOT_SEEDS=DIR): a method at BASE + 0x100 announced with the ConstMethod address
 * in the input's first 8 bytes, and a stub's CodeBlob at BASE + 0x1010 in a code heap at
 * BASE + 0x1000 (segment map at BASE + 0x800). Names come back NUL-terminated, empty on an error,
 * a method's "Class.name" (hotspot_method_format's: a fuzzed name may hold '/'); nothing is
 * read outside the input. The input is also a compressed line number table
 * (hotspot_lines_decode, both encodings): rows by rising bytecode index, positive lines, no more
 * than room. */
#include <errno.h>
#include <string.h>

#include <linux/types.h>

#include "fuzz.h"
#include "../../bpf/firn.h"
#include "../../bpf/hotspot.h"
#include "runtimes/hotspot_runtime.h"

#define BASE 0x7f0000000000ULL

/* One announcement named: the result and the name as the header promises. */
static void check(const struct hotspot_structs *hs, const struct hotspot_codecache *cc,
		  const struct hotspot_mem *mem, uint64_t method, uint64_t cmethod)
{
	struct firn_hotspot_method_event e = { .type = FIRN_EV_HS_METHOD, .pid = 1,
					       .method = method, .cmethod = cmethod, .id = 1 };
	char buf[400];

	memset(buf, 'x', sizeof(buf));
	int err = hotspot_announced_name(hs, cc, mem, 1, &e, buf, sizeof(buf));
	FUZZ_ASSERT(err == 0 || err == -EFAULT || err == -EINVAL || err == -ENOENT ||
		    err == -ESTALE || err == -ELOOP);
	FUZZ_ASSERT(memchr(buf, 0, sizeof(buf)));
	FUZZ_ASSERT(err ? !buf[0] : buf[0] != 0);
	if (!err && cmethod) /* "Class.name": the class's '/' made '.' (a name may hold anything) */
		FUZZ_ASSERT(strchr(buf, '.') != NULL);
}

/* The input as a line number table. */
static void lines(const uint8_t *data, size_t size, unsigned excess)
{
	struct hotspot_line rows[16];
	int n = hotspot_lines_decode(data, size, excess, rows, 16);

	FUZZ_ASSERT(n == -EINVAL || (n >= 0 && n <= 16));
	for (int i = 0; i < n; i++)
		FUZZ_ASSERT(rows[i].line > 0 && (!i || rows[i].bci >= rows[i - 1].bci));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_image im = { data, size, BASE };
	struct hotspot_mem mem = { fuzz_image_read, &im };
	struct hotspot_structs hs = { .method_const = 8, .cmethod_constants = 8,
				      .cmethod_name_index = 34, .cmethod_signature_index = 36,
				      .cpool_holder = 24, .cpool_length = 60, .size_cpool = 72,
				      .klass_name = 24, .symbol_length = 4, .symbol_body = 6,
				      .heapblock_used = 8, .size_heapblock = 16, .blob_name = 0,
				      .blob_size = 8, .blob_frame_size = 12, .blob_code_begin = 16,
				      .nm_method = 24 };
	struct hotspot_codecache cc = { .nheaps = 1 };
	uint64_t cmethod = 0;

	cc.heap[0] = (struct hotspot_codeheap){ BASE + 0x1000, BASE + 0x2000, BASE + 0x800, 4 };
	if (size >= 8)
		memcpy(&cmethod, data, 8);
	check(&hs, &cc, &mem, BASE + 0x100, cmethod ? cmethod : 1);
	check(&hs, &cc, &mem, BASE + 0x1010, 0);
	lines(data, size, 0);
	lines(data, size, 1);
	return 0;
}
