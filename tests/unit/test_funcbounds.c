/* Unit tests for lib/elf/funcbounds and the names it gives code without symbols: the FDE ranges of
 * the stripped stripfix fixtures match the unstripped copies' function symbols (through
 * .eh_frame_hdr, and by walking .eh_frame where there is no header); the header and the walk
 * agree, also from the program headers of a file without section headers; damaged sections give
 * fewer ranges, never wrong shapes or crashes; the symbolizer names a stripped function
 * "FILE+0xSTART" at every address in it while a symbol's name always wins; PLT stubs (lazy .plt,
 * IBT's .plt.sec) are "NAME@plt" where objdump puts them; .init and .fini are "_init" and
 * "_fini" in stripped and unstripped files alike. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "elf/elfsym.h"
#include "elf/funcbounds.h"
#include "symbolize/intern.h"
#include "symbolize/symbolize.h"
#include "symfix.h"

/* The fixture's own functions (static: only in the unstripped copy's .symtab). */
static const char *const fix_fns[] = { "fix_small", "fix_mix", "fix_strings", "fix_loop", "main" };
#define NFIX (sizeof(fix_fns) / sizeof(fix_fns[0]))

/* The symbol named name in e (its start and end), found by scanning: 0 or -1. */
static int find_symbol(const struct elfsym *e, const char *name, uint64_t *start, uint64_t *end)
{
	for (size_t i = 0; i < e->nsyms; i++) {
		if (!strcmp(elfsym_name(e, &e->syms[i]), name)) {
			*start = e->syms[i].start;
			*end = elfsym_end(e, &e->syms[i]);
			return 0;
		}
	}
	return -1;
}

/* Checks the promised shape: sorted, disjoint, non-empty ranges. */
static void check_shape(const struct funcbounds *fb)
{
	for (size_t i = 0; i < fb->n; i++) {
		assert_true(fb->r[i].start < fb->r[i].end);
		if (i)
			assert_true(fb->r[i - 1].end <= fb->r[i].start);
	}
}

/* Each function of the unstripped fixture is one range of the stripped copy, exactly. */
static void check_fixture(const char *unstripped, const char *stripped)
{
	struct elfsym e;
	struct funcbounds fb;
	int fd = open(built_fixture(stripped), O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(funcbounds_init_fd(&fb, fd), 0);
	close(fd);
	check_shape(&fb);
	assert_int_equal(elfsym_init_path(&e, built_fixture(unstripped)), 0);
	for (size_t i = 0; i < NFIX; i++) {
		uint64_t start = 0, end = 0;
		assert_int_equal(find_symbol(&e, fix_fns[i], &start, &end), 0);
		ptrdiff_t k = funcbounds_find(&fb, start);
		assert_true(k >= 0);
		assert_int_equal(fb.r[k].start, start);
		assert_int_equal(fb.r[k].end, end);
		assert_int_equal(funcbounds_find(&fb, end - 1), k);
	}
	elfsym_release(&e);
	funcbounds_release(&fb);
}

static void test_fixtures(void **state)
{
	(void)state;
	check_fixture("stripfix", "stripfix-stripped");
	check_fixture("stripfix-ibt", "stripfix-ibt-stripped");
	check_fixture("stripfix-nohdr", "stripfix-nohdr-stripped"); /* walked */
}

/* The .eh_frame and .eh_frame_hdr of path, copied into in (the caller frees both). */
static void read_sections(const char *path, struct funcbounds_input *in)
{
	int fd = open(path, O_RDONLY);
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	memset(in, 0, sizeof(*in));
	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		assert_non_null(gelf_getshdr(scn, &sh));
		const char *n = elf_strptr(elf, shstrndx, sh.sh_name);
		Elf_Data *d = elf_rawdata(scn, NULL);
		if (!n || !d || !d->d_buf || !d->d_size)
			continue;
		uint8_t *copy = malloc(d->d_size);
		assert_non_null(copy);
		memcpy(copy, d->d_buf, d->d_size);
		if (!strcmp(n, ".eh_frame")) {
			in->eh_frame = copy, in->eh_frame_len = d->d_size, in->eh_frame_addr = sh.sh_addr;
		} else if (!strcmp(n, ".eh_frame_hdr")) {
			in->hdr = copy, in->hdr_len = d->d_size, in->hdr_addr = sh.sh_addr;
		} else {
			free(copy);
		}
	}
	elf_end(elf);
	close(fd);
	assert_non_null(in->eh_frame);
}

