/* mapbatch: a BPF hash map drained in batches hands out every entry once, with its value, and is
 * empty after; fn's non-zero return stops the drain. Needs root (BPF maps); skipped without. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <bpf/bpf.h>

#include "base/mapbatch.h"

/* A key as wide as the sampler's (pid, tid, stacks, ...). */
struct key {
	uint32_t pid, tid;
	uint64_t a, b;
};

struct seen {
	unsigned n, stop_at;
	uint64_t sum;
	uint8_t hit[5000];
};

static int on_entry(void *ctx, const void *k, const void *v)
{
	struct seen *s = ctx;
	const struct key *key = k;
	uint64_t val;

	memcpy(&val, v, sizeof(val));
	assert_true(key->pid < 5000);
	assert_int_equal(val, (uint64_t)key->pid * 3);
	assert_int_equal(key->a, ~(uint64_t)key->pid);
	s->hit[key->pid]++;
	s->sum += val;
	return ++s->n == s->stop_at ? 7 : 0;
}

/* A hash map with n entries (key pid i, value 3i); -1 without BPF. */
static int filled(unsigned n)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "mapbatch_test", sizeof(struct key), 8, 8192, NULL);

	for (unsigned i = 0; fd >= 0 && i < n; i++) {
		struct key k = { i, i + 1, ~(uint64_t)i, 0 };
		uint64_t v = (uint64_t)i * 3;
		assert_int_equal(bpf_map_update_elem(fd, &k, &v, BPF_NOEXIST), 0);
	}
	return fd;
}

static void drain_n(unsigned n)
{
	static struct seen s;
	struct key k;
	int fd = filled(n);

	if (fd < 0) {
		print_message("skipped: cannot create a BPF map (%s)\n", strerror(errno));
		skip();
	}
	memset(&s, 0, sizeof(s));
	assert_int_equal(mapbatch_drain(fd, sizeof(struct key), 8, on_entry, &s), 0);
	assert_int_equal(s.n, n);
	assert_int_equal(s.sum, 3ULL * n * (n ? n - 1 : 0) / 2);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(s.hit[i], 1);
	assert_int_not_equal(bpf_map_get_next_key(fd, NULL, &k), 0); /* empty */
	close(fd);
}

/* Empty, one entry, less than a batch, many batches with a partial last one. */
static void test_drain(void **state)
{
	drain_n(0);
	drain_n(1);
	drain_n(MAPBATCH_N - 1);
	drain_n(4321);
}

/* fn's non-zero return stops the drain: what was handed out is gone, the rest stays. */
static void test_stop(void **state)
{
	static struct seen s;
	struct key k;
	unsigned left = 0;
	int fd = filled(1000);

	if (fd < 0)
		skip();
	memset(&s, 0, sizeof(s));
	s.stop_at = 300;
	assert_int_equal(mapbatch_drain(fd, sizeof(struct key), 8, on_entry, &s), 7);
	assert_int_equal(s.n, 300);
	for (int err = bpf_map_get_next_key(fd, NULL, &k); !err; err = bpf_map_get_next_key(fd, &k, &k))
		left++, assert_int_equal(s.hit[k.pid], 0);
	assert_in_range(left, 1000 - 300 - MAPBATCH_N, 1000 - 300);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drain),
		cmocka_unit_test(test_stop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
