/* Flame graph SVG writer with flamegraph.pl's geometry: sorted stacks, flow() merge, pruning. */
#include "format/flamegraph.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/escape.h"
#include "format/flamegraph_js.h"
#include "base/hash.h"
#include "base/hashtab.h"
#include "format/input.h"
#include "base/vec.h"

/* flamegraph.pl's fixed layout: paddings (in units of the font size) and the search color. */
#define XPAD 10
#define FRAMEPAD 1
#define SEARCHCOLOR "rgb(230,0,230)"

/* flamegraph.pl's defaults, firn's default scheme. */
void flamegraph_opts_init(struct flamegraph_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->width = 1200;
	o->height = 16;
	o->minwidth = 0.1;
	o->colors = FLAME_COLORS_DEFAULT;
	o->countname = "samples";
	o->nametype = "Function:";
	o->value_index = -1;
	o->annotate = true;
	o->fonttype = "Verdana";
	o->fontsize = 12;
	o->fontwidth = 0.59;
}

static const char *const color_names[FLAME_COLORS_COUNT] = {
	"default", "hot", "mem", "io", "red", "green", "blue", "aqua", "yellow", "purple", "orange",
	"diff",
};

/* Scheme by name. */
int flame_colors_parse(const char *s)
{
	for (int i = 0; i < FLAME_COLORS_COUNT; i++)
		if (!strcmp(s, color_names[i]))
			return i;
	return -1;
}

/* Name of a scheme. */
const char *flame_colors_name(enum flame_colors c)
{
	return (unsigned)c < FLAME_COLORS_COUNT ? color_names[c] : "?";
}

/* ---- colors ---- */

/* Decodes one UTF-8 code point at s[i] (an invalid byte counts as one character);
 * returns the index after it and stores the code point in *cp. */
static size_t utf8_next(const char *s, size_t len, size_t i, uint32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned c = u[i];
	unsigned need = c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2
		      : c >= 0xf0 && c <= 0xf4 ? 3 : 0;
	uint32_t v = need == 3 ? c & 7 : need == 2 ? c & 15 : c & 31;

	if (!need || i + need >= len) {
		*cp = c;
		return i + 1;
	}
	for (unsigned k = 1; k <= need; k++) {
		if ((u[i + k] & 0xc0) != 0x80) {
			*cp = c;
			return i + 1;
		}
		v = v << 6 | (u[i + k] & 0x3f);
	}
	if ((need == 2 && (v < 0x800 || (v >= 0xd800 && v < 0xe000))) ||
	    (need == 3 && (v < 0x10000 || v > 0x10ffff))) {
		*cp = c;
		return i + 1;
	}
	*cp = v;
	return i + need + 1;
}

/* flamegraph.pl's namehash over code points cps[0..n): weights the first three characters. */
static double namehash_cps(const uint32_t *cps, size_t n)
{
	double vector = 0, weight = 1, max = 1;
	unsigned mod = 10;

	/* a module prefix ("lib`func") is dropped up to the first backtick after the first char */
	for (size_t i = 1; i < n; i++)
		if (cps[i] == '`') {
			cps += i + 1;
			n -= i + 1;
			break;
		}
	for (size_t i = 0; i < n; i++) {
		vector += (double)(cps[i] % mod) / (mod - 1) * weight;
		mod++;
		max += weight;
		weight *= 0.70;
		if (mod > 12)
			break;
	}
	return 1 - vector / max;
}

/* namehash of a name and of its reverse (flamegraph.pl's v1 and v2 = v3). */
static void namehash_pair(const char *name, size_t len, double *fwd, double *rev)
{
	uint32_t small[64] = { 0 }, *cps = small;
	size_t n = 0;

	if (len > 64 && !(cps = malloc(len * sizeof(*cps))))
		cps = small, len = 64; /* out of memory: hash a prefix, still deterministic */
	for (size_t i = 0; i < len;)
		i = utf8_next(name, len, i, &cps[n++]);
	*fwd = namehash_cps(cps, n);
	for (size_t i = 0; i < n / 2; i++) {
		uint32_t c = cps[i];
		cps[i] = cps[n - 1 - i];
		cps[n - 1 - i] = c;
	}
	*rev = namehash_cps(cps, n);
	if (cps != small)
		free(cps);
}

/* Sets rgb. */
static void rgb_set(uint8_t rgb[3], int r, int g, int b)
{
	rgb[0] = r;
	rgb[1] = g;
	rgb[2] = b;
}

/* The single-hue palettes (flamegraph.pl's red ... orange), as data: channel i of a color is
 * base[i] + (int)(span[i] * v1). */
static const struct flat_hue {
	uint8_t base[3], span[3];
} flat_hues[FLAME_COLORS_COUNT] = {
	[FLAME_COLORS_RED] = { { 200, 50, 50 }, { 55, 80, 80 } },
	[FLAME_COLORS_GREEN] = { { 50, 200, 50 }, { 60, 55, 60 } },
	[FLAME_COLORS_BLUE] = { { 80, 80, 205 }, { 60, 60, 50 } },
	[FLAME_COLORS_AQUA] = { { 50, 165, 165 }, { 60, 55, 55 } },
	[FLAME_COLORS_YELLOW] = { { 175, 175, 50 }, { 55, 55, 20 } },
	[FLAME_COLORS_PURPLE] = { { 190, 80, 190 }, { 65, 60, 65 } },
	[FLAME_COLORS_ORANGE] = { { 190, 90, 0 }, { 65, 65, 0 } },
};

/* A single-hue palette's color from v1 (a scheme without a row of its own: red). */
static void color_flat(enum flame_colors c, double v1, uint8_t rgb[3])
{
	const struct flat_hue *h = &flat_hues[FLAME_COLORS_RED];

	if ((unsigned)c < FLAME_COLORS_COUNT && flat_hues[c].base[0])
		h = &flat_hues[c];
	for (int i = 0; i < 3; i++)
		rgb[i] = h->base[i] + (int)(h->span[i] * v1);
}

/* The palette firn's default scheme uses for a frame kind. */
static enum flame_colors kind_palette(enum frame_kind kind)
{
	switch ((int)kind) {
	case FRAME_KERNEL:
		return FLAME_COLORS_ORANGE;
	case FRAME_JIT:
	case FLAME_KIND_JAVASCRIPT: /* JIT code, named */
	case FLAME_KIND_JAVA:
		return FLAME_COLORS_GREEN;
	case FRAME_INLINE:
		return FLAME_COLORS_AQUA;
	case FLAME_KIND_PYTHON:
		return FLAME_COLORS_YELLOW;
	case FLAME_KIND_GPU:
		return FLAME_COLORS_PURPLE;
	default:
		return FLAME_COLORS_RED;
	}
}

/* flamegraph.pl's color() with --hash, the default scheme picking a palette by kind. */
void flame_color_of(enum flame_colors c, const char *name, size_t len, enum frame_kind kind,
		    uint8_t rgb[3])
{
	double v1, v2;

	namehash_pair(name, len, &v1, &v2);
	switch (c) {
	case FLAME_COLORS_HOT:
		rgb_set(rgb, 205 + (int)(50 * v2), (int)(230 * v1), (int)(55 * v2));
		break;
	case FLAME_COLORS_MEM:
		rgb_set(rgb, 0, 190 + (int)(50 * v2), (int)(210 * v1));
		break;
	case FLAME_COLORS_IO:
		rgb_set(rgb, 80 + (int)(60 * v1), 80 + (int)(60 * v1), 190 + (int)(55 * v2));
		break;
	case FLAME_COLORS_DEFAULT:
	case FLAME_COLORS_DIFF:
		color_flat(kind_palette(kind), v1, rgb);
		break;
	default:
		color_flat(c, v1, rgb);
		break;
	}
}

/* flamegraph.pl's color_scale: white, to red as delta grows, to blue as it shrinks. */
static void color_scale(int64_t delta, int64_t maxdelta, uint8_t rgb[3])
{
	rgb_set(rgb, 255, 255, 255);
	if (delta > 0)
		rgb[1] = rgb[2] = (int)(210.0 * (maxdelta - delta) / maxdelta);
	else if (delta < 0)
		rgb[0] = rgb[1] = (int)(210.0 * (maxdelta + delta) / maxdelta);
}

/* ---- the tree: distinct stacks over (name, kind) keys ---- */

