/* firn diff's model: two hists joined by function, the z test on each change, rules decided by
 * confidence bounds of each change, and the folded stacks of two profiles joined line by line. */
#include "analyze/diff.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/stats.h"
#include "base/vec.h"

/* ---- joining two hists ---- */

/* Where a joined entry came from, while joining. */
enum { FROM_BASE = 1, FROM_NEW = 2, FROM_BOTH = 3, FROM_GONE = 0 };

/* Appends the entry of base hist entry b and new hist entry n (one of them may be NULL). */
static void push_entry(struct diff *d, uint8_t *from, const struct hist_entry *b,
		       const struct hist_entry *n)
{
	struct diff_entry *e = &d->entries[d->n];

	memset(e, 0, sizeof(*e));
	e->name = n ? n->name : b->name;
	e->module = n ? n->module : b->module;
	if (b) {
		e->self[DIFF_BASE] = b->self;
		e->total[DIFF_BASE] = b->total;
	}
	if (n) {
		e->self[DIFF_NEW] = n->self;
		e->total[DIFF_NEW] = n->total;
	}
	from[d->n++] = (b ? FROM_BASE : 0) | (n ? FROM_NEW : 0);
}

/* qsort_r callback: indexes of entries (arg) by name, then the larger (total, then self) first,
 * so that among entries of one name the largest pair first: a frame whose module one side does
 * not know ("_start" in folded stacks) pairs with the other side's largest of that name (the
 * program's _start, not the dynamic loader's), whatever order the profile's tables had. */
static int cmp_index_name(const void *a, const void *b, void *arg)
{
	const struct diff_entry *e = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = strcmp(e[x].name, e[y].name);
	int64_t tx = e[x].total[0] + e[x].total[1], ty = e[y].total[0] + e[y].total[1];
	int64_t sx = e[x].self[0] + e[x].self[1], sy = e[y].self[0] + e[y].self[1];

	if (c)
		return c;
	if (tx != ty)
		return tx < ty ? 1 : -1;
	if (sx != sy)
		return sx < sy ? 1 : -1;
	return (x > y) - (x < y);
}

/* Moves the new-only entry j into the base-only entry i; j is left to be dropped. The pair
 * takes NEW's module unless that is unknown. */
static void pair_up(struct diff *d, uint8_t *from, size_t i, size_t j)
{
	struct diff_entry *b = &d->entries[i], *n = &d->entries[j];

	b->self[DIFF_NEW] = n->self[DIFF_NEW];
	b->total[DIFF_NEW] = n->total[DIFF_NEW];
	if (*n->module)
		b->module = n->module;
	from[i] = FROM_BOTH;
	from[j] = FROM_GONE;
}

/* The length of module's name without its version, and whether it is a shared object: up to
 * ".so" (libssl.so.3, libssl.so.1.1 -> libssl), then without a trailing run of digits, dots,
 * dashes and underscores (python3.11 -> python, app-1.2 -> app); the whole name when that
 * leaves nothing. */
static size_t module_stem(const char *m, bool *so)
{
	size_t n = strlen(m);

	*so = false;
	for (const char *s = m; (s = strstr(s, ".so")); s += 3)
		if (s[3] == '\0' || s[3] == '.') {
			*so = true;
			n = s - m;
			break;
		}
	size_t k = n;
	while (k > 0 && strchr("0123456789.-_", m[k - 1]))
		k--;
	return k ? k : n;
}

/* True when modules a and b are one file in two versions (equal stems, both shared objects or
 * neither). */
static bool same_module_versions(const char *a, const char *b)
{
	bool soa, sob;
	size_t la = module_stem(a, &soa), lb = module_stem(b, &sob);

	return la == lb && soa == sob && !memcmp(a, b, la);
}

/* ---- the main executable of a profile ---- */

/* The base name of mapping m's file (as hist names modules). */
static const char *mapping_base(const struct profile *p, const struct profile_mapping *m)
{
	const char *file = profile_str(p, m->filename), *base = strrchr(file, '/');

	return base && base[1] ? base + 1 : file;
}

