/*
 * test_skip.c: the read-avoidance rules and the fd budget's priorities.
 *
 * What libvmon leaves unread must be what cannot have changed, or changed
 * only within the bound its comment documents: each test here changes a
 * file behind libvmon's back and checks that the change shows exactly when
 * the rule says it must.  The budget tests count opens and reads on live
 * children the test spawned (explicit mode, so that no other process of the
 * machine is counted).
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

#define WANTS (VMON_WANT_PROC_STAT | VMON_WANT_PROC_VM | VMON_WANT_PROC_IO)

static bool any_bit(const char *bits, size_t size)
{
	for (size_t i = 0; i < size; i++) {
		if (bits[i])
			return true;
	}
	return false;
}

/* the fixture's stat line for pid 100 with the fields we vary: utime (14), rss (24), start_data (45) */
static void write_stat(fixture_t *fx, const char *utime, unsigned long long rss, const char *start_data)
{
	fixture_printf(fx, "100/stat",
		"100 (worker) S 1 100 100 0 -1 4194304 100 0 0 0 %s 3 0 0 20 0 1 0 500 10485760 %llu "
		"18446744073709551615 4194304 4198400 140730000000000 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 "
		"%s 6295552 8388608 140730000001000 140730000001100 140730000001100 140730000002000 0\n",
		utime, rss, start_data);
}

static void make_worker(fixture_t *fx)
{
	static const char *const argv[] = { "/usr/bin/worker", NULL };

	fixture_system(fx);
	fixture_proc(fx, 1, 0, NULL, 'S', 5, (const char *const[]){ "/sbin/init", NULL });
	fixture_proc(fx, 100, 1, "worker", 'S', 500, argv);
	write_stat(fx, "7", 300, "6291456");
}

/* the worker's tree, an instance over it and its first pass; extra, if given, adds to the tree first */
static vmon_proc_t *start_worker(fixture_t *fx, vmon_t *vmon, void (*extra)(fixture_t *))
{
	fixture_init(fx);
	make_worker(fx);
	if (extra)
		extra(fx);
	assert_true(fixture_vmon(fx, vmon, VMON_FLAG_PROC_ALL, 0, WANTS));
	assert_true(vmon_sample(vmon));
	return must_find(vmon, 100);
}

static void finish(fixture_t *fx, vmon_t *vmon)
{
	vmon_destroy(vmon);
	fixture_free(fx);
}

/* an unchanged stat line is not parsed again: no changed bit, same values; one changed field shows alone */
static void test_unchanged_stat_line(void **state)
{
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *w;

	(void)state;
	w = start_worker(&fx, &vmon, NULL);
	assert_int_equal(pstat(w)->utime, 7);

	assert_true(vmon_sample(&vmon));
	assert_false(any_bit(pstat(w)->changed, sizeof(pstat(w)->changed)));
	assert_int_equal(pstat(w)->utime, 7);
	assert_int_equal(pstat(w)->rss, 300);
	assert_string_equal(pstat(w)->comm.array, "worker");

	write_stat(&fx, "9", 300, "6291456");
	assert_true(vmon_sample(&vmon));
	assert_int_equal(pstat(w)->utime, 9);
	assert_true(BITTEST(pstat(w)->changed, VMON_PROC_STAT_UTIME));
	assert_false(BITTEST(pstat(w)->changed, VMON_PROC_STAT_STIME));
	assert_false(BITTEST(pstat(w)->changed, VMON_PROC_STAT_RSS));
	assert_true(w->activity & VMON_WANT_PROC_STAT);

	assert_true(vmon_sample(&vmon));
	assert_false(BITTEST(pstat(w)->changed, VMON_PROC_STAT_UTIME));
	assert_false(w->activity & VMON_WANT_PROC_STAT);

	finish(&fx, &vmon);
}

/*
 * A line that did not parse is never skipped as "unchanged": its error shows
 * in every pass, in the store of the field that is not a number (the probe's
 * fields are fine): utime, PROC_STAT's; start_data, PROC_STAT_EXTRA's.
 */
