/* V8's post-mortem constants (the v8dbg_* symbols) read from an ELF file: see v8consts.h. */
#include "runtimes/v8consts.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elffile.h"

#define PREFIX "v8dbg_"
#define FIELD(f) offsetof(struct v8consts, f)
#define FRAME(t) (offsetof(struct v8consts, frame_type) + (t) * sizeof(int32_t))
#define NFIELDS (offsetof(struct v8consts, found) / sizeof(int32_t))

/* One constant: its name (without the prefix), the field it fills, and its plausible range.
 * Several names may fill one field (a constant renamed between V8 versions); a field is
 * required unless its every row says optional. */
struct v8const {
	const char *name;
	size_t field;
	int32_t lo, hi;
	bool optional;
};

/* Sorted by name (strcmp order), for bsearch; test_v8consts checks the order. Offsets within
 * objects are below 4 KiB; fp slots lie within 64 bytes below fp; tags and masks are small. */
static const struct v8const consts[] = {
	{ "ConsStringTag", FIELD(cons_string_tag), 0, 15 },
	{ "FirstNonstringType", FIELD(first_nonstring_type), 1, 0xffff },
	{ "HeapObjectTag", FIELD(heap_object_tag), 1, 1 },
	{ "HeapObjectTagMask", FIELD(heap_object_tag_mask), 3, 3 },
	{ "OneByteStringTag", FIELD(one_byte_string_tag), 0, 15 },
	{ "SeqStringTag", FIELD(seq_string_tag), 0, 15 },
	{ "SmiShiftSize", FIELD(smi_shift_size), 0, 31 },
	{ "SmiTag", FIELD(smi_tag), 0, 0 },
	{ "SmiTagMask", FIELD(smi_tag_mask), 1, 1 },
	{ "StringEncodingMask", FIELD(string_encoding_mask), 1, 15 },
	{ "StringRepresentationMask", FIELD(string_representation_mask), 1, 15 },
	{ "ThinStringTag", FIELD(thin_string_tag), 0, 15 },
	{ "TwoByteStringTag", FIELD(two_byte_string_tag), 0, 15 },
	{ "class_BytecodeArray__data__uintptr_t", FIELD(bytecode_array_data), 1, 4095, true },
	{ "class_Code__bytecode_or_interpreter_data__HeapObject", FIELD(code_bytecode), 1, 4095, true },
	{ "class_ConsString__first__String", FIELD(cons_first), 1, 4095 },
	{ "class_ConsString__second__String", FIELD(cons_second), 1, 4095 },
	{ "class_FixedArrayBase__length__SMI", FIELD(fixed_array_length), 1, 4095, true },
	{ "class_FixedArray__data__uintptr_t", FIELD(fixed_array_data), 1, 4095 },
	{ "class_HeapObject__map__Map", FIELD(heap_object_map), 0, 0 },
	{ "class_JSFunction__context__Context", FIELD(js_function_context), 1, 4095 },
	{ "class_JSFunction__shared__SharedFunctionInfo", FIELD(js_function_shared), 1, 4095 },
	{ "class_Map__instance_type__uint16_t", FIELD(map_instance_type), 1, 4095 },
	{ "class_Script__line_ends__Object", FIELD(script_line_ends), 1, 4095 },
	{ "class_Script__name__Object", FIELD(script_name), 1, 4095 },
	{ "class_Script__source__Object", FIELD(script_source), 1, 4095 },
	{ "class_SeqOneByteString__chars__char", FIELD(seq_one_byte_chars), 1, 4095 },
	{ "class_SeqTwoByteString__chars__char", FIELD(seq_two_byte_chars), 1, 4095 },
	{ "class_SharedFunctionInfo__function_data__Object", FIELD(sfi_function_data), 1, 4095 },
	{ "class_SharedFunctionInfo__name_or_scope_info__Object", FIELD(sfi_name_or_scope_info), 1, 4095 },
	{ "class_SharedFunctionInfo__script_or_debug_info__HeapObject", FIELD(sfi_script_or_debug_info), 1,
	  4095 },
	{ "class_String__length__int32_t", FIELD(string_length), 1, 4095 },
	{ "class_ThinString__actual__String", FIELD(thin_actual), 1, 4095 },
	{ "frametype_BaselineFrame", FRAME(V8_FRAME_BASELINE), 0, 255 },
	{ "frametype_BuiltinExitFrame", FRAME(V8_FRAME_BUILTIN_EXIT), 0, 255 },
	{ "frametype_BuiltinFrame", FRAME(V8_FRAME_BUILTIN), 0, 255 },
	{ "frametype_ConstructEntryFrame", FRAME(V8_FRAME_CONSTRUCT_ENTRY), 0, 255 },
	{ "frametype_ConstructFrame", FRAME(V8_FRAME_CONSTRUCT), 0, 255 },
	{ "frametype_EntryFrame", FRAME(V8_FRAME_ENTRY), 0, 255 },
	{ "frametype_ExitFrame", FRAME(V8_FRAME_EXIT), 0, 255 },
	{ "frametype_InternalFrame", FRAME(V8_FRAME_INTERNAL), 0, 255 },
	{ "frametype_InterpretedFrame", FRAME(V8_FRAME_INTERPRETED), 0, 255 },
	{ "frametype_NativeFrame", FRAME(V8_FRAME_NATIVE), 0, 255 },
	{ "frametype_OptimizedFrame", FRAME(V8_FRAME_OPTIMIZED), 0, 255 },
	{ "frametype_StubFrame", FRAME(V8_FRAME_STUB), 0, 255 },
	{ "frametype_TurbofanFrame", FRAME(V8_FRAME_OPTIMIZED), 0, 255 },
	{ "off_fp_args", FIELD(off_fp_args), -64, 64 },
	{ "off_fp_bytecode_array", FIELD(off_fp_bytecode_array), -64, -8 },
	{ "off_fp_bytecode_offset", FIELD(off_fp_bytecode_offset), -64, -8 },
	{ "off_fp_context", FIELD(off_fp_context), -64, -8 },
	{ "off_fp_context_or_frame_type", FIELD(off_fp_marker), -64, -8 },
	{ "off_fp_function", FIELD(off_fp_function), -64, -8 },
	{ "scopeinfo_idx_first_vars", FIELD(scopeinfo_first_vars), 1, 64, true },
	{ "scopeinfo_idx_ncontextlocals", FIELD(scopeinfo_ncontextlocals), 0, 63, true },
	{ "type_ByteArray__BYTE_ARRAY_TYPE", FIELD(type_byte_array), 1, 0xffff, true },
	{ "type_BytecodeArray__BYTECODE_ARRAY_TYPE", FIELD(type_bytecode_array), 1, 0xffff },
	{ "type_Code__CODE_TYPE", FIELD(type_code), 1, 0xffff },
	{ "type_JSFunction__JS_FUNCTION_TYPE", FIELD(type_js_function), 1, 0xffff },
	{ "type_Map__MAP_TYPE", FIELD(type_map), 1, 0xffff },
	{ "type_ScopeInfo__SCOPE_INFO_TYPE", FIELD(type_scope_info), 1, 0xffff },
	{ "type_Script__SCRIPT_TYPE", FIELD(type_script), 1, 0xffff },
	{ "type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE", FIELD(type_shared_function_info), 1, 0xffff },
};
#define NCONSTS (sizeof(consts) / sizeof(consts[0]))

