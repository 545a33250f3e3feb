/* Go's pclntab: the table's header and functions, pc-value tables, the inline tree, and finding
 * the table (and go:func.*) in an ELF file. The formats: Go's src/debug/gosym/pclntab.go and
 * src/runtime/symtab.go; every offset read from the file is checked here. */
#include "elf/gopclntab.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/leb128.h"
#include "base/vec.h"
#include "elf/elffile.h"

#define MAGIC_12 0xfffffffbu
#define MAGIC_116 0xfffffffau
#define MAGIC_118 0xfffffff0u
#define MAGIC_120 0xfffffff1u

/* The runtime's table numbers (PCDATA_InlTreeIndex, FUNCDATA_InlTree). */
#define PCDATA_INLTREE 2
#define FUNCDATA_INLTREE_12 4 /* Go 1.12-1.15 */
#define FUNCDATA_INLTREE 3    /* Go 1.16 on */
/* The deepest inline chain followed (Go's own inlining budget keeps them far shorter). */
#define MAX_INLINE_DEPTH 64

/* One function of the table: its entry and where its _func record lies. */
struct gofunc {
	uint64_t entry;
	uint64_t off;      /* of the _func record in tab */
	uint64_t end;      /* the next function's entry */
};

/* Reads a little-endian unsigned number of n bytes (1, 2, 4 or 8) at off of [p, p + len); false
 * when it does not fit. */
static bool rd(const uint8_t *p, size_t len, uint64_t off, unsigned n, uint64_t *v)
{
	if (off > len || len - off < n)
		return false;
	*v = 0;
	for (unsigned i = 0; i < n; i++)
		*v |= (uint64_t)p[off + i] << (8 * i);
	return true;
}

/* A NUL-terminated string at off of [p, p + len), or NULL when none ends inside. */
static const char *cstr(const uint8_t *p, size_t len, uint64_t off)
{
	if (off >= len || !memchr(p + off, 0, len - off))
		return NULL;
	return (const char *)p + off;
}

/* Reads a word of the table (a pointer-sized one when n is 0). */
static bool tabrd(const struct gopclntab *g, uint64_t off, unsigned n, uint64_t *v)
{
	return rd(g->tab, g->len, off, n ? n : g->ptrsize, v);
}

/* The bytes at vaddr in segs, n of them at least; NULL when no segment holds them. *avail gets how
 * many follow in that segment. The image's and the file's lookups both. */
static const uint8_t *segs_at(const struct gopclntab_seg *segs, size_t nsegs, uint64_t vaddr,
			      uint64_t n, uint64_t *avail)
{
	for (size_t i = 0; i < nsegs; i++) {
		const struct gopclntab_seg *s = &segs[i];
		if (vaddr < s->vaddr || vaddr - s->vaddr >= s->size || s->size - (vaddr - s->vaddr) < n)
			continue;
		*avail = s->size - (vaddr - s->vaddr);
		return s->bytes + (vaddr - s->vaddr);
	}
	return NULL;
}

/* The bytes of the image at vaddr (segs_at over the image's segments). */
static const uint8_t *image_at(const struct gopclntab *g, uint64_t vaddr, size_t n, size_t *avail)
{
	return segs_at(g->segs, g->nsegs, vaddr, n, avail);
}

/* Reads the header words of the 1.16+ formats: counts and section offsets, each checked to lie
 * inside the table. 0 or -ENOEXEC. */
static int header_116(struct gopclntab *g, uint64_t text)
{
	unsigned w = g->ptrsize, i = 0;
	uint64_t v[8];
	unsigned nwords = g->version >= GOPCLNTAB_118 ? 8 : 7;

	for (; i < nwords; i++)
		if (!tabrd(g, 8 + (uint64_t)i * w, 0, &v[i]))
			return -ENOEXEC;
	g->nfunc = v[0];
	i = 2;
	if (g->version >= GOPCLNTAB_118) {
		uint64_t t = v[i++];
		g->text_start = t ? t : text;
	}
	g->funcname = v[i++];
	g->cu = v[i++];
	g->filetab = v[i++];
	g->pctab = v[i++];
	g->pcln = v[i++];
	if (g->funcname > g->len || g->cu > g->len || g->filetab > g->len || g->pctab > g->len ||
	    g->pcln > g->len)
		return -ENOEXEC;
	return 0;
}

