/* hash.c: the hash table (hash.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

#define VHASH_MIN	64	/* slots */

enum { SLOT_EMPTY, SLOT_USED, SLOT_REMOVED };

static size_t home_of(const vhash_t *h, uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> h->shift);
}

void vhash_fini(vhash_t *h)
{
	free(h->slots);
	memset(h, 0, sizeof(*h));
}

void vhash_clear(vhash_t *h)
{
	if (h->slots)
		memset(h->state, SLOT_EMPTY, h->mask + 1);
	h->nr = 0;
	h->tombs = 0;
}

/* the table rebuilt with size slots (a power of two that holds every entry), without tombstones */
static int rebuild(vhash_t *h, size_t size)
{
	vhash_t t = { .mask = size - 1, .nr = h->nr, .shift = 64 };
	size_t i, j;

	/* one block: the slots, then their states */
	t.slots = malloc(size * (sizeof(*t.slots) + 1));
	if (!t.slots) {
		errno = ENOMEM;
		return -1;
	}
	t.state = (uint8_t *)(t.slots + size);
	memset(t.state, SLOT_EMPTY, size);
	for (i = size; i > 1; i >>= 1)
		t.shift--;
	for (i = 0; h->slots && i <= h->mask; i++) {
		if (h->state[i] != SLOT_USED)
			continue;
		for (j = home_of(&t, h->slots[i].key); t.state[j] != SLOT_EMPTY; j = (j + 1) & t.mask)
			;
		t.slots[j] = h->slots[i];
		t.state[j] = SLOT_USED;
	}
	free(h->slots);
	*h = t;
	return 0;
}

int vhash_reserve(vhash_t *h, size_t n)
{
	size_t size = VHASH_MIN;

	while (vhash_too_full_to_fit(n + 1, size))
		size *= 2;
	if (h->slots && size <= h->mask + 1)
		return 0;
	return rebuild(h, size);
}

/*
 * After a storm of short lives the pid indexes were sized for it, and
 * stayed so: made the smallest size the entries fill at most 5/8 of, when
 * that is smaller, so that memory returns to its steady size.  That size
 * is the one of a steady table too: 10,000 pids fill 61 % of 16,384
 * slots, which a rebuild keeps (the storm's table was 32,768).
 */
int vhash_fit(vhash_t *h)
{
	size_t fit = VHASH_MIN;

	if (!h->slots)
		return 0;
	while (vhash_too_full_to_fit(h->nr + 1, fit))
		fit *= 2;
	return fit < h->mask + 1 ? rebuild(h, fit) : 0;
}

size_t vhash_find_next(const vhash_t *h, uint64_t key, size_t pos)
{
	size_t i;

	if (!h->slots)
		return VHASH_END;
	for (i = (pos + 1) & h->mask; h->state[i] != SLOT_EMPTY; i = (i + 1) & h->mask) {
		if (h->state[i] == SLOT_USED && h->slots[i].key == key)
			return i;
	}
	return VHASH_END;
}

size_t vhash_find(const vhash_t *h, uint64_t key)
{
	size_t i;

	if (!h->slots)
		return VHASH_END;
	i = home_of(h, key);
	if (h->state[i] == SLOT_USED && h->slots[i].key == key)
		return i;
	if (h->state[i] == SLOT_EMPTY)
		return VHASH_END;
	return vhash_find_next(h, key, i);
}

void *vhash_get(const vhash_t *h, uint64_t key)
{
	size_t pos = vhash_find(h, key);

	return pos == VHASH_END ? NULL : h->slots[pos].val;
}

int vhash_add(vhash_t *h, uint64_t key, void *val)
{
	size_t i;

	/* a quarter of the slots empty always, so that every probe ends, and soon */
	if (!h->slots || vhash_too_crowded(h->nr + h->tombs + 1, h->mask + 1)) {
		size_t size = h->slots ? h->mask + 1 : VHASH_MIN;

		if (vhash_too_full(h->nr + 1, size))
			size *= 2;
		if (rebuild(h, size) < 0)
			return -1;
	}
	for (i = home_of(h, key); h->state[i] == SLOT_USED; i = (i + 1) & h->mask)
		;
	if (h->state[i] == SLOT_REMOVED)
		h->tombs--;
	h->state[i] = SLOT_USED;
	h->slots[i].key = key;
	h->slots[i].val = val;
	h->nr++;
	return 0;
}

int vhash_put(vhash_t *h, uint64_t key, void *val)
{
	size_t pos = vhash_find(h, key);

	if (pos == VHASH_END)
		return vhash_add(h, key, val);
	h->slots[pos].val = val;
	return 0;
}

void vhash_remove_at(vhash_t *h, size_t pos)
{
	h->state[pos] = SLOT_REMOVED;
	h->slots[pos].val = NULL;
	h->nr--;
	h->tombs++;
}

bool vhash_remove(vhash_t *h, uint64_t key, const void *val)
{
	for (size_t pos = vhash_find(h, key); pos != VHASH_END; pos = vhash_find_next(h, key, pos)) {
		if (h->slots[pos].val == val) {
			vhash_remove_at(h, pos);
			return true;
		}
	}
	return false;
}

size_t vhash_next(const vhash_t *h, size_t pos)
{
	for (; h->slots && pos <= h->mask; pos++) {
		if (h->state[pos] == SLOT_USED)
			return pos;
	}
	return VHASH_END;
}
