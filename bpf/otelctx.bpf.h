/* The OpenTelemetry thread context reader (OTEP 4947): per sample, the record a thread's
 * otel_thread_ctx_v1 points to, as a label context (bpf/firn.h's FIRN_CTX) of its tag. User space
 * (lib/runtimes/otelthread.c) finds the variable in a process once (its file's TLS model, the
 * loader's offsets: lib/elf/tlsctx.h) and hands this walker where it lies from the thread's fs
 * base (struct firn_otel_proc, walker_procs by {FIRN_OTEL_TAG, pid}). Per sample it reads
 * task->thread.fsbase, follows the pointer, reads the record's header and at most
 * FIRN_OTEL_ATTRS bytes of attributes, checks valid, then reads the pointer and valid again (a
 * record swapped or rewritten meanwhile is counted torn and left out). {pid, the record's bytes}
 * get an id in otel_ctxs, announced once (struct firn_otel_ctx_event, FIRN_EV_ANNOUNCE of its
 * tag) so user space names its labels; past FIRN_OTEL_CTX_MAX contexts a sample gets
 * FIRN_CTX_OTHER, counted (FIRN_OTEL_FOLDED). cpu-clock samples (count_sample) and off-CPU waits
 * (the thread's context when it began waiting) carry it; other events' stacks do not (on_usdt's
 * verifier budget). Its tag is no frame kind: it adds no frames. A thread remembers in its
 * task storage (otel_threads) where its variable is, for its process image (pid, mm), and the
 * record its last sample read, with that record's header and id: a sample of the same image
 * needs no walker_procs lookup, and one finding the same pointer and, read again, the same
 * header (valid) reuses the id without the attributes, the second reads or the hash (the SDK
 * publishes a new record by swapping the pointer, an in-place rewrite changes the header).
 * Each cold cache line costs here (a map's hash, a per-CPU scratch: ~100-300 ns each on this
 * host, bench/otelctx_stages.sh), so the path of a thread whose record did not change touches
 * its storage, its task, the pointer and the header alone; in front of the storage, each CPU
 * keeps a copy of its last thread's (otel_last), which also counts its samples. */
#ifndef FIRN_BPF_OTELCTX_H
#define FIRN_BPF_OTELCTX_H

/* Its tag (walker_procs, walker_stats, announcements, FIRN_CTX): no frame kind uses it. */
#define FIRN_OTEL_TAG 13

/* Where the variable is, from the thread's fs base (struct firn_otel_proc's how). */
#define FIRN_OTEL_FS 1  /* at fs + offset (local-exec, initial-exec, static TLSDESC) */
#define FIRN_OTEL_DTV 2 /* at dtv[module]'s block + offset, dtv at fs + 8 (dynamic TLS) */
#define FIRN_OTEL_MODULE_MAX 65536

struct firn_otel_proc {
	__u32 how;    /* FIRN_OTEL_* */
	__u32 pad;
	__s64 offset; /* from fs (FIRN_OTEL_FS) or from the module's block (FIRN_OTEL_DTV) */
	__u64 module; /* the module id (FIRN_OTEL_DTV) */
};

/* The record: trace-id[16], span-id[8], valid, trace-flags, attrs-data-size (u16), attributes. */
#define FIRN_OTEL_HEADER 28
#define FIRN_OTEL_VALID 24
#define FIRN_OTEL_ATTRS_SIZE 26
#define FIRN_OTEL_ATTRS 96 /* attribute bytes read (more: cut there, counted) */
#define FIRN_OTEL_CTX_MAX 4096

/* A context: the process and the record's bytes as read (len of attributes, the rest zero). */
struct firn_otel_key {
	__u32 pid, len;
	__u8 rec[FIRN_OTEL_HEADER + FIRN_OTEL_ATTRS];
};

/* A new context id (type FIRN_EV_ANNOUNCE(FIRN_OTEL_TAG)). */
struct firn_otel_ctx_event {
	__u32 type, pid;
	__u32 id, len;
	__u8 rec[FIRN_OTEL_HEADER + FIRN_OTEL_ATTRS];
};

