/*
 * tree.c: nodes and the tree they form.
 *
 * A node is a process or a thread.  Processes hang from vmon->processes or
 * from their parent's `children`; a process with more than one thread lists
 * every thread (its leader included) on its `threads`.  Every live process
 * is in internal->procs by pid, every live thread in internal->threads by
 * tid; every process in the tree, live or not, is in vmon->htab[] and,
 * with VMON_FLAG_PROC_ARRAY, every node in vmon->array[].  A node leaves
 * the tree, vmon->htab[] and vmon->array[] together, in node_unlink().
 *
 * The lifecycle, the same in every mode.  A node is is_new in the sample
 * that finds it.  When its process ends (node_end()) or leaves the watched
 * subtree (node_mark_stale()), it leaves the index at once and goes on
 * internal->leaving; node_settle() then decides, once the pass has placed
 * everything, when it is is_stale: in this sample, or in the next when it
 * is new in this one or has a new node below it (a client that drops a
 * stale subtree's rows must never meet a row it has not added).  Stale, it
 * is still in the tree where it was, with its last data; in the next
 * sample it leaves the tree, its dtor runs and it is freed.  Two exceptions
 * keep a node for the caller: a monitored top-level process that ends in
 * explicit mode stays where it is, never stale, until the last
 * vmon_proc_unmonitor(); and a stale node still monitored leaves the tree
 * on time but keeps its memory, and its dtor waits, for the last
 * vmon_proc_unmonitor().
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/internal.h"

static list_head_t *siblings_head(vmon_t *vmon, vmon_proc_t *proc)
{
	return proc->parent ? &proc->parent->children : &vmon->processes;
}

/*
 * vmon->array[]'s free slots are kept on a stack with room for every slot,
 * so a node takes and gives back its slot in constant time however many
 * come and go in a pass, and giving one back never allocates.  A node is
 * made only once its slot is sure (array_reserve()): a node missing from
 * the array would be a gap its users never see.
 */
static int array_reserve(vmon_t *vmon)
{
	struct _vmon_internal *in = vmon->internal;
	int grow = vmon->array_allocated_nr / 2, size;
	vmon_proc_t **array;
	int *free_slots;

	if (!(vmon->flags & VMON_FLAG_PROC_ARRAY) || in->array_free_nr > 0)
		return 0;
	if (grow < VMON_ARRAY_GROWBY)
		grow = VMON_ARRAY_GROWBY;
	size = vmon->array_allocated_nr + grow;
	/* the stack first: a larger stack than the array is harmless if the array cannot grow */
	free_slots = realloc(in->array_free, sizeof(*free_slots) * (size_t)size);
	if (!free_slots)
		return -1;
	in->array_free = free_slots;
	array = realloc(vmon->array, sizeof(*array) * (size_t)size);
	if (!array)
		return -1;
	/* pushed highest first, so the lowest slot is taken first */
	for (int i = size - 1; i >= vmon->array_allocated_nr; i--) {
		array[i] = NULL;
		in->array_free[in->array_free_nr++] = i;
	}
	vmon->array = array;
	vmon->array_allocated_nr = size;
	return 0;
}

/* after array_reserve() */
static void array_insert(vmon_t *vmon, vmon_proc_t *proc)
{
	struct _vmon_internal *in = vmon->internal;
	int i;

	if (!(vmon->flags & VMON_FLAG_PROC_ARRAY))
		return;
	i = in->array_free[--in->array_free_nr];
	vmon->array[i] = proc;
	proc->array_hint_pos = i;
	vmon->array_active_nr++;
	vmon->array_hint_free = in->array_free_nr ? in->array_free[in->array_free_nr - 1] : -1;
}

static void array_remove(vmon_t *vmon, vmon_proc_t *proc)
{
	struct _vmon_internal *in = vmon->internal;
	int i = proc->array_hint_pos;

	if (!(vmon->flags & VMON_FLAG_PROC_ARRAY) || i < 0 || i >= vmon->array_allocated_nr || vmon->array[i] != proc)
		return;
	vmon->array[i] = NULL;
	vmon->array_active_nr--;
	in->array_free[in->array_free_nr++] = i;
	vmon->array_hint_free = i;
	proc->array_hint_pos = -1;
}

