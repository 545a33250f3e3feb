/* HotSpot's VMStructs tables read from a libjvm.so and a live process: see hotspot_structs.h. */
#include "runtimes/hotspot_structs.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/unaligned.h"
#include "elf/elffile.h"

#define FIELD(f) offsetof(struct hotspot_structs, f)
#define MAX_ENTRIES 16384 /* JDK 17: 788 fields, 768 types, 398 ints, 86 longs */
#define MAX_STRIDE 256    /* JDK 17 and 25: 48, 40, 16, 16 */
#define MAX_NAME 128      /* the longest name a row looks for is shorter */
#define MAX_OFFSET 65536  /* JavaThread's fields lie within 2 KiB */
#define PAGE 4096
#define NPAGES 8          /* the pages one read keeps: the tables' and their names' */

static const char *const sym_names[HS_NSYMS] = {
	"gHotSpotVMStructs", "gHotSpotVMTypes", "gHotSpotVMIntConstants", "gHotSpotVMLongConstants",
	"gHotSpotVMStructEntryTypeNameOffset", "gHotSpotVMStructEntryFieldNameOffset",
	"gHotSpotVMStructEntryTypeStringOffset", "gHotSpotVMStructEntryIsStaticOffset",
	"gHotSpotVMStructEntryOffsetOffset", "gHotSpotVMStructEntryAddressOffset",
	"gHotSpotVMStructEntryArrayStride",
	"gHotSpotVMTypeEntryTypeNameOffset", "gHotSpotVMTypeEntrySuperclassNameOffset",
	"gHotSpotVMTypeEntryIsOopTypeOffset", "gHotSpotVMTypeEntryIsIntegerTypeOffset",
	"gHotSpotVMTypeEntryIsUnsignedOffset", "gHotSpotVMTypeEntrySizeOffset",
	"gHotSpotVMTypeEntryArrayStride",
	"gHotSpotVMIntConstantEntryNameOffset", "gHotSpotVMIntConstantEntryValueOffset",
	"gHotSpotVMIntConstantEntryArrayStride",
	"gHotSpotVMLongConstantEntryNameOffset", "gHotSpotVMLongConstantEntryValueOffset",
	"gHotSpotVMLongConstantEntryArrayStride",
};

/* What a row takes: a field's offset, a static's address, a type's size, a constant. */
enum row_kind { R_OFFSET, R_STATIC, R_SIZE, R_INT, R_LONG };

/* One value a walker needs: the table entry that gives it and the field it fills. Several rows
 * may fill one field (a class renamed between JDKs: CompiledMethod's fields are nmethod's from
 * JDK 23); a field is required unless its every row says optional. */
struct row {
	enum row_kind kind;
	const char *type; /* R_OFFSET, R_STATIC, R_SIZE: the class; constants: NULL */
	const char *name; /* the field, or the constant's whole name */
	size_t field;
	bool optional;
};

