/*
 * proc_stat_extra.c: the PROC_STAT_EXTRA want (defs/proc_stat_extra.def),
 * the stat line's fields that PROC_STAT does not keep.  No read of its own:
 * the task iterator's record gives them (iter.c), else the stat line the
 * node's probe read at the start of its pass (internal->stat_line), which
 * PROC_STAT parsed just before.  Only where neither is this node's (a
 * record dropped while it stayed the same, and the store new: a want added
 * since) is the line read again.  A read that fails clears the store's
 * fields: absent, not old values looking current.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "core/internal.h"

int proc_stat_extra_sample(vmon_t *vmon, vmon_proc_t *proc, void **store)
{
	const vmon_store_desc_t *desc = &vmon_proc_store_descs[VMON_STORE_PROC_STAT_EXTRA];
	struct _vmon_internal *in = vmon->internal;
	proc_node_t *node = node_of(proc);
	vmon_proc_stat_extra_t *s = node_store(vmon, node, VMON_STORE_PROC_STAT_EXTRA);
	const buf_t *line = &in->stat_line;
	const char *rest;
	bool first;
	int r;

	if (!s)
		return -1;
	first = parse_none_present(s->present, sizeof(s->present));
	memset(s->changed, 0, sizeof(s->changed));

	r = source_fill(vmon, node, VMON_STORE_PROC_STAT_EXTRA, s, first);
	if (r != SOURCE_NO_RECORD) {
		if (r < 0)
			return -1;
		return r ? SAMPLE_CHANGED : SAMPLE_UNCHANGED;
	}
	if (!stat_line_probed(in, node)) {
		if (procfs_read(vmon, node, "stat", NULL, &in->buf) < 0) {
			int err = errno;

			for (int i = 0; i < desc->fields_nr; i++)
				parse_clear(&desc->fields[i], s, s->changed, s->present);
			errno = err;
			return -1;
		}
		line = &in->buf;
	}
	rest = parse_stat_fields(line->data, line->len, NULL, NULL);
	if (!rest) {
		errno = EPROTO;
		return -1;
	}
	r = parse_stat_rest(desc->fields, desc->fields_nr, rest, (size_t)(line->data + line->len - rest),
			    s, s->changed, s->present, first);
	if (r < 0)
		return -1;
	return r ? SAMPLE_CHANGED : SAMPLE_UNCHANGED;
}
