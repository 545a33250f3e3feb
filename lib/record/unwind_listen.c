/* The DWARF unwinder's process descriptions, kept by process events (see unwind_listen.h). */
#include "record/unwind_listen.h"

#include <linux/types.h>

#include "../../bpf/firn.h"
#include "source/sampler.h"
#include "unwind/unwind.h"

/* The table's mappings of pid with the records read so far (a library just loaded); NULL: not
 * known, the unwinder reads /proc. */
static const struct procmap *maps_of(struct unwind_listen *ul, pid_t pid)
{
	procdispatch_read(ul->pd);
	return procdispatch_maps(ul->pd, pid);
}

void unwind_listen_describe(struct unwind_listen *ul, pid_t pid, bool lazy)
{
	const struct procmap *pm = ul->unw ? maps_of(ul, pid) : NULL;

	if (!ul->unw)
		return;
	if (pm)
		unwinder_add_process_maps(ul->unw, pid, pm, lazy);
	else
		unwinder_add_process(ul->unw, pid, lazy);
}

/* A process's first sample, or its exec: after its snapshot (a short process may be gone once
 * its tables are built; one already gone is not described: nothing is left to unwind, nor any
 * file of it to open). */
static void on_process(void *ctx, pid_t pid, bool exec)
{
	struct unwind_listen *ul = ctx;

	(void)exec;
	procdispatch_read(ul->pd);
	if (procdispatch_gone(ul->pd, pid))
		return;
	unwind_listen_describe(ul, pid, ul->all);
}

/* A sampled process ended; its unwind slot is free again. */
static void on_exit_(void *ctx, pid_t pid)
{
	unwinder_remove_process(((struct unwind_listen *)ctx)->unw, pid);
}

/* The unwinder met code without a table at addr: with -a the file's table is built (a library
 * mapped since), else the whole process is described again. */
static void on_no_table(void *ctx, pid_t pid, uint64_t addr)
{
	struct unwind_listen *ul = ctx;
	const struct procmap *pm = maps_of(ul, pid);

	if (procdispatch_gone(ul->pd, pid))
		return;
	if (!ul->all)
		unwind_listen_describe(ul, pid, false);
	else if (pm)
		unwinder_add_code_maps(ul->unw, pid, addr, pm);
	else
		unwinder_add_code(ul->unw, pid, addr);
}

struct procdispatch_listener unwind_listen_ops(struct unwind_listen *ul)
{
	if (!ul->unw)
		return (struct procdispatch_listener){ .ctx = ul };
	return (struct procdispatch_listener){ .on_process = on_process, .on_exit = on_exit_,
					       .on_no_table = on_no_table, .ctx = ul };
}

void unwind_listen_stats(const struct unwind_listen *ul, struct sampler_stats *st)
{
	struct unwinder_stats us;

	if (!ul->unw)
		return;
	unwinder_get_stats(ul->unw, &us);
	st->unwind_files = us.files;
	st->unwind_rows = us.rows;
	st->unwind_bytes = us.bytes;
	st->unwind_max_bytes = us.max_rows * sizeof(struct firn_row);
	st->unwind_no_table = us.no_table;
	st->unwind_over_limit = us.over_limit;
	st->unwind_build_ns = us.build_ns;
	st->unwind_too_many_maps = us.too_many_maps;
	st->unwind_cached = us.cached;
}
