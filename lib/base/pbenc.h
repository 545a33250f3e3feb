/* A protobuf wire-format writer (varints, fixed64, length-delimited fields, nested messages) into
 * a growing buffer, for the requests lib/record/push and lib/format/otlp build (Parca's WriteRawRequest, OTLP's
 * ExportProfilesServiceRequest). Errors are sticky: after the first failure (-ENOMEM) every call
 * is a no-op and pbenc_finish returns it, so a caller writes a whole message and checks once.
 * Zero values are written as given: proto3 field presence is the caller's choice. */
#ifndef FIRN_PBENC_H
#define FIRN_PBENC_H

#include <stddef.h>
#include <stdint.h>

/* A zeroed struct pbenc is an empty buffer. */
struct pbenc {
	uint8_t *buf; /* owned; len bytes written */
	size_t len, cap;
	int err;      /* 0, or the first failure (-ENOMEM) */
};

/* Wire types. */
enum { PB_VARINT = 0, PB_FIXED64 = 1, PB_LEN = 2 };

void pbenc_init(struct pbenc *e);
void pbenc_release(struct pbenc *e);

/* Raw bytes, a bare varint, and a field's key (field number << 3 | wire type). */
void pbenc_raw(struct pbenc *e, const void *buf, size_t len);
void pbenc_varint(struct pbenc *e, uint64_t v);
void pbenc_key(struct pbenc *e, uint32_t field, unsigned wire);

/* uint32/uint64/int32/int64/bool/enum fields (int64 as two's complement, as protobuf does). */
void pbenc_uint(struct pbenc *e, uint32_t field, uint64_t v);
static inline void pbenc_int(struct pbenc *e, uint32_t field, int64_t v)
{
	pbenc_uint(e, field, (uint64_t)v);
}
/* A fixed64 field (little-endian). */
void pbenc_fixed64(struct pbenc *e, uint32_t field, uint64_t v);
/* A bytes field; pbenc_string: a string field of the NUL-terminated s. */
void pbenc_bytes(struct pbenc *e, uint32_t field, const void *buf, size_t len);
void pbenc_string(struct pbenc *e, uint32_t field, const char *s);

/* A nested message (or a packed repeated field): pbenc_begin writes the key and returns a mark;
 * what is written until pbenc_end(mark) becomes the field's contents, its length written in
 * front of them. Marks nest. */
size_t pbenc_begin(struct pbenc *e, uint32_t field);
void pbenc_end(struct pbenc *e, size_t mark);

/* Hands out the bytes: 0 with *buf (malloc'd, the caller frees; non-NULL even when empty) and
 * *len, the encoder emptied; or the sticky error (-ENOMEM), the encoder released. */
int pbenc_finish(struct pbenc *e, void **buf, size_t *len);

#endif
