/* Unit tests for the shared base: vec.h's growth (doubling, typed capacities, -ENOMEM on sizes
 * that overflow or pass the capacity's type, zeroed growth), hashtab's insert, find, growth,
 * clear, many keys and collisions through a bad hash, UPPER_BOUND and PARTITION_POINT at their
 * edges, CMP3, fileid.h's identities, clock.h's mono_ns and wall_ns, and pidindex against a
 * plain array model (put, replace, take, filter, in order), and the arena's blocks (aligned,
 * distinct, kept while chunks are added, reused after a reset). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/arena.h"
#include "base/clock.h"
#include "base/fileid.h"
#include "base/hash.h"
#include "base/hashtab.h"
#include "base/pidindex.h"
#include "base/vec.h"

/* Growth doubles from VEC_MIN_CAP, keeps the contents, and does nothing when there is room. */
static void test_grow(void **state)
{
	int *a = NULL;
	size_t cap = 0;

	assert_int_equal(vec_grow((void **)&a, &cap, 1, sizeof(*a)), 0);
	assert_int_equal(cap, VEC_MIN_CAP);
	for (int i = 0; i < VEC_MIN_CAP; i++)
		a[i] = i;
	int *before = a;
	assert_int_equal(vec_grow((void **)&a, &cap, VEC_MIN_CAP, sizeof(*a)), 0);
	assert_ptr_equal(a, before); /* room already: untouched */
	assert_int_equal(vec_grow((void **)&a, &cap, VEC_MIN_CAP + 1, sizeof(*a)), 0);
	assert_int_equal(cap, 2 * VEC_MIN_CAP);
	assert_int_equal(vec_grow((void **)&a, &cap, 1000, sizeof(*a)), 0);
	assert_int_equal(cap, 1024); /* doubled until it fits */
	for (int i = 0; i < VEC_MIN_CAP; i++)
		assert_int_equal(a[i], i);
	free(a);

	/* an empty array gets what it needs, not the next power of two (a large first buffer,
	 * as gunzip's, would otherwise take up to twice the memory) */
	a = NULL;
	cap = 0;
	assert_int_equal(vec_grow((void **)&a, &cap, 1000, sizeof(*a)), 0);
	assert_int_equal(cap, 1000);
	assert_int_equal(vec_grow((void **)&a, &cap, 1001, sizeof(*a)), 0);
	assert_int_equal(cap, 2000);
	free(a);
}

/* Sizes whose byte count overflows size_t, or that pass max, are -ENOMEM and change nothing. */
static void test_grow_overflow(void **state)
{
	uint64_t *a = NULL;
	size_t cap = 0;

	assert_int_equal(vec_grow((void **)&a, &cap, SIZE_MAX, sizeof(*a)), -ENOMEM);
	assert_int_equal(vec_grow((void **)&a, &cap, SIZE_MAX / 8 + 1, sizeof(*a)), -ENOMEM);
	assert_null(a);
	assert_int_equal(cap, 0);
	assert_int_equal(vec_grow((void **)&a, &cap, 10, sizeof(*a)), 0);
	uint64_t *kept = a;
	assert_int_equal(vec_grow((void **)&a, &cap, SIZE_MAX / 2, sizeof(*a)), -ENOMEM);
	assert_ptr_equal(a, kept);
	assert_int_equal(cap, VEC_MIN_CAP);
	assert_int_equal(vec_grow_max((void **)&a, &cap, 101, sizeof(*a), 100), -ENOMEM);
	assert_int_equal(vec_grow_max((void **)&a, &cap, 100, sizeof(*a), 100), 0);
	assert_int_equal(cap, 100); /* doubling stops at max */
	free(a);
}

/* VEC_GROW keeps a narrow capacity within its type: a uint8_t cap cannot pass 255. */
static void test_grow_typed(void **state)
{
	struct {
		char *items;
		uint8_t cap;
	} v = { NULL, 0 };

	assert_int_equal(VEC_GROW(v.items, v.cap, 200), 0);
	assert_int_equal(v.cap, 200);
	assert_int_equal(VEC_GROW(v.items, v.cap, 201), 0);
	assert_int_equal(v.cap, 255); /* not 400: it would wrap to 144 */
	assert_int_equal(VEC_GROW(v.items, v.cap, 256), -ENOMEM);
	assert_int_equal(v.cap, 255);
	free(v.items);

	size_t *big = NULL;
	size_t bigcap = 0;
	assert_int_equal(VEC_GROW(big, bigcap, SIZE_MAX - 1), -ENOMEM);
	assert_null(big);
}