/* The per-CPU map in front of task storage, and where its entry counts the samples with a
 * context not yet added to walker_stats (user space adds them: FIRN_OTEL_SAMPLES is a sum). */
#define FIRN_OTEL_LAST_MAP "otel_last"
#define FIRN_OTEL_LAST_SAMPLES_OFF 8

/* Its counters in walker_stats. */
enum firn_otel_stat {
	FIRN_OTEL_SAMPLES = 0, /* samples that carry a context (less those still in otel_last) */
	FIRN_OTEL_BAD_READ,    /* the slot, the TLS block or the record could not be read */
	FIRN_OTEL_TORN,        /* not valid, or swapped or rewritten while read */
	FIRN_OTEL_TRUNCATED,   /* attributes past FIRN_OTEL_ATTRS bytes left out */
	FIRN_OTEL_CONTEXTS,    /* contexts given an id */
	FIRN_OTEL_LOST,        /* ... whose announcement did not fit in the ring buffer */
	FIRN_OTEL_FOLDED,      /* samples whose context found the table full: FIRN_CTX_OTHER */
	FIRN_OTEL_NR,
};

#ifdef __bpf__
_Static_assert(sizeof(struct firn_otel_proc) <= FIRN_WALKER_PROC_SIZE, "walker_procs value");
_Static_assert(FIRN_OTEL_NR <= FIRN_WALKER_STATS, "walker_stats");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, FIRN_OTEL_CTX_MAX);
	__type(key, struct firn_otel_key);
	__type(value, __u32);
} otel_ctxs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct firn_otel_key);
} otel_scratch SEC(".maps");

__u64 otel_next_id = 0; /* 64-bit: clang 14 needs it for XADD's value */

/* Bumped by user space after it took contexts out of otel_ctxs (a continuous recording's
 * ids no cut used): an id a thread remembers from an older epoch is looked up again. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} otel_epoch SEC(".maps");

/* The address of the thread's otel_thread_ctx_v1 from its fs base (0: not reachable now). */
static __always_inline __u64 otel_slot(const struct firn_otel_proc *p, __u64 fs)
{
	__u64 dtv = 0, block = 0, module = p->module;

	if (p->how == FIRN_OTEL_FS)
		return fs + p->offset;
	if (p->how != FIRN_OTEL_DTV || !module || module > FIRN_OTEL_MODULE_MAX)
		return 0;
	if (bpf_probe_read_user(&dtv, sizeof(dtv), (void *)(fs + 8)) || !dtv ||
	    bpf_probe_read_user(&block, sizeof(block), (void *)(dtv + module * 16)))
		return 0;
	return block && block != ~0ULL ? block + p->offset : 0;
}

/* Reads record rec, which slot pointed to, into k: 1 read, -FIRN_OTEL_* counted (bad, torn). */
static __always_inline int otel_read(struct firn_otel_key *k, __u64 slot, __u64 rec)
{
	__u64 again = 0;
	__u8 valid = 0;

	if (bpf_probe_read_user(k->rec, FIRN_OTEL_HEADER, (void *)rec))
		return -FIRN_OTEL_BAD_READ;
	if (k->rec[FIRN_OTEL_VALID] != 1)
		return -FIRN_OTEL_TORN;
	__u32 n = *(__u16 *)&k->rec[FIRN_OTEL_ATTRS_SIZE];
	if (n > FIRN_OTEL_ATTRS) {
		walker_count(FIRN_OTEL_TAG, FIRN_OTEL_TRUNCATED);
		n = FIRN_OTEL_ATTRS;
	}
	if (bpf_probe_read_user(k->rec + FIRN_OTEL_HEADER, n, (void *)(rec + FIRN_OTEL_HEADER)))
		return -FIRN_OTEL_BAD_READ;
	k->len = n;
	/* the same record, still valid: not swapped or being rewritten while read */
	if (bpf_probe_read_user(&again, sizeof(again), (void *)slot) || again != rec ||
	    bpf_probe_read_user(&valid, 1, (void *)(rec + FIRN_OTEL_VALID)) || valid != 1)
		return -FIRN_OTEL_TORN;
	return 1;
}

