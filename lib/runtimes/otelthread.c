/* OpenTelemetry thread contexts as sample labels: finding the variable per process, naming the
 * contexts the walker announces (lib/runtimes/otelthread.h). */
#include "runtimes/otelthread.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/types.h>

#include "../../bpf/firn.h"
#include "../../bpf/otelctx.bpf.h"
#include "base/clock.h"
#include "base/hash.h"
#include "base/hashtab.h"
#include "base/pidindex.h"
#include "base/safeopen.h"
#include "base/strput.h"
#include "base/vec.h"
#include "elf/otelctx.h"
#include "elf/otelproc.h"
#include "elf/tlsctx.h"
#include "proc/procmap.h"
#include "source/sample_source.h"
#include "source/sampler.h"

#define OTEL_LABELS 16 /* trace_id, span_id and the attributes kept of one context */
#define OTEL_PROC_ATTRS 8 /* the process context's attributes kept as labels (after service.name) */
/* Reads of a process context not published (yet): at most 6, 1 s after the first, then twice as
 * long each time (31 s in all): most processes have none, and a read is their maps'. */
#define OTEL_PC_TRIES 6
#define OTEL_PC_RETRY_NS 1000000000ULL

/* A file looked at: its variable (model 0: none). */
struct otel_file {
	uint64_t dev, ino;
	struct tlsctx t;
};

/* A process: whether its walker was told, its retries, its process context (the key map, its
 * labels: read at its first sample, retried until published, and at its first context). */
struct otel_proc {
	pid_t pid;
	bool told;
	bool counted;        /* in told (an exec tells again) */
	unsigned tries, pc_tries;
	uint64_t due_ns;     /* next retry (0: none) */
	uint64_t pc_due_ns;  /* next read of its process context (0: none) */
	struct otelproc pc;  /* valid when pc_ok */
	bool pc_ok;
};

/* A context: its id, its key in the walker's otel_ctxs, its labels (keys and values point
 * into strs, owned) and the last cut that asked for them. */
struct otel_context {
	uint64_t id;
	struct firn_otel_key key;
	unsigned n;
	struct resolved_label l[OTEL_LABELS];
	char *strs;
	uint64_t used; /* struct otelthread's cut when last asked for (or announced) */
	bool dying;    /* out of otel_ctxs: its labels go at the next cut */
};

struct otelthread {
	const struct runtime_host *h;
	struct pidindex procs;
	struct otel_file *files;
	size_t nfiles, cap_files;
	struct otel_context *ctxs; /* in by_id */
	size_t nctxs, cap_ctxs;
	struct hashtab by_id;      /* id → index in ctxs */
	uint64_t cut;              /* cuts made (otel_cut) */
	uint64_t epoch;            /* the walker's otel_epoch */
	uint64_t let_go;           /* contexts taken out after cuts */
	unsigned told;             /* processes whose walker was told */
	uint64_t named, unnamed;   /* contexts named, announcements not decoded */
};

static const struct otelproc *keys_of(struct otelthread *o, struct otel_proc *p);

/* struct tlsctx_mem over process_vm_readv of ctx's pid. */
static int read_pid(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(*(pid_t *)ctx, &local, 1, &remote, 1, 0);

	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EFAULT;
}

/* The variable of the file mapped at e (resolved once per device and inode); NULL: none. */
static const struct tlsctx *file_var(struct otelthread *o, pid_t pid, const struct procmap_entry *e)
{
	uint64_t dev = (uint64_t)e->dev_major << 20 | e->dev_minor;
	char path[4096];

	for (size_t i = 0; i < o->nfiles; i++)
		if (o->files[i].dev == dev && o->files[i].ino == e->inode)
			return o->files[i].t.model ? &o->files[i].t : NULL;
	if (VEC_GROW(o->files, o->cap_files, o->nfiles + 1))
		return NULL;
	struct otel_file *f = &o->files[o->nfiles++];
	*f = (struct otel_file){ .dev = dev, .ino = e->inode };
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, e->path);
	int fd = safeopen(path, 0, 0, NULL);
	if (fd >= 0) {
		(void)tlsctx_resolve_fd(&f->t, fd); /* zeroed when it has none */
		close(fd);
	}
	return f->t.model ? &f->t : NULL;
}

/* Whether pid maps t's GOT entry (t's file at bias) from the file's own bytes, as the loader
 * maps the segment: before, a reservation of the whole file may show other bytes there. */
