/* libFuzzer harness: the unwind table cache's file reader (unwind_cache_decode) on mutated cache
 * files, as given and with the checksum made right (so the mutations reach the header and row
 * checks): a table is accepted only for the source file it names (identity and owner), and must
 * have at most 4 segments, known row types counted, rows strictly sorted by pc and findable. */
#include <errno.h>
#include <string.h>
#include <zlib.h>

#include "fuzz.h"
#include "unwind/unwind_cache.h"

#define HDR 304      /* the header's size */
#define CRC_OFF 156  /* the crc field's offset in it */
#define ID_OFF 16    /* the build id's */
#define SRC_OFF 256  /* the source file's identity and owner (48 bytes) */

/* Decodes data as a file naming the build id and source it holds; checks what an accepted
 * table promises, and that another owner of the same file is refused. */
static void check(const uint8_t *data, size_t size)
{
	char id[129] = "0";
	struct unwind_cache_src src = { 0 };
	struct unwind_table t;

	if (size >= HDR) {
		memcpy(id, data + ID_OFF, 128);
		memcpy(&src.id, data + SRC_OFF, sizeof(src.id));
		memcpy(&src.uid, data + SRC_OFF + sizeof(src.id), sizeof(src.uid));
	}
	int err = unwind_cache_decode(data, size, id, &src, &t);
	FUZZ_ASSERT(err == 0 || err == -EBADMSG || err == -ENOMEM);
	if (err) {
		FUZZ_ASSERT(!t.rows && !t.n);
		return;
	}
	FUZZ_ASSERT(t.nsegs <= 4 && size == HDR + (size_t)t.n * sizeof(struct firn_row));
	uint64_t typed = 0;
	for (int i = 0; i < 8; i++)
		typed += t.by_type[i];
	FUZZ_ASSERT(typed == t.n);
	for (uint32_t i = 1; i < t.n; i++)
		FUZZ_ASSERT(t.rows[i - 1].pc < t.rows[i].pc);
	for (uint32_t i = 0; i < t.n && i < 64; i++)
		FUZZ_ASSERT(unwind_table_find(&t, t.rows[i].pc) == i);
	unwind_table_release(&t);
	src.uid++;
	FUZZ_ASSERT(unwind_cache_decode(data, size, id, &src, &t) == -ESTALE && !t.rows);
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
	memset(copy + CRC_OFF, 0, 4);
	uint32_t crc = (uint32_t)crc32(crc32(0, copy, HDR), copy + HDR, (uInt)(size - HDR));
	memcpy(copy + CRC_OFF, &crc, 4);
	check(copy, size);
	free(copy);
	return 0;
}
