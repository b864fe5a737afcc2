/*
 * bpf_ring.c: the reader of a BPF ring buffer (bpf_ring.h), after the
 * layout the kernel gives user space (Documentation/bpf/ringbuf.rst):
 *
 *   page 0		the consumer's position, the only page user space writes
 *   page 1		the producer's position
 *   pages 2...		the data, size bytes (a power of two), then the same
 *			pages again, so that any size bytes of it map as one piece
 *
 * A record is an 8-byte header (its length, with BUSY while the producer
 * has not committed it and DISCARD if it gave it up; then a page offset
 * the kernel uses) and the record's bytes, the whole rounded up to 8.
 * Positions only grow: a record is at position & (size - 1).  The reader
 * takes the producer's position, maps the pages from its own position to
 * that one (a window: mapped read-only, at the data's page where it
 * starts, through the second copy where it wraps), reads the committed
 * records in it (each header's length read with acquire, as the producer
 * commits with release), and stores its own position with release, so
 * that the kernel knows the bytes are free again and whether a reader
 * must be woken.  A window of up to the reader's keep bytes stays mapped
 * for the reads after, which find their bytes in it until the positions
 * pass its end (a reader woken often, for a few records each time, maps
 * once in many reads); a larger one is unmapped after its read.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/bpf_ring.h"

#define RING_HDR_BYTES		8
#define RING_BUSY		(1u << 31)
#define RING_DISCARD		(1u << 30)

/* the ring's bytes from position from to position to, mapped for reads */
struct window {
	void			*map;	/* NULL: none */
	size_t			len;
	unsigned long		from, to;
	const unsigned char	*at;	/* position from's byte */
};

struct bpf_ring {
	int			fd;		/* the map's, our own (a read maps its window from it); -1: none */
	size_t			page, size, keep;
	unsigned long		*consumer;	/* page 0, read and write */
	const unsigned long	*producer;	/* page 1, read only */
	struct window		w;		/* the last read's, while it is at most keep bytes */
	unsigned long		windows;	/* mapped so far */
	bpf_ring_record_fn	fn;
	void			*arg;
};

bpf_ring_t *bpf_ring_open(int map_fd, size_t size, size_t keep, bpf_ring_record_fn fn, void *arg)
{
	bpf_ring_t *r = calloc(1, sizeof(*r));
	void *p;
	int err;

	if (!r)
		return NULL;
	/* (the caller may close its fd once the ring is open: the feed does; at 3 or above, never a standard one) */
	r->fd = fcntl(map_fd, F_DUPFD_CLOEXEC, 3);
	r->page = (size_t)sysconf(_SC_PAGESIZE);
	r->size = size;
	/* a read of keep bytes from anywhere in a page takes keep's pages and one more */
	r->keep = keep ? (keep + r->page - 1) / r->page * r->page + r->page : 0;
	r->fn = fn;
	r->arg = arg;
	if (r->fd < 0)
		goto fail;
	if (!size || (size & (size - 1)) || size % r->page) {
		errno = EINVAL;
		goto fail;
	}
	p = mmap(NULL, r->page, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	r->consumer = p;
	p = mmap(NULL, r->page, PROT_READ, MAP_SHARED, map_fd, (off_t)r->page);
	if (p == MAP_FAILED)
		goto fail;
	r->producer = p;
	return r;

fail:
	err = errno;
	bpf_ring_close(r);
	errno = err;
	return NULL;
}

/*
 * A window over [from, to) (to - from <= size) mapped, from from's page
 * on, keep bytes if that is more (as far as the data's second copy goes):
 * 0, or -1 with errno
 */
static int window_map(bpf_ring_t *r, struct window *w, unsigned long from, unsigned long to)
{
	size_t off = from & (r->size - 1), first = off / r->page * r->page;
	size_t len = (off + (to - from) + r->page - 1) / r->page * r->page - first;
	void *p;

	if (len < r->keep)
		len = r->keep < 2 * r->size - first ? r->keep : 2 * r->size - first;
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, r->fd, (off_t)(2 * r->page + first));
	if (p == MAP_FAILED)
		return -1;
	w->map = p;
	w->len = len;
	r->windows++;
	w->from = from - (off - first);
	w->to = w->from + len;
	w->at = p;
	return 0;
}

static void window_unmap(struct window *w)
{
	if (w->map)
		munmap(w->map, w->len);
	w->map = NULL;
}

int bpf_ring_consume(bpf_ring_t *r)
{
	unsigned long cons = __atomic_load_n(r->consumer, __ATOMIC_RELAXED), start = cons, prod;
	struct window *w = &r->w;
	int n = 0, stop = 0;

	prod = __atomic_load_n(r->producer, __ATOMIC_ACQUIRE);
	while (cons < prod && !stop) {
		const unsigned char *hdr;
		uint32_t len;
		size_t bytes, size;

		if (!w->map || cons < w->from || prod > w->to) {
			window_unmap(w);
			/* (never more than a ring's worth unread: a producer that says so is not believed) */
			if (prod - cons > r->size)
				prod = cons + r->size;	/* (a record across it: EPROTO below) */
			if (window_map(r, w, cons, prod) < 0) {
				n = n ? n : -1;	/* the records stay for the next read */
				break;
			}
		}
		hdr = w->at + (cons - w->from);
		len = __atomic_load_n((const uint32_t *)hdr, __ATOMIC_ACQUIRE);
		if (len & RING_BUSY)
			break;		/* not committed yet: the records after it wait for it */
		size = len & ~(RING_BUSY | RING_DISCARD);
		bytes = (size + RING_HDR_BYTES + 7) & ~(size_t)7;
		if (bytes > prod - cons) {
			/* a record past the producer's position: it stays, and fails every read from here on */
			errno = EPROTO;
			n = n ? n : -1;
			break;
		}
		if (!(len & RING_DISCARD)) {
			stop = r->fn(r->arg, hdr + RING_HDR_BYTES, size);
			n++;
		}
		cons += bytes;
		/* the record's bytes free for the producer at once, as each is read */
		__atomic_store_n(r->consumer, cons, __ATOMIC_RELEASE);
		/*
		 * More may have come meanwhile: read it too (in the window if
		 * it is there, else in a larger one), but no more than a
		 * ring's worth in one call, so that a producer as fast as this
		 * reader (a fork storm) cannot keep the caller here for ever.
		 */
		if (cons >= prod && cons - start < r->size)
			prod = __atomic_load_n(r->producer, __ATOMIC_ACQUIRE);
	}
	if (w->len > r->keep)
		window_unmap(w);
	return n;
}

void bpf_ring_skip(bpf_ring_t *r)
{
	__atomic_store_n(r->consumer, __atomic_load_n(r->producer, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
}

size_t bpf_ring_waiting(const bpf_ring_t *r)
{
	return __atomic_load_n(r->producer, __ATOMIC_ACQUIRE) - __atomic_load_n(r->consumer, __ATOMIC_RELAXED);
}

unsigned long bpf_ring_windows(const bpf_ring_t *r)
{
	return r->windows;
}

void bpf_ring_close(bpf_ring_t *r)
{
	if (!r)
		return;
	if (r->consumer)
		munmap(r->consumer, r->page);
	if (r->producer)
		munmap((void *)r->producer, r->page);
	window_unmap(&r->w);
	if (r->fd >= 0)
		close(r->fd);
	free(r);
}
