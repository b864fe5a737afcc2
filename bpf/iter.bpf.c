/*
 * iter.bpf.c: libvmon's task iterator (iter/task).  One read of the
 * iterator's fd runs vmon_tasks once per task of the system, threads
 * included, and writes one struct iter_rec (iter.h) per task: what
 * /proc/PID/task/TID/stat, statm, status (its memory lines) and io would
 * show for it, with what the thread group keeps of its exited threads on
 * the leader's record, so that user space (libvmon/sources/iter.c) adds up a
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
 * Most tasks are as they were at the last read, and most of the cost is
 * cache misses on the task's structures, so the program reads as little
 * as it can: user space says, in the held map, which record it holds of
 * each task (its hash); a record with that hash goes as its header alone.
 * And a process of one thread that has not run since that record, whose
 * memory and handlers nobody else shares, can have changed only in what
 * others change (fill_volatile()): when that is as it was, the header goes
 * without the rest being read (fill_stable()).
 *
 * vmon_tasks_walk gives the same records in one call, walking the task
 * list itself, into a ring buffer; user space reads it where the records
 * of a pass fit the ring (a system at rest), vmon_tasks otherwise.  Built
 * a second time without it (VMON_ITER_COMPAT) for kernels before 6.12.
 *
 * Read with CO-RE, direct loads through the task's BTF pointers.
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
#define T_WAKING		0x200
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
#define MM_COUNTERS_		4

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
	/* the first pid namespace's number: the iterator is used only there (libvmon/sources/iter.c) */
	return pid ? (__u64)pid->numbers[0].nr : 0;
}

/*
 * The memory counters (mm->rss_stat[]) are per-CPU counters: a count, and
 * on each CPU a share of at most percpu_counter_batch pages not yet folded
 * into it.  stat's rss reads the count alone (get_mm_counter(),
 * percpu_counter_read_positive()); statm and status add up the shares
 * (get_mm_counter_sum(), since Linux 6.16), and that is what ps, top and
 * htop show.  The record has both: stat's figure, and statm's and status's.
 *
 * A share lives at the counter's per-CPU pointer plus the CPU's per-CPU
 * offset (__per_cpu_offset[cpu]), which this kernel's BTF does not tag and
 * whose symbol kallsyms does not hold (no CONFIG_KALLSYMS_ALL), so the
 * offsets are found through a per-CPU map of our own: the address
 * bpf_map_lookup_percpu_elem() gives for a CPU, less the map's per-CPU
 * pointer (struct bpf_array's pptrs[0]), is that CPU's offset.  They never
 * change after boot: found once, at the first task of the first read.
 * (The helper is Linux 5.19's; the program needs 6.2: libvmon/sources/iter.c.)
 */
#define CPUS_MAX	8192	/* NR_CPUS at most */

const volatile __u32 nr_cpus = 1;	/* possible CPUs (nr_cpu_ids), set by user space */
__u32 cpu_offsets_nr;			/* found, 0: not yet */
bool cpu_offsets_tried;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cpu_probe SEC(".maps");

/*
 * The offsets, by CPU: a map of nr_cpus entries (user space sizes it before
 * loading), not an array in .bss, which the light skeleton maps into every
 * client whole (64 KiB for CPUS_MAX, resident from the start).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);		/* nr_cpus */
	__type(key, __u32);
	__type(value, __u64);
} cpu_offsets SEC(".maps");

/* a pointer's value as a number (a copy through the stack: the verifier lets CAP_PERFMON read it so) */
static __always_inline __u64 address_of(const void *p)
{
	__u64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), &p);
	return v;
}

static int find_cpu_offset(__u32 cpu, void *ctx)
{
	__u64 *base = ctx;
	__u32 zero = 0;
	void *share = bpf_map_lookup_percpu_elem(&cpu_probe, &zero, cpu);
	__u64 *offset = bpf_map_lookup_elem(&cpu_offsets, &cpu);

	if (!share || !offset)
		return 1;
	*offset = address_of(share) - *base;
	cpu_offsets_nr = cpu + 1;
	return 0;
}

static __always_inline void find_cpu_offsets(void)
{
	__u64 base = 0, array;

	cpu_offsets_tried = true;
	array = address_of(&cpu_probe);
	if (bpf_probe_read_kernel(&base, sizeof(base), (void *)(array + bpf_core_field_offset(struct bpf_array, pptrs))) ||
	    !base)
		return;
	bpf_loop(nr_cpus < CPUS_MAX ? nr_cpus : CPUS_MAX, find_cpu_offset, &base, 0);
}

/* the four counters of an mm, each its count and the CPUs' shares added up */
struct rss_sums {
	__u64	shares[MM_COUNTERS_];	/* each counter's per-CPU pointer */
	__s64	sum[MM_COUNTERS_];
};

/* Linux 6.2, which the program needs anyway (libvmon/sources/iter.c) */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

/*
 * One CPU's shares, each read by a load of the program's own: the address
 * taken as a refcount_struct (an int at its start, as a share is), read
 * only, whose loads the kernel guards as bpf_probe_read_kernel() does (a
 * bad address reads 0).  The verifier makes the cast a move of a register,
 * so there is no call left: a helper call a CPU a task was most of what
 * the shares cost.
 */
