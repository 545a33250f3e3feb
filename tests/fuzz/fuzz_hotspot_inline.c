/* libFuzzer harness: a compiled frame expanded from its nmethod (lib/runtimes/hotspot_inline.c)
 * over fuzzed process memory. The input is the memory from the nmethod on (at FUZZ_BASE), laid
 * out with test_hotspot_inline's JDK 17 offsets; its first 4 bytes (no field of the nmethod's)
 * are the pc's offset from the nmethod, byte 4's low bit picks X (JDK 17 or 25's UNSIGNED5), its
 * next bit JDK 25's layout (the sections in mutable and immutable data, anywhere in the input).
 * The Method* and compile id the walker saw are the input's own, so the reader goes past its
 * staleness check (seeds: test_hotspot_inline's nmethod, written with FIRN_HOTSPOT_SEEDS=DIR).
 * An expansion is 1 to HS_INLINE_MAX methods, the outermost the nmethod's; nothing is read
 * outside the input; hotspot_inline_pcs lists at most what it is asked for, ascending, and
 * hotspot_inline_near picks the first of them at or after the pc. */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "runtimes/hotspot_inline.h"

#define FUZZ_BASE 0x7f0000000000ULL

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_image im = { data, size, FUZZ_BASE };
	struct hotspot_mem mem = { fuzz_image_read, &im };
	struct hotspot_structs hs = { .jdk = 17, .nm_method = 8, .nm_compile_id = 16,
				      .blob_size = 24, .blob_code_begin = 32,
				      .nm_metadata_offset = 40, .nm_scopes_pcs_offset = 44,
				      .nm_dependencies_offset = 48, .nm_scopes_data_begin = 56,
				      .size_pcdesc = 16, .pcdesc_pc_offset = 0,
				      .pcdesc_scope_decode_offset = 4 };
	struct hotspot_nmethod_ref ref = { FUZZ_BASE, 0, 0 };
	struct hotspot_inlined out[HS_INLINE_MAX];
	uint32_t pc;

	if (size < 104)
		return 0;
	memcpy(&pc, data, 4);
	hs.jdk = data[4] & 1 ? 25 : 17;
	if (data[4] & 2) { /* JDK 25's rows, as test_hotspot_inline's test_jdk25 */
		hs.blob_code_begin = hs.nm_scopes_data_begin = hs.nm_metadata_offset = 0;
		hs.nm_dependencies_offset = 0;
		hs.blob_code_offset = 64, hs.blob_mutable_data = 72, hs.blob_mutable_data_size = 80;
		hs.blob_relocation_size = 84, hs.nm_immutable_data = 88, hs.nm_immutable_size = 96;
		hs.nm_scopes_data_offset = 100;
	}
	memcpy(&ref.method, data + 8, 8);
	memcpy(&ref.compile_id, data + 16, 4);
	int n = hotspot_inline_expand(&hs, &mem, 1, &ref, FUZZ_BASE + pc, out, HS_INLINE_MAX);
	FUZZ_ASSERT(n == -EINVAL || n == -EFAULT || n == -ENOENT || n == -ESTALE || n == -ENOMEM ||
		    (n >= 1 && n <= HS_INLINE_MAX));
	if (n > 0)
		FUZZ_ASSERT(out[n - 1].method == ref.method);
	uint32_t pcs[8];
	n = hotspot_inline_pcs(&hs, &mem, 1, &ref, pcs, 8);
	FUZZ_ASSERT(n == -EINVAL || n == -EFAULT || n == -ESTALE || n == -ENOMEM ||
		    (n >= 0 && n <= 8));
	for (int i = 0; i < n; i++)
		FUZZ_ASSERT(pcs[i] > 0 && (!i || pcs[i] >= pcs[i - 1])); /* after the header, sorted */
	if (n < 0)
		return 0;
	int near = hotspot_inline_near(pcs, (size_t)n, pc);
	FUZZ_ASSERT(near == -ENOENT || (near >= 0 && near < n && pcs[near] >= pc &&
					(!near || pcs[near - 1] < pc)));
	return 0;
}
