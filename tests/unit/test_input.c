/* Unit tests for lib/format/input: format detection (gzip pprof, raw pprof, folded text, including text
 * whose first byte looks like a protobuf key), errors (-ENOENT, -EISDIR, -ENODATA, -EINVAL),
 * stdin (streamed folded text larger than the peek, gzip), hostile input (/dev/zero, counts
 * that overflow, a NUL byte), and saving: atomic for regular files (.old kept, no temporary
 * file left behind, mode 0600 for profiles, the mode asked for, owner set before the rename, a
 * .old that is a directory reported as such, stdout), written through for devices and FIFOs
 * (never replaced; a FIFO without reader fails after a bounded wait), links followed only when
 * trusted, a new file under a random name (file_write_new). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "format/input.h"
#include "format/pprof.h"
#include "model/profile.h"

static char dir[64];

/* dir/name in a static buffer (one of two, so two paths can be used at once). */
static const char *path_of(const char *name)
{
	static char bufs[2][256];
	static int which;
	char *b = bufs[which ^= 1];

	snprintf(b, sizeof(bufs[0]), "%s/%s", dir, name);
	return b;
}

/* Writes len bytes of data to path. */
static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* Reads a whole file (malloc'd); *len its size. */
static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0;

	assert_non_null(f);
	*len = 0;
	for (;;) {
		buf = realloc(buf, cap += 65536);
		size_t n = fread(buf + *len, 1, cap - *len, f);
		*len += n;
		if (n == 0)
			break;
	}
	fclose(f);
	return buf;
}

/* Names in dir, sorted and joined by ' '. */
static void list_dir(char *out, size_t size)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, alphasort);
	size_t len = 0;

	assert_true(n >= 0);
	out[0] = 0;
	for (int i = 0; i < n; i++) {
		if (ents[i]->d_name[0] != '.')
			len += snprintf(out + len, size - len, "%s%s", len ? " " : "", ents[i]->d_name);
		free(ents[i]);
	}
	free(ents);
}

