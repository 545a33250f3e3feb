/* Unit tests (no root) of the process model fed by process events: lib/proc/procevents (the record
 * parser and the fake source) into lib/proc/procmap's process table into the symbolizer's snapshots
 * (symbolizer_set_maps). The mappings are this test's own (its executable and libc), replayed as
 * the kernel's mmap records for a made-up pid that never lived: files are found by path and
 * checked by inode, as for a process that has exited. */
#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "proc/procevents.h"
#include "symbolize/intern.h"
#include "proc/procmap.h"
#include "symbolize/symbolize.h"

#define PID 4000000 /* above pid_max: no such process */
#define MS 1000000ULL

__attribute__((noinline)) int procevents_test_target(int x)
{
	return x * 3 + 1;
}

/* The mmap event of this process's executable mapping that contains addr (its filename in one
 * of 8 buffers used in turn: a test holds a few events at once). */
static struct proc_event mmap_of(pid_t pid, uint64_t addr, uint64_t time)
{
	static char paths[8][PATH_MAX];
	static unsigned next;
	char *path = paths[next++ % 8];
	struct procmap m;
	const struct procmap_entry *e;

	assert_int_equal(procmap_read(&m, getpid()), 0);
	assert_non_null(e = procmap_find(&m, addr));
	snprintf(path, PATH_MAX, "%s", e->path);
	struct proc_event ev = {
		.kind = PROC_EV_MMAP, .pid = pid, .tid = pid, .time = time, .start = e->start,
		.len = e->end - e->start, .pgoff = e->offset, .maj = e->dev_major,
		.min = e->dev_minor, .ino = e->inode, .prot = PROT_READ | PROT_EXEC,
		.flags = MAP_PRIVATE, .filename = path,
	};
	procmap_release(&m);
	return ev;
}

static struct proc_event task(enum proc_event_kind kind, pid_t pid, pid_t tid, pid_t ppid,
			      uint64_t time)
{
	return (struct proc_event){ .kind = kind, .pid = pid, .tid = tid, .ppid = ppid,
				    .ptid = ppid, .time = time };
}

static struct proc_event exec_of(pid_t pid, uint64_t time)
{
	struct proc_event ev = task(PROC_EV_EXEC, pid, pid, 0, time);

	strcpy(ev.comm, "prog");
	return ev;
}

/* Replays evs through a fake source (batch events per read) into t. */
static void replay(struct proctab *t, const struct proc_event *evs, size_t n, int batch)
{
	struct proc_source *src = procevents_fake_new(evs, n, batch);
	struct proc_event buf[8];
	int got;

	assert_non_null(src);
	while ((got = proc_source_read(src, buf, 8)) > 0)
		for (int i = 0; i < got; i++)
			assert_true(proctab_apply(t, &buf[i], false) >= 0);
	assert_int_equal(got, 0);
	proc_source_free(src);
}

/* The outermost function name of pid's address addr through a snapshot of the table's image. */
static const char *name_at(struct symbolizer *s, struct intern *in, struct profile *p, pid_t pid,
			   uint64_t addr)
{
	int64_t id = intern_user(in, s, p, pid, addr, false);
	const struct profile_location *l;

	assert_true(id > 0);
	l = &p->locations[id - 1];
	if (!l->nlines)
		return "[unknown]";
	return profile_str(p, p->functions[l->lines[l->nlines - 1].function_id - 1].name);
}

/* A process that forks, execs, maps and exits within 1 ms is whole in the table, and stays
 * there (for its first samples) until a sweep after its exit. */
static void test_exec_then_exit(void **state)
{
	uint64_t self = (uintptr_t)procevents_test_target;
	struct proc_event evs[] = {
		task(PROC_EV_FORK, PID, PID, 1, 10 * MS), exec_of(PID, 10 * MS + 100),
		mmap_of(PID, self, 10 * MS + 200), task(PROC_EV_EXIT, PID, PID, 1, 10 * MS + 900),
	};
	struct proctab t;
	struct proctab_proc *p;

	proctab_init(&t);
	replay(&t, evs, 4, 1);
	assert_non_null(p = proctab_find(&t, PID));
	assert_int_equal(p->image.n, 1);
	assert_int_equal(p->execs, 1);
	assert_int_equal(p->exit_time, 10 * MS + 900);
	assert_non_null(procmap_find(&p->image, self));
	assert_int_equal(proctab_sweep(&t, 10 * MS + 900), 0);
	assert_int_equal(proctab_sweep(&t, 11 * MS), 1);
	assert_null(proctab_find(&t, PID));
	proctab_release(&t);
}

