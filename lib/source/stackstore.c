/* The stack store: stacks, entries, names and ended processes held in user space, and the
 * policy of retiring, parking and forgetting them (see stackstore.h). Moved out of the BPF
 * sampler, which only fills it. */
#include "source/stackstore.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#include "../../bpf/firn.h"

#include "base/hash.h"
#include "base/vec.h"

_Static_assert(sizeof(((struct stackstore_name *)0)->thread) == 16, "FIRN_COMM_LEN");

void stackstore_init(struct stackstore *st, bool retire, uint32_t uncounted_from)
{
	*st = (struct stackstore){ .retire = retire, .uncounted_from = uncounted_from };
}

void stackstore_release(struct stackstore *st)
{
	for (size_t i = 0; i < st->cap_stacks; i++)
		free(st->stacks[i].ips);
	FREE_ALL(st->stacks, st->entries, st->names, st->exited);
	*st = (struct stackstore){ 0 };
}

static uint64_t key_hash(const struct stackstore_key *k)
{
	uint64_t ids = hash_mix64(((uint64_t)k->pid << 32 | k->tid) + k->event);

	return hash_mix64(k->ustack ^ hash_mix64(k->kstack ^ ids));
}

/* Generic grow-and-rehash for the three tables: doubles when half full. */
#define TABLE_RESERVE(s, arr, n, cap, type, slot_of)                                 \
	do {                                                                         \
		if (((s)->n + 1) * 2 <= (s)->cap)                                    \
			break;                                                       \
		size_t ncap_ = (s)->cap ? (s)->cap * 2 : 4096;                       \
		type *old_ = (s)->arr, *new_ = calloc(ncap_, sizeof(type));          \
		if (!new_)                                                           \
			return -ENOMEM;                                              \
		size_t ocap_ = (s)->cap;                                             \
		(s)->arr = new_;                                                     \
		(s)->cap = ncap_;                                                    \
		for (size_t i_ = 0; i_ < ocap_; i_++)                                \
			if (old_[i_].used_field)                                     \
				new_[slot_of(s, &old_[i_])] = old_[i_];              \
		free(old_);                                                          \
	} while (0)

/* Slot for stack id (existing or the empty one where it goes). */
static size_t stack_slot(const struct stackstore *s, uint64_t id)
{
	size_t mask = s->cap_stacks - 1, i = hash_mix64(id) & mask;

	while (s->stacks[i].id && s->stacks[i].id != id)
		i = (i + 1) & mask;
	return i;
}

static size_t stack_slot_of(const struct stackstore *s, const struct stackstore_stack *u)
{
	return stack_slot(s, u->id);
}

static size_t entry_slot(const struct stackstore *s, const struct stackstore_key *k)
{
	size_t mask = s->cap_entries - 1, i = key_hash(k) & mask;

	while (s->entries[i].used && memcmp(&s->entries[i].key, k, sizeof(*k)))
		i = (i + 1) & mask;
	return i;
}

static size_t entry_slot_of(const struct stackstore *s, const struct stackstore_entry *e)
{
	return entry_slot(s, &e->key);
}

static size_t name_slot(const struct stackstore *s, uint32_t tid)
{
	size_t mask = s->cap_names - 1, i = hash_mix64(tid) & mask;

	while (s->names[i].used && s->names[i].tid != tid)
		i = (i + 1) & mask;
	return i;
}

static size_t name_slot_of(const struct stackstore *s, const struct stackstore_name *c)
{
	return name_slot(s, c->tid);
}

#define used_field id
static int stacks_reserve(struct stackstore *s)
{
	TABLE_RESERVE(s, stacks, nstacks, cap_stacks, struct stackstore_stack, stack_slot_of);
	return 0;
}
#undef used_field
#define used_field used
static int entries_reserve(struct stackstore *s)
{
	TABLE_RESERVE(s, entries, nentries, cap_entries, struct stackstore_entry, entry_slot_of);
	return 0;
}

