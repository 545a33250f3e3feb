/* debug_cache: decompressed debug sections on disk, keyed by build id (see debug_cache.h). */
#include "elf/debug_cache.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "base/cache_dir.h"

#define SUFFIX ".dbg"
#define ALIGN 16 /* section bytes start at multiples of this in the file */

static const char MAGIC[8] = "FIRNDSC";

/* The stamp of a cache file whose bytes were checked: an extended attribute holding the
 * identity (device, inode, size, mtime) the file had right after. A file that keeps it is the
 * same inode, unchanged since (a write sets another mtime: the stamp's is a fine-grained time
 * firn set, not a clock tick), so its bodies are not checked again; a file replaced (another
 * inode: no stamp) or written to (another mtime) is. */
static const char STAMP_NAME[] = "user.firn.checked";

struct stamp {
	char magic[8]; /* "FIRNDS1" */
	struct file_id id;
};

static const char STAMP_MAGIC[8] = "FIRNDS1";

/* A cache file: this header, nsects entries, then the sections' bytes. crc: CRC-32 of the
 * header (crc taken as zero) and the entries; each entry's crc: CRC-32 of its section's bytes. */
struct file_header {
	char magic[8];
	uint32_t version, nsects;
	char build_id[128]; /* lowercase hex, NUL-padded */
	struct file_id id;
	uint32_t crc;
	char pad[68];
};

struct file_entry {
	char name[DEBUG_CACHE_NAME_LEN];
	uint64_t zsize, offset, size;
	uint32_t crc, pad;
};

_Static_assert(sizeof(struct file_header) == 256, "the file format's header is 256 bytes");
_Static_assert(sizeof(struct file_entry) == 56, "an entry is 56 bytes");
_Static_assert(sizeof(struct file_id) == 40, "the header's file identity is five 64-bit fields");

static const struct cache_kind KIND = {
	.env = "FIRN_DEBUG_CACHE", .leaf = "debug", .suffix = SUFFIX, .magic = MAGIC,
	.magic_len = sizeof(MAGIC), .id_max = sizeof(((struct file_header *)0)->build_id),
	.min_size = sizeof(struct file_header),
};

/* struct debug_cache (a cache_dir) and its open and close */
CACHE_DIR_HANDLE(debug_cache, KIND, DEBUG_CACHE_MAX_BYTES)

/* The CRC-32 of the header (crc as zero) and its entries. */
static uint32_t header_crc(const struct file_header *h, const struct file_entry *e, uint32_t n)
{
	struct file_header tmp = *h;

	tmp.crc = 0;
	uLong crc = crc32(0, (const Bytef *)&tmp, sizeof(tmp));
	return (uint32_t)crc32(crc, (const Bytef *)e, n * sizeof(*e));
}

/* The CRC-32 of a section's bytes (zlib's: about 4 GB/s here, 1.7 ms for libc's 8.5 MB). */
static uint32_t body_crc(const void *p, uint64_t size)
{
	uLong crc = crc32(0, NULL, 0);

	for (uint64_t done = 0; done < size;) {
		uInt n = size - done > (1u << 30) ? 1u << 30 : (uInt)(size - done);
		crc = crc32(crc, (const Bytef *)p + done, n);
		done += n;
	}
	return (uint32_t)crc;
}

/* Whether entry e describes bytes inside buf (len bytes), after its n entries, that match its
 * checksum: a damaged body is never served. */
static bool entry_ok(const struct file_entry *e, uint32_t n, const void *buf, size_t len,
		     bool check_body)
{
	uint64_t first = sizeof(struct file_header) + (uint64_t)n * sizeof(*e);

	return memchr(e->name, 0, sizeof(e->name)) && e->offset % ALIGN == 0 &&
	       e->offset >= first && e->offset <= len && e->size <= len - e->offset &&
	       (!check_body || body_crc((const char *)buf + e->offset, e->size) == e->crc);
}

/* debug_cache_decode, the sections' bytes checked against their checksums when check_body
 * (the header and entries always are). */
static int decode(const void *buf, size_t len, const char *build_id, const struct file_id *id,
		  struct debug_cache_file *f, bool check_body)
{
	struct file_header h;
	struct file_entry e[DEBUG_CACHE_MAX_SECTS];

	memset(f, 0, sizeof(*f));
	if (len < sizeof(h))
		return -EBADMSG;
	memcpy(&h, buf, sizeof(h));
	if (memcmp(h.magic, MAGIC, sizeof(MAGIC)) || h.version != DEBUG_CACHE_VERSION ||
	    h.nsects > DEBUG_CACHE_MAX_SECTS || len - sizeof(h) < h.nsects * sizeof(*e) ||
	    !memchr(h.build_id, 0, sizeof(h.build_id)) || strcmp(h.build_id, build_id) ||
	    memcmp(&h.id, id, sizeof(*id)))
		return -EBADMSG;
	memcpy(e, (const char *)buf + sizeof(h), h.nsects * sizeof(*e));
	if (header_crc(&h, e, h.nsects) != h.crc)
		return -EBADMSG;
	for (uint32_t i = 0; i < h.nsects; i++) {
		if (!entry_ok(&e[i], h.nsects, buf, len, check_body))
			return -EBADMSG;
		memcpy(f->sects[i].name, e[i].name, sizeof(e[i].name));
		f->sects[i].zsize = e[i].zsize;
		f->sects[i].data = (const char *)buf + e[i].offset;
		f->sects[i].size = e[i].size;
	}
	f->nsects = h.nsects;
	f->checked = check_body;
	return 0;
}