static void test_bad_stat_line_not_skipped(void **state)
{
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *w;

	(void)state;
	w = start_worker(&fx, &vmon, NULL);
	assert_int_equal(vmon_proc_set_wants(&vmon, w, w->wants | VMON_WANT_PROC_STAT_EXTRA), 0);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(w->errors[VMON_STORE_PROC_STAT], 0);
	assert_int_equal(w->errors[VMON_STORE_PROC_STAT_EXTRA], 0);

	write_stat(&fx, "7x", 300, "6291456");
	for (int i = 0; i < 3; i++) {
		assert_true(vmon_sample(&vmon));
		assert_int_equal(w->errors[VMON_STORE_PROC_STAT], EPROTO);
		assert_int_equal(w->errors[VMON_STORE_PROC_STAT_EXTRA], 0);
	}
	write_stat(&fx, "7", 300, "x6291456");
	for (int i = 0; i < 3; i++) {
		assert_true(vmon_sample(&vmon));
		assert_int_equal(w->errors[VMON_STORE_PROC_STAT], 0);
		assert_int_equal(w->errors[VMON_STORE_PROC_STAT_EXTRA], EPROTO);
	}
	write_stat(&fx, "7", 300, "6291456");
	assert_true(vmon_sample(&vmon));
	assert_int_equal(w->errors[VMON_STORE_PROC_STAT], 0);
	assert_int_equal(w->errors[VMON_STORE_PROC_STAT_EXTRA], 0);
	assert_int_equal(pstat(w)->utime, 7);
	assert_int_equal(pextra(w)->start_data, 6291456);

	finish(&fx, &vmon);
}

/*
 * statm is left unread when the stat line shows its size and resident set
 * and code bounds unchanged and schedstat shows the only task did not run;
 * the documented bound: a change of shared or data alone shows when the
 * task runs, its rss moves, or STATM_REFRESH_SECS (5 s, internal.h) pass.
 */
static void test_statm_skip_and_its_bound(void **state)
{
	struct timespec t0, t1;
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *w;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	w = start_worker(&fx, &vmon, NULL);
	assert_int_equal(pvm(w)->shared_pages, 200);

	/* shared alone moved, the task did not run: within the bound, not seen yet */
	fixture_printf(&fx, "100/statm", "2560 300 210 2 0 400 0\n");
	assert_true(vmon_sample(&vmon));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (t1.tv_sec - t0.tv_sec < 2) {	/* the first forced read comes 2.5 s or more after the first */
		assert_int_equal(pvm(w)->shared_pages, 200);
		assert_false(BITTEST(pvm(w)->changed, VMON_PROC_VM_SHARED_PAGES));
	}

	/* the task ran (schedstat's run count moved): statm is read */
	fixture_printf(&fx, "100/schedstat", "2000000 2000 99\n");
	assert_true(vmon_sample(&vmon));
	assert_int_equal(pvm(w)->shared_pages, 210);
	assert_true(BITTEST(pvm(w)->changed, VMON_PROC_VM_SHARED_PAGES));

	/* rss moved in the stat line (reclaim, say), the task did not run: statm is read */
	fixture_printf(&fx, "100/statm", "2560 290 200 2 0 400 0\n");
	write_stat(&fx, "7", 290, "6291456");
	assert_true(vmon_sample(&vmon));
	assert_int_equal(pvm(w)->resident_pages, 290);
	assert_int_equal(pvm(w)->shared_pages, 200);

	/* the bound: at the latest 5 s after the last read, statm is read whatever stat says */
	fixture_printf(&fx, "100/statm", "2560 290 205 2 0 410 0\n");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		assert_true(vmon_sample(&vmon));
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (pvm(w)->shared_pages == 205)
			break;
		assert_true(t1.tv_sec - t0.tv_sec <= 6);
		usleep(200 * 1000);
	}
	assert_int_equal(pvm(w)->data_pages, 410);

	finish(&fx, &vmon);
}