/* VEC_GROW_ZEROED zeroes every element it adds, on the first growth and on later ones, and
 * leaves the filled ones as they were. */
static void test_grow_zeroed(void **state)
{
	uint32_t *v = NULL;
	size_t cap = 0;

	assert_int_equal(VEC_GROW_ZEROED(v, cap, 3), 0);
	assert_int_equal(cap, VEC_MIN_CAP);
	for (size_t i = 0; i < cap; i++)
		assert_int_equal(v[i], 0);
	memset(v, 0xff, cap * sizeof(*v));
	assert_int_equal(VEC_GROW_ZEROED(v, cap, 40), 0);
	assert_int_equal(cap, 64);
	for (size_t i = 0; i < cap; i++)
		assert_int_equal(v[i], i < VEC_MIN_CAP ? UINT32_MAX : 0);
	assert_int_equal(VEC_GROW_ZEROED(v, cap, 10), 0); /* room already: nothing changes */
	assert_int_equal(v[0], UINT32_MAX);
	free(v);
}

/* Keys of the hash table tests: strings in an array the test owns. */
struct keys {
	const char *s[5000];
	uint64_t (*hash)(const char *);
};

/* A good hash of a string. */
static uint64_t good_hash(const char *s)
{
	uint64_t h = 0;

	while (*s)
		h = hash_mix64(h ^ (unsigned char)*s++);
	return h;
}

/* A hash under which every key collides. */
static uint64_t bad_hash(const char *s)
{
	return 42;
}

/* Whether entry id of the keys in ctx is the string key. */
static bool key_eq(const void *ctx, uint32_t id, const void *key)
{
	return !strcmp(((const struct keys *)ctx)->s[id], key);
}

/* Interns n generated keys (each twice), then checks that each maps to its first id. */
static void intern_many(struct keys *k, size_t n)
{
	static char names[5000][24]; /* "key" and any size_t */
	struct hashtab t = { 0 };
	size_t ids = 0;

	for (size_t round = 0; round < 2; round++) {
		for (size_t i = 0; i < n; i++) {
			snprintf(names[i], sizeof(names[i]), "key%zu", i);
			uint64_t h = k->hash(names[i]);
			int64_t id = hashtab_find(&t, h, key_eq, k, names[i]);
			if (round) {
				assert_int_equal(id, i);
				continue;
			}
			assert_int_equal(id, -1);
			k->s[ids] = names[i];
			assert_int_equal(hashtab_add(&t, h, ids++), 0);
		}
	}
	assert_int_equal(t.n, n);
	assert_true(t.nslots >= 2 * n); /* grew, staying at most half full */
	assert_int_equal(hashtab_find(&t, k->hash("absent"), key_eq, k, "absent"), -1);
	hashtab_release(&t);
	assert_int_equal(t.nslots, 0);
	assert_int_equal(hashtab_find(&t, k->hash("key1"), key_eq, k, "key1"), -1);
}

/* Insert, find and grow with a good hash: 5000 keys. */
static void test_hashtab_many(void **state)
{
	static struct keys k = { .hash = good_hash };

	intern_many(&k, 5000);
}

/* Every key in one probe run: found by equality, not by hash. */
static void test_hashtab_collisions(void **state)
{
	static struct keys k = { .hash = bad_hash };

	intern_many(&k, 300);
}

/* The empty table finds nothing; reserve sizes ahead; an id that does not fit is -ENOMEM. */
static void test_hashtab_edges(void **state)
{
	static struct keys k = { .hash = good_hash, .s = { "a" } };
	struct hashtab t = { 0 };

	assert_int_equal(hashtab_find(&t, good_hash("a"), key_eq, &k, "a"), -1);
	assert_int_equal(hashtab_reserve(&t, 100), 0);
	assert_int_equal(t.nslots, 256);
	uint64_t *slots = t.slots;
	for (uint32_t i = 0; i < 100; i++)
		assert_int_equal(hashtab_add(&t, good_hash("a") + i, 0), 0); /* duplicates: caller's call */
	assert_ptr_equal(t.slots, slots);                                 /* no growth */
	assert_int_equal(hashtab_add(&t, 1, UINT32_MAX), -ENOMEM);
	assert_int_equal(t.n, 100);
	assert_int_equal(hashtab_reserve(&t, SIZE_MAX / 2), -ENOMEM);
	assert_int_equal(hashtab_find(&t, good_hash("a"), key_eq, &k, "a"), 0);
	hashtab_release(&t);
}

