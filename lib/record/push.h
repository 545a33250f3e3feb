/* Sending profiles to a profile store as they are cut: Pyroscope's HTTP /ingest (pprof in a
 * multipart form), Parca's gRPC ProfileStoreService/WriteRaw (HTTP/2, h2c for http://), OTLP's
 * POST /v1development/profiles (the pprof converted by lib/format/otlp.h, protobuf), through
 * libcurl. A thread of its own sends, so the caller (a recording) never waits on the network:
 * push_submit copies the profile into a bounded queue (intervals and bytes) and returns; a
 * failed send (no connection, a time-out, any status but 2xx, a gRPC status but 0, TLS) is
 * retried with exponential back-off, the queue's oldest profile dropped first (and counted)
 * when the bound is reached. push_drain sends what is queued until a deadline; push_take_queued
 * hands out what is left, for the caller to save. Never prints: the first failure of an outage
 * and the recovery are DIAG_WARN (lib/base/diag.h), every failure DIAG_INFO. */
#ifndef FIRN_PUSH_H
#define FIRN_PUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest time-out of one request push_new takes: the end of a recording waits up to it
 * (plus 2 s), so an hour would hold a stopping service for an hour. */
#define PUSH_TIMEOUT_MAX_MS 300000L

struct push_label {
	const char *key, *value;
};

struct push_opts {
	int proto;            /* the store's protocol: a row of push.c's backends (push_proto_of;
			       * 0, the first: Pyroscope) */
	const char *url;      /* the server: "http://host:4040" (push_check_url's); the request's
			       * path is appended to the URL's path, before its query (Pyroscope:
			       * /ingest; Parca: the gRPC method's path; OTLP: /v1development/profiles
			       * unless the path ends so); the store's query is kept */
	const char *service;  /* service_name: Pyroscope's application name, Parca's __name__
			       * is "process_cpu" with service_name a label */
	const struct push_label *labels; /* more labels, copied (OTLP: resource attributes;
					  * container_id or container.id: container.id) */
	size_t nlabels;
	const char *tenant;   /* X-Scope-OrgID (Pyroscope, OTLP), tenant (Parca); NULL: none */
	const char *token;    /* "Authorization: Bearer TOKEN"; NULL: none; copied */
	const char *cacert;   /* https: a PEM file of the CAs that verify the server (libcurl's
			       * CAINFO), instead of the system's store (no CAPATH either);
			       * NULL: the system's; the path is copied, the file read at each
			       * request */
	long timeout_ms;      /* per request (0: 10 s; at most PUSH_TIMEOUT_MAX_MS) */
	size_t max_items;     /* queued profiles at most (0: 64) */
	size_t max_bytes;     /* queued bytes at most (0: 64 MiB) */
	long backoff_min_ms;  /* first retry after this (0: 500); doubles up to backoff_max_ms */
	long backoff_max_ms;  /* (0: 30 s) */
	long sample_rate;     /* samples per second (Pyroscope's sampleRate; 0: 100) */
	const char *host;     /* OTLP's host.name; NULL: gethostname's */
	bool no_thread;       /* no sending thread, no queue: push_send only */
};

/* What was sent: profiles submitted, delivered, attempts that failed (each retried later or
 * dropped), profiles dropped from the queue (oldest first), still queued (with bytes). */
struct push_stats {
	uint64_t submitted, sent, retried, dropped, queued, queued_bytes;
	uint64_t sent_bytes; /* the pprof bytes of the profiles sent */
	char last_error[160]; /* the last failure ("" none) */
};

/* A profile handed back by push_take_queued: buf (pprof, as submitted) is owned by the caller. */
struct push_item {
	void *buf;
	size_t len;
	int64_t from_ns, until_ns;
};

/* Validates the options, starts libcurl and the sending thread. NULL + errno (EINVAL: a URL
 * push_check_url refuses, no such protocol, a time-out past PUSH_TIMEOUT_MAX_MS, or a tenant,
 * service, label, token or host that push_value_ok refuses; ENOMEM; ELIBACC: libcurl could not
 * be opened, curlload_why says why). Call before other threads
 * use libcurl. The sending thread blocks the asynchronous signals: they reach the caller's. */
