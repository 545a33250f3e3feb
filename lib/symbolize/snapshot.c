/* The symbolizer's process snapshots: a process's maps, the files behind them, its perf map;
 * taken from /proc or made from the kernel's mmap records, again after exec, and forgotten
 * (symbolize/snapshot.h). */
#include "symbolize/snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/pidindex.h"
#include "base/safeopen.h"
#include "base/vec.h"
#include "symbolize/filecache.h"
#include "symbolize/symbolize_impl.h"

/* Opens the file behind a snapshot's file mapping: the cached one with its device and inode,
 * else map_files (works for deleted files while the process lives), then the path as the
 * process sees it, then the path as we see it — each checked against the mapping's inode. */
static struct symfile *snapshot_open(struct symbolizer *s, pid_t pid, const struct procmap_entry *e)
{
	char path[PATH_MAX + 64];
	struct symfile *f = filecache_known(s, e);

	if (f)
		return f;
	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)e->start, (unsigned long long)e->end);
	f = filecache_get(s, path, 0, e->inode, e->path, pid); /* a link the kernel made: followed */
	if (f || errno == ENOMEM || e->deleted || e->path[0] != '/')
		return f;
	/* maps names the file itself, never a symlink: one found there now is someone else's */
	if ((size_t)snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, e->path) < sizeof(path)) {
		f = filecache_get(s, path, SAFEOPEN_NOFOLLOW, e->inode, e->path, pid);
		if (f || errno == ENOMEM)
			return f;
	}
	return filecache_get(s, e->path, SAFEOPEN_NOFOLLOW, e->inode, e->path, pid);
}

/* A non-executable file mapping shares the file of a nearby executable mapping of the same inode
 * (the segments of one file are adjacent in maps). */
static struct symfile *sibling_file(const struct snapshot *snap, size_t i)
{
	const struct procmap_entry *e = &snap->map.entries[i];
	size_t lo = i > 8 ? i - 8 : 0, hi = i + 9 < snap->map.n ? i + 9 : snap->map.n;

	for (size_t j = lo; j < hi; j++) {
		const struct procmap_entry *o = &snap->map.entries[j];
		if (j != i && snap->maps[j].file && o->inode == e->inode &&
		    o->dev_major == e->dev_major && o->dev_minor == e->dev_minor &&
		    !strcmp(o->path, e->path))
			return snap->maps[j].file;
	}
	return NULL;
}

/* The symbol source of mapping e of a snapshot being made: old's (the snapshot it replaces)
 * when old has the same mapping, else opened now. 0 or -ENOMEM. */
static int snapmap_attach(struct symbolizer *s, const struct snapshot *old,
			  const struct procmap_entry *e, struct snapmap *m, pid_t pid)
{
	const struct procmap_entry *o = old ? procmap_find(&old->map, e->start) : NULL;

	if (o && o->start == e->start && o->end == e->end && o->offset == e->offset &&
	    o->inode == e->inode && o->kind == e->kind && !strcmp(o->path, e->path)) {
		*m = old->maps[o - old->map.entries];
		if (m->file)
			filecache_ref(s, m->file);
		return 0;
	}
	if (e->kind == PROCMAP_VDSO)
		m->src = SRC_VDSO;
	if (e->kind != PROCMAP_FILE || !e->x)
		return 0;
	m->src = SRC_FILE;
	if (!(m->file = snapshot_open(s, pid, e)) && errno == ENOMEM)
		return -ENOMEM;
	if (!m->file)
		diag(DIAG_DEBUG, "cannot open '%s' of pid %d: %s", e->path, (int)pid,
		     safeopen_strerror(-errno));
	return 0;
}

/* Attaches symbol sources to every mapping of a fresh snapshot; 0 or -ENOMEM. */
static int snapshot_attach(struct symbolizer *s, struct snapshot *snap)
{
	for (size_t i = 0; i < snap->map.n; i++) {
		int err = snapmap_attach(s, NULL, &snap->map.entries[i], &snap->maps[i], snap->pid);
		if (err)
			return err;
	}
	for (size_t i = 0; i < snap->map.n; i++) {
		const struct procmap_entry *e = &snap->map.entries[i];
		struct snapmap *m = &snap->maps[i];
		if (e->kind != PROCMAP_FILE || e->x || !(m->file = sibling_file(snap, i)))
			continue;
		m->src = SRC_FILE;
		m->file->refs++;
	}
	return 0;
}

