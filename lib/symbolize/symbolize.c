/* The symbolizer front: resolving user addresses (through the process snapshots of snapshot.c and
 * the file cache of filecache.c), files looked up by path, the vDSO, kallsyms, demangling, and
 * the mapping keys its callers cache what they make of an address by. */
#include "symbolize/symbolize.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/demangle.h"
#include "base/diag.h"
#include "base/fileid.h"
#include "base/hash.h"
#include "base/hashtab.h"
#include "base/pidindex.h"
#include "base/safeopen.h"
#include "base/vec.h"
#include "elf/debuginfo.h"
#include "elf/dwarfsym.h"
#include "elf/elfsym.h"
#include "elf/funcbounds.h"
#include "elf/gopclntab.h"
#include "elf/perfmap.h"
#include "proc/procmap.h"
#include "symbolize/filecache.h"
#include "symbolize/ksym.h"
#include "symbolize/snapshot.h"
#include "symbolize/symbolize_impl.h"

/* Short names of the reasons. */
#define R_RESOLVED SYMBOLIZER_RESOLVED
#define R_NO_PROCESS SYMBOLIZER_NO_PROCESS
#define R_NO_MAPPING SYMBOLIZER_NO_MAPPING
#define R_NO_SYMBOL SYMBOLIZER_NO_SYMBOL
#define R_NO_FILE SYMBOLIZER_NO_FILE
#define R_NO_JIT_SYMBOL SYMBOLIZER_NO_JIT_SYMBOL

#define MAX_FRAMES SYMBOLIZER_MAX_FRAMES

/* What symbolizer_resolve resolves (struct symbolizer_loc.source). */
enum loc_source { LS_UNKNOWN, LS_SNAPMAP, LS_JIT, LS_LOOSE, LS_KERNEL };

/* A file segment's mapping key, shared by every process that maps it: addresses are the file's
 * own (ELF) addresses, so processes of one binary share their cache keys whatever their load
 * addresses. Found by the file's cache key and the mapping's file offset (dev and ino 0: the
 * vDSO). */
struct shared_map {
	struct file_id id; /* of the file; zero for the vDSO */
	uint64_t offset;
	uint32_t key;
};

/* A file looked up by path, not through a process (symbolizer_file_find, ..._frames). */
struct symbolizer_file {
	struct symfile *file;
	char *path;
	uint32_t key;         /* its mapping key; 0 until first used */
};

/* ---- demangling cache ---- */

/* Empties the demangling cache. */
static void dm_clear(struct dm_cache *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->slots[i].name);
	free(c->slots);
	hashtab_release(&c->index);
	memset(c, 0, sizeof(*c));
}

/* The hash of a raw name pointer. */
static uint64_t dm_hash(const char *raw)
{
	return hash_mix64((uintptr_t)raw);
}

/* Whether entry id is the one of raw name pointer key. */
static bool dm_eq(const void *ctx, uint32_t id, const void *key)
{
	return ((const struct dm_cache *)ctx)->slots[id].raw == key;
}

/* The name to show for raw: demangled (cached by the raw pointer, which stays valid while its
 * file is cached) unless the options say not to or it is not mangled. NULL on -ENOMEM. */
static const char *display_name(struct symbolizer *s, const char *raw)
{
	if (!s->opts.demangle || !demangle_candidate(raw))
		return raw;
	struct dm_cache *c = &s->dms;
	int64_t id = hashtab_find(&c->index, dm_hash(raw), dm_eq, c, raw);
	if (id < 0) {
		if (VEC_GROW(c->slots, c->cap, c->n + 1) || hashtab_reserve(&c->index, c->n + 1))
			return NULL;
		char *dm = demangle_name(raw);
		if (!dm && errno == ENOMEM)
			return NULL;
		c->slots[c->n] = (struct dm_slot){ raw, dm };
		hashtab_add(&c->index, dm_hash(raw), c->n); /* reserved: cannot fail */
		id = c->n++;
	}
	return c->slots[id].name ? c->slots[id].name : raw;
}

/* Empties the caches keyed by name pointers, before what they point into is freed, and tells
 * the callers (symbolizer_names_gen). */
