/*
 * snapshot.h: what the sampling side hands over: a snapshot, plain copies of
 * the library's tree (rows, system figures, events, the open files of one
 * process) in an arena, and the builder that makes one from a vmon_t.
 * Nothing here knows the screen or the batch formats.
 */
#ifndef VTOP_SNAPSHOT_H
#define VTOP_SNAPSHOT_H

#include "util/hash.h"
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "vmon.h"

/* --- arena.c --- */
typedef struct vt_arena_chunk vt_arena_chunk_t;
typedef struct vt_arena {
	vt_arena_chunk_t	*first;
	vt_arena_chunk_t	*cur;
	size_t			bytes;	/* handed out since the last reset */
	size_t			expect;	/* the first chunk's size if not 0 (vt_arena_expect()) */
} vt_arena_t;

#define VT_ARENA_ALIGN	16	/* of everything an arena hands out */

void *vt_arena_alloc(vt_arena_t *arena, size_t size);
char *vt_arena_strndup(vt_arena_t *arena, const char *s, size_t len);
void vt_arena_reset(vt_arena_t *arena);
void vt_arena_expect(vt_arena_t *arena, size_t size);
void vt_arena_free(vt_arena_t *arena);

/* --- snapshot.c --- */
enum {
	VT_ROW_THREAD	= 1 << 0,	/* a thread of the row `parent` */
	VT_ROW_KTHREAD	= 1 << 1,	/* a kernel thread (or a thread of one) */
	VT_ROW_NEW	= 1 << 2,	/* first seen in this sample */
	VT_ROW_EXITED	= 1 << 3,	/* gone: shown for a few refreshes after it exited */
	VT_ROW_SHARED	= 1 << 4,	/* stores and errors are a shared copy's (snapshot.c holds a reference) */
	VT_ROW_BORROWED	= 1 << 5,	/* stores or command are the library's or its node's: good until the next vmon_sample() */
	VT_ROW_NODE_STORES = 1 << 6,	/* stores is the node's own array (its errors beside it: vt_row_errors()) */
};

/*
 * One process or thread, copied out of the library's tree.  A snapshot
 * (two in a replay: sampler.c) holds a row of every process, so its
 * members are as narrow as their ranges allow, and what its stores hold is
 * not copied here: its stores are one pointer (their errnos found from it:
 * vt_row_errors()), its owner is its stat's (vt_row_uid()).  80 bytes, not
 * 224.
 */
typedef struct vt_row {
	int			pid;
	int			ppid;		/* the tree parent's pid (a thread's: its process); 0 at the top */
	int			parent;		/* index of the tree parent in the snapshot, -1 at the top */
	int			exit_code;	/* exited rows: wait status if known, else -1 */
	unsigned long long	start;		/* start time, ticks after boot: with pid, its identity */
	unsigned		arg0_base;	/* offset of argv[0]'s last path component in command */
	unsigned short		exited_age;	/* exited rows: refreshes since it exited, 0 in the first */
	unsigned char		flags;		/* VT_ROW_* */
	char			state;		/* stat state, 'X' for an exited row */
	const char		*user;		/* user name, or the uid in decimal */
	const char		*command;	/* argv (or [comm]) escaped, one line */
	double			cpu_pct;	/* of one CPU, over the last interval */
	double			io_read_rate;	/* bytes/s from storage, -1 unknown */
	double			io_write_rate;	/* bytes/s to storage, -1 unknown */
	/*
	 * VMON_STORE_PROC_NR stores (copies; NULL when not sampled): a copy
	 * shared with other snapshots (VT_ROW_SHARED), the library's own when
	 * borrowing (VT_ROW_NODE_STORES when the node's array), else the
	 * snapshot's
	 */
	void *const		*stores;
} vt_row_t;

/* the errnos of the row's stores (VMON_STORE_PROC_NR of them), 0 for those read */
const unsigned char *vt_row_errors(const vt_row_t *row);

