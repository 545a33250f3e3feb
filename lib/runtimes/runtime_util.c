/* What the runtimes' ops have in common (see runtime_util.h). */
#include "runtimes/runtime_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileid.h"
#include "base/safeopen.h"
#include "base/strput.h"
#include "base/vec.h"
#include "proc/procmap.h"
#include "source/sample_source.h"

/* Every runtime's state begins with its head: one allocation rule for them all. */
void *runtime_state_new(size_t size, const struct runtime_host *h,
			const struct runtime_stats_shape *stats)
{
	struct runtime_head *s = calloc(1, size);

	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	*s = (struct runtime_head){ h, stats };
	return s;
}

/* The counter at off of a stats struct st. */
static uint64_t count_at(const void *st, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)st + off, sizeof(v));
	return v;
}

/* Each stats op checks the size, copies user space's counts, and adds the walker's by tag. */
int runtime_stats_fill(const struct runtime_stats_shape *sh, const struct runtime_host *h,
		       const struct runtime *rt, void *out, size_t size)
{
	if (size != sh->size)
		return -EINVAL;
	if (sh->get)
		sh->get(rt, out);
	else
		memcpy(out, (const char *)rt + sh->own_off, sh->size);
	sample_source_walker_stats(h->ss, sh->tag, (uint64_t *)((char *)out + sh->bpf_off),
				   sh->nbpf);
	return 0;
}

/* The stats op every runtime with a head shares. */
int runtime_stats(const struct runtime *rt, void *out, size_t size)
{
	const struct runtime_head *hd = (const struct runtime_head *)rt;

	return runtime_stats_fill(hd->stats, hd->h, rt, out, size);
}

/* Each summary line starts with the runtime's name and its processes; none when none ran it. */
size_t runtime_summary_start(const struct runtime_stats_shape *sh, const struct runtime_host *h,
			     const struct runtime *rt, void *st, char *buf, size_t len)
{
	uint64_t processes;
	size_t off = 0;

	buf[0] = '\0';
	if (runtime_stats_fill(sh, h, rt, st, sh->size))
		return 0;
	processes = count_at(st, sh->processes_off);
	if (!processes && !count_at(st, sh->refused_off))
		return 0;
	strput(buf, len, &off, "firn: %s: %llu process%s, ", sh->name,
	       (unsigned long long)processes, processes == 1 ? "" : "es");
	return off;
}

/* Each summary line counts its refusals and says the last one's reason. */
void runtime_summary_refused(char *buf, size_t len, size_t *off, const char *what, uint64_t n,
			     const char *reason)
{
	strput(buf, len, off, "%s %llu%s%s", what, (unsigned long long)n, n ? ": " : "",
	       n ? reason : "");
}

/* A line's middle as data: its text, each "%llu" the next of the shape's counters. */
static void put_counts(const struct runtime_stats_shape *sh, const void *st, char *buf, size_t len,
		       size_t *off)
{
	size_t i = 0;

	for (const char *p = sh->line; p && *p;) {
		const char *m = strstr(p, "%llu");
		int n = m ? (int)(m - p) : (int)strlen(p);
		strput(buf, len, off, "%.*s", n, p);
		if (!m || i == RUNTIME_LINE_COUNTS)
			return;
		strput(buf, len, off, "%llu", (unsigned long long)count_at(st, sh->counts[i++]));
		p = m + 4;
	}
}

/* The summary line of a runtime with a head, as its shape describes it. */
size_t runtime_summary_line(const struct runtime *rt, void *st, char *buf, size_t len)
{
	const struct runtime_head *hd = (const struct runtime_head *)rt;
	const struct runtime_stats_shape *sh = hd->stats;
	size_t off = runtime_summary_start(sh, hd->h, rt, st, buf, len);

	if (!off)
		return 0;
	put_counts(sh, st, buf, len, &off);
	runtime_summary_refused(buf, len, &off, sh->refused, count_at(st, sh->refused_off),
				(const char *)st + sh->reason_off);
	return off;
}

/* The summary op of a runtime with a head: its line, ended. */
size_t runtime_summary(const struct runtime *rt, char *buf, size_t len)
{
	uint64_t st[RUNTIME_STATS_MAX / sizeof(uint64_t)];
	size_t off = runtime_summary_line(rt, st, buf, len);

	if (off)
		strput(buf, len, &off, "\n");
	return off;
}

/* Each runtime keeps its processes in an array it scans: one scan for them all. */
void *runtime_proc_find(const void *procs, size_t n, size_t stride, pid_t pid)
{
	for (size_t i = 0; i < n; i++) {
		const char *p = (const char *)procs + i * stride;
		pid_t at;
		memcpy(&at, p, sizeof(at));
		if (at == pid)
			return (void *)p;
	}
	return NULL;
}

/* Each runtime appends a process it meets to its table: one growth rule for them all. */
void *runtime_proc_add(void **procs, size_t *n, size_t *cap, size_t stride, pid_t pid)
{
	if (vec_grow(procs, cap, *n + 1, stride))
		return NULL;
	char *p = (char *)*procs + (*n)++ * stride;
	memset(p, 0, stride);
	memcpy(p, &pid, sizeof(pid));
	return p;
}

/* Each runtime forgets an ended process the same way: its slot goes to the last one. */
void runtime_proc_drop(void *procs, size_t *n, size_t stride, void *p)
{
	char *last = (char *)procs + --*n * stride;

	if (p != last)
		memcpy(p, last, stride);
}

/* Each runtime reads a file it meets (a libjvm's symbols, a node's constants) once: by identity. */
ssize_t runtime_file_index(pid_t pid, const struct procmap_entry *e, void **files, size_t *n,
			   size_t *cap, size_t stride, void (*read)(void *f, int fd))
{
	char path[4200];
	struct stat st;
	int fd;

	/* the mapped file itself, then its path inside the process's root: maps names it as the
	 * reader sees it, from the host's root for a process chrooted below it */
	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)e->start, (unsigned long long)e->end);
	if ((fd = safeopen(path, 0, 0, &st)) >= 0 && st.st_ino != e->inode)
		fd = (close(fd), -ESTALE);
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, e->path);
	if (fd < 0 && (fd = safeopen(path, 0, 0, &st)) < 0) /* resolved inside the process's root */
		return -1;
	struct file_id id = file_id_of(&st);
	for (size_t i = 0; i < *n; i++)
		if (file_id_eq(&id, (const struct file_id *)((const char *)*files + i * stride)))
			return (close(fd), (ssize_t)i);
	if (vec_grow(files, cap, *n + 1, stride))
		return (close(fd), -1);
	char *f = (char *)*files + *n * stride;
	memset(f, 0, stride);
	memcpy(f, &id, sizeof(id));
	read(f, fd);
	close(fd);
	return (ssize_t)(*n)++;
}

/* A runtime loads its walker ahead for a command of its own: found as exec would find it. */
const char *runtime_command_file(const char *argv0, char *file, size_t size)
{
	const char *path = getenv("PATH");

	if (strchr(argv0, '/'))
		return argv0;
	for (const char *p = path ? path : ""; *p;) {
		size_t len = strcspn(p, ":");
		if (len && snprintf(file, size, "%.*s/%s", (int)len, p, argv0) < (int)size &&
		    !access(file, X_OK))
			return file;
		p += len + (p[len] == ':');
	}
	return NULL;
}
