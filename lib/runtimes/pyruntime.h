/* CPython interpreters in other processes, read from user space (process_vm_readv), as py-spy
 * does: find the ELF that defines _PyRuntime (the executable or libpythonX.Y.so), pick and verify
 * the struct offsets of its version, walk each thread's Python frames, and resolve code objects
 * to qualname, file and line. Supported: CPython 3.8 to 3.14 (GIL builds). Offsets come from
 * _Py_DebugOffsets in the process (3.13, 3.14 and a later 3.x whose debug offsets still have
 * 3.14's layout: each offset checked against its struct's size) or from a per-version table
 * checked against the binary (3.8-3.12); a version that cannot be verified is refused, never
 * guessed; a free-threaded build is refused by name ("python 3.14t (free-threaded) ...").
 * Every memory read goes through one bounded reader; failures are counted by reason. */
#ifndef FIRN_PYRUNTIME_H
#define FIRN_PYRUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "runtimes/pylines.h"

#define PYRUNTIME_MAX_DEPTH 256   /* frames kept per thread; deeper stacks are truncated */
#define PYRUNTIME_MAX_THREADS 4096 /* thread states walked per interpreter */
#define PYRT_PAGE 4096             /* bytes of frames read at once by a walk */

/* Why a read or a walk step failed (pyruntime.errors[] counts them). */
enum pyruntime_error {
	PYRT_ERR_READ,    /* process_vm_readv failed or was short (unmapped, process gone) */
	PYRT_ERR_COOKIE,  /* _Py_DebugOffsets cookie or version did not match */
	PYRT_ERR_DEPTH,   /* a frame chain longer than PYRUNTIME_MAX_DEPTH (truncated) */
	PYRT_ERR_TYPE,    /* an object that should be a code object is not (or a bad string) */
	PYRT_ERR_THREADS, /* more than PYRUNTIME_MAX_THREADS thread states (a loop?) */
	PYRT_ERR__N
};

/* Struct offsets (bytes) of one CPython version; 0 in an optional field means "absent". */
struct pyoffsets {
	uint64_t runtime_size;       /* sizeof(_PyRuntimeState), checked against the symbol's size */
	uint32_t rt_interp_head;     /* _PyRuntimeState.interpreters.head */
	uint32_t rt_autotss;         /* _PyRuntimeState.gilstate.autoTSSkey (.autoTSSkey 3.12+) */
	uint32_t interp_tstate_head; /* PyInterpreterState.tstate_head / threads.head */
	uint32_t ts_next, ts_interp, ts_thread_id;
	uint32_t ts_native_tid;      /* PyThreadState.native_thread_id (3.11+; 0 = none) */
	uint32_t ts_frame;           /* .frame (<= 3.10), .cframe (3.11, 3.12), .current_frame (3.13+) */
	uint32_t cframe_current;     /* _PyCFrame.current_frame (3.11, 3.12) */
	uint32_t fr_back, fr_code;   /* f_back/previous, f_code/f_executable (3.14: a tagged _PyStackRef) */
	uint32_t fr_lasti;           /* f_lasti (int, <= 3.10), prev_instr (3.11, 3.12), instr_ptr (3.13+) */
	uint32_t fr_owner;           /* _PyInterpreterFrame.owner (char, 3.11+) */
	uint32_t co_filename, co_name, co_qualname /* 0 before 3.11 */, co_firstlineno;
	uint32_t co_linetable;       /* co_lnotab (3.8, 3.9) or co_linetable (3.10+) */
	uint32_t co_code_adaptive;   /* first code unit inside the code object (3.11+) */
	uint32_t co_firsttraceable;  /* _co_firsttraceable (3.11, 3.12; 0 = none) */
	uint32_t ob_type, tp_name;
	uint32_t unicode_state, unicode_length, unicode_ascii_size, unicode_compact_size;
	uint32_t bytes_size, bytes_sval;
};

/* One Python frame as read from the process: the code object and the byte offset into its
 * bytecode of the instruction being executed (-1 when unknown). */