static bool got_mapped(const struct tlsctx *t, pid_t pid, uint64_t bias, uint64_t ino)
{
	struct procmap m;
	const struct procmap_entry *e;
	bool ok;

	if (!t->got)
		return true; /* local-exec: nothing read */
	procmap_init(&m);
	ok = !procmap_read(&m, pid) && (e = procmap_find(&m, bias + t->got)) && e->inode == ino &&
	     e->offset + (bias + t->got - e->start) == t->got_offset && t->got_offset;
	procmap_release(&m);
	return ok;
}

/* Tells the walker where pid's variable is, from the file mapped at e: 0; -ENOENT: not in that
 * file; -EAGAIN: there, but not relocated by the loader yet. */
static int tell_from(struct otelthread *o, struct otel_proc *p, const struct procmap_entry *e)
{
	const struct tlsctx *t = e->kind == PROCMAP_FILE && e->path[0] ? file_var(o, p->pid, e) : NULL;
	struct tlsctx_mem mem = { read_pid, &p->pid };
	struct tlsctx_where w;

	if (!t)
		return -ENOENT;
	/* the executable segment's bias: files whose segments keep vaddr == offset (gcc, clang) */
	if (!got_mapped(t, p->pid, e->start - e->offset, e->inode) ||
	    tlsctx_locate(t, e->start - e->offset, &mem, &w) || (!w.dtv && w.offset >= 0))
		return -EAGAIN; /* a static TLS offset is negative once relocated (variant II) */
	struct firn_otel_proc bp = { .how = w.dtv ? FIRN_OTEL_DTV : FIRN_OTEL_FS,
				     .offset = w.offset, .module = w.module };
	if (sample_source_set_proc(o->h->ss, FIRN_OTEL_TAG, p->pid, &bp, sizeof(bp)))
		return -EAGAIN;
	p->told = true;
	o->told += !p->counted;
	p->counted = true;
	return 0;
}

/* p's mappings: the host's process table's (read once for every runtime), else, or when
 * fresh (a retry: what was published since), read into own (initialized here; released by the
 * caller); NULL when neither can be had. */
static const struct procmap *maps_of(struct otelthread *o, struct otel_proc *p, bool fresh,
				     struct procmap *own)
{
	const struct procmap *m = fresh ? NULL : runtime_host_maps((void *)o->h, p->pid);

	procmap_init(own);
	return m ? m : procmap_read(own, p->pid) ? NULL : own;
}

/* Looks for the variable in every executable mapping of p; schedules a retry when one has it
 * unrelocated. */
static void look(struct otelthread *o, struct otel_proc *p, uint64_t now_ns)
{
	struct procmap own;
	const struct procmap *m = maps_of(o, p, false, &own);
	bool again = false;

	for (size_t i = 0; m && i < m->n && !p->told; i++)
		if (m->entries[i].x)
			again |= tell_from(o, p, &m->entries[i]) == -EAGAIN;
	procmap_release(&own);
	p->due_ns = !p->told && again && ++p->tries < OTEL_RETRIES ? now_ns + OTEL_RETRY_NS : 0;
}

/* pid's record, made when first met; NULL: out of memory. */
static struct otel_proc *proc_of(struct otelthread *o, pid_t pid)
{
	struct otel_proc *p = pidindex_get(&o->procs, pid);

	if (p || !(p = calloc(1, sizeof(*p))))
		return p;
	p->pid = pid;
	if (pidindex_put(&o->procs, pid, p, NULL)) {
		free(p);
		return NULL;
	}
	return p;
}

/* A process's first sample or exec: its variable looked for (its walker told of it again). */
static void otel_attach(struct runtime *rt, pid_t pid, bool exec, uint64_t now_ns)
{
	struct otelthread *o = (struct otelthread *)rt;
	struct otel_proc *p = proc_of(o, pid);

	if (!p)
		return;
	if (exec && p->told)
		(void)sample_source_set_proc(o->h->ss, FIRN_OTEL_TAG, pid, NULL, 0);
	if (exec && p->pc_ok) /* a new program: its own context */
		otelproc_release(&p->pc);
	p->told = p->pc_ok = false;
	p->tries = p->pc_tries = 0;
	look(o, p, now_ns);
	(void)keys_of(o, p);
}

/* A mapping of a process attached: a library with the variable loaded later (dlopen). */
static void otel_on_mapping(struct runtime *rt, pid_t pid, const struct procmap_entry *e,
			    uint64_t now_ns)
{
	struct otelthread *o = (struct otelthread *)rt;
	struct otel_proc *p = pidindex_get(&o->procs, pid);

	if (!p || p->told || !e || !e->x)
		return;
	if (tell_from(o, p, e) == -EAGAIN && !p->due_ns)
		p->due_ns = now_ns + OTEL_RETRY_NS;
}

