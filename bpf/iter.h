/*
 * iter.h: the record the task iterator (iter.bpf.c) writes for every task
 * and libvmon/sources/iter.c reads: the one definition both sides share.
 *
 * The store parts are generated from the defs/ rows wrapped in vmon_task()
 * (defs/_begin.def, mode VMON_TASK_RECORD): one __u64 per datum, holding
 * the value in the store's own unit, except where the comments below say.
 * Built twice: by clang -target bpf after vmlinux.h, and by the library's
 * compiler after <linux/types.h>.
 *
 * A read is a stream of records, one per task in the iterator's order:
 * a whole struct iter_rec, or its struct iter_hdr alone (ITER_SAME) when
 * the record is the one user space holds, as the held table (struct
 * iter_held) says.
 */
#ifndef VMON_BPF_ITER_H
#define VMON_BPF_ITER_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define ITER_COMM_LEN	16
#define ITER_WCHAN_LEN	48

/* struct iter_rec.wchan_state */
#define ITER_WCHAN_NONE		0	/* not read: see the last record's, or /proc */
#define ITER_WCHAN_RUNNABLE	1	/* running or about to: /proc says "0" */
#define ITER_WCHAN_SYMBOL	2	/* asleep; wchan has the %pB of where */

/* what a run of the walk (iter.bpf.c's vmon_tasks_walk) did: its walk_status */
#define WALK_DONE	1	/* every task's record is in the ring */
#define WALK_FULL	2	/* the ring had no room for a record: the run is not whole */
#define WALK_NONE	3	/* the kernel has no open-coded task iterator: read the iterator */

/* struct iter_rec.flags */
#define ITER_HAS_MM		0x1	/* the task has an address space: the vm part is filled */
#define ITER_KTHREAD		0x2	/* a kernel thread (PF_KTHREAD) */
#define ITER_WQ_WORKER		0x4	/* a workqueue worker: /proc adds its current work to comm */
#define ITER_GROUP_EXIT		0x8	/* the group is exiting or stopped: group_exit_code is its exit_code */
#define ITER_HAS_SIGHAND	0x10	/* the task still had its signal handlers (not yet released) */
#define ITER_SAME		0x20	/* a header alone: the record is the one user space holds (struct iter_held) */
#define ITER_VOLATILE_SAME	0x80	/* with ITER_SAME: the volatile hash is the held entry's too */
#define ITER_SAME_BATCH		0x100	/* a header and held struct iter_same (the walk's): see below */

/*
 * PROC_STAT's numeric fields, then PROC_STAT_EXTRA's (the same stat line);
 * utime, stime and guest_time are the task's own, in ns
 */
struct iter_stat {
#define VMON_TASK_RECORD
#include "defs/proc_stat.def"
#define VMON_TASK_RECORD
#include "defs/proc_stat_extra.def"
};

/* PROC_VM: statm in pages; then PROC_VM_STATUS: the memory lines of status in kB */
struct iter_vm {
#define VMON_TASK_RECORD
#include "defs/proc_vm.def"
#define VMON_TASK_RECORD
#include "defs/proc_vm_status.def"
};

/* PROC_IO: the task's own counters */
struct iter_io {
#define VMON_TASK_RECORD
#include "defs/proc_io.def"
};

/* PROC_SCHED: the task's own context switches */
struct iter_sched {
#define VMON_TASK_RECORD
#include "defs/proc_sched.def"
};

/* every record's start; with ITER_SAME, all of it */
struct iter_hdr {
	__u32		tid;
	__u32		tgid;
	__u32		flags;		/* ITER_* */
	__u32		held;		/* 1 + the index of the held entry the program found for the task, 0: none */
	__u64		hash;		/* of the whole record, made with both hashes 0 */
	__u64		volatile_hash;	/* of what can change while the task does not run (iter.bpf.c) */
};

/*
 * An entry of the table user space keeps for the program (the held map):
 * the record it holds of task tid.  The entries are in the order the reads
 * met their tasks (a new task's goes after the others), which is the order
 * the next walk meets them: the program looks first at the entry after the
 * last one it found, and finds it there for nearly every task, in lines
 * the processor reads ahead.  Where it is not, the index (the held_at map,
 * struct iter_held_at) says where it is.  User space alone writes both,
 * never while the program runs (libvmon/sources/iter_held.c: between
 * reads, or between a read's read(2) calls); the table is sized by the
 * tasks there are, not by pid_max, and a task that finds no room gets
 * whole records.
 */
