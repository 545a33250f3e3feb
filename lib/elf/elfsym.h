/* ELF function symbols, PT_LOAD segments and GNU build id of one file, read with libelf.
 * Symbols come from .symtab, .dynsym and the .symtab of an embedded MiniDebugInfo ELF
 * (.gnu_debugdata, xz-compressed, decompressed through libdwelf). The file's .gnu_debuglink and
 * whether it carries DWARF are noted for the debug-file search.
 * PLT stubs of x86-64 files (.plt, .plt.sec, .plt.got) that no symbol covers are named
 * "name@plt" after the dynamic symbol their GOT slot's relocation binds; the .init and .fini
 * sections, where no symbol covers them, are "_init" and "_fini" (the names crti gives them).
 * Everything is copied out at init: afterwards an elfsym holds no file descriptor and no libelf
 * state, only its own arrays, and names it returns stay valid until elfsym_release. */
#ifndef FIRN_ELFSYM_H
#define FIRN_ELFSYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elfsym_segment {
	uint64_t vaddr, offset, filesz, memsz;
	uint32_t flags; /* PF_R | PF_W | PF_X */
};

struct elfsym_symbol {
	uint64_t start, end; /* [start, end) in ELF virtual addresses */
	uint32_t name;       /* offset into elfsym.names */
};

struct elfsym {
	int type;                        /* ET_EXEC, ET_DYN, ... */
	char build_id[2 * 64 + 1];       /* lowercase hex of NT_GNU_BUILD_ID (first 64 bytes); "" if none */
	struct elfsym_segment *segments; /* PT_LOAD, in program header order */
	size_t nsegments;
	struct elfsym_symbol *syms;      /* sorted by start, one per address, non-overlapping ends */
	size_t nsyms;
	char *names;                     /* NUL-terminated names, referenced by syms[].name */
	size_t names_len, names_cap;
	char debuglink[256];             /* .gnu_debuglink file name; "" if none */
	uint32_t debuglink_crc;
	bool has_dwarf;                  /* a .debug_info section with contents */
	bool has_minidebuginfo;          /* symbols were read from .gnu_debugdata */
};

/* Reads the ELF file open at fd (dup'd for the duration; the caller keeps fd). 0, -ENOEXEC for a
 * file that is not ELF (or too damaged to read), -ENOMEM, or -errno. e is initialized here. */
int elfsym_init_fd(struct elfsym *e, int fd);
/* Same, opening path. */
int elfsym_init_path(struct elfsym *e, const char *path);
/* Same, from an ELF image in memory (the vDSO); the image is only read during the call. */
int elfsym_init_memory(struct elfsym *e, const void *image, size_t size);
void elfsym_release(struct elfsym *e);

/* Finds the function containing vaddr: 0 with its name and start, or -ENOENT. Symbols of size 0
 * extend to the next symbol (or the end of their section). */
int elfsym_lookup(const struct elfsym *e, uint64_t vaddr, const char **name, uint64_t *sym_start);
/* Whether one symbol covers all of [start, end) (start < end). */
bool elfsym_covers(const struct elfsym *e, uint64_t start, uint64_t end);
/* Converts a file offset to a virtual address through the PT_LOAD segment that maps it:
 * vaddr = p_vaddr + (off - p_offset). 0 or -ENOENT when no segment holds that offset. */
int elfsym_file_offset_to_vaddr(const struct elfsym *e, uint64_t file_offset, uint64_t *vaddr);

#endif
