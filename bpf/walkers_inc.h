/* The walkers' headers, included in FIRN_WALKERS' order (bpf/walkers.h): the row's header by its
 * place in the list, so a new row needs no line here. No include guard: user space includes it
 * once through walkers.h (the tags and structs), bpf/profile.bpf.c once more where the walkers'
 * BPF code goes (after the helpers they use: walker_proc, walker_count, read_stack, the ring
 * buffer, the stack stores; before the unwinder's frame loop, which calls their hooks). */
#define FIRN_W_HEADER(n, tag, header, ...) header,
#define FIRN_W_NTH(i, ...) FIRN_W_NTH_##i(__VA_ARGS__)
#define FIRN_W_NTH_0(a, ...) a
#define FIRN_W_NTH_1(a, b, ...) b
#define FIRN_W_NTH_2(a, b, c, ...) c
#define FIRN_W_NTH_3(a, b, c, d, ...) d
#define FIRN_W_NTH_4(a, b, c, d, e, ...) e
#define FIRN_W_NTH_5(a, b, c, d, e, f, ...) f
#define FIRN_W_NTH_6(a, b, c, d, e, f, g, ...) g
#define FIRN_W_NTH_7(a, b, c, d, e, f, g, h, ...) h
#define FIRN_WALKER_HEADER(i) FIRN_W_NTH(i, FIRN_WALKERS(FIRN_W_HEADER) "firn.h")

#if FIRN_NWALKERS_LISTED > 8
#error "bpf/walkers_inc.h: more than 8 walkers: add lines below"
#endif
#if FIRN_NWALKERS_LISTED > 0
#include FIRN_WALKER_HEADER(0)
#endif
#if FIRN_NWALKERS_LISTED > 1
#include FIRN_WALKER_HEADER(1)
#endif
#if FIRN_NWALKERS_LISTED > 2
#include FIRN_WALKER_HEADER(2)
#endif
#if FIRN_NWALKERS_LISTED > 3
#include FIRN_WALKER_HEADER(3)
#endif
#if FIRN_NWALKERS_LISTED > 4
#include FIRN_WALKER_HEADER(4)
#endif
#if FIRN_NWALKERS_LISTED > 5
#include FIRN_WALKER_HEADER(5)
#endif
#if FIRN_NWALKERS_LISTED > 6
#include FIRN_WALKER_HEADER(6)
#endif
#if FIRN_NWALKERS_LISTED > 7
#include FIRN_WALKER_HEADER(7)
#endif

_Static_assert((0 FIRN_WALKERS(FIRN_W_SUM)) == (0 FIRN_WALKERS(FIRN_W_OR)),
	       "bpf/walkers.h: two walkers share a frame tag");
_Static_assert(!((0 FIRN_WALKERS(FIRN_W_OR)) & (FIRN_FRAME_KINDS_RESERVED | 1u |
						 ~((1u << FIRN_FRAME_KINDS) - 1))),
	       "bpf/walkers.h: a walker's frame tag is 0, reserved or past FIRN_FRAME_KINDS");
