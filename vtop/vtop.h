/*
 * vtop.h: what the parts of vtop share.
 *
 * Who does what:
 *   data/arena.c	a chunked allocator: a snapshot's copies live in one (vt_arena_*)
 *   data/snapshot.c	the library's tree copied out after each sample: rows, system
 *		figures, CPU%, exited rows (vt_builder_*, vt_snapshot_*)
 *   data/columns.c	every column: the defs tables' fields plus vtop's own few
 *		derived ones, formatted and compared once for all (vt_column_*)
 *   data/model.c	the view of a snapshot: filter, sort, tree flattening,
 *		collapse, search, selection (vt_view_*)
 *   data/sampler.c	the sampling thread and the buffers it hands over (vt_sampler_*)
 *   data/files.c	the open files of the process the files view shows, copied out (vt_files_*)
 *   data/event_feed.c	the event feed as vtop sees it (vt_feed_*)
 *   data/replay.c	-r: a log read back into the vmon_t the builder reads (vt_replay_*)
 *   batch/batch.c	-b: text, json, csv, prometheus and openmetrics output (vt_batch_*)
 *   config.c	the command line and $XDG_CONFIG_HOME/vtop/vtoprc (vt_config_*)
 *   screen/tui.c	the curses screen: meters, list, dialogs, key table (vt_tui_*)
 *   screen/setup.c	the F2 setup screen (vt_setup_*)
 *   main.c	picks batch or interactive
 *
 * The sampling thread owns the vmon_t; nothing else touches it.  What the
 * screen and the batch formats read is a vt_snapshot_t: plain copies.
 */
#ifndef VTOP_H
#define VTOP_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "vmon.h"
#include "vmon_log.h"

/* --- data/arena.c --- */
typedef struct vt_arena_chunk vt_arena_chunk_t;
typedef struct vt_arena {
	vt_arena_chunk_t	*first;
	vt_arena_chunk_t	*cur;
	size_t			bytes;	/* handed out since the last reset */
} vt_arena_t;

void *vt_arena_alloc(vt_arena_t *arena, size_t size);
char *vt_arena_strndup(vt_arena_t *arena, const char *s, size_t len);
void vt_arena_reset(vt_arena_t *arena);
void vt_arena_free(vt_arena_t *arena);

/* --- data/snapshot.c --- */
enum {
	VT_ROW_THREAD	= 1 << 0,	/* a thread of the row `parent` */
	VT_ROW_KTHREAD	= 1 << 1,	/* a kernel thread (or a thread of one) */
	VT_ROW_NEW	= 1 << 2,	/* first seen in this sample */
	VT_ROW_EXITED	= 1 << 3,	/* gone: shown for a few refreshes after it exited */
};

/* one process or thread, copied out of the library's tree */
typedef struct vt_row {
	int			pid;
	int			ppid;		/* the tree parent's pid (a thread's: its process); 0 at the top */
	int			parent;		/* index of the tree parent in the snapshot, -1 at the top */
	unsigned		flags;		/* VT_ROW_* */
	unsigned long long	start;		/* start time, ticks after boot: with pid, its identity */
	int			exited_age;	/* exited rows: refreshes since it exited, 0 in the first */
	int			exit_code;	/* exited rows: wait status if known, else -1 */
	uid_t			uid;
	const char		*user;		/* user name, or the uid in decimal */
	const char		*command;	/* argv (or [comm]) escaped, one line */
	size_t			arg0_len;	/* bytes of command that are argv[0] (escaped) */
	size_t			arg0_base;	/* offset of argv[0]'s last path component in command */
	char			state;		/* stat state, 'X' for an exited row */
	double			cpu_pct;	/* of one CPU, over the last interval */
	double			io_read_rate;	/* bytes/s from storage, -1 unknown */
	double			io_write_rate;	/* bytes/s to storage, -1 unknown */
	void			*stores[VMON_STORE_PROC_NR];	/* copies; NULL when not sampled */
	int			errors[VMON_STORE_PROC_NR];
} vt_row_t;

