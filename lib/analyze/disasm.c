/* A function's instructions (capstone), their source lines (libdw), the samples that hit them. */
#include "analyze/disasm.h"

#include <capstone/capstone.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/debuginfo.h"
#include "elf/dwarfsym.h"
#include "elf/elffile.h"
#include "elf/funcbounds.h"
#include "base/escape.h"
#include "base/safeopen.h"
#include "base/vec.h"

#define MAX_FUNCTION_BYTES (4u << 20)
#define MAX_SOURCE_BYTES (64u << 20)

/* A source file as read: its text with each newline replaced by NUL, and where lines start. */
struct disasm_source {
	int state;      /* 0 not read yet, 1 read, -1 unreadable */
	char *text;
	char **lines;
	uint32_t nlines;
};

/* How disasm_open_file finds the function. */
enum find_by { BY_NAME, BY_VADDR, BY_OFFSET };

/* Index of the symbol of e containing vaddr, or -1 (symbols are sorted and do not overlap). */
static ptrdiff_t symbol_at(const struct elfsym *e, uint64_t vaddr)
{
	size_t lo = UPPER_BOUND(e->syms, e->nsyms, start, vaddr);

	if (!lo || vaddr >= elfsym_end(e, &e->syms[lo - 1]))
		return -1;
	return lo - 1;
}

/* Index of the first symbol of e named name, or -1. */
static ptrdiff_t symbol_named(const struct elfsym *e, const char *name)
{
	for (size_t i = 0; i < e->nsyms; i++)
		if (!strcmp(elfsym_name(e, &e->syms[i]), name))
			return i;
	return -1;
}

/* The start a bounds name "BASE+0xSTART" gives, when BASE is the base name of path (as the
 * symbolizer names code no symbol covers); false for any other name. */
static bool bounds_name_start(const char *name, const char *path, uint64_t *start)
{
	const char *base = strrchr(path, '/'), *plus = strrchr(name, '+');
	char *end;

	base = base ? base + 1 : path;
	if (!plus || (size_t)(plus - name) != strlen(base) || strncmp(name, base, plus - name) ||
	    strncmp(plus, "+0x", 3) || !plus[3] || plus[3] == '-' || plus[3] == '+')
		return false;
	errno = 0;
	*start = strtoull(plus + 3, &end, 16);
	return !*end && !errno;
}

/* The function .eh_frame bounds in the file at fd (path: its name) for code no symbol covers:
 * the one holding vaddr (BY_VADDR, BY_OFFSET) or the one the name "BASE+0xSTART" starts
 * (BY_NAME), named as the symbolizer names it; sets d->name/start/end. 0, -ENOENT, -ENOMEM. */
static int find_bounds(struct disasm *d, int fd, const char *path, const char *name,
		       uint64_t vaddr, enum find_by by)
{
	struct funcbounds fb;
	uint64_t start = vaddr;

	if (by == BY_NAME && !bounds_name_start(name, path, &start))
		return -ENOENT;
	int err = funcbounds_init_fd(&fb, fd);
	if (err)
		return err == -ENOMEM ? err : -ENOENT;
	ptrdiff_t i = funcbounds_find(&fb, start);
	if (i < 0 || (by == BY_NAME && fb.r[i].start != start)) {
		funcbounds_release(&fb);
		return -ENOENT;
	}
	d->start = fb.r[i].start;
	d->end = fb.r[i].end;
	d->from_bounds = true;
	funcbounds_release(&fb);
	const char *base = strrchr(path, '/');
	if (asprintf(&d->name, "%s+0x%" PRIx64, base ? base + 1 : path, d->start) < 0)
		return d->name = NULL, -ENOMEM;
	return 0;
}

/* Picks the symbol by name, virtual address or file offset, else (no symbol there: a stripped
 * file) the function .eh_frame bounds there; sets d->name/start/end. */
static int find_symbol(struct disasm *d, int fd, const char *path, const char *name,
		       uint64_t where, enum find_by by)
{
	const struct elfsym *e = &d->elf;
	uint64_t vaddr = where;
	ptrdiff_t i;

	if (by == BY_OFFSET && elfsym_file_offset_to_vaddr(e, where, &vaddr))
		return -ENOENT;
	i = by == BY_NAME ? symbol_named(e, name) : symbol_at(e, vaddr);
	if (i < 0)
		return find_bounds(d, fd, path, name, vaddr, by);
	d->start = e->syms[i].start;
	d->end = elfsym_end(e, &e->syms[i]);
	d->name = strdup(elfsym_name(e, &e->syms[i]));
	return d->name ? 0 : -ENOMEM;
}

