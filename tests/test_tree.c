/*
 * test_tree.c: the callbacks and the lifecycle they see, on fixture trees:
 * ctor once and dtor once per node, the instance sample_cb before any
 * per-process callback, per-process callbacks bottom-up (a node's after
 * everything below it was sampled), VMON_FLAG_2PASS, stale nodes seen by
 * their callbacks exactly once, vmon_proc_monitor()/vmon_proc_unmonitor(),
 * also from inside a callback.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#define MAX_EVENTS 4096

/* what the callbacks saw, in order */
static struct events {
	struct event {
		char	kind;	/* S sample_cb, C ctor, D dtor, P per-process callback */
		int	pid;
		int	generation;	/* vmon->generation when it happened */
		const char *tag;	/* P: the callback's arg */
		bool	is_new, is_stale;
	} e[MAX_EVENTS];
	int	nr;
	/* what a P callback does, by tag */
	vmon_t	*vmon;
	const char *unmonitor_self;	/* this tag's callback unmonitors its node */
	const char *remonitor_self;	/* ... and monitors it again */
	const char *unmonitor_other;	/* this tag's callback removes the callback tagged other_tag */
	const char *other_tag;
	vmon_proc_t *other_proc;
	bool	check_subtree;		/* P: everything below the node was sampled in this pass */
	vmon_proc_t *must_be_sampled;	/* P: this node was sampled in this pass (2PASS) */
	int	must_be_sampled_answer;	/* 1 it was, 0 it was not, at the first P */
} ev;

static void record(char kind, vmon_t *vmon, vmon_proc_t *proc, const char *tag)
{
	struct event *e;

	assert_true(ev.nr < MAX_EVENTS);
	e = &ev.e[ev.nr++];
	e->kind = kind;
	e->pid = proc ? proc->pid : 0;
	e->generation = vmon->generation;
	e->tag = tag;
	e->is_new = proc && proc->is_new;
	e->is_stale = proc && proc->is_stale;
}

static void on_sample(vmon_t *vmon, void *arg)
{
	assert_ptr_equal(arg, &ev);
	record('S', vmon, NULL, NULL);
}

static void on_ctor(vmon_t *vmon, vmon_proc_t *proc)
{
	record('C', vmon, proc, NULL);
}

static void on_dtor(vmon_t *vmon, vmon_proc_t *proc)
{
	record('D', vmon, proc, NULL);
}

static bool subtree_sampled(vmon_t *vmon, vmon_proc_t *proc)
{
	vmon_proc_t *child;

	/* (a node found gone, state X, is not read again) */
	if (!proc->is_stale && proc->generation != vmon->generation && !(pstat(proc) && pstat(proc)->state == 'X'))
		return false;
	list_for_each_entry(child, &proc->threads, threads) {
		if (child != proc && !subtree_sampled(vmon, child))
			return false;
	}
	if (proc->is_thread)
		return true;
	list_for_each_entry(child, &proc->children, siblings) {
		if (!subtree_sampled(vmon, child))
			return false;
	}
	return true;
}

static void on_proc(vmon_t *vmon, void *sample_arg, vmon_proc_t *proc, void *arg);

static void on_proc(vmon_t *vmon, void *sample_arg, vmon_proc_t *proc, void *arg)
{
	const char *tag = arg;

	assert_ptr_equal(sample_arg, &ev);
	record('P', vmon, proc, tag);
	if (ev.check_subtree && !subtree_sampled(vmon, proc))
		fail_msg("the callback of %d ran before everything below it was sampled", proc->pid);
	if (ev.must_be_sampled && ev.must_be_sampled_answer < 0)
		ev.must_be_sampled_answer = ev.must_be_sampled->generation == vmon->generation;
	if (ev.unmonitor_self && strcmp(tag, ev.unmonitor_self) == 0) {
		vmon_proc_unmonitor(vmon, proc, on_proc, arg);
		if (ev.remonitor_self && strcmp(tag, ev.remonitor_self) == 0)
			assert_ptr_equal(vmon_proc_monitor(vmon, proc->pid, VMON_WANT_PROC_INHERIT, on_proc, arg), proc);
	}
	if (ev.unmonitor_other && strcmp(tag, ev.unmonitor_other) == 0) {
		vmon_proc_unmonitor(vmon, ev.other_proc, on_proc, (void *)ev.other_tag);
		ev.unmonitor_other = NULL;
	}
}

