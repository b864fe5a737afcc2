/*
 * test_compat.c: source compatibility with the original libvmon header.
 *
 * The first half is a client written the way vwm's process charts use the
 * original header: GNU C with typeof() on store members, the list.h and
 * bitmap.h macros, comm.len - 1, argv with argc, wchan.len, boottime against
 * start, a per-process context on proc->foo from the ctor/dtor callbacks, a
 * sample callback per monitored process registered through a cast,
 * VMON_FLAG_2PASS, is_thread/is_threaded, generations.  It must compile
 * against vmon.h with no change; if this file needs editing for the library
 * to build it, the library broke compatibility.
 *
 * The second half runs that client against children the test spawns (a
 * process with threads and a grandchild running sleep(1)) and checks what it
 * saw against what they did.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"
#include "libvmon/vmon.h"	/* as vwm includes it */
#include "compat/list.h"	/* and then its own copy of the original list.h */
#include "compat/bitmap.h"

/* ---------------------------------------------------------------------------
 * The client: a window manager's charts, in the original header's idiom.
 */
#define CLIENT_PROC_WANTS	(VMON_WANT_PROC_STAT | VMON_WANT_PROC_FOLLOW_CHILDREN | VMON_WANT_PROC_FOLLOW_THREADS)
#define CLIENT_SYS_WANTS	(VMON_WANT_SYS_STAT)
#define CLIENT_MAX_ROWS		32

typedef struct client {
	vmon_t					vmon;
	typeof(((vmon_sys_stat_t *)0)->user)	last_user;
	typeof(((vmon_sys_stat_t *)0)->system)	last_system;
	unsigned long long			this_total, last_total, total_delta;
	int					sys_generation;	/* vmon->generation at the last sample_cb */
	int					sys_calls;
	int					ctors, dtors;
} client_t;

/* what the client hangs on every process, through proc->foo */
typedef struct perproc {
	typeof(((vmon_t *)0)->generation)	generation;
	typeof(((vmon_proc_stat_t *)0)->utime)	last_utime;
	typeof(((vmon_proc_stat_t *)0)->stime)	last_stime;
	typeof(((vmon_proc_stat_t *)0)->utime)	utime_delta;
	int					updates;	/* per-sample work done, at most once a generation */
} perproc_t;

/* one row of a chart, as drawn in the last sample */
typedef struct row {
	int	pid, depth;
	int	is_new, is_stale, is_thread, is_threaded;
	int	utime_changed;
	char	text[128];	/* "~" for threads, then comm, then argv[1..] */
	char	wchan[64];
	double	wall_secs;
} row_t;

typedef struct chart {
	client_t	*client;
	vmon_proc_t	*proc;
	int		callbacks;
	int		sys_before;	/* the sys sample_cb of this generation ran before us */
	int		rows_nr;
	row_t		rows[CLIENT_MAX_ROWS];
	int		stale_rows;	/* rows that left in the last sample, walked leaves first */
	int		stale_pids[CLIENT_MAX_ROWS];
	int		hierarchy_changed;
	int		order;		/* when this chart's callback ran, among all charts */
	int		*order_counter;
	int		peer_generation;	/* another chart's proc->generation, seen from our callback */
	vmon_proc_t	*peer;
} chart_t;

static void client_sample_callback(vmon_t *vmon, void *arg)
{
	client_t *client = arg;
	vmon_sys_stat_t *sys_stat = vmon->stores[VMON_STORE_SYS_STAT];

	client->this_total = sys_stat->user + sys_stat->nice + sys_stat->system + sys_stat->idle +
			     sys_stat->iowait + sys_stat->irq + sys_stat->softirq + sys_stat->steal;
	client->total_delta = client->this_total - client->last_total;
	client->last_total = client->this_total;
	client->last_user = sys_stat->user;
	client->last_system = sys_stat->system;
	client->sys_generation = vmon->generation;
	client->sys_calls++;
}

static void client_ctor(vmon_t *vmon, vmon_proc_t *proc)
{
	client_t *client = vmon->sample_cb_arg;

	proc->foo = calloc(1, sizeof(perproc_t));
	client->ctors++;
}

