/* An OpenTelemetry thread context record (OTEP 4947) read from another process: the record
 * otel_thread_ctx_v1 points to (elf/tlsctx.h finds the variable) and its decoding.
 * The record: trace-id[16], span-id[8] (W3C, zero when no trace), valid (1: complete), trace-flags,
 * attrs-data-size (u16, host order), then attrs-data-size bytes of (key index u8, length u8, value)
 * entries, the key index naming an attribute through the process context's
 * threadlocal.attribute_key_map (OTEP 4719). Values are bytes as published (UTF-8 by the OTEP,
 * not checked here: whoever prints them escapes them).
 * It sits beside tlsctx (the elf layer) because it reads through the same struct tlsctx_mem; it
 * knows nothing of ELF. tests/fuzz/fuzz_otelctx.c decodes and reads mutated records. */
#ifndef FIRN_OTELCTX_H
#define FIRN_OTELCTX_H

#include <stddef.h>
#include <stdint.h>

#include "elf/tlsctx.h"

/* The fixed part: ids, valid, trace-flags, attrs-data-size. */
#define OTELCTX_HEADER_SIZE 28
/* The most attribute bytes read: a 640-byte record, the OpenTelemetry eBPF profiler's bound. */
#define OTELCTX_ATTRS_MAX (640 - OTELCTX_HEADER_SIZE)

struct otelctx_attr {
	uint8_t key;    /* index into the key map */
	uint8_t len;    /* value bytes */
	uint16_t off;   /* the value's offset in the record's data */
};

/* A decoded record. Values point into data: r->data + attrs[i].off, attrs[i].len bytes. */
struct otelctx_record {
	uint8_t trace_id[16];
	uint8_t span_id[8];
	uint8_t trace_flags;
	uint16_t attrs_size;
	size_t nattrs;
	struct otelctx_attr attrs[OTELCTX_ATTRS_MAX / 2];
	uint8_t data[OTELCTX_ATTRS_MAX];
};

/* Decodes len bytes of a record (the header, then its attributes). 0 with *r filled; -ENODATA:
 * not valid (being written); -EPROTO: shorter than its header or its attrs-data-size, attributes
 * over OTELCTX_ATTRS_MAX, or an entry running past the attributes' end. *r is zeroed on failure. */
int otelctx_decode(struct otelctx_record *r, const uint8_t *buf, size_t len);
/* Reads the record of the thread whose otel_thread_ctx_v1 is at slot (tlsctx_slot): the pointer,
 * the header, then the attributes; the pointer and the header read again after, so a record
 * changed meanwhile is seen. 0 with *r filled; -ENOENT: no record attached (a null pointer);
 * -EAGAIN: it changed while read (try again at the next sample); otelctx_decode's errors; the
 * reader's -errno. *r is zeroed on failure. */
int otelctx_read(struct otelctx_record *r, uint64_t slot, const struct tlsctx_mem *mem);
/* Lowercase hex of n bytes into out (2n + 1 bytes, NUL-terminated): the W3C form of the ids. */
void otelctx_hex(const uint8_t *bytes, size_t n, char *out);

#endif
