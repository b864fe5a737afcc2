/*
 * proc_sched.c: the PROC_SCHED want (defs/proc_sched.def): context
 * switches, OOM score and adjustment, I/O priority and CPU affinity.
 *
 * The context switches move only while the task runs, and status costs
 * more than the rest together: it is read when schedstat says the task ran
 * since the last sample, or the values come from the task iterator's
 * record.  The others can be changed while the task sleeps (its badness
 * with anyone's memory, the adjustment, ioprio_set(2), sched_setaffinity(2))
 * and are read at every sample; but oom_score, a function of the task's
 * memory, its adjustment and the machine's RAM and swap, is read again only
 * when the adjustment changed, the task ran or the stat line shows its
 * memory moved, and at the latest OOM_SCORE_REFRESH_SECS after the last
 * read (for reclaim within the counters' per-CPU slack, or swap added).
 *
 * The two syscalls name the task by its id, which may have been reused
 * since this pass found it.  The node's /proc directory stays the old
 * task's (its files read ESRCH once that task is gone), so the syscalls go
 * first and their answers are kept only if the OOM files, read through
 * that directory afterwards, could be read: the task was then still alive,
 * and its id still its own.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/internal.h"

#define FIELD(_sym) (&vmon_proc_store_descs[VMON_STORE_PROC_SCHED].fields[_sym])

/* linux/ioprio.h, which older headers lack */
#define IOPRIO_WHO_PROCESS_	1
#define IOPRIO_CLASS_SHIFT_	13
#define IOPRIO_LEVEL_MASK_	0x7

/* the kernel will not tell us (another user's task, a security module): absent, not an error */
static bool refused(int err)
{
	return err == EACCES || err == EPERM;
}

/*
 * The task's CPU mask as a list ("0-3,6", as status's Cpus_allowed_list)
 * into buf; 0, or -1 with errno.  The mask grows until the kernel's
 * nr_cpu_ids fits.
 */
static int affinity_list(pid_t tid, buf_t *buf)
{
	size_t cpus = 1024;

	for (;;) {
		cpu_set_t *set = CPU_ALLOC(cpus);
		size_t size = CPU_ALLOC_SIZE(cpus), len = 0;
		int err;

		if (!set)
			return -1;
		if (sched_getaffinity(tid, size, set) < 0) {
			err = errno;
			CPU_FREE(set);
			if (err == EINVAL && cpus < (1u << 20)) {
				cpus *= 2;
				continue;
			}
			errno = err;
			return -1;
		}
		/* at most "NNNNNNN-NNNNNNN," per run: reserve for the worst, a run per two CPUs */
		if (buf_reserve(buf, cpus * 8 + 1) < 0) {
			CPU_FREE(set);
			return -1;
		}
		for (size_t c = 0; c < cpus; c++) {
			size_t end = c;

			if (!CPU_ISSET_S(c, size, set))
				continue;
			while (end + 1 < cpus && CPU_ISSET_S(end + 1, size, set))
				end++;
			len += (size_t)snprintf(buf->data + len, buf->cap - len, len ? ",%zu" : "%zu", c);
			if (end > c)
				len += (size_t)snprintf(buf->data + len, buf->cap - len, "-%zu", end);
			c = end;
		}
		CPU_FREE(set);
		buf->data[len] = '\0';
		buf->len = len;
		return 0;
	}
}

/* the context switches: status's lines, or the source's record */
static int sample_switches(vmon_t *vmon, proc_node_t *node, vmon_proc_sched_t *s, bool first)
{
	const vmon_store_desc_t *desc = &vmon_proc_store_descs[VMON_STORE_PROC_SCHED];
	buf_t *buf = &vmon->internal->buf;
	int r = source_fill(vmon, node, VMON_STORE_PROC_SCHED, s, first);

	if (r != SOURCE_NO_RECORD)
		return r;
	if (!first && procfs_ran(vmon, node) == 0) {
		vmon->internal->stats.reads_skipped++;
		return 0;
	}
	if (procfs_read(vmon, node, "status", &node->fds.status_fd, buf) < 0)
		return -1;
	return parse_store(desc->fields, desc->fields_nr, VMON_SOURCE_KEY, "status", buf->data, buf->len,
			   s, s->changed, s->present, first);
}

/* one of the OOM files (a number on a line of its own) */
static int sample_oom(vmon_t *vmon, proc_node_t *node, vmon_proc_sched_t *s, const char *file, bool first)
{
	const vmon_store_desc_t *desc = &vmon_proc_store_descs[VMON_STORE_PROC_SCHED];
	buf_t *buf = &vmon->internal->buf;

	if (procfs_read(vmon, node, file, NULL, buf) < 0)
		return -1;
	return parse_store(desc->fields, desc->fields_nr, VMON_SOURCE_POS, file, buf->data, buf->len,
			   s, s->changed, s->present, first);
}

