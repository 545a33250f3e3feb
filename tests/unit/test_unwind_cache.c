/* Unit tests for lib/unwind/unwind_cache (and the cache_dir under it): a table written comes back equal;
 * a table is served only for the file it was built from (identity and owner), never for another
 * file with the same build id; a file with a bad checksum, rows, build id or version, owned by another user, writable by
 * others, a symlink or a FIFO is refused; a folder owned by another user, open to others, a
 * symlink, a system folder ("/", "/usr", one to be made under /usr, also through a symlink) or the
 * home folder is refused, FIRN_UNWIND_CACHE naming one is reported once; past the size bound the
 * least recently used tables go down to 90 % of it, and never a file firn did not write (a user's notes.tbl,
 * myapp.dbg, a foreign file under a build-id name): those neither count nor go. (Runs as root or
 * not: chown cases need root.) */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/diag.h"
#include "unwind/unwind_cache.h"

#define ID_A "0123456789abcdef0123456789abcdef01234567"
#define ID_B "89abcdef"
#define ID_C "deadbeef"

static char dir[64];

/* The file the tables are built from, as far as the cache cares. */
static const struct unwind_cache_src SRC = { { 2049, 1234567, 818000, 1700000000, 123456789 }, 0 };

/* dir/name into one of four static buffers (two may be arguments of one call). */
static const char *at(const char *name)
{
	static char path[4][256];
	static int i;

	i = (i + 1) % 4;
	snprintf(path[i], sizeof(path[i]), "%s/%s", dir, name);
	return path[i];
}

/* A scratch cache folder (0700). */
static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/firn-uwc.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

/* A table of n rows (pc 16 apart) with one segment. */
static void make_table(struct unwind_table *t, uint32_t n)
{
	memset(t, 0, sizeof(*t));
	t->rows = calloc(n ? n : 1, sizeof(*t->rows));
	assert_non_null(t->rows);
	for (uint32_t i = 0; i < n; i++)
		t->rows[i] = (struct firn_row){ .pc = 0x1000 + 16 * i, .cfa_off = (int16_t)(8 + i % 64),
						.type = i % 3, .rbp_off8 = -2 };
	t->n = t->cap = n;
	t->fdes = n / 2;
	t->nsegs = 1;
	t->segs[0].offset = 0x1000;
	t->segs[0].filesz = 0x8000;
	t->segs[0].delta = 0x400000;
}

/* Flips one byte of file at off. */
static void poke(const char *path, off_t off)
{
	uint8_t b;
	int fd = open(path, O_RDWR);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &b, 1, off), 1);
	b ^= 0x5a;
	assert_int_equal(pwrite(fd, &b, 1, off), 1);
	close(fd);
}

