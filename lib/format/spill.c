/* Samples parked in a temporary file (see spill.h). */
#include "format/spill.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/vec.h"

/* One record: this header, then nlocs ids, nvalues values and nlabels labels. */
struct spill_rec {
	uint32_t nlocs, nvalues, nlabels, pad;
};

/* Upper bounds of a record (a stack of the sampler is far shorter). */
#define SPILL_MAX_LOCS 65536
#define SPILL_MAX_VALUES 4096
#define SPILL_MAX_LABELS 64

int spill_init(struct spill *sp, const char *dir)
{
	memset(sp, 0, sizeof(*sp));
	sp->fd = -1;
	if (dir && !(sp->dir = strdup(dir)))
		return -ENOMEM;
	return 0;
}

void spill_release(struct spill *sp)
{
	if (sp->fd >= 0)
		close(sp->fd);
	free(sp->dir);
	free(sp->buf);
	memset(sp, 0, sizeof(*sp));
	sp->fd = -1;
}

/* An unlinked file in dir: O_TMPFILE, else a named file removed at once. fd or -errno. */
static int open_unlinked(const char *dir)
{
	char *path = NULL;
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC | O_EXCL, 0600);

	if (fd >= 0)
		return fd;
	if (asprintf(&path, "%s/.firn-spill-XXXXXX", dir) < 0)
		return -ENOMEM;
	fd = mkostemp(path, O_CLOEXEC);
	int err = fd < 0 ? -errno : 0;
	if (fd >= 0)
		unlink(path);
	free(path);
	return fd >= 0 ? fd : err;
}

/* Appends n bytes of src to the record being built at *off; 0 or -ENOMEM. */
static int put(struct spill *sp, size_t *off, const void *src, size_t n)
{
	if (n > SIZE_MAX - *off || VEC_GROW(sp->buf, sp->cap, *off + n))
		return -ENOMEM;
	if (n)
		memcpy(sp->buf + *off, src, n);
	*off += n;
	return 0;
}

/* Writes the records in sp->buf (len bytes) at the end of the file, or nothing (a short write is
 * undone); 0 or -errno. */
static int append(struct spill *sp, size_t len)
{
	ssize_t w = pwrite(sp->fd, sp->buf, len, sp->size);

	if (w == (ssize_t)len) {
		sp->size += len;
		return 0;
	}
	int err = w < 0 ? -errno : -ENOSPC;
	if (ftruncate(sp->fd, sp->size))
		return err; /* the tail beyond size is never read */
	return err;
}

/* The file, made on first use (so that a folder where none can be made fails the first add);
 * 0 or -errno. */
static int open_file(struct spill *sp)
{
	const char *dir = sp->dir ? sp->dir : getenv("TMPDIR");

	if (sp->fd >= 0)
		return 0;
	int fd = open_unlinked(dir && *dir ? dir : "/tmp");
	if (fd < 0)
		return fd;
	sp->fd = fd;
	return 0;
}

int spill_add(struct spill *sp, const uint64_t *location_ids, uint32_t nlocs,
	      const int64_t *values, uint32_t nvalues, const struct profile_label *labels,
	      uint32_t nlabels)
{
	struct spill_rec r = { nlocs, nvalues, nlabels, 0 };
	size_t len = sp->pend; /* the record goes after those not written yet */
	int err;

	if (nlocs > SPILL_MAX_LOCS || nvalues > SPILL_MAX_VALUES || nlabels > SPILL_MAX_LABELS)
		return -EINVAL;
	if ((err = open_file(sp)))
		return err;
	if (put(sp, &len, &r, sizeof(r)) || put(sp, &len, location_ids, nlocs * sizeof(*location_ids)) ||
	    put(sp, &len, values, nvalues * sizeof(*values)) ||
	    put(sp, &len, labels, nlabels * sizeof(*labels)))
		return -ENOMEM;
	/* failed: the records before this one stay pending, in memory */
	if (len >= SPILL_FLUSH && (err = append(sp, len)))
		return err;
	sp->pend = len >= SPILL_FLUSH ? 0 : len;
	sp->n++;
	return 0;
}

/* Scratch room for the largest record. */
struct spill_buf {
	uint64_t locs[SPILL_MAX_LOCS];
	int64_t values[SPILL_MAX_VALUES];
	struct profile_label labels[SPILL_MAX_LABELS];
};

/* Reads one record into b; 1 read, 0 at the end, -errno. */
static int read_rec(FILE *f, struct spill_buf *b, struct spill_rec *r)
{
	size_t got = fread(r, sizeof(*r), 1, f);

	if (got != 1)
		return ferror(f) ? -EIO : 0;
	if (r->nlocs > SPILL_MAX_LOCS || r->nvalues > SPILL_MAX_VALUES ||
	    r->nlabels > SPILL_MAX_LABELS)
		return -EINVAL;
	if ((r->nlocs && fread(b->locs, sizeof(*b->locs), r->nlocs, f) != r->nlocs) ||
	    (r->nvalues && fread(b->values, sizeof(*b->values), r->nvalues, f) != r->nvalues) ||
	    (r->nlabels && fread(b->labels, sizeof(*b->labels), r->nlabels, f) != r->nlabels))
		return -EIO;
	return 1;
}

/* Adds the records of the file's first size bytes (open for reading at its start) to p. */
static int load_records(FILE *f, off_t size, struct profile *p)
{
	struct spill_buf *b = malloc(sizeof(*b));
	struct spill_rec r;
	int rc;

	if (!b)
		return -ENOMEM;
	while ((rc = ftello(f) < size ? read_rec(f, b, &r) : 0) == 1) {
		rc = r.nvalues == p->nsample_types ? 0 : -EINVAL;
		if (!rc)
			rc = profile_add_sample(p, b->locs, r.nlocs, b->values, b->labels, r.nlabels);
		if (rc)
			break;
	}
	free(b);
	return rc;
}

/* Adds the records written to the file to p, then empties the file. 0 or -errno. */
static int load_file(struct spill *sp, struct profile *p)
{
	int fd = dup(sp->fd);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		int err = -errno;
		if (fd >= 0)
			close(fd);
		return err;
	}
	int rc = fseeko(f, 0, SEEK_SET) ? -EIO : load_records(f, sp->size, p);
	fclose(f);
	if (!rc && ftruncate(sp->fd, 0))
		rc = -errno;
	if (!rc)
		sp->size = 0;
	return rc;
}

/* Adds the records not written yet (in sp->buf) to p and forgets them. 0 or -errno. */
static int load_pending(struct spill *sp, struct profile *p)
{
	FILE *f = fmemopen(sp->buf, sp->pend, "r");

	if (!f)
		return -errno;
	int rc = load_records(f, (off_t)sp->pend, p);
	fclose(f);
	if (!rc)
		sp->pend = 0;
	return rc;
}

int spill_load(struct spill *sp, struct profile *p)
{
	int rc = 0;

	if (sp->fd >= 0 && sp->size)
		rc = load_file(sp, p);
	if (!rc && sp->pend)
		rc = load_pending(sp, p);
	if (!rc)
		sp->n = 0;
	return rc;
}
