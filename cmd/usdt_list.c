/* firn usdt-list: lists the USDT probes (sys/sdt.h .note.stapsdt notes) of files, or of every
 * object a process maps, with their addresses, semaphores and decoded arguments. */
#include "opt.h"
#include "common.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/json.h"
#include "record/usdt.h"
#include "base/vec.h"

#define USDT_LIST_USAGE \
	"[--json] FILE... [PATTERN]\n" \
	"[--json] -p PID [FILE...] [PATTERN]"

enum { OPT_JSON = 256 };

struct usdt_list_opts {
	pid_t pid;           /* 0: none */
	bool json;
	const char *pattern; /* glob over PROVIDER:NAME, NULL for all */
	char **files;        /* owned array of owned paths */
	int nfiles;
	size_t cap_files;
};

static int usdt_list_option(void *ctx, int id, const char *arg)
{
	struct usdt_list_opts *o = ctx;
	long v;

	switch (id) {
	case 'p':
		if (opt_long(&usdt_list_cmd, "pid", arg, 1, INT32_MAX, &v))
			return 2;
		o->pid = v;
		return 0;
	case OPT_JSON:
		o->json = true;
		return 0;
	}
	return 2;
}

/* True when s has glob characters or a ':' (it can only be a PATTERN). */
static bool looks_like_pattern(const char *s)
{
	return strpbrk(s, ":*?[") != NULL;
}

/* Adds a file operand (a path, or a library or program name resolved to one). */
static int add_file(struct usdt_list_opts *o, const char *arg)
{
	char path[PATH_MAX];
	struct stat st;
	int err = 0;

	if (strchr(arg, '/') || !stat(arg, &st))
		snprintf(path, sizeof(path), "%s", arg);
	else if ((err = usdt_resolve_path(arg, o->pid, path, sizeof(path))))
		return error("cannot find '%s': %s", arg,
			     err == -ENOENT ? "no such file, library or program" : strerror(-err));
	char *copy = strdup(path);
	if (!copy || VEC_GROW(o->files, o->cap_files, (size_t)o->nfiles + 1)) {
		free(copy);
		return error("out of memory");
	}
	o->files[o->nfiles++] = copy;
	return 0;
}

/* True when a library or program of that name exists (in process pid when pid > 0). */
static bool resolves(const char *name, pid_t pid)
{
	char path[PATH_MAX];

	return usdt_resolve_path(name, pid, path, sizeof(path)) == 0;
}

/* Sorts the operands into FILEs and the PATTERN: an operand with a '/' or naming an existing
 * file is a FILE; so is a library or program name; the last operand is the PATTERN when it
 * has ':' or glob characters, or when -p or a FILE came before it and it names no library or
 * program. */
static int sort_operands(struct usdt_list_opts *o, int argc, char **argv)
{
	struct stat st;

	if (o->pid && kill(o->pid, 0) && errno == ESRCH)
		return error("no process with pid %d", (int)o->pid);
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		bool last = i == argc - 1, is_file = strchr(a, '/') || !stat(a, &st);
		if (!is_file && last &&
		    (looks_like_pattern(a) || ((o->pid || o->nfiles) && !resolves(a, o->pid)))) {
			o->pattern = a;
			continue;
		}
		if (!is_file && looks_like_pattern(a))
			return usage_error(&usdt_list_cmd, "only the last operand can be a pattern: '%s'", a);
		int rc = add_file(o, a);
		if (rc)
			return rc;
	}
	if (!o->nfiles && !o->pid)
		return usage_error(&usdt_list_cmd, "nothing to list: give FILE... or -p PID");
	return 0;
}

/* The semaphore column: "-", "0xADDR", or with -p "0xADDR(active)" and the like. */
static void semaphore_text(const struct usdt_list_opts *o, const struct usdt_probe *p, char *buf,
			   size_t len)
{
	if (!p->semaphore)
		snprintf(buf, len, "-");
	else if (!o->pid)
		snprintf(buf, len, "%#" PRIx64, p->semaphore);
	else
		snprintf(buf, len, "%#" PRIx64 "(%s)", p->semaphore,
			 !p->sem_known ? "unknown" : p->sem_count ? "active" : "inactive");
}

