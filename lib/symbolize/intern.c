/* Interning resolved frames into a profile, with the location and function caches. */
#include "symbolize/intern.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/vec.h"

/* The longest inline chain interned (the resolvers keep fewer). */
#define MAX_LINES 64

void intern_init(struct intern *in)
{
	memset(in, 0, sizeof(*in));
}

/* Empties the location cache. */
static void locs_clear(struct intern *in)
{
	free(in->locs);
	in->locs = NULL;
	in->n = in->cap_locs = 0;
	hashtab_release(&in->loc_index);
}

/* Empties the function cache. */
static void fns_clear(struct intern *in)
{
	free(in->fns);
	in->fns = NULL;
	in->nfns = in->cap_fns = 0;
	hashtab_release(&in->fn_index);
}

void intern_release(struct intern *in)
{
	locs_clear(in);
	fns_clear(in);
	free(in->map_ids);
	intern_init(in);
}

bool intern_sync(struct intern *in, struct profile *p)
{
	if (in->p == p && p->nmappings >= in->max_mapping_id &&
	    p->nlocations >= in->max_location_id)
		return false;
	locs_clear(in);
	fns_clear(in);
	in->p = p;
	in->max_mapping_id = in->max_location_id = 0;
	if (in->map_ids)
		memset(in->map_ids, 0, in->nmap_ids * sizeof(*in->map_ids));
	return true;
}

void intern_forget_names(struct intern *in)
{
	in->nfns = 0;
	hashtab_clear(&in->fn_index);
}

/* Mixes a cache key into a slot hash. */
static uint64_t slot_hash(uint64_t key, uint64_t addr, uint32_t flags)
{
	return hash_mix64(key * 0x9e3779b97f4a7c15ULL ^ addr ^ (uint64_t)flags << 56);
}

/* Whether cached location id has the key (a struct intern_slot) of the lookup. */
static bool loc_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct intern_slot *l = &((const struct intern *)ctx)->locs[id], *k = key;

	return l->key == k->key && l->addr == k->addr && l->flags == k->flags;
}

struct intern_slot *intern_slot(struct intern *in, uint32_t key, uint64_t addr, uint32_t flags)
{
	struct intern_slot k = { .addr = addr, .key = key, .flags = (uint16_t)flags };

	if (VEC_GROW(in->locs, in->cap_locs, in->n + 1) ||
	    hashtab_reserve(&in->loc_index, in->n + 1))
		return NULL;
	int64_t id = hashtab_find(&in->loc_index, slot_hash(key, addr, flags), loc_eq, in, &k);
	if (id >= 0)
		return &in->locs[id];
	in->locs[in->n].loc_id = 0; /* the room past the last one: empty until intern_fill */
	return &in->locs[in->n];
}

int64_t intern_fill(struct intern *in, struct intern_slot *sl, uint32_t key, uint64_t addr,
		    uint32_t flags, int64_t id, unsigned reason, bool lines)
{
	if (id < 0)
		return id;
	*sl = (struct intern_slot){ addr, key, (uint32_t)id, (uint16_t)flags, (uint8_t)reason,
				    lines };
	hashtab_add(&in->loc_index, slot_hash(key, addr, flags), in->n++); /* reserved: no fail */
	return id;
}

/* Whether cached function id has the (raw, file) pointers of the lookup. */
static bool fn_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct intern_fn_slot *f = &((const struct intern *)ctx)->fns[id], *k = key;

	return f->raw == k->raw && f->file == k->file;
}

int64_t intern_mapping(struct intern *in, uint64_t start, uint64_t limit, uint64_t offset,
		       const char *name, const char *build_id, enum frame_kind kind)
{
	int64_t id = profile_add_mapping(in->p, start, limit, offset, name, build_id);

	if (id < 0)
		return id;
	in->p->mappings[id - 1].kind = kind;
	if ((uint64_t)id > in->max_mapping_id)
		in->max_mapping_id = id;
	return id;
}

/* The function id of a frame, cached by its (system name, file) pointers. */
static int64_t function_id(struct intern *in, const struct resolved_frame *f)
{
	struct intern_fn_slot k = { f->system_name ? f->system_name : f->name, f->file, 0 };
	uint64_t h = slot_hash((uintptr_t)k.raw, (uintptr_t)k.file, 0);

	if (VEC_GROW(in->fns, in->cap_fns, in->nfns + 1) ||
	    hashtab_reserve(&in->fn_index, in->nfns + 1))
		return -ENOMEM;
	int64_t at = hashtab_find(&in->fn_index, h, fn_eq, in, &k);
	if (at >= 0)
		return in->fns[at].id;
	int64_t id = profile_function(in->p, f->name, k.raw, f->file ? f->file : "", 0);
	if (id > 0) {
		k.id = id;
		in->fns[in->nfns] = k;
		hashtab_add(&in->fn_index, h, in->nfns++); /* reserved: cannot fail */
	}
	return id;
}

