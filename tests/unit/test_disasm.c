/* Unit tests for lib/analyze/disasm against the busy fixture (gcc -O2 -g): the instructions of busy_hot
 * found by name, by address and by a profile's samples; their source lines; the shares of a
 * synthetic profile (which must add up to the function's share); build id checks; errors. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyze/disasm.h"
#include "elf/elfsym.h"
#include "symfix.h"

#define BASE 0x555555554000ULL /* where the synthetic profile maps the whole fixture (offset 0) */

/* Index of the first instruction whose text starts with prefix, or -1. */
static ptrdiff_t insn_starting(const struct disasm *d, const char *prefix)
{
	for (size_t i = 0; i < d->n; i++)
		if (!strncmp(d->insns[i].text, prefix, strlen(prefix)))
			return i;
	return -1;
}

/* The line number of the first line of tests/fixtures/busy.c containing needle, or 0. */
static uint32_t source_line_of(const char *needle)
{
	FILE *f = fopen(source_fixture("busy.c"), "r");
	char line[512];
	uint32_t n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, needle)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	return 0;
}

static void test_by_name(void **state)
{
	struct disasm d;
	struct elfsym e;
	const char *name;
	uint64_t start;

	assert_int_equal(disasm_open(&d, built_fixture("busy"), "busy_hot", 0), 0);
	assert_string_equal(d.name, "busy_hot");
	assert_int_equal(elfsym_init_path(&e, built_fixture("busy")), 0);
	assert_int_equal(elfsym_lookup(&e, d.start, &name, &start), 0);
	assert_string_equal(name, "busy_hot");
	assert_int_equal(start, d.start);
	assert_string_equal(d.build_id, e.build_id);
	elfsym_release(&e);
	assert_true(d.n >= 6);
	assert_int_equal(d.insns[0].addr, d.start);
	for (size_t i = 0; i + 1 < d.n; i++)
		assert_int_equal(d.insns[i].addr + d.insns[i].size, d.insns[i + 1].addr);
	assert_int_equal(d.insns[d.n - 1].addr + d.insns[d.n - 1].size, d.end);
	assert_true(insn_starting(&d, "imul") >= 0);
	assert_true(!strncmp(d.insns[d.n - 1].text, "ret", 3));
	disasm_release(&d);
}

/* The multiply-add's instruction carries the line of the multiply-add, and its text is read. */
static void test_lines(void **state)
{
	struct disasm d;
	uint32_t want = source_line_of("x = x * 6364136223846793005UL");

	assert_int_not_equal(want, 0);
	assert_int_equal(disasm_open(&d, built_fixture("busy"), "busy_hot", 0), 0);
	assert_true(d.has_lines);
	ptrdiff_t i = insn_starting(&d, "imul");
	assert_int_equal(d.insns[i].line, want);
	const char *file = d.files[d.insns[i].file];
	assert_string_equal(file + strlen(file) - strlen("busy.c"), "busy.c");
	const char *text = disasm_source_line(&d, d.insns[i].file, want);
	assert_non_null(text);
	assert_non_null(strstr(text, "6364136223846793005UL"));
	/* a source row precedes the instruction whose line changed */
	size_t rows_with_source = 0;
	for (size_t r = 0; r < d.nrows; r++)
		rows_with_source += d.rows[r].source;
	assert_true(rows_with_source >= 2);
	assert_int_equal(d.nrows, d.n + rows_with_source);
	assert_false(d.rows[d.nrows - 1].source);
	disasm_release(&d);
}

/* A copy stripped of its DWARF, which is in a .gnu_debuglink file beside it, gets its lines
 * from there, found as the symbolizer finds debug files (lib/elf/debuginfo). */
