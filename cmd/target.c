/* Targets shared by record and top: -a, -p PID,... or a held command, and how they are sampled
 * (the option group); privileges; stop signals. */
#include "target.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "record/event_table.h"
#include "record/usdt.h"
#include "base/vec.h"

static volatile sig_atomic_t stop_signal, stop_count;

/* Signal handler: remember the first signal (the main loop stops) and count them all (a second
 * one cuts the end's push short). */
static void on_stop_signal(int sig)
{
	if (!stop_signal)
		stop_signal = sig;
	stop_count++;
}

/* Adds pid to t->pids unless it is there already (-p 1,1 and -p 1 -p 1 name one process). */
static int add_pid(struct target *t, pid_t pid)
{
	for (int i = 0; i < t->npids; i++)
		if (t->pids[i] == pid)
			return 0;
	if (VEC_GROW(t->pids, t->cap_pids, (size_t)t->npids + 1))
		return error("out of memory");
	t->pids[t->npids++] = pid;
	return 0;
}

/* Appends "PID[,PID...]" to t->pids, each pid once; an empty item ("1,,", "1,") is a usage
 * error. Prints a usage error (2) or "out of memory" (1). */
static int parse_pids(struct target *t, const struct cmd *cmd, const char *arg)
{
	const char *item = arg;

	for (;;) {
		size_t len = strcspn(item, ",");
		char num[32];
		long v;
		if (!len)
			return usage_error(cmd, "invalid value '%s' for --pid (an empty item)", arg);
		if (len >= sizeof(num))
			return usage_error(cmd, "invalid value '%.*s' for --pid (an integer from 1 to %ld)",
					   (int)len, item, (long)INT32_MAX);
		snprintf(num, sizeof(num), "%.*s", (int)len, item);
		if (opt_long(cmd, "pid", num, 1, INT32_MAX, &v))
			return 2;
		if (add_pid(t, v))
			return 1;
		if (!item[len])
			return 0;
		item += len + 1;
	}
}

/* Parses a --call-graph value (fp, dwarf, auto) into *unwind; prints a usage error (2). */
static int parse_call_graph(const struct cmd *cmd, const char *arg, enum recorder_unwind *unwind)
{
	static const struct { const char *name; enum recorder_unwind mode; } modes[] = {
		{ "fp", RECORDER_UNWIND_FP }, { "dwarf", RECORDER_UNWIND_DWARF },
		{ "auto", RECORDER_UNWIND_AUTO },
	};

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (!strcmp(arg, modes[i].name)) {
			*unwind = modes[i].mode;
			return 0;
		}
	}
	return usage_error(cmd, "invalid value '%s' for --call-graph (fp, dwarf, auto)", arg);
}

/* One usdt event's program name resolved as the command line's shell would: the event then
 * names the file (so the profile's "event:" comment says which); *spec untouched otherwise. */
static int resolve_usdt_event(const char **spec, char **owned, const char *cmd, bool quiet)
{
	char *copy = strdup(*spec + 5), *provider, *name, path[PATH_MAX], script[PATH_MAX];

	if (!copy)
		return error("out of memory");
	usdt_split_spec(copy, &provider, &name); /* checked by add_event */
	int from = strchr(copy, '/') ? -EINVAL :
		usdt_resolve_program(copy, cmd, path, sizeof(path), script, sizeof(script));
	if (from > 0 && *script)
		fprintf(stderr, "firn: warning: '%s' on PATH is '%s', a script, not a program: the "
			"probes are those of '%s'; name the program's path if the script runs another\n",
			copy, script, path);
	if (from > 0 && !quiet)
		fprintf(stderr, "firn: %s: probes of '%s' (%s)\n", *spec, path,
			from == USDT_FROM_COMMAND ? "the command's" : "PATH");
	if (from > 0 && asprintf(owned, "usdt:%s:%s:%s", path, provider, name) < 0) {
		free(copy);
		return error("out of memory");
	}
	if (from > 0)
		*spec = *owned;
	free(copy);
	return 0;
}

