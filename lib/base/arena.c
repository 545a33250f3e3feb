#include "base/arena.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#define ARENA_REDZONE 8 /* between blocks, poisoned: ASan sees an overrun into the next block */
#define POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define ARENA_REDZONE 0
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

struct arena_chunk {
	struct arena_chunk *prev; /* the chunk made before */
	size_t size;              /* of data[] */
	_Alignas(16) char data[];
};

void arena_init(struct arena *a)
{
	memset(a, 0, sizeof(*a));
}

/* Frees the chunks from c on, older ones included. */
static void chunks_free(struct arena_chunk *c)
{
	while (c) {
		struct arena_chunk *prev = c->prev;
		UNPOISON(c->data, c->size);
		free(c);
		c = prev;
	}
}

void arena_release(struct arena *a)
{
	chunks_free(a->chunks);
	memset(a, 0, sizeof(*a));
}

/* Points a's free space at all of chunk c, poisoned until handed out. */
static void chunk_use(struct arena *a, struct arena_chunk *c)
{
	a->next = c->data;
	a->end = c->data + c->size;
	POISON(c->data, c->size);
}

void arena_reset(struct arena *a)
{
	struct arena_chunk *c = a->chunks;

	if (!c)
		return;
	chunks_free(c->prev);
	c->prev = NULL;
	chunk_use(a, c);
}

/* Makes a chunk for a block of need bytes the current one; 0 or -ENOMEM. */
static int chunk_add(struct arena *a, size_t need)
{
	size_t size = a->grow ? a->grow : ARENA_CHUNK_MIN;
	struct arena_chunk *c;

	if (size < need)
		size = need;
	if (size > SIZE_MAX - sizeof(*c) || !(c = malloc(sizeof(*c) + size)))
		return -ENOMEM;
	c->size = size;
	c->prev = a->chunks;
	a->chunks = c;
	if (a->grow < ARENA_CHUNK_MAX)
		a->grow = (a->grow ? a->grow : ARENA_CHUNK_MIN) * 2;
	chunk_use(a, c);
	return 0;
}

/* Blocks carved from the newest chunk: a pointer bump instead of a malloc each. */
void *arena_alloc(struct arena *a, size_t n)
{
	if (n > SIZE_MAX - 16 - ARENA_REDZONE) {
		errno = ENOMEM;
		return NULL;
	}
	size_t take = ((n ? n : 1) + 7) / 8 * 8;
	if ((size_t)(a->end - a->next) < take + ARENA_REDZONE && chunk_add(a, take + ARENA_REDZONE)) {
		errno = ENOMEM;
		return NULL;
	}
	char *p = a->next;
	a->next += take + ARENA_REDZONE;
	UNPOISON(p, n);
	return p;
}
