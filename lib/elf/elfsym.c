/* ELF symbol tables with libelf: candidates from .symtab and .dynsym are sorted, deduplicated per
 * address (best name wins), given ends, and copied out so the file can be closed. */
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
#include <unistd.h>

#include "elf/elffile.h"
#include "base/safeopen.h"
#include "base/vec.h"

/* A symbol as found in a table, before deduplication. */
struct cand {
	uint64_t start, size;
	const char *name;   /* into libelf's string table data */
	uint64_t sec_end;   /* end of its allocated section when it starts inside it, else 0 */
	uint8_t is_func;    /* STT_FUNC / STT_GNU_IFUNC, else a zero-size fallback */
	uint8_t bind_rank;  /* 0 global, 1 weak, 2 local */
	uint8_t is_dynsym;
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
	struct cand *cands;
	size_t ncands, cap;
};

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
	return 0;
}

/* Records address range and flags of every section, indexed by section number. */
static int read_sections(struct reader *r)
{
	Elf_Scn *scn = NULL;

	if (elf_getshdrnum(r->elf, &r->nsecs) != 0)
		r->nsecs = 0;
	r->secs = calloc(r->nsecs ? r->nsecs : 1, sizeof(*r->secs));
	if (!r->secs)
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

/* Appends a candidate. */
static int push_cand(struct reader *r, const struct cand *c)
{
	if (VEC_GROW(r->cands, r->cap, r->ncands + 1))
		return -ENOMEM;
	r->cands[r->ncands++] = *c;
	return 0;
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

/* Adds the wanted symbols of one symbol table section. */
static int read_symtab(struct reader *r, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data;
	size_t nsyms = section_entries(r->elf, scn, ELF_T_SYM, &data);

	for (size_t i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		bool is_func;
		if (!gelf_getsym(data, i, &sym))
			break;
		const char *name = elf_strptr(r->elf, sh->sh_link, sym.st_name);
		if (!wanted(r, &sym, name, &is_func))
			continue;
		const struct sec *sc = sym.st_shndx < r->nsecs ? &r->secs[sym.st_shndx] : NULL;
		struct cand c = {
			.start = sym.st_value,
			.size = sym.st_size,
			.name = name,
			.sec_end = sc && sc->alloc && sc->end > sym.st_value ? sc->end : 0,
			.is_func = is_func,
			.bind_rank = bind_rank(GELF_ST_BIND(sym.st_info)),
			.is_dynsym = sh->sh_type == SHT_DYNSYM,
		};
		if (push_cand(r, &c))
			return -ENOMEM;
	}
	return 0;
}

/* Adds the symbols of .symtab and .dynsym. */
static int read_symbols(struct reader *r)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(r->elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		if (read_symtab(r, scn, &sh))
			return -ENOMEM;
	}
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

/* Orders candidates by address, the preferred name of an address first. */
static int cand_cmp(const void *pa, const void *pb)
{
	const struct cand *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->is_func != b->is_func)
		return b->is_func - a->is_func;
	if (a->bind_rank != b->bind_rank)
		return a->bind_rank - b->bind_rank;
	size_t ua = underscores(a->name), ub = underscores(b->name);
	if (ua != ub)
		return ua < ub ? -1 : 1;
	if (a->is_dynsym != b->is_dynsym)
		return a->is_dynsym - b->is_dynsym;
	return strcmp(a->name, b->name);
}

/* Keeps the first (best) candidate of each address, with the largest size seen there, and drops
 * zero-size fallbacks inside a sized function. Compacts r->cands in place. */
static void dedupe(struct reader *r)
{
	size_t n = 0;
	uint64_t cover_end = 0;

	for (size_t i = 0; i < r->ncands; i++) {
		struct cand *c = &r->cands[i];
		if (n && r->cands[n - 1].start == c->start) {
			if (c->size > r->cands[n - 1].size)
				r->cands[n - 1].size = c->size;
		} else if (c->size == 0 && c->start < cover_end) {
			continue;
		} else {
			r->cands[n++] = *c;
		}
		struct cand *k = &r->cands[n - 1];
		uint64_t end = k->start + k->size < k->start ? UINT64_MAX : k->start + k->size;
		if (end > cover_end)
			cover_end = end;
	}
	r->ncands = n;
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

/* Appends name to the names pool; returns its offset, or -1. */
static int64_t add_name(struct elfsym *e, const char *name)
{
	size_t len = strlen(name) + 1;

	if (VEC_GROW(e->names, e->names_cap, e->names_len + len))
		return -1;
	memcpy(e->names + e->names_len, name, len);
	e->names_len += len;
	return e->names_len - len;
}

/* Copies the deduplicated candidates out as symbols with ends. */
static int emit_symbols(struct elfsym *e, const struct reader *r)
{
	e->syms = calloc(r->ncands ? r->ncands : 1, sizeof(*e->syms));
	if (!e->syms)
		return -ENOMEM;
	for (size_t i = 0; i < r->ncands; i++) {
		const struct cand *c = &r->cands[i];
		uint64_t next = i + 1 < r->ncands ? r->cands[i + 1].start : UINT64_MAX;
		uint64_t end = c->size ? c->start + c->size : zero_size_bound(e, c);
		if (end < c->start || end > next)
			end = next;
		int64_t name = add_name(e, c->name);
		if (name < 0)
			return -ENOMEM;
		e->syms[e->nsyms++] = (struct elfsym_symbol){ c->start, end, (uint32_t)name };
	}
	return 0;
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
	struct reader ir = { .cands = r->cands, .ncands = r->ncands, .cap = r->cap };
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

/* Whether [start, end) holds no address of the first n (sorted) symbols. */
static bool sym_free(const struct elfsym *e, size_t n, uint64_t start, uint64_t end)
{
	size_t i = UPPER_BOUND(e->syms, n, start, start);

	return !(i && start < e->syms[i - 1].end) && !(i < n && e->syms[i].start < end);
}

/* Appends "name@plt" for each entry of one PLT section whose GOT slot a relocation names,
 * where none of the first n (the file's own) symbols is: an existing name always wins. */
static int add_plt_section(struct elfsym *e, size_t n, Elf_Scn *scn, const GElf_Shdr *sh,
			   const struct got_name *gots, size_t ngots, size_t *cap)
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
		if (!i || gots[i - 1].got != got || !sym_free(e, n, start, start + step) ||
		    (size_t)snprintf(buf, sizeof(buf), "%s@plt", gots[i - 1].name) >= sizeof(buf))
			continue;
		int64_t name = add_name(e, buf);
		if (name < 0 || VEC_GROW(e->syms, *cap, e->nsyms + 1))
			return -ENOMEM;
		e->syms[e->nsyms++] = (struct elfsym_symbol){ start, start + step, (uint32_t)name };
	}
	return 0;
}

/* Orders symbols by start. */
static int sym_cmp(const void *pa, const void *pb)
{
	const struct elfsym_symbol *a = pa, *b = pb;

	return a->start < b->start ? -1 : a->start > b->start;
}

/* Names the PLT stubs of an x86-64 file (.plt, .plt.sec, .plt.got) that none of the first n
 * symbols covers; cap: e->syms's capacity. */
static int add_plt_symbols(struct elfsym *e, Elf *elf, const GElf_Ehdr *eh, size_t n, size_t *cap)
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
			err = add_plt_section(e, n, scn, &sh, gots, ngots, cap);
	}
	free(gots);
	return err;
}