int target_resolve_usdt(struct target *t, const char *cmd, bool quiet)
{
	if (t->npids || !t->nevents)
		return 0; /* -p: the name is looked up in each process's maps */
	if (!(t->resolved = calloc(t->nevents, sizeof(*t->resolved))))
		return error("out of memory");
	for (int i = 0; i < t->nevents; i++)
		if (!strncmp(t->events[i], "usdt:", 5) &&
		    resolve_usdt_event(&t->events[i], &t->resolved[i], cmd, quiet))
			return 1;
	return 0;
}

/* Adds an -e value: one the event table names ("cpu-clock", "usdt:PATH:PROVIDER:NAME"...). */
static int add_event(struct target *t, const struct cmd *cmd, const char *arg)
{
	char syntax[256];

	if (!event_find(arg, NULL))
		return usage_error(cmd, "invalid event '%s' (%s)", arg,
				   event_syntax(syntax, sizeof(syntax)));
	if (VEC_GROW(t->events, t->cap_events, (size_t)t->nevents + 1))
		return error("out of memory");
	t->events[t->nevents++] = arg;
	return 0;
}

enum {
	OPT_CALL_GRAPH = TARGET_OPT_FIRST, OPT_UNWIND_MEMORY, OPT_NO_KERNEL, OPT_AS_ROOT,
	OPT_OFF_CPU_MIN, OPT_OFF_CPU_RATE, OPT_OFF_CPU_RUNNABLE, OPT_ALLOC_RATE, OPT_ALLOC_LIVE,
	OPT_ALLOC_MODE,
};

const struct opt target_opts[] = {
	{ "all-cpus", 'a', NULL, "profile the whole system", 'a' },
	{ "pid", 'p', "PID[,PID...]", "profile these processes (all their threads)", 'p' },
	{ "event", 'e', "EVENT", "repeatable", 'e' }, /* the events' text: event_help */
	{ "freq", 'F', "HZ", "samples per second per CPU (default 99)", 'F' },
	{ "call-graph", 0, "MODE", "how user stacks are unwound: auto (default), dwarf or fp", OPT_CALL_GRAPH },
	{ "unwind-memory", 0, "MB", "memory for DWARF unwind tables (default 32)", OPT_UNWIND_MEMORY },
	{ "no-kernel", 0, NULL, "do not take kernel stacks", OPT_NO_KERNEL },
	{ "as-root", 0, NULL, "under sudo, run the command as root instead of the invoking user", OPT_AS_ROOT },
	{ "off-cpu-min", 0, "USEC", "off-cpu: waits shorter than this are counted, not added to stacks (default 0)", OPT_OFF_CPU_MIN },
	{ "off-cpu-rate", 0, "N", "off-cpu: sample 1 wait in N, its time scaled by N (default 1: every wait)", OPT_OFF_CPU_RATE },
	{ "off-cpu-runnable", 0, NULL, "off-cpu: count time preempted while runnable too (run-queue waits)", OPT_OFF_CPU_RUNNABLE },
	{ "alloc-rate", 0, "BYTES", "alloc: sample one allocation per this many bytes on average (default 524288)", OPT_ALLOC_RATE },
	{ "alloc-live", 0, "N", "alloc: sampled allocations followed to their free at a time, all processes (default 65536)", OPT_ALLOC_LIVE },
	{ "alloc-mode", 0, "MODE", "alloc: preload (firn's library in a command), uprobe (the malloc family's uprobes) or auto (default: preload for a command, uprobes for other processes)", OPT_ALLOC_MODE },
	OPT_END,
};

/* Parses an --alloc-mode value (auto, preload, uprobe) into *mode; prints a usage error (2). */
static int parse_alloc_mode(const struct cmd *cmd, const char *arg, enum recorder_alloc_mode *mode)
{
	static const struct { const char *name; enum recorder_alloc_mode mode; } modes[] = {
		{ "auto", RECORDER_ALLOC_AUTO }, { "preload", RECORDER_ALLOC_PRELOAD },
		{ "uprobe", RECORDER_ALLOC_UPROBE },
	};

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (!strcmp(arg, modes[i].name)) {
			*mode = modes[i].mode;
			return 0;
		}
	}
	return usage_error(cmd, "invalid value '%s' for --alloc-mode (auto, preload, uprobe)", arg);
}

