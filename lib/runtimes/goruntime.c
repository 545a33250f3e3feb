/* Go goroutine labels as a runtime (see goruntime.h). */
#include "runtimes/goruntime.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hash.h"
#include "base/pidindex.h"
#include "base/strput.h"
#include "base/vec.h"
#include "runtimes/godwarf.h"
#include "runtimes/golabels.h"
#include "runtimes/runtime_util.h"
#include "source/sample_source.h"
#include "source/sampler.h"

#define HEAD_LEN 4096         /* bytes of an executable read for its program headers */
#define BUILDINFO_SCAN 65536  /* bytes of a writable segment searched for the build information */
#define NOTGO_SLOTS 256       /* executables remembered as no Go that says its release (a power of 2) */

/* What a Go process met got (struct goruntime's seen): its first sample and its exec both
 * attach, so a process is counted once, by what it got last. */
static char TOLD, REFUSED;

/* An executable by identity: what stat(2) says of the file /proc/PID/exe names. */
struct exe_id {
	uint64_t dev, ino, size, mtime_ns;
};

struct goruntime {
	struct runtime_head head; /* first: runtime_state_new */
	struct golabels_ctx **ctxs; /* by id (ids are the walker's, never reused) */
	size_t cap;
	struct goruntime_stats st;
	struct pidindex seen;        /* the Go processes met: TOLD or REFUSED (counted once) */
	/* executables without a Go release, by identity, direct-mapped (a slot's newest file):
	 * most processes are none, and their exe's headers and data were read at each one's first
	 * sample; bounded, so a recording of days holds no more */
	struct exe_id notgo[NOTGO_SLOTS];
	uint8_t buf[BUILDINFO_SCAN]; /* an executable's bytes being read (exe_release) */
};

#define GO_BPF(i) RUNTIME_BPF(struct goruntime_stats, i)

/* Its counters and the walker's, and its line: "firn: go: N processes, samples L labelled, ...";
 * nothing when no Go process ran. */
static const struct runtime_stats_shape stats_shape = {
	RUNTIME_STATS_SHAPE(struct goruntime_stats, FIRN_GO_TAG, FIRN_GO_NR, refused),
	.name = "go", .own_off = offsetof(struct goruntime, st), .refused = "unknown release",
	.line = "samples %llu labelled, %llu without labels, unreadable %llu, over 8 labels %llu, "
		"folded %llu; label sets %llu (announcements lost %llu); ",
	.counts = { GO_BPF(FIRN_GO_LABELLED), GO_BPF(FIRN_GO_NONE), GO_BPF(FIRN_GO_BAD_READ),
		    GO_BPF(FIRN_GO_TOO_MANY), GO_BPF(FIRN_GO_FOLDED), GO_BPF(FIRN_GO_CONTEXTS),
		    GO_BPF(FIRN_GO_LOST) },
};

/* Its state (its head first, as runtime_state_new stores it). */
static struct runtime *rt_new(const struct runtime_host *h)
{
	_Static_assert(offsetof(struct goruntime, head) == 0, "go: head first");
	return runtime_state_new(sizeof(struct goruntime), h, &stats_shape);
}

/* Frees the kept contexts and the state. */
static void rt_free(struct runtime *rt)
{
	struct goruntime *g = (struct goruntime *)rt;

	if (!g)
		return;
	for (size_t i = 0; i < g->cap; i++)
		free(g->ctxs[i]);
	free(g->ctxs);
	pidindex_release(&g->seen);
	free(g);
}

/* The Go release of the executable open at fd (read through buf: BUILDINFO_SCAN bytes), into
 * ver (cap bytes), and its headers into exe. 0, -ENOENT (no Go binary that says its
 * release), -ENOEXEC, or a read's -errno. */
static int exe_release(uint8_t *buf, int fd, char *ver, size_t cap, struct golabels_exe *exe)
{
	ssize_t n = pread(fd, buf, HEAD_LEN, 0);
	int err = n < 0 ? -errno : golabels_exe_parse(buf, (size_t)n, exe);

	if (err)
		return err;
	for (unsigned i = 0; i < exe->nsegs; i++) {
		size_t want = exe->seg_len[i] < BUILDINFO_SCAN ? exe->seg_len[i] : BUILDINFO_SCAN;
		if (exe->seg_off[i] > INT64_MAX ||
		    (n = pread(fd, buf, want, (off_t)exe->seg_off[i])) < 0)
			return -errno;
		if ((err = golabels_buildinfo_version(buf, (size_t)n, ver, cap)) != -ENOENT)
			return err;
	}
	return -ENOENT;
}

