/* Unwind table cache: tables built once per machine, not once per recording. One file per
 * build id (files without a build id are not cached) in a directory owned by the effective
 * user and closed to others (0700, never a system folder: cache_dir.h): /var/cache/firn/unwind
 * for root, else $XDG_CACHE_HOME/firn/unwind (~/.cache/firn/unwind). A build id is what a file
 * says of itself, so anyone can copy one into a binary of their own: a file also names the file
 * its table was built from (device, inode, size, mtime and owner, as the debug cache does) and
 * is served only for that file, never for another with the same build id. A file is trusted only
 * when it is a regular file (never a symlink) owned by the effective user, not writable by group
 * or others, and its header (magic, version, row size, build id, row count) and rows check out
 * under a CRC-32 of the whole file (header and every row); anything else is ignored (and rebuilt
 * by the caller). Files are written to a temporary name and renamed; the oldest (least recently
 * read) of firn's own table files are removed past the size bound, never another file. */
#ifndef FIRN_UNWIND_CACHE_H
#define FIRN_UNWIND_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "base/fileid.h"
#include "unwind/unwind_table.h"

/* Bump when the rows unwind_table_build produces change meaning: older files are then ignored. */
#define UNWIND_CACHE_VERSION 3 /* 2: the source file's identity and owner; 3: Go's pcsp rows */
#define UNWIND_CACHE_MAX_BYTES (256ull << 20)

struct unwind_cache;

/* The file a table is built from: a cached table stands for this file alone. */
struct unwind_cache_src {
	struct file_id id;
	uint32_t uid; /* its owner */
};

/* The source st describes (the fstat of the file the table is built from). */
struct unwind_cache_src unwind_cache_src_of(const struct stat *st);

/* Opens the cache in dir (created 0700 with its missing parents; NULL: the default above),
 * holding at most max_bytes. NULL + errno: EACCES when dir is a system or home folder (or would
 * be made in one), EPERM when it is not owned by the effective user or is writable by group or
 * others, ELOOP when it is a symlink, ENOENT without a home. */
struct unwind_cache *unwind_cache_open(const char *dir, uint64_t max_bytes);
/* The cache FIRN_UNWIND_CACHE asks for: "0" none, an absolute path that directory, else the
 * default; NULL + errno when disabled (ECANCELED) or unusable (a named folder that is refused
 * is reported once, as a warning). */
struct unwind_cache *unwind_cache_open_env(void);
void unwind_cache_close(struct unwind_cache *c);
/* The default directory into out; 0 or -ENOENT (no XDG_CACHE_HOME nor HOME), -ENAMETOOLONG. */
int unwind_cache_default_dir(char *out, size_t len);
/* Reads the table of build_id (lowercase hex) built from src into *t (rows owned by t; release
 * with unwind_table_release) and marks it recently used. 0; -ENOENT (not cached), -ELOOP (a
 * symlink), -EINVAL (not a regular file), -EPERM (owner or mode), -EBADMSG (bad header, rows
 * or checksum), -ESTALE (built from another file: another identity or owner), -ENOMEM: t is
 * then empty. */
int unwind_cache_get(struct unwind_cache *c, const char *build_id,
		     const struct unwind_cache_src *src, struct unwind_table *t);
/* Stores t as build_id's table built from src (atomically: temp file + rename), then evicts
 * the oldest files past the bound. 0 or -errno (-EINVAL: build_id empty or too long). */
int unwind_cache_put(struct unwind_cache *c, const char *build_id,
		     const struct unwind_cache_src *src, const struct unwind_table *t);
/* Parses a cache file's bytes (the reader behind unwind_cache_get): 0 and *t filled, or
 * -EBADMSG, -ESTALE, -ENOMEM. build_id, src: the id and source the file must name. */
int unwind_cache_decode(const void *buf, size_t len, const char *build_id,
			const struct unwind_cache_src *src, struct unwind_table *t);

#endif