/* Retries of processes whose variable was not relocated yet; when next one is due. */
static uint64_t otel_poll(struct runtime *rt, uint64_t now_ns)
{
	struct otelthread *o = (struct otelthread *)rt;
	uint64_t next = 0;

	for (size_t i = 0; i < o->procs.n; i++) {
		struct otel_proc *p = o->procs.vals[i];
		if (p->due_ns && p->due_ns <= now_ns && !p->told)
			look(o, p, now_ns);
		if (p->told)
			p->due_ns = 0;
		if (p->due_ns && (!next || p->due_ns < next))
			next = p->due_ns;
		if (p->pc_due_ns && p->pc_due_ns <= now_ns)
			(void)keys_of(o, p);
		if (p->pc_due_ns && (!next || p->pc_due_ns < next))
			next = p->pc_due_ns;
	}
	return next;
}

/* p's process context, read while the process lives (its samples are named after it ended):
 * until read, at most OTEL_PC_TRIES times, the next one due as OTEL_PC_TRIES says. */
static const struct otelproc *keys_of(struct otelthread *o, struct otel_proc *p)
{
	struct procmap own;
	uint64_t addr;
	struct tlsctx_mem mem = { read_pid, &p->pid };

	if (p->pc_ok || p->pc_tries >= OTEL_PC_TRIES)
		return p->pc_ok ? &p->pc : NULL;
	p->pc_tries++;
	const struct procmap *m = maps_of(o, p, p->pc_tries > 1, &own);
	if (m && !otelproc_find(m, &addr))
		p->pc_ok = !otelproc_read(&p->pc, addr, &mem);
	procmap_release(&own);
	if (!p->pc_ok)
		otelproc_release(&p->pc);
	p->pc_due_ns = p->pc_ok || p->pc_tries >= OTEL_PC_TRIES ?
		       0 : mono_ns() + (OTEL_PC_RETRY_NS << (p->pc_tries - 1));
	return p->pc_ok ? &p->pc : NULL;
}

/* Appends "key\0value\0" of one label to s's strings (keys and values set after: strs moves). */
static int put_label(char **strs, size_t *len, size_t *cap, const char *k, const char *v,
		     size_t vlen)
{
	size_t kl = strlen(k);

	if (VEC_GROW(*strs, *cap, *len + kl + vlen + 2))
		return -ENOMEM;
	memcpy(*strs + *len, k, kl + 1);
	memcpy(*strs + *len + kl + 1, v, vlen);
	(*strs)[*len + kl + 1 + vlen] = 0;
	*len += kl + vlen + 2;
	return 0;
}

/* Builds a context's labels from its decoded record and its process's key map. */
static int make_labels(struct otel_context *c, const struct otelctx_record *r,
		       const struct otelproc *keys)
{
	char hex[33], name[16];
	size_t len = 0, cap = 0;
	int err;

	otelctx_hex(r->trace_id, 16, hex);
	err = put_label(&c->strs, &len, &cap, "trace_id", hex, 32);
	otelctx_hex(r->span_id, 8, hex);
	err = err ? err : put_label(&c->strs, &len, &cap, "span_id", hex, 16);
	for (size_t i = 0; !err && i < r->nattrs && i + 2 < OTEL_LABELS; i++) {
		const char *k = keys ? otelproc_key(keys, r->attrs[i].key) : NULL;
		if (!k || !*k)
			snprintf(name, sizeof(name), "attr_%u", r->attrs[i].key);
		err = put_label(&c->strs, &len, &cap, k && *k ? k : name,
				(const char *)r->data + r->attrs[i].off, r->attrs[i].len);
	}
	/* the strings are in place: point the labels at them */
	for (size_t off = 0; !err && off < len && c->n < OTEL_LABELS; c->n++) {
		c->l[c->n].key = c->strs + off;
		off += strlen(c->strs + off) + 1;
		c->l[c->n].value = c->strs + off;
		off += strlen(c->strs + off) + 1;
	}
	return err;
}

/* Context id's entry, or NULL. */
static struct otel_context *context_of(const struct otelthread *o, uint64_t id)
{
	return HASHTAB_FIND_ID(&o->by_id, o->ctxs, id, id);
}

/* Bumps the walker's otel_epoch: no thread reuses an id it remembers (found again by its key). */
static void epoch_bump(struct otelthread *o)
{
	__u32 zero = 0;

	o->epoch++;
	if (sample_source_map_update(o->h->ss, "otel_epoch", &zero, &o->epoch))
		o->epoch--; /* not the walker's now: tried again at the next bump */
}

