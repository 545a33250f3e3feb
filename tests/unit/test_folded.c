/* Unit tests for lib/format/folded: exact bytes written for a known profile under each option (kernel,
 * JIT and inline suffixes, comm/pid/tid first, no_kernel, value index), and reading (spaces in
 * frames, bad lines, decimal counts, merging, frame kinds), with round trips through folded
 * text and through pprof. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/folded.h"
#include "format/pprof.h"
#include "model/profile.h"

/* Labels comm (string), pid and tid (numbers); comm NULL for none. */
static void labels3(struct profile *p, struct profile_label *l, const char *comm, int pid, int tid)
{
	l[0] = (struct profile_label){ .key = profile_intern(p, "comm"), .str = profile_intern(p, comm) };
	l[1] = (struct profile_label){ .key = profile_intern(p, "pid"), .num = pid };
	l[2] = (struct profile_label){ .key = profile_intern(p, "tid"), .num = tid };
}

/* Adds a sample with values (v, 10 v). */
static void add(struct profile *p, const uint64_t *locs, uint32_t n, int64_t v,
		const struct profile_label *l, uint32_t nl)
{
	int64_t vals[2] = { v, 10 * v };
	static const struct profile_label none;

	assert_int_equal(profile_add_sample(p, locs, n, vals, nl ? l : &none, nl), 0);
}

/* A profile with user, inline, kernel, JIT, unresolved and oddly named frames. */
static void build(struct profile *p)
{
	struct profile_label l[3];

	assert_int_equal(profile_init(p), 0);
	profile_add_sample_type(p, "samples", "count");
	profile_add_sample_type(p, "cpu", "nanoseconds");
	int64_t app = profile_add_mapping(p, 0x1000, 0x9000, 0, "/usr/bin/app", "");
	int64_t kern = profile_add_mapping(p, 0, 0, 0, "[kernel.kallsyms]", "");
	int64_t jit = profile_add_mapping(p, 0, 0, 0, "[jit]", "");
	uint64_t m = profile_simple_location(p, app, profile_function(p, "main", NULL, "", 0), 0);
	struct profile_line inl[2] = { { profile_function(p, "helper", NULL, "", 0), 3 },
				       { profile_function(p, "work", NULL, "", 0), 9 } };
	uint64_t w = profile_add_location(p, app, 0x1100, inl, 2);
	uint64_t k1 = profile_simple_location(p, kern, profile_function(p, "ksys_read", NULL, "", 0),
					      FRAME_KERNEL);
	uint64_t k2 = profile_simple_location(
		p, kern, profile_function(p, "entry_SYSCALL_64", NULL, "", 0), FRAME_KERNEL);
	uint64_t j = profile_simple_location(p, jit, profile_function(p, "jitted", NULL, "", 0),
					     FRAME_JIT);
	uint64_t raw = profile_add_location(p, app, 0x2000, NULL, 0);
	uint64_t tw = profile_simple_location(p, app, profile_function(p, "two words", NULL, "", 0), 0);
	uint64_t odd = profile_simple_location(
		p, app, profile_function(p, "semi;colon\nname", NULL, "", 0), FRAME_USER);

	labels3(p, l, "app", 10, 11);
	add(p, (uint64_t[]){ k1, k2, w, m }, 4, 5, l, 3);
	add(p, (uint64_t[]){ w, m }, 2, 3, l, 3);
	labels3(p, l, "app", 10, 12);
	add(p, (uint64_t[]){ j, m }, 2, 2, l, 3);
	add(p, (uint64_t[]){ w, m }, 2, 4, l, 3);
	add(p, (uint64_t[]){ raw, m }, 2, 0, l, 3); /* zero: left out */
	labels3(p, l, "other", 20, 20);
	add(p, (uint64_t[]){ tw, m }, 2, 1, l, 3);
	add(p, (uint64_t[]){ raw, m }, 2, 1, NULL, 0);
	add(p, (uint64_t[]){ odd, m }, 2, 1, NULL, 0);
}

/* Writes p with o into a string (caller frees); asserts the return code. */
static char *write_str(struct profile *p, const struct folded_opts *o, int want)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(folded_write(p, f, o), want);
	fclose(f);
	return buf;
}

