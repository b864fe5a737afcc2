/*
 * log_replay.c: a vmon_t fed from a log's samples instead of /proc
 * (vmon_log_replay(3)): a source (source.h) that samples nothing.
 *
 * Each vmon_log_replay() is one pass, with the lifecycle of a live one: the
 * nodes stale in the last pass leave (dtor, free), those the sample lists
 * are updated, found by the id the reader gives each node's entries (or,
 * for an entry the writer started afresh, by its pid and start time:
 * claim_by_identity()), those it lists for the first time are made (ctor),
 * those it marks stale become stale, and those it no longer lists leave.
 * Then every list of the tree is put in the sample's order, so a walk of
 * the replayed tree meets the nodes in the order the recorded tree had
 * them.  A program that draws a live vmon_t (vtop's snapshot builder, a
 * window manager's charts) draws a replay with the same code.
 *
 * Events come the same way: the feed's callback (vmon_feed_set_callback()
 * on the replay) gets each event of the log, with the node it concerns.  A
 * live pass applies its events first and the log has them before its
 * sample, so the replay holds each event it is given until the next sample
 * has made the nodes (a fork's new process among them), then delivers
 * them in their order.  Drop notices count as the feed's lost events.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "log/log.h"

/* events held for the next sample; past these, one more is counted lost (the log is not a live feed's) */
#define REPLAY_EVENTS_MAX	(1u << 20)

struct replay {
	/* the last sample's nodes by id, and the one being made; not the stale, which leave with their pass */
	vhash_t		map, next;
	vhash_t		lives;		/* claim_by_identity()'s: the last sample's nodes no id named, by pid */
	proc_node_t	**nodes;	/* of the sample's entries */
	size_t		nodes_cap;
	struct held {
		vmon_event_t	ev;	/* its texts its own */
		int		node;	/* the record's event_node */
	} *events;			/* held for the next sample */
	size_t		events_nr, events_cap;
	bool		shared_pids;	/* this sample has two entries of one pid (check()): index_live_nodes() */
};

static void events_clear(struct replay *r)
{
	for (size_t i = 0; i < r->events_nr; i++) {
		free((char *)r->events[i].ev.filename);
		free((char *)r->events[i].ev.args);
	}
	r->events_nr = 0;
}

static void replay_free(struct replay *r)
{
	if (!r)
		return;
	events_clear(r);
	free(r->events);
	vhash_fini(&r->map);
	vhash_fini(&r->next);
	vhash_fini(&r->lives);
	free(r->nodes);
	free(r);
}

/* room for n entries: the map being made (emptied), the node array */
static int reserve(struct replay *r, size_t n)
{
	vhash_clear(&r->next);
	if (vhash_reserve(&r->next, n) < 0)
		return -1;
	if (n > r->nodes_cap) {
		proc_node_t **nodes = realloc(r->nodes, sizeof(*nodes) * n);

		if (!nodes)
			return -1;
		r->nodes = nodes;
		r->nodes_cap = n;
	}
	return 0;
}

static void replay_close(vmon_t *vmon)
{
	struct replay *r = vmon->internal->replay;

	if (!r)
		return;
	/*
	 * A node that lost the pid index to another of its pid (index_live_nodes())
	 * is on no list that vmon_destroy() empties, and not stale yet: it goes here.
	 */
	size_t pos;

	vhash_for_each(&r->map, pos) {
		proc_node_t *node = vhash_val_at(&r->map, pos);

		if (node->life.left) {
			node->life.monitors = 0;
			node_forget(vmon, node);
			vhash_remove_at(&r->map, pos);
		}
	}
	replay_free(r);
	vmon->internal->replay = NULL;
}

/* a log's replay as the instance's source: it samples nothing, vmon_log_replay() feeds the tree */
const source_ops_t replay_source = {
	.sampler	= VMON_SAMPLER_PROC,	/* what vmon_get_sampler() said of a replay before there were sources */
	.caps		= SOURCE_NOT_LIVE,
	.note		= "a replay of a log (vmon_log_replay_init()): nothing is sampled",
	.close		= replay_close,
};