/* A fresh scratch directory for each test. */
static int setup(void **state)
{
	strcpy(dir, "/tmp/firn-test-input.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

/* Removes the scratch directory. */
static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

/* A small profile: samples/count, stacks main;work (x3) and main (x1). */
static void build(struct profile *p, int64_t extra)
{
	assert_int_equal(profile_init(p), 0);
	profile_add_sample_type(p, "samples", "count");
	uint64_t m = profile_simple_location(p, 0, profile_function(p, "main", NULL, "", 0), 0);
	uint64_t w = profile_simple_location(p, 0, profile_function(p, "work", NULL, "", 0), 0);
	uint64_t s1[] = { w, m };
	int64_t v1 = 3 + extra, v2 = 1;
	static const struct profile_label none;
	assert_int_equal(profile_add_sample(p, s1, 2, &v1, &none, 0), 0);
	assert_int_equal(profile_add_sample(p, &m, 1, &v2, &none, 0), 0);
}

/* Loads path into a fresh profile and returns the code; *nsamples and *total from the result. */
static int load(const char *path, struct folded_stats *st, uint64_t *nsamples, int64_t *total)
{
	struct profile p;

	assert_int_equal(profile_init(&p), 0);
	int rc = profile_load(&p, path, st);
	*nsamples = p.nsamples;
	*total = 0;
	for (uint64_t i = 0; i < p.nsamples && p.nsample_types; i++)
		*total += p.samples[i].values[0];
	profile_release(&p);
	return rc;
}

/* Folded text, including text starting with bytes that are protobuf keys ('p' = 0x70 is
 * default_sample_type, '\n' = 0x0a is sample_type, '2' = 0x32 is string_table). */
static void test_detect_folded(void **state)
{
	static const char *const texts[] = {
		"main;work 3\nmain 1\n",
		"python3;main 3\nmain 1\n",
		"\nmain;work 3\n\nmain 1\n",
		"2nd;frame 3\nmain 1\n",
		"Z;a 3\nmain 1\n",
		"p;\x1b[1mbold\x1b[0m 3\nmain 1\n", /* a key, control characters, no NUL */
	};
	struct folded_stats st;
	uint64_t n;
	int64_t total;

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		write_file(path_of("f.txt"), texts[i], strlen(texts[i]));
		assert_int_equal(load(path_of("f.txt"), &st, &n, &total), 0);
		assert_int_equal(st.lines, 2);
		assert_int_equal(st.bad_lines, 0);
		assert_int_equal(st.samples, 4);
		assert_int_equal(n, 2);
		assert_int_equal(total, 4);
	}
}

/* Raw and gzip'd pprof, written by profile_save. */
static void test_detect_pprof(void **state)
{
	struct folded_stats st = { 9, 9, 9 };
	struct profile p;
	uint64_t n;
	int64_t total;

	build(&p, 0);
	assert_int_equal(profile_save(&p, path_of("p.pb"), false, false), 0);
	assert_int_equal(profile_save(&p, path_of("p.pb.gz"), true, false), 0);
	profile_release(&p);
	size_t len;
	char *raw = read_all(path_of("p.pb"), &len);
	assert_int_equal((unsigned char)raw[0], 0x0a);
	free(raw);
	assert_int_equal(load(path_of("p.pb"), &st, &n, &total), 0);
	assert_true(n == 2 && total == 4);
	assert_true(st.lines == 0 && st.bad_lines == 0 && st.samples == 0);
	assert_int_equal(load(path_of("p.pb.gz"), NULL, &n, &total), 0);
	assert_true(n == 2 && total == 4);
}

/* Missing file, directory, empty input, corrupt pprof, text without a count. */
static void test_errors(void **state)
{
	static const char garbage_pb[] = { 0x0a, 0x05, 0x08, 0x01 }; /* key, then truncated */
	static const char garbage_gz[] = { 0x1f, (char)0x8b, 0x08, 0x00, 0x01, 0x02 };
	uint64_t n;
	int64_t total;
	struct folded_stats st;

	assert_int_equal(load(path_of("missing"), NULL, &n, &total), -ENOENT);
	assert_int_equal(load(dir, NULL, &n, &total), -EISDIR);
	write_file(path_of("empty"), "", 0);
	assert_int_equal(load(path_of("empty"), NULL, &n, &total), -ENODATA);
	write_file(path_of("blank"), "\n  \n\t\n", 6);
	assert_int_equal(load(path_of("blank"), NULL, &n, &total), -ENODATA);
	write_file(path_of("bad.pb"), garbage_pb, sizeof(garbage_pb));
	assert_int_equal(load(path_of("bad.pb"), NULL, &n, &total), -EINVAL);
	write_file(path_of("bad.gz"), garbage_gz, sizeof(garbage_gz));
	assert_int_equal(load(path_of("bad.gz"), NULL, &n, &total), -EINVAL);
	write_file(path_of("prose"), "hello world\nno counts here\n", 27);
	assert_int_equal(load(path_of("prose"), &st, &n, &total), -EINVAL);
	assert_true(st.lines == 2 && st.bad_lines == 2);
	/* a folded file with some bad lines is still folded */
	write_file(path_of("mixed"), "hello world\nmain 2\n", 19);
	assert_int_equal(load(path_of("mixed"), &st, &n, &total), 0);
	assert_true(st.lines == 2 && st.bad_lines == 1 && total == 2);
}

/* Endless and hostile input: /dev/zero and /dev/urandom end at once (NUL bytes are not text,
 * random bytes no Profile); folded counts that sum past INT64_MAX are -EOVERFLOW at their line. */
static void test_hostile(void **state)
{
	struct folded_stats st;
	uint64_t n;
	int64_t total;

	assert_int_equal(load("/dev/zero", NULL, &n, &total), -EINVAL);
	assert_int_equal(load("/dev/urandom", NULL, &n, &total), -EINVAL);
	write_file(path_of("huge"), "a 9223372036854775807\n\nb 1\n", 27);
	assert_int_equal(load(path_of("huge"), &st, &n, &total), -EOVERFLOW);
	assert_int_equal(st.line, 3);
	write_file(path_of("nul"), "main 1\nx\0y 2\n", 13);
	assert_int_equal(load(path_of("nul"), &st, &n, &total), -EINVAL);
}

/* Runs profile_load("-") with stdin fed by a child process writing len bytes of data. */
static int load_stdin(const void *data, size_t len, struct folded_stats *st, uint64_t *n,
		      int64_t *total)
{
	int pfd[2], saved = dup(0);

	assert_int_equal(pipe(pfd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		close(pfd[0]);
		const char *b = data;
		while (len) {
			size_t chunk = len < 1000 ? len : 1000; /* small writes: reads see partial data */
			ssize_t w = write(pfd[1], b, chunk);
			if (w <= 0)
				_exit(1);
			b += w;
			len -= w;
		}
		_exit(0);
	}
	close(pfd[1]);
	dup2(pfd[0], 0);
	close(pfd[0]);
	int rc = load("-", st, n, total);
	dup2(saved, 0);
	close(saved);
	int status;
	waitpid(pid, &status, 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return rc;
}

/* "-" reads stdin: folded text larger than the peeked bytes, and gzip pprof. */
static void test_stdin(void **state)
{
	struct folded_stats st;
	struct profile p;
	uint64_t n;
	int64_t total;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	for (int i = 0; i < 10000; i++)
		fprintf(f, "root;frame number %d;leaf 2\n", i % 3000);
	fclose(f);
	assert_true(len > 3 * 65536);
	assert_int_equal(load_stdin(text, len, &st, &n, &total), 0);
	assert_true(st.lines == 10000 && st.bad_lines == 0 && st.samples == 20000);
	assert_true(n == 3000 && total == 20000);
	free(text);

	void *gz;
	build(&p, 0);
	assert_int_equal(pprof_encode(&p, true, &gz, &len), 0);
	profile_release(&p);
	assert_int_equal(load_stdin(gz, len, &st, &n, &total), 0);
	assert_true(n == 2 && total == 4);
	free(gz);
	assert_int_equal(load_stdin("", 0, &st, &n, &total), -ENODATA);
}

/* Saves profile variant `extra` (main;work counts 3 + extra) to path. */
static void save_variant(const char *path, int64_t extra, bool keep_old)
{
	struct profile p;

	build(&p, extra);
	assert_int_equal(profile_save(&p, path, true, keep_old), 0);
	profile_release(&p);
}

/* Total of the profile saved at path. */
static int64_t total_of(const char *path)
{
	uint64_t n;
	int64_t total;

	assert_int_equal(load(path, NULL, &n, &total), 0);
	return total;
}

/* keep_old keeps the previous file as .old; no temporary file stays. */
static void test_save_keep_old(void **state)
{
	char names[512];
	struct stat st;

	mode_t old_mask = umask(022);
	save_variant(path_of("s.pb.gz"), 0, true); /* nothing to keep yet */
	list_dir(names, sizeof(names));
	assert_string_equal(names, "s.pb.gz");
	assert_int_equal(stat(path_of("s.pb.gz"), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600); /* a profile holds the kernel's addresses */
	save_variant(path_of("s.pb.gz"), 10, true);
	list_dir(names, sizeof(names));
	assert_string_equal(names, "s.pb.gz s.pb.gz.old");
	assert_int_equal(total_of(path_of("s.pb.gz")), 14);
	assert_int_equal(total_of(path_of("s.pb.gz.old")), 4);
	save_variant(path_of("s.pb.gz"), 20, false); /* .old untouched */
	assert_int_equal(total_of(path_of("s.pb.gz")), 24);
	assert_int_equal(total_of(path_of("s.pb.gz.old")), 4);
	save_variant(path_of("s.pb.gz"), 30, true); /* .old replaced */
	assert_int_equal(total_of(path_of("s.pb.gz")), 34);
	assert_int_equal(total_of(path_of("s.pb.gz.old")), 24);
	list_dir(names, sizeof(names));
	assert_string_equal(names, "s.pb.gz s.pb.gz.old");
	unlink(path_of("s.pb.gz"));
	unlink(path_of("s.pb.gz.old"));
	umask(old_mask);
}

/* Failed saves leave existing files and no temporary file behind. */
static void test_save_errors(void **state)
{
	struct profile p;
	char names[512];

	build(&p, 0);
	assert_int_equal(profile_save(&p, path_of("no/such/dir/x.pb"), false, true), -ENOENT);
	assert_int_equal(mkdir(path_of("d"), 0755), 0);
	write_file(path_of("d/inside"), "x", 1);
	assert_int_equal(profile_save(&p, path_of("d"), false, true), -EISDIR);
	assert_int_equal(access(path_of("d/inside"), F_OK), 0);
	list_dir(names, sizeof(names));
	assert_string_equal(names, "d");
	/* an id that does not exist: nothing is written, the old file stays */
	write_file(path_of("keep.pb"), "old", 3);
	p.samples[0].location_ids[0] = 99;
	assert_int_equal(profile_save(&p, path_of("keep.pb"), false, true), -EINVAL);
	size_t len;
	char *b = read_all(path_of("keep.pb"), &len);
	assert_true(len == 3 && !memcmp(b, "old", 3));
	free(b);
	list_dir(names, sizeof(names));
	assert_string_equal(names, "d keep.pb");
	profile_release(&p);
	unlink(path_of("keep.pb"));
	unlink(path_of("d/inside"));
	rmdir(path_of("d"));
}

/* file_replace_atomic writes exactly the bytes given. */
static void test_replace_atomic(void **state)
{
	struct file_write keep = { .mode = 0644, .keep_old = true }, plain = { .mode = 0644 };
	size_t len;
	char *b;

	assert_int_equal(file_replace_atomic(path_of("r"), "first", 5, &plain), 0);
	assert_int_equal(file_replace_atomic(path_of("r"), "second!", 7, &keep), 0);
	b = read_all(path_of("r"), &len);
	assert_true(len == 7 && !memcmp(b, "second!", 7));
	free(b);
	b = read_all(path_of("r.old"), &len);
	assert_true(len == 5 && !memcmp(b, "first", 5));
	free(b);
	assert_int_equal(file_replace_atomic(path_of("r"), "", 0, &plain), 0);
	b = read_all(path_of("r"), &len);
	assert_int_equal(len, 0);
	free(b);
	unlink(path_of("r"));
	unlink(path_of("r.old"));
}

/* The mode asked for (less umask) and, as root, the owner asked for, set on the new file. */
static void test_replace_mode(void **state)
{
	struct file_write w = { .mode = 0600 };
	struct stat st;
	mode_t old_mask = umask(022);

	assert_int_equal(file_replace_atomic(path_of("m"), "x", 1, &w), 0);
	assert_int_equal(lstat(path_of("m"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	w.mode = 0644;
	assert_int_equal(file_replace_atomic(path_of("m"), "y", 1, &w), 0);
	assert_int_equal(lstat(path_of("m"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	if (geteuid() == 0) {
		w = (struct file_write){ .mode = 0600, .chown = true, .uid = 65534, .gid = 65533 };
		assert_int_equal(file_replace_atomic(path_of("m"), "z", 1, &w), 0);
		assert_int_equal(lstat(path_of("m"), &st), 0);
		assert_true(st.st_uid == 65534 && st.st_gid == 65533 && (st.st_mode & 07777) == 0600);
	}
	umask(old_mask);
}

/* A path.old that is a directory fails the save, says so (old_failed), and leaves path and
 * the directory as they were, with no temporary file. */
static void test_replace_old_dir(void **state)
{
	struct file_write w = { .mode = 0600, .keep_old = true };
	char names[512];
	size_t len;

	write_file(path_of("o"), "old", 3);
	assert_int_equal(mkdir(path_of("o.old"), 0755), 0);
	assert_int_equal(file_replace_atomic(path_of("o"), "new", 3, &w), -EISDIR);
	assert_true(w.old_failed);
	char *b = read_all(path_of("o"), &len);
	assert_true(len == 3 && !memcmp(b, "old", 3));
	free(b);
	list_dir(names, sizeof(names));
	assert_string_equal(names, "o o.old");
	w.keep_old = false; /* the error of the write itself is not blamed on .old */
	assert_int_equal(file_replace_atomic(path_of("no/o"), "new", 3, &w), -ENOENT);
	assert_false(w.old_failed);
}

/* A character device (root: mknod of /dev/null's numbers) is written through, never replaced
 * nor moved to .old; a block device is refused. */
static void test_replace_device(void **state)
{
	struct file_write w = { .mode = 0600, .keep_old = true };
	char names[512];
	struct stat st;

	if (mknod(path_of("null"), S_IFCHR | 0666, makedev(1, 3))) {
		skip(); /* not root */
		return;
	}
	assert_int_equal(file_replace_atomic(path_of("null"), "profile", 7, &w), 0);
	assert_int_equal(lstat(path_of("null"), &st), 0);
	assert_true(S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3));
	list_dir(names, sizeof(names));
	assert_string_equal(names, "null");
	assert_int_equal(file_write_kind(path_of("null")), FILE_WRITE_THROUGH);
	assert_int_equal(mknod(path_of("blk"), S_IFBLK | 0600, makedev(7, 200)), 0);
	assert_int_equal(file_replace_atomic(path_of("blk"), "profile", 7, &w), -EOPNOTSUPP);
	assert_int_equal(lstat(path_of("blk"), &st), 0);
	assert_true(S_ISBLK(st.st_mode));
}

/* A FIFO with a reader gets the bytes and stays a FIFO; without one the write fails at once
 * (-ENXIO) rather than blocking. */
static void test_replace_fifo(void **state)
{
	struct file_write w = { .mode = 0600, .keep_old = true };
	char names[512], got[16];
	struct stat st;

	assert_int_equal(mkfifo(path_of("fifo"), 0600), 0);
	assert_int_equal(file_replace_atomic(path_of("fifo"), "lost", 4, &w), -ENXIO);
	int rd = open(path_of("fifo"), O_RDONLY | O_NONBLOCK);
	assert_true(rd >= 0);
	assert_int_equal(file_replace_atomic(path_of("fifo"), "profile", 7, &w), 0);
	assert_int_equal(read(rd, got, sizeof(got)), 7);
	assert_memory_equal(got, "profile", 7);
	close(rd);
	assert_int_equal(lstat(path_of("fifo"), &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	list_dir(names, sizeof(names));
	assert_string_equal(names, "fifo");
}

/* A link of one's own is written through (a regular file in place); a link owned by someone
 * else (root only: lchown) is replaced and its target left alone; a dangling one is replaced. */
static void test_replace_links(void **state)
{
	struct file_write w = { .mode = 0600, .keep_old = true };
	struct stat st;
	size_t len;
	char *b;

	write_file(path_of("target"), "target", 6);
	assert_int_equal(symlink("target", path_of("mine")), 0);
	assert_int_equal(file_replace_atomic(path_of("mine"), "through", 7, &w), 0);
	assert_true(!lstat(path_of("mine"), &st) && S_ISLNK(st.st_mode));
	b = read_all(path_of("target"), &len);
	assert_true(len == 7 && !memcmp(b, "through", 7));
	free(b);
	assert_int_equal(access(path_of("mine.old"), F_OK), -1);
	assert_int_equal(symlink("nowhere", path_of("dangling")), 0);
	assert_int_equal(file_replace_atomic(path_of("dangling"), "new", 3, &w), 0);
	assert_true(!lstat(path_of("dangling"), &st) && S_ISREG(st.st_mode));
	assert_int_equal(access(path_of("nowhere"), F_OK), -1);
	if (geteuid() != 0)
		return;
	assert_int_equal(symlink("target", path_of("planted")), 0);
	assert_int_equal(lchown(path_of("planted"), 65534, 65534), 0);
	assert_int_equal(file_write_kind(path_of("planted")), FILE_WRITE_REPLACE);
	assert_int_equal(file_open_read(path_of("planted")), -EACCES);
	int fd = file_open_read(path_of("mine"));
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(file_replace_atomic(path_of("planted"), "evil", 4, &w), 0);
	assert_true(!lstat(path_of("planted"), &st) && S_ISREG(st.st_mode));
	b = read_all(path_of("target"), &len);
	assert_true(len == 7 && !memcmp(b, "through", 7));
	free(b);
}

/* file_write_new makes a new 0600 file under a random name with the bytes given. */
static void test_write_new(void **state)
{
	struct file_write w = { .mode = 0644 };
	char tmpl[300];
	struct stat st;
	size_t len;

	snprintf(tmpl, sizeof(tmpl), "%s/firn-XXXXXX.pb.gz", dir);
	assert_int_equal(file_write_new(tmpl, 6, "saved", 5, &w), 0);
	assert_int_equal(strncmp(tmpl + strlen(dir), "/firn-", 6), 0);
	assert_string_equal(tmpl + strlen(tmpl) - 6, ".pb.gz");
	assert_true(strstr(tmpl, "XXXXXX") == NULL);
	assert_int_equal(lstat(tmpl, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	char *b = read_all(tmpl, &len);
	assert_true(len == 5 && !memcmp(b, "saved", 5));
	free(b);
	snprintf(tmpl, sizeof(tmpl), "%s/no/firn-XXXXXX.pb.gz", dir);
	assert_int_equal(file_write_new(tmpl, 6, "saved", 5, &w), -ENOENT);
}

/* profile_save("-") writes the encoding to stdout. */
static void test_save_stdout(void **state)
{
	struct profile p;
	void *want;
	size_t wlen, len;

	build(&p, 0);
	assert_int_equal(pprof_encode(&p, false, &want, &wlen), 0);
	fflush(stdout);
	int saved = dup(1), fd = open(path_of("out"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, 1);
	close(fd);
	int rc = profile_save(&p, "-", false, false);
	dup2(saved, 1);
	close(saved);
	assert_int_equal(rc, 0);
	char *got = read_all(path_of("out"), &len);
	assert_int_equal(len, wlen);
	assert_memory_equal(got, want, len);
	free(got);
	free(want);
	profile_release(&p);
	unlink(path_of("out"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_detect_folded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_detect_pprof, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stdin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_save_keep_old, setup, teardown),
		cmocka_unit_test_setup_teardown(test_save_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replace_atomic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replace_mode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replace_old_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replace_device, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replace_fifo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replace_links, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_new, setup, teardown),
		cmocka_unit_test_setup_teardown(test_save_stdout, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
