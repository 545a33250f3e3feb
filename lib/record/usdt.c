/* .note.stapsdt reader (libelf), argument spec decoder, semaphores and library paths. */
#include "record/usdt.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/diag.h"
#include "elf/elffile.h"
#include "proc/procmap.h"
#include "base/safeopen.h"
#include "base/vec.h"

#define NOTE_NAME "stapsdt"
#define NOTE_TYPE 3

/* What is known of the object being read. */
struct usdt_object {
	const char *name;       /* interned */
	uint64_t dev, ino;
	bool has_base;          /* a .stapsdt.base section exists */
	uint64_t base_addr;     /* its address */
	size_t nbad;            /* malformed notes in this object */
	const char *why;        /* the first one's reason */
	const char *broken;     /* why the notes (or the rest of them) cannot be read at all */
};

void usdt_list_init(struct usdt_list *l)
{
	memset(l, 0, sizeof(*l));
}

void usdt_list_release(struct usdt_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->probes[i].argv);
	for (size_t i = 0; i < l->nstrings; i++)
		free(l->strings[i]);
	free(l->probes);
	free(l->strings);
	memset(l, 0, sizeof(*l));
}

/* Copies s[0..len) into a string the list owns; NULL when out of memory. */
static char *list_strndup(struct usdt_list *l, const char *s, size_t len)
{
	if (VEC_GROW(l->strings, l->cap_strings, l->nstrings + 1))
		return NULL;
	char *c = strndup(s, len);
	if (c)
		l->strings[l->nstrings++] = c;
	return c;
}

/* Counts a malformed note of the object (keeping the first reason). */
static void object_bad(struct usdt_object *o, const char *why)
{
	if (!o->nbad++)
		o->why = why;
}

/* Notes that the object's notes (or the rest of a note section) cannot be read. */
static void object_broken(struct usdt_object *o, const char *why)
{
	if (!o->broken)
		o->broken = why;
}

/* ---- argument specs ---- */

