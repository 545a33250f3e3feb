/* firn push: sends profiles recorded earlier (CI artifacts, intervals left unsent) to a
 * profile store, one request per file, as record --push would have sent them (lib/record/push.h). */
#include "opt.h"
#include "common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "format/input.h"
#include "format/pprof.h"
#include "record/push.h"

/* The usage line, its protocols from the backends' table (push_init). */
static char push_usage[256];

enum { OPT_TO = 256, OPT_LABEL, OPT_TENANT, OPT_TOKEN_FILE, OPT_CACERT, OPT_TIMEOUT };

struct push_cmd_opts {
	int proto;                 /* enum push_proto */
	struct push_label *labels; /* keys owned, values in argv */
	size_t nlabels;
	const char *tenant, *token_file, *cacert;
	double timeout;            /* seconds */
};

static const struct opt push_opts_table[] = {
	{ "to", 0, "PROTOCOL", "the store's protocol: ", OPT_TO },
	{ "label", 0, "KEY=VALUE", "a label of every profile sent (repeatable; service_name=NAME names the service, default firn)", OPT_LABEL },
	{ "tenant", 0, "ID", "the tenant sent to (X-Scope-OrgID for Pyroscope and OTLP)", OPT_TENANT },
	{ "token-file", 0, "FILE", "send the bearer token this file holds", OPT_TOKEN_FILE },
	{ "cacert", 0, "FILE", "verify an https:// store with the CA certificates of this PEM file, not the system's", OPT_CACERT },
	{ "timeout", 0, "SECONDS", "time-out of one request (default 10, at most 300)", OPT_TIMEOUT },
	OPT_END,
};

static int push_option(void *ctx, int id, const char *arg)
{
	struct push_cmd_opts *o = ctx;
	int err;

	switch (id) {
	case OPT_TO:
		return push_proto_option(&push_cmd, "to", arg, &o->proto);
	case OPT_LABEL:
		if ((err = push_labels_add(&o->labels, &o->nlabels, arg)) == -EINVAL)
			return push_label_error(&push_cmd, arg);
		return err ? error("out of memory") : 0;
	case OPT_TENANT:
		o->tenant = arg;
		return push_value_check(&push_cmd, "tenant", arg);
	case OPT_TOKEN_FILE:
		o->token_file = arg;
		return 0;
	case OPT_CACERT:
		o->cacert = arg;
		return 0;
	case OPT_TIMEOUT:
		return opt_double(&push_cmd, "timeout", arg, 0.01, PUSH_TIMEOUT_MAX_MS / 1000.0,
				  &o->timeout);
	}
	return 2;
}

/* Samples per second of a CPU profile (period in nanoseconds), else 100 (Pyroscope's rate). */
static long sample_rate(const struct profile *p)
{
	if (p->period > 0 && !strcmp(profile_str(p, p->period_type.unit), "nanoseconds"))
		return (long)((1000000000 + p->period / 2) / p->period);
	return 100;
}

/* Starts the push (no thread: one request per file, on this one); shown: the URL as messages
 * show it. */
static struct push *start(const struct push_cmd_opts *o, const char *url, const char *shown,
			  const char *token, long rate, const char *service)
{
	struct push_label *rest = calloc(o->nlabels + 1, sizeof(*rest));
	size_t nrest = 0;

	for (size_t i = 0; rest && i < o->nlabels; i++) {
		if (!strcmp(o->labels[i].key, "service_name"))
			service = o->labels[i].value;
		else
			rest[nrest++] = o->labels[i];
	}
	struct push_opts po = {
		.proto = o->proto, .url = url, .service = service, .labels = rest, .nlabels = nrest,
		.tenant = o->tenant, .token = token, .cacert = o->cacert,
		.timeout_ms = (long)(o->timeout * 1000), .sample_rate = rate, .no_thread = true,
	};
	struct push *p = rest ? push_new(&po) : NULL;
	int err = rest ? errno : ENOMEM;
	free(rest);
	if (!p)
		error("cannot push to '%s': %s", shown, strerror(err));
	return p;
}

/* Reads one file as pprof (a folded file or a pprof, gzipped or not), its time range from the
 * profile (else the file's mtime as its end), its service (profile_service, else "firn": svc
 * holds svclen bytes). 0, or prints the error and returns 1. */
