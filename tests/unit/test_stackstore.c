/* Unit tests (no root, no BPF) of the stack store: the policy the BPF sampler's drains and the
 * fake sample source share — an ended process is retired only after a drain completes after
 * its end, entries not ready wait, parked entries and the stacks only they used are forgotten
 * (a stack a later count may name stays a drain longer), names go with their threads, and the
 * stored statistic counts what was forgotten, and a reset lets go of the stacks its entries used. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "source/stackstore.h"

#define OFF_CPU 0xffffffffu

/* What the callbacks were given. */
struct seen {
	int parked, gone;
	uint64_t parked_count;
	pid_t last_gone;
	pid_t not_ready; /* entries of this pid are not ready */
	uint64_t only_ip; /* select: only entries whose leaf is this (0: all) */
	char comm[16];
};

static bool ready(void *ctx, const struct sampler_entry *e)
{
	return (pid_t)e->pid != ((struct seen *)ctx)->not_ready;
}

static bool select_ip(void *ctx, const struct sampler_entry *e)
{
	struct seen *s = ctx;

	return !s->only_ip || (e->ulen && e->ustack[0] == s->only_ip);
}

static int park(void *ctx, const struct sampler_entry *e)
{
	struct seen *s = ctx;

	s->parked++;
	s->parked_count += e->count;
	snprintf(s->comm, sizeof(s->comm), "%s", e->comm);
	return 0;
}

static void gone(void *ctx, pid_t pid)
{
	struct seen *s = ctx;

	s->gone++;
	s->last_gone = pid;
}

/* Adds count samples of pid/tid on a one-frame user stack (its id: ip) under event. */
static void add(struct stackstore *st, pid_t pid, pid_t tid, uint64_t ip, uint64_t count,
		uint32_t event)
{
	struct stackstore_key k = { .pid = pid, .tid = tid, .ustack = ip, .event = event };

	if (!stackstore_has_stack(st, ip))
		assert_int_equal(stackstore_put_stack(st, ip, &ip, 1), 0);
	assert_true(stackstore_add(st, &k, count) >= 0);
}

static int count_entries(void *ctx, const struct sampler_entry *e)
{
	(void)e;
	(*(int *)ctx)++;
	return 0;
}

static int held(struct stackstore *st)
{
	int n = 0;

	stackstore_for_each(st, count_entries, &n);
	return n;
}

/* An exit seen before a drain completes waits for it; then the process's entries are parked
 * with their names, the process goes, its stacks and names are forgotten; its samples count
 * as stored until the counts are reset. */
static void test_retire_after_drain(void **state)
{
	struct stackstore st;
	struct seen s = { 0 };
	struct sampler_retire_ops ops = { .ready = ready, .park = park, .gone = gone, .ctx = &s };

	(void)state;
	stackstore_init(&st, true, 0xfffffff0u);
	add(&st, 10, 10, 0x1000, 3, 0);
	add(&st, 10, 11, 0x1000, 2, 0);
	add(&st, 20, 20, 0x2000, 5, 0);
	assert_int_equal(stackstore_set_name(&st, 10, "worker", "prog"), 0);
	assert_int_equal(stackstore_add(&st, &(struct stackstore_key){ .pid = 10, .tid = 10,
								      .ustack = 0x1000 }, 1), 0);
	stackstore_drained(&st);
	stackstore_exit(&st, 10);
	assert_true(stackstore_has_exited(&st, 10));
	assert_int_equal(stackstore_retire(&st, &ops, 0, 0), 0); /* no drain since its exit */
	stackstore_drained(&st);
	stackstore_drained(&st); /* 0x1000 not met by the last drain: it may go */
	assert_int_equal(stackstore_retire(&st, &ops, 0, 0), 1);
	assert_int_equal(s.parked, 2);
	assert_int_equal(s.parked_count, 6);
	assert_string_equal(s.comm, "worker");
	assert_int_equal(s.gone, 1);
	assert_int_equal(s.last_gone, 10);
	assert_false(stackstore_has_exited(&st, 10));
	assert_int_equal(held(&st), 1);
	assert_null(stackstore_stack(&st, 0x1000)); /* only the retired entries used it */
	assert_non_null(stackstore_stack(&st, 0x2000));
	assert_int_equal(st.nnames, 0);
	assert_int_equal(stackstore_stored(&st), 11); /* retired 6 + held 5 */
	stackstore_reset_counts(&st); /* a cut handed out both: stored counts from 0 again */
	assert_int_equal(stackstore_stored(&st), 0);
	add(&st, 20, 20, 0x2000, 4, 0);
	assert_int_equal(stackstore_stored(&st), 4);
	stackstore_release(&st);
}

/* A process whose entries are not ready waits (it is retired at a later call); a retired
 * stack met by the last drain stays until it is not. */
