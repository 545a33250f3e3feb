/* Folded stacks (flamegraph.pl's input): writer (merged, sorted lines) and streaming reader. */
#include "format/folded.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "base/hashtab.h"
#include "base/vec.h"

/* Hash of n bytes, 8 at a time. */
static uint64_t text_hash(const char *s, size_t n, uint64_t seed)
{
	uint64_t h = seed ^ (n * 0x9e3779b97f4a7c15ULL), w;

	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	w = 0;
	if (n >= 4) { /* the last 1-7 bytes as two overlapping 4-byte loads, not a byte loop */
		uint32_t a, b;
		memcpy(&a, s, 4);
		memcpy(&b, s + n - 4, 4);
		w = (uint64_t)a << 32 | b;
	} else if (n) {
		w = (unsigned char)s[0] | (unsigned char)s[n / 2] << 8 | (unsigned char)s[n - 1] << 16;
	}
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
	return h ^ h >> 29;
}

/* Whether a[0..n) and b[0..n) are equal: inline 8-byte compares, as frame names are short. */
static inline bool same_bytes(const char *a, const char *b, size_t n)
{
	uint64_t x, y;
	uint32_t u[2], v[2];

	if (n < 4)
		return !n || (a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1]);
	if (n < 8) {
		memcpy(&u[0], a, 4);
		memcpy(&v[0], b, 4);
		memcpy(&u[1], a + n - 4, 4);
		memcpy(&v[1], b + n - 4, 4);
		return u[0] == v[0] && u[1] == v[1];
	}
	for (size_t i = 0; i + 8 < n; i += 8) {
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			return false;
	}
	memcpy(&x, a + n - 8, 8);
	memcpy(&y, b + n - 8, 8);
	return x == y;
}

/* A growing byte buffer. */
struct sbuf {
	char *s;
	size_t len, cap;
};

/* Makes room for n more bytes. */
static int sbuf_reserve(struct sbuf *b, size_t n)
{
	return n > SIZE_MAX - b->len ? -ENOMEM : VEC_GROW(b->s, b->cap, b->len + n);
}

/* Appends n bytes. */
static int sbuf_add(struct sbuf *b, const char *s, size_t n)
{
	if (!n)
		return 0;
	if (sbuf_reserve(b, n))
		return -ENOMEM;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	return 0;
}

/* Appends the character at s[0] (n bytes left) as a name writes it: ';' as ':', a newline as
 * ' ', a control character escaped (escape_char); returns the bytes of s it took or -ENOMEM. */
static int add_name_char(struct sbuf *b, const char *s, size_t n)
{
	char esc[ESCAPE_MAX], c = *s == ';' ? ':' : *s == '\n' || *s == '\r' ? ' ' : *s;
	size_t used = 1, k = c == *s ? escape_char(s, n, esc, &used) : 0;

	if (k ? sbuf_add(b, esc, k) : sbuf_add(b, &c, 1))
		return -ENOMEM;
	return (int)used;
}

/* Appends a name, replacing the bytes that would break a folded line and escaping control
 * characters, which a terminal would obey; the plain start is copied at once. */
static int sbuf_add_name(struct sbuf *b, const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && (unsigned char)s[i] >= 0x20 && s[i] != ';' && s[i] != 0x7f &&
	       (unsigned char)s[i] != 0xc2)
		i++;
	if (sbuf_add(b, s, i))
		return -ENOMEM;
	while (i < n) {
		int used = add_name_char(b, s + i, n - i);
		if (used < 0)
			return used;
		i += used;
	}
	return 0;
}

/* ---- writer ---- */

/* One distinct output line: its text in the arena and its summed count. */
struct wline {
	size_t off, len;
	uint64_t hash;
	int64_t count;
};

/* A name as written (sanitized), in the writer's compact name arena. */
struct wname {
	uint64_t off;
	uint32_t len;
	bool set;
};

struct writer {
	struct profile *p;
	const struct folded_opts *o;
	struct wname *names; /* by string id */
	size_t nnames;
	struct sbuf arena; /* the names, back to back: few cache misses when names repeat */
	struct sbuf text; /* every distinct line's text, back to back */
	struct sbuf cur;  /* the line being built */
	struct wline *lines;
	size_t n, cap;
	struct hashtab index; /* lines by text */
	struct profile_frame *frames;
	size_t fcap;
};

