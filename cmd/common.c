/* Helpers the commands share. */
#include "common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analyze/nosym.h"
#include "base/escape.h"
#include "format/folded.h"
#include "format/input.h"
#include "opt.h"
#include "base/safeopen.h"
#include "record/event_table.h"
#include "record/curlload.h"
#include "record/push.h"

#define MESSAGE_LIST_MAX 8 /* items of a list a message names before "and N more" */

const char *input_name(const char *path)
{
	return strcmp(path, "-") ? path : "<stdin>";
}

/* Reads the profile at path, naming it name in messages (load_profile_comm's messages). */
static int load_as(struct profile *p, const char *path, const char *name, enum folded_comm comm)
{
	struct folded_stats st = { 0 };
	int err = profile_load_comm(p, path, comm, &st);

	if (err == -EINVAL)
		return error("cannot read '%s': not a pprof or folded profile", name);
	if (err == -EBADMSG)
		return error("cannot read '%s': invalid pprof profile: it refers to a string, "
			     "function, location or mapping it does not have", name);
	if (err == -EPROTO)
		return error("cannot read '%s': invalid pprof profile: sample %llu has %llu value%s for "
			     "%u sample type%s", name, (unsigned long long)st.bad_sample,
			     (unsigned long long)st.bad_sample_values, st.bad_sample_values == 1 ? "" : "s",
			     p->nsample_types, p->nsample_types == 1 ? "" : "s");
	if (err == -ENODATA)
		return error("cannot read '%s': empty file", name);
	if (err == -EFBIG)
		return error("cannot read '%s': profile too large (see LIMITS in firn-report(1))", name);
	if (err == -ERANGE)
		return error("cannot read '%s': invalid pprof profile: negative sample value", name);
	if (err == -EOVERFLOW && st.line)
		return error("cannot read '%s': sample counts overflow at line %llu", name,
			     (unsigned long long)st.line);
	if (err == -EOVERFLOW)
		return error("cannot read '%s': invalid pprof profile: sample values overflow", name);
	if (err == -ENOMEM || err == -EIO)
		return error("cannot read '%s': %s", name, strerror(-err));
	if (err)
		return error("cannot open '%s': %s", name, strerror(-err));
	if (st.bad_lines)
		warning("skipped %llu malformed line%s in '%s'", (unsigned long long)st.bad_lines,
			st.bad_lines == 1 ? "" : "s", name);
	return 0;
}

int load_profile(struct profile *p, const char *path)
{
	return load_profile_comm(p, path, FOLDED_COMM_AUTO);
}

int load_profile_comm(struct profile *p, const char *path, enum folded_comm comm)
{
	return load_as(p, path, input_name(path), comm);
}

int load_profile_regular(struct profile *p, const char *path)
{
	char fdpath[32];
	int fd = safeopen(path, 0, 0, NULL);

	if (fd < 0)
		return error("cannot open '%s': %s", path, safeopen_strerror(fd));
	/* read what was checked, not what the name leads to a moment later */
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	int rc = load_as(p, fdpath, path, FOLDED_COMM_AUTO);
	close(fd);
	return rc;
}

void put_text(FILE *f, const char *s, size_t width)
{
	size_t n = strlen(s), used, len = 0;
	char esc[ESCAPE_MAX];

	for (size_t i = 0; i < n; i += used) {
		size_t k = escape_char(s + i, n - i, esc, &used);
		fwrite(k ? esc : s + i, 1, k ? k : used, f);
		len += k ? k : used;
	}
	for (; len < width; len++)
		putc(' ', f);
}

void put_lines(FILE *f, char *text)
{
	for (char *line = text, *nl; line; line = nl ? nl + 1 : NULL) {
		if ((nl = strchr(line, '\n')))
			*nl = 0;
		put_text(f, line, 0);
		fputc('\n', f);
	}
}

size_t text_len(const char *s)
{
	return escape_text(NULL, 0, s, strlen(s));
}

