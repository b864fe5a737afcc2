/*
 * procfs_source.c: /proc as a sampling source (source.h).  It lists the
 * processes (PROC_ALL) and probes each node by its stat line, which proves
 * the pid is still the process we knew and gives the tree its parent,
 * state and thread count; the stores then read their own files through
 * procfs.c, which holds the fds and the budget.  This is the half of /proc
 * that makes nodes (node_new(), node_store()): procfs.c, which the tree
 * calls to close what a node holds, calls nothing of the tree.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/internal.h"

/*
 * A node that holds nothing (the budget is spent) opens its files by name
 * relative to the proc root, schedstat then stat, instead of opening its
 * directory first: two syscalls less in every pass.  The stat line proves
 * that the pid named our process when stat was opened (its start time), or
 * gives a new node its identity; schedstat, opened before, named the same
 * process then: a pid is not reused while its process lives, and a process
 * gone at the first open is not alive at the second.  (For a new node, the
 * schedstat could be a reaped predecessor's: reading it then fails with
 * ESRCH, and procfs_ran() cannot tell, which reads everything.)  Files read
 * later in the pass open the directory, proven by a read of this schedstat.
 * Only on a live /proc with run counts: a fixture's files do not die.
 */
static bool probe_by_name(vmon_t *vmon, proc_node_t *node)
{
	struct _vmon_internal *in = vmon->internal;

	return in->proc_is_live && in->have_schedstat && node->fds.dir_fd < 0 && node->fds.schedstat_fd < 0;
}

/*
 * The stat line at fd, read into line and parsed for the fields the tree
 * needs: 0, or -1 with ESRCH for a task being reaped (stat_ident_reaped():
 * 'X', or its state from before the reap with no thread, its parent read
 * as 0 and its group and session as -1, which the kernel no longer knows).
 * Such a line is read once more: when a thread other than the leader
 * execs, de_thread() gives it the leader's pid and then reaps the old
 * leader, so for a moment the pid's line is the reaped leader's while the
 * process lives on; the second read is the new leader's, and a task really
 * reaped reads ESRCH.  Counted in vmon_get_stats(3)'s reads when `counted`
 * (the sampling's reads; the event feed's are not).
 */
int procfs_read_ident(vmon_t *vmon, int fd, buf_t *line, stat_ident_t *id, bool counted)
{
	for (int tries = 0; tries < 2; tries++) {
		if (procfs_read_fd(vmon, fd, "stat", line, counted) < 0) {
			errno = procfs_gone_errno(errno);
			return -1;
		}
		/* the few fields the tree needs, parsed here once for every want */
		if (parse_stat_ident(line->data, line->len, id) < 0)
			return -1;
		if (!stat_ident_reaped(id))
			return 0;
	}
	errno = ESRCH;
	return -1;
}

/*
 * Is the node's task still the one we knew?  Asked when a read of one of its
 * files said it is gone (ESRCH), before the node is ended.  When a thread
 * other than the leader execs, de_thread() moves the leader's pid to it and
 * releases the old leader, and a file of the process read in that moment can
 * fail so while the process lives on: with the task iterator, whose records
 * are read at the start of the pass, a wchan read did for 6 of 24,000 such
 * execs.  The stat line, opened afresh by its path and read as the probe
 * reads it (procfs_read_ident(): twice where it looks reaped), settles it: gone
 * when it is not there (ENOENT, ESRCH), is a reaped task's or has another
 * start time.  Any other failure (no fd, no memory) proves nothing: alive,
 * and the next pass's probe tells.  A fixture's files do not die: there a
 * read that says gone is taken at its word.
 */
bool procfs_node_alive(vmon_t *vmon, proc_node_t *node)
{
	struct _vmon_internal *in = vmon->internal;
	stat_ident_t id;
	char path[48];
	int fd, r, err;

	if (!in->proc_is_live)
		return false;
	strcpy(procfs_node_path(node, path), "/stat");
	fd = procfs_openat(vmon, in->proc_fd, path, O_RDONLY);
	if (fd < 0)
		return procfs_gone_errno(errno) != ESRCH;
	r = procfs_read_ident(vmon, fd, &in->buf, &id, true);
	err = errno;
	close(fd);
	if (r < 0)
		return err != ESRCH;
	return node_start_matches(node, id.start);
}

