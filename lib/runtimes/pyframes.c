/* Python frames: CPython processes described to the BPF unwinder, tagged frames resolved. */
#include "runtimes/pyframes.h"
#include "base/hash.h"
#include "base/hashtab.h"
#include "base/strput.h"
#include "runtimes/pyruntime.h"
#include "runtimes/runtime_util.h"
#include "source/sample_source.h"
#include "base/vec.h"

#include <linux/types.h>

#include "../../bpf/firn.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RETRY_NS 10000000ULL /* a starting interpreter is looked at again every 10 ms ... */
#define RETRIES 300          /* ... for 3 s at most */

/* A process met by the recorder: its interpreter (rt, NULL when none yet), or its retries. */
struct pyproc {
	pid_t pid;
	struct pyruntime *rt;
	int tries;
	bool described;  /* the unwinder was told before the interpreter was verified live */
	bool counted;    /* in st.processes (an exec, or a second notice of one, counts no more) */
	uint64_t due_ns; /* 0: nothing more to try */
};

/* One code object id of the BPF unwinder (bpf/firn.h): one code object of one process image,
 * named from what the unwinder copied when it gave the id, its line table read from the process
 * while it lived. */
struct pycode {
	uint64_t id, code;
	pid_t pid;
	char *name, *file;  /* NULL: unknown */
	int firstlineno;
	bool tried;         /* the live process was read for it (once) */
	enum pylines_format fmt;
	uint8_t *lines;     /* its line table (NULL: unreadable) */
	size_t nlines;
};

struct pyframes {
	pyframes_set_fn set;
	runtime_maps_fn maps; /* NULL: /proc/PID/maps */
	void *ctx;
	struct pyfile_cache *files; /* what each mapped file says about CPython */
	struct pyproc *procs;
	size_t nprocs, capprocs;
	struct pycode *codes;
	size_t ncodes, capcodes;
	struct hashtab index; /* id → codes */
	uint32_t epoch;       /* the last description's number */
	struct pyframes_stats st;
};

struct pyframes *pyframes_new(pyframes_set_fn set, void *ctx)
{
	struct pyframes *py = calloc(1, sizeof(*py));

	if (!py || !(py->files = pyfile_cache_new())) {
		free(py);
		errno = ENOMEM;
		return NULL;
	}
	py->set = set;
	py->ctx = ctx;
	return py;
}

void pyframes_set_maps(struct pyframes *py, runtime_maps_fn maps)
{
	py->maps = maps;
}

/* Drops the interpreter of process i (its slot is reused). */
static void proc_drop(struct pyframes *py, size_t i)
{
	if (py->procs[i].rt) {
		pyruntime_release(py->procs[i].rt);
		free(py->procs[i].rt);
	}
	RUNTIME_PROC_DROP(py->procs, py->nprocs, &py->procs[i]);
}

void pyframes_free(struct pyframes *py)
{
	if (!py)
		return;
	while (py->nprocs)
		proc_drop(py, 0);
	free(py->procs);
	for (size_t i = 0; i < py->ncodes; i++)
		free(py->codes[i].name), free(py->codes[i].file), free(py->codes[i].lines);
	free(py->codes);
	hashtab_release(&py->index);
	pyfile_cache_free(py->files);
	free(py);
}

/* Process pid's record, or NULL. */
static struct pyproc *proc_find(struct pyframes *py, pid_t pid)
{
	return RUNTIME_PROC_FIND(py->procs, py->nprocs, pid);
}

/* Offset of field off from the start of the code object's block read by the unwinder. */
static bool code_field(uint32_t off, uint32_t lo, uint32_t size, __u32 *out)
{
	*out = off - lo;
	return off >= lo && off - lo + size <= FIRN_PY_CODE_READ && (off - lo) % size == 0;
}

/* Where the unwinder finds a code object's identity and names (false: not in its one read). */
static bool describe_code(const struct pyruntime *rt, struct firn_py_proc *p)
{
	const struct pyoffsets *o = &rt->off;
	uint32_t lo = o->co_firstlineno & ~7u;

	p->co_lo = lo;
	p->uni_state = o->unicode_state, p->uni_length = o->unicode_length;
	p->uni_hash = o->unicode_length + 8, p->uni_data = o->unicode_ascii_size;
	return code_field(o->co_firstlineno, lo, 4, &p->co_firstlineno) &&
	       code_field(o->co_qualname ? o->co_qualname : o->co_name, lo, 8, &p->co_name) &&
	       code_field(o->co_filename, lo, 8, &p->co_filename) &&
	       code_field(o->co_linetable, lo, 8, &p->co_linetable) && p->uni_state <= 60 &&
	       p->uni_length <= 48 && p->uni_hash <= 56 && p->uni_data < 256;
}

