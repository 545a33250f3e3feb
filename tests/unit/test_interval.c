/* lib/record/interval: pattern detection, names in UTC, taken names skipped, --keep removing only the
 * files it named. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/interval.h"

static void test_is_pattern(void **state)
{
	(void)state;
	assert_true(interval_is_pattern("p-%Y.pb.gz"));
	assert_false(interval_is_pattern("plain.pb.gz"));
	assert_false(interval_is_pattern("100%%.pb.gz"));
	assert_false(interval_is_pattern("trailing%"));
}

/* Names come from the pattern in UTC; a taken name (a user's file, an earlier interval) gets -N. */
static void test_names_and_keep(void **state)
{
	char dir[] = "/tmp/firn-interval-XXXXXX", pat[128], user[160];
	struct interval_files f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(pat, sizeof(pat), "%s/p-%%Y%%m%%dT%%H%%M%%S.pb.gz", dir);
	snprintf(user, sizeof(user), "%s/p-20261201T120000.pb.gz", dir);
	FILE *u = fopen(user, "w");
	assert_non_null(u);
	fclose(u);
	assert_int_equal(interval_files_init(&f, pat, 2), 0);
	int64_t t = 1796126400LL * 1000000000; /* 2026-12-01 12:00:00 UTC */
	char *names[4];
	for (int i = 0; i < 4; i++) {
		names[i] = interval_files_name(&f, t + (i < 2 ? 0 : (i - 1) * 1000000000LL));
		assert_non_null(names[i]);
		FILE *w = fopen(names[i], "w");
		assert_non_null(w);
		fclose(w);
		char *keep = strdup(names[i]);
		assert_int_equal(interval_files_add(&f, names[i]), 0);
		names[i] = keep;
	}
	assert_string_equal(strrchr(names[0], '/'), "/p-20261201T120000-2.pb.gz");
	assert_string_equal(strrchr(names[1], '/'), "/p-20261201T120000-3.pb.gz");
	assert_int_equal(access(names[0], F_OK), -1); /* removed: beyond keep 2 */
	assert_int_equal(access(names[1], F_OK), -1);
	assert_int_equal(access(names[2], F_OK), 0);
	assert_int_equal(access(names[3], F_OK), 0);
	assert_int_equal(access(user, F_OK), 0); /* the user's file stays */
	assert_int_equal(f.removed, 2);
	for (int i = 0; i < 4; i++) {
		unlink(names[i]);
		free(names[i]);
	}
	unlink(user);
	rmdir(dir);
	interval_files_release(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_is_pattern),
		cmocka_unit_test(test_names_and_keep),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
