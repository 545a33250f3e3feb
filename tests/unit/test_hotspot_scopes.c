/* Unit tests for lib/runtimes/hotspot_scopes: UNSIGNED5 ints as JDK 17 (X = 0) and JDK 21+
 * (X = 1) write them, round trips over edge values and known bytes, refusals (a stream cut
 * short, an excluded byte, over 32 bits); a chain of inlined scopes decoded innermost first,
 * damaged chains refused (a loop, a method index 0, offset 0, too deep); the PcDesc for a pc
 * offset (its own, the next one's, none after the last). Hand-encoded streams only: a live
 * nmethod's are not read yet. With $FIRN_HOTSPOT_SEEDS=DIR the chain is written there as
 * fuzz_hotspot_scopes's input (tests/fuzz/corpus/fuzz_hotspot_scopes). */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtimes/hotspot_scopes.h"

/* Writes v as UNSIGNED5 with excluded byte count x at buf + *pos (HotSpot's writer). */
static void put(uint8_t *buf, size_t *pos, uint32_t v, unsigned x)
{
	unsigned low = 256 - 64 - x;
	uint64_t sum = v;

	for (int i = 0; i < 5; i++) {
		if (sum < low || i == 4) {
			buf[(*pos)++] = (uint8_t)(sum + x);
			return;
		}
		uint64_t b = low + ((sum - low) & 63);
		buf[(*pos)++] = (uint8_t)(b + x);
		sum = (sum - b) >> 6;
	}
}

/* Reads one int from bytes (n of them), with x. */
static int get(const uint8_t *bytes, size_t n, unsigned x, uint32_t *v, size_t *used)
{
	struct hotspot_stream s = { bytes, n, 0, x };
	int err = hotspot_stream_read(&s, v);

	*used = s.pos;
	return err;
}

/* Edge values round-trip in both encodings; known bytes decode as HotSpot's do. */
static void test_unsigned5(void **state)
{
	static const uint32_t values[] = { 0, 1, 190, 191, 192, 255, 256, 1000, 12345, 65535,
					   1u << 20, 0x7fffffff, 0x80000000u, UINT32_MAX };
	uint8_t buf[8];
	uint32_t v;
	size_t n, used;
	(void)state;
	for (unsigned x = 0; x <= 1; x++)
		for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
			n = 0;
			put(buf, &n, values[i], x);
			assert_int_equal(get(buf, n, x, &v, &used), 0);
			assert_int_equal(v, values[i]);
			assert_int_equal(used, n);
			for (size_t k = 0; x && k < n; k++)
				assert_int_not_equal(buf[k], 0); /* X = 1 never writes a 0 */
		}
	assert_int_equal(get((const uint8_t[]){ 191 }, 1, 0, &v, &used), 0); /* JDK 17: L = 192 */
	assert_int_equal(v, 191);
	assert_int_equal(get((const uint8_t[]){ 192, 0 }, 2, 0, &v, &used), 0);
	assert_int_equal(v, 192);
	assert_int_equal(get((const uint8_t[]){ 1 }, 1, 1, &v, &used), 0); /* JDK 21+: 0 is 1 */
	assert_int_equal(v, 0);
	assert_int_equal(get((const uint8_t[]){ 192, 1 }, 2, 1, &v, &used), 0); /* L = 191 */
	assert_int_equal(v, 191);
	assert_int_equal(get((const uint8_t[]){ 200, 3 }, 2, 0, &v, &used), 0);
	assert_int_equal(v, 200 + (3 << 6));
	assert_int_equal(hotspot_stream_excluded(17), 0);
	assert_int_equal(hotspot_stream_excluded(25), 1);
}

/* Streams cut short, an excluded byte, more than 32 bits: refused, the position kept. */
static void test_unsigned5_refused(void **state)
{
	uint32_t v;
	size_t used;
	(void)state;
	assert_int_equal(get((const uint8_t[]){ 200 }, 1, 0, &v, &used), -EINVAL);
	assert_int_equal(used, 0);
	assert_int_equal(get((const uint8_t[]){ 0 }, 0, 0, &v, &used), -EINVAL);
	assert_int_equal(get((const uint8_t[]){ 0 }, 1, 1, &v, &used), -EINVAL);
	assert_int_equal(get((const uint8_t[]){ 200, 0 }, 2, 1, &v, &used), -EINVAL);
	assert_int_equal(get((const uint8_t[]){ 255, 255, 255, 255, 255 }, 5, 0, &v, &used),
			 -EINVAL);
	assert_int_equal(used, 0);
}

/* A scope at *pos: sender, method index, bci (+1 as written), three body offsets. */
static uint32_t put_scope(uint8_t *buf, size_t *pos, unsigned x, uint32_t sender, uint32_t method,
			  int32_t bci)
{
	uint32_t at = (uint32_t)*pos;

	put(buf, pos, sender, x);
	put(buf, pos, method, x);
	put(buf, pos, (uint32_t)(bci + 1), x);
	for (int i = 0; i < 3; i++)
		put(buf, pos, 0, x);
	return at;
}

