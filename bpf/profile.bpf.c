// SPDX-License-Identifier: GPL-2.0
/* The sampler's core: a perf_event program on every CPU takes the user and kernel stacks of the
 * running task and counts them in the kernel, keyed by (pid, tid, user stack, kernel stack,
 * event). Here: the maps every program shares, the stacks' storage, the native unwinder, the
 * stack takers every event calls (take_stacks, count_hit) and the cpu-clock programs. The rest
 * is in a header per responsibility, included where what it uses is defined: the runtime
 * walkers (bpf/walkers.h's list, walkers_compose.bpf.h), the mappings found with the kernel
 * (unwind_vma.bpf.h), USDT probes (usdt_hit.bpf.h, with cuda.bpf.h and alloc.bpf.h), off-CPU
 * time (offcpu.bpf.h, offcpu_start.bpf.h), an event's own program (toy.bpf.h, the model), the
 * targets' lifecycle (procs.bpf.h). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
/* one spec per attached probe and argument layout: room for a JVM's hundreds of probes */
#define BPF_USDT_MAX_SPEC_CNT 1024
#include <bpf/usdt.bpf.h>
#include "firn.h"
#include "walkers.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space before load. */
const volatile __u32 filter_pids = 0;     /* 1: only processes in the targets map */
const volatile __u32 follow_children = 0; /* 1: children of targets become targets */
const volatile __u32 want_kernel = 1;
const volatile __u32 want_user = 1;
const volatile __u32 self_pid = 0;        /* firn itself, never sampled */
const volatile __u32 dwarf_unwind = 0;    /* 1: unwind user stacks with the CFI tables */
const volatile __u32 fp_fallback = 1;     /* 1: frame pointers where a mapping has no table */
const volatile __u32 off_cpu_runnable = 0; /* 1: preempted switch-outs are waits too */
const volatile __u64 off_cpu_min_ns = 0;   /* shorter waits are counted as short, not added */
const volatile __u32 off_cpu_rate = 1;     /* 1 switch-out in this many is sampled (weights x it) */
const volatile __u32 start_defer = 0;      /* 1: waits at the start get Python frames at exit */

/* Which counts map the program writes; user space flips it and drains the other. */
__u32 active_buf = 0;

/* Maps that only user space or process-context programs (exec, fork) write are not
 * preallocated: they take the memory of what they hold. Those the sampling programs write stay
 * preallocated: a new element in interrupt context or under the run-queue lock comes from a
 * small per-CPU cache refilled later, and an insert fails when a burst empties it (a lost
 * stack); user space sizes them to the recording instead. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct firn_key);
	__type(value, __u64);
} counts0 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct firn_key);
	__type(value, __u64);
} counts1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct firn_stack);
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct firn_comm);
} comms SEC(".maps");

/* Processes announced to user space: SEEN_NOW, or SEEN_BEFORE_EXEC when announced before an
 * exec and not since (the next sample announces the new image; the exit is told either way,
 * as user space keeps what it knew of the process until then: an exec'd program that ends
 * before its first sample was held to the end of the recording). One map, not two: each map
 * is a descriptor, and a tight `ulimit -n` is a case firn records under. */
enum { SEEN_NOW = 1, SEEN_BEFORE_EXEC = 2 };
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64); /* (64 bits: the compare-and-swap clang emits for -mcpu=v2) */
} seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FIRN_LOST_NR + 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

/* Stacks longer than FIRN_MAX_FRAMES (timed samples of deep Python stacks). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FIRN_BIG_STACKS);
	__type(key, __u64);
	__type(value, struct firn_big_stack);
} big_stacks SEC(".maps");

/* Scratch space for one stack (too large for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct firn_stack);
} scratch SEC(".maps");

/* DWARF unwinding: rows of every loaded table, in chunks of FIRN_ROWS_CHUNK rows that user space
 * creates as tables fill them (bpf/firn.h), so the rows take the memory of what is loaded, not
 * of the limit (the outer array is sized by user space); and per-process mappings. */
/* Never read: makes clang emit struct firn_row whole into BTF (the chunk's value type below is
 * otherwise only declared, and libbpf cannot size the chunks). */
const volatile struct firn_row firn_row_btf = {};

struct firn_rows_chunk {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, FIRN_ROWS_CHUNK);
	__type(key, __u32);
	__type(value, struct firn_row);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct firn_rows_chunk);
} unwind_rows SEC(".maps");

/* Row i of the rows array (NULL: its chunk is not created, or i is past the limit). Both
 * lookups are inlined by the verifier: every chunk has the template's size. */
static __always_inline struct firn_row *row_at(__u32 i)
{
	__u32 c = i >> FIRN_ROWS_CHUNK_SHIFT, k = i & (FIRN_ROWS_CHUNK - 1);
	void *chunk = bpf_map_lookup_elem(&unwind_rows, &c);

	return chunk ? bpf_map_lookup_elem(chunk, &k) : NULL;
}

/* pid → its mappings in unwind_umaps (looked up once per sample). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct firn_pid_maps);
} unwind_pids SEC(".maps");

/* The described mappings of every process, a run per process (sized by user space). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct firn_umap);
} unwind_umaps SEC(".maps");

/* Every loaded table by file (user space adds one as it loads it): the unwinder describes a
 * mapping that its process's description lacks from the VMA itself — a process not described
 * yet (its first milliseconds), libraries mapped since, more than FIRN_MAX_UMAPS mappings. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct firn_file_key);
	__type(value, struct firn_file);
} unwind_files SEC(".maps");

/* State of the unwind in progress on this CPU. It lives in a map, not on the BPF stack, so the
 * verifier sees unknown scalars and checks the bpf_loop callback once instead of per frame. */