/* What the BPF unwinder needs of rt (false: a version it does not walk). */
static bool describe(const struct pyruntime *rt, struct firn_py_proc *p)
{
	const struct pyoffsets *o = &rt->off;

	if (rt->major != 3 || rt->minor < 8 || !rt->eval_addr ||
	    (rt->minor >= 11 && !o->ts_native_tid))
		return false;
	/* the unwinder reads a frame's first 112 bytes at once and each field as 8 bytes */
	if (o->fr_back > 104 || o->fr_code > 104 || o->fr_lasti > 104 || o->fr_owner > 104)
		return false;
	*p = (struct firn_py_proc){
		.runtime = rt->runtime_addr, .eval_start = rt->eval_addr,
		.eval_end = rt->eval_addr + rt->eval_size, .minor = (__u32)rt->minor,
		.cold_start = rt->eval_cold, .cold_end = rt->eval_cold + rt->eval_cold_size,
		.code_tag = rt->minor >= 14 ? 1 : 0, /* Py_TAG_REFCNT (pycore_stackref.h) */
		.rt_interp_head = o->rt_interp_head, .interp_tstate_head = o->interp_tstate_head,
		.ts_next = o->ts_next, .ts_native_tid = o->ts_native_tid, .ts_frame = o->ts_frame,
		.ts_thread_id = o->ts_thread_id,
		.cframe_current = o->cframe_current, .fr_back = o->fr_back, .fr_code = o->fr_code,
		.fr_instr = o->fr_lasti, .fr_owner = o->fr_owner,
		/* 3.11 pycore_frame.h: bool is_entry; char owner; */
		.fr_is_entry = rt->minor == 11 ? o->fr_owner - 1 : 0,
		.co_code_adaptive = o->co_code_adaptive,
	};
	return describe_code(rt, p);
}

/* Whether the process's executable is named like a Python (worth waiting for libpython). */
static bool named_python(pid_t pid)
{
	char path[64], exe[4096];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if ((n = readlink(path, exe, sizeof(exe) - 1)) <= 0)
		return false;
	exe[n] = 0;
	const char *base = strrchr(exe, '/');
	return strstr(base ? base + 1 : exe, "python") != NULL;
}

/* Looks for the interpreter of x once; schedules another look while it may be starting. */
static void try_proc(struct pyframes *py, struct pyproc *x, uint64_t now_ns)
{
	struct pyruntime *rt = calloc(1, sizeof(*rt));
	struct firn_py_proc p;
	/* the process table's mappings: no /proc/PID/maps read; a file seen before is not read */
	const struct procmap *m = py->maps ? py->maps(py->ctx, x->pid) : NULL;
	int err = rt ? pyruntime_find_in(x->pid, m, py->files, rt) : -ENOMEM;
	/* not initialized yet: the unwinder can wait for the interpreter by itself (it reads the
	 * thread list at each sample) while the offsets are verified live later */
	bool early = err == -EAGAIN && rt->runtime_addr && !x->described;

	x->due_ns = 0;
	if ((!err || early) && describe(rt, &p)) {
		p.epoch = ++py->epoch; /* a new image's code objects get new ids at the same address */
		if (!py->set(py->ctx, x->pid, &p) && !err) {
			x->rt = rt;
			py->st.processes += !x->counted;
			x->counted = true;
			return;
		}
		x->described = early;
	} else if (!err || err == -EPROTONOSUPPORT) {
		py->st.unknown_version++;
		snprintf(py->st.last_refusal, sizeof(py->st.last_refusal), "%s",
			 err ? rt->reason : "the BPF unwinder walks CPython 3.8 to 3.14");
	}
	/* libpython not mapped yet: with the table its mmap record says when (pyframes_note_mapping) */
	if ((err == -EAGAIN || err == -ENOENT) && ++x->tries < RETRIES &&
	    (err == -EAGAIN || (!m && named_python(x->pid))))
		x->due_ns = now_ns + RETRY_NS;
	else if (x->described) /* refused after all: no frames from offsets not verified */
		py->set(py->ctx, x->pid, NULL);
	if (rt)
		pyruntime_release(rt);
	free(rt);
}

