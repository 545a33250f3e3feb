/* A pc in a live JVM's CodeCache to the CodeBlob holding it, as HotSpot's CodeHeap::find_start
 * finds it: the pc's segment in the code heap that contains it, then back through the segment
 * map (a byte per segment: 0 where a block starts, else the hops back towards its start, 0xFF a
 * segment never allocated) to the block's HeapBlock header, the CodeBlob right after it. The
 * blob is then told apart (nmethod, the interpreter, an adapter, another stub) and an nmethod's
 * Method* read, for hotspot_method_read (hotspot_names.h) to name.
 *
 * Two steps: each code heap's bounds, segment map and segment size are read once per process
 * (hotspot_codecache_read; they move only when a heap grows), then each pc is looked up
 * (hotspot_codecache_find). The process is outside input: the heaps are checked against the
 * CodeCache's bounds, the hops bounded in number and by the heap's start, the blob checked to
 * hold the pc; a block freed or reused meanwhile gives an error, never another blob.
 * tests/fuzz/fuzz_hotspot_codecache.c looks pcs up in fuzzed memory through it. */
#ifndef FIRN_HOTSPOT_CODECACHE_H
#define FIRN_HOTSPOT_CODECACHE_H

#include <stdint.h>
#include <sys/types.h>

#include "runtimes/hotspot_structs.h"

#define HS_CODEHEAPS_MAX 8     /* non-nmethods, profiled, non-profiled: 3 in practice */
#define HS_SEGMAP_MAX_HOPS 256 /* 256 hops of up to 254 segments: 8 MiB blobs at 128 B */

/* One code heap: its reserved memory [low, high), its segment map's first byte, log2 of its
 * segment size (HotSpot's CodeCacheSegmentSize: 64 or 128 bytes on x86-64). */
struct hotspot_codeheap {
	uint64_t low, high, segmap;
	unsigned log2_segment;
};

/* The code heaps of one process. */
struct hotspot_codecache {
	struct hotspot_codeheap heap[HS_CODEHEAPS_MAX];
	unsigned nheaps;
};

/* What a CodeBlob is, for a walker: how to unwind it and how to name it. */
enum hotspot_blob_kind {
	HS_BLOB_NMETHOD,     /* compiled Java code (C1, C2) or a native method's wrapper */
	HS_BLOB_INTERPRETER, /* the template interpreter ("Interpreter") */
	HS_BLOB_ADAPTER,     /* "I2C/C2I adapters", "MethodHandles adapters" */
	HS_BLOB_STUB,        /* any other: StubRoutines, vtable chunks, runtime stubs, ... */
};

/* A CodeBlob found by pc. */
struct hotspot_blob {
	uint64_t addr;       /* the CodeBlob (the HeapBlock header just before it) */
	uint64_t code_begin; /* its first instruction */
	uint64_t method;     /* an nmethod's Method* (0 for other kinds) */
	uint32_t size;       /* CodeBlob::_size: bytes from addr, the pc among them */
	int32_t frame_size;  /* CodeBlob::_frame_size, in words (-1: the blob makes no frame) */
	enum hotspot_blob_kind kind;
	char name[48];       /* CodeBlob::_name, NUL-terminated, truncated: "nmethod", "Interpreter" */
};

/* Reads the code heaps of process pid (CodeCache::_heaps) through mem with hs's offsets into
 * *cc. 0; -EFAULT when memory on the way could not be read; -EINVAL when what was read is no
 * code cache as hs describes (no heap or more than HS_CODEHEAPS_MAX, a heap empty or outside
 * the CodeCache's bounds, a segment size outside 16 B - 64 KiB). *cc is zeroed on an error. */
int hotspot_codecache_read(const struct hotspot_structs *hs, const struct hotspot_mem *mem,
			   pid_t pid, struct hotspot_codecache *cc);

/* Finds the CodeBlob holding pc in the heaps cc (of process pid) through mem into *out. 0;
 * -ENOENT when pc is in no heap, in a segment never allocated, in a free block, or outside the
 * blob found; -EFAULT when memory on the way could not be read; -ELOOP past HS_SEGMAP_MAX_HOPS
 * hops; -EINVAL when the segment map hops before the heap's start or the blob is no CodeBlob
 * (a size, frame size or code start out of bounds, a name unreadable). *out is zeroed on an
 * error. */
int hotspot_codecache_find(const struct hotspot_structs *hs, const struct hotspot_codecache *cc,
			   const struct hotspot_mem *mem, pid_t pid, uint64_t pc,
			   struct hotspot_blob *out);

/* The kind's name: "nmethod", "interpreter", "adapter", "stub" ("?" for no kind). */
const char *hotspot_blob_kind_name(enum hotspot_blob_kind kind);

#endif
