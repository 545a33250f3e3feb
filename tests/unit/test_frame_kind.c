/* Unit tests for lib/model/frame_kind: each runtime's mapping and user name, both looked up
 * back to the runtime, and what names no runtime (NULL, "", a name in the other column). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "model/frame_kind.h"

/* The names every runtime has had; a saved profile is read back by the mapping names. */
static const struct {
	enum frame_runtime r;
	const char *mapping, *name;
} want[] = {
	{ FRAME_NATIVE, "", "" },
	{ FRAME_PYTHON, "[python]", "python" },
	{ FRAME_GPU, "[gpu]", "gpu" },
	{ FRAME_JAVASCRIPT, "[javascript]", "javascript" },
	{ FRAME_JAVA, "[java]", "java" },
};

/* Each runtime's two names, and each name back to its runtime. */
static void test_names(void **state)
{
	(void)state;
	assert_int_equal(sizeof(want) / sizeof(want[0]), FRAME_RUNTIMES);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_string_equal(frame_runtime_mapping(want[i].r), want[i].mapping);
		assert_string_equal(frame_runtime_name(want[i].r), want[i].name);
		assert_int_equal(frame_runtime_of_mapping(want[i].mapping), want[i].r);
		assert_int_equal(frame_runtime_of_name(want[i].name), want[i].r);
	}
}

/* Out of range, NULL, unknown, or a name of the other column: no runtime. */
static void test_unknown(void **state)
{
	(void)state;
	assert_string_equal(frame_runtime_mapping(FRAME_RUNTIMES), "");
	assert_string_equal(frame_runtime_name((enum frame_runtime)-1), "");
	assert_int_equal(frame_runtime_of_mapping(NULL), FRAME_NATIVE);
	assert_int_equal(frame_runtime_of_name(NULL), FRAME_NATIVE);
	assert_int_equal(frame_runtime_of_mapping("[perl]"), FRAME_NATIVE);
	assert_int_equal(frame_runtime_of_mapping("python"), FRAME_NATIVE);
	assert_int_equal(frame_runtime_of_name("[python]"), FRAME_NATIVE);
	assert_int_equal(frame_runtime_of_name("Python"), FRAME_NATIVE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_unknown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
