/* The DWARF rows array with its first chunk already in place when the programs load. Putting a
 * map into an array of maps waits an RCU grace period (8-20 ms on a busy host: the kernel's
 * synchronize_rcu after every update of a map-in-map from user space). Done by the unwinder
 * once its first table is built, that wait lay on the start-up's path; done here from a thread
 * started before the programs are loaded, it passes while the verifier works (30-50 ms). */
#ifndef FIRN_ROWSFIRST_H
#define FIRN_ROWSFIRST_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct bpf_map;

/* rows_fd: the rows array created here (libbpf holds a copy), owned here until the insertion
 * is done; chunk_fd: chunk 0 (BPF_F_MMAPABLE, bpf/firn.h's chunk shape), owned here; -1 when
 * none. */
struct rows_first {
	int rows_fd, chunk_fd;
	bool inserting; /* thread runs */
	pthread_t thread;
	int err;
};

/* Before the object loads: creates the rows array of outer's size (its max_entries, set by
 * the caller) with chunk 0 as its inner template, makes libbpf use it for outer
 * (bpf_map__reuse_fd), and starts putting chunk 0 in slot 0 from a thread. 0, or -errno with
 * nothing held (the object then creates outer itself, as without this). */
int rows_first_start(struct rows_first *f, struct bpf_map *outer);
/* Waits for the insertion. 0, or -errno with chunk 0 closed (chunk_fd -1: the unwinder creates
 * its chunks as before). Without a start: 0. */
int rows_first_finish(struct rows_first *f);
/* Closes what f holds (after rows_first_finish, or instead of it: waits first). */
void rows_first_release(struct rows_first *f);

#endif
