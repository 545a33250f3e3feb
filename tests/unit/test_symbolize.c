/* Unit tests for lib/symbolize/symbolize: our own functions and libc through our own pid, processes that
 * exited before symbolization, deleted binaries, the vDSO, unresolved addresses, kernel addresses
 * from the kallsyms fixture, the per-profile caches and the stats. */
#include <dlfcn.h>
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "elf/elfsym.h"
#include "symbolize/intern.h"
#include "proc/procmap.h"
#include "symbolize/symbolize.h"
#include "symfix.h"

/* Functions of this test whose addresses we symbolize. */
__attribute__((noinline)) int symbolize_test_one(int x)
{
	return x * 5 + 2;
}

__attribute__((noinline)) int symbolize_test_two(int x)
{
	return symbolize_test_one(x) * 3;
}

/* Writable data of this binary (its mapping is not executable). */
int test_data[1024] = { 1 };

/* Name of the (outermost) function of location id, or NULL when it has no lines. */
static const char *loc_name(const struct profile *p, int64_t id)
{
	assert_true(id > 0 && (uint64_t)id <= p->nlocations);
	const struct profile_location *l = &p->locations[id - 1];
	if (!l->nlines)
		return NULL;
	return profile_str(p, p->functions[l->lines[l->nlines - 1].function_id - 1].name);
}

/* The mapping of location id. */
static const struct profile_mapping *loc_mapping(const struct profile *p, int64_t id)
{
	const struct profile_location *l = &p->locations[id - 1];

	assert_true(l->mapping_id > 0 && l->mapping_id <= p->nmappings);
	return &p->mappings[l->mapping_id - 1];
}

/* The ELF virtual address that runtime address addr of this process runs (0 when none). */
static uint64_t self_vaddr(uint64_t addr)
{
	struct procmap m;
	struct elfsym e;
	uint64_t vaddr = 0;

	assert_int_equal(procmap_read(&m, getpid()), 0);
	const struct procmap_entry *pe = procmap_find(&m, addr);
	assert_non_null(pe);
	assert_int_equal(elfsym_init_path(&e, pe->path), 0);
	assert_int_equal(elfsym_file_offset_to_vaddr(&e, addr - pe->start + pe->offset, &vaddr), 0);
	elfsym_release(&e);
	procmap_release(&m);
	return vaddr;
}

/* Whether s ends with suffix. */
static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* Asserts the stats are exactly these (no_jit_symbol: 0). */
static void assert_stats(const struct intern *in, uint64_t resolved, uint64_t no_process,
			 uint64_t no_mapping, uint64_t no_symbol, uint64_t no_file)
{
	struct intern_stats st;

	intern_stats(in, &st);
	assert_int_equal(st.resolved, resolved);
	assert_int_equal(st.no_process, no_process);
	assert_int_equal(st.no_mapping, no_mapping);
	assert_int_equal(st.no_symbol, no_symbol);
	assert_int_equal(st.no_file, no_file);
	assert_int_equal(st.no_jit_symbol, 0);
}

static void test_self(void **state)
{
	struct symbolizer *s = symbolizer_new();
	struct intern in;
	struct profile p;
	struct elfsym e;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	pid_t pid = getpid();

	assert_true(n > 0);
	exe[n] = 0;
	assert_non_null(s);
	intern_init(&in);
	assert_int_equal(profile_init(&p), 0);
	assert_false(symbolizer_has_process(s, pid));
	assert_int_equal(symbolizer_add_process(s, pid), 0);
	assert_true(symbolizer_has_process(s, pid));
	uint64_t addr = (uintptr_t)symbolize_test_two + 5;
	int64_t id = intern_user(&in, s, &p, pid, addr, false);
	assert_string_equal(loc_name(&p, id), "symbolize_test_two");
	/* locations and mappings have the file's own addresses (shared by its processes) */
	uint64_t vaddr = self_vaddr(addr);
	assert_int_equal(p.locations[id - 1].address, vaddr);
	assert_int_equal(p.locations[id - 1].kind, FRAME_USER);
	const struct profile_mapping *m = loc_mapping(&p, id);
	assert_string_equal(profile_str(&p, m->filename), exe);
	assert_true(m->has_functions);
	assert_true(m->start <= vaddr && vaddr < m->limit);
	assert_int_equal(elfsym_init_path(&e, exe), 0);
	assert_string_equal(profile_str(&p, m->build_id), e.build_id);
	elfsym_release(&e);
	assert_int_equal(intern_user(&in, s, &p, pid, addr, false), id);
	assert_int_equal(p.nlocations, 1);
	void *libc_getpid = dlsym(RTLD_DEFAULT, "getpid");
	id = intern_user(&in, s, &p, pid, (uintptr_t)libc_getpid, false);
	const char *name = loc_name(&p, id); /* whichever alias libc's symbols or DWARF name */
	assert_true(name && ends_with(name, "getpid"));
	assert_true(ends_with(profile_str(&p, loc_mapping(&p, id)->filename), "/libc.so.6"));
	assert_stats(&in, 3, 0, 0, 0, 0);
	assert_int_equal(symbolize_test_two(1), 21);
	profile_release(&p);
	intern_release(&in);
	symbolizer_free(s);
}

/* Without a profile: where an address is (a cache key, the file's own address, the mapping's
 * path, build id and range), then its frames; an unknown process and a kernel address too. */
