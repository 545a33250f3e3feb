/* lib/record/push without a server: the label rules record --label and push --label share (a later key
 * replaces, bad names and values refused), no control character in any value of a header or URL, the token file's first line, the CA file check, the URLs and protocols
 * push_new takes, push_send's one attempt failing with a reason when nothing listens, and the
 * queue dropping a profile OTLP cannot convert instead of retrying it ahead of the others. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "record/push.h"

static void test_labels(void **state)
{
	struct push_label *l = NULL;
	size_t n = 0;
	char a[] = "env=prod", b[] = "region.x=eu", c[] = "env=test";

	(void)state;
	assert_int_equal(push_labels_add(&l, &n, a), 0);
	assert_int_equal(push_labels_add(&l, &n, b), 0);
	assert_int_equal(push_labels_add(&l, &n, c), 0); /* replaces env's value */
	assert_int_equal(n, 2);
	assert_string_equal(l[0].key, "env");
	assert_string_equal(l[0].value, "test");
	assert_string_equal(l[1].key, "region.x");
	assert_string_equal(l[1].value, "eu");
	const char *bad[] = { "noequals", "=v", "1x=v", ".x=v", "a-b=v", "k={v}", "k=a,b", "k=a\nb",
			      "k=a\rb", "k=a\r\nX-Injected: yes", "k=a\tb", "k=\x7f" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(push_labels_add(&l, &n, bad[i]), -EINVAL);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++)
		free((char *)l[i].key);
	free(l);
}

static void test_token(void **state)
{
	char path[] = "/tmp/firn-push-token-XXXXXX", *tok = NULL;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "abc123\r\nsecond\n", 15), 15);
	assert_int_equal(push_read_token(path, &tok), 0);
	assert_string_equal(tok, "abc123");
	free(tok);
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(pwrite(fd, "\nx\n", 3, 0), 3);
	assert_int_equal(push_read_token(path, &tok), -ENODATA);
	assert_int_equal(pwrite(fd, "ab\001cd\n", 6, 0), 6); /* a control character: no header */
	assert_int_equal(push_read_token(path, &tok), -EILSEQ);
	assert_int_equal(pwrite(fd, "ab\0cd\n", 6, 0), 6); /* a NUL would cut it short */
	assert_int_equal(push_read_token(path, &tok), -EILSEQ);
	close(fd);
	unlink(path);
	assert_int_equal(push_read_token(path, &tok), -ENOENT);
}

/* A CA file: a PEM certificate's marker anywhere, also across push_check_cacert's 64 KiB reads. */
static void test_cacert(void **state)
{
	static const char mark[] = "-----BEGIN CERTIFICATE-----\nMIIB\n";
	char path[] = "/tmp/firn-push-ca-XXXXXX";
	int fd = mkstemp(path);
	char *junk = malloc(65536);

	(void)state;
	assert_true(fd >= 0 && junk);
	memset(junk, 'x', 65536);
	assert_int_equal(push_check_cacert(path), -ENODATA); /* empty */
	assert_int_equal(write(fd, junk, 65536 - 10), 65536 - 10);
	assert_int_equal(push_check_cacert(path), -ENODATA);
	assert_int_equal(write(fd, junk, 65536), 65536); /* two reads of junk, no marker */
	assert_int_equal(push_check_cacert(path), -ENODATA);
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(pwrite(fd, junk, 65536 - 10, 0), 65536 - 10);
	assert_int_equal(pwrite(fd, mark, sizeof(mark) - 1, 65536 - 10), sizeof(mark) - 1);
	assert_int_equal(push_check_cacert(path), 0); /* the marker straddles the first read's end */
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(pwrite(fd, mark, sizeof(mark) - 1, 0), sizeof(mark) - 1);
	assert_int_equal(push_check_cacert(path), 0);
	close(fd);
	unlink(path);
	free(junk);
	assert_int_equal(push_check_cacert(path), -ENOENT);
	assert_int_equal(push_check_cacert("/tmp"), -EISDIR);
}

