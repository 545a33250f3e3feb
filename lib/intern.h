/* Interning resolved frames into a profile: mapping, function and location ids, with a cache of
 * (mapping key, address, flags) -> location id so that an address seen again is not resolved
 * again, and of (raw name, file) string pointers -> function id. The ids belong to one profile
 * at a time (intern_sync). It takes plain values (struct resolved_frame) and never resolves:
 * the first step of issue 14's split of the symbolizer (resolve to plain values; intern apart).
 * One thread at a time. */
#ifndef FIRN_INTERN_H
#define FIRN_INTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "resolver.h"

/* A cached location: key (mapping key, address, flags) -> location id, with two small values
 * the owner keeps with it (why the address got it, whether it has a source line). 24 bytes:
 * the table is large and probed at random. */
struct intern_slot {
	uint64_t addr;
	uint32_t key, loc_id;      /* loc_id 0: empty slot */
	uint16_t flags;
	uint8_t reason, lines;
};

/* A cached function: (raw name, file) string pointers -> function id. */
struct intern_fn_slot {
	const char *raw, *file;
	uint64_t id;                /* 0: empty */
};

struct intern {
	struct profile *p;          /* the profile the ids belong to (NULL: none yet) */
	uint64_t max_mapping_id, max_location_id;
	struct intern_slot *slots;
	size_t nslots, n;
	struct intern_fn_slot *fns;
	size_t nfn_slots, nfns;
};

/* Sets up an empty interner (no allocation). */
void intern_init(struct intern *in);
/* Frees its caches (not the profile). */
void intern_release(struct intern *in);
/* Makes p the profile the ids belong to. Returns true when the caches were started afresh: p is
 * another profile, or one re-initialized at the same address that holds fewer mappings or
 * locations than were made in it; the caller then forgets the mapping ids it keeps. */
bool intern_sync(struct intern *in, struct profile *p);
/* Forgets the function ids cached by string pointers, before what they point into is freed. */
void intern_forget_names(struct intern *in);

/* Adds a mapping of the given kind to the profile; its id or -ENOMEM. */
int64_t intern_mapping(struct intern *in, uint64_t start, uint64_t limit, uint64_t offset,
		       const char *name, const char *build_id, enum frame_kind kind);
/* Adds a location at addr in mapping_id with one line per frame (innermost first; none when n
 * is 0), marking the mapping's has_* flags; its id or -ENOMEM. Function ids are cached by the
 * (system_name, file) pointers, which must stay valid until intern_forget_names. */
int64_t intern_location(struct intern *in, uint64_t mapping_id, uint64_t addr,
			const struct resolved_frame *f, int n);

/* The cache slot of (key, addr, flags) with room reserved to fill it: a filled slot (loc_id
 * set) is a hit. NULL on -ENOMEM. Nothing may be added to the cache before the slot is filled
 * (intern_fill). */
struct intern_slot *intern_slot(struct intern *in, uint32_t key, uint64_t addr, uint32_t flags);
/* Fills the empty slot sl with location id (reason and lines as the owner wants them kept);
 * returns id, or the -errno in id (the slot stays empty). */
int64_t intern_fill(struct intern *in, struct intern_slot *sl, uint32_t key, uint64_t addr,
		    uint32_t flags, int64_t id, unsigned reason, bool lines);

#endif