/* Column widths of the text form. */
struct widths {
	int name, object, addr, sem;
};

/* Measures the columns over the probes to print. */
static void measure(const struct usdt_list_opts *o, const struct usdt_list *l, struct widths *w)
{
	char buf[64];

	memset(w, 0, sizeof(*w));
	for (size_t i = 0; i < l->n; i++) {
		const struct usdt_probe *p = &l->probes[i];
		if (o->pattern && !usdt_probe_matches(p, o->pattern))
			continue;
		int n = (int)(text_len(p->provider) + text_len(p->name) + 1), m = (int)text_len(p->object);
		w->name = n > w->name ? n : w->name;
		w->object = m > w->object ? m : w->object;
		n = snprintf(buf, sizeof(buf), "%#" PRIx64, p->addr);
		w->addr = n > w->addr ? n : w->addr;
		semaphore_text(o, p, buf, sizeof(buf));
		n = (int)strlen(buf);
		w->sem = n > w->sem ? n : w->sem;
	}
}

/* Writes one line per probe: PROVIDER:NAME OBJECT ADDRESS SEMAPHORE ARGUMENTS (aligned). */
static void write_text(const struct usdt_list_opts *o, const struct usdt_list *l)
{
	struct widths w;
	char sem[64], arg[256];

	measure(o, l, &w);
	for (size_t i = 0; i < l->n; i++) {
		const struct usdt_probe *p = &l->probes[i];
		if (o->pattern && !usdt_probe_matches(p, o->pattern))
			continue;
		semaphore_text(o, p, sem, sizeof(sem));
		/* names from any ELF file's notes: escaped (put_text), as every table's are */
		put_text(stdout, p->provider, 0);
		putchar(':');
		put_text(stdout, p->name, w.name - text_len(p->provider) - 1);
		fputs("  ", stdout);
		put_text(stdout, p->object, w.object);
		printf("  %#*" PRIx64 "  %-*s ", w.addr, p->addr, w.sem, sem);
		for (uint32_t j = 0; j < p->nargs; j++) {
			usdt_format_arg(&p->argv[j], arg, sizeof(arg));
			printf("%s%s", j ? ", " : " ", arg);
		}
		printf("%s\n", p->nargs ? "" : " -");
	}
}

/* Writes one decoded argument as a JSON object. */
static void json_arg(struct json_writer *w, const struct usdt_arg *a)
{
	static const char *const kinds[] = { "reg", "mem", "const", "unknown" };
	char text[256];

	usdt_format_arg(a, text, sizeof(text));
	jw_begin_object(w);
	jw_name(w, "spec"), jw_string(w, a->spec);
	jw_name(w, "text"), jw_string(w, text);
	jw_name(w, "type"), jw_string(w, usdt_arg_type(a));
	jw_name(w, "size"), jw_int(w, a->size);
	jw_name(w, "signed"), jw_bool(w, a->is_signed);
	jw_name(w, "location"), jw_string(w, kinds[a->kind]);
	if (a->reg[0])
		jw_name(w, "reg"), jw_string(w, a->reg);
	if (a->index[0]) {
		jw_name(w, "index"), jw_string(w, a->index);
		jw_name(w, "scale"), jw_int(w, a->scale);
	}
	if (a->sym)
		jw_name(w, "symbol"), jw_string_len(w, a->sym, a->sym_len);
	if (a->kind == USDT_ARG_MEM)
		jw_name(w, "offset"), jw_int(w, a->offset);
	if (a->kind == USDT_ARG_CONST)
		jw_name(w, "value"), jw_int(w, a->value);
	jw_end_object(w);
}

