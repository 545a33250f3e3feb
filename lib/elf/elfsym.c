/* ELF symbol tables with libelf: candidates from .symtab and .dynsym are sorted, deduplicated per
 * address (best name wins) and given ends; the string tables they name are mapped so the file can
 * be closed, names made up here go to a pool, and the symbols are packed into an array of 16-byte
 * entries of exactly their number. */
#include "elf/elfsym.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/elffile.h"
#include "base/safeopen.h"
#include "base/vec.h"

/* A symbol as found in a table, before deduplication: 32 bytes, as a big file has 300k. */
struct cand {
	uint64_t start;
	union {
		uint64_t size;    /* st_size, when sized */
		uint64_t sec_end; /* else: the end of its allocated section when it starts inside
				   * it, or 0 */
		uint64_t end;     /* once set_ends has run */
	};
	uint32_t name_off;  /* st_name; place_names makes it the offset in e's name space */
	uint32_t strndx;    /* the section of its string table (of MiniDebugInfo's ELF: inner) */
	uint32_t seq;       /* the order it was read in, which breaks ties in the sort */
	uint8_t sized : 1;  /* st_size is not 0 */
	uint8_t is_func : 1; /* STT_FUNC / STT_GNU_IFUNC, else a zero-size fallback */
	uint8_t bind_rank : 2; /* 0 global, 1 weak, 2 local */
	uint8_t is_dynsym : 1;
	uint8_t inner : 1;  /* read from MiniDebugInfo's ELF */
	uint8_t copied : 1; /* its name is copied into the pool, not kept in place */
};

/* What the symbol pass needs of one section. */
struct sec {
	uint64_t addr, end;
	bool alloc, exec;
};

/* State while reading one file. */
struct reader {
	Elf *elf;
	struct sec *secs;
	size_t nsecs;
	const char **strs;  /* by section number: the string tables the symbol tables name */
	struct cand *cands;
	size_t ncands, cap;
	bool inner;         /* MiniDebugInfo's ELF, freed after init: its names are copied */
	const char **inner_strs; /* the MiniDebugInfo ELF's strs, once read */
};

/* The name of candidate c (in libelf's string table data). */
static const char *cand_name(const struct reader *r, const struct cand *c)
{
	return (c->inner ? r->inner_strs : r->strs)[c->strndx] + c->name_off;
}

/* p resized to n elements of size bytes (at least one), or p itself when realloc fails: an array
 * whose final count is known only at its end is given its slack back. */
static void *shrink(void *p, size_t n, size_t size)
{
	void *q = realloc(p, (n ? n : 1) * size);

	return q ? q : p;
}

/* Reads the PT_LOAD program headers. */
static int read_segments(struct elfsym *e, Elf *elf)
{
	size_t n;

	if (elf_getphdrnum(elf, &n) != 0)
		return 0;
	e->segments = calloc(n ? n : 1, sizeof(*e->segments));
	if (!e->segments)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		e->segments[e->nsegments++] = (struct elfsym_segment){
			ph.p_vaddr, ph.p_offset, ph.p_filesz, ph.p_memsz, ph.p_flags,
		};
	}
	if (e->nsegments < n) /* only PT_LOAD ones are kept: give the rest back */
		e->segments = shrink(e->segments, e->nsegments, sizeof(*e->segments));
	return 0;
}

/* Records address range and flags of every section, indexed by section number. */
static int read_sections(struct reader *r)
{
	Elf_Scn *scn = NULL;

	if (elf_getshdrnum(r->elf, &r->nsecs) != 0)
		r->nsecs = 0;
	r->secs = calloc(r->nsecs ? r->nsecs : 1, sizeof(*r->secs));
	r->strs = calloc(r->nsecs ? r->nsecs : 1, sizeof(*r->strs));
	if (!r->secs || !r->strs)
		return -ENOMEM;
	while ((scn = elf_nextscn(r->elf, scn))) {
		GElf_Shdr sh;
		size_t i = elf_ndxscn(scn);
		if (i >= r->nsecs || !gelf_getshdr(scn, &sh))
			continue;
		r->secs[i] = (struct sec){
			.addr = sh.sh_addr,
			.end = sh.sh_addr + sh.sh_size < sh.sh_addr ? UINT64_MAX : sh.sh_addr + sh.sh_size,
			.alloc = sh.sh_flags & SHF_ALLOC,
			.exec = sh.sh_flags & SHF_EXECINSTR,
		};
	}
	return 0;
}