int vmon_log_replay_init(vmon_t *vmon, const vmon_log_header_t *header, vmon_flags_t flags)
{
	vmon_attr_t attr;
	int err;

	if (!vmon || !header || (flags & ~(VMON_FLAG_PROC_ARRAY | VMON_FLAG_PROC_ALL | VMON_FLAG_2PASS))) {
		errno = EINVAL;
		return -1;
	}
	vmon_attr_default(&attr);
	attr.flags = flags | (header->flags & VMON_FLAG_PROC_ALL);
	attr.sys_wants = header->sys_wants;
	/* what this library cannot sample it cannot have recorded either */
	attr.proc_wants = header->proc_wants & ~VMON_WANT_PROC_FILES;
	/* a feed without a backend: its callback and counters, for the log's events */
	attr.feed = "none";
	if (instance_init(vmon, &attr) < 0 || feed_open(vmon, &attr) < 0)
		goto fail;
	vmon->ticks_per_sec = header->ticks_per_sec;
	vmon->num_cpus = header->num_cpus;
	vmon->internal->page_size = header->page_size;
	vmon->internal->replay = calloc(1, sizeof(*vmon->internal->replay));
	if (!vmon->internal->replay)
		goto fail;
	source_set(vmon, &replay_source);
	return 0;
fail:
	err = errno ? errno : ENOMEM;
	if (vmon->internal)
		vmon_destroy(vmon);
	errno = err;
	return -1;
}

/* the system stores: copies of the sample's */
static int replay_sys(vmon_t *vmon, const vmon_log_sample_t *s)
{
	for (int id = 0; id < VMON_STORE_SYS_NR; id++) {
		vmon->sys_errors[id] = s->sys_errors[id];
		if (!s->sys_stores[id]) {
			log_store_free(LOG_SYS, id, vmon->stores[id]);
			vmon->stores[id] = NULL;
			continue;
		}
		if (!vmon->stores[id] && !(vmon->stores[id] = log_store_new(LOG_SYS, id)))
			return -1;
		if (log_store_copy(LOG_SYS, id, vmon->stores[id], s->sys_stores[id]) < 0)
			return -1;
		if (id == VMON_STORE_SYS_VM)
			sys_vm_names_of_old(vmon->stores[id]);
	}
	vmon->activity = s->sys_activity;
	return 0;
}

/* is the entry's id the node of the last pass that it names?  an id names one pid, process or thread, for good */
static bool same_node(const proc_node_t *node, const vmon_log_proc_t *p)
{
	return node->pub.pid == p->pid && !node->pub.is_thread == !(p->flags & VMON_LOG_PROC_THREAD);
}

/*
 * A sample the tree cannot take: an entry under one that comes after it,
 * an id of 0, two entries with one id, an id that named another live pid
 * (or a thread for a process) in the last pass.  The reader lets through
 * only what a writer could write, but a replay must not trust its caller
 * more than the reader.  r->next, which reserve() cleared, holds the ids
 * seen meanwhile, and is cleared again.
 *
 * Two entries of one pid, stale or not, are a writer's too: a process
 * that ended is in the tree until it has been new in one sample and stale
 * in the next, and a busy machine (pid_max is often 32768) can give its
 * pid to another process meanwhile.  r->shared_pids says so, or that a
 * node lost the index to another of its pid in an earlier sample, for
 * index_live_nodes().
 */
