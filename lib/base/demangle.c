/* Symbol demangling through libiberty: Rust first (legacy Rust names are valid C++ names too),
 * then the C++ demangler, written into a growing buffer. */
#include "base/demangle.h"

#include <errno.h>
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"

/* The output buffer the demangler's callback appends to. */
struct dbuf {
	char *s;
	size_t len, cap;
	bool oom;
};

/* Demangler callback: appends n bytes (the Rust demangler passes NULL, 0 for empty idents). */
static void dbuf_append(const char *s, size_t n, void *opaque)
{
	struct dbuf *b = opaque;

	if (b->oom || !n)
		return;
	if (VEC_GROW(b->s, b->cap, b->len + n + 1)) {
		b->oom = true;
		return;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = 0;
}

bool demangle_candidate(const char *name)
{
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

char *demangle_name(const char *name)
{
	const int opts = DMGL_PARAMS | DMGL_ANSI;
	struct dbuf b = { 0 };
	int ok = 0;

	if (demangle_candidate(name)) {
		ok = rust_demangle_callback(name, opts, dbuf_append, &b);
		if (!ok && !b.oom) {
			b.len = 0;
			ok = cplus_demangle_v3_callback(name, opts, dbuf_append, &b);
		}
	}
	if (ok && !b.oom && b.len)
		return b.s;
	free(b.s);
	errno = b.oom ? ENOMEM : EINVAL;
	return NULL;
}
