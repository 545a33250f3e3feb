/* Unit tests for lib/runtimes/golabels: the offsets of the releases known (Go 1.19's map, Go
 * 1.27's slice), g's TLS offset (none: Go's slot; a TLS segment of g alone: below the thread
 * pointer), offsets from DWARF for other releases, and the refusals (older releases, "devel"
 * builds, TLS holding more than g); Go's build information found in a segment and refused when
 * cut, hostile or of the old pointer format; an executable's program headers (PT_TLS, writable
 * segments) and files that are not x86-64 ELF; the walker's announcements read back and
 * refused (size, type, id, pairs, lengths); the runtime's sets by id, as the capture asks. */
#include <elf.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "runtimes/golabels.h"
#include "runtimes/goruntime.h"

/* Releases known get their layout; others, and builds with more TLS than g, a reason. */
static void test_offsets(void **state)
{
	const struct golabels_exe *none = &(struct golabels_exe){ 0 };
	struct golabels_exe cgo = { .tls = true, .tls_memsz = 8, .tls_align = 8 };
	struct firn_go_proc p;
	const char *why = NULL;

	(void)state;
	assert_int_equal(golabels_offsets("go1.19.8", none, NULL, &p, &why), 0);
	assert_int_equal(p.layout, FIRN_GO_HMAP);
	assert_int_equal(p.g_labels, 360);
	assert_int_equal(p.m_curg, 192);
	assert_int_equal(p.tls_off, -8);
	assert_int_equal(golabels_offsets("go1.27.3", none, NULL, &p, &why), 0);
	assert_int_equal(p.layout, FIRN_GO_SLICE);
	assert_int_equal(p.g_labels, 352);
	assert_int_equal(p.m_curg, 184);
	assert_int_equal(golabels_offsets("go1.27", none, NULL, &p, &why), 0);
	assert_int_equal(golabels_offsets("go1.27.3 X:greenteagc", none, NULL, &p, &why), 0);
	assert_int_equal(golabels_offsets("go1.22.1", none, NULL, &p, &why), -ENOTSUP);
	assert_string_equal(why, "an unknown Go release");
	assert_int_equal(golabels_offsets("go1.190", none, NULL, &p, &why), -ENOTSUP);
	assert_int_equal(golabels_offsets("go1.19rc1", none, NULL, &p, &why), -ENOTSUP);
	assert_int_equal(golabels_offsets("devel go1.27-abc", none, NULL, &p, &why), -ENOTSUP);
	/* g alone: Go's linker made the segment */
	assert_int_equal(golabels_offsets("go1.19.8", &cgo, NULL, &p, &why), 0);
	assert_int_equal(p.tls_off, -8);
	cgo.tls_align = 64;
	assert_int_equal(golabels_offsets("go1.19.8", &cgo, NULL, &p, &why), 0);
	assert_int_equal(p.tls_off, -64);
	cgo.tls_memsz = 24; /* the system linker's: C's thread variables beside g */
	assert_int_equal(golabels_offsets("go1.19.8", &cgo, NULL, &p, &why), -ENOTSUP);
	assert_string_equal(why, "a build whose TLS holds more than g (linked by the system linker)");
}

/* With DWARF's offsets a release without table row is read, its layout by release (the table
 * first where it has the release); releases before 1.19 and offsets past 4096 are refused. */
static void test_offsets_dwarf(void **state)
{
	const struct golabels_exe *none = &(struct golabels_exe){ 0 };
	struct godwarf dw = { .g_m = 48, .g_labels = 344, .m_curg = 192 };
	struct firn_go_proc p;
	const char *why = NULL;

	(void)state;
	assert_int_equal(golabels_offsets("go1.22.1", none, &dw, &p, &why), 0);
	assert_int_equal(p.layout, FIRN_GO_HMAP);
	assert_int_equal(p.g_labels, 344);
	assert_int_equal(p.hmap_b, 9);
	assert_int_equal(p.hmap_buckets, 16);
	assert_int_equal(golabels_offsets("go1.25.0", none, &dw, &p, &why), 0);
	assert_int_equal(p.layout, FIRN_GO_SLICE);
	assert_int_equal(p.tls_off, -8);
	dw.g_labels = 999;
	assert_int_equal(golabels_offsets("go1.19.8", none, &dw, &p, &why), 0);
	assert_int_equal(p.g_labels, 360); /* the table's, checked against 1.19's DWARF */
	assert_int_equal(golabels_offsets("go1.18.2", none, &dw, &p, &why), -ENOTSUP);
	dw.m_curg = 4096;
	assert_int_equal(golabels_offsets("go1.22.1", none, &dw, &p, &why), -ENOTSUP);
}

