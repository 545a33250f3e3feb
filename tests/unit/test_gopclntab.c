/* Unit tests for lib/elf/gopclntab: Go's pclntab read from the gowork fixtures (Debian's Go
 * 1.19: plain, -s -w, and without section headers) against their own .symtab and DWARF; the
 * inlined helper's frame; and hand-made tables of the four formats (1.2, 1.16, 1.18, 1.20) with
 * names, files, lines, inline trees and SP deltas, whole and cut short. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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
 * the line of the call (in the stripped build, as Go's tracebacks show it): without section
 * headers, and in the position-independent builds (those the host's linkers linked keep the
 * table inside .data.rel.ro; lld's leaves the moduledata's pointers, the code's start among
 * them, to the dynamic relocations). */
static void inlined_helper(const char *fixture)
{
	struct gopclntab *g = open_go(fixture);
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

static void test_inlined_helper(void **state)
{
	inlined_helper("gowork-noshdr");
}

static void test_inlined_helper_pie(void **state)
{
	inlined_helper("gowork-pie-stripped");
	inlined_helper("gowork-piex-stripped");
	inlined_helper("gowork-piel-stripped");
}

/* A stripped Go binary nobody here built (esbuild from npm, Go 1.2x; its path in
 * $FIRN_ESBUILD, set by tests/cli/test_go.sh, which installs it): its entry point is Go's,
 * its code named all through, its own packages and inlined frames among the names. */
static void test_foreign_binary(void **state)
{
	const char *path = getenv("FIRN_ESBUILD");
	struct gopclntab_frame fr[16];
	size_t steps = 0, named = 0, own = 0, inl = 0;
	struct elfsym e;
	int fd = -1;

	if (!path || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		print_message("no $FIRN_ESBUILD (tests/cli/test_go.sh sets it)\n");
		skip();
	}
	struct gopclntab *g = gopclntab_new_fd(fd);
	assert_non_null(g);
	assert_int_equal(g->version, GOPCLNTAB_120);
	assert_true(g->gofunc != 0);
	assert_int_equal(elfsym_init_fd(&e, fd), 0);
	assert_int_equal(e.nsyms, 0);
	for (size_t i = 0; i < e.nsegments; i++) {
		const struct elfsym_segment *s = &e.segments[i];
		for (uint64_t pc = s->vaddr; (s->flags & 1) && pc < s->vaddr + s->filesz; pc += 4096) {
			int n = gopclntab_lookup(g, pc, fr, 16);
			steps++;
			named += n > 0 && fr[n - 1].file && fr[n - 1].line;
			own += n > 0 && !strncmp(fr[n - 1].name, "github.com/evanw/esbuild/", 25);
			inl += n > 1;
		}
	}
	print_message("%zu of %zu steps named, %zu esbuild's own, %zu inlined\n", named, steps, own,
		      inl);
	assert_true(steps > 1000);
	assert_true(named * 100 >= steps * 99);
	assert_true(own * 10 >= steps);
	assert_true(inl * 20 >= steps);
	elfsym_release(&e);
	close(fd);
	gopclntab_free(g);
}

/* ---- hand-made tables ---- */

#define IMG_VADDR 0x10000u /* where the made image (table first) lies */
#define TEXT 0x400000u     /* the code's start: main.outer, then main.other, 0x40 bytes each */

static uint8_t img[4096];

/* Writes an n-byte little-endian number at off of img. */
static void put(size_t off, unsigned n, uint64_t v)
{
	for (unsigned i = 0; i < n; i++)
		img[off + i] = (uint8_t)(v >> (8 * i));
}

/* Writes a pc-value table (value, pc delta) pairs, zig-zag and varint, ended by a 0; returns
 * the offset after it. */
static size_t put_pcvalue(size_t off, const int32_t *vals, const uint32_t *pcs, int n)
{
	int32_t prev = -1;

	for (int i = 0; i < n; i++) {
		int32_t d = vals[i] - prev;
		img[off++] = (uint8_t)(d < 0 ? -2 * d - 1 : 2 * d); /* small values: one byte */
		img[off++] = (uint8_t)pcs[i];
		prev = vals[i];
	}
	img[off++] = 0;
	return off;
}

/* Writes function rec's record at off (relative to tab) in format v: name, pc tables (pcsp,
 * pcfile, pcln), the inline index table (2 of 3 pcdata), the flag byte (1.16+) and, with a
 * tree, its funcdata (3 or 4 of 5). */
static void put_record(enum gopclntab_version v, size_t off, uint64_t entry, uint32_t name,
		       const uint32_t pc[3], uint32_t inl, uint64_t tree, uint8_t flag)
{
	unsigned w = v >= GOPCLNTAB_118 ? 4 : 8;
	unsigned nf = v == GOPCLNTAB_12 ? 8 : v == GOPCLNTAB_120 ? 10 : 9;
	size_t fd;

	put(off, w, entry);
	put(off + w, 4, name);
	put(off + w + 12, 4, pc[0]);
	put(off + w + 16, 4, pc[1]);
	put(off + w + 20, 4, pc[2]);
	put(off + w + 24, 4, 3); /* npcdata */
	if (v != GOPCLNTAB_12)
		put(off + w + (nf - 1) * 4 + 1, 1, flag);
	put(off + w + (nf - 1) * 4 + 3, 1, 5); /* nfuncdata */
	put(off + w + nf * 4 + 8, 4, inl);
	fd = off + w + nf * 4 + 12;
	if (v >= GOPCLNTAB_118) {
		for (int i = 0; i < 5; i++)
			put(fd + 4 * i, 4, UINT32_MAX);
		put(fd + 4 * 3, 4, tree ? tree - (IMG_VADDR + 0x700) : UINT32_MAX);
		return;
	}
	fd = (fd + 7) & ~(size_t)7;
	put(fd + 8 * (v == GOPCLNTAB_12 ? 4 : 3), 8, tree);
}

/* Writes the pc tables of both functions from 0x301: main.outer's file 0, lines 10, 20 (inlined
 * main.inner) and 12 (the call), inline index -1, 0, -1; main.other's file 1, line 30; then
 * main.outer's SP deltas 0, 24 (from 0x4), 0 (from 0x34), ending at 0x3c (padding after). file0
 * is the first file's number (1 in the 1.2 format). Their offsets into off[]. */
static void put_tables(int32_t file0, uint32_t off[6])
{
	static const uint32_t pcs3[] = { 0x10, 0x10, 0x20 }, pc1[] = { 0x40 }, sp[] = { 4, 0x30, 8 };
	size_t at = 0x301; /* offset 0 is no table */

	off[0] = at - 0x300;
	at = put_pcvalue(at, (int32_t[]){ file0 }, pc1, 1);
	off[1] = at - 0x300;
	at = put_pcvalue(at, (int32_t[]){ 10, 20, 12 }, pcs3, 3);
	off[2] = at - 0x300;
	at = put_pcvalue(at, (int32_t[]){ -1, 0, -1 }, pcs3, 3);
	off[3] = at - 0x300;
	at = put_pcvalue(at, (int32_t[]){ file0 + 1 }, pc1, 1);
	off[4] = at - 0x300;
	at = put_pcvalue(at, (int32_t[]){ 30 }, pc1, 1);
	off[5] = at - 0x300;
	put_pcvalue(at, (int32_t[]){ 0, 24, 0 }, sp, 3);
}

/* Makes a table of format v in img: two functions, two files, an inline tree at 0x800. */
static void make_table(enum gopclntab_version v)
{
	static const uint32_t magic[] = { 0, 0xfffffffb, 0xfffffffa, 0xfffffff0, 0xfffffff1 };
	static const char names[] = "main.outer\0main.inner\0main.other", files[] = "a.go\0b.go";
	bool old = v == GOPCLNTAB_12;
	unsigned w = v >= GOPCLNTAB_118 ? 4 : 8;
	size_t ftab = old ? 16 : 0x400, nbase = old ? 0x100 : 0;
	uint32_t t[6];

	memset(img, 0, sizeof(img));
	put(0, 4, magic[v]);
	img[6] = 1;
	img[7] = 8;
	put(8, 8, 2);
	memcpy(img + 0x100, names, sizeof(names));
	memcpy(img + 0x2a0, files, sizeof(files));
	put_tables(old ? 1 : 0, t);
	if (old) {
		put(ftab + 40, 4, 0x280); /* after the end entry: the file table */
		put(0x280, 4, 3), put(0x284, 4, 0x2a0), put(0x288, 4, 0x2a5);
		for (int i = 0; i < 6; i++)
			t[i] += 0x300;
	} else {
		/* Go 1.2x no longer stores the code's start (the moduledata has it) */
		uint64_t hdr[] = { 2, 2, v == GOPCLNTAB_120 ? 0 : TEXT, 0x100, 0x200, 0x2a0, 0x300,
				   0x400 };
		for (size_t i = 0, k = 0; i < 8; i++)
			if (v >= GOPCLNTAB_118 || i != 2)
				put(8 + 8 * k++, 8, hdr[i]);
		put(0x200, 4, 0), put(0x204, 4, 5);
	}
	/* the records at 0x460 and 0x4c0: offsets from the function table (1.16+) or the table */
	uint64_t e0 = v >= GOPCLNTAB_118 ? 0 : TEXT, r0 = old ? 0x460 : 0x60, r1 = r0 + 0x60;
	put(ftab, w, e0), put(ftab + w, w, r0);
	put(ftab + 2 * w, w, e0 + 0x40), put(ftab + 3 * w, w, r1);
	put(ftab + 4 * w, w, e0 + 0x80);
	put_record(v, 0x460, e0, nbase, (uint32_t[]){ t[5], t[0], t[1] }, t[2], IMG_VADDR + 0x800, 0);
	put_record(v, 0x4c0, e0 + 0x40, nbase + 22, (uint32_t[]){ 0, t[3], t[4] }, 0, 0,
		   GOPCLNTAB_TOPFRAME);
	/* the inline tree's one entry: main.inner, called at 0x20 (1.20: starting at line 19;
	 * before: its parent -1, the call at a.go:12) */
	put(0x800 + (v == GOPCLNTAB_120 ? 4 : 12), 4, nbase + 11);
	put(0x800 + (v == GOPCLNTAB_120 ? 8 : 16), 4, 0x20);
	if (v == GOPCLNTAB_120)
		put(0x80c, 4, 19);
	else
		put(0x800, 2, 0xffff), put(0x808, 4, 12);
}

/* Reads the made table of format v (go:func.* 0x100 below the tree for 1.18+). */
static void open_made(struct gopclntab *g, enum gopclntab_version v, size_t len)
{
	struct gopclntab_seg seg = { IMG_VADDR, sizeof(img), img };

	make_table(v);
	assert_int_equal(gopclntab_init(g, img, len, IMG_VADDR, TEXT, &seg, 1), 0);
	assert_int_equal(g->version, v);
	if (v >= GOPCLNTAB_118)
		g->gofunc = IMG_VADDR + 0x700;
}

/* Asserts frame i of fr is name at file:line. */
static void expect_frame(const struct gopclntab_frame *fr, int i, const char *name,
			 const char *file, uint32_t line)
{
	assert_string_equal(fr[i].name, name);
	assert_non_null(fr[i].file);
	assert_string_equal(fr[i].file, file);
	assert_int_equal(fr[i].line, line);
}

/* Each format: names, files and lines, the inlined frame at its line with its caller at the
 * call's, nothing outside the functions. */
static void test_made_formats(void **state)
{
	for (enum gopclntab_version v = GOPCLNTAB_12; v <= GOPCLNTAB_120; v++) {
		struct gopclntab g;
		struct gopclntab_frame fr[4];
		open_made(&g, v, sizeof(img));
		assert_int_equal(gopclntab_lookup(&g, TEXT + 4, fr, 4), 1);
		expect_frame(fr, 0, "main.outer", "a.go", 10);
		assert_int_equal(gopclntab_lookup(&g, TEXT + 0x18, fr, 4), 2);
		expect_frame(fr, 0, "main.inner", "a.go", 20);
		expect_frame(fr, 1, "main.outer", "a.go", 12);
		assert_int_equal(gopclntab_lookup(&g, TEXT + 0x18, fr, 1), 1);
		expect_frame(fr, 0, "main.outer", "a.go", 12);
		assert_int_equal(gopclntab_lookup(&g, TEXT + 0x30, fr, 4), 1);
		expect_frame(fr, 0, "main.outer", "a.go", 12);
		assert_int_equal(gopclntab_lookup(&g, TEXT + 0x7f, fr, 4), 1);
		expect_frame(fr, 0, "main.other", "b.go", 30);
		assert_int_equal(gopclntab_lookup(&g, TEXT + 0x80, fr, 4), 0);
		assert_int_equal(gopclntab_lookup(&g, TEXT - 1, fr, 4), 0);
		gopclntab_release(&g);
	}
}

/* gopclntab_pcsp's callback: the runs into the struct runs at ctx. */
struct runs {
	uint64_t pc[8];
	int32_t v[8];
	int n;
};

static int take_run(void *ctx, uint64_t pc, int32_t v)
{
	struct runs *r = ctx;

	if (r->n < 8)
		r->pc[r->n] = pc, r->v[r->n] = v;
	r->n++;
	return 0;
}

/* A callback that stops the walk at its first run. */
static int take_run_stop(void *ctx, uint64_t pc, int32_t v)
{
	(void)ctx, (void)pc, (void)v;
	return -EINTR;
}

/* Each format: a function's bounds, name, entry file and flag (1.17+'s byte; padding in the
 * 1.2 format), its SP-delta runs up to the table's end marker before its padding; none for a
 * function without the table; a callback's stop returned. */
static void test_made_pcsp(void **state)
{
	for (enum gopclntab_version v = GOPCLNTAB_12; v <= GOPCLNTAB_120; v++) {
		struct gopclntab g;
		struct gopclntab_fn fn;
		struct runs r = { 0 };
		open_made(&g, v, sizeof(img));
		assert_int_equal(gopclntab_fn(&g, 0, &fn), 0);
		assert_true(fn.entry == TEXT && fn.end == TEXT + 0x40 && fn.flag == 0);
		assert_string_equal(fn.name, "main.outer");
		assert_string_equal(fn.file, "a.go");
		assert_int_equal(gopclntab_pcsp(&g, &fn, take_run, &r), 0);
		assert_int_equal(r.n, 3);
		assert_true(r.pc[0] == TEXT && r.pc[1] == TEXT + 4 && r.pc[2] == TEXT + 0x34);
		assert_true(r.v[0] == 0 && r.v[1] == 24 && r.v[2] == 0);
		assert_int_equal(gopclntab_fn(&g, 1, &fn), 0);
		assert_string_equal(fn.name, "main.other");
		assert_int_equal(fn.flag, v == GOPCLNTAB_12 ? 0 : GOPCLNTAB_TOPFRAME);
		assert_int_equal(gopclntab_pcsp(&g, &fn, take_run, &r), -ENOENT);
		assert_int_equal(gopclntab_fn(&g, 2, &fn), -ENOENT);
		gopclntab_fn(&g, 0, &fn);
		assert_int_equal(gopclntab_pcsp(&g, &fn, take_run_stop, &r), -EINTR);
		gopclntab_release(&g);
	}
}

/* Cut short anywhere, a table is refused or answers without reading past its end (ASan
 * watches the copy); a damaged magic or pointer size is refused. */
static void test_made_truncated(void **state)
{
	for (enum gopclntab_version v = GOPCLNTAB_12; v <= GOPCLNTAB_120; v++) {
		for (size_t len = 0; len < 0x600; len++) {
			struct gopclntab g;
			struct gopclntab_frame fr[4];
			struct gopclntab_seg seg = { IMG_VADDR, sizeof(img), img };
			make_table(v);
			uint8_t *cut = malloc(len ? len : 1);
			memcpy(cut, img, len);
			if (!gopclntab_init(&g, cut, len, IMG_VADDR, 0, &seg, 1)) {
				for (uint64_t pc = TEXT - 1; pc <= TEXT + 0x80; pc++)
					gopclntab_lookup(&g, pc, fr, 4);
				for (uint64_t i = 0; i < g.nfunc; i++) {
					struct gopclntab_fn fn;
					struct runs r = { 0 };
					if (!gopclntab_fn(&g, i, &fn))
						gopclntab_pcsp(&g, &fn, take_run, &r);
				}
				gopclntab_release(&g);
			}
			free(cut);
		}
	}
	struct gopclntab g;
	struct gopclntab_seg seg = { IMG_VADDR, sizeof(img), img };
	make_table(GOPCLNTAB_118);
	img[7] = 5;
	assert_int_equal(gopclntab_init(&g, img, sizeof(img), IMG_VADDR, 0, &seg, 1), -ENOEXEC);
	img[7] = 8;
	img[0] = 0xf5;
	assert_int_equal(gopclntab_init(&g, img, sizeof(img), IMG_VADDR, 0, &seg, 1), -ENOEXEC);
}

/* Writes an n-byte little-endian number at p. */
static void put_at(uint8_t *p, unsigned n, uint64_t v)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Makes the moduledata's words that point (table, names, text, go:func.*) zeros in the file
 * and R_X86_64_RELATIVE relocations of a PT_DYNAMIC's DT_RELA, as the host's linker leaves a
 * position-independent Go program: a fourth segment (R, 0x30000) holds them. */
static void make_relocs(uint8_t *out, const uint64_t *md, unsigned gofunc_word)
{
	const unsigned words[4] = { 0, 1, 22, gofunc_word };
	uint8_t *ph = out + 64 + 56 * 3;

	ph[0] = 1, ph[4] = 4; /* PT_LOAD, PF_R: file 0x2200, 0x200 bytes at 0x30000 */
	put_at(ph + 8, 8, 0x2200), put_at(ph + 16, 8, 0x30000), put_at(ph + 24, 8, 0x30000);
	put_at(ph + 32, 8, 0x200), put_at(ph + 40, 8, 0x200);
	ph += 56;
	ph[0] = 2; /* PT_DYNAMIC: DT_RELA 0x30040, DT_RELASZ 4 entries, DT_NULL */
	put_at(ph + 8, 8, 0x2200), put_at(ph + 16, 8, 0x30000), put_at(ph + 32, 8, 0x30);
	put_at(out + 0x2200, 8, 7), put_at(out + 0x2208, 8, 0x30040);
	put_at(out + 0x2210, 8, 8), put_at(out + 0x2218, 8, 4 * 24);
	for (int i = 0; i < 4; i++) {
		uint8_t *r = out + 0x2240 + 24 * i;
		put_at(r, 8, 0x20000 + 8 * words[i]), put_at(r + 8, 8, 8), put_at(r + 16, 8, md[words[i]]);
		memset(out + 0x2000 + 8 * words[i], 0, 8);
	}
	out[56] = 5; /* e_phnum */
}

/* The made table of format v in an ELF file without section headers (as Go lays one out: the
 * table in a read-only segment, the moduledata in a writable one, go:func.* at word gofunc_word
 * of it), into out (ELF_SIZE bytes); pie: its pointers in relocations (make_relocs). */
#define ELF_SIZE 0x2400
static void make_elf(enum gopclntab_version v, unsigned gofunc_word, uint8_t *out, bool pie)
{
	static const uint8_t ident[16] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };
	uint8_t *h = out;

	make_table(v);
	memset(out, 0, ELF_SIZE);
	memcpy(h, ident, 16);
	h[16] = 2, h[18] = 62, h[20] = 1;              /* ET_EXEC, EM_X86_64, EV_CURRENT */
	h[32] = 64, h[52] = 64, h[54] = 56, h[56] = 3; /* e_phoff, e_ehsize, e_phentsize, e_phnum */
	for (int i = 0; i < 3; i++) {
		/* the table (R), the moduledata (RW), the code (RX: 0x80 bytes of zeros) */
		static const uint64_t fields[3][5] = { { 0x1000, IMG_VADDR, IMG_VADDR, 0x1000, 0x1000 },
						       { 0x2000, 0x20000, 0x20000, 0x200, 0x200 },
						       { 0x2100, TEXT, TEXT, 0x80, 0x80 } };
		uint8_t *ph = out + 64 + 56 * i;
		ph[0] = 1;                        /* PT_LOAD */
		ph[4] = (uint8_t[]){ 4, 6, 5 }[i]; /* PF_R, PF_R | PF_W, PF_R | PF_X */
		for (int k = 0; k < 5; k++)
			for (int b = 0; b < 8; b++)
				ph[8 + 8 * k + b] = (uint8_t)(fields[i][k] >> (8 * b));
	}
	memcpy(out + 0x1000, img, 0x1000);
	uint64_t md[64] = { IMG_VADDR, IMG_VADDR + 0x100 };
	md[22] = TEXT;
	/* decoys before it: a word whose trees would be zeros, one whose would be the names */
	md[gofunc_word - 2] = IMG_VADDR + 0x6f0;
	md[gofunc_word - 1] = IMG_VADDR;
	md[gofunc_word] = IMG_VADDR + 0x700;
	for (int k = 0; k < 64; k++)
		for (int b = 0; b < 8; b++)
			out[0x2000 + 8 * k + b] = (uint8_t)(md[k] >> (8 * b));
	if (pie)
		make_relocs(out, md, gofunc_word);
}

