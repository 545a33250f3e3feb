/* Unit tests for lib/record/usdt: argument specs (registers, memory operands, constants, unknown forms),
 * the usdtfix fixture's notes (names, order, semaphores, decoded arguments), .stapsdt.base
 * prelink adjustment, damaged and hostile images (warnings, never crashes), globs, semaphores
 * read from a live process (this one), and library name resolution. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/diag.h"
#include "symfix.h"
#include "record/usdt.h"

/* A probe of this test binary, with a semaphore the test sets by hand. */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
unsigned short firntest_self_semaphore __attribute__((unused)) __attribute__((section(".probes")));

__attribute__((noinline)) void self_probe(int x)
{
	STAP_PROBE1(firntest, self, x);
}

/* Warnings reported through diag during a test. */
static int nwarnings;
static char last_warning[1024];

static void capture_diag(enum diag_level level, const char *msg)
{
	if (level != DIAG_WARN)
		return;
	nwarnings++;
	snprintf(last_warning, sizeof(last_warning), "%s", msg);
}

static int reset_warnings(void **state)
{
	nwarnings = 0;
	last_warning[0] = 0;
	diag_set_reporter(capture_diag);
	return 0;
}

/* Parses spec and checks its formatted form (and returns the parse's result). */
static int check_arg(const char *spec, const char *want, struct usdt_arg *a)
{
	char text[160];
	int rc = usdt_parse_arg(spec, a);
	usdt_format_arg(a, text, sizeof(text));
	if (strcmp(text, want))
		fail_msg("'%s' formatted as '%s', wanted '%s'", spec, text, want);
	return rc;
}

static void test_arg_registers(void **state)
{
	struct usdt_arg a;

	assert_int_equal(check_arg("-4@%edi", "int32 %edi", &a), 0);
	assert_int_equal(a.kind, USDT_ARG_REG);
	assert_int_equal(a.size, 4);
	assert_true(a.is_signed);
	assert_string_equal(a.reg, "edi");
	assert_int_equal(check_arg("8@%rax", "uint64 %rax", &a), 0);
	assert_false(a.is_signed);
	assert_int_equal(check_arg("1@%sil", "uint8 %sil", &a), 0);
	assert_int_equal(check_arg("-2@%dx", "int16 %dx", &a), 0);
	assert_int_equal(check_arg("-8@%r12", "int64 %r12", &a), 0);
	assert_int_equal(a.size, 8);
	/* an old spec without a size */
	assert_int_equal(check_arg("%rdi", "? %rdi", &a), 0);
	assert_int_equal(a.kind, USDT_ARG_REG);
	assert_int_equal(a.size, 0);
}

static void test_arg_memory(void **state)
{
	struct usdt_arg a;

	assert_int_equal(check_arg("-4@112(%rsp)", "int32 [%rsp+112]", &a), 0);
	assert_int_equal(a.kind, USDT_ARG_MEM);
	assert_string_equal(a.reg, "rsp");
	assert_int_equal(a.offset, 112);
	assert_null(a.sym);
	assert_int_equal(check_arg("-4@-24(%rbp)", "int32 [%rbp-24]", &a), 0);
	assert_int_equal(a.offset, -24);
	assert_int_equal(check_arg("-8@(%rdi)", "int64 [%rdi]", &a), 0);
	assert_int_equal(a.offset, 0);
	assert_int_equal(check_arg("-4@counter(%rip)", "int32 [%rip+counter]", &a), 0);
	assert_int_equal(a.sym_len, 7);
	assert_memory_equal(a.sym, "counter", 7);
	assert_string_equal(a.reg, "rip");
	assert_int_equal(check_arg("8@buf+16(%rip)", "uint64 [%rip+buf+16]", &a), 0);
	assert_int_equal(a.sym_len, 3);
	assert_memory_equal(a.sym, "buf", 3);
	assert_int_equal(a.offset, 16);
	assert_int_equal(check_arg("4@_ZN3foo3barE-8(%rip)", "uint32 [%rip+_ZN3foo3barE-8]", &a), 0);
	assert_int_equal(a.offset, -8);
	assert_int_equal(check_arg("8@16(%rax,%rbx,8)", "uint64 [%rax+%rbx*8+16]", &a), 0);
	assert_string_equal(a.index, "rbx");
	assert_int_equal(a.scale, 8);
	assert_int_equal(check_arg("4@(,%rcx,4)", "uint32 [%rcx*4]", &a), 0);
	assert_string_equal(a.reg, "");
	assert_int_equal(check_arg("2@(%rax,%rdx)", "uint16 [%rax+%rdx]", &a), 0);
	assert_int_equal(a.scale, 1);
	assert_int_equal(check_arg("4@0x601040", "uint32 [0x601040]", &a), 0);
	assert_int_equal(a.offset, 0x601040);
	assert_int_equal(check_arg("-4@counter", "int32 [counter]", &a), 0);
	/* i386 PIC: GOT-relative */
	assert_int_equal(check_arg("-4@v@GOTOFF(%eax)", "int32 [%eax+v@GOTOFF]", &a), 0);
	assert_int_equal(a.sym_len, 8);
	/* a long C++ symbol */
#define LONG_SYM "_ZN9__gnu_cxx17__normal_iteratorIPKcNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEEE"
	assert_int_equal(check_arg("8@" LONG_SYM "+8(%rip)", "uint64 [%rip+" LONG_SYM "+8]", &a), 0);
	assert_int_equal(a.sym_len, strlen(LONG_SYM));
	assert_int_equal(check_arg("-1@0x10(%rsp)", "int8 [%rsp+16]", &a), 0);
}

