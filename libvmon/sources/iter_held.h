/*
 * iter_held.h: the held table (bpf/iter.h, struct iter_held): which record
 * user space holds of each task, for the task iterator's program to send a
 * header alone where that record is still the task's.  The table is the
 * program's held map, mmapped; this is its only writer.
 */
#ifndef VMON_ITER_HELD_H
#define VMON_ITER_HELD_H

#include <stddef.h>

#include "bpf/iter.h"

typedef struct held_table {
	struct iter_held	*e;	/* mask + 1 entries */
	unsigned		mask;
	unsigned		nr;	/* entries in use */
} held_table_t;

/* tid's entry, or NULL */
struct iter_held *held_find(const held_table_t *t, unsigned tid);
/* held_find(), looking first at the entry hint names (1 + its index, the program's; 0: none) */
struct iter_held *held_find_hinted(const held_table_t *t, unsigned tid, unsigned hint);
/* tid's entry, or a free one made its own; NULL: none within its probes (its records come whole) */
struct iter_held *held_place(held_table_t *t, unsigned tid);
/* the entry freed, the entries after it moved up so that each is still within its probes */
void held_remove(held_table_t *t, struct iter_held *e);
void held_clear(held_table_t *t);

#endif
