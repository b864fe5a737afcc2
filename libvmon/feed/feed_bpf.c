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
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "feed/bpf_ring.h"
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
 * 1 MiB: the lives of about 2,500 processes (a fork and an exit take 112
 * bytes each with the ring's header, an exec 150 and more with its path and arguments), a third of a
 * second of an 8,000/s storm with the reader woken at each eighth.  Its
 * data is mapped once (bpf_ring.c) and resident from the start: 1 MiB of
 * RSS, where libbpf's reader mapped it twice (16 MiB at the 8 MiB this was).
 */
#define BPF_DEFAULT_BUFFER	(1u << 20)
#define BPF_BYTES_PER_EVENT	160	/* a fork or an exit takes 128 bytes in the ring, an exec more */

typedef struct bpf_feed {
	struct feed_bpf		*skel;
	bpf_ring_t		*ring;
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

static int on_record(void *ctx, const void *data, size_t size)
{
	bpf_feed_t *b = ctx;
	const struct feed_rec *r = data;
	feed_event_t *e;
	vmon_event_kind_t kind;

	if (size < sizeof(*r))
		return 0;
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

static void bpf_close(feed_t *feed)
{
	bpf_feed_t *b = feed_priv(feed);

	if (!b)
		return;
	bpf_ring_close(b->ring);
	feed_bpf__destroy(b->skel);
	free(b);
	feed_set_priv(feed, NULL);
}

/* what one load of the programs depends on */
struct feed_load {
	bpf_feed_t	*b;		/* its skel: loaded, or NULL */
	size_t		size;		/* the ring's bytes */
	bool		group_dead;	/* sched_process_exit's third argument is read */
};

/*
 * A light_skel_try_t: the programs loaded, with the ring of size bytes.
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
	b->skel->rodata->wakeup_bytes = l->size / 8;
	b->skel->rodata->wakeup_interval_ns = FEED_WAKEUP_INTERVAL_MS * 1000000ull;
	b->skel->maps.events.max_entries = (__u32)l->size;
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
	size_t size;
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
	size = ring_size(*buffer_bytes ? *buffer_bytes : BPF_DEFAULT_BUFFER);
	*buffer_bytes = size;

	light_skel_hold_low_fds(low_fds);
	load.b = b;
	load.size = size;
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
	if (feed_bpf__attach(b->skel) < 0) {
		snprintf(why, why_size, "attaching to the sched_process tracepoints failed: %s", strerror(errno));
		goto fail;
	}
	light_skel_release_low_fds(low_fds);
	b->ring = bpf_ring_open(b->skel->maps.events.map_fd, size, on_record, b);
	if (!b->ring) {
		snprintf(why, why_size, "cannot map the BPF ring buffer: %s", strerror(errno));
		goto fail;
	}
	*capacity = size / BPF_BYTES_PER_EVENT;
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

	(void)vmon;
	b->pushed = 0;
	b->drained_ns = vclock_ns(CLOCK_BOOTTIME);
	r = bpf_ring_consume(b->ring);
	for (size_t i = 0; i < sizeof(b->skel->bss->lost) / sizeof(b->skel->bss->lost[0]); i++)
		lost += b->skel->bss->lost[i];
	if (lost > b->lost_seen) {
		feed_lost(feed, lost - b->lost_seen);
		b->lost_seen = lost;
	}
	if (r < 0)
		return -1;
	return b->pushed;
}

static int bpf_fd(const feed_t *feed)
{
	const bpf_feed_t *b = feed_priv(feed);

	return bpf_ring_fd(b->ring);
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
	.close	= bpf_close,
};
