/* libFuzzer harness: the debug section cache's file reader (debug_cache_decode) on mutated cache
 * files, as given and with the header checksum made right (so the mutations reach the entry
 * checks): every section accepted must lie inside the file, after the entries, aligned, with a
 * NUL-terminated name, and be found again by debug_cache_find. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "debug_cache.h"
#include "fuzz.h"

#define HDR 256     /* the header's size */
#define NSECT_OFF 12
#define ID_OFF 16   /* the build id's offset */
#define IDENT_OFF 144
#define CRC_OFF 184 /* the crc field's */
#define ENTRY 48

/* Decodes data as a file naming the build id and identity it holds; checks what it promises. */
static void check(const uint8_t *data, size_t size)
{
	char id[129] = "0";
	struct debug_cache_ident ident = { 0 };
	struct debug_cache_file f;

	if (size >= HDR) {
		memcpy(id, data + ID_OFF, 128);
		memcpy(&ident, data + IDENT_OFF, sizeof(ident));
	}
	int err = debug_cache_decode(data, size, id, &ident, &f);
	FUZZ_ASSERT(err == 0 || err == -EBADMSG);
	if (err) {
		FUZZ_ASSERT(!f.nsects && !f.map);
		return;
	}
	FUZZ_ASSERT(f.nsects <= DEBUG_CACHE_MAX_SECTS && !f.map);
	for (uint32_t i = 0; i < f.nsects; i++) {
		const struct debug_cache_sect *s = &f.sects[i];
		const uint8_t *p = s->data;
		uint64_t size_found;
		FUZZ_ASSERT(memchr(s->name, 0, sizeof(s->name)));
		FUZZ_ASSERT(p >= data + HDR + (size_t)f.nsects * ENTRY && p <= data + size);
		FUZZ_ASSERT(s->size <= (uint64_t)(data + size - p) && (p - data) % 16 == 0);
		FUZZ_ASSERT(debug_cache_find(&f, s->name, s->zsize, &size_found));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check(data, size);
	if (size < HDR)
		return 0;
	uint8_t *copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	uint32_t n;
	memcpy(&n, copy + NSECT_OFF, 4);
	size_t table = n <= DEBUG_CACHE_MAX_SECTS && (size - HDR) / ENTRY >= n ? n * ENTRY : 0;
	memset(copy + CRC_OFF, 0, 4);
	uint32_t crc = (uint32_t)crc32(crc32(0, copy, HDR), copy + HDR, (uInt)table);
	memcpy(copy + CRC_OFF, &crc, 4);
	check(copy, size);
	free(copy);
	return 0;
}
