/* CPython line tables: maps a bytecode offset of a code object to its source line. Three
 * formats, all read from the code object's bytes in the profiled process (so hostile input):
 * co_lnotab (3.8, 3.9; Objects/lnotab_notes.txt), the 3.10 co_linetable (same file in 3.10) and
 * the 3.11+ location table (Objects/locations.md). Pure functions: no allocation, no I/O. */
#ifndef FIRN_PYLINES_H
#define FIRN_PYLINES_H

#include <stddef.h>
#include <stdint.h>

enum pylines_format {
	PYLINES_LNOTAB,    /* 3.8, 3.9: (byte delta u8, line delta s8) pairs */
	PYLINES_LINETABLE, /* 3.10: (byte delta u8, line delta s8; -128 = no line) pairs */
	PYLINES_LOCATIONS, /* 3.11+: location entries in code units */
};

/* Returns the line of the instruction at byte offset `offset` (a multiple of 2 since 3.6), or -1
 * when the table says the instruction has no line, or when the offset lies past the table (or
 * the table is malformed there). Reads at most len bytes of table. */
int pylines_addr2line(enum pylines_format fmt, const uint8_t *table, size_t len, int firstlineno,
		      uint32_t offset);

#endif