/* The size of one function table entry (entry, then record offset). */
static unsigned ftab_width(const struct gopclntab *g)
{
	return g->version >= GOPCLNTAB_118 ? 4 : g->ptrsize;
}

/* The offset of the function table in tab. */
static uint64_t ftab_off(const struct gopclntab *g)
{
	return g->version == GOPCLNTAB_12 ? 8 + g->ptrsize : g->pcln;
}

/* Reads the header of the 1.2 format: the function count and where the file table lies.
 * 0 or -ENOEXEC. */
static int header_12(struct gopclntab *g)
{
	uint64_t ftoff;

	if (!tabrd(g, 8, 0, &g->nfunc) || g->nfunc > g->len / (2 * g->ptrsize))
		return -ENOEXEC;
	if (!tabrd(g, ftab_off(g) + (2 * g->nfunc + 1) * g->ptrsize, 4, &ftoff) || ftoff > g->len)
		return -ENOEXEC;
	g->filetab = ftoff;
	return 0;
}

/* The function table's entry i (i <= nfunc: the last is the end of the last function): its pc
 * and, below nfunc, its record's offset in tab. false when it lies outside. */
static bool ftab_entry(const struct gopclntab *g, uint64_t i, uint64_t *pc, uint64_t *rec)
{
	unsigned w = ftab_width(g);
	uint64_t at = ftab_off(g) + i * 2 * w;

	if (!tabrd(g, at, w, pc) || (i < g->nfunc && !tabrd(g, at + w, w, rec)))
		return false;
	if (g->version >= GOPCLNTAB_118)
		*pc += g->text_start;
	if (g->version != GOPCLNTAB_12 && i < g->nfunc)
		*rec += g->pcln; /* records count from the function table */
	return true;
}

/* Checks the magic and the fixed header bytes and picks the version; 0 or -ENOEXEC. */
static int check_magic(struct gopclntab *g)
{
	uint64_t magic;

	if (!tabrd(g, 0, 4, &magic) || g->len < 16 || g->tab[4] || g->tab[5])
		return -ENOEXEC;
	g->quantum = g->tab[6];
	g->ptrsize = g->tab[7];
	if ((g->quantum != 1 && g->quantum != 2 && g->quantum != 4) ||
	    (g->ptrsize != 4 && g->ptrsize != 8))
		return -ENOEXEC;
	g->version = magic == MAGIC_12 ? GOPCLNTAB_12 : magic == MAGIC_116 ? GOPCLNTAB_116
		     : magic == MAGIC_118 ? GOPCLNTAB_118 : magic == MAGIC_120 ? GOPCLNTAB_120 : 0;
	return g->version ? 0 : -ENOEXEC;
}

int gopclntab_init(struct gopclntab *g, const uint8_t *tab, size_t len, uint64_t tab_vaddr,
		   uint64_t text, const struct gopclntab_seg *segs, size_t nsegs)
{
	uint64_t first, last, rec;
	int err;

	memset(g, 0, sizeof(*g));
	g->tab = tab;
	g->len = len;
	g->tab_vaddr = tab_vaddr;
	err = check_magic(g);
	if (!err)
		err = g->version == GOPCLNTAB_12 ? header_12(g) : header_116(g, text);
	/* the table holds its functions and their end, in order at both ends */
	if (!err && (!g->nfunc || g->nfunc > len / (2 * ftab_width(g)) ||
		     !ftab_entry(g, 0, &first, &rec) || !ftab_entry(g, g->nfunc, &last, &rec) ||
		     first >= last))
		err = -ENOEXEC;
	if (!err && nsegs && !(g->segs = calloc(nsegs, sizeof(*segs))))
		err = -ENOMEM;
	if (err) {
		gopclntab_release(g);
		return err;
	}
	memcpy(g->segs, segs, nsegs * sizeof(*segs));
	g->nsegs = nsegs;
	return 0;
}

void gopclntab_release(struct gopclntab *g)
{
	if (g->map)
		munmap(g->map, g->map_len);
	free(g->segs);
	memset(g, 0, sizeof(*g));
}

void gopclntab_free(struct gopclntab *g)
{
	if (!g)
		return;
	gopclntab_release(g);
	free(g);
}

void gopclntab_drop_pages(const struct gopclntab *g)
{
	if (g->map)
		madvise(g->map, g->map_len, MADV_DONTNEED);
}

