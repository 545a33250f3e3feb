/* Google's profile.proto ("pprof") format: encodes a struct profile to protobuf bytes (optionally
 * gzipped) and decodes such bytes, gzipped or raw, back into one. Written by hand against the
 * protobuf wire format; decoding validates every index and length and never trusts the input. */
#ifndef FIRN_PPROF_H
#define FIRN_PPROF_H

#include <stdbool.h>
#include <stddef.h>

#include "model/profile.h"

/* Largest profile.proto, raw or decompressed, pprof_decode accepts (1 GiB): decoded, it takes
 * several times that much memory. */
#define PPROF_MAX_SIZE ((size_t)1 << 30)
#define PPROF_GUNZIP_RATIO 256u                /* real profiles compress 5-100x */
#define PPROF_GUNZIP_MIN ((size_t)64 << 20)    /* small inputs may inflate this far */

/* Largest decompressed size pprof_decode accepts for len bytes of gzip input: PPROF_GUNZIP_RATIO
 * times the input, at least PPROF_GUNZIP_MIN, at most PPROF_MAX_SIZE. Larger output is refused
 * with -EFBIG. */
size_t pprof_gunzip_limit(size_t len);

/* Whether len bytes (the start of an input) could begin a raw profile.proto: top-level fields
 * with valid keys and wire types, none longer than PPROF_MAX_SIZE; the last may be cut off. */
bool pprof_plausible(const void *data, size_t len);

/* Encodes p; on success *out is a malloc'd buffer of *len bytes (gzip stream when gzip) that the
 * caller frees. Ids are written as they are (dense, 1-based), the string table in id order.
 * Returns 0, -EINVAL when p references an id that does not exist, or -ENOMEM. */
int pprof_encode(const struct profile *p, bool gzip, void **out, size_t *len);

/* What pprof_encode_flags leaves out to make the file smaller. */
enum {
	/* One location per mapping and lines (function and line, inlined ones included), at the
	 * lowest address sampled in them, not one per instruction address; at address 0 for
	 * kernel and JIT code and for a mapping's unresolved addresses (one location without
	 * lines per mapping). */
	PPROF_FUNCTION_LINES = 1 << 0,
	/* No "tid" and "thread" sample labels (samples that differed only by them merge). */
	PPROF_NO_THREAD_LABELS = 1 << 1,
	/* Functions have no system_name (the mangled name); readers use their name. Functions
	 * that differed only by it become one. */
	PPROF_NO_SYSTEM_NAMES = 1 << 2,
};
/* pprof_encode of a copy of p without what flags name: only the locations its samples use and
 * the mappings, functions and strings those need (a recorder's profile keeps every location
 * it ever resolved: an interval's copy holds only the interval's), strings in the order the
 * copy first uses them, samples that became equal merged. Reports (folded stacks, functions,
 * lines, pid and comm filters) read the same from both. p is not changed. Returns as
 * pprof_encode does. */
int pprof_encode_flags(const struct profile *p, bool gzip, unsigned flags, void **out,
		       size_t *len);

/* Decodes len bytes of profile.proto (gzip when they start with 1f 8b) into p, which must be
 * freshly profile_init'ed. File ids are remapped to dense ids; identical samples are merged.
 * Address-less locations with one line and no line number are interned (profile_simple_location)
 * and their kind comes from their mapping's name. Returns 0, -ENODATA for empty input, -EBADMSG
 * for a profile that refers to a string, function, location or mapping it does not have, -ERANGE
 * for a negative sample value (pprof -diff_base profiles have them: firn diff compares two
 * profiles instead), -EOVERFLOW when the values of one sample type sum past INT64_MAX (so that no
 * sum over samples can overflow), -EPROTO for a sample whose number of values is not the number
 * of sample types (when there are some), -EINVAL for other malformed or inconsistent input (gzip output
 * is checked as it inflates: a stream that does not start like a Profile stops early), -EFBIG for
 * input or decompressed output over PPROF_MAX_SIZE or pprof_gunzip_limit(len), or a field longer
 * than that, or -ENOMEM. On failure p holds partial contents: the caller still
 * profile_release()s it. */
int pprof_decode(struct profile *p, const void *data, size_t len);

/* Where a profile is inconsistent: the sample (1-based, in file order) whose number of values
 * (nvalues) is not the number of sample types. */
struct pprof_fault {
	uint64_t sample;
	uint64_t nvalues;
};
/* pprof_decode that, for a sample whose number of values differs from the number of sample
 * types, returns -EPROTO (not -EINVAL) and says which in *fault (when fault is non-NULL). */
int pprof_decode_fault(struct profile *p, const void *data, size_t len, struct pprof_fault *fault);

#endif