/* Whether an ELF symbol is a function, or a zero-size code label usable as a fallback. */
static bool wanted(const struct reader *r, const GElf_Sym *sym, const char *name, bool *is_func)
{
	int type = GELF_ST_TYPE(sym->st_info);

	if (sym->st_shndx == SHN_UNDEF || sym->st_value == 0 || !name || !name[0])
		return false;
	*is_func = type == STT_FUNC || type == STT_GNU_IFUNC;
	if (*is_func)
		return true;
	if (type != STT_NOTYPE || sym->st_size != 0 || name[0] == '$' || !strncmp(name, ".L", 2))
		return false;
	return sym->st_shndx < r->nsecs && r->secs[sym->st_shndx].exec;
}

/* Ranks a symbol binding: global first. */
static uint8_t bind_rank(int bind)
{
	return bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
}

/* How many entries of type (ELF_T_SYM, ELF_T_RELA) section scn holds, its data in *out: 0 when
 * scn is NULL or its data is missing or of another type (symbols and relocations are read
 * through this one check). */
static size_t section_entries(Elf *elf, Elf_Scn *scn, Elf_Type type, Elf_Data **out)
{
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	size_t entsize = gelf_fsize(elf, type, 1, EV_CURRENT);

	*out = d;
	return d && entsize && d->d_type == type ? d->d_size / entsize : 0;
}

/* The candidate of ELF symbol sym of the table whose header is sh. */
static struct cand make_cand(const struct reader *r, const GElf_Sym *sym, const GElf_Shdr *sh,
			     bool is_func)
{
	const struct sec *sc = sym->st_shndx < r->nsecs ? &r->secs[sym->st_shndx] : NULL;
	struct cand c = {
		.start = sym->st_value,
		.name_off = sym->st_name,
		.strndx = sh->sh_link,
		.sized = sym->st_size != 0,
		.is_func = is_func,
		.bind_rank = bind_rank(GELF_ST_BIND(sym->st_info)),
		.is_dynsym = sh->sh_type == SHT_DYNSYM,
		.inner = r->inner,
	};

	if (c.sized)
		c.size = sym->st_size;
	else
		c.sec_end = sc && sc->alloc && sc->end > sym->st_value ? sc->end : 0;
	return c;
}

/* Adds the wanted symbols of one symbol table section (r->cands has room for all of them). */
static void read_symtab(struct reader *r, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data;
	size_t nsyms = section_entries(r->elf, scn, ELF_T_SYM, &data);

	for (size_t i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		bool is_func;
		if (!gelf_getsym(data, i, &sym))
			break;
		const char *name = elf_strptr(r->elf, sh->sh_link, sym.st_name);
		if (!wanted(r, &sym, name, &is_func) || sh->sh_link >= r->nsecs)
			continue;
		if (!r->strs[sh->sh_link]) /* the table's data begins at offset 0 */
			r->strs[sh->sh_link] = name - sym.st_name;
		r->cands[r->ncands] = make_cand(r, &sym, sh, is_func);
		r->cands[r->ncands].seq = r->ncands;
		r->ncands++;
	}
}

/* The next symbol table section (.symtab, .dynsym) after scn, its header in *sh. */
static Elf_Scn *next_symtab(Elf *elf, Elf_Scn *scn, GElf_Shdr *sh)
{
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, sh) && (sh->sh_type == SHT_SYMTAB || sh->sh_type == SHT_DYNSYM))
			return scn;
	return NULL;
}

/* Adds the symbols of .symtab and .dynsym, into room made for all their entries (no growth
 * slack: the array is cut to size once deduplicated). */
static int read_symbols(struct reader *r)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf_Data *d;
	size_t total = r->ncands;

	while ((scn = next_symtab(r->elf, scn, &sh)))
		total += section_entries(r->elf, scn, ELF_T_SYM, &d);
	if (total > UINT32_MAX) /* cand.seq */
		return -ENOMEM;
	if (total > r->cap) {
		struct cand *v = realloc(r->cands, total * sizeof(*v));
		if (!v)
			return -ENOMEM;
		r->cands = v;
		r->cap = total;
	}
	while ((scn = next_symtab(r->elf, scn, &sh)))
		read_symtab(r, scn, &sh);
	return 0;
}

/* Number of leading underscores of a name. */
static size_t underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* Orders candidates by address, the preferred name of an address first (arg: the reader,
 * whose string tables hold the names). */
static int cand_cmp(const void *pa, const void *pb, void *arg)
{
	const struct cand *a = pa, *b = pb;
	const struct reader *r = arg;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->is_func != b->is_func)
		return b->is_func - a->is_func;
	if (a->bind_rank != b->bind_rank)
		return a->bind_rank - b->bind_rank;
	const char *na = cand_name(r, a), *nb = cand_name(r, b);
	size_t ua = underscores(na), ub = underscores(nb);
	if (ua != ub)
		return ua < ub ? -1 : 1;
	if (a->is_dynsym != b->is_dynsym)
		return a->is_dynsym - b->is_dynsym;
	return strcmp(na, nb);
}

/* A candidate's place in the sort by address: 16 bytes, so a sort of 300k moves little and
 * compares integers only (the names of one address are ordered afterwards, by cand_name_cmp). */