/* Finds the function covering pc: a binary search of the function table (its entries are
 * 4 or 8 bytes wide by format, so not a C array UPPER_BOUND could search). 0 or -ENOENT. */
static int func_find(const struct gopclntab *g, uint64_t pc, struct gofunc *f)
{
	uint64_t lo = 0, hi = g->nfunc, at, rec;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (!ftab_entry(g, mid, &at, &rec))
			return -ENOENT;
		if (at <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || !ftab_entry(g, lo - 1, &f->entry, &f->off) || !ftab_entry(g, lo, &f->end, &rec))
		return -ENOENT;
	return pc >= f->entry && pc < f->end ? 0 : -ENOENT;
}

/* The offset of a _func record's 32-bit field n (1: the name offset) in tab: after its entry
 * (a pointer before 1.18, 32 bits since). */
static uint64_t field_off(const struct gopclntab *g, const struct gofunc *f, unsigned n)
{
	return f->off + (g->version >= GOPCLNTAB_118 ? 4 : g->ptrsize) + (uint64_t)(n - 1) * 4;
}

/* Reads field n of f's record; false when it lies outside the table. */
static bool field(const struct gopclntab *g, const struct gofunc *f, unsigned n, uint32_t *v)
{
	uint64_t x;

	if (!tabrd(g, field_off(g, f, n), 4, &x))
		return false;
	*v = (uint32_t)x;
	return true;
}

/* The number of 32-bit fields of a record after its entry, up to and with the word ending in
 * nfuncdata: nameoff, args, deferreturn, pcsp, pcfile, pcln, npcdata, [cuOffset], [startLine],
 * then funcID, flag, pad, nfuncdata. */
static unsigned nfields(const struct gopclntab *g)
{
	return g->version == GOPCLNTAB_12 ? 8 : g->version == GOPCLNTAB_120 ? 10 : 9;
}

/* A function name at off of the name table (the table itself in the 1.2 format). */
static const char *name_at(const struct gopclntab *g, uint64_t off)
{
	uint64_t base = g->version == GOPCLNTAB_12 ? 0 : g->funcname;

	return off > g->len - base ? NULL : cstr(g->tab, g->len, base + off);
}

/* The value of the pc-value table at off (of the pc table; 0: none) at pc in f, following its
 * (value delta, pc delta) pairs: zig-zag and unsigned varints. 0 or -ENOENT. */
static int pcvalue(const struct gopclntab *g, const struct gofunc *f, uint32_t off, uint64_t pc,
		   int32_t *val)
{
	uint64_t base = g->version == GOPCLNTAB_12 ? 0 : g->pctab;
	const uint8_t *p, *end = g->tab + g->len;
	uint64_t at = f->entry, uv, dpc;
	int32_t v = -1;
	bool first = true;

	if (!off || off >= g->len - base)
		return -ENOENT;
	for (p = g->tab + base + off; p < end; first = false) {
		if (leb128_u(&p, end, &uv) || (uv == 0 && !first) || leb128_u(&p, end, &dpc))
			return -ENOENT;
		/* wraps as Go's int32 does (a hostile table: no undefined overflow) */
		v = (int32_t)((uint32_t)v + (uint32_t)(uv & 1 ? ~(uv >> 1) : uv >> 1));
		if (dpc > UINT32_MAX)
			return -ENOENT;
		at += dpc * g->quantum;
		if (pc < at) {
			*val = v;
			return 0;
		}
	}
	return -ENOENT;
}

/* The name of file number fno of f: through the compile unit's table (1.16+) or the file
 * table (1.2). NULL when it lies outside. */
static const char *file_name(const struct gopclntab *g, const struct gofunc *f, int32_t fno)
{
	uint64_t n, off;
	uint32_t cu;

	if (fno < 0)
		return NULL;
	if (g->version == GOPCLNTAB_12) {
		if (!tabrd(g, g->filetab, 4, &n) || (uint64_t)fno >= n ||
		    !tabrd(g, g->filetab + 4 * (uint64_t)fno, 4, &off))
			return NULL;
		return cstr(g->tab, g->len, off);
	}
	if (!field(g, f, 8, &cu) || !tabrd(g, g->cu + 4 * ((uint64_t)cu + (uint64_t)fno), 4, &off) ||
	    off == UINT32_MAX || off > g->len - g->filetab)
		return NULL;
	return cstr(g->tab, g->len, g->filetab + off);
}

