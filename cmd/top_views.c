/* firn top's views (see top.h): the function table's rows, callers and callees of a function,
 * its annotation, the help; each a tui_list whose row callback reads the session. */
#include "top.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/safeopen.h"

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
	top_table_row(t, e, buf, len);
	return heat_of(top_share(t, e->self));
}

/* Row i of a calls view: headings, callers, a blank, callees; *row is the caller or callee. */
enum call_section view_call_row(const struct view *v, size_t i, const struct calls_row **row)
{
	size_t nc = v->calls.ncallers;

	*row = NULL;
	if (i == 0 || i == nc + 2)
		return CALLS_HEADING;
	if (i == nc + 1)
		return CALLS_BLANK;
	if (i <= nc) {
		*row = &v->calls.callers[i - 1];
		return CALLS_CALLER;
	}
	*row = &v->calls.callees[i - nc - 3];
	return CALLS_CALLEE;
}

/* (Re)computes the callers and callees of the calls view's function over the window. */
int view_calls_refresh(struct top *t, struct view *v)
{
	struct calls_query q = { .value_index = t->vi, .function = v->function,
				 .module = v->module, .no_kernel = t->kernel_hidden };
	struct profile *p = top_shown(t, &q.samples, &q.nsamples);
	int err = p ? calls_compute(&v->calls, p, &q) : 0;

	v->list.nrows = v->calls.ncallers + v->calls.ncallees + 3;
	v->module_width = 0;
	for (size_t i = 0; i < v->list.nrows; i++) {
		const struct calls_row *r;
		if (view_call_row(v, i, &r) >= CALLS_CALLER && r && top_module_len(r->module) > v->module_width)
			v->module_width = top_module_len(r->module);
	}
	return err;
}

/* Row callback of a calls view. */
static enum tui_attr calls_row(void *ctx, size_t i, char *buf, size_t len)
{
	struct view *v = ctx;
	struct top *t = v->top;

	if (i >= v->list.nrows)
		return TUI_NORMAL;
	const struct calls_row *r;
	enum call_section sec = view_call_row(v, i, &r);
	if (sec == CALLS_BLANK) {
		buf[0] = 0;
		return TUI_NORMAL | TUI_NOSELECT;
	}
	if (sec == CALLS_HEADING) {
		bool callers = i == 0;
		snprintf(buf, len, "%s of %s:", callers ? "callers (who calls it)"
			 : "callees (what it calls; [self]: its own code)", v->function);
		return TUI_HEADING | TUI_NOSELECT;
	}
	int mw = top_module_col(t, v->module_width);
	char mbuf[256];

	snprintf(buf, len, "  %7.2f  %-*.*s  %s", top_share(t, r->value), mw, mw,
		 top_module_cell(r->module, mw, mbuf, sizeof(mbuf)), r->name);
	return heat_of(top_share(t, r->value));
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

const char *const view_help_lines[] = {
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

const size_t view_nhelp_lines = sizeof(view_help_lines) / sizeof(view_help_lines[0]);

/* Row callback of the help view. */
static enum tui_attr help_row(void *ctx, size_t i, char *buf, size_t len)
{
	if (i < view_nhelp_lines)
		snprintf(buf, len, "%s", view_help_lines[i]);
	return i == 8 || i == 17 || i == 21 ? TUI_HEADING : TUI_NORMAL;
}

/* Frees what a view owns. */
void view_release(struct view *v)
{
	free(v->function);
	free(v->module);
	calls_release(&v->calls);
	if (v->have_dis)
		disasm_release(&v->dis);
	memset(v, 0, sizeof(*v));
}

/* Pushes a view of kind on function (name, module); NULL when the stack is full. */
struct view *view_push(struct top *t, enum view_kind kind, const char *name,
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
	return (struct disasm_query){ v->function, v->module, t->vi, t->kernel_hidden };
}

/* Opens the annotation of the view's function, selecting its hottest instruction. */
void view_annotate_open(struct top *t, struct view *v)
{
	struct disasm_query q = annotate_query(t, v);
	const struct profile_sample *s;
	size_t n;
	struct profile *p = top_shown(t, &s, &n);
	int err = p ? disasm_annotate(&v->dis, p, s, n, &q) : -ENOENT;

	if (err) {
		if (err == -EOPNOTSUPP)
			snprintf(v->note, sizeof(v->note), "cannot annotate '%s': kernel or JIT code "
				 "has no file to read", v->function);
		else if (err == -ELIBACC)
			snprintf(v->note, sizeof(v->note), "cannot annotate '%s': cannot load the "
				 "disassembler library '%s'", v->function, disasm_library());
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
int views_refresh(struct top *t)
{
	for (int i = 1; i < t->nviews; i++) {
		struct view *v = &t->views[i];
		if (v->kind == VIEW_CALLS) {
			int err = view_calls_refresh(t, v);
			if (err)
				return err;
		} else if (v->kind == VIEW_ANNOTATE && v->have_dis) {
			struct disasm_query q = annotate_query(t, v);
			const struct profile_sample *s;
			size_t n;
			struct profile *p = top_shown(t, &s, &n);
			disasm_count(&v->dis, p, s, n, &q);
		}
	}
	return 0;
}