/*
 * The first read of a node in every pass: its stat line, which proves it is
 * still the process we knew (a pid with another start time is a reused pid:
 * ESTALE) and gives its parent, state and thread count for building the
 * tree.  The line stays in internal->stat_line for the PROC_STAT sampler.
 */
int procfs_probe(vmon_t *vmon, proc_node_t *node)
{
	struct _vmon_internal *in = vmon->internal;
	vmon_proc_stat_t *stat = node_store(vmon, node, VMON_STORE_PROC_STAT);
	buf_t *line = &in->stat_line;
	stat_ident_t id;
	int fd, r;

	if (!stat)
		return -1;

	if (stat->stat_fd >= 0) {
		fd = stat->stat_fd;
	} else {
		int dir = probe_by_name(vmon, node) ? in->proc_fd : procfs_node_dir(vmon, node, false);
		char path[48];

		if (dir < 0)
			return -1;
		if (dir == in->proc_fd) {
			/* schedstat first, then stat: see probe_by_name() */
			strcpy(procfs_node_path(node, path), "/schedstat");
			node->fds.pass_schedstat_fd = procfs_openat(vmon, dir, path, O_RDONLY);
			if (node->fds.pass_schedstat_fd < 0) {
				errno = procfs_gone_errno(errno);
				return -1;
			}
			strcpy(procfs_node_path(node, path), "/stat");
		} else {
			strcpy(path, "stat");
		}
		fd = procfs_openat(vmon, dir, path, O_RDONLY);
		if (fd < 0) {
			errno = procfs_gone_errno(errno);
			return -1;
		}
	}
	r = procfs_read_ident(vmon, fd, line, &id, true);
	if (fd != stat->stat_fd) {
		int err = errno;

		if (r == 0 && procfs_hold_hot(vmon, node, true))
			stat->stat_fd = fd;
		else
			close(fd);
		errno = err;
	}
	if (r < 0)
		return -1;
	node->line.state = id.state;
	if (node->identified && !node_start_matches(node, id.start)) {
		errno = ESTALE;
		return -1;
	}
	node->start = id.start;
	node->identified = true;
	node->start_approx = false;
	node->line.ppid = id.ppid;
	node->line.threaded_before = node->line.num_threads > 1;
	node->line.num_threads = id.num_threads;
	node->pass.probed = vmon->generation;
	probe_read_line(in, node);
	return 0;
}

/*
 * PROC_ALL: merge the /proc listing into the pid index (a new pid is a new
 * node, a known pid is marked seen).  With a healthy event feed the births
 * came as events and there is no listing (`wanted` false): a process that
 * is gone is found so by its stat read.
 */
int procfs_list(vmon_t *vmon, bool wanted)
{
	int made;

	return wanted ? procfs_list_made(vmon, NULL, 0, &made) : 0;
}

int procfs_list_made(vmon_t *vmon, int *pids, int max, int *made)
{
	struct _vmon_internal *in = vmon->internal;
	struct dirent *de;

	*made = 0;
	rewinddir(vmon->proc_dir);
	errno = 0;
	while ((de = readdir(vmon->proc_dir))) {
		const char *p = de->d_name;
		unsigned long long v;
		proc_node_t *node;

		if (!parse_ull(&p, p + strlen(p), &v) || *p || v == 0 || v > 0x7fffffff)
			continue;
		node = pidmap_get(&in->procs, (int)v);
		if (!node) {
			node = node_new(vmon, (int)v, (int)v, false, vmon->proc_wants);
			if (!node)
				return -1;
			if (*made < max)
				pids[*made] = (int)v;
			(*made)++;
		}
		node->pass.seen = vmon->generation;
		errno = 0;
	}
	if (errno)
		return -1;
	return SOURCE_LISTED_ALL | SOURCE_LISTED_ENDS;
}

/* /proc as a source (source.h): the stat line read by the probe, and the stores read their own files */
const source_ops_t procfs_source = {
	.sampler	= VMON_SAMPLER_PROC,
	.list		= procfs_list,
	.probe		= procfs_probe,
};