/* Fills fr with the file and line of pc in f (unknown ones: NULL, 0). */
static void position(const struct gopclntab *g, const struct gofunc *f, uint64_t pc,
		     struct gopclntab_frame *fr)
{
	uint32_t pcfile, pcln;
	int32_t fno, line;

	fr->file = NULL;
	fr->line = 0;
	if (field(g, f, 5, &pcfile) && !pcvalue(g, f, pcfile, pc, &fno))
		fr->file = file_name(g, f, fno);
	if (field(g, f, 6, &pcln) && !pcvalue(g, f, pcln, pc, &line) && line > 0)
		fr->line = (uint32_t)line;
}

/* f's inline tree index at pc: the value of its PCDATA_InlTreeIndex table; -1 when none. */
static int32_t inline_index(const struct gopclntab *g, const struct gofunc *f, uint64_t pc)
{
	uint32_t npcdata;
	uint64_t off;
	int32_t ix;

	if (!field(g, f, 7, &npcdata) || npcdata <= PCDATA_INLTREE ||
	    !tabrd(g, field_off(g, f, nfields(g) + 1) + 4 * PCDATA_INLTREE, 4, &off) ||
	    pcvalue(g, f, (uint32_t)off, pc, &ix))
		return -1;
	return ix;
}

/* The address of f's inline tree (FUNCDATA_InlTree): a pointer before 1.18, an offset from
 * go:func.* since. 0 when it has none or it cannot be found. */
static uint64_t inline_tree(const struct gopclntab *g, const struct gofunc *f)
{
	unsigned which = g->version == GOPCLNTAB_12 ? FUNCDATA_INLTREE_12 : FUNCDATA_INLTREE;
	uint64_t nfd, at, v;
	uint32_t npcdata;

	if (!field(g, f, 7, &npcdata) || npcdata > g->len ||
	    !tabrd(g, field_off(g, f, nfields(g)) + 3, 1, &nfd) || nfd <= which)
		return 0;
	at = field_off(g, f, nfields(g) + 1) + 4 * (uint64_t)npcdata;
	if (g->version >= GOPCLNTAB_118) {
		if (!g->gofunc || !tabrd(g, at + 4 * which, 4, &v) || v == UINT32_MAX)
			return 0;
		return g->gofunc + v;
	}
	at += (g->tab_vaddr + at) % g->ptrsize ? g->ptrsize - (g->tab_vaddr + at) % g->ptrsize : 0;
	return tabrd(g, at + (uint64_t)which * g->ptrsize, 0, &v) ? v : 0;
}

/* One entry of an inline tree: the inlined function's name and the offset from f's entry of
 * an instruction at its call site. false when it cannot be read. */
static bool inline_entry(const struct gopclntab *g, uint64_t tree, int32_t ix, const char **name,
			 uint64_t *parent_pc)
{
	unsigned size = g->version == GOPCLNTAB_120 ? 16 : 20;
	unsigned name_at_off = g->version == GOPCLNTAB_120 ? 4 : 12;
	size_t avail;
	const uint8_t *e = image_at(g, tree + (uint64_t)ix * size, size, &avail);
	uint64_t nameoff, ppc;

	if (!e || !rd(e, size, name_at_off, 4, &nameoff) || !rd(e, size, name_at_off + 4, 4, &ppc))
		return false;
	*name = name_at(g, nameoff);
	*parent_pc = ppc;
	return *name != NULL;
}

/* Adds f's inlined frames at pc to fr (innermost first, at most max), moving pos from pc's
 * position to the call site in f of the outermost one. Returns how many it added. */
static int inline_frames(const struct gopclntab *g, const struct gofunc *f, uint64_t pc,
			 struct gopclntab_frame *fr, int max, struct gopclntab_frame *pos)
{
	uint64_t tree = inline_tree(g, f), ppc;
	int32_t ix = tree ? inline_index(g, f, pc) : -1;
	int n = 0;

	for (int depth = 0; ix >= 0 && depth < MAX_INLINE_DEPTH; depth++) {
		const char *name;
		if (!inline_entry(g, tree, ix, &name, &ppc) || ppc >= f->end - f->entry)
			break;
		if (n < max)
			fr[n++] = (struct gopclntab_frame){ name, pos->file, pos->line };
		position(g, f, f->entry + ppc, pos);
		ix = inline_index(g, f, f->entry + ppc);
	}
	return n;
}

