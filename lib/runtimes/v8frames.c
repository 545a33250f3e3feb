/* JavaScript frames: V8 processes described to the BPF walker, function ids resolved. */
#include "runtimes/v8frames.h"
#include "base/hash.h"
#include "base/hashtab.h"
#include "base/safeopen.h"
#include "proc/procmap.h"
#include "base/vec.h"
#include "base/fileid.h"
#include "runtimes/runtime_util.h"

#include <linux/types.h>

#include "../../bpf/firn.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define JS_FUNCTION_TYPES 15      /* JSFunction and its subclasses' types (V8 9.6.138 and later) */
#define SCOPE_SLOTS 16            /* ScopeInfo slots looked at for the name and positions */
#define MAX_LINES (1u << 20)      /* line ends read of one script at most */
#define MAX_SOURCE (8u << 20)     /* characters of a script's source scanned for lines at most */
#define STRING_DEPTH 8            /* cons strings followed at most */

/* A file whose constants were read: by identity (dev, inode, size, mtime). */
struct v8file {
	struct file_id id;    /* first: runtime_file_index */
	int err;              /* v8consts_read_fd's result */
	struct v8consts c;
};

/* A process met: its V8's file (-1: none), whether it was described. */
struct v8proc {
	pid_t pid;
	ssize_t file;
	bool described;
	struct firn_v8_proc p;  /* what the walker was told (described) */
	uint64_t dev, ino;      /* V8's file as mapped (its mappings are V8's code) */
	bool counted; /* in st.processes (a second notice of its exec counts no more) */
	bool refusal_counted; /* in st.refused (the same: a process is refused once) */
};

/* One function id of the walker: what was read of its SharedFunctionInfo (name NULL: not read). */
struct v8fn {
	uint64_t id;
	pid_t pid;
	char *name, *script;
	uint32_t line;
	/* the lines of its bytecode (from its source position table: NULL when V8 made none yet),
	 * by bytecode offset; an interpreted frame's offset word is offset + bias */
	struct v8pos *pos;
	size_t npos;
	uint32_t bias;
};

/* One row of a function's lines: from bytecode offset offset on, line line. */
struct v8pos {
	uint32_t offset, line;
};

/* The line ends of one script of one process, read once. */
struct v8script {
	pid_t pid;
	uint64_t addr;
	uint32_t *ends;
	size_t n;
};

struct v8frames {
	v8frames_set_fn set;
	runtime_maps_fn maps;
	void *ctx;
	struct v8mem mem;
	struct v8file *files;
	size_t nfiles, capfiles;
	struct v8proc *procs;
	size_t nprocs, capprocs;
	struct v8fn *fns;
	size_t nfns, capfns;
	struct hashtab index; /* id → fns */
	struct v8script *scripts;
	size_t nscripts, capscripts;
	uint32_t epoch;
	struct v8frames_stats st;
};

/* The default reader: the process's memory through process_vm_readv. */
static int vm_read(void *ctx, pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	(void)ctx;
	if (!addr || process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)len)
		return -EFAULT;
	return 0;
}

struct v8frames *v8frames_new(v8frames_set_fn set, void *ctx)
{
	struct v8frames *v8 = calloc(1, sizeof(*v8));

	if (!v8) /* calloc set errno (ENOMEM) */
		return NULL;
	v8->set = set;
	v8->ctx = ctx;
	v8->mem = (struct v8mem){ vm_read, NULL };
	return v8;
}

void v8frames_free(struct v8frames *v8)
{
	if (!v8)
		return;
	for (size_t i = 0; i < v8->nfns; i++)
		free(v8->fns[i].name), free(v8->fns[i].script), free(v8->fns[i].pos);
	for (size_t i = 0; i < v8->nscripts; i++)
		free(v8->scripts[i].ends);
	free(v8->fns);
	free(v8->scripts);
	free(v8->files);
	free(v8->procs);
	hashtab_release(&v8->index);
	free(v8);
}

void v8frames_set_maps(struct v8frames *v8, runtime_maps_fn maps)
{
	v8->maps = maps;
}

void v8frames_set_mem(struct v8frames *v8, const struct v8mem *mem)
{
	v8->mem = *mem;
}

/* ---- reading objects of the process ---- */

