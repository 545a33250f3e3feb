/* firn record: sample CPU stacks (or take a stack at every USDT probe hit, or weigh the stacks
 * threads wait in by the time off the CPU) of a command, of processes or of the whole system
 * with eBPF, symbolize them before the processes vanish, and write a pprof (or folded) profile. */
#include "opt.h"
#include "target.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analyze/nosym.h"
#include "base/clock.h"
#include "proc/cgroup.h"
#include "format/folded.h"
#include "common.h"
#include "continuous.h"
#include "format/input.h"
#include "format/pprof.h"
#include "model/profile.h"
#include "record/recorder.h"
#include "record/runtimes.h"
#include "summary.h"
#include "record/usdt.h"

enum record_format { FORMAT_PPROF, FORMAT_FOLDED };

struct record_opts {
	double duration;        /* seconds, 0 = until the command exits or a signal */
	const char *output;
	struct target t;        /* -a, -p, or the command; events, -F, unwinding (target_opts) */
	bool quiet, no_demangle;
	uint32_t runtimes_off;  /* --no-NAME: bit i, entry i of the runtime registry is off */
	enum record_format format;
	unsigned pprof_flags;   /* what the pprof leaves out (PPROF_*); --addresses, --thread-labels */
	bool cuda;              /* --cuda: GPU kernels of libfirn-cuda.so (cuda_lib) */
	char *cuda_lib;
	bool output_given;      /* -o was on the line */
	struct continuous c;    /* --every, --push...: intervals (cmd/continuous.h) */
	const char *cgroup_args[CGROUP_FILTER_MAX]; /* --cgroup, as given */
	char *cgroups[CGROUP_FILTER_MAX];           /* their directories (resolve_cgroups) */
	int ncgroups;
	bool process_labels;    /* --process-labels (--push too): exe, cgroup, container_id */
};


enum { OPT_FORMAT = 256, OPT_NO_DEMANGLE, OPT_ADDRESSES, OPT_THREAD_LABELS };
enum { OPT_NO_RUNTIME = 512 }; /* + the runtime's index in the registry (runtimes[]) */
#define RUNTIMES_MAX 16        /* the registry's bound (one tag each, 1..15) */

enum { OPT_CUDA = 320 }; /* apart from the list above: other options land there */
enum { OPT_CGROUP = 600, OPT_PROCESS_LABELS };

static int record_option(void *ctx, int id, const char *arg)
{
	struct record_opts *o = ctx;

	switch (id) {
	case 'd':
		return opt_double(&record_cmd, "duration", arg, 0.001, 1e7, &o->duration);
	case 'o':
		o->output = arg;
		o->output_given = true;
		return 0;
	case 'q':
		o->quiet = true;
		return 0;
	case OPT_CUDA:
		o->cuda = true;
		return 0;
	case OPT_CGROUP:
		if (o->ncgroups == CGROUP_FILTER_MAX)
			return usage_error(&record_cmd, "--cgroup given more than %d times", CGROUP_FILTER_MAX);
		o->cgroup_args[o->ncgroups++] = arg;
		return 0;
	case OPT_PROCESS_LABELS:
		o->process_labels = true;
		return 0;
	case OPT_NO_DEMANGLE:
		o->no_demangle = true;
		return 0;
	case OPT_ADDRESSES:
		o->pprof_flags &= ~PPROF_FUNCTION_LINES;
		return 0;
	case OPT_THREAD_LABELS:
		o->pprof_flags &= ~PPROF_NO_THREAD_LABELS;
		return 0;
	case OPT_FORMAT:
		if (!strcmp(arg, "pprof"))
			o->format = FORMAT_PPROF;
		else if (!strcmp(arg, "folded"))
			o->format = FORMAT_FOLDED;
		else
			return usage_error(&record_cmd, "invalid value '%s' for --format (pprof, folded)", arg);
		return 0;
	}
	if (id >= OPT_NO_RUNTIME && id < OPT_NO_RUNTIME + RUNTIMES_MAX) {
		o->runtimes_off |= 1u << (id - OPT_NO_RUNTIME);
		return 0;
	}
	if (id >= CONT_OPT_FIRST && id <= CONT_OPT_LAST)
		return continuous_option(&o->c, &record_cmd, id, arg);
	return target_option(&o->t, &record_cmd, id, arg);
}

