/* Unit tests for lib/elf/otelctx: OTEP 4947 records decoded (ids, flags, attributes) and refused
 * (not valid, short, attributes too long or running past their end); read through a fake memory
 * (no record, a record that changes while read); and, live, the otelctx fixtures' main thread
 * read in span a, then span b, then with no span (no stale id), and the worker in span c, with the
 * ids and the http_route value each span printed, in every TLS model, linked or opened by dlopen. */
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
#include "elf/otelctx.h"

/* A record as the fixture makes span i ("a" = 0): ids from its letter, route "/route/X". */
static size_t make(uint8_t *buf, int i, uint8_t valid)
{
	size_t n = OTELCTX_HEADER_SIZE;
	uint16_t size = 2 + 8;

	for (int k = 0; k < 16; k++)
		buf[k] = (uint8_t)(0x10 * (i + 1) + k);
	for (int k = 0; k < 8; k++)
		buf[16 + k] = (uint8_t)(0xa0 + 0x10 * i + k);
	buf[24] = valid;
	buf[25] = 1;
	memcpy(buf + 26, &size, 2);
	buf[n++] = 0;
	buf[n++] = 8;
	memcpy(buf + n, "/route/", 7);
	buf[n + 7] = (uint8_t)('a' + i);
	return n + 8;
}

static void test_decode(void **state)
{
	uint8_t buf[128];
	struct otelctx_record r;
	char hex[33];
	size_t n = make(buf, 0, 1);

	(void)state;
	assert_int_equal(otelctx_decode(&r, buf, n), 0);
	otelctx_hex(r.trace_id, 16, hex);
	assert_string_equal(hex, "101112131415161718191a1b1c1d1e1f");
	otelctx_hex(r.span_id, 8, hex);
	assert_string_equal(hex, "a0a1a2a3a4a5a6a7");
	assert_int_equal(r.trace_flags, 1);
	assert_int_equal(r.nattrs, 1);
	assert_int_equal(r.attrs[0].key, 0);
	assert_int_equal(r.attrs[0].len, 8);
	assert_memory_equal(r.data + r.attrs[0].off, "/route/a", 8);
	uint16_t zero = 0; /* ids without attributes: the header alone */
	memcpy(buf + 26, &zero, 2);
	assert_int_equal(otelctx_decode(&r, buf, OTELCTX_HEADER_SIZE), 0);
	assert_int_equal(r.nattrs, 0);
}

/* Refused, and *r left without ids: not valid, short, too long, an entry past the end. */
static void test_refused(void **state)
{
	uint8_t buf[1024] = { 0 };
	struct otelctx_record r;
	uint16_t size;
	size_t n = make(buf, 1, 0);

	(void)state;
	assert_int_equal(otelctx_decode(&r, buf, n), -ENODATA);
	make(buf, 1, 1);
	assert_int_equal(otelctx_decode(&r, buf, n - 1), -EPROTO); /* shorter than attrs-data-size */
	assert_int_equal(otelctx_decode(&r, buf, 27), -EPROTO);
	assert_int_equal(r.trace_id[0], 0);
	buf[OTELCTX_HEADER_SIZE + 1] = 9; /* the value runs one byte past the attributes */
	assert_int_equal(otelctx_decode(&r, buf, n), -EPROTO);
	size = 1; /* a lone key byte */
	memcpy(buf + 26, &size, 2);
	assert_int_equal(otelctx_decode(&r, buf, n), -EPROTO);
	size = OTELCTX_ATTRS_MAX + 1;
	memcpy(buf + 26, &size, 2);
	assert_int_equal(otelctx_decode(&r, buf, sizeof(buf)), -EPROTO);
	assert_int_equal(r.nattrs, 0);
}

/* A fake process: the slot at 0x1000, the record at 0x2000; after `flip` reads the record's
 * valid byte becomes 0, or the slot points to another record. */
struct fake {
	uint64_t ptr;
	uint8_t rec[128];
	int reads, flip_after;
	uint64_t flip_ptr;
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = ctx;

