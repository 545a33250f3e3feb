/* Hand-written DWARF decoding for symbolization: unit headers, abbreviations (with per-form read
 * and skip plans), the few attributes a symbolizer needs, range lists, line programs, and the
 * flattening of nested function and inline ranges into disjoint segments, merged with the line
 * rows into one sorted array per unit that a bucket index searches. Every read is
 * bounds-checked: damaged DWARF gives missing answers, never a crash or a loop. */
#include "elf/dwarfsym.h"

#include <dwarf.h>
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

#include "elf/debug_cache.h"
#include "elf/elffile.h"
#include "base/hash.h"
#include "base/hashtab.h"
#include "base/leb128.h"
#include "base/vec.h"
#include "proc/procmap.h"

enum { S_INFO, S_ABBREV, S_LINE, S_STR, S_LINE_STR, S_RANGES, S_RNGLISTS, S_ADDR, S_STR_OFFSETS,
       S_NR };

static const char *const sect_names[S_NR] = {
	"info", "abbrev", "line", "str", "line_str", "ranges", "rnglists", "addr", "str_offsets",
};

struct sect {
	const uint8_t *p;
	size_t n;
};

/* A bounds-checked cursor: a read past the end gives 0 and sets bad. */
struct cur {
	const uint8_t *p, *end;
	bool bad;
};

/* What the scope walk does with a DIE, by tag. */
enum { K_SKIP, K_FUNC, K_INLINE, K_BLOCK, K_SCOPE };

struct attrspec {
	uint16_t at, form;
	int64_t implicit;   /* DW_FORM_implicit_const's value */
};

/* One step of a plan to read or skip a DIE's values: skip bytes of fixed-size values, then read
 * (or only skip, when spec is UINT32_MAX) one value of form. */
struct step {
	uint32_t skip;
	uint32_t spec;      /* index into specs of an attribute read, or UINT32_MAX */
	uint16_t form;
};

struct abbrev {
	uint64_t code;
	uint32_t first, n;  /* specs[first .. first + n) */
	uint16_t tag;
	uint8_t children, kind;
	int32_t size;       /* size of all attribute values when every form has a fixed size, else -1 */
	int32_t sib_off;    /* offset of DW_AT_sibling's value when the values before it are fixed */
	uint16_t sib_form;
	uint32_t read, nread, read_tail; /* steps[read ..] reading what die_read wants, then a skip */
	bool has_read;                   /* that plan was made (function DIEs); else no plan */
	uint32_t skip, nskip, skip_tail; /* steps[skip ..] skipping everything */
};

struct abbrevs {
	struct abbrev *tab; /* in code order; tab[code - 1] when dense */
	size_t n;
	bool dense;
	struct attrspec *specs;
	size_t nspecs;
	struct step *steps;
	size_t nsteps, cap_steps;
};

/* A line-table row; file ROW_END marks the address where a sequence ends. The address and the
 * answer share a cache line: a lookup's last step and its result cost one miss. */
struct row {
	uint64_t addr;
	uint32_t line, file;
};
#define ROW_END UINT32_MAX

struct fileent {
	const char *name, *path; /* path: joined with its directory on first use */
	uint64_t dir;
};

/* A bucket index over a sorted array of addresses: the address range is cut into buckets of
 * 2^shift bytes, and first[b] is the index of the first key at or above bucket b's start. A
 * lookup reads one entry and searches the few keys of one bucket, instead of a binary search
 * over the whole array (a cache miss per step). At most one bucket per two keys. */
struct bindex {
	uint64_t base;
	unsigned shift;
	uint32_t *first;
	size_t nb;
};

struct lines {
	struct row *rows;          /* sorted by address; merged into points, then freed */
	size_t n;
	struct fileent *files;
	size_t nfiles;
	const char **dirs;
	size_t ndirs;
};

/* A function or inlined call: what a segment of addresses resolves to. */
struct node {
	uint64_t origin;           /* its abstract_origin or specification DIE offset; 0 = none */
	uint32_t parent;           /* index + 1 of the node it is inlined into; 0 for functions */
	uint32_t call_file, call_line;
	const char *name;          /* its own DW_AT_name or linkage name; then the resolved name */
	bool named;                /* name resolved (possibly to NULL) */
};

/* From start up to the next segment's start, addresses belong to node (index + 1; 0 = none). */
struct seg {
	uint64_t start;
	uint32_t node;
};

struct scopes {
	struct node *nodes;
	size_t nnodes;
};

/* What a unit's addresses resolve to, from the line table and the scopes merged into one sorted
 * array: from addr up to the next point, the line and file in effect (file ROW_END: none) and
 * the innermost node (index + 1; 0: none). One search and one cache line per lookup. */
struct point {
	uint64_t addr;
	uint32_t line, file, node;
};

struct unit {
	uint64_t off, die, end;    /* header, first DIE and end offsets in .debug_info */
	uint16_t version, tag;
	uint8_t addr_size, offset_size;
	uint64_t abbrev_off;
	struct abbrevs ab;
	bool ab_read, has_stmt;
	uint64_t base, stmt_list, addr_base, str_offsets_base, rnglists_base;
	const char *comp_dir;
	int lines_state, scopes_state; /* 0 not read, 1 read, -errno */
	struct lines lines;        /* its rows are merged into points, then freed */
	struct scopes scopes;      /* its segments too */
	struct point *points;
	size_t npoints;
	struct bindex pbx;
	bool merged;
	uint32_t used;             /* the trim epoch of its last lookup (dwarfsym_trim) */
};

/* An address range of a compile unit. */
struct urange {
	uint64_t lo, hi;
	uint32_t unit;
};

/* A decoded attribute value. */
enum { V_NONE, V_U, V_ADDR, V_ADDRX, V_STR, V_STRX, V_REF, V_RNGLISTX };
struct val {
	uint64_t u;
	const char *s;
	int kind;
};

/* The attributes of one DIE that symbolization uses. */
struct die {
	uint16_t tag;
	bool children;
	struct val low, high, ranges;
	uint64_t origin, sibling;  /* absolute .debug_info offsets, 0 = none */
	const char *name, *linkage;
	uint64_t call_file, call_line;
};

/* A function's name and whether it is a linkage (mangled) name. */
struct named {
	const char *name;
	bool linkage;
};

/* An entry of the die-offset -> resolved name cache. */
struct name_slot {
	uint64_t key; /* the DIE's offset */
	struct named v;
};

/* A node's address range while building scopes. */
struct nrange {
	uint64_t lo, hi;
	uint32_t node, depth;
};

/* Buffers every unit's scope build reuses (grown as needed, freed with the dwarfsym), so that
 * decoding a hundred units does not allocate and grow the same arrays a hundred times. */
struct scratch {
	struct node *nodes;
	struct nrange *r, *tmp, *stack;
	struct seg *segs;
	size_t cap_nodes, cap_r, cap_tmp, cap_stack, cap_segs;
};

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, cap;
	char data[];
};

struct dwarfsym {
	Elf *elf;                  /* owns the section data */
	struct sect s[S_NR];
	struct unit *units;        /* in .debug_info order */
	size_t nunits, code_units;
	struct urange *ranges;     /* sorted by lo */
	size_t nranges, cap_ranges;
	struct name_slot *names; /* the name cache: entries in the order cached... */
	size_t nnames, cap_names;
	struct hashtab name_index; /* ... and their indexes by key */
	struct arena_chunk *arena;
	struct scratch scratch;
	struct debug_cache_file cached; /* mapped decompressed sections some of s point into */
	unsigned inflated, from_cache;  /* compressed sections inflated here / mapped from the cache */
	/* the file mappings s points into (libelf's of the file, the cache file's), whose pages
	 * drop_pages takes out of this process's page tables; len 0: none (or not a mapping) */
	struct { void *p; size_t len; } mapped[2];
	size_t decoded; /* units decoded (drop_pages every DROP_EVERY_UNITS) */
	size_t loaded;  /* units decoded and held now (dwarfsym_trim unloads the unused ones) */
	uint32_t epoch; /* counts dwarfsym_trim calls: a unit looked up since the last is in use */
};

static void drop_pages(const struct dwarfsym *d);
#define DROP_EVERY_UNITS 4

/* ---- reading ---- */

/* Marks the cursor damaged and at its end. */
static inline void cur_fail(struct cur *c)
{
	c->bad = true;
	c->p = c->end;
}

/* Whether n more bytes are there (else the cursor fails). */
static inline bool cur_has(struct cur *c, size_t n)
{
	if ((size_t)(c->end - c->p) >= n)
		return true;
	cur_fail(c);
	return false;
}

/* Reads a little-endian u8. */
static inline uint64_t rd_u8(struct cur *c)
{
	return cur_has(c, 1) ? *c->p++ : 0;
}

/* Reads an n-byte (n <= 8) little-endian value: copied into the low bytes of a u64, which
 * is the value on the little-endian hosts firn runs on (as big-endian DWARF is refused). */
static inline uint64_t rd_le(struct cur *c, size_t n)
{
	uint64_t v = 0;

	if (cur_has(c, n)) {
		memcpy(&v, c->p, n);
		c->p += n;
	}
	return v;
}

/* Reads a little-endian u16, u32, u64. */
static inline uint64_t rd_u16(struct cur *c) { return rd_le(c, 2); }
static inline uint64_t rd_u32(struct cur *c) { return rd_le(c, 4); }
static inline uint64_t rd_u64(struct cur *c) { return rd_le(c, 8); }

/* Reads an n-byte little-endian value (n = 1, 2, 3, 4 or 8). */
static uint64_t rd_un(struct cur *c, unsigned n)
{
	switch (n) {
	case 1: return rd_u8(c);
	case 2: return rd_u16(c);
	case 3: {
		uint64_t lo = rd_u16(c);
		return lo | rd_u8(c) << 16;
	}
	case 4: return rd_u32(c);
	case 8: return rd_u64(c);
	}
	cur_fail(c);
	return 0;
}

/* Reads an unsigned LEB128 number (leb128.h), the common one-byte case inline. */
static inline uint64_t rd_uleb(struct cur *c)
{
	uint64_t v;

	if (c->p < c->end && *c->p < 0x80)
		return *c->p++;
	if (leb128_u(&c->p, c->end, &v)) {
		cur_fail(c);
		return 0;
	}
	return v;
}

/* Reads a signed LEB128 number (leb128.h), the common one-byte case inline. */
static inline int64_t rd_sleb(struct cur *c)
{
	int64_t v;

	if (c->p < c->end && *c->p < 0x80) { /* one byte: bit 6 is the sign */
		int64_t b = *c->p++;
		return b & 0x40 ? b - 0x80 : b;
	}
	if (leb128_s(&c->p, c->end, &v)) {
		cur_fail(c);
		return 0;
	}
	return v;
}

/* Skips n bytes. */
static inline void cur_skip(struct cur *c, uint64_t n)
{
	if (cur_has(c, n))
		c->p += n;
}

/* Reads a NUL-terminated string in place. */
static const char *rd_cstr(struct cur *c)
{
	const uint8_t *z = memchr(c->p, 0, c->end - c->p);
	const char *s = (const char *)c->p;

	if (!z) {
		cur_fail(c);
		return NULL;
	}
	c->p = z + 1;
	return s;
}

/* A cursor over [off, end) of a section (empty and bad when off is out of bounds). */
static struct cur sect_cur(const struct sect *s, uint64_t off)
{
	if (!s->p) /* a missing section: no pointer arithmetic on NULL */
		return (struct cur){ NULL, NULL, off > 0 };
	struct cur c = { s->p + s->n, s->p + s->n, true };

	if (off <= s->n)
		c = (struct cur){ s->p + off, s->p + s->n, false };
	return c;
}

/* String at off in a string section (sections are trimmed to end with a NUL), or NULL. */
static const char *sect_str(const struct sect *s, uint64_t off)
{
	return off < s->n ? (const char *)s->p + off : NULL;
}