/*
 * The pass walks a snapshot of the process nodes (vmon.c): its room is made
 * as each process node is, so that a pass never needs memory to walk (nor
 * to place) the nodes it has, whatever failed before.
 */
static int snapshot_reserve(struct _vmon_internal *in, size_t nr)
{
	size_t cap = in->snapshot_cap ? in->snapshot_cap : 64;
	proc_node_t **v;

	if (nr <= in->snapshot_cap)
		return 0;
	while (cap < nr)
		cap *= 2;
	v = realloc(in->snapshot, sizeof(*v) * cap);
	if (!v)
		return -1;
	in->snapshot = v;
	in->snapshot_cap = cap;
	return 0;
}

/*
 * A store's room in the node's block: every node has a PROC_STAT store, and
 * most keep the wants they were made with, so the stores wanted then are
 * made in the block (node_store()), not in blocks of their own: an idle
 * process of PROC_STAT|PROC_VM|PROC_IO was four blocks of 496, 512, 176
 * and 80 bytes (the allocator's 8 bytes each, rounded to 16), then one of
 * 1,200 (880 today, node.h).  A room stays the node's while its store is
 * dropped, for its store to come back to.  The open files' table is shared
 * by a process's threads, and made elsewhere (proc_files.c): never in a
 * room.
 */
#define ROOM_ALIGN	sizeof(unsigned long long)

static size_t room_size(int id)
{
	return (vmon_proc_store_descs[id].size + ROOM_ALIGN - 1) & ~(ROOM_ALIGN - 1);
}

static unsigned short rooms_for(vmon_proc_wants_t wants)
{
	unsigned short rooms = 1u << VMON_STORE_PROC_STAT;

	for (int i = 0; i < VMON_STORE_PROC_NR; i++) {
		if ((wants & (1L << i)) && i != VMON_STORE_PROC_FILES)
			rooms |= (unsigned short)(1u << i);
	}
	return rooms;
}

/* the room of store id after the node, or NULL: the rooms follow it in the stores' order */
static void *node_room(proc_node_t *node, int id)
{
	size_t off = sizeof(*node);

	if (!(node->rooms & (1u << id)))
		return NULL;
	for (int i = 0; i < id; i++) {
		if (node->rooms & (1u << i))
			off += room_size(i);
	}
	return (char *)node + off;
}

proc_node_t *node_new(vmon_t *vmon, int pid, int tgid, bool is_thread, vmon_proc_wants_t wants)
{
	struct _vmon_internal *in = vmon->internal;
	unsigned short rooms = rooms_for(wants);
	size_t size = sizeof(proc_node_t);
	proc_node_t *node;

	_Static_assert(sizeof(proc_node_t) % ROOM_ALIGN == 0, "the rooms after a node are aligned");
	_Static_assert(VMON_STORE_PROC_NR <= 16, "rooms has a bit per store");
	if ((!is_thread && snapshot_reserve(in, in->procs.nr + 1) < 0) || array_reserve(vmon) < 0)
		return NULL;
	for (int i = 0; i < VMON_STORE_PROC_NR; i++) {
		if (rooms & (1u << i))
			size += room_size(i);
	}
	node = calloc(1, size);
	if (!node)
		return NULL;
	node->rooms = rooms;
	INIT_LIST_HEAD(&node->pub.bucket);
	INIT_LIST_HEAD(&node->pub.children);
	INIT_LIST_HEAD(&node->pub.siblings);
	INIT_LIST_HEAD(&node->pub.threads);
	INIT_LIST_HEAD(&node->pub.sample_callbacks);
	INIT_LIST_HEAD(&node->life.stale_link);
	node->pub.pid = pid;
	node->pub.is_thread = is_thread;
	/*
	 * New in the pass that first reads it: this one, or (monitored between
	 * samples) the next, where it is visible new before it until then, as
	 * in the original.  Made once this pass's reads are over (a 2PASS or
	 * PROC_ALL callback's monitor), the caller sees this sample's tree with
	 * it unread: not new yet, or it would be new in two samples; its first
	 * read sets it (sample_node_busy()).
	 */
	node->pub.is_new = !(in->in_sample && in->reads_done);
	node->pub.array_hint_pos = -1;
	node->pub.wants = wants;
	node->tgid = tgid;
	node->fds.dir_fd = -1;
	node->fds.schedstat_fd = -1;
	node->fds.pass_schedstat_fd = -1;
	node->fds.status_fd = -1;
	node->pass.seen = vmon->generation;
	/* made once the pass's reads are over (a 2PASS or PROC_ALL callback's monitor): new in the pass that reads it */
	node->pass.born = in->in_sample && !in->reads_done ? vmon->generation : vmon->generation + 1;
	node->life.exec_pending = true;

	if (pidmap_put(is_thread ? &in->threads : &in->procs, pid, node) < 0) {
		free(node);
		return NULL;
	}
	if (!is_thread)
		list_add_tail(&node->pub.bucket, &vmon->htab[(unsigned)pid % VMON_HTAB_SIZE]);
	array_insert(vmon, &node->pub);
	return node;
}

