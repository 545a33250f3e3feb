/* BPF sampler lifecycle and draining of the in-kernel aggregation maps. */
#include "source/sampler.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <linux/perf_event.h>
#include <linux/types.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../../bpf/firn.h"
#include "../../bpf/alloc.bpf.h"
#include "../../bpf/walkers.h"
#include "profile.skel.h"
#include "profile.minbtf.h"
#include "proc/cgroup.h"
#include "base/diag.h"
#include "base/hash.h"
#include "base/clock.h"
#include "base/vec.h"
#include "base/mapbatch.h"
#include "source/kbtf.h"
#include "source/rowsfirst.h"
#include "source/stackstore.h"

#define DRAIN_INTERVAL_NS 500000000ULL
#define DRAIN_MIN_NS 50000000ULL  /* drains come this often at most when stacks pile up */
#define DRAIN_SETTLE_NS 2000000ULL /* programs that read the old counts index finish by then */
#define UNWIND_UMAPS 65536 /* mappings described in the pool, all processes together (2 MiB) */
#define RETIRE_BATCH 64   /* ended processes retired together (see take_ready) */
#define RETIRE_DRAINS 2   /* or once one has waited this many drains (1 s at the usual pace) */

struct sampler {
	struct sampler_opts opts;
	struct profile_bpf *skel;
	/* the walkers' programs loaded late (firn_walkers' rows), each in an object of its own */
	struct profile_bpf *late_skel[FIRN_NWALKERS];
	int btf_fd;             /* the minimized kernel BTF every object relocates against, or -1 */
	char btf_path[32];      /* its /proc/self/fd path (btf_custom_path) */
	uint32_t late;          /* walkers (1 << tag) waiting for late_skel (opts.walkers_late) */
	uint32_t pending;       /* of them, those a process needs: loaded once events are handled */
	struct ring_buffer *rb;
	struct bpf_link **links;
	int *pfds, ncpus;
	struct bpf_link *switch_link; /* the off-CPU program (opts.off_cpu) */
	struct bpf_link *exit_link;   /* start_wait_exit: Python frames of the waits at the start */
	struct bpf_link *prog_links[SAMPLER_MAX_PROGS]; /* opts.progs, attached */
	struct rows_first rows0; /* the rows array's first chunk, in place before sampling */
	struct bpf_link **ulinks; /* USDT attachments */
	size_t nulinks, cap_ulinks;
	struct stackstore store; /* what the drains brought: stacks, entries, names, exits */
	uint64_t last_drain_ns;
	uint64_t flip_ns;       /* when the last complete drain flipped the counts maps */
	uint64_t stopped_ns;    /* when sampler_stop detached the programs (0: sampling) */
	bool stopped_async;     /* it detached programs that may still run a while (see settle) */
	uint64_t drain_ns;      /* time to the next drain: shorter while the stack map fills */
	uint64_t pace_ns;       /* the drains' regular pace (drain_pace) */
	uint64_t drains;        /* completed drains */
	uint64_t kstacks;       /* stacks read from the kernel's map in the drain going on */
	bool stacks_taken;      /* this drain took the whole stack map first (take_stacks) */
	uint64_t stacks_missing; /* samples dropped in user space: their stack was gone */
	int err;
};

_Static_assert(sizeof(struct firn_key) == sizeof(struct stackstore_key), "stackstore_key");
_Static_assert(sizeof(struct firn_comm) == 32, "stackstore_name");

static void load_pending(struct sampler *s);

/* Copies stack id from the kernel map into user space (once) and deletes the kernel's copy —
 * every time: the program stores a stack again when it meets it after a drain. Returns 1 when
 * the stack is in user space (or id is 0: no stack), 0 when it is nowhere (a sample dropped on
 * another CPU removed it), -ENOMEM. */
static int fetch_stack(struct sampler *s, uint64_t id)
{
	static __thread struct firn_big_stack buf; /* a firn_stack's layout, longer */
	int fd = bpf_map__fd(s->skel->maps.stacks), big = bpf_map__fd(s->skel->maps.big_stacks);

	if (!id)
		return 1;
	if (s->stacks_taken && stackstore_has_stack(&s->store, id) &&
	    stackstore_stack(&s->store, id)->len <= FIRN_MAX_FRAMES)
		return 1; /* its kernel copy went with the batch (a longer one is in big_stacks) */
	if (!stackstore_has_stack(&s->store, id)) {
		/* a stack longer than FIRN_MAX_FRAMES is in big_stacks */
		bool small = !bpf_map_lookup_elem(fd, &id, &buf);
		if (!small && bpf_map_lookup_elem(big, &id, &buf))
			return 0;
		uint32_t max = small ? FIRN_MAX_FRAMES : FIRN_BIG_FRAMES;
		if (stackstore_put_stack(&s->store, id, (const uint64_t *)buf.ips, buf.len > max ? max : buf.len))
			return -ENOMEM;
	}
	s->kstacks += !bpf_map_delete_elem(fd, &id) || !bpf_map_delete_elem(big, &id);
	return 1;
}

/* mapbatch_fn over the stack map: a stack not held yet is held (seen by this drain). */
static int take_stack(void *ctx, const void *key, const void *value)
{
	struct sampler *s = ctx;
	const struct firn_stack *st = value;
	uint64_t id;

	memcpy(&id, key, sizeof(id));
	s->kstacks++;
	if (stackstore_has_stack(&s->store, id))
		return 0;
	return stackstore_put_stack(&s->store, id, (const uint64_t *)st->ips,
				    st->len > FIRN_MAX_FRAMES ? FIRN_MAX_FRAMES : st->len);
}

/* Takes every stack of the kernel's map in batches before the counts are drained, where a
 * lookup and a delete per stack and per drain were two system calls each (under churn most of
 * firn's). The programs store whole values with BPF_NOEXIST, so a stack stored meanwhile is
 * taken whole or left for the next drain; the counts drained name stacks stored before the flip.
 * 0 when the map was drained (fetch_stack deletes nothing then), or -errno. */
static int take_stacks(struct sampler *s)
{
	int err = mapbatch_drain(bpf_map__fd(s->skel->maps.stacks), sizeof(uint64_t),
				 sizeof(struct firn_stack), take_stack, s);

	s->stacks_taken = !err;
	return err;
}

/* Tells the caller about the user stack of a new entry while its process may live. */
static void note_ustack(struct sampler *s, const struct firn_key *k)
{
	const struct stackstore_stack *u = stackstore_stack(&s->store, k->ustack);

	if (s->opts.on_stack && u)
		s->opts.on_stack(s->opts.ctx, k->pid, u->ips, u->len);
}

/* Adds count samples of key k; samples whose stack is gone are dropped and counted as lost. */
static int add_entry(struct sampler *s, const struct firn_key *k, uint64_t count)
{
	int us = fetch_stack(s, k->ustack), ks = us < 0 ? us : fetch_stack(s, k->kstack);

	if (us < 0 || ks < 0)
		return -ENOMEM;
	if (!us || !ks) {
		s->stacks_missing += count;
		return 0;
	}
	int fresh = stackstore_add(&s->store, (const struct stackstore_key *)k, count);
	if (fresh > 0)
		note_ustack(s, k);
	return fresh < 0 ? fresh : 0;
}

