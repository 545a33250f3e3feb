/* runtime_java: Java frames read from HotSpot's own structures (see hotspot_runtime.h). */
#include "runtimes/hotspot_runtime.h"
#include "runtimes/runtime.h"
#include "runtimes/hotspot_names.h"
#include "runtimes/hotspot_inline.h"
#include "base/fileid.h"
#include "runtimes/runtime_util.h"
#include "base/hash.h"
#include "base/hashtab.h"
#include "base/safeopen.h"
#include "base/strput.h"
#include "base/vec.h"
#include "proc/procmap.h"
#include "source/sample_source.h"

#include <linux/types.h>

#include "../../bpf/firn.h"
#include "../../bpf/hotspot.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define RETRY_NS (10 * 1000000ull)       /* a JVM still starting is looked at again after this */
#define RETRY_SLOW_NS (200 * 1000000ull) /* ... and after this once RETRIES_FAST tries failed */
#define RETRIES_FAST 50
#define RETRIES 150                      /* tries (20 s in all) before it is refused */

/* A libjvm whose symbols were read: by identity (dev, inode, size, mtime). */
struct hsfile {
	struct file_id id; /* first: runtime_file_index */
	int err; /* hotspot_syms_read_fd's */
	struct hotspot_syms s;
};

/* A process met: its libjvm (file -1: none found), its tables once read. */
struct hsproc {
	pid_t pid;
	ssize_t file;
	uint64_t bias;       /* libjvm's load address (its mapping at offset 0) */
	bool described, counted, refusal_counted;
	bool structs_read;   /* hs read (its tables are static: a retry reads the code heaps alone) */
	unsigned tries;      /* readings of its tables that failed (a JVM still starting) */
	uint64_t due_ns;     /* when to try again (0: not waiting) */
	struct hotspot_structs hs;
	struct hotspot_codecache cc; /* its code heaps (described) */
};

#define INLINE_PCS 512   /* a compiled method's call sites expanded when it is announced */
#define LINES_READ 1024 /* bytes of a method's line number table read at most */
#define LINES_MAX 256   /* rows kept of it */

/* One method id of the walker: its name ("Class.method"; NULL: not read), its lines by bytecode
 * index (NULL: none read). */
struct hsmethod {
	uint64_t id;
	pid_t pid;
	uint64_t method, nmethod; /* a compiled frame's id: its Method*, nmethod, compile id */
	int32_t compile_id;
	char *name, *file; /* file: its class's source ("java/util/HashMap.java"), or NULL */
	struct hotspot_line *lines;
	uint32_t nlines;
	uint32_t npcs;  /* a compiled frame's PcDescs expanded (their offsets, ascending), or 0 */
	uint32_t *pcs;
};

/* A compiled frame expanded at one pc offset of its nmethod (by id << 16 | pc offset): the
 * methods inlined there, innermost first (names and files owned; n 0: none, or not expandable:
 * the outer method alone), and the outer method's line at the call. */
struct hsinl {
	uint64_t key;
	uint32_t n, outer_line;
	struct resolved_frame f[HS_INLINE_MAX - 1];
};

struct hsrt {
	struct runtime_head head; /* first: runtime_state_new */
	struct hotspot_mem mem;
	struct hsfile *files;
	size_t nfiles, capfiles;
	struct hsproc *procs;
	size_t nprocs, capprocs;
	struct hsmethod *methods;
	size_t nmethods, capmethods;
	struct hashtab index; /* id → methods */
	struct hsinl *inls;
	size_t ninls, capinls;
	struct hashtab inl_index; /* key → inls */
	uint32_t epoch;
	struct hotspot_runtime_stats st;
};

