/* The symbolizer front: process snapshots (maps + open files), a file cache keyed by
 * (dev, inode, size, mtime), the vDSO, kallsyms, and a cache of the locations made in a profile. */
#include "symbolize.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "elfsym.h"
#include "ksym.h"
#include "procmap.h"

/* Why an address got the location it got; indexes the stats. */
enum reason { R_RESOLVED, R_NO_PROCESS, R_NO_MAPPING, R_NO_SYMBOL, R_NO_FILE };

/* One file, shared by every snapshot that maps it. */
struct symfile {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	int fd;           /* open until indexed, then -1 */
	int state;        /* 0 not indexed yet, 1 indexed, -errno when indexing failed */
	struct elfsym elf;
	unsigned refs;    /* snapshot mappings using it */
};

/* Where a snapshot mapping's symbols come from. */
enum source { SRC_NONE, SRC_FILE, SRC_VDSO };

/* A mapping of a snapshot, parallel to its procmap entry. */
struct snapmap {
	enum source src;
	struct symfile *file; /* SRC_FILE: NULL when it could not be opened */
	uint64_t mapping_id;  /* in the current profile; 0 until first used */
};

struct snapshot {
	pid_t pid;
	struct procmap map;
	struct snapmap *maps;
};

/* A cached location: key (mapping key, address, flags) -> location id and reason. */
struct loc_slot {
	uint64_t key, addr, loc_id; /* loc_id 0: empty slot */
	uint32_t flags;
	uint32_t reason;
};

struct loc_cache {
	struct loc_slot *slots;
	size_t nslots, n;
};

struct symbolizer {
	struct snapshot **procs; /* sorted by pid */
	size_t nprocs, cap_procs;
	struct symfile **files;  /* sorted by cache key */
	size_t nfiles, cap_files;

	struct profile *profile; /* the profile the ids below belong to */
	uint64_t max_mapping_id, max_location_id;
	struct loc_cache cache;
	uint64_t unknown_mapping;

	int vdso_state;          /* 0 not loaded, 1 loaded, -errno */
	struct elfsym vdso;

	int ksym_state;          /* 0 not loaded, 1 loaded, -errno */
	struct ksym ksym;
	char *kallsyms_path;     /* NULL: /proc/kallsyms */
	uint64_t kernel_mapping;
	uint64_t *module_mappings; /* ksym.nmodules ids */

	uint64_t counts[5];      /* by enum reason */
};

/* Mapping keys for cache entries that have no snapshot mapping. */
#define KEY_KERNEL UINT64_MAX

/* ---- file cache ---- */

/* Orders files by (dev, inode, size, mtime). */
static int file_key_cmp(const struct symfile *a, const struct stat *st)
{
	if (a->dev != st->st_dev)
		return a->dev < st->st_dev ? -1 : 1;
	if (a->ino != st->st_ino)
		return a->ino < st->st_ino ? -1 : 1;
	if (a->size != st->st_size)
		return a->size < st->st_size ? -1 : 1;
	if (a->mtime.tv_sec != st->st_mtim.tv_sec)
		return a->mtime.tv_sec < st->st_mtim.tv_sec ? -1 : 1;
	if (a->mtime.tv_nsec != st->st_mtim.tv_nsec)
		return a->mtime.tv_nsec < st->st_mtim.tv_nsec ? -1 : 1;
	return 0;
}

