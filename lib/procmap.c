/* /proc/PID/maps parser: one entry per line, paths kept in place in a private copy of the text. */
#include "procmap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Parses hex digits at *p (at least one, at most 16) into *v; advances *p. */
static bool parse_hex(char **p, uint64_t *v)
{
	char *s = *p;
	uint64_t x = 0;
	int n = 0;

	for (;; s++, n++) {
		int d;
		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (n == 16)
			return false;
		x = x << 4 | d;
	}
	*p = s;
	*v = x;
	return n > 0;
}

/* Parses decimal digits at *p into *v; advances *p. */
static bool parse_dec(char **p, uint64_t *v)
{
	char *s = *p;
	uint64_t x = 0;

	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++)
		x = x * 10 + (*s - '0');
	*p = s;
	*v = x;
	return true;
}

/* Consumes the character c at *p. */
static bool expect(char **p, char c)
{
	if (**p != c)
		return false;
	(*p)++;
	return true;
}

/* Classifies a path (already without " (deleted)"). */
static enum procmap_kind kind_of_path(const char *path)
{
	if (!*path)
		return PROCMAP_ANON;
	if (path[0] != '[')
		return PROCMAP_FILE;
	if (!strcmp(path, "[vdso]"))
		return PROCMAP_VDSO;
	if (!strcmp(path, "[heap]"))
		return PROCMAP_HEAP;
	if (!strncmp(path, "[stack", 6))
		return PROCMAP_STACK;
	if (!strcmp(path, "[vsyscall]"))
		return PROCMAP_VSYSCALL;
	return PROCMAP_PSEUDO;
}

/* Parses the "rwxp" field at *p into e. */
static bool parse_perms(char **p, struct procmap_entry *e)
{
	char *s = *p;

	if ((s[0] != 'r' && s[0] != '-') || (s[1] != 'w' && s[1] != '-') ||
	    (s[2] != 'x' && s[2] != '-') || (s[3] != 'p' && s[3] != 's'))
		return false;
	e->r = s[0] == 'r';
	e->w = s[1] == 'w';
	e->x = s[2] == 'x';
	e->shared = s[3] == 's';
	*p = s + 4;
	return true;
}

/* Sets e->path from the rest of the line at s (NUL-terminated in place). */
static void parse_path(char *s, struct procmap_entry *e)
{
	static const char deleted[] = " (deleted)";
	size_t n;

	while (*s == ' ' || *s == '\t')
		s++;
	n = strlen(s);
	if (n >= sizeof(deleted) - 1 && !strcmp(s + n - (sizeof(deleted) - 1), deleted)) {
		s[n - (sizeof(deleted) - 1)] = 0;
		e->deleted = true;
	}
	e->path = s;
	e->kind = kind_of_path(s);
}

/* Parses one NUL-terminated maps line into e. */
static bool parse_line(char *s, struct procmap_entry *e)
{
	uint64_t major, minor;

	memset(e, 0, sizeof(*e));
	if (!parse_hex(&s, &e->start) || !expect(&s, '-') || !parse_hex(&s, &e->end) ||
	    !expect(&s, ' ') || !parse_perms(&s, e) || !expect(&s, ' ') ||
	    !parse_hex(&s, &e->offset) || !expect(&s, ' ') || !parse_hex(&s, &major) ||
	    !expect(&s, ':') || !parse_hex(&s, &minor) || !expect(&s, ' ') ||
	    !parse_dec(&s, &e->inode))
		return false;
	if (*s && *s != ' ' && *s != '\t')
		return false;
	if (e->end < e->start)
		return false;
	e->dev_major = major;
	e->dev_minor = minor;
	parse_path(s, e);
	return true;
}

/* Appends a zeroed entry slot; returns it or NULL. */
static struct procmap_entry *push_entry(struct procmap *m)
{
	if (m->n == m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 64;
		struct procmap_entry *n = realloc(m->entries, ncap * sizeof(*n));
		if (!n)
			return NULL;
		m->entries = n;
		m->cap = ncap;
	}
	return &m->entries[m->n++];
}

/* Orders entries by start address. */
static int entry_cmp(const void *a, const void *b)
{
	const struct procmap_entry *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Parses the NUL-terminated text in buf, which m takes over. */
static int parse_owned(struct procmap *m, char *buf)
{
	bool sorted = true;
	char *line = buf;

	memset(m, 0, sizeof(*m));
	m->buf = buf;
	while (*line) {
		char *nl = strchr(line, '\n');
		char *next = nl ? nl + 1 : line + strlen(line);
		if (nl)
			*nl = 0;
		if (*line) {
			struct procmap_entry *e = push_entry(m);
			if (!e) {
				procmap_release(m);
				return -ENOMEM;
			}
			if (!parse_line(line, e)) {
				procmap_release(m);
				return -EINVAL;
			}
			sorted = sorted && (m->n < 2 || e[-1].start <= e->start);
		}
		line = next;
	}
	if (!sorted)
		qsort(m->entries, m->n, sizeof(*m->entries), entry_cmp);
	return 0;
}

int procmap_parse(struct procmap *m, const char *text, size_t len)
{
	char *buf = malloc(len + 1);

	memset(m, 0, sizeof(*m));
	if (!buf)
		return -ENOMEM;
	memcpy(buf, text, len);
	buf[len] = 0;
	if (memchr(buf, 0, len)) {
		free(buf);
		return -EINVAL;
	}
	return parse_owned(m, buf);
}

/* Reads all of fd into a NUL-terminated malloc'd buffer; 0 or -errno. */
static int read_all(int fd, char **out)
{
	size_t cap = 16384, n = 0;
	char *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (cap - n < 4096) {
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = -errno;
			free(buf);
			return err;
		}
		if (r == 0)
			break;
		n += r;
	}
	buf[n] = 0;
	*out = buf;
	return 0;
}

int procmap_read(struct procmap *m, pid_t pid)
{
	char path[64], *buf = NULL;
	int fd, err;

	memset(m, 0, sizeof(*m));
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = read_all(fd, &buf);
	close(fd);
	if (err)
		return err == -ESRCH ? -ENOENT : err;
	return parse_owned(m, buf);
}

const struct procmap_entry *procmap_find(const struct procmap *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->entries[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= m->entries[lo - 1].end)
		return NULL;
	return &m->entries[lo - 1];
}

void procmap_release(struct procmap *m)
{
	free(m->entries);
	free(m->buf);
	memset(m, 0, sizeof(*m));
}
