/* Benchmark helper: indexes one ELF file with lib/elf/elfsym as the symbolizer does
 * (elfsym_init_fd) and prints one tab-separated line: the file, its symbols, the bytes the
 * elfsym keeps on the heap (elfsym_heap_bytes), the bytes malloc holds more after the call than
 * before it (mallinfo2: the elfsym's own and what the call freed but the allocator kept), the
 * process's RssAnon and RssFile after it (kB), and the best wall time of RUNS indexings (ms).
 * One file a process, so the figures are that file's alone.
 * usage: elfsym_index [-r RUNS] FILE */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "elf/elfsym.h"

/* Bytes malloc has handed out and not had back. */
static size_t heap_in_use(void)
{
	struct mallinfo2 m = mallinfo2();

	return m.uordblks + m.hblkhd;
}

/* The kB value of field key ("RssAnon:") of /proc/self/status, or -1. */
static long status_kb(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			v = strtol(line + strlen(key), NULL, 10);
	if (f)
		fclose(f);
	return v;
}

int main(int argc, char **argv)
{
	int runs = 5, a = 1;
	struct elfsym e;

	if (argc > 2 && !strcmp(argv[1], "-r")) {
		runs = atoi(argv[2]);
		a = 3;
	}
	if (a + 1 != argc || runs < 1) {
		fprintf(stderr, "usage: elfsym_index [-r RUNS] FILE\n");
		return 2;
	}
	int fd = open(argv[a], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "elfsym_index: cannot open '%s': %s\n", argv[a], strerror(errno));
		return 1;
	}
	size_t before = heap_in_use();
	int err = elfsym_init_fd(&e, fd);
	size_t after = heap_in_use();
	long anon = status_kb("RssAnon:"), file = status_kb("RssFile:");
	if (err) {
		fprintf(stderr, "elfsym_index: cannot read '%s': %s\n", argv[a], strerror(-err));
		return 1;
	}
	size_t nsyms = e.nsyms, kept = elfsym_heap_bytes(&e);
	elfsym_release(&e);
	double best = 1e9;
	for (int i = 0; i < runs; i++) {
		uint64_t t0 = mono_ns();
		if (elfsym_init_fd(&e, fd))
			return 1;
		double ms = (mono_ns() - t0) / 1e6;
		elfsym_release(&e);
		if (ms < best)
			best = ms;
	}
	close(fd);
	printf("%s\t%zu\t%zu\t%zu\t%ld\t%ld\t%.2f\n", argv[a], nsyms, kept, after - before, anon,
	       file, best);
	return 0;
}
