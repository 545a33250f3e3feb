/* Debug section cache: the decompressed bytes of a debug file's compressed DWARF sections, kept
 * on disk so that they are inflated once per machine, not once per recording. One file per
 * build id in a cache_dir (cache_dir.h: the same directory and file rules as the unwind table
 * cache): /var/cache/firn/debug for root, else $XDG_CACHE_HOME/firn/debug. A file names the
 * build id and the identity of the debug file it was made from (device, inode, size, mtime) and,
 * per section, its name, compressed size and the CRC-32 of its bytes; a header checksum covers
 * all of that. A file is served only when all of it matches, every section's bytes included (a
 * damaged body is not used: the sections are inflated again and the file rewritten), so a changed
 * or damaged file is never answered with stale or wrong bytes. The bodies are checked at a
 * file's first use after it was written, then trusted while the cache file keeps the identity
 * (device, inode, size, mtime) it had after that check, recorded in an extended attribute of
 * the file: a file replaced or written to since is checked again (30 s system-wide, checking
 * every use was 11 % of firn's time, and it brought every page of the sections into memory). Readers map the file read-only:
 * its pages are shared and evictable. (Measured on libc6-dbg, dwarfsym_new_fd: 42 ms inflating
 * and writing, 39 ms before the checksums; 2.8 ms mapped, 1.1 ms without checking the bodies:
 * zlib's crc32 over libc's 8.5 MB of sections, about 4 GB/s.)
 * Only firn's own .dbg files are evicted past the bound (cache_dir.h). */
#ifndef FIRN_DEBUG_CACHE_H
#define FIRN_DEBUG_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/fileid.h" /* the debug file a cache file stands for: its struct file_id */

/* Bump when the file format changes: older files are then ignored. */
#define DEBUG_CACHE_VERSION 2 /* 2: per-section checksums */
#define DEBUG_CACHE_MAX_BYTES (512ull << 20)
#define DEBUG_CACHE_MAX_SECTS 16
#define DEBUG_CACHE_NAME_LEN 24 /* a section name's room, with its NUL */

struct debug_cache;


/* One decompressed section. */
struct debug_cache_sect {
	char name[DEBUG_CACHE_NAME_LEN]; /* e.g. ".debug_info" */
	uint64_t zsize;                  /* its size in the debug file (compressed) */
	const void *data;                /* its decompressed bytes */
	uint64_t size;
};

/* A cache file mapped for reading (debug_cache_map); sects point into the mapping. */
struct debug_cache_file {
	void *map;
	size_t len;
	uint32_t nsects;
	bool checked; /* the sections' bytes were checked against their checksums (false: trusted
		       * by the cache file's unchanged identity, see above) */
	struct debug_cache_sect sects[DEBUG_CACHE_MAX_SECTS];
};

/* Opens the cache in dir (NULL: the default above) holding at most max_bytes. NULL + errno as
 * cache_dir_open's. */
struct debug_cache *debug_cache_open(const char *dir, uint64_t max_bytes);
/* The cache FIRN_DEBUG_CACHE asks for: "0" none, an absolute path that directory, else the
 * default; NULL + errno when disabled (ECANCELED) or unusable (a named folder that is refused
 * is reported once, as a warning). */
struct debug_cache *debug_cache_open_env(void);
void debug_cache_close(struct debug_cache *c);
/* Maps build_id's file (lowercase hex) into *f when it stands for id, and marks it recently
 * used (and checked: its stamp). 0; -ENOENT (not cached), -ELOOP, -EINVAL, -EPERM (see cache_dir_open_file), -EBADMSG
 * (bad header, another file's, sections outside the file or not matching their checksums),
 * -errno of mmap: f is then empty.
 * Release with debug_cache_unmap. */
int debug_cache_map(struct debug_cache *c, const char *build_id,
		    const struct file_id *id, struct debug_cache_file *f);
void debug_cache_unmap(struct debug_cache_file *f);
/* The bytes of section name with compressed size zsize in f, *size set; NULL when absent. */
const void *debug_cache_find(const struct debug_cache_file *f, const char *name, uint64_t zsize,
			     uint64_t *size);
/* Stores the n sections as build_id's file for id (atomically), evicting the oldest files past
 * the bound. 0 or -errno (-EINVAL: bad build id, n too large, a name too long). */
int debug_cache_put(struct debug_cache *c, const char *build_id,
		    const struct file_id *id, const struct debug_cache_sect *s, size_t n);
/* Checks a cache file's bytes (the reader behind debug_cache_map) and points f->sects into buf
 * (f->map stays NULL): 0 or -EBADMSG. */
int debug_cache_decode(const void *buf, size_t len, const char *build_id,
		       const struct file_id *id, struct debug_cache_file *f);

#endif
