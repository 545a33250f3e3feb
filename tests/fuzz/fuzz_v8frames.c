/* libFuzzer harness: JavaScript functions read from process memory (lib/runtimes/v8frames.c:
 * v8frames_read_func over struct v8mem) with node 20's constants. The input is the process's
 * memory at BASE; its first 4 bytes give the offset of the SharedFunctionInfo read (tagged).
 * Strings come back NUL-terminated and bounded, nothing is read outside the input. */
#include <errno.h>
#include <string.h>

#include <linux/types.h>

#include "fuzz.h"
#include "runtimes/v8frames.h"
#include "../../bpf/firn.h"

#define BASE 0x10000000ULL

/* node 20's constants, as tests/unit/test_v8frames.c has them. */
static void node20(struct v8consts *c)
{
	memset(c, 0, sizeof(*c));
	c->heap_object_tag = 1, c->heap_object_tag_mask = 3, c->smi_tag_mask = 1, c->smi_shift_size = 31;
	c->map_instance_type = 12, c->js_function_shared = 24, c->sfi_name_or_scope_info = 16;
	c->sfi_script_or_debug_info = 32, c->script_name = 16, c->script_source = 8;
	c->script_line_ends = 56, c->string_length = 12, c->seq_one_byte_chars = 16;
	c->seq_two_byte_chars = 16, c->cons_first = 16, c->cons_second = 24, c->thin_actual = 16;
	c->fixed_array_data = 16, c->fixed_array_length = 8, c->type_shared_function_info = 262;
	c->type_script = 167, c->type_scope_info = 261, c->first_nonstring_type = 128;
	c->string_encoding_mask = 8, c->one_byte_string_tag = 8, c->string_representation_mask = 7;
	c->cons_string_tag = 1, c->thin_string_tag = 5, c->scopeinfo_first_vars = 3;
	c->scopeinfo_ncontextlocals = 2;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_image im = { data, size, BASE };
	struct v8mem mem = { fuzz_image_read, &im };
	struct v8consts c;
	struct v8func out;
	uint32_t off = 0;

	if (size < 4)
		return 0;
	memcpy(&off, data, 4);
	node20(&c);
	int err = v8frames_read_func(&c, &mem, 1, BASE + off, &out);
	FUZZ_ASSERT(err == 0 || err == -EFAULT || err == -EINVAL);
	FUZZ_ASSERT(memchr(out.name, 0, sizeof(out.name)) && memchr(out.script, 0, sizeof(out.script)));
	return 0;
}
