/*
 * test_bpf_ring.c: the ring buffer reader (libvmon/util/bpf_ring.c) against
 * a ring this test writes itself, laid out as the kernel lays out a
 * BPF_MAP_TYPE_RINGBUF for user space (a consumer page, a producer page, the
 * data, the data again) in a memfd: records in order, a record not yet
 * committed (BUSY) and those after it, a discarded one, one that wraps at
 * the data's end, a reader that stops, a producer that writes as fast as
 * it is read, and a producer whose position is past what it wrote; and
 * between reads, the reader maps the two positions' pages and no more of
 * the data than it was told to keep.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/bpf_ring.h"

#define HDR_BYTES	8
#define BUSY		(1u << 31)
#define DISCARD		(1u << 30)

/* the producer's side: what the kernel would do, and what the reader handed back */
struct fake_ring {
	int		fd;
	size_t		page, size;
	unsigned char	*map;		/* the whole memfd, read and write */
	unsigned long	*consumer, *producer;
	unsigned char	*data;		/* and its copy, size bytes on */
	bpf_ring_t	*ring;
	/* the records read, in order: their first byte and size */
	int		got[4096];
	size_t		got_size[4096];
	int		got_nr;
	int		stop_after;	/* the callback stops the read after this many (0: never) */
	int		refill;		/* records the callback writes as it reads (a producer as fast) */
};

static void produce_more(struct fake_ring *f);

static int on_record(void *arg, const void *data, size_t size)
{
	struct fake_ring *f = arg;
	const unsigned char *b = data;

	assert_true(f->got_nr < 4096);
	/* every byte of a record is its tag: a record read in pieces or from the wrong place shows */
	for (size_t i = 0; i < size; i++)
		assert_int_equal(b[i], b[0]);
	f->got[f->got_nr] = b[0];
	f->got_size[f->got_nr++] = size;
	if (f->refill > 0)
		produce_more(f);
	return f->stop_after && f->got_nr >= f->stop_after;
}

/* a fake ring of size bytes of data, its reader keeping keep bytes of it mapped between reads */
static void fake_open_keep(struct fake_ring *f, size_t size, size_t keep)
{
	memset(f, 0, sizeof(*f));
	f->page = (size_t)sysconf(_SC_PAGESIZE);
	f->size = size;
	f->fd = memfd_create("test_bpf_ring", MFD_CLOEXEC);
	assert_true(f->fd >= 0);
	assert_int_equal(ftruncate(f->fd, (off_t)(2 * f->page + 2 * size)), 0);
	f->map = mmap(NULL, 2 * f->page + 2 * size, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, 0);
	assert_true(f->map != MAP_FAILED);
	f->consumer = (unsigned long *)f->map;
	f->producer = (unsigned long *)(f->map + f->page);
	f->data = f->map + 2 * f->page;
	f->ring = bpf_ring_open(f->fd, size, keep, on_record, f);
	assert_non_null(f->ring);
}

static void fake_open(struct fake_ring *f, size_t size)
{
	fake_open_keep(f, size, 0);
}

static void fake_close(struct fake_ring *f)
{
	bpf_ring_close(f->ring);
	munmap(f->map, 2 * f->page + 2 * f->size);
	close(f->fd);
}

/* byte i of the data (a position, wrapped), written in both copies, as the kernel's one page is both */
static void put(struct fake_ring *f, unsigned long pos, unsigned char byte)
{
	f->data[pos & (f->size - 1)] = byte;
	f->data[f->size + (pos & (f->size - 1))] = byte;
}

/* a record of len bytes, each tag, at the producer's position, with flags in its header; its position */
static unsigned long produce(struct fake_ring *f, int tag, uint32_t len, uint32_t flags)
{
	unsigned long pos = *f->producer;
	size_t total = (HDR_BYTES + len + 7) & ~(size_t)7;
	uint32_t hdr[2] = { len | flags, 0 };

	assert_true(pos + total - *f->consumer <= f->size);	/* the kernel never overwrites what is unread */
	for (size_t i = 0; i < HDR_BYTES; i++)
		put(f, pos + i, ((unsigned char *)hdr)[i]);
	for (size_t i = 0; i < len; i++)
		put(f, pos + HDR_BYTES + i, (unsigned char)tag);
	__atomic_store_n(f->producer, pos + total, __ATOMIC_RELEASE);
	return pos;
}