/* Number of elements of a sorted array whose uint64_t key (at the start of each stride-byte
 * element) is at most x: a branch-free binary search (conditional moves instead of
 * mispredicted branches), the hot loop of every lookup. */
static inline size_t count_le(const void *base, size_t n, size_t stride, uint64_t x)
{
	const char *b = base, *p = base;

	if (!n)
		return 0;
	while (n > 1) {
		size_t half = n / 2;
		const char *q = p + half * stride;
		__builtin_prefetch(p + (half / 2) * stride);
		__builtin_prefetch(q + (half / 2) * stride);
		p = *(const uint64_t *)q <= x ? q : p;
		n -= half;
	}
	return (p - b) / stride + (*(const uint64_t *)p <= x);
}

/* Builds the bucket index of keys[0 .. n) (sorted); 0 or -ENOMEM. An empty array gets none. */
static int bindex_build(struct bindex *bx, const void *base, size_t n, size_t stride)
{
#define KEY(i) (*(const uint64_t *)((const char *)base + (i) * stride))
	memset(bx, 0, sizeof(*bx));
	if (!n || n > UINT32_MAX)
		return 0;
	uint64_t span = KEY(n - 1) - KEY(0);
	unsigned shift = 0;
	while (shift < 63 && (span >> shift) + 1 > (n + 1) / 2)
		shift++;
	bx->base = KEY(0);
	bx->shift = shift;
	bx->nb = (span >> shift) + 1;
	if (!(bx->first = malloc(bx->nb * sizeof(*bx->first))))
		return -ENOMEM;
	size_t k = 0;
	for (size_t b = 0; b < bx->nb; b++) {
		uint64_t start = bx->base + ((uint64_t)b << shift);
		while (k < n && KEY(k) < start)
			k++;
		bx->first[b] = k;
	}
	return 0;
#undef KEY
}

/* Number of keys at most x, through the bucket index (a plain search when there is none). */
static inline size_t bindex_count_le(const struct bindex *bx, const void *base, size_t n,
				     size_t stride, uint64_t x)
{
	if (!bx->first)
		return count_le(base, n, stride, x);
	if (x < bx->base)
		return 0;
	uint64_t b = (x - bx->base) >> bx->shift;
	if (b >= bx->nb)
		return n;
	size_t lo = bx->first[b], hi = b + 1 < bx->nb ? bx->first[b + 1] : n;
	return lo + count_le((const char *)base + lo * stride, hi - lo, stride, x);
}

/* ---- forms ---- */

/* Size of a form's value when it does not depend on the data, else -1. */
static int form_size(unsigned form, const struct unit *u)
{
	switch (form) {
	case DW_FORM_flag_present: case DW_FORM_implicit_const:
		return 0;
	case DW_FORM_data1: case DW_FORM_ref1: case DW_FORM_flag: case DW_FORM_strx1:
	case DW_FORM_addrx1:
		return 1;
	case DW_FORM_data2: case DW_FORM_ref2: case DW_FORM_strx2: case DW_FORM_addrx2:
		return 2;
	case DW_FORM_strx3: case DW_FORM_addrx3:
		return 3;
	case DW_FORM_data4: case DW_FORM_ref4: case DW_FORM_strx4: case DW_FORM_addrx4:
	case DW_FORM_ref_sup4:
		return 4;
	case DW_FORM_data8: case DW_FORM_ref8: case DW_FORM_ref_sig8: case DW_FORM_ref_sup8:
		return 8;
	case DW_FORM_data16:
		return 16;
	case DW_FORM_addr:
		return u->addr_size;
	case DW_FORM_ref_addr:
		return u->version <= 2 ? u->addr_size : u->offset_size;
	case DW_FORM_strp: case DW_FORM_line_strp: case DW_FORM_sec_offset: case DW_FORM_strp_sup:
	case DW_FORM_GNU_strp_alt: case DW_FORM_GNU_ref_alt:
		return u->offset_size;
	}
	return -1;
}

/* Skips one value of a variable-size form. */
static void skip_var_form(struct cur *c, unsigned form, const struct unit *u, int depth)
{
	switch (form) {
	case DW_FORM_udata: case DW_FORM_sdata: case DW_FORM_ref_udata: case DW_FORM_strx:
	case DW_FORM_addrx: case DW_FORM_loclistx: case DW_FORM_rnglistx:
	case DW_FORM_GNU_addr_index: case DW_FORM_GNU_str_index:
		rd_uleb(c);
		return;
	case DW_FORM_string:
		rd_cstr(c);
		return;
	case DW_FORM_block1:
		cur_skip(c, rd_u8(c));
		return;
	case DW_FORM_block2:
		cur_skip(c, rd_u16(c));
		return;
	case DW_FORM_block4:
		cur_skip(c, rd_u32(c));
		return;
	case DW_FORM_block: case DW_FORM_exprloc:
		cur_skip(c, rd_uleb(c));
		return;
	case DW_FORM_indirect:
		if (depth == 0) {
			unsigned f = rd_uleb(c);
			int n = form_size(f, u);
			if (n >= 0)
				cur_skip(c, n);
			else
				skip_var_form(c, f, u, 1);
			return;
		}
	}
	cur_fail(c);
}

/* Reads one value of any form. */
static void rd_form(struct cur *c, const struct dwarfsym *d, const struct unit *u, unsigned form,
		    int64_t implicit, struct val *v)
{
	v->kind = V_U;
	v->s = NULL;
	switch (form) {
	case DW_FORM_addr: v->kind = V_ADDR; v->u = rd_un(c, u->addr_size); return;
	case DW_FORM_addrx: case DW_FORM_GNU_addr_index: v->kind = V_ADDRX; v->u = rd_uleb(c); return;
	case DW_FORM_addrx1: v->kind = V_ADDRX; v->u = rd_u8(c); return;
	case DW_FORM_addrx2: v->kind = V_ADDRX; v->u = rd_u16(c); return;
	case DW_FORM_addrx3: v->kind = V_ADDRX; v->u = rd_un(c, 3); return;
	case DW_FORM_addrx4: v->kind = V_ADDRX; v->u = rd_u32(c); return;
	case DW_FORM_data1: case DW_FORM_flag: v->u = rd_u8(c); return;
	case DW_FORM_data2: v->u = rd_u16(c); return;
	case DW_FORM_data4: v->u = rd_u32(c); return;
	case DW_FORM_data8: v->u = rd_u64(c); return;
	case DW_FORM_udata: v->u = rd_uleb(c); return;
	case DW_FORM_sdata: v->u = (uint64_t)rd_sleb(c); return;
	case DW_FORM_implicit_const: v->u = (uint64_t)implicit; return;
	case DW_FORM_flag_present: v->u = 1; return;
	case DW_FORM_sec_offset: v->u = rd_un(c, u->offset_size); return;
	case DW_FORM_ref1: v->kind = V_REF; v->u = u->off + rd_u8(c); return;
	case DW_FORM_ref2: v->kind = V_REF; v->u = u->off + rd_u16(c); return;
	case DW_FORM_ref4: v->kind = V_REF; v->u = u->off + rd_u32(c); return;
	case DW_FORM_ref8: v->kind = V_REF; v->u = u->off + rd_u64(c); return;
	case DW_FORM_ref_udata: v->kind = V_REF; v->u = u->off + rd_uleb(c); return;
	case DW_FORM_ref_addr:
		v->kind = V_REF;
		v->u = rd_un(c, u->version <= 2 ? u->addr_size : u->offset_size);
		return;
	case DW_FORM_rnglistx: v->kind = V_RNGLISTX; v->u = rd_uleb(c); return;
	case DW_FORM_string: v->kind = V_STR; v->s = rd_cstr(c); return;
	case DW_FORM_strp:
		v->kind = V_STR;
		v->s = sect_str(&d->s[S_STR], rd_un(c, u->offset_size));
		return;
	case DW_FORM_line_strp:
		v->kind = V_STR;
		v->s = sect_str(&d->s[S_LINE_STR], rd_un(c, u->offset_size));
		return;
	case DW_FORM_strx: case DW_FORM_GNU_str_index: v->kind = V_STRX; v->u = rd_uleb(c); return;
	case DW_FORM_strx1: v->kind = V_STRX; v->u = rd_u8(c); return;
	case DW_FORM_strx2: v->kind = V_STRX; v->u = rd_u16(c); return;
	case DW_FORM_strx3: v->kind = V_STRX; v->u = rd_un(c, 3); return;
	case DW_FORM_strx4: v->kind = V_STRX; v->u = rd_u32(c); return;
	}
	v->kind = V_NONE; /* blocks, alternate-file and type-unit references: skipped */
	int n = form_size(form, u);
	if (n >= 0)
		cur_skip(c, n);
	else
		skip_var_form(c, form, u, 0);
}

/* The string of a V_STR or V_STRX value, or NULL. */
static const char *val_str(const struct dwarfsym *d, const struct unit *u, const struct val *v)
{
	if (v->kind == V_STR)
		return v->s;
	if (v->kind != V_STRX)
		return NULL;
	uint64_t base = u->str_offsets_base ? u->str_offsets_base : (u->offset_size == 8 ? 16 : 8);
	struct cur c = sect_cur(&d->s[S_STR_OFFSETS], base + v->u * u->offset_size);
	uint64_t off = rd_un(&c, u->offset_size);
	return c.bad ? NULL : sect_str(&d->s[S_STR], off);
}

/* The address of a V_ADDR or V_ADDRX value; false when it has none. */
static bool val_addr(const struct dwarfsym *d, const struct unit *u, const struct val *v,
		     uint64_t *addr)
{
	if (v->kind == V_ADDR) {
		*addr = v->u;
		return true;
	}
	if (v->kind != V_ADDRX)
		return false;
	struct cur c = sect_cur(&d->s[S_ADDR], (u->addr_base ? u->addr_base : 8) + v->u * u->addr_size);
	*addr = rd_un(&c, u->addr_size);
	return !c.bad;
}

/* ---- abbreviations ---- */

/* Tag -> what the scope walk does with it. */
static uint8_t tag_kind(uint64_t tag)
{
	switch (tag) {
	case DW_TAG_subprogram: case DW_TAG_entry_point:
		return K_FUNC;
	case DW_TAG_inlined_subroutine:
		return K_INLINE;
	case DW_TAG_lexical_block: case DW_TAG_try_block: case DW_TAG_catch_block:
		return K_BLOCK;
	case DW_TAG_namespace: case DW_TAG_module:
		return K_SCOPE;
	}
	return K_SKIP;
}

/* Whether die_read wants an attribute. */
static bool wanted_attr(unsigned at)
{
	switch (at) {
	case DW_AT_low_pc: case DW_AT_high_pc: case DW_AT_ranges: case DW_AT_name:
	case DW_AT_linkage_name: case DW_AT_MIPS_linkage_name: case DW_AT_abstract_origin:
	case DW_AT_specification: case DW_AT_sibling: case DW_AT_call_file: case DW_AT_call_line:
		return true;
	}
	return false;
}

/* Appends the plan of an abbreviation (reading the wanted attributes when read, else skipping
 * all) to t->steps; returns the trailing skip, or -1 on -ENOMEM. */
static int64_t build_plan(struct abbrevs *t, const struct abbrev *a, const struct unit *u,
			  bool read, uint32_t *first, uint32_t *n)
{
	uint32_t skip = 0;

	*first = t->nsteps;
	for (uint32_t i = 0; i < a->n; i++) {
		const struct attrspec *s = &t->specs[a->first + i];
		int size = form_size(s->form, u);
		bool want = read && wanted_attr(s->at);
		if (size >= 0 && !want) {
			skip += size;
			continue;
		}
		if (VEC_GROW(t->steps, t->cap_steps, t->nsteps + 1))
			return -1;
		t->steps[t->nsteps++] = (struct step){ skip, want ? a->first + i : UINT32_MAX, s->form };
		skip = 0;
	}
	*n = t->nsteps - *first;
	return skip;
}

