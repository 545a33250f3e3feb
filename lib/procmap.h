/* Process memory maps: /proc/PID/maps (or any maps text) parsed into entries sorted by address.
 * Every string an entry points to lives in the procmap's own buffer until procmap_release. */
#ifndef FIRN_PROCMAP_H
#define FIRN_PROCMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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
	bool r, w, x, shared;      /* perms "rwxp" / "rwxs" */
	bool deleted;              /* the path ended in " (deleted)" (removed from path) */
	enum procmap_kind kind;
	const char *path;          /* as in maps without " (deleted)"; "" for anonymous mappings */
};

struct procmap {
	struct procmap_entry *entries; /* sorted by start */
	size_t n, cap;
	char *buf;                     /* owns the text every path points into */
};

/* Reads /proc/PID/maps into m (initialized here); 0 or -errno (-ENOENT: no such process). A
 * process with no user memory (kernel thread, zombie) gives 0 entries. */
int procmap_read(struct procmap *m, pid_t pid);
/* Parses maps text (copied) into m (initialized here); 0, -EINVAL on a malformed line, -ENOMEM. */
int procmap_parse(struct procmap *m, const char *text, size_t len);
/* Returns the entry containing addr, or NULL. */
const struct procmap_entry *procmap_find(const struct procmap *m, uint64_t addr);
void procmap_release(struct procmap *m);

#endif
