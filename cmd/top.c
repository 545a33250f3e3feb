/* firn top: the hottest functions right now — sampled with eBPF by the recorder, whose cuts are
 * weighed in a decaying window (lib/analyze/window.h) refreshed every second — on a full screen (ncurses)
 * or as plain text tables (--stdio). */
#include "common.h"
#include "opt.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analyze/calls.h"
#include "base/clock.h"
#include "analyze/disasm.h"
#include "analyze/filter.h"
#include "record/event_table.h"
#include "analyze/hist.h"
#include "model/profile.h"
#include "record/recorder.h"
#include "base/safeopen.h"
#include "opt_filter.h"
#include "target.h"
#include "top.h"
#include "base/unit.h"
#include "base/vec.h"
#include "analyze/window.h"

#define TOP_USAGE                          \
	"[OPTIONS] [-a]\n"                 \
	"[OPTIONS] -p PID[,PID...]\n"      \
	"[OPTIONS] -- COMMAND [ARGS...]"

#define HALF_LIFE_S 2.0     /* a sample's weight in the window halves every 2 seconds */
#define FIRST_REFRESH_NS 500000000ULL /* the first table comes after half a second at most */
#define MODULE_MIN 6        /* the module column is at least as wide as its title */
#define MODULE_MAX_MIN 18   /* ... may always grow to this ("[kernel.kallsyms]" stays whole) */
#define MODULE_MAX_STDIO 24 /* ... and to this in --stdio tables */

struct top_opts {
	struct target t;        /* -a, -p, the command; events, -F, unwinding (target_opts) */
	double delay;           /* seconds between refreshes */
	long iterations;        /* refreshes before exiting; 0 = until quit */
	long rows;              /* rows of each --stdio table; 0 = all */
	bool stdio, no_idle;
	bool zero;              /* -z: each table shows the last interval alone (no decay) */
	const char *sample_type; /* --sample-type NAME|INDEX; NULL: the recording's default */
	enum hist_sort sort;
	struct filter filter;   /* --focus, --ignore, --show-from, --thread, --module, --runtime */
};

enum { OPT_STDIO = 256, OPT_ROWS, OPT_SORT, OPT_NO_IDLE, OPT_SAMPLE_TYPE };

/* ---- options ---- */

/* Option handler for opt_parse. */
static int top_option(void *ctx, int id, const char *arg)
{
	struct top_opts *o = ctx;

	if (id >= OPT_FILTER_FIRST && id <= OPT_FILTER_LAST)
		return filter_option(&top_cmd, &o->filter, id, arg);
	switch (id) {
	case 'd': return opt_double(&top_cmd, "delay", arg, 0.05, 3600, &o->delay);
	case 'n': return opt_long(&top_cmd, "iterations", arg, 1, LONG_MAX, &o->iterations);
	case OPT_ROWS: return opt_long(&top_cmd, "rows", arg, 0, INT32_MAX, &o->rows);
	case OPT_STDIO: o->stdio = true; return 0;
	case OPT_NO_IDLE: o->no_idle = true; return 0;
	case 'z': o->zero = true; return 0;
	case OPT_SAMPLE_TYPE: o->sample_type = arg; return 0;
	case OPT_SORT:
		if (strcmp(arg, "self") && strcmp(arg, "total"))
			return usage_error(&top_cmd, "invalid value '%s' for --sort (self or total)", arg);
		o->sort = strcmp(arg, "self") ? HIST_SORT_TOTAL : HIST_SORT_SELF;
		return 0;
	}
	return target_option(&o->t, &top_cmd, id, arg);
}