/* True when s is a plausible register name (lowercase letters and digits, 1 to 7 of them). */
static bool reg_name_ok(const char *s, size_t len)
{
	if (len == 0 || len > 7)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* Parses a whole string as an integer (decimal, 0x hex, optionally signed); false otherwise. */
static bool parse_int(const char *s, int64_t *v)
{
	char *end;

	if (!*s || isspace((unsigned char)*s))
		return false;
	errno = 0;
	long long x = strtoll(s, &end, 0);
	if (errno || *end)
		return false;
	*v = x;
	return true;
}

/* Copies "%reg" (len bytes of s) into out without the '%'; false when it is no register. */
static bool take_reg(const char *s, size_t len, char out[8])
{
	if (len < 2 || s[0] != '%' || !reg_name_ok(s + 1, len - 1))
		return false;
	memcpy(out, s + 1, len - 1);
	out[len - 1] = 0;
	return true;
}

/* Parses s[0..len) as a whole integer (see parse_int). */
static bool parse_int_n(const char *s, size_t len, int64_t *v)
{
	char buf[32];

	if (len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = 0;
	return parse_int(buf, v);
}

/* True when c may appear in a symbol ("v@GOTOFF", "_ZN3foo3barE", ".L0"). */
static bool sym_char(char c)
{
	return isalnum((unsigned char)c) || (c && strchr("_.$@", c));
}

/* Parses a displacement s[0..len): "", "-24", "0x10", "sym", "sym+8", "sym-8". */
static bool parse_disp(const char *s, size_t len, struct usdt_arg *a)
{
	int64_t off = 0;
	size_t n = 0;

	if (!len)
		return true;
	if (isdigit((unsigned char)*s) || *s == '-' || *s == '+')
		return parse_int_n(s, len, &a->offset);
	while (n < len && sym_char(s[n]))
		n++;
	if (n == 0 || (n < len && s[n] != '+' && s[n] != '-'))
		return false;
	if (n < len && (n + 1 == len || !isdigit((unsigned char)s[n + 1]) ||
			!parse_int_n(s + n + 1, len - n - 1, &off)))
		return false;
	a->sym = s;
	a->sym_len = (int)n;
	a->offset = n < len && s[n] == '-' ? -off : off;
	return true;
}

/* Parses "(%base,%index,scale)" (parts optional) between the parentheses (s[0..len)). */
static bool parse_mem_regs(const char *s, size_t len, struct usdt_arg *a)
{
	const char *comma = memchr(s, ',', len);
	size_t blen = comma ? (size_t)(comma - s) : len;

	if (blen && !take_reg(s, blen, a->reg))
		return false;
	if (!comma)
		return blen > 0;
	s += blen + 1;
	len -= blen + 1;
	comma = memchr(s, ',', len);
	size_t ilen = comma ? (size_t)(comma - s) : len;
	if (!take_reg(s, ilen, a->index))
		return false;
	if (!comma)
		return true;
	char scale[4];
	size_t slen = len - ilen - 1;
	if (slen != 1)
		return false;
	memcpy(scale, comma + 1, slen);
	scale[slen] = 0;
	a->scale = atoi(scale);
	return a->scale == 1 || a->scale == 2 || a->scale == 4 || a->scale == 8;
}

/* Parses a memory operand: "disp(regs)" or an absolute "disp". */
static bool parse_mem(const char *op, struct usdt_arg *a)
{
	const char *open = strchr(op, '(');
	size_t len = strlen(op);

	a->kind = USDT_ARG_MEM;
	if (!open)
		return len && parse_disp(op, len, a);
	size_t rlen = len - (open - op);
	if (rlen < 2 || open[rlen - 1] != ')')
		return false;
	return parse_mem_regs(open + 1, rlen - 2, a) && parse_disp(op, open - op, a);
}

/* Splits "SIZE@" off the spec; returns the operand. */
static const char *parse_size(const char *spec, struct usdt_arg *a)
{
	char *end;
	const char *at = strchr(spec, '@');

	if (!at || at == spec)
		return spec;
	errno = 0;
	long v = strtol(spec, &end, 10);
	if (end != at || errno)
		return spec;
	a->is_signed = v < 0;
	a->size = v < 0 ? (int)-v : (int)v;
	if (a->size != 1 && a->size != 2 && a->size != 4 && a->size != 8)
		a->size = -1;
	return at + 1;
}

int usdt_parse_arg(const char *spec, struct usdt_arg *a)
{
	memset(a, 0, sizeof(*a));
	a->spec = spec;
	a->scale = 1;
	const char *op = parse_size(spec, a);
	bool ok;
	if (a->size < 0)
		ok = false;
	else if (op[0] == '%') {
		a->kind = USDT_ARG_REG;
		ok = take_reg(op, strlen(op), a->reg);
	} else if (op[0] == '$') {
		a->kind = USDT_ARG_CONST;
		ok = parse_int(op + 1, &a->value);
	} else
		ok = parse_mem(op, a);
	if (ok)
		return 0;
	a->kind = USDT_ARG_UNKNOWN;
	a->size = a->size < 0 ? 0 : a->size;
	a->sym = NULL;
	a->sym_len = 0;
	return -EINVAL;
}

const char *usdt_arg_type(const struct usdt_arg *a)
{
	static const char *const names[2][4] = {
		{ "uint8", "uint16", "uint32", "uint64" },
		{ "int8", "int16", "int32", "int64" },
	};

	switch (a->size) {
	case 1: return names[a->is_signed][0];
	case 2: return names[a->is_signed][1];
	case 4: return names[a->is_signed][2];
	case 8: return names[a->is_signed][3];
	}
	return "?";
}

/* Writes a memory operand as "[%base+%index*scale+sym+offset]". */
static int format_mem(const struct usdt_arg *a, char *buf, size_t len)
{
	char idx[24] = "", off[32] = "";
	const char *sep = a->reg[0] ? "+" : "";

	if (a->index[0] && a->scale > 1)
		snprintf(idx, sizeof(idx), "%s%%%s*%d", sep, a->index, a->scale);
	else if (a->index[0])
		snprintf(idx, sizeof(idx), "%s%%%s", sep, a->index);
	if (!a->reg[0] && !a->index[0] && !a->sym)
		snprintf(off, sizeof(off), "0x%" PRIx64, (uint64_t)a->offset);
	else if (a->offset)
		snprintf(off, sizeof(off), "%+" PRId64, a->offset);
	return snprintf(buf, len, "%s [%s%s%s%s%.*s%s]", usdt_arg_type(a), a->reg[0] ? "%" : "",
			a->reg, idx, a->sym && (a->reg[0] || a->index[0]) ? "+" : "",
			a->sym ? a->sym_len : 0, a->sym ? a->sym : "", off);
}

int usdt_format_arg(const struct usdt_arg *a, char *buf, size_t len)
{
	switch (a->kind) {
	case USDT_ARG_REG:
		return snprintf(buf, len, "%s %%%s", usdt_arg_type(a), a->reg);
	case USDT_ARG_CONST:
		return snprintf(buf, len, "%s %" PRId64, usdt_arg_type(a), a->value);
	case USDT_ARG_MEM:
		return format_mem(a, buf, len);
	default:
		return snprintf(buf, len, "? %s", a->spec ? a->spec : "");
	}
}

/* Decodes the probe's argument spec into p->argv. Returns 0, -E2BIG (too many arguments) or
 * -ENOMEM. */
static int decode_args(struct usdt_list *l, struct usdt_probe *p)
{
	struct usdt_arg args[USDT_MAX_ARGS];
	const char *s = p->args;
	uint32_t n = 0;

	for (;;) {
		s += strspn(s, " ");
		size_t len = strcspn(s, " ");
		if (!len)
			break;
		if (n == USDT_MAX_ARGS)
			return -E2BIG;
		char *spec = list_strndup(l, s, len);
		if (!spec)
			return -ENOMEM;
		usdt_parse_arg(spec, &args[n++]);
		s += len;
	}
	if (!n)
		return 0;
	p->argv = malloc(n * sizeof(*p->argv));
	if (!p->argv)
		return -ENOMEM;
	memcpy(p->argv, args, n * sizeof(*p->argv));
	p->nargs = n;
	return 0;
}

/* ---- notes ---- */

/* Reads an address of the note's width and byte order. */
static uint64_t read_addr(const unsigned char *p, int width, bool msb)
{
	uint64_t v = 0;

	for (int i = 0; i < width; i++)
		v |= (uint64_t)p[msb ? i : width - 1 - i] << (8 * (width - 1 - i));
	return v;
}

/* True when s[0..len) is made of printable ASCII (space allowed when spaces). */
static bool printable(const char *s, size_t len, bool spaces)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] < (spaces ? 0x20 : 0x21) || s[i] > 0x7e)
			return false;
	return true;
}

