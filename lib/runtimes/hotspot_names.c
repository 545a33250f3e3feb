/* The names of a Java method read from a Method* of a live JVM: see hotspot_names.h. */
#include "runtimes/hotspot_names.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The 2-byte value at addr (ConstMethod's indexes, Symbol's length). */
static int read_u16(const struct hotspot_mem *mem, pid_t pid, uint64_t addr, uint16_t *v)
{
	return hotspot_mem_read(mem, pid, addr, v, sizeof(*v));
}

/* Reads the Symbol at sym into buf (len bytes): its _length bytes from _body, NUL-terminated.
 * A Symbol is modified UTF-8: never a NUL byte inside. */
static int read_symbol(const struct hotspot_structs *hs, const struct hotspot_mem *mem, pid_t pid,
		       uint64_t sym, char *buf, size_t len)
{
	uint16_t n;
	int err;

	buf[0] = 0;
	if ((err = read_u16(mem, pid, sym + hs->symbol_length, &n)))
		return err;
	if (n == 0 || n >= len)
		return -EINVAL;
	if ((err = hotspot_mem_read(mem, pid, sym + hs->symbol_body, buf, n)))
		return (buf[0] = 0, err);
	buf[n] = 0;
	return memchr(buf, 0, n) ? (buf[0] = 0, -EINVAL) : 0;
}

/* The Symbol* in slot index of the constant pool at cp, the index checked against its length. */
static int pool_symbol(const struct hotspot_structs *hs, const struct hotspot_mem *mem, pid_t pid,
		       uint64_t cp, uint16_t index, uint64_t *sym)
{
	int32_t n;
	int err;

	*sym = 0;
	if ((err = hotspot_mem_read(mem, pid, cp + hs->cpool_length, &n, sizeof(n))))
		return err;
	if (index == 0 || index >= n)
		return -EINVAL;
	return hotspot_mem_word(mem, pid, cp + hs->size_cpool + 8ULL * index, sym);
}

/* The class's name, its package separators made dots. */
static int read_holder(const struct hotspot_structs *hs, const struct hotspot_mem *mem, pid_t pid,
		       uint64_t cp, struct hotspot_method *out)
{
	uint64_t holder, sym;
	int err;

	if ((err = hotspot_mem_word(mem, pid, cp + hs->cpool_holder, &holder)) ||
	    (err = hotspot_mem_word(mem, pid, holder + hs->klass_name, &sym)) ||
	    (err = read_symbol(hs, mem, pid, sym, out->klass, sizeof(out->klass))))
		return err;
	for (char *c = out->klass; *c; c++)
		*c = *c == '/' ? '.' : *c;
	return 0;
}

int hotspot_method_read(const struct hotspot_structs *hs, const struct hotspot_mem *mem, pid_t pid,
			uint64_t method, struct hotspot_method *out)
{
	uint64_t cm, cp, name, sig;
	uint16_t name_index, sig_index;
	int err;

	out->klass[0] = out->name[0] = out->signature[0] = 0;
	if ((err = hotspot_mem_word(mem, pid, method + hs->method_const, &cm)) ||
	    (err = hotspot_mem_word(mem, pid, cm + hs->cmethod_constants, &cp)) ||
	    (err = read_u16(mem, pid, cm + hs->cmethod_name_index, &name_index)) ||
	    (err = read_u16(mem, pid, cm + hs->cmethod_signature_index, &sig_index)) ||
	    (err = pool_symbol(hs, mem, pid, cp, name_index, &name)) ||
	    (err = pool_symbol(hs, mem, pid, cp, sig_index, &sig)) ||
	    (err = read_symbol(hs, mem, pid, name, out->name, sizeof(out->name))) ||
	    (err = read_symbol(hs, mem, pid, sig, out->signature, sizeof(out->signature))) ||
	    (err = read_holder(hs, mem, pid, cp, out))) {
		out->klass[0] = out->name[0] = out->signature[0] = 0;
		return err;
	}
	return 0;
}

int hotspot_method_source(const struct hotspot_structs *hs, const struct hotspot_mem *mem, pid_t pid,
			  uint64_t method, char *buf, size_t len)
{
	struct hotspot_method m;
	uint64_t cm, cp, sym;
	uint16_t index;
	char file[128];
	int err;

	buf[0] = 0;
	if (!hs->cpool_source_file_index)
		return -ENOENT;
	if ((err = hotspot_mem_word(mem, pid, method + hs->method_const, &cm)) ||
	    (err = hotspot_mem_word(mem, pid, cm + hs->cmethod_constants, &cp)) ||
	    (err = read_u16(mem, pid, cp + hs->cpool_source_file_index, &index)))
		return err;
	if (!index)
		return -ENOENT;
	if ((err = pool_symbol(hs, mem, pid, cp, index, &sym)) ||
	    (err = read_symbol(hs, mem, pid, sym, file, sizeof(file))) ||
	    (err = read_holder(hs, mem, pid, cp, &m)))
		return err;
	char *dot = strrchr(m.klass, '.'); /* the package's folders: the class's name up to its last dot */
	for (char *c = m.klass; dot && c < dot; c++)
		*c = *c == '.' ? '/' : *c;
	if (snprintf(buf, len, "%.*s%s%s", dot ? (int)(dot - m.klass) : 0, m.klass, dot ? "/" : "",
		     file) >= (int)len)
		return (buf[0] = 0, -EINVAL);
	return 0;
}

int hotspot_method_format(const struct hotspot_method *m, char *buf, size_t len)
{
	return snprintf(buf, len, "%s.%s", m->klass, m->name);
}