void symbolizer_forget_names(struct symbolizer *s)
{
	s->names_gen++;
	dm_clear(&s->dms);
}

uint64_t symbolizer_names_gen(const struct symbolizer *s)
{
	return s->names_gen;
}

/* ---- mapping keys ---- */

/* A key never given before (never 0). */
static uint32_t new_key(struct symbolizer *s)
{
	return ++s->next_key;
}

/* Fills l for an address outside every known mapping: in "[unknown]", cached by its reason. */
static int unknown_loc(struct symbolizer *s, struct symbolizer_loc *l, uint64_t addr,
		       enum symbolizer_reason why)
{
	if (!s->unknown_key)
		s->unknown_key = new_key(s);
	l->key = SYMBOLIZER_KEY_UNKNOWN;
	l->flags = why;
	l->addr = addr;
	l->map = (struct symbolizer_mapping){ .key = s->unknown_key, .kind = FRAME_USER,
					      .name = "[unknown]", .build_id = "" };
	l->source = LS_UNKNOWN;
	return 0;
}

/* Turns resolved frames into l's frames, names demangled unless told not to; 0 or -ENOMEM. */
static int set_frames(struct symbolizer *s, struct symbolizer_loc *l,
		      const struct dwarfsym_frame *fr, int n)
{
	for (int i = 0; i < n; i++) {
		const char *shown = display_name(s, fr[i].name);
		if (!shown)
			return -ENOMEM;
		l->frames[i] = (struct resolved_frame){ shown, fr[i].name, fr[i].file, fr[i].line };
	}
	l->n = n;
	return 0;
}

/* ---- resolving in files ---- */

/* Loads the vDSO's symbols from our own process image (the same for every 64-bit process). */
static int vdso_load(struct symbolizer *s)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR);
	struct procmap self;
	const struct procmap_entry *e;
	int err;

	if (s->vdso_state)
		return s->vdso_state < 0 ? s->vdso_state : 0;
	err = base ? procmap_read(&self, getpid()) : -ENOENT;
	if (!err) {
		e = procmap_find(&self, base);
		err = e ? elfsym_init_memory(&s->vdso, (const void *)(uintptr_t)base, e->end - base)
			: -ENOENT;
		procmap_release(&self);
	}
	s->vdso_state = err ? err : 1;
	return err;
}

/* Whether an indexed file's addresses are resolved with inline frames and lines: by DWARF, or
 * by a Go binary's pclntab. */
static bool file_has_dwarf(const struct symfile *f)
{
	return f && ((f->debug && f->debug->dwarf) || f->go);
}

/* The ELF symbol at vaddr: the debug file's symbol table first, then the binary's. */
static const char *symbol_at(const struct symfile *f, uint64_t vaddr)
{
	const char *name = NULL;

	if (f->debug && !elfsym_lookup(&f->debug->syms, vaddr, &name, NULL))
		return name;
	if (!elfsym_lookup(&f->elf, vaddr, &name, NULL))
		return name;
	return NULL;
}

/* Drops unnamed inner frames of a chain (its outermost frame keeps its place). */
static int drop_unnamed(struct dwarfsym_frame *fr, int n)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		if (fr[i].name || i == n - 1)
			fr[k++] = fr[i];
	return k;
}

/* A Go binary's chain from its pclntab in place of DWARF's n frames, where DWARF has no
 * function there or no inlined frames that the pclntab has (a Go binary without DWARF, or
 * whose DWARF left the inlines out). Returns the frame count, n when DWARF's stays. */
static int resolve_go(const struct symfile *f, uint64_t vaddr, struct dwarfsym_frame *fr, int n)
{
	struct gopclntab_frame gf[MAX_FRAMES];
	int m;

	if (!f->go || n > 1 || (m = gopclntab_lookup(f->go, vaddr, gf, MAX_FRAMES)) < 1 ||
	    (m == n && fr[0].name))
		return n;
	for (int i = 0; i < m; i++)
		fr[i] = (struct dwarfsym_frame){ gf[i].name, gf[i].file, gf[i].line };
	return m;
}

