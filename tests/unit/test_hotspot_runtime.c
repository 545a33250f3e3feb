/* Unit tests for lib/runtimes/hotspot_runtime: what the Java walker is told of a JVM
 * (hotspot_proc_of: the offsets copied, the code heaps' span, layouts out of its reach refused
 * with the reason) and how an announcement is named (hotspot_announced_name) in hand-built fake
 * memory with JDK 17's offsets: a method by its Method*, a stub by its CodeBlob; a Method* whose
 * ConstMethod is no longer the one the walker saw (the method unloaded, its memory reused by
 * another) is refused, -ESTALE, never given the other method's name; so is an address that is
 * no longer a blob's start. hotspot_lines_decode: a compressed line number table as JDK 17 and
 * JDK 21+ (UNSIGNED5's excess of 1) write it, and damaged ones refused. A process the host's table
 * knows without a libjvm is not read from /proc at its attach (test_table). With $FIRN_HOTSPOT_SEEDS=DIR the fake is written there (its ConstMethod
 * address in its first 8 bytes): tests/fuzz/corpus/fuzz_hotspot_runtime. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include <linux/types.h>

#include "../../bpf/firn.h"
#include "../../bpf/hotspot.h"
#include "runtimes/hotspot_names.h"
#include "runtimes/hotspot_runtime.h"
#include "runtimes/runtime.h"
#include "proc/procmap.h"

#define BASE 0x7f0000000000ULL
#define FAKE_SIZE 0x2000
/* a method (as test_hotspot_names lays it out), a second ConstMethod, names */
#define METHOD 0x100
#define CMETHOD 0x200
#define CMETHOD2 0x280
#define CPOOL 0x300
#define KLASS 0x400
#define SYM_KLASS 0x500
#define SYM_NAME 0x600
#define SYM_SIG 0x700
#define SYM_OTHER 0x780
#define SYM_FILE 0x7c0
/* a code heap: its segment map, blob names, 256 segments of 16 bytes */
#define SEGMAP 0x800
#define NAMES 0x900
#define HEAP 0x1000

#include "hotspot_fake.h"

/* JDK 17's offsets of the names (test_hotspot_names) and the code heap's (test_hotspot_codecache). */
static void jdk17(struct hotspot_structs *hs)
{
	jdk17_names(hs);
	hs->heapblock_used = 8, hs->size_heapblock = 16;
	hs->blob_name = 0, hs->blob_size = 8, hs->blob_frame_size = 12, hs->blob_code_begin = 16;
	hs->nm_method = 24, hs->cmethod_code_size = 12, hs->size_cmethod = 56;
	hs->frame_method = -3, hs->frame_bcp = -8, hs->frame_sender_sp = -1;
	hs->cpool_source_file_index = 64;
}

/* HashMap.resize (ConstMethod CMETHOD: name in slot 3) and a second ConstMethod, CMETHOD2, of
 * the same class naming "other" (slot 5); a stub "StubRoutines (1)" in segments 0-3. */
static void build(struct fake *f)
{
	int32_t len = 10;

	memset(f, 0, sizeof(*f));
	poke_ptr(f, METHOD + 8, BASE + CMETHOD);
	poke_ptr(f, CMETHOD + 8, BASE + CPOOL);
	poke_u16(f, CMETHOD + 34, 3);
	poke_u16(f, CMETHOD + 36, 4);
	poke_ptr(f, CMETHOD2 + 8, BASE + CPOOL);
	poke_u16(f, CMETHOD2 + 34, 5);
	poke_u16(f, CMETHOD2 + 36, 4);
	poke_ptr(f, CPOOL + 24, BASE + KLASS);
	poke(f, CPOOL + 60, &len, sizeof(len));
	poke_ptr(f, CPOOL + 72 + 8 * 3, BASE + SYM_NAME);
	poke_ptr(f, CPOOL + 72 + 8 * 4, BASE + SYM_SIG);
	poke_ptr(f, CPOOL + 72 + 8 * 5, BASE + SYM_OTHER);
	poke_ptr(f, KLASS + 24, BASE + SYM_KLASS);
	put_symbol(f, SYM_KLASS, "java/util/HashMap");
	put_symbol(f, SYM_NAME, "resize");
	put_symbol(f, SYM_SIG, "()V");
	put_symbol(f, SYM_OTHER, "other");
	poke_u16(f, CPOOL + 64, 6); /* the source file's name in slot 6 */
	poke_ptr(f, CPOOL + 72 + 8 * 6, BASE + SYM_FILE);
	put_symbol(f, SYM_FILE, "HashMap.java");
	memset(f->mem + SEGMAP, 0xFF, 256);
	for (unsigned i = 0; i < 4; i++)
		f->mem[SEGMAP + i] = (uint8_t)i;
	poke(f, NAMES, "StubRoutines (1)", 17);
	f->mem[HEAP + 8] = 1; /* used */
	poke_ptr(f, HEAP + 16, BASE + NAMES);
	poke_u32(f, HEAP + 16 + 8, 48);
	poke_ptr(f, HEAP + 16 + 16, BASE + HEAP + 32);
}

