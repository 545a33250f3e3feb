/* Structs shared by the BPF sampler (bpf/profile.bpf.c) and user space (lib/source/sampler.c).
 * Plain fixed-width types only: this header is included by both sides. */
#ifndef FIRN_BPF_FIRN_H
#define FIRN_BPF_FIRN_H

#define FIRN_MAX_FRAMES 127
#define FIRN_COMM_LEN 16

/* The event numbers of firn_key.event, the one set BPF and user space share (lib/record/event_table.h
 * describes each event): cpu-clock samples; hits of the USDT probe attached with cookie N
 * (N >= FIRN_EVENT_USDT_FIRST, in attach order); GPU kernel time (a weight in nanoseconds) and
 * launches (hits), GPU_MEMCPY being a probe cookie only (its time is GPU_TIME); time off the
 * CPU (a weight in nanoseconds). An event whose row names its own program defines its id beside
 * that program, from 0xffffffe0 up (bpf/toy.bpf.h's toy: 0xffffffe0). */
#define FIRN_EVENT_CPU_CLOCK 0u
#define FIRN_EVENT_USDT_FIRST 1u
#define FIRN_EVENT_GPU_TIME 0xfffffff0u
#define FIRN_EVENT_GPU_LAUNCHES 0xfffffff1u
#define FIRN_EVENT_GPU_MEMCPY 0xfffffff2u
#define FIRN_EVENT_OFF_CPU 0xffffffffu

/* Aggregation key: one count per (process, thread, user stack, kernel stack, event: one of
 * FIRN_EVENT_*, label context). Stack ids are 64-bit content hashes; 0 means "no stack". ctx is
 * the sample's label context, 0 for none (keys are compared as bytes). */
struct firn_key {
	__u32 pid;
	__u32 tid;
	__u64 ustack;
	__u64 kstack;
	__u32 event;
	__u32 ctx;
};

/* ---- label contexts ----
 * A sample's labels beyond pid and thread (an OpenTelemetry span, goroutine labels) are one
 * small id in its key: FIRN_CTX(tag, id), tag the FIRN_FRAME_KIND_* (or another walker tag) of
 * the runtime whose walker made it and who names its labels in user space (the capture asks it
 * through its resolver's labels, lib/model/resolver.h), id that walker's (1 .. 2^24 - 2), each
 * announced once through the ring buffer. A walker keeps a bounded table of them: contexts past
 * its cap all get id FIRN_CTX_OTHER, and it counts the samples so folded. */
#define FIRN_CTX_ID_BITS 24
#define FIRN_CTX_OTHER 0xffffffu
#define FIRN_CTX(tag, id) (((__u32)(tag) << FIRN_CTX_ID_BITS) | ((__u32)(id) & FIRN_CTX_OTHER))
#define FIRN_CTX_TAG(ctx) ((unsigned)((ctx) >> FIRN_CTX_ID_BITS))
#define FIRN_CTX_IDOF(ctx) ((__u32)(ctx) & FIRN_CTX_OTHER)

/* A stack too long for struct firn_stack (deep Python recursion), as stored in the big_stacks
 * map: few of them, so most stacks do not take the largest slot. User space looks for a stack
 * id in the stacks map first, then in big_stacks. */
#define FIRN_BIG_FRAMES 1151
#define FIRN_BIG_STACKS 512
struct firn_big_stack {
	__u32 len;
	__u32 pad;
	__u64 ips[FIRN_BIG_FRAMES];
};

/* A stack as stored in the stacks map: instruction pointers, leaf first. */
struct firn_stack {
	__u32 len;
	__u32 pad;
	__u64 ips[FIRN_MAX_FRAMES];
};

/* ---- frames that are not instruction pointers ----
 * A user stack may carry frames of other kinds (an interpreter's functions, a GPU kernel): the
 * top byte of such a value is FIRN_FRAME_TAG | kind, which no address has (it is not canonical
 * on x86-64: bits 63..47 differ); the low 56 bits are the kind's payload, which only the kind's
 * resolver in user space reads (lib/model/resolver.h). Kind 0 is no kind: a native address. */
