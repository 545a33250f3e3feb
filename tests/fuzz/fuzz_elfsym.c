/* libFuzzer harness: the ELF symbol reader on mutated ELF files, from memory (as the vDSO is
 * read) and from a descriptor (as files are), then lookups: symbols must be sorted and
 * non-overlapping, and every lookup must land in the symbol it names. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "elf/elfsym.h"
#include "fuzz.h"

/* Whether name offset off lies in one of e's spans, each of which ends in a NUL. */
static bool in_span(const struct elfsym *e, uint32_t off)
{
	for (size_t i = 0; i < e->nspans; i++) {
		const struct elfsym_names *s = &e->spans[i];
		FUZZ_ASSERT(!s->len || !s->base[s->len - 1]);
		if (off - s->start < s->len)
			return true;
	}
	return false;
}

/* Checks the promised shape of e and looks up a few addresses. */
static void check(const struct elfsym *e, const uint8_t *data, size_t size)
{
	for (size_t i = 0; i < e->nsyms; i++) {
		FUZZ_ASSERT(e->syms[i].start <= elfsym_end(e, &e->syms[i]));
		FUZZ_ASSERT(in_span(e, e->syms[i].name));
		if (i)
			FUZZ_ASSERT(e->syms[i - 1].start < e->syms[i].start &&
				    elfsym_end(e, &e->syms[i - 1]) <= e->syms[i].start);
	}
	for (size_t i = 0; i < e->nlong_ends; i++)
		FUZZ_ASSERT(e->long_ends[i].end - e->long_ends[i].start >= ELFSYM_LONG);
	for (size_t i = 0; i < e->nsyms && i < 64; i++) {
		const char *name;
		uint64_t start;
		if (!elfsym_lookup(e, e->syms[i].start, &name, &start))
			FUZZ_ASSERT(start == e->syms[i].start && name == elfsym_name(e, &e->syms[i]) &&
				    strlen(name) < size + 32);
	}
	for (size_t i = 0; i < 16; i++) {
		const char *name;
		uint64_t start, vaddr;
		elfsym_lookup(e, fuzz_u64(data, size, i * 8), &name, &start);
		elfsym_file_offset_to_vaddr(e, fuzz_u64(data, size, i * 8 + 4) & 0xfffff, &vaddr);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elfsym e;

	int err = elfsym_init_memory(&e, data, size);
	FUZZ_ASSERT(err == 0 || err == -ENOEXEC || err == -ENOMEM || err == -EINVAL);
	if (!err) {
		check(&e, data, size);
		elfsym_release(&e);
	}
	err = elfsym_init_fd(&e, fuzz_memfd(data, size));
	if (!err) {
		check(&e, data, size);
		elfsym_release(&e);
	}
	return 0;
}