static const struct row rows[] = {
	{ R_STATIC, "CodeCache", "_heaps", FIELD(codecache_heaps) },
	{ R_STATIC, "CodeCache", "_low_bound", FIELD(codecache_low_bound) },
	{ R_STATIC, "CodeCache", "_high_bound", FIELD(codecache_high_bound) },
	{ R_STATIC, "StubRoutines", "_call_stub_return_address", FIELD(call_stub_return), true },
	{ R_STATIC, "Abstract_VM_Version", "_s_vm_release", FIELD(vm_release) },
	{ R_STATIC, "Abstract_VM_Version", "_vm_major_version", FIELD(vm_major), true },
	{ R_OFFSET, "GrowableArrayBase", "_len", FIELD(array_len) },
	{ R_OFFSET, "GrowableArray<int>", "_data", FIELD(array_data) },
	{ R_OFFSET, "CodeHeap", "_memory", FIELD(codeheap_memory) },
	{ R_OFFSET, "CodeHeap", "_segmap", FIELD(codeheap_segmap) },
	{ R_OFFSET, "CodeHeap", "_log2_segment_size", FIELD(codeheap_log2_segment) },
	{ R_OFFSET, "HeapBlock::Header", "_length", FIELD(heapblock_length) },
	{ R_OFFSET, "HeapBlock::Header", "_used", FIELD(heapblock_used) },
	{ R_OFFSET, "VirtualSpace", "_low_boundary", FIELD(vspace_low_boundary) },
	{ R_OFFSET, "VirtualSpace", "_high_boundary", FIELD(vspace_high_boundary) },
	{ R_OFFSET, "VirtualSpace", "_low", FIELD(vspace_low) },
	{ R_OFFSET, "VirtualSpace", "_high", FIELD(vspace_high) },
	{ R_OFFSET, "CodeBlob", "_name", FIELD(blob_name) },
	{ R_OFFSET, "CodeBlob", "_size", FIELD(blob_size) },
	{ R_OFFSET, "CodeBlob", "_frame_size", FIELD(blob_frame_size) },
	{ R_OFFSET, "CodeBlob", "_frame_complete_offset", FIELD(blob_frame_complete) },
	{ R_OFFSET, "CodeBlob", "_code_begin", FIELD(blob_code_begin), true },
	{ R_OFFSET, "CodeBlob", "_code_offset", FIELD(blob_code_offset), true },
	{ R_OFFSET, "CodeBlob", "_kind", FIELD(blob_kind), true },
	{ R_OFFSET, "CompiledMethod", "_method", FIELD(nm_method) },
	{ R_OFFSET, "nmethod", "_method", FIELD(nm_method) },
	{ R_OFFSET, "nmethod", "_compile_id", FIELD(nm_compile_id) },
	{ R_OFFSET, "nmethod", "_scopes_pcs_offset", FIELD(nm_scopes_pcs_offset), true },
	{ R_OFFSET, "CompiledMethod", "_scopes_data_begin", FIELD(nm_scopes_data_begin), true },
	{ R_OFFSET, "nmethod", "_scopes_data_offset", FIELD(nm_scopes_data_offset), true },
	{ R_OFFSET, "nmethod", "_immutable_data", FIELD(nm_immutable_data), true },
	{ R_OFFSET, "nmethod", "_metadata_offset", FIELD(nm_metadata_offset), true },
	{ R_OFFSET, "nmethod", "_dependencies_offset", FIELD(nm_dependencies_offset), true },
	{ R_OFFSET, "CodeBlob", "_mutable_data", FIELD(blob_mutable_data), true },
	{ R_OFFSET, "CodeBlob", "_mutable_data_size", FIELD(blob_mutable_data_size), true },
	{ R_OFFSET, "CodeBlob", "_relocation_size", FIELD(blob_relocation_size), true },
	{ R_OFFSET, "nmethod", "_immutable_data_size", FIELD(nm_immutable_size), true },
	{ R_OFFSET, "Method", "_constMethod", FIELD(method_const) },
	{ R_OFFSET, "ConstMethod", "_constants", FIELD(cmethod_constants) },
	{ R_OFFSET, "ConstMethod", "_code_size", FIELD(cmethod_code_size) },
	{ R_OFFSET, "ConstMethod", "_name_index", FIELD(cmethod_name_index) },
	{ R_OFFSET, "ConstMethod", "_signature_index", FIELD(cmethod_signature_index) },
	{ R_OFFSET, "ConstMethod", "_flags", FIELD(cmethod_flags), true },
	{ R_OFFSET, "ConstMethod", "_flags._flags", FIELD(cmethod_flags), true },
	{ R_INT, NULL, "ConstMethod::_has_linenumber_table", FIELD(cmethod_has_lines), true },
	{ R_INT, NULL, "ConstMethodFlags::_misc_has_linenumber_table", FIELD(cmethod_has_lines), true },
	{ R_OFFSET, "ConstantPool", "_pool_holder", FIELD(cpool_holder) },
	{ R_OFFSET, "ConstantPool", "_source_file_name_index", FIELD(cpool_source_file_index), true },
	{ R_OFFSET, "ConstantPool", "_length", FIELD(cpool_length) },
	{ R_STATIC, "ClassLoaderDataGraph", "_head", FIELD(cldg_head), true },
	{ R_OFFSET, "ClassLoaderData", "_next", FIELD(cld_next), true },
	{ R_OFFSET, "ClassLoaderData", "_klasses", FIELD(cld_klasses), true },
	{ R_OFFSET, "Klass", "_next_link", FIELD(klass_next_link), true },
	{ R_OFFSET, "Klass", "_layout_helper", FIELD(klass_layout_helper), true },
	{ R_OFFSET, "InstanceKlass", "_methods", FIELD(iklass_methods), true },
	{ R_OFFSET, "Klass", "_name", FIELD(klass_name) },
	{ R_OFFSET, "Symbol", "_length", FIELD(symbol_length) },
	{ R_OFFSET, "Symbol", "_body", FIELD(symbol_body) },
	{ R_OFFSET, "PcDesc", "_pc_offset", FIELD(pcdesc_pc_offset) },
	{ R_OFFSET, "PcDesc", "_scope_decode_offset", FIELD(pcdesc_scope_decode_offset) },
	{ R_SIZE, "Method", NULL, FIELD(size_method) },
	{ R_SIZE, "ConstMethod", NULL, FIELD(size_cmethod) },
	{ R_SIZE, "ConstantPool", NULL, FIELD(size_cpool) },
	{ R_SIZE, "HeapBlock", NULL, FIELD(size_heapblock) },
	{ R_SIZE, "PcDesc", NULL, FIELD(size_pcdesc) },
	{ R_SIZE, "nmethod", NULL, FIELD(size_nmethod) },
	{ R_INT, NULL, "oopSize", FIELD(oop_size) },
	{ R_INT, NULL, "frame::interpreter_frame_sender_sp_offset", FIELD(frame_sender_sp) },
	{ R_INT, NULL, "frame::interpreter_frame_last_sp_offset", FIELD(frame_last_sp) },
	{ R_INT, NULL, "CodeBlobKind::Nmethod", FIELD(blob_kind_nmethod), true },
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* One read of the tables: where they are, and which rows were found. */
struct hsread {
	struct hotspot_structs *hs;
	const struct hotspot_mem *mem;
	pid_t pid;
	uint64_t word[HS_NSYMS]; /* each symbol's value in the process */
	bool set[NROWS];
	/* pages read whole, round robin: the ~2,000 entries and their names lie in a few dozen
	 * pages, so a read costs that many system calls, not one per entry and name */
	struct hspage {
		uint64_t addr; /* 0: empty */
		uint8_t data[PAGE];
	} *pages;
	unsigned next_page;
};

size_t hotspot_structs_count(void)
{
	return NROWS;
}

const char *hotspot_structs_name(size_t i, char *buf, size_t len)
{
	if (i >= NROWS)
		return NULL;
	if (rows[i].kind == R_SIZE)
		snprintf(buf, len, "sizeof(%s)", rows[i].type);
	else if (rows[i].type)
		snprintf(buf, len, "%s::%s", rows[i].type, rows[i].name);
	else
		snprintf(buf, len, "%s", rows[i].name);
	return buf;
}

const char *hotspot_syms_name(size_t i)
{
	return i < HS_NSYMS ? sym_names[i] : NULL;
}

/* Notes the address of one .dynsym symbol when it is one of ours (names may carry no version:
 * libelf gives them without "@@"). */
static void take_sym(struct hotspot_syms *s, const GElf_Sym *sym, const char *name)
{
	if (strncmp(name, "gHotSpotVM", 10) || sym->st_shndx == SHN_UNDEF || sym->st_value == 0)
		return;
	for (size_t i = 0; i < HS_NSYMS; i++) {
		if (strcmp(name, sym_names[i]) || s->addr[i])
			continue;
		s->addr[i] = sym->st_value;
		s->found++;
	}
}

/* Reads the symbols of an open libelf handle's .dynsym (where libjvm exports them). */
static int read_syms_elf(struct hotspot_syms *s, Elf *elf)
{
	GElf_Shdr sh;
	Elf_Scn *scn = NULL;

	memset(s, 0, sizeof(*s));
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return -EINVAL;
	while ((scn = elffile_next(elf, scn, NULL, SHT_DYNSYM, &sh))) {
		Elf_Data *data = elf_getdata(scn, NULL);
		size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t i = 0; data && i < n && i <= INT32_MAX; i++) {
			GElf_Sym sym;
			const char *name;
			if (gelf_getsym(data, (int)i, &sym) &&
			    (name = elf_strptr(elf, sh.sh_link, sym.st_name)))
				take_sym(s, &sym, name);
		}
	}
	return s->found == HS_NSYMS ? 0 : s->found ? -EPROTO : -ENOENT;
}

