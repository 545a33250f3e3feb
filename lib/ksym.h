/* Kernel text symbols from /proc/kallsyms (or a file in that format): core kernel and module
 * symbols ("name\t[module]", BPF programs as module "bpf"), sorted by address. A symbol covers
 * the addresses up to the next symbol; the last symbol of a module (or of the core kernel) covers
 * at most KSYM_LAST_SPAN bytes. Of several symbols at one address the first listed is named, as
 * the kernel's own lookup does (its kallsyms lists its choice first). Names point into the ksym's own buffer until ksym_release. */
#ifndef FIRN_KSYM_H
#define FIRN_KSYM_H

#include <stddef.h>
#include <stdint.h>

#define KSYM_LAST_SPAN 0x10000

struct ksym_module {
	const char *name;       /* without brackets: "ext4", "bpf" */
	uint64_t start, end;    /* lowest symbol address, highest + 1 */
};

struct ksym_symbol {
	uint64_t addr;
	uint32_t name;          /* offset into ksym.buf */
	uint32_t module;        /* index into modules + 1; 0 = core kernel */
};

struct ksym {
	struct ksym_symbol *syms; /* sorted by addr, one per address */
	size_t nsyms;
	struct ksym_module *modules;
	size_t nmodules;
	uint64_t core_start, core_end; /* like a module's start and end, for the core kernel */
	char *buf;                /* the file's text, NUL-terminated in place */
};

/* Loads text symbols (types t T w W) from path (NULL: /proc/kallsyms); k is initialized here.
 * 0, -EPERM when every address is 0 (kptr_restrict hides them), -ENOENT when the file has no
 * text symbol, -EINVAL on a malformed line, -ENOMEM or the open/read -errno. */
int ksym_load(struct ksym *k, const char *path);
void ksym_release(struct ksym *k);

/* Finds the symbol covering addr: 0 with its name and module (NULL for the core kernel), or
 * -ENOENT. name/module may be NULL. */
int ksym_lookup(const struct ksym *k, uint64_t addr, const char **name, const char **module);

#endif
