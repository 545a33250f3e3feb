/* Process memory maps: /proc/PID/maps (or any maps text) parsed into entries sorted by address,
 * or built one mapping at a time from the kernel's mmap records; and the process table, the one
 * model of every process's executable mappings that the recorder keeps, fed by process events
 * (lib/proc/procevents.h) and, for a process that existed before the events started, by one read of
 * its /proc/PID/maps.
 * Every string an entry points to lives in the procmap's own storage until procmap_release. */
#ifndef FIRN_PROCMAP_H
#define FIRN_PROCMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/pidindex.h"

/* What backs a mapping: a file, nothing, or one of the kernel's pseudo paths ("[vdso]", ...). */
enum procmap_kind {
	PROCMAP_FILE = 0, /* path is a file ("/usr/lib/libc.so.6", "/memfd:jit (deleted)") */
	PROCMAP_ANON,     /* no path */
	PROCMAP_VDSO,     /* "[vdso]" */
	PROCMAP_HEAP,     /* "[heap]" */
	PROCMAP_STACK,    /* "[stack]" (and old kernels' "[stack:TID]") */
	PROCMAP_VSYSCALL, /* "[vsyscall]" */
	PROCMAP_PSEUDO,   /* any other "[...]": "[vvar]", "[anon:name]", "[uprobes]" */
};

struct procmap_entry {
	uint64_t start, end;       /* [start, end) */
	uint64_t offset;           /* file offset of start */
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	uint64_t ino_generation;   /* the inode's generation (0 for files an image tool wrote) */
	bool from_record;          /* made from an mmap record: ino_generation is the kernel's */
	bool r, w, x, shared;      /* perms "rwxp" / "rwxs" */
	bool deleted;              /* the path ended in " (deleted)" (removed from path) */
	enum procmap_kind kind;
	const char *path;          /* as in maps without " (deleted)"; "" for anonymous mappings */
};

struct procmap {
	struct procmap_entry *entries; /* sorted by start, not overlapping */
	size_t n, cap;
	char *buf;                     /* owns the text every parsed path points into */
	char **paths;                  /* owns the paths of added entries (procmap_add) */
	size_t npaths, cap_paths;
};

/* Reads /proc/PID/maps into m (initialized here); 0 or -errno (-ENOENT: no such process). A
 * process with no user memory (kernel thread, zombie) gives 0 entries. */
int procmap_read(struct procmap *m, pid_t pid);
/* Parses maps text (copied) into m (initialized here); 0, -EINVAL on a malformed line, -ENOMEM. */
int procmap_parse(struct procmap *m, const char *text, size_t len);
/* Returns the entry containing addr, or NULL. */
const struct procmap_entry *procmap_find(const struct procmap *m, uint64_t addr);

/* Whether m has executable memory that no file backs (anonymous or "[anon:NAME]"): where JIT
 * compilers put their code. */
bool procmap_runs_jit(const struct procmap *m);
void procmap_release(struct procmap *m);
/* An empty map (what procmap_add starts from). */
void procmap_init(struct procmap *m);
/* Adds a copy of e (its path copied) to m, as the kernel does on mmap: the parts of existing
 * entries that e overlaps go. 0 or -ENOMEM (m unchanged). */
int procmap_add(struct procmap *m, const struct procmap_entry *e);
/* Makes dst (initialized here) a copy of src, keeping only the executable entries when
 * exec_only. 0 or -ENOMEM. */
int procmap_copy(struct procmap *dst, const struct procmap *src, bool exec_only);
/* The entry an mmap record describes, as maps would show it: its path (the record's filename;
 * "" for "//anon", " (deleted)" removed) copied into buf (len bytes) and pointed at. */
struct proc_event;
struct procmap_entry procmap_entry_of_event(const struct proc_event *ev, char *buf, size_t len);

/* A process of the table: its executable mappings as of the last event. */
struct proctab_proc {
	pid_t pid;
	struct procmap image;
	struct procmap prev; /* the image before its last exec (empty when none was known) */
	uint64_t execs;      /* how many execs the events showed */
	uint64_t exec_time;  /* the event time of the last one */
	uint64_t exit_time;  /* the event time of its exit; 0 while it lives */
	uint64_t read_ns;    /* when its image was read from /proc (mono_ns; 0: the records made it,
			      * or an exec since replaced it) */
	/* the process dispatcher's (lib/source/procdispatch.c), kept when the image is read from
	 * /proc again: the sample source reported the process, an exec record of it waits to be
	 * told, the times of the execs each stream reported that the other has not (yet), and of
	 * the exec told last */
	struct proctab_heard {
		bool sampled, exec_pending;
		uint8_t nrec, nsrc;
		uint64_t rec[4], src[4];
		uint64_t told_exec_ns;
	} heard;
};

/* The process table. Processes are sorted by pid. */
struct proctab {
	struct pidindex procs; /* pid -> struct proctab_proc * (owned); procs.n of them */
	uint64_t lost;       /* records the kernel lost (the table may lack changes) */
	uint64_t proc_reads; /* /proc/PID/maps reads (processes older than the events) */
};

void proctab_init(struct proctab *t);
void proctab_release(struct proctab *t);
/* Applies one event: EXEC empties pid's image (the old one kept as prev), MMAP adds to it (a process not known yet is
 * read from /proc first, when read_unknown, else starts empty), FORK of a process copies its
 * parent's image (read from /proc when the parent is not known and read_unknown), EXIT of a
 * process (tid == pid) marks it ended; thread FORK/EXIT and COMM change nothing. Returns the pid
 * whose image changed (EXEC, MMAP, process FORK), 0 when none, or -ENOMEM. */
int proctab_apply(struct proctab *t, const struct proc_event *ev, bool read_unknown);
/* pid's entry, or NULL when the table does not know it. */
struct proctab_proc *proctab_find(const struct proctab *t, pid_t pid);
/* Reads pid's executable mappings from /proc/PID/maps into the table (replacing what it had):
 * for a process that existed before the events started. 0 or -errno (-ENOENT: no such process;
 * -ESRCH: it has no mappings, a zombie). */
int proctab_read(struct proctab *t, pid_t pid);
/* Forgets the processes that ended before event time `before` (their snapshots live in the
 * symbolizer by then); returns how many went. */
size_t proctab_sweep(struct proctab *t, uint64_t before);

#endif