/* Build information at offset off of buf: magic, flags, the version's varint length. */
static size_t buildinfo(uint8_t *buf, size_t off, const char *ver, uint8_t flags)
{
	size_t n = strlen(ver);

	memcpy(buf + off, "\xff Go buildinf:", 14);
	buf[off + 14] = 8;
	buf[off + 15] = flags;
	buf[off + 32] = (uint8_t)n;
	memcpy(buf + off + 33, ver, n);
	return off + 33 + n;
}

/* The version is found at any 16-byte boundary; cut, old-format and hostile headers refused. */
static void test_buildinfo(void **state)
{
	uint8_t buf[512] = { 0 };
	char ver[16];
	size_t end;

	(void)state;
	assert_int_equal(golabels_buildinfo_version(buf, sizeof(buf), ver, sizeof(ver)), -ENOENT);
	end = buildinfo(buf, 48, "go1.27.3", 2);
	assert_int_equal(golabels_buildinfo_version(buf, sizeof(buf), ver, sizeof(ver)), 0);
	assert_string_equal(ver, "go1.27.3");
	assert_int_equal(golabels_buildinfo_version(buf, end - 1, ver, sizeof(ver)), -EINVAL);
	assert_int_equal(golabels_buildinfo_version(buf, sizeof(buf), ver, 8), -EINVAL);
	buf[48 + 32] = 0x80; /* a varint that never ends */
	memset(buf + 48 + 33, 0x80, sizeof(buf) - 48 - 33);
	assert_int_equal(golabels_buildinfo_version(buf, sizeof(buf), ver, sizeof(ver)), -EINVAL);
	memset(buf, 0, sizeof(buf));
	buildinfo(buf, 48, "go1.17.1", 0); /* Go 1.17: pointers, not strings */
	assert_int_equal(golabels_buildinfo_version(buf, sizeof(buf), ver, sizeof(ver)), -ENOENT);
	memset(buf, 0, sizeof(buf));
	buildinfo(buf, 40, "go1.27.3", 2); /* not 16-byte aligned: not Go's */
	assert_int_equal(golabels_buildinfo_version(buf, sizeof(buf), ver, sizeof(ver)), -ENOENT);
}

/* An ELF header and n program headers of the given types and flags at 64. */
static size_t elf(uint8_t *buf, const uint32_t *types, const uint32_t *flags, unsigned n)
{
	Elf64_Ehdr eh = { .e_type = ET_EXEC, .e_machine = EM_X86_64, .e_phoff = 64,
			  .e_phentsize = sizeof(Elf64_Phdr), .e_phnum = (uint16_t)n };

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	memcpy(buf, &eh, sizeof(eh));
	for (unsigned i = 0; i < n; i++) {
		Elf64_Phdr ph = { .p_type = types[i], .p_flags = flags[i], .p_offset = 0x1000 * i,
				  .p_filesz = 0x100 };
		memcpy(buf + 64 + i * sizeof(ph), &ph, sizeof(ph));
	}
	return 64 + n * sizeof(Elf64_Phdr);
}

/* Writable segments and PT_TLS are found; truncated headers and other machines refused. */
static void test_exe(void **state)
{
	static const uint32_t types[] = { PT_LOAD, PT_LOAD, PT_TLS, PT_LOAD };
	static const uint32_t flags[] = { PF_R | PF_X, PF_R | PF_W, PF_R, PF_R | PF_W };
	uint8_t buf[1024] = { 0 };
	struct golabels_exe e;
	size_t n = elf(buf, types, flags, 4);

	(void)state;
	assert_int_equal(golabels_exe_parse(buf, n, &e), 0);
	assert_true(e.tls);
	assert_int_equal(e.nsegs, 2);
	assert_int_equal(e.seg_off[0], 0x1000);
	assert_int_equal(e.seg_off[1], 0x3000);
	assert_int_equal(golabels_exe_parse(buf, n - 1, &e), -ENOEXEC);
	assert_int_equal(golabels_exe_parse(buf, 10, &e), -ENOEXEC);
	n = elf(buf, types, flags, 2);
	assert_int_equal(golabels_exe_parse(buf, n, &e), 0);
	assert_false(e.tls);
	buf[18] = EM_AARCH64;
	assert_int_equal(golabels_exe_parse(buf, n, &e), -ENOEXEC);
}

