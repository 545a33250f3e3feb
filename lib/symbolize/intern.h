/* Interning resolved frames into a profile: mapping, function and location ids, with a cache of
 * (cache key, address, flags) -> location id so that an address seen again is not resolved
 * again, of the symbolizer's mapping keys -> mapping id, and of (raw name, file) string
 * pointers -> function id. The ids belong to one profile at a time (intern_sync). The
 * symbolizer says where an address is and resolves it into plain values (lib/symbolize/symbolize.h); the
 * interner decides what becomes of them (issue 14's split of the symbolizer). It also counts
 * the outcomes of the lookups, cached or not (intern_stats). One thread at a time. */
#ifndef FIRN_INTERN_H
#define FIRN_INTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hashtab.h"
#include "model/profile.h"
#include "model/resolver.h"
#include "symbolize/symbolize.h"

/* A cached location: key (mapping key, address, flags) -> location id, with two small values
 * the owner keeps with it (why the address got it, whether it has a source line). 24 bytes:
 * the table is large and probed at random. */
struct intern_slot {
	uint64_t addr;
	uint32_t key, loc_id;      /* loc_id 0: not filled yet */
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
	struct intern_slot *locs;   /* the cached locations, in the order they came */
	size_t n, cap_locs;
	struct hashtab loc_index;   /* (key, addr, flags) -> index in locs */
	struct intern_fn_slot *fns; /* the cached functions, in the order they came */
	size_t nfns, cap_fns;
	struct hashtab fn_index;    /* (raw, file) -> index in fns */
	uint64_t *map_ids;          /* symbolizer mapping key -> mapping id (0: none yet) */
	size_t nmap_ids;
	uint64_t names_gen;         /* the symbolizer's symbolizer_names_gen the function cache is of */
	uint64_t counts[SYMBOLIZER_REASONS], with_lines; /* lookups by outcome */
	unsigned last_reason;       /* the outcome of the last lookup (enum symbolizer_reason) */
};

/* Counts of addresses asked for (intern_user, _kernel, _file), by outcome: every call counts,
 * cached or not. */
struct intern_stats {
	uint64_t resolved;      /* a function name was found */
	uint64_t no_process;    /* pid was never added to the symbolizer */
	uint64_t no_mapping;    /* the address is in none of the process's mappings (nor its perf map) */
	uint64_t no_symbol;     /* the file (or kallsyms) was read but has no symbol there */
	uint64_t no_file;       /* the file (or kallsyms) could not be opened or parsed */
	uint64_t no_jit_symbol; /* anonymous (JIT) memory that no perf map entry covers */
	uint64_t with_lines;    /* of resolved: with a source file and line from DWARF */
	uint64_t cached_locations; /* held now */
};

/* Sets up an empty interner (no allocation). */
void intern_init(struct intern *in);
/* Frees its caches (not the profile). */
void intern_release(struct intern *in);
/* Makes p the profile the ids belong to. Returns true when the caches were started afresh: p is
 * another profile, or one re-initialized at the same address that holds fewer mappings or
 * locations than were made in it (the mapping ids of the symbolizer's keys go too). */
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

/* The location id in p of a user address of pid, resolved by s unless cached (adding mapping,
 * function and location entries to p), or -ENOMEM. The same (symbolizer mapping, address,
 * is_return_address) gives the same id. is_return_address: addr is a return address (a
 * caller's frame), so the symbol is looked up at addr - 1; the location keeps addr. */
int64_t intern_user(struct intern *in, struct symbolizer *s, struct profile *p, pid_t pid,
		    uint64_t addr, bool is_return_address);
/* The same for ELF virtual address vaddr of the file at path (no process needed): the location
 * is in a mapping named path, with address vaddr. */
int64_t intern_file(struct intern *in, struct symbolizer *s, struct profile *p, const char *path,
		    uint64_t vaddr, bool is_return_address);
/* The same for a kernel address: core kernel functions are in mapping "[kernel.kallsyms]",
 * module functions in a mapping "[MODULE]" (BPF programs: "[bpf]"). */
int64_t intern_kernel(struct intern *in, struct symbolizer *s, struct profile *p, uint64_t addr,
		      bool is_return_address);
void intern_stats(const struct intern *in, struct intern_stats *st);

/* The cache slot of (key, addr, flags) with room reserved to fill it: a filled slot (loc_id
 * set) is a hit. NULL on -ENOMEM. Nothing may be added to the cache before the slot is filled
 * (intern_fill). */
struct intern_slot *intern_slot(struct intern *in, uint32_t key, uint64_t addr, uint32_t flags);
/* Fills the empty slot sl with location id (reason and lines as the owner wants them kept);
 * returns id, or the -errno in id (the slot stays empty). */
int64_t intern_fill(struct intern *in, struct intern_slot *sl, uint32_t key, uint64_t addr,
		    uint32_t flags, int64_t id, unsigned reason, bool lines);

#endif
