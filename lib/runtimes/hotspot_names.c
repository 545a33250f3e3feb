/* The names of a Java method read from a Method* of a live JVM: see hotspot_names.h. */
#include "runtimes/hotspot_names.h"

#include <errno.h>
#include <stdio.h>
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