static int names_reserve(struct stackstore *s)
{
	TABLE_RESERVE(s, names, nnames, cap_names, struct stackstore_name, name_slot_of);
	return 0;
}
#undef used_field

void stackstore_drained(struct stackstore *st)
{
	st->drains++;
}

bool stackstore_has_stack(struct stackstore *st, uint64_t id)
{
	if (!id)
		return true;
	if (!st->cap_stacks)
		return false;
	size_t i = stack_slot(st, id);
	if (!st->stacks[i].id)
		return false;
	st->stacks[i].seen = st->drains;
	return true;
}

int stackstore_put_stack(struct stackstore *st, uint64_t id, const uint64_t *ips, uint32_t len)
{
	if (!id || stackstore_has_stack(st, id))
		return 0;
	if (stacks_reserve(st))
		return -ENOMEM;
	uint64_t *copy = malloc((len ? len : 1) * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, ips, len * sizeof(*copy));
	st->stacks[stack_slot(st, id)] = (struct stackstore_stack){ .id = id, .len = len,
								     .ips = copy,
								     .seen = st->drains };
	st->nstacks++;
	return 0;
}

const struct stackstore_stack *stackstore_stack(const struct stackstore *st, uint64_t id)
{
	if (!id || !st->cap_stacks)
		return NULL;
	size_t i = stack_slot(st, id);
	return st->stacks[i].id ? &st->stacks[i] : NULL;
}

/* One more entry uses stack id (held). */
static void stack_ref(struct stackstore *s, uint64_t id)
{
	size_t i = id ? stack_slot(s, id) : 0;

	if (id && s->stacks[i].id)
		s->stacks[i].refs++;
}

int stackstore_add(struct stackstore *st, const struct stackstore_key *k, uint64_t count)
{
	if (entries_reserve(st))
		return -ENOMEM;
	size_t i = entry_slot(st, k);
	bool fresh = !st->entries[i].used;
	if (fresh) {
		st->entries[i] = (struct stackstore_entry){ *k, 0, true, false };
		st->nentries++;
		stack_ref(st, k->ustack);
		stack_ref(st, k->kstack);
	}
	st->entries[i].count += count;
	return fresh;
}

/* Copies a name of at most 15 characters (a kernel comm). */
static void name_copy(char dst[16], const char *src)
{
	size_t n = strnlen(src, 15);

	memcpy(dst, src, n);
	dst[n] = 0;
}

int stackstore_set_name(struct stackstore *st, uint32_t tid, const char *thread,
			const char *process)
{
	if (names_reserve(st))
		return -ENOMEM;
	size_t i = name_slot(st, tid);
	if (!st->names[i].used)
		st->nnames++;
	st->names[i] = (struct stackstore_name){ .tid = tid, .used = true };
	name_copy(st->names[i].thread, thread);
	name_copy(st->names[i].process, process);
	return 0;
}

void stackstore_exit(struct stackstore *st, pid_t pid)
{
	if (!st->retire || VEC_GROW(st->exited, st->cap_exited, st->nexited + 1))
		return; /* out of memory: its entries stay until the end */
	st->exited[st->nexited++] = (struct stackstore_exited){ pid, st->drains };
}

bool stackstore_has_exited(const struct stackstore *st, pid_t pid)
{
	for (size_t i = 0; i < st->nexited; i++)
		if (st->exited[i].pid == pid)
			return true;
	return false;
}

static const char *name_of(const struct stackstore *s, uint32_t tid, bool process)
{
	if (!s->cap_names)
		return "";
	size_t i = name_slot(s, tid);
	if (!s->names[i].used)
		return "";
	return process ? s->names[i].process : s->names[i].thread;
}

