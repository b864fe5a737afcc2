/*
 * feed.h: what the event feed (feed.c) and its backends (feed_bpf.c,
 * feed_perf.c, feed_netlink.c) share; nothing else includes it.
 *
 * A backend turns what the kernel says into feed events and nothing more:
 * open() sets it up or says in one line why it cannot, drain() reads what
 * the kernel has queued and hands each event to feed_push(), in the order
 * in which they happened (a backend that reads several buffers merges them
 * by time), and reports what the kernel could not deliver with feed_lost().
 * Everything else (the order between a parent and its child, identity,
 * what an event does to the tree) is feed.c's, the same for every backend.
 */
#ifndef VMON_FEED_H
#define VMON_FEED_H

#include "core/internal.h"

typedef struct feed feed_t;

/* the ebpf ring wakes its reader at most once in this many milliseconds, but for a filling ring */
#define FEED_WAKEUP_INTERVAL_MS	5

/* a pending event: the public one, with its strings in feed->arena until it is applied */
typedef struct feed_event {
	vmon_event_t	ev;		/* filename and args are set when it is applied */
	size_t		filename_off;	/* in feed->arena */
	size_t		filename_len;
	size_t		args_off;
	bool		has_data;	/* filename and args are in the arena */
	size_t		seq;		/* its place in the queue, for a stable sort by time */
	bool		check_alive;	/* an exit that may be a thread's: is the process gone? (netlink) */
	bool		waited;		/* it waited for a pass already (see feed.c) */
	bool		applied;
} feed_event_t;

typedef struct feed_backend {
	const char		*name;		/* as VMON_FEED spells it */
	vmon_feed_backend_t	id;
	/*
	 * Set up (*buffer_bytes: the kernel buffer asked for, 0 for the
	 * backend's default), or write why not into why and return -1.  On
	 * success *buffer_bytes is the size the kernel buffer has, and
	 * *capacity roughly how many events it holds.
	 */
	int	(*open)(vmon_t *vmon, feed_t *feed, size_t *buffer_bytes, size_t *capacity, char *why, size_t why_size);
	/* read what the kernel has: events pushed, or -1 with errno */
	int	(*drain)(vmon_t *vmon, feed_t *feed);
	/* the fd that becomes readable when the kernel holds events */
	int	(*fd)(const feed_t *feed);
	/*
	 * Milliseconds until events the kernel holds without having made the
	 * fd readable must be read, -1: none; NULL for a backend that wakes
	 * the fd for every event.
	 */
	int	(*due_ms)(const feed_t *feed);
	/*
	 * Is the kernel buffer filling, so that it must be read before the
	 * pass ends (feed_keep_up())?  Asked every few dozen nodes of a pass:
	 * a look at the buffer, never a system call.  NULL for a backend that
	 * cannot tell so cheaply.
	 */
	bool	(*behind)(const feed_t *feed);
	void	(*close)(feed_t *feed);
} feed_backend_t;

extern const feed_backend_t feed_bpf_backend;
extern const feed_backend_t feed_perf_backend;
extern const feed_backend_t feed_netlink_backend;

/* the backend's own state */
void *feed_priv(const feed_t *feed);
void feed_set_priv(feed_t *feed, void *priv);

/*
 * A new event at the end of the queue, zeroed but for its kind; NULL when
 * the queue is full (the event is counted lost) or out of memory.
 */
feed_event_t *feed_push(feed_t *feed, vmon_event_kind_t kind);
/* attach an exec's filename and arguments to the event just pushed */
int feed_push_exec_data(feed_t *feed, feed_event_t *e, const char *filename, size_t filename_len,
			const char *args, size_t args_len);
/* the kernel dropped n events (n == 0: some, how many unknown) */
void feed_lost(feed_t *feed, unsigned long long n);
/* the kernel buffer is now bytes, holding capacity events roughly (a backend that sizes it by need) */
void feed_buffer_resized(feed_t *feed, size_t bytes, size_t capacity);

/* nanoseconds of CLOCK_BOOTTIME to clock ticks, as /proc/PID/stat's start time */
unsigned long long feed_ns_to_ticks(const feed_t *feed, unsigned long long ns);
/* what /proc/PID/stat says, read at once (no node, no budget) */
typedef struct feed_stat {
	char			state;
	char			comm[16];
	int			ppid;
	int			num_threads;
	unsigned long long	start;		/* clock ticks */
} feed_stat_t;

int feed_read_stat(vmon_t *vmon, int pid, feed_stat_t *st);
/*
 * An exec event that carries no name or arguments: read them (comm, start,
 * ppid; cmdline up to VMON_EVENT_ARGS_MAX bytes) from /proc at once, while
 * the new program most likely still runs, as forkstat does.  The event gets
 * filename (if not NULL) and the arguments found as its exec data.
 */
void feed_read_exec(vmon_t *vmon, feed_t *feed, feed_event_t *e, const char *filename, size_t filename_len);
/*
 * What to add to a CLOCK_MONOTONIC time to make it CLOCK_BOOTTIME (the time
 * spent suspended), to within a few microseconds either way: on a machine
 * never suspended it can be a little "negative", a value that wraps, which
 * adding it to a time unwraps (it is only ever added).
 */
unsigned long long feed_boottime_offset_ns(void);

#endif
