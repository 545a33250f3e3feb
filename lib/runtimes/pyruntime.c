/* CPython stacks from user space (see pyruntime.h). */
#include "runtimes/pyruntime.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/unaligned.h"
#include "elf/elffile.h"
#include "elf/funcbounds.h"
#include "base/fileid.h"
#include "base/hash.h"
#include "base/hashtab.h"
#include "base/safeopen.h"
#include "proc/procmap.h"
#include "base/vec.h"

/* The code cache's slots: 2^MIN_BITS at first, four times more whenever its misses evict too
 * often (cache_at: a process whose sampled code no longer fits), up to
 * 2^MAX_BITS (72 bytes a slot: 288 KiB). A Python process sampled now and then (a server
 * waiting) then costs 4.5 KiB, not 288: system-wide, every Python process on the host has one. */
#define PYCODE_CACHE_MIN_BITS 6
#define PYCODE_CACHE_MAX_BITS 12
#define PYSTR_MAX 512            /* characters kept of a name */
#define PYPATH_MAX 4096          /* characters kept of a file name (a path of PATH_MAX) */
#define PYSTR_CUT "..."          /* how a longer one ends: cut visibly (as V8's names are) */
#define PYLINES_MAX (64 * 1024)  /* bytes kept of a line table */

/* The versions with an offset table (3.8 to 3.12), each a column of table_fields: its 3.minor
 * and sizeof(_PyRuntimeState), which the symbol's size must equal. Checked with gdb against the
 * pyenv builds' DWARF (ptype/o) for 3.8.18, 3.9.18, 3.10.13, 3.11.7, 3.12.1:
 *   3.8: Include/internal/pycore_pystate.h (_PyRuntimeState, PyInterpreterState),
 *        Include/cpython/pystate.h (PyThreadState), Include/frameobject.h, Include/code.h;
 *   3.9: Include/internal/pycore_runtime.h, pycore_interp.h, cpython/pystate.h, frameobject.h,
 *        cpython/code.h; _PyRuntimeState shrank (GC and ceval state moved to the interpreter);
 *   3.10: same headers; f_lasti moved to 96 and counts code units; co_linetable;
 *   3.11: Include/internal/pycore_runtime.h, pycore_interp.h (threads.head), cpython/pystate.h
 *        (cframe, native_thread_id), pycore_frame.h (_PyInterpreterFrame), cpython/code.h;
 *   3.12: same headers; PyASCIIObject lost wstr (40 bytes), f_code moved to 0.
 * Every version shares PyObject.ob_type (Include/object.h), PyTypeObject.tp_name (ob_base is a
 * PyVarObject: 24 bytes), PyASCIIObject.length/state and PyBytesObject
 * (Include/cpython/unicodeobject.h, bytesobject.h). */
static const struct {
	int minor;
	uint64_t runtime_size;
} table_versions[] = { { 8, 1464 }, { 9, 656 }, { 10, 672 }, { 11, 166688 }, { 12, 459944 } };
#define TABLE_VERSIONS (sizeof(table_versions) / sizeof(table_versions[0]))
#define PYOFF(f) offsetof(struct pyoffsets, f)

/* One field of struct pyoffsets, by table version (0: not in that version). */
static const struct {
	size_t field;
	uint32_t off[TABLE_VERSIONS];
} table_fields[] = {
	/*                                3.8   3.9  3.10  3.11  3.12 */
	{ PYOFF(rt_interp_head),        {   32,   32,   32,   40,   40 } },
	{ PYOFF(rt_autotss),            { 1392,  584,  584,  592, 1544 } },
	{ PYOFF(interp_tstate_head),    {    8,    8,    8,   16,   72 } },
	{ PYOFF(ts_next),               {    8,    8,    8,    8,    8 } },
	{ PYOFF(ts_interp),             {   16,   16,   16,   16,   16 } },
	{ PYOFF(ts_thread_id),          {  176,  176,  176,  152,  136 } },
	{ PYOFF(ts_native_tid),         {    0,    0,    0,  160,  144 } },
	{ PYOFF(ts_frame),              {   24,   24,   24,   56,   56 } },
	{ PYOFF(cframe_current),        {    0,    0,    0,    8,    0 } },
	{ PYOFF(fr_back),               {   24,   24,   24,   48,    8 } },
	{ PYOFF(fr_code),               {   32,   32,   32,   32,    0 } },
	{ PYOFF(fr_lasti),              {  104,  104,   96,   56,   56 } },
	{ PYOFF(fr_owner),              {    0,    0,    0,   69,   70 } },
	{ PYOFF(co_filename),           {  104,  104,  104,  112,  112 } },
	{ PYOFF(co_name),               {  112,  112,  112,  120,  120 } },
	{ PYOFF(co_qualname),           {    0,    0,    0,  128,  128 } },
	{ PYOFF(co_firstlineno),        {   40,   40,   40,   72,   68 } },
	{ PYOFF(co_linetable),          {  120,  120,  120,  136,  136 } },
	{ PYOFF(co_code_adaptive),      {    0,    0,    0,  184,  192 } },
	{ PYOFF(co_firsttraceable),     {    0,    0,    0,  168,  176 } },
	{ PYOFF(ob_type),               {    8,    8,    8,    8,    8 } },
	{ PYOFF(tp_name),               {   24,   24,   24,   24,   24 } },
	{ PYOFF(unicode_state),         {   32,   32,   32,   32,   32 } },
	{ PYOFF(unicode_length),        {   16,   16,   16,   16,   16 } },
	{ PYOFF(unicode_ascii_size),    {   48,   48,   48,   48,   40 } },
	{ PYOFF(unicode_compact_size),  {   72,   72,   72,   72,   56 } },
	{ PYOFF(bytes_size),            {   16,   16,   16,   16,   16 } },
	{ PYOFF(bytes_sval),            {   32,   32,   32,   32,   32 } },
};

/* Sets the uint32_t field of o at field (offsetof in struct pyoffsets): the one store of the
 * tables' rows. */
static void set_offset(struct pyoffsets *o, size_t field, uint64_t v)
{
	*(uint32_t *)((char *)o + field) = (uint32_t)v;
}

/* Frame owners (pycore_frame.h 3.12, 3.13; pycore_interpframe_structs.h 3.14): the owners
 * from FRAME_OWNED_BY_SHIM on have no Python code (3.12, 3.13: FRAME_OWNED_BY_CSTACK = 3; 3.14:
 * FRAME_OWNED_BY_INTERPRETER = 3, the entry frame of each _PyEval_EvalFrameDefault call, and
 * FRAME_OWNED_BY_CSTACK = 4). */
#define FRAME_OWNED_BY_GENERATOR 1
#define FRAME_OWNED_BY_SHIM 3
/* 3.14: f_executable is a _PyStackRef whose low bit is the Py_TAG_REFCNT tag
 * (pycore_stackref.h, GIL builds): the object's address with that bit cleared. */
#define PY_STACKREF_TAG 1ULL

int pyruntime_read(struct pyruntime *rt, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	rt->reads++;
	if (rt->image) { /* a memory image (tests, fuzzing) instead of a process */
		if (addr < rt->image_base || addr - rt->image_base > rt->image_size ||
		    len > rt->image_size - (addr - rt->image_base)) {
			rt->errors[PYRT_ERR_READ]++;
			return -EFAULT;
		}
		memcpy(buf, rt->image + (addr - rt->image_base), len);
		return 0;
	}
	if (!addr || process_vm_readv(rt->pid, &local, 1, &remote, 1, 0) != (ssize_t)len) {
		rt->errors[PYRT_ERR_READ]++;
		return -EFAULT;
	}
	return 0;
}

/* Reads a pointer-sized word. */
static int read_u64(struct pyruntime *rt, uint64_t addr, uint64_t *v)
{
	return pyruntime_read(rt, addr, v, sizeof(*v));
}

#define PYELF_LOADS 8 /* PT_LOAD segments kept per file (a bias for a mapping of any of them) */