/* Asserts p written with o is exactly want. */
static void expect_write(struct profile *p, const struct folded_opts *o, const char *want)
{
	char *got = write_str(p, o, 0);

	assert_string_equal(got, want);
	free(got);
}

/* Suffixes, inline annotation, no_kernel, value_index and merged, sorted lines. */
static void test_write_default(void **state)
{
	struct profile p;
	struct folded_opts o = { 0 };

	build(&p);
	expect_write(&p, &o,
		     "main;[app] 1\n"
		     "main;jitted_[j] 2\n"
		     "main;semi:colon name 1\n"
		     "main;two words 1\n"
		     "main;work;helper 7\n"
		     "main;work;helper;entry_SYSCALL_64_[k];ksys_read_[k] 5\n");
	o.annotate_inline = true;
	expect_write(&p, &o,
		     "main;[app] 1\n"
		     "main;jitted_[j] 2\n"
		     "main;semi:colon name 1\n"
		     "main;two words 1\n"
		     "main;work;helper_[i] 7\n"
		     "main;work;helper_[i];entry_SYSCALL_64_[k];ksys_read_[k] 5\n");
	o.no_kernel = true;
	expect_write(&p, &o,
		     "main;[app] 1\n"
		     "main;jitted_[j] 2\n"
		     "main;semi:colon name 1\n"
		     "main;two words 1\n"
		     "main;work;helper_[i] 12\n");
	o.value_index = 1;
	expect_write(&p, &o,
		     "main;[app] 10\n"
		     "main;jitted_[j] 20\n"
		     "main;semi:colon name 10\n"
		     "main;two words 10\n"
		     "main;work;helper_[i] 120\n");
	o.value_index = 2;
	free(write_str(&p, &o, -EINVAL));
	profile_release(&p);
}

/* Names with control characters a terminal would obey: escaped ("\x1b"), as the table does;
 * ';' and newlines replaced as before; UTF-8 text kept. */
static void test_write_controls(void **state)
{
	struct profile p;
	struct folded_opts o = { .comm_first = true };
	struct profile_label l[3];

	assert_int_equal(profile_init(&p), 0);
	assert_int_equal(profile_add_sample_type(&p, "samples", "count"), 0);
	uint64_t loc = profile_simple_location(
		&p, 0, profile_function(&p, "\x1b]0;pwned\a\tx\n\xc2\x9b\xc3\xa9", NULL, "", 0), 0);
	labels3(&p, l, "\x1b[31mevil", 7, 8);
	add(&p, &loc, 1, 3, l, 3);
	expect_write(&p, &o, "\\x1b[31mevil;\\x1b]0:pwned\\x07\\x09x \\xc2\\x9b\xc3\xa9 3\n");
	profile_release(&p);
}

/* comm, comm-PID and comm-PID/TID as the first frame. */
static void test_write_comm(void **state)
{
	struct profile p;
	struct folded_opts o = { .comm_first = true, .annotate_inline = true };

	build(&p);
	expect_write(&p, &o,
		     "[unknown];main;[app] 1\n"
		     "[unknown];main;semi:colon name 1\n"
		     "app;main;jitted_[j] 2\n"
		     "app;main;work;helper_[i] 7\n"
		     "app;main;work;helper_[i];entry_SYSCALL_64_[k];ksys_read_[k] 5\n"
		     "other;main;two words 1\n");
	o.pid = true;
	expect_write(&p, &o,
		     "[unknown];main;[app] 1\n"
		     "[unknown];main;semi:colon name 1\n"
		     "app-10;main;jitted_[j] 2\n"
		     "app-10;main;work;helper_[i] 7\n"
		     "app-10;main;work;helper_[i];entry_SYSCALL_64_[k];ksys_read_[k] 5\n"
		     "other-20;main;two words 1\n");
	o.tid = true;
	expect_write(&p, &o,
		     "[unknown];main;[app] 1\n"
		     "[unknown];main;semi:colon name 1\n"
		     "app-10/11;main;work;helper_[i] 3\n"
		     "app-10/11;main;work;helper_[i];entry_SYSCALL_64_[k];ksys_read_[k] 5\n"
		     "app-10/12;main;jitted_[j] 2\n"
		     "app-10/12;main;work;helper_[i] 4\n"
		     "other-20/20;main;two words 1\n");
	profile_release(&p);
}

