/*
 * feed.c: the event feed, the part that is the same for every backend.
 *
 * The feed is opened by vmon_init_attr(), before anything reads /proc, so
 * that a process is either in the first listing or in the events (or both:
 * identity, pid + start time, makes the second sighting a no-op).  Events
 * wait in a queue; vmon_feed_process() (a caller's poll loop) and every
 * vmon_sample() move what the kernel holds into it, and vmon_sample()
 * applies it before it samples anything:
 *
 *   fork	a new node, is_new, hung under its parent, with what the event
 *		carries (pid, ppid, comm, start, uid) in its stat store; its ctor
 *		runs now, so a process that also exits before the pass ends is
 *		still a whole node: new in this sample, stale in the next.  A
 *		fork of a process that already ended (its node found and lost
 *		before the event was read) goes to that node, never to a second
 *		one (ended.c); so does an exec or exit of it.
 *   exec	the node's comm, cmdline, argv and exe from the event; cmdline
 *		and exe are read again from /proc if the process still lives.
 *   exit	the node's final data: the exit status, state Z, and the times,
 *		faults and peak RSS where the backend carries them.  It ends,
 *		keeping them (state X then), in the sample whose read finds it
 *		reaped, as it does without a feed: a zombie stays in the tree,
 *		as /proc shows it, until its parent waits for it.
 *
 * Order.  A backend delivers events in the order they happened: the BPF
 * ring buffer in reservation order, the netlink socket in send order, the
 * perf backend sorts each read of its per-CPU rings by time.  What a merge
 * can still get wrong is an event read before one that happened earlier on
 * another CPU but was not yet in its ring.  So in PROC_ALL mode, where every
 * live process is known once /proc was listed, an event about an unknown
 * process (a fork whose parent is unknown, an exec or exit of an unknown
 * pid) waits for the next pass, and the queue is then sorted by time: a
 * child is never applied before its parent's fork.  Waiting once is enough;
 * after that the event is applied as it is.
 *
 * Listing.  With a healthy feed, births come as events and a death the feed
 * did not report is found by the stat read of the next sample, so PROC_ALL
 * lists /proc only every VMON_FEED_RECONCILE_SECS, and on the next pass
 * after any loss.
 *
 * Delivery.  An event applied (by feed_apply(), or by feed_node_gone() in
 * the middle of a pass) is copied, strings and all, to the outbox; the
 * listeners (feed_listen(): the caller's event callback among them) get
 * the outbox at one point, once the pass is done with the tree
 * (feed_flush()).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "feed/feed.h"
#include "feed/stream.h"
#include "sources/procfs.h"
#include "util/clock.h"

/* PROC_ALL lists /proc this often even when no event was lost */
#define VMON_FEED_RECONCILE_SECS	10.0
/* events held at most between two samples; beyond, they are counted lost */
#define VMON_FEED_QUEUE_MAX		(1u << 20)
/* with a stream, events held for a tree that is not sampled; beyond, the next sample lists /proc */
#define VMON_FEED_UNSAMPLED_MAX		(1u << 16)
/*
 * The queue's first size, in events, and the outbox's.  A queued event is
 * about 200 bytes, and a pass queues a handful at rest: a first queue of
 * 1,024 was 200 KB that a storm's heap kept resident (vtop_bench --churn:
 * 120 KB more heap 60 s after the storm than with 64).  It doubles as a
 * storm fills it, and goes once a pass uses under a quarter of it.
 */
#define FEED_QUEUE_FIRST		64
#define FEED_OUT_FIRST			64
/* an arena this large or less is kept whatever a pass used of it */
#define FEED_ARENA_KEEP			(64 * 1024)

struct feed {
	const feed_backend_t	*backend;	/* NULL: no feed */
	void			*priv;		/* the backend's */
	char			reason[512];	/* why the preferred backends were not used */
	size_t			capacity;	/* events the kernel buffer holds, roughly */
	int			fds;		/* the backend's: vmon_feed_stats_t.fds */

	feed_event_t		*q;		/* pending, in the order they happened */
	size_t			q_nr, q_cap;
	buf_t		arena;		/* exec filenames and arguments of the pending events */
	bool			q_deferred;	/* some pending events wait for a second try */

	struct outgoing {
		vmon_event_t	ev;		/* filename and args: offsets into out_arena until delivered */
		size_t		filename_off, args_off;
		proc_node_t	*node;
	}			*out;		/* applied in this pass, for feed_flush() */
	size_t			out_nr, out_cap;
	buf_t			out_arena;

	vmon_feed_stats_t	stats;
	bool			loss;		/* events lost since the last listing */
	bool			kernel_loss;	/* ... of them, some the kernel's (not a stream's unsampled queue dropped) */
	bool			pass_after_loss;	/* this pass's listing repairs a loss (feed_node_gone()) */
	bool			pass_after_kernel_loss;	/* ... that the stream did not hear either */
	bool			listed;		/* /proc was listed at least once */
	double			last_listing;	/* CLOCK_MONOTONIC seconds */
	double			last_drain;
	double			rate;		/* events per second at the last drains */

	vmon_event_cb_t		cb;		/* the caller's (vmon_feed_set_callback()), a listener */
	void			*cb_arg;
	struct listener {
		feed_listener_fn	*fn;
		void			(*gone)(void *ctx);
		void			*ctx;
	}			*listeners;	/* in the order they hear an event */
	size_t			listeners_nr, listeners_cap;
	bool			applying;	/* in feed_apply() or feed_node_gone() */
	bool			thread_exits;	/* the queue holds a thread's exit that may be a process's (netlink) */

	unsigned long long	tick_ns;	/* nanoseconds per clock tick */
	stream_t		*stream;	/* vmon_feed_stream(): every event read, for vmon_feed_next() */
};

static const char *const backend_names[VMON_FEED_BACKEND_NR] = {
	[VMON_FEED_NONE]	= "none",
	[VMON_FEED_EBPF]	= "ebpf",
	[VMON_FEED_PERF]	= "perf",
	[VMON_FEED_NETLINK]	= "netlink",
};

static const feed_backend_t *backend_of(vmon_feed_backend_t id)
{
	switch (id) {
#ifdef HAVE_BPF
	case VMON_FEED_EBPF:
		return &feed_bpf_backend;
#endif
	case VMON_FEED_PERF:
		return &feed_perf_backend;
	case VMON_FEED_NETLINK:
		return &feed_netlink_backend;
	default:
		return NULL;
	}
}

/*
 * CLOCK_BOOTTIME less CLOCK_MONOTONIC: the time the machine was suspended.
 * The boot time is read between two monotonic reads, and of a few tries
 * the one with the least time between them is kept (its midpoint), so
 * that a thread preempted between two reads does not move every event's
 * time by how long it waited: on a loaded machine that was tens of
 * milliseconds, a fork's start that much early and its exit's length of
 * life that much long.  The error is at most half the window kept.
 */
#define BOOTTIME_WINDOW_NS	20000ull	/* a window this short ends the tries */
#define BOOTTIME_TRIES		4