static void test_arg_constants(void **state)
{
	struct usdt_arg a;

	assert_int_equal(check_arg("-4@$42", "int32 42", &a), 0);
	assert_int_equal(a.kind, USDT_ARG_CONST);
	assert_int_equal(a.value, 42);
	assert_int_equal(check_arg("-8@$-1", "int64 -1", &a), 0);
	assert_int_equal(a.value, -1);
	assert_int_equal(check_arg("4@$0x10", "uint32 16", &a), 0);
}

static void test_arg_unknown(void **state)
{
	static const char *const bad[] = {
		"3@%eax", "8@%", "8@$", "8@$abc", "8@$1x", "8@(%rax", "8@5(%RAX)", "8@[sp, 8]",
		"@%eax", "8@(%rax,%rbx,3)", "8@(%rax,%rbx,8,1)", "8@(rax)", "8@%averyverylongreg",
		"8@sym+(%rip)", "8@sym+-4(%rip)", "8@-(%rax)", "8@()", "99999999999999999999@%eax",
		"8@$99999999999999999999", "8@(%rax,)", "8@(%rax,%rbx,)", "8@sym*2",
	};
	struct usdt_arg a;
	char want[64];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(want, sizeof(want), "? %s", bad[i]);
		if (check_arg(bad[i], want, &a) != -EINVAL)
			fail_msg("'%s' was accepted", bad[i]);
		assert_int_equal(a.kind, USDT_ARG_UNKNOWN);
		assert_null(a.sym);
	}
}

/* The probes of the usdtfix fixture, read from its file. */
static void read_fixture(struct usdt_list *l)
{
	usdt_list_init(l);
	int n = usdt_list_file(l, built_fixture("usdtfix"), "usdtfix");
	if (n < 0)
		fail_msg("cannot read %s: %s (run make fixtures)", built_fixture("usdtfix"), strerror(-n));
	assert_int_equal(n, 6);
}

/* Formats argument i of p. */
static const char *arg_text(const struct usdt_probe *p, uint32_t i)
{
	static char buf[128];

	assert_true(i < p->nargs);
	usdt_format_arg(&p->argv[i], buf, sizeof(buf));
	return buf;
}

