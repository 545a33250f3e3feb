/* Benchmark helper: symbolizes a batch of ELF virtual addresses of one file through
 * lib/symbolize/symbolize and prints them as `addr2line -f -i` does: per address, one "FUNCTION" line and
 * one "FILE:LINE" line per frame, innermost first ("??" / "??:0" when unknown), in input order.
 * Default: symbolizer_file_frames (ELF and DWARF lookups, inline chains, lines, demangling).
 * --profile: intern_file, which also builds the profile's locations, functions and
 * strings, as a recording does.
 * The batch is looked up in address order (each file's tables are then walked in order, not at
 * random); --in-order looks it up as given. -a prints each address first, as addr2line -a.
 * usage: symbolize_addrs [--profile] [--in-order] [-a] FILE [ADDRESSES_FILE]
 *        (hex addresses, one per line; default stdin)
 * Prints "firn: N addresses, M frames, T s" on stderr. It exits without freeing what it built,
 * as addr2line does: the kernel takes the memory back faster. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "symbolize/intern.h"
#include "model/profile.h"
#include "symbolize/symbolize.h"
#include "base/vec.h"

/* Seconds of the monotonic clock. */
static double now(void)
{
	return mono_ns() / 1e9;
}

/* Reads hex addresses (optional 0x), one per line; returns how many (or -1). */
static long read_addrs(FILE *in, uint64_t **out)
{
	size_t n = 0, cap = 1024, len = 0, bcap = 1 << 20;
	char *buf = malloc(bcap);
	uint64_t *a = malloc(cap * sizeof(*a));
	size_t r;

	while (buf && (r = fread(buf + len, 1, bcap - len - 1, in)) > 0) {
		len += r;
		if (VEC_GROW(buf, bcap, len + 2))
			return -1;
	}
	if (!buf || !a)
		return -1;
	buf[len] = 0;
	for (char *p = buf; *p;) {
		while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
			p++;
		if (!*p)
			break;
		uint64_t v = 0;
		int digits = 0;
		if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
			p += 2;
		for (;; p++, digits++) {
			int d = *p >= '0' && *p <= '9' ? *p - '0'
				: *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
				: *p >= 'A' && *p <= 'F' ? *p - 'A' + 10 : -1;
			if (d < 0)
				break;
			v = v << 4 | d;
		}
		if (!digits)
			return -1;
		if (VEC_GROW(a, cap, n + 1))
			return -1;
		a[n++] = v;
	}
	free(buf);
	*out = a;
	return (long)n;
}

/* A plain output buffer: printing 300k lines through stdio's format parser would cost more than
 * a good part of the symbolizing we measure. */
struct out {
	char buf[1 << 16];
	size_t len;
};

/* Writes the buffer out. */
static void out_flush(struct out *o)
{
	if (o->len && fwrite(o->buf, 1, o->len, stdout) != o->len)
		exit(1);
	o->len = 0;
}

/* Lengths of the strings seen lately, by address: names and paths come back often. */
struct lens {
	const char *s[4096];
	size_t len[4096];
};

/* strlen through the cache. */
static size_t cached_len(struct lens *c, const char *s)
{
	size_t i = ((uintptr_t)s >> 3) & 4095;

	if (c->s[i] != s) {
		c->s[i] = s;
		c->len[i] = strlen(s);
	}
	return c->len[i];
}

/* Copies n bytes, short ones without a call (most names are short). */
static inline void copy(char *dst, const char *src, size_t n)
{
	if (n <= 16 && n >= 8) {
		memcpy(dst, src, 8);
		memcpy(dst + n - 8, src + n - 8, 8);
	} else if (n <= 32 && n > 16) {
		memcpy(dst, src, 16);
		memcpy(dst + n - 16, src + n - 16, 16);
	} else {
		memcpy(dst, src, n);
	}
}

/* Appends one frame's two lines: "NAME\nFILE:LINE\n". */
static void print_frame(struct out *o, const char *name, size_t nlen, const char *file,
			size_t flen, long long line)
{
	if (o->len + nlen + flen + 32 > sizeof(o->buf))
		out_flush(o);
	if (nlen + flen + 32 > sizeof(o->buf)) { /* absurdly long names */
		printf("%s\n%s:%lld\n", name, file, line);
		return;
	}
	char *p = o->buf + o->len, digits[24];
	int k = 0;
	unsigned long long u = line < 0 ? 0 : (unsigned long long)line;

	copy(p, name, nlen);
	p += nlen;
	*p++ = '\n';
	copy(p, file, flen);
	p += flen;
	*p++ = ':';
	do
		digits[k++] = '0' + u % 10;
	while ((u /= 10));
	while (k)
		*p++ = digits[--k];
	*p++ = '\n';
	o->len = p - o->buf;
}

/* Prints location id's frames; returns how many. */
static size_t print_location(struct out *o, const struct profile *p, int64_t id)
{
	const struct profile_location *l = &p->locations[id - 1];
	const struct strtab *t = &p->strings;

	if (!l->nlines) {
		print_frame(o, "??", 2, "??", 2, 0);
		return 1;
	}
	for (uint32_t i = 0; i < l->nlines; i++) {
		const struct profile_function *f = &p->functions[l->lines[i].function_id - 1];
		if (t->lens[f->filename])
			print_frame(o, t->strs[f->name], t->lens[f->name], t->strs[f->filename],
				    t->lens[f->filename], l->lines[i].line);
		else
			print_frame(o, t->strs[f->name], t->lens[f->name], "??", 2,
				    l->lines[i].line);
	}
	return l->nlines;
}

