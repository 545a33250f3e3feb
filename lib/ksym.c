/* /proc/kallsyms reader: one pass over the text in place, a sort when needed, one entry per
 * address. */
#include "ksym.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vec.h"

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
 * own lookup names (srso_alias_untrain_ret, not _stext; __do_sys_getpid, not
 * __ia32_sys_getpid), and the names must not depend on which source is read. */
static int sym_cmp(const void *pa, const void *pb, void *arg)
{
	const struct ksym_symbol *a = pa, *b = pb;

	(void)arg;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a->name < b->name ? -1 : a->name > b->name;
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

int ksym_load(struct ksym *k, const char *path)
{
	size_t len = 0;
	int err;

	memset(k, 0, sizeof(*k));
	err = read_file(path ? path : "/proc/kallsyms", &k->buf, &len);
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

void ksym_release(struct ksym *k)
{
	free(k->syms);
	free(k->modules);
	free(k->buf);
	memset(k, 0, sizeof(*k));
}

int ksym_lookup(const struct ksym *k, uint64_t addr, const char **name, const char **module)
{
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
	return 0;
}
