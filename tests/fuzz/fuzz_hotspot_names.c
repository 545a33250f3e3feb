/* libFuzzer harness: a Java method's names read from process memory (lib/runtimes/hotspot_names.c:
 * hotspot_method_read over struct hotspot_mem) with JDK 17's offsets. The input is the process's
 * memory at BASE, the Method at BASE + 0x100, as test_hotspot_names's fake lays it out (seed:
 * that fake, written with FIRN_HOTSPOT_SEEDS=DIR). Names come back NUL-terminated, all empty on
 * an error, and nothing is read outside the input. hotspot_method_source too (the source file's
 * index at ConstantPool + 64): a path or "", as its result says. hotspot_method_overloaded
 * (InstanceKlass::_methods at Klass + 0x30: the methods array, its neighbours' names) and the
 * name with its parameters (hotspot_method_format_params: NUL-terminated, "" on an error). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "runtimes/hotspot_names.h"

#define BASE 0x7f0000000000ULL

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_image im = { data, size, BASE };
	struct hotspot_mem mem = { fuzz_image_read, &im };
	struct hotspot_structs hs = { .method_const = 8, .cmethod_constants = 8,
				      .cmethod_name_index = 34, .cmethod_signature_index = 36,
				      .cpool_holder = 24, .cpool_length = 60, .size_cpool = 72,
				      .klass_name = 24, .symbol_length = 4, .symbol_body = 6 };
	struct hotspot_method m;

	int err = hotspot_method_read(&hs, &mem, 1, BASE + 0x100, &m);
	FUZZ_ASSERT(err == 0 || err == -EFAULT || err == -EINVAL);
	FUZZ_ASSERT(memchr(m.klass, 0, sizeof(m.klass)) && memchr(m.name, 0, sizeof(m.name)) &&
		    memchr(m.signature, 0, sizeof(m.signature)));
	if (err)
		FUZZ_ASSERT(!m.klass[0] && !m.name[0] && !m.signature[0]);
	else
		FUZZ_ASSERT(m.klass[0] && m.name[0] && m.signature[0] && !strchr(m.klass, '/'));
	char file[300];
	hs.cpool_source_file_index = 64;
	err = hotspot_method_source(&hs, &mem, 1, BASE + 0x100, file, sizeof(file));
	FUZZ_ASSERT(err == 0 || err == -EFAULT || err == -EINVAL || err == -ENOENT);
	FUZZ_ASSERT(memchr(file, 0, sizeof(file)) && (err ? !file[0] : file[0] != 0));
	bool over = true;
	hs.iklass_methods = 0x30;
	err = hotspot_method_overloaded(&hs, &mem, 1, BASE + 0x100, &over);
	FUZZ_ASSERT(err == 0 || err == -EFAULT || err == -EINVAL || err == -ESTALE || err == -ENOMEM);
	FUZZ_ASSERT(!err || !over);
	char name[1024];
	int n = hotspot_method_format_params(&m, name, sizeof(name));
	FUZZ_ASSERT(n < 0 ? !name[0] : (size_t)n == strlen(name) && name[n - 1] == ')');
	return 0;
}
