/* The clocks: the monotonic one, the one time base of deadlines, refresh intervals and elapsed
 * times; the wall clock only for the dates a profile or a file name carries. */
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

/* CLOCK_REALTIME in nanoseconds since the epoch: for dates (a profile's time, interval names),
 * never for a duration (the wall clock can be set back or forward). */
static inline uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif
