/*
 * proc_env.c: the PROC_ENV want (defs/proc_env.def): /proc/PID/environ and
 * the cwd and root links, read through the node's directory fd like every
 * other file, so a reused pid can never show another process's environment.
 *
 * A process changes these only while it runs (its own setenv() or chdir()),
 * so one that schedstat says did not run since the last sample is not read
 * again.  Each part fails on its own: a process we may not trace gives
 * EACCES for all three, a zombie has no environment but may still have a
 * cwd (and no cwd: ENOENT, which is not an error); what could be read is
 * kept, the rest reads as missing, and the last error is what
 * proc->errors[] says.
 *
 * environ reads ESRCH from a task that has no memory as well as from one
 * that is gone: a kernel thread, a zombie not yet reaped.  Taken for gone,
 * such a task was marked stale and found again, as a new node of the same
 * pid and start time, every pass (every kernel thread, with a cwd column).
 * Its directory still reads: then it has no environment, and no error.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "core/internal.h"

#define FIELD(_sym) (&vmon_proc_store_descs[VMON_STORE_PROC_ENV].fields[_sym])

static int sample_environ(vmon_t *vmon, proc_node_t *node, vmon_proc_env_t *s, bool first)
{
	buf_t *buf = &vmon->internal->buf;
	int r;

	if (procfs_read(vmon, node, "environ", NULL, buf) < 0)
		return -1;
	r = parse_set_string(FIELD(VMON_PROC_ENV_ENVIRON), s, buf->data, buf->len, s->changed, first);
	if (r < 0)
		return -1;
	BITSET(s->present, VMON_PROC_ENV_ENVIRON);
	if (r > 0 || first || !s->envv) {
		if (parse_split_strings(FIELD(VMON_PROC_ENV_ENVIRON), FIELD(VMON_PROC_ENV_ENVC), FIELD(VMON_PROC_ENV_ENVV),
					s, s->changed, s->present, first) < 0)
			return -1;
		return 1;
	}
	return 0;
}

static int sample_link(vmon_t *vmon, proc_node_t *node, vmon_proc_env_t *s, int sym, bool first)
{
	const vmon_field_t *f = FIELD(sym);
	buf_t *buf = &vmon->internal->buf;
	int r;

	if (procfs_readlink(vmon, node, f->file, buf) < 0)
		return -1;
	r = parse_set_string(f, s, buf->data, buf->len, s->changed, first);
	if (r >= 0)
		BITSET(s->present, sym);
	return r;
}

int proc_env_sample(vmon_t *vmon, vmon_proc_t *proc, void **store)
{
	static const int link_rows[] = { VMON_PROC_ENV_CWD, VMON_PROC_ENV_ROOT };
	proc_node_t *node = node_of(proc);
	vmon_proc_env_t *s;
	bool first;
	int changes = 0, r, err = 0;

	if (proc->is_thread)
		return SAMPLE_UNCHANGED;
	s = node_store(vmon, node, VMON_STORE_PROC_ENV);
	if (!s)
		return -1;
	first = !BITTEST(s->present, VMON_PROC_ENV_ENVIRON) && !BITTEST(s->present, VMON_PROC_ENV_CWD);
	memset(s->changed, 0, sizeof(s->changed));
	if (!first && procfs_ran(vmon, node) == 0) {
		vmon->internal->stats.reads_skipped += 3;
		return SAMPLE_UNCHANGED;
	}

	r = sample_environ(vmon, node, s, first);
	if (r < 0) {
		err = errno;
		if (err == ESRCH && !procfs_node_alive(vmon, node))
			return (errno = ESRCH, -1);
		if (err == ESRCH)
			err = 0;	/* no memory, so no environment: a kernel thread, a zombie */
		/* missing, not what it was, and envv points at nothing */
		r = parse_clear_strings(FIELD(VMON_PROC_ENV_ENVIRON), FIELD(VMON_PROC_ENV_ENVC), FIELD(VMON_PROC_ENV_ENVV),
					s, s->changed, s->present);
		if (r < 0)
			return -1;
		changes += r;
	} else {
		changes += r;
	}
	for (size_t i = 0; i < sizeof(link_rows) / sizeof(link_rows[0]); i++) {
		r = sample_link(vmon, node, s, link_rows[i], first);
		if (r < 0) {
			if (errno == ESRCH)
				return -1;
			/* ENOENT: a zombie has no directories any more; that is no error */
			if (errno != ENOENT)
				err = errno;
			changes += parse_clear(FIELD(link_rows[i]), s, s->changed, s->present);
		} else {
			changes += r;
		}
	}
	if (err) {
		errno = err;
		return -1;
	}
	return changes ? SAMPLE_CHANGED : SAMPLE_UNCHANGED;
}