typedef struct vt_cpu_pct {
	double	user, nice, system, iowait, irq, softirq, steal, guest, idle;
	double	busy;		/* everything but idle and iowait */
	bool	online;
} vt_cpu_pct_t;

/*
 * An entry of the event log and of --events: from the event feed (fork,
 * exec, exit, each as it happened), or, without one, from comparing samples
 * (new, exit).  The text is escaped (vmon_escape()) and cut to fit.
 */
typedef struct vt_event {
	double	when;		/* CLOCK_REALTIME seconds */
	char	kind;		/* 'N' fork or new, 'E' exec (feed only), 'X' exit */
	bool	from_feed;	/* the feed's event, not a difference between samples */
	int	pid;
	int	ppid;		/* 0 unknown */
	int	exit_code;	/* exits: wait status, -1 unknown */
	char	comm[40];	/* the command name, or without the feed the command line */
	char	file[80];	/* exec: the program's path */
	char	args[160];	/* exec: the arguments, separated by spaces */
} vt_event_t;

typedef struct vt_snapshot {
	vt_row_t		*rows;
	int			rows_nr;
	int			rows_cap;
	vt_arena_t		arena;

	unsigned long long	seq;		/* 1 for the first sample, then +1 per sample */
	double			when;		/* CLOCK_REALTIME seconds at the sample */
	double			interval;	/* seconds since the previous sample (0 for the first) */
	double			uptime;		/* seconds since boot */
	long			ticks_per_sec;
	long			page_size;

	/* system stores (copies, NULL when the want failed) and their errors */
	void			*sys_stores[VMON_STORE_SYS_NR];
	int			sys_errors[VMON_STORE_SYS_NR];
	vt_cpu_pct_t		cpu_total;
	vt_cpu_pct_t		*cpus;
	int			cpus_nr;
	unsigned long long	mem_total_kb, mem_used_kb, mem_buffers_kb, mem_cached_kb;
	unsigned long long	swap_total_kb, swap_used_kb;

	/* tasks by state, over processes (threads counted apart) */
	int			procs, threads, kthreads;
	int			running, sleeping, disk, stopped, zombie, idle;
	int			exited_now;	/* processes found gone in this sample */
	int			new_now;	/* processes found in this sample */

	double			self_cpu_pct;	/* vtop's own CPU use over the interval */
	double			sample_cpu_ms;	/* CPU time of the last vmon_sample() */
	const char		*source;	/* the sampling source in use: vmon_sampler_name() */
	char			feed[96];	/* the feed meter's text: "ebpf, 120 ev/s, lost 0", or "none" */
	char			feed_why[160];	/* why there is no feed, when one was wanted; else "" */
	char			source_why[200];	/* why the task iterator asked for is not in use (escaped); else "" */
	bool			feed_active;	/* the event log comes from the feed (vt_sampler_take_events()) */

	vt_event_t		*events;	/* without the feed: what changed since the previous snapshot */
	int			events_nr;
	int			events_cap;
	bool			threads_shown;	/* thread rows were asked for */
	bool			paused;
	struct vt_files		*files;		/* the open files the files view asked for, or NULL */
	char			replay[128];	/* -r: where in the log this sample is, "" live */
} vt_snapshot_t;

void vt_snapshot_init(vt_snapshot_t *snap);
void vt_snapshot_clear(vt_snapshot_t *snap);
void vt_snapshot_free(vt_snapshot_t *snap);
int vt_snapshot_find(const vt_snapshot_t *snap, int pid, unsigned long long start);

typedef struct vt_priv vt_priv_t;

