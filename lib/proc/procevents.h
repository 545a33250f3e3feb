/* Process events: what the kernel says about processes as they change (exec, file mappings,
 * fork, exit, renames), read from an event source. The kernel source is what perf record uses: a
 * side-band software event (PERF_COUNT_SW_DUMMY) on every online CPU with mmap2, comm, comm_exec
 * and task records and sample_id_all (TID|TIME), each CPU's records read from its mmap'ed ring
 * buffer and merged by time; records the kernel could not write are counted in LOST events. A
 * fake source replays an array of events (unit tests). The parser of one record is pure and
 * bounds-checked (it reads untrusted bytes from a shared buffer; tests/fuzz/fuzz_procevents.c).
 * Which records mean what (perf's util/machine.c does the same): COMM with
 * PERF_RECORD_MISC_COMM_EXEC is an exec (PROC_EV_EXEC: the process's image starts empty); MMAP2
 * adds an executable mapping; FORK with pid != ppid is a new process (its image a copy of the
 * parent's), with pid == ppid a new thread; EXIT with pid == tid ends the process, a thread's
 * EXIT (pid != tid) does not.
 * One thread at a time per source. */
#ifndef FIRN_PROCEVENTS_H
#define FIRN_PROCEVENTS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum proc_event_kind {
	PROC_EV_EXEC = 1, /* pid's image is replaced (comm: the new name) */
	PROC_EV_MMAP,     /* an executable mapping of pid (fields start..filename) */
	PROC_EV_FORK,     /* a new thread tid of process pid, made by ppid/ptid */
	PROC_EV_EXIT,     /* thread tid of pid ended (tid == pid: the process) */
	PROC_EV_COMM,     /* thread tid renamed itself (comm), not an exec */
	PROC_EV_LOST,     /* lost records (count in lost): the model may miss changes */
};

#define PROC_EV_COMM_LEN 16
#define PROC_EV_BUILD_ID_MAX 20

struct proc_event {
	enum proc_event_kind kind;
	pid_t pid, tid;     /* process and thread */
	pid_t ppid, ptid;   /* FORK, EXIT: the parent process and thread */
	uint64_t time;      /* CLOCK_MONOTONIC, ns (the kernel source asks for it); 0: unknown */
	/* MMAP */
	uint64_t start, len, pgoff;
	uint32_t maj, min;  /* device of the file (0 with a build id) */
	uint64_t ino, ino_generation;
	uint32_t prot, flags; /* PROT_*, MAP_* */
	uint8_t build_id[PROC_EV_BUILD_ID_MAX]; /* when the kernel gives one (build_id_size > 0) */
	uint8_t build_id_size;
	const char *filename; /* MMAP: the path ("//anon", "[vdso]", ...); valid until the next
			       * read of its source */
	char comm[PROC_EV_COMM_LEN]; /* EXEC, COMM */
	uint64_t lost;      /* LOST: records lost */
};

/* An event source. fd: a descriptor that polls readable when events wait (-1 when none, as
 * the fake's). read: fills up to max events, oldest first; returns how many (0: none waiting)
 * or -errno. free: releases the source. */
struct proc_source;
struct proc_source_ops {
	int (*fd)(struct proc_source *src);
	int (*read)(struct proc_source *src, struct proc_event *ev, int max);
	void (*free)(struct proc_source *src);
};
struct proc_source {
	const struct proc_source_ops *ops;
};

/* Opens the kernel source on every online CPU (root or CAP_PERFMON; pages: of each ring buffer,
 * a power of two; 0: 16 MiB shared by the CPUs, 64 to 512 pages each, or 64 where the
 * locked-memory limit refuses that). NULL + errno (the perf_event_open or mmap errno). */
struct proc_source *procevents_kernel_new(unsigned pages);
/* The same, reporting only the tasks in (or below) the n cgroup v2 directories dirs (at most
 * PROCEVENTS_MAX_CGROUPS; n 0: every task, as procevents_kernel_new): the kernel leaves the
 * records of other tasks out (perf's cgroup events, PERF_FLAG_PID_CGROUP), so the host's other
 * processes cost nothing here. One ring a CPU: the other cgroups' events write into the
 * first's. A process moved into a cgroup after its fork is learnt from its next record. NULL +
 * errno (-E2BIG for too many; a directory's open error; as procevents_kernel_new). */
#define PROCEVENTS_MAX_CGROUPS 16
struct proc_source *procevents_kernel_new_cgroups(unsigned pages, const char *const *dirs, int n);
/* A source that hands out a copy of the n events (filenames copied too), in order, in reads of
 * at most batch events each (0: all at once). NULL + errno. */
struct proc_source *procevents_fake_new(const struct proc_event *ev, size_t n, int batch);
/* Appends a copy of ev to a fake source (after the events not read yet). 0 or -ENOMEM. */
int procevents_fake_add(struct proc_source *fake, const struct proc_event *ev);

static inline int proc_source_fd(struct proc_source *s) { return s->ops->fd(s); }
static inline int proc_source_read(struct proc_source *s, struct proc_event *ev, int max)
{
	return s->ops->read(s, ev, max);
}
static inline void proc_source_free(struct proc_source *s) { if (s) s->ops->free(s); }

/* Parses one perf record (its perf_event_header first, len bytes in all, as read from a ring
 * buffer opened with sample_id_all and sample_type PERF_SAMPLE_TID|PERF_SAMPLE_TIME) into ev;
 * the filename is copied into name (namelen bytes, NUL-terminated, truncated) and ev->filename
 * points at it. Returns 1 when ev is filled, 0 for a record of no interest (a plain MMAP, a
 * sample, ...), -EINVAL when the record is malformed (a size that does not fit, a string that
 * does not end). */
int procevents_parse(const void *rec, size_t len, struct proc_event *ev, char *name,
		     size_t namelen);

#endif