/* Whether two results hold the same ranges. */
static bool same(const struct funcbounds *a, const struct funcbounds *b)
{
	return a->n == b->n && !memcmp(a->r, b->r, a->n * sizeof(*a->r));
}

/* A copy of the stripped fixture without section headers (as sstrip leaves a file) gives the
 * same ranges, from PT_GNU_EH_FRAME. */
static void test_no_section_headers(void **state)
{
	char tmp[] = "/tmp/firn-funcbounds-XXXXXX";
	int src = open(built_fixture("stripfix-stripped"), O_RDONLY), fd = mkstemp(tmp);
	uint8_t buf[1 << 16];
	ssize_t n;
	struct funcbounds a, b;
	(void)state;

	assert_true(src >= 0 && fd >= 0);
	unlink(tmp);
	assert_int_equal(funcbounds_init_fd(&a, src), 0);
	while ((n = read(src, buf, sizeof(buf))) > 0)
		assert_int_equal(write(fd, buf, n), n);
	close(src);
	const uint8_t zeros[8] = { 0 };
	assert_int_equal(pwrite(fd, zeros, 8, 0x28), 8); /* e_shoff */
	assert_int_equal(pwrite(fd, zeros, 4, 0x3c), 4); /* e_shnum, e_shstrndx */
	assert_int_equal(funcbounds_init_fd(&b, fd), 0);
	close(fd);
	assert_true(a.n > 5);
	assert_true(same(&a, &b));
	funcbounds_release(&a);
	funcbounds_release(&b);
}

/* The header's table and the walk give the same ranges (this binary, the fixture, liblzma). */
static void test_hdr_walk_agree(void **state)
{
	const char *paths[] = { "/proc/self/exe", built_fixture("stripfix-stripped"),
				"/lib/x86_64-linux-gnu/liblzma.so.5" };
	(void)state;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct funcbounds_input in, walk_in;
		struct funcbounds a, b;
		if (access(paths[i], R_OK))
			continue;
		read_sections(paths[i], &in);
		assert_non_null(in.hdr);
		walk_in = in;
		walk_in.hdr = NULL;
		assert_int_equal(funcbounds_parse(&a, &in), 0);
		assert_int_equal(funcbounds_parse(&b, &walk_in), 0);
		assert_true(a.n > 5);
		check_shape(&a);
		assert_true(same(&a, &b));
		funcbounds_release(&a);
		funcbounds_release(&b);
		free((void *)in.eh_frame);
		free((void *)in.hdr);
	}
}

/* Damaged input: a header that lies (count, table encoding, an entry pointing elsewhere) is
 * dropped for the walk, which gives every range; a truncated or mutated .eh_frame gives ranges of
 * the promised shape, each one the undamaged file has, and never reads outside the bytes. */
