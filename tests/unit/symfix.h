/* Helpers for the symbolizer unit tests: where fixtures are, and running the symfix fixture, which
 * prints "NAME RUNTIME_ADDRESS ELF_VADDR FILE" per function and then "ready". */
#ifndef FIRN_TEST_SYMFIX_H
#define FIRN_TEST_SYMFIX_H

#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct symfix_fn {
	char name[64];
	uint64_t runtime, vaddr;
	char file[PATH_MAX];
};

/* $BUILD/fixtures/NAME, found next to this test binary ($BUILD/tests/test_X). */
static inline const char *built_fixture(const char *name)
{
	static char path[PATH_MAX];
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0)
		return name;
	exe[n] = 0;
	*strrchr(exe, '/') = 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/../fixtures/%s", exe, name) >= sizeof(path))
		return name;
	return path;
}

/* tests/fixtures/NAME in the source tree: under $ROOT (set by tests/run), else the current
 * directory, else two levels above this test binary ($BUILD/tests/test_X). */
static inline const char *source_fixture(const char *name)
{
	static char path[PATH_MAX];
	const char *root = getenv("ROOT");

	if ((size_t)snprintf(path, sizeof(path), "%s/tests/fixtures/%s", root ? root : ".", name) >=
	    sizeof(path))
		return name;
	if (access(path, F_OK) == 0)
		return path;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return path;
	exe[n] = 0;
	*strrchr(exe, '/') = 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/../../tests/fixtures/%s", exe, name) >=
	    sizeof(path))
		return name;
	return path;
}

/* Reads the fixture's lines up to "ready" into fns; returns how many, or -1. */
static inline int symfix_read(FILE *f, struct symfix_fn *fns, int max)
{
	char line[PATH_MAX + 128];
	int n = 0;

	while (fgets(line, sizeof(line), f)) {
		if (!strcmp(line, "ready\n"))
			return n;
		if (n == max)
			return -1;
		struct symfix_fn *fn = &fns[n];
		unsigned long long rt, va;
		if (sscanf(line, "%63s %llx %llx %4095s", fn->name, &rt, &va, fn->file) != 4)
			return -1;
		fn->runtime = rt;
		fn->vaddr = va;
		n++;
	}
	return -1;
}

/* Starts the fixture at path (with --wait when wait) and reads its function list; returns the
 * child's pid (already reaped when !wait) or -1. */
static inline pid_t symfix_run(const char *path, int wait, struct symfix_fn *fns, int *nfns)
{
	int fds[2];
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execl(path, path, wait ? "--wait" : (char *)NULL, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	FILE *f = fdopen(fds[0], "r");
	*nfns = f ? symfix_read(f, fns, 16) : -1;
	if (f)
		fclose(f);
	else
		close(fds[0]);
	if (*nfns < 0 && pid > 0)
		kill(pid, SIGKILL);
	if (pid > 0 && (!wait || *nfns < 0))
		waitpid(pid, NULL, 0);
	return *nfns < 0 ? -1 : pid;
}

/* Kills and reaps a --wait child. */
static inline void symfix_kill(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* The entry for name in fns, or NULL. */
static inline const struct symfix_fn *symfix_find(const struct symfix_fn *fns, int n,
						  const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(fns[i].name, name))
			return &fns[i];
	return NULL;
}

#endif