/* The process's memory through process_vm_readv. */
static int vm_read(void *ctx, pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	(void)ctx;
	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

int hotspot_proc_of(const struct hotspot_structs *hs, const struct hotspot_codecache *cc,
		    struct firn_hotspot_proc *p, char *why, size_t len)
{
	uint32_t offs[] = { hs->size_heapblock, hs->heapblock_used, hs->blob_size,
			    hs->blob_frame_size, hs->blob_name, hs->blob_kind, hs->nm_method,
			    hs->nm_compile_id,
			    hs->method_const, hs->cmethod_constants, hs->cmethod_code_size,
			    hs->size_cmethod };
	const char *bad = NULL;

	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]) && !bad; i++)
		if (offs[i] >= 4096)
			bad = "an offset out of the walker's reach";
	if (!bad && (cc->nheaps < 1 || cc->nheaps > FIRN_HS_HEAPS))
		bad = "more code heaps than the walker reads";
	if (!bad && (hs->frame_method >= 0 || hs->frame_method < -16 || hs->frame_bcp >= 0 ||
		     hs->frame_bcp < -16 || hs->frame_sender_sp >= 0 || hs->frame_sender_sp < -16))
		bad = "interpreter frame slots out of the walker's reach";
	if (bad) {
		snprintf(why, len, "HotSpot of a layout the walker cannot read: %s", bad);
		return -EPROTO;
	}
	*p = (struct firn_hotspot_proc){
		.lo = UINT64_MAX, .size_heapblock = hs->size_heapblock,
		.off_heapblock_used = hs->heapblock_used, .off_blob_size = hs->blob_size,
		.off_blob_frame_size = hs->blob_frame_size, .off_blob_name = hs->blob_name,
		.off_blob_kind = hs->blob_kind, .kind_nmethod = (__u32)hs->blob_kind_nmethod,
		.off_nm_method = hs->nm_method, .off_nm_compile_id = hs->nm_compile_id,
		.off_method_const = hs->method_const,
		.off_cmethod_constants = hs->cmethod_constants,
		.off_cmethod_code_size = hs->cmethod_code_size, .size_cmethod = hs->size_cmethod,
		.frame_method = hs->frame_method, .frame_bcp = hs->frame_bcp,
		.frame_sender_sp = hs->frame_sender_sp,
	};
	for (unsigned i = 0; i < cc->nheaps; i++) {
		p->heap[i].low = cc->heap[i].low, p->heap[i].high = cc->heap[i].high;
		p->heap[i].segmap = cc->heap[i].segmap, p->heap[i].log2_segment = cc->heap[i].log2_segment;
		p->lo = cc->heap[i].low < p->lo ? cc->heap[i].low : p->lo;
		p->hi = cc->heap[i].high > p->hi ? cc->heap[i].high : p->hi;
	}
	return 0;
}

/* ---- line numbers ---- */

/* One UNSIGNED5 int at b[*i] (HotSpot's CompressedReadStream: bytes below 192 + excess end it,
 * 6 more bits each, 5 bytes at most); false past n. */
static bool unsigned5(const uint8_t *b, size_t n, size_t *i, unsigned excess, uint32_t *out)
{
	uint32_t sum = 0;

	for (int k = 0, shift = 0; k < 5; k++, shift += 6) {
		if (*i >= n || b[*i] < excess)
			return false;
		uint32_t v = (uint32_t)(b[(*i)++] - excess);
		sum += v << shift;
		if (v < 192 || k == 4) {
			*out = sum;
			return true;
		}
	}
	return false;
}

int hotspot_lines_decode(const uint8_t *buf, size_t len, unsigned excess, struct hotspot_line *rows,
			 int max)
{
	uint32_t bci = 0, bd, ld;
	int64_t line = 0;
	size_t i = 0;
	int n = 0;

	while (i < len && buf[i]) {
		uint8_t b = buf[i++];
		if (b != 0xFF) {
			bd = b >> 3, ld = b & 7;
		} else if (!unsigned5(buf, len, &i, excess, &bd) || !unsigned5(buf, len, &i, excess, &ld)) {
			return -EINVAL;
		} else { /* signed: zigzag */
			bd = (bd >> 1) ^ -(bd & 1), ld = (ld >> 1) ^ -(ld & 1);
		}
		if ((int32_t)bd < 0 || bci + bd < bci)
			return -EINVAL;
		bci += bd, line += (int32_t)ld;
		if (line <= 0 || line > INT32_MAX)
			return -EINVAL;
		if (n < max)
			rows[n] = (struct hotspot_line){ bci, (uint32_t)line };
		n += n < max;
	}
	return i < len ? n : -EINVAL;
}

/* ---- processes ---- */

/* Process pid's record, or NULL. */
static struct hsproc *proc_find(struct hsrt *r, pid_t pid)
{
	return RUNTIME_PROC_FIND(r->procs, r->nprocs, pid);
}