static __always_inline void add_shares(struct rss_sums *c, __u64 off)
{
	for (int i = 0; i < MM_COUNTERS_; i++) {
		struct refcount_struct *share = bpf_rdonly_cast((void *)(c->shares[i] + off),
								bpf_core_type_id_kernel(struct refcount_struct));

		c->sum[i] += share->refs.counter;
	}
}

static int add_cpu_shares(__u32 cpu, void *ctx)
{
	__u64 *offset = bpf_map_lookup_elem(&cpu_offsets, &cpu);

	if (!offset)
		return 1;
	add_shares(ctx, *offset);
	return 0;
}

/* up to this many CPUs, a plain loop: bpf_loop()'s calls cost as much as the reads */
#define CPUS_INLINE	4

/* percpu_counter_read_positive() */
static __always_inline __u64 counter_read(struct percpu_counter *c)
{
	s64 v = c->count;

	return v > 0 ? (__u64)v : 0;
}

/* the memory figures that change without the task running (reclaim, swap, page cache truncation, khugepaged, VFIO) */
static __always_inline void fill_vm_volatile(struct iter_rec *r, struct mm_struct *mm)
{
	__u32 kb = page_shift - 10;
	struct rss_sums c;

	if (!cpu_offsets_tried)
		find_cpu_offsets();
	for (int i = 0; i < MM_COUNTERS_; i++) {
		c.shares[i] = (__u64)mm->rss_stat[i].counters;
		c.sum[i] = mm->rss_stat[i].count;
	}
	if (cpu_offsets_nr > CPUS_INLINE) {
		bpf_loop(cpu_offsets_nr, add_cpu_shares, &c, 0);
	} else {
		for (__u32 cpu = 0; cpu < CPUS_INLINE; cpu++) {
			__u64 *offset = cpu < cpu_offsets_nr ? bpf_map_lookup_elem(&cpu_offsets, &cpu) : NULL;

			if (offset)
				add_shares(&c, *offset);
		}
	}
	/* get_mm_counter_sum(): percpu_counter_sum_positive() */
	for (int i = 0; i < MM_COUNTERS_; i++) {
		if (c.sum[i] < 0)
			c.sum[i] = 0;
	}
	r->vm.rss_file_kb = (__u64)c.sum[MM_FILEPAGES_] << kb;
	r->vm.rss_anon_kb = (__u64)c.sum[MM_ANONPAGES_] << kb;
	r->vm.rss_shmem_kb = (__u64)c.sum[MM_SHMEMPAGES_] << kb;
	r->vm.swap_kb = (__u64)c.sum[MM_SWAPENTS_] << kb;
	/* stat's rss: get_mm_rss(), the counts alone */
	r->stat.rss = counter_read(&mm->rss_stat[MM_FILEPAGES_]) + counter_read(&mm->rss_stat[MM_ANONPAGES_]) +
		      counter_read(&mm->rss_stat[MM_SHMEMPAGES_]);
	r->vm.pte_kb = (__u64)mm->pgtables_bytes.counter >> 10;
	r->vm.hugetlb_kb = (__u64)mm->hugetlb_usage.counter << kb;
	r->vm.pinned_kb = (__u64)mm->pinned_vm.counter << kb;
	/* VFIO accounts pinned pages of a process in locked_vm, from whoever holds the container */
	r->vm.locked_kb = mm->locked_vm << kb;
}

/* the rest, which only the mm's own users change; after fill_vm_volatile() */
static __always_inline void fill_vm_stable(struct iter_rec *r, struct mm_struct *mm)
{
	__u64 text, lib, rss, hwm, peak;
	__u32 kb = page_shift - 10;
	unsigned long page_mask = ~((1UL << page_shift) - 1);

	rss = (r->vm.rss_anon_kb + r->vm.rss_file_kb + r->vm.rss_shmem_kb) >> kb;
	r->vm.size_pages = mm->total_vm;
	r->vm.resident_pages = rss;
	r->vm.shared_pages = (r->vm.rss_file_kb + r->vm.rss_shmem_kb) >> kb;
	text = ((mm->end_code + ~page_mask) & page_mask) - (mm->start_code & page_mask);
	r->vm.text_pages = text >> page_shift;
	r->vm.data_pages = mm->data_vm + mm->stack_vm;

	peak = mm->total_vm > mm->hiwater_vm ? mm->total_vm : mm->hiwater_vm;
	hwm = rss > mm->hiwater_rss ? rss : mm->hiwater_rss;
	if (text > (mm->exec_vm << page_shift))
		text = mm->exec_vm << page_shift;
	lib = (mm->exec_vm << page_shift) - text;
	r->vm.peak_kb = peak << kb;
	r->vm.hwm_kb = hwm << kb;
	r->vm.data_kb = mm->data_vm << kb;
	r->vm.stack_kb = mm->stack_vm << kb;
	r->vm.lib_kb = lib >> 10;

	/* stat's memory fields */
	r->stat.vsize = mm->total_vm << page_shift;
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

/*
 * What user space holds (libvmon/sources/iter_held.c writes it, mmapped,
 * between reads): for each task it has a record of, that record's hash, the
 * hash of its volatile part and its run figures (has it run since?), in an
 * entry of the held map, in the order the walk meets the tasks; held_at
 * says which entry is tid's, in one of the ITER_HELD_PROBES entries from
 * iter_held_home() on (bpf/iter.h).  A task it has no entry for gets whole
 * records.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);		/* sized by user space before loading */
	__type(key, __u32);
	__type(value, struct iter_held);
} held SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);		/* sized by user space before loading: held_mask + 1 */
	__type(key, __u32);
	__type(value, struct iter_held_at);
} held_at SEC(".maps");

