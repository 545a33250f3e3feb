/* Unit tests for the interpreter frame's slots that hotspot_structs derives (Method* at
 * frame_method words from rbp, the bcp at frame_bcp: frame_x86.hpp's layout, not exported by
 * the JVM), checked on real frames: as root, where they are installed, an OpenJDK 17 and a
 * Temurin 25 run tests/fixtures/JitFix.java interpreted only (-Xint); its main thread is
 * stopped again and again (PTRACE_SEIZE, then PTRACE_INTERRUPT) and its frames walked from rbp
 * (the caller's rbp at [fp], the return pc at [fp + 8]) through /proc/PID/mem. A frame whose pc
 * is in the interpreter blob (hotspot_codecache_find) must name a method by its Method* slot,
 * with its bcp slot inside that method's bytecodes (0 for a native method), for 99.8 % of
 * frames (a frame being pushed may not have them yet); once JitFix runs, its hot loop
 * JitFix.firnHashWork is the top frame of 10 stops or more and JitFix.main under 95 %. */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>

#include <cmocka.h>

#include "jvmfix.h"
#include "runtimes/hotspot_codecache.h"
#include "runtimes/hotspot_names.h"

#define MAX_FRAMES 128

/* What the stops of the spinning thread met. */
struct stops {
	int stops, in_interp;        /* stops, and those whose pc was in the interpreter */
	int frames, named, bcp_ok;   /* interpreted frames walked: named by Method*, bcp inside */
	int natives;                 /* named frames of native methods */
	int jitfix, top_hash, under_main; /* stops in JitFix's code: firnHashWork on top, main under */
};

/* The main Java thread of pid: the task named "java" that is not the launcher (pid itself). */
static pid_t java_main_thread(pid_t pid)
{
	char path[64], comm[32];
	pid_t found = 0;
	struct dirent *e;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	while (d && !found && (e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
		FILE *f = tid && tid != pid ? fopen(path, "r") : NULL;
		if (f && fgets(comm, sizeof(comm), f) && !strcmp(comm, "java\n"))
			found = tid;
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return found;
}

/* Checks the interpreted frame at fp: its Method* named, its bcp inside the method's
 * bytecodes (they follow the ConstMethod; a native method has none, and its bcp slot holds 0,
 * or the codes' start); the method's names into m. */
static bool interp_frame(const struct hotspot_structs *hs, int fd, pid_t pid, uint64_t fp,
			 struct hotspot_method *m, struct stops *st)
{
	struct hotspot_mem mem = { procmem_read, &fd };
	uint64_t method = peek(fd, fp + 8 * (int64_t)hs->frame_method);
	uint64_t bcp = peek(fd, fp + 8 * (int64_t)hs->frame_bcp);

	st->frames++;
	if (hotspot_method_read(hs, &mem, pid, method, m))
		return false;
	st->named++;
	uint64_t codes = peek(fd, method + hs->method_const) + hs->size_cmethod;
	uint16_t size = (uint16_t)peek(fd, codes - hs->size_cmethod + hs->cmethod_code_size);
	st->natives += size == 0; /* a native method's frame: its bcp slot 0 or its (empty) codes */
	st->bcp_ok += size ? bcp >= codes && bcp < codes + size : bcp == 0 || bcp == codes;
	return true;
}

/* Walks the stopped thread's frames from (pc, fp) and counts what they show. */
static void walk(const struct hotspot_structs *hs, const struct hotspot_codecache *cc, int fd,
		 pid_t pid, uint64_t pc, uint64_t fp, struct stops *st)
{
	struct hotspot_mem mem = { procmem_read, &fd };
	struct hotspot_method m;
	struct hotspot_blob b;
	bool top = true, jitfix = false, hash = false, main = false;

	st->stops++;
	for (int i = 0; i < MAX_FRAMES && fp; i++) {
		bool interp = !hotspot_codecache_find(hs, cc, &mem, pid, pc, &b) &&
			      b.kind == HS_BLOB_INTERPRETER;
		st->in_interp += top && interp;
		if (interp && interp_frame(hs, fd, pid, fp, &m, st) && !strcmp(m.klass, "JitFix")) {
			jitfix = true;
			hash |= top && !strcmp(m.name, "firnHashWork");
			main |= !strcmp(m.name, "main");
		}
		top = false;
		uint64_t next = peek(fd, fp);
		pc = peek(fd, fp + 8);
		if (next <= fp)
			break;
		fp = next;
	}
	st->jitfix += jitfix;
	st->top_hash += hash;
	st->under_main += jitfix && main;
}

/* Stops tid (seized), walks its frames from its registers, lets it run on. */
static int stop_and_walk(const struct hotspot_structs *hs, const struct hotspot_codecache *cc,
			 int fd, pid_t pid, pid_t tid, struct stops *st)
{
	struct user_regs_struct regs;
	int status;

	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) || waitpid(tid, &status, __WALL) != tid)
		return -errno;
	int err = ptrace(PTRACE_GETREGS, tid, 0, &regs) ? -errno : 0;
	if (!err)
		walk(hs, cc, fd, pid, regs.rip, regs.rbp, st);
	return ptrace(PTRACE_CONT, tid, 0, 0) || err ? -1 : 0;
}

