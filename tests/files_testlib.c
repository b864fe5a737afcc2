/* files_testlib.c: see files_testlib.h. */
#include "config.h"

#include "files_testlib.h"

vmon_proc_files_t *files_of(vmon_proc_t *proc)
{
	return proc->stores[VMON_STORE_PROC_FILES];
}

vmon_proc_fd_t *fd_find(vmon_proc_t *proc, int num, bool stale)
{
	vmon_proc_fd_t *fd;

	list_for_each_entry(fd, &files_of(proc)->fds, fds) {
		if (fd->fdnum == num && (bool)fd->is_stale == stale)
			return fd;
	}
	return NULL;
}

vmon_proc_fd_t *must_fd(vmon_proc_t *proc, int num)
{
	vmon_proc_fd_t *fd = fd_find(proc, num, false);

	if (!fd)
		fail_msg("pid %d has no fd %d", proc->pid, num);
	return fd;
}
