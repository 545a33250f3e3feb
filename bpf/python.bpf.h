/* The CPython walker (tag FIRN_FRAME_KIND_PYTHON), included by profile.bpf.c after the native
 * stacks' storage: for a process user space described (walker_procs: struct firn_py_proc) it
 * finds the sampled thread's state, walks its frame chain, gives each code object an id
 * (announced once: struct firn_py_code_event, FIRN_EV_ANNOUNCE(tag)) and splices the Python
 * frames into the native stack in place of the evaluation loop's frames (a timed sample's
 * result may be longer than a firn_stack: big_stacks). Its counters: enum firn_py_stat. Its
 * stack hook, python_stack (its bpf/walkers.h row), runs on every event's user stack:
 * cpu-clock samples' in on_sample_python (tail-called from on_sample). */
#ifndef FIRN_PYTHON_BPF_H
#define FIRN_PYTHON_BPF_H
#ifdef __bpf__

/* The user stack being spliced with Python frames (any length up to FIRN_BIG_FRAMES). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct firn_big_stack);
} python_out SEC(".maps");

#define FIRN_PY_FRAME_READ 112 /* bytes of a frame read at once: every field the walk needs */

/* The Python frames of the sample in progress (leaf first) and the state of the walk and of the
 * splice; in a map so the bpf_loop callbacks see them. entry[i]: frame i is the first one its
 * _PyEval_EvalFrameDefault call ran (the outermost of that call). */
struct firn_py_walk {
	struct firn_py_proc p;
	__u64 frame;       /* the next frame to read */
	__u32 n, stop;     /* frames kept; a firn_py_stat or FIRN_PY_NR while walking */
	__u32 ni, pi, mode, limit; /* splice: next native frame, next Python frame, mode, the
				    * most frames the spliced stack may have */
	__u64 big, hash;   /* the id of the spliced stack in big_stacks (0: none); its hash */
	__u64 vals[FIRN_PY_MAX_FRAMES];
	__u8 entry[FIRN_PY_MAX_FRAMES];
	__u8 fbuf[FIRN_PY_FRAME_READ + 8]; /* the frame being read */
	struct firn_stack native; /* the native stack being spliced */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct firn_py_walk);
} python_walk SEC(".maps");

#define FIRN_PY_MAX_THREADS 256 /* thread states looked at to find a thread's */
/* owners from 3 on have no Python code (3.12, 3.13: FRAME_OWNED_BY_CSTACK; 3.14: _INTERPRETER,
 * the entry frame of a _PyEval_EvalFrameDefault call, and _CSTACK = 4) */
#define FRAME_OWNED_BY_SHIM 3

static __always_inline void count_python(__u32 reason)
{
	walker_count(FIRN_FRAME_KIND_PYTHON, reason);
}

static __always_inline int read_user64(__u64 *out, __u64 addr)
{
	return bpf_probe_read_user(out, sizeof(*out), (void *)addr);
}

/* The thread state of each thread last found (LRU): checked again at each use. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} python_tstates SEC(".maps");

/* Whether thread state ts is the current thread's: its native_thread_id is tid (3.11+), or its
 * thread_id, the thread's pthread_t, is its TCB: the task's fsbase on x86-64 (3.8-3.10). */
static __always_inline bool tstate_is(const struct firn_py_proc *p, __u64 ts, __u32 tid, __u64 fsbase)
{
	__u64 thread = 0;

	if (p->minor <= 10 ? read_user64(&thread, ts + p->ts_thread_id)
			   : bpf_probe_read_user(&thread, 4, (void *)(ts + p->ts_native_tid)))
		return false;
	return thread == (p->minor <= 10 ? fsbase : tid);
}

/* The search of the interpreter's thread list (bpf_loop callback state). */
struct firn_ts_search {
	__u64 ts, fsbase, found;
	__u32 tid, pad;
};

/* One thread state of the list (bpf_loop callback: verified once, not once per thread as an
 * unrolled loop of FIRN_PY_MAX_THREADS was). 1 stops. */
static long tstate_step(__u32 i, void *arg)
{
	struct firn_ts_search *q = arg;
	__u32 zero = 0;
	struct firn_py_walk *w = bpf_map_lookup_elem(&python_walk, &zero);

	if (!w || !q->ts)
		return 1;
	if (tstate_is(&w->p, q->ts, q->tid, q->fsbase)) {
		q->found = q->ts;
		return 1;
	}
	if (read_user64(&q->ts, q->ts + w->p.ts_next))
		q->ts = 0;
	return 0;
}

