/*
 * feedtest.h: what the event feed tests share: opening a vmon on one given
 * backend, children that exec tests/feed_child, and finding a child's
 * node under the test process.
 */
#ifndef VMON_FEEDTEST_H
#define VMON_FEEDTEST_H

#include "testlib.h"

#ifndef FEED_CHILD
#error "build with -DFEED_CHILD=\"$(abs_top_builddir)/tests/feed_child\""
#endif

/* the backend's id, by its VMON_FEED name */
vmon_feed_backend_t feedtest_backend_id(const char *name);

/*
 * vmon_init_attr() with exactly this backend ("netlink", "ebpf"...).  When
 * the feed ends up on another backend, the vmon is destroyed, the reason is
 * copied into why and false returned: the caller skips.
 */
bool feedtest_open(vmon_t *vmon, const char *backend, vmon_flags_t flags, vmon_proc_wants_t wants,
		   size_t buffer_bytes, char *why, size_t why_size);

/* fork and exec feed_child MODE CODE TAG; stdin from stdin_fd (-1: /dev/null), stdout to stdout_fd (-1: ours) */
pid_t feedtest_spawn(const char *mode, int code, const char *tag, int stdin_fd, int stdout_fd);

/* read /proc/PID/NAME into buf (NUL-terminated); its length, -1 if it is gone */
ssize_t feedtest_read_proc(pid_t pid, const char *name, char *buf, size_t size);

/* the start time (clock ticks) of a live or zombie process, 0 if it is gone */
unsigned long long feedtest_start_of(pid_t pid);

/* reap one exited child, after reading its start time while it is a zombie; -1 if none */
pid_t feedtest_reap_any(unsigned long long *start, int *status);

/* the node of pid under the test process's own node (live or stale), or NULL */
vmon_proc_t *feedtest_child_node(vmon_t *vmon, pid_t pid);

/* the node's stat store */
vmon_proc_stat_t *feedtest_stat(vmon_proc_t *proc);

/* how many more children a loop may spawn: fewer under valgrind */
int feedtest_scale(int n);

/* a cmocka teardown: end and reap whatever a failed test left in our process group */
int feedtest_teardown(void **state);

#endif
