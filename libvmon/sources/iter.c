/*
 * iter.c: the task iterator, libvmon's second sampling source (iter_*).
 *
 * One read of a BPF task iterator (bpf/iter.bpf.c, embedded as a light skeleton)
 * at the start of a pass gives a record per task of the system; the pass
 * then takes what /proc's stat, statm, status (its memory lines and context
 * switches) and io would give from those records instead of reading files:
 * iter_probe() in place of procfs_probe(), and the PROC_STAT, PROC_VM,
 * PROC_IO and PROC_SCHED (its context switches) samplers
 * fill their stores from the node's record (iter_fill_*()), through the
 * defs/ rows wrapped in vmon_task() (the VMON_TASK_COPY tables below).
 * Threads are found from the records of their group, and in PROC_ALL mode
 * the processes too (iter_list()).  The records give the owner's uid, and
 * wchan where the program could read it and this process may see every
 * task's (CAP_SYS_PTRACE: /proc shows "0" to a caller without ptrace access).
 * What the records cannot give (cmdline, exe, a kernel thread's full name,
 * a wchan the program did not read) is still read from /proc, under the
 * same rules as without the iterator: only when it can have changed, as
 * the records' run counts tell.
 *
 * A process is summed over its threads as /proc/PID/stat and io sum it: the
 * group's counters of its exited threads (on the leader's record) plus each
 * live thread's.  Its CPU times are scaled as the kernel scales them for
 * /proc (cputime_adjust(): the tick-sampled user/system split applied to
 * the precise run time, never going back), here from the node's own last
 * values; vmon(3) gives the bounds where this cannot equal /proc.
 *
 * A task the records do not show is sampled through /proc, so a gone one
 * is found gone there, and one the iterator does not visit still has its
 * data: on this machine's kernel (6.18) iter/task never shows the thread
 * group of pid 1.  Such a process is found by a /proc listing, made at the
 * first pass with the iterator and ITER_LISTING_SECS after; then the wait
 * doubles each time a listing finds no process the records and the feed
 * had not given, up to ITER_LISTING_SECS_MAX, and is ITER_LISTING_SECS
 * again after one that does (a listing of 10,000 processes costs about
 * 12 ms: every 10 s, at vtop's 1.5 s refresh, a tenth of its CPU).
 *
 * Used only on the live /proc of the first pid namespace (the records carry
 * that namespace's ids), and only where the program loads: CAP_BPF and
 * CAP_PERFMON (or CAP_SYS_ADMIN), BTF, and the kernel's CO-RE relocation of
 * a light skeleton's programs (Linux 5.17); the program reads mm->rss_stat[]
 * as the array of per-CPU counters it is from Linux 6.2, a struct before,
 * where the relocation fails and the load with it.  Its calls of kernel
 * functions (bpf_rdonly_cast(), the walk's task iterator) need a JIT that
 * makes them (x86-64's and arm64's).
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#ifdef HAVE_MALLOC_TRIM
#include <malloc.h>
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/internal.h"

#ifdef HAVE_BPF

#include "util/light_skel.h"
#include "bpf/iter.h"
#include "sources/iter_held.h"
#include "util/bpf_ring.h"
/* bpftool's generated code subtracts void pointers (a GNU extension) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpointer-arith"
#include "bpf/iter.lskel.h"
#include "bpf/iter_compat.lskel.h"
#pragma GCC diagnostic pop

/*
 * The loaded program, of either skeleton of bpf/iter.bpf.c: with the walk
 * of the task list (Linux 6.12), or without it (iter_compat), loaded where
 * the first is refused.  The two have the same maps, programs and
 * variables, but not in the same order: what the library uses of them is
 * bound here, member by member (PROG_BIND()).
 */
typedef struct iter_prog {
	struct iter_bpf		*walk;		/* one of the two, the other NULL */
	struct iter_compat_bpf	*compat;
	struct bpf_map_desc	*held, *held_at, *cpu_offsets, *walk_ring;
	struct bpf_prog_desc	*tasks, *walker;
	int			*tasks_link, *walk_link;
	/* .bss, mapped once loaded */
	__u32			*wchan_off, *walk_status, *walk_tasks, *held_jumps;
} iter_prog_t;

#define PROG_BIND(p, s) do {						\
	(p)->held = &(s)->maps.held;					\
	(p)->held_at = &(s)->maps.held_at;				\
	(p)->cpu_offsets = &(s)->maps.cpu_offsets;			\
	(p)->walk_ring = &(s)->maps.walk_ring;				\
	(p)->tasks = &(s)->progs.vmon_tasks;				\
	(p)->walker = &(s)->progs.vmon_tasks_walk;			\
	(p)->tasks_link = &(s)->links.vmon_tasks_fd;			\
	(p)->walk_link = &(s)->links.vmon_tasks_walk_fd;		\
} while (0)

#define PROG_RODATA(s, tick, shift, cpus, mask) do {			\
	(s)->rodata->tick_ns = (tick);					\
	(s)->rodata->page_shift = (shift);				\
	(s)->rodata->nr_cpus = (cpus);					\
	(s)->rodata->held_mask = (mask);				\
} while (0)

#define PROG_BSS(p, s) do {						\
	(p)->wchan_off = &(s)->bss->wchan_off;				\
	(p)->walk_status = &(s)->bss->walk_status;			\
	(p)->walk_tasks = &(s)->bss->walk_tasks;			\
	(p)->held_jumps = &(s)->bss->held_jumps;			\
} while (0)

/* opened: the skeleton with the walk, or without (compat); 0 or an errno */
static int prog_open(iter_prog_t *p, bool compat)
{
	memset(p, 0, sizeof(*p));
	if (compat) {
		if (!(p->compat = iter_compat_bpf__open()))
			return errno;
		PROG_BIND(p, p->compat);
	} else {
		if (!(p->walk = iter_bpf__open()))
			return errno;
		PROG_BIND(p, p->walk);
	}
	return 0;
}

static void prog_rodata(iter_prog_t *p, unsigned long long tick_ns, __u32 page_shift, __u32 nr_cpus, __u32 mask)
{
	if (p->compat)
		PROG_RODATA(p->compat, tick_ns, page_shift, nr_cpus, mask);
	else
		PROG_RODATA(p->walk, tick_ns, page_shift, nr_cpus, mask);
}

static struct bpf_loader_ctx *prog_ctx(iter_prog_t *p)
{
	return p->compat ? &p->compat->ctx : &p->walk->ctx;
}

/* loaded, the iterator attached: 0 or an errno */
static int prog_load(iter_prog_t *p)
{
	if (p->compat) {
		if (iter_compat_bpf__load(p->compat) < 0 || iter_compat_bpf__vmon_tasks__attach(p->compat) < 0)
			return errno;
		PROG_BSS(p, p->compat);
	} else {
		if (iter_bpf__load(p->walk) < 0 || iter_bpf__vmon_tasks__attach(p->walk) < 0)
			return errno;
		PROG_BSS(p, p->walk);
	}
	return 0;
}

static void prog_destroy(iter_prog_t *p)
{
	if (p->compat)
		iter_compat_bpf__destroy(p->compat);
	else if (p->walk)
		iter_bpf__destroy(p->walk);
	memset(p, 0, sizeof(*p));
}

typedef struct iter iter_t;

#define ITER_LISTING_SECS	10.0	/* at the most often, /proc listed for what the iterator does not show */
#define ITER_LISTING_SECS_MAX	160.0	/* ... at the least often, while listings find nothing new */
#define ITER_LISTING_CHECKED	8	/* processes a listing made that the next pass checks (more: taken as found) */

/* a group's sums: what it keeps of its exited threads (on the leader's record) and each live thread's */
typedef struct iter_group {
	unsigned long long	utime_ns, stime_ns, run_ns, gtime_ns, minflt, majflt;
	struct iter_io		io;
} iter_group_t;

struct read_block;

/* a record unpacked (slot_unpack()), written as words */
typedef union iter_unpacked {
	struct iter_rec		rec;
	__u64			w[sizeof(struct iter_rec) / sizeof(__u64)];
} iter_unpacked_t;

/*
 * A read gives a stream of records, one per task: a whole struct iter_rec,
 * or its header alone (ITER_SAME) for a task whose record is the one the
 * held table says we hold.  So the records are kept by task, each in a slot of
 * a pool that lives from read to read: a whole record replaces its task's
 * slot, a header keeps it.  After a good read, the slots it did not show
 * are freed.
 *
 * A slot keeps its record packed (rec_pack(): about 190 bytes of the 848
 * at a sleeping process, most words being small or 0), and a pass unpacks the
 * record of a node only when it takes values from it: most nodes of an idle
 * system take none (iter_probe()'s same).  A group's sums are made so too,
 * for the leader whose stores take them (group_of()).
 *
 * And a process of one thread keeps no record once its node took it: the
 * node takes nothing from it while it stays the same.  The slot drops it
 * (slot_drop()) as the node's probe takes it, or when it comes as the same
 * twice in a row (a task without a node), and keeps its ids, hash and
 * state; the held entry stays, so the program goes on sending headers
 * alone.  The rare node that needs the record again (it missed a pass, a
 * retry, a store it did not have, a node new to the task) reads /proc for
 * that pass, and the held entry is removed so that the next read sends the
 * record whole (iter_probe(), records_kept()).
 */