/* The thread state of thread tid: the one found last time when it still is, else the one of
 * the interpreter's thread list that is (then kept for the next samples). p: the walk's copy
 * (python_walk's p, which tstate_step reads). */
static __always_inline __u64 find_tstate(const struct firn_py_proc *p, __u32 tid)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct firn_ts_search q = { .tid = tid };
	__u64 interp, *last = bpf_map_lookup_elem(&python_tstates, &tid);

	q.fsbase = p->minor <= 10 ? BPF_CORE_READ(task, thread.fsbase) : 0;
	if (last && *last && tstate_is(p, *last, tid, q.fsbase))
		return *last;
	if (read_user64(&interp, p->runtime + p->rt_interp_head) || !interp ||
	    read_user64(&q.ts, interp + p->interp_tstate_head))
		return 0;
	bpf_loop(FIRN_PY_MAX_THREADS, tstate_step, &q, 0);
	if (q.found)
		bpf_map_update_elem(&python_tstates, &tid, &q.found, BPF_ANY);
	return q.found;
}

/* The thread's innermost frame: a PyFrameObject (3.8-3.10) or _PyInterpreterFrame (0: none, or
 * unreadable). */
static __always_inline __u64 first_pyframe(const struct firn_py_proc *p, __u64 ts)
{
	__u64 f = 0;

	if (read_user64(&f, ts + p->ts_frame))
		return 0;
	if ((p->minor == 11 || p->minor == 12) && f && read_user64(&f, f + p->cframe_current))
		return 0;
	return f;
}

/* The payload of a frame running code object code (its id: python_code_id) at instruction
 * instr (3.8-3.10: instr is f_lasti, in bytes before 3.10, in code units in 3.10; -1: not
 * started). */
static __always_inline __u64 py_payload(const struct firn_py_proc *p, __u64 code, __u64 instr,
					 __u64 id)
{
	__u64 start = code + p->co_code_adaptive, units = (instr - start) >> 1;
	__s32 lasti = (__s32)instr;

	if (p->minor <= 10)
		units = lasti < 0 ? FIRN_PY_NO_OFFSET : p->minor == 10 ? (__u64)lasti : (__u64)lasti >> 1;
	else if (instr < start)
		units = FIRN_PY_NO_OFFSET;
	if (units >= FIRN_PY_NO_OFFSET)
		units = FIRN_PY_NO_OFFSET;
	return FIRN_FRAME(FIRN_FRAME_KIND_PYTHON, FIRN_PY_PAYLOAD(id, units));
}

/* The code objects met, with the id each was given (struct firn_py_code_key). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct firn_py_code_key);
	__type(value, struct firn_py_code_val);
} python_codes SEC(".maps");

__u64 python_next_id = 0; /* the last id given (ids start at 1) */

/* The code object being looked at (per CPU: the walk's callbacks share it). */
struct firn_py_code_buf {
	__u8 co[FIRN_PY_CODE_READ];
	__u8 uni[64];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct firn_py_code_buf);
} python_code_buf SEC(".maps");

#define PY_CO64(b, off) (*(__u64 *)&(b)->co[(off) & 0x78])

/* Copies unicode object str's first bytes (its data) with its state and length into the event. */
static __always_inline void copy_unicode(const struct firn_py_proc *p, __u64 str, char *out,
					 __u32 cap, __u32 *state, __u64 *len)
{
	struct firn_py_code_buf *b;
	__u32 zero = 0;

	if (!str || !(b = bpf_map_lookup_elem(&python_code_buf, &zero)) ||
	    bpf_probe_read_user(b->uni, sizeof(b->uni), (void *)str))
		return;
	*state = *(__u32 *)&b->uni[p->uni_state & 0x3c];
	*len = *(__u64 *)&b->uni[p->uni_length & 0x38];
	bpf_probe_read_user(out, cap, (void *)(str + (p->uni_data & 0xff)));
}

/* Gives code object code (its identity ident) a new id and announces it with its names and
 * first line, copied now: its process may end before user space reads anything. */