/* Whether a mapped file is a libjvm.so (by its name). */
static bool jvm_named(const char *path)
{
	const char *base = strrchr(path, '/');

	return !strcmp(base ? base + 1 : path, "libjvm.so");
}

/* runtime_file_index's read: a libjvm's symbols. */
static void file_read(void *f, int fd)
{
	struct hsfile *hf = f;

	hf->err = hotspot_syms_read_fd(&hf->s, fd);
}

/* Counts pr's refusal once, keeps why. */
static void refuse(struct hsrt *r, struct hsproc *pr, const char *why)
{
	if (!pr->refusal_counted) {
		pr->refusal_counted = true;
		r->st.refused++;
	}
	pr->due_ns = 0;
	snprintf(r->st.last_refusal, sizeof(r->st.last_refusal), "%s", why);
}

/* Reads pr's tables and code heaps and tells the walker; a JVM still starting (libjvm mapped but
 * its tables' strides not yet set by its initializers, its code cache not made yet: a few reads
 * each time once the tables are read) is tried again every RETRY_NS, then RETRY_SLOW_NS, up to
 * RETRIES times. */
static void describe(struct hsrt *r, struct hsproc *pr, uint64_t now_ns)
{
	struct hotspot_codecache *cc = &pr->cc;
	struct firn_hotspot_proc p;
	char why[sizeof(r->st.last_refusal)];
	int err = pr->structs_read ? 0 : hotspot_structs_read(&pr->hs, &r->files[pr->file].s,
							      pr->bias, &r->mem, pr->pid);

	pr->structs_read = !err;
	if (!err)
		err = hotspot_codecache_read(&pr->hs, &r->mem, pr->pid, cc);
	if (err && ++pr->tries < RETRIES) {
		pr->due_ns = now_ns + (pr->tries < RETRIES_FAST ? RETRY_NS : RETRY_SLOW_NS);
		return;
	}
	if (err) {
		refuse(r, pr, pr->hs.reason[0] ? pr->hs.reason : "cannot read HotSpot's code cache");
		return;
	}
	if (hotspot_proc_of(&pr->hs, cc, &p, why, sizeof(why))) {
		refuse(r, pr, why);
		return;
	}
	p.epoch = ++r->epoch;
	pr->due_ns = 0;
	if (sample_source_set_proc(r->head.h->ss, FIRN_FRAME_KIND_JAVA, pr->pid, &p, sizeof(p)))
		return;
	pr->described = true;
	if (!pr->counted) {
		pr->counted = true;
		r->st.processes++;
	}
}

/* Whether pid may have a libjvm mapped: the host's table, where it knows pid, holds every
 * executable mapping, libjvm's text among them, so a process without one is not read from /proc
 * (most processes: under churn a read of each new one; a later libjvm comes by on_mapping). */
static bool may_map_jvm(const struct hsrt *r, pid_t pid)
{
	const struct procmap *m = runtime_host_maps((void *)r->head.h, pid);

	for (size_t i = 0; m && i < m->n; i++)
		if (m->entries[i].kind == PROCMAP_FILE && jvm_named(m->entries[i].path))
			return true;
	return !m;
}

/* Looks for a libjvm among pid's mappings (all of them: its load address is its mapping at
 * offset 0, which is not executable). */
static void look(struct hsrt *r, struct hsproc *pr, uint64_t now_ns)
{
	struct procmap m;

	if (!may_map_jvm(r, pr->pid) || procmap_read(&m, pr->pid))
		return;
	for (size_t i = 0; i < m.n && pr->file < 0; i++) {
		const struct procmap_entry *e = &m.entries[i];
		if (e->kind != PROCMAP_FILE || e->offset || !jvm_named(e->path))
			continue;
		ssize_t f = RUNTIME_FILE_INDEX(pr->pid, e, r->files, r->nfiles, r->capfiles,
						file_read); /* once per file */
		if (f < 0)
			continue;
		if (r->files[f].err) {
			if (r->files[f].err != -ENOENT)
				refuse(r, pr, "libjvm.so without HotSpot's VMStructs symbols");
			break;
		}
		pr->file = f;
		pr->bias = e->start;
	}
	procmap_release(&m);
	if (pr->file >= 0)
		describe(r, pr, now_ns);
}

