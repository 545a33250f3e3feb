/* /proc/PID/maps parser: one entry per line, paths kept in place in a private copy of the text. */
#include "proc/procmap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "proc/procevents.h"
#include "base/clock.h"
#include "base/vec.h"

/* Parses hex digits at *p (at least one, at most 16) into *v; advances *p. */
static bool parse_hex(char **p, uint64_t *v)
{
	char *s = *p;
	uint64_t x = 0;
	int n = 0;

	for (;; s++, n++) {
		int d;
		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (n == 16)
			return false;
		x = x << 4 | d;
	}
	*p = s;
	*v = x;
	return n > 0;
}

/* Parses decimal digits at *p into *v; advances *p. */
static bool parse_dec(char **p, uint64_t *v)
{
	char *s = *p;
	uint64_t x = 0;

	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++)
		x = x * 10 + (*s - '0');
	*p = s;
	*v = x;
	return true;
}

/* Consumes the character c at *p. */
static bool expect(char **p, char c)
{
	if (**p != c)
		return false;
	(*p)++;
	return true;
}

/* Classifies a path (already without " (deleted)"). */
static enum procmap_kind kind_of_path(const char *path)
{
	if (!*path)
		return PROCMAP_ANON;
	if (path[0] != '[')
		return PROCMAP_FILE;
	if (!strcmp(path, "[vdso]"))
		return PROCMAP_VDSO;
	if (!strcmp(path, "[heap]"))
		return PROCMAP_HEAP;
	if (!strncmp(path, "[stack", 6))
		return PROCMAP_STACK;
	if (!strcmp(path, "[vsyscall]"))
		return PROCMAP_VSYSCALL;
	return PROCMAP_PSEUDO;
}

/* Parses the "rwxp" field at *p into e. */
static bool parse_perms(char **p, struct procmap_entry *e)
{
	char *s = *p;

	if ((s[0] != 'r' && s[0] != '-') || (s[1] != 'w' && s[1] != '-') ||
	    (s[2] != 'x' && s[2] != '-') || (s[3] != 'p' && s[3] != 's'))
		return false;
	e->r = s[0] == 'r';
	e->w = s[1] == 'w';
	e->x = s[2] == 'x';
	e->shared = s[3] == 's';
	*p = s + 4;
	return true;
}

/* Sets e->path from the rest of the line at s (NUL-terminated in place). */
static void parse_path(char *s, struct procmap_entry *e)
{
	static const char deleted[] = " (deleted)";
	size_t n;

	while (*s == ' ' || *s == '\t')
		s++;
	n = strlen(s);
	if (n >= sizeof(deleted) - 1 && !strcmp(s + n - (sizeof(deleted) - 1), deleted)) {
		s[n - (sizeof(deleted) - 1)] = 0;
		e->deleted = true;
	}
	e->path = s;
	e->kind = kind_of_path(s);
}

/* Parses one NUL-terminated maps line into e. */
static bool parse_line(char *s, struct procmap_entry *e)
{
	uint64_t major, minor;

	memset(e, 0, sizeof(*e));
	if (!parse_hex(&s, &e->start) || !expect(&s, '-') || !parse_hex(&s, &e->end) ||
	    !expect(&s, ' ') || !parse_perms(&s, e) || !expect(&s, ' ') ||
	    !parse_hex(&s, &e->offset) || !expect(&s, ' ') || !parse_hex(&s, &major) ||
	    !expect(&s, ':') || !parse_hex(&s, &minor) || !expect(&s, ' ') ||
	    !parse_dec(&s, &e->inode))
		return false;
	if (*s && *s != ' ' && *s != '\t')
		return false;
	if (e->end < e->start)
		return false;
	e->dev_major = major;
	e->dev_minor = minor;
	parse_path(s, e);
	return true;
}

/* Appends a zeroed entry slot; returns it or NULL. */
static struct procmap_entry *push_entry(struct procmap *m)
{
	if (VEC_GROW(m->entries, m->cap, m->n + 1))
		return NULL;
	return &m->entries[m->n++];
}

/* Orders entries by start address. */
static int entry_cmp(const void *a, const void *b)
{
	const struct procmap_entry *x = a, *y = b;

	return CMP3(x->start, y->start);
}

