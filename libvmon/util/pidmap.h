/*
 * pidmap.h: an index from pid (or tid) to a node (or another pointer, or a
 * small integer cast to one), one entry a pid, so that discovery costs one
 * probe per pid whatever the number of processes.
 *
 * Not util/hash.h's table, whose keys are 64 bits and whose slots take 17
 * bytes: a pid is 32 bits (at most PID_MAX_LIMIT, 2^22), so the keys are
 * an array of their own, 4 bytes a slot, and the values another: 12 bytes
 * a slot, and a probe that scans keys alone (16 to a cache line) before
 * the one value it returns.  Every live process has an entry in the
 * instance's index and every task one in the iterator's, so this is
 * memory a process (issue 14: the library's 1 KiB a process).
 *
 * The same scheme as hash.h otherwise: open addressing with linear probing
 * over a power-of-two array, the home slot by Fibonacci hashing; removal
 * leaves a tombstone, so an entry can be removed while the index is walked;
 * rebuilt at 3/4 used and removed, at twice the size past 11/16 live;
 * pidmap_fit() makes it the smallest size its entries fill at most 5/8 of.
 * Positions (size_t) name slots until the next insertion.
 */
#ifndef VMON_PIDMAP_H
#define VMON_PIDMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct pidmap {
	void		**vals;
	uint32_t	*keys;		/* PIDMAP_EMPTY, PIDMAP_REMOVED, or a pid (> 0) */
	size_t		mask;		/* slots - 1; 0 before the first insertion */
	size_t		nr;		/* entries */
	size_t		tombs;		/* removed slots not reused yet */
	unsigned	shift;		/* 64 - log2(slots) */
} pidmap_t;

#define PIDMAP_EMPTY	0u
#define PIDMAP_REMOVED	UINT32_MAX
#define PIDMAP_END	((size_t)-1)

/* an empty index with room for 128; -1 ENOMEM */
int pidmap_init(pidmap_t *map);
void pidmap_fini(pidmap_t *map);
/*
 * room for n entries without a rebuild; -1 ENOMEM.  Before a known number
 * of insertions (a first pass): the tables a doubling leaves behind are
 * holes in the heap that later blocks only part fill.
 */
int pidmap_reserve(pidmap_t *map, size_t n);
/* made smaller when its entries fill at most 5/8 of a smaller size (after a storm); -1 ENOMEM */
int pidmap_fit(pidmap_t *map);

/* pid's value, NULL when none (or pid <= 0) */
void *pidmap_get(const pidmap_t *map, int pid);
/* add or replace; -1 with errno ENOMEM when it cannot grow, EINVAL for a pid <= 0 */
int pidmap_put(pidmap_t *map, int pid, void *val);
/* remove pid if it maps to val (a reused pid may map to a newer node) */
void pidmap_del(pidmap_t *map, int pid, const void *val);

/* walking: the first entry at or after pos, PIDMAP_END past the last */
size_t pidmap_next(const pidmap_t *map, size_t pos);
/* every entry: size_t pos; pidmap_for_each(map, pos) node = pidmap_node_at(map, pos); */
#define pidmap_for_each(map, pos) \
	for ((pos) = pidmap_next((map), 0); (pos) != PIDMAP_END; (pos) = pidmap_next((map), (pos) + 1))

static inline void *pidmap_node_at(const pidmap_t *map, size_t pos)
{
	return map->vals[pos];
}

static inline int pidmap_key_at(const pidmap_t *map, size_t pos)
{
	return (int)map->keys[pos];
}

#endif