static const char *const kind_suffix[FLAME_NKINDS] = { "", "_[k]", "_[j]", "_[i]", "", "", "", "" };

/* An empty tree over names. */
int flame_tree_init(struct flame_tree *t, struct strtab *names)
{
	memset(t, 0, sizeof(*t));
	t->names = names;
	return 0;
}

/* Frees what the tree owns (not its names). */
void flame_tree_release(struct flame_tree *t)
{
	FREE_ALL(t->key_name, t->key_kind, t->key_of, t->frames, t->stacks, t->rank);
	memset(t, 0, sizeof(*t));
}


/* Adds key (name, kind) to the key table; returns its index or -ENOMEM. */
static int64_t tree_new_key(struct flame_tree *t, uint32_t name, enum frame_kind kind)
{
	if (VEC_GROW(t->key_name, t->cap_keys, (size_t)t->nkeys + 1) ||
	    VEC_GROW(t->key_kind, t->cap_kinds, (size_t)t->nkeys + 1))
		return -ENOMEM;
	t->key_name[t->nkeys] = name;
	t->key_kind[t->nkeys] = kind;
	return t->nkeys++;
}

/* Returns the key index of (name, kind), adding it if new, or -ENOMEM. */
static int64_t tree_key(struct flame_tree *t, uint32_t name, enum frame_kind kind)
{
	size_t slot = (size_t)name * FLAME_NKINDS + kind % FLAME_NKINDS;

	if (slot >= t->key_of_len) {
		size_t len = ((size_t)t->names->n + 1) * FLAME_NKINDS;
		if (VEC_GROW_ZEROED(t->key_of, t->key_of_len, len > slot ? len : slot + 4))
			return -ENOMEM;
	}
	if (t->key_of[slot])
		return t->key_of[slot] - 1;
	int64_t k = tree_new_key(t, name, kind % FLAME_NKINDS);
	if (k >= 0)
		t->key_of[slot] = k + 1;
	return k;
}

/* Appends a stack of already-made keys. */
static int tree_push_stack(struct flame_tree *t, const uint32_t *keys, size_t n, int64_t value,
			   int64_t base)
{
	if (VEC_GROW(t->frames, t->cap_frames, t->nframes + n) ||
	    VEC_GROW(t->stacks, t->cap_stacks, t->nstacks + 1))
		return -ENOMEM;
	if (n) /* an empty stack's keys may be NULL: memcpy(…, NULL, 0) is undefined */
		memcpy(t->frames + t->nframes, keys, n * sizeof(*keys));
	t->stacks[t->nstacks++] = (struct flame_stack){ t->nframes, n, value, base };
	t->nframes += n;
	if (n > t->maxlen)
		t->maxlen = n;
	t->total += value;
	t->base_total += base;
	t->has_base |= base > 0;
	t->sorted = false;
	return 0;
}

/* Adds a stack given as names and kinds. */
int flame_tree_add(struct flame_tree *t, const uint32_t *names, const enum frame_kind *kinds,
		   size_t n, int64_t value, int64_t base)
{
	uint32_t small[128], *keys = small;
	int err = 0;

	value = value > 0 ? value : 0;
	base = base > 0 ? base : 0;
	if (!value && !base)
		return 0;
	if (n > UINT32_MAX || (n > 128 && !(keys = malloc(n * sizeof(*keys)))))
		return -ENOMEM;
	for (size_t i = 0; i < n && !err; i++) {
		int64_t k = names[i] < t->names->n ? tree_key(t, names[i], kinds ? kinds[i] : FRAME_USER)
						   : -EINVAL;
		if (k < 0)
			err = (int)k;
		keys[i] = k;
	}
	if (!err)
		err = tree_push_stack(t, keys, n, value, base);
	if (keys != small)
		free(keys);
	return err;
}

/* A location's keys: 1 + where they start in loc_keys (0 until made) and how many. */
struct loc_ref {
	uint32_t first, n;
};

/* What turning samples into stacks needs between samples. */
struct sample_scratch {
	struct profile_frame *pf;
	size_t pf_cap;
	uint32_t *keys;
	size_t keys_cap;
	uint32_t *map;       /* p's string id -> t's + 1, when p->strings is not t->names */
	size_t map_len;
	int64_t comm_key;    /* string id of "comm" in p, or -1 */
	struct loc_ref *loc; /* per location id: its keys in loc_keys (side by side: one miss) */
	uint32_t *loc_keys;  /* the keys of each location's frames, outermost first */
	size_t loc_nkeys, loc_cap;
};

/* Returns the id in t->names of p's string id (interning it when the tables differ). */
static int64_t map_name(struct flame_tree *t, struct profile *p, struct sample_scratch *sc,
			uint32_t id)
{
	if (&p->strings == t->names)
		return id;
	if (id >= sc->map_len &&
	    VEC_GROW_ZEROED(sc->map, sc->map_len, p->strings.n > id ? p->strings.n : id + 1))
		return -ENOMEM;
	if (!sc->map[id]) {
		int64_t n = strtab_intern(t->names, profile_str(p, id), p->strings.lens[id]);
		if (n < 0)
			return n;
		sc->map[id] = n + 1;
	}
	return sc->map[id] - 1;
}

/* Appends the key of p's string id name with kind to sc->keys[*m]. */
static int push_key(struct flame_tree *t, struct profile *p, struct sample_scratch *sc,
		    uint32_t name, enum frame_kind kind, size_t *m)
{
	int64_t id = map_name(t, p, sc, name);
	int64_t k = id < 0 ? id : tree_key(t, id, kind);

	if (k < 0)
		return (int)k;
	sc->keys[(*m)++] = k;
	return 0;
}

/* The string id of sample s's "comm" label, or 0. */
static uint32_t sample_comm(const struct profile_sample *s, int64_t comm_key)
{
	for (uint32_t i = 0; comm_key > 0 && i < s->nlabels; i++)
		if (s->labels[i].key == comm_key && s->labels[i].str)
			return s->labels[i].str;
	return 0;
}

/* Appends sample s's comm frame: its "comm" label, or "[unknown]" as folded output has it. */
static int push_comm(struct flame_tree *t, struct profile *p, struct sample_scratch *sc,
		     const struct profile_sample *s, size_t *m)
{
	uint32_t comm = sample_comm(s, sc->comm_key);

	if (comm)
		return push_key(t, p, sc, comm, FRAME_USER, m);
	int64_t id = strtab_intern(t->names, "[unknown]", 9);
	int64_t k = id < 0 ? id : tree_key(t, id, FRAME_USER);
	if (k < 0)
		return (int)k;
	sc->keys[(*m)++] = k;
	return 0;
}

/* The kind a tree gives frame f: FLAME_KIND_PYTHON or _GPU for a user frame of a runtime's
 * mapping (its runtime: colored apart), else its own kind or, unannotated, user. */
static enum frame_kind tree_kind(const struct profile *p, const struct flamegraph_opts *o,
				 const struct profile_frame *f)
{
	const struct profile_mapping *m = f->mapping_id && f->mapping_id <= p->nmappings
		? &p->mappings[f->mapping_id - 1] : NULL;

	if (f->kind == FRAME_USER && m && m->runtime != FRAME_NATIVE)
		return (enum frame_kind)FLAME_KIND_OF_RUNTIME(m->runtime);
	return o->annotate ? f->kind : FRAME_USER;
}

/* Makes the keys of location id: its frames (inlined ones too), outermost first, as options o
 * draw them. With no_kernel a kernel location has none, nor have the frames inlined into it. */
static int cache_location(struct flame_tree *t, struct profile *p,
			  const struct flamegraph_opts *o, struct sample_scratch *sc, uint64_t id)
{
	struct profile_sample one = { .location_ids = &id, .nlocs = 1 };
	int64_t n = profile_frames(p, &one, &sc->pf, &sc->pf_cap);

	if (n < 0)
		return (int)n;
	if (o->no_kernel && p->locations[id - 1].kind == FRAME_KERNEL)
		n = 0;
	if (VEC_GROW(sc->loc_keys, sc->loc_cap, sc->loc_nkeys + n))
		return -ENOMEM;
	sc->loc[id] = (struct loc_ref){ sc->loc_nkeys + 1, n };
	for (int64_t i = 0; i < n; i++) {
		const struct profile_frame *f = &sc->pf[i];
		int64_t name = map_name(t, p, sc, f->name);
		int64_t k = name < 0 ? name : tree_key(t, name, tree_kind(p, o, f));
		if (k < 0)
			return (int)k;
		sc->loc_keys[sc->loc_nkeys++] = k;
	}
	return 0;
}