/* True when mapping m holds a program's own code: a file of user code that is no shared object
 * by name, no pseudo file ("[vdso]", "[heap]") and no runtime's or JIT's mapping. */
static bool is_program(const struct profile *p, const struct profile_mapping *m)
{
	const char *base = mapping_base(p, m);
	bool so;

	if (m->kind != FRAME_USER || m->runtime != FRAME_NATIVE || !*base || *base == '[' ||
	    *profile_str(p, m->filename) == '[')
		return false;
	module_stem(base, &so);
	return !so;
}

/* Adds into w[m - 1] the value (type vi) of each sample passing o that goes through mapping m,
 * once per sample however many of its frames are there. Returns 0 or -ENOMEM. */
static int mapping_weights(const struct profile *p, const struct hist_opts *o, uint32_t vi,
			   double *w)
{
	uint64_t *last = calloc(p->nmappings + 1, sizeof(*last)); /* 1 + the last sample counted */

	if (!last)
		return -ENOMEM;
	for (uint64_t i = 0; i < p->nsamples && vi < p->nsample_types; i++) {
		const struct profile_sample *s = &p->samples[i];
		if (s->values[vi] <= 0 || !hist_sample_match(p, s, o))
			continue;
		for (uint32_t k = 0; k < s->nlocs; k++) {
			uint64_t l = s->location_ids[k];
			uint64_t m = l && l <= p->nlocations ? p->locations[l - 1].mapping_id : 0;
			if (!m || m > p->nmappings || last[m] == i + 1)
				continue;
			last[m] = i + 1;
			w[m - 1] += s->values[vi];
		}
	}
	free(last);
	return 0;
}

