/* runtime_otel (lib/runtimes/otelthread.c) over a fake sample source: a continuous recording's
 * cuts let go of the contexts no cut asked for (their keys deleted from the walker's otel_ctxs,
 * the epoch bumped, their labels kept one cut more), and an id announced again while its old
 * context is in the table takes the old one out. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <linux/types.h>
#include "../../bpf/firn.h"
#include "../../bpf/otelctx.bpf.h"
#include "runtimes/otelthread.h"
#include "source/sample_source.h"

/* What the runtime asked of the walker's maps. */
struct fake {
	struct sample_source ss;
	unsigned deletes;
	uint8_t last_span; /* span id's last byte of the last key deleted */
	uint64_t epoch;
};

/* sample_source's map_update: records otel_ctxs deletions and otel_epoch's value. */
static int fake_map_update(struct sample_source *s, const char *map, const void *key,
			   const void *value)
{
	struct fake *f = (struct fake *)s;

	if (!strcmp(map, "otel_ctxs") && !value) {
		f->deletes++;
		f->last_span = ((const struct firn_otel_key *)key)->rec[23];
		return 0;
	}
	if (!strcmp(map, "otel_epoch") && value) {
		memcpy(&f->epoch, value, sizeof(f->epoch));
		return 0;
	}
	return -ENOENT;
}

static const struct sample_source_ops fake_ops = { .map_update = fake_map_update };

/* Announces context id of a record whose span id ends in span (no attributes). */
static void announce(struct runtime *rt, uint32_t id, uint8_t span)
{
	struct firn_otel_ctx_event e = { .type = FIRN_EV_ANNOUNCE(FIRN_OTEL_TAG), .pid = 999999999,
					 .id = id };

	e.rec[0] = 1;     /* trace id */
	e.rec[23] = span; /* span id's last byte */
	e.rec[FIRN_OTEL_VALID] = 1;
	assert_int_equal(runtime_otel.on_code(rt, &e, sizeof(e)), 0);
}

/* The span_id label of id ("" when it names none). */
static const char *span_of(struct runtime *rt, uint32_t id)
{
	static char v[32];
	struct resolved_label l[4];
	int n = runtime_otel.labels(rt, 1, id, l, 4);

	v[0] = 0;
	for (int i = 0; i < n; i++)
		if (!strcmp(l[i].key, "span_id"))
			snprintf(v, sizeof(v), "%s", l[i].value);
	return v;
}

/* A context no cut asked for is taken out at the cut, named for one cut more, then forgotten;
 * one asked for at every cut stays; no cut letting none go bumps the epoch. */
static void test_cut(void **state)
{
	struct fake f = { .ss = { &fake_ops } };
	const struct runtime_host h = { .ss = &f.ss };
	struct runtime *rt = runtime_otel.new(&h);

	(void)state;
	assert_non_null(rt);
	announce(rt, 1, 0xa1);
	announce(rt, 2, 0xb2);
	assert_string_equal(span_of(rt, 1), "00000000000000a1");
	runtime_otel.cut(rt); /* both new: announced for this cut */
	assert_int_equal(f.deletes, 0);
	assert_int_equal(f.epoch, 0);
	assert_string_equal(span_of(rt, 1), "00000000000000a1");
	runtime_otel.cut(rt); /* 2 not asked for */
	assert_int_equal(f.deletes, 1);
	assert_int_equal(f.last_span, 0xb2);
	assert_int_equal(f.epoch, 1);
	assert_string_equal(span_of(rt, 2), "00000000000000b2"); /* one cut more */
	assert_string_equal(span_of(rt, 1), "00000000000000a1");
	runtime_otel.cut(rt);
	assert_int_equal(f.deletes, 1); /* 2 was out already; 1 was asked for */
	assert_int_equal(f.epoch, 1);
	assert_string_equal(span_of(rt, 2), "");
	assert_string_equal(span_of(rt, 1), "00000000000000a1");
	runtime_otel.free(rt);
}

/* The walker's ids went round: an id announced again with another record while the old one is
 * in its table takes the old one out (and bumps the epoch); the new one's labels are named. */
static void test_id_again(void **state)
{
	struct fake f = { .ss = { &fake_ops } };
	const struct runtime_host h = { .ss = &f.ss };
	struct runtime *rt = runtime_otel.new(&h);

	(void)state;
	assert_non_null(rt);
	announce(rt, 7, 0xc3);
	announce(rt, 7, 0xc3); /* the same record again: nothing to take out */
	assert_int_equal(f.deletes, 0);
	announce(rt, 7, 0xd4);
	assert_int_equal(f.deletes, 1);
	assert_int_equal(f.last_span, 0xc3);
	assert_int_equal(f.epoch, 1);
	assert_string_equal(span_of(rt, 7), "00000000000000d4");
	runtime_otel.free(rt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_id_again),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