const volatile __u32 held_mask = 0;	/* of held_at */

/* the held entry after the last one found: where the next task's is, as a rule */
__u32 held_next;
/* the entries of this read found through held_at, out of the walk's order (user space orders them again) */
__u32 held_jumps;

/*
 * The entry user space holds of task tid, or NULL.  Looked for first
 * where the walk's order puts it, held_next and the entry after it (the
 * last task's entry, or a task gone between), then through held_at: its
 * probes until a free one.  *index: 1 + where it was found, which the
 * record's header tells user space so that it need not look for it again
 * (0: none).  A tid has one entry at most, so an entry with the tid is
 * the task's wherever it is found.
 */
static __always_inline struct iter_held *held_find(__u32 tid, __u32 *index)
{
	__u32 home = iter_held_home(tid, held_mask), i = held_next;
	struct iter_held *e;

	*index = 0;
	e = bpf_map_lookup_elem(&held, &i);
	if (e && e->tid == tid)
		goto found;
	i++;
	e = bpf_map_lookup_elem(&held, &i);
	if (e && e->tid == tid)
		goto found;
	for (__u32 n = 0; n < ITER_HELD_PROBES && n <= held_mask; n++) {
		__u32 k = (home + n) & held_mask;
		struct iter_held_at *at = bpf_map_lookup_elem(&held_at, &k);

		if (!at || !at->tid)
			return NULL;
		if (at->tid == tid) {
			i = at->entry;
			e = bpf_map_lookup_elem(&held, &i);
			if (e && e->tid == tid) {
				held_jumps++;
				goto found;
			}
			return NULL;
		}
	}
	return NULL;
found:
	*index = i + 1;
	held_next = i + 1;
	return e;
}

/*
 * The record's hash: four lanes of (rotate, xor, multiply), each step a
 * bijection of the lane for a given word and of the word for a given lane,
 * so that any one word changed changes the hash; independent lanes keep the
 * multiplies from waiting on each other.
 */
#define HASH_K	0x9e3779b97f4a7c15ULL
/* the record up to its wchan, which a task that did not run is not read for (fill_wchan()) */
#define HASHED_WORDS	((int)(__builtin_offsetof(struct iter_rec, wchan_state) / 8))

static __always_inline __u64 rotl27(__u64 x)
{
	return (x << 27) | (x >> 37);
}

/* one step of a lane */
static __always_inline __u64 mix(__u64 h, __u64 w)
{
	return (rotl27(h) ^ w) * HASH_K;
}

static __always_inline __u64 rec_hash(const struct iter_rec *r)
{
	const __u64 *w = (const __u64 *)r;
	__u64 h0 = 1, h1 = 2, h2 = 3, h3 = 4;
	int i;

	for (i = 0; i + 4 <= HASHED_WORDS; i += 4) {
		h0 = mix(h0, w[i]);
		h1 = mix(h1, w[i + 1]);
		h2 = mix(h2, w[i + 2]);
		h3 = mix(h3, w[i + 3]);
	}
	for (; i < HASHED_WORDS; i++)
		h0 = mix(h0, w[i]);
	return h0 ^ rotl27(h1) ^ (h2 << 1 | h2 >> 63) ^ (h3 * HASH_K);
}

/*
 * The hash of what fill_volatile() read: the fields that can change while
 * the task does not run, whether it shares its memory or its signal
 * handlers with another process, and its start time (a task of a reused
 * tid that has not run yet is not the task held).  Never 0 (0: none made).
 */
static __always_inline __u64 volatile_hash(const struct iter_rec *r, __u64 start_ns, __u64 mm_users,
					   __u64 sighand_users)
{
	/* four lanes, as rec_hash(): with two, the multiplies in a row were a wait of their own (tests/bench/bpf_lines.py) */
	__u64 h0 = 5, h1 = 6, h2 = 7, h3 = 8;

	h0 = mix(h0, r->h.flags);
	h1 = mix(h1, r->stat.state);
	h2 = mix(h2, r->stat.flags);
	h3 = mix(h3, r->stat.processor);
	h0 = mix(h0, r->stat.priority);
	h1 = mix(h1, r->stat.nice);
	h2 = mix(h2, r->stat.rt_priority);
	h3 = mix(h3, r->stat.policy);
	h0 = mix(h0, r->stat.signal);
	h1 = mix(h1, r->stat.blocked);
	h2 = mix(h2, r->stat.exit_code);
	h3 = mix(h3, r->stat.exit_signal);
	h0 = mix(h0, r->stat.ppid);
	h1 = mix(h1, r->stat.num_threads);
	h2 = mix(h2, r->group_exit_code);
	h3 = mix(h3, r->stat.pgrp);
	h0 = mix(h0, r->stat.sid);
	h1 = mix(h1, r->stat.tty_nr);
	h2 = mix(h2, r->stat.tpgid);
	h3 = mix(h3, r->stat.rsslim);
	h0 = mix(h0, r->vm.rss_file_kb);
	h1 = mix(h1, r->vm.rss_anon_kb);
	h2 = mix(h2, r->vm.rss_shmem_kb);
	h3 = mix(h3, r->vm.swap_kb);
	h0 = mix(h0, r->vm.pte_kb);
	h1 = mix(h1, r->vm.hugetlb_kb);
	h2 = mix(h2, r->stat.rss);
	h3 = mix(h3, r->vm.pinned_kb);
	h0 = mix(h0, mm_users);
	h1 = mix(h1, sighand_users);
	h2 = mix(h2, start_ns);
	h3 = mix(h3, r->vm.locked_kb);
	return (h0 ^ rotl27(h1) ^ (h2 << 1 | h2 >> 63) ^ (h3 * HASH_K)) | 1;
}

