/*
 * output_queue.c: what --events writes, handed to a thread of its own that
 * writes it to standard output.
 *
 * Why a thread: the events are written by the thread that samples, and
 * that thread also drains the kernel's event buffer.  Written straight to
 * a pipe whose reader fell behind (a log shipper busy for a moment, a
 * pager scrolled back), a write waited for the reader, the drains stopped,
 * and the kernel's buffer overflowed: and it cannot grow then, for it is
 * grown by a drain (libvmon/feed/feed_bpf.c).  Queued, the sampling goes on.
 *
 * Bounded: a record that finds VT_OUTQ_MAX bytes waiting is not queued.
 * The caller counts it and says so in a "lost" record once there is room
 * (events.c), so that a reader that stops for good costs VT_OUTQ_MAX of
 * memory, and what it did not get is never a silent gap.  Records are put
 * whole: a reader never sees half of one, but for the last at a stop that
 * did not wait for it (vt_outq_close(), write_block()).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "batch/output_queue.h"

/* records are gathered in blocks of this size (one larger for a record that is), freed once written */
#define BLOCK_BYTES	(64u << 10)
/* and written in pieces of at most this: each one the reader takes is progress vt_outq_close() sees */
#define PIECE_BYTES	(16u << 10)
/* how often vt_outq_close() looks at its caller's stop flag */
#define CLOSE_SLICE_NS	100000000L

typedef struct outq_block {
	struct outq_block	*next;
	size_t			len;
	size_t			cap;
	unsigned long long	events;	/* in its records */
	char			data[];
} outq_block_t;

struct vt_outq {
	pthread_mutex_t	lock;
	pthread_cond_t	more;		/* a record was put, or the queue is closing */
	pthread_cond_t	wrote;		/* a piece was written, or the thread ended (CLOCK_MONOTONIC) */
	unsigned long long written;	/* bytes written so far */
	outq_block_t	*head, *tail;	/* waiting, oldest first */
	outq_block_t	*taken;		/* what the thread took and has not written yet */
	size_t		waiting;	/* bytes in head..tail */
	size_t		writing;	/* bytes in taken */
	int		fd;
	int		err;		/* the errno of a write that failed: nothing is written after it */
	bool		closing;
	bool		ended;		/* the thread returned (or was cancelled) */
	pthread_t	thread;
};

/*
 * A block written in pieces, each one progress told to vt_outq_close().
 * Cancellable only in the write itself (its caller's patience ran out):
 * the bytes of a block partly written then stay partly written, so the
 * reader's last record may be cut.
 */
static int write_block(vt_outq_t *q, const char *p, size_t len)
{
	while (len) {
		ssize_t n;

		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		n = write(q->fd, p, len < PIECE_BYTES ? len : PIECE_BYTES);
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : EIO;
		p += n;
		len -= (size_t)n;
		pthread_mutex_lock(&q->lock);
		q->written += (unsigned long long)n;
		pthread_cond_broadcast(&q->wrote);
		pthread_mutex_unlock(&q->lock);
	}
	return 0;
}

static unsigned long long free_blocks(outq_block_t *b)
{
	unsigned long long events = 0;

	while (b) {
		outq_block_t *next = b->next;

		events += b->events;
		free(b);
		b = next;
	}
	return events;
}

/* the thread has ended: returned, or cancelled in a write (vt_outq_close()'s patience ran out) */
static void outq_cancelled(void *arg)
{
	vt_outq_t *q = arg;

	pthread_mutex_lock(&q->lock);
	q->ended = true;
	pthread_cond_broadcast(&q->wrote);
	pthread_mutex_unlock(&q->lock);
}

/*
 * The thread: takes everything waiting, writes it in order, until closed
 * and empty.  It can be cancelled only in its writes (vt_outq_close()).
 * (It has the signal mask of the thread that made it: batch.c's keeps the
 * signals that stop vtop for the sampling thread.)
 */