int hotspot_syms_read_fd(struct hotspot_syms *s, int fd)
{
	struct elffile f;
	int err;

	elffile_open_fd(&f, fd, ELFFILE_MAPPED); /* f.elf NULL when not ELF: read_syms_elf says so */
	err = read_syms_elf(s, f.elf);
	elffile_close(&f);
	return err;
}

int hotspot_syms_read_memory(struct hotspot_syms *s, const void *image, size_t size)
{
	struct elffile f;
	int err = elffile_open_image(&f, image, size);

	err = err == -ENOMEM ? (memset(s, 0, sizeof(*s)), err) : read_syms_elf(s, f.elf);
	elffile_close(&f);
	return err;
}

/* The bytes at addr (len of them, inside one page) from the pages kept, reading the page whole
 * when it is not kept; a page that cannot be read whole (the end of a mapping that is not
 * page-aligned: fakes and fuzzed images) is read as asked. 0 or -EFAULT. */
static int page_read(struct hsread *rd, uint64_t addr, void *buf, size_t len)
{
	uint64_t page = addr & ~(uint64_t)(PAGE - 1);

	for (unsigned i = 0; rd->pages && page && i < NPAGES; i++) {
		if (rd->pages[i].addr != page)
			continue;
		memcpy(buf, rd->pages[i].data + (addr - page), len);
		return 0;
	}
	struct hspage *p = rd->pages ? &rd->pages[rd->next_page] : NULL;
	if (p && page && !rd->mem->read(rd->mem->ctx, rd->pid, page, p->data, PAGE)) {
		p->addr = page;
		rd->next_page = (rd->next_page + 1) % NPAGES;
		memcpy(buf, p->data + (addr - page), len);
		return 0;
	}
	return rd->mem->read(rd->mem->ctx, rd->pid, addr, buf, len) ? -EFAULT : 0;
}

