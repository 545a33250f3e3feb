/* Unit tests for lib/unwind/unwind_go: Go functions' unwind rows from their pclntab SP deltas.
 * The row for each kind of run; the gowork fixtures' tables (Debian's Go 1.19, no .eh_frame):
 * every run of every function a row that says what the run says, Go assembly (sha256.block)
 * with rbp left alone, Go code with rbp where its prologue saved it, the runtime's outermost
 * functions END, its stack switchers UNSUPPORTED; the stripped build's rows the plain one's;
 * the position-independent builds' likewise;
 * rows merged under .eh_frame's where those cover the code; no rows for a C program. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "unwind/unwind_go.h"
#include "symfix.h"

/* Opens fixture NAME; skips the test when it was not built (no go at build time). */
static int open_fixture(const char *name)
{
	int fd = open(built_fixture(name), O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		print_message("no fixture %s (no go at build time)\n", name);
		skip();
	}
	return fd;
}

/* The row r for a run of delta bytes of fn, at 0x1000. */
static struct firn_row row_of(const char *name, const char *file, uint8_t flag, int32_t delta)
{
	struct gopclntab_fn fn = { .entry = 0x1000, .end = 0x2000, .name = name, .file = file,
				   .flag = flag };
	struct firn_row r;

	unwind_go_row(&fn, 0x1000, delta, &r);
	assert_int_equal(r.pc, 0x1000);
	return r;
}

/* Each kind of run: Go code before and after its prologue, assembly, the outermost and the
 * stack-switching functions, deltas a row cannot hold. */
static void test_row_kinds(void **state)
{
	struct firn_row r = row_of("main.f", "/x/f.go", 0, 0);
	assert_true(r.type == FIRN_ROW_CFA_RSP && r.cfa_off == 8 && r.rbp_off8 == 0);
	r = row_of("main.f", "/x/f.go", 0, 24);
	assert_true(r.type == FIRN_ROW_CFA_RSP && r.cfa_off == 32 && r.rbp_off8 == -2);
	r = row_of("crypto/sha256.block", "/x/sha256block_amd64.s", 0, 544);
	assert_true(r.type == FIRN_ROW_CFA_RSP && r.cfa_off == 552 && r.rbp_off8 == 0);
	r = row_of("p.asmfunc", NULL, GOPCLNTAB_ASM, 16);
	assert_true(r.type == FIRN_ROW_CFA_RSP && r.cfa_off == 24 && r.rbp_off8 == 0);
	assert_int_equal(row_of("runtime.goexit", NULL, 0, 0).type, FIRN_ROW_END);
	assert_int_equal(row_of("runtime.rt0_go", NULL, 0, 8).type, FIRN_ROW_END);
	assert_int_equal(row_of("p.top", NULL, GOPCLNTAB_TOPFRAME, 8).type, FIRN_ROW_END);
	assert_int_equal(row_of("runtime.systemstack", NULL, 0, 8).type, FIRN_ROW_UNSUPPORTED);
	assert_int_equal(row_of("runtime.mcall", NULL, 0, 0).type, FIRN_ROW_UNSUPPORTED);
	assert_int_equal(row_of("main.f", "/x/f.go", 0, -8).type, FIRN_ROW_UNSUPPORTED);
	r = row_of("main.main", "/x/f.go", 0, INT16_MAX - 8);
	assert_true(r.type == FIRN_ROW_CFA_RSP && r.cfa_off == INT16_MAX);
	assert_int_equal(row_of("main.main", "/x/f.go", 0, INT16_MAX - 7).type, FIRN_ROW_GAP);
	assert_int_equal(row_of(NULL, NULL, 0, 8).type, FIRN_ROW_CFA_RSP);
}

/* The checks of one function's runs against the table (gopclntab_pcsp's callback). */
struct run_check {
	const struct unwind_table *t;
	const struct gopclntab_fn *fn;
	size_t runs;
};

/* Asserts that the row in force at the run's pc says what unwind_go_row says of the run. */
static int check_run(void *ctx, uint64_t pc, int32_t delta)
{
	struct run_check *c = ctx;
	struct firn_row want;
	int64_t i = unwind_table_find(c->t, pc);

	unwind_go_row(c->fn, pc, delta, &want);
	assert_true(i >= 0);
	const struct firn_row *r = &c->t->rows[i];
	if (r->type != want.type || r->cfa_off != want.cfa_off || r->rbp_off8 != want.rbp_off8)
		fail_msg("%s at %#llx: row %u/%d/%d, want %u/%d/%d", c->fn->name,
			 (unsigned long long)pc, r->type, r->cfa_off, r->rbp_off8, want.type,
			 want.cfa_off, want.rbp_off8);
	c->runs++;
	return 0;
}

/* Finds function name of g into fn; fails when g has none. */
static void find_fn(const struct gopclntab *g, const char *name, struct gopclntab_fn *fn)
{
	for (uint64_t i = 0; i < g->nfunc; i++)
		if (!gopclntab_fn(g, i, fn) && fn->name && !strcmp(fn->name, name))
			return;
	fail_msg("no function %s", name);
}

/* The type of the row in force at pc. */
static int type_at(const struct unwind_table *t, uint64_t pc)
{
	int64_t i = unwind_table_find(t, pc);

	assert_true(i >= 0);
	return t->rows[i].type;
}

/* The fixture's table: each run of each function's pcsp a row of its own rule; most functions
 * covered; the kinds the header promises, by name. */