/* The pid of a process in its own (innermost) pid namespace, from /proc/PID/status; pid when
 * that cannot be read. */
static pid_t namespaced_pid(pid_t pid)
{
	char path[64], line[256];
	pid_t ns = pid;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return pid;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6))
			continue;
		char *last = strrchr(line, '\t');
		if (last && atoi(last + 1) > 0)
			ns = atoi(last + 1);
		break;
	}
	fclose(f);
	return ns;
}

/* Opens the snapshot's perf map inside the process's mount namespace, when there is one: a
 * regular file (a FIFO there must not hang us), not a symlink, owned by the process's user or
 * root and not writable by others (its names are trusted as the process's own), as perf does. */
static void perfmap_open(struct symbolizer *s, struct snapshot *snap)
{
	char path[96];
	uid_t uid;

	if (snap->perfmap_fd >= 0 || snap->perfmap_refused)
		return;
	if (!snap->perfmap_name[0]) /* a snapshot made from events: named at first need */
		snprintf(snap->perfmap_name, sizeof(snap->perfmap_name), "/tmp/perf-%d.map",
			 (int)namespaced_pid(snap->pid));
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)snap->pid, snap->perfmap_name);
	int fd = safeopen_process_uid(snap->pid, &uid);
	if (fd && snap->root_fd >= 0) { /* gone: its root as it was while it lived */
		snprintf(path, sizeof(path), "/proc/self/fd/%d%s", snap->root_fd, snap->perfmap_name);
		uid = snap->root_uid;
		fd = 0;
	}
	if (!fd)
		fd = safeopen(path, SAFEOPEN_NOFOLLOW | SAFEOPEN_OWNER, uid, NULL);
	if ((fd == -EINVAL || fd == -EPERM || fd == -ELOOP) && s->perfmap_noted != snap->pid)
		diag(DIAG_INFO, "ignoring '%s' of pid %d: %s", snap->perfmap_name, (int)snap->pid,
		     fd == -ELOOP ? "a symbolic link" : safeopen_strerror(fd));
	if (fd == -EINVAL || fd == -EPERM || fd == -ELOOP) {
		s->perfmap_noted = snap->pid;
		snap->perfmap_refused = true;
	}
	snap->perfmap_fd = fd < 0 ? -1 : fd;
}

/* Frees a snapshot and drops its file references. */
void snapshot_free(struct symbolizer *s, struct snapshot *snap)
{
	if (!snap)
		return;
	for (size_t i = 0; snap->maps && i < snap->map.n; i++)
		filecache_put(s, snap->maps[i].file);
	free(snap->maps);
	procmap_release(&snap->map);
	if (snap->perfmap_fd >= 0)
		close(snap->perfmap_fd);
	if (snap->root_fd >= 0) {
		close(snap->root_fd);
		s->nroot_fds--;
	}
	perfmap_release(&snap->perfmap);
	free(snap);
}

/* An empty snapshot of pid (no perf map, no root folder yet), for snapshot_new and
 * symbolizer_set_maps to fill; NULL on ENOMEM. */
static struct snapshot *snapshot_alloc(pid_t pid)
{
	struct snapshot *snap = calloc(1, sizeof(*snap));

	if (snap) {
		snap->pid = pid;
		snap->perfmap_fd = -1;
		snap->root_fd = -1;
	}
	return snap;
}

/* Reads pid's maps and opens its files; NULL + errno. */
static struct snapshot *snapshot_new(struct symbolizer *s, pid_t pid)
{
	struct snapshot *snap = snapshot_alloc(pid);
	int err;

	if (!snap)
		return NULL;
	err = procmap_read(&snap->map, pid);
	if (!err) {
		snap->maps = calloc(snap->map.n ? snap->map.n : 1, sizeof(*snap->maps));
		err = snap->maps ? snapshot_attach(s, snap) : -ENOMEM;
	}
	if (err) {
		safeopen_note_error(err);
		snapshot_free(s, snap);
		errno = -err;
		return NULL;
	}
	snprintf(snap->perfmap_name, sizeof(snap->perfmap_name), "/tmp/perf-%d.map",
		 (int)namespaced_pid(pid));
	perfmap_open(s, snap);
	return snap;
}