#define MAX_METHODS 65535 /* a class file's methods_count is a u2 */
#define ARRAY_DATA 8      /* Array<Method*>: an int _length, then the pointers, 8-aligned */

/* Whether the method beside ms[i] (at i + step, within ms's n) has the name index name: its
 * ConstMethod read. */
static int neighbour_named(const struct hotspot_structs *hs, const struct hotspot_mem *mem,
			   pid_t pid, const uint64_t *ms, int32_t n, int32_t i, int step, uint16_t name,
			   bool *out)
{
	uint64_t cm;
	uint16_t index;
	int err;

	if (*out || i + step < 0 || i + step >= n)
		return 0;
	if ((err = hotspot_mem_word(mem, pid, ms[i + step] + hs->method_const, &cm)) ||
	    (err = read_u16(mem, pid, cm + hs->cmethod_name_index, &index)))
		return err;
	*out = index == name;
	return 0;
}

/* method's index among ms's n Method*s, -1 when not there. */
static int32_t method_index(const uint64_t *ms, int32_t n, uint64_t method)
{
	for (int32_t i = 0; i < n; i++)
		if (ms[i] == method)
			return i;
	return -1;
}

int hotspot_method_overloaded(const struct hotspot_structs *hs, const struct hotspot_mem *mem,
			      pid_t pid, uint64_t method, bool *out)
{
	uint64_t cm, cp, klass, arr, *ms;
	uint16_t name;
	int32_t n;
	int err;

	*out = false;
	if (!hs->iklass_methods)
		return -ENOENT;
	if ((err = hotspot_mem_word(mem, pid, method + hs->method_const, &cm)) ||
	    (err = hotspot_mem_word(mem, pid, cm + hs->cmethod_constants, &cp)) ||
	    (err = read_u16(mem, pid, cm + hs->cmethod_name_index, &name)) ||
	    (err = hotspot_mem_word(mem, pid, cp + hs->cpool_holder, &klass)) ||
	    (err = hotspot_mem_word(mem, pid, klass + hs->iklass_methods, &arr)) ||
	    (err = hotspot_mem_read(mem, pid, arr, &n, sizeof(n))))
		return err;
	if (n < 1 || n > MAX_METHODS)
		return -EINVAL;
	if (!(ms = malloc(sizeof(*ms) * (size_t)n)))
		return -ENOMEM;
	err = hotspot_mem_read(mem, pid, arr + ARRAY_DATA, ms, sizeof(*ms) * (size_t)n);
	int32_t i = err ? -1 : method_index(ms, n, method);
	if (!err && i < 0)
		err = -ESTALE; /* an old version of a redefined method: its class lists the new one */
	/* the array is sorted by the names' Symbol* (Method::sort_methods, for find_method's
	 * binary search): methods of one name are neighbours */
	if (!err && ((err = neighbour_named(hs, mem, pid, ms, n, i, -1, name, out)) ||
		     (err = neighbour_named(hs, mem, pid, ms, n, i, 1, name, out))))
		*out = false;
	free(ms);
	return err;
}

/* Appends the Java type at *d of descriptor into buf at *at ("int", "java.lang.String[]"),
 * advancing *d past it. -EINVAL for no type there; -ENOSPC when buf is full. */
static int put_type(const char **d, char *buf, size_t len, size_t *at)
{
	static const char prim[] = "BCDFIJSZ";
	static const char *const prim_names[] = { "byte", "char", "double", "float",
						  "int", "long", "short", "boolean" };
	const char *p = *d, *semi, *pos;
	int dims = 0, w;

	while (*p == '[' && dims < 255)
		p++, dims++;
	if (*p == 'L' && (semi = strchr(p, ';')) && semi > p + 1) {
		w = snprintf(buf + *at, len - *at, "%.*s", (int)(semi - p - 1), p + 1);
		for (int i = 0; i < w && *at + (size_t)i < len; i++)
			buf[*at + (size_t)i] = buf[*at + (size_t)i] == '/' ? '.' : buf[*at + (size_t)i];
		*d = semi + 1;
	} else if (*p && (pos = strchr(prim, *p))) {
		w = snprintf(buf + *at, len - *at, "%s", prim_names[pos - prim]);
		*d = p + 1;
	} else
		return -EINVAL;
	if (w < 0 || (size_t)w >= len - *at)
		return -ENOSPC;
	for (*at += (size_t)w; dims > 0; dims--, *at += 2)
		if (len - *at < 3 || !memcpy(buf + *at, "[]", 3))
			return -ENOSPC;
	return 0;
}

int hotspot_method_format_params(const struct hotspot_method *m, char *buf, size_t len)
{
	const char *d = m->signature;
	int w = snprintf(buf, len, "%s.%s(", m->klass, m->name);
	size_t at;
	int err;

	if (w < 0 || (size_t)w >= len || *d++ != '(')
		return (len ? buf[0] = 0 : 0, w < 0 || (size_t)w >= len ? -ENOSPC : -EINVAL);
	for (at = (size_t)w; *d != ')'; ) {
		if (at > (size_t)w && len - at > 2)
			memcpy(buf + at, ", ", 3), at += 2;
		else if (at > (size_t)w)
			return (buf[0] = 0, -ENOSPC);
		if ((err = put_type(&d, buf, len, &at)))
			return (buf[0] = 0, err);
	}
	if (len - at < 2)
		return (buf[0] = 0, -ENOSPC);
	memcpy(buf + at, ")", 2);
	return (int)at + 1;
}