struct iter {
	iter_prog_t		prog;		/* loaded and attached: *prog.tasks_link */
	char			*stream;	/* a read's bytes, ITER_STREAM_BYTES: those of a record not yet whole;
						 * mapped by stream_read(), NULL while the walk reads (stream_release()) */
	/* per slot: */
	unsigned char		**slot_rec;	/* its task's last whole record, packed; NULL: dropped (slot_drop()) */
	unsigned short		*slot_cap;	/* ... the bytes it has room for (in the arena: its length) */
	unsigned long long	*slot_hash;	/* its record's iter_hdr.hash */
	int			*slot_tid;	/* its task */
	int			*slot_tgid;	/* its task's thread group */
	unsigned char		*slot_state;	/* SLOT_* */
	size_t			slots_cap;
	int			*shown;		/* the slots the last read showed (SLOT_SHOWN), in its order */
	size_t			nr;
	/*
	 * The read before's shown[], and how far this read went through it
	 * (slot_in_order()): the tasks come in the same order read after
	 * read (the iterator's by id, the walk's by the task list).
	 */
	int			*before;
	size_t			before_nr, before_next;
	int			*slot_pos;	/* per slot: its index in shown[] when it was last shown */
	/*
	 * The walk (walk_read()): the program's ring, mapped (NULL: the
	 * iterator is read), its bytes, and whether the next read tries it.
	 */
	bpf_ring_t		*walk;
	size_t			walk_size;
	bool			compat;		/* prog is iter_compat's (the kernel's choice, or $VMON_ITER_WALK): no walk */
	bool			walk_none;	/* the kernel has no open-coded task iterator */
	bool			walk_next;	/* the last read's records would fit the ring */
	bool			walked;		/* the last read was the walk's */
	int			walk_err;	/* walk_take()'s errno */
	size_t			stream_bytes;	/* what the last read's records take in the ring */
	unsigned long long	walks;		/* reads made by the walk (vmon_stats_t.iter_walks) */
	/*
	 * per slot, -1 for none: a group leader's first thread slot, a
	 * thread's next one in its group (iter_group()); a free slot's next
	 * free one (the free slots are a stack from free_top).  A slot is one
	 * of the three: its tid is its group's, or not, or it is free.
	 */
	int			*link;
	int			free_top;	/* -1: none free */
	unsigned char		pack[sizeof(struct iter_rec) + 64];	/* rec_pack()'s, at most */
	iter_unpacked_t		packing;	/* rec_pack()'s words, before they are packed */
	iter_unpacked_t		rec;		/* the record of slot rec_slot, in this read */
	int			rec_slot;	/* -1: none */
	iter_unpacked_t		thread_rec;	/* a thread's, for group_of() */
	iter_group_t		group;		/* the sums of group_slot's group, in this read */
	int			group_slot;	/* -1: none */
	/*
	 * tid -> slot + 1: a hash, not an array by tid, for tids run up to
	 * pid_max (4,194,304 where systemd sets it: 16 MB as an array)
	 */
	pidmap_t		by_tid;
	held_table_t		held;		/* the program's held and held_at maps, mmapped: what the slots hold */
	size_t			held_size, held_at_size;	/* bytes mapped */
	unsigned		held_failed;	/* a larger table's mask the program could not be loaded with, 0: none */
	unsigned		held_sparse;	/* reads in a row that found the table under an eighth full */
	int			page_shift;
	int			generation;	/* vmon->generation of the last good read */
	size_t			given_back;	/* bytes of records freed since the heap was last trimmed (iter_trim()) */
	struct read_block	*arena;		/* the last read's records of processes of one thread (arena_take()) */
#define SLOT_SAME	0x1	/* the last read sent the header alone */
#define SLOT_ONE_THREAD	0x2	/* a group leader, without other threads */
#define SLOT_SAME_AGAIN	0x4	/* ... and the read before it too: its record may go (slot_drop()) */
#define SLOT_USED	0x8	/* not free: a task's, shown by this read or an earlier one */
#define SLOT_SHOWN	0x10	/* the last read showed it (in shown[]) */
#define SLOT_SHADOWED	0x20	/* its task was shown twice in a read: by_tid has the second slot, not this one */
#define SLOT_IN_ARENA	0x40	/* its record is in the last read's arena, not malloc's (arena_take()) */
#define SLOT_UNHELD	0x80	/* its held entry goes once this read is over (held_set()) */
	unsigned long long	tick_ns;
	unsigned long long	reads, read_errors;
	double			last_listing;	/* when /proc was last listed (iter_listing_due()) */
	double			listing_gap;	/* to the next listing: ITER_LISTING_SECS, doubled while they find nothing */
	int			listed[ITER_LISTING_CHECKED];	/* the processes the last listing made, for the next pass */
	int			listed_nr;
	int			fds;		/* held: the program, its link and maps */
	bool			wchan_ok;	/* the records' wchan is what /proc/PID/wchan shows us (may_trace()) */
};

/* the copy tables: a record part's numbers and their store's members, per vmon_task() row (parse.h) */
static const parse_copy_t stat_copy[] = {
#define VMON_TASK_COPY
#define VMON_TASK_STRUCT struct iter_stat
#define VMON_TASK_STORE vmon_proc_stat_t
#include "defs/proc_stat.def"
};
/* (PROC_STAT_EXTRA's part of the stat part of the record) */
static const parse_copy_t stat_extra_copy[] = {
#define VMON_TASK_COPY
#define VMON_TASK_STRUCT struct iter_stat
#define VMON_TASK_STORE vmon_proc_stat_extra_t
#include "defs/proc_stat_extra.def"
};
static const parse_copy_t vm_copy[] = {
#define VMON_TASK_COPY
#define VMON_TASK_STRUCT struct iter_vm
#define VMON_TASK_STORE vmon_proc_vm_t
#include "defs/proc_vm.def"
};
/* (PROC_VM_STATUS's part of the vm part of the record) */
static const parse_copy_t vm_status_copy[] = {
#define VMON_TASK_COPY
#define VMON_TASK_STRUCT struct iter_vm
#define VMON_TASK_STORE vmon_proc_vm_status_t
#include "defs/proc_vm_status.def"
};
static const parse_copy_t io_copy[] = {
#define VMON_TASK_COPY
#define VMON_TASK_STRUCT struct iter_io
#define VMON_TASK_STORE vmon_proc_io_t
#include "defs/proc_io.def"
};
static const parse_copy_t sched_copy[] = {
#define VMON_TASK_COPY
#define VMON_TASK_STRUCT struct iter_sched
#define VMON_TASK_STORE vmon_proc_sched_t
#include "defs/proc_sched.def"
};
_Static_assert(sizeof(struct iter_rec) <= USHRT_MAX && sizeof(vmon_proc_stat_t) <= USHRT_MAX &&
	       sizeof(vmon_proc_vm_t) <= USHRT_MAX && sizeof(vmon_proc_io_t) <= USHRT_MAX &&
	       sizeof(vmon_proc_sched_t) <= USHRT_MAX && sizeof(vmon_proc_stat_extra_t) <= USHRT_MAX &&
	       sizeof(vmon_proc_vm_status_t) <= USHRT_MAX,
	       "parse_copy_t's offsets fit");

#define NELEM(_a) (sizeof(_a) / sizeof((_a)[0]))

/*
 * One read of the iterator, taken as it comes through a buffer of
 * ITER_STREAM_BYTES: the whole read in one buffer was 848 bytes a task at
 * the first read (every record whole), 4 to 8 MB held from then on at 5,000
 * processes, for a stream that is mostly 32-byte headers after it.  A
 * stream cut inside a record fails the read (EPROTO).
 *
 * The buffer is mapped for such a read and let go once the walk is to read
 * next (read_stream()).  On Linux 6.12 and later the walk reads the tasks:
 * the iterator is read at the first two reads and the two after the held
 * table is made again (the first's records all come whole, and a read's
 * bytes decide whether the next is the walk's), after a read whose records
 * outgrew the ring, and above WALK_TASKS_MAX tasks.
 * Kept, the malloc'd 64 KiB stayed resident for nothing in every client.
 * Without the walk it is kept from read to read.
 */
#define ITER_STREAM_BYTES	(64 * 1024)

/* the iterator's read buffer given back (stream_read() maps it again) */
static void stream_release(iter_t *it)
{
	if (it->stream)
		munmap(it->stream, ITER_STREAM_BYTES);
	it->stream = NULL;
}

static void arena_release(iter_t *it);

/* the held table's maps unmapped */
static void held_unmap(iter_t *it)
{
	if (it->held.e)
		munmap(it->held.e, it->held_size);
	if (it->held.at)
		munmap(it->held.at, it->held_at_size);
	memset(&it->held, 0, sizeof(it->held));
}

static void iter_close(vmon_t *vmon)
{
	struct _vmon_internal *in = vmon->internal;
	iter_t *it = in ? in->iter : NULL;

	if (!it)
		return;
	held_unmap(it);
	bpf_ring_close(it->walk);
	prog_destroy(&it->prog);
	stream_release(it);
	for (size_t i = 0; i < it->slots_cap; i++) {
		if (!(it->slot_state[i] & SLOT_IN_ARENA))
			free(it->slot_rec[i]);
	}
	arena_release(it);
	free(it->slot_rec);
	free(it->slot_cap);
	free(it->slot_hash);
	free(it->slot_tid);
	free(it->slot_tgid);
	free(it->slot_state);
	free(it->shown);
	free(it->before);
	free(it->slot_pos);
	free(it->link);
	pidmap_fini(&it->by_tid);
	free(it);
	in->iter = NULL;
}

/*
 * The held table's index: at least half as many again as the tasks there
 * are (a power of two), so that it is at most two thirds full; the program
 * is loaded again with a table sized so when the tasks outgrow two thirds
 * of it, or stay under an eighth of it for HELD_SPARSE_READS reads
 * (held_resize()).  At two thirds full a few tids in 10,000 need more than
 * 16 probes (linear probing's runs grow fast past half full), which is why
 * the program looks at ITER_HELD_PROBES (48) entries: a miss still ends at
 * the first free entry, a few probes on.  The entries themselves,
 * HELD_ENTRIES() of them, are three for each four of the index: room for
 * an eighth more tasks than the index takes, for the new tasks' entries
 * until held_compact() takes back those of tasks gone.  32 bytes an entry
 * and 8 an index entry (bpf/iter.h): 64 kB at 1,000 tasks, 512 kB at
 * 10,000, where one entry per possible tid was 1.3 MB at a pid_max of
 * 32,768.
 */
#define HELD_MIN		1024u
#define HELD_MAX		(1u << 20)
#define HELD_SPARSE_READS	16
#define HELD_ENTRIES(mask)	(((mask) + 1) / 4 * 3)

static unsigned held_entries(unsigned long tasks)
{
	unsigned n = HELD_MIN;

	while (n < HELD_MAX && 2 * (unsigned long)n < 3 * tasks)
		n *= 2;
	return n;
}

/*
 * The walk's ring: 4 bytes for each entry of the held table's index (a
 * task that did not change, struct iter_same: the index is at most two
 * thirds full), and WALK_RING_SPARE for the records of those that did
 * (about 38), a power of two: 128 KiB at 10,000 tasks, with room for
 * about 85.  A pass that needs more is read through the iterator, which
 * has no such bound (read_stream()).  The ring is the kernel's memory from
 * the load on; in the process, only the bytes a read reads are mapped, for
 * that read (util/bpf_ring.c).  Nor is the walk tried above
 * WALK_TASKS_MAX tasks: it holds its CPU, in one RCU read section, for the
 * whole list (about 0.8 us a task), where the iterator can give the CPU up
 * between tasks.
 */
#define WALK_RING_SPARE	(32 * 1024)
#define WALK_TASKS_MAX	16384
#define WALK_RING_HDR	8	/* a record's header in the walk's ring: its length and flags */

static size_t walk_ring_bytes(unsigned mask, size_t page)
{
	size_t want = ((size_t)mask + 1) * sizeof(struct iter_same) + WALK_RING_SPARE, n = page;

	while (n < want)
		n *= 2;
	return n;
}

static int walk_take(void *arg, const void *data, size_t size);
static int slots_grow(iter_t *it, size_t want);

/* the tasks of the system now (the SYS_LOADAVG want's count, read once here), 0 if unknown */
static unsigned long tasks_now(vmon_t *vmon)
{
	vmon_sys_loadavg_t *loadavg = NULL;
	unsigned long tasks = 0;

	if (sys_loadavg_sample(vmon, (void **)&loadavg) >= 0)
		tasks = loadavg->tasks;
	sys_loadavg_free(vmon, loadavg);
	return tasks;
}

/*
 * /proc/PID/wchan names the function only to a caller that may ptrace the
 * task (ptrace_may_access(), read mode), "0" to others; the program reads
 * every task's.  Its names are then ours only with CAP_SYS_PTRACE in
 * effect, which passes that check for every task.
 */
static bool may_trace(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &hdr, data) < 0)
		return false;
	return data[CAP_TO_INDEX(CAP_SYS_PTRACE)].effective & CAP_TO_MASK(CAP_SYS_PTRACE);
}