/* the events of kind (and tag, if given) of the last pass, in order, as "pid pid ..." */
static const char *seen(char kind, const char *tag, int generation)
{
	static char out[1024];
	size_t len = 0;

	out[0] = '\0';
	for (int i = 0; i < ev.nr; i++) {
		const struct event *e = &ev.e[i];

		if (e->kind != kind || e->generation != generation || (tag && (!e->tag || strcmp(e->tag, tag) != 0)))
			continue;
		len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%d", len ? " " : "", e->pid);
	}
	return out;
}

static int count(char kind, int pid)
{
	int n = 0;

	for (int i = 0; i < ev.nr; i++)
		n += ev.e[i].kind == kind && ev.e[i].pid == pid;
	return n;
}

/* the index of the first event of kind for pid, or MAX_EVENTS */
static int first(char kind, int pid)
{
	for (int i = 0; i < ev.nr; i++) {
		if (ev.e[i].kind == kind && ev.e[i].pid == pid)
			return i;
	}
	return MAX_EVENTS;
}

/* the index of the first event of kind in pass generation, or MAX_EVENTS */
static int first_in(int generation, char kind)
{
	for (int i = 0; i < ev.nr; i++) {
		if (ev.e[i].kind == kind && ev.e[i].generation == generation)
			return i;
	}
	return MAX_EVENTS;
}

/*
 *	100 ─┬─ 200 ─┬─ 300
 *	     │       └─ 301
 *	     └─ 201
 *	500
 */
static void make_tree(fixture_t *fx)
{
	fixture_init(fx);
	fixture_system(fx);
	fixture_proc(fx, 1, 0, "init", 'S', 5, NULL);
	fixture_proc(fx, 100, 1, "top", 'S', 100, NULL);
	fixture_proc(fx, 200, 100, "mid", 'S', 200, NULL);
	fixture_proc(fx, 201, 100, "sib", 'S', 201, NULL);
	fixture_proc(fx, 300, 200, "leaf", 'S', 300, NULL);
	fixture_proc(fx, 301, 200, "leaf2", 'S', 301, NULL);
	fixture_proc(fx, 500, 1, "other", 'S', 500, NULL);
	fixture_children(fx, 1, (const int[]){ 100, 500 }, 2);
	fixture_children(fx, 100, (const int[]){ 200, 201 }, 2);
	fixture_children(fx, 200, (const int[]){ 300, 301 }, 2);
}

static void start(fixture_t *fx, vmon_t *vmon, vmon_flags_t flags)
{
	memset(&ev, 0, sizeof(ev));
	ev.must_be_sampled_answer = -1;
	assert_true(fixture_vmon(fx, vmon, flags, VMON_WANT_SYS_STAT, VMON_WANT_PROC_STAT | VMON_WANT_PROC_FOLLOW_CHILDREN));
	ev.vmon = vmon;
	vmon->sample_cb = on_sample;
	vmon->sample_cb_arg = &ev;
	vmon->proc_ctor_cb = on_ctor;
	vmon->proc_dtor_cb = on_dtor;
}

/* destroy, then: one ctor and one dtor for every pid that got either, in that order */
static void finish(fixture_t *fx, vmon_t *vmon)
{
	vmon_destroy(vmon);
	for (int i = 0; i < ev.nr; i++) {
		int pid = ev.e[i].pid;

		if (ev.e[i].kind != 'C' && ev.e[i].kind != 'D')
			continue;
		if (count('C', pid) != count('D', pid))
			fail_msg("pid %d: %d ctor, %d dtor", pid, count('C', pid), count('D', pid));
		if (first('D', pid) < first('C', pid))
			fail_msg("pid %d: dtor before ctor", pid);
	}
	fixture_free(fx);
}