static void client_dtor(vmon_t *vmon, vmon_proc_t *proc)
{
	client_t *client = vmon->sample_cb_arg;

	if (proc->foo) {
		free(proc->foo);
		proc->foo = NULL;
	}
	client->dtors++;
}

static int client_init(client_t *client, vmon_flags_t flags)
{
	memset(client, 0, sizeof(*client));
	if (!vmon_init(&client->vmon, flags, CLIENT_SYS_WANTS, CLIENT_PROC_WANTS))
		return 0;
	client->vmon.proc_ctor_cb = client_ctor;
	client->vmon.proc_dtor_cb = client_dtor;
	client->vmon.sample_cb = client_sample_callback;
	client->vmon.sample_cb_arg = client;
	return 1;
}

/* comm, then the arguments after argv[0]; threads are marked and show no argv */
static void row_text(const vmon_proc_t *proc, char *buf, size_t size)
{
	vmon_proc_stat_t *proc_stat = proc->stores[VMON_STORE_PROC_STAT];
	int len = 0;

	buf[0] = '\0';
	if (proc->is_thread)
		len += snprintf(buf + len, size - len, "~");
	if (proc_stat->comm.len)
		len += snprintf(buf + len, size - len, "%.*s", (int)proc_stat->comm.len - 1, proc_stat->comm.array);
	if (!proc->is_thread) {
		for (int i = 1; i < proc_stat->argc && len < (int)size; i++)
			len += snprintf(buf + len, size - len, " %s", proc_stat->argv[i]);
	}
}

static void draw_row(chart_t *chart, vmon_proc_t *proc, int depth)
{
	vmon_sys_stat_t *sys_stat = chart->client->vmon.stores[VMON_STORE_SYS_STAT];
	vmon_proc_stat_t *proc_stat = proc->stores[VMON_STORE_PROC_STAT];
	perproc_t *ctxt = proc->foo;
	row_t *row;

	if (chart->rows_nr == CLIENT_MAX_ROWS)
		return;
	row = &chart->rows[chart->rows_nr++];
	row->pid = proc->pid;
	row->depth = depth;
	row->is_new = proc->is_new;
	row->is_stale = proc->is_stale;
	row->is_thread = proc->is_thread;
	row->is_threaded = proc->is_threaded;
	row->utime_changed = BITTEST(proc_stat->changed, VMON_PROC_STAT_UTIME) != 0;
	row_text(proc, row->text, sizeof(row->text));
	snprintf(row->wchan, sizeof(row->wchan), "%.*s", (int)proc_stat->wchan.len, proc_stat->wchan.array);
	row->wall_secs = !proc_stat->start || proc_stat->start > sys_stat->boottime ? -1.0 :
			 (double)(sys_stat->boottime - proc_stat->start) / (double)chart->client->vmon.ticks_per_sec;

	/* per-sample arithmetic, once a generation however many charts show the process */
	if (ctxt && ctxt->generation != chart->client->vmon.generation) {
		ctxt->utime_delta = proc_stat->utime - ctxt->last_utime;
		ctxt->last_utime = proc_stat->utime;
		ctxt->last_stime = proc_stat->stime;
		ctxt->generation = chart->client->vmon.generation;
		ctxt->updates++;
	}
}

/* a subtree that left: its rows are given up leaves first, last sibling first */
static void drop_stale(chart_t *chart, vmon_proc_t *proc)
{
	vmon_proc_t *child;

	list_for_each_entry_prev(child, &proc->children, siblings)
		drop_stale(chart, child);
	if (!proc->is_thread) {
		list_for_each_entry_prev(child, &proc->threads, threads)
			drop_stale(chart, child);
	}
	if (chart->stale_rows < CLIENT_MAX_ROWS)
		chart->stale_pids[chart->stale_rows++] = proc->pid;
}

/* threads first, then children, depth first */
static void draw_tree(chart_t *chart, vmon_proc_t *proc, int depth)
{
	vmon_proc_t *child;

	if (proc->is_stale) {
		drop_stale(chart, proc);
		return;
	}
	draw_row(chart, proc, depth);
	if (!proc->is_thread) {
		list_for_each_entry(child, &proc->threads, threads)
			draw_tree(chart, child, depth + 1);
	}
	list_for_each_entry(child, &proc->children, siblings)
		draw_tree(chart, child, depth + 1);
}

