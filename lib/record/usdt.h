/* USDT probes (sys/sdt.h) read from ELF .note.stapsdt notes with libelf: provider, name, address
 * (adjusted for .stapsdt.base prelinking), semaphore, and the argument spec decoded into size,
 * signedness and location (x86-64 AT&T operands). Also the objects a process maps, the current
 * value of a probe's semaphore in a process, and a library name's path. Malformed notes are
 * skipped with one warning per object (through diag); hostile input never crashes the reader. */
#ifndef FIRN_USDT_H
#define FIRN_USDT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define USDT_MAX_ARGS 16 /* sys/sdt.h writes at most 12; a note with more is malformed */

/* Where an argument's value is. */
enum usdt_arg_kind {
	USDT_ARG_REG = 0, /* "%edi": a register */
	USDT_ARG_MEM,     /* "-24(%rbp)", "sym+8(%rip)", "(%rax,%rbx,8)", "0x601040": memory */
	USDT_ARG_CONST,   /* "$42": a constant */
	USDT_ARG_UNKNOWN, /* a spec this reader cannot decode (kept as text) */
};

/* One decoded argument. Register names are without '%', "" when absent. */
struct usdt_arg {
	int size;               /* bytes: 1, 2, 4 or 8; 0 when the spec gives none */
	bool is_signed;
	enum usdt_arg_kind kind;
	char reg[8];            /* REG: the register; MEM: the base register */
	char index[8];          /* MEM: the index register */
	int scale;              /* MEM: the index scale (1 when no index) */
	int64_t offset;         /* MEM: the displacement (besides sym) */
	int64_t value;          /* CONST */
	const char *sym;        /* MEM: a symbolic displacement ("counter"): sym_len bytes (not
				 * NUL-terminated) inside spec; NULL when none */
	int sym_len;
	const char *spec;       /* this argument as written ("-4@counter(%rip)") */
};

/* One probe site. Strings are owned by the usdt_list. */
struct usdt_probe {
	const char *provider, *name;
	const char *object;      /* the file as named by the caller */
	const char *args;        /* the argument spec as written ("-4@%edi 8@%rax"), "" for none */
	uint64_t addr;           /* ELF virtual address of the probe, adjusted */
	uint64_t base;           /* the note's .stapsdt.base field, as written */
	uint64_t note_addr;      /* the note's location field, as written (readelf -n shows it) */
	uint64_t semaphore;      /* ELF virtual address of the semaphore, adjusted; 0 = none */
	uint64_t note_semaphore; /* the note's semaphore field, as written */
	uint64_t sem_offset;     /* file offset of the semaphore (0 when none or not in a segment) */
	uint64_t dev, ino;       /* of the object file (0 for images in memory) */
	struct usdt_arg *argv;   /* nargs decoded arguments, owned */
	uint32_t nargs;
	/* filled by usdt_list_semaphores: */
	bool sem_known;          /* the semaphore was read from the process */
	uint64_t sem_runtime;    /* its address in the process */
	unsigned sem_count;      /* its value: > 0 while some tracer has the probe enabled */
};

/* Probes of any number of objects, in note order within each object. */
struct usdt_list {
	struct usdt_probe *probes;
	size_t n, cap;
	char **strings;          /* every string the probes point to, owned */
	size_t nstrings, cap_strings;
	size_t nbad;             /* malformed notes skipped so far */
};

void usdt_list_init(struct usdt_list *l);
void usdt_list_release(struct usdt_list *l);

/* Appends the probes of the ELF file at path, named object in the list (path when NULL).
 * Returns the number of probes added (0 for an ELF file without notes), -ENOEXEC when the file
 * is not ELF, or -errno. Malformed notes are skipped and counted in l->nbad, with one warning. */
int usdt_list_file(struct usdt_list *l, const char *path, const char *object);
/* The same for an ELF image in memory (not modified, not kept). */
int usdt_list_memory(struct usdt_list *l, const void *image, size_t len, const char *object);
/* Appends the probes of every ELF file mapped by process pid (each object once, named by its
 * path in /proc/PID/maps), then reads their semaphores. Returns the probe count or -errno. */
int usdt_list_process(struct usdt_list *l, pid_t pid);
/* Reads in process pid the semaphore of every probe whose object (same device and inode, or
 * same path) the process maps; sets sem_known, sem_runtime, sem_count. Returns how many were
 * read, or -errno when the process's maps cannot be read. */
int usdt_list_semaphores(struct usdt_list *l, pid_t pid);

/* Decodes one argument spec ("-4@%edi"); unknown forms give USDT_ARG_UNKNOWN. a->spec and a->sym
 * point into spec, which must outlive a. Returns 0, or -EINVAL for an unknown form. */
int usdt_parse_arg(const char *spec, struct usdt_arg *a);
/* Writes an argument as "int32 %edi", "uint64 [%rbp-24]", "int32 [%rip+counter]", "int32 42".
 * Returns the length snprintf would write. */
int usdt_format_arg(const struct usdt_arg *a, char *buf, size_t len);
/* Type name of an argument: "int32", "uint8", "?" when the size is unknown. */
const char *usdt_arg_type(const struct usdt_arg *a);

/* Matches "PROVIDER:NAME" of a probe against a glob; a pattern without ':' matches the name of
 * any provider. */
bool usdt_probe_matches(const struct usdt_probe *p, const char *pattern);

/* Finds the file of a library or program named name (no '/'): in process pid's maps when
 * pid > 0, else in LD_LIBRARY_PATH, the system library directories and PATH. A name matches a
 * file whose base name is name or starts with name followed by '.' or '-' ("libc" and
 * "libc.so.6" both match libc.so.6). Names with a '/' are returned as they are. Writes the path
 * to out; 0, -ENOENT, -ENAMETOOLONG or -errno. */
int usdt_resolve_path(const char *name, pid_t pid, char *out, size_t len);
/* Where usdt_resolve_program found a program. */
enum { USDT_FROM_PATH = 1, USDT_FROM_COMMAND = 2 };
/* Finds the program named name (no '/') as the shell that runs cmd would: when cmd (a path or a
 * name searched in PATH; NULL: none) is that program, or a "#!" script whose interpreter is, that
 * file (USDT_FROM_COMMAND); else the first executable ELF file named name in PATH, in PATH's order
 * (USDT_FROM_PATH). script gets the first executable non-ELF file of that name met in PATH before
 * it ("" when none): a wrapper (a pyenv shim) that runs another file than the one found. Writes
 * the path to out; USDT_FROM_*, -EINVAL (name has a '/'), -ENOENT or -ENOMEM. */
int usdt_resolve_program(const char *name, const char *cmd, char *out, size_t len,
			 char *script, size_t slen);
/* The same for attaching to process pid (> 0), whose root and mount namespace may differ from
 * the caller's (a container): the object as the process sees it (a name found in its maps, an
 * absolute path taken in its root), written as "/proc/PID/root/PATH" so that the caller reaches
 * that file; libbpf's USDT attach accepts such paths. A relative path, pid <= 0, and an
 * absolute path that exists only outside the process's root: as usdt_resolve_path. 0, -ENOENT,
 * -ENAMETOOLONG or -errno. */
int usdt_resolve_in_root(const char *name, pid_t pid, char *out, size_t len);

/* Splits a probe spec "PATH:PROVIDER:NAME" in place (s then holds PATH): true with provider and
 * name pointing into s, false (s unchanged) when a part is empty. */
bool usdt_split_spec(char *s, char **provider, char **name);

#endif
