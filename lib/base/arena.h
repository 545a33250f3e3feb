/* A bump allocator for many small blocks that die together: a profile's samples (their
 * locations, values and labels), which a large profile would otherwise take from malloc one by
 * one (a malloc, a free and a chunk header each, spread over fresh pages). Blocks come from
 * chunks that grow geometrically up to ARENA_CHUNK_MAX; nothing is freed alone: arena_reset
 * rewinds (keeping the newest chunk for reuse), arena_release frees every chunk. */
#ifndef FIRN_ARENA_H
#define FIRN_ARENA_H

#include <stddef.h>

#define ARENA_CHUNK_MIN ((size_t)64 << 10) /* the first chunk */
#define ARENA_CHUNK_MAX ((size_t)4 << 20)  /* chunks stop doubling here (a larger block gets one of its own size) */

struct arena_chunk;

/* No pointer into itself: a struct arena may be copied (moved) as a whole. */
struct arena {
	struct arena_chunk *chunks; /* newest first; owned */
	char *next, *end;           /* the newest chunk's free space */
	size_t grow;                /* the size of the next chunk made */
};

/* An empty arena (a zeroed struct is one too). */
void arena_init(struct arena *a);
/* Frees every chunk; a is empty after (every block of it invalid). */
void arena_release(struct arena *a);
/* Rewinds a: every block of it is invalid after; the newest chunk is kept for the next blocks,
 * the others freed. */
void arena_reset(struct arena *a);
/* A block of n bytes (n may be 0: a distinct non-NULL block), 8-byte aligned, uninitialized,
 * owned by a; NULL with errno ENOMEM. */
void *arena_alloc(struct arena *a, size_t n);

#endif
