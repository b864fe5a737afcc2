/*
 * iter_held.c: the held table's entries placed, found, removed and
 * compacted (iter_held.h).
 *
 * An entry is placed after the others, so the entries stay in the order
 * the reads first met their tasks: the order the next walk meets them (a
 * new process joins the end of the task list), and the program finds a
 * task's entry where the last one's ended (bpf/iter.bpf.c, held_find()).
 * A removed entry leaves a free one in its place, which held_compact()
 * takes back between reads; held_order_*() put the entries in the order of
 * a read, where a task's entry was placed out of it (a thread started after
 * other processes, which the walk meets beside its process).
 *
 * The index is linear probing from iter_held_home(), at most
 * ITER_HELD_PROBES entries, as the program looks; a free index entry ends
 * a tid's probes, so removing one moves the index entries after it back
 * towards their homes instead of leaving a hole in their run (no
 * tombstones: the program would have to step over them).
 */
#include "config.h"

#include <string.h>

#include "sources/iter_held.h"

/* how far index entry i is from the home of the tid in it */
static unsigned at_distance(const held_table_t *t, unsigned i)
{
	return (i - iter_held_home(t->at[i].tid, t->mask)) & t->mask;
}

/* tid's index entry; or, with room, the free one where it would go (NULL: neither) */
static struct iter_held_at *at_probe(const held_table_t *t, unsigned tid, int room)
{
	unsigned i = iter_held_home(tid, t->mask);

	if (!tid || !t->at)
		return NULL;	/* 0 marks a free entry */
	for (unsigned n = 0; n < ITER_HELD_PROBES && n <= t->mask; n++, i = (i + 1) & t->mask) {
		if (t->at[i].tid == tid)
			return &t->at[i];
		if (!t->at[i].tid)
			return room ? &t->at[i] : NULL;
	}
	return NULL;
}

struct iter_held *held_find(const held_table_t *t, unsigned tid)
{
	const struct iter_held_at *at = at_probe(t, tid, 0);

	return at && at->entry < t->end ? &t->e[at->entry] : NULL;
}

/* held_find(), looking first where the program found the entry (hint: 1 + its index, 0: nowhere) */
struct iter_held *held_find_hinted(const held_table_t *t, unsigned tid, unsigned hint)
{
	if (hint && hint - 1 < t->end && tid && t->e[hint - 1].tid == tid)
		return &t->e[hint - 1];
	return held_find(t, tid);
}

struct iter_held *held_place(held_table_t *t, unsigned tid)
{
	struct iter_held_at *at = at_probe(t, tid, 1);
	struct iter_held *e;

	if (!at)
		return NULL;
	if (at->tid)
		return at->entry < t->end ? &t->e[at->entry] : NULL;
	if (t->end == t->cap)
		return NULL;
	e = &t->e[t->end];
	memset(e, 0, sizeof(*e));
	e->tid = tid;
	at->tid = tid;
	at->entry = t->end++;
	t->nr++;
	return e;
}

void held_remove(held_table_t *t, struct iter_held *e)
{
	struct iter_held_at *at = at_probe(t, e->tid, 0);
	unsigned hole, j;

	e->tid = 0;
	if (!at)
		return;		/* (not in the index: not placed here) */
	t->nr--;
	hole = j = (unsigned)(at - t->at);
	t->at[hole].tid = 0;
	/* the run after the hole: an index entry that may move back into it does, leaving its own hole */
	for (;;) {
		j = (j + 1) & t->mask;
		if (!t->at[j].tid || j == hole)
			return;
		if (at_distance(t, j) >= ((j - hole) & t->mask)) {
			t->at[hole] = t->at[j];
			t->at[j].tid = 0;
			hole = j;
		}
	}
}

/*
 * The new order goes in the index entries first (their entry the new
 * index, AT_UNPLACED while they have none), then the entries are swapped
 * into it in place: each swap puts one where it goes.
 */
#define AT_UNPLACED	0x80000000u

void held_order_begin(held_table_t *t)
{
	for (unsigned i = 0; i <= t->mask; i++)
		if (t->at[i].tid)
			t->at[i].entry |= AT_UNPLACED;
	t->order = 0;
}

void held_order_next(held_table_t *t, unsigned tid)
{
	struct iter_held_at *at = at_probe(t, tid, 0);

	if (at && (at->entry & AT_UNPLACED))
		at->entry = t->order++;
}

void held_order_end(held_table_t *t)
{
	for (unsigned i = 0; i < t->end; i++)
		if (t->e[i].tid)
			held_order_next(t, t->e[i].tid);
	for (unsigned i = 0; i < t->end; i++) {
		while (t->e[i].tid) {
			const struct iter_held_at *at = at_probe(t, t->e[i].tid, 0);
			struct iter_held e;

			if (!at || at->entry >= t->order) {
				t->e[i].tid = 0;	/* (not in the index: not placed here) */
				break;
			}
			if (at->entry == i)
				break;
			e = t->e[at->entry];
			t->e[at->entry] = t->e[i];
			t->e[i] = e;
		}
	}
	/* the entries after the last in use are free: the program takes any entry with a tid for the task's */
	t->end = t->nr = t->order;
}

void held_compact(held_table_t *t)
{
	held_order_begin(t);
	held_order_end(t);
}

void held_clear(held_table_t *t)
{
	memset(t->e, 0, (size_t)t->cap * sizeof(*t->e));
	memset(t->at, 0, ((size_t)t->mask + 1) * sizeof(*t->at));
	t->end = t->nr = 0;
}
