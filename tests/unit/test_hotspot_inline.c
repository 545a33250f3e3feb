/* Unit tests for lib/runtimes/hotspot_inline: a compiled frame expanded over a faked JDK 17
 * nmethod (its code, metadata table, scopes and PcDescs laid out as HotSpot 17 lays them): at a
 * return address with an inlined callee, the callee then its caller with their bcis; between two
 * PcDescs, the next one's; at a PcDesc of the outer method alone, one frame; at one without
 * scopes, none; the PcDescs listed as offsets from the nmethod (to expand each while the
 * process lives), and the one a pc takes: the first at or after it (hotspot_inline_near). Refused, never misnamed: the nmethod's Method* or compile id changed, the
 * outermost scope not its method, a method index past the metadata, sections out of order, a pc
 * outside the code; a JDK without these rows is told apart (-EOPNOTSUPP); JDK 25's layout
 * (mutable and immutable data) expanded the same. With
 * $FIRN_HOTSPOT_SEEDS=DIR the nmethod is written there as fuzz_hotspot_inline's input
 * (tests/fuzz/corpus/fuzz_hotspot_inline). */
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

#include "runtimes/hotspot_inline.h"

#define BASE 0x7f0000000000ULL
#define FAKE_SIZE 0x1000
#define NM 0x100            /* the nmethod; its fields as hs17 says */
#define CODE (NM + 0x100)   /* its code: 0x100 bytes */
#define META (NM + 0x200)   /* its metadata: Outer, Inner, Other */
#define SCOPES (NM + 0x240) /* its scopes: 64 bytes */
#define PCS (NM + 0x280)    /* its PcDescs: 3 of 16 bytes */
#define NM_SIZE 0x300
#define OUTER 0x7f1000000100ULL
#define INNER 0x7f1000000200ULL
#define OTHER 0x7f1000000300ULL
#define COMPILE_ID 417

#include "hotspot_fake.h"

static struct fake f;
static struct hotspot_structs hs;
static const struct hotspot_mem mem = { fake_read, &f };
static const struct hotspot_nmethod_ref ref = { BASE + NM, OUTER, COMPILE_ID };

/* JDK 17's nmethod rows, offsets made up (the reader takes whatever the tables say). */
static void hs17(void)
{
	memset(&hs, 0, sizeof(hs));
	hs.jdk = 17, hs.nm_method = 8, hs.nm_compile_id = 16, hs.blob_size = 24;
	hs.blob_code_begin = 32, hs.nm_metadata_offset = 40, hs.nm_scopes_pcs_offset = 44;
	hs.nm_dependencies_offset = 48, hs.nm_scopes_data_begin = 56;
	hs.size_pcdesc = 16, hs.pcdesc_pc_offset = 0, hs.pcdesc_scope_decode_offset = 4;
}

/* One PcDesc: pc offset from the code, scope offset. */
static void put_pc(int i, uint32_t pc, uint32_t scope)
{
	poke_u32(&f, PCS + 16 * i, pc);
	poke_u32(&f, PCS + 16 * i + 4, scope);
}

/* The nmethod: Outer's code with Inner inlined at code + 0x40 (Outer at bci 5, Inner at 3),
 * Outer alone at 0x80, no scopes at 0x10. Scopes (one-byte UNSIGNED5 ints): 0 serialized_null,
 * Outer at 1 (sender 0, metadata 1, bci 5 + 1), Inner at 4 (sender 1, metadata 2, bci 3 + 1). */
static int setup(void **state)
{
	static const uint8_t scopes[] = { 0, 0, 1, 6, 1, 2, 4 };
	(void)state;
	hs17();
	memset(&f, 0, sizeof(f));
	poke_ptr(&f, NM + 8, OUTER);
	poke_u32(&f, NM + 16, COMPILE_ID);
	poke_u32(&f, NM + 24, NM_SIZE);
	poke_ptr(&f, NM + 32, BASE + CODE);
	poke_u32(&f, NM + 40, META - NM);
	poke_u32(&f, NM + 44, PCS - NM);
	poke_u32(&f, NM + 48, PCS + 3 * 16 - NM);
	poke_ptr(&f, NM + 56, BASE + SCOPES);
	poke_ptr(&f, META, OUTER), poke_ptr(&f, META + 8, INNER), poke_ptr(&f, META + 16, OTHER);
	poke(&f, SCOPES, scopes, sizeof(scopes));
	put_pc(0, 0x10, 0), put_pc(1, 0x40, 4), put_pc(2, 0x80, 1);
	return 0;
}

