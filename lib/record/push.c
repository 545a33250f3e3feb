/* Pushing profiles to Pyroscope, Parca or an OTLP store on a thread of its own, with a bounded
 * queue and back-off (push.h). The stores are rows of backends[]; the requests are libcurl's;
 * only the gRPC frame and WriteRawRequest's few protobuf fields are written here. */
#include "record/push.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/diag.h"
#include "format/input.h"
#include "format/otlp.h"
#include "base/pbenc.h"
#include "format/pprof.h"
#define CURLLOAD_CALLS /* libcurl's names through the table */
#include "record/curlload.h"

struct push {
	struct push_opts o;            /* strings below owned */
	char *service, *tenant, *token, *cacert, *host;
	char *shown;                   /* the URL as messages show it (push_url_shown) */
	CURLU *base;                   /* the URL, parsed: each request's is made from it */
	bool https;
	struct push_label *labels;
	CURL *curl;
	CURLM *multi;                  /* runs each request: curl_multi_wakeup cuts its wait short */
	pthread_t thread;
	bool started, ended;           /* ended: the thread is past its loop */
	pthread_mutex_t lock;
	pthread_cond_t wake;           /* the queue changed, or stop/drain */
	pthread_cond_t done;           /* the thread ended (push_drain waits on it) */
	struct push_item *q;           /* ring: oldest at head */
	size_t head, n, cap, bytes;
	bool in_flight, stop, draining, failing;
	uint64_t deadline_ns;          /* draining: when to give up */
	uint64_t next_try_ns;          /* back-off: no attempt before */
	long backoff_ms;
	struct push_stats st;
	int grpc_status;               /* from the response's headers or trailers; -1 none */
	char errbuf[CURL_ERROR_SIZE];  /* libcurl's detail of the last failure */
};

/* url parsed by libcurl into *u (made here), as push_check_url takes it; the scheme's
 * https-ness in *https. 0, -EINVAL, -ENOMEM or -ELIBACC (*u NULL on failure). */
static int parse_url(const char *url, CURLU **u, bool *https)
{
	char *scheme = NULL, *host = NULL;
	int err = curlload_open();

	*u = NULL;
	if (err)
		return err;
	err = (*u = curl_url()) ? 0 : -ENOMEM;

	/* no flags: no guessed scheme, no space, no control character (libcurl refuses them) */
	if (!err && (curl_url_set(*u, CURLUPART_URL, url, 0) ||
		     curl_url_get(*u, CURLUPART_SCHEME, &scheme, 0) ||
		     curl_url_get(*u, CURLUPART_HOST, &host, 0) || !*host))
		err = -EINVAL;
	if (!err && strcmp(scheme, "http") && strcmp(scheme, "https"))
		err = -EINVAL;
	if (!err)
		*https = !strcmp(scheme, "https");
	curl_free(scheme);
	curl_free(host);
	if (err) {
		curl_url_cleanup(*u);
		*u = NULL;
	}
	return err;
}

int push_check_url(const char *url)
{
	CURLU *u = NULL;
	bool https;
	int err = parse_url(url, &u, &https);

	if (u)
		curl_url_cleanup(u);
	return err;
}