/* what turns the library's tree into snapshots; lives in the sampling thread */
typedef struct vt_builder {
	vmon_t			*vmon;
	int			exited_keep;	/* refreshes an exited row stays */
	unsigned		escape_flags;	/* vmon_escape() flags for commands */
	bool			threads;	/* thread rows are wanted */
	bool			events_from_feed;	/* the feed makes the event log: no events[] in snapshots */
	/*
	 * Rows point into the library's stores (and commands into the
	 * nodes' own copies) instead of copying them: the snapshot is then
	 * good only until the next vmon_sample().  For vtop -b on this
	 * machine, which prints each snapshot before it samples again and
	 * hands none to another thread; copying every store of every
	 * process was a third of its own time at 5,000 processes.
	 */
	bool			borrow;

	unsigned long long	seq;
	double			when;		/* CLOCK_REALTIME seconds of the sample to build, 0: now */
	unsigned long long	prev_boottime;	/* ticks */
	double			prev_when;
	double			prev_self_cpu;	/* seconds of vtop's CPU at the previous sample */
	double			prev_mono;
	unsigned long long	*prev_cpu_ticks;	/* (cpus_nr + 1) * 10 columns */
	int			prev_cpus_nr;

	/* exited rows kept for their last few refreshes, each one allocation */
	struct vt_ghost		*ghosts;
	int			ghosts_nr;
	int			ghosts_cap;

	/* uid -> name, names kept until the builder goes */
	struct vt_user		*users;
	int			users_nr;
	int			users_cap;

	int			*pid_index;	/* open addressing: pid -> row, for parents */
	size_t			pid_index_mask;
	int			*key_index;	/* open addressing: (pid, start) -> row, one row each */
	size_t			key_index_mask;
	char			*scratch;	/* a command line being escaped */
	size_t			scratch_cap;
} vt_builder_t;

void vt_builder_init(vt_builder_t *b, vmon_t *vmon);
void vt_builder_fini(vt_builder_t *b);
void vt_builder_reset(vt_builder_t *b, vmon_t *vmon);
/* the vmon callbacks that keep vtop's per-node history on proc->foo */
void vt_builder_hook(vt_builder_t *b);
int vt_builder_build(vt_builder_t *b, vt_snapshot_t *snap, double sample_cpu_ms);
/* the node's process ended, or left the watched tree (stale, or found gone: state X) */
bool vt_proc_gone(const vmon_proc_t *proc);

/* --- data/columns.c --- */
typedef enum {
	VT_VALUE_NUMBER,	/* json number, a metric's sample */
	VT_VALUE_STRING,	/* json string, a label of vtop_process_info */
} vt_value_kind_t;

typedef struct vt_column vt_column_t;

/* a vtop column computed from a row (vtop's own: CPU%, MEM%, TIME+, USER, COMMAND...) */
typedef struct vt_derived {
	const char	*name;
	const char	*label;
	const char	*desc;
	int		width;		/* 0: takes the rest of the line */
	bool		left;
	vt_value_kind_t	kind;
	vmon_proc_wants_t wants;
	/* the text for a person (units scaled) or, with machine, for a program (plain units); -1: missing */
	int		(*format)(const vt_row_t *row, const vt_snapshot_t *snap, char *buf, size_t size, bool machine);
	int		(*compare)(const vt_row_t *a, const vt_row_t *b);
	/* for metrics (a plain gauge when left out): what the machine text measures, its unit, per second */
	vmon_kind_t	measure;
	vmon_unit_t	unit;
	bool		rate;
	const char	*with;		/* a column written beside this one in json, csv and metrics */
} vt_derived_t;

struct vt_column {
	const char		*name;		/* identifier: -o, vtoprc, json keys, csv header, metric names */
	const char		*label;		/* column header */
	const char		*desc;		/* one line, for the setup screen */
	int			width;		/* 0: the rest of the line */
	bool			left;
	vt_value_kind_t		kind;
	vmon_kind_t		measure;	/* what a number measures: gauge, counter, id, address, bitmap */
	vmon_unit_t		unit;		/* the unit of its machine text */
	bool			rate;		/* ... per second */
	int			with;		/* a column that goes beside it in json, csv and metrics, or -1 */
	vmon_proc_wants_t	wants;		/* what must be sampled for it */
	/* either a field of the defs tables ... */
	int			store;		/* VMON_STORE_PROC_*, or -1 */
	const vmon_field_t	*field;
	/* ... or one of vtop's own */
	const vt_derived_t	*derived;
};