#define FIRN_FRAME_TAG 0xa0ULL
#define FIRN_FRAME_PAYLOAD_MASK 0x00ffffffffffffffULL
#define FIRN_FRAME_KIND_PYTHON 1 /* a Python function (bpf: the interpreter unwinder) */
#define FIRN_FRAME_KIND_GPU 2    /* a GPU kernel (bpf: the CUDA probes) */
#define FIRN_FRAME_KIND_V8 3     /* a JavaScript function (bpf/v8.bpf.h) */
#define FIRN_FRAME_KIND_JAVA 4   /* a Java method (bpf/hotspot.bpf.h; its types in bpf/hotspot.h) */
#define FIRN_FRAME_KINDS 16

/* The unwinders program array (bpf/profile.bpf.c) is indexed by tag: the program of each
 * runtime that on_sample tail-calls for a process running it (bpf/walkers.h names them for user
 * space), at its FIRN_FRAME_KIND_*. */

/* ---- runtime walkers, by tag (a FIRN_FRAME_KIND_*) ----
 * What user space hands a walker for one process (sampler_set_proc) is one entry of the
 * walker_procs map, keyed by {tag, pid}: the walker's own struct (struct firn_py_proc, ...), at
 * most FIRN_WALKER_PROC_SIZE bytes, zero-padded. A walker counts its outcomes into walker_stats
 * at tag * FIRN_WALKER_STATS + its index (at most FIRN_WALKER_STATS of them; sampler_walker_stats
 * reads them by tag). Its announcements (a code object got an id) are ring records whose header
 * (struct firn_event's type, pid) has type FIRN_EV_ANNOUNCE(tag): user space routes them to the
 * runtime of that tag and reads nothing else of them. */
#define FIRN_WALKER_PROC_SIZE 256
#define FIRN_WALKER_STATS 8
struct firn_walker_key {
	__u32 tag, pid;
};
struct firn_walker_proc {
	__u8 bytes[FIRN_WALKER_PROC_SIZE];
};
#define FIRN_WALKER_STAT(tag, i) ((__u32)(tag) * FIRN_WALKER_STATS + (__u32)(i))
#define FIRN_FRAME(kind, payload) \
	(((FIRN_FRAME_TAG | (__u64)(kind)) << 56) | ((__u64)(payload) & FIRN_FRAME_PAYLOAD_MASK))
#define FIRN_FRAME_KIND_OF(v) \
	((((v) >> 56) & 0xf0ULL) == FIRN_FRAME_TAG ? (unsigned)(((v) >> 56) & 0xf) : 0u)

/* Names of a thread: its own (comm) and its process's (group leader's comm). */
struct firn_comm {
	char thread[FIRN_COMM_LEN];
	char process[FIRN_COMM_LEN];
};

/* Events sent to user space through the ring buffer. */
enum firn_event_type {
	FIRN_EV_NEW_PROCESS = 1, /* first sample of a process (or first after exec) */
	FIRN_EV_EXEC = 2,
	FIRN_EV_EXIT = 3,        /* the last thread of a sampled process ended */
	FIRN_EV_UNKNOWN_CODE = 4, /* a stack ran through code the unwinder has no table for, or a
				   * target mapped more code than it had */
};
/* A runtime walker's announcement: type FIRN_EV_ANNOUNCE(tag), tag its FIRN_FRAME_KIND_*. */
#define FIRN_EV_ANNOUNCE_BASE 0x100u
#define FIRN_EV_ANNOUNCE(tag) (FIRN_EV_ANNOUNCE_BASE | (__u32)(tag))
#define FIRN_EV_ANNOUNCE_TAG(type) \
	(((type) & ~0xffu) == FIRN_EV_ANNOUNCE_BASE ? (unsigned)((type) & 0xffu) : 0u)
#define FIRN_EV_PY_CODE FIRN_EV_ANNOUNCE(FIRN_FRAME_KIND_PYTHON) /* struct firn_py_code_event */
#define FIRN_EV_V8_FUNC FIRN_EV_ANNOUNCE(FIRN_FRAME_KIND_V8)     /* struct firn_v8_func_event */

struct firn_event {
	__u32 type;
	__u32 pid;
	__u64 addr; /* FIRN_EV_UNKNOWN_CODE: the first pc the unwinder had no table for (the
		     * program's code start for a target's new code);
		     * FIRN_EV_EXEC: the time of the exec (bpf_ktime_get_ns: CLOCK_MONOTONIC) */
};

