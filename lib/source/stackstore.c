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
#include "base/hashtab.h"
#include "base/vec.h"

_Static_assert(sizeof(((struct stackstore_name *)0)->thread) == 16, "FIRN_COMM_LEN");

void stackstore_init(struct stackstore *st, bool retire, uint32_t uncounted_from)
{
	*st = (struct stackstore){ .retire = retire, .uncounted_from = uncounted_from,
				   .level_from = 1, .level_to = 0 };
}

void stackstore_set_levels(struct stackstore *st, uint32_t from, uint32_t to)
{
	st->level_from = from;
	st->level_to = to;
}

void stackstore_release(struct stackstore *st)
{
	for (size_t i = 0; i < st->nstacks; i++)
		free(st->stacks[i].ips);
	FREE_ALL(st->stacks, st->entries, st->names, st->exited);
	hashtab_release(&st->stack_index);
	hashtab_release(&st->entry_index);
	hashtab_release(&st->name_index);
	*st = (struct stackstore){ 0 };
}

static uint64_t key_hash(const struct stackstore_key *k)
{
	uint64_t ids = hash_mix64(((uint64_t)k->pid << 32 | k->tid) + k->event);

	return hash_mix64(k->ustack ^ hash_mix64(k->kstack ^ ids));
}

/* Whether stack number id has the stack id *key (hashtab_eq_fn). */
static bool stack_eq(const void *ctx, uint32_t id, const void *key)
{
	return ((const struct stackstore *)ctx)->stacks[id].id == *(const uint64_t *)key;
}

static bool entry_eq(const void *ctx, uint32_t id, const void *key)
{
	return !memcmp(&((const struct stackstore *)ctx)->entries[id].key, key,
		       sizeof(struct stackstore_key));
}

static bool name_eq(const void *ctx, uint32_t id, const void *key)
{
	return ((const struct stackstore *)ctx)->names[id].tid == *(const uint32_t *)key;
}

/* The index of stack id in stacks (-1: not held). */
static int64_t stack_find(const struct stackstore *s, uint64_t id)
{
	return hashtab_find(&s->stack_index, hash_mix64(id), stack_eq, s, &id);
}

static int64_t entry_find(const struct stackstore *s, const struct stackstore_key *k)
{
	return hashtab_find(&s->entry_index, key_hash(k), entry_eq, s, k);
}

static int64_t name_find(const struct stackstore *s, uint32_t tid)
{
	return hashtab_find(&s->name_index, hash_mix64(tid), name_eq, s, &tid);
}

/* The hash each table's index files element i under. */
static uint64_t stack_hash_at(const struct stackstore *s, size_t i)
{
	return hash_mix64(s->stacks[i].id);
}

static uint64_t entry_hash_at(const struct stackstore *s, size_t i)
{
	return key_hash(&s->entries[i].key);
}

static uint64_t name_hash_at(const struct stackstore *s, size_t i)
{
	return hash_mix64(s->names[i].tid);
}

/* Files elements 0..n of a table afresh in its index t (after removals moved them): the
 * slots are kept, so it cannot fail. */
static void reindex(const struct stackstore *s, struct hashtab *t, size_t n,
		    uint64_t (*hash_at)(const struct stackstore *s, size_t i))
{
	hashtab_clear(t);
	for (size_t i = 0; i < n; i++)
		hashtab_add(t, hash_at(s, i), (uint32_t)i);
}

/* Keeps the elements of arr (n of size bytes) that keep takes, in their order; returns how many
 * stay. */
static size_t compact(void *arr, size_t n, size_t size, bool (*keep)(const void *elem))
{
	char *a = arr;
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (keep(a + i * size) && k++ != i)
			memcpy(a + (k - 1) * size, a + i * size, size);
	return k;
}

void stackstore_drained(struct stackstore *st)
{
	st->drains++;
}

bool stackstore_has_stack(struct stackstore *st, uint64_t id)
{
	if (!id)
		return true;
	int64_t i = stack_find(st, id);
	if (i < 0)
		return false;
	st->stacks[i].seen = st->drains;
	return true;
}