static void test_new(void **state)
{
	struct push_opts o = { .proto = 0, .url = "ftp://x", .no_thread = true };

	(void)state;
	assert_null(push_new(&o));
	assert_int_equal(errno, EINVAL);
	o.url = "http://127.0.0.1:1";
	o.proto = 7;
	assert_null(push_new(&o));
	assert_int_equal(errno, EINVAL);
	o.proto = -1;
	assert_null(push_new(&o));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(push_proto_of("Parca"), -EINVAL);
	/* what goes into a header or the URL: no control character, whichever option it is */
	struct push_label l = { "env", "a\rb" };
	struct push_opts bad[] = {
		{ .url = "http://h", .tenant = "t\r\nX-Injected: yes", .no_thread = true },
		{ .url = "http://h", .token = "tok\n", .no_thread = true },
		{ .url = "http://h", .service = "s\x1b]0;x\x07", .no_thread = true },
		{ .url = "http://h", .labels = &l, .nlabels = 1, .no_thread = true },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		errno = 0;
		assert_null(push_new(&bad[i]));
		assert_int_equal(errno, EINVAL);
	}
	assert_true(push_value_ok("tenant-1 é"));
	assert_false(push_value_ok("a\tb"));
	assert_false(push_value_ok("\x7f"));
}

/* The URLs push_new takes (push_check_url: libcurl's parser, http or https, a host) and how
 * messages show them (push_url_shown: no userinfo). */
static void test_urls(void **state)
{
	static const char *const good[] = { "http://h", "https://h:4040/", "http://h/p?x=1",
		"http://u:p@h/", "HTTP://h", "http://[::1]:4040/a/b" };
	static const char *const bad[] = { "ftp://h", "h:4040", "http://",
		"http://h/a b", "http://h/a\nb", "http://h\r\nX: y", "", "//h/p" };
	static const char *const shown[][2] = {
		{ "http://h:1/p?x=1", "http://h:1/p?x=1" },
		{ "http://user:s3cret@h:1/p", "http://***@h:1/p" },
		{ "https://tok@h", "https://***@h" },
		{ "http://u:pa/ss@h/", "http://***@h/" },        /* a '/' in the password */
		{ "http://u:p@w@h/x?e=a@b", "http://***@h/x?e=a@b" }, /* the last '@' before '?' */
		{ "u:s3cret@h", "***@h" },                       /* no scheme: still hidden */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++)
		assert_int_equal(push_check_url(good[i]), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		assert_int_equal(push_check_url(bad[i]), -EINVAL);
	for (size_t i = 0; i < sizeof(shown) / sizeof(*shown); i++) {
		char *s = push_url_shown(shown[i][0]);
		assert_non_null(s);
		assert_string_equal(s, shown[i][1]);
		free(s);
	}
	struct push_opts o = { .proto = push_proto_of("parca"), .url = "http://h/a b", .no_thread = true };
	assert_null(push_new(&o));
	assert_int_equal(errno, EINVAL);
}

/* A port nothing listens on (bound, never listened, then closed). */
static int dead_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(s >= 0);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&a, &len), 0);
	close(s);
	return ntohs(a.sin_port);
}

/* The backends' table: its names in order (the first the default, Pyroscope), each name's
 * protocol that row, nothing past the last: what --to, --push-to and the completions list. */
static void test_backends(void **state)
{
	static const char *const want[] = { "pyroscope", "parca", "otlp" };
	int n = 0;

	(void)state;
	while (push_proto_name(n))
		n++;
	assert_int_equal(n, 3);
	for (int i = 0; i < n; i++) {
		assert_string_equal(push_proto_name(i), want[i]);
		assert_int_equal(push_proto_of(want[i]), i);
	}
	assert_null(push_proto_name(-1));
	assert_int_equal(push_proto_of(""), -EINVAL);
}

/* push_send: one attempt, its reason, counted; every protocol. */
static void test_send_fails(void **state)
{
	char url[64], why[160];
	struct push_stats st;

	(void)state;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", dead_port());
	for (int proto = 0; push_proto_name(proto); proto++) {
		struct push_opts o = { .proto = proto, .url = url, .timeout_ms = 2000,
				       .no_thread = true };
		struct push *p = push_new(&o);
		assert_non_null(p);
		why[0] = 0;
		/* OTLP converts first: an empty profile does not decode, which fails it too */
		assert_int_equal(push_send(p, "", 0, 0, 1, why, sizeof(why)), -EIO);
		if (strcmp(push_proto_name(proto), "otlp"))
			assert_non_null(strstr(why, "onnect"));
		assert_true(strlen(why) > 0);
		push_stats(p, &st);
		assert_int_equal(st.submitted, 1);
		assert_int_equal(st.sent, 0);
		assert_int_equal(st.sent_bytes, 0); /* a failed attempt sent nothing */
		push_free(p);
	}
}

