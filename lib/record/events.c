/* The events of a recording and the probes attached for them: -e usdt specs, libfirn-cuda's
 * probes, and the watch over the processes that should map them (see events.h). */
#include "record/events.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/types.h>

#include "../../bpf/firn.h"
#include "../../bpf/alloc.bpf.h"
#include "base/clock.h"
#include "base/diag.h"
#include "record/event_table.h"
#include "proc/procmap.h"
#include "record/recorder.h"
#include "source/sample_source.h"
#include "record/usdt.h"
#include "base/vec.h"

/* An object with attached probes. */
struct probed_object {
	dev_t dev;
	ino_t ino;
	char *path;  /* as attached (owned) */
	bool mapped; /* some process of the recording was seen mapping it */
};

/* A probe attached for the -e value spec (an index into recorder_opts.events) in object obj,
 * counted as event id. */
struct usdt_use {
	int spec;
	size_t obj;
	uint32_t id;
};

/* A process of the recording whose maps are looked at (at its first event, half a second
 * later, and at the end) for objects with attached probes, while one was never seen mapped. */
struct events_watched {
	pid_t pid;
	int checks;
	uint64_t due_ns;
};

#define WATCH_AGAIN_NS 500000000ULL /* libraries are mapped by then (dlopen at start-up) */

/* Notes the message of a failure for the recorder's error; returns err (-errno). */
__attribute__((format(printf, 3, 4)))
static int fail(struct events *ev, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ev->err, ev->errlen, fmt, ap);
	va_end(ap);
	return err < 0 ? err : -EINVAL;
}

/* Whether an event's sample types are named by the probes it attaches (usdt). */
static bool names_at_attach(const struct event_desc *d)
{
	return d && !d->type;
}

/* How many -e values attach probes (USDT specs). */
static int probe_events(const struct recorder_opts *o)
{
	int n = 0;

	for (int i = 0; i < o->nevents; i++)
		n += names_at_attach(event_find(o->events[i], NULL));
	return n;
}

/* A process to follow (its first sample, or its exec): its maps are watched for objects with
 * probes. */
static void events_watch(void *ctx, pid_t pid, bool exec)
{
	struct events *ev = ctx;

	(void)exec;
	if (ev->o->all || (!probe_events(ev->o) && !ev->nobjs))
		return;
	for (size_t i = 0; i < ev->nwatch; i++)
		if (ev->watch[i].pid == pid) {
			ev->watch[i].checks = 0; /* exec: a new image */
			ev->watch[i].due_ns = 0;
			return;
		}
	if (VEC_GROW(ev->watch, ev->cap_watch, ev->nwatch + 1))
		return;
	ev->watch[ev->nwatch++] = (struct events_watched){ pid, 0, 0 };
}

/* Appends an event (taking its type name); returns 0 or -ENOMEM (the name freed). */
static int events_push(struct events *ev, struct capture_event e)
{
	if (VEC_GROW(ev->list, ev->cap, ev->n + 1)) {
		free((char *)e.type);
		return -ENOMEM;
	}
	ev->list[ev->n++] = e;
	return 0;
}

/* Appends the event of row d (its one sample type: cpu-clock's hits, off-CPU time...) once;
 * 0 or -ENOMEM. */
static int events_push_row(struct events *ev, const struct event_desc *d)
{
	for (unsigned i = 0; i < ev->n; i++)
		if (ev->list[i].id == d->id)
			return 0;
	char *type = strdup(d->type);
	if (!type)
		return -ENOMEM;
	return events_push(ev, (struct capture_event){ d->id, type, d });
}

/* Appends the rows that come with row d (their .with names it), in table order; 0 or -ENOMEM. */
static int events_push_with(struct events *ev, const struct event_desc *d)
{
	int err = 0;

	for (size_t i = 0; i < event_table_n && !err; i++)
		if (event_table[i].with && d->name && !strcmp(event_table[i].with, d->name))
			err = events_push_row(ev, &event_table[i]);
	return err;
}