/* Reasons a sample was not stored or is incomplete (indexes of the lost counters). */
enum firn_lost {
	FIRN_LOST_COUNTS_FULL = 0, /* the counts map was full */
	FIRN_LOST_STACKS_FULL,     /* a stack could not be stored: the sample was dropped */
	FIRN_LOST_EVENTS_FULL,     /* a process event did not fit in the ring buffer */
	FIRN_LOST_USER_STACK,      /* the user stack could not be read (the sample is kept) */
	FIRN_LOST_KERNEL_STACK,    /* the kernel stack could not be read (the sample is kept) */
	FIRN_LOST_NR,
};

/* Off-CPU accounting (indexes of the offcpu_stats counters). A wait is a switch-out of a target
 * thread that was sampled: it ends counted, short or lost (by reason); one still going when the
 * recording ends is ended then (counted up to the end, or short). */
enum firn_offcpu_stat {
	FIRN_OFF_WAITS = 0,        /* waits begun (their stacks taken) */
	FIRN_OFF_COUNTED,          /* waits added to their stack */
	FIRN_OFF_NS,               /* nanoseconds of those (before --off-cpu-rate scaling) */
	FIRN_OFF_SHORT,            /* waits under the minimum: not added */
	FIRN_OFF_SHORT_NS,         /* nanoseconds of those */
	FIRN_OFF_LOST_NO_SLOT,     /* the start could not be remembered (no per-thread storage) */
	FIRN_OFF_LOST_COUNTS_FULL, /* the counts map was full */
	FIRN_OFF_LOST_STACKS_FULL, /* a stack could not be stored */
	FIRN_OFF_UNSAMPLED,        /* switch-outs left out by the sampling rate */
	FIRN_OFF_AT_END,           /* of the counted ones: still going at the end, added up to it */
	FIRN_OFF_LATE,             /* of the ended ones: no switch-in was seen, ended at the next
				    * switch-out (off the CPU: elapsed - CPU time meanwhile) */
	FIRN_OFF_AT_START,         /* of the waits begun: already going at the start (taken by the
				    * start_waits iterator), counted from the start */
	FIRN_OFF_NR,
};

/* ---- DWARF (CFI) unwinding ---- */

/* What a row says about the frame of the code at [pc, next row's pc). */
enum firn_row_type {
	FIRN_ROW_CFA_RSP = 1,    /* CFA = rsp + cfa_off */
	FIRN_ROW_CFA_RBP = 2,    /* CFA = rbp + cfa_off */
	FIRN_ROW_PLT = 3,        /* the PLT expression: CFA = rsp + 8 + ((rip & 15) >= 11 ? 8 : 0) */
	FIRN_ROW_SIGNAL = 4,     /* a signal trampoline: registers come from the ucontext at rsp */
	FIRN_ROW_END = 5,        /* the return address is undefined: the outermost frame */
	FIRN_ROW_GAP = 6,        /* no CFI covers this range */
	FIRN_ROW_UNSUPPORTED = 7,/* a CFA rule the unwinder cannot evaluate */
};

/* One unwind row: 8 bytes (the BPF array stores it without padding). pc is an ELF virtual address
 * (files whose code lies beyond 4 GiB get no table). rbp_off8 != 0: the caller's rbp was saved at
 * CFA + 8 * rbp_off8; 0: rbp is unchanged. For PLT rows rbp_off8 holds the threshold on rip & 15. */
struct firn_row {
	__u32 pc;
	__s16 cfa_off;
	__u8 type;
	__s8 rbp_off8;
};

/* A table in the rows array starts with its page index, so a lookup searches the rows of one
 * page of code instead of the whole table: a header row (struct firn_table_head), then for each
 * page k of the table's pages and one more, a row whose pc is the index (from the first row) of
 * the last row at or before the start of page first_page + k; then the row_count rows. A
 * table's row_start is its header's index. Pages are 4 KiB (FIRN_PAGE_SHIFT), larger where a
 * table is sparse (no more pages than rows + 16): a 4 KiB page of libc's code holds ~70 rows,
 * searched in ~7 steps within a few cache lines instead of 15-18 across the whole table. */
#define FIRN_PAGE_SHIFT 12