/* What one ELF says about CPython: the symbols this module looks for. */
struct pyelf {
	int type;
	uint64_t runtime, runtime_size, version, tstate_current;
	uint64_t eval, eval_size; /* _PyEval_EvalFrameDefault (0: not found) */
	uint64_t cold, cold_size; /* its cold part, a code range of its own (0: none found) */
	bool has_runtime, has_version, has_tstate_current;
	struct { uint64_t vaddr, offset, filesz; } load[PYELF_LOADS]; /* its first PT_LOADs */
	unsigned nload;
};

/* Notes the symbols of interest in one symbol table section. */
static void scan_symtab(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct pyelf *pe)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	for (size_t i = 0; data && i < n; i++) {
		GElf_Sym s;
		const char *name;

		if (!gelf_getsym(data, (int)i, &s) || s.st_shndx == SHN_UNDEF ||
		    !(name = elf_strptr(elf, sh->sh_link, s.st_name)))
			continue;
		if (!strcmp(name, "_PyRuntime"))
			pe->runtime = s.st_value, pe->runtime_size = s.st_size, pe->has_runtime = true;
		else if (!strcmp(name, "Py_Version"))
			pe->version = s.st_value, pe->has_version = true;
		else if (!strcmp(name, "_PyEval_EvalFrameDefault") && s.st_size)
			pe->eval = s.st_value, pe->eval_size = s.st_size;
		else if (!strcmp(name, "_PyEval_EvalFrameDefault.cold") && s.st_size)
			pe->cold = s.st_value, pe->cold_size = s.st_size;
		else if (!strcmp(name, "_PyThreadState_Current"))
			pe->tstate_current = s.st_value, pe->has_tstate_current = true;
	}
}

/* Keeps the first PT_LOADs, to turn a mapping of any of them into a load bias. */
static void scan_phdrs(Elf *elf, struct pyelf *pe)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return;
	for (size_t i = 0; i < n && pe->nload < PYELF_LOADS; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			pe->load[pe->nload].vaddr = ph.p_vaddr, pe->load[pe->nload].offset = ph.p_offset,
			pe->load[pe->nload++].filesz = ph.p_filesz;
	}
}

/* Whether a file name says CPython ("python3.11", "libpython3.12.so.1.0"). */
static bool named_python(const char *path)
{
	const char *base = strrchr(path, '/');

	return strstr(base ? base + 1 : path, "python") != NULL;
}

/* Scans the ELF's .dynsym, and its .symtab too where the file may be a CPython (its name says
 * so, or .dynsym defines _PyRuntime or _PyThreadState_Current): every other file costs a look
 * at its exported symbols only (an embedded CPython exports _PyRuntime for its extensions). */
static void scan_symbols(Elf *elf, bool python_name, struct pyelf *pe)
{
	for (int pass = 0; pass < 2; pass++) {
		Elf_Scn *scn = NULL;
		if (pass && !python_name && !pe->has_runtime && !pe->has_tstate_current)
			return;
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			if (gelf_getshdr(scn, &sh) && sh.sh_type == (pass ? SHT_SYMTAB : SHT_DYNSYM))
				scan_symtab(elf, scn, &sh, pe);
		}
	}
}

/* The bytes of the function at [addr, addr + size) in the section that holds them (NULL: not
 * all in one section with contents). */
static const uint8_t *function_bytes(Elf *elf, uint64_t addr, uint64_t size)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elffile_next(elf, scn, NULL, SHT_PROGBITS, &sh))) {
		Elf_Data *d;
		if (addr < sh.sh_addr || addr - sh.sh_addr > sh.sh_size || size > sh.sh_size - (addr - sh.sh_addr))
			continue;
		d = elf_getdata(scn, NULL);
		return d && d->d_buf && d->d_size == sh.sh_size ? (const uint8_t *)d->d_buf + (addr - sh.sh_addr) : NULL;
	}
	return NULL;
}

#define COLD_TARGETS 4096 /* jump targets looked at (a 50 KiB function has ~1500 false ones) */

static int cmp_ranges(const void *a, const void *b)
{
	ptrdiff_t x = *(const ptrdiff_t *)a, y = *(const ptrdiff_t *)b;
	return (x > y) - (x < y);
}

/* The FDE range that most of the function's jumps out of it land inside (not at its start: a
 * tail call), when two or more do: GCC's hot/cold split moves code of a function to a range of
 * its own (Debian's 3.14: the whole instruction loop of _PyEval_EvalFrameDefault, 84 KiB, is
 * there), on the same stack frame. The bytes are scanned at every offset for jmp and jcc rel32
 * (not decoded): a false target lands anywhere, rarely twice in one range; Debian's 3.11 jumps
 * to its cold part 379 times, 3.14 dozens. -1: none. */
static ptrdiff_t cold_range(const struct funcbounds *fb, const uint8_t *b, uint64_t addr, uint64_t size)
{
	ptrdiff_t *in = malloc(COLD_TARGETS * sizeof(*in)), best = -1;
	size_t n = 0, best_n = 1;

	for (uint64_t i = 0; in && i + 5 <= size && n < COLD_TARGETS; i++) {
		bool jcc = b[i] == 0x0f && i + 6 <= size && (b[i + 1] & 0xf0) == 0x80;
		int32_t rel;
		if (b[i] != 0xe9 && !jcc)
			continue;
		memcpy(&rel, b + i + 1 + jcc, 4);
		uint64_t t = addr + i + 5 + jcc + (uint64_t)(int64_t)rel;
		ptrdiff_t r = t < addr || t >= addr + size ? funcbounds_find(fb, t) : -1;
		if (r >= 0 && fb->r[r].start != t)
			in[n++] = r;
	}
	if (in)
		qsort(in, n, sizeof(*in), cmp_ranges);
	for (size_t i = 0, j; i < n; i = j) { /* the longest run of one range */
		for (j = i; j < n && in[j] == in[i]; j++)
			;
		if (j - i > best_n)
			best = in[i], best_n = j - i;
	}
	free(in);
	return best;
}

/* Finds the cold part of _PyEval_EvalFrameDefault into pe where no symbol named it (none: left 0). */
static void find_eval_cold(Elf *elf, struct pyelf *pe)
{
	struct funcbounds fb;
	const uint8_t *b = pe->eval_size <= (1u << 20) ? function_bytes(elf, pe->eval, pe->eval_size) : NULL;
	ptrdiff_t r;

	if (pe->cold || !b || funcbounds_read_elf(&fb, elf)) /* .symtab named it */
		return;
	if ((r = cold_range(&fb, b, pe->eval, pe->eval_size)) >= 0 && fb.r[r].start != pe->eval)
		pe->cold = fb.r[r].start, pe->cold_size = fb.r[r].end - fb.r[r].start;
	funcbounds_release(&fb);
}

/* Reads the CPython symbols and the PT_LOADs of the ELF at path. 0 or -errno (-ENOEXEC). */
static int pyelf_read(const char *path, struct pyelf *pe)
{
	struct elffile f;
	GElf_Ehdr eh;
	int err;

	memset(pe, 0, sizeof(*pe));
	if ((err = elffile_open(&f, path, ELFFILE_MAPPED, NULL)))
		return err;
	if (!gelf_getehdr(f.elf, &eh)) {
		elffile_close(&f);
		return -ENOEXEC;
	}
	pe->type = eh.e_type;
	scan_symbols(f.elf, named_python(path), pe);
	scan_phdrs(f.elf, pe);
	if (pe->eval && pe->has_runtime)
		find_eval_cold(f.elf, pe);
	elffile_close(&f);
	return 0;
}

/* ---- what each file says, kept per file ---- */

/* One file as probed: its identity (stat) and what its ELF says (err: why it could not be read). */
struct pyfile {
	struct file_id id;
	int err;
	struct pyelf pe;
};

/* A mapping's file as an mmap record names it: (device, inode, the inode's generation); or, for
 * a mapping from /proc (no generation), as it names it: (device, inode), with when a stat last
 * showed which file that is. */
struct pyfile_gen {
	uint64_t ino, gen;
	uint32_t dev_major, dev_minor;
	uint32_t file; /* index into files */
	bool from_record;
	uint64_t seen_ns; /* not from_record: the stat's time (mono_ns) */
};

