/*
 * proc_vm.c: the PROC_VM want (defs/proc_vm.def), /proc/PID/statm.
 *
 * statm is read unless the stat line read in the same pass shows that it
 * cannot have moved (statm_may_skip() says how far that holds).  A read
 * that finds it moved says so to PROC_VM_STATUS, sampled after it in the
 * same pass (node->line.statm_moved, proc_vm_status.c).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "core/internal.h"

/*
 * May the task's memory have moved since the last sample, by what this pass
 * read of its stat line and schedstat (proc_vm_may_have_moved())?  statm is
 * left unread where it may not, and PROC_VM_STATUS without PROC_VM reads
 * status by the same rule.  Of statm's values, size and resident
 * are the stat line's vsize and rss (the same kernel counters), and text
 * follows from the stat line's start and end of code: when those did not
 * move, what is left is shared (resident file and shmem pages) and data
 * (data and stack mappings).  data moves only when a task using the address
 * space maps, unmaps or re-protects memory.  shared moves without such a
 * task running only when reclaim takes pages, which shows in rss, or when
 * another process faults pages in (ptrace, process_vm_writev(),
 * /proc/PID/mem), which shows in rss too unless reclaim took exactly as
 * many at the same time.
 *
 * So for a process single-threaded now and at the last sample (a thread
 * that re-protected memory and exited while the main one slept would leave
 * no trace in schedstat) whose only task did not run since the last sample
 * and whose stat line kept its vsize, rss and code bounds (with its stack,
 * argument and environment addresses: node_layout_seen()), statm can differ
 * from the last read only after that coincidence,
 * or after a vfork() or CLONE_VM child re-protected its memory without
 * changing its size.  The bound: such a change shows when the process next
 * runs or its size or resident set moves, and at the latest
 * STATM_REFRESH_SECS after the last read, when statm is read anyway
 * (the due times are spread over nodes so that they do not all come due in
 * the same pass).
 */
bool proc_vm_may_have_moved(vmon_t *vmon, proc_node_t *node)
{
	const vmon_proc_stat_t *stat = node->pub.stores[VMON_STORE_PROC_STAT];

	if (node->life.exec_pending || node->line.num_threads > 1 || node->line.threaded_before || !stat ||
	    node->pub.errors[VMON_STORE_PROC_STAT])
		return true;
	if (BITTEST(stat->changed, VMON_PROC_STAT_VSIZE) || BITTEST(stat->changed, VMON_PROC_STAT_RSS) ||
	    node->line.layout_moved)
		return true;
	return procfs_ran(vmon, node) != 0;
}

static bool statm_may_skip(vmon_t *vmon, proc_node_t *node)
{
	return !due_reached(vmon->internal, node->due.statm) && !proc_vm_may_have_moved(vmon, node);
}

int proc_vm_sample(vmon_t *vmon, vmon_proc_t *proc, void **store)
{
	const vmon_store_desc_t *desc = &vmon_proc_store_descs[VMON_STORE_PROC_VM];
	proc_node_t *node = node_of(proc);
	buf_t *buf = &vmon->internal->buf;
	vmon_proc_vm_t *s = node_store(vmon, node, VMON_STORE_PROC_VM);
	bool first;
	int changes;

	if (!s)
		return -1;
	first = !BITTEST(s->present, VMON_PROC_VM_SIZE_PAGES);
	memset(s->changed, 0, sizeof(s->changed));

	/* a source's record may have statm and the memory lines of status (the task iterator's has) */
	changes = source_fill(vmon, node, VMON_STORE_PROC_VM, s, first);
	if (changes != SOURCE_NO_RECORD) {
		if (changes < 0)
			return -1;
		return changes ? SAMPLE_CHANGED : SAMPLE_UNCHANGED;
	}

	if (!first && statm_may_skip(vmon, node)) {
		vmon->internal->stats.reads_skipped++;
		return SAMPLE_UNCHANGED;
	}
	/* until this read succeeds, the next pass reads statm whatever the stat line says */
	node->due.statm = 0;
	if (procfs_read(vmon, node, "statm", &s->statm_fd, buf) < 0)
		return -1;
	changes = parse_store(desc->fields, desc->fields_nr, VMON_SOURCE_POS, "statm", buf->data, buf->len,
			      s, s->changed, s->present, first);
	if (changes < 0)
		return -1;
	/* the next forced read: a full period from now, the first one sooner by up to half, by pid */
	node->due.statm = due_in(vmon->internal, STATM_REFRESH_SECS *
				 (first ? 0.5 + (double)(node->pub.pid % 16) / 32.0 : 1.0));
	/* (a kernel thread's statm is all zeros: no address space, no memory lines for PROC_VM_STATUS) */
	node->line.statm_moved = changes > 0 && s->size_pages;
	return changes ? SAMPLE_CHANGED : SAMPLE_UNCHANGED;
}
