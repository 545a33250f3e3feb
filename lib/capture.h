/* Turns what the sampler counted into a profile: symbolizes every frame (user frames through the
 * process snapshots of the symbolizer, kernel frames through kallsyms), labels samples with
 * pid, tid, comm and thread, and records the recording's metadata as comments. */
#ifndef FIRN_CAPTURE_H
#define FIRN_CAPTURE_H

#include <stdint.h>

#include "profile.h"
#include "sampler.h"
#include "symbolize.h"

struct capture_meta {
	unsigned freq;
	uint64_t start_ns, end_ns;   /* wall clock */
	const char *call_graph;
	int argc;                    /* the profiled command, if any */
	char **argv;
	const char *kernel;          /* uname release */
	int ncpus;
	const struct sampler_stats *stats;
};

/* Fills p (freshly initialized) from the sampler's entries. Returns 0 or -errno. */
int capture_build(struct profile *p, struct sampler *s, struct symbolizer *sym,
		  const struct capture_meta *m);

#endif