/* File offset of ELF address addr (in a PT_LOAD's file bytes), 0 when in none. */
static uint64_t vaddr_to_offset(Elf *elf, uint64_t addr)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return 0;
	for (size_t i = 0; i < n && i < 65536; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (addr >= ph.p_vaddr && addr - ph.p_vaddr < ph.p_filesz)
			return addr - ph.p_vaddr + ph.p_offset;
	}
	return 0;
}

/* The three strings after the addresses: provider, name, args; false when malformed. */
static bool note_strings(const char *s, size_t len, const char *str[3], size_t slen[3])
{
	for (int i = 0; i < 3; i++) {
		const char *nul = memchr(s, 0, len);
		if (!nul)
			return false;
		str[i] = s;
		slen[i] = nul - s;
		len -= slen[i] + 1;
		s = nul + 1;
	}
	return slen[0] && slen[1] && printable(str[0], slen[0], false) &&
	       printable(str[1], slen[1], false) && printable(str[2], slen[2], true);
}

/* Appends an empty probe; NULL when out of memory. */
static struct usdt_probe *new_probe(struct usdt_list *l)
{
	if (VEC_GROW(l->probes, l->cap, l->n + 1))
		return NULL;
	struct usdt_probe *p = &l->probes[l->n];
	memset(p, 0, sizeof(*p));
	return p;
}