void events_release(struct events *ev)
{
	for (unsigned i = 0; i < ev->n; i++)
		free((char *)ev->list[i].type);
	free(ev->list);
	for (size_t i = 0; i < ev->nobjs; i++)
		free(ev->objs[i].path);
	FREE_ALL(ev->objs, ev->uses, ev->watch, ev->announced);
}

/* Remembers the object at path (it has attached probes): its index, or -ENOMEM; -ENOENT when
 * it cannot be looked at (then it is not remembered). */
static long events_add_object(struct events *ev, const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return -ENOENT;
	for (size_t i = 0; i < ev->nobjs; i++)
		if (ev->objs[i].dev == st.st_dev && ev->objs[i].ino == st.st_ino)
			return i;
	char *copy = strdup(path);
	if (!copy || VEC_GROW(ev->objs, ev->cap_objs, ev->nobjs + 1)) {
		free(copy);
		return -ENOMEM;
	}
	ev->objs[ev->nobjs] = (struct probed_object){ st.st_dev, st.st_ino, copy, false };
	return ev->nobjs++;
}

/* True when process pid maps one of the objects with attached probes (each one it maps is
 * marked mapped); -1 when its maps cannot be read (it is gone). */
static int maps_probed_object(struct events *ev, pid_t pid)
{
	struct procmap m;
	bool found = false;

	if (procmap_read(&m, pid))
		return -1;
	for (size_t i = 0; i < m.n; i++)
		for (size_t j = 0; j < ev->nobjs; j++)
			if (m.entries[i].kind == PROCMAP_FILE && m.entries[i].inode == ev->objs[j].ino &&
			    makedev(m.entries[i].dev_major, m.entries[i].dev_minor) == ev->objs[j].dev)
				found = ev->objs[j].mapped = true;
	size_t n = m.n;
	procmap_release(&m);
	return n ? found : -1; /* no maps: a zombie */
}

/* Looks at the maps of the watched processes that are due (all of them when final), while
 * some object was never seen mapped; forgets those that are gone. After two looks a process
 * waits for the final one. */
void events_check_watched(struct events *ev, bool final)
{
	uint64_t now = mono_ns();
	bool unmapped = false;
	size_t kept = 0;

	for (size_t j = 0; j < ev->nobjs && !unmapped; j++)
		unmapped = !ev->objs[j].mapped;
	for (size_t i = 0; i < ev->nwatch; i++) {
		struct events_watched w = ev->watch[i];
		if (unmapped && (final || w.due_ns <= now)) {
			if (maps_probed_object(ev, w.pid) < 0)
				continue;
			w.due_ns = ++w.checks == 1 ? now + WATCH_AGAIN_NS : UINT64_MAX;
		}
		ev->watch[kept++] = w;
	}
	ev->nwatch = unmapped ? kept : 0;
}

uint64_t events_next_due_ns(const struct events *ev)
{
	uint64_t next = 0;

	for (size_t i = 0; i < ev->nwatch; i++)
		if (ev->watch[i].due_ns != UINT64_MAX && (!next || ev->watch[i].due_ns < next))
			next = ev->watch[i].due_ns;
	return next;
}

/* After a -p or command recording: a -e usdt spec without a hit whose objects no process of
 * the recording was seen mapping gets a warning naming them (a program name resolved to a
 * different file than the command ran: a pyenv shim, a container's copy). */
void events_warn_unmapped(const struct events *ev, const struct profile *p)
{
	for (int s = 0; s < ev->o->nevents && !ev->o->all; s++) {
		int64_t hits = 0;
		bool mapped = false, *used = calloc(ev->nobjs + 1, sizeof(*used));
		char paths[1024] = "";
		if (!used)
			return;
		for (size_t u = 0; u < ev->nuses; u++) {
			const struct usdt_use *use = &ev->uses[u];
			if (use->spec != s)
				continue;
			for (unsigned i = 0; i < ev->n; i++)
				if (ev->list[i].id == use->id)
					hits += profile_type_total(p, ev->list[i].type);
			mapped |= ev->objs[use->obj].mapped;
			used[use->obj] = true;
		}
		for (size_t j = 0, len = 0; j < ev->nobjs && len < sizeof(paths); j++)
			if (used[j])
				len += snprintf(paths + len, sizeof(paths) - len, "%s'%s'", len ? ", " : "",
						ev->objs[j].path);
		if (*paths && !hits && !mapped)
			diag(DIAG_WARN, "no hits for '%s': no process of the recording was seen mapping %s, where "
				"its probes were attached", ev->o->events[s], paths);
		free(used);
	}
}