struct pyframe_raw {
	uint64_t code;
	int32_t lasti;
};

/* One thread's Python stack, leaf first. */
struct pythread {
	uint64_t tstate;      /* address of its PyThreadState */
	uint64_t thread_id;   /* PyThreadState.thread_id (pthread_t) */
	uint32_t native_tid;  /* the kernel's thread id: native_thread_id (3.11+), or read from glibc's
			       * struct pthread (3.8-3.10, once checked on the main thread); 0 unknown */
	bool truncated;       /* the chain went deeper than PYRUNTIME_MAX_DEPTH or broke off */
	size_t nframes;
	struct pyframe_raw frames[PYRUNTIME_MAX_DEPTH];
};

/* A resolved frame. The strings belong to the pyruntime's code cache and stay valid until the
 * next pycode_resolve or pyruntime_release. */
struct pyframe {
	const char *qualname; /* co_qualname (3.11+), co_name before */
	const char *filename;
	int firstlineno;
	int line;             /* line of the instruction at lasti; -1 unknown */
	const uint8_t *linetable; /* the code object's line table (format: pyruntime.lines), */
	size_t linetable_len;     /* for the lines of other offsets; NULL/0 when unreadable */
};

struct pycode_entry;

struct pyruntime {
	pid_t pid;
	int major, minor, micro;    /* from Py_Version (3.11+) or the ELF's name (3.8-3.10: micro 0) */
	char elf_path[4096];        /* the ELF that defines _PyRuntime (as in /proc/PID/maps) */
	uint64_t runtime_addr;      /* address of _PyRuntime in the process */
	uint64_t runtime_sym_size;  /* the symbol's st_size (0 when the symbol has none) */
	uint64_t eval_addr, eval_size; /* _PyEval_EvalFrameDefault in the process (0: not found) */
	uint64_t eval_cold, eval_cold_size; /* its cold part (GCC's hot/cold split), a range of its
					     * own in .eh_frame (0: none found) */
	enum pylines_format lines;
	struct pyoffsets off;
	const char *offsets_source; /* where the offsets came from, in words */
	char reason[256];           /* why pyruntime_find refused, or how it verified the version */
	uint64_t code_type;         /* address of PyCode_Type once a code object was verified */
	uint32_t pthread_tid;       /* offset of the tid in glibc's struct pthread; 0 unverified */
	uint32_t tss_key;           /* the PyGILState pthread key (autoTSSkey) */
	bool tss_ok;                /* the key's slot held the main thread's state at attach */
	uint8_t page[PYRT_PAGE];    /* the page of frames last read by a walk */
	uint64_t page_addr;
	bool page_valid;
	uint64_t walk_code[256];    /* code objects the walk verified (direct-mapped by address) */
	uint32_t walk_first[256];   /* their _co_firsttraceable (3.11, 3.12) */
	uint64_t errors[PYRT_ERR__N];
	uint64_t reads;             /* process_vm_readv calls made */
	struct pycode_entry *cache; /* direct-mapped code cache, of 2^cache_bits slots */
	unsigned cache_bits;
	uint32_t cache_lookups, cache_evictions; /* in the current window (pyruntime.c: cache_at) */
	const uint8_t *image;       /* pyruntime_init_image: memory read instead of the process */
	size_t image_size;
	uint64_t image_base;
};

/* Finds CPython in process pid and fills rt (initialized here; release it with
 * pyruntime_release whatever this returns). Returns 0; -ENOENT when no mapped ELF defines
 * _PyRuntime (not CPython, or CPython before 3.7); -EPROTONOSUPPORT for a CPython whose version
 * or offsets cannot be verified (rt->reason says why); -EAGAIN when the interpreter is not
 * initialized yet (no interpreter or thread state); -ENOMEM; other -errno (-ESRCH: no process). */
int pyruntime_find(pid_t pid, struct pyruntime *rt);

