/* Kernel symbols: the kernel's own lookup asked per address (cached), or the /proc/kallsyms
 * reader (one pass over the text in place, a sort when needed, one entry per address). */
#include "symbolize/ksym.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/hash.h"
#include "base/hashtab.h"
#include "symbolize/ksym_bpf.h"
#include "base/vec.h"

/* Reads all of path into a NUL-terminated malloc'd buffer; 0 or -errno. */
static int read_file(const char *path, char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 1 << 20, n = 0;
	char *buf;

	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	while (buf) {
		if (cap - n < 65536 && VEC_GROW(buf, cap, cap * 2))
			break;
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			int err = r < 0 ? -errno : 0;
			close(fd);
			if (err) {
				free(buf);
				return err;
			}
			buf[n] = 0;
			*out = buf;
			*len = n;
			return 0;
		}
		n += r;
	}
	free(buf);
	close(fd);
	return -ENOMEM;
}

/* Value of a hex digit, or -1. */
static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Returns the module index + 1 for name, adding the module when new; 0 on -ENOMEM. */
static uint32_t module_index(struct ksym *k, const char *name, size_t *cap)
{
	for (size_t i = k->nmodules; i-- > 0;)
		if (!strcmp(k->modules[i].name, name))
			return i + 1;
	if (VEC_GROW(k->modules, *cap, k->nmodules + 1))
		return 0;
	k->modules[k->nmodules] = (struct ksym_module){ name, UINT64_MAX, 0 };
	return ++k->nmodules;
}

/* One parsed line. */
struct kline {
	uint64_t addr;
	char type;
	char *name, *module; /* NUL-terminated in place; module NULL for core */
};

/* Parses the line at s (up to '\n' or NUL) into l; returns the start of the next line, or NULL
 * when the line is malformed. */
static char *parse_line(char *s, struct kline *l)
{
	int d, n = 0;

	l->addr = 0;
	for (; (d = hexval(*s)) >= 0; s++, n++)
		l->addr = l->addr << 4 | d;
	if (n == 0 || n > 16 || s[0] != ' ' || !s[1] || s[2] != ' ')
		return NULL;
	l->type = s[1];
	l->name = s + 3;
	l->module = NULL;
	s = l->name + strcspn(l->name, "\t\n");
	if (*s == '\t') {
		*s++ = 0;
		char *e = s + strcspn(s, "\n");
		char *next = *e ? e + 1 : e;
		*e = 0;
		if (s[0] == '[' && e > s + 1 && e[-1] == ']') {
			e[-1] = 0;
			s++;
		}
		l->module = s;
		return next;
	}
	char *next = *s ? s + 1 : s;
	*s = 0;
	return next;
}

/* Appends a symbol slot; NULL on -ENOMEM. */
static struct ksym_symbol *push_sym(struct ksym *k, size_t *cap)
{
	if (VEC_GROW(k->syms, *cap, k->nsyms + 1))
		return NULL;
	return &k->syms[k->nsyms++];
}

/* Adds one parsed text symbol. */
static int add_line(struct ksym *k, const struct kline *l, size_t *scap, size_t *mcap)
{
	uint32_t mod = 0;

	if (l->module) {
		mod = module_index(k, l->module, mcap);
		if (!mod)
			return -ENOMEM;
	}
	struct ksym_symbol *sym = push_sym(k, scap);
	if (!sym)
		return -ENOMEM;
	*sym = (struct ksym_symbol){ l->addr, (uint32_t)(l->name - k->buf), mod };
	return 0;
}

/* Parses every line of k->buf into k->syms. */
static int parse_all(struct ksym *k)
{
	size_t scap = 0, mcap = 0;
	char *s = k->buf;

	while (*s) {
		struct kline l;
		if (*s == '\n') {
			s++;
			continue;
		}
		s = parse_line(s, &l);
		if (!s)
			return -EINVAL;
		if (l.type != 't' && l.type != 'T' && l.type != 'w' && l.type != 'W')
			continue;
		int err = add_line(k, &l, &scap, &mcap);
		if (err)
			return err;
	}
	return 0;
}

/* Orders by address; at one address, in the file's order: the kernel lists first the alias its
 * own lookup names (srso_alias_untrain_ret, not __pi__text; __do_sys_getpid, not
 * __ia32_sys_getpid), and the names must not depend on which source is read. */