/* Snapshots pid before its first event (announce_mappers, and -a --cuda for a process that maps
 * the library: its launch stacks then unwind and symbolize even if it ends soon after) and notes
 * it in ev->announced. 0, or -ENOMEM (nothing noted); a process that cannot be added is skipped. */
static int announce_process(struct events *ev, pid_t pid)
{
	if (VEC_GROW(ev->announced, ev->cap_announced, ev->nannounced + 1))
		return -ENOMEM;
	if (!ev->announce(ev->ctx, pid))
		ev->announced[ev->nannounced++] = pid;
	return 0;
}

/* -a: snapshots and loads the unwind tables of the processes that map a probed object now, so
 * that their first hits (often a burst) unwind and symbolize; they count as processes of the
 * recording at their first event. */
static void announce_mappers(struct events *ev)
{
	DIR *d = opendir("/proc");

	for (struct dirent *de; d && (de = readdir(d));) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || pid == getpid() || maps_probed_object(ev, pid) <= 0)
			continue;
		if (announce_process(ev, pid))
			break;
	}
	if (d)
		closedir(d);
}

/* Attaches probe p (found in the object at path) for pid under its event ("usdt_PROVIDER_NAME",
 * added on the first success). A failure is a warning; *attached counts successes. */
static int attach_probe(struct events *ev, pid_t pid, const char *path,
			const struct usdt_probe *p, int *attached)
{
	char *type = NULL;
	unsigned i;

	if (asprintf(&type, "usdt_%s_%s", p->provider, p->name) < 0)
		return fail(ev, -ENOMEM, "out of memory");
	for (i = 0; i < ev->n && strcmp(ev->list[i].type, type); i++)
		;
	uint32_t id = i < ev->n ? ev->list[i].id : ev->next_id;
	int err = sample_source_attach_usdt(ev->ss, pid, path, p->provider, p->name, id);
	if (err) {
		diag(DIAG_WARN, "cannot attach to USDT probe %s:%s of '%s': %s", p->provider, p->name, path,
			strerror(-err));
		free(type);
		return 0;
	}
	if (pid > 0)
		diag(DIAG_INFO, "%s: attached %s:%s in '%s' for process %d",
		     ev->o->events[ev->cur_spec], p->provider, p->name, path, (int)pid);
	else
		diag(DIAG_INFO, "%s: attached %s:%s in '%s'", ev->o->events[ev->cur_spec],
		     p->provider, p->name, path);
	(*attached)++;
	if (VEC_GROW(ev->uses, ev->cap_uses, ev->nuses + 1)) {
		free(type);
		return fail(ev, -ENOMEM, "out of memory");
	}
	ev->uses[ev->nuses++] = (struct usdt_use){ ev->cur_spec, SIZE_MAX, id };
	if (i < ev->n) {
		free(type);
		return 0;
	}
	ev->next_id++;
	return events_push(ev, (struct capture_event){ id, type, event_by_id(id) })
		       ? fail(ev, -ENOMEM, "out of memory") : 0;
}

/* Attaches the probes of object obj (a path, or a name resolved in pid when pid > 0) matching
 * the globs provider:name, each name once (libbpf attaches all of its sites). For pid > 0 the
 * object is the one the process sees, reached through /proc/PID/root (a container's). */
