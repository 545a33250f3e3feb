/* libFuzzer harness: V8's post-mortem constants (lib/runtimes/v8consts) from mutated ELF files, from memory
 * and from a descriptor. A file read whole must hold a layout the reader promises (fp slots below
 * fp, the heap object tag, distinct frame markers); a refused one must say why. */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "runtimes/v8consts.h"

/* Checks what v8consts promises of a result. */
static void check(const struct v8consts *c, int err)
{
	FUZZ_ASSERT(err == 0 || err == -ENOENT || err == -EPROTO || err == -EINVAL || err == -ENOMEM);
	FUZZ_ASSERT(memchr(c->reason, 0, sizeof(c->reason)));
	if (err == -EPROTO)
		FUZZ_ASSERT(c->reason[0]);
	if (err)
		return;
	FUZZ_ASSERT(c->found > 0 && !c->reason[0]);
	FUZZ_ASSERT(c->off_fp_function < 0 && c->off_fp_function >= -64);
	FUZZ_ASSERT(c->off_fp_function != c->off_fp_context);
	FUZZ_ASSERT(c->heap_object_tag == 1 && c->heap_object_tag_mask == 3);
	FUZZ_ASSERT(c->frame_type[V8_FRAME_INTERPRETED] != c->frame_type[V8_FRAME_OPTIMIZED]);
	FUZZ_ASSERT(v8consts_frame_type(c, c->frame_type[V8_FRAME_INTERPRETED]) >= 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct v8consts c;

	check(&c, v8consts_read_memory(&c, data, size));
	check(&c, v8consts_read_fd(&c, fuzz_memfd(data, size)));
	return 0;
}