static int check(struct replay *r, const vmon_log_sample_t *s)
{
	pidmap_t seen[2];
	int ret = 0;

	if (pidmap_init(&seen[0]) < 0 || pidmap_init(&seen[1]) < 0) {
		pidmap_fini(&seen[0]);
		return -1;
	}
	r->shared_pids = false;
	for (int i = 0; i < s->procs_nr && !ret; i++) {
		const vmon_log_proc_t *p = &s->procs[i];
		bool thread = p->flags & VMON_LOG_PROC_THREAD;
		const proc_node_t *last = p->id ? vhash_get(&r->map, p->id) : NULL;

		/* (new and stale at once: a node is never stale in its new sample, vmon(3)) */
		if (p->pid <= 0 || p->parent >= i || (thread && p->parent < 0) ||
		    (p->flags & (VMON_LOG_PROC_NEW | VMON_LOG_PROC_STALE)) == (VMON_LOG_PROC_NEW | VMON_LOG_PROC_STALE) ||
		    (p->parent >= 0 && (s->procs[p->parent].flags & VMON_LOG_PROC_THREAD)) ||
		    !p->id || vhash_find(&r->next, p->id) != VHASH_END || (last && !same_node(last, p))) {
			ret = -1;
			errno = EINVAL;
			break;
		}
		if (vhash_add(&r->next, p->id, NULL) < 0) {
			ret = -1;
			break;
		}
		/*
		 * Stale entries count too.  A node made for one (an entry under
		 * a new id that no node of the last sample claims by its pid
		 * and start: claim_by_identity()) takes the pid index from a
		 * live node of its pid, and gives it back to nobody when it
		 * goes stale: that node was in no index and on no list
		 * vmon_destroy() empties (a leak the fuzzer found:
		 * tests/fuzz/crashes/).  And a node that lost the index in an
		 * earlier sample may be the only one of its pid now.
		 */
		if (pidmap_get(&seen[thread], p->pid) || (last && last->life.left))
			r->shared_pids = true;
		else if (pidmap_put(&seen[thread], p->pid, (void *)p) < 0)
			ret = -1;
	}
	vhash_clear(&r->next);
	pidmap_fini(&seen[0]);
	pidmap_fini(&seen[1]);
	return ret;
}

/*
 * Where a pid has two nodes in this sample, the pid index names the one
 * still running, as the live tree's does, not whichever entry came last;
 * the other has left the index (life.left), as an ended process leaves it
 * live, and one named again is no longer left: a node left is freed by
 * replay_close() or by the sample that no longer lists it, as one out of
 * the index.  0, or -1 (ENOMEM) when a node could not be named: it is left.
 */
static int index_live_nodes(vmon_t *vmon, struct replay *r, const vmon_log_sample_t *s)
{
	struct _vmon_internal *in = vmon->internal;
	int ret = 0;

	if (!r->shared_pids)
		return 0;
	for (int i = 0; i < s->procs_nr; i++) {
		proc_node_t *node = r->nodes[i];
		const vmon_proc_stat_t *st = node ? node->pub.stores[VMON_STORE_PROC_STAT] : NULL;

		if (!node || (s->procs[i].flags & VMON_LOG_PROC_STALE) ||
		    (st && BITTEST(st->present, VMON_PROC_STAT_STATE) && st->state == 'X'))
			continue;
		/* (should it fail for want of memory, the loop below takes the node as left) */
		if (pidmap_put(node->pub.is_thread ? &in->threads : &in->procs, node->pub.pid, node) < 0)
			ret = -1;
	}
	for (int i = 0; i < s->procs_nr; i++) {
		proc_node_t *node = r->nodes[i];

		if (node && !node->pub.is_stale)
			node->life.left = pidmap_get(node->pub.is_thread ? &in->threads : &in->procs,
						     node->pub.pid) != node;
	}
	if (ret < 0)
		errno = ENOMEM;
	return ret;
}

/* a node's key among the last sample's by pid: a process and a thread of one pid apart */
static uint64_t life_key(int pid, bool thread)
{
	return (uint64_t)(unsigned)pid << 1 | thread;
}

/* the start time (clock ticks after boot) an entry's stat store gives, or -1 */
static long long entry_start(const vmon_log_proc_t *p)
{
	const vmon_proc_stat_t *st = p->stores[VMON_STORE_PROC_STAT];

	if (!st || !BITTEST(st->present, VMON_PROC_STAT_START) || st->start > LLONG_MAX)
		return -1;
	return (long long)st->start;
}

/*
 * An entry the writer started afresh that is not new is a node of the last
 * sample under another id: at a keyframe (every entry fresh), or the older
 * of two lives of one pid (the writer's base of that pid is the newer
 * life's, vmon_log(5), so the older one's later entries are fresh).  Its node
 * is the last sample's of the same pid, thread or not (a thread of the
 * same process) and start time that no id named, when only one has them:
 * found so, it stays the node it was, with what the caller keeps on it
 * (vtop's exited row, shown once; made anew, it was shown exited again for
 * a replay that the live run never showed).  Its stores all count as
 * changed in that pass (the entry is whole).  -1 (ENOMEM) when the index
 * could not be made: those entries' nodes are made anew.
 *
 * (The writer also starts afresh a node whose start it has corrected, an
 * event's approximate one read from /proc: made anew, as before.)
 */
