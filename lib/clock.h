/* The monotonic clock, the one time base of deadlines, refresh intervals and elapsed times. */
#ifndef FIRN_CLOCK_H
#define FIRN_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds (the clock BPF's bpf_ktime_get_ns reads); never fails. */
static inline uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif
