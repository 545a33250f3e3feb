/* Kernel text symbols, from one of two sources chosen by ksym_load:
 * - the kernel's own lookup (lib/symbolize/ksym_bpf.h), asked only about the addresses looked up (cached
 *   by address): the cost follows the addresses seen, not the 120k symbols of the kernel;
 * - /proc/kallsyms (or a file in that format) read whole: core kernel and module symbols
 *   ("name\t[module]", BPF programs as module "bpf"), sorted by address. A symbol covers the
 *   addresses up to the next symbol; the last symbol of a module (or of the core kernel) covers
 *   at most KSYM_LAST_SPAN bytes. Of several symbols at one address the first listed is named,
 *   as the kernel does (its kallsyms lists its choice first).
 * Both give the same name for an address. Names point into the ksym's own memory until
 * ksym_release. */
#ifndef FIRN_KSYM_H
#define FIRN_KSYM_H

#include <stddef.h>
#include <stdint.h>

#define KSYM_LAST_SPAN 0x10000

struct ksym_module {
	const char *name;       /* without brackets: "ext4", "bpf" */
	uint64_t start, end;    /* lowest symbol address, highest + 1 (the kernel's lookup:
				 * what /proc/modules says, or for "bpf" the functions
				 * looked up so far) */
};

struct ksym_symbol {
	uint64_t addr;
	uint32_t name;          /* offset into ksym.buf */
	uint32_t module;        /* index into modules + 1; 0 = core kernel */
};

struct ksym_live; /* the kernel's lookup and its cache (ksym.c) */

struct ksym {
	struct ksym_symbol *syms; /* sorted by addr, one per address (none with live) */
	size_t nsyms;
	struct ksym_module *modules; /* fixed at ksym_load */
	size_t nmodules;
	uint64_t core_start, core_end; /* like a module's start and end, for the core kernel */
	char *buf;                /* the file's text, NUL-terminated in place */
	struct ksym_live *live;   /* non-NULL: names come from the kernel's lookup */
	uint64_t runs;            /* of the kernel's lookup so far (a run names up to 256) */
};

/* path NULL: the kernel's own lookup where it loads (root, kernel 5.17 or later), else
 * /proc/kallsyms; path given: text symbols (types t T w W) from that file. k is initialized
 * here. 0, -EPERM when every address is 0 (kptr_restrict hides them), -ENOENT when the file has
 * no text symbol, -EINVAL on a malformed line, -ENOMEM or the open/read -errno. */
int ksym_load(struct ksym *k, const char *path);
void ksym_release(struct ksym *k);

/* Asks the kernel's lookup, in as few runs as it can, about those of addrs[0..n) it was not yet
 * asked about, so that ksym_lookup on them answers from the cache. Nothing to do when k read a
 * file. 0, or -ENOMEM or the lookup's -errno (the addresses stay unasked). */
int ksym_prepare(struct ksym *k, const uint64_t *addrs, size_t n);

/* Finds the symbol covering addr: 0 with its name and module (NULL for the core kernel; with the
 * kernel's lookup, a module loaded after ksym_load has a name not in k->modules), or -ENOENT
 * (also when the kernel's lookup fails). name/module/offset may be NULL; offset is that of addr
 * from the symbol's start. */
int ksym_lookup_offset(struct ksym *k, uint64_t addr, const char **name, const char **module,
		       uint64_t *offset);
/* ksym_lookup_offset without the offset. */
int ksym_lookup(struct ksym *k, uint64_t addr, const char **name, const char **module);

#endif
