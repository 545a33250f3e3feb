/* Unit tests for lib/runtimes/runtime_util: a runtime described by a struct runtime_stats_shape
 * gets its stats op (user space's counts, then the walker's by its tag; -EINVAL for another
 * size) and its summary line (nothing when no process ran it, one process or more, the
 * refusals with the last reason, the counters in the line's order, cut at the buffer's end)
 * from the shared ops; a command is found as exec finds it ($PATH, or a path as it is). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "runtimes/runtime_util.h"
#include "source/sample_source.h"

#define TAG 9

struct fake_stats {
	uint64_t processes, refused, named;
	char last_refusal[32];
	uint64_t bpf[3];
};

/* A runtime's state: the head, then its own counts. */
struct fake_rt {
	struct runtime_head head;
	struct fake_stats st;
};

/* The walker's counters: 100 + i for its tag, nothing for another. */
static void f_walker_stats(struct sample_source *s, unsigned tag, uint64_t *out, size_t n)
{
	(void)s;
	for (size_t i = 0; tag == TAG && i < n; i++)
		out[i] = 100 + i;
}

static const struct sample_source_ops f_ops = { .walker_stats = f_walker_stats };
static struct sample_source f_ss = { &f_ops };
static const struct runtime_host f_host = { .ss = &f_ss };

static const struct runtime_stats_shape f_shape = {
	RUNTIME_STATS_SHAPE(struct fake_stats, TAG, 3, refused),
	.name = "fake", .own_off = offsetof(struct fake_rt, st), .refused = "refused",
	.line = "frames %llu: %llu named (%llu lost), names %llu; ",
	.counts = { RUNTIME_BPF(struct fake_stats, 0), RUNTIME_BPF(struct fake_stats, 1),
		    RUNTIME_BPF(struct fake_stats, 2), offsetof(struct fake_stats, named) },
};

/* The stats op: the state's counts copied, the walker's added; another size refused. */
static void test_stats(void **state)
{
	struct fake_rt *r = runtime_state_new(sizeof(*r), &f_host, &f_shape);
	struct fake_stats s;

	(void)state;
	assert_non_null(r);
	assert_ptr_equal(r->head.h, &f_host);
	assert_int_equal(r->st.processes, 0);
	r->st = (struct fake_stats){ .processes = 2, .named = 7, .bpf = { 1, 1, 1 } };
	assert_int_equal(runtime_stats((struct runtime *)r, &s, sizeof(s)), 0);
	assert_int_equal(s.processes, 2);
	assert_int_equal(s.named, 7);
	assert_int_equal(s.bpf[0], 100);
	assert_int_equal(s.bpf[2], 102);
	assert_int_equal(runtime_stats((struct runtime *)r, &s, sizeof(s) - 1), -EINVAL);
	free(r);
}

/* The line: nothing without processes or refusals; counters in order; plural; the reason. */
static void test_summary(void **state)
{
	struct fake_rt *r = runtime_state_new(sizeof(*r), &f_host, &f_shape);
	char buf[256];

	(void)state;
	assert_int_equal(runtime_summary((struct runtime *)r, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	r->st.processes = 1;
	r->st.named = 5;
	runtime_summary((struct runtime *)r, buf, sizeof(buf));
	assert_string_equal(buf, "firn: fake: 1 process, frames 100: 101 named (102 lost), names 5; "
				 "refused 0\n");
	r->st = (struct fake_stats){ .processes = 0, .refused = 3, .last_refusal = "too old" };
	size_t n = runtime_summary((struct runtime *)r, buf, sizeof(buf));
	assert_string_equal(buf, "firn: fake: 0 processes, frames 100: 101 named (102 lost), "
				 "names 0; refused 3: too old\n");
	assert_int_equal(n, strlen(buf));
	assert_int_equal(runtime_summary((struct runtime *)r, buf, 12), 11);
	assert_string_equal(buf, "firn: fake:");
	free(r);
}

/* A runtime's table of processes: records added zeroed but for their pid, found by pid, dropped
 * with the last one taking the slot. */
static void test_procs(void **state)
{
	struct proc { pid_t pid; int v; } *procs = NULL;
	size_t n = 0, cap = 0;

	(void)state;
	assert_null(RUNTIME_PROC_FIND(procs, n, 1));
	for (pid_t pid = 10; pid < 40; pid++) {
		struct proc *p = RUNTIME_PROC_ADD(procs, n, cap, pid);
		assert_non_null(p);
		assert_int_equal(p->pid, pid);
		assert_int_equal(p->v, 0);
		p->v = pid * 2;
	}
	assert_int_equal(n, 30);
	assert_int_equal(RUNTIME_PROC_FIND(procs, n, 17)->v, 34);
	assert_null(RUNTIME_PROC_FIND(procs, n, 40));
	RUNTIME_PROC_DROP(procs, n, RUNTIME_PROC_FIND(procs, n, 17));
	assert_int_equal(n, 29);
	assert_null(RUNTIME_PROC_FIND(procs, n, 17));
	assert_int_equal(RUNTIME_PROC_FIND(procs, n, 39)->v, 78); /* the last, moved */
	RUNTIME_PROC_DROP(procs, n, RUNTIME_PROC_FIND(procs, n, 38)); /* the last itself */
	assert_int_equal(n, 28);
	assert_int_equal(RUNTIME_PROC_FIND(procs, n, 10)->v, 20);
	free(procs);
}

/* A name is looked for in $PATH's folders, in order, executable only; a path is taken as it is. */
static void test_command_file(void **state)
{
	char dir[] = "/tmp/firn-rtutil-XXXXXX", file[4096], path[8192], exe[4200];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(exe, sizeof(exe), "%s/b/tool", dir);
	snprintf(path, sizeof(path), "%s/b", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	int fd = open(exe, O_CREAT | O_WRONLY, 0700);
	assert_true(fd >= 0);
	close(fd);
	snprintf(path, sizeof(path), "::%s/a:%s/b", dir, dir);
	setenv("PATH", path, 1);
	assert_string_equal(runtime_command_file("tool", file, sizeof(file)), exe);
	assert_null(runtime_command_file("nothere", file, sizeof(file)));
	assert_null(runtime_command_file("tool", file, 8)); /* too long for file: none */
	assert_string_equal(runtime_command_file("./x/tool", file, sizeof(file)), "./x/tool");
	unlink(exe);
	snprintf(path, sizeof(path), "%s/b", dir);
	rmdir(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stats),
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_procs),
		cmocka_unit_test(test_command_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
