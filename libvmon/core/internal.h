/*
 * internal.h: what the parts of libvmon share and nothing outside sees.
 *
 * Who does what:
 *   vmon.c		the public entry points and one sample pass, in order
 *   tree.c		nodes: creation, the tree, their end (stale, or kept for a
 *			monitor), freeing (node_*)
 *   ended.c		the processes that ended lately, by identity (ended_*)
 *   pidmap.c		the pid and tid indexes (pidmap_*)
 *   procfs.c		reading /proc: fds held under the budget, identity (procfs_*)
 *   parse.c		the table-driven parsers generated from defs/ (parse_*)
 *   fields.c		the field descriptions generated from defs/
 *   sys_stat.c sys_vm.c sys_loadavg.c sys_sockets.c proc_stat.c proc_vm.c
 *   proc_io.c proc_env.c proc_follow.c proc_files.c proc_sched.c proc_rollup.c
 *			one sampler per want, as named in defs/ *_wants.def
 *   fobject.c		the open file objects both open-files wants share (fobject.h)
 *   dump.c escape.c	vmon_dump_procs() and vmon_escape()
 *   log_codec.c log_write.c log_read.c log_replay.c
 *			the log stream: its wire format and schema (log.h),
 *			writer, reader, and the replay into a vmon_t
 *   feed.c		the event feed: backend choice, pending events, applying
 *			them to the tree at the start of a pass (feed_*)
 *   feed_bpf.c feed_perf.c feed_netlink.c
 *			its backends, behind the interface of feed.h
 *   iter.c		the task iterator: the second sampling source, one BPF
 *			read per pass in place of the stat, statm and io reads (iter_*)
 */
#ifndef VMON_INTERNAL_H
#define VMON_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "vmon.h"
#include "core/pidmap.h"

/* a growable buffer for file contents */
typedef struct buf {
	char	*data;
	size_t	len;	/* bytes held; data[len] is always a NUL */
	size_t	cap;	/* bytes allocated */
} buf_t;

int buf_reserve(buf_t *buf, size_t cap);
void buf_free(buf_t *buf);

/*
 * A node: the public vmon_proc_t followed by what only the library knows.
 * Callers only ever see the vmon_proc_t, so it must stay the first member.
 */
