/* libFuzzer harness: HotSpot's VMStructs tables read from process memory
 * (lib/runtimes/hotspot_structs.c: hotspot_structs_read over struct hotspot_mem). The input is
 * the process's memory at BASE, libjvm loaded at BASE too: its first 24 words after the first
 * are the exported symbols' values (the four tables' pointers, their entries' layouts), as in
 * test_hotspot_structs's fake (seed: that fake, written with FIRN_HOTSPOT_SEEDS=DIR). The read
 * ends, reads nothing outside the input, and an answer keeps the promises of the header.
 * An input that is an ELF file is read for the exported symbols too (hotspot_syms_read_memory;
 * seeds: the libhsfake fixtures, stripped). */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "runtimes/hotspot_structs.h"

#define BASE 0x7f0000000000ULL

/* The symbols of an ELF input: all, some (-EPROTO) or none (-ENOENT), as found says. */
static void check_syms(const uint8_t *data, size_t size)
{
	struct hotspot_syms s;
	int err = hotspot_syms_read_memory(&s, data, size);

	FUZZ_ASSERT(err == 0 || err == -EPROTO || err == -ENOENT || err == -EINVAL || err == -ENOMEM);
	FUZZ_ASSERT(s.found <= HS_NSYMS);
	FUZZ_ASSERT(err != 0 || s.found == HS_NSYMS);
	FUZZ_ASSERT(err != -EPROTO || (s.found > 0 && s.found < HS_NSYMS));
	FUZZ_ASSERT(err != -ENOENT || s.found == 0);
	for (size_t i = 0; i < HS_NSYMS; i++)
		FUZZ_ASSERT(err != 0 || s.addr[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_image im = { data, size, BASE };
	struct hotspot_mem mem = { fuzz_image_read, &im };
	struct hotspot_syms s = { .found = HS_NSYMS };
	struct hotspot_structs hs;

	if (size >= 4 && !memcmp(data, "\x7f" "ELF", 4))
		check_syms(data, size);
	for (size_t i = 0; i < HS_NSYMS; i++)
		s.addr[i] = 8 * (i + 1);
	int err = hotspot_structs_read(&hs, &s, BASE, &mem, 1);
	FUZZ_ASSERT(err == 0 || err == -EFAULT || err == -EPROTO);
	FUZZ_ASSERT(memchr(hs.reason, 0, sizeof(hs.reason)) && memchr(hs.release, 0, sizeof(hs.release)));
	FUZZ_ASSERT(!err == !hs.reason[0]);
	if (!err) {
		FUZZ_ASSERT(hs.jdk >= 9 && hs.jdk < 100 && hs.oop_size == 8);
		FUZZ_ASSERT(hs.frame_method == hs.frame_last_sp - 1 && hs.frame_bcp == hs.frame_method - 5);
		FUZZ_ASSERT(hs.codecache_heaps && hs.codecache_low_bound && hs.vm_release);
	}
	return 0;
}
