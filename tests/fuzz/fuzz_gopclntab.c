/* libFuzzer harness: Go's pclntab (lib/elf/gopclntab), from a Go binary's file, so hostile.
 * An input starting with an ELF magic is a file (gopclntab_new_fd: segments, sections, the
 * magic search, the moduledata); any other is a table alone, mapped at 0x10000 with its own
 * bytes as the image (inline trees and go:func.* inside it). Frames returned are within max,
 * named, with names and files inside the input. */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "elf/gopclntab.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= 4 && !memcmp(data, "\177ELF", 4)) {
		struct gopclntab *g = gopclntab_new_fd(fuzz_memfd(data, size));
		FUZZ_ASSERT(g || errno == ENOENT || errno == ENOEXEC);
		if (g)
			lookups(g, data, size);
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
	gopclntab_release(&g);
	return 0;
}
