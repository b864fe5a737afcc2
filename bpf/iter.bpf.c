/*
 * iter.bpf.c: libvmon's task iterator (iter/task).  One read of the
 * iterator's fd runs this program once per task of the system, threads
 * included, and writes one struct iter_rec (iter.h) per task: what
 * /proc/PID/task/TID/stat, statm, status (its memory lines) and io would
 * show for it, with what the thread group keeps of its exited threads on
 * the leader's record, so that user space (libvmon/iter.c) adds up a
 * process as /proc/PID/stat and io do.
 *
 * Read as fs/proc/array.c and task_mmu.c compute the same values; where
 * /proc takes a lock (sighand, the stats seqlock) this reads without: a
 * thread exiting during the read can be seen in both the group's dead
 * counters and its own record, or in neither, for that one sample.
 * CPU times are left raw (ns, with the kernel's last adjusted values
 * beside them): the scaling /proc applies needs the sums over the group,
 * which user space makes.
 *
 * Kept small: read with CO-RE, fill, write.  Direct loads through the
 * task's BTF pointers.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "iter.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* set by user space before loading */
const volatile __u64 tick_ns = 10000000;	/* ns per clock tick (USER_HZ) */
const volatile __u32 page_shift = 12;

/* include/linux/sched.h's task states, and the order of "RSDTtXZPI" */
#define T_REPORT		0x7f
#define T_UNINTERRUPTIBLE	0x2
#define T_NOLOAD		0x400
#define T_IDLE			(T_UNINTERRUPTIBLE | T_NOLOAD)
#define T_RTLOCK_WAIT		0x1000
#define T_FROZEN		0x8000
#define T_REPORT_IDLE		(T_REPORT + 1)

#define PF_KTHREAD_		0x00200000
#define PF_WQ_WORKER_		0x00000020
#define SIGNAL_STOP_STOPPED_	0x00000001
#define SIGNAL_GROUP_EXIT_	0x00000004
#define RLIMIT_RSS_		5
#define MM_FILEPAGES_		0
#define MM_ANONPAGES_		1
#define MM_SWAPENTS_		2
#define MM_SHMEMPAGES_		3

static __always_inline char state_letter(unsigned int state, unsigned int exit_state)
{
	unsigned int s = (state | exit_state) & T_REPORT;
	int i = 0;

	if ((state & T_IDLE) == T_IDLE)
		s = T_REPORT_IDLE;
	if ((state & T_RTLOCK_WAIT) || (state & T_FROZEN))
		s = T_UNINTERRUPTIBLE;
	/* fls() */
	while (s && i < 9) {
		s >>= 1;
		i++;
	}
	switch (i) {
	case 0: return 'R';
	case 1: return 'S';
	case 2: return 'D';
	case 3: return 'T';
	case 4: return 't';
	case 5: return 'X';
	case 6: return 'Z';
	case 7: return 'P';
	default: return 'I';
	}
}

static __always_inline __u64 pid_number(struct pid *pid)
{
	/* the first pid namespace's number: the iterator is used only there (libvmon/iter.c) */
	return pid ? (__u64)pid->numbers[0].nr : 0;
}

/*
 * percpu_counter_read_positive(): the count less what each CPU has not yet
 * folded into it (at most percpu_counter_batch pages per CPU).  stat's rss
 * is this same figure; statm and status add up the CPUs' parts, which a
 * BPF program cannot reach without the per-CPU offsets (kallsyms holds no
 * data symbols on this kernel): see vmon(3) for the bound.
 */
static __always_inline __u64 counter_read(struct percpu_counter *c)
{
	s64 v = c->count;

	return v > 0 ? (__u64)v : 0;
}

