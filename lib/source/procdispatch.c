/* The process dispatcher: side-band records applied to the table and told to the listeners,
 * the sample source's notices queued and delivered between batches (see procdispatch.h). */
#include "source/procdispatch.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/diag.h"
#include "proc/procevents.h"
#include "source/sampler.h"
#include "base/vec.h"

#define RECORD_BATCH 256
#define SWEEP_AFTER_NS 10000000000ULL   /* ended processes stay in the table 10 s (first samples) */
#define SWEEP_INTERVAL_NS 1000000000ULL
#define LOST_DISTRUST_NS 2000000000ULL  /* after lost records, new processes are read from /proc */
#define EXEC_SPAN_NS 100000000ULL       /* an exec's record and its source report are this close */

/* A queued notice (rec owned): the sample source's, or an exec record of a sampled process
 * (from_records). An exec's time is in addr. */
struct notice {
	enum procdispatch_kind kind;
	pid_t pid;
	bool exec, from_records;
	unsigned tag;
	uint64_t addr;
	void *rec;
	size_t len;
};

struct procdispatch {
	struct proc_source *src; /* NULL: no records (listeners read /proc) */
	bool own_src, read_unknown;
	struct proctab procs;
	struct proc_event *buf;  /* RECORD_BATCH */
	bool reading;            /* procdispatch_read is running (a listener may call it again) */
	bool flushing;           /* procdispatch_flush is running (the outer one delivers all) */
	uint64_t lost_ns;        /* when the kernel last lost records (0: never) */
	uint64_t records_lost, notices_lost, last_sweep_ns;
	uint64_t execs_merged;   /* exec reports the other stream had told already */
	uint64_t records;        /* records applied */
	struct procdispatch_listener *ls;
	size_t nls, capls;
	struct notice *q;        /* queued notices; [qhead, nq) not yet delivered */
	size_t nq, capq, qhead;
};

struct procdispatch *procdispatch_new(struct proc_source *src, bool read_unknown,
				      const char *const *cgroups, int ncgroups)
{
	struct procdispatch *d = calloc(1, sizeof(*d));

	if (!d || !(d->buf = calloc(RECORD_BATCH, sizeof(*d->buf)))) {
		free(d);
		errno = ENOMEM;
		return NULL;
	}
	proctab_init(&d->procs);
	d->read_unknown = read_unknown;
	d->src = src;
	if (!src && (d->src = procevents_kernel_new_cgroups(0, cgroups, ncgroups)))
		d->own_src = true;
	else if (!src)
		diag(DIAG_INFO, "cannot open the kernel's process events: %s; reading /proc instead",
		     strerror(errno));
	return d;
}

/* Frees the rec of the queued notices from i on. */
static void drop_notices(struct procdispatch *d, size_t i)
{
	for (; i < d->nq; i++)
		free(d->q[i].rec);
}

void procdispatch_free(struct procdispatch *d)
{
	if (!d)
		return;
	if (d->own_src)
		proc_source_free(d->src);
	proctab_release(&d->procs);
	drop_notices(d, d->qhead);
	free(d->q);
	free(d->ls);
	free(d->buf);
	free(d);
}

int procdispatch_listen(struct procdispatch *d, const struct procdispatch_listener *l)
{
	if (VEC_GROW(d->ls, d->capls, d->nls + 1))
		return -ENOMEM;
	d->ls[d->nls++] = *l;
	return 0;
}

bool procdispatch_has_records(const struct procdispatch *d)
{
	return d->src != NULL;
}

int procdispatch_fd(const struct procdispatch *d)
{
	return d->src ? proc_source_fd(d->src) : -1;
}

static void enqueue(struct procdispatch *d, const struct notice *n, const void *rec);

/* An exec record of a process the sample source reported: queued as its exec (the first of
 * the two streams to report an exec tells it: see tell_process), and the process's exec
 * marked pending until then, so that listeners leave its old image alone meanwhile. */
static void exec_record(struct procdispatch *d, const struct proc_event *ev)
{
	struct proctab_proc *p = proctab_find(&d->procs, ev->pid);

	if (!p || !p->heard.sampled)
		return; /* the source tells the exec of a target it had not reported yet */
	p->heard.exec_pending = true;
	enqueue(d, &(struct notice){ PD_PROCESS, ev->pid, true, true, 0, ev->time, NULL, 0 }, NULL);
}

/* Applies one record to the table and tells the listeners. */
static int apply(struct procdispatch *d, const struct proc_event *ev)
{
	int pid = proctab_apply(&d->procs, ev, d->read_unknown);

	if (pid < 0)
		return pid;
	d->records++;
	if (ev->kind == PROC_EV_EXEC)
		exec_record(d, ev);
	if (ev->kind == PROC_EV_LOST)
		d->lost_ns = mono_ns(), d->records_lost += ev->lost;
	for (size_t i = 0; i < d->nls; i++) {
		int err = d->ls[i].on_record ? d->ls[i].on_record(d->ls[i].ctx, ev, pid) : 0;
		if (err)
			return err;
	}
	return 0;
}