static const struct opt top_opts[] = {
	{ "delay", 'd', "SECONDS", "refresh every SECONDS (default 1)", 'd' },
	{ "iterations", 'n', "COUNT", "exit after COUNT refreshes (default: until quit)", 'n' },
	{ "stdio", 0, NULL, "print plain text tables instead of the full-screen view", OPT_STDIO },
	{ "rows", 0, "N", "rows of each --stdio table (default 20, 0 = all)", OPT_ROWS },
	{ "sort", 0, "KEY", "order rows by self or total (default self)", OPT_SORT },
	{ "no-idle", 0, NULL, "leave out the idle task ([idle]: what idle CPUs run)", OPT_NO_IDLE },
	{ "zero", 'z', NULL, "each refresh shows only the samples since the last one (no decaying window)", 'z' },
	{ "sample-type", 0, "NAME|INDEX", "the sample type shown (off_cpu, wall...; default: the recording's default, wall with cpu-clock and off-cpu)", OPT_SAMPLE_TYPE },
	OPT_END,
};

/* ---- the window ---- */

/* Cuts the recording (the samples since the last refresh), weighs them into the window, and
 * updates the rate and the lost count. 0 or -errno (recorder_error says why when it failed). */
static int window_refresh(struct top *t)
{
	struct profile *cut = recorder_cut(t->rec);
	uint64_t now = mono_ns();
	double dt = (now - t->last_ns) / 1e9;
	struct recorder_stats st;

	if (!cut)
		return -errno;
	t->prof = cut;
	int err = window_add(&t->win, cut, t->vi, dt);
	if (err)
		return err;
	recorder_stats(t->rec, &st);
	t->lost = st.counts_full + st.stacks_full; /* dropped, or kept without a stack */
	t->rate = dt > 0 ? t->win.last / dt : 0;
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
int top_module_col(const struct top *t, int content)
{
	int max = t->cols ? t->cols / 4 : MODULE_MAX_STDIO;

	max = max < MODULE_MAX_MIN ? MODULE_MAX_MIN : max;
	return content < MODULE_MIN ? MODULE_MIN : content > max ? max : content;
}

/* A module name for a column of width characters: "-" for none, a path's base name, and a name
 * still too long cut in the middle ("libQt5WebE..5.15.2"). */
const char *top_module_cell(const char *module, int width, char *buf, size_t len)
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
int top_module_len(const char *module)
{
	const char *base = strrchr(module, '/');

	return strlen(base && base[1] ? base + 1 : *module ? module : "-");
}

/* The rows: entries of the hist that pass the filter; the longest module name among them. */
static int rows_build(struct top *t)
{
	if (VEC_GROW(t->rows, t->caprows, t->h.n))
		return -ENOMEM;
	t->nrows = 0;
	t->module_width = 0;
	for (size_t i = 0; i < t->h.n; i++) {
		if (!row_matches(t, &t->h.entries[i]))
			continue;
		t->rows[t->nrows++] = i;
		int w = top_module_len(t->h.entries[i].module);
		if (w > t->module_width)
			t->module_width = w;
	}
	return 0;
}

/* Under the stack filters, the profile of the window's samples that pass them (top_shown).
 * 0 or -ENOMEM. */
static int filtered_build(struct top *t)
{
	if (t->have_filtered)
		profile_release(&t->filtered);
	t->have_filtered = false;
	if (!t->prof || !filter_active(&t->o->filter))
		return 0;
	if (profile_init(&t->filtered))
		return -ENOMEM;
	t->have_filtered = true;
	return filter_profile(&t->filtered, t->prof, t->win.samples, t->win.nsamples,
			      &t->o->filter, t->vi, NULL);
}

/* Builds the hist of the window (none before the first cut). */
static int table_build(struct top *t)
{
	struct hist_opts ho = { .no_kernel = t->kernel_hidden, .no_idle = t->o->no_idle };

	hist_release(&t->h);
	int err = filtered_build(t);
	if (err || !t->prof)
		return err ? err : rows_build(t);
	struct profile *p = top_shown(t, &ho.samples, &ho.nsamples);
	ho.sample_type = profile_str(t->prof, t->prof->sample_types[t->vi].type);
	err = hist_build(&t->h, p, &ho);
	if (err)
		return err;
	hist_sort(&t->h, t->sort);
	return rows_build(t);
}

/* Share of v in the table's total, in percent. */
double top_share(const struct top *t, int64_t v)
{
	return t->h.total ? v * 100.0 / t->h.total : 0.0;
}

/* Formats one table row (as --stdio prints it and the screen shows it). */
void top_table_row(const struct top *t, const struct hist_entry *e, char *buf, size_t len)
{
	int mw = top_module_col(t, t->module_width);
	char mbuf[256];

	snprintf(buf, len, "%7.2f %7.2f  %8.0f  %-*.*s  %s", top_share(t, e->self), top_share(t, e->total),
		 e->self / (t->timed ? 1e6 * WINDOW_SCALE : (double)WINDOW_SCALE), mw, mw, top_module_cell(e->module, mw, mbuf, sizeof(mbuf)), e->name);
}

/* What the value column and the rate count: samples (cpu-clock), hits (a probe), ms (a time,
 * as off_cpu and wall are), else the type's unit. */
static const char *value_name(const struct top *t)
{
	if (t->timed)
		return "ms";
	if (!strcmp(t->unit, "count"))
		return t->cpu && !strcmp(t->type, "samples") ? "samples" : "hits";
	return t->unit;
}

/* The column line matching table_row. */
static void table_columns(const struct top *t, char *buf, size_t len)
{
	snprintf(buf, len, "%7s %7s  %8s  %-*s  %s", "self%", "total%", value_name(t),
		 top_module_col(t, t->module_width), "module", "function");
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
	char el[32], ev[300], win[32], rate[96], shown[96];

	format_elapsed((mono_ns() - t->start_ns) / 1e9, el, sizeof(el));
	if (t->cpu)
		snprintf(ev, sizeof(ev), "%u Hz x %d CPUs", t->o->t.freq, t->ncpus);
	else
		snprintf(ev, sizeof(ev), "event %s", t->event);
	if (t->timed) /* off_cpu: the ms threads waited per second, all of them together */
		snprintf(rate, sizeof(rate), "%.0f ms %s/s", t->rate / 1e6, t->type);
	else
		snprintf(rate, sizeof(rate), "%.0f %s/s", t->rate, value_name(t));
	if (strcmp(t->type, value_name(t))) /* "off_cpu (ms)", "samples" */
		snprintf(shown, sizeof(shown), "%s (%s)", t->type, value_name(t));
	else
		snprintf(shown, sizeof(shown), "%s", t->type);
	if (t->o->zero)
		snprintf(win, sizeof(win), "the last interval");
	else
		snprintf(win, sizeof(win), "%g s half-life", HALF_LIFE_S);
	snprintf(buf, len,
		 "firn top: %s   %s   showing %s   call graph %s   elapsed %s%s%s%s\n"
		 "%s   lost %" PRIu64 "   window: %s   sort: %s   kernel: %s"
		 "   filter: %s%s",
		 t->target_desc, ev, shown, t->o->t.call_graph, el,
		 *t->end_note ? "   " : "", t->end_note, t->paused ? "   [PAUSED]" : "", rate,
		 t->lost, win, t->sort == HIST_SORT_SELF ? "self" : "total",
		 t->kernel_hidden ? "hidden" : "shown", t->have_re ? t->filter : "(none)",
		 filter_active(&t->o->filter) ? "   stacks: filtered" : "");
}

/* ---- --stdio ---- */

/* Prints the table once, as text. */
static int stdio_print(struct top *t)
{
	char buf[1024];
	size_t n = t->o->rows && (size_t)t->o->rows < t->nrows ? (size_t)t->o->rows : t->nrows;

	errno = 0;
	header_text(t, buf, sizeof(buf));
	put_lines(stdout, buf);
	table_columns(t, buf, sizeof(buf));
	put_lines(stdout, buf);
	for (size_t i = 0; i < n; i++) { /* one row, one line: a newline in a name is escaped */
		top_table_row(t, &t->h.entries[t->rows[i]], buf, sizeof(buf));
		put_text(stdout, buf, 0);
		putchar('\n');
	}
	printf("\n");
	return fflush(stdout) || ferror(stdout) ? -(errno ? errno : EIO) : 0;
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
			 *v->module ? v->module : "-", top_share(t, v->calls.total), top_share(t, v->calls.self));
		snprintf(cols, clen, "  %7s  %-*s  %s", "share%", top_module_col(t, v->module_width),
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
		v->list.nrows = view_nhelp_lines;
	tui_draw(ui, &v->list, header, *cols ? cols : NULL, footer);
}

/* ---- keys ---- */

/* Applies the typed filter: compiles it (an empty one clears the filter). */
static int typed_filter_apply(struct top *t)
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
	} else if (v->kind == VIEW_CALLS && v->list.sel < v->list.nrows) {
		const struct calls_row *r;
		if (view_call_row(v, v->list.sel, &r) >= CALLS_CALLER && r->name[0] != '[')
			name = r->name, module = r->module;
	}
	if (!name)
		return 0;
	struct view *nv = view_push(t, kind, name, module);
	if (!nv)
		return 0;
	if (kind == VIEW_ANNOTATE)
		view_annotate_open(t, nv);
	else
		return view_calls_refresh(t, nv);
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
		return r == 1 ? typed_filter_apply(t) : 0;
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

