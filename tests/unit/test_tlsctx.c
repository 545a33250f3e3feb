/* Unit tests for lib/elf/tlsctx: otel_thread_ctx_v1 resolved in the otelctx fixtures' four builds
 * (local-exec in the executable; initial-exec, TLSDESC and general-dynamic in a library), files
 * without it refused; each model's address computation over a fake memory (static and dynamic
 * TLS, a block not yet allocated, garbage); and, live, each build's address for its main and worker
 * threads equal to the one the thread took itself, the libraries linked and opened by dlopen
 * (TLSDESC in glibc's spare static TLS and, with none spare, in dynamic TLS; general-dynamic). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "otelfix.h"
#include "elf/tlsctx.h"

/* Resolves the fixture name; returns the resolver's result (-ENOENT: it cannot open). */
static int resolve(const char *name, struct tlsctx *t)
{
	int fd = open(built_fixture(name), O_RDONLY | O_CLOEXEC);
	int err;

	if (fd < 0)
		return -ENOENT;
	err = tlsctx_resolve_fd(t, fd);
	close(fd);
	return err;
}

/* Each build's model, as its relocations say (readelf -r on the fixtures). */
static void test_models(void **state)
{
	static const struct { const char *file; enum tlsctx_model model; bool exe; } cases[] = {
		{ "otelctx", TLSCTX_LOCAL_EXEC, true },
		{ "libotelctx-ie.so", TLSCTX_INITIAL_EXEC, false },
		{ "libotelctx-desc.so", TLSCTX_TLSDESC, false },
		{ "libotelctx-gd.so", TLSCTX_GENERAL_DYNAMIC, false },
	};
	struct tlsctx t;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(resolve(cases[i].file, &t), 0);
		assert_int_equal(t.model, cases[i].model);
		assert_int_equal(t.executable, cases[i].exe);
		assert_int_equal(t.sym_size, 8);
		assert_int_equal(t.tls_memsz, 8);
		assert_int_equal(t.tls_align, 8);
		assert_true(t.model == TLSCTX_LOCAL_EXEC ? t.got == 0 : t.got != 0);
	}
	assert_int_equal(resolve("otelctx", &t), 0);
	assert_int_equal(t.tp_offset, -8); /* its 8-byte block ends at fs */
	assert_string_equal(tlsctx_model_name(TLSCTX_TLSDESC), "tlsdesc");
}

/* No variable: the executables that only link a library that has it, a plain library; not ELF. */
static void test_refused(void **state)
{
	struct tlsctx t;
	static const char junk[64] = "not an ELF file";

	(void)state;
	assert_int_equal(resolve("otelctx-desc", &t), -ENOENT); /* its .dynsym has none defined */
	assert_int_equal(resolve("libfirnfix.so", &t), -ENOENT);
	assert_int_equal(tlsctx_resolve_image(&t, junk, sizeof(junk)), -ENOEXEC);
	assert_int_equal(tlsctx_resolve(&t, NULL), -ENOEXEC);
	assert_int_equal(t.model, 0);
}

/* A fake process: 8-byte words at addresses, anything else unmapped. */
struct fake {
	uint64_t addr[16], val[16];
	size_t n;
};

static void put(struct fake *f, uint64_t addr, uint64_t val)
{
	f->addr[f->n] = addr;
	f->val[f->n++] = val;
}

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = ctx;

	for (size_t w = 0; w < len / 8; w++) {
		size_t i = 0;
		while (i < f->n && f->addr[i] != addr + 8 * w)
			i++;
		if (i == f->n)
			return -EFAULT;
		memcpy((char *)buf + 8 * w, &f->val[i], 8);
	}
	return 0;
}

enum { FS = 0x7f0000001000, BIAS = 0x555500000000, GOT = 0x3fc0, DTV = 0x600000, BLOCK = 0x700000 };

/* Each model over a fake memory: the reads it makes and the address it gives. */
static void test_fake_models(void **state)
{
	struct fake f = { .n = 0 };
	struct tlsctx_mem mem = { fake_read, &f };
	struct tlsctx t = { .model = TLSCTX_LOCAL_EXEC, .tp_offset = -8, .got = GOT };
	uint64_t slot = 0;

	(void)state;
	assert_int_equal(tlsctx_slot(&t, BIAS, FS, &mem, &slot), 0);
	assert_int_equal(slot, FS - 8);
	t.model = TLSCTX_INITIAL_EXEC; /* the GOT slot holds the fs-relative offset */
	assert_int_equal(tlsctx_slot(&t, BIAS, FS, &mem, &slot), -EFAULT);
	put(&f, BIAS + GOT, (uint64_t)-0x48);
	assert_int_equal(tlsctx_slot(&t, BIAS, FS, &mem, &slot), 0);
	assert_int_equal(slot, FS - 0x48);
	t.model = TLSCTX_TLSDESC; /* static TLS: {resolver, negative offset} */
	f.n = 0;
	put(&f, BIAS + GOT, 0x7f0000abc000);
	put(&f, BIAS + GOT + 8, (uint64_t)-0x40);
	assert_int_equal(tlsctx_slot(&t, BIAS, FS, &mem, &slot), 0);
	assert_int_equal(slot, FS - 0x40);
	f.n = 0; /* dynamic TLS: arg points to {module 3, offset 0x10}; the thread's DTV */
	put(&f, BIAS + GOT, 0x7f0000abc000);
	put(&f, BIAS + GOT + 8, 0x800000);
	put(&f, 0x800000, 3);
	put(&f, 0x800008, 0x10);
	put(&f, FS + 8, DTV);
	put(&f, DTV + 3 * 16, BLOCK);
	assert_int_equal(tlsctx_slot(&t, BIAS, FS, &mem, &slot), 0);
	assert_int_equal(slot, BLOCK + 0x10);
	f.val[5] = UINT64_MAX; /* glibc's TLS_DTV_UNALLOCATED: not used by this thread yet */
	assert_int_equal(tlsctx_slot(&t, BIAS, FS, &mem, &slot), -EAGAIN);
	f.val[2] = TLSCTX_MODULE_MAX + 1; /* garbage (a lazy resolver's argument) */
	assert_int_equal(tlsctx_slot(&t, BIAS, FS, &mem, &slot), -EPROTO);
}

