/* firn top: the hottest functions right now — sampled with eBPF, weighed in a decaying window and
 * refreshed every second — on a full screen (ncurses) or as plain text tables (--stdio). */
#include "common.h"
#include "opt.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "disasm.h"
#include "hist.h"
#include "profile.h"
#include "hash.h"
#include "safeopen.h"
#include "sampler.h"
#include "symbolize.h"
#include "target.h"
#include "tui.h"

#define TOP_USAGE                          \
	"[OPTIONS] [-a]\n"                 \
	"[OPTIONS] -p PID[,PID...]\n"      \
	"[OPTIONS] -- COMMAND [ARGS...]"

#define HALF_LIFE_S 2.0     /* a sample's weight in the window halves every 2 seconds */
#define MIN_WEIGHT 0.01     /* an entry lighter than this leaves the window */
#define MILLI 1000.0        /* window values are thousandths of a sample */
#define FIRST_REFRESH_NS 500000000ULL /* the first table comes after half a second at most */
#define MAX_WAIT_NS 500000000ULL      /* the longest sleep between wake-ups */
#define MAX_VIEWS 16
#define MODULE_MIN 6        /* the module column is at least as wide as its title */
#define MODULE_MAX_MIN 18   /* ... may always grow to this ("[kernel.kallsyms]" stays whole) */
#define MODULE_MAX_STDIO 24 /* ... and to this in --stdio tables */

struct top_opts {
	struct target t;
	unsigned freq;
	double delay;           /* seconds between refreshes */
	long iterations;        /* refreshes before exiting; 0 = until quit */
	long rows;              /* rows of each --stdio table; 0 = all */
	bool stdio, no_kernel, no_idle;
	enum hist_sort sort;
	const char *call_graph;
	enum sampler_unwind unwind;
	long unwind_memory_mb;
};

enum {
	OPT_NO_KERNEL = 256, OPT_CALL_GRAPH, OPT_UNWIND_MEMORY, OPT_STDIO, OPT_ROWS, OPT_SORT,
	OPT_AS_ROOT, OPT_NO_IDLE,
};

/* One sampler entry as top follows it: its decayed weight and its symbolized stack (locations
 * of top's profile, kernel frames first, leaf first, as capture.c builds them). */
struct top_entry {
	const uint64_t *ustack, *kstack; /* the sampler's stacks: with pid and tid, the identity */
	uint32_t pid, tid, ulen, klen;
	double weight;
	int64_t value;                   /* weight in thousandths: the window sample's value */
	uint64_t *locs;
	uint32_t nlocs;
	bool used, symbolized;
	struct profile_label labels[2];  /* pid, comm */
};

/* A caller or callee of the function of a calls view. */
struct call_row {
	const char *name, *module;
	int64_t value;
	int section;            /* 0 heading, 1 caller, 2 callee, 3 blank */
};

enum view_kind { VIEW_FUNCTIONS, VIEW_CALLS, VIEW_ANNOTATE, VIEW_HELP };

struct top;

/* One screen of the browser: a list with what its rows show. */
struct view {
	enum view_kind kind;
	struct tui_list list;
	struct top *top;
	char *function, *module;    /* calls and annotate views */
	struct call_row *calls;     /* calls view */
	size_t ncalls;
	int module_width;           /* calls view: its longest module name */
	int64_t fn_total, fn_self;
	struct disasm dis;          /* annotate view */
	bool have_dis;
	char note[256];             /* why the annotation failed */
};

struct top {
	struct top_opts *o;
	char **argv;                /* the command, if any */
	struct symbolizer *sym;
	struct sampler *sampler;
	struct profile prof;        /* mappings, functions, locations, strings; no samples of its own */
	int64_t k_pid, k_comm;
	struct top_entry *slots;    /* open addressing on the entry identity */
	size_t nslots, n;
	struct profile_sample *win; /* the window: one sample per entry with weight */
	size_t nwin, capwin;
	struct hist h;
	size_t *rows;               /* entries of h that pass the filter, in h's order */
	size_t nrows, caprows;
	int module_width;           /* the table's longest module name (see module_col) */
	int cols;                   /* the terminal's width at the last draw; 0 with --stdio */
	uint64_t next_resnap_ns;    /* when the symbolizer's next second snapshot is due */
	unsigned long long self_start_ticks;
	uint64_t start_ns, last_ns;
	double rate;                /* samples per second over the last interval */
	uint64_t lost;
	unsigned long refreshes;
	bool kernel_hidden, paused, ended;
	enum hist_sort sort;
	regex_t re;
	bool have_re;
	char filter[256];
	char target_desc[256];
	char end_note[96];
	struct view views[MAX_VIEWS];
	int nviews;
	bool typing;
	struct tui_input input;
	char message[160];          /* shown in the footer until the next key */
};

/* Monotonic clock, in nanoseconds. */
static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* ---- options ---- */

/* Option handler for opt_parse. */
static int top_option(void *ctx, int id, const char *arg)
{
	struct top_opts *o = ctx;
	long v;

	switch (id) {
	case 'a': o->t.all = true; return 0;
	case 'p': return target_parse_pids(&o->t, &top_cmd, arg);
	case 'F':
		if (opt_long(&top_cmd, "freq", arg, 1, 100000, &v))
			return 2;
		o->freq = v;
		return 0;
	case 'd': return opt_double(&top_cmd, "delay", arg, 0.05, 3600, &o->delay);
	case 'n': return opt_long(&top_cmd, "iterations", arg, 1, LONG_MAX, &o->iterations);
	case OPT_ROWS: return opt_long(&top_cmd, "rows", arg, 0, INT32_MAX, &o->rows);
	case OPT_STDIO: o->stdio = true; return 0;
	case OPT_NO_KERNEL: o->no_kernel = true; return 0;
	case OPT_NO_IDLE: o->no_idle = true; return 0;
	case OPT_AS_ROOT: o->t.as_root = true; return 0;
	case OPT_UNWIND_MEMORY:
		return opt_long(&top_cmd, "unwind-memory", arg, 1, 4096, &o->unwind_memory_mb);
	case OPT_SORT:
		if (strcmp(arg, "self") && strcmp(arg, "total"))
			return usage_error(&top_cmd, "invalid value '%s' for --sort (self or total)", arg);
		o->sort = strcmp(arg, "self") ? HIST_SORT_TOTAL : HIST_SORT_SELF;
		return 0;
	case OPT_CALL_GRAPH:
		o->call_graph = arg;
		return target_parse_call_graph(&top_cmd, arg, &o->unwind);
	}
	return 2;
}

