/* Process events from the kernel's side-band records (perf's MMAP2/COMM/FORK/EXIT), a
 * bounds-checked parser of one record, and a fake source for tests. */
#include "proc/procevents.h"
#include "base/unaligned.h"
#include "base/vec.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef PERF_RECORD_MISC_MMAP_BUILD_ID
#define PERF_RECORD_MISC_MMAP_BUILD_ID (1 << 14)
#endif

/* sample_id_all with PERF_SAMPLE_TID|PERF_SAMPLE_TIME: every record ends with these. */
struct sample_id {
	uint32_t pid, tid;
	uint64_t time;
};

/* ---- parser ---- */

/* Copies the NUL-terminated string at rec[off, end) into out (n bytes, truncated); false when
 * no NUL ends it within the bounds. */
static bool copy_string(const uint8_t *rec, size_t off, size_t end, char *out, size_t n)
{
	const uint8_t *nul = off < end ? memchr(rec + off, 0, end - off) : NULL;
	size_t len;

	if (!nul || !n)
		return false;
	len = nul - (rec + off);
	if (len >= n)
		len = n - 1;
	memcpy(out, rec + off, len);
	out[len] = 0;
	return true;
}

/* MMAP2: u32 pid, tid; u64 addr, len, pgoff; {u32 maj, min; u64 ino, ino_generation} or
 * {u8 build_id_size, pad[3], build_id[20]}; u32 prot, flags; char filename[]; sample_id. */
static int parse_mmap2(const uint8_t *rec, size_t end, uint16_t misc, struct proc_event *ev,
		       char *name, size_t namelen)
{
	enum { FIXED = 8 + 8 + 24 + 24 + 8 };

	if (end < FIXED + 1)
		return -EINVAL;
	ev->kind = PROC_EV_MMAP;
	ev->pid = load_u32(rec, 8);
	ev->tid = load_u32(rec, 12);
	ev->start = load_u64(rec, 16);
	ev->len = load_u64(rec, 24);
	ev->pgoff = load_u64(rec, 32);
	if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		ev->build_id_size = rec[40] > PROC_EV_BUILD_ID_MAX ? PROC_EV_BUILD_ID_MAX : rec[40];
		memcpy(ev->build_id, rec + 44, ev->build_id_size);
	} else {
		ev->maj = load_u32(rec, 40);
		ev->min = load_u32(rec, 44);
		ev->ino = load_u64(rec, 48);
		ev->ino_generation = load_u64(rec, 56);
	}
	ev->prot = load_u32(rec, 64);
	ev->flags = load_u32(rec, 68);
	if (!copy_string(rec, FIXED, end, name, namelen))
		return -EINVAL;
	ev->filename = name;
	return 1;
}

/* FORK, EXIT: u32 pid, ppid, tid, ptid; u64 time; sample_id. */
static int parse_task(const uint8_t *rec, size_t end, struct proc_event *ev, bool fork)
{
	if (end < 8 + 24)
		return -EINVAL;
	ev->kind = fork ? PROC_EV_FORK : PROC_EV_EXIT;
	ev->pid = load_u32(rec, 8);
	ev->ppid = load_u32(rec, 12);
	ev->tid = load_u32(rec, 16);
	ev->ptid = load_u32(rec, 20);
	ev->time = load_u64(rec, 24);
	return 1;
}

/* COMM: u32 pid, tid; char comm[]; sample_id. An exec when misc says so. */
static int parse_comm(const uint8_t *rec, size_t end, uint16_t misc, struct proc_event *ev)
{
	if (end < 8 + 8 + 1)
		return -EINVAL;
	ev->kind = misc & PERF_RECORD_MISC_COMM_EXEC ? PROC_EV_EXEC : PROC_EV_COMM;
	ev->pid = load_u32(rec, 8);
	ev->tid = load_u32(rec, 12);
	return copy_string(rec, 16, end, ev->comm, sizeof(ev->comm)) ? 1 : -EINVAL;
}