static void two_threads(fixture_t *fx)
{
	fixture_printf(fx, "100/stat",
		"100 (worker) S 1 100 100 0 -1 4194304 100 0 0 0 7 3 0 0 20 0 2 0 500 10485760 300 "
		"18446744073709551615 4194304 4198400 140730000000000 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 "
		"6291456 6295552 8388608 140730000001000 140730000001100 140730000001100 140730000002000 0\n");
}

/* a multi-threaded process: another thread may have run where schedstat only tells of the leader */
static void test_statm_read_when_threaded(void **state)
{
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *w;

	(void)state;
	w = start_worker(&fx, &vmon, two_threads);
	fixture_printf(&fx, "100/statm", "2560 300 222 2 0 400 0\n");
	assert_true(vmon_sample(&vmon));
	assert_int_equal(pvm(w)->shared_pages, 222);

	finish(&fx, &vmon);
}

static void newborn(fixture_t *fx)
{
	fixture_proc(fx, 200, 1, "newborn", 'R', 600, (const char *const[]){ "/bin/newborn", NULL });
	fixture_printf(fx, "200/schedstat", "0 0 0\n");
}

/*
 * A task that has not run yet reads "0 0 0" in schedstat (a fork waiting for
 * a CPU on a busy machine): that says nothing of the other nodes, whose skip
 * rules go on applying.
 */
static void test_never_ran_task_keeps_skips(void **state)
{
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *w;

	(void)state;
	w = start_worker(&fx, &vmon, newborn);
	assert_true(vmon_sample(&vmon));
	fixture_printf(&fx, "100/statm", "2560 300 210 2 0 400 0\n");
	assert_true(vmon_sample(&vmon));
	assert_int_equal(pvm(w)->shared_pages, 200);	/* still skipped: nothing ran */
	/* the newborn runs: read again */
	fixture_printf(&fx, "200/schedstat", "5000 100 1\n");
	fixture_printf(&fx, "200/io", "rchar: 77\nwchar: 0\nsyscr: 1\nsyscw: 0\nread_bytes: 0\n"
		       "write_bytes: 0\ncancelled_write_bytes: 0\n");
	assert_true(vmon_sample(&vmon));
	assert_int_equal(pio(must_find(&vmon, 200))->rchars, 77);

	finish(&fx, &vmon);
}

/* --- the fd budget, on live children --- */

#define CHILDREN 100

static int idle_child(void *arg)
{
	(void)arg;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (;;)
		pause();
	return 0;
}

struct family {
	pid_t	pids[CHILDREN];
};

static void spawn_family(struct family *f)
{
	for (int i = 0; i < CHILDREN; i++)
		f->pids[i] = spawn_fn(idle_child, NULL);
	for (int i = 0; i < CHILDREN; i++)
		assert_true(wait_sleeping(f->pids[i], 5000));
}

static bool wait_for_state(pid_t pid, char state, int ms)
{
	for (int waited = 0; waited < ms; waited += 2) {
		if (proc_state(pid) == state)
			return true;
		usleep(2000);
	}
	return proc_state(pid) == state;
}

static void reap_family(struct family *f)
{
	for (int i = 0; i < CHILDREN; i++)
		reap(f->pids[i], SIGKILL);
}

/* monitor every child under the budget and let three passes settle what is held */
static void monitor_family(vmon_t *vmon, struct family *f, int budget)
{
	vmon_attr_t attr;

	vmon_attr_default(&attr);
	attr.proc_wants = WANTS;
	attr.fd_budget = budget;
	attr.sampler = VMON_SAMPLER_PROC;	/* the reads /proc's rules avoid are the subject */
	assert_true(vmon_init_attr(vmon, &attr));
	for (int i = 0; i < CHILDREN; i++)
		assert_non_null(vmon_proc_monitor(vmon, f->pids[i], VMON_WANT_PROC_INHERIT, NULL, NULL));
	for (int i = 0; i < 3; i++)
		assert_true(vmon_sample(vmon));
}