/* Resolves ELF address vaddr of an indexed file into frames (innermost first): DWARF's inline
 * chain with lines (a Go binary's pclntab where DWARF has none), the outermost name falling
 * back to the symbol table. Returns the frame count (0: no function there) or -ENOMEM. */
static int resolve_file(const struct symfile *f, uint64_t vaddr, struct dwarfsym_frame *fr)
{
	int n = 0;

	if (f->debug && f->debug->dwarf)
		n = dwarfsym_lookup(f->debug->dwarf, vaddr, fr, MAX_FRAMES);
	if (n < 0)
		return n;
	n = resolve_go(f, vaddr, fr, n);
	if (n == 0)
		fr[n++] = (struct dwarfsym_frame){ NULL, NULL, 0 };
	if (!fr[n - 1].name && !(fr[n - 1].name = symbol_at(f, vaddr)))
		return 0;
	for (int i = 0; i < n - 1; i++)
		if (!fr[i].name)
			return drop_unnamed(fr, n);
	return n;
}

/* Names code no symbol covers by the function .eh_frame bounds it in: "module+0xSTART", the
 * file's base name and the function's start as an ELF address (the addresses its locations
 * keep), one string per function, kept with the file. 1 frame, 0 when no FDE holds vaddr, or
 * -ENOMEM. */
static int bounds_frame(struct symfile *f, uint64_t vaddr, struct dwarfsym_frame *fr)
{
	ptrdiff_t i = funcbounds_find(&f->bounds, vaddr);

	if (i < 0)
		return 0;
	if (!f->bound_names && !(f->bound_names = calloc(f->bounds.n, sizeof(*f->bound_names))))
		return -ENOMEM;
	if (!f->bound_names[i]) {
		const char *base = f->path ? strrchr(f->path, '/') : NULL;
		base = base ? base + 1 : f->path ? f->path : "";
		if (asprintf(&f->bound_names[i], "%s+0x%" PRIx64, base, f->bounds.r[i].start) < 0) {
			f->bound_names[i] = NULL;
			return -ENOMEM;
		}
	}
	fr[0] = (struct dwarfsym_frame){ f->bound_names[i], NULL, 0 };
	return 1;
}

/* resolve_file, then (no function there) the bounds' name; frames or 0 or -ENOMEM, and
 * whether a symbol (or DWARF) named them in *named. */
static int resolve_named(struct symfile *f, uint64_t vaddr, struct dwarfsym_frame *fr,
			 bool *named)
{
	int n = resolve_file(f, vaddr, fr);

	*named = n > 0;
	return n ? n : bounds_frame(f, vaddr, fr);
}

/* ---- user addresses ---- */



/* Fills l when the snapshot's perf map covers addr (in its FRAME_JIT mapping): 1, else 0, or
 * -ENOMEM. */
static int jit_find(struct symbolizer *s, struct snapshot *snap, uint64_t addr, bool ret,
		    struct symbolizer_loc *l)
{
	const char *name = NULL;

	snap->jit_seen = true;
	if (snapshot_perfmap_ready(s, snap) == -ENOMEM)
		return -ENOMEM;
	if (snap->perfmap_state != 1 || perfmap_lookup(&snap->perfmap, ret ? addr - 1 : addr,
						       &name, NULL))
		return 0;
	if (!snap->jit_key)
		snap->jit_key = new_key(s);
	l->key = snap->jit_key;
	l->addr = addr;
	l->map = (struct symbolizer_mapping){ .key = snap->jit_key, .kind = FRAME_JIT,
					      .name = snap->perfmap_name, .build_id = "" };
	l->source = LS_JIT;
	l->priv[0] = (void *)name;
	return 1;
}

/* The symbol source of a snapshot mapping, indexed: R_RESOLVED with *f / *vdso set, or why
 * there is none (-ENOMEM in *err). */
static enum symbolizer_reason source_of(struct symbolizer *s, const struct snapmap *m,
					struct symfile **f, const struct elfsym **vdso, int *err)
{
	*f = NULL;
	*vdso = NULL;
	*err = 0;
	if (m->src == SRC_VDSO) {
		if (vdso_load(s))
			return R_NO_FILE;
		*vdso = &s->vdso;
		return R_RESOLVED;
	}
	if (m->src != SRC_FILE)
		return R_NO_SYMBOL;
	int e = m->file ? filecache_index(s, m->file) : -ENOENT;
	if (e) {
		if (e == -ENOMEM)
			*err = e;
		return R_NO_FILE;
	}
	*f = m->file;
	return R_RESOLVED;
}

