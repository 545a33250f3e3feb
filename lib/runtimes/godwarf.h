/* Go's runtime structures as its DWARF describes them: the member offsets the Go labels walker
 * needs (runtime.g's m and labels, runtime.m's curg), for a Go release firn has no table row for
 * (lib/runtimes/golabels.h) whose executable kept its DWARF. The DWARF is outside input: libdw
 * reads it, every offset found is checked (below 4096) before use. */
#ifndef FIRN_GODWARF_H
#define FIRN_GODWARF_H

#include <stdint.h>

/* The offsets found. */
struct godwarf {
	uint32_t g_m, g_labels, m_curg;
};

/* Reads them from the DWARF of the ELF file open at fd (the caller keeps fd). 0, -ENOENT (no
 * DWARF, or no such structures or members in it), -EINVAL (an offset not below 4096). */
int godwarf_offsets(int fd, struct godwarf *out);

#endif
