/* libFuzzer harness: cgroup paths and /proc/PID/cgroup text (any process names its own cgroups,
 * and a container's runtime the rest: hostile). cgroup_container_id: an id found is 64 hex
 * digits that occur in the input, the same with or without room for it, none in a prefix cut
 * before its end; cgroup_parse_proc: the path it copies is a prefix of the input's, as long as
 * the room allows, NUL-terminated (a NUL in it is copied too). */
#include <string.h>

#include "proc/cgroup.h"
#include "fuzz.h"

/* cgroup_container_id's promises on data. */
static void check_id(const char *data, size_t size)
{
	char out[CGROUP_ID_LEN + 1], small[8];
	size_t n = cgroup_container_id(data, size, out, sizeof(out));

	FUZZ_ASSERT(n == 0 || n == CGROUP_ID_LEN);
	FUZZ_ASSERT(cgroup_container_id(data, size, small, sizeof(small)) == n);
	if (!n)
		return;
	FUZZ_ASSERT(strlen(out) == CGROUP_ID_LEN);
	for (size_t i = 0; i < CGROUP_ID_LEN; i++)
		FUZZ_ASSERT((out[i] >= '0' && out[i] <= '9') || (out[i] >= 'a' && out[i] <= 'f'));
	FUZZ_ASSERT(memmem(data, size, out, CGROUP_ID_LEN) != NULL);
	/* cut at the found id's last digit: that occurrence is gone */
	const char *last = NULL;
	for (const char *p = data; (p = memmem(p, size - (size_t)(p - data), out, CGROUP_ID_LEN)); p++)
		last = p;
	char again[CGROUP_ID_LEN + 1];
	size_t cut = (size_t)(last - data) + CGROUP_ID_LEN - 1;
	if (cgroup_container_id(data, cut, again, sizeof(again)))
		FUZZ_ASSERT(memmem(data, cut, again, CGROUP_ID_LEN) != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	char out[128];

	check_id(text, size);
	long n = cgroup_parse_proc(text, size, out, sizeof(out));
	FUZZ_ASSERT(n >= -2 && n <= (long)size);
	if (n >= 0) {
		size_t len = (size_t)n < sizeof(out) ? (size_t)n : sizeof(out) - 1;
		FUZZ_ASSERT(out[len] == 0); /* the path may hold NULs: its bytes are copied as they are */
		FUZZ_ASSERT(memmem(data, size, out, len) != NULL);
	}
	return 0;
}