/* Adds the probe of one stapsdt note descriptor. Returns 1 (added), 0 (malformed), -ENOMEM. */
static int add_note(struct usdt_list *l, struct usdt_object *o, Elf *elf, const unsigned char *desc,
		    size_t len)
{
	GElf_Ehdr eh;
	const char *str[3];
	size_t slen[3];

	if (!gelf_getehdr(elf, &eh))
		return 0;
	int w = eh.e_ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
	bool msb = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	if (len < 3u * w)
		return object_bad(o, "descriptor too short"), 0;
	if (!note_strings((const char *)desc + 3 * w, len - 3 * w, str, slen))
		return object_bad(o, "bad provider, name or argument strings"), 0;
	struct usdt_probe *p = new_probe(l);
	if (!p)
		return -ENOMEM;
	p->note_addr = p->addr = read_addr(desc, w, msb);
	p->base = read_addr(desc + w, w, msb);
	p->note_semaphore = p->semaphore = read_addr(desc + 2 * w, w, msb);
	if (o->has_base && p->base) {
		p->addr += o->base_addr - p->base;
		if (p->semaphore)
			p->semaphore += o->base_addr - p->base;
	}
	if (w == 4) {
		p->addr &= 0xffffffffu;
		p->semaphore &= 0xffffffffu;
	}
	p->sem_offset = p->semaphore ? vaddr_to_offset(elf, p->semaphore) : 0;
	p->provider = list_strndup(l, str[0], slen[0]);
	p->name = list_strndup(l, str[1], slen[1]);
	p->args = list_strndup(l, str[2], slen[2]);
	p->object = o->name;
	p->dev = o->dev;
	p->ino = o->ino;
	if (!p->provider || !p->name || !p->args)
		return -ENOMEM;
	int err = decode_args(l, p);
	if (err == -E2BIG)
		return object_bad(o, "more than 16 arguments"), 0;
	if (err)
		return err;
	l->n++;
	return 1;
}

/* Adds the probes of one SHT_NOTE section; returns how many, or -ENOMEM. */
static int read_note_section(struct usdt_list *l, struct usdt_object *o, Elf *elf, Elf_Scn *scn)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;
	int added = 0;

	if (!d)
		return object_broken(o, elf_errmsg(-1)), 0;
	if (!d->d_buf || (d->d_type != ELF_T_NHDR && d->d_type != ELF_T_NHDR8))
		return d->d_size ? (object_broken(o, "unreadable note section"), 0) : 0;
	while (off < d->d_size) {
		size_t next = gelf_getnote(d, off, &nh, &name_off, &desc_off);
		if (next <= off) {
			object_broken(o, "a note runs past the end of its section");
			break;
		}
		off = next;
		const char *name = (const char *)d->d_buf + name_off;
		if (nh.n_type != NOTE_TYPE || nh.n_namesz != sizeof(NOTE_NAME) ||
		    memcmp(name, NOTE_NAME, sizeof(NOTE_NAME)))
			continue;
		int rc = add_note(l, o, elf, (const unsigned char *)d->d_buf + desc_off, nh.n_descsz);
		if (rc < 0)
			return rc;
		added += rc;
	}
	return added;
}

/* Finds .stapsdt.base, then reads every .note.stapsdt section; returns the probe count. */
static int read_elf(struct usdt_list *l, struct usdt_object *o, Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	int added = 0;

	if (elf_kind(elf) != ELF_K_ELF)
		return -ENOEXEC;
	GElf_Ehdr eh;
	size_t shnum;
	if (!gelf_getehdr(elf, &eh) || elf_getshdrnum(elf, &shnum) || elf_getshdrstrndx(elf, &shstrndx))
		return object_broken(o, elf_errmsg(-1)), 0;
	/* libelf drops section headers that lie past the end of the file */
	if (eh.e_shoff && !shnum)
		return object_broken(o, "its section headers lie past the end of the file"), 0;
	GElf_Shdr sh;
	while ((scn = elffile_next(elf, scn, ".stapsdt.base", SHT_NULL, &sh))) {
		o->has_base = true;
		o->base_addr = sh.sh_addr;
	}
	while ((scn = elffile_next(elf, scn, ".note.stapsdt", SHT_NOTE, &sh))) {
		int rc = read_note_section(l, o, elf, scn);
		if (rc < 0)
			return rc;
		added += rc;
	}
	return added;
}