static int read_one(const char *path, void **buf, size_t *len, int64_t *from, int64_t *until,
		    long *rate, char *svc, size_t svclen)
{
	struct profile p;
	struct stat st;

	if (profile_init(&p))
		return error("out of memory");
	int rc = load_profile_regular(&p, path);
	if (!rc && !p.time_nanos) {
		int64_t end = stat(path, &st) ? (int64_t)time(NULL) * 1000000000 :
			(int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		p.time_nanos = end - (p.duration_nanos > 0 ? p.duration_nanos : 0);
	}
	int err = rc ? 0 : pprof_encode(&p, true, buf, len);
	if (err)
		rc = error("cannot encode '%s': %s", path, strerror(-err));
	*from = p.time_nanos;
	*until = p.time_nanos + (p.duration_nanos > 0 ? p.duration_nanos : 0);
	*rate = sample_rate(&p);
	const char *name = rc ? NULL : profile_service(&p);
	snprintf(svc, svclen, "%s", name && strlen(name) < svclen ? name : "firn");
	profile_release(&p);
	return rc;
}

/* Sends each file; a failure is reported and the next file still goes. Returns how many
 * failed. */
static int send_files(const struct push_cmd_opts *o, const char *url, const char *token,
		      char **files, int nfiles)
{
	int failed = 0;
	char *shown = push_url_shown(url); /* no password in a message */

	if (!shown) {
		error("out of memory");
		return nfiles;
	}

	for (int i = 0; i < nfiles; i++) {
		void *buf = NULL;
		size_t len = 0;
		int64_t from = 0, until = 0;
		long rate = 0;
		char why[160] = "", svc[256];
		if (read_one(files[i], &buf, &len, &from, &until, &rate, svc, sizeof(svc))) {
			failed++;
			continue;
		}
		struct push *p = start(o, url, shown, token, rate, svc);
		int err = p ? push_send(p, buf, len, from, until, why, sizeof(why)) : -ENOMEM;
		if (p && err)
			error("cannot push '%s' to '%s': %s", files[i], shown, why);
		failed += err != 0;
		push_free(p);
		free(buf);
	}
	free(shown);
	return failed;
}

static int cmd_push(int argc, char **argv)
{
	struct push_cmd_opts o = { .timeout = 10 };
	char *token = NULL;
	int argi, rc = opt_parse(&push_cmd, argc, argv, false, push_option, &o, &argi);

	if (rc) {
		rc = rc < 0 ? 0 : rc;
		goto out;
	}
	if (argc - argi < 2) {
		rc = usage_error(&push_cmd, argc - argi ? "no FILE to send" : "no URL and no FILE");
		goto out;
	}
	const char *url = argv[argi];
	if ((rc = push_url_check(&push_cmd, url, NULL)))
		goto out;
	if (o.token_file && (rc = push_read_token(o.token_file, &token))) {
		rc = error("cannot read '%s': %s", o.token_file, rc == -ENODATA ? "no token in it" :
			   rc == -EILSEQ ? "a control character in the token" : strerror(-rc));
		goto out;
	}
	if (o.cacert && (rc = cacert_check(o.cacert, "cacert")))
		goto out;
	int n = argc - argi - 1, failed = send_files(&o, url, token, argv + argi + 1, n);
	fprintf(stderr, "firn: push: %d sent, %d failed\n", n - failed, failed);
	rc = failed ? 1 : 0;
out:
	for (size_t i = 0; i < o.nlabels; i++)
		free((char *)o.labels[i].key);
	free(o.labels);
	free(token);
	return rc;
}

/* Writes the usage line with the backends' names (struct cmd's init). */
static void push_init(void)
{
	char names[128];

	snprintf(push_usage, sizeof(push_usage), "[--to %s] [--label KEY=VALUE]... [OPTIONS] URL FILE...",
		 push_protocols(names, sizeof(names), "|", "|", ""));
}

const struct cmd push_cmd = {
	.name = "push",
	.fn = cmd_push,
	.summary = "send recorded profiles to Pyroscope, Parca or an OTLP endpoint",
	.usage = push_usage,
	.opts = { push_opts_table },
	.init = push_init,
};
