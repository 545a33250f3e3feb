/* The unwinder's mappings that user space has not described yet (a process's first
 * milliseconds, libraries mapped since, more than FIRN_MAX_UMAPS of them): found with the
 * kernel's VMA lookup — by a target's watch as the code is mapped (kproc_note_mapped), else by
 * a sample — and kept per process (unwind_kprocs) by their file, described from the table of
 * that file (unwind_files) as soon as user space has loaded it. Included by profile.bpf.c inside
 * its unwinder, before the step that looks mappings up (lookup_umap). */
#ifndef FIRN_BPF_UNWIND_VMA_H
#define FIRN_BPF_UNWIND_VMA_H

/* The mappings each process's description lacked, as the unwinder found them. 10 KiB each:
 * allocated as processes need one, not preallocated (on_exec and on_exit delete them). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
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

/* bpf_find_vma callback: the executable VMA into the struct firn_kmap at ctx, by its file (its
 * rows are looked up after, firn_kmap_resolve); m.end stays 0 when the VMA holds no code. */
static long describe_vma(struct task_struct *task, struct vm_area_struct *vma, void *ctx)
{
	struct firn_kmap *out = ctx;
	struct file *f = BPF_CORE_READ(vma, vm_file);

	if (!(vma->vm_flags & 0x4)) /* VM_EXEC: a pc elsewhere is no code */
		return 0;
	/* code, with a table or not (JIT code: never): either way the next samples need not ask */
	out->m.start = vma->vm_start;
	out->m.end = vma->vm_end;
	if (f) {
		struct inode *ino = BPF_CORE_READ(f, f_inode);
		out->file.dev = BPF_CORE_READ(ino, i_sb, s_dev);
		out->file.ino = BPF_CORE_READ(ino, i_ino);
		out->size = BPF_CORE_READ(ino, i_size);
		if (bpf_core_field_exists(ino->i_mtime_sec)) {
			out->mtime_sec = BPF_CORE_READ(ino, i_mtime_sec);
			out->mtime_nsec = BPF_CORE_READ(ino, i_mtime_nsec);
		}
		out->off = vma->vm_pgoff << 12;
		out->pending = 1;
	} else if (vma->vm_start == (__u64)BPF_CORE_READ(task, mm, context.vdso)) {
		out->pending = 1; /* the vdso: file {0, 0} */
	}
	return 0;
}

/* Gives the mapping at e the rows of its file once user space has loaded the file's table (as
 * in lib/unwind/unwind.c: vaddr = addr - start + offset + delta); a table found ends the wait,
 * with rows or without. A global function: verified once. Returns 1 when e has rows. */
__attribute__((noinline)) int firn_kmap_resolve(struct firn_kmap *e)
{
	if (!e || e->m.row_count)
		return e != NULL;
	if (!e->pending)
		return 0;
	struct firn_file_key key = e->file;
	struct firn_file *t = bpf_map_lookup_elem(&unwind_files, &key);
	/* a table of another file that had the same inode number before is no table */
	if (!t || (key.ino && (t->size != e->size || (e->mtime_sec && (t->mtime_sec != e->mtime_sec ||
									 t->mtime_nsec != e->mtime_nsec)))))
		return 0;
	__u64 off = e->off;
	for (int i = 0; i < FIRN_FILE_SEGS; i++) {
		if (i >= t->nsegs)
			break;
		if (off < (t->segs[i].offset & ~0xfffULL) || off >= t->segs[i].offset + t->segs[i].filesz)
			continue;
		e->m.bias = e->m.start - off - t->segs[i].delta;
		e->m.row_start = t->row_start;
		e->m.row_count = t->row_count;
		break;
	}
	e->pending = 0;
	return e->m.row_count != 0;
}

/* firn_find_kmap's walk (bpf_loop: verified once, not once per entry). */
struct kmap_walk {
	const struct firn_kproc *k;
	__u64 pc;
	int found;
};

/* bpf_loop callback: stops at entry i of c->k when it holds c->pc. */
static long kmap_walk_one(__u32 i, void *ctx)
{
	struct kmap_walk *c = ctx;
	const struct firn_kproc *k = c->k;

	__u64 j = i;

	opaque(j); /* the mask on the register the load uses */
	j &= FIRN_KMAPS - 1;
	if (!k || i >= FIRN_KMAPS)
		return 1;
	if (c->pc < k->maps[j].m.start || c->pc >= k->maps[j].m.end)
		return 0;
	c->found = i;
	return 1;
}

/* Which of the mappings the unwinder found for the process before holds pc (-1: none). A global
 * function: verified once, not at each caller. */
__attribute__((noinline)) int firn_find_kmap(const struct firn_kproc *k, __u64 pc)
{
	struct kmap_walk c = { .k = k, .pc = pc, .found = -1 };

	if (!k)
		return -1;
	bpf_loop(k->n < FIRN_KMAPS ? k->n : FIRN_KMAPS, kmap_walk_one, &c, 0);
	return c.found;
}

