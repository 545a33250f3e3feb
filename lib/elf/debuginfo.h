/* Where an ELF file's separate debug information is: DEBUG_DIR/.build-id/xx/rest.debug by build
 * id; the .gnu_debuglink name next to the binary, in its .debug/ directory or under
 * DEBUG_DIR/BINARY_DIR; each inside the process's root first (containers), then on the host.
 * A candidate must have the binary's build id (or, for a binary without one, the debuglink's
 * CRC-32). And a debuginfod client (libdebuginfod, loaded when first needed) that asks the
 * DEBUGINFOD_URLS servers with a time limit: after one query runs out of time, it asks no more. */
#ifndef FIRN_DEBUGINFO_H
#define FIRN_DEBUGINFO_H

#include <stddef.h>
#include <stdint.h>

#define DEBUGINFO_DIR "/usr/lib/debug"

struct debuginfo_query {
	const char *build_id;  /* lowercase hex; NULL or "" when the binary has none */
	const char *path;      /* the binary's path as its process sees it, or NULL */
	const char *root;      /* the process's root ("/proc/PID/root") to look in first, or NULL */
	const char *debuglink; /* the binary's .gnu_debuglink file name, or NULL */
	uint32_t crc;          /* the debuglink's CRC-32 */
	const char *debug_dir; /* NULL: DEBUGINFO_DIR */
};

/* Opens the first matching local debug file: returns its fd (its path copied into found when
 * found is not NULL), -ENOENT when there is none, or -ENOMEM. */
int debuginfo_find(const struct debuginfo_query *q, char *found, size_t len);

/* Reads the GNU build id of the ELF file open at fd as lowercase hex into out (at least 129
 * bytes); 0, or -ENOENT when it has none (-ENOEXEC: not ELF). */
int debuginfo_build_id(int fd, char *out);

struct debuginfo_client;

/* A debuginfod client whose queries each end after timeout_ms. NULL + errno: ENOENT when
 * DEBUGINFOD_URLS is unset or empty, ENOSYS when libdebuginfod cannot be loaded, ENOMEM. */
struct debuginfo_client *debuginfo_client_new(int timeout_ms);
/* Fetches the debug file of build_id (hex): an fd, or -errno (-ENOENT: no server has it,
 * -ETIMEDOUT: out of time now or in an earlier query). */
int debuginfo_client_fetch(struct debuginfo_client *c, const char *build_id);
void debuginfo_client_free(struct debuginfo_client *c);

#endif