/* mapbatch_fn over a counts map's entries: each key's count goes into the sampler's table. */
static int drain_one(void *ctx, const void *key, const void *value)
{
	uint64_t count;

	memcpy(&count, value, sizeof(count));
	return add_entry(ctx, key, count);
}

/* Drains one (inactive) counts map completely, a batch of entries per system call (no program
 * writes it while it is drained): three calls per entry before. */
static int drain_map(struct sampler *s, int fd)
{
	return mapbatch_drain(fd, sizeof(struct firn_key), sizeof(uint64_t), drain_one, s);
}

/* mapbatch_fn over the thread names: each into the store. */
static int take_comm(void *ctx, const void *key, const void *value)
{
	struct sampler *s = ctx;
	struct firn_comm c;
	uint32_t tid;

	memcpy(&tid, key, sizeof(tid));
	memcpy(&c, value, sizeof(c));
	return stackstore_set_name(&s->store, tid, c.thread, c.process);
}

/* Copies the thread names into user space and deletes them in the kernel (the program sends a
 * running thread's names again), so the map holds only threads seen since the last drain: in
 * batches, where each name cost three system calls (next key, lookup, delete). */
static int drain_comms(struct sampler *s)
{
	return mapbatch_drain(bpf_map__fd(s->skel->maps.comms), sizeof(uint32_t),
			      sizeof(struct firn_comm), take_comm, s);
}

/* Drains sooner while the stacks drained fill more than a quarter of the kernel's stack map
 * (distinct stacks at a high frequency): a full map drops samples. */
static void next_drain(struct sampler *s)
{
	uint64_t quarter = bpf_map__max_entries(s->skel->maps.stacks) / 4;
	uint64_t ns = s->pace_ns;

	if (s->kstacks > quarter)
		ns = DRAIN_INTERVAL_NS * quarter / s->kstacks;
	s->drain_ns = ns < DRAIN_MIN_NS ? DRAIN_MIN_NS : ns;
}

/* The drains' regular pace: DRAIN_INTERVAL_NS, or longer, up to opts.drain_max_ns, as long as
 * neither the stack map (a quarter of it) nor the counts map (half) could fill meanwhile even
 * if every sample on every CPU brought two new stacks. Only cpu-clock samples have that bound:
 * probes, switches and GPU launches have no rate. Each drain costs system calls and a wake-up
 * whatever it finds: at 19 Hz a host makes about 20 entries a drain (issue 28). */
static uint64_t drain_pace(const struct sampler *s)
{
	const struct sampler_opts *o = &s->opts;
	uint64_t stacks = bpf_map__max_entries(s->skel->maps.stacks) / 4 / 2;
	uint64_t counts = bpf_map__max_entries(s->skel->maps.counts0) / 2;
	int ncpus = libbpf_num_possible_cpus();

	if (o->drain_max_ns <= DRAIN_INTERVAL_NS || !o->freq || o->usdt || o->off_cpu || o->cuda ||
	    o->nprogs || o->no_cpu_clock)
		return DRAIN_INTERVAL_NS;
	uint64_t rate = (uint64_t)o->freq * (ncpus > 0 ? ncpus : 1); /* samples a second at most */
	uint64_t ns = (stacks < counts ? stacks : counts) * 1000000000ULL / rate;

	return ns < DRAIN_INTERVAL_NS ? DRAIN_INTERVAL_NS : ns > o->drain_max_ns ? o->drain_max_ns : ns;
}

/* Waits until no program can still add to the counts map just made inactive: those that read
 * the old index finish within microseconds of the flip — or, once sampling has stopped, of the
 * stop (no counting program is attached after it), so the drains at the end wait once at most.
 * A cpu-clock program is done when its event's disable returns (the kernel runs it on the
 * event's CPU, after the handler): a stop that detached no USDT or sched_switch program (they
 * may still be running in their tasks) needs no wait. */
static void settle(const struct sampler *s)
{
	if (s->stopped_ns && !s->stopped_async)
		return;
	uint64_t now = mono_ns(), until = (s->stopped_ns ? s->stopped_ns : now) + DRAIN_SETTLE_NS;

	if (until > now)
		usleep((until - now + 999) / 1000);
}

int sampler_drain(struct sampler *s)
{
	__u32 old = s->skel->bss->active_buf;
	struct bpf_map *m = old ? s->skel->maps.counts1 : s->skel->maps.counts0;
	uint64_t flip = mono_ns(); /* read first: a sample before it counts in the map drained */

	s->skel->bss->active_buf = !old;
	__sync_synchronize();
	settle(s);
	s->kstacks = 0;
	int err = take_stacks(s);
	if (err != -ENOMEM)
		err = drain_map(s, bpf_map__fd(m));
	s->stacks_taken = false;
	if (!err)
		s->flip_ns = flip;
	if (!err)
		err = drain_comms(s);
	s->last_drain_ns = mono_ns();
	s->drains++;
	stackstore_drained(&s->store);
	next_drain(s);
	return err;
}

/* Adds n to the FIRN_ALLOC_EXITED counter (CPU 0's value of the per-CPU array). */
static void count_alloc_exited(struct sampler *s, uint64_t n)
{
	int ncpus = libbpf_num_possible_cpus(), fd = bpf_map__fd(s->skel->maps.alloc_stats);
	uint32_t idx = FIRN_ALLOC_EXITED;
	uint64_t *v = ncpus > 0 ? calloc((size_t)ncpus, sizeof(*v)) : NULL;

	if (v && !bpf_map_lookup_elem(fd, &idx, v)) {
		v[0] += n;
		bpf_map_update_elem(fd, &idx, v, BPF_ANY);
	}
	free(v);
}

/* -e alloc: the followed allocations of a process that ended are forgotten (what it never
 * freed stays in its inuse counts: its leak) and counted; the map holds all processes'. */
static void alloc_forget(struct sampler *s, pid_t pid)
{
	int fd = bpf_map__fd(s->skel->maps.alloc_live);
	struct firn_alloc_ptr k, next, *prev = NULL;
	uint64_t n = 0;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		if (next.pid == (uint32_t)pid && !bpf_map_delete_elem(fd, &next)) {
			n++;
			continue; /* deleted: the next key after prev again */
		}
		k = next;
		prev = &k;
	}
	if (n)
		count_alloc_exited(s, n);
}

/* A sampled process ended: the caller hears of it (its unwind tables); kept for
 * sampler_retire. */
static int note_exit(struct sampler *s, pid_t pid)
{
	if (s->opts.alloc)
		alloc_forget(s, pid);
	if (s->opts.on_exit)
		s->opts.on_exit(s->opts.ctx, pid);
	stackstore_exit(&s->store, pid); /* with opts.retire */
	return 0;
}