const char *diff_main_module(const struct profile *p, const struct hist_opts *o,
			     uint32_t value_index)
{
	double *w = calloc(p->nmappings + 1, sizeof(*w)), best_w = 0;
	const char *best = "";

	if (!w || mapping_weights(p, o, value_index, w)) {
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	for (uint64_t m = 0; m < p->nmappings; m++) {
		if (!w[m] || !is_program(p, &p->mappings[m]))
			continue;
		const char *base = mapping_base(p, &p->mappings[m]);
		for (uint64_t k = m + 1; k < p->nmappings; k++) /* one file mapped again adds up */
			if (w[k] && !strcmp(mapping_base(p, &p->mappings[k]), base)) {
				w[m] += w[k];
				w[k] = 0;
			}
		if (w[m] > best_w) {
			best_w = w[m];
			best = base;
		}
	}
	free(w);
	return best;
}

/* ---- pairing ---- */

/* True when modules b (BASE's) and n (NEW's) are the main executables of their sides. */
static bool both_main(const char *b, const char *n, const char *const mains[2])
{
	return mains && mains[DIFF_BASE] && mains[DIFF_NEW] && *mains[DIFF_BASE] &&
	       *mains[DIFF_NEW] && !strcmp(b, mains[DIFF_BASE]) && !strcmp(n, mains[DIFF_NEW]);
}

/* True when entries b and n (one name, both unpaired) pair in round r: 0 when either module is
 * unknown, 1 also when they are versions of one module or the two main executables, 2 whatever
 * the modules. */
static bool pairs_in(const struct diff_entry *b, const struct diff_entry *n, int r,
		     const char *const mains[2])
{
	if (!*b->module || !*n->module)
		return true;
	return r == 2 || (r == 1 && (same_module_versions(b->module, n->module) ||
				     both_main(b->module, n->module, mains)));
}

/* One run of unpaired entries of one name: [bi, be) of bidx and [ni, ne) of nidx. */
struct run {
	const size_t *bidx, *nidx;
	size_t bi, be, ni, ne;
};

/* Pairs base-only and new-only entries of run u, in rounds up to last (see pairs_in): the
 * closest modules first. */
static void pair_run(struct diff *d, uint8_t *from, const struct run *u, int last,
		     const char *const mains[2])
{
	for (int r = 0; r <= last; r++)
		for (size_t i = u->bi; i < u->be; i++)
			for (size_t j = u->ni; j < u->ne && from[u->bidx[i]] == FROM_BASE; j++)
				if (from[u->nidx[j]] == FROM_NEW &&
				    pairs_in(&d->entries[u->bidx[i]], &d->entries[u->nidx[j]], r, mains))
					pair_up(d, from, u->bidx[i], u->nidx[j]);
}

/* By module, the second pass of diff_join: entries (named after their modules) left unpaired
 * whose modules are versions of one module or the two main executables; the pair takes NEW's
 * name too. */
static void join_modules(struct diff *d, uint8_t *from, const char *const mains[2])
{
	for (size_t i = 0; i < d->n; i++)
		for (size_t j = 0; j < d->n && from[i] == FROM_BASE; j++)
			if (from[j] == FROM_NEW && *d->entries[i].module && *d->entries[j].module &&
			    pairs_in(&d->entries[i], &d->entries[j], 1, mains)) {
				pair_up(d, from, i, j);
				d->entries[i].name = d->entries[j].name;
			}
}

/* The second pass of diff_join: unpaired entries of the same name whose modules are unknown on
 * one side, or versions of one module, or the main executables, or (DIFF_MATCH_NAME) any. */
static int join_unpaired(struct diff *d, uint8_t *from, enum diff_match match,
			 const char *const mains[2])
{
	size_t *bidx = malloc((d->n + 1) * sizeof(*bidx)), *nidx = malloc((d->n + 1) * sizeof(*nidx));
	size_t nb = 0, nn = 0;

	if (!bidx || !nidx) {
		free(bidx);
		free(nidx);
		return -ENOMEM;
	}
	for (size_t i = 0; i < d->n; i++) {
		if (from[i] == FROM_BASE)
			bidx[nb++] = i;
		else if (from[i] == FROM_NEW)
			nidx[nn++] = i;
	}
	qsort_r(bidx, nb, sizeof(*bidx), cmp_index_name, d->entries);
	qsort_r(nidx, nn, sizeof(*nidx), cmp_index_name, d->entries);
	for (size_t i = 0, j = 0; i < nb && j < nn;) {
		const char *name = d->entries[bidx[i]].name;
		int c = strcmp(name, d->entries[nidx[j]].name);
		if (c) {
			c < 0 ? i++ : j++;
			continue;
		}
		size_t be = i, ne = j;
		while (be < nb && !strcmp(d->entries[bidx[be]].name, name))
			be++;
		while (ne < nn && !strcmp(d->entries[nidx[ne]].name, name))
			ne++;
		struct run u = { bidx, nidx, i, be, j, ne };
		pair_run(d, from, &u, match == DIFF_MATCH_NAME ? 2 : 1, mains);
		i = be;
		j = ne;
	}
	free(bidx);
	free(nidx);
	return 0;
}

int diff_join(struct diff *d, const struct hist *base, const struct hist *new_,
	      const struct diff_join_opts *o)
{
	static const struct diff_join_opts none = { DIFF_MATCH_MODULE, { NULL, NULL }, false };
	size_t cap = base->n + new_->n;
	uint8_t *from = malloc(cap + 1), *paired = calloc(new_->n + 1, 1);
	int err = 0;

	memset(d, 0, sizeof(*d));
	d->total[DIFF_BASE] = base->total;
	d->total[DIFF_NEW] = new_->total;
	d->events[DIFF_BASE] = base->events;
	d->events[DIFF_NEW] = new_->events;
	d->entries = malloc((cap + 1) * sizeof(*d->entries));
	if (!from || !paired || !d->entries) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < base->n; i++) {
		const struct hist_entry *b = &base->entries[i];
		const struct hist_entry *n = hist_find(new_, b->name, b->module);
		if (n)
			paired[n - new_->entries] = 1;
		push_entry(d, from, b, n);
	}
	for (size_t j = 0; j < new_->n; j++)
		if (!paired[j])
			push_entry(d, from, NULL, &new_->entries[j]);
	o = o ? o : &none;
	if (o->by_module)
		join_modules(d, from, o->mains);
	else
		err = join_unpaired(d, from, o->match, o->mains);
	size_t k = 0;
	for (size_t i = 0; i < d->n; i++)
		if (from[i] != FROM_GONE)
			d->entries[k++] = d->entries[i];
	d->n = k;
out:
	FREE_ALL(from, paired);
	return err;
}