/* Reads the function's bytes through the PT_LOAD segment holding them; *buf is malloc'd. */
static int read_code(const struct disasm *d, int fd, uint8_t **buf, size_t *len)
{
	uint64_t size = d->end - d->start;

	if (!size || size > MAX_FUNCTION_BYTES)
		return -ENOENT;
	for (size_t i = 0; i < d->elf.nsegments; i++) {
		const struct elfsym_segment *s = &d->elf.segments[i];
		if (d->start < s->vaddr || d->end > s->vaddr + s->filesz)
			continue;
		*buf = malloc(size);
		if (!*buf)
			return -ENOMEM;
		if (pread(fd, *buf, size, d->start - s->vaddr + s->offset) != (ssize_t)size) {
			free(*buf);
			*buf = NULL;
			return -EIO;
		}
		*len = size;
		return 0;
	}
	return -ENOENT;
}

/* Capstone architecture and mode for an ELF machine; -ENOEXEC for one it does not handle. */
static int cs_machine(Elf *elf, cs_arch *arch, cs_mode *mode)
{
	GElf_Ehdr eh;

	if (!elf || !gelf_getehdr(elf, &eh))
		return -ENOEXEC;
	switch (eh.e_machine) {
	case EM_X86_64:
		*arch = CS_ARCH_X86, *mode = CS_MODE_64;
		return 0;
	case EM_386:
		*arch = CS_ARCH_X86, *mode = CS_MODE_32;
		return 0;
	case EM_AARCH64:
		*arch = CS_ARCH_ARM64, *mode = CS_MODE_ARM;
		return 0;
	}
	return -ENOEXEC;
}

/* ---- capstone, loaded on first use ----
 * Only annotation disassembles; every other command (a continuous `record` above all) would map
 * libcapstone for nothing: its relocated tables are 1.3 MB of anonymous memory in each process
 * that loads it, 3.2 MB of RSS with its text (measured on a system-wide recording, Debian 12's
 * capstone 4). So the library is opened here, by its soname, the first time a function is
 * disassembled. */
#define CS_STR_(x) #x
#define CS_STR(x) CS_STR_(x)
#define CS_SONAME "libcapstone.so." CS_STR(CS_API_MAJOR)

static struct {
	cs_err (*open)(cs_arch, cs_mode, csh *);
	cs_err (*option)(csh, cs_opt_type, size_t);
	size_t (*disasm)(csh, const uint8_t *, size_t, uint64_t, size_t, cs_insn **);
	void (*free)(cs_insn *, size_t);
	cs_err (*close)(csh *);
	bool ok;
} cs;
static pthread_once_t cs_once = PTHREAD_ONCE_INIT;

