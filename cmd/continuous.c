/* Continuous recording: --every, -o PATTERN, --keep, --push and its options (continuous.h). */
#include "continuous.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "format/pprof.h"
#include "base/vec.h"

enum {
	OPT_EVERY = CONT_OPT_FIRST, OPT_KEEP, OPT_PUSH, OPT_PUSH_TO, OPT_LABEL, OPT_TENANT,
	OPT_TOKEN_FILE, OPT_PUSH_CACERT, OPT_PUSH_TIMEOUT, OPT_PUSH_QUEUE, OPT_PUSH_QUEUE_BYTES,
};

/* Pids are below PID_MAX_LIMIT, 4 Mi on 64-bit Linux (include/linux/threads.h). */
#define PID_SEEN_BITS (1 << 22)

/* How long the end waits for the queue to be sent, beyond one request's time-out. */
#define DRAIN_EXTRA_MS 2000

const struct opt continuous_opts[] = {
	{ "every", 0, "SECONDS", "cut the recording into intervals this long: one profile each (-o PATTERN, --push)", OPT_EVERY },
	{ "keep", 0, "N", "with -o PATTERN: keep the last N interval files, remove older ones firn wrote", OPT_KEEP },
	{ "push", 0, "URL", "send every interval to this profile store as it is cut", OPT_PUSH },
	{ "push-to", 0, "PROTOCOL", "the store's protocol: ", OPT_PUSH_TO },
	{ "label", 0, "KEY=VALUE", "a label of every pushed profile (repeatable; service_name=NAME names the service)", OPT_LABEL },
	{ "tenant", 0, "ID", "the tenant pushed to (X-Scope-OrgID for Pyroscope)", OPT_TENANT },
	{ "push-token-file", 0, "FILE", "send the bearer token this file holds", OPT_TOKEN_FILE },
	{ "push-cacert", 0, "FILE", "verify an https:// store with the CA certificates of this PEM file, not the system's", OPT_PUSH_CACERT },
	{ "push-timeout", 0, "SECONDS", "time-out of one push request (default 10, at most 300)", OPT_PUSH_TIMEOUT },
	{ "push-queue", 0, "N", "intervals queued while the store is unreachable, the oldest dropped first (default 64)", OPT_PUSH_QUEUE },
	{ "push-queue-bytes", 0, "BYTES", "bytes queued at most (default 67108864)", OPT_PUSH_QUEUE_BYTES },
	OPT_END,
};

void continuous_init(struct continuous *c)
{
	memset(c, 0, sizeof(*c));
	c->push_timeout = 10;
	c->fw = (struct file_write){ .mode = 0600 };
}

/* --label KEY=VALUE (push_labels_add's rules): a later one of the same key replaces the earlier. */
static int add_label(struct continuous *c, const struct cmd *cmd, const char *arg)
{
	int err = push_labels_add(&c->labels, &c->nlabels, arg);

	if (err == -EINVAL)
		return push_label_error(cmd, arg);
	return err ? error("out of memory") : 0;
}

int continuous_option(struct continuous *c, const struct cmd *cmd, int id, const char *arg)
{
	switch (id) {
	case OPT_EVERY:
		return opt_double(cmd, "every", arg, 0.1, 86400 * 7, &c->every);
	case OPT_KEEP:
		return opt_long(cmd, "keep", arg, 1, 1000000, &c->keep);
	case OPT_PUSH:
		c->push_url = arg;
		return 0;
	case OPT_PUSH_TO:
		return push_proto_option(cmd, "push-to", arg, &c->proto);
	case OPT_LABEL:
		return add_label(c, cmd, arg);
	case OPT_TENANT:
		c->tenant = arg;
		return push_value_check(cmd, "tenant", arg);
	case OPT_TOKEN_FILE:
		c->token_file = arg;
		return 0;
	case OPT_PUSH_CACERT:
		c->cacert = arg;
		return 0;
	case OPT_PUSH_TIMEOUT:
		return opt_double(cmd, "push-timeout", arg, 0.01, PUSH_TIMEOUT_MAX_MS / 1000.0,
				  &c->push_timeout);
	case OPT_PUSH_QUEUE:
		return opt_long(cmd, "push-queue", arg, 1, 1000000, &c->queue_items);
	case OPT_PUSH_QUEUE_BYTES:
		return opt_long(cmd, "push-queue-bytes", arg, 1, 1L << 40, &c->queue_bytes);
	}
	return usage_error(cmd, "unknown option");
}

