/* Unit tests for GPU frames: a kernel frame's hash is named by the sample source's kernel map
 * (demangled on request, the mangled name kept as system name, looked up once), a copy frame by
 * its direction, and a hash the map lacks resolves to nothing (an "[unknown]" frame). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include <linux/types.h>

#include "../../bpf/firn.h"
#include "runtimes/gpuframes.h"

/* A sample source with only the kernel map: hash 7 is "_ZN2ns5largeIfEEvPT_". */
static int lookups;

static int fake_gpu_name(struct sample_source *s, unsigned tag, uint64_t hash, char *buf,
			 size_t n)
{
	(void)s;
	lookups++;
	if (tag != FIRN_FRAME_KIND_GPU || hash != 7)
		return -ENOENT;
	snprintf(buf, n, "%s", "_ZN2ns5largeIfEEvPT_");
	return 0;
}

static const struct sample_source_ops fake_ops = { .walker_name = fake_gpu_name };
static struct sample_source fake = { &fake_ops };

static int resolve(struct frame_resolver *r, uint64_t payload, struct resolved_frame *f)
{
	return r->resolve(r->ctx, 42, FIRN_FRAME(FIRN_FRAME_KIND_GPU, payload), f, 4);
}

/* Kernels: demangled (or not), the mangled name as system name, one map lookup per hash. */
static void test_kernel_names(void **state)
{
	(void)state;
	for (int demangle = 0; demangle < 2; demangle++) {
		struct gpu_frames *g = gpu_frames_new(&fake, demangle);
		struct frame_resolver r = gpu_frames_resolver(g);
		struct resolved_frame f[4];
		lookups = 0;
		assert_string_equal(r.mapping, "[gpu]");
		assert_int_equal(resolve(&r, 7, f), 1);
		assert_string_equal(f[0].name, demangle ? "void ns::large<float>(float*)" : "_ZN2ns5largeIfEEvPT_");
		assert_string_equal(f[0].system_name, "_ZN2ns5largeIfEEvPT_");
		assert_int_equal(resolve(&r, 7, f), 1);
		assert_int_equal(lookups, 1);
		assert_int_equal(resolve(&r, 8, f), 0);
		gpu_frames_free(g);
	}
}

/* Copies: named by CUPTI's kind, whatever the kernel map holds. */
static void test_copy_names(void **state)
{
	struct gpu_frames *g = gpu_frames_new(&fake, true);
	struct frame_resolver r = gpu_frames_resolver(g);
	struct resolved_frame f[4];

	(void)state;
	lookups = 0;
	assert_int_equal(resolve(&r, FIRN_GPU_MEMCPY_FRAME | 1, f), 1);
	assert_string_equal(f[0].name, "[memcpy HtoD]");
	assert_int_equal(resolve(&r, FIRN_GPU_MEMCPY_FRAME | 2, f), 1);
	assert_string_equal(f[0].name, "[memcpy DtoH]");
	assert_int_equal(resolve(&r, FIRN_GPU_MEMCPY_FRAME | 200, f), 1);
	assert_string_equal(f[0].name, "[memcpy unknown]");
	assert_int_equal(lookups, 0);
	gpu_frames_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_names),
		cmocka_unit_test(test_copy_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
