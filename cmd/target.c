/* Targets shared by record and top: -a, -p PID,... or a held command; privileges; stop signals. */
#include "target.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t stop_signal;

/* Signal handler: remember the first signal; the main loop stops. */
static void on_stop_signal(int sig)
{
	if (!stop_signal)
		stop_signal = sig;
}

int target_parse_pids(struct target *t, const struct cmd *cmd, const char *arg)
{
	char *copy = strdup(arg), *save = NULL;

	if (!copy)
		return error("out of memory");
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long v;
		if (opt_long(cmd, "pid", tok, 1, INT32_MAX, &v)) {
			free(copy);
			return 2;
		}
		pid_t *n = realloc(t->pids, (t->npids + 1) * sizeof(*n));
		if (!n) {
			free(copy);
			return error("out of memory");
		}
		t->pids = n;
		t->pids[t->npids++] = v;
	}
	free(copy);
	return t->npids ? 0 : usage_error(cmd, "option '--pid' needs at least one pid");
}

int target_parse_call_graph(const struct cmd *cmd, const char *arg, enum sampler_unwind *unwind)
{
	static const struct { const char *name; enum sampler_unwind mode; } modes[] = {
		{ "fp", UNWIND_FP }, { "dwarf", UNWIND_DWARF }, { "auto", UNWIND_AUTO },
	};

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (!strcmp(arg, modes[i].name)) {
			*unwind = modes[i].mode;
			return 0;
		}
	}
	return usage_error(cmd, "invalid value '%s' for --call-graph (fp, dwarf, auto)", arg);
}

int target_check(const struct target *t, const struct cmd *cmd, int nargs)
{
	int n = t->all + (t->npids > 0) + (nargs > 0);

	if (n == 0)
		return usage_error(cmd, "nothing to profile: give -a, -p PID or -- COMMAND");
	if (n > 1)
		return usage_error(cmd, "give only one of -a, -p PID and -- COMMAND");
	for (int i = 0; i < t->npids; i++)
		if (kill(t->pids[i], 0) && errno == ESRCH)
			return error("no process with pid %d", t->pids[i]);
	return 0;
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

/* Child side of target_start_command: wait for the go, then exec. Never returns. */
static void run_child(int go_fd, int err_fd, char **argv, const struct target *t)
{
	char c;
	int err = 0;

	if (read(go_fd, &c, 1) != 1)
		_exit(127);
	if (t->quiet_command)
		silence_stdio();
	if (t->nofile_raised)
		setrlimit(RLIMIT_NOFILE, &t->nofile);
	if (!t->as_root && drop_to_sudo_user())
		err = errno;
	else {
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
	pid_t pid = fork();
	if (pid < 0) {
		int err = -errno;
		close(go[0]), close(go[1]), close(errp[0]), close(errp[1]);
		return err;
	}
	if (pid == 0) {
		close(go[1]);
		close(errp[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		run_child(go[0], errp[1], argv, t);
	}
	close(go[0]);
	close(errp[1]);
	t->child = pid;
	t->go_fd = go[1];
	t->err_fd = errp[0];
	return 0;
}

int target_release_command(struct target *t)
{
	int err = 0;

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

void target_reap(struct target *t, int flags)
{
	if (t->child <= 0 || t->child_done)
		return;
	if (waitpid(t->child, &t->child_status, flags) == t->child)
		t->child_done = true;
}

void target_end_command(struct target *t)
{
	target_reap(t, WNOHANG);
	if (t->child <= 0 || t->child_done)
		return;
	kill(t->child, SIGTERM);
	for (int i = 0; i < 200 && !t->child_done; i++) {
		usleep(10000);
		target_reap(t, WNOHANG);
	}
	if (!t->child_done) {
		kill(t->child, SIGKILL);
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
		if (kill(t->pids[i], 0) == 0 || errno == EPERM)
			return true;
	return false;
}

/* The process name of pid from /proc/PID/comm into buf ("" when gone). */
static void comm_of(pid_t pid, char *buf, size_t len)
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
		comm_of(t->pids[0], comm, sizeof(comm));
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

void target_release(struct target *t)
{
	if (t->child > 0 && !t->child_done)
		target_end_command(t);
	if (t->go_fd > 0)
		close(t->go_fd);
	if (t->err_fd > 0)
		close(t->err_fd);
	free(t->pids);
	t->pids = NULL;
	t->npids = 0;
}
