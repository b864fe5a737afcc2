/*
 * test_chart.c: a window manager's process charts, written the way vwm's
 * chart code uses the original libvmon header, run against processes the
 * test makes come and go, on every event feed backend and without one.
 *
 * The client includes vmon.h and then its own copy of the original list.h;
 * it monitors a process with FOLLOW_CHILDREN and FOLLOW_THREADS under
 * VMON_FLAG_2PASS, computes system totals in the instance's sample_cb,
 * hangs a context on every node's foo from its ctor (freed by its dtor),
 * and keeps one chart row per node it can reach from its process: in its
 * per-process callback it drops the rows of a stale subtree (leaves first)
 * before it adds a row for each new node, as vwm's draw_chart_rest() does.
 * After every sample its row count must equal the nodes it can reach.
 * That holds only if no node is new and stale at once, a stale subtree
 * holds only nodes it drew before, no dtor runs on a node it still holds,
 * and a process it monitors stays drawable after its end until it lets it
 * go (valgrind and ASan see any use of freed memory).
 *
 *   short_lives	the monitored process forks dd, sleep 0.4 and
 *			/bin/true in a loop for a few seconds
 *   first_read		children that die during their first read (the
 *			library's open of their cmdline kills and reaps them:
 *			an interposed openat()), every one found by the feed
 *			or the children file before
 *   root_exits		the monitored process exits while held (with a child
 *			and a thread), stays drawn with its last data, and is
 *			then unmonitored
 *
 * each with the ebpf, perf and netlink feeds and none (a backend that
 * cannot run here is skipped, saying why; perf's tracefs is mounted for
 * it when the test runs as root and it is missing).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"
#include "libvmon/vmon.h"	/* as vwm includes it */
#include "compat/list.h"	/* and then its own copy of the original list.h */
#include "compat/bitmap.h"

/* ---------------------------------------------------------------------------
 * The client: a chart of a process's tree, a row per node.
 */
#define CHART_PROC_WANTS	(VMON_WANT_PROC_STAT | VMON_WANT_PROC_FOLLOW_CHILDREN | VMON_WANT_PROC_FOLLOW_THREADS)
#define CHART_SYS_WANTS		(VMON_WANT_SYS_STAT)

typedef struct charts {
	vmon_t				vmon;
	unsigned long long		last_total, total_delta;
	int				ctors, dtors;
	int				dtors_early;	/* dtors of a node a chart still had a row for */
	char				error[512];	/* the client's first complaint */
} charts_t;

/* what the ctor hangs on foo, as vwm's vwm_perproc_ctxt_t */
typedef struct perproc {
	typeof(((vmon_t *)0)->generation)	generation;
	typeof(((vmon_proc_stat_t *)0)->utime)	last_utime;
	typeof(((vmon_proc_stat_t *)0)->utime)	utime_delta;
	int					rows;	/* rows drawn for it: 0 or 1 */
} perproc_t;

typedef struct chart {
	charts_t	*charts;
	vmon_proc_t	*proc;
	int		rows;		/* the hierarchy's rows */
	int		snowflakes;	/* rows of nodes that went */
	int		callbacks;
} chart_t;

