/* Unit tests for lib/runtimes/hotspot_names: a Java method's names read from its Method* — a
 * hand-built Method, ConstMethod, ConstantPool, Klass and Symbols in fake memory (JDK 17's
 * offsets), damaged ones refused (an index outside the pool, a Symbol empty, too long or holding
 * a NUL, an unreadable pointer), and — as root, where they are installed — every method of every
 * class a live OpenJDK 17 and Temurin 25 have loaded, read through /proc/PID/mem: HashMap.resize
 * and the fixture's own JitFix.firnHashWork among them, unreadable ones under 1 %; and the method
 * of every nmethod in their code heaps (walked block by block), JitFix.firnHashWork's among them,
 * and four pcs of every blob (first byte, code start, middle, last byte) looked up through the
 * segment map (hotspot_codecache_find): each finds its blob, of the kind the walk told, and an
 * nmethod's Method*; one interpreter among the blobs, adapters and stubs.
 * With $FIRN_HOTSPOT_SEEDS=DIR the fake is written there: tests/fuzz/corpus/fuzz_hotspot_names. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "jvmfix.h"
#include "runtimes/hotspot_codecache.h"
#include "runtimes/hotspot_names.h"

#define BASE 0x7f0000000000ULL
#define FAKE_SIZE 4096
/* where the fake's objects are (offsets from BASE) */
#define METHOD 0x100
#define CMETHOD 0x200
#define CPOOL 0x300
#define KLASS 0x400
#define SYM_KLASS 0x500
#define SYM_NAME 0x600
#define SYM_SIG 0x700

#include "hotspot_fake.h"

/* HashMap.resize as JDK 17 lays it out: Method -> ConstMethod -> ConstantPool (10 slots,
 * name in 3, signature in 4) -> holder Klass -> its name. */
static void build(struct fake *f)
{
	int32_t len = 10;

	memset(f, 0, sizeof(*f));
	poke_ptr(f, METHOD + 8, BASE + CMETHOD);
	poke_ptr(f, CMETHOD + 8, BASE + CPOOL);
	poke_u16(f, CMETHOD + 34, 3);
	poke_u16(f, CMETHOD + 36, 4);
	poke_ptr(f, CPOOL + 24, BASE + KLASS);
	poke(f, CPOOL + 60, &len, sizeof(len));
	poke_ptr(f, CPOOL + 72 + 8 * 3, BASE + SYM_NAME);
	poke_ptr(f, CPOOL + 72 + 8 * 4, BASE + SYM_SIG);
	poke_ptr(f, KLASS + 24, BASE + SYM_KLASS);
	put_symbol(f, SYM_KLASS, "java/util/HashMap");
	put_symbol(f, SYM_NAME, "resize");
	put_symbol(f, SYM_SIG, "()[Ljava/util/HashMap$Node;");
}

