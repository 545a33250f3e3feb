/* An nmethod's PcDescs and ScopeDescs decoded: see hotspot_scopes.h. */
#include "runtimes/hotspot_scopes.h"

#include <errno.h>
#include <string.h>

#define LG_H 6      /* UNSIGNED5: 64 "high" byte values carry 6 bits each */
#define MAX_LEN 5   /* bytes in one number at most */
#define MAX_BCI 65535

unsigned hotspot_stream_excluded(int jdk)
{
	return jdk >= 21 ? 1 : 0;
}

int hotspot_stream_read(struct hotspot_stream *s, uint32_t *v)
{
	unsigned low = 256 - (1u << LG_H) - s->excluded; /* L: bytes below it end a number */
	uint64_t sum = 0;

	for (size_t i = 0; i < MAX_LEN; i++) {
		if (s->pos + i >= s->len || s->buf[s->pos + i] < s->excluded)
			return -EINVAL;
		unsigned b = s->buf[s->pos + i] - s->excluded;
		sum += (uint64_t)b << (LG_H * i);
		if (b < low || i == MAX_LEN - 1) {
			if (sum > UINT32_MAX)
				return -EINVAL;
			*v = (uint32_t)sum;
			s->pos += i + 1;
			return 0;
		}
	}
	return -EINVAL;
}

/* Decodes the scope at offset's header: sender, method, bci (the body's offsets skipped). */
static int decode_one(const uint8_t *data, size_t len, unsigned excluded, uint32_t offset,
		      struct hotspot_scope *sc)
{
	struct hotspot_stream s = { data, len, offset, excluded };
	uint32_t bci;
	int err;

	if (offset == 0 || offset >= len)
		return -EINVAL;
	if ((err = hotspot_stream_read(&s, &sc->sender)) ||
	    (err = hotspot_stream_read(&s, &sc->method_index)) ||
	    (err = hotspot_stream_read(&s, &bci)))
		return err;
	/* read_bci: the int plus InvocationEntryBci */
	sc->bci = (int32_t)((int64_t)bci + HS_INVOCATION_ENTRY_BCI);
	if (sc->method_index == 0 || bci > MAX_BCI + 1 || sc->sender >= offset)
		return -EINVAL;
	return 0;
}

int hotspot_scopes_decode(const uint8_t *data, size_t len, unsigned excluded, uint32_t offset,
			  struct hotspot_scope *out, size_t max)
{
	size_t n = 0;
	int err;

	do {
		if (n == max)
			return -EINVAL;
		if ((err = decode_one(data, len, excluded, offset, &out[n])))
			return err;
		offset = out[n++].sender;
	} while (offset);
	return (int)n;
}

/* The int32 at off in the i-th PcDesc. */
static int32_t pcdesc_int(const uint8_t *pcs, const struct hotspot_pcdesc_layout *l, size_t i,
			  uint32_t off)
{
	int32_t v;

	memcpy(&v, pcs + i * l->size + off, sizeof(v));
	return v;
}

int hotspot_pcdesc_find(const uint8_t *pcs, size_t n, const struct hotspot_pcdesc_layout *layout,
			int32_t pc_offset, uint32_t *scope)
{
	size_t lo = 0, hi = n;

	if (layout->size < 8 || layout->pc_offset > layout->size - 4 ||
	    layout->scope_offset > layout->size - 4)
		return -EINVAL;
	while (lo < hi) { /* the first at or after pc_offset: PcDescs are sorted by pc offset */
		size_t mid = lo + (hi - lo) / 2;
		if (pcdesc_int(pcs, layout, mid, layout->pc_offset) < pc_offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == n)
		return -ENOENT;
	*scope = (uint32_t)pcdesc_int(pcs, layout, lo, layout->scope_offset);
	return 0;
}
