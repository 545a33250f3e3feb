/* DWARF unwinding, user-space side: builds unwind tables (lib/unwind/unwind_table) once per file —
 * keyed by (device, inode, size, mtime); copies with the same build id share rows — copies their
 * rows into the BPF rows array (bounded by max_rows), names each loaded table by file to the BPF
 * unwinder (which finds mappings nobody described yet with the kernel's VMA lookup) and describes
 * each process's executable mappings in a shared pool. Files whose tables do not fit are left to
 * frame pointers, and counted. A table built (not read from the on-disk cache) is written there
 * by a thread of the unwinder's own once its rows are in the kernel (unwinder_free waits for
 * the writes): the caller's thread never waits for the cache's disk. */
#ifndef FIRN_UNWIND_H
#define FIRN_UNWIND_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct unwinder;

struct unwinder_stats {
	uint64_t processes, files, rows, bytes; /* loaded */
	uint64_t max_rows;
	uint64_t no_table;      /* executable mappings without CFI (no .eh_frame) */
	uint64_t over_limit;    /* mappings left to frame pointers: the memory limit was reached */
	uint64_t too_many_maps; /* mappings beyond FIRN_MAX_UMAPS of one process (left to the
				 * BPF unwinder's own VMA lookup) */
	uint64_t no_slot;       /* process descriptions left out: the mappings pool was full */
	uint64_t build_ns;      /* time spent building tables */
	uint64_t cached;        /* tables read from the on-disk cache instead of built */
};

/* rows_fd: the BPF array of row chunks (bpf/firn.h FIRN_ROWS_CHUNK: the unwinder creates each
 * as tables fill the one before, up to max_rows rows); first_chunk_fd: chunk 0, already in
 * rows_fd's slot 0 (put there while the programs loaded, so that the first tables wait for no
 * insertion), the caller's (the unwinder keeps a copy), or -1; pids_fd: the BPF hash pid →
 * struct firn_pid_maps (its run in the pool); umaps_fd: the BPF array of max_umaps struct firn_umap
 * (the pool every process's mappings are described in, up to FIRN_MAX_UMAPS each); files_fd:
 * the BPF hash of loaded tables by file (struct firn_file_key → struct firn_file), -1 for
 * none. The vdso's table is loaded at once. NULL + errno. */
struct unwinder *unwinder_new(int rows_fd, int first_chunk_fd, uint32_t max_rows, int pids_fd,
			      int umaps_fd, uint32_t max_umaps, int files_fd);
void unwinder_free(struct unwinder *u);
/* Makes the rows loaded so far reachable by the BPF unwinder before it runs on them: until this
 * is called the row chunks go into rows_fd from a thread (each insertion into an array of maps
 * waits an RCU grace period, 8-20 ms on a busy host: the start-up goes on meanwhile), after
 * it at once. Call it before sampling starts. 0 or -errno (a chunk could not be put in place:
 * tables in it unwind nothing). */
int unwinder_settle(struct unwinder *u);
/* (Re)describes pid's executable mappings to the BPF unwinder, building the tables it lacks —
 * or, when lazy, only the mappings whose tables are already built (system-wide recordings: most
 * libraries of most processes are never sampled). 0 or -errno (-ENOENT: the process is gone). */
int unwinder_add_process(struct unwinder *u, pid_t pid, bool lazy);
/* The same from pid's mappings as the caller's process model has them (no /proc read; a file
 * whose table is built already is known by its device and inode, without opening it). */
struct procmap;
struct procmap_entry;
int unwinder_add_process_maps(struct unwinder *u, pid_t pid, const struct procmap *pm, bool lazy);
/* Loads the table of the file that the executable mapping e of pid maps (e from the caller's
 * process model: a side-band record just read) and names the file to the BPF unwinder, without
 * describing pid: the kernel finds the mapping itself and takes its rows by file. For a process
 * already described that maps new code (dlopen): one file, not every mapping again. 0, -ENOENT
 * (no table: not a file's code, no CFI, or the file is gone), -errno. */
int unwinder_load_mapping(struct unwinder *u, pid_t pid, const struct procmap_entry *e);
/* Frees pid's mappings in the pool (the process has exited); its files' tables stay. 0 or
 * -ENOENT. */
int unwinder_remove_process(struct unwinder *u, pid_t pid);
/* Builds the table of the file mapped at pc in pid (the unwinder met code it had no table for),
 * then describes pid lazily; pc 0: only describes it (the unwinder met mappings with tables that
 * the description lacks). 0 or -errno. */
int unwinder_add_code(struct unwinder *u, pid_t pid, uint64_t pc);
/* The same from pid's mappings as the caller's process model has them. */
int unwinder_add_code_maps(struct unwinder *u, pid_t pid, uint64_t pc, const struct procmap *pm);
/* Builds the tables of pid's mappings whose file name starts with one of prefixes (NULL-ended
 * list, e.g. "libc.so", "ld-linux"), without describing pid: for files nearly every process maps. */
int unwinder_preload(struct unwinder *u, pid_t pid, const char *const *prefixes);
/* Builds ahead the tables of what an exec of file will map — the program (PATH lookup as execvp
 * does; a "#!" script's interpreter, one level), its ELF interpreter and its DT_NEEDED libraries
 * (RUNPATH and the default directories), at most 64 files — so that the BPF unwinder finds them
 * (by file) from the process's first sample. 0 or -ENOENT (no such program). */
int unwinder_prepare_exec(struct unwinder *u, const char *file);
void unwinder_get_stats(const struct unwinder *u, struct unwinder_stats *st);

#endif