void diff_release(struct diff *d)
{
	free(d->entries);
	memset(d, 0, sizeof(*d));
}

int64_t diff_value(const struct diff_entry *e, enum diff_metric m, int side)
{
	return m == DIFF_TOTAL ? e->total[side] : e->self[side];
}

double diff_share(const struct diff *d, const struct diff_entry *e, enum diff_metric m, int side)
{
	return d->total[side] > 0 ? (double)diff_value(e, m, side) / d->total[side] : 0.0;
}

double diff_events(const struct diff *d, int side)
{
	return d->events[side] > 0 ? d->events[side] : d->total[side];
}

/* Value v of a side in events: v itself for counts, else v's share of the side's events. */
static double in_events(const struct diff *d, int64_t v, int side)
{
	double n = diff_events(d, side);

	if (n == d->total[side] || d->total[side] <= 0)
		return v;
	return (double)v / d->total[side] * n;
}

double diff_p_value(const struct diff *d, const struct diff_entry *e, enum diff_metric m, int dir)
{
	double z = stats_z2prop(diff_share(d, e, m, DIFF_BASE), diff_events(d, DIFF_BASE),
				diff_share(d, e, m, DIFF_NEW), diff_events(d, DIFF_NEW));

	if (isnan(z))
		return 1;
	return dir > 0 ? stats_norm_sf(z) : stats_norm_cdf(z);
}

/* What diff_sort compares by. */
struct sort_key {
	const struct diff *d;
	enum diff_metric by;
	bool counts;
};

/* Size of e's change of metric m: of the raw value, or of the share times both totals (the
 * common denominator, so that equal changes of share compare equal, exactly). */
static unsigned __int128 change_size(const struct sort_key *k, const struct diff_entry *e,
				     enum diff_metric m)
{
	__int128 b = diff_value(e, m, DIFF_BASE), n = diff_value(e, m, DIFF_NEW);

	if (!k->counts) {
		b *= k->d->total[DIFF_NEW];
		n *= k->d->total[DIFF_BASE];
	}
	return n > b ? n - b : b - n;
}

/* qsort_r callback: larger change first, then the other metric's, then name, module. */
static int cmp_change(const void *a, const void *b, void *arg)
{
	const struct sort_key *k = arg;
	const struct diff_entry *x = a, *y = b;
	enum diff_metric other = k->by == DIFF_SELF ? DIFF_TOTAL : DIFF_SELF;
	unsigned __int128 cx = change_size(k, x, k->by), cy = change_size(k, y, k->by);

	if (cx != cy)
		return cx > cy ? -1 : 1;
	cx = change_size(k, x, other);
	cy = change_size(k, y, other);
	if (cx != cy)
		return cx > cy ? -1 : 1;
	int c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->module, y->module);
}

void diff_sort(struct diff *d, enum diff_metric by, bool counts)
{
	struct sort_key k = { d, by, counts };

	if (d->n)
		qsort_r(d->entries, d->n, sizeof(*d->entries), cmp_change, &k);
}

/* ---- rules ---- */

/* Parses the threshold after the operator op: "+N" or "N" for '>', "-N" for '<', then the unit
 * "pp" or "%" and the end. Returns 0 or -EINVAL. */
