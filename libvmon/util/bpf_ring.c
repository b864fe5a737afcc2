/*
 * bpf_ring.c: the reader of a BPF ring buffer (bpf_ring.h), after the
 * layout the kernel gives user space (Documentation/bpf/ringbuf.rst):
 *
 *   page 0		the consumer's position, the only page user space writes
 *   page 1		the producer's position
 *   pages 2...		the data, size bytes (a power of two)
 *
 * A record is an 8-byte header (its length, with BUSY while the producer
 * has not committed it and DISCARD if it gave it up; then a page offset
 * the kernel uses) and the record's bytes, the whole rounded up to 8.
 * Positions only grow: a record is at position & (size - 1).  The reader
 * takes the producer's position, reads the committed records up to it
 * (each header's length read with acquire, as the producer commits with
 * release), and stores its own position with release, so that the kernel
 * knows the bytes are free again and whether a reader must be woken.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/bpf_ring.h"

#define RING_HDR_BYTES		8
#define RING_BUSY		(1u << 31)
#define RING_DISCARD		(1u << 30)

struct bpf_ring {
	size_t			page, size;
	unsigned long		*consumer;	/* page 0, read and write */
	const unsigned long	*producer;	/* page 1, then the data, read only */
	const unsigned char	*data;
	unsigned char		*wrapped;	/* a record that wraps at the end, made whole */
	size_t			wrapped_cap;
	bpf_ring_record_fn	fn;
	void			*arg;
};

bpf_ring_t *bpf_ring_open(int map_fd, size_t size, bpf_ring_record_fn fn, void *arg)
{
	bpf_ring_t *r = calloc(1, sizeof(*r));
	void *p;
	int err;

	if (!r)
		return NULL;
	r->page = (size_t)sysconf(_SC_PAGESIZE);
	r->size = size;
	r->fn = fn;
	r->arg = arg;
	if (!size || (size & (size - 1)) || size % r->page) {
		errno = EINVAL;
		goto fail;
	}
	p = mmap(NULL, r->page, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	r->consumer = p;
	p = mmap(NULL, r->page + size, PROT_READ, MAP_SHARED, map_fd, (off_t)r->page);
	if (p == MAP_FAILED)
		goto fail;
	r->producer = p;
	r->data = (const unsigned char *)p + r->page;
	return r;

fail:
	err = errno;
	bpf_ring_close(r);
	errno = err;
	return NULL;
}

/* a record's bytes at position pos, len of them, in one piece */
static const void *record_at(bpf_ring_t *r, unsigned long pos, size_t len)
{
	size_t off = pos & (r->size - 1), first = r->size - off;

	if (len <= first)
		return r->data + off;
	if (len > r->wrapped_cap) {
		unsigned char *p = realloc(r->wrapped, len);

		if (!p)
			return NULL;
		r->wrapped = p;
		r->wrapped_cap = len;
	}
	memcpy(r->wrapped, r->data + off, first);
	memcpy(r->wrapped + first, r->data, len - first);
	return r->wrapped;
}

int bpf_ring_consume(bpf_ring_t *r)
{
	unsigned long cons = __atomic_load_n(r->consumer, __ATOMIC_RELAXED), start = cons, prod;
	int n = 0, stop = 0;

	prod = __atomic_load_n(r->producer, __ATOMIC_ACQUIRE);
	while (cons < prod && !stop) {
		const uint32_t *hdr = (const uint32_t *)(r->data + (cons & (r->size - 1)));
		uint32_t len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
		size_t bytes = (len & ~(RING_BUSY | RING_DISCARD)) + RING_HDR_BYTES;

		if (len & RING_BUSY)
			break;		/* not committed yet: the records after it wait for it */
		bytes = (bytes + 7) & ~(size_t)7;
		if (!(len & RING_DISCARD)) {
			size_t size = len & ~(RING_BUSY | RING_DISCARD);
			const void *rec = record_at(r, cons + RING_HDR_BYTES, size);

			if (!rec)
				return -1;	/* ENOMEM: the record stays for the next read */
			stop = r->fn(r->arg, rec, size);
			n++;
		}
		cons += bytes;
		/* the record's bytes free for the producer at once, as each is read */
		__atomic_store_n(r->consumer, cons, __ATOMIC_RELEASE);
		/*
		 * More may have come meanwhile: read it too, but no more than a
		 * ring's worth in one call, so that a producer as fast as this
		 * reader (a fork storm) cannot keep the caller here for ever.
		 */
		if (cons >= prod && cons - start < r->size)
			prod = __atomic_load_n(r->producer, __ATOMIC_ACQUIRE);
	}
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

void bpf_ring_close(bpf_ring_t *r)
{
	if (!r)
		return;
	if (r->consumer)
		munmap(r->consumer, r->page);
	if (r->producer)
		munmap((void *)r->producer, r->page + r->size);
	free(r->wrapped);
	free(r);
}
