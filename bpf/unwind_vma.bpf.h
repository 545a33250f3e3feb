/* The unwinder's mappings that user space has not described yet (a process's first
 * milliseconds, libraries mapped since, more than FIRN_MAX_UMAPS of them): found with the
 * kernel's VMA lookup, described from the table of their file (unwind_files), and kept per
 * process (unwind_kprocs) for the next samples. Included by profile.bpf.c inside its unwinder,
 * before the step that looks mappings up (lookup_umap). */
#ifndef FIRN_BPF_UNWIND_VMA_H
#define FIRN_BPF_UNWIND_VMA_H

/* The mappings each process's description lacked, as the unwinder found them. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct firn_kproc);
} unwind_kprocs SEC(".maps");

/* A first entry of unwind_kprocs being made (too large for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct firn_kproc);
} kproc_scratch SEC(".maps");

/* bpf_find_vma callback: describes the VMA in the struct firn_umap at ctx from the table of its
 * file (row_count stays 0 when the file has none loaded). */
static long describe_vma(struct task_struct *task, struct vm_area_struct *vma, void *ctx)
{
	struct firn_umap *out = ctx;
	struct firn_file_key key = {};
	__u64 off = 0, size = 0, sec = 0;
	__u32 nsec = 0;

	struct file *f = vma->vm_file;
	if (!(vma->vm_flags & 0x4)) /* VM_EXEC: a pc elsewhere is no code */
		return 0;
	/* code, with a table or not (row_count 0): either way the next samples need not ask */
	out->start = vma->vm_start;
	out->end = vma->vm_end;
	if (f) {
		struct inode *ino = f->f_inode;
		key.dev = BPF_CORE_READ(ino, i_sb, s_dev);
		key.ino = BPF_CORE_READ(ino, i_ino);
		size = BPF_CORE_READ(ino, i_size);
		if (bpf_core_field_exists(ino->i_mtime_sec)) {
			sec = BPF_CORE_READ(ino, i_mtime_sec);
			nsec = BPF_CORE_READ(ino, i_mtime_nsec);
		}
		off = vma->vm_pgoff << 12;
	} else if (vma->vm_start != (__u64)BPF_CORE_READ(task, mm, context.vdso)) {
		return 0;
	}
	struct firn_file *t = bpf_map_lookup_elem(&unwind_files, &key);
	/* a table of another file that had the same inode number before is no table */
	if (!t || (f && (t->size != size || (sec && (t->mtime_sec != sec || t->mtime_nsec != nsec)))))
		return 0;
	for (int i = 0; i < FIRN_FILE_SEGS; i++) {
		if (i >= t->nsegs)
			break;
		if (off < (t->segs[i].offset & ~0xfffULL) || off >= t->segs[i].offset + t->segs[i].filesz)
			continue;
		/* as in lib/unwind/unwind.c: vaddr = addr - start + offset + delta */
		out->bias = vma->vm_start - off - t->segs[i].delta;
		out->row_start = t->row_start;
		out->row_count = t->row_count;
		break;
	}
	return 0;
}

/* Which of the mappings the unwinder found for the process before holds pc (-1: none). A global
 * function: verified once, not at each caller (its loop was a quarter of on_exec's verifying). */
__attribute__((noinline)) int firn_find_kmap(const struct firn_kproc *k, __u64 pc)
{
	if (!k)
		return -1;
	for (int i = 0; i < FIRN_KMAPS; i++) {
		if (i >= k->n)
			break;
		if (pc >= k->maps[i].start && pc < k->maps[i].end)
			return i;
	}
	return -1;
}

/* The mapping of pc among those the unwinder found for the process before, or NULL. */
static __always_inline struct firn_umap *find_kmap(struct firn_kproc *k, __u64 pc)
{
	int i = firn_find_kmap(k, pc);

	return i >= 0 ? &k->maps[i & (FIRN_KMAPS - 1)] : NULL;
}

/* Describes the VMA of addr in task into *m with the kernel's help; false when it has no table. */
static __always_inline bool vma_umap(struct task_struct *task, __u64 addr, struct firn_umap *m)
{
	m->row_count = 0;
	m->start = m->end = 0;
	bpf_find_vma(task, addr, describe_vma, m, 0);
	return m->row_count && addr >= m->start && addr < m->end;
}

/* Keeps m in pid's ring of found mappings (k: the ring, NULL when pid has none yet). */
static __always_inline void kproc_add(__u32 pid, struct firn_kproc *k, const struct firn_umap *m)
{
	__u32 zero = 0;

	if (k) {
		k->maps[k->next & (FIRN_KMAPS - 1)] = *m;
		k->next++;
		k->n = k->n >= FIRN_KMAPS ? FIRN_KMAPS : k->n + 1;
		return;
	}
	k = bpf_map_lookup_elem(&kproc_scratch, &zero);
	if (!k)
		return;
	k->n = 1;
	k->next = 1;
	k->maps[0] = *m;
	bpf_map_update_elem(&unwind_kprocs, &pid, k, BPF_NOEXIST);
}

/* Finds the VMA of pc with the kernel (once per sample: in interrupt context the helper cannot
 * take the mmap lock again before the interrupt ends) and keeps it; false if no table. Code
 * without a table (JIT code, a file with no table loaded) is kept too, with no rows: the
 * lookup (~3-5 us) is not repeated at every sample that runs through it. A global function (u
 * NULL-checked as the verifier asks; k may be NULL), verified once and not with each state the
 * frame loop's callback is entered with. Returns 1 when found. */
__attribute__((noinline)) int firn_look_up_vma(struct firn_unwind_state *u, struct firn_kproc *k, __u64 pc)
{
	struct firn_umap m = {};

	if (!u || u->looked)
		return false;
	u->looked = 1;
	bool found = vma_umap(bpf_get_current_task_btf(), pc, &m);
	if (found || (pc >= m.start && pc < m.end))
		kproc_add(u->pid, k, &m);
	if (!found)
		return false;
	u->found = m;
	return true;
}

/* The mapping of pc: from the process's description, else from what the unwinder found before,
 * else from the kernel's VMA and the table of its file; copied into u->found (false: no
 * mapping with a table). */
static __always_inline bool lookup_umap(struct firn_unwind_state *u, __u64 pc)
{
	/* a caller in the mapping of the frame before (recursion, a library's own calls) */
	if (u->found.row_count && pc >= u->found.start && pc < u->found.end)
		return true;
	struct firn_umap *m = find_umap(u->first, u->count, pc);

	if (m) {
		u->found = *m;
		return true;
	}
	struct firn_kproc *k = bpf_map_lookup_elem(&unwind_kprocs, &u->pid);
	m = k ? find_kmap(k, pc) : NULL;
	if (m && !m->row_count) /* code known to have no table */
		return false;
	if (m)
		u->found = *m;
	else if (!firn_look_up_vma(u, k, pc))
		return false;
	u->vma++;
	return true;
}

#endif
