/* libFuzzer harness: Go's pclntab (lib/elf/gopclntab), from a Go binary's file, so hostile.
 * An input starting with an ELF magic is a file (gopclntab_new_fd: segments, sections, the
 * magic search, the moduledata); any other is a table alone, mapped at 0x10000 with its own
 * bytes as the image (inline trees and go:func.* inside it). Frames returned are within max,
 * named, with names and files inside the input; each function's SP-delta runs (pcsp) inside it
 * and in order, and the unwind rows made of them (lib/unwind/unwind_go.h) sorted. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "elf/gopclntab.h"
#include "unwind/unwind_go.h"

#define VADDR 0x10000u

/* Checks a lookup's frames: no more than max, each named, its strings ending where ASan lets
 * them be read. */
static void check_frames(const struct gopclntab_frame *fr, int n, int max)
{
	FUZZ_ASSERT(n >= 0 && n <= max);
	for (int i = 0; i < n; i++) {
		FUZZ_ASSERT(fr[i].name);
		(void)strlen(fr[i].name); /* ASan: it ends inside what was read */
		if (fr[i].file)
			(void)strlen(fr[i].file);
	}
}

/* Looks up the functions' entries and ends, and addresses read from the input. */
static void lookups(const struct gopclntab *g, const uint8_t *data, size_t size)
{
	struct gopclntab_frame fr[8];
	const char *name;
	uint64_t entry;

	for (size_t i = 0; i < 48; i++) {
		uint64_t pc = g->text_start + fuzz_u64(data, size, i * 8) % 0x100000;
		if (i < 16)
			pc = fuzz_u64(data, size, i * 8);
		check_frames(fr, gopclntab_lookup(g, pc, fr, 1 + i % 8), 1 + i % 8);
		if (!gopclntab_func(g, pc, &name, &entry))
			FUZZ_ASSERT(entry <= pc && name);
	}
}

/* A function's runs seen so far: where the next may start, and its end. */
struct runs {
	uint64_t next, end;
};

/* gopclntab_pcsp's callback: each run inside its function, after the one before. */
static int check_run(void *ctx, uint64_t pc, int32_t delta)
{
	struct runs *r = ctx;

	(void)delta;
	FUZZ_ASSERT(pc >= r->next && pc < r->end);
	r->next = pc + 1;
	return 0;
}

/* The functions as the unwinder reads them (bounds, names, SP-delta runs), and the unwind
 * rows made of them: sorted, each pc after the one before. */
static void unwind_rows(const struct gopclntab *g)
{
	struct gopclntab_fn fn;
	struct firn_row *rows = NULL;
	uint32_t n = 0;

	for (uint64_t i = 0; i < g->nfunc && i < 4096; i++) {
		if (gopclntab_fn(g, i, &fn))
			continue;
		FUZZ_ASSERT(fn.entry < fn.end);
		if (fn.name)
			(void)strlen(fn.name);
		struct runs r = { fn.entry, fn.end };
		gopclntab_pcsp(g, &fn, check_run, &r);
	}
	if (g->nfunc > 4096 || unwind_go_rows(g, &rows, &n))
		return;
	for (uint32_t i = 1; i < n; i++)
		FUZZ_ASSERT(rows[i].pc > rows[i - 1].pc);
	free(rows);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= 4 && !memcmp(data, "\177ELF", 4)) {
		struct gopclntab *g = gopclntab_new_fd(fuzz_memfd(data, size));
		FUZZ_ASSERT(g || errno == ENOENT || errno == ENOEXEC);
		if (g)
			lookups(g, data, size), unwind_rows(g);
		gopclntab_free(g);
		return 0;
	}
	struct gopclntab g;
	struct gopclntab_seg seg = { VADDR, size, data };
	if (gopclntab_init(&g, data, size, VADDR, VADDR, &seg, 1))
		return 0;
	if (g.version >= GOPCLNTAB_118)
		g.gofunc = VADDR;
	lookups(&g, data, size);
	unwind_rows(&g);
	gopclntab_release(&g);
	return 0;
}
