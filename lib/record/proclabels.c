/* exe, cgroup and container_id labels of each live process (proclabels.h). */
#include "record/proclabels.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/pidindex.h"
#include "base/vec.h"
#include "proc/cgroup.h"

struct proc_entry {
	char *exe, *cgroup;               /* "" when unreadable; owned */
	char container[CGROUP_ID_LEN + 1]; /* "" when none */
};

struct proclabels {
	struct pidindex procs; /* pid -> its struct proc_entry (owned) */
};

struct proclabels *proclabels_new(void)
{
	return calloc(1, sizeof(struct proclabels)); /* a zeroed pidindex is an empty one */
}

/* Frees an entry (NULL: nothing) and the labels it owns. */
static void entry_free(struct proc_entry *e)
{
	if (e)
		FREE_ALL(e->exe, e->cgroup, e);
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
	struct proc_entry *e = calloc(1, sizeof(*e));
	void *old;
	if (!e || !(e->exe = strdup(exe)) || !(e->cgroup = strdup(cg)) ||
	    pidindex_put(&t->procs, pid, e, &old)) {
		entry_free(e);
		return -ENOMEM;
	}
	entry_free(old); /* what it had before its exec */
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
	const struct proc_entry *e = pidindex_get(&t->procs, (pid_t)pid);
	int n = 0;

	if (!e)
		return 0;
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
	entry_free(pidindex_take(&t->procs, pid));
}

void proclabels_free(struct proclabels *t)
{
	if (!t)
		return;
	while (t->procs.n)
		proclabels_forget(t, t->procs.pids[0]);
	pidindex_release(&t->procs);
	free(t);
}
