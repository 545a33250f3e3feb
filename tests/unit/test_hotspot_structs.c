/* Unit tests for lib/runtimes/hotspot_structs: HotSpot's VMStructs tables read through a memory
 * reader — a hand-built JDK 17-like table set in fake memory (every row's value, the version),
 * damaged ones refused with their reason (a field missing, a table without an end, a stride out
 * of bounds, a static that is not, an unreadable pointer), the exported symbols of a fake
 * libjvm (tests/fixtures/hsfake.c) and the installed libjvm.so files, the fake loaded here and
 * read through its load bias, and — as root, where they are installed — a live OpenJDK 17 and
 * Temurin 25 read through /proc/PID/mem, their CodeCache followed to a code heap inside its
 * bounds, in under 500 reads.
 * With $FIRN_HOTSPOT_SEEDS=DIR the fake is written there: tests/fuzz/corpus/fuzz_hotspot_structs. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "jvmfix.h"
#include "symfix.h"
#include "runtimes/hotspot_structs.h"

#define BASE 0x7f0000000000ULL
#define FAKE_SIZE (64 * 1024)
#define FAKE_SEED 0x2200
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Fake process memory: FAKE_SIZE bytes at BASE, filled upwards. */
struct fake {
	uint8_t mem[FAKE_SIZE];
	size_t used;
	struct hotspot_syms syms;
};

static int fake_read(void *ctx, pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = ctx;

	(void)pid;
	if (addr < BASE || addr - BASE > FAKE_SIZE || len > FAKE_SIZE - (addr - BASE))
		return -EFAULT;
	memcpy(buf, f->mem + (addr - BASE), len);
	return 0;
}

/* Copies n bytes into the fake, 8-aligned; returns their address. */
static uint64_t put(struct fake *f, const void *p, size_t n)
{
	size_t at = (f->used + 7) & ~(size_t)7;

	assert_true(at + n <= FAKE_SIZE);
	memcpy(f->mem + at, p, n);
	f->used = at + n;
	return BASE + at;
}

static uint64_t put_str(struct fake *f, const char *s)
{
	return put(f, s, strlen(s) + 1);
}

/* Writes the 8-byte word v at address a of the fake. */
static void poke(struct fake *f, uint64_t a, uint64_t v)
{
	memcpy(f->mem + (a - BASE), &v, sizeof(v));
}

/* One fake table row: a field (offset or static address), a type's size, or a constant. */
struct fake_row {
	const char *type, *name;
	int is_static;
	uint64_t value;
};

/* JDK 17's values (from a live java-17-openjdk-amd64), the statics at made-up addresses. */
static const struct fake_row fields17[] = {
	{ "CodeCache", "_heaps", 1, BASE + 0x2000 }, { "CodeCache", "_low_bound", 1, BASE + 0x2008 },
	{ "CodeCache", "_high_bound", 1, BASE + 0x2010 },
	{ "Abstract_VM_Version", "_s_vm_release", 1, BASE + 0x2018 },
	{ "Abstract_VM_Version", "_vm_major_version", 1, BASE + 0x2020 },
	{ "GrowableArrayBase", "_len", 0, 0 }, { "GrowableArray<int>", "_data", 0, 8 },
	{ "CodeHeap", "_memory", 0, 8 }, { "CodeHeap", "_segmap", 0, 120 },
	{ "CodeHeap", "_log2_segment_size", 0, 256 }, { "HeapBlock::Header", "_length", 0, 0 },
	{ "HeapBlock::Header", "_used", 0, 8 }, { "VirtualSpace", "_low_boundary", 0, 0 },
	{ "VirtualSpace", "_high_boundary", 0, 8 }, { "VirtualSpace", "_low", 0, 16 },
	{ "VirtualSpace", "_high", 0, 24 }, { "CodeBlob", "_name", 0, 96 }, { "CodeBlob", "_size", 0, 12 },
	{ "CodeBlob", "_frame_size", 0, 28 }, { "CodeBlob", "_frame_complete_offset", 0, 20 },
	{ "CodeBlob", "_code_begin", 0, 32 }, { "CompiledMethod", "_method", 0, 112 },
	{ "CompiledMethod", "_scopes_data_begin", 0, 120 }, { "nmethod", "_compile_id", 0, 304 },
	{ "nmethod", "_scopes_pcs_offset", 0, 268 }, { "Method", "_constMethod", 0, 8 },
	{ "ConstMethod", "_constants", 0, 8 }, { "ConstMethod", "_code_size", 0, 32 },
	{ "ConstMethod", "_name_index", 0, 34 }, { "ConstMethod", "_signature_index", 0, 36 },
	{ "ConstantPool", "_pool_holder", 0, 24 }, { "ConstantPool", "_length", 0, 60 },
	{ "ConstantPool", "_source_file_name_index", 0, 54 },
	{ "Klass", "_name", 0, 24 }, { "Symbol", "_length", 0, 4 }, { "Symbol", "_body", 0, 6 },
	{ "PcDesc", "_pc_offset", 0, 0 }, { "PcDesc", "_scope_decode_offset", 0, 4 },
	{ "JavaThread", "_anchor", 0, 656 }, /* one row the reader does not look for */
};
static const struct fake_row types17[] = {
	{ "Method", NULL, 0, 88 }, { "ConstMethod", NULL, 0, 48 }, { "ConstantPool", NULL, 0, 72 },
	{ "HeapBlock", NULL, 0, 16 }, { "PcDesc", NULL, 0, 16 }, { "nmethod", NULL, 0, 352 },
	{ "Klass", NULL, 0, 208 },
};
static const struct fake_row ints17[] = {
	{ NULL, "oopSize", 0, 8 }, { NULL, "frame::interpreter_frame_sender_sp_offset", 0, (uint32_t)-1 },
	{ NULL, "frame::interpreter_frame_last_sp_offset", 0, (uint32_t)-2 },
	{ NULL, "frame::pc_return_offset", 0, 0 },
};
static const struct fake_row longs17[] = { { NULL, "markWord::age_bits", 0, 4 } };