int gopclntab_lookup(const struct gopclntab *g, uint64_t pc, struct gopclntab_frame *frames,
		     int max)
{
	struct gopclntab_frame pos;
	struct gofunc f;
	uint32_t nameoff;
	const char *name;
	int n;

	if (max < 1 || func_find(g, pc, &f) || !field(g, &f, 1, &nameoff) ||
	    !(name = name_at(g, nameoff)))
		return 0;
	position(g, &f, pc, &pos);
	n = inline_frames(g, &f, pc, frames, max - 1, &pos);
	frames[n++] = (struct gopclntab_frame){ name, pos.file, pos.line };
	return n;
}

int gopclntab_func(const struct gopclntab *g, uint64_t pc, const char **name, uint64_t *entry)
{
	struct gofunc f;
	uint32_t nameoff;

	if (func_find(g, pc, &f) || !field(g, &f, 1, &nameoff) || !(*name = name_at(g, nameoff)))
		return -ENOENT;
	if (entry)
		*entry = f.entry;
	return 0;
}

/* Gives an unwinder function i's bounds, name, the file of its entry and its flags. */
int gopclntab_fn(const struct gopclntab *g, uint64_t i, struct gopclntab_fn *fn)
{
	struct gopclntab_frame pos;
	struct gofunc f;
	uint64_t rec, flag;
	uint32_t nameoff;

	memset(fn, 0, sizeof(*fn));
	if (i >= g->nfunc || !ftab_entry(g, i, &f.entry, &f.off) ||
	    !ftab_entry(g, i + 1, &f.end, &rec) || f.entry >= f.end)
		return -ENOENT;
	fn->entry = f.entry;
	fn->end = f.end;
	fn->rec = f.off;
	if (field(g, &f, 1, &nameoff))
		fn->name = name_at(g, nameoff);
	position(g, &f, f.entry, &pos);
	fn->file = pos.file;
	/* funcID, flag, pad, nfuncdata: the flag byte is padding (0) before Go 1.17 */
	if (g->version != GOPCLNTAB_12 && tabrd(g, field_off(g, &f, nfields(g)) + 1, 1, &flag))
		fn->flag = (uint8_t)flag;
	return 0;
}

/* Walks the pc-value table at off (of the pc table) of f run by run, as pcvalue reads it, for
 * gopclntab_pcsp: runs past f's end are clipped, empty ones skipped. */
static int pcruns(const struct gopclntab *g, const struct gofunc *f, uint32_t off,
		  gopclntab_run_fn cb, void *ctx)
{
	uint64_t base = g->version == GOPCLNTAB_12 ? 0 : g->pctab;
	const uint8_t *p, *end = g->tab + g->len;
	uint64_t at = f->entry, uv, dpc;
	int32_t v = -1;
	int err;

	if (!off || off >= g->len - base)
		return -ENOENT;
	for (p = g->tab + base + off; p < end && at < f->end;) {
		if (leb128_u(&p, end, &uv))
			return -ENOENT;
		if (uv == 0 && at != f->entry)
			return 0; /* the end: the function's padding after its code has no value */
		if (leb128_u(&p, end, &dpc) || dpc > UINT32_MAX)
			return -ENOENT;
		v = (int32_t)((uint32_t)v + (uint32_t)(uv & 1 ? ~(uv >> 1) : uv >> 1));
		if (dpc && (err = cb(ctx, at, v)))
			return err;
		dpc *= g->quantum;
		at = dpc < f->end - at ? at + dpc : f->end;
	}
	return at >= f->end ? 0 : -ENOENT;
}

int gopclntab_pcsp(const struct gopclntab *g, const struct gopclntab_fn *fn, gopclntab_run_fn cb,
		   void *ctx)
{
	struct gofunc f = { .entry = fn->entry, .off = fn->rec, .end = fn->end };
	uint32_t off;

	if (fn->entry >= fn->end || !field(g, &f, 4, &off))
		return -ENOENT;
	return pcruns(g, &f, off, cb, ctx);
}

/* ---- finding the table in an ELF file ---- */

/* A relative dynamic relocation: the word at vaddr off holds the load bias + addend once
 * loaded (0 in a file the host's linker made position-independent). */
struct gorel {
	uint64_t off, addend;
};

