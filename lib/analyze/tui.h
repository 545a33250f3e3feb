/* One generic full-screen list browser on ncurses, used by every view of firn top (the function
 * table, callers and callees, an annotation, the help): header lines, a column line, a scrolling
 * list of rows drawn on demand with a selection bar, and a footer line. It draws only on the
 * screen tui_new sets up; tui_free gives the terminal back as it was. */
#ifndef FIRN_TUI_H
#define FIRN_TUI_H

#include <stdbool.h>
#include <stddef.h>

/* How a row is drawn. */
enum tui_attr {
	TUI_NORMAL = 0,
	TUI_HOT,      /* red, bold: the hottest rows */
	TUI_WARM,     /* green */
	TUI_DIM,
	TUI_HEADING,  /* bold: a section title inside a list */
	TUI_NOSELECT = 0x100, /* a flag or'ed into the row callback's result: the cursor skips the
			       * row (a heading, a blank line) */
};

/* A list: the caller sets nrows and the row callback; the browser keeps sel and top in range and,
 * with a cursor, sel on a row not flagged TUI_NOSELECT (when the list has one). */
struct tui_list {
	size_t nrows;
	size_t sel, top;      /* selected row, first row on screen */
	bool cursor;          /* draw the selection bar; without it the movement keys scroll */
	/* Writes row i (no newline) into buf (len bytes) and says how to draw it (an attribute,
	 * possibly with TUI_NOSELECT); also called just to ask whether a row is selectable. */
	enum tui_attr (*row)(void *ctx, size_t i, char *buf, size_t len);
	void *ctx;
};

/* What tui_key returns besides plain keys ('q', '/', ...). */
enum {
	TUI_KEY_TIMEOUT = -1,  /* no key within the timeout */
	TUI_KEY_MOVED = -2,    /* a movement key moved the list */
	TUI_KEY_RESIZE = -3,   /* the terminal changed size: draw again */
	TUI_KEY_ENTER = '\n',
	TUI_KEY_ESC = 27,
	TUI_KEY_BACKSPACE = 127,
};

struct tui;

/* Takes over the terminal (stdin/stdout must be one); NULL + errno when it cannot. */
struct tui *tui_new(void);
/* Restores the terminal and frees t (NULL is fine). */
void tui_free(struct tui *t);
/* Restores the terminal from a fatal signal handler; nothing else may be called afterwards. */
void tui_emergency_end(void);

/* The terminal's width in columns (at the last draw or resize). */
int tui_cols(const struct tui *t);
/* Draws a screen: header ('\n' separates lines, the first is bold), the column line (reversed),
 * the visible rows of l, and the footer on the last line. */
void tui_draw(struct tui *t, struct tui_list *l, const char *header, const char *columns,
	      const char *footer);
/* Waits up to timeout_ms for a key. Arrows, PgUp/PgDn, Home/End and j/k move l and give
 * TUI_KEY_MOVED; Enter gives TUI_KEY_ENTER, Esc TUI_KEY_ESC, Backspace TUI_KEY_BACKSPACE; an
 * interrupted wait gives TUI_KEY_TIMEOUT. Other keys are returned as they are. */
int tui_key(struct tui *t, struct tui_list *l, int timeout_ms);

/* A line being typed (the filter prompt). */
struct tui_input {
	char buf[256];
	size_t len;
};

/* Feeds a key from tui_key to the line: 1 on Enter (accept), -1 on Esc (cancel), 0 otherwise
 * (printable characters are appended, Backspace removes the last one). */
int tui_input_key(struct tui_input *in, int key);

#endif
