/*
 * feed.bpf.c: the eBPF side of libvmon's event feed.
 *
 * Three programs on the scheduler's process tracepoints, attached as BTF
 * tracepoints (tp_btf: typed arguments, no kprobes, no fentry, which a
 * locked-down kernel refuses), write one record per event into one BPF ring
 * buffer: the one user space has put in the slot of rings[], which it
 * replaces with a larger one when the reader falls behind and a smaller one
 * when the storm is over (libvmon/feed/feed_bpf.c).  The ring keeps the order in which records were reserved, across
 * CPUs, so a parent's fork always comes before anything its child does: the
 * child cannot run before the tracepoint that reports its birth returns.
 *
 * Kept small, as libbpf-tools do: read with CO-RE, fill, submit.  What the
 * records mean is decided in user space (libvmon/feed/feed.c).  A record that
 * cannot be reserved (the ring is full) is counted in lost[], which user
 * space reads through the skeleton's .bss.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "feed.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* kernel/exit.c's flag for a thread group on its way out (include/linux/sched/signal.h) */
#define SIGNAL_GROUP_EXIT	0x00000004

/* set by user space before loading: sched_process_exit has the group_dead argument (Linux 6.11 and later) */
const volatile bool has_group_dead = false;
/* and otherwise at most once in this many nanoseconds */
const volatile __u64 wakeup_interval_ns = 0;

__u64 lost[4];	/* by enum feed_rec_kind */
/* wake the reader at once when this much waits in the ring (see submit_flags()): set with each ring */
__u64 wakeup_bytes;
/* CLOCK_BOOTTIME of the last record that woke the reader, and of the last one that did not */
__u64 woke_ns;
__u64 quiet_ns;

struct ring_template {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, FEED_RING_TEMPLATE_BYTES);
};

/* slot 0: the ring records go to (user space puts it there before attaching) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct ring_template);
} rings SEC(".maps");

/*
 * The ring of this event.  A program that found one ring may write to it
 * after user space has put another in the slot: user space reads the old
 * one for a while after (feed_bpf.c).
 */
static __always_inline void *current_ring(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&rings, &zero);
}

/* an exec record is built here, then copied into the ring at its real size */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct feed_exec_rec);
} exec_scratch SEC(".maps");

/*
 * When to wake the reader.  A record that comes after a quiet spell (no
 * wakeup for wakeup_interval_ns) wakes it at once: a caller polling the fd
 * hears of a rare event within the time a wakeup takes.  Records that
 * follow within the interval wait, batched, unless the ring holds
 * wakeup_bytes: so at most 1 / wakeup_interval_ns wakeups a second (plus
 * those for a filling ring), whatever the rate.  A record that waits is
 * stamped in quiet_ns; user space reads woke_ns and quiet_ns and tells the
 * caller to read the ring by woke_ns + wakeup_interval_ns at the latest
 * (vmon_feed_timeout()), so no record waits longer than the interval for
 * a caller that honours it.  Several CPUs may race on the two stamps: the
 * worst that does is one wakeup too many, or a timeout a little short.
 */
static __always_inline __u64 submit_flags(void *ring, __u64 now)
{
	if (now - woke_ns >= wakeup_interval_ns || bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) >= wakeup_bytes) {
		woke_ns = now;
		return BPF_RB_FORCE_WAKEUP;
	}
	quiet_ns = now;
	return BPF_RB_NO_WAKEUP;
}

