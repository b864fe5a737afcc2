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
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch/output_queue.h"

/* records are gathered in blocks of this size (one larger for a record that is), freed once written */
#define BLOCK_BYTES	(64u << 10)

typedef struct outq_block {
	struct outq_block	*next;
	size_t			len;
	size_t			cap;
	char			data[];
} outq_block_t;

struct vt_outq {
	pthread_mutex_t	lock;
	pthread_cond_t	more;		/* a record was put, or the queue is closing */
	outq_block_t	*head, *tail;	/* waiting, oldest first */
	size_t		waiting;	/* bytes in head..tail */
	size_t		writing;	/* bytes the thread took and is writing */
	int		fd;
	int		err;		/* the errno of a write that failed: nothing is written after it */
	bool		closing;
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

/* the thread: takes everything waiting, writes it in order, until closed and empty */
static void *outq_thread(void *arg)
{
	vt_outq_t *q = arg;

	for (;;) {
		outq_block_t *b, *next;
		int err;

		pthread_mutex_lock(&q->lock);
		while (!q->head && !q->closing)
			pthread_cond_wait(&q->more, &q->lock);
		if (!q->head) {
			pthread_mutex_unlock(&q->lock);
			return NULL;
		}
		b = q->head;
		q->head = q->tail = NULL;
		q->writing = q->waiting;
		q->waiting = 0;
		err = q->err;
		pthread_mutex_unlock(&q->lock);

		for (; b; b = next) {
			next = b->next;
			if (!err)
				err = write_all(q->fd, b->data, b->len);
			free(b);
		}
		pthread_mutex_lock(&q->lock);
		q->writing = 0;
		q->err = err;
		pthread_mutex_unlock(&q->lock);
	}
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
	err = pthread_create(&q->thread, NULL, outq_thread, q);
	if (err) {
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

int vt_outq_put(vt_outq_t *q, const char *data, size_t len)
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
		if (q->tail)
			q->tail->next = b;
		else
			q->head = b;
		q->tail = b;
	}
	memcpy(b->data + b->len, data, len);
	b->len += len;
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

int vt_outq_close(vt_outq_t *q)
{
	int err;

	if (!q)
		return 0;
	pthread_mutex_lock(&q->lock);
	q->closing = true;
	pthread_cond_signal(&q->more);
	pthread_mutex_unlock(&q->lock);
	/* everything put is written first (or a write failed): as a FILE's buffer at exit */
	pthread_join(q->thread, NULL);
	err = q->err;
	pthread_cond_destroy(&q->more);
	pthread_mutex_destroy(&q->lock);
	free(q);
	return err;
}