struct firn_unwind_state {
	__u64 ip, sp, bp;
	__u32 first, count; /* the process's described mappings (count 0: none yet) */
	__u32 stop;   /* a firn_unwind_stop, or FIRN_UNW_NR while going on */
	__u32 exact;  /* ip is exact (leaf, or after a signal frame), not a return address */
	__u32 fp;     /* frames unwound by frame pointers */
	__u32 row_fp; /* of them, frames in a mapping with a table that had no row for the pc */
	__u64 unknown_pc; /* the first pc in no mapping with a table */
	__u32 vma;    /* frames whose mapping came from the VMA lookup */
	__u32 looked; /* bpf_find_vma was called: in interrupt context it works once per sample */
	__u32 pid;
	struct firn_umap found; /* the mapping of the current frame */
	__u64 emit;     /* what the stack gets for the current frame: ip, or a walker's frame */
	__u64 fp_frame; /* a walker's frame hook after a frame-pointer step: the frame's fp */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct firn_unwind_state);
} unwind_state SEC(".maps");

/* The user stack pages above sp, copied a page at a time when a frame first needs one: one copy
 * per page instead of one per saved register. */
#define FIRN_WINDOW_PAGES 4
#define FIRN_WINDOW (FIRN_WINDOW_PAGES * 4096)

struct firn_stack_window {
	__u64 base;    /* page of sp at the sample */
	__u32 loaded;  /* bit per page copied */
	__u32 remote;  /* 1: another task's stack (offcpu_start.bpf.h): only loaded pages are read */
	__u8 data[FIRN_WINDOW];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct firn_stack_window);
} stack_window SEC(".maps");

/* Reads a saved word of the user stack, through the page window when it covers addr. */
static __always_inline long read_stack(__u64 *out, __u64 addr)
{
	__u32 zero = 0;
	struct firn_stack_window *w = bpf_map_lookup_elem(&stack_window, &zero);
	__u64 off = addr - (w ? w->base : 0);

	if (!w || off >= FIRN_WINDOW || (addr & 7))
		return w && w->remote ? -14 : bpf_probe_read_user(out, sizeof(*out), (void *)addr);
	__u32 page = (off >> 12) & (FIRN_WINDOW_PAGES - 1);
	if (!(w->loaded & (1u << page))) {
		if (w->remote || bpf_probe_read_user(&w->data[page << 12], 4096, (void *)(w->base + (page << 12))))
			return bpf_probe_read_user(out, sizeof(*out), (void *)addr);
		w->loaded |= 1u << page;
	}
	*out = *(__u64 *)&w->data[off & (FIRN_WINDOW - 8)];
	return 0;
}

/* read_stack as a global function (out: 8 bytes, NULL-checked as the verifier asks), verified
 * once and not at each of its callers in the frame loop's callback. Called from the global
 * functions of that loop too (the walkers' frame hooks, firn_epilogue_step): a chain of calls may
 * use 512 bytes of stack in all, and on_usdt's with --cuda and the loop's leave little (a frame
 * hook keeps its scratch in a map of its own for that). */
__attribute__((noinline)) long firn_read_stack(__u64 *out, __u64 addr)
{
	return out ? read_stack(out, addr) : -14;
}

/* Whether the stack being unwound is another task's (its memory is not the current one's). */
static __always_inline bool window_remote(void)
{
	__u32 zero = 0;
	struct firn_stack_window *w = bpf_map_lookup_elem(&stack_window, &zero);

	return w && w->remote;
}

/* Set by a notice submitted without waking user space, cleared by the next one that wakes it. */
__u32 lazy_pending = 0;

/* The ring buffer's wake-up for a record just reserved. lazy: user space needs it by its next
 * wake-up, not now (an exit: nothing is left to read of the process), so it does not wake the
 * recorder (under process churn exits were 40 % of its wake-ups, each a context switch; an
 * exec is not lazy: the USDT watching and the unwinder read the new image while it lives). Any other record wakes it: adaptively (only when user space has read everything
 * before it), or by force when a lazy record may be waiting unread, which would keep the
 * adaptive test from ever firing. Read after the reserve, whose lock orders it after any
 * earlier record's setting of the flag. */
static __always_inline __u64 wake_flags(bool lazy)
{
	if (lazy) /* the caller set lazy_pending before its reserve */
		return BPF_RB_NO_WAKEUP;
	if (lazy_pending) {
		lazy_pending = 0;
		return BPF_RB_FORCE_WAKEUP;
	}
	return 0;
}

/* ---- runtime walkers, by tag (bpf/firn.h): what user space tells each of a process, their
 * outcomes, and which run in this object ---- */
const volatile __u32 walkers_on = 0;   /* tags (1 << FIRN_FRAME_KIND_*) whose walker runs here */
const volatile __u32 walkers_tail = 0; /* tags whose walker is a program of the unwinders array */
#define WALKER_ON(tag) (walkers_on & (1u << (tag)))

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 8192);
	__type(key, struct firn_walker_key);
	__type(value, struct firn_walker_proc);
} walker_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FIRN_FRAME_KINDS * FIRN_WALKER_STATS);
	__type(key, __u32);
	__type(value, __u64);
} walker_stats SEC(".maps");

/* What user space told the walker of tag about pid (NULL: nothing, not a process of it). */
static __always_inline void *walker_proc(__u32 tag, __u32 pid)
{
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "walker_proc builds struct firn_walker_key as one little-endian word"
#endif
	__u64 k = (__u64)pid << 32 | tag; /* struct firn_walker_key: one store (on_usdt's budget) */

	return bpf_map_lookup_elem(&walker_procs, &k);
}

/* Forgets what the walker of tag was told about pid (an exec, an exit). */
static __always_inline void walker_forget(__u32 tag, __u32 pid)
{
	struct firn_walker_key k = { .tag = tag, .pid = pid };

	bpf_map_delete_elem(&walker_procs, &k);
}

/* Counts one outcome i of the walker of tag. */
static __always_inline void walker_count(__u32 tag, __u32 i)
{
	__u32 k = FIRN_WALKER_STAT(tag, i);
	__u64 *v = bpf_map_lookup_elem(&walker_stats, &k);

	if (v)
		(*v)++;
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FIRN_UNW_NR);
	__type(key, __u32);
	__type(value, __u64);
} unwind_stats SEC(".maps");

/* When each process last asked user space to look at its mappings again (rate limit). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} refresh_asked SEC(".maps");

#define FIRN_REFRESH_NS 50000000ULL

/* Total samples seen by the program (index FIRN_LOST_NR of the lost array). */
static __always_inline void count_lost(__u32 reason)
{
	__u64 *v = bpf_map_lookup_elem(&lost, &reason);

	if (v)
		(*v)++;
}

