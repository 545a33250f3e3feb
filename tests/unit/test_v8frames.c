/* Unit tests for lib/runtimes/v8frames: functions read from a fake process memory (a byte array behind
 * struct v8mem, laid out with node 20's constants): a compiled function (ScopeInfo name and
 * positions, a cons-string script name, its line from Script.line_ends), one named by a two-byte
 * string with the line from its source's newlines, an anonymous one; hostile memory (cyclic cons
 * strings, huge lengths, random words everywhere) never crashes nor reads outside the fake; long
 * script paths (758 bytes, as one string and as a cons string) kept whole, longer ones and long
 * names cut visibly (ending in "...", at a character's boundary); the
 * walker's values refused for a layout it cannot read, with the reason. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <linux/types.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../bpf/firn.h"
#include "proc/procmap.h"
#include "symfix.h"
#include "runtimes/v8frames.h"

#define BASE 0x10000000ULL
#define SIZE (1u << 20)

enum { T_FIXED = 130, T_ONE = 40, T_TWO = 32, T_CONS = 41, T_ODDBALL = 131 }; /* node 20's */

/* The layout the fake objects are built with (node20() or a fixture's constants). */
static struct v8consts L;

/* The fake process: SIZE bytes at BASE, a bump allocator, reads outside it fail (counted). */
struct fake {
	uint8_t *mem;
	uint64_t next;
	unsigned outside;
};

static int fake_read(void *ctx, pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = ctx;

	(void)pid;
	if (addr < BASE || addr - BASE > SIZE || len > SIZE - (addr - BASE)) {
		f->outside++;
		return -EFAULT;
	}
	memcpy(buf, f->mem + (addr - BASE), len);
	return 0;
}

/* node 20's constants (the ones the reader uses). */
static void node20(struct v8consts *c)
{
	memset(c, 0, sizeof(*c));
	c->heap_object_tag = 1, c->heap_object_tag_mask = 3, c->smi_tag = 0, c->smi_tag_mask = 1;
	c->smi_shift_size = 31;
	c->heap_object_map = 0, c->map_instance_type = 12, c->js_function_shared = 24;
	c->sfi_name_or_scope_info = 16, c->sfi_script_or_debug_info = 32, c->script_name = 16;
	c->script_source = 8, c->script_line_ends = 56, c->string_length = 12;
	c->seq_one_byte_chars = 16, c->seq_two_byte_chars = 16, c->cons_first = 16, c->cons_second = 24;
	c->thin_actual = 16, c->fixed_array_data = 16, c->fixed_array_length = 8;
	c->type_shared_function_info = 262, c->type_script = 167, c->type_scope_info = 261;
	c->type_js_function = 2066, c->type_bytecode_array = 191, c->first_nonstring_type = 128;
	c->string_encoding_mask = 8, c->one_byte_string_tag = 8, c->two_byte_string_tag = 0;
	c->string_representation_mask = 7, c->seq_string_tag = 0, c->cons_string_tag = 1;
	c->thin_string_tag = 5, c->scopeinfo_first_vars = 3, c->scopeinfo_ncontextlocals = 2;
	c->off_fp_marker = -8, c->off_fp_context = -8, c->off_fp_function = -16;
	c->off_fp_bytecode_array = -32, c->off_fp_bytecode_offset = -40;
}

static uint64_t smi(int64_t v)
{
	return (uint64_t)v << 32;
}

static void put64(struct fake *f, uint64_t addr, uint64_t v)
{
	memcpy(f->mem + (addr - BASE), &v, 8);
}

/* A new object of size bytes whose map says type: its tagged pointer. */
static uint64_t obj(struct fake *f, uint16_t type, size_t size)
{
	uint64_t map = f->next, o;

	f->next += 16;
	memcpy(f->mem + (map - BASE) + 12, &type, 2);
	o = f->next;
	f->next += (size + 7) & ~7ULL;
	put64(f, o, map + 1);
	return o + 1;
}

