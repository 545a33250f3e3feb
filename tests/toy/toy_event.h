/* The toy event's row: with bpf/toy.bpf.h's program, all a new event is. It is compiled only into
 * the tests' copies of the event table (lib/record/event_table.c with FIRN_TEST_TOY_EVENT set:
 * build/tests/firn-toy, tests/unit/test_event_table.c), never into the shipped one; `-e toy`
 * records a stack at every fork of a target, its forks counted in the kernel (its statistics:
 * a comment "toy.forks: N" and a summary line). Included before the table (gcc -include). */
#ifndef FIRN_TESTS_TOY_EVENT_H
#define FIRN_TESTS_TOY_EVENT_H

#include <stddef.h>
#include <stdio.h>

#include <linux/types.h>

#include "../../bpf/toy.bpf.h"
#include "record/event_table.h"
#include "record/recorder.h"

/* Its counters, in toy_counts's order. */
struct toy_stats {
	uint64_t forks;
};

static const struct event_stat toy_fields[] = {
	{ "forks", "count", "forks", offsetof(struct toy_stats, forks) },
};
static const struct event_stat_group toy_stats = { "toy.", toy_fields, 1, sizeof(struct toy_stats) };

/* "firn: toy: forks N, H hits": the kernel's count, and the hits the profile holds. */
static size_t toy_summary(const void *stats, const struct event_params *p, char *buf, size_t len)
{
	static const char *const names[] = { "forks", NULL };
	char list[64];
	long long hits = p->prof ? profile_type_total(p->prof, "toy_hits") : 0;

	event_stat_list(&toy_stats, names, stats, p, list, sizeof(list), NULL);
	int n = snprintf(buf, len, "firn: toy: %s, %lld hits\n", list, hits);
	return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

#define FIRN_TEST_TOY_EVENT                                                                     \
	{ .name = "toy", .help = "a stack at every fork", .id = FIRN_EVENT_TOY, .type = "toy_hits", \
	  .unit = "count", .bpf_progs = (const char *const[]){ "on_toy", NULL },                  \
	  .bpf_counters = "toy_counts", .stats = &toy_stats,                                      \
	  .sampler_stats_at = offsetof(struct sampler_stats, counters),                           \
	  .recorder_stats_at = offsetof(struct recorder_stats, counters), .summary = toy_summary },

#endif
