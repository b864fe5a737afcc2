/*
 * feed_netlink.c: the netlink backend, the kernel's proc connector (CN_PROC).
 *
 * Reach: every process of the system; on recent kernels an unprivileged
 * user may listen.  Limits, against the tracepoint backends:
 *   - an event carries pids and little else: a fork has no start time (it
 *     is derived from the event's time, and may be a tick off until /proc
 *     is read) and no name (the child has its parent's until it execs);
 *     an exec has neither name nor arguments nor filename, so they are
 *     read from /proc/PID/stat and cmdline as soon as the event is read,
 *     like forkstat does: a process that is gone by then stays unnamed,
 *     and reading costs three syscalls per exec;
 *   - an exit is reported for every thread, and the leader's is not the
 *     process's when other threads run on: such an exit is checked against
 *     /proc when it is applied (feed.c, process_gone());
 *   - no CPU times, faults or peak RSS at exit; the exit status is there.
 * The socket's receive buffer is the kernel buffer: SO_RCVBUFFORCE when we
 * may (CAP_NET_ADMIN), else SO_RCVBUF up to net.core.rmem_max.  A full
 * buffer makes recv() fail with ENOBUFS, and every message carries a
 * per-CPU sequence number, so a gap says how many were dropped.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include "feed/feed.h"

#define NETLINK_DEFAULT_BUFFER	(32u << 20)
#define NETLINK_BYTES_PER_EVENT	1024	/* what one message costs in the receive buffer, about */
#define NETLINK_LEADER_EXITS	64	/* leader exits of this read remembered until a possible EXEC */
#define NETLINK_CPUS_MAX	8192	/* the kernel's largest NR_CPUS */

typedef struct netlink_feed {
	int			sock;
	unsigned		*last_seq;	/* per CPU, the last sequence number seen */
	bool			*seq_known;
	size_t			cpus;
	size_t			leader_exits[NETLINK_LEADER_EXITS];	/* queue indices, this read only */
	unsigned		leader_exits_nr;
	char			buf[65536] __attribute__((aligned(NLMSG_ALIGNTO)));
} netlink_feed_t;

static int listen_op(int sock, enum proc_cn_mcast_op op)
{
	struct {
		struct nlmsghdr	nl;
		struct cn_msg	cn;
		enum proc_cn_mcast_op op;
	} __attribute__((packed)) msg;

	memset(&msg, 0, sizeof(msg));
	msg.nl.nlmsg_len = sizeof(msg);
	msg.nl.nlmsg_type = NLMSG_DONE;
	msg.nl.nlmsg_pid = 0;
	msg.cn.id.idx = CN_IDX_PROC;
	msg.cn.id.val = CN_VAL_PROC;
	msg.cn.len = sizeof(op);
	msg.op = op;
	return send(sock, &msg, sizeof(msg), 0) == (ssize_t)sizeof(msg) ? 0 : -1;
}

static void netlink_close(feed_t *feed)
{
	netlink_feed_t *nl = feed_priv(feed);

	if (!nl)
		return;
	if (nl->sock >= 0) {
		listen_op(nl->sock, PROC_CN_MCAST_IGNORE);
		close(nl->sock);
	}
	free(nl->last_seq);
	free(nl->seq_known);
	free(nl);
	feed_set_priv(feed, NULL);
}

