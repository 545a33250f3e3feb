/* The Java frame walker: HotSpot's code lives in its CodeCache, where the native unwinder has no
 * tables, and its compiled code keeps no frame pointer. For each frame of a process in
 * walker_procs (tag FIRN_FRAME_KIND_JAVA) whose pc is in the CodeCache, firn_hotspot_frame finds
 * the CodeBlob holding the pc as CodeHeap::find_start does (the segment map, hops bounded) and:
 *   - the interpreter ("Interpreter"): the frame's Method* and bcp from their slots below rbp,
 *     checked (the bcp inside the method's bytecodes), emitted as the method with its bytecode
 *     index; the caller by rbp (return pc at rbp + 8, its sp the frame's sender sp slot);
 *   - an nmethod (C1, C2, a native wrapper): its Method*, checked (a ConstMethod); the caller by
 *     the blob's frame size (return pc at sp + size - 8, the caller's rbp below it: frame_x86);
 *   - a stub or adapter: named by its CodeBlob (an id for the blob, user space reads its _name:
 *     "StubRoutines (1)"), the caller left to the native step (by frame pointer).
 * A method gets an id once per process description (java_methods, by Method* and checked by its
 * ConstMethod*: a Method* reused by another method gets a new id) and is announced to user space,
 * which reads its names while the process lives (lib/runtimes/hotspot_runtime.c). What does not
 * check stays the native frame it was. Every value read is the process's own (stack slots through
 * the stack window, the rest bpf_probe_read_user). Needs from the includer: the events ring
 * buffer, firn_read_stack, window_remote, wake_flags, struct firn_unwind_state, walker_*. */
#ifndef FIRN_HOTSPOT_BPF_H
#define FIRN_HOTSPOT_BPF_H

#include "hotspot.h"

#ifdef __bpf__

/* The methods given an id, by (pid, description, Method*): LRU, an evicted one is announced again. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, struct firn_hotspot_method_key);
	__type(value, struct firn_hotspot_method_val);
} java_methods SEC(".maps");

__u64 hs_next_id = 0; /* the last id given (ids start at 1) */

#define FIRN_HS_MAX_HOPS 16 /* segment map hops (254 segments each: 512 KiB blobs at 128 B) */
#define FIRN_HS_NAME_INTERP 0x6572707265746e49ULL  /* "Interpre" */
#define FIRN_HS_NAME_NMETHOD 0x00646f6874656d6eULL /* "nmethod\0" */
#define FIRN_HS_NAME_NATIVE 0x6e2065766974616eULL  /* "native n" (native nmethod) */

/* The walk of the sample on this CPU: the process's values (copied once per sample), and
 * firn_hotspot_frame's scratch, kept off its stack (the frame loop's chain of calls has little
 * of its 512 bytes left). */
struct firn_hs_walk {
	struct firn_hotspot_proc p;
	__u32 pid, active;
	__u64 low, segmap, seg, blob, name, method, cmethod, cpool, bcp, ret, nbp, nsp;
	__u64 nmethod; /* a compiled frame's (its id is the nmethod's), else 0 */
	__s32 size, frame_size, compile_id, pad2;
	__u16 code_size;
	__u8 hop, used, kind, pad[3];
	struct firn_hotspot_method_key key;
	struct firn_hotspot_method_val val;
	/* blobs HotSpot never frees, kept across samples on this CPU: the interpreter (0) and the
	 * last stub met (1, with its id), by process description */
	struct { __u64 blob, size, id; __u32 pid, epoch; } kept[2];
	__u32 hit; /* the frame's blob came from kept (1 + its slot), 0 from the segment map */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct firn_hs_walk);
} hs_walk SEC(".maps");

static __always_inline void count_hs(__u32 reason)
{
	walker_count(FIRN_FRAME_KIND_JAVA, reason);
}

/* Starts the walk of a sample of pid: whether pid runs a JVM the walker was told about. */
static __always_inline void hotspot_begin(__u32 pid)
{
	__u32 zero = 0;
	struct firn_hs_walk *w = bpf_map_lookup_elem(&hs_walk, &zero);
	struct firn_hotspot_proc *p = pid && WALKER_ON(FIRN_FRAME_KIND_JAVA) ?
				      walker_proc(FIRN_FRAME_KIND_JAVA, pid) : NULL;

	if (!w)
		return;
	w->active = p != NULL;
	w->pid = pid;
	if (p)
		w->p = *p;
}