/* Turns sample s into keys in sc->keys as options o draw it; returns their count or -errno. */
static int64_t sample_keys(struct flame_tree *t, struct profile *p, const struct profile_sample *s,
			   const struct flamegraph_opts *o, struct sample_scratch *sc)
{
	size_t m = 0;
	int err = VEC_GROW(sc->keys, sc->keys_cap, 1);

	if (!err && o->comm_root)
		err = push_comm(t, p, sc, s, &m);
	for (uint32_t i = s->nlocs; i-- > 0 && !err;) {
		uint64_t id = s->location_ids[i];
		if (!id || id > p->nlocations)
			continue;
		if (!sc->loc[id].first && (err = cache_location(t, p, o, sc, id)))
			break;
		if ((err = VEC_GROW(sc->keys, sc->keys_cap, m + sc->loc[id].n)))
			break;
		for (uint32_t j = 0, first = sc->loc[id].first - 1; j < sc->loc[id].n; j++)
			sc->keys[m++] = sc->loc_keys[first + j];
	}
	if (err)
		return err;
	for (size_t i = 0; o->reverse && i < m / 2; i++) {
		uint32_t k = sc->keys[i];
		sc->keys[i] = sc->keys[m - 1 - i];
		sc->keys[m - 1 - i] = k;
	}
	return m;
}

/* Prefetches what sample_keys reads of sample s: its value and its locations. */
static void prefetch_sample(const struct profile_sample *s, int vi)
{
	__builtin_prefetch(&s->values[vi]);
	for (uint32_t i = 0; i < s->nlocs; i += 8)
		__builtin_prefetch(&s->location_ids[i]);
}

/* Adds every sample of p with a positive value. */
int flame_tree_add_profile(struct flame_tree *t, struct profile *p,
			   const struct flamegraph_opts *o, bool as_base)
{
	struct sample_scratch sc = { .comm_key = strtab_find(&p->strings, "comm", 4) };
	int vi = o->value_index < 0 ? (int)profile_value_index(p) : o->value_index;
	int err = 0;

	if (!p->nsample_types || (uint32_t)vi >= p->nsample_types)
		return -EINVAL;
	sc.loc = calloc(p->nlocations + 1, sizeof(*sc.loc));
	if (!sc.loc)
		err = -ENOMEM;
	for (uint64_t i = 0; i < p->nsamples && !err; i++) {
		const struct profile_sample *s = &p->samples[i];
		if (i + 2 < p->nsamples) /* each sample's arrays are a cache miss: fetch ahead */
			prefetch_sample(&p->samples[i + 2], vi);
		int64_t v = s->values[vi];
		if (v <= 0)
			continue;
		int64_t n = sample_keys(t, p, s, o, &sc);
		if (n < 0)
			err = (int)n;
		else
			err = tree_push_stack(t, sc.keys, n, as_base ? 0 : v, as_base ? v : 0);
	}
	free(sc.pf);
	free(sc.keys);
	free(sc.map);
	free(sc.loc);
	free(sc.loc_keys);
	return err;
}

/* ---- flamegraph.pl's order: the byte order of the folded lines ---- */

/* Byte i of a symbol's text (key sym / 2): name, annotation, then ';' when the frame has a
 * child in the line (sym odd) or ' ' before the count; -1 past that. */
static int sym_byte(const struct flame_tree *t, uint32_t sym, size_t i)
{
	uint32_t key = sym >> 1, name = t->key_name[key];
	size_t nl = t->names->lens[name];
	const char *suf = kind_suffix[t->key_kind[key]];
	size_t sl = strlen(suf);

	if (i < nl)
		return (unsigned char)t->names->strs[name][i];
	if (i - nl < sl)
		return (unsigned char)suf[i - nl];
	return i - nl == sl ? ((sym & 1) ? ';' : ' ') : -1;
}

/* qsort_r comparator of two symbols by their text. */
static int sym_cmp(const void *a, const void *b, void *ctx)
{
	const struct flame_tree *t = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint32_t nx = t->key_name[x >> 1], ny = t->key_name[y >> 1];
	size_t i = 0;

	if (nx != ny) {
		size_t lx = t->names->lens[nx], ly = t->names->lens[ny];
		int r = memcmp(t->names->strs[nx], t->names->strs[ny], lx < ly ? lx : ly);
		if (r)
			return r;
		i = lx < ly ? lx : ly;
	}
	for (;; i++) {
		int cx = sym_byte(t, x, i), cy = sym_byte(t, y, i);
		if (cx != cy)
			return cx < cy ? -1 : 1;
		if (cx < 0)
			return x < y ? -1 : x > y;
	}
}

/* A stack to sort (where its frames are) and its symbol at the depth being sorted on. */
struct sort_item {
	uint32_t sym, stack, off, len;
};

/* The sort symbol of stack x at depth d: 0 past its end, else 1 + the rank of its frame there.
 * Comparing stacks symbol by symbol is comparing their folded lines: a frame with a child
 * (';' after it) and the same frame as the leaf (' ' after it) are different symbols, so one
 * line is never a proper prefix of another. */
static inline uint32_t stack_sym(const struct flame_tree *t, const struct sort_item *x, uint32_t d)
{
	if (d >= x->len)
		return 0;
	return 1 + t->rank[t->frames[x->off + d] * 2 + (d + 1 < x->len)];
}

/* Insertion sort of a short run whose stacks agree before depth d. */
static void sort_small(const struct flame_tree *t, struct sort_item *a, size_t n, uint32_t d)
{
	for (size_t i = 1; i < n; i++) {
		struct sort_item x = a[i];
		size_t j = i;
		for (; j > 0; j--) {
			uint32_t k = d, cx, cy;
			while ((cx = stack_sym(t, &x, k)) == (cy = stack_sym(t, &a[j - 1], k)) && cx)
				k++;
			if (cy <= cx)
				break;
			a[j] = a[j - 1];
		}
		a[j] = x;
	}
}

/* Splits a[0..n) by sym around pivot into < (*lt items), = and > (from *gt). */
static void partition3(struct sort_item *a, size_t n, uint32_t pivot, size_t *lt, size_t *gt)
{
	size_t l = 0, i = 0, g = n;

	while (i < g) {
		struct sort_item x = a[i];
		if (x.sym < pivot) {
			a[i++] = a[l];
			a[l++] = x;
		} else if (x.sym > pivot) {
			a[i] = a[--g];
			a[g] = x;
		} else {
			i++;
		}
	}
	*lt = l;
	*gt = g;
}

/* A run of items left to sort, equal before depth d. */
struct sort_task {
	size_t off, n;
	uint32_t d;
};

/* Median of three symbols. */
static uint32_t median3(uint32_t a, uint32_t b, uint32_t c)
{
	return a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
}

/* How many items ahead the sort prefetches the frame it reads next: the load of an item's
 * symbol at the next depth was a third of the sort with shared prefixes. */
#define SORT_AHEAD 16

/* Starts loading item x's frame at depth d (each item's frames lie elsewhere). always_inline:
 * gcc drops the calls of a function that only prefetches (see hashtab_prefetch). */
static inline __attribute__((always_inline)) void
prefetch_frame(const struct flame_tree *t, const struct sort_item *x, uint32_t d)
{
	__builtin_prefetch(&t->frames[x->off + d]);
}

/* Multikey quicksort (Bentley and Sedgewick) of the stacks by symbol: each item's symbol is
 * cached next to it and reloaded once per depth, so the sort reads the frames about once. */
