/* LEB128 numbers (DWARF's variable-length integers): the one reader that the CFI interpreter,
 * the unwind table builder and the DWARF line/info readers share. */
#ifndef FIRN_LEB128_H
#define FIRN_LEB128_H

#include <errno.h>
#include <stdint.h>

/* The longest number read: 10 bytes hold 64 bits, and libdw reads no more (a longer one is
 * refused, as libdw's CFI interpreter refuses it). */
#define LEB128_MAX_BYTES 10

/* Reads an unsigned LEB128 number from [*p, end): 0 with *v set and *p past the number, or
 * -EINVAL when the bytes end first or it is longer than LEB128_MAX_BYTES (*p unchanged). Bits
 * past 64 are dropped. */
static inline int leb128_u(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	const uint8_t *q = *p;
	uint64_t acc = 0;

	for (unsigned shift = 0; q < end && shift < 7 * LEB128_MAX_BYTES; shift += 7) {
		uint8_t b = *q++;
		if (shift < 64)
			acc |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*p = q;
			*v = acc;
			return 0;
		}
	}
	return -EINVAL;
}

/* Reads a signed LEB128 number (sign-extended from its last byte's bit 6) as leb128_u does. */
static inline int leb128_s(const uint8_t **p, const uint8_t *end, int64_t *v)
{
	const uint8_t *q = *p;
	uint64_t acc = 0;

	for (unsigned shift = 0; q < end && shift < 7 * LEB128_MAX_BYTES;) {
		uint8_t b = *q++;
		if (shift < 64)
			acc |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				acc |= ~0ULL << shift;
			*p = q;
			*v = (int64_t)acc;
			return 0;
		}
	}
	return -EINVAL;
}

#endif