/* Reads the fake's method at BASE + at. */
static int read_fake(struct fake *f, uint64_t at, struct hotspot_method *m)
{
	struct hotspot_structs hs;
	struct hotspot_mem mem = { fake_read, f };

	jdk17_names(&hs);
	return hotspot_method_read(&hs, &mem, 1, BASE + at, m);
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

/* The whole fake: class, name, signature, and the name as Java users read it. */
static void test_fake(void **state)
{
	static struct fake f;
	struct hotspot_method m;
	char name[300];
	(void)state;
	build(&f);
	write_seed(&f, "seed-hashmap-resize");
	assert_int_equal(read_fake(&f, METHOD, &m), 0);
	assert_string_equal(m.klass, "java.util.HashMap");
	assert_string_equal(m.name, "resize");
	assert_string_equal(m.signature, "()[Ljava/util/HashMap$Node;");
	assert_int_equal(hotspot_method_format(&m, name, sizeof(name)), 24);
	assert_string_equal(name, "java.util.HashMap.resize");
}

/* Damaged methods give an error and empty names, never another method's name. */
static void test_refused(void **state)
{
	static struct fake f;
	struct hotspot_method m;
	(void)state;
	build(&f);
	poke_u16(&f, CMETHOD + 34, 10); /* the pool has 10 slots: 0-9 */
	assert_int_equal(read_fake(&f, METHOD, &m), -EINVAL);
	assert_string_equal(m.name, "");
	build(&f);
	poke_u16(&f, CMETHOD + 36, 0);
	assert_int_equal(read_fake(&f, METHOD, &m), -EINVAL);
	build(&f);
	poke_u16(&f, SYM_NAME + 4, 0); /* an empty Symbol */
	assert_int_equal(read_fake(&f, METHOD, &m), -EINVAL);
	build(&f);
	poke_u16(&f, SYM_KLASS + 4, 256); /* longer than struct hotspot_method's klass */
	assert_int_equal(read_fake(&f, METHOD, &m), -EINVAL);
	assert_string_equal(m.klass, "");
	assert_string_equal(m.name, "");
	build(&f);
	f.mem[SYM_NAME + 6 + 2] = 0; /* "re\0ize" */
	assert_int_equal(read_fake(&f, METHOD, &m), -EINVAL);
	build(&f);
	poke_ptr(&f, CPOOL + 24, BASE + FAKE_SIZE); /* the holder outside memory */
	assert_int_equal(read_fake(&f, METHOD, &m), -EFAULT);
	assert_string_equal(m.signature, "");
	build(&f);
	poke_ptr(&f, METHOD + 8, 0); /* no ConstMethod */
	assert_int_equal(read_fake(&f, METHOD, &m), -EFAULT);
	assert_int_equal(read_fake(&f, FAKE_SIZE - 4, &m), -EFAULT);
}

#define ARR 0x800      /* the class's Array<Method*> */
#define METHOD2 0x900  /* another method of the class */
#define CMETHOD2 0xa00
#define IKLASS_METHODS 0x30

/* build's class with a methods array: METHOD and METHOD2, whose name is the pool's slot name2
 * (3: resize's own, an overload), its signature sig. */
static void build_class(struct fake *f, uint16_t name2, const char *sig)
{
	build(f);
	poke_ptr(f, KLASS + IKLASS_METHODS, BASE + ARR);
	poke_u32(f, ARR, 2);
	poke_ptr(f, ARR + 8, BASE + METHOD2);
	poke_ptr(f, ARR + 16, BASE + METHOD);
	poke_ptr(f, METHOD2 + 8, BASE + CMETHOD2);
	poke_ptr(f, CMETHOD2 + 8, BASE + CPOOL);
	poke_u16(f, CMETHOD2 + 34, name2);
	memset(f->mem + SYM_SIG, 0, 0x100);
	put_symbol(f, SYM_SIG, sig);
}

/* Whether the fake's METHOD has an overload, with iklass_methods at its place. */
static int overloaded_fake(struct fake *f, uint32_t iklass_methods, bool *out)
{
	struct hotspot_structs hs;
	struct hotspot_mem mem = { fake_read, f };

	jdk17_names(&hs);
	hs.iklass_methods = iklass_methods;
	return hotspot_method_overloaded(&hs, &mem, 1, BASE + METHOD, out);
}

/* Overloads: a method whose class has another of its name carries its parameters as Java
 * spells them; one alone of its name keeps the plain name; a class that no longer lists the
 * method, a methods array out of bounds or a JDK without the field say so, never true. */
static void test_overloads(void **state)
{
	static struct fake f;
	struct hotspot_method m;
	char name[300];
	bool over = true;
	(void)state;
	build_class(&f, 9, "(I[Ljava/lang/String;[[J)V"); /* another name */
	assert_int_equal(overloaded_fake(&f, IKLASS_METHODS, &over), 0);
	assert_false(over);
	build_class(&f, 3, "(I[Ljava/lang/String;[[J)V"); /* resize again */
	write_seed(&f, "seed-overloads");
	assert_int_equal(overloaded_fake(&f, IKLASS_METHODS, &over), 0);
	assert_true(over);
	assert_int_equal(read_fake(&f, METHOD, &m), 0);
	assert_int_equal(hotspot_method_format_params(&m, name, sizeof(name)),
			 (int)strlen("java.util.HashMap.resize(int, java.lang.String[], long[][])"));
	assert_string_equal(name, "java.util.HashMap.resize(int, java.lang.String[], long[][])");
	assert_int_equal(hotspot_method_format_params(&m, name, 30), -ENOSPC);
	assert_string_equal(name, "");
	strcpy(m.signature, "()V");
	assert_int_equal(hotspot_method_format_params(&m, name, sizeof(name)), 26);
	assert_string_equal(name, "java.util.HashMap.resize()");
	static const char *const bad[] = { "(Q)V", "(Ljava/lang/String)V", "(L;)V", "I)V", "(I", "([)V" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		strcpy(m.signature, bad[i]);
		assert_int_equal(hotspot_method_format_params(&m, name, sizeof(name)), -EINVAL);
	}
	poke_ptr(&f, ARR + 16, BASE + METHOD2); /* the class lists METHOD no more */
	assert_int_equal(overloaded_fake(&f, IKLASS_METHODS, &over), -ESTALE);
	assert_false(over);
	build_class(&f, 3, "()V");
	poke_u32(&f, ARR, 70000);
	assert_int_equal(overloaded_fake(&f, IKLASS_METHODS, &over), -EINVAL);
	poke_u32(&f, ARR, 400); /* the pointers run past the memory */
	assert_int_equal(overloaded_fake(&f, IKLASS_METHODS, &over), -EFAULT);
	assert_int_equal(overloaded_fake(&f, 0, &over), -ENOENT);
	assert_false(over);
}

/* What a walk over a JVM's loaded classes met, and over its code heaps. */
struct walk {
	int methods, failed, klasses;
	bool resize, jitfix;
	int overloads[2]; /* String.indexOf said overloaded, HashMap.resize said not */
	int blobs, nmethods, nm_failed;
	bool jitfix_compiled;
	int cc_err, lookups, lookups_wrong, kinds[4]; /* pcs looked up in the CodeCache: found */
};

/* Reads every method of the InstanceKlass k (a class of arrays, _layout_helper < 0, has none). */
static void walk_klass(int fd, const struct hotspot_structs *hs, pid_t pid, uint64_t k,
		       struct walk *w)
{
	struct hotspot_mem mem = { procmem_read, &fd };
	struct hotspot_method m;

	if ((int32_t)peek(fd, k + hs->klass_layout_helper) <= 0)
		return;
	uint64_t arr = peek(fd, k + hs->iklass_methods);
	int32_t n = (int32_t)peek(fd, arr);
	w->klasses++;
	for (int32_t i = 0; arr && i < n && i < 65536; i++) {
		w->methods++;
		if (hotspot_method_read(hs, &mem, pid, peek(fd, arr + 8 + 8 * (uint64_t)i), &m)) {
			w->failed++;
			continue;
		}
		bool over = false;
		int err = hotspot_method_overloaded(hs, &mem, pid, peek(fd, arr + 8 + 8 * (uint64_t)i), &over);
		if (!strcmp(m.klass, "java.lang.String") && !strcmp(m.name, "indexOf"))
			w->overloads[0] += !err && over ? 1 : -1000;
		if (!strcmp(m.klass, "java.util.HashMap") && !strcmp(m.name, "resize"))
			w->overloads[1] += !err && !over ? 1 : -1000;
		w->resize |= !strcmp(m.klass, "java.util.HashMap") && !strcmp(m.name, "resize") &&
			     !strcmp(m.signature, "()[Ljava/util/HashMap$Node;");
		w->jitfix |= !strcmp(m.klass, "JitFix") && !strcmp(m.name, "firnHashWork") &&
			     !strcmp(m.signature, "(I)J");
	}
}

/* Walks every class of every class loader of the stopped process pid. */
static void walk_classes(pid_t pid, const struct hotspot_structs *hs, struct walk *w)
{
	char path[64];
	int n = 0;

	memset(w, 0, sizeof(*w));
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	for (uint64_t cld = peek(fd, hs->cldg_head); cld && n < 1000000;
	     cld = peek(fd, cld + hs->cld_next))
		for (uint64_t k = peek(fd, cld + hs->cld_klasses); k && n++ < 1000000;
		     k = peek(fd, k + hs->klass_next_link))
			walk_klass(fd, hs, pid, k, w);
	close(fd);
}

/* Whether the CodeBlob at blob is an nmethod (a native method's wrapper too): its kind (JDK
 * 23+), its name before. */
static bool is_nmethod(int fd, const struct hotspot_structs *hs, uint64_t blob)
{
	char name[15] = "";

	if (hs->blob_kind_nmethod)
		return (uint8_t)peek(fd, blob + hs->blob_kind) == hs->blob_kind_nmethod;
	uint64_t p = peek(fd, blob + hs->blob_name);
	return p && !procmem_read(&fd, 0, p, name, sizeof(name)) &&
	       (!memcmp(name, "nmethod", 8) || !memcmp(name, "native nmethod", 15));
}

/* Looks up pcs in the blob at blob (its first byte, its code's start, its middle, its last
 * byte), of kind nmethod when is_nm: each must find that blob, and an nmethod its Method*. */
static void lookup_blob(const struct hotspot_structs *hs, const struct hotspot_codecache *cc,
			int fd, pid_t pid, uint64_t blob, bool is_nm, struct walk *w)
{
	struct hotspot_mem mem = { procmem_read, &fd };
	uint32_t size = (uint32_t)peek(fd, blob + hs->blob_size);
	uint64_t code = hs->blob_code_offset ? blob + (uint32_t)peek(fd, blob + hs->blob_code_offset)
					     : peek(fd, blob + hs->blob_code_begin);
	uint64_t pcs[] = { blob, code, blob + size / 2, blob + size - 1 };
	struct hotspot_blob b;

	for (size_t i = 0; i < sizeof(pcs) / sizeof(pcs[0]); i++) {
		int err = hotspot_codecache_find(hs, cc, &mem, pid, pcs[i], &b);
		w->lookups++;
		if (err || b.addr != blob || b.size != size || b.code_begin != code ||
		    (b.kind == HS_BLOB_NMETHOD) != is_nm ||
		    (is_nm && b.method != peek(fd, blob + hs->nm_method))) {
			if (w->lookups_wrong++ < 5)
				print_message("pc %#lx of blob %#lx: %d, blob %#lx '%s' %s\n",
					      (unsigned long)pcs[i], (unsigned long)blob, err,
					      (unsigned long)b.addr, b.name, hotspot_blob_kind_name(b.kind));
			continue;
		}
		w->kinds[b.kind] += i == 0;
	}
}

/* Names the method of every nmethod in the code heaps of the stopped process pid, walking
 * each heap's blocks from its start by their lengths (in segments), as CodeHeap does. */
static void walk_code(pid_t pid, const struct hotspot_structs *hs, struct walk *w)
{
	char path[64];
	struct hotspot_method m;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct hotspot_mem mem = { procmem_read, &fd };
	uint64_t heaps = peek(fd, hs->codecache_heaps), data = peek(fd, heaps + hs->array_data);
	int32_t n = (int32_t)peek(fd, heaps + hs->array_len);
	struct hotspot_codecache cc;
	w->blobs = w->nmethods = w->nm_failed = w->lookups = w->lookups_wrong = 0;
	memset(w->kinds, 0, sizeof(w->kinds));
	w->cc_err = hotspot_codecache_read(hs, &mem, pid, &cc);
	for (int32_t h = 0; fd >= 0 && h < n && h < 8; h++) {
		uint64_t heap = peek(fd, data + 8 * (uint64_t)h), mem_at = heap + hs->codeheap_memory;
		uint64_t b = peek(fd, mem_at + hs->vspace_low), hi = peek(fd, mem_at + hs->vspace_high);
		int shift = (int32_t)peek(fd, heap + hs->codeheap_log2_segment);
		for (int i = 0; b < hi && shift > 0 && shift < 16 && i < 1000000; i++) {
			uint32_t len = (uint32_t)peek(fd, b + hs->heapblock_length);
			uint64_t blob = b + hs->size_heapblock;
			if (!len)
				break;
			b += (uint64_t)len << shift;
			if (!(uint8_t)peek(fd, blob - hs->size_heapblock + hs->heapblock_used))
				continue;
			w->blobs++;
			bool nm = is_nmethod(fd, hs, blob);
			if (!w->cc_err)
				lookup_blob(hs, &cc, fd, pid, blob, nm, w);
			if (!nm)
				continue;
			w->nmethods++;
			if (hotspot_method_read(hs, &mem, pid, peek(fd, blob + hs->nm_method), &m)) {
				w->nm_failed++;
				continue;
			}
			w->jitfix_compiled |= !strcmp(m.klass, "JitFix") && !strcmp(m.name, "firnHashWork");
		}
	}
	if (fd >= 0)
		close(fd);
}

/* Whether pid has loaded a class named JitFix (a cheap look before the whole walk: names only). */
static bool has_jitfix(pid_t pid, const struct hotspot_structs *hs)
{
	char path[64], name[8];
	bool found = false;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	for (uint64_t cld = peek(fd, hs->cldg_head); fd >= 0 && cld && !found && n < 1000000;
	     cld = peek(fd, cld + hs->cld_next))
		for (uint64_t k = peek(fd, cld + hs->cld_klasses); k && !found && n++ < 1000000;
		     k = peek(fd, k + hs->klass_next_link)) {
			uint64_t sym = peek(fd, k + hs->klass_name);
			found = (uint16_t)peek(fd, sym + hs->symbol_length) == 6 &&
				!procmem_read(&fd, pid, sym + hs->symbol_body, name, 6) &&
				!memcmp(name, "JitFix", 6);
		}
	if (fd >= 0)
		close(fd);
	return found;
}

/* A live JVM of jdk: every loaded method named, HashMap.resize and JitFix.firnHashWork among
 * them (the fixture's class once source mode has compiled it: 30 s at most). */
static void live_jdk(const char *jdk)
{
	struct hotspot_syms s;
	struct hotspot_structs hs;
	struct walk w = { 0 };
	char lib[PATH_MAX];

	if (geteuid() != 0 || !jdk_libjvm(jdk, lib))
		skip(); /* reading another process: root, as recordings; the JDK: where installed */
	int fd = open(lib, O_RDONLY | O_CLOEXEC);
	assert_int_equal(hotspot_syms_read_fd(&s, fd), 0);
	close(fd);
	pid_t pid = start_java(jdk);
	assert_true(pid > 0);
	int err = read_live(pid, lib, &s, &hs);
	for (int i = 0; !err && i < 300 && !has_jitfix(pid, &hs); i++)
		usleep(100 * 1000);
	kill(pid, SIGSTOP);
	walk_classes(pid, &hs, &w);
	for (int i = 0; !err && i < 300 && (walk_code(pid, &hs, &w), !w.jitfix_compiled); i++) {
		kill(pid, SIGCONT); /* until JitFix's hot method is compiled */
		usleep(100 * 1000);
		kill(pid, SIGSTOP);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	assert_int_equal(err, 0);
	print_message("%s: %d classes, %d methods, %d unreadable\n", jdk, w.klasses, w.methods, w.failed);
	assert_true(w.klasses > 300 && w.methods > 3000);
	assert_true(w.failed * 100 <= w.methods);
	assert_true(w.resize);
	assert_true(w.overloads[0] >= 2 && w.overloads[1] == 1);
	assert_true(w.jitfix);
	print_message("%s: %d code blobs, %d nmethods, %d unnamed\n", jdk, w.blobs, w.nmethods,
		      w.nm_failed);
	assert_true(w.nmethods > 20 && w.nm_failed * 100 <= w.nmethods);
	assert_true(w.jitfix_compiled);
	print_message("%s: %d pcs looked up, %d wrong; %d nmethods, %d interpreter, %d adapters, "
		      "%d stubs\n", jdk, w.lookups, w.lookups_wrong, w.kinds[HS_BLOB_NMETHOD],
		      w.kinds[HS_BLOB_INTERPRETER], w.kinds[HS_BLOB_ADAPTER], w.kinds[HS_BLOB_STUB]);
	assert_int_equal(w.cc_err, 0);
	assert_int_equal(w.lookups, 4 * w.blobs);
	assert_int_equal(w.lookups_wrong, 0);
	assert_int_equal(w.kinds[HS_BLOB_NMETHOD], w.nmethods);
	assert_int_equal(w.kinds[HS_BLOB_INTERPRETER], 1);
	assert_true(w.kinds[HS_BLOB_ADAPTER] >= 1 && w.kinds[HS_BLOB_STUB] >= 10);
}

static void test_live_jdk17(void **state)
{
	(void)state;
	live_jdk("java-17-openjdk-amd64");
}

static void test_live_temurin25(void **state)
{
	(void)state;
	live_jdk("temurin-25-jdk-amd64");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fake),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_overloads),
		cmocka_unit_test(test_live_jdk17),
		cmocka_unit_test(test_live_temurin25),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