/* the first successful read: the node is real, the caller gets to know it */
void node_confirm(vmon_t *vmon, proc_node_t *node)
{
	if (node->life.confirmed)
		return;
	node->life.confirmed = true;
	if (node->pub.is_thread)
		vmon->internal->stats.threads_new++;
	else
		vmon->internal->stats.procs_new++;
	if (vmon->proc_ctor_cb) {
		int prev = user_enter(vmon->internal, USER_NOTIFY);

		vmon->proc_ctor_cb(vmon, &node->pub);
		user_leave(vmon->internal, prev);
	}
}

static void note_change(vmon_t *vmon, vmon_proc_t *proc)
{
	if (!proc->parent)
		vmon->processes_changed = 1;
	else if (proc->is_thread)
		proc->parent->threads_changed = 1;
	else
		proc->parent->children_changed = 1;
}

/*
 * proc->refcnt: the caller's vmon_proc_monitor() references, plus one while
 * the tree holds the node on its own (PROC_ALL, a followed child, a thread)
 * and it is not detached.  Kept where those change: here, in node_attach()
 * and node_forget(), and by vmon_proc_monitor() and vmon_proc_unmonitor().
 */
void node_refcnt_update(vmon_t *vmon, proc_node_t *node)
{
	bool tree = (vmon->flags & VMON_FLAG_PROC_ALL) || node->pub.parent || node->pub.is_thread;

	node->pub.refcnt = node->life.monitors + (tree && !node->life.detached);
}

/*
 * Put node under parent (NULL: the top of the tree), or a thread on its
 * process's threads.  A move is a change to both the old and new parent.
 */
void node_attach(vmon_t *vmon, proc_node_t *node, proc_node_t *parent)
{
	vmon_proc_t *proc = &node->pub, *pp = parent ? &parent->pub : NULL;
	bool linked = proc->is_thread ? !list_empty(&proc->threads) : !list_empty(&proc->siblings);

	if (linked && proc->parent == pp)
		return;
	if (linked) {
		note_change(vmon, proc);
		if (proc->is_thread)
			list_del_init(&proc->threads);
		else
			list_del_init(&proc->siblings);
	}
	proc->parent = pp;
	if (proc->is_thread) {
		list_add_tail(&proc->threads, &pp->threads);
		pp->is_threaded = 1;
	} else {
		list_add_tail(&proc->siblings, siblings_head(vmon, proc));
	}
	note_change(vmon, proc);
	node_refcnt_update(vmon, node);
}

/* free what the node's store id owns, and the store unless it is in its room; its held fds are closed by node_release_fds() */
static void store_free(proc_node_t *node, int id)
{
	const vmon_store_desc_t *desc = &vmon_proc_store_descs[id];
	void *store = node->pub.stores[id];

	if (!store)
		return;
	for (int i = 0; i < desc->fields_nr && desc->fields != NULL; i++) {
		const vmon_field_t *f = &desc->fields[i];

		if (f->type == VMON_TYPE_char_array)
			parse_free_string((vmon_char_array_t *)((char *)store + f->offset));
		else if (f->type == VMON_TYPE_str_array)
			parse_free_vector(f, (char ***)((char *)store + f->offset));
	}
	if (store != node_room(node, id))
		free(store);
	node->pub.stores[id] = NULL;
}