/* Mapping name of a process mapping. */
static const char *mapping_name(const struct procmap_entry *e)
{
	return e->kind == PROCMAP_ANON ? "[anon]" : e->path;
}

/* Kind of a process mapping's frames: anonymous memory is JIT code. */
static enum frame_kind mapping_kind(const struct procmap_entry *e)
{
	if (e->kind == PROCMAP_ANON || (e->kind == PROCMAP_PSEUDO && !strncmp(e->path, "[anon:", 6)))
		return FRAME_JIT;
	return FRAME_USER;
}

/* The shared mapping key entry of (file f or the vDSO, offset), or NULL. */
static struct shared_map *shared_find(struct symbolizer *s, const struct symfile *f,
				      uint64_t offset)
{
	for (size_t i = 0; i < s->nshared; i++) {
		struct shared_map *sm = &s->shared[i];
		if (sm->offset == offset &&
		    (f ? file_id_eq(&sm->id, &f->id) : !sm->id.dev && !sm->id.ino))
			return sm;
	}
	return NULL;
}

/* Gives (f or the vDSO, offset) a shared mapping key; 0 or -ENOMEM. */
static int shared_add(struct symbolizer *s, const struct symfile *f, uint64_t offset,
		      uint32_t key)
{
	if (VEC_GROW(s->shared, s->cap_shared, s->nshared + 1))
		return -ENOMEM;
	s->shared[s->nshared++] = (struct shared_map){
		.id = f ? f->id : (struct file_id){ 0 }, .offset = offset, .key = key,
	};
	return 0;
}

/* The load bias of a file (or vDSO) mapping: addr minus the ELF address it runs; false when
 * addr's file offset is in no segment. */
static bool mapping_bias(const struct elfsym *segs, const struct procmap_entry *e, uint64_t addr,
			 uint64_t *bias)
{
	uint64_t vaddr;

	if (elfsym_file_offset_to_vaddr(segs, addr - e->start + e->offset, &vaddr))
		return false;
	*bias = addr - vaddr;
	return true;
}

/* Gives a snapshot mapping its key on first use (addr: an address in it). A file's (or the
 * vDSO's) mapping shares the key of every process's mapping of the same file segment: its
 * range and addresses are the file's own, m->bias below the process's. 0 or -ENOMEM. */
static int snapmap_place(struct symbolizer *s, const struct procmap_entry *e, struct snapmap *m,
			 uint64_t addr)
{
	struct symfile *f;
	const struct elfsym *vdso;
	struct shared_map *sm = NULL;
	uint64_t bias = 0;
	int err;

	source_of(s, m, &f, &vdso, &err);
	if (err)
		return err;
	bool shared = (f || vdso) && mapping_bias(f ? &f->elf : vdso, e, addr, &bias);
	uint32_t key = shared && (sm = shared_find(s, f, e->offset)) ? sm->key : new_key(s);
	if (shared && !sm && shared_add(s, f, e->offset, key))
		return -ENOMEM;
	m->bias = bias;
	m->build_id = f ? f->elf.build_id : vdso ? vdso->build_id : "";
	m->dwarf = file_has_dwarf(f);
	m->key = key;
	return 0;
}

/* Fills l for addr in a snapshot mapping; 0 or -ENOMEM. */
static int snapmap_find(struct symbolizer *s, const struct procmap_entry *e, struct snapmap *m,
			uint64_t addr, struct symbolizer_loc *l)
{
	int err;

	if (!m->key && (err = snapmap_place(s, e, m, addr)))
		return err;
	l->key = m->key;
	l->addr = addr - m->bias;
	l->map = (struct symbolizer_mapping){
		.key = m->key, .kind = mapping_kind(e), .inline_frames = m->dwarf,
		.start = e->start - m->bias, .limit = e->end - m->bias, .offset = e->offset,
		.name = mapping_name(e), .build_id = m->build_id,
	};
	l->source = LS_SNAPMAP;
	l->priv[0] = (void *)e;
	l->priv[1] = m;
	return 0;
}

