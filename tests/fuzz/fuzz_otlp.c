/* libFuzzer harness: pprof_decode on arbitrary bytes, then otlp_encode of every profile that
 * decodes (what firn push and --push-to otlp do with a file). The encoding must succeed (a
 * decoded profile's ids all resolve) and be well-formed protobuf: one resource_profiles and
 * one dictionary at the top, every length inside its message, nested messages too. */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "format/otlp.h"
#include "format/pprof.h"
#include "model/profile.h"

/* Reads a varint at *c (before end); aborts past end. */
static uint64_t varint(const uint8_t **c, const uint8_t *end)
{
	uint64_t v = 0;

	for (int s = 0; s < 64; s += 7) {
		FUZZ_ASSERT(*c < end);
		uint8_t b = *(*c)++;
		v |= (uint64_t)(b & 0x7f) << s;
		if (b < 0x80)
			return v;
	}
	FUZZ_ASSERT(!"varint longer than 10 bytes");
	return 0;
}

/* Walks the message [p, end): every field's key and length fit. Counts fields 1 and 2. */
static void walk(const uint8_t *p, const uint8_t *end, size_t *n1, size_t *n2)
{
	while (p < end) {
		uint64_t k = varint(&p, end);
		FUZZ_ASSERT(k >> 3);
		if ((k & 7) == 0) {
			varint(&p, end);
		} else if ((k & 7) == 1) {
			FUZZ_ASSERT(end - p >= 8);
			p += 8;
		} else {
			FUZZ_ASSERT((k & 7) == 2);
			uint64_t len = varint(&p, end);
			FUZZ_ASSERT(len <= (uint64_t)(end - p));
			p += len;
		}
		*n1 += (k >> 3) == 1;
		*n2 += (k >> 3) == 2;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t id[16] = { 1 };
	struct otlp_attr a = { "k", "v" };
	struct otlp_opts o = { "svc", "host", "ctr", &a, 1, id };
	struct profile p;
	void *out = NULL;
	size_t len = 0, n1 = 0, n2 = 0;

	if (profile_init(&p))
		return 0;
	if (pprof_decode(&p, data, size) == 0) {
		int err = otlp_encode(&p, &o, &out, &len);
		FUZZ_ASSERT(err == 0 || err == -ENOMEM);
		if (!err) {
			walk(out, (const uint8_t *)out + len, &n1, &n2);
			FUZZ_ASSERT(n1 == 1 && n2 == 1);
		}
		free(out);
	}
	profile_release(&p);
	return 0;
}
