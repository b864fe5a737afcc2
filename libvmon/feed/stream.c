/*
 * stream.c: the feed's events for a caller's own loop (vmon_feed_next()),
 * folded per process on request, and the processes that ended lately
 * (vmon_feed_lookup()), without a sample and without a callback.
 *
 * feed.c hands every event over as it reads the kernel (vmon_feed_process(),
 * vmon_sample()), so the tree and the stream hear the same events in the
 * same order; the stream only copies, it never touches a node.  It keeps
 * what it learned of each live process (its fork's parent and start, its
 * last exec's name and arguments) so that a later event of that process
 * says them too: an exit with the command line of its exec.
 *
 * Folding (VMON_FEED_AGGREGATE): the first event of a process opens an
 * entry in the queue, due window_ns after it; what the process does until
 * then (execs, its exit) folds into that entry, and its exit closes it.
 * The queue is delivered in order, so an entry still open holds back the
 * ones behind it until it is due: a parent's fork before its children's,
 * whatever folds.  That is the price of folding: every event waits up to
 * the window.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "feed/stream.h"

/* events held at most for vmon_feed_next(); beyond, they are counted in stream_lost */
#define STREAM_QUEUE_MAX	(1u << 17)
/* ended processes kept at most for vmon_feed_lookup() (the oldest go first) */
#define STREAM_EXITED_MAX	(1u << 16)

typedef struct entry {
	vmon_event_t		ev;		/* filename and args: the two below, set on the way out */
	char			*filename;
	char			*args;
	unsigned long long	due_ns;		/* open: delivered by then (CLOCK_BOOTTIME), whatever comes */
	bool			open;		/* later events of its process fold into it */
} entry_t;

/* entries by sequence number, oldest first */
typedef struct ring {
	entry_t			*v;
	size_t			mask;		/* capacity - 1 */
	unsigned long long	first, next;
} ring_t;

/* pids whose exit was heard lately, for repeats (netlink: two threads' exits after the process ended) */
#define STREAM_ENDED_PIDS	1024

/* what the stream knows of a live process (freed at its exit) */
typedef struct sproc {
	entry_t			known;		/* its due_ns and open are unused */
	unsigned long long	held;		/* seq + 1 of its open entry in the queue, 0: none */
} sproc_t;

struct stream {
	unsigned		flags;
	unsigned long long	window_ns;
	ring_t			queue;
	ring_t			exited;
	pidmap_t		procs;		/* pid -> sproc_t */
	int			ended[STREAM_ENDED_PIDS];	/* a ring of the pids that ended last */
	unsigned		ended_next;
	unsigned long long	lost;
	char			*out_filename, *out_args;	/* the event last handed out */
};

static void entry_clear(entry_t *e)
{
	free(e->filename);
	free(e->args);
	memset(e, 0, sizeof(*e));
}

static entry_t *ring_at(ring_t *r, unsigned long long seq)
{
	return seq >= r->first && seq < r->next ? &r->v[seq & r->mask] : NULL;
}

static void ring_drop_first(ring_t *r)
{
	entry_clear(&r->v[r->first & r->mask]);
	r->first++;
}

/* a new zeroed entry at the end, NULL when max are held or no memory */
static entry_t *ring_push(ring_t *r, size_t max)
{
	entry_t *e;

	if (!r->v || r->next - r->first > r->mask) {
		size_t cap = r->v ? (r->mask + 1) * 2 : 64;
		entry_t *v;

		if (r->v && r->next - r->first >= max)
			return NULL;
		v = calloc(cap, sizeof(*v));
		if (!v)
			return NULL;
		for (unsigned long long s = r->first; s < r->next; s++)
			v[s & (cap - 1)] = r->v[s & r->mask];
		free(r->v);
		r->v = v;
		r->mask = cap - 1;
	}
	e = &r->v[r->next++ & r->mask];
	memset(e, 0, sizeof(*e));
	return e;
}

static void ring_free(ring_t *r)
{
	while (r->first < r->next)
		ring_drop_first(r);
	free(r->v);
	memset(r, 0, sizeof(*r));
}

static int set_text(char **dst, const char *src, size_t len)
{
	char *copy = malloc(len + 1);

	if (!copy)
		return -1;
	memcpy(copy, src, len);
	copy[len] = '\0';
	free(*dst);
	*dst = copy;
	return 0;
}

