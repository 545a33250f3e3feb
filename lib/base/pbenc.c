/* The protobuf wire-format writer (pbenc.h). */
#include "base/pbenc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"

void pbenc_init(struct pbenc *e)
{
	memset(e, 0, sizeof(*e));
}

void pbenc_release(struct pbenc *e)
{
	free(e->buf);
	pbenc_init(e);
}

/* Room for n more bytes; on failure the error sticks. */
static int reserve(struct pbenc *e, size_t n)
{
	if (e->err)
		return e->err;
	if (e->len + n < e->len || VEC_GROW(e->buf, e->cap, e->len + n))
		e->err = -ENOMEM;
	return e->err;
}

void pbenc_raw(struct pbenc *e, const void *buf, size_t len)
{
	if (!len || reserve(e, len))
		return;
	memcpy(e->buf + e->len, buf, len);
	e->len += len;
}

/* The varint of v into out (10 bytes at most); returns its length. */
static size_t varint_to(uint8_t *out, uint64_t v)
{
	size_t n = 0;

	while (v > 0x7f) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

void pbenc_varint(struct pbenc *e, uint64_t v)
{
	uint8_t b[10];

	pbenc_raw(e, b, varint_to(b, v));
}

void pbenc_key(struct pbenc *e, uint32_t field, unsigned wire)
{
	pbenc_varint(e, (uint64_t)field << 3 | wire);
}

void pbenc_uint(struct pbenc *e, uint32_t field, uint64_t v)
{
	pbenc_key(e, field, PB_VARINT);
	pbenc_varint(e, v);
}

void pbenc_fixed64(struct pbenc *e, uint32_t field, uint64_t v)
{
	uint8_t b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	pbenc_key(e, field, PB_FIXED64);
	pbenc_raw(e, b, 8);
}

void pbenc_bytes(struct pbenc *e, uint32_t field, const void *buf, size_t len)
{
	pbenc_key(e, field, PB_LEN);
	pbenc_varint(e, len);
	pbenc_raw(e, buf, len);
}

void pbenc_string(struct pbenc *e, uint32_t field, const char *s)
{
	pbenc_bytes(e, field, s, strlen(s));
}

size_t pbenc_begin(struct pbenc *e, uint32_t field)
{
	pbenc_key(e, field, PB_LEN);
	return e->len;
}

/* Moves the contents written since mark right to make room for their length, then writes it. */
void pbenc_end(struct pbenc *e, size_t mark)
{
	uint8_t b[10];

	if (e->err || mark > e->len)
		return;
	size_t body = e->len - mark, n = varint_to(b, body);
	if (reserve(e, n))
		return;
	memmove(e->buf + mark + n, e->buf + mark, body);
	memcpy(e->buf + mark, b, n);
	e->len += n;
}

int pbenc_finish(struct pbenc *e, void **buf, size_t *len)
{
	int err = e->err ? e->err : reserve(e, 1); /* a buffer even for an empty message */

	if (err) {
		pbenc_release(e);
		return err;
	}
	*buf = e->buf;
	*len = e->len;
	pbenc_init(e);
	return 0;
}