/* How to damage the fake: a field left out, a stride, a field's static flag turned, a name
 * pointer that leads nowhere. */
struct damage {
	const char *drop;    /* "Type::_field" (or a constant's name) left out */
	uint64_t stride;     /* the struct table's stride word, 0: 48 */
	const char *flip;    /* "Type::_field" whose static flag is turned */
	bool dangling_name;  /* a field name points outside the fake */
};

/* Whether row r is the one named by "Type::_field" (or a constant's name). */
static bool row_is(const struct fake_row *r, const char *name)
{
	char buf[160];

	snprintf(buf, sizeof(buf), "%s%s%s", r->type ? r->type : "", r->type ? "::" : "", r->name);
	return name && !strcmp(buf, name);
}

/* Puts one table (n rows of one kind, stride bytes each, then the NULL entry) in the fake: the
 * names first, then the entries, contiguous. */
static uint64_t put_table(struct fake *f, const struct fake_row *rows, size_t n, int kind,
			  const struct damage *d)
{
	size_t stride = kind == 0 ? 48 : kind == 1 ? 40 : 16;
	static uint8_t tab[64 * 48];
	size_t len = 0;

	assert_true(n < 64);
	for (size_t i = 0; i <= n; i++) {
		const struct fake_row *r = &rows[i < n ? i : n - 1];
		uint8_t *e = tab + len;
		memset(e, 0, stride);
		if (i < n && row_is(r, d->drop))
			continue;
		len += stride;
		if (i >= n)
			continue; /* the NULL entry */
		uint64_t tn = put_str(f, r->type ? r->type : r->name), fname = 0;
		if (kind == 0)
			fname = d->dangling_name && i == 0 ? BASE + FAKE_SIZE + 64 : put_str(f, r->name);
		int st = r->is_static ^ (kind == 0 && row_is(r, d->flip));
		memcpy(e, &tn, 8);
		if (kind == 0)
			memcpy(e + 8, &fname, 8), memcpy(e + 24, &st, 4),
				memcpy(e + (r->is_static ? 40 : 32), &r->value, 8);
		else
			memcpy(e + (kind == 1 ? 32 : 8), &r->value, 8);
	}
	return put(f, tab, len);
}

/* Builds the fake: the exported words at the start, the four tables, the statics at 0x2000
 * (FAKE_SEED bytes in all: what the fuzzer's seed holds). */