/* Parses the NUL-terminated text in buf, which m takes over. */
static int parse_owned(struct procmap *m, char *buf)
{
	bool sorted = true;
	char *line = buf;

	memset(m, 0, sizeof(*m));
	m->buf = buf;
	while (*line) {
		char *nl = strchr(line, '\n');
		char *next = nl ? nl + 1 : line + strlen(line);
		if (nl)
			*nl = 0;
		if (*line) {
			struct procmap_entry *e = push_entry(m);
			if (!e) {
				procmap_release(m);
				return -ENOMEM;
			}
			if (!parse_line(line, e)) {
				procmap_release(m);
				return -EINVAL;
			}
			sorted = sorted && (m->n < 2 || e[-1].start <= e->start);
		}
		line = next;
	}
	if (!sorted)
		qsort(m->entries, m->n, sizeof(*m->entries), entry_cmp);
	return 0;
}

int procmap_parse(struct procmap *m, const char *text, size_t len)
{
	char *buf = malloc(len + 1);

	memset(m, 0, sizeof(*m));
	if (!buf)
		return -ENOMEM;
	memcpy(buf, text, len);
	buf[len] = 0;
	if (memchr(buf, 0, len)) {
		free(buf);
		return -EINVAL;
	}
	return parse_owned(m, buf);
}

/* Reads all of fd into a NUL-terminated malloc'd buffer; 0 or -errno. */
static int read_all(int fd, char **out)
{
	size_t cap = 0, n = 0;
	char *buf = NULL;

	for (;;) {
		if (VEC_GROW(buf, cap, n + 4096 > 16384 ? n + 4096 : 16384)) { /* a page to read into */
			free(buf);
			return -ENOMEM;
		}
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = -errno;
			free(buf);
			return err;
		}
		if (r == 0)
			break;
		n += r;
	}
	buf[n] = 0;
	*out = buf;
	return 0;
}

int procmap_read(struct procmap *m, pid_t pid)
{
	char path[64], *buf = NULL;
	int fd, err;

	memset(m, 0, sizeof(*m));
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = read_all(fd, &buf);
	close(fd);
	if (err)
		return err == -ESRCH ? -ENOENT : err;
	return parse_owned(m, buf);
}

const struct procmap_entry *procmap_find(const struct procmap *m, uint64_t addr)
{
	size_t lo = UPPER_BOUND(m->entries, m->n, start, addr);

	if (lo == 0 || addr >= m->entries[lo - 1].end)
		return NULL;
	return &m->entries[lo - 1];
}

void procmap_release(struct procmap *m)
{
	for (size_t i = 0; i < m->npaths; i++)
		free(m->paths[i]);
	free(m->paths);
	free(m->entries);
	free(m->buf);
	memset(m, 0, sizeof(*m));
}

/* ---- maps built from mmap records ---- */

void procmap_init(struct procmap *m)
{
	memset(m, 0, sizeof(*m));
}

/* Keeps a copy of path in m; the copy, or NULL on -ENOMEM. */
static char *own_path(struct procmap *m, const char *path)
{
	if (VEC_GROW(m->paths, m->cap_paths, m->npaths + 1))
		return NULL;
	char *copy = strdup(path ? path : "");
	if (copy)
		m->paths[m->npaths++] = copy;
	return copy;
}

/* Appends o to out (n so far), keeping only its parts outside [start, end). */
static size_t keep_outside(struct procmap_entry *out, size_t n, const struct procmap_entry *o,
			   uint64_t start, uint64_t end)
{
	if (o->end <= start || o->start >= end) {
		out[n++] = *o;
		return n;
	}
	if (o->start < start) {
		out[n] = *o;
		out[n++].end = start;
	}
	if (o->end > end) {
		out[n] = *o;
		out[n].offset += end - o->start;
		out[n++].start = end;
	}
	return n;
}

