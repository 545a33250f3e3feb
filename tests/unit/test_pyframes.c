/* Unit tests for Python frames (lib/runtimes/pyframes): the payload of a tagged Python frame, the unwinder's
 * notices of code objects (names that need no process, ids of a reused address), what the BPF
 * unwinder is told of a live CPython, and frames resolved after their process has ended, from
 * the code objects read while it lived (tests/fixtures/pystack.py under Debian's python3.11). */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <linux/types.h>

#include "../../bpf/firn.h"
#include "runtimes/pyframes.h"
#include "runtimes/pyruntime.h"

#define PYTHON "/usr/bin/python3.11"

static struct firn_py_proc told;
static int ntold;

static int on_set(void *ctx, pid_t pid, const struct firn_py_proc *p)
{
	(void)ctx, (void)pid;
	if (p)
		told = *p, ntold++;
	return 0;
}

/* A code object id and an offset survive the payload; the value is tagged Python. */
static void test_payload(void **state)
{
	(void)state;
	uint64_t id = 0x12345678aULL, v = FIRN_FRAME(FIRN_FRAME_KIND_PYTHON, FIRN_PY_PAYLOAD(id, 77));

	assert_int_equal(resolver_kind_of(v), FIRN_FRAME_KIND_PYTHON);
	assert_true(FIRN_PY_ID(resolver_payload(v)) == id);
	assert_int_equal(FIRN_PY_UNITS(resolver_payload(v)), 77);
	v = FIRN_FRAME(FIRN_FRAME_KIND_PYTHON, FIRN_PY_PAYLOAD((1ULL << 44) - 1, FIRN_PY_NO_OFFSET));
	assert_true(FIRN_PY_ID(resolver_payload(v)) == (1ULL << 44) - 1);
	assert_true(FIRN_PY_UNITS(resolver_payload(v)) == FIRN_PY_NO_OFFSET);
}

/* A notice of the unwinder (compact ASCII strings: state bits compact and ascii set). */
static struct firn_py_code_event notice(pid_t pid, uint64_t code, uint64_t id, const char *name,
					const char *file, int first)
{
	struct firn_py_code_event e = { .type = FIRN_EV_PY_CODE, .pid = (__u32)pid, .code = code,
					.id = id, .firstlineno = first };

	if (name)
		e.name_state = 3 << 5, e.name_len = strlen(name), memcpy(e.name, name, e.name_len);
	if (file)
		e.file_state = 3 << 5, e.file_len = strlen(file), memcpy(e.file, file, e.file_len);
	return e;
}

/* Names copied by the unwinder resolve with no process at all: two ids of one address (freed
 * and reused) are two functions; a string that was not whole is not taken; id 0 is the root of a
 * stack cut short. */
static void test_notices(void **state)
{
	(void)state;
	struct pyframes *py = pyframes_new(on_set, NULL);
	struct frame_resolver r = pyframes_resolver(py);
	struct resolved_frame out[2];
	struct firn_py_code_event a = notice(999999, 0x7f0000001000ULL, 5, "alpha", "gen.py", 1);
	struct firn_py_code_event b = notice(999999, 0x7f0000001000ULL, 6, "beta", "gen.py", 1);
	struct firn_py_code_event c = notice(999999, 0x7f0000002000ULL, 7, "gamma", "gen.py", 3);

	c.name_len = FIRN_PY_NAME_LEN; /* cut: not the whole name */
	assert_int_equal(pyframes_code_event(py, &a), 0);
	assert_int_equal(pyframes_code_event(py, &b), 0);
	assert_int_equal(pyframes_code_event(py, &c), 0);
	uint64_t va = FIRN_FRAME(FIRN_FRAME_KIND_PYTHON, FIRN_PY_PAYLOAD(5, 3));
	uint64_t vb = FIRN_FRAME(FIRN_FRAME_KIND_PYTHON, FIRN_PY_PAYLOAD(6, 3));
	uint64_t vc = FIRN_FRAME(FIRN_FRAME_KIND_PYTHON, FIRN_PY_PAYLOAD(7, 3));
	uint64_t vt = FIRN_FRAME(FIRN_FRAME_KIND_PYTHON, FIRN_PY_TRUNCATED_FRAME);
	assert_int_equal(r.resolve(r.ctx, 999999, va, out, 2), 1);
	assert_string_equal(out[0].name, "alpha");
	assert_string_equal(out[0].file, "gen.py");
	assert_int_equal(out[0].line, 1);
	assert_int_equal(r.resolve(r.ctx, 999999, vb, out, 2), 1);
	assert_string_equal(out[0].name, "beta");
	assert_int_equal(r.resolve(r.ctx, 999999, vc, out, 2), 0);
	assert_int_equal(r.resolve(r.ctx, 999998, va, out, 2), 0);
	assert_int_equal(r.resolve(r.ctx, 999999, vt, out, 2), 1);
	assert_string_equal(out[0].name, "[truncated]");
	pyframes_free(py);
}