/* True when the event interrupted user mode (the context's registers are the user's). ctx is
 * the program's context: a perf_event's (whose regs come first) or a uprobe's (the registers;
 * always the user's). */
static __always_inline bool user_mode(void *ctx)
{
	/* a 2-byte context load is rejected: read cs as the 8-byte word it starts */
	__u64 cs = *(volatile __u64 *)(ctx + __builtin_offsetof(struct pt_regs, cs));

	return (cs & 3) == 3;
}

static __always_inline void send_event_addr(__u32 type, __u32 pid, __u64 addr, bool lazy)
{
	if (lazy) /* before the reserve: see wake_flags */
		lazy_pending = 1;
	struct firn_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		count_lost(FIRN_LOST_EVENTS_FULL);
		return;
	}
	e->type = type;
	e->pid = pid;
	e->addr = addr;
	bpf_ringbuf_submit(e, wake_flags(lazy));
}

static __always_inline void send_event(__u32 type, __u32 pid, bool lazy)
{
	send_event_addr(type, pid, 0, lazy);
}

/* The id of a stack that could not be stored (the sample is dropped and counted as lost). */
#define FIRN_STACK_LOST (~0ULL)

/* Keeps the compiler from turning arithmetic back into branches (each branch of a binary search
 * would double the verifier's states). */
#define opaque(x) asm volatile("" : "+r"(x))

#define FIRN_HASH_BLOCK 8

/* Content hash of a stack (never 0: "no stack", nor FIRN_STACK_LOST). Hashed in blocks of
 * FIRN_HASH_BLOCK frames, the frames past len of the last block as 0 (a mask, no branch): the
 * verifier follows 16 blocks instead of 127 frames, each a branch. A global function: verified
 * once, not once per call and state of its callers (that was 8k instructions a stack). */
__attribute__((noinline)) __u64 firn_stack_hash(const struct firn_stack *s)
{
	if (!s)
		return 1;
	__u64 len = s->len, h = 0xcbf29ce484222325ULL ^ len;

	for (__u32 b = 0; b < FIRN_MAX_FRAMES; b += FIRN_HASH_BLOCK) {
		if (b >= len)
			break;
#pragma unroll
		for (__u32 j = 0; j < FIRN_HASH_BLOCK; j++) {
			__u64 i = b + j;
			if (i >= FIRN_MAX_FRAMES)
				break;
			__s64 d = i - len; /* < 0: a frame of the stack */
			opaque(d);
			h = (h ^ (s->ips[i] & (__u64)(d >> 63))) * 0x100000001b3ULL;
			h ^= h >> 29;
		}
	}
	return h && h != FIRN_STACK_LOST ? h : 1;
}

/* Stores the stack in scratch s in the stacks map; returns its id, or FIRN_STACK_LOST when the
 * map is full. *fresh: this call added it (the sample must remove it if it is dropped). Most
 * stacks are there already: one lookup, no update (which takes the bucket's lock) for those. */
static __always_inline __u64 store_stack(struct firn_stack *s, bool *fresh)
{
	s->pad = 0;
	__u64 id = firn_stack_hash(s);
	*fresh = false;
	if (bpf_map_lookup_elem(&stacks, &id))
		return id;
	*fresh = !bpf_map_update_elem(&stacks, &id, s, BPF_NOEXIST);
	if (!*fresh && !bpf_map_lookup_elem(&stacks, &id))
		return FIRN_STACK_LOST;
	return id;
}

#include "walkers_compose.bpf.h"

/* Stores stack s (NULL or empty: none) like store_stack; returns its id, 0 or FIRN_STACK_LOST. */
static __always_inline __u64 store_taken(struct firn_stack *s, bool *fresh)
{
	return s && s->len ? store_stack(s, fresh) : 0;
}

/* Takes one stack with bpf_get_stack into scratch slot idx (len 0: none). */
static __always_inline struct firn_stack *take_stack(void *ctx, __u32 idx, __u64 flags,
						     __u32 fail_reason)
{
	struct firn_stack *s = bpf_map_lookup_elem(&scratch, &idx);

	if (!s)
		return NULL;
	long n = bpf_get_stack(ctx, s->ips, sizeof(s->ips), flags);
	s->len = n > 0 ? n / sizeof(__u64) : 0;
	/* -EFAULT for the kernel stack of a user-mode sample: simply no kernel stack */
	if (n < 0 && n != -14)
		count_lost(fail_reason);
	return s;
}

/* 1 when a <= b (both below 2^63), computed without a branch. */
static __always_inline __u64 le_mask(__u64 a, __u64 b)
{
	__u64 d = b - a;

	opaque(d);
	return ~(d >> 63) & 1;
}

/* The described mapping of the process containing pc (branch-free binary search over its run
 * of the pool, sorted by start), or NULL. */
static __always_inline struct firn_umap *find_umap(__u32 first, __u32 count, __u64 pc)
{
	__u32 lo = first, n = count;

	if (n == 0 || n > FIRN_MAX_UMAPS)
		return NULL;
	for (int i = 0; i < 13 && n > 1; i++) {
		__u32 half = n >> 1, mid = lo + half;
		struct firn_umap *m = bpf_map_lookup_elem(&unwind_umaps, &mid);
		if (!m)
			return NULL;
		__u64 take = le_mask(m->start, pc);
		lo += take * half;
		n -= half;
	}
	struct firn_umap *m = bpf_map_lookup_elem(&unwind_umaps, &lo);
	if (!m || pc < m->start || pc >= m->end)
		return NULL;
	return m;
}

/* The rows of a table that may cover vaddr, from its page index (bpf/firn.h): the first one's
 * index in the rows array (*lo) and their number (*n); false when vaddr is before the table. */
