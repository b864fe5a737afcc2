/*
 * procfs.c: reading /proc.
 *
 * Every file is opened with O_CLOEXEC relative to the node's own directory
 * fd (/proc/PID, or /proc/PID/task/TID for a thread).  An fd opened under
 * /proc/PID stays bound to that process: once it exits, reads through it
 * fail with ESRCH even if its pid is reused.  So a node's identity (pid +
 * start time) only needs checking when its directory is opened by name, and
 * every file opened through that directory fd is the same process's.
 *
 * File descriptors are a budget, not a given: the fds worth keeping between
 * passes (stat, statm, io...) are held while internal->fds_held is under
 * internal->fd_budget; beyond it files are opened, read and closed each
 * pass, which costs two syscalls more per file but loses nothing.  When the
 * process runs out of fds anyway (EMFILE: the caller opened more of its own),
 * the budget halves and held fds are released until we are under it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "internal.h"

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

int vmon_buf_reserve(vmon_buf_t *buf, size_t cap)
{
	char *data;

	if (buf->cap >= cap + 1 && buf->data)
		return 0;
	if (cap < 4096)
		cap = 4096;
	data = realloc(buf->data, cap + 1);
	if (!data)
		return -1;
	buf->data = data;
	buf->cap = cap + 1;
	return 0;
}

void vmon_buf_free(vmon_buf_t *buf)
{
	free(buf->data);
	buf->data = NULL;
	buf->len = buf->cap = 0;
}

int procfs_open_root(vmon_t *vmon, const char *root)
{
	struct _vmon_internal *in = vmon->internal;
	struct statfs sfs;

	in->proc_root = strdup(root);
	if (!in->proc_root)
		return -1;
	vmon->proc_dir = opendir(root);
	if (!vmon->proc_dir)
		return -1;
	in->proc_fd = dirfd(vmon->proc_dir);
	in->proc_is_live = fstatfs(in->proc_fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC;
	return 0;
}

bool procfs_hold(vmon_t *vmon)
{
	struct _vmon_internal *in = vmon->internal;

	if (in->fds_held >= in->fd_budget)
		return false;
	in->fds_held++;
	return true;
}

void procfs_close_held(vmon_t *vmon, int *fd)
{
	if (*fd < 0)
		return;
	close(*fd);
	*fd = -1;
	vmon->internal->fds_held--;
}

/*
 * Out of fds: halve the budget and give back held fds until under it.  The
 * walk is linear, but it only happens when the process hit its fd limit.
 */
void procfs_shrink_budget(vmon_t *vmon)
{
	struct _vmon_internal *in = vmon->internal;
	pidmap_t *maps[] = { &in->threads, &in->procs };

	in->fd_budget = in->fds_held / 2;
	for (size_t m = 0; m < sizeof(maps) / sizeof(maps[0]); m++) {
		for (size_t i = 0; i <= maps[m]->mask && in->fds_held > in->fd_budget; i++) {
			proc_node_t *node = maps[m]->slots[i].node;

			if (!maps[m]->slots[i].pid)
				continue;
			/*
			 * The node being sampled keeps its directories: the
			 * open that ran out of fds is relative to one, and its
			 * task listing may be under way.
			 */
			if (node == in->busy)
				node_release_files(vmon, node);
			else
				node_release_fds(vmon, node);
		}
	}
}

int procfs_openat(vmon_t *vmon, int dir_fd, const char *name, int flags)
{
	int fd;

	vmon->internal->stats.opens++;
	fd = openat(dir_fd, name, flags | O_CLOEXEC);
	if (fd < 0 && (errno == EMFILE || errno == ENFILE) && vmon->internal->fds_held > 0) {
		procfs_shrink_budget(vmon);
		vmon->internal->stats.opens++;
		fd = openat(dir_fd, name, flags | O_CLOEXEC);
	}
	return fd;
}

