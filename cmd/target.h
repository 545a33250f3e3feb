/* What record and top profile: the whole system (-a), processes (-p PID,...) or a command, forked
 * and held before exec until sampling has started (so its first instructions are sampled), run
 * as the invoking user under sudo; and how it is sampled (events, frequency, unwinding): the
 * option group both commands' tables hold. Also the privilege check and the stop signals they
 * share. */
#ifndef FIRN_TARGET_H
#define FIRN_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "opt.h"
#include "record/recorder.h"

struct target {
	bool all;            /* -a */
	bool as_root;        /* --as-root: do not drop to the sudo user for the command */
	bool quiet_command;  /* the command's stdin, stdout and stderr go to /dev/null (a TUI owns
			      * the terminal) */
	bool stdout_to_stderr; /* the command's stdout goes to firn's stderr (the profile is
				* written to stdout) */
	pid_t *pids;         /* -p, owned */
	int npids;
	size_t cap_pids;

	/* the command, once started */
	pid_t child;         /* 0 when none */
	int child_status;    /* waitpid status once child_done */
	bool child_done;
	int go_fd, err_fd;   /* held: write to go_fd to exec; exec errors come back on err_fd */
	int end_fd;          /* the child's pidfd: readable once it exits (-1: none) */
	int tty_fd;          /* the terminal handed to the command's process group (-1: none) */
	struct rlimit nofile; /* the open-file limit firn started with (the command gets it) */
	bool nofile_raised;

	/* how it is sampled (target_opts) */
	const char **events; /* -e values in order ("cpu-clock", "usdt:..."), owned array; none:
			      * cpu-clock */
	int nevents;
	size_t cap_events;
	char **resolved;     /* owned: the usdt events whose program name target_resolve_usdt
			      * replaced by its path (nevents entries, NULL where none) */
	unsigned freq;       /* -F */
	const char *call_graph; /* --call-graph, as given */
	enum recorder_unwind unwind;
	long unwind_memory_mb;
	bool no_kernel;      /* --no-kernel */
	long off_cpu_min_us; /* --off-cpu-min: shorter waits are not added (-1: unset) */
	long off_cpu_rate;   /* --off-cpu-rate: 1 wait in this many is sampled (0: unset) */
	bool off_cpu_runnable; /* --off-cpu-runnable: preempted switch-outs are waits too */
	long alloc_rate;     /* --alloc-rate: -e alloc's mean bytes between samples */
	long alloc_live;     /* --alloc-live: sampled allocations followed at a time (0: default) */
	char *alloc_lib;     /* libfirn-alloc.so with -e alloc (target_setup_alloc), owned */
	enum recorder_alloc_mode alloc_mode; /* --alloc-mode */
};

/* A target with the defaults of the options (cpu-clock at 99 Hz, call graph auto, 32 MB of
 * unwind tables, kernel stacks), no command. */
#define TARGET_INIT                                                                         \
	{ .go_fd = -1, .err_fd = -1, .end_fd = -1, .tty_fd = -1, .freq = 99, .call_graph = "auto",                       \
	  .unwind = RECORDER_UNWIND_AUTO, .unwind_memory_mb = 32, .off_cpu_min_us = -1,          \
	  .alloc_rate = 524288 }

/* The options record and top share, as one group of both commands' tables (so --help,
 * completions and the man page checks come from one place): -a, -p, -e, -F, --call-graph,
 * --unwind-memory, --no-kernel, --as-root, --off-cpu-min, --off-cpu-rate, --off-cpu-runnable,
 * --alloc-rate, --alloc-live, --alloc-mode. A command's own options use other short names and
 * ids below TARGET_OPT_FIRST. */
#define TARGET_OPT_FIRST 0x1000
extern const struct opt target_opts[];
/* Handles option id of target_opts for cmd into t: 0, or prints a usage error (2) or "out of
 * memory" (1); 2 for an id that is not one of target_opts. */
int target_option(struct target *t, const struct cmd *cmd, int id, const char *arg);
/* The recorder options the target's options ask for (targets, events, sampling); the rest of
 * ro is left as it was. Borrows t's arrays. */
void target_recorder_opts(const struct target *t, struct recorder_opts *ro);
/* Starts the command argv (if any) held, adds it to rec, starts rec, and lets the command exec:
 * 0, or prints the error and returns 1 (126 or 127 when the command cannot be run). */
int target_start_recording(struct target *t, struct recorder *rec, char **argv);

/* firn's library name (libfirn-cuda.so, libfirn-alloc.so) next to the firn binary (the build
 * tree), else where install puts it (PREFIX/lib/firn/ for PREFIX/bin/firn); a malloc'ed path,
 * NULL when neither exists. */
char *target_find_lib(const char *name);