/* Reads len bytes of the process at addr (false: unreadable, or not a user address). */
static __always_inline bool hs_read(void *dst, __u32 len, __u64 addr)
{
	return addr >= 4096 && addr < (1ULL << 47) && !bpf_probe_read_user(dst, len, (void *)addr);
}

/* The CodeBlob holding pc into w->blob, back through its heap's segment map; 0: none. A global
 * function (w NULL-checked as the verifier asks), verified once: its paths do not multiply the
 * caller's. */
__attribute__((noinline)) int firn_hs_find_blob(struct firn_hs_walk *w, __u64 pc)
{
	if (!w)
		return 0;
	w->segmap = 0;
	for (int i = 0; i < FIRN_HS_HEAPS; i++)
		if (pc >= w->p.heap[i].low && pc < w->p.heap[i].high) {
			w->low = w->p.heap[i].low;
			w->segmap = w->p.heap[i].segmap;
			w->seg = (pc - w->low) >> (w->p.heap[i].log2_segment & 31);
			w->kind = w->p.heap[i].log2_segment & 31;
		}
	if (!w->segmap)
		return false;
	w->hop = 0xff;
	for (int i = 0; i < FIRN_HS_MAX_HOPS; i++) {
		if (bpf_probe_read_user(&w->hop, 1, (void *)(w->segmap + w->seg)) || w->hop == 0xff ||
		    w->hop > w->seg)
			return false;
		if (!w->hop)
			break;
		w->seg -= w->hop;
	}
	if (w->hop)
		return false;
	w->blob = w->low + (w->seg << w->kind);
	w->used = 0;
	if (!hs_read(&w->used, 1, w->blob + (w->p.off_heapblock_used & 0xfff)) || !w->used)
		return false;
	w->blob += w->p.size_heapblock & 0xfff;
	return hs_read(&w->size, 4, w->blob + (w->p.off_blob_size & 0xfff)) &&
	       pc - w->blob < (__u64)(__u32)w->size && w->size > 0 &&
	       hs_read(&w->frame_size, 4, w->blob + (w->p.off_blob_frame_size & 0xfff)) &&
	       hs_read(&w->name, 8, w->blob + (w->p.off_blob_name & 0xfff)) &&
	       hs_read(&w->name, 8, w->name);
}

/* Whether pc is in a blob kept from an earlier sample (w->blob, w->name set then). */
static __always_inline bool hs_kept(struct firn_hs_walk *w, __u64 pc)
{
	w->hit = 0;
	for (int i = 0; i < 2; i++)
		if (w->kept[i].pid == w->pid && w->kept[i].epoch == w->p.epoch &&
		    pc - w->kept[i].blob < w->kept[i].size) {
			w->blob = w->kept[i].blob;
			w->name = i ? 0 : FIRN_HS_NAME_INTERP;
			w->hit = i + 1;
			return true;
		}
	return false;
}

/* Keeps w->blob (the interpreter, or a stub with its id) for later samples. */
static __always_inline void hs_keep(struct firn_hs_walk *w, int slot, __u64 id)
{
	slot &= 1;
	w->kept[slot].blob = w->blob;
	w->kept[slot].size = (__u32)w->size;
	w->kept[slot].id = id;
	w->kept[slot].pid = w->pid;
	w->kept[slot].epoch = w->p.epoch;
}

/* Whether w->blob is an nmethod: its kind from JDK 23 on, its name before. */
static __always_inline bool hs_is_nmethod(struct firn_hs_walk *w)
{
	if (w->p.kind_nmethod)
		return hs_read(&w->kind, 1, w->blob + (w->p.off_blob_kind & 0xfff)) &&
		       w->kind == w->p.kind_nmethod;
	return w->name == FIRN_HS_NAME_NMETHOD || w->name == FIRN_HS_NAME_NATIVE;
}