extern const vt_column_t *vt_columns;
extern int vt_columns_nr;

int vt_columns_init(void);
int vt_column_find(const char *name);	/* by name or label, case-insensitive; -1 */
int vt_column_parse_list(const char *list, int *cols, int max, char *err, size_t err_size);
int vt_column_format(const vt_column_t *col, const vt_row_t *row, const vt_snapshot_t *snap,
		     char *buf, size_t size, bool machine);
int vt_column_compare(const vt_column_t *col, const vt_row_t *a, const vt_row_t *b);
vmon_proc_wants_t vt_columns_wants(const int *cols, int nr);
void vt_format_size(char *buf, size_t size, double bytes);
void vt_format_number(char *buf, size_t size, const char *digits, int width);
extern const char *const vt_default_columns;

/* --- data/model.c --- */
enum {
	VT_LINE_LAST		= 1 << 0,	/* the last of its siblings shown */
	VT_LINE_CHILDREN	= 1 << 1,	/* has children that could be shown */
	VT_LINE_COLLAPSED	= 1 << 2,	/* ... and they are folded away */
	VT_LINE_CONTEXT		= 1 << 3,	/* shown only as the ancestor of a match */
};

typedef struct vt_key {
	int			pid;
	unsigned long long	start;
} vt_key_t;

typedef struct vt_view {
	/* settings */
	bool		tree;
	int		sort_col[2];	/* [0] flat, [1] tree: index into vt_columns */
	bool		sort_desc[2];
	bool		show_threads;
	bool		show_kthreads;
	bool		show_exited;	/* exited rows are listed (X hides them: on a busy machine they swamp the list) */
	bool		show_path;	/* COMMAND shows argv[0] whole, not only its last component */
	char		filter[256];
	bool		filter_regex;
	bool		filter_ok;	/* the regex compiled */
	char		filter_error[128];
	regex_t		filter_re;
	bool		user_set;
	uid_t		user_uid;
	vt_key_t	*collapsed;	/* sorted */
	int		collapsed_nr;
	int		collapsed_cap;

	/* what vt_view_build() made of the snapshot */
	int		*lines;		/* row index of each line */
	unsigned char	*line_flags;
	int		*line_depth;
	size_t		*line_prefix;	/* offset in prefix[] of depth bytes: 1 where an ancestor level goes on */
	unsigned char	*prefix;
	size_t		prefix_len;
	size_t		prefix_cap;
	int		lines_nr;
	int		lines_cap;
	int		matches;	/* lines that match (not context) */

	/* selection */
	int		cursor;		/* selected line */
	int		top;		/* first line on screen */
	bool		follow;		/* the selection stays on sel (F) */
	bool		pinned;		/* ... until the cursor moves: sel was picked by name (vt_view_pick()) */
	vt_key_t	sel;		/* the selected row's identity */
	vt_key_t	*tagged;	/* sorted */
	int		tagged_nr;
	int		tagged_cap;

	/* scratch */
	int		*scratch;
	int		scratch_cap;
} vt_view_t;