/* one more pass: the counters it moved, and the fds held after it */
static void counted_pass(vmon_t *vmon, vmon_stats_t *delta)
{
	vmon_stats_t a, b;

	assert_true(vmon_get_stats(vmon, &a) == 0);
	assert_true(vmon_sample(vmon));
	assert_true(vmon_get_stats(vmon, &b) == 0);
	*delta = b;
	delta->opens = b.opens - a.opens;
	delta->reads = b.reads - a.reads;
}

/*
 * The hot fds (stat and schedstat: read every pass) come first, whole per
 * node: with a budget of exactly two per node an idle pass opens nothing and
 * reads two files per process; one fd less and exactly one node holds none.
 */
static void test_budget_hot_fds_first(void **state)
{
	struct family f;
	vmon_stats_t d;
	vmon_t vmon;

	(void)state;
	SKIP_IF(access("/proc/self/schedstat", R_OK) != 0, "no /proc/PID/schedstat on this kernel");
	spawn_family(&f);

	monitor_family(&vmon, &f, 2 * CHILDREN);
	counted_pass(&vmon, &d);
	assert_int_equal(d.fds_held, 2 * CHILDREN);
	assert_int_equal(d.opens, 0);
	assert_int_equal(d.reads, 2 * CHILDREN);
	for (int i = 0; i < CHILDREN; i++) {
		vmon_proc_t *p = must_find(&vmon, f.pids[i]);

		assert_int_equal(pstat(p)->pid, f.pids[i]);
		assert_int_equal(p->errors[VMON_STORE_PROC_STAT], 0);
	}
	vmon_destroy(&vmon);

	monitor_family(&vmon, &f, 2 * CHILDREN - 1);
	counted_pass(&vmon, &d);
	assert_int_equal(d.fds_held, 2 * (CHILDREN - 1));
	/* the one node without: its schedstat and stat, opened by name without its directory */
	assert_int_equal(d.opens, 2);
	vmon_destroy(&vmon);

	reap_family(&f);
}

/* every child ran since the last pass: what only a run can change is read again, and shows */
static void test_woken_children_read_again(void **state)
{
	struct family f;
	vmon_stats_t d;
	vmon_t vmon;

	(void)state;
	SKIP_IF(access("/proc/self/schedstat", R_OK) != 0, "no /proc/PID/schedstat on this kernel");
	spawn_family(&f);
	monitor_family(&vmon, &f, 8 * CHILDREN);
	/* SIGSTOP and SIGCONT: each child runs to stop, and again to go back to its pause() */
	for (int i = 0; i < CHILDREN; i++)
		kill(f.pids[i], SIGSTOP);
	for (int i = 0; i < CHILDREN; i++)
		assert_true(wait_for_state(f.pids[i], 'T', 5000));
	counted_pass(&vmon, &d);
	for (int i = 0; i < CHILDREN; i++) {
		vmon_proc_t *p = must_find(&vmon, f.pids[i]);

		assert_int_equal(pstat(p)->state, 'T');
		assert_true(BITTEST(pstat(p)->changed, VMON_PROC_STAT_STATE));
	}
	/* stat, schedstat, wchan, io and statm of each: more than the idle two */
	assert_true(d.reads >= 5 * CHILDREN);
	for (int i = 0; i < CHILDREN; i++)
		kill(f.pids[i], SIGCONT);
	vmon_destroy(&vmon);
	reap_family(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unchanged_stat_line),
		cmocka_unit_test(test_bad_stat_line_not_skipped),
		cmocka_unit_test(test_statm_skip_and_its_bound),
		cmocka_unit_test(test_statm_read_when_threaded),
		cmocka_unit_test(test_never_ran_task_keeps_skips),
		cmocka_unit_test(test_budget_hot_fds_first),
		cmocka_unit_test(test_woken_children_read_again),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