/* A notice of the BPF programs (ring buffer): handed to the caller's callbacks. */
static int on_event(void *ctx, void *data, size_t size)
{
	struct sampler *s = ctx;
	const struct firn_event *e = data;

	if (size < sizeof(*e))
		return 0;
	if (FIRN_EV_ANNOUNCE_TAG(e->type)) { /* the runtime of that tag checks its record's size */
		if (s->opts.on_announce)
			s->opts.on_announce(s->opts.ctx, FIRN_EV_ANNOUNCE_TAG(e->type), data, size);
		return 0;
	}
	if (e->type == FIRN_EV_UNKNOWN_CODE) {
		if (s->opts.on_code)
			s->opts.on_code(s->opts.ctx, e->pid, e->addr);
		return 0;
	}
	if (e->type == FIRN_EV_EXIT)
		return note_exit(s, e->pid);
	if (e->type != FIRN_EV_NEW_PROCESS && e->type != FIRN_EV_EXEC)
		return 0;
	if (e->type == FIRN_EV_EXEC && s->opts.on_exec) {
		s->opts.on_exec(s->opts.ctx, e->pid, e->addr);
		return 0;
	}
	if (s->opts.on_process)
		s->opts.on_process(s->opts.ctx, e->pid, e->type == FIRN_EV_EXEC);
	return 0;
}

/* The unwind rows the memory limit allows. */
static uint32_t unwind_rows_max(const struct sampler *s)
{
	uint64_t rows = s->opts.unwind_memory / sizeof(struct firn_row);

	return rows > UINT32_MAX / 2 ? UINT32_MAX / 2 : rows;
}

/* Sizes the unwind rows' chunk array from the memory limit (before load): the chunks
 * themselves are created by the unwinder as tables load. */
static int setup_unwind_maps(struct sampler *s)
{
	s->skel->rodata->dwarf_unwind = 1;
	s->skel->rodata->fp_fallback = s->opts.unwind == UNWIND_AUTO;
	return bpf_map__set_max_entries(s->skel->maps.unwind_rows,
					unwind_rows_max(s) / FIRN_ROWS_CHUNK + 1) ||
	       bpf_map__set_max_entries(s->skel->maps.unwind_umaps, UNWIND_UMAPS);
}

/* The off-CPU program's settings (before load). */
static void setup_off_cpu(struct sampler *s)
{
	s->skel->rodata->off_cpu_runnable = s->opts.off_cpu_runnable;
	s->skel->rodata->off_cpu_min_ns = s->opts.off_cpu_min_ns;
	s->skel->rodata->off_cpu_rate = s->opts.off_cpu_rate ? s->opts.off_cpu_rate : 1;
}

int sampler_unwind_maps(const struct sampler *s, struct sampler_unwind_maps *m)
{
	if (s->opts.unwind == UNWIND_FP)
		return -ENOENT;
	*m = (struct sampler_unwind_maps){
		.rows_fd = bpf_map__fd(s->skel->maps.unwind_rows),
		.rows = unwind_rows_max(s),
		.pids_fd = bpf_map__fd(s->skel->maps.unwind_pids),
		.umaps_fd = bpf_map__fd(s->skel->maps.unwind_umaps),
		.umaps = bpf_map__max_entries(s->skel->maps.unwind_umaps),
		.files_fd = bpf_map__fd(s->skel->maps.unwind_files),
		.first_chunk_fd = s->rows0.chunk_fd,
	};
	return 0;
}

/* libbpf's messages go to the diagnostics reporter (debug level: shown with -vv). */
int sampler_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *buf = NULL;

	if (vasprintf(&buf, fmt, ap) < 0)
		return 0;
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
		diag(level == LIBBPF_WARN ? DIAG_INFO : DIAG_DEBUG, "%s", line);
	free(buf);
	return 0;
}

/* Without --cuda the GPU maps hold one entry each (the launch map's entries are 1 KiB stacks). */
static int size_gpu_maps(struct sampler *s)
{
	if (bpf_map__set_max_entries(s->skel->maps.gpu_launches, 1) ||
	    bpf_map__set_max_entries(s->skel->maps.gpu_names, 1))
		return -1;
	return 0;
}

/* Entries of the (preallocated, 1 KiB each) stack map: room for what a quarter of a drain
 * interval can bring, two distinct stacks a sample on every CPU (the drains come sooner while it
 * fills: next_drain), at least 2048; the most (16384) for events that no frequency bounds
 * (probes, switches). (opts.stack_entries, when given, sizes the stack map alone.) */
static uint32_t stack_entries(const struct sampler_opts *o)
{
	int ncpus = libbpf_num_possible_cpus();
	uint64_t want = (uint64_t)o->freq * (ncpus > 0 ? ncpus : 1) * 2 / 4, n = 2048;

	if (o->usdt || o->off_cpu || o->cuda)
		return 16384;
	while (n < want && n < 16384)
		n *= 2;
	return n;
}

/* Whether map m is one of the maps only walker w's walk uses (its row's own_maps). */
static bool walker_owns(const struct firn_walker_row *w, const struct bpf_map *m)
{
	for (int i = 0; i < FIRN_WALKER_OWN_MAPS; i++)
		if (w->own_maps[i] && !strcmp(bpf_map__name(m), w->own_maps[i]))
			return true;
	return false;
}

/* Walker w's own maps (LRU, preallocated: code ids, thread states) get one entry in an object
 * where it does not walk. -1 with errno set. */
static int shrink_own_maps(struct profile_bpf *k, const struct firn_walker_row *w)
{
	struct bpf_map *m;

	bpf_object__for_each_map(m, k->obj)
		if (walker_owns(w, m) && bpf_map__set_max_entries(m, 1))
			return -1;
	return 0;
}

/* Puts the loaded program of walker w (in object k) in the unwinders array at its tag, where
 * on_sample tail-calls it. 0 or -errno. */
static int set_unwinder(struct sampler *s, struct profile_bpf *k, const struct firn_walker_row *w)
{
	struct bpf_program *p = bpf_object__find_program_by_name(k->obj, w->prog);
	int fd = p ? bpf_program__fd(p) : -1;
	__u32 slot = w->tag;

	if (fd < 0 || bpf_map_update_elem(bpf_map__fd(s->skel->maps.unwinders), &slot, &fd, BPF_ANY))
		return -(errno ? errno : EINVAL);
	return 0;
}

/* The walkers whose rows say b (big_stacks or defer_at_start), among mask. */
static uint32_t walkers_with(uint32_t mask, bool (*b)(const struct firn_walker_row *w))
{
	uint32_t out = 0;

	for (size_t i = 0; i < FIRN_NWALKERS; i++)
		if (b(&firn_walkers[i]))
			out |= 1u << firn_walkers[i].tag;
	return out & mask;
}