static void *outq_thread(void *arg)
{
	vt_outq_t *q = arg;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	pthread_cleanup_push(outq_cancelled, q);
	for (;;) {
		outq_block_t *b;
		int err;

		pthread_mutex_lock(&q->lock);
		while (!q->head && !q->closing)
			pthread_cond_wait(&q->more, &q->lock);
		if (!q->head) {
			pthread_mutex_unlock(&q->lock);
			break;
		}
		q->taken = q->head;
		q->head = q->tail = NULL;
		q->writing = q->waiting;
		q->waiting = 0;
		err = q->err;
		pthread_mutex_unlock(&q->lock);

		while ((b = q->taken)) {
			if (!err)
				err = write_block(q, b->data, b->len);
			/* its room given back as it is written: a reader that keeps up gets records as they come */
			pthread_mutex_lock(&q->lock);
			q->taken = b->next;
			q->writing -= b->len;
			q->err = err;
			pthread_cond_broadcast(&q->wrote);
			pthread_mutex_unlock(&q->lock);
			free(b);
		}
	}
	pthread_cleanup_pop(1);
	return NULL;
}

vt_outq_t *vt_outq_open(int fd)
{
	vt_outq_t *q = calloc(1, sizeof(*q));
	pthread_condattr_t attr;
	int err;

	if (!q)
		return NULL;
	q->fd = fd;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->more, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);	/* (vt_outq_close()'s waits: not the wall clock's steps) */
	pthread_cond_init(&q->wrote, &attr);
	pthread_condattr_destroy(&attr);
	err = pthread_create(&q->thread, NULL, outq_thread, q);
	if (err) {
		pthread_cond_destroy(&q->wrote);
		pthread_cond_destroy(&q->more);
		pthread_mutex_destroy(&q->lock);
		free(q);
		errno = err;
		return NULL;
	}
	return q;
}

bool vt_outq_room(vt_outq_t *q)
{
	bool room;

	pthread_mutex_lock(&q->lock);
	room = q->waiting + q->writing < VT_OUTQ_MAX;
	pthread_mutex_unlock(&q->lock);
	return room;
}

int vt_outq_put(vt_outq_t *q, const char *data, size_t len, unsigned long long events)
{
	outq_block_t *b;

	if (!len)
		return 0;
	pthread_mutex_lock(&q->lock);
	b = q->tail;
	if (!b || b->cap - b->len < len) {
		size_t cap = len > BLOCK_BYTES ? len : BLOCK_BYTES;

		/* (malloc under the lock: the thread holds it only to take the list) */
		b = malloc(sizeof(*b) + cap);
		if (!b) {
			pthread_mutex_unlock(&q->lock);
			errno = ENOMEM;
			return -1;
		}
		b->next = NULL;
		b->len = 0;
		b->cap = cap;
		b->events = 0;
		if (q->tail)
			q->tail->next = b;
		else
			q->head = b;
		q->tail = b;
	}
	memcpy(b->data + b->len, data, len);
	b->len += len;
	b->events += events;
	q->waiting += len;
	pthread_cond_signal(&q->more);
	pthread_mutex_unlock(&q->lock);
	return 0;
}

int vt_outq_error(vt_outq_t *q)
{
	int err;

	pthread_mutex_lock(&q->lock);
	err = q->err;
	pthread_mutex_unlock(&q->lock);
	return err;
}

static double monotonic_secs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int vt_outq_close(vt_outq_t *q, const volatile sig_atomic_t *stop, double patience, double most,
		  unsigned long long *unwritten)
{
	double stop_at = -1, progress_at = 0;
	unsigned long long progress = 0;
	int err;

	*unwritten = 0;
	if (!q)
		return 0;
	pthread_mutex_lock(&q->lock);
	q->closing = true;
	pthread_cond_signal(&q->more);
	/*
	 * Everything put is written first (or a write failed), as a FILE's
	 * buffer at exit; once *stop is set, only while the reader takes
	 * something within patience seconds, and for most seconds in all.
	 */
	while (!q->ended) {
		struct timespec due;
		double now = monotonic_secs();

		if (q->written != progress || progress_at == 0) {
			progress = q->written;
			progress_at = now;
		}
		if (stop_at < 0 && stop && *stop)
			stop_at = now;
		if (stop_at >= 0 && (now - progress_at > patience || now - stop_at > most)) {
			pthread_cancel(q->thread);
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &due);
		due.tv_nsec += CLOSE_SLICE_NS;
		if (due.tv_nsec >= 1000000000L) {
			due.tv_sec++;
			due.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&q->wrote, &q->lock, &due);
	}
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->thread, NULL);
	/* (a block a cancelled write left partly written counts whole: the figure is at most so many) */
	*unwritten = free_blocks(q->taken) + free_blocks(q->head);
	err = q->err;
	pthread_cond_destroy(&q->wrote);
	pthread_cond_destroy(&q->more);
	pthread_mutex_destroy(&q->lock);
	free(q);
	return err;
}