int procmap_add(struct procmap *m, const struct procmap_entry *e)
{
	struct procmap_entry *out = malloc((m->n + 2) * sizeof(*out));
	char *path = out ? own_path(m, e->path) : NULL;
	size_t n = 0, at;

	if (!path) {
		free(out);
		return -ENOMEM;
	}
	/* the parts of the entries outside e, in order (a split entry's left part, then its right
	 * part), then e where it goes among them: nothing left overlaps it */
	for (size_t i = 0; i < m->n; i++)
		n = keep_outside(out, n, &m->entries[i], e->start, e->end);
	for (at = n; at > 0 && out[at - 1].start >= e->start; at--)
		;
	memmove(&out[at + 1], &out[at], (n - at) * sizeof(*out));
	out[at] = *e;
	out[at].path = path;
	free(m->entries);
	m->entries = out;
	m->n = n + 1;
	m->cap = n + 1;
	return 0;
}

/* Whether procmap_copy keeps entry e. */
static bool copy_keeps(const struct procmap_entry *e, bool exec_only)
{
	return e->x || !exec_only;
}

int procmap_copy(struct procmap *dst, const struct procmap *src, bool exec_only)
{
	size_t n = 0, text = 0;

	procmap_init(dst);
	for (size_t i = 0; i < src->n; i++)
		if (copy_keeps(&src->entries[i], exec_only))
			n++, text += strlen(src->entries[i].path ? src->entries[i].path : "") + 1;
	if (!n)
		return 0;
	/* one block for every path (a fork copies its parent's image: two allocations, not one
	 * a mapping), kept as buf; an entry naming the path of the one before shares it */
	dst->entries = malloc(n * sizeof(*dst->entries));
	dst->buf = malloc(text);
	if (!dst->entries || !dst->buf) {
		procmap_release(dst);
		return -ENOMEM;
	}
	dst->cap = n;
	char *at = dst->buf;
	const char *last = NULL;
	for (size_t i = 0; i < src->n; i++) {
		const struct procmap_entry *e = &src->entries[i];
		const char *path = e->path ? e->path : "";
		if (!copy_keeps(e, exec_only))
			continue;
		struct procmap_entry *d = &dst->entries[dst->n];
		*d = *e;
		if (last && !strcmp(last, path)) {
			d->path = last;
		} else {
			size_t len = strlen(path) + 1;
			d->path = last = memcpy(at, path, len);
			at += len;
		}
		dst->n++;
	}
	return 0;
}

struct procmap_entry procmap_entry_of_event(const struct proc_event *ev, char *buf, size_t len)
{
	struct procmap_entry e = {
		.start = ev->start, .end = ev->start + ev->len, .offset = ev->pgoff,
		.inode = ev->ino, .dev_major = ev->maj, .dev_minor = ev->min,
		.ino_generation = ev->ino_generation, .from_record = !ev->build_id_size,
		.r = ev->prot & PROT_READ, .w = ev->prot & PROT_WRITE, .x = ev->prot & PROT_EXEC,
		.shared = ev->flags & MAP_SHARED,
	};

	const char *name = ev->filename && strcmp(ev->filename, "//anon") ? ev->filename : "";
	size_t n = len ? strnlen(name, len - 1) : 0; /* (a copy, not snprintf: one per record) */

	if (len) {
		memcpy(buf, name, n);
		buf[n] = 0;
	}
	parse_path(buf, &e);
	if (e.end < e.start)
		e.end = UINT64_MAX;
	return e;
}

/* ---- the process table ---- */

void proctab_init(struct proctab *t)
{
	memset(t, 0, sizeof(*t));
}

/* Frees one process. */
static void proc_free(struct proctab_proc *p)
{
	if (p) {
		procmap_release(&p->image);
		procmap_release(&p->prev);
	}
	free(p);
}

void proctab_release(struct proctab *t)
{
	for (size_t i = 0; i < t->procs.n; i++)
		proc_free(t->procs.vals[i]);
	pidindex_release(&t->procs);
	memset(t, 0, sizeof(*t));
}

struct proctab_proc *proctab_find(const struct proctab *t, pid_t pid)
{
	return pidindex_get(&t->procs, pid);
}

/* pid's entry with an empty image (a fresh one when pid was known: it was reused); NULL on
 * -ENOMEM. */
static struct proctab_proc *proc_fresh(struct proctab *t, pid_t pid)
{
	struct proctab_proc *p = calloc(1, sizeof(*p));
	void *old;