/* Resolves addr in a snapshot mapping into frames: R_RESOLVED with *n frames, or the reason
 * (*n = -ENOMEM on allocation failure). */
static enum symbolizer_reason resolve_user(struct symbolizer *s, const struct procmap_entry *e,
					   const struct snapmap *m, uint64_t addr, bool ret,
					   struct dwarfsym_frame *fr, int *n)
{
	struct symfile *f;
	const struct elfsym *vdso;
	int err;
	enum symbolizer_reason why = source_of(s, m, &f, &vdso, &err);
	uint64_t at = ret && addr > e->start ? addr - 1 : addr, vaddr;
	const struct elfsym *segs = f ? &f->elf : vdso;

	*n = err;
	if (why != R_RESOLVED || err)
		return mapping_kind(e) == FRAME_JIT ? R_NO_JIT_SYMBOL : why;
	if (elfsym_file_offset_to_vaddr(segs, at - e->start + e->offset, &vaddr))
		return R_NO_SYMBOL;
	if (vdso) {
		fr[0] = (struct dwarfsym_frame){ NULL, NULL, 0 };
		*n = elfsym_lookup(vdso, vaddr, &fr[0].name, NULL) ? 0 : 1;
	} else {
		bool named;
		*n = resolve_named(f, vaddr, fr, &named);
		if (*n > 0 && !named)
			return R_NO_SYMBOL; /* named by its bounds */
	}
	return *n > 0 ? R_RESOLVED : *n == 0 ? R_NO_SYMBOL : R_NO_FILE;
}

/* Whether a snapshot mapping has no ELF symbols, so its code may be JIT code. */
static bool maybe_jit(struct symbolizer *s, const struct snapmap *m)
{
	if (m->src == SRC_VDSO)
		return false;
	if (m->src != SRC_FILE || !m->file)
		return true;
	return filecache_index(s, m->file) == -ENOEXEC;
}

int symbolizer_user_find(struct symbolizer *s, pid_t pid, uint64_t addr, bool is_return_address,
			 struct symbolizer_loc *l)
{
	const struct procmap_entry *e;
	int err;

	l->flags = is_return_address;
	l->at = addr;
	struct snapshot *snap = snapshot_of(s, pid);
	if (!snap)
		return unknown_loc(s, l, addr, R_NO_PROCESS);
	if (!(e = procmap_find(&snap->map, addr))) {
		err = snap->from_events ? 0 : jit_find(s, snap, addr, is_return_address, l);
		return err ? (err < 0 ? err : 0) : unknown_loc(s, l, addr, R_NO_MAPPING);
	}
	struct snapmap *m = &snap->maps[e - snap->map.entries];
	if (maybe_jit(s, m) && (err = jit_find(s, snap, addr, is_return_address, l)))
		return err < 0 ? err : 0;
	return snapmap_find(s, e, m, addr, l);
}

int symbolizer_index_ahead(struct symbolizer *s)
{
	return filecache_start_worker(s);
}

bool symbolizer_user_ready(struct symbolizer *s, pid_t pid, uint64_t addr)
{
	const struct snapshot *snap = snapshot_of(s, pid);

	if (!snap || !s->worker_on)
		return true;
	const struct procmap_entry *e = procmap_find(&snap->map, addr);
	if (!e)
		return true;
	struct snapmap *m = &snap->maps[e - snap->map.entries];
	return m->src != SRC_FILE || !m->file || filecache_ready(s, m->file);
}



struct symbolizer_file *symbolizer_file(struct symbolizer *s, const char *path)
{
	for (size_t i = 0; i < s->nloose; i++)
		if (!strcmp(s->loose[i]->path, path))
			return s->loose[i];
	if (VEC_GROW(s->loose, s->cap_loose, s->nloose + 1))
		return NULL;
	struct symbolizer_file *l = calloc(1, sizeof(*l));
	if (!l || !(l->path = strdup(path))) {
		free(l);
		errno = ENOMEM;
		return NULL;
	}
	if (!(l->file = filecache_get(s, path, 0, 0, path, 0))) {
		int err = errno;
		free(l->path);
		free(l);
		errno = err;
		return NULL;
	}
	s->loose[s->nloose++] = l;
	return l;
}