	if (f->flip_after && ++f->reads > f->flip_after)
		f->ptr = f->flip_ptr;
	if (addr == 0x1000 && len == 8)
		memcpy(buf, &f->ptr, 8);
	else if (addr >= 0x2000 && addr + len <= 0x2000 + sizeof(f->rec))
		memcpy(buf, f->rec + (addr - 0x2000), len);
	else
		return -EFAULT;
	return 0;
}

static void test_read_fake(void **state)
{
	struct fake f = { .ptr = 0 };
	struct tlsctx_mem mem = { fake_read, &f };
	struct otelctx_record r;

	(void)state;
	make(f.rec, 2, 1);
	assert_int_equal(otelctx_read(&r, 0x1000, &mem), -ENOENT);
	f.ptr = 0x2000;
	assert_int_equal(otelctx_read(&r, 0x1000, &mem), 0);
	assert_int_equal(r.trace_id[0], 0x30);
	assert_memory_equal(r.data + r.attrs[0].off, "/route/c", 8);
	assert_int_equal(otelctx_read(&r, 0x3000, &mem), -EFAULT);
	f.flip_after = 3; /* detached after the attributes were read */
	f.flip_ptr = 0;
	assert_int_equal(otelctx_read(&r, 0x1000, &mem), -EAGAIN);
	assert_int_equal(r.trace_id[0], 0);
	f.reads = 0; /* another record attached meanwhile */
	f.ptr = 0x2000;
	f.flip_ptr = 0x2008;
	assert_int_equal(otelctx_read(&r, 0x1000, &mem), -EAGAIN);
	f.flip_after = 0;
	f.ptr = 0x2000;
	f.rec[24] = 0; /* being written */
	assert_int_equal(otelctx_read(&r, 0x1000, &mem), -ENODATA);
}

/* The thread's record now: span i's trace id and route as the fixture printed them (-1: none). */
static void expect_span(struct otelfix *f, const struct tlsctx *t, uint64_t bias,
			const struct otelfix_thread *th, int i)
{
	struct tlsctx_mem mem = { otelfix_read, f };
	struct otelctx_record r;
	uint64_t slot = 0;
	char hex[33];

	assert_int_equal(tlsctx_slot(t, bias, th->fs, &mem, &slot), 0);
	assert_int_equal(slot, th->slot);
	assert_int_equal(otelctx_read(&r, slot, &mem), i < 0 ? -ENOENT : 0);
	if (i < 0)
		return;
	otelctx_hex(r.trace_id, 16, hex);
	assert_string_equal(hex, f->trace[i]);
	assert_int_equal(r.nattrs, 1);
	assert_int_equal(r.attrs[0].key, 0);
	assert_int_equal(r.attrs[0].len, strlen(f->route[i]));
	assert_memory_equal(r.data + r.attrs[0].off, f->route[i], r.attrs[0].len);
}

/* Live: main in a and the worker in c, main in b, main with no span (the pointer cleared: no
 * stale id). A second lasts 250 ms of the fixture's CPU: a read follows its line by far less. */
static void check_live(const char *exe, const char *file)
{
	struct otelfix f;
	struct tlsctx t;
	uint64_t bias;
	int fd;

	if (otelfix_start(&f, exe, 250)) {
		otelfix_stop(&f);
		skip();
	}
	fd = open(built_fixture(file), O_RDONLY | O_CLOEXEC);
	assert_int_equal(tlsctx_resolve_fd(&t, fd), 0);
	close(fd);
	bias = otelfix_bias(&f, file);
	assert_true(otelfix_until(&f, 1 | 4));
	expect_span(&f, &t, bias, &f.main, 0);
	expect_span(&f, &t, bias, &f.worker, 2);
	assert_true(otelfix_until(&f, 2));
	expect_span(&f, &t, bias, &f.main, 1);
	assert_true(otelfix_until(&f, 8));
	expect_span(&f, &t, bias, &f.main, -1);
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
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_read_fake),
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