static void complain(charts_t *charts, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void complain(charts_t *charts, const char *fmt, ...)
{
	va_list ap;

	if (charts->error[0])
		return;
	va_start(ap, fmt);
	vsnprintf(charts->error, sizeof(charts->error), fmt, ap);
	va_end(ap);
}

static void sample_callback(vmon_t *vmon, void *arg)
{
	charts_t *charts = arg;
	vmon_sys_stat_t *sys_stat = vmon->stores[VMON_STORE_SYS_STAT];
	unsigned long long total = sys_stat->user + sys_stat->nice + sys_stat->system + sys_stat->idle +
				   sys_stat->iowait + sys_stat->irq + sys_stat->softirq + sys_stat->steal;

	charts->total_delta = total - charts->last_total;
	charts->last_total = total;
}

static void ctor(vmon_t *vmon, vmon_proc_t *proc)
{
	charts_t *charts = vmon->sample_cb_arg;

	proc->foo = calloc(1, sizeof(perproc_t));
	charts->ctors++;
}

static void dtor(vmon_t *vmon, vmon_proc_t *proc)
{
	charts_t *charts = vmon->sample_cb_arg;
	perproc_t *ctxt = proc->foo;

	if (ctxt && ctxt->rows)
		charts->dtors_early++;
	free(proc->foo);
	proc->foo = NULL;
	charts->dtors++;
}

/* a subtree that went: its rows become snowflakes, leaves first, as the original's is_stale path */
static void snowflake(chart_t *chart, vmon_proc_t *proc)
{
	perproc_t *ctxt = proc->foo;
	vmon_proc_t *child;

	list_for_each_entry_prev(child, &proc->children, siblings)
		snowflake(chart, child);
	if (!proc->is_thread) {
		list_for_each_entry_prev(child, &proc->threads, threads)
			snowflake(chart, child);
	}
	if (!ctxt) {
		complain(chart->charts, "pid %d: stale without its context (its dtor ran)", proc->pid);
		return;
	}
	if (!proc->is_stale)
		complain(chart->charts, "pid %d%s: under a stale node, but not stale (new %d)", proc->pid,
			 proc->is_thread ? " (thread)" : "", proc->is_new);
	if (ctxt->rows != 1) {
		complain(chart->charts, "pid %d%s: stale, its row to drop never added (new %d)", proc->pid,
			 proc->is_thread ? " (thread)" : "", proc->is_new);
		return;
	}
	ctxt->rows = 0;
	chart->rows--;
	chart->snowflakes++;
}

static void draw(chart_t *chart, vmon_proc_t *proc)
{
	charts_t *charts = chart->charts;
	vmon_proc_stat_t *proc_stat = proc->stores[VMON_STORE_PROC_STAT];
	perproc_t *ctxt = proc->foo;
	vmon_proc_t *child;

	if (!ctxt) {
		complain(charts, "pid %d: in the tree without its context (its dtor ran)", proc->pid);
		return;
	}
	if (proc->is_stale) {
		snowflake(chart, proc);
		return;
	}
	if (proc->is_new) {
		if (ctxt->rows)
			complain(charts, "pid %d: new a second time", proc->pid);
		ctxt->rows = 1;
		chart->rows++;
	} else if (!ctxt->rows) {
		complain(charts, "pid %d%s: drawn, never new", proc->pid, proc->is_thread ? " (thread)" : "");
	}
	if (!proc_stat) {
		complain(charts, "pid %d: no stat store", proc->pid);
	} else if (ctxt->generation != charts->vmon.generation) {
		/* the per-sample arithmetic, once a generation */
		ctxt->utime_delta = proc_stat->utime - ctxt->last_utime;
		ctxt->last_utime = proc_stat->utime;
		ctxt->generation = charts->vmon.generation;
	}
	if (!proc->is_thread) {
		list_for_each_entry(child, &proc->threads, threads)
			draw(chart, child);
	}
	list_for_each_entry(child, &proc->children, siblings)
		draw(chart, child);
}

static void proc_sample_callback(vmon_t *vmon, void *sys_cb_arg, vmon_proc_t *proc, void *proc_cb_arg)
{
	chart_t *chart = proc_cb_arg;

	(void)vmon;
	(void)sys_cb_arg;
	chart->callbacks++;
	draw(chart, proc);
}

/* the nodes a chart can reach from its process and draws (the stale ones are gone from it) */
static int reachable(vmon_proc_t *proc)
{
	vmon_proc_t *child;
	int n;

	if (proc->is_stale)
		return 0;
	n = 1;
	if (!proc->is_thread) {
		list_for_each_entry(child, &proc->threads, threads)
			n += reachable(child);
	}
	list_for_each_entry(child, &proc->children, siblings)
		n += reachable(child);
	return n;
}

/* ---------------------------------------------------------------------------
 * The test around it.
 */

static const char *const backends[] = { "ebpf", "perf", "netlink", "none" };

/* the client's instance on one feed backend; false (and why) when that backend cannot run here */
static bool charts_open(charts_t *charts, const char *backend, char *why, size_t why_size)
{
	vmon_feed_stats_t st;
	vmon_attr_t attr;

	memset(charts, 0, sizeof(*charts));
	vmon_attr_default(&attr);
	attr.flags = VMON_FLAG_2PASS;
	attr.sys_wants = CHART_SYS_WANTS;
	attr.proc_wants = CHART_PROC_WANTS;
	attr.feed = backend;
	assert_true(vmon_init_attr(&charts->vmon, &attr));
	charts->vmon.proc_ctor_cb = ctor;
	charts->vmon.proc_dtor_cb = dtor;
	charts->vmon.sample_cb = sample_callback;
	charts->vmon.sample_cb_arg = charts;
	assert_int_equal(vmon_feed_get_stats(&charts->vmon, &st), 0);
	if (strcmp(vmon_feed_backend_name(st.backend), backend) == 0)
		return true;
	snprintf(why, why_size, "%s", vmon_feed_reason(&charts->vmon));
	vmon_destroy(&charts->vmon);
	return false;
}

static void chart_monitor(charts_t *charts, chart_t *chart, pid_t pid)
{
	memset(chart, 0, sizeof(*chart));
	chart->charts = charts;
	chart->proc = vmon_proc_monitor(&charts->vmon, pid, VMON_WANT_PROC_INHERIT,
					(void (*)(vmon_t *, void *, vmon_proc_t *, void *))proc_sample_callback, chart);
	assert_non_null(chart->proc);
}

static void chart_unmonitor(charts_t *charts, chart_t *chart)
{
	vmon_proc_unmonitor(&charts->vmon, chart->proc,
			    (void (*)(vmon_t *, void *, vmon_proc_t *, void *))proc_sample_callback, chart);
}

/* one sample, and what the chart must then be */
static void chart_sample(charts_t *charts, chart_t *chart)
{
	int nodes;

	assert_true(vmon_sample(&charts->vmon));
	if (charts->error[0])
		fail_msg("generation %d: %s", charts->vmon.generation, charts->error);
	if (charts->dtors_early)
		fail_msg("generation %d: %d dtors ran on nodes the chart had rows for", charts->vmon.generation,
			 charts->dtors_early);
	nodes = reachable(chart->proc);
	if (chart->rows != nodes)
		fail_msg("generation %d: the chart has %d rows for %d nodes it can reach", charts->vmon.generation,
			 chart->rows, nodes);
}

static void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static double now_secs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static pid_t run(const char *const *argv)
{
	pid_t pid = fork();

	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

/* the monitored process: short-lived children, round after round, until killed */
static int churn_main(void *arg)
{
	static const char *const dd[] = { "/bin/dd", "if=/dev/zero", "of=/dev/null", "bs=4096", "count=64", NULL };
	static const char *const sleeper[] = { "/bin/sleep", "0.4", NULL };
	static const char *const truth[] = { "/bin/true", NULL };
	int round = 0;

	(void)arg;
	for (;;) {
		if (round++ % 4 == 0)
			run(sleeper);	/* lives across samples; reaped below */
		waitpid(run(dd), NULL, 0);
		waitpid(run(truth), NULL, 0);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
	return 0;
}

/* the whole chart after the monitored process was let go: every ctor had its dtor */
static void charts_close(charts_t *charts, chart_t *chart)
{
	chart_unmonitor(charts, chart);
	assert_true(list_empty(&charts->vmon.processes));
	vmon_destroy(&charts->vmon);
	if (charts->ctors != charts->dtors)
		fail_msg("%d ctors, %d dtors", charts->ctors, charts->dtors);
}

static bool mounted_tracefs;

static int group_setup(void **state)
{
	(void)state;
	mounted_tracefs = tracefs_mount();
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	tracefs_umount(mounted_tracefs);
	return 0;
}

#define OPEN_OR_SKIP(_charts, _backend) do { \
		char why_[600]; \
		if (!charts_open((_charts), (_backend), why_, sizeof(why_))) \
			SKIP_IF(true, "the %s feed cannot run here: %s", (_backend), why_); \
	} while (0)

static void test_short_lives(void **state)
{
	const char *backend = *state;
	double secs = under_valgrind() ? 1.5 : 4.0, until;
	charts_t charts;
	chart_t chart;
	pid_t parent;
	int samples = 0, most = 0;

	OPEN_OR_SKIP(&charts, backend);
	parent = spawn_fn(churn_main, NULL);
	chart_monitor(&charts, &chart, parent);
	for (until = now_secs() + secs; now_secs() < until; samples++) {
		chart_sample(&charts, &chart);
		if (chart.rows > most)
			most = chart.rows;
		msleep(10);
	}
	reap(parent, SIGKILL);
	/* the parent is kept after its end: drawn, its children gone from the chart */
	for (int i = 0; i < 3; i++)
		chart_sample(&charts, &chart);
	assert_false(chart.proc->is_stale);
	assert_int_equal(chart.rows, 1);
	print_message("%s: %d samples, %d nodes made (at most %d rows at once), %d snowflakes\n", backend, samples,
		      charts.ctors, most, chart.snowflakes);
	assert_true(charts.ctors > 3);
	charts_close(&charts, &chart);
}

/* --- children that die during their first read --- */

/*
 * The library's openat() goes through this one (an executable's own symbol
 * comes first): opening the cmdline of a process in victims[], the first
 * file its first read opens after the stat line, kills the process and
 * waits until its parent has reaped it, so the read finds it gone.
 */
static pid_t victims[64];
static int victims_nr;

static bool is_victim(int pid)
{
	for (int i = 0; i < victims_nr; i++) {
		if (victims[i] == pid)
			return true;
	}
	return false;
}

static int pid_of_dir(int dir_fd, const char *path)
{
	char link[64], target[256];
	const char *p = target;
	ssize_t n;

	if (strcmp(path, "cmdline") == 0) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", dir_fd);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			return 0;
		target[n] = '\0';
		if (strncmp(target, "/proc/", 6) != 0)
			return 0;
		p = target + 6;
	} else {
		size_t len = strlen(path);

		if (len < 8 || strcmp(path + len - 8, "/cmdline") != 0)
			return 0;
		p = path;
	}
	return atoi(p);
}

static void kill_and_wait_gone(pid_t pid)
{
	char path[32];

	kill(pid, SIGKILL);
	snprintf(path, sizeof(path), "/proc/%d", pid);
	for (int i = 0; i < 5000 && access(path, F_OK) == 0; i++)
		msleep(1);
}

int openat(int dir_fd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode = 0;
	int pid;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (victims_nr && (pid = pid_of_dir(dir_fd, path)) > 0 && is_victim(pid))
		kill_and_wait_gone(pid);
	return (int)syscall(SYS_openat, dir_fd, path, flags, mode);
}

/*
 * The monitored process: on each byte from the test, a child that pauses
 * (and dies with it); its pid goes back.  Its children are reaped by the
 * kernel as they die (SIGCHLD ignored), so a child killed is gone at once.
 */
static int forker_main(void *arg)
{
	int *fds = arg;
	char c;

	signal(SIGCHLD, SIG_IGN);
	while (read(fds[0], &c, 1) == 1) {
		pid_t pid = fork();

		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			for (;;)
				pause();
		}
		if (write(fds[3], &pid, sizeof(pid)) != sizeof(pid))
			return 1;
	}
	return 0;
}