/* The view of an entry that callbacks get. */
static struct sampler_entry entry_view(const struct stackstore *s, const struct stackstore_entry *u)
{
	const struct stackstore_stack *us = stackstore_stack(s, u->key.ustack);
	const struct stackstore_stack *ks = stackstore_stack(s, u->key.kstack);
	struct sampler_entry e = {
		.pid = u->key.pid,
		.tid = u->key.tid,
		.event = u->key.event,
		.count = u->count,
		.ustack = us ? us->ips : NULL,
		.ulen = us ? us->len : 0,
		.kstack = ks ? ks->ips : NULL,
		.klen = ks ? ks->len : 0,
		.comm = name_of(s, u->key.pid, false),
		.thread = name_of(s, u->key.tid, false),
	};

	/* the process name: the group leader's name as seen by any of its threads */
	if (!*e.comm)
		e.comm = name_of(s, u->key.tid, true);
	return e;
}

int stackstore_for_each(struct stackstore *st,
			int (*fn)(void *ctx, const struct sampler_entry *e), void *ctx)
{
	for (size_t i = 0; i < st->cap_entries; i++) {
		if (!st->entries[i].used)
			continue;
		struct sampler_entry e = entry_view(st, &st->entries[i]);
		int rc = fn(ctx, &e);
		if (rc)
			return rc;
	}
	return 0;
}

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

static bool pid_in(const pid_t *pids, size_t n, pid_t pid)
{
	return n && bsearch(&pid, pids, n, sizeof(*pids), pid_cmp);
}

/* Moves the exited processes whose samples are all drained into a sorted array; returns how
 * many (0 when none or out of memory). Forgetting rebuilds the tables, so processes are taken
 * in batches: once batch are ready or one has waited wait_drains drains. */
static size_t take_ready(struct stackstore *s, pid_t **out, size_t batch, uint64_t wait_drains)
{
	size_t n = 0, kept = 0;
	bool due = !batch;

	for (size_t i = 0; i < s->nexited; i++) {
		n += s->exited[i].gen < s->drains;
		due |= s->exited[i].gen + wait_drains <= s->drains;
	}
	if (!n || (!due && n < batch))
		return 0;
	n = 0;
	pid_t *pids = malloc((s->nexited ? s->nexited : 1) * sizeof(*pids));
	if (!pids)
		return 0;
	for (size_t i = 0; i < s->nexited; i++) {
		if (s->exited[i].gen < s->drains)
			pids[n++] = s->exited[i].pid;
		else
			s->exited[kept++] = s->exited[i];
	}
	s->nexited = kept;
	qsort(pids, n, sizeof(*pids), pid_cmp);
	*out = pids;
	return n;
}

/* Drops one reference to a stack (kept until sweep_stacks). */
static void stack_unref(struct stackstore *s, uint64_t id)
{
	if (!id || !s->cap_stacks)
		return;
	size_t i = stack_slot(s, id);
	if (s->stacks[i].id && s->stacks[i].refs)
		s->stacks[i].refs--;
}

/* Reinserts every used slot of a table into a fresh one of the same size (after removals:
 * open addressing cannot leave holes in a probe sequence). */
#define TABLE_REHASH(s, arr, cap, type, slot_of, keep)                               \
	do {                                                                         \
		type *old_ = (s)->arr, *new_ = calloc((s)->cap, sizeof(type));       \
		if (!new_)                                                           \
			return -ENOMEM;                                              \
		(s)->arr = new_;                                                     \
		for (size_t i_ = 0; i_ < (s)->cap; i_++)                             \
			if (keep(&old_[i_]))                                         \
				new_[slot_of(s, &old_[i_])] = old_[i_];              \
		free(old_);                                                          \
	} while (0)

static bool entry_used(const struct stackstore_entry *u)
{
	return u->used;
}

static bool name_used(const struct stackstore_name *c)
{
	return c->used;
}

static bool stack_used(const struct stackstore_stack *st)
{
	return st->id;
}

static int rehash_entries(struct stackstore *s)
{
	TABLE_REHASH(s, entries, cap_entries, struct stackstore_entry, entry_slot_of, entry_used);
	return 0;
}

