/* ELF function symbols, PT_LOAD segments and GNU build id of one file, read with libelf.
 * Symbols come from .symtab, .dynsym and the .symtab of an embedded MiniDebugInfo ELF
 * (.gnu_debugdata, xz-compressed, decompressed through libdwelf). The file's .gnu_debuglink and
 * whether it carries DWARF are noted for the debug-file search.
 * PLT stubs of x86-64 files (.plt, .plt.sec, .plt.got) that no symbol covers are named
 * "name@plt" after the dynamic symbol their GOT slot's relocation binds; the .init and .fini
 * sections, where no symbol covers them, are "_init" and "_fini" (the names crti gives them).
 * Names stay where the file keeps them: read by descriptor or path, the string tables the kept
 * symbols name are mapped read-only (MAP_PRIVATE: page-cache pages, shared with the processes
 * running the file, resident only where a name was read) and syms[].name is an offset into them;
 * the names made up here (PLT stubs, _init, _fini), those of an image in memory and those of
 * MiniDebugInfo (whose ELF is freed) are copied into a small pool of e's own. Overwriting the file
 * in place (not replacing it, as linkers and package managers do) while e maps it, or while
 * init reads it (mapped too), would raise SIGBUS, as dwarfsym's mapping would; a file replaced
 * meanwhile keeps its blocks until elfsym_release. Afterwards e holds no file descriptor and no
 * libelf state, and names it returns stay valid until elfsym_release. */
#ifndef FIRN_ELFSYM_H
#define FIRN_ELFSYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elfsym_segment {
	uint64_t vaddr, offset, filesz, memsz;
	uint32_t flags; /* PF_R | PF_W | PF_X */
};

/* A symbol's len when its end does not fit (only a damaged file has one): then elfsym.long_ends
 * holds it. */
#define ELFSYM_LONG UINT32_MAX

/* One symbol: [start, start + len) in ELF virtual addresses (elfsym_end), its name elfsym_name.
 * 16 bytes: a big file has 100k of them. */
struct elfsym_symbol {
	uint64_t start;
	uint32_t len;  /* end - start, or ELFSYM_LONG */
	uint32_t name; /* offset into e's name space (elfsym.spans) */
};

/* The end of a symbol whose len is ELFSYM_LONG. */
struct elfsym_long_end {
	uint64_t start, end;
};

/* A span of the name space: a string table of the file, mapped, or e's pool. */
struct elfsym_names {
	const char *base;    /* the byte of name offset start */
	uint32_t start, len; /* the name offsets [start, start + len) it holds */
	void *map;           /* the mapping to unmap (NULL: the pool) */
	size_t map_len;
};

struct elfsym {
	int type;                        /* ET_EXEC, ET_DYN, ... */
	char build_id[2 * 64 + 1];       /* lowercase hex of NT_GNU_BUILD_ID (first 64 bytes); "" if none */
	struct elfsym_segment *segments; /* PT_LOAD, in program header order */
	size_t nsegments;
	struct elfsym_symbol *syms;      /* sorted by start, one per address, non-overlapping ends */
	size_t nsyms;
	struct elfsym_long_end *long_ends; /* sorted by start: the ends of ELFSYM_LONG symbols */
	size_t nlong_ends;
	struct elfsym_names *spans;      /* in name space order; every name ends inside its span */
	size_t nspans;
	char *pool;                      /* names copied or made up here (the last span) */
	size_t pool_len;
	char debuglink[256];             /* .gnu_debuglink file name; "" if none */
	uint32_t debuglink_crc;
	bool has_dwarf;                  /* a .debug_info section with contents */
	bool has_minidebuginfo;          /* symbols were read from .gnu_debugdata */
};

/* Reads the ELF file open at fd (dup'd for the duration; the caller keeps fd; the string tables
 * stay mapped). 0, -ENOEXEC for a file that is not ELF (or too damaged to read), -ENOMEM,
 * -EOVERFLOW (names past 4 GiB), or -errno. e is initialized here. */
int elfsym_init_fd(struct elfsym *e, int fd);
/* Same, opening path. */
int elfsym_init_path(struct elfsym *e, const char *path);
/* Same, from an ELF image in memory (the vDSO); the image is only read during the call (its
 * names are copied). */
int elfsym_init_memory(struct elfsym *e, const void *image, size_t size);
void elfsym_release(struct elfsym *e);
/* Takes the pages of e's mapped string tables out of this process's resident set (madvise
 * MADV_DONTNEED on its private read-only mappings: they stay in the page cache); the names it
 * returns stay valid, read from the file again. The names looked up over a long recording are
 * otherwise resident until e goes. */
void elfsym_drop_pages(const struct elfsym *e);

/* Finds the function containing vaddr: 0 with its name and start, or -ENOENT. Symbols of size 0
 * extend to the next symbol (or the end of their section). */
int elfsym_lookup(const struct elfsym *e, uint64_t vaddr, const char **name, uint64_t *sym_start);
/* The NUL-terminated name of s, one of e->syms; valid until elfsym_release. */
const char *elfsym_name(const struct elfsym *e, const struct elfsym_symbol *s);
/* The end of s, one of e->syms (exclusive: s covers [s->start, end)). */
uint64_t elfsym_end(const struct elfsym *e, const struct elfsym_symbol *s);
/* The bytes e holds on the heap (its arrays and pool; the mapped string tables are not heap). */
size_t elfsym_heap_bytes(const struct elfsym *e);
/* Whether one symbol covers all of [start, end) (start < end). */
bool elfsym_covers(const struct elfsym *e, uint64_t start, uint64_t end);
/* Converts a file offset to a virtual address through the PT_LOAD segment that maps it:
 * vaddr = p_vaddr + (off - p_offset). 0 or -ENOENT when no segment holds that offset. */
int elfsym_file_offset_to_vaddr(const struct elfsym *e, uint64_t file_offset, uint64_t *vaddr);

#endif