void vt_view_init(vt_view_t *view);
void vt_view_free(vt_view_t *view);
int vt_view_set_filter(vt_view_t *view, const char *text, bool regex);
void vt_view_build(vt_view_t *view, const vt_snapshot_t *snap);
const vt_row_t *vt_view_row(const vt_view_t *view, const vt_snapshot_t *snap, int line);
int vt_view_find_line(const vt_view_t *view, const vt_snapshot_t *snap, int pid);
void vt_view_select(vt_view_t *view, const vt_snapshot_t *snap, int line);
void vt_view_pick(vt_view_t *view, const vt_snapshot_t *snap, int line);
void vt_view_move(vt_view_t *view, const vt_snapshot_t *snap, int delta);
void vt_view_scroll_to_cursor(vt_view_t *view, int height);
int vt_view_search(const vt_view_t *view, const vt_snapshot_t *snap, const char *text, int from, int dir);
bool vt_view_row_matches(const vt_view_t *view, const vt_row_t *row);
bool vt_view_text_matches(const vt_view_t *view, const char *text);
bool vt_view_is_collapsed(const vt_view_t *view, const vt_row_t *row);
void vt_view_set_collapsed(vt_view_t *view, const vt_row_t *row, bool collapsed);
void vt_view_collapse_all(vt_view_t *view, const vt_snapshot_t *snap, bool collapse);
bool vt_view_is_tagged(const vt_view_t *view, const vt_row_t *row);
void vt_view_set_tagged(vt_view_t *view, const vt_row_t *row, bool tagged);
void vt_view_clear_tags(vt_view_t *view);
int vt_view_sort_col(const vt_view_t *view);
bool vt_view_sort_desc(const vt_view_t *view);
void vt_view_set_sort(vt_view_t *view, int col, bool desc);
const char *vt_view_command(const vt_view_t *view, const vt_row_t *row);
size_t vt_view_tree_prefix(const vt_view_t *view, int line, bool utf8, int max_cols, char *buf, size_t size);
bool vt_key_in(const vt_key_t *set, int nr, vt_key_t key);
int vt_key_set(vt_key_t **set, int *nr, int *cap, vt_key_t key, bool on);

/* --- data/event_feed.c --- */
typedef struct vt_feed vt_feed_t;
extern const char *const vt_feed_backends[];
int vt_feed_check_backend(const char *backend, char *err, size_t err_size);
void vt_feed_attr(const char *backend, vmon_attr_t *attr);
int vt_feed_open(vt_feed_t **feed, vmon_t *vmon, const char *backend, bool tree_only, unsigned escape_flags,
		 char *err, size_t err_size);
void vt_feed_close(vt_feed_t *feed);
bool vt_feed_active(const vt_feed_t *feed);
const char *vt_feed_fallback(const vt_feed_t *feed);
void vt_feed_status(vt_feed_t *feed, char *buf, size_t size, char *why, size_t why_size);
int vt_feed_fd(const vt_feed_t *feed);
int vt_feed_timeout(const vt_feed_t *feed);
void vt_feed_process(vt_feed_t *feed);
int vt_feed_take(vt_feed_t *feed, vt_event_t *out, int max, unsigned long long *dropped);
void vt_feed_set_sink(vt_feed_t *feed, void (*sink)(const vt_event_t *e, void *arg), void *arg);
int vt_feed_open_replay(vt_feed_t **feed, vmon_t *vmon, unsigned escape_flags, char *err, size_t err_size);
int vt_feed_rebind(vt_feed_t *feed, vmon_t *vmon);
void vt_feed_replay_at(vt_feed_t *feed, double when);
bool vt_feed_delivers(const vt_feed_t *feed);
void vt_event_from_feed(vt_event_t *e, const vmon_event_t *ev, double realtime_offset, unsigned escape_flags);

/* --- config.c --- */
typedef enum { VT_FORMAT_TEXT, VT_FORMAT_JSON, VT_FORMAT_CSV, VT_FORMAT_PROMETHEUS, VT_FORMAT_OPENMETRICS } vt_format_t;
typedef enum { VT_COLOR_AUTO, VT_COLOR_NEVER, VT_COLOR_ALWAYS } vt_color_t;

#define VT_MAX_COLUMNS	256
#define VT_MAX_PIDS	64

typedef struct vt_config {
	double		delay;		/* seconds between samples */
	long		iterations;	/* -n: 0 for no end */
	bool		batch;
	vt_format_t	format;
	int		columns[VT_MAX_COLUMNS];
	int		columns_nr;
	int		pids[VT_MAX_PIDS];
	int		pids_nr;
	bool		user_set;
	uid_t		user_uid;
	char		user_name[64];
	bool		tree;
	bool		threads;
	bool		kthreads;
	bool		exited_rows;	/* exited processes are listed ("exited_rows = no" in vtoprc, X on the screen) */
	bool		show_path;
	int		sort_col[2];	/* flat, tree */
	bool		sort_desc[2];
	char		backend[32];
	vmon_sampler_t	source;		/* --source: how libvmon samples (vmon_set_sampler(3)) */
	bool		events;
	vt_color_t	color;
	bool		ascii;
	bool		mouse;
	int		exited_keep;
	char		write_path[1024];	/* -w: record to this log, "" not */
	char		replay_path[1024];	/* -r: replay this log, "" live */
	char		config_path[1024];	/* where settings are read and saved */
	bool		config_loaded;
	char		warnings[1024];	/* what was wrong in the file: shown, not fatal */
} vt_config_t;