/* Names the .init and .fini sections "_init" and "_fini" where none of the first n symbols
 * covers them: the dynamic loader runs them (DT_INIT, DT_FINI), a stripped file keeps no symbol
 * for them and no .eh_frame entry bounds them, and with a cold page cache the first fetch of a
 * library's code is often there (issue 25: the one "[liblzma.so.5.4.1]" frame left). */
static int add_init_fini(struct elfsym *e, Elf *elf, size_t n, size_t *cap)
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
			if (strcmp(name, secs[i][0]) || !sym_free(e, n, sh.sh_addr, sh.sh_addr + sh.sh_size))
				continue;
			int64_t off = add_name(e, secs[i][1]);
			if (off < 0 || VEC_GROW(e->syms, *cap, e->nsyms + 1))
				return -ENOMEM;
			e->syms[e->nsyms++] = (struct elfsym_symbol){ sh.sh_addr, sh.sh_addr + sh.sh_size,
								      (uint32_t)off };
		}
	}
	return 0;
}

/* Adds the names a file's code has without symbols (PLT stubs, _init, _fini) where its own
 * symbols leave them, and keeps e's symbols sorted and disjoint. */
static int add_synthetic_symbols(struct elfsym *e, Elf *elf, const GElf_Ehdr *eh)
{
	size_t cap = e->nsyms, nsyms = e->nsyms;
	int err = add_plt_symbols(e, elf, eh, nsyms, &cap);

	if (!err)
		err = add_init_fini(e, elf, nsyms, &cap);
	if (err || e->nsyms == nsyms)
		return err;
	qsort(e->syms, e->nsyms, sizeof(*e->syms), sym_cmp);
	size_t k = 0; /* sections that overlap (a damaged file): one name an address */
	for (size_t i = 0; i < e->nsyms; i++)
		if (!k || e->syms[i].start >= e->syms[k - 1].end)
			e->syms[k++] = e->syms[i];
	e->nsyms = k;
	return 0;
}

