/* Unit tests for lib/elf/gopclntab: Go's pclntab read from the gowork fixtures (Debian's Go
 * 1.19: plain, -s -w, and without section headers) against their own .symtab and DWARF; the
 * inlined helper's frame; and hand-made tables of the four formats (1.2, 1.16, 1.18, 1.20) with
 * names, files, lines and inline trees, whole and cut short. */
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

#include "elf/dwarfsym.h"
#include "elf/elfsym.h"
#include "elf/gopclntab.h"
#include "symfix.h"

/* The table of fixture NAME; skips the test when the fixture was not built (no go). */
static struct gopclntab *open_go(const char *name)
{
	int fd = open(built_fixture(name), O_RDONLY | O_CLOEXEC);
	struct gopclntab *g;

	if (fd < 0) {
		print_message("no fixture %s (no go at build time)\n", name);
		skip();
	}
	g = gopclntab_new_fd(fd);
	close(fd);
	assert_non_null(g);
	return g;
}

/* The line of tests/fixtures/go/gowork.go holding marker. */
static uint32_t source_line(const char *marker)
{
	FILE *f = fopen(source_fixture("go/gowork.go"), "r");
	char buf[512];
	uint32_t line = 0, found = 0;

	assert_non_null(f);
	while (fgets(buf, sizeof(buf), f)) {
		line++;
		if (strstr(buf, marker))
			found = line;
	}
	fclose(f);
	return found;
}

/* Every function of the plain build's .symtab is named alike by the table at its start and
 * in its middle, as Go prints it: without the linker's ".abi0" of assembly functions (the
 * symbols of type..eq.[N]T functions, which the table calls type..eq.[...]T, left out). */
static void test_names_match_symtab(void **state)
{
	struct gopclntab *g = open_go("gowork");
	struct elfsym e;
	size_t funcs = 0, same = 0;

	assert_int_equal(elfsym_init_path(&e, built_fixture("gowork")), 0);
	assert_int_equal(g->version, GOPCLNTAB_118);
	for (size_t i = 0; i < e.nsyms; i++) {
		const char *sym = elfsym_name(&e, &e.syms[i]), *got = NULL, *mid = NULL;
		uint64_t entry = 0, start = e.syms[i].start, end = elfsym_end(&e, &e.syms[i]);
		char want[512];
		size_t len = strlen(sym);
		if (start < g->text_start || end - start < 2 || strchr(sym, '[') || len >= sizeof(want))
			continue;
		memcpy(want, sym, len + 1);
		if (len > 5 && !strcmp(want + len - 5, ".abi0"))
			want[len - 5] = 0;
		funcs++;
		bool ok = !gopclntab_func(g, start, &got, &entry) && entry == start &&
			  !strcmp(got, want) &&
			  !gopclntab_func(g, start + (end - start) / 2, &mid, NULL) && !strcmp(mid, want);
		same += ok;
		if (!ok && funcs - same < 20)
			print_message("%s 0x%lx: %s %s\n", want, (unsigned long)start, got, mid);
	}
	print_message("%zu of %zu functions named as .symtab names them\n", same, funcs);
	assert_true(funcs > 1000);
	assert_true(same * 1000 >= funcs * 995);
	elfsym_release(&e);
	gopclntab_free(g);
}

/* Whether two chains agree: the same functions, files and lines, innermost first. */
static bool same_chain(const struct gopclntab_frame *a, int na, const struct dwarfsym_frame *b,
		       int nb)
{
	if (na != nb)
		return false;
	for (int i = 0; i < na; i++)
		if (!b[i].name || strcmp(a[i].name, b[i].name) || !a[i].file || !b[i].file ||
		    (strcmp(a[i].file, b[i].file) && (strncmp(b[i].file, "./", 2) ||
						      strcmp(a[i].file, b[i].file + 2))) ||
		    a[i].line != b[i].line)
			return false;
	return true;
}

/* The table's chains (inlined frames, files, lines) agree with the plain build's DWARF at
 * addresses all through the code; inlined frames among them. */
