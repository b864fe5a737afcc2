/*
 * bpf_ring.h: the reader of a BPF ring buffer (BPF_MAP_TYPE_RINGBUF), for
 * the ebpf backend (feed/feed_bpf.c) and the task iterator's walk
 * (sources/iter.c).
 *
 * libbpf's reader maps the ring's data for as long as the ring is open,
 * twice, one copy after the other, so that a record that wraps at the end
 * reads as one piece: the kernel maps every page of a mapping at once
 * (remap_vmalloc_range()), so 2 MiB of RSS for a ring of 1 MiB, whether it
 * holds anything or not.  This one maps the bytes a read has to read, and
 * keeps them mapped for the next reads only up to a bound of the caller's:
 * between reads, the two positions' pages and at most that are resident.
 */
#ifndef VMON_BPF_RING_H
#define VMON_BPF_RING_H

#include <stddef.h>

typedef struct bpf_ring bpf_ring_t;

/*
 * called for each record, in the order written: its bytes, valid during
 * the call only (the read's window may be unmapped after it); non-zero
 * stops the read there
 */
typedef int (*bpf_ring_record_fn)(void *arg, const void *data, size_t size);

/*
 * the ring of map_fd (size bytes of data) opened, with an fd of its own;
 * keep: a read of at most that many bytes keeps its window mapped for the
 * reads after (keep rounded up to pages, and a page more, resident between
 * reads; 0: none kept): NULL with errno.  One reader at a time: a read
 * moves the consumer's position and the kept window.
 */
bpf_ring_t *bpf_ring_open(int map_fd, size_t size, size_t keep, bpf_ring_record_fn fn, void *arg);
/*
 * every record committed so far, and those committed while it reads, up to
 * a ring's worth of bytes in all: how many were read, or -1 with errno
 * when none was.  A record that says it runs past the producer's position
 * (EPROTO) stays, and every read fails there from then on.
 */
int bpf_ring_consume(bpf_ring_t *ring);
/*
 * every record written so far dropped unread (the producer's position
 * taken as the reader's): for a writer that is done, whose records are
 * not wanted, without bringing their pages in
 */
void bpf_ring_skip(bpf_ring_t *ring);
/* the bytes written and not yet read (committed or not) */
size_t bpf_ring_waiting(const bpf_ring_t *ring);
/* how many windows of the data its reads have mapped so far (each an mmap(): what keep saves) */
unsigned long bpf_ring_windows(const bpf_ring_t *ring);
void bpf_ring_close(bpf_ring_t *ring);

#endif
