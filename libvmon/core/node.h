/*
 * node.h: a node of the tree, a process or a thread (tree.c makes them),
 * and the small questions asked of one.
 */
#ifndef VMON_NODE_H
#define VMON_NODE_H

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include "vmon.h"
#include "util/hash.h"

/* the fds it holds between passes (procfs.c's budget) or for this pass */
struct node_fds {
	int			dir_fd;		/* its /proc directory, or -1 */
	int			schedstat_fd;	/* held open, or -1 */
	int			pass_schedstat_fd;	/* opened by the probe for this pass only, or -1 */
	int			status_fd;	/* held open, or -1 */
	unsigned char		hot_reserved;	/* hot fds counted as held, not yet open (procfs.c:
						 * at most hot_fds(), 4) */
	bool			dir_held;	/* dir_fd survives the pass (counted in the budget) */
};

/* in which pass things last happened to it: vmon->generation stamps */
struct node_passes {
	int			seen;		/* the pass in which it was last found alive */
	int			probed;		/* ... of its last stat read */
	int			born;		/* the sample in which it is is_new */
	int			walked;		/* ... of its last explicit-mode walk */
	int			started;	/* ... whose first writes of the stat and memory status
						 * stores started their changed bits over (life.stores_started,
						 * node_store_start()) */
	int			ran;		/* ... that ran.answer is for */
};

/*
 * What the tree takes of its stat line (or record), whatever the wants.  No
 * copy of the last line is kept to skip the parsing of one that did not
 * change: it was about 330 bytes a process under /proc, and the store's
 * values are what a change is told against anyway.
 */
struct node_stat_line {
	int			ppid;
	int			num_threads;
	unsigned		layout;		/* a hash of the code, stack, argument and environment addresses */
	char			state;
	bool			threaded_before;	/* num_threads > 1 at the pass before (PROC_IO's and PROC_VM's skips) */
	bool			layout_moved;	/* ... which moved in this pass: a new program (node_layout_seen()) */
	bool			statm_moved;	/* PROC_VM read statm in this pass, and it moved (proc_vm_status.c) */
};

/*
 * "has it run since the last sample?": the task's schedstat (procfs_ran())
 * or record; its pass is pass.ran.  The count's low 32 bits are enough, as
 * for the iterator's held table (bpf/iter.h, iter_held_not_run()): 16
 * bytes, not 24.
 */
struct node_ran {
	unsigned long long	run_ns;
	unsigned		run_count;	/* its low 32 bits */
	bool			known;		/* run_ns and run_count were read */
	signed char		answer;		/* 1 ran, 0 did not, -1 cannot tell */
};

/*
 * When files read by time, not by change, are due: due times of the
 * instance's (due_in(), due_reached() in instance.h), 0 at once.
 */
struct node_due {
	unsigned		cmdline;	/* cmdline again, if it ran (set-proc-title) */
	unsigned		statm;		/* statm, whatever the stat line says */
	unsigned		oom_score;	/* oom_score, whatever moved (proc_sched.c) */
};

/*
 * Its life in the tree (tree.c).  Out of the live index, its process ended
 * or left the watched subtree: it is then on exactly one of
 * internal->leaving (this pass, not yet settled), ->ending (new in this
 * sample: stale in the next), ->stale, ->exited (a monitored process kept
 * at the top) or ->detached (out of the tree, held by a monitor), by
 * stale_link.
 */
struct node_life {
	int			monitors;	/* vmon_proc_monitor() references */
	/* (bits: thirteen bools in two bytes, so that the part is 40 bytes and not 48) */
	bool			confirmed : 1;	/* in the tree for the caller: its ctor has run, its dtor will */
	bool			exec_pending : 1;	/* re-read cmdline and exe */
	bool			retry : 1;	/* a store failed in the last pass: read it all again (sample_node_busy()) */
	bool			left : 1;
	bool			ended : 1;	/* ... because its process or thread ended */
	bool			ending : 1;	/* on internal->ending */
	bool			exited : 1;	/* on internal->exited */
	bool			detached : 1;	/* out of the tree, waiting for its last monitor to go */
	bool			unmonitor_pending : 1;	/* unmonitored during vmon_sample(): remove at its end */
	bool			exit_seen : 1;	/* the feed applied its exit (exit_ns is its time) */
	bool			leader_gone : 1;	/* the feed saw its leader thread exit while others ran on */
	bool			freeing : 1;	/* node_forget() runs its dtor and frees it: unmonitors are too late */
	bool			fed : 1;	/* the event feed wrote its stores: as a zombie it keeps its
						 * command line */
	/* (in the two bytes left before exit_ns: the stores, 1 << id, pass.started's first writes reached) */
	unsigned short		stores_started;
	unsigned long long	exit_ns;
	unsigned long long	ended_seq;	/* its entry in the ended table + 1 (ended.c), 0: none */
	list_head_t		stale_link;	/* in one of the lists above */
};