int symbolizer_file_find(struct symbolizer *s, const char *path, uint64_t vaddr,
			 bool is_return_address, struct symbolizer_loc *l)
{
	struct symbolizer_file *lf;
	int err;

	l->flags = is_return_address;
	l->at = vaddr;
	if (!(lf = symbolizer_file(s, path)))
		return errno == ENOMEM ? -ENOMEM : unknown_loc(s, l, vaddr, R_NO_FILE);
	if ((err = filecache_index(s, lf->file)) == -ENOMEM)
		return err;
	if (!lf->key)
		lf->key = new_key(s);
	l->key = lf->key;
	l->addr = vaddr;
	l->map = (struct symbolizer_mapping){
		.key = lf->key, .kind = FRAME_USER, .inline_frames = !err && file_has_dwarf(lf->file),
		.name = lf->path, .build_id = err ? "" : lf->file->elf.build_id,
	};
	l->source = LS_LOOSE;
	l->priv[0] = lf;
	return 0;
}

/* Resolves l of a file looked up by path (symbolizer_file_find). */
static int resolve_loose(struct symbolizer *s, struct symbolizer_loc *l)
{
	struct dwarfsym_frame fr[MAX_FRAMES];
	struct symbolizer_file *lf = l->priv[0];
	int err = lf->file->state < 0 ? lf->file->state : 0, n; /* indexed by the find */
	bool named = false;

	n = err ? 0 : resolve_named(lf->file, l->flags ? l->at - 1 : l->at, fr, &named);
	if (n < 0)
		return n;
	l->reason = err ? R_NO_FILE : named ? R_RESOLVED : R_NO_SYMBOL;
	return set_frames(s, l, fr, n);
}

int symbolizer_file_frames(struct symbolizer *s, struct symbolizer_file *l, uint64_t vaddr,
			   bool is_return_address, struct symbolizer_frame *frames, int max)
{
	struct dwarfsym_frame fr[MAX_FRAMES];
	int n, err;

	if ((err = filecache_index(s, l->file)))
		return err == -ENOMEM ? err : 0;
	n = resolve_file(l->file, is_return_address ? vaddr - 1 : vaddr, fr);
	if (n > max)
		n = max;
	for (int i = 0; i < n; i++) {
		const char *shown = fr[i].name[0] == '_' ? display_name(s, fr[i].name) : fr[i].name;
		if (!shown)
			return -ENOMEM;
		frames[i] = (struct symbolizer_frame){ shown, fr[i].name, fr[i].file, fr[i].line };
	}
	return n;
}

/* ---- kernel addresses ---- */

/* The prefetch thread: loads kallsyms into s->ksym, which nothing else touches meanwhile. */
static void *ksym_prefetch(void *arg)
{
	struct symbolizer *s = arg;

	s->ksym_async_err = ksym_load(&s->ksym, s->kallsyms_path);
	__atomic_store_n(&s->ksym_done, true, __ATOMIC_RELEASE);
	return NULL;
}

int symbolizer_prefetch_kernel(struct symbolizer *s)
{
	if (s->ksym_state || s->ksym_loading)
		return 0;
	int err = pthread_create(&s->ksym_thread, NULL, ksym_prefetch, s);
	s->ksym_loading = !err;
	return -err;
}

bool symbolizer_kernel_ready(struct symbolizer *s)
{
	return !s->ksym_loading || __atomic_load_n(&s->ksym_done, __ATOMIC_ACQUIRE);
}

/* Waits for a prefetch of kallsyms; returns its -errno, or 1 when none was running. */
static int ksym_join(struct symbolizer *s)
{
	if (!s->ksym_loading)
		return 1;
	pthread_join(s->ksym_thread, NULL);
	s->ksym_loading = false;
	return s->ksym_async_err;
}

