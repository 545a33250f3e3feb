/* cgroup v2: --cgroup names resolved to directories, the filter's maps, container ids (cgroup.h). */
#include "proc/cgroup.h"

#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <mntent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

int cgroup_v2_mount(char *out, size_t len)
{
	FILE *f = setmntent("/proc/self/mounts", "re");
	struct mntent *m, buf;
	char line[4096];
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (err == -ENOENT && (m = getmntent_r(f, &buf, line, sizeof(line))))
		if (!strcmp(m->mnt_type, "cgroup2"))
			err = snprintf(out, len, "%s", m->mnt_dir) < (int)len ? 0 : -ENAMETOOLONG;
	endmntent(f);
	return err;
}

/* A hex digit as cgroup names have them (lowercase). */
static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* Whether s[0..n) is n hex digits. */
static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_hex(s[i]))
			return false;
	return true;
}

/* The id in one path component c (n bytes): where it starts, or NULL. */
static const char *component_id(const char *c, size_t n)
{
	static const char *const prefixes[] = { "docker-", "cri-containerd-", "crio-", "libpod-",
						"containerd-" };
	static const char scope[] = ".scope";

	if (n > sizeof(scope) - 1 && !memcmp(c + n - (sizeof(scope) - 1), scope, sizeof(scope) - 1))
		n -= sizeof(scope) - 1;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t p = strlen(prefixes[i]);
		if (n == p + CGROUP_ID_LEN && !memcmp(c, prefixes[i], p)) {
			c += p;
			n -= p;
			break;
		}
	}
	return n == CGROUP_ID_LEN && all_hex(c, n) ? c : NULL;
}

size_t cgroup_container_id(const char *path, size_t len, char *out, size_t outlen)
{
	size_t end = len;

	while (end > 0) {
		size_t start = end;
		while (start > 0 && path[start - 1] != '/')
			start--;
		const char *id = component_id(path + start, end - start);
		if (id) {
			if (outlen > CGROUP_ID_LEN) {
				memcpy(out, id, CGROUP_ID_LEN);
				out[CGROUP_ID_LEN] = 0;
			}
			return CGROUP_ID_LEN;
		}
		end = start ? start - 1 : 0;
	}
	return 0;
}

long cgroup_parse_proc(const char *text, size_t len, char *out, size_t outlen)
{
	size_t pos = 0;

	while (pos < len) {
		const char *line = text + pos, *nl = memchr(line, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - line) : len - pos;
		pos += n + 1;
		if (n < 3 || memcmp(line, "0::", 3))
			continue;
		size_t plen = n - 3, copy = outlen ? (plen < outlen - 1 ? plen : outlen - 1) : 0;
		if (outlen) {
			memcpy(out, line + 3, copy);
			out[copy] = 0;
		}
		return (long)plen;
	}
	return -ENOENT;
}

long cgroup_of_pid(pid_t pid, char *out, size_t outlen)
{
	char path[64], buf[8192];
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, sizeof(buf));
	int err = errno;
	close(fd);
	if (n < 0)
		return -err;
	return cgroup_parse_proc(buf, (size_t)n, out, outlen);
}

/* What kind of directory path is: 0 a cgroup v2 one, or -errno as cgroup_resolve says. */
static int check_dir(const char *path)
{
	struct statfs fs;
	struct stat st;

	if (stat(path, &st) || statfs(path, &fs))
		return -errno;
	if (fs.f_type == CGROUP_SUPER_MAGIC)
		return -EMEDIUMTYPE;
	if (fs.f_type != CGROUP2_SUPER_MAGIC || !S_ISDIR(st.st_mode))
		return -ENOTDIR;
	return 0;
}

/* Whether name is a path in the filesystem (under mount or /sys/fs/cgroup), not a cgroup path. */
static bool is_fs_path(const char *mount, const char *name)
{
	size_t m = strlen(mount);

	return (!strncmp(name, mount, m) && (name[m] == '/' || !name[m])) ||
	       !strncmp(name, "/sys/fs/cgroup", 14);
}

