/* The OpenTelemetry process context (OTEP 4719) read from another process: the mapping an SDK
 * publishes (a memfd named OTEL_CTX: "/memfd:OTEL_CTX" in /proc/PID/maps, or "[anon:OTEL_CTX]" /
 * "[anon_shmem:OTEL_CTX]" where it fell back to anonymous memory), its header, and the protobuf
 * payload the header points to: the service name, the string attributes, and the key map that
 * names the thread context records' key indexes (threadlocal.attribute_key_map, elf/otelctx.h).
 *
 * The header, as tests/fixtures/otelctx.c publishes it and the OTEP's text of late 2025 gives it:
 *   0 signature "OTEL_CTX" (written last)   8 version u32 (2)   12 payload_size u32
 *   16 published_at_ns u64 (0 while being updated)   24 payload pointer u64
 * The payload: a ProcessContext {1: Resource resource, 2: repeated KeyValue attributes} as the
 * fixture writes it, or (copies of the OTEP disagree) a bare Resource {1: repeated KeyValue}:
 * a payload whose field 1 is not a Resource is read as one. KeyValue {1: key, 2: AnyValue};
 * AnyValue {1: string_value, 5: ArrayValue {1: repeated AnyValue}}. The draft OtelProcessCtx
 * message (a map and first-class string fields) is not read.
 * Reads go through a struct tlsctx_mem, as otelctx's do. tests/fuzz/fuzz_otelproc.c decodes and
 * reads mutated payloads. */
#ifndef FIRN_OTELPROC_H
#define FIRN_OTELPROC_H

#include <stddef.h>
#include <stdint.h>

#include "elf/tlsctx.h"
#include "proc/procmap.h"

#define OTELPROC_SIGNATURE "OTEL_CTX"
#define OTELPROC_VERSION 2
#define OTELPROC_HEADER_SIZE 32
/* The largest payload read: the OTEP expects KBs. */
#define OTELPROC_PAYLOAD_MAX (64 * 1024)
/* The most string attributes kept (the rest counted in dropped), and key map entries (a record's
 * key index is a byte). */
#define OTELPROC_ATTRS_MAX 64
#define OTELPROC_KEYS_MAX 256

struct otelproc_attr {
	const char *key, *value; /* NUL-terminated, in the context's strings */
};

/* A decoded process context. Strings are NUL-terminated copies (a value with a NUL in it ends
 * there) owned by the context; NULL where the payload had none. */
struct otelproc {
	uint64_t published_at_ns;
	const char *service_name;                 /* the resource's service.name */
	struct otelproc_attr attrs[OTELPROC_ATTRS_MAX]; /* every other string attribute, resource's
						   * first, then the payload's own */
	size_t nattrs, dropped;                   /* dropped: past OTELPROC_ATTRS_MAX, or not strings */
	const char *keys[OTELPROC_KEYS_MAX];      /* the key map: keys[i] names key index i ("" for
						   * an entry that is not a string) */
	size_t nkeys;
	char *strs;                               /* owned: the strings above */
	size_t nstrs, cap_strs;
};

/* The start of the OTEL_CTX mapping in m, in *addr. 0, or -ENOENT when m has none. */
int otelproc_find(const struct procmap *m, uint64_t *addr);

/* Decodes len bytes of payload into c (initialized here; release it even on failure). 0;
 * -EPROTO: not a well-formed payload (a field running past its message, a bad wire type, more
 * than OTELPROC_KEYS_MAX keys); -ENOMEM. */
int otelproc_decode(struct otelproc *c, const uint8_t *payload, size_t len);

/* Reads the process context whose mapping starts at addr (otelproc_find) through mem: the
 * header, the payload, the header again. 0 with c decoded (initialized here; release it even on
 * failure); -ENOENT: no signature (not published, or not yet); -EPROTONOSUPPORT: another version;
 * -EAGAIN: being updated (published_at_ns 0, or it changed while read): try later; -E2BIG: a
 * payload over OTELPROC_PAYLOAD_MAX; otelproc_decode's errors; the reader's -errno. */
int otelproc_read(struct otelproc *c, uint64_t addr, const struct tlsctx_mem *mem);

/* The attribute key naming a thread context record's key index (NULL: outside the map). */
const char *otelproc_key(const struct otelproc *c, unsigned index);
/* The value of string attribute key (service.name included), or NULL. */
const char *otelproc_attr(const struct otelproc *c, const char *key);

void otelproc_release(struct otelproc *c);

#endif