/* The walker runs in this recording (it walks inside the native unwinder: nothing to load). */
static void rt_configure(const struct runtime_host *h, struct sampler_opts *so)
{
	(void)h;
	so->walkers |= 1u << FIRN_FRAME_KIND_JAVA;
}

#define HS_BPF(i) RUNTIME_BPF(struct hotspot_runtime_stats, i)
#define HS_OWN(m) offsetof(struct hotspot_runtime_stats, m)

/* User space's counts and the walker's frames by outcome; the Java line, when a process ran a
 * JVM: frames by outcome, methods, refusals with the reason. */
static const struct runtime_stats_shape stats_shape = {
	RUNTIME_STATS_SHAPE(struct hotspot_runtime_stats, FIRN_FRAME_KIND_JAVA, FIRN_HS_NR, refused),
	.name = "java", .own_off = offsetof(struct hsrt, st), .refused = "refused",
	.line = "%llu frames in the code cache: %llu interpreted, %llu compiled, %llu stubs and "
		"adapters, %llu without a code blob, %llu refused (a Method* that did not check); "
		"methods and stubs %llu (announcements lost %llu), unreadable %llu, %llu held; inlined methods "
		"at %llu call sites, %llu compiled methods not expanded; ",
	.counts = { HS_BPF(FIRN_HS_FRAMES), HS_BPF(FIRN_HS_INTERP), HS_BPF(FIRN_HS_NMETHOD),
		    HS_BPF(FIRN_HS_STUB), HS_BPF(FIRN_HS_NO_BLOB), HS_BPF(FIRN_HS_REFUSED),
		    HS_OWN(methods), HS_BPF(FIRN_HS_METHODS_LOST), HS_OWN(unreadable), HS_OWN(held),
		    HS_OWN(inline_sites), HS_OWN(unexpanded) },
};

/* Its state (its host first, as runtime_state_new stores it), reading processes by vm_read. */
static struct runtime *rt_new(const struct runtime_host *h)
{
	_Static_assert(offsetof(struct hsrt, head) == 0, "java: head first");
	struct hsrt *r = runtime_state_new(sizeof(*r), h, &stats_shape);

	if (r)
		r->mem = (struct hotspot_mem){ vm_read, NULL };
	return (struct runtime *)r;
}

static void rt_free(struct runtime *rt)
{
	struct hsrt *r = (struct hsrt *)rt;

	if (!r)
		return;
	for (size_t i = 0; i < r->nmethods; i++)
		FREE_ALL(r->methods[i].name, r->methods[i].file, r->methods[i].lines,
			 r->methods[i].pcs);
	for (size_t i = 0; i < r->ninls; i++)
		for (uint32_t k = 0; k < r->inls[i].n; k++)
			FREE_ALL((char *)r->inls[i].f[k].name, (char *)r->inls[i].f[k].file);
	FREE_ALL(r->methods, r->files, r->procs, r->inls);
	hashtab_release(&r->index);
	hashtab_release(&r->inl_index);
	free(r);
}

/* A process first sampled, or exec'd: looks for its libjvm (again, after an exec). */
static void rt_attach(struct runtime *rt, pid_t pid, bool exec, uint64_t now_ns)
{
	struct hsrt *r = (struct hsrt *)rt;
	struct hsproc *pr = proc_find(r, pid);
	bool counted = pr && pr->counted, refused = pr && pr->refusal_counted;

	if (pr && !exec) {
		if (pr->file < 0 && !pr->refusal_counted)
			look(r, pr, now_ns); /* its libjvm's mmap record may not have reached us */
		return;
	}
	if (pr && pr->described) /* a new image: the walker forgets the old one */
		(void)sample_source_set_proc(r->head.h->ss, FIRN_FRAME_KIND_JAVA, pid, NULL, 0);
	if (!pr && !(pr = RUNTIME_PROC_ADD(r->procs, r->nprocs, r->capprocs, pid)))
		return;
	*pr = (struct hsproc){ .pid = pid, .file = -1, .counted = counted, .refusal_counted = refused };
	look(r, pr, now_ns);
}