/* the header of the record at pos, committed (its BUSY bit cleared) */
static void commit(struct fake_ring *f, unsigned long pos)
{
	uint32_t *hdr = (uint32_t *)(f->data + (pos & (f->size - 1)));

	__atomic_store_n(hdr, *hdr & ~BUSY, __ATOMIC_RELEASE);
	hdr = (uint32_t *)(f->data + f->size + (pos & (f->size - 1)));
	__atomic_store_n(hdr, *hdr & ~BUSY, __ATOMIC_RELEASE);
}

/* the bytes of the memfd mapped in this process, other than the test's own mapping of it (/proc/self/maps) */
/*
 * The bytes the reader has mapped of the ring, its data's window's offset
 * in the map (0: none) and its end's (if end is not NULL).  A memfd lets a mapping run past its end where
 * the kernel's ring refuses one past the data's second copy (EINVAL): no
 * mapping may.
 */
static size_t reader_mapped_at(const struct fake_ring *f, unsigned long *window, unsigned long *end)
{
	FILE *maps = fopen("/proc/self/maps", "re");
	char line[512];
	size_t bytes = 0;

	assert_non_null(maps);
	*window = 0;
	while (fgets(line, sizeof(line), maps)) {
		unsigned long from, to, off;

		if (!strstr(line, "memfd:test_bpf_ring") ||
		    sscanf(line, "%lx-%lx %*s %lx", &from, &to, &off) != 3 ||
		    from == (unsigned long)(uintptr_t)f->map)
			continue;
		assert_true(off + (to - from) <= 2 * f->page + 2 * f->size);
		/* (a window from the data's start, placed just after the producer's page, is one mapping with it) */
		if (off + (to - from) > 2 * f->page) {
			assert_int_equal(*window, 0);	/* one window at most */
			*window = off > 2 * f->page ? off : 2 * f->page;
			if (end)
				*end = off + (to - from);
		}
		bytes += to - from;
	}
	fclose(maps);
	return bytes;
}

static size_t reader_mapped(const struct fake_ring *f)
{
	unsigned long window;

	return reader_mapped_at(f, &window, NULL);
}

static void produce_more(struct fake_ring *f)
{
	/* as much as was read comes again, while the reader reads */
	if (*f->producer - *f->consumer + 64 <= f->size) {
		produce(f, 0x55, 40, 0);
		f->refill--;
	}
}

static void test_in_order(void **state)
{
	struct fake_ring f;

	(void)state;
	fake_open(&f, 4 * (size_t)sysconf(_SC_PAGESIZE));
	assert_int_equal(bpf_ring_consume(f.ring), 0);	/* empty */
	for (int i = 1; i <= 10; i++)
		produce(&f, i, (uint32_t)(i * 13), 0);
	/* what waits: every record's bytes, its header and rounding included */
	assert_int_equal(bpf_ring_waiting(f.ring), *f.producer);
	assert_int_equal(reader_mapped(&f), 2 * f.page);	/* the positions' pages, not the data */
	assert_int_equal(bpf_ring_consume(f.ring), 10);
	assert_int_equal(reader_mapped(&f), 2 * f.page);	/* nor after a read */
	assert_int_equal(bpf_ring_waiting(f.ring), 0);
	for (int i = 1; i <= 10; i++) {
		assert_int_equal(f.got[i - 1], i);
		assert_int_equal(f.got_size[i - 1], i * 13);
	}
	/* the bytes handed back to the producer: all of them */
	assert_int_equal(*f.consumer, *f.producer);
	assert_int_equal(bpf_ring_consume(f.ring), 0);
	fake_close(&f);
}

