/* ELF files read through libelf (see elffile.h). */
#include "elf/elffile.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/safeopen.h"

/* Takes libelf's handle for fd or an image (NULL when libelf failed): 0, or -ENOEXEC (closing
 * f) when it is not an ELF file. */
static int take(struct elffile *f, Elf *elf)
{
	f->elf = elf;
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		elffile_close(f);
		return -ENOEXEC;
	}
	return 0;
}

int elffile_open_fd(struct elffile *f, int fd, enum elffile_read how)
{
	*f = (struct elffile){ .fd = fd };
	elf_version(EV_CURRENT);
	return take(f, elf_begin(fd, how == ELFFILE_MAPPED ? ELF_C_READ_MMAP : ELF_C_READ, NULL));
}

int elffile_open(struct elffile *f, const char *path, enum elffile_read how, struct stat *st)
{
	int fd = safeopen(path, 0, 0, st);

	if (fd < 0) {
		*f = (struct elffile){ .fd = -1 };
		return fd;
	}
	int err = elffile_open_fd(f, fd, how);
	if (err) {
		close(fd);
		return err;
	}
	f->owns_fd = true;
	return 0;
}

int elffile_open_image(struct elffile *f, const void *image, size_t len)
{
	*f = (struct elffile){ .fd = -1, .image = malloc(len ? len : 1) };
	if (!f->image)
		return -ENOMEM;
	memcpy(f->image, image, len);
	elf_version(EV_CURRENT);
	return take(f, elf_memory(f->image, len));
}

void elffile_close(struct elffile *f)
{
	if (f->elf)
		elf_end(f->elf);
	if (f->owns_fd && f->fd >= 0)
		close(f->fd);
	free(f->image);
	*f = (struct elffile){ .fd = -1 };
}

/* One opening and closing around a reader of an fd's ELF file, for the modules that read one
 * handle (tlsctx, v8consts). */
int elffile_with_fd(int fd, enum elffile_read how, elffile_fn *fn, void *ctx)
{
	struct elffile f;

	elffile_open_fd(&f, fd, how); /* f.elf NULL when not ELF: fn says so */
	int err = fn(ctx, f.elf);
	elffile_close(&f);
	return err;
}

/* The same around a reader of an image in memory. */
int elffile_with_image(const void *image, size_t len, elffile_fn *fn, void *ctx)
{
	struct elffile f;
	int err = elffile_open_image(&f, image, len);

	err = err == -ENOMEM ? err : fn(ctx, f.elf);
	elffile_close(&f);
	return err;
}

Elf_Scn *elffile_next(Elf *elf, Elf_Scn *scn, const char *name, GElf_Word type, GElf_Shdr *sh)
{
	size_t shstrndx = 0;

	if (name && elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;
		if (!gelf_getshdr(scn, sh) || (type != SHT_NULL && sh->sh_type != type))
			continue;
		if (!name || ((n = elf_strptr(elf, shstrndx, sh->sh_name)) && !strcmp(n, name)))
			return scn;
	}
	return NULL;
}

int elffile_build_id(Elf *elf, char *out, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const void *id;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &id);

	if (len)
		out[0] = 0;
	if (n <= 0)
		return -ENOENT;
	if (n > ELFFILE_BUILD_ID_MAX)
		n = ELFFILE_BUILD_ID_MAX;
	if ((size_t)n > (len ? len - 1 : 0) / 2)
		n = (len ? len - 1 : 0) / 2;
	for (ssize_t i = 0; i < n; i++) {
		out[2 * i] = hex[((const uint8_t *)id)[i] >> 4];
		out[2 * i + 1] = hex[((const uint8_t *)id)[i] & 15];
	}
	if (len)
		out[2 * n] = 0;
	return (int)n;
}
