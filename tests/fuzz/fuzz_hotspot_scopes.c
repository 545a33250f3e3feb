/* libFuzzer harness: an nmethod's debug information decoded (lib/runtimes/hotspot_scopes.c):
 * hotspot_scopes_decode over a scopes_data stream, hotspot_stream_read over all of it, and
 * hotspot_pcdesc_find over it read as PcDescs. The input: byte 0 (its low bit: X, 0 as JDK 17
 * writes, 1 as JDK 21+ do), bytes 1-4 the scope's offset, the stream after (seeds:
 * test_hotspot_scopes's chains, written with FIRN_HOTSPOT_SEEDS=DIR). A chain is 1 to 8 scopes,
 * each with a method index, a bci in [-1, 65535] and a sender below its offset, the last's 0;
 * the stream's reads always advance, 1 to 5 bytes; nothing is read outside the input. */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "runtimes/hotspot_scopes.h"

/* Reads the whole stream as ints: each read advances 1 to 5 bytes or stops. */
static void read_all(const uint8_t *data, size_t size, unsigned x)
{
	struct hotspot_stream s = { data, size, 0, x };
	uint32_t v;

	while (s.pos < size) {
		size_t at = s.pos;
		if (hotspot_stream_read(&s, &v)) {
			FUZZ_ASSERT(s.pos == at);
			return;
		}
		FUZZ_ASSERT(s.pos > at && s.pos - at <= 5 && s.pos <= size);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hotspot_scope sc[8];
	struct hotspot_pcdesc_layout l = { 16, 0, 4 };
	uint32_t offset, scope;

	if (size < 5)
		return 0;
	unsigned x = data[0] & 1;
	memcpy(&offset, data + 1, 4);
	const uint8_t *s = data + 5;
	size_t len = size - 5;
	int n = hotspot_scopes_decode(s, len, x, offset, sc, 8);
	FUZZ_ASSERT(n == -EINVAL || (n >= 1 && n <= 8));
	for (int i = 0; i < n; i++) {
		FUZZ_ASSERT(sc[i].method_index > 0 && sc[i].bci >= -1 && sc[i].bci <= 65535);
		FUZZ_ASSERT(sc[i].sender < (i ? sc[i - 1].sender : offset));
		FUZZ_ASSERT((i == n - 1) == (sc[i].sender == 0));
	}
	read_all(s, len, x);
	int err = hotspot_pcdesc_find(s, len / 16, &l, (int32_t)offset, &scope);
	FUZZ_ASSERT(err == 0 || err == -ENOENT);
	return 0;
}