int target_option(struct target *t, const struct cmd *cmd, int id, const char *arg)
{
	long v;

	switch (id) {
	case 'a': t->all = true; return 0;
	case 'p': return parse_pids(t, cmd, arg);
	case 'e': return add_event(t, cmd, arg);
	case 'F':
		if (opt_long(cmd, "freq", arg, 1, 100000, &v))
			return 2;
		t->freq = v;
		return 0;
	case OPT_CALL_GRAPH:
		t->call_graph = arg;
		return parse_call_graph(cmd, arg, &t->unwind);
	case OPT_UNWIND_MEMORY:
		return opt_long(cmd, "unwind-memory", arg, 1, 4096, &t->unwind_memory_mb);
	case OPT_NO_KERNEL: t->no_kernel = true; return 0;
	case OPT_AS_ROOT: t->as_root = true; return 0;
	case OPT_OFF_CPU_MIN:
		return opt_long(cmd, "off-cpu-min", arg, 0, 3600L * 1000000, &t->off_cpu_min_us);
	case OPT_OFF_CPU_RATE:
		return opt_long(cmd, "off-cpu-rate", arg, 1, 1000000, &t->off_cpu_rate);
	case OPT_OFF_CPU_RUNNABLE: t->off_cpu_runnable = true; return 0;
	case OPT_ALLOC_RATE:
		return opt_long(cmd, "alloc-rate", arg, 1, 1L << 40, &t->alloc_rate);
	case OPT_ALLOC_LIVE:
		return opt_long(cmd, "alloc-live", arg, 1, 1L << 24, &t->alloc_live);
	case OPT_ALLOC_MODE:
		return parse_alloc_mode(cmd, arg, &t->alloc_mode);
	}
	return 2;
}

static bool alloc_recorded(const struct target *t);

void target_recorder_opts(const struct target *t, struct recorder_opts *ro)
{
	ro->all = t->all;
	ro->pids = t->pids;
	ro->npids = t->npids;
	ro->events = t->events;
	ro->nevents = t->nevents;
	ro->freq = t->freq;
	ro->call_graph = t->call_graph;
	ro->unwind = t->unwind;
	ro->unwind_memory = (uint64_t)t->unwind_memory_mb << 20;
	ro->kernel = !t->no_kernel;
	ro->off_cpu_runnable = t->off_cpu_runnable;
	ro->off_cpu_min_ns = t->off_cpu_min_us > 0 ? (uint64_t)t->off_cpu_min_us * 1000 : 0;
	ro->off_cpu_rate = t->off_cpu_rate > 0 ? t->off_cpu_rate : 1;
	ro->alloc_lib = t->alloc_lib;
	ro->alloc_rate = alloc_recorded(t) ? t->alloc_rate : 0;
	ro->alloc_mode = t->alloc_mode;
	ro->alloc_live = (uint32_t)t->alloc_live;
}

char *target_find_lib(const char *name)
{
	static const char *const places[] = { "/", "/../lib/firn/" };
	char exe[4096], *path = NULL;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return NULL;
	exe[n] = 0;
	const char *dir = dirname(exe);
	for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
		if (asprintf(&path, "%s%s%s", dir, places[i], name) < 0)
			return NULL;
		if (!access(path, R_OK))
			return path;
		free(path);
	}
	return NULL;
}

/* Whether an -e value of t names the alloc event. */
static bool alloc_recorded(const struct target *t)
{
	for (int i = 0; i < t->nevents; i++)
		if (event_find(t->events[i], NULL) == event_find("alloc", NULL))
			return true;
	return false;
}

int target_setup_alloc(struct target *t, bool command)
{
	const char *pre = getenv("LD_PRELOAD");
	char *v = NULL, rate[32];

	if (!alloc_recorded(t))
		return 0;
	t->alloc_lib = target_find_lib("libfirn-alloc.so");
	if (!t->alloc_lib && (t->alloc_mode == RECORDER_ALLOC_PRELOAD || (command &&
			      t->alloc_mode == RECORDER_ALLOC_AUTO)))
		return error("-e alloc: no libfirn-alloc.so next to firn or in ../lib/firn/");
	if (!command || t->alloc_mode == RECORDER_ALLOC_UPROBE)
		return 0;
	snprintf(rate, sizeof(rate), "%ld", t->alloc_rate);
	if (asprintf(&v, "%s%s%s", t->alloc_lib, pre && *pre ? " " : "", pre ? pre : "") < 0)
		return error("out of memory");
	int err = setenv("LD_PRELOAD", v, 1) || setenv("FIRN_ALLOC_RATE", rate, 1);
	free(v);
	return err ? error("cannot set LD_PRELOAD: %s", strerror(errno)) : 0;
}

