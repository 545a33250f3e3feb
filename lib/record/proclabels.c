/* exe, cgroup and container_id labels of each live process (proclabels.h). */
#include "record/proclabels.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/cgroup.h"
#include "base/vec.h"

struct proc_entry {
	pid_t pid;
	char *exe, *cgroup;               /* "" when unreadable; owned */
	char container[CGROUP_ID_LEN + 1]; /* "" when none */
};

struct proclabels {
	struct proc_entry *v; /* sorted by pid */
	size_t n, cap;
};

struct proclabels *proclabels_new(void)
{
	return calloc(1, sizeof(struct proclabels));
}

/* Where pid is, or would go, in t->v. */
static size_t find(const struct proclabels *t, pid_t pid)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t->v[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* pid's entry, made (empty) when it has none; NULL when out of memory. */
static struct proc_entry *entry_of(struct proclabels *t, pid_t pid)
{
	size_t i = find(t, pid);

	if (i < t->n && t->v[i].pid == pid)
		return &t->v[i];
	if (VEC_GROW(t->v, t->cap, t->n + 1))
		return NULL;
	memmove(t->v + i + 1, t->v + i, (t->n - i) * sizeof(*t->v));
	t->n++;
	t->v[i] = (struct proc_entry){ .pid = pid };
	return &t->v[i];
}

int proclabels_note(struct proclabels *t, pid_t pid)
{
	char path[64], exe[PATH_MAX], cg[PATH_MAX];
	ssize_t n;
	long c;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if ((n = readlink(path, exe, sizeof(exe) - 1)) < 0)
		n = 0; /* a kernel thread has none */
	exe[n] = 0;
	if ((c = cgroup_of_pid(pid, cg, sizeof(cg))) < 0) {
		if (c == -ENOENT && !n)
			return -ENOENT;
		*cg = 0;
	}
	struct proc_entry *e = entry_of(t, pid);
	char *ne = e ? strdup(exe) : NULL, *nc = ne ? strdup(cg) : NULL;
	if (!nc) {
		free(ne);
		return -ENOMEM;
	}
	free(e->exe);
	free(e->cgroup);
	e->exe = ne;
	e->cgroup = nc;
	if (!cgroup_container_id(cg, strlen(cg), e->container, sizeof(e->container)))
		*e->container = 0;
	return 0;
}

/* Adds label key=value to out[*n] unless value is empty. */
static int put(struct profile *p, const char *key, const char *value, struct profile_label *out,
	       int *n)
{
	if (!*value)
		return 0;
	int64_t k = profile_intern(p, key), v = profile_intern(p, value);
	if (k < 0 || v < 0)
		return -ENOMEM;
	out[(*n)++] = (struct profile_label){ .key = (uint32_t)k, .str = (uint32_t)v };
	return 0;
}

int proclabels_fill(void *arg, uint32_t pid, struct profile *p, struct profile_label *out)
{
	struct proclabels *t = arg;
	size_t i = find(t, (pid_t)pid);
	int n = 0;

	if (i >= t->n || t->v[i].pid != (pid_t)pid)
		return 0;
	const struct proc_entry *e = &t->v[i];
	if (put(p, "exe", e->exe, out, &n) || put(p, "cgroup", e->cgroup, out, &n) ||
	    put(p, "container_id", e->container, out, &n))
		return -ENOMEM;
	return n;
}

/* The listener's: a process's labels read at its first sample or exec (a failure: none). */
static void on_process(void *ctx, pid_t pid, bool exec)
{
	(void)exec;
	(void)proclabels_note(ctx, pid);
}

struct procdispatch_listener proclabels_listener(struct proclabels *t)
{
	return (struct procdispatch_listener){ .on_process = on_process, .ctx = t };
}

void proclabels_forget(struct proclabels *t, pid_t pid)
{
	size_t i = find(t, pid);

	if (i >= t->n || t->v[i].pid != pid)
		return;
	free(t->v[i].exe);
	free(t->v[i].cgroup);
	memmove(t->v + i, t->v + i + 1, (t->n - i - 1) * sizeof(*t->v));
	t->n--;
}

void proclabels_free(struct proclabels *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		FREE_ALL(t->v[i].exe, t->v[i].cgroup);
	FREE_ALL(t->v, t);
}