/*
 * What src says into dst: every member src has (only those dst lacks when
 * !all), its strings copied.  The kind, time and thread become src's when
 * all (a later event of the process).  -1: no memory for a string.
 */
static int fold(entry_t *dst, const vmon_event_t *src, const char *filename, const char *args, bool all)
{
	vmon_event_t *d = &dst->ev;
	unsigned take = all ? src->has : src->has & ~d->has;

	if ((d->has & VMON_EVENT_HAS_START) && !all)
		take &= ~VMON_EVENT_HAS_START_APPROX;	/* exact beats approximate */
	if (!filename)
		take &= ~VMON_EVENT_HAS_FILENAME;
	if (!args)
		take &= ~VMON_EVENT_HAS_ARGS;
	if (take & (VMON_EVENT_HAS_START | VMON_EVENT_HAS_START_APPROX)) {
		d->start = src->start;
		d->has &= ~(VMON_EVENT_HAS_START | VMON_EVENT_HAS_START_APPROX);
	}
	if (take & VMON_EVENT_HAS_PPID)
		d->ppid = src->ppid;
	if (take & VMON_EVENT_HAS_UID)
		d->uid = src->uid;
	if (take & VMON_EVENT_HAS_COMM)
		memcpy(d->comm, src->comm, sizeof(d->comm));
	if ((take & VMON_EVENT_HAS_FILENAME) && filename &&
	    set_text(&dst->filename, filename, strlen(filename)) < 0)
		return -1;
	if ((take & VMON_EVENT_HAS_ARGS) && args) {
		if (set_text(&dst->args, args, src->args_len) < 0)
			return -1;
		d->args_len = src->args_len;
		d->args_truncated = src->args_truncated;
	}
	if (take & VMON_EVENT_HAS_EXIT_STATUS)
		d->exit_status = src->exit_status;
	if (take & VMON_EVENT_HAS_TIMES) {
		d->utime = src->utime;
		d->stime = src->stime;
	}
	if (take & VMON_EVENT_HAS_MAXRSS)
		d->maxrss_kb = src->maxrss_kb;
	if (take & VMON_EVENT_HAS_FAULTS) {
		d->minflt = src->minflt;
		d->majflt = src->majflt;
	}
	if (take & VMON_EVENT_HAS_DURATION)
		d->duration_ns = src->duration_ns;
	d->has |= take;
	d->pid = src->pid;
	if (all) {
		d->kind = src->kind;
		d->kinds |= src->kinds;
		d->time_ns = src->time_ns;
		d->tid = src->tid;
	}
	return 0;
}

stream_t *stream_new(unsigned flags, unsigned long long window_ns)
{
	stream_t *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	if (pidmap_init(&st->procs) < 0) {
		free(st);
		return NULL;
	}
	st->flags = flags;
	st->window_ns = window_ns;
	return st;
}

static void sproc_free(sproc_t *p)
{
	entry_clear(&p->known);
	free(p);
}

void stream_free(stream_t *st)
{
	size_t pos;

	if (!st)
		return;
	pidmap_for_each(&st->procs, pos)
		sproc_free(pidmap_node_at(&st->procs, pos));
	pidmap_fini(&st->procs);
	ring_free(&st->queue);
	ring_free(&st->exited);
	free(st->out_filename);
	free(st->out_args);
	free(st);
}

/* did the pid's record describe another process than the event's (the pid reused, its events lost)? */
static bool other_process(const sproc_t *p, const vmon_event_t *ev)
{
	const vmon_event_t *k = &p->known.ev;

	return (k->has & VMON_EVENT_HAS_START) && (ev->has & VMON_EVENT_HAS_START) && k->start != ev->start;
}

/* the process's record, a new one for a fork (or another process's pid); NULL: no memory */
static sproc_t *sproc_of(stream_t *st, const vmon_event_t *ev)
{
	sproc_t *p = pidmap_get(&st->procs, ev->pid);

	if (p && (ev->kind == VMON_EVENT_FORK || other_process(p, ev))) {
		entry_t *open = p->held ? ring_at(&st->queue, p->held - 1) : NULL;

		if (open)
			open->open = false;	/* what it folded is all there will be */
		pidmap_del(&st->procs, ev->pid, p);
		sproc_free(p);
		p = NULL;
	}
	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	if (pidmap_put(&st->procs, ev->pid, p) < 0) {
		free(p);
		return NULL;
	}
	return p;
}