/* Opens capstone and finds its functions (once; cs.ok says whether every one was found). */
static void cs_load(void)
{
	void *h = dlopen(CS_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return;
	*(void **)&cs.open = dlsym(h, "cs_open");
	*(void **)&cs.option = dlsym(h, "cs_option");
	*(void **)&cs.disasm = dlsym(h, "cs_disasm");
	*(void **)&cs.free = dlsym(h, "cs_free");
	*(void **)&cs.close = dlsym(h, "cs_close");
	cs.ok = cs.open && cs.option && cs.disasm && cs.free && cs.close;
	if (!cs.ok)
		dlclose(h);
}

const char *disasm_library(void)
{
	return CS_SONAME;
}

/* Disassembles code (at d->start) into d->insns; data capstone cannot decode becomes ".byte". */
static int decode(struct disasm *d, Elf *elf, const uint8_t *code, size_t len)
{
	cs_arch arch;
	cs_mode mode;
	csh h;
	cs_insn *ins = NULL;
	int err = cs_machine(elf, &arch, &mode);

	if (err)
		return err;
	pthread_once(&cs_once, cs_load);
	if (!cs.ok)
		return -ELIBACC;
	if (cs.open(arch, mode, &h) != CS_ERR_OK)
		return -ENOEXEC;
	cs.option(h, CS_OPT_SKIPDATA, CS_OPT_ON);
	size_t n = cs.disasm(h, code, len, d->start, 0, &ins);
	d->insns = calloc(n ? n : 1, sizeof(*d->insns));
	if (!d->insns)
		err = -ENOMEM;
	for (size_t i = 0; !err && i < n; i++) {
		struct disasm_insn *o = &d->insns[i];
		o->addr = ins[i].address;
		o->size = ins[i].size;
		o->file = -1;
		char text[sizeof(ins[i].mnemonic) + sizeof(ins[i].op_str) + 2];
		size_t tl = snprintf(text, sizeof(text), "%-7s %s", ins[i].mnemonic, ins[i].op_str);
		while (tl && text[tl - 1] == ' ')
			text[--tl] = 0;
		if (tl >= sizeof(o->text))
			tl = sizeof(o->text) - 1;
		memcpy(o->text, text, tl);
		o->text[tl] = 0;
	}
	if (!err)
		d->n = n;
	cs.free(ins, n);
	cs.close(&h);
	return err;
}

/* Index of a source file name in d->files, adding it; -ENOMEM. */
static int32_t file_index(struct disasm *d, const char *name)
{
	for (size_t i = 0; i < d->nfiles; i++)
		if (!strcmp(d->files[i], name))
			return i;
	if (VEC_GROW(d->files, d->capfiles, d->nfiles + 1))
		return -ENOMEM;
	if (!(d->files[d->nfiles] = strdup(name)))
		return -ENOMEM;
	return d->nfiles++;
}

/* Sets the file and line of every instruction from the line table lib/elf/dwarfsym reads for the
 * symbolizer (the innermost frame's file and line: the same answer a profile's location has). */
static int read_lines(struct disasm *d, struct dwarfsym *dw)
{
	for (size_t i = 0; dw && i < d->n; i++) {
		struct dwarfsym_frame fr;
		int n = dwarfsym_lookup(dw, d->insns[i].addr, &fr, 1);
		if (n < 0)
			return n;
		if (!n || !fr.file || !fr.line)
			continue;
		int32_t f = file_index(d, fr.file);
		if (f < 0)
			return f;
		d->insns[i].file = f;
		d->insns[i].line = fr.line;
		d->has_lines = true;
	}
	return 0;
}

/* The DWARF of the file open at fd, or of its separate debug file found as the symbolizer
 * finds it (lib/elf/debuginfo: by build id, then by .gnu_debuglink, inside root first when the file
 * was opened there). NULL when there is none. */
static struct dwarfsym *open_dwarf(const struct disasm *d, int fd, const char *path,
				   const char *root)
{
	struct dwarfsym *dw = dwarfsym_new_fd(fd);
	struct debuginfo_query q = {
		.build_id = d->elf.build_id, .path = path, .root = root,
		.debuglink = d->elf.debuglink[0] ? d->elf.debuglink : NULL,
		.crc = d->elf.debuglink_crc,
	};

	if (dw)
		return dw;
	int dfd = debuginfo_find(&q, NULL, 0);
	if (dfd < 0)
		return NULL;
	dw = dwarfsym_new_fd(dfd);
	close(dfd);
	return dw;
}

/* Source lines of the instructions, when the file (or its debug file) has DWARF. */
static int add_lines(struct disasm *d, int fd, const char *path, const char *root)
{
	struct dwarfsym *dw = open_dwarf(d, fd, path, root);
	int err = read_lines(d, dw);

	dwarfsym_free(dw);
	return err;
}

/* The rows: every instruction, preceded by a source row wherever (file, line) changes. */
static int make_rows(struct disasm *d)
{
	int32_t file = -1;
	uint32_t line = 0;

	d->rows = calloc(2 * d->n + 1, sizeof(*d->rows));
	if (!d->rows)
		return -ENOMEM;
	for (size_t i = 0; i < d->n; i++) {
		const struct disasm_insn *in = &d->insns[i];
		if (in->line && (in->file != file || in->line != line)) {
			d->rows[d->nrows++] = (struct disasm_row){ true, i };
			file = in->file;
			line = in->line;
		}
		d->rows[d->nrows++] = (struct disasm_row){ false, i };
	}
	return 0;
}

/* Everything disasm_open does once the file is open at fd (path: as its process named it,
 * inside root when not NULL). */
static int open_fd(struct disasm *d, int fd, const char *path, const char *root,
		   const char *name, uint64_t where, enum find_by by)
{
	uint8_t *code = NULL;
	size_t len = 0;
	int err = elfsym_init_fd(&d->elf, fd);

	if (err)
		return err;
	memcpy(d->build_id, d->elf.build_id, sizeof(d->build_id));
	if ((err = find_symbol(d, fd, path, name, where, by)) || (err = read_code(d, fd, &code, &len)))
		return err;
	struct elffile ef;
	elffile_open_fd(&ef, fd, ELFFILE_MAPPED); /* ef.elf NULL when not ELF: decode says so */
	err = decode(d, ef.elf, code, len);
	if (!err)
		err = add_lines(d, fd, path, root);
	if (!err)
		err = make_rows(d);
	elffile_close(&ef);
	free(code);
	return err;
}

/* disasm_open, finding the function by name, virtual address or file offset. root: the
 * "/proc/PID/root" path is inside (its debug files are looked for there first), or NULL. */
static int open_file(struct disasm *d, const char *path, const char *root, const char *name,
		     uint64_t where, enum find_by by)
{
	memset(d, 0, sizeof(*d));
	d->path = strdup(path);
	if (!d->path)
		return -ENOMEM;
	int fd = safeopen(path, 0, 0, NULL); /* named by a profile: maybe a FIFO */
	if (fd < 0)
		return fd;
	int err = open_fd(d, fd, root ? path + strlen(root) : path, root, name, where, by);
	close(fd);
	return err;
}

int disasm_open(struct disasm *d, const char *path, const char *name, uint64_t vaddr)
{
	return open_file(d, path, NULL, name, vaddr, name ? BY_NAME : BY_VADDR);
}

void disasm_release(struct disasm *d)
{
	for (size_t i = 0; i < d->nfiles; i++) {
		free(d->files[i]);
		if (d->sources) {
			free(d->sources[i].text);
			free(d->sources[i].lines);
		}
	}
	FREE_ALL(d->sources, d->files, d->insns, d->rows, d->path, d->name, d->function, d->module,
		 d->recorded_build_id, d->mapping_file);
	elfsym_release(&d->elf);
	memset(d, 0, sizeof(*d));
}

ptrdiff_t disasm_find(const struct disasm *d, uint64_t vaddr)
{
	size_t lo = UPPER_BOUND(d->insns, d->n, addr, vaddr);

	if (!lo || vaddr >= d->insns[lo - 1].addr + d->insns[lo - 1].size)
		return -1;
	return lo - 1;
}

int disasm_add(struct disasm *d, uint64_t vaddr, int64_t value)
{
	ptrdiff_t i = disasm_find(d, vaddr);

	if (i < 0)
		return -ENOENT;
	d->insns[i].value += value;
	if (d->insns[i].value > d->max_value)
		d->max_value = d->insns[i].value;
	return 0;
}

/* ---- annotation from a profile ---- */

/* The module name of a mapping as lib/analyze/hist names it: its file's base name, "[kernel.kallsyms]"
 * for a kernel mapping without one. */
static const char *module_of(const struct profile *p, const struct profile_mapping *m)
{
	const char *file = m ? profile_str(p, m->filename) : "";
	const char *base = strrchr(file, '/');

	base = base && base[1] ? base + 1 : file;
	if (!*base && m && m->kind == FRAME_KERNEL)
		return "[kernel.kallsyms]";
	return base;
}

/* The leaf location of sample s under q (the first user one with no_kernel), or NULL; *skip is
 * set when the sample counts nowhere (only kernel frames under no_kernel). */
static const struct profile_location *leaf_of(const struct profile *p,
					      const struct profile_sample *s,
					      const struct disasm_query *q, bool *skip)
{
	*skip = false;
	for (uint32_t i = 0; i < s->nlocs; i++) {
		uint64_t id = s->location_ids[i];
		if (!id || id > p->nlocations)
			continue;
		const struct profile_location *l = &p->locations[id - 1];
		if (q->no_kernel && l->kind == FRAME_KERNEL)
			continue;
		return l;
	}
	*skip = q->no_kernel && s->nlocs > 0;
	return NULL;
}

/* The mapping of location l when its outermost function is q's function, else NULL. */
static const struct profile_mapping *matching_mapping(const struct profile *p,
						      const struct profile_location *l,
						      const struct disasm_query *q)
{
	if (!l || !l->nlines || !l->mapping_id || l->mapping_id > p->nmappings)
		return NULL;
	uint64_t fid = l->lines[l->nlines - 1].function_id;
	if (!fid || fid > p->nfunctions)
		return NULL;
	if (strcmp(profile_str(p, p->functions[fid - 1].name), q->function))
		return NULL;
	const struct profile_mapping *m = &p->mappings[l->mapping_id - 1];
	if (q->module && *q->module && strcmp(module_of(p, m), q->module))
		return NULL;
	return m;
}

/* Turns a runtime address in mapping m into a virtual address of d's file. */
static int to_vaddr(const struct disasm *d, const struct profile_mapping *m, uint64_t addr,
		    uint64_t *vaddr)
{
	if (addr < m->start)
		return -ENOENT;
	return elfsym_file_offset_to_vaddr(&d->elf, addr - m->start + m->offset, vaddr);
}

void disasm_count(struct disasm *d, const struct profile *p, const struct profile_sample *samples,
		  size_t n, const struct disasm_query *q)
{
	for (size_t i = 0; i < d->n; i++)
		d->insns[i].value = 0;
	d->total = d->self = d->elsewhere = d->outside = d->max_value = 0;
	for (size_t i = 0; i < n; i++) {
		bool skip;
		const struct profile_location *l = leaf_of(p, &samples[i], q, &skip);
		int64_t v = q->value_index < p->nsample_types ? samples[i].values[q->value_index] : 0;
		uint64_t vaddr;

		if (skip)
			continue;
		d->total += v;
		const struct profile_mapping *m = matching_mapping(p, l, q);
		if (!m)
			continue;
		d->self += v;
		if (!d->mapping_file || strcmp(profile_str(p, m->filename), d->mapping_file))
			d->elsewhere += v;
		else if (to_vaddr(d, m, l->address, &vaddr) || disasm_add(d, vaddr, v))
			d->outside += v;
	}
}

/* Per file name (string id) of the mappings holding q's function: the value, the hottest
 * location and a pid that mapped it. */
struct candidate {
	uint32_t filename;
	int64_t value, best_value;
	const struct profile_location *best;
	int64_t pid;
};

/* Adds a leaf sample of q's function to the candidates (a short array: few files per name). */
static int candidate_add(struct candidate **c, size_t *n, size_t *cap, const struct profile *p,
			 const struct profile_sample *s, const struct profile_location *l,
			 const struct profile_mapping *m, int64_t v)
{
	size_t i = 0;

	while (i < *n && (*c)[i].filename != m->filename)
		i++;
	if (i == *n) {
		if (VEC_GROW(*c, *cap, *n + 1))
			return -ENOMEM;
		(*c)[(*n)++] = (struct candidate){ m->filename, 0, -1, NULL, -1 };
	}
	(*c)[i].value += v;
	if (v > (*c)[i].best_value) {
		(*c)[i].best_value = v;
		(*c)[i].best = l;
	}
	if ((*c)[i].pid < 0)
		(*c)[i].pid = profile_label_num(p, s, "pid", -1);
	return 0;
}

/* The candidate file holding most of q's function's samples (its index), or -ENOENT. */
static int pick_file(const struct profile *p, const struct profile_sample *samples, size_t n,
		     const struct disasm_query *q, struct candidate **c, size_t *nc)
{
	size_t best = 0, cap = 0;

	for (size_t i = 0; i < n; i++) {
		bool skip;
		const struct profile_location *l = leaf_of(p, &samples[i], q, &skip);
		const struct profile_mapping *m = matching_mapping(p, l, q);
		int64_t v = q->value_index < p->nsample_types ? samples[i].values[q->value_index] : 0;
		if (m && candidate_add(c, nc, &cap, p, &samples[i], l, m, v))
			return -ENOMEM;
	}
	if (!*nc)
		return -ENOENT;
	for (size_t i = 1; i < *nc; i++)
		if ((*c)[i].value > (*c)[best].value)
			best = i;
	return best;
}

/* Opens the function in the candidate's file: at its recorded path, else inside the root of a
 * process that mapped it. The location's file offset finds the function. */
static int open_candidate(struct disasm *d, const struct profile *p, const struct candidate *c)
{
	const struct profile_location *l = c->best;
	const struct profile_mapping *m = &p->mappings[l->mapping_id - 1];
	const char *path = profile_str(p, m->filename);
	uint64_t off = l->address - m->start + m->offset;
	char alt[PATH_MAX + 32], root[32];

	if (m->kind == FRAME_KERNEL || m->kind == FRAME_JIT || path[0] != '/')
		return memset(d, 0, sizeof(*d)), -EOPNOTSUPP;
	int err = open_file(d, path, NULL, NULL, off, BY_OFFSET);
	if (err != -ENOENT || c->pid <= 0 || access(path, F_OK) == 0)
		return err;
	snprintf(root, sizeof(root), "/proc/%lld/root", (long long)c->pid);
	snprintf(alt, sizeof(alt), "%s%s", root, path);
	struct stat st;
	if (safeopen_stat(alt, &st)) /* inside the process's root, as it is opened */
		return err; /* d->path names the recorded path */
	disasm_release(d);
	return open_file(d, alt, root, NULL, off, BY_OFFSET);
}

/* Remembers what was asked and compares the file's build id with the recorded one. */
static int note_query(struct disasm *d, const struct profile *p, const struct candidate *c,
		      const struct disasm_query *q)
{
	const struct profile_mapping *m = &p->mappings[c->best->mapping_id - 1];
	const char *rec = profile_str(p, m->build_id);

	d->function = strdup(q->function);
	d->module = strdup(q->module ? q->module : "");
	d->recorded_build_id = strdup(rec);
	d->mapping_file = strdup(profile_str(p, m->filename));
	if (!d->function || !d->module || !d->recorded_build_id || !d->mapping_file)
		return -ENOMEM;
	d->build_id_differs = *rec && strcasecmp(rec, d->build_id) != 0;
	return 0;
}

int disasm_annotate(struct disasm *d, const struct profile *p,
		    const struct profile_sample *samples, size_t n, const struct disasm_query *q)
{
	struct candidate *c = NULL;
	size_t nc = 0;
	int best = pick_file(p, samples, n, q, &c, &nc), err;

	memset(d, 0, sizeof(*d));
	if (best < 0) {
		free(c);
		return best;
	}
	err = open_candidate(d, p, &c[best]);
	if (!err)
		err = note_query(d, p, &c[best], q);
	if (!err)
		disasm_count(d, p, samples, n, q);
	free(c);
	return err;
}

/* ---- showing it ---- */

double disasm_pct(const struct disasm *d, int64_t v)
{
	return d->total ? v * 100.0 / d->total : 0.0;
}

int disasm_row_heat(const struct disasm *d, size_t i)
{
	if (i >= d->nrows || d->rows[i].source)
		return 0;
	int64_t v = d->insns[d->rows[i].insn].value;
	if (v <= 0)
		return 0;
	return 2 * v >= d->max_value ? 2 : 1;
}

/* Reads a source file into s (state 1), or marks it unreadable (state -1). */
static void source_load(struct disasm_source *s, const char *path)
{
	struct stat st;
	int fd = safeopen(path, 0, 0, &st);

	s->state = -1;
	if (fd < 0)
		return;
	if (st.st_size > MAX_SOURCE_BYTES || !(s->text = malloc(st.st_size + 1)) ||
	    read(fd, s->text, st.st_size) != st.st_size) {
		close(fd);
		return;
	}
	close(fd);
	s->text[st.st_size] = 0;
	uint32_t n = 1;
	for (off_t i = 0; i < st.st_size; i++)
		n += s->text[i] == '\n';
	if (!(s->lines = malloc(n * sizeof(*s->lines))))
		return;
	s->lines[0] = s->text;
	s->nlines = 1;
	for (char *c = strchr(s->text, '\n'); c; c = strchr(c + 1, '\n')) {
		*c = 0;
		s->lines[s->nlines++] = c + 1;
	}
	s->state = 1;
}

const char *disasm_source_line(struct disasm *d, int32_t file, uint32_t line)
{
	if (file < 0 || (size_t)file >= d->nfiles || !line)
		return NULL;
	if (!d->sources && !(d->sources = calloc(d->nfiles, sizeof(*d->sources))))
		return NULL;
	struct disasm_source *s = &d->sources[file];
	if (!s->state)
		source_load(s, d->files[file]);
	if (s->state < 0 || line > s->nlines)
		return NULL;
	return s->lines[line - 1];
}

/* Copies src into dst (len bytes) with tabs expanded to 8 columns and controls dropped. */
static void copy_expanded(char *dst, size_t len, const char *src)
{
	size_t o = 0;

	for (; *src && o + 1 < len; src++) {
		if (*src == '\t') {
			do
				dst[o++] = ' ';
			while (o % 8 && o + 1 < len);
		} else if ((unsigned char)*src >= ' ' && *src != 0x7f) {
			dst[o++] = *src;
		}
	}
	dst[o] = 0;
}

void disasm_row_text(struct disasm *d, size_t i, char *buf, size_t len)
{
	char src[512];

	if (!len)
		return;
	buf[0] = 0;
	if (i >= d->nrows)
		return;
	const struct disasm_insn *in = &d->insns[d->rows[i].insn];
	if (d->rows[i].source) {
		const char *file = d->files[in->file], *base = strrchr(file, '/');
		const char *text = disasm_source_line(d, in->file, in->line);
		copy_expanded(src, sizeof(src), text ? text : "");
		snprintf(buf, len, "%17s%s:%u  %s", "", base ? base + 1 : file, in->line, src);
		return;
	}
	if (in->value)
		snprintf(buf, len, "%7.2f  %8" PRIx64 ":  %s", disasm_pct(d, in->value), in->addr, in->text);
	else
		snprintf(buf, len, "%7s  %8" PRIx64 ":  %s", "", in->addr, in->text);
}

/* Writes s with control characters escaped (escape_char), newlines and tabs aside: names, paths
 * and build ids come from the profile and the binary, and must not command the terminal. */
static void put_safe(FILE *f, const char *s)
{
	size_t n = strlen(s), used;
	char esc[ESCAPE_MAX];

	for (size_t i = 0; i < n; i += used) {
		bool keep = s[i] == '\n' || s[i] == '\t';
		size_t k = keep ? (used = 1, 0) : escape_char(s + i, n - i, esc, &used);
		fwrite(k ? esc : s + i, 1, k ? k : used, f);
	}
}

/* The header lines of disasm_write, names as they are. */
static void header_text(const struct disasm *d, FILE *f)
{
	fprintf(f, "# %s", d->function ? d->function : d->name);
	if (d->module && *d->module)
		fprintf(f, " (%s)", d->module);
	fprintf(f, ": %s %s at %" PRIx64 "-%" PRIx64 " in %s\n",
		d->from_bounds ? "no symbol, .eh_frame bounds" : "symbol", d->name, d->start, d->end,
		d->path);
	fprintf(f, "# build id %s", *d->build_id ? d->build_id : "(none)");
	if (d->build_id_differs)
		fprintf(f, " DIFFERS from the recorded %s: the file changed since the recording, "
			   "the annotation may be wrong", d->recorded_build_id);
	fprintf(f, "\n# %.2f%% of %lld samples (%lld) in this function; shares are of all samples\n",
		disasm_pct(d, d->self), (long long)d->total, (long long)d->self);
	if (d->outside || d->elsewhere)
		fprintf(f, "# not shown: %.2f%% outside the symbol, %.2f%% in other files\n",
			disasm_pct(d, d->outside), disasm_pct(d, d->elsewhere));
	if (!d->has_lines)
		fprintf(f, "# no source lines: the file has no DWARF line table\n");
}

/* The header lines of disasm_write, escaped. */
static void write_header(const struct disasm *d, FILE *f)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (m) {
		header_text(d, m);
		fclose(m);
	}
	put_safe(f, text ? text : "");
	free(text);
}

int disasm_write(struct disasm *d, FILE *f, bool color)
{
	char buf[768];

	write_header(d, f);
	fprintf(f, "%7s  %8s   %s\n", "share%", "address", "instruction");
	for (size_t i = 0; i < d->nrows; i++) {
		int heat = disasm_row_heat(d, i);
		disasm_row_text(d, i, buf, sizeof(buf));
		if (color && heat)
			fprintf(f, "\033[%sm", heat == 2 ? "1;31" : "32");
		put_safe(f, buf);
		fputs(color && heat ? "\033[m\n" : "\n", f);
	}
	return ferror(f) ? -EIO : 0;
}