/* A JVM of jdk run interpreted only: its main thread's frames checked at 400 stops and until
 * 100 of them are in JitFix's code (javac, interpreted, compiles the source first: at load 18 that
 * outlasted 400 stops), or until 150 stops in JitFix's code; 50 s at most. */
static void live_jdk(const char *jdk)
{
	struct hotspot_syms s;
	struct hotspot_structs hs;
	struct hotspot_codecache cc;
	struct stops st = { 0 };
	char lib[PATH_MAX], path[64];

	if (geteuid() != 0 || !jdk_libjvm(jdk, lib))
		skip(); /* attaching to another process: root; the JDK: where installed */
	int fd = open(lib, O_RDONLY | O_CLOEXEC);
	assert_int_equal(hotspot_syms_read_fd(&s, fd), 0);
	close(fd);
	pid_t pid = start_java_with(jdk, "-Xint");
	assert_true(pid > 0);
	int err = read_live(pid, lib, &s, &hs);
	pid_t tid = err ? 0 : java_main_thread(pid);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (!err && !(err = hotspot_codecache_read(&hs, &(struct hotspot_mem){ procmem_read, &fd },
						   pid, &cc)))
		err = tid && !ptrace(PTRACE_SEIZE, tid, 0, 0) ? 0 : -ESRCH;
	for (int i = 0; !err && i < 5000 && (st.stops < 400 || st.jitfix < 100) && st.jitfix < 150; i++) {
		err = stop_and_walk(&hs, &cc, fd, pid, tid, &st);
		usleep(10 * 1000);
	}
	close(fd);
	kill(pid, SIGKILL);
	if (tid)
		waitpid(tid, NULL, __WALL); /* a traced thread is reaped by its tracer first */
	waitpid(pid, NULL, 0);
	assert_int_equal(err, 0);
	print_message("%s: %d stops, %d in the interpreter; %d interpreted frames, %d named (%d "
		      "native), %d bcps right; %d stops in JitFix, %d in firnHashWork, %d under "
		      "main\n", jdk, st.stops, st.in_interp, st.frames, st.named, st.natives,
		      st.bcp_ok, st.jitfix, st.top_hash, st.under_main);
	assert_int_equal(hs.frame_method, -3);
	assert_int_equal(hs.frame_bcp, -8);
	assert_true(st.in_interp * 2 >= st.stops && st.frames >= st.stops);
	assert_true(st.named * 100 >= st.frames * 99);
	assert_true(st.bcp_ok * 1000 >= st.named * 998);
	assert_true(st.jitfix >= 50 && st.top_hash >= 10);
	assert_true(st.under_main * 100 >= st.jitfix * 95);
}

static void test_live_jdk17(void **state)
{
	(void)state;
	live_jdk("java-17-openjdk-amd64");
}

static void test_live_temurin25(void **state)
{
	(void)state;
	live_jdk("temurin-25-jdk-amd64");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live_jdk17),
		cmocka_unit_test(test_live_temurin25),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