/* what one load of the program depends on, and where it goes */
struct iter_load {
	iter_t		*it;
	unsigned	mask;		/* the held table's index entries - 1 */
	iter_prog_t	prog;		/* loaded and attached, or all NULL */
};

/* a light_skel_try_t: the program loaded and attached with a held table of mask + 1 index entries */
static int load_program(void *arg, char **log)
{
	struct iter_load *l = arg;
	int err, low_fds[3], cpus = host_possible_cpus();

	if ((err = prog_open(&l->prog, l->it->compat)) != 0)
		return err;
	/* for the memory counters' per-CPU shares (iter.bpf.c); without it, the counts alone */
	prog_rodata(&l->prog, l->it->tick_ns, (__u32)l->it->page_shift, (__u32)cpus, l->mask);
	l->prog.cpu_offsets->max_entries = cpus > 0 ? (__u32)cpus : 1;
	l->prog.held->max_entries = HELD_ENTRIES(l->mask);
	l->prog.held_at->max_entries = l->mask + 1;
	l->prog.walk_ring->max_entries = l->it->compat ? (__u32)1 << l->it->page_shift :
				   (__u32)walk_ring_bytes(l->mask, (size_t)1 << l->it->page_shift);
	if (log)
		light_skel_log_on(prog_ctx(&l->prog), log);
	light_skel_hold_low_fds(low_fds);
	err = prog_load(&l->prog);
	/*
	 * The walk as an iterator of one task, the process's first thread,
	 * which lives as long as the process does (as a rule: walk_read());
	 * without it, the iterator alone is read.
	 */
	if (!err && !l->it->compat)
		*l->prog.walk_link = light_skel_iter_link_task(l->prog.walker->prog_fd, (int)getpid());
	light_skel_release_low_fds(low_fds);
	if (err)
		prog_destroy(&l->prog);
	return err;
}

/* an mmappable array map's bytes, mapped shared: its address, or NULL (errno) */
static void *map_shared(const struct bpf_map_desc *map, size_t size)
{
	void *at = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, map->map_fd, 0);

	return at == MAP_FAILED ? NULL : at;
}

/* prog, loaded with a held table of mask + 1 index entries, made the program read (it takes prog): 0 or an errno */
static int use_program(iter_t *it, iter_prog_t *prog, unsigned mask)
{
	size_t page = (size_t)1 << it->page_shift;
	size_t size = ((size_t)HELD_ENTRIES(mask) * sizeof(struct iter_held) + page - 1) & ~(page - 1);
	size_t at_size = (((size_t)mask + 1) * sizeof(struct iter_held_at) + page - 1) & ~(page - 1);
	void *held = map_shared(prog->held, size), *at = held ? map_shared(prog->held_at, at_size) : NULL;
	size_t ring = walk_ring_bytes(mask, page);
	bpf_ring_t *walk;
	int err = errno;

	if (!at) {
		if (held)
			munmap(held, size);
		return err;
	}
	/* without the ring mapped, the iterator alone is read */
	walk = *prog->walk_link > 0 ? bpf_ring_open(prog->walk_ring->map_fd, ring, 0, walk_take, it) : NULL;
	held_unmap(it);
	bpf_ring_close(it->walk);
	it->walk = walk;
	it->walk_size = walk ? ring : 0;
	/* a new held table is empty: the next read's records all come whole, and would not fit */
	it->walk_next = false;
	prog_destroy(&it->prog);
	it->prog = *prog;
	/* (a new map is all 0) */
	it->held.e = held;
	it->held.at = at;
	it->held.mask = mask;
	it->held.cap = HELD_ENTRIES(mask);
	it->held_size = size;
	it->held_at_size = at_size;
	return 0;
}

/*
 * Before a read: the held table sized again for the last read's tasks
 * when they filled more than two thirds of it (at once: tasks without room get
 * whole records) or less than an eighth for HELD_SPARSE_READS reads (after
 * a burst of processes: memory back within a minute at vtop's refresh).
 * The program is loaded again with the new table (a few milliseconds) and
 * the next read sends every record whole, as the first did.  If that
 * fails, the table stays as it is; a larger table that failed is not
 * tried again, only a larger one still, when the tasks are twice as many.
 */
static void held_resize(iter_t *it)
{
	unsigned mask = held_entries(it->nr) - 1;
	struct iter_load load = { .it = it, .mask = mask };

	if (mask > it->held.mask) {
		if (it->held_failed && mask <= it->held_failed)
			return;
	} else if (it->nr < (it->held.mask + 1) / 8 && mask < it->held.mask) {
		if (++it->held_sparse < HELD_SPARSE_READS)
			return;
	} else {
		it->held_sparse = 0;
		return;
	}
	it->held_sparse = 0;
	if (load_program(&load, NULL) != 0) {
		if (mask > it->held.mask)
			it->held_failed = mask;
		return;
	}
	if (use_program(it, &load.prog, mask) != 0) {
		prog_destroy(&load.prog);
		if (mask > it->held.mask)
			it->held_failed = mask;
	}
}

static int iter_open(vmon_t *vmon, char *why, size_t why_size)
{
	struct _vmon_internal *in = vmon->internal;
	const char *not_here = host_root_reason(vmon);
	struct iter_load load = { 0 };
	const char *walk_env;
	char said[160] = "";
	iter_t *it;
	long page = sysconf(_SC_PAGESIZE);
	unsigned long tasks;
	int err, before;

	if (in->iter)
		return 0;
	if (not_here) {
		snprintf(why, why_size, "%s", not_here);
		errno = EOPNOTSUPP;
		return -1;
	}
	it = calloc(1, sizeof(*it));
	if (!it) {
		snprintf(why, why_size, "%s", strerror(errno));
		return -1;
	}
	it->rec_slot = it->group_slot = -1;
	it->free_top = -1;
	if (pidmap_init(&it->by_tid) < 0) {
		snprintf(why, why_size, "%s", strerror(errno));
		free(it);
		return -1;
	}
	it->tick_ns = vmon->ticks_per_sec > 0 ? 1000000000ull / (unsigned long long)vmon->ticks_per_sec : 10000000ull;
	while (page > 1 && (1L << it->page_shift) < page)
		it->page_shift++;

	/*
	 * The pool and its index sized for the tasks there are, a few more:
	 * grown by half at the first read, ten arrays at a time, they left
	 * holes in the heap that the nodes made after them only part fill.
	 * Not an error if they cannot be: they grow as they are filled.
	 */
	tasks = tasks_now(vmon);
	(void)slots_grow(it, tasks + tasks / 16 + 64);
	(void)pidmap_reserve(&it->by_tid, tasks);	/* (more: the first read's fit could halve it) */

	before = host_count_fds(vmon);
	load.it = it;
	load.mask = held_entries(tasks) - 1;
	/* $VMON_ITER_WALK=0: the iterator alone, as before Linux 6.12 (to compare the two) */
	walk_env = secure_getenv("VMON_ITER_WALK");
	it->compat = walk_env && !strcmp(walk_env, "0");
	err = light_skel_load(load_program, &load, said, sizeof(said));
	if (err && err != EPERM && !it->compat) {
		/* a kernel before Linux 6.12 refuses the walk: the program without it */
		it->compat = true;
		said[0] = '\0';
		err = light_skel_load(load_program, &load, said, sizeof(said));
	}
	if (!err && (err = use_program(it, &load.prog, load.mask)) != 0)
		prog_destroy(&load.prog);
	if (err)
		goto fail;
	it->fds = before >= 0 ? host_count_fds(vmon) - before : 0;
	if (it->fds < 0)
		it->fds = 0;
	it->wchan_ok = may_trace();
	in->iter = it;
	return 0;

fail:
	snprintf(why, why_size, "loading the task iterator: %s%s%s%s", strerror(err),
		 err == EPERM || (err == EACCES && !said[0]) ? " (it needs CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN)" :
		 (err == EINVAL || err == E2BIG) && !said[0] ? " (this needs Linux 6.2 or later)" : "",
		 said[0] ? ": " : "", said);
	in->iter = it;
	iter_close(vmon);
	errno = err;
	return -1;
}

/*
 * The pool grown to at least want slots (0: by half, 1,024 at first): the
 * new slots go on the free stack, the arrays per slot follow.
 */
static int slots_grow(iter_t *it, size_t want)
{
	size_t cap = it->slots_cap ? it->slots_cap + it->slots_cap / 2 : 1024;
	void *p;

	if (cap < want)
		cap = want;
	if (!(p = realloc(it->slot_rec, cap * sizeof(*it->slot_rec))))
		return -1;
	it->slot_rec = p;
	if (!(p = realloc(it->slot_cap, cap * sizeof(*it->slot_cap))))
		return -1;
	it->slot_cap = p;
	if (!(p = realloc(it->slot_hash, cap * sizeof(*it->slot_hash))))
		return -1;
	it->slot_hash = p;
	if (!(p = realloc(it->slot_tid, cap * sizeof(*it->slot_tid))))
		return -1;
	it->slot_tid = p;
	if (!(p = realloc(it->link, cap * sizeof(*it->link))))
		return -1;
	it->link = p;
	if (!(p = realloc(it->shown, cap * sizeof(*it->shown))))
		return -1;
	it->shown = p;
	if (!(p = realloc(it->before, cap * sizeof(*it->before))))
		return -1;
	it->before = p;
	if (!(p = realloc(it->slot_pos, cap * sizeof(*it->slot_pos))))
		return -1;
	it->slot_pos = p;
	if (!(p = realloc(it->slot_tgid, cap * sizeof(*it->slot_tgid))))
		return -1;
	it->slot_tgid = p;
	if (!(p = realloc(it->slot_state, cap * sizeof(*it->slot_state))))
		return -1;
	it->slot_state = p;
	/* pushed highest first: the low slots are used first */
	for (size_t i = cap; i > it->slots_cap; i--) {
		it->slot_state[i - 1] = 0;
		it->slot_rec[i - 1] = NULL;
		it->slot_cap[i - 1] = 0;
		it->slot_pos[i - 1] = -1;
		it->link[i - 1] = it->free_top;
		it->free_top = (int)(i - 1);
	}
	it->slots_cap = cap;
	return 0;
}

/*
 * The held entry of a slot's record: the program sends a header alone while
 * the task's record has its hash.  But none for a record of a task asleep
 * whose wchan says runnable ("0", as /proc says it while the task is still
 * queued: the scheduler keeps a task that slept queued until its lag is
 * paid, EEVDF's delayed dequeue): it leaves the queue without running, so
 * its next records would be the same, wchan (not in the hash) "0" for as
 * long as it sleeps where /proc names the function.  Its next read sends it
 * whole, wchan read again: its entry is removed once the read is over
 * (held_unset_marked()), where the second record of a task shown twice
 * has the last word.
 */
static void held_set(iter_t *it, int slot, const struct iter_rec *r)
{
	struct iter_held *e = held_find_hinted(&it->held, r->h.tid, r->h.held);

	if (r->wchan_state == ITER_WCHAN_RUNNABLE && r->stat.state != 'R') {
		if (e)
			it->slot_state[slot] |= SLOT_UNHELD;
		return;
	}
	if (!e && !(e = held_place(&it->held, r->h.tid)))
		return;		/* no room (in its index probes, or after the last entry): its records come whole */
	e->hash = r->h.hash;
	e->volatile_hash = r->h.volatile_hash;
	e->run_ns = r->run_ns;
	e->run_count = (__u32)r->run_count;
}