static void test_callback_order_explicit(void **state)
{
	fixture_t fx;
	vmon_t vmon;

	make_tree(&fx);
	start(&fx, &vmon, VMON_FLAG_NONE);
	ev.check_subtree = true;
	assert_non_null(vmon_proc_monitor(&vmon, 100, VMON_WANT_PROC_INHERIT, on_proc, "top"));
	assert_non_null(vmon_proc_monitor(&vmon, 500, VMON_WANT_PROC_INHERIT, on_proc, "other"));
	assert_true(vmon_sample(&vmon));	/* finds 200, 201, 300, 301 */
	/* callbacks on nodes the tree found */
	assert_non_null(vmon_proc_monitor(&vmon, 300, VMON_WANT_PROC_INHERIT, on_proc, "leaf"));
	assert_non_null(vmon_proc_monitor(&vmon, 200, VMON_WANT_PROC_INHERIT, on_proc, "mid"));
	assert_non_null(vmon_proc_monitor(&vmon, 201, VMON_WANT_PROC_INHERIT, on_proc, "sib"));
	assert_int_equal(assert_tree_consistent(&vmon), 6);

	for (int pass = 0; pass < 3; pass++) {
		int g;

		assert_true(vmon_sample(&vmon));
		g = vmon.generation;
		/* the instance callback first, once, then each node's after its subtree */
		assert_string_equal(seen('S', NULL, g), "0");
		assert_true(first_in(g, 'S') < first_in(g, 'P'));
		assert_string_equal(seen('P', NULL, g), "300 200 201 100 500");
	}
	for (int pid = 100; pid <= 500; pid++)
		assert_true(count('C', pid) <= 1);
	assert_int_equal(count('C', 301), 1);
	assert_int_equal(count('D', 301), 0);
	finish(&fx, &vmon);
	assert_int_equal(count('D', 301), 1);
}

/* the ctor runs before any callback of its node sees it, and a new node's callback sees is_new once */
static void test_ctor_before_callbacks(void **state)
{
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *top;

	make_tree(&fx);
	start(&fx, &vmon, VMON_FLAG_NONE);
	top = vmon_proc_monitor(&vmon, 100, VMON_WANT_PROC_INHERIT, on_proc, "top");
	assert_non_null(top);
	assert_int_equal(count('C', 100), 1);	/* the caller knows it now: the ctor has run */
	assert_true(top->is_new);
	assert_true(vmon_sample(&vmon));
	assert_true(first('C', 100) < first('P', 100));
	assert_true(first('C', 300) < first('P', 100));
	assert_true(ev.e[first('P', 100)].is_new);
	assert_true(vmon_sample(&vmon));
	assert_false(top->is_new);
	assert_int_equal(count('C', 100), 1);
	finish(&fx, &vmon);
}

/*
 * Without VMON_FLAG_2PASS a tree's callbacks run right after that tree is
 * sampled, before the next tree is; with it, after every tree is.
 */
static void test_2pass(void **state)
{
	for (int twopass = 0; twopass < 2; twopass++) {
		fixture_t fx;
		vmon_t vmon;
		vmon_proc_t *other;

		make_tree(&fx);
		start(&fx, &vmon, twopass ? VMON_FLAG_2PASS : VMON_FLAG_NONE);
		assert_non_null(vmon_proc_monitor(&vmon, 100, VMON_WANT_PROC_INHERIT, on_proc, "top"));
		other = vmon_proc_monitor(&vmon, 500, VMON_WANT_PROC_INHERIT, on_proc, "other");
		assert_non_null(other);
		assert_true(vmon_sample(&vmon));
		ev.must_be_sampled = other;
		ev.must_be_sampled_answer = -1;
		assert_true(vmon_sample(&vmon));
		/* the first callback is top's (its tree was monitored first) */
		assert_string_equal(seen('P', NULL, vmon.generation), "100 500");
		assert_int_equal(ev.must_be_sampled_answer, twopass);
		finish(&fx, &vmon);
	}
}

/* PROC_ALL: callbacks after the whole tree is known, bottom-up */
static void test_callbacks_proc_all(void **state)
{
	fixture_t fx;
	vmon_t vmon;

	make_tree(&fx);
	start(&fx, &vmon, VMON_FLAG_PROC_ALL);
	ev.check_subtree = true;
	assert_non_null(vmon_proc_monitor(&vmon, 100, VMON_WANT_PROC_INHERIT, on_proc, "top"));
	assert_non_null(vmon_proc_monitor(&vmon, 300, VMON_WANT_PROC_INHERIT, on_proc, "leaf"));
	assert_non_null(vmon_proc_monitor(&vmon, 1, VMON_WANT_PROC_INHERIT, on_proc, "init"));
	assert_true(vmon_sample(&vmon));
	assert_string_equal(seen('P', NULL, vmon.generation), "300 100 1");
	assert_true(first('S', 0) < first('P', 300));
	/* every process got its ctor once, before the callbacks */
	for (int pid = 1; pid <= 500; pid++)
		assert_true(count('C', pid) <= 1);
	assert_int_equal(count('C', 301), 1);
	assert_true(first('C', 301) < first('P', 300));
	assert_true(vmon_sample(&vmon));
	assert_string_equal(seen('P', NULL, vmon.generation), "300 100 1");
	finish(&fx, &vmon);
}