/* Appends the comm frame ("comm", "comm-PID", "comm-PID/TID"). */
static int w_comm(struct writer *w, const struct profile_sample *s)
{
	const char *comm = profile_label_str(w->p, s, "comm");
	int64_t pid = profile_label_num(w->p, s, "pid", INT64_MIN);
	int64_t tid = profile_label_num(w->p, s, "tid", INT64_MIN);
	char num[48];
	int n = 0;

	if ((w->o->pid || w->o->tid) && pid != INT64_MIN)
		n += snprintf(num, sizeof(num), "-%" PRId64, pid);
	if (w->o->tid && tid != INT64_MIN)
		n += snprintf(num + n, sizeof(num) - n, "/%" PRId64, tid);
	comm = comm && *comm ? comm : "[unknown]";
	if (sbuf_add_name(&w->cur, comm, strlen(comm)) || sbuf_add(&w->cur, num, n))
		return -ENOMEM;
	return 0;
}

/* Whether a frame is kernel code: a kernel frame or one inlined into a kernel location. */
static bool frame_is_kernel(const struct profile *p, const struct profile_frame *f)
{
	if (f->kind == FRAME_KERNEL)
		return true;
	return f->kind == FRAME_INLINE && f->mapping_id && f->mapping_id <= p->nmappings &&
	       p->mappings[f->mapping_id - 1].kind == FRAME_KERNEL;
}

/* Appends the written form of string id to w->cur, sanitizing it on first use. */
static int w_name(struct writer *w, uint32_t id)
{
	const struct strtab *t = &w->p->strings;

	if (id >= w->nnames && VEC_GROW_ZEROED(w->names, w->nnames, t->n > id ? t->n : id + 1))
		return -ENOMEM;
	struct wname *e = &w->names[id];
	if (!e->set) {
		const char *s = strtab_get(t, id);
		e->off = w->arena.len;
		e->set = true;
		if (sbuf_add_name(&w->arena, s, strlen(s)))
			return -ENOMEM;
		if (w->arena.len - e->off > UINT32_MAX)
			return -ENOMEM;
		e->len = w->arena.len - e->off; /* escapes make it longer */
	}
	return e->len ? sbuf_add(&w->cur, w->arena.s + e->off, e->len) : 0;
}

/* Appends one frame: its name and the suffix of its kind. */
static int w_frame(struct writer *w, const struct profile_frame *f)
{
	static const char *const suffix[] = { "", "_[k]", "_[j]", "_[i]" };
	int err;

	if (!f->name && !f->function_id)
		err = sbuf_add(&w->cur, "[unknown]", 9);
	else
		err = w_name(w, f->name);
	if (err)
		return -ENOMEM;
	if (f->kind == FRAME_INLINE && !w->o->annotate_inline)
		return 0;
	return sbuf_add(&w->cur, suffix[f->kind], f->kind ? 4 : 0);
}

/* Builds the text of sample s in w->cur. */
static int w_sample_text(struct writer *w, const struct profile_sample *s)
{
	bool first = true;

	w->cur.len = 0;
	if (w->o->comm_first) {
		if (w_comm(w, s))
			return -ENOMEM;
		first = false;
	}
	int64_t n = profile_frames(w->p, s, &w->frames, &w->fcap);
	if (n < 0)
		return (int)n;
	for (int64_t i = 0; i < n; i++) {
		if (w->o->no_kernel && frame_is_kernel(w->p, &w->frames[i]))
			continue;
		if ((!first && sbuf_add(&w->cur, ";", 1)) || w_frame(w, &w->frames[i]))
			return -ENOMEM;
		first = false;
	}
	return 0;
}

/* Whether line id's text is the one in w->cur (key: the uint64_t hash of that text). */
static bool w_line_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct writer *w = ctx;
	const struct wline *l = &w->lines[id];

	return l->hash == *(const uint64_t *)key && l->len == w->cur.len &&
	       !memcmp(w->text.s + l->off, w->cur.s, l->len);
}

/* Adds count to the line whose text is in w->cur, adding the line if new. */
static int w_count(struct writer *w, int64_t count)
{
	uint64_t h = text_hash(w->cur.s, w->cur.len, 0);
	int64_t id = hashtab_find(&w->index, h, w_line_eq, w, &h);

	if (id >= 0) {
		struct wline *l = &w->lines[id];
		if (__builtin_add_overflow(l->count, count, &l->count))
			l->count = count > 0 ? INT64_MAX : INT64_MIN;
		return 0;
	}
	if (w->n >= UINT32_MAX - 1 || VEC_GROW(w->lines, w->cap, w->n + 1) ||
	    hashtab_reserve(&w->index, w->n + 1))
		return -ENOMEM;
	w->lines[w->n] = (struct wline){ w->text.len, w->cur.len, h, count };
	if (sbuf_add(&w->text, w->cur.s, w->cur.len))
		return -ENOMEM;
	hashtab_add(&w->index, h, w->n++); /* reserved: cannot fail */
	return 0;
}