/* The identity of the file st describes (dev 0 never is a file's: ino 0 marks an empty slot). */
static struct exe_id exe_id_of(const struct stat *st)
{
	return (struct exe_id){ .dev = st->st_dev + 1, .ino = st->st_ino, .size = (uint64_t)st->st_size,
				.mtime_ns = (uint64_t)st->st_mtim.tv_sec * 1000000000u +
					    (uint64_t)st->st_mtim.tv_nsec };
}

/* id's slot in g's notgo (a mix of dev and inode). */
static struct exe_id *notgo_slot(struct goruntime *g, const struct exe_id *id)
{
	return &g->notgo[hash_mix64(id->ino * 31 + id->dev) & (NOTGO_SLOTS - 1)];
}

/* Whether pid's executable (path: /proc/PID/exe) is one found before to hold no Go release: a
 * stat, not an open and reads of its headers and data (under churn one of each new process).
 * -ENOENT also when the stat fails (the process ended: an open would fail as well), else 0. */
static int known_not_go(struct goruntime *g, const char *path)
{
	struct stat st;
	struct exe_id id;

	if (stat(path, &st))
		return -errno;
	id = exe_id_of(&st);
	return memcmp(notgo_slot(g, &id), &id, sizeof(id)) ? 0 : -ENOENT;
}

/* Remembers the file open at fd as holding no Go release (err: exe_release's -ENOENT or
 * -ENOEXEC): the file read, by fstat, so an exec between the stat and the open keys nothing
 * wrongly. */
static void remember_not_go(struct goruntime *g, int fd, int err)
{
	struct stat st;
	struct exe_id id;

	if ((err != -ENOENT && err != -ENOEXEC) || fstat(fd, &st))
		return;
	id = exe_id_of(&st);
	*notgo_slot(g, &id) = id;
}

/* Whether file is a Go executable that says its release. */
static bool file_is_go(const char *file)
{
	uint8_t *buf = malloc(BUILDINFO_SCAN);
	int fd = buf ? open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK) : -1;
	struct golabels_exe exe;
	char ver[64];

	bool go = fd >= 0 && exe_release(buf, fd, ver, sizeof(ver), &exe) == 0;
	if (fd >= 0)
		close(fd);
	free(buf);
	return go;
}

/* Whether the command argv0 (a path, or a name found in $PATH) is a Go executable. */
static bool command_is_go(const char *argv0)
{
	char buf[PATH_MAX];
	const char *file = runtime_command_file(argv0, buf, sizeof(buf));

	return file && file_is_go(file);
}

/* Its walker runs in every recording it is on. Its program is loaded when the first Go process
 * is told of (a recording without one loads none), but for a Go command: loaded late, the
 * samples of its first ~30 ms would miss their labels. */
static void rt_configure(const struct runtime_host *h, struct sampler_opts *so)
{
	so->walkers |= 1u << FIRN_GO_TAG;
	if (h->argc == 0 || !command_is_go(h->argv[0]))
		so->walkers_late |= 1u << FIRN_GO_TAG;
}

/* Counts Go process pid once as what it got (&TOLD, &REFUSED), recounted when that changes. */
static void count_proc(struct goruntime *g, pid_t pid, char *what)
{
	void *old = pidindex_get(&g->seen, pid);

	if (old == what || pidindex_put(&g->seen, pid, what, &old))
		return;
	g->st.processes -= old == &TOLD;
	g->st.refused -= old == &REFUSED;
	g->st.processes += what == &TOLD;
	g->st.refused += what == &REFUSED;
}

/* Remembers why a Go process was refused (the summary says the last reason). */
static void refuse(struct goruntime *g, pid_t pid, const char *ver, const char *why)
{
	count_proc(g, pid, &REFUSED);
	snprintf(g->st.last_refusal, sizeof(g->st.last_refusal), "%s: %s", ver, why);
}

/* The offsets of a release without table row from the DWARF of the executable at path (a
 * libdw read of some milliseconds: after the table, so known releases are told at once). 0, or
 * -ENOTSUP with *why set. */