/*
 * PROC_ALL runs the callbacks in a walk of every node only while some node
 * has one (vmon.c counts them): the count must follow every way a callback
 * comes and goes, or callbacks stop running.  None at first; one added
 * later runs; one left on a node unmonitored without it runs until the
 * process dies, and goes with the node; one removed by
 * vmon_proc_unmonitor(); then none, and one again.
 */
static void test_callbacks_proc_all_counted(void **state)
{
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *leaf, *other;

	make_tree(&fx);
	start(&fx, &vmon, VMON_FLAG_PROC_ALL);
	assert_true(vmon_sample(&vmon));
	assert_true(vmon_sample(&vmon));
	assert_string_equal(seen('P', NULL, vmon.generation), "");

	other = vmon_proc_monitor(&vmon, 500, VMON_WANT_PROC_INHERIT, on_proc, "other");
	assert_non_null(other);
	assert_true(vmon_sample(&vmon));
	assert_string_equal(seen('P', NULL, vmon.generation), "500");

	/* the leaf's callback stays when its monitor goes without naming it */
	leaf = vmon_proc_monitor(&vmon, 300, VMON_WANT_PROC_INHERIT, on_proc, "leaf");
	assert_non_null(leaf);
	vmon_proc_unmonitor(&vmon, leaf, NULL, NULL);
	assert_true(vmon_sample(&vmon));
	assert_string_equal(seen('P', NULL, vmon.generation), "300 500");

	/* the leaf dies: its callback sees it stale, then goes with its node; other's runs on */
	fixture_remove(&fx, "300");
	fixture_children(&fx, 200, (const int[]){ 301 }, 1);
	assert_true(vmon_sample(&vmon));
	assert_string_equal(seen('P', NULL, vmon.generation), "300 500");
	assert_int_equal(count('D', 300), 0);
	for (int i = 0; i < 2; i++) {
		assert_true(vmon_sample(&vmon));
		assert_int_equal(count('D', 300), 1);
		assert_string_equal(seen('P', NULL, vmon.generation), "500");
	}

	vmon_proc_unmonitor(&vmon, other, on_proc, "other");
	assert_true(vmon_sample(&vmon));
	assert_string_equal(seen('P', NULL, vmon.generation), "");

	assert_non_null(vmon_proc_monitor(&vmon, 1, VMON_WANT_PROC_INHERIT, on_proc, "init"));
	assert_true(vmon_sample(&vmon));
	assert_string_equal(seen('P', NULL, vmon.generation), "1");
	finish(&fx, &vmon);
}

/*
 * Nodes the caller monitors die.  A followed child: its callback sees it
 * stale exactly once, it leaves the tree in the next sample, and its memory
 * and its dtor wait for the last vmon_proc_unmonitor() (the caller's pointer
 * and what it hung on foo must not dangle).  A monitored process at the top:
 * never stale, it stays where it is with its last data, state X, its
 * generation no longer following the instance's, its callbacks running,
 * until the last vmon_proc_unmonitor() takes it (and runs its dtor).
 */