/* State of one recording. */
struct recording {
	struct record_opts *o;
	struct recorder *rec;
	struct profile *prof;  /* recorder_finish's, owned by rec */
	char *spill_dir;       /* the output's folder (parked samples); NULL: $TMPDIR (stdout, devices) */
	size_t max_entries;    /* FIRN_MAX_ENTRIES (0: the recorder's default) */
	uint32_t stack_entries; /* FIRN_STACK_MAP_ENTRIES (0: the sampler's default) */
	/* the runtimes the options turn off and on, by their registry names (setup's) */
	const char *runtimes_off[RUNTIMES_MAX], *runtimes_on[1];
};

/* Writes buf to stdout for "-", else with file_replace_atomic as w says (a device or FIFO is
 * written through). */
static int emit(const char *out, const void *buf, size_t len, struct file_write *w)
{
	if (strcmp(out, "-"))
		return file_replace_atomic(out, buf, len, w);
	if (fwrite(buf, 1, len, stdout) != len || fflush(stdout))
		return -errno;
	return 0;
}

/* Encodes prof as gzipped pprof or folded text into *buf (malloc'd), as o says (arg). */
static int encode_as(void *arg, const struct profile *prof, void **buf, size_t *len)
{
	const struct record_opts *o = arg;

	if (o->format == FORMAT_PPROF)
		return pprof_encode_flags(prof, true, o->pprof_flags, buf, len);
	char *text = NULL;
	FILE *f = open_memstream(&text, len);
	if (!f)
		return -errno;
	struct folded_opts fo = { .comm_first = true, .comm_header = true,
				  .annotate_inline = true, .value_index = 0 };
	int err = folded_write((struct profile *)prof, f, &fo);
	if (fclose(f) && !err)
		err = -EIO;
	*buf = text;
	return err;
}

/* Encodes the recording's profile (encode_as). */
static int encode_profile(struct recording *r, void **buf, size_t *len)
{
	return encode_as(r->o, r->prof, buf, len);
}

/* How the profile is written: mode 0600 (it holds the kernel's addresses), the old file kept
 * as FILE.old, and under sudo given to the invoking user before it appears. */
static struct file_write profile_write_opts(void)
{
	struct file_write w = { .mode = 0600, .keep_old = true };
	const char *u = getenv("SUDO_UID"), *g = getenv("SUDO_GID");

	if (getuid() == 0 && u && g) {
		w.chown = true;
		w.uid = strtoul(u, NULL, 10);
		w.gid = strtoul(g, NULL, 10);
	}
	return w;
}

/* The output failed at the end (full disk, FILE.old a directory): rather than lose the
 * recording, saves it as a new file in $TMPDIR (default /tmp) and says where; returns 1. */
static int save_elsewhere(struct recording *r, const void *buf, size_t len, int err,
			  const struct file_write *w, char **saved)
{
	const char *out = r->o->output, *dir = getenv("TMPDIR");
	const char *ext = r->o->format == FORMAT_PPROF ? ".pb.gz" : ".folded";
	char *old = NULL, *tmpl = NULL;

	if (w->old_failed && asprintf(&old, "%s.old", out) < 0)
		old = NULL;
	const char *verb = old ? "replace" : "write";
	const char *name = old ? old : strcmp(out, "-") ? out : "<stdout>";
	const char *why = old ? strerror(-err) : output_strerror(out, err);
	if (!dir || !*dir)
		dir = "/tmp";
	int serr = asprintf(&tmpl, "%s/firn-XXXXXX%s", dir, ext) < 0 ? -ENOMEM : 0;
	if (!serr)
		serr = file_write_new(tmpl, strlen(ext), buf, len, w);
	if (serr)
		error("cannot %s '%s': %s; cannot save the profile in '%s' either: %s", verb, name,
		      why, dir, strerror(-serr));
	else
		error("cannot %s '%s': %s; the profile was saved as '%s'", verb, name, why, tmpl);
	free(old);
	if (serr)
		free(tmpl);
	else
		*saved = tmpl;
	return 1;
}