static int sort_stacks(const struct flame_tree *t, struct sort_item *a, size_t n)
{
	struct sort_task *st = NULL;
	size_t nst = 0, cap = 0;

	if (VEC_GROW(st, cap, 1))
		return -ENOMEM;
	st[nst++] = (struct sort_task){ 0, n, 0 };
	while (nst) {
		struct sort_task k = st[--nst];
		struct sort_item *b = a + k.off;
		size_t lt, gt;
		if (k.n < 12) {
			sort_small(t, b, k.n, k.d);
			continue;
		}
		uint32_t pivot = median3(b[0].sym, b[k.n / 2].sym, b[k.n - 1].sym);
		partition3(b, k.n, pivot, &lt, &gt);
		if (VEC_GROW(st, cap, nst + 3)) {
			free(st);
			return -ENOMEM;
		}
		if (lt > 1)
			st[nst++] = (struct sort_task){ k.off, lt, k.d };
		if (k.n - gt > 1)
			st[nst++] = (struct sort_task){ k.off + gt, k.n - gt, k.d };
		if (gt - lt > 1 && pivot) { /* pivot 0: equal stacks, sorted */
			for (size_t i = lt; i < gt && i < lt + SORT_AHEAD; i++)
				prefetch_frame(t, &b[i], k.d + 1);
			for (size_t i = lt; i < gt; i++) {
				if (i + SORT_AHEAD < gt)
					prefetch_frame(t, &b[i + SORT_AHEAD], k.d + 1);
				b[i].sym = stack_sym(t, &b[i], k.d + 1);
			}
			st[nst++] = (struct sort_task){ k.off + lt, gt - lt, k.d + 1 };
		}
	}
	free(st);
	return 0;
}

/* A symbol to rank and the first 16 bytes of its text, big-endian (0 past its end). */
struct rank_item {
	uint64_t hi, lo;
	uint32_t sym;
};

/* Fills x with symbol sym and its text's first bytes: its prefix orders symbols as sym_cmp does
 * wherever the prefixes differ (a byte past the end, 0, is below any other but a NUL of the
 * name's, and equal prefixes go to sym_cmp). */
static void rank_item_fill(const struct flame_tree *t, uint32_t sym, struct rank_item *x)
{
	uint32_t key = sym >> 1, name = t->key_name[key];
	const char *suf = kind_suffix[t->key_kind[key]];
	size_t nl = t->names->lens[name], n = nl < 16 ? nl : 16, sl = strlen(suf);
	char b[16 + 5] = { 0 }; /* room for the suffix and the ';' or ' ' after a short name */
	uint64_t w[2];

	memcpy(b, t->names->strs[name], n);
	if (n == nl) {
		memcpy(b + n, suf, sl);
		b[n + sl] = (sym & 1) ? ';' : ' ';
	}
	memcpy(w, b, sizeof(w));
	*x = (struct rank_item){ __builtin_bswap64(w[0]), __builtin_bswap64(w[1]), sym };
}

/* qsort_r comparator of two rank items: by their prefixes, then (equal) by sym_cmp. */
static int rank_item_cmp(const void *a, const void *b, void *ctx)
{
	const struct rank_item *x = a, *y = b;

	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return sym_cmp(&x->sym, &y->sym, ctx);
}

/* Ranks every (key, has child) symbol by its text. The sort compares the texts' first bytes
 * held in its items, not the names through the string table (a cache miss each, with many
 * distinct names). */
static int tree_rank(struct flame_tree *t)
{
	size_t n = (size_t)t->nkeys * 2;
	struct rank_item *items = malloc((n ? n : 1) * sizeof(*items));
	uint32_t *rank = realloc(t->rank, (n ? n : 1) * sizeof(*rank));

	if (rank)
		t->rank = rank;
	if (!items || !rank) {
		free(items);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		rank_item_fill(t, i, &items[i]);
	qsort_r(items, n, sizeof(*items), rank_item_cmp, t);
	for (size_t i = 0; i < n; i++)
		rank[items[i].sym] = i;
	free(items);
	return 0;
}

/* Puts the stacks in sorted order, equal stacks merged. Their frames stay where they are (a
 * copy in order would double the tree's largest array); merged ones' frames are left unused. */
static int tree_relayout(struct flame_tree *t, const struct sort_item *a, size_t n)
{
	const uint32_t *frames = t->frames;
	struct flame_stack *stacks = malloc((n ? n : 1) * sizeof(*stacks));
	size_t kept = 0;

	if (!stacks)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct flame_stack s = t->stacks[a[i].stack];
		struct flame_stack *prev = kept ? &stacks[kept - 1] : NULL;
		if (prev && prev->len == s.len &&
		    (!s.len || !memcmp(frames + prev->off, t->frames + s.off, s.len * sizeof(*frames)))) {
			prev->value += s.value;
			prev->base += s.base;
			continue;
		}
		stacks[kept++] = s;
	}
	free(t->stacks);
	t->stacks = stacks;
	t->nstacks = kept;
	t->cap_stacks = n ? n : 1;
	return 0;
}

/* Ranks the symbols, sorts the stacks, lays them out again merged. */
int flame_tree_finish(struct flame_tree *t)
{
	size_t n = t->nstacks;
	struct sort_item *a = malloc((n ? n : 1) * sizeof(*a));
	int err = a ? tree_rank(t) : -ENOMEM;

	if (n > UINT32_MAX - 1 || t->nframes > UINT32_MAX)
		err = -ENOMEM;
	for (size_t i = 0; !err && i < n; i++) {
		a[i] = (struct sort_item){ 0, i, t->stacks[i].off, t->stacks[i].len };
		a[i].sym = stack_sym(t, &a[i], 0);
	}
	if (!err)
		err = sort_stacks(t, a, n);
	if (!err)
		err = tree_relayout(t, a, n);
	free(a);
	if (!err)
		t->sorted = true;
	return err;
}

/* ---- flow(): the merge walk ---- */

/* A frame open during the walk. */
struct open_frame {
	uint32_t key;
	int64_t start, bstart, self, bself;
};

/* Closes open frames at depths top..keep+1, reporting each whose value is not below min (the
 * SVG writer's pruning, skipped here before a node is even made); returns fn's first error. */
static int close_frames(const struct flame_tree *t, struct open_frame *op, uint32_t top,
			uint32_t keep, int64_t time, int64_t btime, double min,
			int (*fn)(void *, const struct flame_node *), void *ctx)
{
	for (uint32_t d = top; d > keep; d--) {
		if ((double)(time - op[d].start) < min)
			continue;
		struct flame_node n = {
			.name = t->key_name[op[d].key], .kind = t->key_kind[op[d].key], .depth = d,
			.start = op[d].start, .value = time - op[d].start, .self = op[d].self,
			.base = btime - op[d].bstart, .base_self = op[d].bself,
		};
		int err = fn(ctx, &n);
		if (err)
			return err;
	}
	return 0;
}

/* Number of leading frames stacks a (may be NULL) and b share. */
static uint32_t common_len(const struct flame_tree *t, const struct flame_stack *a,
			   const struct flame_stack *b)
{
	uint32_t n = a ? (a->len < b->len ? a->len : b->len) : 0, i = 0;
	const uint32_t *fa = a ? t->frames + a->off : NULL, *fb = t->frames + b->off;

	while (i < n && fa[i] == fb[i])
		i++;
	return i;
}

/* Prefetches the frames of stack s, every cache line of them. (A first version, a loop and a
 * prefetch of the last byte after it, compiled to no prefetch at all with gcc 12 -O2: check the
 * object code for prefetcht0 after changing this.) */
static inline void prefetch_frames(const struct flame_tree *t, const struct flame_stack *s)
{
	uintptr_t line = (uintptr_t)(t->frames + s->off) & ~(uintptr_t)63;
	uintptr_t end = (uintptr_t)(t->frames + s->off + s->len);

	for (; line < end; line += 64)
		__builtin_prefetch((const void *)line);
}

/* flow(): opens and closes frames as consecutive sorted stacks differ; frames (not the root)
 * narrower than min are not reported. */
static int tree_walk(struct flame_tree *t, double min,
		     int (*fn)(void *ctx, const struct flame_node *n), void *ctx)
{
	int err = t->sorted ? 0 : flame_tree_finish(t);
	struct open_frame *op = err ? NULL : calloc(t->maxlen + 1, sizeof(*op));
	const struct flame_stack *prev = NULL;
	int64_t time = 0, btime = 0;

	if (!op)
		return err ? err : -ENOMEM;
	for (size_t k = 0; k < t->nstacks && !err; k++) {
		const struct flame_stack *s = &t->stacks[k];
		if (k + 4 < t->nstacks) /* sorted stacks' frames lie anywhere: fetch ahead */
			prefetch_frames(t, &t->stacks[k + 4]);
		uint32_t same = common_len(t, prev, s);
		err = close_frames(t, op, prev ? prev->len : 0, same, time, btime, min, fn, ctx);
		for (uint32_t i = same; i < s->len; i++)
			op[i + 1] = (struct open_frame){ t->frames[s->off + i], time, btime, 0, 0 };
		op[s->len].self += s->value;
		op[s->len].bself += s->base;
		time += s->value;
		btime += s->base;
		prev = s;
	}
	if (!err)
		err = close_frames(t, op, prev ? prev->len : 0, 0, time, btime, min, fn, ctx);
	if (!err) {
		struct flame_node root = { .value = time, .self = op[0].self, .base = btime,
					   .base_self = op[0].bself };
		err = fn(ctx, &root);
	}
	free(op);
	return err;
}