static void test_monitored_node_dies(void **state)
{
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *leaf, *other;

	make_tree(&fx);
	start(&fx, &vmon, VMON_FLAG_NONE);
	assert_non_null(vmon_proc_monitor(&vmon, 100, VMON_WANT_PROC_INHERIT, on_proc, "top"));
	other = vmon_proc_monitor(&vmon, 500, VMON_WANT_PROC_INHERIT, on_proc, "other");
	assert_true(vmon_sample(&vmon));
	leaf = vmon_proc_monitor(&vmon, 300, VMON_WANT_PROC_INHERIT, on_proc, "leaf");
	assert_non_null(leaf);
	assert_true(vmon_sample(&vmon));

	fixture_remove(&fx, "300");
	fixture_children(&fx, 200, (const int[]){ 301 }, 1);
	fixture_remove(&fx, "500");
	assert_true(vmon_sample(&vmon));
	assert_true(leaf->is_stale);
	assert_false(other->is_stale);
	assert_int_equal(other->generation, vmon.generation - 1);
	assert_int_equal(pstat(other)->state, 'X');
	assert_false(other->has_exit_status);	/* no feed on a fixture: how it ended is not known */
	assert_string_equal(seen('P', "leaf", vmon.generation), "300");
	assert_false(ev.e[ev.nr - 1].is_stale);	/* other's callback, the last, saw it kept */
	assert_string_equal(seen('P', "other", vmon.generation), "500");
	assert_int_equal(count('D', 300), 0);

	for (int i = 0; i < 2; i++) {
		assert_true(vmon_sample(&vmon));
		assert_int_equal(count('D', 300), 0);
		assert_int_equal(count('D', 500), 0);
		assert_string_equal(seen('P', "leaf", vmon.generation), "");
		assert_string_equal(seen('P', "other", vmon.generation), "500");
		assert_ptr_equal(find_child(&vmon, NULL, 500), other);
		assert_false(other->is_stale || other->is_new);
		assert_int_equal(other->generation, vmon.generation - 2 - i);
		assert_null(vmon_proc_lookup(&vmon, 500));
	}
	/* still readable: the caller holds it */
	assert_int_equal(leaf->pid, 300);
	assert_true(leaf->is_stale);
	vmon_proc_unmonitor(&vmon, leaf, on_proc, "leaf");
	assert_int_equal(count('D', 300), 1);
	vmon_proc_unmonitor(&vmon, other, on_proc, "other");
	assert_int_equal(count('D', 500), 1);
	assert_null(find_child(&vmon, NULL, 500));
	assert_true(vmon_sample(&vmon));
	assert_int_equal(assert_tree_consistent(&vmon), 4);
	finish(&fx, &vmon);
}

/* a dtor that lets go of the caller's hold on the node it is told about, as a client's bookkeeping does */
static void on_dtor_unmonitor(vmon_t *vmon, vmon_proc_t *proc)
{
	record('D', vmon, proc, NULL);
	if (proc->pid == 300 || proc->pid == 500)
		vmon_proc_unmonitor(vmon, proc, NULL, NULL);
}

/*
 * 100 followed (and 500 monitored at the top), then 300 monitored too and
 * dead: after two samples it is out of the tree, its memory held by the
 * caller, its dtor waiting for the last vmon_proc_unmonitor().
 */
static vmon_proc_t *detached_leaf(fixture_t *fx, vmon_t *vmon)
{
	vmon_proc_t *leaf;

	make_tree(fx);
	start(fx, vmon, VMON_FLAG_NONE);
	assert_non_null(vmon_proc_monitor(vmon, 100, VMON_WANT_PROC_INHERIT, NULL, NULL));
	assert_non_null(vmon_proc_monitor(vmon, 500, VMON_WANT_PROC_INHERIT, NULL, NULL));
	assert_true(vmon_sample(vmon));
	leaf = vmon_proc_monitor(vmon, 300, VMON_WANT_PROC_INHERIT, NULL, NULL);
	assert_non_null(leaf);
	assert_true(vmon_sample(vmon));
	fixture_remove(fx, "300");
	fixture_children(fx, 200, (const int[]){ 301 }, 1);
	assert_true(vmon_sample(vmon));	/* stale */
	assert_true(leaf->is_stale);
	assert_true(vmon_sample(vmon));	/* out of the tree, held by the caller */
	assert_int_equal(count('D', 300), 0);
	return leaf;
}

/*
 * vmon(3) allows an unmonitor from a dtor.  At vmon_destroy(), the dtor of
 * a monitored followed child that died (detached) unmonitors it: the node
 * was forgotten a second time from inside its own forgetting, and freed
 * twice (ASan's use after free, glibc's double free).  Each dtor runs once,
 * the live monitored nodes' too.
 */
static void test_dtor_unmonitors_at_destroy(void **state)
{
	fixture_t fx;
	vmon_t vmon;

	detached_leaf(&fx, &vmon);
	vmon.proc_dtor_cb = on_dtor_unmonitor;
	vmon_destroy(&vmon);
	assert_int_equal(count('D', 300), 1);
	assert_int_equal(count('D', 500), 1);
	assert_int_equal(count('D', 100), 1);
	fixture_free(&fx);
}

/*
 * The same dtor outside vmon_destroy(): the caller's last unmonitor of a
 * detached node frees it, and the dtor that runs then unmonitors it again
 * (one hold too many in the caller's bookkeeping): nothing is left to let
 * go, and it is freed once (without the node's own guard, each unmonitor
 * forgot it again and ran the dtor again, without end).  finish() checks
 * one dtor for each ctor.
 */