static __always_inline void fill_vm(struct iter_rec *r, struct task_struct *t, struct mm_struct *mm)
{
	__u64 anon, file, shmem, swap, text, lib, rss, hwm, peak;
	__u32 kb = page_shift - 10;
	unsigned long page_mask = ~((1UL << page_shift) - 1);

	file = counter_read(&mm->rss_stat[MM_FILEPAGES_]);
	anon = counter_read(&mm->rss_stat[MM_ANONPAGES_]);
	shmem = counter_read(&mm->rss_stat[MM_SHMEMPAGES_]);
	swap = counter_read(&mm->rss_stat[MM_SWAPENTS_]);
	rss = anon + file + shmem;

	r->vm.size_pages = mm->total_vm;
	r->vm.resident_pages = rss;
	r->vm.shared_pages = file + shmem;
	text = ((mm->end_code + ~page_mask) & page_mask) - (mm->start_code & page_mask);
	r->vm.text_pages = text >> page_shift;
	r->vm.data_pages = mm->data_vm + mm->stack_vm;

	peak = mm->total_vm > mm->hiwater_vm ? mm->total_vm : mm->hiwater_vm;
	hwm = rss > mm->hiwater_rss ? rss : mm->hiwater_rss;
	if (text > (mm->exec_vm << page_shift))
		text = mm->exec_vm << page_shift;
	lib = (mm->exec_vm << page_shift) - text;
	r->vm.peak_kb = peak << kb;
	r->vm.locked_kb = mm->locked_vm << kb;
	r->vm.pinned_kb = (__u64)mm->pinned_vm.counter << kb;
	r->vm.hwm_kb = hwm << kb;
	r->vm.rss_anon_kb = anon << kb;
	r->vm.rss_file_kb = file << kb;
	r->vm.rss_shmem_kb = shmem << kb;
	r->vm.data_kb = mm->data_vm << kb;
	r->vm.stack_kb = mm->stack_vm << kb;
	r->vm.lib_kb = lib >> 10;
	r->vm.pte_kb = (__u64)mm->pgtables_bytes.counter >> 10;
	r->vm.swap_kb = swap << kb;
	r->vm.hugetlb_kb = (__u64)mm->hugetlb_usage.counter << kb;

	/* stat's memory fields */
	r->stat.vsize = mm->total_vm << page_shift;
	r->stat.rss = rss;
	r->stat.startcode = mm->start_code;
	r->stat.endcode = mm->end_code;
	r->stat.startstack = mm->start_stack;
	r->stat.start_data = mm->start_data;
	r->stat.end_data = mm->end_data;
	r->stat.start_brk = mm->start_brk;
	r->stat.arg_start = mm->arg_start;
	r->stat.arg_end = mm->arg_end;
	r->stat.env_start = mm->env_start;
	r->stat.env_end = mm->env_end;
}

static __always_inline void fill_io(struct iter_io *io, struct task_io_accounting *ac)
{
	io->rchars = ac->rchar;
	io->wchars = ac->wchar;
	io->syscr = ac->syscr;
	io->syscw = ac->syscw;
	io->read_bytes = ac->read_bytes;
	io->write_bytes = ac->write_bytes;
	io->cancelled_write_bytes = ac->cancelled_write_bytes;
}

/* collect_sigign_sigcatch(), for the 31 signals stat shows */
static __always_inline void fill_sigactions(struct iter_rec *r, struct sighand_struct *sh)
{
	__u64 ign = 0, catch = 0;

	for (int i = 1; i < 32; i++) {
		unsigned long h = (unsigned long)sh->action[i - 1].sa.sa_handler;

		if (h == 1)		/* SIG_IGN */
			ign |= 1ULL << (i - 1);
		else if (h != 0)	/* not SIG_DFL */
			catch |= 1ULL << (i - 1);
	}
	r->stat.sigignore = ign;
	r->stat.sigcatch = catch;
}

/* one record per task; struct iter_rec is too large for the BPF stack */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct iter_rec);
} scratch SEC(".maps");

