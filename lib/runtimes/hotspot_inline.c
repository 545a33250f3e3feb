/* A compiled frame's inlined methods from its nmethod's scopes: see hotspot_inline.h. */
#include "runtimes/hotspot_inline.h"
#include "runtimes/hotspot_scopes.h"
#include "base/vec.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Where an nmethod's sections lie: JDK 17's each from the one before it, inside the blob; from
 * JDK 25 the metadata in the mutable data, the PcDescs then the scopes in the immutable data. */
struct nmlayout {
	uint64_t end, code_begin, metadata, metadata_end, scopes, scopes_end, pcs, pcs_end;
};

/* The int32 at addr, as hotspot_mem_read. */
static int read_i32(const struct hotspot_mem *mem, pid_t pid, uint64_t addr, int32_t *v)
{
	return hotspot_mem_read(mem, pid, addr, v, sizeof(*v));
}

/* Whether the nmethod still holds the Method* and compile id the walker saw: 0, -ESTALE. */
static int nm_same(const struct hotspot_structs *hs, const struct hotspot_mem *mem, pid_t pid,
		   const struct hotspot_nmethod_ref *nm)
{
	uint64_t method;
	int32_t id;
	int err;

	if ((err = hotspot_mem_word(mem, pid, nm->nmethod + hs->nm_method, &method)) ||
	    (err = read_i32(mem, pid, nm->nmethod + hs->nm_compile_id, &id)))
		return err;
	return method == nm->method && id == nm->compile_id ? 0 : -ESTALE;
}

/* Reads the nmethod's section bounds into *l and checks their order: the code, then metadata,
 * scopes, PcDescs, all inside the blob, the scopes and PcDescs within HS_INLINE_SECTION_MAX. */
static int nm_layout(const struct hotspot_structs *hs, const struct hotspot_mem *mem, pid_t pid,
		     uint64_t nm, struct nmlayout *l)
{
	int32_t size, md, pcs, deps;
	int err;

	if ((err = read_i32(mem, pid, nm + hs->blob_size, &size)) ||
	    (err = hotspot_mem_word(mem, pid, nm + hs->blob_code_begin, &l->code_begin)) ||
	    (err = read_i32(mem, pid, nm + hs->nm_metadata_offset, &md)) ||
	    (err = read_i32(mem, pid, nm + hs->nm_scopes_pcs_offset, &pcs)) ||
	    (err = read_i32(mem, pid, nm + hs->nm_dependencies_offset, &deps)) ||
	    (err = hotspot_mem_word(mem, pid, nm + hs->nm_scopes_data_begin, &l->scopes)))
		return err;
	if (size <= 0 || md <= 0 || pcs <= 0 || deps <= 0)
		return -EINVAL;
	l->end = nm + (uint32_t)size, l->metadata = nm + (uint32_t)md;
	l->pcs = nm + (uint32_t)pcs, l->pcs_end = nm + (uint32_t)deps;
	l->metadata_end = l->scopes, l->scopes_end = l->pcs;
	if (l->code_begin <= nm || l->code_begin >= l->end || l->metadata > l->scopes ||
	    l->scopes > l->pcs || l->pcs > l->pcs_end || l->pcs_end > l->end ||
	    l->pcs - l->scopes > HS_INLINE_SECTION_MAX || l->pcs_end - l->pcs > HS_INLINE_SECTION_MAX)
		return -EINVAL;
	return 0;
}

/* JDK 25's layout into *l: the code at _code_offset, the metadata after the relocations in the
 * mutable data, the PcDescs, then the scopes (to the reference counter's int) in the immutable
 * data; each section within HS_INLINE_SECTION_MAX. */
