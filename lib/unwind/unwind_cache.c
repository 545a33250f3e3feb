/* unwind_cache: unwind tables on disk, keyed by build id and served only for the file they were
 * built from (see unwind_cache.h). */
#include "unwind/unwind_cache.h"

#include "base/cache_dir.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <zlib.h>

#define SUFFIX ".tbl"
#define MAX_ROWS (1u << 26) /* far above any real table; bounds what a file may ask for */

static const char MAGIC[8] = "FIRNUWC";

/* A cache file: this header, then nrows struct firn_row. crc: CRC-32 of the whole file with
 * crc itself zero. */
struct cache_header {
	char magic[8];
	uint32_t version, row_size;
	char build_id[128]; /* lowercase hex, NUL-padded */
	uint32_t nrows, nsegs, fdes, crc;
	struct { uint64_t offset, filesz; int64_t delta; } segs[4];
	struct file_id src; /* the file the rows were built from, and its owner */
	uint32_t src_uid, pad;
};

_Static_assert(sizeof(struct cache_header) == 304, "the file format's header is 304 bytes");

static const struct cache_kind KIND = {
	.env = "FIRN_UNWIND_CACHE", .leaf = "unwind", .suffix = SUFFIX, .magic = MAGIC,
	.magic_len = sizeof(MAGIC), .id_max = sizeof(((struct cache_header *)0)->build_id),
	.max_size = sizeof(struct cache_header) + (uint64_t)MAX_ROWS * sizeof(struct firn_row),
};

int unwind_cache_default_dir(char *out, size_t len)
{
	return cache_dir_default(out, len, "unwind");
}

/* struct unwind_cache (a cache_dir) and its open and close */
CACHE_DIR_HANDLE(unwind_cache, KIND, UNWIND_CACHE_MAX_BYTES)

struct unwind_cache_src unwind_cache_src_of(const struct stat *st)
{
	return (struct unwind_cache_src){ .id = file_id_of(st), .uid = (uint32_t)st->st_uid };
}

/* Whether the header names src as the file its rows were built from (a build id alone is
 * anyone's to copy). */
static bool src_ok(const struct cache_header *h, const struct unwind_cache_src *src)
{
	return file_id_eq(&h->src, &src->id) && h->src_uid == src->uid;
}

/* The CRC-32 of a file's bytes with the header's crc field taken as zero. */
static uint32_t file_crc(const struct cache_header *h, const void *rows, size_t rows_len)
{
	struct cache_header tmp = *h;

	tmp.crc = 0;
	uLong crc = crc32(0, (const Bytef *)&tmp, sizeof(tmp));
	return (uint32_t)crc32(crc, rows, (uInt)rows_len);
}

/* Whether the rows can be trusted as a table: strictly sorted by pc, known types. */
static bool rows_ok(const struct firn_row *rows, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if (rows[i].type >= 8 || (i && rows[i - 1].pc >= rows[i].pc))
			return false;
	}
	return true;
}

int unwind_cache_decode(const void *buf, size_t len, const char *build_id,
			const struct unwind_cache_src *src, struct unwind_table *t)
{
	struct cache_header h;

	memset(t, 0, sizeof(*t));
	if (len < sizeof(h))
		return -EBADMSG;
	memcpy(&h, buf, sizeof(h));
	if (memcmp(h.magic, MAGIC, sizeof(MAGIC)) || h.version != UNWIND_CACHE_VERSION ||
	    h.row_size != sizeof(struct firn_row) || h.nsegs > 4 || h.nrows > MAX_ROWS ||
	    len - sizeof(h) != (uint64_t)h.nrows * sizeof(struct firn_row) ||
	    strnlen(h.build_id, sizeof(h.build_id)) == sizeof(h.build_id) ||
	    strcmp(h.build_id, build_id))
		return -EBADMSG;
	const uint8_t *rows = (const uint8_t *)buf + sizeof(h);
	if (file_crc(&h, rows, len - sizeof(h)) != h.crc)
		return -EBADMSG;
	if (!src_ok(&h, src))
		return -ESTALE;
	t->rows = malloc(h.nrows ? len - sizeof(h) : 1);
	if (!t->rows)
		return -ENOMEM;
	memcpy(t->rows, rows, len - sizeof(h));
	if (!rows_ok(t->rows, h.nrows)) {
		unwind_table_release(t);
		return -EBADMSG;
	}
	t->n = t->cap = h.nrows;
	for (uint32_t i = 0; i < h.nrows; i++)
		t->by_type[t->rows[i].type]++;
	t->fdes = h.fdes;
	t->nsegs = h.nsegs;
	memcpy(t->segs, h.segs, sizeof(t->segs));
	return 0;
}

/* What unwind_cache_get decodes a file with. */
struct get_arg {
	const char *build_id;
	const struct unwind_cache_src *src;
	struct unwind_table *t;
};

/* cache_dir_get's reader: the table a file holds; the file served when it decoded. */
static int get_table(void *ctx, const void *buf, size_t len, bool *used)
{
	const struct get_arg *a = ctx;
	int err = unwind_cache_decode(buf, len, a->build_id, a->src, a->t);

	*used = !err;
	return err;
}

int unwind_cache_get(struct unwind_cache *c, const char *build_id,
		     const struct unwind_cache_src *src, struct unwind_table *t)
{
	struct get_arg a = { build_id, src, t };

	memset(t, 0, sizeof(*t));
	return cache_dir_get(&c->dir, build_id, get_table, &a);
}

int unwind_cache_put(struct unwind_cache *c, const char *build_id,
		     const struct unwind_cache_src *src, const struct unwind_table *t)
{
	struct cache_header h = { .version = UNWIND_CACHE_VERSION, .row_size = sizeof(struct firn_row),
				  .nrows = t->n, .nsegs = t->nsegs, .fdes = t->fdes,
				  .src = src->id, .src_uid = src->uid };
	size_t rows_len = (size_t)t->n * sizeof(struct firn_row);

	if (!cache_dir_id_ok(&KIND, build_id) || t->nsegs > 4 || t->n > MAX_ROWS)
		return -EINVAL;
	memcpy(h.magic, MAGIC, sizeof(MAGIC));
	strcpy(h.build_id, build_id);
	memcpy(h.segs, t->segs, sizeof(h.segs));
	h.crc = file_crc(&h, t->rows, rows_len);
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)t->rows, rows_len } };
	return cache_dir_put(&c->dir, build_id, iov, 2);
}