struct pyfile_cache {
	struct pyfile *files;
	size_t n, cap;
	struct hashtab index; /* (dev, ino, size, mtime) -> files */
	struct pyfile_gen *gens;
	size_t ngens, capgens;
	struct hashtab gen_index; /* (dev, ino, generation) -> gens */
	uint64_t probes;
};

struct pyfile_cache *pyfile_cache_new(void)
{
	return calloc(1, sizeof(struct pyfile_cache));
}

void pyfile_cache_free(struct pyfile_cache *c)
{
	if (!c)
		return;
	free(c->files);
	hashtab_release(&c->index);
	free(c->gens);
	hashtab_release(&c->gen_index);
	free(c);
}

uint64_t pyfile_cache_probes(const struct pyfile_cache *c)
{
	return c->probes;
}

static uint64_t pyfile_hash(const struct pyfile *k)
{
	return file_id_hash(&k->id);
}

static bool pyfile_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct pyfile *a = &((const struct pyfile_cache *)ctx)->files[id], *k = key;

	return file_id_eq(&a->id, &k->id);
}

static uint64_t gen_hash(const struct procmap_entry *e)
{
	return hash_mix64(e->inode ^ hash_mix64((e->ino_generation ^ e->from_record) ^
						((uint64_t)e->dev_major << 32 | e->dev_minor)));
}

static bool gen_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct pyfile_gen *g = &((const struct pyfile_cache *)ctx)->gens[id];
	const struct procmap_entry *e = key;

	return g->ino == e->inode && g->gen == e->ino_generation && g->dev_major == e->dev_major &&
	       g->dev_minor == e->dev_minor && g->from_record == e->from_record;
}

/* The file of a mapping without a stat: from an mmap record, known by the inode's generation (a
 * file created since has a new inode or generation: ext4, xfs, btrfs and tmpfs give a new inode
 * a nonzero one; files an image tool wrote may have 0); from /proc, by (device, inode) when a
 * stat showed it less than PYFILE_RECENT_NS before now. NULL when not known. */
static const struct pyfile *gen_find(const struct pyfile_cache *c, const struct procmap_entry *e,
				     uint64_t now)
{
	int64_t at = e->inode ? hashtab_find(&c->gen_index, gen_hash(e), gen_eq, c, e) : -1;

	if (at < 0 || (!e->from_record && now - c->gens[at].seen_ns >= PYFILE_RECENT_NS))
		return NULL;
	return &c->files[c->gens[at].file];
}

/* Remembers that mapping e is file f (now), when the stat st was of e's inode. */
static void gen_add(struct pyfile_cache *c, const struct procmap_entry *e, const struct stat *st,
		    size_t f, uint64_t now)
{
	int64_t at = hashtab_find(&c->gen_index, gen_hash(e), gen_eq, c, e);

	if (!e->inode || st->st_ino != e->inode || st->st_dev != makedev(e->dev_major, e->dev_minor))
		return;
	if (at >= 0) { /* one from /proc seen again (or its file rewritten since) */
		c->gens[at].file = (uint32_t)f, c->gens[at].seen_ns = now;
		return;
	}
	if (VEC_GROW(c->gens, c->capgens, c->ngens + 1) || hashtab_reserve(&c->gen_index, c->ngens + 1))
		return;
	c->gens[c->ngens] = (struct pyfile_gen){ e->inode, e->ino_generation, e->dev_major,
						 e->dev_minor, (uint32_t)f, e->from_record, now };
	hashtab_add(&c->gen_index, gen_hash(e), (uint32_t)c->ngens++);
}

/* Finds the file of mapping e of pid: its path here when that is the mapped inode, else the
 * path in the process's root. The path opened goes to path; 0 or -errno. */
static int pyfile_stat(pid_t pid, const struct procmap_entry *e, char *path, size_t len, struct stat *st)
{
	snprintf(path, len, "%s", e->path);
	if (!stat(path, st) && st->st_ino == e->inode &&
	    st->st_dev == makedev(e->dev_major, e->dev_minor))
		return 0;
	snprintf(path, len, "/proc/%d/root%s", (int)pid, e->path);
	return safeopen_stat(path, st); /* inside the process's root, as elffile_open opens it */
}

/* What the file of mapping e says about CPython: read once per file (dev, inode, size and
 * mtime), a hash lookup and a stat after; a mapping from an mmap record whose inode generation
 * was seen before: a hash lookup alone. NULL when the file cannot be found or on -ENOMEM. */
static const struct pyfile *pyfile_get(struct pyfile_cache *c, pid_t pid, const struct procmap_entry *e)
{
	uint64_t now = e->from_record ? 0 : mono_ns();
	const struct pyfile *known = gen_find(c, e, now);
	char path[4200];
	struct stat st;
	struct pyfile k;
	int64_t at;

	if (known || e->kind != PROCMAP_FILE || pyfile_stat(pid, e, path, sizeof(path), &st))
		return known;
	k = (struct pyfile){ .id = file_id_of(&st) };
	if ((at = hashtab_find(&c->index, pyfile_hash(&k), pyfile_eq, c, &k)) < 0) {
		if (VEC_GROW(c->files, c->cap, c->n + 1) || hashtab_reserve(&c->index, c->n + 1))
			return NULL;
		k.err = pyelf_read(path, &k.pe);
		c->probes++;
		c->files[c->n] = k;
		hashtab_add(&c->index, pyfile_hash(&k), (uint32_t)c->n);
		at = (int64_t)c->n++;
	}
	gen_add(c, e, &st, (size_t)at, now);
	return &c->files[at];
}

int pyfile_is_python(struct pyfile_cache *c, pid_t pid, const struct procmap_entry *e)
{
	const struct pyfile *f = pyfile_get(c, pid, e);

	if (!f)
		return -ENOENT;
	return f->err ? f->err : f->pe.has_runtime || f->pe.has_tstate_current;
}

/* Parses "pythonX.Y" out of a file name (python3.9, libpython3.10.so.1.0, libpython3.7m.so). */
static bool version_from_name(const char *path, int *major, int *minor)
{
	const char *base = strrchr(path, '/'), *p;

	base = base ? base + 1 : path;
	if (!(p = strstr(base, "python")))
		return false;
	return sscanf(p + 6, "%d.%d", major, minor) == 2;
}

/* The offsets of a version that has a table (3.8-3.12) into *o: 0, or -EPROTONOSUPPORT. */
static int table_offsets(int major, int minor, struct pyoffsets *o)
{
	for (size_t c = 0; major == 3 && c < TABLE_VERSIONS; c++) {
		if (table_versions[c].minor != minor)
			continue;
		memset(o, 0, sizeof(*o));
		o->runtime_size = table_versions[c].runtime_size;
		for (size_t i = 0; i < sizeof(table_fields) / sizeof(table_fields[0]); i++)
			set_offset(o, table_fields[i].field, table_fields[i].off[c]);
		return 0;
	}
	return -EPROTONOSUPPORT;
}

/* The layouts of _Py_DebugOffsets (the first member of _PyRuntimeState, every field a
 * uint64_t) that firn reads, oldest first; a layout is a column of debug_sizes and
 * debug_fields below. v3.13.0 Include/internal/pycore_runtime.h (73 words); v3.14.0
 * Include/internal/pycore_debug_offsets.h (95 words: threads_main, code_object_generation and
 * tlbc_generation in the interpreter, stackpointer and tlbc_index in the frame, co_tlbc, the set,
 * generator, llist and debugger structs added). The newest is tried for a later 3.x. */
struct debug_layout {
	int minor;      /* the first 3.minor with this layout */
	unsigned words; /* its length */
};
static const struct debug_layout debug_layouts[] = { { 13, 73 }, { 14, 95 } };
#define DEBUG_LAYOUTS (sizeof(debug_layouts) / sizeof(debug_layouts[0]))
#define DEBUG_WORDS_MAX 95
#define DO_VERSION 1
#define DO_FREE_THREADED 2

/* The structs whose fields firn reads: each struct's size is in _Py_DebugOffsets too, so every
 * offset is checked against the size of the struct it is in. */
