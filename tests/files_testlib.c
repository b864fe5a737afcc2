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

void assert_fobjects_consistent(vmon_t *vmon)
{
	vmon_fobject_t *obj;
	int objects = 0;

	list_for_each_entry(obj, &vmon->fobjects, bucket) {
		vmon_proc_fd_t *fd;
		int fds = 0;

		list_for_each_entry(fd, &obj->ref_fds, ref_fds) {
			if (fd->object != obj)
				fail_msg("fd %d of pid %d is on the ref_fds of an object it does not point at",
					 fd->fdnum, fd->process->pid);
			fds++;
		}
		if (fds != obj->ref_fds_nr || obj->refcnt != fds + (obj->socket ? 1 : 0))
			fail_msg("object inode %llu: %d fds listed, ref_fds_nr %d, refcnt %d",
				 (unsigned long long)obj->inum, fds, obj->ref_fds_nr, obj->refcnt);
		objects++;
	}
	assert_int_equal(objects, vmon->fobjects_nr);
}

void sample_checked(vmon_t *vmon)
{
	assert_true(vmon_sample(vmon));
	assert_fobjects_consistent(vmon);
}