/* An ELF file without section headers: the table found by its magic, Go 1.18+'s go:func.*
 * by the moduledata wherever the release put it (not a word before it whose trees would read
 * as zeros or names), the code's start from the moduledata when
 * the header has none (1.2x); the inlined frame then read as in the table alone. With
 * $FIRN_GOPCLNTAB_SEEDS set, the made tables and files go there (the fuzzer's seeds). */
static void made_elf(bool pie)
{
	static uint8_t elf[ELF_SIZE];
	const char *seeds = getenv("FIRN_GOPCLNTAB_SEEDS");

	for (enum gopclntab_version v = pie ? GOPCLNTAB_118 : GOPCLNTAB_12; v <= GOPCLNTAB_120; v++) {
		struct gopclntab_frame fr[4];
		make_elf(v, v == GOPCLNTAB_120 ? 44 : 38, elf, pie);
		int fd = memfd_create("gopclntab", MFD_CLOEXEC);
		assert_int_equal(write(fd, elf, ELF_SIZE), ELF_SIZE);
		struct gopclntab *g = gopclntab_new_fd(fd);
		assert_non_null(g);
		assert_int_equal(g->tab_vaddr, IMG_VADDR);
		assert_int_equal(g->text_start, v >= GOPCLNTAB_118 ? TEXT : 0);
		assert_int_equal(g->gofunc, v >= GOPCLNTAB_118 ? IMG_VADDR + 0x700 : 0);
		assert_int_equal(gopclntab_lookup(g, TEXT + 0x18, fr, 4), 2);
		expect_frame(fr, 0, "main.inner", "a.go", 20);
		expect_frame(fr, 1, "main.outer", "a.go", 12);
		gopclntab_free(g);
		close(fd);
		for (int k = 0; seeds && k < 2; k++) {
			char path[512];
			snprintf(path, sizeof(path), "%s/seed-made-%s-v%d", seeds,
				 k ? pie ? "elfpie" : "elf" : "table", v);
			FILE *f = fopen(path, "w");
			assert_non_null(f);
			fwrite(k ? elf : img, 1, k ? ELF_SIZE : 0x1000, f);
			fclose(f);
		}
	}
}

static void test_made_elf(void **state)
{
	made_elf(false);
}

/* The same with the moduledata's pointers zeros the dynamic relocations fill, as the host's
 * linker leaves a position-independent Go program (go build -buildmode=pie, cgo). */
static void test_made_elf_pie(void **state)
{
	made_elf(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_made_formats),
		cmocka_unit_test(test_made_pcsp),
		cmocka_unit_test(test_made_truncated),
		cmocka_unit_test(test_made_elf),
		cmocka_unit_test(test_made_elf_pie),
		cmocka_unit_test(test_names_match_symtab),
		cmocka_unit_test(test_chains_match_dwarf),
		cmocka_unit_test(test_stripped_alike),
		cmocka_unit_test(test_inlined_helper),
		cmocka_unit_test(test_inlined_helper_pie),
		cmocka_unit_test(test_foreign_binary),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