unsigned long long feed_boottime_offset_ns(void)
{
	unsigned long long best = 0, best_window = ~0ull;

	for (int i = 0; i < BOOTTIME_TRIES && best_window > BOOTTIME_WINDOW_NS; i++) {
		unsigned long long before = vclock_ns(CLOCK_MONOTONIC);
		unsigned long long boot = vclock_ns(CLOCK_BOOTTIME);
		unsigned long long after = vclock_ns(CLOCK_MONOTONIC);

		if (after - before < best_window) {
			best_window = after - before;
			best = boot - (before + best_window / 2);
		}
	}
	return best;
}

unsigned long long feed_ns_to_ticks(const feed_t *feed, unsigned long long ns)
{
	return ns / feed->tick_ns;
}

void *feed_priv(const feed_t *feed)
{
	return feed->priv;
}

void feed_set_priv(feed_t *feed, void *priv)
{
	feed->priv = priv;
}

static void reason_add(feed_t *f, const char *name, const char *why)
{
	size_t len = strlen(f->reason);

	snprintf(f->reason + len, sizeof(f->reason) - len, "%s%s: %s", len ? "; " : "", name, why);
}

/* --- choosing a backend --- */

/*
 * Parse "ebpf,perf,netlink" into order[] (ids, in order; "none" ends the
 * list).  Returns the number of ids, or -1 for a name we do not know, whose
 * text is put in bad.
 */
static int parse_spec(const char *spec, vmon_feed_backend_t order[VMON_FEED_BACKEND_NR], char *bad, size_t bad_size)
{
	int nr = 0;

	for (const char *p = spec; *p; ) {
		size_t len = strcspn(p, ", \t");
		int id = -1;

		for (int i = 0; i < VMON_FEED_BACKEND_NR && len; i++) {
			if (strlen(backend_names[i]) == len && strncmp(p, backend_names[i], len) == 0)
				id = i;
		}
		if (len && id < 0) {
			snprintf(bad, bad_size, "%.*s", (int)(len > 32 ? 32 : len), p);
			return -1;
		}
		if (len) {
			bool dup = false;

			for (int i = 0; i < nr; i++)
				dup |= order[i] == (vmon_feed_backend_t)id;
			if (!dup && nr < VMON_FEED_BACKEND_NR)
				order[nr++] = (vmon_feed_backend_t)id;
		}
		p += len;
		while (*p == ',' || *p == ' ' || *p == '\t')
			p++;
	}
	return nr;
}

static bool try_backend(vmon_t *vmon, feed_t *f, vmon_feed_backend_t id, size_t buffer_bytes)
{
	const feed_backend_t *b = backend_of(id);
	char why[256] = "";
	size_t capacity = 0;
	int before;

	if (!b) {
		/* the only backend a build can lack */
		reason_add(f, backend_names[VMON_FEED_EBPF], "not built in (configured with --disable-bpf)");
		return false;
	}
	before = host_count_fds(vmon);
	if (b->open(vmon, f, &buffer_bytes, &capacity, why, sizeof(why)) < 0) {
		reason_add(f, b->name, why[0] ? why : strerror(errno));
		f->priv = NULL;
		return false;
	}
	f->backend = b;
	f->capacity = capacity ? capacity : 1;
	/* held from now to vmon_destroy(), besides the /proc files of the fd budget */
	f->fds = before >= 0 ? host_count_fds(vmon) - before : 0;
	if (f->fds < 0)
		f->fds = 0;
	f->stats.backend = id;
	f->stats.buffer_bytes = buffer_bytes;
	return true;
}

int feed_open(vmon_t *vmon, const vmon_attr_t *attr)
{
	struct _vmon_internal *in = vmon->internal;
	vmon_feed_backend_t order[VMON_FEED_BACKEND_NR] = { VMON_FEED_EBPF, VMON_FEED_PERF, VMON_FEED_NETLINK };
	int nr = 3;
	const char *spec = attr->feed, *not_here;
	char bad[40];
	feed_t *f;

	f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	f->tick_ns = vmon->ticks_per_sec > 0 ? 1000000000ull / (unsigned long long)vmon->ticks_per_sec : 10000000ull;
	f->last_drain = vclock_secs(CLOCK_MONOTONIC);
	in->feed = f;

	if (spec) {
		nr = parse_spec(spec, order, bad, sizeof(bad));
		if (nr < 0) {
			errno = EINVAL;	/* the caller's mistake: vmon_init_attr() fails */
			return -1;
		}
	} else if ((spec = secure_getenv("VMON_FEED")) && *spec) {
		nr = parse_spec(spec, order, bad, sizeof(bad));
		if (nr < 0) {
			/* the user's: say so and carry on with the default */
			snprintf(f->reason, sizeof(f->reason), "VMON_FEED: unknown backend \"%s\" (ebpf, perf, netlink, none)", bad);
			order[0] = VMON_FEED_EBPF;
			order[1] = VMON_FEED_PERF;
			order[2] = VMON_FEED_NETLINK;
			nr = 3;
		}
	}

	not_here = host_root_reason(vmon);
	for (int i = 0; i < nr; i++) {
		if (order[i] == VMON_FEED_NONE)
			break;
		if (not_here) {
			/* a fixture tree, a container's procfs: the kernel's events are not about it */
			reason_add(f, backend_names[order[i]], not_here);
			continue;
		}
		if (try_backend(vmon, f, order[i], attr->feed_buffer_bytes))
			break;
	}
	return 0;
}

void feed_close(vmon_t *vmon)
{
	feed_t *f = vmon->internal->feed;
	if (!f)
		return;
	/* the listeners that outlive the instance let go of it */
	for (size_t i = 0; i < f->listeners_nr; i++)
		if (f->listeners[i].gone)
			f->listeners[i].gone(f->listeners[i].ctx);
	free(f->listeners);
	if (f->backend)
		f->backend->close(f);
	free(f->q);
	buf_free(&f->arena);
	free(f->out);
	buf_free(&f->out_arena);
	stream_free(f->stream);
	free(f);
	vmon->internal->feed = NULL;
}

/* --- the queue --- */

/*
 * A storm's events grow the queue, the outbox and their arenas to its size
 * (200 bytes an event and its strings: 10 MB after 30,000 events between
 * two samples); emptied by a pass that used under a quarter of them, they
 * are given back, so that after the storm the memory returns to its steady
 * size instead of staying at the storm's.  A steady rate keeps them.
 */
static bool oversized(size_t cap, size_t first, size_t used)
{
	return cap > first && used < cap / 4;
}

static void arena_fit(buf_t *arena, size_t used)
{
	if (oversized(arena->cap, FEED_ARENA_KEEP, used))
		buf_free(arena);
}