/* Finds the slot of the file with st's key: its index (*found set) or where it would go. */
static size_t file_slot(const struct symbolizer *s, const struct stat *st, bool *found)
{
	size_t lo = 0, hi = s->nfiles;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = file_key_cmp(s->files[mid], st);
		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

/* Inserts a new file for fd (taking it over) at slot i; NULL on -ENOMEM. */
static struct symfile *file_insert(struct symbolizer *s, size_t i, int fd, const struct stat *st)
{
	struct symfile *f;

	if (s->nfiles == s->cap_files) {
		size_t ncap = s->cap_files ? s->cap_files * 2 : 64;
		struct symfile **n = realloc(s->files, ncap * sizeof(*n));
		if (!n)
			return NULL;
		s->files = n;
		s->cap_files = ncap;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	*f = (struct symfile){ st->st_dev, st->st_ino, st->st_size, st->st_mtim, fd, 0, {0}, 1 };
	memmove(&s->files[i + 1], &s->files[i], (s->nfiles - i) * sizeof(*s->files));
	s->files[i] = f;
	s->nfiles++;
	return f;
}

/* Returns the cached file at path (stat'ed first, opened only when new) with a reference taken;
 * NULL + errno. want_ino (when non-zero) must match the file's inode. */
static struct symfile *file_get(struct symbolizer *s, const char *path, uint64_t want_ino)
{
	struct stat st;
	bool found;
	int fd;

	if (stat(path, &st) < 0)
		return NULL;
	if (want_ino && st.st_ino != want_ino) {
		errno = ESTALE;
		return NULL;
	}
	size_t i = file_slot(s, &st, &found);
	if (found) {
		s->files[i]->refs++;
		return s->files[i];
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || (want_ino && st.st_ino != want_ino)) {
		close(fd);
		errno = ESTALE;
		return NULL;
	}
	i = file_slot(s, &st, &found);
	if (found) {
		close(fd);
		s->files[i]->refs++;
		return s->files[i];
	}
	struct symfile *f = file_insert(s, i, fd, &st);
	if (!f) {
		close(fd);
		errno = ENOMEM;
	}
	return f;
}

/* Drops a reference; frees the file when it was the last. */
static void file_put(struct symbolizer *s, struct symfile *f)
{
	if (!f || --f->refs)
		return;
	for (size_t i = 0; i < s->nfiles; i++) {
		if (s->files[i] != f)
			continue;
		memmove(&s->files[i], &s->files[i + 1], (s->nfiles - i - 1) * sizeof(*s->files));
		s->nfiles--;
		break;
	}
	if (f->fd >= 0)
		close(f->fd);
	elfsym_release(&f->elf);
	free(f);
}

/* Reads the file's symbols on first use (and closes it); returns 0 or the indexing -errno. */
static int file_index(struct symfile *f)
{
	if (f->state == 0) {
		int err = elfsym_init_fd(&f->elf, f->fd);
		f->state = err ? err : 1;
		close(f->fd);
		f->fd = -1;
	}
	return f->state < 0 ? f->state : 0;
}

/* ---- snapshots ---- */

/* Opens the file behind a snapshot's file mapping: map_files first (works for deleted files),
 * then the path as the process sees it, then the path as we see it. */
static struct symfile *snapshot_open(struct symbolizer *s, pid_t pid, const struct procmap_entry *e)
{
	char path[PATH_MAX + 64];
	struct symfile *f;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)e->start, (unsigned long long)e->end);
	f = file_get(s, path, 0);
	if (f || errno == ENOMEM || e->deleted || e->path[0] != '/')
		return f;
	if ((size_t)snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, e->path) < sizeof(path)) {
		f = file_get(s, path, e->inode);
		if (f || errno == ENOMEM)
			return f;
	}
	return file_get(s, e->path, e->inode);
}

/* A non-executable file mapping shares the file of a nearby executable mapping of the same inode
 * (the segments of one file are adjacent in maps). */
static struct symfile *sibling_file(const struct snapshot *snap, size_t i)
{
	const struct procmap_entry *e = &snap->map.entries[i];
	size_t lo = i > 8 ? i - 8 : 0, hi = i + 9 < snap->map.n ? i + 9 : snap->map.n;

	for (size_t j = lo; j < hi; j++) {
		const struct procmap_entry *o = &snap->map.entries[j];
		if (j != i && snap->maps[j].file && o->inode == e->inode &&
		    o->dev_major == e->dev_major && o->dev_minor == e->dev_minor &&
		    !strcmp(o->path, e->path))
			return snap->maps[j].file;
	}
	return NULL;
}

