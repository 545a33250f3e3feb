/* Helpers for the HotSpot unit tests: an installed JDK's libjvm.so, a JVM started on
 * tests/fixtures/JitFix.java (source-file mode: no javac needed) and its VMStructs read through
 * /proc/PID/mem once its CodeCache is up. */
#ifndef FIRN_TEST_JVMFIX_H
#define FIRN_TEST_JVMFIX_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "symfix.h"
#include "runtimes/hotspot_structs.h"

/* libjvm.so of an installed JDK (its real path, as /proc/PID/maps names it), or NULL. */
static inline const char *jdk_libjvm(const char *jdk, char *buf)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/usr/lib/jvm/%s/lib/server/libjvm.so", jdk);
	return realpath(path, buf);
}

/* Another process's memory through /proc/PID/mem (ctx: its descriptor). */
static inline int procmem_read(void *ctx, pid_t pid, uint64_t addr, void *buf, size_t len)
{
	(void)pid;
	return pread(*(int *)ctx, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -EFAULT;
}

/* Where lib is loaded in pid: the start of its mapping at file offset 0 (libjvm's first
 * segment is at address 0), or 0 while it is not mapped. */
static inline uint64_t load_bias(pid_t pid, const char *lib)
{
	char path[64], line[PATH_MAX + 128];
	unsigned long long start, off;
	uint64_t bias = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	while (f && !bias && fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/');
		if (file && sscanf(line, "%llx-%*x %*s %llx", &start, &off) == 2 && off == 0 &&
		    !strncmp(file, lib, strlen(lib)) && file[strlen(lib)] == '\n')
			bias = start;
	}
	if (f)
		fclose(f);
	return bias;
}

/* The 8-byte word at a of the process (0 when unreadable). */
static inline uint64_t peek(int fd, uint64_t a)
{
	uint64_t v = 0;

	return procmem_read(&fd, 0, a, &v, sizeof(v)) ? 0 : v;
}

/* Whether the CodeCache that hs describes is set up and consistent: 1 to 8 code heaps, the
 * first one's reserved memory inside the CodeCache's bounds. */
static inline bool codecache_ok(int fd, const struct hotspot_structs *hs)
{
	uint64_t heaps = peek(fd, hs->codecache_heaps), lo = peek(fd, hs->codecache_low_bound);
	uint64_t hi = peek(fd, hs->codecache_high_bound);
	if (!heaps || !lo || hi <= lo)
		return false;
	uint32_t len = (uint32_t)peek(fd, heaps + hs->array_len);
	uint64_t heap0 = peek(fd, peek(fd, heaps + hs->array_data));
	uint64_t low = peek(fd, heap0 + hs->codeheap_memory + hs->vspace_low_boundary);
	uint64_t high = peek(fd, heap0 + hs->codeheap_memory + hs->vspace_high_boundary);
	return len >= 1 && len <= 8 && lo <= low && low < high && high <= hi;
}

/* Starts JitFix.java (source-file mode) with the JDK's java and one more VM option (opt, or
 * NULL: none): its pid, or -1. */
static inline pid_t start_java_with(const char *jdk, const char *opt)
{
	char java[PATH_MAX];

	snprintf(java, sizeof(java), "/usr/lib/jvm/%s/bin/java", jdk);
	if (access(java, X_OK))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 1), dup2(null, 2);
		execl(java, java, "-Xshare:auto", opt ? opt : "-Xshare:auto",
		      source_fixture("JitFix.java"), "60", (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Starts JitFix.java with the JDK's java: its pid, or -1. */
static inline pid_t start_java(const char *jdk)
{
	return start_java_with(jdk, NULL);
}

/* One try at pid's tables, through /proc/PID/mem opened now (a descriptor opened before the
 * exec would read the memory the process had then): 0 once its CodeCache is up too. */
static inline int try_live(pid_t pid, uint64_t bias, const struct hotspot_syms *s,
			   struct hotspot_structs *hs)
{
	char path[64];
	int err;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct hotspot_mem mem = { procmem_read, &fd };
	if (fd < 0)
		return -errno;
	err = hotspot_structs_read(hs, s, bias, &mem, pid);
	err = err ? err : codecache_ok(fd, hs) ? 0 : -EAGAIN;
	close(fd);
	return err;
}

/* Reads a live JVM's tables once its CodeCache is up (30 s at most): 0, or the last error. */
static inline int read_live(pid_t pid, const char *lib, const struct hotspot_syms *s,
		     struct hotspot_structs *hs)
{
	int err = -ESRCH;

	for (int i = 0; i < 300 && err; i++) {
		uint64_t bias = load_bias(pid, lib);
		if (bias && !(err = try_live(pid, bias, s, hs)))
			break;
		usleep(100 * 1000);
	}
	return err;
}

#endif