/* An exec empties the image (the old one kept as prev); a fork copies its parent's. */
static void test_exec_replaces_image(void **state)
{
	uint64_t self = (uintptr_t)procevents_test_target, libc = (uintptr_t)abort;
	struct proc_event evs[] = {
		exec_of(PID, 1), mmap_of(PID, self, 2), mmap_of(PID, libc, 3),
		task(PROC_EV_FORK, PID + 1, PID + 1, PID, 4), exec_of(PID + 1, 5),
		mmap_of(PID + 1, libc, 6),
	};
	struct proctab t;
	struct proctab_proc *p;

	proctab_init(&t);
	replay(&t, evs, 6, 0);
	assert_non_null(p = proctab_find(&t, PID + 1));
	assert_int_equal(p->image.n, 1);
	assert_null(procmap_find(&p->image, self));
	assert_non_null(procmap_find(&p->image, libc));
	assert_int_equal(p->prev.n, 2); /* the parent's, copied at the fork */
	assert_non_null(procmap_find(&p->prev, self));
	assert_int_equal(proctab_find(&t, PID)->image.n, 2);
	proctab_release(&t);
}

/* A pid reused by a new process starts from its own parent's image, not the old process's. */
static void test_pid_reuse(void **state)
{
	uint64_t self = (uintptr_t)procevents_test_target, libc = (uintptr_t)abort;
	struct proc_event evs[] = {
		exec_of(PID + 1, 1), mmap_of(PID + 1, self, 2), exec_of(PID + 2, 3),
		mmap_of(PID + 2, libc, 4), task(PROC_EV_FORK, PID, PID, PID + 1, 5),
		task(PROC_EV_EXIT, PID, PID, PID + 1, 6), task(PROC_EV_FORK, PID, PID, PID + 2, 7),
	};
	struct proctab t;
	struct proctab_proc *p;

	proctab_init(&t);
	replay(&t, evs, 7, 3);
	assert_non_null(p = proctab_find(&t, PID));
	assert_int_equal(p->exit_time, 0);
	assert_int_equal(p->image.n, 1);
	assert_non_null(procmap_find(&p->image, libc));
	assert_null(procmap_find(&p->image, self));
	proctab_release(&t);
}

/* A thread's fork and exit change nothing; the process ends with its own exit. */
static void test_thread_exits_first(void **state)
{
	uint64_t self = (uintptr_t)procevents_test_target;
	struct proc_event evs[] = {
		exec_of(PID, 1), mmap_of(PID, self, 2), task(PROC_EV_FORK, PID, PID + 1, PID, 3),
		task(PROC_EV_EXIT, PID, PID + 1, PID, 4),
	};
	struct proctab t;
	struct proctab_proc *p;

	proctab_init(&t);
	replay(&t, evs, 4, 0);
	assert_non_null(p = proctab_find(&t, PID));
	assert_int_equal(p->exit_time, 0);
	assert_int_equal(p->image.n, 1);
	assert_null(proctab_find(&t, PID + 1));
	struct proc_event last = task(PROC_EV_EXIT, PID, PID, 1, 5);
	assert_int_equal(proctab_apply(&t, &last, false), 0);
	assert_int_equal(p->exit_time, 5);
	proctab_release(&t);
}

/* A library mapped after a process's first snapshot: its address is unknown in that snapshot
 * and named once the snapshot is made again from the table (the file found by path and inode:
 * the process is gone). Mappings that stay keep their file. */
static void test_mmap_after_first_sample(void **state)
{
	uint64_t self = (uintptr_t)procevents_test_target, libc = (uintptr_t)abort;
	struct proc_event first[] = { exec_of(PID, 1), mmap_of(PID, self, 2) };
	struct proc_event later = mmap_of(PID, libc, 3);
	struct symbolizer *s = symbolizer_new();
	struct intern in;
	struct proctab t;
	struct profile p;

	assert_non_null(s);
	intern_init(&in);
	assert_int_equal(profile_init(&p), 0);
	proctab_init(&t);
	replay(&t, first, 2, 0);
	assert_int_equal(symbolizer_set_maps(s, PID, &proctab_find(&t, PID)->image), 0);
	assert_string_equal(name_at(s, &in, &p, PID, self), "procevents_test_target");
	assert_string_equal(name_at(s, &in, &p, PID, libc), "[unknown]");
	assert_int_equal(proctab_apply(&t, &later, false), PID);
	assert_int_equal(symbolizer_set_maps(s, PID, &proctab_find(&t, PID)->image), 0);
	assert_string_equal(name_at(s, &in, &p, PID, libc + 1), "abort");
	assert_string_equal(name_at(s, &in, &p, PID, self + 1), "procevents_test_target");
	proctab_release(&t);
	intern_release(&in);
	profile_release(&p);
	symbolizer_free(s);
}