/* One read of process memory, a page at a time; a failure is noted in the reason (the first
 * one only). */
static int mem_read(struct hsread *rd, uint64_t addr, void *buf, size_t len, const char *what)
{
	size_t got = 0;

	while (addr && addr + len > addr && got < len) {
		uint64_t at = addr + got;
		size_t n = PAGE - (at % PAGE);
		n = n < len - got ? n : len - got;
		if (page_read(rd, at, (uint8_t *)buf + got, n))
			break;
		got += n;
	}
	if (addr && addr + len > addr && got == len)
		return 0;
	if (!rd->hs->reason[0])
		snprintf(rd->hs->reason, sizeof(rd->hs->reason),
			 "cannot read %s at 0x%llx", what, (unsigned long long)addr);
	return -EFAULT;
}

/* Reads the NUL-terminated string at addr into buf (len bytes), a page at a time so that a
 * string ending before an unmapped page reads. 0, -EFAULT, or -ENAMETOOLONG (buf "" then). */
static int read_str(struct hsread *rd, uint64_t addr, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		uint64_t at = addr + got;
		size_t n = PAGE - (at % PAGE);
		n = n < len - got ? n : len - got;
		if (mem_read(rd, at, buf + got, n, "a name"))
			return -EFAULT;
		if (memchr(buf + got, 0, n))
			return 0;
		got += n;
	}
	buf[0] = 0;
	return -ENAMETOOLONG;
}