int procdispatch_read(struct procdispatch *d)
{
	int n = 0, err = 0;

	if (!d->src || d->reading)
		return 0;
	d->reading = true;
	while (!err && (n = proc_source_read(d->src, d->buf, RECORD_BATCH)) > 0)
		for (int i = 0; i < n && !err; i++)
			err = apply(d, &d->buf[i]);
	if (!err && n < 0)
		err = n;
	for (size_t i = 0; i < d->nls && !err; i++)
		err = d->ls[i].on_records_done ? d->ls[i].on_records_done(d->ls[i].ctx) : 0;
	d->reading = false;
	return err;
}

struct proctab_proc *procdispatch_find(const struct procdispatch *d, pid_t pid)
{
	return d->src ? proctab_find(&d->procs, pid) : NULL;
}

const struct procmap *procdispatch_maps(const struct procdispatch *d, pid_t pid)
{
	struct proctab_proc *p = procdispatch_find(d, pid);

	return p && p->image.n ? &p->image : NULL;
}

/* Whether the kernel lost records lately (the table may lack a new process's mappings). */
static bool distrusted(const struct procdispatch *d, uint64_t now_ns)
{
	return d->lost_ns && now_ns - d->lost_ns < LOST_DISTRUST_NS;
}

int procdispatch_learn(struct procdispatch *d, pid_t pid)
{
	struct proctab_proc *p = procdispatch_find(d, pid);
	/* records lost lately: the table may lack this process's mappings, /proc has them */
	bool distrust = distrusted(d, mono_ns()) && (!p || p->read_ns < d->lost_ns);

	if (!d->src || (p && !distrust && (p->image.n || p->execs || p->exit_time)))
		return 0;
	int err = proctab_read(&d->procs, pid);
	return err ? err : 1;
}

bool procdispatch_gone(const struct procdispatch *d, pid_t pid)
{
	const struct proctab_proc *p = procdispatch_find(d, pid);

	return p && p->exit_time && kill(pid, 0) && errno == ESRCH;
}

void procdispatch_sweep(struct procdispatch *d, uint64_t now_ns)
{
	if (!d->src || now_ns - d->last_sweep_ns < SWEEP_INTERVAL_NS)
		return;
	proctab_sweep(&d->procs, now_ns - SWEEP_AFTER_NS);
	d->last_sweep_ns = now_ns;
}

/* Queues a copy of n (rec: its n->len bytes, copied); one that cannot be queued is counted. */
static void enqueue(struct procdispatch *d, const struct notice *n, const void *rec)
{
	struct notice q = *n;

	q.rec = NULL;
	if ((rec && !(q.rec = malloc(q.len))) || VEC_GROW(d->q, d->capq, d->nq + 1)) {
		free(q.rec);
		d->notices_lost++;
		return;
	}
	if (rec)
		memcpy(q.rec, rec, q.len);
	d->q[d->nq++] = q;
}

void procdispatch_notice(struct procdispatch *d, enum procdispatch_kind k, pid_t pid, bool exec,
			 uint64_t addr, unsigned tag, const void *rec, size_t len)
{
	/* an exec without a time of its own happened by now at the latest */
	if (k == PD_PROCESS && exec && !addr)
		addr = mono_ns();
	enqueue(d, &(struct notice){ k, pid, exec, false, tag, addr, NULL, len }, rec);
}

/* ---- the sample source's callbacks: notices queued ---- */

static void notice_process(void *ctx, pid_t pid, bool exec)
{
	procdispatch_notice(ctx, PD_PROCESS, pid, exec, 0, 0, NULL, 0);
}

static void notice_exec(void *ctx, pid_t pid, uint64_t time_ns)
{
	procdispatch_notice(ctx, PD_PROCESS, pid, true, time_ns, 0, NULL, 0);
}

static void notice_exit(void *ctx, pid_t pid)
{
	procdispatch_notice(ctx, PD_EXIT, pid, false, 0, 0, NULL, 0);
}

static void notice_no_table(void *ctx, pid_t pid, uint64_t addr)
{
	procdispatch_notice(ctx, PD_NO_TABLE, pid, false, addr, 0, NULL, 0);
}

static void notice_code(void *ctx, unsigned tag, const void *rec, size_t len)
{
	procdispatch_notice(ctx, PD_CODE, 0, false, 0, tag, rec, len);
}

/* A stack is no lifecycle event: told at once. */
static void tell_stack(void *ctx, pid_t pid, const uint64_t *ips, uint32_t len)
{
	struct procdispatch *d = ctx;

	for (size_t i = 0; i < d->nls; i++)
		if (d->ls[i].on_stack)
			d->ls[i].on_stack(d->ls[i].ctx, pid, ips, len);
}

void procdispatch_source_opts(struct procdispatch *d, struct sampler_opts *so)
{
	so->on_process = notice_process;
	so->on_exec = notice_exec;
	so->on_exit = notice_exit;
	so->on_code = notice_no_table;
	so->on_announce = notice_code;
	so->on_stack = tell_stack;
	so->ctx = d;
}

