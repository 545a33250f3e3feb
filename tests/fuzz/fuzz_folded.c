/* libFuzzer harness: folded_read_comm on arbitrary text (the last byte picks the comm mode). It
 * refuses only NUL bytes and counts past INT64_MAX; whatever it accepts must write back as folded
 * text and as pprof, the folded text must read back into the same text, and the good lines'
 * counts must add up exactly to the total. */
#include <errno.h>
#include <string.h>

#include "format/folded.h"
#include "fuzz.h"
#include "format/pprof.h"
#include "model/profile.h"

/* Writes p as folded text into a malloc'd string (*len bytes). */
static char *write_str(struct profile *p, const struct folded_opts *o, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		abort();
	FUZZ_ASSERT(folded_write(p, f, o) == 0);
	fclose(f);
	return buf;
}

/* Folded output read back writes the same text again: escaped names stay as they are. */
static void write_read_write(struct profile *p, const struct folded_opts *o)
{
	struct profile q;
	size_t n1, n2;
	char *t1 = write_str(p, o, &n1);
	FILE *f = fmemopen(t1, n1 ? n1 : 1, "r");

	if (!f || profile_init(&q))
		abort();
	if (!n1)
		fgetc(f);
	FUZZ_ASSERT(folded_read(&q, f, NULL) == 0);
	fclose(f);
	char *t2 = write_str(&q, o, &n2);
	FUZZ_ASSERT(n1 == n2 && !memcmp(t1, t2, n1));
	free(t1);
	free(t2);
	profile_release(&q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	struct folded_stats st;
	struct profile p;

	if (!null && !(null = fopen("/dev/null", "w")))
		abort();
	FILE *f = fmemopen((void *)data, size ? size : 1, "r");
	if (!f || profile_init(&p))
		abort();
	if (!size)
		fgetc(f); /* fmemopen needs a size of 1 at least: read the one byte away */
	enum folded_comm comm = size ? data[size - 1] % 3 : FOLDED_COMM_AUTO; /* first frame: comm? */
	int err = folded_read_comm(&p, f, comm, &st);
	fclose(f);
	FUZZ_ASSERT(err == 0 || err == -EINVAL || err == -EOVERFLOW);
	FUZZ_ASSERT(err != -EINVAL || memchr(data, 0, size)); /* only a NUL byte makes it not text */
	if (err) {
		profile_release(&p);
		return 0;
	}
	FUZZ_ASSERT(st.bad_lines <= st.lines && st.samples <= INT64_MAX);
	int64_t sum = 0;
	for (uint64_t i = 0; i < p.nsamples; i++)
		FUZZ_ASSERT(!__builtin_add_overflow(sum, p.samples[i].values[0], &sum));
	FUZZ_ASSERT((uint64_t)sum == st.samples);
	struct folded_opts o = { .annotate_inline = true, .comm_first = comm == FOLDED_COMM_YES,
				 .comm_header = true };
	FUZZ_ASSERT(folded_write(&p, null, &o) == 0);
	write_read_write(&p, &o);
	void *buf = NULL;
	size_t len = 0;
	FUZZ_ASSERT(pprof_encode(&p, false, &buf, &len) == 0);
	free(buf);
	profile_release(&p);
	return 0;
}