/* A new context's id, announced; FIRN_CTX_OTHER when the table is full (counted). Ids go
 * round after FIRN_CTX_OTHER - 1 (a continuous recording lets them go: user space takes an
 * old one that is still in the table out when its id comes again). */
static __always_inline __u32 otel_new_id(const struct firn_otel_key *k)
{
	__u64 n = __sync_fetch_and_add(&otel_next_id, 1);
	__u32 id = (__u32)(n % (FIRN_CTX_OTHER - 1)) + 1, *v;

	if (bpf_map_update_elem(&otel_ctxs, k, &id, BPF_NOEXIST)) {
		v = bpf_map_lookup_elem(&otel_ctxs, k); /* another CPU's, just now */
		if (v)
			return *v;
		walker_count(FIRN_OTEL_TAG, FIRN_OTEL_FOLDED);
		return FIRN_CTX_OTHER;
	}
	walker_count(FIRN_OTEL_TAG, FIRN_OTEL_CONTEXTS);
	struct firn_otel_ctx_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		walker_count(FIRN_OTEL_TAG, FIRN_OTEL_LOST);
		return id;
	}
	e->type = FIRN_EV_ANNOUNCE(FIRN_OTEL_TAG);
	e->pid = k->pid;
	e->id = id;
	e->len = k->len;
	__builtin_memcpy(e->rec, k->rec, sizeof(e->rec));
	bpf_ringbuf_submit(e, wake_flags(false));
	return id;
}

/* What a thread's last sample found (otel_threads): where its variable is, for the process
 * image (pid, mm) and fs base it was found with (the TLS address is fixed for a thread's life;
 * an exec makes a new mm, whose entry user space tells again), and the record it pointed to,
 * its header and id. */
struct otel_thread {
	__u64 mm, fs, slot;
	__u64 rec;                  /* the record's address; id 0: none remembered */
	__u64 head[4];              /* its FIRN_OTEL_HEADER bytes, the rest zero */
	__u64 epoch;                /* otel_epoch's when id was found */
	__u32 pid, id;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct otel_thread);
} otel_threads SEC(".maps");

/* The last thread sampled on this CPU (otel_last): a copy of its struct otel_thread, in front
 * of task storage, whose lookup is a chain of cold lines (~300 ns here: bench/RESULTS.md); the
 * next sample on a CPU is mostly the same thread's. samples: those counted here since the last
 * fold into walker_stats (FIRN_OTEL_SAMPLES, every OTEL_FOLD_EVERY: one cold line less). */
struct otel_last {
	__u64 task; /* the task_struct's address; 0: none */
	__u64 samples;
	struct otel_thread t;
};

#define OTEL_FOLD_EVERY 32
_Static_assert(__builtin_offsetof(struct otel_last, samples) == FIRN_OTEL_LAST_SAMPLES_OFF,
	       "user space reads the samples not yet folded at FIRN_OTEL_LAST_SAMPLES_OFF");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct otel_last);
} otel_last SEC(".maps");

/* Counts n more samples with a context: into c's count, folded into walker_stats by batches. */
static __always_inline void otel_count_samples(struct otel_last *c)
{
	__u32 k = FIRN_WALKER_STAT(FIRN_OTEL_TAG, FIRN_OTEL_SAMPLES);
	__u64 *v;

	if (++c->samples < OTEL_FOLD_EVERY)
		return;
	v = bpf_map_lookup_elem(&walker_stats, &k);
	if (v)
		*v += c->samples;
	c->samples = 0;
}