/* The row fields walkers_with asks about. */
static bool big_stacks(const struct firn_walker_row *w) { return w->big_stacks; }
static bool defer_at_start(const struct firn_walker_row *w) { return w->defer_at_start; }
static bool has_prog(const struct firn_walker_row *w) { return w->prog != NULL; }

/* The walkers' settings (before load): which run in this object and which are tail-called,
 * their programs loaded only when they run (and cpu-clock samples are taken), the own maps of
 * the others one entry each. -1 with errno set. */
static int setup_walkers(struct sampler *s)
{
	const struct sampler_opts *o = &s->opts;
	uint32_t tails = walkers_with(o->walkers, has_prog);

	s->late = o->usdt || o->off_cpu || o->cuda ? 0 : o->walkers_late & tails;
	s->skel->rodata->walkers_on = o->walkers & ~s->late;
	s->skel->rodata->walkers_tail = tails;
	for (size_t i = 0; i < FIRN_NWALKERS; i++) {
		const struct firn_walker_row *w = &firn_walkers[i];
		bool runs = s->skel->rodata->walkers_on & (1u << w->tag);
		struct bpf_program *p = w->prog ? bpf_object__find_program_by_name(s->skel->obj, w->prog)
						: NULL;
		if (p)
			bpf_program__set_autoload(p, runs && !o->no_cpu_clock);
		if (!runs && shrink_own_maps(s->skel, w))
			return -1;
	}
	return 0;
}

/* Puts the walkers' programs loaded with the main object in their slots. -1 with errno set. */
static int set_unwinders(struct sampler *s)
{
	for (size_t i = 0; i < FIRN_NWALKERS; i++) {
		const struct firn_walker_row *w = &firn_walkers[i];
		struct bpf_program *p = w->prog ? bpf_object__find_program_by_name(s->skel->obj, w->prog)
						: NULL;
		int err = p && bpf_program__fd(p) >= 0 ? set_unwinder(s, s->skel, w) : 0;
		if (err) {
			errno = -err;
			return -1;
		}
	}
	return 0;
}

/* Opens the sampler's BPF object, with the minimized kernel BTF when s has it (libbpf then
 * reads no vmlinux BTF unless a program's attach target needs it); NULL with errno set. */
static struct profile_bpf *open_skel(const struct sampler *s)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = s->btf_fd >= 0 ? s->btf_path : NULL);

	return profile_bpf__open_opts(&oo);
}

/* The events' own programs (opts.progs, opts.uprobe_progs: '?' sections, not loaded unless
 * named) are loaded; -1 with errno ENOENT when the object has no program of that name. */
static int load_event_progs(struct sampler *s)
{
	size_t n = s->opts.nprogs;

	for (size_t i = 0; i < n + s->opts.nuprobe_progs; i++) {
		const char *name = i < n ? s->opts.progs[i] : s->opts.uprobe_progs[i - n];
		struct bpf_program *p = bpf_object__find_program_by_name(s->skel->obj, name);
		if (!p || bpf_program__set_autoload(p, true)) {
			errno = p ? EINVAL : ENOENT;
			return -1;
		}
	}
	return 0;
}

/* Attaches the events' own programs by their sections (after the perf events: their hits are
 * part of the recording's time). 0 or -errno. */
static int attach_event_progs(struct sampler *s)
{
	for (size_t i = 0; i < s->opts.nprogs; i++) {
		struct bpf_program *p = bpf_object__find_program_by_name(s->skel->obj, s->opts.progs[i]);
		if (!p || !(s->prog_links[i] = bpf_program__attach(p)))
			return p ? -errno : -ENOENT;
	}
	return 0;
}

/* Opens, sets up and loads the skeleton for s->opts; -1 (errno set, *why says what failed) on
 * failure, s->skel left for sampler_free. */
static int load_skel(struct sampler *s, const char **why)
{
	const struct sampler_opts *o = &s->opts;

	*why = "open the BPF object";
	s->skel = open_skel(s);
	if (!s->skel)
		return -1;
	s->skel->rodata->filter_pids = !o->all;
	s->skel->rodata->follow_children = o->follow_children;
	s->skel->rodata->want_kernel = o->kernel;
	s->skel->rodata->want_user = o->user;
	s->skel->rodata->self_pid = getpid();
	s->skel->rodata->cgroup_count = o->ncgroups;
	s->skel->rodata->want_gpu = o->cuda;
	s->skel->rodata->want_alloc = o->alloc;
	if (o->alloc_rate)
		s->skel->rodata->alloc_rate = o->alloc_rate;
	*why = "set up the runtime walkers";
	if (setup_walkers(s))
		return -1;
	*why = "size the stack map";
	/* counts and names: one entry a sample at most, half the stacks' pace (the drains keep up) */
	uint32_t entries = stack_entries(o);
	if (bpf_map__set_max_entries(s->skel->maps.stacks,
				     o->stack_entries ? o->stack_entries : entries) ||
	    bpf_map__set_max_entries(s->skel->maps.counts0, entries) ||
	    bpf_map__set_max_entries(s->skel->maps.counts1, entries) ||
	    bpf_map__set_max_entries(s->skel->maps.comms, entries) ||
	    (!walkers_with(o->walkers, big_stacks) &&
	     bpf_map__set_max_entries(s->skel->maps.big_stacks, 1)))
		return -1;
	if (o->unwind != UNWIND_FP && setup_unwind_maps(s))
		return -1;
	/* frame pointers only: the DWARF unwinder's per-process mappings go unused (one entry) */
	if (o->unwind == UNWIND_FP && bpf_map__set_max_entries(s->skel->maps.unwind_kprocs, 1))
		return -1;
	/* on_fork makes children targets: nothing to do system-wide, or without follow_children */
	bpf_program__set_autoload(s->skel->progs.on_fork, o->follow_children && !o->all);
	bpf_program__set_autoload(s->skel->progs.on_usdt, o->usdt);
	/* a target's new code is described as it is mapped (DWARF tables: not with fp only) */
	bool watch = o->unwind != UNWIND_FP && !o->all;
	bpf_program__set_autoload(s->skel->progs.on_mmap_unlock, watch);
	if (!watch && bpf_map__set_max_entries(s->skel->maps.exec_vm_seen, 1)) /* (preallocated) */
		return -1;
	if (o->off_cpu)
		setup_off_cpu(s);
	bpf_program__set_autoload(s->skel->progs.on_switch, o->off_cpu);
	bpf_program__set_autoload(s->skel->progs.end_waits, o->off_cpu);
	bpf_program__set_autoload(s->skel->progs.start_waits, o->off_cpu && o->off_cpu_at_start);
	/* a Python process's waits at the start get their Python frames at their system call's
	 * exit (bpf/offcpu_start.bpf.h) */
	s->skel->rodata->start_defer = o->off_cpu && o->off_cpu_at_start &&
				       walkers_with(o->walkers, defer_at_start);
	bpf_program__set_autoload(s->skel->progs.start_wait_exit, s->skel->rodata->start_defer);
	*why = "size the GPU maps";
	if (!o->cuda && size_gpu_maps(s))
		return -1;
	*why = "size the allocation map";
	if (bpf_map__set_max_entries(s->skel->maps.alloc_live, !o->alloc ? 1 :
				     o->alloc_live ? o->alloc_live : FIRN_ALLOC_LIVE_MAX))
		return -1;
	/* uprobe mode's per-thread maps (LRU: preallocated) go unused without its programs */
	if (!o->nuprobe_progs && (bpf_map__set_max_entries(s->skel->maps.alloc_left, 1) ||
				  bpf_map__set_max_entries(s->skel->maps.alloc_pending, 1)))
		return -1;
	*why = "find the events' BPF programs";
	if (load_event_progs(s))
		return -1;
	rows_first_release(&s->rows0); /* (a reload's) */
	int rerr = o->unwind != UNWIND_FP ? rows_first_start(&s->rows0, s->skel->maps.unwind_rows) : 0;
	if (rerr)
		diag(DIAG_DEBUG, "rows array made at load: %s", strerror(-rerr));
	*why = "load the BPF programs";
	int lerr = profile_bpf__load(s->skel) ? errno : 0;
	/* joined whatever the load did (a reload closes the array it writes to); failed: the
	 * unwinder puts its chunks in itself */
	rows_first_finish(&s->rows0);
	if (lerr) {
		errno = lerr;
		return -1;
	}
	*why = "put the runtime walkers in place";
	if (set_unwinders(s))
		return -1;
	return 0;
}

