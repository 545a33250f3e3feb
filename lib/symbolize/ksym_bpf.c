/* The kernel's symbol lookup through bpf/ksym.bpf.c: the skeleton's mmapped .bss carries the
 * addresses in and the kernel's text out; parsing that text is the only work done here. The
 * skeleton (struct ksym_bpf, generated) is the whole state. */
#include "symbolize/ksym_bpf.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ksym.skel.h"

#define BATCH (sizeof(((struct ksym_bpf__bss *)0)->ksym_addrs) / sizeof(__u64))
#define TEXT sizeof(((struct ksym_bpf__bss *)0)->ksym_text[0])
_Static_assert(BATCH == KSYM_BPF_BATCH, "bpf/ksym.bpf.c's KSYM_BATCH");

/* Runs one of the skeleton's syscall programs; 0 or -errno. */
static int run(const struct bpf_program *prog)
{
	LIBBPF_OPTS(bpf_test_run_opts, o);
	int err = bpf_prog_test_run_opts(bpf_program__fd(prog), &o);

	return err < 0 ? (errno ? -errno : err) : 0;
}

struct ksym_bpf *ksym_bpf_open(uint64_t *core_start, uint64_t *core_end)
{
	struct ksym_bpf *b = ksym_bpf__open_and_load();
	int err;

	if (!b)
		return NULL; /* errno set by libbpf */
	if (!b->bss)
		err = -EINVAL;
	else if (!(err = run(b->progs.ksym_core)) && !(err = b->bss->ksym_core_err) &&
		 !b->bss->ksym_core_start)
		err = -EPERM; /* addresses hidden: the lookup says 0 */
	if (err) {
		ksym_bpf__destroy(b);
		errno = -err;
		return NULL;
	}
	*core_start = b->bss->ksym_core_start;
	*core_end = b->bss->ksym_core_end;
	return b;
}

void ksym_bpf_close(struct ksym_bpf *b)
{
	ksym_bpf__destroy(b);
}

/* Parses "0x" followed by 1 to 16 hex digits (or the digits alone), up to end; -EINVAL else. */
static int parse_hex(const char *s, const char *end, uint64_t *v)
{
	if (end - s > 2 && s[0] == '0' && s[1] == 'x')
		s += 2;
	if (s == end || end - s > 16)
		return -EINVAL;
	for (*v = 0; s < end; s++) {
		char c = *s;
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (d < 0)
			return -EINVAL;
		*v = *v << 4 | (uint64_t)d;
	}
	return 0;
}

/* The last c in [s, end), or NULL. */
static char *last_of(char *s, char *end, char c)
{
	while (end > s)
		if (*--end == c)
			return end;
	return NULL;
}

int ksym_bpf_parse(char *text, struct ksym_bpf_hit *hit)
{
	char *end = text + strlen(text), *mod = NULL;

	*hit = (struct ksym_bpf_hit){ 0 };
	if (end > text && end[-1] == ']') { /* " [module]" */
		char *open = last_of(text, end, '[');
		if (!open || open == text || open[-1] != ' ' || open + 1 == end - 1)
			return -ENOENT;
		mod = open + 1;
		end[-1] = 0;
		end = open - 1;
	}
	char *slash = last_of(text, end, '/');
	char *plus = slash ? last_of(text, slash, '+') : NULL;
	if (!plus || plus == text || parse_hex(plus + 1, slash, &hit->offset) ||
	    parse_hex(slash + 1, end, &hit->size))
		return -ENOENT;
	*plus = 0;
	hit->name = text;
	hit->module = mod;
	return 0;
}

int ksym_bpf_lookup(struct ksym_bpf *b, const uint64_t *addrs, size_t n, struct ksym_bpf_hit *hits)
{
	struct ksym_bpf__bss *bss = b->bss;

	if (n > BATCH)
		return -EINVAL;
	memcpy(bss->ksym_addrs, addrs, n * sizeof(*addrs));
	bss->ksym_n = n;
	for (size_t i = 0; i < n; i++)
		bss->ksym_lens[i] = -ENOENT; /* what stays when the program does not get there */
	int err = run(b->progs.ksym_format);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		int len = bss->ksym_lens[i];
		hits[i] = (struct ksym_bpf_hit){ 0 };
		if (len <= 0 || (size_t)len > TEXT) /* failed, or cut short */
			continue;
		bss->ksym_text[i][len - 1] = 0;
		ksym_bpf_parse(bss->ksym_text[i], &hits[i]);
	}
	return 0;
}
