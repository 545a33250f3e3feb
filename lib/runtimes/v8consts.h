/* V8's post-mortem constants: the `v8dbg_*` symbols that node (v20: 531 in .dynsym) and Debian's
 * libnode.so.108 (node 18: 495) export for debuggers — frame offsets from fp, class field offsets,
 * heap object and Smi tagging, instance type ids, frame type markers and string encodings. They
 * are read from the ELF file once per file, with no process and no V8 code run: the JavaScript
 * runtime hands them to its BPF frame walker and to the reader of function names.
 *
 * The file is outside input: every symbol is bounds-checked against its section, every value
 * against a plausible range, and a V8 whose layout this reader does not know (a constant missing,
 * an implausible value) is refused with the reason in `reason` — its frames then stay native.
 * tests/fuzz/fuzz_v8consts.c mutates ELF files through v8consts_read_memory. */
#ifndef FIRN_V8CONSTS_H
#define FIRN_V8CONSTS_H

#include <stddef.h>
#include <stdint.h>

/* Frame types: the markers V8 stores at fp + off_fp_context_or_frame_type (as Smis) in frames
 * that are not JavaScript, and the kinds of JavaScript frames. */
enum v8_frame_type {
	V8_FRAME_ENTRY,
	V8_FRAME_CONSTRUCT_ENTRY,
	V8_FRAME_EXIT,
	V8_FRAME_BUILTIN_EXIT,
	V8_FRAME_INTERPRETED,
	V8_FRAME_BASELINE,
	V8_FRAME_OPTIMIZED, /* TurbofanFrame (V8 11+), OptimizedFrame before */
	V8_FRAME_STUB,
	V8_FRAME_BUILTIN,
	V8_FRAME_INTERNAL,
	V8_FRAME_CONSTRUCT,
	V8_FRAME_NATIVE,
	V8_FRAME_TYPES,
};

struct v8consts {
	/* slots relative to a JavaScript frame's fp (negative) */
	int32_t off_fp_function, off_fp_context, off_fp_marker, off_fp_bytecode_array,
		off_fp_bytecode_offset, off_fp_args;
	/* tagging: a heap pointer has (p & heap_object_tag_mask) == heap_object_tag; a Smi's value
	 * is p >> (smi_shift_size + smi_tag_size), smi_tag_size being 1 */
	uint32_t heap_object_tag, heap_object_tag_mask, smi_tag, smi_tag_mask, smi_shift_size;
	/* field offsets within objects (from the untagged address) */
	uint32_t heap_object_map, map_instance_type, js_function_shared, js_function_context,
		sfi_name_or_scope_info, sfi_function_data, sfi_script_or_debug_info, script_name,
		script_source, script_line_ends, string_length, seq_one_byte_chars, seq_two_byte_chars,
		cons_first, cons_second, thin_actual, fixed_array_data;
	/* optional (0: not exported): FixedArrayBase::length, where a BytecodeArray's bytes start
	 * (an interpreted frame's offset slot counts from the tagged pointer: offset + data - tag),
	 * the ScopeInfo slots of its first variable and of its context-local count */
	uint32_t fixed_array_length, bytecode_array_data, scopeinfo_first_vars,
		scopeinfo_ncontextlocals;
	/* optional: baseline Code's BytecodeArray (or InterpreterData), ByteArray's type (a source
	 * position table is one) */
	uint32_t code_bytecode, type_byte_array;
	/* instance type ids (Map::instance_type) */
	uint32_t type_js_function, type_shared_function_info, type_script, type_code,
		type_bytecode_array, type_scope_info, type_map, first_nonstring_type;
	/* string shape: (instance_type & mask) == tag */
	uint32_t string_encoding_mask, one_byte_string_tag, two_byte_string_tag,
		string_representation_mask, seq_string_tag, cons_string_tag, thin_string_tag;
	int32_t frame_type[V8_FRAME_TYPES];
	unsigned found;   /* v8dbg_* symbols seen in the file (0: not a V8) */
	char reason[160]; /* why the file was refused, "" when it was not */
};

/* Reads the constants of the ELF file open on fd (not closed). Returns 0 with *c filled; -ENOENT
 * when the file has no v8dbg_* symbol (not a V8: c->found is 0); -EPROTO when it has some but
 * not a layout this reader knows (c->reason says which constant is missing or implausible);
 * -EINVAL when fd is not a readable ELF file; -ENOMEM. */
int v8consts_read_fd(struct v8consts *c, int fd);

/* The same for an ELF image in memory (size bytes at image, not copied, not kept). */
int v8consts_read_memory(struct v8consts *c, const void *image, size_t size);

/* The frame type whose marker is value (the Smi already untagged), or -1. */
int v8consts_frame_type(const struct v8consts *c, int32_t value);

/* The number of constants this reader looks for, and the name of the i-th (without "v8dbg_"):
 * their table is sorted by name (tests/unit/test_v8consts.c checks it). */
size_t v8consts_count(void);
const char *v8consts_name(size_t i);

#endif
