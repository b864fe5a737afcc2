/*
 * vmon.c: libvmon's entry points and the sample pass.
 *
 * One vmon_sample(), in order:
 *   1. the nodes that were stale in the last pass leave (dtor, free);
 *   2. the per-pass flags of the others are cleared, and the nodes that
 *      were new and gone in the last pass are stale in this one;
 *   2b. the event feed's pending events are applied (feed.c): forks make new
 *      nodes, exits give nodes their final data and exit status (the read
 *      in step 4 finds them reaped, or zombies), execs mark cmdline and exe
 *      for re-reading;
 *   3. the system wants are sampled, then vmon->sample_cb runs (a client
 *      such as vwm computes its per-sample totals there, before any
 *      per-process callback uses them);
 *   4. processes: with VMON_FLAG_PROC_ALL, one pass over the source's
 *      listing (each pid looked up in the pid index; /proc's is skipped
 *      while a healthy event feed brings the births: see
 *      feed_wants_listing()), every process
 *      sampled, then each one hung under its parent by ppid; otherwise a
 *      walk down from each
 *      monitored process, following children and threads as wanted;
 *   5. per-process sample callbacks, bottom-up: a node's run after
 *      everything at and below it was sampled (all at the end with
 *      VMON_FLAG_2PASS, and in PROC_ALL mode, where the tree is known only
 *      once every process was read);
 *   6. the events applied in this pass go to the feed's listeners (the
 *      event callback among them: feed_flush()), the tree whole.
 * A node found gone leaves the pid index at once; whether it is stale in
 * this sample or the next is settled (node_settle(), tree.c) before any of
 * the caller's code sees the tree.  No caller's code runs while a node is
 * being made, moved or marked; a call from it that would change the tree
 * is refused with EBUSY (internal->user).
 * Sampling a node means probing it first through the instance's source
 * (sources/source.h: its stat line, or a record; is it still the process
 * we knew?), then its wants in the order of defs/proc_wants.def, which take
 * the source's record where it has one and read /proc where not.  With the
 * task iterator (vmon_set_sampler()) one read before step 4 gives every
 * task's record: the listing, the probe and the stat, statm, status and io
 * numbers come from it.  Per-process failures are recorded in
 * proc->errors[] and counted; they never abort the pass.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "core/internal.h"
#include "util/clock.h"

void vmon_attr_default(vmon_attr_t *attr)
{
	if (!attr)
		return;
	memset(attr, 0, sizeof(*attr));
	attr->fd_budget = -1;
}

/*
 * The default fd budget: half the soft RLIMIT_NOFILE, leaving the other half
 * to the caller.  A fixture root gets none: a test swaps snapshot files under
 * us, and a held fd would keep reading the old one.
 */
static int default_fd_budget(vmon_t *vmon)
{
	struct rlimit rl;

	if (!vmon->internal->proc_is_live)
		return 0;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return 512;
	return (int)(rl.rlim_cur / 2);
}