static __always_inline bool page_rows(__u32 start, __u32 count, __u64 vaddr, __u32 *lo, __u32 *n)
{
	struct firn_row *r = row_at(start);

	if (!r)
		return false;
	struct firn_table_head h = *(struct firn_table_head *)r;
	__u64 page = vaddr >> (h.shift & 31);
	if (page < h.first_page)
		return false;
	__u32 k = page - h.first_page, rows = start + FIRN_INDEX_ROWS(h.pages);
	if (page - h.first_page >= h.pages) { /* past the last row's page: the last row */
		*lo = rows + count - 1;
		*n = 1;
		return true;
	}
	__u32 i = start + 1 + k, j = i + 1;
	struct firn_row *a = row_at(i);
	struct firn_row *b = row_at(j);
	if (!a || !b)
		return false;
	*lo = rows + a->pc;
	*n = b->pc - a->pc + 1;
	return true;
}

/* The row covering vaddr in a table (the last one with row.pc <= vaddr; branch-free search of
 * the rows of its page), or NULL. */
static __always_inline struct firn_row *search_row(__u32 start, __u32 count, __u64 vaddr)
{
	__u32 lo, n;

	if (!count || vaddr > 0xffffffffULL || !page_rows(start, count, vaddr, &lo, &n))
		return NULL;
	for (int i = 0; i < 24 && n > 1; i++) {
		__u32 half = n >> 1, mid = lo + half;
		struct firn_row *r = row_at(mid);
		if (!r)
			return NULL;
		__u64 take = le_mask(r->pc, vaddr);
		lo += take * half;
		n -= half;
	}
	struct firn_row *r = row_at(lo);
	return r && r->pc <= vaddr ? r : NULL;
}

/* The rows found last on this CPU, by (table, vaddr): a profile meets the same return addresses
 * sample after sample (and a recursion frame after frame), and a hit takes one lookup instead
 * of the page index and the binary search (~20 row lookups). Rows never change once a table is
 * registered (the rows array only grows: lib/unwind/unwind.c), so an entry never goes stale.
 * Direct-mapped, per CPU. */
#define FIRN_ROW_CACHE 512

struct firn_row_cache {
	struct {
		__u64 row; /* struct firn_row, read and written as one word */
		__u64 tag; /* 1 + (row_start << 32 | vaddr); 0: empty */
	} e[FIRN_ROW_CACHE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct firn_row_cache);
} row_cache SEC(".maps");

/* The cache entry of (start, vaddr) (row, then tag) and its tag in *tag (NULL: no cache). */
static __always_inline __u64 *row_cache_slot(__u32 start, __u64 vaddr, __u64 *tag)
{
	__u32 zero = 0;
	struct firn_row_cache *c = bpf_map_lookup_elem(&row_cache, &zero);

	*tag = 1 + ((__u64)start << 32 | vaddr);
	if (!c)
		return NULL;
	__u32 i = (*tag * 0x9e3779b97f4a7c15ULL) >> 40;
	return &c->e[i & (FIRN_ROW_CACHE - 1)].row;
}

/* The row covering vaddr in a table (the last one with row.pc <= vaddr), copied into *out: from
 * the cache, else by search_row (then cached). False: none. A program nested in this one (an
 * NMI's) may rewrite the entry between the two reads of a hit: the row is read first and the
 * tag checked after, so a rewritten entry is a miss, never a wrong row. */
static __always_inline bool find_row(__u32 start, __u32 count, __u64 vaddr, struct firn_row *out)
{
	__u64 tag = 0, *e = count && vaddr <= 0xffffffffULL ? row_cache_slot(start, vaddr, &tag) : NULL;

	if (e) {
		__u64 row = e[0];
		asm volatile("" ::: "memory");
		if (e[1] == tag) {
			__builtin_memcpy(out, &row, sizeof(*out));
			return true;
		}
	}
	struct firn_row *r = search_row(start, count, vaddr);
	if (!r)
		return false;
	*out = *r;
	if (e) { /* emptied while the row is written: a nested reader misses */
		e[1] = 0;
		asm volatile("" ::: "memory");
		__builtin_memcpy(&e[0], out, sizeof(*out));
		asm volatile("" ::: "memory");
		e[1] = tag;
	}
	return true;
}

/* find_row as a global function (out NULL-checked as the verifier asks): the row cache's and
 * the search's paths verified once, not with each state of the frame loop's callback that
 * reaches them (issue 51: on_sample 14,640 -> 13,448 verified instructions). Returns 1 when
 * *out has the row. */
__attribute__((noinline)) int firn_find_row(__u32 start, __u32 count, __u64 vaddr, struct firn_row *out)
{
	return out ? find_row(start, count, vaddr, out) : 0;
}

/* No user memory below this (the null page) nor from FIRN_USER_END on (x86-64 user space ends
 * below 2^56 even with 5-level paging). */
#define FIRN_USER_START 4096ULL
#define FIRN_USER_END (1ULL << 56)

/* A frame-pointer step (code without a table); false when the chain ends or breaks. A bp that
 * cannot be a user address ends it without a read: the walk of a frame whose caller keeps no
 * frame pointer (main, called by a libc built without them) reads the caller's rbp, often a
 * small number, and the read of it failed only after a page fault (650 ns a stack on a VM). */
static __always_inline bool fp_step(struct firn_unwind_state *u)
{
	__u64 frame[2];

	if (u->bp < FIRN_USER_START || u->bp >= FIRN_USER_END || firn_read_stack(&frame[0], u->bp) ||
	    firn_read_stack(&frame[1], u->bp + 8))
		return false;
	u->sp = u->bp + 16;
	u->bp = frame[0];
	u->ip = frame[1];
	u->fp++;
	return u->ip != 0;
}

/* Steps out of code without a table by running its epilogue when ip is at one: `add $n, %rsp;
 * ret`, `pop %rbp; ret` or `ret`. CPython 3.12/3.13's -X perf trampolines (sub $8, %rsp; call
 * *%rcx; add $8, %rsp; ret) keep no frame pointer, so fp_step cannot pass them; rbp is theirs
 * untouched. Counted with the frame-pointer steps (u->fp). A global function (u NULL-checked as
 * the verifier asks), verified once and not with each state the frame loop's callback is
 * entered with. Returns 1 when stepped. */
