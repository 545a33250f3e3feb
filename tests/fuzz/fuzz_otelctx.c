/* libFuzzer harness: OTEP 4947 thread context records (lib/elf/otelctx) decoded from the input, and
 * read through otelctx_read from a fake process whose memory is the input repeated from 0x1000
 * (the slot at 0x1000: the record pointer is the input's first 8 bytes). A decoded record must
 * hold what the header promises: its attributes tile attrs-data-size exactly, every value inside
 * the data. Seeds: the fixture's records (tests/fuzz/otelctx_seeds.py). */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "elf/otelctx.h"

struct image {
	const uint8_t *data;
	size_t size;
};

/* The fake process's memory: the input, repeated, from 0x1000. */
static int image_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct image *im = ctx;

	if (addr < 0x1000 || !im->size)
		return -EFAULT;
	for (size_t i = 0; i < len; i++)
		((uint8_t *)buf)[i] = im->data[(addr - 0x1000 + i) % im->size];
	return 0;
}

/* Checks what otelctx promises of a decoded record. */
static void check(const struct otelctx_record *r, int err)
{
	size_t at = 0;

	FUZZ_ASSERT(err == 0 || err == -ENODATA || err == -EPROTO || err == -ENOENT ||
		    err == -EAGAIN || err == -EFAULT);
	if (err) {
		FUZZ_ASSERT(r->nattrs == 0 && r->attrs_size == 0 && r->trace_id[0] == 0);
		return;
	}
	FUZZ_ASSERT(r->attrs_size <= OTELCTX_ATTRS_MAX);
	for (size_t i = 0; i < r->nattrs; i++) {
		FUZZ_ASSERT(r->attrs[i].off == at + 2);
		at += 2u + r->attrs[i].len;
		FUZZ_ASSERT(at <= r->attrs_size);
	}
	FUZZ_ASSERT(at == r->attrs_size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct otelctx_record r;
	struct image im = { data, size };
	struct tlsctx_mem mem = { image_read, &im };

	check(&r, otelctx_decode(&r, data, size));
	check(&r, otelctx_read(&r, 0x1000, &mem));
	return 0;
}
