/* The otelctx fixtures (tests/fixtures/otelctx.c) run live for test_tlsctx and test_otelctx: one
 * started with its stdout on a pipe, its "thread" lines parsed (tid, fs base, the address of
 * otel_thread_ctx_v1 the thread itself took), its memory read through /proc/PID/mem, and the load
 * bias of a file it mapped from /proc/PID/maps. */
#ifndef FIRN_OTELFIX_H
#define FIRN_OTELFIX_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "symfix.h"
#include "elf/tlsctx.h"
#include "proc/procmap.h"

struct otelfix_thread {
	long tid;
	uint64_t fs, slot;
};

struct otelfix {
	pid_t pid;
	FILE *out;
	int mem;                      /* /proc/PID/mem */
	struct otelfix_thread main, worker;
	char trace[3][33], route[3][16]; /* spans a, b, c as printed */
	unsigned entered;             /* the spans ("a" 1, "b" 2, "c" 4, "none" 8) entered so far */
};

/* Notes what a line says: a span's ids, a thread's slot, a span entered. */
static inline void otelfix_note(struct otelfix *f, const char *line)
{
	char name[8];
	struct otelfix_thread *t = !strncmp(line, "thread main", 11) ? &f->main : &f->worker;
	int i;

	if (sscanf(line, "span %1s", name) == 1 && (i = name[0] - 'a') >= 0 && i < 3)
		sscanf(line, "span %*s trace=%32s span=%*s route=%15s", f->trace[i], f->route[i]);
	else if (!strncmp(line, "thread ", 7))
		sscanf(strchr(line, '='), "=%ld fs=0x%lx slot=0x%lx", &t->tid, &t->fs, &t->slot);
	else if (sscanf(line, "enter %7s", name) == 1)
		f->entered |= !strcmp(name, "none") ? 8u : 1u << (name[0] - 'a');
}

/* Starts the fixture name (a second lasting scale_ms) and reads up to both "thread" lines.
 * 0, or -1 when it cannot run or its memory cannot be read (the caller skips). */
static inline int otelfix_start(struct otelfix *f, const char *name, int scale_ms)
{
	int p[2];
	char line[256], path[64], scale[32];

	memset(f, 0, sizeof(*f));
	f->mem = -1;
	if (access(built_fixture(name), X_OK) || pipe(p))
		return -1;
	snprintf(scale, sizeof(scale), "OTELCTX_SCALE_MS=%d", scale_ms);
	if ((f->pid = fork()) == 0) {
		dup2(p[1], 1);
		close(p[0]);
		putenv(scale);
		execl(built_fixture(name), name, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	f->out = fdopen(p[0], "r");
	while ((!f->main.slot || !f->worker.slot) && fgets(line, sizeof(line), f->out))
		otelfix_note(f, line);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)f->pid);
	f->mem = open(path, O_RDONLY | O_CLOEXEC);
	return f->main.slot && f->mem >= 0 ? 0 : -1;
}

/* The environment the next otelfix_start passes on: otelctx-dlopen's library (NULL: its default)
 * and GLIBC_TUNABLES (NULL: none; "glibc.rtld.optional_static_tls=0" makes a dlopen'd module's
 * TLS dynamic). */
static inline void otelfix_env(const char *lib, const char *tunables)
{
	if (lib)
		setenv("OTELCTX_LIB", lib, 1);
	else
		unsetenv("OTELCTX_LIB");
	if (tunables)
		setenv("GLIBC_TUNABLES", tunables, 1);
	else
		unsetenv("GLIBC_TUNABLES");
}

/* Reads the fixture's lines until it has entered every span in mask; false at its end. */
static inline bool otelfix_until(struct otelfix *f, unsigned mask)
{
	char line[256];

	while ((f->entered & mask) != mask && fgets(line, sizeof(line), f->out))
		otelfix_note(f, line);
	return (f->entered & mask) == mask;
}

/* Ends the fixture. */
static inline void otelfix_stop(struct otelfix *f)
{
	if (f->pid > 0) {
		kill(f->pid, SIGKILL);
		waitpid(f->pid, NULL, 0);
	}
	if (f->out)
		fclose(f->out);
	if (f->mem >= 0)
		close(f->mem);
}

/* The struct tlsctx_mem reader over /proc/PID/mem (ctx: the struct otelfix). */
static inline int otelfix_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct otelfix *f = ctx;

	return pread(f->mem, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -EFAULT;
}

/* The load bias of the file name (a fixture) in the process: the start of its mapping at file
 * offset 0 (the fixtures' first PT_LOAD has vaddr 0). 0 when it is not mapped. */
static inline uint64_t otelfix_bias(const struct otelfix *f, const char *name)
{
	struct procmap m;
	char want[PATH_MAX];
	uint64_t bias = 0;

	if (!realpath(built_fixture(name), want) || procmap_read(&m, f->pid))
		return 0;
	for (size_t i = 0; i < m.n && !bias; i++)
		if (m.entries[i].offset == 0 && !strcmp(m.entries[i].path, want))
			bias = m.entries[i].start;
	procmap_release(&m);
	return bias;
}

#endif