/* flow(), every frame reported. */
int flame_tree_walk(struct flame_tree *t, int (*fn)(void *ctx, const struct flame_node *n),
		    void *ctx)
{
	return tree_walk(t, -INFINITY, fn, ctx);
}

/* ---- buffered output ---- */

struct out {
	FILE *f;
	size_t len;
	int err;
	char buf[1 << 16];
};

/* Writes out what is buffered; remembers a write error. */
static void out_flush(struct out *o)
{
	if (o->len && !o->err && fwrite(o->buf, 1, o->len, o->f) != o->len)
		o->err = -EIO;
	o->len = 0;
}

/* Appends n bytes. */
static void out_mem(struct out *o, const char *s, size_t n)
{
	if (o->len + n > sizeof(o->buf)) {
		out_flush(o);
		if (n > sizeof(o->buf)) {
			if (!o->err && fwrite(s, 1, n, o->f) != n)
				o->err = -EIO;
			return;
		}
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

/* Appends a C string. */
static void out_str(struct out *o, const char *s)
{
	out_mem(o, s, strlen(s));
}

/* Writes v in decimal. */
static void out_u64(struct out *o, uint64_t v)
{
	char b[24];
	int i = sizeof(b);

	do
		b[--i] = '0' + v % 10;
	while (v /= 10);
	out_mem(o, b + i, sizeof(b) - i);
}

/* Writes v with thousands separators, as flamegraph.pl's sample counts ("1,234,567"). */
static void out_commas(struct out *o, int64_t v)
{
	char b[40];
	int i = sizeof(b), digits = 0;
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;

	do {
		if (digits && digits % 3 == 0)
			b[--i] = ',';
		b[--i] = '0' + u % 10;
		digits++;
	} while (u /= 10);
	if (v < 0)
		b[--i] = '-';
	out_mem(o, b + i, sizeof(b) - i);
}

/* v >= 0 rounded to dec (<= 3) decimals, in units of 10^-dec, exactly as printf("%.*f")
 * rounds it: a fast path, and printf itself when v is too near a tie to decide. */
static uint64_t round_dec(double v, int dec)
{
	static const double scale[] = { 1, 10, 100, 1000 };
	double x = v * scale[dec], fl = floor(x), frac = x - fl;
	char b[512];
	uint64_t r = 0;

	if (x < 1e15 && fabs(frac - 0.5) > 1e-6 + x * 1e-15)
		return (uint64_t)fl + (frac > 0.5);
	snprintf(b, sizeof(b), "%.*f", dec, v);
	for (const char *p = b; *p && r < UINT64_MAX / 10; p++)
		if (*p >= '0' && *p <= '9')
			r = r * 10 + (*p - '0');
	return r;
}

/* Writes r units of 10^-dec with dec decimals. */
static void out_dec(struct out *o, uint64_t r, int dec)
{
	static const uint64_t scale[] = { 1, 10, 100, 1000 };
	char b[4];

	out_u64(o, r / scale[dec]);
	if (!dec)
		return;
	uint64_t f = r % scale[dec];
	b[0] = '.';
	for (int i = dec; i > 0; i--, f /= 10)
		b[i] = '0' + f % 10;
	out_mem(o, b, dec + 1);
}

/* printf("%.*f", dec, v). */
static void out_fixed(struct out *o, double v, int dec)
{
	if (v < 0 || signbit(v)) {
		out_mem(o, "-", 1);
		v = -v;
	}
	out_dec(o, round_dec(v, dec), dec);
}

/* A number as Perl prints it (the y coordinates: whole or half numbers, usually). */
static void out_num(struct out *o, double v)
{
	char b[40];

	if (v >= 0 && v < 1e15 && v * 2 == floor(v * 2)) {
		out_u64(o, (uint64_t)v);
		if (v != floor(v))
			out_mem(o, ".5", 2);
		return;
	}
	out_mem(o, b, snprintf(b, sizeof(b), "%.15g", v));
}

/* Writes s[0..n) as XML text: & < > " ' escaped, invalid UTF-8 and control characters (C0, DEL
 * and C1, which a terminal showing the file would obey) replaced by U+FFFD so that the document
 * always parses; bidirectional controls (U+202E...), which would make a frame's name read as
 * another's in the browser, written as their visible escape ("\u202e", escape_char). */
static void out_xml(struct out *o, const char *s, size_t n)
{
	size_t run = 0, i = 0;
	char esc[ESCAPE_MAX + 1];

	while (i < n) {
		unsigned char c = s[i];
		const char *rep;
		size_t next = i + 1, used, elen;
		uint32_t cp;

		if (c >= 0x80) {
			next = utf8_next(s, n, i, &cp);
			bool ok = next > i + 1 && cp != 0xfffe && cp != 0xffff && cp > 0x9f;
			if (ok && !(elen = escape_char(s + i, n - i, esc, &used))) {
				i = next;
				continue;
			}
			if (ok) /* a bidirectional control: its escape is ASCII, safe in XML */
				esc[elen] = 0;
			rep = ok ? esc : "\xef\xbf\xbd";
		} else if (c == '&') {
			rep = "&amp;";
		} else if (c == '<') {
			rep = "&lt;";
		} else if (c == '>') {
			rep = "&gt;";
		} else if (c == '"') {
			rep = "&quot;";
		} else if (c == '\'') {
			rep = "&apos;";
		} else if (c < 0x20 || c == 0x7f) {
			rep = "\xef\xbf\xbd";
		} else {
			i++;
			continue;
		}
		out_mem(o, s + run, i - run);
		out_str(o, rep);
		i = run = next;
	}
	out_mem(o, s + run, n - run);
}

/* Writes s as a JavaScript string literal that cannot end a CDATA section or a script. */
static void out_js_string(struct out *o, const char *s)
{
	size_t n = strlen(s);
	char b[8];

	out_mem(o, "\"", 1);
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		uint32_t cp;
		size_t next = c >= 0x80 ? utf8_next(s, n, i, &cp) : i + 1;
		if (c >= 0x80 && next > i + 1 && cp > 0x9f) {
			out_mem(o, s + i, next - i);
		} else if (c >= 0x80 || c < 0x20 || c == 0x7f || strchr("\"\\<>&'", c)) {
			snprintf(b, sizeof(b), "\\u%04x", c >= 0x80 ? 0xfffd : c);
			out_mem(o, b, 6);
		} else {
			out_mem(o, s + i, 1);
		}
		i = next;
	}
	out_mem(o, "\"", 1);
}

/* ---- palette file: "name->rgb(r,g,b)" lines, flamegraph.pl's palette.map ---- */

struct pal_entry {
	char *key;
	size_t len;
	uint8_t rgb[3];
};

struct palette {
	struct pal_entry *e;
	size_t n, cap;
	struct hashtab index; /* key -> entry index */
	char *kept;          /* the lines not parsed, verbatim, each with its newline */
	size_t kept_len, kept_cap;
};

/* The hash of a palette key. */
static uint64_t pal_hash(const char *s, size_t n)
{
	return hash_mix64(hash_bytes(HASH_SEED, s, n));
}

/* Whether entry id has the key (a struct pal_entry with key and len) of the lookup. */
static bool pal_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct pal_entry *e = &((const struct palette *)ctx)->e[id], *k = key;

	return e->len == k->len && !memcmp(e->key, k->key, k->len);
}

/* The entry of key, or NULL. */
static struct pal_entry *pal_find(const struct palette *p, const char *key, size_t len)
{
	struct pal_entry k = { (char *)key, len, { 0 } };
	int64_t id = hashtab_find(&p->index, pal_hash(key, len), pal_eq, p, &k);