static const struct opt top_opts[] = {
	{ "all-cpus", 'a', NULL, "profile the whole system (the default)", 'a' },
	{ "pid", 'p', "PID[,PID...]", "profile these processes (all their threads)", 'p' },
	{ "freq", 'F', "HZ", "samples per second per CPU (default 99)", 'F' },
	{ "delay", 'd', "SECONDS", "refresh every SECONDS (default 1)", 'd' },
	{ "iterations", 'n', "COUNT", "exit after COUNT refreshes (default: until quit)", 'n' },
	{ "stdio", 0, NULL, "print plain text tables instead of the full-screen view", OPT_STDIO },
	{ "rows", 0, "N", "rows of each --stdio table (default 20, 0 = all)", OPT_ROWS },
	{ "sort", 0, "KEY", "order rows by self or total (default self)", OPT_SORT },
	{ "call-graph", 0, "MODE", "how user stacks are unwound: auto (default), dwarf or fp", OPT_CALL_GRAPH },
	{ "unwind-memory", 0, "MB", "memory for DWARF unwind tables (default 32)", OPT_UNWIND_MEMORY },
	{ "no-kernel", 0, NULL, "do not take kernel stacks", OPT_NO_KERNEL },
	{ "no-idle", 0, NULL, "leave out the idle task ([idle]: what idle CPUs run)", OPT_NO_IDLE },
	{ "as-root", 0, NULL, "under sudo, run the command as root instead of the invoking user", OPT_AS_ROOT },
	OPT_END,
};

/* ---- processes and symbols ---- */

/* When pid started, in clock ticks after boot (field 22 of /proc/PID/stat); 0 when unknown. */
static unsigned long long start_ticks(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	for (int field = 3; field <= 22 && p; field++) /* p ends before field `field` */
		p = strchr(p + 1, ' ');
	return p && sscanf(p + 1, "%llu", &v) == 1 ? v : 0;
}

/* Sampler callback: snapshot a process's mappings now and, for a process that started after
 * top or just called exec, again shortly (its first sample may come while the dynamic loader is
 * still mapping its libraries). */
static void on_process(void *ctx, pid_t pid, bool exec)
{
	struct top *t = ctx;

	symbolizer_add_process(t->sym, pid);
	if (!exec && start_ticks(pid) < t->self_start_ticks)
		return; /* it was running before us: its libraries are mapped */
	symbolizer_add_process_later(t->sym, pid, mono_ns()); /* on failure the first one stays */
}

/* True while pid waits for its second snapshot (its stacks are symbolized after it). */

/* Symbolizes an entry's stacks once: kernel frames, then user frames, leaf first. */
static int entry_symbolize(struct top *t, struct top_entry *e)
{
	uint32_t n = 0;

	e->locs = malloc((e->klen + e->ulen + 1) * sizeof(*e->locs));
	if (!e->locs)
		return -ENOMEM;
	for (uint32_t i = 0; i < e->klen; i++) {
		int64_t id = symbolizer_kernel_frame(t->sym, &t->prof, e->kstack[i], i > 0);
		if (id < 0)
			return id;
		if (id)
			e->locs[n++] = id;
	}
	for (uint32_t i = 0; i < e->ulen; i++) {
		int64_t id = symbolizer_user_location(t->sym, &t->prof, e->pid, e->ustack[i], i > 0);
		if (id < 0)
			return id;
		if (id)
			e->locs[n++] = id;
	}
	e->nlocs = n;
	e->symbolized = true;
	return 0;
}

/* ---- the decaying window ---- */

/* Hash of a sampler entry's identity: pid, tid and its two stacks. */
static uint64_t entry_hash(const struct sampler_entry *e)
{
	uint64_t ids = (uint64_t)e->pid << 32 | e->tid;

	return hash_mix64((uintptr_t)e->ustack ^ hash_mix64((uintptr_t)e->kstack ^ ids));
}

/* The slot of sampler entry e: its entry's, or the empty one where it goes. */
static struct top_entry *slot_of(struct top_entry *slots, size_t nslots,
				 const struct sampler_entry *e)
{
	size_t mask = nslots - 1;

	for (size_t i = entry_hash(e) & mask;; i = (i + 1) & mask) {
		struct top_entry *s = &slots[i];
		if (!s->used || (s->ustack == e->ustack && s->kstack == e->kstack && s->pid == e->pid &&
				 s->tid == e->tid))
			return s;
	}
}

/* Moves the entries into a table of nslots slots, dropping (and freeing) those whose weight
 * fell to 0 when drop is set; 0 or -ENOMEM. */
