/* Function bounds from .eh_frame: the [start, end) of every FDE, which a linker emits for each
 * function (and for the PLT), symbols or not, so code of a stripped file can be named by the
 * function it is in. Read through .eh_frame_hdr's sorted table when the file has a valid one,
 * else by walking .eh_frame's CIEs and FDEs. Untrusted input: every read is bounds-checked,
 * nothing recurses, an entry that does not parse is skipped (the rest are kept).
 * The ranges are copied out: a funcbounds holds no file and no libelf state. */
#ifndef FIRN_FUNCBOUNDS_H
#define FIRN_FUNCBOUNDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct Elf; /* libelf's Elf */

struct funcbounds_range {
	uint64_t start, end; /* ELF virtual addresses, start < end */
};

struct funcbounds {
	struct funcbounds_range *r; /* sorted, disjoint (one range a start: the largest; a range
				     * that overlaps the next ends where the next starts) */
	size_t n, cap;
};

/* The bytes funcbounds_parse reads: .eh_frame and (optional, NULL) .eh_frame_hdr with the
 * addresses they load at, and the ELF class (absolute pointers are 4 or 8 bytes). */
struct funcbounds_input {
	const uint8_t *eh_frame, *hdr;
	size_t eh_frame_len, hdr_len;
	uint64_t eh_frame_addr, hdr_addr;
	bool elf32;
};

/* Fills fb (initialized here) with the FDE ranges of in: 0 (maybe with none), or -ENOMEM (fb
 * then empty). */
int funcbounds_parse(struct funcbounds *fb, const struct funcbounds_input *in);
/* The same from an ELF file's .eh_frame and .eh_frame_hdr sections (a file without section
 * headers: the header its PT_GNU_EH_FRAME segment holds, and the .eh_frame it points to): 0
 * (none when it has no .eh_frame), -ENOEXEC (not ELF), -ENOMEM. */
int funcbounds_read_elf(struct funcbounds *fb, struct Elf *elf);
/* The same from the ELF file open at fd (the caller keeps fd). */
int funcbounds_init_fd(struct funcbounds *fb, int fd);
void funcbounds_release(struct funcbounds *fb);

/* The index of the range that holds addr, or -1. */
ptrdiff_t funcbounds_find(const struct funcbounds *fb, uint64_t addr);
/* Keeps only the ranges keep(ctx, range) says yes to (order kept, memory shrunk). */
void funcbounds_filter(struct funcbounds *fb, bool (*keep)(void *ctx, const struct funcbounds_range *r),
		       void *ctx);

#endif
