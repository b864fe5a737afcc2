/*
 * iter_held.c: the held table's entries placed, found and removed
 * (iter_held.h).  Linear probing from iter_held_home(), at most
 * ITER_HELD_PROBES entries, as the program looks (bpf/iter.bpf.c,
 * held_find()); a free entry ends a tid's probes, so removing one moves the
 * entries after it back towards their homes instead of leaving a hole in
 * their run (no tombstones: the program would have to step over them).
 */
#include "config.h"

#include <string.h>

#include "sources/iter_held.h"

/* how far entry i is from the home of the tid in it */
static unsigned held_distance(const held_table_t *t, unsigned i)
{
	return (i - iter_held_home(t->e[i].tid, t->mask)) & t->mask;
}

struct iter_held *held_find(const held_table_t *t, unsigned tid)
{
	unsigned i = iter_held_home(tid, t->mask);

	if (!tid)
		return NULL;	/* 0 marks a free entry */
	for (unsigned n = 0; n < ITER_HELD_PROBES && n <= t->mask; n++, i = (i + 1) & t->mask) {
		if (t->e[i].tid == tid)
			return &t->e[i];
		if (!t->e[i].tid)
			break;
	}
	return NULL;
}

/* held_find(), looking first where the program found the entry (hint: 1 + its index, 0: nowhere) */
struct iter_held *held_find_hinted(const held_table_t *t, unsigned tid, unsigned hint)
{
	if (hint && hint - 1 <= t->mask && tid && t->e[hint - 1].tid == tid)
		return &t->e[hint - 1];
	return held_find(t, tid);
}

struct iter_held *held_place(held_table_t *t, unsigned tid)
{
	unsigned i = iter_held_home(tid, t->mask);

	if (!tid)
		return NULL;
	for (unsigned n = 0; n < ITER_HELD_PROBES && n <= t->mask; n++, i = (i + 1) & t->mask) {
		if (t->e[i].tid == tid)
			return &t->e[i];
		if (!t->e[i].tid) {
			memset(&t->e[i], 0, sizeof(t->e[i]));
			t->e[i].tid = tid;
			t->nr++;
			return &t->e[i];
		}
	}
	return NULL;
}

void held_remove(held_table_t *t, struct iter_held *e)
{
	unsigned hole = (unsigned)(e - t->e), j = hole;

	t->e[hole].tid = 0;
	t->nr--;
	/* the run after the hole: an entry that may move back into it does, leaving its own hole */
	for (;;) {
		j = (j + 1) & t->mask;
		if (!t->e[j].tid || j == hole)
			return;
		if (held_distance(t, j) >= ((j - hole) & t->mask)) {
			t->e[hole] = t->e[j];
			t->e[j].tid = 0;
			hole = j;
		}
	}
}

void held_clear(held_table_t *t)
{
	memset(t->e, 0, ((size_t)t->mask + 1) * sizeof(*t->e));
	t->nr = 0;
}
