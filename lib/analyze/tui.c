/* The list browser: ncurses setup and teardown, drawing, movement keys, a one-line input. */
#include "analyze/tui.h"

#include <curses.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"

#define ROW_MAX 1024

enum { PAIR_HOT = 1, PAIR_WARM };

struct tui {
	SCREEN *screen;
	bool colors;
	size_t page;  /* rows of the list on screen at the last draw */
};

struct tui *tui_new(void)
{
	struct tui *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->screen = newterm(NULL, stdout, stdin);
	if (!t->screen) {
		free(t);
		errno = ENOTTY;
		return NULL;
	}
	set_term(t->screen);
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	if (has_colors() && start_color() == OK) {
		use_default_colors();
		init_pair(PAIR_HOT, COLOR_RED, -1);
		init_pair(PAIR_WARM, COLOR_GREEN, -1);
		t->colors = true;
	}
	t->page = 1;
	return t;
}

void tui_free(struct tui *t)
{
	if (!t)
		return;
	endwin();
	delscreen(t->screen);
	free(t);
}

void tui_emergency_end(void)
{
	endwin();
}

/* curses attributes of a row kind. */
static attr_t attr_of(const struct tui *t, enum tui_attr a)
{
	switch (a & ~TUI_NOSELECT) {
	case TUI_HOT:
		return A_BOLD | (t->colors ? COLOR_PAIR(PAIR_HOT) : 0);
	case TUI_WARM:
		return t->colors ? COLOR_PAIR(PAIR_WARM) : 0;
	case TUI_DIM:
		return A_DIM;
	case TUI_HEADING:
		return A_BOLD;
	default:
		return A_NORMAL;
	}
}

/* Writes text on screen line y with its control characters escaped (escape_text: a newline in
 * a name must not start a forged row, ESC or a bidi control not command or reorder the screen),
 * cut at the width; fill pads the rest of the line. */
static void put_line(int y, const char *text, size_t len, attr_t attr, bool fill)
{
	char esc[ROW_MAX * 2];

	len = escape_text(esc, sizeof(esc), text, len);
	len = len < sizeof(esc) ? len : sizeof(esc) - 1;
	attrset(attr);
	mvaddnstr(y, 0, esc, len < (size_t)COLS ? (int)len : COLS);
	if (fill)
		for (int x = len < (size_t)COLS ? (int)len : COLS; x < COLS; x++)
			addch(' ');
	attrset(A_NORMAL);
}

/* Draws the header lines from y = 0; returns how many lines they took. */
static int draw_header(const char *header)
{
	int y = 0;

	for (const char *h = header; h && *h && y < LINES - 2; y++) {
		const char *nl = strchr(h, '\n');
		size_t len = nl ? (size_t)(nl - h) : strlen(h);
		put_line(y, h, len, y == 0 ? A_BOLD : A_NORMAL, false);
		h = nl ? nl + 1 : h + len;
	}
	return y;
}

/* True when the cursor may stop on row i: its row callback does not flag it TUI_NOSELECT. */
static bool selectable(const struct tui_list *l, size_t i)
{
	char buf[ROW_MAX];

	buf[0] = 0;
	return !l->row || !(l->row(l->ctx, i, buf, sizeof(buf)) & TUI_NOSELECT);
}

/* The selectable row nearest to i going in direction dir (1 down, -1 up), else going the other
 * way; i itself when no row is selectable. */
static size_t nearest_selectable(const struct tui_list *l, size_t i, int dir)
{
	for (int pass = 0; pass < 2; pass++, dir = -dir)
		for (size_t r = i; r < l->nrows; r += dir) {
			if (selectable(l, r))
				return r;
			if (r == 0 && dir < 0)
				break;
		}
	return i;
}

/* Scrolls up over the unselectable rows just above the selection (the heading of its section),
 * as far as the page allows. */
static void show_heading(struct tui_list *l, size_t page)
{
	while (l->top > 0 && l->sel - (l->top - 1) < page && !selectable(l, l->top - 1))
		l->top--;
}

