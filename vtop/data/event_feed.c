/*
 * event_feed.c: the kernel event feed (vmon_feed(7)), as vtop uses it.
 *
 * The library opens the feed inside vmon_init_attr(), before its first /proc
 * scan, from the list in vmon_attr_t.feed: vt_feed_attr() turns --backend
 * into that list.  vt_feed_open() then registers an event callback.
 *
 * The callback runs in the thread that calls vmon_sample(), the sampling
 * thread, which owns the vmon_t; the event log is drawn by the screen's
 * thread.  So each event is copied out (its text escaped, its times made
 * wall-clock) into a bounded ring under a lock of its own, and the screen
 * (or the --events loop) takes what is there after each sample.  The ring
 * is not tied to the snapshots: a snapshot the screen never took (it was
 * busy) loses no event.  When the ring is full the oldest events go, and are
 * counted, so the log says how many it could not show.
 *
 * With -w the library writes the events to the log itself
 * (vmon_log_writer_follow_feed()); a replay (-r) hands the recorded ones to
 * the same callback on the replay's vmon_t, so the event log and --events
 * show them as they were shown live (vt_feed_open_replay()).
 *
 * The rest is the header's meter ("ebpf, 120 ev/s, lost 0"), and the
 * feed's fd and timeout for the sampling thread's wait (vt_source_wait()),
 * which reads the kernel's buffer between samples so that it does not
 * overflow while vtop sleeps.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/clock.h"

#include "data/columns.h"
#include "data/sampler.h"

struct vt_feed {
	vmon_t			*vmon;
	bool			active;		/* a backend is in use (it never changes once open) */
	bool			replay;		/* a replay's: the log's events, no backend */
	double			replay_when;	/* the wall-clock time of the sample being replayed */
	bool			tree_only;	/* -p: only the events of processes in the tree */
	unsigned		escape_flags;

	/* the meter, computed after each sample */
	unsigned long long	prev_events;
	double			prev_mono;
	double			rate;

	/* or, in one thread (--events), each event handed to this at once, as the library gave it */
	void			(*sink)(const vmon_event_t *ev, double realtime_offset, void *arg);
	void			*sink_arg;

	/* the hand-over: filled by the callback (sampling thread), emptied by vt_feed_take() */
	pthread_mutex_t		lock;
	vt_event_t		*ring;
	int			cap;		/* VT_FEED_RING_MIN to VT_FEED_RING */
	int			head;		/* where the next event goes */
	int			nr;
	unsigned long long	dropped;	/* since the last take */
};

const char *const vt_feed_backends[] = { "auto", "ebpf", "perf", "netlink", "none", NULL };

int vt_feed_check_backend(const char *backend, char *err, size_t err_size)
{
	for (int i = 0; vt_feed_backends[i]; i++) {
		if (!strcmp(backend, vt_feed_backends[i]))
			return 0;
	}
	snprintf(err, err_size, "--backend: auto, ebpf, perf, netlink or none, not \"%s\"", backend);
	errno = EINVAL;
	return -1;
}

/*
 * auto: the library's choice ($VMON_FEED, else ebpf, then perf, then
 * netlink); a name: that backend alone; none: no feed.  Whatever cannot be
 * used falls back to polling, and the meter says why (vmon_feed_reason()).
 */
void vt_feed_attr(const char *backend, vmon_attr_t *attr)
{
	if (!backend[0] || !strcmp(backend, "auto"))
		attr->feed = NULL;
	else if (!strcmp(backend, "none"))
		attr->feed = "";
	else
		attr->feed = backend;
}

/* the text of an exec's arguments: each escaped, separated by spaces */
static size_t escape_args(char *dst, size_t size, const char *args, size_t len, unsigned flags)
{
	const char *p = args, *end = args + len;
	size_t out = 0;

	while (p < end) {
		size_t n = strnlen(p, (size_t)(end - p));

		if (out)
			out += out < size ? (size_t)snprintf(dst + out, size - out, " ") : 1;
		out += vmon_escape(out < size ? dst + out : NULL, out < size ? size - out : 0, p, n, flags);
		p += n + 1;
	}
	if (size)
		dst[out < size ? out : size - 1] = '\0';
	return out;
}