/* The ELF file's view: its mapping, PT_LOAD segments (with their flags) and sections. */
struct goelf {
	const uint8_t *map;
	size_t size;
	struct gopclntab_seg segs[16];
	uint32_t flags[16];
	size_t nsegs;
	uint64_t text;                 /* .text's address, or the first executable segment's */
	const uint8_t *sect;           /* the .gopclntab section, when there is one */
	uint64_t sect_len, sect_vaddr;
	bool shdrs;                    /* the file has section headers */
	bool go;                       /* ... and a Go section (.go.buildinfo, .note.go.buildid) */
	uint64_t dyn_off, dyn_len;     /* PT_DYNAMIC's bytes in the file */
	struct gorel *rels;            /* sorted by off (owned) */
	size_t nrels, cap_rels;
};

/* Reads the file's PT_LOAD segments (what the file holds of them) and the address of its code;
 * 0 or -ENOEXEC. */
static int read_segments(Elf *elf, struct goelf *ge)
{
	size_t n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	for (size_t i = 0; i < n && ge->nsegs < 16; i++) {
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_DYNAMIC &&
		    ph.p_offset <= ge->size && ph.p_filesz <= ge->size - ph.p_offset)
			ge->dyn_off = ph.p_offset, ge->dyn_len = ph.p_filesz;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || ph.p_offset > ge->size)
			continue;
		uint64_t len = ph.p_filesz < ge->size - ph.p_offset ? ph.p_filesz : ge->size - ph.p_offset;
		if (!ge->text && (ph.p_flags & PF_X))
			ge->text = ph.p_vaddr;
		ge->flags[ge->nsegs] = ph.p_flags;
		ge->segs[ge->nsegs++] = (struct gopclntab_seg){ ph.p_vaddr, len, ge->map + ph.p_offset };
	}
	return 0;
}

/* Finds the .gopclntab section (.data.rel.ro.gopclntab in a position-independent build) and
 * .text, when the file keeps its section headers. */
static void read_sections(Elf *elf, struct goelf *ge)
{
	static const char *const names[] = { ".gopclntab", ".data.rel.ro.gopclntab" };
	GElf_Shdr sh;
	size_t n;

	ge->shdrs = !elf_getshdrnum(elf, &n) && n > 0;
	if (elffile_next(elf, NULL, ".text", SHT_PROGBITS, &sh))
		ge->text = sh.sh_addr;
	ge->go = elffile_next(elf, NULL, ".go.buildinfo", SHT_NULL, &sh) ||
		 elffile_next(elf, NULL, ".note.go.buildid", SHT_NULL, &sh);
	for (size_t i = 0; i < 2 && !ge->sect; i++) {
		if (!elffile_next(elf, NULL, names[i], SHT_NULL, &sh) || sh.sh_type == SHT_NOBITS ||
		    sh.sh_offset > ge->size || sh.sh_size > ge->size - sh.sh_offset)
			continue;
		ge->sect = ge->map + sh.sh_offset;
		ge->sect_len = sh.sh_size;
		ge->sect_vaddr = sh.sh_addr;
	}
}

/* Reads the table from its section, or else, in a file without section headers (whose
 * sections cannot be named) or a Go file whose table the host's linker merged into
 * .data.rel.ro (a position-independent build linked externally, as with cgo), searches the
 * segments for a magic whose header holds together. 0 or -ENOENT. */
static int find_table(struct gopclntab *g, const struct goelf *ge)
{
	static const uint8_t magics[4][4] = {
		{ 0xf1, 0xff, 0xff, 0xff }, { 0xf0, 0xff, 0xff, 0xff },
		{ 0xfa, 0xff, 0xff, 0xff }, { 0xfb, 0xff, 0xff, 0xff },
	};

	if (ge->sect && !gopclntab_init(g, ge->sect, ge->sect_len, ge->sect_vaddr, ge->text,
					ge->segs, ge->nsegs))
		return 0;
	for (size_t i = 0; (!ge->shdrs || ge->go) && i < ge->nsegs; i++) {
		const struct gopclntab_seg *s = &ge->segs[i];
		for (size_t m = 0; m < 4; m++) {
			const uint8_t *p = s->bytes, *end = s->bytes + s->size;
			while ((p = memmem(p, end - p, magics[m], 4))) {
				uint64_t off = p - s->bytes;
				if (off % 8 == 0 && !gopclntab_init(g, p, s->size - off, s->vaddr + off,
								    ge->text, ge->segs, ge->nsegs))
					return 0;
				p += 4;
			}
		}
	}
	return -ENOENT;
}

