/* firn: the command table, global options and the stdout close check.
 * `firn CMD ARGS` runs one command; `firn help --options CMD` lists a command's long options,
 * `firn help --values CMD` the values of those that take one of a fixed set and
 * `firn help --sample-types FILE` the sample types of a profile (what --sample-type takes), and
 * `firn help --labels FILE` its label keys (what --group-by and the tag filters take). */
#include "opt.h"
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/diag.h"
#include "source/sampler.h"

#ifndef FIRN_VERSION
#define FIRN_VERSION "0.1.0"
#endif

int firn_verbose;

static const struct cmd *const commands[] = {
	&record_cmd,
	&report_cmd,
	&top_cmd,
	&diff_cmd,
	&usdt_list_cmd,
	&push_cmd,
	NULL,
};

const struct cmd *cmd_find(const char *name)
{
	for (int i = 0; commands[i]; i++)
		if (!strcmp(commands[i]->name, name))
			return commands[i];
	return NULL;
}

/* Makes each command's option rows that come from lib/'s tables (struct cmd's init). */
static void init_commands(void)
{
	for (int i = 0; commands[i]; i++)
		if (commands[i]->init)
			commands[i]->init();
}

/* Reporter for lib/ diagnostics: warnings always, the rest with -v. */
static void report_diag(enum diag_level level, const char *msg)
{
	if (level == DIAG_WARN)
		fprintf(stderr, "firn: warning: %s\n", msg);
	else if (firn_verbose >= (level == DIAG_INFO ? 1 : 2))
		fprintf(stderr, "firn: %s\n", msg);
}

static void print_main_help(FILE *f)
{
	fprintf(f, "usage: firn [-v] [--version] COMMAND [ARGS]\n\ncommands:\n");
	for (int i = 0; commands[i]; i++)
		fprintf(f, "  %-12s %s\n", commands[i]->name, commands[i]->summary);
	fprintf(f, "  %-12s %s\n", "help", "show help for a command");
	fprintf(f, "\nSee 'firn COMMAND --help' or man firn-COMMAND.\n");
}

/* `firn help --values CMD`: "OPTION VALUE..." for each spelling of each option of CMD that takes
 * a fixed set of values (completions offer them). */
static int print_values(const char *name)
{
	const struct cmd *c = cmd_find(name);

	if (!c)
		return error("no command '%s'", name);
	for_each_opt(o, c) {
		char buf[512];
		const char *v = opt_values(c, o, buf, sizeof(buf));
		if (v)
			printf("--%s %s\n", o->long_name, v);
		if (v && o->short_name)
			printf("-%c %s\n", o->short_name, v);
	}
	return 0;
}

/* `firn help --sample-types FILE`: the names of FILE's sample types, one a line, for the
 * completion of --sample-type (nothing, exit 1, when FILE cannot be read; a FIFO or device is
 * refused without waiting on it). */
static int print_sample_types(const char *path)
{
	struct profile p;
	int rc = profile_init(&p) ? error("out of memory") : load_profile_regular(&p, path);

	for (uint32_t i = 0; !rc && i < p.nsample_types; i++) {
		put_text(stdout, profile_str(&p, p.sample_types[i].type), 0);
		putchar('\n');
	}
	profile_release(&p);
	return rc;
}

/* `firn help --labels FILE`: the keys of FILE's sample labels, one a line in the order first
 * seen, for the completion of --group-by, --tag-focus and --tag-ignore (as --sample-types). */
static int print_labels(const char *path)
{
	struct profile p;
	int rc = profile_init(&p) ? error("out of memory") : load_profile_regular(&p, path);
	uint8_t *seen = rc ? NULL : calloc(p.strings.n + 1, 1);

	if (!rc && !seen)
		rc = error("out of memory");
	for (uint64_t i = 0; !rc && i < p.nsamples; i++)
		for (uint32_t j = 0; j < p.samples[i].nlabels; j++) {
			uint32_t k = p.samples[i].labels[j].key;
			if (k >= p.strings.n || seen[k])
				continue;
			seen[k] = 1;
			put_text(stdout, profile_str(&p, k), 0);
			putchar('\n');
		}
	free(seen);
	profile_release(&p);
	return rc;
}