bool continuous_on(const struct continuous *c)
{
	return c->every > 0 || c->push_url;
}

/* The label value of key, or NULL. */
static const char *label_of(const struct continuous *c, const char *key)
{
	for (size_t i = 0; i < c->nlabels; i++)
		if (!strcmp(c->labels[i].key, key))
			return c->labels[i].value;
	return NULL;
}

/* service_name: --label service_name=..., else the command's base name, else "firn"; in a
 * command's name, what a label's value cannot hold (braces, commas, control characters) is
 * '_': the name is not the user's to fix. */
static int default_service(struct continuous *c, char **argv, int argc)
{
	if (label_of(c, "service_name"))
		return 0;
	const char *name = argc > 0 ? strrchr(argv[0], '/') : NULL;
	name = argc > 0 ? (name ? name + 1 : argv[0]) : "firn";
	char *arg = NULL;
	if (asprintf(&arg, "service_name=%s", *name ? name : "firn") < 0)
		return error("out of memory");
	for (char *s = arg + strlen("service_name="); *s; s++)
		if (strchr("{},", *s) || (unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '_';
	c->service = arg; /* the label's value points into it */
	return add_label(c, &record_cmd, arg);
}

/* The token file's first line. */
static int read_token(const char *path, char **token)
{
	int err = push_read_token(path, token);

	if (err == -ENODATA)
		return error("cannot read '%s': no token in it", path);
	if (err == -EILSEQ)
		return error("cannot read '%s': a control character in the token", path);
	return err ? error("cannot read '%s': %s", path, strerror(-err)) : 0;
}

int continuous_check(struct continuous *c, const struct cmd *cmd, const char *output,
		     bool output_given, char **argv, int argc)
{
	bool pattern = output_given && interval_is_pattern(output);
	int rc;

	if (c->keep && !pattern)
		return usage_error(cmd, "--keep needs -o with a time pattern (e.g. prof-%%Y%%m%%dT%%H%%M%%S.pb.gz)");
	if (pattern && !c->every)
		return usage_error(cmd, "-o '%s' is a time pattern: give --every SECONDS too", output);
	if (!c->push_url && (c->proto || c->nlabels || c->tenant || c->token_file || c->cacert ||
			     c->queue_items || c->queue_bytes))
		return usage_error(cmd, "the push options need --push URL");
	if (c->push_url && (rc = push_url_check(cmd, c->push_url, "push")))
		return rc;
	if (c->push_url && !(c->push_shown = push_url_shown(c->push_url)))
		return error("out of memory");
	if (c->push_url && c->cacert && cacert_check(c->cacert, "push-cacert"))
		return 1; /* before the recording starts, not at its first push */
	if (c->push_url && c->token_file && read_token(c->token_file, &c->token))
		return 1; /* the same */
	if (c->push_url && !c->every)
		c->every = 10;
	if (!continuous_on(c))
		return 0;
	c->pattern = pattern ? output : NULL;
	c->whole = !pattern && (output_given || !c->push_url);
	if (c->pattern && interval_files_init(&c->files, output, (size_t)c->keep))
		return error("out of memory");
	return c->push_url ? default_service(c, argv, argc) : 0;
}


/* The push to --push named service (a made one is freed): 0, or prints the error and returns 1. */
static int open_push(struct continuous *c, const char *service)
{
	/* service_name is the application's name; the other labels go in braces */
	struct push_label *rest = calloc(c->nlabels + 1, sizeof(*rest));
	size_t nrest = 0;
	for (size_t i = 0; rest && i < c->nlabels; i++)
		if (strcmp(c->labels[i].key, "service_name"))
			rest[nrest++] = c->labels[i];
	struct push_opts po = {
		.proto = c->proto, .url = c->push_url, .service = service,
		.labels = rest, .nlabels = nrest, .tenant = c->tenant, .token = c->token,
		.cacert = c->cacert, .timeout_ms = (long)(c->push_timeout * 1000),
		.max_items = (size_t)c->queue_items, .max_bytes = (size_t)c->queue_bytes,
		.sample_rate = c->freq,
	};
	struct push *p = rest ? push_new(&po) : NULL;
	int err = rest ? errno : ENOMEM;
	free(rest);
	if (!p)
		return error("cannot push to '%s': %s", c->push_shown, strerror(err));
	push_free(c->push);
	c->push = p;
	return 0;
}

int continuous_start(struct continuous *c, unsigned freq, uint64_t start_ns)
{
	c->next_cut_ns = start_ns + (uint64_t)(c->every * 1e9);
	c->last_end_ns = (int64_t)start_ns;
	c->freq = freq;
	return c->push_url ? open_push(c, label_of(c, "service_name")) : 0;
}

/* Before the first push: a single target's service, when the user named none, is the
 * service.name of its OpenTelemetry process context (read by then: at its first sample). */
static int decide_service(struct continuous *c, const struct profile *p)
{
	const char *name = c->service && c->single && !c->service_decided ?
			   profile_service(p) : NULL;

	c->service_decided = true;
	return name && strcmp(name, label_of(c, "service_name")) ? open_push(c, name) : 0;
}

/* Marks the pids of p's samples in the set of every interval's. A sorted array grew by 8 bytes
 * and a memmove per new pid: on a host starting 100 processes a second, megabytes a day. */
static void add_pids(struct continuous *c, const struct profile *p)
{
	if (!c->pid_seen && !(c->pid_seen = calloc(PID_SEEN_BITS / 64, sizeof(uint64_t))))
		return; /* the count is a summary's: without memory it stays short */
	for (uint64_t i = 0; i < p->nsamples; i++) {
		int64_t pid = profile_label_num(p, &p->samples[i], "pid", -1);
		if (pid <= 0 || pid >= PID_SEEN_BITS)
			continue;
		uint64_t *w = &c->pid_seen[pid / 64], bit = 1ULL << (pid % 64);
		c->npids += !(*w & bit);
		*w |= bit;
	}
}

/* Writes one interval's file (-o PATTERN); a failure is a warning: the next may succeed. */
static void write_interval(struct continuous *c, const struct profile *p, const void *buf,
			   size_t len)
{
	char *name = interval_files_name(&c->files, p->time_nanos);
	struct file_write w = c->fw;
	int err = name ? file_replace_atomic(name, buf, len, &w) : -errno;

	if (err) {
		warning("cannot write '%s': %s", name ? name : c->pattern, strerror(-err));
		c->write_failed++;
		c->write_err = -err;
		free(name);
		return;
	}
	c->bytes += len;
	if ((err = interval_files_add(&c->files, name)))
		warning("cannot remove an old interval file: %s", strerror(-err));
}

/* Whether sample type t of p is a level (-e alloc's inuse_*: the live heap at the cut). */
static bool type_is_level(const struct profile *p, uint32_t t)
{
	return !strncmp(profile_str(p, p->sample_types[t].type), "inuse_", 6);
}

/* Starts the whole recording's profile with p's sample types. */
static int start_whole(struct continuous *c, const struct profile *p)
{
	int err = profile_init(&c->acc);

	c->have_acc = !err;
	for (uint32_t t = 0; t < p->nsample_types && !err; t++)
		if (profile_add_sample_type(&c->acc, profile_str(p, p->sample_types[t].type),
					    profile_str(p, p->sample_types[t].unit)) < 0)
			err = -ENOMEM;
	return err;
}

/* Adds p's samples to the whole recording's (over the recorder's stable ids): the tallies of
 * every interval, the levels of the last only (each cut shows the live heap whole). */
static int accumulate(struct continuous *c, const struct profile *p, bool last)
{
	int64_t *vals = calloc(p->nsample_types ? p->nsample_types : 1, sizeof(*vals));
	int err = vals ? 0 : -ENOMEM;

	if (!err && !c->have_acc)
		err = start_whole(c, p);
	for (uint64_t i = 0; i < p->nsamples && !err; i++) {
		const struct profile_sample *s = &p->samples[i];
		for (uint32_t t = 0; t < p->nsample_types; t++)
			vals[t] = !last && type_is_level(p, t) ? 0 : s->values[t];
		err = profile_add_sample(&c->acc, s->location_ids, s->nlocs, vals, s->labels,
					 s->nlabels);
	}
	free(vals);
	return err;
}

/* One interval cut (or the last, from recorder_finish): its file, its push, the whole. */
static int take_interval(struct continuous *c, struct profile *p, bool last)
{
	void *buf = NULL, *pb = NULL;
	size_t len = 0, pblen = 0;
	int err = 0;

	if (!c->intervals++)
		c->start_ns = p->time_nanos;
	c->samples += (uint64_t)profile_type_total(p, "samples");
	c->last_end_ns = p->time_nanos + p->duration_nanos;
	add_pids(c, p);
	if (c->pattern && !(err = c->encode(c->encode_arg, p, &buf, &len)))
		write_interval(c, p, buf, len);
	if (c->push && decide_service(c, p))
		return 1;
	if (!err && c->push && !(err = pprof_encode_flags(p, true, c->pprof_flags, &pb, &pblen)))
		err = push_submit(c->push, pb, pblen, p->time_nanos, p->time_nanos + p->duration_nanos);
	if (!err && c->whole)
		err = accumulate(c, p, last);
	free(buf);
	free(pb);
	return err ? error("cannot keep the interval: %s", strerror(-err)) : 0;
}

int continuous_tick(struct continuous *c, struct recorder *rec, uint64_t now_ns)
{
	if (now_ns < c->next_cut_ns)
		return 0;
	struct profile *p = recorder_cut(rec);
	if (!p)
		return error("%s", recorder_error(rec));
	uint64_t step = (uint64_t)(c->every * 1e9);
	while (c->next_cut_ns <= now_ns) /* a late cut does not shorten the next */
		c->next_cut_ns += step;
	return take_interval(c, p, false);
}

int continuous_wait_ms(const struct continuous *c, uint64_t now_ns, int max)
{
	if (!c->every || now_ns >= c->next_cut_ns)
		return c->every ? 0 : max;
	uint64_t left = (c->next_cut_ns - now_ns + 999999) / 1000000;
	return left < (uint64_t)max ? (int)left : max;
}

/* Where unsent intervals are saved: $TMPDIR, else /tmp. */
static const char *unsent_dir(void)
{
	const char *dir = getenv("TMPDIR");

	return dir && *dir ? dir : "/tmp";
}

/* Saves one interval that could not be sent as $TMPDIR/firn-unsent-TIME-XXXXXX.pb.gz and
 * names it for the summary; a failure is a warning, and the interval is lost (save_err). */
static void save_one(struct continuous *c, const struct push_item *it)
{
	char stamp[32], *tmpl = NULL;
	time_t t = (time_t)(it->from_ns / 1000000000);
	struct tm tm;
	int err = 0;

	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", gmtime_r(&t, &tm));
	if (asprintf(&tmpl, "%s/firn-unsent-%s-XXXXXX.pb.gz", unsent_dir(), stamp) < 0) {
		tmpl = NULL;
		err = -ENOMEM;
	} else {
		err = file_write_new(tmpl, 6, it->buf, it->len, &c->fw);
	}
	if (!err && VEC_GROW(c->saved, c->cap_saved, c->nsaved + 1) == 0) {
		c->saved[c->nsaved++] = tmpl;
		return;
	}
	if (err) {
		warning("cannot save an unsent interval in '%s': %s", unsent_dir(), strerror(-err));
		c->save_err = -err;
		c->unsaved++;
	}
	free(tmpl); /* (saved, but out of memory to name it: not lost) */
}

/* Saves the intervals that could not be sent (only when no file holds them already: no -o). */
static void save_unsent(struct continuous *c)
{
	struct push_item *items = NULL;
	long n = push_take_queued(c->push, &items);

	if (n < 0 && !c->pattern && !c->whole) { /* they stay queued: unsent, not saved */
		struct push_stats st;
		push_stats(c->push, &st);
		c->save_err = (int)-n;
		c->unsaved += st.queued;
	}
	for (long i = 0; i < n; i++) {
		if (!c->pattern && !c->whole)
			save_one(c, &items[i]);
		free(items[i].buf);
	}
	free(items);
}

/* prof's samples become the whole recording's (the accumulated ones), its time the whole's. */
static int make_whole(struct continuous *c, struct profile *prof)
{
	int err = 0;

	profile_clear_samples(prof);
	for (uint64_t i = 0; i < c->acc.nsamples && !err; i++) {
		const struct profile_sample *s = &c->acc.samples[i];
		err = profile_add_sample(prof, s->location_ids, s->nlocs, s->values, s->labels,
					 s->nlabels);
	}
	prof->time_nanos = c->start_ns;
	prof->duration_nanos = c->last_end_ns - c->start_ns;
	return err ? error("cannot build the whole profile: %s", strerror(-err)) : 0;
}

/* Whether a stop signal came after sampling ended: the push's drain ends at once. */
static bool drain_cancelled(void *arg)
{
	const struct continuous *c = arg;

	return c->stop_count && c->stop_count() > c->stops_at_end;
}

int continuous_finish(struct continuous *c, struct profile *prof)
{
	int rc = take_interval(c, prof, true);

	if (c->push) {
		push_drain(c->push, (long)(c->push_timeout * 1000) + DRAIN_EXTRA_MS, drain_cancelled, c);
		save_unsent(c);
	}
	if (!rc && c->have_acc)
		rc = make_whole(c, prof);
	return rc;
}

void continuous_pushed(const struct continuous *c, uint64_t *intervals, uint64_t *bytes)
{
	struct push_stats st = { 0 };

	if (c->push)
		push_stats(c->push, &st);
	*intervals = st.sent;
	*bytes = st.sent_bytes;
}

void continuous_summary(const struct continuous *c)
{
	if (!continuous_on(c))
		return;
	fprintf(stderr, "firn: intervals: %llu of %g s, %llu samples, %zu process%s",
		(unsigned long long)c->intervals, c->every, (unsigned long long)c->samples, c->npids,
		c->npids == 1 ? "" : "es");
	if (c->pattern)
		fprintf(stderr, "; %llu files written (%llu bytes), %llu removed, %llu not written",
			(unsigned long long)c->files.written, (unsigned long long)c->bytes,
			(unsigned long long)c->files.removed, (unsigned long long)c->write_failed);
	fputc('\n', stderr);
	if (!c->push)
		return;
	struct push_stats st;
	push_stats(c->push, &st);
	fprintf(stderr, "firn: push: %llu sent, %llu retried, %llu dropped, %zu unsent",
		(unsigned long long)st.sent, (unsigned long long)st.retried,
		(unsigned long long)st.dropped, (size_t)(st.submitted - st.sent - st.dropped));
	for (size_t i = 0; i < c->nsaved; i++)
		fprintf(stderr, "%s'%s'", i ? ", " : " (saved as ", c->saved[i]);
	fprintf(stderr, "%s%s%s\n", c->nsaved ? ")" : "", *st.last_error ? "; last error: " : "",
		st.last_error);
}

uint64_t continuous_lost(const struct continuous *c)
{
	struct push_stats st = { 0 };

	if (c->pattern)
		return c->write_failed; /* a file each: a missing one is lost, pushed or not */
	if (c->whole || !c->push)
		return 0;
	push_stats(c->push, &st);
	return st.dropped + c->unsaved;
}

int continuous_lost_error(const struct continuous *c)
{
	uint64_t lost = continuous_lost(c);
	struct push_stats st = { 0 };

	if (!lost)
		return 0;
	if (c->pattern)
		return error("%llu of %llu intervals not written to '%s': %s", (unsigned long long)lost,
			     (unsigned long long)c->intervals, c->pattern, strerror(c->write_err));
	push_stats(c->push, &st);
	fprintf(stderr, "firn: %llu of %llu intervals neither sent nor saved: ",
		(unsigned long long)lost, (unsigned long long)c->intervals);
	if (st.dropped)
		fprintf(stderr, "%llu dropped from the push queue%s", (unsigned long long)st.dropped,
			c->unsaved ? ", " : "");
	if (c->unsaved)
		fprintf(stderr, "%llu not saved in '%s': %s", (unsigned long long)c->unsaved,
			unsent_dir(), strerror(c->save_err));
	fputc('\n', stderr);
	return 1;
}

void continuous_release(struct continuous *c)
{
	push_free(c->push);
	free(c->push_shown);
	free(c->token);
	interval_files_release(&c->files);
	if (c->have_acc)
		profile_release(&c->acc);
	for (size_t i = 0; i < c->nlabels; i++)
		free((char *)c->labels[i].key);
	free(c->service);
	free(c->labels);
	for (size_t i = 0; i < c->nsaved; i++)
		free(c->saved[i]);
	free(c->saved);
	free(c->pid_seen);
}
