/*
 * feed_bpf.c: the ebpf backend: bpf/feed.bpf.c, embedded as a light
 * skeleton, on the sched_process_fork, _exec and _exit tracepoints, one BPF
 * ring buffer read by bpf_ring.c.
 *
 * Reach: every process of the system.  It needs the kernel's BTF (the
 * kernel relocates the programs to its own types as it loads them: CO-RE in
 * BPF_PROG_LOAD, Linux 5.17), and CAP_BPF with CAP_PERFMON (or
 * CAP_SYS_ADMIN) to load.  No kprobes and no fentry: locked-down kernels
 * refuse those.
 *
 * What it fills: everything vmon_event_t has.  The start time is the
 * kernel's own (task->start_boottime, the value /proc shows, so identity is
 * exact); an exec carries the path given to execve(2) (up to
 * FEED_FILENAME_MAX - 2 bytes) and the arguments (up to VMON_EVENT_ARGS_MAX
 * bytes, then args_truncated); an exit carries the status, the CPU times
 * (not scaled as /proc scales them: they can differ by a tick or so), the
 * faults and the peak RSS.  A time namespace's offset is not applied.
 *
 * When the reader is woken adapts to the rate (bpf/feed.bpf.c,
 * submit_flags()): a record after a quiet spell at once, records that
 * follow it within FEED_WAKEUP_INTERVAL_MS batched, so that a poll loop
 * hears of a rare exit promptly and a storm costs it at most 1000 /
 * FEED_WAKEUP_INTERVAL_MS wakeups a second; bpf_due_ms() gives the
 * deadline of a record that was not woken for.
 *
 * The ring is sized by need (unless the caller asked for a size): the
 * programs write to the ring user space put in the slot of their rings[]
 * map, BPF_RING_FIRST bytes at first.  A drain that finds the programs
 * writing faster than the ring holds BPF_RING_LATENCY_NS of, more than a
 * quarter of it waiting, or events lost, puts one four times its size in
 * the slot, or as large as the rate needs if that is more (up to
 * BPF_RING_MOST); after BPF_RING_CALM_NS in which no drain found more
 * waiting than a quarter of BPF_RING_LEAST, nor a rate that needs more than
 * BPF_RING_LEAST, a ring of that size.  The ring
 * taken out is still read, before the new one at each drain, until it has
 * been out BPF_RING_RETIRE_NS and is empty: a program that found it just
 * before the swap writes there (the kernel keeps it alive for that).  The
 * caller polls an epoll fd over both.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "util/bpf_ring.h"
#include "feed/feed.h"
#include "util/clock.h"
#include "util/light_skel.h"
#include "bpf/feed.h"
/* bpftool's generated code subtracts void pointers (a GNU extension) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpointer-arith"
#include "bpf/feed.lskel.h"
#pragma GCC diagnostic pop

/*
 * A ring's data is the kernel's memory; the caller maps of it only what
 * its reads take, and keeps BPF_RING_KEEP of that (bpf_ring.c).  512 KiB holds the lives of about 1,250
 * processes (a fork and an exit take 112 bytes each with the ring's header,
 * an exec 150 and more with its path and arguments): 170 ms of an 8,000/s
 * storm.  A pass reads the ring between nodes once it is an eighth full
 * (bpf_behind(), feed_keep_up()), so a long sample is no gap; but a reader
 * the scheduler keeps off a busy CPU reads nothing at all: a first ring of
 * 256 KiB that grew only when a read found it a quarter full lost events to
 * vtop --events beside another test's storms under make -j2 on two cores
 * (most likely test_keep_up_in_pass's: 1,500 lives with 4,000 bytes of
 * arguments, 6.5 MB a second).  So the ring also grows on the rate, before
 * it fills: the records' times say how fast the programs write (the
 * reader's would not: one kept away sees a burst), and a drain that finds a
 * quarter of a second of that rate more than the ring holds puts in one
 * four times larger, or one that holds it if that is more.  At least four
 * times: one swap at a time, so a low estimate early in a storm would hold
 * for the 10 s until the next.  The reader is woken at each sixteenth of the
 * ring, so that it measures the rate early: at 6.5 MB/s, 512 KiB leave it
 * 80 ms to grow the ring, 2 MiB then 300 ms (1 MiB lost no less beside
 * storms on a busy machine: tests/bench/README.md, issue 14).  A reader found behind by a
 * quarter of the ring, or losing events, gets one four times larger too; up
 * to 4 MiB; 30 calm seconds (the reader never behind by 128 KiB, the rate
 * under 2 MiB/s) bring it back to 512 KiB, the first ring's size: after a
 * storm, vtop is back to its size within a minute.  Not to less: a ring
 * that went through a storm meets the next one as a new ring does, and a
 * first ring of 256 KiB lost events to a storm beside a CPU hog where one
 * of 512 KiB lost none (tests/bench/README.md, issue 14).
 */