/* -e alloc: finds libfirn-alloc.so (t->alloc_lib) and, for a command, preloads it (before what
 * LD_PRELOAD names already) with --alloc-rate in FIRN_ALLOC_RATE; -p and -a processes started
 * with it use its probes, others (and all with --alloc-mode uprobe) uprobes: the library is
 * not needed then. 0 (also without -e alloc), or prints the error and returns 1. */
int target_setup_alloc(struct target *t, bool command);

/* The --off-cpu-* options ask for -e off-cpu: 0, or prints "--off-cpu-min needs -e off-cpu"
 * and returns 2. */
int target_check_off_cpu(const struct target *t, const struct cmd *cmd);
/* Exactly one of -a, -p and a command (nargs operands) must be given, and every pid must exist
 * and not be a zombie: 0, or prints the error and returns 2 (usage) or 1 (no such process,
 * "process N has exited"). */
int target_check(const struct target *t, const struct cmd *cmd, int nargs);
/* Replaces the program name of each "usdt:NAME:..." event (no '/', no -p) by the file the
 * command line would run (usdt_resolve_program: the command itself, else PATH), saying on stderr
 * which file (unless quiet) and warning when a script on PATH comes first; a name no program has
 * is left to the recorder (a library). cmd: the command's argv[0] or NULL. 0, or 1 (printed). */
int target_resolve_usdt(struct target *t, const char *cmd, bool quiet);
#define TARGET_FREQ_COSTLY 10000 /* -F above this warns of what sampling costs the target */

/* When cpu-clock is sampled: lowers t->freq (-F) to the kernel's perf_event_max_sample_rate
 * with a warning, as perf record does (perf_event_open refuses a higher rate), and warns once
 * when it stays above TARGET_FREQ_COSTLY. */
void target_check_freq(struct target *t);
/* 0 when the process may load BPF programs and open perf events (root, or CAP_BPF and
 * CAP_PERFMON); otherwise prints "NAME needs root, or CAP_..." and returns 1. */
int target_check_privileges(const struct cmd *cmd);

/* SIGINT, SIGTERM and SIGHUP set the stop signal (handlers without SA_RESTART, so blocking calls
 * return EINTR); SIGPIPE is ignored. */
void target_install_signals(void);
/* The first stop signal received, 0 when none. */
int target_stop_signal(void);
/* How many stop signals were received. */
int target_stop_count(void);
/* Raises firn's soft limit on open files to the hard one: it opens the files of every process
 * it profiles, and a low soft limit (ulimit -Sn) would cost their symbols. The command started
 * afterwards gets the old limit back. */
void target_raise_fd_limit(struct target *t);

/* Whether the command's user (the invoking user under sudo, unless --as-root; else firn's)
 * may access path with mode (access(2)'s R_OK...): 0 or -errno. */
int target_command_access(const struct target *t, const char *path, int mode);
/* Forks argv held before exec (t->child set), in a process group of its own (its id is
 * t->child); firn becomes the subreaper of its tree. The command gets SIGTERM should firn die
 * (PR_SET_PDEATHSIG). 0 or -errno. */
int target_start_command(struct target *t, char **argv);
/* Lets the held command exec, its group given the terminal first when firn is in the
 * foreground of the one on its stdin (taken back when the command ends or stops; firn then
 * stops with it); 0, or the exec error (errno) once the child has been reaped. */
int target_release_command(struct target *t);
/* A descriptor that becomes readable when the command exits (its pidfd), to poll(2) beside the
 * recorder's so that its end is noticed at once; -1 without a command or without pidfd_open
 * (Linux < 5.3: the end is noticed at the next timeout). Owned by t. */
int target_end_fd(const struct target *t);
/* Notes whether the command has exited (flags: WNOHANG or 0), reaping the orphans of its tree
 * too; with the terminal handed over, a stopped command stops firn (see
 * target_release_command). */
void target_reap(struct target *t, int flags);
/* Ends the command and what still runs of its process group (what it started, also when the
 * command has exited): SIGTERM to the group, then SIGKILL after 2 s. */
void target_end_command(struct target *t);
/* The command's exit status as a shell gives it (128 + signal), 0 without a command. */
int target_command_status(const struct target *t);
/* Whether the command has exited (reaped now) or, for -p, every process is gone; then note
 * (len bytes) says so for a header: "[command exited, status N]", "[the processes exited]". */
bool target_ended(struct target *t, char *note, size_t len);
/* For -p: true while at least one of the processes lives (a zombie does not). */
bool target_pids_alive(const struct target *t);
/* What is profiled, for headers: "all CPUs", "pid 12 (name)", "pids 12,13", "command NAME". */
void target_describe(const struct target *t, char **argv, char *buf, size_t len);
/* The process name of pid (/proc/PID/comm) into buf; "" when it is gone. */
void target_comm(pid_t pid, char *buf, size_t len);
/* Ends the command if it still runs, closes the held pipes and frees the pids and events. */
void target_release(struct target *t);

#endif
