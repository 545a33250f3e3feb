/* OTEP 4947 thread context records: read with torn-read checks, decoded with bounds checks. */
#include "elf/otelctx.h"

#include <errno.h>
#include <string.h>

/* Splits the attribute bytes into entries; -EPROTO when one runs past their end. */
static int decode_attrs(struct otelctx_record *r)
{
	size_t at = 0;

	while (at < r->attrs_size) {
		struct otelctx_attr *a = &r->attrs[r->nattrs];

		if (r->attrs_size - at < 2 || r->attrs_size - at - 2 < r->data[at + 1])
			return -EPROTO;
		a->key = r->data[at];
		a->len = r->data[at + 1];
		a->off = (uint16_t)(at + 2);
		at += 2u + a->len;
		r->nattrs++;
	}
	return 0;
}

int otelctx_decode(struct otelctx_record *r, const uint8_t *buf, size_t len)
{
	uint16_t size;
	int err = -EPROTO;

	memset(r, 0, offsetof(struct otelctx_record, attrs));
	if (len < OTELCTX_HEADER_SIZE)
		goto fail;
	err = -ENODATA;
	if (buf[24] != 1)
		goto fail;
	err = -EPROTO;
	memcpy(&size, buf + 26, sizeof(size));
	if (size > OTELCTX_ATTRS_MAX || size > len - OTELCTX_HEADER_SIZE)
		goto fail;
	memcpy(r->trace_id, buf, 16);
	memcpy(r->span_id, buf + 16, 8);
	r->trace_flags = buf[25];
	r->attrs_size = size;
	memcpy(r->data, buf + OTELCTX_HEADER_SIZE, size);
	if (!(err = decode_attrs(r)))
		return 0;
fail:
	memset(r, 0, offsetof(struct otelctx_record, attrs));
	return err;
}

/* Reads the pointer at slot and the record's header: -ENOENT for a null pointer. */
static int read_head(uint64_t slot, const struct tlsctx_mem *mem, uint64_t *rec,
		     uint8_t head[OTELCTX_HEADER_SIZE])
{
	int err = mem->read(mem->ctx, slot, rec, sizeof(*rec));

	if (err)
		return err;
	if (!*rec)
		return -ENOENT;
	return mem->read(mem->ctx, *rec, head, OTELCTX_HEADER_SIZE);
}

int otelctx_read(struct otelctx_record *r, uint64_t slot, const struct tlsctx_mem *mem)
{
	uint8_t buf[OTELCTX_HEADER_SIZE + OTELCTX_ATTRS_MAX], again[OTELCTX_HEADER_SIZE];
	uint64_t rec, rec2;
	uint16_t size;
	int err;

	memset(r, 0, offsetof(struct otelctx_record, attrs));
	if ((err = read_head(slot, mem, &rec, buf)))
		return err;
	if (buf[24] != 1)
		return -ENODATA;
	memcpy(&size, buf + 26, sizeof(size));
	if (size > OTELCTX_ATTRS_MAX)
		return -EPROTO;
	if (size && (err = mem->read(mem->ctx, rec + OTELCTX_HEADER_SIZE,
				     buf + OTELCTX_HEADER_SIZE, size)))
		return err;
	if ((err = read_head(slot, mem, &rec2, again)))
		return err == -ENOENT ? -EAGAIN : err;
	if (rec2 != rec || memcmp(again, buf, OTELCTX_HEADER_SIZE))
		return -EAGAIN;
	return otelctx_decode(r, buf, OTELCTX_HEADER_SIZE + size);
}

void otelctx_hex(const uint8_t *bytes, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[bytes[i] >> 4];
		out[2 * i + 1] = digits[bytes[i] & 15];
	}
	out[2 * n] = 0;
}