int procevents_parse(const void *buf, size_t len, struct proc_event *ev, char *name,
		     size_t namelen)
{
	const uint8_t *rec = buf;
	struct perf_event_header h;
	struct sample_id id;
	int rc;

	memset(ev, 0, sizeof(*ev));
	if (len < sizeof(h))
		return -EINVAL;
	memcpy(&h, rec, sizeof(h));
	if (h.size < sizeof(h) || h.size > len)
		return -EINVAL;
	if (h.type != PERF_RECORD_MMAP2 && h.type != PERF_RECORD_COMM && h.type != PERF_RECORD_FORK &&
	    h.type != PERF_RECORD_EXIT && h.type != PERF_RECORD_LOST)
		return 0;
	if (h.size < sizeof(h) + sizeof(id))
		return -EINVAL;
	size_t end = h.size - sizeof(id); /* the record's own fields end where sample_id starts */
	memcpy(&id, rec + end, sizeof(id));
	switch (h.type) {
	case PERF_RECORD_MMAP2:
		rc = parse_mmap2(rec, end, h.misc, ev, name, namelen);
		break;
	case PERF_RECORD_COMM:
		rc = parse_comm(rec, end, h.misc, ev);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		rc = parse_task(rec, end, ev, h.type == PERF_RECORD_FORK);
		break;
	default: /* LOST: u64 id, lost */
		if (end < 8 + 16)
			return -EINVAL;
		ev->kind = PROC_EV_LOST;
		ev->lost = load_u64(rec, 16);
		rc = 1;
	}
	if (rc == 1 && !ev->time)
		ev->time = id.time;
	return rc;
}

/* ---- kernel source ---- */

#define NAME_MAX_LEN 4096

/* One CPU's side-band event and its ring buffer. */
struct ring {
	int fd;
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	size_t size; /* of the data area, a power of two */
};

/* A parsed event waiting to be handed out; its filename at name_off in the arena. */
struct pending {
	struct proc_event ev;
	size_t name_off;
	size_t seq;      /* arrival order: equal times keep it */
};

struct kernel_source {
	struct proc_source base;
	struct ring *rings;
	int nrings, epfd;
	int *more_fds;           /* the other cgroups' events, writing into their CPU's ring */
	int nmore;
	size_t page;
	struct pending *pend;    /* collected, sorted by time */
	size_t npend, cap_pend, pos;
	char *arena;             /* filenames of pend */
	size_t arena_len, arena_cap;
	uint8_t *scratch;        /* a record that wraps around its ring */
	size_t scratch_cap;
};

/* Opens the dummy side-band event on cpu (cgroup_fd >= 0: of the tasks in that cgroup and
 * below only); fd or -errno (-ENODEV: an offline CPU). */
static int open_sideband(int cpu, size_t bytes, int cgroup_fd)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.sample_id_all = 1,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		.watermark = 1,
		.wakeup_watermark = bytes / 2,
	};
	int fd = syscall(__NR_perf_event_open, &a, cgroup_fd >= 0 ? cgroup_fd : -1, cpu, -1,
			 PERF_FLAG_FD_CLOEXEC | (cgroup_fd >= 0 ? PERF_FLAG_PID_CGROUP : 0));

	return fd < 0 ? -errno : fd;
}

/* Appends an event with its name to the pending list; 0 or -ENOMEM. */
static int pend_push(struct kernel_source *k, const struct proc_event *ev, const char *name)
{
	size_t nlen = ev->kind == PROC_EV_MMAP ? strlen(name) + 1 : 0;

	if (VEC_GROW(k->pend, k->cap_pend, k->npend + 1))
		return -ENOMEM;
	if (VEC_GROW(k->arena, k->arena_cap, k->arena_len + nlen))
		return -ENOMEM;
	k->pend[k->npend] = (struct pending){ *ev, k->arena_len, k->npend };
	if (nlen) /* (the arena may not exist yet: no name so far) */
		memcpy(k->arena + k->arena_len, name, nlen);
	k->arena_len += nlen;
	k->npend++;
	return 0;
}

/* The record at offset off of ring r (size bytes), contiguous: in place, or copied out of the
 * wrap into scratch. NULL on -ENOMEM. */
static const uint8_t *ring_record(struct kernel_source *k, const struct ring *r, uint64_t off,
				  size_t size)
{
	size_t at = off & (r->size - 1);

	if (at + size <= r->size)
		return r->data + at;
	if (VEC_GROW(k->scratch, k->scratch_cap, size))
		return NULL;
	memcpy(k->scratch, r->data + at, r->size - at);
	memcpy(k->scratch + (r->size - at), r->data, size - (r->size - at));
	return k->scratch;
}

/* Parses every record waiting in ring r into the pending list and frees their room. */
static int ring_collect(struct kernel_source *k, struct ring *r)
{
	static __thread char name[NAME_MAX_LEN];
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;
	int err = 0;

	while (tail < head && !err) {
		struct perf_event_header h;
		const uint8_t *hp = ring_record(k, r, tail, sizeof(h));
		if (!hp)
			return -ENOMEM;
		memcpy(&h, hp, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail)
			break; /* cannot be: the kernel writes whole records */
		const uint8_t *rec = ring_record(k, r, tail, h.size);
		struct proc_event ev;
		if (!rec)
			return -ENOMEM;
		if (procevents_parse(rec, h.size, &ev, name, sizeof(name)) == 1)
			err = pend_push(k, &ev, name);
		tail += h.size;
	}
	__atomic_store_n(&r->meta->data_tail, head, __ATOMIC_RELEASE);
	return err;
}

