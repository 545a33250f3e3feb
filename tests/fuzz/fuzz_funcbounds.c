/* libFuzzer harness: function bounds from .eh_frame (funcbounds_parse), through .eh_frame_hdr's
 * table and by the walk, and from ELF files (funcbounds_init_fd). An input that starts with the
 * ELF magic is a file; any other is a 21-byte header (flags: bit 0 ELF32; .eh_frame_hdr's
 * length, LE32; .eh_frame's and .eh_frame_hdr's addresses, LE64 each), the header section, then
 * .eh_frame (seeds by funcbounds_seeds.py). Ranges must be sorted, disjoint and non-empty, each found at its start and end - 1, and every lookup must land in a range holding
 * the address. */
#include <errno.h>
#include <string.h>

#include "elf/funcbounds.h"
#include "fuzz.h"

/* Reads n little-endian bytes at p. */
static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* Checks the promised shape of fb and looks up a few addresses. */
static void check(const struct funcbounds *fb, const uint8_t *data, size_t size)
{
	for (size_t i = 0; i < fb->n; i++) {
		FUZZ_ASSERT(fb->r[i].start < fb->r[i].end);
		if (i)
			FUZZ_ASSERT(fb->r[i - 1].end <= fb->r[i].start);
		FUZZ_ASSERT(funcbounds_find(fb, fb->r[i].start) == (ptrdiff_t)i);
		FUZZ_ASSERT(funcbounds_find(fb, fb->r[i].end - 1) == (ptrdiff_t)i);
	}
	for (size_t i = 0; i < 16; i++) {
		uint64_t a = fuzz_u64(data, size, i * 8);
		if (fb->n && i & 1)
			a = fb->r[a % fb->n].start + (a >> 32) % 64;
		ptrdiff_t k = funcbounds_find(fb, a);
		FUZZ_ASSERT(k < 0 || (fb->r[k].start <= a && a < fb->r[k].end));
	}
}

/* Parses the sections of a raw input, with its header section and without. */
static void raw(const uint8_t *data, size_t size)
{
	struct funcbounds_input in = { 0 };
	struct funcbounds fb;

	if (size < 21)
		return;
	uint64_t hlen = le(data + 1, 4);
	if (hlen > size - 21)
		hlen = size - 21;
	in.elf32 = data[0] & 1;
	in.eh_frame_addr = le(data + 5, 8);
	in.hdr_addr = le(data + 13, 8);
	in.hdr = hlen ? data + 21 : NULL;
	in.hdr_len = hlen;
	in.eh_frame = data + 21 + hlen;
	in.eh_frame_len = size - 21 - hlen;
	for (int pass = 0; pass < 2; pass++) {
		int err = funcbounds_parse(&fb, &in);
		FUZZ_ASSERT(err == 0 || err == -ENOMEM);
		check(&fb, data, size);
		funcbounds_release(&fb);
		in.hdr = NULL;
		in.hdr_len = 0;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct funcbounds fb;

	if (size < 4 || memcmp(data, "\177ELF", 4)) {
		raw(data, size);
		return 0;
	}
	int err = funcbounds_init_fd(&fb, fuzz_memfd(data, size));
	FUZZ_ASSERT(err == 0 || err == -ENOEXEC || err == -ENOMEM);
	check(&fb, data, size);
	funcbounds_release(&fb);
	return 0;
}
