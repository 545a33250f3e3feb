/* DWARF line tables and inline scopes of one ELF file (DWARF 2-5, 32- and 64-bit), for
 * symbolization: an address gives its chain of functions, innermost (inlined) first, each with
 * its file and line. libelf reads (and decompresses) the sections; the decompressed bytes of
 * compressed ones are kept in the debug section cache (debug_cache.h) and mapped from there by
 * later readers of the same file; the DWARF itself is decoded
 * here, because libdw's generic walkers are several times too slow for symbolizing 100k addresses.
 * An index of compile-unit address ranges is built at init from every unit's DW_AT_ranges or
 * low/high pc (so units without .debug_aranges, as clang emits, are found); each unit's line
 * table and function/inline scopes are decoded on its first lookup, into one array of address
 * ranges (line, file, innermost function) that later lookups search with a bucket index.
 * The file is mapped (read-only, private) until dwarfsym_free: overwriting it in place meanwhile
 * (not replacing it, as linkers and package managers do) would raise SIGBUS. What init and the
 * units' decoding read is dropped from the resident set (madvise MADV_DONTNEED: the pages stay
 * in the page cache): a large debug file is not all of firn's RSS once indexed.
 * Every string returned stays valid until dwarfsym_free. Not thread-safe. */
#ifndef FIRN_DWARFSYM_H
#define FIRN_DWARFSYM_H

#include <stddef.h>
#include <stdint.h>

struct dwarfsym;

/* One function of an inline chain. */
struct dwarfsym_frame {
	const char *name;     /* the mangled DW_AT_linkage_name (C++, Rust) when the DWARF has one,
			       * else DW_AT_name; NULL when no function DIE covers the address */
	const char *file;     /* source file of line (directory joined); NULL when unknown */
	uint32_t line;        /* 0 when unknown */
};

/* Reads the DWARF of the ELF file open at fd (dup'd for the call; the caller keeps fd).
 * NULL + errno: ENODATA when the file has no .debug_info, ENOEXEC when it is not ELF, ENOMEM. */
struct dwarfsym *dwarfsym_new_fd(int fd);
void dwarfsym_free(struct dwarfsym *d);

/* Fills frames[0..max) with the chain at ELF virtual address vaddr, innermost first: frames[0]
 * has the line-table file and line of vaddr, each outer frame the call site of the frame inside
 * it. Returns the number of frames (0 when no compile unit covers vaddr; a covered address outside
 * every function DIE gives one frame with a NULL name), or -ENOMEM. Chains longer than max are
 * cut at the outer end. */
int dwarfsym_lookup(struct dwarfsym *d, uint64_t vaddr, struct dwarfsym_frame *frames, int max);

/* Number of compile units with code (for tests and diagnostics). */
size_t dwarfsym_units(const struct dwarfsym *d);
/* How many compressed DWARF sections were inflated, and how many were mapped instead from the
 * debug section cache (debug_cache.h, FIRN_DEBUG_CACHE; for tests and diagnostics). */
void dwarfsym_sections(const struct dwarfsym *d, unsigned *inflated, unsigned *from_cache);

/* The bytes of the file mappings d reads (the file's, the debug section cache's) and how many
 * of them are in this process's resident set now (/proc/self/smaps; for tests and diagnostics).
 * Init and every few units decoded take the pages out again (they stay in the page cache). */
void dwarfsym_pages(const struct dwarfsym *d, size_t *mapped, size_t *resident);
/* Takes the pages of d's file mappings out of the resident set now (as init does; the strings
 * it returned stay valid: they are read from the file again). */
void dwarfsym_drop_pages(const struct dwarfsym *d);
/* Frees the abbreviation tables d decoded (read again from the mapping on the next lookup that
 * needs one), and unloads the units no lookup used since the previous call: their line tables
 * and scopes are decoded again by the next lookup in them. A long recording otherwise keeps
 * every unit of every file it ever looked into, though its caller caches what the lookups
 * answered: called every few seconds, d holds what the last two periods looked up. Names and
 * chains it returned stay valid (they point into the mapped sections and the path arena, and a
 * unit decoded again gives the same pointers). Not while another call on d runs. */
void dwarfsym_trim(struct dwarfsym *d);
/* Units decoded and held now (for tests and diagnostics). */
size_t dwarfsym_units_loaded(const struct dwarfsym *d);

#endif
