/* Loading a saved profile whatever its format (pprof gzip, raw pprof, folded text) and saving
 * one so that an existing file is only ever replaced by a complete new one. */
#ifndef FIRN_INPUT_H
#define FIRN_INPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "folded.h"
#include "profile.h"

/* Reads the profile at path ("-" = stdin) into p, which must be freshly profile_init'ed.
 * Format: gzip (1f 8b) is pprof; a Profile field key followed by control characters is raw
 * pprof when it decodes (text when it does not and has no NUL byte); anything else is folded
 * text, streamed (stdin is not slurped). st (may be NULL) gets the folded line counts, zeros
 * for pprof. Returns 0 or -errno: -ENOENT, -EISDIR, -ENODATA for an empty input,
 * -EINVAL for a corrupt pprof file or text with no parsable line, -EBADMSG for a pprof file that
 * refers to ids or strings it does not have, -EFBIG, -ENOMEM. On failure p
 * holds partial contents: the caller still profile_release()s it. */
int profile_load(struct profile *p, const char *path, struct folded_stats *st);
/* profile_load reading the first frame of folded stacks as comm says (see folded_read_comm);
 * profile_load is this with FOLDED_COMM_AUTO. */
int profile_load_comm(struct profile *p, const char *path, enum folded_comm comm,
		      struct folded_stats *st);

/* Writes buf to path through a temporary file in the same directory (created O_EXCL|O_NOFOLLOW,
 * mode 0644 less umask, fsync'ed), then renames it onto path; with keep_old an existing path
 * is kept as "path.old" first. path is never missing nor partly written, and the temporary
 * file never stays behind. Returns 0 or -errno. */
int file_replace_atomic(const char *path, const void *buf, size_t len, bool keep_old);

/* Encodes p as pprof (gzip when gzip) and writes it to path ("-" = stdout) with
 * file_replace_atomic. Returns 0 or -errno. */
int profile_save(const struct profile *p, const char *path, bool gzip, bool keep_old);

#endif