struct push *push_new(const struct push_opts *o);
/* Queues a copy of the profile (pprof, gzip or not) of [from_ns, until_ns) (wall clock, ns).
 * Never waits for the network. 0 or -ENOMEM. (OTLP: a profile that does not decode is
 * dropped, counted, at its first attempt: submit what pprof_encode wrote.) */
int push_submit(struct push *p, const void *buf, size_t len, int64_t from_ns, int64_t until_ns);
/* Sends what is queued, retrying, until the queue is empty or timeout_ms pass, whatever a
 * request is doing then (a request under way is cut short at the deadline, its profile kept
 * queued); then the thread ends (later submits stay queued). cancel (NULL: none), asked every
 * 50 ms, ends it at once when it returns true (a second Ctrl-C), the same way. Returns the
 * number of profiles left queued. */
size_t push_drain(struct push *p, long timeout_ms, bool (*cancel)(void *arg), void *arg);
/* After push_drain: moves what is still queued (oldest first) into *items (malloc'd; the caller
 * frees each buf and the array). Returns the count (0: *items NULL) or -ENOMEM. */
long push_take_queued(struct push *p, struct push_item **items);
void push_stats(struct push *p, struct push_stats *st);
/* Sends one profile now, on the caller's thread, once (no queue, no retry): for a push made
 * with no_thread. 0, or -EIO (the request failed: why says how, in one line) or -ENOMEM. */
int push_send(struct push *p, const void *buf, size_t len, int64_t from_ns, int64_t until_ns,
	      char *why, size_t whylen);
/* Stops the thread (a request under way is cut short at once) and frees everything. */
void push_free(struct push *p);

/* Whether url can be push_opts.url: an http:// or https:// URL with a host that libcurl's URL
 * parser takes as it is (no space, no control character). 0, -EINVAL, -ENOMEM, or -ELIBACC
 * (libcurl, opened on first use, could not be: record/curlload.h). For a check
 * before anything is recorded: a malformed URL would otherwise fail every send all run. */
int push_check_url(const char *url);

/* url as a message may show it: the userinfo of its authority (user, password: everything
 * before the last '@' ahead of the query) replaced by "***", so that a password never reaches a
 * terminal or a journal; a URL without one is copied as it is. malloc'd; NULL + ENOMEM. Every
 * message naming a push URL, lib's and the commands', shows this. */
char *push_url_shown(const char *url);

/* Whether s may be sent in a header or a URL (a tenant, a service or label, a token): it holds
 * no control character (0x00-0x1f, 0x7f), so no CR/LF can end a header and start another. */
bool push_value_ok(const char *s);

/* The protocol of a name ("pyroscope", "parca", "otlp": a row of push.c's backends), or
 * -EINVAL. */
int push_proto_of(const char *name);
/* The name of protocol proto (0: the default, "pyroscope"), or NULL past the last: what the
 * commands list in their help, usage errors and completions. A static string. */
const char *push_proto_name(int proto);

/* Adds the label "KEY=VALUE" of arg to *labels (*n of them, realloc'd): a key of letters,
 * digits, '_' and '.' not starting with a digit or '.', as Prometheus and Pyroscope take it,
 * a value without braces, commas or control characters (push_value_ok); a later label of the
 * same key replaces the earlier one's value. The key is strndup'd (the caller frees each key
 * and the array), the value points into arg. 0, -EINVAL (arg is no such label) or -ENOMEM. */
int push_labels_add(struct push_label **labels, size_t *n, const char *arg);

/* Whether path can be push_opts.cacert: a file that opens and holds a PEM certificate
 * ("-----BEGIN CERTIFICATE-----") in its first 64 MiB. For a check before a recording starts:
 * libcurl would find a bad file only at the first request. 0, -ENODATA when it holds no
 * certificate, or -errno (open, read; EISDIR: a directory). */
int push_check_cacert(const char *path);

/* The bearer token a file holds: its first line (4 KiB at most), malloc'd into *token. 0,
 * -ENODATA when the line is empty, -EILSEQ when it holds a control character (push_value_ok:
 * it goes into a header), or -errno (open, read, ENOMEM). */
int push_read_token(const char *path, char **token);

#endif
