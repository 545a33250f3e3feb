/* The Go labels walker: a sample of a Go process user space told it of (a walker_procs entry of
 * FIRN_GO_TAG holding struct firn_go_proc) gets the pprof labels of the goroutine it interrupted
 * (pprof.Do, pprof.SetGoroutineLabels) as its key's label context (bpf/firn.h's FIRN_CTX). The
 * thread's g is at its fs base + tls_off; g.m.curg is the goroutine (g itself but on the system
 * stack, g0, or a signal's); curg.labels points to the labels: Go 1.19-1.23 a *map[string]string
 * (one hmap bucket of 8 read: more labels are refused), Go 1.24+ a *[]{key, value string} (sorted
 * by key: its first FIRN_GO_PAIRS kept). Up to FIRN_GO_PAIRS pairs, each string cut at
 * FIRN_GO_STR bytes, are copied into one zeroed record, hashed; the hash of {pid, record} gets
 * an id in go_ctxs (bounded: a full table, or ids past FIRN_GO_MAX_ID, give FIRN_CTX_OTHER,
 * counted), and a new id is announced with the record (FIRN_EV_ANNOUNCE(FIRN_GO_TAG)), so user
 * space names it (lib/runtimes/goruntime.c). cpu-clock
 * samples reach it as a program of the unwinders array (on_sample_go, its bpf/walkers.h row,
 * loaded when the first Go process is told, or at the start for a Go command); off-CPU waits
 * and probe hits get no labels yet. */
#ifndef FIRN_BPF_GOLABELS_H
#define FIRN_BPF_GOLABELS_H

/* Its tag: a walker tag no frame kind uses (it makes no frames, only label contexts). */
#define FIRN_GO_TAG 12

#define FIRN_GO_PAIRS 8     /* labels read per goroutine, at most */
#define FIRN_GO_STR 48      /* bytes kept of a key or value */
#define FIRN_GO_MAX_ID 16383 /* ids given, at most, and go_ctxs' size (preallocated: ~1 MiB) */

/* How a Go release keeps a goroutine's labels (firn_go_proc.layout). */
enum firn_go_layout {
	FIRN_GO_HMAP = 1,  /* Go 1.19-1.23: *labelMap = *map[string]string */
	FIRN_GO_SLICE = 2, /* Go 1.24+: *labelMap = *struct{ []struct{ key, value string } } */
};

/* What user space tells it of a process (sample_source_set_proc by FIRN_GO_TAG): offsets of its
 * Go release, checked by user space (all below 4096). */
struct firn_go_proc {
	__s64 tls_off;         /* g's address: fs base + tls_off (-8: a static non-cgo binary) */
	__u32 pid;
	__u32 layout;          /* enum firn_go_layout */
	__u32 g_m, m_curg, g_labels;
	__u32 hmap_b, hmap_buckets; /* FIRN_GO_HMAP: hmap.B (a byte), hmap.buckets */
};

/* One label as copied: lengths are of the copy (at most FIRN_GO_STR), the bytes past them 0. */
struct firn_go_pair {
	__u8 klen, vlen;
	char key[FIRN_GO_STR], value[FIRN_GO_STR];
};

/* A goroutine's labels as read, and the announcement of a new id (FIRN_EV_ANNOUNCE(FIRN_GO_TAG)):
 * header type, pid; n pairs in use; cut: how many strings were longer than FIRN_GO_STR. */
struct firn_go_event {
	__u32 type, pid;
	__u32 id, cut;
	__u32 n, pad; /* from here on hashed */
	struct firn_go_pair pairs[FIRN_GO_PAIRS];
};