static void *thread_idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* the monitored process as above, with a thread of its own (a thread node to follow, and to go) */
static int forker_threaded_main(void *arg)
{
	pthread_t t;

	if (pthread_create(&t, NULL, thread_idle, NULL) != 0)
		return 1;
	return forker_main(arg);
}

/* the forker, monitored by a chart; the test writes fds[1] and reads pids from fds[2] */
static pid_t forker_start(charts_t *charts, chart_t *chart, int fds[4])
{
	pid_t parent;

	assert_int_equal(pipe(fds), 0);
	assert_int_equal(pipe(fds + 2), 0);
	parent = spawn_fn(forker_threaded_main, fds);
	close(fds[0]);
	close(fds[3]);
	chart_monitor(charts, chart, parent);
	return parent;
}

static void test_first_read(void **state)
{
	const char *backend = *state;
	int fds[4], rounds = under_valgrind() ? 4 : 12, seen = 0;
	charts_t charts;
	chart_t chart;
	pid_t parent;

	OPEN_OR_SKIP(&charts, backend);
	parent = forker_start(&charts, &chart, fds);
	chart_sample(&charts, &chart);
	for (int i = 0; i < rounds; i++) {
		vmon_proc_t *child;
		pid_t pid;

		assert_int_equal(write(fds[1], "x", 1), 1);
		assert_int_equal(read(fds[2], &pid, sizeof(pid)), (ssize_t)sizeof(pid));
		victims[victims_nr++] = pid;
		chart_sample(&charts, &chart);
		/* new in this sample, with what its stat line said, and gone: state X */
		list_for_each_entry(child, &chart.proc->children, siblings) {
			vmon_proc_stat_t *s = child->stores[VMON_STORE_PROC_STAT];

			if (child->pid != pid)
				continue;
			seen++;
			assert_true(child->is_new);
			assert_false(child->is_stale);
			assert_int_equal(s->state, 'X');
			assert_int_equal(s->ppid, parent);
			if (child->has_exit_status) {
				assert_true(WIFSIGNALED(child->exit_status));
				assert_int_equal(WTERMSIG(child->exit_status), SIGKILL);
			}
		}
		/* stale in the next, then gone */
		chart_sample(&charts, &chart);
		chart_sample(&charts, &chart);
	}
	victims_nr = 0;
	print_message("%s: %d of %d children that died during their first read were in the tree\n", backend, seen,
		      rounds);
	/* each was found, by the feed or by the children file: the kill waits for the read */
	assert_int_equal(seen, rounds);
	close(fds[1]);
	reap(parent, SIGKILL);
	close(fds[2]);
	chart_sample(&charts, &chart);
	charts_close(&charts, &chart);
}