/* Reads one ELF handle and reports the object's malformed notes once. */
static int read_object(struct usdt_list *l, Elf *elf, const char *object, uint64_t dev,
		       uint64_t ino)
{
	struct usdt_object o = { .dev = dev, .ino = ino };

	o.name = list_strndup(l, object, strlen(object));
	if (!o.name)
		return -ENOMEM;
	int rc = read_elf(l, &o, elf);
	if (o.nbad && o.broken)
		diag(DIAG_WARN, "skipped %zu malformed stapsdt note%s in '%s' (%s), and cannot read the "
		     "rest: %s", o.nbad, o.nbad == 1 ? "" : "s", object, o.why, o.broken);
	else if (o.nbad)
		diag(DIAG_WARN, "skipped %zu malformed stapsdt note%s in '%s': %s", o.nbad,
		     o.nbad == 1 ? "" : "s", object, o.why);
	else if (o.broken)
		diag(DIAG_WARN, "cannot read the stapsdt notes of '%s': %s", object, o.broken);
	l->nbad += o.nbad + (o.broken != NULL);
	return rc;
}

int usdt_list_memory(struct usdt_list *l, const void *image, size_t len, const char *object)
{
	struct elffile f;
	int rc = elffile_open_image(&f, image, len);

	if (!rc)
		rc = read_object(l, f.elf, object, 0, 0);
	elffile_close(&f);
	return rc;
}

/* usdt_list_file with the device and inode to record (those of a process's maps, say). */
static int list_file_as(struct usdt_list *l, const char *path, const char *object, uint64_t dev,
			uint64_t ino)
{
	struct stat st;
	struct elffile f;
	int rc = elffile_open(&f, path, ELFFILE_MAPPED, &st);

	if (rc == -EINVAL) /* not a regular file */
		return !stat(path, &st) && S_ISDIR(st.st_mode) ? -EISDIR : -ENOEXEC;
	if (!rc)
		rc = read_object(l, f.elf, object ? object : path, dev ? dev : st.st_dev,
				 ino ? ino : st.st_ino);
	elffile_close(&f);
	return rc;
}

int usdt_list_file(struct usdt_list *l, const char *path, const char *object)
{
	return list_file_as(l, path, object, 0, 0);
}

/* ---- processes ---- */

/* True when the maps entry is the probe's object. */
static bool entry_is_object(const struct procmap_entry *e, const struct usdt_probe *p)
{
	if (e->kind != PROCMAP_FILE)
		return false;
	if (p->ino && e->inode == p->ino && makedev(e->dev_major, e->dev_minor) == p->dev)
		return true;
	return !strcmp(e->path, p->object);
}

/* Reads a 2-byte semaphore at addr in process pid. */
static int read_semaphore(pid_t pid, uint64_t addr, unsigned short *v)
{
	struct iovec local = { v, sizeof(*v) }, remote = { (void *)(uintptr_t)addr, sizeof(*v) };
	char path[64];

	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) == sizeof(*v))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = pread(fd, v, sizeof(*v), (off_t)addr);
	int err = n == sizeof(*v) ? 0 : n < 0 ? -errno : -EIO;
	close(fd);
	return err;
}

/* Finds the probe's semaphore among the mappings and reads it; true when read. */
static bool probe_semaphore(struct usdt_probe *p, const struct procmap *m, pid_t pid)
{
	for (size_t i = 0; i < m->n; i++) {
		const struct procmap_entry *e = &m->entries[i];
		if (!entry_is_object(e, p) || p->sem_offset < e->offset ||
		    p->sem_offset - e->offset >= e->end - e->start)
			continue;
		unsigned short v;
		uint64_t addr = e->start + (p->sem_offset - e->offset);
		if (read_semaphore(pid, addr, &v))
			return false;
		p->sem_known = true;
		p->sem_runtime = addr;
		p->sem_count = v;
		return true;
	}
	return false;
}

int usdt_list_semaphores(struct usdt_list *l, pid_t pid)
{
	struct procmap m;
	int n = 0, err = procmap_read(&m, pid);

	if (err)
		return err;
	for (size_t i = 0; i < l->n; i++)
		if (l->probes[i].semaphore && l->probes[i].sem_offset &&
		    probe_semaphore(&l->probes[i], &m, pid))
			n++;
	procmap_release(&m);
	return n;
}