static void test_roundtrip(void **state)
{
	struct unwind_table t, r;

	(void)state;
	struct unwind_cache *c = unwind_cache_open(dir, 1 << 20);
	assert_non_null(c);
	assert_int_equal(unwind_cache_get(c, ID_A, &SRC, &r), -ENOENT);
	make_table(&t, 1000);
	assert_int_equal(unwind_cache_put(c, ID_A, &SRC, &t), 0);
	assert_int_equal(unwind_cache_get(c, ID_A, &SRC, &r), 0);
	assert_int_equal(r.n, t.n);
	assert_memory_equal(r.rows, t.rows, t.n * sizeof(*t.rows));
	assert_int_equal(r.nsegs, 1);
	assert_memory_equal(r.segs, t.segs, sizeof(t.segs));
	assert_int_equal(r.fdes, t.fdes);
	assert_int_equal(r.by_type[0] + r.by_type[1] + r.by_type[2], 1000);
	struct stat st;
	assert_int_equal(stat(at(ID_A ".tbl"), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(st.st_uid, geteuid());
	/* not hex, empty: never a file name */
	assert_int_equal(unwind_cache_put(c, "../x", &SRC, &t), -EINVAL);
	assert_int_equal(unwind_cache_put(c, "", &SRC, &t), -EINVAL);
	unwind_table_release(&r);
	unwind_table_release(&t);
	unwind_cache_close(c);
}

/* A table serves only the file it was built from: one copied build id on another file (inode,
 * size, mtime), or the same file under another owner, finds nothing (-ESTALE), and the real
 * file's table put again is served. */
static void test_other_source(void **state)
{
	struct unwind_table t, r;

	(void)state;
	struct unwind_cache *c = unwind_cache_open(dir, 1 << 20);
	assert_non_null(c);
	make_table(&t, 100);
	struct unwind_cache_src forged = SRC;
	forged.id.ino++;
	forged.uid = 65534;
	assert_int_equal(unwind_cache_put(c, ID_A, &forged, &t), 0);
	assert_int_equal(unwind_cache_get(c, ID_A, &forged, &r), 0);
	unwind_table_release(&r);
	assert_int_equal(unwind_cache_get(c, ID_A, &SRC, &r), -ESTALE);
	assert_null(r.rows);
	struct unwind_cache_src other[] = { SRC, SRC, SRC, SRC, SRC, SRC };
	other[0].id.dev++;
	other[1].id.ino++;
	other[2].id.size++;
	other[3].id.mtime_sec++;
	other[4].id.mtime_nsec++;
	other[5].uid = 1000;
	assert_int_equal(unwind_cache_put(c, ID_A, &SRC, &t), 0);
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		assert_int_equal(unwind_cache_get(c, ID_A, &other[i], &r), -ESTALE);
	assert_int_equal(unwind_cache_get(c, ID_A, &SRC, &r), 0);
	assert_int_equal(r.n, 100);
	unwind_table_release(&r);
	unwind_table_release(&t);
	unwind_cache_close(c);
}

/* Writes ID_A's table again, then damages it with f and expects err from get. */
static void expect_refused(struct unwind_cache *c, void (*f)(void), int err)
{
	struct unwind_table t, r;

	make_table(&t, 100);
	unlink(at(ID_A ".tbl"));
	assert_int_equal(unwind_cache_put(c, ID_A, &SRC, &t), 0);
	assert_int_equal(unwind_cache_get(c, ID_A, &SRC, &r), 0);
	unwind_table_release(&r);
	f();
	assert_int_equal(unwind_cache_get(c, ID_A, &SRC, &r), err);
	assert_null(r.rows);
	assert_int_equal(r.n, 0);
	unwind_table_release(&t);
}

static void bad_row_byte(void) { poke(at(ID_A ".tbl"), 304 + 8 * 50 + 1); }
static void bad_crc(void) { poke(at(ID_A ".tbl"), 8 + 4 + 4 + 128 + 12); }
static void bad_version(void) { poke(at(ID_A ".tbl"), 8); }
static void bad_magic(void) { poke(at(ID_A ".tbl"), 0); }
static void truncated(void) { assert_int_equal(truncate(at(ID_A ".tbl"), 304 + 8 * 99), 0); }
/* another table's file under ID_A's name: the header names another build id */
static void other_id(void)
{
	struct unwind_table t;
	struct unwind_cache *c = unwind_cache_open(dir, 1 << 20);

	make_table(&t, 100);
	assert_int_equal(unwind_cache_put(c, ID_B, &SRC, &t), 0);
	assert_int_equal(rename(at(ID_B ".tbl"), at(ID_A ".tbl")), 0);
	unwind_table_release(&t);
	unwind_cache_close(c);
}
static void group_writable(void) { assert_int_equal(chmod(at(ID_A ".tbl"), 0620), 0); }
static void other_writable(void) { assert_int_equal(chmod(at(ID_A ".tbl"), 0602), 0); }
static void other_owner(void) { assert_int_equal(chown(at(ID_A ".tbl"), geteuid() + 1, -1), 0); }
/* a symlink to a good table */
static void symlinked(void)
{
	assert_int_equal(rename(at(ID_A ".tbl"), at("good")), 0);
	assert_int_equal(symlink(at("good"), at(ID_A ".tbl")), 0);
}
static void fifo(void)
{
	assert_int_equal(unlink(at(ID_A ".tbl")), 0);
	assert_int_equal(mkfifo(at(ID_A ".tbl"), 0600), 0);
}

static void test_refused(void **state)
{
	(void)state;
	struct unwind_cache *c = unwind_cache_open(dir, 1 << 20);
	assert_non_null(c);
	expect_refused(c, bad_row_byte, -EBADMSG);
	expect_refused(c, bad_crc, -EBADMSG);
	expect_refused(c, bad_version, -EBADMSG);
	expect_refused(c, bad_magic, -EBADMSG);
	expect_refused(c, truncated, -EBADMSG);
	expect_refused(c, other_id, -EBADMSG);
	expect_refused(c, group_writable, -EPERM);
	expect_refused(c, other_writable, -EPERM);
	if (geteuid() == 0)
		expect_refused(c, other_owner, -EPERM);
	expect_refused(c, symlinked, -ELOOP);
	expect_refused(c, fifo, -EINVAL);
	/* a bad file is rebuilt: put replaces it */
	struct unwind_table t, r;
	make_table(&t, 10);
	unlink(at(ID_A ".tbl"));
	assert_int_equal(symlink(at("good"), at(ID_A ".tbl")), 0);
	assert_int_equal(unwind_cache_put(c, ID_A, &SRC, &t), 0);
	assert_int_equal(unwind_cache_get(c, ID_A, &SRC, &r), 0);
	assert_int_equal(r.n, 10);
	unwind_table_release(&r);
	unwind_table_release(&t);
	unwind_cache_close(c);
}

static void test_folder_refused(void **state)
{
	(void)state;
	assert_int_equal(mkdir(at("open"), 0700), 0);
	assert_int_equal(chmod(at("open"), 0777), 0);
	errno = 0;
	assert_null(unwind_cache_open(at("open"), 1 << 20));
	assert_int_equal(errno, EPERM);
	assert_int_equal(symlink(dir, at("link")), 0);
	errno = 0;
	assert_null(unwind_cache_open(at("link"), 1 << 20));
	assert_int_equal(errno, ELOOP);
	if (geteuid() == 0) {
		assert_int_equal(mkdir(at("theirs"), 0700), 0);
		assert_int_equal(chown(at("theirs"), 1, 1), 0);
		errno = 0;
		assert_null(unwind_cache_open(at("theirs"), 1 << 20));
		assert_int_equal(errno, EPERM);
	}
	/* missing parents are made, 0700 */
	struct unwind_cache *c = unwind_cache_open(at("new/deep"), 1 << 20);
	assert_non_null(c);
	struct stat st;
	assert_int_equal(stat(at("new/deep"), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	unwind_cache_close(c);
}

/* Sets name's mtime to sec seconds after the epoch. */
static void age(const char *name, time_t sec)
{
	struct timespec ts[2] = { { sec, 0 }, { sec, 0 } };

	assert_int_equal(utimensat(AT_FDCWD, at(name), ts, 0), 0);
}

static void test_evicts_oldest(void **state)
{
	struct unwind_table t, r;
	struct stat st;

	(void)state;
	make_table(&t, 1000); /* 8304 bytes a file */
	struct unwind_cache *c = unwind_cache_open(dir, 3 * 8304);
	assert_non_null(c);
	assert_int_equal(unwind_cache_put(c, ID_A, &SRC, &t), 0);
	assert_int_equal(unwind_cache_put(c, ID_B, &SRC, &t), 0);
	age(ID_A ".tbl", 1000);
	age(ID_B ".tbl", 2000);
	unwind_cache_close(c);
	/* a writer's temporary file left an hour ago goes at the next count (the first put), a
	 * fresh one stays, and so does an old file that is not named as firn names them */
	struct stat st2;
	assert_int_equal(close(open(at(".tmp-1-0-0"), O_WRONLY | O_CREAT, 0600)), 0);
	assert_int_equal(close(open(at(".tmp-2-0-0"), O_WRONLY | O_CREAT, 0600)), 0);
	assert_int_equal(close(open(at(".tmp-mine"), O_WRONLY | O_CREAT, 0600)), 0);
	age(".tmp-1-0-0", time(NULL) - 7200);
	age(".tmp-mine", time(NULL) - 7200);
	/* reopened: counts what is there; reading A makes it the most recent */
	c = unwind_cache_open(dir, 3 * 8304);
	assert_int_equal(unwind_cache_get(c, ID_A, &SRC, &r), 0);
	unwind_table_release(&r);
	assert_int_equal(unwind_cache_put(c, ID_C, &SRC, &t), 0);
	assert_int_equal(stat(at(".tmp-1-0-0"), &st2), -1);
	assert_int_equal(stat(at(".tmp-2-0-0"), &st2), 0);
	assert_int_equal(stat(at(".tmp-mine"), &st2), 0);
	assert_int_equal(stat(at(ID_A ".tbl"), &st), 0);
	assert_int_equal(stat(at(ID_B ".tbl"), &st), 0);
	/* a fourth table is over the bound: the least recently used go down to the low-water mark
	 * (90 % of 3 tables: 2 stay), B first, then A (read before C and 0a0b were written) */
	assert_int_equal(unwind_cache_put(c, "0a0b", &SRC, &t), 0);
	assert_int_equal(stat(at(ID_B ".tbl"), &st), -1);
	assert_int_equal(stat(at(ID_A ".tbl"), &st), -1);
	assert_int_equal(stat(at(ID_C ".tbl"), &st), 0);
	assert_int_equal(stat(at("0a0b.tbl"), &st), 0);
	assert_int_equal(unwind_cache_get(c, ID_B, &SRC, &r), -ENOENT);
	/* a third table again fits the bound: nothing goes */
	assert_int_equal(unwind_cache_put(c, "0a0c", &SRC, &t), 0);
	assert_int_equal(stat(at(ID_C ".tbl"), &st), 0);
	assert_int_equal(stat(at("0a0b.tbl"), &st), 0);
	assert_int_equal(stat(at("0a0c.tbl"), &st), 0);
	unwind_table_release(&t);
	unwind_cache_close(c);
}

/* A table that served is touched (evicted last); one refused as another file's (-ESTALE) or
 * as damaged (-EBADMSG) keeps its mtime. */
static void test_touched_when_used(void **state)
{
	struct unwind_table t, r;
	struct unwind_cache_src other = SRC;
	struct stat st;

	(void)state;
	other.id.ino++;
	struct unwind_cache *c = unwind_cache_open(dir, 1 << 20);
	assert_non_null(c);
	make_table(&t, 100);
	assert_int_equal(unwind_cache_put(c, ID_A, &SRC, &t), 0);
	age(ID_A ".tbl", 1000);
	assert_int_equal(unwind_cache_get(c, ID_A, &other, &r), -ESTALE);
	assert_int_equal(stat(at(ID_A ".tbl"), &st), 0);
	assert_int_equal(st.st_mtime, 1000);
	assert_int_equal(truncate(at(ID_A ".tbl"), st.st_size - 1), 0);
	age(ID_A ".tbl", 1000);
	assert_int_equal(unwind_cache_get(c, ID_A, &SRC, &r), -EBADMSG);
	assert_int_equal(stat(at(ID_A ".tbl"), &st), 0);
	assert_int_equal(st.st_mtime, 1000);
	assert_int_equal(unwind_cache_put(c, ID_A, &SRC, &t), 0);
	age(ID_A ".tbl", 1000);
	assert_int_equal(unwind_cache_get(c, ID_A, &SRC, &r), 0);
	assert_int_equal(stat(at(ID_A ".tbl"), &st), 0);
	assert_true(st.st_mtime > time(NULL) - 600);
	unwind_table_release(&r);
	unwind_table_release(&t);
	unwind_cache_close(c);
}

/* Writes len bytes of a pattern seeded by seed (starting with start, if not NULL) as dir/name,
 * mode 0600, mtime long ago (first in line to be evicted). */
static void plant(const char *name, const char *start, size_t len, int seed)
{
	uint8_t *b = malloc(len);
	size_t sl = start ? strlen(start) : 0;

	assert_non_null(b);
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(i * 131 + seed);
	if (start)
		memcpy(b, start, sl);
	int fd = open(at(name), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b, len), (ssize_t)len);
	close(fd);
	free(b);
	age(name, 100);
}

/* Whether dir/name holds exactly what plant(name, start, len, seed) wrote. */
static bool planted_intact(const char *name, const char *start, size_t len, int seed)
{
	uint8_t *b = malloc(len + 1), *want = malloc(len);
	int fd = open(at(name), O_RDONLY);
	size_t sl = start ? strlen(start) : 0;
	bool ok = fd >= 0 && read(fd, b, len + 1) == (ssize_t)len;

	for (size_t i = 0; i < len; i++)
		want[i] = (uint8_t)(i * 131 + seed);
	if (start)
		memcpy(want, start, sl);
	ok = ok && !memcmp(b, want, len);
	if (fd >= 0)
		close(fd);
	free(b);
	free(want);
	return ok;
}

/* The bound evicts firn's own tables only: a user's files in the folder, however old and large,
 * are neither removed nor counted, even under a build-id name or with firn's magic in a file that
 * is not firn's own (group-writable). */
static void test_evicts_only_own(void **state)
{
	static const struct { const char *name, *start; size_t len; int mode; } mine[] = {
		{ "notes.tbl", NULL, 100000, 0600 },
		{ "myapp.dbg", NULL, 200000, 0600 },
		{ "cafe.tbl", NULL, 30000, 0600 },              /* firn's name pattern, foreign bytes */
		{ "beef.tbl", "FIRNUWC", 30000, 0620 },         /* firn's magic, not firn's file */
		{ "CAFE.tbl", "FIRNUWC", 30000, 0600 },         /* not a lowercase build id */
		{ "cafe.tbl.old", "FIRNUWC", 30000, 0600 },
	};
	struct unwind_table t;
	struct stat st;

	(void)state;
	for (size_t i = 0; i < sizeof(mine) / sizeof(mine[0]); i++) {
		plant(mine[i].name, mine[i].start, mine[i].len, (int)i);
		assert_int_equal(chmod(at(mine[i].name), mine[i].mode), 0);
	}
	make_table(&t, 1000); /* 8304 bytes a file */
	struct unwind_cache *c = unwind_cache_open(dir, 3 * 8304);
	assert_non_null(c);
	/* three tables fit the bound: the planted 420 kB do not count */
	assert_int_equal(unwind_cache_put(c, ID_A, &SRC, &t), 0);
	age(ID_A ".tbl", 1000);
	assert_int_equal(unwind_cache_put(c, ID_B, &SRC, &t), 0);
	age(ID_B ".tbl", 2000);
	assert_int_equal(unwind_cache_put(c, ID_C, &SRC, &t), 0);
	assert_int_equal(stat(at(ID_A ".tbl"), &st), 0);
	assert_int_equal(stat(at(ID_B ".tbl"), &st), 0);
	/* past the bound: firn's oldest tables go, A then B, down to the low-water mark (90 %:
	 * 2 of 3 tables); the planted files stay */
	assert_int_equal(unwind_cache_put(c, "0a0b", &SRC, &t), 0);
	assert_int_equal(stat(at(ID_A ".tbl"), &st), -1);
	assert_int_equal(stat(at(ID_B ".tbl"), &st), -1);
	assert_int_equal(stat(at(ID_C ".tbl"), &st), 0);
	assert_int_equal(unwind_cache_put(c, "0a0c", &SRC, &t), 0);
	assert_int_equal(stat(at(ID_C ".tbl"), &st), 0);
	assert_int_equal(stat(at("0a0b.tbl"), &st), 0);
	for (size_t i = 0; i < sizeof(mine) / sizeof(mine[0]); i++)
		assert_true(planted_intact(mine[i].name, mine[i].start, mine[i].len, (int)i));
	unwind_table_release(&t);
	unwind_cache_close(c);
}

static int warnings;
static char last_warning[512];

/* Counts the warnings lib/ reports. */
static void count_warning(enum diag_level level, const char *msg)
{
	if (level != DIAG_WARN)
		return;
	warnings++;
	snprintf(last_warning, sizeof(last_warning), "%s", msg);
}

/* Whether the top of / or /usr has a name ending in .tbl (a table firn wrote there). */
static bool tables_in(const char *folder)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "ls -a '%s' | grep -q '\\.tbl$'", folder);
	return system(cmd) == 0;
}

/* "/", "/usr", a folder to be made under /usr (also through a symlink) and the home folder are
 * refused (nothing made, nothing written); FIRN_UNWIND_CACHE naming one says so once. */
static void test_system_folders(void **state)
{
	char made[128], home[128];
	struct stat st;

	(void)state;
	bool had_root = tables_in("/"), had_usr = tables_in("/usr");
	const char *refused[] = { "/", "/usr", "/usr/", "/usr/lib/firn-test", "/etc/firn", "/tmp",
				  "/tmp/../usr/firn-test" };
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		errno = 0;
		assert_null(unwind_cache_open(refused[i], 1 << 20));
		assert_int_equal(errno, EACCES);
	}
	assert_int_equal(stat("/usr/lib/firn-test", &st), -1);
	assert_int_equal(stat("/usr/firn-test", &st), -1);
	/* a folder to be made under a symlink to /usr is made in /usr: refused */
	assert_int_equal(symlink("/usr", at("usr")), 0);
	snprintf(made, sizeof(made), "%s/firn-test-%d", at("usr"), (int)getpid());
	errno = 0;
	assert_null(unwind_cache_open(made, 1 << 20));
	assert_int_equal(errno, EACCES);
	assert_int_equal(lstat(made, &st), -1);
	/* the home folder itself (a folder in it is fine) */
	const char *old_home = getenv("HOME");
	snprintf(home, sizeof(home), "%s", old_home ? old_home : "");
	setenv("HOME", dir, 1);
	errno = 0;
	assert_null(unwind_cache_open(dir, 1 << 20));
	assert_int_equal(errno, EACCES);
	struct unwind_cache *c = unwind_cache_open(at("cache"), 1 << 20);
	assert_non_null(c);
	unwind_cache_close(c);
	/* FIRN_UNWIND_CACHE=/: no cache, one warning naming the folder and why, however often */
	diag_fn old = diag_set_reporter(count_warning);
	setenv("FIRN_UNWIND_CACHE", "/", 1);
	for (int i = 0; i < 3; i++) {
		errno = 0;
		assert_null(unwind_cache_open_env());
		assert_int_equal(errno, EACCES);
	}
	assert_int_equal(warnings, 1);
	assert_non_null(strstr(last_warning, "'/'"));
	assert_non_null(strstr(last_warning, "FIRN_UNWIND_CACHE"));
	assert_non_null(strstr(last_warning, "system"));
	setenv("FIRN_UNWIND_CACHE", "0", 1);
	errno = 0;
	assert_null(unwind_cache_open_env());
	assert_int_equal(errno, ECANCELED);
	unsetenv("FIRN_UNWIND_CACHE");
	diag_set_reporter(old);
	if (old_home)
		setenv("HOME", home, 1);
	else
		unsetenv("HOME");
	assert_int_equal(tables_in("/"), had_root);
	assert_int_equal(tables_in("/usr"), had_usr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_source, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_folder_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_evicts_oldest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_evicts_only_own, setup, teardown),
		cmocka_unit_test_setup_teardown(test_touched_when_used, setup, teardown),
		cmocka_unit_test_setup_teardown(test_system_folders, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
