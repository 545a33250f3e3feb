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
 * verifier budget). Its tag is no frame kind: it adds no frames. */
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

/* Its counters in walker_stats. */
enum firn_otel_stat {
	FIRN_OTEL_SAMPLES = 0, /* samples that carry a context */
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

/* The address of the thread's otel_thread_ctx_v1 (0: not reachable now). */
static __always_inline __u64 otel_slot(const struct firn_otel_proc *p, struct task_struct *task)
{
	__u64 fs = BPF_CORE_READ(task, thread.fsbase), dtv = 0, block = 0, module = p->module;

	if (p->how == FIRN_OTEL_FS)
		return fs + p->offset;
	if (p->how != FIRN_OTEL_DTV || !module || module > FIRN_OTEL_MODULE_MAX)
		return 0;
	if (bpf_probe_read_user(&dtv, sizeof(dtv), (void *)(fs + 8)) || !dtv ||
	    bpf_probe_read_user(&block, sizeof(block), (void *)(dtv + module * 16)))
		return 0;
	return block && block != ~0ULL ? block + p->offset : 0;
}

/* Reads the record slot points to into k: 1 read, 0 none attached, -1 counted (bad, torn). */
static __always_inline int otel_read(struct firn_otel_key *k, __u64 slot)
{
	__u64 rec = 0, again = 0;
	__u8 valid = 0;

	if (bpf_probe_read_user(&rec, sizeof(rec), (void *)slot))
		return -FIRN_OTEL_BAD_READ;
	if (!rec)
		return 0;
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

/* A new context's id, announced; FIRN_CTX_OTHER when the table is full (counted). */
static __always_inline __u32 otel_new_id(const struct firn_otel_key *k)
{
	__u32 id = (__u32)__sync_fetch_and_add(&otel_next_id, 1) + 1, *v;

	if (id >= FIRN_CTX_OTHER || bpf_map_update_elem(&otel_ctxs, k, &id, BPF_NOEXIST)) {
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

/* The label context of the current thread (task) of process pid: FIRN_CTX(FIRN_OTEL_TAG, id)
 * of the record its otel_thread_ctx_v1 points to, 0 when none (or the reader is off). */
static __always_inline __u32 otel_ctx(__u32 pid, struct task_struct *task)
{
	if (!WALKER_ON(FIRN_OTEL_TAG)) /* first: off, the verifier drops the rest */
		return 0;
	__u32 zero = 0, *v;
	struct firn_otel_proc *p = pid ? walker_proc(FIRN_OTEL_TAG, pid) : NULL;
	struct firn_otel_key *k = p ? bpf_map_lookup_elem(&otel_scratch, &zero) : NULL;
	__u64 slot = k ? otel_slot(p, task) : 0;

	if (!slot)
		return 0;
	__builtin_memset(k, 0, sizeof(*k));
	k->pid = pid;
	int rc = otel_read(k, slot);
	if (rc <= 0) {
		if (rc < 0)
			walker_count(FIRN_OTEL_TAG, -rc);
		return 0;
	}
	walker_count(FIRN_OTEL_TAG, FIRN_OTEL_SAMPLES);
	v = bpf_map_lookup_elem(&otel_ctxs, k);
	return FIRN_CTX(FIRN_OTEL_TAG, v ? *v : otel_new_id(k));
}
#endif
#endif
