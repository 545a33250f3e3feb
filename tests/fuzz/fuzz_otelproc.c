/* libFuzzer harness: OTEP 4719 process contexts (lib/elf/otelproc): the input decoded as a
 * payload, and read through otelproc_read from a fake process whose memory is the input at 0x1000
 * (the header at 0x1000; its payload pointer anywhere, 0x1020 right behind it). A decoded context
 * must keep what the header promises: every string NUL-terminated inside its own buffer, the key
 * map and attributes within their bounds. Seeds: the fixture's payload, a bare Resource, one being
 * updated, another version (tests/fuzz/otelproc_seeds.py). */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "elf/otelproc.h"

struct image {
	const uint8_t *data;
	size_t size;
};

/* The fake process's memory: the input at 0x1000, nothing around it. */
static int image_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct image *im = ctx;

	if (addr < 0x1000 || addr - 0x1000 > im->size || len > im->size - (addr - 0x1000))
		return -EFAULT;
	memcpy(buf, im->data + (addr - 0x1000), len);
	return 0;
}

/* Whether s is NULL or a NUL-terminated string inside c's buffer. */
static int inside(const struct otelproc *c, const char *s)
{
	return !s || (s >= c->strs && s < c->strs + c->nstrs && memchr(s, 0, c->strs + c->nstrs - s));
}

/* Checks what otelproc promises of a decoded context. */
static void check(const struct otelproc *c, int err)
{
	FUZZ_ASSERT(err == 0 || err == -EPROTO || err == -ENOENT || err == -EPROTONOSUPPORT ||
		    err == -EAGAIN || err == -E2BIG || err == -EFAULT || err == -ENOMEM);
	FUZZ_ASSERT(c->nstrs <= c->cap_strs);
	FUZZ_ASSERT(c->nkeys <= OTELPROC_KEYS_MAX && c->nattrs <= OTELPROC_ATTRS_MAX);
	if (err) {
		FUZZ_ASSERT(!c->service_name && !c->nkeys && !c->nattrs);
		return;
	}
	FUZZ_ASSERT(inside(c, c->service_name));
	for (size_t i = 0; i < c->nkeys; i++)
		FUZZ_ASSERT(c->keys[i] && inside(c, c->keys[i]));
	for (size_t i = 0; i < c->nattrs; i++)
		FUZZ_ASSERT(c->attrs[i].key && inside(c, c->attrs[i].key) && inside(c, c->attrs[i].value));
	FUZZ_ASSERT(!otelproc_key(c, (unsigned)c->nkeys));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct otelproc c;
	struct image im = { data, size };
	struct tlsctx_mem mem = { image_read, &im };

	check(&c, otelproc_decode(&c, data, size));
	otelproc_release(&c);
	check(&c, otelproc_read(&c, 0x1000, &mem));
	otelproc_release(&c);
	return 0;
}
