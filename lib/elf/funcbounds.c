/* FDE ranges of .eh_frame (see funcbounds.h): every number (fixed-size, LEB128, DW_EH_PE
 * pointer) is read by lib/elf/cfi.c's one reader, cfi_pointer; CIEs are parsed only as far as
 * their FDE pointer encoding. */
#include "elf/funcbounds.h"

#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "elf/cfi.h"
#include "elf/elffile.h"
#include "base/vec.h"

/* One .eh_frame entry: its id field (CIE id 0, or an FDE's CIE pointer), and its bytes past
 * that field, [body, end). */
struct entry {
	const uint8_t *id_at, *body, *end;
	uint64_t id;
};

/* A CIE by section offset: its FDEs' pointer encoding, or ok false when it does not parse. */
struct cie {
	uint64_t off;
	uint8_t enc;
	bool ok;
};

struct builder {
	const struct funcbounds_input *in;
	struct funcbounds *fb;
	struct cie *cies;
	size_t ncies, cap_cies;
};

/* An unsigned LEB128 number from [*p, end) (cfi_pointer's reader): 0 or -EINVAL. */
static int uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	return cfi_pointer(p, end, DW_EH_PE_uleb128, 0, 0, false, v);
}

/* The address a byte of .eh_frame loads at. */
static uint64_t eh_addr(const struct funcbounds_input *in, const uint8_t *p)
{
	return in->eh_frame_addr + (uint64_t)(p - in->eh_frame);
}

/* Reads the entry at section offset off: 0, 1 at a terminator (length 0) or the section's end,
 * -EINVAL when it does not fit. */
static int entry_at(const struct funcbounds_input *in, uint64_t off, struct entry *e)
{
	const uint8_t *end = in->eh_frame + in->eh_frame_len, *p;
	uint64_t len;
	unsigned idsz = 4;

	if (off >= in->eh_frame_len)
		return 1;
	p = in->eh_frame + off;
	if (cfi_pointer(&p, end, DW_EH_PE_udata4, 0, 0, false, &len))
		return -EINVAL;
	if (len == 0)
		return 1;
	if (len == 0xffffffffu) {
		if (cfi_pointer(&p, end, DW_EH_PE_udata8, 0, 0, false, &len))
			return -EINVAL;
		idsz = 8;
	}
	if (len > (uint64_t)(end - p) || len < idsz)
		return -EINVAL;
	e->id_at = p;
	e->end = p + len;
	if (cfi_pointer(&p, e->end, idsz == 8 ? DW_EH_PE_udata8 : DW_EH_PE_udata4, 0, 0, false,
			&e->id))
		return -EINVAL;
	e->body = p;
	return 0;
}

/* Skips a CIE's version-dependent header up to its augmentation data: the augmentation string
 * (*aug), the alignment factors and the return address register. 0 or -EINVAL. */
static int cie_header(const uint8_t **pp, const uint8_t *end, const char **aug)
{
	const uint8_t *p = *pp;
	uint64_t u;

	if (p >= end || (*p != 1 && *p != 3 && *p != 4))
		return -EINVAL;
	uint8_t version = *p++;
	*aug = (const char *)p;
	const uint8_t *nul = memchr(p, 0, (size_t)(end - p));
	if (!nul)
		return -EINVAL;
	p = nul + 1;
	if (version == 4) { /* address and segment selector sizes */
		if (end - p < 2)
			return -EINVAL;
		p += 2;
	}
	if (uleb(&p, end, &u) || cfi_pointer(&p, end, DW_EH_PE_sleb128, 0, 0, false, &u))
		return -EINVAL; /* code and data alignment factors */
	if (version == 1 ? (p >= end ? -EINVAL : (p++, 0)) : uleb(&p, end, &u))
		return -EINVAL;
	*pp = p;
	return 0;
}

/* The FDE pointer encoding of the CIE entry e: its 'R' augmentation, else absolute. 0 or
 * -EINVAL (a version, augmentation or length this cannot read). */
