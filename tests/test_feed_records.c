/*
 * test_feed_records.c: kernel records the backends decode, crafted.  The
 * netlink backend reads datagrams from its socket; the test puts one end of
 * a socketpair in that socket's place (dup2() onto vmon_feed_fd()) and
 * writes proc connector messages the kernel would not send, or sends only
 * on older kernels:
 *
 *   short_record	a message whose payload stops before the event's data:
 *			dropped, not decoded from what an earlier message left
 *			in the receive buffer
 *   cpu_minus_one	an ack with cpu -1 (kernels before 5.18 sent their
 *			PROC_CN_MCAST_LISTEN acks so, to every listener): no
 *			per-CPU sequence is grown for it, nothing is lost
 *   packed		several messages in one datagram, as the netlink format
 *			allows: each decoded, wherever it is aligned
 *   three_lives	one pid forked and exited three times within one clock
 *			tick: three nodes, three ctors, dtors and exit codes
 */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include "feedtest.h"

/* a pid no process has (pid_max is at most 2^22) */
#define NO_SUCH_PID	(1 << 29)

typedef struct fake_feed {
	vmon_t	vmon;
	int	peer;	/* what the test writes; the backend reads the other end */
	__u32	seq;	/* cpu 0's next sequence number */
} fake_feed_t;

static void fake_open_flags(fake_feed_t *ff, vmon_flags_t flags)
{
	char why[600];
	int sv[2];

	if (!feedtest_open(&ff->vmon, "netlink", flags, VMON_WANT_PROC_STAT, 0, why, sizeof(why)))
		SKIP_IF(true, "the netlink backend cannot run here: %s", why);
	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv), 0);
	/* the proc connector's socket is closed: from now on only the test speaks */
	assert_true(dup2(sv[0], vmon_feed_fd(&ff->vmon)) >= 0);
	close(sv[0]);
	ff->peer = sv[1];
	ff->seq = 1000;
}

static void fake_open(fake_feed_t *ff)
{
	fake_open_flags(ff, 0);
}

static void fake_close(fake_feed_t *ff)
{
	vmon_destroy(&ff->vmon);
	close(ff->peer);
}

/*
 * One proc connector message at buf: the netlink header, the connector's,
 * then data_len bytes of ev.  Returns its aligned length.
 */
static size_t put_msg(char *buf, const struct proc_event *ev, size_t data_len, __u32 seq)
{
	struct nlmsghdr nl = { 0 };
	struct cn_msg cn = { 0 };

	nl.nlmsg_len = (__u32)NLMSG_LENGTH(sizeof(cn) + data_len);
	nl.nlmsg_type = NLMSG_DONE;
	cn.id.idx = CN_IDX_PROC;
	cn.id.val = CN_VAL_PROC;
	cn.seq = seq;
	cn.len = (__u16)data_len;
	memcpy(buf, &nl, sizeof(nl));
	memcpy(buf + NLMSG_HDRLEN, &cn, sizeof(cn));
	memcpy(buf + NLMSG_HDRLEN + sizeof(cn), ev, data_len);
	return NLMSG_ALIGN(nl.nlmsg_len);
}

static void send_raw(fake_feed_t *ff, const char *buf, size_t len)
{
	assert_int_equal(send(ff->peer, buf, len, 0), (ssize_t)len);
}

static void send_event(fake_feed_t *ff, const struct proc_event *ev, size_t data_len)
{
	char buf[256];

	send_raw(ff, buf, put_msg(buf, ev, data_len, ff->seq++));
}

static struct proc_event exit_event(int pid, int code)
{
	struct proc_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.what = PROC_EVENT_EXIT;
	ev.cpu = 0;
	ev.timestamp_ns = 1;
	ev.event_data.exit.process_pid = pid;
	ev.event_data.exit.process_tgid = pid;
	ev.event_data.exit.exit_code = (__u32)code;
	ev.event_data.exit.parent_pid = 1;
	ev.event_data.exit.parent_tgid = 1;
	return ev;
}

static unsigned long long lost_of(fake_feed_t *ff)
{
	vmon_feed_stats_t st;

	assert_int_equal(vmon_feed_get_stats(&ff->vmon, &st), 0);
	return st.lost;
}

static void test_short_record(void **state)
{
	struct proc_event ev = exit_event(NO_SUCH_PID, 3 << 8);
	fake_feed_t ff;

	(void)state;
	fake_open(&ff);
	send_event(&ff, &ev, sizeof(ev));
	assert_int_equal(vmon_feed_process(&ff.vmon), 1);
	/* the same header, the event's data cut off: the receive buffer still holds the first one's */
	send_event(&ff, &ev, offsetof(struct proc_event, event_data));
	assert_int_equal(vmon_feed_process(&ff.vmon), 0);
	/* cut inside the exit's data */
	send_event(&ff, &ev, offsetof(struct proc_event, event_data) + 8);
	assert_int_equal(vmon_feed_process(&ff.vmon), 0);
	assert_int_equal(lost_of(&ff), 0);
	fake_close(&ff);
}