static void test_not_ready_waits(void **state)
{
	struct stackstore st;
	struct seen s = { .not_ready = 10 };
	struct sampler_retire_ops ops = { .ready = ready, .park = park, .gone = gone, .ctx = &s };

	(void)state;
	stackstore_init(&st, true, 0xfffffff0u);
	add(&st, 10, 10, 0x1000, 4, 0);
	stackstore_exit(&st, 10);
	stackstore_drained(&st);
	assert_int_equal(stackstore_retire(&st, &ops, 0, 0), 0);
	assert_true(stackstore_has_exited(&st, 10));
	s.not_ready = 0;
	assert_int_equal(stackstore_retire(&st, &ops, 0, 0), 1);
	assert_int_equal(s.parked_count, 4);
	assert_non_null(stackstore_stack(&st, 0x1000)); /* met by the last drain */
	stackstore_release(&st);
}

/* Retirement in batches: not before batch processes are ready or one has waited long. */
static void test_batches(void **state)
{
	struct stackstore st;
	struct seen s = { 0 };
	struct sampler_retire_ops ops = { .park = park, .gone = gone, .ctx = &s };

	(void)state;
	stackstore_init(&st, true, 0xfffffff0u);
	add(&st, 10, 10, 0x1000, 1, 0);
	add(&st, 20, 20, 0x2000, 1, 0);
	stackstore_exit(&st, 10);
	stackstore_drained(&st);
	assert_int_equal(stackstore_retire(&st, &ops, 2, 2), 0); /* one ready of 2, waited 1 */
	stackstore_exit(&st, 20);
	stackstore_drained(&st);
	assert_int_equal(stackstore_retire(&st, &ops, 2, 2), 2);
	assert_int_equal(s.gone, 2);
	stackstore_release(&st);
}

/* The pids for_each hands out, in its order. */
struct order {
	pid_t pids[4096];
	size_t n;
};

static int note_pid(void *ctx, const struct sampler_entry *e)
{
	struct order *o = ctx;

	if (o->n < sizeof(o->pids) / sizeof(*o->pids))
		o->pids[o->n++] = (pid_t)e->pid;
	return 0;
}

/* for_each hands entries out in the order they were first added, not by hash (a recording's
 * samples, and so its bytes, follow the drains), through the index's growth and after a
 * forget has removed some: the rest keep their order, and each is still found by its key. */
static void test_order_is_insertion(void **state)
{
	static struct order o;
	struct stackstore st;
	struct seen s = { 0 };
	struct sampler_retire_ops ops = { .park = park, .gone = gone, .ctx = &s };
	const pid_t n = 3000;

	(void)state;
	stackstore_init(&st, true, 0xfffffff0u);
	for (pid_t i = 0; i < n; i++) /* descending pids, stacks shared by pairs */
		add(&st, n - i, n - i, 0x1000 + (uint64_t)i / 2, 1, 0);
	stackstore_drained(&st);
	for (pid_t pid = 2; pid <= n; pid += 2)
		stackstore_exit(&st, pid);
	stackstore_drained(&st);
	stackstore_drained(&st);
	assert_int_equal(stackstore_retire(&st, &ops, 0, 0), n / 2);
	o.n = 0;
	stackstore_for_each(&st, note_pid, &o);
	assert_int_equal(o.n, n / 2);
	for (size_t i = 0; i < o.n; i++)
		assert_int_equal(o.pids[i], n - 1 - 2 * (pid_t)i); /* the odd pids, as added */
	add(&st, n - 1, n - 1, 0x1000, 5, 0); /* found again: no new entry */
	assert_int_equal(held(&st), n / 2);
	assert_int_equal(st.nstacks, n / 2); /* every pair kept its odd half's stack */
	stackstore_release(&st);
}

/* Parking one process takes only what select takes and keeps the process and its names;
 * off-CPU time is no sample in the stored statistic. */
static void test_park_process_select(void **state)
{
	struct stackstore st;
	struct seen s = { .only_ip = 0x1000 };
	struct sampler_retire_ops ops = { .park = park, .select = select_ip, .ctx = &s };

	(void)state;
	stackstore_init(&st, true, 0xfffffff0u);
	add(&st, 10, 10, 0x1000, 2, 0);
	add(&st, 10, 10, 0x3000, 7, 0);
	add(&st, 10, 10, 0x3000, 900, OFF_CPU);
	assert_int_equal(stackstore_set_name(&st, 10, "prog", "prog"), 0);
	assert_int_equal(stackstore_park_process(&st, 10, &ops), 1);
	assert_int_equal(s.parked_count, 2);
	assert_int_equal(held(&st), 2);
	assert_int_equal(st.nnames, 1);
	assert_int_equal(stackstore_stored(&st), 2 + 7); /* off-CPU is past uncounted_from */
	stackstore_reset_counts(&st);
	assert_int_equal(held(&st), 0);
	stackstore_release(&st);
}

/* Forgetting many processes (retired, then parked as at exec) leaves every other entry, stack
 * and name findable, whichever forgets skipped refiling an index. */
