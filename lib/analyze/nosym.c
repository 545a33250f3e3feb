/* Files without symbols for the code a profile sampled; see nosym.h. */
#include "analyze/nosym.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/debugpkg_cache.h"

#define COMMENT_KEY "debug package: "

/* Whether location l (in a file's mapping m) is code its file has no symbol for: no line, or
 * the bounds' name "BASENAME+0x...". */
static bool unnamed_in_file(const struct profile *p, const struct profile_location *l,
			    const struct profile_mapping *m)
{
	const char *file = profile_str(p, m->filename);

	if (m->kind != FRAME_USER || m->runtime != FRAME_NATIVE || file[0] != '/')
		return false;
	if (!l->nlines)
		return true;
	const struct profile_line *outer = &l->lines[l->nlines - 1];
	if (!outer->function_id || outer->function_id > p->nfunctions)
		return false;
	const char *name = profile_str(p, p->functions[outer->function_id - 1].name);
	const char *base = strrchr(file, '/') + 1;
	size_t n = strlen(base);
	return *base && !strncmp(name, base, n) && !strncmp(name + n, "+0x", 3);
}

/* The mapping of each location without a symbol (0: it has one, or no file). */
static uint64_t *unnamed_mappings(const struct profile *p)
{
	uint64_t *of = calloc(p->nlocations + 1, sizeof(*of));

	for (uint64_t i = 0; of && i < p->nlocations; i++) {
		const struct profile_location *l = &p->locations[i];
		if (l->mapping_id && l->mapping_id <= p->nmappings &&
		    unnamed_in_file(p, l, &p->mappings[l->mapping_id - 1]))
			of[i + 1] = l->mapping_id;
	}
	return of;
}

/* The first mapping of the file of mapping id (mappings of one file count as one). */
static uint64_t file_mapping(const struct profile *p, uint64_t id)
{
	uint32_t name = p->mappings[id - 1].filename;

	for (uint64_t i = 0; i < id - 1; i++)
		if (p->mappings[i].filename == name)
			return i + 1;
	return id;
}

/* The value of each file's samples with a frame without a symbol, by its first mapping; each
 * sample counted once per file (seen: the last sample that counted for it). */
static int64_t *file_values(const struct profile *p, const uint64_t *of, uint32_t vi)
{
	int64_t *value = calloc(p->nmappings + 1, sizeof(*value));
	uint64_t *seen = calloc(p->nmappings + 1, sizeof(*seen));

	for (uint64_t s = 0; value && seen && s < p->nsamples; s++) {
		const struct profile_sample *sa = &p->samples[s];
		for (uint32_t k = 0; k < sa->nlocs; k++) {
			uint64_t loc = sa->location_ids[k];
			uint64_t m = loc <= p->nlocations ? of[loc] : 0;
			if (!m || seen[m = file_mapping(p, m)] == s + 1)
				continue;
			seen[m] = s + 1;
			value[m] += sa->values[vi];
		}
	}
	free(seen);
	if (!seen) {
		free(value);
		return NULL;
	}
	return value;
}

/* The package a comment names for file id name, or NULL. */
static const char *package_of(const struct profile *p, uint32_t name)
{
	const char *file = profile_str(p, name);
	size_t k = strlen(COMMENT_KEY);

	for (uint32_t i = 0; i < p->ncomments; i++) {
		const char *c = profile_str(p, p->comments[i]), *sp;
		if (!strncmp(c, COMMENT_KEY, k) && (sp = strchr(c + k, ' ')) && !strcmp(sp + 1, file))
			return c + k;
	}
	return NULL;
}

/* Orders files by value, largest first (then by string id, for a stable order). */
static int by_value(const void *a, const void *b)
{
	const struct nosym_file *x = a, *y = b;

	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return (x->filename > y->filename) - (x->filename < y->filename);
}

int nosym_files(const struct profile *p, uint32_t value_index, struct nosym_file *out, size_t max)
{
	uint64_t *of = unnamed_mappings(p);
	int64_t *value = of && value_index < p->nsample_types ? file_values(p, of, value_index) : NULL;
	struct nosym_file *all = calloc(p->nmappings + 1, sizeof(*all));
	size_t n = 0;

	free(of);
	if (!value || !all) {
		free(value);
		free(all);
		return p->nsample_types > value_index ? -ENOMEM : 0;
	}
	int64_t total = 0;
	for (uint64_t i = 0; i < p->nsamples; i++)
		total += p->samples[i].values[value_index];
	for (uint64_t m = 1; m <= p->nmappings; m++)
		if (value[m] > 0 && value[m] >= total / 100) /* 1 % */
			all[n++] = (struct nosym_file){ p->mappings[m - 1].filename, value[m], NULL };
	qsort(all, n, sizeof(*all), by_value);
	n = n < max ? n : max;
	for (size_t i = 0; i < n; i++) {
		out[i] = all[i];
		out[i].package = package_of(p, all[i].filename);
	}
	free(value);
	free(all);
	return (int)n;
}

int nosym_note_packages(struct profile *p, uint32_t value_index,
			const struct debugpkg_dirs *dirs, size_t max)
{
	struct nosym_file f[8];
	int n = nosym_files(p, value_index, f, max < 8 ? max : 8);
	char hint[160], line[4400];
	struct debugpkg_cache *cache = NULL;
	bool opened = false;

	for (int i = 0; i < n; i++) {
		const char *file = profile_str(p, f[i].filename);
		if (!f[i].package && !opened) { /* only when a file needs it; NULL: no cache */
			cache = debugpkg_cache_open_env();
			opened = true;
		}
		if (f[i].package || debugpkg_cache_find(cache, dirs, file, hint, sizeof(hint)) ||
		    (size_t)snprintf(line, sizeof(line), COMMENT_KEY "%s %s", hint, file) >= sizeof(line))
			continue;
		if (profile_add_comment(p, line)) {
			debugpkg_cache_close(cache);
			return -ENOMEM;
		}
	}
	debugpkg_cache_close(cache);
	return n < 0 ? n : 0;
}