static int hierarchy_changed(vmon_proc_t *proc)
{
	vmon_proc_t *child;

	if (proc->children_changed || proc->threads_changed)
		return 1;
	list_for_each_entry(child, &proc->children, siblings) {
		if (hierarchy_changed(child))
			return 1;
	}
	return 0;
}

static void proc_sample_callback(vmon_t *vmon, void *sys_cb_arg, vmon_proc_t *proc, void *proc_cb_arg)
{
	client_t *client = sys_cb_arg;
	chart_t *chart = proc_cb_arg;

	chart->callbacks++;
	chart->sys_before = client->sys_generation == vmon->generation;
	chart->rows_nr = 0;
	chart->stale_rows = 0;
	chart->hierarchy_changed = hierarchy_changed(proc);
	if (chart->order_counter)
		chart->order = ++*chart->order_counter;
	if (chart->peer)
		chart->peer_generation = chart->peer->generation;
	draw_tree(chart, proc, 0);
}

static vmon_proc_t *chart_monitor(client_t *client, chart_t *chart, int pid)
{
	memset(chart, 0, sizeof(*chart));
	chart->client = client;
	chart->proc = vmon_proc_monitor(&client->vmon, pid, VMON_WANT_PROC_INHERIT,
					(void (*)(vmon_t *, void *, vmon_proc_t *, void *))proc_sample_callback, chart);
	return chart->proc;
}

static void chart_unmonitor(client_t *client, chart_t *chart)
{
	vmon_proc_unmonitor(&client->vmon, chart->proc,
			    (void (*)(vmon_t *, void *, vmon_proc_t *, void *))proc_sample_callback, chart);
}

/* ---------------------------------------------------------------------------
 * The children the client watches.
 */

/* a process with two threads blocked on ctl (one byte lets one go) and a grandchild running "sleep 30" */
typedef struct family {
	pid_t	pid, grandchild;
	int	ctl[2];		/* test -> threads: one byte lets one thread exit */
	int	ready[2];	/* child -> test: the grandchild's pid, once it is forked */
} family_t;