/* Starts pystack.py under PYTHON and waits for its "ready" line: its pid, or -1. */
static pid_t spawn(void)
{
	const char *root = getenv("ROOT");
	char path[PATH_MAX], buf[16] = "";
	int fds[2];
	pid_t pid;

	snprintf(path, sizeof(path), "%s/tests/fixtures/pystack.py", root ? root : ".");
	if (pipe(fds))
		return -1;
	if ((pid = fork()) == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(fds[1], 1);
		close(fds[0]), close(fds[1]);
		execl(PYTHON, PYTHON, path, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	struct pollfd p = { .fd = fds[0], .events = POLLIN };
	if (pid < 0 || poll(&p, 1, 20000) != 1 || read(fds[0], buf, sizeof(buf) - 1) <= 0 ||
	    strncmp(buf, "ready", 5)) {
		if (pid > 0)
			kill(pid, SIGKILL), waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(fds[0]);
	return pid;
}

/* The innermost frame of the first thread with one. */
static int first_frame(const struct pythread *t, void *arg)
{
	if (!t->nframes)
		return 0;
	*(struct pyframe_raw *)arg = t->frames[0];
	return 1;
}

/* The unwinder is told where the interpreter is; a frame noted while the process lived resolves
 * after it ended (name, file, line as pycode_resolve read them), another offset of the same code
 * object too (its line table was kept); an unknown process's frame does not. */
static void test_after_exit(void **state)
{
	(void)state;
	struct pyruntime rt;
	struct pyframe want;
	struct pyframe_raw fr = { 0, -1 };
	struct resolved_frame out[4];
	pid_t pid;

	if (access(PYTHON, X_OK)) {
		print_message("skipped: %s is not installed\n", PYTHON);
		skip();
	}
	assert_true((pid = spawn()) > 0);
	struct pyframes *py = pyframes_new(on_set, NULL);
	assert_non_null(py);
	pyframes_add_process(py, pid, false, 0);
	assert_int_equal(ntold, 1);
	assert_int_equal(told.minor, 11);
	assert_int_equal(pyruntime_find(pid, &rt), 0);
	assert_true(told.runtime == rt.runtime_addr && told.eval_start == rt.eval_addr);
	assert_true(told.eval_end > told.eval_start && told.fr_is_entry == told.fr_owner - 1);
	assert_int_equal(pyruntime_stacks(&rt, first_frame, &fr), 1);
	assert_int_equal(pycode_resolve(&rt, fr.code, fr.lasti, &want), 0);
	char *name = strdup(want.qualname), *file = strdup(want.filename);
	int line = want.line, first = want.firstlineno;
	pyruntime_release(&rt);
	uint64_t v = FIRN_FRAME(FIRN_FRAME_KIND_PYTHON, FIRN_PY_PAYLOAD(1, (uint64_t)fr.lasti / 2));
	uint64_t v0 = FIRN_FRAME(FIRN_FRAME_KIND_PYTHON, FIRN_PY_PAYLOAD(1, FIRN_PY_NO_OFFSET));
	/* a notice whose strings were not copied: all is read from the live process */
	struct firn_py_code_event e = notice(pid, fr.code, 1, NULL, NULL, 0);
	assert_int_equal(pyframes_code_event(py, &e), 0);
	kill(pid, SIGKILL), waitpid(pid, NULL, 0);
	pyframes_forget(py, pid);

	struct frame_resolver r = pyframes_resolver(py);
	assert_string_equal(r.mapping, "[python]");
	assert_int_equal(r.resolve(r.ctx, pid, v, out, 4), 1);
	assert_string_equal(out[0].name, name);
	assert_string_equal(out[0].file, file);
	assert_int_equal(out[0].line, line);
	assert_int_equal(r.resolve(r.ctx, pid, v0, out, 4), 1);
	assert_int_equal(out[0].line, first);
	assert_int_equal(r.resolve(r.ctx, pid + 1, v, out, 4), 0);
	free(name), free(file);
	pyframes_free(py);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_payload),
		cmocka_unit_test(test_notices),
		cmocka_unit_test(test_after_exit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
