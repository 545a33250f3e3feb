/* Escaping control characters in names shown as text. */
#include "base/escape.h"

#include <string.h>

/* The code point of the bidirectional control at u (n bytes left) and its UTF-8 length in *len,
 * or 0: U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069 reorder the text around them (a
 * name could show as another, or move a table's columns). */
static unsigned bidi_control(const unsigned char *u, size_t n, size_t *len)
{
	*len = u[0] == 0xd8 ? 2 : 3;
	if (n >= 2 && u[0] == 0xd8 && u[1] == 0x9c)
		return 0x61c;
	if (n < 3 || u[0] != 0xe2)
		return 0;
	if (u[1] == 0x80 && (u[2] == 0x8e || u[2] == 0x8f || (u[2] >= 0xaa && u[2] <= 0xae)))
		return 0x2000 + (u[2] - 0x80);
	if (u[1] == 0x81 && u[2] >= 0xa6 && u[2] <= 0xa9)
		return 0x2040 + (u[2] - 0x80);
	return 0;
}

size_t escape_char(const char *s, size_t n, char *out, size_t *used)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	size_t k = 0;
	unsigned cp = bidi_control(u, n, used);

	if (cp) { /* "\u202e" */
		out[k++] = '\\';
		out[k++] = 'u';
		for (int sh = 12; sh >= 0; sh -= 4)
			out[k++] = hex[(cp >> sh) & 15];
		return k;
	}
	*used = 1;
	if (n >= 2 && u[0] == 0xc2 && u[1] >= 0x80 && u[1] <= 0x9f)
		*used = 2; /* a C1 control in UTF-8 (U+009B is CSI) */
	else if (u[0] >= 0x20 && u[0] != 0x7f)
		return 0;
	for (size_t i = 0; i < *used; i++) {
		out[k++] = '\\';
		out[k++] = 'x';
		out[k++] = hex[u[i] >> 4];
		out[k++] = hex[u[i] & 15];
	}
	return k;
}

size_t escape_text(char *dst, size_t cap, const char *s, size_t n)
{
	size_t len = 0, used, k;
	char esc[ESCAPE_MAX];

	for (size_t i = 0; i < n; i += used) {
		k = escape_char(s + i, n - i, esc, &used);
		const char *piece = k ? esc : s + i;
		k = k ? k : used;
		if (len < cap)
			memcpy(dst + len, piece, len + k < cap ? k : cap - len);
		len += k;
	}
	if (cap)
		dst[len < cap ? len : cap - 1] = 0;
	return len;
}