__attribute__((noinline)) int firn_epilogue_step(struct firn_unwind_state *u)
{
	if (!u)
		return 0;
	__u8 c[5];
	__u64 skip = 0;

	if (window_remote() || bpf_probe_read_user(c, sizeof(c), (void *)u->ip))
		return false;
	if (c[0] == 0x48 && c[1] == 0x83 && c[2] == 0xc4 && !(c[3] & 0x87) && c[4] == 0xc3)
		skip = c[3]; /* add $imm8 (a multiple of 8, < 128), %rsp; ret */
	else if (c[0] == 0x5d && c[1] == 0xc3 && !firn_read_stack(&skip, u->sp))
		u->bp = skip, skip = 8; /* pop %rbp; ret */
	else if (c[0] != 0xc3)
		return false;
	if (firn_read_stack(&u->ip, u->sp + skip))
		return false;
	u->sp += skip + 8;
	u->fp++;
	return u->ip != 0;
}

/* The caller's registers from the ucontext a signal trampoline's frame holds at sp. */
static __always_inline bool signal_step(struct firn_unwind_state *u)
{
	__u64 gregs[7]; /* uc_mcontext.gregs[10..16]: rbp, rbx, rdx, rax, rcx, rsp, rip */

	if (window_remote() || bpf_probe_read_user(gregs, sizeof(gregs), (void *)(u->sp + 40 + 10 * 8)))
		return false;
	u->bp = gregs[0];
	u->sp = gregs[5];
	u->ip = gregs[6];
	u->exact = 1;
	return true;
}

/* Applies a CFA row: computes the CFA, reads the return address and the saved rbp. */
static __always_inline __u32 cfa_step(struct firn_unwind_state *u, struct firn_row *r)
{
	__u64 cfa, ra;

	if (r->type == FIRN_ROW_CFA_RSP)
		cfa = u->sp + r->cfa_off;
	else if (r->type == FIRN_ROW_CFA_RBP)
		cfa = u->bp + r->cfa_off;
	else
		cfa = u->sp + r->cfa_off + ((u->ip & 15) >= (__u64)r->rbp_off8 ? 8 : 0);
	if (firn_read_stack(&ra, cfa - 8))
		return FIRN_UNW_BAD_READ;
	if (r->rbp_off8 && r->type != FIRN_ROW_PLT && firn_read_stack(&u->bp, cfa + r->rbp_off8 * 8))
		return FIRN_UNW_BAD_READ;
	u->sp = cfa;
	u->ip = ra;
	u->exact = 0;
	return ra ? FIRN_UNW_NR : FIRN_UNW_COMPLETE;
}

#include "sw_timing.bpf.h"
#include "unwind_vma.bpf.h"

/* Finds the caller's registers for the frame at u->ip; returns a firn_unwind_stop or FIRN_UNW_NR. */
static __always_inline __u32 unwind_step(struct firn_unwind_state *u)
{
	/* --call-graph fp: the frame-pointer chain only (read through the stack window) */
	if (!dwarf_unwind)
		return fp_step(u) ? FIRN_UNW_NR : FIRN_UNW_COMPLETE;
	__u64 pc = u->exact ? u->ip : u->ip - 1;
	struct firn_umap *m = firn_lookup_umap(u, pc) ? &u->found : NULL;
	struct firn_row row, *r = NULL;
	if (m && firn_find_row(m->row_start, m->row_count, pc - m->bias, &row))
		r = &row;
	__u32 stop = m ? FIRN_UNW_NO_ROW : FIRN_UNW_NO_MAPPING;

	if (!r || r->type == FIRN_ROW_GAP) {
		/* no table (JIT code), or a table without a row for pc (a JIT runtime's builtins
		 * embedded in its text, node's, have no FDE): this frame by frame pointer (auto),
		 * the caller's by its table again where it has one */
		if (!m && !u->unknown_pc)
			u->unknown_pc = pc;
		if (!fp_fallback || !(firn_epilogue_step(u) || fp_step(u)))
			return stop;
		u->row_fp += m != NULL;
		u->exact = 0;
		return FIRN_UNW_NR;
	}
	if (r->type == FIRN_ROW_END)
		return FIRN_UNW_COMPLETE;
	if (r->type == FIRN_ROW_UNSUPPORTED)
		return FIRN_UNW_UNSUPPORTED;
	if (r->type == FIRN_ROW_SIGNAL)
		return signal_step(u) ? FIRN_UNW_NR : FIRN_UNW_BAD_READ;
	return cfa_step(u, r);
}

/* One frame (bpf_loop callback): record ip, then step to the caller. Returns 1 to stop. */
static long unwind_frame(__u32 i, void *arg)
{
	__u32 zero = 0;
	struct firn_unwind_state *u = bpf_map_lookup_elem(&unwind_state, &zero);
	struct firn_stack *out = bpf_map_lookup_elem(&scratch, &zero);

	if (!u || !out)
		return 1;
	__u32 n = out->len;
	if (n >= FIRN_MAX_FRAMES) {
		u->stop = FIRN_UNW_DEPTH;
		return 1;
	}
	out->len = n + 1;
	/* the walkers' frame hooks (bpf/walkers.h): before the native step, which one may take */
	u->emit = u->ip;
	u->fp_frame = 0;
	if (walkers_frame(u, false) != FIRN_FRAME_STEPPED) {
		__u64 fp = u->bp;
		__u32 fps = u->fp;
		u->stop = unwind_step(u);
		if (u->fp != fps) { /* by frame pointer: code without a table, a JIT's */
			u->fp_frame = fp;
			walkers_frame(u, true);
		}
	}
	out->ips[n] = u->emit;
	return u->stop != FIRN_UNW_NR;
}

/* Asks user space (at most every FIRN_REFRESH_NS per process) to load the tables of code mapped
 * since the process was described: libraries mapped by ld.so after exec, dlopen. */
static __always_inline void ask_refresh(__u32 pid, __u64 pc)
{
	__u64 now = bpf_ktime_get_ns(), *last = bpf_map_lookup_elem(&refresh_asked, &pid);

	if (last && now - *last < FIRN_REFRESH_NS)
		return;
	bpf_map_update_elem(&refresh_asked, &pid, &now, BPF_ANY);
	send_event_addr(FIRN_EV_UNKNOWN_CODE, pid, pc, false);
}

