/* Python frames in recorded stacks: finds the CPython of each process the recorder meets (with
 * lib/runtimes/pyruntime.h), tells the BPF interpreter unwinder where it is (struct firn_py_proc, through
 * a callback), and resolves the tagged Python frames it records (bpf/firn.h: code object +
 * instruction offset) to qualname, file and line in the FRAME_PYTHON mapping. It is the runtime
 * runtime_python (lib/runtimes/runtime.h) of the registry; the functions below are its parts.
 * A frame names a code object by the unwinder's id, which stands for one object as it was (an
 * address reused, or met again after exec, gets a new id); the unwinder copies the names when
 * it gives the id, and the line table is read when user space hears of it, so frames of a
 * process that has ended still resolve. */
#ifndef FIRN_PYFRAMES_H
#define FIRN_PYFRAMES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/resolver.h"
#include "runtimes/runtime.h"

struct firn_py_proc;
struct procmap;
struct procmap_entry;
struct pyframes;

/* Called with what the BPF unwinder needs of a process that runs a supported CPython (p NULL:
 * forget the process after all); returns 0 or -errno (the process then gets no Python frames). */
typedef int (*pyframes_set_fn)(void *ctx, pid_t pid, const struct firn_py_proc *p);

/* Failures and outcomes, counted by reason. */
struct pyframes_stats {
	uint64_t processes;       /* processes whose interpreter the unwinder was told about */
	uint64_t unknown_version; /* CPython processes refused: version or offsets not verified, or
				   * not one the BPF unwinder walks (3.8 to 3.14) */
	uint64_t unreadable;      /* code objects that could not be read (the frame: "[unknown]") */
	char last_refusal[256];   /* why the last one was refused */
	uint64_t bpf[6];          /* the BPF unwinder's samples by outcome (enum firn_py_stat:
				   * FIRN_PY_NR) from runtime_python's stats op; zeros otherwise */
};

/* CPython as a runtime (lib/runtimes/runtime.h): tag FIRN_FRAME_KIND_PYTHON, off with "python"; its
 * stats op fills a struct pyframes_stats. */
extern const struct runtime_ops runtime_python;
/* Whether a command (argv0, found on PATH as exec would) is a Python interpreter or a script
 * for one: its Python frames are wanted from its first sample (the walker loaded ahead). */
bool pyframes_command_is_python(const char *argv0);

/* NULL + errno (ENOMEM). set and ctx are kept. */
struct pyframes *pyframes_new(pyframes_set_fn set, void *ctx);
void pyframes_free(struct pyframes *py);
/* Takes the mappings of processes from maps (called with the ctx of pyframes_new) instead of
 * /proc/PID/maps; a process it knows, found without CPython, is then not looked at again until
 * it maps one (pyframes_note_mapping). */
void pyframes_set_maps(struct pyframes *py, runtime_maps_fn maps);
/* A process was first seen, or called exec (a new image), at now_ns: looks for its interpreter
 * now, and again (pyframes_poll) while it may still be starting (libpython not mapped,
 * interpreter not yet initialized). A process known already is left as it is, unless exec. */
void pyframes_add_process(struct pyframes *py, pid_t pid, bool exec, uint64_t now_ns);
/* Looks again at the processes due at now_ns; returns when the next one is due (0: none). */
uint64_t pyframes_poll(struct pyframes *py, uint64_t now_ns);
/* pid mapped new code (libpython, say): a process still starting is looked at again now. */
void pyframes_note_code(struct pyframes *py, pid_t pid, uint64_t now_ns);
/* pid, a process the caller has met (sampled), mapped e (its mmap record): when e's file is a
 * CPython (each file read once) and pid's interpreter is not known yet, it is looked for now
 * (libpython loaded by dlopen, or mapped after the first sample). */
void pyframes_note_mapping(struct pyframes *py, pid_t pid, const struct procmap_entry *e, uint64_t now_ns);
/* The BPF unwinder gave a code object an id (its ring buffer notice): what it copied of it is
 * kept, and its line table is read now, while its process most likely lives. 0 or -ENOMEM. */
struct firn_py_code_event;
int pyframes_code_event(struct pyframes *py, const struct firn_py_code_event *e);
/* Reads what is still missing of the code objects of the Python frames in a user stack of pid
 * (while it lives). */
void pyframes_note_stack(struct pyframes *py, pid_t pid, const uint64_t *ips, uint32_t len);
/* The process ended: its interpreter is forgotten (what was read of its code objects stays). */
void pyframes_forget(struct pyframes *py, pid_t pid);
/* The resolver of FIRN_FRAME_KIND_PYTHON frames (ctx: py, which must outlive its use). */
struct frame_resolver pyframes_resolver(struct pyframes *py);
void pyframes_get_stats(const struct pyframes *py, struct pyframes_stats *st);

#endif