/* Milliseconds to sleep: until the next refresh, RECORDER_POLL_MS at most (the recorder takes
 * second snapshots and drains the counts when due, on a wake-up). */
static int wait_ms(uint64_t next_refresh)
{
	uint64_t now = mono_ns(), until = next_refresh;

	if (until > now + RECORDER_POLL_MS * 1000000ULL)
		until = now + RECORDER_POLL_MS * 1000000ULL;
	return until > now ? (int)((until - now + 999999) / 1000000) : 0;
}

/* Sleeps until process events come, fd (-1: none) is readable or ms pass, then lets the
 * recorder handle the events and notes the target's end. 0 or -errno (recorder_error). */
static int wait_events(struct top *t, int fd, int ms)
{
	struct pollfd p[2] = { { recorder_event_fd(t->rec), POLLIN, 0 }, { fd, POLLIN, 0 } };

	poll(p, fd >= 0 ? 2 : 1, ms); /* EINTR (a signal, a resize) just ends the wait */
	int err = recorder_poll(t->rec, 0);
	t->ended = t->ended || target_ended(&t->o->t, t->end_note, sizeof(t->end_note));
	return err;
}

/* Prints why the session failed (err, -errno): the recorder's message when it failed, else
 * what failed (doing); returns 1. */
static int session_error(const struct top *t, int err, const char *doing)
{
	if (*recorder_error(t->rec))
		return error("%s", recorder_error(t->rec));
	return error("cannot %s: %s", doing, strerror(-err));
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
		int err = wait_events(t, -1, wait_ms(next));
		if (err)
			return session_error(t, err, "read samples");
		if (mono_ns() < next)
			continue;
		bool last = t->ended;
		if ((err = refresh(t)))
			return session_error(t, err, "update the table");
		if ((err = stdio_print(t))) /* once, with its reason; | head ends top quietly */
			return output_error(-err);
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
		if (!(err = wait_events(t, STDIN_FILENO, wait_ms(next))))
			err = read_keys(t, ui);
	}
	return err < 0 ? err : 0;
}