static int attach_object(struct events *ev, pid_t pid, const char *obj, const char *provider,
			 const char *name, int *attached)
{
	char path[PATH_MAX];
	struct usdt_list l;
	size_t uses = ev->nuses;
	int before = *attached, err = usdt_resolve_in_root(obj, pid, path, sizeof(path));

	if (err && pid > 0) {
		/* one of several processes may lack it: the event fails only if none has it */
		diag(DIAG_WARN, "cannot find '%s' in process %d: %s", obj, (int)pid, strerror(-err));
		return 0;
	}
	if (err)
		return fail(ev, err, "cannot find '%s': %s", obj, strerror(-err));
	usdt_list_init(&l);
	int n = usdt_list_file(&l, path, NULL);
	if (n < 0)
		err = fail(ev, n, "cannot read the USDT probes of '%s': %s", path,
			   n == -ENOEXEC ? "not an ELF file" : strerror(-n));
	for (size_t i = 0; i < l.n && !err; i++) {
		const struct usdt_probe *p = &l.probes[i];
		bool dup = false;
		for (size_t j = 0; j < i && !dup; j++)
			dup = !strcmp(l.probes[j].provider, p->provider) && !strcmp(l.probes[j].name, p->name);
		if (!dup && !fnmatch(provider, p->provider, 0) && !fnmatch(name, p->name, 0))
			err = attach_probe(ev, pid, path, p, attached);
	}
	usdt_list_release(&l);
	long idx = !err && *attached > before ? events_add_object(ev, path) : -ENOENT;
	if (idx == -ENOMEM)
		err = fail(ev, -ENOMEM, "out of memory");
	/* an object that cannot be looked at (idx -ENOENT) is not known to warn_unmapped */
	while (ev->nuses > uses && idx < 0)
		ev->nuses--;
	for (size_t u = uses; u < ev->nuses; u++)
		ev->uses[u].obj = idx;
	return err;
}

/* Attaches one "usdt:PATH:PROVIDER:NAME" event: in each -p process, else in every process (the
 * BPF target filter keeps a command's). No match at all is an error. */
static int attach_usdt_event(struct events *ev, const char *spec)
{
	char *copy = strdup(spec + 5), *provider, *name;
	int attached = 0, err = 0;

	if (!copy || !usdt_split_spec(copy, &provider, &name)) {
		free(copy);
		return fail(ev, -ENOMEM, "out of memory");
	}
	for (int i = 0; i < ev->o->npids && !err; i++)
		err = attach_object(ev, ev->o->pids[i], copy, provider, name, &attached);
	if (!ev->o->npids)
		err = attach_object(ev, -1, copy, provider, name, &attached);
	if (!err && !attached)
		err = fail(ev, -ENOENT, "no USDT probe matches '%s'", spec);
	free(copy);
	return err;
}

/* Attaches the -e events in order; their sample types follow that order. */
static int attach_specs(struct events *ev)
{
	ev->next_id = FIRN_EVENT_USDT_FIRST;
	for (int i = 0; i < ev->o->nevents; i++) {
		const char *e = ev->o->events[i];
		int err = 0;
		ev->cur_spec = i;
		const struct event_desc *d = event_find(e, NULL);
		if (!d)
			err = fail(ev, -EINVAL, "invalid event '%s'", e);
		else if (names_at_attach(d))
			err = attach_usdt_event(ev, e);
		else if (events_push_row(ev, d) || events_push_with(ev, d))
			err = fail(ev, -ENOMEM, "out of memory");
		if (err)
			return err;
	}
	if (ev->o->all && ev->nobjs)
		announce_mappers(ev);
	return 0;
}

/* The file pid maps whose name is base (its path in pid's root, through /proc/PID/root, into
 * out), or -ENOENT. */
static int mapped_file(pid_t pid, const char *base, char *out, size_t len)
{
	struct procmap m;
	int err = procmap_read(&m, pid);

	if (err)
		return err;
	err = -ENOENT;
	for (size_t i = 0; i < m.n && err; i++) {
		const char *path = m.entries[i].path, *slash = path ? strrchr(path, '/') : NULL;
		if (slash && !strcmp(slash + 1, base))
			err = snprintf(out, len, "/proc/%d/root%s", (int)pid, path) < (int)len ? 0 : -ENAMETOOLONG;
	}
	procmap_release(&m);
	return err;
}