	if (!p)
		return NULL;
	p->pid = pid;
	if (pidindex_put(&t->procs, pid, p, &old)) {
		free(p);
		return NULL;
	}
	proc_free(old);
	return p;
}

int proctab_read(struct proctab *t, pid_t pid)
{
	struct procmap m, x;
	int err = procmap_read(&m, pid);

	if (err)
		return err;
	t->proc_reads++;
	bool zombie = !m.n;
	err = zombie ? -ESRCH : procmap_copy(&x, &m, true);
	procmap_release(&m);
	if (err)
		return err;
	struct proctab_proc *old = proctab_find(t, pid);
	struct proctab_heard heard = old ? old->heard : (struct proctab_heard){ 0 };
	struct proctab_proc *p = proc_fresh(t, pid);
	if (!p) {
		procmap_release(&x);
		return -ENOMEM;
	}
	p->image = x;
	p->read_ns = mono_ns();
	p->heard = heard; /* the same process: what the dispatcher heard of it stands */
	return 0;
}

/* A new process pid, forked from ppid: a copy of its parent's image. */
static int apply_fork(struct proctab *t, pid_t pid, pid_t ppid, bool read_unknown)
{
	struct proctab_proc *parent = proctab_find(t, ppid);
	struct procmap copy;

	if (!parent && read_unknown && !proctab_read(t, ppid))
		parent = proctab_find(t, ppid);
	procmap_init(&copy);
	if (parent && procmap_copy(&copy, &parent->image, false))
		return -ENOMEM;
	struct proctab_proc *p = proc_fresh(t, pid);
	if (!p) {
		procmap_release(&copy);
		return -ENOMEM;
	}
	p->image = copy;
	return pid;
}

/* An executable mapping of pid. */
static int apply_mmap(struct proctab *t, const struct proc_event *ev, bool read_unknown)
{
	char path[PATH_MAX];
	struct proctab_proc *p = proctab_find(t, ev->pid);

	if (!(ev->prot & PROT_EXEC))
		return 0;
	if (!p && read_unknown && !proctab_read(t, ev->pid))
		p = proctab_find(t, ev->pid);
	if (!p && !(p = proc_fresh(t, ev->pid)))
		return -ENOMEM;
	struct procmap_entry e = procmap_entry_of_event(ev, path, sizeof(path));
	p->exit_time = 0;
	return procmap_add(&p->image, &e) ? -ENOMEM : ev->pid;
}

int proctab_apply(struct proctab *t, const struct proc_event *ev, bool read_unknown)
{
	struct proctab_proc *p;

	switch (ev->kind) {
	case PROC_EV_EXEC:
		if (!(p = proctab_find(t, ev->pid)) && !(p = proc_fresh(t, ev->pid)))
			return -ENOMEM;
		procmap_release(&p->prev);
		p->prev = p->image;
		procmap_init(&p->image);
		p->execs++;
		p->exec_time = ev->time;
		p->exit_time = 0;
		p->read_ns = 0;
		return ev->pid;
	case PROC_EV_MMAP:
		return apply_mmap(t, ev, read_unknown);
	case PROC_EV_FORK:
		return ev->tid == ev->pid ? apply_fork(t, ev->pid, ev->ppid, read_unknown) : 0;
	case PROC_EV_EXIT:
		if (ev->tid == ev->pid && (p = proctab_find(t, ev->pid)))
			p->exit_time = ev->time ? ev->time : 1;
		return 0;
	case PROC_EV_LOST:
		t->lost += ev->lost;
		return 0;
	default:
		return 0;
	}
}

/* Frees a process that ended before *(uint64_t *)ctx. */
static bool alive_since(void *ctx, void *v)
{
	struct proctab_proc *p = v;

	if (p->exit_time && p->exit_time < *(const uint64_t *)ctx) {
		proc_free(p);
		return false;
	}
	return true;
}

size_t proctab_sweep(struct proctab *t, uint64_t before)
{
	return pidindex_filter(&t->procs, alive_since, &before);
}

bool procmap_runs_jit(const struct procmap *m)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->entries[i].x && (m->entries[i].kind == PROCMAP_ANON ||
					!strncmp(m->entries[i].path, "[anon:", 6)))
			return true;
	return false;
}
