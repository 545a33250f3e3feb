/* A file's identity: its device, inode, size and modification time, as blazesym keys its file
 * caches. The same file, unchanged, keeps it; a file replaced (a new inode) or rewritten in place
 * (a new size or mtime) gets another. The symbolizer's file cache, the unwinder's tables, the
 * Python probe cache and the debug section cache (where it is part of the file format: five
 * 64-bit fields, no padding) all key by it. */
#ifndef FIRN_FILEID_H
#define FIRN_FILEID_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "base/hash.h"
#include "base/vec.h"

struct file_id {
	uint64_t dev, ino, size;
	int64_t mtime_sec, mtime_nsec;
};

/* The identity of the file st describes. */
static inline struct file_id file_id_of(const struct stat *st)
{
	return (struct file_id){ (uint64_t)st->st_dev, (uint64_t)st->st_ino, (uint64_t)st->st_size,
				 (int64_t)st->st_mtim.tv_sec, (int64_t)st->st_mtim.tv_nsec };
}

/* Orders identities by device, inode, size, then mtime (a cache sorted by them finds a file's
 * copies by device and inode together). */
static inline int file_id_cmp(const struct file_id *a, const struct file_id *b)
{
	return CMP3(a->dev, b->dev) ?: CMP3(a->ino, b->ino) ?: CMP3(a->size, b->size) ?:
	       CMP3(a->mtime_sec, b->mtime_sec) ?: CMP3(a->mtime_nsec, b->mtime_nsec);
}

/* Whether a and b are the same file, unchanged. */
static inline bool file_id_eq(const struct file_id *a, const struct file_id *b)
{
	return !file_id_cmp(a, b);
}

/* A hash of an identity for lib/base/hashtab.h. */
static inline uint64_t file_id_hash(const struct file_id *f)
{
	return hash_mix64(f->ino ^ hash_mix64(f->dev ^ hash_mix64(f->size ^ (uint64_t)f->mtime_sec ^
								  (uint64_t)f->mtime_nsec << 32)));
}

#endif