/* True when an earlier entry of m is the same file as entry i (each object is read once). */
static bool seen_before(const struct procmap *m, size_t i)
{
	const struct procmap_entry *e = &m->entries[i];

	for (size_t j = 0; j < i; j++) {
		const struct procmap_entry *f = &m->entries[j];
		if (f->kind == PROCMAP_FILE && !f->deleted &&
		    ((f->inode == e->inode && f->dev_major == e->dev_major &&
		      f->dev_minor == e->dev_minor) || !strcmp(f->path, e->path)))
			return true;
	}
	return false;
}

int usdt_list_process(struct usdt_list *l, pid_t pid)
{
	struct procmap m;
	size_t before = l->n;
	int err = procmap_read(&m, pid);

	if (err)
		return err;
	for (size_t i = 0; i < m.n && !err; i++) {
		const struct procmap_entry *e = &m.entries[i];
		if (e->kind != PROCMAP_FILE || e->deleted || e->path[0] != '/' || seen_before(&m, i))
			continue;
		char path[PATH_MAX + 32];
		snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, e->path);
		int rc = list_file_as(l, path, e->path, makedev(e->dev_major, e->dev_minor), e->inode);
		if (rc == -ENOMEM)
			err = rc;
		else if (rc < 0 && rc != -ENOEXEC)
			diag(DIAG_INFO, "cannot read '%s': %s", e->path, strerror(-rc));
	}
	procmap_release(&m);
	if (err)
		return err;
	err = usdt_list_semaphores(l, pid);
	return err < 0 ? err : (int)(l->n - before);
}

bool usdt_probe_matches(const struct usdt_probe *p, const char *pattern)
{
	if (!strchr(pattern, ':'))
		return !fnmatch(pattern, p->name, 0);
	size_t lp = strlen(p->provider), ln = strlen(p->name);
	char stack[256], *full = lp + ln + 2 <= sizeof(stack) ? stack : malloc(lp + ln + 2);
	if (!full)
		return false;
	memcpy(full, p->provider, lp);
	full[lp] = ':';
	memcpy(full + lp + 1, p->name, ln + 1);
	bool ok = !fnmatch(pattern, full, 0);
	if (full != stack)
		free(full);
	return ok;
}

/* ---- library names ---- */

/* True when base names the library or program name ("libc.so.6" for "libc" or "libc.so.6"). */
static bool name_matches(const char *base, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(base, name, n) && (!base[n] || base[n] == '.' || base[n] == '-');
}

/* True when path is a regular ELF file. */
static bool is_elf_file(const char *path)
{
	char magic[4];
	int fd = safeopen(path, 0, 0, NULL);

	if (fd < 0)
		return false;
	bool ok = read(fd, magic, 4) == 4 && !memcmp(magic, ELFMAG, SELFMAG);
	close(fd);
	return ok;
}

/* The path of the first file mapping of process pid that match takes, into out; -ENOENT when
 * none does. */
static int find_mapped(pid_t pid, bool (*match)(const struct procmap_entry *e, const void *ctx),
		       const void *ctx, char *out, size_t len)
{
	struct procmap m;
	int err = procmap_read(&m, pid);

	if (err)
		return err;
	err = -ENOENT;
	for (size_t i = 0; i < m.n && err == -ENOENT; i++) {
		const struct procmap_entry *e = &m.entries[i];
		if (e->kind == PROCMAP_FILE && !e->deleted && match(e, ctx))
			err = snprintf(out, len, "%s", e->path) < (int)len ? 0 : -ENAMETOOLONG;
	}
	procmap_release(&m);
	return err;
}

/* find_mapped: a file whose name (after its last '/') is the object's name ctx. */
static bool named(const struct procmap_entry *e, const void *ctx)
{
	const char *slash = strrchr(e->path, '/');

	return slash && name_matches(slash + 1, ctx);
}

/* Searches process pid's maps for the object named name. */
static int resolve_in_process(const char *name, pid_t pid, char *out, size_t len)
{
	return find_mapped(pid, named, name, out, len);
}