/* Writes the fake to DIR/NAME when $FIRN_HOTSPOT_SEEDS names DIR (the fuzzer's seed). */
static void write_seed(const struct fake *f, const char *name)
{
	const char *dir = getenv("FIRN_HOTSPOT_SEEDS");
	char path[PATH_MAX];

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *out = fopen(path, "w");
	assert_non_null(out);
	assert_int_equal(fwrite(f->mem, 1, FAKE_SIZE, out), FAKE_SIZE);
	fclose(out);
}

/* The fake's one code heap. */
static void heaps(struct hotspot_codecache *cc)
{
	memset(cc, 0, sizeof(*cc));
	cc->nheaps = 1;
	cc->heap[0] = (struct hotspot_codeheap){ BASE + HEAP, BASE + FAKE_SIZE, BASE + SEGMAP, 4 };
}

/* Names the announcement of method (an offset from BASE) with ConstMethod cmethod (0: a stub). */
static int name_of(struct fake *f, uint64_t method, uint64_t cmethod, char *buf, size_t len)
{
	struct hotspot_structs hs;
	struct hotspot_codecache cc;
	struct hotspot_mem mem = { fake_read, f };
	struct firn_hotspot_method_event e = { .type = FIRN_EV_HS_METHOD, .pid = 1,
					       .method = BASE + method,
					       .cmethod = cmethod ? BASE + cmethod : 0, .id = 1 };

	jdk17(&hs);
	heaps(&cc);
	return hotspot_announced_name(&hs, &cc, &mem, 1, &e, buf, len);
}