/* Writes one probe as a JSON object. */
static void json_probe(struct json_writer *w, const struct usdt_list_opts *o,
		       const struct usdt_probe *p)
{
	jw_begin_object(w);
	jw_name(w, "provider"), jw_string(w, p->provider);
	jw_name(w, "name"), jw_string(w, p->name);
	jw_name(w, "object"), jw_string(w, p->object);
	jw_name(w, "address"), jw_uint(w, p->addr);
	jw_name(w, "note_address"), jw_uint(w, p->note_addr);
	jw_name(w, "base"), jw_uint(w, p->base);
	jw_name(w, "semaphore");
	p->semaphore ? jw_uint(w, p->semaphore) : jw_null(w);
	if (o->pid && p->semaphore) {
		jw_name(w, "semaphore_count");
		p->sem_known ? jw_uint(w, p->sem_count) : jw_null(w);
		jw_name(w, "active");
		p->sem_known ? jw_bool(w, p->sem_count > 0) : jw_null(w);
	}
	jw_name(w, "argument_spec"), jw_string(w, p->args);
	jw_name(w, "arguments");
	jw_begin_array(w);
	for (uint32_t j = 0; j < p->nargs; j++)
		json_arg(w, &p->argv[j]);
	jw_end_array(w);
	jw_end_object(w);
}

/* Writes the matching probes as a JSON array. */
static int write_json(const struct usdt_list_opts *o, const struct usdt_list *l)
{
	struct json_writer *w = jw_new(stdout, true);

	if (!w)
		return error("out of memory");
	jw_begin_array(w);
	for (size_t i = 0; i < l->n; i++)
		if (!o->pattern || usdt_probe_matches(&l->probes[i], o->pattern))
			json_probe(w, o, &l->probes[i]);
	jw_end_array(w);
	int err = jw_error(w);
	jw_free(w);
	return err ? error("cannot write JSON: %s", strerror(-err)) : 0;
}

/* Reads the probes of the FILEs (exit 1 when one cannot be read, or has damaged notes — the
 * library has warned, naming it — after listing the others). */
static int read_files(const struct usdt_list_opts *o, struct usdt_list *l)
{
	int rc = 0;

	for (int i = 0; i < o->nfiles; i++) {
		size_t bad = l->nbad;
		int n = usdt_list_file(l, o->files[i], NULL);
		if (n >= 0 && l->nbad > bad)
			rc = 1;
		if (n == -ENOEXEC)
			rc = error("cannot read '%s': not an ELF file", o->files[i]);
		else if (n == -ENOMEM)
			return error("out of memory");
		else if (n < 0)
			rc = error("cannot open '%s': %s", o->files[i], strerror(-n));
	}
	return rc;
}

/* Reads the probes: of the FILEs, or of the process's objects; with -p, its semaphores. */
static int read_probes(const struct usdt_list_opts *o, struct usdt_list *l)
{
	if (o->nfiles) {
		int rc = read_files(o, l);
		if (o->pid && usdt_list_semaphores(l, o->pid) == -ENOENT)
			return error("no process with pid %d", (int)o->pid);
		return rc;
	}
	int n = usdt_list_process(l, o->pid);
	if (n == -ENOENT || n == -ESRCH)
		return error("no process with pid %d", (int)o->pid);
	if (n < 0)
		return error("cannot read the objects of pid %d: %s", (int)o->pid, strerror(-n));
	return 0;
}

static const struct opt usdt_list_opts_table[] = {
	{ "pid", 'p', "PID", "list the probes of every object mapped by PID, with semaphore states", 'p' },
	{ "json", 0, NULL, "write JSON (one object per probe) instead of lines", OPT_JSON },
	OPT_END,
};

static int cmd_usdt_list(int argc, char **argv)
{
	struct usdt_list_opts o = { 0 };
	struct usdt_list l;
	int argi, rc = opt_parse(&usdt_list_cmd, argc, argv, false, usdt_list_option, &o, &argi);

	usdt_list_init(&l);
	if (rc) {
		rc = rc < 0 ? 0 : rc;
		goto out;
	}
	if ((rc = sort_operands(&o, argc - argi, argv + argi)))
		goto out;
	rc = read_probes(&o, &l);
	if (l.n || !rc) {
		int wrc = o.json ? write_json(&o, &l) : (write_text(&o, &l), 0);
		rc = rc ? rc : wrc;
	}
out:
	usdt_list_release(&l);
	for (int i = 0; i < o.nfiles; i++)
		free(o.files[i]);
	free(o.files);
	return rc;
}

const struct cmd usdt_list_cmd = {
	.name = "usdt-list",
	.fn = cmd_usdt_list,
	.summary = "list the USDT probes of files or of a process",
	.usage = USDT_LIST_USAGE,
	.opts = { usdt_list_opts_table },
};