static uint64_t one_byte(struct fake *f, const char *s)
{
	uint32_t n = (uint32_t)strlen(s);
	uint64_t o = obj(f, T_ONE, 16 + n);

	memcpy(f->mem + (o - 1 - BASE) + 12, &n, 4);
	memcpy(f->mem + (o - 1 - BASE) + 16, s, n);
	return o;
}

static uint64_t two_byte(struct fake *f, const char *s)
{
	uint32_t n = (uint32_t)strlen(s);
	uint64_t o = obj(f, T_TWO, 16 + 2 * n);

	memcpy(f->mem + (o - 1 - BASE) + 12, &n, 4);
	for (uint32_t i = 0; i < n; i++)
		f->mem[o - 1 - BASE + 16 + 2 * i] = (uint8_t)s[i];
	return o;
}

static uint64_t cons(struct fake *f, uint64_t a, uint64_t b)
{
	uint64_t o = obj(f, T_CONS, 32);

	put64(f, o - 1 + L.cons_first, a);
	put64(f, o - 1 + L.cons_second, b);
	return o;
}

/* A script named name, with line_ends (n of them; NULL: undefined) or source src. */
static uint64_t script(struct fake *f, uint64_t name, const int *ends, int n, uint64_t src)
{
	uint64_t o = obj(f, (uint16_t)L.type_script, 64), arr = obj(f, T_ODDBALL, 16);

	if (ends) {
		arr = obj(f, T_FIXED, 16 + 8 * (size_t)n);
		put64(f, arr - 1 + 8, smi(n));
		for (int i = 0; i < n; i++)
			put64(f, arr - 1 + 16 + 8 * (uint64_t)i, smi(ends[i]));
	}
	put64(f, o - 1 + L.script_source, src);
	put64(f, o - 1 + L.script_name, name);
	put64(f, o - 1 + L.script_line_ends, arr);
	return o;
}

/* A ScopeInfo: no context locals, then name (0: the empty string), then the positions. */
static uint64_t scope(struct fake *f, uint64_t name, int start, int end)
{
	uint64_t o = obj(f, (uint16_t)L.type_scope_info, 8 + 16 * 8);

	put64(f, o - 1 + 8 + 2 * 8, smi(0));
	put64(f, o - 1 + 8 + 3 * 8, name ? name : one_byte(f, ""));
	put64(f, o - 1 + 8 + 4 * 8, smi(start));
	put64(f, o - 1 + 8 + 5 * 8, smi(end));
	return o;
}

static uint64_t sfi(struct fake *f, uint64_t nos, uint64_t scr)
{
	uint64_t o = obj(f, (uint16_t)L.type_shared_function_info, 56);

	put64(f, o - 1 + L.sfi_name_or_scope_info, nos);
	put64(f, o - 1 + L.sfi_script_or_debug_info, scr);
	return o;
}

static int setup(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));

	f->mem = calloc(1, SIZE);
	f->next = BASE + 64;
	node20(&L);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fake *f = *state;

	free(f->mem);
	free(f);
	return 0;
}

/* A compiled function: ScopeInfo name, cons-string script name, line from line_ends. */
static void test_compiled(void **state)
{
	struct fake *f = *state;
	struct v8mem mem = { fake_read, f };
	struct v8consts c;
	struct v8func out;
	static const int ends[] = { 10, 50, 99, 150, 400 };

	node20(&c);
	uint64_t name = one_byte(f, "firnAlpha");
	uint64_t file = cons(f, one_byte(f, "/srv/app/spl"), one_byte(f, "it.js"));
	uint64_t s = sfi(f, scope(f, name, 100, 140), script(f, file, ends, 5, 0));
	assert_int_equal(v8frames_read_func(&c, &mem, 1, s, &out), 0);
	assert_string_equal(out.name, "firnAlpha");
	assert_string_equal(out.script, "/srv/app/split.js");
	assert_int_equal(out.line, 4); /* position 100: after the third line end (99) */
	assert_int_equal(f->outside, 0);
}

