/* Unit tests for lib/proc/cgroup: container ids in the cgroup paths each runtime makes (docker and
 * containerd under systemd and cgroupfs, CRI-O, podman rootless and rootful, kubernetes pods),
 * paths that look like them and are not (conmon scopes, 63 or 65 digits, uppercase), lengths
 * that cut the input; the "0::" line of /proc/PID/cgroup (hybrid, pure v2, v1 only, no final
 * newline, truncation); and cgroup_resolve's refusals that need no root (empty names, paths
 * outside cgroupfs) where cgroup v2 is mounted. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "proc/cgroup.h"

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* The container id of path ("" when none). */
static const char *id_of(const char *path)
{
	static char out[CGROUP_ID_LEN + 1];
	size_t n = cgroup_container_id(path, strlen(path), out, sizeof(out));

	if (!n)
		return "";
	assert_int_equal(n, CGROUP_ID_LEN);
	assert_int_equal(strlen(out), CGROUP_ID_LEN);
	return out;
}

static void test_container_ids(void **state)
{
	(void)state;
	assert_string_equal(id_of("/system.slice/docker-" ID ".scope"), ID);
	assert_string_equal(id_of("/docker/" ID), ID);
	assert_string_equal(id_of("/kubepods.slice/kubepods-burstable.slice/"
				  "kubepods-burstable-pod1234_5678.slice/cri-containerd-" ID ".scope"), ID);
	assert_string_equal(id_of("/kubepods/besteffort/pod12345678-aaaa/" ID), ID);
	assert_string_equal(id_of("/machine.slice/libpod-" ID ".scope/container"), ID);
	assert_string_equal(id_of("/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID
				  ".scope"), ID);
	assert_string_equal(id_of("/kubepods.slice/crio-" ID ".scope"), ID);
	assert_string_equal(id_of("/system.slice/containerd-" ID ".scope"), ID);
	assert_string_equal(id_of(ID), ID);
	/* the innermost wins: a container in a container */
	assert_string_equal(id_of("/docker/" ID "/docker/fedcba9876543210fedcba9876543210fedcba9876543210"
				  "fedcba9876543210"), "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210");
	/* not ids */
	assert_string_equal(id_of("/machine.slice/libpod-conmon-" ID ".scope"), "");
	assert_string_equal(id_of("/kubepods.slice/crio-conmon-" ID ".scope"), "");
	assert_string_equal(id_of("/docker/" ID "0"), "");
	assert_string_equal(id_of("/docker/" ID ".scope.scope"), "");
	assert_string_equal(id_of("/docker/0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef"), "");
	assert_string_equal(id_of("/system.slice/docker-123.scope"), "");
	assert_string_equal(id_of("/system.slice/nginx.service"), "");
	assert_string_equal(id_of("/"), "");
	assert_string_equal(id_of(""), "");
	assert_string_equal(id_of("docker-.scope"), "");
	/* the length given is the end: a path cut inside the id has none */
	const char *p = "/docker/" ID "/x";
	char out[CGROUP_ID_LEN + 1];
	assert_int_equal(cgroup_container_id(p, 8 + 63, out, sizeof(out)), 0);
	assert_int_equal(cgroup_container_id(p, 8 + 64, out, sizeof(out)), CGROUP_ID_LEN);
	/* too small a buffer: the length, nothing written */
	memset(out, 'x', sizeof(out));
	assert_int_equal(cgroup_container_id(p, strlen(p), out, CGROUP_ID_LEN), CGROUP_ID_LEN);
	assert_int_equal(out[0], 'x');
}

static void test_parse_proc(void **state)
{
	char out[64];
	static const char hybrid[] = "9:name=systemd:/\n4:memory:/x/y\n1:cpu:/\n0::/firn-test\n";
	static const char v2[] = "0::/system.slice/docker-" ID ".scope";
	static const char v1[] = "4:memory:/x\n3:cpuset:/\n";

	(void)state;
	assert_int_equal(cgroup_parse_proc(hybrid, strlen(hybrid), out, sizeof(out)), 10);
	assert_string_equal(out, "/firn-test");
	assert_int_equal(cgroup_parse_proc(v2, strlen(v2), out, sizeof(out)), strlen(v2) - 3);
	assert_int_equal(strlen(out), sizeof(out) - 1); /* truncated to fit */
	assert_int_equal(cgroup_parse_proc(v1, strlen(v1), out, sizeof(out)), -ENOENT);
	assert_int_equal(cgroup_parse_proc("0::", 3, out, sizeof(out)), 0);
	assert_string_equal(out, "");
	assert_int_equal(cgroup_parse_proc("0:", 2, out, sizeof(out)), -ENOENT);
	assert_int_equal(cgroup_parse_proc("", 0, out, sizeof(out)), -ENOENT);
	/* the length given is the end */
	assert_int_equal(cgroup_parse_proc(hybrid, 30, out, sizeof(out)), -ENOENT);
	assert_true(cgroup_of_pid(getpid(), out, sizeof(out)) >= 0 || access("/proc/self/cgroup", R_OK));
}

static void test_resolve_refusals(void **state)
{
	char mount[4096], out[4096];

	(void)state;
	if (cgroup_v2_mount(mount, sizeof(mount))) {
		skip();
		return;
	}
	assert_int_equal(cgroup_resolve(mount, "", out, sizeof(out)), -EINVAL);
	assert_int_equal(cgroup_resolve(mount, "/sys/fs/cgroup/../../../tmp", out, sizeof(out)), -ENOTDIR);
	assert_int_equal(cgroup_resolve(mount, "firn-no-such-cgroup-xyz/sub", out, sizeof(out)), -ENOENT);
	/* out of the hierarchy by dots */
	assert_int_equal(cgroup_resolve(mount, "../../..", out, sizeof(out)), -ENOTDIR);
	assert_int_equal(cgroup_resolve(mount, "/", out, sizeof(out)), 0);
	assert_string_equal(out, mount);
	assert_int_equal(cgroup_resolve(mount, mount, out, sizeof(out)), 0);
	assert_string_equal(out, mount);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_container_ids),
		cmocka_unit_test(test_parse_proc),
		cmocka_unit_test(test_resolve_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
