/* The names of a Java method read from a Method* of a live JVM, with the offsets of its
 * VMStructs (lib/runtimes/hotspot_structs.h): the holder class's name from the constant pool's
 * _pool_holder, the method's name and signature from the constant pool's slots that its
 * ConstMethod indexes. The symbolizer of HotSpot's frames: a frame walker hands it Method*s.
 * The process is outside input: every pointer read is checked, every index bounded by its
 * pool, every Symbol's length by its buffer, so a method unloaded or redefined meanwhile gives
 * an error, never another method's name or a crash. tests/fuzz/fuzz_hotspot_names.c reads
 * fuzzed memory through it. */
#ifndef FIRN_HOTSPOT_NAMES_H
#define FIRN_HOTSPOT_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "runtimes/hotspot_structs.h"

/* One method's names, NUL-terminated, as the class file spells them but for the class's
 * package separators ('/' made '.'). */
struct hotspot_method {
	char klass[256];     /* "java.util.HashMap" */
	char name[128];      /* "resize", "<init>" */
	char signature[512]; /* "()[Ljava/util/HashMap$Node;" */
};

/* Reads the names of the Method at address method of process pid through mem. 0 with *out
 * filled; -EFAULT when memory on the way could not be read (the method unloaded, the process
 * gone); -EINVAL when what was read is no method as hs describes (an index outside its
 * constant pool, a Symbol empty, holding a NUL or longer than out's field). out's strings are
 * NUL-terminated whatever the result ("" where not read). */
int hotspot_method_read(const struct hotspot_structs *hs, const struct hotspot_mem *mem, pid_t pid,
			uint64_t method, struct hotspot_method *out);

/* The source file of the class of the Method at method, as javac names it, under its package's
 * folders ("java/util/HashMap.java") into buf (len bytes, NUL-terminated; "" on an error). 0;
 * -ENOENT when hs has no ConstantPool::_source_file_name_index or the class names no source
 * file; -EFAULT, -EINVAL as hotspot_method_read. */
int hotspot_method_source(const struct hotspot_structs *hs, const struct hotspot_mem *mem, pid_t pid,
			  uint64_t method, char *buf, size_t len);

/* "java.util.HashMap.resize" into buf (len bytes, NUL-terminated, truncated as snprintf);
 * returns the length snprintf gives. */
int hotspot_method_format(const struct hotspot_method *m, char *buf, size_t len);

/* Whether another method of the class of the Method at method has its name (overloads, which
 * a name needs its parameters to tell apart): *out true or false. 0; -ENOENT when hs has no
 * InstanceKlass::_methods; -ESTALE when the class no longer lists method (redefined since);
 * -EINVAL for a methods array of an implausible length; -EFAULT as hotspot_method_read;
 * -ENOMEM. *out is false whatever the error. A class's methods are sorted by their names'
 * Symbol*s (HotSpot's Method::sort_methods), so only method's two neighbours are read (an
 * array read in one go, then two ConstMethods): a few reads, whatever the class's size. Names
 * are compared by their constant pool index (javac and the class writers keep one Utf8 entry
 * per string): a pool holding one name twice, or an array not sorted, would say false: the
 * plain name, never another method's. */
int hotspot_method_overloaded(const struct hotspot_structs *hs, const struct hotspot_mem *mem,
			      pid_t pid, uint64_t method, bool *out);

/* "Fix.work(int, java.lang.String[])": the name with its parameters as Java spells them, from
 * m's signature, into buf (len bytes, NUL-terminated). The length written; -EINVAL for a
 * signature that is no method descriptor, -ENOSPC when buf is too short (buf "" then). */
int hotspot_method_format_params(const struct hotspot_method *m, char *buf, size_t len);

#endif