static __noinline __u64 python_new_code(struct firn_py_code_key *k, __u64 ident)
{
	__u32 zero = 0;
	struct firn_py_walk *w = bpf_map_lookup_elem(&python_walk, &zero);
	struct firn_py_code_buf *b = bpf_map_lookup_elem(&python_code_buf, &zero);
	struct firn_py_code_val v = { .ident = ident };
	__u32 lost = FIRN_PY_CODES_LOST, codes = FIRN_PY_CODES;

	if (!w || !b)
		return 0;
	v.id = __sync_fetch_and_add(&python_next_id, 1) + 1;
	bpf_map_update_elem(&python_codes, k, &v, BPF_ANY);
	count_python(codes);
	struct firn_py_code_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_python(lost);
		return v.id;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->type = FIRN_EV_PY_CODE;
	e->pid = k->pid;
	e->code = k->code;
	e->id = v.id;
	e->firstlineno = *(__s32 *)&b->co[w->p.co_firstlineno & 0x7c];
	__u64 name = PY_CO64(b, w->p.co_name), file = PY_CO64(b, w->p.co_filename);
	copy_unicode(&w->p, name, e->name, sizeof(e->name), &e->name_state, &e->name_len);
	copy_unicode(&w->p, file, e->file, sizeof(e->file), &e->file_state, &e->file_len);
	bpf_ringbuf_submit(e, wake_flags(false));
	return v.id;
}

/* The id of the code object at code of the current process: the one it was given when its
 * identity (name, its hash, file, first line, line table) is unchanged, else a new one. 0: the
 * object could not be read. */
static __noinline __u64 python_code_id(__u64 code)
{
	__u32 zero = 0;
	struct firn_py_walk *w = bpf_map_lookup_elem(&python_walk, &zero);
	struct firn_py_code_buf *b = bpf_map_lookup_elem(&python_code_buf, &zero);
	struct firn_py_code_key k = { .pid = bpf_get_current_pid_tgid() >> 32, .code = code };
	__u64 nhash = 0;

	if (!w || !b || bpf_probe_read_user(b->co, sizeof(b->co), (void *)(code + (w->p.co_lo & 0xff))))
		return 0;
	k.epoch = w->p.epoch;
	__u64 name = PY_CO64(b, w->p.co_name);
	if (name)
		read_user64(&nhash, name + (w->p.uni_hash & 0x38));
	__u64 ident = name * 0x9e3779b97f4a7c15ULL ^ nhash;
	ident = (ident ^ PY_CO64(b, w->p.co_filename)) * 0xff51afd7ed558ccdULL;
	ident = (ident ^ PY_CO64(b, w->p.co_linetable)) * 0xc4ceb9fe1a85ec53ULL;
	ident ^= *(__u32 *)&b->co[w->p.co_firstlineno & 0x7c];
	struct firn_py_code_val *v = bpf_map_lookup_elem(&python_codes, &k);
	if (v && v->ident == ident)
		return v->id;
	return python_new_code(&k, ident);
}

/* One frame of the chain (bpf_loop callback): keeps it unless it is a shim (3.12+, which
 * marks the frame kept before as its call's first), then steps to the caller. Before 3.11 each
 * _PyEval_EvalFrameDefault call runs one frame: every frame is its call's first. 1 stops. */
static long python_frame(__u32 i, void *arg)
{
	__u32 zero = 0;
	struct firn_py_walk *w = bpf_map_lookup_elem(&python_walk, &zero);
	__u64 code = 0, instr = 0, back = 0;
	__u8 owner = 0, is_entry = 0;

	if (!w)
		return 1;
	if (!w->frame) {
		w->stop = FIRN_PY_COMPLETE;
		return 1;
	}
	__u64 f = w->frame;
	bool old = w->p.minor <= 10;
	/* one read for the whole head (offsets < FIRN_PY_FRAME_READ - 8, checked by user space) */
	if (bpf_probe_read_user(w->fbuf, FIRN_PY_FRAME_READ, (void *)f)) {
		w->stop = FIRN_PY_BAD_READ;
		return 1;
	}
	code = *(__u64 *)&w->fbuf[w->p.fr_code & 0x7f] & ~w->p.code_tag;
	back = *(__u64 *)&w->fbuf[w->p.fr_back & 0x7f];
	instr = *(__u64 *)&w->fbuf[w->p.fr_instr & 0x7f];
	if (old)
		instr = (__u32)instr;
	owner = w->fbuf[w->p.fr_owner & 0x7f];
	is_entry = w->p.fr_is_entry ? w->fbuf[w->p.fr_is_entry & 0x7f] : 0;
	w->frame = back;
	__u32 n = w->n;
	if (w->p.minor >= 12 && owner >= FRAME_OWNED_BY_SHIM) {
		if (n > 0 && n <= FIRN_PY_MAX_FRAMES)
			w->entry[(n - 1) & (FIRN_PY_MAX_FRAMES - 1)] = 1;
		return 0;
	}
	if (n >= FIRN_PY_MAX_FRAMES) {
		w->stop = FIRN_PY_TRUNCATED;
		return 1;
	}
	__u64 cid = (code & 7) || code >= (1ULL << 47) || !code ? 0 : python_code_id(code);
	if (!cid) {
		w->stop = FIRN_PY_BAD_READ;
		return 1;
	}
	w->vals[n] = py_payload(&w->p, code, instr, cid);
	w->entry[n] = old ? 1 : is_entry;
	w->n = n + 1;
	return 0;
}