static void test_fixture(void **state)
{
	static const char *const names[] = { "usdtfix:hit", "usdtfix:args_sem", "usdtfix:mem",
					     "usdtfix:nosem", "usdtfix:nosem", "other_provider:neg" };
	static const uint32_t nargs[] = { 2, 4, 3, 0, 0, 2 };
	struct usdt_list l;
	char full[64];

	read_fixture(&l);
	assert_int_equal(l.nbad, 0);
	for (size_t i = 0; i < l.n; i++) {
		const struct usdt_probe *p = &l.probes[i];
		snprintf(full, sizeof(full), "%s:%s", p->provider, p->name);
		assert_string_equal(full, names[i]);
		assert_int_equal(p->nargs, nargs[i]);
		assert_string_equal(p->object, "usdtfix");
		/* no prelinking: the addresses are the notes' own */
		assert_int_equal(p->addr, p->note_addr);
		assert_true(p->addr != 0);
		assert_int_equal(p->semaphore, p->note_semaphore);
		assert_int_equal(p->semaphore != 0, i < 2);
		assert_int_equal(p->sem_offset != 0, i < 2);
		assert_true(p->ino != 0);
	}
	/* the two semaphores are adjacent shorts in .probes */
	assert_int_equal(l.probes[0].semaphore - l.probes[1].semaphore, 2);
	assert_int_equal(l.probes[0].sem_offset - l.probes[1].sem_offset, 2);
	assert_true(l.probes[3].addr != l.probes[4].addr);
	/* argument kinds: registers, pointer, small integers, constant, memory */
	assert_int_equal(l.probes[0].argv[0].kind, USDT_ARG_REG);
	assert_string_equal(usdt_arg_type(&l.probes[0].argv[0]), "int32");
	assert_string_equal(usdt_arg_type(&l.probes[0].argv[1]), "int64");
	assert_string_equal(usdt_arg_type(&l.probes[1].argv[0]), "uint64");
	assert_string_equal(usdt_arg_type(&l.probes[1].argv[1]), "uint8");
	assert_string_equal(usdt_arg_type(&l.probes[1].argv[2]), "int16");
	assert_string_equal(arg_text(&l.probes[1], 3), "int32 42");
	assert_string_equal(arg_text(&l.probes[2], 0), "int32 [%rip+counter]");
	assert_int_equal(l.probes[2].argv[1].kind, USDT_ARG_MEM);
	assert_int_equal(l.probes[2].argv[1].offset, 8);
	assert_string_equal(usdt_arg_type(&l.probes[2].argv[1]), "int32");
	assert_int_equal(l.probes[2].argv[2].kind, USDT_ARG_MEM);
	assert_string_equal(usdt_arg_type(&l.probes[2].argv[2]), "int64");
	assert_string_equal(usdt_arg_type(&l.probes[5].argv[0]), "int64");
	assert_string_equal(usdt_arg_type(&l.probes[5].argv[1]), "uint32");
	assert_string_equal(l.probes[3].args, "");
	usdt_list_release(&l);
	assert_int_equal(nwarnings, 0);
}

static void test_matches(void **state)
{
	struct usdt_list l;

	read_fixture(&l);
	assert_true(usdt_probe_matches(&l.probes[0], "usdtfix:hit"));
	assert_true(usdt_probe_matches(&l.probes[0], "usdtfix:h*"));
	assert_true(usdt_probe_matches(&l.probes[0], "h?t"));
	assert_true(usdt_probe_matches(&l.probes[0], "*:*"));
	assert_false(usdt_probe_matches(&l.probes[0], "usdtfix:neg"));
	assert_false(usdt_probe_matches(&l.probes[0], "usdtfix"));
	assert_true(usdt_probe_matches(&l.probes[5], "*:neg"));
	assert_true(usdt_probe_matches(&l.probes[5], "other_*"
					   ":*"));
	assert_false(usdt_probe_matches(&l.probes[5], "usdtfix:*"));
	usdt_list_release(&l);
}

/* The fixture's bytes (malloc'd) and size. */
static unsigned char *fixture_bytes(size_t *len)
{
	struct stat st;
	int fd = open(built_fixture("usdtfix"), O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	unsigned char *buf = malloc(st.st_size);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, st.st_size), st.st_size);
	close(fd);
	*len = st.st_size;
	return buf;
}

/* The section header named name in an ELF64 image. */
static Elf64_Shdr *section(unsigned char *img, const char *name)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Shdr *sh = (Elf64_Shdr *)(img + eh->e_shoff);
	const char *strs = (const char *)img + sh[eh->e_shstrndx].sh_offset;

	for (int i = 0; i < eh->e_shnum; i++)
		if (!strcmp(strs + sh[i].sh_name, name))
			return &sh[i];
	fail_msg("no section %s", name);
	return NULL;
}

static void test_prelink_adjust(void **state)
{
	size_t len;
	unsigned char *img = fixture_bytes(&len);
	struct usdt_list l;

	/* a prelinked object: everything moved by 0x100000, the notes not rewritten */
	section(img, ".stapsdt.base")->sh_addr += 0x100000;
	usdt_list_init(&l);
	assert_int_equal(usdt_list_memory(&l, img, len, "prelinked"), 6);
	for (size_t i = 0; i < l.n; i++) {
		assert_int_equal(l.probes[i].addr, l.probes[i].note_addr + 0x100000);
		if (l.probes[i].note_semaphore)
			assert_int_equal(l.probes[i].semaphore, l.probes[i].note_semaphore + 0x100000);
		else
			assert_int_equal(l.probes[i].semaphore, 0);
		assert_int_equal(l.probes[i].ino, 0);
	}
	usdt_list_release(&l);
	free(img);
}