/* --cgroup: the filter's cgroups into its maps (after load); -1 with errno set. */
static int set_cgroups(struct sampler *s)
{
	int err = cgroup_filter_fill(bpf_map__fd(s->skel->maps.cgroup_array),
				     bpf_map__fd(s->skel->maps.cgroup_ids), s->opts.cgroups,
				     s->opts.ncgroups);

	errno = -err;
	return err ? -1 : 0;
}

/* The build's minimized kernel BTF in s->btf_fd when it was made from the running kernel (else
 * -1: libbpf reads /sys/kernel/btf/vmlinux, as it does without one). */
static void open_min_btf(struct sampler *s)
{
	s->btf_fd = kbtf_open(profile_min_btf_key, profile_min_btf, profile_min_btf_len);
	if (s->btf_fd < 0)
		diag(DIAG_DEBUG, "minimized kernel BTF not used: %s", strerror(-s->btf_fd));
	else
		kbtf_path(s->btf_fd, s->btf_path, sizeof(s->btf_path));
}

/* Drops a skeleton that failed to load and loads one again for s->opts (as load_skel). */
static int reload_skel(struct sampler *s, const char **why)
{
	profile_bpf__destroy(s->skel);
	s->skel = NULL;
	return load_skel(s, why);
}

/* Attaches the watch of the targets' new code mappings where it was loaded. Not fatal: without
 * it the samples' asks describe new code, later. */
static void watch_mmaps(struct sampler *s)
{
	if (bpf_program__fd(s->skel->progs.on_mmap_unlock) >= 0)
		s->skel->links.on_mmap_unlock = bpf_program__attach(s->skel->progs.on_mmap_unlock);
}

struct sampler *sampler_new(const struct sampler_opts *o, const char **why)
{
	struct sampler *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->btf_fd = -1;
	s->rows0 = (struct rows_first){ .rows_fd = -1, .chunk_fd = -1 };
	s->opts = *o;
	/* GPU records and allocations are no samples (alloc's ids are the lowest of those) */
	stackstore_init(&s->store, o->retire, FIRN_EVENT_ALLOC_OBJECTS);
	/* inuse_* are the live heap: each cut shows it whole, not the interval's net allocation */
	stackstore_set_levels(&s->store, FIRN_EVENT_INUSE_OBJECTS, FIRN_EVENT_INUSE_SPACE);
	open_min_btf(s);
	int rc = load_skel(s, why);
	/* the minimized BTF failed to load (cannot happen with a matching key): the full one */
	if (rc && s->btf_fd >= 0) {
		diag(DIAG_DEBUG, "cannot load the BPF object with the minimized kernel BTF: %s; "
		     "reading the full BTF", strerror(errno));
		close(s->btf_fd);
		s->btf_fd = -1;
		rc = reload_skel(s, why);
	}
	/* a kernel without sleepable task iterators (or bpf_copy_from_user_task, < 5.18) records
	 * the waits begun from the start on */
	if (rc && s->opts.off_cpu && s->opts.off_cpu_at_start) {
		diag(DIAG_WARN, "cannot load the program that takes the waits in progress at the start: "
		     "%s; recording the waits that begin from now on", strerror(errno));
		s->opts.off_cpu_at_start = false;
		rc = reload_skel(s, why);
	}
	if (rc)
		goto fail;
	*why = "set up the cgroup filter";
	if (o->ncgroups && set_cgroups(s))
		goto fail;
	*why = "attach the process tracepoints";
	bool fork = bpf_program__fd(s->skel->progs.on_fork) >= 0;
	if (fork)
		s->skel->links.on_fork = bpf_program__attach(s->skel->progs.on_fork);
	s->skel->links.on_exec = bpf_program__attach(s->skel->progs.on_exec);
	s->skel->links.on_exit = bpf_program__attach(s->skel->progs.on_exit);
	if ((fork && !s->skel->links.on_fork) || !s->skel->links.on_exec || !s->skel->links.on_exit)
		goto fail;
	watch_mmaps(s);
	*why = "create the event ring buffer";
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.events), on_event, s, NULL);
	if (!s->rb)
		goto fail;
	return s;
fail:;
	int err = errno ? errno : EINVAL;
	sampler_free(s);
	errno = err;
	return NULL;
}

int sampler_add_target(struct sampler *s, pid_t pid, bool held)
{
	__u32 key = pid;
	__u8 one = 1;

	(void)held;
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.targets), &key, &one, BPF_ANY))
		return -errno;
	return 0;
}

