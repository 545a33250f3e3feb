/* libFuzzer harness: the debug section cache's file reader (debug_cache_decode) on mutated cache
 * files, as given and with the sections' and the header's checksums made right (so the mutations
 * reach the entry checks): every section accepted must lie inside the file, after the entries,
 * aligned, with a NUL-terminated name, match its entry's checksum, and be found again by
 * debug_cache_find. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "elf/debug_cache.h"
#include "fuzz.h"

#define HDR 256     /* the header's size */
#define NSECT_OFF 12
#define ID_OFF 16   /* the build id's offset */
#define IDENT_OFF 144
#define CRC_OFF 184 /* the crc field's */
#define ENTRY 56
#define ECRC_OFF 48 /* a section checksum's offset in its entry */

/* Decodes data as a file naming the build id and identity it holds; checks what it promises. */
static void check(const uint8_t *data, size_t size)
{
	char id[129] = "0";
	struct file_id ident = { 0 };
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
		uint32_t crc;
		memcpy(&crc, data + HDR + (size_t)i * ENTRY + ECRC_OFF, 4);
		FUZZ_ASSERT(crc32(0, p, (uInt)s->size) == crc);
	}
}

/* Sets the checksum of each of the n entries whose section lies inside the file to its bytes'. */
static void fix_sections(uint8_t *copy, size_t size, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *e = copy + HDR + (size_t)i * ENTRY;
		uint64_t off, len;
		memcpy(&off, e + 32, 8);
		memcpy(&len, e + 40, 8);
		if (off > size || len > size - off)
			continue;
		uint32_t crc = (uint32_t)crc32(0, copy + off, (uInt)len);
		memcpy(e + ECRC_OFF, &crc, 4);
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
	fix_sections(copy, size, table / ENTRY);
	memset(copy + CRC_OFF, 0, 4);
	uint32_t crc = (uint32_t)crc32(crc32(0, copy, HDR), copy + HDR, (uInt)table);
	memcpy(copy + CRC_OFF, &crc, 4);
	check(copy, size);
	free(copy);
	return 0;
}
