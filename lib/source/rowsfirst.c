/* The rows array's first chunk put in place while the programs are verified (rowsfirst.h). */
#include "source/rowsfirst.h"

#include <errno.h>
#include <linux/types.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../../bpf/firn.h"

/* Puts chunk 0 in slot 0 of the rows array (a thread's body: ctx is the struct rows_first). */
static void *insert_first(void *ctx)
{
	struct rows_first *f = ctx;
	__u32 key = 0;

	f->err = bpf_map_update_elem(f->rows_fd, &key, &f->chunk_fd, BPF_ANY) ? -errno : 0;
	return NULL;
}

/* Creates chunk 0 and the rows array of n slots around it, into f. 0 or -errno. */
static int create_maps(struct rows_first *f, uint32_t n)
{
	LIBBPF_OPTS(bpf_map_create_opts, co, .map_flags = BPF_F_MMAPABLE);
	LIBBPF_OPTS(bpf_map_create_opts, oo);

	f->chunk_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unwind_rows", sizeof(__u32),
				     sizeof(struct firn_row), FIRN_ROWS_CHUNK, &co);
	if (f->chunk_fd < 0)
		return -errno;
	oo.inner_map_fd = f->chunk_fd; /* every chunk has its shape */
	f->rows_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "unwind_rows", sizeof(__u32),
				    sizeof(__u32), n, &oo);
	return f->rows_fd < 0 ? -errno : 0;
}

int rows_first_start(struct rows_first *f, struct bpf_map *outer)
{
	int err;

	*f = (struct rows_first){ .rows_fd = -1, .chunk_fd = -1 };
	err = create_maps(f, bpf_map__max_entries(outer));
	/* (libbpf takes a copy, which it closes if the load fails: the thread keeps using ours) */
	if (!err && bpf_map__reuse_fd(outer, f->rows_fd))
		err = -errno;
	if (!err && (err = -pthread_create(&f->thread, NULL, insert_first, f)) == 0)
		f->inserting = true;
	if (err) /* reuse_fd failing leaves outer to be created by libbpf */
		rows_first_release(f);
	return err;
}

int rows_first_finish(struct rows_first *f)
{
	if (!f->inserting)
		return 0;
	pthread_join(f->thread, NULL);
	f->inserting = false;
	close(f->rows_fd); /* libbpf's copy stays */
	f->rows_fd = -1;
	if (f->err && f->chunk_fd >= 0) {
		close(f->chunk_fd);
		f->chunk_fd = -1;
	}
	return f->err;
}

void rows_first_release(struct rows_first *f)
{
	rows_first_finish(f);
	if (f->chunk_fd >= 0)
		close(f->chunk_fd);
	if (f->rows_fd >= 0) /* (no thread was started) */
		close(f->rows_fd);
	f->chunk_fd = f->rows_fd = -1;
}
