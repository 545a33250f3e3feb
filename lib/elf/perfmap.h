/* JIT symbol maps: the /tmp/perf-PID.map text that Node (--perf-basic-prof), JVM agents and
 * Python 3.12 (-X perf) write, one "START SIZE NAME" line per code object (hex numbers, with or
 * without 0x). Where entries overlap (code freed and its memory reused), the later line wins.
 * Names live in the perfmap's own buffer until perfmap_release. */
#ifndef FIRN_PERFMAP_H
#define FIRN_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct perfmap_entry {
	uint64_t start, end;  /* [start, end) */
	uint32_t seq;         /* line number: later lines win */
	uint32_t name;        /* offset into perfmap.names */
};

struct perfmap {
	struct perfmap_entry *entries; /* sorted by start */
	size_t n;
	char *names;
	size_t names_len;
	size_t bad_lines;              /* lines that were not "START SIZE NAME" */
	bool truncated;                /* perfmap_read_fd stopped at its byte limit */
};

/* The most perfmap_read_fd reads of a map: a JIT that never frees code grows its map without
 * end (and a hostile one can write anything). */
#define PERFMAP_MAX_BYTES ((size_t)64 << 20)

/* Parses map text (copied) into m (initialized here); 0 or -ENOMEM. Malformed lines are
 * counted in bad_lines and skipped; a last line without a newline (being written) is ignored. */
int perfmap_parse(struct perfmap *m, const char *text, size_t len);
/* Reads the file open at fd (from offset 0, with pread), at most max bytes (truncated set when
 * there was more: the lines before the cut are kept), and parses it; 0 or -errno. */
int perfmap_read_fd(struct perfmap *m, int fd, size_t max);
void perfmap_release(struct perfmap *m);
/* Finds the entry covering addr: 0 with its name and start, or -ENOENT. */
int perfmap_lookup(const struct perfmap *m, uint64_t addr, const char **name, uint64_t *start);

#endif