void pyframes_add_process(struct pyframes *py, pid_t pid, bool exec, uint64_t now_ns)
{
	struct pyproc *x = proc_find(py, pid);

	bool counted = x && x->counted;

	if (x && !exec)
		return;
	if (x) /* a new image */
		proc_drop(py, (size_t)(x - py->procs));
	if (!(x = RUNTIME_PROC_ADD(py->procs, py->nprocs, py->capprocs, pid)))
		return;
	x->counted = counted;
	try_proc(py, x, now_ns);
	if (!x->rt && !x->due_ns)
		proc_drop(py, (size_t)(x - py->procs));
}

uint64_t pyframes_poll(struct pyframes *py, uint64_t now_ns)
{
	uint64_t next = 0;

	for (size_t i = 0; i < py->nprocs;) {
		struct pyproc *x = &py->procs[i];
		if (!x->rt && x->due_ns && now_ns >= x->due_ns)
			try_proc(py, x, now_ns);
		if (!x->rt && !x->due_ns) {
			proc_drop(py, i);
			continue;
		}
		if (!x->rt && (!next || x->due_ns < next))
			next = x->due_ns; /* its next try */
		i++;
	}
	return next;
}

void pyframes_note_code(struct pyframes *py, pid_t pid, uint64_t now_ns)
{
	struct pyproc *x = proc_find(py, pid);

	if (x && !x->rt && x->due_ns) {
		try_proc(py, x, now_ns);
		if (!x->rt && !x->due_ns)
			proc_drop(py, (size_t)(x - py->procs));
	}
}

void pyframes_note_mapping(struct pyframes *py, pid_t pid, const struct procmap_entry *e, uint64_t now_ns)
{
	struct pyproc *x = proc_find(py, pid);

	if (x && x->rt)
		return;
	if (pyfile_is_python(py->files, pid, e) != 1)
		return;
	if (x)
		pyframes_note_code(py, pid, now_ns);
	else
		pyframes_add_process(py, pid, false, now_ns);
}

void pyframes_forget(struct pyframes *py, pid_t pid)
{
	struct pyproc *x = proc_find(py, pid);

	if (x)
		proc_drop(py, (size_t)(x - py->procs));
}

/* The code object announced with id, or NULL. */
static struct pycode *code_find(struct pyframes *py, uint64_t id)
{
	return HASHTAB_FIND_ID(&py->index, py->codes, id, id);
}

/* A string the unwinder copied: a malloc'd copy when it is whole (a compact ASCII str that
 * fit), else NULL (read from the process). */
static char *event_str(const char *s, size_t cap, uint32_t state, uint64_t len)
{
	if (!(state >> 5 & 1) || !(state >> 6 & 1) || len >= cap || memchr(s, 0, len))
		return NULL;
	return strndup(s, len);
}

/* Reads code object c from its live process (once): its line table, and the names the
 * unwinder could not copy, when the object there is still the one c names (its first line and
 * name unchanged: it may have been freed and reused since). */
static void code_read(struct pyframes *py, struct pycode *c)
{
	struct pyproc *x = proc_find(py, c->pid);
	struct pyframe f;

	if (c->tried || !x || !x->rt)
		return;
	c->tried = true;
	if (pycode_resolve(x->rt, c->code, -1, &f)) {
		py->st.unreadable += !c->name;
		return;
	}
	if ((c->name && strcmp(c->name, f.qualname)) || (c->firstlineno && c->firstlineno != f.firstlineno))
		return; /* another object now */
	c->fmt = x->rt->lines;
	c->firstlineno = f.firstlineno;
	if (!c->name)
		c->name = strdup(f.qualname);
	if (!c->file)
		c->file = strdup(f.filename);
	if (f.linetable_len && (c->lines = malloc(f.linetable_len))) {
		memcpy(c->lines, f.linetable, f.linetable_len);
		c->nlines = f.linetable_len;
	}
}

int pyframes_code_event(struct pyframes *py, const struct firn_py_code_event *e)
{
	if (!e->id || code_find(py, e->id))
		return 0;
	if (VEC_GROW(py->codes, py->capcodes, py->ncodes + 1) ||
	    hashtab_reserve(&py->index, py->ncodes + 1))
		return -ENOMEM;
	struct pycode *c = &py->codes[py->ncodes];
	*c = (struct pycode){ .id = e->id, .code = e->code, .pid = (pid_t)e->pid,
			      .firstlineno = e->firstlineno };
	c->name = event_str(e->name, sizeof(e->name), e->name_state, e->name_len);
	c->file = event_str(e->file, sizeof(e->file), e->file_state, e->file_len);
	hashtab_add(&py->index, hash_mix64(e->id), (uint32_t)py->ncodes);
	py->ncodes++;
	code_read(py, c); /* now, while the process most likely lives */
	return 0;
}