int64_t intern_location(struct intern *in, uint64_t mapping_id, uint64_t addr,
			const struct resolved_frame *f, int n)
{
	struct profile_line lines[MAX_LINES];

	if (n > MAX_LINES)
		n = MAX_LINES;
	for (int i = 0; i < n; i++) {
		int64_t fid = function_id(in, &f[i]);
		if (fid < 0)
			return fid;
		lines[i] = (struct profile_line){ (uint64_t)fid, f[i].line };
	}
	if (n) {
		struct profile_mapping *m = &in->p->mappings[mapping_id - 1];
		m->has_functions = true;
		m->has_filenames |= f[0].file != NULL;
		m->has_line_numbers |= f[0].line != 0;
		m->has_inline_frames |= n > 1; /* (set already where DWARF was read) */
	}
	int64_t id = profile_add_location(in->p, mapping_id, addr, lines, n);
	if (id > 0 && (uint64_t)id > in->max_location_id)
		in->max_location_id = id;
	return id;
}

/* Forgets the function ids cached by name pointers when the symbolizer has freed names since. */
static void names_check(struct intern *in, const struct symbolizer *s)
{
	uint64_t gen = symbolizer_names_gen(s);

	if (gen != in->names_gen) {
		intern_forget_names(in);
		in->names_gen = gen;
	}
}

/* The profile mapping id of a symbolizer mapping, added on first use; a file's mapping grows to
 * the largest limit the processes that share it give. */
static int64_t mapping_of(struct intern *in, const struct symbolizer_mapping *m)
{
	if (VEC_GROW_ZEROED(in->map_ids, in->nmap_ids, (size_t)m->key + 1))
		return -ENOMEM;
	uint64_t id = in->map_ids[m->key];
	if (id) {
		struct profile_mapping *pm = &in->p->mappings[id - 1];
		if (m->limit > pm->limit)
			pm->limit = m->limit;
		return (int64_t)id;
	}
	int64_t nid = intern_mapping(in, m->start, m->limit, m->offset, m->name, m->build_id,
				     m->kind);
	if (nid < 0)
		return nid;
	in->p->mappings[nid - 1].has_inline_frames = m->inline_frames;
	in->map_ids[m->key] = (uint64_t)nid;
	return nid;
}

/* Counts a lookup by the outcome its slot keeps and returns its location. */
static int64_t count(struct intern *in, const struct intern_slot *sl)
{
	in->counts[sl->reason]++;
	in->last_reason = sl->reason;
	in->with_lines += sl->lines;
	return sl->loc_id;
}

/* Readies in for a lookup into p with s: the caches of p, and no function cached by a name s
 * has freed. Before the symbolizer_*_find call (which lookup then trusts). */
static void begin(struct intern *in, struct symbolizer *s, struct profile *p)
{
	intern_sync(in, p);
	names_check(in, s);
}

/* The location of l, which a symbolizer_*_find call just after begin filled (found: its
 * result, returned when it failed): cached, else resolved now and added to the profile
 * (resolving frees no names: names_check before the find holds). */
static int64_t lookup(struct intern *in, struct symbolizer *s, int found,
		      struct symbolizer_loc *l)
{
	int64_t mid = 0;

	if (found)
		return found;
	if (l->map.key && (mid = mapping_of(in, &l->map)) < 0)
		return mid;
	struct intern_slot *sl = intern_slot(in, l->key, l->addr, l->flags);
	if (!sl)
		return -ENOMEM;
	if (sl->loc_id)
		return count(in, sl);
	int err = symbolizer_resolve(s, l);
	if (err)
		return err;
	if (!mid && (mid = mapping_of(in, &l->map)) < 0)
		return mid;
	int64_t id = intern_location(in, (uint64_t)mid, l->addr, l->frames, l->n);
	if (intern_fill(in, sl, l->key, l->addr, l->flags, id, l->reason,
			l->n && l->frames[0].line) < 0)
		return id;
	return count(in, sl);
}

int64_t intern_user(struct intern *in, struct symbolizer *s, struct profile *p, pid_t pid,
		    uint64_t addr, bool is_return_address)
{
	struct symbolizer_loc l;

	begin(in, s, p);
	return lookup(in, s, symbolizer_user_find(s, pid, addr, is_return_address, &l), &l);
}

int64_t intern_file(struct intern *in, struct symbolizer *s, struct profile *p, const char *path,
		    uint64_t vaddr, bool is_return_address)
{
	struct symbolizer_loc l;

	begin(in, s, p);
	return lookup(in, s, symbolizer_file_find(s, path, vaddr, is_return_address, &l), &l);
}

int64_t intern_kernel(struct intern *in, struct symbolizer *s, struct profile *p, uint64_t addr,
		      bool is_return_address)
{
	struct symbolizer_loc l;

	begin(in, s, p);
	return lookup(in, s, symbolizer_kernel_find(s, addr, is_return_address, &l), &l);
}

void intern_stats(const struct intern *in, struct intern_stats *st)
{
	*st = (struct intern_stats){
		.resolved = in->counts[SYMBOLIZER_RESOLVED],
		.no_process = in->counts[SYMBOLIZER_NO_PROCESS],
		.no_mapping = in->counts[SYMBOLIZER_NO_MAPPING],
		.no_symbol = in->counts[SYMBOLIZER_NO_SYMBOL],
		.no_file = in->counts[SYMBOLIZER_NO_FILE],
		.no_jit_symbol = in->counts[SYMBOLIZER_NO_JIT_SYMBOL],
		.with_lines = in->with_lines,
		.cached_locations = in->n,
	};
}