/* one record per task; struct iter_rec is too large for the BPF stack */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct iter_rec);
} scratch SEC(".maps");

/*
 * What can change while the task does not run: its state, scheduling,
 * pending signals, parent, group, terminal, limits, thread count and the
 * memory counters others move.  Returns volatile_hash() of it.
 */
static __always_inline __u64 fill_volatile(struct iter_rec *r, struct task_struct *t, struct task_struct *u,
					   struct signal_struct *sig, struct sighand_struct *sh, struct mm_struct *mm)
{
	struct tty_struct *tty;

	r->h.tid = t->pid;
	r->h.tgid = t->tgid;
	r->h.flags = 0;
	r->h.held = 0;		/* in the hash as 0: set as the record goes (vmon_tasks()) */
	r->h.hash = 0;
	r->h.volatile_hash = 0;
	if (t->flags & PF_KTHREAD_)
		r->h.flags |= ITER_KTHREAD;
	if (t->flags & PF_WQ_WORKER_)
		r->h.flags |= ITER_WQ_WORKER;
	r->run_ns = t->se.sum_exec_runtime;
	r->run_count = t->sched_info.pcount;

	r->stat.pid = t->pid;
	r->stat.state = state_letter(t->__state, t->exit_state);
	r->stat.flags = t->flags;
	r->stat.priority = (__u64)(__s64)(t->prio - 100);
	r->stat.nice = (__u64)(__s64)(t->static_prio - 120);
	r->stat.signal = t->pending.signal.sig[0] & 0x7fffffffUL;
	r->stat.blocked = t->blocked.sig[0] & 0x7fffffffUL;
	r->stat.exit_signal = (__u64)(__s64)t->exit_signal;
	r->stat.processor = t->thread_info.cpu;
	r->stat.rt_priority = t->rt_priority;
	r->stat.policy = t->policy;
	r->stat.exit_code = (__u64)(__s64)t->exit_code;
	/* lock_task_sighand() failing leaves /proc's defaults */
	r->stat.pgrp = (__u64)-1;
	r->stat.sid = (__u64)-1;
	r->stat.tpgid = (__u64)-1;
	r->stat.tty_nr = 0;
	r->stat.num_threads = 0;
	r->stat.rsslim = 0;
	r->stat.ppid = 0;
	r->group_exit_code = 0;
	if (sig && sh) {
		r->h.flags |= ITER_HAS_SIGHAND;
		tty = sig->tty;
		if (tty) {
			struct tty_driver *drv = tty->driver;
			__u32 major = drv ? drv->major : 0, minor = drv ? drv->minor_start + tty->index : 0;

			r->stat.tpgid = pid_number(tty->ctrl.pgrp);
			/* new_encode_dev(tty_devnum(tty)) */
			r->stat.tty_nr = (minor & 0xff) | (major << 8) | ((minor & ~0xffu) << 12);
		}
		r->stat.num_threads = sig->nr_threads;
		r->stat.rsslim = sig->rlim[RLIMIT_RSS_].rlim_cur;
		r->stat.sid = pid_number(sig->pids[PIDTYPE_SID]);
		r->stat.pgrp = pid_number(sig->pids[PIDTYPE_PGID]);
		r->stat.ppid = u->real_parent ? u->real_parent->tgid : 0;
		if (sig->flags & (SIGNAL_GROUP_EXIT_ | SIGNAL_STOP_STOPPED_)) {
			r->h.flags |= ITER_GROUP_EXIT;
			r->group_exit_code = (__u64)(__s64)sig->group_exit_code;
		}
	}
	if (mm) {
		r->h.flags |= ITER_HAS_MM;
		fill_vm_volatile(r, mm);
	} else {
		/* the hash below reads these: not the last task's */
		r->vm.rss_file_kb = r->vm.rss_anon_kb = r->vm.rss_shmem_kb = r->vm.swap_kb = 0;
		r->vm.pte_kb = r->vm.hugetlb_kb = r->vm.pinned_kb = r->vm.locked_kb = 0;
		r->stat.rss = 0;
	}
	return volatile_hash(r, t->start_boottime, mm ? (__u64)mm->mm_users.counter : 0,
			     sh ? (__u64)sh->count.refs.counter : 0);
}

/*
 * The rest of the record, which only the task (or its thread group, or
 * what shares its memory or handlers) changes by running.  After
 * fill_volatile().
 */