void vt_config_defaults(vt_config_t *cfg);
int vt_config_path(char *buf, size_t size);
int vt_config_load(vt_config_t *cfg, const char *path);
int vt_config_save(const vt_config_t *cfg, const char *path, char *err, size_t err_size);
/* returns 0 to go on, 1 when done (--help, --version), -1 on a usage error (message on stderr) */
int vt_config_args(vt_config_t *cfg, int argc, char **argv);
void vt_usage(FILE *out);

/* --- data/files.c --- */
/* another process's fd on the same pipe or socket */
typedef struct vt_file_holder {
	int		pid;
	int		fd;
	const char	*comm;		/* escaped */
	const char	*access;	/* r, w, rw, path */
} vt_file_holder_t;

/* one fd of the process shown, copied out of its vmon_proc_fd_t */
typedef struct vt_file {
	int			fd;
	const char		*type;		/* file, pipe, unix, tcp, eventfd... */
	const char		*access;
	unsigned long long	pos;
	unsigned int		flags;
	const char		*name;		/* the target, escaped */
	const char		*socket;	/* a socket's addresses and state, escaped; NULL if unknown */
	bool			is_new;		/* opened since the previous sample */
	bool			closed;		/* closed since: shown this once */
	vt_file_holder_t	*holders;	/* other processes on the same pipe or socket */
	int			holders_nr;
	int			holders_more;	/* holders beyond VT_FILES_HOLDERS_MAX, not copied */
} vt_file_t;

#define VT_FILES_HOLDERS_MAX	8

typedef struct vt_files {
	int		pid;
	bool		gone;		/* no such process in the tree (it exited) */
	bool		pending;	/* its fds are asked for and not read yet */
	int		error;		/* errno of reading its fds (EACCES: another user's), else 0 */
	vt_file_t	*files;		/* in fd order */
	int		nr;
	int		open_nr;	/* those not closed */
} vt_files_t;

/* copy the open files of pid into the snapshot's arena (snap->files) */
int vt_files_build(vmon_t *vmon, int pid, unsigned escape_flags, vt_snapshot_t *snap);

/* --- data/sampler.c --- */
typedef struct vt_sampler vt_sampler_t;

int vt_sampler_start(vt_sampler_t **sampler, const vt_config_t *cfg, vmon_proc_wants_t wants,
		     char *err, size_t err_size);
void vt_sampler_stop(vt_sampler_t *sampler);
int vt_sampler_fd(const vt_sampler_t *sampler);
vt_snapshot_t *vt_sampler_take(vt_sampler_t *sampler, bool *changed);
void vt_sampler_set_interval(vt_sampler_t *sampler, double secs);
void vt_sampler_set_paused(vt_sampler_t *sampler, bool paused);
void vt_sampler_set_wants(vt_sampler_t *sampler, vmon_proc_wants_t wants, bool threads);
void vt_sampler_set_detail(vt_sampler_t *sampler, int pid);
void vt_sampler_set_files(vt_sampler_t *sampler, int pid);
void vt_sampler_set_visible(vt_sampler_t *sampler, const int *pids, int nr);
void vt_sampler_sample_now(vt_sampler_t *sampler);
/* -r: step by samples (pausing), go to a time, change the pace (1: as recorded) */
void vt_sampler_replay_step(vt_sampler_t *sampler, int delta);
void vt_sampler_replay_seek(vt_sampler_t *sampler, double when);
void vt_sampler_replay_goto(vt_sampler_t *sampler, long index);
void vt_sampler_set_speed(vt_sampler_t *sampler, double speed);
bool vt_sampler_replay_ended(vt_sampler_t *sampler);	/* the last sample is shown */
const char *vt_sampler_error(vt_sampler_t *sampler);
int vt_sampler_take_events(vt_sampler_t *sampler, vt_event_t *out, int max, unsigned long long *dropped);