/* The snapshot of pid, or NULL when s has none. */
struct snapshot *snapshot_of(const struct symbolizer *s, pid_t pid)
{
	return pidindex_get(&s->procs, pid);
}

/* Puts snap into the process table, replacing an older snapshot of its pid; 0 or -ENOMEM. */
static int proc_put(struct symbolizer *s, struct snapshot *snap)
{
	void *old;
	int err = pidindex_put(&s->procs, snap->pid, snap, &old);

	if (old)
		snapshot_free(s, old);
	return err;
}

struct symbolizer_snapshot *symbolizer_take(struct symbolizer *s, pid_t pid)
{
	struct snapshot *snap = snapshot_new(s, pid);

	if (snap && !snap->map.n) { /* a zombie: nothing to keep */
		snapshot_free(s, snap);
		errno = ESRCH;
		return NULL;
	}
	return (struct symbolizer_snapshot *)snap;
}

int symbolizer_install(struct symbolizer *s, struct symbolizer_snapshot *taken)
{
	struct snapshot *snap = (struct snapshot *)taken;

	if (proc_put(s, snap)) {
		snapshot_free(s, snap);
		return -ENOMEM;
	}
	return 0;
}

void symbolizer_snapshot_free(struct symbolizer *s, struct symbolizer_snapshot *taken)
{
	snapshot_free(s, (struct snapshot *)taken);
}

int symbolizer_add_process(struct symbolizer *s, pid_t pid)
{
	/* a process caught exiting (a zombie) has no mappings left: keep what was seen alive */
	struct symbolizer_snapshot *snap = symbolizer_take(s, pid);

	return snap ? symbolizer_install(s, snap) : -errno;
}

/* Moves old's perf map (open descriptor, what was read, its name) to snap. */
static void perfmap_move(struct snapshot *snap, struct snapshot *old)
{
	snap->perfmap_fd = old->perfmap_fd;
	snap->perfmap_state = old->perfmap_state;
	snap->perfmap_refused = old->perfmap_refused;
	snap->perfmap = old->perfmap;
	memcpy(snap->perfmap_name, old->perfmap_name, sizeof(snap->perfmap_name));
	snap->jit_key = old->jit_key;
	snap->jit_seen = old->jit_seen;
	snap->root_fd = old->root_fd;
	snap->root_uid = old->root_uid;
	old->perfmap_fd = -1;
	old->root_fd = -1;
	memset(&old->perfmap, 0, sizeof(old->perfmap));
}

int symbolizer_set_maps(struct symbolizer *s, pid_t pid, const struct procmap *map)
{
	struct snapshot *snap = snapshot_alloc(pid);
	struct snapshot *old = snapshot_of(s, pid);
	int err = snap ? procmap_copy(&snap->map, map, false) : -ENOMEM;

	if (!snap)
		return err;
	snap->from_events = true;
	if (!err && !(snap->maps = calloc(snap->map.n ? snap->map.n : 1, sizeof(*snap->maps))))
		err = -ENOMEM;
	for (size_t j = 0; !err && j < snap->map.n; j++)
		err = snapmap_attach(s, old, &snap->map.entries[j], &snap->maps[j], pid);
	if (!err && old)
		perfmap_move(snap, old);
	if (!err)
		err = proc_put(s, snap);
	if (err)
		snapshot_free(s, snap);
	return err;
}

bool symbolizer_maps_file(struct symbolizer *s, pid_t pid, uint64_t addr)
{
	const struct snapshot *snap = snapshot_of(s, pid);
	const struct procmap_entry *e = snap ? procmap_find(&snap->map, addr) : NULL;

	return e && e->kind == PROCMAP_FILE;
}

/* Keeps the root folder of a process that runs JIT code without a map so far, for a map it
 * writes as it exits. Only processes with anonymous executable memory, and a few at once: each
 * holds a descriptor, and a recording of many processes needs its descriptors for their files. */
static void keep_root(struct symbolizer *s, struct snapshot *snap)
{
	char root[32];

	if (snap->perfmap_fd >= 0 || snap->root_fd >= 0 || snap->perfmap_refused ||
	    s->nroot_fds >= SYMBOLIZER_ROOT_FDS || !procmap_runs_jit(&snap->map) ||
	    safeopen_process_uid(snap->pid, &snap->root_uid))
		return;
	snprintf(root, sizeof(root), "/proc/%d/root", (int)snap->pid);
	snap->root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	s->nroot_fds += snap->root_fd >= 0;
}