/* ---- setup ---- */

/* The sample type shown, from the recorder's types (known before sampling starts): 0, or 2
 * after the one-line usage error of a --sample-type that names none of them. */
static int type_choose(struct top *t)
{
	const struct profile *p = recorder_profile(t->rec);
	int i = sample_type_choose(&top_cmd, p, t->o->sample_type, NULL);

	if (i < 0)
		return 2;
	t->vi = i;
	t->type = i < (int)p->nsample_types ? profile_str(p, p->sample_types[i].type) : "samples";
	t->unit = i < (int)p->nsample_types ? profile_str(p, p->sample_types[i].unit) : "count";
	t->timed = !strcmp(t->unit, "nanoseconds");
	return 0;
}

/* The recorder (the targets and events of the options, loaded, not yet sampling), then sampling
 * and the command (held until the sampler is attached). */
static int top_start(struct top *t)
{
	struct target *tg = &t->o->t;
	struct recorder_opts ro = { .demangle = true };
	struct recorder_stats st;
	char why[1024];
	int rc;

	target_recorder_opts(tg, &ro);
	if (!(t->rec = recorder_new(&ro, why, sizeof(why))))
		return error("%s", why);
	if ((rc = type_choose(t)))
		return rc;
	if ((rc = target_start_recording(tg, t->rec, t->argv)))
		return rc;
	t->start_ns = t->last_ns = mono_ns();
	recorder_stats(t->rec, &st);
	t->ncpus = st.ncpus;
	t->event = tg->nevents ? tg->events[0] : "cpu-clock";
	const struct event_desc *d = event_find(t->event, NULL);
	t->cpu = d && d->timed;
	target_describe(tg, t->argv, t->target_desc, sizeof(t->target_desc));
	return 0;
}

