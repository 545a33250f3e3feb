/* Go goroutine labels, the parsers (see golabels.h). */
#include "runtimes/golabels.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char BUILDINFO_MAGIC[14] = "\xff Go buildinf:";
#define BUILDINFO_HEADER 32   /* magic, pointer size, flags, then 16 bytes of padding */
#define BUILDINFO_INLINE 0x2  /* flags: the version and module strings follow the header */

/* The one program header i of the header eh in head, into ph; false when outside len. */
static bool phdr_at(const uint8_t *head, size_t len, const Elf64_Ehdr *eh, unsigned i,
		    Elf64_Phdr *ph)
{
	uint64_t off = eh->e_phoff + (uint64_t)i * eh->e_phentsize;

	if (eh->e_phoff > len || off > len || len - off < sizeof(*ph))
		return false;
	memcpy(ph, head + off, sizeof(*ph));
	return true;
}

int golabels_exe_parse(const uint8_t *head, size_t len, struct golabels_exe *out)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;

	memset(out, 0, sizeof(*out));
	if (len < sizeof(eh))
		return -ENOEXEC;
	memcpy(&eh, head, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != EM_X86_64 ||
	    eh.e_phentsize < sizeof(ph) || eh.e_phnum > 256)
		return -ENOEXEC;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (!phdr_at(head, len, &eh, i, &ph))
			return -ENOEXEC;
		if (ph.p_type == PT_TLS) {
			out->tls = true;
			out->tls_memsz = ph.p_memsz;
			out->tls_align = ph.p_align;
		}
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_W) && ph.p_filesz &&
		    out->nsegs < GOLABELS_SEGS) {
			out->seg_off[out->nsegs] = ph.p_offset;
			out->seg_len[out->nsegs++] = ph.p_filesz;
		}
	}
	return 0;
}

/* A uvarint at *p (before end): its value, *p moved past it; false when cut or over 10 bytes. */
static bool uvarint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
		uint8_t b = *(*p)++;
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

int golabels_buildinfo_version(const uint8_t *buf, size_t len, char *ver, size_t cap)
{
	for (size_t off = 0; len >= BUILDINFO_HEADER && off <= len - BUILDINFO_HEADER; off += 16) {
		const uint8_t *h = buf + off, *p = h + BUILDINFO_HEADER, *end = buf + len;
		uint64_t n;
		if (memcmp(h, BUILDINFO_MAGIC, sizeof(BUILDINFO_MAGIC)))
			continue;
		if (!(h[15] & BUILDINFO_INLINE))
			return -ENOENT; /* Go 1.17 and older: pointers to the strings */
		if (!uvarint(&p, end, &n) || n == 0 || n >= cap || n > (uint64_t)(end - p))
			return -EINVAL;
		memcpy(ver, p, n);
		ver[n] = '\0';
		return strlen(ver) == n ? 0 : -EINVAL;
	}
	return -ENOENT;
}

/* A release's layout: its offsets, by major.minor. */
struct go_layout {
	unsigned minor;
	struct firn_go_proc p;
};

/* The releases whose offsets were read from their DWARF (runtime.g, runtime.m, runtime.hmap):
 * Debian's Go 1.19 and unstable's Go 1.27, for their builds without DWARF. Others without
 * DWARF are refused rather than guessed. */
static const struct go_layout layouts[] = {
	{ 19, { .tls_off = -8, .layout = FIRN_GO_HMAP, .g_m = 48, .m_curg = 192, .g_labels = 360,
		.hmap_b = 9, .hmap_buckets = 16 } },
	{ 27, { .tls_off = -8, .layout = FIRN_GO_SLICE, .g_m = 48, .m_curg = 184, .g_labels = 352 } },
};

/* Where g is from the thread pointer in exe (see golabels_offsets): 0, or -ENOTSUP. */
static int tls_offset(const struct golabels_exe *exe, int64_t *off)
{
	uint64_t align = exe->tls_align > 8 ? exe->tls_align : 8;

	if (!exe->tls) {
		*off = -8;
		return 0;
	}
	if (exe->tls_memsz != 8 || align > 4096 || (align & (align - 1)))
		return -ENOTSUP;
	*off = -(int64_t)align; /* 8 bytes rounded up to a power of two */
	return 0;
}

/* The offsets of release minor into p: its table row, else dw's (where given). */
static int release_layout(unsigned minor, const struct godwarf *dw, struct firn_go_proc *p)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].minor == minor) {
			*p = layouts[i].p;
			return 0;
		}
	if (!dw || minor < 19)
		return -ENOTSUP;
	*p = (struct firn_go_proc){ .layout = minor >= 24 ? FIRN_GO_SLICE : FIRN_GO_HMAP,
				    .g_m = dw->g_m, .m_curg = dw->m_curg, .g_labels = dw->g_labels };
	if (minor < 24) /* hmap's count, B, buckets: as they were from Go 1.x to 1.23 */
		p->hmap_b = 9, p->hmap_buckets = 16;
	return dw->g_m < 4096 && dw->m_curg < 4096 && dw->g_labels < 4096 ? 0 : -ENOTSUP;
}

int golabels_offsets(const char *ver, const struct golabels_exe *exe, const struct godwarf *dw,
		     struct firn_go_proc *p, const char **why)
{
	unsigned minor = 0;
	int used = 0;
	int64_t off;

	*why = "an unknown Go release";
	/* "go1.19.8", "go1.27", "go1.22.1 X:rangefunc" (a build with an experiment) */
	if (sscanf(ver, "go1.%u%n", &minor, &used) != 1 || (ver[used] && !strchr(". ", ver[used])) ||
	    release_layout(minor, dw, p))
		return -ENOTSUP;
	if (tls_offset(exe, &off)) {
		*why = "a build whose TLS holds more than g (linked by the system linker)";
		return -ENOTSUP;
	}
	p->tls_off = off;
	return 0;
}

/* Copies one announced string (len bytes of src, FIRN_GO_STR at most) into dst; false when its
 * length is out of range. */
static bool copy_str(char *dst, const char *src, unsigned len)
{
	if (len > FIRN_GO_STR)
		return false;
	memcpy(dst, src, len);
	dst[len] = '\0';
	return true;
}

int golabels_event_parse(const void *rec, size_t len, struct golabels_ctx *out)
{
	struct firn_go_event e;

	if (len != sizeof(e))
		return -EINVAL;
	memcpy(&e, rec, sizeof(e));
	if (e.type != FIRN_EV_ANNOUNCE(FIRN_GO_TAG) || !e.id || e.id > FIRN_GO_MAX_ID ||
	    e.n > FIRN_GO_PAIRS)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	*out = (struct golabels_ctx){ .pid = e.pid, .id = e.id, .n = e.n, .cut = e.cut != 0 };
	for (uint32_t i = 0; i < e.n; i++)
		if (!copy_str(out->key[i], e.pairs[i].key, e.pairs[i].klen) ||
		    !copy_str(out->value[i], e.pairs[i].value, e.pairs[i].vlen))
			return -EINVAL;
	return 0;
}