	return id >= 0 ? &p->e[id] : NULL;
}

/* Sets the color of key (adding it, or replacing a former one). */
static int pal_put(struct palette *p, const char *key, size_t len, const uint8_t rgb[3])
{
	struct pal_entry *e = pal_find(p, key, len);

	if (e) {
		memcpy(e->rgb, rgb, 3);
		return 0;
	}
	if (hashtab_reserve(&p->index, p->n + 1) || VEC_GROW(p->e, p->cap, p->n + 1))
		return -ENOMEM;
	e = &p->e[p->n];
	if (!(e->key = malloc(len + 1)))
		return -ENOMEM;
	memcpy(e->key, key, len);
	e->key[len] = 0;
	e->len = len;
	memcpy(e->rgb, rgb, 3);
	hashtab_add(&p->index, pal_hash(key, len), p->n++); /* reserved: cannot fail */
	return 0;
}

/* Frees the palette's entries and table. */
static void pal_free(struct palette *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->e[i].key);
	free(p->e);
	hashtab_release(&p->index);
	free(p->kept);
	memset(p, 0, sizeof(*p));
}

/* Keeps a line firn does not parse as it is (its newline added if it had none), so that a
 * rewrite does not drop what a person or another tool put in the file. */
static int pal_keep(struct palette *p, const char *line, size_t len)
{
	size_t need = p->kept_len + len + 1;

	if (VEC_GROW(p->kept, p->kept_cap, need))
		return -ENOMEM;
	memcpy(p->kept + p->kept_len, line, len);
	p->kept_len += len;
	if (!len || line[len - 1] != '\n')
		p->kept[p->kept_len++] = '\n';
	return 0;
}

/* Adds one "name->rgb(r,g,b)" line (the name may itself contain "->"); any other line (a blank
 * one too) is kept verbatim. line has len bytes and a NUL after them, as getline leaves it. */
static int pal_parse_line(struct palette *p, const char *path, char *line, size_t len)
{
	int r, g, b, end = 0;
	char *arrow = NULL;
	size_t n = len;

	while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		n--;
	char cut = line[n];
	line[n] = 0;
	for (char *q = line; (q = memmem(q, line + n - q, "->", 2)); q += 2)
		arrow = q;
	if (arrow && sscanf(arrow + 2, "rgb(%d,%d,%d)%n", &r, &g, &b, &end) == 3 &&
	    !arrow[2 + end] && (r | g | b) >= 0 && r <= 255 && g <= 255 && b <= 255)
		return pal_put(p, line, arrow - line, (uint8_t[3]){ r, g, b });
	if (n)
		diag(DIAG_WARN, "ignoring a line of palette '%s': %.60s", path, line);
	line[n] = cut;
	return pal_keep(p, line, len);
}

/* Reads palette file path; a missing file is an empty palette. A link planted by another user
 * is not followed (file_open_read): its target's lines would be kept into the rewrite. */
static int pal_load(struct palette *p, const char *path)
{
	int fd = file_open_read(path);
	struct stat st;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int err = 0;

	if (fd < 0)
		return fd == -ENOENT ? 0 : fd;
	FILE *f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	if (!fstat(fd, &st) && S_ISDIR(st.st_mode))
		err = -EISDIR;
	while (!err && (len = getline(&line, &cap, f)) >= 0)
		err = pal_parse_line(p, path, line, len);
	if (!err && ferror(f))
		err = -EIO;
	free(line);
	fclose(f);
	return err;
}

/* qsort comparator: entries by key bytes. */
static int pal_entry_cmp(const void *a, const void *b)
{
	const struct pal_entry *x = a, *y = b;
	int r = memcmp(x->key, y->key, x->len < y->len ? x->len : y->len);

	return r ? r : (x->len > y->len) - (x->len < y->len);
}

/* Rewrites palette file path as file_replace_atomic does (mode 0644: names, no addresses):
 * the lines not parsed first, verbatim, then the entries sorted by name. */