/* Reads img[0..len) and returns the probe count (or error); never crashes. */
static int list_image(const unsigned char *img, size_t len, size_t *nbad)
{
	struct usdt_list l;

	usdt_list_init(&l);
	int rc = usdt_list_memory(&l, img, len, "hostile");
	for (size_t i = 0; i < l.n; i++) {
		char buf[256];
		for (uint32_t j = 0; j < l.probes[i].nargs; j++)
			usdt_format_arg(&l.probes[i].argv[j], buf, sizeof(buf));
		assert_true(strlen(l.probes[i].provider) > 0);
	}
	*nbad = l.nbad;
	usdt_list_release(&l);
	return rc;
}

static void test_truncated(void **state)
{
	size_t len, nbad;
	unsigned char *img = fixture_bytes(&len);
	Elf64_Shdr *notes = section(img, ".note.stapsdt");
	size_t start = notes->sh_offset, end = notes->sh_offset + notes->sh_size;

	/* cut anywhere: never a crash; cut inside the notes section: fewer probes or an error */
	for (size_t cut = 0; cut < len; cut += cut < 64 ? 1 : 97)
		list_image(img, cut, &nbad);
	for (size_t cut = start; cut < end; cut += 3) {
		int rc = list_image(img, cut, &nbad);
		assert_true(rc < 6);
	}
	assert_int_equal(list_image(img, 0, &nbad), -ENOEXEC);
	assert_int_equal(list_image((const unsigned char *)"not an ELF file", 15, &nbad), -ENOEXEC);
	free(img);
}

static void test_hostile_notes(void **state)
{
	size_t len, nbad;
	unsigned char *img = fixture_bytes(&len);
	unsigned char *copy = malloc(len);
	Elf64_Shdr *notes = section(img, ".note.stapsdt");
	Elf64_Nhdr *first = (Elf64_Nhdr *)(img + notes->sh_offset);

	assert_non_null(copy);
	/* descriptor too short for the three addresses: that note is skipped; the next header is
	 * then read from inside the old descriptor (the semaphore address as namesz): truncated.
	 * One warning for the object. */
	memcpy(copy, img, len);
	((Elf64_Nhdr *)(copy + notes->sh_offset))->n_descsz = 12;
	assert_int_equal(list_image(copy, len, &nbad), 0);
	assert_int_equal(nbad, 2);
	assert_int_equal(nwarnings, 1);
	assert_non_null(strstr(last_warning, "'hostile'"));
	assert_string_equal(last_warning, "skipped 1 malformed stapsdt note in 'hostile' (descriptor "
			    "too short), and cannot read the rest: a note runs past the end of its section");
	/* absurd sizes: the note cannot fit, the rest of the section is unreadable */
	memcpy(copy, img, len);
	((Elf64_Nhdr *)(copy + notes->sh_offset))->n_descsz = 0xfffffff0u;
	assert_int_equal(list_image(copy, len, &nbad), 0);
	assert_int_equal(nbad, 1);
	memcpy(copy, img, len);
	((Elf64_Nhdr *)(copy + notes->sh_offset))->n_namesz = 0x7fffffffu;
	assert_int_equal(list_image(copy, len, &nbad), 0);
	/* strings without their NUL (the first note's strings all 'A') */
	memcpy(copy, img, len);
	unsigned char *desc = copy + notes->sh_offset + sizeof(*first) + 8;
	memset(desc + 24, 'A', first->n_descsz - 24);
	assert_int_equal(list_image(copy, len, &nbad), 5);
	assert_int_equal(nbad, 1);
	/* control characters in a name */
	memcpy(copy, img, len);
	desc[24] = '\033';
	assert_int_equal(list_image(copy, len, &nbad), 5);
	/* the section's offset and size point outside the file */
	memcpy(copy, img, len);
	Elf64_Shdr *sh = (Elf64_Shdr *)((unsigned char *)section(copy, ".note.stapsdt"));
	sh->sh_offset = len - 8;
	sh->sh_size = 0x7fffffffffffULL;
	assert_int_equal(list_image(copy, len, &nbad), 0);
	assert_int_equal(nbad, 1);
	assert_non_null(strstr(last_warning, "cannot read the stapsdt notes of 'hostile': "));
	/* the section headers cut off */
	assert_int_equal(list_image(img, ((Elf64_Ehdr *)img)->e_shoff + 10, &nbad), 0);
	assert_int_equal(nbad, 1);
	assert_string_equal(last_warning, "cannot read the stapsdt notes of 'hostile': its section "
			    "headers lie past the end of the file");
	/* a section name index out of range: the section is not found, no crash */
	memcpy(copy, img, len);
	section(copy, ".note.stapsdt")->sh_name = 0xffffff;
	assert_int_equal(list_image(copy, len, &nbad), 0);
	assert_int_equal(nbad, 0);
	free(copy);
	free(img);
}

