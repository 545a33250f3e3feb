/* The JavaScript frame walker: V8 keeps a frame pointer in all the code it generates and in its
 * builtins, and stores in each JavaScript frame, at fixed slots below fp, the JSFunction it runs
 * (off_fp_function), its context or, in frames that are no JavaScript, a Smi marker of the
 * frame's type (off_fp_context), and in interpreted frames the BytecodeArray and the current
 * bytecode offset (as a Smi). The native unwinder (profile.bpf.c) steps through V8's code by
 * frame pointer; for each such frame of a process in walker_procs (tag V8) its frame hook v8_frame
 * (bpf/walkers.h) says what the frame is: a JavaScript function becomes FIRN_FRAME(FIRN_FRAME_KIND_V8, payload) in
 * place of its return address, everything else (entry and exit trampolines, stubs, native
 * code) stays the native frame it was, so one stack runs from _start through libuv and V8's
 * entry into the JavaScript functions and out to native callees.
 *
 * Every value read is the process's own (bpf_probe_read_user), every pointer checked for its
 * heap-object tag and the user half of the address space before it is followed, every object's
 * type checked through its map; what fails to check stays a native frame. The per-process
 * values come from user space (lib/runtimes/v8frames.c, from the v8dbg_* constants: struct
 * firn_v8_proc). Needs from the includer: the events ring buffer, read_stack, window_remote. */
#ifndef FIRN_V8_BPF_H
#define FIRN_V8_BPF_H
#ifdef __bpf__

/* The functions given an id, by (pid, image, SFI): LRU, an evicted one is announced again. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, struct firn_v8_func_key);
	__type(value, struct firn_v8_func_val);
} v8_funcs SEC(".maps");

__u64 v8_next_id = 0; /* the last id given (ids start at 1) */

/* Functions met in the sample being walked, direct-mapped by JSFunction address: a recursion
 * (or a function called from several frames) is read and checked once per sample. Only within
 * one sample: the sampled thread is stopped, so its heap does not move under the walk. */
#define FIRN_V8_CACHE 8

/* The walk of the sample on this CPU: the process's values (copied once per sample, so the
 * per-frame callback needs no hash lookup), the buffer objects are read into, the cache. */
struct firn_v8_walk {
	struct firn_v8_proc p;
	__u32 pid, active;
	__u64 last_fp; /* fp of the last JavaScript frame emitted (a frame is emitted once) */
	__u64 gen;     /* the sample's number on this CPU: cache entries of another are stale */
	/* v8_frame's scratch, kept off its stack: under on_usdt's frame and the frame loop's,
	 * a chain of calls has little of its 512 bytes left */
	__u64 marker, func, word, array, off;
	__u32 tier, pad;
	struct firn_v8_func_key key;
	struct firn_v8_func_val val;
	__u8 obj[FIRN_V8_OBJ_READ];
	struct { __u64 func, gen, id; __u32 tier, text; } cache[FIRN_V8_CACHE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct firn_v8_walk);
} v8_walk SEC(".maps");

#define FIRN_V8_USER_END (1ULL << 47)

static __always_inline void count_v8(__u32 reason)
{
	walker_count(FIRN_FRAME_KIND_V8, reason);
}

/* Its begin hook (bpf/walkers.h): starts the walk of a sample of pid, whether pid runs a V8 the
 * walker was told about. */
static __always_inline void v8_begin(__u32 pid)
{
	__u32 zero = 0;
	struct firn_v8_walk *w = bpf_map_lookup_elem(&v8_walk, &zero);
	struct firn_v8_proc *p = pid && WALKER_ON(FIRN_FRAME_KIND_V8) ?
				 walker_proc(FIRN_FRAME_KIND_V8, pid) : NULL;

	if (!w)
		return;
	w->active = p != NULL;
	w->last_fp = 0;
	w->gen++;
	w->pid = pid;
	if (p)
		w->p = *p;
}

/* Whether tagged word v points at a heap object in user memory. */
static __always_inline bool v8_is_object(__u64 v)
{
	return (v & 3) == 1 && v > 4096 && v < FIRN_V8_USER_END;
}

