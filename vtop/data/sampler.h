/*
 * sampler.h: sampling, apart from drawing: the sampling thread (or, for
 * batch mode and tests, the same without a thread), the event feed as vtop
 * sees it, and -r's replay of a log.  The sampling side owns the vmon_t;
 * what the others read is a vt_snapshot_t.
 */
#ifndef VTOP_SAMPLER_H
#define VTOP_SAMPLER_H

#include <stdbool.h>

#include "vmon.h"
#include "vmon_log.h"
#include "vtop.h"
#include "data/snapshot.h"

/* --- event_feed.c --- */
typedef struct vt_feed vt_feed_t;

/*
 * Events held between two takes; beyond, the oldest are dropped and
 * counted.  The ring starts at VT_FEED_RING_MIN and doubles as events wait
 * (a fork storm while the screen is busy), and a take that empties a big one
 * makes it small again: 8,192 events are 2.5 MB, which a storm made resident
 * and kept so.  A vt_event_t is 304 bytes: 256 of them were 76 KiB resident
 * for the few events an idle system has between two refreshes (a refresh
 * takes them all), of the 0.5 MB vtop on a terminal had over top beside
 * 1,068 processes (tests/bench/README.md); 32 are 9.5 KiB, and a burst
 * doubles them.
 */
#define VT_FEED_RING_MIN	32
#define VT_FEED_RING		8192

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
/* sink: called with each event, its pointers valid during the call; realtime_offset turns its time_ns into wall-clock seconds */
void vt_feed_set_sink(vt_feed_t *feed, void (*sink)(const vmon_event_t *ev, double realtime_offset, void *arg), void *arg);
int vt_feed_open_replay(vt_feed_t **feed, vmon_t *vmon, unsigned escape_flags, char *err, size_t err_size);
int vt_feed_rebind(vt_feed_t *feed, vmon_t *vmon);
void vt_feed_replay_at(vt_feed_t *feed, double when);
bool vt_feed_delivers(const vt_feed_t *feed);
void vt_event_from_feed(vt_event_t *e, const vmon_event_t *ev, double realtime_offset, unsigned escape_flags);

/* --- sampler.c --- */
typedef struct vt_sampler vt_sampler_t;

int vt_sampler_start(vt_sampler_t **sampler, const vt_config_t *cfg, vmon_proc_wants_t wants,
		     char *err, size_t err_size);
void vt_sampler_stop(vt_sampler_t *sampler);
int vt_sampler_fd(const vt_sampler_t *sampler);
/* the screen reads snapshots only between hold and release, the newest taken after the hold */
void vt_sampler_hold(vt_sampler_t *sampler);
void vt_sampler_release(vt_sampler_t *sampler);
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

/*
 * The heap after a storm (vt_heap_settle(), after each sample): its pages
 * resident but not in use are counted now and then, and given back once
 * they grew by a megabyte over their least since the last trim.
 */
typedef struct vt_heap {
	bool		counted;	/* idle_low holds a count */
	size_t		idle_low;	/* resident bytes not in use: their least since the heap was last trimmed */
	int		rows_most;	/* the most rows since they were last counted */
	int		samples;	/* samples since then */
	unsigned	trims;		/* how many times it was trimmed (tests) */
} vt_heap_t;

void vt_heap_settle(vt_heap_t *heap, int rows);

typedef struct vt_source {
	vmon_t		vmon;		/* of /proc, or fed from a log (-r) */
	vt_builder_t	builder;
	vt_feed_t	*feed;
	vmon_log_writer_t *writer;	/* -w: every sample recorded */
	bool		recording;	/* -w was given: the stores a replay may show are read (full_wants()) */
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
	vt_heap_t	heap;			/* when to give the heap's free pages back (vt_heap_settle()) */
} vt_source_t;

int vt_source_init(vt_source_t *src, const vt_config_t *cfg, vmon_proc_wants_t wants, const char *proc_root,
		   char *err, size_t err_size);
void vt_source_fini(vt_source_t *src);
int vt_source_sample(vt_source_t *src, vt_snapshot_t *snap);
int vt_source_set_wants(vt_source_t *src, vmon_proc_wants_t wants, bool threads);
void vt_source_set_detail(vt_source_t *src, int pid);
int vt_source_set_files(vt_source_t *src, int pid);
int vt_source_set_rollup(vt_source_t *src, const int *pids, int nr);
/* each snapshot is used up before the next sample, in this thread (-b): its rows may point into the tree (vt_builder_t.borrow) */
void vt_source_set_borrow(vt_source_t *src, bool borrow);
bool vt_source_wait(vt_source_t *src, double secs, int wake_fd);

/* --- replay.c --- */
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

#endif
