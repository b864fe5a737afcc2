/* pidmap.c: the pid index (pidmap.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/pidmap.h"

#define PIDMAP_MIN	64	/* slots */

static size_t home_of(const pidmap_t *map, uint32_t pid)
{
	return (size_t)(((uint64_t)pid * 0x9e3779b97f4a7c15ull) >> map->shift);
}

/* the index rebuilt with size slots (a power of two that holds every entry), without tombstones */
static int rebuild(pidmap_t *map, size_t size)
{
	pidmap_t t = { .mask = size - 1, .nr = map->nr, .shift = 64 };

	/* one block: the values, then the keys (all PIDMAP_EMPTY, 0) */
	t.vals = calloc(size, sizeof(*t.vals) + sizeof(*t.keys));
	if (!t.vals) {
		errno = ENOMEM;
		return -1;
	}
	t.keys = (uint32_t *)(t.vals + size);
	for (size_t i = size; i > 1; i >>= 1)
		t.shift--;
	for (size_t i = 0; map->vals && i <= map->mask; i++) {
		size_t j;

		if (map->keys[i] == PIDMAP_EMPTY || map->keys[i] == PIDMAP_REMOVED)
			continue;
		for (j = home_of(&t, map->keys[i]); t.keys[j] != PIDMAP_EMPTY; j = (j + 1) & t.mask)
			;
		t.keys[j] = map->keys[i];
		t.vals[j] = map->vals[i];
	}
	free(map->vals);
	*map = t;
	return 0;
}

/*
 * By the load at which an insertion doubles the index (11/16), not a fit's
 * (5/8): a count the index grown by insertions would hold at a size is
 * reserved that size (5,150 pids: 8,192 slots, where 5/8 made 16,384).
 */
int pidmap_reserve(pidmap_t *map, size_t n)
{
	size_t size = PIDMAP_MIN;

	while (vhash_too_full(n, size))
		size *= 2;
	if (map->vals && size <= map->mask + 1)
		return 0;
	return rebuild(map, size);
}

int pidmap_init(pidmap_t *map)
{
	*map = (pidmap_t){ 0 };
	/* 256 slots, as hash.c's vhash_reserve(128) made them */
	return rebuild(map, 256);
}

void pidmap_fini(pidmap_t *map)
{
	free(map->vals);
	*map = (pidmap_t){ 0 };
}

int pidmap_fit(pidmap_t *map)
{
	size_t fit = PIDMAP_MIN;

	if (!map->vals)
		return 0;
	while (vhash_too_full_to_fit(map->nr + 1, fit))
		fit *= 2;
	return fit < map->mask + 1 ? rebuild(map, fit) : 0;
}

/* pid's slot, or PIDMAP_END */
static size_t find(const pidmap_t *map, int pid)
{
	if (pid <= 0 || !map->vals)
		return PIDMAP_END;
	for (size_t i = home_of(map, (uint32_t)pid); map->keys[i] != PIDMAP_EMPTY; i = (i + 1) & map->mask) {
		if (map->keys[i] == (uint32_t)pid)
			return i;
	}
	return PIDMAP_END;
}

void *pidmap_get(const pidmap_t *map, int pid)
{
	size_t pos = find(map, pid);

	return pos == PIDMAP_END ? NULL : map->vals[pos];
}

int pidmap_put(pidmap_t *map, int pid, void *val)
{
	size_t pos = find(map, pid), i;

	if (pid <= 0) {
		errno = EINVAL;
		return -1;
	}
	if (pos != PIDMAP_END) {
		map->vals[pos] = val;
		return 0;
	}
	/* a quarter of the slots empty always, so that every probe ends, and soon */
	if (!map->vals || vhash_too_crowded(map->nr + map->tombs + 1, map->mask + 1)) {
		size_t size = map->vals ? map->mask + 1 : PIDMAP_MIN;

		if (vhash_too_full(map->nr + 1, size))
			size *= 2;
		if (rebuild(map, size) < 0)
			return -1;
	}
	for (i = home_of(map, (uint32_t)pid); map->keys[i] != PIDMAP_EMPTY && map->keys[i] != PIDMAP_REMOVED;
	     i = (i + 1) & map->mask)
		;
	if (map->keys[i] == PIDMAP_REMOVED)
		map->tombs--;
	map->keys[i] = (uint32_t)pid;
	map->vals[i] = val;
	map->nr++;
	return 0;
}

void pidmap_del(pidmap_t *map, int pid, const void *val)
{
	size_t pos = find(map, pid);

	if (pos == PIDMAP_END || map->vals[pos] != val)
		return;
	map->keys[pos] = PIDMAP_REMOVED;
	map->vals[pos] = NULL;
	map->nr--;
	map->tombs++;
}

size_t pidmap_next(const pidmap_t *map, size_t pos)
{
	for (; map->vals && pos <= map->mask; pos++) {
		if (map->keys[pos] != PIDMAP_EMPTY && map->keys[pos] != PIDMAP_REMOVED)
			return pos;
	}
	return PIDMAP_END;
}