struct firn_table_head {
	__u32 first_page; /* rows[0].pc >> shift */
	__u16 pages;      /* pages from first_page to the last row's (at most 65535) */
	__u8 shift;       /* log2 of the page size: FIRN_PAGE_SHIFT or more */
	__u8 pad;
};

/* Rows of the page index of a table (its header included). */
#define FIRN_INDEX_ROWS(pages) ((pages) + 2)

/* The rows array is made of chunks of FIRN_ROWS_CHUNK rows (512 KiB), created by user space as
 * tables fill the last one: row i is entry i % FIRN_ROWS_CHUNK of chunk i / FIRN_ROWS_CHUNK. */
#define FIRN_ROWS_CHUNK_SHIFT 16
#define FIRN_ROWS_CHUNK (1u << FIRN_ROWS_CHUNK_SHIFT)

/* Mappings of one process the BPF unwinder is told about, at most (the ones past it are found
 * with the kernel's VMA lookup): a power of two. */
#define FIRN_MAX_UMAPS 4096

/* One executable mapping of a process with an unwind table: addresses in [start, end) map to
 * ELF virtual addresses as addr - bias; the table (its page index, then row_count rows) starts at
 * rows[row_start]. */
struct firn_umap {
	__u64 start, end, bias;
	__u32 row_start, row_count;
};

/* Where a process's mappings are described (unwind_pids): entries [first, first + count) of the
 * unwind_umaps pool, sorted by start (only mappings with tables). */
struct firn_pid_maps {
	__u32 first, count;
};

/* A file whose table is loaded, as the kernel names it (the unwind_files map): dev is the
 * kernel's encoding (major << 20 | minor), ino the inode number. The vdso is {0, 0}. */
struct firn_file_key {
	__u64 dev, ino;
};

/* The table of a file and its executable segments (file offset -> ELF vaddr: + delta), so the
 * unwinder can describe a mapping it finds by itself (bpf_find_vma) before user space does. */
#define FIRN_FILE_SEGS 4
struct firn_file {
	__u32 row_start, row_count;
	__u32 nsegs, mtime_nsec;
	__u64 size, mtime_sec; /* the file the table was built from (inode numbers get reused) */
	struct { __u64 offset, filesz; __s64 delta; } segs[FIRN_FILE_SEGS];
};

/* A mapping the BPF unwinder found by itself (the kernel's VMA), kept with its file: while the
 * file's table is not loaded (m.row_count 0, pending 1), each use looks the file up in
 * unwind_files again, so the rows are used as soon as user space loads them. */
struct firn_kmap {
	struct firn_umap m;
	struct firn_file_key file;  /* {0, 0}: the vdso */
	__u64 off;                  /* the mapping's file offset */
	__u64 size, mtime_sec;      /* the file's, checked against the table's (inode reuse) */
	__u32 mtime_nsec;
	__u32 pending;              /* 1: a file (or the vdso) whose table may still come */
};

/* Mappings the BPF unwinder found by itself (bpf_find_vma; a target's new code as it is mapped)
 * that the process's description lacks: a ring of the last FIRN_KMAPS, per process (a command's
 * hundred dlopen'ed libraries fit). */
#define FIRN_KMAPS 128
struct firn_kproc {
	__u32 n;    /* entries in use (at most FIRN_KMAPS) */
	__u32 next; /* where the next one goes (mod FIRN_KMAPS): the oldest is replaced */
	struct firn_kmap maps[FIRN_KMAPS];
};

/* Why a DWARF unwind stopped (indexes of the unwind statistics; FIRN_UNW_COMPLETE is success). */
enum firn_unwind_stop {
	FIRN_UNW_COMPLETE = 0,     /* reached the outermost frame */
	FIRN_UNW_NO_MAPPING,       /* the pc is in no mapping with a table (and frame pointers failed) */
	FIRN_UNW_NO_ROW,           /* no row covers the pc (a gap), and frame pointers failed */
	FIRN_UNW_UNSUPPORTED,      /* a rule the unwinder cannot evaluate */
	FIRN_UNW_BAD_READ,         /* reading the stack failed */
	FIRN_UNW_DEPTH,            /* FIRN_MAX_FRAMES reached */
	FIRN_UNW_NO_USER,          /* no user stack: a kernel thread or the idle task */
	FIRN_UNW_FP_FALLBACK,      /* frames unwound by frame pointers (no table) */
	FIRN_UNW_VMA,              /* frames whose mapping the kernel found (not described yet) */
	FIRN_UNW_ROW_FALLBACK,     /* frames unwound by frame pointers where a table had no row */
	FIRN_UNW_NR,
};

