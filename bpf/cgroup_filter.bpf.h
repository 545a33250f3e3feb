/* --cgroup: only the tasks of some cgroup v2 subtrees are sampled (included by profile.bpf.c,
 * before is_target, which every sampling program calls first). User space puts the cgroups'
 * directories in cgroup_array (the kernel holds them) and their ids (the directories' inodes)
 * in cgroup_ids, and sets cgroup_count; 0 cgroups: no filter, the check costs one branch.
 * bpf_current_task_under_cgroup matches descendants (a container's processes in its child
 * cgroups), and works in cgroup namespaces: no levels to work out in user space. */
#ifndef FIRN_CGROUP_FILTER_BPF_H
#define FIRN_CGROUP_FILTER_BPF_H

#define FIRN_CGROUPS_MAX 16 /* --cgroup given this many times at most (lib/proc/cgroup.h) */
#define FIRN_CGROUP_DEPTH 64 /* levels walked up from a task's cgroup (task iterator) */

const volatile __u32 cgroup_count = 0; /* cgroups in cgroup_array; 0: every task */

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, FIRN_CGROUPS_MAX);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_array SEC(".maps");

/* the same cgroups by id, for tasks other than the current one (the task iterator) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FIRN_CGROUPS_MAX);
	__type(key, __u64);
	__type(value, __u8);
} cgroup_ids SEC(".maps");

/* hits (samples, probe hits, switch-outs) of tasks outside the cgroups, per CPU */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} cgroup_stats SEC(".maps");

/* Whether the current task is in one of the cgroups (or below one); counts it when not. */
static __always_inline bool cgroup_current_in(void)
{
	__u32 zero = 0;

	if (!cgroup_count)
		return true;
	for (__u32 i = 0; i < FIRN_CGROUPS_MAX && i < cgroup_count; i++)
		if (bpf_current_task_under_cgroup(&cgroup_array, i) == 1)
			return true;
	__u64 *n = bpf_map_lookup_elem(&cgroup_stats, &zero);
	if (n)
		(*n)++;
	return false;
}

/* Whether task (not the current one) is in one of the cgroups: its cgroup v2 and those above
 * it are looked up by id (a cgroup's self css is its first member: the parent css is the
 * parent cgroup). */
static __always_inline bool cgroup_task_in(struct task_struct *task)
{
	if (!cgroup_count)
		return true;
	struct cgroup *cg = BPF_CORE_READ(task, cgroups, dfl_cgrp);
	for (int l = 0; l < FIRN_CGROUP_DEPTH && cg; l++) {
		__u64 id = BPF_CORE_READ(cg, kn, id);
		if (bpf_map_lookup_elem(&cgroup_ids, &id))
			return true;
		cg = (struct cgroup *)BPF_CORE_READ(cg, self.parent);
	}
	return false;
}

#endif
