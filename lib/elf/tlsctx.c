/* otel_thread_ctx_v1's place in a file and in a thread: the symbol from .dynsym, the PT_TLS
 * segment, the TLS model from the relocations that name the symbol, and the address computation
 * of x86-64's TLS variant II over glibc's TCB and DTV. */
#include "elf/tlsctx.h"

#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <string.h>

#include "elf/elffile.h"

/* The symbol's index in .dynsym and the section's index, once found. */
struct found {
	size_t dynsym_ndx;
	size_t sym_ndx;
	GElf_Sym sym;
};

/* Looks for a defined otel_thread_ctx_v1 in .dynsym: 0, or -ENOENT. */
static int find_symbol(Elf *elf, struct found *f)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elffile_next(elf, NULL, NULL, SHT_DYNSYM, &sh);
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;

	if (!d || sh.sh_entsize != sizeof(Elf64_Sym))
		return -ENOENT;
	for (size_t i = 1; i < d->d_size / sizeof(Elf64_Sym); i++) {
		GElf_Sym s;
		const char *name;

		if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF)
			continue;
		name = elf_strptr(elf, sh.sh_link, s.st_name);
		if (name && !strcmp(name, TLSCTX_SYMBOL)) {
			f->dynsym_ndx = elf_ndxscn(scn);
			f->sym_ndx = i;
			f->sym = s;
			return 0;
		}
	}
	return -ENOENT;
}

/* DF_1_PIE in the dynamic section: a PIE, which is an executable though ET_DYN. */
static bool has_pie_flag(Elf *elf)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elffile_next(elf, NULL, NULL, SHT_DYNAMIC, &sh);
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	GElf_Dyn dyn;

	for (size_t i = 0; d && sh.sh_entsize == sizeof(Elf64_Dyn) &&
			   i < d->d_size / sizeof(Elf64_Dyn) && gelf_getdyn(d, (int)i, &dyn);
	     i++) {
		if (dyn.d_tag == DT_NULL)
			break;
		if (dyn.d_tag == DT_FLAGS_1 && (dyn.d_un.d_val & DF_1_PIE))
			return true;
	}
	return false;
}

/* Reads PT_TLS (and PT_INTERP, which marks an executable). 0, or -EPROTO without a sane PT_TLS. */
static int read_segments(Elf *elf, struct tlsctx *t)
{
	size_t n;
	GElf_Phdr ph;
	bool tls = false;

	if (elf_getphdrnum(elf, &n))
		return -EPROTO;
	for (size_t i = 0; i < n && gelf_getphdr(elf, (int)i, &ph); i++) {
		if (ph.p_type == PT_INTERP)
			t->executable = true;
		if (ph.p_type != PT_TLS || tls)
			continue;
		tls = true;
		t->tls_vaddr = ph.p_vaddr;
		t->tls_memsz = ph.p_memsz;
		t->tls_align = ph.p_align ? ph.p_align : 1;
	}
	if (!tls || (t->tls_align & (t->tls_align - 1)) || t->tls_align > (1u << 20) ||
	    t->tls_memsz > (1ull << 32))
		return -EPROTO;
	return 0;
}

/* The model of the first relocation of each kind that names the symbol, the cheapest to read
 * first: initial-exec (one read per process), TLSDESC, general-dynamic. 0 when none does. */
static enum tlsctx_model scan_relocs(Elf *elf, const struct found *f, uint64_t *got)
{
	uint64_t at[3] = { 0 };
	static const uint32_t types[3] = { R_X86_64_TPOFF64, R_X86_64_TLSDESC, R_X86_64_DTPMOD64 };
	GElf_Shdr sh;