/* close the warm files the node holds between passes (procfs.c says which are warm) */
void node_release_warm_files(vmon_t *vmon, proc_node_t *node)
{
	vmon_proc_t *proc = &node->pub;
	vmon_proc_stat_t *stat = proc->stores[VMON_STORE_PROC_STAT];
	vmon_proc_vm_t *vm = proc->stores[VMON_STORE_PROC_VM];
	vmon_proc_io_t *io = proc->stores[VMON_STORE_PROC_IO];

	procfs_close_warm(vmon, &node->fds.status_fd);
	if (stat)
		procfs_close_warm(vmon, &stat->wchan_fd);
	if (vm)
		procfs_close_warm(vmon, &vm->statm_fd);
	if (io)
		procfs_close_warm(vmon, &io->io_fd);
}

/*
 * Close the files (not the directories) the node holds between passes,
 * giving them back to the budget: what procfs_shrink_budget() can take from
 * the node being sampled, whose directories may be in use.
 */
void node_release_files(vmon_t *vmon, proc_node_t *node)
{
	vmon_proc_t *proc = &node->pub;
	vmon_proc_stat_t *stat = proc->stores[VMON_STORE_PROC_STAT];
	vmon_proc_follow_children_t *children = proc->stores[VMON_STORE_PROC_FOLLOW_CHILDREN];

	node_release_warm_files(vmon, node);
	procfs_close_held(vmon, &node->fds.schedstat_fd);
	vmon->internal->fds_held -= node->fds.hot_reserved;
	node->fds.hot_reserved = 0;
	if (stat)
		procfs_close_held(vmon, &stat->stat_fd);
	if (children)
		procfs_close_held(vmon, &children->children_fd);
}

/* close every fd the node holds between passes, giving them back to the budget */
void node_release_fds(vmon_t *vmon, proc_node_t *node)
{
	vmon_proc_follow_threads_t *threads = node->pub.stores[VMON_STORE_PROC_FOLLOW_THREADS];

	procfs_close_dir(vmon, node);
	procfs_node_done(vmon, node);	/* what was opened for this pass only */
	node_release_files(vmon, node);
	if (threads && threads->task_dir) {
		closedir(threads->task_dir);
		threads->task_dir = NULL;
		vmon->internal->fds_held--;
	}
	proc_files_release(vmon, &node->pub);
}

void node_release(vmon_t *vmon, proc_node_t *node, int what)
{
	if (what == NODE_RELEASE_WARM)
		node_release_warm_files(vmon, node);
	else if (what == NODE_RELEASE_FILES)
		node_release_files(vmon, node);
	else
		node_release_fds(vmon, node);
}

/*
 * A store written outside its sampler in a pass (an event's news, an end
 * found): the node's activity says so, as it says its sampler's changes
 * (vmon.h: the wants whose store changed in the last sample), for the
 * sampler may read the same values again, or not run at all.
 */
void node_store_written(proc_node_t *node, vmon_proc_store_t id, bool changed)
{
	if (changed && (node->pub.wants & (1L << id)))
		node->pub.activity |= (vmon_proc_wants_t)(1L << id);
}

/*
 * Before a write to a store that more than one writer has in a pass (the
 * stat store and the memory status store: their samplers' reads, the event
 * feed's news, an end found): the first of the pass starts the store's
 * changed bits (size bytes at changed) over, the others add to them.  So
 * the bits say what changed in this pass, whoever wrote first.  The
 * samplers started over at each read, and did not in a pass the feed had
 * written, where nothing had started the bits over before the feed: the
 * pass of a child's exit said its parent and start changed again, the bits
 * of its first read; and a store its sampler did not reach in a pass
 * (a node found gone) kept the pass before's.
 */
void node_store_start(vmon_t *vmon, proc_node_t *node, vmon_proc_store_t id, char *changed, size_t size)
{
	_Static_assert(VMON_STORE_PROC_NR <= 16, "stores_started has a bit per store");
	if (node->pass.started != vmon->generation) {
		node->pass.started = vmon->generation;
		node->life.stores_started = 0;
	}
	if (node->life.stores_started & (1u << id))
		return;
	node->life.stores_started |= (unsigned short)(1u << id);
	memset(changed, 0, size);
}