/* Stores v into row r's field, at the field's width, and notes the row as found. */
static void store(struct hsread *rd, size_t r, uint64_t v)
{
	char *f = (char *)rd->hs + rows[r].field;

	if (rows[r].kind == R_STATIC || rows[r].kind == R_LONG) {
		memcpy(f, &v, sizeof(v));
	} else {
		uint32_t w = (uint32_t)v;
		memcpy(f, &w, sizeof(w));
	}
	rd->set[r] = true;
	rd->hs->matched++;
}

/* Refuses the tables: the reason names the row, from its name and what is wrong. */
static int refuse(struct hsread *rd, size_t r, const char *why)
{
	char name[MAX_NAME * 2];

	snprintf(rd->hs->reason, sizeof(rd->hs->reason), "HotSpot's %s %s",
		 hotspot_structs_name(r, name, sizeof(name)), why);
	return -EPROTO;
}

/* Takes one gHotSpotVMStructs entry of class type: the rows that name its field. */
static int take_struct(struct hsread *rd, const uint8_t *e, const char *type)
{
	char field[MAX_NAME] = "";
	const uint64_t *w = rd->word;

	for (size_t r = 0; r < NROWS; r++) {
		if ((rows[r].kind != R_OFFSET && rows[r].kind != R_STATIC) || strcmp(rows[r].type, type))
			continue;
		if (!field[0] && read_str(rd, load_u64(e, w[HS_STRUCT_FIELD_NAME]), field,
					  sizeof(field)) == -EFAULT)
			return -EFAULT;
		if (strcmp(rows[r].name, field))
			continue;
		bool is_static = load_i32(e, w[HS_STRUCT_IS_STATIC]) != 0;
		uint64_t v = load_u64(e, is_static ? w[HS_STRUCT_ADDRESS] : w[HS_STRUCT_OFFSET]);
		if (is_static != (rows[r].kind == R_STATIC))
			return refuse(rd, r, is_static ? "is static" : "is not static");
		if (is_static ? v == 0 : v >= MAX_OFFSET)
			return refuse(rd, r, "has an implausible value");
		store(rd, r, v);
	}
	return 0;
}

/* Takes one gHotSpotVMTypes entry: the size of a class a row names. */
static int take_type(struct hsread *rd, const uint8_t *e, const char *type)
{
	for (size_t r = 0; r < NROWS; r++) {
		if (rows[r].kind != R_SIZE || strcmp(rows[r].type, type))
			continue;
		uint64_t v = load_u64(e, rd->word[HS_TYPE_SIZE]);
		if (v == 0 || v >= MAX_OFFSET)
			return refuse(rd, r, "has an implausible size");
		store(rd, r, v);
	}
	return 0;
}

/* Takes one gHotSpotVMIntConstants entry. */
static int take_int(struct hsread *rd, const uint8_t *e, const char *name)
{
	for (size_t r = 0; r < NROWS; r++)
		if (rows[r].kind == R_INT && !strcmp(rows[r].name, name))
			store(rd, r, (uint32_t)load_i32(e, rd->word[HS_INT_VALUE]));
	return 0;
}

/* Takes one gHotSpotVMLongConstants entry. */
static int take_long(struct hsread *rd, const uint8_t *e, const char *name)
{
	for (size_t r = 0; r < NROWS; r++)
		if (rows[r].kind == R_LONG && !strcmp(rows[r].name, name))
			store(rd, r, load_u64(e, rd->word[HS_LONG_VALUE]));
	return 0;
}

/* One of the four tables: its symbols, and what takes an entry. */
struct table {
	enum hotspot_sym base, stride, name, last; /* last: its last offset symbol */
	int (*take)(struct hsread *rd, const uint8_t *e, const char *name);
	size_t count; /* FIELD of its entry count */
};

