/* Go's own symbol table, the pclntab, of one ELF file: what a Go binary built without .symtab
 * and DWARF (`go build -ldflags="-s -w"`) still carries for its runtime's tracebacks. Function
 * names (as Go prints them: "main.(*T).Method"), files and lines (pc-value tables: zig-zag
 * varint deltas), and inlined frames (the FUNCDATA inline tree indexed by the PCDATA inline
 * tree index). Formats: Go 1.2-1.15 (magic 0xfffffffb), 1.16-1.17 (0xfffffffa), 1.18-1.19
 * (0xfffffff0) and 1.20+ (0xfffffff1); the inline tree entry of 1.12-1.19 (parent, file, line,
 * name, parentPc) and of 1.20+ (name, parentPc, startLine). Inlined frames of the 1.2 format are
 * read as Go 1.12-1.15 lays them out (an older binary gets none).
 * The table is found through the `.gopclntab` section (or `.data.rel.ro.gopclntab`) or, where
 * section headers are gone or a Go file has none of those names (a position-independent build
 * the host's linker linked, which merges it into .data.rel.ro), by its magic and a header that
 * holds together in a PT_LOAD segment. Go 1.18+ keeps the inline trees in `go:func.*`, found
 * through the runtime's moduledata (the word that points to the table) in a writable segment,
 * its words read as loaded: where the file holds zeros, the addends of DT_RELA's relative
 * relocations (lld leaves them so; the load bias taken as 0, as the table's addresses are).
 * Every read is bounds-checked against the file: a hostile table gives no frame, never a read
 * outside it, and every loop is bounded by the bytes it reads. Not thread-safe. */
#ifndef FIRN_GOPCLNTAB_H
#define FIRN_GOPCLNTAB_H

#include <stddef.h>
#include <stdint.h>

/* The formats, by the Go release that introduced them. */
enum gopclntab_version { GOPCLNTAB_12 = 1, GOPCLNTAB_116, GOPCLNTAB_118, GOPCLNTAB_120 };

/* One function of an inline chain: its name, and the file and line of the pc in it. */
struct gopclntab_frame {
	const char *name; /* never NULL in a returned frame */
	const char *file; /* NULL when unknown */
	uint32_t line;    /* 0 when unknown */
};

/* A run of the image by virtual address: bytes [vaddr, vaddr + size) at bytes. */
struct gopclntab_seg {
	uint64_t vaddr, size;
	const uint8_t *bytes;
};

struct gopclntab {
	enum gopclntab_version version;
	unsigned ptrsize, quantum;
	const uint8_t *tab;        /* the table, from its header on */
	size_t len;
	uint64_t tab_vaddr;
	uint64_t nfunc, text_start;
	uint64_t funcname, cu, filetab, pctab, pcln; /* offsets into tab (1.2: funcname, pctab,
						      * pcln 0; filetab its table) */
	struct gopclntab_seg *segs; /* the image, for the inline trees (owned) */
	size_t nsegs;
	uint64_t gofunc;            /* 1.18+: go:func.*, the inline trees' base; 0: none found */
	void *map;                  /* the file's mapping (gopclntab_new_fd), or NULL */
	size_t map_len;
};

/* Reads the table at tab (len bytes, at virtual address tab_vaddr) of an image whose segments
 * segs[0..nsegs) are (copied; their bytes stay the caller's and must outlive g). text is the
 * address Go 1.18+'s entry offsets count from when the header's own is 0 (0: none known).
 * 0, -ENOEXEC when tab is no pclntab this reader knows (or its header points outside it),
 * -ENOMEM. g is initialized here (and released on failure). */
int gopclntab_init(struct gopclntab *g, const uint8_t *tab, size_t len, uint64_t tab_vaddr,
		   uint64_t text, const struct gopclntab_seg *segs, size_t nsegs);
/* Finds, in the ELF file open at fd (the caller keeps fd), its pclntab: a heap object mapping
 * the file (read-only, private: overwriting it in place meanwhile raises SIGBUS) until
 * gopclntab_free. NULL + errno: ENOENT when the file has no pclntab, ENOEXEC when it is no ELF
 * file, ENOMEM, or the errno of fstat/mmap. */
struct gopclntab *gopclntab_new_fd(int fd);
void gopclntab_release(struct gopclntab *g);
void gopclntab_free(struct gopclntab *g);
/* Takes the pages of the file's mapping out of this process's resident set (they stay in the
 * page cache; names returned stay valid). */
void gopclntab_drop_pages(const struct gopclntab *g);

/* Fills frames[0..max) with the chain at virtual address pc, innermost (inlined) first, the
 * function that holds pc last, each with the file and line of its pc (an outer frame: its call
 * site). Returns the number of frames (0 when no function covers pc). Names and files stay valid
 * until g is released. Chains longer than max keep the outermost function and the innermost
 * max - 1 inlined frames. */
int gopclntab_lookup(const struct gopclntab *g, uint64_t pc, struct gopclntab_frame *frames,
		     int max);
/* The function covering pc: its name and entry; 0 or -ENOENT. */
int gopclntab_func(const struct gopclntab *g, uint64_t pc, const char **name, uint64_t *entry);

/* The runtime's funcFlag bits (Go 1.17 on; 0 in older tables). */
#define GOPCLNTAB_TOPFRAME 0x1 /* the outermost frame of a stack: no caller */
#define GOPCLNTAB_SPWRITE 0x2  /* writes SP arbitrarily (stack switches) */
#define GOPCLNTAB_ASM 0x4      /* written in assembly (Go 1.19 on) */

/* One function of the table, as an unwinder sees it (gopclntab_fn). */
struct gopclntab_fn {
	uint64_t entry, end;  /* [entry, end): its code */
	const char *name;     /* NULL when unreadable */
	const char *file;     /* the file of its entry; NULL when unknown */
	uint8_t flag;         /* GOPCLNTAB_* bits */
	uint64_t rec;         /* where its record lies in the table (for gopclntab_pcsp) */
};

/* Function i (i < g->nfunc) of the table, in address order. 0 or -ENOENT when its entry
 * lies outside the table or does not come before the next one's. */
int gopclntab_fn(const struct gopclntab *g, uint64_t i, struct gopclntab_fn *fn);

/* Called for each run of a pc-value table: value holds from pc up to the next run's pc (or
 * the function's end). A nonzero return stops the walk and is returned. */
typedef int (*gopclntab_run_fn)(void *ctx, uint64_t pc, int32_t value);

/* Walks fn's SP-delta table (pcsp: how far SP lies below its value at entry, the return
 * address's slot), in pc order, clipped to [entry, end). Returns 0 when the table ends (at its
 * end marker, which may come before the function's alignment padding, or at end), -ENOENT
 * when it is missing, malformed or cut short (the runs before stay reported), or fn's nonzero
 * return. Bounded by the table's bytes. */
int gopclntab_pcsp(const struct gopclntab *g, const struct gopclntab_fn *fn, gopclntab_run_fn cb,
		   void *ctx);

#endif