const char *group_value(const struct unit_scale *u, int64_t v, char *buf)
{
	char plain[48];
	const char *dot;
	size_t n;

	if (!u->scaled)
		return group_digits(v, buf);
	unit_format(u, v, plain, sizeof(plain));
	dot = strchr(plain, '.');
	n = dot ? (size_t)(dot - plain) : strlen(plain);
	char *o = buf;
	for (size_t i = 0; i < n; i++) {
		if (i && plain[i - 1] != '-' && (n - i) % 3 == 0)
			*o++ = ',';
		*o++ = plain[i];
	}
	strcpy(o, plain + n);
	return buf;
}

int sample_type_choose(const struct cmd *cmd, const struct profile *p, const char *spec,
		       const char *path)
{
	int i = profile_sample_type_find(p, spec);

	if (i >= 0 || (!spec && i == -ENOENT))
		return i >= 0 ? i : 0;
	fprintf(stderr, "firn %s: no sample type '", cmd->name);
	put_text(stderr, spec, 0);
	if (path) {
		fprintf(stderr, "' in '");
		put_text(stderr, input_name(path), 0);
		fputc('\'', stderr);
	} else {
		fprintf(stderr, "' in this recording");
	}
	fprintf(stderr, ": it has %s", p->nsample_types ? "" : "none");
	/* the first few: a profile may have thousands of types, the message stays one short line */
	for (uint32_t t = 0; t < p->nsample_types && t < MESSAGE_LIST_MAX; t++) {
		fprintf(stderr, "%s%u ", t ? ", " : "", t);
		put_text(stderr, profile_str(p, p->sample_types[t].type), 0);
		fputc('/', stderr);
		put_text(stderr, profile_str(p, p->sample_types[t].unit), 0);
	}
	if (p->nsample_types > MESSAGE_LIST_MAX)
		fprintf(stderr, " and %u more", p->nsample_types - MESSAGE_LIST_MAX);
	fputc('\n', stderr);
	return -1;
}

const char *group_digits(int64_t v, char *buf)
{
	char digits[24];
	int n = snprintf(digits, sizeof(digits), "%llu",
			 (unsigned long long)(v < 0 ? -(uint64_t)v : (uint64_t)v));
	char *o = buf;

	if (v < 0)
		*o++ = '-';
	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			*o++ = ',';
		*o++ = digits[i];
	}
	*o = 0;
	return buf;
}

const char *output_strerror(const char *path, int err)
{
	struct stat st;

	if (err == -ENXIO && !stat(path, &st) && S_ISFIFO(st.st_mode))
		return "no process has the FIFO open for reading";
	if (err == -EOPNOTSUPP)
		return "not a regular file, character device or FIFO";
	return strerror(-err);
}

int output_write(const char *path, const void *buf, size_t len, mode_t mode)
{
	if (path && strcmp(path, "-")) {
		struct file_write w = { .mode = mode };
		int err = file_replace_atomic(path, buf, len, &w);
		if (err)
			return error("cannot write '%s': %s", path, output_strerror(path, err));
		return 0;
	}
	fwrite(buf, 1, len, stdout); /* errors are caught by close_stdout */
	return 0;
}

bool color_terminal(void)
{
	const char *no = getenv("NO_COLOR"), *term = getenv("TERM");

	return isatty(1) && !(no && *no) && term && *term && strcmp(term, "dumb");
}

void put_time_range(FILE *f, const struct profile *p)
{
	time_t a = (time_t)(p->time_nanos / 1000000000);
	time_t b = (time_t)((p->time_nanos + p->duration_nanos) / 1000000000);
	struct tm ta, tb;
	char sa[32], sb[32];

	strftime(sa, sizeof(sa), "%Y-%m-%d %H:%M:%S", gmtime_r(&a, &ta));
	strftime(sb, sizeof(sb), "%Y-%m-%d %H:%M:%S", gmtime_r(&b, &tb));
	fprintf(f, ", %s to %s UTC (%.1f s)", sa, sb, p->duration_nanos / 1e9);
}

/* Whether the key c (klen bytes) is one of g's statistics that add up: under its prefix and no
 * setting of it (off_cpu.min_us). A field the table does not know (an older firn's) adds up. */
