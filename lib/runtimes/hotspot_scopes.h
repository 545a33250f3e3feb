/* An nmethod's debug information, decoded: the PcDesc for a pc (nmethod's scopes_pcs: an array
 * sorted by pc offset) and the chain of ScopeDescs it names (nmethod's scopes_data: a
 * CompressedStream of UNSIGNED5 ints), innermost first — the methods inlined at that pc, each
 * as an index into the nmethod's metadata and a bci, then its caller's scope. Both come from a
 * buffer the caller copied out of the process: outside input. Every read is bounded by the
 * buffer; a chain must go to strictly lower offsets (HotSpot writes a caller's scope before its
 * callee's) and ends at offset 0 (serialized_null) or at max scopes.
 *
 * UNSIGNED5 (HotSpot's CompressedReadStream::read_int): 1 to 5 bytes, a byte below L ends the
 * number, each following byte adds (byte - X) << 6*i. Up to JDK 20: X = 0, L = 192; from JDK 21
 * (utilities/unsigned5.hpp): X = 1 (no byte 0), L = 191. tests/fuzz/fuzz_hotspot_scopes.c
 * decodes fuzzed buffers through it; hotspot_inline.h reads a live nmethod's through it. */
#ifndef FIRN_HOTSPOT_SCOPES_H
#define FIRN_HOTSPOT_SCOPES_H

#include <stddef.h>
#include <stdint.h>

#define HS_INVOCATION_ENTRY_BCI (-1) /* a bci before the first bytecode: a method's entry */

/* A CompressedStream being read: buf[0, len), at pos; excluded is X (0 up to JDK 20, 1 after). */
struct hotspot_stream {
	const uint8_t *buf;
	size_t len, pos;
	unsigned excluded;
};

/* The X for a JDK's feature version (hotspot_structs.jdk). */
unsigned hotspot_stream_excluded(int jdk);

/* Reads one UNSIGNED5 int at s->pos into *v, advancing s->pos. 0; -EINVAL past the buffer's
 * end, on an excluded byte, or for a value over 32 bits (s->pos then unchanged). */
int hotspot_stream_read(struct hotspot_stream *s, uint32_t *v);

/* One scope: the method (an index into the nmethod's metadata, 1-based), the bci in it
 * (HS_INVOCATION_ENTRY_BCI at its entry), and where its caller's scope is (0: none). */
struct hotspot_scope {
	uint32_t method_index;
	int32_t bci;
	uint32_t sender;
};

/* Decodes the chain of scopes from offset in data (len bytes, excluded as above) into out (max
 * entries), innermost first. Returns how many (1..max); -EINVAL for offset 0 or past len, a
 * stream cut short or malformed, a method index 0, a bci below HS_INVOCATION_ENTRY_BCI or over
 * 65535, a sender not below its scope's offset, or a chain longer than max. */
int hotspot_scopes_decode(const uint8_t *data, size_t len, unsigned excluded, uint32_t offset,
			  struct hotspot_scope *out, size_t max);

/* The PcDesc layout: its size and where its pc offset and scope decode offset are (int32s;
 * from hotspot_structs' size_pcdesc, pcdesc_pc_offset, pcdesc_scope_decode_offset). */
struct hotspot_pcdesc_layout {
	uint32_t size, pc_offset, scope_offset;
};

/* Finds, in the n PcDescs in pcs (n * layout->size bytes), the first whose pc offset is at or
 * after pc_offset (a return address has its own; a pc between two has the next's scopes), by
 * binary search. 0 with *scope its scope decode offset; -ENOENT when none is; -EINVAL for a
 * layout that does not fit its size. */
int hotspot_pcdesc_find(const uint8_t *pcs, size_t n, const struct hotspot_pcdesc_layout *layout,
			int32_t pc_offset, uint32_t *scope);

#endif