/* Attaches symbol sources to every mapping of a fresh snapshot; 0 or -ENOMEM. */
static int snapshot_attach(struct symbolizer *s, struct snapshot *snap)
{
	for (size_t i = 0; i < snap->map.n; i++) {
		const struct procmap_entry *e = &snap->map.entries[i];
		struct snapmap *m = &snap->maps[i];
		if (e->kind == PROCMAP_VDSO)
			m->src = SRC_VDSO;
		if (e->kind != PROCMAP_FILE || !e->x)
			continue;
		m->src = SRC_FILE;
		m->file = snapshot_open(s, snap->pid, e);
		if (!m->file && errno == ENOMEM)
			return -ENOMEM;
		if (!m->file)
			diag(DIAG_DEBUG, "cannot open '%s' of pid %d: %s", e->path, (int)snap->pid,
			     strerror(errno));
	}
	for (size_t i = 0; i < snap->map.n; i++) {
		const struct procmap_entry *e = &snap->map.entries[i];
		struct snapmap *m = &snap->maps[i];
		if (e->kind != PROCMAP_FILE || e->x || !(m->file = sibling_file(snap, i)))
			continue;
		m->src = SRC_FILE;
		m->file->refs++;
	}
	return 0;
}

/* Frees a snapshot and drops its file references. */
static void snapshot_free(struct symbolizer *s, struct snapshot *snap)
{
	if (!snap)
		return;
	for (size_t i = 0; snap->maps && i < snap->map.n; i++)
		file_put(s, snap->maps[i].file);
	free(snap->maps);
	procmap_release(&snap->map);
	free(snap);
}

/* Reads pid's maps and opens its files; NULL + errno. */
static struct snapshot *snapshot_new(struct symbolizer *s, pid_t pid)
{
	struct snapshot *snap = calloc(1, sizeof(*snap));
	int err;

	if (!snap)
		return NULL;
	snap->pid = pid;
	err = procmap_read(&snap->map, pid);
	if (!err) {
		snap->maps = calloc(snap->map.n ? snap->map.n : 1, sizeof(*snap->maps));
		err = snap->maps ? snapshot_attach(s, snap) : -ENOMEM;
	}
	if (err) {
		snapshot_free(s, snap);
		errno = -err;
		return NULL;
	}
	return snap;
}