static void build(struct fake *f, const struct damage *d)
{
	static const uint64_t layout[HS_NSYMS] = {
		[HS_STRUCT_FIELD_NAME] = 8, [HS_STRUCT_TYPE_STRING] = 16, [HS_STRUCT_IS_STATIC] = 24,
		[HS_STRUCT_OFFSET] = 32, [HS_STRUCT_ADDRESS] = 40, [HS_STRUCT_STRIDE] = 48,
		[HS_TYPE_SUPERCLASS] = 8, [HS_TYPE_IS_OOP] = 16, [HS_TYPE_IS_INTEGER] = 20,
		[HS_TYPE_IS_UNSIGNED] = 24, [HS_TYPE_SIZE] = 32, [HS_TYPE_STRIDE] = 40,
		[HS_INT_VALUE] = 8, [HS_INT_STRIDE] = 16, [HS_LONG_VALUE] = 8, [HS_LONG_STRIDE] = 16,
	};
	memset(f, 0, sizeof(*f));
	f->used = 8 * (HS_NSYMS + 1);
	for (size_t i = 0; i < HS_NSYMS; i++) {
		f->syms.addr[i] = 8 * (i + 1); /* ELF addresses; the bias is BASE */
		poke(f, BASE + f->syms.addr[i], layout[i]);
	}
	f->syms.found = HS_NSYMS;
	if (d->stride)
		poke(f, BASE + f->syms.addr[HS_STRUCT_STRIDE], d->stride);
	poke(f, BASE + f->syms.addr[HS_STRUCTS], put_table(f, fields17, N(fields17), 0, d));
	poke(f, BASE + f->syms.addr[HS_TYPES], put_table(f, types17, N(types17), 1, d));
	poke(f, BASE + f->syms.addr[HS_INTS], put_table(f, ints17, N(ints17), 2, d));
	poke(f, BASE + f->syms.addr[HS_LONGS], put_table(f, longs17, N(longs17), 3, d));
	assert_true(f->used <= 0x2000);
	poke(f, BASE + 0x2008, BASE + 0x10000000); /* the statics' values */
	poke(f, BASE + 0x2010, BASE + 0x18000000);
	poke(f, BASE + 0x2018, BASE + 0x2100);
	poke(f, BASE + 0x2020, 17);
	memcpy(f->mem + 0x2100, "17.0.99+1-fake", 15);
}

/* Reads the fake's tables (d: its damage, NULL none). */
static int read_fake(struct fake *f, const struct damage *d, struct hotspot_structs *hs)
{
	static const struct damage none;
	struct hotspot_mem mem = { fake_read, f };

	build(f, d ? d : &none);
	return hotspot_structs_read(hs, &f->syms, BASE, &mem, 1);
}

/* Writes the fake to DIR/NAME when $FIRN_HOTSPOT_SEEDS names DIR (the fuzzer's seeds). */
static void write_seed(const struct fake *f, const char *name)
{
	const char *dir = getenv("FIRN_HOTSPOT_SEEDS");
	char path[PATH_MAX];

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *out = fopen(path, "w");
	assert_non_null(out);
	assert_int_equal(fwrite(f->mem, 1, FAKE_SEED, out), FAKE_SEED);
	fclose(out);
}

/* The whole fake: every value as the table gives it, the derived frame slots, the counts. */
static void test_fake(void **state)
{
	static struct fake f;
	struct hotspot_structs hs;
	(void)state;
	assert_int_equal(read_fake(&f, NULL, &hs), 0);
	write_seed(&f, "seed-jdk17-fake");
	assert_string_equal(hs.reason, "");
	assert_int_equal(hs.jdk, 17);
	assert_string_equal(hs.release, "17.0.99+1-fake");
	assert_true(hs.codecache_heaps == BASE + 0x2000 && hs.codecache_low_bound == BASE + 0x2008);
	assert_int_equal(hs.codeheap_segmap, 120);
	assert_int_equal(hs.codeheap_log2_segment, 256);
	assert_int_equal(hs.heapblock_used, 8);
	assert_int_equal(hs.vspace_low_boundary, 0);
	assert_int_equal(hs.blob_name, 96);
	assert_int_equal(hs.blob_code_begin, 32);
	assert_int_equal(hs.blob_code_offset, 0);
	assert_int_equal(hs.nm_method, 112); /* from CompiledMethod */
	assert_int_equal(hs.nm_scopes_pcs_offset, 268);
	assert_int_equal(hs.method_const, 8);
	assert_int_equal(hs.cmethod_name_index, 34);
	assert_int_equal(hs.cmethod_signature_index, 36);
	assert_int_equal(hs.cpool_holder, 24);
	assert_int_equal(hs.cpool_length, 60);
	assert_int_equal(hs.iklass_methods, 0); /* optional, and not in the fake */
	assert_int_equal(hs.klass_name, 24);
	assert_int_equal(hs.symbol_body, 6);
	assert_int_equal(hs.size_cmethod, 48);
	assert_int_equal(hs.size_cpool, 72);
	assert_int_equal(hs.size_heapblock, 16);
	assert_int_equal(hs.frame_last_sp, -2);
	assert_int_equal(hs.frame_method, -3);
	assert_int_equal(hs.frame_bcp, -8);
	assert_int_equal(hs.nstructs, N(fields17));
	assert_int_equal(hs.ntypes, 7);
	assert_int_equal(hs.nints, 4);
	assert_int_equal(hs.nlongs, 1);
}

