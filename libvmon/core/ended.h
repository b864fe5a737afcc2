/*
 * ended.h: the processes that ended lately, by identity (ended.c).
 */
#ifndef VMON_ENDED_H
#define VMON_ENDED_H

#include "core/instance.h"

typedef struct ended {
	int			pid;
	unsigned long long	start;		/* clock ticks */
	bool			start_approx;
	unsigned long long	exit_ns;	/* the time of its exit event, 0: none seen */
	int			pass;		/* vmon->generation it ended in */
	unsigned long long	seq;
	unsigned long long	prev;		/* seq + 1 of the entry before with its pid, 0: none */
	proc_node_t		*node;		/* its node while that is in the tree, else NULL */
} ended_t;

int ended_init(vmon_t *vmon);
void ended_fini(vmon_t *vmon);
void ended_add(vmon_t *vmon, proc_node_t *node);
void ended_drop_node(vmon_t *vmon, proc_node_t *node);
void ended_exit(vmon_t *vmon, proc_node_t *node);
void ended_expire(vmon_t *vmon);
/* the ended process an event is about (fork: not one that began after that one's exit), or NULL */
ended_t *ended_find(vmon_t *vmon, const vmon_event_t *ev, unsigned long long tick_ns);

#endif