enum debug_struct { DS_RUNTIME, DS_INTERP, DS_THREAD, DS_FRAME, DS_CODE, DS_OBJECT, DS_TYPE, DS_BYTES,
		    DS_UNICODE, DS__N };

/* The word holding each struct's size (indexes in 8-byte words), by layout. */
static const uint8_t debug_sizes[DS__N][DEBUG_LAYOUTS] = {
	[DS_RUNTIME] = { 3, 3 },   [DS_INTERP] = { 6, 6 },  [DS_THREAD] = { 19, 22 },
	[DS_FRAME] = { 28, 31 },   [DS_CODE] = { 34, 39 },  [DS_OBJECT] = { 44, 50 },
	[DS_TYPE] = { 46, 52 },    [DS_BYTES] = { 64, 74 }, [DS_UNICODE] = { 67, 77 },
};

/* One field of struct pyoffsets: the struct it is in and the word holding it, by layout. */
struct debug_field {
	size_t field;
	uint8_t in;
	uint8_t word[DEBUG_LAYOUTS];
};
/* The fields firn reads, with the _Py_DebugOffsets member each one is. */
static const struct debug_field debug_fields[] = {
	{ PYOFF(rt_interp_head), DS_RUNTIME, { 5, 5 } },           /* interpreters_head */
	{ PYOFF(interp_tstate_head), DS_INTERP, { 9, 9 } },        /* threads_head */
	{ PYOFF(ts_next), DS_THREAD, { 21, 24 } },                 /* next */
	{ PYOFF(ts_interp), DS_THREAD, { 22, 25 } },               /* interp */
	{ PYOFF(ts_frame), DS_THREAD, { 23, 26 } },                /* current_frame */
	{ PYOFF(ts_thread_id), DS_THREAD, { 24, 27 } },            /* thread_id */
	{ PYOFF(ts_native_tid), DS_THREAD, { 25, 28 } },           /* native_thread_id */
	{ PYOFF(fr_back), DS_FRAME, { 29, 32 } },                  /* previous */
	{ PYOFF(fr_code), DS_FRAME, { 30, 33 } },                  /* executable */
	{ PYOFF(fr_lasti), DS_FRAME, { 31, 34 } },                 /* instr_ptr */
	{ PYOFF(fr_owner), DS_FRAME, { 33, 36 } },                 /* owner */
	{ PYOFF(co_filename), DS_CODE, { 35, 40 } },               /* filename */
	{ PYOFF(co_name), DS_CODE, { 36, 41 } },                   /* name */
	{ PYOFF(co_qualname), DS_CODE, { 37, 42 } },               /* qualname */
	{ PYOFF(co_linetable), DS_CODE, { 38, 43 } },              /* linetable */
	{ PYOFF(co_firstlineno), DS_CODE, { 39, 44 } },            /* firstlineno */
	{ PYOFF(co_code_adaptive), DS_CODE, { 43, 48 } },          /* co_code_adaptive */
	{ PYOFF(ob_type), DS_OBJECT, { 45, 51 } },                 /* ob_type */
	{ PYOFF(tp_name), DS_TYPE, { 47, 53 } },                   /* tp_name */
	{ PYOFF(bytes_size), DS_BYTES, { 65, 75 } },               /* ob_size */
	{ PYOFF(bytes_sval), DS_BYTES, { 66, 76 } },               /* ob_sval */
	{ PYOFF(unicode_state), DS_UNICODE, { 68, 78 } },          /* state */
	{ PYOFF(unicode_length), DS_UNICODE, { 69, 79 } },         /* length */
	{ PYOFF(unicode_ascii_size), DS_UNICODE, { 70, 80 } },     /* asciiobject_size */
};
#define DEBUG_FIELDS (sizeof(debug_fields) / sizeof(debug_fields[0]))

/* The layout of 3.minor: its own, or the newest for a later version (then checked by its sizes
 * like any other, and refused when they do not fit). */
static const struct debug_layout *debug_layout_of(int minor)
{
	const struct debug_layout *l = NULL;

	for (size_t i = 0; i < DEBUG_LAYOUTS; i++)
		if (debug_layouts[i].minor <= minor)
			l = &debug_layouts[i];
	return l;
}

/* The size in d (of layout l) of struct s. */
static uint64_t debug_size(const struct debug_layout *l, const uint64_t *d, enum debug_struct s)
{
	return d[debug_sizes[s][l - debug_layouts]];
}

/* The value in d (of layout l) of the field of struct pyoffsets at field. */
static uint64_t debug_value(const struct debug_layout *l, const uint64_t *d, size_t field)
{
	for (size_t i = 0; i < DEBUG_FIELDS; i++)
		if (debug_fields[i].field == field)
			return d[debug_fields[i].word[l - debug_layouts]];
	return 0;
}

/* Copies the offsets out of a _Py_DebugOffsets of layout l (hostile or damaged memory): each
 * must lie inside its struct, whose size is sane, and the object headers every CPython 3 has
 * must read as they are (PyObject 16 bytes, ob_type at 8, tp_name at 24). 0, or
 * -EPROTONOSUPPORT with the first field that did not fit in *bad. */
static int offsets_from_debug(const struct debug_layout *l, const uint64_t *d, struct pyoffsets *o,
			      const char **bad)
{
	size_t c = (size_t)(l - debug_layouts);

	memset(o, 0, sizeof(*o));
	o->runtime_size = debug_size(l, d, DS_RUNTIME);
	*bad = "object header";
	if (debug_size(l, d, DS_OBJECT) != 16 || debug_value(l, d, PYOFF(ob_type)) != 8 ||
	    debug_value(l, d, PYOFF(tp_name)) != 24)
		return -EPROTONOSUPPORT;
	for (size_t i = 0; i < DEBUG_FIELDS; i++) {
		const struct debug_field *f = &debug_fields[i];
		uint64_t v = d[f->word[c]], size = debug_size(l, d, f->in);
		/* interpreter state is large (threads.head sits at ~7 KiB); nothing is past 1 MiB */
		*bad = "an offset past its struct";
		if (size >= (1u << 20) || v >= size || size - v < 8)
			return -EPROTONOSUPPORT;
		set_offset(o, f->field, v);
	}
	/* PyCompactUnicodeObject = PyASCIIObject + utf8_length + utf8 (cpython/unicodeobject.h) */
	o->unicode_compact_size = o->unicode_ascii_size + 16;
	return 0;
}

/* The checks of the header: cookie and version (that of Py_Version), the build (a free-threaded
 * one is refused by name) and the runtime's size (that of the symbol). 0 or -EPROTONOSUPPORT. */
static int debug_header(struct pyruntime *rt, const struct debug_layout *l, const uint64_t *d)
{
	uint64_t want = (uint64_t)rt->major << 24 | (uint64_t)rt->minor << 16;
	uint64_t size = debug_size(l, d, DS_RUNTIME);

	/* zeros where the cookie is: the loader has reserved the library's range but not mapped
	 * its data segment over it yet (a process caught while ld.so maps libpython): looked at
	 * again, not refused */
	if (!d[0] && !d[DO_VERSION])
		return snprintf(rt->reason, sizeof(rt->reason), "python %d.%d: _Py_DebugOffsets not mapped yet",
				rt->major, rt->minor), -EAGAIN;
	if (memcmp(d, "xdebugpy", 8) || (d[DO_VERSION] & 0xffff0000) != want) {
		rt->errors[PYRT_ERR_COOKIE]++;
		snprintf(rt->reason, sizeof(rt->reason), "python %d.%d: _Py_DebugOffsets cookie or version "
			 "(%#llx) does not match Py_Version", rt->major, rt->minor, (unsigned long long)d[DO_VERSION]);
		return -EPROTONOSUPPORT;
	}
	if (d[DO_FREE_THREADED]) {
		snprintf(rt->reason, sizeof(rt->reason), "python %d.%dt (free-threaded) is not supported",
			 rt->major, rt->minor);
		return -EPROTONOSUPPORT;
	}
	if (rt->runtime_sym_size && size != rt->runtime_sym_size) {
		snprintf(rt->reason, sizeof(rt->reason), "python %d.%d: _Py_DebugOffsets gives _PyRuntime "
			 "%llu bytes, the symbol has %llu", rt->major, rt->minor,
			 (unsigned long long)size, (unsigned long long)rt->runtime_sym_size);
		return -EPROTONOSUPPORT;
	}
	return 0;
}