/* Writes the nmethod as the fuzzer's input when asked: its memory from the nmethod on, the pc's
 * offset from it in its first 4 bytes (no field's). */
static void write_seed(uint32_t pc)
{
	const char *dir = getenv("FIRN_HOTSPOT_SEEDS");
	char path[PATH_MAX];

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/seed-inlined", dir);
	FILE *out = fopen(path, "w");
	assert_non_null(out);
	poke_u32(&f, NM, pc);
	assert_int_equal(fwrite(f.mem + NM, 1, NM_SIZE, out), NM_SIZE);
	poke_u32(&f, NM, 0);
	fclose(out);
}

/* At a return address with Inner inlined: Inner then Outer, with their bcis; between two
 * PcDescs, the next one's; Outer alone where it inlined nothing; none without scopes. */
static void test_expand(void **state)
{
	struct hotspot_inlined out[4];
	(void)state;
	assert_int_equal(hotspot_inline_expand(&hs, &mem, 1, &ref, BASE + CODE + 0x40, out, 4), 2);
	assert_true(out[0].method == INNER && out[0].bci == 3);
	assert_true(out[1].method == OUTER && out[1].bci == 5);
	write_seed(CODE - NM + 0x40);
	assert_int_equal(hotspot_inline_expand(&hs, &mem, 1, &ref, BASE + CODE + 0x31, out, 4), 2);
	assert_true(out[0].method == INNER);
	assert_int_equal(hotspot_inline_expand(&hs, &mem, 1, &ref, BASE + CODE + 0x80, out, 4), 1);
	assert_true(out[0].method == OUTER && out[0].bci == 5);
	assert_int_equal(hotspot_inline_expand(&hs, &mem, 1, &ref, BASE + CODE + 0x10, out, 4),
			 -ENOENT);
	assert_int_equal(hotspot_inline_expand(&hs, &mem, 1, &ref, BASE + CODE + 0x90, out, 4),
			 -ENOENT);
	assert_int_equal(hotspot_inline_expand(&hs, &mem, 1, &ref, BASE + CODE + 0x40, out, 1),
			 -EINVAL); /* deeper than out */
}

/* The PcDescs inside the code, as offsets from the nmethod (the one without scopes too), to
 * expand each while the process lives; at most max; none for a stale nmethod; PcDescs out of
 * order refused (no next one to find). */
static void test_pcs(void **state)
{
	uint32_t pcs[4];
	(void)state;
	assert_int_equal(hotspot_inline_pcs(&hs, &mem, 1, &ref, pcs, 4), 3);
	assert_int_equal(pcs[0], CODE - NM + 0x10);
	assert_int_equal(pcs[1], CODE - NM + 0x40);
	assert_int_equal(pcs[2], CODE - NM + 0x80);
	assert_int_equal(hotspot_inline_pcs(&hs, &mem, 1, &ref, pcs, 1), 1);
	put_pc(1, 0x90, 4);
	assert_int_equal(hotspot_inline_pcs(&hs, &mem, 1, &ref, pcs, 4), -EINVAL);
	put_pc(1, 0x40, 4);
	poke_u32(&f, NM + 16, COMPILE_ID + 1);
	assert_int_equal(hotspot_inline_pcs(&hs, &mem, 1, &ref, pcs, 4), -ESTALE);
}

/* The runtime's path for a frame's pc (hotspot_runtime.c's resolve_compiled): the PcDescs
 * listed while the process lives, the one a pc takes (hotspot_inline_near), its expansion. A
 * sampled pc inside Inner's inlined body, between the PcDescs at 0x10 and 0x40, takes 0x40's
 * scopes: Inner at bci 3 under Outer at bci 5 (the old firn named it Outer alone); a return
 * address at 0x40 or 0x80 its own PcDesc's, unchanged; a pc before the PcDesc without scopes
 * that one (Outer alone), not 0x40's; past the last, or past a list cut short, none. */
