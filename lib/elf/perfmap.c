/* /tmp/perf-PID.map reader: one pass over the text, names copied into one buffer, entries sorted
 * by start; lookups look back over the few entries that can overlap. */
#include "elf/perfmap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/vec.h"

/* How far a lookup looks back for an overlapping (older or longer) entry. */
#define LOOKBACK 64

/* Parses a hex number (optional 0x) at *s, followed by one space; advances *s. */
static bool parse_hex(const char **s, const char *end, uint64_t *v)
{
	const char *p = *s;
	uint64_t x = 0;
	int n = 0;

	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (; p < end && n <= 16; p++, n++) {
		int d = *p >= '0' && *p <= '9' ? *p - '0'
			: *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
			: *p >= 'A' && *p <= 'F' ? *p - 'A' + 10 : -1;
		if (d < 0)
			break;
		x = x << 4 | d;
	}
	if (n == 0 || n > 16 || p == end || *p != ' ')
		return false;
	*s = p + 1;
	*v = x;
	return true;
}

/* Appends an entry and its name; 0 or -ENOMEM. */
static int push(struct perfmap *m, size_t *cap, size_t *ncap, uint64_t start, uint64_t size,
		const char *name, size_t len)
{
	if (VEC_GROW(m->entries, *cap, m->n + 1) ||
	    VEC_GROW(m->names, *ncap, m->names_len + len + 1))
		return -ENOMEM;
	memcpy(m->names + m->names_len, name, len);
	m->names[m->names_len + len] = 0;
	uint64_t end = start + size < start ? UINT64_MAX : start + size;
	m->entries[m->n] = (struct perfmap_entry){ start, end, (uint32_t)m->n, (uint32_t)m->names_len };
	m->n++;
	m->names_len += len + 1;
	return 0;
}

/* Orders entries by start, then by line. */
static int entry_cmp(const void *a, const void *b)
{
	const struct perfmap_entry *x = a, *y = b;

	return CMP3(x->start, y->start) ?: CMP3(x->seq, y->seq);
}

int perfmap_parse(struct perfmap *m, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	size_t cap = 0, ncap = 0;

	memset(m, 0, sizeof(*m));
	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		if (!nl)
			break; /* a line still being written */
		const char *s = p;
		uint64_t start, size;
		if (nl > p && parse_hex(&s, nl, &start) && parse_hex(&s, nl, &size) && s < nl && size) {
			if (push(m, &cap, &ncap, start, size, s, nl - s)) {
				perfmap_release(m);
				return -ENOMEM;
			}
		} else if (nl > p) {
			m->bad_lines++;
		}
		p = nl + 1;
	}
	if (m->n > 1)
		qsort(m->entries, m->n, sizeof(*m->entries), entry_cmp);
	return 0;
}

int perfmap_read_fd(struct perfmap *m, int fd, size_t max)
{
	size_t cap = max < (1 << 16) ? max + 1 : 1 << 16, n = 0;
	char *buf = malloc(cap);

	memset(m, 0, sizeof(*m));
	while (buf) {
		if (n == cap && n < max + 1 && vec_grow_max((void **)&buf, &cap, cap + 1, 1, max + 1))
			break; /* doubles, up to max + 1 bytes */
		ssize_t r = n < cap ? pread(fd, buf + n, cap - n, n) : 0;
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			/* one byte past max tells a map of exactly max bytes from a longer one */
			bool cut = n > max;
			int err = r < 0 ? -errno : perfmap_parse(m, buf, cut ? max : n);
			m->truncated = !err && cut;
			free(buf);
			return err;
		}
		n += r;
	}
	free(buf);
	return -ENOMEM;
}

void perfmap_release(struct perfmap *m)
{
	free(m->entries);
	free(m->names);
	memset(m, 0, sizeof(*m));
}

int perfmap_lookup(const struct perfmap *m, uint64_t addr, const char **name, uint64_t *start)
{
	size_t lo = UPPER_BOUND(m->entries, m->n, start, addr);
	const struct perfmap_entry *best = NULL;

	for (size_t i = lo, k = 0; i-- > 0 && k < LOOKBACK; k++) {
		const struct perfmap_entry *e = &m->entries[i];
		if (addr < e->end && (!best || e->seq > best->seq))
			best = e;
	}
	if (!best)
		return -ENOENT;
	if (name)
		*name = m->names + best->name;
	if (start)
		*start = best->start;
	return 0;
}