/* hashtab_clear forgets every entry but keeps the slots: the same keys can be added again as
 * new ids, without the table growing. */
static void test_hashtab_clear(void **state)
{
	static struct keys k = { .hash = good_hash, .s = { "a", "b" } };
	struct hashtab t = { 0 };

	hashtab_clear(&t); /* an empty table: nothing to do */
	assert_int_equal(hashtab_add(&t, good_hash("a"), 0), 0);
	assert_int_equal(hashtab_add(&t, good_hash("b"), 1), 0);
	uint64_t *slots = t.slots;
	size_t nslots = t.nslots;
	hashtab_clear(&t);
	assert_int_equal(t.n, 0);
	assert_int_equal(hashtab_find(&t, good_hash("a"), key_eq, &k, "a"), -1);
	assert_int_equal(hashtab_find(&t, good_hash("b"), key_eq, &k, "b"), -1);
	k.s[0] = "b";
	assert_int_equal(hashtab_add(&t, good_hash("b"), 0), 0);
	assert_int_equal(hashtab_find(&t, good_hash("b"), key_eq, &k, "b"), 0);
	assert_ptr_equal(t.slots, slots);
	assert_int_equal(t.nslots, nslots);
	hashtab_release(&t);
}

/* Entries keyed by a 64-bit id not first in their struct: HASHTAB_FIND_ID finds each by its id
 * (the member at its offset, hash_mix64 of it), NULL for ids not added or only alike in hash. */
static void test_hashtab_find_id(void **state)
{
	struct ent { uint32_t pad; uint64_t id; char name[4]; } e[300];
	struct hashtab t = { 0 };

	(void)state;
	assert_null(HASHTAB_FIND_ID(&t, e, id, 7)); /* an empty table */
	for (uint32_t i = 0; i < 300; i++) {
		e[i] = (struct ent){ .id = (uint64_t)i * 0x9e3779b97f4a7c15ull };
		assert_int_equal(hashtab_add(&t, hash_mix64(e[i].id), i), 0);
	}
	for (uint32_t i = 0; i < 300; i++)
		assert_ptr_equal(HASHTAB_FIND_ID(&t, e, id, (uint64_t)i * 0x9e3779b97f4a7c15ull), &e[i]);
	assert_null(HASHTAB_FIND_ID(&t, e, id, 1));
	assert_int_equal(hashtab_find_id(&t, e, sizeof(e[0]), offsetof(struct ent, id), e[5].id), 5);
	hashtab_release(&t);
}

/* An element of a sorted array. */
struct row {
	uint32_t pad;
	uint64_t start;
};

/* UPPER_BOUND: empty, before the first, on and between keys, after the last, duplicates. */
static void test_upper_bound(void **state)
{
	const struct row r[] = { { 0, 10 }, { 0, 20 }, { 0, 20 }, { 0, 20 }, { 0, 30 } };

	assert_int_equal(UPPER_BOUND(r, 0, start, 15), 0);
	assert_int_equal(UPPER_BOUND(r, 5, start, 0), 0);
	assert_int_equal(UPPER_BOUND(r, 5, start, 9), 0);
	assert_int_equal(UPPER_BOUND(r, 5, start, 10), 1);
	assert_int_equal(UPPER_BOUND(r, 5, start, 19), 1);
	assert_int_equal(UPPER_BOUND(r, 5, start, 20), 4); /* past the last of the duplicates */
	assert_int_equal(UPPER_BOUND(r, 5, start, 29), 4);
	assert_int_equal(UPPER_BOUND(r, 5, start, 30), 5);
	assert_int_equal(UPPER_BOUND(r, 5, start, UINT64_MAX), 5);
	assert_int_equal(UPPER_BOUND(r, 1, start, 10), 1);

	const struct {
		uint32_t v;
	} w[] = { { 1 }, { 2 }, { 3 } };
	assert_int_equal(UPPER_BOUND(w, 3, v, (uint64_t)1 << 32), 3); /* compared as uint64_t */
	assert_int_equal(UPPER_BOUND(w, 3, v, 2), 2);
}