static void test_find_resolve(void **state)
{
	struct symbolizer *s = symbolizer_new();
	struct symbolizer_loc l, o;
	struct elfsym e;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	pid_t pid = getpid();
	uint64_t addr = (uintptr_t)symbolize_test_two + 5;

	assert_true(n > 0);
	exe[n] = 0;
	assert_int_equal(symbolizer_add_process(s, pid), 0);
	assert_int_equal(symbolizer_user_find(s, pid, addr, false, &l), 0);
	assert_true(l.key != SYMBOLIZER_KEY_UNKNOWN);
	assert_int_equal(l.map.key, l.key);
	assert_int_equal(l.addr, self_vaddr(addr));
	assert_string_equal(l.map.name, exe);
	assert_true(l.map.start <= l.addr && l.addr < l.map.limit);
	assert_int_equal(elfsym_init_path(&e, exe), 0);
	assert_string_equal(l.map.build_id, e.build_id);
	elfsym_release(&e);
	assert_int_equal(symbolizer_resolve(s, &l), 0);
	assert_int_equal(l.reason, SYMBOLIZER_RESOLVED);
	assert_true(l.n >= 1);
	assert_string_equal(l.frames[l.n - 1].name, "symbolize_test_two");
	assert_int_equal(symbolizer_user_find(s, pid, (uintptr_t)symbolize_test_one, true, &o), 0);
	assert_int_equal(o.key, l.key); /* the same mapping, the same key */
	assert_int_equal(o.flags, 1);
	/* an unknown process: no frames, the reason in the flags of the "[unknown]" key */
	assert_int_equal(symbolizer_user_find(s, 0x7ffffff0, addr, false, &o), 0);
	assert_int_equal(o.key, SYMBOLIZER_KEY_UNKNOWN);
	assert_int_equal(o.flags, SYMBOLIZER_NO_PROCESS);
	assert_string_equal(o.map.name, "[unknown]");
	assert_int_equal(symbolizer_resolve(s, &o), 0);
	assert_int_equal(o.n, 0);
	assert_int_equal(o.reason, SYMBOLIZER_NO_PROCESS);
	/* a kernel address: its mapping comes with its frame; new kallsyms, a new cache key and
	 * the names given out before are said to be gone */
	assert_int_equal(symbolizer_set_kallsyms(s, source_fixture("kallsyms.txt")), 0);
	assert_int_equal(symbolizer_kernel_find(s, 0xffffffff81000104, false, &o), 0);
	assert_int_equal(o.map.key, 0);
	uint32_t kkey = o.key;
	assert_int_equal(symbolizer_resolve(s, &o), 0);
	assert_string_equal(o.map.name, "[kernel.kallsyms]");
	assert_int_equal(o.map.kind, FRAME_KERNEL);
	assert_int_equal(o.n, 1);
	assert_string_equal(o.frames[0].name, "core_alpha");
	uint64_t gen = symbolizer_names_gen(s);
	assert_int_equal(symbolizer_set_kallsyms(s, source_fixture("kallsyms.txt")), 0);
	assert_true(symbolizer_names_gen(s) != gen);
	assert_int_equal(symbolizer_kernel_find(s, 0xffffffff81000104, false, &o), 0);
	assert_true(o.key != kkey);
	symbolizer_free(s);
}

static void test_return_address(void **state)
{
	struct symbolizer *s = symbolizer_new();
	struct intern in;
	struct profile p;
	pid_t pid = getpid();
	uint64_t start = (uintptr_t)symbolize_test_two;

	intern_init(&in);
	assert_int_equal(profile_init(&p), 0);
	assert_int_equal(symbolizer_add_process(s, pid), 0);
	int64_t leaf = intern_user(&in, s, &p, pid, start, false);
	int64_t ret = intern_user(&in, s, &p, pid, start, true);
	assert_string_equal(loc_name(&p, leaf), "symbolize_test_two");
	assert_true(ret != leaf);
	/* the location keeps the address (not start - 1), as the file's own */
	assert_int_equal(p.locations[ret - 1].address, self_vaddr(start));
	const char *before = loc_name(&p, ret);                 /* looked up at start - 1 */
	assert_true(!before || strcmp(before, "symbolize_test_two"));
	int64_t inside = intern_user(&in, s, &p, pid, start + 1, true);
	assert_string_equal(loc_name(&p, inside), "symbolize_test_two");
	profile_release(&p);
	intern_release(&in);
	symbolizer_free(s);
}

/* Two processes of one binary, loaded at different addresses, share its mapping and
 * locations; a process removed and the next one symbolized keeps them shared. */
static void test_shared_across_processes(void **state)
{
	struct symbolizer *s = symbolizer_new();
	struct intern in;
	struct symfix_fn a[16], b[16];
	struct profile p;
	int na = 0, nb = 0;
	const char *fix = built_fixture("symfix-lib");

	intern_init(&in);
	assert_int_equal(profile_init(&p), 0);
	pid_t pa = symfix_run(fix, 1, a, &na), pb = symfix_run(fix, 1, b, &nb);
	assert_true(pa > 0 && pb > 0);
	assert_int_equal(na, nb);
	assert_int_equal(symbolizer_add_process(s, pa), 0);
	assert_int_equal(symbolizer_add_process(s, pb), 0);
	symfix_kill(pa);
	symfix_kill(pb);
	const struct symfix_fn *ga = symfix_find(a, na, "firn_fix_lib_gamma");
	const struct symfix_fn *gb = symfix_find(b, nb, "firn_fix_lib_gamma");
	assert_true(ga && gb && ga->runtime != gb->runtime); /* ASLR: other load addresses */
	int64_t la = intern_user(&in, s, &p, pa, ga->runtime, false);
	int64_t lb = intern_user(&in, s, &p, pb, gb->runtime, false);
	assert_true(la > 0);
	assert_int_equal(la, lb);
	assert_int_equal(p.locations[la - 1].address, ga->vaddr);
	assert_int_equal(symbolizer_remove_process(s, pa), 0);
	for (int i = 0; i < nb; i++)
		assert_true(intern_user(&in, s, &p, pb, b[i].runtime, false) > 0);
	/* a third process, after the first one's snapshot went: every address is known already */
	pid_t pc = symfix_run(fix, 1, a, &na);
	assert_true(pc > 0);
	assert_int_equal(symbolizer_add_process(s, pc), 0);
	symfix_kill(pc);
	uint64_t locs = p.nlocations, maps = p.nmappings;
	for (int i = 0; i < na; i++)
		assert_true(intern_user(&in, s, &p, pc, a[i].runtime, false) > 0);
	assert_int_equal(p.nlocations, locs);
	assert_int_equal(p.nmappings, maps);
	profile_release(&p);
	intern_release(&in);
	symbolizer_free(s);
}