	for (Elf_Scn *scn = NULL; (scn = elffile_next(elf, scn, NULL, SHT_RELA, &sh));) {
		Elf_Data *d = sh.sh_link == f->dynsym_ndx ? elf_getdata(scn, NULL) : NULL;
		GElf_Rela r;

		for (size_t i = 0; d && i < d->d_size / sizeof(Elf64_Rela) &&
				   gelf_getrela(d, (int)i, &r); i++) {
			if (GELF_R_SYM(r.r_info) != f->sym_ndx)
				continue;
			for (int k = 0; k < 3; k++)
				if (GELF_R_TYPE(r.r_info) == types[k] && !at[k] && r.r_offset)
					at[k] = r.r_offset;
		}
	}
	for (int k = 0; k < 3; k++)
		if (at[k]) {
			*got = at[k];
			return (enum tlsctx_model)(TLSCTX_INITIAL_EXEC + k);
		}
	return 0;
}

/* The file offset of vaddr in its PT_LOAD (its file bytes); 0 when none holds it. */
static uint64_t file_offset(Elf *elf, uint64_t vaddr)
{
	size_t n = 0;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
		    vaddr - ph.p_vaddr < ph.p_filesz)
			return ph.p_offset + (vaddr - ph.p_vaddr);
	return 0;
}

/* The executable's block ends at fs, its start aligned as glibc's _dl_determine_tlsoffset places
 * the first module: offset = roundup(memsz - firstbyte, align) + firstbyte. */
static int64_t local_exec_offset(const struct tlsctx *t)
{
	uint64_t a = t->tls_align;
	uint64_t firstbyte = (0 - (t->tls_vaddr & (a - 1))) & (a - 1);
	uint64_t rest = t->tls_memsz > firstbyte ? t->tls_memsz - firstbyte : 0;
	uint64_t off = ((rest + a - 1) & ~(a - 1)) + firstbyte;

	return (int64_t)t->sym_value - (int64_t)off;
}

int tlsctx_resolve(struct tlsctx *t, Elf *elf)
{
	GElf_Ehdr eh;
	struct found f;
	int err;

	memset(t, 0, sizeof(*t));
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_machine != EM_X86_64)
		return -ENOEXEC;
	if ((err = find_symbol(elf, &f)))
		return err;
	if ((err = read_segments(elf, t)))
		goto fail;
	err = -EPROTO;
	t->executable |= eh.e_type == ET_EXEC || has_pie_flag(elf);
	t->sym_value = f.sym.st_value;
	t->sym_size = f.sym.st_size;
	if (GELF_ST_TYPE(f.sym.st_info) != STT_TLS || t->sym_size != 8 ||
	    t->sym_value > t->tls_memsz || t->tls_memsz - t->sym_value < 8)
		goto fail;
	if ((t->model = scan_relocs(elf, &f, &t->got))) {
		t->got_offset = file_offset(elf, t->got);
		return 0;
	}
	if (!t->executable)
		goto fail;
	t->model = TLSCTX_LOCAL_EXEC;
	t->tp_offset = local_exec_offset(t);
	return 0;
fail:
	memset(t, 0, sizeof(*t));
	return err;
}

/* tlsctx_resolve as elffile_with_* runs it. */
static int resolve_elf(void *t, Elf *elf)
{
	return tlsctx_resolve(t, elf);
}

int tlsctx_resolve_fd(struct tlsctx *t, int fd)
{
	return elffile_with_fd(fd, ELFFILE_PREAD, resolve_elf, t);
}

int tlsctx_resolve_image(struct tlsctx *t, const void *image, size_t len)
{
	int err = elffile_with_image(image, len, resolve_elf, t);

	if (err == -ENOMEM)
		memset(t, 0, sizeof(*t));
	return err;
}

/* Reads one 64-bit word of process memory. */
static int read_u64(const struct tlsctx_mem *mem, uint64_t addr, uint64_t *v)
{
	return mem->read(mem->ctx, addr, v, sizeof(*v));
}

/* The DTV route: the thread's block for module (dtv[module] of the TCB at fs), plus offset. */
static int dtv_slot(uint64_t fs, uint64_t module, uint64_t offset, const struct tlsctx_mem *mem,
		    uint64_t *slot)
{
	uint64_t dtv, block;
	int err;

	if (module == 0 || module > TLSCTX_MODULE_MAX)
		return -EPROTO;
	if ((err = read_u64(mem, fs + TLSCTX_TCB_DTV, &dtv)))
		return err;
	if (!dtv)
		return -EPROTO;
	if ((err = read_u64(mem, dtv + module * TLSCTX_DTV_ENTRY, &block)))
		return err;
	if (block == 0 || block == UINT64_MAX)
		return -EAGAIN;
	*slot = block + offset;
	return 0;
}