static void test_too_many_args(void **state)
{
	size_t len, nbad;
	unsigned char *img = fixture_bytes(&len);
	Elf64_Shdr *notes = section(img, ".note.stapsdt");
	Elf64_Nhdr *first = (Elf64_Nhdr *)(img + notes->sh_offset);
	/* the second note (args_sem) has the room */
	Elf64_Nhdr *second = (Elf64_Nhdr *)((unsigned char *)first + sizeof(*first) +
					    ((first->n_namesz + 3) & ~3u) + ((first->n_descsz + 3) & ~3u));
	char *strs = (char *)second + sizeof(*second) + 8 + 24;
	size_t room = second->n_descsz - 24;
	static const char args[] = "a b c d e f g h i j k l m n o p q"; /* 17 */

	assert_true(room >= 4 + sizeof(args));
	memset(strs, 0, room);
	memcpy(strs, "p\0n\0", 4);
	memcpy(strs + 4, args, sizeof(args));
	assert_int_equal(list_image(img, len, &nbad), 5);
	assert_int_equal(nbad, 1);
	assert_non_null(strstr(last_warning, "more than 16 arguments"));
	/* 16 are fine */
	memset(strs, 0, room);
	memcpy(strs, "p\0n\0", 4);
	memcpy(strs + 4, args, sizeof(args) - 3);
	assert_int_equal(list_image(img, len, &nbad), 6);
	assert_int_equal(nbad, 0);
	free(img);
}

static void test_process_semaphore(void **state)
{
	struct usdt_list l;
	const struct usdt_probe *self = NULL;

	self_probe(1);
	firntest_self_semaphore = 3;
	usdt_list_init(&l);
	assert_true(usdt_list_process(&l, getpid()) >= 1);
	for (size_t i = 0; i < l.n; i++)
		if (!strcmp(l.probes[i].provider, "firntest") && !strcmp(l.probes[i].name, "self"))
			self = &l.probes[i];
	assert_non_null(self);
	assert_true(self->sem_known);
	assert_int_equal(self->sem_count, 3);
	assert_int_equal(self->sem_runtime, (uintptr_t)&firntest_self_semaphore);
	firntest_self_semaphore = 0;
	assert_int_equal(usdt_list_semaphores(&l, getpid()), 1);
	assert_int_equal(self->sem_count, 0);
	usdt_list_release(&l);
	assert_int_equal(usdt_list_process(&l, 0x7ffffff0), -ENOENT);
}

static void test_resolve(void **state)
{
	char path[4096];

	assert_int_equal(usdt_resolve_path("/some/where/lib.so", 0, path, sizeof(path)), 0);
	assert_string_equal(path, "/some/where/lib.so");
	assert_int_equal(usdt_resolve_path("/a/b", 0, path, 3), -ENAMETOOLONG);
	/* the system library directories; libc.a and the libc.so linker script are not ELF objects */
	assert_int_equal(usdt_resolve_path("libc.so.6", 0, path, sizeof(path)), 0);
	assert_non_null(strstr(path, "/libc.so.6"));
	assert_int_equal(usdt_resolve_path("libc", 0, path, sizeof(path)), 0);
	assert_string_equal(strrchr(path, '/'), "/libc.so.6");
	/* a process's maps */
	assert_int_equal(usdt_resolve_path("libc", getpid(), path, sizeof(path)), 0);
	assert_string_equal(strrchr(path, '/'), "/libc.so.6");
	assert_int_equal(access(path, R_OK), 0);
	assert_int_equal(usdt_resolve_path("libno-such-firn-lib", 0, path, sizeof(path)), -ENOENT);
	assert_int_equal(usdt_resolve_path("libno-such-firn-lib", getpid(), path, sizeof(path)),
			 -ENOENT);
	assert_int_equal(usdt_resolve_path("", 0, path, sizeof(path)), -ENOENT);
}