/* The queue: a profile OTLP cannot convert is dropped at once (counted), not retried ahead of
 * the intervals behind it; an unreachable store's failures are retried, then left queued. */
static void test_queue_drops_unconvertible(void **state)
{
	char url[64];
	struct push_stats st;
	struct push_item *items = NULL;

	(void)state;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", dead_port());
	struct push_opts o = { .proto = push_proto_of("otlp"), .url = url, .timeout_ms = 500,
			       .backoff_min_ms = 50, .backoff_max_ms = 100 };
	struct push *p = push_new(&o);
	assert_non_null(p);
	assert_int_equal(push_submit(p, "not a profile", 13, 0, 1), 0);
	assert_int_equal(push_drain(p, 2000, NULL, NULL), 0);
	push_stats(p, &st);
	assert_int_equal(st.dropped, 1);
	assert_int_equal(st.retried, 0);
	assert_non_null(strstr(st.last_error, "cannot build the request"));
	push_free(p);
	o.proto = push_proto_of("parca");
	assert_non_null(p = push_new(&o));
	assert_int_equal(push_submit(p, "x", 1, 0, 1), 0);
	assert_int_equal(push_drain(p, 300, NULL, NULL), 1);
	push_stats(p, &st);
	assert_int_equal(st.dropped, 0);
	assert_true(st.retried >= 1);
	assert_int_equal(push_take_queued(p, &items), 1);
	assert_int_equal(items[0].len, 1);
	free(items[0].buf);
	free(items);
	push_free(p);
}

/* A port that takes connections (the kernel's backlog) and never answers; *fd to close. */
static int silent_port(int *fd)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);

	*fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(*fd >= 0);
	assert_int_equal(bind(*fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(*fd, 16), 0);
	assert_int_equal(getsockname(*fd, (struct sockaddr *)&a, &len), 0);
	return ntohs(a.sin_port);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Cancels the drain once 0.3 s have passed since *arg (now_s). */
static bool cancel_later(void *arg)
{
	return now_s() - *(double *)arg >= 0.3;
}

/* The end's drain against a store that never answers: a request under way (its own time-out
 * 8 s) is cut short at the drain's deadline, or at once when cancel says so, and its profile
 * stays queued for the caller to save. */
static void test_drain_cut_short(void **state)
{
	char url[64];
	int fd;
	struct push_stats st;
	struct push_item *items = NULL;

	(void)state;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", silent_port(&fd));
	struct push_opts o = { .proto = push_proto_of("pyroscope"), .url = url, .timeout_ms = 8000 };
	for (int cancel = 0; cancel < 2; cancel++) {
		struct push *p = push_new(&o);
		assert_non_null(p);
		assert_int_equal(push_submit(p, "x", 1, 0, 1), 0);
		usleep(200000); /* the request is under way, waiting for an answer */
		double t0 = now_s();
		size_t left = cancel ? push_drain(p, 6000, cancel_later, &t0) : push_drain(p, 500, NULL, NULL);
		double took = now_s() - t0;
		assert_int_equal(left, 1);
		assert_true(took < (cancel ? 0.3 : 0.5) + 1.0); /* not the request's 8 s */
		assert_true(took >= (cancel ? 0.3 : 0.5) - 0.01);
		push_stats(p, &st);
		assert_int_equal(st.sent, 0);
		assert_non_null(strstr(st.last_error, cancel ? "cancelled" : "time limit"));
		assert_int_equal(push_take_queued(p, &items), 1);
		assert_int_equal(items[0].len, 1);
		free(items[0].buf);
		free(items);
		push_free(p);
	}
	close(fd);
	o.timeout_ms = PUSH_TIMEOUT_MAX_MS + 1; /* an end that would wait past five minutes */
	assert_null(push_new(&o));
	assert_int_equal(errno, EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_token),
		cmocka_unit_test(test_cacert),
		cmocka_unit_test(test_new),
		cmocka_unit_test(test_backends),
		cmocka_unit_test(test_urls),
		cmocka_unit_test(test_send_fails),
		cmocka_unit_test(test_queue_drops_unconvertible),
		cmocka_unit_test(test_drain_cut_short),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
