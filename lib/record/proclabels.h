/* Per-process labels of samples beyond pid and comm (record --process-labels, and --push):
 * "exe" (the program's path), "cgroup" (its cgroup v2 path) and "container_id" (lib/proc/cgroup.h's,
 * where the path names a container), read from /proc while the process lives (its first
 * sample, its exec) and kept until it is forgotten (after its samples are parked). A process
 * whose /proc could not be read has none of them. */
#ifndef FIRN_PROCLABELS_H
#define FIRN_PROCLABELS_H

#include <stdint.h>
#include <sys/types.h>

#include "model/profile.h"
#include "source/procdispatch.h"

#define PROCLABELS_MAX 3 /* labels proclabels_fill adds at most */

struct proclabels;

/* An empty table; NULL + errno. */
struct proclabels *proclabels_new(void);
/* Reads pid's exe and cgroup now (again after an exec: a new program). 0 or -errno
 * (-ENOENT: the process is gone; -ENOMEM). */
int proclabels_note(struct proclabels *t, pid_t pid);
/* Writes pid's labels into out (PROCLABELS_MAX at most), their keys and values interned in p:
 * how many (0 for a process not noted), or -ENOMEM. */
int proclabels_fill(void *t, uint32_t pid, struct profile *p, struct profile_label *out);
/* Its process listener (ctx: t), for procdispatch_listen: a process is noted at its first
 * sample and at each exec (one gone already has pid and comm only). */
struct procdispatch_listener proclabels_listener(struct proclabels *t);
/* Forgets pid (nothing when it is not there). */
void proclabels_forget(struct proclabels *t, pid_t pid);
void proclabels_free(struct proclabels *t);

#endif
