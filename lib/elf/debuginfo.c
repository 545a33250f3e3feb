/* Separate debug files: candidates by build id and .gnu_debuglink, checked before use, and the
 * debuginfod client through a dlopen'd libdebuginfod (so firn runs where it is not installed). */
#include "elf/debuginfo.h"

#include <dlfcn.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "base/clock.h"
#include "elf/elffile.h"
#include "base/safeopen.h"

int debuginfo_build_id(int fd, char *out)
{
	struct elffile f;

	out[0] = 0;
	if (elffile_open_fd(&f, fd, ELFFILE_PREAD))
		return -ENOEXEC;
	int n = elffile_build_id(f.elf, out, 2 * ELFFILE_BUILD_ID_MAX + 1);
	elffile_close(&f);
	return n > 0 ? 0 : -ENOENT;
}

/* CRC-32 (zlib's, as .gnu_debuglink uses) of the whole file at fd; false on a read error. */
static bool file_crc(int fd, uint32_t *crc)
{
	unsigned char buf[65536];
	uLong c = crc32(0, NULL, 0);
	off_t off = 0;
	ssize_t r;

	while ((r = pread(fd, buf, sizeof(buf), off)) > 0) {
		c = crc32(c, buf, r);
		off += r;
	}
	*crc = c;
	return r == 0;
}

/* Opens path when it is the debug file q wants; fd or -1. */
static int open_checked(const struct debuginfo_query *q, const char *path, bool by_link)
{
	char id[129];
	uint32_t crc;
	int fd = safeopen(path, 0, 0, NULL); /* a FIFO in a process's root must not hang us */

	if (fd < 0)
		return -1;
	if (q->build_id && q->build_id[0]) {
		if (!debuginfo_build_id(fd, id) && !strcmp(id, q->build_id))
			return fd;
	} else if (by_link && file_crc(fd, &crc) && crc == q->crc) {
		return fd;
	}
	close(fd);
	return -1;
}

/* Tries root + a + b + c (each may be NULL or ""); fd or -1, the path in found. */
static int try_path(const struct debuginfo_query *q, const char *root, const char *a,
		    const char *b, const char *c, bool by_link, char *found, size_t len)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s%s%s%s", root ? root : "", a, b ? b : "", c ? c : "");

	if (n < 0 || (size_t)n >= sizeof(path))
		return -1;
	int fd = open_checked(q, path, by_link);
	if (fd >= 0 && found && len) {
		strncpy(found, path, len - 1);
		found[len - 1] = 0;
	}
	return fd;
}

/* Looks for the build id file under one root. */
static int find_by_id(const struct debuginfo_query *q, const char *root, char *found, size_t len)
{
	const char *dir = q->debug_dir ? q->debug_dir : DEBUGINFO_DIR;
	char sub[PATH_MAX];
	const char *id = q->build_id;

	if (!id || strlen(id) < 3)
		return -1;
	if ((size_t)snprintf(sub, sizeof(sub), "/.build-id/%.2s/%s.debug", id, id + 2) >= sizeof(sub))
		return -1;
	return try_path(q, root, dir, sub, NULL, false, found, len);
}

/* Looks for the debuglink file under one root: next to the binary, in .debug/, in the debug
 * directory. */
static int find_by_link(const struct debuginfo_query *q, const char *root, char *found, size_t len)
{
	const char *dir = q->debug_dir ? q->debug_dir : DEBUGINFO_DIR;
	char bindir[PATH_MAX], name[NAME_MAX + 2];
	int fd;

	if (!q->debuglink || !q->debuglink[0] || !q->path || q->path[0] != '/' ||
	    strchr(q->debuglink, '/') || strlen(q->path) >= sizeof(bindir))
		return -1;
	strcpy(bindir, q->path);
	*strrchr(bindir, '/') = 0;
	snprintf(name, sizeof(name), "/%s", q->debuglink);
	if ((fd = try_path(q, root, bindir, name, NULL, true, found, len)) >= 0 ||
	    (fd = try_path(q, root, bindir, "/.debug", name, true, found, len)) >= 0)
		return fd;
	return try_path(q, root, dir, bindir, name, true, found, len);
}