static int parse_threshold(struct diff_rule *r, char op, const char *s)
{
	char *end;

	if (op == '>' && *s == '+')
		s++;
	else if (op == '<' && *s == '-')
		s++;
	else if (op == '<' || *s == '-')
		return -EINVAL;
	if (!(*s >= '0' && *s <= '9') && *s != '.')
		return -EINVAL;
	errno = 0;
	r->threshold = strtod(s, &end);
	if (errno || end == s || !isfinite(r->threshold))
		return -EINVAL;
	if (!strcmp(end, "pp"))
		r->unit = DIFF_PP;
	else if (!strcmp(end, "%"))
		r->unit = DIFF_REL;
	else
		return -EINVAL;
	r->dir = op == '>' ? 1 : -1;
	return 0;
}

/* Sets r's kind from "self", "total" or "any" (the text before the first ':'). */
static int parse_kind(struct diff_rule *r, const char *s, size_t len, bool *any)
{
	*any = len == 3 && !strncmp(s, "any", 3);
	if (*any)
		return 0;
	if (len == 4 && !strncmp(s, "self", 4))
		r->metric = DIFF_SELF;
	else if (len == 5 && !strncmp(s, "total", 5))
		r->metric = DIFF_TOTAL;
	else
		return -EINVAL;
	return 0;
}

int diff_rule_parse(struct diff_rule *r, const char *text)
{
	const char *colon = strchr(text, ':'), *op = NULL;
	bool any;

	memset(r, 0, sizeof(*r));
	r->text = text;
	if (!colon || parse_kind(r, text, colon - text, &any))
		return -EINVAL;
	for (const char *s = colon + 1; *s; s++)
		if (*s == '>' || *s == '<')
			op = s;
	if (!op || op == colon + 1 || parse_threshold(r, *op, op + 1))
		return -EINVAL;
	size_t plen = op - (colon + 1);
	if (any) {
		if (plen == 4 && !strncmp(colon + 1, "self", 4))
			r->metric = DIFF_SELF;
		else if (plen == 5 && !strncmp(colon + 1, "total", 5))
			r->metric = DIFF_TOTAL;
		else
			return -EINVAL;
		return 0;
	}
	r->pattern = strndup(colon + 1, plen);
	return r->pattern ? 0 : -ENOMEM;
}

void diff_rule_release(struct diff_rule *r)
{
	free(r->pattern);
	r->pattern = NULL;
}

bool diff_rule_matches(const struct diff_rule *r, const struct diff_entry *e)
{
	return !r->pattern || !fnmatch(r->pattern, e->name, 0);
}

/* Converts a change of share d (a fraction) from base share p into the rule's unit. */
static double in_unit(const struct diff_rule *r, double p, double d)
{
	if (r->unit == DIFF_PP)
		return d * 100;
	if (p > 0)
		return d / p * 100;
	return d > 0 ? INFINITY : d < 0 ? -INFINITY : 0;
}

/* The bounds of entry e's change under rule r at critical value z, in the rule's unit:
 * Newcombe's interval of p2 - p1 in pp, or the MOVER-R interval of p2 / p1 as a percent change. */
static struct stats_interval change_bounds(const struct diff *d, const struct diff_rule *r,
					   const struct diff_entry *e, double z)
{
	double k1 = in_events(d, diff_value(e, r->metric, DIFF_BASE), DIFF_BASE);
	double k2 = in_events(d, diff_value(e, r->metric, DIFF_NEW), DIFF_NEW);
	double n1 = diff_events(d, DIFF_BASE), n2 = diff_events(d, DIFF_NEW);

	if (r->unit == DIFF_PP) {
		struct stats_interval iv = stats_mover_diff(k1, n1, k2, n2, 1, z);
		return (struct stats_interval){ iv.lo * 100, iv.hi * 100 };
	}
	struct stats_interval iv = stats_mover_ratio(k1, n1, k2, n2, z);
	return (struct stats_interval){ (iv.lo - 1) * 100, (iv.hi - 1) * 100 };
}