/* A method as the walker saw it, and a stub by its blob. */
static void test_named(void **state)
{
	struct fake f;
	char buf[128];
	(void)state;

	build(&f);
	poke_ptr(&f, 0, BASE + CMETHOD); /* for the fuzzer: the ConstMethod announced */
	write_seed(&f, "seed-resize-and-stub");
	assert_int_equal(name_of(&f, METHOD, CMETHOD, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "java.util.HashMap.resize");
	assert_int_equal(name_of(&f, HEAP + 16, 0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "StubRoutines (1)");
}

/* The source file of a method's class, under its package's folders; none: -ENOENT. */
static void test_source(void **state)
{
	struct fake f;
	struct hotspot_structs hs;
	struct hotspot_mem mem = { fake_read, &f };
	char buf[64];
	(void)state;

	build(&f);
	jdk17(&hs);
	assert_int_equal(hotspot_method_source(&hs, &mem, 1, BASE + METHOD, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "java/util/HashMap.java");
	assert_int_equal(hotspot_method_source(&hs, &mem, 1, BASE + METHOD, buf, 10), -EINVAL);
	assert_string_equal(buf, "");
	poke_u16(&f, CPOOL + 64, 0);
	assert_int_equal(hotspot_method_source(&hs, &mem, 1, BASE + METHOD, buf, sizeof(buf)), -ENOENT);
	hs.cpool_source_file_index = 0;
	assert_int_equal(hotspot_method_source(&hs, &mem, 1, BASE + METHOD, buf, sizeof(buf)), -ENOENT);
}

/* The Method*'s memory reused by another method (its ConstMethod now CMETHOD2, "other"): the
 * announcement of what the walker saw is refused, never named "other"; an announcement of the
 * new one is named by it. */
static void test_reused(void **state)
{
	struct fake f;
	char buf[128];
	(void)state;

	build(&f);
	poke_ptr(&f, METHOD + 8, BASE + CMETHOD2);
	assert_int_equal(name_of(&f, METHOD, CMETHOD, buf, sizeof(buf)), -ESTALE);
	assert_string_equal(buf, "");
	assert_int_equal(name_of(&f, METHOD, CMETHOD2, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "java.util.HashMap.other");
}

/* Unreadable or damaged: an error and "", never a name. */
static void test_refused(void **state)
{
	struct fake f;
	char buf[128];
	(void)state;

	build(&f);
	assert_int_equal(name_of(&f, 0x4000, CMETHOD, buf, sizeof(buf)), -EFAULT);
	assert_string_equal(buf, "");
	poke_u16(&f, CMETHOD + 34, 200); /* a name index outside the pool */
	assert_int_equal(name_of(&f, METHOD, CMETHOD, buf, sizeof(buf)), -EINVAL);
	assert_string_equal(buf, "");
	/* an address inside the stub, not its start: not the blob announced */
	assert_int_equal(name_of(&f, HEAP + 32, 0, buf, sizeof(buf)), -ESTALE);
	f.mem[HEAP + 8] = 0; /* the stub's block freed */
	assert_int_equal(name_of(&f, HEAP + 16, 0, buf, sizeof(buf)), -ENOENT);
	assert_string_equal(buf, "");
}

/* The walker's values: offsets copied, the heaps' span as the bounds; what it cannot read refused. */
static void test_proc_of(void **state)
{
	struct hotspot_structs hs;
	struct hotspot_codecache cc;
	struct firn_hotspot_proc p;
	char why[160];
	(void)state;

	jdk17(&hs);
	heaps(&cc);
	cc.nheaps = 2;
	cc.heap[1] = (struct hotspot_codeheap){ BASE + 0x8000, BASE + 0x9000, BASE + 0x700, 7 };
	assert_int_equal(hotspot_proc_of(&hs, &cc, &p, why, sizeof(why)), 0);
	assert_int_equal(p.lo, BASE + HEAP);
	assert_int_equal(p.hi, BASE + 0x9000);
	assert_int_equal(p.heap[1].log2_segment, 7);
	assert_int_equal(p.heap[1].segmap, BASE + 0x700);
	assert_int_equal(p.off_nm_method, 24);
	assert_int_equal(p.size_cmethod, 56);
	assert_int_equal(p.frame_method, -3);
	assert_int_equal(p.frame_bcp, -8);
	assert_int_equal(p.kind_nmethod, 0);
	cc.nheaps = FIRN_HS_HEAPS + 1;
	assert_int_equal(hotspot_proc_of(&hs, &cc, &p, why, sizeof(why)), -EPROTO);
	assert_string_equal(why, "HotSpot of a layout the walker cannot read: more code heaps than the walker reads");
	cc.nheaps = 1;
	hs.frame_bcp = 2;
	assert_int_equal(hotspot_proc_of(&hs, &cc, &p, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "interpreter frame slots"));
	hs.frame_bcp = -8, hs.nm_method = 5000;
	assert_int_equal(hotspot_proc_of(&hs, &cc, &p, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "an offset out of the walker's reach"));
}

/* JavaSplit.main's table (line 22 at bci 0, an escape; then 25 at bci 3, 27 at bci 13 in single
 * bytes), in JDK 17's encoding and JDK 21's (every UNSIGNED5 byte one more). */
static void test_lines(void **state)
{
	static const uint8_t jdk17[] = { 0xFF, 0, 44, 3 << 3 | 3, 10 << 3 | 2, 0 };
	static const uint8_t jdk21[] = { 0xFF, 1, 45, 3 << 3 | 3, 10 << 3 | 2, 0 };
	static const uint8_t back[] = { 0xFF, 3, 44, 0 };   /* bci - 2 */
	static const uint8_t zero[] = { 0xFF, 0, 0, 0 };    /* line 0 */
	static const uint8_t open[] = { 3 << 3 | 3, 0xFF }; /* no end */
	struct hotspot_line rows[4];
	(void)state;

	assert_int_equal(hotspot_lines_decode(jdk17, sizeof(jdk17), 0, rows, 4), 3);
	assert_int_equal(rows[0].bci, 0);
	assert_int_equal(rows[0].line, 22);
	assert_int_equal(rows[1].bci, 3);
	assert_int_equal(rows[1].line, 25);
	assert_int_equal(rows[2].bci, 13);
	assert_int_equal(rows[2].line, 27);
	memset(rows, 0, sizeof(rows));
	assert_int_equal(hotspot_lines_decode(jdk21, sizeof(jdk21), 1, rows, 4), 3);
	assert_int_equal(rows[2].line, 27);
	assert_int_equal(hotspot_lines_decode(jdk21, sizeof(jdk21), 0, rows, 4), -EINVAL);
	assert_int_equal(hotspot_lines_decode(jdk17, sizeof(jdk17), 0, rows, 2), 2); /* room for 2 */
	assert_int_equal(hotspot_lines_decode(back, sizeof(back), 0, rows, 4), -EINVAL);
	assert_int_equal(hotspot_lines_decode(zero, sizeof(zero), 0, rows, 4), -EINVAL);
	assert_int_equal(hotspot_lines_decode(open, sizeof(open), 0, rows, 4), -EINVAL);
	assert_int_equal(hotspot_lines_decode(jdk17, 5, 0, rows, 4), -EINVAL); /* cut before its end */
}

/* The host's table in test_table: one executable mapping of the file named in table_path, or,
 * table_path NULL, a process it does not know. */
static const char *table_path;
static struct procmap_entry table_entry;

static const struct procmap *table_maps(void *ctx, pid_t pid)
{
	static struct procmap m;
	(void)ctx, (void)pid;

	if (!table_path)
		return NULL;
	table_entry = (struct procmap_entry){ .start = BASE, .end = BASE + 0x1000,
		.offset = 0x1000, .r = true, .x = true, .kind = PROCMAP_FILE, .path = table_path };
	m = (struct procmap){ .entries = &table_entry, .n = 1, .cap = 1 };
	return &m;
}

/* This process's refusals after its attach with the table saying table_path (a libjvm.so that
 * is not one is mapped here: a read of /proc/self/maps finds it and refuses it). */
static uint64_t refusals_with(const char *path)
{
	const struct runtime_host h = { .maps = table_maps, .all = true };
	struct runtime *rt = runtime_java.new(&h);
	struct hotspot_runtime_stats st;

	assert_non_null(rt);
	table_path = path;
	runtime_java.attach(rt, getpid(), false, 1);
	assert_int_equal(runtime_java.stats(rt, &st, sizeof(st)), 0);
	runtime_java.free(rt);
	return st.refused;
}

/* A process the host's table knows without a libjvm is not read from /proc at its attach (each
 * new process's maps read under churn); one it shows with a libjvm, or does not know, is. */
static void test_table(void **state)
{
	char dir[] = "/tmp/firn-hsrt.XXXXXX", path[64];
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/libjvm.so", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs("not an ELF file", f) >= 0, 1);
	fclose(f);
	FILE *g = fopen(path, "r");
	assert_non_null(g);
	void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fileno(g), 0);
	assert_true(p != MAP_FAILED);
	assert_int_equal(refusals_with(NULL), 1);              /* not known: /proc read */
	assert_int_equal(refusals_with("/usr/bin/true"), 0);   /* known, no libjvm: not read */
	assert_int_equal(refusals_with(path), 1);              /* known with its libjvm */
	munmap(p, 4096);
	fclose(g);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_source),
		cmocka_unit_test(test_named),
		cmocka_unit_test(test_reused),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_proc_of),
		cmocka_unit_test(test_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
