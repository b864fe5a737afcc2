/*
 * stores.h: the samplers, one per want as defs/ *_wants.def names them, and
 * the teardown of the stores that own memory or fds.
 */
#ifndef VMON_STORES_H
#define VMON_STORES_H

#include "core/instance.h"

#define vmon_want(_sym, _name, _func) int _func(vmon_t *vmon, void **store);
#include "defs/sys_wants.def"
#define vmon_want(_sym, _name, _func) int _func(vmon_t *vmon, vmon_proc_t *proc, void **store);
#include "defs/proc_wants.def"

/* the value a sampler returns: did its store change? -1: it failed, errno set */
#define SAMPLE_UNCHANGED	0
#define SAMPLE_CHANGED		1

/* store teardown, for the stores that own memory or fds */
void sys_stat_free(vmon_t *vmon, vmon_sys_stat_t *store);
void sys_vm_free(vmon_t *vmon, vmon_sys_vm_t *store);
void sys_loadavg_free(vmon_t *vmon, vmon_sys_loadavg_t *store);
void proc_stat_free(vmon_t *vmon, vmon_proc_stat_t *store);
int proc_stat_set_cmdline(vmon_proc_stat_t *s, const char *text, size_t len, bool first);
void proc_vm_free(vmon_t *vmon, vmon_proc_vm_t *store);
void proc_io_free(vmon_t *vmon, vmon_proc_io_t *store);
void proc_follow_children_free(vmon_t *vmon, vmon_proc_follow_children_t *store);
void proc_follow_threads_free(vmon_t *vmon, vmon_proc_follow_threads_t *store);
void sys_sockets_free(vmon_t *vmon, vmon_sys_sockets_t *store);
/* PROC_FILES: close the table's held handles; drop the node's reference to its table */
void proc_files_release(vmon_t *vmon, vmon_proc_t *proc);
void proc_files_put(vmon_t *vmon, vmon_proc_t *proc);
void files_fini(vmon_t *vmon);

#endif
