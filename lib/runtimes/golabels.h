/* Go goroutine labels, the parsers: what the Go labels walker (bpf/golabels.bpf.h) needs of a Go
 * executable, read from its first bytes and its build information, and the walker's
 * announcements read back. All input is outside input (a file, bytes copied from a process's
 * memory): every read is bounds-checked, nothing is trusted (tests/fuzz/fuzz_golabels.c).
 * No I/O: lib/runtimes/goruntime.c reads the files and keeps the answers. */
#ifndef FIRN_GOLABELS_H
#define FIRN_GOLABELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "../../bpf/firn.h"
#include "../../bpf/golabels.bpf.h"
#include "runtimes/godwarf.h"

#define GOLABELS_SEGS 4 /* writable segments looked at, at most */

/* An executable as its ELF header and program headers say. */
struct golabels_exe {
	bool tls;                        /* it has a PT_TLS segment (cgo: a dynamic executable) */
	uint64_t tls_memsz, tls_align;   /* that segment's size and alignment */
	unsigned nsegs;                  /* writable PT_LOAD segments, their file ranges: */
	uint64_t seg_off[GOLABELS_SEGS], seg_len[GOLABELS_SEGS];
};

/* Reads an ELF64 x86-64 executable's header and program headers from its first len bytes
 * (head: the program headers must lie within them). 0, or -ENOEXEC (no such ELF file, or
 * headers past len). */
int golabels_exe_parse(const uint8_t *head, size_t len, struct golabels_exe *out);

/* Finds Go's build information ("\xff Go buildinf:", 16-byte aligned, Go 1.18+'s inline
 * format) in buf (len bytes, the start of a writable segment) and copies its Go version
 * ("go1.19.8") into ver (cap bytes, NUL-terminated). 0, -ENOENT (none: no Go binary, or one
 * older than Go 1.18), -EINVAL (a header that does not hold together, or a version that does not
 * fit in cap). */
int golabels_buildinfo_version(const uint8_t *buf, size_t len, char *ver, size_t cap);

/* The offsets the walker needs for Go release ver ("go1.19.8") in executable exe: into p (its
 * pid left 0). The structures' offsets from the table of releases known (Go 1.19, 1.27: their
 * DWARF's, checked), else from dw (the file's DWARF, lib/runtimes/godwarf.h) where given; the
 * labels' layout by release
 * (1.19-1.23 a map, 1.24 on a slice). g is at fs - 8 without TLS segment (Go's own TLS slot),
 * and in a TLS segment that holds g alone (cgo linked by Go: runtime.tlsg, the executable's
 * static TLS block just below the thread pointer) at fs - its size rounded up to its alignment.
 * 0, or -ENOTSUP (a release before 1.19, or one without DWARF nor table row, or a build linked
 * by the system linker whose TLS holds more than g: *why says which, a static string). */
int golabels_offsets(const char *ver, const struct golabels_exe *exe, const struct godwarf *dw,
		     struct firn_go_proc *p, const char **why);

/* One label context as announced. Strings are NUL-terminated copies. */
struct golabels_ctx {
	uint32_t pid, id, n;
	bool cut; /* a key or value was longer than FIRN_GO_STR bytes: cut there */
	char key[FIRN_GO_PAIRS][FIRN_GO_STR + 1], value[FIRN_GO_PAIRS][FIRN_GO_STR + 1];
};

/* Reads the walker's announcement rec (len bytes: struct firn_go_event) into out. 0, or -EINVAL
 * (a record of the wrong size or type, an id out of range, more pairs or longer strings than
 * the walker copies). */
int golabels_event_parse(const void *rec, size_t len, struct golabels_ctx *out);

#endif