static void test_forget_keeps_the_rest(void **state)
{
	enum { PROCS = 3000 };
	struct stackstore st;
	struct seen s = { 0 };
	struct sampler_retire_ops ops = { .park = park, .gone = gone, .ctx = &s };
	char name[16];

	(void)state;
	stackstore_init(&st, true, 0xfffffff0u);
	for (pid_t p = 1; p <= PROCS; p++) {
		add(&st, p, p, 0x1000 + 16 * (uint64_t)p, 1, 0);
		snprintf(name, sizeof(name), "t%d", (int)p);
		assert_int_equal(stackstore_set_name(&st, p, name, name), 0);
	}
	for (pid_t p = 1; p <= PROCS; p += 2) /* one half by exit and retirement */
		stackstore_exit(&st, p);
	stackstore_drained(&st);
	stackstore_drained(&st);
	assert_int_equal(stackstore_retire(&st, &ops, 0, 0), PROCS / 2);
	for (pid_t p = 2; p <= PROCS; p += 4) /* a quarter by parking (an exec) */
		assert_int_equal(stackstore_park_process(&st, p, &ops), 1);
	assert_int_equal(held(&st), PROCS / 4);
	assert_int_equal(st.nnames, PROCS / 2);
	for (pid_t p = 1; p <= PROCS; p++) {
		struct stackstore_key k = { .pid = p, .tid = p, .ustack = 0x1000 + 16 * (uint64_t)p };
		bool kept = p % 4 == 0;
		if (p % 2) /* retired: its stack went (not met by the last drain) */
			assert_false(stackstore_has_stack(&st, k.ustack));
		if (kept) {
			assert_true(stackstore_has_stack(&st, k.ustack));
			assert_int_equal(stackstore_add(&st, &k, 1), 0); /* found, not new */
		}
	}
	assert_int_equal(held(&st), PROCS / 4);
	stackstore_release(&st);
}

/* A reset (each interval of a continuous recording) lets go of the stacks only the forgotten
 * entries used: over 50 cuts of 20 new stacks each, the store holds those of the last drain
 * (a count it left undrained may still name them) and the one every cut meets, not all 1,001;
 * two drains that meet nothing later, none. */
static void test_reset_lets_stacks_go(void **state)
{
	struct stackstore st;

	(void)state;
	stackstore_init(&st, true, 0xfffffff0u);
	for (uint64_t cut = 0; cut < 50; cut++) {
		add(&st, 10, 10, 0x100, 1, 0);
		for (uint64_t i = 0; i < 20; i++)
			add(&st, 10, 10, 0x10000 + 16 * (cut * 20 + i), 1, 0);
		stackstore_drained(&st);
		stackstore_reset_counts(&st);
		assert_int_equal(held(&st), 0);
		assert_in_range(st.nstacks, 21, 41);
		assert_non_null(stackstore_stack(&st, 0x100));
	}
	stackstore_drained(&st);
	stackstore_drained(&st);
	stackstore_reset_counts(&st);
	assert_int_equal(st.nstacks, 0);
	stackstore_release(&st);
}

/* A level (-e alloc's inuse_*) outlives a reset with its stack and goes on from its value; a
 * tally goes; a level back at 0 (all freed: -1 as a u64 added to 1) goes too. */
static void test_reset_keeps_levels(void **state)
{
	struct stackstore st;

	(void)state;
	stackstore_init(&st, true, 0xfffffff0u);
	stackstore_set_levels(&st, 7, 8);
	add(&st, 10, 10, 0x100, 3, 0);         /* a tally */
	add(&st, 10, 10, 0x200, 256, 8);       /* a level: 256 bytes live */
	add(&st, 10, 10, 0x300, 1, 7);         /* a level, freed below */
	add(&st, 10, 10, 0x300, (uint64_t)-1, 7);
	stackstore_drained(&st);
	stackstore_drained(&st);
	stackstore_drained(&st);
	stackstore_reset_counts(&st);
	assert_int_equal(held(&st), 1);
	assert_int_equal(st.entries[0].count, 256);
	assert_int_equal(st.entries[0].key.event, 8);
	assert_non_null(stackstore_stack(&st, 0x200));
	assert_null(stackstore_stack(&st, 0x100));
	add(&st, 10, 10, 0x200, 512, 8);       /* the next interval's: the same entry grows */
	assert_int_equal(held(&st), 1);
	assert_int_equal(st.entries[0].count, 768);
	stackstore_release(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forget_keeps_the_rest),
		cmocka_unit_test(test_retire_after_drain),
		cmocka_unit_test(test_not_ready_waits),
		cmocka_unit_test(test_batches),
		cmocka_unit_test(test_park_process_select),
		cmocka_unit_test(test_order_is_insertion),
		cmocka_unit_test(test_reset_lets_stacks_go),
		cmocka_unit_test(test_reset_keeps_levels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