int debuginfo_find(const struct debuginfo_query *q, char *found, size_t len)
{
	const char *roots[2] = { q->root, NULL };
	int fd;

	for (int i = q->root ? 0 : 1; i < 2; i++)
		if ((fd = find_by_id(q, roots[i], found, len)) >= 0)
			return fd;
	for (int i = q->root ? 0 : 1; i < 2; i++)
		if ((fd = find_by_link(q, roots[i], found, len)) >= 0)
			return fd;
	return -ENOENT;
}

/* ---- debuginfod ---- */

/* libdebuginfod's interface, declared here so that its header is not needed to build. */
typedef struct debuginfod_client dclient;
typedef int (*dprogress_fn)(dclient *c, long a, long b);

struct debuginfo_client {
	void *lib;
	dclient *(*begin)(void);
	int (*find_debuginfo)(dclient *c, const unsigned char *id, int len, char **path);
	void (*set_progressfn)(dclient *c, dprogress_fn fn);
	void (*set_user_data)(dclient *c, void *data);
	void *(*get_user_data)(dclient *c);
	void (*end)(dclient *c);
	dclient *dc;
	int timeout_ms;
	uint64_t deadline_ns;
	bool timed_out;
};

/* Progress callback: libdebuginfod calls it about once a second while a query runs; non-zero
 * cancels the query. The client is found through the handle's user data (the library is
 * already loaded: RTLD_NOLOAD only takes another reference). */
static int on_progress(dclient *dc, long a, long b)
{
	void *lib = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	void *(*get)(dclient *) = NULL;
	struct debuginfo_client *c = NULL;

	(void)a;
	(void)b;
	if (lib) {
		*(void **)&get = dlsym(lib, "debuginfod_get_user_data");
		c = get ? get(dc) : NULL;
		dlclose(lib);
	}
	if (!c || mono_ns() < c->deadline_ns)
		return 0;
	c->timed_out = true;
	return 1;
}

/* Loads libdebuginfod's functions; 0 or -ENOSYS. */
static int load_lib(struct debuginfo_client *c)
{
	c->lib = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!c->lib)
		return -ENOSYS;
	*(void **)&c->begin = dlsym(c->lib, "debuginfod_begin");
	*(void **)&c->find_debuginfo = dlsym(c->lib, "debuginfod_find_debuginfo");
	*(void **)&c->set_progressfn = dlsym(c->lib, "debuginfod_set_progressfn");
	*(void **)&c->set_user_data = dlsym(c->lib, "debuginfod_set_user_data");
	*(void **)&c->get_user_data = dlsym(c->lib, "debuginfod_get_user_data");
	*(void **)&c->end = dlsym(c->lib, "debuginfod_end");
	if (!c->begin || !c->find_debuginfo || !c->set_progressfn || !c->set_user_data ||
	    !c->get_user_data || !c->end)
		return -ENOSYS;
	return 0;
}

struct debuginfo_client *debuginfo_client_new(int timeout_ms)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	struct debuginfo_client *c;
	int err;

	if (!urls || !*urls) {
		errno = ENOENT;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->timeout_ms = timeout_ms;
	err = load_lib(c);
	if (!err && !(c->dc = c->begin()))
		err = -ENOMEM;
	if (err) {
		debuginfo_client_free(c);
		errno = -err;
		return NULL;
	}
	c->set_user_data(c->dc, c);
	c->set_progressfn(c->dc, on_progress);
	return c;
}

int debuginfo_client_fetch(struct debuginfo_client *c, const char *build_id)
{
	char *path = NULL;

	if (c->timed_out)
		return -ETIMEDOUT;
	if (!build_id || !build_id[0])
		return -ENOENT;
	c->deadline_ns = mono_ns() + (uint64_t)c->timeout_ms * 1000000ULL;
	int fd = c->find_debuginfo(c->dc, (const unsigned char *)build_id, 0, &path);
	free(path);
	/* out of our time, or of libdebuginfod's own (DEBUGINFOD_TIMEOUT: -ETIME) */
	if (c->timed_out || fd == -ETIME || fd == -ETIMEDOUT ||
	    (fd < 0 && mono_ns() >= c->deadline_ns)) {
		c->timed_out = true;
		if (fd >= 0)
			close(fd);
		return -ETIMEDOUT;
	}
	return fd;
}

void debuginfo_client_free(struct debuginfo_client *c)
{
	if (!c)
		return;
	if (c->dc)
		c->end(c->dc);
	if (c->lib)
		dlclose(c->lib);
	free(c);
}