/* Damaged tables are refused, each with the reason a user would need. */
static void test_refused(void **state)
{
	static struct fake f;
	struct hotspot_structs hs;
	char name[160];
	(void)state;
	assert_int_equal(read_fake(&f, &(struct damage){ .drop = "Method::_constMethod" }, &hs), -EPROTO);
	assert_string_equal(hs.reason, "HotSpot's Method::_constMethod is missing");
	assert_int_equal(read_fake(&f, &(struct damage){ .drop = "CompiledMethod::_method" }, &hs), -EPROTO);
	assert_string_equal(hs.reason, "HotSpot's CompiledMethod::_method is missing");
	assert_int_equal(read_fake(&f, &(struct damage){ .drop = "CodeBlob::_code_begin" }, &hs), -EPROTO);
	assert_string_equal(hs.reason, "HotSpot's CodeBlob has neither _code_begin nor _code_offset");
	assert_int_equal(read_fake(&f, &(struct damage){ .drop = "oopSize" }, &hs), -EPROTO);
	assert_string_equal(hs.reason, "HotSpot's oopSize is missing");
	assert_int_equal(read_fake(&f, &(struct damage){ .stride = 4096 }, &hs), -EPROTO);
	assert_string_equal(hs.reason, "HotSpot's gHotSpotVMStructEntryArrayStride is implausible (4096)");
	assert_int_equal(read_fake(&f, &(struct damage){ .stride = 40 }, &hs), -EPROTO);
	assert_string_equal(hs.reason, "HotSpot's gHotSpotVMStructEntryAddressOffset lies outside its entry");
	assert_int_equal(read_fake(&f, &(struct damage){ .flip = "CodeCache::_heaps" }, &hs), -EPROTO);
	assert_string_equal(hs.reason, "HotSpot's CodeCache::_heaps is not static");
	assert_int_equal(read_fake(&f, &(struct damage){ .dangling_name = true }, &hs), -EFAULT);
	assert_non_null(strstr(hs.reason, "cannot read a name at 0x7f0000010040"));
	/* an incomplete set of symbols reads nothing */
	build(&f, &(struct damage){ 0 });
	f.syms.addr[HS_LONG_STRIDE] = 0, f.syms.found--;
	assert_int_equal(hotspot_structs_read(&hs, &f.syms, BASE, &(struct hotspot_mem){ fake_read, &f }, 1),
			 -EINVAL);
	assert_string_equal(hs.reason, "libjvm exports only 23 of HotSpot's 24 symbols");
	assert_string_equal(hotspot_structs_name(0, name, sizeof(name)), "CodeCache::_heaps");
	assert_null(hotspot_structs_name(hotspot_structs_count(), name, sizeof(name)));
}

/* The fake, and from loop_at on one 16-byte entry repeated without end. */
struct looping {
	struct fake *f;
	uint64_t loop_at;
};

static int looping_read(void *ctx, pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct looping *l = ctx;

	for (size_t i = 0; i < len; i++) { /* byte by byte: a page read may span loop_at */
		uint64_t a = addr + i;
		if (a >= l->loop_at)
			a = l->loop_at + (a - l->loop_at) % 16;
		if (fake_read(l->f, pid, a, (uint8_t *)buf + i, 1))
			return -EFAULT;
	}
	return 0;
}

/* A table that runs past the cap is refused, never read forever; a stride too small to hold
 * an entry is refused before any entry is read. */