/* A libjvm mapped by a process met before it (the launcher loads it after its first samples). */
static void rt_on_mapping(struct runtime *rt, pid_t pid, const struct procmap_entry *e,
			  uint64_t now_ns)
{
	struct hsrt *r = (struct hsrt *)rt;
	struct hsproc *pr = proc_find(r, pid);

	if (pr && e && pr->file < 0 && !pr->refusal_counted && e->kind == PROCMAP_FILE &&
	    jvm_named(e->path))
		look(r, pr, now_ns);
}

/* Processes whose JVM was still starting, looked at again when due. */
static uint64_t rt_poll(struct runtime *rt, uint64_t now_ns)
{
	struct hsrt *r = (struct hsrt *)rt;
	uint64_t next = 0;

	for (size_t i = 0; i < r->nprocs; i++) {
		struct hsproc *pr = &r->procs[i];
		if (pr->due_ns && pr->due_ns <= now_ns && !pr->described)
			describe(r, pr, now_ns);
		if (pr->due_ns && (!next || pr->due_ns < next))
			next = pr->due_ns;
	}
	return next;
}

/* The method announced with id, or NULL. */
static struct hsmethod *method_find(struct hsrt *r, uint64_t id)
{
	return HASHTAB_FIND_ID(&r->index, r->methods, id, id);
}

/* A stub's name, from its CodeBlob at blob (found again by its address: still a blob there). */
static int stub_name(const struct hotspot_structs *hs, const struct hotspot_codecache *cc,
		     const struct hotspot_mem *mem, pid_t pid, uint64_t blob, char *buf, size_t len)
{
	struct hotspot_blob b;
	int err = hotspot_codecache_find(hs, cc, mem, pid, blob, &b);

	if (err)
		return err;
	if (b.addr != blob)
		return -ESTALE;
	snprintf(buf, len, "%s", b.name);
	return 0;
}

int hotspot_announced_name(const struct hotspot_structs *hs, const struct hotspot_codecache *cc,
			   const struct hotspot_mem *mem, pid_t pid,
			   const struct firn_hotspot_method_event *e, char *buf, size_t len)
{
	struct hotspot_method m;
	uint64_t cm;
	int err;

	buf[0] = '\0';
	if (!e->cmethod)
		return stub_name(hs, cc, mem, pid, e->method, buf, len);
	if ((err = hotspot_mem_word(mem, pid, e->method + hs->method_const, &cm)))
		return err;
	if (cm != e->cmethod)
		return -ESTALE;
	if ((err = hotspot_method_read(hs, mem, pid, e->method, &m)))
		return err;
	bool overloaded;
	if (hotspot_method_overloaded(hs, mem, pid, e->method, &overloaded) || !overloaded ||
	    hotspot_method_format_params(&m, buf, len) < 0)
		hotspot_method_format(&m, buf, len); /* one method of its name: no parameters */
	return 0;
}

/* The name of what e announced (NULL: unreadable, or no longer what the walker saw). */
static char *method_name(struct hsrt *r, const struct hsproc *pr,
			 const struct firn_hotspot_method_event *e)
{
	char buf[1024]; /* class, name and parameters; longer ones are named without */

	if (hotspot_announced_name(&pr->hs, &pr->cc, &r->mem, pr->pid, e, buf, sizeof(buf)))
		return NULL;
	return strdup(buf);
}

/* The line number table of the method e announced, where its JDK says it has one: after its
 * ConstMethod's bytecodes, read up to LINES_READ bytes (less where its memory ends). */
static void read_lines(struct hsrt *r, const struct hsproc *pr,
		       const struct firn_hotspot_method_event *e, struct hsmethod *m)
{
	const struct hotspot_structs *hs = &pr->hs;
	uint16_t flags = 0, code_size = 0;
	uint8_t buf[LINES_READ];
	struct hotspot_line rows[LINES_MAX];
	size_t len = sizeof(buf);
	int n;

	if (!hs->cmethod_flags || hs->cmethod_has_lines <= 0 || hs->cmethod_has_lines > 0xffff ||
	    hotspot_mem_read(&r->mem, pr->pid, e->cmethod + hs->cmethod_flags, &flags, 2) ||
	    !(flags & hs->cmethod_has_lines) ||
	    hotspot_mem_read(&r->mem, pr->pid, e->cmethod + hs->cmethod_code_size, &code_size, 2))
		return;
	uint64_t at = e->cmethod + hs->size_cmethod + code_size;
	while (len >= 16 && hotspot_mem_read(&r->mem, pr->pid, at, buf, len))
		len /= 4;
	n = len < 16 ? -EINVAL : hotspot_lines_decode(buf, len, hs->jdk >= 21, rows, LINES_MAX);
	if (n <= 0 || !(m->lines = malloc(sizeof(rows[0]) * (size_t)n)))
		return;
	memcpy(m->lines, rows, sizeof(rows[0]) * (size_t)n);
	m->nlines = (uint32_t)n;
}