/* the task iterator's (iter.c) */
struct node_iter {
	unsigned long long	cpu_prev_u, cpu_prev_s;	/* its last user/system split of the run time, ns */
	int			gen;		/* the pass that last took its record */
	/*
	 * The slot and two bools in one word (24 bytes, not 32): the pool
	 * holds a slot a task, and there are at most PID_MAX_LIMIT (2^22).
	 */
	int			index : 30;	/* this pass's record: its slot in the iterator's pool */
	bool			cpu_prev_known : 1;
	bool			same : 1;	/* this pass's record is the last one's */
};

/*
 * A node: the public vmon_proc_t followed by what only the library knows,
 * in parts by concern.  Callers only ever see the vmon_proc_t, so it must
 * stay the first member.  There is one per task: 392 bytes, 168 of them
 * private, with the parts' small members together, a part's bools as bits
 * and small counts in small types (a part with an 8-byte member is rounded
 * to 8 bytes, and the allocator's chunks to 16, a request of n bytes
 * taking n + 8 rounded up: a cut counts once it takes the block below a
 * multiple of 16; the four parts of 4-byte members, fds, due, pass and
 * line, are 72 bytes together, between two 8-byte ones: none to spare),
 * and after it in the same block the room of the stores it wanted when it
 * was made (node_new()): with PROC_STAT, PROC_VM and PROC_IO, 872 bytes, a
 * malloc chunk of 880.
 */
typedef struct proc_node {
	vmon_proc_t		pub;

	/* identity: pid (pub.pid) and start time */
	unsigned long long	start;		/* clock ticks after boot */
	int			tgid;		/* a thread's process id; a process's own pid */
	bool			identified;	/* its start read: the identity checks compare with it */
	bool			start_approx;	/* start came from an event's time: may be off by one tick
						 * until the first stat read sets it (see node_start_matches()) */
	unsigned short		rooms;		/* the stores (1 << id) with room after the node (tree.c) */

	struct node_fds		fds;
	struct node_due		due;		/* (fds to line: the parts of 4-byte members, 72 bytes) */
	struct node_passes	pass;
	struct node_stat_line	line;
	struct node_ran		ran;
	struct node_life	life;
	struct node_iter	iter;
} proc_node_t;

/* a per-process sample callback: the public struct, and the run_callbacks() call it was added in */
typedef struct proc_callback {
	vmon_proc_callback_t	pub;
	unsigned		added_run;
} proc_callback_t;

static inline proc_node_t *node_of(vmon_proc_t *proc)
{
	return (proc_node_t *)proc;
}

/* a store's errno in proc->errors[], a byte each (vmon.h): EOVERFLOW for one that does not fit */
static inline void proc_error_set(vmon_proc_t *proc, int store, int err)
{
	proc->errors[store] = err >= 0 && err <= UCHAR_MAX ? (unsigned char)err : EOVERFLOW;
}

/*
 * Ask the CPU for a node's cache lines ahead of a walk that reaches it a
 * few nodes later; node_prefetch_stores() for the first line of each of
 * its stores (their changed and present bits), once the node's line with
 * the pointers has come.  The pass walks the nodes in the pid index's
 * order, which is not their order in memory: at 10,000 processes nearly
 * every node was a wait for memory, one line after the other.  Hints:
 * they change nothing.
 */
static inline void node_prefetch(const proc_node_t *node)
{
	for (size_t off = 0; off < sizeof(*node); off += 64)
		__builtin_prefetch((const char *)node + off);
}

static inline void node_prefetch_stores(const proc_node_t *node)
{
	for (int i = 0; i < VMON_STORE_PROC_NR; i++) {
		if (node->pub.stores[i])
			__builtin_prefetch(node->pub.stores[i]);
	}
}

/*
 * The addresses of a task's text, stack, arguments and environment, from
 * this pass's stat line or record (PROC_STAT_EXTRA's fields, which the node
 * may not keep): they move only when a new program is loaded, and are 0
 * where ptrace access is denied.  Kept as a hash, 4 bytes where the fields
 * are 40; layout_moved says whether they moved (proc_stat.c's exec check,
 * proc_vm.c's statm skip).  Called once a pass, before those read it.
 */
static inline void node_layout_seen(proc_node_t *node, unsigned long long startcode, unsigned long long endcode,
				    unsigned long long startstack, unsigned long long arg_start,
				    unsigned long long env_start, bool first)
{
	uint64_t h = vhash_mix(vhash_mix(vhash_mix(vhash_mix(vhash_mix(0, startcode), endcode), startstack),
					 arg_start), env_start);
	unsigned layout = (unsigned)(h ^ (h >> 32));

	node->line.layout_moved = !first && layout != node->line.layout;
	node->line.layout = layout;
}

/* the wants of a thread node whose process's wants are `wants`: the same, following nothing */
static inline vmon_proc_wants_t thread_wants(vmon_proc_wants_t wants)
{
	return wants & ~(VMON_WANT_PROC_FOLLOW_CHILDREN | VMON_WANT_PROC_FOLLOW_THREADS);
}

/* is start (clock ticks) the start time of the process the node stands for? */
static inline bool node_start_matches(const proc_node_t *node, unsigned long long start)
{
	if (start == node->start)
		return true;
	return node->start_approx && start + 1 >= node->start && start <= node->start + 1;
}

#endif
