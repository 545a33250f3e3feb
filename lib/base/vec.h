/* Growable arrays and sorted arrays: the one growth rule (VEC_GROW, VEC_GROW_ZEROED), the
 * searches (UPPER_BOUND, PARTITION_POINT) and the comparison of the sorts (CMP3) that lib/, cmd/
 * and bench/ share instead of writing each by hand; FREE_ALL for the runs of free() that release
 * them. */
#ifndef FIRN_VEC_H
#define FIRN_VEC_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The capacity an empty array gets on its first growth, unless more is needed. */
#define VEC_MIN_CAP 16

/* Grows *items, an array of elem-byte elements with room for *cap of them, to room for at least
 * need: an empty array gets exactly need (VEC_MIN_CAP at least), a filled one doubles until need
 * fits, never past max. Returns 0 (also when it already
 * had room) or -ENOMEM when need is over max, the size in bytes overflows size_t, or realloc fails;
 * on failure *items and *cap are unchanged and still owned by the caller. Elements past the old
 * capacity are uninitialized. */
static inline int vec_grow_max(void **items, size_t *cap, size_t need, size_t elem, size_t max)
{
	if (need <= *cap)
		return 0;
	if (need > max || !elem || need > SIZE_MAX / elem)
		return -ENOMEM;
	size_t ncap = *cap ? *cap : need > VEC_MIN_CAP ? need : VEC_MIN_CAP;
	while (ncap < need)
		ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
	if (ncap > max)
		ncap = max;
	if (ncap > SIZE_MAX / elem)
		ncap = need;
	void *n = realloc(*items, ncap * elem);
	if (!n)
		return -ENOMEM;
	*items = n;
	*cap = ncap;
	return 0;
}

/* vec_grow_max with no bound but size_t's. */
static inline int vec_grow(void **items, size_t *cap, size_t need, size_t elem)
{
	return vec_grow_max(items, cap, need, elem, SIZE_MAX);
}

/* VEC_GROW(arr, cap, need): vec_grow on a typed array lvalue arr and its capacity lvalue cap of
 * any unsigned integer type (a uint32_t cap stays within uint32_t). 0 or -ENOMEM; on failure
 * arr and cap are unchanged. arr and cap are evaluated more than once: plain lvalues only.
 * Usage: `if (VEC_GROW(v->items, v->cap, v->n + 1)) return -ENOMEM;` */
#define VEC_GROW(arr, cap, need)                                                                   \
	__extension__({                                                                            \
		_Static_assert((__typeof__(cap))-1 > 0, "VEC_GROW: cap must be unsigned");         \
		size_t vg_cap_ = (cap);                                                            \
		void *vg_items_ = (arr);                                                           \
		int vg_err_ = vec_grow_max(&vg_items_, &vg_cap_, (need), sizeof(*(arr)),           \
					   (size_t)(__typeof__(cap))-1);                           \
		if (!vg_err_) {                                                                    \
			(arr) = vg_items_;                                                         \
			(cap) = vg_cap_;                                                           \
		}                                                                                  \
		vg_err_;                                                                           \
	})

/* VEC_GROW_ZEROED(arr, cap, need): VEC_GROW for an array indexed by id in which an all-zero
 * element means "not filled yet": the elements it adds (from the old cap to the new) are zeroed,
 * so every index below cap may be read. 0 or -ENOMEM, arguments as VEC_GROW's. */
#define VEC_GROW_ZEROED(arr, cap, need)                                                            \
	__extension__({                                                                            \
		size_t vz_old_ = (cap);                                                            \
		int vz_err_ = VEC_GROW(arr, cap, need);                                            \
		if (!vz_err_)                                                                      \
			memset((arr) + vz_old_, 0, ((size_t)(cap) - vz_old_) * sizeof(*(arr)));    \
		vz_err_;                                                                           \
	})

/* UPPER_BOUND(arr, n, field, key): the index of the first of arr[0..n) whose member field is
 * greater than key, or n when none is; arr must be sorted ascending by field (duplicates allowed).
 * So index - 1, when index > 0, is the last element whose field <= key: the one whose range may
 * hold key. field is an unsigned integer member (up to 64 bits); both are compared as uint64_t.
 * Each argument is evaluated once. */
#define UPPER_BOUND(arr, n, field, key)                                                            \
	__extension__({                                                                            \
		_Static_assert((__typeof__((arr)->field))-1 > 0, "UPPER_BOUND: unsigned field");   \
		const __typeof__(*(arr)) *ub_arr_ = (arr);                                         \
		uint64_t ub_key_ = (key);                                                          \
		size_t ub_lo_ = 0, ub_hi_ = (n);                                                   \
		while (ub_lo_ < ub_hi_) {                                                          \
			size_t ub_mid_ = ub_lo_ + (ub_hi_ - ub_lo_) / 2;                           \
			if ((uint64_t)ub_arr_[ub_mid_].field <= ub_key_)                           \
				ub_lo_ = ub_mid_ + 1;                                              \
			else                                                                       \
				ub_hi_ = ub_mid_;                                                  \
		}                                                                                  \
		ub_lo_;                                                                            \
	})

/* CMP3(a, b): -1, 0 or 1 as a is below, equal to or above b, for the comparators that sort
 * arrays (qsort); keys chain with ?: (`return CMP3(x->a, y->a) ?: CMP3(x->b, y->b);`). Each
 * argument is evaluated twice. */
#define CMP3(a, b) (((a) > (b)) - ((a) < (b)))

/* PARTITION_POINT(n, i, pred): the first index of [0, n) at which pred, an expression of the
 * size_t index i, is false, where pred is true on a prefix of [0, n) and false on the rest (a
 * sorted array: `a[i] < key`, or a key of a pointer array: `p[i]->pid < pid`); n when it is
 * true everywhere. A binary search for what UPPER_BOUND's field-of-element form cannot say:
 * signed or compound keys, arrays of pointers. pred is evaluated about log2(n) + 1 times. */
#define PARTITION_POINT(n, i, pred)                                                                \
	__extension__({                                                                            \
		size_t pp_lo_ = 0, pp_hi_ = (n);                                                   \
		while (pp_lo_ < pp_hi_) {                                                          \
			size_t i = pp_lo_ + (pp_hi_ - pp_lo_) / 2;                                 \
			if (pred)                                                                  \
				pp_lo_ = i + 1;                                                    \
			else                                                                       \
				pp_hi_ = i;                                                        \
		}                                                                                  \
		pp_lo_;                                                                            \
	})

/* Frees each of the n pointers in ptrs (NULL ones too, as free does): see FREE_ALL. */
static inline void free_each(void *const *ptrs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(ptrs[i]);
}

/* FREE_ALL(a, b, ...): free() of each owned buffer listed (any object pointers, not const), so
 * that a release function names its arrays in one statement instead of a free() a line. Each
 * argument is evaluated once, in no particular order. */
#define FREE_ALL(...)                                                                              \
	free_each((void *const[]){ __VA_ARGS__ }, sizeof((void *[]){ __VA_ARGS__ }) / sizeof(void *))

#endif
