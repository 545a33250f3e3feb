/* Samples parked in a temporary file (see spill.h). */
#include "spill.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One record: this header, then nlocs ids, nvalues values and nlabels labels. */
struct spill_rec {
	uint32_t nlocs, nvalues, nlabels, pad;
};

/* Upper bounds of a record read back (a stack of the sampler is far shorter). */
#define SPILL_MAX_LOCS 65536
#define SPILL_MAX_VALUES 4096
#define SPILL_MAX_LABELS 64

int spill_init(struct spill *sp, const char *dir)
{
	memset(sp, 0, sizeof(*sp));
	if (dir && !(sp->dir = strdup(dir)))
		return -ENOMEM;
	return 0;
}

void spill_release(struct spill *sp)
{
	if (sp->f)
		fclose(sp->f);
	free(sp->dir);
	memset(sp, 0, sizeof(*sp));
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

/* Opens the file on first use; 0 or -errno. */
static int spill_file(struct spill *sp)
{
	const char *dir = sp->dir ? sp->dir : getenv("TMPDIR");

	if (sp->f)
		return 0;
	int fd = open_unlinked(dir && *dir ? dir : "/tmp");
	if (fd < 0)
		return fd;
	if (!(sp->f = fdopen(fd, "w+"))) {
		int err = -errno;
		close(fd);
		return err;
	}
	return 0;
}

int spill_add(struct spill *sp, const uint64_t *location_ids, uint32_t nlocs,
	      const int64_t *values, uint32_t nvalues, const struct profile_label *labels,
	      uint32_t nlabels)
{
	struct spill_rec r = { nlocs, nvalues, nlabels, 0 };
	int err = spill_file(sp);

	if (err)
		return err;
	if (nlocs > SPILL_MAX_LOCS || nvalues > SPILL_MAX_VALUES || nlabels > SPILL_MAX_LABELS)
		return -EINVAL;
	if (fwrite(&r, sizeof(r), 1, sp->f) != 1 ||
	    (nlocs && fwrite(location_ids, sizeof(*location_ids), nlocs, sp->f) != nlocs) ||
	    (nvalues && fwrite(values, sizeof(*values), nvalues, sp->f) != nvalues) ||
	    (nlabels && fwrite(labels, sizeof(*labels), nlabels, sp->f) != nlabels))
		return -EIO;
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
	if (fread(b->locs, sizeof(*b->locs), r->nlocs, f) != r->nlocs ||
	    fread(b->values, sizeof(*b->values), r->nvalues, f) != r->nvalues ||
	    fread(b->labels, sizeof(*b->labels), r->nlabels, f) != r->nlabels)
		return -EIO;
	return 1;
}

int spill_load(struct spill *sp, struct profile *p)
{
	struct spill_rec r;
	int rc = 0;

	if (!sp->f)
		return 0;
	struct spill_buf *b = malloc(sizeof(*b));
	if (!b)
		return -ENOMEM;
	if (fflush(sp->f) || fseeko(sp->f, 0, SEEK_SET))
		rc = -EIO;
	while (!rc && (rc = read_rec(sp->f, b, &r)) == 1) {
		rc = r.nvalues == p->nsample_types ? 0 : -EINVAL;
		if (!rc)
			rc = profile_add_sample(p, b->locs, r.nlocs, b->values, b->labels, r.nlabels);
	}
	free(b);
	if (!rc && (fseeko(sp->f, 0, SEEK_SET) || ftruncate(fileno(sp->f), 0)))
		rc = -EIO;
	if (!rc)
		sp->n = 0;
	return rc;
}
