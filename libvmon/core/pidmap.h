/*
 * pidmap.h: an index from pid (or tid) to node, so that discovery costs one
 * probe per pid whatever the number of processes: the hash table of
 * util/hash.h, keyed by pid, one node a pid.
 */
#ifndef VMON_PIDMAP_H
#define VMON_PIDMAP_H

#include <errno.h>

#include "util/hash.h"

typedef vhash_t pidmap_t;

static inline int pidmap_init(pidmap_t *map)
{
	*map = (pidmap_t){ 0 };
	return vhash_reserve(map, 128);
}

static inline void pidmap_fini(pidmap_t *map)
{
	vhash_fini(map);
}

static inline void *pidmap_get(const pidmap_t *map, int pid)
{
	return pid > 0 ? vhash_get(map, (uint64_t)pid) : NULL;
}

/* add or replace; -1 with errno ENOMEM when it cannot grow */
static inline int pidmap_put(pidmap_t *map, int pid, void *node)
{
	if (pid <= 0) {
		errno = EINVAL;
		return -1;
	}
	return vhash_put(map, (uint64_t)pid, node);
}

/* remove pid if it maps to node (a reused pid may map to a newer node) */
static inline void pidmap_del(pidmap_t *map, int pid, const void *node)
{
	size_t pos = pid > 0 ? vhash_find(map, (uint64_t)pid) : VHASH_END;

	if (pos != VHASH_END && vhash_val_at(map, pos) == node)
		vhash_remove_at(map, pos);
}

/* every node of the index: size_t pos; pidmap_for_each(map, pos) node = pidmap_node_at(map, pos); */
#define pidmap_for_each(map, pos)	vhash_for_each(map, pos)

static inline void *pidmap_node_at(const pidmap_t *map, size_t pos)
{
	return vhash_val_at(map, pos);
}

#endif