static __always_inline void fill_stable(struct iter_rec *r, struct task_struct *t, struct task_struct *u,
					struct signal_struct *sig, struct sighand_struct *sh, struct mm_struct *mm)
{
	/* a plain copy: comm is always NUL-terminated (and the helper costs more than the rest) */
	__builtin_memcpy(r->comm, t->comm, sizeof(r->comm));
	r->prev_utime_ns = t->prev_cputime.utime;
	r->prev_stime_ns = t->prev_cputime.stime;
	r->stat.minflt = t->min_flt;
	r->stat.majflt = t->maj_flt;
	r->stat.utime = t->utime;
	r->stat.stime = t->stime;
	r->stat.guest_time = t->gtime;
	r->stat.start = t->start_boottime / tick_ns;
	r->stat.delay_blkio = u->delays ? u->delays->blkio_delay / tick_ns : 0;
	fill_io(&r->io, &t->ioac);
	/* status's context switches: the task's own, counted as it leaves the CPU */
	r->sched.voluntary_ctxt = t->nvcsw;
	r->sched.involuntary_ctxt = t->nivcsw;
	/* task_dump_owner() for a directory: /proc/PID's owner does not follow dumpability, its files' do */
	r->uid = (t->flags & PF_KTHREAD_) ? 0 : u->real_cred->euid.val;
	r->pad2 = 0;

	/*
	 * The 31 dispositions (16 cache lines), read whenever the record is
	 * made whole: a process of one thread that did not run since the
	 * record held mostly goes by fill_record()'s test before this, and
	 * the held entry has no room for them (32 bytes, bpf/iter.h).
	 */
	r->stat.sigignore = 0;
	r->stat.sigcatch = 0;
	if (sig && sh)
		fill_sigactions(r, sh);

	r->stat.cminflt = r->stat.cmajflt = r->stat.cutime = r->stat.cstime = r->stat.cguest_time = 0;
	r->group_prev_utime_ns = r->group_prev_stime_ns = 0;
	r->dead_utime_ns = r->dead_stime_ns = r->dead_run_ns = r->dead_gtime_ns = 0;
	r->dead_minflt = r->dead_majflt = 0;
	__builtin_memset(&r->dead_io, 0, sizeof(r->dead_io));
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
		fill_vm_stable(r, mm);
	} else {
		__builtin_memset(&r->vm, 0, sizeof(r->vm));
		r->stat.vsize = r->stat.rss = 0;
		r->stat.startcode = r->stat.endcode = r->stat.startstack = 0;
		r->stat.start_data = r->stat.end_data = r->stat.start_brk = 0;
		r->stat.arg_start = r->stat.arg_end = r->stat.env_start = r->stat.env_end = 0;
	}
}

/*
 * /proc/PID/wchan: get_wchan(), 0 for a task running, waking or on a run
 * queue, else the first return address on its stack outside the scheduler
 * and the lock functions, named.  bpf_get_task_stack() takes the stack as
 * stack_trace_save_tsk() does, which leaves those functions out itself, so
 * its first entry is that address; %pB names address - 1 (a return
 * address's call), so it is given address + 1 to name the address itself,
 * as /proc does.  Read only for a task that ran since the record user space
 * holds (or none is held): one that did not sleeps where it slept.  Without
 * the kernel's locks the task can wake meanwhile: then nothing is given
 * (user space reads /proc).
 */
/*
 * The names %pB gave, by address: most tasks that ran sleep again where
 * many others do (a pipe's read, a poll, a futex), and the lookup in the
 * kernel's symbol table is most of what wchan costs.  Only a name of the
 * kernel's own text is kept, which nothing loaded later can replace at that
 * address: one found ('+'), whole, neither a module's (" [module]") nor
 * BPF's.  BPF programs, trampolines and dispatchers are named without a
 * module ("bpf_prog_<tag>_<name>", "bpf_trampoline_<key>",
 * "bpf_dispatcher_<name>") and their text is freed and reused at the same
 * addresses: a task blocked under an fexit program on a lock function sleeps
 * in a trampoline, whose address may be another program's a moment later.
 * A name of the kernel's own beginning "bpf_" is looked up each time.
 */
struct wchan_name {
	char	s[ITER_WCHAN_LEN];
};

/* set by user space before each read: the caller does not want wchan (VMON_FLAG_NO_WCHAN) */
__u32 wchan_off;

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, struct wchan_name);
} wchan_names SEC(".maps");

/* a name %pB gave (n its length, the NUL counted) that wchan_names may keep */
static __always_inline bool wchan_name_lasts(const char *s, long n)
{
	bool plus = false;

	if (n > ITER_WCHAN_LEN)
		return false;
	if (s[0] == 'b' && s[1] == 'p' && s[2] == 'f' && s[3] == '_')
		return false;
	for (int i = 0; i < ITER_WCHAN_LEN && s[i]; i++) {
		if (s[i] == '[')
			return false;
		if (s[i] == '+')
			plus = true;
	}
	return plus;
}