/* An empty profile writes nothing. */
static void test_write_empty(void **state)
{
	struct profile p;
	struct folded_opts o = { 0 };

	assert_int_equal(profile_init(&p), 0);
	expect_write(&p, &o, "");
	profile_release(&p);
}

/* Reads text into a fresh profile; asserts the return code. */
static void read_str(struct profile *p, const char *text, struct folded_stats *st)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");

	assert_non_null(f);
	assert_int_equal(profile_init(p), 0);
	assert_int_equal(folded_read(p, f, st), 0);
	fclose(f);
}

/* The text of sample i's frames ("name/kind" joined by ' '). */
static void frames_str(struct profile *p, uint64_t i, char *out, size_t size)
{
	struct profile_frame *fr = NULL;
	size_t cap = 0, n = 0;
	int64_t nf = profile_frames(p, &p->samples[i], &fr, &cap);

	assert_true(nf >= 0);
	out[0] = 0;
	for (int64_t k = 0; k < nf; k++)
		n += snprintf(out + n, size - n, "%s%s/%d", k ? " " : "", profile_str(p, fr[k].name),
			      fr[k].kind);
	free(fr);
}

/* Spaces in frames, bad lines, decimal counts, merging and frame kinds. */
static void test_read(void **state)
{
	static const char text[] =
		"main;foo bar;baz 3\n"
		"main;foo bar;baz\t2\n"
		"   \n"
		"\n"
		"main;work;helper_[i];inner_[i];sys_read_[k] 4\n"
		"main;jit_[j] 1.5\n"
		"main;x 2.4\n"
		"no count here\n"
		" 7\n"
		"main;neg -3\n"
		"main;zero 0\n"
		"main;a 12abc\n"
		"main;a 1e5\n"
		"main;x 1\r\n"
		"last;line;without;newline 1";
	struct folded_stats st;
	struct profile p;
	char buf[512];

	read_str(&p, text, &st);
	assert_int_equal(st.lines, 13);
	assert_int_equal(st.bad_lines, 5);
	assert_int_equal(st.samples, 3 + 2 + 4 + 2 + 2 + 0 + 1 + 1);
	assert_int_equal(p.nsample_types, 1);
	assert_string_equal(profile_str(&p, p.sample_types[0].type), "samples");
	assert_string_equal(profile_str(&p, p.sample_types[0].unit), "count");
	assert_int_equal(p.nsamples, 5);
	frames_str(&p, 0, buf, sizeof(buf));
	assert_string_equal(buf, "main/0 foo bar/0 baz/0");
	assert_int_equal(p.samples[0].values[0], 5);
	frames_str(&p, 1, buf, sizeof(buf));
	assert_string_equal(buf, "main/0 work/0 helper/3 inner/3 sys_read/1");
	assert_int_equal(p.samples[1].nlocs, 3);
	const struct profile_location *w = &p.locations[p.samples[1].location_ids[1] - 1];
	assert_int_equal(w->nlines, 3);
	assert_string_equal(profile_str(&p, p.functions[w->lines[0].function_id - 1].name), "inner");
	const struct profile_location *k = &p.locations[p.samples[1].location_ids[0] - 1];
	assert_string_equal(profile_str(&p, p.mappings[k->mapping_id - 1].filename),
			    "[kernel.kallsyms]");
	frames_str(&p, 2, buf, sizeof(buf));
	assert_string_equal(buf, "main/0 jit/2");
	const struct profile_location *j = &p.locations[p.samples[2].location_ids[0] - 1];
	assert_string_equal(profile_str(&p, p.mappings[j->mapping_id - 1].filename), "[jit]");
	assert_int_equal(p.samples[2].values[0], 2);
	frames_str(&p, 3, buf, sizeof(buf));
	assert_string_equal(buf, "main/0 x/0");
	assert_int_equal(p.samples[3].values[0], 3);
	assert_int_equal(p.samples[4].values[0], 1);
	/* frames are interned: "main" is one function and one location */
	assert_int_equal(p.samples[0].location_ids[2], p.samples[3].location_ids[1]);
	profile_release(&p);
}