/* The names, source file and lines of the method e announced into m (m->name NULL: unread). */
static void method_fill(struct hsrt *r, const struct hsproc *pr,
			const struct firn_hotspot_method_event *e, struct hsmethod *m)
{
	m->name = pr && pr->described ? method_name(r, pr, e) : NULL;
	if (m->name && e->cmethod) {
		char file[PATH_MAX];
		read_lines(r, pr, e, m);
		if (!hotspot_method_source(&pr->hs, &r->mem, pr->pid, e->method, file, sizeof(file)))
			m->file = strdup(file); /* NULL: no file named */
	}
}

static int expand_calls(struct hsrt *r, const struct hsproc *pr, struct hsmethod *m);

/* The walker gave a method an id: its names are read now, while the process lives. */
static int rt_on_code(struct runtime *rt, const void *rec, size_t len)
{
	struct hsrt *r = (struct hsrt *)rt;
	const struct firn_hotspot_method_event *e = rec;

	if (len < sizeof(*e) || method_find(r, e->id))
		return 0;
	if (VEC_GROW(r->methods, r->capmethods, r->nmethods + 1) ||
	    hashtab_add(&r->index, hash_mix64(e->id), (uint32_t)r->nmethods))
		return -ENOMEM;
	struct hsmethod *m = &r->methods[r->nmethods++];
	struct hsproc *pr = proc_find(r, (pid_t)e->pid);
	*m = (struct hsmethod){ .id = e->id, .pid = (pid_t)e->pid, .method = e->method,
				.nmethod = e->nmethod, .compile_id = e->compile_id };
	method_fill(r, pr, e, m);
	if (m->name && e->nmethod && pr && expand_calls(r, pr, m))
		return -ENOMEM;
	r->st.methods += m->name != NULL;
	r->st.unreadable += m->name == NULL;
	r->st.held = r->nmethods;
	return 0;
}

/* The line of bytecode index bci in m (an interpreted frame's), else m's first row's. */
static uint32_t line_of(const struct hsmethod *m, uint64_t bci)
{
	size_t lo = 0, hi = m->nlines;

	if (!m->nlines)
		return 0;
	if (bci == FIRN_HS_NO_BCI)
		return m->lines[0].line;
	while (hi - lo > 1) { /* the last row at or before bci */
		size_t mid = lo + (hi - lo) / 2;
		if (m->lines[mid].bci <= bci)
			lo = mid;
		else
			hi = mid;
	}
	return m->lines[lo].line;
}

/* Expands compiled frame m at pc offset pcoff into in: the methods its nmethod inlined there,
 * named and lined; none (the outer method alone) where the nmethod changed or a name is not
 * read, so a frame is never given another method's name. */
static void expand(struct hsrt *r, const struct hsmethod *m, uint32_t pcoff, struct hsinl *in)
{
	const struct hsproc *pr = proc_find(r, m->pid);
	const struct hotspot_nmethod_ref ref = { m->nmethod, m->method, m->compile_id };
	struct hotspot_inlined sc[HS_INLINE_MAX];
	int n = pr && pr->described ? hotspot_inline_expand(&pr->hs, &r->mem, pr->pid, &ref,
							     m->nmethod + pcoff, sc, HS_INLINE_MAX)
				    : -ESRCH;

	in->outer_line = line_of(m, FIRN_HS_NO_BCI);
	if (n < 1)
		return;
	in->outer_line = line_of(m, sc[n - 1].bci < 0 ? FIRN_HS_NO_BCI : (uint64_t)sc[n - 1].bci);
	for (int i = 0; i < n - 1; i++) {
		struct firn_hotspot_method_event e = { .pid = (uint32_t)m->pid, .method = sc[i].method };
		struct hsmethod im = { .pid = m->pid };
		uint64_t cm;
		if (!hotspot_mem_word(&r->mem, pr->pid, sc[i].method + pr->hs.method_const, &cm)) {
			e.cmethod = cm;
			method_fill(r, pr, &e, &im);
		}
		uint32_t line = line_of(&im, sc[i].bci < 0 ? FIRN_HS_NO_BCI : (uint64_t)sc[i].bci);
		free(im.lines);
		if (!im.name) {
			free(im.file);
			for (uint32_t k = 0; k < in->n; k++)
				FREE_ALL((char *)in->f[k].name, (char *)in->f[k].file);
			in->n = 0;
			return;
		}
		in->f[in->n++] = (struct resolved_frame){ .name = im.name, .file = im.file, .line = line };
	}
}