/* A function named by a two-byte string (not compiled: no positions), and an anonymous one whose
 * line comes from its script's source (no line_ends yet). */
static void test_string_name_and_source_lines(void **state)
{
	struct fake *f = *state;
	struct v8mem mem = { fake_read, f };
	struct v8consts c;
	struct v8func out;

	node20(&c);
	uint64_t s = sfi(f, two_byte(f, "lazyOne"), script(f, one_byte(f, "a.js"), NULL, 0, 0));
	assert_int_equal(v8frames_read_func(&c, &mem, 1, s, &out), 0);
	assert_string_equal(out.name, "lazyOne");
	assert_string_equal(out.script, "a.js");
	assert_int_equal(out.line, 0);

	uint64_t src = one_byte(f, "// one\n// two\nsetTimeout(() => {\n  x();\n});\n");
	s = sfi(f, scope(f, 0, 25, 40), script(f, one_byte(f, "b.js"), NULL, 0, src));
	assert_int_equal(v8frames_read_func(&c, &mem, 1, s, &out), 0);
	assert_string_equal(out.name, ""); /* the runtime shows it as "(anonymous)" */
	assert_string_equal(out.script, "b.js");
	assert_int_equal(out.line, 3);
}

/* Not an SFI, or not a pointer: refused, nothing read outside the process. */
static void test_not_sfi(void **state)
{
	struct fake *f = *state;
	struct v8mem mem = { fake_read, f };
	struct v8consts c;
	struct v8func out;

	node20(&c);
	assert_int_equal(v8frames_read_func(&c, &mem, 1, one_byte(f, "x"), &out), -EINVAL);
	assert_int_equal(v8frames_read_func(&c, &mem, 1, smi(5), &out), -EFAULT);
	assert_int_equal(v8frames_read_func(&c, &mem, 1, 0x7fff00000001ULL, &out), -EFAULT);
	assert_int_equal(v8frames_read_func(&c, &mem, 1, 0, &out), -EFAULT);
}

/* Hostile objects: a cons string that is its own first half, a string claiming 2^30 characters,
 * a ScopeInfo claiming billions of context locals, a line_ends array of 2^31 entries. */
static void test_hostile_objects(void **state)
{
	struct fake *f = *state;
	struct v8mem mem = { fake_read, f };
	struct v8consts c;
	struct v8func out;
	static const int ends[] = { 5 };

	node20(&c);
	uint64_t loop = cons(f, 0, 0);
	put64(f, loop - 1 + 16, loop);
	put64(f, loop - 1 + 24, loop);
	uint64_t huge = one_byte(f, "abc");
	uint32_t big = 1u << 30;
	memcpy(f->mem + (huge - 1 - BASE) + 12, &big, 4);
	uint64_t si = scope(f, huge, 1, 2);
	put64(f, si - 1 + 8 + 2 * 8, smi(2000000000));
	uint64_t scr = script(f, loop, ends, 1, loop), arr;
	memcpy(&arr, f->mem + (scr - 1 + L.script_line_ends - BASE), 8);
	put64(f, arr - 1 + 8, smi(1LL << 31)); /* line_ends claims 2^31 entries */
	uint64_t s = sfi(f, si, scr);
	assert_int_equal(v8frames_read_func(&c, &mem, 1, s, &out), 0);
	assert_string_equal(out.script, ""); /* the cyclic name: given up */
	assert_int_equal(out.line, 0);       /* no line_ends taken, the cyclic source given up */
	s = sfi(f, huge, scr);
	assert_int_equal(v8frames_read_func(&c, &mem, 1, s, &out), 0);
	assert_true(strlen(out.name) < sizeof(out.name));
}

