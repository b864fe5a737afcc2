/*
 * instance.h: the library's own state behind vmon->internal, and who of the
 * caller's code is running; vmon.c sets an instance up and runs its passes.
 */
#ifndef VMON_INSTANCE_H
#define VMON_INSTANCE_H

#include <limits.h>
#include <stdbool.h>
#include "vmon.h"
#include "util/pidmap.h"
#include "core/node.h"
#include "util/buf.h"

/* the library's own state, behind vmon->internal */
/* what release_fds gives back: the warm files, every file but the directories, everything */
enum { NODE_RELEASE_WARM, NODE_RELEASE_FILES, NODE_RELEASE_ALL };

struct _vmon_internal {
	int		proc_fd;	/* dirfd(vmon->proc_dir) */
	char		*proc_root;
	bool		proc_is_live;	/* proc_root is the real /proc */
	pidmap_t	procs;		/* pid -> live process node */
	pidmap_t	threads;	/* tid -> live thread node */
	list_head_t	leaving;	/* nodes out of the index in this pass, not yet settled (tree.c) */
	list_head_t	ending;		/* new in the last pass and gone: stale in this one */
	list_head_t	stale;		/* nodes stale in the last pass, freed at the start of the next */
	list_head_t	exited;		/* monitored top-level processes that ended, kept (vmon_proc_monitor(3)) */
	list_head_t	detached;	/* stale nodes still held by a monitor */
	struct ended_table *ended;	/* the processes that ended lately (ended.c) */
	int		*array_free;	/* free slots of vmon->array[], a stack (room for every slot) */
	int		array_free_nr;

	int		fd_budget;	/* files that may be held open between passes */
	int		fd_budget_max;	/* ... as configured: what it grows back to after EMFILE cut it */
	int		fd_budget_pass;	/* vmon->generation of the last cut or growth (procfs.c) */
	int		fds_held;
	int		warm_held;	/* of fds_held, the warm ones (procfs.c) */
	int		dirs_held;	/* of warm_held, the directories */

	vmon_stats_t	stats;		/* what the samplers count; vmon_get_stats() adds the gauges */
	buf_t		buf;		/* file contents being parsed */
	buf_t		stat_line;	/* the stat line of the node being sampled */
	buf_t		list_buf;	/* children pids gathered from several files */
	/*
	 * Whose stat_line is, and whose record the iterator's last probe took
	 * (probe_read_line(), probe_took_record()): a node's last probe is one
	 * or the other, and a node freed is named by neither (probe_forget()),
	 * so that a node made later at its address is not taken for it.  Here
	 * and not a probe number in every node: 8 bytes a node less.
	 */
	const proc_node_t *stat_line_node;	/* the node whose probe read stat_line */
	const proc_node_t *record_node;	/* the node whose probe took a source's record (iter_probe()) */
	unsigned	stat_given;	/* PROC_STAT's reads a source's fill gave in place of /proc, this call (STAT_GIVEN_*) */
	double		now;		/* CLOCK_MONOTONIC seconds at the start of the pass */
	double		due_base;	/* ... when the instance was made: due times count from it */
	long		page_size;
	int		in_sample;
	bool		reads_done;	/* the callbacks after every read of the pass run: a node made now is read in the next */
	int		user;		/* the user code running: USER_* */
	bool		unmonitor_pending;	/* some node's unmonitor_pending is set */
	bool		destroying;	/* vmon_destroy() is freeing every node: a dtor's unmonitor has nothing to let go */
	bool		monitors_changed;	/* the top of the tree changed between samples */
	proc_node_t	**snapshot;	/* the processes to sample in this pass */
	size_t		snapshot_cap;
	bool		have_schedstat;	/* /proc/PID/schedstat gives run counts */
	bool		wchan_off;	/* this pass: VMON_FLAG_NO_WCHAN */
	bool		wchan_again;	/* ... was set in the last one, not in this one */
	proc_node_t	*busy;		/* the node being sampled: its directories are in use */
	unsigned	nodes_unlooked;	/* nodes sampled since the feed's kernel buffer was looked at (feed_keep_up()) */
	unsigned	callback_run;		/* counts run_callbacks() calls */
	size_t		callbacks_nr;		/* sample callbacks on all nodes: none, no walk runs them */
	vmon_proc_callback_t *callback_next;	/* the callback run_callbacks() calls next, or NULL */
	struct vmon_files *files;	/* open-files state (fobject.h), NULL until needed */
	struct replay	*replay;	/* the replay's state while it is the source (sources/log_replay.c) */
	struct feed	*feed;		/* the event feed (feed.c); NULL before vmon_init_attr() opens it */
	/* told of a process the tree found ended, before it leaves the index (the feed, for its late exit) */
	void		(*node_gone)(vmon_t *vmon, proc_node_t *node);
	/* give back what a node holds of the fd budget (tree.c's node_release(), NODE_RELEASE_*): procfs.c's
	 * budget takes fds back through it, as the tree calls procfs.c to close them */
	void		(*release_fds)(vmon_t *vmon, proc_node_t *node, int what);