/* Appends finding f to *arr. */
static int push_finding(struct diff_finding **arr, size_t *n, size_t *cap,
			const struct diff_finding *f)
{
	if (VEC_GROW(*arr, *cap, *n + 1))
		return -ENOMEM;
	(*arr)[(*n)++] = *f;
	return 0;
}

/* Tests entry i under rule r: adds it to the tripped or the inconclusive findings, or neither
 * (passed), from the bounds of its change (see diff_rule_eval in diff.h). */
static int eval_entry(const struct diff *d, const struct diff_rule *r, size_t i,
		      struct diff_result *res)
{
	const struct diff_entry *e = &d->entries[i];
	double p1 = diff_share(d, e, r->metric, DIFF_BASE), p2 = diff_share(d, e, r->metric, DIFF_NEW);
	bool have = d->total[DIFF_BASE] > 0 && d->total[DIFF_NEW] > 0;
	double dmin = stats_min_detectable(p1, diff_events(d, DIFF_BASE), diff_events(d, DIFF_NEW),
					   res->z_critical, r->dir);
	struct stats_interval iv = change_bounds(d, r, e, res->z_critical);
	struct diff_finding f = {
		.entry = i, .base_pct = p1 * 100, .new_pct = p2 * 100,
		.change = in_unit(r, p1, p2 - p1), .low = iv.lo, .high = iv.hi,
		.p_value = diff_p_value(d, e, r->metric, r->dir),
		.detectable = isnan(dmin) ? NAN : fabs(in_unit(r, p1, r->dir * dmin)),
	};
	/* the bound nearer the threshold's side decides a trip, the other one a pass */
	double t = r->dir * r->threshold, sure = r->dir > 0 ? iv.lo : iv.hi;
	double unsure = r->dir > 0 ? iv.hi : iv.lo;
	bool no_base = r->unit == DIFF_REL && diff_value(e, r->metric, DIFF_BASE) <= 0;

	if (r->unit == DIFF_REL && p1 == 0)
		f.detectable = NAN;
	if (have && (sure - t) * r->dir > 0)
		return push_finding(&res->tripped, &res->ntripped, &res->captripped, &f);
	if (!have || ((unsure - t) * r->dir >= 0 && r->threshold > 0 && !no_base))
		return push_finding(&res->inconclusive, &res->ninconclusive, &res->capinconclusive,
				    &f);
	return 0;
}

int diff_rule_eval(const struct diff *d, const struct diff_rule *r, double confidence,
		   struct diff_result *res)
{
	int err = 0;

	memset(res, 0, sizeof(*res));
	for (size_t i = 0; i < d->n; i++)
		res->ntested += diff_rule_matches(r, &d->entries[i]);
	/* 1 - 0.99 is 0.010000000000000009 in doubles: keep the level the user meant */
	res->alpha = res->ntested ? round((1 - confidence) * 1e12) / 1e12 / res->ntested : NAN;
	res->z_critical = res->ntested ? -stats_norm_quantile(res->alpha) : NAN;
	for (size_t i = 0; i < d->n && !err; i++)
		if (diff_rule_matches(r, &d->entries[i]))
			err = eval_entry(d, r, i, res);
	if (res->ntripped)
		res->verdict = DIFF_TRIPPED;
	else if (res->ninconclusive || !res->ntested)
		res->verdict = DIFF_INCONCLUSIVE;
	return err;
}

void diff_result_release(struct diff_result *res)
{
	free(res->tripped);
	free(res->inconclusive);
	memset(res, 0, sizeof(*res));
}

/* ---- joined folded stacks ---- */

/* One parsed folded line of one side. */
struct line {
	const char *stack;
	size_t len;
	int64_t value;
};