static void test_dtor_unmonitors_after_last_unmonitor(void **state)
{
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *leaf = detached_leaf(&fx, &vmon);

	vmon.proc_dtor_cb = on_dtor_unmonitor;
	vmon_proc_unmonitor(&vmon, leaf, NULL, NULL);
	assert_int_equal(count('D', 300), 1);
	assert_true(vmon_sample(&vmon));
	finish(&fx, &vmon);
}

/* vmon_proc_unmonitor() between samples: the followed subtree goes, separately monitored nodes stay */
static void test_unmonitor(void **state)
{
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *top, *leaf, *again;

	make_tree(&fx);
	start(&fx, &vmon, VMON_FLAG_PROC_ARRAY);
	top = vmon_proc_monitor(&vmon, 100, VMON_WANT_PROC_INHERIT, on_proc, "top");
	/* monitoring twice holds twice */
	again = vmon_proc_monitor(&vmon, 100, VMON_WANT_PROC_INHERIT, NULL, NULL);
	assert_ptr_equal(again, top);
	assert_true(vmon_sample(&vmon));
	leaf = vmon_proc_monitor(&vmon, 300, VMON_WANT_PROC_INHERIT, on_proc, "leaf");
	assert_non_null(leaf);
	assert_int_equal(assert_tree_consistent(&vmon), 5);

	vmon_proc_unmonitor(&vmon, top, NULL, NULL);
	assert_int_equal(count('D', 100), 0);
	assert_true(vmon_sample(&vmon));
	assert_string_equal(seen('P', NULL, vmon.generation), "300 100");

	vmon_proc_unmonitor(&vmon, top, on_proc, "top");
	assert_int_equal(count('D', 100), 1);
	assert_int_equal(count('D', 200), 1);
	assert_int_equal(count('D', 201), 1);
	assert_int_equal(count('D', 301), 1);
	assert_int_equal(count('D', 300), 0);
	/* the leaf is monitored on its own: it stays, at the top */
	assert_ptr_equal(find_child(&vmon, NULL, 300), leaf);
	assert_null(leaf->parent);
	assert_int_equal(assert_tree_consistent(&vmon), 1);
	assert_true(vmon_sample(&vmon));
	assert_string_equal(seen('P', NULL, vmon.generation), "300");
	assert_true(vmon.processes_changed);
	vmon_proc_unmonitor(&vmon, leaf, on_proc, "leaf");
	assert_int_equal(count('D', 300), 1);
	assert_true(list_empty(&vmon.processes));
	assert_int_equal(assert_tree_consistent(&vmon), 0);
	finish(&fx, &vmon);
}

/* vmon_proc_unmonitor() from inside a callback: the node and its subtree leave when the pass ends */
static void test_unmonitor_in_callback(void **state)
{
	fixture_t fx;
	vmon_t vmon;

	make_tree(&fx);
	start(&fx, &vmon, VMON_FLAG_NONE);
	assert_non_null(vmon_proc_monitor(&vmon, 100, VMON_WANT_PROC_INHERIT, on_proc, "top"));
	assert_non_null(vmon_proc_monitor(&vmon, 500, VMON_WANT_PROC_INHERIT, on_proc, "other"));
	assert_true(vmon_sample(&vmon));
	ev.unmonitor_self = "top";
	assert_true(vmon_sample(&vmon));
	assert_string_equal(seen('P', NULL, vmon.generation), "100 500");
	assert_int_equal(count('D', 100), 1);
	assert_int_equal(count('D', 300), 1);
	assert_null(find_child(&vmon, NULL, 100));
	assert_int_equal(assert_tree_consistent(&vmon), 1);
	assert_true(vmon_sample(&vmon));
	assert_string_equal(seen('P', NULL, vmon.generation), "500");
	finish(&fx, &vmon);
}

/* ... and monitoring it again in the same callback keeps it */
static void test_remonitor_in_callback(void **state)
{
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *top;

	make_tree(&fx);
	start(&fx, &vmon, VMON_FLAG_NONE);
	top = vmon_proc_monitor(&vmon, 100, VMON_WANT_PROC_INHERIT, on_proc, "top");
	assert_true(vmon_sample(&vmon));
	ev.unmonitor_self = "top";
	ev.remonitor_self = "top";
	assert_true(vmon_sample(&vmon));
	assert_ptr_equal(find_child(&vmon, NULL, 100), top);
	assert_int_equal(count('D', 100), 0);
	ev.unmonitor_self = ev.remonitor_self = NULL;
	assert_true(vmon_sample(&vmon));
	assert_string_equal(seen('P', NULL, vmon.generation), "100");
	assert_int_equal(assert_tree_consistent(&vmon), 5);
	finish(&fx, &vmon);
}