/*
 * A text a writer keeps with a row's stores while they stay unchanged:
 * vtop -b's columns of an idle process are the same text refresh after
 * refresh (batch/text.c).  Only a live row on its node's own stores
 * (VT_ROW_NODE_STORES, a builder that borrows them, as vtop -b's does)
 * keeps one, with the node: good while no sample since changed its stores
 * (snapshot.c's node_unchanged()).  The key is the writer's: the rest of
 * what the text was made from (the row's own fields, the snapshot's).
 * vt_row_memo() gives the text kept with that key, or NULL;
 * vt_row_memo_keep() replaces it (or keeps nothing, without memory, or for
 * a row that cannot keep one).  In the thread that builds the snapshots.
 */
const char *vt_row_memo(const vt_row_t *row, const void *key, size_t key_size, size_t *len);
void vt_row_memo_keep(const vt_row_t *row, const void *key, size_t key_size, const char *text, size_t len);
/* a hint for a row some lines ahead: step 0, 1, then 2, each nearer the row (no effect but speed) */
void vt_row_memo_prefetch(const vt_row_t *row, int step);

/*
 * uid's user name escaped as a process's text is (the user database is
 * text whoever edits it, or NSS, chose), or uid in decimal without one: as
 * snprintf() puts it in buf, its whole length returned
 */
size_t vt_user_name(uid_t uid, unsigned escape_flags, char *buf, size_t size);

/* the row's owner, as its stat says (0 without one) */
static inline uid_t vt_row_uid(const vt_row_t *row)
{
	const vmon_proc_stat_t *s = row->stores[VMON_STORE_PROC_STAT];

	return s ? s->uid : 0;
}

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

/* --- event_ring.c: the last max events, their text kept at its length --- */
typedef struct vt_event_ring {
	struct vt_event_slot	*slots;		/* max, in a ring: an event's numbers and where its text is */
	int			max;
	int			nr;
	int			head;		/* the next slot to fill */
	char			*text;		/* a byte ring of the events' texts, oldest first */
	size_t			text_cap;
	size_t			text_used;
	size_t			text_tail;	/* the oldest event's text */
} vt_event_ring_t;

int vt_event_ring_init(vt_event_ring_t *r, int max);
void vt_event_ring_free(vt_event_ring_t *r);
void vt_event_ring_clear(vt_event_ring_t *r);
int vt_event_ring_push(vt_event_ring_t *r, const vt_event_t *e);
void vt_event_ring_get(const vt_event_ring_t *r, int k, vt_event_t *out);
void vt_event_ring_peek(const vt_event_ring_t *r, int k, int *pid, char *kind, double *when);

typedef struct vt_snapshot {
	vt_row_t		*rows;
	int			rows_nr;
	int			rows_cap;
	int			rows_touched;	/* the most rows held since the array was last sized: its pages resident */
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
	unsigned		escape_flags;	/* vmon_escape() flags its texts were escaped with (--ascii) */
	bool			wchan_read;	/* the sample read wchan (asked for only while shown: VMON_FLAG_NO_WCHAN) */
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
	 * good only until the next vmon_sample().  For vtop -b, which
	 * prints each snapshot before it samples again (copying every store
	 * of every process was a third of its own time at 5,000 processes),
	 * and for the screen, which reads the newest snapshot only while
	 * the sampling thread leaves the library alone (sampler.c's
	 * snap_lock): the copies were about 1 KB a process (issue 14).
	 */
	bool			borrow;
	/*
	 * The tree is the library's own sampling (not a log's replay): a
	 * store's changed bits say what changed since the sample before,
	 * which set_command() trusts to skip comparing unchanged arguments.
	 */
	bool			live;

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

	/*
	 * pid -> index of the rows a process's node does not keep
	 * (snapshot.c, pid_rows_first()): exited rows of earlier samples,
	 * threads, a process handed twice; a few, not one per row.
	 */
	vhash_t			other_rows;
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

/* --- files.c --- */
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

#endif