/* Reads len bytes of text into a fresh profile; returns folded_read's code. */
static int read_rc(struct profile *p, const char *text, size_t len, struct folded_stats *st)
{
	FILE *f = fmemopen((void *)text, len, "r");

	assert_non_null(f);
	assert_int_equal(profile_init(p), 0);
	int rc = folded_read(p, f, st);
	fclose(f);
	return rc;
}

/* Counts that sum past INT64_MAX (on one stack or on several), or one count over it, are
 * -EOVERFLOW at the line that does it, never a wrapped sum; exactly INT64_MAX is read. */
static void test_read_overflow(void **state)
{
	static const struct {
		const char *text;
		int rc;
		uint64_t line;
	} cases[] = {
		{ "a;b 9223372036854775807\nc;d 9223372036854775807\n", -EOVERFLOW, 2 },
		{ "a;b 9223372036854775807\n\na;b 9223372036854775807\n", -EOVERFLOW, 3 },
		{ "x 1\na 9223372036854775808\n", -EOVERFLOW, 2 },
		{ "a 99999999999999999999999\n", -EOVERFLOW, 1 },
		{ "a 9223372036854775807.5\n", -EOVERFLOW, 1 },
		{ "a 9223372036854775806\nb 1\n", 0, 2 },
		{ "a 9223372036854775806.5\n", 0, 1 },
	};
	struct folded_stats st;
	struct profile p;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(read_rc(&p, cases[i].text, strlen(cases[i].text), &st), cases[i].rc);
		assert_int_equal(st.line, cases[i].line);
		if (!cases[i].rc)
			assert_int_equal(st.samples, INT64_MAX);
		profile_release(&p);
	}
}

/* The reader adds each sample a line late (its index slot prefetched meanwhile): the profile
 * still holds every sample read before an error, in input order, and a stack repeated on the
 * next line still merges into one sample. */
static void test_read_deferred(void **state)
{
	static const char text[] = "a;b 2\nc 1\nc 4\na;b 1\nd 9223372036854775807\n";
	struct folded_stats st;
	struct profile p;
	char buf[64];

	assert_int_equal(read_rc(&p, text, strlen(text), &st), -EOVERFLOW);
	assert_int_equal(st.line, 5);
	assert_int_equal(p.nsamples, 2);
	frames_str(&p, 0, buf, sizeof(buf));
	assert_string_equal(buf, "a/0 b/0");
	assert_int_equal(p.samples[0].values[0], 3);
	frames_str(&p, 1, buf, sizeof(buf));
	assert_string_equal(buf, "c/0");
	assert_int_equal(p.samples[1].values[0], 5);
	profile_release(&p);
}

/* A NUL byte is not text (binary data, /dev/zero): -EINVAL at once, not a skipped line. */
static void test_read_nul(void **state)
{
	static const char text[] = "main;a 1\nmain;b\0 2\nmain;c 3\n";
	struct folded_stats st;
	struct profile p;

	assert_int_equal(read_rc(&p, text, sizeof(text) - 1, &st), -EINVAL);
	profile_release(&p);
}

/* Reading then writing gives the merged, sorted text; so does a detour through pprof. */
static void test_round_trip(void **state)
{
	static const char in[] =
		"b;a 1\n"
		"a;b;c_[i] 2\n"
		"a;b 3\n"
		"b;a 4\n"
		"x_[i];y 1\n"
		"k_[k];a;b_[i];c_[i];d 5\n"
		"a;;b 1\n"
		"j_[j];j2_[j];with space 6\n"
		"a;b;c_[i] 1\n";
	static const char want[] =
		"a;;b 1\n"
		"a;b 3\n"
		"a;b;c_[i] 3\n"
		"b;a 5\n"
		"j_[j];j2_[j];with space 6\n"
		"k_[k];a;b_[i];c_[i];d 5\n"
		"x_[i];y 1\n";
	struct folded_opts o = { .annotate_inline = true };
	struct profile p, q;
	void *buf;
	size_t len;

	read_str(&p, in, NULL);
	char *out = write_str(&p, &o, 0);
	assert_string_equal(out, want);
	free(out);
	assert_int_equal(pprof_encode(&p, true, &buf, &len), 0);
	assert_int_equal(profile_init(&q), 0);
	assert_int_equal(pprof_decode(&q, buf, len), 0);
	/* a leading inline frame has nothing to be inlined into: pprof has no place for its kind */
	out = write_str(&q, &o, 0);
	assert_string_equal(out, "a;;b 1\n"
				 "a;b 3\n"
				 "a;b;c_[i] 3\n"
				 "b;a 5\n"
				 "j_[j];j2_[j];with space 6\n"
				 "k_[k];a;b_[i];c_[i];d 5\n"
				 "x;y 1\n");
	free(out);
	free(buf);
	profile_release(&p);
	profile_release(&q);
}

