/* libFuzzer harness: the ELF symbol reader on mutated ELF files, from memory (as the vDSO is
 * read) and from a descriptor (as files are), then lookups: symbols must be sorted and
 * non-overlapping, and every lookup must land in the symbol it names. */
#include <errno.h>
#include <string.h>

#include "elf/elfsym.h"
#include "fuzz.h"

/* Checks the promised shape of e and looks up a few addresses. */
static void check(const struct elfsym *e, const uint8_t *data, size_t size)
{
	for (size_t i = 0; i < e->nsyms; i++) {
		FUZZ_ASSERT(e->syms[i].start < e->syms[i].end || e->syms[i].start == e->syms[i].end);
		FUZZ_ASSERT(e->syms[i].name < e->names_len);
		if (i)
			FUZZ_ASSERT(e->syms[i - 1].start < e->syms[i].start &&
				    e->syms[i - 1].end <= e->syms[i].start);
	}
	for (size_t i = 0; i < e->nsyms && i < 64; i++) {
		const char *name;
		uint64_t start;
		if (!elfsym_lookup(e, e->syms[i].start, &name, &start))
			FUZZ_ASSERT(start == e->syms[i].start && name == e->names + e->syms[i].name);
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