/* Orders lines by text, bytewise; a prefix sorts first. */
static int wline_cmp(const void *a, const void *b, void *arena)
{
	const struct wline *x = a, *y = b;
	int c = memcmp((char *)arena + x->off, (char *)arena + y->off, x->len < y->len ? x->len : y->len);

	if (c)
		return c;
	return CMP3(x->len, y->len);
}

/* Sorts the lines and writes those with a positive count (after the comm header if asked). */
static int w_output(struct writer *w, FILE *f)
{
	if (w->n)
		qsort_r(w->lines, w->n, sizeof(*w->lines), wline_cmp, w->text.s);
	if (w->o->comm_first && w->o->comm_header)
		fputs(FOLDED_COMM_HEADER "\n", f);
	for (size_t i = 0; i < w->n; i++) {
		const struct wline *l = &w->lines[i];
		if (l->count <= 0)
			continue;
		fwrite(w->text.s + l->off, 1, l->len, f);
		fprintf(f, " %" PRId64 "\n", l->count);
	}
	return ferror(f) ? -EIO : 0;
}

/* Builds every sample's line, merging equal lines, then sorts and writes them. */
int folded_write(struct profile *p, FILE *f, const struct folded_opts *o)
{
	struct writer w = { .p = p, .o = o };
	int err = 0;

	if (o->value_index >= p->nsample_types)
		return p->nsamples ? -EINVAL : 0;
	for (uint64_t i = 0; i < p->nsamples && !err; i++) {
		int64_t v = p->samples[i].values[o->value_index];
		if (!v)
			continue;
		err = w_sample_text(&w, &p->samples[i]);
		if (!err && w.cur.len)
			err = w_count(&w, v);
	}
	if (!err)
		err = w_output(&w, f);
	free(w.text.s);
	free(w.cur.s);
	free(w.names);
	free(w.arena.s);
	free(w.lines);
	hashtab_release(&w.index);
	free(w.frames);
	return err;
}

/* ---- reader ---- */

/* A frame text seen before (name and kind): its function and, unless inline, its location.
 * It lives in the reader's arena (names), 8-byte aligned, its text right after it: a lookup
 * that finds it loads one place, not an entry and then its text (with random frames those two
 * cache misses, one after the other, were a third of reading a flame graph's input). Its id in
 * the frame cache is its offset in the arena / 8. Its ids are 32-bit, as its own: 16 bytes and
 * the text, so that fewer entries straddle two cache lines and more of them stay cached. */
struct rent {
	uint32_t fn, loc, len;
	uint32_t kind; /* enum frame_kind */
};
#define RENT_ALIGN 8

/* One frame of the line being read. */
struct rframe {
	uint64_t fn, loc, hash;
	size_t start, len; /* its text in the line, suffix not included */
	enum frame_kind kind;
};

/* The sample of the last stack read, added to the profile after the next line's work: its
 * slot in the profile's sample index is prefetched meanwhile (a cache miss per distinct stack,
 * three quarters of adding one to a large profile). */
struct rpend {
	uint64_t *locs;
	size_t cap;
	uint32_t nlocs, nlabels; /* nlabels: 0 or 1 (comm) */
	int64_t count;
	uint64_t hash; /* profile_prefetch_sample's */
	struct profile_label label;
	bool set;
};

struct reader {
	struct profile *p;
	enum folded_comm comm;
	bool comm_first;  /* the first frame of each stack is the process name */
	bool seen_stack;  /* a stack line was read (the comm header must come before) */
	int64_t k_comm;   /* string id of the label key "comm" */
	struct sbuf comm_text; /* the last process name and its string id */
	int64_t comm_id;
	struct hashtab index; /* frame cache: rents (in names) by text and kind */
	size_t n;          /* its entries */
	struct sbuf names; /* the entries, each with its text */
	struct hashtab inl; /* multi-line (inline) locations: location ids - 1 */
	uint64_t kmap, jmap; /* "[kernel.kallsyms]" and "[jit]" mappings, created when first needed */
	struct rframe *frames; /* of the last stack added */
	size_t fcap, nframes;
	struct sbuf prev; /* text of the last stack added */
	uint64_t *locs; /* fcap entries too */
	struct profile_line *lines;
	size_t linecap;
	struct rpend pend;
};

