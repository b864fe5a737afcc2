/*
 * ended.c: the processes that ended lately, by identity (pid, start time).
 *
 * A node leaves the pid index when its process ends, but the kernel's word
 * about that process can come later: a fork event still unread when a
 * listing (or the task iterator's records) found the process and its first
 * read found it gone, or an event that waited a pass for its parent.  Looked
 * up by pid alone, such an event would find nothing and make a second node
 * for a process already reported, which would be stale a second time.  So
 * every process that ends is remembered here for ENDED_PASSES passes: an
 * event that names it goes to its node while the node is still in the tree
 * (new and gone, or stale), and is old news after that.
 *
 * Entries live in a ring in the order they ended, each with a sequence
 * number; the pid index maps a pid to its latest entry, and each entry to
 * the one before with the same pid (a pid can end several times in a few
 * passes).  An entry whose slot was taken again is simply no longer found.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/internal.h"

/* how many passes an ended process is remembered: an event may come a pass late, then wait one */
#define ENDED_PASSES	4
/* entries at most, however many processes end in that time (the oldest go first) */
#define ENDED_MAX	(1u << 20)

struct ended_table {
	ended_t			*ring;
	size_t			mask;		/* capacity - 1 */
	unsigned long long	first, next;	/* the sequence numbers held: [first, next) */
	pidmap_t		latest;		/* pid -> seq + 1 of its latest entry */
};

int ended_init(vmon_t *vmon)
{
	struct ended_table *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	if (pidmap_init(&t->latest) < 0) {
		free(t);
		return -1;
	}
	vmon->internal->ended = t;
	return 0;
}

void ended_fini(vmon_t *vmon)
{
	struct ended_table *t = vmon->internal->ended;

	if (!t)
		return;
	pidmap_fini(&t->latest);
	free(t->ring);
	free(t);
	vmon->internal->ended = NULL;
}

static ended_t *entry(struct ended_table *t, unsigned long long seq)
{
	if (seq < t->first || seq >= t->next)
		return NULL;
	return &t->ring[seq & t->mask];
}

/* the oldest entry goes; the pid index forgets it if it was its pid's latest */
static void drop_first(struct ended_table *t)
{
	ended_t *e = &t->ring[t->first & t->mask];

	if (e->node)
		e->node->life.ended_seq = 0;
	if ((uintptr_t)pidmap_get(&t->latest, e->pid) == e->seq + 1)
		pidmap_del(&t->latest, e->pid, (void *)(uintptr_t)(e->seq + 1));
	t->first++;
}

#define ENDED_FIRST	256	/* entries */

/* the ring with room for cap entries (a power of two), the entries held kept */
static int resize(struct ended_table *t, size_t cap)
{
	ended_t *ring = malloc(sizeof(*ring) * cap);

	if (!ring)
		return -1;
	for (unsigned long long s = t->first; s < t->next; s++)
		ring[s & (cap - 1)] = t->ring[s & t->mask];
	free(t->ring);
	t->ring = ring;
	t->mask = cap - 1;
	return 0;
}

/*
 * The node's process ended (it left the index for good): remember it.  A
 * node whose start time was never read cannot be named by an event's and
 * is not kept.  Out of memory, the oldest entry makes room, or none is kept:
 * what is lost is the chance to recognise a late event.
 */
void ended_add(vmon_t *vmon, proc_node_t *node)
{
	struct ended_table *t = vmon->internal->ended;
	uintptr_t latest;
	ended_t *e;

	if (!t || !node->identified || node->pub.is_thread || node->life.ended_seq)
		return;
	if (t->next - t->first > t->mask || !t->ring) {
		if ((t->ring && t->next - t->first >= ENDED_MAX) ||
		    resize(t, t->ring ? (t->mask + 1) * 2 : ENDED_FIRST) < 0) {
			if (!t->ring)
				return;
			drop_first(t);
		}
	}
	latest = (uintptr_t)pidmap_get(&t->latest, node->pub.pid);
	if (pidmap_put(&t->latest, node->pub.pid, (void *)(uintptr_t)(t->next + 1)) < 0)
		return;
	e = &t->ring[t->next & t->mask];
	e->pid = node->pub.pid;
	e->start = node->start;
	e->start_approx = node->start_approx;
	e->exit_ns = node->life.exit_seen ? node->life.exit_ns : 0;
	e->pass = vmon->generation;
	e->seq = t->next;
	e->prev = latest;
	e->node = node;
	node->life.ended_seq = t->next + 1;
	t->next++;
}

/* the node leaves the tree: an event about its process finds no node now */
void ended_drop_node(vmon_t *vmon, proc_node_t *node)
{
	struct ended_table *t = vmon->internal->ended;
	ended_t *e;

	if (!t || !node->life.ended_seq)
		return;
	e = entry(t, node->life.ended_seq - 1);
	if (e && e->node == node)
		e->node = NULL;
	node->life.ended_seq = 0;
}

/* the feed saw the ended node's exit after it ended: a fork after that is another process's */
void ended_exit(vmon_t *vmon, proc_node_t *node)
{
	struct _vmon_internal *in = vmon->internal;
	ended_t *e = in->ended && node->life.ended_seq ? entry(in->ended, node->life.ended_seq - 1) : NULL;

	if (e && e->node == node)
		e->exit_ns = node->life.exit_ns;
}

/* the start of a pass: what ended ENDED_PASSES passes ago is forgotten */
void ended_expire(vmon_t *vmon)
{
	struct ended_table *t = vmon->internal->ended;

	size_t held, cap = ENDED_FIRST;

	while (t && t->first < t->next && t->ring[t->first & t->mask].pass + ENDED_PASSES < vmon->generation)
		drop_first(t);
	if (!t || !t->ring)
		return;
	/* a storm's ring and index made small again once it is over (a failure keeps them as they are) */
	held = (size_t)(t->next - t->first);
	while (cap < held * 2)
		cap *= 2;
	if (held * 8 < t->mask + 1 && cap < t->mask + 1)
		resize(t, cap);
	pidmap_fit(&t->latest);
}

static bool start_matches(const ended_t *e, const vmon_event_t *ev, unsigned long long tick_ns)
{
	unsigned long long start;
	bool approx = e->start_approx;

	if (ev->has & (VMON_EVENT_HAS_START | VMON_EVENT_HAS_START_APPROX)) {
		start = ev->start;
		approx |= !(ev->has & VMON_EVENT_HAS_START);
	} else {
		/* no start time: an event cannot come before the process began */
		return ev->time_ns / tick_ns + 1 >= e->start;
	}
	if (start == e->start)
		return true;
	return approx && start + 1 >= e->start && start <= e->start + 1;
}

ended_t *ended_find(vmon_t *vmon, const vmon_event_t *ev, unsigned long long tick_ns)
{
	struct ended_table *t = vmon->internal->ended;
	unsigned long long s;
	ended_t *e;

	if (!t || !t->ring)
		return NULL;
	for (s = (uintptr_t)pidmap_get(&t->latest, ev->pid); s && (e = entry(t, s - 1)); s = e->prev) {
		if (e->pid != ev->pid || !start_matches(e, ev, tick_ns))
			continue;
		/*
		 * After its exit, the same pid and start tick is another process
		 * (three lives of one pid within a tick): a fork then is its own.
		 */
		if (e->exit_ns && ev->time_ns > e->exit_ns)
			continue;
		return e;
	}
	return NULL;
}