static const struct table tables[] = {
	{ HS_STRUCTS, HS_STRUCT_STRIDE, HS_STRUCT_TYPE_NAME, HS_STRUCT_ADDRESS, take_struct,
	  FIELD(nstructs) },
	{ HS_TYPES, HS_TYPE_STRIDE, HS_TYPE_TYPE_NAME, HS_TYPE_SIZE, take_type, FIELD(ntypes) },
	{ HS_INTS, HS_INT_STRIDE, HS_INT_NAME, HS_INT_VALUE, take_int, FIELD(nints) },
	{ HS_LONGS, HS_LONG_STRIDE, HS_LONG_NAME, HS_LONG_VALUE, take_long, FIELD(nlongs) },
};

/* Whether a table's entry layout is one this reader can follow: a stride within bounds, every
 * field (8 bytes at most) inside it. */
static int check_entry_layout(struct hsread *rd, const struct table *t)
{
	uint64_t stride = rd->word[t->stride];

	if (stride < 8 || stride > MAX_STRIDE) {
		snprintf(rd->hs->reason, sizeof(rd->hs->reason), "HotSpot's %s is implausible (%llu)",
			 sym_names[t->stride], (unsigned long long)stride);
		return -EPROTO;
	}
	for (int s = t->name; s <= (int)t->last; s++) {
		if (rd->word[s] <= stride - 8)
			continue;
		snprintf(rd->hs->reason, sizeof(rd->hs->reason), "HotSpot's %s lies outside its entry",
			 sym_names[s]);
		return -EPROTO;
	}
	return 0;
}

/* Reads one table, entry by entry, up to its end (a NULL name) or the cap. */
static int scan_table(struct hsread *rd, const struct table *t)
{
	uint64_t at = rd->word[t->base], stride = rd->word[t->stride];
	uint8_t e[MAX_STRIDE];
	int err;

	if ((err = check_entry_layout(rd, t)))
		return err;
	for (unsigned i = 0; i < MAX_ENTRIES; i++, at += stride) {
		char name[MAX_NAME];
		if (mem_read(rd, at, e, stride, sym_names[t->base]))
			return -EFAULT;
		uint64_t p = load_u64(e, rd->word[t->name]);
		if (!p) {
			memcpy((char *)rd->hs + t->count, &i, sizeof(i));
			return 0;
		}
		err = read_str(rd, p, name, sizeof(name));
		if (err == -EFAULT || (!err && (err = t->take(rd, e, name))))
			return err;
	}
	snprintf(rd->hs->reason, sizeof(rd->hs->reason), "HotSpot's %s has no end within %d entries",
		 sym_names[t->base], MAX_ENTRIES);
	return -EPROTO;
}

/* Whether some row that fills field was found. */
static bool field_set(const struct hsread *rd, size_t field)
{
	for (size_t r = 0; r < NROWS; r++)
		if (rows[r].field == field && rd->set[r])
			return true;
	return false;
}

/* Whether every required field was found; names the first missing one otherwise. */
static int check_required(struct hsread *rd)
{
	for (size_t r = 0; r < NROWS; r++) {
		bool optional = true;
		for (size_t o = 0; o < NROWS; o++)
			optional &= rows[o].field != rows[r].field || rows[o].optional;
		if (!optional && !field_set(rd, rows[r].field))
			return refuse(rd, r, "is missing");
	}
	if (field_set(rd, FIELD(blob_code_begin)) || field_set(rd, FIELD(blob_code_offset)))
		return 0;
	snprintf(rd->hs->reason, sizeof(rd->hs->reason),
		 "HotSpot's CodeBlob has neither _code_begin nor _code_offset");
	return -EPROTO;
}

/* The JDK's release string and feature version, read through the statics' addresses: the
 * version from _vm_major_version where the JDK has it, from the release string's start if not. */
