/* HotSpot's VMStructs: the tables libjvm.so fills for debuggers (the serviceability agent) and
 * exports in .dynsym — gHotSpotVMStructs (fields: offsets within objects, addresses of statics),
 * gHotSpotVMTypes (sizes), gHotSpotVMIntConstants and gHotSpotVMLongConstants — with the
 * gHotSpotVM*Entry*Offset and *ArrayStride words that give each table's entry layout. A Java
 * frame walker needs nothing else to find the CodeCache, an nmethod's Method*, and a Method's
 * class, name and signature, on any JDK from 9 on.
 *
 * Two steps: the symbols' addresses come from the file (hotspot_syms_read_*, once per file);
 * the tables are read from a live process (hotspot_structs_read), since their pointers are
 * relocated at load, through a struct hotspot_mem (process memory; tests give fake memory).
 * The process is outside input: entry counts are capped, strides and entry layouts bounded,
 * strings bounded, every read checked; a table this reader does not know (a field missing, an
 * implausible value) is refused with the reason in `reason`.
 * tests/fuzz/fuzz_hotspot_structs.c reads fuzzed memory through it. */
#ifndef FIRN_HOTSPOT_STRUCTS_H
#define FIRN_HOTSPOT_STRUCTS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

/* The exported symbols, in the order of hotspot_syms.addr (hotspot_syms_name names them). */
enum hotspot_sym {
	HS_STRUCTS, HS_TYPES, HS_INTS, HS_LONGS, /* pointers to the four tables */
	HS_STRUCT_TYPE_NAME, HS_STRUCT_FIELD_NAME, HS_STRUCT_TYPE_STRING, HS_STRUCT_IS_STATIC,
	HS_STRUCT_OFFSET, HS_STRUCT_ADDRESS, HS_STRUCT_STRIDE,
	HS_TYPE_TYPE_NAME, HS_TYPE_SUPERCLASS, HS_TYPE_IS_OOP, HS_TYPE_IS_INTEGER,
	HS_TYPE_IS_UNSIGNED, HS_TYPE_SIZE, HS_TYPE_STRIDE,
	HS_INT_NAME, HS_INT_VALUE, HS_INT_STRIDE,
	HS_LONG_NAME, HS_LONG_VALUE, HS_LONG_STRIDE,
	HS_NSYMS,
};

/* The symbols' ELF virtual addresses in libjvm.so (0: not exported). */
struct hotspot_syms {
	uint64_t addr[HS_NSYMS];
	unsigned found; /* how many of them the file exports (0: not a HotSpot) */
};

/* Reads the symbols from the .dynsym of the ELF file open on fd (not closed). 0 when all are
 * there; -ENOENT when none is (not a libjvm); -EPROTO when only some are; -EINVAL when fd is
 * not a readable ELF file. */
int hotspot_syms_read_fd(struct hotspot_syms *s, int fd);
/* The same for an ELF image in memory (size bytes, not kept). -ENOMEM too. */
int hotspot_syms_read_memory(struct hotspot_syms *s, const void *image, size_t size);
/* The i-th symbol's name ("gHotSpotVMStructs"...), NULL past HS_NSYMS. */
const char *hotspot_syms_name(size_t i);

/* Reads len bytes at addr of process pid into buf: 0, or -EFAULT (the shape of struct v8mem). */
struct hotspot_mem {
	int (*read)(void *ctx, pid_t pid, uint64_t addr, void *buf, size_t len);
	void *ctx;
};

/* Reads len bytes at addr into v through mem: 0, or -EFAULT (address 0, a wrapping range or a
 * failed read; v zeroed then), so a reader of a moving heap never uses stale bytes. */
static inline int hotspot_mem_read(const struct hotspot_mem *mem, pid_t pid, uint64_t addr,
				   void *v, size_t len)
{
	if (addr && addr + len > addr && !mem->read(mem->ctx, pid, addr, v, len))
		return 0;
	memset(v, 0, len);
	return -EFAULT;
}

/* The 8-byte word at addr, as hotspot_mem_read. */
static inline int hotspot_mem_word(const struct hotspot_mem *mem, pid_t pid, uint64_t addr,
				   uint64_t *v)
{
	return hotspot_mem_read(mem, pid, addr, v, sizeof(*v));
}

/* What a walker of HotSpot's frames needs, from one process's tables. Offsets are bytes from
 * the start of an object; statics are addresses in the process (of the variable, not its
 * value); "0" in an optional field means the JDK does not have it. */