/* What one read has seen: which fields were set, for the required-field check. */
struct v8read {
	struct v8consts *c;
	bool set[NFIELDS];
};

size_t v8consts_count(void)
{
	return NCONSTS;
}

const char *v8consts_name(size_t i)
{
	return i < NCONSTS ? consts[i].name : NULL;
}

/* bsearch's comparison of a name with a table row. */
static int const_cmp(const void *key, const void *row)
{
	return strcmp(key, ((const struct v8const *)row)->name);
}

/* The 4-byte value of symbol s: from its section's bytes, 0 in a section without any (.bss, where
 * a constant that is 0 lands). Returns 0, or -1 when s does not lie inside its section. */
static int sym_value(Elf *elf, const GElf_Sym *s, int32_t *v)
{
	Elf_Scn *scn = elf_getscn(elf, s->st_shndx);
	GElf_Shdr sh;
	Elf_Data *d;

	if (!scn || !gelf_getshdr(scn, &sh) || s->st_size != sizeof(*v) || sh.sh_size < sizeof(*v) ||
	    s->st_value < sh.sh_addr || s->st_value - sh.sh_addr > sh.sh_size - sizeof(*v))
		return -1;
	if (sh.sh_type == SHT_NOBITS) {
		*v = 0;
		return 0;
	}
	d = elf_getdata(scn, NULL);
	uint64_t off = s->st_value - sh.sh_addr;
	if (!d || !d->d_buf || d->d_size < sizeof(*v) || off > d->d_size - sizeof(*v))
		return -1;
	memcpy(v, (const char *)d->d_buf + off, sizeof(*v));
	return 0;
}

/* Takes one v8dbg_ symbol: fills its field when it is one this reader knows and its value is in
 * range. Returns 0, or -EPROTO with the reason set. */