/* 3.13+: reads _Py_DebugOffsets from the process, checks its header and takes the offsets from
 * the layout of its version (a later 3.x than firn knows: the newest layout, if its offsets fit). */
static int offsets_debug(struct pyruntime *rt)
{
	const struct debug_layout *l = debug_layout_of(rt->minor);
	uint64_t d[DEBUG_WORDS_MAX];
	const char *bad;
	int err;

	if (!l || pyruntime_read(rt, rt->runtime_addr, d, l->words * 8))
		return snprintf(rt->reason, sizeof(rt->reason), "cannot read _Py_DebugOffsets"), -EPROTONOSUPPORT;
	if ((err = debug_header(rt, l, d)))
		return err;
	if (offsets_from_debug(l, d, &rt->off, &bad)) {
		snprintf(rt->reason, sizeof(rt->reason), "python %d.%d: _Py_DebugOffsets %s the layout of "
			 "3.%d (%s does not fit): not supported", rt->major, rt->minor,
			 l->minor == rt->minor ? "out of range in" : "is not in", l->minor, bad);
		return -EPROTONOSUPPORT;
	}
	/* not in _Py_DebugOffsets: v3.13.0's offset (gdb on its DWARF), used only once verified */
	rt->off.rt_autotss = rt->minor == 13 ? 2160 : 0;
	rt->offsets_source = l->minor == rt->minor
		? "_Py_DebugOffsets read from the process (cookie, version, build and size checked)"
		: "_Py_DebugOffsets read from the process in the newest layout known (offsets checked)";
	return 0;
}

/* Reads Py_Version (3.11+: PY_VERSION_HEX, Include/patchlevel.h) into major.minor.micro. */
static int version_from_memory(struct pyruntime *rt, uint64_t addr)
{
	uint64_t v;

	if (read_u64(rt, addr, &v))
		return -EFAULT;
	rt->major = (int)(v >> 24 & 0xff), rt->minor = (int)(v >> 16 & 0xff), rt->micro = (int)(v >> 8 & 0xff);
	return 0;
}

/* Table versions: the symbol's size must equal the table's sizeof(_PyRuntimeState) (a symbol of
 * size 0 cannot say; the walk's checks still apply). 0 or -EPROTONOSUPPORT with a reason. */
static int offsets_table(struct pyruntime *rt)
{
	struct pyoffsets o;

	if (table_offsets(rt->major, rt->minor, &o)) {
		snprintf(rt->reason, sizeof(rt->reason), "python %d.%d is not supported (3.8 to 3.14 are)",
			 rt->major, rt->minor);
		return -EPROTONOSUPPORT;
	}
	if (rt->runtime_sym_size && rt->runtime_sym_size != o.runtime_size) {
		snprintf(rt->reason, sizeof(rt->reason), "python %d.%d: _PyRuntime is %llu bytes, the offset "
			 "table expects %llu: not verified", rt->major, rt->minor,
			 (unsigned long long)rt->runtime_sym_size, (unsigned long long)o.runtime_size);
		return -EPROTONOSUPPORT;
	}
	rt->off = o;
	rt->offsets_source = rt->runtime_sym_size ? "offset table, verified by sizeof(_PyRuntimeState)"
						  : "offset table (symbol without size: unverified by size)";
	return 0;
}

/* glibc's struct pthread keeps the kernel thread id at 0x2d0 on x86-64 (nptl/descr.h: after
 * the header, list and TCB fields; py-spy reads the same offset). Used only once verified. */
#define GLIBC_PTHREAD_TID 0x2d0

/* glibc's struct pthread: specific_1stblock, the first 32 pthread_key_t slots of 16 bytes
 * ({seq, data}), at 0x310 on x86-64 (nptl/descr.h; the OpenTelemetry profiler reads the same). */
#define GLIBC_PTHREAD_SPECIFIC 0x310

/* The main thread's state: the list's last (new ones are pushed at the head). */
static uint64_t last_tstate(struct pyruntime *rt, uint64_t ts)
{
	uint64_t next;

	for (unsigned n = 0; n < PYRUNTIME_MAX_THREADS && !read_u64(rt, ts + rt->off.ts_next, &next) && next; n++)
		ts = next;
	return ts;
}

/* Before 3.11 a thread state has only its pthread_t: the tid inside it is trusted only if the
 * main thread's reads as the pid. */
static void verify_pthread_tid(struct pyruntime *rt, uint64_t main_ts)
{
	uint64_t pt;
	uint32_t tid;

	if (read_u64(rt, main_ts + rt->off.ts_thread_id, &pt) || pyruntime_read(rt, pt + GLIBC_PTHREAD_TID, &tid, 4) ||
	    tid != (uint32_t)rt->pid)
		return;
	rt->pthread_tid = GLIBC_PTHREAD_TID;
}

/* pthread_getspecific(tss_key) of the thread whose struct pthread is at pthread. */
static int read_tss(struct pyruntime *rt, uint64_t pthread, uint64_t *tstate)
{
	return read_u64(rt, pthread + GLIBC_PTHREAD_SPECIFIC + 16 * (uint64_t)rt->tss_key + 8, tstate);
}

/* The PyGILState key (_PyRuntime's autoTSSkey, a Py_tss_t {int initialized; key}) maps each
 * thread to its state through pthread_getspecific: trusted once the main thread's slot holds
 * the main thread state. The BPF unwinder finds a thread's state this way. */
static void verify_tss(struct pyruntime *rt, uint64_t main_ts)
{
	uint32_t tss[2];
	uint64_t pt, got;

	if (!rt->off.rt_autotss || pyruntime_read(rt, rt->runtime_addr + rt->off.rt_autotss, tss, sizeof(tss)) ||
	    tss[0] != 1 || tss[1] >= 32 || read_u64(rt, main_ts + rt->off.ts_thread_id, &pt))
		return;
	rt->tss_key = tss[1];
	if (!read_tss(rt, pt, &got) && got == main_ts)
		rt->tss_ok = true;
}

int pyruntime_tstate_of(struct pyruntime *rt, uint64_t pthread, uint64_t *tstate)
{
	if (!rt->tss_ok)
		return -ENOTSUP;
	return read_tss(rt, pthread, tstate);
}

/* Attach-time check of the offsets on live data: the main interpreter's first thread state
 * must point back at that interpreter. 0, -EAGAIN (not initialized), -EPROTONOSUPPORT. */
static int verify_live(struct pyruntime *rt)
{
	uint64_t interp, ts, back;

	if (read_u64(rt, rt->runtime_addr + rt->off.rt_interp_head, &interp))
		return -EFAULT;
	if (!interp || read_u64(rt, interp + rt->off.interp_tstate_head, &ts) || !ts)
		return snprintf(rt->reason, sizeof(rt->reason), "interpreter not initialized"), -EAGAIN;
	if (read_u64(rt, ts + rt->off.ts_interp, &back) || back != interp) {
		snprintf(rt->reason, sizeof(rt->reason), "python %d.%d: thread state does not point back "
			 "at its interpreter: offsets do not fit", rt->major, rt->minor);
		return -EPROTONOSUPPORT;
	}
	ts = last_tstate(rt, ts);
	if (!rt->off.ts_native_tid)
		verify_pthread_tid(rt, ts);
	verify_tss(rt, ts);
	return 0;
}

/* Finds the version of the ELF holding _PyRuntime and the offsets for it. */
static int pick_offsets(struct pyruntime *rt, const struct pyelf *pe, uint64_t bias)
{
	if (pe->has_version) {
		if (version_from_memory(rt, pe->version + bias))
			return -EFAULT;
	} else if (!version_from_name(rt->elf_path, &rt->major, &rt->minor)) {
		snprintf(rt->reason, sizeof(rt->reason), "'%.160s' has _PyRuntime but no Py_Version and "
			 "no versioned name", rt->elf_path);
		return -EPROTONOSUPPORT;
	} else if (rt->major != 3 || rt->minor > 10) {
		/* 3.11+ always exports Py_Version: a name saying otherwise is not trusted */
		snprintf(rt->reason, sizeof(rt->reason), "'%.180s': python %d.%d without Py_Version", rt->elf_path,
			 rt->major, rt->minor);
		return -EPROTONOSUPPORT;
	}
	rt->lines = rt->minor >= 11 ? PYLINES_LOCATIONS : rt->minor == 10 ? PYLINES_LINETABLE : PYLINES_LNOTAB;
	if (rt->major == 3 && rt->minor >= 13)
		return offsets_debug(rt);
	return offsets_table(rt);
}

