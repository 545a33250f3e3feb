/* libFuzzer harness: the .note.stapsdt reader on mutated ELF images, from memory (elf_memory) and
 * from a descriptor path (elf_begin on a file), then each argument spec decoded again on its own
 * and formatted. Invariants: every probe has a printable provider and name, at most
 * USDT_MAX_ARGS arguments, arguments that re-decode identically, and formatting stays in
 * bounds. */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "record/usdt.h"

/* True when s is non-empty printable ASCII without spaces. */
static int ident_ok(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < 0x21 || *s > 0x7e)
			return 0;
	return 1;
}

/* Checks the promised shape of every probe and formats every argument. */
static void check(const struct usdt_list *l)
{
	char buf[96];

	for (size_t i = 0; i < l->n; i++) {
		const struct usdt_probe *p = &l->probes[i];
		FUZZ_ASSERT(ident_ok(p->provider) && ident_ok(p->name));
		FUZZ_ASSERT(p->nargs <= USDT_MAX_ARGS && (p->nargs == 0 || p->argv));
		FUZZ_ASSERT(!p->semaphore == !p->note_semaphore);
		for (uint32_t j = 0; j < p->nargs; j++) {
			const struct usdt_arg *a = &p->argv[j];
			struct usdt_arg again;
			int rc = usdt_parse_arg(a->spec, &again);
			FUZZ_ASSERT(rc == (a->kind == USDT_ARG_UNKNOWN ? -EINVAL : 0));
			FUZZ_ASSERT(again.kind == a->kind && again.size == a->size);
			FUZZ_ASSERT(a->size == 0 || a->size == 1 || a->size == 2 || a->size == 4 ||
				    a->size == 8);
			FUZZ_ASSERT(!a->sym || (a->sym >= a->spec &&
						a->sym + a->sym_len <= a->spec + strlen(a->spec)));
			int n = usdt_format_arg(a, buf, sizeof(buf));
			FUZZ_ASSERT(n >= 0 && strlen(buf) < sizeof(buf));
			usdt_probe_matches(p, "*:*");
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct usdt_list l;

	usdt_list_init(&l);
	int rc = usdt_list_memory(&l, data, size, "fuzz");
	FUZZ_ASSERT(rc >= 0 || rc == -ENOEXEC || rc == -ENOMEM);
	FUZZ_ASSERT(rc < 0 || (size_t)rc == l.n);
	check(&l);
	usdt_list_release(&l);
	usdt_list_init(&l);
	rc = usdt_list_file(&l, fuzz_memfd_path(data, size), NULL);
	check(&l);
	usdt_list_release(&l);
	/* the spec decoder alone, on the input as one NUL-terminated spec */
	char spec[256];
	size_t n = size < sizeof(spec) - 1 ? size : sizeof(spec) - 1;
	memcpy(spec, data, n);
	spec[n] = 0;
	struct usdt_arg a;
	char buf[96];
	usdt_parse_arg(spec, &a);
	usdt_format_arg(&a, buf, sizeof(buf));
	return 0;
}