#define BPF_RING_LEAST		(512u << 10)
#define BPF_RING_FIRST		BPF_RING_LEAST
#define BPF_RING_MOST		(4u << 20)
#define BPF_RING_GROWTH		4
#define BPF_RING_RETIRE_NS	(10 * 1000000000ull)
#define BPF_RING_CALM_NS	(30 * 1000000000ull)
#define BPF_RING_WAKE_PART	16	/* the reader is woken when this part of the ring waits */
#define BPF_RING_LATENCY_NS	(250 * 1000000ull)	/* what the ring holds of the rate measured */
#define BPF_RATE_WINDOW_NS	(100 * 1000000ull)
/*
 * The ring's data a reader keeps mapped between reads (util/bpf_ring.c: a
 * read of at most this many bytes, wherever it starts, keeps its window):
 * a reader woken at each few records maps the ring once in 32 KiB of them,
 * not at each read (a mapping and its unmapping at each read cost about
 * 1 us an event at 1,000 lives a second: feed_bench), and the rest of the
 * ring is not resident.  32 KiB: what a sixteenth of the first ring wakes
 * the reader at, so that the reads of a steady rate below a storm's keep
 * theirs; a larger ring's wakeups read more, and map once a read.
 */
#define BPF_RING_KEEP		(32u << 10)
#define BPF_RATE_SPAN_LEAST_NS	(FEED_WAKEUP_INTERVAL_MS * 1000000ull)
#define BPF_BYTES_PER_EVENT	160	/* a fork or an exit takes 128 bytes in the ring, an exec more */

/*
 * A ring the feed made and reads.  Its fd is closed once its reader is
 * open and it is in the epoll set: the reader's own fd (which maps each
 * read's window) and its mappings hold the map and keep it in the set, so
 * a ring costs the caller's fd limit one fd, two while one is retiring.
 */
typedef struct feed_ring {
	bpf_ring_t		*reader;	/* NULL: none */
	size_t			size;
	unsigned long long	out_ns;		/* CLOCK_BOOTTIME it was taken out of the slot */
} feed_ring_t;

typedef struct bpf_feed {
	struct feed_bpf		*skel;
	unsigned long long	rate_from_ns;	/* the first record's time in the rate's window */
	unsigned long long	rate_last_ns;	/* and the last one's */
	size_t			rate_bytes;	/* ring bytes of the window's records */
	size_t			read_bytes;	/* ring bytes read during a drain */
	feed_ring_t		ring;		/* in the slot */
	feed_ring_t		retiring;	/* taken out of it, read until it is empty */
	size_t			least, most;	/* the sizes the ring takes: equal if the caller chose one */
	unsigned long long	busy_ns;	/* the last drain that found more than least / 4 waiting */
	int			epoll_fd;	/* over both rings' fds: what the caller polls */
	feed_t			*feed;
	unsigned long long	lost_seen;	/* the sum of skel->bss->lost[] at the last drain */
	unsigned long long	drained_ns;	/* CLOCK_BOOTTIME when the last drain began */
	long			page_kb;
	int			pushed;		/* during a drain */
} bpf_feed_t;

static size_t ring_size(size_t want)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), size = page;

	/* a power of two, at least a page */
	while (size < want && size < ((size_t)1 << 30))
		size <<= 1;
	return size;
}

