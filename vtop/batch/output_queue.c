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
 * whole: a reader never sees half of one.
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
	pthread_cond_t	wrote;		/* a block was written, or the thread ended */
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

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : EIO;
		p += n;
		len -= (size_t)n;
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

/* the thread cancelled in a write (vt_outq_close()'s patience ran out): it has ended */
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
 * and empty.  It can be cancelled only in its writes (vt_outq_close()), and
 * takes no signal meant for the process: the sampling thread does
 * (batch.c's stop on SIGTERM).
 */
static void *outq_thread(void *arg)
{
	vt_outq_t *q = arg;
	sigset_t all;

	/* (but SIGPIPE, which a write to a pipe its reader closed raises in this thread: vtop ends by it) */
	sigfillset(&all);
	sigdelset(&all, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
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
			if (!err) {
				pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
				err = write_all(q->fd, b->data, b->len);
				pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
			}
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
	int err;

	if (!q)
		return NULL;
	q->fd = fd;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->more, NULL);
	pthread_cond_init(&q->wrote, NULL);
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

int vt_outq_close(vt_outq_t *q, double patience, unsigned long long *unwritten)
{
	struct timespec due;
	int err;

	*unwritten = 0;
	if (!q)
		return 0;
	pthread_mutex_lock(&q->lock);
	q->closing = true;
	pthread_cond_signal(&q->more);
	/* everything put is written first (or a write failed), as a FILE's buffer at exit; */
	while (!q->ended) {
		if (patience < 0) {
			pthread_cond_wait(&q->wrote, &q->lock);
			continue;
		}
		/* ... or, with patience, until the reader took nothing for that long */
		clock_gettime(CLOCK_REALTIME, &due);
		due.tv_sec += (time_t)patience;
		due.tv_nsec += (long)((patience - (double)(time_t)patience) * 1e9);
		if (due.tv_nsec >= 1000000000L) {
			due.tv_sec++;
			due.tv_nsec -= 1000000000L;
		}
		if (pthread_cond_timedwait(&q->wrote, &q->lock, &due) == ETIMEDOUT && !q->ended) {
			pthread_cancel(q->thread);
			break;
		}
	}
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->thread, NULL);
	/* (a cancelled write may have written part of its block: it counts as not written) */
	*unwritten = free_blocks(q->taken) + free_blocks(q->head);
	err = q->err;
	pthread_cond_destroy(&q->wrote);
	pthread_cond_destroy(&q->more);
	pthread_mutex_destroy(&q->lock);
	free(q);
	return err;
}
