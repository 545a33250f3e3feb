/* libFuzzer harness: folded_read_comm on arbitrary text (the last byte picks the comm mode). Whatever it accepts must write back as
 * folded text and as pprof, and the good lines' counts must add up to the profile's total. */
#include <errno.h>
#include <string.h>

#include "folded.h"
#include "fuzz.h"
#include "pprof.h"
#include "profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	struct folded_stats st;
	struct profile p;

	if (!null && !(null = fopen("/dev/null", "w")))
		abort();
	FILE *f = fmemopen((void *)data, size ? size : 1, "r");
	if (!f || profile_init(&p))
		abort();
	if (!size)
		fgetc(f); /* fmemopen needs a size of 1 at least: read the one byte away */
	enum folded_comm comm = size ? data[size - 1] % 3 : FOLDED_COMM_AUTO; /* first frame: comm? */
	int err = folded_read_comm(&p, f, comm, &st);
	fclose(f);
	FUZZ_ASSERT(err == 0);
	FUZZ_ASSERT(st.bad_lines <= st.lines);
	int64_t sum = 0;
	for (uint64_t i = 0; i < p.nsamples; i++)
		if (__builtin_add_overflow(sum, p.samples[i].values[0], &sum))
			sum = INT64_MAX;
	FUZZ_ASSERT((uint64_t)sum <= st.samples); /* both saturate */
	struct folded_opts o = { .annotate_inline = true, .comm_first = comm == FOLDED_COMM_YES,
				 .comm_header = true };
	FUZZ_ASSERT(folded_write(&p, null, &o) == 0);
	void *buf = NULL;
	size_t len = 0;
	FUZZ_ASSERT(pprof_encode(&p, false, &buf, &len) == 0);
	free(buf);
	profile_release(&p);
	return 0;
}