/* TLSDESC's pair {resolver, arg} at pair: arg the fs-relative offset (static TLS, negative), or a
 * pointer to glibc's tlsdesc_dynamic_arg, which begins with {module id, offset}. */
static int tlsdesc_where(uint64_t pair, const struct tlsctx_mem *mem, struct tlsctx_where *w)
{
	uint64_t arg, index[2];
	int err;

	if ((err = read_u64(mem, pair + 8, &arg)))
		return err;
	if ((int64_t)arg < 0) {
		*w = (struct tlsctx_where){ .offset = (int64_t)arg };
		return 0;
	}
	if ((err = mem->read(mem->ctx, arg, index, sizeof(index))))
		return err;
	*w = (struct tlsctx_where){ .dtv = true, .module = index[0], .offset = (int64_t)index[1] };
	return 0;
}

/* The TLSDESC slot of the thread at fs: where its pair says (tlsdesc_where), static or by the DTV. */
static int tlsdesc_slot(uint64_t pair, uint64_t fs, const struct tlsctx_mem *mem, uint64_t *slot)
{
	struct tlsctx_where w;
	int err;

	if ((err = tlsdesc_where(pair, mem, &w)))
		return err;
	if (w.dtv)
		return dtv_slot(fs, w.module, (uint64_t)w.offset, mem, slot);
	*slot = fs + (uint64_t)w.offset;
	return 0;
}

int tlsctx_locate(const struct tlsctx *t, uint64_t bias, const struct tlsctx_mem *mem,
		  struct tlsctx_where *w)
{
	uint64_t v[2];
	int err = 0;

	switch (t->model) {
	case TLSCTX_LOCAL_EXEC:
		*w = (struct tlsctx_where){ .offset = t->tp_offset };
		break;
	case TLSCTX_INITIAL_EXEC:
		if (!(err = read_u64(mem, bias + t->got, v)))
			*w = (struct tlsctx_where){ .offset = (int64_t)v[0] };
		break;
	case TLSCTX_TLSDESC:
		err = tlsdesc_where(bias + t->got, mem, w);
		break;
	case TLSCTX_GENERAL_DYNAMIC:
		if (!(err = mem->read(mem->ctx, bias + t->got, v, sizeof(v))))
			*w = (struct tlsctx_where){ .dtv = true, .module = v[0], .offset = (int64_t)v[1] };
		break;
	default:
		return -EINVAL;
	}
	if (!err && w->dtv && (w->module == 0 || w->module > TLSCTX_MODULE_MAX))
		return -EPROTO;
	return err;
}

int tlsctx_slot(const struct tlsctx *t, uint64_t bias, uint64_t fs, const struct tlsctx_mem *mem,
		uint64_t *slot)
{
	uint64_t v[2];
	int err;

	switch (t->model) {
	case TLSCTX_LOCAL_EXEC:
		*slot = fs + (uint64_t)t->tp_offset;
		return 0;
	case TLSCTX_INITIAL_EXEC:
		if ((err = read_u64(mem, bias + t->got, v)))
			return err;
		*slot = fs + v[0];
		return 0;
	case TLSCTX_TLSDESC:
		return tlsdesc_slot(bias + t->got, fs, mem, slot);
	case TLSCTX_GENERAL_DYNAMIC:
		if ((err = mem->read(mem->ctx, bias + t->got, v, sizeof(v))))
			return err;
		return dtv_slot(fs, v[0], v[1], mem, slot);
	}
	return -EINVAL;
}

const char *tlsctx_model_name(enum tlsctx_model m)
{
	switch (m) {
	case TLSCTX_LOCAL_EXEC: return "local-exec";
	case TLSCTX_INITIAL_EXEC: return "initial-exec";
	case TLSCTX_TLSDESC: return "tlsdesc";
	case TLSCTX_GENERAL_DYNAMIC: return "general-dynamic";
	}
	return "?";
}