static bool group_counts(const struct event_stat_group *g, const char *c, size_t klen)
{
	size_t n = strlen(g->prefix);

	if (klen < n || strncmp(c, g->prefix, n))
		return false;
	for (size_t i = 0; i < g->n; i++)
		if (g->fields[i].setting && strlen(g->fields[i].name) == klen - n &&
		    !strncmp(c + n, g->fields[i].name, klen - n))
			return false;
	return true;
}

/* Whether the key c (klen bytes) counts something of the recording: the capture's "samples"
 * and "lost" (and "lost.stacks_full"...), or an event's statistic, by the event table's groups
 * (lib/record/event_table.h), so a new event's counters add up with no line here. */
static bool counter_key(const char *c, size_t klen)
{
	static const char *const own[] = { "samples", "lost" };

	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
		size_t n = strlen(own[i]);
		if (klen >= n && !strncmp(c, own[i], n) && (klen == n || c[n] == '.'))
			return true; /* not "samplesx" */
	}
	for (size_t i = 0; i <= event_table_n; i++) {
		const struct event_stat_group *g = i < event_table_n ? event_table[i].stats
								     : &event_unwind_stats;
		if (g && group_counts(g, c, klen))
			return true;
	}
	return false;
}

/* The key length of the comment c when it is a count that adds up over recordings (a counter's
 * key, ": ", decimal digits), its value in *v; 0 for settings (frequency, cpus, off_cpu.min_us)
 * and text. */
static size_t comment_count(const char *c, uint64_t *v)
{
	const char *colon = strstr(c, ": ");
	char *end;

	if (!colon || colon[2] < '0' || colon[2] > '9' || !counter_key(c, (size_t)(colon - c)))
		return 0;
	errno = 0;
	*v = strtoull(colon + 2, &end, 10);
	return !*end && !errno ? (size_t)(colon - c) : 0;
}

/* The index of p's comment that is the count of key (klen bytes), or -1. */
static int64_t comment_count_at(const struct profile *p, const char *key, size_t klen)
{
	uint64_t v;

	for (uint32_t i = 0; i < p->ncomments; i++) {
		const char *c = profile_str(p, p->comments[i]);
		if (comment_count(c, &v) == klen && !strncmp(c, key, klen))
			return i;
	}
	return -1;
}

/* Whether p has the comment text c already. */
static bool comment_has(const struct profile *p, const char *c)
{
	for (uint32_t i = 0; i < p->ncomments; i++)
		if (!strcmp(profile_str(p, p->comments[i]), c))
			return true;
	return false;
}

int merge_comments(struct profile *dst, const struct profile *src)
{
	char line[512];
	uint64_t v, w;

	for (uint32_t i = 0; i < src->ncomments; i++) {
		const char *c = profile_str(src, src->comments[i]);
		size_t klen = comment_count(c, &v);
		int64_t at = klen && klen < 256 ? comment_count_at(dst, c, klen) : -1;
		if (at < 0) {
			if (!comment_has(dst, c) && profile_add_comment(dst, c))
				return -ENOMEM;
			continue;
		}
		comment_count(profile_str(dst, dst->comments[at]), &w);
		snprintf(line, sizeof(line), "%.*s: %llu", (int)klen, c,
			 (unsigned long long)(w > UINT64_MAX - v ? UINT64_MAX : w + v));
		int64_t id = profile_intern(dst, line);
		if (id < 0)
			return -ENOMEM;
		dst->comments[at] = (uint32_t)id;
	}
	return 0;
}

const char *text_escaped(char *buf, size_t len, const char *s)
{
	escape_text(buf, len, s, strlen(s));
	return buf;
}

const char *profile_service(const struct profile *p)
{
	const char *name = NULL;

	for (uint64_t i = 0; i < p->nsamples; i++) {
		const char *s = profile_label_str(p, &p->samples[i], "service.name");
		/* several services, or samples of processes without one (-a): none names the profile */
		if (!s || (name && strcmp(s, name)))
			return NULL;
		name = s;
	}
	return name && *name && push_value_ok(name) && !strpbrk(name, "{},") ? name : NULL;
}

int push_value_check(const struct cmd *cmd, const char *opt, const char *value)
{
	char esc[1024];

	if (push_value_ok(value))
		return 0;
	return usage_error(cmd, "invalid value '%s' for --%s (no control characters: it is sent in "
			   "an HTTP header)", text_escaped(esc, sizeof(esc), value), opt);
}