/* after a read: the entries held_set() marked for removal, removed */
static void held_unset_marked(iter_t *it)
{
	for (size_t slot = 0; slot < it->slots_cap; slot++) {
		struct iter_held *e;

		if (!(it->slot_state[slot] & SLOT_UNHELD))
			continue;
		it->slot_state[slot] &= (unsigned char)~SLOT_UNHELD;
		/* (a task shown twice: the entry is its second record's, which said whether to keep it) */
		if (it->slot_state[slot] & SLOT_SHADOWED)
			continue;
		if ((e = held_find(&it->held, (unsigned)it->slot_tid[slot])) != NULL)
			held_remove(&it->held, e);
	}
}

/* the held entry of a slot's record removed (if it is still that record's): the next read sends the task's whole */
static void held_forget(iter_t *it, int slot)
{
	struct iter_held *e = held_find(&it->held, (unsigned)it->slot_tid[slot]);

	if (e && e->hash == it->slot_hash[slot])
		held_remove(&it->held, e);
}

/*
 * The records a read makes of processes of one thread go, most of them, as
 * soon as the pass takes them (iter_probe(): the node's stores hold the
 * values).  Made with malloc(), between the records that stay (threads,
 * processes of several) and before the nodes made from them, they left
 * the heap in holes of a few kB with a kept record here and there, pages
 * resident for nothing: 175 kB in 50 free chunks at 1,000 processes after
 * the first pass (a heap walk with mincore()).  So they are made in blocks of their
 * own, mapped for the read (their pages resident only as they are
 * written) and unmapped whole at the next read, which first copies the few
 * that are still held to malloc's (arena_promote()).
 */
#define READ_BLOCK_BYTES	(256 * 1024)

struct read_block {
	struct read_block	*next;
	size_t			used;		/* bytes given out, this header's included */
};