struct sortkey {
	uint64_t start;
	uint64_t idx; /* into r->cands */
};

/* Orders sort keys by address, then as read. */
static int key_cmp(const void *pa, const void *pb)
{
	const struct sortkey *a = pa, *b = pb;

	return CMP3(a->start, b->start) ?: CMP3(a->idx, b->idx);
}

/* Puts r's candidates in the keys' order, in place: each cycle of the permutation is followed
 * once (keys[j].idx becomes j as position j is filled). */
static void permute_cands(struct reader *r, struct sortkey *keys)
{
	for (size_t i = 0; i < r->ncands; i++) {
		if (keys[i].idx == i)
			continue;
		struct cand held = r->cands[i];
		size_t j = i;
		while (keys[j].idx != i) {
			size_t from = keys[j].idx;
			r->cands[j] = r->cands[from];
			keys[j].idx = j;
			j = from;
		}
		r->cands[j] = held;
		keys[j].idx = j;
	}
}

/* Orders the candidates of one address by name (arg: the reader), then as read: after the sort
 * by key_cmp, the order a stable sort of all candidates by cand_cmp gives. */
static int cand_name_cmp(const void *pa, const void *pb, void *arg)
{
	const struct cand *a = pa, *b = pb;
	int c = cand_cmp(a, b, arg);

	return c ? c : a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Sorts r's candidates by address, the preferred name of an address first. Most addresses have
 * one or two, so the names are compared only within an address. */
static int sort_cands(struct reader *r)
{
	struct sortkey *keys = malloc((r->ncands ? r->ncands : 1) * sizeof(*keys));

	if (!keys)
		return -ENOMEM;
	for (size_t i = 0; i < r->ncands; i++)
		keys[i] = (struct sortkey){ r->cands[i].start, i };
	qsort(keys, r->ncands, sizeof(*keys), key_cmp);
	permute_cands(r, keys);
	free(keys);
	for (size_t i = 0, j; i < r->ncands; i = j) {
		for (j = i + 1; j < r->ncands && r->cands[j].start == r->cands[i].start; j++)
			;
		if (j - i == 2 && cand_name_cmp(&r->cands[i], &r->cands[i + 1], r) > 0) {
			struct cand t = r->cands[i]; /* the common case: .symtab's and .dynsym's */
			r->cands[i] = r->cands[i + 1];
			r->cands[i + 1] = t;
		} else if (j - i > 2) {
			qsort_r(r->cands + i, j - i, sizeof(*r->cands), cand_name_cmp, r);
		}
	}
	return 0;
}

/* Keeps the first (best) candidate of each address, with the largest size seen there, and drops
 * zero-size fallbacks inside a sized function. Compacts r->cands in place and cuts it to size. */
static void dedupe(struct reader *r)
{
	size_t n = 0;
	uint64_t cover_end = 0;

	for (size_t i = 0; i < r->ncands; i++) {
		struct cand *c = &r->cands[i];
		struct cand *k = n ? &r->cands[n - 1] : NULL;
		if (k && k->start == c->start) {
			if (c->sized && (!k->sized || c->size > k->size)) {
				k->sized = 1;
				k->size = c->size;
			}
		} else if (!c->sized && c->start < cover_end) {
			continue;
		} else {
			r->cands[n++] = *c;
		}
		k = &r->cands[n - 1];
		uint64_t size = k->sized ? k->size : 0;
		uint64_t end = k->start + size < k->start ? UINT64_MAX : k->start + size;
		if (end > cover_end)
			cover_end = end;
	}
	r->ncands = n;
	r->cands = shrink(r->cands, n, sizeof(*r->cands));
	r->cap = n ? n : 1;
}

/* End bound for a zero-size symbol: its section's end, else its PT_LOAD segment's end. */
static uint64_t zero_size_bound(const struct elfsym *e, const struct cand *c)
{
	if (c->sec_end)
		return c->sec_end;
	for (size_t i = 0; i < e->nsegments; i++) {
		const struct elfsym_segment *s = &e->segments[i];
		if (c->start >= s->vaddr && c->start - s->vaddr < s->memsz)
			return s->vaddr + s->memsz;
	}
	return c->start + 1;
}

/* Gives every kept candidate its end (and so its size), bounded by the next one's start. */
static void set_ends(const struct elfsym *e, struct reader *r)
{
	for (size_t i = 0; i < r->ncands; i++) {
		struct cand *c = &r->cands[i];
		uint64_t next = i + 1 < r->ncands ? r->cands[i + 1].start : UINT64_MAX;
		uint64_t end = c->sized ? c->start + c->size : zero_size_bound(e, c);
		if (end < c->start || end > next)
			end = next;
		c->end = end;
	}
}

/* ---- names: the file's string tables in place, a pool for the rest ---- */

/* Maps string table section ndx of the file at fd read-only as a span holding the name offsets
 * from start on. False when it cannot stay in place: an image (fd < 0), a section that is no
 * plain string table, one past the file's end, past 4 GiB of names, or not ending in a NUL (which
 * bounds every name read from the span). */
static bool map_strtab(Elf *elf, int fd, size_t ndx, uint64_t start, struct elfsym_names *span)
{
	Elf_Scn *scn = elf_getscn(elf, ndx);
	uint64_t page = sysconf(_SC_PAGESIZE), delta;
	struct stat st;
	GElf_Shdr sh;

	if (fd < 0 || !scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_STRTAB ||
	    (sh.sh_flags & SHF_COMPRESSED) || !sh.sh_size || sh.sh_size > UINT32_MAX - start ||
	    fstat(fd, &st) || sh.sh_offset > (uint64_t)st.st_size ||
	    sh.sh_size > (uint64_t)st.st_size - sh.sh_offset)
		return false;
	delta = sh.sh_offset % page;
	void *m = mmap(NULL, delta + sh.sh_size, PROT_READ, MAP_PRIVATE, fd, sh.sh_offset - delta);
	if (m == MAP_FAILED)
		return false;
	*span = (struct elfsym_names){ (const char *)m + delta, start, sh.sh_size, m,
				       delta + sh.sh_size };
	if (!span->base[sh.sh_size - 1])
		return true;
	munmap(m, delta + sh.sh_size); /* the file changed since libelf read it */
	return false;
}

/* Where the names of one string table section go: -1 not seen yet, -2 the pool, else the index
 * of its span in e->spans. */
typedef int32_t strtab_slot;

/* Finds (mapping it the first time) the span of string table section ndx; *cap: e->spans's
 * capacity, *next: the first name offset no span holds yet. */
static int strtab_span(struct elfsym *e, Elf *elf, int fd, uint32_t ndx, strtab_slot *slot,
		       size_t *cap, uint64_t *next)
{
	struct elfsym_names span;

	if (*slot != -1)
		return 0;
	*slot = -2;
	if (!map_strtab(elf, fd, ndx, *next, &span))
		return 0;
	if (VEC_GROW(e->spans, *cap, e->nspans + 1)) {
		munmap(span.map, span.map_len);
		return -ENOMEM;
	}
	*slot = e->nspans;
	e->spans[e->nspans++] = span;
	*next += span.len;
	return 0;
}

/* Maps the string tables the kept candidates name (read from fd; -1: an image, nothing mapped)
 * and makes each candidate's name_off its offset in the name space, or marks it copied where
 * its table could not be mapped. Adds the pool's span last, empty, after the mapped ones. */
static int place_names(struct elfsym *e, struct reader *r, int fd)
{
	strtab_slot *slots = malloc((r->nsecs ? r->nsecs : 1) * sizeof(*slots));
	size_t cap = 0;
	uint64_t next = 0;
	int err = 0;

	if (!slots)
		return -ENOMEM;
	memset(slots, 0xff, (r->nsecs ? r->nsecs : 1) * sizeof(*slots)); /* all -1 */
	for (size_t i = 0; !err && i < r->ncands; i++) {
		struct cand *c = &r->cands[i];
		c->copied = c->inner;
		if (c->inner)
			continue;
		err = strtab_span(e, r->elf, fd, c->strndx, &slots[c->strndx], &cap, &next);
		if (!err && slots[c->strndx] < 0)
			c->copied = 1;
		else if (!err)
			c->name_off += e->spans[slots[c->strndx]].start;
	}
	free(slots);
	if (!err && VEC_GROW(e->spans, cap, e->nspans + 1))
		err = -ENOMEM;
	if (!err)
		e->spans[e->nspans++] = (struct elfsym_names){ .start = (uint32_t)next };
	return err;
}

/* Appends name to the pool (the last span; *cap: e->pool's capacity); returns its offset in
 * the name space, -ENOMEM or -EOVERFLOW (past 4 GiB of names). */
static int64_t add_name(struct elfsym *e, const char *name, size_t *cap)
{
	struct elfsym_names *pool = &e->spans[e->nspans - 1];
	size_t len = strlen(name) + 1;

	if (len > UINT32_MAX - (uint64_t)pool->start - e->pool_len)
		return -EOVERFLOW;
	if (VEC_GROW(e->pool, *cap, e->pool_len + len))
		return -ENOMEM;
	memcpy(e->pool + e->pool_len, name, len);
	e->pool_len += len;
	pool->len = e->pool_len;
	return pool->start + e->pool_len - len;
}

/* Copies the names of the candidates whose string table stays out of place into the pool. */
static int copy_names(struct elfsym *e, struct reader *r, size_t *cap)
{
	for (size_t i = 0; i < r->ncands; i++) {
		struct cand *c = &r->cands[i];
		if (!c->copied)
			continue;
		int64_t off = add_name(e, cand_name(r, c), cap);
		if (off < 0)
			return off;
		c->name_off = off;
	}
	return 0;
}

/* Gives the pool its slack back and its span its address, once no name is added. */
static void finish_names(struct elfsym *e)
{
	if (e->pool_len)
		e->pool = shrink(e->pool, e->pool_len, 1);
	if (e->nspans) {
		e->spans = shrink(e->spans, e->nspans, sizeof(*e->spans));
		e->spans[e->nspans - 1].base = e->pool;
	}
}

/* The first section named name with contents (not NOBITS), or NULL. */
static Elf_Scn *section_named(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elffile_next(elf, scn, name, SHT_NULL, &sh)))
		if (sh.sh_type != SHT_NOBITS && sh.sh_size)
			return scn;
	return NULL;
}

