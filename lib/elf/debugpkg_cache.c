/* debugpkg_cache: debugpkg_find's answers on disk, valid while dpkg and apt are unchanged; see
 * debugpkg_cache.h. */
#include "elf/debugpkg_cache.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/cache_dir.h"
#include "base/hash.h"

#define VERSION 1

static const char MAGIC[8] = "FIRNDPK";

/* A cache file: one record, fixed size; path and hint NUL-padded, hint empty for "none". */
struct record {
	char magic[8];
	uint32_t version;
	int32_t err; /* 0 or -ENOENT */
	struct debugpkg_key key;
	char path[DEBUGPKG_CACHE_PATH_MAX];
	char hint[DEBUGPKG_CACHE_HINT_MAX];
};

_Static_assert(sizeof(struct record) == DEBUGPKG_CACHE_RECORD, "a record's size is its format's");

static const struct cache_kind KIND = {
	.env = "FIRN_DEBUGPKG_CACHE", .leaf = "debugpkg", .suffix = ".pkg", .magic = MAGIC,
	.magic_len = sizeof(MAGIC), .id_max = 17, /* 16 hex digits */
	.min_size = sizeof(struct record), .max_size = sizeof(struct record),
};

/* struct debugpkg_cache (a cache_dir) and its open and close */
CACHE_DIR_HANDLE(debugpkg_cache, KIND, DEBUGPKG_CACHE_MAX_BYTES)

int debugpkg_cache_decode(const void *buf, size_t len, const char *path,
			  const struct debugpkg_key *key, char *hint, size_t size)
{
	struct record r;

	if (len != sizeof(r))
		return -EBADMSG;
	memcpy(&r, buf, sizeof(r));
	if (memcmp(r.magic, MAGIC, sizeof(MAGIC)) || r.version != VERSION ||
	    (r.err != 0 && r.err != -ENOENT) || !memchr(r.path, 0, sizeof(r.path)) ||
	    !memchr(r.hint, 0, sizeof(r.hint)) || strcmp(r.path, path) ||
	    memcmp(&r.key, key, sizeof(*key)) || (!r.err) != (r.hint[0] != '\0'))
		return -EBADMSG;
	if (r.err)
		return r.err;
	size_t n = strlen(r.hint);
	if (n >= size)
		return -ENAMETOOLONG;
	memcpy(hint, r.hint, n + 1);
	return 0;
}

int debugpkg_cache_encode(const char *path, const struct debugpkg_key *key, int err,
			  const char *hint, void *out)
{
	struct record r;

	memset(&r, 0, sizeof(r));
	memcpy(r.magic, MAGIC, sizeof(MAGIC));
	r.version = VERSION;
	r.err = err ? -ENOENT : 0;
	r.key = *key;
	if (strlen(path) >= sizeof(r.path) || (!err && strlen(hint) >= sizeof(r.hint)))
		return -ENAMETOOLONG;
	strcpy(r.path, path);
	if (!err)
		strcpy(r.hint, hint);
	memcpy(out, &r, sizeof(r));
	return 0;
}

/* The identity of the file at path, or zeros where it cannot be stat'ed. */
static struct file_id id_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? (struct file_id){ 0 } : file_id_of(&st);
}

/* What path's answer under dirs depends on, now. */
static struct debugpkg_key key_now(const struct debugpkg_dirs *d, const char *path)
{
	return (struct debugpkg_key){
		id_of(path),
		id_of(d && d->dpkg_info ? d->dpkg_info : "/var/lib/dpkg/info"),
		id_of(d && d->dpkg_status ? d->dpkg_status : "/var/lib/dpkg/status"),
		id_of(d && d->apt_lists ? d->apt_lists : "/var/lib/apt/lists"),
	};
}

/* The cache file's name for path under dirs: a hash of both, in hex (so a test's made-up dpkg
 * and the system's keep separate answers). */
static void entry_id(const struct debugpkg_dirs *d, const char *path, char id[17])
{
	const char *parts[4] = { path, d ? d->dpkg_info : NULL, d ? d->dpkg_status : NULL,
				 d ? d->apt_lists : NULL };
	uint64_t h = HASH_SEED;

	for (int i = 0; i < 4; i++)
		h = hash_bytes(h, parts[i] ? parts[i] : "", parts[i] ? strlen(parts[i]) + 1 : 1);
	snprintf(id, 17, "%016llx", (unsigned long long)hash_mix64(h));
}

/* What lookup decodes a record with, and the answer (-EBADMSG until one is decoded). */
struct lookup_arg {
	const char *path;
	const struct debugpkg_key *key;
	char *hint;
	size_t size;
	int answer;
};

/* cache_dir_get's reader: the record's answer; it served unless it is none for path and key. */
static int read_record(void *ctx, const void *buf, size_t len, bool *used)
{
	struct lookup_arg *a = ctx;

	a->answer = debugpkg_cache_decode(buf, len, a->path, a->key, a->hint, a->size);
	*used = a->answer != -EBADMSG;
	return a->answer;
}

/* The stored answer for path under key, as debugpkg_cache_decode gives it (-EBADMSG: none to
 * use, or no record to read). A record used is touched, so the least recently used goes first. */
static int lookup(struct debugpkg_cache *c, const char *id, const char *path,
		  const struct debugpkg_key *key, char *hint, size_t size)
{
	struct lookup_arg a = { path, key, hint, size, -EBADMSG };

	cache_dir_get(&c->dir, id, read_record, &a);
	return a.answer;
}

int debugpkg_cache_find(struct debugpkg_cache *c, const struct debugpkg_dirs *dirs,
			const char *path, char *hint, size_t size)
{
	struct debugpkg_key key = key_now(dirs, path);
	char id[17], rec[sizeof(struct record)];

	if (!c)
		return debugpkg_find(dirs, path, hint, size);
	entry_id(dirs, path, id);
	int err = lookup(c, id, path, &key, hint, size);
	if (err != -EBADMSG)
		return err;
	err = debugpkg_find(dirs, path, hint, size);
	if ((!err || err == -ENOENT) && !debugpkg_cache_encode(path, &key, err, hint, rec)) {
		struct iovec iov = { rec, sizeof(rec) };
		cache_dir_put(&c->dir, id, &iov, 1);
	}
	return err;
}