char *push_url_shown(const char *url)
{
	const char *auth = strstr(url, "://"), *at;
	char *s = NULL;

	auth = auth ? auth + 3 : url;
	/* the last '@' before the query: a password holding an unencoded '/' is hidden too */
	if (!(at = memrchr(auth, '@', strcspn(auth, "?#"))))
		return strdup(url);
	if (asprintf(&s, "%.*s***%s", (int)(auth - url), url, at) < 0) {
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

bool push_value_ok(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

/* A label name as Prometheus and Pyroscope take it: [A-Za-z_][A-Za-z0-9_.]*. */
static bool label_name_ok(const char *s, size_t len)
{
	if (!len || !(s[0] == '_' || ((s[0] | 32) >= 'a' && (s[0] | 32) <= 'z')))
		return false;
	for (size_t i = 1; i < len; i++)
		if (!(s[i] == '_' || s[i] == '.' || (s[i] >= '0' && s[i] <= '9') ||
		      ((s[i] | 32) >= 'a' && (s[i] | 32) <= 'z')))
			return false;
	return true;
}

int push_labels_add(struct push_label **labels, size_t *n, const char *arg)
{
	const char *eq = strchr(arg, '=');

	if (!eq || !label_name_ok(arg, (size_t)(eq - arg)) || strpbrk(eq + 1, "{},") ||
	    !push_value_ok(eq + 1))
		return -EINVAL;
	for (size_t i = 0; i < *n; i++)
		if (!strncmp((*labels)[i].key, arg, (size_t)(eq - arg)) &&
		    !(*labels)[i].key[eq - arg]) {
			(*labels)[i].value = eq + 1;
			return 0;
		}
	char *key = strndup(arg, (size_t)(eq - arg));
	struct push_label *l = key ? realloc(*labels, (*n + 1) * sizeof(*l)) : NULL;
	if (!l) {
		free(key);
		return -ENOMEM;
	}
	*labels = l;
	l[(*n)++] = (struct push_label){ key, eq + 1 };
	return 0;
}

int push_read_token(const char *path, char **token)
{
	int fd = file_open_read(path);
	char buf[4096];
	ssize_t n = fd < 0 ? fd : read(fd, buf, sizeof(buf) - 1);
	int err = n < 0 ? (fd < 0 ? fd : -errno) : 0;

	if (fd >= 0)
		close(fd);
	if (err)
		return err;
	size_t len = 0;
	while (len < (size_t)n && buf[len] != '\r' && buf[len] != '\n')
		len++;
	buf[len] = 0;
	if (!len)
		return -ENODATA;
	if (strlen(buf) != len || !push_value_ok(buf)) /* a NUL or a control character */
		return -EILSEQ;
	return (*token = strdup(buf)) ? 0 : -ENOMEM;
}

int push_check_cacert(const char *path)
{
	static const char mark[] = "-----BEGIN CERTIFICATE-----";
	enum { KEEP = sizeof(mark) - 2, CHUNK = 65536, MAX = 1024 }; /* MAX chunks: 64 MiB */
	char buf[KEEP + CHUNK + 1];
	size_t have = 0;
	int fd = file_open_read(path), err = fd < 0 ? fd : -ENODATA;

	/* a marker may straddle two reads: the last KEEP bytes stay at the front */
	for (int i = 0; fd >= 0 && i < MAX; i++) {
		ssize_t n = read(fd, buf + have, CHUNK);
		if (n <= 0) {
			err = n < 0 ? -errno : -ENODATA;
			break;
		}
		have += (size_t)n;
		if (memmem(buf, have, mark, sizeof(mark) - 1)) {
			err = 0;
			break;
		}
		size_t keep = have < KEEP ? have : KEEP;
		memmove(buf, buf + have - keep, keep);
		have = keep;
	}
	if (fd >= 0)
		close(fd);
	return err;
}

/* ---- the queue (under lock) ---- */

/* The queued item i (0: oldest). */
static struct push_item *item_at(struct push *p, size_t i)
{
	return &p->q[(p->head + i) % p->cap];
}

/* Drops the oldest queued item, counted. */
static void drop_oldest(struct push *p)
{
	struct push_item *it = item_at(p, 0);

	p->bytes -= it->len;
	free(it->buf);
	p->head = (p->head + 1) % p->cap;
	p->n--;
	p->st.dropped++;
}

/* Drops the oldest items until the bounds hold. */
static void enforce_bounds(struct push *p)
{
	while (p->n && (p->n > p->o.max_items || p->bytes > p->o.max_bytes))
		drop_oldest(p);
}

/* Room for one more item in the ring (the ring is unrolled into a bigger array). */
static int ring_reserve(struct push *p)
{
	if (p->n < p->cap)
		return 0;
	size_t ncap = p->cap ? p->cap * 2 : 8;
	struct push_item *nq = malloc(ncap * sizeof(*nq));
	if (!nq)
		return -ENOMEM;
	for (size_t i = 0; i < p->n; i++)
		nq[i] = *item_at(p, i);
	free(p->q);
	p->q = nq;
	p->cap = ncap;
	p->head = 0;
	return 0;
}

/* Puts it at the head (front: an item whose send failed stays the oldest) or the tail. */
static int enqueue(struct push *p, const struct push_item *it, bool front)
{
	if (ring_reserve(p))
		return -ENOMEM;
	if (front) {
		p->head = (p->head + p->cap - 1) % p->cap;
		p->q[p->head] = *it;
	} else {
		*item_at(p, p->n) = *it;
	}
	p->n++;
	p->bytes += it->len;
	enforce_bounds(p);
	return 0;
}

/* ---- requests ---- */

/* Collects the gRPC status from response headers and trailers ("grpc-status: 0"). */
static size_t on_header(char *buf, size_t size, size_t n, void *arg)
{
	struct push *p = arg;
	size_t len = size * n;

	if (len > 12 && !strncasecmp(buf, "grpc-status:", 12))
		p->grpc_status = atoi(buf + 12);
	return len;
}

/* Throws the response body away. */
static size_t on_body(char *buf, size_t size, size_t n, void *arg)
{
	(void)buf;
	(void)arg;
	return size * n;
}

/* The URL of a request: the store's path, its trailing '/' dropped, then tail (unless the
 * path ends so already: OTLP's full endpoint), then the store's query with query appended
 * (NULL: none). libcurl's URL API places the path, so "http://h/p?x=1" gets "/p/ingest?x=1&..."
 * rather than "/p?x=1/ingest?..."; the query is appended as text, since libcurl 7.88 rewrites
 * a query it is given (%7B as %7b). malloc'd; NULL: out of memory. */
static char *request_url(const struct push *p, const char *tail, bool unless_ends,
			 const char *query)
{
	CURLU *u = curl_url_dup(p->base);
	char *path = NULL, *joined = NULL, *base = NULL, *own = NULL, *url = NULL;

	if (!u || curl_url_get(u, CURLUPART_PATH, &path, 0))
		goto out;
	size_t len = strlen(path), tlen = strlen(tail);
	while (len && path[len - 1] == '/')
		len--;
	if (unless_ends && len >= tlen && !memcmp(path + len - tlen, tail, tlen))
		tail = "";
	if (asprintf(&joined, "%.*s%s", (int)len, path, tail) < 0)
		joined = NULL;
	if (!joined || curl_url_set(u, CURLUPART_PATH, joined, 0) ||
	    curl_url_set(u, CURLUPART_FRAGMENT, NULL, 0) || curl_url_get(u, CURLUPART_URL, &base, 0))
		goto out;
	bool has_query = !curl_url_get(u, CURLUPART_QUERY, &own, 0) && *own;
	if (asprintf(&url, "%s%s%s", base, !query ? "" : has_query ? "&" : "?", query ? query : "") < 0)
		url = NULL;
out:
	curl_free(own);
	curl_free(base);
	free(joined);
	curl_free(path);
	curl_url_cleanup(u);
	return url;
}

/* Pyroscope's application name with labels: "service{k=v,k2=v2}". */
static char *pyroscope_name(const struct push *p)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);

	if (!f)
		return NULL;
	fprintf(f, "%s{", p->service);
	for (size_t i = 0; i < p->o.nlabels; i++)
		fprintf(f, "%s%s=%s", i ? "," : "", p->labels[i].key, p->labels[i].value);
	fputc('}', f);
	return fclose(f) ? (free(s), NULL) : s;
}

/* What a backend's encoder makes of a profile: a body (malloc'd) or a multipart form. */
struct request {
	char *body;
	size_t len;
	curl_mime *mime;
};

/* Pyroscope's /ingest query of an interval: name, from/until (seconds), format, sampleRate,
 * spyName, after the store's own query (malloc'd; NULL: out of memory). */
static char *pyroscope_query(struct push *p, const struct push_item *it)
{
	char *name = pyroscope_name(p), *esc = name ? curl_easy_escape(p->curl, name, 0) : NULL;
	char *query = NULL;
	long long from = it->from_ns / 1000000000, until = (it->until_ns + 999999999) / 1000000000;

	if (!esc || asprintf(&query, "name=%s&from=%lld&until=%lld&format=pprof&sampleRate=%ld"
			     "&spyName=firn", esc, from, until > from ? until : from + 1,
			     p->o.sample_rate) < 0)
		query = NULL;
	curl_free(esc);
	free(name);
	return query;
}

/* Pyroscope's request: the profile as the form's "profile" part. 0 or -ENOMEM. */
static int pyroscope_form(struct push *p, const struct push_item *it, struct request *r)
{
	if (!(r->mime = curl_mime_init(p->curl)))
		return -ENOMEM;
	curl_mimepart *part = curl_mime_addpart(r->mime);
	curl_mime_name(part, "profile");
	curl_mime_filename(part, "profile.pprof");
	curl_mime_type(part, "application/octet-stream");
	curl_mime_data(part, it->buf, it->len);
	return 0;
}

/* Orders labels by key (a Prometheus label set is sorted). */
static int label_cmp(const void *a, const void *b)
{
	return strcmp(((const struct push_label *)a)->key, ((const struct push_label *)b)->key);
}

/* A LabelSet (field of e): __name__, service_name, then the labels, by name; each a
 * Label { name = 1; value = 2 } in LabelSet.labels (1). */
static int parca_labels(const struct push *p, struct pbenc *e, uint32_t field)
{
	size_t n = p->o.nlabels + 2;
	struct push_label *l = malloc(n * sizeof(*l));

	if (!l)
		return -ENOMEM;
	l[0] = (struct push_label){ "__name__", "process_cpu" };
	l[1] = (struct push_label){ "service_name", p->service };
	memcpy(l + 2, p->labels, p->o.nlabels * sizeof(*l));
	qsort(l, n, sizeof(*l), label_cmp);
	size_t set = pbenc_begin(e, field);
	for (size_t i = 0; i < n; i++) {
		size_t m = pbenc_begin(e, 1);
		pbenc_string(e, 1, l[i].key);
		pbenc_string(e, 2, l[i].value);
		pbenc_end(e, m);
	}
	pbenc_end(e, set);
	free(l);
	return 0;
}

/* WriteRawRequest { tenant = 1; series = 2 { labels = 1; samples = 2 { raw_profile = 1 } } }
 * (parca's proto/parca/profilestore/v1alpha1/profilestore.proto) in a gRPC frame: an
 * uncompressed flag and a 4-byte big-endian length. */
static int parca_body(struct push *p, const struct push_item *it, struct request *r)
{
	static const uint8_t prefix[5];
	struct pbenc e;
	size_t len = 0;
	void *buf = NULL;

	pbenc_init(&e);
	pbenc_raw(&e, prefix, sizeof(prefix)); /* filled in below */
	if (p->tenant)
		pbenc_string(&e, 1, p->tenant);
	size_t series = pbenc_begin(&e, 2);
	if (parca_labels(p, &e, 1))
		e.err = -ENOMEM;
	size_t sample = pbenc_begin(&e, 2);
	pbenc_bytes(&e, 1, it->buf, it->len);
	pbenc_end(&e, sample);
	pbenc_end(&e, series);
	int err = pbenc_finish(&e, &buf, &len);
	if (err)
		return err;
	uint8_t *b = buf;
	uint32_t n = (uint32_t)(len - 5);
	b[1] = (uint8_t)(n >> 24), b[2] = (uint8_t)(n >> 16), b[3] = (uint8_t)(n >> 8), b[4] = (uint8_t)n;
	r->body = buf, r->len = len;
	return 0;
}

/* The OTLP resource's attributes: the labels, container_id (or container.id) as container.id. */
static struct otlp_attr *otlp_attrs(const struct push *p, size_t *n, const char **container)
{
	struct otlp_attr *a = calloc(p->o.nlabels + 1, sizeof(*a));

	*n = 0;
	*container = NULL;
	for (size_t i = 0; a && i < p->o.nlabels; i++) {
		if (!strcmp(p->labels[i].key, "container_id") || !strcmp(p->labels[i].key, "container.id"))
			*container = p->labels[i].value;
		else
			a[(*n)++] = (struct otlp_attr){ p->labels[i].key, p->labels[i].value };
	}
	return a;
}

/* The profile (pprof) as an ExportProfilesServiceRequest with the resource's attributes. */
static int otlp_body(struct push *p, const struct push_item *it, struct request *r)
{
	struct profile prof;
	uint8_t id[16];
	size_t nattrs;
	const char *container;
	struct otlp_attr *attrs = otlp_attrs(p, &nattrs, &container);
	int err = attrs ? profile_init(&prof) : -ENOMEM;

	if (err) {
		free(attrs);
		return err;
	}
	if ((err = pprof_decode(&prof, it->buf, it->len)) == 0) {
		if (getrandom(id, sizeof(id), 0) != sizeof(id))
			for (size_t i = 0; i < sizeof(id); i++) /* a unique enough id: time and item */
				id[i] = (uint8_t)((it->from_ns ^ (uintptr_t)it->buf) >> (8 * (i % 8))) ^ (uint8_t)i;
		struct otlp_opts oo = { .service = p->service, .host = p->host, .container = container,
					.attrs = attrs, .nattrs = nattrs, .profile_id = id };
		void *out = NULL;
		err = otlp_encode(&prof, &oo, &out, &r->len);
		r->body = out;
	}
	profile_release(&prof);
	free(attrs);
	return err;
}

/* A profile store's protocol: what its request is made of. One row each; --to and --push-to
 * take the names, the commands and completions list them (push_proto_name). */
struct push_backend {
	const char *name;
	const char *path;          /* appended to the URL's path (request_url) */
	bool unless_ends;          /* ... unless the URL's path ends so (OTLP's full endpoint) */
	const char *content_type;  /* the body's; NULL: the form's, which libcurl writes */
	bool grpc;                 /* HTTP/2 (h2c for http://), TE: trailers, grpc-status 0 */
	bool tenant_header;        /* the tenant in X-Scope-OrgID (else the encoder puts it) */
	/* the profile as the request's body or form: 0, -ENOMEM, or a pprof or encoding error */
	int (*encode)(struct push *p, const struct push_item *it, struct request *r);
	char *(*query)(struct push *p, const struct push_item *it); /* NULL: none */
};

static const struct push_backend backends[] = {
	/* the first is the default: Pyroscope's HTTP /ingest, pprof in a multipart form */
	{ "pyroscope", "/ingest", false, NULL, false, true, pyroscope_form, pyroscope_query },
	/* Parca's gRPC ProfileStoreService/WriteRaw */
	{ "parca", "/parca.profilestore.v1alpha1.ProfileStoreService/WriteRaw", false,
	  "application/grpc", true, false, parca_body, NULL },
	/* OTLP's POST /v1development/profiles, protobuf (X-Scope-OrgID: Pyroscope's OTLP) */
	{ "otlp", "/v1development/profiles", true, "application/x-protobuf", false, true,
	  otlp_body, NULL },
};
#define NBACKENDS (int)(sizeof(backends) / sizeof(backends[0]))

int push_proto_of(const char *name)
{
	for (int i = 0; i < NBACKENDS; i++)
		if (!strcmp(name, backends[i].name))
			return i;
	return -EINVAL;
}

const char *push_proto_name(int proto)
{
	return proto >= 0 && proto < NBACKENDS ? backends[proto].name : NULL;
}

/* gRPC over HTTP/2: with TLS for https://, h2c (prior knowledge) for http://. */
static void use_http2(struct push *p)
{
	bool h2c = !p->https;

	curl_easy_setopt(p->curl, CURLOPT_HTTP_VERSION, h2c ? CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE :
			 CURL_HTTP_VERSION_2TLS);
	/* libcurl before 8.0 fails every request on a reused prior-knowledge connection ("Error
	 * in the HTTP2 framing layer", curl issue 10634): a connection per request there */
	if (h2c && curl_version_info(CURLVERSION_NOW)->version_num < 0x080000)
		curl_easy_setopt(p->curl, CURLOPT_FORBID_REUSE, 1L);
}

/* Appends "NAME: value" to *hdr (value NULL: nothing). */
static void add_header(struct curl_slist **hdr, const char *name, const char *value)
{
	char *h = NULL;

	if (value && asprintf(&h, "%s: %s", name, value) >= 0) {
		*hdr = curl_slist_append(*hdr, h);
		free(h);
	}
}

/* Sets up be's request of it: its URL, body or form, HTTP version and headers (r's buffers
 * freed by the caller). 0, -ENOMEM or the encoder's error. */
static int request_setup(struct push *p, const struct push_backend *be,
			 const struct push_item *it, struct request *r, struct curl_slist **hdr)
{
	char *query = NULL, *url = NULL;
	int err = be->encode(p, it, r);

	if (!err && be->query && !(query = be->query(p, it)))
		err = -ENOMEM;
	if (!err && !(url = request_url(p, be->path, be->unless_ends, query)))
		err = -ENOMEM;
	free(query);
	if (err)
		return err;
	curl_easy_setopt(p->curl, CURLOPT_URL, url);
	free(url);
	if (r->mime)
		curl_easy_setopt(p->curl, CURLOPT_MIMEPOST, r->mime);
	else {
		curl_easy_setopt(p->curl, CURLOPT_POSTFIELDS, r->body);
		curl_easy_setopt(p->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->len);
	}
	if (be->grpc)
		use_http2(p);
	add_header(hdr, "Content-Type", be->content_type);
	if (be->grpc)
		*hdr = curl_slist_append(*hdr, "TE: trailers");
	add_header(hdr, "X-Scope-OrgID", be->tenant_header ? p->tenant : NULL);
	return 0;
}

/* Whether the finished request succeeded; else why, in p->st.last_error (under lock later). */
static bool request_ok(struct push *p, CURLcode rc, char *why, size_t len)
{
	long code = 0;

	if (rc != CURLE_OK) { /* libcurl's detail names the cause, as curl(1) prints it ("SSL
			       * certificate problem: unable to get local issuer certificate") */
		p->errbuf[strcspn(p->errbuf, "\r\n")] = 0;
		snprintf(why, len, "%s", *p->errbuf ? p->errbuf : curl_easy_strerror(rc));
		return false;
	}
	curl_easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, &code);
	if (code < 200 || code > 299) {
		snprintf(why, len, "HTTP status %ld", code);
		return false;
	}
	if (backends[p->o.proto].grpc && p->grpc_status != 0) {
		snprintf(why, len, p->grpc_status < 0 ? "no gRPC status" : "gRPC status %d",
			 p->grpc_status);
		return false;
	}
	return true;
}

