/* Per-process values by pid: the one sorted index that the process table (lib/proc/procmap.h)
 * and the symbolizer's snapshots (lib/symbolize/snapshot.c) keep their processes in, instead of
 * each writing its own binary search, insertion and removal. Pids sit in an array of their own,
 * so a lookup's binary search reads one cache-dense array; the values are the caller's pointers
 * (the index owns the two arrays, never the values). */
#ifndef FIRN_PIDINDEX_H
#define FIRN_PIDINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct pidindex {
	pid_t *pids;  /* sorted, each once */
	void **vals;  /* vals[i] is pids[i]'s (never NULL) */
	size_t n, cap_pids, cap_vals;
};

/* An empty index (a zeroed struct is one too). */
void pidindex_init(struct pidindex *x);
/* Frees the arrays (not the values); x is empty after. */
void pidindex_release(struct pidindex *x);
/* pid's value, NULL when pid has none. O(log n). */
void *pidindex_get(const struct pidindex *x, pid_t pid);
/* Sets pid's value to v (not NULL); the value it replaces in *old (NULL when pid had none; old
 * may be NULL when the caller knows there is none). 0, or -ENOMEM with x unchanged. */
int pidindex_put(struct pidindex *x, pid_t pid, void *v, void **old);
/* Removes pid; returns its value (NULL: it had none). */
void *pidindex_take(struct pidindex *x, pid_t pid);
/* Keeps the values keep(ctx, v) is true of, in order; returns how many went (each handed to
 * keep first, which frees it when it returns false). */
size_t pidindex_filter(struct pidindex *x, bool (*keep)(void *ctx, void *v), void *ctx);

#endif