/* Second snapshots: queued, due after SYMBOLIZER_RESNAP_NS, taken by refresh_due, dropped
 * with the process. */
static void test_second_snapshot(void **state)
{
	struct symbolizer *s = symbolizer_new();
	pid_t pid = getpid();
	uint64_t now = 1000000000ULL;

	assert_int_equal(symbolizer_add_process_later(s, pid, now), 0);
	assert_true(symbolizer_refresh_pending(s, pid));
	assert_false(symbolizer_has_process(s, pid));
	assert_int_equal(symbolizer_refresh_due(s, now), now + SYMBOLIZER_RESNAP_NS);
	assert_false(symbolizer_has_process(s, pid)); /* not yet due */
	assert_int_equal(symbolizer_refresh_due(s, now + SYMBOLIZER_RESNAP_NS), UINT64_MAX);
	assert_true(symbolizer_has_process(s, pid));
	assert_false(symbolizer_refresh_pending(s, pid));
	assert_int_equal(symbolizer_add_process_later(s, pid, now), 0);
	assert_int_equal(symbolizer_remove_process(s, pid), 0);
	assert_false(symbolizer_refresh_pending(s, pid)); /* gone with the process */
	assert_int_equal(symbolizer_refresh_due(s, UINT64_MAX - 1), UINT64_MAX);
	assert_false(symbolizer_has_process(s, pid));
	symbolizer_free(s);
}

/* Resolves addr of this process (a snapshot added for it and removed again): its innermost
 * function's name is symbolize_test_two's. */
static void resolve_self_once(struct symbolizer *s, uint64_t addr)
{
	struct symbolizer_loc l;

	assert_int_equal(symbolizer_add_process(s, getpid()), 0);
	assert_int_equal(symbolizer_user_find(s, getpid(), addr, false, &l), 0);
	assert_int_equal(symbolizer_resolve(s, &l), 0);
	assert_true(l.n >= 1);
	assert_string_equal(l.frames[l.n - 1].name, "symbolize_test_two");
	assert_int_equal(symbolizer_remove_process(s, getpid()), 0);
}

/* Files no process uses stay for 10 s at least: freed by the refresh 10 to 20 s after their
 * last use, not before; used again, they resolve as before. */
static void test_idle_files_freed(void **state)
{
	struct symbolizer *s = symbolizer_new();
	struct symbolizer_stats st;
	uint64_t t = 1000000000ULL, addr = (uintptr_t)symbolize_test_two + 5;

	(void)state;
	symbolizer_refresh_due(s, t); /* the first sweep */
	resolve_self_once(s, addr);
	symbolizer_stats(s, &st);
	assert_true(st.idle_files >= 1);
	assert_int_equal(st.idle_files, st.files);
	uint64_t idle = st.idle_files;
	symbolizer_refresh_due(s, t + 9000000000ULL);
	symbolizer_refresh_due(s, t + 10000000000ULL); /* idle since after the last sweep: kept */
	symbolizer_stats(s, &st);
	assert_int_equal(st.idle_files, idle);
	symbolizer_refresh_due(s, t + 20000000000ULL);
	symbolizer_stats(s, &st);
	assert_int_equal(st.idle_files, 0);
	assert_int_equal(st.files, 0);
	resolve_self_once(s, addr);
	symbolizer_free(s);
}

/* A snapshot taken now and installed later; maps_file tells file code from other memory. */
static void test_take_install(void **state)
{
	struct symbolizer *s = symbolizer_new();
	pid_t pid = getpid();
	int local = 0;

	struct symbolizer_snapshot *snap = symbolizer_take(s, pid);
	assert_non_null(snap);
	assert_false(symbolizer_has_process(s, pid)); /* not in use until installed */
	assert_false(symbolizer_maps_file(s, pid, (uintptr_t)symbolize_test_one));
	assert_int_equal(symbolizer_install(s, snap), 0);
	assert_true(symbolizer_has_process(s, pid));
	assert_true(symbolizer_maps_file(s, pid, (uintptr_t)symbolize_test_one));
	assert_false(symbolizer_maps_file(s, pid, (uintptr_t)&local)); /* the stack */
	assert_false(symbolizer_maps_file(s, pid, 8));                 /* nothing there */
	symbolizer_snapshot_free(s, symbolizer_take(s, pid));          /* taken, never installed */
	symbolizer_snapshot_free(s, NULL);
	assert_null(symbolizer_take(s, 999999999));
	symbolizer_free(s);
}