int symbolizer_set_kallsyms(struct symbolizer *s, const char *path)
{
	char *copy = path ? strdup(path) : NULL;

	if (path && !copy)
		return -ENOMEM;
	ksym_join(s);
	free(s->kallsyms_path);
	s->kallsyms_path = copy;
	free(s->module_keys);
	free(s->module_limits);
	s->module_keys = NULL;
	s->module_limits = NULL;
	symbolizer_forget_names(s);
	ksym_release(&s->ksym);
	s->ksym_state = 0;
	s->kernel_key = 0; /* its range may differ: a mapping of its own */
	s->kernel_cache_key = 0; /* and what was found in the old kallsyms goes */
	return 0;
}

/* Loads kallsyms on first use; 0 or its -errno (remembered). */
static int ksym_ready(struct symbolizer *s)
{
	if (!s->ksym_state) {
		int err = ksym_join(s);
		if (err == 1)
			err = ksym_load(&s->ksym, s->kallsyms_path);
		if (err == -EPERM) /* every address 0: said once, as every kernel frame is unnamed */
			diag(DIAG_WARN, "kernel symbols are hidden (kptr_restrict): kernel frames "
			     "unnamed; run as root");
		else if (err)
			diag(DIAG_INFO, "cannot read kernel symbols from '%s': %s",
			     s->kallsyms_path ? s->kallsyms_path : "/proc/kallsyms", strerror(-err));
		if (!err) {
			s->module_keys = calloc(s->ksym.nmodules + 1, sizeof(*s->module_keys));
			s->module_limits = calloc(s->ksym.nmodules + 1, sizeof(*s->module_limits));
			if (!s->module_keys || !s->module_limits) {
				free(s->module_keys);
				free(s->module_limits);
				s->module_keys = NULL;
				s->module_limits = NULL;
				ksym_release(&s->ksym);
				return -ENOMEM; /* not remembered: may work next time */
			}
		}
		s->ksym_state = err ? err : 1;
	}
	return s->ksym_state < 0 ? s->ksym_state : 0;
}

/* The mapping of the core kernel (module NULL) or of a module, its key given on first use. */
static void kernel_map(struct symbolizer *s, const char *module, struct symbolizer_mapping *m)
{
	size_t i = 0;

	while (module && i < s->ksym.nmodules && s->ksym.modules[i].name != module)
		i++;
	if (!module || i == s->ksym.nmodules) {
		if (!s->kernel_key)
			s->kernel_key = new_key(s);
		*m = (struct symbolizer_mapping){ .key = s->kernel_key, .kind = FRAME_KERNEL,
						  .start = s->ksym.core_start,
						  .limit = s->ksym.core_end,
						  .name = "[kernel.kallsyms]", .build_id = "" };
		return;
	}
	if (!s->module_keys[i]) {
		s->module_keys[i] = new_key(s);
		s->module_limits[i] = s->ksym.modules[i].end;
	}
	snprintf(s->module_name, sizeof(s->module_name), "[%s]", module);
	*m = (struct symbolizer_mapping){ .key = s->module_keys[i], .kind = FRAME_KERNEL,
					  .start = s->ksym.modules[i].start,
					  .limit = s->module_limits[i],
					  .name = s->module_name, .build_id = "" };
}

int symbolizer_kernel_find(struct symbolizer *s, uint64_t addr, bool is_return_address,
			   struct symbolizer_loc *l)
{
	if (!s->kernel_cache_key)
		s->kernel_cache_key = new_key(s);
	l->key = s->kernel_cache_key;
	l->flags = is_return_address;
	l->addr = l->at = addr;
	l->map.key = 0;
	l->source = LS_KERNEL;
	return 0;
}

/* Resolves l of a kernel address (kallsyms loaded now on first use): its frame and mapping. */
static int resolve_kernel(struct symbolizer *s, struct symbolizer_loc *l)
{
	struct dwarfsym_frame fr = { NULL, NULL, 0 };
	const char *module = NULL;
	int err = ksym_ready(s);

	if (err == -ENOMEM)
		return err;
	l->reason = R_RESOLVED;
	if (err)
		l->reason = R_NO_FILE;
	else if (ksym_lookup(&s->ksym, l->flags ? l->at - 1 : l->at, &fr.name, &module))
		l->reason = R_NO_SYMBOL;
	kernel_map(s, module, &l->map);
	return set_frames(s, l, &fr, fr.name ? 1 : 0);
}