struct iter_held {
	__u32		tid;		/* 0: none */
	__u32		run_count;	/* the record's run count, its low 32 bits (iter_held_not_run()) */
	__u64		hash;		/* the record's iter_hdr.hash */
	__u64		volatile_hash;	/* and its iter_hdr.volatile_hash */
	__u64		run_ns;		/* the record's run time */
};

/*
 * The held table's index, open-addressed: tid's is one of ITER_HELD_PROBES
 * from iter_held_home() on (wrapping), with no free one before it.
 */
struct iter_held_at {
	__u32		tid;		/* 0: none */
	__u32		entry;		/* the index of tid's entry in the held map */
};

/*
 * The task has not run since the record held was read: its run time and
 * run count are the record's.  The count's low 32 bits are enough: one
 * that differs only above them was put on a CPU 2^32 times since (hours
 * of nothing else), while its run time, whole, stood still.
 */
static inline int iter_held_not_run(const struct iter_held *e, __u64 run_ns, __u64 run_count)
{
	return e->run_ns == run_ns && e->run_count == (__u32)run_count;
}

#define ITER_HELD_PROBES	48	/* index entries the program looks at for a tid (an index up to 2/3 full) */

/*
 * Where a tid's probes begin in an index of mask + 1 entries: a
 * multiplicative hash, so that the runs of consecutive tids a fork storm
 * leaves do not fill runs of consecutive entries.
 */
static inline __u32 iter_held_home(__u32 tid, __u32 mask)
{
	__u32 h = tid * 2654435761u;

	return (h ^ (h >> 16)) & mask;
}

/*
 * The walk (iter.bpf.c's vmon_tasks_walk) sends the tasks whose records
 * are the ones held, their volatile hash as held too (ITER_SAME and
 * ITER_VOLATILE_SAME: all that a header alone would say), 4 bytes each
 * instead of 32, in batches: a header with ITER_SAME_BATCH whose held is
 * the batch's count, tid and tgid 0, then that many of these.  The held
 * entry names the task (its tid): user space alone writes the table, and
 * not while the program runs.  The records come in the walk's order: a
 * task sent otherwise comes after the batch of those met before it.
 */
struct iter_same {
	__u32		held;		/* as iter_hdr.held: 1 + the index of the held entry */
};

#define ITER_SAME_BATCH_MAX	511	/* a batch's count, at most */

struct iter_rec {
	struct iter_hdr	h;
	char		comm[ITER_COMM_LEN];
	/* schedstat: CPU time and times put on a CPU (has it run since the last sample?) */
	__u64		run_ns;		/* se.sum_exec_runtime */
	__u64		run_count;	/* sched_info.pcount */
	/* the kernel's last adjusted times (prev_cputime): the task's, and the group's for a leader */
	__u64		prev_utime_ns, prev_stime_ns;
	__u64		group_prev_utime_ns, group_prev_stime_ns;
	/* what the group keeps of its exited threads (signal_struct), leaders only */
	__u64		dead_utime_ns, dead_stime_ns, dead_run_ns, dead_gtime_ns;
	__u64		dead_minflt, dead_majflt;
	__u64		group_exit_code;
	struct iter_io	dead_io;
	struct iter_stat stat;
	struct iter_vm	vm;
	struct iter_io	io;
	struct iter_sched sched;
	/*
	 * The owner /proc shows for the task's directory (task_dump_owner()
	 * for a directory's mode): its effective uid, root for a kernel thread.
	 */
	__u32		uid;
	__u32		pad2;
	/*
	 * Not in the hash (rec_hash()): where the task sleeps, as the kernel
	 * names it, read only when it ran since the record user space holds
	 * (else that record's stands: a task that did not run sleeps where it
	 * slept) or is runnable ("0").  With ITER_WCHAN_SYMBOL, wchan is what
	 * the kernel's %pB prints of the address, "name+off/size [module]",
	 * cut to ITER_WCHAN_LEN: /proc/PID/wchan is the name.
	 */
	__u32		wchan_state;	/* ITER_WCHAN_* */
	__u32		pad3;
	char		wchan[ITER_WCHAN_LEN];
};

#endif