static void test_unresolved(void **state)
{
	struct symbolizer *s = symbolizer_new();
	struct intern in;
	struct profile p;
	pid_t pid = getpid();
	void *jit = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(jit != MAP_FAILED);
	intern_init(&in);
	assert_int_equal(profile_init(&p), 0);
	int64_t id = intern_user(&in, s, &p, pid, 0x401000, false);
	assert_null(loc_name(&p, id));
	assert_string_equal(profile_str(&p, loc_mapping(&p, id)->filename), "[unknown]");
	assert_stats(&in, 0, 1, 0, 0, 0);
	assert_int_equal(symbolizer_add_process(s, pid), 0);
	id = intern_user(&in, s, &p, pid, 0x10, false);
	assert_null(loc_name(&p, id));
	assert_string_equal(profile_str(&p, loc_mapping(&p, id)->filename), "[unknown]");
	id = intern_user(&in, s, &p, pid, (uintptr_t)jit + 16, false);
	assert_null(loc_name(&p, id));
	assert_string_equal(profile_str(&p, loc_mapping(&p, id)->filename), "[anon]");
	assert_int_equal(p.locations[id - 1].kind, FRAME_JIT);
	assert_false(loc_mapping(&p, id)->has_functions);
	/* data of this binary: its file is read (the build id is there), no function covers it */
	id = intern_user(&in, s, &p, pid, (uintptr_t)&test_data, false);
	assert_null(loc_name(&p, id));
	assert_int_equal(p.locations[id - 1].kind, FRAME_USER);
	assert_int_equal(strlen(profile_str(&p, loc_mapping(&p, id)->build_id)), 40);
	assert_int_equal(intern_user(&in, s, &p, pid, (uintptr_t)&test_data, false), id);
	struct intern_stats st;
	intern_stats(&in, &st);
	assert_int_equal(st.no_symbol, 2);
	assert_int_equal(st.no_jit_symbol, 1); /* the anonymous executable memory, no perf map */
	assert_int_equal(st.resolved + st.no_process + st.no_mapping + st.no_file, 2);
	munmap(jit, 4096);
	profile_release(&p);
	intern_release(&in);
	symbolizer_free(s);
}

/* Asserts that every function fns lists resolves to its name in pid's snapshot, as a leaf and
 * as a return address one byte in. */
static void assert_fixture_names(struct symbolizer *s, struct intern *in, struct profile *p,
				 pid_t pid, const struct symfix_fn *fns, int n)
{
	for (int i = 0; i < n; i++) {
		int64_t id = intern_user(in, s, p, pid, fns[i].runtime, false);
		assert_non_null(loc_name(p, id));
		assert_string_equal(loc_name(p, id), fns[i].name);
		id = intern_user(in, s, p, pid, fns[i].runtime + 1, true);
		assert_string_equal(loc_name(p, id), fns[i].name);
	}
}

static void test_exited_process(void **state)
{
	struct symbolizer *s = symbolizer_new();
	struct intern in;
	struct symfix_fn fns[16];
	struct profile p;
	int n = 0;
	pid_t pid = symfix_run(built_fixture("symfix-lib"), 1, fns, &n);

	assert_true(pid > 0);
	assert_int_equal(n, 5);
	/* the fixture prints the symbol table's preferred alias of the weak firn_fix_lib_delta;
	 * the DWARF of the library names the function as its source does */
	strcpy((char *)symfix_find(fns, n, "__firn_fix_lib_delta")->name, "firn_fix_lib_delta");
	assert_int_equal(symbolizer_add_process(s, pid), 0);
	symfix_kill(pid);
	assert_int_equal(symbolizer_add_process(s, pid), -ENOENT); /* gone: the snapshot stays */
	assert_true(symbolizer_has_process(s, pid));
	intern_init(&in);
	assert_int_equal(profile_init(&p), 0);
	assert_fixture_names(s, &in, &p, pid, fns, n);
	const struct symfix_fn *gamma = symfix_find(fns, n, "firn_fix_lib_gamma");
	assert_non_null(gamma);
	int64_t id = intern_user(&in, s, &p, pid, gamma->runtime, false);
	const struct profile_mapping *m = loc_mapping(&p, id);
	assert_true(ends_with(profile_str(&p, m->filename), "/libfirnfix.so"));
	assert_int_equal(p.locations[id - 1].address, gamma->vaddr); /* the library's own address */
	assert_true(m->start <= gamma->vaddr && gamma->vaddr < m->limit);
	assert_stats(&in, 2 * n + 1, 0, 0, 0, 0);
	assert_int_equal(symbolizer_remove_process(s, pid), 0);
	assert_false(symbolizer_has_process(s, pid));
	assert_int_equal(symbolizer_remove_process(s, pid), -ENOENT);
	profile_release(&p);
	intern_release(&in);
	symbolizer_free(s);
}

/* Copies the symfix fixture to a fresh executable file under /tmp; returns its path. */
static char *copy_fixture(void)
{
	static char path[64];
	char buf[65536];
	ssize_t r;

	strcpy(path, "/tmp/firn-symfix-XXXXXX");
	int out = mkstemp(path), in = open(built_fixture("symfix"), O_RDONLY);
	assert_true(out >= 0 && in >= 0);
	while ((r = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, r), r);
	close(in);
	assert_int_equal(fchmod(out, 0755), 0);
	close(out);
	return path;
}

static void test_deleted_binary(void **state)
{
	struct symbolizer *s = symbolizer_new();
	struct intern in;
	struct symfix_fn fns[16], fns2[16];
	struct profile p;
	int n = 0, n2 = 0;

	intern_init(&in);
	assert_int_equal(profile_init(&p), 0);
	/* deleted after the snapshot, before symbolization */
	char *path = copy_fixture();
	pid_t pid = symfix_run(path, 1, fns, &n);
	assert_true(pid > 0);
	assert_int_equal(symbolizer_add_process(s, pid), 0);
	assert_int_equal(unlink(path), 0);
	symfix_kill(pid);
	assert_fixture_names(s, &in, &p, pid, fns, n);
	int64_t id = intern_user(&in, s, &p, pid, fns[0].runtime, false);
	assert_string_equal(profile_str(&p, loc_mapping(&p, id)->filename), path);
	/* deleted before the snapshot: maps says "(deleted)", map_files still opens it */
	path = copy_fixture();
	pid_t pid2 = symfix_run(path, 1, fns2, &n2);
	assert_true(pid2 > 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symbolizer_add_process(s, pid2), 0);
	symfix_kill(pid2);
	assert_fixture_names(s, &in, &p, pid2, fns2, n2);
	id = intern_user(&in, s, &p, pid2, fns2[0].runtime, false);
	assert_string_equal(profile_str(&p, loc_mapping(&p, id)->filename), path);
	assert_stats(&in, 4 * n + 1 + 1, 0, 0, 0, 0);
	profile_release(&p);
	intern_release(&in);
	symbolizer_free(s);
}

