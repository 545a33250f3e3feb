/* Loading a saved profile whatever its format (pprof gzip, raw pprof, folded text) and saving
 * one so that an existing file is only ever replaced by a complete new one. */
#ifndef FIRN_INPUT_H
#define FIRN_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "format/folded.h"
#include "model/profile.h"

/* Reads the profile at path ("-" = stdin) into p, which must be freshly profile_init'ed.
 * Format: gzip (1f 8b) is pprof; a Profile field key followed by control characters is raw
 * pprof when it decodes (text when it does not and has no NUL byte); anything else is folded
 * text, streamed (stdin is not slurped). st (may be NULL) gets the folded line counts, zeros
 * for pprof. Returns 0 or -errno: -ENOENT, -EISDIR, -ENODATA for an empty input,
 * -EPROTO for a pprof sample whose number of values is not the number of sample types (st
 * says which), -EINVAL for a corrupt pprof file or text with no parsable line, -EBADMSG for a pprof file that
 * refers to ids or strings it does not have, -EFBIG, -ENOMEM. On failure p
 * holds partial contents: the caller still profile_release()s it. */
int profile_load(struct profile *p, const char *path, struct folded_stats *st);
/* profile_load reading the first frame of folded stacks as comm says (see folded_read_comm);
 * profile_load is this with FOLDED_COMM_AUTO. */
int profile_load_comm(struct profile *p, const char *path, enum folded_comm comm,
		      struct folded_stats *st);

/* How file_replace_atomic writes a new file. */
struct file_write {
	mode_t mode;     /* permissions of a new file, less umask: 0600 for what holds addresses
			  * (a profile has the kernel's), 0644 for plain text */
	bool keep_old;   /* keep an existing regular file (or replaced link) as "path.old" */
	bool chown;      /* give the new file to uid:gid (best effort) before it appears at path */
	uid_t uid;
	gid_t gid;
	bool old_failed; /* out: the error returned came from replacing "path.old" */
};

#define FIFO_READER_WAIT_MS 2000

/* Writes buf to path, which never ends up missing nor partly written:
 * - a missing path or a regular file: through a temporary file in the same directory (random
 *   name, created O_EXCL|O_NOFOLLOW with w->mode less umask, chowned as w says, fsync'ed),
 *   renamed onto path; with w->keep_old an existing path is kept as "path.old" first. The
 *   temporary file never stays behind.
 * - a character device or FIFO: written through (O_WRONLY|O_NOCTTY, no truncation, no rename,
 *   no .old; mode and owner untouched). A FIFO without a reader is waited for FIFO_READER_WAIT_MS
 *   at most (a reader started beside firn may open it a moment later), then fails (-ENXIO).
 * - a symbolic link owned by the effective user or root is followed: a device or FIFO it
 *   leads to is written through, a regular file truncated and rewritten in place (no .old).
 *   Any other link, or one that leads nowhere, is replaced like a regular file: its target is
 *   never written.
 * Returns 0 or -errno: -EISDIR for a directory, -EOPNOTSUPP for a block device or socket. */
int file_replace_atomic(const char *path, const void *buf, size_t len, struct file_write *w);

/* How file_replace_atomic would write path as it is now. */
enum file_write_kind {
	FILE_WRITE_REPLACE, /* missing, a regular file, or a link replaced: temporary file + rename */
	FILE_WRITE_THROUGH, /* a character device or FIFO: written through */
	FILE_WRITE_FOLLOW,  /* a trusted link to something: written through the link */
};

/* Looks at path (lstat, and stat behind a trusted link) and returns the enum file_write_kind,
 * or -errno: -EISDIR for a directory (also behind a followed link), -EOPNOTSUPP for a block
 * device or socket, lstat's error other than -ENOENT. */
int file_write_kind(const char *path);

/* Writes buf to a new file named by tmpl, whose last suffixlen characters follow six "XXXXXX"
 * that are replaced with random ones (mkostemps: O_EXCL, mode 0600 whatever w->mode), chowned
 * as w says. tmpl holds the name made. Returns 0, or -errno and no file. */
int file_write_new(char *tmpl, int suffixlen, const void *buf, size_t len,
		   const struct file_write *w);

/* Opens path for reading; a symbolic link is followed only when it is owned by the effective
 * user or root (else -EACCES, as the kernel's protected_symlinks answers), so a link planted in
 * a shared folder is not read. Returns a descriptor (O_CLOEXEC) or -errno. */
int file_open_read(const char *path);

/* Encodes p as pprof (gzip when gzip) and writes it to path ("-" = stdout) with
 * file_replace_atomic, mode 0600 (a profile holds addresses). Returns 0 or -errno. */
int profile_save(const struct profile *p, const char *path, bool gzip, bool keep_old);

#endif