/* The expansion of compiled frame m at call site pcoff: the one made, else made now; NULL when
 * out of memory. */
static struct hsinl *inl_get(struct hsrt *r, const struct hsmethod *m, uint32_t pcoff)
{
	uint64_t key = m->id << 16 | pcoff;
	struct hsinl *in = HASHTAB_FIND_ID(&r->inl_index, r->inls, key, key);

	if (in)
		return in;
	if (VEC_GROW(r->inls, r->capinls, r->ninls + 1) ||
	    hashtab_add(&r->inl_index, hash_mix64(key), (uint32_t)r->ninls))
		return NULL;
	in = &r->inls[r->ninls++];
	*in = (struct hsinl){ .key = key };
	expand(r, m, pcoff, in);
	return in;
}

/* A compiled method just announced: each of its PcDescs expanded now, while the process lives
 * (a caller's frame returns to one, a sampled pc takes the next one's scopes; its samples may be
 * resolved after the process ends), their offsets kept in m->pcs for resolve_compiled. */
static int expand_calls(struct hsrt *r, const struct hsproc *pr, struct hsmethod *m)
{
	const struct hotspot_nmethod_ref ref = { m->nmethod, m->method, m->compile_id };
	uint32_t pcs[INLINE_PCS];
	int n = hotspot_inline_pcs(&pr->hs, &r->mem, pr->pid, &ref, pcs, INLINE_PCS);
	struct hsinl *in;

	r->st.unexpanded += n < 0 && n != -EOPNOTSUPP; /* a JDK whose layout is not read: not counted */
	while (n > 0 && pcs[n - 1] >= FIRN_HS_NO_BCI)
		n--; /* past a payload's 16 bits: no frame names them */
	if (n <= 0)
		return 0;
	if (!(m->pcs = malloc(sizeof(pcs[0]) * (size_t)n)))
		return -ENOMEM;
	memcpy(m->pcs, pcs, sizeof(pcs[0]) * (size_t)n);
	m->npcs = (uint32_t)n;
	for (int i = 0; i < n; i++) {
		if (!(in = inl_get(r, m, pcs[i])))
			return -ENOMEM;
		r->st.inline_sites += in->n > 0;
	}
	return 0;
}

/* A compiled frame at pc offset pcoff of its nmethod: the scopes of its PcDesc (a return
 * address's own), else of the first PcDesc after it (a sampled pc between two, as HotSpot's
 * pc_desc_near: JFR names it so), the methods inlined there, innermost first, each at its line,
 * then the outer method m at its scope's line; m alone at its first line where no PcDesc
 * follows in what was read. */
static int resolve_compiled(struct hsrt *r, const struct hsmethod *m, uint32_t pcoff,
			    struct resolved_frame *out, int max)
{
	uint64_t key = m->id << 16 | pcoff;
	struct hsinl *in = HASHTAB_FIND_ID(&r->inl_index, r->inls, key, key);
	int near = in ? -1 : hotspot_inline_near(m->pcs, m->npcs, pcoff);

