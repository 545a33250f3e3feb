/* Continuous recording for firn record: --every cuts the recording into intervals, each written
 * to its own file (-o PATTERN, --keep) and/or pushed to a profile store (--push, lib/record/push.h) as it
 * is cut; a plain -o FILE still gets the whole recording at the end. Its options are a group of
 * record's option table; its ids are CONT_OPT_FIRST and up. */
#ifndef FIRN_CONTINUOUS_H
#define FIRN_CONTINUOUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opt.h"
#include "record/push.h"
#include "format/input.h"
#include "record/interval.h"
#include "model/profile.h"
#include "record/recorder.h"

#define CONT_OPT_FIRST 700
#define CONT_OPT_LAST 719

extern const struct opt continuous_opts[];

/* A continuous recording drains the in-kernel counts this far apart at most, where the rate
 * allows (recorder_opts.drain_max_ns): its cost counts over hours, a drain's latency does not */
#define CONTINUOUS_DRAIN_MAX_NS 2000000000ULL

/* Encodes an interval's profile for its file (the format record's -o asks for): 0 or -errno,
 * *buf malloc'd. */
typedef int (*continuous_encode_fn)(void *arg, const struct profile *p, void **buf, size_t *len);

struct continuous {
	/* options */
	double every;               /* seconds; 0: not cutting */
	long keep;                  /* --keep (0: every file) */
	const char *push_url;
	int proto;                  /* enum push_proto */
	struct push_label *labels;  /* --label, "k=v" split in place (argv) */
	size_t nlabels;
	const char *tenant, *token_file, *cacert;
	double push_timeout;        /* seconds */
	long queue_items, queue_bytes;
	/* state */
	char *token;                /* --push-token-file's token, read by continuous_check */
	char *push_shown;           /* the --push URL as messages show it (push_url_shown) */
	const char *pattern;        /* -o holds a strftime pattern: one file per interval */
	bool whole;                 /* a plain -o: the intervals merged into one file at the end */
	struct interval_files files;
	struct push *push;
	struct profile acc;         /* whole: every interval's samples, over the recorder's ids */
	bool have_acc;
	int64_t start_ns;           /* of the first interval */
	char *service;              /* the default service_name's value (owned) */
	bool single;                /* one target (-- CMD, one -p): record sets it */
	bool service_decided;       /* the first interval was pushed: the service stays */
	unsigned freq;              /* continuous_start's */
	size_t cap_saved;
	uint64_t next_cut_ns;       /* wall clock */
	uint64_t intervals, bytes, samples, write_failed;
	int write_err;              /* errno of the last file not written */
	uint64_t unsaved;           /* unsent intervals that could not be saved either */
	int save_err;               /* errno of the last of them */
	int64_t last_end_ns;        /* end of the last interval cut */
	char **saved;               /* unsent intervals saved at the end */
	size_t nsaved;
	continuous_encode_fn encode;
	void *encode_arg;
	unsigned pprof_flags;       /* what pushed pprof leaves out (PPROF_*) */
	int (*stop_count)(void);    /* the stop signals received so far (NULL: none counted) */
	int stops_at_end;           /* stop_count when sampling ended: one more cuts the push's
				     * drain short (a second Ctrl-C, or a first after -d) */
	struct file_write fw;        /* how files are written (record's: mode 0600, owner) */
	/* the pids of every interval, a bit each (the summary's count): a fixed 512 KiB whose pages
	 * are touched only where pids fall, so days of churn do not grow it */
	uint64_t *pid_seen;
	size_t npids;               /* bits set */
};

void continuous_init(struct continuous *c);
/* Handles one of continuous_opts (id >= CONT_OPT_FIRST): 0, or 2 after a usage error. */
int continuous_option(struct continuous *c, const struct cmd *cmd, int id, const char *arg);
/* Whether the recording is continuous (--every or --push). */
bool continuous_on(const struct continuous *c);
/* Checks the options against -o (output; output_given: -o was on the line) and decides what is
 * written; the service name defaults to the command's (argv[0]'s base name: record gives
 * -p's first process name there) or "firn"; with a single target, to the service.name its first
 * interval's samples carry (profile_service) where they carry one. Prints
 * the usage error (2), or that --push-cacert's file is no CA file or --push-token-file's cannot
 * be read (1: before anything is recorded), or returns 0. */
int continuous_check(struct continuous *c, const struct cmd *cmd, const char *output,
		     bool output_given, char **argv, int argc);
/* Starts pushing (when --push): 0, or prints the error and returns 1. freq: samples per second. */
int continuous_start(struct continuous *c, unsigned freq, uint64_t start_ns);
/* Called from the sampling loop: cuts an interval when one is due and writes and pushes it.
 * 0, or prints the error and returns 1 (the recording cannot go on). */
int continuous_tick(struct continuous *c, struct recorder *rec, uint64_t now_ns);
/* How long the sampling loop may sleep before the next cut is due (ms, at most max). */
int continuous_wait_ms(const struct continuous *c, uint64_t now_ns, int max);
/* The last interval: prof is recorder_finish's (samples since the last cut). Writes and pushes
 * it, drains the push queue (the time-out plus 2 s at most, less when a stop signal comes past
 * stops_at_end) and saves what could not be sent. With a
 * plain -o, prof's samples are then replaced by every interval's and its time by the whole
 * recording's (the profile the file gets). 0, or prints the error and returns 1. */
int continuous_finish(struct continuous *c, struct profile *prof);
/* The intervals sent to the --push store so far and their pprof bytes (0 and 0 without --push). */
void continuous_pushed(const struct continuous *c, uint64_t *intervals, uint64_t *bytes);
/* The intervals that nothing holds at the end: with -o PATTERN the files not written (pushed
 * or not); with --push alone those dropped from the queue and those unsent that could not be
 * saved; none with a plain -o (the whole file, written at the end, holds them all). */
uint64_t continuous_lost(const struct continuous *c);
/* After continuous_finish: when intervals were lost (continuous_lost), prints how many and why
 * in one line ("firn: 5 of 7 intervals not written to 'PATTERN': No space left on device") and
 * returns 1 (a lost interval fails the recording, as an unwritable -o FILE does); else 0. */
int continuous_lost_error(const struct continuous *c);
/* The summary line of the intervals and of the push. */
void continuous_summary(const struct continuous *c);
void continuous_release(struct continuous *c);

#endif