/* Load bias of a mapping of the ELF (address = vaddr + bias), from the PT_LOAD holding the
 * mapping's file offset (an executable mapping of a shared library starts past offset 0). */
static uint64_t load_bias(const struct procmap_entry *e, const struct pyelf *pe)
{
	if (pe->type == ET_EXEC)
		return 0;
	for (unsigned i = 0; i < pe->nload; i++) {
		uint64_t off = pe->load[i].offset;
		if (e->offset >= (off & ~0xfffULL) && e->offset < off + pe->load[i].filesz)
			return e->start - e->offset - (pe->load[i].vaddr - off);
	}
	return e->start - e->offset - (pe->nload ? pe->load[0].vaddr - pe->load[0].offset : 0);
}

/* The mappings worth a look: executable, of a file (each file once per run of mappings). */
static bool maybe_python(const struct procmap_entry *e, const struct procmap_entry *prev)
{
	return e->x && e->kind == PROCMAP_FILE &&
	       !(prev && prev->x && prev->inode == e->inode && prev->dev_major == e->dev_major &&
		 prev->dev_minor == e->dev_minor && !strcmp(prev->path, e->path));
}

/* Notes a pre-3.7 CPython (no _PyRuntime) so the caller can refuse it with a reason. */
static void note_old_python(struct pyruntime *rt, const char *path)
{
	int major = 0, minor = 0;

	version_from_name(path, &major, &minor);
	rt->major = major, rt->minor = minor;
	snprintf(rt->reason, sizeof(rt->reason), "'%.180s': python %d.%d has no _PyRuntime (3.8 to 3.14 "
		 "are supported)", path, major, minor);
}

/* Scans the executable mappings for the ELF defining _PyRuntime (each file's symbols read
 * once through c); fills rt's path, addresses and version. */
static int scan_maps(struct pyruntime *rt, const struct procmap *m, struct pyfile_cache *c)
{
	const struct procmap_entry *prev = NULL;
	bool old = false;

	for (size_t i = 0; i < m->n; i++) {
		const struct procmap_entry *e = &m->entries[i];
		const struct pyfile *f;

		if (!maybe_python(e, prev))
			continue;
		prev = e;
		if (!(f = pyfile_get(c, rt->pid, e)) || f->err)
			continue;
		if (!f->pe.has_runtime) {
			if (f->pe.has_tstate_current && !old)
				old = true, note_old_python(rt, e->path);
			continue;
		}
		uint64_t bias = load_bias(e, &f->pe);
		snprintf(rt->elf_path, sizeof(rt->elf_path), "%s", e->path);
		rt->runtime_addr = f->pe.runtime + bias, rt->runtime_sym_size = f->pe.runtime_size;
		rt->eval_addr = f->pe.eval ? f->pe.eval + bias : 0, rt->eval_size = f->pe.eval_size;
		rt->eval_cold = f->pe.cold ? f->pe.cold + bias : 0, rt->eval_cold_size = f->pe.cold_size;
		return pick_offsets(rt, &f->pe, bias);
	}
	return old ? -EPROTONOSUPPORT : -ENOENT;
}

static int cache_new(struct pyruntime *rt);

int pyruntime_find_in(pid_t pid, const struct procmap *maps, struct pyfile_cache *c, struct pyruntime *rt)
{
	struct procmap m;
	int err;

	memset(rt, 0, sizeof(*rt));
	rt->pid = pid;
	if (!maps && (err = procmap_read(&m, pid)))
		return err == -ENOENT ? -ESRCH : err;
	err = scan_maps(rt, maps ? maps : &m, c);
	if (!maps)
		procmap_release(&m);
	if (err == -ENOENT && !rt->reason[0])
		snprintf(rt->reason, sizeof(rt->reason), "no mapped ELF defines _PyRuntime");
	if (err)
		return err;
	if ((err = verify_live(rt)))
		return err;
	if ((err = cache_new(rt)))
		return err;
	return 0;
}

int pyruntime_find(pid_t pid, struct pyruntime *rt)
{
	struct pyfile_cache *c = pyfile_cache_new();
	int err;

	if (!c) {
		memset(rt, 0, sizeof(*rt));
		return -ENOMEM;
	}
	err = pyruntime_find_in(pid, NULL, c, rt);
	pyfile_cache_free(c);
	return err;
}

/* The largest of a few offsets plus the width read there: how much of a struct to read at once. */
static size_t span(uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
	uint32_t m = a > b ? a : b;

	m = m > c ? m : c;
	m = m > d ? m : d;
	return m + 8;
}

/* Checks that the type at type_addr is PyCode_Type (its tp_name is "code"); remembered once true. */
static bool is_code_type(struct pyruntime *rt, uint64_t type_addr)
{
	uint64_t name;
	char buf[5];

	if (rt->code_type)
		return type_addr == rt->code_type;
	if (read_u64(rt, type_addr + rt->off.tp_name, &name) || pyruntime_read(rt, name, buf, 5) ||
	    memcmp(buf, "code", 5))
		return false;
	rt->code_type = type_addr;
	return true;
}

/* Reads the head of the code object at code (the first len bytes) and checks its type. */
static int read_code(struct pyruntime *rt, uint64_t code, uint8_t *blk, size_t len)
{
	if (pyruntime_read(rt, code, blk, len))
		return -EFAULT;
	if (!is_code_type(rt, load_u64(blk, rt->off.ob_type))) {
		rt->errors[PYRT_ERR_TYPE]++;
		return -EINVAL;
	}
	return 0;
}

/* The walk's check that a frame's code is a code object, remembered per address so that a stack
 * costs one read per frame once its code objects were seen (pycode_resolve checks again).
 * *first gets _co_firsttraceable where the version has it. */
static int walk_code(struct pyruntime *rt, uint64_t code, uint8_t *blk, size_t len, uint32_t *first)
{
	size_t h = (code >> 4) * 0x9e3779b97f4a7c15ULL >> 56;
	int err;

	if (!code || rt->walk_code[h] != code) { /* 0 is an empty slot's, never a code object */
		if ((err = read_code(rt, code, blk, len)))
			return err;
		rt->walk_code[h] = code;
		rt->walk_first[h] = rt->off.co_firsttraceable ? (uint32_t)load_i32(blk, rt->off.co_firsttraceable) : 0;
	}
	if (first)
		*first = rt->walk_first[h];
	return 0;
}

/* A thread's frames mostly sit next to each other (3.11+: its data stack; before: frame objects
 * allocated one after another): one read of the page holding a frame serves the callers that
 * follow on that page, read at one instant. A frame crossing the page end is read alone. */
static int read_frame(struct pyruntime *rt, uint64_t f, void *blk, size_t len)
{
	uint64_t page = f & ~(uint64_t)(PYRT_PAGE - 1);

	if (f + len > page + PYRT_PAGE)
		return pyruntime_read(rt, f, blk, len);
	if (!rt->page_valid || rt->page_addr != page) {
		if (pyruntime_read(rt, page, rt->page, PYRT_PAGE)) /* not all mapped: an image */
			return pyruntime_read(rt, f, blk, len);
		rt->page_addr = page, rt->page_valid = true;
	}
	memcpy(blk, rt->page + (f - page), len);
	return 0;
}