static int open_cpu_clock(int cpu, unsigned freq)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_freq = freq,
		.freq = 1,
	};

	return syscall(__NR_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Runs a task iterator program once over every task; -errno when it could not. */
static int run_task_iter(struct bpf_program *p)
{
	struct bpf_link *l = bpf_program__attach_iter(p, NULL);
	int fd = l ? bpf_iter_create(bpf_link__fd(l)) : -1, err = fd < 0 ? -errno : 0;
	char buf[64];

	while (fd >= 0 && read(fd, buf, sizeof(buf)) > 0)
		;
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(l);
	return err;
}

/* Ends the off-CPU waits still going (after on_switch is detached): runs the end_waits task
 * iterator once, which adds their time so far. A failure leaves them open (counted as such). */
static void end_waits(struct sampler *s)
{
	int err = run_task_iter(s->skel->progs.end_waits);

	if (err)
		diag(DIAG_INFO, "cannot end the waits still going: %s", strerror(-err));
}

/* Begins the waits already in progress (after on_switch is attached): the start_waits task
 * iterator gives each target thread off the CPU now a wait from now. A failure leaves them out
 * (a note says so): the waits begun from now on are recorded all the same. */
static void start_waits(struct sampler *s)
{
	int err = s->opts.off_cpu_at_start ? run_task_iter(s->skel->progs.start_waits) : 0;

	if (err)
		diag(DIAG_WARN, "cannot take the waits already in progress: %s", strerror(-err));
}

int sampler_start(struct sampler *s, const char **why)
{
	int n = libbpf_num_possible_cpus();

	if (n <= 0)
		return -EINVAL;
	s->pfds = calloc(n, sizeof(*s->pfds));
	s->links = calloc(n, sizeof(*s->links));
	if (!s->pfds || !s->links)
		return -ENOMEM;
	for (int cpu = 0; cpu < n && !s->opts.no_cpu_clock; cpu++) {
		s->pfds[cpu] = open_cpu_clock(cpu, s->opts.freq);
		if (s->pfds[cpu] < 0) {
			if (errno == ENODEV)
				continue; /* offline CPU */
			*why = "open the cpu-clock perf event";
			return -errno;
		}
		s->links[cpu] = bpf_program__attach_perf_event(s->skel->progs.on_sample, s->pfds[cpu]);
		if (!s->links[cpu]) {
			*why = "attach the sampler to the perf event";
			return -errno;
		}
		s->ncpus++;
	}
	if (s->opts.off_cpu && !(s->switch_link = bpf_program__attach(s->skel->progs.on_switch))) {
		*why = "attach the off-CPU program to sched_switch";
		return -errno;
	}
	if (s->switch_link && s->skel->rodata->start_defer &&
	    !(s->exit_link = bpf_program__attach(s->skel->progs.start_wait_exit))) {
		*why = "attach the off-CPU program to sys_exit";
		return -errno;
	}
	if (s->switch_link)
		start_waits(s);
	int err = attach_event_progs(s);
	if (err) {
		*why = "attach an event's BPF program";
		return err;
	}
	s->last_drain_ns = mono_ns();
	s->pace_ns = drain_pace(s);
	s->drain_ns = s->pace_ns;
	s->stopped_ns = 0;
	s->stopped_async = false;
	return 0;
}

int sampler_attach_usdt(struct sampler *s, pid_t pid, const char *path, const char *provider,
			const char *name, uint32_t event)
{
	LIBBPF_OPTS(bpf_usdt_opts, uo, .usdt_cookie = event);

	if (!s->opts.usdt || !event)
		return -EINVAL;
	if (VEC_GROW(s->ulinks, s->cap_ulinks, s->nulinks + 1))
		return -ENOMEM;
	struct bpf_link *l = bpf_program__attach_usdt(s->skel->progs.on_usdt, pid, path, provider,
						      name, &uo);
	if (!l)
		return -errno;
	s->ulinks[s->nulinks++] = l;
	return 0;
}

int sampler_attach_uprobe(struct sampler *s, const char *prog, pid_t pid, const char *path,
			  const char *func, bool retprobe)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = func, .retprobe = retprobe);
	struct bpf_program *p = bpf_object__find_program_by_name(s->skel->obj, prog);

	if (!p || !bpf_program__autoload(p))
		return -EINVAL;
	if (VEC_GROW(s->ulinks, s->cap_ulinks, s->nulinks + 1))
		return -ENOMEM;
	struct bpf_link *l = bpf_program__attach_uprobe_opts(p, pid, path, 0, &uo);
	if (!l)
		return -errno;
	s->ulinks[s->nulinks++] = l;
	return 0;
}

void sampler_stop(struct sampler *s)
{
	int n = libbpf_num_possible_cpus();

	s->stopped_async |= s->nulinks || s->switch_link || s->prog_links[0];
	for (size_t i = 0; i < s->nulinks; i++)
		bpf_link__destroy(s->ulinks[i]);
	s->nulinks = 0;
	for (size_t i = 0; i < SAMPLER_MAX_PROGS; i++) {
		bpf_link__destroy(s->prog_links[i]);
		s->prog_links[i] = NULL;
	}
	if (s->switch_link) {
		bpf_link__destroy(s->switch_link);
		bpf_link__destroy(s->exit_link);
		s->switch_link = s->exit_link = NULL;
		end_waits(s); /* the waits still pending too, without their Python frames */
	}
	for (int cpu = 0; s->links && cpu < n; cpu++) {
		/* a perf link closes its event: closing it again could close another thread's file */
		if (s->links[cpu])
			bpf_link__destroy(s->links[cpu]);
		else if (s->pfds[cpu] > 0)
			close(s->pfds[cpu]);
		s->links[cpu] = NULL;
		s->pfds[cpu] = -1;
	}
	if (!s->stopped_ns)
		s->stopped_ns = mono_ns();
}

int sampler_handle_events(struct sampler *s)
{
	int n = ring_buffer__consume(s->rb);

	load_pending(s);
	return n < 0 ? n : 0;
}

uint64_t sampler_next_drain_ns(const struct sampler *s)
{
	return s->last_drain_ns + s->drain_ns;
}

uint64_t sampler_last_flip_ns(const struct sampler *s)
{
	return s->flip_ns;
}

int sampler_poll(struct sampler *s, int timeout_ms)
{
	int n = ring_buffer__poll(s->rb, timeout_ms);

	load_pending(s);
	if (n < 0 && n != -EINTR)
		return n;
	if (mono_ns() - s->last_drain_ns >= s->drain_ns)
		return sampler_drain(s);
	return 0;
}

int sampler_for_each(struct sampler *s, int (*fn)(void *ctx, const struct sampler_entry *e),
		     void *ctx)
{
	return stackstore_for_each(&s->store, fn, ctx);
}

size_t sampler_entry_count(const struct sampler *s)
{
	return s->store.nentries;
}

int sampler_park_live(struct sampler *s, const struct sampler_retire_ops *ops)
{
	return stackstore_park_live(&s->store, ops);
}

int sampler_park_process(struct sampler *s, pid_t pid, const struct sampler_retire_ops *ops)
{
	return stackstore_park_process(&s->store, pid, ops);
}

bool sampler_has_exited(const struct sampler *s, pid_t pid)
{
	return stackstore_has_exited(&s->store, pid);
}

int sampler_retire(struct sampler *s, const struct sampler_retire_ops *ops)
{
	return stackstore_retire(&s->store, ops, RETIRE_BATCH, RETIRE_DRAINS);
}

/* Sums entries [first, first + n) of a per-CPU counter array over the CPUs into out[0..n). */
static void sum_percpu_at(int fd, uint32_t first, uint32_t n, uint64_t *out)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *vals = calloc(ncpu > 0 ? ncpu : 1, sizeof(*vals));

	for (__u32 i = 0; vals && i < n; i++) {
		__u32 k = first + i;
		out[i] = 0;
		if (bpf_map_lookup_elem(fd, &k, vals))
			continue;
		for (int c = 0; c < ncpu; c++)
			out[i] += vals[c];
	}
	free(vals);
}

