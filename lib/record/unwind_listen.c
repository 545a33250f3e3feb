/* The DWARF unwinder's process descriptions, kept by process events (see unwind_listen.h). */
#include "record/unwind_listen.h"

#include <limits.h>
#include <linux/types.h>
#include <sys/mman.h>

#include "../../bpf/firn.h"
#include "proc/procevents.h"
#include "source/sampler.h"
#include "unwind/unwind.h"

/* The table's mappings of pid with the records read so far (a library just loaded); NULL: not
 * known, the unwinder reads /proc. */
static const struct procmap *maps_of(struct unwind_listen *ul, pid_t pid)
{
	procdispatch_read(ul->pd);
	return procdispatch_maps(ul->pd, pid);
}

/* The side-band records applied so far (0 without records). */
static uint64_t records_read(const struct unwind_listen *ul)
{
	struct procdispatch_stats st;

	procdispatch_get_stats(ul->pd, &st);
	return procdispatch_has_records(ul->pd) ? st.records : 0;
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
	ul->last_pid = pid;
	ul->last_records = records_read(ul);
}

/* A process told to the listeners mapped code (dlopen; or its new image did, its exec not
 * told yet): its file's table is loaded now, in the order mapped, before the process runs it
 * (the kernel finds the mapping by itself and waits only for the file's rows), not with a
 * description of every mapping it has. With -a only the files of sampled code are
 * (on_no_table). */
static int on_record(void *ctx, const struct proc_event *ev, pid_t pid)
{
	struct unwind_listen *ul = ctx;
	const struct proctab_proc *p;
	char path[PATH_MAX];

	if (ul->all || pid <= 0 || ev->kind != PROC_EV_MMAP || !(ev->prot & PROT_EXEC) ||
	    !(p = procdispatch_find(ul->pd, pid)) || !p->heard.sampled)
		return 0;
	struct procmap_entry e = procmap_entry_of_event(ev, path, sizeof(path));
	unwinder_load_mapping(ul->unw, pid, &e);
	return 0;
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
	/* a target's new code asks once per mapping: the records read since decide */
	if (!ul->all && pm && pid == ul->last_pid && records_read(ul) == ul->last_records)
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
	return (struct procdispatch_listener){ .on_record = on_record, .on_process = on_process,
					       .on_exit = on_exit_, .on_no_table = on_no_table,
					       .ctx = ul };
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