/* ---- Python frames (FIRN_FRAME_KIND_PYTHON) ----
 * Payload of one Python frame, one stack slot each: bits 0-43 the code object's id, bits 44-55
 * the instruction's offset in code units (2 bytes) from the start of its bytecode,
 * FIRN_PY_NO_OFFSET when unknown or too large (the resolver then gives the function's first
 * line). The id (>= 1) is the unwinder's, never reused: it stands for one code object of one
 * process image as it was read (its identity: name, file, first line, line table), so an
 * address freed and reused by another code object, or met again after an exec, gets a new id;
 * each new id is announced with the object's name and file (struct firn_py_code_event), copied
 * while the process runs. Payload FIRN_PY_TRUNCATED_FRAME (id 0): the outermost frame of a
 * stack whose outer frames did not fit ("[truncated]"). */
#define FIRN_PY_OFFSET_SHIFT 44
#define FIRN_PY_NO_OFFSET 0xfffULL
#define FIRN_PY_PAYLOAD(id, units) ((__u64)(id) | ((__u64)(units) << FIRN_PY_OFFSET_SHIFT))
#define FIRN_PY_ID(payload) ((payload) & ((1ULL << FIRN_PY_OFFSET_SHIFT) - 1))
#define FIRN_PY_UNITS(payload) (((payload) >> FIRN_PY_OFFSET_SHIFT) & FIRN_PY_NO_OFFSET)
#define FIRN_PY_TRUNCATED_FRAME 0ULL

/* A new code object id (FIRN_EV_PY_CODE): what the unwinder copied of it. The strings are the
 * first bytes of each unicode object's data with its state word and length in characters, so
 * user space can tell whether the copy is the whole (compact ASCII) string. */
#define FIRN_PY_NAME_LEN 96
#define FIRN_PY_FILE_LEN 160
struct firn_py_code_event {
	__u32 type, pid;
	__u64 code, id;
	__s32 firstlineno;
	__u32 name_state, file_state;
	__u32 pad;
	__u64 name_len, file_len;
	char name[FIRN_PY_NAME_LEN]; /* co_qualname (3.11+), co_name before */
	char file[FIRN_PY_FILE_LEN];
};

/* The code objects met (python_codes): by process image (epoch: user space's number for the
 * description of the process, new at each exec) and address; the value is the identity read
 * with the id it was given. */
struct firn_py_code_key {
	__u32 pid, epoch;
	__u64 code;
};
struct firn_py_code_val {
	__u64 ident, id;
};
#define FIRN_PY_CODE_READ 128 /* bytes of a code object read at once, from co_lo */

/* What the interpreter unwinder needs of one process running CPython 3.8 to 3.14 (walker_procs,
 * by {FIRN_FRAME_KIND_PYTHON, pid}; lib/runtimes/pyruntime.h describes the offsets). User space
 * adds it when the process is first seen. */
struct firn_py_proc {
	__u64 runtime;                /* address of _PyRuntime */
	__u64 eval_start, eval_end;   /* _PyEval_EvalFrameDefault in the process */
	__u64 cold_start, cold_end;   /* its cold part (GCC's hot/cold split; 0, 0: none) */
	__u64 code_tag;               /* 3.14+: f_executable's tag bits (a _PyStackRef), cleared */
	__u32 minor;                  /* 8 to 14 (or later, read through _Py_DebugOffsets) */
	__u32 rt_interp_head, interp_tstate_head, ts_next, ts_frame;
	__u32 ts_native_tid;          /* 3.11+: matched with the tid */
	__u32 ts_thread_id;           /* 3.8-3.10: pthread_self(), matched with the task's fsbase */
	__u32 cframe_current;         /* 3.11, 3.12: tstate->cframe->current_frame */
	__u32 fr_back, fr_code;       /* frame offsets: all below 104 (the unwinder reads 112 bytes) */
	__u32 fr_instr;               /* 3.11+: prev_instr / instr_ptr; 3.8-3.10: int f_lasti */
	__u32 fr_owner;               /* 3.11+ */
	__u32 fr_is_entry;            /* 3.11: _PyInterpreterFrame.is_entry (0: none) */
	__u32 co_code_adaptive;
	__u32 epoch;                  /* user space's number for this description (new at exec) */
	/* the code object's identity and names: offsets from co_lo (all below
	 * FIRN_PY_CODE_READ - 8, multiples of 8 but the first line's of 4); unicode objects: the
	 * state word, length, hash, data offsets (below 56) */
	__u32 co_lo, co_name, co_filename, co_firstlineno, co_linetable;
	__u32 uni_state, uni_length, uni_hash, uni_data;
};