static void test_busy_holds_the_rest(void **state)
{
	struct fake_ring f;
	unsigned long busy;

	(void)state;
	fake_open(&f, 4 * (size_t)sysconf(_SC_PAGESIZE));
	produce(&f, 1, 16, 0);
	busy = produce(&f, 2, 24, BUSY);
	produce(&f, 3, 8, 0);
	assert_int_equal(bpf_ring_consume(f.ring), 1);
	assert_int_equal(*f.consumer, busy);	/* stopped before the uncommitted one */
	assert_int_equal(bpf_ring_waiting(f.ring), *f.producer - busy);	/* which still waits */
	assert_int_equal(bpf_ring_consume(f.ring), 0);
	commit(&f, busy);
	assert_int_equal(bpf_ring_consume(f.ring), 2);
	assert_int_equal(f.got_nr, 3);
	assert_int_equal(f.got[1], 2);
	assert_int_equal(f.got[2], 3);
	assert_int_equal(*f.consumer, *f.producer);
	fake_close(&f);
}

static void test_discarded_skipped(void **state)
{
	struct fake_ring f;

	(void)state;
	fake_open(&f, 4 * (size_t)sysconf(_SC_PAGESIZE));
	produce(&f, 1, 16, 0);
	produce(&f, 2, 100, DISCARD);
	produce(&f, 3, 16, 0);
	assert_int_equal(bpf_ring_consume(f.ring), 2);
	assert_int_equal(f.got[0], 1);
	assert_int_equal(f.got[1], 3);
	assert_int_equal(*f.consumer, *f.producer);	/* its bytes freed too */
	fake_close(&f);
}

static void test_wraps_whole(void **state)
{
	struct fake_ring f;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	(void)state;
	fake_open(&f, page);
	/* fill most of the ring, read it, so that the next records cross the data's end */
	for (int i = 0; i < 5; i++)
		produce(&f, 10 + i, (uint32_t)(page / 8), 0);
	assert_int_equal(bpf_ring_consume(f.ring), 5);
	/* one whose header is before the end and whose bytes go past it; then one that starts after the wrap */
	produce(&f, 0x77, (uint32_t)(page / 2), 0);
	produce(&f, 0x78, 32, 0);
	assert_true((*f.producer & ~(unsigned long)(page - 1)) != (*f.consumer & ~(unsigned long)(page - 1)));
	assert_int_equal(bpf_ring_consume(f.ring), 2);
	assert_int_equal(f.got[5], 0x77);
	assert_int_equal(f.got_size[5], page / 2);	/* on_record() checked every byte */
	assert_int_equal(f.got[6], 0x78);
	fake_close(&f);
}

/* a producer's position past a ring's worth of unread bytes: a clear error, not a read beyond the data */
static void test_producer_past_ring(void **state)
{
	struct fake_ring f;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	(void)state;
	fake_open(&f, page);
	produce(&f, 1, 16, 0);
	assert_int_equal(bpf_ring_consume(f.ring), 1);
	/* a header whose length runs past the producer's position */
	produce(&f, 2, 16, 0);
	*(uint32_t *)(f.data + (*f.consumer & (page - 1))) = (uint32_t)page;
	*(uint32_t *)(f.data + page + (*f.consumer & (page - 1))) = (uint32_t)page;
	errno = 0;
	assert_int_equal(bpf_ring_consume(f.ring), -1);
	assert_int_equal(errno, EPROTO);
	/* and a producer's position more than a ring's worth on */
	__atomic_store_n(f.producer, *f.consumer + 3 * page, __ATOMIC_RELEASE);
	assert_int_equal(bpf_ring_consume(f.ring), -1);
	assert_int_equal(reader_mapped(&f), 2 * f.page);
	fake_close(&f);
}

/*
 * A reader told to keep a page (so a read of up to a page from anywhere in
 * one: two pages kept): the records of many reads, across its window's end
 * and the data's, in order and whole; between reads its window stays
 * mapped, two pages and no more, and most reads find their records in the
 * one the reads before mapped.  A larger read's window goes after it.
 */