/* the same sampling, without a thread (batch mode, tests) */
typedef struct vt_replay vt_replay_t;

typedef struct vt_source {
	vmon_t		vmon;		/* of /proc, or fed from a log (-r) */
	vt_builder_t	builder;
	vt_feed_t	*feed;
	vmon_log_writer_t *writer;	/* -w: every sample recorded */
	int		writer_fd;
	vt_replay_t	*replay;	/* -r: the log read back */
	char		log_error[256];	/* -w: why recording stopped, "" while it goes on */
	vmon_proc_t	**monitored_procs;	/* -p: the processes we monitor, NULL once gone */
	int		monitored_nr;
	vmon_proc_wants_t wants;
	bool		threads;
	int		detail_pid;		/* whose environment is read, 0 for none */
	int		files_pid;		/* whose open files are shown, 0 for none */
	int		*rollup_pids;		/* whose PSS is read: the rows on screen (vt_source_set_rollup()) */
	int		rollup_nr;
	char		source_why[200];	/* vt_source_init(): why the iterator asked for is not used, escaped */
} vt_source_t;

int vt_source_init(vt_source_t *src, const vt_config_t *cfg, vmon_proc_wants_t wants, const char *proc_root,
		   char *err, size_t err_size);
void vt_source_fini(vt_source_t *src);
int vt_source_sample(vt_source_t *src, vt_snapshot_t *snap);
int vt_source_set_wants(vt_source_t *src, vmon_proc_wants_t wants, bool threads);
void vt_source_set_detail(vt_source_t *src, int pid);
int vt_source_set_files(vt_source_t *src, int pid);
int vt_source_set_rollup(vt_source_t *src, const int *pids, int nr);
bool vt_source_wait(vt_source_t *src, double secs, int wake_fd);

/* --- data/replay.c --- */
/* the log of -r opened, its header read, src->vmon made a replay of it */
int vt_replay_open(vt_source_t *src, const vt_config_t *cfg, char *err, size_t err_size);
void vt_replay_close(vt_source_t *src);
/* the next sample: 1, 0 at the end of the log (for now: a log being written grows), -1 on an error */
int vt_replay_next(vt_source_t *src, vt_snapshot_t *snap);
/* sample `index` (0 for the first) or the last one at or before `when`, rebuilt from a keyframe: 1, 0 none, -1 */
int vt_replay_goto(vt_source_t *src, vt_snapshot_t *snap, long index);
int vt_replay_seek(vt_source_t *src, vt_snapshot_t *snap, double when);
long vt_replay_index(const vt_source_t *src);	/* of the sample shown, -1 before the first */
const char *vt_replay_error(const vt_source_t *src);
/* what is written before each sample of a log vtop records: the feed meter's text */
#define VT_LOG_NOTE_FEED	"vtop.feed="

/* --- batch/batch.c --- */
int vt_batch_run(const vt_config_t *cfg);
void vt_view_configure(vt_view_t *view, const vt_config_t *cfg);
void vt_batch_write(FILE *out, const vt_config_t *cfg, const vt_view_t *view, const vt_snapshot_t *snap,
		    vt_format_t format, bool first);
void vt_event_write(FILE *out, const vt_event_t *e);

/* --- text helpers (columns.c) --- */
#define VT_TEXT_REAL_SIZE(len)	(3 * (len) + 1)
size_t vt_text_real(char *dst, const char *escaped, size_t len);
void vt_json_string(FILE *out, const char *escaped);
void vt_text_fit(char *dst, size_t size, const char *escaped, size_t len);
const char *vt_signal_name(int sig);
const char *vt_io_class_name(int io_class);

/* --- screen/tui.c --- */
int vt_tui_run(vt_config_t *cfg);

#endif