/* Builds an abbreviation's read and skip plans; 0 or -ENOMEM. */
static int abbrev_plans(struct abbrevs *t, struct abbrev *a, const struct unit *u)
{
	int64_t tail;

	a->nread = a->nskip = 0;
	a->read = a->skip = a->read_tail = a->skip_tail = 0;
	a->has_read = a->kind == K_FUNC || a->kind == K_INLINE; /* the DIEs die_read reads */
	if (a->has_read) {
		if ((tail = build_plan(t, a, u, true, &a->read, &a->nread)) < 0)
			return -ENOMEM;
		a->read_tail = tail;
	}
	if (a->size < 0) {
		if ((tail = build_plan(t, a, u, false, &a->skip, &a->nskip)) < 0)
			return -ENOMEM;
		a->skip_tail = tail;
	}
	return 0;
}

/* Sizes of an abbreviation's values: total when all fixed, and where DW_AT_sibling is. */
static void abbrev_sizes(struct abbrev *a, const struct attrspec *specs, const struct unit *u)
{
	int32_t off = 0;

	a->sib_off = -1;
	for (uint32_t i = 0; i < a->n; i++) {
		const struct attrspec *s = &specs[a->first + i];
		if (s->at == DW_AT_sibling && off >= 0) {
			a->sib_off = off;
			a->sib_form = s->form;
		}
		int n = form_size(s->form, u);
		off = off < 0 || n < 0 ? -1 : off + n;
	}
	a->size = off;
}

/* Appends an attribute spec; 0 or -ENOMEM. */
static int push_spec(struct abbrevs *t, size_t *cap, const struct attrspec *s)
{
	if (VEC_GROW(t->specs, *cap, t->nspecs + 1))
		return -ENOMEM;
	t->specs[t->nspecs++] = *s;
	return 0;
}

/* Reads one abbreviation's attribute specs; 0, -EINVAL or -ENOMEM. */
static int read_specs(struct cur *c, struct abbrevs *t, size_t *cap, struct abbrev *a)
{
	a->first = t->nspecs;
	for (;;) {
		struct attrspec s = { 0 };
		s.at = rd_uleb(c);
		s.form = rd_uleb(c);
		if (c->bad)
			return -EINVAL;
		if (s.form == DW_FORM_implicit_const)
			s.implicit = rd_sleb(c);
		if (!s.at && !s.form)
			break;
		if (push_spec(t, cap, &s))
			return -ENOMEM;
	}
	a->n = t->nspecs - a->first;
	return 0;
}

/* Whether an abbreviation has a code address attribute (low pc or ranges). */
static bool abbrev_has_pc(const struct abbrevs *t, const struct abbrev *a)
{
	for (uint32_t i = 0; i < a->n; i++)
		if (t->specs[a->first + i].at == DW_AT_low_pc || t->specs[a->first + i].at == DW_AT_ranges)
			return true;
	return false;
}

/* Reads the abbreviation table of a unit; 0, -ENOMEM, or -EINVAL for a truncated table (its
 * complete entries are kept, ready to use). */
static int read_abbrevs(const struct dwarfsym *d, struct unit *u)
{
	struct cur c = sect_cur(&d->s[S_ABBREV], u->abbrev_off);
	struct abbrevs *t = &u->ab;
	size_t cap = 0, scap = 0;
	int err = 0;

	t->dense = true;
	for (;;) {
		uint64_t code = rd_uleb(&c);
		if (c.bad)
			err = -EINVAL;
		if (!code || err)
			break;
		if (VEC_GROW(t->tab, cap, t->n + 1))
			return -ENOMEM;
		struct abbrev *a = &t->tab[t->n];
		a->code = code;
		a->tag = rd_uleb(&c);
		a->children = rd_u8(&c);
		a->kind = tag_kind(a->tag);
		if ((err = read_specs(&c, t, &scap, a)) == -ENOMEM)
			return err;
		if (err)
			break; /* a truncated table: the complete entries before it are kept */
		t->dense = t->dense && code == t->n + 1;
		t->n++;
	}
	for (size_t i = 0; i < t->n; i++) {
		abbrev_sizes(&t->tab[i], t->specs, u);
		if (abbrev_plans(t, &t->tab[i], u))
			return -ENOMEM;
		if (!abbrev_has_pc(t, &t->tab[i]) &&
		    (t->tab[i].kind == K_FUNC || t->tab[i].kind == K_INLINE))
			t->tab[i].kind = K_SKIP; /* declarations, abstract instances: no code */
	}
	return err;
}

/* Orders abbreviations by code. */
static int abbrev_cmp(const void *a, const void *b)
{
	const struct abbrev *x = a, *y = b;

	return CMP3(x->code, y->code);
}

/* Frees a unit's abbreviation table; the next use reads it again (unit_abbrevs). */
static void abbrevs_release(struct unit *u)
{
	free(u->ab.tab);
	free(u->ab.specs);
	free(u->ab.steps);
	memset(&u->ab, 0, sizeof(u->ab));
	u->ab_read = false;
}

/* Reads a unit's abbreviations on first use; 0 or -errno (remembered as an empty table). */
static int unit_abbrevs(const struct dwarfsym *d, struct unit *u)
{
	if (u->ab_read)
		return 0;
	int err = read_abbrevs(d, u);
	if (err == -ENOMEM) {
		abbrevs_release(u);
		return err;
	}
	if (!u->ab.dense && u->ab.n)
		qsort(u->ab.tab, u->ab.n, sizeof(*u->ab.tab), abbrev_cmp);
	u->ab_read = true;
	return 0;
}

/* The abbreviation with code, or NULL. */
static inline const struct abbrev *abbrev_find(const struct abbrevs *t, uint64_t code)
{
	if (t->dense)
		return code - 1 < t->n ? &t->tab[code - 1] : NULL;
	size_t i = UPPER_BOUND(t->tab, t->n, code, code);
	return i && t->tab[i - 1].code == code ? &t->tab[i - 1] : NULL;
}

/* ---- DIEs ---- */

/* Reads the value of the forms function DIEs mostly use, inline; false for any other form. */
static inline bool rd_form_fast(struct cur *c, const struct unit *u, const struct attrspec *s,
				struct val *v)
{
	v->s = NULL;
	switch (s->form) {
	case DW_FORM_ref4: v->kind = V_REF; v->u = u->off + rd_u32(c); return true;
	case DW_FORM_data1: v->kind = V_U; v->u = rd_u8(c); return true;
	case DW_FORM_data2: v->kind = V_U; v->u = rd_u16(c); return true;
	case DW_FORM_data4: v->kind = V_U; v->u = rd_u32(c); return true;
	case DW_FORM_data8: v->kind = V_U; v->u = rd_u64(c); return true;
	case DW_FORM_udata: v->kind = V_U; v->u = rd_uleb(c); return true;
	case DW_FORM_implicit_const: v->kind = V_U; v->u = (uint64_t)s->implicit; return true;
	case DW_FORM_addr:
		if (u->addr_size != 8)
			return false;
		v->kind = V_ADDR;
		v->u = rd_u64(c);
		return true;
	case DW_FORM_sec_offset:
		if (u->offset_size != 4)
			return false;
		v->kind = V_U;
		v->u = rd_u32(c);
		return true;
	}
	return false;
}

/* Stores one attribute value that symbolization uses into die. */
static inline void die_attr(const struct dwarfsym *d, const struct unit *u, unsigned at,
			    const struct val *v, struct die *die)
{
	switch (at) {
	case DW_AT_low_pc: die->low = *v; break;
	case DW_AT_high_pc: die->high = *v; break;
	case DW_AT_ranges: die->ranges = *v; break;
	case DW_AT_name: die->name = val_str(d, u, v); break;
	case DW_AT_linkage_name: case DW_AT_MIPS_linkage_name:
		die->linkage = val_str(d, u, v);
		break;
	case DW_AT_abstract_origin: case DW_AT_specification:
		if (v->kind == V_REF)
			die->origin = v->u;
		break;
	case DW_AT_sibling:
		if (v->kind == V_REF)
			die->sibling = v->u;
		break;
	case DW_AT_call_file: die->call_file = v->u; break;
	case DW_AT_call_line: die->call_line = v->u; break;
	}
}

/* Reads the attributes of a DIE (its code already read) into die. */
static void die_read(struct cur *c, const struct dwarfsym *d, const struct unit *u,
		     const struct abbrev *a, struct die *die)
{
	const struct step *st = &u->ab.steps[a->read];
	struct val v;

	memset(die, 0, sizeof(*die));
	die->tag = a->tag;
	die->children = a->children;
	if (!a->has_read) { /* a DIE that is not a function: every attribute in turn */
		for (uint32_t i = 0; i < a->n && !c->bad; i++) {
			const struct attrspec *s = &u->ab.specs[a->first + i];
			rd_form(c, d, u, s->form, s->implicit, &v);
			die_attr(d, u, s->at, &v, die);
		}
		return;
	}
	for (uint32_t i = 0; i < a->nread && !c->bad; i++, st++) {
		cur_skip(c, st->skip);
		if (st->spec == UINT32_MAX) {
			skip_var_form(c, st->form, u, 0);
			continue;
		}
		const struct attrspec *s = &u->ab.specs[st->spec];
		if (!rd_form_fast(c, u, s, &v))
			rd_form(c, d, u, s->form, s->implicit, &v);
		die_attr(d, u, s->at, &v, die);
	}
	cur_skip(c, a->read_tail);
}

/* Skips the attribute values of a DIE (its code already read). */
static inline void die_skip(struct cur *c, const struct unit *u, const struct abbrev *a)
{
	if (a->size >= 0) {
		cur_skip(c, a->size);
		return;
	}
	const struct step *st = &u->ab.steps[a->skip];
	for (uint32_t i = 0; i < a->nskip && !c->bad; i++, st++) {
		cur_skip(c, st->skip);
		skip_var_form(c, st->form, u, 0);
	}
	cur_skip(c, a->skip_tail);
}

/* Index of the unit holding .debug_info offset off, or -1. */
static ssize_t unit_at(const struct dwarfsym *d, uint64_t off)
{
	size_t lo = UPPER_BOUND(d->units, d->nunits, off, off);

	if (lo == 0 || off >= d->units[lo - 1].end)
		return -1;
	return lo - 1;
}

/* Reads the DIE at .debug_info offset off; 0, -ENOENT or -ENOMEM. *up gets its unit. */
static int die_at(struct dwarfsym *d, uint64_t off, struct die *die, struct unit **up)
{
	ssize_t i = unit_at(d, off);

	if (i < 0)
		return -ENOENT;
	struct unit *u = &d->units[i];
	int err = unit_abbrevs(d, u);
	if (err)
		return err;
	struct cur c = sect_cur(&d->s[S_INFO], off);
	c.end = d->s[S_INFO].p + u->end;
	const struct abbrev *a = abbrev_find(&u->ab, rd_uleb(&c));
	if (!a || c.bad)
		return -ENOENT;
	die_read(&c, d, u, a, die);
	*up = u;
	return c.bad ? -ENOENT : 0;
}

/* ---- names ---- */

/* Whether name cache entry id is the one of DIE offset *key. */
static bool name_eq(const void *ctx, uint32_t id, const void *key)
{
	return ((const struct dwarfsym *)ctx)->names[id].key == *(const uint64_t *)key;
}

/* The cached name of the DIE at off, or NULL. */
static const struct named *name_get(const struct dwarfsym *d, uint64_t off)
{
	int64_t id = hashtab_find(&d->name_index, hash_mix64(off), name_eq, d, &off);

	return id >= 0 ? &d->names[id].v : NULL;
}