/* A reader bound to one process and one V8's constants. */
struct v8read {
	const struct v8consts *c;
	const struct v8mem *mem;
	pid_t pid;
};

static int rd(const struct v8read *r, uint64_t addr, void *buf, size_t len)
{
	return r->mem->read(r->mem->ctx, r->pid, addr, buf, len);
}

/* Whether tagged word v points at a heap object in user memory. */
static bool is_object(const struct v8consts *c, uint64_t v)
{
	return (v & c->heap_object_tag_mask) == c->heap_object_tag && v > 4096 && v < (1ULL << 47);
}

static bool is_smi(const struct v8consts *c, uint64_t v)
{
	return (v & c->smi_tag_mask) == c->smi_tag;
}

static int64_t smi_value(const struct v8consts *c, uint64_t v)
{
	return (int64_t)v >> (c->smi_shift_size + 1);
}

/* The word at byte offset off of the object at tagged pointer obj. */
static int field(const struct v8read *r, uint64_t obj, uint32_t off, uint64_t *out)
{
	return is_object(r->c, obj) ? rd(r, obj - r->c->heap_object_tag + off, out, sizeof(*out)) : -EFAULT;
}

/* The instance type of the object at tagged pointer obj (0: unreadable or no object). */
static uint32_t type_of(const struct v8read *r, uint64_t obj)
{
	uint64_t map;
	uint16_t type;

	if (field(r, obj, r->c->heap_object_map, &map) || !is_object(r->c, map) ||
	    rd(r, map - r->c->heap_object_tag + r->c->map_instance_type, &type, sizeof(type)))
		return 0;
	return type;
}

/* A string of at most cap bytes (then truncated); or, with lines set, no string: the positions
 * of its newlines are added to lines (cap characters looked at, at most). */
struct strbuf {
	char *s;
	size_t n, cap;
	bool cut; /* characters did not fit */
	struct v8script *lines;
	size_t *lcap;
	uint64_t pos;
};

static int add_end(struct v8script *s, size_t *cap, uint32_t pos);

/* Whether b takes no more characters. */
static bool full(const struct strbuf *b)
{
	return b->lines ? b->pos >= b->cap : b->n + 1 >= b->cap;
}

/* Appends character ch (a UTF-16 code unit) as UTF-8; characters that are controls or
 * surrogates become '?'. */
static void put_char(struct strbuf *b, uint32_t ch)
{
	char u[3];
	size_t k = 0;

	if (b->lines) {
		if (ch == '\n')
			(void)add_end(b->lines, b->lcap, (uint32_t)b->pos);
		b->pos++;
		return;
	}
	if (ch < 0x20 || ch == 0x7f || (ch >= 0xd800 && ch < 0xe000))
		ch = '?';
	if (ch < 0x80) {
		u[k++] = (char)ch;
	} else if (ch < 0x800) {
		u[k++] = (char)(0xc0 | ch >> 6);
		u[k++] = (char)(0x80 | (ch & 0x3f));
	} else {
		u[k++] = (char)(0xe0 | ch >> 12);
		u[k++] = (char)(0x80 | ((ch >> 6) & 0x3f));
		u[k++] = (char)(0x80 | (ch & 0x3f));
	}
	if (b->n + k < b->cap) {
		memcpy(b->s + b->n, u, k);
		b->n += k;
	} else {
		b->cut = true;
	}
}

/* Appends the characters of a sequential string (len of them, width 1 or 2 bytes) at addr. */
static int seq_chars(const struct v8read *r, uint64_t addr, uint32_t len, int width, struct strbuf *b)
{
	uint8_t chunk[4096];

	for (uint64_t done = 0; done < (uint64_t)len * width && !full(b);) {
		size_t k = (uint64_t)len * width - done < sizeof(chunk) ? (size_t)((uint64_t)len * width - done)
									 : sizeof(chunk);
		if (rd(r, addr + done, chunk, k))
			return -EFAULT;
		for (size_t i = 0; i + width <= k; i += width)
			put_char(b, width == 1 ? chunk[i] : (uint32_t)(chunk[i] | chunk[i + 1] << 8));
		done += k;
	}
	if (full(b) && !b->lines)
		b->cut = true; /* characters left unread */
	return 0;
}