/* Its counters in walker_stats (at most FIRN_WALKER_STATS). */
enum firn_go_stat {
	FIRN_GO_LABELLED = 0, /* samples given a label context */
	FIRN_GO_NONE,         /* samples of a goroutine without labels (or of no goroutine) */
	FIRN_GO_BAD_READ,     /* the g, m, or labels could not be read */
	FIRN_GO_TOO_MANY,     /* a labels map past one bucket (over 8 labels): left unlabelled */
	FIRN_GO_FOLDED,       /* samples whose context got FIRN_CTX_OTHER (the table full) */
	FIRN_GO_CONTEXTS,     /* ids given (announced) */
	FIRN_GO_LOST,         /* ... whose announcement did not fit in the ring buffer */
	FIRN_GO_NR,
};
_Static_assert(sizeof(struct firn_go_proc) <= FIRN_WALKER_PROC_SIZE, "walker_procs value");
_Static_assert(FIRN_GO_NR <= FIRN_WALKER_STATS, "walker_stats");
_Static_assert(sizeof(struct firn_go_event) % 8 == 0, "go_hash reads whole words");

#ifdef __bpf__
/* A context's key in go_ctxs: its process and its record's hash. */
struct firn_go_key {
	__u32 pid, pad;
	__u64 hash;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FIRN_GO_MAX_ID);
	__type(key, struct firn_go_key);
	__type(value, __u32);
} go_ctxs SEC(".maps");

/* The record being read (too large for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct firn_go_event);
} go_scratch SEC(".maps");

__u64 go_next_id = 0; /* the last id given (64 bits: the atomic clang emits for -mcpu=v2) */

/* A user-space word at addr, 0 when it cannot be read. */
static __always_inline __u64 go_word(__u64 addr)
{
	__u64 v = 0;

	if (addr)
		bpf_probe_read_user(&v, sizeof(v), (void *)addr);
	return v;
}

/* Copies Go string {ptr, len} into dst (FIRN_GO_STR bytes, zeroed before); its copied length. */
static __always_inline __u8 go_string(char *dst, __u64 ptr, __u64 len, __u32 *cut)
{
	__u32 l = len > FIRN_GO_STR ? FIRN_GO_STR : (__u32)len;

	if (len > FIRN_GO_STR)
		(*cut)++;
	if (!ptr || bpf_probe_read_user(dst, l, (void *)ptr))
		return 0;
	return (__u8)l;
}

/* The pairs of a Go 1.24+ labels slice at labels into e; -1 when unreadable. */
static __always_inline int go_read_slice(struct firn_go_event *e, __u64 labels)
{
	__u64 hdr[2] = {}, s[4];

	if (bpf_probe_read_user(hdr, sizeof(hdr), (void *)labels))
		return -1;
	for (__u32 i = 0; i < FIRN_GO_PAIRS; i++) {
		if (i >= hdr[1])
			break;
		if (bpf_probe_read_user(s, sizeof(s), (void *)(hdr[0] + i * sizeof(s))))
			return -1;
		e->pairs[i].klen = go_string(e->pairs[i].key, s[0], s[1], &e->cut);
		e->pairs[i].vlen = go_string(e->pairs[i].value, s[2], s[3], &e->cut);
		e->n = i + 1;
	}
	return 0;
}

/* The pairs of a Go 1.19-1.23 labels map (labels: a *map, i.e. a **hmap) into e: its one bucket
 * (B = 0: at most 8 labels); -1 when unreadable, -2 when larger. */
static __always_inline int go_read_hmap(struct firn_go_event *e, const struct firn_go_proc *p,
					__u64 labels)
{
	__u64 h = go_word(labels), kv[4];
	__u8 b = 1, top[8];

	if (!h || bpf_probe_read_user(&b, 1, (void *)(h + (p->hmap_b & 4095))))
		return -1;
	if (b)
		return -2;
	__u64 bucket = go_word(h + (p->hmap_buckets & 4095));
	if (!bucket || bpf_probe_read_user(top, sizeof(top), (void *)bucket))
		return -1;
	for (__u32 i = 0; i < 8; i++) {
		if (top[i] < 5) /* empty or evacuated (Go's minTopHash is 5) */
			continue;
		__u32 n = e->n;
		if (bpf_probe_read_user(kv, 16, (void *)(bucket + 8 + i * 16)) ||
		    bpf_probe_read_user(kv + 2, 16, (void *)(bucket + 8 + 128 + i * 16)) || n >= 8)
			return -1;
		e->pairs[n].klen = go_string(e->pairs[n].key, kv[0], kv[1], &e->cut);
		e->pairs[n].vlen = go_string(e->pairs[n].value, kv[2], kv[3], &e->cut);
		e->n = n + 1;
	}
	return 0;
}