/* The instance type of the heap object at tagged pointer obj (0: unreadable or not one). */
static __always_inline __u32 v8_type_of(const struct firn_v8_proc *p, __u64 obj)
{
	__u64 map = 0;
	__u16 type = 0;

	if (!v8_is_object(obj) ||
	    bpf_probe_read_user(&map, sizeof(map), (void *)(obj - 1 + (p->off_map & 0xff8))) ||
	    !v8_is_object(map) ||
	    bpf_probe_read_user(&type, sizeof(type), (void *)(map - 1 + (p->off_instance_type & 0xfff))))
		return 0;
	return type;
}

/* Reads FIRN_V8_OBJ_READ bytes of the object at tagged pointer obj into w->obj. */
static __always_inline bool v8_read_obj(struct firn_v8_walk *w, __u64 obj)
{
	return v8_is_object(obj) && !bpf_probe_read_user(w->obj, sizeof(w->obj), (void *)(obj - 1));
}

/* The tagged word at offset off (a multiple of 8 below FIRN_V8_OBJ_READ) of w->obj. */
static __always_inline __u64 v8_field(const struct firn_v8_walk *w, __u32 off)
{
	return *(const __u64 *)&w->obj[off & (FIRN_V8_OBJ_READ - 8)];
}

/* Gives the SFI (identity ident) a new id and announces it. Inlined in v8_frame (a global
 * function, verified once): a call of its own would be a fourth frame under on_usdt's, past the
 * 512 bytes of stack a chain of calls may use. */
static __always_inline __u64 v8_new_func(struct firn_v8_walk *w, __u64 name, __u64 script)
{
	struct firn_v8_func_event *e;

	w->val.ident = name ^ (script << 1);
	w->val.id = __sync_fetch_and_add(&v8_next_id, 1) + 1;
	bpf_map_update_elem(&v8_funcs, &w->key, &w->val, BPF_ANY);
	count_v8(FIRN_V8_FUNCS);
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_v8(FIRN_V8_FUNCS_LOST);
		return w->val.id;
	}
	e->type = FIRN_EV_V8_FUNC;
	e->pid = w->key.pid;
	e->sfi = w->key.sfi;
	e->id = w->val.id;
	e->name_or_scope_info = name;
	e->script = script;
	bpf_ringbuf_submit(e, wake_flags(false)); /* profile.bpf.c */
	return w->val.id;
}

/* The id of the SFI at tagged pointer sfi (read into w->obj): the one it got when first met
 * with the same identity, else a new one. 0: not an SFI. */
static __always_inline __u64 v8_func_id(struct firn_v8_walk *w, __u64 sfi)
{
	if (v8_type_of(&w->p, sfi) != w->p.type_sfi || !v8_read_obj(w, sfi))
		return 0;
	w->key.pid = w->pid, w->key.epoch = w->p.epoch, w->key.sfi = sfi;
	__u64 name = v8_field(w, w->p.off_sfi_name), script = v8_field(w, w->p.off_sfi_script);
	struct firn_v8_func_val *v = bpf_map_lookup_elem(&v8_funcs, &w->key);
	if (v && v->ident == (name ^ (script << 1)))
		return v->id;
	return v8_new_func(w, name, script);
}

/* The tier of the JavaScript frame at fp running pc (text: in V8's embedded blob), and its
 * bytecode offset word. */
static __always_inline __u32 v8_tier(struct firn_v8_walk *w, bool text, __u64 fp, __u64 *off)
{
	const struct firn_v8_proc *p = &w->p;

	*off = FIRN_V8_NO_OFFSET;
	w->word = w->array = 0;
	if (text) {
		/* an interpreted frame runs a bytecode handler of the blob, its offset a Smi */
		firn_read_stack(&w->word, fp + p->fp_bytecode_offset);
		__u64 word = w->word;
		if (!(word & 1) && word) {
			__u64 v = word >> (p->smi_shift & 63);
			*off = v < FIRN_V8_NO_OFFSET ? v : FIRN_V8_NO_OFFSET;
			return FIRN_V8_INTERPRETED;
		}
		return FIRN_V8_BUILTIN;
	}
	/* baseline (Sparkplug) code keeps the interpreter's frame: its BytecodeArray slot */
	firn_read_stack(&w->array, fp + p->fp_bytecode_array);
	if (v8_type_of(p, w->array) == p->type_bytecode_array)
		return FIRN_V8_BASELINE;
	return FIRN_V8_OPTIMIZED;
}

