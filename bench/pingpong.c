/* Switch-heavy workload for bench/offcpu.sh: two processes pass a byte back and forth over two
 * pipes ROUNDS times, each blocking in read between turns (two waits, four context switches a
 * round). Prints "rounds R elapsed_s E cpu_s C voluntary_switches V switches_per_s S" (C: user +
 * system time of both processes), then lingers
 * LINGER_MS (default 0) so that a profiler's statistics can be read before it ends.
 * usage: pingpong ROUNDS [LINGER_MS] */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A struct timeval in seconds (rusage times). */
static double tv_s(struct timeval tv)
{
	return tv.tv_sec + tv.tv_usec / 1e6;
}

/* Reads a byte from in and writes it to out, rounds times (the child starts by reading). */
static void bounce(int in, int out, long rounds, int first)
{
	char c = 'x';

	for (long r = 0; r < rounds; r++) {
		if (first && write(out, &c, 1) != 1)
			exit(1);
		if (read(in, &c, 1) != 1)
			exit(1);
		if (!first && write(out, &c, 1) != 1)
			exit(1);
	}
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 100000;
	long linger = argc > 2 ? atol(argv[2]) : 0;
	int ab[2], ba[2];
	struct rusage self, kids;

	if (pipe(ab) || pipe(ba))
		return 1;
	double t0 = now_s();
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	/* each closes the ends it does not use: when the other is killed, its read sees EOF and it
	 * exits (bench/offcpu.sh kills the parent of a system-wide run; the child used to linger) */
	if (pid == 0) {
		close(ab[1]), close(ba[0]);
		bounce(ab[0], ba[1], rounds, 0);
		_exit(0);
	}
	close(ab[0]), close(ba[1]);
	bounce(ba[0], ab[1], rounds, 1);
	waitpid(pid, NULL, 0);
	double t = now_s() - t0;
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	long v = self.ru_nvcsw + kids.ru_nvcsw;
	double cpu = tv_s(self.ru_utime) + tv_s(self.ru_stime) + tv_s(kids.ru_utime) +
		     tv_s(kids.ru_stime);
	printf("rounds %ld elapsed_s %.6f cpu_s %.6f voluntary_switches %ld switches_per_s %.0f\n",
	       rounds, t, cpu, v, v / t);
	fflush(stdout);
	if (linger > 0)
		usleep(linger * 1000);
	return 0;
}