/* Attaches libfirn-cuda's launch, kernel and memcpy probes in the file at path for pid (-1: in
 * every process that maps it), each under its cookie (bpf/cuda.bpf.h routes them). */
static int attach_cuda_probes(struct events *ev, pid_t pid, const char *path)
{
	static const struct { const char *name; uint32_t cookie; } probes[] = {
		{ "launch", FIRN_EVENT_GPU_LAUNCHES }, { "kernel", FIRN_EVENT_GPU_TIME },
		{ "memcpy", FIRN_EVENT_GPU_MEMCPY },
	};

	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		int err = sample_source_attach_usdt(ev->ss, pid, path, "firn_cuda", probes[i].name,
						    probes[i].cookie);
		if (err && !ev->o->all)
			return fail(ev, err, "cannot attach to firn_cuda:%s in '%s': %s", probes[i].name,
				    path, strerror(-err));
		if (err) /* -a: another copy may do */
			diag(DIAG_WARN, "cannot attach to firn_cuda:%s in '%s': %s", probes[i].name, path,
			     strerror(-err));
		if (err)
			return err;
	}
	return 0;
}

/* Whether the file at path is one of the n files of ids (adding it when not, if room). */
static bool seen_file(const char *path, struct stat *ids, size_t *n, size_t cap)
{
	struct stat st;

	if (stat(path, &st))
		return true;
	for (size_t i = 0; i < *n; i++)
		if (ids[i].st_dev == st.st_dev && ids[i].st_ino == st.st_ino)
			return true;
	if (*n < cap)
		ids[(*n)++] = st;
	return false;
}

/* The files already seen by a walk over the processes' copies of a library (each once). */
struct copies {
	struct stat ids[64];
	size_t n;
};

/* What a walk over the copies does for each process mapping one: path is the copy in the
 * process's root, first whether no process before mapped that file. 0, or -errno to stop. */
typedef int copy_fn(struct events *ev, pid_t pid, const char *path, bool first, void *arg);

/* Calls fn for every process (firn aside) that maps a file named base, the way -a attaches a
 * library's probes to each copy processes map now (an init container's own too). Returns the
 * first error fn returned, else 0. */
static int each_copy(struct events *ev, const char *base, struct copies *c, copy_fn *fn, void *arg)
{
	char path[PATH_MAX];
	int err = 0;
	DIR *d = opendir("/proc");

	for (struct dirent *de; d && !err && (de = readdir(d));) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || pid == getpid() || mapped_file(pid, base, path, sizeof(path)))
			continue;
		err = fn(ev, (pid_t)pid, path, !seen_file(path, c->ids, &c->n, 64), arg);
	}
	if (d)
		closedir(d);
	return err;
}

/* each_copy's step for --cuda: the process announced, a new file's probes attached (counted in
 * *arg). Never stops the walk: another copy may do. */
static int cuda_copy(struct events *ev, pid_t pid, const char *path, bool first, void *arg)
{
	announce_process(ev, pid);
	if (first && !attach_cuda_probes(ev, -1, path)) {
		diag(DIAG_INFO, "--cuda: attached in '%s' (mapped by process %d)", path, (int)pid);
		++*(int *)arg;
	}
	return 0;
}

/* -a: firn's own library wherever it is mapped, and the other copies processes map now, each
 * file once (a probe on a file reaches every process that maps it). Returns how many files
 * were attached. */
static int attach_cuda_copies(struct events *ev)
{
	struct copies c = { .n = 0 };
	int attached = 0;

	seen_file(ev->o->cuda_lib, c.ids, &c.n, 64);
	attached += !attach_cuda_probes(ev, -1, ev->o->cuda_lib);
	each_copy(ev, "libfirn-cuda.so", &c, cuda_copy, &attached);
	return attached;
}

/* Appends the events an option adds (--cuda's rows: gpu_time, gpu_launches), after cpu-clock
 * when no -e was given; 0 or -ENOMEM. */