int debug_cache_decode(const void *buf, size_t len, const char *build_id,
		       const struct file_id *id, struct debug_cache_file *f)
{
	return decode(buf, len, build_id, id, f, true);
}

/* Whether the open cache file (st: its fstat) carries a stamp of its identity now. */
static bool stamped(int fd, const struct stat *st)
{
	struct stamp sp;
	struct file_id now = file_id_of(st);

	return fgetxattr(fd, STAMP_NAME, &sp, sizeof(sp)) == sizeof(sp) &&
	       !memcmp(sp.magic, STAMP_MAGIC, sizeof(sp.magic)) && file_id_eq(&sp.id, &now);
}

/* Marks the file recently used (evicted last) and stamps the identity it has after that. Its
 * mtime is set to the fine-grained time now, which a later write (a coarse clock tick, or a
 * later fine time) does not repeat. A stamp that cannot be written (a file system without
 * user extended attributes) only means the bodies are checked at the next use again. */
static void touch_and_stamp(int fd)
{
	struct timespec ts[2];
	struct stamp sp = { .magic = { 0 } };
	struct stat st;

	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[1] = ts[0];
	if (futimens(fd, ts) || fstat(fd, &st))
		return;
	memcpy(sp.magic, STAMP_MAGIC, sizeof(sp.magic));
	sp.id = file_id_of(&st);
	fsetxattr(fd, STAMP_NAME, &sp, sizeof(sp), 0);
}

int debug_cache_map(struct debug_cache *c, const char *build_id,
		    const struct file_id *id, struct debug_cache_file *f)
{
	struct stat st;

	memset(f, 0, sizeof(*f));
	int fd = cache_dir_open_file(&c->dir, build_id, &st);
	if (fd < 0)
		return fd;
	void *m = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	int err = m == MAP_FAILED ? -errno : decode(m, st.st_size, build_id, id, f, !stamped(fd, &st));
	if (!err) {
		touch_and_stamp(fd);
		f->map = m;
		f->len = st.st_size;
	} else if (m != MAP_FAILED) {
		munmap(m, st.st_size);
	}
	close(fd);
	return err;
}

void debug_cache_unmap(struct debug_cache_file *f)
{
	if (f->map)
		munmap(f->map, f->len);
	memset(f, 0, sizeof(*f));
}

const void *debug_cache_find(const struct debug_cache_file *f, const char *name, uint64_t zsize,
			     uint64_t *size)
{
	for (uint32_t i = 0; i < f->nsects; i++) {
		if (f->sects[i].zsize == zsize && !strcmp(f->sects[i].name, name)) {
			*size = f->sects[i].size;
			return f->sects[i].data;
		}
	}
	return NULL;
}

/* Fills the header and entries of n sections laid out after them. */
static int layout(const char *build_id, const struct file_id *id,
		  const struct debug_cache_sect *s, size_t n, struct file_header *h,
		  struct file_entry *e)
{
	uint64_t at = sizeof(*h) + n * sizeof(*e);

	memset(h, 0, sizeof(*h));
	memset(e, 0, n * sizeof(*e));
	memcpy(h->magic, MAGIC, sizeof(MAGIC));
	h->version = DEBUG_CACHE_VERSION;
	h->nsects = n;
	strcpy(h->build_id, build_id);
	h->id = *id;
	for (size_t i = 0; i < n; i++) {
		if (!memchr(s[i].name, 0, sizeof(s[i].name)))
			return -EINVAL;
		at = (at + ALIGN - 1) / ALIGN * ALIGN;
		e[i] = (struct file_entry){ .zsize = s[i].zsize, .offset = at, .size = s[i].size,
					    .crc = body_crc(s[i].data, s[i].size) };
		memcpy(e[i].name, s[i].name, sizeof(e[i].name));
		at += s[i].size;
	}
	h->crc = header_crc(h, e, n);
	return 0;
}

int debug_cache_put(struct debug_cache *c, const char *build_id,
		    const struct file_id *id, const struct debug_cache_sect *s, size_t n)
{
	static const char zeros[ALIGN];
	struct file_header h;
	struct file_entry e[DEBUG_CACHE_MAX_SECTS];
	struct iovec iov[2 + 2 * DEBUG_CACHE_MAX_SECTS];
	int k = 0;

	if (!cache_dir_id_ok(&KIND, build_id) || n > DEBUG_CACHE_MAX_SECTS ||
	    layout(build_id, id, s, n, &h, e))
		return -EINVAL;
	iov[k++] = (struct iovec){ &h, sizeof(h) };
	iov[k++] = (struct iovec){ e, n * sizeof(*e) };
	uint64_t at = sizeof(h) + n * sizeof(*e);
	for (size_t i = 0; i < n; i++) {
		iov[k++] = (struct iovec){ (void *)zeros, e[i].offset - at };
		iov[k++] = (struct iovec){ (void *)s[i].data, s[i].size };
		at = e[i].offset + s[i].size;
	}
	return cache_dir_put(&c->dir, build_id, iov, k);
}