/* CMP3: the sign of the comparison, for signed, unsigned and mixed keys, chained with ?:. */
static void test_cmp3(void **state)
{
	struct { int64_t a; uint32_t b; } x = { -1, 7 }, y = { -1, 9 };

	assert_int_equal(CMP3(1, 2), -1);
	assert_int_equal(CMP3(UINT64_MAX, 1ULL), 1);
	assert_int_equal(CMP3(x.a, y.a), 0);
	assert_int_equal(CMP3(x.a, y.a) ?: CMP3(x.b, y.b), -1);
	assert_int_equal(CMP3(y.a, x.a) ?: CMP3(y.b, x.b), 1);
}

/* PARTITION_POINT: signed keys through pointers, empty, all true, all false, duplicates. */
static void test_partition_point(void **state)
{
	const int v[] = { -5, -1, 0, 0, 7 };
	const int *p[] = { &v[0], &v[1], &v[2], &v[3], &v[4] };
	unsigned evals = 0;

	assert_int_equal(PARTITION_POINT(0, i, *p[i] < 0), 0);
	assert_int_equal(PARTITION_POINT(5, i, *p[i] < -9), 0);
	assert_int_equal(PARTITION_POINT(5, i, *p[i] < 0), 2);  /* the first 0 */
	assert_int_equal(PARTITION_POINT(5, i, *p[i] <= 0), 4); /* past the last 0 */
	assert_int_equal(PARTITION_POINT(5, i, *p[i] < 99), 5);
	assert_int_equal(PARTITION_POINT(5, i, (evals++, v[i] < 7)), 4);
	assert_true(evals <= 4); /* a binary search, not a walk */
}

/* A file keeps its identity while unchanged and loses it when rewritten; identities order by
 * device, inode, size, mtime, and equal ones hash alike. */
static void test_file_id(void **state)
{
	char path[] = "/tmp/firn-fileid-XXXXXX";
	int fd = mkstemp(path);
	struct stat st;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	struct file_id a = file_id_of(&st), b = a;
	assert_true(file_id_eq(&a, &b));
	assert_int_equal(file_id_hash(&a), file_id_hash(&b));
	assert_int_equal(write(fd, "x", 1), 1);
	assert_int_equal(fstat(fd, &st), 0);
	b = file_id_of(&st);
	assert_false(file_id_eq(&a, &b));
	assert_int_equal(file_id_cmp(&a, &b), -1); /* same inode, larger now */
	struct file_id lo = { 1, 9, 9, 9, 9 }, hi = { 2, 0, 0, 0, 0 };
	assert_int_equal(file_id_cmp(&lo, &hi), -1); /* the device first */
	assert_int_equal(file_id_cmp(&hi, &lo), 1);
	close(fd);
	unlink(path);
}

/* mono_ns moves forward and is in nanoseconds. */
static void test_mono_ns(void **state)
{
	uint64_t a = mono_ns();
	struct timespec d = { 0, 2000000 };

	nanosleep(&d, NULL);
	uint64_t b = mono_ns();
	assert_true(b >= a + 2000000);
	assert_true(b < a + 10000000000ULL);
}

/* wall_ns is the date in nanoseconds: the second time() gives, give or take one. */
static void test_wall_ns(void **state)
{
	time_t before = time(NULL);
	uint64_t w = wall_ns();
	time_t after = time(NULL);

	assert_true(w / 1000000000ULL >= (uint64_t)before);
	assert_true(w / 1000000000ULL <= (uint64_t)after);
}

/* The model of a pidindex: model[pid] is its value (0: none), pids 0..PIDS-1. */
#define PIDS 97

/* The index holds exactly the model's pids, sorted, each with the model's value. */
static void check_pidindex(const struct pidindex *x, const uintptr_t *model)
{
	size_t n = 0;

	for (pid_t p = 0; p < PIDS; p++) {
		assert_true((uintptr_t)pidindex_get(x, p) == model[p]);
		n += model[p] != 0;
	}
	assert_int_equal(x->n, n);
	for (size_t i = 1; i < x->n; i++)
		assert_true(x->pids[i - 1] < x->pids[i]);
}

