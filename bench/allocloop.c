/* A malloc-heavy workload for bench/alloc.sh: N rounds of malloc (16..1040 bytes, varied),
 * a write to it and free, plus one calloc/realloc/free cycle every 8 rounds, timed around the
 * loop alone (a profiler's start-up is not counted). Prints one line:
 * "allocloop: elapsed_s S calls C bytes B ns_per_round R". Usage: allocloop [ROUNDS] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void *volatile sink;

/* Seconds on the monotonic clock. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000000;
	unsigned long calls = 0, bytes = 0;
	double t0 = now();

	for (unsigned long i = 0; i < rounds; i++) {
		size_t n = 16 + (i * 2654435761u) % 1025;
		char *p = malloc(n);
		p[0] = (char)i;
		sink = p;
		free(p);
		calls += 2;
		bytes += n;
		if (i % 8 == 0) {
			char *q = calloc(1, n), *r = realloc(q, 2 * n);
			sink = r;
			free(r);
			calls += 3;
			bytes += 3 * n;
		}
	}
	double s = now() - t0;
	printf("allocloop: elapsed_s %.6f calls %lu bytes %lu ns_per_round %.2f\n", s, calls, bytes,
	       s * 1e9 / (double)rounds);
	return 0;
}
