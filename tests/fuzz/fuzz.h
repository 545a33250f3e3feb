/* Helpers shared by the libFuzzer harnesses (tests/fuzz/fuzz_*.c): an input as a file (a memfd
 * reused across runs, for parsers that take a descriptor or a path), and the invariant check. */
#ifndef FIRN_FUZZ_H
#define FIRN_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/mman.h>
#include <unistd.h>

/* Aborts (a finding) when cond is false: an invariant the parser promises was broken. */
#define FUZZ_ASSERT(cond)                                                        \
	do {                                                                      \
		if (!(cond)) {                                                    \
			fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, \
				__LINE__, #cond);                                 \
			abort();                                                  \
		}                                                                 \
	} while (0)

/* An input as a process's memory from address base on: fuzz_image_read reads it as the runtime
 * readers' memory callbacks read a process (struct hotspot_mem, struct v8mem), -EFAULT (14)
 * outside it, as unmapped memory. */
struct fuzz_image {
	const uint8_t *data;
	size_t size;
	uint64_t base;
};

static inline int fuzz_image_read(void *ctx, pid_t pid, uint64_t addr, void *buf, size_t len)
{
	const struct fuzz_image *im = ctx;

	(void)pid;
	if (addr < im->base || addr - im->base > im->size || len > im->size - (addr - im->base))
		return -14;
	memcpy(buf, im->data + (addr - im->base), len);
	return 0;
}

/* Returns a descriptor of a memory file holding exactly data[0..size), offset 0. The same file
 * is reused by every run; the caller does not close it. */
static inline int fuzz_memfd(const uint8_t *data, size_t size)
{
	static int fd = -1;

	if (fd < 0 && (fd = memfd_create("firn-fuzz", MFD_CLOEXEC)) < 0)
		abort();
	if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size) ||
	    lseek(fd, 0, SEEK_SET))
		abort();
	return fd;
}

/* The /proc/self/fd path of fuzz_memfd's file, for parsers that open a path. */
static inline const char *fuzz_memfd_path(const uint8_t *data, size_t size)
{
	static char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fuzz_memfd(data, size));
	return path;
}

/* A value read from the input at byte i (wrapping), for addresses to look up. */
static inline uint64_t fuzz_u64(const uint8_t *data, size_t size, size_t i)
{
	uint64_t v = 0;

	for (size_t k = 0; size && k < 8; k++)
		v = v << 8 | data[(i + k) % size];
	return v;
}

#endif
