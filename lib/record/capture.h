/* Turns what the sampler counted into a profile: symbolizes every frame (user frames through the
 * process snapshots of the symbolizer, kernel frames through kallsyms), labels samples with
 * pid, tid, comm and thread, and records the recording's metadata as comments.
 * The samples of a process that ends during the recording are symbolized then (capture_park,
 * before its snapshot is dropped) and parked on disk; capture_finish adds them and the entries
 * still in the sampler to the profile. */
#ifndef FIRN_CAPTURE_H
#define FIRN_CAPTURE_H

#include <stdint.h>

#include "model/profile.h"
#include "model/resolver.h"
#include "source/sampler.h"
#include "symbolize/symbolize.h"

struct event_desc;

/* A recorded event and its sample type, as its row of the event table (lib/record/event_table.h)
 * describes it. An entry's count is a number of hits (each counts 1) or, for a weighted event,
 * a weight in the event's unit (off-CPU time: nanoseconds). A timed event (cpu-clock) has two
 * types: "samples"/"count" then "cpu"/"nanoseconds" (hits x period); a USDT probe one,
 * "usdt_PROVIDER_NAME"/"count"; off-CPU time one, "off_cpu"/"nanoseconds". When both a timed
 * event and a wait event (off-CPU time) are recorded, a last type "wall"/"nanoseconds" holds
 * their sum per stack (on-CPU samples x period + time off the CPU), the default type. The
 * comments add the statistics of each event's row that has them. */
struct capture_event {
	uint32_t id;      /* the sampler's event number (sampler_entry.event) */
	const char *type; /* sample type name ("samples" for cpu-clock) */
	const struct event_desc *desc; /* its row: unit, weighted, timed, wait, statistics */
};

struct capture_meta {
	unsigned freq;
	uint64_t start_ns, end_ns;   /* wall clock */
	const char *call_graph;
	int argc;                    /* the profiled command, if any */
	char **argv;
	const char *kernel;          /* uname release */
	int ncpus;
	const struct sampler_stats *stats;
	/* The events, in the order of their sample types; the first is the default sample type.
	 * NULL: cpu-clock alone. Entries of other events are left out. */
	const struct capture_event *events;
	unsigned nevents;
	uint32_t off_cpu_rate;       /* off-CPU waits were sampled 1 in this many (0, 1: all) */
	uint64_t off_cpu_min_ns;     /* shorter waits were left out */
	int64_t alloc_rate;          /* -e alloc's mean bytes between samples (0: unknown): with
				      * alloc first, the period (type space/bytes, as Go's heap
				      * profiles), which firn diff's significance reads */
	const char *const *event_specs; /* the events as the user named them (comments) */
	unsigned nevent_specs;
	const char *spill_dir;       /* where parked samples go (NULL: $TMPDIR, else /tmp) */
	/* labels of a sample's process beyond pid and comm (lib/record/proclabels.h: exe, cgroup,
	 * container_id): writes CAPTURE_PROCESS_LABELS at most into out, interned in p; how many
	 * or -errno. NULL: none (read at capture_new) */
	int (*process_labels)(void *ctx, uint32_t pid, struct profile *p, struct profile_label *out);
	void *process_labels_ctx;
};
#define CAPTURE_PROCESS_LABELS 3
/* The most labels a sample's label context (sampler_entry.ctx) gives: its runtime's resolver's
 * labels (capture_set_resolver) for the context's tag. */
#define CAPTURE_CONTEXT_LABELS 16
/* The most labels the runtimes' resolvers give of a sample's process itself (proc_labels:
 * OpenTelemetry's service.name and up to 8 attributes). */
#define CAPTURE_RUNTIME_PROC_LABELS 9

struct capture;

/* Starts filling p (freshly initialized): its sample types come from m's events and freq (the
 * rest of m is read by capture_finish). NULL + errno. */
struct capture *capture_new(struct profile *p, struct symbolizer *sym,
			    const struct capture_meta *m);
/* Whether capture_park would symbolize e without waiting for a file to be indexed or for
 * kallsyms (it asks the symbolizer to prepare what is missing). */
bool capture_ready(struct capture *c, const struct sampler_entry *e);

/* The process (or thread) name samples of the idle task (pid 0, "swapper/N") are labelled with. */
#define CAPTURE_IDLE "[idle]"
/* The "comm" (or "thread") label for a sample of pid named name: CAPTURE_IDLE for pid 0, else
 * name. */
const char *capture_comm(uint32_t pid, const char *name);
/* Symbolizes an entry now (its process is about to be forgotten) and parks its sample until
 * capture_finish. 0 or -errno. */
int capture_park(struct capture *c, const struct sampler_entry *e);
/* For recorder_cut: drops the samples of the cut before (they were handed out), then adds the
 * parked samples and the entries with a count of a source (for_each(src, fn, ctx) calls fn for
 * each entry; reset the counts after), and the interval's time (start_ns, end_ns: wall clock);
 * no comments. The samples stay in p until the next capture_cut, capture_park or capture_finish
 * adds to it. 0 or -errno. */
int capture_cut(struct capture *c,
		int (*for_each)(void *src, int (*fn)(void *ctx, const struct sampler_entry *e), void *ctx),
		void *src, uint64_t start_ns, uint64_t end_ns);
/* Sets the resolver of tagged user-stack values of kind (1 .. FIRN_FRAME_KINDS - 1; see
 * lib/model/resolver.h), copied; without one, such values become locations without lines in a mapping
 * "[unknown]". 0 or -EINVAL. */
int capture_set_resolver(struct capture *c, unsigned kind, const struct frame_resolver *r);
/* Adds the sampler's remaining entries (s NULL: none) and the parked samples to the profile,
 * its time and m's metadata as comments. Each sample has one value per sample type: its count in its event's
 * type(s), 0 in the others. Returns 0 or -errno. */
int capture_finish(struct capture *c, struct sampler *s, const struct capture_meta *m);
/* The same with the entries of any source: for_each(src, fn, ctx) calls fn for each (NULL:
 * none). */
int capture_finish_from(struct capture *c,
			int (*for_each)(void *src, int (*fn)(void *ctx, const struct sampler_entry *e),
					void *ctx),
			void *src, const struct capture_meta *m);
/* Starts the profile's tables afresh (profile_renew) and forgets every id cached over them (the
 * interner's locations and functions, the resolved values, the resolvers' mappings): for a
 * continuous recording between cuts, whose tables would otherwise keep every address ever
 * resolved. Call it only when the profile's samples are no longer read and nothing is parked
 * (-EBUSY); the addresses of later samples are resolved again. 0 or -errno (-ENOMEM: the
 * profile unchanged). */
int capture_renew(struct capture *c);
/* After capture_cut: whether the profile's tables hold more than 4 times the locations the
 * cut's samples use (and more than 1024): time for capture_renew in a recording that keeps no
 * running profile over them. */
bool capture_outgrown(const struct capture *c);
void capture_free(struct capture *c);

/* The cpu-clock samples symbolized so far (each entry's count once: when parked, at a cut or at
 * the end): those whose every frame was named, and the others by the worst reason among their
 * frames (enum symbolizer_reason: a process never seen before the rest, then no mapping, no
 * file, no JIT symbol, no symbol). named + the unnamed add up to the samples of the profile. */
struct capture_frame_stats {
	uint64_t named;
	uint64_t unnamed[SYMBOLIZER_REASONS]; /* [SYMBOLIZER_RESOLVED] stays 0 */
};
void capture_frame_stats(const struct capture *c, struct capture_frame_stats *st);

#endif
