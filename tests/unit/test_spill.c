/* Unit tests for parked samples: what spill_load adds back is what spill_add took, merged as
 * profile_add_sample merges; the file lives in the folder asked for and leaves no name there;
 * records are written SPILL_FLUSH bytes at a time, and those a failed write left in memory
 * still load. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "model/profile.h"
#include "format/spill.h"

/* A profile with two sample types and two locations main→leaf. */
static void setup_profile(struct profile *p, uint64_t locs[2])
{
	assert_int_equal(profile_init(p), 0);
	assert_true(profile_add_sample_type(p, "samples", "count") >= 0);
	assert_true(profile_add_sample_type(p, "cpu", "nanoseconds") >= 0);
	locs[0] = profile_simple_location(p, 0, profile_function(p, "leaf", NULL, "", 0), FRAME_USER);
	locs[1] = profile_simple_location(p, 0, profile_function(p, "main", NULL, "", 0), FRAME_USER);
}

/* Entries in dir other than . and .. */
static int dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;

	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static void test_round_trip(void **state)
{
	char dir[] = "/tmp/firn-spill-test-XXXXXX";
	struct profile p;
	struct spill sp;
	uint64_t locs[2];

	assert_non_null(mkdtemp(dir));
	setup_profile(&p, locs);
	int64_t comm = profile_intern(&p, "comm"), name = profile_intern(&p, "worker");
	struct profile_label labels[2] = { { .key = profile_intern(&p, "pid"), .num = 42 },
					   { .key = (uint32_t)comm, .str = (uint32_t)name } };
	assert_int_equal(spill_init(&sp, dir), 0);
	int64_t v1[2] = { 3, 30 }, v2[2] = { 4, 40 }, v3[2] = { 1, 10 };
	assert_int_equal(spill_add(&sp, locs, 2, v1, 2, labels, 2), 0);
	assert_int_equal(spill_add(&sp, locs, 2, v2, 2, labels, 2), 0);  /* merges with the first */
	assert_int_equal(spill_add(&sp, locs, 1, v3, 2, labels, 1), 0);  /* its own sample */
	assert_int_equal(sp.n, 3);
	assert_int_equal(dir_entries(dir), 0); /* unlinked: nothing named in the folder */
	assert_int_equal(spill_load(&sp, &p), 0);
	assert_int_equal(p.nsamples, 2);
	assert_int_equal(p.samples[0].nlocs, 2);
	assert_int_equal(p.samples[0].location_ids[1], locs[1]);
	assert_int_equal(p.samples[0].values[0], 7);
	assert_int_equal(p.samples[0].values[1], 70);
	assert_int_equal(profile_label_num(&p, &p.samples[0], "pid", -1), 42);
	assert_string_equal(profile_label_str(&p, &p.samples[0], "comm"), "worker");
	assert_int_equal(p.samples[1].nlocs, 1);
	assert_int_equal(p.samples[1].values[1], 10);
	/* loaded samples are gone from the spill; a second load adds nothing */
	assert_int_equal(sp.n, 0);
	assert_int_equal(spill_load(&sp, &p), 0);
	assert_int_equal(p.nsamples, 2);
	assert_int_equal(p.samples[0].values[0], 7);
	spill_release(&sp);
	profile_release(&p);
	rmdir(dir);
}

static void test_empty_and_mismatch(void **state)
{
	struct profile p, one;
	struct spill sp;
	uint64_t locs[2];
	int64_t v[2] = { 1, 2 };

	setup_profile(&p, locs);
	assert_int_equal(spill_init(&sp, NULL), 0);
	assert_int_equal(spill_load(&sp, &p), 0); /* never used: no file, nothing added */
	assert_int_equal(sp.fd, -1);
	assert_int_equal(p.nsamples, 0);
	assert_int_equal(spill_add(&sp, locs, 2, v, 2, NULL, 0), 0);
	assert_int_equal(profile_init(&one), 0);
	assert_true(profile_add_sample_type(&one, "samples", "count") >= 0);
	assert_int_equal(spill_load(&sp, &one), -EINVAL); /* two values for one sample type */
	spill_release(&sp);
	assert_int_equal(spill_init(&sp, "/nonexistent-firn-dir"), 0);
	assert_true(spill_add(&sp, locs, 2, v, 2, NULL, 0) < 0);
	spill_release(&sp);
	profile_release(&one);
	profile_release(&p);
}

/* Parks n one-frame samples, each its own (pid label i); returns how many spill_add took and
 * stops at the first it refused (*err). */
static int park_many(struct spill *sp, struct profile *p, uint64_t loc, int n, int *err)
{
	struct profile_label l = { .key = profile_intern(p, "pid") };
	int64_t v[2] = { 1, 10 };

	*err = 0;
	for (int i = 0; i < n; i++) {
		l.num = i;
		if ((*err = spill_add(sp, &loc, 1, v, 2, &l, 1)))
			return i;
	}
	return n;
}

/* ~140 samples a second are parked on a churning host: one write each was most of the
 * parking's system calls. Records wait in memory until SPILL_FLUSH bytes are there. */
static void test_batched_writes(void **state)
{
	struct profile p;
	struct spill sp;
	uint64_t locs[2];
	int err;

	setup_profile(&p, locs);
	assert_int_equal(spill_init(&sp, NULL), 0);
	assert_int_equal(park_many(&sp, &p, locs[0], 100, &err), 100);
	assert_int_equal(sp.size, 0); /* 100 records of ~56 bytes: nothing written yet */
	assert_int_equal(park_many(&sp, &p, locs[1], 2000, &err), 2000);
	assert_true(sp.size >= SPILL_FLUSH); /* written in batches... */
	assert_true(sp.pend > 0 && sp.pend < SPILL_FLUSH); /* ...the rest still in memory */
	assert_int_equal(sp.n, 2100);
	assert_int_equal(spill_load(&sp, &p), 0); /* from the file and from memory */
	assert_int_equal(p.nsamples, 2100);
	assert_int_equal(sp.n, 0);
	assert_int_equal(sp.pend, 0);
	assert_int_equal(spill_load(&sp, &p), 0);
	assert_int_equal(p.nsamples, 2100);
	spill_release(&sp);
	profile_release(&p);
}

/* A write that fails (here past RLIMIT_FSIZE, as on a full disk) refuses the sample being
 * added and loses none that were taken before it: they stay in memory and load. */
static void test_failed_write(void **state)
{
	struct rlimit old, small = { .rlim_cur = SPILL_FLUSH / 2 };
	struct profile p;
	struct spill sp;
	uint64_t locs[2];
	int err;

	setup_profile(&p, locs);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	small.rlim_max = old.rlim_max;
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(spill_init(&sp, NULL), 0);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	int took = park_many(&sp, &p, locs[0], 5000, &err);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	assert_true(err == -EFBIG || err == -ENOSPC); /* (a short write: -ENOSPC) */
	assert_true(took > 100 && took < 5000);
	assert_int_equal(sp.size, 0); /* the failed write undone */
	assert_int_equal(sp.n, took);
	assert_int_equal(spill_load(&sp, &p), 0);
	assert_int_equal(p.nsamples, took); /* every sample taken is there */
	spill_release(&sp);
	profile_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_empty_and_mismatch),
		cmocka_unit_test(test_batched_writes),
		cmocka_unit_test(test_failed_write),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
