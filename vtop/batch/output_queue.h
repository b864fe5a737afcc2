/*
 * output_queue.h: --events' output, written by a thread of its own
 * (output_queue.c says why).
 */
#ifndef VTOP_OUTPUT_QUEUE_H
#define VTOP_OUTPUT_QUEUE_H

#include <stdbool.h>
#include <stddef.h>

/* what may wait for the reader: past it, records are dropped and counted (events.c) */
#define VT_OUTQ_MAX	(16u << 20)

typedef struct vt_outq vt_outq_t;

/* a queue and its thread writing to fd; NULL with errno */
vt_outq_t *vt_outq_open(int fd);
/* may a record be put (less than VT_OUTQ_MAX bytes wait)? */
bool vt_outq_room(vt_outq_t *q);
/* a whole record (of events events), after those put before it; 0, or -1 with ENOMEM (nothing put) */
int vt_outq_put(vt_outq_t *q, const char *data, size_t len, unsigned long long events);
/* the errno of a write that failed (nothing is written after it), or 0 */
int vt_outq_error(vt_outq_t *q);
/*
 * Everything put written (or a write failed), the thread joined, q freed;
 * vt_outq_error()'s answer.  patience >= 0: a reader that takes nothing
 * for that many seconds is not waited for, and *unwritten says how many
 * events were not written to it (else 0).
 */
int vt_outq_close(vt_outq_t *q, double patience, unsigned long long *unwritten);

#endif