/* Mapping id for frames of a kind (0 for user frames), creating it on first use. */
static int64_t r_mapping(struct reader *r, enum frame_kind kind)
{
	uint64_t *m = kind == FRAME_KERNEL ? &r->kmap : kind == FRAME_JIT ? &r->jmap : NULL;

	if (!m || *m)
		return m ? (int64_t)*m : 0;
	/* pprof takes the first mapping for the main binary: an unnamed one, not the kernel */
	if (!r->p->nmappings && profile_add_mapping(r->p, 0, 0, 0, "", "") < 0)
		return -ENOMEM;
	int64_t id = profile_add_mapping(r->p, 0, 0, 0,
					 kind == FRAME_KERNEL ? "[kernel.kallsyms]" : "[jit]", "");
	if (id > 0)
		*m = id;
	return id;
}

/* Hash of a frame's text and kind. */
static uint64_t r_hash(const char *text, size_t len, enum frame_kind kind)
{
	return text_hash(text, len, kind);
}

/* The entry whose id (in the frame cache) is id. */
static const struct rent *r_ent(const struct reader *r, uint32_t id)
{
	return (const struct rent *)(r->names.s + (size_t)id * RENT_ALIGN);
}

/* Creates the function (and location) of a frame not seen before and its entry, whose id goes
 * to *id. The text is NUL-terminated in place at len. */
static int r_new_frame(struct reader *r, char *text, size_t len, enum frame_kind kind,
		       uint32_t *id)
{
	size_t off = (r->names.len + RENT_ALIGN - 1) / RENT_ALIGN * RENT_ALIGN;

	if (len > UINT32_MAX || off / RENT_ALIGN >= UINT32_MAX - 1)
		return -ENOMEM; /* entry ids are 32-bit */
	text[len] = 0;
	int64_t fn = profile_function(r->p, text, NULL, "", 0);
	int64_t m = fn < 0 ? fn : r_mapping(r, kind);
	int64_t loc = m < 0 || kind == FRAME_INLINE ? m : profile_simple_location(r->p, m, fn, kind);
	struct rent e = { fn, loc, len, kind };

	if (loc < 0)
		return (int)loc;
	if (fn > UINT32_MAX || loc > UINT32_MAX)
		return -ENOMEM; /* the entry's ids are 32-bit */
	if (sbuf_reserve(&r->names, off - r->names.len + sizeof(e) + len))
		return -ENOMEM;
	r->names.len = off; /* the padding's bytes are never read */
	sbuf_add(&r->names, (const char *)&e, sizeof(e)); /* reserved: cannot fail */
	sbuf_add(&r->names, text, len);
	*id = off / RENT_ALIGN;
	r->n++;
	return 0;
}

/* Splits off a frame's kind suffix, hashes the frame and prefetches its cache slot, so that
 * the lookups of a whole line overlap their memory latency. */
static void r_frame_prepare(struct reader *r, const char *text, size_t len, struct rframe *f)
{
	enum frame_kind kind = FRAME_USER;

	if (len >= 4 && text[len - 4] == '_' && text[len - 3] == '[' && text[len - 1] == ']') {
		char c = text[len - 2];
		kind = c == 'k' ? FRAME_KERNEL : c == 'j' ? FRAME_JIT : c == 'i' ? FRAME_INLINE : 0;
		len -= kind ? 4 : 0;
	}
	f->len = len;
	f->kind = kind;
	f->hash = r_hash(text, len, kind);
	hashtab_prefetch(&r->index, f->hash);
}

/* A frame to look up: its text (f->len bytes) and kind. */
struct rkey {
	const char *text;
	const struct rframe *f;
};

/* Whether frame cache entry id is the frame of key (a struct rkey). */
static bool r_frame_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct reader *r = ctx;
	const struct rent *e = r_ent(r, id);
	const struct rkey *k = key;

	return e->len == k->f->len && e->kind == k->f->kind &&
	       (!k->f->len || same_bytes((const char *)(e + 1), k->text, k->f->len));
}

/* Looks up a prepared frame whose text is at text, setting its function and location and
 * creating what is new. */