/* Notes the debuglink and whether the file has DWARF. */
static void read_debug_notes(struct elfsym *e, Elf *elf)
{
	GElf_Word crc = 0;
	const char *link = dwelf_elf_gnu_debuglink(elf, &crc);

	if (link && strlen(link) < sizeof(e->debuglink)) {
		strcpy(e->debuglink, link);
		e->debuglink_crc = crc;
	}
	e->has_dwarf = section_named(elf, ".debug_info") || section_named(elf, ".zdebug_info");
}

/* Decompresses the MiniDebugInfo ELF of .gnu_debugdata (an xz file) into an Elf handle that
 * owns its memory; NULL when there is none or it cannot be read. */
static Elf *open_minidebuginfo(Elf *elf)
{
	Elf_Scn *scn = section_named(elf, ".gnu_debugdata");
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	Elf *inner = NULL;

	if (!d || !d->d_buf)
		return NULL;
	int fd = memfd_create("firn-gnu-debugdata", MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (write(fd, d->d_buf, d->d_size) == (ssize_t)d->d_size && lseek(fd, 0, SEEK_SET) == 0)
		inner = dwelf_elf_begin(fd);
	if (inner && elf_kind(inner) != ELF_K_ELF) {
		elf_end(inner);
		inner = NULL;
	}
	if (inner)
		elf_cntl(inner, ELF_C_FDREAD);
	close(fd);
	return inner;
}

/* Adds the symbols of the MiniDebugInfo ELF (if any) to r's candidates; inner keeps their names
 * until the caller ends it. */
static int read_minidebuginfo(struct elfsym *e, struct reader *r, Elf **inner)
{
	struct reader ir = { .cands = r->cands, .ncands = r->ncands, .cap = r->cap, .inner = true };
	int err;

	if (!(*inner = open_minidebuginfo(r->elf)))
		return 0;
	ir.elf = *inner;
	err = read_sections(&ir);
	if (!err)
		err = read_symbols(&ir);
	r->cands = ir.cands;
	r->ncands = ir.ncands;
	r->cap = ir.cap;
	r->inner_strs = ir.strs; /* their names are read until they are copied */
	e->has_minidebuginfo = !err;
	free(ir.secs);
	return err;
}

/* ---- PLT stubs, named "name@plt" as objdump and perf name them ---- */

/* A GOT slot and the dynamic symbol its relocation binds it to. */
struct got_name {
	uint64_t got;
	const char *name; /* into libelf's string table data */
};

/* Orders GOT names by slot. */
static int got_cmp(const void *pa, const void *pb)
{
	const struct got_name *a = pa, *b = pb;

	return a->got < b->got ? -1 : a->got > b->got;
}

/* Adds the JUMP_SLOT and GLOB_DAT slots of one SHT_RELA section (its symbols: sh->sh_link). */
static int read_got_relas(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct got_name **v,
			  size_t *n, size_t *cap)
{
	Elf_Scn *sym_scn = elf_getscn(elf, sh->sh_link);
	GElf_Shdr ssh;
	Elf_Data *d, *sd;
	size_t nrelas = section_entries(elf, scn, ELF_T_RELA, &d);

	if (!section_entries(elf, sym_scn, ELF_T_SYM, &sd) || !gelf_getshdr(sym_scn, &ssh))
		return 0;
	for (size_t i = 0; i < nrelas; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		if (!gelf_getrela(d, i, &r))
			break;
		uint64_t type = GELF_R_TYPE(r.r_info);
		if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) ||
		    !gelf_getsym(sd, GELF_R_SYM(r.r_info), &sym))
			continue;
		const char *name = elf_strptr(elf, ssh.sh_link, sym.st_name);
		if (!name || !name[0])
			continue;
		if (VEC_GROW(*v, *cap, *n + 1))
			return -ENOMEM;
		(*v)[(*n)++] = (struct got_name){ r.r_offset, name };
	}
	return 0;
}

