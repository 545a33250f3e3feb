/* The events of a recording and what they attach: cpu-clock, off-CPU time, the USDT probes the
 * -e usdt specs match and libfirn-cuda's probes (--cuda), in the order of their sample types
 * (capture_event, lib/record/capture.h). A recorder owns one (struct recorder's ev); it attaches the
 * probes through the sample source, and watches the processes of the recording for the objects
 * with probes (to warn, at the end, of a spec without hits whose objects no process mapped).
 *
 * Warnings and notes go through lib/base/diag.h ("cannot attach to USDT probe ...", "no hits for
 * ..."); failures return -errno and leave a one-line message in the buffer given to
 * events_attach (the recorder's error). One thread at a time. */
#ifndef FIRN_EVENTS_H
#define FIRN_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "record/capture.h"
#include "source/procdispatch.h"

struct recorder_opts;
struct sample_source;
struct sampler_opts;

/* Who tells the recorder of a process that maps a probed object now (-a: snapshotted ahead, so
 * its first hits unwind and symbolize): 0 when it became a target, else -errno. */
typedef int events_announce_fn(void *ctx, pid_t pid);

struct probed_object;
struct usdt_use;
struct events_watched;

/* The events, in sample type order (list: type names owned, units literals), and what was
 * attached for them. Start with events_init, fill with events_attach, free with events_release. */
struct events {
	struct capture_event *list;
	unsigned n, cap;
	uint32_t next_id; /* of the next USDT probe (ids count from 1) */
	struct probed_object *objs; /* objects with attached probes (for -a: who maps them) */
	size_t nobjs, cap_objs;
	struct usdt_use *uses; /* which -e spec attached which probe where (warn_unmapped) */
	size_t nuses, cap_uses;
	int cur_spec;     /* the -e value being attached */
	struct events_watched *watch; /* processes whose maps tell whether they map a probed object */
	size_t nwatch, cap_watch;
	pid_t *announced; /* processes snapshotted before their first event (not yet counted) */
	size_t nannounced, cap_announced;
	/* borrowed (events_init, events_attach) */
	const struct recorder_opts *o;
	struct sample_source *ss;
	events_announce_fn *announce;
	void *ctx;
	char *err;
	size_t errlen;
};

/* The sampler settings the events of o ask for: no cpu-clock, the USDT, CUDA and off-CPU
 * programs, the programs and counters of the rows that name theirs. 0, or -E2BIG when those do
 * not fit (SAMPLER_MAX_PROGS). */
int events_sampler_opts(const struct recorder_opts *o, struct sampler_opts *so);

/* Starts ev empty, for the events of o; o and err (errlen bytes: the message of a failure) are
 * borrowed for ev's life. */
void events_init(struct events *ev, const struct recorder_opts *o, events_announce_fn *announce,
		 void *ctx, char *err, size_t errlen);

/* Attaches the -e events of o in order (their sample types follow that order), then --cuda's
 * (o->cuda_lib), through ss (borrowed for ev's life); with -a, processes that map a probed
 * object now are announced. 0 or -errno. */
int events_attach(struct events *ev, struct sample_source *ss);

/* Its process listener (ctx: ev), for procdispatch_listen: with USDT events of -p or a
 * command, a process's first sample or exec has events_check_watched look at its maps at once
 * (whether it maps an object with probes). Out of memory: not watched. */
struct procdispatch_listener events_listener(struct events *ev);

/* Whether pid was announced (and not yet seen since): it is forgotten as announced. ctx: the
 * events (the procsnap_announced_fn of lib/record/procsnap.h). */
bool events_take_announced(void *ctx, pid_t pid);

/* Looks at the maps of the watched processes that are due (all of them when final), while
 * some object with probes was never seen mapped. */
void events_check_watched(struct events *ev, bool final);
/* When (CLOCK_MONOTONIC ns) the next watched process is due (0: none). */
uint64_t events_next_due_ns(const struct events *ev);

/* After a -p or command recording: warns of each -e usdt spec without a hit in p whose objects
 * no process of the recording was seen mapping. */
void events_warn_unmapped(const struct events *ev, const struct profile *p);

/* Frees what ev holds (not what it borrows). */
void events_release(struct events *ev);

#endif