static int sym_cmp(const void *pa, const void *pb, void *arg)
{
	const struct ksym_symbol *a = pa, *b = pb;

	(void)arg;
	return CMP3(a->addr, b->addr) ?: CMP3(a->name, b->name);
}

/* Widens the address range of the symbol's module (or of the core kernel) to cover it. */
static void widen_range(struct ksym *k, const struct ksym_symbol *s)
{
	uint64_t *start = s->module ? &k->modules[s->module - 1].start : &k->core_start;
	uint64_t *end = s->module ? &k->modules[s->module - 1].end : &k->core_end;

	if (s->addr < *start)
		*start = s->addr;
	if (s->addr + 1 > *end)
		*end = s->addr + 1;
}

/* Sorts (when needed), keeps the preferred symbol of each address and sets module ranges. */
static void finish(struct ksym *k)
{
	bool sorted = true;
	size_t n = 0;

	for (size_t i = 1; i < k->nsyms && sorted; i++)
		sorted = k->syms[i - 1].addr <= k->syms[i].addr;
	if (!sorted)
		qsort_r(k->syms, k->nsyms, sizeof(*k->syms), sym_cmp, k->buf);
	k->core_start = UINT64_MAX;
	for (size_t i = 0; i < k->nsyms; i++) {
		struct ksym_symbol *s = &k->syms[i];
		if (n && k->syms[n - 1].addr == s->addr) {
			if (sym_cmp(s, &k->syms[n - 1], k->buf) < 0)
				k->syms[n - 1] = *s;
		} else {
			k->syms[n++] = *s;
		}
		widen_range(k, s);
	}
	k->nsyms = n;
	if (k->core_start == UINT64_MAX)
		k->core_start = 0;
}

/* Replaces the file's text by just the names kept (symbols and modules): a few MB of kallsyms
 * text held for the whole recording become the third of it that is names. 0 or -ENOMEM (the
 * text stays). */
static int compact(struct ksym *k)
{
	size_t len = 0;

	for (size_t i = 0; i < k->nsyms; i++)
		len += strlen(k->buf + k->syms[i].name) + 1;
	for (size_t i = 0; i < k->nmodules; i++)
		len += strlen(k->modules[i].name) + 1;
	if (len > UINT32_MAX)
		return 0;
	char *nb = malloc(len ? len : 1), *p = nb;
	if (!nb)
		return -ENOMEM;
	for (size_t i = 0; i < k->nsyms; i++) {
		size_t n = strlen(k->buf + k->syms[i].name) + 1;
		memcpy(p, k->buf + k->syms[i].name, n);
		k->syms[i].name = (uint32_t)(p - nb);
		p += n;
	}
	for (size_t i = 0; i < k->nmodules; i++) {
		size_t n = strlen(k->modules[i].name) + 1;
		memcpy(p, k->modules[i].name, n);
		k->modules[i].name = p;
		p += n;
	}
	free(k->buf);
	k->buf = nb;
	struct ksym_symbol *ns = realloc(k->syms, (k->nsyms ? k->nsyms : 1) * sizeof(*ns));
	if (ns)
		k->syms = ns;
	return 0;
}

/* Whether some symbol has a non-zero address. */
static bool any_address(const struct ksym *k)
{
	for (size_t i = 0; i < k->nsyms; i++)
		if (k->syms[i].addr)
			return true;
	return false;
}

/* ---- the kernel's own lookup ---- */

#define ARENA_CHUNK 65536

/* What the kernel said of one address. */
struct live_entry {
	uint64_t addr;
	const char *name;   /* NULL: no symbol there */
	const char *module;
	uint64_t offset;
};

struct ksym_live {
	struct ksym_bpf *bpf;
	struct live_entry *entries;
	size_t nentries, cap;
	struct hashtab index;  /* addr -> entry */
	char **chunks;         /* names and module names, never moved */
	size_t nchunks, chunk_cap, used, size; /* used of size bytes in the last chunk */
	size_t bpf_module;     /* index of module "bpf" */
};

/* Copies s[0..n) (NUL added) into the arena; NULL on -ENOMEM. */
static const char *live_strdup(struct ksym_live *l, const char *s, size_t n)
{
	if (!l->nchunks || l->size - l->used < n + 1) {
		size_t size = n + 1 > ARENA_CHUNK ? n + 1 : ARENA_CHUNK;
		char *c = malloc(size);
		if (!c || VEC_GROW(l->chunks, l->chunk_cap, l->nchunks + 1)) {
			free(c);
			return NULL;
		}
		l->chunks[l->nchunks++] = c;
		l->used = 0;
		l->size = size;
	}
	char *d = l->chunks[l->nchunks - 1] + l->used;
	memcpy(d, s, n);
	d[n] = 0;
	l->used += n + 1;
	return d;
}