/* How the Python part of a sample of a Python process went (its walker_stats indexes). */
enum firn_py_stat {
	FIRN_PY_COMPLETE = 0, /* the frame chain was walked to its end */
	FIRN_PY_NO_THREAD,    /* no thread state of the interpreter has the sampled thread's tid */
	FIRN_PY_BAD_READ,     /* a thread state or frame could not be read */
	FIRN_PY_TRUNCATED,    /* more frames than FIRN_PY_MAX_FRAMES (or than the stack holds:
			       * FIRN_BIG_FRAMES for a timed sample, FIRN_MAX_FRAMES for others):
			       * the leaf end is kept, a "[truncated]" frame at its root */
	FIRN_PY_CODES,        /* code objects given an id (announced) */
	FIRN_PY_CODES_LOST,   /* ... whose announcement did not fit in the ring buffer */
	FIRN_PY_NR,
};
_Static_assert(sizeof(struct firn_py_proc) <= FIRN_WALKER_PROC_SIZE, "walker_procs value");
_Static_assert(FIRN_PY_NR <= FIRN_WALKER_STATS, "walker_stats");
#define FIRN_PY_MAX_FRAMES 1024 /* a power of two: the walk masks indexes with it - 1 */

/* ---- JavaScript frames (FIRN_FRAME_KIND_V8, bpf/v8.bpf.h) ----
 * Payload of one JavaScript frame: bits 0-31 the function's id, bits 32-34 its tier
 * (FIRN_V8_*), bits 35-55 the raw bytecode-offset word of an interpreted frame (the Smi's value:
 * lib/runtimes/v8frames.c subtracts the BytecodeArray header), FIRN_V8_NO_OFFSET when unknown. The id
 * (>= 1) is the walker's, never reused: it stands for one SharedFunctionInfo of one process
 * image as it was (address and identity: its name-or-scope-info and script words), announced
 * once with struct firn_v8_func_event, so user space reads the name while the process lives. */
#define FIRN_V8_INTERPRETED 1
#define FIRN_V8_BASELINE 2
#define FIRN_V8_OPTIMIZED 3
#define FIRN_V8_BUILTIN 4 /* a JavaScript builtin (its code in V8's embedded blob) */
#define FIRN_V8_TIER_SHIFT 32
#define FIRN_V8_OFFSET_SHIFT 35
#define FIRN_V8_NO_OFFSET 0x1fffffULL
#define FIRN_V8_PAYLOAD(id, tier, off) \
	((__u64)(__u32)(id) | ((__u64)((tier) & 7) << FIRN_V8_TIER_SHIFT) | \
	 ((__u64)((off) & FIRN_V8_NO_OFFSET) << FIRN_V8_OFFSET_SHIFT))
#define FIRN_V8_ID(payload) ((__u32)(payload))
#define FIRN_V8_TIER(payload) ((unsigned)(((payload) >> FIRN_V8_TIER_SHIFT) & 7))
#define FIRN_V8_OFFSET(payload) (((payload) >> FIRN_V8_OFFSET_SHIFT) & FIRN_V8_NO_OFFSET)

/* What the JavaScript walker needs of one process running a V8 (walker_procs, by
 * {FIRN_FRAME_KIND_V8, pid}),
 * from the v8dbg_* constants of its node or libnode (lib/runtimes/v8consts.h), checked by user space:
 * frame slots are negative multiples of 8 within 64 bytes below fp; object field offsets are
 * multiples of 8 below FIRN_V8_OBJ_READ (the map's instance type: any offset below 4096). */