/* Caches the name of the DIE at off (replacing one cached before); 0 or -ENOMEM. */
static int name_put(struct dwarfsym *d, uint64_t off, struct named name)
{
	int64_t id = hashtab_find(&d->name_index, hash_mix64(off), name_eq, d, &off);

	if (id >= 0) {
		d->names[id].v = name;
		return 0;
	}
	if (d->nnames >= UINT32_MAX - 1 || VEC_GROW(d->names, d->cap_names, d->nnames + 1) ||
	    hashtab_add(&d->name_index, hash_mix64(off), d->nnames))
		return -ENOMEM;
	d->names[d->nnames++] = (struct name_slot){ off, name };
	return 0;
}

/* Whether a linkage name is a mangled (C++ or Rust) name; C's asm labels ("__GI_malloc") are
 * not, and the source name is better then. */
static bool mangled(const char *s)
{
	return s[0] == '_' && (s[1] == 'Z' || s[1] == 'R');
}

/* Name of the function DIE at off: the first mangled linkage name along its abstract_origin and
 * specification chain, else the first DW_AT_name, else any linkage name; NULL when none. Cached
 * per DIE, so the abstract instance shared by many inlined copies is read once. */
static struct named die_name(struct dwarfsym *d, uint64_t off, int depth)
{
	struct named res = { NULL, false };
	const struct named *cached = name_get(d, off);
	struct die die;
	struct unit *u;

	if (cached)
		return *cached;
	if (depth < 8 && !die_at(d, off, &die, &u)) {
		if (die.linkage && mangled(die.linkage)) {
			res = (struct named){ die.linkage, true };
		} else {
			if (die.origin)
				res = die_name(d, die.origin, depth + 1);
			if (!res.linkage && die.name)
				res = (struct named){ die.name, false };
			if (!res.name && die.linkage)
				res = (struct named){ die.linkage, false };
		}
	}
	name_put(d, off, res); /* on -ENOMEM the name is just not cached */
	return res;
}

/* ---- range lists ---- */

typedef int (*range_fn)(void *ctx, uint64_t lo, uint64_t hi);

/* Walks a DWARF 2-4 .debug_ranges list. */
static int ranges_v4(const struct dwarfsym *d, const struct unit *u, uint64_t off, uint64_t base,
		     range_fn fn, void *ctx)
{
	struct cur c = sect_cur(&d->s[S_RANGES], off);
	uint64_t max = u->addr_size == 4 ? UINT32_MAX : UINT64_MAX;

	while (!c.bad) {
		uint64_t b = rd_un(&c, u->addr_size), e = rd_un(&c, u->addr_size);
		if (c.bad || (!b && !e))
			break;
		if (b == max) {
			base = e;
			continue;
		}
		if (b < e && base + b) {
			int err = fn(ctx, base + b, base + e);
			if (err)
				return err;
		}
	}
	return 0;
}

/* Reads an address through .debug_addr for a range list entry. */
static uint64_t rle_addrx(const struct dwarfsym *d, const struct unit *u, struct cur *c)
{
	struct val v = { rd_uleb(c), NULL, V_ADDRX };
	uint64_t a = 0;

	val_addr(d, u, &v, &a);
	return a;
}

/* Walks a DWARF 5 .debug_rnglists list at off. */
static int ranges_v5(const struct dwarfsym *d, const struct unit *u, uint64_t off, uint64_t base,
		     range_fn fn, void *ctx)
{
	struct cur c = sect_cur(&d->s[S_RNGLISTS], off);

	while (!c.bad) {
		uint64_t lo = 0, hi = 0;
		switch (rd_u8(&c)) {
		case DW_RLE_end_of_list: return 0;
		case DW_RLE_base_addressx: base = rle_addrx(d, u, &c); continue;
		case DW_RLE_base_address: base = rd_un(&c, u->addr_size); continue;
		case DW_RLE_startx_endx: lo = rle_addrx(d, u, &c); hi = rle_addrx(d, u, &c); break;
		case DW_RLE_startx_length: lo = rle_addrx(d, u, &c); hi = lo + rd_uleb(&c); break;
		case DW_RLE_offset_pair: lo = base + rd_uleb(&c); hi = base + rd_uleb(&c); break;
		case DW_RLE_start_end: lo = rd_un(&c, u->addr_size); hi = rd_un(&c, u->addr_size); break;
		case DW_RLE_start_length: lo = rd_un(&c, u->addr_size); hi = lo + rd_uleb(&c); break;
		default: return 0;
		}
		if (!c.bad && lo < hi && lo) {
			int err = fn(ctx, lo, hi);
			if (err)
				return err;
		}
	}
	return 0;
}

/* Calls fn for each address range of a DIE (low/high pc or DW_AT_ranges); returns how many
 * ranges it had (or -errno from fn). */
static int die_ranges(const struct dwarfsym *d, const struct unit *u, const struct die *die,
		      range_fn fn, void *ctx)
{
	uint64_t lo, hi;

	if (die->ranges.kind == V_RNGLISTX) {
		uint64_t base = u->rnglists_base ? u->rnglists_base : (u->offset_size == 8 ? 20 : 12);
		struct cur c = sect_cur(&d->s[S_RNGLISTS], base + die->ranges.u * u->offset_size);
		uint64_t off = rd_un(&c, u->offset_size);
		if (c.bad)
			return 0;
		int err = ranges_v5(d, u, base + off, u->base, fn, ctx);
		return err ? err : 1;
	}
	if (die->ranges.kind == V_U) {
		int err = u->version >= 5 ? ranges_v5(d, u, die->ranges.u, u->base, fn, ctx)
					  : ranges_v4(d, u, die->ranges.u, u->base, fn, ctx);
		return err ? err : 1;
	}
	if (!val_addr(d, u, &die->low, &lo))
		return 0;
	if (die->high.kind == V_U)
		hi = lo + die->high.u;
	else if (!val_addr(d, u, &die->high, &hi))
		return 0;
	if (lo >= hi || lo == 0) /* 0: code the linker discarded */
		return 0;
	int err = fn(ctx, lo, hi);
	return err ? err : 1;
}

/* Whether a DIE has code addresses. */
static bool die_has_pc(const struct die *die)
{
	return die->ranges.kind == V_U || die->ranges.kind == V_RNGLISTX ||
	       die->low.kind == V_ADDR || die->low.kind == V_ADDRX;
}

/* ---- arena for joined paths ---- */

/* Copies the concatenation of up to three strings (with '/' between non-empty ones) into the
 * arena; NULL on -ENOMEM. */
static const char *arena_path(struct dwarfsym *d, const char *a, const char *b, const char *c)
{
	const char *parts[3] = { a, b, c };
	size_t len = 1;

	for (int i = 0; i < 3; i++)
		len += parts[i] && *parts[i] ? strlen(parts[i]) + 1 : 0;
	if (!d->arena || d->arena->cap - d->arena->used < len) {
		size_t cap = len > 65536 ? len : 65536;
		struct arena_chunk *ch = malloc(sizeof(*ch) + cap);
		if (!ch)
			return NULL;
		*ch = (struct arena_chunk){ d->arena, 0, cap };
		d->arena = ch;
	}
	char *out = d->arena->data + d->arena->used, *p = out;
	for (int i = 0; i < 3; i++) {
		if (!parts[i] || !*parts[i])
			continue;
		if (p != out && p[-1] != '/')
			*p++ = '/';
		size_t n = strlen(parts[i]);
		memcpy(p, parts[i], n);
		p += n;
	}
	*p++ = 0;
	d->arena->used += p - out;
	return out;
}

/* ---- line tables ---- */

/* Header fields of a line program. */
struct lhdr {
	uint16_t version;
	uint8_t addr_size, offset_size, min_inst, max_ops, default_stmt, line_range, opcode_base;
	int8_t line_base;
	const uint8_t *oplens; /* opcode_base - 1 argument counts */
	const uint8_t *prog, *end;
};

/* Reads a DWARF 5 entry-format list and its entries: directories (dirs) or files. */
static int read_v5_entries(struct cur *c, const struct dwarfsym *d, const struct unit *lu,
			   struct lines *l, bool files)
{
	uint64_t fmt[32][2];
	unsigned nfmt = rd_u8(c);
	size_t cap = 0;

	if (nfmt > 32)
		return -EINVAL;
	for (unsigned i = 0; i < nfmt; i++) {
		fmt[i][0] = rd_uleb(c);
		fmt[i][1] = rd_uleb(c);
	}
	uint64_t n = rd_uleb(c);
	if (c->bad || n > (uint64_t)(c->end - c->p))
		return -EINVAL;
	for (uint64_t k = 0; k < n && !c->bad; k++) {
		struct fileent e = { 0 };
		for (unsigned i = 0; i < nfmt; i++) {
			struct val v;
			rd_form(c, d, lu, fmt[i][1], 0, &v);
			if (fmt[i][0] == DW_LNCT_path)
				e.name = val_str(d, lu, &v);
			else if (fmt[i][0] == DW_LNCT_directory_index)
				e.dir = v.u;
		}
		if (files ? VEC_GROW(l->files, cap, l->nfiles + 1)
			  : VEC_GROW(l->dirs, cap, l->ndirs + 1))
			return -ENOMEM;
		if (files)
			l->files[l->nfiles++] = e;
		else
			l->dirs[l->ndirs++] = e.name;
	}
	return c->bad ? -EINVAL : 0;
}

/* Reads DWARF 2-4 include_directories and file_names (index 0: the unit's directory/none). */
static int read_v4_entries(struct cur *c, const struct unit *u, struct lines *l)
{
	size_t dcap = 0, fcap = 0;
	const char *s;

	if (VEC_GROW(l->dirs, dcap, 1) || VEC_GROW(l->files, fcap, 1))
		return -ENOMEM;
	l->dirs[l->ndirs++] = u->comp_dir;
	l->files[l->nfiles++] = (struct fileent){ NULL, NULL, 0 };
	while ((s = rd_cstr(c)) && *s) {
		if (VEC_GROW(l->dirs, dcap, l->ndirs + 1))
			return -ENOMEM;
		l->dirs[l->ndirs++] = s;
	}
	while ((s = rd_cstr(c)) && *s) {
		struct fileent e = { s, NULL, rd_uleb(c) };
		rd_uleb(c);
		rd_uleb(c);
		if (VEC_GROW(l->files, fcap, l->nfiles + 1))
			return -ENOMEM;
		l->files[l->nfiles++] = e;
	}
	return c->bad ? -EINVAL : 0;
}

/* Reads a line program header at the unit's stmt_list; 0, -EINVAL or -ENOMEM. */
static int read_lhdr(const struct dwarfsym *d, const struct unit *u, struct lhdr *h,
		     struct lines *l)
{
	struct cur c = sect_cur(&d->s[S_LINE], u->stmt_list);
	uint64_t len = rd_u32(&c);

	h->offset_size = 4;
	if (len == 0xffffffff) {
		len = rd_u64(&c);
		h->offset_size = 8;
	}
	if (c.bad || len > (uint64_t)(c.end - c.p))
		return -EINVAL;
	c.end = c.p + len;
	h->version = rd_u16(&c);
	if (h->version < 2 || h->version > 5)
		return -EINVAL;
	h->addr_size = u->addr_size;
	if (h->version >= 5) {
		h->addr_size = rd_u8(&c);
		rd_u8(&c); /* segment selector size */
	}
	uint64_t hlen = rd_un(&c, h->offset_size);
	if (c.bad || hlen > (uint64_t)(c.end - c.p))
		return -EINVAL;
	h->prog = c.p + hlen;
	h->end = c.end;
	h->min_inst = rd_u8(&c);
	h->max_ops = h->version >= 4 ? rd_u8(&c) : 1;
	h->default_stmt = rd_u8(&c);
	h->line_base = (int8_t)rd_u8(&c);
	h->line_range = rd_u8(&c);
	h->opcode_base = rd_u8(&c);
	h->oplens = c.p;
	cur_skip(&c, h->opcode_base ? h->opcode_base - 1 : 0);
	if (c.bad || !h->line_range || !h->opcode_base || !h->max_ops)
		return -EINVAL;
	if (h->version < 5)
		return read_v4_entries(&c, u, l);
	struct unit lu = *u;
	lu.offset_size = h->offset_size;
	lu.addr_size = h->addr_size;
	int err = read_v5_entries(&c, d, &lu, l, false);
	return err ? err : read_v5_entries(&c, d, &lu, l, true);
}