static int entries_rehash(struct top *t, size_t nslots, bool drop)
{
	struct top_entry *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	t->n = 0;
	for (size_t i = 0; i < t->nslots; i++) {
		struct top_entry *o = &t->slots[i];
		if (!o->used)
			continue;
		if (drop && o->weight == 0) {
			free(o->locs);
			continue;
		}
		struct sampler_entry key = { .pid = o->pid, .tid = o->tid, .ustack = o->ustack,
					     .kstack = o->kstack };
		*slot_of(slots, nslots, &key) = *o;
		t->n++;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return 0;
}

/* Doubles the table when it is half full; 0 or -ENOMEM. */
static int entries_reserve(struct top *t)
{
	if ((t->n + 1) * 2 <= t->nslots)
		return 0;
	return entries_rehash(t, t->nslots ? t->nslots * 2 : 4096, false);
}

/* Multiplies every weight by decay (a weight under MIN_WEIGHT becomes 0); returns how many
 * entries have no weight left. */
static size_t entries_decay(struct top *t, double decay)
{
	size_t dead = 0;

	for (size_t i = 0; i < t->nslots; i++) {
		struct top_entry *e = &t->slots[i];
		if (!e->used)
			continue;
		e->weight *= decay;
		if (e->weight < MIN_WEIGHT)
			e->weight = 0;
		dead += e->weight == 0;
	}
	return dead;
}

/* What one refresh of the window needs while walking the sampler's entries. */
struct window_walk {
	struct top *t;
	uint64_t delta;  /* samples of this interval */
};

/* Sampler callback: an entry's samples of this interval (the counts are reset after each walk)
 * are added to its weight at full weight. */
static int window_update(void *ctx, const struct sampler_entry *se)
{
	struct window_walk *w = ctx;
	struct top *t = w->t;

	if (!se->count)
		return 0;
	if (entries_reserve(t))
		return -ENOMEM;
	struct top_entry *e = slot_of(t->slots, t->nslots, se);
	if (!e->used) {
		int64_t comm = profile_intern(&t->prof, capture_comm(se->pid, se->comm)); /* [idle] */
		if (comm < 0)
			return -ENOMEM;
		*e = (struct top_entry){ se->ustack, se->kstack, se->pid, se->tid, se->ulen, se->klen };
		e->used = true;
		e->labels[0] = (struct profile_label){ .key = t->k_pid, .num = se->pid };
		e->labels[1] = (struct profile_label){ .key = t->k_comm, .str = comm };
		t->n++;
	}
	e->weight += se->count;
	w->delta += se->count;
	return 0;
}

/* Appends an entry with weight to the window samples (symbolizing it on first use). */
static int window_add(struct top *t, struct top_entry *e)
{
	if (!e->symbolized) {
		if (symbolizer_refresh_pending(t->sym, e->pid) &&
		    !sampler_has_exited(t->sampler, e->pid))
			return 0; /* next refresh (unless it has ended: no better snapshot comes) */
		int err = entry_symbolize(t, e);
		if (err)
			return err;
	}
	if (t->nwin == t->capwin) {
		size_t ncap = t->capwin ? t->capwin * 2 : 1024;
		struct profile_sample *n = realloc(t->win, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		t->win = n;
		t->capwin = ncap;
	}
	e->value = llround(e->weight * MILLI);
	t->win[t->nwin++] = (struct profile_sample){ e->locs, e->nlocs, 2, &e->value, e->labels };
	return 0;
}

/* sampler_retire callback: an ended process's snapshot goes. */
static void forget_process(void *ctx, pid_t pid)
{
	struct top *t = ctx;

	symbolizer_remove_process(t->sym, pid);
}

/* Decays every weight, drains the sampler and adds the samples of the interval (then resets
 * its counts), drops entries without weight when they are many, rebuilds the window samples;
 * updates the rate and the lost count. */
static int window_refresh(struct top *t)
{
	uint64_t now = mono_ns();
	double dt = (now - t->last_ns) / 1e9;
	struct window_walk w = { t, 0 };
	struct sampler_stats st;
	size_t dead = entries_decay(t, exp2(-dt / HALF_LIFE_S));
	int err = sampler_drain(t->sampler);

	if (!err && dead > 1024 && dead * 2 > t->n)
		err = entries_rehash(t, t->nslots, true);
	if (!err)
		err = sampler_for_each(t->sampler, window_update, &w);
	sampler_reset_counts(t->sampler);
	t->nwin = 0;
	for (size_t i = 0; !err && i < t->nslots; i++)
		if (t->slots[i].used && t->slots[i].weight > 0)
			err = window_add(t, &t->slots[i]);
	if (err)
		return err;
	/* ended processes are symbolized now (their entries were all drained): their snapshots go,
	 * so a long session holds the live processes' (the sampler keeps its stacks: refs stay
	 * with reset counts, and the window points into them) */
	struct sampler_retire_ops ops = { .gone = forget_process, .ctx = t };
	if ((err = sampler_retire(t->sampler, &ops)) < 0)
		return err;
	sampler_get_stats(t->sampler, &st);
	t->lost = st.counts_full + st.stacks_full; /* dropped, or kept without a stack */
	t->rate = dt > 0 ? w.delta / dt : 0;
	t->last_ns = now;
	return 0;
}

/* ---- the table ---- */

/* True when entry e passes the filter. */
static bool row_matches(const struct top *t, const struct hist_entry *e)
{
	return !t->have_re || regexec(&t->re, e->name, 0, NULL, 0) == 0;
}

/* Width of a module column whose longest name is content: up to a quarter of the terminal (at
 * least MODULE_MAX_MIN), or MODULE_MAX_STDIO for --stdio. */
static int module_col(const struct top *t, int content)
{
	int max = t->cols ? t->cols / 4 : MODULE_MAX_STDIO;

	max = max < MODULE_MAX_MIN ? MODULE_MAX_MIN : max;
	return content < MODULE_MIN ? MODULE_MIN : content > max ? max : content;
}

/* A module name for a column of width characters: "-" for none, a path's base name, and a name
 * still too long cut in the middle ("libQt5WebE..5.15.2"). */
static const char *module_cell(const char *module, int width, char *buf, size_t len)
{
	const char *base = strrchr(module, '/');
	size_t n;

	if (!*module)
		return "-";
	if (base && base[1])
		module = base + 1;
	if ((n = strlen(module)) <= (size_t)width || width < 8)
		return module;
	int tail = width / 3, head = width - 2 - tail;
	snprintf(buf, len, "%.*s..%s", head, module, module + n - tail);
	return buf;
}

/* Length of a module name as module_cell shows it whole. */
static int module_len(const char *module)
{
	const char *base = strrchr(module, '/');

	return strlen(base && base[1] ? base + 1 : *module ? module : "-");
}

/* The rows: entries of the hist that pass the filter; the longest module name among them. */
static int rows_build(struct top *t)
{
	if (t->h.n > t->caprows) {
		size_t *n = realloc(t->rows, t->h.n * sizeof(*n));
		if (!n)
			return -ENOMEM;
		t->rows = n;
		t->caprows = t->h.n;
	}
	t->nrows = 0;
	t->module_width = 0;
	for (size_t i = 0; i < t->h.n; i++) {
		if (!row_matches(t, &t->h.entries[i]))
			continue;
		t->rows[t->nrows++] = i;
		int w = module_len(t->h.entries[i].module);
		if (w > t->module_width)
			t->module_width = w;
	}
	return 0;
}

/* Builds the hist of the window (the profile's samples are the window's for the call). */
static int table_build(struct top *t)
{
	struct hist_opts ho = { .no_kernel = t->kernel_hidden, .no_idle = t->o->no_idle };
	struct profile_sample *saved = t->prof.samples;
	uint64_t nsaved = t->prof.nsamples;

	hist_release(&t->h);
	t->prof.samples = t->win;
	t->prof.nsamples = t->nwin;
	int err = hist_build(&t->h, &t->prof, &ho);
	t->prof.samples = saved;
	t->prof.nsamples = nsaved;
	if (err)
		return err;
	hist_sort(&t->h, t->sort);
	return rows_build(t);
}

/* Share of v in the table's total, in percent. */
static double share(const struct top *t, int64_t v)
{
	return t->h.total ? v * 100.0 / t->h.total : 0.0;
}

/* Formats one table row (as --stdio prints it and the screen shows it). */
static void table_row(const struct top *t, const struct hist_entry *e, char *buf, size_t len)
{
	int mw = module_col(t, t->module_width);
	char mbuf[256];

	snprintf(buf, len, "%7.2f %7.2f  %8.0f  %-*.*s  %s", share(t, e->self), share(t, e->total),
		 e->self / MILLI, mw, mw, module_cell(e->module, mw, mbuf, sizeof(mbuf)), e->name);
}

/* The column line matching table_row. */
static void table_columns(const struct top *t, char *buf, size_t len)
{
	snprintf(buf, len, "%7s %7s  %8s  %-*s  %s", "self%", "total%", "samples",
		 module_col(t, t->module_width), "module", "function");
}

/* "1:05" or "1:02:03". */
static void format_elapsed(double s, char *buf, size_t len)
{
	long v = (long)s;

	if (v >= 3600)
		snprintf(buf, len, "%ld:%02ld:%02ld", v / 3600, v / 60 % 60, v % 60);
	else
		snprintf(buf, len, "%ld:%02ld", v / 60, v % 60);
}

/* The two header lines: what is sampled and how, then the window's figures and the settings. */
static void header_text(const struct top *t, char *buf, size_t len)
{
	char el[32];

	format_elapsed((mono_ns() - t->start_ns) / 1e9, el, sizeof(el));
	snprintf(buf, len,
		 "firn top: %s   %u Hz x %d CPUs   call graph %s   elapsed %s%s%s%s\n"
		 "%.0f samples/s   lost %" PRIu64 "   window: %g s half-life   sort: %s   kernel: %s"
		 "   filter: %s",
		 t->target_desc, t->o->freq, sampler_ncpus(t->sampler), t->o->call_graph, el,
		 *t->end_note ? "   " : "", t->end_note, t->paused ? "   [PAUSED]" : "", t->rate,
		 t->lost, HALF_LIFE_S, t->sort == HIST_SORT_SELF ? "self" : "total",
		 t->kernel_hidden ? "hidden" : "shown", t->have_re ? t->filter : "(none)");
}

/* ---- --stdio ---- */

/* Prints lines of text with their control characters escaped (put_text): process and
 * function names come from any process. The newlines between the lines stay. */
static void stdio_lines(char *text)
{
	for (char *line = text, *nl; line; line = nl ? nl + 1 : NULL) {
		if ((nl = strchr(line, '\n')))
			*nl = 0;
		put_text(stdout, line, 0);
		putchar('\n');
	}
}

/* Prints the table once, as text. */
static int stdio_print(struct top *t)
{
	char buf[1024];
	size_t n = t->o->rows && (size_t)t->o->rows < t->nrows ? (size_t)t->o->rows : t->nrows;

	header_text(t, buf, sizeof(buf));
	stdio_lines(buf);
	table_columns(t, buf, sizeof(buf));
	stdio_lines(buf);
	for (size_t i = 0; i < n; i++) {
		table_row(t, &t->h.entries[t->rows[i]], buf, sizeof(buf));
		stdio_lines(buf);
	}
	printf("\n");
	return fflush(stdout) || ferror(stdout) ? -EIO : 0;
}

/* ---- views ---- */

/* The module of a frame as lib/hist names it: its mapping file's base name. */
static const char *frame_module(const struct profile *p, const struct profile_frame *f)
{
	const char *file = f->mapping_id && f->mapping_id <= p->nmappings
				   ? profile_str(p, p->mappings[f->mapping_id - 1].filename)
				   : "";
	const char *base = strrchr(file, '/');

	base = base && base[1] ? base + 1 : file;
	return !*base && f->kind == FRAME_KERNEL ? "[kernel.kallsyms]" : base;
}

/* How a table row is drawn: by its self share. */
static enum tui_attr heat_of(double pct)
{
	return pct >= 5 ? TUI_HOT : pct >= 0.5 ? TUI_WARM : TUI_NORMAL;
}

/* Row callback of the function table. */
static enum tui_attr functions_row(void *ctx, size_t i, char *buf, size_t len)
{
	struct view *v = ctx;
	struct top *t = v->top;

	if (i >= t->nrows)
		return TUI_NORMAL;
	const struct hist_entry *e = &t->h.entries[t->rows[i]];
	table_row(t, e, buf, len);
	return heat_of(share(t, e->self));
}

/* The (name, module) of the selected table row, or NULLs. */
static void selected_function(const struct top *t, const struct view *v, const char **name,
			      const char **module)
{
	*name = *module = NULL;
	if (v->list.sel < t->nrows) {
		const struct hist_entry *e = &t->h.entries[t->rows[v->list.sel]];
		*name = e->name;
		*module = e->module;
	}
}

/* Puts the selection back on (name, module) after the rows changed. */
static void reselect(struct top *t, struct view *v, const char *name, const char *module)
{
	v->list.nrows = t->nrows;
	for (size_t i = 0; name && i < t->nrows; i++) {
		const struct hist_entry *e = &t->h.entries[t->rows[i]];
		if (e->name == name && e->module == module) {
			v->list.sel = i;
			return;
		}
	}
}

/* Rebuilds the table (keeping the selected function selected); filter_only skips the hist. */
static int table_refresh(struct top *t, bool rebuild, bool resort)
{
	struct view *v = &t->views[0];
	const char *name, *module;
	int err = 0;

	selected_function(t, v, &name, &module);
	if (rebuild)
		err = table_build(t);
	else if (resort)
		hist_sort(&t->h, t->sort);
	if (!err)
		err = rows_build(t);
	reselect(t, v, name, module);
	return err;
}

/* Adds v to the (name, module) row of a caller or callee list, once per sample. */
static int calls_add(struct call_row **rows, size_t *n, const char *name, const char *module,
		     int64_t value, uint64_t sample, uint64_t **last)
{
	size_t i = 0;

	while (i < *n && ((*rows)[i].name != name || strcmp((*rows)[i].module, module)))
		i++;
	if (i == *n) {
		struct call_row *nr = realloc(*rows, (*n + 1) * sizeof(*nr));
		uint64_t *nl = realloc(*last, (*n + 1) * sizeof(*nl));
		if (nr)
			*rows = nr;
		if (nl)
			*last = nl;
		if (!nr || !nl)
			return -ENOMEM;
		nr[(*n)++] = (struct call_row){ name, module, 0, 0 };
		nl[i] = 0;
	}
	if ((*last)[i] != sample + 1) {
		(*last)[i] = sample + 1;
		(*rows)[i].value += value;
	}
	return 0;
}

/* The callers and callees of one function over the window, before they are assembled. */
struct calls_walk {
	struct view *v;
	struct call_row *rows[2];   /* callers, callees */
	size_t n[2];
	uint64_t *last[2];
	struct profile_frame *frames;
	size_t cap;
	size_t *kept;
	size_t capkept;
};

/* The frames of sample s that the table keeps (inline frames folded, kernel ones when hidden);
 * returns their count into w->kept, -1 for a sample the table drops, or -ENOMEM. */
static long kept_frames(struct top *t, struct calls_walk *w, const struct profile_sample *s)
{
	int64_t n = profile_frames(&t->prof, s, &w->frames, &w->cap);
	long k = 0;

	if (n < 0)
		return n;
	if ((size_t)n > w->capkept) {
		size_t *nk = realloc(w->kept, n * sizeof(*nk));
		if (!nk)
			return -ENOMEM;
		w->kept = nk;
		w->capkept = n;
	}
	for (int64_t i = 0; i < n; i++) {
		enum frame_kind kind = w->frames[i].kind;
		if (kind != FRAME_INLINE && !(t->kernel_hidden && kind == FRAME_KERNEL))
			w->kept[k++] = i;
	}
	return !k && n && t->kernel_hidden ? -1 : k;
}

/* Name of kept frame j of the current sample. */
static const char *kept_name(struct top *t, struct calls_walk *w, long j)
{
	uint32_t id = w->frames[w->kept[j]].name;

	return id ? profile_str(&t->prof, id) : "[unknown]";
}

/* Adds sample s to the callers and callees of the view's function. */
static int calls_sample(struct top *t, struct calls_walk *w, uint64_t idx)
{
	const struct profile_sample *s = &t->win[idx];
	long k = kept_frames(t, w, s);
	bool hit = false;
	int err = 0;

	for (long j = 0; j < k && !err; j++) {
		const struct profile_frame *f = &w->frames[w->kept[j]];
		if (strcmp(kept_name(t, w, j), w->v->function) ||
		    strcmp(frame_module(&t->prof, f), w->v->module))
			continue;
		hit = true;
		const char *cn = j ? kept_name(t, w, j - 1) : "[root]";
		const char *cm = j ? frame_module(&t->prof, &w->frames[w->kept[j - 1]]) : "";
		const char *dn = j + 1 < k ? kept_name(t, w, j + 1) : "[self]";
		const char *dm = j + 1 < k ? frame_module(&t->prof, &w->frames[w->kept[j + 1]]) : "";
		err = calls_add(&w->rows[0], &w->n[0], cn, cm, s->values[0], idx, &w->last[0]);
		if (!err)
			err = calls_add(&w->rows[1], &w->n[1], dn, dm, s->values[0], idx, &w->last[1]);
	}
	if (hit)
		w->v->fn_total += s->values[0];
	return k < 0 && k != -1 ? (int)k : err;
}

/* qsort callback: larger value first, then by name. */
static int call_cmp(const void *a, const void *b)
{
	const struct call_row *x = a, *y = b;

	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Assembles the calls view's rows: heading, callers, blank, heading, callees. */
static int calls_assemble(struct view *v, struct calls_walk *w)
{
	size_t n = w->n[0] + w->n[1] + 3;
	struct call_row *rows = calloc(n, sizeof(*rows)), *o = rows;

	if (!rows)
		return -ENOMEM;
	*o++ = (struct call_row){ "callers", "", 0, 0 };
	qsort(w->rows[0], w->n[0], sizeof(*rows), call_cmp);
	for (size_t i = 0; i < w->n[0]; i++, o++)
		*o = w->rows[0][i], o->section = 1;
	*o++ = (struct call_row){ "", "", 0, 3 };
	*o++ = (struct call_row){ "callees", "", 0, 0 };
	qsort(w->rows[1], w->n[1], sizeof(*rows), call_cmp);
	for (size_t i = 0; i < w->n[1]; i++, o++) {
		*o = w->rows[1][i], o->section = 2;
		if (!strcmp(o->name, "[self]"))
			v->fn_self = o->value;
	}
	v->module_width = 0;
	for (size_t i = 0; i < n; i++)
		if ((rows[i].section == 1 || rows[i].section == 2) &&
		    module_len(rows[i].module) > v->module_width)
			v->module_width = module_len(rows[i].module);
	free(v->calls);
	v->calls = rows;
	v->ncalls = n;
	v->list.nrows = n;
	return 0;
}

/* (Re)computes the callers and callees of the calls view's function over the window. */
static int calls_compute(struct top *t, struct view *v)
{
	struct calls_walk w = { .v = v };
	int err = 0;

	v->fn_total = v->fn_self = 0;
	for (uint64_t i = 0; i < t->nwin && !err; i++)
		err = calls_sample(t, &w, i);
	if (!err)
		err = calls_assemble(v, &w);
	for (int s = 0; s < 2; s++) {
		free(w.rows[s]);
		free(w.last[s]);
	}
	free(w.frames);
	free(w.kept);
	return err;
}

/* Row callback of a calls view. */
static enum tui_attr calls_row(void *ctx, size_t i, char *buf, size_t len)
{
	struct view *v = ctx;
	struct top *t = v->top;

	if (i >= v->ncalls)
		return TUI_NORMAL;
	const struct call_row *r = &v->calls[i];
	if (r->section == 3) {
		buf[0] = 0;
		return TUI_NORMAL | TUI_NOSELECT;
	}
	if (r->section == 0) {
		bool callers = !strcmp(r->name, "callers");
		snprintf(buf, len, "%s of %s:", callers ? "callers (who calls it)"
			 : "callees (what it calls; [self]: its own code)", v->function);
		return TUI_HEADING | TUI_NOSELECT;
	}
	int mw = module_col(t, v->module_width);
	char mbuf[256];

	snprintf(buf, len, "  %7.2f  %-*.*s  %s", share(t, r->value), mw, mw,
		 module_cell(r->module, mw, mbuf, sizeof(mbuf)), r->name);
	return heat_of(share(t, r->value));
}

/* Row callback of an annotate view. */
static enum tui_attr annotate_row(void *ctx, size_t i, char *buf, size_t len)
{
	struct view *v = ctx;

	if (!v->have_dis) {
		snprintf(buf, len, "%s", i == 0 ? v->note : "");
		return TUI_NORMAL;
	}
	disasm_row_text(&v->dis, i, buf, len);
	int heat = disasm_row_heat(&v->dis, i);
	if (v->dis.rows[i].source)
		return TUI_DIM;
	return heat == 2 ? TUI_HOT : heat == 1 ? TUI_WARM : TUI_NORMAL;
}

static const char *const help_lines[] = {
	"firn top shows the functions that use the CPU now. Every refresh (--delay, 1 s by",
	"default) the weight of what was sampled before is halved every 2 seconds and the new",
	"samples are added: the table shows a decaying window of the last few seconds.",
	"",
	"  self%     share of the window's samples whose innermost frame is the function",
	"  total%    share of the samples with the function anywhere on the stack",
	"  samples   the decayed sample count of self",
	"",
	"Keys (every view)",
	"  Up/Down, j/k, PgUp/PgDn, Home/End   move",
	"  s        sort by self or by total",
	"  /        filter functions by a regular expression (empty: no filter)",
	"  K        hide or show kernel frames",
	"  p        pause or resume the display (sampling goes on)",
	"  h, ?     this help",
	"  q, Esc   back to the previous view; quit from the table",
	"",
	"Keys of the table",
	"  Enter    annotate the selected function: its instructions with their share",
	"  c        callers and callees of the selected function",
	"",
	"Keys of the callers and callees view",
	"  Enter, c callers and callees of the selected function",
};

/* Row callback of the help view. */
static enum tui_attr help_row(void *ctx, size_t i, char *buf, size_t len)
{
	if (i < sizeof(help_lines) / sizeof(help_lines[0]))
		snprintf(buf, len, "%s", help_lines[i]);
	return i == 8 || i == 17 || i == 21 ? TUI_HEADING : TUI_NORMAL;
}

/* Frees what a view owns. */
static void view_release(struct view *v)
{
	free(v->function);
	free(v->module);
	free(v->calls);
	if (v->have_dis)
		disasm_release(&v->dis);
	memset(v, 0, sizeof(*v));
}

/* Pushes a view of kind on function (name, module); NULL when the stack is full. */
static struct view *view_push(struct top *t, enum view_kind kind, const char *name,
			      const char *module)
{
	if (t->nviews == MAX_VIEWS)
		return NULL;
	struct view *v = &t->views[t->nviews];
	memset(v, 0, sizeof(*v));
	v->kind = kind;
	v->top = t;
	v->list.ctx = v;
	v->list.cursor = kind != VIEW_HELP;
	v->list.row = kind == VIEW_FUNCTIONS ? functions_row : kind == VIEW_CALLS ? calls_row
		    : kind == VIEW_ANNOTATE ? annotate_row : help_row;
	if (name && (!(v->function = strdup(name)) || !(v->module = strdup(module))))
		return view_release(v), NULL;
	t->nviews++;
	return v;
}

/* Annotation query of a view's function under the current settings. */
static struct disasm_query annotate_query(const struct top *t, const struct view *v)
{
	return (struct disasm_query){ v->function, v->module, 0, t->kernel_hidden };
}

/* Opens the annotation of the view's function, selecting its hottest instruction. */
static void annotate_open(struct top *t, struct view *v)
{
	struct disasm_query q = annotate_query(t, v);
	int err = disasm_annotate(&v->dis, &t->prof, t->win, t->nwin, &q);

	if (err) {
		if (err == -EOPNOTSUPP)
			snprintf(v->note, sizeof(v->note), "cannot annotate '%s': kernel or JIT code "
				 "has no file to read", v->function);
		else if (err == -ENOENT && !v->dis.path)
			snprintf(v->note, sizeof(v->note), "nothing to annotate: no sample of the window "
				 "ran in '%s' itself (c shows what it calls)", v->function);
		else
			snprintf(v->note, sizeof(v->note), "cannot annotate '%s': '%s': %s", v->function,
				 v->dis.path ? v->dis.path : "?", safeopen_strerror(err));
		disasm_release(&v->dis);
		v->list.nrows = 1;
		return;
	}
	v->have_dis = true;
	v->list.nrows = v->dis.nrows;
	for (size_t i = 0; i < v->dis.nrows; i++)
		if (!v->dis.rows[i].source && v->dis.insns[v->dis.rows[i].insn].value == v->dis.max_value)
			v->list.sel = i;
}

/* Recomputes the views that follow the window (all but the table, which the caller rebuilt). */
static int views_refresh(struct top *t)
{
	for (int i = 1; i < t->nviews; i++) {
		struct view *v = &t->views[i];
		if (v->kind == VIEW_CALLS) {
			int err = calls_compute(t, v);
			if (err)
				return err;
		} else if (v->kind == VIEW_ANNOTATE && v->have_dis) {
			struct disasm_query q = annotate_query(t, v);
			disasm_count(&v->dis, &t->prof, t->win, t->nwin, &q);
		}
	}
	return 0;
}

/* ---- the screen ---- */

/* The view's third header line and its column line. */
static void view_titles(struct top *t, struct view *v, char *line, size_t len, char *cols,
			size_t clen)
{
	line[0] = cols[0] = 0;
	if (v->kind == VIEW_FUNCTIONS) {
		snprintf(line, len, "%zu function%s%s", t->nrows, t->nrows == 1 ? "" : "s",
			 !t->have_re ? "" : t->nrows == 1 ? " matches the filter" : " match the filter");
		table_columns(t, cols, clen);
	} else if (v->kind == VIEW_CALLS) {
		snprintf(line, len, "%s (%s): total %.2f%%, self %.2f%%", v->function,
			 *v->module ? v->module : "-", share(t, v->fn_total), share(t, v->fn_self));
		snprintf(cols, clen, "  %7s  %-*s  %s", "share%", module_col(t, v->module_width),
			 "module", "function");
	} else if (v->kind == VIEW_ANNOTATE && v->have_dis) {
		snprintf(line, len, "annotate %s (%s): %.2f%% of the samples (shares are of all samples)\n"
			 "%s, build id %s%s", v->function, *v->module ? v->module : "-",
			 disasm_pct(&v->dis, v->dis.self), v->dis.path,
			 *v->dis.build_id ? v->dis.build_id : "(none)",
			 v->dis.build_id_differs ? " (DIFFERS from the sampled one)" : "");
		snprintf(cols, clen, "%7s  %8s   %s", "share%", "address", "instruction");
	} else if (v->kind == VIEW_ANNOTATE) {
		snprintf(line, len, "annotate %s (%s)", v->function, *v->module ? v->module : "-");
	} else {
		snprintf(line, len, "help");
	}
}

/* The footer: the prompt while typing, a message, or the keys of the view. */
static void footer_text(const struct top *t, const struct view *v, char *buf, size_t len)
{
	static const char *const keys[] = {
		[VIEW_FUNCTIONS] = "Enter annotate  c callers/callees  s sort  / filter  K kernel  "
				   "p pause  h help  q quit",
		[VIEW_CALLS] = "Enter callers/callees of the selected row  s sort  K kernel  p pause  "
			       "h help  q back",
		[VIEW_ANNOTATE] = "K kernel  p pause  h help  q back",
		[VIEW_HELP] = "q back",
	};

	if (t->typing)
		snprintf(buf, len, "filter (regex, empty for none): %s_", t->input.buf);
	else if (*t->message)
		snprintf(buf, len, "%s", t->message);
	else
		snprintf(buf, len, "%s", keys[v->kind]);
}

/* Draws the top view. */
static void draw(struct top *t, struct tui *ui)
{
	struct view *v = &t->views[t->nviews - 1];
	char header[1536], line[768], cols[256], footer[512];

	t->cols = tui_cols(ui);
	header_text(t, header, sizeof(header));
	view_titles(t, v, line, sizeof(line), cols, sizeof(cols));
	size_t hl = strlen(header);
	snprintf(header + hl, sizeof(header) - hl, "\n%s", line);
	footer_text(t, v, footer, sizeof(footer));
	if (v->kind == VIEW_FUNCTIONS)
		v->list.nrows = t->nrows;
	else if (v->kind == VIEW_HELP)
		v->list.nrows = sizeof(help_lines) / sizeof(help_lines[0]);
	tui_draw(ui, &v->list, header, *cols ? cols : NULL, footer);
}

/* ---- keys ---- */

/* Applies the typed filter: compiles it (an empty one clears the filter). */
static int filter_apply(struct top *t)
{
	regex_t re;
	int rc;

	if (!t->input.len) {
		if (t->have_re)
			regfree(&t->re);
		t->have_re = false;
		t->filter[0] = 0;
		return table_refresh(t, false, false);
	}
	if ((rc = regcomp(&re, t->input.buf, REG_EXTENDED | REG_NOSUB))) {
		char why[96];
		regerror(rc, &re, why, sizeof(why));
		snprintf(t->message, sizeof(t->message), "invalid regex '%s': %s", t->input.buf, why);
		return 0;
	}
	if (t->have_re)
		regfree(&t->re);
	t->re = re;
	t->have_re = true;
	snprintf(t->filter, sizeof(t->filter), "%s", t->input.buf);
	t->views[0].list.sel = 0;
	return table_refresh(t, false, false);
}

/* Opens a calls or annotate view for the function of the selected row of v. */
static int open_for_selected(struct top *t, struct view *v, enum view_kind kind)
{
	const char *name = NULL, *module = NULL;

	if (v->kind == VIEW_FUNCTIONS) {
		selected_function(t, v, &name, &module);
	} else if (v->kind == VIEW_CALLS && v->list.sel < v->ncalls) {
		const struct call_row *r = &v->calls[v->list.sel];
		if ((r->section == 1 || r->section == 2) && r->name[0] != '[')
			name = r->name, module = r->module;
	}
	if (!name)
		return 0;
	struct view *nv = view_push(t, kind, name, module);
	if (!nv)
		return 0;
	if (kind == VIEW_ANNOTATE)
		annotate_open(t, nv);
	else
		return calls_compute(t, nv);
	return 0;
}

/* Keys every view shares; returns 1 to quit, 0 when handled, 2 when not a shared key, or -errno. */
static int common_key(struct top *t, int key)
{
	switch (key) {
	case 'q':
	case TUI_KEY_ESC:
		if (t->nviews == 1)
			return 1;
		view_release(&t->views[--t->nviews]);
		return 0;
	case 'h':
	case '?':
		if (t->views[t->nviews - 1].kind != VIEW_HELP)
			view_push(t, VIEW_HELP, NULL, NULL);
		return 0;
	case 'p':
		t->paused = !t->paused;
		return 0;
	case 's':
		t->sort = t->sort == HIST_SORT_SELF ? HIST_SORT_TOTAL : HIST_SORT_SELF;
		return table_refresh(t, false, true);
	case 'K': {
		t->kernel_hidden = !t->kernel_hidden;
		int err = table_refresh(t, true, false);
		return err ? err : views_refresh(t);
	}
	case '/':
		t->typing = true;
		t->input.buf[0] = 0;
		t->input.len = 0;
		return 0;
	}
	return 2;
}

/* Handles a key; returns 1 to quit, 0 to go on, or -errno. */
static int on_key(struct top *t, int key)
{
	struct view *v = &t->views[t->nviews - 1];

	t->message[0] = 0;
	if (t->typing) {
		int r = tui_input_key(&t->input, key);
		if (r)
			t->typing = false;
		return r == 1 ? filter_apply(t) : 0;
	}
	int rc = common_key(t, key);
	if (rc != 2)
		return rc;
	if (v->kind == VIEW_FUNCTIONS && key == TUI_KEY_ENTER)
		return open_for_selected(t, v, VIEW_ANNOTATE);
	if ((v->kind == VIEW_FUNCTIONS || v->kind == VIEW_CALLS) && (key == 'c' || key == TUI_KEY_ENTER))
		return open_for_selected(t, v, VIEW_CALLS);
	return 0;
}

/* ---- the loops ---- */

/* Notes when the command exited or every -p process is gone. */
static void check_end(struct top *t)
{
	struct target *tg = &t->o->t;

	if (t->ended)
		return;
	if (tg->child) {
		target_reap(tg, WNOHANG);
		if (tg->child_done)
			snprintf(t->end_note, sizeof(t->end_note), "[command exited, status %d]",
				 target_command_status(tg));
		t->ended = tg->child_done;
	} else if (tg->npids && !target_pids_alive(tg)) {
		snprintf(t->end_note, sizeof(t->end_note), "[the processes exited]");
		t->ended = true;
	}
}

/* One refresh: the window, then (unless paused) the table and the open views. */
static int refresh(struct top *t)
{
	int err = window_refresh(t);

	t->refreshes++;
	if (!err && !t->paused)
		err = table_refresh(t, true, false);
	if (!err && !t->paused)
		err = views_refresh(t);
	return err;
}

/* Time to the first refresh: the delay, or less, so that the first table comes soon. */
static uint64_t first_delay(const struct top *t)
{
	uint64_t delay = t->o->delay * 1e9;

	return delay < FIRST_REFRESH_NS ? delay : FIRST_REFRESH_NS;
}

/* Milliseconds to sleep: until the next refresh or second snapshot, MAX_WAIT_NS at most (the
 * sampler drains its maps when due, on a wake-up). */
static int wait_ms(const struct top *t, uint64_t next_refresh)
{
	uint64_t now = mono_ns(), until = next_refresh;

	if (t->next_resnap_ns < until)
		until = t->next_resnap_ns;
	if (until > now + MAX_WAIT_NS)
		until = now + MAX_WAIT_NS;
	return until > now ? (int)((until - now + 999999) / 1000000) : 0;
}

/* Sleeps until process events come, fd (-1: none) is readable or ms pass, then handles the
 * events, the second snapshots due and the target's end. */
static int wait_events(struct top *t, int fd, int ms)
{
	struct pollfd p[2] = { { sampler_event_fd(t->sampler), POLLIN, 0 }, { fd, POLLIN, 0 } };

	poll(p, fd >= 0 ? 2 : 1, ms); /* EINTR (a signal, a resize) just ends the wait */
	int err = sampler_poll(t->sampler, 0);
	t->next_resnap_ns = symbolizer_refresh_due(t->sym, mono_ns());
	check_end(t);
	return err == -EINTR ? 0 : err;
}

/* True when -n refreshes are done. */
static bool iterations_done(const struct top *t)
{
	return t->o->iterations && t->refreshes >= (unsigned long)t->o->iterations;
}

/* --stdio: a table every interval until -n, the target's end or a signal. */
static int stdio_loop(struct top *t)
{
	uint64_t delay = t->o->delay * 1e9, next = t->start_ns + first_delay(t);

	while (!target_stop_signal()) {
		int err = wait_events(t, -1, wait_ms(t, next));
		if (err)
			return error("cannot read samples: %s", strerror(-err));
		if (mono_ns() < next)
			continue;
		bool last = t->ended;
		if ((err = refresh(t)))
			return error("cannot update the table: %s", strerror(-err));
		if (stdio_print(t))
			return error("cannot write output: %s", strerror(errno ? errno : EIO));
		if (last || iterations_done(t))
			break;
		next += delay;
	}
	return t->o->t.child ? target_command_status(&t->o->t) : 0;
}

/* Handles the keys that have arrived (ncurses may hold several); 1 to quit, 0, or -errno. */
static int read_keys(struct top *t, struct tui *ui)
{
	for (;;) {
		struct view *v = &t->views[t->nviews - 1];
		int key = tui_key(ui, t->typing ? NULL : &v->list, 0), rc;
		if (key == TUI_KEY_TIMEOUT)
			return 0;
		if (key != TUI_KEY_MOVED && key != TUI_KEY_RESIZE && (rc = on_key(t, key)))
			return rc;
		draw(t, ui);
	}
}

/* The full-screen loop: keys, events and refreshes until quit, -n or a signal. */
static int tui_loop(struct top *t, struct tui *ui)
{
	uint64_t delay = t->o->delay * 1e9, next = t->start_ns + first_delay(t);
	int err = 0;

	draw(t, ui);
	while (!target_stop_signal() && !err) {
		if (mono_ns() >= next) {
			if ((err = refresh(t)))
				break;
			next = mono_ns() + delay;
			draw(t, ui);
			if (iterations_done(t))
				break;
		}
		if (!(err = wait_events(t, STDIN_FILENO, wait_ms(t, next))))
			err = read_keys(t, ui);
	}
	return err < 0 ? err : 0;
}

/* ---- setup ---- */

/* The symbolizer, the sampler, the pids and the (sample-less) profile. */
static int top_setup(struct top *t)
{
	const char *why = "";
	struct top_opts *o = t->o;
	struct sampler_opts so = {
		.freq = o->freq,
		.all = o->t.all,
		.follow_children = true,
		.kernel = !o->no_kernel,
		.user = true,
		.unwind = o->unwind,
		.unwind_memory = (uint64_t)o->unwind_memory_mb << 20,
		.on_process = on_process,
		.retire = true,
		.ctx = t,
	};

	t->self_start_ticks = start_ticks(getpid());
	if (profile_init(&t->prof) || profile_add_sample_type(&t->prof, "samples", "count") < 0 ||
	    (t->k_pid = profile_intern(&t->prof, "pid")) < 0 ||
	    (t->k_comm = profile_intern(&t->prof, "comm")) < 0)
		return error("out of memory");
	if (!(t->sym = symbolizer_new()))
		return error("cannot start the symbolizer: %s", strerror(errno));
	if (!(t->sampler = sampler_new(&so, &why)))
		return error("cannot %s: %s", why, strerror(errno));
	for (int i = 0; i < o->t.npids; i++) {
		int err = sampler_add_target(t->sampler, o->t.pids[i], false);
		if (err)
			return error("cannot add pid %d: %s", o->t.pids[i], strerror(-err));
		on_process(t, o->t.pids[i], false);
	}
	return 0;
}

/* Starts sampling, and the command (held until the sampler is attached). */
static int top_start(struct top *t)
{
	struct target *tg = &t->o->t;
	const char *why = "";
	int err;

	if (t->argv && t->argv[0]) {
		if ((err = target_start_command(tg, t->argv)))
			return error("cannot start '%s': %s", t->argv[0], strerror(-err));
		if ((err = sampler_add_target(t->sampler, tg->child, true)))
			return error("cannot add pid %d: %s", tg->child, strerror(-err));
	}
	if ((err = sampler_start(t->sampler, &why)))
		return error("cannot %s: %s", why, strerror(-err));
	t->start_ns = t->last_ns = mono_ns();
	if (tg->child && (err = target_release_command(tg))) {
		error("cannot run '%s': %s", t->argv[0], strerror(err));
		return err == ENOENT ? 127 : 126;
	}
	/* read kallsyms now, while the first samples come, rather than at the first refresh */
	if (!t->o->no_kernel && symbolizer_kernel_location(t->sym, &t->prof, 0) < 0)
		return error("out of memory");
	target_describe(tg, t->argv, t->target_desc, sizeof(t->target_desc));
	return 0;
}

/* With -v, the session's figures on stderr once the screen is given back. */
static void print_summary(struct top *t)
{
	struct sampler_stats st;

	if (!firn_verbose || !t->sampler)
		return;
	struct symbolizer_stats ss;

	sampler_get_stats(t->sampler, &st);
	symbolizer_stats(t->sym, &ss);
	fprintf(stderr, "firn: top: %lu refreshes, %llu samples lost, %zu stacks followed, unwind "
		"tables for %llu files (%llu rows) built in %.0f ms; %llu snapshots held, %llu "
		"processes ended and forgotten\n", t->refreshes,
		(unsigned long long)t->lost, t->n, (unsigned long long)st.unwind_files,
		(unsigned long long)st.unwind_rows, st.unwind_build_ns / 1e6,
		(unsigned long long)ss.processes, (unsigned long long)st.retired_processes);
}

/* Frees everything top holds. */
static void top_release(struct top *t)
{
	while (t->nviews)
		view_release(&t->views[--t->nviews]);
	hist_release(&t->h);
	if (t->have_re)
		regfree(&t->re);
	for (size_t i = 0; i < t->nslots; i++)
		free(t->slots[i].locs);
	free(t->slots);
	free(t->win);
	free(t->rows);
	sampler_free(t->sampler);
	symbolizer_free(t->sym);
	profile_release(&t->prof);
}

/* A fatal signal in the full-screen view: give the terminal back, then die of it. */
static void on_fatal_signal(int sig)
{
	tui_emergency_end();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Runs the full-screen view; the terminal is restored on every way out. */
static int run_tui(struct top *t)
{
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
	struct tui *ui = tui_new();

	if (!ui)
		return error("cannot start the full-screen view: %s (try --stdio)", strerror(errno));
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		signal(fatal[i], on_fatal_signal);
	int err = tui_loop(t, ui);
	tui_free(ui);
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		signal(fatal[i], SIG_DFL);
	if (err)
		return error("cannot update the view: %s", strerror(-err));
	return 0;
}

/* firn top: parse, check the target (none means -a) and privileges, set up, run a loop, release. */
static int cmd_top(int argc, char **argv)
{
	struct top_opts o = { .freq = 99, .delay = 1, .rows = 20, .call_graph = "auto",
			      .unwind = UNWIND_AUTO, .unwind_memory_mb = 32 };
	struct top t = { .o = &o, .sort = HIST_SORT_SELF, .next_resnap_ns = UINT64_MAX };
	int argi, rc = opt_parse(&top_cmd, argc, argv, true, top_option, &o, &argi);

	if (rc)
		return target_release(&o.t), rc < 0 ? 0 : rc;
	t.argv = argi < argc ? argv + argi : NULL;
	if (!o.t.all && !o.t.npids && !t.argv)
		o.t.all = true; /* no target: the whole system, as perf top */
	t.sort = o.sort;
	t.kernel_hidden = o.no_kernel;
	o.stdio = o.stdio || !isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO);
	o.t.quiet_command = !o.stdio;
	if ((rc = target_check(&o.t, &top_cmd, argc - argi)) || (rc = target_check_privileges(&top_cmd)))
		goto out;
	target_check_freq(&o.freq);
	target_install_signals();
	target_raise_fd_limit(&o.t);
	view_push(&t, VIEW_FUNCTIONS, NULL, NULL);
	if ((rc = top_setup(&t)) || (rc = top_start(&t)))
		goto out;
	rc = o.stdio ? stdio_loop(&t) : run_tui(&t);
	print_summary(&t);
out:
	target_release(&o.t);
	top_release(&t);
	return rc;
}

const struct cmd top_cmd = {
	.name = "top",
	.fn = cmd_top,
	.summary = "show the functions using the CPU now, live (full screen or --stdio)",
	.usage = TOP_USAGE,
	.opts = { top_opts },
};
