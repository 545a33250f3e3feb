/* Unit tests for lib/base/demangle: C++ (namespaces, templates, operators), Rust legacy and v0 names,
 * and names that are not mangled. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/demangle.h"

/* Asserts that raw demangles to want. */
static void expect(const char *raw, const char *want)
{
	char *got = demangle_name(raw);

	assert_true(demangle_candidate(raw));
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void test_cxx(void **state)
{
	expect("_ZN7firnfix6shapes11AccumulatorIdE4spinEl",
	       "firnfix::shapes::Accumulator<double>::spin(long)");
	expect("_ZN7firnfix6shapes3runIdEET_l", "double firnfix::shapes::run<double>(long)");
	expect("_ZNSt6vectorIiSaIiEE9push_backERKi",
	       "std::vector<int, std::allocator<int> >::push_back(int const&)");
	expect("_ZN2nsplERKNS_1AES2_", "ns::operator+(ns::A const&, ns::A const&)");
	expect("_Z1fv", "f()");
	expect("_ZZ4mainENKUlvE_clEv", "main::{lambda()#1}::operator()() const");
}

static void test_rust(void **state)
{
	expect("_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write"); /* legacy: no hash */
	expect("_RNvCs1234_7mycrate3foo", "mycrate::foo");                    /* v0 */
	expect("_RNvNtCs1234_7mycrate4util6helper", "mycrate::util::helper");
}

static void test_not_mangled(void **state)
{
	const char *plain[] = { "main", "__libc_start_main", "_start", "_Zx", "_R", "" };

	for (size_t i = 0; i < sizeof(plain) / sizeof(*plain); i++) {
		errno = 0;
		assert_null(demangle_name(plain[i]));
		assert_int_equal(errno, EINVAL);
	}
	assert_false(demangle_candidate("main"));
	assert_false(demangle_candidate("__Z1fv"));
	assert_true(demangle_candidate("_Zx")); /* looks mangled; is not */
	expect("_Zoom", "operator||(unsigned long)"); /* is, surprisingly */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cxx),
		cmocka_unit_test(test_rust),
		cmocka_unit_test(test_not_mangled),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