static void test_no_end(void **state)
{
	static struct fake f;
	struct hotspot_structs hs;
	struct looping l = { &f, 0 };
	struct hotspot_mem mem = { looping_read, &l };
	uint8_t e[16];
	(void)state;
	build(&f, &(struct damage){ 0 });
	uint64_t name = put_str(&f, "oopSize"), v = 8;
	memcpy(e, &name, 8), memcpy(e + 8, &v, 8);
	l.loop_at = put(&f, e, 16);
	poke(&f, BASE + f.syms.addr[HS_INTS], l.loop_at);
	assert_int_equal(hotspot_structs_read(&hs, &f.syms, BASE, &mem, 1), -EPROTO);
	assert_string_equal(hs.reason, "HotSpot's gHotSpotVMIntConstants has no end within 16384 entries");
	poke(&f, BASE + f.syms.addr[HS_INT_STRIDE], 4);
	assert_int_equal(hotspot_structs_read(&hs, &f.syms, BASE, &mem, 1), -EPROTO);
	assert_string_equal(hs.reason, "HotSpot's gHotSpotVMIntConstantEntryArrayStride is implausible (4)");
}

/* Reads the symbols of the file at path: the reader's result (-ENOENT when it cannot open). */
static int syms_of(const char *path, struct hotspot_syms *s)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	int err = hotspot_syms_read_fd(s, fd);
	close(fd);
	return err;
}

/* The exported symbols of the fake libjvm (all 24; one missing is refused) and of the installed
 * libjvm.so files; a file that is no libjvm has none; a file that is not ELF is refused. */
static void test_syms(void **state)
{
	static const char *const jdks[] = { "java-17-openjdk-amd64", "temurin-25-jdk-amd64" };
	struct hotspot_syms s;
	char lib[PATH_MAX];
	(void)state;
	assert_int_equal(syms_of(built_fixture("libhsfake.so"), &s), 0);
	assert_int_equal(s.found, HS_NSYMS);
	assert_int_equal(syms_of(built_fixture("libhsfake-missing.so"), &s), -EPROTO);
	assert_int_equal(s.found, HS_NSYMS - 1);
	assert_int_equal(s.addr[HS_LONG_STRIDE], 0);
	for (size_t j = 0; j < 2; j++) {
		if (!jdk_libjvm(jdks[j], lib))
			continue;
		assert_int_equal(syms_of(lib, &s), 0);
		assert_int_equal(s.found, HS_NSYMS);
		for (size_t i = 0; i < HS_NSYMS; i++)
			assert_true(s.addr[i] > 0x1000);
	}
	assert_int_equal(syms_of("/proc/self/exe", &s), -ENOENT);
	assert_int_equal(s.found, 0);
	assert_int_equal(hotspot_syms_read_memory(&s, "not an ELF file", 15), -EINVAL);
	assert_string_equal(hotspot_syms_name(0), "gHotSpotVMStructs");
	assert_null(hotspot_syms_name(HS_NSYMS));
}