static __always_inline void fill_wchan(struct iter_rec *r, struct task_struct *t, const struct iter_held *e)
{
	static const char fmt[] = "%pB";
	unsigned int state = t->__state;
	struct wchan_name *name;
	__u64 ip[1], arg[1];
	long n;

	r->wchan_state = ITER_WCHAN_NONE;
	r->pad3 = 0;
	if (wchan_off)
		return;
	/* helpers of Linux 5.9 and 5.13: without them, /proc (the iterator itself needs 5.8) */
	if (!bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_task_stack) ||
	    !bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_snprintf))
		return;
	if (state == 0 || state == T_WAKING || t->on_rq) {
		r->wchan_state = ITER_WCHAN_RUNNABLE;
		return;
	}
	if ((e && iter_held_not_run(e, r->run_ns, r->run_count)) || t->on_cpu)
		return;
	n = bpf_get_task_stack(t, ip, sizeof(ip), 0);
	if (n < (long)sizeof(ip[0]) || !ip[0])
		return;
	if (t->__state != state || t->on_rq || t->on_cpu || t->sched_info.pcount != r->run_count)
		return;
	name = bpf_map_lookup_elem(&wchan_names, &ip[0]);
	if (name) {
		__builtin_memcpy(r->wchan, name->s, sizeof(r->wchan));
		r->wchan_state = ITER_WCHAN_SYMBOL;
		return;
	}
	/* zeros after the name: the name kept is those bytes, not another task's behind them */
	__builtin_memset(r->wchan, 0, sizeof(r->wchan));
	arg[0] = ip[0] + 1;
	n = bpf_snprintf(r->wchan, sizeof(r->wchan), fmt, arg, sizeof(arg));
	if (n <= 0)
		return;
	r->wchan_state = ITER_WCHAN_SYMBOL;
	if (wchan_name_lasts(r->wchan, n))
		bpf_map_update_elem(&wchan_names, &ip[0], r->wchan, BPF_ANY);
}

/*
 * Ask for the cache lines the record reads of an unchanged task, all at
 * once, before reading any.  At rest, each task costs its lines' trips to
 * memory (perf: the loads of the memory counters, the terminal and the
 * handlers' count had most of task_record's samples), and in the order
 * fill_volatile() reads, each trip waited for the one before: these loads
 * depend on nothing but the first level of pointers, so the CPU has them
 * in flight together, and the reads after them find the lines there.
 */
static __always_inline void lines_ask(struct task_struct *t, struct task_struct *u)
{
	struct signal_struct *sig = u->signal;
	struct sighand_struct *sh = u->sighand;
	struct task_struct *parent = u->real_parent;
	struct mm_struct *mm = u->mm;
	__u64 v;

	v = t->__state ^ t->prio ^ t->se.sum_exec_runtime ^ t->policy ^ t->sched_info.pcount ^ t->pid ^ t->exit_code ^
	    t->start_boottime ^ t->pending.signal.sig[0];
	if (parent)
		v ^= parent->tgid;
	if (sig)
		v ^= sig->nr_threads ^ sig->flags ^ !sig->pids[PIDTYPE_SID] ^ !sig->tty ^ sig->rlim[RLIMIT_RSS_].rlim_cur;
	if (sh)
		v ^= sh->count.refs.counter;
	if (mm)
		v ^= mm->rss_stat[MM_FILEPAGES_].count ^ mm->rss_stat[MM_ANONPAGES_].count ^
		     mm->rss_stat[MM_SWAPENTS_].count ^ mm->rss_stat[MM_SHMEMPAGES_].count ^ mm->pgtables_bytes.counter ^
		     mm->pinned_vm.counter ^ mm->locked_vm ^ mm->hugetlb_usage.counter ^ mm->mm_users.counter;
	/* the loads are wanted, not their value (pointers go in by a test: the verifier allows no arithmetic on them) */
	asm volatile("" : : "r"(v));
}

/*
 * The rest of a task's record, once fill_volatile() found that the record
 * user space holds (e, or none) may not be this one: its stable part, its
 * wchan, the hash, and the record's size as fill_record() gives it.
 *
 * A global function in the object with the walk (which needs Linux 6.12;
 * a global function's trusted argument, 6.8): the verifier checks it once,
 * on its own, where inline it checked it again on every path that reached
 * it through fill_volatile()'s branches (the signal struct or not, the mm
 * or not, a terminal or not, a held entry or not).  With the pointers read
 * through the alias (fill_record()), `vtop -b -n 1` beside about 70
 * processes went from 0.18 to 0.06 s of CPU (tests/bench/README.md).  The
 * call is made only for a task that may have changed; an idle one ends
 * before it.  Inline in iter_compat (Linux 6.2 to 6.11).
 *
 * Such a function takes no untrusted pointer, so it reads the task's
 * signal, sighand and mm again: the task may have let go of its sighand or
 * its mm since fill_volatile() read them (release_task(), exit_mm()).  The
 * record then says so, after fill_stable() (a test before it, on the flag,
 * cost the check 30 ms a start): without ITER_HAS_MM its memory figures are
 * zeros, as /proc's are once the mm is gone; without ITER_HAS_SIGHAND user
 * space takes it as a task being reaped (rec_reaped()).  The flags are only
 * cleared here: a kernel thread that took an mm in between
 * (kthread_use_mm()) gets the layout in its stat part and no vm part, a
 * task that exec'd in between the old mm's counters and the new one's
 * layout.  Both ran, and their next records are read whole again.
 */
