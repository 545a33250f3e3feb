/* See pidindex.h. */
#include "base/pidindex.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"

void pidindex_init(struct pidindex *x)
{
	memset(x, 0, sizeof(*x));
}

void pidindex_release(struct pidindex *x)
{
	free(x->pids);
	free(x->vals);
	pidindex_init(x);
}

/* Index of pid (*found set) or where it would go: the binary search reads only the pids. */
static size_t slot(const struct pidindex *x, pid_t pid, bool *found)
{
	size_t at = PARTITION_POINT(x->n, i, x->pids[i] < pid);

	*found = at < x->n && x->pids[at] == pid;
	return at;
}

void *pidindex_get(const struct pidindex *x, pid_t pid)
{
	bool found;
	size_t i = slot(x, pid, &found);

	return found ? x->vals[i] : NULL;
}

/* Both arrays are grown before either moves, so a failure leaves the index as it was. */
int pidindex_put(struct pidindex *x, pid_t pid, void *v, void **old)
{
	bool found;
	size_t i = slot(x, pid, &found);

	if (old)
		*old = found ? x->vals[i] : NULL;
	if (found) {
		x->vals[i] = v;
		return 0;
	}
	if (VEC_GROW(x->pids, x->cap_pids, x->n + 1) || VEC_GROW(x->vals, x->cap_vals, x->n + 1))
		return -ENOMEM;
	memmove(&x->pids[i + 1], &x->pids[i], (x->n - i) * sizeof(*x->pids));
	memmove(&x->vals[i + 1], &x->vals[i], (x->n - i) * sizeof(*x->vals));
	x->pids[i] = pid;
	x->vals[i] = v;
	x->n++;
	return 0;
}

void *pidindex_take(struct pidindex *x, pid_t pid)
{
	bool found;
	size_t i = slot(x, pid, &found);
	void *v;

	if (!found)
		return NULL;
	v = x->vals[i];
	memmove(&x->pids[i], &x->pids[i + 1], (x->n - i - 1) * sizeof(*x->pids));
	memmove(&x->vals[i], &x->vals[i + 1], (x->n - i - 1) * sizeof(*x->vals));
	x->n--;
	return v;
}

/* One pass, so a sweep of many ended processes costs O(n), not O(n) per process. */
size_t pidindex_filter(struct pidindex *x, bool (*keep)(void *ctx, void *v), void *ctx)
{
	size_t kept = 0, n = x->n;

	for (size_t i = 0; i < n; i++) {
		if (!keep(ctx, x->vals[i]))
			continue;
		x->pids[kept] = x->pids[i];
		x->vals[kept++] = x->vals[i];
	}
	x->n = kept;
	return n - kept;
}