/* Keeps e in pid's ring of found mappings (at slot at when at >= 0: a mapping replaced). */
static __always_inline void kproc_put(__u32 pid, const struct firn_kmap *e, int at)
{
	struct firn_kproc *k = bpf_map_lookup_elem(&unwind_kprocs, &pid);
	__u32 zero = 0;

	if (k && at >= 0) {
		k->maps[at & (FIRN_KMAPS - 1)] = *e;
	} else if (k) {
		k->maps[k->next & (FIRN_KMAPS - 1)] = *e;
		k->next++;
		k->n = k->n >= FIRN_KMAPS ? FIRN_KMAPS : k->n + 1;
	} else if ((k = bpf_map_lookup_elem(&kproc_scratch, &zero))) {
		k->n = 1;
		k->next = 1;
		k->maps[0] = *e;
		bpf_map_update_elem(&unwind_kprocs, &pid, k, BPF_NOEXIST);
	}
}

/* Finds the code mapping of addr in task with the kernel, by its file (rows when the file's
 * table is loaded), into *e; false when addr is in no code. */
static __always_inline bool kmap_find_vma(struct task_struct *task, __u64 addr, struct firn_kmap *e)
{
	e->m.start = e->m.end = 0;
	e->m.row_count = 0;
	e->pending = 0;
	bpf_find_vma(task, addr, describe_vma, e, 0);
	if (addr < e->m.start || addr >= e->m.end)
		return false;
	firn_kmap_resolve(e);
	return true;
}

/* The mapping of pc among those the unwinder found for process u->pid before, into u->found
 * when its file's rows are loaded (they are looked up again while not). A global function.
 * Returns 1 with rows, 0 for code without rows (yet), -1 for a pc in none of them. */
__attribute__((noinline)) int firn_kproc_umap(struct firn_unwind_state *u, __u64 pc)
{
	if (!u)
		return -1;
	__u32 pid = u->pid;
	struct firn_kproc *k = bpf_map_lookup_elem(&unwind_kprocs, &pid);
	int i = firn_find_kmap(k, pc);

	if (!k || i < 0)
		return -1;
	struct firn_kmap *e = &k->maps[i & (FIRN_KMAPS - 1)];
	if (!firn_kmap_resolve(e))
		return 0;
	u->found = e->m;
	return 1;
}

/* Finds the VMA of pc with the kernel (once per sample: in interrupt context the helper cannot
 * take the mmap lock again before the interrupt ends) and keeps it by its file, with rows or
 * not (JIT code, a file whose table is not loaded yet: the lookup, ~3-5 us, is not repeated).
 * A global function (u NULL-checked as the verifier asks), verified once and not with each state
 * the frame loop's callback is entered with. Returns 1 when found with rows. */
__attribute__((noinline)) int firn_look_up_vma(struct firn_unwind_state *u, __u64 pc)
{
	struct firn_kmap e = {};

	if (!u || u->looked)
		return false;
	u->looked = 1;
	SW_MARK(1);
	bool found = kmap_find_vma(bpf_get_current_task_btf(), pc, &e);
	SW_MARK(5);
	if (!found)
		return false;
	kproc_put(u->pid, &e, -1);
	if (!e.m.row_count)
		return false;
	u->found = e.m;
	return true;
}

/* Keeps the code mapping of addr in task for pid (process context: the VMA lookup works any
 * number of times), unless kept already; a mapping of another file there replaces it. */
static __always_inline void kproc_note(struct task_struct *task, __u32 pid, __u64 addr)
{
	struct firn_kproc *k = bpf_map_lookup_elem(&unwind_kprocs, &pid);
	int i = firn_find_kmap(k, addr);
	struct firn_kmap e = {};

	if (!kmap_find_vma(task, addr, &e))
		return;
	if (k && i >= 0) {
		struct firn_kmap *o = &k->maps[i & (FIRN_KMAPS - 1)];
		if (o->m.start == e.m.start && o->m.end == e.m.end && o->file.ino == e.file.ino &&
		    o->file.dev == e.file.dev && o->off == e.off)
			return;
	}
	kproc_put(pid, &e, k ? i : -1);
}

/* A target's new code, at the release of the mmap lock its mmap or mprotect call took: its
 * address is the call's first argument (ld.so maps a library's code at a fixed address in the
 * range it reserved), so the samples in it need neither a VMA lookup nor user space's
 * description. A mapping placed by the kernel (no address asked) is left to the samples. */
static __always_inline void kproc_note_mapped(__u32 pid)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	__u64 addr = BPF_CORE_READ(regs, di);

	if (addr)
		kproc_note(t, pid, addr);
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
	int known = firn_kproc_umap(u, pc);
	if (!known || (known < 0 && !firn_look_up_vma(u, pc)))
		return false;
	u->vma++;
	return true;
}

/* lookup_umap as a global function (u NULL-checked as the verifier asks): its four ways to a
 * mapping (the last one, the binary search, the kernel's, the VMA) verified once, not each
 * multiplying the states the frame loop's callback goes on with (issue 51: on_sample 18,648 ->
 * 14,640 verified instructions, 1,203 -> 894 states). Returns 1 when u->found is pc's mapping. */
__attribute__((noinline)) int firn_lookup_umap(struct firn_unwind_state *u, __u64 pc)
{
	return u ? lookup_umap(u, pc) : 0;
}

#endif