int target_check_off_cpu(const struct target *t, const struct cmd *cmd)
{
	const char *opt = t->off_cpu_min_us >= 0 ? "--off-cpu-min"
			  : t->off_cpu_rate ? "--off-cpu-rate"
			  : t->off_cpu_runnable ? "--off-cpu-runnable" : NULL;
	bool off_cpu = false;

	for (int i = 0; i < t->nevents; i++)
		off_cpu |= event_find(t->events[i], NULL) == event_find("off-cpu", NULL);
	if (opt && !off_cpu)
		return usage_error(cmd, "%s needs -e off-cpu", opt);
	return 0;
}

/* The state letter of /proc/PATH/stat ('R', 'S', 'Z'...), 0 when it cannot be read. */
static char stat_state(const char *path)
{
	char buf[512];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	char *paren = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
	return paren && paren[1] == ' ' ? paren[2] : 0;
}

/* True while process pid lives: it exists and is no zombie (kill(pid, 0) succeeds for one).
 * A leader that is a zombie while other threads of its process run (it called pthread_exit)
 * still counts as alive. */
static bool process_alive(pid_t pid)
{
	char path[64];
	bool alive = false;

	if (kill(pid, 0) && errno != EPERM)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	char st = stat_state(path);
	if (st != 'Z' && st != 'X')
		return true; /* unreadable: kill's answer stands */
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	for (struct dirent *de; d && !alive && (de = readdir(d));) {
		char tpath[320];
		if (de->d_name[0] == '.')
			continue;
		snprintf(tpath, sizeof(tpath), "/proc/%d/task/%s/stat", (int)pid, de->d_name);
		st = stat_state(tpath);
		alive = st && st != 'Z' && st != 'X';
	}
	if (d)
		closedir(d);
	return alive;
}

int target_check(const struct target *t, const struct cmd *cmd, int nargs)
{
	int n = t->all + (t->npids > 0) + (nargs > 0);

	if (n == 0)
		return usage_error(cmd, "nothing to profile: give -a, -p PID or -- COMMAND");
	if (n > 1)
		return usage_error(cmd, "give only one of -a, -p PID and -- COMMAND");
	for (int i = 0; i < t->npids; i++) {
		if (kill(t->pids[i], 0) && errno == ESRCH)
			return error("no process with pid %d", t->pids[i]);
		if (!process_alive(t->pids[i]))
			return error("process %d has exited", t->pids[i]);
	}
	return 0;
}

/* kernel.perf_event_max_sample_rate (which the kernel lowers when sampling interrupts take too
 * long), 0 when unknown. */
static unsigned long max_sample_rate(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
	unsigned long max = 0;

	if (f && fscanf(f, "%lu", &max) != 1)
		max = 0;
	if (f)
		fclose(f);
	return max;
}

/* Whether cpu-clock is sampled: no -e, or one of them. */
static bool samples_cpu(const struct target *t)
{
	return event_progs(t->events, t->nevents, false) & EVENT_PROG_CPU_CLOCK;
}

void target_check_freq(struct target *t)
{
	unsigned *freq = &t->freq;

	if (!samples_cpu(t))
		return;
	unsigned long max = max_sample_rate();
	if (max && *freq > max) {
		warning("maximum sample rate exceeded (kernel.perf_event_max_sample_rate): sampling "
			"at %lu Hz instead of %u Hz", max, *freq);
		*freq = max;
	}
	if (*freq > TARGET_FREQ_COSTLY)
		warning("sampling at %u Hz slows the profiled threads down (each sample interrupts "
			"them to unwind their stack: a CPU-bound loop ran 1.6 times slower at 10000 Hz, "
			"45 times at 100000 Hz); 99 to 999 Hz is usually enough", *freq);
}