/*
 * The rate the programs write at, by the records' own times (not the
 * reader's: a reader kept away sees a burst where there was a steady
 * stream): the ring bytes of the records of a window of at most
 * BPF_RATE_WINDOW_NS, counted as the ring counts them (a header of 8 bytes,
 * the whole rounded up to 8).
 */
static void rate_count(bpf_feed_t *b, unsigned long long time_ns, size_t size)
{
	size_t bytes = (size + 8 + 7) & ~(size_t)7;

	b->read_bytes += bytes;
	if (time_ns > b->rate_from_ns + BPF_RATE_WINDOW_NS) {
		b->rate_from_ns = time_ns;
		b->rate_bytes = 0;
	}
	if (time_ns > b->rate_last_ns)
		b->rate_last_ns = time_ns;
	b->rate_bytes += bytes;
}

/*
 * The ring that rate needs to hold BPF_RING_LATENCY_NS of it, for a reader
 * kept off the CPU that long; 0 for a window of less than gate bytes (a
 * quarter of the ring, to grow it; of the least ring, to keep a grown one).
 * A burst is no storm: a parallel build's few execs with long
 * argument lists (a wakeup's 32 KiB within 5 ms) would otherwise read as
 * 1.6 MB a quarter of a second and keep a 2 MiB ring for nothing; a storm
 * that needs more than the ring writes a quarter of it well before the
 * reader could be kept away (20 ms at 6.5 MB/s).  A window shorter than
 * BPF_RATE_SPAN_LEAST_NS counts as that long.  The early estimate matters:
 * the next swap waits until the ring taken out is let go.
 */
static size_t rate_need(const bpf_feed_t *b, size_t gate)
{
	unsigned long long span = b->rate_last_ns - b->rate_from_ns;

	if (!b->read_bytes || b->rate_bytes < gate)
		return 0;
	if (span < BPF_RATE_SPAN_LEAST_NS)
		span = BPF_RATE_SPAN_LEAST_NS;
	return (size_t)(b->rate_bytes * BPF_RING_LATENCY_NS / span);
}

static int on_record(void *ctx, const void *data, size_t size)
{
	bpf_feed_t *b = ctx;
	const struct feed_rec *r = data;
	feed_event_t *e;
	vmon_event_kind_t kind;

	if (size < sizeof(*r))
		return 0;
	rate_count(b, r->time_ns, size);
	switch (r->kind) {
	case FEED_REC_FORK:
		kind = VMON_EVENT_FORK;
		break;
	case FEED_REC_EXEC:
		kind = VMON_EVENT_EXEC;
		break;
	case FEED_REC_EXIT:
		kind = VMON_EVENT_EXIT;
		break;
	default:
		return 0;
	}
	e = feed_push(b->feed, kind);
	if (!e)
		return 0;
	e->ev.time_ns = r->time_ns;
	e->ev.pid = (int)r->pid;
	e->ev.tid = (int)r->tid;
	e->ev.ppid = (int)r->ppid;
	e->ev.uid = r->uid;
	e->ev.start = feed_ns_to_ticks(b->feed, r->start_ns);
	memcpy(e->ev.comm, r->comm, sizeof(e->ev.comm));
	e->ev.comm[sizeof(e->ev.comm) - 1] = '\0';
	e->ev.has = VMON_EVENT_HAS_PPID | VMON_EVENT_HAS_START | VMON_EVENT_HAS_UID | VMON_EVENT_HAS_COMM;

	if (kind == VMON_EVENT_EXEC) {
		const char *path = (const char *)data + sizeof(*r);
		size_t flen = r->exec.filename_len, alen = r->exec.args_len;

		if (sizeof(*r) + flen + 1 + alen > size || flen >= FEED_FILENAME_MAX || alen >= FEED_ARGS_MAX)
			return 0;	/* malformed: keep what the header says */
		e->ev.args_truncated = r->exec.truncated != 0;
		if (feed_push_exec_data(b->feed, e, path, strnlen(path, flen), path + flen + 1, alen) == 0)
			e->ev.has |= VMON_EVENT_HAS_FILENAME | VMON_EVENT_HAS_ARGS;
	} else if (kind == VMON_EVENT_EXIT) {
		e->ev.exit_status = r->exit.status;
		e->ev.utime = feed_ns_to_ticks(b->feed, r->exit.utime_ns);
		e->ev.stime = feed_ns_to_ticks(b->feed, r->exit.stime_ns);
		e->ev.maxrss_kb = r->exit.maxrss_pages * (unsigned long long)b->page_kb;
		e->ev.minflt = r->exit.minflt;
		e->ev.majflt = r->exit.majflt;
		e->ev.has |= VMON_EVENT_HAS_EXIT_STATUS | VMON_EVENT_HAS_TIMES | VMON_EVENT_HAS_MAXRSS |
			     VMON_EVENT_HAS_FAULTS;
	}
	b->pushed++;
	return 0;
}