/* Number of open file descriptors of this process. */
static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void test_repeat_snapshot(void **state)
{
	struct symbolizer *s = symbolizer_new();
	struct intern in;
	struct profile p;
	pid_t pid = getpid();
	uint64_t addr = (uintptr_t)symbolize_test_one;

	intern_init(&in);
	assert_int_equal(profile_init(&p), 0);
	assert_int_equal(symbolizer_add_process(s, pid), 0);
	int fds = count_fds();
	int64_t before = intern_user(&in, s, &p, pid, addr, false);
	for (int i = 0; i < 5; i++)
		assert_int_equal(symbolizer_add_process(s, pid), 0);
	assert_true(count_fds() <= fds); /* no file opened again (indexed ones are closed) */
	int64_t after = intern_user(&in, s, &p, pid, addr, false);
	assert_int_equal(after, before); /* a new snapshot of the same file: the same location */
	assert_string_equal(loc_name(&p, after), "symbolize_test_one");
	assert_int_equal(p.nmappings, 1);
	profile_release(&p);
	intern_release(&in);
	symbolizer_free(s);
}

/* Finds the vDSO symbol name's address with nm on a copy of the image; 0 when not found. */
static uint64_t nm_vdso_symbol(const void *image, size_t size, const char *name)
{
	char path[] = "/tmp/firn-vdso-XXXXXX", cmd[128], line[256], sym[128], type;
	unsigned long long value;
	uint64_t found = 0;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, image, size), (ssize_t)size);
	close(fd);
	snprintf(cmd, sizeof(cmd), "nm -D --defined-only %s", path);
	FILE *f = popen(cmd, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %127[^@\n]", &value, &type, sym) == 3 && !strcmp(sym, name))
			found = value; /* nm prints "NAME@@VERSION" */
	if (f)
		pclose(f);
	unlink(path);
	return found;
}

static void test_vdso(void **state)
{
	struct symbolizer *s;
	struct intern in;
	uint64_t base = getauxval(AT_SYSINFO_EHDR);
	struct profile p;
	struct procmap m;
	pid_t pid = getpid();

	if (!base)
		skip(); /* no vDSO (valgrind hides it) */
	assert_int_equal(procmap_read(&m, pid), 0);
	const struct procmap_entry *e = procmap_find(&m, base);
	assert_non_null(e);
	assert_int_equal(e->kind, PROCMAP_VDSO);
	uint64_t value = nm_vdso_symbol((void *)(uintptr_t)base, e->end - e->start,
					"__vdso_clock_gettime");
	assert_true(value != 0);
	assert_int_equal(profile_init(&p), 0);
	s = symbolizer_new();
	intern_init(&in);
	assert_int_equal(symbolizer_add_process(s, pid), 0);
	int64_t id = intern_user(&in, s, &p, pid, e->start + value + 1, false);
	assert_string_equal(loc_name(&p, id), "__vdso_clock_gettime");
	assert_string_equal(profile_str(&p, loc_mapping(&p, id)->filename), "[vdso]");
	assert_int_equal(loc_mapping(&p, id)->kind, FRAME_USER);
	procmap_release(&m);
	profile_release(&p);
	intern_release(&in);
	symbolizer_free(s);
}

static void test_kernel(void **state)
{
	struct symbolizer *s = symbolizer_new();
	struct intern in;
	struct profile p;

	intern_init(&in);
	assert_int_equal(profile_init(&p), 0);
	assert_int_equal(symbolizer_set_kallsyms(s, source_fixture("kallsyms.txt")), 0);
	int64_t id = intern_kernel(&in, s, &p, 0xffffffff81000104, false);
	assert_string_equal(loc_name(&p, id), "core_alpha");
	assert_string_equal(profile_str(&p, loc_mapping(&p, id)->filename), "[kernel.kallsyms]");
	assert_int_equal(p.locations[id - 1].kind, FRAME_KERNEL);
	assert_int_equal(p.locations[id - 1].address, 0xffffffff81000104);
	assert_int_equal(intern_kernel(&in, s, &p, 0xffffffff81000104, false), id);
	id = intern_kernel(&in, s, &p, 0xffffffffc0001090, false);
	assert_string_equal(loc_name(&p, id), "mod_fn_two");
	assert_string_equal(profile_str(&p, loc_mapping(&p, id)->filename), "[foo]");
	assert_int_equal(loc_mapping(&p, id)->start, 0xffffffffc0001000);
	assert_int_equal(p.locations[id - 1].kind, FRAME_KERNEL);
	id = intern_kernel(&in, s, &p, 0xffffffffc0003004, false);
	assert_string_equal(loc_name(&p, id), "bpf_prog_6deef7357e7b4530_handler");
	assert_string_equal(profile_str(&p, loc_mapping(&p, id)->filename), "[bpf]");
	id = intern_kernel(&in, s, &p, 0xffffffff80000000, false);
	assert_null(loc_name(&p, id));
	assert_string_equal(profile_str(&p, loc_mapping(&p, id)->filename), "[kernel.kallsyms]");
	assert_stats(&in, 4, 0, 0, 1, 0);
	assert_int_equal(symbolizer_set_kallsyms(s, "/nonexistent/kallsyms"), 0);
	id = intern_kernel(&in, s, &p, 0xffffffff81000104, false);
	assert_null(loc_name(&p, id));
	assert_int_equal(p.locations[id - 1].kind, FRAME_KERNEL);
	assert_stats(&in, 4, 0, 0, 1, 1);
	profile_release(&p);
	intern_release(&in);
	symbolizer_free(s);
}

