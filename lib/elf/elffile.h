/* An ELF file read through libelf: the one way lib/ opens a file by path (through safeopen), a
 * descriptor or an image in memory, finds its sections by name and type, and reads its build
 * id. The symbolizers, the unwinder, USDT, the runtimes' probes and disasm read their ELF
 * files through it. */
#ifndef FIRN_ELFFILE_H
#define FIRN_ELFFILE_H

#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/* The longest build id kept, in bytes (its hex form is twice as long, plus a NUL). */
#define ELFFILE_BUILD_ID_MAX 64

/* How libelf reads the file: mapped (fast; a file truncated in place while mapped raises
 * SIGBUS), or with pread on demand (a truncated file gives errors, never SIGBUS). */
enum elffile_read { ELFFILE_MAPPED, ELFFILE_PREAD };

/* An open ELF file: elf is libelf's handle (ELF_K_ELF), valid until elffile_close. fd is the
 * descriptor it reads (owned only when opened by path); image is the owned copy of an image. */
struct elffile {
	Elf *elf;
	int fd;        /* -1 for an image */
	bool owns_fd;
	void *image;
};

/* Opens path through safeopen (a regular file, opened without blocking; *st filled when not
 * NULL). 0, or safeopen's -errno, or -ENOEXEC (not an ELF file); f is closed on failure. */
int elffile_open(struct elffile *f, const char *path, enum elffile_read how, struct stat *st);
/* Reads the ELF file open at fd, which stays the caller's and must stay open while f is used
 * (mapped: until elffile_close). 0 or -ENOEXEC (not an ELF file). */
int elffile_open_fd(struct elffile *f, int fd, enum elffile_read how);
/* Reads an ELF image of len bytes, from a copy f owns (libelf may write to its buffer). 0,
 * -ENOMEM or -ENOEXEC. */
int elffile_open_image(struct elffile *f, const void *image, size_t len);
/* Ends the libelf handle, closes an owned descriptor, frees an image (a closed or zeroed f:
 * nothing). f is closed afterwards (elf NULL, fd -1). */
void elffile_close(struct elffile *f);

/* What elffile_with_fd and elffile_with_image run over the file they open: elf is NULL where
 * the file is not ELF (fn says what that means to it); fn's return value is theirs. */
typedef int elffile_fn(void *ctx, Elf *elf);
/* Opens the ELF file at fd (as elffile_open_fd: fd stays the caller's), runs fn(ctx, elf) over
 * it and closes it; returns what fn returns. */
int elffile_with_fd(int fd, enum elffile_read how, elffile_fn *fn, void *ctx);
/* The same over an image of len bytes (as elffile_open_image); -ENOMEM, fn not run, when its
 * copy cannot be made. */
int elffile_with_image(const void *image, size_t len, elffile_fn *fn, void *ctx);

/* The section after scn (NULL: from the first) whose type is type (SHT_NULL: any) and whose
 * name is name (NULL: any), with its header in *sh; NULL when none is left. */
Elf_Scn *elffile_next(Elf *elf, Elf_Scn *scn, const char *name, GElf_Word type, GElf_Shdr *sh);
/* The build id (the GNU build id note, libdw's reading of it) in lowercase hex into out, at
 * most ELFFILE_BUILD_ID_MAX bytes of it and no more than fits in len - 1 characters. Returns
 * its length in bytes, or -ENOENT when the file has none (out is "" then). */
int elffile_build_id(Elf *elf, char *out, size_t len);

#endif
