/* A compiled Java frame expanded into the methods its nmethod inlined at a pc, innermost first,
 * each with its bytecode index: the PcDesc for the pc (hotspot_pcdesc_find), its ScopeDesc chain
 * (hotspot_scopes_decode), each scope's method from the nmethod's metadata table. Read from a
 * live JVM through a struct hotspot_mem, with JDK 17's nmethod layout (up to JDK 22: the scopes,
 * PcDescs and metadata as offsets from the nmethod and CompiledMethod::_scopes_data_begin) or
 * JDK 25's (the metadata after the relocations in CodeBlob::_mutable_data, the PcDescs then the
 * scopes in nmethod::_immutable_data); tables with neither's rows: -EOPNOTSUPP (the caller
 * names the outer method alone). The process is outside input: the sections are bounded
 * by each other and by HS_INLINE_SECTION_MAX, the nmethod must still hold the Method* and compile
 * id the walker saw, before and after the sections are read (-ESTALE otherwise: a frame is never
 * given another nmethod's methods). */
#ifndef FIRN_HOTSPOT_INLINE_H
#define FIRN_HOTSPOT_INLINE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "runtimes/hotspot_structs.h"

#define HS_INLINE_SECTION_MAX (256 * 1024) /* bytes of PcDescs or scopes read at most */
#define HS_INLINE_MAX 16                   /* scopes kept: inlining deeper than this is refused */

/* One method of an expanded frame: its Method* and the bci in it (-1: its entry). */
struct hotspot_inlined {
	uint64_t method;
	int32_t bci;
};

/* The nmethod a compiled frame ran: its address, the Method* and compile id it had when the
 * walker met it. */
struct hotspot_nmethod_ref {
	uint64_t nmethod, method;
	int32_t compile_id;
};

/* Expands the frame at pc (a return address, or the sampled pc) of the nmethod nm in process
 * pid into out (max entries), innermost first, the outermost nm->method. Returns how many
 * (1..max); -EOPNOTSUPP when hs lacks the rows of the nmethod's sections; -ESTALE when the
 * nmethod no longer holds nm's Method* or compile id, or the outermost scope is not its method;
 * -ENOENT when no PcDesc with scopes covers pc; -EFAULT when memory could not be read; -EINVAL
 * for sections out of order or over HS_INLINE_SECTION_MAX, a pc outside the code, scopes that
 * do not decode or deeper than max, a method index outside the metadata; -ENOMEM. */
int hotspot_inline_expand(const struct hotspot_structs *hs, const struct hotspot_mem *mem,
			  pid_t pid, const struct hotspot_nmethod_ref *nm, uint64_t pc,
			  struct hotspot_inlined *out, size_t max);

/* The pc offsets, from the nmethod nm (of process pid), of its PcDescs inside its code (those
 * without scopes too: a pc before one is not another's), into out (max at most, ascending: the
 * first max of them), for expanding each while the process lives. Returns how many (0..max);
 * -EINVAL for PcDescs out of order; -EOPNOTSUPP, -ESTALE, -EFAULT, -EINVAL, -ENOMEM as
 * hotspot_inline_expand. */
int hotspot_inline_pcs(const struct hotspot_structs *hs, const struct hotspot_mem *mem, pid_t pid,
		       const struct hotspot_nmethod_ref *nm, uint32_t *out, size_t max);

/* Which of the n PcDescs at offsets pcs (ascending, as hotspot_inline_pcs lists them) holds the
 * scopes of a frame at pc offset pcoff of the same nmethod: the first at or after it, as
 * HotSpot's pc_desc_near gives a sampled pc (AsyncGetCallTrace, JFR) and pc_desc_at a return
 * address (its own PcDesc). Returns its index; -ENOENT when none is at or after pcoff (past the
 * last, or past the first n of a longer list: not known). */
int hotspot_inline_near(const uint32_t *pcs, size_t n, uint32_t pcoff);

#endif