/* The GOT slot an x86-64 PLT entry at addr jumps through: [endbr64] [bnd] jmp *disp32(%rip)
 * (lazy .plt entries, .plt.sec and .plt.got ones); false for other code (PLT0, the IBT .plt's
 * push-and-jump entries). */
static bool plt_slot(const uint8_t *p, size_t len, uint64_t addr, uint64_t *got)
{
	size_t i = len >= 4 && !memcmp(p, "\xf3\x0f\x1e\xfa", 4) ? 4 : 0;
	int32_t disp;

	if (i < len && p[i] == 0xf2)
		i++;
	if (len < i + 6 || p[i] != 0xff || p[i + 1] != 0x25)
		return false;
	memcpy(&disp, p + i + 2, 4);
	*got = addr + i + 6 + (uint64_t)(int64_t)disp;
	return true;
}

/* A symbol made up for code that has none (a PLT stub, .init, .fini). */
struct synth {
	uint64_t start, end;
	uint32_t name; /* offset in e's name space (the pool) */
	uint32_t seq;  /* the order it was found in, which decides between equal starts */
};

/* The file's own symbols (the kept candidates, with ends), the synthetic ones found so far and
 * the pool's capacity, while the synthetic symbols are added. */
struct synthset {
	struct elfsym *e;
	const struct cand *own;
	size_t nown;
	struct synth *v;
	size_t n, cap, pool_cap;
};