static int cie_encoding(const struct funcbounds_input *in, const struct entry *e, uint8_t *enc)
{
	const uint8_t *p = e->body, *aend;
	const char *aug;
	uint64_t alen, v;

	*enc = DW_EH_PE_absptr;
	if (cie_header(&p, e->end, &aug))
		return -EINVAL;
	if (!aug[0])
		return 0;
	if (aug[0] != 'z' || uleb(&p, e->end, &alen) || alen > (uint64_t)(e->end - p))
		return -EINVAL;
	aend = p + alen;
	for (const char *a = aug + 1; *a; a++) {
		if (*a == 'R' || *a == 'L') {
			if (p >= aend)
				return -EINVAL;
			if (*a == 'R')
				*enc = *p;
			p++;
		} else if (*a == 'P') {
			uint8_t pe = p < aend ? *p++ : DW_EH_PE_omit;
			if (pe == DW_EH_PE_omit || cfi_pointer(&p, aend, pe & ~DW_EH_PE_indirect,
							       eh_addr(in, p), 0, in->elf32, &v))
				return -EINVAL;
		} else if (*a != 'S' && *a != 'B') {
			break; /* an unknown letter: 'z' says how long its data is; 'R' came before */
		}
	}
	return 0;
}

/* The CIE at section offset off, parsed on first use; NULL on -ENOMEM. */
static const struct cie *cie_at(struct builder *b, uint64_t off)
{
	struct entry e;

	for (size_t i = b->ncies; i-- > 0;)
		if (b->cies[i].off == off)
			return &b->cies[i];
	if (VEC_GROW(b->cies, b->cap_cies, b->ncies + 1))
		return NULL;
	struct cie *c = &b->cies[b->ncies++];
	*c = (struct cie){ .off = off };
	c->ok = !entry_at(b->in, off, &e) && e.id == 0 && !cie_encoding(b->in, &e, &c->enc);
	return c;
}

/* The code range of the FDE entry e: 0, 1 when it has none (a bad CIE, a range that does not
 * parse, is empty or wraps, a start of 0: a function the linker dropped), -ENOMEM. */
static int fde_range(struct builder *b, const struct entry *e, struct funcbounds_range *r)
{
	const struct funcbounds_input *in = b->in;
	uint64_t at = (uint64_t)(e->id_at - in->eh_frame), start, len;
	const uint8_t *p = e->body;

	if (e->id > at)
		return 1;
	const struct cie *c = cie_at(b, at - e->id);
	if (!c)
		return -ENOMEM;
	if (!c->ok || cfi_pointer(&p, e->end, c->enc, eh_addr(in, p), 0, in->elf32, &start) ||
	    cfi_pointer(&p, e->end, c->enc & 0x0f, 0, 0, in->elf32, &len))
		return 1;
	if (in->elf32) {
		start &= 0xffffffffu;
		len &= 0xffffffffu;
	}
	if (!start || !len || start + len < start)
		return 1;
	*r = (struct funcbounds_range){ start, start + len };
	return 0;
}

/* Appends a range. */
static int push(struct funcbounds *fb, const struct funcbounds_range *r)
{
	if (VEC_GROW(fb->r, fb->cap, fb->n + 1))
		return -ENOMEM;
	fb->r[fb->n++] = *r;
	return 0;
}

/* Walks every entry of .eh_frame, keeping the FDEs' ranges; stops at a terminator or an entry
 * that does not fit. 0 or -ENOMEM. */
static int walk(struct builder *b)
{
	struct entry e;
	struct funcbounds_range r;
	uint64_t off = 0;

	while (!entry_at(b->in, off, &e)) {
		off = (uint64_t)(e.end - b->in->eh_frame);
		if (e.id == 0)
			continue; /* a CIE: parsed when an FDE names it */
		int rc = fde_range(b, &e, &r);
		if (rc < 0 || (!rc && push(b->fb, &r)))
			return -ENOMEM;
	}
	return 0;
}

/* Size of a fixed-size DW_EH_PE format, 0 for the variable ones (not allowed in the table). */
static size_t fixed_size(uint8_t fmt, bool elf32)
{
	switch (fmt & 0x0f) {
	case DW_EH_PE_absptr: return elf32 ? 4 : 8;
	case DW_EH_PE_udata2: case DW_EH_PE_sdata2: return 2;
	case DW_EH_PE_udata4: case DW_EH_PE_sdata4: return 4;
	case DW_EH_PE_udata8: case DW_EH_PE_sdata8: return 8;
	}
	return 0;
}

/* The address a byte of .eh_frame_hdr loads at. */
static uint64_t hdr_addr(const struct funcbounds_input *in, const uint8_t *p)
{
	return in->hdr_addr + (uint64_t)(p - in->hdr);
}

/* One entry of .eh_frame_hdr's table: the FDE it points at, which must start where the table
 * says. 0, 1 when they disagree or it does not parse, -ENOMEM. */
