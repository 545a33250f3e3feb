/* Opening files that a process or a profile names (mapped ELF files, debug files, JIT maps,
 * files to annotate): such a name may be a FIFO, a device or a symlink that someone else put
 * there, so every such open goes through safeopen: it never blocks, refuses anything but a
 * regular file and, for files whose contents are trusted as the process's own (perf maps),
 * checks who owns them. */
#ifndef FIRN_SAFEOPEN_H
#define FIRN_SAFEOPEN_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

enum safeopen_flags {
	SAFEOPEN_NOFOLLOW = 1, /* the last component must not be a symlink (-ELOOP) */
	SAFEOPEN_OWNER = 2,    /* owned by root or by the uid given, not writable by others (-EPERM) */
	SAFEOPEN_NOWARN = 4,   /* the caller handles -EMFILE/-ENFILE (no warning here) */
};

/* Opens path read-only, close-on-exec, without blocking (O_NONBLOCK) and checks it with fstat:
 * anything but a regular file is -EINVAL (closed again). flags: enum safeopen_flags; uid is the
 * owner SAFEOPEN_OWNER allows besides root. Returns the descriptor (the caller closes it; *st
 * filled when st is non-NULL) or -errno; on -EMFILE/-ENFILE the diagnostics reporter gets one
 * warning per process (see safeopen_note_error) unless SAFEOPEN_NOWARN. */
int safeopen(const char *path, int flags, uid_t uid, struct stat *st);
/* The reason for a safeopen error, for messages: "not a regular file" for -EINVAL, "not owned
 * by the process's user or root, or writable by others" for -EPERM, else strerror(-err). */
const char *safeopen_strerror(int err);
/* Warns once per process (one line through the diagnostics reporter) when err is -EMFILE or
 * -ENFILE: symbols go missing when files cannot be opened. For any open of lib/. */
void safeopen_note_error(int err);
/* The owner of process pid (the owner of /proc/PID: its effective uid, root when it is not
 * dumpable) into *uid; 0 or -errno. */
int safeopen_process_uid(pid_t pid, uid_t *uid);

#endif