static int read_version(struct hsread *rd)
{
	struct hotspot_structs *hs = rd->hs;
	uint64_t p;
	int32_t major = 0;

	if (mem_read(rd, hs->vm_release, &p, sizeof(p), "Abstract_VM_Version::_s_vm_release") ||
	    read_str(rd, p, hs->release, sizeof(hs->release)) == -EFAULT)
		return -EFAULT;
	if (hs->vm_major && mem_read(rd, hs->vm_major, &major, sizeof(major),
				     "Abstract_VM_Version::_vm_major_version"))
		return -EFAULT;
	if (!hs->vm_major)
		major = (int32_t)strtol(hs->release, NULL, 10);
	hs->jdk = major;
	if (major >= 9 && major < 100)
		return 0;
	snprintf(hs->reason, sizeof(hs->reason), "HotSpot of an unknown version (%d, release '%s')",
		 (int)major, hs->release);
	return -EPROTO;
}

/* Relations a real HotSpot on x86-64 keeps, and the interpreter frame's slots derived from the
 * ones it exports: frame_x86.hpp puts the Method* one word below last_sp, then the mirror
 * (JDK 9+), mdp, cache and locals, and the bcp below them (test_hotspot_frames checks both on
 * the stopped frames of JDK 17 and 25). */
static int check_layout(struct hsread *rd)
{
	struct hotspot_structs *hs = rd->hs;
	const char *bad = NULL;

	if (hs->oop_size != 8)
		bad = "oopSize is not 8 (not a 64-bit HotSpot)";
	else if (hs->frame_sender_sp > -1 || hs->frame_sender_sp < -8 ||
		 hs->frame_last_sp != hs->frame_sender_sp - 1)
		bad = "interpreter frame slots of an unknown layout";
	else if (hs->codecache_low_bound == hs->codecache_high_bound)
		bad = "CodeCache bounds that coincide";
	else if (hs->size_heapblock > 64 || hs->symbol_body <= hs->symbol_length)
		bad = "HeapBlock or Symbol of an unknown layout";
	if (bad) {
		snprintf(hs->reason, sizeof(hs->reason), "HotSpot's tables: %s", bad);
		return -EPROTO;
	}
	hs->frame_method = hs->frame_last_sp - 1;
	hs->frame_bcp = hs->frame_method - 5;
	return 0;
}

/* The value of each exported word in the process: the tables' pointers and their layouts. */
static int read_words(struct hsread *rd, const struct hotspot_syms *s, uint64_t bias)
{
	for (size_t i = 0; i < HS_NSYMS; i++) {
		if (!s->addr[i] || bias + s->addr[i] < bias)
			return -EINVAL;
		if (mem_read(rd, bias + s->addr[i], &rd->word[i], sizeof(rd->word[i]), sym_names[i]))
			return -EFAULT;
	}
	return 0;
}

/* Reads the tables with rd set up: the words, the four tables, then what they name. */
static int read_tables(struct hsread *rd, const struct hotspot_syms *s, uint64_t bias)
{
	struct hotspot_structs *hs = rd->hs;
	int err;

	if ((err = read_words(rd, s, bias))) {
		if (err == -EINVAL)
			snprintf(hs->reason, sizeof(hs->reason), "libjvm exports only %u of HotSpot's %d symbols",
				 s->found, HS_NSYMS);
		return err;
	}
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		if ((err = scan_table(rd, &tables[t])))
			return err;
	if ((err = check_required(rd)) || (err = read_version(rd)))
		return err;
	return check_layout(rd);
}

int hotspot_structs_read(struct hotspot_structs *hs, const struct hotspot_syms *s, uint64_t bias,
			 const struct hotspot_mem *mem, pid_t pid)
{
	struct hsread rd = { .hs = hs, .mem = mem, .pid = pid };

	memset(hs, 0, sizeof(*hs));
	if (!(rd.pages = calloc(NPAGES, sizeof(*rd.pages))))
		return -ENOMEM;
	int err = read_tables(&rd, s, bias);
	free(rd.pages);
	return err;
}