void stream_complete(const stream_t *st, vmon_event_t *ev)
{
	const sproc_t *p = pidmap_get(&st->procs, ev->pid);
	entry_t tmp = { .ev = *ev };

	if (!p || ev->kind == VMON_EVENT_FORK || other_process(p, ev))
		return;
	/* no strings: those an event lacks are taken in stream_put() */
	if (fold(&tmp, &p->known.ev, NULL, NULL, false) == 0)
		*ev = tmp.ev;
}

/* the ended process, with all the stream knew of it, for vmon_feed_lookup() */
static void remember_exit(stream_t *st, sproc_t *p)
{
	entry_t *e;

	if (st->exited.next - st->exited.first >= STREAM_EXITED_MAX)
		ring_drop_first(&st->exited);
	e = ring_push(&st->exited, STREAM_EXITED_MAX);
	if (!e)
		return;	/* no memory: a lookup will not find it */
	*e = p->known;
	memset(&p->known, 0, sizeof(p->known));
}

/*
 * An exit of a pid the stream has no process for, that ended lately: a
 * repeat (netlink reports each thread's exit, and two can come after the
 * process ended).  A process that began before the stream, or whose fork
 * was lost, has no record either, but its pid did not end lately without
 * a fork in between: a fork makes a record.
 */
static bool exit_repeats(const stream_t *st, int pid)
{
	for (unsigned i = 0; i < STREAM_ENDED_PIDS; i++)
		if (st->ended[i] == pid)
			return true;
	return false;
}

static void sproc_ended(stream_t *st, sproc_t *p, int pid)
{
	st->ended[st->ended_next++ % STREAM_ENDED_PIDS] = pid;
	pidmap_del(&st->procs, pid, p);
	sproc_free(p);
}

/*
 * An exit the feed found (its event lost): only for the process the stream
 * knows by that pid and start.  Not for a pid it has no record of (it heard
 * nothing of that process, or its real exit came already), nor in place of
 * a record of another process that reused the pid, or of one whose start
 * is not known: that one's own exit is still to come.
 */
static bool found_exit_fits(const sproc_t *p, const vmon_event_t *ev)
{
	const unsigned any = VMON_EVENT_HAS_START | VMON_EVENT_HAS_START_APPROX;
	const vmon_event_t *k;

	if (!p)
		return false;
	k = &p->known.ev;
	if (!(k->has & any) || !(ev->has & any))
		return false;
	if ((k->has & VMON_EVENT_HAS_START) && (ev->has & VMON_EVENT_HAS_START))
		return k->start == ev->start;
	return k->start + 1 >= ev->start && k->start <= ev->start + 1;	/* one of them a tick off at most */
}

void stream_put(stream_t *st, const vmon_event_t *ev)
{
	bool exit = ev->kind == VMON_EVENT_EXIT;
	sproc_t *p = pidmap_get(&st->procs, ev->pid);
	entry_t *open, *e;

	if (exit && !p && exit_repeats(st, ev->pid))
		return;
	if (exit && (ev->has & VMON_EVENT_FOUND_GONE) && !found_exit_fits(p, ev))
		return;
	p = sproc_of(st, ev);
	if (p && fold(&p->known, ev, ev->filename, ev->args, true) < 0)
		st->lost++;
	if (st->flags & (VMON_FEED_EVENTS | VMON_FEED_AGGREGATE)) {
		open = p && p->held ? ring_at(&st->queue, p->held - 1) : NULL;
		if (open && open->open) {
			if (fold(open, ev, ev->filename, ev->args, true) < 0)
				st->lost++;
			if (exit) {
				open->open = false;
				p->held = 0;
			}
		} else if (!(e = ring_push(&st->queue, STREAM_QUEUE_MAX))) {
			st->lost++;
		} else {
			e->ev.kinds = 0;
			/* an exit says all the stream knew of its process: its exec's name and arguments */
			if (fold(e, ev, ev->filename, ev->args, true) < 0 ||
			    (exit && p && fold(e, &p->known.ev, p->known.filename, p->known.args, false) < 0))
				st->lost++;
			if ((st->flags & VMON_FEED_AGGREGATE) && !exit && p) {
				e->open = true;
				e->due_ns = ev->time_ns + st->window_ns;
				p->held = st->queue.next;
			}
		}
	}
	if (exit && p) {
		if (st->flags & VMON_FEED_EXITS)
			remember_exit(st, p);
		sproc_ended(st, p, ev->pid);
	}
	if (!p)
		st->lost++;
}