/* Whether w->method is a Method (its ConstMethod into w->cmethod, with its constant pool). */
static __always_inline bool hs_check_method(struct firn_hs_walk *w)
{
	w->cmethod = w->cpool = 0;
	return hs_read(&w->cmethod, 8, w->method + (w->p.off_method_const & 0xfff)) &&
	       hs_read(&w->cpool, 8, w->cmethod + (w->p.off_cmethod_constants & 0xfff)) &&
	       w->cpool >= 4096 && w->cpool < (1ULL << 47);
}

/* The id of w->method (its ConstMethod w->cmethod): the one it got when first met with that
 * ConstMethod, else a new one, announced. A global function, as firn_hs_find_blob. */
__attribute__((noinline)) __u64 firn_hs_method_id(struct firn_hs_walk *w)
{
	struct firn_hotspot_method_event *e;

	if (!w)
		return 0;
	w->key.pid = w->pid, w->key.epoch = w->p.epoch;
	w->key.method = w->nmethod ? w->nmethod : w->method;
	struct firn_hotspot_method_val *v = bpf_map_lookup_elem(&java_methods, &w->key);
	if (v && v->cmethod == w->cmethod && v->compile_id == w->compile_id)
		return v->id;
	w->val.cmethod = w->cmethod;
	w->val.compile_id = w->compile_id;
	w->val.id = __sync_fetch_and_add(&hs_next_id, 1) + 1;
	bpf_map_update_elem(&java_methods, &w->key, &w->val, BPF_ANY);
	count_hs(FIRN_HS_METHODS);
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_hs(FIRN_HS_METHODS_LOST);
		return w->val.id;
	}
	e->type = FIRN_EV_HS_METHOD;
	e->pid = w->pid;
	e->method = w->method;
	e->cmethod = w->cmethod;
	e->id = w->val.id;
	e->nmethod = w->nmethod;
	e->compile_id = w->compile_id;
	e->pad = 0;
	bpf_ringbuf_submit(e, wake_flags(false)); /* profile.bpf.c */
	return w->val.id;
}

/* An interpreted frame at rbp fp: its method and bytecode index into *emit, u stepped by rbp.
 * 0 when its slots do not check (a frame being pushed: left to the native walk). */
static __always_inline int hs_interpreted(struct firn_hs_walk *w, struct firn_unwind_state *u,
					  __u64 *emit)
{
	__u64 fp = u->bp, bci = FIRN_HS_NO_BCI;

	w->method = w->bcp = w->ret = w->nbp = w->nsp = w->nmethod = 0;
	w->code_size = 0;
	w->compile_id = 0;
	if (fp < 4096 || firn_read_stack(&w->method, fp + (__s64)w->p.frame_method * 8) ||
	    firn_read_stack(&w->bcp, fp + (__s64)w->p.frame_bcp * 8) || !hs_check_method(w) ||
	    !hs_read(&w->code_size, 2, w->cmethod + (w->p.off_cmethod_code_size & 0xfff)))
		goto refused;
	if (w->bcp) { /* 0 in a native method's frame */
		bci = w->bcp - (w->cmethod + (w->p.size_cmethod & 0xfff));
		if (bci >= w->code_size)
			goto refused;
	}
	if (firn_read_stack(&w->ret, fp + 8) || firn_read_stack(&w->nbp, fp) ||
	    firn_read_stack(&w->nsp, fp + (__s64)w->p.frame_sender_sp * 8))
		goto refused;
	*emit = FIRN_FRAME(FIRN_FRAME_KIND_JAVA, FIRN_HS_PAYLOAD(firn_hs_method_id(w), FIRN_HS_INTERPRETED, bci));
	count_hs(FIRN_HS_INTERP);
	u->ip = w->ret;
	u->bp = w->nbp;
	u->sp = w->nsp > fp ? w->nsp : fp + 16;
	u->exact = 0;
	u->stop = w->ret ? FIRN_UNW_NR : FIRN_UNW_COMPLETE;
	return 2;
refused:
	count_hs(FIRN_HS_REFUSED);
	return 0;
}

/* Whether ret can be a return address: in the CodeCache (the interpreter pushes its own and
 * jumps), or after a call (rel32, or through a register or memory) elsewhere. */