/* a vanished process reads as ENOENT or ESRCH depending on where it is caught */
static int gone_errno(int err)
{
	return (err == ENOENT || err == ESRCH) ? ESRCH : err;
}

/*
 * Read a whole file into buf from offset 0.  /proc's one-record files
 * (stat, statm, io, status...) are produced whole by a single read, so a
 * read shorter than asked for is the end; `exhaust` reads on to a zero read
 * for files that can come in pieces (cmdline) and for regular files.
 */
static int read_whole(vmon_t *vmon, int fd, vmon_buf_t *buf, bool exhaust)
{
	size_t len = 0;
	ssize_t r;

	vmon->internal->stats.reads++;
	for (;;) {
		if (buf->cap < len + 1025 && vmon_buf_reserve(buf, buf->cap ? buf->cap * 2 : 4096) < 0)
			return -1;
		r = pread(fd, buf->data + len, buf->cap - 1 - len, (off_t)len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		len += (size_t)r;
		if (r == 0 || (!exhaust && len < buf->cap - 1))
			break;
	}
	buf->len = len;
	buf->data[len] = '\0';
	return 0;
}

/*
 * The files made by a seq_file iterator (a record per child in children)
 * come a page or so per read however large the buffer, so a short read is
 * not their end: a process with 5,000 children lists ~800 in the first.
 */
static bool exhaust_reads(vmon_t *vmon, const char *name)
{
	size_t len = strlen(name);

	return !vmon->internal->proc_is_live || strcmp(name, "cmdline") == 0 || strcmp(name, "environ") == 0 ||
	       (len >= 8 && strcmp(name + len - 8, "children") == 0);
}

static void node_dir_path(const proc_node_t *node, char *path, size_t size)
{
	if (node->pub.is_thread)
		snprintf(path, size, "%d/task/%d", node->tgid, node->pub.pid);
	else
		snprintf(path, size, "%d", node->pub.pid);
}

/* the start time (field 22) of a stat line, or 0 if the line is malformed */
static unsigned long long stat_line_start(const char *line, size_t len)
{
	const char *p = parse_stat_fields(line, len, NULL, NULL), *end = line + len;
	unsigned long long start;

	/* p is at field 3; skip to field 22 */
	for (int field = 3; p && field < 22; field++) {
		while (p < end && *p != ' ')
			p++;
		while (p < end && *p == ' ')
			p++;
		if (p >= end)
			return 0;
	}
	if (!p || !parse_ull(&p, end, &start))
		return 0;
	return start;
}

/*
 * The node's directory fd, opened by name if it is not held.  With verify,
 * a node whose identity is known is checked against the directory's stat:
 * a different start time means our process is gone and the pid reused.
 */
int procfs_node_dir(vmon_t *vmon, proc_node_t *node, bool verify)
{
	struct _vmon_internal *in = vmon->internal;
	char path[64];
	int fd;

	if (node->dir_fd >= 0)
		return node->dir_fd;

	node_dir_path(node, path, sizeof(path));
	fd = procfs_openat(vmon, in->proc_fd, path, O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		errno = gone_errno(errno);
		return -1;
	}
	if (verify && node->confirmed) {
		vmon_buf_t *buf = &in->buf;
		int sfd = procfs_openat(vmon, fd, "stat", O_RDONLY);

		if (sfd < 0 || read_whole(vmon, sfd, buf, exhaust_reads(vmon, "stat")) < 0 ||
		    stat_line_start(buf->data, buf->len) != node->start) {
			int err = sfd < 0 ? gone_errno(errno) : ESRCH;

			if (sfd >= 0)
				close(sfd);
			close(fd);
			errno = err;
			return -1;
		}
		close(sfd);
	}
	node->dir_fd = fd;
	node->dir_held = procfs_hold(vmon);
	return fd;
}

/* the end of the node's pass: a directory opened only for it is closed */
void procfs_node_done(vmon_t *vmon, proc_node_t *node)
{
	if (node->dir_fd >= 0 && !node->dir_held) {
		close(node->dir_fd);
		node->dir_fd = -1;
	}
}

/*
 * Read the node's file `name` whole into buf.  held_fd, if not NULL, is where
 * the node keeps this file open between passes: used if open, and filled if
 * the budget allows.  Returns 0, or -1 with errno: ESRCH when the process is
 * gone, anything else (EACCES...) when it is there but the file cannot be read.
 */
int procfs_read(vmon_t *vmon, proc_node_t *node, const char *name, int *held_fd, vmon_buf_t *buf)
{
	bool exhaust = exhaust_reads(vmon, name);
	int dir, fd;

	if (held_fd && *held_fd >= 0) {
		if (read_whole(vmon, *held_fd, buf, exhaust) == 0)
			return 0;
		errno = gone_errno(errno);
		return -1;
	}

	dir = procfs_node_dir(vmon, node, true);
	if (dir < 0)
		return -1;
	fd = procfs_openat(vmon, dir, name, O_RDONLY);
	if (fd < 0) {
		/*
		 * ENOENT is a process that died, or a file this kernel does not
		 * have (io without CONFIG_TASK_IO_ACCOUNTING, wchan without
		 * CONFIG_KALLSYMS, children without CONFIG_PROC_CHILDREN), or a
		 * thread's file after that thread exited.  Only the first is
		 * ESRCH, which makes the node stale: the process's stat, which
		 * every kernel has, tells them apart.
		 */
		if (errno == ENOENT && faccessat(dir, "stat", F_OK, 0) == 0)
			errno = ENOENT;
		else
			errno = gone_errno(errno);
		return -1;
	}
	if (read_whole(vmon, fd, buf, exhaust) < 0) {
		int err = gone_errno(errno);

		close(fd);
		errno = err;
		return -1;
	}
	if (held_fd && procfs_hold(vmon))
		*held_fd = fd;
	else
		close(fd);
	return 0;
}

/* read a file of the proc root itself (stat, meminfo) */
int procfs_read_root(vmon_t *vmon, const char *name, int *held_fd, vmon_buf_t *buf)
{
	bool exhaust = exhaust_reads(vmon, name);
	int fd = *held_fd;

	if (fd < 0) {
		int r;

		fd = procfs_openat(vmon, vmon->internal->proc_fd, name, O_RDONLY);
		if (fd < 0)
			return -1;
		/*
		 * The system files are read every pass and cost one fd each:
		 * always held on the real /proc.  Not on a fixture root, where
		 * the test replaces files and a held fd would read the old one.
		 */
		if (vmon->internal->proc_is_live) {
			*held_fd = fd;
		} else {
			r = read_whole(vmon, fd, buf, exhaust);
			close(fd);
			return r;
		}
	}
	return read_whole(vmon, fd, buf, exhaust);
}

/* the target of the node's symlink `name`; ENOENT for a kernel thread's exe */
ssize_t procfs_readlink(vmon_t *vmon, proc_node_t *node, const char *name, vmon_buf_t *buf)
{
	int dir = procfs_node_dir(vmon, node, true);
	ssize_t r;

	if (dir < 0)
		return -1;
	if (vmon_buf_reserve(buf, 256) < 0)
		return -1;
	vmon->internal->stats.reads++;
	for (;;) {
		r = readlinkat(dir, name, buf->data, buf->cap - 1);
		if (r < 0)
			return -1;
		if ((size_t)r < buf->cap - 1)
			break;
		if (vmon_buf_reserve(buf, buf->cap * 2) < 0)
			return -1;
	}
	buf->len = (size_t)r;
	buf->data[r] = '\0';
	return r;
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
	vmon_buf_t *line = &in->stat_line;
	const char *p, *end;
	unsigned long long v[21];	/* fields 3..22, v[field - 3] */
	int fd;

	if (!stat)
		return -1;

	if (stat->stat_fd >= 0) {
		if (read_whole(vmon, stat->stat_fd, line, exhaust_reads(vmon, "stat")) < 0) {
			errno = gone_errno(errno);
			return -1;
		}
	} else {
		int dir = procfs_node_dir(vmon, node, false);

		if (dir < 0)
			return -1;
		fd = procfs_openat(vmon, dir, "stat", O_RDONLY);
		if (fd < 0) {
			errno = gone_errno(errno);
			return -1;
		}
		if (read_whole(vmon, fd, line, exhaust_reads(vmon, "stat")) < 0) {
			int err = gone_errno(errno);

			close(fd);
			errno = err;
			return -1;
		}
		if (procfs_hold(vmon))
			stat->stat_fd = fd;
		else
			close(fd);
	}

	/*
	 * The few fields the tree needs, parsed here once for every want: ppid
	 * (4), num_threads (20) and start (22).  The others are only stepped
	 * over, so that a bad value in one of them is an error on that field
	 * (the sampler's), not on the whole node.  A line cut short is trusted
	 * up to its last whole word only.
	 */
	end = line->data + parse_complete_len(line->data, line->len);
	p = parse_stat_fields(line->data, (size_t)(end - line->data), NULL, NULL);
	if (!p || p >= end) {
		errno = EPROTO;
		return -1;
	}
	node->state = *p;
	for (int field = 4; field <= 22; field++) {
		unsigned long long value;

		while (p < end && *p != ' ')
			p++;
		while (p < end && *p == ' ')
			p++;
		if (field != 4 && field != 20 && field != 22)
			continue;
		if (!parse_ull(&p, end, &value) || (p < end && *p != ' ' && *p != '\n')) {
			errno = EPROTO;
			return -1;
		}
		v[field - 3] = value;
	}
	if (node->confirmed && v[22 - 3] != node->start) {
		errno = ESTALE;
		return -1;
	}
	node->start = v[22 - 3];
	node->ppid = (int)v[4 - 3];
	node->num_threads_before = node->num_threads;
	node->num_threads = (int)v[20 - 3];
	node->probed = vmon->generation;
	in->stat_line_generation = vmon->generation;
	in->stat_line_node = node;
	return 0;
}

/* is there a /proc/PID now (whichever process it is)? */
bool procfs_pid_exists(vmon_t *vmon, int pid)
{
	char name[16];

	snprintf(name, sizeof(name), "%d", pid);
	return faccessat(vmon->internal->proc_fd, name, F_OK, 0) == 0;
}

/*
 * Has the task run since the last sample?  /proc/PID/schedstat counts the
 * times it was put on a CPU; a task that was not cannot have changed its
 * wait channel, its I/O counters or its credentials.  It is the leader
 * task's count, so for a multi-threaded process it only speaks for the
 * leader.  Returns 1, 0, or -1 when it cannot tell.
 */
int procfs_ran(vmon_t *vmon, proc_node_t *node)
{
	struct _vmon_internal *in = vmon->internal;
	unsigned long long run_ns, wait_ns, count;
	const char *p, *end;

	if (node->ran_generation == vmon->generation)
		return node->ran_answer;
	node->ran_generation = vmon->generation;
	node->ran_answer = -1;
	if (!in->have_schedstat)
		return -1;
	if (procfs_read(vmon, node, "schedstat", &node->schedstat_fd, &in->buf) < 0)
		return -1;
	p = in->buf.data;
	end = p + in->buf.len;
	if (!parse_ull(&p, end, &run_ns) || (p++, !parse_ull(&p, end, &wait_ns)) ||
	    (p++, !parse_ull(&p, end, &count)) || count == 0) {
		/* all zeros: the kernel does not keep sched_info; stop asking */
		in->have_schedstat = false;
		return -1;
	}
	node->ran_answer = node->run_count == 0 || count != node->run_count || run_ns != node->run_ns;
	node->run_count = count;
	node->run_ns = run_ns;
	return node->ran_answer;
}