/* the strings of an event handed out: the caller's until the next call */
static void hand_out(stream_t *st, entry_t *e, vmon_event_t *ev)
{
	free(st->out_filename);
	free(st->out_args);
	st->out_filename = e->filename;
	st->out_args = e->args;
	e->filename = e->args = NULL;
	*ev = e->ev;
	ev->filename = (ev->has & VMON_EVENT_HAS_FILENAME) ? st->out_filename : NULL;
	ev->args = (ev->has & VMON_EVENT_HAS_ARGS) ? st->out_args : NULL;
	if (!ev->args)
		ev->args_len = 0;
}

bool stream_window_over(stream_t *st, unsigned long long now_ns)
{
	const entry_t *e = ring_at(&st->queue, st->queue.first);

	return e && e->open && now_ns >= e->due_ns;
}

int stream_next(stream_t *st, vmon_event_t *ev, unsigned long long now_ns)
{
	entry_t *e = ring_at(&st->queue, st->queue.first);
	sproc_t *p;

	if (!e || (e->open && now_ns < e->due_ns))
		return 0;
	if (e->open) {
		/* the window is over: the process is delivered with what is known, later events alone */
		p = pidmap_get(&st->procs, e->ev.pid);
		if (p && p->held == st->queue.first + 1)
			p->held = 0;
	}
	hand_out(st, e, ev);
	ring_drop_first(&st->queue);
	return 1;
}

static void expire_exited(stream_t *st, unsigned long long now_ns)
{
	const unsigned long long keep = VMON_FEED_EXITED_MS * 1000000ull;
	entry_t *e;

	while ((e = ring_at(&st->exited, st->exited.first)) && e->ev.time_ns + keep < now_ns)
		ring_drop_first(&st->exited);
}

static bool start_matches(const vmon_event_t *ev, unsigned long long start)
{
	if (!start)
		return true;
	if (ev->has & VMON_EVENT_HAS_START)
		return ev->start == start;
	if (ev->has & VMON_EVENT_HAS_START_APPROX)
		return ev->start + 1 >= start && ev->start <= start + 1;
	return false;
}

int stream_lookup(stream_t *st, int pid, unsigned long long start, vmon_event_t *ev, unsigned long long now_ns)
{
	expire_exited(st, now_ns);
	for (unsigned long long s = st->exited.next; s > st->exited.first; s--) {
		entry_t *e = ring_at(&st->exited, s - 1), copy = { 0 };

		if (e->ev.pid != pid || !start_matches(&e->ev, start))
			continue;
		/* a copy: the entry stays for the next lookup */
		copy.ev = e->ev;
		if ((e->filename && set_text(&copy.filename, e->filename, strlen(e->filename)) < 0) ||
		    (e->args && set_text(&copy.args, e->args, e->ev.args_len) < 0)) {
			entry_clear(&copy);
			errno = ENOMEM;
			return -1;
		}
		hand_out(st, &copy, ev);
		return 1;
	}
	return 0;
}

int stream_due_ms(const stream_t *st, unsigned long long now_ns)
{
	const entry_t *e = st->queue.first < st->queue.next ? &st->queue.v[st->queue.first & st->queue.mask] : NULL;

	if (!e)
		return -1;
	if (!e->open || now_ns >= e->due_ns)
		return 0;
	return (int)((e->due_ns - now_ns + 999999) / 1000000);
}

void stream_stats(const stream_t *st, vmon_feed_stats_t *stats)
{
	stats->stream_pending = (size_t)(st->queue.next - st->queue.first);
	stats->stream_lost = st->lost;
	stats->exited = (size_t)(st->exited.next - st->exited.first);
}