void *node_store(vmon_t *vmon, proc_node_t *node, vmon_proc_store_t id)
{
	void **store = &node->pub.stores[id];

	if (!*store) {
		size_t size = vmon_proc_store_descs[id].size;

		if ((*store = node_room(node, id)))
			memset(*store, 0, size);
		else if (!(*store = calloc(1, size)))
			return NULL;
		switch (id) {
		case VMON_STORE_PROC_STAT: {
			vmon_proc_stat_t *s = *store;

			s->cmdline_fd = s->comm_fd = s->wchan_fd = s->stat_fd = -1;
			break;
		}
		case VMON_STORE_PROC_VM:
			((vmon_proc_vm_t *)*store)->statm_fd = -1;
			break;
		case VMON_STORE_PROC_IO:
			((vmon_proc_io_t *)*store)->io_fd = -1;
			break;
		case VMON_STORE_PROC_FOLLOW_CHILDREN:
			((vmon_proc_follow_children_t *)*store)->children_fd = -1;
			break;
		default:
			break;
		}
	}
	return *store;
}

static void stores_free(vmon_t *vmon, proc_node_t *node)
{
	/* open files: a table threads share, with fds linked to objects other processes share */
	proc_files_put(vmon, &node->pub);
	for (int i = 0; i < VMON_STORE_PROC_NR; i++)
		store_free(node, i);
}

/*
 * The node no longer wants some stores: their memory goes now, and with it
 * any fd they held (all the node's held fds are given back; the next pass
 * reopens those it still needs, under the budget).
 */
void node_drop_stores(vmon_t *vmon, proc_node_t *node, vmon_proc_wants_t dropped)
{
	if (!dropped)
		return;
	node_release_fds(vmon, node);
	for (int i = 0; i < VMON_STORE_PROC_NR; i++) {
		if (!(dropped & (1L << i)) || i == VMON_STORE_PROC_STAT)
			continue;
		if (i == VMON_STORE_PROC_FILES)
			proc_files_put(vmon, &node->pub);	/* a shared table, fds linked to objects */
		else
			store_free(node, i);
		node->pub.stores[i] = NULL;
		node->pub.errors[i] = 0;
	}
}

static void callbacks_free(vmon_t *vmon, vmon_proc_t *proc)
{
	vmon_proc_callback_t *cb, *tmp;

	list_for_each_entry_safe(cb, tmp, &proc->sample_callbacks, callbacks) {
		list_del(&cb->callbacks);
		free(cb);
		vmon->internal->callbacks_nr--;
	}
}

/*
 * What a node's process shows once it ended: state X ("dead", as proc(5)
 * calls it), in its stat store with its last data, so that a caller, a log
 * of it and a replay of that log all tell a process that is gone from one
 * that runs or is a zombie.  Its exit code stays known only where it was
 * (the feed's exit, or a zombie's own stat line): a running process's
 * line says 0, which is no exit status.
 */
static void ended_state(vmon_t *vmon, proc_node_t *node)
{
	vmon_proc_stat_t *s = node->pub.stores[VMON_STORE_PROC_STAT];

	if (s) {
		node_store_start(vmon, node, VMON_STORE_PROC_STAT, s->changed, sizeof(s->changed));
		node_store_written(node, VMON_STORE_PROC_STAT, proc_stat_ended(s, node->pub.has_exit_status));
	}
	node->line.state = 'X';
}

/* stale now: in the tree for this sample, freed at the start of the next */
static void make_stale(vmon_t *vmon, proc_node_t *node)
{
	struct _vmon_internal *in = vmon->internal;
	vmon_proc_t *proc = &node->pub;

	proc->is_stale = 1;
	list_del_init(&node->life.stale_link);
	list_add_tail(&node->life.stale_link, &in->stale);
	note_change(vmon, proc);
	if (node->life.confirmed) {
		if (proc->is_thread)
			in->stats.threads_stale++;
		else
			in->stats.procs_stale++;
	}
}

/*
 * Stale in this sample, out of the live index, and nothing else: for a
 * source that is told which nodes are stale (a log's replay), where the
 * pass finds it out through node_end() and node_mark_stale().
 */
void node_stale_now(vmon_t *vmon, proc_node_t *node)
{
	struct _vmon_internal *in = vmon->internal;

	if (node->pub.is_stale)
		return;
	pidmap_del(node->pub.is_thread ? &in->threads : &in->procs, node->pub.pid, node);
	make_stale(vmon, node);
}

static void leave_or_forget(vmon_t *vmon, proc_node_t *node, bool ended);

