/* Annotation of one function: its machine code disassembled with capstone (opened with dlopen on
 * first use, so that the commands that never annotate do not map it) from its ELF file (the
 * symbol's [start, end) read through the PT_LOAD segments), the source line of each instruction
 * from DWARF (libdw, the file's own debug info or a separate debug file found by build id or
 * .gnu_debuglink as the symbolizer finds it, lib/elf/debuginfo) when there is some,
 * and the samples of a profile attributed to the instructions they hit.
 * A struct disasm owns everything it points to; it keeps no file open after disasm_open. */
#ifndef FIRN_DISASM_H
#define FIRN_DISASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "elf/elfsym.h"
#include "model/profile.h"

/* One instruction. */
struct disasm_insn {
	uint64_t addr;   /* ELF virtual address */
	uint32_t size;
	int32_t file;    /* index into disasm.files, -1 when the line is unknown */
	uint32_t line;   /* source line, 0 when unknown */
	char text[112];  /* mnemonic and operands (Intel syntax on x86) */
	int64_t value;   /* samples attributed to it */
};

/* What one row of the annotation shows: a source line, or an instruction. */
struct disasm_row {
	bool source;     /* a source line (file, line of insns[insn]) before that instruction */
	uint32_t insn;
};

/* A cached source file, read on first use; lines[i] is line i + 1 (NUL-terminated). */
struct disasm_source;

struct disasm {
	char *path;                 /* the ELF file */
	char *name;                 /* the symbol disassembled, or "BASE+0xSTART" (from_bounds) */
	bool from_bounds;           /* no symbol covers it: [start, end) are its .eh_frame bounds */
	uint64_t start, end;        /* its [start, end), ELF virtual addresses */
	char build_id[2 * 64 + 1];  /* of the file, "" when none */
	struct disasm_insn *insns;  /* in address order */
	size_t n;
	char **files;               /* source file names referenced by insns[].file */
	size_t nfiles, capfiles;
	struct disasm_row *rows;    /* instructions with a source row wherever the line changes */
	size_t nrows;
	bool has_lines;             /* DWARF gave a line for at least one instruction */

	/* set by disasm_annotate / disasm_count */
	char *function, *module;    /* the function asked for (hist names: module is a base name) */
	char *recorded_build_id;    /* build id of the profile's mapping, "" when it had none */
	bool build_id_differs;      /* the file is not the one recorded: the annotation may be wrong */
	int64_t total;              /* value of every sample considered (the 100 % of the shares) */
	int64_t self;               /* value of the samples whose leaf frame is in the function */
	int64_t elsewhere;          /* ... of those, the value in other files (same function name) */
	int64_t outside;            /* ... the value in this file outside [start, end) */
	int64_t max_value;          /* the hottest instruction's value */

	/* private */
	char *mapping_file;         /* the file name as the profile's mappings give it */
	struct elfsym elf;          /* segments, to turn file offsets into virtual addresses */
	struct disasm_source *sources;
};

/* Disassembles the function of the ELF file at path that contains vaddr (name NULL) or that is
 * named name. 0, -ENOENT (no such file or function), -ENOEXEC (not ELF, or a machine capstone
 * does not know), -ELIBACC (capstone, opened on first use, cannot be loaded: disasm_library
 * names it), -ENOMEM, or -errno. d is initialized here; release it even on failure. */
int disasm_open(struct disasm *d, const char *path, const char *name, uint64_t vaddr);
/* The soname of the capstone library the disassembler opens on first use ("libcapstone.so.4"):
 * no other part of firn maps it. */
const char *disasm_library(void);
void disasm_release(struct disasm *d);

/* Index of the instruction containing vaddr, or -1. */
ptrdiff_t disasm_find(const struct disasm *d, uint64_t vaddr);
/* Adds value to the instruction containing vaddr; 0, or -ENOENT when none does. */
int disasm_add(struct disasm *d, uint64_t vaddr, int64_t value);

/* What to annotate, from which samples. The function is named as lib/analyze/hist names it: the function
 * name and the base name of its mapping's file (module NULL or "": any). */
struct disasm_query {
	const char *function, *module;
	uint32_t value_index;       /* the sample value to add up */
	bool no_kernel;             /* kernel frames are skipped: the innermost user frame is the leaf,
				     * and samples with only kernel frames count nowhere (as in hist) */
};

/* Finds the samples (samples[0..n) of p) whose leaf frame is in q's function, picks the file that
 * holds most of them (opened at its recorded path, else through /proc/PID/root of a sample's
 * "pid" label), disassembles the function there and attributes the samples (disasm_count).
 * 0, -ENOENT (no sample of that function, or no file), -EOPNOTSUPP (a kernel or JIT function: no
 * file to read), or disasm_open's errors. On success d->path names the file. */
int disasm_annotate(struct disasm *d, const struct profile *p,
		    const struct profile_sample *samples, size_t n, const struct disasm_query *q);
/* Recounts the values of an annotated d from samples[0..n) of p (same file and function). */
void disasm_count(struct disasm *d, const struct profile *p, const struct profile_sample *samples,
		  size_t n, const struct disasm_query *q);

/* Share of v in d->total, in percent (0 when the total is 0). */
double disasm_pct(const struct disasm *d, int64_t v);
/* How hot row i is: 2 for the hottest instructions (at least half the hottest one's value),
 * 1 for other instructions with samples, 0 otherwise. */
int disasm_row_heat(const struct disasm *d, size_t i);
/* Formats row i (without a newline) into buf: an instruction as "  12.34  401136:  imul ..."
 * (the share blank when it has no samples), a source row as its file:line and text. */
void disasm_row_text(struct disasm *d, size_t i, char *buf, size_t len);
/* The text of source line `line` of files[file], or NULL when it cannot be read. */
const char *disasm_source_line(struct disasm *d, int32_t file, uint32_t line);

/* Writes the annotation as text: a header (function, file, build id, shares), then every row.
 * color: highlight the hottest instructions with ANSI escapes. Returns 0 or -EIO. */
int disasm_write(struct disasm *d, FILE *f, bool color);

#endif