static int r_frame(struct reader *r, char *text, struct rframe *f)
{
	struct rkey k = { text, f };
	int64_t id = hashtab_find(&r->index, f->hash, r_frame_eq, r, &k);

	if (id < 0) {
		uint32_t nid = 0;
		int err = hashtab_reserve(&r->index, r->n + 1);
		if (err || (err = r_new_frame(r, text, f->len, f->kind, &nid)))
			return err;
		id = nid;
		hashtab_add(&r->index, f->hash, nid); /* reserved: cannot fail */
	}
	f->fn = r_ent(r, id)->fn;
	f->loc = r_ent(r, id)->loc;
	return 0;
}

/* Hash of a multi-line location's key. */
static uint64_t inl_hash(uint64_t mapping, const struct profile_line *lines, uint32_t n)
{
	uint64_t h = text_hash((const char *)&mapping, sizeof(mapping), n);

	for (uint32_t i = 0; i < n; i++)
		h = text_hash((const char *)&lines[i].function_id, sizeof(uint64_t), h);
	return h;
}

/* Fills r->lines with the lines of f[0] with f[1..n) inlined into it: innermost first. */
static int r_fill_lines(struct reader *r, const struct rframe *f, uint32_t n)
{
	if (VEC_GROW(r->lines, r->linecap, n))
		return -ENOMEM;
	for (uint32_t k = 0; k < n; k++)
		r->lines[k] = (struct profile_line){ f[n - 1 - k].fn, 0 };
	return 0;
}

/* Location of f[0] with f[1..n) inlined into it (f[n - 1] innermost), interned. */
/* Whether location id + 1 is on mapping *key with the n lines in r->lines (ctx: the reader;
 * key: { mapping id, n }). */
static bool inl_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct reader *r = ctx;
	const struct profile_location *l = &r->p->locations[id];
	const uint64_t *k = key;

	return l->mapping_id == k[0] && l->nlines == k[1] &&
	       (!k[1] || !memcmp(l->lines, r->lines, k[1] * sizeof(*r->lines))); /* lines may be NULL at 0 */
}

static int64_t r_inline_loc(struct reader *r, const struct rframe *f, uint32_t n)
{
	int64_t m = r_mapping(r, f[0].kind);

	if (m < 0 || r_fill_lines(r, f, n))
		return -ENOMEM;
	uint64_t k[2] = { m, n }, h = inl_hash(m, r->lines, n);
	int64_t id = hashtab_find(&r->inl, h, inl_eq, r, k);
	if (id >= 0)
		return id + 1;
	if (r->p->nlocations >= UINT32_MAX - 1 || hashtab_reserve(&r->inl, r->inl.n + 1))
		return -ENOMEM;
	id = profile_add_location(r->p, m, 0, r->lines, n);
	if (id > 0)
		hashtab_add(&r->inl, h, id - 1); /* reserved: cannot fail */
	return id;
}

/* Turns the line's frames (root first) into location ids (leaf first) in r->locs; returns
 * their count or -ENOMEM. */
static int64_t r_locations(struct reader *r, size_t nf)
{
	size_t n = 0;

	for (size_t i = 0, j; i < nf; i = j) {
		const struct rframe *f = &r->frames[i];
		int64_t loc = f->loc;
		j = i + 1;
		if (f->kind == FRAME_INLINE) { /* nothing to inline into */
			loc = profile_simple_location(r->p, 0, f->fn, FRAME_INLINE);
		} else {
			while (j < nf && r->frames[j].kind == FRAME_INLINE)
				j++;
			if (j - i > 1)
				loc = r_inline_loc(r, f, j - i);
		}
		if (loc < 0)
			return loc;
		r->locs[n++] = loc;
	}
	for (size_t a = 0, b = n ? n - 1 : 0; a < b; a++, b--) {
		uint64_t t = r->locs[a];
		r->locs[a] = r->locs[b];
		r->locs[b] = t;
	}
	return n;
}

/* Grows the per-line frame and location arrays to hold n. */
static int r_reserve(struct reader *r, size_t n)
{
	size_t fcap = r->fcap; /* locs first: r->fcap grows only once both have room */

	return VEC_GROW(r->locs, fcap, n) || VEC_GROW(r->frames, r->fcap, n) ? -ENOMEM : 0;
}

/* Length of the common prefix of a[0..an) and b[0..bn). */
static size_t common_prefix(const char *a, size_t an, const char *b, size_t bn)
{
	size_t n = an < bn ? an : bn, i = 0;
	uint64_t x, y;

	for (; i + 8 <= n; i += 8) {
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			break;
	}
	while (i < n && a[i] == b[i])
		i++;
	return i;
}