/* Adds a module that covers [start, end) (start UINT64_MAX: none yet); 0 or -ENOMEM. */
static int live_add_module(struct ksym *k, size_t *cap, const char *name, uint64_t start,
			   uint64_t end)
{
	const char *copy = live_strdup(k->live, name, strlen(name));

	if (!copy || VEC_GROW(k->modules, *cap, k->nmodules + 1))
		return -ENOMEM;
	k->modules[k->nmodules++] = (struct ksym_module){ copy, start, end };
	return 0;
}

/* The loaded modules from /proc/modules ("name size refs deps state 0xaddr"), then "bpf", the
 * module the kernel's kallsyms gives BPF programs. 0 or -ENOMEM. */
static int live_modules(struct ksym *k)
{
	FILE *f = fopen("/proc/modules", "re"); /* absent without CONFIG_MODULES */
	char line[512], name[64];
	unsigned long long size, addr;
	size_t cap = 0;
	int err = 0;

	while (f && !err && fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %llu %*s %*s %*s %llx", name, &size, &addr) == 3 && addr &&
		    size && addr + size > addr)
			err = live_add_module(k, &cap, name, addr, addr + size);
	if (f)
		fclose(f);
	k->live->bpf_module = k->nmodules;
	return err ? err : live_add_module(k, &cap, "bpf", UINT64_MAX, 0);
}

/* Opens the kernel's lookup into k (zeroed); 0 or -errno (k zeroed again). */
static int live_open(struct ksym *k)
{
	int err = -ENOMEM;

	if (!(k->live = calloc(1, sizeof(*k->live))))
		return err;
	if (!(k->live->bpf = ksym_bpf_open(&k->core_start, &k->core_end)))
		err = errno ? -errno : -EINVAL;
	else
		err = live_modules(k);
	if (err)
		ksym_release(k);
	return err;
}

/* Frees the lookup and its cache. */
static void live_free(struct ksym_live *l)
{
	if (!l)
		return;
	ksym_bpf_close(l->bpf);
	free(l->entries);
	hashtab_release(&l->index);
	for (size_t i = 0; i < l->nchunks; i++)
		free(l->chunks[i]);
	free(l->chunks);
	free(l);
}

/* Whether entry id is for address key. */
static bool live_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct ksym_live *l = ctx;

	return l->entries[id].addr == *(const uint64_t *)key;
}

/* The cached entry of addr, or NULL. */
static struct live_entry *live_find(const struct ksym_live *l, uint64_t addr)
{
	int64_t id = hashtab_find(&l->index, hash_mix64(addr), live_eq, l, &addr);

	return id < 0 ? NULL : &l->entries[id];
}

/* The module name the kernel's answer stands for: "bpf" for a nameless one outside the core
 * kernel (the kernel names no module for BPF programs), one of k->modules, or a copy of a module
 * loaded since ksym_load; NULL for the core kernel, or on -ENOMEM (*err set). */
static const char *live_module(struct ksym *k, uint64_t addr, const struct ksym_bpf_hit *h,
			       int *err)
{
	struct ksym_module *m = NULL;

	if (!h->module && addr >= k->core_start && addr < k->core_end)
		return NULL;
	if (!h->module)
		m = &k->modules[k->live->bpf_module];
	for (size_t i = 0; !m && i < k->nmodules; i++)
		if (!strcmp(k->modules[i].name, h->module))
			m = &k->modules[i];
	if (!m) {
		const char *copy = live_strdup(k->live, h->module, strlen(h->module));
		*err = copy ? 0 : -ENOMEM;
		return copy;
	}
	uint64_t start = addr - h->offset;
	if (start < m->start)
		m->start = start;
	if (start + h->size > m->end)
		m->end = start + h->size;
	return m->name;
}

/* Caches what the kernel said of addr; 0 or -ENOMEM. */
static int live_add(struct ksym *k, uint64_t addr, const struct ksym_bpf_hit *h)
{
	struct ksym_live *l = k->live;
	struct live_entry e = { addr, NULL, NULL, 0 };
	int err = 0;

	if (h->name) {
		e.module = live_module(k, addr, h, &err);
		e.name = err ? NULL : live_strdup(l, h->name, strlen(h->name));
		e.offset = h->offset;
		if (!e.name)
			return -ENOMEM;
	}
	if (VEC_GROW(l->entries, l->cap, l->nentries + 1) ||
	    hashtab_add(&l->index, hash_mix64(addr), (uint32_t)l->nentries))
		return -ENOMEM;
	l->entries[l->nentries++] = e;
	return 0;
}