/* The thread's task storage with the slot of pid's variable (slot 0: not reachable), or fb
 * where no storage can be had now (another program holds it on this CPU; *own set to false);
 * NULL where pid's walker was not told of one. A thread whose storage holds the same image
 * and fs base needs no walker_procs lookup (its hash: bench/RESULTS.md); storage is made only
 * for threads of a process told of. */
static __always_inline struct otel_thread *otel_storage_of(struct task_struct *task, __u32 pid,
							   __u64 mm, __u64 fs,
							   struct otel_thread *fb, bool *own)
{
	struct otel_thread *t = bpf_task_storage_get(&otel_threads, task, 0, 0);

	*own = true;
	if (t && t->pid == pid && t->mm == mm && t->fs == fs && t->slot)
		return t;
	struct firn_otel_proc *p = walker_proc(FIRN_OTEL_TAG, pid);
	if (!p)
		return NULL;
	if (!t)
		t = bpf_task_storage_get(&otel_threads, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t) {
		*own = false;
		t = fb;
	}
	t->id = 0; /* another image (exec) or thread start: nothing found before holds */
	t->pid = pid;
	t->mm = mm;
	t->fs = fs;
	t->slot = otel_slot(p, fs);
	return t;
}

/* The thread's cache (this CPU's otel_last, holding task: the same image and fs base, its
 * storage's copy on a miss); *ts: its task storage where the miss loaded it (what a new record
 * is remembered in too), else NULL. NULL where pid's walker was not told of one. */
static __always_inline struct otel_last *otel_thread_of(struct task_struct *task, __u32 pid,
							struct otel_thread **ts)
{
	__u32 zero = 0;
	struct otel_last *c = bpf_map_lookup_elem(&otel_last, &zero);
	__u64 fs = task->thread.fsbase; /* a trusted pointer: a load, no helper call */
	__u64 mm = (__u64)task->mm;

	*ts = NULL;
	if (!c)
		return NULL;
	if (c->task == (__u64)task && c->t.pid == pid && c->t.mm == mm && c->t.fs == fs &&
	    c->t.slot)
		return c;
	bool own;
	struct otel_thread *t = otel_storage_of(task, pid, mm, fs, &c->t, &own);
	if (!t)
		return NULL;
	c->task = (__u64)task;
	if (own) {
		c->t = *t;
		*ts = t;
	}
	return c;
}

/* Whether the header at rec is the one t remembers, still valid: no attributes read. */
static __always_inline bool otel_same(const struct otel_thread *t, __u64 rec)
{
	__u64 h[4] = {};

	if (bpf_probe_read_user(h, FIRN_OTEL_HEADER, (void *)rec))
		return false; /* read again in full, counted there */
	return h[0] == t->head[0] && h[1] == t->head[1] && h[2] == t->head[2] &&
	       h[3] == t->head[3] && ((__u8 *)h)[FIRN_OTEL_VALID] == 1;
}

/* A sample whose record is c's: counted as a read one is, c's id. */
static __always_inline __u32 otel_hit(struct otel_last *c)
{
	const struct otel_thread *t = &c->t;

	otel_count_samples(c);
	if (*(__u16 *)((__u8 *)t->head + FIRN_OTEL_ATTRS_SIZE) > FIRN_OTEL_ATTRS)
		walker_count(FIRN_OTEL_TAG, FIRN_OTEL_TRUNCATED);
	return FIRN_CTX(FIRN_OTEL_TAG, t->id);
}

/* Remembers record rec (read into k) and its id for the thread's next sample; returns id.
 * FIRN_CTX_OTHER is not remembered: each sample of a full table is counted folded. */
static __always_inline __u32 otel_remember(struct otel_thread *t, const struct firn_otel_key *k,
					   __u64 rec, __u32 id, __u64 epoch)
{
	const __u64 *h = (const __u64 *)k->rec;

	if (id == FIRN_CTX_OTHER)
		return id;
	t->head[0] = h[0];
	t->head[1] = h[1];
	t->head[2] = h[2];
	t->head[3] = h[3] & 0xffffffffULL; /* little-endian: the header's last 4 bytes */
	t->rec = rec;
	t->id = id;
	t->epoch = epoch;
	return id;
}