static int rehash_names(struct stackstore *s)
{
	TABLE_REHASH(s, names, cap_names, struct stackstore_name, name_slot_of, name_used);
	return 0;
}

/* Frees the stacks no entry uses that no undrained count can name (not met by the last drain). */
static int sweep_stacks(struct stackstore *s)
{
	for (size_t i = 0; i < s->cap_stacks; i++) {
		struct stackstore_stack *st = &s->stacks[i];
		if (!st->id || st->refs || st->seen + 1 >= s->drains)
			continue;
		free(st->ips);
		memset(st, 0, sizeof(*st));
		s->nstacks--;
	}
	TABLE_REHASH(s, stacks, cap_stacks, struct stackstore_stack, stack_slot_of, stack_used);
	return 0;
}

/* Hands the entries of the processes in pids (sorted) that ops->select takes to ops->park (when
 * given) and marks those it took; 0 or park's -errno. */
static int park_marked(struct stackstore *s, const pid_t *pids, size_t n,
		       const struct sampler_retire_ops *ops)
{
	int err = 0;

	for (size_t i = 0; i < s->cap_entries && n && !err; i++) {
		struct stackstore_entry *u = &s->entries[i];
		if (!u->used || !pid_in(pids, n, u->key.pid))
			continue;
		struct sampler_entry e = entry_view(s, u);
		if (ops->select && !ops->select(ops->ctx, &e))
			continue;
		err = ops->park ? ops->park(ops->ctx, &e) : 0;
		u->parked = !err;
	}
	return err;
}

/* Forgets the names of the threads in tids (sorted). */
static int forget_names(struct stackstore *s, const pid_t *tids, size_t ntids)
{
	for (size_t i = 0; i < s->cap_names; i++) {
		struct stackstore_name *c = &s->names[i];
		if (c->used && pid_in(tids, ntids, c->tid)) {
			c->used = false;
			s->nnames--;
		}
	}
	return s->cap_names ? rehash_names(s) : 0;
}

/* Forgets the marked entries and the stacks only they used; with names, also the names of their
 * threads and of the processes in pids (sorted, n: the processes that ended). */
static int forget_parked(struct stackstore *s, const pid_t *pids, size_t n, bool names)
{
	pid_t *tids = names ? malloc((s->nentries + n) * sizeof(*tids)) : NULL;
	size_t ntids = 0, before = s->nentries;
	int err = 0;

	if (names && !tids)
		return -ENOMEM;
	for (size_t i = 0; i < n && names; i++)
		tids[ntids++] = pids[i];
	for (size_t i = 0; i < s->cap_entries; i++) {
		struct stackstore_entry *u = &s->entries[i];
		if (!u->used || !u->parked)
			continue;
		stack_unref(s, u->key.ustack);
		stack_unref(s, u->key.kstack);
		s->retired += u->key.event == FIRN_EVENT_OFF_CPU ? 0 : u->count;
		if (names)
			tids[ntids++] = u->key.tid;
		*u = (struct stackstore_entry){ 0 };
		s->nentries--;
	}
	if (names) {
		qsort(tids, ntids, sizeof(*tids), pid_cmp);
		err = forget_names(s, tids, ntids);
		free(tids);
	}
	if (!err && s->nentries < before && s->cap_entries)
		err = rehash_entries(s);
	if (!err && s->nentries < before && s->cap_stacks)
		err = sweep_stacks(s);
	return err;
}

/* Puts the processes of pids (sorted) whose entries ops->ready turns down back on the exited
 * list (as drained already), and drops them from pids; returns how many stay. */