typedef struct proc_node {
	vmon_proc_t		pub;

	unsigned long long	start;		/* identity with pid: start time, clock ticks after boot */
	int			tgid;		/* a thread's process id; a process's own pid */
	int			dir_fd;		/* its /proc directory, or -1 */
	bool			dir_held;	/* dir_fd survives the pass (counted in the budget) */
	int			schedstat_fd;	/* held open, or -1 */
	int			pass_schedstat_fd;	/* opened by the probe for this pass only, or -1 */
	int			status_fd;	/* held open, or -1 */
	int			hot_reserved;	/* hot fds counted as held, not yet open (procfs.c) */

	unsigned long long	probe;		/* the number of its last probe (internal->probes), 0: never */
	int			seen;		/* vmon->generation in which it was last found alive */
	int			monitors;	/* vmon_proc_monitor() references */
	int			probed;		/* vmon->generation of its last stat read */
	int			born;		/* the sample in which it is is_new */
	int			walked;		/* vmon->generation of its last explicit-mode walk */

	/* the last stat line parsed whole (procfs_stat_line_keep()), and whether this pass's is the same */
	char			*stat_copy;
	size_t			stat_copy_len;
	size_t			stat_copy_cap;
	bool			stat_same;

	/* from the stat line of the current pass, whatever the wants */
	int			ppid;
	int			num_threads;
	int			num_threads_before;	/* at the pass before (for PROC_IO's skip) */
	char			state;

	/* "has it run since the last sample?": the task's schedstat */
	unsigned long long	run_ns;
	unsigned long long	run_count;
	bool			run_known;	/* run_ns and run_count were read */
	int			ran_generation;	/* the pass ran_answer is for */
	int			ran_answer;	/* 1 ran, 0 did not, -1 cannot tell */

	double			cmdline_read_at;	/* CLOCK_MONOTONIC seconds of the last cmdline read */
	double			statm_due;	/* ... when statm must be read whatever the stat line says */
	double			oom_score_due;	/* ... and oom_score whatever moved (proc_sched.c) */

	bool			confirmed;	/* in the tree for the caller: its ctor has run, its dtor will */
	bool			identified;	/* its start time read: the identity checks compare with it */
	bool			exec_pending;	/* re-read cmdline and exe */
	/*
	 * Out of the live index (tree.c): its process ended or left the
	 * watched subtree.  It is then on exactly one of internal->leaving
	 * (this pass, not yet settled), ->ending (new in this sample: stale in
	 * the next), ->stale, ->exited (a monitored process kept at the top)
	 * or ->detached (out of the tree, held by a monitor), by stale_link.
	 */
	bool			left;
	bool			ended;		/* ... because its process or thread ended */
	bool			ending;		/* on internal->ending */
	bool			exited;		/* on internal->exited */
	bool			detached;	/* out of the tree, waiting for its last monitor to go */
	bool			exit_seen;	/* the feed applied its exit (exit_ns is its time) */
	unsigned long long	exit_ns;
	unsigned long long	ended_seq;	/* its entry in the ended table + 1 (ended.c), 0: none */
	bool			unmonitor_pending;	/* unmonitored during vmon_sample(): remove at its end */
	bool			start_approx;	/* start came from an event's time: may be off by one tick
						 * until the first stat read sets it (see node_start_matches()) */
	bool			leader_gone;	/* the feed saw its leader thread exit while others ran on */
	int			fed;		/* vmon->generation in which the event feed last wrote its stat
						 * store (0: never): that sample's read adds to what changed, it
						 * does not start over; as a zombie it keeps its command line */
	list_head_t		stale_link;	/* in internal->stale while stale */

	/* the task iterator's last user/system split of the run time, ns (iter.c) */
	unsigned long long	cpu_prev_u, cpu_prev_s;
	bool			cpu_prev_known;
	/* the pass that last took its record, and whether this pass's is the same (iter_probe()) */
	int			iter_gen;
	int			iter_index;	/* this pass's record: its slot in the iterator's pool */
	bool			iter_same;
	bool			retry;		/* a store failed in the last pass: read it all again (sample_node_busy()) */
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

/* the library's own state, behind vmon->internal */
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
	 * Whose stat_line is, and whose record the iterator's probe took: a
	 * probe's number, never reused, where a node's address would be once
	 * the node is freed (record_probed(), stat_line_probed()).
	 */
	unsigned long long	probes;		/* procfs_probe() and iter_probe() calls */
	unsigned long long	stat_line_probe;	/* the probe that read stat_line */
	unsigned long long	record_probe;	/* the last probe that took a source's record (iter_probe()) */
	double		now;		/* CLOCK_MONOTONIC seconds at the start of the pass */
	long		page_size;
	int		in_sample;
	int		user;		/* the user code running: USER_* */
	bool		unmonitor_pending;	/* some node's unmonitor_pending is set */
	bool		monitors_changed;	/* the top of the tree changed between samples */
	proc_node_t	**snapshot;	/* the processes to sample in this pass */
	size_t		snapshot_cap;
	bool		have_schedstat;	/* /proc/PID/schedstat gives run counts */
	proc_node_t	*busy;		/* the node being sampled: its directories are in use */
	unsigned	callback_run;		/* counts run_callbacks() calls */
	vmon_proc_callback_t *callback_next;	/* the callback run_callbacks() calls next, or NULL */
	struct vmon_files *files;	/* open-files state (fobject.h), NULL until needed */
	struct replay	*replay;	/* the replay's state while it is the source (log_replay.c) */
	struct feed	*feed;		/* the event feed (feed.c); NULL before vmon_init_attr() opens it */

	/* the sampling source (sources/, vmon_set_sampler()) */
	vmon_sampler_t	sampler_asked;	/* by the caller, or $VMON_SAMPLER */
	const struct source_ops *source;	/* in use; NULL: /proc */
	struct iter	*iter;		/* the task iterator's state while it is the source (iter.c) */
	char		sampler_reason[320];	/* why the iterator is not in use; "" when it is */
};

/* did the node's last probe read internal->stat_line, or take the iterator's record (of the pass node->probed says)? */
static inline bool stat_line_probed(const struct _vmon_internal *in, const proc_node_t *node)
{
	return node->probe && node->probe == in->stat_line_probe;
}