/* Whether [start, end) holds no address of the file's own (sorted) symbols. */
static bool sym_free(const struct synthset *ss, uint64_t start, uint64_t end)
{
	size_t i = UPPER_BOUND(ss->own, ss->nown, start, start);

	return !(i && start < ss->own[i - 1].end) && !(i < ss->nown && ss->own[i].start < end);
}

/* Adds a synthetic symbol [start, end) named name (copied into the pool). */
static int add_synth(struct synthset *ss, uint64_t start, uint64_t end, const char *name)
{
	int64_t off = add_name(ss->e, name, &ss->pool_cap);

	if (off < 0)
		return off;
	if (ss->n >= UINT32_MAX || VEC_GROW(ss->v, ss->cap, ss->n + 1))
		return -ENOMEM;
	ss->v[ss->n] = (struct synth){ start, end, (uint32_t)off, (uint32_t)ss->n };
	ss->n++;
	return 0;
}

/* Appends "name@plt" for each entry of one PLT section whose GOT slot a relocation names,
 * where none of the file's own symbols is: an existing name always wins. */
static int add_plt_section(struct synthset *ss, Elf_Scn *scn, const GElf_Shdr *sh,
			   const struct got_name *gots, size_t ngots)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	uint64_t step = sh->sh_entsize == 8 || sh->sh_entsize == 16 ? sh->sh_entsize : 16;
	char buf[512];

	if (!d || !d->d_buf)
		return 0;
	for (uint64_t off = 0; off + step <= d->d_size; off += step) {
		uint64_t got, start = sh->sh_addr + off;
		if (!plt_slot((const uint8_t *)d->d_buf + off, step, start, &got))
			continue;
		size_t i = UPPER_BOUND(gots, ngots, got, got);
		if (!i || gots[i - 1].got != got || !sym_free(ss, start, start + step) ||
		    (size_t)snprintf(buf, sizeof(buf), "%s@plt", gots[i - 1].name) >= sizeof(buf))
			continue;
		int err = add_synth(ss, start, start + step, buf);
		if (err)
			return err;
	}
	return 0;
}

/* Names the PLT stubs of an x86-64 file (.plt, .plt.sec, .plt.got) that none of the file's own
 * symbols covers. */
static int add_plt_symbols(struct synthset *ss, Elf *elf, const GElf_Ehdr *eh)
{
	struct got_name *gots = NULL;
	size_t ngots = 0, cap_gots = 0, shstrndx;
	Elf_Scn *scn = NULL;
	int err = 0;

	if (eh->e_machine != EM_X86_64 || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while (!err && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_RELA)
			err = read_got_relas(elf, scn, &sh, &gots, &ngots, &cap_gots);
	}
	if (ngots)
		qsort(gots, ngots, sizeof(*gots), got_cmp);
	while (!err && ngots && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS &&
		    (sh.sh_flags & SHF_EXECINSTR) && (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    (!strcmp(name, ".plt") || !strcmp(name, ".plt.sec") || !strcmp(name, ".plt.got")))
			err = add_plt_section(ss, scn, &sh, gots, ngots);
	}
	free(gots);
	return err;
}

/* Names the .init and .fini sections "_init" and "_fini" where none of the file's own symbols
 * covers them: the dynamic loader runs them (DT_INIT, DT_FINI), a stripped file keeps no symbol
 * for them and no .eh_frame entry bounds them, and with a cold page cache the first fetch of a
 * library's code is often there (issue 25: the one "[liblzma.so.5.4.1]" frame left). */
