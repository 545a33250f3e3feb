/* libfirn-alloc.so: an allocation sampler preloaded into a recorded command (firn record -e
 * alloc sets LD_PRELOAD). It interposes the malloc family, samples allocations by bytes with the
 * Poisson rule (alloc/alloc_poisson.h; mean FIRN_ALLOC_RATE bytes, default 512 KiB) and fires
 * the otel_memory USDT probes only for what it sampled:
 *   otel_memory:alloc(ptr, size, weighted_bytes)  a sampled allocation
 *   otel_memory:free(ptr)                         the free (or realloc) of a sampled pointer
 * An unsampled allocation costs a thread-local subtraction; an unsampled free one lookup in a
 * lock-free set of the sampled live pointers (skipped while the set is empty). realloc is a free
 * of the old pointer and an allocation of the new one. The real functions are found with
 * dlsym(RTLD_NEXT); dlsym's own calloc during that lookup is served from a static buffer. */
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>
#include <unistd.h>

#include "alloc_poisson.h"

#define EXPORT __attribute__((visibility("default")))
#define TLS __thread __attribute__((tls_model("initial-exec")))

/* The real functions (RTLD_NEXT). */
static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);
static void *(*real_valloc)(size_t);

static uint64_t rate = ALLOC_RATE_DEFAULT;
static atomic_int resolving; /* 1 while dlsym runs: its allocations come from boot */
static _Alignas(16) char boot[8192];
static atomic_size_t boot_used;

/* Per thread: bytes to the next sample, the generator's state (0: not started). */
static TLS int64_t left;
static TLS uint64_t rng;
/* Per thread: > 0 while a wrapper other than malloc's and free's runs the real function. An
 * allocator whose calloc or realloc calls malloc (or free) through the PLT reaches a wrapper
 * again: that inner call is part of the outer one, which alone counts the allocation (else once
 * more, under the same pointer). malloc and free only read it: they cost no more. */
static TLS unsigned nested;

/* ---- the set of sampled live pointers: open addressing, CAS on each slot ---- */
#define SET_BITS 20
#define SET_SIZE (1u << SET_BITS)
#define SET_PROBES 64
#define SET_GONE ((uintptr_t)1) /* a deleted slot (no pointer is 1) */
static _Atomic uintptr_t set[SET_SIZE];
static atomic_long set_live; /* pointers in the set: 0 lets frees skip the lookup */

/* The first slot of p's probe sequence. */
static inline uint32_t set_slot(uintptr_t p)
{
	return (uint32_t)(((uint64_t)p * 0x9E3779B97F4A7C15ULL) >> (64 - SET_BITS));
}

/* Adds p; false when its probe sequence is full (p is then not followed to its free). */
static bool set_add(uintptr_t p)
{
	uint32_t s = set_slot(p);

	for (int i = 0; i < SET_PROBES; i++, s = (s + 1) & (SET_SIZE - 1)) {
		uintptr_t cur = atomic_load_explicit(&set[s], memory_order_relaxed);
		if ((cur == 0 || cur == SET_GONE) &&
		    atomic_compare_exchange_strong(&set[s], &cur, p)) {
			atomic_fetch_add_explicit(&set_live, 1, memory_order_relaxed);
			return true;
		}
	}
	return false;
}

/* Removes p; whether it was there (a sampled pointer). */
static bool set_take(uintptr_t p)
{
	uint32_t s = set_slot(p);

	if (!atomic_load_explicit(&set_live, memory_order_relaxed))
		return false;
	for (int i = 0; i < SET_PROBES; i++, s = (s + 1) & (SET_SIZE - 1)) {
		uintptr_t cur = atomic_load_explicit(&set[s], memory_order_relaxed);
		if (cur == 0)
			return false;
		if (cur == p && atomic_compare_exchange_strong(&set[s], &cur, SET_GONE)) {
			atomic_fetch_sub_explicit(&set_live, 1, memory_order_relaxed);
			return true;
		}
	}
	return false;
}

/* ---- bootstrap ---- */

/* dlsym's own allocations while the real functions are looked up: bump from boot. */
static void *boot_alloc(size_t n)
{
	size_t at = atomic_fetch_add(&boot_used, (n + 15) & ~(size_t)15);

	return at + n <= sizeof(boot) ? boot + at : NULL;
}

/* Whether p is one of boot's (never given to the real free). */
static inline bool from_boot(const void *p)
{
	return (const char *)p >= boot && (const char *)p < boot + sizeof(boot);
}

/* Finds the real functions and the rate once: the first call of any wrapper. */
static void resolve(void)
{
	atomic_store(&resolving, 1);
	real_malloc = dlsym(RTLD_NEXT, "malloc");
	real_calloc = dlsym(RTLD_NEXT, "calloc");
	real_realloc = dlsym(RTLD_NEXT, "realloc");
	real_free = dlsym(RTLD_NEXT, "free");
	real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
	real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
	real_memalign = dlsym(RTLD_NEXT, "memalign");
	real_valloc = dlsym(RTLD_NEXT, "valloc");
	const char *r = getenv("FIRN_ALLOC_RATE");
	char *end;
	unsigned long long v = r ? strtoull(r, &end, 10) : 0;
	if (r && *r && !*end && v >= 1)
		rate = v;
	atomic_store(&resolving, 0);
}