static void check_fixture(const char *name)
{
	int fd = open_fixture(name);
	struct gopclntab *g = gopclntab_new_fd(fd);
	struct unwind_table t;
	struct gopclntab_fn fn;
	size_t funcs = 0, runs = 0;

	assert_non_null(g);
	assert_int_equal(unwind_table_build(&t, fd), 0);
	for (uint64_t i = 0; i < g->nfunc; i++) {
		struct run_check c = { &t, &fn, 0 };
		if (gopclntab_fn(g, i, &fn) || gopclntab_pcsp(g, &fn, check_run, &c))
			continue;
		funcs += c.runs > 0;
		runs += c.runs;
	}
	print_message("%s: %zu of %llu functions, %zu runs, %u rows\n", name, funcs,
		      (unsigned long long)g->nfunc, runs, t.n);
	assert_true(funcs * 100 >= g->nfunc * 95);
	find_fn(g, "crypto/sha256.block", &fn);
	int64_t body = unwind_table_find(&t, fn.entry + 0x100);
	assert_true(body >= 0 && t.rows[body].type == FIRN_ROW_CFA_RSP &&
		    t.rows[body].cfa_off > 256 && t.rows[body].rbp_off8 == 0);
	find_fn(g, "main.hashWork", &fn);
	int64_t k = unwind_table_find(&t, fn.entry);
	while (k + 1 < t.n && t.rows[k].rbp_off8 != -2 && t.rows[k + 1].pc < fn.end)
		k++;
	assert_true(t.rows[k].rbp_off8 == -2 && t.rows[k].cfa_off >= 24);
	find_fn(g, "runtime.goexit", &fn);
	assert_int_equal(type_at(&t, fn.entry), FIRN_ROW_END);
	find_fn(g, "runtime.systemstack", &fn);
	assert_int_equal(type_at(&t, fn.entry), FIRN_ROW_UNSUPPORTED);
	unwind_table_release(&t);
	gopclntab_free(g);
	close(fd);
}

/* Both builds of gowork: rows for their functions, the plain build's the stripped one's. */
static void test_fixture_rows(void **state)
{
	struct unwind_table a, b;
	int fa, fb;

	check_fixture("gowork");
	check_fixture("gowork-stripped");
	check_fixture("gowork-noshdr");
	fa = open_fixture("gowork"), fb = open_fixture("gowork-stripped");
	assert_int_equal(unwind_table_build(&a, fa), 0);
	assert_int_equal(unwind_table_build(&b, fb), 0);
	assert_int_equal(a.n, b.n);
	assert_memory_equal(a.rows, b.rows, a.n * sizeof(*a.rows));
	unwind_table_release(&a);
	unwind_table_release(&b);
	close(fa);
	close(fb);
}

/* The position-independent builds, linked by Go's linker and by GNU ld's and lld's (cgo's
 * way: their .eh_frame covers the C start-up code, the Go rows the rest). */
static void test_pie_rows(void **state)
{
	check_fixture("gowork-pie-stripped");
	check_fixture("gowork-piex-stripped");
	check_fixture("gowork-piel-stripped");
}

/* Rows of CFI (an FDE over part of sha256.block, as a cgo build's C code has) win where they
 * cover code; the Go rows fill what they leave, before, between and after. */
static void test_merge_under_cfi(void **state)
{
	int fd = open_fixture("gowork-stripped");
	struct gopclntab *g = gopclntab_new_fd(fd);
	struct gopclntab_fn fn;
	struct unwind_table t = { 0 }, plain;

	assert_non_null(g);
	find_fn(g, "crypto/sha256.block", &fn);
	assert_int_equal(unwind_table_build(&plain, fd), 0);
	t.cap = t.n = 2;
	t.rows = calloc(2, sizeof(*t.rows));
	t.rows[0] = (struct firn_row){ .pc = fn.entry + 0x100, .type = FIRN_ROW_CFA_RBP, .cfa_off = 16 };
	t.rows[1] = (struct firn_row){ .pc = fn.entry + 0x200, .type = FIRN_ROW_GAP };
	assert_int_equal(unwind_go_add(&t, fd), 0);
	for (uint32_t i = 1; i < t.n; i++)
		assert_true(t.rows[i].pc > t.rows[i - 1].pc);
	for (uint64_t pc = fn.entry - 0x40; pc < fn.entry + 0x300; pc++) {
		const struct firn_row *got = &t.rows[unwind_table_find(&t, pc)];
		const struct firn_row *go = &plain.rows[unwind_table_find(&plain, pc)];
		if (pc >= fn.entry + 0x100 && pc < fn.entry + 0x200)
			assert_true(got->type == FIRN_ROW_CFA_RBP && got->cfa_off == 16);
		else
			assert_true(got->type == go->type && got->cfa_off == go->cfa_off &&
				    got->rbp_off8 == go->rbp_off8);
	}
	assert_int_equal(t.by_type[FIRN_ROW_CFA_RBP], 1);
	unwind_table_release(&t);
	unwind_table_release(&plain);
	gopclntab_free(g);
	close(fd);
}

/* A C program has no pclntab: its table is its .eh_frame's alone, unwind_go_add says so. */
static void test_no_pclntab(void **state)
{
	int fd = open_fixture("split");
	struct unwind_table t, again;

	assert_int_equal(unwind_table_build(&t, fd), 0);
	assert_int_equal(unwind_table_build(&again, fd), 0);
	assert_int_equal(unwind_go_add(&again, fd), -ENOENT);
	assert_int_equal(again.n, t.n);
	assert_memory_equal(again.rows, t.rows, t.n * sizeof(*t.rows));
	unwind_table_release(&t);
	unwind_table_release(&again);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_row_kinds),
		cmocka_unit_test(test_fixture_rows),
		cmocka_unit_test(test_pie_rows),
		cmocka_unit_test(test_merge_under_cfi),
		cmocka_unit_test(test_no_pclntab),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