/* Reads text with comm into a fresh profile; asserts the return code. */
static void read_comm(struct profile *p, const char *text, enum folded_comm comm,
		      struct folded_stats *st)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");

	assert_non_null(f);
	assert_int_equal(profile_init(p), 0);
	assert_int_equal(folded_read_comm(p, f, comm, st), 0);
	fclose(f);
}

/* The comm header: firn writes it before stacks that start with the process name, and reading
 * them back turns that frame into the "comm" label again: same text, same labels. */
static void test_comm_header(void **state)
{
	struct folded_opts o = { .comm_first = true, .comm_header = true, .annotate_inline = true };
	struct folded_stats st;
	struct profile p, q;
	char buf[512];

	build(&p);
	char *out = write_str(&p, &o, 0);
	assert_string_equal(out, FOLDED_COMM_HEADER "\n"
				 "[unknown];main;[app] 1\n"
				 "[unknown];main;semi:colon name 1\n"
				 "app;main;jitted_[j] 2\n"
				 "app;main;work;helper_[i] 7\n"
				 "app;main;work;helper_[i];entry_SYSCALL_64_[k];ksys_read_[k] 5\n"
				 "other;main;two words 1\n");
	read_str(&q, out, &st);
	assert_int_equal(st.lines, 6); /* the header is a comment, not a (bad) line */
	assert_int_equal(st.bad_lines, 0);
	assert_int_equal(q.nsamples, 6);
	for (uint64_t i = 0; i < q.nsamples; i++) {
		const char *comm = profile_label_str(&q, &q.samples[i], "comm");
		frames_str(&q, i, buf, sizeof(buf));
		assert_non_null(comm);
		assert_string_equal(comm, i < 2 ? "[unknown]" : i < 5 ? "app" : "other");
		assert_memory_equal(buf, "main/0", 6); /* the process name is not a frame */
	}
	char *again = write_str(&q, &o, 0);
	assert_string_equal(again, out);
	free(again);
	free(out);
	profile_release(&p);
	profile_release(&q);
}

/* Without the header the first frame is a function unless FOLDED_COMM_YES; FOLDED_COMM_NO reads
 * it as a function even after the header; a header after the first stack is only a comment; a
 * stack of the process name alone is a sample without frames. */
static void test_comm_modes(void **state)
{
	static const char plain[] = "perl;main;run 3\nperl 2\n";
	static const char late[] = "perl;main 1\n" FOLDED_COMM_HEADER "\nperl;main 1\n";
	struct folded_stats st;
	struct profile p;
	char buf[256];

	read_comm(&p, plain, FOLDED_COMM_AUTO, &st);
	frames_str(&p, 0, buf, sizeof(buf));
	assert_string_equal(buf, "perl/0 main/0 run/0");
	assert_null(profile_label_str(&p, &p.samples[0], "comm"));
	profile_release(&p);

	read_comm(&p, plain, FOLDED_COMM_YES, &st);
	assert_int_equal(p.nsamples, 2);
	frames_str(&p, 0, buf, sizeof(buf));
	assert_string_equal(buf, "main/0 run/0");
	assert_string_equal(profile_label_str(&p, &p.samples[0], "comm"), "perl");
	assert_int_equal(p.samples[1].nlocs, 0);
	assert_int_equal(p.samples[1].values[0], 2);
	assert_string_equal(profile_label_str(&p, &p.samples[1], "comm"), "perl");
	profile_release(&p);

	read_comm(&p, FOLDED_COMM_HEADER "\nperl;main 1\n", FOLDED_COMM_NO, &st);
	assert_int_equal(st.lines, 1);
	assert_int_equal(st.bad_lines, 0);
	frames_str(&p, 0, buf, sizeof(buf));
	assert_string_equal(buf, "perl/0 main/0");
	profile_release(&p);

	read_comm(&p, late, FOLDED_COMM_AUTO, &st);
	assert_int_equal(st.bad_lines, 0);
	assert_int_equal(p.nsamples, 1);
	assert_int_equal(p.samples[0].values[0], 2);
	assert_null(profile_label_str(&p, &p.samples[0], "comm"));
	profile_release(&p);
}