static void *family_thread(void *arg)
{
	char c;

	while (read(*(int *)arg, &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static int family_main(void *arg)
{
	family_t *f = arg;
	pthread_t threads[2];
	pid_t grandchild;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (int i = 0; i < 2; i++) {
		if (pthread_create(&threads[i], NULL, family_thread, &f->ctl[0]) != 0)
			return 1;
	}
	grandchild = fork();
	if (grandchild == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execlp("sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	if (write(f->ready[1], &grandchild, sizeof(grandchild)) != sizeof(grandchild))
		return 1;
	/* reap the grandchild when the test kills it, then wait to be killed */
	for (;;) {
		if (waitpid(-1, NULL, 0) < 0 && errno == ECHILD)
			pause();
	}
	return 0;
}

/* a child that sleeps until killed, and dies with the test if the test dies first */
static int sleeper_main(void *arg)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (;;)
		pause();
	return 0;
}

static int count_tasks(pid_t pid)
{
	char path[64];
	int n = 0;
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	if (!(d = opendir(path)))
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static bool has_exec_sleep(void *arg)
{
	char path[64], buf[64] = "";
	pid_t pid = (pid_t)(intptr_t)arg;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n == 9 && memcmp(buf, "sleep\0" "30\0", 9) == 0;
}

static bool family_has_3_tasks(void *arg)
{
	return count_tasks((pid_t)(intptr_t)arg) == 3;
}

static bool family_has_2_tasks(void *arg)
{
	return count_tasks((pid_t)(intptr_t)arg) == 2;
}

static bool is_gone(void *arg)
{
	return proc_state((pid_t)(intptr_t)arg) == '?';
}

static void family_spawn(family_t *f)
{
	pid_t grandchild = 0;

	assert_int_equal(pipe2(f->ctl, O_CLOEXEC), 0);
	assert_int_equal(pipe2(f->ready, O_CLOEXEC), 0);
	f->grandchild = 0;
	f->pid = spawn_fn(family_main, f);
	close(f->ready[1]);
	close(f->ctl[0]);
	assert_int_equal(read(f->ready[0], &grandchild, sizeof(grandchild)), (ssize_t)sizeof(grandchild));
	close(f->ready[0]);
	f->grandchild = grandchild;
	assert_true(wait_for(has_exec_sleep, (void *)(intptr_t)grandchild, 5000));
	assert_true(wait_for(family_has_3_tasks, (void *)(intptr_t)f->pid, 5000));
}

static void family_free(family_t *f)
{
	if (f->grandchild > 0)
		kill(f->grandchild, SIGKILL);
	if (f->pid > 0)
		reap(f->pid, SIGKILL);
	close(f->ctl[1]);
}

static const row_t *find_row(const chart_t *chart, int pid, int is_thread)
{
	for (int i = 0; i < chart->rows_nr; i++) {
		if (chart->rows[i].pid == pid && chart->rows[i].is_thread == is_thread)
			return &chart->rows[i];
	}
	return NULL;
}

static void assert_every_foo(vmon_proc_t *proc)
{
	vmon_proc_t *child;

	assert_non_null(proc->foo);
	list_for_each_entry(child, &proc->threads, threads) {
		if (!proc->is_thread)
			assert_non_null(child->foo);
	}
	list_for_each_entry(child, &proc->children, siblings)
		assert_every_foo(child);
}

/* ---------------------------------------------------------------------------
 * The tests.
 */

/* a chart follows a process, its threads and its child through their lives */
static void test_chart_of_a_family(void **state)
{
	client_t client;
	chart_t chart;
	family_t fam;
	const row_t *row;
	vmon_proc_t *proc;
	int ctors;

	family_spawn(&fam);
	assert_true(client_init(&client, VMON_FLAG_2PASS));
	proc = chart_monitor(&client, &chart, fam.pid);
	assert_non_null(proc);
	assert_int_equal(client.ctors, 1);	/* the monitored process is read at once */

	/* 1: everything is new and drawn, parent first, threads before children */
	assert_true(vmon_sample(&client.vmon));
	assert_int_equal(client.sys_calls, 1);
	assert_int_equal(chart.callbacks, 1);
	assert_true(chart.sys_before);
	assert_int_equal(chart.rows_nr, 5);	/* the process, its 3 threads (leader included), the grandchild */
	assert_int_equal(client.ctors, 5);
	assert_int_equal(chart.rows[0].pid, fam.pid);
	assert_int_equal(chart.rows[0].depth, 0);
	assert_true(chart.rows[0].is_new);
	assert_true(chart.rows[0].is_threaded);
	assert_true(proc->is_threaded);
	for (int i = 1; i <= 3; i++) {
		assert_true(chart.rows[i].is_thread);
		assert_int_equal(chart.rows[i].depth, 1);
		assert_true(chart.rows[i].text[0] == '~');
	}
	assert_non_null(find_row(&chart, fam.pid, 1));	/* the leader's thread node */
	assert_int_equal(chart.rows[4].pid, fam.grandchild);
	assert_int_equal(chart.rows[4].depth, 1);
	assert_string_equal(chart.rows[4].text, "sleep 30");	/* comm.len - 1, then argv[1..argc) */
	assert_true(chart.rows[4].utime_changed);		/* a first sample marks every field */
	assert_true(chart.rows[4].wchan[0] != '\0');
	assert_true(chart.rows[4].wall_secs >= 0 && chart.rows[4].wall_secs < 300);
	assert_true(chart.rows[0].wall_secs >= chart.rows[4].wall_secs);
	assert_true(chart.hierarchy_changed);
	assert_every_foo(proc);
	assert_int_equal(proc->generation, client.vmon.generation);
	assert_int_equal(((perproc_t *)proc->foo)->updates, 1);

	/* 2: nothing came or went; a sleeping grandchild used no CPU */
	assert_true(vmon_sample(&client.vmon));
	assert_int_equal(chart.callbacks, 2);
	assert_int_equal(chart.rows_nr, 5);
	assert_int_equal(chart.stale_rows, 0);
	assert_false(chart.hierarchy_changed);
	for (int i = 0; i < chart.rows_nr; i++)
		assert_false(chart.rows[i].is_new);
	row = find_row(&chart, fam.grandchild, 0);
	assert_non_null(row);
	assert_false(row->utime_changed);
	assert_int_equal(client.ctors, 5);
	assert_int_equal(client.dtors, 0);

	/* 3: a thread exits: stale for one sample, then gone, its dtor run */
	assert_int_equal(write(fam.ctl[1], "x", 1), 1);
	assert_true(wait_for(family_has_2_tasks, (void *)(intptr_t)fam.pid, 5000));
	assert_true(vmon_sample(&client.vmon));
	assert_true(proc->threads_changed);
	assert_true(chart.hierarchy_changed);
	assert_int_equal(chart.stale_rows, 1);
	assert_int_equal(chart.rows_nr, 4);
	assert_int_equal(client.dtors, 0);
	assert_true(vmon_sample(&client.vmon));
	assert_int_equal(chart.stale_rows, 0);
	assert_int_equal(chart.rows_nr, 4);
	assert_int_equal(client.dtors, 1);

	/* 4: the grandchild is killed and reaped: stale once, then gone */
	kill(fam.grandchild, SIGKILL);
	assert_true(wait_for(is_gone, (void *)(intptr_t)fam.grandchild, 5000));
	assert_true(vmon_sample(&client.vmon));
	assert_true(proc->children_changed);
	assert_int_equal(chart.stale_rows, 1);
	assert_int_equal(chart.stale_pids[0], fam.grandchild);
	assert_int_equal(chart.rows_nr, 3);
	assert_true(vmon_sample(&client.vmon));
	assert_int_equal(chart.rows_nr, 3);
	assert_int_equal(client.dtors, 2);
	assert_true(list_empty(&proc->children));
	fam.grandchild = 0;

	/* the last chart goes: the process and its threads leave, every ctor has its dtor */
	ctors = client.ctors;
	chart_unmonitor(&client, &chart);
	assert_int_equal(client.dtors, ctors);
	assert_true(list_empty(&client.vmon.processes));
	vmon_destroy(&client.vmon);
	family_free(&fam);
}

/*
 * Callbacks run bottom-up; with VMON_FLAG_2PASS after every process was
 * sampled, without it as each monitored subtree is done.
 */
static void check_callback_order(vmon_flags_t flags)
{
	client_t client;
	chart_t parent_chart, child_chart, other_chart;
	family_t fam;
	pid_t other = spawn_fn(sleeper_main, NULL);
	int order = 0;

	family_spawn(&fam);
	assert_true(client_init(&client, flags));
	/* the grandchild is monitored on its own too, before its parent finds it */
	assert_non_null(chart_monitor(&client, &parent_chart, fam.pid));
	assert_non_null(chart_monitor(&client, &child_chart, fam.grandchild));
	assert_non_null(chart_monitor(&client, &other_chart, other));
	parent_chart.order_counter = child_chart.order_counter = other_chart.order_counter = &order;
	parent_chart.peer = other_chart.proc;

	assert_true(vmon_sample(&client.vmon));
	/* the grandchild moved under its parent, and its callback ran first */
	assert_ptr_equal(child_chart.proc->parent, parent_chart.proc);
	assert_int_equal(child_chart.order, 1);
	assert_int_equal(parent_chart.order, 2);
	assert_int_equal(other_chart.order, 3);
	assert_true(parent_chart.sys_before && child_chart.sys_before && other_chart.sys_before);
	assert_non_null(find_row(&parent_chart, fam.grandchild, 0));
	if (flags & VMON_FLAG_2PASS)
		assert_int_equal(parent_chart.peer_generation, client.vmon.generation);	/* already sampled */
	else
		assert_int_equal(parent_chart.peer_generation, client.vmon.generation - 1);	/* not yet */

	chart_unmonitor(&client, &child_chart);
	chart_unmonitor(&client, &parent_chart);
	chart_unmonitor(&client, &other_chart);
	assert_int_equal(client.dtors, client.ctors);
	vmon_destroy(&client.vmon);
	family_free(&fam);
	reap(other, SIGKILL);
}

static void test_callbacks_2pass(void **state)
{
	check_callback_order(VMON_FLAG_2PASS);
}

static void test_callbacks_1pass(void **state)
{
	check_callback_order(VMON_FLAG_NONE);
}

/*
 * A monitored process that exits, as the original keeps it: never stale (a
 * chart drops a stale root's rows), at the top with its last data, state X,
 * its generation no longer following the instance's, its callbacks running
 * and its foo there, until the vmon_proc_unmonitor() that runs its dtor.
 */
static void test_monitored_exit(void **state)
{
	client_t client;
	chart_t chart;
	pid_t pid = spawn_fn(sleeper_main, NULL);
	vmon_proc_t *proc;

	assert_true(client_init(&client, VMON_FLAG_2PASS));
	proc = chart_monitor(&client, &chart, pid);
	assert_non_null(proc);
	assert_true(vmon_sample(&client.vmon));
	assert_int_equal(chart.callbacks, 1);
	assert_true(chart.rows[0].is_new);

	reap(pid, SIGKILL);
	assert_true(vmon_sample(&client.vmon));
	assert_int_equal(chart.callbacks, 2);
	assert_false(proc->is_stale);
	assert_int_equal(chart.stale_rows, 0);
	assert_int_equal(chart.rows_nr, 1);
	assert_int_equal(((vmon_proc_stat_t *)proc->stores[VMON_STORE_PROC_STAT])->state, 'X');
	assert_int_equal(client.dtors, 0);

	for (int i = 0; i < 2; i++) {
		int generation = proc->generation;

		assert_true(vmon_sample(&client.vmon));
		assert_int_equal(chart.callbacks, 3 + i);	/* still drawn */
		assert_int_equal(chart.rows_nr, 1);
		assert_false(chart.rows[0].is_new || chart.rows[0].is_stale);
		assert_int_equal(proc->generation, generation);
		assert_true(proc->generation < client.vmon.generation);
		assert_non_null(proc->foo);
		assert_int_equal(client.dtors, 0);
	}
	assert_ptr_equal(list_first_entry(&client.vmon.processes, vmon_proc_t, siblings), proc);
	assert_null(vmon_proc_lookup(&client.vmon, pid));
	chart_unmonitor(&client, &chart);
	assert_int_equal(client.dtors, 1);
	assert_int_equal(client.dtors, client.ctors);
	assert_true(list_empty(&client.vmon.processes));
	vmon_destroy(&client.vmon);
}

/* the original's "no such pid" fails now rather than giving a node that never fills */
static void test_monitor_missing_pid(void **state)
{
	client_t client;
	chart_t chart;
	pid_t pid = spawn_fn(sleeper_main, NULL);

	reap(pid, SIGKILL);
	assert_true(client_init(&client, VMON_FLAG_2PASS));
	errno = 0;
	assert_null(chart_monitor(&client, &chart, pid));
	assert_int_equal(errno, ESRCH);
	assert_int_equal(client.ctors, 0);
	vmon_destroy(&client.vmon);
}

/* ---------------------------------------------------------------------------
 * Every member and symbol of the original libvmon's field tables (its
 * defs/{proc_stat,proc_vm,proc_io,sys_stat,sys_vm,proc_files}.def), as a
 * client may name them: each member's offset taken, each symbol used as an
 * index.  A name the library lacks fails the build of this file.
 */
#define ORIG(_descs, _store, _type, _m, _sym)	{ &_descs[_store], offsetof(_type, _m), VMON_ ## _sym }
#define PSTAT(_m, _sym)	ORIG(vmon_proc_store_descs, VMON_STORE_PROC_STAT, vmon_proc_stat_t, _m, PROC_STAT_ ## _sym)
#define PVM(_m, _sym)	ORIG(vmon_proc_store_descs, VMON_STORE_PROC_VM, vmon_proc_vm_t, _m, PROC_VM_ ## _sym)
#define PIO(_m, _sym)	ORIG(vmon_proc_store_descs, VMON_STORE_PROC_IO, vmon_proc_io_t, _m, PROC_IO_ ## _sym)
#define SSTAT(_m, _sym)	ORIG(vmon_sys_store_descs, VMON_STORE_SYS_STAT, vmon_sys_stat_t, _m, SYS_STAT_ ## _sym)
#define SVM(_m, _sym)	ORIG(vmon_sys_store_descs, VMON_STORE_SYS_VM, vmon_sys_vm_t, _m, SYS_VM_ ## _sym)
#define PFD(_m, _sym)	ORIG(vmon_proc_store_descs, VMON_STORE_PROC_FILES, vmon_proc_fd_t, _m, FILES_ ## _sym)
static const struct { const vmon_store_desc_t *desc; size_t offset; int sym; } original_names[] = {
	PSTAT(comm, COMM), PSTAT(cmdline, CMDLINE), PSTAT(argc, ARGC), PSTAT(argv, ARGV),
	PSTAT(exe, EXE), PSTAT(wchan, WCHAN), PSTAT(pid, PID), PSTAT(state, STATE),
	PSTAT(ppid, PPID), PSTAT(pgrp, PGID), PSTAT(sid, SID), PSTAT(tty_nr, TTY_NR),
	PSTAT(tpgid, TPGID), PSTAT(flags, FLAGS), PSTAT(minflt, MINFLT), PSTAT(cminflt, CMINFLT),
	PSTAT(majflt, MAJFLT), PSTAT(cmajflt, CMAJFLT), PSTAT(utime, UTIME), PSTAT(stime, STIME),
	PSTAT(cutime, CUTIME), PSTAT(cstime, CSTIME), PSTAT(priority, PRIORITY), PSTAT(nice, NICE),
	PSTAT(num_threads, NUM_THREADS), PSTAT(start, START), PSTAT(vsize, VSIZE), PSTAT(rss, RSS),
	PSTAT(rsslim, RSSLIM), PSTAT(wchan_addr, WCHAN_ADDR), PSTAT(processor, PROCESSOR),
	PSTAT(delay_blkio, DELAY_BLKIO), PSTAT(guest_time, GUEST_TIME),
	PSTAT(cguest_time, CGUEST_TIME), PVM(size_pages, SIZE_PAGES),
	PVM(resident_pages, RESIDENT_PAGES), PVM(shared_pages, SHARED_PAGES),
	PVM(text_pages, TEXT_PAGES), PVM(data_pages, DATA_PAGES), PIO(rchars, RCHAR),
	PIO(wchars, WCHAR), PIO(syscr, SYSCR), PIO(syscw, SYSCW), PIO(read_bytes, READBYTES),
	PIO(write_bytes, WRITEBYTES), PIO(cancelled_write_bytes, CANCELLED_WRITEBYTES),
	SSTAT(user, CPU_USER), SSTAT(nice, CPU_NICE), SSTAT(system, CPU_SYS),
	SSTAT(idle, CPU_IDLE), SSTAT(iowait, CPU_IOWAIT), SSTAT(irq, CPU_IRQ),
	SSTAT(softirq, CPU_SIRQ), SSTAT(steal, CPU_STEAL), SSTAT(guest, CPU_GUEST),
	SVM(total_kb, TOTAL_KB), SVM(free_kb, FREE_KB), SVM(buffers_kb, BUFFERS_KB),
	SVM(cached_kb, CACHED_KB), SVM(swapcached_kb, SWAPCACHED_KB), SVM(active_kb, ACTIVE_KB),
	SVM(inactive_kb, INACTIVE_KB), SVM(anon_active_kb, ANON_ACTIVE_KB),
	SVM(anon_inactive_kb, ANON_INACTIVE_KB), SVM(file_active_kb, FILE_ACTIVE_KB),
	SVM(file_inactive_kb, FILE_INACTIVE_KB), SVM(unevictable_kb, UNEVICTABLE_KB),
	SVM(mlocked_kb, MLOCKED_KB), SVM(swap_total_kb, SWAP_TOTAL_KB),
	SVM(swap_free_kb, SWAP_FREE_KB), SVM(dirty_kb, DIRTY_KB), SVM(writeback_kb, WRITEBACK_KB),
	SVM(anonpages_kb, ANONPAGES_KB), SVM(mapped_kb, MAPPED_KB), SVM(shmem_kb, SHMEM_KB),
	SVM(slab_kb, SLAB_KB), SVM(sreclaimable_kb, SRECLAIMABLE_KB),
	SVM(sunreclaimable_kb, SUNRECLAIMABLE_KB), SVM(kernelstack_kb, KERNELSTACK_KB),
	SVM(pagetables_kb, PAGETABLES_KB), SVM(nfs_unstable_kb, NFS_UNSTABLE_KB),
	SVM(bounce_kb, BOUNCE_KB), SVM(writebacktmp_kb, WRITEBACKTMP_KB),
	SVM(commitlimit_kb, COMMITLIMIT_KB),
	{ NULL, offsetof(vmon_sys_vm_t, commited_as_kb), VMON_SYS_VM_COMMITTED_AS_KB },	/* a copy, not a row */
	SVM(vmalloctotal_kb, VMALLOC_TOTAL_KB), SVM(vmallocused_kb, VMALLOC_USED_KB),
	SVM(vmallocchunk_kb, VMALLOC_CHUNK_KB), SVM(hugepages_total, HUGEPAGES_TOTAL),
	SVM(hugepages_free, HUGEPAGES_FREE), SVM(hugepages_reserved, HUGEPAGES_RESERVED),
	SVM(hugepages_surplus, HUGEPAGES_SURPLUS), SVM(hugepage_size_kb, HUGEPAGE_SIZE_KB),
	SVM(directmap4k_kb, DIRECTMAP_4K_KB), SVM(directmap2m_kb, DIRECTMAP_4M_KB),
	PFD(fdnum, FDNUM), PFD(object_path, OBJPATH),
};

static bool field35_is_1(void *arg)
{
	return proc_stat_field((pid_t)(intptr_t)arg, 35) == 1;
}

/* the names the library gives the original's data hold the data: wchan_addr, commited_as_kb */
static void test_original_names(void **state)
{
	pid_t pid = spawn_fn(sleeper_main, NULL);
	vmon_proc_stat_t *proc_stat;
	vmon_sys_vm_t *sys_vm;
	vmon_proc_t *proc;
	vmon_t vmon;

	(void)state;
	/* each symbol indexes its own member's row */
	for (size_t i = 0; i < sizeof(original_names) / sizeof(original_names[0]); i++) {
		if (original_names[i].desc)
			assert_int_equal(original_names[i].desc->fields[original_names[i].sym].offset,
					 original_names[i].offset);
	}
	assert_int_equal(VMON_SYS_VM_DIRECTMAP_4M_KB, VMON_SYS_VM_DIRECTMAP_2M_KB);

	assert_true(vmon_init(&vmon, VMON_FLAG_NONE, VMON_WANT_SYS_VM, VMON_WANT_PROC_STAT));
	proc = vmon_proc_monitor(&vmon, pid, VMON_WANT_PROC_INHERIT, NULL, NULL);
	assert_non_null(proc);
	/* a child of one thread, asleep in pause(): the kernel says 1, and so must the store, whichever source filled it */
	assert_true(wait_for(field35_is_1, (void *)(intptr_t)pid, 10000));
	assert_true(vmon_sample(&vmon));
	assert_true(vmon_sample(&vmon));
	proc_stat = proc->stores[VMON_STORE_PROC_STAT];
	assert_int_equal(proc_stat_field(pid, 35), 1);
	assert_int_equal(proc_stat->wchan_addr, 1);
	assert_true(BITTEST(proc_stat->present, VMON_PROC_STAT_WCHAN_ADDR));
	sys_vm = vmon.stores[VMON_STORE_SYS_VM];
	assert_true(BITTEST(sys_vm->present, VMON_SYS_VM_COMMITTED_AS_KB));
	assert_true(sys_vm->committed_as_kb > 0);
	assert_int_equal(sys_vm->commited_as_kb, sys_vm->committed_as_kb);
	vmon_proc_unmonitor(&vmon, proc, NULL, NULL);
	vmon_destroy(&vmon);
	reap(pid, SIGKILL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chart_of_a_family),
		cmocka_unit_test(test_callbacks_2pass),
		cmocka_unit_test(test_callbacks_1pass),
		cmocka_unit_test(test_monitored_exit),
		cmocka_unit_test(test_monitor_missing_pid),
		cmocka_unit_test(test_original_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