/* `firn help help`: help's own usage. */
static void print_help_help(FILE *f)
{
	fprintf(f, "usage: firn help [COMMAND]\n"
		   "   or: firn help --commands | --options COMMAND | --values COMMAND\n"
		   "   or: firn help --sample-types FILE | --labels FILE\n\n"
		   "Show the commands, or the usage and options of COMMAND; the other forms list\n"
		   "commands, options, option values and a profile's sample types or label keys, one a line\n"
		   "(for completions and scripts).\n");
}

/* `firn help [CMD]`, and `firn help --options CMD` / `--values CMD` / `--sample-types FILE` /
 * `--labels FILE` /
 * `--commands` for tests and completions. */
static int cmd_help(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "--commands")) {
		for (int i = 0; commands[i]; i++)
			printf("%s\n", commands[i]->name);
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "--options")) {
		const struct cmd *c = cmd_find(argv[2]);
		if (!c)
			return error("no command '%s'", argv[2]);
		for_each_opt(o, c)
			printf("--%s%s\n", o->long_name, o->arg ? "=" : "");
		for_each_opt(o, c)
			if (o->short_name)
				printf("-%c\n", o->short_name);
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "--values"))
		return print_values(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "--sample-types"))
		return print_sample_types(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "--labels"))
		return print_labels(argv[2]);
	if (argc >= 2 && !strcmp(argv[1], "help")) {
		print_help_help(stdout);
		return 0;
	}
	if (argc >= 2) {
		const struct cmd *c = cmd_find(argv[1]);
		if (!c)
			return error("no command '%s'", argv[1]), 2;
		opt_print_help(c, stdout);
		return 0;
	}
	print_main_help(stdout);
	return 0;
}

/* The errno of the write error on stdout already reported (0: none), so it is said once. */
static int stdout_failed;

int output_error(int err)
{
	if (!stdout_failed && err != EPIPE)
		error("cannot write output: %s", strerror(err));
	if (!stdout_failed)
		stdout_failed = err;
	/* the reader went away (| head): not a failure of ours */
	return stdout_failed != EPIPE;
}

int close_stdout(void)
{
	errno = 0;
	if (fflush(stdout) || ferror(stdout) || fclose(stdout))
		return output_error(stdout_failed ? stdout_failed : errno ? errno : EIO);
	return 0;
}

/* Opens /dev/null on each of the descriptors 0-2 that is closed (`firn ... >&-`), read-only on 1
 * and 2 so that writes fail with EBADF as they would have: else the first file firn opens (a BPF
 * map) would become stdout, and writes would fail with its errors ("Invalid argument"). */
static void reserve_std_fds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		int nfd = open("/dev/null", fd ? O_RDONLY : O_WRONLY);
		if (nfd >= 0 && nfd != fd) {
			dup2(nfd, fd);
			close(nfd);
		}
	}
}

int main(int argc, char **argv)
{
	int i = 1;

	reserve_std_fds();
	/* One malloc arena for all of firn's threads (the recorder, the push thread, the indexing
	 * worker): they seldom allocate at once, and with an arena each the memory one thread
	 * freed stayed in its arena, unused by the others. A continuous -a recording's anonymous
	 * RSS grew 2.4 MB in 5 minutes with the default, 0.8 MB with one arena, at the same CPU. */
	mallopt(M_ARENA_MAX, 1);
	diag_set_reporter(report_diag);
	libbpf_set_print(sampler_libbpf_print); /* libbpf's messages through report_diag too */
	init_commands();
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose"))
			firn_verbose++;
		else if (!strcmp(argv[i], "--version")) {
			printf("firn %s\n", FIRN_VERSION);
			return close_stdout();
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			print_main_help(stdout);
			return close_stdout();
		} else {
			fprintf(stderr, "firn: unknown option '%s'\n", argv[i]);
			print_main_help(stderr);
			return 2;
		}
	}
	if (i >= argc) {
		print_main_help(stderr);
		return 2;
	}
	int rc;
	if (!strcmp(argv[i], "help"))
		rc = cmd_help(argc - i, argv + i);
	else {
		const struct cmd *c = cmd_find(argv[i]);
		if (!c) {
			fprintf(stderr, "firn: '%s' is not a firn command. See 'firn --help'.\n", argv[i]);
			return 2;
		}
		rc = c->fn(argc - i, argv + i);
	}
	int crc = close_stdout();
	return rc ? rc : crc;
}
