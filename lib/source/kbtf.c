/* The kernel's identity for the minimized BTF, and the memfd that hands the blob to libbpf. */
#include "source/kbtf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#define VMLINUX_BTF "/sys/kernel/btf/vmlinux"
#define NT_GNU_BUILD_ID 3
#define ALIGN4(n) (((n) + 3) & ~(size_t)3)

/* The hex of the GNU build-ID note in notes (n bytes of ELF notes) into hex (len bytes);
 * "" when there is none. */
static void note_build_id(const unsigned char *notes, size_t n, char *hex, size_t len)
{
	*hex = 0;
	for (size_t i = 0; i + 12 <= n;) {
		uint32_t h[3];
		memcpy(h, notes + i, sizeof(h));
		size_t name = i + 12, desc = name + ALIGN4(h[0]), end = desc + ALIGN4(h[1]);
		if (end > n || end <= i)
			return;
		if (h[2] == NT_GNU_BUILD_ID && h[0] == 4 && !memcmp(notes + name, "GNU", 4) &&
		    h[1] * 2 < len) {
			for (uint32_t k = 0; k < h[1]; k++)
				snprintf(hex + 2 * k, 3, "%02x", notes[desc + k]);
			return;
		}
		i = end;
	}
}

/* The running kernel's build ID (hex, "" when unknown) into hex. */
static void kernel_build_id(char *hex, size_t len)
{
	unsigned char notes[4096];
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, notes, sizeof(notes));

	if (fd >= 0)
		close(fd);
	*hex = 0;
	if (n > 0)
		note_build_id(notes, (size_t)n, hex, len);
}

int kbtf_key(char *buf, size_t len)
{
	struct utsname u;
	struct stat st;
	char id[129];

	if (stat(VMLINUX_BTF, &st))
		return -ENOENT;
	if (uname(&u))
		return -errno;
	kernel_build_id(id, sizeof(id));
	int n = snprintf(buf, len, "%s %s %lld", u.release, id, (long long)st.st_size);
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

/* Writes len bytes of p to fd; 0 or -errno. */
static int write_all(int fd, const unsigned char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n, len -= (size_t)n;
	}
	return 0;
}

int kbtf_open(const char *key, const void *btf, size_t len)
{
	char mine[512];
	int err = kbtf_key(mine, sizeof(mine));

	if (!len || !key || !*key)
		return -ENOENT;
	if (err)
		return err;
	if (strcmp(key, mine))
		return -ESTALE;
	int fd = memfd_create("firn-btf", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if ((err = write_all(fd, btf, len))) {
		close(fd);
		return err;
	}
	return fd;
}

char *kbtf_path(int fd, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/self/fd/%d", fd);
	return buf;
}
