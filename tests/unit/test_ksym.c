/* Unit tests for lib/symbolize/ksym: the handwritten tests/fixtures/kallsyms.txt (core, modules, BPF,
 * unsorted lines, aliases), restricted and malformed files, the live /proc/kallsyms, the
 * kernel's own lookup (lib/symbolize/ksym_bpf) and its text parser, and that the two sources agree on
 * every kernel function (as root). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <bpf/libbpf.h>

#include "symbolize/ksym.h"
#include "symbolize/ksym_bpf.h"
#include "symfix.h"

/* Loads the fixture, asserting success. */
static void load_fixture(struct ksym *k)
{
	assert_int_equal(ksym_load(k, source_fixture("kallsyms.txt")), 0);
}

/* Asserts that addr resolves to name in module (NULL: core kernel). */
static void assert_sym(struct ksym *k, uint64_t addr, const char *name, const char *module)
{
	const char *n = NULL, *m = "unset";

	assert_int_equal(ksym_lookup(k, addr, &n, &m), 0);
	assert_string_equal(n, name);
	if (module)
		assert_string_equal(m, module);
	else
		assert_null(m);
}

static void test_core(void **state)
{
	struct ksym k;

	load_fixture(&k);
	assert_int_equal(k.nsyms, 9); /* text symbols only, one per address */
	/* of aliases, the first listed: the kernel lists its own lookup's choice first */
	assert_sym(&k, 0xffffffff81000000, "_text_alias", NULL);
	assert_sym(&k, 0xffffffff810000ff, "_text_alias", NULL);
	assert_sym(&k, 0xffffffff81000100, "core_alpha", NULL);
	assert_sym(&k, 0xffffffff81000180, "core_alpha", NULL);
	assert_sym(&k, 0xffffffff810002ff, "core_beta", NULL); /* the D symbol is not text */
	assert_sym(&k, 0xffffffff81000300, "core_weak", NULL);
	assert_sym(&k, 0xffffffff81000400, "_etext", NULL);
	assert_int_equal(k.core_start, 0xffffffff81000000);
	assert_int_equal(k.core_end, 0xffffffff81000401);
	ksym_release(&k);
}

static void test_edges(void **state)
{
	struct ksym k;

	load_fixture(&k);
	assert_int_equal(ksym_lookup(&k, 0xffffffff80ffffff, NULL, NULL), -ENOENT);
	assert_int_equal(ksym_lookup(&k, 0, NULL, NULL), -ENOENT);
	/* the last core symbol covers at most KSYM_LAST_SPAN bytes */
	assert_sym(&k, 0xffffffff81000400 + KSYM_LAST_SPAN - 1, "_etext", NULL);
	assert_int_equal(ksym_lookup(&k, 0xffffffff81000400 + KSYM_LAST_SPAN, NULL, NULL), -ENOENT);
	assert_int_equal(ksym_lookup(&k, 0xffffffff82000000, NULL, NULL), -ENOENT);
	assert_int_equal(ksym_lookup(&k, 0xffffffffc0003000 + KSYM_LAST_SPAN, NULL, NULL), -ENOENT);
	assert_int_equal(ksym_lookup(&k, UINT64_MAX, NULL, NULL), -ENOENT);
	ksym_release(&k);
}

static void test_modules(void **state)
{
	struct ksym k;

	load_fixture(&k);
	assert_sym(&k, 0xffffffffc0000800, "bar_only", "bar"); /* listed last, sorted first */
	assert_sym(&k, 0xffffffffc0000fff, "bar_only", "bar");
	assert_sym(&k, 0xffffffffc0001000, "mod_fn_one", "foo");
	assert_sym(&k, 0xffffffffc0001090, "mod_fn_two", "foo");
	assert_sym(&k, 0xffffffffc0001100, "mod_fn_two", "foo"); /* d mod_data is not text */
	assert_sym(&k, 0xffffffffc0003010, "bpf_prog_6deef7357e7b4530_handler", "bpf");
	assert_int_equal(k.nmodules, 3);
	for (size_t i = 0; i < k.nmodules; i++) {
		if (strcmp(k.modules[i].name, "foo"))
			continue;
		assert_int_equal(k.modules[i].start, 0xffffffffc0001000);
		assert_int_equal(k.modules[i].end, 0xffffffffc0001081);
	}
	ksym_release(&k);
}