/* Output: encode the profile, write it, or save it elsewhere when that fails (*saved: where,
 * malloc'd; the error is printed, 1 returned). */
static int write_profile(struct recording *r, size_t *bytes, char **saved)
{
	struct file_write w = profile_write_opts();
	void *buf = NULL;
	size_t len = 0;
	int err = encode_profile(r, &buf, &len);

	if (err) {
		free(buf);
		return error("cannot encode the profile: %s", strerror(-err));
	}
	if ((err = emit(r->o->output, buf, len, &w)))
		err = save_elsewhere(r, buf, len, err, &w, saved);
	free(buf);
	*bytes = len;
	return err;
}

/* After sampling: symbolize into a profile, write it, print the summary. */
static int finish_recording(struct recording *r)
{
	struct recorder_stats rs;
	size_t bytes = 0;
	char *saved = NULL;

	struct continuous *c = &r->o->c;
	bool whole = !continuous_on(c) || c->whole;
	const char *out = whole ? r->o->output : c->pattern ? c->pattern : c->push_shown;

	if (!(r->prof = recorder_finish(r->rec)))
		return error("%s", recorder_error(r->rec));
	recorder_stats(r->rec, &rs);
	int err = continuous_on(c) ? continuous_finish(c, r->prof) : 0;
	bool pushed = !whole && !c->pattern; /* --push without -o: no file, what was sent */
	uint64_t pushed_intervals = 0, pushed_bytes = 0;
	if (!err && whole && nosym_note_packages(r->prof, profile_value_index(r->prof), NULL, 3))
		err = error("cannot note the debug packages: %s", strerror(ENOMEM));
	if (!err && whole)
		err = write_profile(r, &bytes, &saved);
	else if (pushed) {
		continuous_pushed(c, &pushed_intervals, &pushed_bytes);
		bytes = (size_t)pushed_bytes;
	} else if (!whole)
		bytes = c->bytes;
	if (!r->o->quiet && (!err || saved))
		summary_print(r->rec, r->prof, &rs, &(struct summary_opts){
			.events = r->o->t.events, .nevents = r->o->t.nevents,
			.off_cpu_min_us = r->o->t.off_cpu_min_us, .off_cpu_rate = r->o->t.off_cpu_rate,
			.off_cpu_runnable = r->o->t.off_cpu_runnable,
			.unwind_dwarf = r->o->t.unwind != RECORDER_UNWIND_FP, .gpu = r->o->cuda,
			.processes = whole ? 0 : c->npids, .processes_given = !whole,
			.pushed = pushed, .pushed_intervals = pushed_intervals,
		}, bytes, saved ? saved : out);
	if (!r->o->quiet && r->o->ncgroups)
		fprintf(stderr, "firn: cgroups: %d given, %llu samples and events of processes outside "
			"them left out in the kernel\n", r->o->ncgroups,
			(unsigned long long)rs.cgroup_filtered);
	if (!r->o->quiet)
		continuous_summary(c);
	if (continuous_on(c) && continuous_lost_error(c)) /* after the summary, even with -q */
		err = 1;
	free(saved);
	return err;
}

#define RECORD_USAGE                       \
	"[OPTIONS] -- COMMAND [ARGS...]\n" \
	"[OPTIONS] -p PID[,PID...]\n"      \
	"[OPTIONS] -a"

static const struct opt record_opts[] = {
	{ "duration", 'd', "SECONDS", "stop after this long (default: when the command exits, or Ctrl-C)", 'd' },
	{ "output", 'o', "FILE", "write the profile here (default firn.pb.gz; - for stdout)", 'o' },
	{ "format", 0, "FORMAT", "output format: pprof (default) or folded", OPT_FORMAT },
	{ "no-demangle", 0, NULL, "show C++ and Rust names as the binary has them", OPT_NO_DEMANGLE },
	OPT_END,
};