/* one event of the library as an entry of the log; offset turns CLOCK_BOOTTIME into wall-clock seconds */
void vt_event_from_feed(vt_event_t *e, const vmon_event_t *ev, double offset, unsigned flags)
{
	char buf[1024];
	size_t len;

	memset(e, 0, sizeof(*e));
	e->when = (double)ev->time_ns / 1e9 + offset;
	e->kind = ev->kind == VMON_EVENT_FORK ? 'N' : ev->kind == VMON_EVENT_EXEC ? 'E' : 'X';
	e->from_feed = true;
	e->pid = ev->pid;
	e->ppid = (ev->has & VMON_EVENT_HAS_PPID) ? ev->ppid : 0;
	e->exit_code = ev->kind == VMON_EVENT_EXIT && (ev->has & VMON_EVENT_HAS_EXIT_STATUS) ? ev->exit_status : -1;
	if (ev->has & VMON_EVENT_HAS_COMM) {
		len = vmon_escape(buf, sizeof(buf), ev->comm, strnlen(ev->comm, sizeof(ev->comm)), flags);
		vt_text_fit(e->comm, sizeof(e->comm), buf, len);
	}
	if (ev->kind != VMON_EVENT_EXEC)
		return;
	if ((ev->has & VMON_EVENT_HAS_FILENAME) && ev->filename) {
		len = vmon_escape(buf, sizeof(buf), ev->filename, strlen(ev->filename), flags);
		vt_text_fit(e->file, sizeof(e->file), buf, len);
	}
	if ((ev->has & VMON_EVENT_HAS_ARGS) && ev->args) {
		len = escape_args(buf, sizeof(buf), ev->args, ev->args_len, flags);
		vt_text_fit(e->args, sizeof(e->args), buf, len);
		/* arguments the kernel side cut are shown cut, as vt_text_fit() marks its own cuts */
		len = strlen(e->args);
		if (ev->args_truncated && (len < 3 || strcmp(e->args + len - 3, "...") != 0) &&
		    len + 3 < sizeof(e->args))
			memcpy(e->args + len, "...", 4);
	}
}

/* the ring's events, oldest first, into a ring of cap (>= nr) that starts with them; under the lock */
static int ring_resize(vt_feed_t *f, int cap)
{
	vt_event_t *v = malloc(sizeof(*v) * (size_t)cap);

	if (!v)
		return -1;
	for (int i = 0; i < f->nr; i++)
		v[i] = f->ring[(f->head - f->nr + i + f->cap) % f->cap];
	free(f->ring);
	f->ring = v;
	f->cap = cap;
	f->head = f->nr % cap;
	return 0;
}

static void ring_push(vt_feed_t *f, const vt_event_t *e)
{
	pthread_mutex_lock(&f->lock);
	/* not grown (no memory): the oldest goes, counted as any the ring cannot hold */
	if (f->nr == f->cap && f->cap < VT_FEED_RING)
		ring_resize(f, f->cap * 2);
	f->ring[f->head] = *e;
	f->head = (f->head + 1) % f->cap;
	if (f->nr < f->cap)
		f->nr++;
	else
		f->dropped++;	/* the oldest was written over */
	pthread_mutex_unlock(&f->lock);
}

/*
 * What turns an event's CLOCK_BOOTTIME into wall-clock seconds: now's
 * difference of the two clocks, or in a replay the recorded sample's (its
 * time less its uptime: the replay has put its system stores in place
 * before it hands over the events that came before it).
 */
static double boot_to_wall(const vt_feed_t *f, const vmon_t *vmon)
{
	const vmon_sys_stat_t *ss = vmon->stores[VMON_STORE_SYS_STAT];

	if (f->replay && f->replay_when > 0 && ss && vmon->ticks_per_sec > 0)
		return f->replay_when - (double)ss->boottime / (double)vmon->ticks_per_sec;
	return vclock_secs(CLOCK_REALTIME) - vclock_secs(CLOCK_BOOTTIME);
}

/* -r: the recorded time of the sample the replay is about to hand over */
void vt_feed_replay_at(vt_feed_t *f, double when)
{
	if (f)
		f->replay_when = when;
}

/* vmon_feed_set_callback(): in the sampling thread, inside vmon_sample() (or vmon_log_replay()) */
static void on_event(vmon_t *vmon, const vmon_event_t *ev, vmon_proc_t *proc, void *arg)
{
	vt_feed_t *f = arg;
	vt_event_t e;

	if (f->tree_only && !proc)
		return;
	if (f->sink) {
		f->sink(ev, boot_to_wall(f, vmon), f->sink_arg);
		return;
	}
	vt_event_from_feed(&e, ev, boot_to_wall(f, vmon), f->escape_flags);
	ring_push(f, &e);
}

/* where the events go instead of the ring, when the thread that samples is the one that shows them */
void vt_feed_set_sink(vt_feed_t *f, void (*sink)(const vmon_event_t *ev, double realtime_offset, void *arg), void *arg)
{
	f->sink = sink;
	f->sink_arg = arg;
}

/*
 * The callback on another vmon_t: a replay that goes back starts over on a
 * fresh one.  The ring, which the screen may be reading, stays.
 */
int vt_feed_rebind(vt_feed_t *f, vmon_t *vmon)
{
	f->vmon = vmon;
	return vmon_feed_set_callback(vmon, on_event, f);
}

/*
 * After vmon_init_attr() (which opened the library's feed, or not): the
 * callback and the ring.  tree_only is -p's mode, where only the processes
 * monitored and their descendants are vtop's business.
 */