/* Which of CAP_BPF and CAP_PERFMON the process lacks ("" when none or when root). */
static const char *missing_caps(char *buf, size_t len)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = { 0 };

	buf[0] = 0;
	if (geteuid() == 0 || syscall(SYS_capget, &h, d))
		return buf;
	bool bpf = d[1].effective & (1u << (CAP_BPF - 32));
	bool perfmon = d[1].effective & (1u << (CAP_PERFMON - 32));
	snprintf(buf, len, "%s%s%s", bpf ? "" : "CAP_BPF", !bpf && !perfmon ? " and " : "",
		 perfmon ? "" : "CAP_PERFMON");
	return buf;
}

int target_check_privileges(const struct cmd *cmd)
{
	char caps[64];

	if (*missing_caps(caps, sizeof(caps)))
		return error("%s needs root, or %s", cmd->name, caps);
	return 0;
}

void target_install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int target_stop_signal(void)
{
	return stop_signal;
}

int target_stop_count(void)
{
	return stop_count;
}

void target_raise_fd_limit(struct target *t)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= rl.rlim_max)
		return;
	t->nofile = rl;
	rl.rlim_cur = rl.rlim_max;
	t->nofile_raised = !setrlimit(RLIMIT_NOFILE, &rl);
}

/* Drops root for the command when firn runs under sudo. */
static int drop_to_sudo_user(void)
{
	const char *u = getenv("SUDO_UID"), *g = getenv("SUDO_GID"), *name = getenv("SUDO_USER");

	if (getuid() != 0 || !u || !g)
		return 0;
	uid_t uid = strtoul(u, NULL, 10);
	gid_t gid = strtoul(g, NULL, 10);
	if (uid == 0)
		return 0;
	if ((name ? initgroups(name, gid) : setgroups(0, NULL)) || setgid(gid) || setuid(uid))
		return -errno;
	return 0;
}

int target_command_access(const struct target *t, const char *path, int mode)
{
	int st;

	if (t->as_root || getuid() != 0 || !getenv("SUDO_UID"))
		return access(path, mode) ? -errno : 0;
	pid_t pid = fork(); /* access(2) as that user: its groups and ACLs count */
	if (pid < 0)
		return -errno;
	if (pid == 0)
		_exit(drop_to_sudo_user() ? EPERM : access(path, mode) ? errno & 0xff : 0);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) ? -WEXITSTATUS(st) : -ECHILD;
}

/* Points stdin, stdout and stderr at /dev/null (the child of a full-screen top). */
static void silence_stdio(void)
{
	int fd = open("/dev/null", O_RDWR);

	if (fd < 0)
		return;
	dup2(fd, 0);
	dup2(fd, 1);
	dup2(fd, 2);
	if (fd > 2)
		close(fd);
}

/* The command dies with firn (SIGTERM, as when firn ends it), also when firn is killed: set
 * after dropping root, since a change of credentials clears it; a parent already gone is seen
 * by getppid. Exits when firn has died. */
static void die_with_parent(pid_t parent)
{
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() != parent)
		_exit(127);
}

/* Child side of target_start_command: wait for the go, then exec. Never returns. */
static void run_child(int go_fd, int err_fd, char **argv, const struct target *t, pid_t parent)
{
	char c;
	int err = 0;

	if (read(go_fd, &c, 1) != 1)
		_exit(127);
	if (t->quiet_command)
		silence_stdio();
	else if (t->stdout_to_stderr && dup2(2, 1) < 0)
		_exit(127);
	if (t->nofile_raised)
		setrlimit(RLIMIT_NOFILE, &t->nofile);
	if (!t->as_root && drop_to_sudo_user())
		err = errno;
	else {
		die_with_parent(parent);
		execvp(argv[0], argv);
		err = errno;
	}
	if (write(err_fd, &err, sizeof(err)) < 0)
		_exit(127);
	_exit(err == ENOENT ? 127 : 126);
}