/* Reads what is still missing of the code object of Python frame value v while pid lives. */
static void code_prepare(struct pyframes *py, pid_t pid, uint64_t v)
{
	struct pycode *c = code_find(py, FIRN_PY_ID(resolver_payload(v)));

	if (c && c->pid == pid)
		code_read(py, c);
}

void pyframes_note_stack(struct pyframes *py, pid_t pid, const uint64_t *ips, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		if (resolver_kind_of(ips[i]) == FIRN_FRAME_KIND_PYTHON)
			code_prepare(py, pid, ips[i]);
}

/* The frame of v from what was copied and read of its code object while its process lived (0
 * when nothing was): the line of its instruction, else the function's first line. The root of
 * a stack cut short is "[truncated]". */
static int resolver_resolve(void *ctx, pid_t pid, uint64_t v, struct resolved_frame *out, int max)
{
	struct pyframes *py = ctx;
	uint64_t payload = resolver_payload(v), units = FIRN_PY_UNITS(payload);
	struct pycode *c;
	int line = -1;

	if (max < 1)
		return 0;
	if (FIRN_PY_ID(payload) == FIRN_PY_TRUNCATED_FRAME) {
		out[0] = (struct resolved_frame){ .name = "[truncated]" };
		return 1;
	}
	code_prepare(py, pid, v); /* a process still alive */
	if (!(c = code_find(py, FIRN_PY_ID(payload))) || c->pid != pid || !c->name)
		return 0;
	if (c->lines && units != FIRN_PY_NO_OFFSET)
		line = pylines_addr2line(c->fmt, c->lines, c->nlines, c->firstlineno, (uint32_t)units * 2);
	if (line <= 0)
		line = c->firstlineno > 0 ? c->firstlineno : 0;
	out[0] = (struct resolved_frame){ .name = c->name, .file = c->file, .line = (uint32_t)line };
	return 1;
}

struct frame_resolver pyframes_resolver(struct pyframes *py)
{
	return (struct frame_resolver){
		.mapping = frame_runtime_mapping(FRAME_PYTHON), .kind = FRAME_USER,
		.runtime = FRAME_PYTHON, .resolve = resolver_resolve, .ctx = py,
	};
}

void pyframes_get_stats(const struct pyframes *py, struct pyframes_stats *st)
{
	*st = py->st;
}

/* Whether the file at path starts with a #! line that names python. */
static bool python_script(const char *path)
{
	char line[256];
	FILE *f = fopen(path, "re");
	size_t n = f ? fread(line, 1, sizeof(line) - 1, f) : 0;

	if (f)
		fclose(f);
	line[n] = 0;
	line[strcspn(line, "\n")] = 0;
	return n > 2 && !strncmp(line, "#!", 2) && strstr(line, "python");
}

bool pyframes_command_is_python(const char *argv0)
{
	const char *base = strrchr(argv0, '/');
	char buf[PATH_MAX];
	const char *file;

	if (!strncmp(base ? base + 1 : argv0, "python", 6))
		return true;
	return (file = runtime_command_file(argv0, buf, sizeof(buf))) && python_script(file);
}

/* ---- runtime_python: the ops (lib/runtimes/runtime.h) over the functions above ---- */

/* The BPF walker learns where a process's interpreter is (ctx: the host). */
static int host_set(void *ctx, pid_t pid, const struct firn_py_proc *p)
{
	const struct runtime_host *h = ctx;

	return sample_source_set_proc(h->ss, FIRN_FRAME_KIND_PYTHON, pid, p, p ? sizeof(*p) : 0);
}

/* The walker is loaded ahead for a Python command, else when a process first needs it. */
static void rt_configure(const struct runtime_host *h, struct sampler_opts *so)
{
	so->walkers |= 1u << FIRN_FRAME_KIND_PYTHON;
	/* a command that is no Python: its children may run one, seen then (~35 ms less). Not -a:
	 * a late load opens a second object, ~52 more descriptors and its BTF and ELF parsed again,
	 * and a long -a recording meets a Python process almost always (8 ms of CPU saved only
	 * where none runs; continuous -a showed the late load as descriptor growth, 85 -> 149) */
	if (h->argc > 0 && !pyframes_command_is_python(h->argv[0]))
		so->walkers_late |= 1u << FIRN_FRAME_KIND_PYTHON;
}

/* The state of a recording that wants Python frames. */
static struct runtime *rt_new(const struct runtime_host *h)
{
	struct pyframes *py;

	if (!(py = pyframes_new(host_set, (void *)h)))
		return NULL;
	pyframes_set_maps(py, runtime_host_maps);
	return (struct runtime *)py;
}