static size_t defer_unready(struct stackstore *s, const struct sampler_retire_ops *ops,
			    pid_t *pids, size_t n, bool requeue)
{
	bool *later = calloc(n ? n : 1, sizeof(*later));
	size_t kept = 0;

	if (!ops->ready || !later) {
		free(later);
		return n;
	}
	for (size_t i = 0; i < s->cap_entries; i++) {
		const struct stackstore_entry *u = &s->entries[i];
		pid_t *at = u->used && n ? bsearch(&(pid_t){ u->key.pid }, pids, n, sizeof(*pids), pid_cmp)
					 : NULL; /* pids may be NULL at n 0 */
		if (!at || later[at - pids])
			continue;
		struct sampler_entry e = entry_view(s, u);
		later[at - pids] = !ops->ready(ops->ctx, &e);
	}
	for (size_t i = 0; i < n; i++) {
		if (!later[i])
			pids[kept++] = pids[i];
		else if (requeue && s->nexited < s->cap_exited) /* room: take_ready emptied it */
			s->exited[s->nexited++] = (struct stackstore_exited){ pids[i], 0 };
	}
	free(later);
	return kept;
}

/* The distinct pids of the entries, sorted, into *out (malloc'd); how many, or 0. */
static size_t entry_pids(const struct stackstore *s, pid_t **out)
{
	pid_t *pids = malloc((s->nentries ? s->nentries : 1) * sizeof(*pids));
	size_t n = 0, k = 0;

	*out = pids;
	if (!pids)
		return 0;
	for (size_t i = 0; i < s->cap_entries; i++)
		if (s->entries[i].used)
			pids[n++] = s->entries[i].key.pid;
	qsort(pids, n, sizeof(*pids), pid_cmp);
	for (size_t i = 0; i < n; i++)
		if (!k || pids[k - 1] != pids[i])
			pids[k++] = pids[i];
	return k;
}

/* Parks and forgets the entries of the processes in pids (sorted; n of them) whose entries are
 * ready; takes pids over. Returns how many entries went, or -errno. */
static int park_processes(struct stackstore *s, pid_t *pids, size_t n,
			  const struct sampler_retire_ops *ops)
{
	size_t before = s->nentries;
	int err = 0;

	n = n ? defer_unready(s, ops, pids, n, false) : 0;
	err = park_marked(s, pids, n, ops);
	free(pids);
	if (!err)
		err = forget_parked(s, NULL, 0, false);
	return err ? err : (int)(before - s->nentries);
}

int stackstore_park_live(struct stackstore *st, const struct sampler_retire_ops *ops)
{
	pid_t *pids = NULL;
	size_t n = entry_pids(st, &pids);

	return park_processes(st, pids, n, ops);
}

int stackstore_park_process(struct stackstore *st, pid_t pid,
			    const struct sampler_retire_ops *ops)
{
	pid_t *pids = malloc(sizeof(*pids));

	if (!pids)
		return -ENOMEM;
	*pids = pid;
	return park_processes(st, pids, 1, ops);
}

int stackstore_retire(struct stackstore *st, const struct sampler_retire_ops *ops, size_t batch,
		      uint64_t wait_drains)
{
	pid_t *pids = NULL;
	size_t n = take_ready(st, &pids, batch, wait_drains);
	int err = 0;

	if (!n)
		return 0;
	n = defer_unready(st, ops, pids, n, true);
	err = park_marked(st, pids, n, ops);
	if (!err && n)
		err = forget_parked(st, pids, n, true);
	if (!err)
		st->retired_processes += n;
	for (size_t i = 0; i < n && !err && ops->gone; i++)
		ops->gone(ops->ctx, pids[i]);
	free(pids);
	return err ? err : (int)n;
}

void stackstore_reset_counts(struct stackstore *st)
{
	if (st->entries)
		memset(st->entries, 0, st->cap_entries * sizeof(*st->entries));
	st->nentries = 0;
}

uint64_t stackstore_stored(const struct stackstore *st)
{
	uint64_t n = st->retired;

	for (size_t i = 0; i < st->cap_entries; i++)
		/* off-CPU waits and GPU records are no samples */
		if (st->entries[i].used && st->entries[i].key.event < st->uncounted_from)
			n += st->entries[i].count;
	return n;
}