/* len bytes of this read's arena, or NULL (then malloc's) */
static unsigned char *arena_take(iter_t *it, size_t len)
{
	struct read_block *b = it->arena;
	size_t need = (len + 7) & ~(size_t)7;
	unsigned char *p;

	if (need > READ_BLOCK_BYTES - sizeof(*b))
		return NULL;
	if (!b || b->used + need > READ_BLOCK_BYTES) {
		void *m = mmap(NULL, READ_BLOCK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			return NULL;
		b = m;
		b->next = it->arena;
		b->used = sizeof(*b);
		it->arena = b;
	}
	p = (unsigned char *)b + b->used;
	b->used += need;
	return p;
}

/* every block unmapped: no slot may point into them any more (arena_promote()) */
static void arena_release(iter_t *it)
{
	while (it->arena) {
		struct read_block *b = it->arena;

		it->arena = b->next;
		munmap(b, READ_BLOCK_BYTES);
	}
}

/* malloc's room for a record of len bytes, in steps of 16 (slot_keep()) */
static size_t rec_room(size_t len)
{
	return ((len + 8 + 15) & ~(size_t)15) - 8;
}

/*
 * Before a read: the last read's records still held in its arena copied to
 * malloc's (a record no pass took yet), then the arena unmapped.  A record
 * there is no room for is dropped, as slot_drop() may (iter_probe() reads
 * /proc for a node that needs it).
 */
static void arena_promote(iter_t *it)
{
	if (!it->arena)
		return;
	for (size_t slot = 0; slot < it->slots_cap; slot++) {
		unsigned char *p;

		if (!(it->slot_state[slot] & SLOT_IN_ARENA))
			continue;
		it->slot_state[slot] &= (unsigned char)~SLOT_IN_ARENA;
		p = it->slot_rec[slot] ? malloc(rec_room(it->slot_cap[slot])) : NULL;
		if (p) {
			memcpy(p, it->slot_rec[slot], it->slot_cap[slot]);
			it->slot_cap[slot] = (unsigned short)rec_room(it->slot_cap[slot]);
		} else {
			it->slot_cap[slot] = 0;
		}
		it->slot_rec[slot] = p;
	}
	arena_release(it);
}

/* a slot's record given back; its ids, hash and state stay */
static void slot_drop(iter_t *it, int slot)
{
	if (!(it->slot_state[slot] & SLOT_IN_ARENA))
		free(it->slot_rec[slot]);
	it->slot_state[slot] &= (unsigned char)~SLOT_IN_ARENA;
	it->slot_rec[slot] = NULL;
	it->slot_cap[slot] = 0;
}

/* bytes freed for iter_trim(): the slot's record with malloc's chunk header (none for the arena's) */
static void slot_given_back(iter_t *it, int slot)
{
	if (it->slot_rec[slot] && !(it->slot_state[slot] & SLOT_IN_ARENA))
		it->given_back += it->slot_cap[slot] + sizeof(size_t);
}

static void slot_free(iter_t *it, int slot)
{
	slot_given_back(it, slot);
	held_forget(it, slot);
	pidmap_del(&it->by_tid, it->slot_tid[slot], (void *)(uintptr_t)(slot + 1));	/* if it is still tid's */
	slot_drop(it, slot);
	it->slot_state[slot] = 0;
	it->link[slot] = it->free_top;
	it->free_top = slot;
}

/*
 * The words of a record a slot keeps: all but the header's ids and hashes
 * (the slot has those apart, and the volatile hash is the held entry's).
 */
#define REC_WORDS	(sizeof(struct iter_rec) / sizeof(__u64))

_Static_assert(sizeof(struct iter_rec) % sizeof(__u64) == 0, "iter_rec is whole words");
_Static_assert(offsetof(struct iter_hdr, flags) == 8 && offsetof(struct iter_hdr, hash) == 16 &&
	       offsetof(struct iter_hdr, volatile_hash) == 24, "rec_pack() skips the header's words 0, 2 and 3");

/*
 * A record packed: a nibble per word kept (its bytes, 0 to 8: the high
 * zero bytes dropped; PACK_ONES: all ones, no bytes), then each word's
 * bytes, least significant first.  No branch per byte, as LEB128 had:
 * unpack loads 8 bytes at each word and masks, so a slot has PACK_SLACK
 * bytes after them.  The nibbles: word 1's in the first byte, then words
 * 4 and 5, 6 and 7, ... a byte each.
 *
 * A process's addresses (its code, data, heap, stack, arguments and
 * environment) are 6 bytes each, and 10 of them were more than a quarter
 * of an idle process's packed record; each lies near another, so it is
 * kept as its XOR with that one (pack_near[]), 1 to 3 bytes.  A word of
 * all ones (tpgid without a terminal, rsslim unlimited) takes none.
 */
#define PACK_PAIRS	((REC_WORDS - 4) / 2)
#define PACK_TAGS	(1 + PACK_PAIRS)
#define PACK_SLACK	sizeof(__u64)
#define PACK_ONES	9u

#define REC_WORD(_member)	(offsetof(struct iter_rec, _member) / sizeof(__u64))

/* { word, the word it is kept as an XOR with }: the second comes first in the record or earlier here */
static const unsigned char pack_near[][2] = {
	{ REC_WORD(stat.endcode),	REC_WORD(stat.startcode) },
	{ REC_WORD(stat.start_data),	REC_WORD(stat.endcode) },
	{ REC_WORD(stat.end_data),	REC_WORD(stat.start_data) },
	{ REC_WORD(stat.start_brk),	REC_WORD(stat.end_data) },
	{ REC_WORD(stat.arg_start),	REC_WORD(stat.startstack) },
	{ REC_WORD(stat.arg_end),	REC_WORD(stat.arg_start) },
	{ REC_WORD(stat.env_start),	REC_WORD(stat.arg_end) },
	{ REC_WORD(stat.env_end),	REC_WORD(stat.env_start) },
};

_Static_assert((REC_WORDS - 4) % 2 == 0, "the words after the header go in pairs");
_Static_assert(PACK_TAGS + (REC_WORDS - 3) * sizeof(__u64) + PACK_SLACK <= sizeof(((iter_t *)0)->pack),
	       "pack holds any record");

/* word i of w at out: its tag (*n), the bytes it takes after it */
static unsigned char *pack_word(unsigned char *out, const __u64 *w, size_t i, unsigned *n)
{
	__u64 x = w[i];

	if (x == ~0ULL) {
		*n = PACK_ONES;
		return out;
	}
	*n = x ? (unsigned)(71 - __builtin_clzll(x)) / 8 : 0;
	x = htole64(x);
	memcpy(out, &x, sizeof(x));
	return out + *n;
}

/* a record's words into it->pack: its bytes, less PACK_SLACK (which it->pack has after them) */
static size_t rec_pack(iter_t *it, const struct iter_rec *r)
{
	unsigned char *tags = it->pack, *out = it->pack + PACK_TAGS;
	iter_unpacked_t *u = &it->packing;
	unsigned a, b;

	memcpy(u, r, sizeof(*r));
	u->rec.h.held = 0;	/* where the program found its held entry, this read: not the record's */
	for (size_t k = 0; k < NELEM(pack_near); k++)
		u->w[pack_near[k][0]] ^= ((const __u64 *)r)[pack_near[k][1]];
	out = pack_word(out, u->w, 1, &a);
	tags[0] = (unsigned char)a;
	for (size_t j = 0; j < PACK_PAIRS; j++) {
		out = pack_word(out, u->w, 4 + 2 * j, &a);
		out = pack_word(out, u->w, 5 + 2 * j, &b);
		tags[1 + j] = (unsigned char)(a | b << 4);
	}
	return (size_t)(out - it->pack);
}

/* the word at p of tag n into *w; past it */
static const unsigned char *unpack_word(const unsigned char *p, unsigned n, __u64 *w)
{
	static const __u64 keep[16] = {
		0, 0xff, 0xffff, 0xffffff, 0xffffffffULL, 0xffffffffffULL, 0xffffffffffffULL, 0xffffffffffffffULL,
		~0ULL,
	};
	static const __u64 ones[16] = { [PACK_ONES] = ~0ULL };
	static const unsigned char bytes[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8 };
	__u64 x;

	memcpy(&x, p, sizeof(x));
	*w = (le64toh(x) & keep[n]) | ones[n];
	return p + bytes[n];
}

/* a slot's record, unpacked into u; NULL if the slot dropped it */
static const struct iter_rec *slot_unpack(const iter_t *it, int slot, iter_unpacked_t *u)
{
	const unsigned char *tags = it->slot_rec[slot], *p;

	if (!tags)
		return NULL;
	p = tags + PACK_TAGS;
	p = unpack_word(p, tags[0] & 0xf, &u->w[1]);
	for (size_t j = 0; j < PACK_PAIRS; j++) {
		p = unpack_word(p, tags[1 + j] & 0xf, &u->w[4 + 2 * j]);
		p = unpack_word(p, tags[1 + j] >> 4, &u->w[5 + 2 * j]);
	}
	for (size_t k = 0; k < NELEM(pack_near); k++)
		u->w[pack_near[k][0]] ^= u->w[pack_near[k][1]];
	u->rec.h.tid = (__u32)it->slot_tid[slot];
	u->rec.h.tgid = (__u32)it->slot_tgid[slot];
	u->rec.h.hash = it->slot_hash[slot];
	u->rec.h.volatile_hash = 0;
	return &u->rec;
}

/* the record of a slot shown by this read, for a node's probe and fills; NULL if the slot dropped it */
static const struct iter_rec *rec_of(iter_t *it, int slot)
{
	if (it->rec_slot != slot) {
		if (!slot_unpack(it, slot, &it->rec))
			return NULL;
		it->rec_slot = slot;
	}
	return &it->rec.rec;
}

/* keep a whole record of the stream in a slot (not yet shown by this read): -1 when out of memory */
static int slot_keep(iter_t *it, int slot, const struct iter_rec *r)
{
	size_t len = rec_pack(it, r) + PACK_SLACK;
	bool one_thread = r->h.tid == r->h.tgid && r->stat.num_threads == 1, in_arena = false;
	unsigned char *p;

	/* (a second record of the slot in one read, which a stream does not send: never realloc()'d) */
	if (it->slot_state[slot] & SLOT_IN_ARENA)
		slot_drop(it, slot);
	/*
	 * In the arena where the slot has no record (the first read, or one
	 * a node took): a record kept from read to read (no node takes it)
	 * keeps its malloc'd room, not copied out and freed at every read.
	 */
	if (one_thread && !it->slot_rec[slot] && (p = arena_take(it, len)) != NULL) {
		it->slot_rec[slot] = p;
		it->slot_cap[slot] = (unsigned short)len;
		in_arena = true;
	} else if (len > it->slot_cap[slot] || it->slot_cap[slot] > len + 64) {
		/*
		 * Room in steps of 16 bytes, given back when much too large:
		 * records change size a little, often.  Each step is what a
		 * chunk of glibc's malloc holds (16-byte multiples less its
		 * 8-byte header): a request of a multiple of 16 took a chunk of
		 * 16 bytes more, 8 of them unused.
		 */
		size_t cap = rec_room(len);

		if (!(p = realloc(it->slot_rec[slot], cap)))
			return -1;
		it->slot_rec[slot] = p;
		it->slot_cap[slot] = (unsigned short)cap;
	}
	memcpy(it->slot_rec[slot], it->pack, len);
	it->slot_tid[slot] = (int)r->h.tid;
	it->slot_tgid[slot] = (int)r->h.tgid;
	it->slot_hash[slot] = r->h.hash;
	/* a new record: whether it came the same before is forgotten, whether the slot is in use is not */
	it->slot_state[slot] = (it->slot_state[slot] & SLOT_USED) | (one_thread ? SLOT_ONE_THREAD : 0) |
			       (in_arena ? SLOT_IN_ARENA : 0);
	return 0;
}

/* the slot of tid's last record (of this read or an earlier one), or -1 */
static int slot_by_tid(const iter_t *it, unsigned tid)
{
	return (int)(uintptr_t)pidmap_get(&it->by_tid, (int)tid) - 1;
}

/* is slot tid's, the one slot_by_tid() gives? */
static bool slot_is_tids(const iter_t *it, int slot, unsigned tid)
{
	return it->slot_tid[slot] == (int)tid &&
	       (it->slot_state[slot] & (SLOT_USED | SLOT_SHADOWED)) == SLOT_USED;
}

/*
 * slot_by_tid() for the stream's next record.  The tasks come in the same
 * order read after read (bpf/iter.bpf.c: the iterator's by id, the walk's
 * by the task list): the slot is most often the next one of the read
 * before's order, whose arrays are read in order too, where the hash was a
 * cache miss or two a task at 10,000.  A few tasks gone since are stepped
 * over; a task new is looked up, and a task found by the look-up where the
 * read before had it puts the guide back there (slot_pos).
 */
#define ORDER_LOOKAHEAD	4

static int slot_in_order(iter_t *it, unsigned tid)
{
	size_t end = it->before_next + ORDER_LOOKAHEAD;
	int slot;

	for (size_t k = it->before_next; k < it->before_nr && k < end; k++) {
		slot = it->before[k];
		if (slot_is_tids(it, slot, tid)) {
			it->before_next = k + 1;
			return slot;
		}
	}
	slot = slot_by_tid(it, tid);
	if (slot >= 0 && it->slot_pos[slot] >= 0 && (size_t)it->slot_pos[slot] < it->before_nr &&
	    it->before[it->slot_pos[slot]] == slot && !(it->slot_state[slot] & SLOT_SHOWN))
		it->before_next = (size_t)it->slot_pos[slot] + 1;
	return slot;
}

static void io_add(struct iter_io *sum, const struct iter_io *add)
{
	__u64 *s = (__u64 *)sum;
	const __u64 *a = (const __u64 *)add;

	for (size_t i = 0; i < sizeof(*sum) / sizeof(__u64); i++)
		s[i] += a[i];
}

/* the thread groups of this read: each leader's list of its threads' slots */
static void iter_group(iter_t *it)
{
	for (size_t k = 0; k < it->nr; k++)
		it->link[it->shown[k]] = -1;
	for (size_t k = 0; k < it->nr; k++) {
		int i = it->shown[k], tgid = it->slot_tgid[i], leader;

		if (it->slot_tid[i] == tgid || (leader = slot_by_tid(it, (unsigned)tgid)) < 0 ||
		    !(it->slot_state[leader] & SLOT_SHOWN))
			continue;
		it->link[i] = it->link[leader];
		it->link[leader] = i;
	}
}

static void group_add(iter_group_t *g, const struct iter_rec *r)
{
	g->utime_ns += r->stat.utime;
	g->stime_ns += r->stat.stime;
	g->run_ns += r->run_ns;
	g->gtime_ns += r->stat.guest_time;
	g->minflt += r->stat.minflt;
	g->majflt += r->stat.majflt;
	io_add(&g->io, &r->io);
}

/*
 * The sums of the group of the leader in slot i, whose record is r, in this
 * read; NULL if a thread's record is gone (never: a thread's slot does not
 * drop it, and iter_probe() read /proc for a node whose group lacks one).
 */
static const iter_group_t *group_of(iter_t *it, int i, const struct iter_rec *r)
{
	iter_group_t *g = &it->group;

	if (it->group_slot == i)
		return g;
	g->utime_ns = r->dead_utime_ns;
	g->stime_ns = r->dead_stime_ns;
	g->run_ns = r->dead_run_ns;
	g->gtime_ns = r->dead_gtime_ns;
	g->minflt = r->dead_minflt;
	g->majflt = r->dead_majflt;
	g->io = r->dead_io;
	group_add(g, r);
	for (int t = it->link[i]; t >= 0; t = it->link[t]) {
		const struct iter_rec *thread = slot_unpack(it, t, &it->thread_rec);

		if (!thread)
			return NULL;
		group_add(g, thread);
	}
	it->group_slot = i;
	return g;
}

/* the slot's record came as the one held (a header alone, or in a batch) */
static void slot_same(iter_t *it, int slot)
{
	it->slot_state[slot] |= (it->slot_state[slot] & SLOT_SAME) ? SLOT_SAME_AGAIN : SLOT_SAME;
}

/* the slot shown by this read, next in its order; ring_bytes: what the walk's ring takes of it (read_stream()) */
static void slot_shown(iter_t *it, int slot, size_t ring_bytes)
{
	it->slot_state[slot] |= SLOT_USED | SLOT_SHOWN;
	it->slot_pos[slot] = (int)it->nr;
	it->shown[it->nr++] = slot;
	it->stream_bytes += ring_bytes;
}

/*
 * The walk's batch of n tasks whose records are the ones held (bpf/iter.h):
 * 0, or -1 when one is not as held, or is shown twice (a walk of the list
 * shows a task once; a slot in shown[] twice would make iter_group() link
 * it to itself).
 */
static int take_same(iter_t *it, const struct iter_same *e, unsigned n)
{
	for (unsigned k = 0; k < n; k++) {
		/* the entry the program found names the task */
		const struct iter_held *held = e[k].held && e[k].held - 1 < it->held.end ? &it->held.e[e[k].held - 1] : NULL;
		int slot = held && held->tid && held->tid <= INT_MAX ? slot_in_order(it, held->tid) : -1;

		if (slot < 0 || held->hash != it->slot_hash[slot] || (it->slot_state[slot] & SLOT_SHOWN) ||
		    it->nr == it->slots_cap)
			return -1;
		slot_same(it, slot);
		slot_shown(it, slot, sizeof(*e));
	}
	return 0;
}

/*
 * The stream into the slots.  A header alone must find its task's slot
 * and the held entry that named it; anything else (a header for a task we
 * hold nothing of) fails the read: the pass then reads /proc, and the next
 * read, the held table cleared, sends every record whole.  The records
 * whole in it->stream[0, len) are taken; their bytes, or -1.
 */
static ssize_t take_records(iter_t *it, const char *stream, size_t len)
{
	size_t off = 0;

	while (len - off >= sizeof(struct iter_hdr)) {
		const struct iter_hdr *h = (const struct iter_hdr *)(stream + off);
		size_t size = (h->flags & ITER_SAME) ? sizeof(*h) : sizeof(struct iter_rec);
		int slot;

		if (h->flags & ITER_SAME_BATCH) {
			if (h->held > ITER_SAME_BATCH_MAX)
				goto corrupt;
			size = sizeof(*h) + (size_t)h->held * sizeof(struct iter_same);
			if (len - off < size)
				break;
			if (take_same(it, (const struct iter_same *)(h + 1), h->held) < 0)
				goto corrupt;
			it->stream_bytes += sizeof(*h) + WALK_RING_HDR;
			off += size;
			continue;
		}
		if (len - off < size)
			break;	/* the rest comes with the next read(2) */
		if (h->tid == 0 || h->tid > INT_MAX) {
			errno = EPROTO;
			return -1;
		}
		slot = slot_in_order(it, h->tid);
		if (h->flags & ITER_SAME) {
			struct iter_held *e = held_find_hinted(&it->held, h->tid, h->held);

			if (slot < 0 || it->slot_tgid[slot] != (int)h->tgid || !e || e->hash != h->hash)
				goto corrupt;
			/* the same record, its memory or handlers perhaps no longer shared (iter.bpf.c) */
			e->volatile_hash = h->volatile_hash;
			slot_same(it, slot);
		} else {
			const struct iter_rec *r = (const struct iter_rec *)h;

			if (slot < 0 || (it->slot_state[slot] & SLOT_SHOWN)) {
				/* a new task (or one shown twice: the second gets its own slot) */
				int shadowed = slot;

				if (it->free_top < 0 && slots_grow(it, 0) < 0)
					return -1;
				slot = it->free_top;
				if (slot_keep(it, slot, r) < 0 ||
				    pidmap_put(&it->by_tid, (int)h->tid, (void *)(uintptr_t)(slot + 1)) < 0) {
					slot_drop(it, slot);	/* (a record in the arena too) */
					it->slot_state[slot] = 0;
					return -1;	/* the slot stays free */
				}
				it->free_top = it->link[slot];
				if (shadowed >= 0)
					it->slot_state[shadowed] |= SLOT_SHADOWED;
			} else if (slot_keep(it, slot, r) < 0) {
				return -1;
			}
			held_set(it, slot, r);
		}
		if (it->nr == it->slots_cap)
			goto corrupt;
		/*
		 * a task the same, as held, goes in a batch of the walk's; any
		 * other, in a record of its own after the batch before it (a
		 * batch's header more)
		 */
		slot_shown(it, slot, (h->flags & (ITER_SAME | ITER_VOLATILE_SAME)) == (ITER_SAME | ITER_VOLATILE_SAME) ?
				     sizeof(struct iter_same) :
				     size + 2 * WALK_RING_HDR + sizeof(struct iter_hdr));
		off += size;
	}
	return (ssize_t)off;

corrupt:
	errno = EPROTO;
	return -1;
}

/* a read begins: this read's order goes in shown[], the last one's is the guide (slot_in_order()) */
static void order_begin(iter_t *it)
{
	int *tmp = it->before;

	it->before = it->shown;
	it->shown = tmp;
	it->before_nr = it->nr;
	it->before_next = 0;
	it->nr = 0;
	it->stream_bytes = 0;
}

/* a read of the iterator (vmon_tasks): 0, or -1 with errno */
static int stream_read(iter_t *it)
{
	size_t len = 0;
	ssize_t took;
	int fd, err;

	if (!it->stream) {
		void *p = mmap(NULL, ITER_STREAM_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return -1;
		it->stream = p;
	}
	fd = light_skel_iter_create(*it->prog.tasks_link);
	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t r = read(fd, it->stream + len, ITER_STREAM_BYTES - len);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			/* EAGAIN: the task list changed under the iterator: the pass uses /proc */
			goto fail;
		}
		if (r == 0)
			break;
		len += (size_t)r;
		if ((took = take_records(it, it->stream, len)) < 0)
			goto fail;
		len -= (size_t)took;
		memmove(it->stream, it->stream + took, len);
	}
	close(fd);
	if (len) {
		errno = EPROTO;
		return -1;
	}
	return 0;

fail:
	err = errno;
	close(fd);
	errno = err;
	return -1;
}

