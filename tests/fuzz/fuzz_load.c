/* libFuzzer harness: profile_load on an arbitrary file (format detection between gzip pprof,
 * raw pprof and folded text, then the chosen reader), through a memory file's /proc path. A
 * profile that loads has no negative value and no sum past INT64_MAX. */
#include <errno.h>

#include "fuzz.h"
#include "format/input.h"
#include "model/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct folded_stats st;
	struct profile p;

	if (profile_init(&p))
		abort();
	int err = profile_load(&p, fuzz_memfd_path(data, size), &st);
	FUZZ_ASSERT(err == 0 || err == -EINVAL || err == -EBADMSG || err == -ENODATA || err == -EFBIG ||
		    err == -ERANGE || err == -EOVERFLOW || err == -EPROTO);
	FUZZ_ASSERT(err != -ENODATA || size == 0 || st.lines == 0);
	FUZZ_ASSERT(err || profile_values_check(&p, NULL) == 0); /* sums over samples fit */
	profile_release(&p);
	return 0;
}
