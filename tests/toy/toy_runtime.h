/* The toy runtime's row: all a new runtime's presentation is. It is compiled only into the tests'
 * copy of the registry (lib/record/runtimes.c with FIRN_TEST_TOY_RUNTIME set: build/tests/firn-toy),
 * never into the shipped one; from its row alone firn-toy's record gets --no-toy, its --help line,
 * its completion and the man-page check's demand (tests/cli/test_toy_event.sh). It declines every
 * recording (new: NULL, errno 0), so it adds no frame and no summary line. Included before the
 * registry (gcc -include), with the stub runtime's line (tests/toy/stub_walker.h: a walker of its
 * own, no --no-stub). */
#ifndef FIRN_TESTS_TOY_RUNTIME_H
#define FIRN_TESTS_TOY_RUNTIME_H

#include <errno.h>
#include <stddef.h>

#include "runtimes/runtime.h"
#include "stub_walker.h"

/* Nothing to do in any recording: declines (NULL, errno 0). */
static struct runtime *toy_runtime_new(const struct runtime_host *h)
{
	(void)h;
	errno = 0;
	return NULL;
}

/* Never called (new declines); the registry needs one. */
static void toy_runtime_free(struct runtime *rt)
{
	(void)rt;
}

static const struct runtime_ops toy_runtime = {
	.name = "toy", .off_help = "no toy frames (the tests' runtime row)", .tag = 15,
	.frames = FRAME_NATIVE, .new = toy_runtime_new, .free = toy_runtime_free,
};

#define FIRN_TEST_TOY_RUNTIME &toy_runtime, &stub_walker_runtime,

#endif
