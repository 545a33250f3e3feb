/* debugpkg_cache: debugpkg_find's answers on disk (issue 51). Finding a file's package reads
 * every dpkg .list and apt's package lists (~30 MB here, 4-6 % of a recording's CPU at its end);
 * the answer changes only when dpkg installs or removes something or apt updates its lists. A
 * cache file per (path, dpkg and apt folders) holds the answer (a hint, or "none") with the
 * identity (device, inode, size, mtime) of the file, of the dpkg info folder, of dpkg's status
 * and of apt's lists folder when it was found: served only while all four are unchanged (an
 * install or removal renames a .list into the folder and rewrites the status; apt update
 * renames its lists into theirs). Files live in a cache_dir of kind "debugpkg"
 * ($FIRN_DEBUGPKG_CACHE: "0" none, a folder, else the default), one fixed-size record each,
 * bounded by DEBUGPKG_CACHE_MAX_BYTES (least recently used evicted). */
#ifndef FIRN_DEBUGPKG_CACHE_H
#define FIRN_DEBUGPKG_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "base/fileid.h"
#include "elf/debugpkg.h"

#define DEBUGPKG_CACHE_MAX_BYTES ((uint64_t)4 << 20) /* ~900 files' answers */
#define DEBUGPKG_CACHE_PATH_MAX 4096
#define DEBUGPKG_CACHE_HINT_MAX 160

/* What an answer is valid for: the file's identity and the three of dpkg's and apt's (a
 * missing one: all zero). */
struct debugpkg_key {
	struct file_id file, dpkg_info, dpkg_status, apt_lists;
};

struct debugpkg_cache; /* a cache_dir */

/* Opens dir (NULL: the default folder) as the cache, bounded by max_bytes; NULL + errno as
 * cache_dir_open's. */
struct debugpkg_cache *debugpkg_cache_open(const char *dir, uint64_t max_bytes);
/* Opens the cache $FIRN_DEBUGPKG_CACHE asks for; NULL + errno (ECANCELED: "0"). */
struct debugpkg_cache *debugpkg_cache_open_env(void);
void debugpkg_cache_close(struct debugpkg_cache *c);

/* debugpkg_find through the cache c (NULL: none): a stored answer whose key matches path's
 * now, else debugpkg_find's, stored. Returns as debugpkg_find does (-ENOENT: no package, from
 * the cache or not). */
int debugpkg_cache_find(struct debugpkg_cache *c, const struct debugpkg_dirs *dirs,
			const char *path, char *hint, size_t size);

/* The parser of a cache file's bytes buf[0..len) (any bytes; bounds-checked, fuzzed): the
 * answer for path under key into hint (size bytes). 0 (a hint), -ENOENT (the stored answer is
 * "no package"), -EBADMSG (not a record, or one for another path or key), -ENAMETOOLONG. */
int debugpkg_cache_decode(const void *buf, size_t len, const char *path,
			  const struct debugpkg_key *key, char *hint, size_t size);
/* The record of that answer (err 0 with hint, or -ENOENT) into out (DEBUGPKG_CACHE_RECORD
 * bytes): 0, or -ENAMETOOLONG (path or hint too long to store). */
int debugpkg_cache_encode(const char *path, const struct debugpkg_key *key, int err,
			  const char *hint, void *out);
#define DEBUGPKG_CACHE_RECORD (16 + 4 * 40 + DEBUGPKG_CACHE_PATH_MAX + DEBUGPKG_CACHE_HINT_MAX)

#endif
