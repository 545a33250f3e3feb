/* Interning resolved frames into a profile, with the location and function caches. */
#include "intern.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "vec.h"

/* The longest inline chain interned (the resolvers keep fewer). */
#define MAX_LINES 64

void intern_init(struct intern *in)
{
	memset(in, 0, sizeof(*in));
}

/* Empties the location cache. */
static void locs_clear(struct intern *in)
{
	free(in->slots);
	in->slots = NULL;
	in->nslots = in->n = 0;
}

void intern_release(struct intern *in)
{
	locs_clear(in);
	free(in->fns);
	free(in->map_ids);
	intern_init(in);
}

bool intern_sync(struct intern *in, struct profile *p)
{
	if (in->p == p && p->nmappings >= in->max_mapping_id &&
	    p->nlocations >= in->max_location_id)
		return false;
	locs_clear(in);
	free(in->fns);
	in->fns = NULL;
	in->nfn_slots = in->nfns = 0;
	in->p = p;
	in->max_mapping_id = in->max_location_id = 0;
	if (in->map_ids)
		memset(in->map_ids, 0, in->nmap_ids * sizeof(*in->map_ids));
	return true;
}

void intern_forget_names(struct intern *in)
{
	in->nfns = 0;
	if (in->fns)
		memset(in->fns, 0, in->nfn_slots * sizeof(*in->fns));
}

/* Mixes a cache key into a slot hash. */
static uint64_t slot_hash(uint64_t key, uint64_t addr, uint32_t flags)
{
	return hash_mix64(key * 0x9e3779b97f4a7c15ULL ^ addr ^ (uint64_t)flags << 56);
}

/* Finds the slot of a key: the filled one or the empty one where it goes. */
static struct intern_slot *loc_find(struct intern_slot *slots, size_t nslots, uint32_t key,
				    uint64_t addr, uint32_t flags)
{
	size_t mask = nslots - 1;

	for (size_t i = slot_hash(key, addr, flags) & mask;; i = (i + 1) & mask) {
		struct intern_slot *sl = &slots[i];
		if (!sl->loc_id || (sl->key == key && sl->addr == addr && sl->flags == flags))
			return sl;
	}
}

/* Makes room for one more location (load factor <= 1/2); 0 or -ENOMEM. */
static int loc_reserve(struct intern *in)
{
	if ((in->n + 1) * 2 <= in->nslots)
		return 0;
	size_t nslots = in->nslots ? in->nslots * 2 : 4096;
	struct intern_slot *slots = calloc(nslots, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < in->nslots; i++) {
		const struct intern_slot *o = &in->slots[i];
		if (o->loc_id)
			*loc_find(slots, nslots, o->key, o->addr, o->flags) = *o;
	}
	free(in->slots);
	in->slots = slots;
	in->nslots = nslots;
	return 0;
}

struct intern_slot *intern_slot(struct intern *in, uint32_t key, uint64_t addr, uint32_t flags)
{
	if (loc_reserve(in))
		return NULL;
	return loc_find(in->slots, in->nslots, key, addr, flags);
}

int64_t intern_fill(struct intern *in, struct intern_slot *sl, uint32_t key, uint64_t addr,
		    uint32_t flags, int64_t id, unsigned reason, bool lines)
{
	if (id < 0)
		return id;
	*sl = (struct intern_slot){ addr, key, (uint32_t)id, (uint16_t)flags, (uint8_t)reason,
				    lines };
	in->n++;
	return id;
}

/* Slot of (raw, file) pointers: the filled one or the empty one where it goes. */
static struct intern_fn_slot *fn_find(struct intern_fn_slot *slots, size_t nslots,
				      const char *raw, const char *file)
{
	size_t mask = nslots - 1;
	uint64_t h = slot_hash((uintptr_t)raw, (uintptr_t)file, 0);

	for (size_t i = h & mask;; i = (i + 1) & mask) {
		struct intern_fn_slot *sl = &slots[i];
		if (!sl->id || (sl->raw == raw && sl->file == file))
			return sl;
	}
}

/* Makes room for one more function (load factor <= 1/2); 0 or -ENOMEM. */
static int fn_reserve(struct intern *in)
{
	if ((in->nfns + 1) * 2 <= in->nfn_slots)
		return 0;
	size_t nslots = in->nfn_slots ? in->nfn_slots * 2 : 4096;
	struct intern_fn_slot *slots = calloc(nslots, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < in->nfn_slots; i++)
		if (in->fns[i].id)
			*fn_find(slots, nslots, in->fns[i].raw, in->fns[i].file) = in->fns[i];
	free(in->fns);
	in->fns = slots;
	in->nfn_slots = nslots;
	return 0;
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
	const char *raw = f->system_name ? f->system_name : f->name;

	if (fn_reserve(in))
		return -ENOMEM;
	struct intern_fn_slot *sl = fn_find(in->fns, in->nfn_slots, raw, f->file);
	if (sl->id)
		return sl->id;
	int64_t id = profile_function(in->p, f->name, raw, f->file ? f->file : "", 0);
	if (id > 0) {
		*sl = (struct intern_fn_slot){ raw, f->file, (uint64_t)id };
		in->nfns++;
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

/* The location of l (found by a symbolizer_*_find call just before): cached, else resolved now
 * and added to the profile (resolving frees no names: names_check before the find holds). */
static int64_t lookup(struct intern *in, struct symbolizer *s, struct symbolizer_loc *l)
{
	int64_t mid = 0;

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
	int err;

	intern_sync(in, p);
	names_check(in, s);
	if ((err = symbolizer_user_find(s, pid, addr, is_return_address, &l)))
		return err;
	return lookup(in, s, &l);
}

int64_t intern_file(struct intern *in, struct symbolizer *s, struct profile *p, const char *path,
		    uint64_t vaddr, bool is_return_address)
{
	struct symbolizer_loc l;
	int err;

	intern_sync(in, p);
	names_check(in, s);
	if ((err = symbolizer_file_find(s, path, vaddr, is_return_address, &l)))
		return err;
	return lookup(in, s, &l);
}

int64_t intern_kernel(struct intern *in, struct symbolizer *s, struct profile *p, uint64_t addr,
		      bool is_return_address)
{
	struct symbolizer_loc l;
	int err;

	intern_sync(in, p);
	names_check(in, s);
	if ((err = symbolizer_kernel_find(s, addr, is_return_address, &l)))
		return err;
	return lookup(in, s, &l);
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