/* --no-NAME of each runtime whose registry row has an off_help (record_init's), between the
 * rows above and below: a new runtime's option, help line and completion come from its row. */
static struct opt runtime_opts[RUNTIMES_MAX + 1];
static char runtime_opt_names[RUNTIMES_MAX][40];

static const struct opt record_opts_more[] = {
	{ "addresses", 0, NULL, "one pprof location per sampled address (for report --annotate), not per source line", OPT_ADDRESSES },
	{ "thread-labels", 0, NULL, "label pprof samples with tid and thread (thread name) too", OPT_THREAD_LABELS },
	{ "cgroup", 0, "PATH", "only the processes in this cgroup v2 or below it (a path, a systemd unit, a container's scope or id; repeatable)", OPT_CGROUP },
	{ "process-labels", 0, NULL, "label samples with exe, cgroup and container_id too (on with --push)", OPT_PROCESS_LABELS },
	{ "cuda", 0, NULL, "GPU kernels: their time (gpu_time) and launches (gpu_launches) under the CPU stacks that launched them, through libfirn-cuda.so", OPT_CUDA },
	{ "quiet", 'q', NULL, "do not print the summary line", 'q' },
	OPT_END,
};

/* Makes runtime_opts from the registry (struct cmd's init): --no-NAME, its help, its id. */
static void record_init(void)
{
	size_t n = 0;

	for (size_t i = 0; runtimes[i] && i < RUNTIMES_MAX; i++) {
		if (!runtimes[i]->off_help)
			continue;
		char *name = runtime_opt_names[n];
		snprintf(name, sizeof(runtime_opt_names[n]), "no-%s", runtimes[i]->name);
		runtime_opts[n++] = (struct opt){ name, 0, NULL, runtimes[i]->off_help,
						  OPT_NO_RUNTIME + (int)i };
	}
}

#if defined(__x86_64__)
#define CUDA_LIB_MACHINE EM_X86_64
#define CUDA_LIB_ARCH "x86-64"
#elif defined(__aarch64__)
#define CUDA_LIB_MACHINE EM_AARCH64
#define CUDA_LIB_ARCH "aarch64"
#endif

/* Whether the file open on fd is a regular file holding a 64-bit ELF shared object of firn's
 * architecture: NULL, or what it is not (for the message). */
static const char *not_a_library(int fd)
{
	struct stat st;
	Elf64_Ehdr h;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return "not a regular file";
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || memcmp(h.e_ident, ELFMAG, SELFMAG))
		return "not an ELF file";
	if (h.e_ident[EI_CLASS] != ELFCLASS64 || h.e_type != ET_DYN)
		return "not a 64-bit ELF shared object";
#ifdef CUDA_LIB_MACHINE
	if (h.e_machine != CUDA_LIB_MACHINE)
		return "not an ELF shared object for " CUDA_LIB_ARCH;
#endif
	return NULL;
}

/* The library found for --cuda must be one (a link to /etc/shadow, /dev/zero or junk is
 * named as such) and readable by the user the command runs as (the invoking user under sudo),
 * else the driver would load nothing without a word. Prints the error and returns 1. */
static int check_cuda_lib(const struct record_opts *o)
{
	const char *path = o->cuda_lib, *why;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), err;

	if (fd < 0)
		return error("--cuda: cannot open '%s': %s", path, strerror(errno));
	why = not_a_library(fd);
	close(fd);
	if (why)
		return error("--cuda: '%s' is %s", path, why);
	if (!(err = target_command_access(&o->t, path, R_OK)))
		return 0;
	if (getuid() == 0 && getenv("SUDO_UID") && !o->t.as_root)
		return error("--cuda: the invoking user (uid %s), as whom the command runs, cannot read "
			     "'%s': %s", getenv("SUDO_UID"), path, strerror(-err));
	return error("--cuda: cannot read '%s': %s", path, strerror(-err));
}