/* Index of pid in s->procs (*found set), or where it would go. */
static size_t proc_slot(const struct symbolizer *s, pid_t pid, bool *found)
{
	size_t lo = 0, hi = s->nprocs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->procs[mid]->pid == pid) {
			*found = true;
			return mid;
		}
		if (s->procs[mid]->pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

/* Puts snap into the process table, replacing an older snapshot of its pid; 0 or -ENOMEM. */
static int proc_put(struct symbolizer *s, struct snapshot *snap)
{
	bool found;
	size_t i = proc_slot(s, snap->pid, &found);

	if (found) {
		snapshot_free(s, s->procs[i]);
		s->procs[i] = snap;
		return 0;
	}
	if (s->nprocs == s->cap_procs) {
		size_t ncap = s->cap_procs ? s->cap_procs * 2 : 64;
		struct snapshot **n = realloc(s->procs, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		s->procs = n;
		s->cap_procs = ncap;
	}
	memmove(&s->procs[i + 1], &s->procs[i], (s->nprocs - i) * sizeof(*s->procs));
	s->procs[i] = snap;
	s->nprocs++;
	return 0;
}

int symbolizer_add_process(struct symbolizer *s, pid_t pid)
{
	struct snapshot *snap = snapshot_new(s, pid);

	if (!snap)
		return -errno;
	if (proc_put(s, snap)) {
		snapshot_free(s, snap);
		return -ENOMEM;
	}
	return 0;
}

bool symbolizer_has_process(struct symbolizer *s, pid_t pid)
{
	bool found;

	proc_slot(s, pid, &found);
	return found;
}

int symbolizer_remove_process(struct symbolizer *s, pid_t pid)
{
	bool found;
	size_t i = proc_slot(s, pid, &found);

	if (!found)
		return -ENOENT;
	snapshot_free(s, s->procs[i]);
	memmove(&s->procs[i], &s->procs[i + 1], (s->nprocs - i - 1) * sizeof(*s->procs));
	s->nprocs--;
	return 0;
}

/* ---- location cache ---- */

/* Mixes a cache key into a slot hash. */
static uint64_t loc_hash(uint64_t key, uint64_t addr, uint32_t flags)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ULL ^ addr ^ (uint64_t)flags << 56;

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

/* Finds the slot of a key: the filled one or the empty one where it goes. */
static struct loc_slot *loc_find(const struct loc_cache *c, uint64_t key, uint64_t addr,
				 uint32_t flags)
{
	size_t mask = c->nslots - 1;

	for (size_t i = loc_hash(key, addr, flags) & mask;; i = (i + 1) & mask) {
		struct loc_slot *sl = &c->slots[i];
		if (!sl->loc_id || (sl->key == key && sl->addr == addr && sl->flags == flags))
			return sl;
	}
}

/* Makes room for one more entry (load factor <= 1/2); 0 or -ENOMEM. */
static int loc_reserve(struct loc_cache *c)
{
	struct loc_cache n;

	if ((c->n + 1) * 2 <= c->nslots)
		return 0;
	n.nslots = c->nslots ? c->nslots * 2 : 4096;
	n.n = c->n;
	n.slots = calloc(n.nslots, sizeof(*n.slots));
	if (!n.slots)
		return -ENOMEM;
	for (size_t i = 0; i < c->nslots; i++)
		if (c->slots[i].loc_id)
			*loc_find(&n, c->slots[i].key, c->slots[i].addr, c->slots[i].flags) =
				c->slots[i];
	free(c->slots);
	*c = n;
	return 0;
}

/* Empties the cache. */
static void loc_clear(struct loc_cache *c)
{
	free(c->slots);
	memset(c, 0, sizeof(*c));
}

/* ---- profile entries ---- */

/* Starts the id caches afresh when p is not the profile they were made for. */
static void sync_profile(struct symbolizer *s, struct profile *p)
{
	if (s->profile == p && p->nmappings >= s->max_mapping_id &&
	    p->nlocations >= s->max_location_id)
		return;
	loc_clear(&s->cache);
	for (size_t i = 0; i < s->nprocs; i++)
		for (size_t j = 0; j < s->procs[i]->map.n; j++)
			s->procs[i]->maps[j].mapping_id = 0;
	s->unknown_mapping = s->kernel_mapping = 0;
	for (size_t i = 0; s->module_mappings && i < s->ksym.nmodules; i++)
		s->module_mappings[i] = 0;
	s->profile = p;
	s->max_mapping_id = s->max_location_id = 0;
}

/* Adds a mapping to p with the given kind; returns its id or -ENOMEM. */
static int64_t add_mapping(struct symbolizer *s, struct profile *p, uint64_t start, uint64_t limit,
			   uint64_t offset, const char *name, const char *build_id,
			   enum frame_kind kind)
{
	int64_t id = profile_add_mapping(p, start, limit, offset, name, build_id);

	if (id < 0)
		return id;
	p->mappings[id - 1].kind = kind;
	if ((uint64_t)id > s->max_mapping_id)
		s->max_mapping_id = id;
	return id;
}

/* Display name of a symbol. The seam for demangling: today the raw name. */
static const char *display_name(const char *raw)
{
	return raw;
}

/* Adds a location at addr in mapping_id with one line for the function name (none when NULL);
 * returns its id or -ENOMEM. */
static int64_t add_location(struct symbolizer *s, struct profile *p, uint64_t mapping_id,
			    uint64_t addr, const char *name)
{
	struct profile_line line = { 0, 0 };
	int64_t id;

	if (name) {
		int64_t fid = profile_function(p, display_name(name), name, "", 0);
		if (fid < 0)
			return fid;
		line.function_id = fid;
		p->mappings[mapping_id - 1].has_functions = true;
	}
	id = profile_add_location(p, mapping_id, addr, &line, name ? 1 : 0);
	if (id > 0 && (uint64_t)id > s->max_location_id)
		s->max_location_id = id;
	return id;
}

/* Returns the cached location for a key (counting it), or 0. */
static int64_t cached(struct symbolizer *s, uint64_t key, uint64_t addr, uint32_t flags)
{
	struct loc_slot *sl;

	if (!s->cache.nslots)
		return 0;
	sl = loc_find(&s->cache, key, addr, flags);
	if (!sl->loc_id)
		return 0;
	s->counts[sl->reason]++;
	return sl->loc_id;
}

/* Stores and counts a new location; returns id (or -ENOMEM). */
static int64_t remember(struct symbolizer *s, uint64_t key, uint64_t addr, uint32_t flags,
			int64_t id, enum reason why)
{
	if (id < 0)
		return id;
	if (loc_reserve(&s->cache))
		return -ENOMEM;
	*loc_find(&s->cache, key, addr, flags) = (struct loc_slot){ key, addr, id, flags, why };
	s->cache.n++;
	s->counts[why]++;
	return id;
}

/* Location of an address outside every known mapping, in "[unknown]". */
static int64_t unknown_location(struct symbolizer *s, struct profile *p, uint64_t addr,
				enum reason why)
{
	int64_t id = cached(s, 0, addr, why);

	if (id)
		return id;
	if (!s->unknown_mapping) {
		int64_t m = add_mapping(s, p, 0, 0, 0, "[unknown]", "", FRAME_USER);
		if (m < 0)
			return m;
		s->unknown_mapping = m;
	}
	return remember(s, 0, addr, why, add_location(s, p, s->unknown_mapping, addr, NULL), why);
}

/* ---- user addresses ---- */

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

/* The symbols of a snapshot mapping: 0 with *elf set, or the reason there are none. */
static enum reason source_of(struct symbolizer *s, const struct snapmap *m,
			     const struct elfsym **elf)
{
	*elf = NULL;
	if (m->src == SRC_VDSO) {
		if (vdso_load(s))
			return R_NO_FILE;
		*elf = &s->vdso;
		return R_RESOLVED;
	}
	if (m->src != SRC_FILE)
		return R_NO_SYMBOL;
	if (!m->file || file_index(m->file))
		return R_NO_FILE;
	*elf = &m->file->elf;
	return R_RESOLVED;
}

/* Profile mapping name of a process mapping. */
static const char *mapping_name(const struct procmap_entry *e)
{
	return e->kind == PROCMAP_ANON ? "[anon]" : e->path;
}

/* Returns the profile mapping id of a snapshot mapping, adding it on first use. */
static int64_t snapmap_mapping(struct symbolizer *s, struct profile *p,
			       const struct procmap_entry *e, struct snapmap *m)
{
	const struct elfsym *elf;
	int64_t id;

	if (m->mapping_id)
		return m->mapping_id;
	source_of(s, m, &elf);
	id = add_mapping(s, p, e->start, e->end, e->offset, mapping_name(e),
			 elf ? elf->build_id : "", e->kind == PROCMAP_ANON ? FRAME_JIT : FRAME_USER);
	if (id > 0)
		m->mapping_id = id;
	return id;
}

/* Looks up the function at addr in a mapping: R_RESOLVED with *name, or the reason. */
static enum reason resolve_user(struct symbolizer *s, const struct procmap_entry *e,
				const struct snapmap *m, uint64_t addr, bool ret, const char **name)
{
	const struct elfsym *elf;
	enum reason why = source_of(s, m, &elf);
	uint64_t at = ret && addr > e->start ? addr - 1 : addr, vaddr;

	*name = NULL;
	if (why != R_RESOLVED)
		return why;
	if (elfsym_file_offset_to_vaddr(elf, at - e->start + e->offset, &vaddr) ||
	    elfsym_lookup(elf, vaddr, name, NULL))
		return R_NO_SYMBOL;
	return R_RESOLVED;
}

int64_t symbolizer_user_location(struct symbolizer *s, struct profile *p, pid_t pid, uint64_t addr,
				 bool is_return_address)
{
	const struct procmap_entry *e;
	const char *name;
	bool found;
	int64_t mid, id;

	sync_profile(s, p);
	size_t pi = proc_slot(s, pid, &found);
	if (!found)
		return unknown_location(s, p, addr, R_NO_PROCESS);
	struct snapshot *snap = s->procs[pi];
	if (!(e = procmap_find(&snap->map, addr)))
		return unknown_location(s, p, addr, R_NO_MAPPING);
	struct snapmap *m = &snap->maps[e - snap->map.entries];
	if ((mid = snapmap_mapping(s, p, e, m)) < 0)
		return mid;
	if ((id = cached(s, mid, addr, is_return_address)))
		return id;
	enum reason why = resolve_user(s, e, m, addr, is_return_address, &name);
	return remember(s, mid, addr, is_return_address, add_location(s, p, mid, addr, name), why);
}

/* ---- kernel addresses ---- */

int symbolizer_set_kallsyms(struct symbolizer *s, const char *path)
{
	char *copy = path ? strdup(path) : NULL;

	if (path && !copy)
		return -ENOMEM;
	free(s->kallsyms_path);
	s->kallsyms_path = copy;
	free(s->module_mappings);
	s->module_mappings = NULL;
	ksym_release(&s->ksym);
	s->ksym_state = 0;
	s->profile = NULL;
	return 0;
}

/* Loads kallsyms on first use; 0 or its -errno (remembered). */
static int ksym_ready(struct symbolizer *s)
{
	if (!s->ksym_state) {
		int err = ksym_load(&s->ksym, s->kallsyms_path);
		if (err)
			diag(DIAG_INFO, "cannot read kernel symbols from '%s': %s",
			     s->kallsyms_path ? s->kallsyms_path : "/proc/kallsyms", strerror(-err));
		if (!err) {
			s->module_mappings = calloc(s->ksym.nmodules + 1, sizeof(*s->module_mappings));
			if (!s->module_mappings) {
				ksym_release(&s->ksym);
				return -ENOMEM; /* not remembered: may work next time */
			}
		}
		s->ksym_state = err ? err : 1;
	}
	return s->ksym_state < 0 ? s->ksym_state : 0;
}

/* Mapping id for the core kernel (module NULL) or a module, added on first use. */
static int64_t kernel_mapping(struct symbolizer *s, struct profile *p, const char *module)
{
	char name[256];
	size_t i = 0;

	if (!module) {
		if (!s->kernel_mapping) {
			int64_t id = add_mapping(s, p, s->ksym.core_start, s->ksym.core_end, 0,
						 "[kernel.kallsyms]", "", FRAME_KERNEL);
			if (id < 0)
				return id;
			s->kernel_mapping = id;
		}
		return s->kernel_mapping;
	}
	while (i < s->ksym.nmodules && s->ksym.modules[i].name != module)
		i++;
	if (i == s->ksym.nmodules)
		return kernel_mapping(s, p, NULL);
	if (!s->module_mappings[i]) {
		const struct ksym_module *km = &s->ksym.modules[i];
		snprintf(name, sizeof(name), "[%s]", module);
		int64_t id = add_mapping(s, p, km->start, km->end, 0, name, "", FRAME_KERNEL);
		if (id < 0)
			return id;
		s->module_mappings[i] = id;
	}
	return s->module_mappings[i];
}

int64_t symbolizer_kernel_location(struct symbolizer *s, struct profile *p, uint64_t addr)
{
	const char *name = NULL, *module = NULL;
	enum reason why = R_RESOLVED;
	int64_t mid, id;
	int err;

	sync_profile(s, p);
	if ((id = cached(s, KEY_KERNEL, addr, 0)))
		return id;
	err = ksym_ready(s);
	if (err == -ENOMEM)
		return err;
	if (err)
		why = R_NO_FILE;
	else if (ksym_lookup(&s->ksym, addr, &name, &module))
		why = R_NO_SYMBOL;
	if ((mid = kernel_mapping(s, p, module)) < 0)
		return mid;
	return remember(s, KEY_KERNEL, addr, 0, add_location(s, p, mid, addr, name), why);
}

/* ---- lifecycle ---- */

struct symbolizer *symbolizer_new(void)
{
	return calloc(1, sizeof(struct symbolizer));
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nprocs; i++)
		snapshot_free(s, s->procs[i]);
	free(s->procs);
	for (size_t i = 0; i < s->nfiles; i++) {
		if (s->files[i]->fd >= 0)
			close(s->files[i]->fd);
		elfsym_release(&s->files[i]->elf);
		free(s->files[i]);
	}
	free(s->files);
	loc_clear(&s->cache);
	elfsym_release(&s->vdso);
	ksym_release(&s->ksym);
	free(s->kallsyms_path);
	free(s->module_mappings);
	free(s);
}

void symbolizer_stats(const struct symbolizer *s, struct symbolizer_stats *st)
{
	*st = (struct symbolizer_stats){
		.resolved = s->counts[R_RESOLVED],
		.no_process = s->counts[R_NO_PROCESS],
		.no_mapping = s->counts[R_NO_MAPPING],
		.no_symbol = s->counts[R_NO_SYMBOL],
		.no_file = s->counts[R_NO_FILE],
	};
}