/* qsort callback: stacks in byte order, a prefix before the longer stack. */
static int cmp_line(const void *a, const void *b)
{
	const struct line *x = a, *y = b;
	int c = memcmp(x->stack, y->stack, x->len < y->len ? x->len : y->len);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* Writes p as folded text into *text and splits it into sorted lines. Returns their count or
 * -errno. */
static int64_t side_lines(struct profile *p, const struct folded_opts *o, char **text,
			  struct line **lines)
{
	size_t len = 0, n = 0, cap = 0;
	FILE *f = open_memstream(text, &len);
	int err = f ? folded_write(p, f, o) : -ENOMEM;

	if (f && fclose(f) && !err)
		err = -ENOMEM;
	for (char *s = *text, *nl; !err && s && (nl = strchr(s, '\n')); s = nl + 1) {
		char *sp = memrchr(s, ' ', nl - s);
		if (!sp)
			continue;
		if (VEC_GROW(*lines, cap, n + 1))
			return -ENOMEM;
		(*lines)[n++] = (struct line){ s, sp - s, strtoll(sp + 1, NULL, 10) };
	}
	if (err)
		return err;
	if (n) /* *lines is NULL without lines: qsort(NULL, 0) is undefined */
		qsort(*lines, n, sizeof(**lines), cmp_line);
	return n;
}

/* Merges the sorted lines of both sides into ds->s. */
static int merge_lines(struct diff_stacks *ds, struct line *l[2], const size_t n[2])
{
	size_t i = 0, j = 0;

	ds->s = malloc((n[0] + n[1] + 1) * sizeof(*ds->s));
	if (!ds->s)
		return -ENOMEM;
	while (i < n[0] || j < n[1]) {
		int c = i == n[0] ? 1 : j == n[1] ? -1 : cmp_line(&l[0][i], &l[1][j]);
		const struct line *x = c <= 0 ? &l[0][i] : &l[1][j];
		struct diff_stack *s = &ds->s[ds->n++];
		*s = (struct diff_stack){ x->stack, x->len, { 0, 0 } };
		if (c <= 0)
			s->value[DIFF_BASE] = l[0][i++].value;
		if (c >= 0)
			s->value[DIFF_NEW] = l[1][j++].value;
		ds->total[DIFF_BASE] += s->value[DIFF_BASE];
		ds->total[DIFF_NEW] += s->value[DIFF_NEW];
	}
	return 0;
}

int diff_stacks_build(struct diff_stacks *ds, struct profile *base, const struct folded_opts *bo,
		      struct profile *new_, const struct folded_opts *no)
{
	struct line *l[2] = { NULL, NULL };
	int64_t n[2];
	int err;

	memset(ds, 0, sizeof(*ds));
	n[0] = side_lines(base, bo, &ds->text[0], &l[0]);
	n[1] = n[0] < 0 ? n[0] : side_lines(new_, no, &ds->text[1], &l[1]);
	err = n[0] < 0 ? n[0] : n[1] < 0 ? n[1] : 0;
	if (!err)
		err = merge_lines(ds, l, (size_t[2]){ n[0], n[1] });
	free(l[0]);
	free(l[1]);
	return err;
}

void diff_stacks_release(struct diff_stacks *ds)
{
	free(ds->s);
	free(ds->text[0]);
	free(ds->text[1]);
	memset(ds, 0, sizeof(*ds));
}

int64_t diff_stacks_value(const struct diff_stacks *ds, size_t i, int side, bool normalize)
{
	int64_t v = ds->s[i].value[side];

	if (!normalize)
		return v;
	if (ds->total[side] <= 0)
		return 0;
	return llround((double)v * ds->total[!side] / ds->total[side]);
}

int diff_stacks_write_folded(const struct diff_stacks *ds, FILE *f, bool normalize)
{
	for (size_t i = 0; i < ds->n; i++) {
		fwrite(ds->s[i].stack, 1, ds->s[i].len, f);
		fprintf(f, " %lld %lld\n", (long long)diff_stacks_value(ds, i, DIFF_BASE, normalize),
			(long long)ds->s[i].value[DIFF_NEW]);
	}
	return ferror(f) ? -EIO : 0;
}

/* Frame kind of a folded frame from its suffix; *len loses the suffix. */
static enum frame_kind frame_kind_of(const char *s, size_t *len)
{
	static const char *const suffix[] = { NULL, "_[k]", "_[j]", "_[i]" };

	for (int k = FRAME_KERNEL; k <= FRAME_INLINE; k++)
		if (*len > 4 && !memcmp(s + *len - 4, suffix[k], 4)) {
			*len -= 4;
			return k;
		}
	return FRAME_USER;
}

/* Scratch space for one stack's frames. */
struct frames {
	uint32_t *names;
	enum frame_kind *kinds;
	size_t n, cap, capkinds; /* capacities of names and of kinds */
};

/* Splits stack s into names (interned into names) and kinds, reversed when reverse. */
static int split_stack(struct frames *fr, struct strtab *names, const struct diff_stack *s,
		       bool reverse)
{
	fr->n = 0;
	for (const char *p = s->stack, *end = s->stack + s->len; p <= end;) {
		const char *semi = memchr(p, ';', end - p);
		size_t len = (semi ? semi : end) - p;
		if (VEC_GROW(fr->names, fr->cap, fr->n + 1) ||
		    VEC_GROW(fr->kinds, fr->capkinds, fr->n + 1))
			return -ENOMEM;
		fr->kinds[fr->n] = frame_kind_of(p, &len);
		int64_t id = strtab_intern(names, p, len);
		if (id < 0)
			return (int)id;
		fr->names[fr->n++] = id;
		p = (semi ? semi : end) + 1;
	}
	for (size_t i = 0; reverse && i < fr->n / 2; i++) {
		uint32_t nm = fr->names[i];
		enum frame_kind kd = fr->kinds[i];
		fr->names[i] = fr->names[fr->n - 1 - i];
		fr->kinds[i] = fr->kinds[fr->n - 1 - i];
		fr->names[fr->n - 1 - i] = nm;
		fr->kinds[fr->n - 1 - i] = kd;
	}
	return 0;
}

int diff_stacks_tree(const struct diff_stacks *ds, struct flame_tree *t, bool normalize,
		     bool negate, bool reverse)
{
	struct frames fr = { 0 };
	int w = negate ? DIFF_BASE : DIFF_NEW, err = 0;

	for (size_t i = 0; i < ds->n && !err; i++) {
		err = split_stack(&fr, t->names, &ds->s[i], reverse);
		if (!err)
			err = flame_tree_add(t, fr.names, fr.kinds, fr.n, ds->s[i].value[w],
					     diff_stacks_value(ds, i, !w, normalize));
	}
	free(fr.names);
	free(fr.kinds);
	return err;
}

/* flame_tree_walk callback: the largest change of total below the root. */
static int measure_total(void *ctx, const struct flame_node *n)
{
	struct diff_total_colors *c = ctx;
	int64_t d = n->value > n->base ? n->value - n->base : n->base - n->value;

	if (n->depth && d > c->maxdelta)
		c->maxdelta = d;
	return 0;
}

int diff_total_colors_init(struct diff_total_colors *c, struct flame_tree *t, bool negate)
{
	c->maxdelta = 1;
	c->negate = negate;
	return flame_tree_walk(t, measure_total, c);
}

int diff_total_color(void *ctx, const struct flame_node *n, const char *name, uint8_t rgb[3])
{
	const struct diff_total_colors *c = ctx;
	int64_t d = (n->value - n->base) * (c->negate ? -1 : 1);
	int64_t m = d > c->maxdelta ? d : -d > c->maxdelta ? -d : c->maxdelta;

	if (!strcmp(name, "-") || !strcmp(name, "--"))
		return 0;
	rgb[0] = rgb[1] = rgb[2] = 255;
	if (d > 0)
		rgb[1] = rgb[2] = (uint8_t)(210.0 * (m - d) / m);
	else if (d < 0)
		rgb[0] = rgb[1] = (uint8_t)(210.0 * (m + d) / m);
	return 1;
}