/* Asks the kernel about the (distinct, uncached) batch[0..n) and caches the answers. */
static int live_ask(struct ksym *k, const uint64_t *batch, size_t n)
{
	struct ksym_bpf_hit hits[KSYM_BPF_BATCH];
	int err = ksym_bpf_lookup(k->live->bpf, batch, n, hits);

	k->runs++;
	for (size_t i = 0; !err && i < n; i++)
		err = live_add(k, batch[i], &hits[i]);
	return err;
}

int ksym_prepare(struct ksym *k, const uint64_t *addrs, size_t n)
{
	uint64_t batch[KSYM_BPF_BATCH];
	size_t nb = 0;
	int err = 0;

	for (size_t i = 0; k->live && !err && i < n; i++) {
		bool seen = live_find(k->live, addrs[i]);
		for (size_t j = 0; j < nb && !seen; j++)
			seen = batch[j] == addrs[i];
		if (!seen)
			batch[nb++] = addrs[i];
		if (nb == KSYM_BPF_BATCH || (nb && i == n - 1)) {
			err = live_ask(k, batch, nb);
			nb = 0;
		}
	}
	return err;
}

/* ksym_lookup_offset on the kernel's lookup. */
static int live_lookup(struct ksym *k, uint64_t addr, const char **name, const char **module,
		       uint64_t *offset)
{
	const struct live_entry *e = live_find(k->live, addr);

	if (!e && (ksym_prepare(k, &addr, 1) || !(e = live_find(k->live, addr))))
		return -ENOENT; /* not remembered: asked again next time */
	if (!e->name)
		return -ENOENT;
	if (name)
		*name = e->name;
	if (module)
		*module = e->module;
	if (offset)
		*offset = e->offset;
	return 0;
}

/* ---- the file ---- */

/* Reads kallsyms-format text from path into k (zeroed); 0 or -errno (k zeroed again). */
static int file_load(struct ksym *k, const char *path)
{
	size_t len = 0;
	int err;

	err = read_file(path, &k->buf, &len);
	if (!err && memchr(k->buf, 0, len))
		err = -EINVAL;
	if (!err)
		err = parse_all(k);
	if (!err && !k->nsyms)
		err = -ENOENT;
	if (!err && !any_address(k))
		err = -EPERM;
	if (err) {
		ksym_release(k);
		return err;
	}
	finish(k);
	compact(k); /* on -ENOMEM the text simply stays */
	return 0;
}

/* The one place the source is chosen: the kernel's lookup unless a file is named or it cannot
 * load (no CAP_BPF, an older kernel), then the file. */
int ksym_load(struct ksym *k, const char *path)
{
	memset(k, 0, sizeof(*k));
	if (!path) {
		int err = live_open(k);
		if (!err)
			return 0;
		diag(DIAG_INFO, "cannot load the kernel's symbol lookup: %s; reading "
		     "/proc/kallsyms", strerror(-err));
	}
	return file_load(k, path ? path : "/proc/kallsyms");
}

void ksym_release(struct ksym *k)
{
	live_free(k->live);
	free(k->syms);
	free(k->modules);
	free(k->buf);
	memset(k, 0, sizeof(*k));
}

int ksym_lookup_offset(struct ksym *k, uint64_t addr, const char **name, const char **module,
		       uint64_t *offset)
{
	if (k->live)
		return live_lookup(k, addr, name, module, offset);
	size_t lo = UPPER_BOUND(k->syms, k->nsyms, addr, addr);

	if (lo == 0)
		return -ENOENT;
	const struct ksym_symbol *s = &k->syms[lo - 1];
	bool last = lo == k->nsyms || k->syms[lo].module != s->module;
	if (last && addr - s->addr >= KSYM_LAST_SPAN)
		return -ENOENT;
	if (name)
		*name = k->buf + s->name;
	if (module)
		*module = s->module ? k->modules[s->module - 1].name : NULL;
	if (offset)
		*offset = addr - s->addr;
	return 0;
}

int ksym_lookup(struct ksym *k, uint64_t addr, const char **name, const char **module)
{
	return ksym_lookup_offset(k, addr, name, module, NULL);
}