/* a callback removes the node's next callback: that one does not run (nor is it used after its free) */
static void test_unmonitor_other_callback(void **state)
{
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *top;

	make_tree(&fx);
	start(&fx, &vmon, VMON_FLAG_NONE);
	top = vmon_proc_monitor(&vmon, 100, VMON_WANT_PROC_INHERIT, on_proc, "first");
	assert_ptr_equal(vmon_proc_monitor(&vmon, 100, VMON_WANT_PROC_INHERIT, on_proc, "second"), top);
	assert_ptr_equal(vmon_proc_monitor(&vmon, 100, VMON_WANT_PROC_INHERIT, on_proc, "third"), top);
	assert_true(vmon_sample(&vmon));
	assert_string_equal(seen('P', NULL, vmon.generation), "100 100 100");
	ev.unmonitor_other = "first";
	ev.other_tag = "second";
	ev.other_proc = top;
	assert_true(vmon_sample(&vmon));
	assert_string_equal(seen('P', "first", vmon.generation), "100");
	assert_string_equal(seen('P', "second", vmon.generation), "");
	assert_string_equal(seen('P', "third", vmon.generation), "100");
	assert_true(vmon_sample(&vmon));
	assert_string_equal(seen('P', NULL, vmon.generation), "100 100");
	assert_ptr_equal(find_child(&vmon, NULL, 100), top);
	finish(&fx, &vmon);
}

/*
 * A process monitored on its own before its parent is: in the first sample
 * it is walked at the top, then found as the parent's child and moved under
 * it; its callback still runs once, after it and before its new parent's.
 */
static void test_monitored_child_found_later(void **state)
{
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *leaf, *top;

	make_tree(&fx);
	start(&fx, &vmon, VMON_FLAG_NONE);
	leaf = vmon_proc_monitor(&vmon, 300, VMON_WANT_PROC_INHERIT, on_proc, "leaf");
	top = vmon_proc_monitor(&vmon, 100, VMON_WANT_PROC_INHERIT, on_proc, "top");
	assert_non_null(leaf);
	assert_non_null(top);
	assert_true(vmon_sample(&vmon));
	assert_ptr_equal(find_child(&vmon, find_child(&vmon, top, 200), 300), leaf);
	assert_string_equal(seen('P', NULL, vmon.generation), "300 100");
	assert_int_equal(count('C', 300), 1);
	assert_int_equal(assert_tree_consistent(&vmon), 5);
	assert_true(vmon_sample(&vmon));
	assert_string_equal(seen('P', NULL, vmon.generation), "300 100");
	finish(&fx, &vmon);
}

static void test_api_errors(void **state)
{
	fixture_t fx;
	vmon_t vmon;

	make_tree(&fx);
	start(&fx, &vmon, VMON_FLAG_NONE);
	errno = 0;
	assert_null(vmon_proc_monitor(&vmon, 4242, VMON_WANT_PROC_INHERIT, on_proc, "nobody"));
	assert_int_equal(errno, ESRCH);
	assert_int_equal(count('C', 4242), 0);
	assert_true(vmon_sample(&vmon));
	assert_string_equal(seen('P', NULL, vmon.generation), "");
	assert_true(list_empty(&vmon.processes));
	finish(&fx, &vmon);

	/* vmon_init() refuses what it does not know, and leaves nothing to destroy */
	errno = 0;
	assert_false(vmon_init(&vmon, (vmon_flags_t)(1L << 20), 0, 0));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_false(vmon_init(&vmon, VMON_FLAG_NONE, (vmon_sys_wants_t)(1L << 20), 0));
	assert_int_equal(errno, EINVAL);
	/* (an errno left over from before is not the answer) */
	errno = EOPNOTSUPP;
	assert_false(vmon_init(&vmon, (vmon_flags_t)(1L << 20), 0, 0));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_false(vmon_init(&vmon, VMON_FLAG_NONE, 0, VMON_WANT_PROC_STAT | (vmon_proc_wants_t)(1L << 20)));
	assert_int_equal(errno, EINVAL);
	/* PROC_FILES is a want like the others */
	assert_true(vmon_init(&vmon, VMON_FLAG_NONE, 0, VMON_WANT_PROC_FILES));
	vmon_destroy(&vmon);
	{
		vmon_attr_t attr;

		vmon_attr_default(&attr);
		attr.proc_root = "/nonexistent/proc";
		errno = 0;
		assert_false(vmon_init_attr(&vmon, &attr));
		assert_int_equal(errno, ENOENT);
	}
}