static int add_init_fini(struct synthset *ss, Elf *elf)
{
	static const char *const secs[][2] = { { ".init", "_init" }, { ".fini", "_fini" } };
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !sh.sh_size || sh.sh_addr + sh.sh_size < sh.sh_addr ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		for (size_t i = 0; i < sizeof(secs) / sizeof(secs[0]); i++) {
			if (strcmp(name, secs[i][0]) || !sym_free(ss, sh.sh_addr, sh.sh_addr + sh.sh_size))
				continue;
			int err = add_synth(ss, sh.sh_addr, sh.sh_addr + sh.sh_size, secs[i][1]);
			if (err)
				return err;
		}
	}
	return 0;
}

/* Orders synthetic symbols by start, then in the order they were found. */
static int synth_cmp(const void *pa, const void *pb)
{
	const struct synth *a = pa, *b = pb;

	return CMP3(a->start, b->start) ?: CMP3(a->seq, b->seq);
}

/* The symbols of e, counted (out NULL) or written: the file's own and the synthetic ones merged
 * by start (own first), each dropped that starts inside the one kept before it (overlapping
 * sections of a damaged file: one name an address); ends that do not fit a len go to longs.
 * Returns how many are kept; *nlongs: how many of them have a long end. */
static size_t merge_symbols(const struct synthset *ss, struct elfsym_symbol *out,
			    struct elfsym_long_end *longs, size_t *nlongs)
{
	size_t i = 0, j = 0, k = 0;
	uint64_t prev_end = 0;

	*nlongs = 0;
	while (i < ss->nown || j < ss->n) {
		bool own = j == ss->n || (i < ss->nown && ss->own[i].start <= ss->v[j].start);
		uint64_t start = own ? ss->own[i].start : ss->v[j].start;
		uint64_t end = own ? ss->own[i].end : ss->v[j].end;
		uint32_t name = own ? ss->own[i].name_off : ss->v[j].name;
		if (own)
			i++;
		else
			j++;
		if (k && start < prev_end)
			continue;
		bool is_long = end - start >= ELFSYM_LONG;
		if (out)
			out[k] = (struct elfsym_symbol){ start, is_long ? ELFSYM_LONG : end - start, name };
		if (is_long && longs)
			longs[*nlongs] = (struct elfsym_long_end){ start, end };
		*nlongs += is_long;
		prev_end = end;
		k++;
	}
	return k;
}

/* Fills e->syms (and e->long_ends), each of exactly its count, from the set. */
static int pack_symbols(struct elfsym *e, const struct synthset *ss)
{
	size_t nlongs, n = merge_symbols(ss, NULL, NULL, &nlongs);

	e->syms = malloc((n ? n : 1) * sizeof(*e->syms));
	e->long_ends = nlongs ? malloc(nlongs * sizeof(*e->long_ends)) : NULL;
	if (!e->syms || (nlongs && !e->long_ends))
		return -ENOMEM;
	e->nsyms = merge_symbols(ss, e->syms, e->long_ends, &e->nlong_ends);
	return 0;
}

/* Adds the names a file's code has without symbols (PLT stubs, _init, _fini) where its own
 * symbols (r's kept candidates) leave them, and packs all into e's sorted, disjoint symbols;
 * *pool_cap: e->pool's capacity. */
static int add_symbols(struct elfsym *e, const struct reader *r, const GElf_Ehdr *eh,
		       size_t *pool_cap)
{
	struct synthset ss = { .e = e, .own = r->cands, .nown = r->ncands, .pool_cap = *pool_cap };
	int err = add_plt_symbols(&ss, r->elf, eh);

	if (!err)
		err = add_init_fini(&ss, r->elf);
	if (!err && ss.n)
		qsort(ss.v, ss.n, sizeof(*ss.v), synth_cmp);
	if (!err)
		err = pack_symbols(e, &ss);
	*pool_cap = ss.pool_cap;
	free(ss.v);
	return err;
}

/* Reads everything from an open Elf handle into e; fd: the file it reads (-1: an image), whose
 * string tables are mapped. */
static int init_from_elf(struct elfsym *e, Elf *elf, int fd)
{
	struct reader r = { .elf = elf };
	Elf *inner = NULL;
	size_t pool_cap = 0;
	GElf_Ehdr eh;
	int err;

	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
		return -ENOEXEC;
	e->type = eh.e_type;
	err = read_segments(e, elf);
	if (!err) {
		elffile_build_id(elf, e->build_id, sizeof(e->build_id));
		read_debug_notes(e, elf);
		err = read_sections(&r);
	}
	if (!err)
		err = read_symbols(&r);
	if (!err)
		err = read_minidebuginfo(e, &r, &inner);
	if (!err)
		err = sort_cands(&r);
	if (!err) {
		dedupe(&r);
		set_ends(e, &r);
		err = place_names(e, &r, fd);
	}
	if (!err)
		err = copy_names(e, &r, &pool_cap);
	if (!err)
		err = add_symbols(e, &r, &eh, &pool_cap);
	finish_names(e);
	if (inner)
		elf_end(inner);
	free(r.secs);
	free(r.strs);
	free(r.inner_strs);
	free(r.cands);
	return err;
}

