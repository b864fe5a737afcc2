/*
 * proc_io.c: the PROC_IO want (defs/proc_io.def), /proc/PID/io.
 *
 * I/O counters move only when a task of the process runs: it is the task
 * doing a read or write, dirtying or truncating a page, that is charged.  So
 * a single-threaded process, or a thread, that schedstat says was not on a
 * CPU since the last sample is not read again (procfs_ran()).  A process
 * that was single-threaded at the last sample can only have grown threads by
 * running, so the rule holds across thread creation too.  Not across thread
 * exit: a process's io also counts its exited threads, and a thread that did
 * I/O and exited while the main thread slept leaves a single-threaded
 * process whose main thread did not run.  So the process must have been
 * single-threaded at the last sample as well.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "core/internal.h"

int proc_io_sample(vmon_t *vmon, vmon_proc_t *proc, void **store)
{
	const vmon_store_desc_t *desc = &vmon_proc_store_descs[VMON_STORE_PROC_IO];
	proc_node_t *node = node_of(proc);
	buf_t *buf = &vmon->internal->buf;
	vmon_proc_io_t *s = node_store(vmon, node, VMON_STORE_PROC_IO);
	bool first;
	int r;

	if (!s)
		return -1;
	first = !BITTEST(s->present, VMON_PROC_IO_RCHAR);
	memset(s->changed, 0, sizeof(s->changed));

	/* a source's record, summed over the group as io sums it (the task iterator's) */
	r = source_fill(vmon, node, VMON_STORE_PROC_IO, s, first);
	if (r != SOURCE_NO_RECORD) {
		if (r < 0)
			return -1;
		return r ? SAMPLE_CHANGED : SAMPLE_UNCHANGED;
	}

	if (!first && (proc->is_thread || (node->line.num_threads <= 1 && !node->line.threaded_before)) &&
	    procfs_ran(vmon, node) == 0) {
		vmon->internal->stats.reads_skipped++;
		return SAMPLE_UNCHANGED;
	}
	if (procfs_read(vmon, node, "io", &s->io_fd, buf) < 0) {
		int err = errno;

		/* another user's process: say so through errors[], show nothing stale */
		for (int i = 0; i < desc->fields_nr; i++)
			parse_clear(&desc->fields[i], s, s->changed, s->present);
		errno = err;
		return -1;
	}
	r = parse_store(desc->fields, desc->fields_nr, VMON_SOURCE_KEY, "io", buf->data, buf->len,
			s, s->changed, s->present, first);
	if (r < 0)
		return -1;
	return r ? SAMPLE_CHANGED : SAMPLE_UNCHANGED;
}
