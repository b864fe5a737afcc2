/*
 * consistency.c: the tree is what it claims to be, checked after every
 * vmon_sample() of every libvmon test (tests/).
 *
 * The tests link with -Wl,--wrap=vmon_sample (TESTS_LINK_CHECKED), so each of
 * their calls comes here first: the real vmon_sample(), then the check.  A
 * node that drops out of the tree while it stays in the flat array or the
 * pid index shows in the very sample that lost it, whichever test was
 * running, instead of as a rare miscount in a test that happened to count.
 *
 * It reads the library's pid index (internal.h): vmon_proc_lookup() finds
 * processes only, and the threads must be checked too.  A node is live when
 * it has not left the index (internal.h: a node gone but not yet stale, new
 * in this sample or a monitored process kept after its end, is not live);
 * none is new and stale at once.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/internal.h"
#include "testlib.h"

struct check {
	vmon_t		*vmon;
	char		*msg;
	size_t		size;
	int		nodes, procs, live_procs, live_threads;
	vhash_slot_t	*threads;	/* the thread index's entries, by tid */
	size_t		threads_nr;
};

static bool failed(struct check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* record the first failure; returns false, so that callers can `return failed(...)` */
static bool failed(struct check *c, const char *fmt, ...)
{
	va_list ap;

	if (c->msg[0])
		return false;
	va_start(ap, fmt);
	vsnprintf(c->msg, c->size, fmt, ap);
	va_end(ap);
	return false;
}

static int slot_cmp(const void *a, const void *b)
{
	uint64_t pa = ((const vhash_slot_t *)a)->key, pb = ((const vhash_slot_t *)b)->key;

	return (pa > pb) - (pa < pb);
}

/* the node the thread index holds for tid, or NULL */
static void *thread_indexed(const struct check *c, int tid)
{
	vhash_slot_t key = { (uint64_t)tid, NULL }, *s;

	s = bsearch(&key, c->threads, c->threads_nr, sizeof(key), slot_cmp);
	return s ? s->val : NULL;
}

static bool in_bucket(vmon_t *vmon, vmon_proc_t *proc)
{
	vmon_proc_t *p;

	list_for_each_entry(p, &vmon->htab[(unsigned)proc->pid % VMON_HTAB_SIZE], bucket) {
		if (p == proc)
			return true;
	}
	return false;
}

static bool check_node(struct check *c, vmon_proc_t *proc, vmon_proc_t *parent, int depth)
{
	vmon_t *vmon = c->vmon;
	vmon_proc_t *t, *child;
	int want_refcnt;
	bool gone;

	if (depth > 10000)
		return failed(c, "the tree is deeper than 10000: a loop at pid %d?", proc->pid);
	if (proc->parent != parent)
		return failed(c, "pid %d: parent %d, but listed under %d", proc->pid,
			      proc->parent ? proc->parent->pid : 0, parent ? parent->pid : 0);
	c->nodes++;
	gone = node_of(proc)->life.left || proc->is_stale;	/* (a replay's stale nodes are stale only) */
	if (proc->is_new && proc->is_stale)
		return failed(c, "pid %d is new and stale in the same sample", proc->pid);
	if (node_of(proc)->life.exited && (parent || proc->is_stale || !node_of(proc)->life.monitors))
		return failed(c, "pid %d: kept after its end, but not a monitored process at the top", proc->pid);
	/* the monitors' references, and the tree's own where it holds the node by itself */
	want_refcnt = node_of(proc)->life.monitors +
		      ((vmon->flags & VMON_FLAG_PROC_ALL) || parent || proc->is_thread);
	if (proc->refcnt != want_refcnt)
		return failed(c, "pid %d: refcnt %d, not %d", proc->pid, proc->refcnt, want_refcnt);
	if (proc->is_thread) {
		void *indexed = thread_indexed(c, proc->pid);

		if (!parent)
			return failed(c, "thread %d at the top", proc->pid);
		if (!gone && indexed != proc)
			return failed(c, "live thread %d is not in the thread index", proc->pid);
		if (gone && indexed == proc)
			return failed(c, "gone thread %d is still in the thread index", proc->pid);
		c->live_threads += !gone;
	} else {
		vmon_proc_t *indexed = vmon_proc_lookup(vmon, proc->pid);

		if (!gone && indexed != proc)
			return failed(c, "live pid %d is not what vmon_proc_lookup() finds", proc->pid);
		if (gone && indexed == proc)
			return failed(c, "gone pid %d is still what vmon_proc_lookup() finds", proc->pid);
		if (!in_bucket(vmon, proc))
			return failed(c, "pid %d is not in vmon->htab", proc->pid);
		c->procs++;
		c->live_procs += !gone;
	}
	if (vmon->flags & VMON_FLAG_PROC_ARRAY) {
		int i = proc->array_hint_pos;

		if (i < 0 || i >= vmon->array_allocated_nr || vmon->array[i] != proc)
			return failed(c, "pid %d is not in vmon->array at its array_hint_pos %d", proc->pid, i);
	}
	if (proc->is_thread) {
		if (!list_empty(&proc->children))
			return failed(c, "thread %d has children", proc->pid);
		return true;
	}
	list_for_each_entry(t, &proc->threads, threads) {
		if (!t->is_thread)
			return failed(c, "pid %d on the threads of %d is no thread", t->pid, proc->pid);
		if (!check_node(c, t, proc, depth + 1))
			return false;
	}
	list_for_each_entry(child, &proc->children, siblings) {
		if (child->is_thread)
			return failed(c, "thread %d among the children of %d", child->pid, proc->pid);
		if (!check_node(c, child, proc, depth + 1))
			return false;
	}
	return true;
}

/* the whole check; the number of nodes in the tree, or -1 with the reason in msg */
static int tree_check(vmon_t *vmon, char *msg, size_t size)
{
	struct check c = { .vmon = vmon, .msg = msg, .size = size };
	const pidmap_t *map;
	size_t pos;
	vmon_stats_t stats;
	vmon_proc_t *proc;
	int bucketed = 0;

	msg[0] = '\0';
	if (!vmon->internal) {
		failed(&c, "the vmon_t is not initialized");
		return -1;
	}
	map = &vmon->internal->threads;
	c.threads = malloc(sizeof(*c.threads) * (map->nr ? map->nr : 1));
	if (!c.threads) {
		failed(&c, "out of memory");
		return -1;
	}
	pidmap_for_each(map, pos)
		c.threads[c.threads_nr++] = (vhash_slot_t){ (uint64_t)pidmap_key_at(map, pos), pidmap_node_at(map, pos) };
	qsort(c.threads, c.threads_nr, sizeof(*c.threads), slot_cmp);

	list_for_each_entry(proc, &vmon->processes, siblings) {
		if (!check_node(&c, proc, NULL, 0))
			break;
	}
	free(c.threads);
	if (msg[0])
		return -1;

	/* every live node was found by its id above: the counts say nothing else is indexed */
	vmon_get_stats(vmon, &stats);
	if (c.live_procs != stats.procs || c.live_threads != stats.threads) {
		failed(&c, "the tree holds %d live processes and %d live threads, the indexes %d and %d",
		       c.live_procs, c.live_threads, stats.procs, stats.threads);
		return -1;
	}
	for (int b = 0; b < VMON_HTAB_SIZE; b++) {
		list_for_each_entry(proc, &vmon->htab[b], bucket)
			bucketed++;
	}
	if (bucketed != c.procs) {
		failed(&c, "vmon->htab holds %d processes, the tree %d", bucketed, c.procs);
		return -1;
	}
	if (vmon->flags & VMON_FLAG_PROC_ARRAY) {
		int used = 0;

		for (int i = 0; i < vmon->array_allocated_nr; i++) {
			if (vmon->array[i] && vmon->array[i]->array_hint_pos != i) {
				failed(&c, "vmon->array[%d] is pid %d, whose array_hint_pos is %d", i,
				       vmon->array[i]->pid, vmon->array[i]->array_hint_pos);
				return -1;
			}
			used += vmon->array[i] != NULL;
		}
		/* every tree node is at its own slot: as many slots in use means nothing else is */
		if (used != vmon->array_active_nr || used != c.nodes) {
			failed(&c, "vmon->array holds %d nodes, array_active_nr says %d, the tree has %d",
			       used, vmon->array_active_nr, c.nodes);
			return -1;
		}
	}
	return c.nodes;
}

int assert_tree_consistent(vmon_t *vmon)
{
	char msg[256];
	int nodes = tree_check(vmon, msg, sizeof(msg));

	if (nodes < 0)
		fail_msg("%s", msg);
	return nodes;
}

/* the test runner's pid: a forked child must not unwind into cmocka */
static pid_t runner_pid;

__attribute__((constructor)) static void note_runner(void)
{
	runner_pid = getpid();
}

int __real_vmon_sample(vmon_t *vmon);
int __wrap_vmon_sample(vmon_t *vmon);

int __wrap_vmon_sample(vmon_t *vmon)
{
	int r = __real_vmon_sample(vmon);
	int err = errno;
	char msg[256];

	/*
	 * (a vmon_t that vmon_init() refused has no tree; a failed sample must
	 * still leave a whole one, but a call refused from a callback did
	 * nothing, and the tree is the caller's pass's, in the middle of it)
	 */
	if (!vmon->internal || (!r && err == EBUSY) || tree_check(vmon, msg, sizeof(msg)) >= 0) {
		errno = err;
		return r;
	}
	if (getpid() == runner_pid)
		fail_msg("after vmon_sample(): %s", msg);
	fprintf(stderr, "after vmon_sample() in child %d: %s\n", (int)getpid(), msg);
	abort();
}