/* One frame of 3.8-3.10 (PyFrameObject): its code, lasti in bytes and the caller. */
static int step_frameobject(struct pyruntime *rt, uint64_t f, struct pyframe_raw *out, uint64_t *back,
			    bool *skip)
{
	const struct pyoffsets *o = &rt->off;
	uint8_t blk[256], code[16];
	int32_t lasti;

	if (read_frame(rt, f, blk, span(o->fr_back, o->fr_code, o->fr_lasti, 0)))
		return -EFAULT;
	*back = load_u64(blk, o->fr_back), out->code = load_u64(blk, o->fr_code);
	lasti = load_i32(blk, o->fr_lasti);
	/* 3.10 counts code units (2 bytes); -1 means "not started"; a damaged one reads as unknown */
	out->lasti = lasti < 0 || lasti > INT32_MAX / 2 ? -1 : rt->minor == 10 ? lasti * 2 : lasti;
	*skip = false;
	return walk_code(rt, out->code, code, o->ob_type + 8, NULL);
}

/* One _PyInterpreterFrame (3.11+): skips C-stack and entry shims (3.12+) and frames not yet started
 * (3.11, 3.12: _PyFrame_IsIncomplete in pycore_frame.h). */
static int step_interpframe(struct pyruntime *rt, uint64_t f, struct pyframe_raw *out, uint64_t *back,
			    bool *skip)
{
	const struct pyoffsets *o = &rt->off;
	uint8_t blk[256], code[512];
	uint64_t instr, start;
	uint32_t first = 0;
	int owner, err;

	if (read_frame(rt, f, blk, span(o->fr_back, o->fr_code, o->fr_lasti, o->fr_owner)))
		return -EFAULT;
	*back = load_u64(blk, o->fr_back), out->code = load_u64(blk, o->fr_code);
	if (rt->minor >= 14)
		out->code &= ~PY_STACKREF_TAG;
	instr = load_u64(blk, o->fr_lasti), owner = blk[o->fr_owner];
	*skip = rt->minor >= 12 && owner >= FRAME_OWNED_BY_SHIM;
	if (*skip)
		return 0;
	if ((err = walk_code(rt, out->code, code, span(o->ob_type, o->co_firsttraceable, 0, 0), &first)))
		return err;
	start = out->code + o->co_code_adaptive;
	if (o->co_firsttraceable && owner != FRAME_OWNED_BY_GENERATOR && instr < start + 2 * (uint64_t)first) {
		*skip = true;
		return 0;
	}
	out->lasti = instr < start || instr - start > INT32_MAX ? -1 : (int32_t)(instr - start);
	return 0;
}

/* The thread's innermost frame: tstate.frame (<= 3.10), tstate.cframe->current_frame (3.11,
 * 3.12) or tstate.current_frame (3.13+). */
static int first_frame(struct pyruntime *rt, const uint8_t *ts, uint64_t *f)
{
	uint64_t p = load_u64(ts, rt->off.ts_frame);

	if (rt->minor == 11 || rt->minor == 12) {
		if (!p)
			return *f = 0, 0;
		return read_u64(rt, p + rt->off.cframe_current, f);
	}
	*f = p;
	return 0;
}

/* Walks one thread's frame chain into t (leaf first), bounded by PYRUNTIME_MAX_DEPTH. */
static void walk_frames(struct pyruntime *rt, uint64_t f, struct pythread *t)
{
	for (unsigned steps = 0; f; steps++) {
		struct pyframe_raw fr = { 0, -1 };
		uint64_t back;
		bool skip;
		int err;

		if (t->nframes == PYRUNTIME_MAX_DEPTH || steps >= 4 * PYRUNTIME_MAX_DEPTH) {
			rt->errors[PYRT_ERR_DEPTH]++;
			t->truncated = true;
			return;
		}
		err = rt->minor >= 11 ? step_interpframe(rt, f, &fr, &back, &skip)
				      : step_frameobject(rt, f, &fr, &back, &skip);
		if (err == -EFAULT) {
			t->truncated = true;
			return;
		}
		if (!err && !skip)
			t->frames[t->nframes++] = fr;
		f = back;
	}
}

/* Reads one thread state into t and returns the next one's address through *next. */
static int walk_thread(struct pyruntime *rt, uint64_t ts, struct pythread *t, uint64_t *next)
{
	const struct pyoffsets *o = &rt->off;
	uint8_t blk[512];
	uint64_t f;

	memset(t, 0, offsetof(struct pythread, frames));
	rt->page_valid = false; /* each thread's frames are read afresh */
	if (pyruntime_read(rt, ts, blk, span(o->ts_next, o->ts_frame, o->ts_thread_id, o->ts_native_tid)))
		return -EFAULT;
	t->tstate = ts, *next = load_u64(blk, o->ts_next);
	t->thread_id = load_u64(blk, o->ts_thread_id);
	t->native_tid = o->ts_native_tid ? (uint32_t)load_u64(blk, o->ts_native_tid) : 0;
	if (!o->ts_native_tid && rt->pthread_tid &&
	    pyruntime_read(rt, t->thread_id + rt->pthread_tid, &t->native_tid, sizeof(t->native_tid)))
		t->native_tid = 0;
	if (first_frame(rt, blk, &f))
		t->truncated = true;
	else
		walk_frames(rt, f, t);
	return 0;
}

int pyruntime_stacks(struct pyruntime *rt, pyruntime_stack_fn fn, void *arg)
{
	struct pythread *t;
	uint64_t interp, ts;
	int ret = 0;

	if (read_u64(rt, rt->runtime_addr + rt->off.rt_interp_head, &interp) ||
	    read_u64(rt, interp + rt->off.interp_tstate_head, &ts))
		return -EFAULT;
	if (!(t = malloc(sizeof(*t))))
		return -ENOMEM;
	for (unsigned n = 0; ts && !ret; n++) {
		if (n == PYRUNTIME_MAX_THREADS) {
			rt->errors[PYRT_ERR_THREADS]++;
			break;
		}
		if (walk_thread(rt, ts, t, &ts))
			break;
		ret = fn(t, arg);
	}
	free(t);
	return ret;
}

/* A resolved code object, keyed by its address and checked against the fields it was read from. */
struct pycode_entry {
	uint64_t code, filename_ptr, name_ptr, linetable_ptr;
	int firstlineno;
	char *qualname, *filename;
	uint8_t *lines;
	size_t nlines;
};

/* Frees an entry's strings and empties its slot (an evicted or unreadable code object). */
static void entry_clear(struct pycode_entry *e)
{
	free(e->qualname), free(e->filename), free(e->lines);
	memset(e, 0, sizeof(*e));
}

/* Allocates rt's code cache at its smallest; 0 or -ENOMEM. */
static int cache_new(struct pyruntime *rt)
{
	rt->cache_bits = PYCODE_CACHE_MIN_BITS;
	rt->cache_evictions = rt->cache_lookups = 0;
	rt->cache = calloc((size_t)1 << rt->cache_bits, sizeof(struct pycode_entry));
	return rt->cache ? 0 : -ENOMEM;
}

/* The slot of code object code in a cache of 2^bits slots (a multiplicative hash). */
static size_t cache_slot(uint64_t code, unsigned bits)
{
	return (size_t)((code >> 4) * 0x9e3779b97f4a7c15ULL >> (64 - bits));
}

/* Makes the cache four times larger, moving its entries (one that lands where another went
 * first is dropped). On -ENOMEM the cache stays as it is: it works, only smaller. */
static void cache_grow(struct pyruntime *rt)
{
	unsigned bits = rt->cache_bits + 2;
	struct pycode_entry *c = calloc((size_t)1 << bits, sizeof(*c));

	if (!c)
		return;
	for (size_t i = 0; i < (size_t)1 << rt->cache_bits; i++) {
		struct pycode_entry *e = &rt->cache[i], *to = &c[cache_slot(e->code, bits)];
		if (!e->code)
			continue;
		if (to->code)
			entry_clear(e);
		else
			*to = *e;
	}
	free(rt->cache);
	rt->cache = c;
	rt->cache_bits = bits;
	rt->cache_evictions = rt->cache_lookups = 0;
}

/* The slot for code_addr. A miss that evicts another code object counts; more evictions than
 * half the slots within 8 lookups a slot (a miss rate over 1/16: the working set does not fit)
 * grow the cache. */