/* How many leading frames s shares with the last stack added (sorted input shares many):
 * those whose text and ';' lie in the common prefix. Remembers s as the last stack. */
static int r_shared_frames(struct reader *r, const char *s, size_t len, size_t *nshared)
{
	size_t cp = common_prefix(s, len, r->prev.s, r->prev.len), k = 0;

	while (k + 1 < r->nframes && r->frames[k + 1].start <= cp)
		k++;
	*nshared = k;
	r->prev.len = 0;
	return sbuf_add(&r->prev, s, len);
}

/* Splits s[from..len) into frames after the nf shared ones; returns the frame count. */
static int64_t r_split(struct reader *r, const char *s, size_t from, size_t len, size_t nf)
{
	const char *end = s + len, *fr = s + from, *semi;

	do {
		semi = memchr(fr, ';', end - fr);
		const char *fe = semi ? semi : end;
		if (r_reserve(r, nf + 1))
			return -ENOMEM;
		r->frames[nf].start = fr - s;
		r_frame_prepare(r, fr, fe - fr, &r->frames[nf++]);
		fr = fe + 1;
	} while (semi);
	return nf;
}

/* Starts loading the cache entries that frames [from, nf) likely are (their home slots, which
 * r_frame_prepare prefetched): the line's lookups then wait on their entries together, not one
 * after the other (with random frames, those waits were a third of reading the input).
 * always_inline: as hashtab_prefetch, else gcc drops the calls. */
static inline __attribute__((always_inline)) void
r_prefetch_entries(const struct reader *r, size_t from, size_t nf)
{
	for (size_t i = from; i < nf; i++) {
		int64_t id = hashtab_peek(&r->index, r->frames[i].hash);
		if (id < 0)
			continue;
		const struct rent *e = r_ent(r, id);
		__builtin_prefetch(e);
		/* the text's end, often in the next cache line: an entry is 8-byte aligned */
		__builtin_prefetch((const char *)(e + 1) + r->frames[i].len);
	}
}

/* Adds the pending sample to the profile, if there is one. 0 or -ENOMEM. */
static int r_flush(struct reader *r)
{
	struct rpend *q = &r->pend;

	if (!q->set)
		return 0;
	q->set = false;
	return profile_add_sample_hashed(r->p, q->hash, q->locs, q->nlocs, &q->count, &q->label,
					 q->nlabels);
}

/* Makes a sample pending (nlabels 0 or 1), adding the one pending before: profile_add_sample
 * deferred by a line, in the same order. 0 or -ENOMEM. */
static int r_add(struct reader *r, const uint64_t *locs, uint32_t nlocs, int64_t count,
		 const struct profile_label *labels, uint32_t nlabels)
{
	struct rpend *q = &r->pend;

	uint64_t h = profile_prefetch_sample(r->p, locs, nlocs, labels, nlabels);
	int err = r_flush(r);
	if (err || VEC_GROW(q->locs, q->cap, nlocs ? nlocs : 1))
		return err ? err : -ENOMEM;
	if (nlocs)
		memcpy(q->locs, locs, nlocs * sizeof(*locs));
	q->nlocs = nlocs;
	q->nlabels = nlabels;
	q->count = count;
	q->hash = h;
	q->label = nlabels ? labels[0] : (struct profile_label){ 0 };
	q->set = true;
	return 0;
}

/* Adds the stack s[0..len) (frames separated by ';') with count and labels as a sample. */
static int r_stack(struct reader *r, char *s, size_t len, int64_t count,
		   const struct profile_label *labels, uint32_t nlabels)
{
	size_t shared;
	int err = r_shared_frames(r, s, len, &shared);
	int64_t nf = err ? err : r_split(r, s, shared ? r->frames[shared].start : 0, len, shared);

	r->nframes = 0;
	if (nf > 0)
		r_prefetch_entries(r, shared, nf);
	for (size_t i = shared; nf > 0 && (size_t)nf > i; i++)
		if ((err = r_frame(r, s + r->frames[i].start, &r->frames[i])))
			return err;
	if (nf < 0)
		return (int)nf;
	r->nframes = nf;
	int64_t n = r_locations(r, nf);
	if (n < 0)
		return (int)n;
	if (n > UINT32_MAX)
		return -EINVAL;
	return r_add(r, r->locs, n, count, labels, nlabels);
}