static int hdr_entry(struct builder *b, const uint8_t **p, const uint8_t *end, uint8_t enc)
{
	const struct funcbounds_input *in = b->in;
	uint64_t loc, fde;
	struct entry e;
	struct funcbounds_range r;

	if (cfi_pointer(p, end, enc, hdr_addr(in, *p), in->hdr_addr, in->elf32, &loc) ||
	    cfi_pointer(p, end, enc, hdr_addr(in, *p), in->hdr_addr, in->elf32, &fde))
		return 1;
	if (fde < in->eh_frame_addr || entry_at(in, fde - in->eh_frame_addr, &e) || e.id == 0)
		return 1;
	int rc = fde_range(b, &e, &r);
	if (rc)
		return rc;
	if (r.start != (in->elf32 ? loc & 0xffffffffu : loc))
		return 1;
	return push(b->fb, &r);
}

/* Reads the ranges through .eh_frame_hdr's binary search table: 0, 1 when there is no valid
 * table (nothing kept), -ENOMEM. */
static int from_hdr(struct builder *b)
{
	const struct funcbounds_input *in = b->in;
	const uint8_t *h = in->hdr, *end, *p;
	uint64_t eh, count;

	if (!h || in->hdr_len < 4 || h[0] != 1 || h[1] == DW_EH_PE_omit || h[2] == DW_EH_PE_omit)
		return 1;
	end = h + in->hdr_len;
	p = h + 4;
	size_t esz = fixed_size(h[3], in->elf32);
	if (h[3] == DW_EH_PE_omit || !esz ||
	    cfi_pointer(&p, end, h[1], hdr_addr(in, p), in->hdr_addr, in->elf32, &eh) ||
	    eh != in->eh_frame_addr ||
	    cfi_pointer(&p, end, h[2], hdr_addr(in, p), in->hdr_addr, in->elf32, &count) ||
	    count > (uint64_t)(end - p) / (2 * esz))
		return 1;
	for (uint64_t i = 0; i < count; i++) {
		int rc = hdr_entry(b, &p, end, h[3]);
		if (rc) {
			b->fb->n = 0;
			return rc;
		}
	}
	return 0;
}

/* Orders ranges by start, then by end. */
static int range_cmp(const void *pa, const void *pb)
{
	const struct funcbounds_range *a = pa, *b = pb;

	return CMP3(a->start, b->start) ?: CMP3(a->end, b->end);
}

/* Sorts the ranges (unless they are: the table's are), keeps one per start, the largest, and
 * ends each where the next starts (overlapping FDEs, never made by a linker: the later wins). */
static void normalize(struct funcbounds *fb)
{
	size_t k = 0;

	for (size_t i = 1; i < fb->n; i++) {
		if (range_cmp(&fb->r[i - 1], &fb->r[i]) > 0) {
			qsort(fb->r, fb->n, sizeof(*fb->r), range_cmp);
			break;
		}
	}
	for (size_t i = 0; i < fb->n; i++) {
		if (k && fb->r[k - 1].start == fb->r[i].start)
			fb->r[k - 1].end = fb->r[i].end; /* sorted: the later end is the larger */
		else
			fb->r[k++] = fb->r[i];
	}
	for (size_t i = 0; i + 1 < k; i++)
		if (fb->r[i].end > fb->r[i + 1].start)
			fb->r[i].end = fb->r[i + 1].start;
	fb->n = k;
}

int funcbounds_parse(struct funcbounds *fb, const struct funcbounds_input *in)
{
	struct builder b = { .in = in, .fb = fb };
	int err = 0;

	memset(fb, 0, sizeof(*fb));
	if (in->eh_frame && in->eh_frame_len) {
		err = from_hdr(&b);
		if (err == 1)
			err = walk(&b);
	}
	free(b.cies);
	if (err) {
		funcbounds_release(fb);
		return err;
	}
	normalize(fb);
	return 0;
}

/* The contents of the section named name (not NOBITS), or NULL. */
static Elf_Data *section_data(Elf *elf, size_t shstrndx, const char *name, uint64_t *addr)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(n = elf_strptr(elf, shstrndx, sh.sh_name)) || strcmp(n, name))
			continue;
		Elf_Data *d = elf_rawdata(scn, NULL);
		*addr = sh.sh_addr;
		return d && d->d_buf && d->d_size ? d : NULL;
	}
	return NULL;
}

/* The file's bytes at ELF address addr up to the end of the PT_LOAD segment that holds them
 * (NULL: none); libelf keeps them until elf_end. */