/* The best match for name in dir (exact when exact, else the shortest prefix match) into best. */
static void search_dir(const char *dir, const char *name, bool exact, char *best, size_t len)
{
	char path[PATH_MAX];
	DIR *d;

	if (exact) {
		if (snprintf(path, sizeof(path), "%s/%s", dir, name) < (int)sizeof(path) &&
		    is_elf_file(path) && strlen(path) < len)
			strcpy(best, path);
		return;
	}
	if (!(d = opendir(dir)))
		return;
	for (struct dirent *de; (de = readdir(d));) {
		if (!name_matches(de->d_name, name) ||
		    snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path))
			continue;
		size_t cur = *best ? strlen(strrchr(best, '/')) : SIZE_MAX, mine = strlen(de->d_name) + 1;
		if ((mine < cur || (mine == cur && strcmp(path, best) < 0)) && strlen(path) < len &&
		    is_elf_file(path))
			strcpy(best, path);
	}
	closedir(d);
}

/* Searches LD_LIBRARY_PATH, the library directories and PATH, exact names first. */
static int resolve_in_dirs(const char *name, char *out, size_t len)
{
	static const char system_dirs[] = "/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:"
					  "/lib64:/usr/lib64:/lib:/usr/lib:/usr/local/lib";
	const char *ld = getenv("LD_LIBRARY_PATH"), *bin = getenv("PATH");
	char *dirs = NULL;

	if (asprintf(&dirs, "%s:%s:%s", ld ? ld : "", system_dirs, bin ? bin : "/usr/bin:/bin") < 0)
		return -ENOMEM;
	*out = 0;
	for (int exact = 1; exact >= 0 && !*out; exact--) {
		char *save = NULL, *copy = strdup(dirs);
		for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d && !*out;
		     d = strtok_r(NULL, ":", &save))
			search_dir(d, name, exact, out, len);
		free(copy);
	}
	free(dirs);
	return *out ? 0 : -ENOENT;
}

int usdt_resolve_path(const char *name, pid_t pid, char *out, size_t len)
{
	if (!*name)
		return -ENOENT;
	if (strchr(name, '/'))
		return snprintf(out, len, "%s", name) < (int)len ? 0 : -ENAMETOOLONG;
	if (pid > 0)
		return resolve_in_process(name, pid, out, len);
	return resolve_in_dirs(name, out, len);
}

/* True when path is a regular file the caller may execute (as the shell's PATH search wants). */
static bool is_executable(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK);
}

/* The interpreter a "#!" script names (its first word) into out; false when path is no script. */
static bool script_interpreter(const char *path, char *out, size_t len)
{
	char line[PATH_MAX + 3];
	int fd = safeopen(path, 0, 0, NULL);
	ssize_t n = fd < 0 ? -1 : read(fd, line, sizeof(line) - 1);

	if (fd >= 0)
		close(fd);
	if (n < 3 || line[0] != '#' || line[1] != '!')
		return false;
	line[n] = 0;
	char *s = line + 2 + strspn(line + 2, " \t");
	s[strcspn(s, " \t\n")] = 0;
	return *s == '/' && snprintf(out, len, "%s", s) < (int)len;
}

/* The file the shell runs for cmd (a path, or a name searched in PATH) into out. */
static bool command_file(const char *cmd, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char *copy, *save = NULL;

	if (strchr(cmd, '/'))
		return snprintf(out, len, "%s", cmd) < (int)len && is_executable(out);
	if (!(copy = strdup(path ? path : "/usr/bin:/bin")))
		return false;
	*out = 0;
	for (char *d = strtok_r(copy, ":", &save); d && !*out; d = strtok_r(NULL, ":", &save))
		if (snprintf(out, len, "%s/%s", *d ? d : ".", cmd) >= (int)len || !is_executable(out))
			*out = 0;
	free(copy);
	return *out;
}

/* True when file's base name is name exactly. */
static bool base_is(const char *file, const char *name)
{
	const char *slash = strrchr(file, '/');

	return !strcmp(slash ? slash + 1 : file, name);
}