static void test_damaged(void **state)
{
	struct funcbounds_input in, d;
	struct funcbounds good, fb;
	(void)state;

	read_sections(built_fixture("stripfix-stripped"), &in);
	assert_int_equal(funcbounds_parse(&good, &in), 0);
	uint8_t *hdr = malloc(in.hdr_len), *eh = malloc(in.eh_frame_len);
	assert_non_null(hdr);
	assert_non_null(eh);
	const size_t hdr_edits[][2] = { { 8, 0xff }, { 3, 0x0c }, { 0, 2 }, { 16, 0x77 } };
	for (size_t i = 0; i < sizeof(hdr_edits) / sizeof(hdr_edits[0]); i++) {
		memcpy(hdr, in.hdr, in.hdr_len);
		hdr[hdr_edits[i][0]] = (uint8_t)hdr_edits[i][1];
		d = in;
		d.hdr = hdr;
		assert_int_equal(funcbounds_parse(&fb, &d), 0);
		assert_true(same(&fb, &good));
		funcbounds_release(&fb);
	}
	for (size_t len = 0; len <= in.eh_frame_len; len++) {
		uint8_t *cut = malloc(len ? len : 1); /* exactly len bytes: ASan sees an overrun */
		assert_non_null(cut);
		memcpy(cut, in.eh_frame, len);
		d = in;
		d.eh_frame = cut;
		d.eh_frame_len = len;
		d.hdr = (len & 1) ? in.hdr : NULL;
		assert_int_equal(funcbounds_parse(&fb, &d), 0);
		check_shape(&fb);
		for (size_t k = 0; k < fb.n; k++)
			assert_true(funcbounds_find(&good, fb.r[k].start) >= 0);
		funcbounds_release(&fb);
		free(cut);
	}
	for (size_t i = 0; i < in.eh_frame_len; i++) {
		memcpy(eh, in.eh_frame, in.eh_frame_len);
		eh[i] ^= 0xa5;
		d = in;
		d.eh_frame = eh;
		assert_int_equal(funcbounds_parse(&fb, &d), 0);
		check_shape(&fb);
		funcbounds_release(&fb);
	}
	free(hdr);
	free(eh);
	funcbounds_release(&good);
	free((void *)in.eh_frame);
	free((void *)in.hdr);
}

/* Name of the (outermost) function of location id, or NULL when it has no lines. */
static const char *loc_name(const struct profile *p, int64_t id)
{
	assert_true(id > 0 && (uint64_t)id <= p->nlocations);
	const struct profile_location *l = &p->locations[id - 1];
	if (!l->nlines)
		return NULL;
	return profile_str(p, p->functions[l->lines[l->nlines - 1].function_id - 1].name);
}

/* A stripped function is named "FILE+0xSTART" at its first, a middle and its last byte, each
 * address its own location (as --addresses keeps them), and counted as "no symbol"; the
 * unstripped copy keeps its symbols' names. */
static void test_names(void **state)
{
	struct symbolizer *s = symbolizer_new();
	struct elfsym e;
	struct intern in;
	struct profile p;
	struct intern_stats st;
	const char *stripped = built_fixture("stripfix-stripped");
	char path[PATH_MAX], want[PATH_MAX + 32];
	(void)state;

	snprintf(path, sizeof(path), "%s", stripped);
	assert_non_null(s);
	intern_init(&in);
	assert_int_equal(profile_init(&p), 0);
	assert_int_equal(elfsym_init_path(&e, built_fixture("stripfix")), 0);
	for (size_t i = 0; i < NFIX; i++) {
		uint64_t start = 0, end = 0;
		assert_int_equal(find_symbol(&e, fix_fns[i], &start, &end), 0);
		snprintf(want, sizeof(want), "stripfix-stripped+0x%" PRIx64, start);
		const uint64_t at[] = { start, start + (end - start) / 2, end - 1 };
		int64_t ids[3];
		for (int k = 0; k < 3; k++) {
			ids[k] = intern_file(&in, s, &p, path, at[k], false);
			assert_string_equal(loc_name(&p, ids[k]), want);
			assert_int_equal(p.locations[ids[k] - 1].address, at[k]);
		}
		assert_true(ids[0] != ids[2]);
		/* a return address just past the function is still the function's */
		assert_string_equal(loc_name(&p, intern_file(&in, s, &p, path, end, true)), want);
		int64_t named = intern_file(&in, s, &p, built_fixture("stripfix"), start, false);
		assert_string_equal(loc_name(&p, named), fix_fns[i]);
	}
	intern_stats(&in, &st);
	assert_int_equal(st.resolved, NFIX);
	assert_int_equal(st.no_symbol, NFIX * 4);
	elfsym_release(&e);
	profile_release(&p);
	intern_release(&in);
	symbolizer_free(s);
}