/* Line-program state while decoding. */
struct lstate {
	uint64_t addr;
	uint64_t file, line;
	size_t seq_start;          /* index of the current sequence's first row */
	struct row *rows;          /* room for one row per program byte: never grown */
	size_t n, cap;
	struct seqr *seqs;
	size_t nseqs, cap_seqs;
	uint32_t addr_adv[256];    /* per special opcode: address and line advance */
	int32_t line_adv[256];
};

/* A decoded sequence: rows [start .. end) (the last is its ROW_END). */
struct seqr {
	uint64_t lo, hi;
	size_t start, end;
};

/* Appends a row; 0 or -ENOMEM. */
static inline int emit_row(struct lstate *s, bool end)
{
	if (s->n == s->cap)
		return -EINVAL; /* cannot happen: each row takes a program byte */
	uint64_t addr = s->addr;
	if (s->n > s->seq_start && addr < s->rows[s->n - 1].addr)
		addr = s->rows[s->n - 1].addr; /* keep a damaged sequence sorted */
	s->rows[s->n++] = (struct row){ addr, (uint32_t)s->line, end ? ROW_END : (uint32_t)s->file };
	if (!end)
		return 0;
	if (VEC_GROW(s->seqs, s->cap_seqs, s->nseqs + 1))
		return -ENOMEM;
	s->seqs[s->nseqs++] = (struct seqr){ s->rows[s->seq_start].addr, addr, s->seq_start, s->n };
	s->seq_start = s->n;
	s->addr = 0;
	s->file = 1;
	s->line = 1;
	return 0;
}

/* Runs one extended opcode. */
static int run_extended(struct cur *c, const struct lhdr *h, struct lstate *s)
{
	uint64_t len = rd_uleb(c);

	if (c->bad || len == 0 || len > (uint64_t)(c->end - c->p)) {
		cur_fail(c);
		return 0;
	}
	const uint8_t *next = c->p + len; /* only once len is known to fit */
	int err = 0;
	switch (rd_u8(c)) {
	case DW_LNE_end_sequence:
		err = emit_row(s, true); /* resets the registers */
		break;
	case DW_LNE_set_address:
		s->addr = rd_un(c, len - 1 == 4 ? 4 : 8);
		break;
	}
	c->p = next;
	return err;
}

/* Runs one standard opcode. */
static void run_standard(struct cur *c, const struct lhdr *h, struct lstate *s, uint8_t op)
{
	switch (op) {
	case DW_LNS_advance_pc: s->addr += rd_uleb(c) * h->min_inst; return;
	case DW_LNS_advance_line: s->line += rd_sleb(c); return;
	case DW_LNS_set_file: s->file = rd_uleb(c); return;
	case DW_LNS_const_add_pc:
		s->addr += (uint64_t)((255 - h->opcode_base) / h->line_range) * h->min_inst;
		return;
	case DW_LNS_fixed_advance_pc: s->addr += rd_u16(c); return;
	case DW_LNS_negate_stmt: case DW_LNS_set_basic_block: case DW_LNS_set_prologue_end:
	case DW_LNS_set_epilogue_begin:
		return;
	}
	for (unsigned i = 0; i < h->oplens[op - 1]; i++) /* set_column, set_isa, unknown ones */
		rd_uleb(c);
}

/* The hot registers of the line-program loop, in locals: stores to the row arrays could alias
 * any byte (uint8_t reads), so fields behind pointers would be reloaded after every row. */
struct rows {
	struct row *v;
	size_t n, seq_start;
};

/* Appends a row within a sequence (room is there: one row per program byte at most), unless it
 * answers as the row before it does. */
static inline void put_row(struct rows *r, uint64_t addr, uint64_t line, uint64_t file)
{
	if (r->n > r->seq_start) {
		const struct row *prev = &r->v[r->n - 1];
		if (prev->line == (uint32_t)line && prev->file == (uint32_t)file)
			return;
		if (addr < prev->addr)
			addr = prev->addr; /* keep a damaged sequence sorted */
	}
	r->v[r->n++] = (struct row){ addr, (uint32_t)line, (uint32_t)file };
}

/* Allocates the rows (one per program byte at most) and the special opcodes' advances. */
static int lstate_init(const struct lhdr *h, struct lstate *s)
{
	s->cap = (h->end - h->prog) + 2;
	if (!(s->rows = malloc(s->cap * sizeof(*s->rows))))
		return -ENOMEM;
	for (unsigned op = h->opcode_base; op < 256; op++) {
		unsigned adj = op - h->opcode_base;
		s->addr_adv[op] = (adj / h->line_range) * h->min_inst;
		s->line_adv[op] = h->line_base + (int)(adj % h->line_range);
	}
	return 0;
}

/* Runs an opcode the loop leaves out of line (extended ones, rare standard ones) on s. */
static int run_rare(struct cur *c, const struct lhdr *h, struct lstate *s, uint8_t op)
{
	if (op == 0)
		return run_extended(c, h, s);
	run_standard(c, h, s, op);
	return 0;
}

/* Decodes the line program into s->addrs, s->info and s->seqs. The registers live in locals
 * (the common opcodes inline), written back to s around the rare ones. */
static int run_program(const struct lhdr *h, struct lstate *s)
{
	struct cur c = { h->prog, h->end, false };
	const uint64_t const_add = (uint64_t)((255 - h->opcode_base) / h->line_range) * h->min_inst;
	const unsigned opcode_base = h->opcode_base, min_inst = h->min_inst;
	uint64_t addr = 0, line = 1, file = 1;
	int err;

	if ((err = lstate_init(h, s)))
		return err;
	const uint32_t *addr_adv = s->addr_adv;
	const int32_t *line_adv = s->line_adv;
	struct rows r = { s->rows, s->n, s->seq_start };
	while (c.p < c.end) {
		uint8_t op = *c.p++;
		if (op >= opcode_base) {
			addr += addr_adv[op];
			line += line_adv[op];
			put_row(&r, addr, line, file);
			continue;
		}
		if (op == DW_LNS_set_column) { /* before most rows (gcc): cheaper than the switch */
			rd_uleb(&c);
			continue;
		}
		switch (op) {
		case DW_LNS_copy: put_row(&r, addr, line, file); continue;
		case DW_LNS_advance_pc: addr += rd_uleb(&c) * min_inst; continue;
		case DW_LNS_advance_line: line += rd_sleb(&c); continue;
		case DW_LNS_set_file: file = rd_uleb(&c); continue;
		case DW_LNS_const_add_pc: addr += const_add; continue;
		case DW_LNS_negate_stmt: case DW_LNS_set_basic_block: case DW_LNS_set_prologue_end:
		case DW_LNS_set_epilogue_begin:
			continue;
		}
		s->addr = addr;
		s->line = line;
		s->file = file;
		s->n = r.n;
		s->seq_start = r.seq_start;
		struct cur t = c; /* c itself never escapes: it stays in registers */
		if ((err = run_rare(&t, h, s, op)))
			return err;
		c = t;
		addr = s->addr;
		line = s->line;
		file = s->file;
		r.n = s->n;
		r.seq_start = s->seq_start;
	}
	s->n = r.n;
	s->seq_start = r.seq_start;
	if (s->n > s->seq_start) { /* a truncated program: close its last sequence */
		s->addr = s->rows[s->n - 1].addr + 1;
		return emit_row(s, true);
	}
	return 0;
}

/* Orders sequences by start address. */
static int seq_cmp(const void *a, const void *b)
{
	const struct seqr *x = a, *y = b;

	return CMP3(x->lo, y->lo) ?: CMP3(x->start, y->start);
}

/* Puts the sequences in address order into l->rows, dropping empty ones, the ones the linker
 * discarded (address 0 or a tombstone) and ones overlapping an earlier one. */
static int order_rows(struct lstate *s, struct lines *l)
{
	bool in_order = s->n == (s->nseqs ? s->seqs[s->nseqs - 1].end : 0);

	for (size_t i = 0; i < s->nseqs && in_order; i++) {
		const struct seqr *q = &s->seqs[i];
		in_order = q->lo < q->hi && q->lo && q->lo < UINT64_MAX - 1 &&
			   (!i || q->lo >= s->seqs[i - 1].hi);
	}
	if (in_order) { /* the usual case: take the rows as they are */
		struct row *r = realloc(s->rows, (s->n ? s->n : 1) * sizeof(*r));
		l->rows = r ? r : s->rows;
		l->n = s->n;
		s->rows = NULL;
		return 0;
	}
	if (s->nseqs)
		qsort(s->seqs, s->nseqs, sizeof(*s->seqs), seq_cmp);
	l->rows = malloc((s->n ? s->n : 1) * sizeof(*l->rows));
	if (!l->rows)
		return -ENOMEM;
	uint64_t prev_hi = 0;
	for (size_t i = 0; i < s->nseqs; i++) {
		const struct seqr *q = &s->seqs[i];
		if (q->lo >= q->hi || q->lo == 0 || q->lo >= UINT64_MAX - 1 ||
		    (l->n && q->lo < prev_hi))
			continue;
		memcpy(&l->rows[l->n], &s->rows[q->start], (q->end - q->start) * sizeof(*l->rows));
		l->n += q->end - q->start;
		prev_hi = q->hi;
	}
	return 0;
}

/* Reads a unit's line table; 0, -EINVAL or -ENOMEM. */
static int read_lines(const struct dwarfsym *d, const struct unit *u, struct lines *l)
{
	struct lhdr h;
	struct lstate s = { 0 };
	int err;

	if (!u->has_stmt)
		return -ENOENT;
	err = read_lhdr(d, u, &h, l);
	if (!err)
		err = run_program(&h, &s);
	if (!err)
		err = order_rows(&s, l);
	free(s.rows);
	free(s.seqs);
	return err;
}


/* Full path of file index i of a unit's line table, or NULL. */
static const char *file_path(struct dwarfsym *d, struct unit *u, uint64_t i)
{
	struct lines *l = &u->lines;

	if (i >= l->nfiles || !l->files[i].name)
		return NULL;
	struct fileent *f = &l->files[i];
	if (f->path)
		return f->path;
	const char *dir = f->dir < l->ndirs ? l->dirs[f->dir] : NULL;

	if (dir == u->comp_dir)
		dir = NULL;
	if (f->name[0] == '/')
		f->path = f->name;
	else if (dir && dir[0] == '/')
		f->path = arena_path(d, dir, f->name, NULL);
	else
		f->path = arena_path(d, u->comp_dir, dir, f->name);
	return f->path;
}

/* ---- scopes ---- */

struct builder {
	struct dwarfsym *d;
	struct unit *u;
	struct node *nodes;
	size_t nn, cap_nodes;
	struct nrange *r;
	size_t nr, cap_r;
	uint32_t cur_node, cur_depth; /* for the range callback */
};

/* Range callback: records one range of the node being added. */
static int add_nrange(void *ctx, uint64_t lo, uint64_t hi)
{
	struct builder *b = ctx;

	if (VEC_GROW(b->r, b->cap_r, b->nr + 1))
		return -ENOMEM;
	b->r[b->nr++] = (struct nrange){ lo, hi, b->cur_node, b->cur_depth };
	return 0;
}