static void test_cpu_minus_one(void **state)
{
	struct proc_event ack, ev = exit_event(NO_SUCH_PID, 0);
	fake_feed_t ff;
	char buf[256];

	(void)state;
	fake_open(&ff);
	send_event(&ff, &ev, sizeof(ev));
	assert_int_equal(vmon_feed_process(&ff.vmon), 1);
	memset(&ack, 0, sizeof(ack));
	ack.what = PROC_EVENT_NONE;
	ack.cpu = (__u32)-1;
	/* its sequence number is the listener's request's, not a CPU's count */
	send_raw(&ff, buf, put_msg(buf, &ack, sizeof(ack), 0));
	assert_int_equal(vmon_feed_process(&ff.vmon), 0);
	/* cpu 0's sequence goes on where it was: no gap, nothing lost */
	send_event(&ff, &ev, sizeof(ev));
	send_event(&ff, &ev, sizeof(ev));
	assert_int_equal(vmon_feed_process(&ff.vmon), 2);
	assert_int_equal(lost_of(&ff), 0);
	fake_close(&ff);
}

static void test_packed(void **state)
{
	struct proc_event ev;
	fake_feed_t ff;
	char buf[1024];
	size_t len = 0;

	(void)state;
	fake_open(&ff);
	for (int i = 0; i < 5; i++) {
		ev = exit_event(NO_SUCH_PID + i, i << 8);
		len += put_msg(buf + len, &ev, sizeof(ev), ff.seq++);
	}
	send_raw(&ff, buf, len);
	assert_int_equal(vmon_feed_process(&ff.vmon), 5);
	assert_int_equal(lost_of(&ff), 0);
	fake_close(&ff);
}

static struct proc_event fork_event(int ppid, int pid)
{
	struct proc_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.what = PROC_EVENT_FORK;
	ev.event_data.fork.parent_pid = ppid;
	ev.event_data.fork.parent_tgid = ppid;
	ev.event_data.fork.child_pid = pid;
	ev.event_data.fork.child_tgid = pid;
	return ev;
}

static long long clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int three_ctors, three_dtors;

static void count_ctor(vmon_t *vmon, vmon_proc_t *proc)
{
	(void)vmon;
	three_ctors += proc->pid == NO_SUCH_PID;
}

static void count_dtor(vmon_t *vmon, vmon_proc_t *proc)
{
	(void)vmon;
	three_dtors += proc->pid == NO_SUCH_PID;
}

/*
 * One pid, three processes, all within one clock tick: a fork after an exit
 * is another process even with the same pid and start tick.  Each is a node
 * of its own, new with its exit code in the sample that applies them, stale
 * in the next, freed in the one after.
 */
static void test_three_lives(void **state)
{
	long long tick = 1000000000LL / sysconf(_SC_CLK_TCK), boot_offset, t;
	int statuses = 0, found = 0;
	vmon_proc_t *self, *child;
	struct proc_event ev;
	fake_feed_t ff;

	(void)state;
	fake_open_flags(&ff, VMON_FLAG_PROC_ALL);
	ff.vmon.proc_ctor_cb = count_ctor;
	ff.vmon.proc_dtor_cb = count_dtor;
	three_ctors = three_dtors = 0;
	assert_true(vmon_sample(&ff.vmon));
	/* the kernel's times are monotonic, the start tick counts boot time: 1 ms into a tick of that */
	boot_offset = clock_ns(CLOCK_BOOTTIME) - clock_ns(CLOCK_MONOTONIC);
	t = (clock_ns(CLOCK_MONOTONIC) + boot_offset) / tick * tick + tick / 10 - boot_offset;
	for (int life = 1; life <= 3; life++) {
		ev = fork_event(getpid(), NO_SUCH_PID);
		ev.timestamp_ns = (__u64)(t++);
		send_event(&ff, &ev, sizeof(ev));
		ev = exit_event(NO_SUCH_PID, life << 8);
		ev.event_data.exit.parent_pid = ev.event_data.exit.parent_tgid = getpid();
		ev.timestamp_ns = (__u64)(t++);
		send_event(&ff, &ev, sizeof(ev));
	}
	assert_true(vmon_sample(&ff.vmon));
	self = vmon_proc_lookup(&ff.vmon, getpid());
	assert_non_null(self);
	list_for_each_entry(child, &self->children, siblings) {
		if (child->pid != NO_SUCH_PID)
			continue;
		found++;
		assert_true(child->is_new);
		assert_false(child->is_stale);
		assert_true(child->has_exit_status);
		statuses |= 1 << (child->exit_status >> 8);
	}
	assert_int_equal(found, 3);
	assert_int_equal(statuses, (1 << 1) | (1 << 2) | (1 << 3));
	assert_int_equal(three_ctors, 3);
	assert_null(vmon_proc_lookup(&ff.vmon, NO_SUCH_PID));
	assert_true(vmon_sample(&ff.vmon));
	found = 0;
	list_for_each_entry(child, &self->children, siblings) {
		if (child->pid == NO_SUCH_PID) {
			assert_true(child->is_stale && !child->is_new);
			found++;
		}
	}
	assert_int_equal(found, 3);
	assert_int_equal(three_dtors, 0);
	assert_true(vmon_sample(&ff.vmon));
	assert_int_equal(three_dtors, 3);
	assert_int_equal(lost_of(&ff), 0);
	fake_close(&ff);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_short_record),
		cmocka_unit_test(test_cpu_minus_one),
		cmocka_unit_test(test_packed),
		cmocka_unit_test(test_three_lives),
	};

	return cmocka_run_group_tests_name("feed_records", tests, NULL, NULL);
}