int vt_feed_open(vt_feed_t **out, vmon_t *vmon, const char *backend, bool tree_only, unsigned escape_flags,
		 char *err, size_t err_size)
{
	vmon_feed_stats_t st;
	vt_feed_t *f;

	*out = NULL;
	if (vt_feed_check_backend(backend, err, err_size) < 0)
		return -1;
	f = calloc(1, sizeof(*f));
	if (!f || !(f->ring = calloc(VT_FEED_RING_MIN, sizeof(*f->ring)))) {
		free(f);
		snprintf(err, err_size, "out of memory");
		errno = ENOMEM;
		return -1;
	}
	pthread_mutex_init(&f->lock, NULL);
	f->cap = VT_FEED_RING_MIN;
	f->tree_only = tree_only;
	f->escape_flags = escape_flags;
	f->vmon = vmon;
	f->active = vmon_feed_get_stats(vmon, &st) == 0 && st.backend != VMON_FEED_NONE;
	if (f->active && vt_feed_rebind(f, vmon) < 0) {
		snprintf(err, err_size, "the event feed: %s", strerror(errno));
		vt_feed_close(f);
		return -1;
	}
	*out = f;
	return 0;
}

/*
 * -r: the replay's vmon_t hands the log's events to the feed callback as
 * the live feed did (vmon_log_replay_record()), though it has no backend:
 * the callback is set all the same.
 */
int vt_feed_open_replay(vt_feed_t **out, vmon_t *vmon, unsigned escape_flags, char *err, size_t err_size)
{
	vt_feed_t *f;

	if (vt_feed_open(out, vmon, "none", false, escape_flags, err, err_size) < 0)
		return -1;
	f = *out;
	f->replay = true;
	if (vt_feed_rebind(f, vmon) < 0) {
		snprintf(err, err_size, "the event feed: %s", strerror(errno));
		vt_feed_close(f);
		*out = NULL;
		return -1;
	}
	return 0;
}

/* after vmon_destroy(), or before with the callback taken back */
void vt_feed_close(vt_feed_t *f)
{
	if (!f)
		return;
	pthread_mutex_destroy(&f->lock);
	free(f->ring);
	free(f);
}

/* from any thread */
bool vt_feed_active(const vt_feed_t *f)
{
	return f && f->active;
}

/* events come through the callback: a live feed's, or a replay's of a log (from any thread) */
bool vt_feed_delivers(const vt_feed_t *f)
{
	return f && (f->active || f->replay);
}

/* why the feed is not in use, when one was wanted; NULL when it is, or none was (sampling thread) */
const char *vt_feed_fallback(const vt_feed_t *f)
{
	const char *why;

	if (!f || vt_feed_active(f))
		return NULL;
	why = vmon_feed_reason(f->vmon);
	return why && why[0] ? why : NULL;
}

/* the header's meter, and why the feed is not there (or ""), after a sample (in the sampling thread) */
void vt_feed_status(vt_feed_t *f, char *buf, size_t size, char *why_buf, size_t why_size)
{
	vmon_feed_stats_t st;
	unsigned long long total = 0;
	const char *why;
	double now;

	why = vt_feed_fallback(f);
	snprintf(why_buf, why_size, "%s", why ? why : "");
	if (!f || vmon_feed_get_stats(f->vmon, &st) < 0 || st.backend == VMON_FEED_NONE) {
		snprintf(buf, size, "none");
		return;
	}
	for (int i = 0; i < VMON_EVENT_KIND_NR; i++)
		total += st.events[i];
	now = vclock_secs(CLOCK_MONOTONIC);
	if (f->prev_mono > 0 && now > f->prev_mono && total >= f->prev_events)
		f->rate = (double)(total - f->prev_events) / (now - f->prev_mono);
	f->prev_events = total;
	f->prev_mono = now;
	snprintf(buf, size, "%s, %.0f ev/s, lost %llu", vmon_feed_backend_name(st.backend), f->rate, st.lost);
}

/* the sampling thread's wait: the fd to poll (-1 without a feed) and how long it may stay unread */
int vt_feed_fd(const vt_feed_t *f)
{
	return vt_feed_active(f) ? vmon_feed_fd(f->vmon) : -1;
}

int vt_feed_timeout(const vt_feed_t *f)
{
	return vt_feed_active(f) ? vmon_feed_timeout(f->vmon) : -1;
}

/* the kernel's buffer moved into the library, to be applied (and called back) at the next sample */
void vt_feed_process(vt_feed_t *f)
{
	/* a failed read is the next sample's to report: it reads the feed again */
	if (vt_feed_active(f))
		vmon_feed_process(f->vmon);
}

/*
 * Up to max of the events that came, oldest first, into out; from any
 * thread.  *dropped gets how many were written over since the last take.
 */
int vt_feed_take(vt_feed_t *f, vt_event_t *out, int max, unsigned long long *dropped)
{
	int n;

	*dropped = 0;
	if (!f)
		return 0;
	pthread_mutex_lock(&f->lock);
	n = f->nr < max ? f->nr : max;
	for (int i = 0; i < n; i++)
		out[i] = f->ring[(f->head - f->nr + i + f->cap) % f->cap];
	f->nr -= n;
	/* emptied after a storm: small again (not made small, no memory: it stays as it is) */
	if (!f->nr && f->cap > VT_FEED_RING_MIN)
		ring_resize(f, VT_FEED_RING_MIN);
	*dropped = f->dropped;
	f->dropped = 0;
	pthread_mutex_unlock(&f->lock);
	return n;
}