/* the ring's reader: one record of the walk, taken; non-zero stops the read */
static int walk_take(void *arg, const void *data, size_t size)
{
	iter_t *it = arg;
	ssize_t took;

	took = take_records(it, data, size);
	if (took == (ssize_t)size)
		return 0;
	it->walk_err = took < 0 ? errno : EPROTO;
	return 1;
}

/*
 * A read by the walk (vmon_tasks_walk): 1 when every task's record was
 * taken; 0 when the run was not whole (a ring too small for this pass) or
 * the kernel cannot walk: nothing of it was taken, the iterator is to be
 * read; or -1 with errno.
 */
static int walk_read(iter_t *it)
{
	char one[sizeof(struct iter_rec)];
	size_t before = it->nr;
	int fd, n, err;

	*it->prog.walk_status = 0;
	fd = light_skel_iter_create(*it->prog.walk_link);
	if (fd < 0) {
		it->walk_none = true;	/* (the iterator's own read may fail the same way, and say so) */
		return 0;
	}
	/* the program writes nothing to the read: it runs, for the one task, and the read ends */
	while ((n = (int)read(fd, one, sizeof(one))) < 0 && errno == EINTR)
		;
	err = errno;
	close(fd);
	if (n < 0) {
		bpf_ring_skip(it->walk);
		errno = err;
		return -1;
	}
	if (*it->prog.walk_status != WALK_DONE) {
		/* WALK_NONE, or 0: the kernel cannot walk, or the first thread is gone (and the link's task) */
		if (*it->prog.walk_status != WALK_FULL)
			it->walk_none = true;
		bpf_ring_skip(it->walk);
		return 0;
	}
	it->walk_err = 0;
	n = bpf_ring_consume(it->walk);
	if (n < 0 || it->walk_err || it->nr - before != *it->prog.walk_tasks) {
		err = it->walk_err ? it->walk_err : n < 0 ? errno : EPROTO;
		/* what this walk left is not the next one's */
		bpf_ring_skip(it->walk);
		errno = err;
		return -1;
	}
	it->walks++;
	return 1;
}

/* is the next read the walk's (where the kernel walks and the last read's records would fit its ring)? */
static bool walk_reads_next(const iter_t *it)
{
	return it->walk && !it->walk_none && it->walk_next;
}

/*
 * One read: by the walk when the last read's records would fit its ring,
 * else (or when it did not) by the iterator.  0, or -1 with errno.
 */
static int read_stream(iter_t *it)
{
	int r = 0;

	order_begin(it);
	if (walk_reads_next(it))
		r = walk_read(it);
	it->walked = r > 0;
	if (r == 0)
		r = stream_read(it) == 0 ? 1 : -1;
	it->walk_next = it->stream_bytes <= it->walk_size - it->walk_size / 8 && it->nr <= WALK_TASKS_MAX;
	if (r > 0 && walk_reads_next(it))
		stream_release(it);
	return r < 0 ? -1 : 0;
}

/*
 * The records a read's sweep gave back (of tasks gone, or the same twice
 * with no node taking them), resident until the heap is trimmed: they were
 * made together, at a read (a burst of processes, or the first read of a
 * client without PROC_ALL), and what was made after them keeps the heap's
 * top, which is all glibc gives back by itself.  So the pages they leave
 * free are given back once they add up to ITER_TRIM_BYTES (malloc_trim():
 * a walk of the free chunks, a fraction of a read).  Not counted: the
 * records nodes took (iter_probe()), most of them in the read's arena
 * (arena_take()), which the next read unmaps.
 */
#define ITER_TRIM_BYTES	(128 * 1024)

static void iter_trim(iter_t *it)
{
	if (it->given_back < ITER_TRIM_BYTES)
		return;
	it->given_back = 0;
#ifdef HAVE_MALLOC_TRIM
	malloc_trim(0);
#endif
}

/*
 * After a good read: the held entries put in its order when the program
 * found more than a 32nd of them out of it, through the index (a thread
 * started after other processes, which the walk meets beside its process,
 * was placed after them).  Only when the next read is of the same kind as
 * this one (the walk, in the tasks' list's order, or the iterator, in the
 * pids'): reads that alternate would order them back and forth, and a
 * machine where the walk is not read (too many tasks, too many changing)
 * is ordered for the iterator.  Else the free entries of tasks gone taken
 * back, once they are a sixteenth of those in use or the room after the
 * last is under an eighth of the table (a new task finds none there): two
 * free entries in a row send the program through the index for the task
 * after them.
 */
static void held_tidy(iter_t *it)
{
	held_table_t *t = &it->held;
	unsigned jumps = *it->prog.held_jumps, gone = t->end - t->nr;

	if (it->walked == walk_reads_next(it) && jumps > 8 && jumps > t->nr / 32) {
		held_order_begin(t);
		for (size_t k = 0; k < it->nr; k++)
			held_order_next(t, (unsigned)it->slot_tid[it->shown[k]]);
		held_order_end(t);
	} else if (gone && (gone * 16 > t->nr || t->cap - t->end < t->cap / 8)) {
		held_compact(t);
	}
}

static int iter_read(vmon_t *vmon)
{
	iter_t *it = vmon->internal->iter;
	int rc, err;

	if (!it) {
		errno = EINVAL;
		return -1;
	}
	held_resize(it);
	arena_promote(it);
	it->reads++;
	*it->prog.wchan_off = vmon->internal->wchan_off;
	/* what the last read showed is no longer this one's (read_stream() starts shown[] again) */
	for (size_t k = 0; k < it->nr; k++)
		it->slot_state[it->shown[k]] &= (unsigned char)~SLOT_SHOWN;
	it->rec_slot = it->group_slot = -1;
	rc = read_stream(it);
	err = errno;
	held_unset_marked(it);
	if (rc < 0) {
		errno = err;
		goto fail;
	}
	/*
	 * The slots of tasks gone (a compact array: the scan is cheap next to
	 * the read), and the records no node took that no node needs while
	 * they stay the same: a process of one thread the same in two reads in
	 * a row (a node made later reads /proc once: iter_probe()).  Only after
	 * a good read: after a failed one, whose pass read /proc, every node
	 * needs its record again.
	 */
	for (size_t slot = 0; slot < it->slots_cap; slot++) {
		if (!(it->slot_state[slot] & SLOT_SHOWN)) {
			if (it->slot_state[slot] & SLOT_USED)
				slot_free(it, (int)slot);
		} else if ((it->slot_state[slot] & (SLOT_SAME_AGAIN | SLOT_ONE_THREAD)) ==
				   (SLOT_SAME_AGAIN | SLOT_ONE_THREAD) && it->slot_rec[slot]) {
			slot_given_back(it, (int)slot);
			slot_drop(it, (int)slot);
		}
	}
	held_tidy(it);
	iter_trim(it);
	pidmap_fit(&it->by_tid);	/* small again after a storm */
	iter_group(it);
	it->generation = vmon->generation;
	return 0;

fail:
	/*
	 * What this read put in the slots stays (whole records, and the held
	 * entries saying so); but a stream that did not agree with the held
	 * table could do so again: the next read is told nothing is held.
	 */
	if (errno == EPROTO) {
		held_clear(&it->held);
		it->walk_next = false;	/* every record comes whole: the walk's ring would not hold them */
	}
	/* and no record goes after the next read for being the same in this one: this pass's nodes take none */
	for (size_t slot = 0; slot < it->slots_cap; slot++)
		it->slot_state[slot] &= (unsigned char)~(SLOT_SAME | SLOT_SAME_AGAIN);
	it->read_errors++;
	it->generation = 0;
	return -1;
}

static int iter_fds(const vmon_t *vmon)
{
	const iter_t *it = vmon->internal->iter;

	return it ? it->fds : 0;
}

static bool iter_active(const vmon_t *vmon)
{
	const iter_t *it = vmon->internal->iter;

	return it && it->generation == vmon->generation;
}

/* the slot of tid's record in the last read, or -1 */
static int slot_of(const iter_t *it, int tid)
{
	int i;

	if (tid <= 0 || (i = slot_by_tid(it, (unsigned)tid)) < 0 || !(it->slot_state[i] & SLOT_SHOWN))
		return -1;
	return i;
}

static int iter_list(vmon_t *vmon)
{
	struct _vmon_internal *in = vmon->internal;
	iter_t *it = in->iter;

	/* the first pass: the process index sized for the leaders shown (see slots_grow()'s call at the open) */
	if (!in->procs.nr) {
		size_t leaders = 0;

		for (size_t k = 0; k < it->nr; k++)
			leaders += it->slot_tid[it->shown[k]] == it->slot_tgid[it->shown[k]];
		(void)pidmap_reserve(&in->procs, leaders);
	}
	for (size_t k = 0; k < it->nr; k++) {
		int i = it->shown[k], tid = it->slot_tid[i];
		proc_node_t *node;

		if (tid != it->slot_tgid[i])
			continue;
		node = pidmap_get(&in->procs, tid);
		if (!node) {
			node = node_new(vmon, tid, tid, false, vmon->proc_wants);
			if (!node)
				return -1;
		}
		node->pass.seen = vmon->generation;
	}
	return 0;
}

/*
 * In place of procfs_probe(): the node's record, which must be the same
 * task (a process: a group's leader; a thread: of the same group), with
 * the start time we know (else ESTALE: the id was reused).  Sets what the
 * tree needs, and whether the task ran since the last sample (its
 * schedstat figures come with the record).  iter_covers() finds the
 * record: the slot of the node's task in this read, or -1.
 */
