/*
 * proc_files.c: the PROC_FILES want.  The open-files model of vmon.h
 * (vmon_proc_files_t, vmon_proc_fd_t, vmon_fobject_t) is declared for source
 * compatibility; sampling it comes with the open-files work, and until then
 * asking for it is refused by vmon_init() with EOPNOTSUPP rather than
 * answered with an empty table.
 */
#include "config.h"

#include <errno.h>

#include "internal.h"

int proc_files_sample(vmon_t *vmon, vmon_proc_t *proc, void **store)
{
	errno = EOPNOTSUPP;
	return -1;
}
