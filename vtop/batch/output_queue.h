/*
 * output_queue.h: --events' output, written by a thread of its own
 * (output_queue.c says why).
 */
#ifndef VTOP_OUTPUT_QUEUE_H
#define VTOP_OUTPUT_QUEUE_H

#include <signal.h>
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
 * Waits until everything put is written (or a write failed), then joins
 * the thread and frees q; vt_outq_error()'s answer.  Once *stop is set
 * (stop may be NULL), a reader that takes nothing for patience seconds, or
 * a wait of most seconds in all, is not waited for: *unwritten then says
 * at most how many events it did not get (else 0), and its last record may
 * be cut.
 */
int vt_outq_close(vt_outq_t *q, const volatile sig_atomic_t *stop, double patience, double most,
		  unsigned long long *unwritten);

#endif