/* Writes text to a fresh temporary file; returns its path (static buffer). */
static const char *temp_file(const char *text)
{
	static char path[] = "/tmp/firn-ksym-XXXXXX";

	strcpy(path, "/tmp/firn-ksym-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

/* Loads text from a temporary file; returns ksym_load's result. */
static int load_text(const char *text)
{
	struct ksym k;
	const char *path = temp_file(text);
	int err = ksym_load(&k, path);

	unlink(path);
	if (!err)
		ksym_release(&k);
	else
		assert_null(k.syms);
	return err;
}

static void test_errors(void **state)
{
	struct ksym k;

	assert_int_equal(load_text("0000000000000000 T _stext\n0000000000000000 t foo\t[m]\n"),
			 -EPERM);
	assert_int_equal(load_text("ffffffff81000000 D data_only\n"), -ENOENT);
	assert_int_equal(load_text(""), -ENOENT);
	assert_int_equal(load_text("ffffffff81000000T x\n"), -EINVAL);
	assert_int_equal(load_text("zz T x\n"), -EINVAL);
	assert_int_equal(load_text("ffffffff81000000 T\n"), -EINVAL);
	assert_int_equal(load_text("11112222333344445 T x\n"), -EINVAL);
	assert_int_equal(load_text("ffffffff81000000 T x\n\nffffffff81000010 T y"), 0);
	assert_int_equal(ksym_load(&k, "/nonexistent/kallsyms"), -ENOENT);
}

/* Finds name's address in /proc/kallsyms with stdio, independently of ksym; 0 if absent. */
static uint64_t proc_address_of(const char *name)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], sym[256], type;
	unsigned long long addr;
	uint64_t found = 0;

	while (f && !found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 && !strcmp(sym, name))
			found = addr;
	if (f)
		fclose(f);
	return found;
}

static void test_proc_kallsyms(void **state)
{
	struct timespec t0, t1;
	struct ksym k;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = ksym_load(&k, "/proc/kallsyms");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (err == -EPERM || err == -EACCES || err == -ENOENT)
		skip(); /* unprivileged, or no kallsyms */
	assert_int_equal(err, 0);
	double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
	print_message("loaded %zu kernel symbols in %.1f ms\n", k.nsyms, ms);
	assert_true(ms < 10000); /* loose: valgrind and busy machines */
	uint64_t addr = proc_address_of("schedule");
	assert_true(addr != 0);
	assert_sym(&k, addr, "schedule", NULL);
	assert_sym(&k, addr + 1, "schedule", NULL);
	ksym_release(&k);
}

/* Parses text (a copy) with ksym_bpf_parse; returns its result. */
static int parse(const char *text, struct ksym_bpf_hit *h, char *copy, size_t len)
{
	snprintf(copy, len, "%s", text);
	return ksym_bpf_parse(copy, h);
}

static void test_parse(void **state)
{
	struct ksym_bpf_hit h;
	char buf[128];

	assert_int_equal(parse("do_nanosleep+0x11/0x160", &h, buf, sizeof(buf)), 0);
	assert_string_equal(h.name, "do_nanosleep");
	assert_null(h.module);
	assert_int_equal(h.offset, 0x11);
	assert_int_equal(h.size, 0x160);
	assert_int_equal(parse("ext4_fn.cold+0x0/0x20 [ext4]", &h, buf, sizeof(buf)), 0);
	assert_string_equal(h.name, "ext4_fn.cold");
	assert_string_equal(h.module, "ext4");
	assert_int_equal(h.offset, 0);
	assert_int_equal(parse("a+b+0x1/0x2", &h, buf, sizeof(buf)), 0); /* the last '+' */
	assert_string_equal(h.name, "a+b");
	assert_int_equal(h.offset, 1);
	/* the kernel's text for an address outside every symbol, and what it never prints */
	assert_int_equal(parse("0xffffffffc0201011", &h, buf, sizeof(buf)), -ENOENT);
	assert_null(h.name);
	const char *bad[] = { "", "+0x1/0x2", "f+0x1", "f/0x2", "f+0x/0x2", "f+0xg/0x2",
			      "f+0x1/0x2 [", "f+0x1/0x2 []", "f+0x1/0x2[m]", "[m]",
			      "f+0x11112222333344445/0x2", "f+0x1/0x2 [m] x" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(bad[i], &h, buf, sizeof(buf)), -ENOENT);
		assert_null(h.name);
	}
}