/* Adds a node for a function or inlined call with its ranges; returns its index + 1, 0 when it
 * has no ranges, or -ENOMEM. */
static int64_t add_node(struct builder *b, const struct die *die, uint64_t off, uint32_t parent,
			uint32_t depth)
{
	if (VEC_GROW(b->nodes, b->cap_nodes, b->nn + 1))
		return -ENOMEM;
	const char *name = die->linkage && mangled(die->linkage) ? die->linkage : die->name;
	b->nodes[b->nn] = (struct node){
		.origin = die->origin,
		.name = name ? name : die->linkage,
		.parent = parent,
		.call_file = (uint32_t)die->call_file,
		.call_line = (uint32_t)die->call_line,
	};
	b->cur_node = b->nn + 1;
	b->cur_depth = depth;
	int n = die_ranges(b->d, b->u, die, add_nrange, b);
	if (n < 0)
		return n;
	if (n == 0)
		return 0;
	return ++b->nn;
}

/* Walk state of one nesting level. */
struct level {
	uint32_t node, depth; /* innermost enclosing node (index + 1) and its depth + 1 */
	bool skip;            /* children are only skipped */
};

#define MAX_LEVELS 512

/* Where the walk goes after an interesting DIE: into its children with this level, or past
 * them. Returns false when it skips them. */
static int64_t visit(struct builder *b, const struct die *die, uint64_t off,
		     const struct level *lv, struct level *child)
{
	int64_t id;

	*child = *lv;
	switch (tag_kind(die->tag)) {
	case K_FUNC:
		if (!die_has_pc(die))
			return 0;
		if ((id = add_node(b, die, off, 0, 0)) <= 0)
			return id;
		*child = (struct level){ (uint32_t)id, 1, false };
		return 1;
	case K_INLINE:
		if (!lv->node || !die_has_pc(die))
			return 0;
		if ((id = add_node(b, die, off, lv->node, lv->depth)) <= 0)
			return id;
		*child = (struct level){ (uint32_t)id, lv->depth + 1, false };
		return 1;
	case K_BLOCK:
		return lv->node ? 1 : 0;
	case K_SCOPE:
		return lv->node ? 0 : 1;
	}
	return 0;
}

/* Whether sib is a usable DW_AT_sibling of the DIE at off; moves c there when it is. */
static bool jump_sibling(struct cur *c, const struct dwarfsym *d, const struct unit *u,
			 uint64_t off, uint64_t sib)
{
	if (sib <= off || sib >= u->end)
		return false;
	c->p = d->s[S_INFO].p + sib;
	return true;
}

/* Skips a DIE we do not look into (its code at off already read): to its DW_AT_sibling when it
 * has one (returns true), else past its attribute values (returns false). */
static bool skip_to_sibling(struct cur *c, const struct dwarfsym *d, const struct unit *u,
			    const struct abbrev *a, uint64_t off)
{
	uint64_t sib = 0;

	if (a->sib_off >= 0 && a->sib_form == DW_FORM_ref4 && c->end - c->p >= a->sib_off + 4) {
		uint32_t r; /* the form compilers use, read in place */
		memcpy(&r, c->p + a->sib_off, 4);
		if (jump_sibling(c, d, u, off, u->off + r))
			return true;
	} else if (a->sib_off >= 0) {
		struct cur s = *c;
		struct val v;
		cur_skip(&s, a->sib_off);
		rd_form(&s, d, u, a->sib_form, 0, &v);
		if (!s.bad && v.kind == V_REF && jump_sibling(c, d, u, off, v.u))
			return true;
	}
	for (uint32_t i = 0; i < a->n && !c->bad; i++) {
		const struct attrspec *s = &u->ab.specs[a->first + i];
		if (s->at == DW_AT_sibling) {
			struct val v;
			rd_form(c, d, u, s->form, 0, &v);
			sib = v.kind == V_REF ? v.u : 0;
			continue;
		}
		int n = form_size(s->form, u);
		if (n >= 0)
			cur_skip(c, n);
		else
			skip_var_form(c, s->form, u, 0);
	}
	return !c->bad && jump_sibling(c, d, u, off, sib);
}

/* One DIE of the walk (its code read: abbreviation a, at off): returns 1 when the walk goes
 * into its children with *child as their level, 0 when it goes on past it, or -ENOMEM. */
static inline int walk_die(struct builder *b, struct cur *c, const struct abbrev *a, uint64_t off,
			   const struct level *lv, struct level *child)
{
	const struct dwarfsym *d = b->d;
	const struct unit *u = b->u;
	bool into = a->kind == K_BLOCK ? lv->node != 0 : lv->node == 0;

	*child = (struct level){ 0, 0, true };
	if (lv->skip || a->kind == K_SKIP || ((a->kind == K_BLOCK || a->kind == K_SCOPE) && !into)) {
		if (!a->children) {
			die_skip(c, u, a);
			return 0;
		}
		return skip_to_sibling(c, d, u, a, off) ? 0 : 1;
	}
	if (a->kind == K_BLOCK || a->kind == K_SCOPE) { /* no attribute matters */
		die_skip(c, u, a);
		*child = *lv;
		return a->children;
	}
	struct die die;
	die_read(c, d, u, a, &die);
	int64_t r = visit(b, &die, off, lv, child);
	if (r < 0 || !a->children)
		return r < 0 ? (int)r : 0;
	if (r == 0 && jump_sibling(c, d, u, off, die.sibling))
		return 0;
	if (r == 0)
		child->skip = true;
	return 1;
}

/* Walks a unit's DIEs, adding a node per function and inlined call. 0 or -ENOMEM (damaged
 * DWARF ends the walk early: what was found is kept). */
static int walk_unit(struct builder *b)
{
	const struct dwarfsym *d = b->d;
	const struct unit *u = b->u;
	struct level lv[MAX_LEVELS];
	struct cur c = { d->s[S_INFO].p + u->die, d->s[S_INFO].p + u->end, false };
	int sp = 0;

	const struct abbrev *a = abbrev_find(&u->ab, rd_uleb(&c));
	if (!a || !a->children)
		return 0;
	die_skip(&c, u, a);
	lv[0] = (struct level){ 0, 0, false };
	while (!c.bad && c.p < c.end) {
		uint64_t off = c.p - d->s[S_INFO].p, code = rd_uleb(&c);
		if (!code) {
			if (sp-- == 0)
				break;
			continue;
		}
		if (!(a = abbrev_find(&u->ab, code)))
			break;
		struct level child;
		int r = walk_die(b, &c, a, off, &lv[sp], &child);
		if (r < 0)
			return r;
		if (r == 0)
			continue;
		if (sp + 1 == MAX_LEVELS)
			break;
		lv[++sp] = child;
	}
	return 0;
}

/* Sorts ranges by start, stably: among equal starts the walk's order (a function before what is
 * inlined into it) stays. An LSD radix sort, a pass per byte of the starts that is not the same
 * in all of them. 0 or -ENOMEM. */
static int sort_nranges(struct scratch *sc, struct nrange *r, size_t n)
{
	struct nrange *src = r, *dst;
	uint64_t diff = 0;

	if (n < 2)
		return 0;
	if (VEC_GROW(sc->tmp, sc->cap_tmp, n))
		return -ENOMEM;
	dst = sc->tmp;
	for (size_t i = 1; i < n; i++)
		diff |= r[i].lo ^ r[0].lo;
	for (unsigned shift = 0; shift < 64; shift += 8) {
		size_t count[257] = { 0 };
		if (!((diff >> shift) & 0xff))
			continue;
		for (size_t i = 0; i < n; i++)
			count[((src[i].lo >> shift) & 0xff) + 1]++;
		for (int b = 0; b < 256; b++)
			count[b + 1] += count[b];
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i].lo >> shift) & 0xff]++] = src[i];
		struct nrange *t = src;
		src = dst;
		dst = t;
	}
	if (src != r)
		memcpy(r, src, n * sizeof(*r));
	return 0;
}

/* Segments while flattening (in the scratch buffer). */
struct segs {
	struct seg *v;
	size_t n, cap;
};

/* Appends a segment starting at x (merging with the last one); 0 or -ENOMEM. */
static int push_seg(struct segs *s, uint64_t x, uint32_t node)
{
	if (s->n) {
		struct seg *last = &s->v[s->n - 1];
		if (x <= last->start) {
			last->node = node;
			if (s->n > 1 && s->v[s->n - 2].node == node)
				s->n--;
			return 0;
		}
		if (last->node == node)
			return 0;
	}
	if (VEC_GROW(s->v, s->cap, s->n + 1))
		return -ENOMEM;
	s->v[s->n++] = (struct seg){ x, node };
	return 0;
}

/* Flattens the nested ranges into disjoint segments, each naming its innermost node. */
static int flatten(struct builder *b, struct segs *s)
{
	struct scratch *sc = &b->d->scratch;
	size_t sp = 0;
	int err = 0;

	if (VEC_GROW(sc->stack, sc->cap_stack, b->nr ? b->nr : 1) ||
	    sort_nranges(sc, b->r, b->nr))
		return -ENOMEM;
	struct nrange *stack = sc->stack;
	for (size_t i = 0; i <= b->nr && !err; i++) {
		uint64_t lim = i < b->nr ? b->r[i].lo : UINT64_MAX;
		while (sp && stack[sp - 1].hi <= lim && !err) {
			uint64_t end = stack[--sp].hi;
			err = push_seg(s, end, sp ? stack[sp - 1].node : 0);
		}
		if (i == b->nr || err)
			break;
		stack[sp++] = b->r[i];
		err = push_seg(s, b->r[i].lo, b->r[i].node);
	}
	return err;
}

/* Builds a unit's nodes and leaves its flattened segments in the scratch segments (*nsegs of
 * them); 0 or -errno. */
static int read_scopes(struct dwarfsym *d, struct unit *u, size_t *nsegs)
{
	struct scratch *sc = &d->scratch;
	struct builder b = { .d = d, .u = u, .nodes = sc->nodes, .cap_nodes = sc->cap_nodes,
			     .r = sc->r, .cap_r = sc->cap_r };
	struct segs segs = { sc->segs, 0, sc->cap_segs };
	int err = walk_unit(&b);

	if (!err)
		err = flatten(&b, &segs);
	*nsegs = err ? 0 : segs.n;
	if (!err && b.nn && !(u->scopes.nodes = malloc(b.nn * sizeof(*b.nodes))))
		err = -ENOMEM;
	if (!err && b.nn)
		memcpy(u->scopes.nodes, b.nodes, b.nn * sizeof(*b.nodes));
	u->scopes.nnodes = err ? 0 : b.nn;
	*sc = (struct scratch){ b.nodes, b.r, sc->tmp, sc->stack, segs.v, b.cap_nodes, b.cap_r,
				sc->cap_tmp, sc->cap_stack, segs.cap };
	return err;
}


/* Name of node i (index + 1) of a unit, resolved on first use. */
static const char *node_name(struct dwarfsym *d, struct unit *u, uint32_t i)
{
	struct node *n = &u->scopes.nodes[i - 1];

	if (!n->named) {
		struct named o = { NULL, false };
		if (n->origin && !(n->name && mangled(n->name)))
			o = die_name(d, n->origin, 1);
		if (o.linkage || !n->name)
			n->name = o.name;
		n->named = true;
	}
	return n->name;
}

/* ---- units ---- */

/* The most attributes a unit's root DIE may have for read_unit_die. */
#define ROOT_SPECS 64

/* Finds the abbreviation code in the unit's table without building the table (a library's
 * thousands of units are indexed at init, but their tables are needed only for the units
 * looked up): its tag and attribute specs (at most ROOT_SPECS). 0, or -EINVAL when absent,
 * truncated or too long. */