/* The file's bytes at vaddr, n of them at least (*avail: how many follow); NULL if none. */
static const uint8_t *file_at(const struct goelf *ge, uint64_t vaddr, uint64_t n, uint64_t *avail)
{
	return segs_at(ge->segs, ge->nsegs, vaddr, n, avail);
}

/* One DT_* value of the dynamic section; false when it has none. */
static bool dyn_value(const struct goelf *ge, int64_t tag, uint64_t *v)
{
	const uint8_t *d = ge->map + ge->dyn_off;
	uint64_t t;

	for (uint64_t off = 0; off + 16 <= ge->dyn_len; off += 16)
		if (rd(d, ge->dyn_len, off, 8, &t) && t == (uint64_t)tag)
			return rd(d, ge->dyn_len, off + 8, 8, v);
	return false;
}

static int cmp_rel(const void *a, const void *b)
{
	const struct gorel *x = a, *y = b;

	return CMP3(x->off, y->off);
}

/* Reads the relative relocations of DT_RELA (x86-64's and arm64's, 64-bit files), which say what
 * a position-independent file's pointers hold once loaded: the moduledata's, where the host's
 * linker left zeros. 0 or -ENOMEM (none read is no error). */
static int read_relocs(struct goelf *ge)
{
	uint64_t rela, size, avail, off = 0, info = 0, add = 0;
	const uint8_t *p;

	if (!ge->dyn_len || !dyn_value(ge, DT_RELA, &rela) || !dyn_value(ge, DT_RELASZ, &size) ||
	    !(p = file_at(ge, rela, 24, &avail)))
		return 0;
	size = size < avail ? size : avail;
	for (uint64_t at = 0; at + 24 <= size; at += 24) {
		rd(p, size, at, 8, &off), rd(p, size, at + 8, 8, &info), rd(p, size, at + 16, 8, &add);
		if ((uint32_t)info != R_X86_64_RELATIVE && (uint32_t)info != R_AARCH64_RELATIVE)
			continue;
		if (VEC_GROW(ge->rels, ge->cap_rels, ge->nrels + 1))
			return -ENOMEM;
		ge->rels[ge->nrels++] = (struct gorel){ off, add };
	}
	if (ge->nrels)
		qsort(ge->rels, ge->nrels, sizeof(*ge->rels), cmp_rel);
	return 0;
}

/* The word (w bytes) at vaddr as the loaded image holds it: the file's, or where that is 0, a
 * relative relocation's addend (a load bias of 0, as the table's addresses are). */
static bool image_word(const struct goelf *ge, uint64_t vaddr, unsigned w, uint64_t *v)
{
	uint64_t avail;
	const uint8_t *p = file_at(ge, vaddr, w, &avail);
	size_t i;

	if (!p || !rd(p, w, 0, w, v))
		return false;
	if (!*v && ge->nrels && (i = UPPER_BOUND(ge->rels, ge->nrels, off, vaddr)) &&
	    ge->rels[i - 1].off == vaddr)
		*v = ge->rels[i - 1].addend;
	return true;
}

/* The runtime's moduledata of the table (Go 1.18+): the aligned word in a writable segment
 * that points to the table, followed by its function name table's address. Its address, and
 * how many words the segment holds from there (0 when none is found). */
static uint64_t find_moduledata(const struct gopclntab *g, const struct goelf *ge,
				size_t *nwords)
{
	unsigned w = g->ptrsize;

	for (size_t i = 0; i < ge->nsegs; i++) {
		const struct gopclntab_seg *s = &ge->segs[i];
		if (!(ge->flags[i] & PF_W))
			continue;
		for (uint64_t off = (w - s->vaddr % w) % w; off + 2 * w <= s->size; off += w) {
			uint64_t v0, v1;
			if (!image_word(ge, s->vaddr + off, w, &v0) || v0 != g->tab_vaddr ||
			    !image_word(ge, s->vaddr + off + w, w, &v1) ||
			    v1 != g->tab_vaddr + g->funcname)
				continue;
			*nwords = (s->size - off) / w;
			return s->vaddr + off;
		}
	}
	return 0;
}