/* Resolves l of a snapshot mapping (symbolizer_user_find). */
static int resolve_snapmap(struct symbolizer *s, struct symbolizer_loc *l)
{
	struct dwarfsym_frame fr[MAX_FRAMES];
	int n;

	l->reason = resolve_user(s, l->priv[0], l->priv[1], l->at, l->flags, fr, &n);
	if (n < 0)
		return n;
	return set_frames(s, l, fr, n);
}

int symbolizer_resolve(struct symbolizer *s, struct symbolizer_loc *l)
{
	struct dwarfsym_frame fr = { NULL, NULL, 0 };

	switch (l->source) {
	case LS_SNAPMAP:
		return resolve_snapmap(s, l);
	case LS_JIT:
		l->reason = R_RESOLVED;
		fr.name = l->priv[0];
		return set_frames(s, l, &fr, 1);
	case LS_LOOSE:
		return resolve_loose(s, l);
	case LS_KERNEL:
		return resolve_kernel(s, l);
	default:
		l->reason = l->flags;
		l->n = 0;
		return 0;
	}
}

int symbolizer_kernel_prepare(struct symbolizer *s, const uint64_t *ips, size_t n)
{
	uint64_t addrs[128];
	int err = ksym_ready(s);

	for (size_t i = 0; !err && i < n; i += 128) {
		size_t m = n - i < 128 ? n - i : 128;
		for (size_t j = 0; j < m; j++) /* what symbolizer_resolve looks up */
			addrs[j] = i + j ? ips[i + j] - 1 : ips[0];
		err = ksym_prepare(&s->ksym, addrs, m);
	}
	return err == -ENOMEM ? err : 0;
}

/* ---- lifecycle ---- */

void symbolizer_opts_init(struct symbolizer_opts *o)
{
	*o = (struct symbolizer_opts){
		.demangle = true,
		.debuginfod = true,
		.debuginfod_timeout_ms = 5000,
		.debug_dir = NULL,
	};
}

struct symbolizer *symbolizer_new_opts(const struct symbolizer_opts *o)
{
	struct symbolizer *s = calloc(1, sizeof(struct symbolizer));

	if (!s)
		return NULL;
	s->opts = *o;
	if (o->debug_dir && !(s->opts.debug_dir = strdup(o->debug_dir))) {
		free(s);
		return NULL;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->dic_lock, NULL);
	pthread_cond_init(&s->work, NULL);
	pthread_cond_init(&s->done, NULL);
	return s;
}

struct symbolizer *symbolizer_new(void)
{
	struct symbolizer_opts o;

	symbolizer_opts_init(&o);
	return symbolizer_new_opts(&o);
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	filecache_stop_worker(s);
	for (size_t i = 0; i < s->procs.n; i++)
		snapshot_free(s, s->procs.vals[i]);
	pidindex_release(&s->procs);
	for (size_t i = 0; i < s->nloose; i++) {
		filecache_put(s, s->loose[i]->file);
		free(s->loose[i]->path);
		free(s->loose[i]);
	}
	free(s->loose);
	filecache_release(s);
	dm_clear(&s->dms);
	elfsym_release(&s->vdso);
	ksym_join(s);
	ksym_release(&s->ksym);
	FREE_ALL(s->kallsyms_path, s->module_keys, s->module_limits, s->shared, s->resnap);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->dic_lock);
	pthread_cond_destroy(&s->work);
	pthread_cond_destroy(&s->done);
	free((char *)s->opts.debug_dir);
	free(s);
}

void symbolizer_stats(const struct symbolizer *s, struct symbolizer_stats *st)
{
	*st = (struct symbolizer_stats){
		.processes = s->procs.n,
		.files = s->nfiles,
		.idle_files = s->nidle,
		.jit_no_map = s->jit_no_map,
	};
	for (size_t i = 0; i < s->procs.n; i++)
		st->jit_no_map += snapshot_no_map(s->procs.vals[i]);
}