/* a proc wants mask vmon_init_attr() and vmon_proc_monitor() accept: 0, or -1 with errno */
static int proc_wants_check(vmon_proc_wants_t wants)
{
	if (wants & ~((1L << VMON_STORE_PROC_NR) - 1)) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

static const char *const sampler_names[VMON_SAMPLER_NR] = {
	[VMON_SAMPLER_AUTO] = "auto",
	[VMON_SAMPLER_PROC] = "proc",
	[VMON_SAMPLER_ITER] = "iter",
};

const char *vmon_sampler_name(vmon_sampler_t sampler)
{
	if ((unsigned)sampler >= VMON_SAMPLER_NR)
		return NULL;
	return sampler_names[sampler];
}

/*
 * Load the task iterator if `asked` wants it, or let it go; 0, or -1 with
 * errno when the iterator was asked for and cannot load (then /proc is used,
 * and sampler_reason says why).  VMON_SAMPLER_AUTO takes the iterator for
 * VMON_FLAG_PROC_ALL only: its read costs every task of the system, which
 * pays when every process is sampled, not for a few monitored ones.
 */
static int sampler_apply(vmon_t *vmon, vmon_sampler_t asked)
{
	struct _vmon_internal *in = vmon->internal;
	bool want = asked == VMON_SAMPLER_ITER || (asked == VMON_SAMPLER_AUTO && (vmon->flags & VMON_FLAG_PROC_ALL));
	char why[sizeof(in->sampler_reason)];

	if (!want) {
		source_choose(vmon, VMON_SAMPLER_PROC, why, sizeof(why));
		snprintf(in->sampler_reason, sizeof(in->sampler_reason), "%s",
			 asked == VMON_SAMPLER_PROC ? "/proc was asked for" :
			 "explicit monitoring (no VMON_FLAG_PROC_ALL): /proc reads only the monitored processes");
		return 0;
	}
	if (source_choose(vmon, VMON_SAMPLER_ITER, why, sizeof(why)) < 0) {
		int err = errno;

		snprintf(in->sampler_reason, sizeof(in->sampler_reason), "%s", why);
		errno = err;
		return -1;
	}
	in->sampler_reason[0] = '\0';
	return 0;
}

/* attr's choice, else $VMON_SAMPLER's, else automatic; never fails: /proc is always there */
static void sampler_init(vmon_t *vmon, vmon_sampler_t asked)
{
	struct _vmon_internal *in = vmon->internal;
	const char *env = secure_getenv("VMON_SAMPLER");
	bool bad_env = false;

	if (asked == VMON_SAMPLER_AUTO && env && *env) {
		int i;

		for (i = 0; i < VMON_SAMPLER_NR && strcmp(env, sampler_names[i]) != 0; i++)
			;
		if (i < VMON_SAMPLER_NR)
			asked = (vmon_sampler_t)i;
		else
			bad_env = true;
	}
	in->sampler_asked = asked;
	sampler_apply(vmon, asked);
	if (bad_env) {
		size_t len = strlen(in->sampler_reason);

		snprintf(in->sampler_reason + len, sizeof(in->sampler_reason) - len,
			 "%sVMON_SAMPLER: unknown sampler \"%.40s\" (auto, proc, iter)", len ? "; " : "", env);
	}
}

int vmon_set_sampler(vmon_t *vmon, vmon_sampler_t sampler)
{
	if (!vmon || !vmon->internal || (unsigned)sampler >= VMON_SAMPLER_NR) {
		errno = EINVAL;
		return -1;
	}
	if (source_has(vmon, SOURCE_NOT_LIVE)) {
		errno = EINVAL;	/* its source samples nothing */
		return -1;
	}
	if (vmon->internal->in_sample || vmon->internal->user != USER_NONE) {
		errno = EBUSY;
		return -1;
	}
	if (sampler_apply(vmon, sampler) < 0)
		return -1;
	vmon->internal->sampler_asked = sampler;
	return 0;
}

vmon_sampler_t vmon_get_sampler(const vmon_t *vmon)
{
	if (!vmon || !vmon->internal) {
		errno = EINVAL;
		return VMON_SAMPLER_AUTO;
	}
	return source_sampler(vmon);
}

const char *vmon_sampler_reason(const vmon_t *vmon)
{
	if (!vmon || !vmon->internal) {
		errno = EINVAL;
		return NULL;
	}
	if (source_note(vmon))
		return source_note(vmon);
	/* empty when the iterator is in use, unless $VMON_SAMPLER was not understood */
	return vmon->internal->sampler_reason[0] ? vmon->internal->sampler_reason : NULL;
}

/*
 * An instance with its lists, indexes and state, but no /proc root yet:
 * vmon_init_attr() opens the root, vmon_log_replay_init() (sources/log_replay.c)
 * feeds it from a log instead.  0, or -1 with errno (vmon_destroy() frees
 * what was made).
 */
int instance_init(vmon_t *vmon, const vmon_attr_t *attr)
{
	memset(vmon, 0, sizeof(*vmon));
	for (int i = 0; i < VMON_HTAB_SIZE; i++)
		INIT_LIST_HEAD(&vmon->htab[i]);
	INIT_LIST_HEAD(&vmon->processes);
	INIT_LIST_HEAD(&vmon->orphans);
	INIT_LIST_HEAD(&vmon->fobjects);
	vmon->flags = attr->flags;
	vmon->sys_wants = attr->sys_wants;
	vmon->proc_wants = attr->proc_wants | VMON_WANT_PROC_STAT;
	vmon->ticks_per_sec = sysconf(_SC_CLK_TCK);
	vmon->num_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	vmon->array_hint_free = -1;
#define vmon_want(_sym, _name, _func) vmon->sys_funcs[VMON_STORE_ ## _sym] = _func;
#include "defs/sys_wants.def"
#define vmon_want(_sym, _name, _func) vmon->proc_funcs[VMON_STORE_ ## _sym] = _func;
#include "defs/proc_wants.def"

	if ((attr->sys_wants & ~((1L << VMON_STORE_SYS_NR) - 1)) ||
	    (attr->flags & ~(VMON_FLAG_PROC_ARRAY | VMON_FLAG_PROC_ALL | VMON_FLAG_2PASS | VMON_FLAG_NO_WCHAN))) {
		errno = EINVAL;
		return -1;
	}
	if (proc_wants_check(attr->proc_wants) < 0)
		return -1;
	if ((unsigned)attr->sampler >= VMON_SAMPLER_NR) {
		errno = EINVAL;
		return -1;
	}

	vmon->internal = calloc(1, sizeof(*vmon->internal));
	if (!vmon->internal)
		return -1;
	vmon->internal->proc_fd = -1;
	vmon->internal->have_schedstat = true;
	vmon->internal->page_size = sysconf(_SC_PAGESIZE);
	vmon->internal->release_fds = node_release;
	INIT_LIST_HEAD(&vmon->internal->leaving);
	INIT_LIST_HEAD(&vmon->internal->ending);
	INIT_LIST_HEAD(&vmon->internal->stale);
	INIT_LIST_HEAD(&vmon->internal->exited);
	INIT_LIST_HEAD(&vmon->internal->detached);
	if (pidmap_init(&vmon->internal->procs) < 0 || pidmap_init(&vmon->internal->threads) < 0 ||
	    ended_init(vmon) < 0)
		return -1;
	return 0;
}

int vmon_init_attr(vmon_t *vmon, const vmon_attr_t *attr)
{
	const char *root;
	int err;

	if (!vmon || !attr) {
		/* (an instance vmon_destroy() can still be given) */
		if (vmon)
			memset(vmon, 0, sizeof(*vmon));
		errno = EINVAL;
		return 0;
	}
	root = attr->proc_root;

	if (instance_init(vmon, attr) < 0) {
		if (!vmon->internal)
			return 0;
		goto fail;
	}
	if (!root)
		root = secure_getenv("VMON_PROC_ROOT");
	if (!root || !*root)
		root = "/proc";
	if (procfs_open_root(vmon, root) < 0)
		goto fail;
	vmon->internal->fd_budget = attr->fd_budget >= 0 ? attr->fd_budget : default_fd_budget(vmon);
	vmon->internal->fd_budget_max = vmon->internal->fd_budget;
	vmon->internal->due_base = vclock_secs(CLOCK_MONOTONIC);
	/* before anything reads /proc, so that no process falls between the two */
	if (feed_open(vmon, attr) < 0)
		goto fail;
	/* a process the pass finds ended may have execed and exited since the feed's drain */
	vmon->internal->node_gone = feed_node_gone;
	sampler_init(vmon, attr->sampler);
	return 1;

fail:
	err = errno;
	vmon_destroy(vmon);
	errno = err;
	return 0;
}

int vmon_init(vmon_t *vmon, vmon_flags_t flags, vmon_sys_wants_t sys_wants, vmon_proc_wants_t proc_wants)
{
	vmon_attr_t attr;

	vmon_attr_default(&attr);
	attr.flags = flags;
	attr.sys_wants = sys_wants;
	attr.proc_wants = proc_wants;
	return vmon_init_attr(vmon, &attr);
}

/*
 * The live nodes, threads first, into *out (forgetting a node changes the
 * indexes, so they are not walked while forgetting); 0 if out of memory.
 */
static size_t collect_live(vmon_t *vmon, proc_node_t ***out, size_t *cap)
{
	struct _vmon_internal *in = vmon->internal;
	pidmap_t *maps[] = { &in->threads, &in->procs };
	size_t nr = 0, need = in->procs.nr + in->threads.nr;

	if (need > *cap) {
		proc_node_t **v = realloc(*out, sizeof(*v) * need);

		if (!v)
			return 0;
		*out = v;
		*cap = need;
	}
	for (size_t m = 0; m < 2; m++) {
		size_t pos;

		/* (a map whose pidmap_init() failed is empty: vmon_init() is undoing itself) */
		pidmap_for_each(maps[m], pos)
			(*out)[nr++] = pidmap_node_at(maps[m], pos);
	}
	return nr;
}

/* free a system store: its memory, its held fds, and for the socket tables their hold on the fobjects */
static void sys_store_free(vmon_t *vmon, vmon_sys_store_t id)
{
	void *store = vmon->stores[id];

	vmon->stores[id] = NULL;
	switch (id) {
	case VMON_STORE_SYS_STAT:
		sys_stat_free(vmon, store);
		break;
	case VMON_STORE_SYS_VM:
		sys_vm_free(vmon, store);
		break;
	case VMON_STORE_SYS_LOADAVG:
		sys_loadavg_free(vmon, store);
		break;
	case VMON_STORE_SYS_SOCKETS:
		sys_sockets_free(vmon, store);
		break;
	case VMON_STORE_SYS_NR:
		break;
	}
}

void vmon_destroy(vmon_t *vmon)
{
	struct _vmon_internal *in = vmon->internal;

	if (in) {
		proc_node_t *node, **all = NULL;
		size_t cap = 0, nr;

		/* from a callback: the tree is being walked (vmon_destroy(3)) */
		if (in->in_sample || in->user != USER_NONE)
			return;
		in->destroying = true;
		feed_close(vmon);
		source_close(vmon);
		/* those out of the index first (stale, ended, detached...), then the live */
		node_free_all(vmon);
		nr = collect_live(vmon, &all, &cap);
		for (size_t i = 0; i < nr; i++) {
			all[i]->life.monitors = 0;
			node_forget(vmon, all[i]);
		}
		free(all);
		/* no memory for that list: one at a time, threads first (a removal leaves the walk valid) */
		for (pidmap_t *map = &in->threads; map; map = map == &in->threads ? &in->procs : NULL) {
			size_t pos;

			pidmap_for_each(map, pos) {
				node = pidmap_node_at(map, pos);
				node->life.monitors = 0;
				node_forget(vmon, node);
			}
		}
		node_free_all(vmon);
		/* the fobjects go with their last holder: the fds above, the socket table here */
		sys_store_free(vmon, VMON_STORE_SYS_SOCKETS);
		files_fini(vmon);
		pidmap_fini(&in->procs);
		pidmap_fini(&in->threads);
		ended_fini(vmon);
		buf_free(&in->buf);
		buf_free(&in->stat_line);
		buf_free(&in->list_buf);
		free(in->snapshot);
		free(in->proc_root);
		free(in->array_free);
		free(in);
		vmon->internal = NULL;
	}
	for (int i = 0; i < VMON_STORE_SYS_NR; i++)
		sys_store_free(vmon, (vmon_sys_store_t)i);
	if (vmon->proc_dir)
		closedir(vmon->proc_dir);
	vmon->proc_dir = NULL;
	free(vmon->array);
	vmon->array = NULL;
	vmon->array_allocated_nr = vmon->array_active_nr = 0;
}

enum sampled {
	SAMPLED,	/* read; its stores are current */
	SAMPLED_STALE,	/* gone: out of the index, with what was read before as its last data */
	SAMPLED_FORGOTTEN,	/* vanished before its first read: freed, never reported */
};

/*
 * Sample one node: its stat line, then its wants.
 * A pid or tid found reused ends the old node and, when the tree holds
 * that id (PROC_ALL, a followed child, a followed thread), makes a new node
 * for the new task (see id_reused()).
 */
static enum sampled sample_node_busy(vmon_t *vmon, proc_node_t *node);

/*
 * The node's id is another task's now: its start time says so (ESTALE), or
 * our held files of it fail (ESRCH) although the id was listed in this pass
 * (by /proc, by its parent's children file, or by its process's task
 * directory) and still is.  Within a clock tick only the held files can
 * tell, and the new task must be in the tree in this same sample, not the
 * next: where the tree holds that id.  A thread's id is its process's
 * task/TID, so a new task there is a new thread of the same process (one
 * of another process is found by that process's listing).
 */
static bool id_reused(vmon_t *vmon, proc_node_t *node, int err)
{
	vmon_proc_t *proc = &node->pub;

	if (!proc->is_thread && !(vmon->flags & VMON_FLAG_PROC_ALL) && !proc->parent)
		return false;
	return err == ESTALE || (node->pass.seen == vmon->generation && procfs_node_exists(vmon, node));
}

/* how many nodes a pass samples between two looks at the feed's kernel buffer (feed_keep_up()) */
#define KEEP_UP_NODES	64

static enum sampled sample_node(vmon_t *vmon, proc_node_t *node)
{
	proc_node_t *busy = vmon->internal->busy;
	enum sampled r;

	if (++vmon->internal->nodes_unlooked >= KEEP_UP_NODES) {
		vmon->internal->nodes_unlooked = 0;
		feed_keep_up(vmon);
	}
	/* (the node may be freed when this returns SAMPLED_FORGOTTEN: busy is restored at once) */
	vmon->internal->busy = node;
	r = sample_node_busy(vmon, node);
	vmon->internal->busy = busy;
	return r;
}

/* an error that says nothing of the task, only of this moment: out of memory or of fds */
static bool transient(int err)
{
	return err == ENOMEM || err == EMFILE || err == ENFILE || err == ENOBUFS || err == EAGAIN || err == EINTR;
}

static enum sampled sample_node_busy(vmon_t *vmon, proc_node_t *node)
{
	struct _vmon_internal *in = vmon->internal;
	vmon_proc_t *proc = &node->pub;
	bool retry;

	if (source_probe(vmon, node) < 0) {
		int err = errno;

		procfs_node_done(vmon, node);
		if (err != ESRCH && err != ESTALE) {
			proc_error_set(proc, VMON_STORE_PROC_STAT, err);
			in->stats.errors++;
			/*
			 * It was listed and is not gone, only unreadable for now
			 * (EMFILE, EIO, a malformed stat line): it is in the tree the
			 * caller walks, so the caller gets its ctor now, with the
			 * error and empty stores, not a node it never heard of.
			 * It is there: its generation says so.
			 */
			proc->generation = vmon->generation;
			node_confirm(vmon, node);
			return SAMPLED;
		}
		if (!node->life.confirmed) {
			in->stats.vanished++;
			node_forget(vmon, node);
			return SAMPLED_FORGOTTEN;
		}
		if (id_reused(vmon, node, err)) {
			proc_node_t *parent = proc->parent ? node_of(proc->parent) : NULL, *reborn;

			node_end(vmon, node);
			reborn = node_new(vmon, proc->pid, node->tgid, proc->is_thread, proc->wants);
			if (reborn) {
				node_attach(vmon, reborn, parent);
				reborn->pass.seen = vmon->generation;
				sample_node(vmon, reborn);
			}
			return SAMPLED_STALE;
		}
		node_end(vmon, node);
		return SAMPLED_STALE;
	}

	proc->generation = vmon->generation;
	node->pass.seen = vmon->generation;
	/* (one made after the last pass's reads is new from its first read on: node_new()) */
	if (node->pass.born == vmon->generation)
		proc->is_new = 1;
	node_confirm(vmon, node);
	/*
	 * A node a store of which failed in the last pass for a reason that
	 * passes (no memory, no fd) is read as one that ran: every read
	 * the rules would skip as unchanged is made again (cmdline and exe
	 * too), so that what the failure left unread is not left so.
	 */
	if (node->life.retry) {
		node->pass.ran = vmon->generation;
		node->ran.answer = 1;
	}
	retry = false;
	for (int i = 0; i < VMON_STORE_PROC_NR; i++) {
		int r;

		if (!(proc->wants & (1L << i)))
			continue;
		proc->errors[i] = 0;
		r = vmon->proc_funcs[i](vmon, proc, &proc->stores[i]);
		if (r < 0) {
			int err = errno;

			if (err == ESRCH && !procfs_node_alive(vmon, node)) {
				/* it died while we read it: what was read stays, as its last data */
				procfs_node_done(vmon, node);
				node_end(vmon, node);
				return SAMPLED_STALE;
			}
			/*
			 * A read that found the task gone while its stat line says it
			 * lives on (a thread's exec: procfs_node_alive()) missed it
			 * for a moment: next pass, the node's files are read again, none
			 * skipped as unchanged (vmon(3), EAGAIN).
			 */
			if (err == ESRCH)
				err = EAGAIN;
			proc_error_set(proc, i, err);
			in->stats.errors++;
			if (transient(err))
				retry = true;
		} else if (r > 0) {
			proc->activity |= (vmon_proc_wants_t)(1L << i);
		}
	}
	node->life.exec_pending = false;
	node->life.retry = retry;
	procfs_node_done(vmon, node);
	return SAMPLED;
}

/* sample the thread nodes that PROC_FOLLOW_THREADS hung on a process */
static void sample_threads(vmon_t *vmon, vmon_proc_t *proc)
{
	vmon_proc_t *thread, *tmp;

	if (node_of(proc)->life.left)
		return;
	list_for_each_entry_safe(thread, tmp, &proc->threads, threads) {
		if (!node_of(thread)->life.left && node_of(thread)->pass.probed != vmon->generation)
			sample_node(vmon, node_of(thread));
	}
}

/* the callback after cb on proc's list, or NULL */
static vmon_proc_callback_t *callback_after(vmon_proc_t *proc, vmon_proc_callback_t *cb)
{
	if (cb->callbacks.next == &proc->sample_callbacks)
		return NULL;
	return list_entry(cb->callbacks.next, vmon_proc_callback_t, callbacks);
}

/*
 * A callback may unmonitor any callback of its node, the next one included,
 * and monitor again: so the next callback is kept in callback_next, which
 * vmon_proc_unmonitor() moves on when it frees that one, and a callback
 * added during this run waits for the next pass.  None runs after its free
 * or twice in a pass.
 */
static void run_callbacks(vmon_t *vmon, vmon_proc_t *proc)
{
	struct _vmon_internal *in = vmon->internal;
	unsigned run = ++in->callback_run;
	vmon_proc_callback_t *cb;

	/*
	 * Monitored by a callback after this pass's reads (2PASS, PROC_ALL):
	 * nothing was read of it yet, and its callbacks would see empty
	 * stores; it is read, new, and its callbacks run, in the next pass.
	 */
	if (list_empty(&proc->sample_callbacks) || node_of(proc)->pass.born > vmon->generation)
		return;
	for (cb = list_first_entry(&proc->sample_callbacks, vmon_proc_callback_t, callbacks); cb; cb = in->callback_next) {
		in->callback_next = callback_after(proc, cb);
		if (((proc_callback_t *)cb)->added_run != run) {
			int prev = user_enter(in, USER_SAMPLE);

			cb->func(vmon, vmon->sample_cb_arg, proc, cb->arg);
			user_leave(in, prev);
		}
	}
}

/* explicit mode: sample the node, its threads and (recursively) its children, then its callbacks */
static void walk_explicit(vmon_t *vmon, proc_node_t *node)
{
	vmon_proc_t *proc = &node->pub, *child, *tmp;

	/*
	 * Once a pass: a monitored process walked at the top, then found to
	 * be a followed child of another, was sampled and saw its callbacks.
	 */
	if (node->pass.walked == vmon->generation)
		return;
	node->pass.walked = vmon->generation;
	/* (a monitored process that ended is kept, not read) */
	if (!node->life.left && node->pass.probed != vmon->generation &&
	    sample_node(vmon, node) == SAMPLED_FORGOTTEN)
		return;
	sample_threads(vmon, proc);
	list_for_each_entry_safe(child, tmp, &proc->children, siblings)
		walk_explicit(vmon, node_of(child));
	if (!(vmon->flags & VMON_FLAG_2PASS) && !list_empty(&proc->sample_callbacks)) {
		/* everything at and below it is read: what left is settled before the callbacks see it */
		node_settle(vmon);
		run_callbacks(vmon, proc);
	}
}

static int node_pid_cmp(const void *a, const void *b)
{
	int pa = (*(proc_node_t *const *)a)->pub.pid, pb = (*(proc_node_t *const *)b)->pub.pid;

	return (pa > pb) - (pa < pb);
}

/* the process nodes, into in->snapshot: node_new() made its room, nothing here can fail */
static size_t snapshot_procs(vmon_t *vmon)
{
	struct _vmon_internal *in = vmon->internal;
	pidmap_t *map = &in->procs;
	size_t nr = 0, pos;

	pidmap_for_each(map, pos) {
		if (nr == in->snapshot_cap)
			break;
		in->snapshot[nr++] = pidmap_node_at(map, pos);
	}
	return nr;
}

/*
 * PROC_ALL: the processes that came and went in this pass (a fork the feed
 * reported before the first listing, a life found and lost in one pass)
 * were placed when nothing of their parent was known, and the placement
 * above looks at live nodes only.  Each goes under its parent now: the live
 * process of its ppid, or one that came and went with it (its start no
 * later than the child's).  Stale nodes of earlier passes are no parents.
 */
static proc_node_t *gone_parent(vmon_t *vmon, const proc_node_t *node)
{
	proc_node_t *parent = pidmap_get(&vmon->internal->procs, node->line.ppid), *p;

	if (parent || node->line.ppid <= 0)
		return parent;
	list_for_each_entry(p, &vmon->internal->leaving, life.stale_link) {
		if (p->pub.pid == node->line.ppid && !p->pub.is_thread && p->pass.born == vmon->generation &&
		    p != node && p->start <= node->start && (!parent || p->start > parent->start))
			parent = p;
	}
	return parent;
}

static void place_gone(vmon_t *vmon)
{
	proc_node_t *node, *parent;
	vmon_proc_t *up;

	list_for_each_entry(node, &vmon->internal->leaving, life.stale_link) {
		if (node->pub.is_thread || node->pass.born != vmon->generation || node->line.ppid <= 0)
			continue;
		parent = gone_parent(vmon, node);
		for (up = parent ? &parent->pub : NULL; up; up = up->parent) {
			if (up == &node->pub) {
				parent = NULL;	/* (stat lines read at different times could say a loop) */
				break;
			}
		}
		if (parent && &parent->pub != node->pub.parent)
			node_attach(vmon, node, parent);
	}
}

/* how many nodes ahead of a walk in the pid index's order their cache lines are asked for (node_prefetch()) */
#define PREFETCH_NODES	8

static int sample_all(vmon_t *vmon)
{
	struct _vmon_internal *in = vmon->internal;
	bool listed = feed_wants_listing(vmon);
	size_t nr;
	int err = 0, r;

	/*
	 * The source lists the processes: /proc when the event feed wants a
	 * listing, the task iterator at every pass (and /proc now and then,
	 * for those it does not show).  A process not listed is taken for gone
	 * only when the listing says so; else it is probed, and the probe
	 * says.  A listing cut short (no memory for a node, a failed readdir)
	 * takes nobody for gone; the pass goes on with the nodes it has, and
	 * fails when done.
	 */
	r = source_list(vmon, listed);
	if (r < 0) {
		err = errno;
		listed = false;
	} else {
		if (r & SOURCE_LISTED_ALL)
			feed_listed(vmon);
		listed = r & SOURCE_LISTED_ENDS;
	}
	nr = snapshot_procs(vmon);
	for (size_t i = 0; i < nr; i++) {
		/* (read afresh each time: a node made again for a reused id can move the array, node_new()) */
		proc_node_t *node = in->snapshot[i];

		if (i + PREFETCH_NODES < nr)
			node_prefetch(in->snapshot[i + PREFETCH_NODES]);
		if (i + PREFETCH_NODES / 2 < nr)
			node_prefetch_stores(in->snapshot[i + PREFETCH_NODES / 2]);
		if (node->life.left)
			continue;
		if (listed && node->pass.seen != vmon->generation) {
			node_end(vmon, node);
			continue;
		}
		if (node->pass.probed == vmon->generation)
			continue;
		switch (sample_node(vmon, node)) {
		case SAMPLED:
			sample_threads(vmon, &node->pub);
			break;
		case SAMPLED_STALE:
			/*
			 * Died during its first read: new in this sample and
			 * stale in the next, and in the tree meanwhile, where the
			 * callbacks and the caller see it (place_gone() below
			 * puts it under its parent).  (Should its parent be
			 * forgotten later in this pass, node_unlink() moves it
			 * to the top.)
			 */
			if (list_empty(&node->pub.siblings))
				node_attach(vmon, node, NULL);
			break;
		case SAMPLED_FORGOTTEN:
			break;
		}
	}

	/* every live process under the process its stat names as parent;
	 * those that move are placed in pid order, so siblings read in order */
	nr = snapshot_procs(vmon);
	size_t moving = 0;
	for (size_t i = 0; i < nr; i++) {
		proc_node_t *node = in->snapshot[i];
		vmon_proc_t *want = node->line.ppid ? (vmon_proc_t *)pidmap_get(&in->procs, node->line.ppid) : NULL;

		if (i + PREFETCH_NODES < nr) {
			/* (the same order as the walk above, whose lines are long gone: the three this one reads) */
			const proc_node_t *ahead = in->snapshot[i + PREFETCH_NODES];

			__builtin_prefetch(&ahead->line.ppid);
			__builtin_prefetch(&ahead->pub.parent);
			__builtin_prefetch(&ahead->pub.siblings);
		}

		if (want != node->pub.parent || list_empty(&node->pub.siblings))
			in->snapshot[moving++] = node;
	}
	qsort(in->snapshot, moving, sizeof(*in->snapshot), node_pid_cmp);
	for (size_t i = 0; i < moving; i++)
		node_place_by_ppid(vmon, in->snapshot[i]);
	place_gone(vmon);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

static void clear_node_flags(vmon_t *vmon, vmon_proc_t *proc)
{
	/* (is_new first: born is on a line of its own, a wait for memory a node in this walk of every node) */
	if (proc->is_new && node_of(proc)->pass.born != vmon->generation)
		proc->is_new = 0;
	proc->children_changed = 0;
	proc->threads_changed = 0;
	proc->activity = 0;
}

/* the live nodes' and the kept monitored ones' (the stale are gone, the ending see node_stale_ending()) */
static void clear_pass_flags(vmon_t *vmon)
{
	struct _vmon_internal *in = vmon->internal;
	pidmap_t *maps[] = { &in->procs, &in->threads };
	proc_node_t *node;

	size_t pos;

	for (size_t m = 0; m < 2; m++) {
		pidmap_for_each(maps[m], pos)
			clear_node_flags(vmon, pidmap_node_at(maps[m], pos));
	}
	list_for_each_entry(node, &in->exited, life.stale_link)
		clear_node_flags(vmon, &node->pub);
	vmon->processes_changed = in->monitors_changed;
	in->monitors_changed = false;
	vmon->activity = 0;
}

/*
 * Does the tree hold the node without the caller's references: PROC_ALL,
 * a followed child, a thread, or gone and not yet freed?  The last
 * vmon_proc_unmonitor() then leaves it where it is, now or at the end of
 * the pass it was deferred to.
 */
static bool node_held_by_tree(vmon_t *vmon, proc_node_t *node)
{
	const vmon_proc_t *proc = &node->pub;

	return (vmon->flags & VMON_FLAG_PROC_ALL) || proc->parent || proc->is_thread ||
	       (node->life.left && !node->life.exited);
}

int vmon_sample(vmon_t *vmon)
{
	struct _vmon_internal *in = vmon->internal;
	vmon_proc_t *proc;
	int ret = 1, err = 0;

	/* a source that samples nothing feeds the tree through its own calls */
	if (!in || source_has(vmon, SOURCE_NOT_LIVE)) {
		errno = EINVAL;
		return 0;
	}
	/* from a callback: this very tree is being walked, or changed */
	if (in->in_sample || in->user != USER_NONE) {
		errno = EBUSY;
		return 0;
	}
	in->in_sample = 1;
	vmon->generation++;
	in->now = vclock_secs(CLOCK_MONOTONIC);
	in->stats.samples++;

	node_free_stale(vmon);
	/* the pid indexes made small again after a storm of short lives (no position is held here) */
	pidmap_fit(&in->procs);
	pidmap_fit(&in->threads);
	clear_pass_flags(vmon);
	node_stale_ending(vmon);
	ended_expire(vmon);
	feed_apply(vmon);
	node_settle(vmon);

	for (int i = 0; i < VMON_STORE_SYS_NR; i++) {
		int r;

		if (!(vmon->sys_wants & (1L << i)))
			continue;
		vmon->sys_errors[i] = 0;
		r = vmon->sys_funcs[i](vmon, &vmon->stores[i]);
		if (r < 0)
			vmon->sys_errors[i] = errno;
		else if (r > 0)
			vmon->activity |= (vmon_sys_wants_t)(1L << i);
	}
	if (vmon->sample_cb) {
		int prev = user_enter(in, USER_SAMPLE);

		vmon->sample_cb(vmon, vmon->sample_cb_arg);
		user_leave(in, prev);
	}

	/* wchan wanted again: read for every node in this pass, not only for those that ran (proc_stat.c) */
	in->wchan_again = in->wchan_off && !(vmon->flags & VMON_FLAG_NO_WCHAN);
	in->wchan_off = vmon->flags & VMON_FLAG_NO_WCHAN;

	/* one read of a source of records (the task iterator) for every process; should it fail, this pass reads /proc */
	if (source_pass_begin(vmon) < 0)
		in->stats.errors++;
	feed_keep_up(vmon);	/* after that read of every process, a long step */

	if (vmon->flags & VMON_FLAG_PROC_ALL) {
		if (sample_all(vmon) < 0) {
			ret = 0;
			err = errno;
		}
	} else {
		/* a walk can move top-level nodes (a monitored pid found to be a
		 * child of another, a monitored child whose parent died): start
		 * over after each, skipping those already walked */
again:
		list_for_each_entry(proc, &vmon->processes, siblings) {
			if (node_of(proc)->pass.walked != vmon->generation) {
				walk_explicit(vmon, node_of(proc));
				goto again;
			}
		}
	}

	node_settle(vmon);
	/* (a walk of every node to find none with a callback: vtop's case, 2 % of its CPU at 10,000 processes) */
	if ((vmon->flags & (VMON_FLAG_PROC_ALL | VMON_FLAG_2PASS)) && in->callbacks_nr) {
		in->reads_done = true;
		for (proc = tree_first_postorder(vmon); proc; proc = tree_next_postorder(vmon, proc))
			run_callbacks(vmon, proc);
		in->reads_done = false;
	}
	/* (a callback that monitored a process made nothing leave: the tree is still settled) */
	feed_flush(vmon);

	/* unmonitored from a callback: leave now that nothing walks the tree */
	for (proc = in->unmonitor_pending ? tree_first(vmon) : NULL; proc; ) {
		vmon_proc_t *next = tree_next(vmon, proc, true);
		proc_node_t *node = node_of(proc);

		if (node->life.unmonitor_pending) {
			node->life.unmonitor_pending = false;
			/*
			 * Asked while it was at the top, but the tree may hold
			 * it by now: a walk later in this pass found it a child
			 * of a process followed with FOLLOW_CHILDREN.  Only the
			 * caller's reference went, then (already dropped).
			 */
			if (!node_held_by_tree(vmon, node)) {
				next = tree_next(vmon, proc, false);
				node_remove_subtree(vmon, node);
			}
		}
		proc = next;
	}
	in->unmonitor_pending = false;

	in->in_sample = 0;
	if (!ret)
		errno = err;
	return ret;
}

static vmon_proc_callback_t *find_callback(vmon_proc_t *proc,
					   void (*func)(vmon_t *, void *, vmon_proc_t *, void *), void *arg)
{
	vmon_proc_callback_t *cb;

	list_for_each_entry(cb, &proc->sample_callbacks, callbacks) {
		if (cb->func == func && cb->arg == arg)
			return cb;
	}
	return NULL;
}

/*
 * A tid answers at /proc/TID as its process does (the directory is only
 * hidden from the listing), and would make a second node for that process:
 * its status says whose thread it is.  0 for a process (or one that cannot
 * tell: a status without a Tgid line, a fixture's), -1 with EINVAL for
 * another's thread.
 */
static int not_a_process(vmon_t *vmon, proc_node_t *node)
{
	buf_t *buf = &vmon->internal->buf;
	const char *p, *end;
	unsigned long long tgid;

	if (procfs_read(vmon, node, "status", NULL, buf) < 0)
		return 0;	/* gone, or unreadable: the next pass says */
	p = strstr(buf->data, "\nTgid:");
	if (!p)
		return 0;
	p += 6;
	end = buf->data + buf->len;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (parse_ull(&p, end, &tgid) && tgid != (unsigned long long)node->pub.pid) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

vmon_proc_t *vmon_proc_monitor(vmon_t *vmon, int pid, vmon_proc_wants_t wants,
			       void (*sample_cb)(vmon_t *, void *, vmon_proc_t *, void *), void *sample_cb_arg)
{
	struct _vmon_internal *in = vmon->internal;
	proc_callback_t *cb = NULL;
	proc_node_t *node, *busy;

	if (!in || pid <= 0 || source_has(vmon, SOURCE_NOT_LIVE)) {
		errno = EINVAL;
		return NULL;
	}
	/* from a ctor, dtor or event callback: a node is being made or let go */
	if (in->user == USER_NOTIFY) {
		errno = EBUSY;
		return NULL;
	}
	if (proc_wants_check(wants) < 0)
		return NULL;
	if (wants == VMON_WANT_PROC_INHERIT)
		wants = vmon->proc_wants;
	wants |= VMON_WANT_PROC_STAT;

	node = pidmap_get(&in->procs, pid);
	if (!node && pidmap_get(&in->threads, pid)) {
		errno = EINVAL;	/* a thread of a process in the tree, not a process */
		return NULL;
	}
	/* the one allocation that can fail comes before anything changes */
	if (sample_cb && !(node && find_callback(&node->pub, sample_cb, sample_cb_arg))) {
		cb = calloc(1, sizeof(*cb));
		if (!cb)
			return NULL;
		cb->pub.func = sample_cb;
		cb->pub.arg = sample_cb_arg;
		cb->added_run = in->callback_run;
	}
	if (!node) {
		node = node_new(vmon, pid, pid, false, wants);
		if (!node) {
			free(cb);
			return NULL;
		}
		/* is the pid there?  its stat line says, and gives its identity */
		busy = in->busy;
		in->busy = node;
		if (procfs_probe(vmon, node) < 0 || not_a_process(vmon, node) < 0) {
			int err = errno == ESTALE ? ESRCH : errno;

			in->busy = busy;
			procfs_node_done(vmon, node);
			node_forget(vmon, node);
			free(cb);
			errno = err;
			return NULL;
		}
		in->busy = busy;
		procfs_node_done(vmon, node);
		node->pass.probed = 0;	/* the next pass samples it whole */
		node_attach(vmon, node, NULL);
		node_confirm(vmon, node);
		in->monitors_changed = true;
	} else {
		vmon_proc_t *thread;

		/* what it samples from now on, its threads too (set_node_wants() for a drop) */
		node->pub.wants |= wants;
		list_for_each_entry(thread, &node->pub.threads, threads)
			thread->wants |= thread_wants(wants);
	}

	if (cb) {
		list_add_tail(&cb->pub.callbacks, &node->pub.sample_callbacks);
		in->callbacks_nr++;
	}
	/* unmonitored earlier in this pass's callbacks, and monitored again: it stays */
	node->life.unmonitor_pending = false;
	node->life.monitors++;
	node_refcnt_update(vmon, node);
	return &node->pub;
}

void vmon_proc_unmonitor(vmon_t *vmon, vmon_proc_t *proc,
			 void (*sample_cb)(vmon_t *, void *, vmon_proc_t *, void *), void *sample_cb_arg)
{
	proc_node_t *node;

	if (!vmon->internal || !proc)
		return;
	/*
	 * A replay monitors nothing (vmon_proc_monitor() refuses it): its tree
	 * is the log's, and its nodes the replay's to free.  Taken for a
	 * monitor's, a top-level node went with its subtree while the replay
	 * still held it (a use after free at the next sample).
	 */
	if (source_has(vmon, SOURCE_NOT_LIVE))
		return;
	node = node_of(proc);
	/*
	 * From a dtor: the node whose dtor runs is being freed, and at
	 * vmon_destroy() every node is, the others on its lists too.  The
	 * caller's hold goes with it; forgotten here again, it was freed twice
	 * (or the next node of vmon_destroy()'s walk under it).
	 */
	if (vmon->internal->destroying || node->life.freeing)
		return;
	if (sample_cb) {
		vmon_proc_callback_t *cb = find_callback(proc, sample_cb, sample_cb_arg);

		if (cb) {
			if (vmon->internal->callback_next == cb)
				vmon->internal->callback_next = callback_after(proc, cb);
			list_del(&cb->callbacks);
			free(cb);
			vmon->internal->callbacks_nr--;
		}
	}
	if (node->life.monitors > 0)
		node->life.monitors--;
	node_refcnt_update(vmon, node);
	if (node->life.monitors > 0)
		return;

	if (node->life.detached) {
		/* stale and already out of the tree: only the memory (and the dtor) was waiting for us */
		node_forget(vmon, node);
		return;
	}
	if (node_held_by_tree(vmon, node))
		return;
	/* during a pass, or from a ctor or dtor, it leaves at the end of the (next) pass */
	if (vmon->internal->in_sample || vmon->internal->user != USER_NONE) {
		node->life.unmonitor_pending = true;
		vmon->internal->unmonitor_pending = true;
		return;
	}
	node_remove_subtree(vmon, node);
	vmon->internal->monitors_changed = true;
}

vmon_proc_t *vmon_proc_lookup(const vmon_t *vmon, int pid)
{
	if (!vmon || !vmon->internal)
		return NULL;
	return pidmap_get(&vmon->internal->procs, pid);
}

static int check_wants(vmon_t *vmon, vmon_proc_wants_t wants)
{
	if (!vmon || !vmon->internal) {
		errno = EINVAL;
		return -1;
	}
	if (proc_wants_check(wants) < 0)
		return -1;
	if (vmon->internal->in_sample || vmon->internal->user != USER_NONE) {
		/* the pass is walking these very lists, or a node is being made or let go */
		errno = EBUSY;
		return -1;
	}
	return 0;
}

static void set_node_wants(vmon_t *vmon, proc_node_t *node, vmon_proc_wants_t wants)
{
	vmon_proc_t *proc = &node->pub, *child, *tmp;
	vmon_proc_wants_t dropped = proc->wants & ~wants;

	proc->wants = wants;
	if (!proc->is_thread) {
		list_for_each_entry_safe(child, tmp, &proc->threads, threads) {
			if (dropped & VMON_WANT_PROC_FOLLOW_THREADS)
				node_remove_subtree(vmon, node_of(child));	/* no one follows them now */
			else
				set_node_wants(vmon, node_of(child), thread_wants(wants));
		}
		/* followed children leave with the want, as they do on vmon_proc_unmonitor() */
		if ((dropped & VMON_WANT_PROC_FOLLOW_CHILDREN) && !(vmon->flags & VMON_FLAG_PROC_ALL)) {
			list_for_each_entry_safe(child, tmp, &proc->children, siblings) {
				if (node_of(child)->life.monitors)
					node_attach(vmon, node_of(child), NULL);
				else
					node_remove_subtree(vmon, node_of(child));
			}
		}
	}
	node_drop_stores(vmon, node, dropped);
}

int vmon_proc_set_wants(vmon_t *vmon, vmon_proc_t *proc, vmon_proc_wants_t wants)
{
	if (!proc) {
		errno = EINVAL;
		return -1;
	}
	if (check_wants(vmon, wants) < 0)
		return -1;
	if (proc->is_thread) {
		errno = EINVAL;	/* a thread samples what its process wants */
		return -1;
	}
	if (!node_of(proc)->life.left)
		set_node_wants(vmon, node_of(proc), wants | VMON_WANT_PROC_STAT);
	return 0;
}

int vmon_set_proc_wants(vmon_t *vmon, vmon_proc_wants_t wants)
{
	vmon_proc_wants_t old;
	vmon_proc_t *proc;

	if (check_wants(vmon, wants) < 0)
		return -1;
	old = vmon->proc_wants;
	wants |= VMON_WANT_PROC_STAT;
	/* top down: a node's change can only remove nodes below it, so the walk goes on from there */
	for (proc = tree_first(vmon); proc; proc = tree_next(vmon, proc, true)) {
		if (!proc->is_thread && !node_of(proc)->life.left)
			set_node_wants(vmon, node_of(proc), (proc->wants & ~old) | wants);
	}
	vmon->proc_wants = wants;
	return 0;
}

/*
 * The system wants after init: a want taken is sampled from the next
 * vmon_sample(), a want dropped has its store freed at once (the socket
 * tables let go of the fobjects only they held).
 */
int vmon_set_sys_wants(vmon_t *vmon, vmon_sys_wants_t wants)
{
	if (!vmon || !vmon->internal || (wants & ~((1L << VMON_STORE_SYS_NR) - 1))) {
		errno = EINVAL;
		return -1;
	}
	if (vmon->internal->in_sample || vmon->internal->user != USER_NONE) {
		errno = EBUSY;
		return -1;
	}
	for (int i = 0; i < VMON_STORE_SYS_NR; i++) {
		if ((vmon->sys_wants & ~wants) & (1L << i)) {
			sys_store_free(vmon, (vmon_sys_store_t)i);
			vmon->sys_errors[i] = 0;
		}
	}
	vmon->sys_wants = wants;
	return 0;
}

/* what the pages of rss and of statm's fields count: this machine's, or a replayed log's (sources/log_replay.c) */
long vmon_page_size(const vmon_t *vmon)
{
	if (!vmon || !vmon->internal) {
		errno = EINVAL;
		return -1;
	}
	return vmon->internal->page_size;
}

int vmon_get_stats(const vmon_t *vmon, vmon_stats_t *stats)
{
	const struct _vmon_internal *in = vmon ? vmon->internal : NULL;

	if (!in || !stats) {
		errno = EINVAL;
		return -1;
	}
	*stats = in->stats;
	stats->procs = (int)in->procs.nr;
	stats->threads = (int)in->threads.nr;
	stats->fds_held = in->fds_held;
	stats->fd_budget = in->fd_budget;
	stats->sampler_fds = source_fds(vmon);
	return 0;
}