/* Keeps sel and top inside the list, sel on a selectable row and on screen. */
static void clamp(struct tui_list *l, size_t page)
{
	if (!page)
		page = 1;
	if (l->sel >= l->nrows)
		l->sel = l->nrows ? l->nrows - 1 : 0;
	if (l->cursor) {
		if (l->nrows)
			l->sel = nearest_selectable(l, l->sel, 1);
		if (l->sel <= l->top) {
			l->top = l->sel;
			show_heading(l, page);
		}
		if (l->sel >= l->top + page)
			l->top = l->sel - page + 1;
	} else {
		l->top = l->sel;
	}
	if (l->top + page > l->nrows)
		l->top = l->nrows > page ? l->nrows - page : 0;
	if (!l->cursor)
		l->sel = l->top;
}

/* Draws the visible rows from line y0, page lines at most. */
static void draw_rows(struct tui *t, struct tui_list *l, int y0, size_t page)
{
	char buf[ROW_MAX];

	for (size_t i = 0; i < page && l->top + i < l->nrows; i++) {
		size_t r = l->top + i;
		buf[0] = 0;
		enum tui_attr a = l->row ? l->row(l->ctx, r, buf, sizeof(buf)) : TUI_NORMAL;
		bool selected = l->cursor && r == l->sel;
		attr_t attr = attr_of(t, a) | (selected ? A_REVERSE : 0);
		put_line(y0 + i, buf, strlen(buf), attr, selected);
	}
}

int tui_cols(const struct tui *t)
{
	(void)t;
	return COLS;
}

void tui_draw(struct tui *t, struct tui_list *l, const char *header, const char *columns,
	      const char *footer)
{
	erase();
	int y = draw_header(header);
	if (columns)
		put_line(y++, columns, strlen(columns), A_REVERSE, true);
	t->page = LINES - 1 > y ? (size_t)(LINES - 1 - y) : 1;
	clamp(l, t->page);
	draw_rows(t, l, y, t->page);
	if (footer)
		put_line(LINES - 1, footer, strlen(footer), A_REVERSE, true);
	wnoutrefresh(stdscr);
	doupdate();
}

/* Moves the selection (or the view, without a cursor) by delta rows, within the list; the
 * cursor goes on past unselectable rows in the direction it moved. */
static void move_by(struct tui_list *l, long delta)
{
	if (delta < 0)
		l->sel = (size_t)-delta > l->sel ? 0 : l->sel + delta;
	else
		l->sel = l->sel + delta >= l->nrows ? (l->nrows ? l->nrows - 1 : 0) : l->sel + delta;
	if (!l->cursor)
		l->top = l->sel;
	else if (l->nrows)
		l->sel = nearest_selectable(l, l->sel, delta < 0 ? -1 : 1);
}

/* Handles a movement key; false when ch is not one. */
static bool movement(struct tui *t, struct tui_list *l, int ch)
{
	long page = t->page > 1 ? (long)t->page - 1 : 1;

	switch (ch) {
	case KEY_UP: case 'k': move_by(l, -1); break;
	case KEY_DOWN: case 'j': move_by(l, 1); break;
	case KEY_PPAGE: move_by(l, -page); break;
	case KEY_NPAGE: move_by(l, page); break;
	case KEY_HOME: l->sel = l->top = 0; break;
	case KEY_END: move_by(l, (long)l->nrows); break;
	default: return false;
	}
	clamp(l, t->page);
	return true;
}

int tui_key(struct tui *t, struct tui_list *l, int timeout_ms)
{
	timeout(timeout_ms);
	int ch = getch();

	if (ch == ERR)
		return TUI_KEY_TIMEOUT;
	if (ch == KEY_RESIZE)
		return TUI_KEY_RESIZE;
	if (l && movement(t, l, ch))
		return TUI_KEY_MOVED;
	if (ch == '\r' || ch == KEY_ENTER)
		return TUI_KEY_ENTER;
	if (ch == KEY_BACKSPACE || ch == 8)
		return TUI_KEY_BACKSPACE;
	return ch;
}

int tui_input_key(struct tui_input *in, int key)
{
	if (key == TUI_KEY_ENTER)
		return 1;
	if (key == TUI_KEY_ESC)
		return -1;
	if (key == TUI_KEY_BACKSPACE) {
		if (in->len)
			in->buf[--in->len] = 0;
	} else if (key >= ' ' && key < 127 && in->len + 1 < sizeof(in->buf)) {
		in->buf[in->len++] = key;
		in->buf[in->len] = 0;
	}
	return 0;
}