/* Appends the string at tagged pointer str: sequential (one- or two-byte), cons and thin
 * strings; others (external, sliced) are -ENOTSUP. */
static int read_string(const struct v8read *r, uint64_t str, struct strbuf *b, int depth)
{
	const struct v8consts *c = r->c;
	uint32_t type = type_of(r, str), len;
	uint64_t a, d;

	if (!type || type >= c->first_nonstring_type || depth > STRING_DEPTH)
		return -EINVAL;
	if (full(b) && !b->lines) /* a cons string's second half past the room: cut, not lost */
		return b->cut = true, 0;
	if (full(b))
		return -EINVAL;
	uint32_t rep = type & c->string_representation_mask;
	if (rep == c->cons_string_tag) {
		if (field(r, str, c->cons_first, &a) || field(r, str, c->cons_second, &d))
			return -EFAULT;
		int err = read_string(r, a, b, depth + 1);
		return err ? err : read_string(r, d, b, depth + 1);
	}
	if (rep == c->thin_string_tag)
		return field(r, str, c->thin_actual, &a) ? -EFAULT : read_string(r, a, b, depth + 1);
	if (rep != c->seq_string_tag)
		return -ENOTSUP;
	if (rd(r, str - c->heap_object_tag + c->string_length, &len, sizeof(len)) || len > (1u << 30))
		return -EFAULT;
	bool one = (type & c->string_encoding_mask) == c->one_byte_string_tag;
	return seq_chars(r, str - c->heap_object_tag + (one ? c->seq_one_byte_chars : c->seq_two_byte_chars),
			 len, one ? 1 : 2, b);
}

/* Ends the string in b with V8FUNC_CUT, at a character's boundary within its room. */
static void mark_cut(struct strbuf *b)
{
	size_t mark = sizeof(V8FUNC_CUT) - 1;

	if (b->cap <= mark)
		return;
	if (b->n > b->cap - 1 - mark) {
		b->n = b->cap - 1 - mark;
		while (b->n && ((uint8_t)b->s[b->n] & 0xc0) == 0x80) /* not inside a UTF-8 sequence */
			b->n--;
	}
	memcpy(b->s + b->n, V8FUNC_CUT, mark);
	b->n += mark;
}

/* The string at tagged pointer str into out (len bytes, NUL-terminated; a longer one cut
 * visibly). */
static int string_at(const struct v8read *r, uint64_t str, char *out, size_t len)
{
	struct strbuf b = { out, 0, len };
	int err = read_string(r, str, &b, 0);

	if (!err && b.cut)
		mark_cut(&b);
	out[b.n] = 0;
	return err;
}

/* The name and start position of a function from its ScopeInfo at tagged pointer si: V8 keeps
 * no constants for its slots past the context locals, so (as the OpenTelemetry profiler does)
 * the first string after them is the name and the first pair of rising Smis the positions. */
static void scope_info(const struct v8read *r, uint64_t si, char *name, size_t len, int64_t *start)
{
	const struct v8consts *c = r->c;
	uint64_t slot[SCOPE_SLOTS];
	uint32_t first = c->scopeinfo_first_vars ? c->scopeinfo_first_vars : 3;
	uint32_t nlocals_at = c->scopeinfo_first_vars ? c->scopeinfo_ncontextlocals : 2;

	*start = -1;
	if (rd(r, si - c->heap_object_tag + c->heap_object_map + 8, slot, sizeof(slot)) ||
	    nlocals_at >= SCOPE_SLOTS || !is_smi(c, slot[nlocals_at]))
		return;
	int64_t locals = smi_value(c, slot[nlocals_at]);
	if (locals < 0 || locals > SCOPE_SLOTS)
		return;
	uint32_t from = first + 2 * (uint32_t)locals;
	for (uint32_t i = from; i < SCOPE_SLOTS; i++) {
		if (!name[0] && is_object(c, slot[i]) && string_at(r, slot[i], name, len))
			name[0] = 0;
		if (i > from && is_smi(c, slot[i]) && is_smi(c, slot[i - 1]) &&
		    smi_value(c, slot[i - 1]) < smi_value(c, slot[i]) && smi_value(c, slot[i - 1]) >= 0) {
			*start = smi_value(c, slot[i - 1]);
			return;
		}
	}
}

