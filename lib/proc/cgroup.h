/* cgroup v2 for firn record --cgroup: what the user names (a directory under the cgroup v2
 * mount, a cgroup path as /proc/PID/cgroup prints it, a systemd unit such as foo.service, a
 * container's scope or id) resolved to the cgroup's directory; the BPF maps of the in-kernel
 * filter filled from those directories; and the container id read out of a cgroup path (the
 * runtimes' naming: docker-ID.scope, cri-containerd-ID.scope, crio-ID.scope, libpod-ID.scope,
 * /docker/ID, a bare 64-hex component) for labels. The parsers take outside input (paths
 * from /proc, where any process can name its cgroups) and never read past what they are given. */
#ifndef FIRN_CGROUP_H
#define FIRN_CGROUP_H

#include <stddef.h>
#include <sys/types.h>

#define CGROUP_FILTER_MAX 16   /* cgroups the filter holds (bpf/cgroup_filter.bpf.h) */
#define CGROUP_ID_LEN 64       /* a container id: 64 lowercase hex digits */
#define CGROUP_SEARCH_DEPTH 16 /* levels searched below the mount for a unit or container */

/* The mount point of the cgroup v2 hierarchy (/sys/fs/cgroup on a pure v2 host,
 * /sys/fs/cgroup/unified on a hybrid one) into out (len bytes), from /proc/self/mounts:
 * 0, -ENOENT when none is mounted (cgroup v1 only), -ENAMETOOLONG, or -errno. */
int cgroup_v2_mount(char *out, size_t len);

/* Resolves name to the absolute directory of a cgroup v2 under mount (as cgroup_v2_mount gave
 * it) into out (len bytes):
 * - a path under mount (or under /sys/fs/cgroup): that directory;
 * - another absolute path: a cgroup path below mount ("/system.slice/foo.service", as the "0::"
 *   line of /proc/PID/cgroup has it);
 * - a relative path below mount ("firn-test", "system.slice/foo.service");
 * - failing that, a name without '/': the cgroup of that name anywhere below mount (a systemd
 *   unit "foo.service" or "foo", a scope "docker-ID.scope"), or a container id or its prefix of
 *   12 or more hex digits (the cgroup whose container id starts with it).
 * Returns 0; -ENOENT: no such cgroup; -EMEDIUMTYPE: a directory of a cgroup v1 hierarchy;
 * -ENOTDIR: not a cgroup v2 directory; -ENOTUNIQ: several cgroups have that name (out then
 * holds one of them); -EINVAL: an empty name; -ENAMETOOLONG; or -errno. */
int cgroup_resolve(const char *mount, const char *name, char *out, size_t len);

/* The container id in a cgroup path (len bytes, need not be NUL-terminated): the innermost
 * component that is 64 hex digits, or is one after a runtime's prefix (docker-, cri-containerd-,
 * crio-, libpod-, containerd-) and before ".scope". Copies it (NUL-terminated) into out when
 * outlen > CGROUP_ID_LEN and returns its length (CGROUP_ID_LEN); 0 when there is none. */
size_t cgroup_container_id(const char *path, size_t len, char *out, size_t outlen);

/* The cgroup v2 path in /proc/PID/cgroup text (len bytes): the "0::PATH" line's PATH, copied
 * NUL-terminated into out (outlen bytes, truncated to fit). Returns its length, or -ENOENT
 * when there is no such line (cgroup v1 only). */
long cgroup_parse_proc(const char *text, size_t len, char *out, size_t outlen);

/* The cgroup v2 path of process pid ("/system.slice/foo.service") into out: its length, or
 * -errno (-ENOENT: no such process, or no cgroup v2 line). */
long cgroup_of_pid(pid_t pid, char *out, size_t outlen);

/* Fills the filter's maps (a BPF_MAP_TYPE_CGROUP_ARRAY at array_fd, a hash of cgroup ids at
 * ids_fd) with the n cgroup directories dirs (at most CGROUP_FILTER_MAX): 0, or -errno
 * (-E2BIG for too many; the open's or the update's error). */
int cgroup_filter_fill(int array_fd, int ids_fd, const char *const *dirs, int n);

#endif