/* The file the command runs when it is the program name, or a script whose interpreter is. */
static bool program_of_command(const char *name, const char *cmd, char *out, size_t len)
{
	char file[PATH_MAX], interp[PATH_MAX];

	if (!cmd || !command_file(cmd, file, sizeof(file)))
		return false;
	if (base_is(file, name) && is_elf_file(file))
		return snprintf(out, len, "%s", file) < (int)len;
	if (script_interpreter(file, interp, sizeof(interp)) && base_is(interp, name) &&
	    is_elf_file(interp))
		return snprintf(out, len, "%s", interp) < (int)len;
	return false;
}

int usdt_resolve_program(const char *name, const char *cmd, char *out, size_t len,
			 char *script, size_t slen)
{
	const char *path = getenv("PATH");
	char *copy, *save = NULL, file[PATH_MAX];

	*script = 0;
	if (!*name || strchr(name, '/'))
		return -EINVAL;
	if (program_of_command(name, cmd, out, len))
		return USDT_FROM_COMMAND;
	if (!(copy = strdup(path ? path : "/usr/bin:/bin")))
		return -ENOMEM;
	*out = 0;
	for (char *d = strtok_r(copy, ":", &save); d && !*out; d = strtok_r(NULL, ":", &save)) {
		if (snprintf(file, sizeof(file), "%s/%s", *d ? d : ".", name) >= (int)sizeof(file) ||
		    !is_executable(file))
			continue;
		if (is_elf_file(file))
			snprintf(out, len, "%s", file);
		else if (!*script)
			snprintf(script, slen, "%s", file); /* a shim: the shell runs it, it runs another */
	}
	free(copy);
	return *out ? USDT_FROM_PATH : -ENOENT;
}

/* find_mapped: the file ctx (a struct stat: dev, inode), by an absolute path. */
static bool same_file(const struct procmap_entry *e, const void *ctx)
{
	const struct stat *st = ctx;

	return e->path[0] == '/' && e->inode == st->st_ino &&
	       makedev(e->dev_major, e->dev_minor) == st->st_dev;
}

/* The path under which process pid maps the file st (dev, inode) into out; -ENOENT when it does
 * not map it. */
static int mapped_path_of(pid_t pid, const struct stat *st, char *out, size_t len)
{
	return find_mapped(pid, same_file, st, out, len);
}

/* The path process pid sees for name: a name is looked up in its maps; an absolute path is
 * taken in its root, and named as its maps name the file (symbolic links resolved as there). */
static int seen_path(const char *name, pid_t pid, char *out, size_t len)
{
	char inroot[PATH_MAX + 32];
	struct stat st;

	if (name[0] != '/')
		return resolve_in_process(name, pid, out, len);
	if (snprintf(inroot, sizeof(inroot), "/proc/%d/root%s", (int)pid, name) >= (int)sizeof(inroot))
		return -ENAMETOOLONG;
	int err = safeopen_stat(inroot, &st); /* inside pid's root: its symlinks are its own */
	if (err)
		return err;
	if (mapped_path_of(pid, &st, out, len))
		return snprintf(out, len, "%s", name) < (int)len ? 0 : -ENAMETOOLONG;
	return 0;
}

int usdt_resolve_in_root(const char *name, pid_t pid, char *out, size_t len)
{
	char seen[PATH_MAX];
	int err;

	if (!*name)
		return -ENOENT;
	if (pid <= 0 || (name[0] != '/' && strchr(name, '/')))
		return usdt_resolve_path(name, pid, out, len);
	if ((err = seen_path(name, pid, seen, sizeof(seen)))) {
		/* an absolute path only firn sees (the host's path of a container's file) */
		if (name[0] == '/' && err == -ENOENT && !access(name, F_OK))
			return usdt_resolve_path(name, pid, out, len);
		return err;
	}
	return snprintf(out, len, "/proc/%d/root%s", (int)pid, seen) < (int)len ? 0 : -ENAMETOOLONG;
}

/* The last two colons split it: PATH may hold colons of its own. */
bool usdt_split_spec(char *s, char **provider, char **name)
{
	char *c2 = strrchr(s, ':');

	if (!c2 || c2 == s)
		return false;
	*c2 = 0;
	char *c1 = strrchr(s, ':');
	*c2 = ':';
	if (!c1 || c1 == s || c1 + 1 == c2 || !c2[1])
		return false;
	*c1 = *c2 = 0;
	*provider = c1 + 1;
	*name = c2 + 1;
	return true;
}
