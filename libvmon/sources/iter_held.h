/*
 * iter_held.h: the held table (bpf/iter.h, struct iter_held): which record
 * user space holds of each task, for the task iterator's program to send a
 * header alone where that record is still the task's.  The entries are the
 * program's held map and the index its held_at map, both mmapped; this is
 * their only writer.
 */
#ifndef VMON_ITER_HELD_H
#define VMON_ITER_HELD_H

#include <stddef.h>

#include "bpf/iter.h"

typedef struct held_table {
	struct iter_held	*e;	/* cap entries: [0, end) placed in the reads' order, some free since */
	struct iter_held_at	*at;	/* mask + 1: tid -> its entry */
	unsigned		mask;
	unsigned		cap;
	unsigned		end;	/* where the next entry placed goes */
	unsigned		nr;	/* entries in use */
	unsigned		order;	/* held_order_*(): the next entry's index in the new order */
} held_table_t;

/* tid's entry, or NULL */
struct iter_held *held_find(const held_table_t *t, unsigned tid);
/* held_find(), looking first at the entry hint names (1 + its index, the program's; 0: none) */
struct iter_held *held_find_hinted(const held_table_t *t, unsigned tid, unsigned hint);
/* tid's entry, or a new one after the others; NULL: no room, at the end or in the index (its records come whole) */
struct iter_held *held_place(held_table_t *t, unsigned tid);
/* the entry freed (the others stay where they are: a read's records name them by index) */
void held_remove(held_table_t *t, struct iter_held *e);
/*
 * The entries in use put in a new order, between reads: held_order_begin(),
 * held_order_next() for each tid in that order (one without an entry, or
 * named again, is passed over), held_order_end(); those not named follow,
 * in their order.  The free entries go: end is nr after.
 */
void held_order_begin(held_table_t *t);
void held_order_next(held_table_t *t, unsigned tid);
void held_order_end(held_table_t *t);
/* the entries in use moved down over the free ones, in their order */
void held_compact(held_table_t *t);
void held_clear(held_table_t *t);

#endif