static void test_near(void **state)
{
	struct hotspot_inlined out[4];
	uint32_t pcs[4], code = CODE - NM;
	(void)state;
	assert_int_equal(hotspot_inline_pcs(&hs, &mem, 1, &ref, pcs, 4), 3);
	int i = hotspot_inline_near(pcs, 3, code + 0x31);
	assert_int_equal(i, 1);
	assert_int_equal(hotspot_inline_expand(&hs, &mem, 1, &ref, BASE + NM + pcs[i], out, 4), 2);
	assert_true(out[0].method == INNER && out[0].bci == 3);
	assert_true(out[1].method == OUTER && out[1].bci == 5);
	assert_int_equal(hotspot_inline_near(pcs, 3, code + 0x40), 1); /* exact: its own */
	assert_int_equal(hotspot_inline_near(pcs, 3, code + 0x41), 2);
	i = hotspot_inline_near(pcs, 3, code + 0x80);
	assert_int_equal(i, 2);
	assert_int_equal(hotspot_inline_expand(&hs, &mem, 1, &ref, BASE + NM + pcs[i], out, 4), 1);
	assert_true(out[0].method == OUTER && out[0].bci == 5);
	i = hotspot_inline_near(pcs, 3, code + 0x05);
	assert_int_equal(i, 0); /* no scopes there: the outer method alone */
	assert_int_equal(hotspot_inline_expand(&hs, &mem, 1, &ref, BASE + NM + pcs[i], out, 4),
			 -ENOENT);
	assert_int_equal(hotspot_inline_near(pcs, 3, code + 0x81), -ENOENT);
	assert_int_equal(hotspot_inline_near(pcs, 2, code + 0x41), -ENOENT); /* not read */
	assert_int_equal(hotspot_inline_near(pcs, 0, code), -ENOENT);
}

/* Another nmethod at the address (a new compile id, another Method*), or scopes that do not
 * end at its method: refused, never named. */
static void test_stale(void **state)
{
	struct hotspot_inlined out[4];
	(void)state;
	poke_u32(&f, NM + 16, COMPILE_ID + 1);
	assert_int_equal(hotspot_inline_expand(&hs, &mem, 1, &ref, BASE + CODE + 0x40, out, 4),
			 -ESTALE);
	setup(NULL);
	poke_ptr(&f, NM + 8, OTHER);
	assert_int_equal(hotspot_inline_expand(&hs, &mem, 1, &ref, BASE + CODE + 0x40, out, 4),
			 -ESTALE);
	setup(NULL);
	poke_ptr(&f, META, OTHER); /* the outermost scope's method is not the nmethod's */
	assert_int_equal(hotspot_inline_expand(&hs, &mem, 1, &ref, BASE + CODE + 0x40, out, 4),
			 -ESTALE);
}

/* A method index past the metadata, sections out of order, code outside the blob, a pc outside
 * the code, a JDK
 * whose nmethods keep their scopes elsewhere. */
static void test_refused(void **state)
{
	struct hotspot_inlined out[4];
	(void)state;
	poke_u32(&f, NM + 40, SCOPES - NM - 8); /* the metadata holds Outer's slot's successor only */
	assert_int_equal(hotspot_inline_expand(&hs, &mem, 1, &ref, BASE + CODE + 0x40, out, 4),
			 -EINVAL);
	setup(NULL);
	poke_u32(&f, NM + 48, PCS - NM - 16); /* PcDescs end before they start */
	assert_int_equal(hotspot_inline_expand(&hs, &mem, 1, &ref, BASE + CODE + 0x40, out, 4),
			 -EINVAL);
	setup(NULL);
	poke_ptr(&f, NM + 32, BASE + NM - 8); /* its code before the blob */
	assert_int_equal(hotspot_inline_expand(&hs, &mem, 1, &ref, BASE + CODE + 0x40, out, 4),
			 -EINVAL);
	setup(NULL);
	assert_int_equal(hotspot_inline_expand(&hs, &mem, 1, &ref, BASE + NM + NM_SIZE, out, 4),
			 -EINVAL);
	assert_int_equal(hotspot_inline_expand(&hs, &mem, 1, &ref, BASE + CODE - 1, out, 4),
			 -EINVAL);
	hs.nm_metadata_offset = 0;
	assert_int_equal(hotspot_inline_expand(&hs, &mem, 1, &ref, BASE + CODE + 0x40, out, 4),
			 -EOPNOTSUPP);
}