static void test_window_kept(void **state)
{
	struct fake_ring f;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned long window;
	int tag = 0;

	(void)state;
	fake_open_keep(&f, 4 * page, page);
	for (int read = 0; read < 200; read++) {
		int made = 1 + read % 7;

		for (int i = 0; i < made; i++, tag++)
			produce(&f, tag & 0xff, (uint32_t)(24 + (tag * 37) % 300), 0);
		assert_int_equal(bpf_ring_consume(f.ring), made);
		assert_int_equal(reader_mapped_at(&f, &window, NULL), 4 * page);
		assert_true(window != 0);
	}
	/* about 200 bytes a record, 4 a read: a window of two pages lasts several reads */
	assert_true(bpf_ring_windows(f.ring) < 200 / 3);
	for (int i = 0; i < tag; i++) {
		assert_int_equal(f.got[i], i & 0xff);
		assert_int_equal(f.got_size[i], 24 + (i * 37) % 300);
	}
	assert_true(*f.consumer > 8 * page);	/* round the data twice and more */
	/* a read larger than two pages: its window goes after it */
	for (int i = 0; i < 60; i++, tag++)
		produce(&f, tag & 0xff, 200, 0);
	assert_int_equal(bpf_ring_consume(f.ring), 60);
	assert_int_equal(reader_mapped(&f), 2 * page);
	fake_close(&f);
}

/*
 * A reader told to keep more than the ring: its window runs from the
 * consumer's page to the end of the data's second copy and no further
 * (the first, from the data's start, is both copies; the next ones start
 * in the data's last page, where the reads that passed the last one's end
 * are), and the records across the data's end read whole from the copy.
 */
static void test_window_kept_to_copy_end(void **state)
{
	struct fake_ring f;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned long window, end;
	int tag = 0;

	(void)state;
	fake_open_keep(&f, 4 * page, 16 * page);
	/* round the data three times and more, a record of 608 bytes a read */
	for (; *f.consumer < 13 * page; tag++) {
		size_t was;

		produce(&f, tag & 0xff, 600, 0);
		assert_int_equal(bpf_ring_consume(f.ring), 1);
		was = reader_mapped_at(&f, &window, &end);
		assert_true(window != 0);
		assert_int_equal(end, 2 * page + 2 * f.size);
		assert_true(was >= 2 * page + 4 * page);	/* the data's last page to the copy's end, or more */
	}
	/* (from the data's start, to 7 pages on, to 11: each window 4 pages or more of reads) */
	assert_int_equal(bpf_ring_windows(f.ring), 3);
	for (int i = 0; i < tag; i++) {
		assert_int_equal(f.got[i], i & 0xff);
		assert_int_equal(f.got_size[i], 600);
	}
	fake_close(&f);
}

static void test_reader_stops(void **state)
{
	struct fake_ring f;

	(void)state;
	fake_open(&f, 4 * (size_t)sysconf(_SC_PAGESIZE));
	for (int i = 1; i <= 6; i++)
		produce(&f, i, 8, 0);
	f.stop_after = 2;
	assert_int_equal(bpf_ring_consume(f.ring), 2);
	f.stop_after = 0;
	/* the records after the stop wait for the next read */
	assert_int_equal(bpf_ring_consume(f.ring), 4);
	assert_int_equal(f.got[2], 3);
	fake_close(&f);
}

static void test_fast_producer_bounded(void **state)
{
	struct fake_ring f;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int n;

	(void)state;
	fake_open(&f, page);
	produce(&f, 0x55, 40, 0);
	/* each record read brings another, far more than fit in a ring: one read takes a ring's worth, not all */
	f.refill = 100000;
	n = bpf_ring_consume(f.ring);
	assert_true(n > 0);
	assert_true((size_t)n * 48 <= page + 48);
	assert_true(f.refill > 0);
	fake_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_order),
		cmocka_unit_test(test_busy_holds_the_rest),
		cmocka_unit_test(test_discarded_skipped),
		cmocka_unit_test(test_wraps_whole),
		cmocka_unit_test(test_producer_past_ring),
		cmocka_unit_test(test_window_kept),
		cmocka_unit_test(test_window_kept_to_copy_end),
		cmocka_unit_test(test_reader_stops),
		cmocka_unit_test(test_fast_producer_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
