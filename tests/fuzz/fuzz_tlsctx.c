/* libFuzzer harness: otel_thread_ctx_v1 resolved by lib/elf/tlsctx from mutated ELF files (its
 * .dynsym entry, PT_TLS, the relocations that name it), then its address computed for a thread
 * over a fake memory made of the input's own bytes. A resolved file must hold what the header
 * promises: a pointer-sized variable inside PT_TLS, a GOT entry for every model but local-exec,
 * whose variable ends at or below fs. Seeds: the otelctx fixtures, stripped. */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "elf/tlsctx.h"

/* The fake process: the input repeated from address 0x1000; anything below is unmapped. */
struct image {
	const uint8_t *data;
	size_t size;
};

static int image_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct image *im = ctx;

	if (addr < 0x1000 || !im->size)
		return -EFAULT;
	for (size_t i = 0; i < len; i++)
		((uint8_t *)buf)[i] = im->data[(addr - 0x1000 + i) % im->size];
	return 0;
}

/* Checks what tlsctx_resolve promises of a result. */
static void check(const struct tlsctx *t, int err)
{
	FUZZ_ASSERT(err == 0 || err == -ENOENT || err == -ENOEXEC || err == -EPROTO ||
		    err == -ENOMEM);
	if (err) {
		FUZZ_ASSERT(t->model == 0);
		return;
	}
	FUZZ_ASSERT(t->model >= TLSCTX_LOCAL_EXEC && t->model <= TLSCTX_GENERAL_DYNAMIC);
	FUZZ_ASSERT(t->sym_size == 8 && t->sym_value + 8 <= t->tls_memsz);
	FUZZ_ASSERT(t->tls_align && !(t->tls_align & (t->tls_align - 1)));
	FUZZ_ASSERT((t->model == TLSCTX_LOCAL_EXEC) == (t->got == 0));
	if (t->model == TLSCTX_LOCAL_EXEC)
		FUZZ_ASSERT(t->executable && t->tp_offset <= -8);
	FUZZ_ASSERT(strcmp(tlsctx_model_name(t->model), "?"));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tlsctx t;
	struct image im = { data, size };
	struct tlsctx_mem mem = { image_read, &im };
	uint64_t slot = 0;
	int err;

	check(&t, tlsctx_resolve_image(&t, data, size));
	check(&t, tlsctx_resolve_fd(&t, fuzz_memfd(data, size)));
	if (t.model) {
		err = tlsctx_slot(&t, 0x1000, fuzz_u64(data, size, 16) | 0x1000, &mem, &slot);
		FUZZ_ASSERT(err == 0 || err == -EFAULT || err == -EAGAIN || err == -EPROTO);
	}
	return 0;
}