	if (near >= 0) {
		key = m->id << 16 | m->pcs[near];
		in = HASHTAB_FIND_ID(&r->inl_index, r->inls, key, key);
	}
	if (!in) { /* no PcDesc at or after it read: the outer method alone */
		out[0] = (struct resolved_frame){ .name = m->name, .file = m->file,
						  .line = line_of(m, FIRN_HS_NO_BCI) };
		return 1;
	}
	uint32_t n = in->n + 1 <= (uint32_t)max ? in->n : 0;
	for (uint32_t i = 0; i < n; i++)
		out[i] = in->f[i];
	out[n] = (struct resolved_frame){ .name = m->name, .file = m->file, .line = in->outer_line };
	return (int)n + 1;
}

/* A Java frame: its method's name and line, or nothing when it was not read ("[unknown]"). */
static int rt_resolve(struct runtime *rt, pid_t pid, uint64_t v, struct resolved_frame *out,
		      int max)
{
	uint64_t payload = resolver_payload(v);
	struct hsmethod *m = method_find((struct hsrt *)rt, FIRN_HS_ID(payload));

	if (max < 1 || !m || m->pid != pid || !m->name)
		return 0;
	if (FIRN_HS_TIER(payload) == FIRN_HS_COMPILED && m->nmethod &&
	    FIRN_HS_BCI(payload) != FIRN_HS_NO_BCI)
		return resolve_compiled((struct hsrt *)rt, m, (uint32_t)FIRN_HS_BCI(payload), out, max);
	out[0] = (struct resolved_frame){ .name = m->name, .file = m->file,
					  .line = line_of(m, FIRN_HS_BCI(payload)) };
	return 1;
}


/* The process ended: forgotten (its methods' names stay). */
/* The indexes of the methods and the expanded call sites, made again after some were dropped
 * (an entry not added again is only not found: its frames unnamed, never misnamed). */
static void reindex(struct hsrt *r)
{
	hashtab_clear(&r->index);
	hashtab_clear(&r->inl_index);
	for (size_t i = 0; i < r->nmethods; i++)
		(void)hashtab_add(&r->index, hash_mix64(r->methods[i].id), (uint32_t)i);
	for (size_t i = 0; i < r->ninls; i++)
		(void)hashtab_add(&r->inl_index, hash_mix64(r->inls[i].key), (uint32_t)i);
}

/* Frees the methods of pid and the call sites expanded in them: a JVM that ended, whose samples
 * were resolved (their names interned by the capture) when they were parked. A continuous
 * recording holds the methods of the JVMs running, not of every JVM it met. */
static void drop_methods(struct hsrt *r, pid_t pid)
{
	size_t k = 0;

	for (size_t i = 0; i < r->ninls; i++) {
		const struct hsmethod *m = method_find(r, r->inls[i].key >> 16);
		if (m && m->pid == pid) {
			for (uint32_t j = 0; j < r->inls[i].n; j++)
				FREE_ALL((char *)r->inls[i].f[j].name, (char *)r->inls[i].f[j].file);
			continue;
		}
		r->inls[k++] = r->inls[i];
	}
	r->ninls = k;
	k = 0;
	for (size_t i = 0; i < r->nmethods; i++) {
		struct hsmethod *m = &r->methods[i];
		if (m->pid == pid) {
			FREE_ALL(m->name, m->file, m->lines, m->pcs);
			continue;
		}
		r->methods[k++] = *m;
	}
	if (k < r->nmethods) {
		r->nmethods = k;
		reindex(r);
	}
	r->st.held = r->nmethods;
}

static void rt_detach(struct runtime *rt, pid_t pid)
{
	struct hsrt *r = (struct hsrt *)rt;
	struct hsproc *pr = proc_find(r, pid);

	drop_methods(r, pid);
	if (!pr)
		return;
	if (pr->described)
		(void)sample_source_set_proc(r->head.h->ss, FIRN_FRAME_KIND_JAVA, pid, NULL, 0);
	RUNTIME_PROC_DROP(r->procs, r->nprocs, pr);
}

const struct runtime_ops runtime_java = {
	.name = "java",
	.off_help = "no Java methods read from HotSpot: its code named by perf maps only",
	.tag = FIRN_FRAME_KIND_JAVA, .frames = FRAME_JAVA,
	.configure = rt_configure, .new = rt_new, .free = rt_free, .attach = rt_attach,
	.on_mapping = rt_on_mapping, .on_code = rt_on_code, .poll = rt_poll,
	.resolve = rt_resolve, .stats = runtime_stats, .summary = runtime_summary, .detach = rt_detach,
};