/* A string of n copies of ch. */
static uint64_t repeated(struct fake *f, char ch, size_t n)
{
	char *s = malloc(n + 1);

	assert_non_null(s);
	memset(s, ch, n);
	s[n] = 0;
	uint64_t o = one_byte(f, s);
	free(s);
	return o;
}

/* Whether s is valid UTF-8 (no sequence cut). */
static bool utf8_ok(const char *s)
{
	for (const uint8_t *p = (const uint8_t *)s; *p;) {
		int k = *p < 0x80 ? 0 : (*p & 0xe0) == 0xc0 ? 1 : (*p & 0xf0) == 0xe0 ? 2 : -1;
		if (k < 0)
			return false;
		for (p++; k--; p++)
			if ((*p & 0xc0) != 0x80)
				return false;
	}
	return true;
}

/* A node script under a path of 758 bytes keeps all of it (report --lines shows its file), as
 * one string and as a cons string whose first half alone filled the old room; a 5000-byte one
 * (past PATH_MAX) and a 300-character name of two-byte characters are cut visibly. */
static void test_long_names(void **state)
{
	struct fake *f = *state;
	struct v8mem mem = { fake_read, f };
	struct v8consts c;
	struct v8func out;
	static const int ends[] = { 10 };
	char want[800];

	node20(&c);
	memset(want, 'd', 600); /* "/ddd...d/sss...s.js" */
	want[0] = want[600] = '/';
	memset(want + 601, 's', 154);
	strcpy(want + 755, ".js");
	assert_int_equal(strlen(want), 758);
	uint64_t name = one_byte(f, "firnLong");
	uint64_t s = sfi(f, scope(f, name, 1, 5), script(f, one_byte(f, want), ends, 1, 0));
	assert_int_equal(v8frames_read_func(&c, &mem, 1, s, &out), 0);
	assert_string_equal(out.script, want);
	/* a cons string: 600 bytes, then the rest (the old 512-byte room lost all of it) */
	char *head = strndup(want, 600);
	assert_non_null(head);
	uint64_t file = cons(f, one_byte(f, head), one_byte(f, want + 600));
	free(head);
	s = sfi(f, scope(f, name, 1, 5), script(f, file, ends, 1, 0));
	assert_int_equal(v8frames_read_func(&c, &mem, 1, s, &out), 0);
	assert_string_equal(out.script, want);
	/* 5000 bytes: cut, ending in "..." */
	s = sfi(f, scope(f, name, 1, 5), script(f, cons(f, repeated(f, 'p', 4000), repeated(f, 'q', 1000)),
						 ends, 1, 0));
	assert_int_equal(v8frames_read_func(&c, &mem, 1, s, &out), 0);
	size_t n = strlen(out.script);
	assert_int_equal(n, sizeof(out.script) - 1);
	assert_string_equal(out.script + n - 3, V8FUNC_CUT);
	assert_int_equal(strspn(out.script, "p"), 4000);
	assert_int_equal(strspn(out.script + 4000, "q"), n - 3 - 4000);
	/* a name of 300 two-byte characters (U+00E9, two bytes each in UTF-8): cut at a boundary */
	uint32_t len = 300;
	uint64_t wide = obj(f, T_TWO, 16 + 2 * len);
	memcpy(f->mem + (wide - 1 - BASE) + 12, &len, 4);
	for (uint32_t i = 0; i < len; i++)
		f->mem[wide - 1 - BASE + 16 + 2 * i] = 0xe9;
	s = sfi(f, scope(f, wide, 1, 5), script(f, one_byte(f, "a.js"), ends, 1, 0));
	assert_int_equal(v8frames_read_func(&c, &mem, 1, s, &out), 0);
	n = strlen(out.name);
	assert_true(n > 240 && n < sizeof(out.name));
	assert_string_equal(out.name + n - 3, V8FUNC_CUT);
	assert_true(utf8_ok(out.name));
	assert_int_equal(memcmp(out.name, "\xc3\xa9\xc3\xa9", 4), 0);
	assert_int_equal(f->outside, 0);
}