/* Reads e from f (err: how opening it went) and closes f; releases e on failure. A file is read
 * mapped (ELFFILE_MAPPED): its symbol and string tables are then read where the page cache holds
 * them, not copied into the heap by pread for the call (node's: 17 MB), and the string tables
 * stay mapped afterwards anyway, so the SIGBUS of a file truncated in place is a risk e takes
 * for its whole life, not only here. */
static int init_and_close(struct elfsym *e, struct elffile *f, int err)
{
	if (!err)
		err = init_from_elf(e, f->elf, f->fd);
	elffile_close(f);
	if (err)
		elfsym_release(e);
	return err;
}

int elfsym_init_fd(struct elfsym *e, int fd)
{
	struct elffile f;
	int dfd, err;

	memset(e, 0, sizeof(*e));
	dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dfd < 0)
		return -errno;
	err = init_and_close(e, &f, elffile_open_fd(&f, dfd, ELFFILE_MAPPED));
	close(dfd);
	return err;
}

int elfsym_init_path(struct elfsym *e, const char *path)
{
	struct elffile f;

	memset(e, 0, sizeof(*e));
	return init_and_close(e, &f, elffile_open(&f, path, ELFFILE_MAPPED, NULL));
}

int elfsym_init_memory(struct elfsym *e, const void *image, size_t size)
{
	struct elffile f;

	memset(e, 0, sizeof(*e));
	return init_and_close(e, &f, elffile_open_image(&f, image, size));
}

void elfsym_drop_pages(const struct elfsym *e)
{
	for (size_t i = 0; i < e->nspans; i++)
		if (e->spans[i].map)
			madvise(e->spans[i].map, e->spans[i].map_len, MADV_DONTNEED);
}

void elfsym_release(struct elfsym *e)
{
	for (size_t i = 0; i < e->nspans; i++)
		if (e->spans[i].map)
			munmap(e->spans[i].map, e->spans[i].map_len);
	free(e->spans);
	free(e->pool);
	free(e->segments);
	free(e->syms);
	free(e->long_ends);
	memset(e, 0, sizeof(*e));
}

const char *elfsym_name(const struct elfsym *e, const struct elfsym_symbol *s)
{
	for (size_t i = 0; i < e->nspans; i++)
		if (s->name - e->spans[i].start < e->spans[i].len)
			return e->spans[i].base + (s->name - e->spans[i].start);
	return ""; /* every name lies in a span: not reached */
}

uint64_t elfsym_end(const struct elfsym *e, const struct elfsym_symbol *s)
{
	if (s->len != ELFSYM_LONG)
		return s->start + s->len;
	size_t i = UPPER_BOUND(e->long_ends, e->nlong_ends, start, s->start);
	return i && e->long_ends[i - 1].start == s->start ? e->long_ends[i - 1].end
							   : s->start + s->len;
}

size_t elfsym_heap_bytes(const struct elfsym *e)
{
	return e->nsegments * sizeof(*e->segments) + e->nsyms * sizeof(*e->syms) +
	       e->nlong_ends * sizeof(*e->long_ends) + e->nspans * sizeof(*e->spans) + e->pool_len;
}

int elfsym_lookup(const struct elfsym *e, uint64_t vaddr, const char **name, uint64_t *sym_start)
{
	size_t lo = UPPER_BOUND(e->syms, e->nsyms, start, vaddr);

	if (lo == 0 || vaddr >= elfsym_end(e, &e->syms[lo - 1]))
		return -ENOENT;
	if (name)
		*name = elfsym_name(e, &e->syms[lo - 1]);
	if (sym_start)
		*sym_start = e->syms[lo - 1].start;
	return 0;
}

bool elfsym_covers(const struct elfsym *e, uint64_t start, uint64_t end)
{
	size_t i = UPPER_BOUND(e->syms, e->nsyms, start, start);

	return i && end <= elfsym_end(e, &e->syms[i - 1]);
}

int elfsym_file_offset_to_vaddr(const struct elfsym *e, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < e->nsegments; i++) {
		const struct elfsym_segment *s = &e->segments[i];
		if (off >= s->offset && off - s->offset < s->filesz) {
			*vaddr = s->vaddr + (off - s->offset);
			return 0;
		}
	}
	return -ENOENT;
}