#ifndef VMON_ITER_COMPAT
#define REST_FN		__noinline
#define ARG_TRUSTED	__attribute__((btf_decl_tag("arg:trusted")))
#else
#define REST_FN		static __always_inline
#define ARG_TRUSTED
#endif

REST_FN int record_rest(struct iter_rec *r, struct task_struct *t ARG_TRUSTED, struct iter_held *e,
			__u32 held_index, __u64 vhash)
{
	struct signal_struct *sig;
	struct sighand_struct *sh;
	struct task_struct *u;
	struct mm_struct *mm;

	/* (r is the scratch record, never NULL: the check is the verifier's) */
	if (!r || !t)
		return 0;
	u = bpf_rdonly_cast(t, bpf_core_type_id_kernel(struct task_struct));
	sig = u->signal;
	sh = u->sighand;
	mm = u->mm;
	fill_stable(r, t, u, sig, sh, mm);
	if (!(sig && sh))
		r->h.flags &= ~ITER_HAS_SIGHAND;
	if (!mm)
		r->h.flags &= ~ITER_HAS_MM;
	fill_wchan(r, t, e);
	r->h.hash = rec_hash(r);
	r->h.volatile_hash = vhash;
	r->h.held = held_index;
	if (e && e->hash == r->h.hash) {
		/* user space holds this record: the header says so */
		r->h.flags |= ITER_SAME;
		if (e->volatile_hash == vhash)
			r->h.flags |= ITER_VOLATILE_SAME;
		return sizeof(r->h);
	}
	return sizeof(*r);
}

/*
 * The record of task t in *r, sized: its header alone (ITER_SAME) when
 * user space holds it, else the whole record.  Both programs below make
 * their records so.
 *
 * The pointers in the task (signal, sighand, mm, real_parent, delays,
 * real_cred) are read through u, an untrusted alias of it
 * (bpf_rdonly_cast()), and its other fields through t.  For each pointer
 * loaded through a trusted one, the verifier looks up by name, type by type
 * through the kernel's BTF, whether that pointer is trusted too: that was
 * 45 % of loading the programs (perf of `vtop -b -n 1 --source iter
 * --backend none`); none of these needs to be, they are only read through.
 * The other fields stay loads through t: through an untrusted pointer each
 * load is guarded (BPF_PROBE_MEM), and all of them so cost 12 % more a
 * refresh of vtop -b at 10,000 processes.
 */
static __always_inline int fill_record(struct task_struct *t, struct iter_rec *r)
{
	struct task_struct *u = bpf_rdonly_cast(t, bpf_core_type_id_kernel(struct task_struct));
	struct signal_struct *sig;
	struct sighand_struct *sh;
	struct mm_struct *mm;
	struct iter_held *e;
	__u32 held_index;
	__u64 vhash;

	lines_ask(t, u);
	/* the record user space holds of this task, if any */
	e = held_find((__u32)t->pid, &held_index);
	sig = u->signal;
	sh = u->sighand;
	mm = u->mm;

	/*
	 * No memset of the whole record (it showed in profiles): every field
	 * is written by fill_volatile() and fill_stable(), the conditional
	 * ones in both branches.
	 */
	vhash = fill_volatile(r, t, u, sig, sh, mm);
	/*
	 * A process of one thread, not running and not run since the record
	 * user space holds, its memory and handlers its own then and now (in
	 * the hash), whose volatile part is as it was: nothing else of it can
	 * have changed, so that record is this one, without reading the rest.
	 */
	if (e && e->volatile_hash == vhash && t->pid == t->tgid && r->stat.num_threads == 1 &&
	    iter_held_not_run(e, r->run_ns, r->run_count) && !t->on_cpu &&
	    (!mm || mm->mm_users.counter == 1) && (!sh || sh->count.refs.counter == 1)) {
		r->h.flags |= ITER_SAME | ITER_VOLATILE_SAME;
		r->h.hash = e->hash;
		r->h.volatile_hash = vhash;
		r->h.held = held_index;
		return sizeof(r->h);
	}
	return record_rest(r, t, e, held_index, vhash);
}

#ifndef VMON_ITER_COMPAT
/*
 * fill_record() for the walk, in the scratch record: a function of its
 * own, which the verifier checks once; inline in the walk's loop, the
 * loop's states did not converge.  0 without the scratch record.
 */
__noinline int task_record(struct task_struct *t __attribute__((btf_decl_tag("arg:trusted"))))
{
	__u32 zero = 0;
	struct iter_rec *r = bpf_map_lookup_elem(&scratch, &zero);

	if (!r || !t)
		return 0;
	return fill_record(t, r);
}
#endif

SEC("iter/task")
int vmon_tasks(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct iter_rec *r;
	__u32 zero = 0;
	int size;

	if (!t)
		return 0;
	if (ctx->meta->seq_num == 0)
		held_next = held_jumps = 0;
	r = bpf_map_lookup_elem(&scratch, &zero);
	if (!r)
		return 0;
	size = fill_record(t, r);
	/* one of two sizes, each a constant to the verifier */
	if (size == sizeof(r->h))
		bpf_seq_write(ctx->meta->seq, r, sizeof(r->h));
	else if (size == sizeof(*r))
		bpf_seq_write(ctx->meta->seq, r, sizeof(*r));
	return 0;
}