/* Prints resolved frames (or the unknown frame); returns how many. */
static long print_frames(struct out *o, struct lens *c, const struct symbolizer_frame *fr, int n)
{
	if (n <= 0) {
		print_frame(o, "??", 2, "??", 2, 0);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		const char *file = fr[i].file ? fr[i].file : "??";
		print_frame(o, fr[i].name, cached_len(c, fr[i].name), file, cached_len(c, file),
			    fr[i].line);
	}
	return n;
}

/* The order in which to look the addresses up: by address (a batch lets the symbolizer walk
 * each file's tables in order, as a profile's addresses can be), or as given. */
struct order {
	uint32_t *idx; /* look-up i is of addrs[idx[i]] */
};

/* Sorts the indexes of addrs by address: a radix sort, a pass per byte that differs. */
static int sort_order(struct order *ord, const uint64_t *addrs, long n, bool sorted)
{
	uint32_t *tmp = malloc((n ? n : 1) * sizeof(*tmp));
	uint64_t diff = 0;

	ord->idx = malloc((n ? n : 1) * sizeof(*ord->idx));
	if (!tmp || !ord->idx)
		return -1;
	for (long i = 0; i < n; i++) {
		ord->idx[i] = i;
		diff |= addrs[i] ^ addrs[0];
	}
	for (int shift = 0; sorted && shift < 64; shift += 8) {
		size_t count[257] = { 0 };
		if (!((diff >> shift) & 0xff))
			continue;
		for (long i = 0; i < n; i++)
			count[((addrs[ord->idx[i]] >> shift) & 0xff) + 1]++;
		for (int b = 0; b < 256; b++)
			count[b + 1] += count[b];
		for (long i = 0; i < n; i++)
			tmp[count[(addrs[ord->idx[i]] >> shift) & 0xff]++] = ord->idx[i];
		uint32_t *t = ord->idx;
		ord->idx = tmp;
		tmp = t;
	}
	free(tmp);
	return 0;
}

/* Prints "0x%016llx" as addr2line -a does. */
static void print_addr(struct out *o, uint64_t addr)
{
	if (o->len + 24 > sizeof(o->buf))
		out_flush(o);
	o->len += sprintf(o->buf + o->len, "0x%016llx\n", (unsigned long long)addr);
}

/* Symbolizes every address through profile locations (in ord's order), then prints them in
 * input order; frames printed, or -1. */
static long run_profile(struct symbolizer *s, const char *path, const uint64_t *addrs, long n,
			const struct order *ord, bool show_addr, struct out *o)
{
	struct profile p;
	struct intern in;
	int64_t *ids = malloc((n ? n : 1) * sizeof(*ids));
	long frames = 0;

	intern_init(&in);
	if (!ids || profile_init(&p))
		return -1;
	for (long i = 0; i < n; i++)
		if ((ids[ord->idx[i]] = intern_file(&in, s, &p, path, addrs[ord->idx[i]], false)) < 0)
			return -1;
	for (long i = 0; i < n; i++) {
		if (show_addr)
			print_addr(o, addrs[i]);
		frames += print_location(o, &p, ids[i]);
	}
	return frames;
}

/* Symbolizes every address into frames (in ord's order), then prints them in input order;
 * frames printed, or -1. */
static long run_frames(struct symbolizer *s, const char *path, const uint64_t *addrs, long n,
		       const struct order *ord, bool show_addr, struct out *o)
{
	static struct lens lens;
	struct symbolizer_file *f = symbolizer_file(s, path);
	size_t cap = n * 2 + 32, used = 0;
	struct symbolizer_frame *fr = malloc(cap * sizeof(*fr));
	uint32_t *first = malloc((n + 1) * sizeof(*first)), *count = malloc((n + 1) * sizeof(*count));
	long frames = 0;

	if (!f || !fr || !first || !count)
		return -1;
	for (long i = 0; i < n; i++) {
		if (VEC_GROW(fr, cap, used + 32))
			return -1;
		int k = symbolizer_file_frames(s, f, addrs[ord->idx[i]], false, fr + used, 32);
		if (k < 0)
			return -1;
		first[ord->idx[i]] = used;
		count[ord->idx[i]] = k;
		used += k;
	}
	for (long i = 0; i < n; i++) {
		if (show_addr)
			print_addr(o, addrs[i]);
		frames += print_frames(o, &lens, fr + first[i], count[i]);
	}
	return frames;
}

int main(int argc, char **argv)
{
	static struct out o;
	bool profile = false, in_order = false, show_addr = false;
	struct order ord;
	uint64_t *addrs;
	int a = 1;

	for (; a < argc && argv[a][0] == '-' && argv[a][1]; a++) {
		if (!strcmp(argv[a], "--profile"))
			profile = true;
		else if (!strcmp(argv[a], "--in-order"))
			in_order = true;
		else if (!strcmp(argv[a], "-a"))
			show_addr = true;
		else
			break;
	}
	FILE *in = a + 1 < argc ? fopen(argv[a + 1], "r") : stdin;
	if (a >= argc || !in) {
		fprintf(stderr, "usage: symbolize_addrs [--profile] [--in-order] [-a] FILE [ADDRESSES_FILE]\n");
		return 2;
	}
	long n = read_addrs(in, &addrs);
	double t0 = now();
	struct symbolizer *s = symbolizer_new();
	long frames = n < 0 || !s || sort_order(&ord, addrs, n, !in_order) ? -1
		: profile ? run_profile(s, argv[a], addrs, n, &ord, show_addr, &o)
		: run_frames(s, argv[a], addrs, n, &ord, show_addr, &o);
	if (frames < 0) {
		fprintf(stderr, "symbolize_addrs: out of memory\n");
		return 1;
	}
	out_flush(&o);
	fflush(stdout);
	fprintf(stderr, "firn: %ld addresses, %ld frames, %.3f s\n", n, frames, now() - t0);
	return 0;
}