/* A CUDA_INJECTION64_PATH the user set is not replaced: 0 when unset, empty or the same file
 * as the library; else prints why and returns 2. */
static int check_injection_env(const char *lib)
{
	const char *v = getenv("CUDA_INJECTION64_PATH");
	struct stat a, b;

	if (!v || !*v || (!stat(v, &a) && !stat(lib, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino))
		return 0;
	error("--cuda: CUDA_INJECTION64_PATH is set already ('%s'); unset it, or set it to '%s'", v, lib);
	return 2;
}

/* --cuda: finds and checks the library and names it in CUDA_INJECTION64_PATH, which the command
 * inherits (the CUDA driver loads it at cuInit); -p and -a processes must have been started
 * with it. */
static int cuda_setup(struct record_opts *o, bool command)
{
	int rc;

	if (!(o->cuda_lib = target_find_lib("libfirn-cuda.so")))
		return error("--cuda: no libfirn-cuda.so next to firn or in ../lib/firn/ (firn was built "
			     "without the CUDA toolkit)");
	if ((rc = check_cuda_lib(o)) || (command && (rc = check_injection_env(o->cuda_lib))))
		return rc;
	if (setenv("CUDA_INJECTION64_PATH", o->cuda_lib, 1))
		return error("cannot set CUDA_INJECTION64_PATH: %s", strerror(errno));
	return 0;
}

/* Where parked samples go: the output's folder, but a device or FIFO's folder (/dev) is no
 * place for them, nor is stdout's: $TMPDIR is (NULL). */
static int parked_dir_of(struct recording *r)
{
	if (!strcmp(r->o->output, "-") || file_write_kind(r->o->output) != FILE_WRITE_REPLACE ||
	    (continuous_on(&r->o->c) && !r->o->c.whole))
		return 0;
	char *copy = strdup(r->o->output);
	r->spill_dir = copy ? strdup(dirname(copy)) : NULL;
	free(copy);
	return r->spill_dir ? 0 : error("out of memory");
}

/* The runtime names o turns off (--no-NAME: the registry's names) and on (--cuda: the GPU
 * frames) into r's lists, which the recorder borrows; returns how many are off, *non how many on. */
static int runtime_names(struct recording *r, const struct record_opts *o, int *non)
{
	int noff = 0;

	for (size_t i = 0; runtimes[i] && i < RUNTIMES_MAX; i++)
		if (o->runtimes_off >> i & 1)
			r->runtimes_off[noff++] = runtimes[i]->name;
	*non = 0;
	if (o->cuda_lib)
		r->runtimes_on[(*non)++] = "gpu";
	return noff;
}

/* The recorder: the targets, events and sampling the options ask for. */
static int setup(struct recording *r, int argc, char **argv)
{
	const struct record_opts *o = r->o;
	int non, noff = runtime_names(r, o, &non);
	struct recorder_opts ro = {
		.demangle = !o->no_demangle,
		.runtimes_off = r->runtimes_off, .nruntimes_off = noff,
		.runtimes_on = r->runtimes_on, .nruntimes_on = non,
		.spill_dir = r->spill_dir, .max_entries = r->max_entries,
		.stack_entries = r->stack_entries, .argc = argc, .argv = argv,
		.cuda_lib = o->cuda_lib,
		.cgroups = (const char *const *)o->cgroups, .ncgroups = o->ncgroups,
		.process_labels = o->process_labels || o->c.push_url,
		.drain_max_ns = continuous_on(&o->c) ? CONTINUOUS_DRAIN_MAX_NS : 0,
		.renew_tables = continuous_on(&o->c) && !o->c.whole,
		.map_memory = firn_verbose && !o->quiet, /* (the summary's line) */
	};
	char why[1024];

	target_recorder_opts(&o->t, &ro);
	if (!(r->rec = recorder_new(&ro, why, sizeof(why))))
		return error("%s", why);
	return 0;
}

/* The sampling loop: until the command exits, the duration passes or a signal arrives. */
/* Sleeps until process events come, the command ends or ms pass (what ends first), then lets
 * the recorder handle the events: a command that exits is noticed at once, not at a timeout. */
static int wait_events(struct recording *r, int ms)
{
	int fd = target_end_fd(&r->o->t);
	struct pollfd p[2] = { { recorder_event_fd(r->rec), POLLIN, 0 }, { fd, POLLIN, 0 } };

	poll(p, fd >= 0 ? 2 : 1, ms); /* EINTR (a signal) just ends the wait */
	return recorder_poll(r->rec, 0);
}

/* The wait before the next look: until the recorder's next timed work (recorder_wait_ms), or
 * less when -d ends sooner (start_ns: the recording's start on the monotonic clock). */
static int wait_ms(const struct recording *r, uint64_t limit, uint64_t start_ns)
{
	uint64_t now = mono_ns(), left = limit && start_ns + limit > now ? start_ns + limit - now : 0;
	int idle = recorder_wait_ms(r->rec, INT_MAX);

	if (!limit || left >= (uint64_t)idle * 1000000ULL)
		return idle;
	return (int)((left + 999999) / 1000000);
}

static int sample_loop(struct recording *r)
{
	uint64_t limit = r->o->duration > 0 ? (uint64_t)(r->o->duration * 1e9) : 0;
	struct recorder_stats rs;

	char note[96];

	recorder_stats(r->rec, &rs);
	/* -d is measured on the monotonic clock (a wall clock set back would stretch it, set
	 * forward cut it short), from the recorder's start: how long ago that was, once */
	uint64_t wall = wall_ns(), start = mono_ns() - (wall > rs.start_ns ? wall - rs.start_ns : 0);
	for (;;) {
		int ms = wait_ms(r, limit, start);
		if (wait_events(r, continuous_wait_ms(&r->o->c, wall_ns(), ms)))
			return error("%s", recorder_error(r->rec));
		if (continuous_on(&r->o->c) && continuous_tick(&r->o->c, r->rec, wall_ns()))
			return 1;
		if (target_ended(&r->o->t, note, sizeof(note)) || target_stop_signal())
			return 0;
		if (limit && mono_ns() - start >= limit)
			return 0;
	}
}

/* Whether replacing the file at path (which exists, st) in the folder dir would be refused: in
 * a sticky folder (/tmp) only the file's or the folder's owner may, and a process without
 * CAP_FOWNER is not exempt (root is). */
static bool sticky_refuses(const char *dir, const struct stat *st)
{
	struct stat dst;
	uid_t me = geteuid();

	return me != 0 && !stat(dir, &dst) && (dst.st_mode & S_ISVTX) && st->st_uid != me &&
	       dst.st_uid != me;
}

/* A count from the environment variable name into *n (0 when unset or empty: the recorder's
 * default); prints the error and returns 1 when it is not a number from 1 to max (what: the
 * words for it in that message). */
static int env_count(const char *name, unsigned long long max, const char *what,
		     unsigned long long *n)
{
	const char *v = getenv(name);
	char *end;
	long x;

	*n = 0;
	if (!v || !*v)
		return 0;
	/* strictly decimal digits (opt_strtol): strtoull alone takes " 5", "+5" and wraps "-1" */
	if (opt_strtol(v, &end, &x) || *end || x < 1 || (unsigned long long)x > max)
		return error("invalid %s '%s' (%s)", name, v, what);
	*n = (unsigned long long)x;
	return 0;
}

/* FIRN_MAX_ENTRIES and FIRN_STACK_MAP_ENTRIES into the recording (0: the defaults). */
static int env_limits(struct recording *r)
{
	unsigned long long entries, stacks;

	if (env_count("FIRN_MAX_ENTRIES", SIZE_MAX / 64, "a number of entries, 1 or more", &entries) ||
	    env_count("FIRN_STACK_MAP_ENTRIES", 1u << 24, "a number of stacks, 1 to 16777216", &stacks))
		return 1;
	r->max_entries = entries;
	r->stack_entries = stacks;
	return 0;
}

/* Whether FILE.old, where the file at path is kept at the end, could not be replaced then:
 * a directory, or another user's file in a sticky folder dir. Prints the error (1) or 0. */
static int check_old(const char *path, const char *dir)
{
	struct stat st;
	char *old = NULL;
	int err = 0;

	if (asprintf(&old, "%s.old", path) < 0)
		return error("out of memory");
	if (!lstat(old, &st) && S_ISDIR(st.st_mode))
		err = EISDIR;
	else if (!lstat(old, &st) && sticky_refuses(dir, &st))
		err = EPERM;
	if (err)
		error("cannot replace '%s': %s", old, strerror(err));
	free(old);
	return err ? 1 : 0;
}

/* Fails before recording when the output cannot be written (a directory, a block device or
 * socket; a folder that is missing or not writable; another user's file in a sticky folder;
 * a FILE.old that cannot be replaced), rather than losing the recording at the end. A device
 * or FIFO (also behind a trusted link) is written through at the end: nothing to check. */
static int check_output(const char *path)
{
	struct stat st;
	int err = 0, kind = strcmp(path, "-") ? file_write_kind(path) : FILE_WRITE_THROUGH;

	if (kind < 0)
		return error("cannot write '%s': %s", path, output_strerror(path, kind));
	if (kind != FILE_WRITE_REPLACE)
		return 0;
	bool exists = !lstat(path, &st);
	char *copy = strdup(path);
	if (!copy)
		return error("out of memory");
	const char *dir = dirname(copy);
	if (access(dir, W_OK | X_OK))
		err = errno;
	else if (exists && sticky_refuses(dir, &st))
		err = EPERM;
	if (err)
		error("cannot write '%s': %s", path, strerror(err));
	else if (exists)
		err = check_old(path, dir);
	free(copy);
	return err ? 1 : 0;
}

/* Why cgroup_resolve refused name (err), in a line after "--cgroup: "; 2 for what is no
 * cgroup v2 (a usage error), 1 for one that is not there. */
static int cgroup_error(const char *name, int err, const char *mount, const char *found)
{
	if (err == -ENOENT)
		return error("--cgroup: no cgroup '%s' (not under '%s', nor a unit or container of that "
			     "name)", name, mount);
	if (err == -EMEDIUMTYPE)
		error("--cgroup: '%s' is a cgroup v1 directory: firn filters by cgroup v2, mounted at "
		      "'%s'", name, mount);
	else if (err == -ENOTDIR)
		error("--cgroup: '%s' is not a cgroup v2 directory (cgroup v2 is mounted at '%s')",
		      name, mount);
	else if (err == -ENOTUNIQ)
		error("--cgroup: '%s' names several cgroups ('%s' and others): give its path", name,
		      found);
	else
		return error("--cgroup: cannot resolve '%s': %s", name, strerror(-err));
	return 2;
}

/* --cgroup: each name resolved to its cgroup v2 directory, said on stderr when a search found
 * it (unless quiet). Prints the error and returns 2 or 1. */
static int resolve_cgroups(struct record_opts *o)
{
	char mount[PATH_MAX], dir[PATH_MAX];
	int err = o->ncgroups ? cgroup_v2_mount(mount, sizeof(mount)) : 0;

	if (err == -ENOENT)
		return error("--cgroup: cgroup v2 is not mounted (this system has cgroup v1 only)");
	if (err)
		return error("--cgroup: cannot find the cgroup v2 mount: %s", strerror(-err));
	for (int i = 0; i < o->ncgroups; i++) {
		const char *name = o->cgroup_args[i];
		*dir = 0;
		if ((err = cgroup_resolve(mount, name, dir, sizeof(dir))))
			return cgroup_error(name, err, mount, dir);
		if (!(o->cgroups[i] = strdup(dir)))
			return error("out of memory");
		size_t m = strlen(mount);
		bool direct = !strncmp(dir, mount, m) && dir[m] == '/' && !strcmp(dir + m + 1, name);
		if (!o->quiet && !strchr(name, '/') && !direct) /* found by a search */
			fprintf(stderr, "firn: --cgroup %s: '%s'\n", name, dir);
	}
	return 0;
}

static int cmd_record(int argc, char **argv)
{
	struct record_opts o = { .output = "firn.pb.gz",
				 .pprof_flags = PPROF_FUNCTION_LINES | PPROF_NO_THREAD_LABELS |
						PPROF_NO_SYSTEM_NAMES,
				 .t = TARGET_INIT };
	struct recording r = { .o = &o };

	continuous_init(&o.c);
	int argi, rc;

	rc = opt_parse(&record_cmd, argc, argv, true, record_option, &o, &argi);
	if (rc) {
		rc = rc < 0 ? 0 : rc;
		goto out;
	}
	o.t.stdout_to_stderr = !strcmp(o.output, "-"); /* the command's output is no profile */
	/* -p: pushed profiles are named after the (first) process, as after a command */
	char comm[32] = "", *comm_argv[] = { comm, NULL };
	if (argi >= argc && o.t.npids > 0)
		target_comm(o.t.pids[0], comm, sizeof(comm));
	o.c.single = argi < argc || o.t.npids == 1; /* its service: the process context's (issue 50) */
	if ((rc = continuous_check(&o.c, &record_cmd, o.output, o.output_given,
				   *comm ? comm_argv : argv + argi, *comm ? 1 : argc - argi)))
		goto out;
	bool whole = !continuous_on(&o.c) || o.c.whole;
	o.c.encode = encode_as;
	o.c.encode_arg = &o;
	o.c.pprof_flags = o.pprof_flags;
	o.c.stop_count = target_stop_count;
	o.c.fw = profile_write_opts();
	if ((rc = target_check_off_cpu(&o.t, &record_cmd)) || (rc = target_check(&o.t, &record_cmd, argc - argi)) ||
	    (rc = resolve_cgroups(&o)) || (rc = target_check_privileges(&record_cmd)) || (whole && (rc = check_output(o.output))) ||
	    (rc = env_limits(&r)) || (rc = target_resolve_usdt(&o.t, argi < argc ? argv[argi] : NULL, o.quiet)))
		goto out;
	if (o.cuda && (rc = cuda_setup(&o, argi < argc)))
		goto out;
	if ((rc = target_setup_alloc(&o.t, argi < argc)))
		goto out;
	target_check_freq(&o.t);
	target_install_signals();
	target_raise_fd_limit(&o.t);
	if ((rc = parked_dir_of(&r)) || (rc = setup(&r, argc - argi, argv + argi)) ||
	    (rc = target_start_recording(&o.t, r.rec, argi < argc ? argv + argi : NULL)))
		goto out;
	if (continuous_on(&o.c)) {
		struct recorder_stats rs;
		recorder_stats(r.rec, &rs);
		if ((rc = continuous_start(&o.c, o.t.freq, rs.start_ns)))
			goto out;
	}
	if ((rc = sample_loop(&r)))
		goto out;
	o.c.stops_at_end = target_stop_count(); /* one more cuts the push's last wait short */
	recorder_stop(r.rec);
	target_end_command(&o.t);
	rc = finish_recording(&r);
	if (!rc)
		rc = target_command_status(&o.t);
out:
	target_release(&o.t);
	recorder_free(r.rec);
	free(r.spill_dir);
	free(o.cuda_lib);
	for (int i = 0; i < o.ncgroups; i++)
		free(o.cgroups[i]);
	continuous_release(&o.c);
	return rc;
}

const struct cmd record_cmd = {
	.name = "record",
	.fn = cmd_record,
	.summary = "sample CPU stacks (or stacks at USDT probes, or where threads wait) with eBPF and write a profile",
	.usage = RECORD_USAGE,
	.opts = { target_opts, record_opts, runtime_opts, record_opts_more, continuous_opts },
	.init = record_init,
};
