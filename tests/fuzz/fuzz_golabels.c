/* libFuzzer harness: the Go labels parsers (lib/runtimes/golabels.h, godwarf.h). Byte 0 picks
 * one: 0, an
 * executable's headers (golabels_exe_parse), then its writable segments, as far as the input
 * holds them, searched for the build information; 1, the build information alone
 * (golabels_buildinfo_version), its release then looked up (golabels_offsets); 2, the walker's
 * announcement (golabels_event_parse; the input zero-padded or cut to the record's size); 3, an
 * ELF file whose DWARF holds runtime.g and runtime.m (godwarf_offsets, then golabels_offsets with
 * them). What each promises is checked: a NUL-terminated version that fits, at most
 * FIRN_GO_PAIRS labels each at most FIRN_GO_STR bytes, DWARF offsets below 4096. Seeds: the Go
 * 1.19 and 1.27 fixtures' headers and build information, announcements of test_golabels's label
 * sets, a small C program whose structures were renamed runtime.g and runtime.m. */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "runtimes/godwarf.h"
#include "runtimes/golabels.h"

/* Checks a version found (err 0) and the offsets its release gives in exe. */
static void check_version(int err, const char *ver, size_t cap, const struct golabels_exe *exe)
{
	struct firn_go_proc p;
	const char *why = NULL;

	FUZZ_ASSERT(err == 0 || err == -ENOENT || err == -EINVAL);
	if (err)
		return;
	FUZZ_ASSERT(strlen(ver) > 0 && strlen(ver) < cap);
	if (golabels_offsets(ver, exe, NULL, &p, &why) == 0)
		FUZZ_ASSERT(p.tls_off < 0 && p.tls_off >= -4096 && p.g_labels < 4096 &&
			    p.m_curg < 4096);
	else
		FUZZ_ASSERT(why != NULL);
}

/* Mode 0: the headers, then each writable segment within the input. */
static void exe(const uint8_t *data, size_t size)
{
	struct golabels_exe e;
	char ver[64];

	if (golabels_exe_parse(data, size, &e))
		return;
	FUZZ_ASSERT(e.nsegs <= GOLABELS_SEGS);
	for (unsigned i = 0; i < e.nsegs; i++) {
		if (e.seg_off[i] >= size)
			continue;
		size_t len = size - e.seg_off[i] < e.seg_len[i] ? size - e.seg_off[i] : e.seg_len[i];
		check_version(golabels_buildinfo_version(data + e.seg_off[i], len, ver, sizeof(ver)),
			      ver, sizeof(ver), &e);
	}
}

/* Mode 2: an announcement, the input made the record's size. */
static void event(const uint8_t *data, size_t size)
{
	static uint8_t rec[sizeof(struct firn_go_event)];
	struct golabels_ctx c;

	memset(rec, 0, sizeof(rec));
	memcpy(rec, data, size < sizeof(rec) ? size : sizeof(rec));
	FUZZ_ASSERT(golabels_event_parse(rec, size, &c) == -EINVAL || size == sizeof(rec));
	if (golabels_event_parse(rec, sizeof(rec), &c))
		return;
	FUZZ_ASSERT(c.n <= FIRN_GO_PAIRS && c.id >= 1 && c.id <= FIRN_GO_MAX_ID);
	for (uint32_t i = 0; i < c.n; i++)
		FUZZ_ASSERT(strlen(c.key[i]) <= FIRN_GO_STR && strlen(c.value[i]) <= FIRN_GO_STR);
}

/* Mode 3: DWARF offsets, and the layout a release without table row gets from them. */
static void dwarf(const uint8_t *data, size_t size)
{
	static const struct golabels_exe none;
	struct godwarf dw = { 0 };
	struct firn_go_proc p;
	const char *why;
	int err = godwarf_offsets(fuzz_memfd(data, size), &dw);

	FUZZ_ASSERT(err == 0 || err == -ENOENT || err == -EINVAL);
	if (err)
		return;
	FUZZ_ASSERT(dw.g_m < 4096 && dw.g_labels < 4096 && dw.m_curg < 4096);
	FUZZ_ASSERT(golabels_offsets("go1.25.0", &none, &dw, &p, &why) == 0);
	FUZZ_ASSERT(p.layout == FIRN_GO_SLICE && p.g_labels == dw.g_labels);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct golabels_exe none;
	char ver[32];

	if (size < 1)
		return 0;
	if (data[0] == 0)
		exe(data + 1, size - 1);
	else if (data[0] == 1)
		check_version(golabels_buildinfo_version(data + 1, size - 1, ver, sizeof(ver)), ver,
			      sizeof(ver), &none);
	else if (data[0] == 2)
		event(data + 1, size - 1);
	else
		dwarf(data + 1, size - 1);
	return 0;
}