/* Reads everything from an open Elf handle into e. */
static int init_from_elf(struct elfsym *e, Elf *elf)
{
	struct reader r = { .elf = elf };
	Elf *inner = NULL;
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
	if (!err) {
		if (r.ncands)
			qsort(r.cands, r.ncands, sizeof(*r.cands), cand_cmp);
		dedupe(&r);
		err = emit_symbols(e, &r);
	}
	if (!err)
		err = add_synthetic_symbols(e, elf, &eh);
	if (inner)
		elf_end(inner);
	free(r.secs);
	free(r.cands);
	return err;
}

/* Reads e from f (err: how opening it went) and closes f; releases e on failure. */
static int init_and_close(struct elfsym *e, struct elffile *f, int err)
{
	if (!err)
		err = init_from_elf(e, f->elf);
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
	/* pread on demand: a file truncated under us gives errors, never the SIGBUS a mapping
	 * would. */
	err = init_and_close(e, &f, elffile_open_fd(&f, dfd, ELFFILE_PREAD));
	close(dfd);
	return err;
}

int elfsym_init_path(struct elfsym *e, const char *path)
{
	struct elffile f;

	memset(e, 0, sizeof(*e));
	return init_and_close(e, &f, elffile_open(&f, path, ELFFILE_PREAD, NULL));
}

int elfsym_init_memory(struct elfsym *e, const void *image, size_t size)
{
	struct elffile f;

	memset(e, 0, sizeof(*e));
	return init_and_close(e, &f, elffile_open_image(&f, image, size));
}

void elfsym_release(struct elfsym *e)
{
	free(e->segments);
	free(e->syms);
	free(e->names);
	memset(e, 0, sizeof(*e));
}

int elfsym_lookup(const struct elfsym *e, uint64_t vaddr, const char **name, uint64_t *sym_start)
{
	size_t lo = UPPER_BOUND(e->syms, e->nsyms, start, vaddr);

	if (lo == 0 || vaddr >= e->syms[lo - 1].end)
		return -ENOENT;
	if (name)
		*name = e->names + e->syms[lo - 1].name;
	if (sym_start)
		*sym_start = e->syms[lo - 1].start;
	return 0;
}

bool elfsym_covers(const struct elfsym *e, uint64_t start, uint64_t end)
{
	size_t i = UPPER_BOUND(e->syms, e->nsyms, start, start);

	return i && end <= e->syms[i - 1].end;
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