/* Entries [0, n) of a per-CPU array of counters, summed over the CPUs, into out. */
static void sum_percpu(int fd, uint32_t n, uint64_t *out)
{
	sum_percpu_at(fd, 0, n, out);
}

/* DWARF unwind outcomes (the tables' statistics are the caller's unwinder's). */
static void unwind_stats(struct sampler *s, struct sampler_stats *st)
{
	if (s->opts.unwind != UNWIND_FP)
		sum_percpu(bpf_map__fd(s->skel->maps.unwind_stats), FIRN_UNW_NR, st->unwind);
}

/* What became of the off-CPU waits (the BPF counters). */
static void offcpu_stats(struct sampler *s, struct sampler_offcpu_stats *o)
{
	uint64_t v[FIRN_OFF_NR];

	sum_percpu(bpf_map__fd(s->skel->maps.offcpu_stats), FIRN_OFF_NR, v);
	*o = (struct sampler_offcpu_stats){
		.waits = v[FIRN_OFF_WAITS], .counted = v[FIRN_OFF_COUNTED], .ns = v[FIRN_OFF_NS],
		.short_waits = v[FIRN_OFF_SHORT], .short_ns = v[FIRN_OFF_SHORT_NS],
		.lost_no_slot = v[FIRN_OFF_LOST_NO_SLOT],
		.lost_counts_full = v[FIRN_OFF_LOST_COUNTS_FULL],
		.lost_stacks_full = v[FIRN_OFF_LOST_STACKS_FULL], .unsampled = v[FIRN_OFF_UNSAMPLED],
		.at_end = v[FIRN_OFF_AT_END], .late = v[FIRN_OFF_LATE],
		.at_start = v[FIRN_OFF_AT_START], .at_start_oldest_ns = s->skel->bss->start_oldest_ns,
	};
}

/* The GPU counters, and the launches no kernel record has matched yet (read from the map). */
static void gpu_stats(struct sampler *s, struct sampler_gpu_stats *g)
{
	uint64_t sums[FIRN_GPU_NR];
	struct firn_gpu_corr key, next;
	struct firn_gpu_launch *l = malloc(sizeof(*l));
	int fd = bpf_map__fd(s->skel->maps.gpu_launches);

	sum_percpu(bpf_map__fd(s->skel->maps.gpu_stats), FIRN_GPU_NR, sums);
	g->launches = sums[FIRN_GPU_LAUNCHES];
	g->kernels = sums[FIRN_GPU_KERNELS];
	g->kernels_unmatched = sums[FIRN_GPU_KERNELS_UNMATCHED];
	g->memcpys = sums[FIRN_GPU_MEMCPYS];
	g->lost = sums[FIRN_GPU_LOST];
	g->launches_unmatched = g->launches > sums[FIRN_GPU_LAUNCHES_MATCHED]
					? g->launches - sums[FIRN_GPU_LAUNCHES_MATCHED] : 0;
	g->launches_pending = 0;
	for (void *prev = NULL; l && !bpf_map_get_next_key(fd, prev, &next); prev = &key) {
		key = next;
		if (!bpf_map_lookup_elem(fd, &key, l) && !l->matched)
			g->launches_pending++;
	}
	free(l);
}

/* The map of names walker tag keeps (its bpf/walkers.h row's names), or NULL. */
static struct bpf_map *names_map(struct sampler *s, unsigned tag)
{
	for (size_t i = 0; i < FIRN_NWALKERS; i++)
		if (firn_walkers[i].tag == tag && firn_walkers[i].names)
			return bpf_object__find_map_by_name(s->skel->obj, firn_walkers[i].names);
	return NULL;
}

int sampler_walker_name(struct sampler *s, unsigned tag, uint64_t key, char *buf, size_t n)
{
	char name[FIRN_GPU_NAME_LEN]; /* the longest a names map holds */
	struct bpf_map *m = names_map(s, tag);
	__u64 k = key;

	if (!n)
		return -EINVAL;
	if (!m || bpf_map__value_size(m) > sizeof(name))
		return -ENOTSUP;
	if (bpf_map_lookup_elem(bpf_map__fd(m), &k, name))
		return -ENOENT;
	name[bpf_map__value_size(m) - 1] = 0;
	snprintf(buf, n, "%s", name);
	return 0;
}

int sampler_map_update(struct sampler *s, const char *map, const void *key, const void *value)
{
	struct bpf_map *m = bpf_object__find_map_by_name(s->skel->obj, map);
	size_t k = m ? bpf_map__key_size(m) : 0;
	int err;

	if (!m)
		return -ENOENT;
	err = value ? bpf_map__update_elem(m, key, k, value, bpf_map__value_size(m), 0)
		    : bpf_map__delete_elem(m, key, k, 0);
	return err < 0 ? err : 0;
}

uint64_t sampler_map_percpu_sum(struct sampler *s, const char *map, uint32_t key, size_t off)
{
	struct bpf_map *m = bpf_object__find_map_by_name(s->skel->obj, map);
	int ncpu = libbpf_num_possible_cpus();
	size_t vs = m ? bpf_map__value_size(m) : 0, stride = (vs + 7) & ~(size_t)7;
	uint64_t sum = 0, v;

	if (!m || bpf_map__type(m) != BPF_MAP_TYPE_PERCPU_ARRAY || ncpu <= 0 || off + sizeof(v) > vs)
		return 0;
	uint8_t *vals = calloc((size_t)ncpu, stride);
	if (vals && !bpf_map_lookup_elem(bpf_map__fd(m), &key, vals))
		for (int c = 0; c < ncpu; c++) {
			memcpy(&v, vals + (size_t)c * stride + off, sizeof(v));
			sum += v;
		}
	free(vals);
	return sum;
}

/* The memlock and id of the BPF map open on fd, from its fdinfo; false for another kind of fd. */
static bool map_fdinfo(int fd, uint64_t *memlock, uint32_t *id)
{
	char path[64], line[128];
	bool map = false;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	*memlock = *id = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;
		if (sscanf(line, "map_id: %llu", &v) == 1)
			*id = v, map = true;
		else if (sscanf(line, "memlock: %llu", &v) == 1)
			*memlock = v;
	}
	fclose(f);
	return map;
}

/* Sums the memlock of every BPF map this process has open (each map once, however many fds
 * name it): the kernel memory of the recording's maps, the unwinder's row chunks included. */
void sampler_map_memory(struct sampler_stats *st)
{
	uint32_t ids[512];
	size_t n = 0;
	DIR *d = opendir("/proc/self/fd");

	st->bpf_map_bytes = st->bpf_maps = 0;
	struct dirent *e;

	while (d && (e = readdir(d))) {
		uint64_t memlock;
		uint32_t id;
		int fd = atoi(e->d_name);
		if (e->d_name[0] == '.' || fd == dirfd(d) || !map_fdinfo(fd, &memlock, &id))
			continue;
		bool dup = false;
		for (size_t i = 0; i < n && !dup; i++)
			dup = ids[i] == id;
		if (dup)
			continue;
		if (n < sizeof(ids) / sizeof(ids[0]))
			ids[n++] = id;
		st->bpf_map_bytes += memlock;
		st->bpf_maps++;
	}
	if (d)
		closedir(d);
}

