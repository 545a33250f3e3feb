/* Go functions' unwind rows from their pcsp tables, merged into a file's .eh_frame rows. */
#include "unwind/unwind_go.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "unwind/unwind_table.h"

/* The runtime's functions that have no caller (the bottom of a goroutine's, a thread's or the
 * process's first stack), and those that switch stacks (their caller is on another stack). */
static const char *const top_frames[] = { "runtime.goexit", "runtime.mstart", "runtime.rt0_go" };
static const char *const switchers[] = { "runtime.mcall", "runtime.systemstack",
					 "runtime.morestack" };

/* True when name is one of the n names of list. */
static bool named(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; name && i < n; i++)
		if (!strcmp(name, list[i]))
			return true;
	return false;
}

/* True when fn is written in assembly: flagged so (Go 1.19 on) or from a .s file. */
static bool is_asm(const struct gopclntab_fn *fn)
{
	size_t len = fn->file ? strlen(fn->file) : 0;

	return (fn->flag & GOPCLNTAB_ASM) || (len > 2 && !strcmp(fn->file + len - 2, ".s"));
}

void unwind_go_row(const struct gopclntab_fn *fn, uint64_t pc, int32_t delta, struct firn_row *r)
{
	memset(r, 0, sizeof(*r));
	r->pc = (uint32_t)pc;
	if ((fn->flag & GOPCLNTAB_TOPFRAME) || named(fn->name, top_frames, 3)) {
		r->type = FIRN_ROW_END;
		return;
	}
	if (named(fn->name, switchers, 3) || delta < 0) {
		r->type = FIRN_ROW_UNSUPPORTED;
		return;
	}
	if (delta > INT16_MAX - 8) {
		r->type = FIRN_ROW_GAP; /* a frame over 32 KiB: by its frame pointer, as before */
		return;
	}
	r->type = FIRN_ROW_CFA_RSP;
	r->cfa_off = (int16_t)(delta + 8);
	if (delta >= 8 && !is_asm(fn))
		r->rbp_off8 = -2; /* the prologue's PUSHQ BP or MOVQ BP, framesize-8(SP) */
}

/* The rows being made: the vector, and the function whose runs are added. */
struct go_rows {
	struct firn_row *rows;
	uint32_t n, cap;
	const struct gopclntab_fn *fn;
	uint32_t runs; /* of fn */
};

/* Appends a row unless it says what the last one says (unwind_rows_append: as the FDEs' rows). */
static int append(struct go_rows *b, const struct firn_row *r)
{
	return unwind_rows_append(&b->rows, &b->n, &b->cap, r);
}

/* gopclntab_pcsp's callback: one run's row. */
static int add_run(void *ctx, uint64_t pc, int32_t delta)
{
	struct go_rows *b = ctx;
	struct firn_row r;

	unwind_go_row(b->fn, pc, delta, &r);
	b->runs++;
	return append(b, &r);
}

/* Adds one function's rows, or one GAP for it when its table cannot be read all through. */
static int add_func(struct go_rows *b, const struct gopclntab *g, const struct gopclntab_fn *fn)
{
	uint32_t first = b->n;
	struct firn_row gap = { .pc = (uint32_t)fn->entry, .type = FIRN_ROW_GAP };
	int err;

	b->fn = fn;
	b->runs = 0;
	err = gopclntab_pcsp(g, fn, add_run, b);
	if (err == -ENOMEM)
		return err;
	if (err || !b->runs) {
		b->n = first; /* the rows before stay as they were: append only added or replaced */
		return append(b, &gap);
	}
	return 0;
}

int unwind_go_rows(const struct gopclntab *g, struct firn_row **rows, uint32_t *n)
{
	struct go_rows b = { 0 };
	struct gopclntab_fn fn;
	uint64_t end = 0;
	int err = 0;

	for (uint64_t i = 0; i < g->nfunc && !err; i++) {
		if (gopclntab_fn(g, i, &fn) || fn.entry < end || fn.end > UINT32_MAX)
			break;
		if (end && fn.entry > end)
			err = append(&b, &(struct firn_row){ .pc = (uint32_t)end, .type = FIRN_ROW_GAP });
		if (!err)
			err = add_func(&b, g, &fn);
		end = fn.end;
	}
	if (!err && end)
		err = append(&b, &(struct firn_row){ .pc = (uint32_t)end, .type = FIRN_ROW_GAP });
	if (err) {
		free(b.rows);
		return err;
	}
	*rows = b.rows;
	*n = b.n;
	return 0;
}

/* The row in force at pc of rows[0..n) (*i: the search's position, moved forward), or NULL
 * before the first. */
static const struct firn_row *at(const struct firn_row *rows, uint32_t n, uint32_t *i, uint64_t pc)
{
	while (*i < n && rows[*i].pc <= pc)
		(*i)++;
	return *i ? &rows[*i - 1] : NULL;
}

/* Merges t's rows and the Go rows into out: at each row's pc of either, t's row where it has
 * one that is no GAP, else the Go row, else t's GAP. */
static int merge(const struct unwind_table *t, const struct firn_row *go, uint32_t ngo,
		 struct go_rows *out)
{
	uint32_t i = 0, j = 0, ti = 0, gi = 0;
	int err = 0;

	while (!err && (i < t->n || j < ngo)) {
		uint64_t pc = j >= ngo || (i < t->n && t->rows[i].pc <= go[j].pc) ? t->rows[i].pc
										   : go[j].pc;
		const struct firn_row *tr = at(t->rows, t->n, &ti, pc), *gr = at(go, ngo, &gi, pc);
		const struct firn_row *pick = tr && tr->type != FIRN_ROW_GAP ? tr : gr ? gr : tr;
		struct firn_row r = *pick;
		r.pc = (uint32_t)pc;
		err = append(out, &r);
		i = ti, j = gi;
	}
	return err;
}

int unwind_go_add(struct unwind_table *t, int fd)
{
	struct gopclntab *g = gopclntab_new_fd(fd);
	struct go_rows out = { 0 };
	struct firn_row *go = NULL;
	uint32_t ngo = 0;
	int err;

	if (!g)
		return errno == ENOMEM ? -ENOMEM : -ENOENT;
	/* x86-64's table (1-byte instructions, 8-byte pointers): the rows are rsp's */
	err = g->quantum == 1 && g->ptrsize == 8 ? unwind_go_rows(g, &go, &ngo) : -ENOENT;
	gopclntab_free(g);
	if (!err && !ngo)
		err = -ENOENT;
	if (!err)
		err = merge(t, go, ngo, &out);
	free(go);
	if (err) {
		free(out.rows);
		return err;
	}
	free(t->rows);
	t->rows = out.rows;
	t->n = out.n;
	t->cap = out.cap;
	memset(t->by_type, 0, sizeof(t->by_type));
	for (uint32_t k = 0; k < t->n; k++)
		t->by_type[t->rows[k].type & 7]++;
	return 0;
}