static int claim_by_identity(vmon_t *vmon, struct replay *r, const vmon_log_sample_t *s)
{
	bool any = false;
	size_t pos;

	for (int i = 0; i < s->procs_nr && !any; i++)
		any = !r->nodes[i] && !(s->procs[i].flags & VMON_LOG_PROC_NEW) && entry_start(&s->procs[i]) >= 0;
	if (!any)
		return 0;
	vhash_clear(&r->lives);
	vhash_for_each(&r->map, pos) {
		proc_node_t *node = vhash_val_at(&r->map, pos);

		if (node->pass.seen != vmon->generation && node->pub.stores[VMON_STORE_PROC_STAT] &&
		    vhash_add(&r->lives, life_key(node->pub.pid, node->pub.is_thread), node) < 0)
			return -1;
	}
	for (int i = 0; i < s->procs_nr; i++) {
		const vmon_log_proc_t *p = &s->procs[i];
		bool thread = p->flags & VMON_LOG_PROC_THREAD;
		uint64_t key = life_key(p->pid, thread);
		size_t found = VHASH_END;
		proc_node_t *node;
		long long start;

		if (r->nodes[i] || (p->flags & VMON_LOG_PROC_NEW) || (start = entry_start(p)) < 0)
			continue;
		for (pos = vhash_find(&r->lives, key); pos != VHASH_END; pos = vhash_find_next(&r->lives, key, pos)) {
			const proc_node_t *life = vhash_val_at(&r->lives, pos);

			if (life->start != (unsigned long long)start || (thread && life->tgid != s->procs[p->parent].pid))
				continue;
			/* two lives that began in the same tick are not told apart: both made anew, as before */
			if (found != VHASH_END) {
				found = VHASH_END;
				break;
			}
			found = pos;
		}
		if (found == VHASH_END)
			continue;
		node = vhash_val_at(&r->lives, found);
		vhash_remove_at(&r->lives, found);
		node->pass.seen = vmon->generation;
		r->nodes[i] = node;
		/* (one out of the pid index since an earlier sample: index_live_nodes() names it again) */
		if (node->life.left)
			r->shared_pids = true;
	}
	return 0;
}

static int replay_stores(vmon_t *vmon, proc_node_t *node, const vmon_log_proc_t *p, bool made)
{
	vmon_proc_t *proc = &node->pub;

	for (int id = 0; id < VMON_STORE_PROC_NR; id++) {
		bool fresh = made || !proc->stores[id];

		proc_error_set(proc, id, p->errors[id]);
		if (!p->stores[id]) {
			log_store_free(LOG_PROC, id, proc->stores[id]);
			proc->stores[id] = NULL;
			continue;
		}
		if (!node_store(vmon, node, id))
			return -1;
		if (fresh || (p->activity & (1L << id))) {
			if (log_store_copy(LOG_PROC, id, proc->stores[id], p->stores[id]) < 0)
				return -1;
		} else {
			/* a store that did not change is as it was, and none of its fields changed in this sample */
			char *changed = log_store_changed(LOG_PROC, id, proc->stores[id]);

			if (changed)
				memset(changed, 0, (size_t)BITNSLOTS(vmon_proc_store_descs[id].fields_nr));
		}
	}
	proc->wants = p->wants;
	proc->activity = p->activity;
	if (proc->stores[VMON_STORE_PROC_STAT])
		node->start = ((vmon_proc_stat_t *)proc->stores[VMON_STORE_PROC_STAT])->start;
	return 0;
}

static void mark_changed(vmon_t *vmon, vmon_proc_t *parent, bool thread)
{
	if (!parent)
		vmon->processes_changed = 1;
	else if (thread)
		parent->threads_changed = 1;
	else
		parent->children_changed = 1;
}

/*
 * The node an event concerns, for an event the live feed handed with one
 * (or of a log that does not say): the process with the event's pid, live
 * or gone in this sample; when both (a pid reused), the one the event's
 * start time names, else the gone one for an exit and the live one for the
 * rest.  NULL: not in the tree.  (An event the feed applied before a
 * listing found its process, in a first pass say, had none live, and the
 * log says so.)
 */