static void test_profiles(void **state)
{
	struct symbolizer *s = symbolizer_new();
	struct intern in;
	struct profile p1, p2;
	pid_t pid = getpid();
	uint64_t addr = (uintptr_t)symbolize_test_one;

	intern_init(&in);
	assert_int_equal(profile_init(&p1), 0);
	assert_int_equal(profile_init(&p2), 0);
	assert_int_equal(profile_add_mapping(&p2, 1, 2, 0, "/other", ""), 1);
	assert_int_equal(symbolizer_set_kallsyms(s, source_fixture("kallsyms.txt")), 0);
	assert_int_equal(symbolizer_add_process(s, pid), 0);
	int64_t a = intern_user(&in, s, &p1, pid, addr, false);
	int64_t k = intern_kernel(&in, s, &p1, 0xffffffff81000200, false);
	assert_int_equal(p1.nlocations, 2);
	/* p1 re-initialized at the same address: nothing stale comes back */
	profile_release(&p1);
	assert_int_equal(profile_init(&p1), 0);
	a = intern_user(&in, s, &p1, pid, addr, false);
	k = intern_kernel(&in, s, &p1, 0xffffffff81000200, false);
	assert_string_equal(loc_name(&p1, a), "symbolize_test_one");
	assert_string_equal(loc_name(&p1, k), "core_beta");
	assert_int_equal(p1.nlocations, 2);
	assert_int_equal(p1.nmappings, 2);
	/* another profile gets its own entries */
	int64_t b = intern_user(&in, s, &p2, pid, addr, false);
	int64_t k2 = intern_kernel(&in, s, &p2, 0xffffffff81000200, false);
	assert_string_equal(loc_name(&p2, b), "symbolize_test_one");
	assert_string_equal(loc_name(&p2, k2), "core_beta");
	assert_true(p2.locations[b - 1].mapping_id >= 2);
	assert_int_equal(p2.nlocations, 2);
	profile_release(&p1);
	profile_release(&p2);
	intern_release(&in);
	symbolizer_free(s);
}

/* Line of the first line of tests/fixtures/NAME containing marker. */
static int64_t marker_line(const char *name, const char *marker)
{
	char line[512];
	int64_t n = 0;
	FILE *f = fopen(source_fixture(name), "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, marker))
			break;
	}
	fclose(f);
	return n;
}

/* Start of the ELF symbol name of the file at path (0 when absent). */
static uint64_t symbol_start(const char *path, const char *name)
{
	struct elfsym e;
	uint64_t start = 0;

	assert_int_equal(elfsym_init_path(&e, path), 0);
	for (size_t i = 0; i < e.nsyms; i++)
		if (!strcmp(elfsym_name(&e, &e.syms[i]), name))
			start = e.syms[i].start;
	elfsym_release(&e);
	return start;
}

/* The function of line i of location id. */
static const struct profile_function *line_fn(const struct profile *p, int64_t id, uint32_t i)
{
	const struct profile_location *l = &p->locations[id - 1];

	assert_true(i < l->nlines);
	return &p->functions[l->lines[i].function_id - 1];
}

static void test_inline_lines(void **state)
{
	const char *path = built_fixture("inlinefix");
	int64_t hot = marker_line("inlinefix.c", "HOT_LINE");
	int64_t call = marker_line("inlinefix.c", "CALL_LINE");
	uint64_t start = symbol_start(path, "outer_work");
	struct symbolizer_frame fr[8];
	struct symbolizer *s = symbolizer_new();
	struct intern in;
	struct symbolizer_file *sf = symbolizer_file(s, path);
	struct profile p;
	int found = 0;

	assert_true(start != 0);
	assert_non_null(sf);
	assert_ptr_equal(symbolizer_file(s, path), sf);
	intern_init(&in);
	assert_int_equal(profile_init(&p), 0);
	for (uint64_t a = start; a < start + 256 && !found; a++) {
		int64_t id = intern_file(&in, s, &p, path, a, false);
		const struct profile_location *l = &p.locations[id - 1];
		if (l->nlines != 2 || l->lines[0].line != hot)
			continue;
		found = 1;
		assert_string_equal(profile_str(&p, line_fn(&p, id, 0)->name), "mix_helper");
		assert_string_equal(profile_str(&p, line_fn(&p, id, 1)->name), "outer_work");
		assert_int_equal(l->lines[1].line, call);
		assert_true(ends_with(profile_str(&p, line_fn(&p, id, 0)->filename), "/inlinefix.c"));
		const struct profile_mapping *m = loc_mapping(&p, id);
		assert_string_equal(profile_str(&p, m->filename), path);
		assert_true(m->has_functions && m->has_filenames && m->has_line_numbers &&
			    m->has_inline_frames);
		assert_int_equal(symbolizer_file_frames(s, sf, a, false, fr, 8), 2);
		assert_string_equal(fr[0].name, "mix_helper");
		assert_int_equal(fr[0].line, hot);
		assert_string_equal(fr[1].name, "outer_work");
		assert_int_equal(fr[1].line, call);
		assert_int_equal(symbolizer_file_frames(s, sf, a, false, fr, 1), 1);
		assert_int_equal(intern_file(&in, s, &p, path, a, false), id);
	}
	assert_true(found);
	struct intern_stats st;
	intern_stats(&in, &st);
	assert_true(st.with_lines > 0 && st.with_lines <= st.resolved);
	errno = 0;
	assert_null(symbolizer_file(s, "/nonexistent"));
	assert_int_equal(errno, ENOENT);
	sf = symbolizer_file(s, source_fixture("kallsyms.txt")); /* not ELF */
	assert_non_null(sf);
	assert_int_equal(symbolizer_file_frames(s, sf, 0x1000, false, fr, 8), 0);
	profile_release(&p);
	intern_release(&in);
	symbolizer_free(s);
}

/* A Go binary built with -ldflags="-s -w" (no .symtab, no DWARF) is named from its pclntab:
 * main.dist inlined into main.sumDist is a location of two lines at their lines (the plain
 * build's symbol gives sumDist's address: the two builds lay out their code alike), and the
 * mapping says it has inline frames, files and lines. */