static int nm_layout25(const struct hotspot_structs *hs, const struct hotspot_mem *mem, pid_t pid,
		       uint64_t nm, struct nmlayout *l)
{
	int32_t size, code, msize, reloc, isize, pcs, scopes;
	uint64_t mut, imm;
	int err;

	if ((err = read_i32(mem, pid, nm + hs->blob_size, &size)) ||
	    (err = read_i32(mem, pid, nm + hs->blob_code_offset, &code)) ||
	    (err = hotspot_mem_word(mem, pid, nm + hs->blob_mutable_data, &mut)) ||
	    (err = read_i32(mem, pid, nm + hs->blob_mutable_data_size, &msize)) ||
	    (err = read_i32(mem, pid, nm + hs->blob_relocation_size, &reloc)) ||
	    (err = hotspot_mem_word(mem, pid, nm + hs->nm_immutable_data, &imm)) ||
	    (err = read_i32(mem, pid, nm + hs->nm_immutable_size, &isize)) ||
	    (err = read_i32(mem, pid, nm + hs->nm_scopes_pcs_offset, &pcs)) ||
	    (err = read_i32(mem, pid, nm + hs->nm_scopes_data_offset, &scopes)))
		return err;
	if (!isize && !pcs && !scopes) /* a native method's wrapper: no PcDescs, no scopes */
		isize = 4;
	if (size <= 0 || code <= 0 || code >= size || reloc < 0 || msize < reloc || pcs < 0 ||
	    scopes < pcs || (int64_t)isize < (int64_t)scopes + 4 || msize > HS_INLINE_SECTION_MAX ||
	    isize > HS_INLINE_SECTION_MAX || !mut || !imm || mut > UINT64_MAX - (uint32_t)msize ||
	    imm > UINT64_MAX - (uint32_t)isize)
		return -EINVAL;
	l->end = nm + (uint32_t)size, l->code_begin = nm + (uint32_t)code;
	l->metadata = mut + (uint32_t)reloc, l->metadata_end = mut + (uint32_t)msize;
	l->pcs = imm + (uint32_t)pcs, l->pcs_end = l->scopes = imm + (uint32_t)scopes;
	l->scopes_end = imm + (uint32_t)isize - 4;
	return 0;
}

/* Copies [lo, hi) of the process into a new buffer *out (the caller frees it). */
static int read_section(const struct hotspot_mem *mem, pid_t pid, uint64_t lo, uint64_t hi,
			uint8_t **out)
{
	int err;

	if (hi < lo)
		return -EINVAL;
	*out = malloc(hi > lo ? hi - lo : 1);
	if (!*out)
		return -ENOMEM;
	if (hi > lo && (err = hotspot_mem_read(mem, pid, lo, *out, hi - lo))) {
		free(*out);
		*out = NULL;
		return err;
	}
	return 0;
}

/* The scope chain at pc into sc (max entries): the PcDesc's scope offset, then its decoding. */
static int scopes_at(const struct hotspot_structs *hs, const struct hotspot_mem *mem, pid_t pid,
		     const struct nmlayout *l, uint64_t pc, struct hotspot_scope *sc, size_t max)
{
	struct hotspot_pcdesc_layout pl = { hs->size_pcdesc, hs->pcdesc_pc_offset,
					    hs->pcdesc_scope_decode_offset };
	uint8_t *pcs = NULL, *data = NULL;
	uint32_t scope = 0;
	int err;

	if (pc < l->code_begin || pc >= l->end || !pl.size)
		return -EINVAL;
	if (!(err = read_section(mem, pid, l->pcs, l->pcs_end, &pcs)))
		err = hotspot_pcdesc_find(pcs, (l->pcs_end - l->pcs) / pl.size, &pl,
					  (int32_t)(pc - l->code_begin), &scope);
	if (!err && !scope)
		err = -ENOENT; /* serialized_null: a PcDesc without scopes */
	if (!err && !(err = read_section(mem, pid, l->scopes, l->scopes_end, &data)))
		err = hotspot_scopes_decode(data, l->scopes_end - l->scopes,
					    hotspot_stream_excluded(hs->jdk), scope, sc, max);
	free(pcs);
	free(data);
	return err;
}

static int nm_open(const struct hotspot_structs *hs, const struct hotspot_mem *mem, pid_t pid,
		   const struct hotspot_nmethod_ref *nm, struct nmlayout *l);