static int root_abbrev(const struct dwarfsym *d, const struct unit *u, uint64_t code,
		       uint64_t *tag, struct attrspec *specs, uint32_t *n)
{
	struct cur c = sect_cur(&d->s[S_ABBREV], u->abbrev_off);

	for (;;) {
		uint64_t k = rd_uleb(&c);
		if (c.bad || !k)
			return -EINVAL;
		*tag = rd_uleb(&c);
		rd_u8(&c);
		for (*n = 0;;) {
			struct attrspec sp = { 0 };
			sp.at = rd_uleb(&c);
			sp.form = rd_uleb(&c);
			if (sp.form == DW_FORM_implicit_const)
				sp.implicit = rd_sleb(&c);
			if (c.bad)
				return -EINVAL;
			if (!sp.at && !sp.form)
				break;
			if (k == code && *n == ROOT_SPECS)
				return -EINVAL;
			if (k == code)
				specs[(*n)++] = sp;
		}
		if (k == code)
			return 0;
	}
}

/* Reads the attributes of a unit's root DIE that the rest depends on. */
static int read_unit_die(struct dwarfsym *d, struct unit *u, struct die *die)
{
	struct cur c = { d->s[S_INFO].p + u->die, d->s[S_INFO].p + u->end, false };
	struct attrspec specs[ROOT_SPECS];
	uint64_t tag;
	uint32_t n;

	if (root_abbrev(d, u, rd_uleb(&c), &tag, specs, &n))
		return -EINVAL;
	memset(die, 0, sizeof(*die));
	die->tag = tag;
	struct val comp_dir = { 0 };
	for (uint32_t i = 0; i < n && !c.bad; i++) {
		const struct attrspec *s = &specs[i];
		struct val v;
		rd_form(&c, d, u, s->form, s->implicit, &v);
		switch (s->at) {
		case DW_AT_low_pc: die->low = v; break;
		case DW_AT_high_pc: die->high = v; break;
		case DW_AT_ranges: die->ranges = v; break;
		case DW_AT_comp_dir: comp_dir = v; break;
		case DW_AT_stmt_list: u->stmt_list = v.u; u->has_stmt = true; break;
		case DW_AT_addr_base: case DW_AT_GNU_addr_base: u->addr_base = v.u; break;
		case DW_AT_str_offsets_base: u->str_offsets_base = v.u; break;
		case DW_AT_rnglists_base: u->rnglists_base = v.u; break;
		}
	}
	u->tag = tag;
	u->comp_dir = val_str(d, u, &comp_dir);
	val_addr(d, u, &die->low, &u->base);
	return c.bad ? -EINVAL : 0;
}

/* Range callback: records a range of the unit d->units[d->nunits - 1]. */
static int add_urange(void *ctx, uint64_t lo, uint64_t hi)
{
	struct dwarfsym *d = ctx;

	if (VEC_GROW(d->ranges, d->cap_ranges, d->nranges + 1))
		return -ENOMEM;
	d->ranges[d->nranges++] = (struct urange){ lo, hi, (uint32_t)(d->nunits - 1) };
	return 0;
}

/* Adds the ranges of a unit without range attributes from its line table's sequences. */
static int ranges_from_lines(struct dwarfsym *d, struct unit *u)
{
	int err = read_lines(d, u, &u->lines);

	u->lines_state = err ? err : 1;
	if (err)
		return err == -ENOMEM ? err : 0;
	for (size_t i = 0; i < u->lines.n; i++) {
		size_t j = i;
		while (j < u->lines.n && u->lines.rows[j].file != ROW_END)
			j++;
		if (j < u->lines.n && (err = add_urange(d, u->lines.rows[i].addr, u->lines.rows[j].addr)))
			return err;
		i = j;
	}
	return 0;
}

/* Parses a unit header at off into u; returns the next unit's offset, or 0 at the end. */
static uint64_t read_unit_header(const struct dwarfsym *d, uint64_t off, struct unit *u)
{
	struct cur c = sect_cur(&d->s[S_INFO], off);
	uint64_t len = rd_u32(&c);

	memset(u, 0, sizeof(*u));
	u->off = off;
	u->offset_size = 4;
	if (len == 0xffffffff) {
		len = rd_u64(&c);
		u->offset_size = 8;
	}
	if (c.bad || len > (uint64_t)(c.end - c.p) || len < 7)
		return 0;
	u->end = (c.p - d->s[S_INFO].p) + len;
	u->version = rd_u16(&c);
	if (u->version < 2 || u->version > 5)
		return 0;
	if (u->version >= 5) {
		unsigned type = rd_u8(&c);
		u->addr_size = rd_u8(&c);
		u->abbrev_off = rd_un(&c, u->offset_size);
		if (type == DW_UT_type || type == DW_UT_split_type)
			cur_skip(&c, 8 + u->offset_size);
		else if (type == DW_UT_skeleton || type == DW_UT_split_compile)
			cur_skip(&c, 8);
	} else {
		u->abbrev_off = rd_un(&c, u->offset_size);
		u->addr_size = rd_u8(&c);
	}
	if (c.bad || (u->addr_size != 4 && u->addr_size != 8))
		return 0;
	u->die = c.p - d->s[S_INFO].p;
	return u->end;
}

/* Reads every unit header and the address ranges of compile units. */
static int read_units(struct dwarfsym *d)
{
	size_t cap = 0;
	uint64_t off = 0, next;
	struct unit u;

	while (off < d->s[S_INFO].n && (next = read_unit_header(d, off, &u))) {
		if (VEC_GROW(d->units, cap, d->nunits + 1))
			return -ENOMEM;
		d->units[d->nunits++] = u;
		off = next;
		struct unit *up = &d->units[d->nunits - 1];
		struct die die;
		int err = read_unit_die(d, up, &die);
		if (err == -ENOMEM)
			return err;
		if (err || up->tag != DW_TAG_compile_unit)
			continue;
		size_t before = d->nranges;
		int n = die_ranges(d, up, &die, add_urange, d);
		if (n < 0)
			return n;
		if (n == 0 && (err = ranges_from_lines(d, up)))
			return err;
		d->code_units += d->nranges > before;
	}
	return 0;
}

/* Orders unit ranges by start. */
static int urange_cmp(const void *a, const void *b)
{
	const struct urange *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi > y->hi ? -1 : x->hi < y->hi;
}

/* Joins neighbouring ranges of one unit (a function's range and the next, across the padding
 * between them), so the index searched per lookup stays small. */
static void coalesce_ranges(struct dwarfsym *d)
{
	size_t n = 0;

	for (size_t i = 0; i < d->nranges; i++) {
		struct urange *r = &d->ranges[i];
		if (n && d->ranges[n - 1].unit == r->unit && r->lo >= d->ranges[n - 1].lo &&
		    r->lo <= d->ranges[n - 1].hi + 64) {
			if (r->hi > d->ranges[n - 1].hi)
				d->ranges[n - 1].hi = r->hi;
			continue;
		}
		d->ranges[n++] = *r;
	}
	d->nranges = n;
}

/* The unit whose ranges hold addr, or NULL. */
static struct unit *unit_of(struct dwarfsym *d, uint64_t addr)
{
	size_t lo = count_le(d->ranges, d->nranges, sizeof(*d->ranges), addr);

	for (size_t i = lo, k = 0; i-- > 0 && k < 16; k++) /* overlaps are rare and short */
		if (addr < d->ranges[i].hi)
			return &d->units[d->ranges[i].unit];
	return NULL;
}

/* Merges a unit's rows and segments into its points and frees them; 0 or -ENOMEM. */
static int merge_points(struct unit *u, const struct seg *segs, size_t nsegs)
{
	struct lines *l = &u->lines;
	struct point *p = malloc((l->n + nsegs + 1) * sizeof(*p));
	uint32_t line = 0, file = ROW_END, node = 0;
	size_t i = 0, j = 0, n = 0;

	if (!p)
		return -ENOMEM;
	while (i < l->n || j < nsegs) {
		uint64_t a = i == l->n ? segs[j].start : j == nsegs ? l->rows[i].addr
			     : l->rows[i].addr < segs[j].start ? l->rows[i].addr : segs[j].start;
		for (; i < l->n && l->rows[i].addr == a; i++) {
			line = l->rows[i].line;
			file = l->rows[i].file;
		}
		for (; j < nsegs && segs[j].start == a; j++)
			node = segs[j].node;
		if (!n || p[n - 1].line != line || p[n - 1].file != file || p[n - 1].node != node)
			p[n++] = (struct point){ a, line, file, node };
	}
	struct point *shrunk = realloc(p, (n ? n : 1) * sizeof(*p));
	u->points = shrunk ? shrunk : p;
	u->npoints = n;
	free(l->rows);
	l->rows = NULL;
	l->n = 0;
	bindex_build(&u->pbx, u->points, n, sizeof(*u->points)); /* without it: a plain search */
	return 0;
}

/* Reads a unit's line table into u->lines (lines_state set). A unit decoded again after an
 * unload keeps the file table it had: the paths file_path joined for it are in the arena, and a
 * table read anew would join them again, growing the arena with every reload. 0, or -errno of
 * read_lines (-ENOMEM: lines_state stays 0, to try again). */
static int unit_lines(const struct dwarfsym *d, struct unit *u)
{
	struct lines l = { 0 };
	int err = read_lines(d, u, &l);

	if (err == -ENOMEM) {
		free(l.rows), free(l.files), free(l.dirs);
		return err;
	}
	if (u->lines.files) { /* decoded before: the same table, with its joined paths */
		free(l.files), free(l.dirs);
		l.files = u->lines.files, l.nfiles = u->lines.nfiles;
		l.dirs = u->lines.dirs, l.ndirs = u->lines.ndirs;
	}
	u->lines = l;
	u->lines_state = err ? err : 1;
	return err;
}

/* Frees what a unit's decoding made but its file table (see unit_lines): the next lookup in it
 * decodes it again. The names it gave out point into the mapped sections, its paths into the
 * arena: both stay valid. */
static void unit_unload(struct dwarfsym *d, struct unit *u)
{
	abbrevs_release(u);
	free(u->points);
	free(u->pbx.first);
	free(u->scopes.nodes);
	u->points = NULL, u->npoints = 0;
	memset(&u->pbx, 0, sizeof(u->pbx));
	memset(&u->scopes, 0, sizeof(u->scopes));
	u->scopes_state = 0;
	if (u->lines_state > 0) /* a failed read stays failed: there is nothing to read again */
		u->lines_state = 0;
	u->merged = false;
	d->loaded--;
}

/* Decodes a unit's line table and scopes on first use; 0 or -ENOMEM (other failures leave them
 * empty). */
static int unit_load(struct dwarfsym *d, struct unit *u)
{
	size_t nsegs = 0;
	int err;

	if (u->merged)
		return 0;
	if (!u->lines_state && (err = unit_lines(d, u)) == -ENOMEM)
		return err;
	err = unit_abbrevs(d, u);
	if (!err)
		err = read_scopes(d, u, &nsegs);
	if (err == -ENOMEM || merge_points(u, d->scratch.segs, nsegs)) {
		free(u->scopes.nodes); /* not remembered: may work next time */
		u->scopes.nodes = NULL;
		u->scopes.nnodes = 0;
		return -ENOMEM;
	}
	u->scopes_state = err ? err : 1;
	u->merged = true;
	d->loaded++;
	/* what decoding read is in the unit's arrays now: dropped every few units (each drop
	 * makes the next reads fault the pages in again) */
	if (++d->decoded % DROP_EVERY_UNITS == 0)
		drop_pages(d);
	return 0;
}

/* ---- resident pages ----
 * Indexing the units reads the head of every unit, and the kernel maps 64 KiB around each page
 * read: a large debug file was all resident after init (libpython's 12 MB, libc's 8 MB of
 * sections: two thirds of firn's RSS in a system-wide recording). What init and each unit's
 * decoding read is in arrays of their own by then, so the pages are dropped from this process's
 * page tables (MADV_DONTNEED on private read-only file mappings: they stay in the page cache,
 * and a later read maps them again, as the names a lookup returns are read). */