/* the kernel frees the ring once no program holds it either */
static void ring_close(feed_ring_t *r)
{
	bpf_ring_close(r->reader);
	r->reader = NULL;
	r->size = 0;
}

static void bpf_close(feed_t *feed)
{
	bpf_feed_t *b = feed_priv(feed);

	if (!b)
		return;
	feed_bpf__destroy(b->skel);
	ring_close(&b->ring);
	ring_close(&b->retiring);
	if (b->epoll_fd >= 0)
		close(b->epoll_fd);
	free(b);
	feed_set_priv(feed, NULL);
}

/*
 * A new ring of size bytes put in the programs' slot; the one there before,
 * if any, retiring.  0, or an errno with nothing changed.
 */
static int ring_put(bpf_feed_t *b, size_t size)
{
	struct epoll_event ev = { .events = EPOLLIN };
	feed_ring_t r = { .reader = NULL, .size = size };
	__u32 slot = 0;
	int fd, err;

	fd = skel_map_create(BPF_MAP_TYPE_RINGBUF, "vmon_ring", 0, 0, (__u32)size);
	if (fd < 0)
		return errno;
	r.reader = bpf_ring_open(fd, size, BPF_RING_KEEP, on_record, b);
	ev.data.fd = fd;
	if (!r.reader || epoll_ctl(b->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0)
		goto fail;
	/* wake the reader at each sixteenth: before the new ring, not to wait for a larger one's */
	if (size < b->ring.size || !b->ring.size)
		b->skel->bss->wakeup_bytes = size / BPF_RING_WAKE_PART;
	if (skel_map_update_elem(b->skel->maps.rings.map_fd, &slot, &fd, BPF_ANY) < 0)
		goto fail;
	close(fd);
	b->skel->bss->wakeup_bytes = size / BPF_RING_WAKE_PART;
	b->retiring = b->ring;
	b->retiring.out_ns = vclock_ns(CLOCK_BOOTTIME);
	b->ring = r;
	feed_buffer_resized(b->feed, size, size / BPF_BYTES_PER_EVENT);
	return 0;

fail:
	err = errno;
	if (b->ring.size)
		b->skel->bss->wakeup_bytes = b->ring.size / BPF_RING_WAKE_PART;
	ring_close(&r);
	close(fd);
	return err;
}

/*
 * After a drain: a larger ring if the programs write faster than the ring
 * holds BPF_RING_LATENCY_NS of (before anything is lost), if the reader fell
 * behind by a quarter of it, or if events were lost: four times larger, or
 * as the rate needs if that is more; the least size once it has kept up for
 * a while.  One swap at a time: not
 * while the last ring taken out is still read.
 */
static void ring_fit(bpf_feed_t *b, size_t waiting, bool lost)
{
	unsigned long long now = vclock_ns(CLOCK_BOOTTIME);
	size_t size = b->ring.size, need = rate_need(b, size / 4);

	/*
	 * Busy, for the calm that brings a grown ring back: a rate the least
	 * ring could not hold, gated by the least ring's quarter, not the grown
	 * ring's: by that, a steady 3 MiB/s read as calm in a ring of 2 MiB,
	 * which went back to 512 KiB after 30 s, to be grown again.
	 */
	if (waiting > b->least / 4 || rate_need(b, b->least / 4) > b->least)
		b->busy_ns = now;
	if (b->retiring.reader || b->least == b->most)
		return;
	if ((lost || waiting > size / 4 || need > size) && size < b->most) {
		/* at least four times larger: the estimate early in a storm is low, and the next swap waits */
		size *= BPF_RING_GROWTH;
		if (need > size)
			size = ring_size(need);
		if (size > b->most)
			size = b->most;
		b->busy_ns = now;	/* a loss with little waiting counts as busy too */
	} else if (size > b->least && now - b->busy_ns > BPF_RING_CALM_NS) {
		size = b->least;
	} else {
		return;
	}
	/* without memory for it, the ring it has; a kernel that wants one size for all, that one */
	if (ring_put(b, size) == EINVAL)
		b->least = b->most = b->ring.size;
}

/* what one load of the programs depends on */
struct feed_load {
	bpf_feed_t	*b;		/* its skel: loaded, or NULL */
	bool		group_dead;	/* sched_process_exit's third argument is read */
};

/*
 * A light_skel_try_t: the programs loaded (their ring is put in later).
 * Whether sched_process_exit passes group_dead (Linux 6.11 and later: its
 * prototype has a third argument) is not asked of the kernel's BTF, which
 * would take parsing all of it: the verifier refuses a program that reads
 * an argument the tracepoint does not have, so bpf_open() tries with it
 * first, and again without it only when the verifier refused.
 */
static int load_programs(void *arg, char **log)
{
	struct feed_load *l = arg;
	bpf_feed_t *b = l->b;
	int err;

	feed_bpf__destroy(b->skel);
	b->skel = feed_bpf__open();
	if (!b->skel)
		return errno;
	b->skel->rodata->has_group_dead = l->group_dead;
	b->skel->rodata->wakeup_interval_ns = FEED_WAKEUP_INTERVAL_MS * 1000000ull;
	if (log)
		light_skel_log_on(&b->skel->ctx, log);
	err = feed_bpf__load(b->skel) < 0 ? errno : 0;
	if (err) {
		feed_bpf__destroy(b->skel);
		b->skel = NULL;
	}
	return err;
}

static int bpf_open(vmon_t *vmon, feed_t *feed, size_t *buffer_bytes, size_t *capacity, char *why, size_t why_size)
{
	char said[160] = "";
	struct feed_load load;
	int low_fds[3] = { -1, -1, -1 };
	bpf_feed_t *b;
	int err;

	(void)vmon;
	if (access("/sys/kernel/btf/vmlinux", R_OK) < 0) {
		snprintf(why, why_size, "the kernel has no BTF (/sys/kernel/btf/vmlinux: %s), which CO-RE needs",
			 strerror(errno));
		return -1;
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		snprintf(why, why_size, "%s", strerror(errno));
		return -1;
	}
	feed_set_priv(feed, b);
	b->feed = feed;
	b->page_kb = sysconf(_SC_PAGESIZE) / 1024;
	b->least = *buffer_bytes ? ring_size(*buffer_bytes) : BPF_RING_LEAST;
	b->most = *buffer_bytes ? b->least : BPF_RING_MOST;
	b->busy_ns = vclock_ns(CLOCK_BOOTTIME);	/* the first calm spell counts from the start */
	b->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (b->epoll_fd < 0) {
		snprintf(why, why_size, "epoll_create1: %s", strerror(errno));
		goto fail;
	}

	light_skel_hold_low_fds(low_fds);
	load.b = b;
	load.group_dead = true;
	err = load_programs(&load, NULL);
	if (light_skel_refused(err))
		load.group_dead = false;	/* a kernel before 6.11, or a refusal the next tries say more of */
	if (err)
		err = light_skel_load(load_programs, &load, said, sizeof(said));
	if (err) {
		if (err == EPERM || (err == EACCES && !said[0]))
			snprintf(why, why_size, "loading the BPF programs was refused (%s): it needs CAP_BPF and CAP_PERFMON, or root",
				 strerror(err));
		else
			snprintf(why, why_size, "loading the BPF programs failed (%s)%s%s%s", strerror(err),
				 (err == EINVAL || err == E2BIG) && !said[0] ? " (this needs Linux 5.17 or later)" : "",
				 said[0] ? ": " : "", said);
		goto fail;
	}
	/*
	 * The first ring, before the programs run.  A kernel that wants the
	 * template's size for any ring in the slot (EINVAL) gets that size,
	 * and keeps it.
	 */
	err = ring_put(b, *buffer_bytes ? b->least : BPF_RING_FIRST);
	if (err == EINVAL) {
		b->least = b->most = FEED_RING_TEMPLATE_BYTES;
		err = ring_put(b, b->least);
	}
	if (err) {
		snprintf(why, why_size, "cannot make or map the BPF ring buffer: %s", strerror(err));
		goto fail;
	}
	if (feed_bpf__attach(b->skel) < 0) {
		snprintf(why, why_size, "attaching to the sched_process tracepoints failed: %s", strerror(errno));
		goto fail;
	}
	light_skel_release_low_fds(low_fds);
	*buffer_bytes = b->ring.size;
	*capacity = b->ring.size / BPF_BYTES_PER_EVENT;
	return 0;

fail:
	light_skel_release_low_fds(low_fds);
	bpf_close(feed);
	return -1;
}

static int bpf_drain(vmon_t *vmon, feed_t *feed)
{
	bpf_feed_t *b = feed_priv(feed);
	unsigned long long lost = 0;
	int r;

	size_t waiting;
	bool more_lost = false;

	(void)vmon;
	b->pushed = 0;
	b->read_bytes = 0;
	b->drained_ns = vclock_ns(CLOCK_BOOTTIME);
	/* the ring taken out first: what it holds was written before the new one's */
	r = b->retiring.reader ? bpf_ring_consume(b->retiring.reader) : 0;
	if (b->retiring.reader && r >= 0 && !bpf_ring_waiting(b->retiring.reader) &&
	    b->drained_ns - b->retiring.out_ns >= BPF_RING_RETIRE_NS)
		ring_close(&b->retiring);
	waiting = bpf_ring_waiting(b->ring.reader);
	if (r >= 0)
		r = bpf_ring_consume(b->ring.reader);
	for (size_t i = 0; i < sizeof(b->skel->bss->lost) / sizeof(b->skel->bss->lost[0]); i++)
		lost += b->skel->bss->lost[i];
	if (lost > b->lost_seen) {
		feed_lost(feed, lost - b->lost_seen);
		b->lost_seen = lost;
		more_lost = true;
	}
	if (r < 0)
		return -1;
	ring_fit(b, waiting, more_lost);
	return b->pushed;
}

/* a ring an eighth full, or the one taken out not yet read empty: read them in the pass */
static bool bpf_behind(const feed_t *feed)
{
	const bpf_feed_t *b = feed_priv(feed);

	return bpf_ring_waiting(b->ring.reader) >= b->ring.size / 8 ||
	       (b->retiring.reader && bpf_ring_waiting(b->retiring.reader));
}

static int bpf_fd(const feed_t *feed)
{
	const bpf_feed_t *b = feed_priv(feed);

	return b->epoll_fd;
}

/*
 * A record written since the last drain that woke no one (it came within
 * the interval of a wakeup) must be read by the end of that interval.
 */
static int bpf_due_ms(const feed_t *feed)
{
	const bpf_feed_t *b = feed_priv(feed);
	unsigned long long quiet = b->skel->bss->quiet_ns, woke = b->skel->bss->woke_ns, now, due;

	if (quiet < b->drained_ns || quiet < woke)
		return -1;	/* none, or a later record woke the reader for it */
	due = woke + FEED_WAKEUP_INTERVAL_MS * 1000000ull;
	now = vclock_ns(CLOCK_BOOTTIME);
	return now >= due ? 0 : (int)((due - now + 999999) / 1000000);
}

const feed_backend_t feed_bpf_backend = {
	.name	= "ebpf",
	.id	= VMON_FEED_EBPF,
	.open	= bpf_open,
	.drain	= bpf_drain,
	.fd	= bpf_fd,
	.due_ms	= bpf_due_ms,
	.behind	= bpf_behind,
	.close	= bpf_close,
};