static __always_inline bool hs_return_address(const struct firn_hs_walk *w, __u64 ret)
{
	__u8 b[8];

	if (ret >= w->p.lo && ret < w->p.hi)
		return true;
	if (!hs_read(b, 8, ret - 8))
		return false;
	return b[3] == 0xe8 || (b[6] == 0xff && ((b[7] >> 3) & 7) == 2) ||
	       (b[5] == 0xff && ((b[6] >> 3) & 7) == 2) || (b[2] == 0xff && ((b[3] >> 3) & 7) == 2);
}

/* A compiled frame (w->blob an nmethod) at u: its nmethod's id and pc offset (user space
 * expands the methods it inlined there) into *emit, u stepped by frame size (2), or left to the
 * native step where the sampled pc is in its entry or exit (1). */
static __always_inline int hs_compiled(struct firn_hs_walk *w, struct firn_unwind_state *u,
				       __u64 *emit)
{
	__u64 pcoff = u->ip - w->blob;

	w->method = w->ret = w->nbp = 0;
	w->compile_id = 0;
	if (!hs_read(&w->method, 8, w->blob + (w->p.off_nm_method & 0xfff)) || !hs_check_method(w) ||
	    !hs_read(&w->compile_id, 4, w->blob + (w->p.off_nm_compile_id & 0xfff)) ||
	    w->frame_size < 2 || w->frame_size > 8192) {
		count_hs(FIRN_HS_REFUSED);
		return 0;
	}
	w->nmethod = w->blob;
	w->nsp = u->sp + (__u64)w->frame_size * 8;
	if (firn_read_stack(&w->ret, w->nsp - 8) || firn_read_stack(&w->nbp, w->nsp - 16))
		w->ret = 0;
	if (u->exact && !hs_return_address(w, w->ret))
		w->ret = 0; /* its entry or exit, the frame not made: the native walk goes on */
	*emit = FIRN_FRAME(FIRN_FRAME_KIND_JAVA,
			   FIRN_HS_PAYLOAD(firn_hs_method_id(w), FIRN_HS_COMPILED,
					   pcoff < FIRN_HS_NO_BCI ? pcoff : FIRN_HS_NO_BCI));
	count_hs(FIRN_HS_NMETHOD);
	if (!w->ret)
		return 1;
	u->ip = w->ret;
	u->bp = w->nbp;
	u->sp = w->nsp;
	u->exact = 0;
	u->stop = FIRN_UNW_NR;
	return 2;
}

/* What the frame at u is: 0 not a Java frame (the native walk goes on), 1 *emit is its Java frame
 * (the native step goes on), 2 *emit is its Java frame and u is stepped to its caller. A global
 * function, verified once and not with each state the frame loop's callback is entered with. */
__attribute__((noinline)) int firn_hotspot_frame(struct firn_unwind_state *u, __u64 *emit)
{
	__u32 zero = 0;
	struct firn_hs_walk *w = bpf_map_lookup_elem(&hs_walk, &zero);

	if (!u || !emit || !w || !w->active || u->ip < w->p.lo || u->ip >= w->p.hi || window_remote())
		return 0;
	count_hs(FIRN_HS_FRAMES);
	__u64 pc = u->exact ? u->ip : u->ip - 1, id;
	if (!hs_kept(w, pc) && !firn_hs_find_blob(w, pc)) {
		count_hs(FIRN_HS_NO_BLOB);
		return 0;
	}
	if (w->name == FIRN_HS_NAME_INTERP) {
		if (!w->hit)
			hs_keep(w, 0, 0);
		return hs_interpreted(w, u, emit);
	}
	if (!w->hit && hs_is_nmethod(w))
		return hs_compiled(w, u, emit);
	count_hs(FIRN_HS_STUB);
	if (w->hit) {
		id = w->kept[1].id;
	} else {
		w->method = w->blob;
		w->cmethod = w->nmethod = 0;
		w->compile_id = 0;
		id = firn_hs_method_id(w);
		hs_keep(w, 1, id);
	}
	*emit = FIRN_FRAME(FIRN_FRAME_KIND_JAVA, FIRN_HS_PAYLOAD(id, FIRN_HS_STUB_CODE, FIRN_HS_NO_BCI));
	return 1;
}

#endif /* __bpf__ */
#endif