static int take_symbol(struct v8read *rd, Elf *elf, const GElf_Sym *s, const char *name)
{
	const struct v8const *k = bsearch(name, consts, NCONSTS, sizeof(consts[0]), const_cmp);
	struct v8consts *c = rd->c;
	int32_t v;

	c->found++;
	if (!k)
		return 0;
	bool inside = !sym_value(elf, s, &v);
	if (!inside || v < k->lo || v > k->hi) {
		snprintf(c->reason, sizeof(c->reason), "V8 constant %s%s %s", PREFIX, k->name,
			 inside ? "has an implausible value" : "lies outside its section");
		return -EPROTO;
	}
	memcpy((char *)c + k->field, &v, sizeof(v));
	rd->set[k->field / sizeof(int32_t)] = true;
	return 0;
}

/* Reads every v8dbg_ symbol of one symbol table. */
static int scan_symtab(struct v8read *rd, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	for (size_t i = 0; data && i < n && i <= INT32_MAX; i++) {
		GElf_Sym s;
		const char *name;
		int err;

		if (!gelf_getsym(data, (int)i, &s) || s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE ||
		    !(name = elf_strptr(elf, sh->sh_link, s.st_name)) || strncmp(name, PREFIX, strlen(PREFIX)))
			continue;
		if ((err = take_symbol(rd, elf, &s, name + strlen(PREFIX))))
			return err;
	}
	return 0;
}

/* Reads the constants from .dynsym (where node exports them) or, when it has none, .symtab. */
static int scan_symbols(struct v8read *rd, Elf *elf)
{
	static const Elf64_Word types[] = { SHT_DYNSYM, SHT_SYMTAB };

	for (size_t t = 0; t < 2 && !rd->c->found; t++) {
		Elf_Scn *scn = NULL;
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			int err;
			if (!gelf_getshdr(scn, &sh) || sh.sh_type != types[t])
				continue;
			if ((err = scan_symtab(rd, elf, scn, &sh)))
				return err;
		}
	}
	return rd->c->found ? 0 : -ENOENT;
}

/* Whether every field that some row fills was set; names the first missing one otherwise. */
static int check_required(struct v8read *rd)
{
	for (size_t i = 0; i < NCONSTS; i++) {
		if (consts[i].optional || rd->set[consts[i].field / sizeof(int32_t)])
			continue;
		snprintf(rd->c->reason, sizeof(rd->c->reason), "V8 constant %s%s is missing", PREFIX,
			 consts[i].name);
		return -EPROTO;
	}
	return 0;
}

/* Relations between constants that a real V8 keeps: distinct fp slots, a Smi layout of 31 or
 * 32 value bits, markers that tell frames apart. */
static int check_layout(struct v8consts *c)
{
	const char *bad = NULL;

	if (c->off_fp_function == c->off_fp_context || c->off_fp_function == c->off_fp_bytecode_array ||
	    c->off_fp_bytecode_array == c->off_fp_bytecode_offset)
		bad = "frame slots that coincide";
	else if (c->smi_shift_size != 0 && c->smi_shift_size != 31)
		bad = "a Smi shift other than 0 or 31";
	else if (c->frame_type[V8_FRAME_ENTRY] == c->frame_type[V8_FRAME_INTERPRETED] ||
		 c->frame_type[V8_FRAME_INTERPRETED] == c->frame_type[V8_FRAME_OPTIMIZED] ||
		 c->frame_type[V8_FRAME_BASELINE] == c->frame_type[V8_FRAME_INTERPRETED])
		bad = "frame types that coincide";
	if (!bad)
		return 0;
	snprintf(c->reason, sizeof(c->reason), "V8 constants of an unknown layout (%s)", bad);
	return -EPROTO;
}

/* Reads and checks the constants of an open libelf handle (ctx: the struct v8consts). */
static int read_elf(void *ctx, Elf *elf)
{
	struct v8consts *c = ctx;
	struct v8read rd = { .c = c };
	int err;

	memset(c, 0, sizeof(*c));
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return -EINVAL;
	if ((err = scan_symbols(&rd, elf)) || (err = check_required(&rd)))
		return err;
	return check_layout(c);
}

int v8consts_read_fd(struct v8consts *c, int fd)
{
	return elffile_with_fd(fd, ELFFILE_MAPPED, read_elf, c);
}

int v8consts_read_memory(struct v8consts *c, const void *image, size_t size)
{
	return elffile_with_image(image, size, read_elf, c);
}

int v8consts_frame_type(const struct v8consts *c, int32_t value)
{
	for (int t = 0; t < V8_FRAME_TYPES; t++)
		if (c->frame_type[t] == value)
			return t;
	return -1;
}