feed_event_t *feed_push(feed_t *f, vmon_event_kind_t kind)
{
	feed_event_t *e;

	if (f->q_nr >= VMON_FEED_QUEUE_MAX) {
		feed_lost(f, 1);
		return NULL;
	}
	if (f->q_nr == f->q_cap) {
		size_t cap = f->q_cap ? f->q_cap * 2 : FEED_QUEUE_FIRST;
		feed_event_t *q = realloc(f->q, sizeof(*q) * cap);

		if (!q) {
			feed_lost(f, 1);
			return NULL;
		}
		f->q = q;
		f->q_cap = cap;
	}
	e = &f->q[f->q_nr++];
	memset(e, 0, sizeof(*e));
	e->ev.kind = kind;
	e->ev.kinds = 1u << kind;
	return e;
}

int feed_push_exec_data(feed_t *f, feed_event_t *e, const char *filename, size_t filename_len,
			const char *args, size_t args_len)
{
	buf_t *a = &f->arena;
	size_t need = a->len + filename_len + 1 + args_len;

	if (need + 1 > a->cap && buf_reserve(a, need > a->cap * 2 ? need : a->cap * 2) < 0)
		return -1;
	e->has_data = true;
	e->filename_off = a->len;
	e->filename_len = filename_len;
	memcpy(a->data + a->len, filename, filename_len);
	a->len += filename_len;
	a->data[a->len++] = '\0';
	e->args_off = a->len;
	e->ev.args_len = args_len;
	memcpy(a->data + a->len, args, args_len);
	a->len += args_len;
	a->data[a->len] = '\0';
	return 0;
}

void feed_buffer_resized(feed_t *f, size_t bytes, size_t capacity)
{
	f->stats.buffer_bytes = bytes;
	f->capacity = capacity ? capacity : 1;
}

void feed_lost(feed_t *f, unsigned long long n)
{
	f->stats.lost += n ? n : 1;
	f->stats.overruns++;
	f->loss = true;
	f->kernel_loss = true;
}

/*
 * The feed's own CPU time: what reading and applying events cost, apart
 * from sampling /proc.  The thread's CPU clock is exact; a user/system
 * split is not to be had for short spans on kernels that account by ticks.
 */