/* String id of the process name s[0..len), interned once per run of equal names. */
static int64_t r_comm(struct reader *r, const char *s, size_t len)
{
	if (r->comm_id > 0 && r->comm_text.len == len && !memcmp(r->comm_text.s, s, len))
		return r->comm_id;
	r->comm_text.len = 0;
	if (sbuf_add(&r->comm_text, s, len) || sbuf_add(&r->comm_text, "", 1))
		return -ENOMEM;
	r->comm_text.len = len;
	r->comm_id = profile_intern(r->p, r->comm_text.s);
	return r->comm_id;
}

/* Adds the stack s[0..len) with count as a sample; with comm_first its first frame is the
 * process name (a "comm" label) and the frames follow it. */
static int r_sample(struct reader *r, char *s, size_t len, int64_t count)
{
	static const struct profile_label no_label; /* r_add copies from these */
	struct profile_label comm;

	if (!r->comm_first)
		return r_stack(r, s, len, count, &no_label, 0);
	char *semi = memchr(s, ';', len);
	size_t clen = semi ? (size_t)(semi - s) : len;
	int64_t id = r_comm(r, s, clen);
	if (id < 0)
		return (int)id;
	comm = (struct profile_label){ .key = r->k_comm, .str = id };
	if (!semi)
		return r_add(r, NULL, 0, count, &comm, 1);
	return r_stack(r, semi + 1, len - clen - 1, count, &comm, 1);
}

/* Parses a count: digits, optionally a '.' and more digits (rounded half up). Returns 0,
 * -EINVAL when it is not a count, -EOVERFLOW when it is one over INT64_MAX. */
static int parse_count(const char *s, size_t n, int64_t *out)
{
	size_t i = 0;
	int64_t v = 0;
	bool big = false;

	if (!n || s[0] < '0' || s[0] > '9')
		return -EINVAL;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		big |= __builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s[i] - '0', &v);
	if (i < n) {
		if (s[i++] != '.')
			return -EINVAL;
		if (i < n && s[i] >= '5')
			big |= __builtin_add_overflow(v, 1, &v);
		for (; i < n; i++)
			if (s[i] < '0' || s[i] > '9')
				return -EINVAL;
	}
	*out = v;
	return big ? -EOVERFLOW : 0;
}

/* Whitespace that may end a line. */
static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A comment line s[0..len): FOLDED_COMM_HEADER before the first stack turns comm_first on
 * (FOLDED_COMM_AUTO). */
static void r_comment(struct reader *r, const char *s, size_t len)
{
	if (r->comm == FOLDED_COMM_AUTO && !r->seen_stack && len == strlen(FOLDED_COMM_HEADER) &&
	    !memcmp(s, FOLDED_COMM_HEADER, len))
		r->comm_first = true;
}

/* Parses one line: a comment, a stack or a bad line (counted); counts past INT64_MAX, in all,
 * are -EOVERFLOW. */
static int r_line(struct reader *r, char *s, size_t len, struct folded_stats *st)
{
	int64_t count;

	while (len && is_blank(s[len - 1]))
		len--;
	if (!len)
		return 0;
	size_t ws = len, slen;
	while (ws && s[ws - 1] != ' ' && s[ws - 1] != '\t')
		ws--;
	for (slen = ws; slen && is_blank(s[slen - 1]);)
		slen--;
	int err = slen ? parse_count(s + ws, len - ws, &count) : -EINVAL;
	if (err == -EINVAL && s[0] == '#') {
		r_comment(r, s, len);
		return 0;
	}
	st->lines++;
	if (err == -EINVAL) {
		st->bad_lines++;
		return 0;
	}
	if (err || count > INT64_MAX - (int64_t)st->samples)
		return -EOVERFLOW; /* sums over samples must not overflow */
	st->samples += count;
	r->seen_stack = true;
	return count ? r_sample(r, s, slen, count) : 0;
}

/* The input read in large blocks: lines are found with memchr in place, not copied. */
struct lbuf {
	FILE *f;
	char *s;
	size_t cap, pos, len; /* the unread bytes are s[pos..len) */
};

#define LBUF_BLOCK (1u << 20)

/* Moves the unread bytes to the front and reads more after them, doubling the buffer (up to
 * FOLDED_MAX_LINE + 1 bytes, for a line that long) when less than half a block is free.
 * Returns the bytes added, 0 at the end of the input (or with the buffer full), -EINVAL when
 * they hold a NUL byte, or -ENOMEM. */