static int pal_save(struct palette *p, const char *path)
{
	struct file_write w = { .mode = 0644 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int err = 0;

	if (!f)
		return -ENOMEM;
	if (p->n) /* e is NULL when empty: qsort(NULL, 0) is undefined */
		qsort(p->e, p->n, sizeof(*p->e), pal_entry_cmp);
	if (p->kept_len)
		fwrite(p->kept, 1, p->kept_len, f);
	for (size_t i = 0; i < p->n; i++)
		fprintf(f, "%s->rgb(%d,%d,%d)\n", p->e[i].key, p->e[i].rgb[0], p->e[i].rgb[1],
			p->e[i].rgb[2]);
	if (ferror(f))
		err = -ENOMEM;
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (!err)
		err = file_replace_atomic(path, buf, len, &w);
	free(buf);
	return err; /* the sort moved entries: p is only fit for pal_free now */
}

/* ---- the SVG ---- */

struct svg {
	struct out out;
	const struct flamegraph_opts *o;
	struct flame_tree *t;
	struct palette pal;
	uint32_t *colors;        /* per key: 1 << 24 | rgb, once known */
	char *fname;             /* scratch: a frame's folded name (name and annotation) */
	size_t fname_cap;
	double wpt, minwidth_time, imageheight, ypad1, ypad2, ypad3;
	int64_t timemax, maxdelta;
	uint32_t depthmax;
	struct unit_scale scale; /* how tooltips and the title show values (o->unit) */
};

/* Length of a literal annotation ("_[k]", "_[j]", "_[i]", "_[w]") ending name, or 0. */
static size_t annotation_len(const char *name, size_t len)
{
	if (len >= 4 && name[len - 4] == '_' && name[len - 3] == '[' && name[len - 1] == ']' &&
	    strchr("kjiw", name[len - 2]))
		return 4;
	return 0;
}

/* The kind a frame is colored as: its own, or the one its name's annotation says. */
static enum frame_kind color_kind(const char *name, size_t len, enum frame_kind kind)
{
	if (kind != FRAME_USER || !annotation_len(name, len))
		return kind;
	return name[len - 2] == 'k' ? FRAME_KERNEL : name[len - 2] == 'j' ? FRAME_JIT
		: name[len - 2] == 'i' ? FRAME_INLINE : FRAME_USER;
}

/* A node's name as a folded line spells it (with its kind's annotation); NULL on ENOMEM. */
static const char *folded_name(struct svg *s, const struct flame_node *n, size_t *len)
{
	const char *name = s->t->names->strs[n->name], *suf = kind_suffix[n->kind % FLAME_NKINDS];
	size_t nl = s->t->names->lens[n->name], sl = strlen(suf);

	*len = nl + sl;
	if (!sl)
		return name;
	if (VEC_GROW(s->fname, s->fname_cap, nl + sl + 1))
		return NULL;
	memcpy(s->fname, name, nl);
	memcpy(s->fname + nl, suf, sl + 1);
	return s->fname;
}

/* The scheme's (or the palette file's) color of a frame. */
static int scheme_color(struct svg *s, const char *fname, size_t flen, enum frame_kind kind,
			uint8_t rgb[3])
{
	const struct pal_entry *e = s->o->palette ? pal_find(&s->pal, fname, flen) : NULL;

	if (e) {
		memcpy(rgb, e->rgb, 3);
		return 0;
	}
	flame_color_of(s->o->colors, fname, flen, color_kind(fname, flen, kind), rgb);
	return s->o->palette ? pal_put(&s->pal, fname, flen, rgb) : 0;
}

/* A node's fill: callback, the gray separators "--" and "-", change, or the scheme. */
static int node_color(struct svg *s, const struct flame_node *n, uint8_t rgb[3])
{
	const struct flamegraph_opts *o = s->o;
	size_t flen, slot = (size_t)n->name * FLAME_NKINDS + n->kind % FLAME_NKINDS;
	const char *fname = folded_name(s, n, &flen);
	uint32_t key = n->depth && slot < s->t->key_of_len ? s->t->key_of[slot] : 0;

	if (!fname)
		return -ENOMEM;
	if (o->color_fn && o->color_fn(o->color_ctx, n, fname, rgb))
		return 0;
	if (flen <= 2 && !strncmp(fname, "--", flen) && flen) {
		rgb_set(rgb, flen == 2 ? 160 : 200, flen == 2 ? 160 : 200, flen == 2 ? 160 : 200);
		return 0;
	}
	if (o->colors == FLAME_COLORS_DIFF) {
		int64_t d = n->self - n->base_self;
		color_scale(o->negate ? -d : d, s->maxdelta, rgb);
		return 0;
	}
	if (key && s->colors[key - 1]) {
		rgb_set(rgb, s->colors[key - 1] >> 16 & 255, s->colors[key - 1] >> 8 & 255,
			s->colors[key - 1] & 255);
		return 0;
	}
	int err = scheme_color(s, fname, flen, n->kind, rgb);
	if (key)
		s->colors[key - 1] = 1 << 24 | rgb[0] << 16 | rgb[1] << 8 | rgb[2];
	return err;
}

/* Top and bottom of a frame at depth: upward from the bottom, or downward (icicle). */
static void frame_y(const struct svg *s, uint32_t depth, double *y1, double *y2)
{
	double fh = s->o->height;

	if (s->o->inverted) {
		double top = s->ypad1 + (s->o->subtitle && *s->o->subtitle ? s->ypad3 : 0);
		*y1 = top + depth * fh;
		*y2 = top + (depth + 1) * fh - FRAMEPAD;
	} else {
		*y1 = s->imageheight - s->ypad2 - (depth + 1) * fh + FRAMEPAD;
		*y2 = s->imageheight - s->ypad2 - depth * fh;
	}
}

/* A value in the graph's scale: "1,234" (counts), or "12.35" (ms, s, KiB... o->unit). */
static void out_value(struct svg *s, int64_t v)
{
	if (s->scale.scaled)
		out_fixed(&s->out, v / s->scale.div, s->scale.decimals);
	else
		out_commas(&s->out, v);
}

/* <g><title>: "NAME (N samples, P%)" (or "NAME (12.35 ms, P%)" in a unit), and "; base M; +D%"
 * when the tree has base values. */
static void out_tooltip(struct svg *s, const struct flame_node *n, const char *name, size_t len)
{
	struct out *o = &s->out;
	const char *word = s->scale.scaled ? s->scale.name : s->o->countname;

	out_str(o, "<g><title>");
	out_xml(o, name, len);
	out_str(o, " (");
	out_value(s, n->value);
	out_str(o, " ");
	out_xml(o, word, strlen(word));
	out_str(o, ", ");
	if (n->depth)
		out_fixed(o, 100.0 * n->value / s->timemax, 2);
	else
		out_str(o, "100");
	out_str(o, "%");
	if (s->t->has_base) {
		int64_t d = (n->self - n->base_self) * (s->o->negate ? -1 : 1);
		out_str(o, "; base ");
		out_value(s, n->base);
		out_str(o, d > 0 ? "; +" : "; ");
		out_fixed(o, 100.0 * d / s->timemax, 2);
		out_str(o, "%");
	}
	out_str(o, ")</title>");
}

/* <rect>: x and width rounded to tenths as flamegraph.pl rounds them. */
static void out_rect(struct svg *s, double x1, double x2, double y1, double y2,
		     const uint8_t rgb[3])
{
	struct out *o = &s->out;
	uint64_t r1 = round_dec(x1, 1), r2 = round_dec(x2, 1);

	out_str(o, "<rect x=\"");
	out_dec(o, r1, 1);
	out_str(o, "\" y=\"");
	out_num(o, y1);
	out_str(o, "\" width=\"");
	out_dec(o, r2 - r1, 1);
	out_str(o, "\" height=\"");
	out_fixed(o, y2 - y1, 1);
	out_str(o, "\" fill=\"rgb(");
	for (int i = 0; i < 3; i++) {
		out_u64(o, rgb[i]);
		out_str(o, i < 2 ? "," : ")\" rx=\"2\" ry=\"2\"/>");
	}
}

/* <text>: the name cut to the characters that fit, its end replaced by "..". */
static void out_label(struct svg *s, double x1, double x2, double y1, double y2,
		      const char *name, size_t len)
{
	struct out *o = &s->out;
	double chars = floor((x2 - x1) / (s->o->fontsize * s->o->fontwidth));

	out_str(o, "<text x=\"");
	out_fixed(o, x1 + 3, 2);
	out_str(o, "\" y=\"");
	out_num(o, 3 + (y1 + y2) / 2);
	out_str(o, "\">");
	if (chars >= 3) {
		size_t i = 0, cut = 0, ncp = 0;
		uint32_t cp;
		while (i < len && ncp <= chars) {
			if (ncp == chars - 2)
				cut = i;
			i = utf8_next(name, len, i, &cp);
			ncp++;
		}
		out_xml(o, name, ncp > chars ? cut : len);
		if (ncp > chars)
			out_str(o, "..");
	}
	out_str(o, "</text></g>\n");
}

/* Walk callback, first pass: the deepest frame drawn and the largest change. */
static int measure_node(void *ctx, const struct flame_node *n)
{
	struct svg *s = ctx;
	int64_t d = n->self > n->base_self ? n->self - n->base_self : n->base_self - n->self;

	if (d > s->maxdelta)
		s->maxdelta = d;
	if (n->value > 0 && !((double)n->value < s->minwidth_time) && n->depth > s->depthmax)
		s->depthmax = n->depth;
	return 0;
}

/* Walk callback, second pass: one frame's group (tooltip, rect, label). */
static int draw_node(void *ctx, const struct flame_node *n)
{
	struct svg *s = ctx;

	if (n->value <= 0 || (double)n->value < s->minwidth_time)
		return 0;
	const char *name = n->depth ? s->t->names->strs[n->name] : "all";
	size_t len = n->depth ? s->t->names->lens[n->name] : 3;
	double x1 = XPAD + n->start * s->wpt, x2 = XPAD + (n->start + n->value) * s->wpt, y1, y2;
	uint8_t rgb[3];
	int err = node_color(s, n, rgb);
	if (err)
		return err;
	len -= annotation_len(name, len);
	frame_y(s, n->depth, &y1, &y2);
	out_tooltip(s, n, name, len);
	out_rect(s, x1, x2, y1, y2, rgb);
	out_label(s, x1, x2, y1, y2, name, len);
	return s->out.err;
}

/* <?xml ...?> and the <svg> element. */
static void svg_open(struct svg *s, double height, bool script)
{
	struct out *o = &s->out;

	out_str(o, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		   "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" "
		   "\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n<svg version=\"1.1\" width=\"");
	out_u64(o, s->o->width);
	out_str(o, "\" height=\"");
	out_num(o, height);
	out_str(o, script ? "\" onload=\"init(evt)\" viewBox=\"0 0 " : "\" viewBox=\"0 0 ");
	out_u64(o, s->o->width);
	out_str(o, " ");
	out_num(o, height);
	out_str(o, "\" xmlns=\"http://www.w3.org/2000/svg\" "
		   "xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n"
		   "<!-- Flame graph written by firn, laid out as flamegraph.pl lays it out "
		   "(https://github.com/brendangregg/FlameGraph). -->\n<!-- NOTES: ");
	out_str(o, s->o->notes ? s->o->notes : "");
	out_str(o, " -->\n");
}

/* <defs> (the background gradient) and <style>. */
static void svg_style(struct svg *s)
{
	struct out *o = &s->out;
	enum flame_colors c = s->o->colors;
	const char *bg = c == FLAME_COLORS_MEM ? "#eeeeee\" offset=\"5%\" />\n"
						 "\t\t<stop stop-color=\"#e0e0ff"
		       : c >= FLAME_COLORS_IO && c <= FLAME_COLORS_ORANGE
			       ? "#f8f8f8\" offset=\"5%\" />\n\t\t<stop stop-color=\"#e8e8e8"
			       : "#eeeeee\" offset=\"5%\" />\n\t\t<stop stop-color=\"#eeeeb0";

	out_str(o, "<defs>\n\t<linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\" >\n"
		   "\t\t<stop stop-color=\"");
	out_str(o, bg);
	out_str(o, "\" offset=\"95%\" />\n\t</linearGradient>\n</defs>\n<style type=\"text/css\">\n"
		   "\ttext { font-family:");
	out_xml(o, s->o->fonttype, strlen(s->o->fonttype));
	out_str(o, "; font-size:");
	out_num(o, s->o->fontsize);
	out_str(o, "px; fill:rgb(0,0,0); }\n"
		   "\t#search, #ignorecase { opacity:0.1; cursor:pointer; }\n"
		   "\t#search:hover, #search.show, #ignorecase:hover, #ignorecase.show { opacity:1; }\n"
		   "\t#subtitle { text-anchor:middle; fill:rgb(160,160,160); }\n"
		   "\t#title { text-anchor:middle; font-size:");
	out_num(o, s->o->fontsize + 5);
	out_str(o, "px; }\n\t#unzoom { cursor:pointer; }\n"
		   "\t#frames > *:hover { stroke:black; stroke-width:0.5; cursor:pointer; }\n"
		   "\t.hide { display:none; }\n\t.parent { opacity:0.5; }\n</style>\n");
}

/* <script>: the settings the script reads, then the script. */
static void svg_script(struct svg *s)
{
	struct out *o = &s->out;
	char b[160];

	snprintf(b, sizeof(b), "var fg = { xpad: %d, fontsize: %.17g, fontwidth: %.17g, inverted: %d, ",
		 XPAD, s->o->fontsize, s->o->fontwidth, s->o->inverted ? 1 : 0);
	out_str(o, "<script type=\"text/ecmascript\">\n<![CDATA[\n");
	out_str(o, b);
	out_str(o, "searchcolor: \"" SEARCHCOLOR "\",\n\tnametype: ");
	out_js_string(o, s->o->nametype);
	out_str(o, " };\n");
	out_mem(o, flamegraph_js, sizeof(flamegraph_js) - 1);
	out_str(o, "]]>\n</script>\n");
}

/* A <text> element with an id at (x, y). */
static void out_text(struct out *o, const char *id, double x, double y, const char *attrs,
		     const char *text)
{
	out_str(o, "<text id=\"");
	out_str(o, id);
	out_str(o, "\" x=\"");
	out_fixed(o, x, 2);
	out_str(o, "\" y=\"");
	out_num(o, y);
	out_str(o, "\"");
	out_str(o, attrs);
	out_str(o, ">");
	out_xml(o, text, strlen(text));
	out_str(o, "</text>\n");
}

/* Background, title, subtitle and the controls (details line, Reset Zoom, Search, ic). */
static void svg_controls(struct svg *s)
{
	struct out *o = &s->out;
	const struct flamegraph_opts *op = s->o;
	double w = op->width, h = s->imageheight, fs = op->fontsize, mid = (int)(w / 2);
	const char *title = op->title ? op->title : op->inverted ? "Icicle Graph" : "Flame Graph";
	char typed[512];

	if (op->title_type) { /* "Flame Graph: off_cpu (ms)" */
		snprintf(typed, sizeof(typed), s->scale.scaled ? "%s: %s (%s)" : "%s: %s", title,
			 op->title_type, s->scale.name);
		title = typed;
	}

	out_str(o, "<rect x=\"0.0\" y=\"0\" width=\"");
	out_fixed(o, w, 1);
	out_str(o, "\" height=\"");
	out_fixed(o, h, 1);
	out_str(o, "\" fill=\"url(#background)\"/>\n");
	out_text(o, "title", mid, fs * 2, "", title);
	if (op->subtitle && *op->subtitle)
		out_text(o, "subtitle", mid, fs * 4, "", op->subtitle);
	out_text(o, "details", XPAD, h - s->ypad2 / 2, "", " ");
	out_text(o, "unzoom", XPAD, fs * 2, " class=\"hide\"", "Reset Zoom");
	out_text(o, "search", w - XPAD - 100, fs * 2, "", "Search");
	out_text(o, "ignorecase", w - XPAD - 16, fs * 2, "", "ic");
	out_text(o, "matched", w - XPAD - 100, h - s->ypad2 / 2, "", " ");
}

/* The SVG flamegraph.pl writes for an input without samples. */
static void svg_empty(struct svg *s)
{
	struct out *o = &s->out;

	svg_open(s, s->o->fontsize * 5, false);
	out_str(o, "<text x=\"");
	out_fixed(o, (int)(s->o->width / 2), 2);
	out_str(o, "\" y=\"");
	out_num(o, s->o->fontsize * 2);
	out_str(o, "\" text-anchor=\"middle\" font-size=\"");
	out_num(o, s->o->fontsize + 2);
	out_str(o, "\">ERROR: no samples to draw.</text>\n</svg>\n");
}

/* Options the writer cannot draw with. */
static int opts_check(const struct flamegraph_opts *o)
{
	if (o->width <= 2 * XPAD || o->height < 2 || !(o->minwidth >= 0) ||
	    (o->minwidth_percent && o->minwidth > 100) || !(o->fontsize > 0) ||
	    !(o->fontwidth > 0) || (unsigned)o->colors >= FLAME_COLORS_COUNT || !o->countname ||
	    !o->nametype || !o->fonttype)
		return -EINVAL;
	if (o->notes && (strpbrk(o->notes, "<>") || strstr(o->notes, "--")))
		return -EINVAL;
	return 0;
}

/* Scale, pruning threshold, depth and height: flamegraph.pl's, before drawing. */
static int svg_measure(struct svg *s)
{
	const struct flamegraph_opts *o = s->o;

	s->timemax = s->t->total;
	s->wpt = (o->width - 2.0 * XPAD) / s->timemax;
	s->minwidth_time = o->minwidth_percent ? s->timemax * o->minwidth / 100 : o->minwidth / s->wpt;
	s->ypad1 = o->fontsize * 3;
	s->ypad2 = o->fontsize * 2 + 10;
	s->ypad3 = o->fontsize * 2;
	s->maxdelta = 1;
	unit_scale_init(&s->scale, o->unit, s->t->total > s->t->base_total ? s->t->total
									 : s->t->base_total);
	/* only the diff colors need the largest change of every frame, drawn or not */
	int err = tree_walk(s->t, o->colors == FLAME_COLORS_DIFF ? -INFINITY : s->minwidth_time,
			    measure_node, s);
	s->imageheight = (s->depthmax + 1.0) * o->height + s->ypad1 + s->ypad2;
	if (o->subtitle && *o->subtitle)
		s->imageheight += s->ypad3;
	return err;
}

/* Writes the whole document once the tree has samples. */
static int svg_write(struct svg *s)
{
	int err = svg_measure(s);

	if (err)
		return err;
	svg_open(s, s->imageheight, true);
	svg_style(s);
	svg_script(s);
	svg_controls(s);
	out_str(&s->out, "<g id=\"frames\">\n");
	err = tree_walk(s->t, s->minwidth_time, draw_node, s);
	out_str(&s->out, "</g>\n</svg>\n");
	out_flush(&s->out);
	return err ? err : s->out.err;
}

/* Validates, loads the palette, writes the SVG (or the empty one), saves the palette. */
int flamegraph_write_tree(struct flame_tree *t, FILE *f, const struct flamegraph_opts *o)
{
	int err = opts_check(o);
	struct svg *s = err ? NULL : calloc(1, sizeof(*s));

	if (err || !s)
		return err ? err : -ENOMEM;
	s->out.f = f;
	s->o = o;
	s->t = t;
	if (!t->sorted)
		err = flame_tree_finish(t);
	if (!err && !(s->colors = calloc(t->nkeys + 1, sizeof(*s->colors))))
		err = -ENOMEM;
	if (!err && o->palette && (err = pal_load(&s->pal, o->palette)) && o->palette_failed)
		*o->palette_failed = FLAME_PALETTE_READ;
	if (!err && t->total <= 0) {
		svg_empty(s);
		out_flush(&s->out);
		err = s->out.err ? s->out.err : -ENODATA;
	} else if (!err) {
		err = svg_write(s);
	}
	if (!err && o->palette && (err = pal_save(&s->pal, o->palette)) && o->palette_failed)
		*o->palette_failed = FLAME_PALETTE_WRITE;
	pal_free(&s->pal);
	free(s->colors);
	free(s->fname);
	free(s);
	return err;
}

/* The tree of p's samples, written. */
int flamegraph_write(struct profile *p, FILE *f, const struct flamegraph_opts *o)
{
	struct flame_tree t;
	int err = flame_tree_init(&t, &p->strings);

	if (!err)
		err = flame_tree_add_profile(&t, p, o, false);
	if (!err)
		err = flamegraph_write_tree(&t, f, o);
	flame_tree_release(&t);
	return err;
}