/* Whether native frame i (a return address when i > 0) is in _PyEval_EvalFrameDefault, or in
 * its cold part. */
static __always_inline bool in_eval(const struct firn_py_walk *w, __u64 ip)
{
	return (ip > w->p.eval_start && ip <= w->p.eval_end) ||
	       (ip > w->p.cold_start && ip <= w->p.cold_end);
}

/* One step of the splice (bpf_loop callback): out gets the native frames in order, each
 * _PyEval_EvalFrameDefault replaced by the Python frames of its call; Python frames left when the
 * native stack ends (it broke off) follow it. 1 stops. */
static long python_splice_step(__u32 i, void *arg)
{
	__u32 zero = 0;
	struct firn_py_walk *w = bpf_map_lookup_elem(&python_walk, &zero);
	struct firn_big_stack *out = bpf_map_lookup_elem(&python_out, &zero);

	if (!w || !out)
		return 1;
	__u32 o = out->len, ni = w->ni, pi = w->pi;
	if (o >= FIRN_BIG_FRAMES || o >= w->limit)
		return 1;
	/* the outer frames do not fit, or the walk kept only the inner ones: the leaf end stays,
	 * its root an explicit "[truncated]" frame (never native frames that look complete) */
	bool more = pi < w->n || (w->mode != 2 && ni < w->native.len);
	if ((o + 1 == w->limit && more) || (w->stop == FIRN_PY_TRUNCATED && pi >= w->n)) {
		out->ips[o] = FIRN_FRAME(FIRN_FRAME_KIND_PYTHON, FIRN_PY_TRUNCATED_FRAME);
		out->len = o + 1;
		w->stop = FIRN_PY_TRUNCATED;
		w->pi = w->n;
		return 1;
	}
	if (w->mode && pi < w->n && pi < FIRN_PY_MAX_FRAMES) {
		out->ips[o] = w->vals[pi];
		out->len = o + 1;
		w->pi = pi + 1;
		if (w->entry[pi] && w->mode == 1) {
			w->mode = 0;
			w->ni = ni + 1; /* the _PyEval_EvalFrameDefault frame they replace */
		}
		return 0;
	}
	w->mode = 0;
	if (ni >= w->native.len || ni >= FIRN_MAX_FRAMES) {
		w->mode = 2; /* the tail: every Python frame left */
		return pi >= w->n;
	}
	__u64 ip = w->native.ips[ni];
	if (pi < w->n && in_eval(w, ip)) {
		w->mode = 1;
		return 0;
	}
	out->ips[o] = ip;
	out->len = o + 1;
	w->ni = ni + 1;
	return 0;
}

/* One block of FIRN_HASH_BLOCK frames of the spliced stack into its hash (bpf_loop callback,
 * as firn_stack_hash does for short stacks). 1 stops. */
static long big_hash_step(__u32 i, void *arg)
{
	__u32 zero = 0;
	struct firn_py_walk *w = bpf_map_lookup_elem(&python_walk, &zero);
	struct firn_big_stack *out = bpf_map_lookup_elem(&python_out, &zero);
	__u64 b = (__u64)i * FIRN_HASH_BLOCK, len;

	if (!w || !out || b >= (len = out->len))
		return 1;
	for (__u64 j = 0; j < FIRN_HASH_BLOCK; j++) {
		__u64 k = b + j;
		opaque(k); /* the check below is on the register the load uses */
		if (k >= len || k >= FIRN_BIG_FRAMES)
			break;
		w->hash = (w->hash ^ out->ips[k]) * 0x100000001b3ULL;
		w->hash ^= w->hash >> 29;
	}
	return 0;
}