	/* the sampling source (sources/, vmon_set_sampler()) */
	vmon_sampler_t	sampler_asked;	/* by the caller, or $VMON_SAMPLER */
	const struct source_ops *source;	/* in use; NULL: /proc */
	struct iter	*iter;		/* the task iterator's state while it is the source (iter.c) */
	char		sampler_reason[320];	/* why the iterator is not in use; "" when it is */
};

/* did the node's last probe read internal->stat_line, or take the iterator's record (of the pass node->probed says)? */
static inline bool stat_line_probed(const struct _vmon_internal *in, const proc_node_t *node)
{
	return in->stat_line_node == node;
}

static inline bool record_probed(const struct _vmon_internal *in, const proc_node_t *node)
{
	return in->record_node == node;
}

/* the node's probe read internal->stat_line: its last probe did not take a record */
static inline void probe_read_line(struct _vmon_internal *in, const proc_node_t *node)
{
	in->stat_line_node = node;
	if (in->record_node == node)
		in->record_node = NULL;
}

/* the node's probe took the source's record: its last probe did not read stat_line */
static inline void probe_took_record(struct _vmon_internal *in, const proc_node_t *node)
{
	in->record_node = node;
	if (in->stat_line_node == node)
		in->stat_line_node = NULL;
}

/* the node is freed: no probe names it */
static inline void probe_forget(struct _vmon_internal *in, const proc_node_t *node)
{
	if (in->stat_line_node == node)
		in->stat_line_node = NULL;
	if (in->record_node == node)
		in->record_node = NULL;
}

/*
 * The caller's code the library is running, in internal->user: a call back
 * into the library that would change what the library is walking is
 * refused (EBUSY).  From a sample callback (vmon->sample_cb, a per-process
 * callback) vmon_proc_monitor() and vmon_proc_unmonitor() may be called;
 * from a constructor, destructor or event callback the tree may only be
 * read.  vmon_sample() may be called from none.
 */
enum {
	USER_NONE,
	USER_SAMPLE,
	USER_NOTIFY,
};

static inline int user_enter(struct _vmon_internal *in, int kind)
{
	int prev = in->user;

	in->user = kind;
	return prev;
}

static inline void user_leave(struct _vmon_internal *in, int prev)
{
	in->user = prev;
}

/* how often a running process's cmdline is re-read without an exec (set-proc-title) */
#define CMDLINE_REFRESH_SECS 5.0
/* how late a statm change that the stat line cannot show may be seen (proc_vm.c) */
#define STATM_REFRESH_SECS 5.0
/* ... and an oom_score change that neither the task's memory nor its adjustment shows (proc_sched.c) */
#define OOM_SCORE_REFRESH_SECS 5.0

/*
 * A node's due times (node->due) are 32 bits: sixteenths of a second since
 * the instance was made, 8 years of them (12 bytes a node, not 24).  Rounded
 * down, a time comes due up to a sixteenth early, never late; past 8 years
 * every due time has come, and the files are read in every pass.
 */
#define DUE_TICKS_PER_SEC 16

static inline unsigned due_ticks(const struct _vmon_internal *in, double secs)
{
	double ticks = (secs - in->due_base) * DUE_TICKS_PER_SEC;

	if (ticks <= 0)
		return 0;
	return ticks >= (double)UINT_MAX ? UINT_MAX : (unsigned)ticks;
}

/* the due time `after` seconds from this pass's start */
static inline unsigned due_in(const struct _vmon_internal *in, double after)
{
	return due_ticks(in, in->now + after);
}

/* has this pass come to the due time `due`? */
static inline bool due_reached(const struct _vmon_internal *in, unsigned due)
{
	return due_ticks(in, in->now) >= due;
}

/* --- vmon.c --- */
int instance_init(vmon_t *vmon, const vmon_attr_t *attr);

#endif