static __always_inline void count_unwind(__u32 reason)
{
	if (!dwarf_unwind) /* the statistics of the CFI unwinder */
		return;
	__u64 *v = bpf_map_lookup_elem(&unwind_stats, &reason);

	if (v)
		(*v)++;
}

/* Whether addr follows a call instruction, as a return address does: call rel32, or call
 * through a register or memory (FF /2, 2 to 7 bytes). Data is rarely so, and an address in no
 * mapping cannot be read. */
static __always_inline bool after_call(__u64 addr)
{
	__u8 b[8];

	if (addr < 4096 || bpf_probe_read_user(b, sizeof(b), (void *)(addr - 8)))
		return false;
	return b[3] == 0xe8 || (b[6] == 0xff && ((b[7] >> 3) & 7) == 2) ||
	       (b[5] == 0xff && ((b[6] >> 3) & 7) == 2) || (b[4] == 0xff && ((b[5] >> 3) & 7) == 2) ||
	       (b[2] == 0xff && ((b[3] >> 3) & 7) == 2) || (b[1] == 0xff && ((b[2] >> 3) & 7) == 2);
}

/* --call-graph fp: drops the outermost frame when it is no return address. Code without frame
 * pointers (ld.so's start-up, a libc built without them) leaves rbp holding data, and the walk
 * takes one more "frame" from it before the chain breaks: an [unknown] frame at the root. */
static __always_inline void fp_trim_root(struct firn_stack *s)
{
	__u64 n = s->len, last = n - 1;

	opaque(last); /* the check is on the register the load uses */
	if (n >= 2 && last < FIRN_MAX_FRAMES && !after_call(s->ips[last]))
		s->len = n - 1;
}

/* Unwinds the user stack of the current task with the CFI tables (frame pointers only without
 * dwarf_unwind) into scratch slot 0 (len 0: none). regs_ctx: ctx holds the interrupted registers (see user_mode); otherwise (a
 * tracepoint's context) the task is in the kernel and its user registers are the saved ones. */
static __always_inline struct firn_stack *dwarf_stack(void *ctx, bool regs_ctx, __u32 pid,
						      struct firn_pid_maps *maps,
						      struct task_struct *task)
{
	__u32 zero = 0;
	struct firn_stack *s = bpf_map_lookup_elem(&scratch, &zero);
	struct firn_unwind_state *u = bpf_map_lookup_elem(&unwind_state, &zero);

	if (!s || !u)
		return NULL;
	s->len = 0;
	if (!pid) {
		count_unwind(FIRN_UNW_NO_USER);
		return s;
	}
	if (regs_ctx && user_mode(ctx)) {
		struct pt_regs *regs = ctx;
		u->ip = regs->ip;
		u->sp = regs->sp;
		u->bp = regs->bp;
	} else {
		struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
		u->ip = BPF_CORE_READ(regs, ip);
		u->sp = BPF_CORE_READ(regs, sp);
		u->bp = BPF_CORE_READ(regs, bp);
	}
	if (!u->ip) {
		count_unwind(FIRN_UNW_NO_USER);
		return s;
	}
	struct firn_stack_window *w = bpf_map_lookup_elem(&stack_window, &zero);
	if (w) {
		w->base = u->sp & ~4095ULL;
		w->loaded = 0;
		w->remote = 0;
	}
	/* none for a process not described yet: its mappings come from the VMA lookup */
	u->first = maps ? maps->first : 0;
	u->count = maps ? maps->count : 0;
	u->stop = FIRN_UNW_NR;
	u->exact = 1;
	u->fp = 0;
	u->row_fp = 0;
	u->unknown_pc = 0;
	u->vma = 0;
	u->looked = 0;
	u->pid = pid;
	u->found.row_count = 0;
	walkers_begin(pid);
	bpf_loop(FIRN_MAX_FRAMES, unwind_frame, NULL, 0);
	if (!dwarf_unwind) {
		fp_trim_root(s);
		return s;
	}
	count_unwind(u->stop < FIRN_UNW_NR ? u->stop : FIRN_UNW_DEPTH);
	if (u->fp)
		count_unwind(FIRN_UNW_FP_FALLBACK);
	if (u->vma)
		count_unwind(FIRN_UNW_VMA);
	if (u->row_fp)
		count_unwind(FIRN_UNW_ROW_FALLBACK);
	/* mappings found with the VMA lookup: user space describes them (rate-limited); not for a
	 * task past its exit_mm, which has none left to describe (the ask's wake-up: ~4 us) */
	if ((u->fp || u->stop == FIRN_UNW_NO_MAPPING || u->vma) && BPF_CORE_READ(task, mm))
		ask_refresh(pid, u->unknown_pc);
	return s;
}

/* Records thread and process names of task (current or not) when the map lacks the thread (user
 * space deletes what it has read, so names are sent again after each drain while the thread
 * runs). */
static __always_inline void note_comm(__u32 tid, struct task_struct *task)
{
	struct firn_comm c;

	if (bpf_map_lookup_elem(&comms, &tid))
		return;
	BPF_CORE_READ_STR_INTO(&c.thread, task, comm);
	struct task_struct *leader = BPF_CORE_READ(task, group_leader);
	BPF_CORE_READ_STR_INTO(&c.process, leader, comm);
	bpf_map_update_elem(&comms, &tid, &c, BPF_NOEXIST);
}

/* Adds value (1 for a hit, nanoseconds for a wait) to key's count; false when the counts map is
 * full (the caller counts the loss). */
static __always_inline bool add_value(struct firn_key *key, __u64 value)
{
	void *map = active_buf ? (void *)&counts1 : (void *)&counts0;
	__u64 *v = bpf_map_lookup_elem(map, key);

	if (v) {
		__sync_fetch_and_add(v, value);
		return true;
	}
	if (bpf_map_update_elem(map, key, &value, BPF_NOEXIST)) {
		v = bpf_map_lookup_elem(map, key);
		if (!v)
			return false;
		__sync_fetch_and_add(v, value);
	}
	return true;
}

/* A dropped sample stored stack id itself (fresh): remove it, or nothing would ever drain it. */
static __always_inline void drop_stack(__u64 id, bool fresh)
{
	if (fresh && id && id != FIRN_STACK_LOST)
		bpf_map_delete_elem(&stacks, &id);
}

