/* Escaping control characters in names shown as text. */
#include "escape.h"

#include <string.h>

size_t escape_char(const char *s, size_t n, char *out, size_t *used)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	size_t k = 0;

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
