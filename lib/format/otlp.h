/* OpenTelemetry's profiles signal (OTLP, opentelemetry-proto v1.11.0, profiles/v1development):
 * encodes a struct profile as the body of `POST /v1development/profiles`, an
 * ExportProfilesServiceRequest, in protobuf. firn's tables become the request's one
 * ProfilesDictionary (string, mapping, location, function, stack, attribute and link tables,
 * each with the zero value at index 0 as the spec requires); each sample type becomes one
 * Profile (OTLP's Profile has one), the default type first; samples' labels become attributes
 * and a mapping's build id the attribute process.executable.build_id.gnu; a location has the
 * attribute profile.frame.type where its kind is known (kernel, native, cpython, v8js, jvm:
 * OpenTelemetry's semantic conventions; none for JIT code of no known runtime). The resource carries
 * service.name, host.name, container.id and the caller's other attributes. */
#ifndef FIRN_OTLP_H
#define FIRN_OTLP_H

#include <stddef.h>
#include <stdint.h>

#include "model/profile.h"

struct otlp_attr {
	const char *key, *value;
};

struct otlp_opts {
	const char *service;   /* service.name; NULL: "firn" */
	const char *host;      /* host.name; NULL or "": none */
	const char *container; /* container.id; NULL or "": none */
	const struct otlp_attr *attrs; /* more resource attributes (string values) */
	size_t nattrs;
	const uint8_t *profile_id; /* 16 bytes, the first Profile's id (the others' differ in
				    * their last byte); NULL: none */
};

/* Encodes p (not changed); *out is malloc'd (*len bytes), the caller frees it. Returns 0,
 * -EOVERFLOW when a table has more entries than OTLP's int32 indexes reach, -EINVAL when p
 * references an id it does not have, or -ENOMEM. */
int otlp_encode(const struct profile *p, const struct otlp_opts *o, void **out, size_t *len);

#endif