static proc_node_t *event_node(vmon_t *vmon, const vmon_event_t *ev)
{
	struct _vmon_internal *in = vmon->internal;
	proc_node_t *live = pidmap_get(&in->procs, ev->pid), *gone = NULL, *node;
	bool has_start = ev->has & (VMON_EVENT_HAS_START | VMON_EVENT_HAS_START_APPROX);

	list_for_each_entry(node, &in->stale, life.stale_link) {
		if (node->pub.pid == ev->pid && !node->pub.is_thread &&
		    (!gone || (has_start && node->start + 1 >= ev->start && node->start <= ev->start + 1)))
			gone = node;
	}
	if (!live || !gone)
		return live ? live : gone;
	if (has_start && live->start + 1 >= ev->start && live->start <= ev->start + 1)
		return live;
	if (has_start && gone->start + 1 >= ev->start && gone->start <= ev->start + 1)
		return gone;
	return ev->kind == VMON_EVENT_EXIT ? gone : live;
}

static char *dup_bytes(const char *p, size_t len)
{
	char *copy = malloc(len + 1);

	if (copy) {
		memcpy(copy, p, len);
		copy[len] = '\0';
	}
	return copy;
}

/* an event of the log, held (texts and all) for the next sample */
static int hold_event(vmon_t *vmon, struct replay *r, const vmon_event_t *ev, int node)
{
	vmon_event_t *e;

	if ((unsigned)ev->kind >= VMON_EVENT_KIND_NR) {
		errno = EINVAL;
		return -1;
	}
	if (r->events_nr >= REPLAY_EVENTS_MAX) {
		feed_count_lost(vmon, 1);
		return 0;
	}
	if (r->events_nr == r->events_cap) {
		size_t cap = r->events_cap ? r->events_cap * 2 : 64;
		struct held *v = realloc(r->events, cap * sizeof(*v));

		if (!v)
			return -1;
		r->events = v;
		r->events_cap = cap;
	}
	r->events[r->events_nr].node = node;
	e = &r->events[r->events_nr].ev;
	*e = *ev;
	e->filename = NULL;
	e->args = NULL;
	if ((ev->filename && !(e->filename = dup_bytes(ev->filename, strlen(ev->filename)))) ||
	    (ev->args && !(e->args = dup_bytes(ev->args, ev->args_len)))) {
		free((char *)e->filename);
		errno = ENOMEM;
		return -1;
	}
	if (!e->args)
		e->args_len = 0;
	r->events_nr++;
	return 0;
}

int vmon_log_replay_record(vmon_t *vmon, const vmon_log_record_t *rec)
{
	struct _vmon_internal *in = vmon ? vmon->internal : NULL;

	if (!in || !in->replay || !rec || in->in_sample) {
		errno = EINVAL;
		return -1;
	}
	switch (rec->type) {
	case VMON_LOG_SAMPLE:
		return vmon_log_replay(vmon, rec->u.sample);
	case VMON_LOG_EVENT:
		return hold_event(vmon, in->replay, &rec->u.event, rec->event_node);
	case VMON_LOG_DROP:
		feed_count_lost(vmon, rec->u.lost);
		return 0;
	default:
		return 0;
	}
}