int hotspot_inline_expand(const struct hotspot_structs *hs, const struct hotspot_mem *mem,
			  pid_t pid, const struct hotspot_nmethod_ref *nm, uint64_t pc,
			  struct hotspot_inlined *out, size_t max)
{
	struct hotspot_scope sc[HS_INLINE_MAX];
	struct nmlayout l;
	int n, err;

	if ((err = nm_open(hs, mem, pid, nm, &l)))
		return err;
	if ((n = scopes_at(hs, mem, pid, &l, pc, sc, max < HS_INLINE_MAX ? max : HS_INLINE_MAX)) < 0)
		return n;
	for (int i = 0; i < n; i++) {
		uint64_t at = l.metadata + (uint64_t)(sc[i].method_index - 1) * 8;
		if (at + 8 > l.metadata_end)
			return -EINVAL;
		if ((err = hotspot_mem_word(mem, pid, at, &out[i].method)))
			return err;
		out[i].bci = sc[i].bci;
	}
	if (out[n - 1].method != nm->method)
		return -ESTALE;
	return nm_same(hs, mem, pid, nm) ? -ESTALE : n;
}

/* The readable rows and the layout: what both entry points check first. */
static int nm_open(const struct hotspot_structs *hs, const struct hotspot_mem *mem, pid_t pid,
		   const struct hotspot_nmethod_ref *nm, struct nmlayout *l)
{
	int err;

	bool v17 = hs->blob_code_begin && hs->nm_scopes_data_begin && hs->nm_metadata_offset &&
		   hs->nm_dependencies_offset && hs->nm_scopes_pcs_offset;
	bool v25 = hs->blob_code_offset && hs->blob_mutable_data && hs->blob_mutable_data_size &&
		   hs->blob_relocation_size && hs->nm_immutable_data && hs->nm_immutable_size &&
		   hs->nm_scopes_pcs_offset && hs->nm_scopes_data_offset;

	if ((!v17 && !v25) || hs->size_pcdesc < 8 || hs->pcdesc_pc_offset > hs->size_pcdesc - 4 ||
	    hs->pcdesc_scope_decode_offset > hs->size_pcdesc - 4)
		return -EOPNOTSUPP;
	if ((err = nm_same(hs, mem, pid, nm)))
		return err;
	return v17 ? nm_layout(hs, mem, pid, nm->nmethod, l)
		   : nm_layout25(hs, mem, pid, nm->nmethod, l);
}

int hotspot_inline_pcs(const struct hotspot_structs *hs, const struct hotspot_mem *mem, pid_t pid,
		       const struct hotspot_nmethod_ref *nm, uint32_t *out, size_t max)
{
	struct nmlayout l;
	uint8_t *pcs;
	size_t n = 0;
	int err;

	if ((err = nm_open(hs, mem, pid, nm, &l)) ||
	    (err = read_section(mem, pid, l.pcs, l.pcs_end, &pcs)))
		return err;
	for (size_t i = 0; i < (l.pcs_end - l.pcs) / hs->size_pcdesc && n < max; i++) {
		int32_t pc;
		memcpy(&pc, pcs + i * hs->size_pcdesc + hs->pcdesc_pc_offset, 4);
		if (pc < 0 || l.code_begin + (uint32_t)pc >= l.end)
			continue; /* the sentinels before and after the code */
		uint32_t off = (uint32_t)(l.code_begin - nm->nmethod) + (uint32_t)pc;
		if (n && off < out[n - 1]) {
			free(pcs);
			return -EINVAL; /* not sorted: no PcDesc is the next one */
		}
		out[n++] = off;
	}
	free(pcs);
	return (int)n;
}

int hotspot_inline_near(const uint32_t *pcs, size_t n, uint32_t pcoff)
{
	size_t i = PARTITION_POINT(n, k, pcs[k] < pcoff);

	return i < n ? (int)i : -ENOENT;
}
