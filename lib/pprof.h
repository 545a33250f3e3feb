/* Google's profile.proto ("pprof") format: encodes a struct profile to protobuf bytes (optionally
 * gzipped) and decodes such bytes, gzipped or raw, back into one. Written by hand against the
 * protobuf wire format; decoding validates every index and length and never trusts the input. */
#ifndef FIRN_PPROF_H
#define FIRN_PPROF_H

#include <stdbool.h>
#include <stddef.h>

#include "profile.h"

/* Largest decompressed size pprof_decode accepts for len bytes of gzip input: 1000 times the
 * input, at least 256 MiB, at most 4 GiB. Larger output is refused with -EFBIG. */
size_t pprof_gunzip_limit(size_t len);

/* Encodes p; on success *out is a malloc'd buffer of *len bytes (gzip stream when gzip) that the
 * caller frees. Ids are written as they are (dense, 1-based), the string table in id order.
 * Returns 0, -EINVAL when p references an id that does not exist, or -ENOMEM. */
int pprof_encode(const struct profile *p, bool gzip, void **out, size_t *len);

/* Decodes len bytes of profile.proto (gzip when they start with 1f 8b) into p, which must be
 * freshly profile_init'ed. File ids are remapped to dense ids; identical samples are merged.
 * Address-less locations with one line and no line number are interned (profile_simple_location)
 * and their kind comes from their mapping's name. Returns 0, -ENODATA for empty input, -EBADMSG
 * for a profile that refers to a string, function, location or mapping it does not have, -EINVAL
 * for other malformed or inconsistent input, -EFBIG for a decompression bomb, or -ENOMEM. On failure
 * p holds partial contents: the caller still profile_release()s it. */
int pprof_decode(struct profile *p, const void *data, size_t len);

#endif