static int events_push_option(struct events *ev)
{
	int err = ev->o->nevents ? 0 : events_push_row(ev, event_by_id(FIRN_EVENT_CPU_CLOCK));

	for (size_t i = 0; i < event_table_n && !err; i++)
		if (event_table[i].option)
			err = events_push_row(ev, &event_table[i]);
	return err;
}

/* --cuda: the sample types gpu_time and gpu_launches (after cpu-clock when no -e was given), and
 * the probes: in each -p process that maps a libfirn-cuda.so (its own copy: an init container's),
 * in the library's file wherever it is mapped (the command), with -a also in the other copies
 * mapped now. */
static int attach_cuda(struct events *ev)
{
	char path[PATH_MAX];
	int attached = 0;

	if (!ev->o->cuda_lib)
		return 0;
	if (events_push_option(ev))
		return fail(ev, -ENOMEM, "out of memory");
	if (ev->o->all)
		return attach_cuda_copies(ev) ? 0 : fail(ev, -ENOENT, "--cuda: cannot attach to libfirn-cuda.so");
	if (!ev->o->npids)
		return attach_cuda_probes(ev, -1, ev->o->cuda_lib);
	for (int i = 0; i < ev->o->npids; i++) {
		pid_t pid = ev->o->pids[i];
		if (mapped_file(pid, "libfirn-cuda.so", path, sizeof(path))) {
			diag(DIAG_WARN, "process %d maps no libfirn-cuda.so (started without "
			     "CUDA_INJECTION64_PATH?)", (int)pid);
			continue;
		}
		int err = attach_cuda_probes(ev, pid, path);
		if (err)
			return err;
		attached++;
	}
	return attached ? 0 : fail(ev, -ENOENT, "--cuda: no process maps libfirn-cuda.so");
}

/* -e alloc's library is a probed object of its -e value: a recording where no process mapped
 * it and no allocation was sampled (a static program, a setuid one: LD_PRELOAD ignored) is
 * warned of at the end (events_warn_unmapped). 0 or -ENOMEM. */
static int alloc_watch(struct events *ev, const struct event_desc *d)
{
	long obj = events_add_object(ev, ev->o->alloc_lib);
	int spec = 0;

	if (obj == -ENOMEM || VEC_GROW(ev->uses, ev->cap_uses, ev->nuses + 1))
		return fail(ev, -ENOMEM, "out of memory");
	if (obj < 0)
		return 0;
	while (spec < ev->o->nevents && event_find(ev->o->events[spec], NULL) != d)
		spec++;
	ev->uses[ev->nuses++] = (struct usdt_use){ spec, (size_t)obj, FIRN_EVENT_ALLOC_OBJECTS };
	return 0;
}

/* -e alloc's uprobes: the malloc family's functions and the programs they run (bpf/alloc.bpf.h),
 * an allocating one's return alloc_ret too. memalign stands for aligned_alloc (its alias in
 * glibc: one address, one probe); glibc's reallocarray calls realloc. needed: the file is no
 * allocator without it. */
static const struct alloc_func {
	const char *func, *prog;
	bool ret, needed;
} alloc_funcs[] = {
	{ "malloc", "alloc_malloc", true, true }, { "free", "alloc_free", false, true },
	{ "calloc", "alloc_calloc", true, true }, { "realloc", "alloc_realloc", true, true },
	{ "memalign", "alloc_memalign", true, false },
	{ "posix_memalign", "alloc_posix_memalign", true, false },
	{ "valloc", "alloc_malloc", true, false }, { "pvalloc", "alloc_malloc", true, false },
};
static const char *const alloc_progs[] = {
	"alloc_malloc", "alloc_free", "alloc_calloc", "alloc_realloc", "alloc_memalign",
	"alloc_posix_memalign", "alloc_ret",
};

/* Whether -e alloc attaches uprobes: always in uprobe mode; in auto mode where firn started no
 * command (-p processes without the library, -a, --cgroup). */
static bool alloc_uprobes(const struct recorder_opts *o)
{
	return o->alloc_mode == RECORDER_ALLOC_UPROBE ||
	       (o->alloc_mode == RECORDER_ALLOC_AUTO && (o->all || o->npids));
}

