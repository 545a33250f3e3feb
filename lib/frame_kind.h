/* What a frame is: decides its folded suffix, its flame graph color and the --no-kernel filter.
 * Its own header so that the resolvers (lib/symbolize.h, lib/resolver.h) can say what their
 * frames are without knowing the profile model. */
#ifndef FIRN_FRAME_KIND_H
#define FIRN_FRAME_KIND_H

enum frame_kind {
	FRAME_USER = 0,
	FRAME_KERNEL,   /* "_[k]" */
	FRAME_JIT,      /* "_[j]" */
	FRAME_INLINE,   /* "_[i]": a Line of a location that is not its outermost */
};

#endif
