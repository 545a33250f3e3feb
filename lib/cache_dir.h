/* cache_dir: a directory of cache files that firn trusts, shared by the unwind table cache and
 * the debug section cache. The directory is owned by the effective user and closed to others
 * (created 0700 with its missing parents): /var/cache/firn/LEAF for root, else
 * $XDG_CACHE_HOME/firn/LEAF (~/.cache/firn/LEAF). A file in it is trusted only when it is a
 * regular file (never a symlink) owned by the effective user and not writable by group or
 * others. Files are written to a temporary name and renamed; the least recently used files
 * (oldest mtime: readers touch what they use) are removed past the size bound. */
#ifndef FIRN_CACHE_DIR_H
#define FIRN_CACHE_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/uio.h>

struct cache_dir {
	int dirfd;
	const char *suffix;        /* the cache files' name ending (a static string) */
	uint64_t max_bytes, bytes; /* bytes: the files' sizes as last counted plus those written */
	unsigned seq;              /* temporary names */
};

/* The default directory of leaf into out; 0 or -ENOENT (no XDG_CACHE_HOME nor HOME),
 * -ENAMETOOLONG. */
int cache_dir_default(char *out, size_t len, const char *leaf);
/* Opens dir (NULL: leaf's default) as a cache of files ending in suffix holding at most
 * max_bytes. 0 or -EPERM (dir not owned by the effective user, or writable by group or others),
 * -ELOOP (a symlink), -ENOENT (no home), other -errno. */
int cache_dir_open(struct cache_dir *cd, const char *dir, const char *leaf, const char *suffix,
		   uint64_t max_bytes);
void cache_dir_close(struct cache_dir *cd);
/* The name of build_id's cache file (the id, then suffix) into out (len bytes); false when the
 * id is empty, not lowercase hex, id_max characters or longer, or out is too small. */
bool cache_dir_file_name(const char *build_id, size_t id_max, const char *suffix, char *out,
			 size_t len);
/* Opens the cache file name for reading, into *st: fd, or -ENOENT, -ELOOP (a symlink),
 * -EINVAL (not a regular file), -EPERM (owner or mode), other -errno. */
int cache_dir_open_file(struct cache_dir *cd, const char *name, struct stat *st);
/* Stores the bytes of iov[0..n) as name (temp file + rename), then evicts the oldest files past
 * the bound. 0 or -errno. */
int cache_dir_put(struct cache_dir *cd, const char *name, const struct iovec *iov, int n);

#endif