/* Why the request under way must end now ("" when it need not): stopped, or draining past
 * the deadline. */
static const char *cut_reason(struct push *p)
{
	pthread_mutex_lock(&p->lock);
	const char *why = p->stop ? "cancelled at the end" :
		p->draining && mono_ns() >= p->deadline_ns ? "cut short at the end's time limit" : "";
	pthread_mutex_unlock(&p->lock);
	return why;
}

/* How long a request may wait for its sockets before cut_reason is asked again: a second (the
 * end's drain and push_free wake it at once), less when the drain's deadline comes sooner. */
static int poll_ms(struct push *p)
{
	long ms = 1000;

	pthread_mutex_lock(&p->lock);
	uint64_t now = mono_ns();
	if (p->draining)
		ms = p->deadline_ns <= now ? 0 : (long)((p->deadline_ns - now + 999999) / 1000000);
	pthread_mutex_unlock(&p->lock);
	return ms < 1000 ? (int)ms : 1000;
}

/* Runs the request on the multi handle rather than curl_easy_perform, so that neither its
 * time-out nor a server that never answers holds the end past its deadline: CURLE_OK or the
 * request's error; *cut (a cut_reason) when it was cut short. */
static CURLcode perform(struct push *p, const char **cut)
{
	int running = 1, left;
	CURLcode rc = CURLE_OK;
	CURLMcode mc = curl_multi_add_handle(p->multi, p->curl);
	CURLMsg *m;

	while (!mc && running && !*(*cut = cut_reason(p))) {
		mc = curl_multi_perform(p->multi, &running);
		if (!mc && running)
			mc = curl_multi_poll(p->multi, NULL, 0, poll_ms(p), NULL);
	}
	while ((m = curl_multi_info_read(p->multi, &left)))
		if (m->msg == CURLMSG_DONE && m->easy_handle == p->curl)
			rc = m->data.result;
	if (mc) {
		snprintf(p->errbuf, sizeof(p->errbuf), "%s", curl_multi_strerror(mc));
		rc = CURLE_FAILED_INIT;
	}
	curl_multi_remove_handle(p->multi, p->curl);
	return rc;
}