/*
 * The node leaves the live index: its process ended (ended), or it left
 * the subtree the caller watches.  Its threads leave with it.  Outside
 * PROC_ALL, its followed children leave the watched subtree with it (the
 * kernel hands them to a reaper we do not follow), except those the caller
 * monitors itself: they move to the top; one that died too has ended.  In
 * PROC_ALL they stay and are placed under their new parent when their stat
 * shows it.  When it is stale is node_settle()'s to say; a monitored
 * top-level process that ended in explicit mode never is (see the top).
 */
static void node_leave(vmon_t *vmon, proc_node_t *node, bool ended)
{
	struct _vmon_internal *in = vmon->internal;
	vmon_proc_t *proc = &node->pub, *child, *tmp;

	if (node->life.left)
		return;
	if (!proc->is_thread && ended && in->node_gone)
		in->node_gone(vmon, node);	/* its exit may have come in since the pass began */
	node->life.left = true;
	node->life.ended = ended;
	pidmap_del(proc->is_thread ? &in->threads : &in->procs, proc->pid, node);
	node_release_fds(vmon, node);
	if (ended) {
		ended_state(vmon, node);
		ended_add(vmon, node);
	}
	if (ended && !proc->is_thread && !proc->parent && node->life.monitors && !(vmon->flags & VMON_FLAG_PROC_ALL)) {
		node->life.exited = true;
		list_add_tail(&node->life.stale_link, &in->exited);
		if (node->life.confirmed)
			in->stats.procs_stale++;
	} else {
		list_add_tail(&node->life.stale_link, &in->leaving);
	}

	if (!proc->is_thread) {
		list_for_each_entry_safe(child, tmp, &proc->threads, threads)
			leave_or_forget(vmon, node_of(child), ended || !procfs_node_exists(vmon, node_of(child)));
	}
	if (!(vmon->flags & VMON_FLAG_PROC_ALL)) {
		list_for_each_entry_safe(child, tmp, &proc->children, siblings) {
			bool alive = !node_of(child)->life.left && procfs_node_exists(vmon, node_of(child));

			if (node_of(child)->life.monitors && alive)
				node_attach(vmon, node_of(child), NULL);
			else
				leave_or_forget(vmon, node_of(child), !alive);
		}
	}
}

/*
 * A thread or a followed child that leaves with the node above it: one the
 * caller was never told of (no first read yet, no ctor: made by the read of
 * its parent's children or threads in this very pass, which then found the
 * parent gone) is forgotten at once, as a node listed and gone before its
 * first read is (vmon(3)).  Left in the tree, it showed is_new, then
 * is_stale, with no stat store and no ctor.  (It has no children or threads
 * of its own: those come from its reads.)
 */
static void leave_or_forget(vmon_t *vmon, proc_node_t *node, bool ended)
{
	if (!node->life.confirmed && !node->life.left) {
		/* (gone too: it vanished before its first read; else it only left the watched subtree) */
		if (ended)
			vmon->internal->stats.vanished++;
		node_forget(vmon, node);
	} else
		node_leave(vmon, node, ended);
}

void node_end(vmon_t *vmon, proc_node_t *node)
{
	node_leave(vmon, node, true);
}

void node_mark_stale(vmon_t *vmon, proc_node_t *node)
{
	node_leave(vmon, node, false);
}

/*
 * The nodes that left the index in this pass, now that the pass has
 * placed them: each is stale in this sample, or, if it is new in it (it
 * was found and lost in one pass) or has a new node below it, in the next
 * one, with that node.  A node is so never new and stale at once, and a
 * stale subtree holds only nodes the caller saw before.  Called wherever
 * the caller's code is about to see the tree.
 */
void node_settle(vmon_t *vmon)
{
	struct _vmon_internal *in = vmon->internal;
	proc_node_t *node, *tmp;
	vmon_proc_t *up;

	if (list_empty(&in->leaving))
		return;
	list_for_each_entry(node, &in->leaving, life.stale_link) {
		if (node->pass.born != vmon->generation)
			continue;
		node->life.ending = true;
		for (up = node->pub.parent; up && node_of(up)->life.left && !node_of(up)->life.exited; up = up->parent) {
			if (node_of(up)->life.ending || node_of(up)->pub.is_stale)
				break;
			node_of(up)->life.ending = true;
		}
	}
	list_for_each_entry_safe(node, tmp, &in->leaving, life.stale_link) {
		list_del_init(&node->life.stale_link);
		if (node->life.ending)
			list_add_tail(&node->life.stale_link, &in->ending);
		else
			make_stale(vmon, node);
	}
}

