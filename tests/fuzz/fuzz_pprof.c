/* libFuzzer harness: pprof_decode on arbitrary bytes (raw protobuf and gzip). A profile that
 * decodes must have no negative value and no sum past INT64_MAX, expand into frames, write as
 * folded text, encode, and decode again to the same samples and totals. */
#include <errno.h>
#include <string.h>

#include "format/folded.h"
#include "fuzz.h"
#include "format/pprof.h"
#include "model/profile.h"

/* Sum of every sample's value of type t (pprof_decode guarantees it fits). */
static int64_t total(const struct profile *p, uint32_t t)
{
	int64_t sum = 0;

	for (uint64_t i = 0; i < p->nsamples; i++) {
		FUZZ_ASSERT(p->samples[i].values[t] >= 0);
		FUZZ_ASSERT(!__builtin_add_overflow(sum, p->samples[i].values[t], &sum));
	}
	return sum;
}

/* Expands every sample into frames and writes the folded text to /dev/null. */
static void use_profile(struct profile *p)
{
	static FILE *null;
	struct profile_frame *frames = NULL;
	size_t cap = 0;

	for (uint64_t i = 0; i < p->nsamples; i++)
		FUZZ_ASSERT(profile_frames(p, &p->samples[i], &frames, &cap) >= 0);
	free(frames);
	if (!null && !(null = fopen("/dev/null", "w")))
		abort();
	struct folded_opts o = { .comm_first = true, .pid = true, .tid = true,
				 .value_index = profile_value_index(p) };
	if (p->nsample_types)
		FUZZ_ASSERT(folded_write(p, null, &o) == 0);
}

/* Encodes p and decodes the bytes again: same sample count and totals. */
static void round_trip(const struct profile *p)
{
	struct profile q;
	void *buf = NULL;
	size_t len = 0;

	FUZZ_ASSERT(pprof_encode(p, false, &buf, &len) == 0);
	FUZZ_ASSERT(profile_init(&q) == 0);
	FUZZ_ASSERT(pprof_decode(&q, buf, len) == 0);
	FUZZ_ASSERT(q.nsamples == p->nsamples);
	FUZZ_ASSERT(q.nsample_types == p->nsample_types);
	for (uint32_t t = 0; t < p->nsample_types; t++)
		FUZZ_ASSERT(total(&q, t) == total(p, t));
	profile_release(&q);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile p;

	if (profile_init(&p))
		abort();
	int err = pprof_decode(&p, data, size);
	FUZZ_ASSERT(err == 0 || err == -EINVAL || err == -EBADMSG || err == -ENODATA || err == -EFBIG ||
		    err == -ERANGE || err == -EOVERFLOW || err == -EPROTO);
	FUZZ_ASSERT(err || profile_values_check(&p, NULL) == 0);
	if (!err) {
		use_profile(&p);
		round_trip(&p);
	}
	profile_release(&p);
	return 0;
}
