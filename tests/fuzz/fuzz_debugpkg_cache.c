/* libFuzzer harness: a debugpkg cache record (lib/elf/debugpkg_cache), the cache file's bytes
 * (a folder of the user's own, but parsed with bounds checks all the same). Decoded for the
 * path and key the input itself holds where it is long enough (so the checks past them are
 * reached) and for fixed ones; an answer decoded encodes back to a record that decodes the
 * same. */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "elf/debugpkg_cache.h"

#define KEY_AT 16
#define PATH_AT (KEY_AT + sizeof(struct debugpkg_key))

/* Decodes data for path and key, and checks what a decoded answer promises. */
static void check(const uint8_t *data, size_t size, const char *path,
		  const struct debugpkg_key *key)
{
	static char rec[DEBUGPKG_CACHE_RECORD];
	char hint[DEBUGPKG_CACHE_HINT_MAX], again[DEBUGPKG_CACHE_HINT_MAX];
	int err = debugpkg_cache_decode(data, size, path, key, hint, sizeof(hint));

	FUZZ_ASSERT(err == 0 || err == -ENOENT || err == -EBADMSG);
	if (err == -EBADMSG)
		return;
	FUZZ_ASSERT(size == DEBUGPKG_CACHE_RECORD);
	FUZZ_ASSERT(err || (hint[0] && strlen(hint) < sizeof(hint)));
	FUZZ_ASSERT(!debugpkg_cache_encode(path, key, err, hint, rec));
	FUZZ_ASSERT(debugpkg_cache_decode(rec, sizeof(rec), path, key, again, sizeof(again)) == err);
	FUZZ_ASSERT(err || !strcmp(hint, again));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[DEBUGPKG_CACHE_PATH_MAX];
	struct debugpkg_key key = { 0 };

	check(data, size, "/usr/bin/python3.11", &key);
	if (size < PATH_AT + DEBUGPKG_CACHE_PATH_MAX)
		return 0;
	memcpy(&key, data + KEY_AT, sizeof(key));
	memcpy(path, data + PATH_AT, sizeof(path));
	path[sizeof(path) - 1] = '\0';
	check(data, size, path, &key);
	return 0;
}