/*
 * The start of a pass, once the last pass's stale nodes are gone and the
 * flags cleared: those that were new and gone in the last sample are stale
 * in this one.
 */
void node_stale_ending(vmon_t *vmon)
{
	struct _vmon_internal *in = vmon->internal;
	proc_node_t *node, *tmp;

	list_for_each_entry(node, &in->ending, life.stale_link) {
		node->pub.is_new = 0;
		node->pub.children_changed = 0;
		node->pub.threads_changed = 0;
		node->pub.activity = 0;
	}
	list_for_each_entry_safe(node, tmp, &in->ending, life.stale_link) {
		node->life.ending = false;
		make_stale(vmon, node);
	}
}

/* out of the tree and the indexes: what is left is memory, and the dtor to run */
static void node_unlink(vmon_t *vmon, proc_node_t *node)
{
	vmon_proc_t *proc = &node->pub, *child, *tmp;

	/*
	 * Its threads are stale with it and leave in the same node_free_stale()
	 * (a thread is never at the top).  Its children outlive it and move to
	 * the top, the stale ones too: a node leaves the tree only when it is
	 * itself unlinked, as it leaves the indexes and vmon->array then.  A
	 * live child is placed again in this pass.  A child that is stale now
	 * may stay until the next pass: one that died during its first read
	 * and hung under a new parent that vanished before its own first read
	 * (forgotten mid-pass by sample_node()).
	 */
	if (!proc->is_thread) {
		list_for_each_entry_safe(child, tmp, &proc->threads, threads) {
			list_del_init(&child->threads);
			child->parent = NULL;
		}
	}
	list_for_each_entry_safe(child, tmp, &proc->children, siblings)
		node_attach(vmon, node_of(child), NULL);
	if (proc->is_thread)
		list_del_init(&proc->threads);
	else
		list_del_init(&proc->siblings);
	list_del_init(&proc->bucket);
	proc->parent = NULL;
	array_remove(vmon, proc);
	if (!node->life.left)
		pidmap_del(proc->is_thread ? &vmon->internal->threads : &vmon->internal->procs, proc->pid, node);
	node->life.left = true;
	node_release_fds(vmon, node);
	ended_drop_node(vmon, node);
}

static void node_free(vmon_t *vmon, proc_node_t *node)
{
	probe_forget(vmon->internal, node);
	stores_free(vmon, node);
	callbacks_free(vmon, &node->pub);
	free(node);
}

/*
 * Out of the tree, dtor called, then freed: a node that vanished before
 * its first read, a stale node at the start of the next pass, a node
 * unmonitored with its subtree (node_remove_subtree()), or every node at
 * vmon_destroy().  A node the caller still monitors leaves the tree but
 * keeps its memory, and its dtor waits, on internal->detached until the
 * last vmon_proc_unmonitor(), which calls this again.
 */
void node_forget(vmon_t *vmon, proc_node_t *node)
{
	list_del_init(&node->life.stale_link);
	if (!node->life.detached) {
		node_unlink(vmon, node);
		if (node->life.monitors) {
			node->life.detached = true;
			node_refcnt_update(vmon, node);
			list_add_tail(&node->life.stale_link, &vmon->internal->detached);
			return;
		}
	}
	node->life.freeing = true;
	if (node->life.confirmed && vmon->proc_dtor_cb) {
		int prev = user_enter(vmon->internal, USER_NOTIFY);

		vmon->proc_dtor_cb(vmon, &node->pub);
		user_leave(vmon->internal, prev);
	}
	node_free(vmon, node);
}

/* the start of a pass: the nodes that were stale in the last one go */
void node_free_stale(vmon_t *vmon)
{
	struct _vmon_internal *in = vmon->internal;
	proc_node_t *node, *tmp;

	list_for_each_entry_safe(node, tmp, &in->stale, life.stale_link)
		node_forget(vmon, node);
}