/*
 * The same records in one call, walking the task list with the open-coded
 * task iterator (Linux 6.7; task_record()'s trusted argument, 6.8; the
 * iterator's task taken by bpf_task_acquire(), 6.12).  The
 * iterator above finds each task through the pid table, takes a reference
 * on it and calls the program through the seq_file: with a program that
 * did nothing, 0.7 us a task of the kernel's time at 10,000 tasks, more
 * than the program itself.  Attached as an iterator of one task (the
 * process's first thread): the program runs once, for it, and walks all.
 * The records go to walk_ring, those the same as held 4 bytes each in
 * batches (iter.h: struct iter_same); one that finds no room ends the walk
 * with WALK_FULL, and user space reads the iterator above instead for that
 * pass (libvmon/sources/iter.c): a walk is whole or not used.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);	/* sized by user space before loading */
} walk_ring SEC(".maps");

/* what the last walk did (WALK_*), and the tasks it wrote */
__u32 walk_status;
__u32 walk_tasks;

/* the batch of tasks the same (bpf/iter.h) being made */
struct same_batch {
	struct iter_hdr		h;
	struct iter_same	e[ITER_SAME_BATCH_MAX + 1];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct same_batch);
} batch SEC(".maps");

/* the batch into the ring, if it has any: 0, or not (no room) */
static __always_inline long batch_flush(struct same_batch *b)
{
	__u32 n = b->h.held & ITER_SAME_BATCH_MAX;
	long err;

	if (!n)
		return 0;
	err = bpf_ringbuf_output(&walk_ring, b, sizeof(b->h) + n * sizeof(b->e[0]), BPF_RB_NO_WAKEUP);
	b->h.held = 0;
	return err;
}

#ifndef VMON_ITER_COMPAT
extern int bpf_iter_task_new(struct bpf_iter_task *it, struct task_struct *task, unsigned int flags) __weak __ksym;
extern struct task_struct *bpf_iter_task_next(struct bpf_iter_task *it) __weak __ksym;
extern void bpf_iter_task_destroy(struct bpf_iter_task *it) __weak __ksym;
extern struct task_struct *bpf_task_acquire(struct task_struct *p) __weak __ksym;
extern void bpf_task_release(struct task_struct *p) __weak __ksym;

SEC("iter/task")
int vmon_tasks_walk(struct bpf_iter__task *ctx)
{
	struct bpf_iter_task it;
	struct task_struct *t, *held;
	struct same_batch *b;
	struct iter_rec *r;
	__u32 zero = 0, n = 0;
	long err = 0;
	int size;

	if (!ctx->task)
		return 0;
	walk_tasks = 0;
	walk_status = WALK_NONE;
	held_next = held_jumps = 0;
	r = bpf_map_lookup_elem(&scratch, &zero);
	b = bpf_map_lookup_elem(&batch, &zero);
	if (!r || !b)
		return 0;
	__builtin_memset(&b->h, 0, sizeof(b->h));
	b->h.flags = ITER_SAME_BATCH;
	bpf_iter_task_new(&it, NULL, BPF_TASK_ITER_ALL_THREADS);
	while ((t = bpf_iter_task_next(&it))) {
		/* the idle tasks (pid 0), which the iterator above does not show either */
		if (!t->pid)
			continue;
		held = bpf_task_acquire(t);
		if (!held)
			continue;
		size = task_record(held);
		bpf_task_release(held);
		if (size == sizeof(r->h) &&
		    (r->h.flags & (ITER_SAME | ITER_VOLATILE_SAME)) == (ITER_SAME | ITER_VOLATILE_SAME)) {
			__u32 i = b->h.held & ITER_SAME_BATCH_MAX;

			b->e[i].held = r->h.held;
			b->h.held = i + 1;
			if (i + 1 == ITER_SAME_BATCH_MAX)
				err = batch_flush(b);
		} else {
			/*
			 * The batch of the tasks before it first: the ring in the
			 * walk's order, which the library puts the held entries
			 * in (iter.c, held_tidy()); a task that changes at every
			 * walk, sent ahead of the batch before it, would be put
			 * ahead of those tasks at every reorder.
			 */
			err = batch_flush(b);
			if (!err && size == sizeof(r->h))
				err = bpf_ringbuf_output(&walk_ring, r, sizeof(r->h), BPF_RB_NO_WAKEUP);
			else if (!err && size == sizeof(*r))
				err = bpf_ringbuf_output(&walk_ring, r, sizeof(*r), BPF_RB_NO_WAKEUP);
			else if (!err)
				err = -1;
		}
		if (err)
			break;
		n++;
	}
	bpf_iter_task_destroy(&it);
	if (!err)
		err = batch_flush(b);
	walk_tasks = n;
	walk_status = err ? WALK_FULL : WALK_DONE;
	return 0;
}
#else
/*
 * Built as bpf/iter_compat.bpf.o, for kernels before Linux 6.12 (without
 * the open-coded task iterator, a global function's trusted argument, or
 * bpf_task_acquire() of the task it gives):
 * the same maps and programs, so that its skeleton has the same layout,
 * with a walk that says it cannot walk.
 */
SEC("iter/task")
int vmon_tasks_walk(struct bpf_iter__task *ctx)
{
	if (ctx->task) {
		walk_tasks = 0;
		walk_status = WALK_NONE;
	}
	return 0;
}
#endif