/* Random words everywhere (many of them tagged pointers into the fake): any address read as an
 * SFI gives a result, never a crash or a read outside it. */
static void test_garbage(void **state)
{
	struct fake *f = *state;
	struct v8mem mem = { fake_read, f };
	struct v8consts c;
	struct v8func out;
	uint64_t x = 88172645463325252ULL;

	node20(&c);
	for (size_t i = 0; i < SIZE / 8; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint64_t w = x % 4 ? BASE + (x >> 20) % SIZE : x;
		if (x % 3 == 0)
			w = (w & ~7ULL) | 1;
		memcpy(f->mem + 8 * i, &w, 8);
	}
	for (int k = 0; k < 20000; k++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		int err = v8frames_read_func(&c, &mem, 1, ((BASE + x % SIZE) & ~7ULL) | 1, &out);
		assert_true(err == 0 || err == -EFAULT || err == -EINVAL);
		assert_true(strlen(out.name) < sizeof(out.name) && strlen(out.script) < sizeof(out.script));
	}
}

/* The walker's values: node 20's layout taken; pointer compression refused with the reason. */
static void test_proc_of(void **state)
{
	struct v8consts c;
	struct firn_v8_proc p;
	char why[200];

	(void)state;
	node20(&c);
	assert_int_equal(v8frames_proc_of(&c, &p, why, sizeof(why)), 0);
	assert_int_equal(p.fp_function, -16);
	assert_int_equal(p.smi_shift, 32);
	assert_int_equal(p.type_js_first, 2066);
	assert_int_equal(p.type_js_last, 2080);
	c.smi_shift_size = 0;
	assert_int_equal(v8frames_proc_of(&c, &p, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "pointer compression"));
	node20(&c);
	c.sfi_script_or_debug_info = 60;
	assert_int_equal(v8frames_proc_of(&c, &p, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "out of the walker's reach"));
}

/* What the runtime told the walker (the set callback). */
struct told {
	int calls;
	bool last_null;
	struct firn_v8_proc p;
};

static int told_set(void *ctx, pid_t pid, const struct firn_v8_proc *p)
{
	struct told *t = ctx;

	(void)pid;
	t->calls++;
	t->last_null = !p;
	if (p)
		t->p = *p;
	return 0;
}

static struct procmap fake_maps;

static const struct procmap *maps_of(void *ctx, pid_t pid)
{
	(void)ctx, (void)pid;
	return &fake_maps;
}

/* Copies src to dst (the fixture under a name the runtime takes for V8). */
static void copy_file(const char *src, const char *dst)
{
	char buf[65536];
	ssize_t n;
	int in = open(src, O_RDONLY), out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	close(in);
	close(out);
}

/* The whole user-space path: a process mapping a "libnode.so" (the v8fake fixture's constants)
 * is described to the walker; announced functions are read and resolve by id; one whose SFI no
 * longer holds the words the walker saw (moved by the GC) stays unnamed; an anonymous one is
 * "(anonymous)"; forgetting the process tells the walker. */