__attribute__((constructor)) static void firn_alloc_init(void)
{
	if (!real_malloc)
		resolve();
}

/* ---- sampling ---- */

/* A sampled allocation: one function, so each probe has one site whichever wrapper sampled it
 * (one uprobe each: attached at one instant, so no wrapper's allocations are seen for longer
 * than another's). Its frame is the leaf of the stacks, its caller the wrapper. */
__attribute__((noinline)) static void sampled_alloc(void *p, size_t size)
{
	uint64_t w = alloc_poisson_weight(size, rate);

	set_add((uintptr_t)p);
	DTRACE_PROBE3(otel_memory, alloc, p, size, w);
}

/* The free of a sampled pointer (one site, as sampled_alloc's). */
__attribute__((noinline)) static void sampled_free(void *p)
{
	DTRACE_PROBE1(otel_memory, free, p);
}

/* Samples an allocation of size bytes at p by the Poisson rule (the thread's countdown starts
 * at its first allocation); the fast path is inlined in each wrapper. */
static inline __attribute__((always_inline)) void note_alloc(void *p, size_t size)
{
	if (!p || nested)
		return;
	if (__builtin_expect((left -= (int64_t)size) > 0, 1))
		return;
	if (!rng) {
		rng = ((uint64_t)(uintptr_t)&left * 0x9E3779B97F4A7C15ULL) ^ (uint64_t)gettid() ^ 1;
		left = alloc_poisson_next(&rng, rate) - (int64_t)size;
		if (left > 0)
			return;
	}
	left = alloc_poisson_next(&rng, rate); /* memoryless: from the end of this one */
	sampled_alloc(p, size);
}

/* Fires the free probe when p was sampled. */
static inline __attribute__((always_inline)) void note_free(void *p)
{
	if (p && !nested && set_take((uintptr_t)p))
		sampled_free(p);
}

/* ---- the interposed functions ---- */

EXPORT void *malloc(size_t n)
{
	if (__builtin_expect(!real_malloc, 0)) {
		if (atomic_load(&resolving))
			return boot_alloc(n);
		resolve();
	}
	void *p = real_malloc(n); /* reads nested (note_alloc) but sets it not: the hot path */
	note_alloc(p, n);
	return p;
}

EXPORT void *calloc(size_t n, size_t m)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, m, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	if (__builtin_expect(!real_calloc, 0)) {
		if (atomic_load(&resolving))
			return boot_alloc(bytes); /* static: zeroed */
		resolve();
	}
	void *p;
	nested++;
	p = real_calloc(n, m);
	nested--;
	note_alloc(p, bytes);
	return p;
}

EXPORT void free(void *p)
{
	if (!p || from_boot(p))
		return;
	note_free(p);
	if (__builtin_expect(!real_free, 0))
		resolve();
	real_free(p);
}

/* realloc: the old pointer's free, the new one's allocation (a sample by its new size). */
EXPORT void *realloc(void *p, size_t n)
{
	if (__builtin_expect(!real_realloc, 0))
		resolve();
	if (p && from_boot(p)) { /* dlsym's buffer grown: copy out of boot */
		void *q = malloc(n);
		if (q)
			memcpy(q, p, n < (size_t)(boot + sizeof(boot) - (char *)p) ?
				     n : (size_t)(boot + sizeof(boot) - (char *)p));
		return q;
	}
	void *q;
	nested++;
	q = real_realloc(p, n);
	nested--;
	if (q || !n) {
		note_free(p);
		note_alloc(q, n);
	}
	return q;
}

EXPORT void *reallocarray(void *p, size_t n, size_t m)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, m, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, bytes);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	if (__builtin_expect(!real_posix_memalign, 0))
		resolve();
	int err;
	nested++;
	err = real_posix_memalign(out, align, n);
	nested--;
	if (!err)
		note_alloc(*out, n);
	return err;
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
	if (__builtin_expect(!real_aligned_alloc, 0))
		resolve();
	void *p;
	nested++;
	p = real_aligned_alloc(align, n);
	nested--;
	note_alloc(p, n);
	return p;
}

EXPORT void *memalign(size_t align, size_t n)
{
	if (__builtin_expect(!real_memalign, 0))
		resolve();
	void *p;
	nested++;
	p = real_memalign(align, n);
	nested--;
	note_alloc(p, n);
	return p;
}

EXPORT void *valloc(size_t n)
{
	if (__builtin_expect(!real_valloc, 0))
		resolve();
	void *p;
	nested++;
	p = real_valloc(n);
	nested--;
	note_alloc(p, n);
	return p;
}
