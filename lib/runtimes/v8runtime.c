/* runtime_v8: JavaScript frames as a runtime (lib/runtimes/runtime.h) over lib/runtimes/v8frames.h. Its name "js"
 * is what --no-js turns off. */
#include "runtimes/runtime.h"
#include "base/strput.h"
#include "source/sample_source.h"
#include "runtimes/v8frames.h"
#include "runtimes/runtime_util.h"

#include <linux/types.h>

#include "../../bpf/firn.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The recording's state: the reader of V8 processes and the host it was started with. */
struct v8runtime {
	struct runtime_head head; /* first: runtime_state_new */
	struct v8frames *v8;
};

/* The BPF walker learns a process's V8 (ctx: the host). */
static int host_set(void *ctx, pid_t pid, const struct firn_v8_proc *p)
{
	const struct runtime_host *h = ctx;

	return sample_source_set_proc(h->ss, FIRN_FRAME_KIND_V8, pid, p, p ? sizeof(*p) : 0);
}

/* The walker runs in this recording (it walks inside the native unwinder: nothing to load). */
static void rt_configure(const struct runtime_host *h, struct sampler_opts *so)
{
	(void)h;
	so->walkers |= 1u << FIRN_FRAME_KIND_V8;
}

/* User space's counts (the walker's are added by runtime_stats_fill). */
static void stats_get(const struct runtime *rt, void *out)
{
	v8frames_get_stats(((const struct v8runtime *)rt)->v8, out);
}

#define V8_BPF(i) RUNTIME_BPF(struct v8frames_stats, i)

/* Its counts and the walker's frames by outcome; the JavaScript line, when a process ran a V8:
 * its frames by outcome, functions read, refusals with the reason. */
static const struct runtime_stats_shape stats_shape = {
	RUNTIME_STATS_SHAPE(struct v8frames_stats, FIRN_FRAME_KIND_V8, FIRN_V8_NR, refused),
	.name = "javascript", .get = stats_get, .refused = "refused",
	.line = "%llu V8 frames: %llu JavaScript, %llu typed (entry, exit, stub: native), %llu "
		"unreadable; functions %llu (announcements lost %llu), unreadable %llu; ",
	.counts = { V8_BPF(FIRN_V8_FRAMES), V8_BPF(FIRN_V8_JS), V8_BPF(FIRN_V8_TYPED),
		    V8_BPF(FIRN_V8_BAD_READ), V8_BPF(FIRN_V8_FUNCS), V8_BPF(FIRN_V8_FUNCS_LOST),
		    offsetof(struct v8frames_stats, unreadable) },
};

/* Its state: the host, and the reader of V8 processes that tells the walker through it. */
static struct runtime *rt_new(const struct runtime_host *h)
{
	_Static_assert(offsetof(struct v8runtime, head) == 0, "js: head first");
	struct v8runtime *r = runtime_state_new(sizeof(*r), h, &stats_shape);

	if (!r)
		return NULL;
	if (!(r->v8 = v8frames_new(host_set, (void *)h))) {
		free(r);
		errno = ENOMEM;
		return NULL;
	}
	v8frames_set_maps(r->v8, runtime_host_maps);
	return (struct runtime *)r;
}

static void rt_free(struct runtime *rt)
{
	struct v8runtime *r = (struct v8runtime *)rt;

	if (r)
		v8frames_free(r->v8);
	free(r);
}

static void rt_attach(struct runtime *rt, pid_t pid, bool exec, uint64_t now_ns)
{
	(void)now_ns;
	v8frames_add_process(((struct v8runtime *)rt)->v8, pid, exec);
}

/* A mapping of a sampled process (e NULL: code without a table, nothing to do). */
static void rt_on_mapping(struct runtime *rt, pid_t pid, const struct procmap_entry *e,
			  uint64_t now_ns)
{
	(void)now_ns;
	if (e)
		v8frames_note_mapping(((struct v8runtime *)rt)->v8, pid, e);
}

static int rt_on_code(struct runtime *rt, const void *rec, size_t len)
{
	if (len < sizeof(struct firn_v8_func_event))
		return 0;
	return v8frames_func_event(((struct v8runtime *)rt)->v8, rec);
}

static int rt_resolve(struct runtime *rt, pid_t pid, uint64_t v, struct resolved_frame *out,
		      int max)
{
	return v8frames_resolve(((struct v8runtime *)rt)->v8, pid, v, out, max);
}


/* Its line (runtime_summary_line), and which source named the frames where a perf map exists. */
static size_t rt_summary(const struct runtime *rt, char *buf, size_t len)
{
	struct v8frames_stats vs;
	size_t off = runtime_summary_line(rt, &vs, buf, len);

	if (off && vs.perf_maps)
		strput(buf, len, &off, "; %llu with /tmp/perf-PID.map: JavaScript named by V8's "
		       "frames, not the map (--no-js: by the map)", (unsigned long long)vs.perf_maps);
	if (off)
		strput(buf, len, &off, "\n");
	return off;
}

static void rt_detach(struct runtime *rt, pid_t pid)
{
	v8frames_forget(((struct v8runtime *)rt)->v8, pid);
}

const struct runtime_ops runtime_v8 = {
	.name = "js",
	.off_help = "no JavaScript functions read from V8: its code named by perf maps only",
	.tag = FIRN_FRAME_KIND_V8, .frames = FRAME_JAVASCRIPT,
	.configure = rt_configure, .new = rt_new, .free = rt_free, .attach = rt_attach,
	.on_mapping = rt_on_mapping, .on_code = rt_on_code,
	.resolve = rt_resolve, .stats = runtime_stats, .summary = rt_summary, .detach = rt_detach,
};
