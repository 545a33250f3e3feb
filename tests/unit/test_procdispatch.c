/* Unit tests (no root) of the process dispatcher: side-band records update the table and are
 * told to the listeners as they are read; the sample source's notices wait in a queue until a
 * flush, are delivered in order to every listener in the order they were added (a notice queued
 * during a flush in the same flush), and an announcement's bytes are the dispatcher's copy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "source/procdispatch.h"
#include "proc/procevents.h"
#include "source/sampler.h"

#define PID 4000000 /* above pid_max: no such process */

/* What the listeners heard, as one line of text: "A:process 7 exec;B:..." */
struct heard {
	char log[1024];
	struct procdispatch *d;
	bool requeue; /* listener A queues an exit notice at the first process it hears */
};

static void note(struct heard *h, const char *who, const char *what, pid_t pid)
{
	size_t n = strlen(h->log);

	snprintf(h->log + n, sizeof(h->log) - n, "%s:%s %d;", who, what, (int)pid);
}

static int a_record(void *ctx, const struct proc_event *ev, pid_t pid)
{
	note(ctx, "A", ev->kind == PROC_EV_EXEC ? "exec-record" : "record", pid);
	return 0;
}

static void a_process(void *ctx, pid_t pid, bool exec)
{
	struct heard *h = ctx;

	note(h, "A", exec ? "exec" : "process", pid);
	if (h->requeue) {
		h->requeue = false;
		procdispatch_notice(h->d, PD_EXIT, pid, false, 0, 0, NULL, 0);
	}
}

static void a_exit(void *ctx, pid_t pid)
{
	note(ctx, "A", "exit", pid);
}

static void b_process(void *ctx, pid_t pid, bool exec)
{
	note(ctx, "B", "process", pid);
}

static void b_code(void *ctx, unsigned tag, const void *rec, size_t len)
{
	char what[64];

	snprintf(what, sizeof(what), "code-%u-%.*s", tag, (int)len, (const char *)rec);
	note(ctx, "B", what, 0);
}

static struct procdispatch *dispatcher(struct proc_source **src, struct heard *h)
{
	struct procdispatch *d;
	struct procdispatch_listener a = { .on_record = a_record, .on_process = a_process,
					   .on_exit = a_exit, .ctx = h };
	struct procdispatch_listener b = { .on_process = b_process, .on_code = b_code, .ctx = h };

	assert_non_null(*src = procevents_fake_new(NULL, 0, 0));
	assert_non_null(d = procdispatch_new(*src, false, NULL, 0));
	assert_int_equal(procdispatch_listen(d, &a), 0);
	assert_int_equal(procdispatch_listen(d, &b), 0);
	h->d = d;
	return d;
}

/* Records: applied to the table and told at once; the table has the mapping. */
static void test_records(void **state)
{
	struct heard h = { "" };
	struct proc_source *src;
	struct procdispatch *d = dispatcher(&src, &h);

	(void)state;
	assert_true(procdispatch_has_records(d));
	assert_int_equal(procevents_fake_add(src, &(struct proc_event){ .kind = PROC_EV_EXEC,
		.pid = PID, .tid = PID, .time = 1 }), 0);
	assert_int_equal(procevents_fake_add(src, &(struct proc_event){ .kind = PROC_EV_MMAP,
		.pid = PID, .tid = PID, .start = 0x400000, .len = 0x1000, .prot = PROT_READ | PROT_EXEC,
		.flags = MAP_PRIVATE, .filename = "/bin/x", .time = 2 }), 0);
	assert_int_equal(procdispatch_read(d), 0);
	assert_string_equal(h.log, "A:exec-record " "4000000;A:record 4000000;");
	const struct procmap *m = procdispatch_maps(d, PID);
	assert_non_null(m);
	assert_int_equal(m->n, 1);
	assert_null(procdispatch_maps(d, PID + 1));
	procdispatch_free(d);
	proc_source_free(src);
}

/* A live process older than the records (this one) is read from /proc once, whichever listener
 * asks first; one the records know with an image, or one that ended, is not read. */
static void test_learn_once(void **state)
{
	struct heard h = { "" };
	struct proc_source *src;
	struct procdispatch *d = dispatcher(&src, &h);
	pid_t self = getpid();

	(void)state;
	assert_null(procdispatch_maps(d, self));
	assert_int_equal(procdispatch_learn(d, self), 1);
	const struct procmap *m = procdispatch_maps(d, self);
	assert_non_null(m);
	assert_true(m->n > 0);
	assert_true(procdispatch_find(d, self)->read_ns > 0);
	assert_int_equal(procdispatch_learn(d, self), 0); /* the next listener: no second read */
	assert_int_equal(procevents_fake_add(src, &(struct proc_event){ .kind = PROC_EV_EXEC,
		.pid = self, .tid = self, .time = 1 }), 0);
	assert_int_equal(procdispatch_read(d), 0);
	assert_int_equal(procdispatch_find(d, self)->read_ns, 0); /* its image now from records */
	assert_int_equal(procdispatch_learn(d, self), 0);
	assert_int_equal(procevents_fake_add(src, &(struct proc_event){ .kind = PROC_EV_FORK,
		.pid = PID, .ppid = self, .tid = PID, .time = 2 }), 0);
	assert_int_equal(procevents_fake_add(src, &(struct proc_event){ .kind = PROC_EV_EXIT,
		.pid = PID, .ppid = self, .tid = PID, .time = 3 }), 0);
	assert_int_equal(procdispatch_read(d), 0);
	assert_int_equal(procdispatch_learn(d, PID), 0); /* ended: no read */
	assert_int_equal(procdispatch_learn(d, PID + 1), -ENOENT); /* unknown, no such process */
	procdispatch_free(d);
	proc_source_free(src);
}