static void test_go_stripped(void **state)
{
	char path[PATH_MAX]; /* built_fixture's buffer is reused */
	struct symbolizer *s;
	struct intern in;
	struct profile p;
	uint64_t start;
	int found = 0;

	snprintf(path, sizeof(path), "%s", built_fixture("gowork-stripped"));
	if (access(path, F_OK)) {
		print_message("no Go fixtures (no go at build time)\n");
		skip();
	}
	start = symbol_start(built_fixture("gowork"), "main.sumDist");
	assert_true(start != 0);
	s = symbolizer_new();
	intern_init(&in);
	assert_int_equal(profile_init(&p), 0);
	for (uint64_t a = start; a < start + 128 && !found; a++) {
		int64_t id = intern_file(&in, s, &p, path, a, false);
		const struct profile_location *l = &p.locations[id - 1];
		if (l->nlines != 2)
			continue;
		found = 1;
		assert_string_equal(profile_str(&p, line_fn(&p, id, 0)->name), "main.dist");
		assert_string_equal(profile_str(&p, line_fn(&p, id, 1)->name), "main.sumDist");
		assert_int_equal(l->lines[0].line, marker_line("go/gowork.go", "return p.x*p.x"));
		assert_int_equal(l->lines[1].line, marker_line("go/gowork.go", "INLINE_CALL"));
		assert_true(ends_with(profile_str(&p, line_fn(&p, id, 0)->filename), "/gowork.go"));
		const struct profile_mapping *m = loc_mapping(&p, id);
		assert_true(m->has_functions && m->has_filenames && m->has_line_numbers &&
			    m->has_inline_frames);
	}
	assert_true(found);
	profile_release(&p);
	intern_release(&in);
	symbolizer_free(s);
}

static void test_demangle_option(void **state)
{
	const char *path = built_fixture("cxxfix");
	const char *raw = "_ZN7firnfix6shapes11AccumulatorIdE4spinEl";
	uint64_t spin = symbol_start(path, raw);
	struct symbolizer_opts o;
	struct profile p;

	assert_true(spin != 0);
	for (int demangle = 1; demangle >= 0; demangle--) {
		symbolizer_opts_init(&o);
		assert_true(o.demangle);
		o.demangle = demangle;
		struct symbolizer *s = symbolizer_new_opts(&o);
		struct intern in;
		intern_init(&in);
		assert_int_equal(profile_init(&p), 0);
		int64_t id = intern_file(&in, s, &p, path, spin + 2, false);
		const struct profile_function *f = line_fn(&p, id, p.locations[id - 1].nlines - 1);
		assert_string_equal(profile_str(&p, f->name),
				    demangle ? "firnfix::shapes::Accumulator<double>::spin(long)" : raw);
		assert_string_equal(profile_str(&p, f->system_name), raw);
		profile_release(&p);
		intern_release(&in);
		symbolizer_free(s);
	}
}

