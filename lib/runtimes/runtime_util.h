/* What the runtimes' ops have in common, written once: their state's allocation, the stats op
 * (user space's counts plus the BPF walker's by the runtime's tag), the summary line (its head,
 * its counters as the runtime's shape lists them, its refusals), and the command a recording
 * runs looked up in $PATH (is it this runtime's?). A runtime describes its stats struct and its
 * line as data, a struct runtime_stats_shape; its state begins with a struct runtime_head, and
 * runtime_stats and runtime_summary serve as its ops. */
#ifndef FIRN_RUNTIME_UTIL_H
#define FIRN_RUNTIME_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "runtimes/runtime.h"

#define RUNTIME_LINE_COUNTS 12  /* counters a summary line names, at most */
#define RUNTIME_STATS_MAX 1024  /* bytes of a stats struct, at most (runtime_summary's copy) */

/* The shape of a runtime's stats struct (size bytes) and of its summary line. */
struct runtime_stats_shape {
	const char *name;  /* the line's: "firn: NAME: N processes, " */
	unsigned tag;      /* the walker's (sample_source_walker_stats) */
	size_t size;
	/* user space's counts: get fills the whole struct, or (get NULL) the state's own copy at
	 * own_off is copied */
	void (*get)(const struct runtime *rt, void *out);
	size_t own_off;
	/* the walker's nbpf counts by outcome at bpf_off; the processes told to the walker, those
	 * refused, the last refusal's reason (a string) */
	size_t bpf_off, nbpf, processes_off, refused_off, reason_off;
	const char *refused; /* the line's word for them: "refused", "unknown release" */
	/* The line's middle, after its head: "%llu" for each counter (the only conversion), the
	 * counters' offsets in the struct in that order (RUNTIME_BPF, offsetof) */
	const char *line;
	size_t counts[RUNTIME_LINE_COUNTS];
};

/* The members of a struct runtime_stats_shape for stats struct type (with members bpf[nr],
 * processes, refused_member and last_refusal), of the walker tag; fails to compile when bpf
 * holds fewer than nr, or type is over RUNTIME_STATS_MAX. */
#define RUNTIME_STATS_SHAPE(type, tag_, nr, refused_member)                                       \
	.tag = (tag_), .bpf_off = offsetof(type, bpf),                                             \
	.size = sizeof(type) + 0 * sizeof(char[sizeof(type) <= RUNTIME_STATS_MAX ? 1 : -1]),       \
	.nbpf = (nr) +                                                                             \
		0 * sizeof(char[sizeof(((type *)0)->bpf) >= (nr) * sizeof(uint64_t) ? 1 : -1]),   \
	.processes_off = offsetof(type, processes), .refused_off = offsetof(type, refused_member), \
	.reason_off = offsetof(type, last_refusal)
/* The offset of the walker's counter i in stats struct type, for counts[]. */
#define RUNTIME_BPF(type, i) (offsetof(type, bpf) + (i) * sizeof(uint64_t))

/* What a runtime's state begins with (its first member), for the ops below to serve it. */
struct runtime_head {
	const struct runtime_host *h;
	const struct runtime_stats_shape *stats;
};

/* A runtime's zeroed state of size bytes, its struct runtime_head {h, stats} first (the runtime
 * asserts offsetof(..., head) == 0). NULL with errno ENOMEM; the caller frees it. */
void *runtime_state_new(size_t size, const struct runtime_host *h,
			const struct runtime_stats_shape *stats);

/* The stats op of a runtime of shape sh with host h: out (size bytes) gets user space's counts,
 * then the walker's from h's sample source. 0, or -EINVAL when size is not sh->size. */
int runtime_stats_fill(const struct runtime_stats_shape *sh, const struct runtime_host *h,
		       const struct runtime *rt, void *out, size_t size);
/* The stats op of a runtime whose state begins with a struct runtime_head. */
int runtime_stats(const struct runtime *rt, void *out, size_t size);

/* The start of a summary op: buf (len bytes, 1 at least) emptied, st (sh->size bytes) filled by
 * runtime_stats_fill, and when a process ran the runtime or was refused, "firn: NAME: N
 * process(es), " written. Returns the length written (0: nothing to say). */
size_t runtime_summary_start(const struct runtime_stats_shape *sh, const struct runtime_host *h,
			     const struct runtime *rt, void *st, char *buf, size_t len);
/* "WHAT N" and, when n is not 0, ": reason" (the last refusal's), at *off as strput writes. */
void runtime_summary_refused(char *buf, size_t len, size_t *off, const char *what, uint64_t n,
			     const char *reason);