/* Id's entry, empty, with key; NULL: no memory. An id announced again (the walker's ids went
 * round) whose old context is still in the walker's table: the old one is taken out (its
 * thread gets a new id at its next sample), its labels go. */
static struct otel_context *context_new(struct otelthread *o, uint64_t id,
					const struct firn_otel_key *key)
{
	struct otel_context *c = context_of(o, id);

	if (c && !c->dying && memcmp(&c->key, key, sizeof(*key))) {
		(void)sample_source_map_update(o->h->ss, "otel_ctxs", &c->key, NULL);
		epoch_bump(o);
	}
	if (!c) {
		if (VEC_GROW(o->ctxs, o->cap_ctxs, o->nctxs + 1) ||
		    hashtab_add(&o->by_id, hash_mix64(id), (uint32_t)o->nctxs))
			return NULL;
		c = &o->ctxs[o->nctxs++];
		c->strs = NULL;
	}
	free(c->strs);
	*c = (struct otel_context){ .id = id, .key = *key, .used = o->cut };
	return c;
}

/* A context's announcement: its labels kept for its id. */
static int otel_on_code(struct runtime *rt, const void *rec, size_t len)
{
	struct otelthread *o = (struct otelthread *)rt;
	struct firn_otel_ctx_event e;
	struct firn_otel_key key;
	static struct otelctx_record r; /* large: one thread calls the ops */

	if (len < sizeof(e))
		return 0;
	memcpy(&e, rec, sizeof(e));
	if (!e.id || e.id >= FIRN_CTX_OTHER || e.len > FIRN_OTEL_ATTRS)
		return 0;
	key = (struct firn_otel_key){ .pid = e.pid, .len = e.len }; /* as the walker keyed it */
	memcpy(key.rec, e.rec, sizeof(key.rec));
	uint16_t size = (uint16_t)e.len; /* attributes cut by the walker end where it cut them */
	memcpy(e.rec + FIRN_OTEL_ATTRS_SIZE, &size, sizeof(size));
	if (otelctx_decode(&r, e.rec, FIRN_OTEL_HEADER + e.len)) {
		o->unnamed++;
		return 0;
	}
	struct otel_context *c = context_new(o, e.id, &key);
	if (!c)
		return -ENOMEM;
	struct otel_proc *p = proc_of(o, (pid_t)e.pid);
	o->named++;
	return make_labels(c, &r, p ? keys_of(o, p) : NULL);
}

/* A sample's context id → its labels ("other" for the folded id). */
static int otel_labels(struct runtime *rt, pid_t pid, uint32_t id, struct resolved_label *out,
		       int max)
{
	struct otelthread *o = (struct otelthread *)rt;
	struct otel_context *c = context_of(o, id);
	int n = 0;

	(void)pid;
	if (id == FIRN_CTX_OTHER && max >= 2) {
		out[0] = (struct resolved_label){ "trace_id", "other" };
		out[1] = (struct resolved_label){ "span_id", "other" };
		return 2;
	}
	if (c)
		c->used = o->cut;
	for (; c && n < (int)c->n && n < max; n++)
		out[n] = c->l[n];
	return n;
}

/* A sample's process → its process context's service.name and string attributes (up to
 * OTEL_PROC_ATTRS; the OTEP's threadlocal.* entries describe the thread records, not the
 * process, and are left out). */
static int otel_proc_labels(struct runtime *rt, pid_t pid, struct resolved_label *out, int max)
{
	struct otelthread *o = (struct otelthread *)rt;
	const struct otel_proc *p = pidindex_get(&o->procs, pid);
	int n = 0, attrs = 0;

	if (!p || !p->pc_ok)
		return 0;
	if (p->pc.service_name && *p->pc.service_name && n < max)
		out[n++] = (struct resolved_label){ "service.name", p->pc.service_name };
	for (size_t i = 0; i < p->pc.nattrs && n < max && attrs < OTEL_PROC_ATTRS; i++) {
		const struct otelproc_attr *a = &p->pc.attrs[i];
		if (!*a->key || !*a->value || !strncmp(a->key, "threadlocal.", 12))
			continue;
		out[n++] = (struct resolved_label){ a->key, a->value };
		attrs++;
	}
	return n;
}

/* Takes the contexts the cut just made did not ask for out of the walker's table (a new span
 * gets an id again: a continuous recording is not folded into 'other' for good), and the
 * epoch bumped so no thread reuses one it remembers; their labels go at the next cut, which
 * names what was sampled before the walker saw the epoch. */
