/* firn top's screens, shared by cmd/top.c (the options, the table, the keys and the loops) and
 * cmd/top_views.c (the browser's views: the function table's rows, callers and callees, the
 * annotation, the help). Internal to the command. */
#ifndef FIRN_CMD_TOP_H
#define FIRN_CMD_TOP_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze/calls.h"
#include "analyze/disasm.h"
#include "analyze/hist.h"
#include "analyze/tui.h"
#include "analyze/window.h"

#define MAX_VIEWS 16

struct top_opts;

/* What a row of a calls view is: a heading, a caller, a callee, or the blank between. */
enum call_section { CALLS_HEADING, CALLS_BLANK, CALLS_CALLER, CALLS_CALLEE };

enum view_kind { VIEW_FUNCTIONS, VIEW_CALLS, VIEW_ANNOTATE, VIEW_HELP };

struct top;

/* One screen of the browser: a list with what its rows show. */
struct view {
	enum view_kind kind;
	struct tui_list list;
	struct top *top;
	char *function, *module;    /* calls and annotate views */
	struct calls calls;         /* calls view: rows are headings, callers, blank, callees */
	int module_width;           /* calls view: its longest module name */
	struct disasm dis;          /* annotate view */
	bool have_dis;
	char note[256];             /* why the annotation failed */
};

struct top {
	struct top_opts *o;
	char **argv;                /* the command, if any */
	struct recorder *rec;
	struct profile *prof;       /* the recorder's (its last cut): the ids the window keeps */
	uint32_t vi;                /* the sample type shown (--sample-type, else the default) */
	const char *type, *unit;    /* its name and unit ("off_cpu", "nanoseconds") */
	bool timed;                 /* its unit is nanoseconds: values are shown in ms */
	struct window win;          /* the window's samples are views over prof */
	struct profile filtered;    /* under the stack filters: the window's samples that passed
				     * them at the table's last build (top_shown) */
	bool have_filtered;
	struct hist h;
	size_t *rows;               /* entries of h that pass the filter, in h's order */
	size_t nrows, caprows;
	int module_width;           /* the table's longest module name (see module_col) */
	int cols;                   /* the terminal's width at the last draw; 0 with --stdio */
	int ncpus;
	const char *event;          /* the -e value shown ("cpu-clock" by default) */
	bool cpu;                   /* it is cpu-clock: samples, else probe hits */
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

/* The table's helpers (cmd/top.c): the share of v in the table's total, in percent; the width
 * of a module column whose longest name is content; a module name for a column of width
 * characters (in buf); the length of a module name as the column shows it whole; one row of
 * the table (as --stdio prints it). */
double top_share(const struct top *t, int64_t v);
int top_module_col(const struct top *t, int content);
const char *top_module_cell(const char *module, int width, char *buf, size_t len);
int top_module_len(const char *module);
void top_table_row(const struct top *t, const struct hist_entry *e, char *buf, size_t len);

/* What the table and the views read: the recorder's profile and the window's samples, or under
 * the stack filters the profile of those that passed them (its own samples); *samples and *n
 * get the samples. NULL before the first cut. */
static inline struct profile *top_shown(struct top *t, const struct profile_sample **samples,
					size_t *n)
{
	*samples = t->have_filtered ? t->filtered.samples : t->win.samples;
	*n = t->have_filtered ? t->filtered.nsamples : t->win.nsamples;
	return t->have_filtered ? &t->filtered : t->prof;
}

/* The views (cmd/top_views.c). Pushes a view of kind on function (name, module: copied; NULL
 * for the table and the help); NULL when the stack is full or out of memory. */
struct view *view_push(struct top *t, enum view_kind kind, const char *name, const char *module);
/* Frees what a view owns. */
void view_release(struct view *v);
/* Row i of a calls view: headings, callers, a blank, callees; *row is the caller or callee. */
enum call_section view_call_row(const struct view *v, size_t i, const struct calls_row **row);
/* (Re)computes the callers and callees of a calls view's function over the window. 0 or -errno. */
int view_calls_refresh(struct top *t, struct view *v);
/* Opens the annotation of the view's function, selecting its hottest instruction (a note in
 * the view when it cannot). */
void view_annotate_open(struct top *t, struct view *v);
/* Recomputes the views that follow the window (all but the table, which the caller rebuilt). */
int views_refresh(struct top *t);
/* The help view's lines (help_lines[] of nhelp_lines). */
extern const char *const view_help_lines[];
extern const size_t view_nhelp_lines;

#endif