static ssize_t lbuf_fill(struct lbuf *b)
{
	if (b->pos) {
		memmove(b->s, b->s + b->pos, b->len - b->pos);
		b->len -= b->pos;
		b->pos = 0;
	}
	if (b->cap - b->len < LBUF_BLOCK / 2 && b->cap < FOLDED_MAX_LINE + (size_t)1) {
		size_t max = FOLDED_MAX_LINE + (size_t)1, need = b->cap ? b->cap * 2 : LBUF_BLOCK;
		if (vec_grow_max((void **)&b->s, &b->cap, need < max ? need : max, 1, max))
			return -ENOMEM;
	}
	if (b->len == b->cap)
		return 0;
	size_t n = fread(b->s + b->len, 1, b->cap - b->len, b->f);
	if (memchr(b->s + b->len, 0, n))
		return -EINVAL; /* text has no NUL byte: binary data, /dev/zero */
	b->len += n;
	return n;
}

/* Skips the rest of a line longer than the buffer (the unread bytes hold its start); returns
 * 0 or lbuf_fill's -errno. */
static int lbuf_skip_line(struct lbuf *b)
{
	for (;;) {
		char *nl = memchr(b->s + b->pos, '\n', b->len - b->pos);
		if (nl) {
			b->pos = nl + 1 - b->s;
			return 0;
		}
		b->pos = b->len;
		ssize_t n = lbuf_fill(b);
		if (n <= 0)
			return (int)n;
	}
}

/* The next line (with its newline, if any) in place in the buffer: at most FOLDED_MAX_LINE
 * bytes are kept, a longer line is read and dropped and *too_long set. Returns the bytes of the
 * line kept (0 at the end of the input or for a dropped line) or lbuf_fill's -errno. */
static ssize_t lbuf_line(struct lbuf *b, char **line, bool *too_long)
{
	size_t scanned = 0;

	*too_long = false;
	for (;;) {
		size_t avail = b->len - b->pos;
		char *nl = avail > scanned ? memchr(b->s + b->pos + scanned, '\n', avail - scanned)
					   : NULL;
		size_t n = nl ? (size_t)(nl + 1 - (b->s + b->pos)) : avail;
		if (n > FOLDED_MAX_LINE) {
			*too_long = true;
			return lbuf_skip_line(b);
		}
		if (nl) {
			*line = b->s + b->pos;
			b->pos += n;
			return n;
		}
		scanned = n;
		ssize_t r = lbuf_fill(b);
		if (r < 0)
			return r;
		if (!r) { /* the end: a last line without its newline, or none */
			*line = scanned ? b->s + b->pos : NULL;
			b->pos = b->len;
			return scanned;
		}
	}
}

int folded_read(struct profile *p, FILE *f, struct folded_stats *st)
{
	return folded_read_comm(p, f, FOLDED_COMM_AUTO, st);
}

/* Reads line by line: memory grows with distinct frames and stacks only. */
int folded_read_comm(struct profile *p, FILE *f, enum folded_comm comm, struct folded_stats *st)
{
	struct reader r = { .p = p, .comm = comm, .comm_first = comm == FOLDED_COMM_YES };
	struct folded_stats none;
	struct lbuf in = { .f = f };
	char *line;
	bool too_long;
	ssize_t n = 0;
	int err = 0;

	if (!st)
		st = &none;
	memset(st, 0, sizeof(*st));
	if (profile_add_sample_type(p, "samples", "count") < 0 ||
	    (r.k_comm = profile_intern(p, "comm")) < 0)
		return -ENOMEM;
	flockfile(f);
	while (!err && ((n = lbuf_line(&in, &line, &too_long)) > 0 || (!n && too_long))) {
		st->line++;
		if (too_long) {
			st->lines++;
			st->bad_lines++;
		} else {
			err = r_line(&r, line, n, st);
		}
	}
	if (!err && n < 0)
		err = (int)n;
	if (!err && ferror(f))
		err = -EIO;
	int ferr = r_flush(&r); /* the last sample, or the one before an error, as when undeferred */
	err = err ? err : ferr;
	funlockfile(f);
	free(in.s);
	hashtab_release(&r.index);
	free(r.names.s);
	free(r.prev.s);
	free(r.comm_text.s);
	hashtab_release(&r.inl);
	free(r.frames);
	free(r.locs);
	free(r.lines);
	free(r.pend.locs);
	return err;
}