static Elf_Data *segment_rest(Elf *elf, size_t nph, uint64_t addr)
{
	GElf_Phdr ph;

	for (size_t i = 0; i < nph; i++)
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD && addr >= ph.p_vaddr &&
		    addr - ph.p_vaddr < ph.p_filesz)
			return elf_getdata_rawchunk(elf, ph.p_offset + (addr - ph.p_vaddr),
						    ph.p_filesz - (addr - ph.p_vaddr), ELF_T_BYTE);
	return NULL;
}

/* A file without section headers: .eh_frame_hdr from PT_GNU_EH_FRAME, and .eh_frame from the
 * address it gives up to its segment's end (the header's table says where each FDE is). */
static int from_segments(struct funcbounds *fb, Elf *elf, struct funcbounds_input *in)
{
	GElf_Phdr ph;
	size_t nph;
	Elf_Data *hdr = NULL, *eh;

	if (elf_getphdrnum(elf, &nph))
		return 0;
	for (size_t i = 0; i < nph && !hdr; i++)
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_GNU_EH_FRAME && ph.p_filesz)
			hdr = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz, ELF_T_BYTE);
	if (!hdr || hdr->d_size < 4)
		return 0;
	const uint8_t *h = hdr->d_buf, *p = h + 4;
	in->hdr = h;
	in->hdr_len = hdr->d_size;
	in->hdr_addr = ph.p_vaddr;
	if (h[0] != 1 || cfi_pointer(&p, h + hdr->d_size, h[1], ph.p_vaddr + 4, ph.p_vaddr,
				     in->elf32, &in->eh_frame_addr) ||
	    !(eh = segment_rest(elf, nph, in->eh_frame_addr)))
		return 0;
	in->eh_frame = eh->d_buf;
	in->eh_frame_len = eh->d_size;
	return funcbounds_parse(fb, in);
}

int funcbounds_read_elf(struct funcbounds *fb, struct Elf *elf)
{
	struct funcbounds_input in = { 0 };
	size_t shstrndx;
	Elf_Data *eh, *hdr;

	memset(fb, 0, sizeof(*fb));
	if (!elf || elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) == ELFCLASSNONE)
		return -ENOEXEC;
	in.elf32 = gelf_getclass(elf) == ELFCLASS32;
	if (elf_getshdrstrndx(elf, &shstrndx) ||
	    !(eh = section_data(elf, shstrndx, ".eh_frame", &in.eh_frame_addr)))
		return from_segments(fb, elf, &in);
	hdr = section_data(elf, shstrndx, ".eh_frame_hdr", &in.hdr_addr);
	in.eh_frame = eh->d_buf;
	in.eh_frame_len = eh->d_size;
	in.hdr = hdr ? hdr->d_buf : NULL;
	in.hdr_len = hdr ? hdr->d_size : 0;
	return funcbounds_parse(fb, &in);
}

/* elffile_with_fd's reader: the bounds of the file it opened (ctx: the struct funcbounds). */
static int read_elf(void *ctx, Elf *elf)
{
	return funcbounds_read_elf(ctx, elf);
}

int funcbounds_init_fd(struct funcbounds *fb, int fd)
{
	memset(fb, 0, sizeof(*fb));
	/* read with pread, so a file truncated meanwhile gives errors, not SIGBUS */
	return elffile_with_fd(fd, ELFFILE_PREAD, read_elf, fb);
}

void funcbounds_release(struct funcbounds *fb)
{
	free(fb->r);
	memset(fb, 0, sizeof(*fb));
}

ptrdiff_t funcbounds_find(const struct funcbounds *fb, uint64_t addr)
{
	size_t i = UPPER_BOUND(fb->r, fb->n, start, addr);

	return i && addr < fb->r[i - 1].end ? (ptrdiff_t)(i - 1) : -1;
}

void funcbounds_filter(struct funcbounds *fb, bool (*keep)(void *ctx, const struct funcbounds_range *r),
		       void *ctx)
{
	size_t k = 0;

	for (size_t i = 0; i < fb->n; i++)
		if (keep(ctx, &fb->r[i]))
			fb->r[k++] = fb->r[i];
	fb->n = k;
	if (!k) {
		funcbounds_release(fb);
		return;
	}
	struct funcbounds_range *r = realloc(fb->r, k * sizeof(*r));
	if (r) {
		fb->r = r;
		fb->cap = k;
	}
}