SEC("iter/task")
int vmon_tasks(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct signal_struct *sig;
	struct sighand_struct *sh;
	struct mm_struct *mm;
	struct tty_struct *tty;
	struct iter_rec *r;
	__u32 zero = 0;

	if (!t)
		return 0;
	r = bpf_map_lookup_elem(&scratch, &zero);
	if (!r)
		return 0;
	/*
	 * No memset of the whole record (it showed in profiles): every field
	 * is written below, the conditional ones in both branches.
	 */
	sig = t->signal;
	sh = t->sighand;
	mm = t->mm;

	r->tid = t->pid;
	r->tgid = t->tgid;
	r->flags = 0;
	r->pad = 0;
	/* a plain copy: comm is always NUL-terminated (and the helper costs more than the rest) */
	__builtin_memcpy(r->comm, t->comm, sizeof(r->comm));
	if (t->flags & PF_KTHREAD_)
		r->flags |= ITER_KTHREAD;
	if (t->flags & PF_WQ_WORKER_)
		r->flags |= ITER_WQ_WORKER;
	r->run_ns = t->se.sum_exec_runtime;
	r->run_count = t->sched_info.pcount;
	r->prev_utime_ns = t->prev_cputime.utime;
	r->prev_stime_ns = t->prev_cputime.stime;

	r->stat.pid = t->pid;
	r->stat.state = state_letter(t->__state, t->exit_state);
	r->stat.flags = t->flags;
	r->stat.minflt = t->min_flt;
	r->stat.majflt = t->maj_flt;
	r->stat.utime = t->utime;
	r->stat.stime = t->stime;
	r->stat.guest_time = t->gtime;
	r->stat.priority = (__u64)(__s64)(t->prio - 100);
	r->stat.nice = (__u64)(__s64)(t->static_prio - 120);
	r->stat.start = t->start_boottime / tick_ns;
	r->stat.signal = t->pending.signal.sig[0] & 0x7fffffffUL;
	r->stat.blocked = t->blocked.sig[0] & 0x7fffffffUL;
	r->stat.exit_signal = (__u64)(__s64)t->exit_signal;
	r->stat.processor = t->thread_info.cpu;
	r->stat.rt_priority = t->rt_priority;
	r->stat.policy = t->policy;
	r->stat.exit_code = (__u64)(__s64)t->exit_code;
	r->stat.delay_blkio = t->delays ? t->delays->blkio_delay / tick_ns : 0;
	/* lock_task_sighand() failing leaves /proc's defaults */
	r->stat.pgrp = (__u64)-1;
	r->stat.sid = (__u64)-1;
	r->stat.tpgid = (__u64)-1;
	r->stat.tty_nr = 0;
	r->stat.num_threads = 0;
	r->stat.sigignore = 0;
	r->stat.sigcatch = 0;
	r->stat.rsslim = 0;
	r->stat.ppid = 0;
	r->group_exit_code = 0;
	r->stat.cminflt = r->stat.cmajflt = r->stat.cutime = r->stat.cstime = r->stat.cguest_time = 0;
	r->group_prev_utime_ns = r->group_prev_stime_ns = 0;
	r->dead_utime_ns = r->dead_stime_ns = r->dead_run_ns = r->dead_gtime_ns = 0;
	r->dead_minflt = r->dead_majflt = 0;
	__builtin_memset(&r->dead_io, 0, sizeof(r->dead_io));
	fill_io(&r->io, &t->ioac);

	if (sig && sh) {
		r->flags |= ITER_HAS_SIGHAND;
		tty = sig->tty;
		if (tty) {
			struct tty_driver *drv = tty->driver;
			__u32 major = drv ? drv->major : 0, minor = drv ? drv->minor_start + tty->index : 0;

			r->stat.tpgid = pid_number(tty->ctrl.pgrp);
			/* new_encode_dev(tty_devnum(tty)) */
			r->stat.tty_nr = (minor & 0xff) | (major << 8) | ((minor & ~0xffu) << 12);
		}
		r->stat.num_threads = sig->nr_threads;
		fill_sigactions(r, sh);
		r->stat.rsslim = sig->rlim[RLIMIT_RSS_].rlim_cur;
		r->stat.sid = pid_number(sig->pids[PIDTYPE_SID]);
		r->stat.pgrp = pid_number(sig->pids[PIDTYPE_PGID]);
		r->stat.ppid = t->real_parent ? t->real_parent->tgid : 0;
		if (sig->flags & (SIGNAL_GROUP_EXIT_ | SIGNAL_STOP_STOPPED_)) {
			r->flags |= ITER_GROUP_EXIT;
			r->group_exit_code = (__u64)(__s64)sig->group_exit_code;
		}
	}
	if (sig) {
		r->stat.cminflt = sig->cmin_flt;
		r->stat.cmajflt = sig->cmaj_flt;
		r->stat.cutime = sig->cutime / tick_ns;
		r->stat.cstime = sig->cstime / tick_ns;
		r->stat.cguest_time = sig->cgtime / tick_ns;
		if (t->pid == t->tgid) {
			r->group_prev_utime_ns = sig->prev_cputime.utime;
			r->group_prev_stime_ns = sig->prev_cputime.stime;
			r->dead_utime_ns = sig->utime;
			r->dead_stime_ns = sig->stime;
			r->dead_run_ns = sig->sum_sched_runtime;
			r->dead_gtime_ns = sig->gtime;
			r->dead_minflt = sig->min_flt;
			r->dead_majflt = sig->maj_flt;
			fill_io(&r->dead_io, &sig->ioac);
		}
	}
	if (mm) {
		r->flags |= ITER_HAS_MM;
		fill_vm(r, t, mm);
	} else {
		__builtin_memset(&r->vm, 0, sizeof(r->vm));
		r->stat.vsize = r->stat.rss = 0;
		r->stat.startcode = r->stat.endcode = r->stat.startstack = 0;
		r->stat.start_data = r->stat.end_data = r->stat.start_brk = 0;
		r->stat.arg_start = r->stat.arg_end = r->stat.env_start = r->stat.env_end = 0;
	}
	bpf_seq_write(ctx->meta->seq, r, sizeof(*r));
	return 0;
}