#define FIRN_V8_OBJ_READ 64
#define FIRN_V8_TEXTS 4
struct firn_v8_proc {
	/* V8's own code in the process: the executable mappings of its file (node's text, and the
	 * embedded builtins V8 maps again near its code range); unused ones are {0, 0} */
	struct { __u64 start, end; } text[FIRN_V8_TEXTS];
	__u32 epoch;                /* user space's number for this image (new at exec) */
	__s32 fp_marker, fp_function, fp_bytecode_array, fp_bytecode_offset;
	__u32 smi_shift;            /* a Smi's value is word >> smi_shift (32: 64-bit Smis) */
	__u32 off_map, off_instance_type, off_js_shared, off_sfi_name, off_sfi_script;
	__u32 type_js_first, type_js_last, type_sfi, type_bytecode_array;
	__u32 pad;
};

/* A new function id (FIRN_EV_V8_FUNC): the SharedFunctionInfo (tagged pointer) and the words
 * that make its identity, as read by the walker. */
struct firn_v8_func_event {
	__u32 type, pid;
	__u64 sfi, id;
	__u64 name_or_scope_info, script;
};

/* The functions met (v8_funcs): by process image and SharedFunctionInfo address. */
struct firn_v8_func_key {
	__u32 pid, epoch;
	__u64 sfi;
};
struct firn_v8_func_val {
	__u64 ident, id;
};

/* How the JavaScript walk went (its walker_stats indexes, per frame). */
enum firn_v8_stat {
	FIRN_V8_FRAMES = 0,  /* frames of V8 processes looked at (stepped by frame pointer) */
	FIRN_V8_JS,          /* of them, JavaScript frames (a JSFunction with its SFI) */
	FIRN_V8_TYPED,       /* typed frames (entry, exit, stub, builtin...): kept native */
	FIRN_V8_NOT_JS,      /* neither: native code (kept as it is) */
	FIRN_V8_BAD_READ,    /* a JSFunction or SFI could not be read: kept native */
	FIRN_V8_FUNCS,       /* functions given an id (announced) */
	FIRN_V8_FUNCS_LOST,  /* ... whose announcement did not fit in the ring buffer */
	FIRN_V8_NR,
};
_Static_assert(sizeof(struct firn_v8_proc) <= FIRN_WALKER_PROC_SIZE, "walker_procs value");
_Static_assert(FIRN_V8_NR <= FIRN_WALKER_STATS, "walker_stats");

/* ---- GPU kernels (libfirn-cuda.so's probes, bpf/cuda.bpf.h) ----
 * The probes are attached with the cookies FIRN_EVENT_GPU_LAUNCHES (launch), GPU_TIME (kernel)
 * and GPU_MEMCPY (memcpy). */
#define FIRN_GPU_MAX_LAUNCHES 4096  /* launches remembered until their records arrive (LRU) */
#define FIRN_GPU_NAME_LEN 256
/* In a GPU frame's payload: a copy (low byte: CUpti_ActivityMemcpyKind), not a kernel's name hash. */
#define FIRN_GPU_MEMCPY_FRAME (1ULL << 55)

struct firn_gpu_name {
	char name[FIRN_GPU_NAME_LEN];
};

/* A launch remembered until its kernels' records arrive (a graph launch has several). */
struct firn_gpu_launch {
	__u32 pid, tid;
	__u32 matched; /* kernel records matched to it so far */
	__u32 pad;
	struct firn_stack user; /* the launching thread's user stack */
};

struct firn_gpu_corr {
	__u32 pid;
	__u32 id; /* CUPTI correlation id (per process) */
};

/* Indexes of the gpu_stats counters. */
enum firn_gpu_stat {
	FIRN_GPU_LAUNCHES = 0,      /* launch hits */
	FIRN_GPU_KERNELS,           /* kernel records */
	FIRN_GPU_KERNELS_UNMATCHED, /* kernel records whose launch was not seen (or was evicted) */
	FIRN_GPU_MEMCPYS,           /* memcpy records */
	FIRN_GPU_LOST,              /* a stack or count could not be stored */
	FIRN_GPU_LAUNCHES_MATCHED,  /* launches that at least one kernel record matched */
	FIRN_GPU_NR,
};

#endif
