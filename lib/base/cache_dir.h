/* cache_dir: a directory of cache files that firn trusts, shared by the unwind table cache and
 * the debug section cache. The directory is owned by the effective user and closed to others
 * (created 0700 with its missing parents): /var/cache/firn/LEAF for root, else
 * $XDG_CACHE_HOME/firn/LEAF (~/.cache/firn/LEAF). It is never a system folder ("/", a folder
 * right under it such as /usr, /tmp or /root, anything under /usr, /etc, /bin, /sbin, /lib*,
 * /boot, /dev, /proc, /sys) nor the user's home folder, and no folder is made in one. A file in
 * it is trusted only when it is a regular file (never a symlink) owned by the effective user and
 * not writable by group or others. Files are written to a temporary name and renamed.
 * Only firn's own entries count towards the size bound and are removed past it, least recently
 * used (oldest mtime: readers touch what they use) first, until they hold at most the low-water
 * mark, 90 % of the bound (CACHE_DIR_LOW_WATER: a full cache is not listed again at every save,
 * only after a tenth of the bound was written): a file named as the kind names its
 * files (a build id in lowercase hex, then the suffix), trusted as above, whose first bytes are
 * the kind's magic. Anything else in the folder (a user's myapp.dbg, a foreign file under a
 * build-id name) is neither counted nor removed. */
#ifndef FIRN_CACHE_DIR_H
#define FIRN_CACHE_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/uio.h>

/* What eviction past a bound of max bytes leaves at most: 90 % of it. */
#define CACHE_DIR_LOW_WATER(max) ((max) - (max) / 10)

/* One kind of cache (a static description): where it lives and how its files look. */
struct cache_kind {
	const char *env;    /* the variable naming its folder, e.g. "FIRN_UNWIND_CACHE" */
	const char *leaf;   /* the default folder's last part, e.g. "unwind" */
	const char *suffix; /* its files' name ending, e.g. ".tbl" */
	const char *magic;  /* its files' first magic_len bytes */
	size_t magic_len;
	size_t id_max;      /* build ids in file names are shorter than this */
	/* a file of fewer than min_size bytes, or (max_size not 0) more than max_size, is refused
	 * when opened (cache_dir_open_file: -EBADMSG) */
	uint64_t min_size, max_size;
};

struct cache_dir {
	int dirfd;
	const struct cache_kind *kind;
	uint64_t max_bytes, bytes; /* bytes: the entries' sizes as last counted plus those written */
	bool counted;              /* bytes is known (counted at the first put, not at open) */
	unsigned seq;              /* temporary names */
};

/* The default directory of leaf into out; 0 or -ENOENT (no XDG_CACHE_HOME nor HOME),
 * -ENAMETOOLONG. */
int cache_dir_default(char *out, size_t len, const char *leaf);
/* Opens dir (NULL: kind's default) as a cache of kind's files holding at most max_bytes.
 * 0 or -EACCES (a system folder or the home folder, or a missing part would be made in one),
 * -EPERM (not owned by the effective user, or writable by group or others), -ELOOP (a
 * symlink), -ENOENT (no home), -EINVAL (dir not absolute), other -errno. */
int cache_dir_open(struct cache_dir *cd, const char *dir, const struct cache_kind *kind,
		   uint64_t max_bytes);
/* Opens the cache kind->env asks for: "0" none (-ECANCELED), an absolute path that folder,
 * else the default; errors as cache_dir_open's. A folder the variable names that cannot be used
 * is reported once per process (a DIAG_WARN line; *warned: the caller's process-wide flag). */
int cache_dir_open_env(struct cache_dir *cd, const struct cache_kind *kind, uint64_t max_bytes,
		       int *warned);
/* Why cache_dir_open refused a folder, in words (a static string). */
const char *cache_dir_strerror(int err);
void cache_dir_close(struct cache_dir *cd);
/* A cache on the heap, for the caches over it (debug_cache, unwind_cache: each handle is one):
 * opened as cache_dir_open_env does when env (dir unused; *warned as there), else as
 * cache_dir_open does. NULL + errno (their -errno, or ENOMEM). */
struct cache_dir *cache_dir_new(const char *dir, bool env, const struct cache_kind *kind,
				uint64_t max_bytes, int *warned);
/* Closes and frees a cache_dir_new cache (NULL: nothing). */
void cache_dir_free(struct cache_dir *cd);
/* Defines a cache handle over cache_dir_new, struct NAME, and its three functions as the
 * cache's header declares them: struct NAME *NAME_open(const char *dir, uint64_t max_bytes) (dir NULL: the
 * default), struct NAME *NAME_open_env(void) (as cache_dir_open_env, bounded by MAX; a refused
 * folder is reported once a process) and void NAME_close(struct NAME *). struct NAME's only
 * member is its struct cache_dir, dir, so cache_dir_new's pointer is the handle. One definition for
 * every cache (debug_cache, unwind_cache) instead of a copy in each. */
#define CACHE_DIR_HANDLE(NAME, KIND, MAX)                                                     \
	struct NAME {                                                                          \
		struct cache_dir dir;                                                          \
	};                                                                                     \
	struct NAME *NAME##_open(const char *dir, uint64_t max_bytes)                          \
	{                                                                                      \
		return (struct NAME *)cache_dir_new(dir, false, &(KIND), max_bytes, NULL);     \
	}                                                                                      \
	struct NAME *NAME##_open_env(void)                                                     \
	{                                                                                      \
		static int warned; /* process-wide: the cache is opened per file */            \
		return (struct NAME *)cache_dir_new(NULL, true, &(KIND), (MAX), &warned);       \
	}                                                                                      \
	void NAME##_close(struct NAME *c)                                                      \
	{                                                                                      \
		cache_dir_free((struct cache_dir *)c);                                         \
	}
/* Whether build_id can name a file of kind: not empty, lowercase hex, shorter than id_max. */
bool cache_dir_id_ok(const struct cache_kind *kind, const char *build_id);
/* Opens build_id's cache file for reading, into *st: fd, or -ENOENT (none, or an id that
 * cannot name one), -ELOOP (a symlink), -EINVAL (not a regular file), -EPERM (owner or mode),
 * -EBADMSG (a size out of the kind's bounds), other -errno. */
int cache_dir_open_file(struct cache_dir *cd, const char *build_id, struct stat *st);
/* What cache_dir_get hands a file's bytes to, buf[0..len) (cache_dir_get's, freed after): sets
 * *used when the file served, which marks it recently used; its return value is
 * cache_dir_get's. */
typedef int cache_dir_read_fn(void *ctx, const void *buf, size_t len, bool *used);
/* Reads build_id's whole file (as cache_dir_open_file opens it) and hands its bytes to fn; a
 * file fn used is touched (its times now), so eviction takes it last. fn's return value, or
 * cache_dir_open_file's -errno, -ENOMEM, -EBADMSG (shorter than its size), another -errno of
 * the read (fn not called then). */
int cache_dir_get(struct cache_dir *cd, const char *build_id, cache_dir_read_fn *fn, void *ctx);
/* Stores the bytes of iov[0..n) as build_id's file (temp file + rename), then, past the bound,
 * evicts the least recently used entries down to CACHE_DIR_LOW_WATER (see above: never a file
 * firn did not write). 0,
 * -EINVAL (an id that cannot name a file) or -errno. */
int cache_dir_put(struct cache_dir *cd, const char *build_id, const struct iovec *iov, int n);

#endif