/* Whether process pid is recorded (a target; never firn itself), its cgroup aside. */
static __always_inline bool pid_is_target(__u32 pid)
{
	if (pid == self_pid && pid)
		return false;
	return !filter_pids || bpf_map_lookup_elem(&targets, &pid);
}

#include "cgroup_filter.bpf.h"

/* Whether the current process is recorded: a target, in the cgroups of --cgroup (if any). */
static __always_inline bool is_target(__u32 pid)
{
	return pid_is_target(pid) && cgroup_current_in();
}

/* Tells user space about a process at its first sample (look before updating: an LRU update
 * allocates an element even when the key exists). A task with no memory (a kernel thread, a
 * process past its exit_mm) has nothing user space could read while it lives: its notice waits
 * for the next wake-up (lazy), sparing the sample the ring buffer's wake-up, its irq_work (the
 * send 4.3 us of the sample's run time, 0.45 lazy; 1 in 7 of the notices of -a on a busy host). */
static __always_inline void announce(__u32 pid)
{
	__u64 now = SEEN_NOW, *v = pid ? bpf_map_lookup_elem(&seen, &pid) : NULL;

	if (!pid || (v && *v == SEEN_NOW))
		return;
	/* one sample announces: the first to insert, or to turn an exec's mark back */
	if (v ? __sync_val_compare_and_swap(v, SEEN_BEFORE_EXEC, SEEN_NOW) == SEEN_BEFORE_EXEC
	      : !bpf_map_update_elem(&seen, &pid, &now, BPF_NOEXIST)) {
		SW_ANNOUNCED();
		SW_MARK(6);
		send_event(FIRN_EV_NEW_PROCESS, pid, !BPF_CORE_READ(bpf_get_current_task_btf(), mm));
	}
}

/* Takes the native stacks of the current task into scratch: *user (slot 0) and *kernel (slot 1),
 * either NULL or empty when not taken. regs_ctx: see dwarf_stack (false: the task is in the
 * kernel, as at a tracepoint). */
static __always_inline void take_native_stacks(void *ctx, bool regs_ctx, __u32 pid,
					       struct task_struct *task, struct firn_stack **user,
					       struct firn_stack **kernel)
{
	*user = *kernel = NULL;
	if (want_user && dwarf_unwind) {
		/* every sample is unwound (and counted): one of a process not described yet too */
		struct firn_pid_maps *maps = pid ? bpf_map_lookup_elem(&unwind_pids, &pid) : NULL;
		*user = dwarf_stack(ctx, regs_ctx, pid, maps, task);
	} else if (want_user && pid) {
		/* frame pointers walked here, not by bpf_get_stack: its walk reads each frame from
		 * user memory on its own, the stack window a page at a time */
		*user = dwarf_stack(ctx, regs_ctx, pid, NULL, task);
	}
	/* a sample taken in user mode has no kernel stack: skip the helper call */
	SW_MARK(1);
	if (want_kernel && !(regs_ctx && user_mode(ctx)))
		*kernel = take_stack(ctx, 1, 0, FIRN_LOST_KERNEL_STACK);
	SW_MARK(2);
}

/* Takes the stacks of the current task as take_native_stacks does, the walkers' frames added
 * (their stack hooks): the one stack-taking path of every event but cpu-clock samples (whose
 * walkers of a program of their own run there: on_sample). Returns the id of the user stack
 * when a walker stored it in big_stacks (regs_ctx: a timed sample's may be long), else 0. */
static __always_inline __u64 take_stacks(void *ctx, bool regs_ctx, __u32 pid,
					 struct task_struct *task, struct firn_stack **user,
					 struct firn_stack **kernel)
{
	take_native_stacks(ctx, regs_ctx, pid, task, user, kernel);
	return *user ? walkers_stack(*user, regs_ctx, FIRN_W_ALL) : 0;
}

/* Counts value under key with these stacks (stored now): on failure the sample is dropped and
 * counted as lost, at lost_base + FIRN_LOST_COUNTS_FULL or FIRN_LOST_STACKS_FULL of stats. */
static __always_inline bool count_stacks(struct firn_key *key, struct firn_stack *user,
					 struct firn_stack *kernel, __u64 value, void *stats,
					 __u32 counts_full, __u32 stacks_full)
{
	bool ufresh = false, kfresh = false;

	key->ustack = key->ustack ? key->ustack : store_taken(user, &ufresh);
	key->kstack = store_taken(kernel, &kfresh);
	/* a sample whose stack could not be stored is dropped, not kept stackless: every sample
	 * taken is either counted or lost, by reason */
	__u32 reason = key->ustack == FIRN_STACK_LOST || key->kstack == FIRN_STACK_LOST ?
			       stacks_full : add_value(key, value) ? ~0u : counts_full;
	if (reason == ~0u)
		return true;
	__u64 *v = bpf_map_lookup_elem(stats, &reason);
	if (v)
		(*v)++;
	drop_stack(key->ustack, ufresh);
	drop_stack(key->kstack, kfresh);
	return false;
}

/* Takes the stacks of the current task and counts them under event: the body of the programs
 * that count a hit (a USDT probe's, an event's own program). regs_ctx: ctx holds the task's
 * registers (a probe's), else the task's saved user registers are read (a tracepoint's). */
static __always_inline int count_hit(void *ctx, bool regs_ctx, __u32 event)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id;
	struct firn_key key = {};
	struct firn_stack *user, *kernel;

	if (!is_target(pid))
		return 0;
	count_lost(FIRN_LOST_NR);
	struct task_struct *task = bpf_get_current_task_btf();
	announce(pid);
	note_comm(tid, task);
	key.pid = pid;
	key.tid = tid;
	key.event = event;
	/* a user stack stored in big_stacks already (0: none) */
	key.ustack = take_stacks(ctx, regs_ctx, pid, task, &user, &kernel);
	count_stacks(&key, user, kernel, 1, &lost, FIRN_LOST_COUNTS_FULL, FIRN_LOST_STACKS_FULL);
	return 0;
}