/* ---- scripts' lines ---- */

/* Appends a line end at position pos. */
static int add_end(struct v8script *s, size_t *cap, uint32_t pos)
{
	if (s->n >= MAX_LINES)
		return 0;
	if (VEC_GROW(s->ends, *cap, s->n + 1))
		return -ENOMEM;
	s->ends[s->n++] = pos;
	return 0;
}

/* The line ends of the script at tagged pointer script: its line_ends array when V8 made one,
 * else the newlines of its source. */
static int script_lines(const struct v8read *r, uint64_t script, struct v8script *s)
{
	const struct v8consts *c = r->c;
	uint64_t ends, n, src, w;
	size_t cap = 0;

	if (!field(r, script, c->script_line_ends, &ends) && is_object(c, ends) &&
	    c->fixed_array_length && !field(r, ends, c->fixed_array_length, &n) && is_smi(c, n) &&
	    smi_value(c, n) > 0 && smi_value(c, n) <= MAX_LINES) {
		for (int64_t i = 0; i < smi_value(c, n); i++)
			if (field(r, ends, c->fixed_array_data + 8 * (uint32_t)i, &w) || !is_smi(c, w) ||
			    add_end(s, &cap, (uint32_t)smi_value(c, w)))
				return -EFAULT;
		return 0;
	}
	if (field(r, script, c->script_source, &src))
		return -EFAULT;
	struct strbuf b = { .cap = MAX_SOURCE, .lines = s, .lcap = &cap };
	int err = read_string(r, src, &b, 0);
	if (!err && b.pos < MAX_SOURCE)
		err = add_end(s, &cap, (uint32_t)b.pos); /* the last line's end: the source's */
	return err;
}