static void rt_free(struct runtime *rt)
{
	pyframes_free((struct pyframes *)rt);
}

static void rt_attach(struct runtime *rt, pid_t pid, bool exec, uint64_t now_ns)
{
	pyframes_add_process((struct pyframes *)rt, pid, exec, now_ns);
}

/* A mapped file (libpython by dlopen), or code without a table (e NULL): look again now. */
static void rt_on_mapping(struct runtime *rt, pid_t pid, const struct procmap_entry *e,
			  uint64_t now_ns)
{
	if (e)
		pyframes_note_mapping((struct pyframes *)rt, pid, e, now_ns);
	else
		pyframes_note_code((struct pyframes *)rt, pid, now_ns);
}

static int rt_on_code(struct runtime *rt, const void *rec, size_t len)
{
	if (len < sizeof(struct firn_py_code_event))
		return 0;
	return pyframes_code_event((struct pyframes *)rt, rec);
}

static void rt_on_stack(struct runtime *rt, pid_t pid, const uint64_t *ips, uint32_t len)
{
	pyframes_note_stack((struct pyframes *)rt, pid, ips, len);
}

static uint64_t rt_poll(struct runtime *rt, uint64_t now_ns)
{
	return pyframes_poll((struct pyframes *)rt, now_ns);
}

static int rt_resolve(struct runtime *rt, pid_t pid, uint64_t v, struct resolved_frame *out,
		      int max)
{
	return resolver_resolve(rt, pid, v, out, max);
}

/* User space's counts (the walker's are added by runtime_stats_fill). */
static void stats_get(const struct runtime *rt, void *out)
{
	pyframes_get_stats((const struct pyframes *)rt, out);
}

static const struct runtime_stats_shape stats_shape = {
	RUNTIME_STATS_SHAPE(struct pyframes_stats, FIRN_FRAME_KIND_PYTHON, FIRN_PY_NR, unknown_version),
	.name = "python", .get = stats_get,
};

/* The host a recording's pyframes were made with (its ctx). */
static const struct runtime_host *host_of(const struct runtime *rt)
{
	return ((const struct pyframes *)rt)->ctx;
}

/* User space's counts, and the BPF walker's samples by outcome. */
static int rt_stats(const struct runtime *rt, void *out, size_t size)
{
	return runtime_stats_fill(&stats_shape, host_of(rt), rt, out, size);
}

/* The Python line, when a process ran a CPython: its samples by outcome, failures by reason. */
static size_t rt_summary(const struct runtime *rt, char *buf, size_t len)
{
	struct pyframes_stats ps;
	const uint64_t *b = ps.bpf;
	uint64_t all = 0;
	size_t off = runtime_summary_start(&stats_shape, host_of(rt), rt, &ps, buf, len);

	if (!off)
		return 0;
	for (int i = 0; i < FIRN_PY_CODES; i++) /* the outcomes of samples */
		all += b[i];
	strput(buf, len, &off,
	       "%llu samples: %.1f%% complete, truncated %llu, no thread state %llu, unreadable "
	       "frame %llu; code objects %llu (announcements lost %llu), unreadable %llu; ",
	       (unsigned long long)all, all ? 100.0 * b[FIRN_PY_COMPLETE] / all : 0.0,
	       (unsigned long long)b[FIRN_PY_TRUNCATED], (unsigned long long)b[FIRN_PY_NO_THREAD],
	       (unsigned long long)b[FIRN_PY_BAD_READ], (unsigned long long)b[FIRN_PY_CODES],
	       (unsigned long long)b[FIRN_PY_CODES_LOST], (unsigned long long)ps.unreadable);
	runtime_summary_refused(buf, len, &off, "unknown version", ps.unknown_version,
				ps.last_refusal);
	strput(buf, len, &off, "\n");
	return off;
}

static void rt_detach(struct runtime *rt, pid_t pid)
{
	pyframes_forget((struct pyframes *)rt, pid);
}

const struct runtime_ops runtime_python = {
	.name = "python",
	.off_help = "no Python functions: the interpreter's native frames only",
	.tag = FIRN_FRAME_KIND_PYTHON, .frames = FRAME_PYTHON,
	.configure = rt_configure, .new = rt_new, .free = rt_free,
	.attach = rt_attach, .on_mapping = rt_on_mapping, .on_code = rt_on_code,
	.on_stack = rt_on_stack, .poll = rt_poll, .resolve = rt_resolve, .stats = rt_stats,
	.summary = rt_summary, .detach = rt_detach,
};
