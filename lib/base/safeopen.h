/* Opening files that a process or a profile names (mapped ELF files, debug files, JIT maps,
 * files to annotate): such a name may be a FIFO, a device or a symlink that someone else put
 * there, so every such open goes through safeopen: it never blocks, refuses anything but a
 * regular file and, for files whose contents are trusted as the process's own (perf maps),
 * checks who owns them. A name inside another process's root, /proc/PID/root/NAME (or
 * /proc/self/fd/N/NAME where N holds such a root open), is resolved inside that root: a symlink
 * on the way there, absolute or through "..", never leads out of it to the host's files (a
 * container's /tmp made a symlink to a host folder), and no /proc magic link is followed. */
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
/* safeopen of path (absolute, as a process sees it) inside the root folder open on rootfd (an
 * O_PATH descriptor of /proc/PID/root): openat2 with RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
 * or safeopen_walk where the kernel has no openat2 (before 5.6). Returns as safeopen. */
int safeopen_at(int rootfd, const char *path, int flags, uid_t uid, struct stat *st);
/* The stat of path (following its last symlink), resolved as safeopen resolves it: 0 or -errno.
 * For a look at a file before opening it. */
int safeopen_stat(const char *path, struct stat *st);
/* Opens path inside rootfd one component at a time, as openat2's RESOLVE_IN_ROOT does: ".."
 * stops at the root, a symlink's target (absolute: from the root) is walked in its place, at
 * most 40 of them (-ELOOP). oflags are open(2)'s for the last component (O_NOFOLLOW: a symlink
 * there is -ELOOP). The descriptor (the caller closes it) or -errno. */
int safeopen_walk(int rootfd, const char *path, int oflags);
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
