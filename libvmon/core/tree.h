/*
 * tree.h: nodes made, placed, ended and freed, and the walks of the tree
 * (tree.c).
 */
#ifndef VMON_TREE_H
#define VMON_TREE_H

#include "core/instance.h"

proc_node_t *node_new(vmon_t *vmon, int pid, int tgid, bool is_thread, vmon_proc_wants_t wants);
void node_confirm(vmon_t *vmon, proc_node_t *node);
void node_attach(vmon_t *vmon, proc_node_t *node, proc_node_t *parent);
void node_refcnt_update(vmon_t *vmon, proc_node_t *node);
void node_end(vmon_t *vmon, proc_node_t *node);
void node_mark_stale(vmon_t *vmon, proc_node_t *node);
void node_stale_now(vmon_t *vmon, proc_node_t *node);
void node_settle(vmon_t *vmon);
void node_forget(vmon_t *vmon, proc_node_t *node);
void node_free_stale(vmon_t *vmon);
void node_stale_ending(vmon_t *vmon);
void node_free_all(vmon_t *vmon);
void node_remove_subtree(vmon_t *vmon, proc_node_t *node);
void node_place_by_ppid(vmon_t *vmon, proc_node_t *node);
void node_release_fds(vmon_t *vmon, proc_node_t *node);
void node_release_files(vmon_t *vmon, proc_node_t *node);
void node_release_warm_files(vmon_t *vmon, proc_node_t *node);
/* one of the three above by NODE_RELEASE_* (instance.h's release_fds) */
void node_release(vmon_t *vmon, proc_node_t *node, int what);
void node_drop_stores(vmon_t *vmon, proc_node_t *node, vmon_proc_wants_t dropped);
void *node_store(vmon_t *vmon, proc_node_t *node, vmon_proc_store_t store);
void node_store_written(proc_node_t *node, vmon_proc_store_t store, bool changed);
void node_store_start(vmon_t *vmon, proc_node_t *node, vmon_proc_store_t store, char *changed, size_t size);
/* depth-first walk of the tree: threads first, then children */
vmon_proc_t *tree_first(vmon_t *vmon);
vmon_proc_t *tree_next(vmon_t *vmon, vmon_proc_t *proc, bool descend);
vmon_proc_t *tree_first_postorder(vmon_t *vmon);
vmon_proc_t *tree_next_postorder(vmon_t *vmon, vmon_proc_t *proc);

#endif