/* ---- cpu-clock samples: one program per unwinder, composed by tail calls ----
 * on_sample takes the native stacks (the DWARF or frame-pointer unwinder) and the kernel's into
 * scratch; a sample of a process that runs an interpreter then goes on in that walker's
 * program (the unwinders array, indexed by the walker's tag: on_sample_NAME, made below from
 * its bpf/walkers.h row's FIRN_PROG), which runs its stack hook and counts the sample. Each
 * walker's program is verified and loaded on its own, when user space first needs it, and put
 * in its slot: enabling a runtime neither reloads nor re-attaches the rest. An empty slot (not
 * loaded yet): the tail call falls through, the sample keeps its native frames. The stack
 * hooks of FIRN_NO_PROG rows run in on_sample itself. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, FIRN_FRAME_KINDS);
	__type(key, __u32);
	__type(value, __u32);
} unwinders SEC(".maps");

/* Counts the sample whose stacks are in scratch (slots 0 and 1, len 0: none; ustack: a user stack
 * already stored in big_stacks, or 0): the end of on_sample and of every runtime's program. */
static __always_inline int count_sample(__u64 ustack, __u32 ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 zero = 0, one = 1;
	struct firn_key key = { .pid = id >> 32, .tid = (__u32)id, .ustack = ustack, .ctx = ctx };
	struct firn_stack *user = bpf_map_lookup_elem(&scratch, &zero);
	struct firn_stack *kernel = bpf_map_lookup_elem(&scratch, &one);

	SW_MARK(3);
	count_stacks(&key, user, kernel, 1, &lost, FIRN_LOST_COUNTS_FULL, FIRN_LOST_STACKS_FULL);
	SW_END();
	return 0;
}

/* The user stack on_sample took into scratch slot 0, or NULL when it has no frames. */
static __always_inline struct firn_stack *sampled_user(void)
{
	__u32 zero = 0;
	struct firn_stack *user = bpf_map_lookup_elem(&scratch, &zero);

	return user && user->len ? user : NULL;
}

/* Empties the scratch slot of a stack that was not taken (count_sample reads both slots). */
static __always_inline void untaken(struct firn_stack *s, __u32 slot)
{
	struct firn_stack *e = s ? NULL : bpf_map_lookup_elem(&scratch, &slot);

	if (e)
		e->len = 0;
}

/* A sample of a process that a tail-called walker (walkers_tail) was told of goes on in that
 * walker's program; returns only where none was, or its slot is empty. */
static __always_inline void tail_to_walker(struct bpf_perf_event_data *ctx, __u32 pid)
{
	__u32 tails = walkers_tail; /* read once: the verifier knows it, the dead tags go */

#pragma unroll
	for (__u32 tag = 1; tag < FIRN_FRAME_KINDS; tag++)
		if ((tails & (1u << tag)) && walker_proc(tag, pid))
			bpf_tail_call(ctx, &unwinders, tag);
}

/* The label context of a cpu-clock sample of pid (walkers_ctx of the current task, the rows
 * that run in on_sample) as a global function: verified once, not once per state on_sample
 * reaches its end with (issue 51). */
__attribute__((noinline)) __u32 firn_sample_ctx(__u32 pid)
{
	return walkers_ctx(pid, bpf_get_current_task_btf(), FIRN_W_INLINE);
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32;
	struct firn_stack *user, *kernel;

	if (!is_target(pid))
		return 0;
	count_lost(FIRN_LOST_NR);
	struct task_struct *task = bpf_get_current_task_btf();
	SW_BEGIN(ctx, pid, task);
	announce(pid);
	SW_MARK(4);
	note_comm((__u32)id, task);
	SW_MARK(0);
	take_native_stacks(ctx, true, pid, task, &user, &kernel);
	untaken(user, 0);
	untaken(kernel, 1);
	__u64 big = user && user->len ? walkers_stack(user, true, FIRN_W_INLINE) : 0;
	if (user && user->len)
		tail_to_walker(ctx, pid);
	return count_sample(big, firn_sample_ctx(pid));
}

/* The program of each walker of a FIRN_PROG row, on_sample_NAME (the unwinders array's slot at
 * its tag): its stack hook on the native stack on_sample left in scratch slot 0, then the
 * sample counted. */
/* Whether a row's hook is FIRN_NONE: a constant the compiler folds (its name as written). */
#define FIRN_W_IS_NONE(hook) (sizeof(#hook) == sizeof("FIRN_NONE") && !__builtin_memcmp(#hook, "FIRN_NONE", sizeof(#hook)))
#define FIRN_W_PROG_FIRN_NO_PROG(n, tag, stack, lctx)
#define FIRN_W_PROG_FIRN_PROG(n, tag, stack, lctx)                                             \
	SEC("perf_event") int on_sample_##n(struct bpf_perf_event_data *ctx)                   \
	{                                                                                      \
		struct firn_stack *user = sampled_user();                                      \
		__u64 big = user && WALKER_ON(tag) ? stack(user, 1) : 0;                       \
		__u32 pid = bpf_get_current_pid_tgid() >> 32;                                  \
                                                                                               \
		return count_sample(big, FIRN_W_IS_NONE(lctx) ? firn_sample_ctx(pid) :        \
					 WALKER_ON(tag) ?                                      \
					 lctx(pid, bpf_get_current_task_btf()) : 0);           \
	}
#define FIRN_W_PROGRAM(n, tag, h, b, f, stack, pr, flags, wh, maps, nm, lctx)                 \
	FIRN_W_PROG_##pr(n, tag, stack, lctx)
FIRN_WALKERS(FIRN_W_PROGRAM)

/* Copies a stack taken into scratch into a wait slot or a GPU launch record (only its frames:
 * a helper copy). */
static __always_inline void keep_stack(struct firn_stack *to, const struct firn_stack *from)
{
	__u32 len = from ? from->len : 0;

	if (len > FIRN_MAX_FRAMES)
		len = FIRN_MAX_FRAMES;
	to->len = len;
	if (len)
		bpf_probe_read_kernel(to->ips, (len & 127) * sizeof(__u64), from->ips);
}

#include "usdt_hit.bpf.h"

#include "offcpu.bpf.h"
#include "offcpu_start.bpf.h"
#include "toy.bpf.h"

#include "procs.bpf.h"
