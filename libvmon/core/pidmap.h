/*
 * pidmap.h: an index from pid (or tid) to node, so that discovery costs one
 * probe per pid whatever the number of processes.  Open addressing with
 * linear probing; it doubles when half full and deletes by shifting back,
 * so it never fills with tombstones.
 */
#ifndef VMON_PIDMAP_H
#define VMON_PIDMAP_H

#include <stddef.h>

typedef struct pidmap_slot {
	int	pid;		/* 0: empty */
	void	*node;
} pidmap_slot_t;

typedef struct pidmap {
	pidmap_slot_t	*slots;
	size_t		mask;		/* capacity - 1; capacity is a power of two */
	size_t		nr;		/* entries */
} pidmap_t;

int pidmap_init(pidmap_t *map);
void pidmap_fini(pidmap_t *map);
void *pidmap_get(const pidmap_t *map, int pid);
/* add or replace; -1 with errno ENOMEM when it cannot grow */
int pidmap_put(pidmap_t *map, int pid, void *node);
/* remove pid if it maps to node (a reused pid may map to a newer node) */
void pidmap_del(pidmap_t *map, int pid, const void *node);

/* iteration: for (size_t i = 0; i <= map->mask; i++) if (map->slots[i].pid) ... */

#endif