/* path, checked and made canonical (realpath), into out; it must stay under mount. */
static int finish(const char *mount, const char *path, char *out, size_t len)
{
	char real[PATH_MAX];
	int err = check_dir(path);
	size_t m = strlen(mount);

	if (err)
		return err;
	if (!realpath(path, real))
		return -errno;
	if (strncmp(real, mount, m) || (real[m] && real[m] != '/'))
		return -ENOTDIR; /* "../.." out of the hierarchy */
	return snprintf(out, len, "%s", real) < (int)len ? 0 : -ENAMETOOLONG;
}

/* What the tree search looks for, and what it found (the first two matches). */
struct search {
	const char *name;   /* a unit or cgroup name, or a container id prefix */
	size_t id_prefix;   /* > 0: name is a container id prefix of this many digits */
	char found[2][PATH_MAX];
	int nfound;
};

/* Whether directory entry base (its path: path) is what s looks for. */
static bool matches(const struct search *s, const char *base, const char *path)
{
	char id[CGROUP_ID_LEN + 1];
	size_t n = strlen(s->name);

	if (s->id_prefix)
		return cgroup_container_id(path, strlen(path), id, sizeof(id)) &&
		       !strncmp(id, s->name, s->id_prefix) &&
		       component_id(base, strlen(base)) != NULL;
	if (!strcmp(base, s->name))
		return true;
	/* "foo" names the unit foo.service, as systemctl takes it */
	return !strchr(s->name, '.') && !strncmp(base, s->name, n) && !strcmp(base + n, ".service");
}

/* Looks for s below dir (depth levels at most), stopping at the second match. */
static void search_tree(struct search *s, const char *dir, int depth)
{
	DIR *d = depth > 0 ? opendir(dir) : NULL;
	struct dirent *e;
	char path[PATH_MAX];

	if (!d)
		return;
	while (s->nfound < 2 && (e = readdir(d))) {
		if (e->d_type != DT_DIR || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path))
			continue;
		if (matches(s, e->d_name, path))
			snprintf(s->found[s->nfound++], PATH_MAX, "%s", path);
		search_tree(s, path, depth - 1);
	}
	closedir(d);
}

/* A name without '/' that is no cgroup below mount: a unit, a scope or a container id. */
static int search_name(const char *mount, const char *name, char *out, size_t len)
{
	struct search *s = calloc(1, sizeof(*s));
	size_t n = strlen(name);
	int err;

	if (!s)
		return -ENOMEM;
	s->name = name;
	s->id_prefix = n >= 12 && n <= CGROUP_ID_LEN && all_hex(name, n) ? n : 0;
	search_tree(s, mount, CGROUP_SEARCH_DEPTH);
	err = s->nfound ? finish(mount, s->found[0], out, len) : -ENOENT;
	if (!err && s->nfound > 1)
		err = -ENOTUNIQ;
	free(s);
	return err;
}

int cgroup_resolve(const char *mount, const char *name, char *out, size_t len)
{
	char path[PATH_MAX];

	if (!*name)
		return -EINVAL;
	if (is_fs_path(mount, name))
		return finish(mount, name, out, len);
	if (snprintf(path, sizeof(path), "%s%s%s", mount, *name == '/' ? "" : "/", name) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	int err = finish(mount, path, out, len);
	if (err == -ENOENT && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, ".."))
		err = search_name(mount, name, out, len);
	return err;
}

int cgroup_filter_fill(int array_fd, int ids_fd, const char *const *dirs, int n)
{
	if (n > CGROUP_FILTER_MAX)
		return -E2BIG;
	for (int i = 0; i < n; i++) {
		int fd = open(dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		struct stat st;
		__u32 key = (__u32)i, val = (__u32)fd;
		__u8 one = 1;
		if (fd < 0)
			return -errno;
		/* the array holds the cgroup itself: the descriptor can go */
		int err = fstat(fd, &st) || bpf_map_update_elem(array_fd, &key, &val, BPF_ANY) ? -errno : 0;
		__u64 id = st.st_ino; /* a cgroup v2 directory's inode is the cgroup's id */
		if (!err && bpf_map_update_elem(ids_fd, &id, &one, BPF_ANY))
			err = -errno;
		close(fd);
		if (err)
			return err;
	}
	return 0;
}