/* Orders pending events by time (stable for equal times: by their place). */
static int pend_cmp(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	return CMP3(x->ev.time, y->ev.time) ?: CMP3(x->seq, y->seq);
}

/* Collects every CPU's waiting records into the pending list, merged by time. */
static int kernel_collect(struct kernel_source *k)
{
	int err = 0;

	k->npend = k->pos = 0;
	k->arena_len = 0;
	for (int i = 0; i < k->nrings && !err; i++)
		err = ring_collect(k, &k->rings[i]);
	if (k->npend) /* pend is NULL before the first event: qsort(NULL, 0) is undefined */
		qsort(k->pend, k->npend, sizeof(*k->pend), pend_cmp);
	return err;
}

static int kernel_read(struct proc_source *src, struct proc_event *ev, int max)
{
	struct kernel_source *k = (struct kernel_source *)src;
	int n = 0;

	if (k->pos == k->npend) {
		int err = kernel_collect(k);
		if (err)
			return err;
	}
	for (; n < max && k->pos < k->npend; n++, k->pos++) {
		ev[n] = k->pend[k->pos].ev;
		if (ev[n].kind == PROC_EV_MMAP)
			ev[n].filename = k->arena + k->pend[k->pos].name_off;
	}
	return n;
}

static int kernel_fd(struct proc_source *src)
{
	return ((struct kernel_source *)src)->epfd;
}

static void kernel_free(struct proc_source *src)
{
	struct kernel_source *k = (struct kernel_source *)src;

	for (int i = 0; i < k->nmore; i++)
		close(k->more_fds[i]);
	free(k->more_fds);
	for (int i = 0; i < k->nrings; i++) {
		if (k->rings[i].meta)
			munmap(k->rings[i].meta, k->rings[i].size + k->page);
		close(k->rings[i].fd);
	}
	if (k->epfd >= 0)
		close(k->epfd);
	free(k->rings);
	free(k->pend);
	free(k->arena);
	free(k->scratch);
	free(k);
}

static const struct proc_source_ops kernel_ops = { kernel_fd, kernel_read, kernel_free };

/* Opens the side-band events of the other cgroups (cgroups[1..n)) on cpu, each writing into
 * the ring of fd (the first cgroup's): one ring a CPU whatever the number of cgroups. 0 or
 * -errno. */
static int add_more(struct kernel_source *k, int cpu, size_t bytes, int fd, const int *cgroups,
		    int n)
{
	for (int i = 1; i < n; i++) {
		int more = open_sideband(cpu, bytes, cgroups[i]);
		if (more < 0)
			return more;
		k->more_fds[k->nmore++] = more;
		if (ioctl(more, PERF_EVENT_IOC_SET_OUTPUT, fd))
			return -errno;
	}
	return 0;
}

/* Opens and maps cpu's side-band ring into k->rings (cgroups: the n cgroup directories' fds
 * whose tasks it reports; none: every task); 0, 1 when the CPU is offline, -errno. */
static int add_ring(struct kernel_source *k, int cpu, size_t pages, const int *cgroups, int n)
{
	struct ring *r = &k->rings[k->nrings];
	size_t bytes = pages * k->page;
	int fd = open_sideband(cpu, bytes, n ? cgroups[0] : -1);

	if (fd == -ENODEV)
		return 1;
	if (fd < 0)
		return fd;
	void *m = mmap(NULL, bytes + k->page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		int err = -errno;
		close(fd);
		return err;
	}
	*r = (struct ring){ fd, m, (uint8_t *)m + k->page, bytes };
	k->nrings++;
	struct epoll_event ee = { .events = EPOLLIN, .data.u32 = cpu };
	if (epoll_ctl(k->epfd, EPOLL_CTL_ADD, fd, &ee))
		return -errno;
	return add_more(k, cpu, bytes, fd, cgroups, n);
}

/* The default ring size: 16 MiB shared by the CPUs, 64 to 512 pages (256 KiB to 2 MiB) each, a
 * power of two. A process that starts and exits while firn does not read (firn stopped, or
 * busy) leaves about 1 KiB of records: 64 pages per CPU overflowed within 8 s of a stop among
 * short processes (their mappings lost), 512 last several times longer; many CPUs share the
 * load, so they get less each. */
static unsigned default_pages(long ncpus, long page)
{
	unsigned long each = (16UL << 20) / (unsigned long)(ncpus > 0 ? ncpus : 1) / (page > 0 ? page : 4096);
	unsigned pages = 64;

	while (pages < 512 && pages * 2 <= each)
		pages *= 2;
	return pages;
}