/* what every record says about the process: task is any of its threads */
static __always_inline void fill_process(struct feed_rec *r, struct task_struct *task, __u32 kind)
{
	struct task_struct *leader = task->group_leader;

	r->kind = kind;
	r->pid = task->tgid;
	r->tid = task->pid;
	r->ppid = task->real_parent->tgid;
	r->uid = task->cred->euid.val;
	r->pad = 0;
	r->time_ns = bpf_ktime_get_boot_ns();
	/* /proc/PID/stat's start time is the leader's start_boottime in clock ticks */
	r->start_ns = leader->start_boottime;
	bpf_probe_read_kernel_str(r->comm, sizeof(r->comm), leader->comm);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(feed_fork, struct task_struct *parent, struct task_struct *child)
{
	struct feed_rec *r = NULL;
	void *ring;

	if (child->pid != child->tgid)
		return 0;	/* a new thread, not a new process */
	ring = current_ring();
	if (ring)
		r = bpf_ringbuf_reserve(ring, sizeof(*r), 0);
	if (!r) {
		__sync_fetch_and_add(&lost[FEED_REC_FORK], 1);
		return 0;
	}
	fill_process(r, child, FEED_REC_FORK);
	bpf_ringbuf_submit(r, submit_flags(ring, r->time_ns));
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(feed_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
	struct feed_exec_rec *r;
	unsigned long arg_start, arg_end;
	__u64 len, off;
	__u32 zero = 0;
	void *ring;
	long n;

	r = bpf_map_lookup_elem(&exec_scratch, &zero);
	if (!r)
		return 0;
	fill_process(&r->rec, task, FEED_REC_EXEC);
	r->rec.tid = old_pid;	/* from another thread, the exec made it the leader */

	n = bpf_probe_read_kernel_str(r->data, FEED_FILENAME_MAX - 1, bprm->filename);
	if (n < 1) {
		r->data[0] = '\0';
		n = 1;
	}
	off = (__u64)n & (FEED_FILENAME_MAX - 1);

	/* the new program's arguments, just copied onto its stack by the exec */
	arg_start = task->mm->arg_start;
	arg_end = task->mm->arg_end;
	len = arg_end > arg_start ? arg_end - arg_start : 0;
	r->rec.exec.truncated = len > FEED_ARGS_MAX - 1;
	if (len > FEED_ARGS_MAX - 1)
		len = FEED_ARGS_MAX - 1;
	len &= FEED_ARGS_MAX - 1;
	if (len && bpf_probe_read_user(r->data + off, len, (void *)arg_start) < 0)
		len = 0;
	r->rec.exec.filename_len = (__u32)off - 1;
	r->rec.exec.args_len = (__u32)len;
	r->rec.exec.pad = 0;
	ring = current_ring();
	if (!ring || bpf_ringbuf_output(ring, r, sizeof(r->rec) + off + len, submit_flags(ring, r->rec.time_ns)) < 0)
		__sync_fetch_and_add(&lost[FEED_REC_EXEC], 1);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(feed_exit, struct task_struct *task)
{
	struct task_struct *leader = task->group_leader;
	struct signal_struct *sig = task->signal;
	struct feed_rec *r = NULL;
	bool group_dead;
	void *ring;

	/*
	 * One exit per process: the last thread's.  The kernel says so in
	 * group_dead; before it did, the live count is what it decided on
	 * (it was decremented just before the tracepoint), which two threads
	 * exiting at once can both read as 0: then the process is reported
	 * twice and user space keeps the first.
	 */
	if (has_group_dead)
		group_dead = (bool)ctx[1];
	else
		group_dead = sig->live.counter == 0;
	if (!group_dead)
		return 0;

	ring = current_ring();
	if (ring)
		r = bpf_ringbuf_reserve(ring, sizeof(*r), 0);
	if (!r) {
		__sync_fetch_and_add(&lost[FEED_REC_EXIT], 1);
		return 0;
	}
	fill_process(r, task, FEED_REC_EXIT);
	/* what wait(2) will say: the group's code, or the leader's own exit */
	r->exit.status = (sig->flags & SIGNAL_GROUP_EXIT) ? sig->group_exit_code : leader->exit_code;
	r->exit.pad = 0;
	/* the dead threads' share is in the signal struct; a zombie leader's is still its own */
	r->exit.utime_ns = sig->utime + task->utime;
	r->exit.stime_ns = sig->stime + task->stime;
	r->exit.minflt = sig->min_flt + task->min_flt;
	r->exit.majflt = sig->maj_flt + task->maj_flt;
	if (leader != task) {
		r->exit.utime_ns += leader->utime;
		r->exit.stime_ns += leader->stime;
		r->exit.minflt += leader->min_flt;
		r->exit.majflt += leader->maj_flt;
	}
	r->exit.maxrss_pages = sig->maxrss;
	bpf_ringbuf_submit(r, submit_flags(ring, r->time_ns));
	return 0;
}
