/* Go goroutine labels as a runtime (lib/runtimes/runtime.h): "go", tag FIRN_GO_TAG. At a
 * process's first sample (or exec) it reads its executable's Go release from the build
 * information (lib/runtimes/golabels.h) and hands the Go labels walker (bpf/golabels.bpf.h) the
 * offsets of that release; the walker announces each goroutine label set it meets, which this
 * runtime keeps by id and names as the samples' pprof labels (endpoint=a) in the capture. It
 * makes no frames. --no-go turns it off. An executable found to hold no Go release is remembered
 * by identity (dev, inode, size, mtime: a stat of /proc/PID/exe, 256 of them), so the processes
 * of one program cost a stat each, not an open and reads of the file. */
#ifndef FIRN_GORUNTIME_H
#define FIRN_GORUNTIME_H

#include <stdint.h>

#include "runtimes/runtime.h"

/* Its counters (runtime_ops.stats): what user space did, and the walker's (enum firn_go_stat). */
struct goruntime_stats {
	uint64_t processes; /* Go processes told to the walker */
	uint64_t refused;   /* Go processes of a release (or build) whose layout firn does not know */
	uint64_t contexts;  /* label sets announced and kept */
	uint64_t bpf[8];    /* the walker's counters, by enum firn_go_stat */
	char last_refusal[96];
};

extern const struct runtime_ops runtime_go;

#endif