/* General-dynamic: the GOT's tls_index {module, offset}, the DTV; a zero module refused. */
static void test_fake_general_dynamic(void **state)
{
	struct fake f = { .n = 0 };
	struct tlsctx_mem mem = { fake_read, &f };
	struct tlsctx t = { .model = TLSCTX_GENERAL_DYNAMIC, .got = GOT };
	uint64_t slot = 0;

	(void)state;
	put(&f, BIAS + GOT, 2);
	put(&f, BIAS + GOT + 8, 0x20);
	put(&f, FS + 8, DTV);
	put(&f, DTV + 2 * 16, BLOCK);
	assert_int_equal(tlsctx_slot(&t, BIAS, FS, &mem, &slot), 0);
	assert_int_equal(slot, BLOCK + 0x20);
	f.val[0] = 0;
	assert_int_equal(tlsctx_slot(&t, BIAS, FS, &mem, &slot), -EPROTO);
	t.model = 0;
	assert_int_equal(tlsctx_slot(&t, BIAS, FS, &mem, &slot), -EINVAL);
}

/* tlsctx_locate's per-process answer, with a thread's part added as the BPF reader adds it
 * (fs + offset, or the DTV's block + offset), gives both threads' addresses. */
static void check_where(const struct tlsctx *t, uint64_t bias, struct otelfix *f,
			const struct tlsctx_mem *mem)
{
	struct tlsctx_where w;
	uint64_t fs[2] = { f->main.fs, f->worker.fs }, want[2] = { f->main.slot, f->worker.slot };

	assert_int_equal(tlsctx_locate(t, bias, mem, &w), 0);
	assert_true(t->got ? t->got_offset != 0 && t->got_offset <= t->got : !t->got_offset);
	for (int i = 0; i < 2; i++) {
		uint64_t dtv, block[2];
		if (!w.dtv) {
			assert_true(w.offset < 0);
			assert_int_equal(fs[i] + (uint64_t)w.offset, want[i]);
			continue;
		}
		assert_int_equal(mem->read(mem->ctx, fs[i] + TLSCTX_TCB_DTV, &dtv, 8), 0);
		assert_int_equal(mem->read(mem->ctx, dtv + w.module * TLSCTX_DTV_ENTRY, block, 16), 0);
		assert_int_equal(block[0] + (uint64_t)w.offset, want[i]);
	}
}

/* Live: the build's file resolved, its bias from maps, both threads' addresses as they took them. */
static void check_live(const char *exe, const char *file)
{
	struct otelfix f;
	struct tlsctx t;
	struct tlsctx_mem mem = { otelfix_read, &f };
	uint64_t slot = 0, bias;

	if (otelfix_start(&f, exe, 2000)) {
		otelfix_stop(&f);
		skip();
	}
	bias = otelfix_bias(&f, file);
	assert_int_equal(resolve(file, &t), 0);
	assert_true(bias != 0);
	assert_int_equal(tlsctx_slot(&t, bias, f.main.fs, &mem, &slot), 0);
	assert_int_equal(slot, f.main.slot);
	assert_int_equal(tlsctx_slot(&t, bias, f.worker.fs, &mem, &slot), 0);
	assert_int_equal(slot, f.worker.slot);
	check_where(&t, bias, &f, &mem);
	otelfix_stop(&f);
}

static void test_live_local_exec(void **state) { (void)state; check_live("otelctx", "otelctx"); }
static void test_live_initial_exec(void **state) { (void)state; check_live("otelctx-ie", "libotelctx-ie.so"); }
static void test_live_tlsdesc(void **state) { (void)state; check_live("otelctx-desc", "libotelctx-desc.so"); }
static void test_live_general_dynamic(void **state) { (void)state; check_live("otelctx-gd", "libotelctx-gd.so"); }
/* dlopen: glibc puts a TLSDESC module in its spare static TLS, or, without spare TLS, in a block
 * of its own reached through the DTV (as it always does for general-dynamic). */
static void check_dlopen(const char *lib, const char *tunables)
{
	otelfix_env(lib, tunables);
	check_live("otelctx-dlopen", lib);
	otelfix_env(NULL, NULL);
}

static void test_dlopen_tlsdesc_static(void **state) { (void)state; check_dlopen("libotelctx-desc.so", NULL); }
static void test_dlopen_tlsdesc_dynamic(void **state) { (void)state; check_dlopen("libotelctx-desc.so", "glibc.rtld.optional_static_tls=0"); }
static void test_dlopen_general_dynamic(void **state) { (void)state; check_dlopen("libotelctx-gd.so", NULL); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_models),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_fake_models),
		cmocka_unit_test(test_fake_general_dynamic),
		cmocka_unit_test(test_live_local_exec),
		cmocka_unit_test(test_live_initial_exec),
		cmocka_unit_test(test_live_tlsdesc),
		cmocka_unit_test(test_live_general_dynamic),
		cmocka_unit_test(test_dlopen_tlsdesc_static),
		cmocka_unit_test(test_dlopen_tlsdesc_dynamic),
		cmocka_unit_test(test_dlopen_general_dynamic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