/* writes text to path with mode */
static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* A program name is found as the shell would: the command's file (or its #! interpreter), else
 * PATH in order, ELF files only, a script met first reported (a pyenv shim). */
static void test_resolve_program(void **state)
{
	char dir[] = "/tmp/firn-usdt-XXXXXX", shim[64], bin[64], elf[96], script[96], path[4096],
	     seen[4096], env[256], *old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;

	assert_non_null(mkdtemp(dir));
	snprintf(shim, sizeof(shim), "%s/shim", dir);
	snprintf(bin, sizeof(bin), "%s/bin", dir);
	assert_int_equal(mkdir(shim, 0755) | mkdir(bin, 0755), 0);
	snprintf(elf, sizeof(elf), "%s/prog", bin);
	assert_int_equal(symlink("/proc/self/exe", elf), 0); /* an executable ELF file */
	snprintf(script, sizeof(script), "%s/prog", shim);
	write_file(script, "#!/bin/sh\nexec prog \"$@\"\n", 0755);
	snprintf(env, sizeof(env), "%s:%s", shim, bin);
	setenv("PATH", env, 1);
	assert_int_equal(usdt_resolve_program("prog", NULL, path, sizeof(path), seen, sizeof(seen)),
			 USDT_FROM_PATH);
	assert_string_equal(path, elf);
	assert_string_equal(seen, script);
	/* the command is the program (by name in PATH, or by path): its file */
	assert_int_equal(usdt_resolve_program("prog", elf, path, sizeof(path), seen, sizeof(seen)),
			 USDT_FROM_COMMAND);
	assert_string_equal(path, elf);
	/* a script whose interpreter is the program */
	char *text = NULL;
	assert_true(asprintf(&text, "#! %s -x\n", elf) > 0);
	snprintf(script, sizeof(script), "%s/run", bin);
	write_file(script, text, 0755);
	free(text);
	assert_int_equal(usdt_resolve_program("prog", "run", path, sizeof(path), seen, sizeof(seen)),
			 USDT_FROM_COMMAND);
	assert_string_equal(path, elf);
	/* another command: PATH; an unknown name; a path */
	assert_int_equal(usdt_resolve_program("prog", "sh", path, sizeof(path), seen, sizeof(seen)),
			 USDT_FROM_PATH);
	assert_int_equal(usdt_resolve_program("nosuchprog", NULL, path, sizeof(path), seen,
					       sizeof(seen)), -ENOENT);
	assert_int_equal(usdt_resolve_program("a/prog", NULL, path, sizeof(path), seen, sizeof(seen)),
			 -EINVAL);
	unlink(script);
	unlink(elf);
	snprintf(script, sizeof(script), "%s/prog", shim);
	unlink(script);
	rmdir(shim);
	rmdir(bin);
	rmdir(dir);
	if (old)
		setenv("PATH", old, 1);
	free(old);
}

/* A probe spec splits at its last two colons (the path may hold colons); empty parts fail. */
static void test_split_spec(void **state)
{
	char ok[] = "/opt/a:b/lib.so:prov:name", bad1[] = "lib:prov:", bad2[] = "lib::name",
	     bad3[] = ":prov:name", bad4[] = "prov:name";
	char *provider, *name;

	assert_true(usdt_split_spec(ok, &provider, &name));
	assert_string_equal(ok, "/opt/a:b/lib.so");
	assert_string_equal(provider, "prov");
	assert_string_equal(name, "name");
	assert_false(usdt_split_spec(bad1, &provider, &name));
	assert_false(usdt_split_spec(bad2, &provider, &name));
	assert_false(usdt_split_spec(bad3, &provider, &name));
	assert_false(usdt_split_spec(bad4, &provider, &name));
	assert_string_equal(bad2, "lib::name"); /* unchanged when refused */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_spec),
		cmocka_unit_test(test_resolve_program),
		cmocka_unit_test(test_arg_registers),
		cmocka_unit_test(test_arg_memory),
		cmocka_unit_test(test_arg_constants),
		cmocka_unit_test(test_arg_unknown),
		cmocka_unit_test_setup(test_fixture, reset_warnings),
		cmocka_unit_test(test_matches),
		cmocka_unit_test(test_prelink_adjust),
		cmocka_unit_test_setup(test_truncated, reset_warnings),
		cmocka_unit_test_setup(test_hostile_notes, reset_warnings),
		cmocka_unit_test_setup(test_too_many_args, reset_warnings),
		cmocka_unit_test(test_process_semaphore),
		cmocka_unit_test(test_resolve),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
