/*
 * proc_vm.c: the PROC_VM want (defs/proc_vm.def).
 *
 * statm is read every pass.  status costs more than stat, statm and io put
 * together (it formats ~55 lines and walks the task's credentials and
 * namespaces), so its memory lines are re-read only when statm shows the
 * address space or the resident set moved, or after an exec.  The bound:
 * a status-only value (VmLck, VmPin, VmSwap, the RssAnon/RssFile split,
 * VmHWM) that changes while every statm value stays put is seen at the
 * next sample where statm moves; mlock() of already resident pages is the
 * common case.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "internal.h"

int proc_vm_sample(vmon_t *vmon, vmon_proc_t *proc, void **store)
{
	const vmon_store_desc_t *desc = &vmon_proc_store_descs[VMON_STORE_PROC_VM];
	proc_node_t *node = node_of(proc);
	vmon_buf_t *buf = &vmon->internal->buf;
	vmon_proc_vm_t *s = node_store(vmon, node, VMON_STORE_PROC_VM);
	bool first;
	int r, changes;

	if (!s)
		return -1;
	first = !BITTEST(s->present, VMON_PROC_VM_SIZE_PAGES);
	memset(s->changed, 0, sizeof(s->changed));

	if (procfs_read(vmon, node, "statm", &s->statm_fd, buf) < 0)
		return -1;
	changes = parse_store(desc->fields, desc->fields_nr, VMON_SOURCE_POS, "statm", buf->data, buf->len,
			      s, s->changed, s->present, first);
	if (changes < 0)
		return -1;

	/* a kernel thread has no address space and no memory lines to read */
	if (first || node->exec_pending || (changes > 0 && s->size_pages)) {
		if (procfs_read(vmon, node, "status", &node->status_fd, buf) < 0)
			return -1;
		r = parse_store(desc->fields, desc->fields_nr, VMON_SOURCE_KEY, "status", buf->data, buf->len,
				s, s->changed, s->present, first);
		if (r < 0)
			return -1;
		changes += r;
	} else {
		vmon->internal->stats.reads_skipped++;
	}
	return changes ? SAMPLE_CHANGED : SAMPLE_UNCHANGED;
}