struct hotspot_structs {
	int jdk;               /* feature version: 17, 25 (Abstract_VM_Version::_vm_major_version) */
	char release[64];      /* Abstract_VM_Version::_s_vm_release: "17.0.15+6-Debian-1deb12u1" */
	/* statics */
	uint64_t codecache_heaps;      /* GrowableArray<CodeHeap*>* */
	uint64_t codecache_low_bound, codecache_high_bound; /* address: the code cache's bounds */
	uint64_t call_stub_return;     /* StubRoutines::_call_stub_return_address (optional) */
	uint64_t vm_release, vm_major; /* Abstract_VM_Version's (vm_major optional) */
	/* GrowableArray<T>, CodeHeap and its VirtualSpace */
	uint32_t array_len, array_data;
	uint32_t codeheap_memory, codeheap_segmap, codeheap_log2_segment;
	/* a code heap's blocks: a HeapBlock header (its _length in segments: a size_t up to JDK
	 * 22, a uint32_t from 23, so its low 4 bytes; _used), its CodeBlob after sizeof(HeapBlock) */
	uint32_t heapblock_length, heapblock_used;
	uint32_t vspace_low_boundary, vspace_high_boundary, vspace_low, vspace_high;
	/* CodeBlob: the code's start is a pointer field up to JDK 22 (code_begin), an int offset
	 * from the blob from JDK 23 (code_offset); one of the two is set */
	uint32_t blob_name, blob_size, blob_frame_size, blob_frame_complete;
	uint32_t blob_code_begin, blob_code_offset, blob_kind; /* kind: JDK 23+ (optional) */
	/* nmethod (CompiledMethod's fields up to JDK 22) */
	uint32_t nm_method, nm_compile_id;
	uint32_t nm_scopes_pcs_offset, nm_scopes_data_begin, nm_scopes_data_offset; /* optional */
	uint32_t nm_immutable_data; /* JDK 23+: scopes and pcs count from here (optional) */
	/* up to JDK 22, ints from the nmethod: its metadata table (up to scopes_data_begin) and
	 * where its PcDescs end (optional: hotspot_inline.h expands frames where both are read) */
	uint32_t nm_metadata_offset, nm_dependencies_offset;
	/* from JDK 23 (optional): the metadata table after the relocations in CodeBlob's mutable
	 * data (C heap), the PcDescs and scopes in the immutable data's _immutable_data_size */
	uint32_t blob_mutable_data, blob_mutable_data_size, blob_relocation_size, nm_immutable_size;
	/* Method, ConstMethod (bytecodes follow it), ConstantPool (its slots follow it) */
	uint32_t method_const, cmethod_constants, cmethod_code_size, cmethod_name_index,
		cmethod_signature_index, cpool_holder, cpool_source_file_index, cpool_length;
	/* ConstMethod's flags (a u2 up to JDK 20, ConstMethodFlags' u4 after; optional) and the bit
	 * saying its compressed line number table follows the bytecodes (0: not known) */
	uint32_t cmethod_flags;
	int32_t cmethod_has_lines;
	uint32_t klass_name, symbol_length, symbol_body;
	/* the loaded classes and their methods, for tests and diagnostics (optional): the list of
	 * ClassLoaderData from ClassLoaderDataGraph::_head, each one's Klass list (_next_link),
	 * an InstanceKlass's Array<Method*> (a class whose _layout_helper is >= 0) */
	uint64_t cldg_head;
	uint32_t cld_next, cld_klasses, klass_next_link, klass_layout_helper, iklass_methods;
	uint32_t pcdesc_pc_offset, pcdesc_scope_decode_offset;
	/* sizes */
	uint32_t size_method, size_cmethod, size_cpool, size_heapblock, size_pcdesc, size_nmethod;
	/* int constants: frame slots in words from rbp (frame_x86.hpp); method and bcp derived */
	int32_t oop_size, frame_sender_sp, frame_last_sp, frame_method, frame_bcp;
	int32_t blob_kind_nmethod; /* CodeBlobKind::Nmethod, JDK 23+ (optional; 0 before) */
	/* what the tables held */
	unsigned nstructs, ntypes, nints, nlongs, matched;
	char reason[160];      /* why the tables were refused, "" when they were not */
};

/* Reads the tables of the libjvm at load bias `bias` in process pid, whose file gave s, through
 * mem. 0 with *hs filled; -EFAULT when the process's memory could not be read where the tables
 * say (reason says which); -EPROTO for tables of an unknown shape or a field missing (reason
 * says which); -EINVAL when s is incomplete; -ENOMEM. Memory is read a page at a time (a few
 * dozen reads for the whole tables), or as asked where a whole page cannot be read. */
int hotspot_structs_read(struct hotspot_structs *hs, const struct hotspot_syms *s, uint64_t bias,
			 const struct hotspot_mem *mem, pid_t pid);

/* The number of table rows this reader looks for, and the i-th one's name as "Type::_field",
 * "sizeof(Type)" or the constant's name (for tests and refusals). */
size_t hotspot_structs_count(void);
const char *hotspot_structs_name(size_t i, char *buf, size_t len);

#endif