static int iter_covers(const vmon_t *vmon, const proc_node_t *node)
{
	const iter_t *it = vmon->internal->iter;
	int i = node->iter.index;

	if (!iter_active(vmon))
		return -1;
	/* the slot of its last pass's record, most often (slots last as long as their tasks); else looked up */
	if (i < 0 || (size_t)i >= it->slots_cap || !slot_is_tids(it, i, (unsigned)node->pub.pid) ||
	    !(it->slot_state[i] & SLOT_SHOWN))
		i = slot_of(it, node->pub.pid);
	if (i < 0)
		return -1;
	return it->slot_tgid[i] == (node->pub.is_thread ? node->tgid : node->pub.pid) ? i : -1;
}

static bool iter_listing_due(vmon_t *vmon)
{
	const iter_t *it = vmon->internal->iter;

	return vmon->internal->now >= it->last_listing + it->listing_gap;
}

/* a listing was made, and found processes that the records do not show or not: when the next is due */
static void iter_listed(vmon_t *vmon, bool found)
{
	iter_t *it = vmon->internal->iter;

	if (found || it->listing_gap < ITER_LISTING_SECS)
		it->listing_gap = ITER_LISTING_SECS;
	else if (it->listing_gap < ITER_LISTING_SECS_MAX)
		it->listing_gap *= 2;
}

/*
 * The processes the last listing made, looked at in the pass after it: a
 * process born between the read and the listing is in this read's records,
 * one the iterator does not visit is not (and, alive, it was found).
 */
static void iter_listed_check(vmon_t *vmon)
{
	iter_t *it = vmon->internal->iter;
	bool found = false;

	for (int i = 0; i < it->listed_nr && !found; i++) {
		const proc_node_t *node = pidmap_get(&vmon->internal->procs, it->listed[i]);

		found = node && !node->pub.is_stale && slot_of(it, it->listed[i]) < 0;
	}
	it->listed_nr = 0;
	if (found)
		iter_listed(vmon, true);
}

/*
 * Is the record a task's being reaped ('X')?  Such a task no longer has its
 * parent (0), group or session, and a process first seen so would be placed
 * at the top of the tree.  So is a task whose signal handlers were gone when
 * the program read it (release_task() takes them, after the reaper set
 * 'X'), as /proc's line with no thread is (stat_ident_reaped()).  The
 * program reads them before the state, so on x86 such a record says 'X'
 * too, but a CPU that reorders loads can pair them with 'Z', and the parent
 * the program then leaves 0.  (NULL, a record that could not be unpacked:
 * /proc, as for a reaped one.)
 */
static bool rec_reaped(const struct iter_rec *r)
{
	return !r || r->stat.state == 'X' || !(r->h.flags & ITER_HAS_SIGHAND);
}

/*
 * Does the slot keep what the node's pass takes from it: its record, and
 * for a process its threads' (group_of())?  A slot drops its record only
 * when its node, having taken it, takes nothing from it while it stays
 * the same (same, below), but for a store filled the first time: the
 * PROC_STAT store's is known here (proc_stat_sample()'s first), the
 * others read their files then (iter_fill_vm() and the like).
 */
static bool records_kept(const iter_t *it, int i, const proc_node_t *node, bool same, const vmon_proc_stat_t *s)
{
	if (!it->slot_rec[i])
		return same && BITTEST(s->present, VMON_PROC_STAT_PID);
	if (!node->pub.is_thread) {
		/* (a thread's slot never drops its record: this is the no-crash rule, not a case seen) */
		for (int t = it->link[i]; t >= 0; t = it->link[t]) {
			if (!it->slot_rec[t])
				return false;
		}
	}
	return true;
}

static int iter_probe(vmon_t *vmon, proc_node_t *node, int i)
{
	struct _vmon_internal *in = vmon->internal;
	iter_t *it = in->iter;
	const struct iter_rec *r;
	vmon_proc_stat_t *s;
	bool same;

	if (!(s = node_store(vmon, node, VMON_STORE_PROC_STAT)))
		return -1;
	/*
	 * A record the same as the last read's (the program sent its header
	 * alone), which this node took in the last pass, gives the same values:
	 * nothing to copy, and the start time, parent, thread count, state and
	 * run figures the node has are the record's.  For a thread, and a
	 * process of one thread (its sums are its leader's record, which holds
	 * its thread count), the record is all its values depend on.  The
	 * record is not touched, nor the stores (but the stat store's present
	 * bits where the record was dropped, which proc_stat_sample() reads
	 * next anyway): at 10,000 processes, every cache line read per node
	 * shows.
	 */
	same = !node->life.retry && (it->slot_state[i] & SLOT_SAME) && node->iter.gen == vmon->generation - 1 &&
	       (node->pub.is_thread || (it->slot_state[i] & SLOT_ONE_THREAD));
	/*
	 * A record dropped that this node needs (it missed a pass, it retries,
	 * it is new): /proc for this pass, as for a task the records do not
	 * show, and the next read sends the record whole.  The node's gen
	 * stays: its next pass takes the record.  So too a record of a task
	 * being reaped (rec_reaped()): it proves the task gone, not the pid.
	 * When a thread other than the leader execs, de_thread() gives it the
	 * leader's pid and then releases the old leader, whose record the
	 * program may have read: /proc's line, read twice where it looks
	 * reaped (procfs_probe()), is the new leader's, or ESRCH.
	 */
	if (!records_kept(it, i, node, same, s) || (!same && rec_reaped(rec_of(it, i)))) {
		held_forget(it, i);
		return procfs_probe(vmon, node);
	}
	node->iter.index = i;
	node->iter.same = same;
	node->iter.gen = vmon->generation;
	node->line.threaded_before = node->line.num_threads > 1;
	if (node->iter.same) {
		node->ran.answer = 0;
	} else {
		r = rec_of(it, i);
		if (node->life.confirmed && !node_start_matches(node, r->stat.start)) {
			errno = ESTALE;
			return -1;
		}
		node->start = r->stat.start;
		node->start_approx = false;
		node->identified = true;	/* its identity, for the events that name it (ended.c) */
		node->line.ppid = (int)r->stat.ppid;
		node->line.num_threads = (int)r->stat.num_threads;
		node->line.state = (char)r->stat.state;
		node->ran.answer = !node->ran.known || (unsigned)r->run_count != node->ran.run_count ||
				   r->run_ns != node->ran.run_ns;
		node->ran.known = true;
		node->ran.run_count = (unsigned)r->run_count;
		node->ran.run_ns = r->run_ns;
		/*
		 * A process of one thread takes its record in this pass (its
		 * fills read the copy rec_of() unpacked, kept until the next
		 * read), and in the next ones nothing while it stays the same:
		 * the slot's record goes now.  It is in the read's arena
		 * (arena_take()), which the next read unmaps; one malloc'd
		 * instead (no block could be mapped) is counted for iter_trim()
		 * at the first read, where they all go at once, and only then.
		 */
		if (!node->pub.is_thread && (it->slot_state[i] & SLOT_ONE_THREAD)) {
			if (it->reads - it->read_errors == 1)
				slot_given_back(it, i);
			slot_drop(it, i);
		}
	}
	node->pass.ran = vmon->generation;
	node->pass.probed = vmon->generation;
	probe_took_record(in, node);
	return 0;
}

/* the tids of the node's thread group, its leader first; *cursor starts at SOURCE_THREADS_START, 0 ends */
static int iter_next_thread(vmon_t *vmon, proc_node_t *node, int *cursor)
{
	const iter_t *it = vmon->internal->iter;
	int i;

	/* START: the leader, then -3 - its index: its group's list, then the list's next */
	if (*cursor == SOURCE_THREADS_START) {
		if ((i = slot_of(it, node->pub.pid)) < 0)
			return 0;
		*cursor = -3 - i;
		return node->pub.pid;
	}
	if (*cursor <= -3)
		*cursor = it->link[-3 - *cursor];
	else if (*cursor >= 0)
		*cursor = it->link[*cursor];
	if (*cursor < 0)
		return 0;
	return it->slot_tid[*cursor];
}

/*
 * cputime_adjust() of kernel/sched/cputime.c: rtime (the precise run time)
 * split between user and system in the ratio of the tick-sampled utime and
 * stime, neither going below the last split (*prev_u, *prev_s, updated).
 */
static void cputime_adjust(unsigned long long rtime, unsigned long long utime, unsigned long long stime,
			   unsigned long long *prev_u, unsigned long long *prev_s)
{
	if (*prev_u + *prev_s >= rtime)
		return;
	if (stime == 0) {
		utime = rtime;
		stime = 0;
	} else if (utime == 0) {
		stime = rtime;
	} else {
		stime = (unsigned long long)((unsigned __int128)stime * rtime / (stime + utime));
		if (stime > rtime)
			stime = rtime;
	}
	if (stime < *prev_s)
		stime = *prev_s;
	utime = rtime - stime;
	if (utime < *prev_u) {
		utime = *prev_u;
		stime = rtime - utime;
	}
	*prev_u = utime;
	*prev_s = stime;
}

/* a kernel thread's name as /proc shows it (a worker's current work added) */
static int kthread_comm(vmon_t *vmon, proc_node_t *node, vmon_proc_stat_t *s, bool first)
{
	buf_t *buf = &vmon->internal->buf;

	if (procfs_read(vmon, node, "comm", NULL, buf) < 0)
		return -1;
	if (buf->len && buf->data[buf->len - 1] == '\n')
		buf->data[--buf->len] = '\0';
	return proc_stat_set_text(s, VMON_PROC_STAT_COMM, buf->data, buf->len + 1, first);
}

/*
 * wchan from the record: "0" for a task running or runnable, else the
 * name %pB printed before its "+offset"; nothing (a /proc read if due)
 * where the program read none, or its text holds no name whole.
 */
static int give_wchan(vmon_t *vmon, const struct iter_rec *r, vmon_proc_stat_t *s, bool first)
{
	const char *plus;

	if (!vmon->internal->iter->wchan_ok)
		return 0;
	switch (r->wchan_state) {
	case ITER_WCHAN_RUNNABLE:
		return proc_stat_give_wchan(vmon, s, "0", 1, first);
	case ITER_WCHAN_SYMBOL:
		plus = memchr(r->wchan, '+', sizeof(r->wchan));
		if (!plus || plus == r->wchan || memchr(r->wchan, '\0', (size_t)(plus - r->wchan)))
			return 0;
		return proc_stat_give_wchan(vmon, s, r->wchan, (size_t)(plus - r->wchan), first);
	default:
		return 0;
	}
}