/* --- the monitored process exits while held --- */

static void test_root_exits(void **state)
{
	const char *backend = *state;
	int fds[4], status, generation;
	vmon_feed_stats_t st;
	charts_t charts;
	chart_t chart;
	pid_t parent, child;

	OPEN_OR_SKIP(&charts, backend);
	parent = forker_start(&charts, &chart, fds);
	assert_int_equal(write(fds[1], "x", 1), 1);
	assert_int_equal(read(fds[2], &child, sizeof(child)), (ssize_t)sizeof(child));
	chart_sample(&charts, &chart);
	chart_sample(&charts, &chart);
	/* the process, its two threads, its child */
	assert_int_equal(chart.rows, 4);

	status = reap(parent, SIGKILL);
	assert_true(WIFSIGNALED(status));
	chart_sample(&charts, &chart);
	/* kept, not stale; its threads and its child went (the child died with it) */
	assert_false(chart.proc->is_stale);
	assert_int_equal(((vmon_proc_stat_t *)chart.proc->stores[VMON_STORE_PROC_STAT])->state, 'X');
	assert_int_equal(chart.rows, 1);
	assert_int_equal(vmon_feed_get_stats(&charts.vmon, &st), 0);
	if (chart.proc->has_exit_status)
		assert_int_equal(chart.proc->exit_status, status);
	else if (st.backend != VMON_FEED_NONE && st.backend != VMON_FEED_PERF && !st.lost)
		fail_msg("%s: the exit was not seen", backend);	/* (perf carries no signal's status) */
	generation = chart.proc->generation;
	for (int i = 0; i < 3; i++) {
		chart_sample(&charts, &chart);
		assert_int_equal(chart.proc->generation, generation);
		assert_non_null(chart.proc->foo);
	}
	assert_int_equal(chart.callbacks, 6);	/* drawn in every sample */
	assert_int_equal(charts.dtors, 3);	/* the child and the threads; not the process */
	kill(child, SIGKILL);
	close(fds[1]);
	close(fds[2]);
	charts_close(&charts, &chart);
	assert_int_equal(charts.dtors, 4);
}

int main(void)
{
	static const struct {
		const char		*name;
		CMUnitTestFunction	func;
	} scenarios[] = {
		{ "short_lives", test_short_lives },
		{ "first_read", test_first_read },
		{ "root_exits", test_root_exits },
	};
	static char names[3 * 4][32];
	struct CMUnitTest tests[3 * 4];
	int n = 0;

	for (int b = 0; b < 4; b++) {
		for (int i = 0; i < 3; i++, n++) {
			snprintf(names[n], sizeof(names[n]), "%s %s", scenarios[i].name, backends[b]);
			memset(&tests[n], 0, sizeof(tests[n]));
			tests[n].name = names[n];
			tests[n].test_func = scenarios[i].func;
			tests[n].initial_state = (void *)backends[b];
		}
	}
	/* every child dies with us, whatever happens to the test */
	setpgid(0, 0);
	return cmocka_run_group_tests_name("chart", tests, group_setup, group_teardown);
}