/* JDK 25's layout: the same nmethod with its metadata in mutable data (after 0x10 bytes of
 * relocations) and its PcDescs then scopes in immutable data (a reference count after them),
 * the code at _code_offset: the same expansion; a native method's wrapper (no immutable data)
 * has no call sites, no error. */
static void test_jdk25(void **state)
{
	struct hotspot_inlined out[4];
	uint8_t scopes[7];
	(void)state;
	memcpy(scopes, f.mem + SCOPES, sizeof(scopes));
	hs.blob_code_begin = hs.nm_scopes_data_begin = hs.nm_metadata_offset = 0;
	hs.nm_dependencies_offset = 0;
	hs.blob_code_offset = 64, hs.blob_mutable_data = 72, hs.blob_mutable_data_size = 80;
	hs.blob_relocation_size = 84, hs.nm_immutable_data = 88, hs.nm_immutable_size = 96;
	hs.nm_scopes_data_offset = 100, hs.jdk = 25;
	poke_u32(&f, NM + 64, CODE - NM);
	poke_ptr(&f, NM + 72, BASE + 0x800); /* mutable: 0x10 of relocations, then 3 words */
	poke_u32(&f, NM + 80, 0x10 + 3 * 8), poke_u32(&f, NM + 84, 0x10);
	poke_ptr(&f, 0x810, OUTER), poke_ptr(&f, 0x818, INNER), poke_ptr(&f, 0x820, OTHER);
	poke_ptr(&f, NM + 88, BASE + 0x900); /* immutable: 3 PcDescs, the scopes, a count */
	poke_u32(&f, NM + 44, 0);
	poke_u32(&f, NM + 100, 3 * 16);
	poke_u32(&f, NM + 96, 3 * 16 + sizeof(scopes) + 4);
	memcpy(f.mem + 0x900, f.mem + PCS, 3 * 16);
	for (size_t i = 0; i < sizeof(scopes); i++) /* X = 1 from JDK 21: each byte one more */
		f.mem[0x900 + 3 * 16 + i] = (uint8_t)(scopes[i] + 1);
	assert_int_equal(hotspot_inline_expand(&hs, &mem, 1, &ref, BASE + CODE + 0x40, out, 4), 2);
	assert_true(out[0].method == INNER && out[0].bci == 3);
	assert_true(out[1].method == OUTER && out[1].bci == 5);
	uint32_t pcs[4];
	assert_int_equal(hotspot_inline_pcs(&hs, &mem, 1, &ref, pcs, 4), 3);
	assert_int_equal(hotspot_inline_near(pcs, 3, CODE - NM + 0x31), 1);
	poke_u32(&f, NM + 96, 0), poke_u32(&f, NM + 100, 0); /* a native wrapper's: none */
	assert_int_equal(hotspot_inline_pcs(&hs, &mem, 1, &ref, pcs, 4), 0);
	poke_u32(&f, NM + 100, 3 * 16), poke_u32(&f, NM + 96, 3 * 16 + sizeof(scopes) + 4);
	poke_u32(&f, NM + 80, 0x10 + 8); /* the metadata holds Outer alone */
	assert_int_equal(hotspot_inline_expand(&hs, &mem, 1, &ref, BASE + CODE + 0x40, out, 4),
			 -EINVAL);
	poke_u32(&f, NM + 96, 3 * 16 + 2); /* scopes before PcDescs' end */
	assert_int_equal(hotspot_inline_expand(&hs, &mem, 1, &ref, BASE + CODE + 0x40, out, 4),
			 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_expand, setup),
		cmocka_unit_test_setup(test_pcs, setup),
		cmocka_unit_test_setup(test_near, setup),
		cmocka_unit_test_setup(test_stale, setup),
		cmocka_unit_test_setup(test_refused, setup),
		cmocka_unit_test_setup(test_jdk25, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