/* pprof takes the first mapping for the main binary: folded stacks with kernel frames must not
 * make it the kernel's. */
static void test_kernel_not_main(void **state)
{
	struct profile p;

	read_str(&p, "do_idle_[k];halt_[k] 3\nmain;work 1\n", NULL);
	assert_true(p.nmappings >= 2);
	assert_string_equal(profile_str(&p, p.mappings[0].filename), "");
	assert_int_equal(p.mappings[0].kind, FRAME_USER);
	assert_string_equal(profile_str(&p, p.mappings[1].filename), "[kernel.kallsyms]");
	profile_release(&p);
	read_str(&p, "main;work 1\n", NULL);
	assert_int_equal(p.nmappings, 0); /* user frames alone need none */
	profile_release(&p);
}

/* Many distinct stacks: every line comes back, counts intact. */
static void test_many_stacks(void **state)
{
	char *text = NULL, *out;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct folded_opts o = { .annotate_inline = true };
	struct folded_stats st;
	struct profile p;

	for (int i = 0; i < 5000; i++)
		fprintf(f, "root;mid%03d;leaf%04d %d\n", i / 50, i, i + 1);
	fclose(f);
	read_str(&p, text, &st);
	assert_int_equal(st.lines, 5000);
	assert_int_equal(st.bad_lines, 0);
	assert_int_equal(st.samples, 5000 * 5001 / 2);
	assert_int_equal(p.nsamples, 5000);
	assert_int_equal(p.nfunctions, 1 + 100 + 5000);
	out = write_str(&p, &o, 0);
	assert_string_equal(out, text); /* the input was already sorted */
	free(out);
	free(text);
	profile_release(&p);
}

/* A generated input: n lines, line i made by line_fn; line i < 4 may be padded with spaces
 * before its newline (a last line padded so has none). */
struct gen {
	uint64_t i, n;
	size_t (*line_fn)(uint64_t i, char *buf, size_t size);
	char buf[256];
	size_t len, pos;
	size_t pad_left; /* spaces still to serve before the pending newline */
	bool newline;    /* one is pending after them */
	size_t pad[4];
};

/* Serves up to n bytes of what is pending (line text, then spaces, then a newline). */
static size_t gen_pending(struct gen *g, char *out, size_t n)
{
	size_t k = 0;

	if (g->pos < g->len) {
		k = g->len - g->pos < n ? g->len - g->pos : n;
		memcpy(out, g->buf + g->pos, k);
		g->pos += k;
	} else if (g->pad_left) {
		k = g->pad_left < n ? g->pad_left : n;
		memset(out, ' ', k);
		g->pad_left -= k;
	} else if (g->newline) {
		out[0] = '\n';
		g->newline = false;
		k = 1;
	}
	return k;
}

/* fopencookie read over struct gen: lines are made as they are read, long ones never held. */
static ssize_t gen_read(void *cookie, char *out, size_t n)
{
	struct gen *g = cookie;
	size_t done = 0;

	while (done < n) {
		size_t k = gen_pending(g, out + done, n - done);
		done += k;
		if (k)
			continue;
		if (g->i == g->n)
			break;
		g->len = g->line_fn(g->i, g->buf, sizeof(g->buf));
		g->pos = 0;
		if (g->i < 4 && g->pad[g->i]) {
			g->len--; /* the newline comes after the spaces */
			g->pad_left = g->pad[g->i];
			g->newline = g->i + 1 < g->n;
		}
		g->i++;
	}
	return done;
}

/* Reads the generated lines into a fresh profile. */
static void read_gen(struct profile *p, struct gen *g, struct folded_stats *st)
{
	cookie_io_functions_t io = { .read = gen_read };
	FILE *f = fopencookie(g, "r", io);

	assert_non_null(f);
	assert_int_equal(profile_init(p), 0);
	assert_int_equal(folded_read(p, f, st), 0);
	fclose(f);
}

