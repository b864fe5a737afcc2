/*
 * proc_follow.c: the tree-building wants.
 *
 * PROC_FOLLOW_THREADS lists /proc/PID/task when the process has more than
 * one thread, and then every task is a thread node on proc->threads, the
 * leader included (its thread node has the process's pid).  A process that
 * had one thread at the last sample and has one now is not listed at all:
 * its thread count comes with the stat line the probe already read.  With
 * the task iterator (iter.c) the tasks come from its records, not the
 * directory.
 *
 * PROC_FOLLOW_CHILDREN, outside VMON_FLAG_PROC_ALL, reads the children
 * files of the process's tasks (/proc/PID/task/TID/children: a child belongs
 * to the thread that forked it).  In PROC_ALL mode the tree comes from every
 * process's ppid instead, and this want has nothing to do.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/internal.h"

/* the node's task directory, rewound; held in the store when the budget allows */
static DIR *task_dir(vmon_t *vmon, proc_node_t *node, vmon_proc_follow_threads_t *s, bool *transient)
{
	int dir, fd;
	DIR *d;

	*transient = false;
	if (s && s->task_dir) {
		rewinddir(s->task_dir);
		return s->task_dir;
	}
	dir = procfs_node_dir(vmon, node, true);
	if (dir < 0)
		return NULL;
	fd = procfs_openat(vmon, dir, "task", O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		if (errno == ENOENT)
			errno = ESRCH;
		return NULL;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return NULL;
	}
	if (s && procfs_hold(vmon))
		s->task_dir = d;
	else
		*transient = true;
	return d;
}

static int dirent_pid(const struct dirent *de)
{
	const char *p = de->d_name;
	unsigned long long v;

	if (!parse_ull(&p, p + strlen(p), &v) || *p || v == 0 || v > 0x7fffffff)
		return 0;
	return (int)v;
}

/* tid is a task of proc's in this pass: a thread node for it, new if need be; false when out of memory */
static bool thread_listed(vmon_t *vmon, vmon_proc_t *proc, int tid, int *changes)
{
	struct _vmon_internal *in = vmon->internal;
	proc_node_t *t = pidmap_get(&in->threads, tid);

	if (t && t->pub.parent != proc) {
		/* a tid is unique system-wide; a mapping under another process is one we have not yet found gone */
		node_end(vmon, t);
		t = NULL;
	}
	if (!t) {
		t = node_new(vmon, tid, proc->pid, true, thread_wants(proc->wants));
		if (!t)
			return false;
		node_attach(vmon, t, node_of(proc));
		(*changes)++;
	}
	t->pass.seen = vmon->generation;
	return true;
}

int proc_follow_threads_sample(vmon_t *vmon, vmon_proc_t *proc, void **store)
{
	proc_node_t *node = node_of(proc);
	vmon_proc_follow_threads_t *s;
	vmon_proc_t *thread, *tmp;
	struct dirent *de;
	bool transient, leader_seen = false;
	int changes = 0, cursor, tid;
	DIR *d;

	if (proc->is_thread)
		return SAMPLE_UNCHANGED;
	if (node->line.num_threads <= 1) {
		/* single-threaded: no thread nodes, nothing to read (the leader's thread node goes, not the leader) */
		list_for_each_entry_safe(thread, tmp, &proc->threads, threads) {
			if (node_of(thread)->life.left)
				continue;
			if (thread->pid == proc->pid)
				node_mark_stale(vmon, node_of(thread));
			else
				node_end(vmon, node_of(thread));
			changes++;
		}
		return changes ? SAMPLE_CHANGED : SAMPLE_UNCHANGED;
	}

	s = node_store(vmon, node, VMON_STORE_PROC_FOLLOW_THREADS);
	if (!s)
		return -1;
	/* a source's records of the group (the task iterator's), the leader first; else task/ */
	cursor = SOURCE_THREADS_START;
	if ((tid = source_next_thread(vmon, node, &cursor)) != SOURCE_NO_RECORD) {
		for (; tid > 0; tid = source_next_thread(vmon, node, &cursor)) {
			leader_seen |= tid == proc->pid;
			if (!thread_listed(vmon, proc, tid, &changes))
				return -1;
		}
		if (!leader_seen) {
			errno = ESRCH;
			return -1;
		}
		goto listed;
	}
	d = task_dir(vmon, node, s, &transient);
	if (!d)
		return -1;
	errno = 0;
	while ((de = readdir(d))) {
		tid = dirent_pid(de);
		if (!tid)
			continue;
		leader_seen |= tid == proc->pid;
		if (!thread_listed(vmon, proc, tid, &changes))
			break;
	}
	/*
	 * A process's task directory lists its leader for as long as the
	 * process exists, a zombie's too.  A listing without it (the C library
	 * reads the ENOENT of a dead directory as its end) says the process
	 * died after its stat line was read: stale, with its threads.
	 */
	if (errno || !leader_seen) {
		int err = errno ? errno : ESRCH;

		if (transient)
			closedir(d);
		errno = err;
		return -1;
	}
	if (transient)
		closedir(d);

listed:
	list_for_each_entry_safe(thread, tmp, &proc->threads, threads) {
		if (node_of(thread)->pass.seen != vmon->generation && !node_of(thread)->life.left) {
			node_end(vmon, node_of(thread));
			changes++;
		}
	}
	return changes ? SAMPLE_CHANGED : SAMPLE_UNCHANGED;
}