/* Attaches the malloc family's uprobes in the allocator file at path for pid (-1: every
 * process mapping it); a function the file lacks is skipped unless needed. 0 or -errno. */
static int attach_alloc_uprobes(struct events *ev, pid_t pid, const char *path)
{
	for (size_t i = 0; i < sizeof(alloc_funcs) / sizeof(alloc_funcs[0]); i++) {
		const struct alloc_func *f = &alloc_funcs[i];
		int err = sample_source_attach_uprobe(ev->ss, f->prog, pid, path, f->func, false);
		if (!err && f->ret)
			err = sample_source_attach_uprobe(ev->ss, "alloc_ret", pid, path, f->func, true);
		if (err && (f->needed || err != -ENOENT))
			return fail(ev, err, "-e alloc: cannot attach a uprobe to %s in '%s': %s",
				    f->func, path, strerror(-err));
	}
	diag(DIAG_INFO, "-e alloc: uprobes on the malloc family in '%s' (%s %d)", path,
	     pid < 0 ? "every process, firn is" : "process", pid < 0 ? (int)getpid() : (int)pid);
	return 0;
}

/* each_copy's step for uprobe mode: a libc file's uprobes, once per file. */
static int alloc_copy(struct events *ev, pid_t pid, const char *path, bool first, void *arg)
{
	(void)pid, (void)arg;
	return first ? attach_alloc_uprobes(ev, -1, path) : 0;
}

/* -a, --cgroup in uprobe mode: the uprobes in each libc file mapped now (a container's own
 * too), for every process mapping it (the BPF side keeps the targets). 0 or -errno. */
static int attach_alloc_copies(struct events *ev)
{
	struct copies c = { .n = 0 };

	return each_copy(ev, "libc.so.6", &c, alloc_copy, NULL);
}

/* The otel_memory probes of libfirn-alloc.so in the file at path, for pid (-1: wherever the
 * file is mapped), alloc and free each under its cookie (bpf/alloc.bpf.h routes them). */
static int attach_alloc_usdt(struct events *ev, pid_t pid, const char *path)
{
	static const struct { const char *name; uint32_t cookie; } probes[] = {
		{ "alloc", FIRN_EVENT_ALLOC_OBJECTS }, { "free", FIRN_EVENT_ALLOC_FREE },
	};

	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		int err = sample_source_attach_usdt(ev->ss, pid, path, "otel_memory",
						    probes[i].name, probes[i].cookie);
		if (err)
			return fail(ev, err, "cannot attach to otel_memory:%s in '%s': %s",
				    probes[i].name, path, strerror(-err));
	}
	return 0;
}

/* -p in uprobe or auto mode: each process's own library's probes when it maps
 * libfirn-alloc.so (auto), else uprobes on its libc. 0 or -errno. */
static int attach_alloc_pids(struct events *ev)
{
	char path[PATH_MAX];

	for (int i = 0; i < ev->o->npids; i++) {
		pid_t pid = ev->o->pids[i];
		int err;
		if (ev->o->alloc_mode == RECORDER_ALLOC_AUTO &&
		    !mapped_file(pid, "libfirn-alloc.so", path, sizeof(path)))
			err = attach_alloc_usdt(ev, pid, path);
		else if (mapped_file(pid, "libc.so.6", path, sizeof(path)))
			err = fail(ev, -ENOENT, "-e alloc: process %d maps no libc.so.6 (a static "
				   "program?)", (int)pid);
		else
			err = attach_alloc_uprobes(ev, pid, path);
		if (err)
			return err;
	}
	return 0;
}

/* -e alloc in uprobe mode for a command: the uprobes in the libc firn maps (the host's), for
 * every process mapping it; the BPF side keeps the command's. 0 or -errno. */
static int attach_alloc_command(struct events *ev)
{
	char path[PATH_MAX];

	if (mapped_file(getpid(), "libc.so.6", path, sizeof(path)))
		return fail(ev, -ENOENT, "-e alloc: no libc.so.6 mapped by firn to attach to");
	return attach_alloc_uprobes(ev, -1, path);
}