static void test_debug_dir(void **state)
{
	char dir[] = "/tmp/firn-symdbg-XXXXXX", cmd[2048], id[129];
	const char *fix = built_fixture("shortfix");
	uint64_t hot = symbol_start(fix, "short_hot");
	struct symbolizer_opts o;
	struct profile p;
	struct elfsym e;

	assert_non_null(mkdtemp(dir));
	assert_int_equal(elfsym_init_path(&e, fix), 0);
	strcpy(id, e.build_id);
	elfsym_release(&e);
	int n = snprintf(cmd, sizeof(cmd), "strip -s -o %s/prog %s && mkdir -p %s/.build-id/%.2s && "
			 "objcopy --only-keep-debug %s %s/.build-id/%.2s/%s.debug", dir, fix, dir, id,
			 fix, dir, id, id + 2);
	assert_true(n > 0 && (size_t)n < sizeof(cmd));
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/prog", dir);
	for (int with = 0; with < 2; with++) {
		symbolizer_opts_init(&o);
		o.debug_dir = with ? dir : "/nonexistent";
		o.debuginfod = false;
		struct symbolizer *s = symbolizer_new_opts(&o);
		struct intern in;
		intern_init(&in);
		assert_int_equal(profile_init(&p), 0);
		int64_t id2 = intern_file(&in, s, &p, cmd, hot + 4, false);
		const char *name = loc_name(&p, id2);
		if (with) {
			assert_string_equal(name, "short_hot");
			assert_true(p.locations[id2 - 1].lines[0].line > 0);
		} else {
			assert_true(!name || strcmp(name, "short_hot"));
		}
		profile_release(&p);
		intern_release(&in);
		symbolizer_free(s);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_jit_perf_map(void **state)
{
	struct symbolizer *s = symbolizer_new();
	struct intern in;
	struct profile p;
	char path[64];
	pid_t pid = getpid();
	uint8_t *jit = mmap(NULL, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t base = (uintptr_t)jit, gone = 0x10000000; /* code mapped after the snapshot */

	assert_true(jit != MAP_FAILED);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%llx 100 JS:*hotLoop /app.js:3\n", (unsigned long long)base + 0x100);
	fprintf(f, "%llx 40 py::f:/app.py\n", (unsigned long long)gone);
	fclose(f);
	intern_init(&in);
	assert_int_equal(profile_init(&p), 0);
	assert_int_equal(symbolizer_add_process(s, pid), 0);
	int64_t id = intern_user(&in, s, &p, pid, base + 0x180, false);
	assert_string_equal(loc_name(&p, id), "JS:*hotLoop /app.js:3");
	assert_int_equal(p.locations[id - 1].kind, FRAME_JIT);
	assert_string_equal(profile_str(&p, loc_mapping(&p, id)->filename), path);
	assert_int_equal(loc_mapping(&p, id)->kind, FRAME_JIT);
	/* a return address just after the entry is looked up inside it */
	assert_string_equal(loc_name(&p, intern_user(&in, s, &p, pid, base + 0x200, true)),
			    "JS:*hotLoop /app.js:3");
	id = intern_user(&in, s, &p, pid, gone + 8, false);
	assert_string_equal(loc_name(&p, id), "py::f:/app.py");
	id = intern_user(&in, s, &p, pid, base + 0x1000, false);
	assert_null(loc_name(&p, id));
	assert_int_equal(p.locations[id - 1].kind, FRAME_JIT);
	struct intern_stats st;
	intern_stats(&in, &st);
	assert_int_equal(st.resolved, 3);
	assert_int_equal(st.no_jit_symbol, 1);
	unlink(path);
	munmap(jit, 8192);
	profile_release(&p);
	intern_release(&in);
	symbolizer_free(s);
}

static void test_kernel_return_address(void **state)
{
	struct symbolizer *s = symbolizer_new();
	struct intern in;
	struct profile p;

	intern_init(&in);
	assert_int_equal(profile_init(&p), 0);
	assert_int_equal(symbolizer_set_kallsyms(s, source_fixture("kallsyms.txt")), 0);
	int64_t leaf = intern_kernel(&in, s, &p, 0xffffffff81000200, false);
	int64_t ret = intern_kernel(&in, s, &p, 0xffffffff81000200, true);
	assert_string_equal(loc_name(&p, leaf), "core_beta");
	assert_string_equal(loc_name(&p, ret), "core_alpha"); /* a call at the end of core_alpha */
	assert_int_equal(p.locations[ret - 1].address, 0xffffffff81000200);
	assert_int_equal(intern_kernel(&in, s, &p, 0xffffffff81000200, false), leaf);
	profile_release(&p);
	intern_release(&in);
	symbolizer_free(s);
}

/* The address of a function in /proc/kallsyms (stdio, not lib/symbolize/ksym); 0 if absent or hidden. */
static uint64_t kallsyms_address(const char *name)
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

/* A kernel stack named after symbolizer_kernel_prepare (one lookup run, as root) has the names
 * that frame-by-frame lookups give: the sampled address exact, return addresses minus one. */
static void test_kernel_prepare(void **state)
{
	const char *fns[] = { "schedule", "do_nanosleep", "hrtimer_nanosleep", "vfs_read" };
	struct symbolizer *s1, *s2;
	struct intern i1, i2;
	struct profile p1, p2;
	uint64_t ips[4];

	for (size_t i = 0; i < 4; i++)
		if (!(ips[i] = kallsyms_address(fns[i])))
			skip(); /* not root: addresses hidden */
	ips[1] += 0x10;           /* inside do_nanosleep */
	s1 = symbolizer_new();
	s2 = symbolizer_new();
	intern_init(&i1);
	intern_init(&i2);
	assert_int_equal(profile_init(&p1), 0);
	assert_int_equal(profile_init(&p2), 0);
	assert_int_equal(symbolizer_kernel_prepare(s1, ips, 4), 0);
	for (size_t i = 0; i < 4; i++) {
		int64_t a = intern_kernel(&i1, s1, &p1, ips[i], i > 0);
		int64_t b = intern_kernel(&i2, s2, &p2, ips[i], i > 0);
		assert_non_null(loc_name(&p2, b));
		assert_string_equal(loc_name(&p1, a), loc_name(&p2, b));
	}
	assert_string_equal(loc_name(&p1, intern_kernel(&i1, s1, &p1, ips[0], false)), "schedule");
	/* a return address at a function's start is a call at the end of the one before */
	assert_string_not_equal(loc_name(&p1, intern_kernel(&i1, s1, &p1, ips[2], true)),
				"hrtimer_nanosleep");
	profile_release(&p1);
	profile_release(&p2);
	intern_release(&i1);
	intern_release(&i2);
	symbolizer_free(s1);
	symbolizer_free(s2);
}

static void test_mapping_kinds(void **state)
{
	assert_int_equal(profile_kind_of_mapping("[kernel.kallsyms]"), FRAME_KERNEL);
	assert_int_equal(profile_kind_of_mapping("[ext4]"), FRAME_KERNEL);
	assert_int_equal(profile_kind_of_mapping("[bpf]"), FRAME_KERNEL);
	assert_int_equal(profile_kind_of_mapping("[vvar]"), FRAME_USER);
	assert_int_equal(profile_kind_of_mapping("[stack:1234]"), FRAME_USER);
	assert_int_equal(profile_kind_of_mapping("[uprobes]"), FRAME_USER);
	assert_int_equal(profile_kind_of_mapping("[anon:v8 code]"), FRAME_JIT);
	assert_int_equal(profile_kind_of_mapping("[anon]"), FRAME_JIT);
	assert_int_equal(profile_kind_of_mapping("/tmp/perf-7.map"), FRAME_JIT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_find_resolve),
		cmocka_unit_test(test_return_address),
		cmocka_unit_test(test_shared_across_processes),
		cmocka_unit_test(test_second_snapshot),
		cmocka_unit_test(test_take_install),
		cmocka_unit_test(test_unresolved),
		cmocka_unit_test(test_exited_process),
		cmocka_unit_test(test_deleted_binary),
		cmocka_unit_test(test_repeat_snapshot),
		cmocka_unit_test(test_vdso),
		cmocka_unit_test(test_kernel),
		cmocka_unit_test(test_profiles),
		cmocka_unit_test(test_inline_lines),
		cmocka_unit_test(test_go_stripped),
		cmocka_unit_test(test_demangle_option),
		cmocka_unit_test(test_debug_dir),
		cmocka_unit_test(test_jit_perf_map),
		cmocka_unit_test(test_kernel_return_address),
		cmocka_unit_test(test_kernel_prepare),
		cmocka_unit_test(test_mapping_kinds),
		cmocka_unit_test(test_idle_files_freed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