/* The "<NAME@plt>:" labels (not PLT0's "<NAME@plt-0x10>") of objdump -d on path: up to max (address, name). */
static int objdump_plt(const char *path, uint64_t *addr, char (*name)[64], int max)
{
	char cmd[PATH_MAX + 64], line[512];
	int n = 0;

	snprintf(cmd, sizeof(cmd), "objdump -d '%s' 2>/dev/null", path);
	FILE *f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char nm[64];
		if (n < max && sscanf(line, "%llx <%63[^>]>:", &a, nm) == 2 && strlen(nm) > 4 &&
		    !strcmp(nm + strlen(nm) - 4, "@plt")) {
			addr[n] = a;
			snprintf(name[n++], sizeof(name[0]), "%s", nm);
		}
	}
	pclose(f);
	return n;
}

/* PLT stubs are named where objdump names them: lazy .plt, -z now with IBT (.plt.sec). */
static void test_plt(void **state)
{
	const char *fixtures[] = { "stripfix-stripped", "stripfix-ibt-stripped", "stripfix" };
	(void)state;

	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		uint64_t addr[32], start;
		char names[32][64];
		struct elfsym e;
		const char *name;
		int n = objdump_plt(built_fixture(fixtures[i]), addr, names, 32), memcmp_seen = 0;
		assert_true(n >= 3);
		assert_int_equal(elfsym_init_path(&e, built_fixture(fixtures[i])), 0);
		for (int k = 0; k < n; k++) {
			for (uint64_t a = addr[k]; a < addr[k] + 8; a++) {
				if (elfsym_lookup(&e, a, &name, &start))
					fail_msg("%s: no symbol at %#" PRIx64 " (%s)", fixtures[i], a, names[k]);
				assert_string_equal(name, names[k]);
				assert_int_equal(start, addr[k]);
			}
			memcmp_seen += !strcmp(names[k], "memcmp@plt") || !strcmp(names[k], "strlen@plt");
		}
		assert_int_equal(memcmp_seen, 2);
		elfsym_release(&e);
	}
}

/* The [start, end) of the section named name in path: 0, or -1 when it has none. */
static int section_range(const char *path, const char *name, uint64_t *start, uint64_t *end)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), found = -1;
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	assert_non_null(elf = elf_begin(fd, ELF_C_READ, NULL));
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while (found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;
		if (gelf_getshdr(scn, &sh) && (n = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(n, name)) {
			*start = sh.sh_addr;
			*end = sh.sh_addr + sh.sh_size;
			found = 0;
		}
	}
	elf_end(elf);
	close(fd);
	return found;
}

/* .init and .fini, which no .eh_frame entry bounds, are "_init" and "_fini" at every address,
 * stripped or not. */
static void test_init_fini(void **state)
{
	const char *fixtures[] = { "stripfix-stripped", "stripfix-ibt-stripped", "stripfix" };
	const char *secs[][2] = { { ".init", "_init" }, { ".fini", "_fini" } };
	(void)state;

	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		struct elfsym e;
		assert_int_equal(elfsym_init_path(&e, built_fixture(fixtures[i])), 0);
		for (size_t k = 0; k < 2; k++) {
			uint64_t lo = 0, hi = 0, start;
			const char *name;
			assert_int_equal(section_range(built_fixture(fixtures[i]), secs[k][0], &lo, &hi), 0);
			assert_true(lo < hi);
			for (uint64_t a = lo; a < hi; a++) {
				if (elfsym_lookup(&e, a, &name, &start))
					fail_msg("%s: no symbol at %#" PRIx64 " (%s)", fixtures[i], a, secs[k][0]);
				assert_string_equal(name, secs[k][1]);
				assert_int_equal(start, lo);
			}
		}
		elfsym_release(&e);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixtures),
		cmocka_unit_test(test_hdr_walk_agree),
		cmocka_unit_test(test_no_section_headers),
		cmocka_unit_test(test_damaged),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_plt),
		cmocka_unit_test(test_init_fini),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