static int offsets_from_dwarf(const char *path, const char *ver, const struct golabels_exe *exe,
			      struct firn_go_proc *p, const char **why)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct godwarf dw;
	bool has_dw = fd >= 0 && godwarf_offsets(fd, &dw) == 0;

	if (fd >= 0)
		close(fd);
	return golabels_offsets(ver, exe, has_dw ? &dw : NULL, p, why) ? -ENOTSUP : 0;
}

/* A process's first sample or exec: a Go process of a known release is told to the walker,
 * anything else is forgotten by it. */
static void rt_attach(struct runtime *rt, pid_t pid, bool exec, uint64_t now_ns)
{
	struct goruntime *g = (struct goruntime *)rt;
	struct firn_go_proc p;
	char path[64], ver[64] = "";
	struct golabels_exe exe;
	const char *why = "";

	(void)now_ns;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	int err = known_not_go(g, path);
	int fd = err ? -1 : open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (!err)
		err = fd < 0 ? -errno : exe_release(g->buf, fd, ver, sizeof(ver), &exe);
	if (fd >= 0) {
		remember_not_go(g, fd, err);
		close(fd);
	}
	if (!err && golabels_offsets(ver, &exe, NULL, &p, &why) == -ENOTSUP)
		err = offsets_from_dwarf(path, ver, &exe, &p, &why);
	if (err == -ENOTSUP)
		refuse(g, pid, ver, why);
	if (err) { /* an exec of a Go process told before into something else: forgotten */
		if (exec && pidindex_get(&g->seen, pid) == &TOLD)
			(void)sample_source_set_proc(g->head.h->ss, FIRN_GO_TAG, pid, NULL, 0);
		return;
	}
	p.pid = (__u32)pid;
	if (sample_source_set_proc(g->head.h->ss, FIRN_GO_TAG, pid, &p, sizeof(p)) == 0)
		count_proc(g, pid, &TOLD);
}

/* The walker's announcement of a new label set: kept by its id. */
static int rt_on_code(struct runtime *rt, const void *rec, size_t len)
{
	struct goruntime *g = (struct goruntime *)rt;
	struct golabels_ctx c;

	if (golabels_event_parse(rec, len, &c))
		return 0; /* not the walker's: left unnamed */
	if (c.id >= g->cap && VEC_GROW_ZEROED(g->ctxs, g->cap, (size_t)c.id + 1))
		return -ENOMEM;
	if (!g->ctxs[c.id] && !(g->ctxs[c.id] = malloc(sizeof(c))))
		return -ENOMEM;
	*g->ctxs[c.id] = c;
	g->st.contexts++;
	return 0;
}

/* The labels of context id: its pairs, or go_labels=other for the walker's folded contexts. */
static int rt_labels(struct runtime *rt, pid_t pid, uint32_t id, struct resolved_label *out,
		     int max)
{
	const struct goruntime *g = (const struct goruntime *)rt;
	const struct golabels_ctx *c = id < g->cap ? g->ctxs[id] : NULL;
	int n = 0;

	(void)pid;
	if (id == FIRN_CTX_OTHER && max > 0) {
		out[0] = (struct resolved_label){ .key = "go_labels", .value = "other" };
		return 1;
	}
	for (uint32_t i = 0; c && i < c->n && n < max; i++)
		out[n++] = (struct resolved_label){ .key = c->key[i], .value = c->value[i] };
	return n;
}

/* The process ended: the walker forgets it, if it was told of it (its label sets stay, for its
 * parked samples; no system call for the other processes). */
static void rt_detach(struct runtime *rt, pid_t pid)
{
	struct goruntime *g = (struct goruntime *)rt;

	if (pidindex_take(&g->seen, pid) == &TOLD) /* its count stays */
		(void)sample_source_set_proc(g->head.h->ss, FIRN_GO_TAG, pid, NULL, 0);
}

const struct runtime_ops runtime_go = {
	.name = "go",
	.off_help = "no goroutine labels (pprof.Do) read from Go programs",
	.tag = FIRN_GO_TAG, .frames = FRAME_NATIVE,
	.configure = rt_configure, .new = rt_new, .free = rt_free, .attach = rt_attach,
	.on_code = rt_on_code, .labels = rt_labels, .stats = runtime_stats,
	.summary = runtime_summary, .detach = rt_detach,
};