#ifdef FIRN_OTEL_TIMING
/* By hand only (bench/otelctx_stages.sh): ns between otel_ctx's marks, per stage; off, none. */
struct otel_timing {
	__u64 last, sum[8], n[8];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct otel_timing);
} otel_timing SEC(".maps");

#define OTEL_MARK(tm, i)                                                \
	do {                                                            \
		__u64 now_ = bpf_ktime_get_ns(), d_ = now_ - (tm)->last; \
		if ((i) >= 0 && d_ < 20000) {                           \
			(tm)->sum[(i) & 7] += d_;                       \
			(tm)->n[(i) & 7]++;                             \
		}                                                       \
		(tm)->last = now_;                                      \
	} while (0)
#define OTEL_TM_GET(tm)                                                          \
	__u32 tz_ = 0;                                                           \
	struct otel_timing *tm = bpf_map_lookup_elem(&otel_timing, &tz_);        \
	if (!tm)                                                                 \
		return 0;
#else
#define OTEL_MARK(tm, i)
#define OTEL_TM_GET(tm)
#endif

/* The label context of the current thread (task) of process pid: FIRN_CTX(FIRN_OTEL_TAG, id)
 * of the record its otel_thread_ctx_v1 points to, 0 when none (or the reader is off). A thread
 * whose record is the one its last sample found (struct otel_thread) reuses that id. */
static __always_inline __u32 otel_ctx(__u32 pid, struct task_struct *task)
{
	if (!WALKER_ON(FIRN_OTEL_TAG)) /* first: off, the verifier drops the rest */
		return 0;
	OTEL_TM_GET(tm)
	OTEL_MARK(tm, -1);
	OTEL_MARK(tm, 0);
	__u32 zero = 0, *v;
	struct otel_thread *ts = NULL, *t;
	struct otel_last *c = pid ? otel_thread_of(task, pid, &ts) : NULL;
	__u64 rec = 0, epoch, *e;
	struct firn_otel_key *k;
	OTEL_MARK(tm, 2);

	if (!c || !c->t.slot)
		return 0;
	t = &c->t;
	e = bpf_map_lookup_elem(&otel_epoch, &zero);
	epoch = e ? *e : 0; /* read before the hash: an id found there is of this epoch */
	if (bpf_probe_read_user(&rec, sizeof(rec), (void *)t->slot)) {
		walker_count(FIRN_OTEL_TAG, FIRN_OTEL_BAD_READ);
		return 0;
	}
	OTEL_MARK(tm, 3);
	t->id = rec && rec == t->rec && t->id && t->epoch == epoch && otel_same(t, rec) ? t->id : 0;
	OTEL_MARK(tm, 4);
	if (t->id || !rec) { /* a cleared record forgets the last one */
		__u32 h = rec ? otel_hit(c) : 0;
		OTEL_MARK(tm, 5);
		return h;
	}
	k = bpf_map_lookup_elem(&otel_scratch, &zero);
	if (!k)
		return 0;
	__builtin_memset(k, 0, sizeof(*k));
	k->pid = pid;
	int rc = otel_read(k, t->slot, rec);
	if (rc < 0) {
		walker_count(FIRN_OTEL_TAG, -rc);
		return 0;
	}
	otel_count_samples(c);
	v = bpf_map_lookup_elem(&otel_ctxs, k);
	__u32 id = otel_remember(t, k, rec, v ? *v : otel_new_id(k), epoch);
	if (!ts) /* a hit on this CPU's copy: the storage, where it holds the same image */
		ts = bpf_task_storage_get(&otel_threads, task, 0, 0);
	if (ts && ts->pid == pid && ts->mm == t->mm && ts->fs == t->fs && ts->slot == t->slot)
		otel_remember(ts, k, rec, id, epoch); /* where a sample on another CPU finds it */
	return FIRN_CTX(FIRN_OTEL_TAG, id);
}
#endif
#endif