/* Takes out of the n times in t the earliest (latest: the latest) in [lo, hi]; whether one was. */
static bool take_time(uint64_t *t, uint8_t *n, uint64_t lo, uint64_t hi, bool latest)
{
	int at = -1;

	for (int i = 0; i < *n; i++)
		if (t[i] >= lo && t[i] <= hi && (at < 0 || latest == (t[i] > t[at])))
			at = i;
	if (at < 0)
		return false;
	memmove(&t[at], &t[at + 1], (size_t)(*n - at - 1) * sizeof(*t));
	(*n)--;
	return true;
}

/* Keeps time among the n in t (4 at most: the oldest goes). */
static void keep_time(uint64_t *t, uint8_t *n, uint64_t time)
{
	if (*n == 4) {
		memmove(&t[0], &t[1], 3 * sizeof(*t));
		(*n)--;
	}
	t[(*n)++] = time;
}

/* Whether a process notice is news to the listeners. A first sample always is (the process is
 * sampled from then on). An exec is reported twice, by its side-band record (time Tr) and by
 * the source (time Ts, stamped by its BPF program later in the same exec: Tr <= Ts <= Tr +
 * EXEC_SPAN_NS), and told once, by whichever is delivered first: a report is paired with an
 * unpaired one of the other stream that fits (a record with the earliest source report in
 * [Tr, Tr + span], a source report with the latest record in [Ts - span, Ts]) and dropped;
 * one that finds none is told and waits to be paired. So either report alone (the other lost,
 * or no records at all) tells the exec, and a chain of execs within the span (sh -c 'exec x')
 * is told exec by exec whichever stream comes first. An exec slower than the span is told
 * twice (the listeners' second look finds the same image); one is missed only when both
 * streams lose a report of a chain within the span. */
static bool tell_process(struct procdispatch *d, const struct notice *n)
{
	struct proctab_proc *p = d->src ? proctab_find(&d->procs, n->pid) : NULL;
	struct proctab_heard *h = p ? &p->heard : NULL;
	uint64_t t = n->addr;
	bool paired;

	if (!h)
		return true;
	if (!n->exec) {
		h->sampled = true;
		return true;
	}
	if (n->from_records) {
		h->exec_pending = false;
		if (!(paired = take_time(h->src, &h->nsrc, t, t + EXEC_SPAN_NS, false)))
			keep_time(h->rec, &h->nrec, t);
	} else {
		h->sampled = true;
		uint64_t lo = t > EXEC_SPAN_NS ? t - EXEC_SPAN_NS : 0;
		if (!(paired = take_time(h->rec, &h->nrec, lo, t, true)))
			keep_time(h->src, &h->nsrc, t);
	}
	if (paired)
		d->execs_merged++;
	else
		h->told_exec_ns = t;
	return !paired;
}

/* Tells every listener of one notice. */
static void deliver(struct procdispatch *d, const struct notice *n)
{
	if (n->kind == PD_PROCESS && !tell_process(d, n))
		return;
	for (size_t i = 0; i < d->nls; i++) {
		const struct procdispatch_listener *l = &d->ls[i];
		if (n->kind == PD_PROCESS && l->on_process)
			l->on_process(l->ctx, n->pid, n->exec);
		else if (n->kind == PD_EXIT && l->on_exit)
			l->on_exit(l->ctx, n->pid);
		else if (n->kind == PD_NO_TABLE && l->on_no_table)
			l->on_no_table(l->ctx, n->pid, n->addr);
		else if (n->kind == PD_CODE && l->on_code)
			l->on_code(l->ctx, n->tag, n->rec, n->len);
	}
}

void procdispatch_flush(struct procdispatch *d)
{
	if (d->flushing)
		return;
	d->flushing = true;
	while (d->qhead < d->nq) {
		struct notice n = d->q[d->qhead++]; /* the queue may grow meanwhile */
		deliver(d, &n);
		free(n.rec);
	}
	d->nq = d->qhead = 0;
	d->flushing = false;
}

bool procdispatch_exec_pending(const struct procdispatch *d, pid_t pid)
{
	struct proctab_proc *p = procdispatch_find(d, pid);

	return p && p->heard.exec_pending;
}

bool procdispatch_told(const struct procdispatch *d, pid_t pid)
{
	struct proctab_proc *p = procdispatch_find(d, pid);

	/* heard.sampled is set as the first on_process is delivered (tell_process) */
	return p && p->heard.sampled && !p->heard.exec_pending;
}

uint64_t procdispatch_exec_ns(const struct procdispatch *d, pid_t pid)
{
	struct proctab_proc *p = procdispatch_find(d, pid);

	return p ? p->heard.told_exec_ns : 0;
}

void procdispatch_get_stats(const struct procdispatch *d, struct procdispatch_stats *st)
{
	*st = (struct procdispatch_stats){ d->procs.procs.n, d->procs.proc_reads, d->records_lost,
					   d->notices_lost, d->execs_merged, d->records };
}
