/*
 * files_testlib.h: what the open-files tests share (files_testlib.c).
 */
#ifndef VMON_FILES_TESTLIB_H
#define VMON_FILES_TESTLIB_H

#include <stdbool.h>

#include "testlib.h"

/* the process's open-files table */
vmon_proc_files_t *files_of(vmon_proc_t *proc);
/* its fd numbered num: the open one, or with stale the one closed in the last sample */
vmon_proc_fd_t *fd_find(vmon_proc_t *proc, int num, bool stale);
/* the open fd numbered num, or the test fails */
vmon_proc_fd_t *must_fd(vmon_proc_t *proc, int num);

/*
 * Every object on vmon->fobjects holds what its counters say: refcnt is its
 * fds plus the socket table's reference (when it has a row), each fd on
 * ref_fds points back at it, and fobjects_nr counts them.
 */
void assert_fobjects_consistent(vmon_t *vmon);
/* vmon_sample(), which must succeed, then assert_fobjects_consistent() */
void sample_checked(vmon_t *vmon);

#endif
