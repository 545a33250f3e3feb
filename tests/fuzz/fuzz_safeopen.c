/* libFuzzer harness: names resolved inside a process's root (safeopen_walk, the walk for kernels
 * without openat2, and safeopen_at), over a fixed fake root whose symlinks climb out of it
 * ("up" -> ../../.., "host" -> the absolute path of a folder beside the root, "abs" -> /a, a
 * loop, /proc/self/root). Each input byte picks a path component (byte 0: O_NOFOLLOW or not).
 * Whatever opens is inside the root, never the folder beside it; the walk and openat2
 * (RESOLVE_IN_ROOT) open the same file, or neither does. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "base/safeopen.h"
#include "fuzz.h"

static char top[64], root[96];
static int rootfd = -1;

/* Removes the fake root at exit. */
static void remove_top(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", top);
}

/* Makes the fake root once: root/{a/{f,b/,rel->../a/b,magic->/proc/self/root},up,abs,host,loop}
 * and beside it out/secret. */
static void make_root(void)
{
	char p[256], out[160];

	snprintf(top, sizeof(top), "/tmp/firn-fuzz-root.XXXXXX");
	FUZZ_ASSERT(mkdtemp(top));
	atexit(remove_top);
	snprintf(root, sizeof(root), "%s/root", top);
	snprintf(out, sizeof(out), "%s/out", top);
	const char *dirs[] = { "", "/a", "/a/b" };
	for (size_t i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s%s", root, dirs[i]);
		FUZZ_ASSERT(!mkdir(p, 0755));
	}
	FUZZ_ASSERT(!mkdir(out, 0755));
	const char *files[] = { "/a/f", "/a/b/g" };
	for (size_t i = 0; i < 2; i++) {
		snprintf(p, sizeof(p), "%s%s", root, files[i]);
		FUZZ_ASSERT(!close(open(p, O_WRONLY | O_CREAT, 0644)));
	}
	snprintf(p, sizeof(p), "%s/secret", out);
	FUZZ_ASSERT(!close(open(p, O_WRONLY | O_CREAT, 0644)));
	const char *links[][2] = { { "/up", "../../.." }, { "/abs", "/a" }, { "/host", out },
				   { "/loop", "loop/x" }, { "/a/rel", "../a/b" },
				   { "/a/magic", "/proc/self/root" }, { "/a/b/top", "/" } };
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", root, links[i][0]);
		FUZZ_ASSERT(!symlink(links[i][1], p));
	}
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	FUZZ_ASSERT(rootfd >= 0);
}

/* Whether fd is open on something inside the root. */
static bool inside(int fd)
{
	char link[64], at[PATH_MAX];

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, at, sizeof(at) - 1);
	FUZZ_ASSERT(n > 0);
	at[n] = 0;
	size_t len = strlen(root);
	return !strncmp(at, root, len) && (at[len] == 0 || at[len] == '/');
}

/* Whether a and b are open on the same file. */
static bool same(int a, int b)
{
	struct stat sa, sb;

	return !fstat(a, &sa) && !fstat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const parts[] = { "/", "a", "b", "f", "g", "..", ".", "up", "abs", "host",
					     "loop", "rel", "magic", "top", "out", "secret", "//", "x" };
	char path[1024] = "";
	size_t n = 0;

	if (rootfd < 0)
		make_root();
	if (!size)
		return 0;
	int oflags = O_RDONLY | O_NONBLOCK | (data[0] & 1 ? O_NOFOLLOW : 0);
	for (size_t i = 1; i < size && n + 8 < sizeof(path); i++) {
		const char *p = parts[data[i] % (sizeof(parts) / sizeof(parts[0]))];
		n += (size_t)snprintf(path + n, sizeof(path) - n, "%s%s", p, p[0] == '/' ? "" : "/");
	}
	if (n && data[size - 1] & 0x80)
		path[--n] = 0; /* end on a name, not a slash */
	int fd = safeopen_walk(rootfd, path, oflags);
	if (fd >= 0)
		FUZZ_ASSERT(inside(fd));
	struct open_how how = { .flags = (uint64_t)oflags, .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	int k = -1;
	errno = EAGAIN;
	for (int tries = 0; tries < 100 && k < 0 && errno == EAGAIN; tries++) /* renames elsewhere */
		k = (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
	bool compare = k >= 0 || (errno != EAGAIN && errno != ENOSYS); /* else: no answer */
	if (fd >= 0 && compare)
		FUZZ_ASSERT(k >= 0 && same(fd, k));
	if (k >= 0) /* and the other way round (the walk is stricter only at a link named "x/") */
		FUZZ_ASSERT(fd >= 0 || ((oflags & O_NOFOLLOW) && n && path[n - 1] == '/'));
	int s = safeopen_at(rootfd, path, data[0] & 1 ? SAFEOPEN_NOFOLLOW : 0, 0, NULL);
	if (s >= 0)
		FUZZ_ASSERT(inside(s));
	for (int c[] = { fd, k, s }, i = 0; i < 3; i++)
		if (c[i] >= 0)
			close(c[i]);
	return 0;
}
