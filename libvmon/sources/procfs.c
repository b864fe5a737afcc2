/*
 * procfs.c: reading /proc files under the fd budget (its source half,
 * listing and probing, is procfs_source.c).
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
 * pass, which costs two syscalls more per file (and two for the directory)
 * but loses nothing.  When the process runs out of fds anyway (EMFILE: the
 * caller opened more of its own), the budget halves and held fds are
 * released until we are under it; then it grows back towards the configured
 * one by an eighth of that in each pass that did not run out.
 *
 * Held fds are of two kinds.  Hot ones are read in every pass whatever the
 * task did: stat, schedstat, the follow wants' children and task directory.
 * Warm ones are read only in the passes after the task ran or its memory
 * moved: statm, io, wchan, status, and the node's directory (needed only to
 * open what is not held, and for the owner's uid).  A warm fd saves as
 * much as a hot one but only in those passes, so warm fds get only what the
 * hot fds of every node leave of the budget (directories first, see
 * hold_warm()); when a hot fd finds the budget full while warm fds hold more
 * than their share, they are given back.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "core/internal.h"

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

/*
 * Does the kernel keep sched_info (the run counts of /proc/PID/schedstat)?
 * Without it every task reads all zeros, and so does a task that has not
 * run yet; our own task is running, so its count says which.
 */
