/* Streaming JSON writer: separators, indentation, string escaping and number formatting. */
#include "base/json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"

/* One open container: '{' or '[', and how many members or elements it has so far. */
struct jw_level {
	char kind;
	size_t count;
};

struct json_writer {
	FILE *f;
	bool pretty;
	bool named;             /* jw_name was called; a value must follow */
	int err;
	struct jw_level *stack;
	unsigned depth, cap;
};

struct json_writer *jw_new(FILE *f, bool pretty)
{
	struct json_writer *w = calloc(1, sizeof(*w));

	if (!w) /* calloc set errno (ENOMEM) */
		return NULL;
	w->f = f;
	w->pretty = pretty;
	return w;
}

void jw_free(struct json_writer *w)
{
	if (!w)
		return;
	free(w->stack);
	free(w);
}

int jw_error(const struct json_writer *w)
{
	return w->err;
}

unsigned jw_depth(const struct json_writer *w)
{
	return w->depth;
}

/* Starts a new line indented for the given depth (pretty mode only). */
static void newline(struct json_writer *w, unsigned depth)
{
	if (!w->pretty)
		return;
	putc('\n', w->f);
	for (unsigned i = 0; i < depth; i++)
		fputs("  ", w->f);
}

/* Writes what goes before a value: a comma and indentation inside arrays; checks placement. */
static void before_value(struct json_writer *w)
{
	struct jw_level *top = w->depth ? &w->stack[w->depth - 1] : NULL;

	if (top && top->kind == '{') {
		if (!w->named && !w->err)
			w->err = -EINVAL;
	} else if (top) {
		if (top->count)
			putc(',', w->f);
		newline(w, w->depth);
		top->count++;
	}
	w->named = false;
}

/* Ends a value at the top level with a newline. */
static void after_value(struct json_writer *w)
{
	if (!w->depth)
		putc('\n', w->f);
}

/* Opens an object or array. */
static void begin(struct json_writer *w, char kind)
{
	before_value(w);
	putc(kind, w->f);
	if (VEC_GROW(w->stack, w->cap, w->depth + 1)) {
		w->err = -ENOMEM;
		return;
	}
	w->stack[w->depth++] = (struct jw_level){ kind, 0 };
}

/* Closes the innermost container, which must be of the given kind. */
static void end(struct json_writer *w, char kind)
{
	if (!w->depth || w->stack[w->depth - 1].kind != kind || w->named) {
		if (!w->err)
			w->err = -EINVAL;
		if (!w->depth || w->stack[w->depth - 1].kind != kind)
			return;
	}
	if (w->stack[--w->depth].count)
		newline(w, w->depth);
	putc(kind == '{' ? '}' : ']', w->f);
	w->named = false;
	after_value(w);
}

void jw_begin_object(struct json_writer *w)
{
	begin(w, '{');
}

void jw_end_object(struct json_writer *w)
{
	end(w, '{');
}

void jw_begin_array(struct json_writer *w)
{
	begin(w, '[');
}

void jw_end_array(struct json_writer *w)
{
	end(w, '[');
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 with *bad set to the length of the
 * maximal invalid subpart to replace by one U+FFFD. */
static size_t utf8_len(const unsigned char *s, size_t len, size_t *bad)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t n;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else {
		*bad = 1;
		return 0;
	}
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	for (size_t i = 1; i < n; i++, lo = 0x80, hi = 0xbf) {
		if (i >= len || s[i] < lo || s[i] > hi) {
			*bad = i;
			return 0;
		}
	}
	return n;
}

/* Writes the escape for an ASCII byte that cannot appear raw in a JSON string, if it is one. */
static bool write_escape(FILE *f, unsigned char c)
{
	static const char short_esc[] = { ['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n', ['\r'] = 'r',
					  ['\t'] = 't', ['"'] = '"', ['\\'] = '\\' };

	if (c < sizeof(short_esc) && short_esc[c]) {
		putc('\\', f);
		putc(short_esc[c], f);
		return true;
	}
	if (c < 0x20) {
		fprintf(f, "\\u%04x", c);
		return true;
	}
	return false;
}

/* Writes s[0..len) as a quoted, escaped JSON string. */
static void write_string(FILE *f, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	putc('"', f);
	while (i < len) {
		size_t bad = 0, n = s[i] < 0x80 ? 1 : utf8_len(s + i, len - i, &bad);
		if (!n) {
			fputs("\\ufffd", f);
			i += bad;
		} else if ((n == 2 && s[i] == 0xc2 && s[i + 1] <= 0x9f) || s[i] == 0x7f) {
			fprintf(f, "\\u%04x", n == 2 ? s[i + 1] : s[i]); /* C1 and DEL: terminals obey C1 */
			i += n;
		} else if (n > 1 || !write_escape(f, s[i])) {
			fwrite(s + i, 1, n, f);
			i += n;
		} else {
			i++;
		}
	}
	putc('"', f);
}

void jw_name(struct json_writer *w, const char *name)
{
	struct jw_level *top = w->depth ? &w->stack[w->depth - 1] : NULL;

	if (!top || top->kind != '{' || w->named) {
		if (!w->err)
			w->err = -EINVAL;
		if (!top || top->kind != '{')
			return;
	}
	if (top->count++)
		putc(',', w->f);
	newline(w, w->depth);
	write_string(w->f, name ? name : "", name ? strlen(name) : 0);
	fputs(w->pretty ? ": " : ":", w->f);
	w->named = true;
}

void jw_string_len(struct json_writer *w, const char *s, size_t len)
{
	before_value(w);
	write_string(w->f, s, len);
	after_value(w);
}

void jw_string(struct json_writer *w, const char *s)
{
	if (!s)
		jw_null(w);
	else
		jw_string_len(w, s, strlen(s));
}

/* Writes a bare token (number, true, false, null) as a value. */
static void write_token(struct json_writer *w, const char *tok)
{
	before_value(w);
	fputs(tok, w->f);
	after_value(w);
}

void jw_int(struct json_writer *w, int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	write_token(w, buf);
}

void jw_uint(struct json_writer *w, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	write_token(w, buf);
}

void jw_double(struct json_writer *w, double v)
{
	char buf[40];

	if (!isfinite(v)) {
		write_token(w, "null");
		return;
	}
	if (v == trunc(v) && fabs(v) < 9007199254740992.0) {
		snprintf(buf, sizeof(buf), "%.0f", v); /* 100, not 1e+02 */
		write_token(w, buf);
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	write_token(w, buf);
}

void jw_bool(struct json_writer *w, bool v)
{
	write_token(w, v ? "true" : "false");
}

void jw_null(struct json_writer *w)
{
	write_token(w, "null");
}