int symbolizer_note_jit(struct symbolizer *s, pid_t pid)
{
	struct snapshot *snap = snapshot_of(s, pid);

	if (!snap)
		return -ENOENT;
	if (!snap->perfmap_state)
		perfmap_open(s, snap);
	keep_root(s, snap);
	return 0;
}

int symbolizer_note_exit(struct symbolizer *s, pid_t pid)
{
	struct snapshot *snap = snapshot_of(s, pid);

	if (!snap)
		return -ENOENT;
	/* a JIT process without a map so far: the one it wrote as it exited is read at next use */
	if (snap->root_fd >= 0 && snap->perfmap_fd < 0 && snap->perfmap_state < 0 &&
	    !snap->perfmap_refused)
		snap->perfmap_state = 0;
	return 0;
}

bool symbolizer_has_process(struct symbolizer *s, pid_t pid)
{
	return snapshot_of(s, pid) != NULL;
}

int symbolizer_add_process_later(struct symbolizer *s, pid_t pid, uint64_t now_ns)
{
	if (VEC_GROW(s->resnap, s->cap_resnap, s->nresnap + 1))
		return -ENOMEM;
	s->resnap[s->nresnap++] = (struct resnap){ pid, now_ns + SYMBOLIZER_RESNAP_NS };
	return 0;
}

uint64_t symbolizer_refresh_due(struct symbolizer *s, uint64_t now_ns)
{
	uint64_t next = UINT64_MAX;
	size_t kept = 0;

	filecache_sweep(s, now_ns);

	for (size_t i = 0; i < s->nresnap; i++) {
		if (s->resnap[i].due_ns <= now_ns) {
			symbolizer_add_process(s, s->resnap[i].pid);
			continue;
		}
		if (s->resnap[i].due_ns < next)
			next = s->resnap[i].due_ns;
		s->resnap[kept++] = s->resnap[i];
	}
	s->nresnap = kept;
	return next;
}

bool symbolizer_refresh_pending(const struct symbolizer *s, pid_t pid)
{
	for (size_t i = 0; i < s->nresnap; i++)
		if (s->resnap[i].pid == pid)
			return true;
	return false;
}

/* Drops pid's pending second snapshot (the process has gone). */
static void drop_resnap(struct symbolizer *s, pid_t pid)
{
	size_t kept = 0;

	for (size_t i = 0; i < s->nresnap; i++)
		if (s->resnap[i].pid != pid)
			s->resnap[kept++] = s->resnap[i];
	s->nresnap = kept;
}

/* Whether the process ran JIT code that its perf map did not describe: it had none. */
bool snapshot_no_map(const struct snapshot *snap)
{
	return snap->jit_seen && snap->perfmap_state != 1;
}

int symbolizer_remove_process(struct symbolizer *s, pid_t pid)
{
	struct snapshot *snap;

	drop_resnap(s, pid);
	if (!(snap = pidindex_take(&s->procs, pid)))
		return -ENOENT;
	s->jit_no_map += snapshot_no_map(snap);
	snapshot_free(s, snap);
	return 0;
}

/* Reads the snapshot's perf map on first use (opening it now if it appeared after the
 * snapshot, while the process still lives); 0 or -errno. */
int snapshot_perfmap_ready(struct symbolizer *s, struct snapshot *snap)
{
	if (!snap->perfmap_state) {
		perfmap_open(s, snap);
		int err = snap->perfmap_fd < 0 ? -ENOENT
			  : perfmap_read_fd(&snap->perfmap, snap->perfmap_fd, PERFMAP_MAX_BYTES);
		if (err == -ENOMEM)
			return err;
		if (!err && snap->perfmap.truncated)
			diag(DIAG_WARN, "'%s' of pid %d is longer than %zu MiB: read up to there",
			     snap->perfmap_name, (int)snap->pid, PERFMAP_MAX_BYTES >> 20);
		snap->perfmap_state = err ? err : 1;
	}
	return snap->perfmap_state < 0 ? snap->perfmap_state : 0;
}
