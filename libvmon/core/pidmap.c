/* pidmap.c: the pid index; see pidmap.h. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "core/pidmap.h"

#define PIDMAP_MIN_CAPACITY 256

static size_t pidmap_hash(int pid, size_t mask)
{
	/* pids are dense and sequential: a multiplicative hash spreads runs of
	 * them over the table instead of filling one stretch */
	return ((unsigned)pid * 2654435761u) & mask;
}

int pidmap_init(pidmap_t *map)
{
	map->slots = calloc(PIDMAP_MIN_CAPACITY, sizeof(*map->slots));
	if (!map->slots)
		return -1;
	map->mask = PIDMAP_MIN_CAPACITY - 1;
	map->nr = 0;
	return 0;
}

void pidmap_fini(pidmap_t *map)
{
	free(map->slots);
	map->slots = NULL;
	map->mask = 0;
	map->nr = 0;
}

void *pidmap_get(const pidmap_t *map, int pid)
{
	size_t i;

	if (!map->slots || pid <= 0)
		return NULL;
	for (i = pidmap_hash(pid, map->mask); map->slots[i].pid; i = (i + 1) & map->mask) {
		if (map->slots[i].pid == pid)
			return map->slots[i].node;
	}
	return NULL;
}

static void pidmap_insert(pidmap_slot_t *slots, size_t mask, int pid, void *node)
{
	size_t i;

	for (i = pidmap_hash(pid, mask); slots[i].pid && slots[i].pid != pid; i = (i + 1) & mask)
		;
	slots[i].pid = pid;
	slots[i].node = node;
}

static int pidmap_grow(pidmap_t *map)
{
	size_t new_mask = map->mask * 2 + 1, i;
	pidmap_slot_t *slots = calloc(new_mask + 1, sizeof(*slots));

	if (!slots)
		return -1;
	for (i = 0; i <= map->mask; i++) {
		if (map->slots[i].pid)
			pidmap_insert(slots, new_mask, map->slots[i].pid, map->slots[i].node);
	}
	free(map->slots);
	map->slots = slots;
	map->mask = new_mask;
	return 0;
}

int pidmap_put(pidmap_t *map, int pid, void *node)
{
	if (pid <= 0) {
		errno = EINVAL;
		return -1;
	}
	if (!pidmap_get(map, pid)) {
		if ((map->nr + 1) * 2 > map->mask + 1 && pidmap_grow(map) < 0)
			return -1;
		map->nr++;
	}
	pidmap_insert(map->slots, map->mask, pid, node);
	return 0;
}

void pidmap_del(pidmap_t *map, int pid, const void *node)
{
	size_t i, j, home;

	if (!map->slots || pid <= 0)
		return;
	for (i = pidmap_hash(pid, map->mask); map->slots[i].pid; i = (i + 1) & map->mask) {
		if (map->slots[i].pid == pid)
			break;
	}
	if (!map->slots[i].pid || map->slots[i].node != node)
		return;

	/* shift later members of the probe run back into the hole, so that
	 * every entry stays reachable from its home slot without tombstones */
	for (j = (i + 1) & map->mask; map->slots[j].pid; j = (j + 1) & map->mask) {
		home = pidmap_hash(map->slots[j].pid, map->mask);
		/* can slot j's entry move to i?  only if its home is not in (i, j] */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			map->slots[i] = map->slots[j];
			i = j;
		}
	}
	map->slots[i].pid = 0;
	map->slots[i].node = NULL;
	map->nr--;
}