/* The 1-based line of position pos in script (0: unknown), the script's line ends read once. */
static uint32_t line_of(struct v8frames *v8, const struct v8read *r, uint64_t script, int64_t pos)
{
	struct v8script *s = NULL;

	if (pos < 0)
		return 0;
	for (size_t i = 0; i < v8->nscripts && !s; i++)
		if (v8->scripts[i].pid == r->pid && v8->scripts[i].addr == script)
			s = &v8->scripts[i];
	if (!s) {
		if (VEC_GROW(v8->scripts, v8->capscripts, v8->nscripts + 1))
			return 0;
		s = &v8->scripts[v8->nscripts++];
		*s = (struct v8script){ .pid = r->pid, .addr = script };
		(void)script_lines(r, script, s);
	}
	size_t lo = 0, hi = s->n;
	while (lo < hi) { /* the first line whose end is at or after pos */
		size_t mid = lo + (hi - lo) / 2;
		if (s->ends[mid] < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return s->n ? (uint32_t)lo + 1 : 0;
}

/* ---- functions ---- */

/* Reads the function at sfi; its start position into *start (-1: unknown), its script's tagged
 * pointer into *script (0: none). ident (NULL: any): the name-or-scope-info and script words the
 * walker read; an SFI whose words differ now (moved by the GC, another object in its place) is
 * -ESTALE. */
static int read_func(const struct v8read *r, uint64_t sfi, const uint64_t *ident,
		     struct v8func *out, int64_t *start, uint64_t *script)
{
	const struct v8consts *c = r->c;
	uint64_t nos, sodi;

	memset(out, 0, sizeof(*out));
	*start = -1;
	*script = 0;
	uint32_t type = type_of(r, sfi);
	if (!type)
		return -EFAULT;
	if (type != c->type_shared_function_info)
		return -EINVAL;
	if (field(r, sfi, c->sfi_name_or_scope_info, &nos) ||
	    field(r, sfi, c->sfi_script_or_debug_info, &sodi))
		return -EFAULT;
	if (ident && (nos != ident[0] || sodi != ident[1]))
		return -ESTALE;
	uint32_t ntype = type_of(r, nos);
	if (ntype == c->type_scope_info)
		scope_info(r, nos, out->name, sizeof(out->name), start);
	else if (ntype && ntype < c->first_nonstring_type && string_at(r, nos, out->name, sizeof(out->name)))
		out->name[0] = 0;
	if (type_of(r, sodi) == c->type_script) {
		uint64_t name;
		*script = sodi;
		if (!field(r, sodi, c->script_name, &name) &&
		    string_at(r, name, out->script, sizeof(out->script)))
			out->script[0] = 0;
	}
	return 0;
}

int v8frames_read_func(const struct v8consts *c, const struct v8mem *mem, pid_t pid, uint64_t sfi,
		       struct v8func *out)
{
	struct v8read r = { c, mem, pid };
	int64_t start;
	uint64_t script;
	int err = read_func(&r, sfi, NULL, out, &start, &script);

	if (!err && script && start >= 0) {
		struct v8frames tmp = { 0 };
		out->line = line_of(&tmp, &r, script, start);
		free(tmp.scripts ? tmp.scripts[0].ends : NULL);
		free(tmp.scripts);
	}
	return err;
}

/* ---- processes ---- */

/* Process pid's record, or NULL. */
static struct v8proc *proc_find(struct v8frames *v8, pid_t pid)
{
	return RUNTIME_PROC_FIND(v8->procs, v8->nprocs, pid);
}

/* Whether a mapped file's name says V8: node (node20, nodejs...) or libnode.so*. */
static bool v8_named(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "node", 4) || !strncmp(base, "libnode.so", 10);
}

/* runtime_file_index's read: a node's or libnode's V8 constants. */
static void file_read(void *f, int fd)
{
	struct v8file *vf = f;

	vf->err = v8consts_read_fd(&vf->c, fd);
}

int v8frames_proc_of(const struct v8consts *c, struct firn_v8_proc *p, char *why, size_t len)
{
	const char *bad = NULL;
	int32_t slots[] = { c->off_fp_marker, c->off_fp_function, c->off_fp_bytecode_array,
			    c->off_fp_bytecode_offset };
	uint32_t fields[] = { c->js_function_shared, c->sfi_name_or_scope_info, c->sfi_script_or_debug_info };

	for (size_t i = 0; i < 4 && !bad; i++)
		if (slots[i] >= 0 || slots[i] < -64 || slots[i] % 8)
			bad = "a frame slot out of the walker's reach";
	for (size_t i = 0; i < 3 && !bad; i++)
		if (fields[i] % 8 || fields[i] + 8 > FIRN_V8_OBJ_READ)
			bad = "an object field out of the walker's reach";
	if (!bad && c->smi_shift_size != 31)
		bad = "pointer compression (31-bit Smis)";
	if (!bad && (c->heap_object_map % 8 || c->map_instance_type >= 4096))
		bad = "a map field out of the walker's reach";
	if (bad) {
		snprintf(why, len, "V8 of a layout the walker cannot read: %s", bad);
		return -EPROTO;
	}
	*p = (struct firn_v8_proc){
		.fp_marker = c->off_fp_marker, .fp_function = c->off_fp_function,
		.fp_bytecode_array = c->off_fp_bytecode_array,
		.fp_bytecode_offset = c->off_fp_bytecode_offset,
		.smi_shift = c->smi_shift_size + 1,
		.off_map = c->heap_object_map, .off_instance_type = c->map_instance_type,
		.off_js_shared = c->js_function_shared, .off_sfi_name = c->sfi_name_or_scope_info,
		.off_sfi_script = c->sfi_script_or_debug_info,
		.type_js_first = c->type_js_function,
		.type_js_last = c->type_js_function + JS_FUNCTION_TYPES - 1,
		.type_sfi = c->type_shared_function_info, .type_bytecode_array = c->type_bytecode_array,
	};
	return 0;
}

/* Whether pid has /tmp/perf-PID.map (V8 started with --perf-basic-prof) in its root. */
static bool has_perf_map(pid_t pid)
{
	char path[64];

	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/root/tmp/perf-%d.map", (int)pid, (int)pid);
	return safeopen_stat(path, &st) == 0; /* inside its root, as the symbolizer opens it */
}

/* Whether e maps the same file as V8's mapping of pr. */
static bool same_file(const struct v8proc *pr, const struct procmap_entry *e)
{
	return e->x && e->kind == PROCMAP_FILE &&
	       (((uint64_t)e->dev_major << 20 | e->dev_minor) == pr->dev) && e->inode == pr->ino;
}

/* Adds the code range of e to p's (false: no room, or known already). */
static bool add_text(struct firn_v8_proc *p, const struct procmap_entry *e)
{
	for (int i = 0; i < FIRN_V8_TEXTS; i++) {
		if (p->text[i].start == e->start && p->text[i].end == e->end)
			return false;
		if (!p->text[i].end) {
			p->text[i].start = e->start;
			p->text[i].end = e->end;
			return true;
		}
	}
	return false;
}

/* Counts pr's refusal, once however often it is looked at (its exec told twice, its first
 * sample looking again), and keeps why. */
static void refuse(struct v8frames *v8, struct v8proc *pr, const char *why)
{
	if (!pr->refusal_counted) {
		pr->refusal_counted = true;
		v8->st.refused++;
	}
	snprintf(v8->st.last_refusal, sizeof(v8->st.last_refusal), "%s", why);
}

/* Describes pid's V8 (the file f, mapped at e among m) to the walker; counts a refusal. */
static void describe(struct v8frames *v8, struct v8proc *pr, const struct procmap_entry *e,
		     const struct procmap *m)
{
	struct v8file *f = &v8->files[pr->file];
	struct firn_v8_proc p;
	char why[sizeof(v8->st.last_refusal)];

	if (f->err) {
		refuse(v8, pr, f->c.reason[0] ? f->c.reason : "cannot read its V8 constants");
		return;
	}
	if (v8frames_proc_of(&f->c, &p, why, sizeof(why))) {
		refuse(v8, pr, why);
		return;
	}
	pr->dev = (uint64_t)e->dev_major << 20 | e->dev_minor;
	pr->ino = e->inode;
	/* its text, and the embedded builtins V8 maps again from the file near its code */
	for (size_t i = 0; i < m->n; i++)
		if (same_file(pr, &m->entries[i]))
			(void)add_text(&p, &m->entries[i]);
	p.epoch = ++v8->epoch;
	if (v8->set(v8->ctx, pr->pid, &p))
		return;
	pr->p = p;
	pr->described = true;
	if (!pr->counted) {
		pr->counted = true;
		v8->st.processes++;
		v8->st.perf_maps += has_perf_map(pr->pid);
	}
}

/* Looks for V8 in the executable file mappings of pid. */
static void find_v8(struct v8frames *v8, struct v8proc *pr, const struct procmap *m)
{
	for (size_t i = 0; i < m->n && !pr->described; i++) {
		const struct procmap_entry *e = &m->entries[i];
		if (!e->x || e->kind != PROCMAP_FILE || !v8_named(e->path))
			continue;
		ssize_t f = RUNTIME_FILE_INDEX(pr->pid, e, v8->files, v8->nfiles, v8->capfiles,
						file_read); /* once per file */
		if (f < 0 || v8->files[f].err == -ENOENT || v8->files[f].err == -EINVAL)
			continue; /* named so, but no V8 in it */
		pr->file = f;
		describe(v8, pr, e, m); /* a V8, described or refused: the one of this process */
		return;
	}
}

/* Looks for V8 in pr's mappings (the caller's table, else /proc/PID/maps). */
static void look(struct v8frames *v8, struct v8proc *pr)
{
	const struct procmap *m = v8->maps ? v8->maps(v8->ctx, pr->pid) : NULL;
	struct procmap own;

	if (m) {
		find_v8(v8, pr, m);
		return;
	}
	if (procmap_read(&own, pr->pid))
		return;
	find_v8(v8, pr, &own);
	procmap_release(&own);
}

void v8frames_add_process(struct v8frames *v8, pid_t pid, bool exec)
{
	struct v8proc *pr = proc_find(v8, pid);
	bool counted = pr && pr->counted, refused = pr && pr->refusal_counted;

	/* met at its exec, before the loader mapped its libraries, and no V8 file found then: its
	 * first sample looks again, should the mmap record of its libnode not have reached us
	 * (the records are heard from the exec's notice on: lib/record/recorder.c, sampled) */
	if (pr && !exec && pr->file < 0)
		look(v8, pr);
	if (pr && !exec)
		return;
	if (pr && pr->described) /* a new image: the walker forgets the old one */
		(void)v8->set(v8->ctx, pid, NULL);
	if (!pr && !(pr = RUNTIME_PROC_ADD(v8->procs, v8->nprocs, v8->capprocs, pid)))
		return;
	*pr = (struct v8proc){ .pid = pid, .file = -1, .counted = counted, .refusal_counted = refused };
	look(v8, pr);
}

void v8frames_note_mapping(struct v8frames *v8, pid_t pid, const struct procmap_entry *e)
{
	struct v8proc *pr = proc_find(v8, pid);

	if (!pr)
		return; /* not met yet: its first sample looks */
	if (pr->described) {
		if (same_file(pr, e) && add_text(&pr->p, e))
			(void)v8->set(v8->ctx, pid, &pr->p);
		return;
	}
	/* libnode loaded after the first sample (dlopen, or mapped since); a V8 file examined
	 * already (refused) is not looked at again */
	if (pr->file < 0 && e->x && e->kind == PROCMAP_FILE && v8_named(e->path))
		look(v8, pr);
}

void v8frames_forget(struct v8frames *v8, pid_t pid)
{
	struct v8proc *pr = proc_find(v8, pid);

	if (!pr)
		return;
	if (pr->described)
		(void)v8->set(v8->ctx, pid, NULL);
	RUNTIME_PROC_DROP(v8->procs, v8->nprocs, pr);
	for (size_t i = 0; i < v8->nscripts;) {
		if (v8->scripts[i].pid != pid) {
			i++;
			continue;
		}
		free(v8->scripts[i].ends);
		v8->scripts[i] = v8->scripts[--v8->nscripts];
	}
}

/* ---- lines of bytecode offsets ---- */

#define MAX_POSITIONS (64u << 10) /* bytes of a source position table read at most */

/* A zigzag VLQ number of V8's source position tables at b[*i] (n bytes). */
static bool vlq(const uint8_t *b, size_t n, size_t *i, int64_t *out)
{
	uint64_t v = 0;

	for (unsigned shift = 0;; shift += 7) {
		if (*i >= n || shift > 63)
			return false;
		uint8_t c = b[(*i)++];
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			break;
	}
	*out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
	return true;
}

/* The BytecodeArray of the function at sfi (through baseline code), 0 when none. */
static uint64_t bytecode_of(const struct v8read *r, uint64_t sfi)
{
	const struct v8consts *c = r->c;
	uint64_t fd;

	if (!c->sfi_function_data || field(r, sfi, c->sfi_function_data, &fd))
		return 0;
	if (c->code_bytecode && type_of(r, fd) == c->type_code && field(r, fd, c->code_bytecode, &fd))
		return 0;
	return type_of(r, fd) == c->type_bytecode_array ? fd : 0;
}

/* Decodes a source position table (pairs of deltas: the bytecode offset's, its sign telling
 * statements from expressions, and the source position's) into fn->pos, a row per new line. */
static int decode_positions(struct v8frames *v8, const struct v8read *r, uint64_t script,
			    const uint8_t *b, size_t n, struct v8fn *fn)
{
	int64_t off = 0, raw = 0, d, dr;
	size_t i = 0, cap = 0;

	while (i < n && vlq(b, n, &i, &d) && vlq(b, n, &i, &dr)) {
		off += d < 0 ? -d - 1 : d;
		raw += dr;
		int64_t pos = ((raw >> 1) & 0x3fffffff) - 1; /* SourcePosition: script offset + 1 */
		uint32_t line = line_of(v8, r, script, pos);
		if (off < 0 || off > UINT32_MAX || !line || (fn->npos && fn->pos[fn->npos - 1].line == line))
			continue;
		if (fn->npos && fn->pos[fn->npos - 1].offset >= off)
			return 0; /* not increasing: not a table */
		if (VEC_GROW(fn->pos, cap, fn->npos + 1))
			return -ENOMEM;
		fn->pos[fn->npos++] = (struct v8pos){ (uint32_t)off, line };
	}
	return 0;
}

/* The lines of the bytecode of the function at sfi, where V8 made its source positions. */
static int read_positions(struct v8frames *v8, const struct v8read *r, uint64_t sfi,
			  uint64_t script, struct v8fn *fn)
{
	const struct v8consts *c = r->c;
	uint64_t bca = bytecode_of(r, sfi), spt, len;
	uint8_t *b;

	if (!bca || !c->fixed_array_length || !c->bytecode_array_data || !c->type_byte_array)
		return 0;
	/* the table's slot, 3 words after the length (V8 9.4 on: no constant for it) */
	if (field(r, bca, c->fixed_array_length + 24, &spt) || type_of(r, spt) != c->type_byte_array ||
	    field(r, spt, c->fixed_array_length, &len) || !is_smi(c, len) || smi_value(c, len) <= 0 ||
	    smi_value(c, len) > MAX_POSITIONS)
		return 0;
	if (!(b = malloc((size_t)smi_value(c, len))))
		return -ENOMEM;
	int err = 0;
	if (!rd(r, spt - c->heap_object_tag + c->fixed_array_data, b, (size_t)smi_value(c, len)))
		err = decode_positions(v8, r, script, b, (size_t)smi_value(c, len), fn);
	free(b);
	fn->bias = c->bytecode_array_data - c->heap_object_tag;
	return err;
}

/* ---- function ids ---- */

/* The function announced with id, or NULL. */
static struct v8fn *fn_find(struct v8frames *v8, uint64_t id)
{
	return HASHTAB_FIND_ID(&v8->index, v8->fns, id, id);
}

int v8frames_func_event(struct v8frames *v8, const struct firn_v8_func_event *e)
{
	struct v8proc *pr = proc_find(v8, (pid_t)e->pid);
	struct v8func f;
	int64_t start;
	uint64_t script;

	if (fn_find(v8, e->id) || VEC_GROW(v8->fns, v8->capfns, v8->nfns + 1))
		return fn_find(v8, e->id) ? 0 : -ENOMEM;
	struct v8fn *fn = &v8->fns[v8->nfns];
	*fn = (struct v8fn){ .id = e->id, .pid = (pid_t)e->pid };
	if (hashtab_add(&v8->index, hash_mix64(e->id), (uint32_t)v8->nfns))
		return -ENOMEM;
	v8->nfns++;
	v8->st.functions++;
	if (!pr || pr->file < 0) {
		v8->st.unreadable++;
		return 0;
	}
	struct v8read r = { &v8->files[pr->file].c, &v8->mem, pr->pid };
	uint64_t ident[2] = { e->name_or_scope_info, e->script };
	if (read_func(&r, e->sfi, ident, &f, &start, &script)) {
		v8->st.unreadable++;
		return 0;
	}
	fn->line = script ? line_of(v8, &r, script, start) : 0;
	if (script && read_positions(v8, &r, e->sfi, script, fn))
		return -ENOMEM;
	fn->name = strdup(f.name[0] ? f.name : "(anonymous)");
	fn->script = f.script[0] ? strdup(f.script) : NULL;
	return fn->name ? 0 : -ENOMEM;
}

int v8frames_resolve(struct v8frames *v8, pid_t pid, uint64_t v, struct resolved_frame *out, int max)
{
	struct v8fn *fn = fn_find(v8, FIRN_V8_ID(resolver_payload(v)));

	uint64_t payload = resolver_payload(v), off = FIRN_V8_OFFSET(payload);
	uint32_t line;

	if (max < 1 || !fn || fn->pid != pid || !fn->name)
		return 0;
	line = fn->line;
	/* an interpreted frame: the line of its bytecode offset, where V8 made the table */
	if (FIRN_V8_TIER(payload) == FIRN_V8_INTERPRETED && off != FIRN_V8_NO_OFFSET && fn->npos &&
	    off >= fn->bias && off - fn->bias >= fn->pos[0].offset) {
		size_t lo = 0, hi = fn->npos;
		while (hi - lo > 1) { /* the last row at or before the offset */
			size_t mid = lo + (hi - lo) / 2;
			if (fn->pos[mid].offset <= off - fn->bias)
				lo = mid;
			else
				hi = mid;
		}
		line = fn->pos[lo].line;
	}
	out[0] = (struct resolved_frame){ .name = fn->name, .file = fn->script, .line = line };
	return 1;
}

void v8frames_get_stats(const struct v8frames *v8, struct v8frames_stats *st)
{
	*st = v8->st;
}