static void test_announce_resolve(void **state)
{
	struct fake *f = *state;
	struct v8mem mem = { fake_read, f };
	struct told t = { 0 };
	struct v8frames_stats st;
	struct resolved_frame out;
	char dir[] = "/tmp/firn-v8-XXXXXX", path[256];
	int fd;
	static const int ends[] = { 10, 99, 150 };
	const uint64_t bias = 53; /* the fake's BytecodeArray data offset (54) less the tag */

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/libnode.so.120", dir);
	copy_file(built_fixture("libv8fake.so"), path);
	assert_true((fd = open(path, O_RDONLY)) >= 0);
	assert_int_equal(v8consts_read_fd(&L, fd), 0);
	close(fd);
	procmap_init(&fake_maps);
	struct procmap_entry e = { .start = 0x400000, .end = 0x800000, .r = true, .x = true,
				   .kind = PROCMAP_FILE, .path = path, .inode = 77, .dev_major = 254 };
	assert_int_equal(procmap_add(&fake_maps, &e), 0);

	struct v8frames *v8 = v8frames_new(told_set, &t);
	assert_non_null(v8);
	v8frames_set_maps(v8, maps_of);
	v8frames_set_mem(v8, &mem);
	v8frames_add_process(v8, getpid(), false);
	assert_int_equal(t.calls, 1);
	assert_int_equal(t.p.text[0].start, 0x400000);
	assert_int_equal(t.p.text[1].end, 0);
	struct procmap_entry blob = e; /* V8's builtins mapped again from the file */
	blob.start = 0x7f0000000000, blob.end = 0x7f0000200000;
	v8frames_note_mapping(v8, getpid(), &blob);
	assert_int_equal(t.calls, 2);
	assert_int_equal(t.p.text[1].start, 0x7f0000000000);
	v8frames_note_mapping(v8, getpid(), &blob); /* known already */
	assert_int_equal(t.calls, 2);
	assert_int_equal(t.p.off_sfi_script, L.sfi_script_or_debug_info);
	v8frames_add_process(v8, getpid(), false); /* known: left as it is */
	assert_int_equal(t.calls, 2);

	uint64_t si = scope(f, one_byte(f, "handler"), 100, 120), scr = script(f, one_byte(f, "/app/s.js"), ends, 3, 0);
	uint64_t s1 = sfi(f, si, scr), s2 = sfi(f, scope(f, 0, 5, 9), scr);
	/* s1's bytecode and its source position table: offsets 0, 4, 9 at positions 5, 60, 120
	 * (lines 1, 2, 3), as V8 encodes them (zigzag VLQ deltas; 9 an expression) */
	static const uint8_t spt[] = { 0x00, 0x18, 0x08, 0xdc, 0x01, 0x0b, 0xf0, 0x01 };
	uint64_t bca = obj(f, (uint16_t)L.type_bytecode_array, 64);
	uint64_t ba = obj(f, (uint16_t)L.type_byte_array, 16 + sizeof(spt));
	put64(f, ba - 1 + L.fixed_array_length, smi(sizeof(spt)));
	memcpy(f->mem + (ba - 1 + L.fixed_array_data - BASE), spt, sizeof(spt));
	put64(f, bca - 1 + L.fixed_array_length + 24, ba);
	put64(f, s1 - 1 + L.sfi_function_data, bca);
	struct firn_v8_func_event ev = { FIRN_EV_V8_FUNC, (__u32)getpid(), s1, 7, si, scr };
	assert_int_equal(v8frames_func_event(v8, &ev), 0);
	ev = (struct firn_v8_func_event){ FIRN_EV_V8_FUNC, (__u32)getpid(), s1, 8, si + 8, scr };
	assert_int_equal(v8frames_func_event(v8, &ev), 0); /* stale: the words differ */
	uint64_t nos2;
	memcpy(&nos2, f->mem + (s2 - 1 + L.sfi_name_or_scope_info - BASE), 8);
	ev = (struct firn_v8_func_event){ FIRN_EV_V8_FUNC, (__u32)getpid(), s2, 9, nos2, scr };
	assert_int_equal(v8frames_func_event(v8, &ev), 0);

	uint64_t v = FIRN_FRAME(FIRN_FRAME_KIND_V8, FIRN_V8_PAYLOAD(7, FIRN_V8_OPTIMIZED, FIRN_V8_NO_OFFSET));
	assert_int_equal(v8frames_resolve(v8, getpid(), v, &out, 1), 1);
	assert_string_equal(out.name, "handler");
	assert_string_equal(out.file, "/app/s.js");
	assert_int_equal(out.line, 3);
	for (int k = 0; k < 4; k++) { /* interpreted: the line of the bytecode offset */
		static const uint32_t offs[] = { 0, 6, 9, 400 }, lines[] = { 1, 2, 3, 3 };
		v = FIRN_FRAME(FIRN_FRAME_KIND_V8, FIRN_V8_PAYLOAD(7, FIRN_V8_INTERPRETED, bias + offs[k]));
		assert_int_equal(v8frames_resolve(v8, getpid(), v, &out, 1), 1);
		assert_int_equal(out.line, lines[k]);
	}
	v = FIRN_FRAME(FIRN_FRAME_KIND_V8, FIRN_V8_PAYLOAD(8, FIRN_V8_OPTIMIZED, 0));
	assert_int_equal(v8frames_resolve(v8, getpid(), v, &out, 1), 0);
	v = FIRN_FRAME(FIRN_FRAME_KIND_V8, FIRN_V8_PAYLOAD(9, FIRN_V8_INTERPRETED, 12));
	assert_int_equal(v8frames_resolve(v8, getpid(), v, &out, 1), 1);
	assert_string_equal(out.name, "(anonymous)");
	assert_int_equal(out.line, 1);
	v = FIRN_FRAME(FIRN_FRAME_KIND_V8, FIRN_V8_PAYLOAD(99, FIRN_V8_INTERPRETED, 12));
	assert_int_equal(v8frames_resolve(v8, getpid(), v, &out, 1), 0); /* never announced */

	v8frames_get_stats(v8, &st);
	assert_int_equal(st.processes, 1);
	assert_int_equal(st.functions, 3);
	assert_int_equal(st.unreadable, 1);
	v8frames_forget(v8, getpid());
	assert_int_equal(t.calls, 3);
	assert_true(t.last_null);
	v = FIRN_FRAME(FIRN_FRAME_KIND_V8, FIRN_V8_PAYLOAD(7, FIRN_V8_OPTIMIZED, 0));
	assert_int_equal(v8frames_resolve(v8, getpid(), v, &out, 1), 1); /* names outlive the process */
	v8frames_free(v8);
	procmap_release(&fake_maps);
	unlink(path);
	rmdir(dir);
}