/* -e alloc: the otel_memory probes of libfirn-alloc.so (o->alloc_lib) wherever its file is
 * mapped (the command preloads it; -p and -a processes started with it in LD_PRELOAD), or the
 * malloc family's uprobes (alloc_uprobes: -p processes without the library, -a). */
static int attach_alloc(struct events *ev)
{
	const struct event_desc *d = event_find("alloc", NULL);
	const struct recorder_opts *o = ev->o;

	if (!d || !event_recorded(d, o->events, o->nevents, o->cuda_lib != NULL))
		return 0;
	if (alloc_uprobes(o))
		return o->npids ? attach_alloc_pids(ev) : o->all ? attach_alloc_copies(ev)
			       : attach_alloc_command(ev);
	if (!o->alloc_lib)
		return fail(ev, -ENOENT, "-e alloc: no allocation sampler library (libfirn-alloc.so)");
	int err = attach_alloc_usdt(ev, -1, o->alloc_lib);
	return err ? err : alloc_watch(ev, d);
}

/* The BPF counters of the recorded events that name theirs, into so->counters (one a row). */
static int counters_opts(const struct recorder_opts *o, struct sampler_opts *so)
{
	for (size_t i = 0; i < event_table_n; i++) {
		const struct event_desc *d = &event_table[i];
		if (!d->bpf_counters || !d->stats ||
		    !event_recorded(d, o->events, o->nevents, o->cuda_lib != NULL))
			continue;
		if (so->ncounters == SAMPLER_MAX_PROGS)
			return -E2BIG;
		so->counters[so->ncounters++] = (struct sampler_counters){
			d->bpf_counters, d->sampler_stats_at, d->stats->size / sizeof(uint64_t) };
	}
	return 0;
}

int events_sampler_opts(const struct recorder_opts *o, struct sampler_opts *so)
{
	bool cuda = o->cuda_lib != NULL;
	unsigned progs = event_progs(o->events, o->nevents, cuda);
	int n = event_bpf_progs(o->events, o->nevents, cuda, so->progs, SAMPLER_MAX_PROGS);

	so->no_cpu_clock = !(progs & EVENT_PROG_CPU_CLOCK);
	so->usdt = progs & EVENT_PROG_USDT;
	so->cuda = progs & EVENT_PROG_CUDA;
	so->off_cpu = progs & EVENT_PROG_OFF_CPU;
	so->alloc = progs & EVENT_PROG_ALLOC;
	if (so->alloc && alloc_uprobes(o)) {
		so->nuprobe_progs = sizeof(alloc_progs) / sizeof(alloc_progs[0]);
		for (size_t i = 0; i < so->nuprobe_progs; i++)
			so->uprobe_progs[i] = alloc_progs[i];
		so->alloc_rate = o->alloc_rate > 0 ? (uint64_t)o->alloc_rate : 0;
	}
	if (n < 0)
		return n;
	so->nprogs = (size_t)n;
	return counters_opts(o, so);
}

void events_init(struct events *ev, const struct recorder_opts *o, events_announce_fn *announce,
		 void *ctx, char *err, size_t errlen)
{
	*ev = (struct events){ .o = o, .announce = announce, .ctx = ctx, .err = err,
			       .errlen = errlen };
}

int events_attach(struct events *ev, struct sample_source *ss)
{
	ev->ss = ss;
	int err = attach_specs(ev);
	if (!err)
		err = attach_alloc(ev);
	return err ? err : attach_cuda(ev);
}

struct procdispatch_listener events_listener(struct events *ev)
{
	return (struct procdispatch_listener){ .on_process = events_watch, .ctx = ev };
}

bool events_take_announced(void *ctx, pid_t pid)
{
	struct events *ev = ctx;

	for (size_t i = 0; i < ev->nannounced; i++)
		if (ev->announced[i] == pid) {
			ev->announced[i] = ev->announced[--ev->nannounced];
			return true;
		}
	return false;
}