int vmon_log_replay(vmon_t *vmon, const vmon_log_sample_t *s)
{
	struct _vmon_internal *in = vmon ? vmon->internal : NULL;
	struct replay *r = in ? in->replay : NULL;
	vhash_t swap;
	size_t pos;
	int n, err = 0;

	if (!r || !s || s->procs_nr < 0 || (s->procs_nr && !s->procs) || in->in_sample) {
		errno = EINVAL;
		return -1;
	}
	n = s->procs_nr;
	if (reserve(r, (size_t)n) < 0 || check(r, s) < 0)
		return -1;
	in->in_sample = 1;
	vmon->generation++;
	in->stats.samples++;

	/* 1. the nodes stale in the last pass leave */
	node_free_stale(vmon);
	vmon->processes_changed = 0;

	/* 2. the system, and the caller's per-sample callback, as a live pass has them */
	if (replay_sys(vmon, s) < 0)
		err = errno ? errno : ENOMEM;
	if (vmon->sample_cb)
		vmon->sample_cb(vmon, vmon->sample_cb_arg);

	/* 3. the entries' nodes that exist; those the sample does not list leave */
	for (int i = 0; i < n; i++) {
		r->nodes[i] = vhash_get(&r->map, s->procs[i].id);
		if (r->nodes[i])
			r->nodes[i]->pass.seen = vmon->generation;
	}
	if (claim_by_identity(vmon, r, s) < 0)
		err = ENOMEM;
	vhash_for_each(&r->map, pos) {
		proc_node_t *node = vhash_val_at(&r->map, pos);

		if (node->pass.seen != vmon->generation) {
			mark_changed(vmon, node->pub.parent, node->pub.is_thread);
			node_forget(vmon, node);
		}
	}
	/* 4. stale before new: a reused pid's old node leaves the index first */
	for (int i = 0; i < n; i++) {
		if (r->nodes[i] && (s->procs[i].flags & VMON_LOG_PROC_STALE))
			node_stale_now(vmon, r->nodes[i]);
	}
	for (int i = 0; i < n; i++) {
		const vmon_log_proc_t *p = &s->procs[i];
		bool thread = p->flags & VMON_LOG_PROC_THREAD;
		proc_node_t *node = r->nodes[i];

		/* a thread whose process could not be made (out of memory) cannot be kept either */
		if (thread && !r->nodes[p->parent]) {
			if (node)
				node_forget(vmon, node);
			r->nodes[i] = NULL;
			continue;
		}
		if (!node) {
			node = node_new(vmon, p->pid, thread ? s->procs[p->parent].pid : p->pid, thread, p->wants);
			if (node) {
				node->pass.seen = vmon->generation;
				node_confirm(vmon, node);
				if (p->flags & VMON_LOG_PROC_STALE)
					node_stale_now(vmon, node);
			}
		}
		r->nodes[i] = node;
		if (!node || replay_stores(vmon, node, p, !node->pub.generation) < 0) {
			err = errno ? errno : ENOMEM;
			if (!node)
				continue;
		}
		node->pub.generation = vmon->generation;
		node->pub.is_new = !!(p->flags & VMON_LOG_PROC_NEW);
		node->pub.children_changed = node->pub.threads_changed = 0;
		/* (reserve() made room for every entry: this cannot fail) */
		if (!(p->flags & VMON_LOG_PROC_STALE))
			(void)vhash_add(&r->next, p->id, node);
	}

	if (index_live_nodes(vmon, r, s) < 0 && !err)
		err = ENOMEM;

	/* 5. the tree: every list in the sample's order (what could not be made out of memory is missing) */
	for (int i = 0; i < n; i++) {
		const vmon_log_proc_t *p = &s->procs[i];
		proc_node_t *node = r->nodes[i];
		vmon_proc_t *proc, *parent;
		bool moved;

		if (!node)
			continue;
		proc = &node->pub;
		parent = p->parent >= 0 && r->nodes[p->parent] ? &r->nodes[p->parent]->pub : NULL;
		moved = proc->parent != parent || proc->is_new || proc->is_stale;
		if (proc->is_thread) {
			list_del_init(&proc->threads);
			list_add_tail(&proc->threads, &parent->threads);
			parent->is_threaded = 1;
		} else {
			list_del_init(&proc->siblings);
			list_add_tail(&proc->siblings, parent ? &parent->children : &vmon->processes);
		}
		if (moved) {
			mark_changed(vmon, proc->parent, proc->is_thread);
			mark_changed(vmon, parent, proc->is_thread);
		}
		proc->parent = parent;
		proc->refcnt = 1;
	}
	swap = r->map;
	r->map = r->next;
	r->next = swap;

	/* 6. the events held, now that the nodes they concern are in the tree */
	for (size_t i = 0; i < r->events_nr; i++) {
		const struct held *h = &r->events[i];

		feed_deliver(vmon, &h->ev, h->node ? event_node(vmon, &h->ev) : NULL);
	}
	events_clear(r);
	in->in_sample = 0;
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}