int target_start_command(struct target *t, char **argv)
{
	int go[2], errp[2];

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(errp, O_CLOEXEC)) {
		int err = -errno;
		close(go[0]), close(go[1]);
		return err;
	}
	pid_t parent = getpid(), pid = fork();
	if (pid < 0) {
		int err = -errno;
		close(go[0]), close(go[1]), close(errp[0]), close(errp[1]);
		return err;
	}
	if (pid == 0) {
		setpgid(0, 0);
		close(go[1]);
		close(errp[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		run_child(go[0], errp[1], argv, t, parent);
	}
	close(go[0]);
	close(errp[1]);
	setpgid(pid, pid); /* also here: the group exists whichever of the two runs first */
	prctl(PR_SET_CHILD_SUBREAPER, 1); /* the orphans of its tree are reaped by firn */
	t->child = pid;
#ifdef SYS_pidfd_open
	t->end_fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (t->end_fd >= 0)
		fcntl(t->end_fd, F_SETFD, FD_CLOEXEC);
#endif
	t->go_fd = go[1];
	t->err_fd = errp[0];
	return 0;
}

/* Makes pgrp the foreground group of the terminal fd; SIGTTOU is blocked meanwhile, since a
 * background process (firn once it gave the terminal away) may not otherwise. */
static void set_foreground(int fd, pid_t pgrp)
{
	sigset_t ttou, old;

	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	tcsetpgrp(fd, pgrp);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* The command runs in its own process group (so that all it starts can be ended with it): when
 * firn is in the foreground of the terminal on its stdin, that group gets the terminal (the
 * command reads it; Ctrl-C and Ctrl-Z reach the command's tree) until the command ends. */
static void hand_terminal(struct target *t)
{
	if (t->quiet_command || !isatty(0) || tcgetpgrp(0) != getpgrp())
		return;
	t->tty_fd = 0;
	set_foreground(t->tty_fd, t->child);
}

/* Takes the terminal back from the command's group (once it has ended or stopped). */
static void take_terminal(struct target *t)
{
	if (t->tty_fd >= 0)
		set_foreground(t->tty_fd, getpgrp());
}

/* The command's group was stopped (Ctrl-Z, or SIGTTIN): firn stops too, as a shell's job does,
 * and once continued in the foreground gives the terminal back and continues the group. */
static void follow_stop(struct target *t)
{
	take_terminal(t);
	raise(SIGTSTP);
	if (tcgetpgrp(t->tty_fd) == getpgrp())
		set_foreground(t->tty_fd, t->child);
	kill(-t->child, SIGCONT);
}

int target_release_command(struct target *t)
{
	int err = 0;

	hand_terminal(t);
	if (write(t->go_fd, "g", 1) != 1)
		err = errno;
	close(t->go_fd);
	if (!err && read(t->err_fd, &err, sizeof(err)) != sizeof(err))
		err = 0; /* EOF: exec succeeded */
	close(t->err_fd);
	t->go_fd = t->err_fd = -1;
	if (err)
		target_reap(t, 0);
	return err;
}

int target_start_recording(struct target *t, struct recorder *rec, char **argv)
{
	int err;

	if (argv && argv[0]) {
		if ((err = target_start_command(t, argv)))
			return error("cannot start '%s': %s", argv[0], strerror(-err));
		if (recorder_add_command(rec, t->child, argv[0]))
			return error("%s", recorder_error(rec));
	}
	if (recorder_start(rec)) {
		if (t->child)
			kill(t->child, SIGKILL), target_reap(t, 0);
		return error("%s", recorder_error(rec));
	}
	if (t->child && (err = target_release_command(t))) {
		error("cannot run '%s': %s", argv[0], strerror(err));
		return err == ENOENT ? 127 : 126;
	}
	return 0;
}

/* Notes the command's status st when pid is the command. */
static void note_exit(struct target *t, pid_t pid, int st)
{
	if (pid != t->child || t->child_done)
		return;
	t->child_status = st;
	t->child_done = true;
	take_terminal(t);
	t->tty_fd = -1;
}

void target_reap(struct target *t, int flags)
{
	int st;
	pid_t p;

	if (t->child <= 0)
		return;
	while ((p = waitpid(-1, &st, WNOHANG)) > 0) /* the command, or an orphan of its tree */
		note_exit(t, p, st);
	if (t->child_done)
		return;
	if (!(flags & WNOHANG)) {
		if (waitpid(t->child, &st, flags) == t->child)
			note_exit(t, t->child, st);
	} else if (t->tty_fd >= 0 && waitpid(t->child, &st, WNOHANG | WUNTRACED) == t->child) {
		if (WIFSTOPPED(st))
			follow_stop(t);
		else
			note_exit(t, t->child, st);
	}
}

/* Whether a process of the command's group still runs (its zombies, reaped here, do not). */
static bool group_alive(struct target *t)
{
	target_reap(t, WNOHANG);
	return !t->child_done || !kill(-t->child, 0);
}

/* Sends sig to the command's group, and to the command itself while it runs (it may have left
 * the group: a job-control shell, setsid). */
static void signal_command(struct target *t, int sig)
{
	kill(-t->child, sig);
	if (!t->child_done)
		kill(t->child, sig);
}

void target_end_command(struct target *t)
{
	if (t->child <= 0 || !group_alive(t))
		return;
	signal_command(t, SIGTERM);
	signal_command(t, SIGCONT); /* a stopped process would not act on SIGTERM */
	for (int i = 0; i < 200 && group_alive(t); i++)
		usleep(10000);
	if (group_alive(t)) {
		signal_command(t, SIGKILL);
		target_reap(t, 0);
	}
}

int target_command_status(const struct target *t)
{
	if (!t->child)
		return 0;
	if (WIFEXITED(t->child_status))
		return WEXITSTATUS(t->child_status);
	if (WIFSIGNALED(t->child_status))
		return 128 + WTERMSIG(t->child_status);
	return 1;
}

bool target_pids_alive(const struct target *t)
{
	for (int i = 0; i < t->npids; i++)
		if (process_alive(t->pids[i]))
			return true;
	return false;
}

bool target_ended(struct target *t, char *note, size_t len)
{
	if (t->child) {
		target_reap(t, WNOHANG);
		if (t->child_done)
			snprintf(note, len, "[command exited, status %d]", target_command_status(t));
		return t->child_done;
	}
	if (t->npids && !target_pids_alive(t)) {
		snprintf(note, len, "[the processes exited]");
		return true;
	}
	return false;
}

/* The process name of pid from /proc/PID/comm (see target.h). */
void target_comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (!(f = fopen(path, "r")))
		return;
	if (fgets(buf, len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

void target_describe(const struct target *t, char **argv, char *buf, size_t len)
{
	char comm[32];
	size_t off;

	if (t->all) {
		snprintf(buf, len, "all CPUs");
	} else if (t->npids == 1) {
		target_comm(t->pids[0], comm, sizeof(comm));
		snprintf(buf, len, "pid %d%s%s%s", (int)t->pids[0], *comm ? " (" : "", comm,
			 *comm ? ")" : "");
	} else if (t->npids > 1) {
		off = snprintf(buf, len, "pids ");
		for (int i = 0; i < t->npids && off < len; i++)
			off += snprintf(buf + off, len - off, "%s%d", i ? "," : "", (int)t->pids[i]);
	} else {
		off = snprintf(buf, len, "command");
		for (int i = 0; argv && argv[i] && off < len; i++)
			off += snprintf(buf + off, len - off, " %s", argv[i]);
	}
}

int target_end_fd(const struct target *t)
{
	return t->child > 0 ? t->end_fd : -1;
}

void target_release(struct target *t)
{
	if (t->child > 0 && !t->child_done)
		target_end_command(t);
	if (t->go_fd > 0)
		close(t->go_fd);
	if (t->err_fd > 0)
		close(t->err_fd);
	if (t->end_fd >= 0)
		close(t->end_fd);
	t->end_fd = -1;
	free(t->pids);
	t->pids = NULL;
	free(t->alloc_lib);
	t->alloc_lib = NULL;
	t->npids = 0;
	for (int i = 0; t->resolved && i < t->nevents; i++)
		free(t->resolved[i]);
	free(t->resolved);
	t->resolved = NULL;
	free(t->events);
	t->events = NULL;
	t->nevents = 0;
}