/* An announcement of id with the pairs given ("k=v" strings). */
static void event(struct firn_go_event *e, uint32_t id, const char *const *kv, unsigned n)
{
	memset(e, 0, sizeof(*e));
	e->type = FIRN_EV_ANNOUNCE(FIRN_GO_TAG);
	e->pid = 42;
	e->id = id;
	e->n = n;
	for (unsigned i = 0; i < n; i++) {
		const char *eq = strchr(kv[i], '=');
		e->pairs[i].klen = (uint8_t)(eq - kv[i]);
		e->pairs[i].vlen = (uint8_t)strlen(eq + 1);
		memcpy(e->pairs[i].key, kv[i], e->pairs[i].klen);
		memcpy(e->pairs[i].value, eq + 1, e->pairs[i].vlen);
	}
}

/* The walker's records read back; wrong size, type, id, count or lengths refused. */
static void test_event(void **state)
{
	static const char *const kv[] = { "endpoint=a", "tier=web" };
	struct firn_go_event e;
	struct golabels_ctx c;

	(void)state;
	event(&e, 7, kv, 2);
	assert_int_equal(golabels_event_parse(&e, sizeof(e), &c), 0);
	assert_int_equal(c.id, 7);
	assert_int_equal(c.pid, 42);
	assert_int_equal(c.n, 2);
	assert_string_equal(c.key[0], "endpoint");
	assert_string_equal(c.value[0], "a");
	assert_string_equal(c.key[1], "tier");
	assert_string_equal(c.value[1], "web");
	assert_int_equal(golabels_event_parse(&e, sizeof(e) - 1, &c), -EINVAL);
	e.type = FIRN_EV_ANNOUNCE(FIRN_FRAME_KIND_PYTHON);
	assert_int_equal(golabels_event_parse(&e, sizeof(e), &c), -EINVAL);
	event(&e, 0, kv, 2);
	assert_int_equal(golabels_event_parse(&e, sizeof(e), &c), -EINVAL);
	event(&e, FIRN_GO_MAX_ID + 1, kv, 2);
	assert_int_equal(golabels_event_parse(&e, sizeof(e), &c), -EINVAL);
	event(&e, 1, kv, 2);
	e.n = FIRN_GO_PAIRS + 1;
	assert_int_equal(golabels_event_parse(&e, sizeof(e), &c), -EINVAL);
	event(&e, 1, kv, 2);
	e.pairs[1].vlen = FIRN_GO_STR + 1;
	assert_int_equal(golabels_event_parse(&e, sizeof(e), &c), -EINVAL);
}

/* The runtime keeps each announced set by id and names it; the walker's folded id is
 * go_labels=other; an id never announced, or a record not the walker's, names nothing. */
static void test_runtime_labels(void **state)
{
	static const char *const a[] = { "endpoint=a", "tier=web" }, *const b[] = { "endpoint=b" };
	const struct runtime_host h = { 0 };
	struct runtime *rt = runtime_go.new(&h);
	struct resolved_label l[4];
	struct firn_go_event e;

	(void)state;
	assert_non_null(rt);
	event(&e, 3, a, 2);
	assert_int_equal(runtime_go.on_code(rt, &e, sizeof(e)), 0);
	event(&e, 1000, b, 1);
	assert_int_equal(runtime_go.on_code(rt, &e, sizeof(e)), 0);
	assert_int_equal(runtime_go.on_code(rt, &e, 12), 0); /* not the walker's: ignored */
	assert_int_equal(runtime_go.labels(rt, 1, 3, l, 4), 2);
	assert_string_equal(l[0].key, "endpoint");
	assert_string_equal(l[0].value, "a");
	assert_string_equal(l[1].value, "web");
	assert_int_equal(runtime_go.labels(rt, 1, 3, l, 1), 1);
	assert_int_equal(runtime_go.labels(rt, 1, 1000, l, 4), 1);
	assert_string_equal(l[0].value, "b");
	assert_int_equal(runtime_go.labels(rt, 1, 4, l, 4), 0);
	assert_int_equal(runtime_go.labels(rt, 1, 5000, l, 4), 0);
	assert_int_equal(runtime_go.labels(rt, 1, FIRN_CTX_OTHER, l, 4), 1);
	assert_string_equal(l[0].key, "go_labels");
	assert_string_equal(l[0].value, "other");
	runtime_go.free(rt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_offsets),
		cmocka_unit_test(test_offsets_dwarf),
		cmocka_unit_test(test_buildinfo),
		cmocka_unit_test(test_exe),
		cmocka_unit_test(test_event),
		cmocka_unit_test(test_runtime_labels),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