int stackstore_put_stack(struct stackstore *st, uint64_t id, const uint64_t *ips, uint32_t len)
{
	if (!id || stackstore_has_stack(st, id))
		return 0;
	if (VEC_GROW(st->stacks, st->cap_stacks, st->nstacks + 1) ||
	    hashtab_reserve(&st->stack_index, st->nstacks + 1))
		return -ENOMEM;
	uint64_t *copy = malloc((len ? len : 1) * sizeof(*copy));
	if (!copy || hashtab_add(&st->stack_index, hash_mix64(id), (uint32_t)st->nstacks)) {
		free(copy);
		return -ENOMEM;
	}
	memcpy(copy, ips, len * sizeof(*copy));
	st->stacks[st->nstacks++] = (struct stackstore_stack){ .id = id, .len = len, .ips = copy,
								.seen = st->drains };
	return 0;
}

const struct stackstore_stack *stackstore_stack(const struct stackstore *st, uint64_t id)
{
	int64_t i = id ? stack_find(st, id) : -1;

	return i < 0 ? NULL : &st->stacks[i];
}

/* One more entry uses stack id (held). */
static void stack_ref(struct stackstore *s, uint64_t id)
{
	int64_t i = id ? stack_find(s, id) : -1;

	if (i >= 0)
		s->stacks[i].refs++;
}