/*
 * No callback can make the library change the tree it is walking: from a
 * ctor or dtor, vmon_sample(), vmon_proc_monitor() and the wants setters
 * fail with EBUSY and vmon_destroy() does nothing; from the sample_cb and a
 * per-process callback, vmon_sample() fails with EBUSY (they may monitor).
 */
static struct reentry {
	vmon_t	*vmon;
	int	tries, refused;
} re;

static void try_reenter(bool notify)
{
	vmon_t *vmon = re.vmon;

	re.tries++;
	errno = 0;
	if (vmon_sample(vmon) != 0 || errno != EBUSY)
		return;
	if (notify) {
		errno = 0;
		if (vmon_proc_monitor(vmon, 500, VMON_WANT_PROC_INHERIT, NULL, NULL) || errno != EBUSY)
			return;
		errno = 0;
		if (vmon_set_proc_wants(vmon, VMON_WANT_PROC_STAT) != -1 || errno != EBUSY)
			return;
		errno = 0;
		if (vmon_set_sys_wants(vmon, VMON_WANT_SYS_NONE) != -1 || errno != EBUSY)
			return;
		vmon_destroy(vmon);
		if (!vmon->internal)
			return;
	}
	re.refused++;
}

static void reentry_ctor(vmon_t *vmon, vmon_proc_t *proc)
{
	on_ctor(vmon, proc);
	try_reenter(true);
}

static void reentry_dtor(vmon_t *vmon, vmon_proc_t *proc)
{
	on_dtor(vmon, proc);
	try_reenter(true);
}

static void reentry_sample(vmon_t *vmon, void *arg)
{
	on_sample(vmon, arg);
	try_reenter(false);
}

static void reentry_proc(vmon_t *vmon, void *sample_arg, vmon_proc_t *proc, void *arg)
{
	on_proc(vmon, sample_arg, proc, arg);
	try_reenter(false);
}

static void test_reentry(void **state)
{
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *top;

	for (int mode = 0; mode < 2; mode++) {
		make_tree(&fx);
		start(&fx, &vmon, mode ? VMON_FLAG_PROC_ALL : VMON_FLAG_2PASS);
		memset(&re, 0, sizeof(re));
		re.vmon = &vmon;
		vmon.proc_ctor_cb = reentry_ctor;
		vmon.proc_dtor_cb = reentry_dtor;
		vmon.sample_cb = reentry_sample;
		top = vmon_proc_monitor(&vmon, 100, VMON_WANT_PROC_INHERIT, reentry_proc, "top");
		assert_non_null(top);
		assert_true(vmon_sample(&vmon));
		fixture_remove(&fx, "300");
		fixture_children(&fx, 200, (const int[]){ 301 }, 1);
		assert_true(vmon_sample(&vmon));
		assert_true(vmon_sample(&vmon));
		assert_int_equal(assert_tree_consistent(&vmon), mode ? 6 : 4);
		vmon_proc_unmonitor(&vmon, top, reentry_proc, "top");
		assert_true(re.tries > 6);
		assert_int_equal(re.refused, re.tries);
		re.vmon = NULL;
		vmon.proc_ctor_cb = on_ctor;
		vmon.proc_dtor_cb = on_dtor;
		finish(&fx, &vmon);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_callback_order_explicit),
		cmocka_unit_test(test_ctor_before_callbacks),
		cmocka_unit_test(test_2pass),
		cmocka_unit_test(test_callbacks_proc_all),
		cmocka_unit_test(test_callbacks_proc_all_counted),
		cmocka_unit_test(test_monitored_node_dies),
		cmocka_unit_test(test_dtor_unmonitors_at_destroy),
		cmocka_unit_test(test_dtor_unmonitors_after_last_unmonitor),
		cmocka_unit_test(test_unmonitor),
		cmocka_unit_test(test_unmonitor_in_callback),
		cmocka_unit_test(test_remonitor_in_callback),
		cmocka_unit_test(test_unmonitor_other_callback),
		cmocka_unit_test(test_monitored_child_found_later),
		cmocka_unit_test(test_api_errors),
		cmocka_unit_test(test_reentry),
	};

	return cmocka_run_group_tests(tests, NULL, fixtures_cleanup);
}