/* Writes the fuzzer's input (byte 0: X, 1-4: offset, the stream after) when asked. */
static void write_seed(const uint8_t *buf, size_t len, unsigned x, uint32_t offset)
{
	const char *dir = getenv("FIRN_HOTSPOT_SEEDS");
	char path[PATH_MAX];

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/seed-chain-x%u", dir, x);
	FILE *out = fopen(path, "w");
	assert_non_null(out);
	fputc((int)x, out);
	assert_int_equal(fwrite(&offset, 1, 4, out), 4);
	assert_int_equal(fwrite(buf, 1, len, out), len);
	fclose(out);
}

/* main inlining work inlining HashMap.hash (at its entry): three scopes, innermost first. */
static void test_chain(void **state)
{
	uint8_t buf[256];
	struct hotspot_scope sc[4];
	(void)state;
	for (unsigned x = 0; x <= 1; x++) {
		size_t pos = 1; /* 0 is serialized_null: no scope starts there */
		buf[0] = (uint8_t)x;
		uint32_t outer = put_scope(buf, &pos, x, 0, 3, 1000);
		uint32_t mid = put_scope(buf, &pos, x, outer, 7, 42);
		uint32_t inner = put_scope(buf, &pos, x, mid, 300, HS_INVOCATION_ENTRY_BCI);
		write_seed(buf, pos, x, inner);
		assert_int_equal(hotspot_scopes_decode(buf, pos, x, inner, sc, 4), 3);
		assert_int_equal(sc[0].method_index, 300);
		assert_int_equal(sc[0].bci, -1);
		assert_int_equal(sc[1].method_index, 7);
		assert_int_equal(sc[1].bci, 42);
		assert_int_equal(sc[2].method_index, 3);
		assert_int_equal(sc[2].bci, 1000);
		assert_int_equal(sc[2].sender, 0);
		assert_int_equal(hotspot_scopes_decode(buf, pos, x, mid, sc, 4), 2);
		assert_int_equal(hotspot_scopes_decode(buf, pos, x, inner, sc, 2), -EINVAL);
		assert_int_equal(hotspot_scopes_decode(buf, pos, x, 0, sc, 4), -EINVAL);
		assert_int_equal(hotspot_scopes_decode(buf, inner + 2, x, inner, sc, 4), -EINVAL);
		assert_int_equal(hotspot_scopes_decode(buf, pos, x, (uint32_t)pos, sc, 4), -EINVAL);
	}
}

/* A sender at or after its scope (a loop, a caller written later), a method index 0, a bci
 * past 65535: refused. */
static void test_chain_refused(void **state)
{
	uint8_t buf[64];
	struct hotspot_scope sc[8];
	size_t pos = 1;
	(void)state;
	buf[0] = 0;
	uint32_t a = put_scope(buf, &pos, 0, 0, 0, 5);
	assert_int_equal(hotspot_scopes_decode(buf, pos, 0, a, sc, 8), -EINVAL);
	pos = 1;
	a = put_scope(buf, &pos, 0, 1, 3, 5); /* its own sender */
	assert_int_equal(hotspot_scopes_decode(buf, pos, 0, a, sc, 8), -EINVAL);
	pos = 1; /* a scope whose caller is written after it: not HotSpot's order */
	a = put_scope(buf, &pos, 0, 7, 3, 5);
	assert_int_equal(a, 1);
	assert_int_equal(put_scope(buf, &pos, 0, 0, 4, 6), 7);
	assert_int_equal(hotspot_scopes_decode(buf, pos, 0, a, sc, 8), -EINVAL);
	pos = 1;
	a = put_scope(buf, &pos, 0, 0, 3, 65536);
	assert_int_equal(hotspot_scopes_decode(buf, pos, 0, a, sc, 8), -EINVAL);
	pos = 1;
	a = put_scope(buf, &pos, 0, 0, 3, 65535);
	assert_int_equal(hotspot_scopes_decode(buf, pos, 0, a, sc, 8), 1);
}

/* PcDescs of 16 bytes (pc offset at 0, scope at 4), the first HotSpot's sentinel at -1. */
static void test_pcdesc(void **state)
{
	static const int32_t rows[][4] = { { -1, 0 }, { 10, 5 }, { 20, 7 }, { 40, 9 } };
	struct hotspot_pcdesc_layout l = { 16, 0, 4 };
	uint32_t scope = 99;
	(void)state;
	const uint8_t *pcs = (const uint8_t *)rows;
	assert_int_equal(hotspot_pcdesc_find(pcs, 4, &l, 10, &scope), 0);
	assert_int_equal(scope, 5);
	assert_int_equal(hotspot_pcdesc_find(pcs, 4, &l, 11, &scope), 0);
	assert_int_equal(scope, 7);
	assert_int_equal(hotspot_pcdesc_find(pcs, 4, &l, 40, &scope), 0);
	assert_int_equal(scope, 9);
	assert_int_equal(hotspot_pcdesc_find(pcs, 4, &l, -1, &scope), 0);
	assert_int_equal(scope, 0);
	assert_int_equal(hotspot_pcdesc_find(pcs, 4, &l, 41, &scope), -ENOENT);
	assert_int_equal(hotspot_pcdesc_find(pcs, 0, &l, 0, &scope), -ENOENT);
	l.scope_offset = 13;
	assert_int_equal(hotspot_pcdesc_find(pcs, 4, &l, 10, &scope), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unsigned5),
		cmocka_unit_test(test_unsigned5_refused),
		cmocka_unit_test(test_chain),
		cmocka_unit_test(test_chain_refused),
		cmocka_unit_test(test_pcdesc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