/* The events' counters (opts.counters): each per-CPU array summed into its place in st (a
 * counter whose place is not inside st's counters is left out). */
static void event_counters(struct sampler *s, struct sampler_stats *st)
{
	const size_t lo = offsetof(struct sampler_stats, counters), hi = lo + sizeof(st->counters);

	for (size_t i = 0; i < s->opts.ncounters; i++) {
		const struct sampler_counters *c = &s->opts.counters[i];
		struct bpf_map *m = bpf_object__find_map_by_name(s->skel->obj, c->map);
		uint64_t v[SAMPLER_COUNTERS] = { 0 };
		if (!m || c->n > SAMPLER_COUNTERS || c->at < lo || c->at + c->n * sizeof(v[0]) > hi)
			continue;
		sum_percpu(bpf_map__fd(m), (uint32_t)c->n, v);
		memcpy((char *)st + c->at, v, c->n * sizeof(v[0]));
	}
}

void sampler_get_stats(struct sampler *s, struct sampler_stats *st)
{
	uint64_t sums[FIRN_LOST_NR + 1];

	memset(st, 0, sizeof(*st));
	sum_percpu(bpf_map__fd(s->skel->maps.lost), FIRN_LOST_NR + 1, sums);
	st->taken = sums[FIRN_LOST_NR];
	st->counts_full = sums[FIRN_LOST_COUNTS_FULL];
	st->stacks_full = sums[FIRN_LOST_STACKS_FULL] + s->stacks_missing;
	st->events_full = sums[FIRN_LOST_EVENTS_FULL];
	st->user_stack_errors = sums[FIRN_LOST_USER_STACK];
	st->kernel_stack_errors = sums[FIRN_LOST_KERNEL_STACK];
	unwind_stats(s, st);
	/* off-CPU waits and GPU records are no samples (events from FIRN_EVENT_GPU_TIME up) */
	st->stored = stackstore_stored(&s->store);
	st->entries = s->store.nentries;
	st->stacks = s->store.nstacks;
	st->threads = s->store.nnames;
	st->retired_processes = s->store.retired_processes;
	st->drains = s->drains;
	gpu_stats(s, &st->gpu);
	sum_percpu(bpf_map__fd(s->skel->maps.cgroup_stats), 1, &st->cgroup_filtered);
	if (s->opts.off_cpu)
		offcpu_stats(s, &st->off_cpu);
	event_counters(s, st);
}

int sampler_ncpus(const struct sampler *s)
{
	return s->ncpus;
}

void sampler_free(struct sampler *s)
{
	if (!s)
		return;
	sampler_stop(s);
	ring_buffer__free(s->rb);
	for (size_t i = 0; i < FIRN_NWALKERS; i++)
		profile_bpf__destroy(s->late_skel[i]);
	profile_bpf__destroy(s->skel);
	rows_first_release(&s->rows0);
	if (s->btf_fd >= 0)
		close(s->btf_fd);
	stackstore_release(&s->store);
	free(s->links);
	free(s->pfds);
	free(s->ulinks);
	free(s);
}

void sampler_reset_counts(struct sampler *s)
{
	stackstore_reset_counts(&s->store);
}

int sampler_event_fd(const struct sampler *s)
{
	return ring_buffer__epoll_fd(s->rb);
}

/* Walker w's late object: the main one's maps (but its own read-only settings and the walker's
 * own maps, sized for it only now), only w's program loaded. 0 or -errno. */
static int open_late_skel(struct sampler *s, struct profile_bpf *k, const struct firn_walker_row *w)
{
	struct bpf_program *pr;
	struct bpf_map *m;

	*k->rodata = *s->skel->rodata;
	k->rodata->walkers_on |= 1u << w->tag;
	bpf_object__for_each_map(m, k->obj) {
		if (m == k->maps.rodata || m == k->maps.kconfig || walker_owns(w, m))
			continue;
		struct bpf_map *mine = bpf_object__find_map_by_name(s->skel->obj, bpf_map__name(m));
		if (!mine || bpf_map__reuse_fd(m, bpf_map__fd(mine)))
			return -(errno ? errno : ENOENT);
	}
	bpf_object__for_each_program(pr, k->obj)
		bpf_program__set_autoload(pr, !strcmp(bpf_program__name(pr), w->prog));
	return 0;
}

/* Loads walker i's program and puts it in its slot: the cpu-clock program tail-calls it from the
 * next sample on (nothing is reloaded or re-attached). One try. */
static int load_walker(struct sampler *s, size_t i)
{
	const struct firn_walker_row *w = &firn_walkers[i];
	struct profile_bpf *k = open_skel(s);
	int err = k ? open_late_skel(s, k, w) : -(errno ? errno : ENOMEM);

	s->late &= ~(1u << w->tag);
	s->pending &= ~(1u << w->tag);
	if (!err && profile_bpf__load(k))
		err = -(errno ? errno : EINVAL);
	if (!err)
		err = set_unwinder(s, k, w);
	if (err) {
		profile_bpf__destroy(k);
		diag(DIAG_WARN, "cannot load %s: %s; its processes get native frames only", w->what,
		     strerror(-err));
		return err;
	}
	s->late_skel[i] = k;
	return 0;
}

/* Loads the walkers a sampler_set_proc call asked for, now that no ring-buffer callback is
 * running. */
static void load_pending(struct sampler *s)
{
	for (size_t i = 0; s->pending && i < FIRN_NWALKERS; i++)
		if (s->pending & (1u << firn_walkers[i].tag))
			load_walker(s, i);
}

int sampler_set_proc(struct sampler *s, unsigned tag, pid_t pid, const void *blob, size_t len)
{
	struct firn_walker_key key = { .tag = tag, .pid = (__u32)pid };
	struct firn_walker_proc v = { 0 };
	int fd = bpf_map__fd(s->skel->maps.walker_procs);

	if (!tag || tag >= FIRN_FRAME_KINDS || len > sizeof(v))
		return -EINVAL;
	if (blob)
		memcpy(v.bytes, blob, len);
	s->pending |= blob ? s->late & (1u << tag) : 0;
	if (blob ? bpf_map_update_elem(fd, &key, &v, BPF_ANY) : bpf_map_delete_elem(fd, &key))
		return -errno;
	return 0;
}

void sampler_walker_stats(struct sampler *s, unsigned tag, uint64_t *out, size_t n)
{
	if (tag >= FIRN_FRAME_KINDS)
		return;
	sum_percpu_at(bpf_map__fd(s->skel->maps.walker_stats), FIRN_WALKER_STAT(tag, 0),
		      n < FIRN_WALKER_STATS ? (uint32_t)n : FIRN_WALKER_STATS, out);
}
