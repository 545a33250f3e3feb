/* Samples parked in an unlinked temporary file until the profile is written. A recording's
 * samples of processes that have ended are final (their pid label sets them apart), so parking
 * them keeps only the live processes' samples in memory. The records are this process's own
 * (native layout, read back only by spill_load of the same run). Records are written SPILL_FLUSH
 * bytes at a time (a churning host parks ~140 samples a second: one write each was most of the
 * parking's system calls); those not written yet stay in memory and are loaded from there. The
 * file only ever holds whole records: a write that fails (a full disk) is undone, the records
 * written before it stay in memory, and the caller keeps the sample whose add failed. */
#ifndef FIRN_SPILL_H
#define FIRN_SPILL_H

#include <stdint.h>
#include <sys/types.h>

#include "model/profile.h"

#define SPILL_FLUSH 65536 /* bytes of records written at once */

struct spill {
	int fd;         /* -1 until the first sample */
	off_t size;     /* bytes of whole records */
	char *dir;      /* where the file goes (NULL: $TMPDIR, else /tmp) */
	uint64_t n;     /* samples parked */
	char *buf;      /* the records not written yet (pend bytes), then the one being built */
	size_t cap, pend;
};

/* Sets up an empty spill whose file is made in dir (copied; NULL: $TMPDIR, else /tmp) on first
 * use; 0 or -ENOMEM. */
int spill_init(struct spill *sp, const char *dir);
void spill_release(struct spill *sp);
/* Parks one sample (ids of the profile it will be loaded into; nvalues values). 0 or -errno
 * (nothing parked: the file cannot be made or written). */
int spill_add(struct spill *sp, const uint64_t *location_ids, uint32_t nlocs,
	      const int64_t *values, uint32_t nvalues, const struct profile_label *labels,
	      uint32_t nlabels);
/* Adds every parked sample to p (profile_add_sample: equal samples merge) and empties the spill.
 * -EINVAL when a record does not fit p (another number of sample types); 0 or -errno. */
int spill_load(struct spill *sp, struct profile *p);

#endif