int stackstore_add(struct stackstore *st, const struct stackstore_key *k, uint64_t count)
{
	int64_t i = entry_find(st, k);

	if (i >= 0) {
		st->entries[i].count += count;
		return 0;
	}
	if (VEC_GROW(st->entries, st->cap_entries, st->nentries + 1) ||
	    hashtab_add(&st->entry_index, key_hash(k), (uint32_t)st->nentries))
		return -ENOMEM;
	st->entries[st->nentries++] = (struct stackstore_entry){ .key = *k, .count = count };
	stack_ref(st, k->ustack);
	stack_ref(st, k->kstack);
	return 1;
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
	int64_t i = name_find(st, tid);

	if (i < 0) {
		if (VEC_GROW(st->names, st->cap_names, st->nnames + 1) ||
		    hashtab_add(&st->name_index, hash_mix64(tid), (uint32_t)st->nnames))
			return -ENOMEM;
		i = (int64_t)st->nnames++;
	}
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
	int64_t i = name_find(s, tid);

	if (i < 0)
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
		.ctx = u->key.ctx,
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
	for (size_t i = 0; i < st->nentries; i++) {
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
	int64_t i = id ? stack_find(s, id) : -1;

	if (i >= 0 && s->stacks[i].refs)
		s->stacks[i].refs--;
}

/* compact's tests of what stays: entries not parked, names not forgotten, stacks not freed. */
static bool entry_kept(const void *u)
{
	return !((const struct stackstore_entry *)u)->parked;
}

static bool name_kept(const void *c)
{
	return ((const struct stackstore_name *)c)->used;
}

static bool stack_kept(const void *st)
{
	return ((const struct stackstore_stack *)st)->ips;
}

/* Frees the stacks no entry uses that no undrained count can name (not met by the last drain). */
static void sweep_stacks(struct stackstore *s)
{
	size_t freed = 0;

	for (size_t i = 0; i < s->nstacks; i++) {
		struct stackstore_stack *st = &s->stacks[i];
		if (st->refs || st->seen + 1 >= s->drains)
			continue;
		free(st->ips);
		st->ips = NULL;
		freed++;
	}
	if (!freed) /* (a retired process's stacks met by the last drain stay: most retirements) */
		return;
	s->nstacks = compact(s->stacks, s->nstacks, sizeof(*s->stacks), stack_kept);
	reindex(s, &s->stack_index, s->nstacks, stack_hash_at);
}

/* Hands the entries of the processes in pids (sorted) that ops->select takes to ops->park (when
 * given) and marks those it took (*marked: how many); 0 or park's -errno. */
static int park_marked(struct stackstore *s, const pid_t *pids, size_t n,
		       const struct sampler_retire_ops *ops, size_t *marked)
{
	int err = 0;

	*marked = 0;

	for (size_t i = 0; i < s->nentries && n && !err; i++) {
		struct stackstore_entry *u = &s->entries[i];
		if (!pid_in(pids, n, u->key.pid))
			continue;
		struct sampler_entry e = entry_view(s, u);
		if (ops->select && !ops->select(ops->ctx, &e))
			continue;
		err = ops->park ? ops->park(ops->ctx, &e) : 0;
		u->parked = !err;
		*marked += u->parked;
	}
	return err;
}

/* Forgets the names of the threads in tids (sorted). */
static void forget_names(struct stackstore *s, const pid_t *tids, size_t ntids)
{
	size_t before = s->nnames;

	for (size_t i = 0; i < s->nnames; i++)
		s->names[i].used = !pid_in(tids, ntids, s->names[i].tid);
	s->nnames = compact(s->names, s->nnames, sizeof(*s->names), name_kept);
	if (s->nnames < before)
		reindex(s, &s->name_index, s->nnames, name_hash_at);
}

/* Forgets the marked entries and the stacks only they used; with names, also the names of their
 * threads and of the processes in pids (sorted, n: the processes that ended). */
static int forget_parked(struct stackstore *s, const pid_t *pids, size_t n, bool names)
{
	pid_t *tids = names ? malloc((s->nentries + n) * sizeof(*tids)) : NULL;
	size_t ntids = 0, before = s->nentries;

	if (names && !tids)
		return -ENOMEM;
	for (size_t i = 0; i < n && names; i++)
		tids[ntids++] = pids[i];
	for (size_t i = 0; i < s->nentries; i++) {
		const struct stackstore_entry *u = &s->entries[i];
		if (!u->parked)
			continue;
		stack_unref(s, u->key.ustack);
		stack_unref(s, u->key.kstack);
		s->retired += u->key.event == FIRN_EVENT_OFF_CPU ? 0 : u->count;
		if (names)
			tids[ntids++] = u->key.tid;
	}
	s->nentries = compact(s->entries, s->nentries, sizeof(*s->entries), entry_kept);
	if (names) {
		qsort(tids, ntids, sizeof(*tids), pid_cmp);
		forget_names(s, tids, ntids);
		free(tids);
	}
	if (s->nentries < before) {
		reindex(s, &s->entry_index, s->nentries, entry_hash_at);
		sweep_stacks(s);
	}
	return 0;
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
	for (size_t i = 0; i < s->nentries; i++) {
		const struct stackstore_entry *u = &s->entries[i];
		pid_t *at = n ? bsearch(&(pid_t){ u->key.pid }, pids, n, sizeof(*pids), pid_cmp)
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
	for (size_t i = 0; i < s->nentries; i++)
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
	size_t before = s->nentries, marked;
	int err = 0;

	n = n ? defer_unready(s, ops, pids, n, false) : 0;
	err = park_marked(s, pids, n, ops, &marked);
	free(pids);
	if (!err && marked) /* (most execs: a process that took no sample before it) */
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
	size_t marked;

	n = defer_unready(st, ops, pids, n, true);
	err = park_marked(st, pids, n, ops, &marked);
	if (!err && n)
		err = forget_parked(st, pids, n, true);
	if (!err)
		st->retired_processes += n;
	for (size_t i = 0; i < n && !err && ops->gone; i++)
		ops->gone(ops->ctx, pids[i]);
	free(pids);
	return err ? err : (int)n;
}

/* Whether an entry's count is a level (kept by a reset while it is not 0). */
static bool entry_is_level(const struct stackstore *st, const struct stackstore_entry *u)
{
	return u->count && u->key.event >= st->level_from && u->key.event <= st->level_to;
}

/* Every entry but the levels goes, so its stacks lose their users: they are swept as after a
 * forget (those met by the last drain stay for one more, as a count it left undrained may name
 * them). Without the sweep a continuous recording kept every stack it ever met. The stored
 * statistic counts from here, the samples of entries forgotten before too: a cut that handed them
 * out counted them (recorder_cut), and keeping them counted them again at every later cut. A
 * level (the live heap by stack) is what every cut shows, so it stays with its stacks. */
void stackstore_reset_counts(struct stackstore *st)
{
	size_t kept = 0;

	st->retired = 0;
	for (size_t i = 0; i < st->nentries; i++) {
		if (entry_is_level(st, &st->entries[i])) {
			st->entries[kept++] = st->entries[i];
			continue;
		}
		stack_unref(st, st->entries[i].key.ustack);
		stack_unref(st, st->entries[i].key.kstack);
	}
	st->nentries = kept;
	reindex(st, &st->entry_index, kept, entry_hash_at);
	sweep_stacks(st);
}

uint64_t stackstore_stored(const struct stackstore *st)
{
	uint64_t n = st->retired;

	for (size_t i = 0; i < st->nentries; i++)
		/* off-CPU waits and GPU records are no samples */
		if (st->entries[i].key.event < st->uncounted_from)
			n += st->entries[i].count;
	return n;
}
