/* The files of a recording cut into intervals (firn record --every with -o PATTERN): one file per
 * interval, named by a strftime pattern of the interval's start (UTC), and at most `keep` of them
 * left on disk, the oldest removed first. Only files this object named and the caller wrote are
 * ever removed: a file already there under a name the pattern gives is not replaced, the new
 * interval gets the next free name ("NAME-2.pb.gz"). Nothing here writes a profile. */
#ifndef FIRN_INTERVAL_H
#define FIRN_INTERVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Names held without --keep (to tell a name given out before: intervals in the same second). */
#define INTERVAL_NAMES_HELD 64

struct interval_files {
	char *pattern;   /* owned copy */
	size_t keep;     /* files left at most; 0: every one */
	char **names;    /* written in this run, oldest first (the last `keep`, or
			  * INTERVAL_NAMES_HELD, of them); owned */
	size_t n, cap;
	uint64_t written, removed, remove_failed;
};

/* Whether an output name is a pattern: it holds a strftime conversion (a '%' not part of
 * "%%"). */
bool interval_is_pattern(const char *output);

/* Starts with no file written. 0 or -ENOMEM. */
int interval_files_init(struct interval_files *f, const char *pattern, size_t keep);
/* The name for an interval that starts at start_ns (wall clock, ns): the pattern expanded in
 * UTC; when that name exists (any kind of file) or was given out before, "-2", "-3"... goes
 * before its extension (the first '.' of the last path component). A malloc'd string, or
 * NULL + errno (ENAMETOOLONG, EINVAL for an expansion that is empty, ENOMEM). */
char *interval_files_name(struct interval_files *f, int64_t start_ns);
/* Records that name (from interval_files_name, ownership taken) was written, then removes the
 * oldest written files beyond keep. Returns 0, or -errno of the first removal that failed (that
 * file is forgotten all the same; ENOENT, a file removed by someone else, is no failure). */
int interval_files_add(struct interval_files *f, char *name);
void interval_files_release(struct interval_files *f);

#endif