/* This process's memory (a test reading itself: process_vm_readv, as firn reads a JVM). */
static int self_read(void *ctx, pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	(void)ctx;
	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

/* The fake libjvm loaded here: its symbols' file addresses plus its load bias lead to its
 * tables as the loader relocated them — empty ones, so every table is read to its end (0
 * entries) and the first field needed is missing. No JDK or root needed. */
static void test_loaded_fake(void **state)
{
	struct hotspot_syms s;
	struct hotspot_structs hs;
	struct hotspot_mem mem = { self_read, NULL };
	struct link_map *lm;
	(void)state;
	void *h = dlopen(built_fixture("libhsfake.so"), RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	assert_int_equal(dlinfo(h, RTLD_DI_LINKMAP, &lm), 0);
	assert_int_equal(syms_of(built_fixture("libhsfake.so"), &s), 0);
	assert_int_equal(hotspot_structs_read(&hs, &s, lm->l_addr, &mem, getpid()), -EPROTO);
	assert_string_equal(hs.reason, "HotSpot's CodeCache::_heaps is missing");
	assert_int_equal(hs.nstructs + hs.ntypes + hs.nints + hs.nlongs, 0);
	assert_int_equal(hotspot_structs_read(&hs, &s, lm->l_addr + 0x10000000, &mem, getpid()), -EFAULT);
	assert_non_null(strstr(hs.reason, "cannot read gHotSpotVMStructs at 0x"));
	dlclose(h);
}

/* procmem_read, counted (ctx: struct counted). */
struct counted {
	int fd;
	unsigned reads;
};

static int counted_read(void *ctx, pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct counted *c = ctx;

	c->reads++;
	return procmem_read(&c->fd, pid, addr, buf, len);
}

/* The reads one more reading of pid's tables costs (JDK 17: ~2,000 entries and as many names;
 * read a page at a time, ~200). */
static unsigned reads_of(pid_t pid, const char *lib, const struct hotspot_syms *s)
{
	char path[64];
	struct hotspot_structs hs;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	struct counted c = { open(path, O_RDONLY | O_CLOEXEC), 0 };
	struct hotspot_mem mem = { counted_read, &c };
	assert_int_equal(hotspot_structs_read(&hs, s, load_bias(pid, lib), &mem, pid), 0);
	close(c.fd);
	return c.reads;
}

/* A live JVM of jdk (feature version want): its tables read through /proc/PID/mem, the fields
 * every JDK from 17 to 25 keeps where they are, the version, and its CodeCache followed. */
static void live_jdk(const char *jdk, int want)
{
	struct hotspot_syms s;
	struct hotspot_structs hs;
	char lib[PATH_MAX];

	if (geteuid() != 0 || !jdk_libjvm(jdk, lib))
		skip(); /* reading another process: root, as recordings; the JDK: where installed */
	int fd = open(lib, O_RDONLY | O_CLOEXEC);
	assert_int_equal(hotspot_syms_read_fd(&s, fd), 0);
	close(fd);
	pid_t pid = start_java(jdk);
	assert_true(pid > 0);
	int err = read_live(pid, lib, &s, &hs);
	unsigned reads = err ? 0 : reads_of(pid, lib, &s);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (err)
		print_message("%s: %s\n", jdk, hs.reason);
	assert_int_equal(err, 0);
	assert_int_equal(hs.jdk, want);
	assert_int_equal(strtol(hs.release, NULL, 10), want);
	assert_int_equal(hs.method_const, 8);  /* Method::_constMethod */
	assert_int_equal(hs.symbol_length, 4); /* Symbol::_length */
	assert_int_equal(hs.symbol_body, 6);   /* Symbol::_body */
	assert_int_equal(hs.klass_name, 24);   /* Klass::_name */
	assert_int_equal(hs.cmethod_constants, 8);
	assert_int_equal(hs.frame_method, -3);
	assert_int_equal(hs.frame_bcp, -8);
	assert_true(hs.nm_method > 0 && hs.nm_method < hs.size_nmethod);
	assert_true(hs.cpool_holder > 0 && hs.cpool_holder < hs.size_cpool);
	assert_true(hs.cmethod_name_index < hs.size_cmethod && hs.cmethod_signature_index < hs.size_cmethod);
	assert_true(hs.nstructs > 300 && hs.ntypes > 200 && hs.nints > 100 && hs.nlongs > 20);
	if (want >= 23) { /* CodeBlob's code as an offset, nmethod's kind, its immutable data */
		assert_true(hs.blob_code_offset > 0 && hs.blob_code_begin == 0);
		assert_int_equal(hs.blob_kind_nmethod, 1);
		assert_true(hs.nm_immutable_data > 0 && hs.nm_scopes_data_offset > 0);
		/* what hotspot_inline expands a compiled frame with: the metadata in mutable data */
		assert_true(hs.blob_mutable_data > 0 && hs.blob_mutable_data_size > 0 &&
			    hs.blob_relocation_size > 0 && hs.nm_immutable_size > 0);
	} else {
		assert_true(hs.blob_code_begin > 0 && hs.blob_code_offset == 0);
		assert_true(hs.nm_scopes_data_begin > 0);
		/* what hotspot_inline expands a compiled frame with: its metadata, its PcDescs' end */
		assert_true(hs.nm_metadata_offset > 0 && hs.nm_metadata_offset < hs.size_nmethod);
		assert_true(hs.nm_dependencies_offset > 0 &&
			    hs.nm_dependencies_offset < hs.size_nmethod);
	}
	print_message("%s: %s, %u fields, %u types, %u ints, %u longs; %u rows matched in %u reads\n",
		      jdk, hs.release, hs.nstructs, hs.ntypes, hs.nints, hs.nlongs, hs.matched, reads);
	assert_true(reads > 0 && reads < 500);
}

static void test_live_jdk17(void **state)
{
	(void)state;
	live_jdk("java-17-openjdk-amd64", 17);
}

static void test_live_temurin25(void **state)
{
	(void)state;
	live_jdk("temurin-25-jdk-amd64", 25);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fake),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_no_end),
		cmocka_unit_test(test_syms),
		cmocka_unit_test(test_loaded_fake),
		cmocka_unit_test(test_live_jdk17),
		cmocka_unit_test(test_live_temurin25),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