/* Notices wait for the flush, then go in order to A then B; a notice queued during the flush
 * comes in it; an announcement is a copy (the caller's buffer changed meanwhile). */
static void test_notices_queued(void **state)
{
	struct heard h = { "", NULL, true };
	struct proc_source *src;
	struct procdispatch *d = dispatcher(&src, &h);
	struct sampler_opts so = { 0 };
	char rec[8] = "abc";

	(void)state;
	procdispatch_source_opts(d, &so);
	so.on_process(so.ctx, PID, false);
	so.on_announce(so.ctx, 1, rec, 3);
	strcpy(rec, "zzz");
	so.on_process(so.ctx, PID + 1, true);
	assert_string_equal(h.log, ""); /* nothing before the flush */
	procdispatch_flush(d);
	assert_string_equal(h.log, "A:process 4000000;B:process 4000000;B:code-1-abc 0;"
			    "A:exec 4000001;B:process 4000001;A:exit 4000000;");
	procdispatch_flush(d);
	struct procdispatch_stats st;
	procdispatch_get_stats(d, &st);
	assert_int_equal(st.notices_lost, 0);
	procdispatch_free(d);
	proc_source_free(src);
}

#define MS 1000000ULL

/* How many times s occurs in log. */
static int count(const char *log, const char *s)
{
	int n = 0;

	for (const char *p = log; (p = strstr(p, s)); p += strlen(s))
		n++;
	return n;
}

/* An exec record of pid at time t, read. */
static void exec_record_at(struct procdispatch *d, struct proc_source *src, pid_t pid, uint64_t t)
{
	assert_int_equal(procevents_fake_add(src, &(struct proc_event){ .kind = PROC_EV_EXEC,
		.pid = pid, .tid = pid, .time = t }), 0);
	assert_int_equal(procdispatch_read(d), 0);
}

/* The two streams merge: each exec of a sampled process is reported by its record and by the
 * source, and told once, by whichever comes first (their times tell execs apart); an exec one of
 * them lost is told by the other; a process the source never reported hears of no exec; an exec
 * record is pending (the listeners' view of the process is the old image) until it is told, and
 * a process counts as told (procdispatch_told) from its first delivered notice, except then. */
static void test_exec_told_once(void **state)
{
	struct heard h = { "" };
	struct proc_source *src;
	struct procdispatch *d = dispatcher(&src, &h);
	struct sampler_opts so = { 0 };
	struct procdispatch_stats st;

	(void)state;
	procdispatch_source_opts(d, &so);
	assert_non_null(so.on_exec);
	exec_record_at(d, src, PID, 10 * MS); /* before the process was sampled: the table's only */
	so.on_process(so.ctx, PID, false);
	assert_false(procdispatch_told(d, PID)); /* queued, not told yet */
	procdispatch_flush(d);
	assert_string_equal(h.log, "A:exec-record 4000000;A:process 4000000;B:process 4000000;");
	assert_true(procdispatch_told(d, PID));
	/* exec 1: the record first, then the source's report of the same exec */
	h.log[0] = 0;
	exec_record_at(d, src, PID, 1000 * MS);
	assert_true(procdispatch_exec_pending(d, PID));
	assert_false(procdispatch_told(d, PID)); /* its new image not told: mmaps wait for the exec */
	so.on_exec(so.ctx, PID, 1000 * MS + 40000);
	procdispatch_flush(d);
	assert_int_equal(count(h.log, "A:exec 4000000;"), 1);
	assert_false(procdispatch_exec_pending(d, PID));
	assert_true(procdispatch_told(d, PID));
	assert_int_equal(procdispatch_exec_ns(d, PID), 1000 * MS);
	/* exec 2: the source first, its record after */
	h.log[0] = 0;
	so.on_exec(so.ctx, PID, 3000 * MS + 90000);
	procdispatch_flush(d);
	exec_record_at(d, src, PID, 3000 * MS);
	procdispatch_flush(d);
	assert_int_equal(count(h.log, "A:exec 4000000;"), 1);
	assert_int_equal(procdispatch_exec_ns(d, PID), 3000 * MS + 90000);
	/* exec 3: the source's report lost; exec 4: the record lost */
	h.log[0] = 0;
	exec_record_at(d, src, PID, 4000 * MS);
	procdispatch_flush(d);
	so.on_exec(so.ctx, PID, 6000 * MS);
	procdispatch_flush(d);
	assert_int_equal(count(h.log, "A:exec 4000000;"), 2);
	/* exec 5 and 6 in one batch, both streams, the source's reports queued first */
	h.log[0] = 0;
	so.on_exec(so.ctx, PID, 7000 * MS + 50000);
	so.on_exec(so.ctx, PID, 8000 * MS + 50000);
	exec_record_at(d, src, PID, 7000 * MS);
	exec_record_at(d, src, PID, 8000 * MS);
	procdispatch_flush(d);
	assert_int_equal(count(h.log, "A:exec 4000000;"), 2);
	/* a process the source never reported */
	h.log[0] = 0;
	exec_record_at(d, src, PID + 5, 9000 * MS);
	procdispatch_flush(d);
	assert_int_equal(count(h.log, "A:exec "), 0);
	procdispatch_get_stats(d, &st);
	assert_int_equal(st.execs_merged, 4);
	procdispatch_free(d);
	proc_source_free(src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_notices_queued),
		cmocka_unit_test(test_learn_once),
		cmocka_unit_test(test_exec_told_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