/* Appends a record (header, body, sample_id) to buf at *off. */
static void put_record(uint8_t *buf, size_t *off, uint32_t type, uint16_t misc, const void *body,
		       size_t len)
{
	struct perf_event_header h = { type, misc, (uint16_t)(sizeof(h) + len + 16) };
	uint32_t id[4] = { 7, 8, 0x1234, 0 }; /* pid, tid, time (low, high) */

	memcpy(buf + *off, &h, sizeof(h));
	memcpy(buf + *off + sizeof(h), body, len);
	memcpy(buf + *off + sizeof(h) + len, id, sizeof(id));
	*off += h.size;
}

/* The parser: an exec (COMM with the exec flag), an mmap2 with its filename, a fork; a record
 * cut short or with an unterminated name is refused; other records are skipped. */
static void test_parse(void **state)
{
	uint8_t buf[512];
	char name[64];
	size_t off = 0;
	struct proc_event ev;
	struct { uint32_t pid, tid; char comm[8]; } comm = { 7, 7, "prog" };
	struct __attribute__((packed)) {
		uint32_t pid, tid; uint64_t addr, len, pgoff; uint32_t maj, min;
		uint64_t ino, gen; uint32_t prot, flags; char name[16];
	} mm = { 7, 7, 0x1000, 0x2000, 0x3000, 8, 1, 42, 0, 5, 2, "/bin/prog" };
	struct { uint32_t pid, ppid, tid, ptid; uint64_t time; } fork = { 9, 7, 9, 7, 55 };

	put_record(buf, &off, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, &comm, sizeof(comm));
	assert_int_equal(procevents_parse(buf, off, &ev, name, sizeof(name)), 1);
	assert_int_equal(ev.kind, PROC_EV_EXEC);
	assert_string_equal(ev.comm, "prog");
	assert_int_equal(ev.time, 0x1234);
	off = 0;
	put_record(buf, &off, PERF_RECORD_MMAP2, 0, &mm, sizeof(mm));
	assert_int_equal(procevents_parse(buf, off, &ev, name, sizeof(name)), 1);
	assert_int_equal(ev.kind, PROC_EV_MMAP);
	assert_int_equal(ev.start, 0x1000);
	assert_int_equal(ev.pgoff, 0x3000);
	assert_int_equal(ev.ino, 42);
	assert_string_equal(ev.filename, "/bin/prog");
	assert_int_equal(procevents_parse(buf, off - 1, &ev, name, sizeof(name)), -EINVAL);
	memset(mm.name, 'x', sizeof(mm.name));
	off = 0;
	put_record(buf, &off, PERF_RECORD_MMAP2, 0, &mm, sizeof(mm));
	assert_int_equal(procevents_parse(buf, off, &ev, name, sizeof(name)), -EINVAL);
	off = 0;
	put_record(buf, &off, PERF_RECORD_FORK, 0, &fork, sizeof(fork));
	assert_int_equal(procevents_parse(buf, off, &ev, name, sizeof(name)), 1);
	assert_int_equal(ev.kind, PROC_EV_FORK);
	assert_int_equal(ev.pid, 9);
	assert_int_equal(ev.ppid, 7);
	assert_int_equal(ev.time, 55);
	off = 0;
	put_record(buf, &off, PERF_RECORD_SAMPLE, 0, &fork, sizeof(fork));
	assert_int_equal(procevents_parse(buf, off, &ev, name, sizeof(name)), 0);
}

/* Many processes met in any pid order, a third of them swept: each other one is found, and
 * exactly those (the table's pid index follows its inserts and sweeps). */
static void test_many_pids(void **state)
{
	enum { N = 1500 };
	struct proctab t;

	(void)state;
	proctab_init(&t);
	for (int i = 0; i < N; i++) { /* pids 1000..1000+N-1, in a scrambled order */
		pid_t pid = 1000 + (pid_t)((i * 7919) % N);
		struct proc_event f = task(PROC_EV_FORK, pid, pid, 1, MS);
		assert_true(proctab_apply(&t, &f, false) == pid);
		if (pid % 3 == 0) {
			struct proc_event x = task(PROC_EV_EXIT, pid, pid, 1, 2 * MS);
			assert_int_equal(proctab_apply(&t, &x, false), 0);
		}
	}
	assert_int_equal(proctab_sweep(&t, 3 * MS), (N + 2) / 3);
	for (pid_t pid = 990; pid < 1000 + N + 10; pid++) {
		bool known = pid >= 1000 && pid < 1000 + N && pid % 3;
		struct proctab_proc *p = proctab_find(&t, pid);
		assert_true(known ? p && p->pid == pid : !p);
	}
	proctab_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec_then_exit),
		cmocka_unit_test(test_exec_replaces_image),
		cmocka_unit_test(test_pid_reuse),
		cmocka_unit_test(test_thread_exits_first),
		cmocka_unit_test(test_mmap_after_first_sample),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_many_pids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