/* can oom_score have changed since it was read?  (see the top) */
static bool oom_score_may_move(vmon_t *vmon, proc_node_t *node, const vmon_proc_sched_t *s)
{
	const vmon_proc_stat_t *stat = node->pub.stores[VMON_STORE_PROC_STAT];

	if (BITTEST(s->changed, VMON_PROC_SCHED_OOM_SCORE_ADJ) || !BITTEST(s->present, VMON_PROC_SCHED_OOM_SCORE) ||
	    due_reached(vmon->internal, node->due.oom_score) || node->life.exec_pending || !stat ||
	    node->pub.errors[VMON_STORE_PROC_STAT])
		return true;
	if (BITTEST(stat->changed, VMON_PROC_STAT_RSS) || BITTEST(stat->changed, VMON_PROC_STAT_VSIZE))
		return true;
	return procfs_ran(vmon, node) != 0;
}

/* a derived number into the store, or absent when the kernel refused it (err) */
static int set_derived(vmon_proc_sched_t *s, int sym, int err, long long value, bool first)
{
	int r;

	if (err)
		return parse_clear(FIELD(sym), s, s->changed, s->present);
	r = parse_set_ull(FIELD(sym), s, (unsigned long long)value, s->changed, first);
	if (r >= 0)
		BITSET(s->present, sym);
	return r;
}

int proc_sched_sample(vmon_t *vmon, vmon_proc_t *proc, void **store)
{
	struct _vmon_internal *in = vmon->internal;
	proc_node_t *node = node_of(proc);
	buf_t *buf = &in->buf;
	vmon_proc_sched_t *s = node_store(vmon, node, VMON_STORE_PROC_SCHED);
	int changes = 0, r, err = 0, prio_err = 0, cpus_err = 0;
	char *cpus = NULL;
	size_t cpus_len = 0;
	long prio = 0;
	bool first;

	if (!s)
		return -1;
	first = !BITTEST(s->present, VMON_PROC_SCHED_OOM_SCORE_ADJ);
	memset(s->changed, 0, sizeof(s->changed));

	r = sample_switches(vmon, node, s, first);
	if (r < 0) {
		if (errno == ESRCH)
			return -1;
		err = errno;
	} else {
		changes += r;
	}

	/* the syscalls name the task by id: only on the live /proc, whose ids are ours */
	if (in->proc_is_live) {
		prio = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS_, proc->pid);
		if (prio < 0)
			prio_err = errno;
		if (affinity_list(proc->pid, buf) < 0) {
			cpus_err = errno;
		} else if (!(cpus = malloc(buf->len + 1))) {
			return -1;
		} else {
			memcpy(cpus, buf->data, buf->len + 1);
			cpus_len = buf->len + 1;
		}
		if (prio_err == ESRCH || cpus_err == ESRCH) {
			free(cpus);
			errno = ESRCH;
			return -1;
		}
	} else {
		prio_err = cpus_err = EOPNOTSUPP;
	}

	/* read after the syscalls: proof that the id was still the task's (see the top) */
	r = sample_oom(vmon, node, s, "oom_score_adj", first);
	if (r >= 0) {
		changes += r;
		if (first || oom_score_may_move(vmon, node, s)) {
			r = sample_oom(vmon, node, s, "oom_score", first);
			if (r >= 0)
				node->due.oom_score = due_in(in, OOM_SCORE_REFRESH_SECS *
							     (first ? 0.5 + (double)(proc->pid % 16) / 32.0 : 1.0));
		} else {
			in->stats.reads_skipped++;
			r = 0;
		}
	}
	if (r < 0) {
		free(cpus);
		if (errno == ESRCH)
			return -1;
		err = errno;
		prio_err = cpus_err = err;	/* not proven the task's: absent */
	} else {
		changes += r;
	}

	r = set_derived(s, VMON_PROC_SCHED_IO_CLASS, prio_err, prio >> IOPRIO_CLASS_SHIFT_, first);
	if (r >= 0)
		changes += r;
	r = set_derived(s, VMON_PROC_SCHED_IO_LEVEL, prio_err, prio & IOPRIO_LEVEL_MASK_, first);
	if (r >= 0)
		changes += r;
	if (cpus_err) {
		r = parse_clear(FIELD(VMON_PROC_SCHED_CPUS_ALLOWED), s, s->changed, s->present);
	} else {
		r = parse_set_string(FIELD(VMON_PROC_SCHED_CPUS_ALLOWED), s, cpus, cpus_len, s->changed, first);
		if (r >= 0)
			BITSET(s->present, VMON_PROC_SCHED_CPUS_ALLOWED);
	}
	free(cpus);
	if (r >= 0)
		changes += r;

	/* a refusal leaves its fields absent; any other failure of the syscalls is the store's error */
	if (!err && prio_err && !refused(prio_err) && prio_err != EOPNOTSUPP)
		err = prio_err;
	if (!err && cpus_err && !refused(cpus_err) && cpus_err != EOPNOTSUPP)
		err = cpus_err;
	if (err) {
		errno = err;
		return -1;
	}
	return changes ? SAMPLE_CHANGED : SAMPLE_UNCHANGED;
}