/* Whether an inline tree's first entry looks like one: a call at the top of the tree (parent
 * -1, before 1.20) or with the line its function starts at (1.20+), padding zero, naming a
 * function from the start of its name (any offset into the dense name table gives a string),
 * at a call site inside f. Zeros, or other data, are no entry. */
static bool tree_fits(const struct gopclntab *g, const struct gofunc *f, uint64_t tree)
{
	size_t avail;
	const uint8_t *e = image_at(g, tree, 20, &avail);
	const char *name;
	uint64_t ppc, head, line;

	if (!e || !inline_entry(g, tree, 0, &name, &ppc) || !*name || ppc >= f->end - f->entry ||
	    (name != (const char *)g->tab + g->funcname && name[-1]))
		return false;
	if (g->version == GOPCLNTAB_120) {
		rd(e, 16, 0, 4, &head);
		rd(e, 16, 12, 4, &line);
		return !(head >> 8) && line > 0 && line < (1u << 24);
	}
	rd(e, 20, 0, 4, &head);
	return (head & 0xffff) == 0xffff && !(head >> 24);
}

/* Whether gofunc reads as go:func.*: the inline trees of a sample of the functions that have
 * one (up to 16) begin with an entry that fits. */
static bool gofunc_fits(struct gopclntab *g, uint64_t gofunc)
{
	uint64_t step = g->nfunc / 256 + 1, checked = 0, tree, end_rec;
	bool bad = false;

	g->gofunc = gofunc;
	for (uint64_t i = 0; i < g->nfunc && checked < 16 && !bad; i += step) {
		struct gofunc f;
		if (!ftab_entry(g, i, &f.entry, &f.off) || !ftab_entry(g, i + 1, &f.end, &end_rec) ||
		    !(tree = inline_tree(g, &f)))
			continue;
		checked++;
		bad = !tree_fits(g, &f, tree);
	}
	if (checked && !bad)
		return true;
	g->gofunc = 0;
	return false;
}

/* Go 1.18+: takes the code's start (when the header has none: Go 1.2x stores none) and the
 * base of the inline trees, go:func.*, from the moduledata. The fields before `text` (word
 * 22) have kept their place; those after it changed from release to release, so go:func.* is
 * the word among them whose inline trees read right. */
static void read_moduledata(struct gopclntab *g, const struct goelf *ge)
{
	size_t n = 0, avail;
	uint64_t md = find_moduledata(g, ge, &n);
	uint64_t text, hdr_text = 0, c;
	unsigned w = g->ptrsize;

	if (!md || n < 23 || !image_word(ge, md + 22 * w, w, &text))
		return;
	tabrd(g, 8 + 2 * (uint64_t)g->ptrsize, 0, &hdr_text);
	if (!hdr_text && text && image_at(g, text, 1, &avail))
		g->text_start = text;
	for (size_t k = 23; k < n && k < 64; k++)
		if (image_word(ge, md + k * w, w, &c) && c &&
		    image_at(g, c, 1, &avail) && gofunc_fits(g, c))
			return;
}

/* Maps the file open at fd and finds its table; 0 or -errno. */
static int open_fd(struct gopclntab *g, int fd)
{
	struct goelf ge = { 0 };
	struct elffile ef;
	struct stat st;
	void *map;
	int err;

	if (fstat(fd, &st))
		return -errno;
	if (st.st_size < 64)
		return -ENOEXEC;
	if ((map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED)
		return -errno;
	ge.map = map;
	ge.size = st.st_size;
	if ((err = elffile_open_fd(&ef, fd, ELFFILE_PREAD)))
		goto out;
	err = read_segments(ef.elf, &ge);
	if (!err) {
		read_sections(ef.elf, &ge);
		err = find_table(g, &ge);
	}
	elffile_close(&ef);
	if (!err && g->version >= GOPCLNTAB_118 && (err = read_relocs(&ge)))
		gopclntab_release(g);
	if (!err && g->version >= GOPCLNTAB_118)
		read_moduledata(g, &ge);
	free(ge.rels);
out:
	if (err) {
		munmap(map, st.st_size);
		return err;
	}
	g->map = map;
	g->map_len = st.st_size;
	return 0;
}

struct gopclntab *gopclntab_new_fd(int fd)
{
	struct gopclntab *g = calloc(1, sizeof(*g));
	int err;

	if (!g)
		return NULL;
	if ((err = open_fd(g, fd))) {
		free(g);
		errno = -err;
		return NULL;
	}
	return g;
}