int push_label_error(const struct cmd *cmd, const char *arg)
{
	char esc[1024];

	return usage_error(cmd, "invalid value '%s' for --label (KEY=VALUE: a name of letters, "
			   "digits, '_' and '.', a value without braces, commas or control characters)",
			   text_escaped(esc, sizeof(esc), arg));
}

const char *push_protocols(char *buf, size_t len, const char *sep, const char *last,
			   const char *note)
{
	size_t off = 0;
	const char *name;

	*buf = 0;
	for (int i = 0; (name = push_proto_name(i)) && off < len; i++) {
		const char *before = !i ? "" : push_proto_name(i + 1) ? sep : last;
		int n = snprintf(buf + off, len - off, "%s%s%s", before, name, i ? "" : note);
		off += n > 0 ? (size_t)n : 0;
	}
	return buf;
}

int push_proto_option(const struct cmd *cmd, const char *opt, const char *arg, int *proto)
{
	char names[128];

	if ((*proto = push_proto_of(arg)) >= 0)
		return 0;
	return usage_error(cmd, "invalid value '%s' for --%s (%s)", arg, opt,
			   push_protocols(names, sizeof(names), ", ", ", ", ""));
}

int push_url_check(const struct cmd *cmd, const char *url, const char *opt)
{
	int err = push_check_url(url);

	if (err == -ELIBACC)
		return error("cannot load '%s': %s", CURLLOAD_SONAME, curlload_why());
	if (err != -EINVAL)
		return err ? error("out of memory") : 0;
	char *shown = push_url_shown(url), esc[1024];
	if (!shown)
		return error("out of memory");
	text_escaped(esc, sizeof(esc), shown); /* a newline stays on its line */
	free(shown);
	if (opt)
		return usage_error(cmd, "invalid value '%s' for --%s (an http:// or https:// URL with "
				   "a host, no spaces)", esc, opt);
	return usage_error(cmd, "invalid URL '%s' (an http:// or https:// URL with a host, no "
			   "spaces)", esc);
}

int cacert_check(const char *path, const char *opt)
{
	int err = push_check_cacert(path);

	if (err == -ENODATA)
		return error("cannot use '%s' for --%s: no PEM certificate in it", path, opt);
	return err ? error("cannot use '%s' for --%s: %s", path, opt, strerror(-err)) : 0;
}

/* How to get names for a file: its debug package (as recorded), or where firn looks for debug
 * files; and debuginfod where it is not asked yet. */
static void put_nosym_hint(FILE *f, const struct nosym_file *nf)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	bool asked = urls && *urls;

	fputs("; for names install ", f);
	if (nf->package)
		fprintf(f, "%.*s", (int)strcspn(nf->package, " "), nf->package);
	else
		fputs("its debug file in /usr/lib/debug", f);
	fputs(asked ? " (DEBUGINFOD_URLS had none)" : ", or set DEBUGINFOD_URLS", f);
}

/* The lines of files without symbols (see common.h). */
void put_nosym_lines(FILE *f, const struct profile *p, uint32_t vi, const char *prefix)
{
	struct nosym_file nf[3];
	int n = nosym_files(p, vi, nf, 3);
	int64_t total = 0;

	for (uint64_t i = 0; n > 0 && i < p->nsamples; i++)
		total += p->samples[i].values[vi];
	const char *type = p->nsample_types ? profile_str(p, p->sample_types[vi].type) : "samples";
	for (int i = 0; i < n; i++) {
		char *line = NULL, v[32];
		size_t len = 0;
		FILE *m = open_memstream(&line, &len);
		if (!m)
			return;
		fprintf(m, "%sno symbols: '%s' in %s %s (%.1f%%)", prefix,
			profile_str(p, nf[i].filename), group_digits(nf[i].value, v), type,
			100.0 * nf[i].value / total);
		put_nosym_hint(m, &nf[i]);
		fclose(m);
		put_text(f, line ? line : "", 0);
		fputc('\n', f);
		free(line);
	}
}
