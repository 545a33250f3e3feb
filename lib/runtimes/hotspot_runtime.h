/* Java frames in recorded stacks, as a runtime (lib/runtimes/runtime.h): "java", --no-java.
 * For each process that maps a libjvm.so exporting HotSpot's VMStructs, it reads the file's
 * symbols once (a cache by file identity, as V8's constants are), the process's tables and code
 * heaps (hotspot_structs.h, hotspot_codecache.h; retried while the JVM starts), and hands the BPF
 * walker (bpf/hotspot.bpf.h) a struct firn_hotspot_proc. The walker announces each method it
 * meets (struct firn_hotspot_method_event: pid, Method*, its ConstMethod*); its names are read then
 * (hotspot_names.h), while the process lives, and kept by id, so frames of a process that has
 * ended resolve to "Class.method" in the mapping "[java]". A Method* whose ConstMethod is no longer
 * the one the walker saw (redefined, unloaded) is refused and counted, never named. A compiled
 * frame (its id stands for one nmethod, its payload has the pc's offset) is expanded into the
 * methods inlined at that pc, innermost first, each at its line (hotspot_inline.h: JDK 17's
 * and 25's nmethod layouts): a return address by its own PcDesc, a sampled pc between two by the
 * next one (hotspot_inline_near, as JFR names it). Its PcDescs are expanded when the nmethod is
 * announced, so samples resolved after the process ended keep them. */
#ifndef FIRN_HOTSPOT_RUNTIME_H
#define FIRN_HOTSPOT_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "runtimes/hotspot_codecache.h"
#include "runtimes/hotspot_structs.h"

#include <sys/types.h>

struct firn_hotspot_proc;
struct firn_hotspot_method_event;

/* The runtime's counts (its stats op fills this struct). */
struct hotspot_runtime_stats {
	uint64_t processes;   /* JVM processes whose frames the walker was told how to read */
	uint64_t refused;     /* JVM processes refused (tables unreadable or of a layout unknown) */
	uint64_t methods;     /* methods announced and named */
	uint64_t unreadable;  /* ... whose names could not be read, or whose Method* changed */
	uint64_t held;        /* methods held now: a JVM's are freed when it ended (detach) */
	uint64_t inline_sites; /* compiled methods' call sites expanded into inlined methods */
	uint64_t unexpanded;  /* nmethods whose call sites could not be read (changed, unreadable) */
	char last_refusal[200];
	uint64_t bpf[8];      /* the walker's frames by outcome (enum firn_hotspot_stat order) */
};

/* The walker's values for a JVM with tables hs and code heaps cc (epoch left to the caller; the
 * bounds the heaps' span): 0 with *p filled, or -EPROTO with the reason in why (len bytes): an
 * offset out of the walker's reach, more heaps than it reads. */
int hotspot_proc_of(const struct hotspot_structs *hs, const struct hotspot_codecache *cc,
		    struct firn_hotspot_proc *p, char *why, size_t len);

/* The name of what the walker announced in e, in process pid with tables hs and code heaps cc,
 * read through mem into buf (len bytes, NUL-terminated; "" on an error): a method's
 * "java.util.HashMap.resize" ("Fix.work(int)" where its class has another method of its name:
 * hotspot_method_overloaded), or a stub's (e->cmethod 0: e->method is its CodeBlob) as HotSpot
 * names it, "StubRoutines (1)". 0; -ESTALE when the Method* no longer holds the ConstMethod the
 * walker saw (the method redefined or unloaded, its memory reused by another): never another
 * method's name; -EFAULT, -EINVAL, -ENOENT as hotspot_method_read and hotspot_codecache_find
 * (a stub's blob no longer where it was: -ESTALE too). */
int hotspot_announced_name(const struct hotspot_structs *hs, const struct hotspot_codecache *cc,
			   const struct hotspot_mem *mem, pid_t pid,
			   const struct firn_hotspot_method_event *e, char *buf, size_t len);

/* One row of a method's line number table: from bytecode index bci on, source line line. */
struct hotspot_line {
	uint32_t bci, line;
};

/* Decodes HotSpot's compressed line number table (CompressedLineNumberReadStream: a byte
 * bci_delta << 3 | line_delta per row, or 0xFF and the two deltas as signed UNSIGNED5 ints, 0 at
 * the end; excess: UNSIGNED5's lowest byte value, 1 from JDK 21 on, 0 before) from buf (len
 * bytes) into rows (at most max). Returns the rows decoded, or -EINVAL when the table runs past
 * len before its end, a bytecode index goes backwards or a line is not positive. */
int hotspot_lines_decode(const uint8_t *buf, size_t len, unsigned excess, struct hotspot_line *rows,
			 int max);

struct runtime_ops;
extern const struct runtime_ops runtime_java;

#endif
