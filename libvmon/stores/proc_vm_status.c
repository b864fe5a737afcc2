/*
 * proc_vm_status.c: the PROC_VM_STATUS want (defs/proc_vm_status.def), the
 * memory lines of /proc/PID/status.
 *
 * status costs more than stat, statm and io put together (it formats ~55
 * lines and walks the task's credentials and namespaces), so it is read
 * again only when the memory can have moved: with PROC_VM, when statm,
 * read in the same pass, moved (node->line.statm_moved; statm is read by
 * its own rule, proc_vm.c, at the latest STATM_REFRESH_SECS after the last
 * read); without it, by statm's own rule (proc_vm_may_have_moved()): when
 * the task ran (every sample for a process of several threads, whose other
 * threads schedstat does not show) or the stat line's size, resident set or
 * layout moved.  And for a new node,
 * after an exec, and after a failed pass.  The bound: a status-only value
 * (VmLck, VmPin, VmSwap, the RssAnon/RssFile split, VmHWM) that changes
 * while statm (or the stat line) stays put is seen at the next sample where
 * it moves; mlock() of already resident pages is the common case.
 *
 * A task without an address space (vsize 0: a kernel thread, a zombie, a
 * task past the release of its memory in its exit) has no memory lines:
 * nothing is read for it, and it keeps the last ones read, as its last data
 * (with the peak its exit event gave, proc_vm_status_event_exit()).
 *
 * With the task iterator the record has the lines (iter.c), and a record
 * without an address space keeps the last ones the same way.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "core/internal.h"

/* may the memory lines have moved since the last read? statm's answer, or statm's rule (proc_vm.c) */
static bool may_have_moved(vmon_t *vmon, proc_node_t *node)
{
	if (node->life.exec_pending || node->life.retry)
		return true;
	if (node->pub.wants & VMON_WANT_PROC_VM)
		return node->line.statm_moved;
	return proc_vm_may_have_moved(vmon, node);
}

int proc_vm_status_sample(vmon_t *vmon, vmon_proc_t *proc, void **store)
{
	const vmon_store_desc_t *desc = &vmon_proc_store_descs[VMON_STORE_PROC_VM_STATUS];
	proc_node_t *node = node_of(proc);
	buf_t *buf = &vmon->internal->buf;
	const vmon_proc_stat_t *stat = proc->stores[VMON_STORE_PROC_STAT];
	vmon_proc_vm_status_t *s = node_store(vmon, node, VMON_STORE_PROC_VM_STATUS);
	bool first;
	int changes;

	if (!s)
		return -1;
	first = parse_none_present(s->present, sizeof(s->present));
	node_store_start(vmon, node, VMON_STORE_PROC_VM_STATUS, s->changed, sizeof(s->changed));

	changes = source_fill(vmon, node, VMON_STORE_PROC_VM_STATUS, s, first);
	if (changes != SOURCE_NO_RECORD) {
		if (changes < 0)
			return -1;
		return changes ? SAMPLE_CHANGED : SAMPLE_UNCHANGED;
	}

	/* no address space, no memory lines (see the top): not a first read at every sample either */
	if (!stat || !stat->vsize) {
		vmon->internal->stats.reads_skipped++;
		return SAMPLE_UNCHANGED;
	}
	if (!first && !may_have_moved(vmon, node)) {
		vmon->internal->stats.reads_skipped++;
		return SAMPLE_UNCHANGED;
	}
	if (procfs_read(vmon, node, "status", &node->fds.status_fd, buf) < 0) {
		int err = errno;

		/* another user's process, or gone: say so through errors[], show nothing stale */
		if (err != ESRCH) {
			for (int i = 0; i < desc->fields_nr; i++)
				parse_clear(&desc->fields[i], s, s->changed, s->present);
		}
		errno = err;
		return -1;
	}
	changes = parse_store(desc->fields, desc->fields_nr, VMON_SOURCE_KEY, "status", buf->data, buf->len,
			      s, s->changed, s->present, first);
	if (changes < 0)
		return -1;
	return changes ? SAMPLE_CHANGED : SAMPLE_UNCHANGED;
}

/* an exit event's peak resident set (the feed's), for a life too short to be read */
bool proc_vm_status_event_exit(vmon_proc_vm_status_t *s, const vmon_event_t *ev)
{
	const vmon_field_t *hwm = &vmon_proc_store_descs[VMON_STORE_PROC_VM_STATUS].fields[VMON_PROC_VM_STATUS_HWM_KB];

	return parse_given(hwm, parse_set_ull(hwm, s, ev->maxrss_kb, s->changed, false), s->changed, s->present) > 0;
}
