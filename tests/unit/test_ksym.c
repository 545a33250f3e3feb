/* Unit tests for lib/ksym: the handwritten tests/fixtures/kallsyms.txt (core, modules, BPF,
 * unsorted lines, aliases), restricted and malformed files, and the live /proc/kallsyms. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ksym.h"
#include "symfix.h"

/* Loads the fixture, asserting success. */
static void load_fixture(struct ksym *k)
{
	assert_int_equal(ksym_load(k, source_fixture("kallsyms.txt")), 0);
}

/* Asserts that addr resolves to name in module (NULL: core kernel). */
static void assert_sym(const struct ksym *k, uint64_t addr, const char *name, const char *module)
{
	const char *n = NULL, *m = "unset";

	assert_int_equal(ksym_lookup(k, addr, &n, &m), 0);
	assert_string_equal(n, name);
	if (module)
		assert_string_equal(m, module);
	else
		assert_null(m);
}

static void test_core(void **state)
{
	struct ksym k;

	load_fixture(&k);
	assert_int_equal(k.nsyms, 9); /* text symbols only, one per address */
	/* of aliases, the first listed: the kernel lists its own lookup's choice first */
	assert_sym(&k, 0xffffffff81000000, "_text_alias", NULL);
	assert_sym(&k, 0xffffffff810000ff, "_text_alias", NULL);
	assert_sym(&k, 0xffffffff81000100, "core_alpha", NULL);
	assert_sym(&k, 0xffffffff81000180, "core_alpha", NULL);
	assert_sym(&k, 0xffffffff810002ff, "core_beta", NULL); /* the D symbol is not text */
	assert_sym(&k, 0xffffffff81000300, "core_weak", NULL);
	assert_sym(&k, 0xffffffff81000400, "_etext", NULL);
	assert_int_equal(k.core_start, 0xffffffff81000000);
	assert_int_equal(k.core_end, 0xffffffff81000401);
	ksym_release(&k);
}

static void test_edges(void **state)
{
	struct ksym k;

	load_fixture(&k);
	assert_int_equal(ksym_lookup(&k, 0xffffffff80ffffff, NULL, NULL), -ENOENT);
	assert_int_equal(ksym_lookup(&k, 0, NULL, NULL), -ENOENT);
	/* the last core symbol covers at most KSYM_LAST_SPAN bytes */
	assert_sym(&k, 0xffffffff81000400 + KSYM_LAST_SPAN - 1, "_etext", NULL);
	assert_int_equal(ksym_lookup(&k, 0xffffffff81000400 + KSYM_LAST_SPAN, NULL, NULL), -ENOENT);
	assert_int_equal(ksym_lookup(&k, 0xffffffff82000000, NULL, NULL), -ENOENT);
	assert_int_equal(ksym_lookup(&k, 0xffffffffc0003000 + KSYM_LAST_SPAN, NULL, NULL), -ENOENT);
	assert_int_equal(ksym_lookup(&k, UINT64_MAX, NULL, NULL), -ENOENT);
	ksym_release(&k);
}

static void test_modules(void **state)
{
	struct ksym k;

	load_fixture(&k);
	assert_sym(&k, 0xffffffffc0000800, "bar_only", "bar"); /* listed last, sorted first */
	assert_sym(&k, 0xffffffffc0000fff, "bar_only", "bar");
	assert_sym(&k, 0xffffffffc0001000, "mod_fn_one", "foo");
	assert_sym(&k, 0xffffffffc0001090, "mod_fn_two", "foo");
	assert_sym(&k, 0xffffffffc0001100, "mod_fn_two", "foo"); /* d mod_data is not text */
	assert_sym(&k, 0xffffffffc0003010, "bpf_prog_6deef7357e7b4530_handler", "bpf");
	assert_int_equal(k.nmodules, 3);
	for (size_t i = 0; i < k.nmodules; i++) {
		if (strcmp(k.modules[i].name, "foo"))
			continue;
		assert_int_equal(k.modules[i].start, 0xffffffffc0001000);
		assert_int_equal(k.modules[i].end, 0xffffffffc0001081);
	}
	ksym_release(&k);
}

/* Writes text to a fresh temporary file; returns its path (static buffer). */
static const char *temp_file(const char *text)
{
	static char path[] = "/tmp/firn-ksym-XXXXXX";

	strcpy(path, "/tmp/firn-ksym-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

/* Loads text from a temporary file; returns ksym_load's result. */
static int load_text(const char *text)
{
	struct ksym k;
	const char *path = temp_file(text);
	int err = ksym_load(&k, path);

	unlink(path);
	if (!err)
		ksym_release(&k);
	else
		assert_null(k.syms);
	return err;
}

static void test_errors(void **state)
{
	struct ksym k;

	assert_int_equal(load_text("0000000000000000 T _stext\n0000000000000000 t foo\t[m]\n"),
			 -EPERM);
	assert_int_equal(load_text("ffffffff81000000 D data_only\n"), -ENOENT);
	assert_int_equal(load_text(""), -ENOENT);
	assert_int_equal(load_text("ffffffff81000000T x\n"), -EINVAL);
	assert_int_equal(load_text("zz T x\n"), -EINVAL);
	assert_int_equal(load_text("ffffffff81000000 T\n"), -EINVAL);
	assert_int_equal(load_text("11112222333344445 T x\n"), -EINVAL);
	assert_int_equal(load_text("ffffffff81000000 T x\n\nffffffff81000010 T y"), 0);
	assert_int_equal(ksym_load(&k, "/nonexistent/kallsyms"), -ENOENT);
}

/* Finds name's address in /proc/kallsyms with stdio, independently of ksym; 0 if absent. */
static uint64_t proc_address_of(const char *name)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], sym[256], type;
	unsigned long long addr;
	uint64_t found = 0;

	while (f && !found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 && !strcmp(sym, name))
			found = addr;
	if (f)
		fclose(f);
	return found;
}

static void test_proc_kallsyms(void **state)
{
	struct timespec t0, t1;
	struct ksym k;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = ksym_load(&k, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (err == -EPERM || err == -EACCES || err == -ENOENT)
		skip(); /* unprivileged, or no kallsyms */
	assert_int_equal(err, 0);
	double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
	print_message("loaded %zu kernel symbols in %.1f ms\n", k.nsyms, ms);
	assert_true(ms < 10000); /* loose: valgrind and busy machines */
	uint64_t addr = proc_address_of("schedule");
	assert_true(addr != 0);
	assert_sym(&k, addr, "schedule", NULL);
	assert_sym(&k, addr + 1, "schedule", NULL);
	ksym_release(&k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_core),
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_modules),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_proc_kallsyms),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