static bool self_has_schedstat(vmon_t *vmon)
{
	char buf[128];
	const char *p = buf;
	unsigned long long v[3];
	ssize_t r;
	int fd = openat(vmon->internal->proc_fd, "self/schedstat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	r = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	if (r <= 0)
		return false;
	buf[r] = '\0';
	for (int i = 0; i < 3; i++) {
		if ((i && *p++ != ' ') || !parse_ull(&p, buf + r, &v[i]))
			return false;
	}
	return v[2] > 0;
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
	if (in->proc_is_live)
		in->have_schedstat = self_has_schedstat(vmon);
	return 0;
}

/*
 * The hot fds a node holds when it holds them all.  With a source of
 * records (the task iterator, iter.c) stat and schedstat are not read, nor
 * the task directory, so its nodes leave the budget to the warm fds (the directory first).
 */
static int hot_fds(const vmon_t *vmon, vmon_proc_wants_t w)
{
	if (source_has(vmon, SOURCE_RECORDS))
		return !!(w & VMON_WANT_PROC_FOLLOW_CHILDREN);
	return 1 + vmon->internal->have_schedstat + !!(w & VMON_WANT_PROC_FOLLOW_CHILDREN) + !!(w & VMON_WANT_PROC_FOLLOW_THREADS);
}

/*
 * A budget that EMFILE cut grows back, once a pass, in every pass after the
 * one that cut it: a shortage that passes costs a few passes of held fds,
 * not the instance's life, and one that lasts cuts it again at the next
 * EMFILE (so it goes up slowly and down at once).
 */
static void budget_regrow(vmon_t *vmon)
{
	struct _vmon_internal *in = vmon->internal;
	int step = in->fd_budget_max / 8 > 0 ? in->fd_budget_max / 8 : 1;

	if (in->fd_budget >= in->fd_budget_max || in->fd_budget_pass == vmon->generation)
		return;
	in->fd_budget_pass = vmon->generation;
	in->fd_budget = in->fd_budget_max - in->fd_budget > step ? in->fd_budget + step : in->fd_budget_max;
}

/* what the warm fds may hold: the budget less the hot fds of every node */
static int warm_allowance(vmon_t *vmon)
{
	struct _vmon_internal *in = vmon->internal;
	long left = (long)in->fd_budget - (long)hot_fds(vmon, vmon->proc_wants) * (long)(in->procs.nr + in->threads.nr);

	return left > 0 ? (int)left : 0;
}

/* give back warm fds until they are within their share; linear, but only when the share shrank */
static void release_warm(vmon_t *vmon, int allowance)
{
	struct _vmon_internal *in = vmon->internal;
	pidmap_t *maps[] = { &in->threads, &in->procs };

	for (size_t m = 0; m < sizeof(maps) / sizeof(maps[0]); m++) {
		size_t pos;

		pidmap_for_each(maps[m], pos) {
			proc_node_t *node = pidmap_node_at(maps[m], pos);

			if (in->warm_held <= allowance)
				break;
			vmon->internal->release_fds(vmon, node, NODE_RELEASE_WARM);
			/* (the node being sampled may be using its directory) */
			if (node != in->busy)
				procfs_close_dir(vmon, node);
		}
	}
}

/* may `need` more fds be held?  Warm fds beyond their share make room if they must */
static bool room_for(vmon_t *vmon, int need)
{
	struct _vmon_internal *in = vmon->internal;

	budget_regrow(vmon);
	if (in->fds_held + need > in->fd_budget && in->warm_held > 0) {
		int allowance = warm_allowance(vmon);

		if (in->warm_held > allowance)
			release_warm(vmon, allowance);
	}
	return in->fds_held + need <= in->fd_budget;
}

/* may another (hot) fd be kept open after this pass? */
bool procfs_hold(vmon_t *vmon)
{
	if (!room_for(vmon, 1))
		return false;
	vmon->internal->fds_held++;
	return true;
}

/*
 * May a hot fd of node be kept open?  A node holds all its hot fds or none:
 * one that holds some must still open its directory (and prove the pid is
 * still its own) for the others, which costs more than opening them all.
 * So the stat fd, its first, is held only if there is room for all of them,
 * and that room is counted as held at once (node->hot_reserved) for the
 * others, which may come passes later (schedstat is not read in the pass
 * that vmon_proc_monitor() probes the node).
 */
bool procfs_hold_hot(vmon_t *vmon, proc_node_t *node, bool first)
{
	const vmon_proc_stat_t *stat = node->pub.stores[VMON_STORE_PROC_STAT];

	if (first) {
		int need = hot_fds(vmon, node->pub.wants);

		/* (a node the task iterator does not show, probed here, may have no hot fds to hold) */
		if (need <= 0 || !room_for(vmon, need))
			return false;
		vmon->internal->fds_held += need;
		node->fds.hot_reserved = need - 1;
		return true;
	}
	if (!stat || stat->stat_fd < 0)
		return false;
	if (node->fds.hot_reserved > 0) {
		node->fds.hot_reserved--;
		return true;
	}
	return procfs_hold(vmon);
}

/*
 * May a warm fd be kept open after this pass?
 *
 * Of the warm fds, directories come first: a node that ran and holds its
 * directory saves three syscalls on it (open by name, the read proving it,
 * close) where another warm fd saves two.  So the others are held only
 * while the share leaves room for every node's directory.
 */
static bool hold_warm(vmon_t *vmon, bool dir)
{
	struct _vmon_internal *in = vmon->internal;
	int allowance;
	long dirs_to_come = (long)(in->procs.nr + in->threads.nr) - in->dirs_held;

	budget_regrow(vmon);
	allowance = warm_allowance(vmon);

	if (in->fds_held >= in->fd_budget || in->warm_held >= allowance)
		return false;
	if (!dir && in->warm_held + dirs_to_come >= allowance)
		return false;
	in->fds_held++;
	in->warm_held++;
	in->dirs_held += dir;
	return true;
}

/* close a node's held directory (see node_release_fds()) */
void procfs_close_dir(vmon_t *vmon, proc_node_t *node)
{
	if (!node->fds.dir_held)
		return;
	procfs_close_warm(vmon, &node->fds.dir_fd);
	node->fds.dir_held = false;
	vmon->internal->dirs_held--;
}

void procfs_close_held(vmon_t *vmon, int *fd)
{
	if (*fd < 0)
		return;
	close(*fd);
	*fd = -1;
	vmon->internal->fds_held--;
}

void procfs_close_warm(vmon_t *vmon, int *fd)
{
	if (*fd < 0)
		return;
	procfs_close_held(vmon, fd);
	vmon->internal->warm_held--;
}

/* the files of a node read only after it ran or its memory moved (see the top of this file) */
static bool is_warm(const char *name)
{
	return strcmp(name, "io") == 0 || strcmp(name, "wchan") == 0 || strcmp(name, "status") == 0 ||
	       strcmp(name, "statm") == 0;
}

/*
 * Out of fds: halve the budget and give back held fds until under it.  The
 * walk is linear, but it only happens when the process hit its fd limit.
 * The budget grows back from the next pass (budget_regrow()).
 */
void procfs_shrink_budget(vmon_t *vmon)
{
	struct _vmon_internal *in = vmon->internal;
	pidmap_t *maps[] = { &in->threads, &in->procs };

	in->fd_budget = in->fds_held / 2;
	in->fd_budget_pass = vmon->generation;
	for (size_t m = 0; m < sizeof(maps) / sizeof(maps[0]); m++) {
		size_t pos;

		pidmap_for_each(maps[m], pos) {
			proc_node_t *node = pidmap_node_at(maps[m], pos);

			if (in->fds_held <= in->fd_budget)
				break;
			/*
			 * The node being sampled keeps its directories: the
			 * open that ran out of fds is relative to one, and its
			 * task listing may be under way.
			 */
			if (node == in->busy)
				in->release_fds(vmon, node, NODE_RELEASE_FILES);
			else
				in->release_fds(vmon, node, NODE_RELEASE_ALL);
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
int procfs_gone_errno(int err)
{
	return (err == ENOENT || err == ESRCH) ? ESRCH : err;
}

/*
 * Read a whole file into buf from offset 0.  A read shorter than asked for
 * is the end when it gave fewer than short_end bytes (end_of_reads() says
 * for which files); with short_end 0 only a zero read is.
 */
static int read_file(int fd, buf_t *buf, size_t short_end)
{
	size_t len = 0;
	ssize_t r;

	for (;;) {
		if (buf->cap < len + 1025 && buf_reserve(buf, buf->cap ? buf->cap * 2 : 4096) < 0)
			return -1;
		r = pread(fd, buf->data + len, buf->cap - 1 - len, (off_t)len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		len += (size_t)r;
		if (r == 0 || (len < buf->cap - 1 && (size_t)r < short_end))
			break;
	}
	buf->len = len;
	buf->data[len] = '\0';
	return 0;
}

/* read_file(), counted in vmon_get_stats(3)'s reads: a read of the sampling's */
static int read_whole(vmon_t *vmon, int fd, buf_t *buf, size_t short_end)
{
	vmon->internal->stats.reads++;
	return read_file(fd, buf, short_end);
}

/* before Linux 4.2, a read of cmdline gave at most this much however large the buffer (proc_info_read()) */
#define PROC_OLD_READ_MAX	3072

/*
 * How a file's reads end (read_file()'s short_end):
 *
 * /proc's one-record files (stat, statm, io, status...) are produced whole
 * by a single read: any short read is the end.
 *
 * cmdline and environ: the kernel copies the process's memory into the
 * read page by page until the buffer is full (get_mm_cmdline(),
 * environ_read()), so a short read is the end, or memory it could not
 * reach, which a read from there would not reach either.  Reading on to a
 * zero read visited the process's memory once more, for every new process
 * and every process that ran (CMDLINE_REFRESH_SECS).  A short read of
 * PROC_OLD_READ_MAX bytes or more may be an old kernel's cut: read on.
 *
 * The files made by a seq_file iterator (a record per child in children, a
 * socket per line in net/tcp...) come a page or so per read however large
 * the buffer, so a short read is not their end: a process with 5,000
 * children lists ~800 in the first.  Nor is it for a regular file (a
 * fixture's /proc): both are read to a zero read.
 */
static size_t end_of_reads(vmon_t *vmon, const char *name)
{
	size_t len = strlen(name);

	if (!vmon->internal->proc_is_live || (len >= 8 && strcmp(name + len - 8, "children") == 0) ||
	    strncmp(name, "net/", 4) == 0)
		return 0;
	if (strcmp(name, "cmdline") == 0 || strcmp(name, "environ") == 0)
		return PROC_OLD_READ_MAX;
	return SIZE_MAX;
}

/* read the node's file `name`, open as fd, whole into buf (counted when the sampling reads it): 0, or -1 with errno */
int procfs_read_fd(vmon_t *vmon, int fd, const char *name, buf_t *buf, bool counted)
{
	size_t short_end = end_of_reads(vmon, name);

	return counted ? read_whole(vmon, fd, buf, short_end) : read_file(fd, buf, short_end);
}

/* the decimal digits of v (> 0) at p; returns the end (no NUL) */
static char *put_pid(char *p, int v)
{
	char digits[12];
	int n = 0;

	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v > 0);
	while (n > 0)
		*p++ = digits[--n];
	return p;
}

/*
 * "PID" or "TGID/task/TID" (at most 28 bytes and a NUL), built by hand as
 * snprintf() showed in profiles; returns where the NUL is, for a file name
 * to follow.
 */
char *procfs_node_path(const proc_node_t *node, char path[static 32])
{
	char *p = path;

	if (node->pub.is_thread) {
		p = put_pid(p, node->tgid);
		memcpy(p, "/task/", 6);
		p += 6;
	}
	p = put_pid(p, node->pub.pid);
	*p = '\0';
	return p;
}

/* the start time (field 22) of a stat line, or 0 if the line is malformed (also pidfd.c) */
unsigned long long procfs_stat_start(const char *line, size_t len)
{
	stat_ident_t id;

	return parse_stat_ident(line, len, &id) < 0 ? 0 : id.start;
}

/* an fd the node holds, or has open for this pass, under its /proc directory (the cheapest to read), or -1 */
static int held_fd_of(const proc_node_t *node)
{
	const vmon_proc_stat_t *stat = node->pub.stores[VMON_STORE_PROC_STAT];

	if (node->fds.pass_schedstat_fd >= 0)
		return node->fds.pass_schedstat_fd;
	if (node->fds.schedstat_fd >= 0)
		return node->fds.schedstat_fd;
	return stat ? stat->stat_fd : -1;
}

/*
 * The node's directory fd, opened by name if it is not held.  With verify,
 * a node whose identity is known is checked: the name may by now be another
 * process's, if ours died and its pid was reused.
 *
 * A node that holds a file of its own proves it with one read: an fd opened
 * under /proc/PID reads ESRCH once that process is reaped, and a pid is not
 * reused before its process is reaped, so a read through it that succeeds
 * after the open says the name was still ours when we opened it.  Otherwise
 * the directory's stat line must show the start time we know.
 */
int procfs_node_dir(vmon_t *vmon, proc_node_t *node, bool verify)
{
	struct _vmon_internal *in = vmon->internal;
	char path[64];
	int fd;

	if (node->fds.dir_fd >= 0)
		return node->fds.dir_fd;

	procfs_node_path(node, path);
	fd = procfs_openat(vmon, in->proc_fd, path, O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		errno = procfs_gone_errno(errno);
		return -1;
	}
	if (verify && node->identified && in->proc_is_live && held_fd_of(node) >= 0) {
		char tmp[128];

		in->stats.reads++;
		if (pread(held_fd_of(node), tmp, sizeof(tmp), 0) < 0) {
			int err = procfs_gone_errno(errno);

			close(fd);
			errno = err;
			return -1;
		}
	} else if (verify && node->identified) {
		buf_t *buf = &in->buf;
		int sfd = procfs_openat(vmon, fd, "stat", O_RDONLY);

		if (sfd < 0 || read_whole(vmon, sfd, buf, end_of_reads(vmon, "stat")) < 0 ||
		    !node_start_matches(node, procfs_stat_start(buf->data, buf->len))) {
			int err = sfd < 0 ? procfs_gone_errno(errno) : ESRCH;

			if (sfd >= 0)
				close(sfd);
			close(fd);
			errno = err;
			return -1;
		}
		close(sfd);
	}
	node->fds.dir_fd = fd;
	node->fds.dir_held = hold_warm(vmon, true);
	return fd;
}

/* the end of the node's pass: what was opened only for it is closed */
void procfs_node_done(vmon_t *vmon, proc_node_t *node)
{
	if (node->fds.dir_fd >= 0 && !node->fds.dir_held) {
		close(node->fds.dir_fd);
		node->fds.dir_fd = -1;
	}
	if (node->fds.pass_schedstat_fd >= 0) {
		close(node->fds.pass_schedstat_fd);
		node->fds.pass_schedstat_fd = -1;
	}
}

/*
 * Read the node's file `name` whole into buf.  held_fd, if not NULL, is where
 * the node keeps this file open between passes: used if open, and filled if
 * the budget allows.  Returns 0, or -1 with errno: ESRCH when the process is
 * gone, anything else (EACCES...) when it is there but the file cannot be read.
 */
int procfs_read(vmon_t *vmon, proc_node_t *node, const char *name, int *held_fd, buf_t *buf)
{
	size_t short_end = end_of_reads(vmon, name);
	int dir, fd;

	if (held_fd && *held_fd >= 0) {
		if (read_whole(vmon, *held_fd, buf, short_end) == 0)
			return 0;
		errno = procfs_gone_errno(errno);
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
			errno = procfs_gone_errno(errno);
		return -1;
	}
	if (read_whole(vmon, fd, buf, short_end) < 0) {
		int err = procfs_gone_errno(errno);

		close(fd);
		errno = err;
		return -1;
	}
	if (held_fd && (is_warm(name) ? hold_warm(vmon, false) : procfs_hold_hot(vmon, node, false)))
		*held_fd = fd;
	else
		close(fd);
	return 0;
}

/* read a file of the proc root itself (stat, meminfo) */
int procfs_read_root(vmon_t *vmon, const char *name, int *held_fd, buf_t *buf)
{
	size_t short_end = end_of_reads(vmon, name);
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
			r = read_whole(vmon, fd, buf, short_end);
			close(fd);
			return r;
		}
	}
	return read_whole(vmon, fd, buf, short_end);
}

/* the target of the symlink `name` under the directory dir_fd, into buf */
ssize_t procfs_readlinkat(vmon_t *vmon, int dir_fd, const char *name, buf_t *buf)
{
	ssize_t r;

	if (buf_reserve(buf, 256) < 0)
		return -1;
	vmon->internal->stats.reads++;
	for (;;) {
		r = readlinkat(dir_fd, name, buf->data, buf->cap - 1);
		if (r < 0)
			return -1;
		if ((size_t)r < buf->cap - 1)
			break;
		if (buf_reserve(buf, buf->cap * 2) < 0)
			return -1;
	}
	buf->len = (size_t)r;
	buf->data[r] = '\0';
	return r;
}

/* the target of the node's symlink `name`; ENOENT for a kernel thread's exe */
ssize_t procfs_readlink(vmon_t *vmon, proc_node_t *node, const char *name, buf_t *buf)
{
	int dir = procfs_node_dir(vmon, node, true);

	if (dir < 0)
		return -1;
	return procfs_readlinkat(vmon, dir, name, buf);
}

/* is there a /proc/PID (a thread: /proc/TGID/task/TID) now, whichever task it is? */
bool procfs_node_exists(vmon_t *vmon, const proc_node_t *node)
{
	char path[32];

	procfs_node_path(node, path);
	return faccessat(vmon->internal->proc_fd, path, F_OK, 0) == 0;
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

	if (node->pass.ran == vmon->generation)
		return node->ran.answer;
	node->pass.ran = vmon->generation;
	node->ran.answer = -1;
	if (!in->have_schedstat)
		return -1;
	if (node->fds.pass_schedstat_fd >= 0) {
		/* opened by procfs_probe() for this pass; kept if the budget allows */
		if (read_whole(vmon, node->fds.pass_schedstat_fd, &in->buf, false) < 0)
			return -1;
		if (procfs_hold_hot(vmon, node, false)) {
			node->fds.schedstat_fd = node->fds.pass_schedstat_fd;
			node->fds.pass_schedstat_fd = -1;
		}
	} else if (procfs_read(vmon, node, "schedstat", &node->fds.schedstat_fd, &in->buf) < 0) {
		return -1;
	}
	p = in->buf.data;
	end = p + in->buf.len;
	if (!parse_ull(&p, end, &run_ns) || (p++, !parse_ull(&p, end, &wait_ns)) ||
	    (p++, !parse_ull(&p, end, &count)))
		return -1;
	/*
	 * All zeros is a task that has not run yet (a fork waiting for a CPU on
	 * a busy machine), not a kernel without sched_info: procfs_open_root()
	 * asked that of our own task, which is running.
	 */
	node->ran.answer = !node->ran.known || (unsigned)count != node->ran.run_count || run_ns != node->ran.run_ns;
	node->ran.known = true;
	node->ran.run_count = (unsigned)count;
	node->ran.run_ns = run_ns;
	return node->ran.answer;
}