/* FNV-1a over the record's words from n on (its pairs: zero-padded, so equal labels hash alike). */
static __always_inline __u64 go_hash(const struct firn_go_event *e)
{
	const __u64 *w = (const __u64 *)&e->n;
	__u64 h = 0xcbf29ce484222325ULL;

	for (__u32 i = 0; i < (sizeof(*e) - __builtin_offsetof(struct firn_go_event, n)) / 8; i++)
		h = (h ^ w[i]) * 0x100000001b3ULL;
	return h;
}

/* The id of e's labels in process pid: the one it has, or a new one announced; FIRN_CTX_OTHER
 * when the table is full. */
static __always_inline __u32 go_ctx_id(struct firn_go_event *e, __u32 pid)
{
	struct firn_go_key k = { .pid = pid, .hash = go_hash(e) };
	__u32 *v = bpf_map_lookup_elem(&go_ctxs, &k);

	if (v)
		return *v;
	__u64 next = __sync_fetch_and_add(&go_next_id, 1) + 1;
	__u32 id = next > FIRN_GO_MAX_ID ? FIRN_CTX_OTHER : (__u32)next;
	if (id == FIRN_CTX_OTHER || bpf_map_update_elem(&go_ctxs, &k, &id, BPF_NOEXIST)) {
		v = bpf_map_lookup_elem(&go_ctxs, &k); /* another CPU's, just made */
		return v ? *v : FIRN_CTX_OTHER;
	}
	e->type = FIRN_EV_ANNOUNCE(FIRN_GO_TAG);
	e->pid = pid;
	e->id = id;
	walker_count(FIRN_GO_TAG, FIRN_GO_CONTEXTS);
	if (bpf_ringbuf_output(&events, e, sizeof(*e), 0))
		walker_count(FIRN_GO_TAG, FIRN_GO_LOST);
	return id;
}

/* The current goroutine's labels as p's offsets find them, into e (zeroed here); 1 when it has
 * some, 0 when none, -1 when unreadable, -2 when too many. */
static __always_inline int go_read(struct firn_go_event *e, const struct firn_go_proc *p)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 fs = BPF_CORE_READ(task, thread.fsbase);

	__builtin_memset(e, 0, sizeof(*e));
	__u64 g = fs ? go_word(fs + p->tls_off) : 0;
	__u64 m = go_word(g + (p->g_m & 4095));
	if (!m)
		return g ? -1 : 0; /* no g yet: a thread Go has not set up */
	__u64 curg = go_word(m + (p->m_curg & 4095));
	__u64 labels = go_word(curg + (p->g_labels & 4095));
	if (!labels)
		return 0; /* no goroutine (the scheduler), or one without labels */
	int r = p->layout == FIRN_GO_SLICE ? go_read_slice(e, labels) : go_read_hmap(e, p, labels);
	return r < 0 ? r : e->n > 0;
}

/* The label context of the current sample: FIRN_CTX(FIRN_GO_TAG, id) for a goroutine with
 * labels of a Go process user space told it of, else 0. */
static __always_inline __u32 go_ctx(__u32 pid, struct task_struct *task)
{
	if (!WALKER_ON(FIRN_GO_TAG)) /* first: off, the verifier drops the rest */
		return 0;
	struct firn_go_proc *p = pid ? walker_proc(FIRN_GO_TAG, pid) : NULL;
	__u32 zero = 0;
	struct firn_go_event *e = p ? bpf_map_lookup_elem(&go_scratch, &zero) : NULL;

	if (!e)
		return 0;
	int r = go_read(e, p);
	if (r <= 0) {
		walker_count(FIRN_GO_TAG, r == 0 ? FIRN_GO_NONE : r == -2 ? FIRN_GO_TOO_MANY :
								     FIRN_GO_BAD_READ);
		return 0;
	}
	__u32 id = go_ctx_id(e, pid);
	walker_count(FIRN_GO_TAG, id == FIRN_CTX_OTHER ? FIRN_GO_FOLDED : FIRN_GO_LABELLED);
	return FIRN_CTX(FIRN_GO_TAG, id);
}

#endif
#endif
