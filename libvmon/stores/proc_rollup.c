/*
 * proc_rollup.c: the PROC_ROLLUP want (defs/proc_rollup.def),
 * /proc/PID/smaps_rollup.  The kernel makes it by walking every page table
 * of the process, so it is read only for the nodes that want it, and at
 * every sample: a page others map or unmap moves a process's PSS without
 * the process running, and no cheaper file shows that.  A kernel thread's
 * (and a zombie's) is empty or reads ESRCH: its fields are absent, and that
 * is no error.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "core/internal.h"

/* every field absent: the number that changed */
static int clear_all(vmon_proc_rollup_t *s)
{
	const vmon_store_desc_t *desc = &vmon_proc_store_descs[VMON_STORE_PROC_ROLLUP];
	int changes = 0;

	for (int i = 0; i < desc->fields_nr; i++)
		changes += parse_clear(&desc->fields[i], s, s->changed, s->present);
	return changes;
}

int proc_rollup_sample(vmon_t *vmon, vmon_proc_t *proc, void **store)
{
	const vmon_store_desc_t *desc = &vmon_proc_store_descs[VMON_STORE_PROC_ROLLUP];
	proc_node_t *node = node_of(proc);
	buf_t *buf = &vmon->internal->buf;
	vmon_proc_rollup_t *s;
	bool first;
	int changes;

	/* a thread's is its process's */
	if (proc->is_thread)
		return SAMPLE_UNCHANGED;
	s = node_store(vmon, node, VMON_STORE_PROC_ROLLUP);
	if (!s)
		return -1;
	first = !BITTEST(s->present, VMON_PROC_ROLLUP_PSS_KB);
	memset(s->changed, 0, sizeof(s->changed));
	if (procfs_read(vmon, node, "smaps_rollup", NULL, buf) < 0) {
		int err = errno;

		/*
		 * A task without memory (a kernel thread, a zombie, a process
		 * whose leader exited) reads ESRCH here: gone only if its stat
		 * line says so too, else its fields are absent, no error.
		 */
		if (err == ESRCH && procfs_node_alive(vmon, node))
			return clear_all(s) ? SAMPLE_CHANGED : SAMPLE_UNCHANGED;
		if (err != ESRCH)
			clear_all(s);
		errno = err;
		return -1;
	}
	if (buf->len == 0)
		changes = clear_all(s);
	else
		changes = parse_store(desc->fields, desc->fields_nr, VMON_SOURCE_KEY, "smaps_rollup", buf->data,
				      buf->len, s, s->changed, s->present, first);
	if (changes < 0)
		return -1;
	return changes ? SAMPLE_CHANGED : SAMPLE_UNCHANGED;
}