/* The whole line of a runtime with a head but its '\n': start, sh->line with its counters, the
 * refusals. st: room for its stats struct (its shape's size), filled. Returns the length
 * (0: nothing to say; buf ""). */
size_t runtime_summary_line(const struct runtime *rt, void *st, char *buf, size_t len);
/* The summary op of a runtime with a head: its line and '\n'. */
size_t runtime_summary(const struct runtime *rt, char *buf, size_t len);

/* A runtime's table of processes: an array of structs, each beginning with its pid_t. The
 * element of procs (n of them, stride bytes each) whose pid is pid, or NULL. See
 * RUNTIME_PROC_FIND. */
void *runtime_proc_find(const void *procs, size_t n, size_t stride, pid_t pid);
/* RUNTIME_PROC_FIND(arr, n, pid): runtime_proc_find over array arr, typed; fails to compile
 * when its element's member pid is not first. */
#define RUNTIME_PROC_FIND(arr, n, pid_)                                                            \
	__extension__({                                                                            \
		_Static_assert(__builtin_offsetof(__typeof__(*(arr)), pid) == 0, "pid first");     \
		(__typeof__(&(arr)[0]))runtime_proc_find((arr), (n), sizeof(*(arr)), (pid_));     \
	})

/* A new record at the end of a runtime's table of processes (as runtime_proc_find's: *n of
 * them, *cap allocated), zeroed but for its pid; NULL when out of memory. See RUNTIME_PROC_ADD. */
void *runtime_proc_add(void **procs, size_t *n, size_t *cap, size_t stride, pid_t pid);
/* RUNTIME_PROC_ADD(arr, n, cap, pid): runtime_proc_add on array lvalue arr and its size_t
 * lvalues n and cap, typed. */
#define RUNTIME_PROC_ADD(arr, n, cap, pid_)                                                        \
	__extension__({                                                                            \
		_Static_assert(__builtin_offsetof(__typeof__(*(arr)), pid) == 0, "pid first");     \
		void *ra_v_ = (arr);                                                               \
		void *ra_p_ = runtime_proc_add(&ra_v_, &(n), &(cap), sizeof(*(arr)), (pid_));     \
		(arr) = ra_v_;                                                                     \
		(__typeof__(&(arr)[0]))ra_p_;                                                      \
	})

/* Removes record p from a runtime's table of processes (*n of them, stride bytes each): the last
 * one takes its place. See RUNTIME_PROC_DROP. */
void runtime_proc_drop(void *procs, size_t *n, size_t stride, void *p);
/* RUNTIME_PROC_DROP(arr, n, p): runtime_proc_drop on array arr and its size_t lvalue n. */
#define RUNTIME_PROC_DROP(arr, n, p) runtime_proc_drop((arr), &(n), sizeof(*(arr)), (p))

/* The index of the file mapped at e in pid, opened as pid sees it (inside its root: safeopen),
 * among a runtime's files read once each: an array at *files of structs of stride bytes, each
 * beginning with its struct file_id, *n of them (*cap allocated). A file not among them is
 * appended, zeroed but for its id, and read(f, fd) called on it. -1 when it cannot be opened,
 * or out of memory. See RUNTIME_FILE_INDEX. */
ssize_t runtime_file_index(pid_t pid, const struct procmap_entry *e, void **files, size_t *n,
			   size_t *cap, size_t stride, void (*read)(void *f, int fd));
/* RUNTIME_FILE_INDEX(pid, e, arr, n, cap, read): runtime_file_index on array lvalue arr and its
 * size_t lvalues n and cap; fails to compile when its element's member id is not first. */
#define RUNTIME_FILE_INDEX(pid, e, arr, n, cap, read)                                              \
	__extension__({                                                                            \
		_Static_assert(__builtin_offsetof(__typeof__(*(arr)), id) == 0, "id first");       \
		void *rf_v_ = (arr);                                                               \
		ssize_t rf_i_ = runtime_file_index((pid), (e), &rf_v_, &(n), &(cap),              \
						   sizeof(*(arr)), (read));                        \
		(arr) = rf_v_;                                                                     \
		rf_i_;                                                                             \
	})

/* The file a recording's command argv0 runs: argv0 itself when it names a path (has a '/'),
 * else the first executable argv0 in $PATH's folders, written into file (size bytes) — as exec
 * finds it. NULL when none is. */
const char *runtime_command_file(const char *argv0, char *file, size_t size);

#endif
