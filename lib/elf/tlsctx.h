/* Where a thread's OpenTelemetry thread context pointer is (OTEP 4947): a file's TLS variable
 * otel_thread_ctx_v1 (STT_TLS in .dynsym), its module's PT_TLS segment, and the TLS model the file
 * reaches it with (its relocations), resolved once per file; then, per thread, the variable's
 * address from the thread's fs base (x86-64, TLS variant II, glibc's TCB and DTV) and a few reads
 * of the process's memory through a caller's reader. The record the variable points to is read by
 * elf/otelctx.h.
 *
 * The models, and what a reader (in user space or in the kernel) needs of each:
 *   local-exec     the executable's own variable, no relocation: fs + tp_offset (no read).
 *   initial-exec   R_X86_64_TPOFF64: the loader writes the fs-relative offset in the GOT slot at
 *                  bias + got: fs + *(s64 *)slot (one read per process, not per thread).
 *   TLSDESC        R_X86_64_TLSDESC: the GOT pair {resolver, arg} at bias + got. In static TLS
 *                  (libraries loaded at start-up) arg is the fs-relative offset, negative: fs + arg.
 *                  In dynamic TLS (dlopen) arg points to {module id, offset}: the DTV route.
 *   general-dynamic R_X86_64_DTPMOD64/DTPOFF64: the GOT pair {module id, offset} at bias + got:
 *                  the DTV route, whatever TLS the module got.
 *   the DTV route  dtv = *(fs + 8) (tcbhead_t.dtv); block = dtv[module] (16-byte entries, the
 *                  block's address first); the variable at block + offset. A block not yet made
 *                  for a thread (glibc allocates a dlopen'd module's lazily) reads as -1 or 0.
 * The module id and the offsets are per process (read once after the loader ran); only fs and,
 * for dynamic TLS, the thread's DTV entry are per thread.
 * tests/fuzz/fuzz_tlsctx.c mutates ELF files through tlsctx_resolve_image. */
#ifndef FIRN_TLSCTX_H
#define FIRN_TLSCTX_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The variable OTEP 4947 names. */
#define TLSCTX_SYMBOL "otel_thread_ctx_v1"
/* glibc x86-64: the DTV pointer's offset in the TCB at fs, and the size of a DTV entry. */
#define TLSCTX_TCB_DTV 8
#define TLSCTX_DTV_ENTRY 16
/* The highest module id believed: a larger one is garbage (a lazy TLSDESC, another libc). */
#define TLSCTX_MODULE_MAX 65536

enum tlsctx_model {
	TLSCTX_LOCAL_EXEC = 1,
	TLSCTX_INITIAL_EXEC,
	TLSCTX_TLSDESC,
	TLSCTX_GENERAL_DYNAMIC,
};

/* One file's variable. All addresses are the file's own (add the load bias). */
struct tlsctx {
	enum tlsctx_model model;
	bool executable;     /* ET_EXEC, a PIE (DF_1_PIE) or a file with PT_INTERP */
	uint64_t sym_value;  /* st_value: the variable's offset in the module's TLS block */
	uint64_t sym_size;   /* st_size: a pointer, 8 */
	uint64_t tls_vaddr, tls_memsz, tls_align; /* PT_TLS (align 1 when it said 0) */
	uint64_t got;        /* the GOT entry the model reads; 0 for local-exec */
	uint64_t got_offset; /* its offset in the file (its PT_LOAD's): a reader checks that the
			      * process maps the file there (the loader mapped the segment), not a
			      * reservation of the whole file showing other bytes at that address */
	int64_t tp_offset;   /* local-exec: the variable is at fs + tp_offset (negative) */
};

/* Reads process memory: len bytes at addr into buf; 0, or -errno (-EFAULT: not mapped). */
struct tlsctx_mem {
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	void *ctx;
};

/* Resolves the variable in elf (NULL: not ELF). 0 with *t filled; -ENOENT: no otel_thread_ctx_v1
 * in .dynsym; -ENOEXEC: not an x86-64 ELF64 file; -EPROTO: the symbol is there but not usable (not
 * STT_TLS, not pointer-sized, outside PT_TLS, no PT_TLS, or a library that no TLS relocation
 * reaches it through). *t is zeroed on failure. */
int tlsctx_resolve(struct tlsctx *t, Elf *elf);
/* The same for the ELF file open at fd (the caller's, left open) or an image of len bytes. */
int tlsctx_resolve_fd(struct tlsctx *t, int fd);
int tlsctx_resolve_image(struct tlsctx *t, const void *image, size_t len);

/* The address of the variable in the thread whose fs base is fs, for t's file loaded at bias, in
 * *slot. 0; the reader's -errno; -EAGAIN: the thread has no block for the module yet (dynamic TLS);
 * -EPROTO: a module id out of bounds or a null DTV (not glibc's layout, or not loaded yet);
 * -EINVAL: t resolved nothing. */
int tlsctx_slot(const struct tlsctx *t, uint64_t bias, uint64_t fs, const struct tlsctx_mem *mem,
		uint64_t *slot);
/* Where t's variable is in every thread of one process (t's file loaded at bias): at fs + offset
 * (dtv false), or at the block of module in the thread's DTV + offset (dtv true: dynamic TLS).
 * What tlsctx_slot reads once per process, for a reader that adds the thread's part itself (the
 * BPF reader, bpf/otelctx.bpf.h). */
struct tlsctx_where {
	bool dtv;
	uint64_t module;
	int64_t offset;
};
/* 0 with *w filled; the reader's -errno; -EPROTO: a module id out of bounds (the loader has not
 * relocated the GOT yet, or not glibc's layout); -EINVAL: t resolved nothing. */
int tlsctx_locate(const struct tlsctx *t, uint64_t bias, const struct tlsctx_mem *mem,
		  struct tlsctx_where *w);

/* The model's name: "local-exec", "initial-exec", "tlsdesc", "general-dynamic" ("?" otherwise). */
const char *tlsctx_model_name(enum tlsctx_model m);

#endif