/* With -v, the session's figures on stderr once the screen is given back. */
static void print_summary(struct top *t)
{
	struct recorder_stats st;

	if (!firn_verbose || !t->rec)
		return;
	recorder_stats(t->rec, &st);
	fprintf(stderr, "firn: top: %lu refreshes, %llu samples lost, %zu stacks followed, unwind "
		"tables for %llu files (%llu rows) built in %.0f ms; %llu snapshots held, %llu "
		"processes ended and forgotten\n", t->refreshes,
		(unsigned long long)t->lost, window_stacks(&t->win),
		(unsigned long long)st.unwind_files, (unsigned long long)st.unwind_rows,
		st.unwind_build_ns / 1e6, (unsigned long long)st.snapshots,
		(unsigned long long)st.retired_processes);
}

/* Frees everything top holds. */
static void top_release(struct top *t)
{
	while (t->nviews)
		view_release(&t->views[--t->nviews]);
	hist_release(&t->h);
	if (t->have_re)
		regfree(&t->re);
	window_release(&t->win);
	if (t->have_filtered)
		profile_release(&t->filtered);
	free(t->rows);
	recorder_free(t->rec);
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
	return err ? session_error(t, err, "update the view") : 0;
}

/* firn top: parse, check the target (none means -a) and privileges, set up, run a loop, release. */
static int cmd_top(int argc, char **argv)
{
	struct top_opts o = { .t = TARGET_INIT, .delay = 1, .rows = 20 };
	struct top t = { .o = &o, .sort = HIST_SORT_SELF };
	int argi, rc = opt_parse(&top_cmd, argc, argv, true, top_option, &o, &argi);

	if (rc)
		return target_release(&o.t), filter_release(&o.filter), rc < 0 ? 0 : rc;
	t.argv = argi < argc ? argv + argi : NULL;
	if (!o.t.all && !o.t.npids && !t.argv)
		o.t.all = true; /* no target: the whole system, as perf top */
	t.sort = o.sort;
	t.kernel_hidden = o.t.no_kernel;
	o.stdio = o.stdio || !isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO);
	o.t.quiet_command = !o.stdio;
	if ((rc = target_check_off_cpu(&o.t, &top_cmd)) ||
	    (rc = target_check(&o.t, &top_cmd, argc - argi)) || (rc = target_check_privileges(&top_cmd)) ||
	    (rc = target_setup_alloc(&o.t, t.argv != NULL)))
		goto out;
	target_check_freq(&o.t);
	target_install_signals();
	target_raise_fd_limit(&o.t);
	window_init(&t.win, o.zero ? 0 : HALF_LIFE_S);
	view_push(&t, VIEW_FUNCTIONS, NULL, NULL);
	if ((rc = top_start(&t)))
		goto out;
	rc = o.stdio ? stdio_loop(&t) : run_tui(&t);
	print_summary(&t);
out:
	target_release(&o.t);
	top_release(&t);
	filter_release(&o.filter);
	return rc;
}

const struct cmd top_cmd = {
	.name = "top",
	.fn = cmd_top,
	.summary = "show the functions using the CPU now (or waiting: -e off-cpu), live (full screen or --stdio)",
	.usage = TOP_USAGE,
	.opts = { target_opts, top_opts, filter_option_table },
};