static int netlink_open(vmon_t *vmon, feed_t *feed, size_t *buffer_bytes, size_t *capacity, char *why, size_t why_size)
{
	struct sockaddr_nl addr = { .nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC };
	netlink_feed_t *nl = calloc(1, sizeof(*nl));
	int size, got = 0;
	socklen_t len = sizeof(got);
	long cpus = sysconf(_SC_NPROCESSORS_CONF);

	if (!nl) {
		snprintf(why, why_size, "%s", strerror(errno));
		return -1;
	}
	feed_set_priv(feed, nl);
	nl->cpus = cpus > 0 ? (size_t)cpus : 1;
	nl->last_seq = calloc(nl->cpus, sizeof(*nl->last_seq));
	nl->seq_known = calloc(nl->cpus, sizeof(*nl->seq_known));
	nl->sock = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_CONNECTOR);
	if (!nl->last_seq || !nl->seq_known || nl->sock < 0) {
		snprintf(why, why_size, "netlink connector socket: %s", strerror(errno));
		goto fail;
	}
	if (!*buffer_bytes)
		*buffer_bytes = NETLINK_DEFAULT_BUFFER;
	size = *buffer_bytes > (size_t)(1 << 30) ? 1 << 30 : (int)*buffer_bytes;
	/* the kernel doubles what it is given, for its own overhead: ask for half */
	size = size / 2 > 0 ? size / 2 : 1;
	if (setsockopt(nl->sock, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(nl->sock, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (getsockopt(nl->sock, SOL_SOCKET, SO_RCVBUF, &got, &len) == 0 && got > 0) {
		*capacity = (size_t)got / NETLINK_BYTES_PER_EVENT;
		*buffer_bytes = (size_t)got;	/* what the kernel granted (net.core.rmem_max bounds SO_RCVBUF) */
	}
	if (bind(nl->sock, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		snprintf(why, why_size, "cannot join the proc connector group (%s%s)", strerror(errno),
			 errno == EPERM ? ": needs CAP_NET_ADMIN on this kernel" : "");
		goto fail;
	}
	if (listen_op(nl->sock, PROC_CN_MCAST_LISTEN) < 0) {
		snprintf(why, why_size, "cannot subscribe to process events: %s", strerror(errno));
		goto fail;
	}
	(void)vmon;
	return 0;

fail:
	netlink_close(feed);
	return -1;
}

static int netlink_fd(const feed_t *feed)
{
	const netlink_feed_t *nl = feed_priv(feed);

	return nl->sock;
}

/*
 * A per-CPU sequence number: how many messages of that CPU never reached us?
 * Kernels before 5.18 sent the acks of PROC_CN_MCAST_LISTEN (anyone's, to
 * every listener) with cpu -1 and the requester's own sequence number: no
 * CPU's count, so no gap either.  Nor is a cpu beyond any the kernel can
 * have, which would only make the tables huge.
 */
static unsigned long long seq_gap(netlink_feed_t *nl, unsigned cpu, unsigned seq)
{
	unsigned long long gap = 0;

	if (cpu >= NETLINK_CPUS_MAX)
		return 0;
	if (cpu >= nl->cpus) {
		size_t n = (size_t)cpu + 1;
		unsigned *s = realloc(nl->last_seq, n * sizeof(*s));
		bool *k;

		if (!s)
			return 0;
		nl->last_seq = s;
		k = realloc(nl->seq_known, n * sizeof(*k));
		if (!k)
			return 0;
		nl->seq_known = k;
		for (size_t i = nl->cpus; i < n; i++)
			k[i] = false;
		nl->cpus = n;
	}
	if (nl->seq_known[cpu] && seq != nl->last_seq[cpu] + 1)
		gap = (unsigned)(seq - nl->last_seq[cpu] - 1);
	nl->seq_known[cpu] = true;
	nl->last_seq[cpu] = seq;
	return gap;
}

/*
 * An exec from a thread other than the leader first kills the leader, whose
 * exit comes with the leader's pid, just as the process's would; the EXEC
 * that follows says it was not.  Drop such an exit if it is still queued.
 */
static void exec_supersedes_exit(feed_t *feed, netlink_feed_t *nl, size_t queued_before, int tgid, feed_event_t *exec)
{
	for (unsigned i = 0; i < nl->leader_exits_nr; i++) {
		size_t idx = nl->leader_exits[i];
		feed_event_t *e = exec - (queued_before - idx);

		if (idx < queued_before && e->ev.kind == VMON_EVENT_EXIT && e->ev.pid == tgid && !e->applied) {
			/* now a thread's exit: ignored unless the leader is known gone */
			e->ev.tid = 0;
			nl->leader_exits[i] = nl->leader_exits[--nl->leader_exits_nr];
			return;
		}
	}
}

/* the bytes of event_data a message of this kind must carry for what handle_event() reads */
static size_t event_data_len(unsigned what)
{
	const struct proc_event *pe = NULL;

	switch (what) {
	case PROC_EVENT_FORK:
		return sizeof(pe->event_data.fork);
	case PROC_EVENT_EXEC:
		return sizeof(pe->event_data.exec);
	case PROC_EVENT_EXIT:
		return sizeof(pe->event_data.exit);
	default:
		return 0;
	}
}

static int handle_event(vmon_t *vmon, feed_t *feed, netlink_feed_t *nl, const struct proc_event *pe,
			unsigned long long offset_ns, size_t *queued)
{
	unsigned long long t = pe->timestamp_ns + offset_ns;
	feed_event_t *e;

	switch (pe->what) {
	case PROC_EVENT_FORK:
		if (pe->event_data.fork.child_pid != pe->event_data.fork.child_tgid)
			return 0;	/* a new thread */
		e = feed_push(feed, VMON_EVENT_FORK);
		if (!e)
			return 0;
		e->ev.pid = pe->event_data.fork.child_tgid;
		e->ev.tid = pe->event_data.fork.child_pid;
		e->ev.ppid = pe->event_data.fork.parent_tgid;
		e->ev.start = feed_ns_to_ticks(feed, t);
		e->ev.has = VMON_EVENT_HAS_PPID | VMON_EVENT_HAS_START_APPROX;
		break;
	case PROC_EVENT_EXEC:
		e = feed_push(feed, VMON_EVENT_EXEC);
		if (!e)
			return 0;
		e->ev.pid = pe->event_data.exec.process_tgid;
		e->ev.tid = pe->event_data.exec.process_pid;
		feed_read_exec(vmon, feed, e, NULL, 0);
		exec_supersedes_exit(feed, nl, *queued, e->ev.pid, e);
		break;
	case PROC_EVENT_EXIT:
		e = feed_push(feed, VMON_EVENT_EXIT);
		if (!e)
			return 0;
		e->ev.pid = pe->event_data.exit.process_tgid;
		e->ev.tid = pe->event_data.exit.process_pid;
		e->ev.ppid = pe->event_data.exit.parent_tgid;
		e->ev.exit_status = (int)pe->event_data.exit.exit_code;
		e->ev.has = VMON_EVENT_HAS_EXIT_STATUS | (e->ev.ppid > 0 ? VMON_EVENT_HAS_PPID : 0);
		e->check_alive = true;
		if (e->ev.pid == e->ev.tid && nl->leader_exits_nr < NETLINK_LEADER_EXITS)
			nl->leader_exits[nl->leader_exits_nr++] = *queued;
		break;
	default:
		return 0;
	}
	e->ev.time_ns = t;
	(*queued)++;
	return 1;
}

static int netlink_drain(vmon_t *vmon, feed_t *feed)
{
	netlink_feed_t *nl = feed_priv(feed);
	unsigned long long offset_ns = feed_boottime_offset_ns(), gaps = 0;
	bool overrun = false;
	size_t queued = 0;
	int n = 0;

	/* the connector stamps events with CLOCK_MONOTONIC; the feed speaks CLOCK_BOOTTIME (offset_ns) */
	nl->leader_exits_nr = 0;

	for (;;) {
		ssize_t len = recv(nl->sock, nl->buf, sizeof(nl->buf), MSG_DONTWAIT);
		struct nlmsghdr *h;

		if (len < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				overrun = true;
				continue;
			}
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			return -1;
		}
		if (len == 0)
			break;
		for (h = (struct nlmsghdr *)nl->buf; NLMSG_OK(h, (unsigned)len); h = NLMSG_NEXT(h, len)) {
			const size_t head = offsetof(struct proc_event, event_data);
			struct cn_msg cn;
			struct proc_event pe;

			if (h->nlmsg_type == NLMSG_ERROR || h->nlmsg_type == NLMSG_NOOP)
				continue;
			if (h->nlmsg_len < NLMSG_LENGTH(sizeof(cn)))
				continue;
			/*
			 * Copied out: a message after the first of a datagram is
			 * aligned to 4 bytes only, and the event's timestamp is a
			 * __u64.  What the message does not carry stays 0.
			 */
			memcpy(&cn, NLMSG_DATA(h), sizeof(cn));
			if (cn.id.idx != CN_IDX_PROC || cn.id.val != CN_VAL_PROC || cn.len < head ||
			    NLMSG_LENGTH(sizeof(cn) + cn.len) > h->nlmsg_len)
				continue;
			memset(&pe, 0, sizeof(pe));
			memcpy(&pe, (const char *)NLMSG_DATA(h) + sizeof(cn), cn.len < sizeof(pe) ? cn.len : sizeof(pe));
			gaps += seq_gap(nl, pe.cpu, cn.seq);
			/* cut short: nothing of it is decoded (the buffer behind it holds older messages) */
			if (cn.len < head + event_data_len(pe.what))
				continue;
			n += handle_event(vmon, feed, nl, &pe, offset_ns, &queued);
		}
	}
	if (gaps)
		feed_lost(feed, gaps);
	else if (overrun)
		feed_lost(feed, 1);	/* at least one, though no gap showed it yet */
	return n;
}

const feed_backend_t feed_netlink_backend = {
	.name	= "netlink",
	.id	= VMON_FEED_NETLINK,
	.open	= netlink_open,
	.drain	= netlink_drain,
	.fd	= netlink_fd,
	.close	= netlink_close,
};
