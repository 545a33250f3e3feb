/* ---- Java frames (FIRN_FRAME_KIND_JAVA, bpf/hotspot.bpf.h) ----
 * What the HotSpot walker and user space (lib/runtimes/hotspot_runtime.c) share. A Java frame is
 * FIRN_FRAME(FIRN_FRAME_KIND_JAVA, payload): bits 0-31 the method's (or stub's) id, bits 32-33 its tier
 * (FIRN_HS_*), bits 35-50 the bytecode index of an interpreted frame, or a compiled frame's pc
 * as an offset from its nmethod (FIRN_HS_NO_BCI: unknown, or an offset past 16 bits). Each id
 * stands for one Method* of one process as it was (its ConstMethod the same), a compiled frame's
 * for one nmethod (its address, Method* and compile id the same), and is
 * announced once with struct firn_hotspot_method_event, so user space reads its names while the
 * process lives. Included by bpf/firn.h's users after it (the types of vmlinux.h or linux/types.h). */
#ifndef FIRN_HOTSPOT_H
#define FIRN_HOTSPOT_H

#define FIRN_EV_HS_METHOD FIRN_EV_ANNOUNCE(FIRN_FRAME_KIND_JAVA) /* struct firn_hotspot_method_event */

#define FIRN_HS_INTERPRETED 1
#define FIRN_HS_COMPILED 2
#define FIRN_HS_STUB_CODE 3 /* a stub or adapter: its id stands for the CodeBlob, named by its _name */
#define FIRN_HS_TIER_SHIFT 32
#define FIRN_HS_BCI_SHIFT 35
#define FIRN_HS_NO_BCI 0xffffULL
#define FIRN_HS_PAYLOAD(id, tier, bci) \
	((__u64)(__u32)(id) | ((__u64)((tier) & 3) << FIRN_HS_TIER_SHIFT) | \
	 ((__u64)((bci) & FIRN_HS_NO_BCI) << FIRN_HS_BCI_SHIFT))
#define FIRN_HS_ID(payload) ((__u32)(payload))
#define FIRN_HS_TIER(payload) ((unsigned)(((payload) >> FIRN_HS_TIER_SHIFT) & 3))
#define FIRN_HS_BCI(payload) (((payload) >> FIRN_HS_BCI_SHIFT) & FIRN_HS_NO_BCI)

#define FIRN_HS_HEAPS 4 /* code heaps: non-nmethods, profiled, non-profiled (one unsegmented) */

/* What the walker needs of one JVM process (walker_procs, by {FIRN_FRAME_KIND_JAVA, pid}), from
 * its VMStructs (lib/runtimes/hotspot_structs.h) and code heaps, checked by user space: offsets
 * below 4096, frame slots in words from rbp. */
struct firn_hotspot_proc {
	__u64 lo, hi; /* the CodeCache's bounds */
	struct { __u64 low, high, segmap; __u32 log2_segment, pad; } heap[FIRN_HS_HEAPS];
	__u32 size_heapblock, off_heapblock_used;
	__u32 off_blob_size, off_blob_frame_size, off_blob_name, off_blob_kind;
	__u32 kind_nmethod;     /* CodeBlobKind::Nmethod (JDK 23+); 0: nmethods told by name */
	__u32 off_nm_method, off_nm_compile_id, off_method_const, off_cmethod_constants;
	__u32 off_cmethod_code_size;
	__u32 size_cmethod;     /* the bytecodes follow the ConstMethod */
	__s32 frame_method, frame_bcp, frame_sender_sp;
	__u32 epoch;            /* this description's number: ids of another are not reused */
};

/* A new method id (FIRN_EV_HS_METHOD): the Method* and the ConstMethod* it had; for a stub
 * (cmethod 0) the CodeBlob's address in method; for a compiled frame's, its nmethod and the
 * nmethod's compile id (nmethod 0: an interpreted frame's). */
struct firn_hotspot_method_event {
	__u32 type, pid;
	__u64 method, cmethod, id;
	__u64 nmethod;
	__s32 compile_id;
	__u32 pad;
};

/* The methods met (java_methods): by process description and Method* (a compiled frame's: by
 * its nmethod, its compile id in the value). */
struct firn_hotspot_method_key {
	__u32 pid, epoch;
	__u64 method;
};
struct firn_hotspot_method_val {
	__u64 cmethod, id;
	__s32 compile_id;
	__u32 pad;
};

enum firn_hotspot_stat {
	FIRN_HS_FRAMES = 0,   /* frames whose pc is in the CodeCache */
	FIRN_HS_INTERP,       /* of them, interpreted Java frames (Method* and bcp checked) */
	FIRN_HS_NMETHOD,      /* compiled Java frames (an nmethod's Method*), stepped by frame size */
	FIRN_HS_STUB,         /* stubs and adapters: named by their blob, left to the native step */
	FIRN_HS_NO_BLOB,      /* no CodeBlob found for the pc (unreadable, free, out of bounds) */
	FIRN_HS_REFUSED,      /* a Method* that did not check (its ConstMethod, a bcp outside it) */
	FIRN_HS_METHODS,      /* methods given an id (announced) */
	FIRN_HS_METHODS_LOST, /* ... whose announcement did not fit in the ring buffer */
	FIRN_HS_NR,
};
_Static_assert(sizeof(struct firn_hotspot_proc) <= FIRN_WALKER_PROC_SIZE, "walker_procs value");
_Static_assert(FIRN_HS_NR <= FIRN_WALKER_STATS, "walker_stats");

#endif
