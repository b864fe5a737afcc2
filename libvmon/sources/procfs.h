/*
 * procfs.h: reading /proc (procfs.c): files under the fd budget, the
 * node's directory, its stat line and schedstat (procfs.c); /proc as a
 * source (procfs_source.c).
 */
#ifndef VMON_PROCFS_H
#define VMON_PROCFS_H

#include "core/instance.h"
#include "stores/parse.h"

int procfs_open_root(vmon_t *vmon, const char *root);
int procfs_node_dir(vmon_t *vmon, proc_node_t *node, bool verify);
void procfs_node_done(vmon_t *vmon, proc_node_t *node);
int procfs_read(vmon_t *vmon, proc_node_t *node, const char *name, int *held_fd, buf_t *buf);
int procfs_read_root(vmon_t *vmon, const char *name, int *held_fd, buf_t *buf);
ssize_t procfs_readlink(vmon_t *vmon, proc_node_t *node, const char *name, buf_t *buf);
ssize_t procfs_readlinkat(vmon_t *vmon, int dir_fd, const char *name, buf_t *buf);
int procfs_openat(vmon_t *vmon, int dir_fd, const char *name, int flags);
unsigned long long procfs_stat_start(const char *line, size_t len);
void procfs_close_held(vmon_t *vmon, int *fd);
void procfs_close_warm(vmon_t *vmon, int *fd);
void procfs_close_dir(vmon_t *vmon, proc_node_t *node);
bool procfs_hold(vmon_t *vmon);
/* the source's half (procfs_source.c) */
int procfs_probe(vmon_t *vmon, proc_node_t *node);
/*
 * a stat line read for its identifying fields (procfs_probe()'s, the
 * feed's): twice where it looks reaped; `counted` in vmon_get_stats(3)'s
 * reads, as the sampling's reads are (the feed's are not)
 */
int procfs_read_ident(vmon_t *vmon, int fd, buf_t *line, stat_ident_t *id, bool counted);
/* is the node's task still the one we knew (its stat line now)?  false on a fixture */
bool procfs_node_alive(vmon_t *vmon, proc_node_t *node);
int procfs_list(vmon_t *vmon, bool wanted);
/* procfs_list(), wanted, that also gives the pids of the first `max` nodes it made (*made: how many it made) */
int procfs_list_made(vmon_t *vmon, int *pids, int max, int *made);
/* what it shares with the reads: a node's directory path, errno of a vanished process, a whole read, a hot fd's room */
char *procfs_node_path(const proc_node_t *node, char path[static 32]);
int procfs_gone_errno(int err);
int procfs_read_fd(vmon_t *vmon, int fd, const char *name, buf_t *buf, bool counted);
bool procfs_hold_hot(vmon_t *vmon, proc_node_t *node, bool first);
bool procfs_node_exists(vmon_t *vmon, const proc_node_t *node);
int procfs_ran(vmon_t *vmon, proc_node_t *node);
void procfs_shrink_budget(vmon_t *vmon);

#endif