/* What each file says about CPython (which symbols it defines, its segments), read once per
 * file: keyed by (dev, inode, size, mtime) from a stat of the mapped path, so a file rewritten
 * in place is read again. A mapping from an mmap record (procmap_entry.from_record) is known
 * after its first look by (dev, inode, generation) without a stat: a file replaced by a new one
 * has a new inode or generation (one rewritten in place while mapped is not noticed). A mapping
 * read from /proc (no generation; a fork's copy of one) is known by (dev, inode) for
 * PYFILE_RECENT_NS after a stat showed it: a starting interpreter's retries (every 10 ms) and a
 * shell's children stat each file a few times a second, not at every look; a file rewritten in
 * place is read again after that.
 * So a process of files seen before costs a hash lookup per executable mapping. Only .dynsym is read of a file not named like a CPython unless it
 * exports _PyRuntime (or _PyThreadState_Current). One thread at a time. */
#define PYFILE_RECENT_NS 250000000ULL
struct pyfile_cache;
struct procmap;
struct procmap_entry;
/* NULL + errno (ENOMEM). */
struct pyfile_cache *pyfile_cache_new(void);
void pyfile_cache_free(struct pyfile_cache *c);
/* Files whose ELF was read so far (each once while unchanged). */
uint64_t pyfile_cache_probes(const struct pyfile_cache *c);
/* Whether the file of mapping e of process pid (found through /proc/PID/root when its own path
 * is another file) is a CPython: 1 when it defines _PyRuntime (or is a CPython before 3.7), 0
 * when not, -ENOENT when it cannot be found, -ENOEXEC (not ELF) or another -errno. */
int pyfile_is_python(struct pyfile_cache *c, pid_t pid, const struct procmap_entry *e);
/* pyruntime_find with the process's mappings given (maps: its executable ones at least, the
 * recorder's process table; NULL: /proc/PID/maps is read) and each file's symbols read once
 * through c. Same returns. */
int pyruntime_find_in(pid_t pid, const struct procmap *maps, struct pyfile_cache *c, struct pyruntime *rt);
void pyruntime_release(struct pyruntime *rt);
/* For tests and fuzzing: rt reads from image (size bytes, at address base; borrowed, kept until
 * release) instead of a process, with _PyRuntime at base and the offsets of CPython 3.minor
 * (3.13+: _Py_DebugOffsets read from the image and checked). 0, -EPROTONOSUPPORT, -ENOMEM. */
int pyruntime_init_image(struct pyruntime *rt, const void *image, size_t size, uint64_t base, int minor);

/* Reads len bytes at addr of the process into buf: 0 or -EFAULT (counted as PYRT_ERR_READ). */
int pyruntime_read(struct pyruntime *rt, uint64_t addr, void *buf, size_t len);

/* The thread state of the thread whose pthread_t is pthread, read as pthread_getspecific(autoTSSkey)
 * through glibc's struct pthread (the way the BPF unwinder will find it). 0, -ENOTSUP where that
 * was not verified at attach (rt->tss_ok), -EFAULT. */
int pyruntime_tstate_of(struct pyruntime *rt, uint64_t pthread, uint64_t *tstate);

typedef int (*pyruntime_stack_fn)(const struct pythread *t, void *arg);
/* Calls fn for each thread state of the main interpreter with its Python frames, leaf first
 * (a thread with no Python frame gets nframes 0). Stops early when fn returns non-zero and
 * returns that value. Returns 0, or -EFAULT when the interpreter's thread list is unreadable. */
int pyruntime_stacks(struct pyruntime *rt, pyruntime_stack_fn fn, void *arg);

/* Resolves a code object at code_addr and a byte offset lasti (-1: no line) into out. Cached per
 * code object: a hit is checked against the object's current name, file and first line, so a
 * freed and reused address is noticed. 0, -EFAULT (unreadable), -EINVAL (not a code object). */
int pycode_resolve(struct pyruntime *rt, uint64_t code_addr, int32_t lasti, struct pyframe *out);

#endif