/* vmon_destroy(): every node out of the tree, dtor and all, whatever holds it */
void node_free_all(vmon_t *vmon)
{
	struct _vmon_internal *in = vmon->internal;
	list_head_t *lists[] = { &in->stale, &in->leaving, &in->ending, &in->exited, &in->detached };
	proc_node_t *node, *tmp;

	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		list_for_each_entry_safe(node, tmp, lists[i], life.stale_link) {
			node->life.monitors = 0;
			node_forget(vmon, node);
		}
	}
}

/*
 * vmon_proc_unmonitor() dropped the last reference: the node leaves with
 * the followed subtree under it (dtor for each); processes in that subtree
 * that the caller monitors on their own move to the top instead.
 */
void node_remove_subtree(vmon_t *vmon, proc_node_t *node)
{
	vmon_proc_t *proc = &node->pub, *child, *tmp;

	list_for_each_entry_safe(child, tmp, &proc->children, siblings) {
		if (node_of(child)->life.monitors)
			node_attach(vmon, node_of(child), NULL);
		else
			node_remove_subtree(vmon, node_of(child));
	}
	if (!proc->is_thread) {
		list_for_each_entry_safe(child, tmp, &proc->threads, threads)
			node_remove_subtree(vmon, node_of(child));
	}
	note_change(vmon, proc);
	node_forget(vmon, node);
}

/*
 * PROC_ALL: hang the process under the process its stat names as parent,
 * or at the top when that one is not in the tree (ppid 0, or outside our
 * pid namespace).  Stat lines read at slightly different moments could in
 * theory disagree into a loop; refuse any parent that descends from node.
 */
void node_place_by_ppid(vmon_t *vmon, proc_node_t *node)
{
	proc_node_t *parent = pidmap_get(&vmon->internal->procs, node->line.ppid);
	vmon_proc_t *up;

	if (parent == node)
		parent = NULL;
	for (up = parent ? &parent->pub : NULL; up; up = up->parent) {
		if (up == &node->pub) {
			parent = NULL;
			break;
		}
	}
	node_attach(vmon, node, parent);
}

/* --- walking the tree: threads before children, top-level processes in order --- */

static vmon_proc_t *first_below(vmon_proc_t *proc)
{
	if (!proc->is_thread && !list_empty(&proc->threads))
		return list_first_entry(&proc->threads, vmon_proc_t, threads);
	if (!list_empty(&proc->children))
		return list_first_entry(&proc->children, vmon_proc_t, siblings);
	return NULL;
}

static vmon_proc_t *next_sibling(vmon_t *vmon, vmon_proc_t *proc)
{
	list_head_t *head;

	if (proc->is_thread) {
		if (!proc->parent)
			return NULL;
		if (proc->threads.next != &proc->parent->threads)
			return list_entry(proc->threads.next, vmon_proc_t, threads);
		if (!list_empty(&proc->parent->children))
			return list_first_entry(&proc->parent->children, vmon_proc_t, siblings);
		return NULL;
	}
	head = siblings_head(vmon, proc);
	if (proc->siblings.next != head)
		return list_entry(proc->siblings.next, vmon_proc_t, siblings);
	return NULL;
}

vmon_proc_t *tree_first(vmon_t *vmon)
{
	return list_empty(&vmon->processes) ? NULL : list_first_entry(&vmon->processes, vmon_proc_t, siblings);
}

/* pre-order successor; descend=false skips proc's subtree */
vmon_proc_t *tree_next(vmon_t *vmon, vmon_proc_t *proc, bool descend)
{
	vmon_proc_t *next;

	if (descend && (next = first_below(proc)))
		return next;
	for (; proc; proc = proc->parent) {
		if ((next = next_sibling(vmon, proc)))
			return next;
	}
	return NULL;
}

static vmon_proc_t *deepest_first(vmon_proc_t *proc)
{
	vmon_proc_t *below;

	while ((below = first_below(proc)))
		proc = below;
	return proc;
}

vmon_proc_t *tree_first_postorder(vmon_t *vmon)
{
	vmon_proc_t *first = tree_first(vmon);

	return first ? deepest_first(first) : NULL;
}

/* post-order successor: everything below a node comes before it */
vmon_proc_t *tree_next_postorder(vmon_t *vmon, vmon_proc_t *proc)
{
	vmon_proc_t *next = next_sibling(vmon, proc);

	if (next)
		return deepest_first(next);
	return proc->parent;
}
