/*
 * pidfd.c: vmon_pidfd_open(), a pidfd for the process a sample showed, by
 * pid and start time, or none.  A program that acts on what it saw (a
 * viewer's kill or renice, a minute after the sample when it is paused)
 * must not hit the process that took the pid since: kill(pid) would.
 *
 * The identity check needs no lock against the kernel.  The /proc/PID
 * directory is opened first: reads through it fail once the process it
 * named is reaped, whatever has the pid by then.  Then the pidfd, of
 * whatever has the pid now; then the directory's stat line.  If that read
 * succeeds, the first process was not reaped yet when the pidfd was made,
 * so the pid was still its own and the pidfd is of it; and its start time
 * says whether it is the one the caller means.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/internal.h"

/* the start time of the process the directory names: 0, or -1 with ESRCH once it is reaped */
static int dir_start(int dir, unsigned long long *start)
{
	char line[2048];
	ssize_t len;
	int fd = openat(dir, "stat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	len = read(fd, line, sizeof(line));
	close(fd);
	if (len < 0)
		return -1;
	*start = procfs_stat_start(line, (size_t)len);
	return 0;
}

int vmon_pidfd_open(int pid, unsigned long long start, unsigned int flags)
{
	unsigned long long now_start = 0;
	char path[32];
	int dir, fd, err;

	if (pid <= 0)
		return (errno = EINVAL, -1);
	/* the real /proc, whatever root a vmon_t reads: a pidfd is of this system's processes */
	snprintf(path, sizeof(path), "/proc/%d", pid);
	dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return (errno = errno == ENOENT ? ESRCH : errno, -1);
	fd = (int)syscall(SYS_pidfd_open, pid, flags);
	if (fd < 0)
		goto fail;
	if (dir_start(dir, &now_start) < 0)
		goto fail;
	if (now_start != start) {
		errno = ESRCH;
		goto fail;
	}
	close(dir);
	return fd;
fail:
	err = errno == ENOENT ? ESRCH : errno;
	if (fd >= 0)
		close(fd);
	close(dir);
	errno = err;
	return -1;
}