/* Line i of the long-line input: "long;i i+1". */
static size_t long_line(uint64_t i, char *buf, size_t size)
{
	return snprintf(buf, size, "long;%d %d\n", (int)i, (int)i + 1);
}

/* The longest line kept is FOLDED_MAX_LINE bytes, newline included; a longer one, or a longer
 * last line without a newline, is one bad line, and the lines around it still parse. */
static void test_read_long_lines(void **state)
{
	size_t text = strlen("long;0 1\n");
	struct gen g = { .n = 4, .line_fn = long_line,
			 .pad = { FOLDED_MAX_LINE - text, FOLDED_MAX_LINE - text + 1, 0,
				  FOLDED_MAX_LINE - text + 2 } };
	struct folded_stats st;
	struct profile p;
	char buf[64];

	read_gen(&p, &g, &st);
	assert_int_equal(st.lines, 4);
	assert_int_equal(st.bad_lines, 2);
	assert_int_equal(st.samples, 1 + 3);
	assert_int_equal(p.nsamples, 2);
	frames_str(&p, 0, buf, sizeof(buf));
	assert_string_equal(buf, "long/0 0/0");
	frames_str(&p, 1, buf, sizeof(buf));
	assert_string_equal(buf, "long/0 2/0");
	profile_release(&p);

	/* the same last line one byte shorter is FOLDED_MAX_LINE bytes: kept */
	g = (struct gen){ .n = 4, .line_fn = long_line, .pad = { 0, 0, 0, FOLDED_MAX_LINE - text + 1 } };
	read_gen(&p, &g, &st);
	assert_int_equal(st.lines, 4);
	assert_int_equal(st.bad_lines, 0);
	profile_release(&p);
}

/* The name of line i: len 1 to 23 bytes of 'a' but one byte (at pos) from 'b' to 'u'. */
static void gen_name(uint64_t i, size_t *len, size_t *pos, int *ch)
{
	*len = 1 + i % 23;
	*pos = (i / 23) % *len;
	*ch = (i / 23 / *len) % 20;
}

/* Line i of the many-names input: "root;nLEN;NAME COUNT". */
static size_t name_line(uint64_t i, char *buf, size_t size)
{
	char name[24];
	size_t len, pos;
	int ch;

	gen_name(i, &len, &pos, &ch);
	memset(name, 'a', len);
	name[len] = 0;
	name[pos] = 'b' + ch;
	return snprintf(buf, size, "root;n%zu;%s %d\n", len, name, (int)(i % 7) + 1);
}

/* Lines across the reader's blocks (about 3 MB) with names that differ in one byte, so that a
 * byte a hash or a compare skipped would merge two: every name and count comes back. */
static void test_read_blocks(void **state)
{
	static bool seen[24][23][20];
	struct gen g = { .n = 120000, .line_fn = name_line };
	struct folded_stats st;
	struct profile p;
	uint64_t sum = 0, distinct = 0, got = 0;

	for (uint64_t i = 0; i < g.n; i++) {
		size_t len, pos;
		int ch;
		gen_name(i, &len, &pos, &ch);
		distinct += !seen[len][pos][ch];
		seen[len][pos][ch] = true;
		sum += i % 7 + 1;
	}
	read_gen(&p, &g, &st);
	assert_int_equal(st.lines, g.n);
	assert_int_equal(st.bad_lines, 0);
	assert_int_equal(st.samples, sum);
	assert_int_equal(p.nsamples, distinct);
	assert_int_equal(p.nfunctions, 1 + 23 + distinct);
	for (uint64_t i = 0; i < p.nsamples; i++)
		got += p.samples[i].values[0];
	assert_int_equal(got, sum);
	profile_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_default),
		cmocka_unit_test(test_write_comm),
		cmocka_unit_test(test_write_empty),
		cmocka_unit_test(test_write_controls),
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_read_overflow),
		cmocka_unit_test(test_read_deferred),
		cmocka_unit_test(test_read_nul),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_many_stacks),
		cmocka_unit_test(test_comm_header),
		cmocka_unit_test(test_comm_modes),
		cmocka_unit_test(test_kernel_not_main),
		cmocka_unit_test(test_read_long_lines),
		cmocka_unit_test(test_read_blocks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