static void test_chains_match_dwarf(void **state)
{
	struct gopclntab *g = open_go("gowork");
	int fd = open(built_fixture("gowork"), O_RDONLY | O_CLOEXEC);
	struct dwarfsym *d = dwarfsym_new_fd(fd);
	struct gopclntab_frame gf[16];
	struct dwarfsym_frame df[16];
	size_t tried = 0, same = 0, inlined = 0;
	uint64_t lo = g->text_start, hi;

	assert_non_null(d);
	assert_int_equal(gopclntab_func(g, lo, &(const char *){ 0 }, NULL), 0);
	for (hi = lo; !gopclntab_func(g, hi + 0x1000, &(const char *){ 0 }, NULL); hi += 0x1000)
		;
	for (uint64_t pc = lo; pc < hi; pc += 13) {
		int ng = gopclntab_lookup(g, pc, gf, 16), nd = dwarfsym_lookup(d, pc, df, 16);
		if (ng <= 0 || nd <= 0 || !df[nd - 1].name)
			continue; /* padding, or code DWARF does not describe (assembly) */
		tried++;
		same += same_chain(gf, ng, df, nd);
		inlined += ng > 1 && same_chain(gf, ng, df, nd);
		if (!same_chain(gf, ng, df, nd) && tried - same <= 5)
			print_message("0x%lx: %s %s:%u (%d) vs %s %s:%u (%d)\n", (unsigned long)pc,
				      gf[0].name, gf[0].file, gf[0].line, ng, df[0].name, df[0].file,
				      df[0].line, nd);
	}
	print_message("%zu of %zu addresses alike (%zu with inlined frames)\n", same, tried, inlined);
	assert_true(tried > 10000);
	assert_true(same * 100 >= tried * 99);
	assert_true(inlined > 100);
	dwarfsym_free(d);
	close(fd);
	gopclntab_free(g);
}

/* Whether two chains of the table agree. */
static bool same_frames(const struct gopclntab_frame *a, int na, const struct gopclntab_frame *b,
			int nb)
{
	if (na != nb)
		return false;
	for (int i = 0; i < na; i++)
		if (strcmp(a[i].name, b[i].name) || !a[i].file != !b[i].file ||
		    (a[i].file && strcmp(a[i].file, b[i].file)) || a[i].line != b[i].line)
			return false;
	return true;
}

/* The stripped build (-s -w) and its copy without section headers (the table found by its
 * magic, go:func.* through the moduledata) answer as the plain build does, address by address
 * (the linker lays out the code alike). */
static void test_stripped_alike(void **state)
{
	struct gopclntab *plain = open_go("gowork"), *stripped = open_go("gowork-stripped");
	struct gopclntab *noshdr = open_go("gowork-noshdr");
	struct gopclntab_frame a[16], b[16], c[16];
	size_t tried = 0, same = 0;

	assert_int_equal(noshdr->tab_vaddr, stripped->tab_vaddr);
	assert_int_equal(noshdr->gofunc, plain->gofunc);
	assert_true(plain->gofunc != 0);
	for (uint64_t pc = plain->text_start; ; pc += 7) {
		int na = gopclntab_lookup(plain, pc, a, 16);
		if (na <= 0 && pc > plain->text_start + 0x10000)
			break;
		tried++;
		same += same_frames(a, na, b, gopclntab_lookup(stripped, pc, b, 16)) &&
			same_frames(a, na, c, gopclntab_lookup(noshdr, pc, c, 16));
	}
	print_message("%zu of %zu addresses alike\n", same, tried);
	assert_true(tried > 10000);
	assert_int_equal(same, tried);
	gopclntab_free(plain);
	gopclntab_free(stripped);
	gopclntab_free(noshdr);
}

/* dist, inlined into sumDist, is a frame of its own at its line, and sumDist's frame is at
 * the line of the call (in the stripped build, as Go's tracebacks show it). */
static void test_inlined_helper(void **state)
{
	struct gopclntab *g = open_go("gowork-noshdr");
	struct gopclntab_frame fr[8];
	uint32_t call = source_line("INLINE_CALL"), body = source_line("return p.x*p.x");
	const char *name;
	uint64_t entry = 0, found = 0;

	for (uint64_t pc = g->text_start; !found && !gopclntab_func(g, pc, &name, &entry); pc++) {
		if (strcmp(name, "main.sumDist"))
			continue; /* pc steps to the next byte until it is in sumDist */
		if (gopclntab_lookup(g, pc, fr, 8) == 2 && !strcmp(fr[0].name, "main.dist"))
			found = pc;
	}
	assert_true(found != 0);
	assert_string_equal(fr[1].name, "main.sumDist");
	assert_int_equal(fr[0].line, body);
	assert_int_equal(fr[1].line, call);
	assert_non_null(strstr(fr[0].file, "go/gowork.go"));
	gopclntab_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_match_symtab),
		cmocka_unit_test(test_chains_match_dwarf),
		cmocka_unit_test(test_stripped_alike),
		cmocka_unit_test(test_inlined_helper),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
