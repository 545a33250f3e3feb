/* Native-endian loads from byte buffers at any alignment: the one place the parsers of kernel
 * records, process memory and file formats read a word from bytes they have bounds-checked. */
#ifndef FIRN_UNALIGNED_H
#define FIRN_UNALIGNED_H

#include <stdint.h>
#include <string.h>

/* The u32, i32 and u64 at p + off; the caller has checked that the bytes are there. memcpy,
 * not a cast: the buffers are byte arrays with no alignment promise. */
static inline uint32_t load_u32(const void *p, size_t off)
{
	uint32_t v;

	memcpy(&v, (const uint8_t *)p + off, sizeof(v));
	return v;
}

static inline int32_t load_i32(const void *p, size_t off)
{
	return (int32_t)load_u32(p, off);
}

static inline uint64_t load_u64(const void *p, size_t off)
{
	uint64_t v;

	memcpy(&v, (const uint8_t *)p + off, sizeof(v));
	return v;
}

#endif