/* A process whose V8 constants are implausible (the badtag fixture as "libnode.so") is refused
 * with the reason, and counted once however often it is looked at: its exec told twice (the
 * held command), its first sample looking again. */
static void test_refused_once(void **state)
{
	struct told t = { 0 };
	struct v8frames_stats st;
	char dir[] = "/tmp/firn-v8-XXXXXX", path[256];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/libnode.so.99", dir);
	copy_file(built_fixture("libv8fake-badtag.so"), path);
	procmap_init(&fake_maps);
	struct procmap_entry e = { .start = 0x400000, .end = 0x800000, .r = true, .x = true,
				   .kind = PROCMAP_FILE, .path = path, .inode = 78, .dev_major = 254 };
	assert_int_equal(procmap_add(&fake_maps, &e), 0);
	struct v8frames *v8 = v8frames_new(told_set, &t);
	assert_non_null(v8);
	v8frames_set_maps(v8, maps_of);
	v8frames_add_process(v8, getpid(), true);
	v8frames_add_process(v8, getpid(), true); /* its exec told again */
	v8frames_add_process(v8, getpid(), false);
	v8frames_get_stats(v8, &st);
	assert_int_equal(t.calls, 0);
	assert_int_equal(st.processes, 0);
	assert_int_equal(st.refused, 1);
	assert_non_null(strstr(st.last_refusal, "v8dbg_HeapObjectTag has an implausible value"));
	v8frames_free(v8);
	procmap_release(&fake_maps);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_compiled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_string_name_and_source_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_sfi, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_objects, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_garbage, setup, teardown),
		cmocka_unit_test(test_proc_of),
		cmocka_unit_test_setup_teardown(test_announce_resolve, setup, teardown),
		cmocka_unit_test(test_refused_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