static void otel_cut(struct runtime *rt)
{
	struct otelthread *o = (struct otelthread *)rt;
	struct sample_source *ss = o->h->ss;
	size_t n = 0, gone = 0;

	hashtab_clear(&o->by_id);
	for (size_t i = 0; i < o->nctxs; i++) {
		struct otel_context *c = &o->ctxs[i];
		if (c->dying) {
			free(c->strs);
			continue;
		}
		if (c->used != o->cut) { /* -ENOENT: not in the table (folded when announced) */
			(void)sample_source_map_update(ss, "otel_ctxs", &c->key, NULL);
			c->dying = true;
			gone++;
		}
		o->ctxs[n] = *c;
		(void)hashtab_add(&o->by_id, hash_mix64(c->id), (uint32_t)n++); /* no larger than before */
	}
	o->nctxs = n;
	o->let_go += gone;
	o->cut++;
	if (gone)
		epoch_bump(o);
}

/* "firn: otel: ..." from the walker's counters, where a process had a thread context. */
static size_t otel_summary(const struct runtime *rt, char *buf, size_t len)
{
	const struct otelthread *o = (const struct otelthread *)rt;
	uint64_t c[FIRN_OTEL_NR];
	size_t off = 0;

	if (!o->told)
		return 0;
	sample_source_walker_stats(o->h->ss, FIRN_OTEL_TAG, c, FIRN_OTEL_NR);
	/* each CPU's samples not yet folded into walker_stats (up to 31): the summary counts all */
	c[FIRN_OTEL_SAMPLES] += sample_source_map_percpu_sum(o->h->ss, FIRN_OTEL_LAST_MAP, 0,
							     FIRN_OTEL_LAST_SAMPLES_OFF);
	strput(buf, len, &off,
	       "firn: otel: %u processes with a thread context, %llu samples in %llu contexts, "
	       "%llu samples folded into 'other' (past %u contexts), %llu torn, %llu unreadable, "
	       "%llu announcements lost",
	       o->told, (unsigned long long)c[FIRN_OTEL_SAMPLES],
	       (unsigned long long)c[FIRN_OTEL_CONTEXTS], (unsigned long long)c[FIRN_OTEL_FOLDED],
	       FIRN_OTEL_CTX_MAX, (unsigned long long)c[FIRN_OTEL_TORN],
	       (unsigned long long)c[FIRN_OTEL_BAD_READ], (unsigned long long)c[FIRN_OTEL_LOST]);
	if (o->let_go) /* a continuous recording's */
		strput(buf, len, &off, ", %llu let go after cuts that did not use them",
		       (unsigned long long)o->let_go);
	strput(buf, len, &off, "\n");
	return off;
}

/* An ended process: its record goes (its contexts' labels stay for its parked samples). */
static void otel_detach(struct runtime *rt, pid_t pid)
{
	struct otelthread *o = (struct otelthread *)rt;
	struct otel_proc *p = pidindex_take(&o->procs, pid);

	if (p && p->pc_ok)
		otelproc_release(&p->pc);
	free(p);
}

/* The walker runs in every recording the runtime is on in. */
static void otel_configure(const struct runtime_host *h, struct sampler_opts *so)
{
	(void)h;
	so->walkers |= 1u << FIRN_OTEL_TAG;
}

/* Its state for a recording. */
static struct runtime *otel_new(const struct runtime_host *h)
{
	struct otelthread *o = calloc(1, sizeof(*o));

	if (!o) {
		errno = ENOMEM;
		return NULL;
	}
	o->h = h;
	pidindex_init(&o->procs);
	return (struct runtime *)o;
}

/* Frees the state: processes, files, contexts. */
static void otel_free(struct runtime *rt)
{
	struct otelthread *o = (struct otelthread *)rt;

	while (o->procs.n)
		otel_detach(rt, o->procs.pids[0]);
	pidindex_release(&o->procs);
	for (size_t i = 0; i < o->nctxs; i++)
		free(o->ctxs[i].strs);
	free(o->ctxs);
	hashtab_release(&o->by_id);
	free(o->files);
	free(o);
}

const struct runtime_ops runtime_otel = {
	.name = "otel", .tag = FIRN_OTEL_TAG, .frames = FRAME_NATIVE,
	.off_help = "do not label samples with OpenTelemetry thread contexts (trace_id, span_id, "
		    "attributes)",
	.configure = otel_configure, .new = otel_new, .free = otel_free, .attach = otel_attach,
	.on_mapping = otel_on_mapping, .on_code = otel_on_code, .poll = otel_poll,
	.labels = otel_labels, .proc_labels = otel_proc_labels, .summary = otel_summary, .detach = otel_detach, .cut = otel_cut,
};