static int iter_fill_stat(vmon_t *vmon, proc_node_t *node, vmon_proc_stat_t *s, bool first)
{
	iter_t *it = vmon->internal->iter;
	struct iter_stat v;
	const struct iter_rec *r;
	const iter_group_t *g;
	unsigned long long rtime, utime, stime, gtime;
	int i, changes, c, c2;

	if (node->iter.same && !first)
		return 0;
	i = node->iter.index;
	/*
	 * Never without them: iter_probe() read /proc where this fill would
	 * need a record dropped (records_kept()), and a stat line of another
	 * node's may be in the buffer, so not SOURCE_NO_RECORD.
	 */
	r = rec_of(it, i);
	g = r && !node->pub.is_thread ? group_of(it, i, r) : NULL;
	if (!r || (!node->pub.is_thread && !g)) {
		errno = ENODATA;
		return -1;
	}
	v = r->stat;
	if (g) {
		rtime = g->run_ns;
		utime = g->utime_ns;
		stime = g->stime_ns;
		gtime = g->gtime_ns;
		v.minflt = g->minflt;
		v.majflt = g->majflt;
		if (r->h.flags & ITER_GROUP_EXIT)
			v.exit_code = r->group_exit_code;
		if (!node->iter.cpu_prev_known) {
			node->iter.cpu_prev_u = r->group_prev_utime_ns;
			node->iter.cpu_prev_s = r->group_prev_stime_ns;
		}
	} else {
		rtime = r->run_ns;
		utime = r->stat.utime;
		stime = r->stat.stime;
		gtime = r->stat.guest_time;
		if (!node->iter.cpu_prev_known) {
			node->iter.cpu_prev_u = r->prev_utime_ns;
			node->iter.cpu_prev_s = r->prev_stime_ns;
		}
	}
	node->iter.cpu_prev_known = true;
	cputime_adjust(rtime, utime, stime, &node->iter.cpu_prev_u, &node->iter.cpu_prev_s);
	v.utime = node->iter.cpu_prev_u / it->tick_ns;
	v.stime = node->iter.cpu_prev_s / it->tick_ns;
	v.guest_time = gtime / it->tick_ns;

	if ((changes = parse_copy_numbers(stat_copy, NELEM(stat_copy), &v, s, s->changed, s->present, first)) < 0)
		return -1;
	node_layout_seen(node, v.startcode, v.endcode, v.startstack, v.arg_start, v.env_start, first);

	/*
	 * wchan_addr, as the stat line's field 35 says it (do_task_stat()): 1
	 * for a task that is not running, that we may trace, and that is a
	 * thread or a process of one thread.  The record's state letter tells
	 * running from not; a task waking up (for a moment 'R' with a state the
	 * kernel does not count as running) reads 0 here, 1 there.  A caller
	 * without CAP_SYS_PTRACE may still trace its own tasks, which the
	 * record cannot tell: absent then, not 0.
	 */
	if (it->wchan_ok)
		c = proc_stat_set_number(s, VMON_PROC_STAT_WCHAN_ADDR,
					 v.state != 'R' && (node->pub.is_thread || v.num_threads < 2), first);
	else
		c = proc_stat_clear(s, VMON_PROC_STAT_WCHAN_ADDR);
	if (c < 0)
		return -1;
	changes += c;

	/*
	 * comm: the task's own, but for kernel threads, whose /proc name can
	 * be longer (a worker adds its current work): read from /proc when
	 * new, and for a worker whenever it ran (it can have taken other work).
	 */
	if (r->h.flags & ITER_KTHREAD) {
		if (first || ((r->h.flags & ITER_WQ_WORKER) && node->ran.answer != 0)) {
			c = kthread_comm(vmon, node, s, first);
			if (c < 0)
				return -1;
			changes += c;
		}
	} else {
		c = proc_stat_set_text(s, VMON_PROC_STAT_COMM, r->comm, strnlen(r->comm, sizeof(r->comm)) + 1, first);
		if (c < 0)
			return -1;
		changes += c;
	}
	if ((c = proc_stat_give_uid(vmon, s, r->uid, first)) < 0 || (c2 = give_wchan(vmon, r, s, first)) < 0)
		return -1;
	return changes + c + c2;
}

static int iter_fill_vm(vmon_t *vmon, proc_node_t *node, vmon_proc_vm_t *s, bool first)
{
	const vmon_store_desc_t *desc = &vmon_proc_store_descs[VMON_STORE_PROC_VM];
	const struct iter_rec *r;
	int changes = 0;

	if (node->iter.same && !first)
		return 0;
	if (!(r = rec_of(vmon->internal->iter, node->iter.index)))
		return SOURCE_NO_RECORD;	/* dropped while the same (records_kept()): statm */
	if (r->h.flags & ITER_HAS_MM)
		return parse_copy_numbers(vm_copy, NELEM(vm_copy), &r->vm, s, s->changed, s->present, first);
	/* no address space: statm reads all zeros */
	for (size_t i = 0; i < NELEM(vm_copy); i++) {
		int c = parse_set_ull(&desc->fields[vm_copy[i].sym], s, 0, s->changed, first);

		if (c < 0)
			return -1;
		BITSET(s->present, vm_copy[i].sym);
		changes += c;
	}
	return changes;
}

static int iter_fill_vm_status(vmon_t *vmon, proc_node_t *node, vmon_proc_vm_status_t *s, bool first)
{
	const struct iter_rec *r;

	if (node->iter.same && !first)
		return 0;
	if (!(r = rec_of(vmon->internal->iter, node->iter.index)))
		return SOURCE_NO_RECORD;	/* dropped while the same (records_kept()): status */
	/* no address space, no memory lines: the last ones kept, as its last data (proc_vm_status.c) */
	if (!(r->h.flags & ITER_HAS_MM))
		return 0;
	return parse_copy_numbers(vm_status_copy, NELEM(vm_status_copy), &r->vm, s, s->changed, s->present, first);
}

static int iter_fill_io(vmon_t *vmon, proc_node_t *node, vmon_proc_io_t *s, bool first)
{
	iter_t *it = vmon->internal->iter;
	int i = node->iter.index;
	const struct iter_rec *r;
	const iter_group_t *g = NULL;

	if (node->iter.same && !first)
		return 0;
	/* dropped while the same (records_kept()): io itself */
	if (!(r = rec_of(it, i)) || (!node->pub.is_thread && !(g = group_of(it, i, r))))
		return SOURCE_NO_RECORD;
	return parse_copy_numbers(io_copy, NELEM(io_copy), g ? &g->io : &r->io, s, s->changed, s->present, first);
}

/* the leader's own values for a process, as its stat line has them (no group sums among them) */
static int iter_fill_stat_extra(vmon_t *vmon, proc_node_t *node, vmon_proc_stat_extra_t *s, bool first)
{
	const struct iter_rec *r;

	if (node->iter.same && !first)
		return 0;
	if (!(r = rec_of(vmon->internal->iter, node->iter.index)))
		return SOURCE_NO_RECORD;	/* dropped while the same (records_kept()): the stat line */
	return parse_copy_numbers(stat_extra_copy, NELEM(stat_extra_copy), &r->stat, s, s->changed, s->present,
				  first);
}

static int iter_fill_sched(vmon_t *vmon, proc_node_t *node, vmon_proc_sched_t *s, bool first)
{
	const struct iter_rec *r;

	if (node->iter.same && !first)
		return 0;
	if (!(r = rec_of(vmon->internal->iter, node->iter.index)))
		return SOURCE_NO_RECORD;	/* dropped while the same (records_kept()): status */
	return parse_copy_numbers(sched_copy, NELEM(sched_copy), &r->sched, s, s->changed, s->present, first);
}


/* the task iterator as a source (source.h); a task its records do not show is read through /proc */
static int iter_source_list(vmon_t *vmon, bool wanted)
{
	iter_t *it = vmon->internal->iter;

	if (!iter_active(vmon))
		return procfs_list(vmon, wanted);	/* its read failed in this pass */
	if (iter_list(vmon) < 0)
		return -1;
	if (it->listed_nr)
		iter_listed_check(vmon);
	/* now and then /proc too, for the processes the records do not show; not seen there is not gone */
	if (iter_listing_due(vmon)) {
		int made;

		it->last_listing = vmon->internal->now;
		if (procfs_list_made(vmon, it->listed, ITER_LISTING_CHECKED, &made) < 0) {
			it->listed_nr = 0;
			iter_listed(vmon, true);	/* tried again at the shortest gap, as one that found */
			return -1;
		}
		/*
		 * Taken as finding nothing until the next pass says what of
		 * it the records do not show (iter_listed_check()); more
		 * than it checks is taken as found.
		 */
		it->listed_nr = made <= ITER_LISTING_CHECKED ? made : 0;
		iter_listed(vmon, made > ITER_LISTING_CHECKED);
		return SOURCE_LISTED_ALL;
	}
	return wanted ? SOURCE_LISTED_ALL : 0;	/* the records were the listing the event feed wanted */
}

static int iter_source_probe(vmon_t *vmon, proc_node_t *node)
{
	/* (one look-up of the node's slot per pass: at 10,000 processes each is a cache miss or two) */
	int i = iter_covers(vmon, node);

	return i >= 0 ? iter_probe(vmon, node, i) : procfs_probe(vmon, node);
}

static int iter_source_pass_begin(vmon_t *vmon)
{
	iter_t *it = vmon->internal->iter;
	unsigned long long walks = it ? it->walks : 0;

	if (iter_read(vmon) < 0)
		return -1;
	vmon->internal->stats.iter_reads++;
	if (it->walks != walks)
		vmon->internal->stats.iter_walks++;
	return 1;
}

/* did the node's probe in this pass take its record (not read /proc)? */
static bool took_record(vmon_t *vmon, const proc_node_t *node)
{
	return record_probed(vmon->internal, node) && iter_active(vmon);
}

static int iter_source_fill(vmon_t *vmon, proc_node_t *node, vmon_proc_store_t store, void *s, bool first)
{
	if (!took_record(vmon, node))
		return SOURCE_NO_RECORD;
	switch (store) {
	case VMON_STORE_PROC_STAT:
		return iter_fill_stat(vmon, node, s, first);
	case VMON_STORE_PROC_VM:
		return iter_fill_vm(vmon, node, s, first);
	case VMON_STORE_PROC_IO:
		return iter_fill_io(vmon, node, s, first);
	case VMON_STORE_PROC_SCHED:
		return iter_fill_sched(vmon, node, s, first);
	case VMON_STORE_PROC_STAT_EXTRA:
		return iter_fill_stat_extra(vmon, node, s, first);
	case VMON_STORE_PROC_VM_STATUS:
		return iter_fill_vm_status(vmon, node, s, first);
	default:
		return SOURCE_NO_RECORD;
	}
}

static int iter_source_next_thread(vmon_t *vmon, proc_node_t *node, int *cursor)
{
	if (!took_record(vmon, node))
		return SOURCE_NO_RECORD;
	return iter_next_thread(vmon, node, cursor);
}

const source_ops_t iter_source = {
	.sampler	= VMON_SAMPLER_ITER,
	.caps		= SOURCE_RECORDS,
	.open		= iter_open,
	.close		= iter_close,
	.pass_begin	= iter_source_pass_begin,
	.list		= iter_source_list,
	.probe		= iter_source_probe,
	.fill		= iter_source_fill,
	.next_thread	= iter_source_next_thread,
	.fds		= iter_fds,
};

#else	/* !HAVE_BPF */

static int iter_open(vmon_t *vmon, char *why, size_t why_size)
{
	(void)vmon;
	snprintf(why, why_size, "not built in (configured with --disable-bpf)");
	errno = EOPNOTSUPP;
	return -1;
}

/* never in use: it does not open */
const source_ops_t iter_source = {
	.sampler	= VMON_SAMPLER_ITER,
	.open		= iter_open,
	.list		= procfs_list,
	.probe		= procfs_probe,
};

#endif