/* Drops the values whose pid is odd. */
static bool keep_even(void *ctx, void *v)
{
	uintptr_t *model = ctx;
	pid_t pid = (pid_t)((uintptr_t)v >> 8);

	if (!(pid & 1))
		return true;
	model[pid] = 0;
	return false;
}

/* A few thousand random puts (new and replacing), takes and a filter agree with the model; the
 * old value comes back on a replace, NULL for a pid not there. */
static void test_pidindex(void **state)
{
	struct pidindex x;
	uintptr_t model[PIDS] = { 0 };
	unsigned seed = 12345;

	(void)state;
	pidindex_init(&x);
	assert_null(pidindex_get(&x, 3));
	assert_null(pidindex_take(&x, 3));
	for (int round = 0; round < 4000; round++) {
		seed = seed * 1103515245u + 12345u;
		pid_t pid = (pid_t)((seed >> 8) % PIDS);
		uintptr_t v = ((uintptr_t)pid << 8) | (uintptr_t)(round & 0xff) | 1;
		void *old;
		if ((seed >> 20) % 3) {
			assert_int_equal(pidindex_put(&x, pid, (void *)v, &old), 0);
			assert_true((uintptr_t)old == model[pid]);
			model[pid] = v;
		} else {
			assert_true((uintptr_t)pidindex_take(&x, pid) == model[pid]);
			model[pid] = 0;
		}
		if (round % 500 == 0)
			check_pidindex(&x, model);
	}
	check_pidindex(&x, model);
	size_t odd = 0;
	for (pid_t p = 1; p < PIDS; p += 2)
		odd += model[p] != 0;
	assert_int_equal(pidindex_filter(&x, keep_even, model), odd);
	check_pidindex(&x, model);
	pidindex_release(&x);
	assert_int_equal(x.n, 0);
	assert_null(pidindex_get(&x, 2));
}

/* Blocks are 8-byte aligned, disjoint and keep their bytes while later ones take new chunks
 * (a block larger than ARENA_CHUNK_MAX too); a reset hands out the kept chunk's space again. */
static void test_arena(void **state)
{
	(void)state;
	struct arena a;
	enum { N = 20000 };
	static unsigned char *blk[N];
	arena_init(&a);
	for (int i = 0; i < N; i++) {
		size_t n = (size_t)(i % 97) * 8 + (size_t)(i % 5);
		blk[i] = arena_alloc(&a, n);
		assert_non_null(blk[i]);
		assert_int_equal((uintptr_t)blk[i] % 8, 0);
		memset(blk[i], i & 0xff, n);
		assert_true(i == 0 || blk[i] != blk[i - 1]); /* n = 0 too: distinct */
	}
	unsigned char *big = arena_alloc(&a, ARENA_CHUNK_MAX + 1);
	assert_non_null(big);
	memset(big, 0xab, ARENA_CHUNK_MAX + 1);
	for (int i = 0; i < N; i++)
		for (size_t j = 0; j < (size_t)(i % 97) * 8 + (size_t)(i % 5); j++)
			assert_int_equal(blk[i][j], i & 0xff);
	arena_reset(&a);
	assert_ptr_equal(arena_alloc(&a, 16), big); /* the newest chunk, from its start */
	errno = 0;
	assert_null(arena_alloc(&a, SIZE_MAX - 4));
	assert_int_equal(errno, ENOMEM);
	arena_release(&a);
	arena_release(&a); /* released: empty, and releasing again is harmless */
	assert_null(a.chunks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grow),
		cmocka_unit_test(test_grow_overflow),
		cmocka_unit_test(test_grow_typed),
		cmocka_unit_test(test_grow_zeroed),
		cmocka_unit_test(test_hashtab_many),
		cmocka_unit_test(test_hashtab_collisions),
		cmocka_unit_test(test_hashtab_edges),
		cmocka_unit_test(test_hashtab_clear),
		cmocka_unit_test(test_hashtab_find_id),
		cmocka_unit_test(test_upper_bound),
		cmocka_unit_test(test_partition_point),
		cmocka_unit_test(test_cmp3),
		cmocka_unit_test(test_file_id),
		cmocka_unit_test(test_mono_ns),
		cmocka_unit_test(test_wall_ns),
		cmocka_unit_test(test_pidindex),
		cmocka_unit_test(test_arena),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