static unsigned long long cpu_mark(void)
{
	return vclock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static void cpu_add(feed_t *f, unsigned long long since)
{
	f->stats.cpu_ns += cpu_mark() - since;
}

static void stream_take(vmon_t *vmon, feed_t *f, size_t from);
static int drain_for_stream(vmon_t *vmon, feed_t *f);
static void set_duration(const feed_t *f, vmon_event_t *ev);

static int feed_drain(vmon_t *vmon, feed_t *f)
{
	unsigned long long cpu;
	size_t from = f->q_nr;
	double now, dt;
	int n;

	if (!f->backend)
		return 0;
	cpu = cpu_mark();
	n = f->backend->drain(vmon, f);
	if (f->stream)
		stream_take(vmon, f, from);
	cpu_add(f, cpu);
	f->stats.drains++;
	now = vclock_secs(CLOCK_MONOTONIC);
	dt = now - f->last_drain;
	if (n >= 0 && dt > 0.001) {
		/* the rate decays slowly and jumps up at once: timeouts err on the short side */
		double inst = (double)n / dt;

		f->rate = inst > f->rate ? inst : 0.7 * f->rate + 0.3 * inst;
		f->last_drain = now;
	}
	return n;
}

/*
 * A pass of 10,000 processes takes tens of milliseconds (far more under a
 * sanitizer or valgrind), in which the caller reads no events; a storm
 * meanwhile can fill a ring sized for a reader that keeps up.  So the pass
 * asks the backend between nodes and reads what waits once the buffer is
 * an eighth full: the events join the queue, as if read at the next pass's
 * start (a node found gone in this pass finds its exit there).
 */
void feed_keep_up(vmon_t *vmon)
{
	feed_t *f = vmon->internal->feed;

	if (f && f->backend && f->backend->behind && !f->applying && f->backend->behind(f))
		feed_drain(vmon, f);
}

/* --- applying events to the tree --- */

/*
 * Before the feed's writes to a node: it was fed, and the stores it writes
 * (the stat store, the memory status store's peak) have their changed bits
 * started over, if nothing wrote them before in this pass
 * (node_store_start()).
 */
static void node_fed(vmon_t *vmon, proc_node_t *node)
{
	vmon_proc_stat_t *s = node->pub.stores[VMON_STORE_PROC_STAT];
	vmon_proc_vm_status_t *st = node->pub.stores[VMON_STORE_PROC_VM_STATUS];

	node->life.fed = true;
	if (s)
		node_store_start(vmon, node, VMON_STORE_PROC_STAT, s->changed, sizeof(s->changed));
	if (st)
		node_store_start(vmon, node, VMON_STORE_PROC_VM_STATUS, st->changed, sizeof(st->changed));
}

/* what the event says about the process, into its stat store */
static vmon_proc_stat_t *fill_identity(vmon_t *vmon, proc_node_t *node, const vmon_event_t *ev, bool first)
{
	vmon_proc_stat_t *s = node_store(vmon, node, VMON_STORE_PROC_STAT);

	if (!s) {
		vmon->internal->stats.errors++;
		return NULL;
	}
	node_fed(vmon, node);
	node_store_written(node, VMON_STORE_PROC_STAT, proc_stat_event(s, ev, first));
	return s;
}

/* what the backend did not carry but the node knows: for the event callback */
static void complete_event(vmon_event_t *ev, vmon_proc_t *proc)
{
	const vmon_proc_stat_t *s = proc ? proc->stores[VMON_STORE_PROC_STAT] : NULL;

	if (!s)
		return;
	if (!(ev->has & VMON_EVENT_HAS_COMM) && s->comm.len > 1) {
		snprintf(ev->comm, sizeof(ev->comm), "%s", s->comm.array);
		ev->has |= VMON_EVENT_HAS_COMM;
	}
	if (!(ev->has & VMON_EVENT_HAS_PPID) && BITTEST(s->present, VMON_PROC_STAT_PPID)) {
		ev->ppid = (int)s->ppid;
		ev->has |= VMON_EVENT_HAS_PPID;
	}
	if (!(ev->has & (VMON_EVENT_HAS_START | VMON_EVENT_HAS_START_APPROX))) {
		ev->start = node_of(proc)->start;
		ev->has |= node_of(proc)->start_approx ? VMON_EVENT_HAS_START_APPROX : VMON_EVENT_HAS_START;
	}
	if (!(ev->has & VMON_EVENT_HAS_UID) && BITTEST(s->present, VMON_PROC_STAT_UID)) {
		ev->uid = s->uid;
		ev->has |= VMON_EVENT_HAS_UID;
	}
}

/* is the event about the process this node stands for, and not an earlier one with its pid? */
static bool event_matches(const feed_t *f, const proc_node_t *node, const vmon_event_t *ev)
{
	if (!node->identified)
		return true;	/* no start time to compare with yet */
	if (ev->has & VMON_EVENT_HAS_START)
		return node_start_matches(node, ev->start);
	if (ev->has & VMON_EVENT_HAS_START_APPROX)
		return ev->start + 1 >= node->start && ev->start <= node->start + 1;
	/* no start time: it cannot have happened before the process started */
	return feed_ns_to_ticks(f, ev->time_ns) + 1 >= node->start;
}

int feed_read_stat(vmon_t *vmon, int pid, feed_stat_t *st)
{
	char path[32];
	stat_ident_t id;
	int fd, r;

	snprintf(path, sizeof(path), "%d/stat", pid);
	fd = openat(vmon->internal->proc_fd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	/*
	 * A line of a task being reaped (stat_ident_reaped()) says nothing true
	 * of it: its parent reads 0, which an exec event once gave its store
	 * (the churn tests' "unseen" lives, hung under their parent with a ppid
	 * of 0).  procfs_probe()'s reader reads such a line once more: it may
	 * be the old leader's, reaped as another thread's exec took the pid.
	 * The library's file buffer is free here: the feed is read where no
	 * caller holds its bytes (between nodes of a pass, as a node ends,
	 * outside a pass).  The read is not the sampling's: vmon_get_stats(3)
	 * counts the pass's reads (test_skip's exact count), and the feed's
	 * opens and cmdline reads are not counted either.
	 */
	r = procfs_read_ident(vmon, fd, &vmon->internal->buf, &id, false);
	close(fd);
	if (r < 0)
		return -1;
	if (id.comm_len >= sizeof(st->comm))
		id.comm_len = sizeof(st->comm) - 1;
	memcpy(st->comm, id.comm, id.comm_len);
	st->comm[id.comm_len] = '\0';
	st->state = id.state;
	st->ppid = id.ppid;
	st->num_threads = id.num_threads;
	st->start = id.start;
	return 0;
}

/* what an exec event does not say, from /proc while the process is (most likely) still there */
void feed_read_exec(vmon_t *vmon, feed_t *feed, feed_event_t *e, const char *filename, size_t filename_len)
{
	char path[32], args[VMON_EVENT_ARGS_MAX + 1];
	ssize_t len = 0;
	feed_stat_t st;
	int fd;

	if (feed_read_stat(vmon, e->ev.pid, &st) == 0) {
		memcpy(e->ev.comm, st.comm, sizeof(e->ev.comm));
		e->ev.start = st.start;
		e->ev.ppid = st.ppid;
		e->ev.has |= VMON_EVENT_HAS_COMM | VMON_EVENT_HAS_START | VMON_EVENT_HAS_PPID;
		snprintf(path, sizeof(path), "%d/cmdline", e->ev.pid);
		fd = openat(vmon->internal->proc_fd, path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			len = read(fd, args, sizeof(args));
			close(fd);
		}
		if (len > VMON_EVENT_ARGS_MAX) {
			len = VMON_EVENT_ARGS_MAX;
			e->ev.args_truncated = 1;
		}
	}
	if ((len > 0 || filename_len) &&
	    feed_push_exec_data(feed, e, filename ? filename : "", filename_len, args, len > 0 ? (size_t)len : 0) == 0)
		e->ev.has |= (len > 0 ? VMON_EVENT_HAS_ARGS : 0) | (filename_len ? VMON_EVENT_HAS_FILENAME : 0);
}

/*
 * Has the process really ended?  The proc connector reports every thread's
 * exit, and the leader's is not the process's when other threads run on.
 * The process is gone when its stat is gone (or is another process's), or
 * shows a zombie with no thread left but the leader.
 */
static bool process_gone(vmon_t *vmon, proc_node_t *node)
{
	feed_stat_t st;

	if (feed_read_stat(vmon, node->pub.pid, &st) < 0 || !node_start_matches(node, st.start))
		return true;
	return st.state == 'Z' && st.num_threads == 1;
}

/*
 * The node of an ended process the event is about, while it is in the tree;
 * NULL with *ended set when it is no longer (the event is old news).
 */
static proc_node_t *ended_node(vmon_t *vmon, feed_t *f, const vmon_event_t *ev, bool *ended)
{
	ended_t *e = ended_find(vmon, ev, f->tick_ns);

	*ended = e != NULL;
	return e ? e->node : NULL;
}

static proc_node_t *apply_fork(vmon_t *vmon, feed_t *f, feed_event_t *e)
{
	struct _vmon_internal *in = vmon->internal;
	vmon_event_t *ev = &e->ev;
	proc_node_t *node = pidmap_get(&in->procs, ev->pid), *parent = NULL;
	vmon_proc_wants_t wants;
	bool ended;

	if (node) {
		/* a listing found it first; but after its exit, the same pid and tick is another process */
		if (event_matches(f, node, ev) && !(node->life.exit_seen && ev->time_ns > node->life.exit_ns))
			return node;
		node_end(vmon, node);	/* the pid was reused: the process we knew is gone */
	} else {
		node = ended_node(vmon, f, ev, &ended);
		if (ended)
			return node;	/* found and lost before its fork was read */
	}
	if ((ev->has & VMON_EVENT_HAS_PPID) && ev->ppid > 0)
		parent = pidmap_get(&in->procs, ev->ppid);
	if (vmon->flags & VMON_FLAG_PROC_ALL)
		wants = vmon->proc_wants;
	else if (parent && (parent->pub.wants & VMON_WANT_PROC_FOLLOW_CHILDREN))
		wants = parent->pub.wants;	/* as proc_follow_children_sample() gives it */
	else
		return NULL;

	/* a child has its parent's name and owner until it execs */
	if (parent)
		complete_event(ev, &parent->pub);
	node = node_new(vmon, ev->pid, ev->pid, false, wants);
	if (!node) {
		in->stats.errors++;
		return NULL;
	}
	node->start = ev->start;
	node->start_approx = !(ev->has & VMON_EVENT_HAS_START);
	/* the fork's start time is its identity (node_start_matches() allows an approximate one a tick) */
	node->identified = (ev->has & (VMON_EVENT_HAS_START | VMON_EVENT_HAS_START_APPROX)) != 0;
	node->line.ppid = ev->ppid;
	node->pass.seen = vmon->generation;
	node->pub.generation = vmon->generation;
	fill_identity(vmon, node, ev, true);
	node_attach(vmon, node, parent);	/* and its refcnt */
	node_confirm(vmon, node);
	return node;
}

static void apply_exec(vmon_t *vmon, feed_t *f, proc_node_t *node, vmon_event_t *ev)
{
	vmon_proc_stat_t *s;

	node->life.exec_pending = true;	/* cmdline and exe are read again if it lives */
	node->life.leader_gone = false;	/* an exec from another thread made it the leader */
	s = fill_identity(vmon, node, ev, false);
	if (s)
		node_store_written(node, VMON_STORE_PROC_STAT, proc_stat_event_exec(s, ev));
}

static void apply_exit(vmon_t *vmon, feed_t *f, proc_node_t *node, vmon_event_t *ev)
{
	vmon_proc_t *proc = &node->pub;
	vmon_proc_stat_t *s = node_store(vmon, node, VMON_STORE_PROC_STAT);

	node_fed(vmon, node);
	node->life.exit_seen = true;
	node->life.exit_ns = ev->time_ns;
	if (node->life.ended_seq)
		ended_exit(vmon, node);
	if (s)
		node_store_written(node, VMON_STORE_PROC_STAT, proc_stat_event_exit(s, node, ev));
	if ((ev->has & VMON_EVENT_HAS_MAXRSS) && (proc->wants & VMON_WANT_PROC_VM_STATUS)) {
		vmon_proc_vm_status_t *st = node_store(vmon, node, VMON_STORE_PROC_VM_STATUS);

		if (st)
			node_store_written(node, VMON_STORE_PROC_VM_STATUS, proc_vm_status_event_exit(st, ev));
	}
	if (ev->has & VMON_EVENT_HAS_EXIT_STATUS) {
		proc->exit_status = ev->exit_status;
		proc->has_exit_status = 1;
	}
}

/*
 * A leader's exit, from a backend that reports every thread's, found the
 * process gone: its other threads ended before it was applied, and the
 * last one's exit, queued after it, has the process's status (the group
 * exit's code, or the signal that killed them); the leader's own is its
 * pthread_exit()'s.  Take it, as a pass between the two exits would have
 * (the leader's ignored, the last thread's applied), and drop those thread
 * exits, which are not the process's.
 */
static void last_thread_status(feed_t *f, feed_event_t *e, proc_node_t *node)
{
	if (!f->thread_exits)
		return;
	for (size_t i = (size_t)(e - f->q) + 1; i < f->q_nr; i++) {
		feed_event_t *t = &f->q[i];

		if (t->applied || t->ev.pid != e->ev.pid)
			continue;
		if (t->ev.kind == VMON_EVENT_FORK)
			break;	/* the pid's next process: what follows is its */
		if (t->ev.kind != VMON_EVENT_EXIT || !t->check_alive || t->ev.tid == t->ev.pid ||
		    !event_matches(f, node, &t->ev))
			continue;
		if (t->ev.has & VMON_EVENT_HAS_EXIT_STATUS) {
			e->ev.exit_status = t->ev.exit_status;
			e->ev.has |= VMON_EVENT_HAS_EXIT_STATUS;
		}
		t->applied = true;
	}
}

/* does the queue hold a thread's exit that last_thread_status() may want? */
static void note_thread_exits(feed_t *f)
{
	f->thread_exits = false;
	for (size_t i = 0; i < f->q_nr && !f->thread_exits; i++) {
		const feed_event_t *e = &f->q[i];

		f->thread_exits = e->ev.kind == VMON_EVENT_EXIT && e->check_alive && e->ev.tid != e->ev.pid;
	}
}

/*
 * One event.  Returns the node it applied to, NULL if none; *defer is set
 * when it should wait for the next pass instead (see the top of this file).
 */
static proc_node_t *apply_one(vmon_t *vmon, feed_t *f, feed_event_t *e, bool may_defer, bool *defer, bool *counts)
{
	struct _vmon_internal *in = vmon->internal;
	vmon_event_t *ev = &e->ev;
	bool all = vmon->flags & VMON_FLAG_PROC_ALL;
	proc_node_t *node;

	*defer = false;
	*counts = true;
	if (ev->kind == VMON_EVENT_FORK) {
		if (may_defer && all && (ev->has & VMON_EVENT_HAS_PPID) && ev->ppid > 0 &&
		    !pidmap_get(&in->procs, ev->ppid)) {
			*defer = true;
			return NULL;
		}
		return apply_fork(vmon, f, e);
	}

	node = pidmap_get(&in->procs, ev->pid);
	if (node && !event_matches(f, node, ev))
		node = NULL;
	if (!node) {
		bool ended;

		/* a process that already ended: its node while it is in the tree */
		node = ended_node(vmon, f, ev, &ended);
		if (ended && !node)
			return NULL;
	}
	if (!node) {
		if (may_defer && all) {
			*defer = true;
			return NULL;
		}
		*counts = !e->check_alive || ev->tid == ev->pid;
		return NULL;
	}

	if (ev->kind == VMON_EVENT_EXEC) {
		ev->filename = ev->has & VMON_EVENT_HAS_FILENAME ? f->arena.data + e->filename_off : NULL;
		ev->args = ev->has & VMON_EVENT_HAS_ARGS ? f->arena.data + e->args_off : NULL;
		apply_exec(vmon, f, node, ev);
		complete_event(ev, &node->pub);
		return node;
	}

	if (e->check_alive) {
		/* a thread's exit: the process's only if its leader is gone too, and /proc agrees */
		if (ev->tid != ev->pid && !node->life.leader_gone) {
			*counts = false;
			return NULL;
		}
		if (!process_gone(vmon, node)) {
			if (ev->tid == ev->pid)
				node->life.leader_gone = true;
			*counts = false;
			return NULL;
		}
		if (ev->tid == ev->pid)
			last_thread_status(f, e, node);
	}
	complete_event(ev, &node->pub);
	set_duration(f, ev);
	apply_exit(vmon, f, node, ev);
	return node;
}

/* an exit's length of life, where its start is known */
static void set_duration(const feed_t *f, vmon_event_t *ev)
{
	unsigned long long start_ns = ev->start * f->tick_ns;

	if (ev->kind != VMON_EVENT_EXIT || (ev->has & VMON_EVENT_HAS_DURATION) ||
	    !(ev->has & (VMON_EVENT_HAS_START | VMON_EVENT_HAS_START_APPROX)) || ev->time_ns < start_ns)
		return;
	ev->duration_ns = ev->time_ns - start_ns;
	ev->has |= VMON_EVENT_HAS_DURATION;
}

/*
 * A thread's exit from a backend that reports every thread's (netlink),
 * read with the queue's events from `from` on: the process's if /proc says
 * it is gone; a leader's then takes the status of a later thread's exit of
 * its process, as last_thread_status() does for the tree.
 */
static bool stream_exit_counts(vmon_t *vmon, feed_t *f, size_t i, vmon_event_t *ev)
{
	feed_stat_t st;

	if (feed_read_stat(vmon, ev->pid, &st) == 0 && !(st.state == 'Z' && st.num_threads == 1))
		return false;
	for (size_t j = i + 1; ev->tid == ev->pid && j < f->q_nr; j++) {
		const feed_event_t *t = &f->q[j];

		if (t->ev.pid != ev->pid)
			continue;
		if (t->ev.kind == VMON_EVENT_FORK)
			break;
		if (t->ev.kind == VMON_EVENT_EXIT && t->check_alive && t->ev.tid != t->ev.pid &&
		    (t->ev.has & VMON_EVENT_HAS_EXIT_STATUS))
			ev->exit_status = t->ev.exit_status;
	}
	return true;
}

/*
 * The events just read, to the stream, with what the stream and the tree
 * know of their processes (the tree is only read: no node changes here).
 */
static void stream_take(vmon_t *vmon, feed_t *f, size_t from)
{
	struct _vmon_internal *in = vmon->internal;

	for (size_t i = from; i < f->q_nr; i++) {
		const feed_event_t *e = &f->q[i];
		vmon_event_t ev = e->ev;
		proc_node_t *node;

		if (e->check_alive && !stream_exit_counts(vmon, f, i, &ev))
			continue;
		ev.filename = e->has_data && (ev.has & VMON_EVENT_HAS_FILENAME) ? f->arena.data + e->filename_off : NULL;
		ev.args = e->has_data && (ev.has & VMON_EVENT_HAS_ARGS) ? f->arena.data + e->args_off : NULL;
		stream_complete(f->stream, &ev);
		if (ev.kind == VMON_EVENT_FORK) {
			/* a child has its parent's name and owner until it execs */
			node = (ev.has & VMON_EVENT_HAS_PPID) ? pidmap_get(&in->procs, ev.ppid) : NULL;
			if (node && !(ev.has & VMON_EVENT_HAS_COMM))
				complete_event(&ev, &node->pub);
		} else {
			node = pidmap_get(&in->procs, ev.pid);
			if (node && event_matches(f, node, &ev))
				complete_event(&ev, &node->pub);
		}
		set_duration(f, &ev);
		stream_put(f->stream, &ev);
	}
}

/*
 * An event is done: counted, and passed to every listener (the caller's
 * callback among them), once the tree is whole: feed_flush() for a live
 * pass; a pass that applies recorded events delivers them here at the end
 * of its own.  A listener may subscribe
 * or leave from its call: the list is read afresh at each step.
 */
void feed_deliver(vmon_t *vmon, const vmon_event_t *ev, proc_node_t *node)
{
	feed_t *f = vmon->internal->feed;

	f->stats.events[ev->kind]++;
	if (node)
		f->stats.applied++;
	else
		f->stats.ignored++;
	for (size_t i = 0; i < f->listeners_nr; i++)
		f->listeners[i].fn(vmon, ev, node, f->listeners[i].ctx);
}

static struct listener *listener_find(feed_t *f, feed_listener_fn *fn, void *ctx)
{
	for (size_t i = 0; i < f->listeners_nr; i++)
		if (f->listeners[i].fn == fn && (!ctx || f->listeners[i].ctx == ctx))
			return &f->listeners[i];
	return NULL;
}

int feed_listen(vmon_t *vmon, feed_listener_fn *fn, void (*gone)(void *ctx), void *ctx, bool first)
{
	feed_t *f = vmon->internal->feed;
	size_t at;

	if (!f) {
		errno = EINVAL;
		return -1;
	}
	if (listener_find(f, fn, ctx))
		return 0;
	if (f->listeners_nr == f->listeners_cap) {
		size_t cap = f->listeners_cap ? f->listeners_cap * 2 : 4;
		struct listener *v = realloc(f->listeners, sizeof(*v) * cap);

		if (!v)
			return -1;
		f->listeners = v;
		f->listeners_cap = cap;
	}
	at = first ? 0 : f->listeners_nr;
	memmove(&f->listeners[at + 1], &f->listeners[at], (f->listeners_nr - at) * sizeof(f->listeners[0]));
	f->listeners[at] = (struct listener){ .fn = fn, .gone = gone, .ctx = ctx };
	f->listeners_nr++;
	return 0;
}

void feed_unlisten(vmon_t *vmon, feed_listener_fn *fn, void *ctx)
{
	feed_t *f = vmon->internal->feed;
	struct listener *l = f ? listener_find(f, fn, ctx) : NULL;

	if (!l)
		return;
	memmove(l, l + 1, (size_t)(&f->listeners[f->listeners_nr] - (l + 1)) * sizeof(*l));
	f->listeners_nr--;
}

void *feed_listener_ctx(vmon_t *vmon, feed_listener_fn *fn)
{
	feed_t *f = vmon->internal->feed;
	struct listener *l = f ? listener_find(f, fn, NULL) : NULL;

	return l ? l->ctx : NULL;
}

/* the caller's event callback, a listener like any other */
static void call_user(vmon_t *vmon, const vmon_event_t *ev, proc_node_t *node, void *ctx)
{
	feed_t *f = ctx;
	int prev = user_enter(vmon->internal, USER_NOTIFY);

	f->cb(vmon, ev, node ? &node->pub : NULL, f->cb_arg);
	user_leave(vmon->internal, prev);
}

/*
 * An event applied in this pass, into the outbox for feed_flush(): its
 * strings copied, for the queue's arena is reused by the next drain (the
 * pass's own, or a callback's vmon_feed_process()).  Without memory for
 * the copy, the event is counted lost: it did its work on the tree, but no
 * listener hears of it.
 */
static void feed_hold(vmon_t *vmon, feed_t *f, const vmon_event_t *ev, proc_node_t *node)
{
	size_t flen = ev->filename ? strlen(ev->filename) + 1 : 0, alen = ev->args ? ev->args_len + 1 : 0;
	struct outgoing *o;

	if (f->out_nr == f->out_cap) {
		size_t cap = f->out_cap ? f->out_cap * 2 : FEED_OUT_FIRST;
		struct outgoing *v = realloc(f->out, sizeof(*v) * cap);

		if (!v) {
			feed_lost(f, 1);
			return;
		}
		f->out = v;
		f->out_cap = cap;
	}
	if (f->out_arena.len + flen + alen + 1 > f->out_arena.cap &&
	    buf_reserve(&f->out_arena, 2 * (f->out_arena.len + flen + alen)) < 0) {
		feed_lost(f, 1);
		return;
	}
	o = &f->out[f->out_nr++];
	o->ev = *ev;
	o->node = node;
	o->filename_off = f->out_arena.len;
	if (flen) {
		memcpy(f->out_arena.data + f->out_arena.len, ev->filename, flen);
		f->out_arena.len += flen;
	}
	o->args_off = f->out_arena.len;
	if (alen) {
		memcpy(f->out_arena.data + f->out_arena.len, ev->args, alen - 1);
		f->out_arena.data[f->out_arena.len + alen - 1] = '\0';
		f->out_arena.len += alen;
	}
}

/*
 * The events applied in this pass, in the order they were applied, to the
 * listeners: the end of vmon_sample(), when no node is being made, moved or
 * marked, and every node an event names is still in the tree.
 */
void feed_flush(vmon_t *vmon)
{
	feed_t *f = vmon->internal->feed;

	if (!f)
		return;
	for (size_t i = 0; i < f->out_nr; i++) {
		struct outgoing *o = &f->out[i];

		if (o->ev.filename)
			o->ev.filename = f->out_arena.data + o->filename_off;
		if (o->ev.args)
			o->ev.args = f->out_arena.data + o->args_off;
		feed_deliver(vmon, &o->ev, o->node);
	}
	if (oversized(f->out_cap, FEED_OUT_FIRST, f->out_nr)) {
		free(f->out);
		f->out = NULL;
		f->out_cap = 0;
	}
	arena_fit(&f->out_arena, f->out_arena.len);
	f->out_nr = 0;
	f->out_arena.len = 0;
}

void feed_count_lost(vmon_t *vmon, unsigned long long n)
{
	if (vmon->internal->feed)
		feed_lost(vmon->internal->feed, n);
}

static int event_time_cmp(const void *a, const void *b)
{
	const feed_event_t *ea = a, *eb = b;

	if (ea->ev.time_ns != eb->ev.time_ns)
		return ea->ev.time_ns < eb->ev.time_ns ? -1 : 1;
	return (ea->seq > eb->seq) - (ea->seq < eb->seq);	/* stable */
}

/* the events that wait for the next pass go to the head of the queue, strings and all */
static void keep_deferred(feed_t *f)
{
	buf_t arena = { 0 };
	size_t kept = 0;

	for (size_t i = 0; i < f->q_nr; i++) {
		feed_event_t e = f->q[i];

		if (e.applied)
			continue;
		if (e.has_data) {
			size_t len = e.filename_len + 1 + e.ev.args_len;

			if (buf_reserve(&arena, arena.len + len) < 0) {
				feed_lost(f, 1);
				continue;
			}
			memcpy(arena.data + arena.len, f->arena.data + e.filename_off, len);
			arena.data[arena.len + len] = '\0';
			e.args_off = arena.len + (e.args_off - e.filename_off);
			e.filename_off = arena.len;
			arena.len += len;
		}
		f->q[kept++] = e;
	}
	buf_free(&f->arena);
	f->arena = arena;
	f->q_nr = kept;
	f->q_deferred = kept > 0;
}

void feed_apply(vmon_t *vmon)
{
	struct _vmon_internal *in = vmon->internal;
	feed_t *f = in->feed;
	bool deferred = false;
	unsigned long long cpu;

	if (!f || !f->backend)
		return;
	f->pass_after_loss = f->pass_after_kernel_loss = false;
	feed_drain(vmon, f);
	cpu = cpu_mark();
	f->applying = true;
	if (f->q_deferred) {
		/* events held from the last pass go back among the new ones, in time order */
		for (size_t i = 0; i < f->q_nr; i++)
			f->q[i].seq = i;
		qsort(f->q, f->q_nr, sizeof(*f->q), event_time_cmp);
	}
	note_thread_exits(f);
	for (size_t i = 0; i < f->q_nr; i++) {
		feed_event_t *e = &f->q[i];
		bool defer, counts;
		proc_node_t *node;

		if (e->applied)
			continue;	/* by feed_node_gone() */
		/* before the first listing nothing is known yet, so nothing waits */
		node = apply_one(vmon, f, e, f->listed && !e->waited, &defer, &counts);
		if (defer) {
			e->waited = true;
			deferred = true;
			continue;
		}
		e->applied = true;
		if (counts)
			feed_hold(vmon, f, &e->ev, node);
	}
	if (deferred) {
		keep_deferred(f);
	} else {
		if (oversized(f->q_cap, FEED_QUEUE_FIRST, f->q_nr)) {
			free(f->q);
			f->q = NULL;
			f->q_cap = 0;
		}
		arena_fit(&f->arena, f->arena.len);
		f->q_nr = 0;
		f->arena.len = 0;
		f->q_deferred = false;
	}
	f->applying = false;
	cpu_add(f, cpu);
}

/*
 * A process found gone whose exit the kernel's events did not bring, in a
 * pass that repairs a loss (or after one found since): its exit was among
 * the events lost.  The listeners and the stream hear of it all the same,
 * as an exit with what the tree knew (VMON_EVENT_FOUND_GONE: no status,
 * the time it was found), so that a caller that heard its fork or exec is
 * not left with a process that never ended.  Without a loss the exit of a
 * process found gone is in the kernel's buffer: feed_node_gone() read it.
 * Only a node the caller knew (confirmed).  The stream hears of it only
 * when the kernel lost events: a stream's unsampled queue that was dropped
 * (drain_for_stream()) had been streamed whole, real exits and all.
 */
static void exit_found(vmon_t *vmon, feed_t *f, proc_node_t *node, bool to_stream)
{
	vmon_event_t ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = VMON_EVENT_EXIT;
	ev.has = VMON_EVENT_FOUND_GONE;
	ev.time_ns = vclock_ns(CLOCK_BOOTTIME);
	ev.pid = ev.tid = node->pub.pid;
	complete_event(&ev, &node->pub);
	/* (not exit_seen: the time is when it was found, not when it ended, which ended.c's matching would take) */
	if (f->stream && to_stream) {
		stream_complete(f->stream, &ev);
		stream_put(f->stream, &ev);
	}
	feed_hold(vmon, f, &ev, node);
}

/*
 * The sample found a process gone (or about to make it stale for another
 * reason) that has no exit data yet: it may have execed and exited since
 * the pass began, after the drain.  Read the kernel again and give it its
 * own exec and exit now, before it turns stale; the other events wait for
 * the next pass as usual (they are skipped there, being applied).
 */
void feed_node_gone(vmon_t *vmon, proc_node_t *node)
{
	feed_t *f = vmon->internal->feed;
	vmon_proc_stat_t *s = node->pub.stores[VMON_STORE_PROC_STAT];
	unsigned long long cpu;

	/*
	 * A life the feed alone saw: no stat read completed, and none will.
	 * The pid's present bit was left to that first read (fill_identity());
	 * the pid is the events' all the same, and its last data says so.
	 */
	if (node->life.fed && s && !BITTEST(s->present, VMON_PROC_STAT_PID))
		proc_stat_keep_pid(s);
	if (!f || !f->backend || f->applying || node->pub.has_exit_status)
		return;
	if (node->life.confirmed) {
		feed_drain(vmon, f);
		cpu = cpu_mark();
		f->applying = true;
		note_thread_exits(f);
		for (size_t i = 0; i < f->q_nr; i++) {
			feed_event_t *e = &f->q[i];
			bool defer, counts;
			proc_node_t *n;

			if (e->applied || e->ev.pid != node->pub.pid)
				continue;
			if (e->ev.kind == VMON_EVENT_FORK)
				break;	/* the pid's next process: what follows is its */
			if (!event_matches(f, node, &e->ev))
				continue;
			n = apply_one(vmon, f, e, false, &defer, &counts);
			e->applied = true;
			if (counts)
				feed_hold(vmon, f, &e->ev, n);
		}
		f->applying = false;
		cpu_add(f, cpu);
	}
	if (!node->life.exit_seen && node->life.confirmed && (f->pass_after_loss || f->loss))
		exit_found(vmon, f, node, f->pass_after_kernel_loss || f->kernel_loss);
}

bool feed_wants_listing(vmon_t *vmon)
{
	feed_t *f = vmon->internal->feed;

	return !f || !f->backend || !f->listed || f->loss ||
	       vmon->internal->now - f->last_listing >= VMON_FEED_RECONCILE_SECS;
}

void feed_listed(vmon_t *vmon)
{
	feed_t *f = vmon->internal->feed;

	if (!f)
		return;
	if (f->backend && f->listed)
		f->stats.reconciles++;
	f->listed = true;
	f->pass_after_loss = f->loss;
	f->pass_after_kernel_loss = f->kernel_loss;
	f->loss = f->kernel_loss = false;
	f->last_listing = vmon->internal->now;
}

/* --- the public API --- */

int vmon_feed_get_stats(const vmon_t *vmon, vmon_feed_stats_t *stats)
{
	const feed_t *f;

	if (!vmon || !vmon->internal || !vmon->internal->feed || !stats) {
		errno = EINVAL;
		return -1;
	}
	f = vmon->internal->feed;
	*stats = f->stats;
	stats->pending = f->q_nr;
	stats->fds = f->fds;
	if (f->stream)
		stream_stats(f->stream, stats);
	return 0;
}

const char *vmon_feed_reason(const vmon_t *vmon)
{
	if (!vmon || !vmon->internal || !vmon->internal->feed) {
		errno = EINVAL;	/* "" as well: a caller may print it as it is */
		return "";
	}
	return vmon->internal->feed->reason;
}

const char *vmon_feed_backend_name(vmon_feed_backend_t backend)
{
	if ((unsigned)backend >= VMON_FEED_BACKEND_NR) {
		errno = EINVAL;
		return NULL;
	}
	return backend_names[backend];
}

int vmon_feed_fd(const vmon_t *vmon)
{
	const feed_t *f = vmon && vmon->internal ? vmon->internal->feed : NULL;

	if (!vmon || !vmon->internal) {
		errno = EINVAL;
		return -1;
	}
	if (!f || !f->backend) {
		errno = ENOENT;
		return -1;
	}
	return f->backend->fd(f);
}

/* the smaller of two timeouts, -1 being none */
static int timeout_min(int a, int b)
{
	if (a < 0)
		return b;
	return b >= 0 && b < a ? b : a;
}

/*
 * How long the caller may leave the feed unread: until events that the
 * kernel holds without having woken the fd are due (the ebpf ring batches
 * its wakeups), and at most half the time the kernel buffer takes to fill
 * at the rate events came in lately.  -1: no limit (no feed, or nothing is
 * happening).
 */
int vmon_feed_timeout(const vmon_t *vmon)
{
	const feed_t *f = vmon && vmon->internal ? vmon->internal->feed : NULL;
	int ms = -1;
	double left;

	if (!f || !f->backend)
		return -1;
	if (f->backend->due_ms)
		ms = f->backend->due_ms(f);
	if (f->stream)
		ms = timeout_min(ms, stream_due_ms(f->stream, vclock_ns(CLOCK_BOOTTIME)));
	if (f->rate < 1.0)
		return ms;
	left = 0.5 * (double)f->capacity / f->rate - (vclock_secs(CLOCK_MONOTONIC) - f->last_drain);
	if (left <= 0)
		return 0;
	if (left > INT_MAX / 1000)
		return timeout_min(ms, INT_MAX);
	return timeout_min(ms, (int)(left * 1000.0) + 1);
}

int vmon_feed_process(vmon_t *vmon)
{
	feed_t *f = vmon && vmon->internal ? vmon->internal->feed : NULL;

	if (!f) {
		errno = EINVAL;
		return -1;
	}
	return drain_for_stream(vmon, f);
}

int vmon_feed_set_callback(vmon_t *vmon, vmon_event_cb_t cb, void *arg)
{
	feed_t *f = vmon && vmon->internal ? vmon->internal->feed : NULL;

	if (!f) {
		errno = EINVAL;
		return -1;
	}
	if (cb && feed_listen(vmon, call_user, NULL, f, false) < 0)
		return -1;
	if (!cb)
		feed_unlisten(vmon, call_user, f);
	f->cb = cb;
	f->cb_arg = arg;
	return 0;
}

int vmon_feed_stream(vmon_t *vmon, unsigned flags, int window_ms)
{
	feed_t *f = vmon && vmon->internal ? vmon->internal->feed : NULL;
	const unsigned known = VMON_FEED_EVENTS | VMON_FEED_AGGREGATE | VMON_FEED_EXITS;
	stream_t *st = NULL;

	if (!f || (flags & ~known) || window_ms < 0) {
		errno = EINVAL;
		return -1;
	}
	if (flags) {
		st = stream_new(flags, (unsigned long long)(window_ms ? window_ms : VMON_FEED_WINDOW_MS) * 1000000ull);
		if (!st)
			return -1;
	}
	/* what the old stream held goes: a new one starts with the next read */
	stream_free(f->stream);
	f->stream = st;
	return 0;
}

/*
 * A caller of the stream that does not sample leaves the tree's queue to
 * grow: past VMON_FEED_UNSAMPLED_MAX events it is dropped, and the next
 * sample lists /proc instead of applying them (the stream has them all, so
 * they are not counted lost; the drop is an overrun).  Never in a pass: the
 * public drains only.
 */
static int drain_for_stream(vmon_t *vmon, feed_t *f)
{
	int n = feed_drain(vmon, f);

	if (f->stream && f->q_nr > VMON_FEED_UNSAMPLED_MAX && !f->applying) {
		f->q_nr = 0;
		f->arena.len = 0;
		f->q_deferred = false;
		f->loss = true;
		f->stats.overruns++;
	}
	return n;
}

int vmon_feed_next(vmon_t *vmon, vmon_event_t *event)
{
	feed_t *f = vmon && vmon->internal ? vmon->internal->feed : NULL;
	int r;

	if (!f || !event || !f->stream) {
		errno = EINVAL;
		return -1;
	}
	/*
	 * An entry whose window is over is delivered as it is; what its process
	 * did within the window may still be in the kernel's buffer (a reader
	 * that slept until the window's end, a record that woke no one): read
	 * it first, so that it folds in, rather than come after as an event alone.
	 */
	if (f->backend && stream_window_over(f->stream, vclock_ns(CLOCK_BOOTTIME)) && drain_for_stream(vmon, f) < 0)
		return -1;
	r = stream_next(f->stream, event, vclock_ns(CLOCK_BOOTTIME));
	if (r == 0 && f->backend) {
		/* nothing ready: what the kernel holds, then */
		if (drain_for_stream(vmon, f) < 0)
			return -1;
		r = stream_next(f->stream, event, vclock_ns(CLOCK_BOOTTIME));
	}
	return r;
}

int vmon_feed_lookup(vmon_t *vmon, int pid, unsigned long long start, vmon_event_t *event)
{
	feed_t *f = vmon && vmon->internal ? vmon->internal->feed : NULL;

	if (!f || !event || pid <= 0 || !f->stream) {
		errno = EINVAL;
		return -1;
	}
	/* an exit the kernel holds is news too */
	if (f->backend && drain_for_stream(vmon, f) < 0)
		return -1;
	return stream_lookup(f->stream, pid, start, event, vclock_ns(CLOCK_BOOTTIME));
}
