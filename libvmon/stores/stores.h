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
/* the original libvmon's spelling of a member kept equal to ours (vmon.h): after each write of the store */
void sys_vm_names_of_old(vmon_sys_vm_t *store);
void sys_loadavg_free(vmon_t *vmon, vmon_sys_loadavg_t *store);
void proc_stat_free(vmon_t *vmon, vmon_proc_stat_t *store);
/* PROC_STAT's writers: every write into the store from outside its sampler is one of these (proc_stat.c) */
int proc_stat_set_number(vmon_proc_stat_t *s, int sym, unsigned long long v, bool first);
int proc_stat_clear(vmon_proc_stat_t *s, int sym);	/* absent: zero, present bit clear */
int proc_stat_set_text(vmon_proc_stat_t *s, int sym, const char *text, size_t len, bool first);
int proc_stat_set_cmdline(vmon_proc_stat_t *s, const char *text, size_t len, bool first);
/* a source's record in place of /proc for the owner (fstat of the directory) and wchan, in its fill */
#define STAT_GIVEN_UID		0x1
#define STAT_GIVEN_WCHAN	0x2
int proc_stat_give_uid(vmon_t *vmon, vmon_proc_stat_t *s, unsigned uid, bool first);
int proc_stat_give_wchan(vmon_t *vmon, vmon_proc_stat_t *s, const char *name, size_t len, bool first);
bool proc_stat_event(vmon_proc_stat_t *s, const vmon_event_t *ev, bool first);
bool proc_stat_event_exec(vmon_proc_stat_t *s, const vmon_event_t *ev);
bool proc_stat_event_exit(vmon_proc_stat_t *s, const proc_node_t *node, const vmon_event_t *ev);
void proc_stat_keep_pid(vmon_proc_stat_t *s);
bool proc_stat_ended(vmon_proc_stat_t *s, bool has_exit_status);
/* PROC_VM's rule, PROC_VM_STATUS's too: may the memory have moved since the last sample (proc_vm.c)? */
bool proc_vm_may_have_moved(vmon_t *vmon, proc_node_t *node);
bool proc_vm_status_event_exit(vmon_proc_vm_status_t *s, const vmon_event_t *ev);
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
