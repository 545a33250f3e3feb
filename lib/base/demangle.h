/* Demangling of C++ (Itanium ABI) and Rust (legacy and v0) symbol names with libiberty's
 * callback demanglers, which never allocate through libiberty's aborting xmalloc. */
#ifndef FIRN_DEMANGLE_H
#define FIRN_DEMANGLE_H

#include <stdbool.h>

/* Whether name looks mangled ("_Z...", "_R..."): the cheap test before demangling. */
bool demangle_candidate(const char *name);
/* The demangled form of name with parameter types ("ns::f<int>(int)"; Rust paths without
 * their hash), malloc'd; NULL with errno EINVAL when name is not a mangled name, ENOMEM. */
char *demangle_name(const char *name);

#endif
