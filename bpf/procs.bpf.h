/* The target processes' lifecycle, included last by profile.bpf.c: children of targets become
 * targets (on_fork), an exec or the end of a process makes BPF forget what it kept of it (its
 * walkers' entries, the mappings the unwinder found, its code's size) and tells user space
 * (on_exec, on_exit), and a target that maps more code than it had wakes user space
 * (on_mmap_unlock). */
#ifndef FIRN_BPF_PROCS_H
#define FIRN_BPF_PROCS_H

/* The most code (mm->exec_vm: pages mapped executable, not writable) each target has had. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} exec_vm_seen SEC(".maps");

/* The process tracepoints are raw tracepoints, not tp_btf: libbpf needs the kernel's full BTF
 * for a tp_btf program's attach target, and a recording with none reads only the minimized BTF
 * (lib/source/kbtf.h). Their arguments are read with BPF_CORE_READ either way. */
SEC("raw_tp/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ppid = BPF_CORE_READ(parent, tgid), cpid = BPF_CORE_READ(child, tgid);
	__u8 one = 1;

	if (!follow_children || ppid == cpid || !bpf_map_lookup_elem(&targets, &ppid))
		return 0;
	bpf_map_update_elem(&targets, &cpid, &one, BPF_ANY);
	return 0;
}

/* At exec (process context: the VMA lookup works any number of times), keeps the mappings of the
 * new program's code and of its ELF interpreter, where it starts: the first samples need them
 * before user space has described the process. */
static __always_inline void note_exec_maps(struct task_struct *p, __u32 pid)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(p);
	__u64 code = BPF_CORE_READ(p, mm, start_code), entry = BPF_CORE_READ(regs, ip);

	kproc_note(p, pid, code);
	if (entry)
		kproc_note(p, pid, entry);
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 pid = BPF_CORE_READ(p, tgid);

	if (filter_pids && !bpf_map_lookup_elem(&targets, &pid))
		return 0;
	__u64 *seen_v = bpf_map_lookup_elem(&seen, &pid);
	/* a new mm: its code and loader noted afresh, the exec'ing task being current (its BTF
	 * pointer; a raw tracepoint's p is a plain value). Every exec, system-wide too: a program
	 * exec'd by a process never sampled (a shell's child, the usual case) would have its first
	 * samples' one VMA lookup spent on the executable and stop at libc (a loop of 15 ms
	 * programs at 99 Hz: 77 % of their qsort samples to _start, 100 % noted; ~3 us an exec).
	 * The entry (10 KiB, not preallocated) goes at exit or the next exec. */
	if (dwarf_unwind) {
		bpf_map_delete_elem(&unwind_kprocs, &pid);
		note_exec_maps(bpf_get_current_task_btf(), pid);
	}
	if (!filter_pids && !seen_v)
		return 0;
	/* the next sample announces the process again, once its libraries are mapped */
	if (seen_v)
		*seen_v = SEEN_BEFORE_EXEC;
	bpf_map_delete_elem(&comms, &pid);
	bpf_map_delete_elem(&exec_vm_seen, &pid); /* a new mm: its code counts from 0 */
	walkers_forget(pid); /* a new image: user space looks again */
	/* its time tells this exec from the next in the side-band records (procdispatch.c) */
	send_event_addr(FIRN_EV_EXEC, pid, bpf_ktime_get_ns(), false);
	return 0;
}

/* A target mapped more code than it ever had (its loader at start, dlopen): user space is woken
 * to describe the new files before the process runs them, not once a sample found no table for
 * them (a sample's ask comes once the code runs, rate-limited: those samples stopped at no
 * mapping). At the release of the mmap lock the mapping's record is in the side-band ring. Not
 * at every system call's end (a raw tracepoint there cost each system call of the host ~0.2
 * us), nor a uprobe on the loader (0.1 s to detach); no kprobes on this kernel. Only growth past
 * the highest count: code made writable and back (JIT) does not ask again. addr: the program's
 * code start, a file mapping (the listeners' JIT checks look at it). The new code is also
 * described here in the kernel, by its file (kproc_note_mapped): its samples unwind as soon as
 * the file's table is loaded, without waiting for the process's description. */
SEC("?raw_tp/mmap_lock_released")
int BPF_PROG(on_mmap_unlock, struct mm_struct *mm)
{
	/* mm only: the other arguments differ between kernels (older ones pass a memcg path
	 * before write), and the count's growth is the test (a lock taken to read maps nothing) */
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();

	if (!bpf_map_lookup_elem(&targets, &pid) || mm != BPF_CORE_READ(t, mm))
		return 0; /* (a target reading another process's memory locks that one's) */
	__u64 vm = BPF_CORE_READ(mm, exec_vm), *seen = bpf_map_lookup_elem(&exec_vm_seen, &pid);

	if (seen && vm <= *seen)
		return 0;
	bpf_map_update_elem(&exec_vm_seen, &pid, &vm, BPF_ANY);
	send_event_addr(FIRN_EV_UNKNOWN_CODE, pid, BPF_CORE_READ(mm, start_code), false);
	kproc_note_mapped(pid); /* (the watch runs with DWARF tables only) */
	return 0;
}

/* A thread ended: when it was the last of a process that was sampled, forget the process here
 * and tell user space, which symbolizes and frees what it kept of it once its last samples are
 * drained. (Runs after the kernel counted the thread out of signal->live.) */
SEC("raw_tp/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	__u32 pid = BPF_CORE_READ(p, tgid);

	if (BPF_CORE_READ(p, signal, live.counter) > 0)
		return 0;
	bool known = bpf_map_lookup_elem(&seen, &pid) != NULL;
	if (known) /* (SEEN_BEFORE_EXEC too) */
		bpf_map_delete_elem(&seen, &pid);
	if (filter_pids)
		bpf_map_delete_elem(&targets, &pid);
	bpf_map_delete_elem(&refresh_asked, &pid);
	bpf_map_delete_elem(&unwind_kprocs, &pid);
	bpf_map_delete_elem(&exec_vm_seen, &pid);
	walkers_forget(pid);
	if (known)
		send_event(FIRN_EV_EXIT, pid, true);
	return 0;
}

#endif