/* Stores the spliced stack (longer than FIRN_MAX_FRAMES) in big_stacks: its id, 0 when the map
 * is full. */
static __always_inline __u64 store_big(struct firn_py_walk *w, struct firn_big_stack *out)
{
	w->hash = 0x84222325cbf29ce4ULL ^ out->len;
	bpf_loop(FIRN_BIG_FRAMES / FIRN_HASH_BLOCK + 1, big_hash_step, NULL, 0);
	__u64 id = w->hash && w->hash != FIRN_STACK_LOST ? w->hash : 2;
	out->pad = 0;
	if (bpf_map_lookup_elem(&big_stacks, &id))
		return id;
	if (bpf_map_update_elem(&big_stacks, &id, out, BPF_NOEXIST) && !bpf_map_lookup_elem(&big_stacks, &id))
		return 0;
	return id;
}

/* Copies the spliced stack back into s: whole when it fits, else its leaf end under a
 * [truncated] root. */
static __always_inline void splice_back(struct firn_stack *s, struct firn_big_stack *out)
{
	__u32 len = out->len;

	if (len > FIRN_MAX_FRAMES) {
		len = FIRN_MAX_FRAMES;
		out->ips[FIRN_MAX_FRAMES - 1] = FIRN_FRAME(FIRN_FRAME_KIND_PYTHON, FIRN_PY_TRUNCATED_FRAME);
	}
	s->len = len;
	bpf_probe_read_kernel(s->ips, (len & 127) * sizeof(__u64), out->ips);
}

/* Adds the Python frames of the current thread to the user stack s (scratch slot 0) when its
 * process runs a CPython that user space described. big: the result may be longer than s holds
 * (a timed sample): it is then stored in big_stacks, its id for python_big_id. */
static __always_inline void python_frames(struct firn_stack *s, bool big)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, zero = 0;
	struct firn_py_walk *w = bpf_map_lookup_elem(&python_walk, &zero);
	struct firn_big_stack *out = bpf_map_lookup_elem(&python_out, &zero);
	struct firn_py_proc *p;

	if (!w || !out)
		return;
	w->big = 0;
	if (!WALKER_ON(FIRN_FRAME_KIND_PYTHON) || !pid ||
	    !(p = walker_proc(FIRN_FRAME_KIND_PYTHON, pid)))
		return;
	w->p = *p;
	w->n = 0;
	w->stop = FIRN_PY_NR;
	__u64 ts = find_tstate(p, (__u32)id);
	if (!ts) {
		count_python(FIRN_PY_NO_THREAD);
		return;
	}
	w->frame = first_pyframe(p, ts);
	bpf_loop(FIRN_PY_MAX_FRAMES * 2, python_frame, NULL, 0);
	if (w->n) {
		w->native = *s;
		w->ni = w->pi = w->mode = 0;
		w->limit = big ? FIRN_BIG_FRAMES : FIRN_MAX_FRAMES;
		out->len = 0;
		bpf_loop(FIRN_MAX_FRAMES + FIRN_PY_MAX_FRAMES + 2, python_splice_step, NULL, 0);
		if (out->len > FIRN_MAX_FRAMES && !(w->big = store_big(w, out)))
			w->stop = FIRN_PY_TRUNCATED; /* big_stacks is full: the leaf end */
		splice_back(s, out);
	}
	count_python(w->stop < FIRN_PY_NR ? w->stop : FIRN_PY_TRUNCATED);
}

/* The id in big_stacks of the user stack python_frames made last on this CPU (0: none). */
static __always_inline __u64 python_big_id(void)
{
	__u32 zero = 0;
	struct firn_py_walk *w = bpf_map_lookup_elem(&python_walk, &zero);

	return w ? w->big : 0;
}

/* Its stack hook (bpf/walkers.h): python_frames as a global function, verified once per program
 * whatever the number of its callers. Returns the id in big_stacks of the stack when it was
 * stored there (big only), else 0: s holds it. */
FIRN_HOOK __u64 python_stack(struct firn_stack *s, __u32 big)
{
	if (!s)
		return 0;
	python_frames(s, big);
	return python_big_id();
}

#endif
#endif
