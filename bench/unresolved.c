/* Symbolization coverage of a recording: the share of stack frames (weighted by samples) that
 * stayed unresolved, by the reason their location tells:
 *   unknown mapping, other frames resolved: an address outside the process's snapshot
 *     (mapped after it: JIT code, a library loaded later), or a bad return address;
 *   unknown mapping, no frame resolved: a process never snapshotted (gone before its first
 *     sample was handled);
 *   anonymous memory: JIT code without a perf map entry;
 *   heap / stack / other pseudo mapping: not code (a frame-pointer walk through code without
 *     frame pointers read a wrong return address);
 *   ELF file without a symbol there: stripped binary without debug information, or a gap;
 *   kernel: no kallsyms symbol.
 * usage: unresolved PROFILE   (what firn record wrote)
 * Also prints the top mappings of the file and unknown rows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/input.h"
#include "model/profile.h"

enum why { W_UNKNOWN_OTHERS, W_UNKNOWN_ALONE, W_ANON, W_PSEUDO, W_FILE, W_KERNEL, W_NR };

static const char *const why_names[W_NR] = {
	"unknown mapping, other frames of the stack resolved (mapped after the snapshot, "
	"or a bad return address)",
	"unknown mapping, no frame of the stack resolved (process not snapshotted)",
	"anonymous executable memory without a perf map entry (JIT)",
	"heap, stack or another non-code mapping (bad return address)",
	"ELF file without a symbol there (stripped, no debug information)",
	"kernel address without a kallsyms symbol",
};

/* Per-mapping unresolved weight, for the top list. */
struct mcount {
	uint64_t weight;
	enum why why;
};

/* Why a location without lines is unresolved. */
static enum why classify(const struct profile *p, const struct profile_location *l, bool others)
{
	const struct profile_mapping *m = l->mapping_id ? &p->mappings[l->mapping_id - 1] : NULL;
	const char *name = m ? profile_str(p, m->filename) : "[unknown]";

	if (m && m->kind == FRAME_KERNEL)
		return W_KERNEL;
	if (!strcmp(name, "[unknown]"))
		return others ? W_UNKNOWN_OTHERS : W_UNKNOWN_ALONE;
	if (m && m->kind == FRAME_JIT)
		return W_ANON;
	if (name[0] == '[')
		return W_PSEUDO;
	return W_FILE;
}

int main(int argc, char **argv)
{
	struct profile p;
	uint64_t total = 0, unresolved = 0, by[W_NR] = { 0 };

	if (argc != 2 || profile_init(&p) || profile_load(&p, argv[1], NULL)) {
		fprintf(stderr, "usage: unresolved PROFILE\n");
		return 2;
	}
	struct mcount *mc = calloc(p.strings.n + 1, sizeof(*mc)); /* by mapping file name */
	uint32_t vi = profile_value_index(&p);
	for (uint64_t i = 0; i < p.nsamples; i++) {
		const struct profile_sample *s = &p.samples[i];
		uint64_t w = s->values[vi];
		bool others = false;
		for (uint32_t j = 0; j < s->nlocs; j++)
			others |= p.locations[s->location_ids[j] - 1].nlines > 0;
		for (uint32_t j = 0; j < s->nlocs; j++) {
			const struct profile_location *l = &p.locations[s->location_ids[j] - 1];
			total += w;
			if (l->nlines)
				continue;
			enum why why = classify(&p, l, others);
			unresolved += w;
			by[why] += w;
			uint32_t f = l->mapping_id ? p.mappings[l->mapping_id - 1].filename : 0;
			mc[f].weight += w;
			mc[f].why = why;
		}
	}
	printf("frames: %llu, unresolved: %llu (%.2f %%)\n", (unsigned long long)total,
	       (unsigned long long)unresolved, total ? 100.0 * unresolved / total : 0.0);
	for (int k = 0; k < W_NR; k++)
		printf("  %6.2f %%  %s\n", total ? 100.0 * by[k] / total : 0.0, why_names[k]);
	printf("largest unresolved mappings:\n");
	for (int top = 0; top < 12; top++) {
		uint64_t best = 0, bi = 0;
		for (uint64_t i = 0; i <= p.strings.n; i++)
			if (mc[i].weight > best)
				best = mc[i].weight, bi = i;
		if (!best)
			break;
		printf("  %6.2f %%  %s\n", 100.0 * best / total,
		       bi ? profile_str(&p, bi) : "(no mapping)");
		mc[bi].weight = 0;
	}
	free(mc);
	profile_release(&p);
	return 0;
}