static struct pycode_entry *cache_at(struct pyruntime *rt, uint64_t code_addr)
{
	struct pycode_entry *e = &rt->cache[cache_slot(code_addr, rt->cache_bits)];
	size_t slots = (size_t)1 << rt->cache_bits;

	if (++rt->cache_lookups > 8 * slots) /* a new window */
		rt->cache_lookups = 1, rt->cache_evictions = 0;
	if (!e->code || e->code == code_addr || rt->cache_bits >= PYCODE_CACHE_MAX_BITS)
		return e;
	if (++rt->cache_evictions <= slots / 2)
		return e;
	cache_grow(rt);
	return &rt->cache[cache_slot(code_addr, rt->cache_bits)];
}

void pyruntime_release(struct pyruntime *rt)
{
	for (size_t i = 0; rt->cache && i < (size_t)1 << rt->cache_bits; i++)
		entry_clear(&rt->cache[i]);
	free(rt->cache);
	rt->cache = NULL;
}

/* Appends code point c to out as UTF-8 (out has room for 4 more bytes). */
static size_t put_utf8(char *out, uint32_t c)
{
	if (c < 0x80)
		return out[0] = (char)c, 1;
	if (c < 0x800)
		return out[0] = (char)(0xc0 | c >> 6), out[1] = (char)(0x80 | (c & 63)), 2;
	if (c < 0x10000 && (c < 0xd800 || c > 0xdfff))
		return out[0] = (char)(0xe0 | c >> 12), out[1] = (char)(0x80 | (c >> 6 & 63)),
		       out[2] = (char)(0x80 | (c & 63)), 3;
	if (c < 0x110000 && c >= 0x10000)
		return out[0] = (char)(0xf0 | c >> 18), out[1] = (char)(0x80 | (c >> 12 & 63)),
		       out[2] = (char)(0x80 | (c >> 6 & 63)), out[3] = (char)(0x80 | (c & 63)), 4;
	return out[0] = '?', 1;
}

/* The code point i of a string's data of kind 1, 2 or 4 bytes a character. */
static uint32_t pystr_char(const uint8_t *data, uint32_t kind, int64_t i)
{
	const uint8_t *c = data + i * kind;

	return kind == 1 ? c[0] : kind == 2 ? (uint32_t)c[0] | c[1] << 8
					    : (uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 |
						      (uint32_t)c[3] << 24;
}

/* Reads a compact str object (PyASCIIObject / PyCompactUnicodeObject, state bits as in
 * cpython/unicodeobject.h: kind 2-4, compact 5, ascii 6) as a malloc'd UTF-8 string of at most
 * max characters; a longer one is cut visibly (its first max characters, then PYSTR_CUT). NULL
 * when unreadable or not a compact string. */
static char *read_pystr(struct pyruntime *rt, uint64_t addr, int64_t max)
{
	const struct pyoffsets *o = &rt->off;
	uint8_t hdr[64], *data = NULL;
	uint32_t state, kind;
	int64_t len;
	char *s = NULL, *p;

	if (pyruntime_read(rt, addr, hdr, o->unicode_state + 4))
		return NULL;
	memcpy(&len, hdr + o->unicode_length, 8), memcpy(&state, hdr + o->unicode_state, 4);
	kind = state >> 2 & 7;
	if (!(state >> 5 & 1) || (kind != 1 && kind != 2 && kind != 4) || len < 0) {
		rt->errors[PYRT_ERR_TYPE]++;
		return NULL;
	}
	bool cut = len > max;
	len = cut ? max : len;
	addr += (state >> 6 & 1) ? o->unicode_ascii_size : o->unicode_compact_size;
	if (!(data = malloc(len ? (size_t)len * kind : 1)) ||
	    (len && pyruntime_read(rt, addr, data, (size_t)len * kind)) ||
	    !(s = p = malloc((size_t)len * 4 + sizeof(PYSTR_CUT)))) {
		free(data);
		return NULL;
	}
	for (int64_t i = 0; i < len; i++)
		p += put_utf8(p, pystr_char(data, kind, i));
	strcpy(p, cut ? PYSTR_CUT : "");
	free(data);
	return s;
}

/* Reads a bytes object (the line table) of at most PYLINES_MAX bytes: malloc'd, length in *n. */
static uint8_t *read_pybytes(struct pyruntime *rt, uint64_t addr, size_t *n)
{
	int64_t len;
	uint8_t *b;

	if (read_u64(rt, addr + rt->off.bytes_size, (uint64_t *)&len) || len < 0)
		return NULL;
	*n = len > PYLINES_MAX ? PYLINES_MAX : (size_t)len;
	if (!(b = malloc(*n ? *n : 1)) || (*n && pyruntime_read(rt, addr + rt->off.bytes_sval, b, *n))) {
		free(b);
		return NULL;
	}
	return b;
}

/* Fills e from the code object head blk (read at code): strings and line table. */
static int entry_fill(struct pyruntime *rt, struct pycode_entry *e, uint64_t code, const uint8_t *blk)
{
	const struct pyoffsets *o = &rt->off;
	uint64_t qual = o->co_qualname ? load_u64(blk, o->co_qualname) : load_u64(blk, o->co_name);

	entry_clear(e);
	e->code = code, e->filename_ptr = load_u64(blk, o->co_filename), e->name_ptr = qual;
	e->linetable_ptr = load_u64(blk, o->co_linetable), e->firstlineno = load_i32(blk, o->co_firstlineno);
	e->qualname = read_pystr(rt, qual, PYSTR_MAX);
	e->filename = read_pystr(rt, e->filename_ptr, PYPATH_MAX);
	e->lines = read_pybytes(rt, e->linetable_ptr, &e->nlines);
	if (!e->qualname || !e->filename) {
		entry_clear(e);
		return -EFAULT;
	}
	return 0;
}

/* Whether the cached entry still describes the code object whose head is blk. */
static bool entry_matches(const struct pyruntime *rt, const struct pycode_entry *e, uint64_t code,
			  const uint8_t *blk)
{
	const struct pyoffsets *o = &rt->off;
	uint64_t qual = o->co_qualname ? load_u64(blk, o->co_qualname) : load_u64(blk, o->co_name);

	return e->code == code && e->filename_ptr == load_u64(blk, o->co_filename) && e->name_ptr == qual &&
	       e->linetable_ptr == load_u64(blk, o->co_linetable) && e->firstlineno == load_i32(blk, o->co_firstlineno);
}

int pycode_resolve(struct pyruntime *rt, uint64_t code_addr, int32_t lasti, struct pyframe *out)
{
	const struct pyoffsets *o = &rt->off;
	uint8_t blk[512];
	struct pycode_entry *e;
	int err;

	if ((err = read_code(rt, code_addr, blk, span(o->co_filename, o->co_name, o->co_qualname,
						     span(o->co_linetable, o->co_firstlineno, o->ob_type, 0)))))
		return err;
	e = cache_at(rt, code_addr);
	if (!entry_matches(rt, e, code_addr, blk) && (err = entry_fill(rt, e, code_addr, blk)))
		return err;
	out->qualname = e->qualname, out->filename = e->filename, out->firstlineno = e->firstlineno;
	out->linetable = e->lines, out->linetable_len = e->lines ? e->nlines : 0;
	out->line = e->lines ? pylines_addr2line(rt->lines, e->lines, e->nlines, e->firstlineno,
						 lasti < 0 ? 0 : (uint32_t)lasti) : -1;
	return 0;
}

int pyruntime_init_image(struct pyruntime *rt, const void *image, size_t size, uint64_t base, int minor)
{
	int err;

	memset(rt, 0, sizeof(*rt));
	rt->image = image, rt->image_size = size, rt->image_base = base;
	rt->major = 3, rt->minor = minor, rt->runtime_addr = base;
	snprintf(rt->elf_path, sizeof(rt->elf_path), "(image)");
	rt->lines = minor >= 11 ? PYLINES_LOCATIONS : minor == 10 ? PYLINES_LINETABLE : PYLINES_LNOTAB;
	if ((err = minor >= 13 ? offsets_debug(rt) : offsets_table(rt)))
		return err;
	if ((err = cache_new(rt)))
		return err;
	return 0;
}