/* append the pids of one children file ("pid pid pid ") to buf */
static int read_children(vmon_t *vmon, proc_node_t *node, int tid, int *held_fd, buf_t *acc)
{
	buf_t *buf = &vmon->internal->buf;
	char name[48];

	snprintf(name, sizeof(name), "task/%d/children", tid);
	if (procfs_read(vmon, node, name, held_fd, buf) < 0)
		return -1;
	if (buf_reserve(acc, acc->len + buf->len + 1) < 0)
		return -1;
	memcpy(acc->data + acc->len, buf->data, buf->len);
	acc->len += buf->len;
	acc->data[acc->len++] = ' ';
	acc->data[acc->len] = '\0';
	return 0;
}

int proc_follow_children_sample(vmon_t *vmon, vmon_proc_t *proc, void **store)
{
	struct _vmon_internal *in = vmon->internal;
	proc_node_t *node = node_of(proc);
	vmon_proc_follow_children_t *s;
	buf_t *acc = &in->list_buf;
	vmon_proc_t *child, *tmp;
	const char *p, *end;
	int changes = 0, r = 0;

	if (proc->is_thread || (vmon->flags & VMON_FLAG_PROC_ALL))
		return SAMPLE_UNCHANGED;
	s = node_store(vmon, node, VMON_STORE_PROC_FOLLOW_CHILDREN);
	if (!s || buf_reserve(acc, 256) < 0)
		return -1;
	acc->len = 0;

	if (node->line.num_threads <= 1) {
		r = read_children(vmon, node, proc->pid, &s->children_fd, acc);
	} else {
		/* each thread's children: list the tasks, read their files once each */
		bool transient;
		DIR *d = task_dir(vmon, node, proc->stores[VMON_STORE_PROC_FOLLOW_THREADS], &transient);
		struct dirent *de;

		if (!d) {
			r = -1;
		} else {
			while ((de = readdir(d))) {
				int tid = dirent_pid(de);

				if (!tid)
					continue;
				/* a thread that just exited takes its (empty) file with it: not an error */
				if (read_children(vmon, node, tid, tid == proc->pid ? &s->children_fd : NULL, acc) < 0 &&
				    ((errno != ESRCH && errno != ENOENT) || tid == proc->pid)) {
					r = -1;
					break;
				}
			}
			if (transient)
				closedir(d);
		}
	}
	if (r < 0)
		return -1;

	for (p = acc->data, end = acc->data + acc->len; p < end; ) {
		unsigned long long v;
		proc_node_t *c;

		while (p < end && (*p == ' ' || *p == '\n'))
			p++;
		if (p >= end)
			break;
		if (!parse_ull(&p, end, &v) || v == 0 || v > 0x7fffffff) {
			while (p < end && *p != ' ')
				p++;
			continue;
		}
		c = pidmap_get(&in->procs, (int)v);
		/*
		 * A node we know under another parent (or at the top) is either
		 * the same process, adopted here (its parent died and we are
		 * its subreaper), or a process whose pid was reused.  It moves
		 * here either way; sampling it next tells them apart by its
		 * start time, and a reused pid becomes old stale + new new.
		 * Marking it stale outright would report an adopted process as
		 * gone and born again.
		 */
		if (!c) {
			c = node_new(vmon, (int)v, (int)v, false, proc->wants);
			if (!c)
				break;
			changes++;
		}
		if (c->pub.parent != proc || list_empty(&c->pub.siblings))
			node_attach(vmon, c, node);
		c->pass.seen = vmon->generation;
	}

	/*
	 * A child gone from every children file was reaped, or was adopted
	 * by a process we do not follow.  Either way it leaves the watched
	 * subtree, where it is, so that the callbacks see it there, bottom-up;
	 * only a live process the caller monitors itself moves to the top
	 * instead.
	 */
	list_for_each_entry_safe(child, tmp, &proc->children, siblings) {
		bool alive;

		if (node_of(child)->life.left || node_of(child)->pass.seen == vmon->generation)
			continue;
		alive = procfs_node_exists(vmon, node_of(child));
		if (node_of(child)->life.monitors && alive)
			node_attach(vmon, node_of(child), NULL);
		else if (alive)
			node_mark_stale(vmon, node_of(child));
		else
			node_end(vmon, node_of(child));
		changes++;
	}
	return changes ? SAMPLE_CHANGED : SAMPLE_UNCHANGED;
}
