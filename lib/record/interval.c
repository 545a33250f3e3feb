/* Interval files: names from a strftime pattern, and the bound on how many stay (interval.h). */
#include "record/interval.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/vec.h"

bool interval_is_pattern(const char *output)
{
	for (const char *s = output; (s = strchr(s, '%')); s += 2) {
		if (s[1] != '%')
			return s[1] != 0;
	}
	return false;
}

int interval_files_init(struct interval_files *f, const char *pattern, size_t keep)
{
	memset(f, 0, sizeof(*f));
	f->keep = keep;
	return (f->pattern = strdup(pattern)) ? 0 : -ENOMEM;
}

/* Whether name was given out before in this run (among the names still held). */
static bool given_before(const struct interval_files *f, const char *name)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->names[i], name))
			return true;
	return false;
}

/* Where the "-N" goes in name: before the first '.' of its last component (not a leading one),
 * else at its end. */
static size_t suffix_at(const char *name)
{
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	const char *dot = strchr(base + (*base == '.'), '.');
	return dot ? (size_t)(dot - name) : strlen(name);
}

/* The first of name, name-2, name-3... that neither exists nor was given out. */
static char *free_name(const struct interval_files *f, const char *name)
{
	size_t at = suffix_at(name);
	struct stat st;
	char *cand = strdup(name);

	for (unsigned k = 2; cand && (given_before(f, cand) || !lstat(cand, &st)); k++) {
		free(cand);
		if (k > 100000) { /* every name taken: a pattern without a time in it */
			errno = EEXIST;
			return NULL;
		}
		if (asprintf(&cand, "%.*s-%u%s", (int)at, name, k, name + at) < 0)
			cand = NULL;
	}
	if (!cand && !errno)
		errno = ENOMEM;
	return cand;
}

char *interval_files_name(struct interval_files *f, int64_t start_ns)
{
	time_t t = (time_t)(start_ns / 1000000000);
	struct tm tm;
	char buf[PATH_MAX];

	if (!gmtime_r(&t, &tm)) {
		errno = EINVAL;
		return NULL;
	}
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral" /* the pattern is the user's, by design */
	size_t n = strftime(buf, sizeof(buf), f->pattern, &tm);
#pragma GCC diagnostic pop
	if (!n) { /* too long, or an empty expansion */
		errno = strlen(f->pattern) >= sizeof(buf) / 2 ? ENAMETOOLONG : EINVAL;
		return NULL;
	}
	errno = 0;
	return free_name(f, buf);
}

/* Forgets the oldest written file, removing it when rm; 0 or -errno of the unlink. */
static int remove_oldest(struct interval_files *f, bool rm)
{
	int err = rm && unlink(f->names[0]) && errno != ENOENT ? -errno : 0;

	free(f->names[0]);
	memmove(f->names, f->names + 1, (f->n - 1) * sizeof(*f->names));
	f->n--;
	if (err)
		f->remove_failed++;
	else
		f->removed += rm;
	return err;
}

int interval_files_add(struct interval_files *f, char *name)
{
	int err = 0;

	if (VEC_GROW(f->names, f->cap, f->n + 1)) {
		free(name);
		return -ENOMEM;
	}
	f->names[f->n++] = name;
	f->written++;
	while (f->keep && f->n > f->keep) {
		int e = remove_oldest(f, true);
		err = err ? err : e;
	}
	while (!f->keep && f->n > INTERVAL_NAMES_HELD) /* only to tell names given out */
		remove_oldest(f, false);
	return err;
}

void interval_files_release(struct interval_files *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->names[i]);
	free(f->names);
	free(f->pattern);
	memset(f, 0, sizeof(*f));
}