/* procevents_kernel_new_cgroups with rings of pages pages (not 0), the cgroups open. */
static struct proc_source *kernel_new(unsigned pages, const int *cgroups, int n)
{
	long ncpus = sysconf(_SC_NPROCESSORS_CONF);
	struct kernel_source *k = calloc(1, sizeof(*k));
	size_t slots = ncpus > 0 ? (size_t)ncpus : 1;
	int err = 0;

	if (!k)
		return NULL;
	k->base.ops = &kernel_ops;
	k->page = sysconf(_SC_PAGESIZE);
	k->epfd = epoll_create1(EPOLL_CLOEXEC);
	k->rings = calloc(slots, sizeof(*k->rings));
	k->more_fds = n > 1 ? calloc(slots * (size_t)(n - 1), sizeof(*k->more_fds)) : NULL;
	if (k->epfd < 0 || !k->rings || (n > 1 && !k->more_fds) || (pages & (pages - 1)))
		err = k->epfd < 0 ? -errno : pages & (pages - 1) ? -EINVAL : -ENOMEM;
	for (long cpu = 0; cpu < ncpus && !err; cpu++) {
		int rc = add_ring(k, cpu, pages, cgroups, n);
		err = rc < 0 ? rc : 0;
	}
	if (!err && !k->nrings)
		err = -ENODEV;
	if (err) {
		kernel_free(&k->base);
		errno = -err;
		return NULL;
	}
	return &k->base;
}

/* procevents_kernel_new_cgroups with the cgroups open: pages, else the default, else 64. */
static struct proc_source *kernel_new_sized(unsigned pages, const int *cgroups, int n)
{
	if (pages)
		return kernel_new(pages, cgroups, n);
	struct proc_source *src = kernel_new(default_pages(sysconf(_SC_NPROCESSORS_CONF),
							   sysconf(_SC_PAGESIZE)), cgroups, n);
	/* without CAP_IPC_LOCK the locked-memory limit (perf_event_mlock_kb) may refuse more */
	return src ? src : kernel_new(64, cgroups, n);
}

struct proc_source *procevents_kernel_new(unsigned pages)
{
	return kernel_new_sized(pages, NULL, 0);
}

struct proc_source *procevents_kernel_new_cgroups(unsigned pages, const char *const *dirs, int n)
{
	int fds[PROCEVENTS_MAX_CGROUPS], opened = 0, err = n > PROCEVENTS_MAX_CGROUPS ? -E2BIG : 0;
	struct proc_source *src = NULL;

	for (; opened < n && !err; opened++)
		if ((fds[opened] = open(dirs[opened], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
			err = -errno;
	if (!err && !(src = kernel_new_sized(pages, fds, n)))
		err = -errno;
	for (int i = 0; i < opened; i++)
		if (fds[i] >= 0)
			close(fds[i]); /* the events hold their cgroups */
	errno = -err;
	return src;
}

/* ---- fake source ---- */

struct fake_source {
	struct proc_source base;
	struct proc_event *ev; /* filenames owned */
	size_t n, cap, pos;
	int batch;
};

static int fake_fd(struct proc_source *src __attribute__((unused)))
{
	return -1;
}

static int fake_read(struct proc_source *src, struct proc_event *ev, int max)
{
	struct fake_source *f = (struct fake_source *)src;
	int n = 0;

	if (f->batch > 0 && max > f->batch)
		max = f->batch;
	for (; n < max && f->pos < f->n; n++)
		ev[n] = f->ev[f->pos++];
	return n;
}

static void fake_free(struct proc_source *src)
{
	struct fake_source *f = (struct fake_source *)src;

	for (size_t i = 0; i < f->n; i++)
		free((char *)f->ev[i].filename);
	free(f->ev);
	free(f);
}

static const struct proc_source_ops fake_ops = { fake_fd, fake_read, fake_free };

int procevents_fake_add(struct proc_source *src, const struct proc_event *ev)
{
	struct fake_source *f = (struct fake_source *)src;
	if (VEC_GROW(f->ev, f->cap, f->n + 1))
		return -ENOMEM;
	f->ev[f->n] = *ev;
	f->ev[f->n].filename = NULL;
	if (ev->filename && !(f->ev[f->n].filename = strdup(ev->filename)))
		return -ENOMEM;
	f->n++;
	return 0;
}

struct proc_source *procevents_fake_new(const struct proc_event *ev, size_t n, int batch)
{
	struct fake_source *f = calloc(1, sizeof(*f));

	if (!f) {
		errno = ENOMEM;
		return NULL;
	}
	f->base.ops = &fake_ops;
	f->batch = batch;
	for (size_t i = 0; i < n; i++) {
		if (procevents_fake_add(&f->base, &ev[i])) {
			fake_free(&f->base);
			errno = ENOMEM;
			return NULL;
		}
	}
	return &f->base;
}