static inline bool record_probed(const struct _vmon_internal *in, const proc_node_t *node)
{
	return node->probe && node->probe == in->record_probe;
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

/* --- vmon.c --- */
int instance_init(vmon_t *vmon, const vmon_attr_t *attr);


/* --- tree.c --- */
proc_node_t *node_new(vmon_t *vmon, int pid, int tgid, bool is_thread, vmon_proc_wants_t wants);
void node_confirm(vmon_t *vmon, proc_node_t *node);
void node_attach(vmon_t *vmon, proc_node_t *node, proc_node_t *parent);
void node_refcnt_update(vmon_t *vmon, proc_node_t *node);
void node_end(vmon_t *vmon, proc_node_t *node);
void node_mark_stale(vmon_t *vmon, proc_node_t *node);
void node_settle(vmon_t *vmon);
void node_forget(vmon_t *vmon, proc_node_t *node);
void node_free_stale(vmon_t *vmon);
void node_stale_ending(vmon_t *vmon);
void node_free_all(vmon_t *vmon);
void node_remove_subtree(vmon_t *vmon, proc_node_t *node);
void node_place_by_ppid(vmon_t *vmon, proc_node_t *node);
void node_release_fds(vmon_t *vmon, proc_node_t *node);
void node_release_files(vmon_t *vmon, proc_node_t *node);
void node_release_warm_files(vmon_t *vmon, proc_node_t *node);
void node_drop_stores(vmon_t *vmon, proc_node_t *node, vmon_proc_wants_t dropped);
void *node_store(vmon_t *vmon, proc_node_t *node, vmon_proc_store_t store);
/* depth-first walk of the tree: threads first, then children */
vmon_proc_t *tree_first(vmon_t *vmon);
vmon_proc_t *tree_next(vmon_t *vmon, vmon_proc_t *proc, bool descend);
vmon_proc_t *tree_first_postorder(vmon_t *vmon);
vmon_proc_t *tree_next_postorder(vmon_t *vmon, vmon_proc_t *proc);

/* --- ended.c --- */
typedef struct ended {
	int			pid;
	unsigned long long	start;		/* clock ticks */
	bool			start_approx;
	unsigned long long	exit_ns;	/* the time of its exit event, 0: none seen */
	int			pass;		/* vmon->generation it ended in */
	unsigned long long	seq;
	unsigned long long	prev;		/* seq + 1 of the entry before with its pid, 0: none */
	proc_node_t		*node;		/* its node while that is in the tree, else NULL */
} ended_t;

int ended_init(vmon_t *vmon);
void ended_fini(vmon_t *vmon);
void ended_add(vmon_t *vmon, proc_node_t *node);
void ended_drop_node(vmon_t *vmon, proc_node_t *node);
void ended_exit(vmon_t *vmon, proc_node_t *node);
void ended_expire(vmon_t *vmon);
/* the ended process an event is about (fork: not one that began after that one's exit), or NULL */
ended_t *ended_find(vmon_t *vmon, const vmon_event_t *ev, unsigned long long tick_ns);

/* --- feed.c --- */
int feed_open(vmon_t *vmon, const vmon_attr_t *attr);
void feed_close(vmon_t *vmon);
void feed_apply(vmon_t *vmon);
bool feed_wants_listing(vmon_t *vmon);
void feed_listed(vmon_t *vmon);
void feed_node_gone(vmon_t *vmon, proc_node_t *node);
/* an event done with: counted, handed to every listener */
void feed_deliver(vmon_t *vmon, const vmon_event_t *event, proc_node_t *node);
/*
 * A listener hears every event the feed delivers, at the end of the pass
 * (node: the event's node in the tree, or NULL), in list order: `first`
 * puts it before the others.  `gone`, if any, is called when the instance
 * goes.  The caller's callback is one (vmon_feed_set_callback()), a log
 * writer that follows the feed another.
 */
typedef void feed_listener_fn(vmon_t *vmon, const vmon_event_t *event, proc_node_t *node, void *ctx);
int feed_listen(vmon_t *vmon, feed_listener_fn *fn, void (*gone)(void *ctx), void *ctx, bool first);
void feed_unlisten(vmon_t *vmon, feed_listener_fn *fn, void *ctx);
/* the context of fn's listener, or NULL: none */
void *feed_listener_ctx(vmon_t *vmon, feed_listener_fn *fn);
/* the events applied in this pass, to feed_deliver(), now that the tree is whole */
void feed_flush(vmon_t *vmon);
/* n events lost (0: some, how many unknown), as a replayed log's drop notice says */
void feed_count_lost(vmon_t *vmon, unsigned long long n);

/* --- sources/: the sampling sources (source.h) --- */
#include "sources/source.h"

/* --- procfs.c --- */
int procfs_open_root(vmon_t *vmon, const char *root);
int procfs_node_dir(vmon_t *vmon, proc_node_t *node, bool verify);
void procfs_node_done(vmon_t *vmon, proc_node_t *node);
int procfs_read(vmon_t *vmon, proc_node_t *node, const char *name, int *held_fd, buf_t *buf);
int procfs_read_root(vmon_t *vmon, const char *name, int *held_fd, buf_t *buf);
ssize_t procfs_readlink(vmon_t *vmon, proc_node_t *node, const char *name, buf_t *buf);
ssize_t procfs_readlinkat(vmon_t *vmon, int dir_fd, const char *name, buf_t *buf);
int procfs_openat(vmon_t *vmon, int dir_fd, const char *name, int flags);
unsigned long long procfs_stat_start(const char *line, size_t len);
void procfs_close_held(vmon_t *vmon, int *fd);
void procfs_close_warm(vmon_t *vmon, int *fd);
void procfs_close_dir(vmon_t *vmon, proc_node_t *node);
bool procfs_hold(vmon_t *vmon);
int procfs_probe(vmon_t *vmon, proc_node_t *node);
int procfs_list(vmon_t *vmon, bool wanted);
void procfs_stat_line_keep(proc_node_t *node, const buf_t *line);
void procfs_stat_line_forget(proc_node_t *node);
bool procfs_node_exists(vmon_t *vmon, const proc_node_t *node);
int procfs_ran(vmon_t *vmon, proc_node_t *node);
void procfs_shrink_budget(vmon_t *vmon);

/* --- util/host.c --- */
/* why the kernel's pids (its events, the iterator's records) are not the proc root's, or NULL */
const char *host_root_reason(vmon_t *vmon);
int host_count_fds(vmon_t *vmon);	/* open in this process, or -1 (the feed's and the iterator's are counted so) */

/* --- parse.c --- */
size_t parse_complete_len(const char *text, size_t len);
const char *parse_stat_fields(const char *line, size_t len, const char **comm, size_t *comm_len);
int parse_store(const vmon_field_t *fields, int fields_nr, vmon_source_t source, const char *file,
		const char *text, size_t len, void *store, char *changed, char *present, bool first);
int parse_stat_rest(const vmon_field_t *fields, int fields_nr, const char *rest, size_t len,
		    void *store, char *changed, char *present, bool first);
int parse_set_string(const vmon_field_t *f, void *store, const char *text, size_t len, char *changed, bool first);
int parse_set_ull(const vmon_field_t *f, void *store, unsigned long long value, char *changed, bool first);
int parse_clear(const vmon_field_t *f, void *store, char *changed, char *present);
int parse_clear_strings(const vmon_field_t *text, const vmon_field_t *count, const vmon_field_t *vec,
			void *store, char *changed, char *present);
int parse_split_strings(const vmon_field_t *text, const vmon_field_t *count, const vmon_field_t *vec,
			void *store, char *changed, char *present, bool first);
bool parse_ull(const char **p, const char *end, unsigned long long *value);
bool parse_ll(const char **p, const char *end, long long *value);

/* --- samplers: one per want, named in defs/ *_wants.def --- */
#define vmon_want(_sym, _name, _func) int _func(vmon_t *vmon, void **store);
#include "defs/sys_wants.def"
#define vmon_want(_sym, _name, _func) int _func(vmon_t *vmon, vmon_proc_t *proc, void **store);
#include "defs/proc_wants.def"

/* the value a sampler returns: did its store change? -1: it failed, errno set */
#define SAMPLE_UNCHANGED	0
#define SAMPLE_CHANGED		1

/* store teardown, for the stores that own memory or fds */
void sys_stat_free(vmon_t *vmon, vmon_sys_stat_t *store);
void sys_vm_free(vmon_t *vmon, vmon_sys_vm_t *store);
void sys_loadavg_free(vmon_t *vmon, vmon_sys_loadavg_t *store);
void proc_stat_free(vmon_t *vmon, vmon_proc_stat_t *store);
int proc_stat_set_cmdline(vmon_proc_stat_t *s, const char *text, size_t len, bool first);
void proc_vm_free(vmon_t *vmon, vmon_proc_vm_t *store);
void proc_io_free(vmon_t *vmon, vmon_proc_io_t *store);
void proc_follow_children_free(vmon_t *vmon, vmon_proc_follow_children_t *store);
void proc_follow_threads_free(vmon_t *vmon, vmon_proc_follow_threads_t *store);
void sys_sockets_free(vmon_t *vmon, vmon_sys_sockets_t *store);
/* PROC_FILES: close the table's held handles; drop the node's reference to its table */
void proc_files_release(vmon_t *vmon, vmon_proc_t *proc);
void proc_files_put(vmon_t *vmon, vmon_proc_t *proc);
void files_fini(vmon_t *vmon);

#endif