/* Whether p starts a read-only private mapping of a file of at least len bytes in this process:
 * libelf maps a file it can, and reads one it cannot into allocated memory, which dropping would
 * zero. */
static bool file_mapping_at(const void *p, size_t len)
{
	struct procmap m;

	if (!p || !len || procmap_read(&m, getpid()))
		return false;
	const struct procmap_entry *e = procmap_find(&m, (uintptr_t)p);
	bool ok = e && e->start == (uintptr_t)p && e->kind == PROCMAP_FILE && e->inode && !e->w &&
		  !e->shared && e->end - e->start >= len;
	procmap_release(&m);
	return ok;
}

/* Notes the mappings d's sections point into, for drop_pages. */
static void note_mappings(struct dwarfsym *d)
{
	size_t len = 0;
	char *raw = elf_rawfile(d->elf, &len);

	if (file_mapping_at(raw, len))
		d->mapped[0].p = raw, d->mapped[0].len = len;
	if (d->cached.map)
		d->mapped[1].p = d->cached.map, d->mapped[1].len = d->cached.len;
}

/* Takes the pages of d's mappings out of this process's resident set (see above). */
static void drop_pages(const struct dwarfsym *d)
{
	for (size_t i = 0; i < 2; i++)
		if (d->mapped[i].len)
			madvise(d->mapped[i].p, d->mapped[i].len, MADV_DONTNEED);
}

/* The Rss (bytes) of the mapping of this process that starts at p, from /proc/self/smaps; 0 when
 * none does or it cannot be read. */
static size_t smaps_rss(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	char line[512];
	bool in = false;
	unsigned long lo, hi, kb = 0;

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in = lo == (uintptr_t)p;
		else if (in && sscanf(line, "Rss: %lu kB", &kb) == 1)
			break;
	}
	if (f)
		fclose(f);
	return in ? (size_t)kb * 1024 : 0;
}

void dwarfsym_drop_pages(const struct dwarfsym *d)
{
	if (d)
		drop_pages(d);
}

void dwarfsym_trim(struct dwarfsym *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nunits; i++) {
		struct unit *u = &d->units[i];
		if (u->merged && u->used != d->epoch)
			unit_unload(d, u);
		else
			abbrevs_release(u);
	}
	d->epoch++;
}

size_t dwarfsym_units_loaded(const struct dwarfsym *d)
{
	return d->loaded;
}

void dwarfsym_pages(const struct dwarfsym *d, size_t *mapped, size_t *resident)
{
	*mapped = *resident = 0;
	for (size_t i = 0; i < 2; i++) {
		if (!d->mapped[i].len)
			continue;
		*mapped += d->mapped[i].len;
		*resident += smaps_rss(d->mapped[i].p);
	}
}

/* ---- lifecycle ---- */

/* Which of our sections a section name is (".debug_X" or ".zdebug_X"), or -1. */
static int sect_index(const char *name, bool *gnu_compressed)
{
	*gnu_compressed = !strncmp(name, ".zdebug_", 8);
	if (strncmp(name, ".debug_", 7) && !*gnu_compressed)
		return -1;
	name += *gnu_compressed ? 8 : 7;
	for (int i = 0; i < S_NR; i++)
		if (!strcmp(name, sect_names[i]))
			return i;
	return -1;
}

/* A compressed section of ours (s[i]): its section and size in the file. */
struct zsect {
	int i;
	Elf_Scn *scn;
	uint64_t zsize;
	bool gnu;
};

/* The name of z's section in the cache: ".debug_X" or ".zdebug_X". */
static void zsect_name(const struct zsect *z, char out[DEBUG_CACHE_NAME_LEN])
{
	snprintf(out, DEBUG_CACHE_NAME_LEN, "%s%s", z->gnu ? ".zdebug_" : ".debug_",
		 sect_names[z->i]);
}

/* Inflates one compressed section with libelf (which then owns the bytes) into d->s. */
static void inflate_sect(struct dwarfsym *d, const struct zsect *z)
{
	if (z->gnu ? elf_compress_gnu(z->scn, 0, 0) < 0 : elf_compress(z->scn, 0, 0) < 0)
		return;
	Elf_Data *data = elf_getdata(z->scn, NULL);
	if (data && data->d_buf && data->d_size) {
		d->s[z->i] = (struct sect){ data->d_buf, data->d_size };
		d->inflated++;
	}
}

/* Stores the compressed sections' bytes in the cache, for the next reader of build_id. */
static void cache_store(struct dwarfsym *d, struct debug_cache *c, const char *build_id,
			const struct file_id *id, const struct zsect *z, size_t nz)
{
	struct debug_cache_sect cs[S_NR];
	size_t n = 0;

	for (size_t k = 0; k < nz; k++) {
		if (!d->s[z[k].i].p)
			continue;
		cs[n] = (struct debug_cache_sect){ .zsize = z[k].zsize, .data = d->s[z[k].i].p,
						   .size = d->s[z[k].i].n };
		zsect_name(&z[k], cs[n++].name);
	}
	debug_cache_put(c, build_id, id, cs, n);
}

/* Fills d->s with the compressed sections: mapped from the debug section cache when it has
 * them for this file, else inflated (and then stored there). fd: the file, for its identity. */
static void read_compressed(struct dwarfsym *d, Elf *elf, int fd, const struct zsect *z,
			    size_t nz)
{
	char build_id[2 * 64 + 1], name[DEBUG_CACHE_NAME_LEN];
	struct file_id id = { 0 };
	struct stat st;
	struct debug_cache *c = NULL;
	unsigned before = d->inflated;

	if (elffile_build_id(elf, build_id, sizeof(build_id)) > 0 && !fstat(fd, &st) && S_ISREG(st.st_mode)) {
		id = file_id_of(&st);
		c = debug_cache_open_env();
	}
	if (c)
		debug_cache_map(c, build_id, &id, &d->cached); /* failures leave it empty */
	for (size_t k = 0; k < nz; k++) {
		uint64_t size;
		zsect_name(&z[k], name);
		const void *p = debug_cache_find(&d->cached, name, z[k].zsize, &size);
		if (p && size) {
			d->s[z[k].i] = (struct sect){ p, size };
			d->from_cache++;
		} else {
			inflate_sect(d, &z[k]);
		}
	}
	if (c && d->inflated != before)
		cache_store(d, c, build_id, &id, z, nz);
	debug_cache_close(c);
}

/* Reads the DWARF sections of elf (open at fd) into d->s, compressed ones through
 * read_compressed. */
static int read_sections(struct dwarfsym *d, Elf *elf, int fd)
{
	size_t shstrndx, nz = 0;
	Elf_Scn *scn = NULL;
	struct zsect z[S_NR];
	unsigned seen = 0;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -ENOEXEC;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		bool gnu;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		int i = sect_index(name, &gnu);
		if (i < 0 || (seen & 1u << i))
			continue;
		seen |= 1u << i;
		if ((sh.sh_flags & SHF_COMPRESSED) || gnu) {
			z[nz++] = (struct zsect){ i, scn, sh.sh_size, gnu };
			continue;
		}
		Elf_Data *data = elf_getdata(scn, NULL);
		if (data && data->d_buf && data->d_size)
			d->s[i] = (struct sect){ data->d_buf, data->d_size };
	}
	if (nz)
		read_compressed(d, elf, fd, z, nz);
	for (int i = S_STR; i <= S_LINE_STR; i++) /* strings must end inside their section */
		while (d->s[i].n && d->s[i].p[d->s[i].n - 1])
			d->s[i].n--;
	return d->s[S_INFO].p ? 0 : -ENODATA;
}

/* Opens fd with libelf and reads the sections and the unit index. */
static int dwarfsym_init(struct dwarfsym *d, int fd)
{
	struct elffile ef;
	GElf_Ehdr eh;
	int err;

	/* Mapped, not read: the debug sections of a large binary are tens of megabytes, and copying
	 * them costs more than all the decoding. A file truncated in place while mapped (cp over it;
	 * linkers and package managers replace the inode instead) would raise SIGBUS. */
	if (elffile_open_fd(&ef, fd, ELFFILE_MAPPED))
		return -ENOEXEC;
	d->elf = ef.elf; /* d ends it (fd is not ef's: there is nothing else to close) */
	if (!gelf_getehdr(d->elf, &eh))
		return -ENOEXEC;
	if (eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return -ENODATA; /* big-endian DWARF is not read */
	if ((err = read_sections(d, d->elf, fd)))
		return err;
	elf_cntl(d->elf, ELF_C_FDDONE);
	if ((err = read_units(d)))
		return err;
	if (d->nranges)
		qsort(d->ranges, d->nranges, sizeof(*d->ranges), urange_cmp);
	coalesce_ranges(d);
	note_mappings(d);
	drop_pages(d); /* the units' heads were read to index them */
	return 0;
}

struct dwarfsym *dwarfsym_new_fd(int fd)
{
	struct dwarfsym *d = calloc(1, sizeof(*d));
	int dfd, err;

	if (!d)
		return NULL;
	dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dfd < 0) {
		err = -errno;
	} else {
		err = dwarfsym_init(d, dfd);
		close(dfd);
	}
	if (err) {
		dwarfsym_free(d);
		errno = -err;
		return NULL;
	}
	return d;
}

/* Frees what a unit decoded. */
static void unit_release(struct unit *u)
{
	abbrevs_release(u);
	free(u->lines.rows);
	free(u->points);
	free(u->pbx.first);
	free(u->lines.files);
	free(u->lines.dirs);
	free(u->scopes.nodes);
}

void dwarfsym_free(struct dwarfsym *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nunits; i++)
		unit_release(&d->units[i]);
	free(d->units);
	free(d->ranges);
	free(d->scratch.nodes);
	free(d->scratch.r);
	free(d->scratch.tmp);
	free(d->scratch.stack);
	free(d->scratch.segs);
	free(d->names);
	hashtab_release(&d->name_index);
	while (d->arena) {
		struct arena_chunk *next = d->arena->next;
		free(d->arena);
		d->arena = next;
	}
	if (d->elf)
		elf_end(d->elf);
	debug_cache_unmap(&d->cached);
	free(d);
}

void dwarfsym_sections(const struct dwarfsym *d, unsigned *inflated, unsigned *from_cache)
{
	*inflated = d->inflated;
	*from_cache = d->from_cache;
}

size_t dwarfsym_units(const struct dwarfsym *d)
{
	return d->code_units;
}

int dwarfsym_lookup(struct dwarfsym *d, uint64_t vaddr, struct dwarfsym_frame *frames, int max)
{
	struct unit *u = unit_of(d, vaddr);

	if (!u || max <= 0)
		return 0;
	if (unit_load(d, u))
		return -ENOMEM;
	u->used = d->epoch;
	size_t k = bindex_count_le(&u->pbx, u->points, u->npoints, sizeof(*u->points), vaddr);
	const struct point *pt = k ? &u->points[k - 1] : NULL;
	bool line = pt && pt->file != ROW_END;
	uint32_t node = pt ? pt->node : 0;
	frames[0] = (struct dwarfsym_frame){
		.name = node ? node_name(d, u, node) : NULL,
		.file = line ? file_path(d, u, pt->file) : NULL,
		.line = line ? pt->line : 0,
	};
	int n = 1;
	while (node && n < max) {
		const struct node *nd = &u->scopes.nodes[node - 1];
		if (!nd->parent)
			break;
		frames[n++] = (struct dwarfsym_frame){
			.name = node_name(d, u, nd->parent),
			.file = file_path(d, u, nd->call_file),
			.line = nd->call_line,
		};
		node = nd->parent;
	}
	return n;
}