static void test_lines_from_debuglink(void **state)
{
	char dir[] = "/tmp/firn-disdbg-XXXXXX", cmd[2048], prog[64];
	struct disasm d;
	uint32_t want = source_line_of("x = x * 6364136223846793005UL");
	const char *fix = built_fixture("busy");

	assert_non_null(mkdtemp(dir));
	int n = snprintf(cmd, sizeof(cmd), "objcopy --only-keep-debug %s %s/busy.debug && "
			 "strip -g -o %s/busy %s && cd %s && objcopy --add-gnu-debuglink=busy.debug busy",
			 fix, dir, dir, fix, dir);
	assert_true(n > 0 && (size_t)n < sizeof(cmd));
	assert_int_equal(system(cmd), 0);
	snprintf(prog, sizeof(prog), "%s/busy", dir);
	assert_int_equal(disasm_open(&d, prog, "busy_hot", 0), 0);
	assert_true(d.has_lines);
	ptrdiff_t i = insn_starting(&d, "imul");
	assert_true(i >= 0);
	assert_int_equal(d.insns[i].line, want);
	disasm_release(&d);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_by_address_and_add(void **state)
{
	struct disasm a, b;

	assert_int_equal(disasm_open(&a, built_fixture("busy"), "busy_cold", 0), 0);
	uint64_t mid = a.insns[a.n / 2].addr + 1;
	assert_int_equal(disasm_open(&b, built_fixture("busy"), NULL, mid), 0);
	assert_string_equal(b.name, "busy_cold");
	assert_int_equal(b.start, a.start);
	assert_int_equal(b.n, a.n);
	assert_int_equal(disasm_find(&b, mid), a.n / 2);
	assert_int_equal(disasm_find(&b, b.end), -1);
	assert_int_equal(disasm_add(&b, mid, 5), 0);
	assert_int_equal(disasm_add(&b, mid - 1, 2), 0);
	assert_int_equal(disasm_add(&b, b.end, 1), -ENOENT);
	assert_int_equal(disasm_add(&b, b.start - 1, 1), -ENOENT);
	assert_int_equal(b.insns[a.n / 2].value, 7);
	assert_int_equal(b.max_value, 7);
	disasm_release(&a);
	disasm_release(&b);
}

/* A stripped file's function is found by its .eh_frame bounds, as the symbolizer names it
 * ("stripfix-stripped+0x1160"): by an address in it and by that name, with the start and end the
 * unstripped copy's symbol has; a name of another file or not at a function's start is none. */
static void test_stripped_bounds(void **state)
{
	struct disasm u, a, b;
	char name[64];

	assert_int_equal(disasm_open(&u, built_fixture("stripfix"), "fix_mix", 0), 0);
	assert_int_equal(disasm_open(&a, built_fixture("stripfix-stripped"), NULL,
				     u.insns[u.n / 2].addr), 0);
	snprintf(name, sizeof(name), "stripfix-stripped+0x%" PRIx64, u.start);
	assert_string_equal(a.name, name);
	assert_true(a.from_bounds && !u.from_bounds);
	assert_int_equal(a.start, u.start);
	assert_int_equal(a.end, u.end);
	assert_int_equal(a.n, u.n);
	assert_int_equal(disasm_open(&b, built_fixture("stripfix-stripped"), name, 0), 0);
	assert_string_equal(b.name, name);
	assert_int_equal(b.end, u.end);
	assert_int_equal(b.n, u.n);
	disasm_release(&b);
	snprintf(name, sizeof(name), "stripfix+0x%" PRIx64, u.start);
	assert_int_equal(disasm_open(&b, built_fixture("stripfix-stripped"), name, 0), -ENOENT);
	disasm_release(&b);
	snprintf(name, sizeof(name), "stripfix-stripped+0x%" PRIx64, u.start + 1);
	assert_int_equal(disasm_open(&b, built_fixture("stripfix-stripped"), name, 0), -ENOENT);
	disasm_release(&b);
	assert_int_equal(disasm_open(&b, built_fixture("stripfix-stripped"), "stripfix-stripped+0x", 0),
			 -ENOENT);
	disasm_release(&b);
	disasm_release(&a);
	disasm_release(&u);
}

static void test_errors(void **state)
{
	struct disasm d;

	assert_int_equal(disasm_open(&d, "/nonexistent/firn-busy", "busy_hot", 0), -ENOENT);
	disasm_release(&d);
	assert_int_equal(disasm_open(&d, built_fixture("busy"), "no_such_function", 0), -ENOENT);
	disasm_release(&d);
	assert_int_equal(disasm_open(&d, built_fixture("busy"), NULL, 0x10), -ENOENT);
	disasm_release(&d);
	assert_int_equal(disasm_open(&d, source_fixture("busy.c"), "busy_hot", 0), -ENOEXEC);
	disasm_release(&d);
}

/* A profile of the fixture mapped at BASE: samples at the imul (60) and at the add after it (30)
 * of busy_hot, at busy_cold (10), in the kernel only (5), and in the kernel over busy_hot's imul
 * (8). The kernel-only sample needs no_kernel to drop out. */
struct fixture_profile {
	struct profile p;
	uint64_t imul, add, cold; /* ELF virtual addresses */
};

/* Adds a location of function name at runtime address addr in mapping m. */
static uint64_t loc(struct profile *p, int64_t m, const char *name, uint64_t addr)
{
	struct profile_line line = { (uint64_t)profile_function(p, name, name, "", 0), 0 };
	int64_t id = profile_add_location(p, m, addr, &line, 1);

	assert_true(id > 0);
	return id;
}

/* Adds a sample with the given locations (leaf first) and value. */
static void sample(struct profile *p, const uint64_t *locs, uint32_t n, int64_t v)
{
	assert_int_equal(profile_add_sample(p, locs, n, &v, NULL, 0), 0);
}

static void fixture_profile(struct fixture_profile *f, const char *build_id)
{
	struct disasm hot, cold;

	assert_int_equal(disasm_open(&hot, built_fixture("busy"), "busy_hot", 0), 0);
	assert_int_equal(disasm_open(&cold, built_fixture("busy"), "busy_cold", 0), 0);
	f->imul = hot.insns[insn_starting(&hot, "imul")].addr;
	f->add = f->imul + hot.insns[insn_starting(&hot, "imul")].size;
	f->cold = cold.insns[cold.n / 2].addr;
	assert_int_equal(profile_init(&f->p), 0);
	assert_true(profile_add_sample_type(&f->p, "samples", "count") >= 0);
	int64_t m = profile_add_mapping(&f->p, BASE, BASE + 0x10000, 0, built_fixture("busy"),
					build_id ? build_id : hot.build_id);
	int64_t k = profile_add_mapping(&f->p, 0, 0, 0, "[kernel.kallsyms]", "");
	uint64_t main_loc = loc(&f->p, m, "main", BASE + f->imul); /* any caller will do */
	uint64_t l_imul[] = { loc(&f->p, m, "busy_hot", BASE + f->imul), main_loc };
	uint64_t l_add[] = { loc(&f->p, m, "busy_hot", BASE + f->add), main_loc };
	uint64_t l_cold[] = { loc(&f->p, m, "busy_cold", BASE + f->cold), main_loc };
	uint64_t l_kernel[] = { loc(&f->p, k, "do_syscall_64", 0xffffffff81000000ULL) };
	uint64_t l_k_hot[] = { l_kernel[0], l_imul[0], main_loc };
	sample(&f->p, l_imul, 2, 60);
	sample(&f->p, l_add, 2, 30);
	sample(&f->p, l_cold, 2, 10);
	sample(&f->p, l_kernel, 1, 5);
	sample(&f->p, l_k_hot, 3, 8);
	disasm_release(&hot);
	disasm_release(&cold);
}

/* Sum of the instruction shares, as the rows print them. */
static double row_share_sum(struct disasm *d)
{
	char buf[512];
	double sum = 0;

	for (size_t i = 0; i < d->nrows; i++) {
		disasm_row_text(d, i, buf, sizeof(buf));
		buf[7] = 0; /* the share column; blank without samples */
		if (!d->rows[i].source)
			sum += atof(buf);
	}
	return sum;
}

static void test_annotate(void **state)
{
	struct fixture_profile f;
	struct disasm d;
	struct disasm_query q = { "busy_hot", "busy", 0, false };

	fixture_profile(&f, NULL);
	assert_int_equal(disasm_annotate(&d, &f.p, f.p.samples, f.p.nsamples, &q), 0);
	assert_string_equal(d.name, "busy_hot");
	assert_false(d.build_id_differs);
	assert_int_equal(d.total, 113);
	assert_int_equal(d.self, 90);
	assert_int_equal(d.insns[disasm_find(&d, f.imul)].value, 60);
	assert_int_equal(d.insns[disasm_find(&d, f.add)].value, 30);
	assert_int_equal(d.max_value, 60);
	assert_int_equal(d.outside + d.elsewhere, 0);
	assert_float_equal(row_share_sum(&d), 90 * 100.0 / 113, 0.02);
	assert_int_equal(disasm_row_heat(&d, d.rows[0].source ? 1 : 0), 0);

	/* without kernel frames: the kernel-only sample drops out, the one over busy_hot counts */
	q.no_kernel = true;
	disasm_count(&d, &f.p, f.p.samples, f.p.nsamples, &q);
	assert_int_equal(d.total, 108);
	assert_int_equal(d.self, 98);
	assert_int_equal(d.insns[disasm_find(&d, f.imul)].value, 68);
	assert_float_equal(row_share_sum(&d), 98 * 100.0 / 108, 0.02);
	disasm_release(&d);
	profile_release(&f.p);
}

static void test_annotate_write(void **state)
{
	struct fixture_profile f;
	struct disasm d;
	struct disasm_query q = { "busy_hot", NULL, 0, false };
	char *text = NULL, want[128];
	size_t len = 0;

	fixture_profile(&f, NULL);
	assert_int_equal(disasm_annotate(&d, &f.p, f.p.samples, f.p.nsamples, &q), 0);
	FILE *m = open_memstream(&text, &len);
	assert_int_equal(disasm_write(&d, m, false), 0);
	fclose(m);
	assert_non_null(strstr(text, "# busy_hot: symbol busy_hot at "));
	assert_non_null(strstr(text, "\n# 79.65% of 113 samples (90) in this function"));
	snprintf(want, sizeof(want), "\n  53.10  %8llx:  imul ", (unsigned long long)f.imul);
	assert_non_null(strstr(text, want));
	assert_null(strstr(text, "DIFFERS"));
	assert_null(strstr(text, "\033["));
	free(text);
	disasm_release(&d);
	profile_release(&f.p);
}

/* A recorded build id (from the profile, any text) with terminal escapes is written escaped. */
static void test_annotate_write_escapes(void **state)
{
	struct fixture_profile f;
	struct disasm d;
	struct disasm_query q = { "busy_hot", NULL, 0, false };
	char *text = NULL;
	size_t len = 0;

	fixture_profile(&f, "\x1b]0;pwned\x07");
	assert_int_equal(disasm_annotate(&d, &f.p, f.p.samples, f.p.nsamples, &q), 0);
	assert_true(d.build_id_differs);
	FILE *m = open_memstream(&text, &len);
	assert_int_equal(disasm_write(&d, m, false), 0);
	fclose(m);
	assert_non_null(strstr(text, " DIFFERS from the recorded \\x1b]0;pwned\\x07: "));
	assert_null(strchr(text, '\x1b'));
	assert_null(strchr(text, '\a'));
	free(text);
	disasm_release(&d);
	profile_release(&f.p);
}

static void test_annotate_errors(void **state)
{
	struct fixture_profile f;
	struct disasm d;
	struct disasm_query q = { "busy_hot", "other-module", 0, false };

	fixture_profile(&f, "00ff00ff");
	assert_int_equal(disasm_annotate(&d, &f.p, f.p.samples, f.p.nsamples, &q), -ENOENT);
	disasm_release(&d);
	q.module = NULL;
	q.function = "main"; /* never a leaf */
	assert_int_equal(disasm_annotate(&d, &f.p, f.p.samples, f.p.nsamples, &q), -ENOENT);
	disasm_release(&d);
	q.function = "do_syscall_64";
	assert_int_equal(disasm_annotate(&d, &f.p, f.p.samples, f.p.nsamples, &q), -EOPNOTSUPP);
	disasm_release(&d);
	q.function = "busy_cold";
	assert_int_equal(disasm_annotate(&d, &f.p, f.p.samples, f.p.nsamples, &q), 0);
	assert_true(d.build_id_differs);
	assert_string_equal(d.recorded_build_id, "00ff00ff");
	assert_int_equal(d.self, 10);
	disasm_release(&d);
	profile_release(&f.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_by_name),
		cmocka_unit_test(test_stripped_bounds),
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_lines_from_debuglink),
		cmocka_unit_test(test_by_address_and_add),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_annotate),
		cmocka_unit_test(test_annotate_write),
		cmocka_unit_test(test_annotate_write_escapes),
		cmocka_unit_test(test_annotate_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