/* The id and tier of JSFunction func (checked, read) at the frame at fp: from the sample's
 * cache, else read; 0: not a JavaScript function. */
static __always_inline __u64 v8_function(struct firn_v8_walk *w, __u64 func, bool text, __u64 fp,
					 __u32 *tier, __u64 *off)
{
	__u32 slot = (func >> 3) & (FIRN_V8_CACHE - 1);
	__u64 id;

	if (w->cache[slot].gen == w->gen && w->cache[slot].func == func &&
	    w->cache[slot].text == text) {
		if (w->cache[slot].tier == FIRN_V8_INTERPRETED || w->cache[slot].tier == FIRN_V8_BUILTIN)
			*tier = v8_tier(w, text, fp, off); /* its offset is the frame's */
		else
			*tier = w->cache[slot].tier, *off = FIRN_V8_NO_OFFSET;
		return w->cache[slot].id;
	}
	__u32 type = v8_type_of(&w->p, func);
	if (type < w->p.type_js_first || type > w->p.type_js_last) {
		count_v8(FIRN_V8_NOT_JS);
		return 0;
	}
	if (!v8_read_obj(w, func) || !(id = v8_func_id(w, v8_field(w, w->p.off_js_shared)))) {
		count_v8(FIRN_V8_BAD_READ);
		return 0;
	}
	*tier = v8_tier(w, text, fp, off);
	w->cache[slot].func = func;
	w->cache[slot].gen = w->gen;
	w->cache[slot].id = id;
	w->cache[slot].tier = *tier;
	w->cache[slot].text = text;
	return id;
}

/* Its frame hook (bpf/walkers.h): a frame the native unwinder stepped by frame pointer
 * (u->fp_frame, its fp; *emit its code's pc) becomes the JavaScript frame value of the function
 * it runs (FIRN_FRAME_EMIT), else stays the native frame (FIRN_FRAME_OTHER). A global function,
 * verified once: inlined in the frame loop it was verified again with each state the loop's
 * callback is entered with (kernels that verify callbacks until their states converge). */
FIRN_HOOK int v8_frame(struct firn_unwind_state *u, __u64 *emit)
{
	__u32 zero = 0;
	struct firn_v8_walk *w = u && emit && u->fp_frame ? bpf_map_lookup_elem(&v8_walk, &zero) : NULL;
	__u64 id, pc, fp;

	if (!w || !w->active || !emit || !u || (fp = u->fp_frame) == w->last_fp || window_remote())
		return FIRN_FRAME_OTHER;
	pc = *emit;
	count_v8(FIRN_V8_FRAMES);
	w->marker = w->func = 0;
	if (firn_read_stack(&w->marker, fp + w->p.fp_marker) || firn_read_stack(&w->func, fp + w->p.fp_function)) {
		count_v8(FIRN_V8_NOT_JS);
		return FIRN_FRAME_OTHER;
	}
	if (!(w->marker & 1)) { /* a Smi: a typed frame (entry, exit, stub...) */
		count_v8(FIRN_V8_TYPED);
		return FIRN_FRAME_OTHER;
	}
	bool text = false;
	for (int i = 0; i < FIRN_V8_TEXTS; i++)
		text |= pc >= w->p.text[i].start && pc < w->p.text[i].end;
	w->tier = 0;
	if (!(id = v8_function(w, w->func, text, fp, &w->tier, &w->off)))
		return FIRN_FRAME_OTHER;
	w->last_fp = fp;
	count_v8(FIRN_V8_JS);
	*emit = FIRN_FRAME(FIRN_FRAME_KIND_V8, FIRN_V8_PAYLOAD(id, w->tier, w->off));
	return FIRN_FRAME_EMIT;
}

#endif
#endif