/* The kernel's lookup, or a skip where it cannot load (no root, an older kernel). */
static void load_live(struct ksym *k)
{
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	int err = ksym_load(k, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (!err && !k->live)
		ksym_release(k);
	if (err || !k->live)
		skip(); /* the file's reader, tested above, is what ksym_load chose */
	print_message("kernel lookup loaded in %.1f ms\n",
		      (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
}

/* Whether a and b name the same function at addr (or both none), printing the first
 * differences (counted in *diffs). */
static bool same_at(struct ksym *a, struct ksym *b, uint64_t addr, size_t *diffs)
{
	const char *an = NULL, *am = NULL, *bn = NULL, *bm = NULL;
	uint64_t ao = 0, bo = 0;
	int ar = ksym_lookup_offset(a, addr, &an, &am, &ao);
	int br = ksym_lookup_offset(b, addr, &bn, &bm, &bo);

	bool same_module = am == bm || (am && bm && !strcmp(am, bm));

	if (ar == br && (ar || (!strcmp(an, bn) && ao == bo && same_module)))
		return true;
	if (diffs && (*diffs)++ < 20)
		print_message("%#llx: %d %s+%#llx [%s] but %d %s+%#llx [%s]\n",
			      (unsigned long long)addr, ar, an ? an : "-", (unsigned long long)ao,
			      am ? am : "", br, bn ? bn : "-", (unsigned long long)bo,
			      bm ? bm : "");
	return false;
}

/* Whether symbol i of a file is one the kernel's lookup does not name: the trampolines of ftrace
 * and kprobes (modules "__builtin__..."), which only kallsyms lists, and the marker that ends the
 * core kernel's text. */
static bool unnamed_by_kernel(const struct ksym *k, size_t i, uint64_t core_end)
{
	uint32_t m = k->syms[i].module;

	if (!m)
		return k->syms[i].addr >= core_end - 1; /* _einittext */
	return !strncmp(k->modules[m - 1].name, "__builtin__", 11);
}

/* Whether symbol i of a file is a BPF program's. */
static bool bpf_symbol(const struct ksym *k, size_t i)
{
	uint32_t m = k->syms[i].module;

	return m && !strcmp(k->modules[m - 1].name, "bpf");
}

/* Every text symbol of /proc/kallsyms (the core kernel, modules, the BPF programs loaded, the
 * lookup's own among them) at its start, start + 1, its middle and its last byte (a BPF
 * program: its first two): the kernel's
 * lookup names the same function at the same offset, in the same module. Other processes load
 * and unload BPF programs meanwhile: a difference at one counts when a second read of kallsyms,
 * after the lookups, still shows the program there. */
static void test_sources_agree(void **state)
{
	struct ksym live, file, again;
	size_t diffs = 0, n = 0, bpf = 0, nchurn = 0;
	uint64_t churn[256];

	load_live(&live);
	assert_int_equal(ksym_load(&file, "/proc/kallsyms"), 0);
	for (size_t i = 0; i < file.nsyms; i++) {
		uint64_t a = file.syms[i].addr;
		bool next = i + 1 < file.nsyms && file.syms[i + 1].module == file.syms[i].module;
		uint64_t end = next ? file.syms[i + 1].addr : a + 2;
		if (unnamed_by_kernel(&file, i, live.core_end) || end - a > KSYM_LAST_SPAN)
			continue; /* (a gap: _etext to the init text) */
		uint64_t at[] = { a, a + 1, a + (end - a) / 2, end - 1 };
		/* kallsyms does not say where a BPF program's code ends (the next one may start
		 * pages later), the kernel does: only its first bytes are surely inside */
		size_t npoints = bpf_symbol(&file, i) ? 2 : 4;
		for (size_t j = 0; j < npoints; j++)
			if (!same_at(&live, &file, at[j], bpf_symbol(&file, i) ? NULL : &diffs) &&
			    nchurn < 256)
				churn[nchurn++] = at[j];
		n++;
		bpf += bpf_symbol(&file, i);
	}
	assert_int_equal(ksym_load(&again, "/proc/kallsyms"), 0);
	for (size_t i = 0; i < nchurn; i++)
		if (same_at(&file, &again, churn[i], NULL))
			same_at(&live, &file, churn[i], &diffs);
	print_message("%zu symbols (%zu of BPF programs), %zu differences\n", n, bpf, diffs);
	assert_true(n > 1000);
	assert_true(bpf >= 2); /* at least the lookup's own two programs */
	assert_int_equal(diffs, 0);
	/* the module of BPF programs covers the functions named in it */
	for (size_t i = 0; i < live.nmodules; i++)
		if (!strcmp(live.modules[i].name, "bpf"))
			assert_true(live.modules[i].start < live.modules[i].end);
	assert_true(live.core_start == file.core_start);
	assert_true(live.core_end == file.core_end);
	ksym_release(&again);
	ksym_release(&file);
	ksym_release(&live);
}

/* Lookups in a batch, repeated and mixed with unnamed addresses, give what single ones give. */
static void test_prepare(void **state)
{
	struct ksym live;
	uint64_t addrs[600];
	const char *n1, *n2, *m1, *m2;

	load_live(&live);
	uint64_t base = proc_address_of("schedule");
	assert_true(base != 0);
	for (size_t i = 0; i < 600; i++)
		addrs[i] = i % 5 == 4 ? 0x1000 + i : base + (i % 300) * 64; /* repeats, unnamed */
	assert_int_equal(ksym_prepare(&live, addrs, 600), 0);
	assert_int_equal(live.runs, 2); /* 240 + 120 distinct addresses, 256 a run */
	assert_int_equal(ksym_prepare(&live, addrs, 600), 0);
	assert_int_equal(live.runs, 2); /* all known */
	struct ksym single;
	load_live(&single);
	for (size_t i = 0; i < 600; i++) {
		int r1 = ksym_lookup(&live, addrs[i], &n1, &m1);
		int r2 = ksym_lookup(&single, addrs[i], &n2, &m2);
		assert_int_equal(r1, r2);
		if (i % 5 == 4)
			assert_int_equal(r1, -ENOENT);
		else
			assert_string_equal(n1, n2);
	}
	assert_sym(&live, base, "schedule", NULL);
	assert_int_equal(live.runs, 2);      /* answered from the cache */
	assert_int_equal(single.runs, 360); /* one run an address */
	ksym_release(&single);
	ksym_release(&live);
}

/* Keeps only CAP_SYSLOG (kallsyms shows addresses, BPF programs do not load); 0 or -1. */
static int only_syslog(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = { { 0 }, { 0 } };

	data[CAP_SYSLOG / 32].effective = data[CAP_SYSLOG / 32].permitted = 1u << (CAP_SYSLOG % 32);
	return (int)syscall(SYS_capset, &hdr, data);
}

/* Where the kernel's lookup cannot load (a root child left with CAP_SYSLOG alone: no CAP_BPF),
 * ksym_load falls back to /proc/kallsyms, with the same names. */
static void test_fallback(void **state)
{
	uint64_t addr = proc_address_of("schedule");

	if (geteuid() != 0 || !addr)
		skip();
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct ksym k;
		const char *name = NULL;
		libbpf_set_print(NULL); /* the failed load is expected */
		if (only_syslog())
			_exit(3);
		int err = ksym_load(&k, NULL);
		_exit(err ? 2 : k.live ? 1 : ksym_lookup(&k, addr + 1, &name, NULL) ? 4 :
		      strcmp(name, "schedule") ? 5 : 0);
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_core),
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_modules),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_proc_kallsyms),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_sources_agree),
		cmocka_unit_test(test_prepare),
		cmocka_unit_test(test_fallback),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