/* One attempt at sending it; 0, -ECANCELED (cut short at the end) or -EIO, with why filled. */
static int send_item(struct push *p, const struct push_item *it, char *why, size_t len)
{
	struct curl_slist *hdr = NULL;
	struct request r = { 0 };
	char *auth = NULL;
	int err;

	curl_easy_reset(p->curl);
	curl_easy_setopt(p->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(p->curl, CURLOPT_TIMEOUT_MS, p->o.timeout_ms);
	curl_easy_setopt(p->curl, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(p->curl, CURLOPT_HEADERDATA, p);
	curl_easy_setopt(p->curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(p->curl, CURLOPT_USERAGENT, "firn");
	curl_easy_setopt(p->curl, CURLOPT_ERRORBUFFER, p->errbuf);
	p->errbuf[0] = 0;
	if (p->cacert) { /* a private CA: only it, not the system's directory beside it */
		curl_easy_setopt(p->curl, CURLOPT_CAINFO, p->cacert);
		curl_easy_setopt(p->curl, CURLOPT_CAPATH, NULL);
	}
	p->grpc_status = -1;
	err = request_setup(p, &backends[p->o.proto], it, &r, &hdr);
	if (!err && p->token && asprintf(&auth, "Authorization: Bearer %s", p->token) >= 0)
		hdr = curl_slist_append(hdr, auth);
	hdr = curl_slist_append(hdr, "Expect:"); /* no 100-continue round trip */
	curl_easy_setopt(p->curl, CURLOPT_HTTPHEADER, hdr);
	const char *cut = "";
	CURLcode rc = err ? CURLE_OK : perform(p, &cut);
	if (err)
		snprintf(why, len, "cannot build the request: %s", strerror(-err));
	else if (*cut) {
		snprintf(why, len, "%s", cut);
		err = -ECANCELED;
	} else if (!request_ok(p, rc, why, len))
		err = -EIO;
	curl_slist_free_all(hdr);
	curl_mime_free(r.mime);
	free(r.body);
	free(auth);
	return err;
}

/* ---- the thread ---- */

/* Waits on the condition until ns (monotonic), or for a signal when ns is 0. */
static void wait_on(struct push *p, pthread_cond_t *c, uint64_t ns)
{
	if (!ns) {
		pthread_cond_wait(c, &p->lock);
		return;
	}
	struct timespec ts = { (time_t)(ns / 1000000000), (long)(ns % 1000000000) };
	pthread_cond_timedwait(c, &p->lock, &ts);
}

/* Waits on the queue's condition until ns (monotonic), or for a signal when ns is 0. */
static void wait_until(struct push *p, uint64_t ns)
{
	wait_on(p, &p->wake, ns);
}

/* After an attempt (under lock): counts it, requeues a failed item at the head, backs off. */
static void after_send(struct push *p, struct push_item *it, int err, const char *why)
{
	p->in_flight = false;
	if (!err) {
		p->st.sent++;
		p->st.sent_bytes += it->len;
		free(it->buf);
		if (p->failing)
			diag(DIAG_WARN, "pushing to '%s' works again", p->shown);
		p->failing = false;
		p->backoff_ms = 0;
		return;
	}
	if (err == -ECANCELED) { /* the end: kept for the caller to save, no retry to announce */
		p->st.retried++;
		if (!*p->st.last_error) /* an earlier failure says more of the store */
			snprintf(p->st.last_error, sizeof(p->st.last_error), "%s", why);
		if (enqueue(p, it, true)) {
			free(it->buf);
			p->st.dropped++;
		}
		return;
	}
	if (err != -EIO && err != -ENOMEM) { /* the profile itself: no retry makes it go */
		diag(DIAG_WARN, "cannot push to '%s': %s (dropped)", p->shown, why);
		snprintf(p->st.last_error, sizeof(p->st.last_error), "%s", why);
		free(it->buf);
		p->st.dropped++;
		return;
	}
	p->st.retried++;
	snprintf(p->st.last_error, sizeof(p->st.last_error), "%s", why);
	if (!p->failing)
		diag(DIAG_WARN, "cannot push to '%s': %s (queued, retrying)", p->shown, why);
	else
		diag(DIAG_INFO, "cannot push to '%s': %s", p->shown, why);
	p->failing = true;
	p->backoff_ms = p->backoff_ms ? p->backoff_ms * 2 : p->o.backoff_min_ms;
	if (p->backoff_ms > p->o.backoff_max_ms)
		p->backoff_ms = p->o.backoff_max_ms;
	p->next_try_ns = mono_ns() + (uint64_t)p->backoff_ms * 1000000;
	if (enqueue(p, it, true)) {
		free(it->buf);
		p->st.dropped++;
	}
}

/* Whether the thread is done: stopped, or draining past the deadline or with nothing left. */
static bool thread_done(struct push *p)
{
	if (p->stop)
		return true;
	return p->draining && (!p->n || mono_ns() >= p->deadline_ns);
}

/* Takes the oldest item and sends it, unlocked; then accounts for it. */
static void send_oldest(struct push *p)
{
	struct push_item it = *item_at(p, 0);
	char why[160] = "";

	p->head = (p->head + 1) % p->cap;
	p->n--;
	p->bytes -= it.len;
	p->in_flight = true;
	pthread_mutex_unlock(&p->lock);
	int err = send_item(p, &it, why, sizeof(why));
	pthread_mutex_lock(&p->lock);
	after_send(p, &it, err, why);
}

/* The sending thread: the oldest queued profile whenever the back-off allows. */
static void *push_thread(void *arg)
{
	struct push *p = arg;

	pthread_mutex_lock(&p->lock);
	while (!thread_done(p)) {
		uint64_t now = mono_ns(), until = p->draining ? p->deadline_ns : 0;
		if (!p->n) {
			wait_until(p, until);
		} else if (now < p->next_try_ns) {
			wait_until(p, until && until < p->next_try_ns ? until : p->next_try_ns);
		} else {
			send_oldest(p);
		}
	}
	p->ended = true;
	pthread_cond_broadcast(&p->done);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* ---- the API ---- */

/* host.name: the caller's, else this host's name ("" when it has none). */
static char *host_name(const char *given)
{
	char buf[256] = "";

	if (!given && gethostname(buf, sizeof(buf) - 1))
		buf[0] = 0;
	return strdup(given ? given : buf);
}

/* Copies the options' strings and fills in the defaults. */
static int copy_opts(struct push *p, const struct push_opts *o)
{
	p->o = *o;
	p->shown = push_url_shown(o->url);
	p->service = strdup(o->service ? o->service : "firn");
	p->tenant = o->tenant ? strdup(o->tenant) : NULL;
	p->token = o->token ? strdup(o->token) : NULL;
	p->cacert = o->cacert ? strdup(o->cacert) : NULL;
	p->host = host_name(o->host);
	p->labels = calloc(o->nlabels + 1, sizeof(*p->labels));
	if (!p->shown || !p->service || (o->tenant && !p->tenant) || (o->token && !p->token) ||
	    (o->cacert && !p->cacert) || !p->host ||
	    !p->labels)
		return -ENOMEM;
	for (size_t i = 0; i < o->nlabels; i++) { /* keys and values are owned in pairs */
		p->labels[i].key = strdup(o->labels[i].key);
		p->labels[i].value = strdup(o->labels[i].value);
		if (!p->labels[i].key || !p->labels[i].value)
			return -ENOMEM;
	}
	p->o.timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 10000;
	p->o.max_items = o->max_items ? o->max_items : 64;
	p->o.max_bytes = o->max_bytes ? o->max_bytes : 64u << 20;
	p->o.backoff_min_ms = o->backoff_min_ms > 0 ? o->backoff_min_ms : 500;
	p->o.backoff_max_ms = o->backoff_max_ms > 0 ? o->backoff_max_ms : 30000;
	p->o.sample_rate = o->sample_rate > 0 ? o->sample_rate : 100;
	return 0;
}

/* Whether every value of o that reaches a header or a URL is push_value_ok's: a CR/LF in the
 * tenant would start a header of its own (X-Scope-OrgID: t, then X-Injected: yes). */
static bool values_ok(const struct push_opts *o)
{
	const char *const v[] = { o->tenant, o->token, o->service, o->host };

	for (size_t i = 0; i < sizeof(v) / sizeof(*v); i++)
		if (v[i] && !push_value_ok(v[i]))
			return false;
	for (size_t i = 0; i < o->nlabels; i++)
		if (!push_value_ok(o->labels[i].key) || !push_value_ok(o->labels[i].value))
			return false;
	return true;
}

/* The condition variable on the monotonic clock (back-off deadlines are monotonic). */
static int init_sync(struct push *p)
{
	pthread_condattr_t a;

	if (pthread_mutex_init(&p->lock, NULL) || pthread_condattr_init(&a))
		return -ENOMEM;
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	int err = pthread_cond_init(&p->wake, &a) || pthread_cond_init(&p->done, &a) ? -ENOMEM : 0;
	pthread_condattr_destroy(&a);
	return err;
}

/* Starts the sending thread with the asynchronous signals blocked: a Ctrl-C must reach the
 * caller, whose waits it ends (EINTR), not this thread; a fault's signal stays deliverable. */
static int start_thread(struct push *p)
{
	static const int faults[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS };
	sigset_t all, old;

	sigfillset(&all);
	for (size_t i = 0; i < sizeof(faults) / sizeof(*faults); i++)
		sigdelset(&all, faults[i]);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int err = -pthread_create(&p->thread, NULL, push_thread, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	p->started = !err;
	return err;
}

struct push *push_new(const struct push_opts *o)
{
	struct push *p;
	int err;

	if (o->proto < 0 || o->proto >= NBACKENDS || !values_ok(o) ||
	    o->timeout_ms > PUSH_TIMEOUT_MAX_MS) {
		errno = EINVAL;
		return NULL;
	}
	if ((err = curlload_open())) {
		errno = -err;
		return NULL;
	}
	if (!(p = calloc(1, sizeof(*p))) || curl_global_init(CURL_GLOBAL_DEFAULT)) {
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	err = parse_url(o->url, &p->base, &p->https);
	if (!err)
		err = copy_opts(p, o);
	if (!err)
		err = init_sync(p);
	if (!err && (!(p->curl = curl_easy_init()) || !(p->multi = curl_multi_init())))
		err = -ENOMEM;
	if (!err && !o->no_thread)
		err = start_thread(p);
	if (err) {
		push_free(p);
		errno = -err;
		return NULL;
	}
	return p;
}

int push_submit(struct push *p, const void *buf, size_t len, int64_t from_ns, int64_t until_ns)
{
	struct push_item it = { malloc(len ? len : 1), len, from_ns, until_ns };

	if (!it.buf)
		return -ENOMEM;
	memcpy(it.buf, buf, len);
	pthread_mutex_lock(&p->lock);
	p->st.submitted++;
	int err = enqueue(p, &it, false);
	if (err)
		free(it.buf);
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	return err;
}

/* Waits for the thread to end (under lock), asking cancel every 50 ms: when it says so, the
 * thread is stopped and the request under way woken to be cut short. */
static void wait_ended(struct push *p, bool (*cancel)(void *arg), void *arg)
{
	while (!p->ended) {
		wait_on(p, &p->done, mono_ns() + 50000000);
		if (!p->ended && !p->stop && cancel && cancel(arg)) {
			p->stop = true;
			pthread_cond_signal(&p->wake);
			curl_multi_wakeup(p->multi);
		}
	}
}

size_t push_drain(struct push *p, long timeout_ms, bool (*cancel)(void *arg), void *arg)
{
	pthread_mutex_lock(&p->lock);
	p->draining = true;
	p->deadline_ns = mono_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000;
	if (p->next_try_ns > mono_ns()) /* at the end: one more try now, not after the back-off */
		p->next_try_ns = 0;
	pthread_cond_signal(&p->wake);
	curl_multi_wakeup(p->multi); /* a request's wait is measured against the deadline now */
	if (p->started)
		wait_ended(p, cancel, arg);
	pthread_mutex_unlock(&p->lock);
	if (p->started)
		pthread_join(p->thread, NULL);
	p->started = false;
	return p->n;
}

int push_send(struct push *p, const void *buf, size_t len, int64_t from_ns, int64_t until_ns,
	      char *why, size_t whylen)
{
	struct push_item it = { (void *)buf, len, from_ns, until_ns };

	if (p->started)
		return -EBUSY; /* the thread owns the handle */
	p->st.submitted++;
	int err = send_item(p, &it, why, whylen);
	if (!err) {
		p->st.sent++;
		p->st.sent_bytes += len;
	} else
		snprintf(p->st.last_error, sizeof(p->st.last_error), "%s", why);
	return err == -ENOMEM ? err : err ? -EIO : 0;
}

long push_take_queued(struct push *p, struct push_item **items)
{
	*items = NULL;
	if (!p->n)
		return 0;
	if (!(*items = malloc(p->n * sizeof(**items))))
		return -ENOMEM;
	long n = (long)p->n;
	for (long i = 0; i < n; i++)
		(*items)[i] = *item_at(p, (size_t)i);
	p->n = p->bytes = 0;
	return n;
}

void push_stats(struct push *p, struct push_stats *st)
{
	pthread_mutex_lock(&p->lock);
	*st = p->st;
	st->queued = p->n + p->in_flight;
	st->queued_bytes = p->bytes;
	pthread_mutex_unlock(&p->lock);
}

void push_free(struct push *p)
{
	if (!p)
		return;
	if (p->started) {
		pthread_mutex_lock(&p->lock);
		p->stop = true;
		pthread_cond_signal(&p->wake);
		curl_multi_wakeup(p->multi);
		pthread_mutex_unlock(&p->lock);
		pthread_join(p->thread, NULL);
	}
	while (p->n)
		drop_oldest(p);
	if (p->multi)
		curl_multi_cleanup(p->multi);
	if (p->curl)
		curl_easy_cleanup(p->curl);
	for (size_t i = 0; p->labels && i < p->o.nlabels; i++) {
		free((char *)p->labels[i].key);
		free((char *)p->labels[i].value);
	}
	free(p->labels);
	free(p->q);
	curl_url_cleanup(p->base);
	free(p->shown), free(p->service), free(p->tenant), free(p->token);
	free(p->cacert), free(p->host);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->wake);
	pthread_cond_destroy(&p->done);
	free(p);
	curl_global_cleanup();
}
