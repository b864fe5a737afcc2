/*
 * test_model.c: vtop's model on fixture /proc trees: snapshots copied out of
 * the library, tree flattening, collapse, sort, filter, search, selection
 * and exited rows, and the column table.  The fixture trees are the ground
 * truth: every expected line below follows from the processes written into
 * them.
 */
#include "config.h"

#ifdef HAVE_MALLINFO2
#include <malloc.h>
#endif
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"
#include "vtop.h"
#include "batch/batch.h"
#include "data/columns.h"
#include "data/model.h"
#include "data/room.h"
#include "data/sampler.h"

typedef struct world {
	fixture_t	fx;
	vt_config_t	cfg;
	vt_source_t	src;
	vt_snapshot_t	snap;
	vt_view_t	view;
	double		uptime;
} world_t;

/*
 *	1 init
 *	├─100 /bin/sh -c work
 *	│  ├─101 sleep 10
 *	│  └─102 sleep 20
 *	└─200 bash
 *	2 kthreadd
 *	└─3 [kworker/0:0]
 */
static void make_tree(fixture_t *fx)
{
	static const char *const init_argv[] = { "/sbin/init", NULL };
	static const char *const sh_argv[] = { "/bin/sh", "-c", "work", NULL };
	static const char *const s1_argv[] = { "sleep", "10", NULL };
	static const char *const s2_argv[] = { "sleep", "20", NULL };
	static const char *const bash_argv[] = { "bash", NULL };

	fixture_system(fx);
	fixture_printf(fx, "loadavg", "0.50 0.25 0.10 1/123 4567\n");
	fixture_proc(fx, 1, 0, "init", 'S', 5, init_argv);
	fixture_proc(fx, 2, 0, "kthreadd", 'S', 5, NULL);
	fixture_proc(fx, 3, 2, "kworker/0:0", 'I', 6, NULL);
	fixture_proc(fx, 100, 1, NULL, 'S', 500, sh_argv);
	fixture_proc(fx, 101, 100, NULL, 'S', 510, s1_argv);
	fixture_proc(fx, 102, 100, NULL, 'S', 520, s2_argv);
	fixture_proc(fx, 200, 1, NULL, 'R', 600, bash_argv);
}

/* a process's stat line again, with other CPU times and (for a zombie) an exit status */
static void proc_stat(fixture_t *fx, int pid, int ppid, const char *comm, char state, unsigned long long start,
		      unsigned long long utime, unsigned long long stime, int exit_code)
{
	fixture_stat_t st;
	char path[64];

	fixture_stat_init(&st, pid, ppid, comm, state, start);
	fixture_stat_set(&st, 14, "%llu", utime);
	fixture_stat_set(&st, 15, "%llu", stime);
	fixture_stat_set(&st, 52, "%d", exit_code);
	if (state == 'Z') {
		/* a zombie has no memory map: its code and stack addresses read 0, and its cmdline empty */
		for (int f = 26; f <= 28; f++)
			fixture_stat_set(&st, f, "0");
		snprintf(path, sizeof(path), "%d/cmdline", pid);
		fixture_write(fx, path, "", 0);
	}
	snprintf(path, sizeof(path), "%d/stat", pid);
	fixture_stat_write(fx, path, &st, FIXTURE_STAT_FIELDS, true);
}

static void tick(world_t *w, double secs)
{
	w->uptime += secs;
	fixture_printf(&w->fx, "uptime", "%.2f 2000.00\n", w->uptime);
}

static void sample(world_t *w)
{
	assert_int_equal(vt_source_sample(&w->src, &w->snap), 0);
	vt_view_build(&w->view, &w->snap);
}

static void world_open(world_t *w)
{
	char err[256];

	memset(w, 0, sizeof(*w));
	assert_int_equal(vt_columns_init(), 0);
	fixture_init(&w->fx);
	make_tree(&w->fx);
	w->uptime = 1234.56;
	vt_config_defaults(&w->cfg);
	w->cfg.exited_keep = 3;
	if (vt_source_init(&w->src, &w->cfg, vt_columns_wants(w->cfg.columns, w->cfg.columns_nr), w->fx.root,
			   err, sizeof(err)) < 0)
		fail_msg("vt_source_init: %s", err);
	vt_snapshot_init(&w->snap);
	vt_view_init(&w->view);
	vt_view_configure(&w->view, &w->cfg);
	sample(w);
}

static void world_close(world_t *w)
{
	vt_view_free(&w->view);
	vt_snapshot_free(&w->snap);
	vt_source_fini(&w->src);
	fixture_free(&w->fx);
}

/* the pids of the lines, in order, into a string: "1 100 101 102 200" */
static const char *line_pids(const world_t *w)
{
	static char buf[1024];
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < vt_view_lines(&w->view); i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%d", i ? " " : "",
					vt_view_row(&w->view, &w->snap, i)->pid);
	return buf;
}

/* every line's tree prefix (vt_view_tree_prefix(), ASCII), '|' after each */
static const char *line_prefixes(const world_t *w)
{
	static char buf[4096];
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < vt_view_lines(&w->view) && len + 2 < sizeof(buf); i++) {
		len += vt_view_tree_prefix(&w->view, i, false, 60, buf + len, sizeof(buf) - len - 1);
		if (len > sizeof(buf) - 2)
			len = sizeof(buf) - 2;
		buf[len++] = '|';
		buf[len] = '\0';
	}
	return buf;
}

static const vt_row_t *row_of(const world_t *w, int pid)
{
	int i = vt_snapshot_find(&w->snap, pid, 0);

	if (i < 0)
		fail_msg("pid %d is not in the snapshot", pid);
	return &w->snap.rows[i];
}

/*
 * Processes with the same command line share one text (interned), in the
 * screen's way (rows copied, borrow off) and vtop -b's (borrowing the
 * node's): workers of a server, a fork storm's children.  Another command
 * line has its own.
 */
static void test_command_text_shared(void **state)
{
	static const char *const worker_argv[] = { "nginx:", "worker", "process", NULL };
	world_t w;

	(void)state;
	world_open(&w);
	for (int pid = 300; pid < 304; pid++)
		fixture_proc(&w.fx, pid, 1, NULL, 'S', 700 + pid, worker_argv);
	for (int borrow = 0; borrow < 2; borrow++) {
		vt_source_set_borrow(&w.src, borrow);
		sample(&w);
		sample(&w);
		assert_string_equal(row_of(&w, 300)->command, "nginx: worker process");
		for (int pid = 301; pid < 304; pid++)
			assert_ptr_equal(row_of(&w, pid)->command, row_of(&w, 300)->command);
		assert_string_equal(row_of(&w, 101)->command, "sleep 10");
		assert_ptr_not_equal(row_of(&w, 101)->command, row_of(&w, 300)->command);
	}
	world_close(&w);
}

static void test_snapshot_copies(void **state)
{
	world_t w;
	const vt_row_t *sh;
	const vmon_proc_stat_t *copy, *lib;

	world_open(&w);
	assert_int_equal(w.snap.rows_nr, 7);
	sh = row_of(&w, 100);
	assert_int_equal(sh->ppid, 1);
	assert_int_equal(w.snap.rows[sh->parent].pid, 1);
	assert_string_equal(sh->command, "/bin/sh -c work");
	assert_int_equal(sh->arg0_base, strlen("/bin/"));
	assert_int_equal(sh->state, 'S');
	/* the copy is the snapshot's own: its argv points into its own cmdline, not the library's */
	copy = sh->stores[VMON_STORE_PROC_STAT];
	lib = vmon_proc_lookup(&w.src.vmon, 100)->stores[VMON_STORE_PROC_STAT];
	assert_ptr_not_equal(copy, lib);
	assert_ptr_not_equal(copy->cmdline.array, lib->cmdline.array);
	assert_true(copy->argv[2] >= copy->cmdline.array && copy->argv[2] < copy->cmdline.array + copy->cmdline.len);
	assert_string_equal(copy->argv[2], "work");
	assert_string_equal(row_of(&w, 3)->command, "[kworker/0:0]");
	assert_true(row_of(&w, 3)->flags & VT_ROW_KTHREAD);
	assert_true(row_of(&w, 2)->flags & VT_ROW_KTHREAD);
	assert_false(row_of(&w, 100)->flags & VT_ROW_KTHREAD);
	/* tasks by state, the header's figures */
	assert_int_equal(w.snap.procs, 7);
	assert_int_equal(w.snap.running, 1);
	assert_int_equal(w.snap.idle, 1);
	assert_int_equal(w.snap.kthreads, 2);
	assert_int_equal(w.snap.mem_total_kb, 16000000);
	assert_int_equal(w.snap.cpus_nr, 2);
	world_close(&w);
}

/*
 * The screen's snapshots share the copy of a process whose stores did not
 * change, and each keeps the copy it was built with when one did: the older
 * snapshot still shows the values of its sample, the newer the new ones.
 */
static void test_snapshot_shares(void **state)
{
	static const char *const again[] = { "nap", "30", NULL };
	world_t w;
	vt_snapshot_t older;
	unsigned long long ticks;
	const vmon_proc_stat_t *s100, *s101, *n100, *n101, *n102;
	int i;

	world_open(&w);
	tick(&w, 1);
	sample(&w);
	older = w.snap;
	vt_snapshot_init(&w.snap);
	s101 = older.rows[vt_snapshot_find(&older, 101, 0)].stores[VMON_STORE_PROC_STAT];
	ticks = s101->utime + s101->stime;
	assert_int_not_equal(ticks, 100);
	proc_stat(&w.fx, 101, 100, "sleep", 'S', 510, 70, 30, 0);
	fixture_proc(&w.fx, 102, 100, NULL, 'S', 520, again);
	tick(&w, 1);
	sample(&w);
	s100 = older.rows[vt_snapshot_find(&older, 100, 0)].stores[VMON_STORE_PROC_STAT];
	n100 = row_of(&w, 100)->stores[VMON_STORE_PROC_STAT];
	n101 = row_of(&w, 101)->stores[VMON_STORE_PROC_STAT];
	n102 = row_of(&w, 102)->stores[VMON_STORE_PROC_STAT];
	/* unchanged: one copy, still the snapshot's own and not the library's, and one command text */
	assert_ptr_equal(s100, n100);
	assert_ptr_equal(older.rows[vt_snapshot_find(&older, 100, 0)].command, row_of(&w, 100)->command);
	assert_string_equal(row_of(&w, 100)->command, "/bin/sh -c work");
	assert_int_equal(row_of(&w, 100)->arg0_base, strlen("/bin/"));
	assert_ptr_not_equal(n100, vmon_proc_lookup(&w.src.vmon, 100)->stores[VMON_STORE_PROC_STAT]);
	/* its CPU times changed: a copy of its own, and the older snapshot's as it was */
	assert_ptr_not_equal(s101, n101);
	assert_int_equal(s101->utime + s101->stime, ticks);
	assert_int_equal(n101->utime + n101->stime, 100);
	/* it exec'd: its new arguments in the new snapshot only */
	i = vt_snapshot_find(&older, 102, 0);
	assert_string_equal(older.rows[i].command, "sleep 20");
	assert_string_equal(((const vmon_proc_stat_t *)older.rows[i].stores[VMON_STORE_PROC_STAT])->argv[1], "20");
	assert_string_equal(row_of(&w, 102)->command, "nap 30");
	assert_ptr_not_equal(older.rows[i].command, row_of(&w, 102)->command);
	assert_string_equal(n102->argv[1], "30");
	vt_snapshot_free(&older);
	/* the newer one's copies outlive the older snapshot's references */
	assert_int_equal(n100->start, 500);
	assert_string_equal(n102->argv[0], "nap");
	world_close(&w);
}

/*
 * The screen's rows borrow the library's stores and the nodes' command
 * texts (sampler.c); an exited row, whose node the library lets go, keeps
 * its own copy of its stores and its command.
 */
static void test_borrowed_rows(void **state)
{
	world_t w;
	const vt_row_t *live, *gone;

	world_open(&w);
	vt_source_set_borrow(&w.src, true);
	tick(&w, 1);
	sample(&w);
	fixture_remove(&w.fx, "102");
	tick(&w, 1);
	sample(&w);
	live = row_of(&w, 101);
	gone = row_of(&w, 102);
	assert_true(live->flags & VT_ROW_BORROWED);
	assert_ptr_equal(live->stores[VMON_STORE_PROC_STAT], vmon_proc_lookup(&w.src.vmon, 101)->stores[VMON_STORE_PROC_STAT]);
	assert_string_equal(live->command, "sleep 10");
	assert_true(gone->flags & VT_ROW_EXITED);
	assert_true(gone->flags & VT_ROW_SHARED);
	assert_non_null(gone->stores[VMON_STORE_PROC_STAT]);
	assert_int_equal(((const vmon_proc_stat_t *)gone->stores[VMON_STORE_PROC_STAT])->state, 'X');
	assert_string_equal(gone->command, "sleep 20");
	world_close(&w);
}

/* the text kept with pid's row under key, or NULL (for a NUL-terminated text) */
static const char *memo_of(const world_t *w, int pid, const char *key)
{
	size_t len;
	const char *text = vt_row_memo(row_of(w, pid), key, strlen(key), &len);

	assert_true(!text || strlen(text) + 1 == len);
	return text;
}

static void memo_keep(const world_t *w, int pid, const char *key, const char *text)
{
	/* (the NUL kept too, so that the test may read it as a string) */
	vt_row_memo_keep(row_of(w, pid), key, strlen(key), text, strlen(text) + 1);
}

static void next_sample(world_t *w)
{
	tick(w, 1);
	sample(w);
}

/* text kept under "k" now is given again after a sample that changed nothing */
static void memo_kept_through_sample(world_t *w, int pid, const char *text)
{
	memo_keep(w, pid, "k", text);
	next_sample(w);
	assert_string_equal(memo_of(w, pid, "k"), text);
}

/*
 * A text kept with a row of the node's own stores (vtop -b's columns of
 * an idle process) is given again while the node's stores stay as they
 * were: in the sample it was kept in and in the next one that changed
 * nothing.  Not under another key; not once a sample changed a store, nor
 * after two samples (the first, unlooked at, may have changed one), nor
 * while a store's read fails, nor once the node's wants changed.
 */
static void test_row_memo(void **state)
{
	static const char *const argv[] = { "sleep", "30", NULL };
	world_t w;

	/* (a process born while the builder borrows: a node that copied its stores before keeps no text) */
	world_open(&w);
	vt_source_set_borrow(&w.src, true);
	fixture_proc(&w.fx, 300, 1, NULL, 'S', 700, argv);
	next_sample(&w);
	assert_true(row_of(&w, 300)->flags & VT_ROW_NODE_STORES);
	assert_null(memo_of(&w, 300, "k"));
	memo_keep(&w, 300, "k", "one");
	assert_string_equal(memo_of(&w, 300, "k"), "one");
	assert_null(memo_of(&w, 300, "other key"));
	assert_null(memo_of(&w, 102, "k"));
	next_sample(&w);
	assert_string_equal(memo_of(&w, 300, "k"), "one");

	/* its CPU time moved: its stat store changed */
	proc_stat(&w.fx, 300, 1, "sleep", 'S', 700, 70, 30, 0);
	fixture_ran(&w.fx, 300);
	next_sample(&w);
	assert_null(memo_of(&w, 300, "k"));
	memo_kept_through_sample(&w, 300, "two");

	/* two samples, the first not looked at */
	next_sample(&w);
	next_sample(&w);
	assert_null(memo_of(&w, 300, "k"));
	memo_keep(&w, 300, "k", "three");

	/* its memory's figures unreadable: the read fails, and nothing is kept while it does */
	fixture_printf(&w.fx, "300/statm", "garbage\n");
	fixture_ran(&w.fx, 300);
	next_sample(&w);
	assert_int_not_equal(vt_row_errors(row_of(&w, 300))[VMON_STORE_PROC_VM], 0);
	assert_null(memo_of(&w, 300, "k"));
	memo_keep(&w, 300, "k", "four");
	assert_null(memo_of(&w, 300, "k"));
	fixture_printf(&w.fx, "300/statm", "2560 300 200 2 0 400 0\n");
	fixture_ran(&w.fx, 300);
	next_sample(&w);
	memo_kept_through_sample(&w, 300, "five");

	/* its wants changed: a store more (a column of it shown), then a store less */
	assert_false(w.src.wants & VMON_WANT_PROC_IO);
	assert_int_equal(vt_source_set_wants(&w.src, w.src.wants | VMON_WANT_PROC_IO, false), 0);
	next_sample(&w);
	assert_null(memo_of(&w, 300, "k"));
	memo_kept_through_sample(&w, 300, "six");
	assert_int_equal(vt_source_set_wants(&w.src, w.src.wants & ~VMON_WANT_PROC_IO, false), 0);
	next_sample(&w);
	assert_null(memo_of(&w, 300, "k"));

	world_close(&w);
}

/* the sampler's next snapshot, waited for on its eventfd (a few seconds at most) */
static bool sampler_signalled(vt_sampler_t *s, int ms)
{
	struct pollfd pfd = { .fd = vt_sampler_fd(s), .events = POLLIN };

	return poll(&pfd, 1, ms) > 0;
}

/*
 * The screen's snapshot borrows the library's stores: while the screen
 * holds the sampler, no sample runs, asked for or due, and the rows in hand
 * stay what they were (this process's own row among them); once it lets
 * go, the sample asked for comes, built again into the same snapshot.  On
 * this machine's /proc.
 */
static void test_sampler_hold(void **state)
{
	vt_config_t cfg;
	vt_sampler_t *s;
	vt_snapshot_t *snap;
	const vt_row_t *me;
	const vmon_proc_stat_t *stat;
	unsigned long long seq;
	char err[256], command[256];
	bool changed;
	int i;

	assert_int_equal(vt_columns_init(), 0);
	vt_config_defaults(&cfg);
	cfg.delay = 0.05;
	snprintf(cfg.backend, sizeof(cfg.backend), "none");
	if (vt_sampler_start(&s, &cfg, vt_columns_wants(cfg.columns, cfg.columns_nr), err, sizeof(err)) < 0)
		fail_msg("vt_sampler_start: %s", err);
	assert_true(sampler_signalled(s, 10000));
	vt_sampler_hold(s);
	snap = vt_sampler_take(s, &changed);
	assert_true(changed);
	i = vt_snapshot_find(snap, getpid(), 0);
	assert_true(i >= 0);
	me = &snap->rows[i];
	assert_true(me->flags & VT_ROW_BORROWED);
	stat = me->stores[VMON_STORE_PROC_STAT];
	assert_non_null(stat);
	assert_int_equal(stat->pid, getpid());
	snprintf(command, sizeof(command), "%s", me->command);
	seq = snap->seq;
	/* a sample asked for, and five due meanwhile: none while held */
	vt_sampler_sample_now(s);
	usleep(300 * 1000);
	assert_ptr_equal(vt_sampler_take(s, &changed), snap);
	assert_false(changed);
	assert_int_equal(snap->seq, seq);
	assert_ptr_equal(me->stores[VMON_STORE_PROC_STAT], stat);
	assert_int_equal(stat->pid, getpid());
	assert_string_equal(me->command, command);
	vt_sampler_release(s);
	assert_true(sampler_signalled(s, 10000));
	vt_sampler_hold(s);
	snap = vt_sampler_take(s, &changed);
	assert_true(changed);
	assert_true(snap->seq > seq);
	assert_true(vt_snapshot_find(snap, getpid(), 0) >= 0);
	/*
	 * Live, the one snapshot is built again in place: no second one (issue
	 * 14).  The sampler signals after it lets the lock go, so a wake-up
	 * can be left from the sample just taken: wait for one that is new.
	 */
	seq = snap->seq;
	i = 0;
	do {
		vt_sampler_release(s);
		assert_true(sampler_signalled(s, 10000));
		vt_sampler_hold(s);
		assert_ptr_equal(vt_sampler_take(s, &changed), snap);
	} while (!changed && ++i < 100);
	assert_true(changed);
	assert_true(snap->seq > seq);
	vt_sampler_release(s);
	vt_sampler_stop(s);
}

static void test_tree_flattening(void **state)
{
	world_t w;
	char prefix[256];

	world_open(&w);
	/* kernel threads hidden by default; the tree in pid order */
	assert_string_equal(line_pids(&w), "1 100 101 102 200");
	assert_int_equal(vt_view_line_depth(&w.view, 0), 0);
	assert_int_equal(vt_view_line_depth(&w.view, 1), 1);
	assert_int_equal(vt_view_line_depth(&w.view, 2), 2);
	assert_int_equal(vt_view_line_depth(&w.view, 3), 2);
	assert_int_equal(vt_view_line_depth(&w.view, 4), 1);
	assert_true(vt_view_line_flags(&w.view, 0) & VT_LINE_CHILDREN);
	assert_false(vt_view_line_flags(&w.view, 2) & VT_LINE_LAST);
	assert_true(vt_view_line_flags(&w.view, 3) & VT_LINE_LAST);
	assert_true(vt_view_line_flags(&w.view, 4) & VT_LINE_LAST);
	/* the branches: 101 and 102 are under 100, which has a sibling (200) below */
	vt_view_tree_prefix(&w.view, 1, false, 0, prefix, sizeof(prefix));
	assert_string_equal(prefix, "|-");
	vt_view_tree_prefix(&w.view, 2, false, 0, prefix, sizeof(prefix));
	assert_string_equal(prefix, "| |-");
	vt_view_tree_prefix(&w.view, 3, false, 0, prefix, sizeof(prefix));
	assert_string_equal(prefix, "| `-");
	vt_view_tree_prefix(&w.view, 4, false, 0, prefix, sizeof(prefix));
	assert_string_equal(prefix, "`-");
	vt_view_tree_prefix(&w.view, 3, true, 0, prefix, sizeof(prefix));
	assert_string_equal(prefix, "\u2502 \u2514\u2500");
	/* bounded: what fits is drawn whole; past the bound the outer levels fold into a count */
	vt_view_tree_prefix(&w.view, 2, false, 4, prefix, sizeof(prefix));
	assert_string_equal(prefix, "| |-");
	vt_view_tree_prefix(&w.view, 2, false, 3, prefix, sizeof(prefix));
	assert_string_equal(prefix, "..1|-");
	vt_view_tree_prefix(&w.view, 3, true, 3, prefix, sizeof(prefix));
	assert_string_equal(prefix, "\u20261\u2514\u2500");
	vt_view_tree_prefix(&w.view, 1, false, 1, prefix, sizeof(prefix));
	assert_string_equal(prefix, "|-");

	vt_view_set_flag(&w.view, VT_VIEW_KTHREADS, true);
	vt_view_build(&w.view, &w.snap);
	assert_string_equal(line_pids(&w), "1 100 101 102 200 2 3");

	/* flat: every row, sorted (pid ascending here) */
	vt_view_set_flag(&w.view, VT_VIEW_TREE, false);
	vt_view_set_sort(&w.view, vt_column_find("pid"), false);
	vt_view_build(&w.view, &w.snap);
	assert_string_equal(line_pids(&w), "1 2 3 100 101 102 200");
	assert_int_equal(vt_view_line_depth(&w.view, 3), 0);
	world_close(&w);
}

static void test_collapse(void **state)
{
	world_t w;
	char prefix[64];

	world_open(&w);
	vt_view_set_collapsed(&w.view, row_of(&w, 100), true);
	vt_view_build(&w.view, &w.snap);
	assert_string_equal(line_pids(&w), "1 100 200");
	assert_true(vt_view_line_flags(&w.view, 1) & VT_LINE_COLLAPSED);
	vt_view_tree_prefix(&w.view, 1, false, 0, prefix, sizeof(prefix));
	assert_string_equal(prefix, "|-+");
	/* the fold survives a new sample: it is kept by identity */
	tick(&w, 1);
	sample(&w);
	assert_string_equal(line_pids(&w), "1 100 200");
	vt_view_set_collapsed(&w.view, row_of(&w, 100), false);
	vt_view_build(&w.view, &w.snap);
	assert_string_equal(line_pids(&w), "1 100 101 102 200");
	/* everything folded: the roots only; then all open again */
	vt_view_collapse_all(&w.view, &w.snap, true);
	vt_view_build(&w.view, &w.snap);
	assert_string_equal(line_pids(&w), "1");
	vt_view_collapse_all(&w.view, &w.snap, false);
	vt_view_build(&w.view, &w.snap);
	assert_string_equal(line_pids(&w), "1 100 101 102 200");
	world_close(&w);
}

static void test_sort(void **state)
{
	world_t w;

	world_open(&w);
	/* tree: siblings sorted by the tree's sort column, descending pid */
	vt_view_set_sort(&w.view, vt_column_find("pid"), true);
	vt_view_build(&w.view, &w.snap);
	assert_string_equal(line_pids(&w), "1 200 100 102 101");
	/* by command: "/bin/sh -c work" < "bash" (bytes), "sleep 10" < "sleep 20" */
	vt_view_set_sort(&w.view, vt_column_find("command"), false);
	vt_view_build(&w.view, &w.snap);
	assert_string_equal(line_pids(&w), "1 100 101 102 200");
	/* flat, by a defs field (numbers by value: start 5 < 500 < 510 < 520 < 600) */
	vt_view_set_flag(&w.view, VT_VIEW_TREE, false);
	vt_view_set_sort(&w.view, vt_column_find("start"), true);
	vt_view_build(&w.view, &w.snap);
	assert_string_equal(line_pids(&w), "200 102 101 100 1");
	/* equal keys keep pid order: every state but 200's is S */
	vt_view_set_sort(&w.view, vt_column_find("S"), false);
	vt_view_build(&w.view, &w.snap);
	assert_string_equal(line_pids(&w), "200 1 100 101 102");
	/* the flat and tree sorts are separate settings */
	vt_view_set_flag(&w.view, VT_VIEW_TREE, true);
	assert_int_equal(vt_view_sort_col(&w.view), vt_column_find("command"));
	world_close(&w);
}

static void test_filter(void **state)
{
	world_t w;

	world_open(&w);
	/* substring, case-insensitive: the matches, and in the tree their ancestors as context */
	assert_int_equal(vt_view_set_filter(&w.view, "SLEEP", false), 0);
	vt_view_build(&w.view, &w.snap);
	assert_string_equal(line_pids(&w), "1 100 101 102");
	assert_int_equal(vt_view_matches(&w.view), 2);
	assert_true(vt_view_line_flags(&w.view, 0) & VT_LINE_CONTEXT);
	assert_true(vt_view_line_flags(&w.view, 1) & VT_LINE_CONTEXT);
	assert_false(vt_view_line_flags(&w.view, 2) & VT_LINE_CONTEXT);
	vt_view_set_flag(&w.view, VT_VIEW_TREE, false);
	vt_view_build(&w.view, &w.snap);
	assert_int_equal(vt_view_lines(&w.view), 2);

	/* an extended regular expression */
	assert_int_equal(vt_view_set_filter(&w.view, "^sleep [2-9]", true), 0);
	vt_view_build(&w.view, &w.snap);
	assert_string_equal(line_pids(&w), "102");
	/* a bad one: said so, and it hides nothing */
	assert_int_equal(vt_view_set_filter(&w.view, "sle(ep", true), -1);
	assert_non_null(vt_view_filter_error(&w.view));
	assert_true(vt_view_filter_error(&w.view)[0] != '\0');
	vt_view_build(&w.view, &w.snap);
	assert_int_equal(vt_view_lines(&w.view), 5);
	/* the command as shown: without the program's path, "/bin/" no longer matches */
	assert_int_equal(vt_view_set_filter(&w.view, "/bin/", false), 0);
	vt_view_build(&w.view, &w.snap);
	assert_string_equal(line_pids(&w), "100");
	vt_view_set_flag(&w.view, VT_VIEW_PATH, false);
	vt_view_build(&w.view, &w.snap);
	assert_int_equal(vt_view_lines(&w.view), 0);
	vt_view_set_flag(&w.view, VT_VIEW_PATH, true);

	/* by user: the fixture's files are ours */
	assert_int_equal(vt_view_set_filter(&w.view, "", false), 0);
	vt_view_set_user(&w.view, true, getuid());
	vt_view_build(&w.view, &w.snap);
	assert_int_equal(vt_view_lines(&w.view), 5);
	vt_view_set_user(&w.view, true, getuid() + 1);
	vt_view_build(&w.view, &w.snap);
	assert_int_equal(vt_view_lines(&w.view), 0);
	world_close(&w);
}

static void test_search(void **state)
{
	world_t w;
	int line;

	world_open(&w);
	line = vt_view_search(&w.view, &w.snap, "SLEEP", 0, 1);
	assert_int_equal(vt_view_row(&w.view, &w.snap, line)->pid, 101);
	/* the next one after it, then around the end to the first again */
	line = vt_view_search(&w.view, &w.snap, "sleep", line + 1, 1);
	assert_int_equal(vt_view_row(&w.view, &w.snap, line)->pid, 102);
	line = vt_view_search(&w.view, &w.snap, "sleep", line + 1, 1);
	assert_int_equal(vt_view_row(&w.view, &w.snap, line)->pid, 101);
	/* backwards */
	line = vt_view_search(&w.view, &w.snap, "sleep", 0, -1);
	assert_int_equal(vt_view_row(&w.view, &w.snap, line)->pid, 102);
	assert_int_equal(vt_view_search(&w.view, &w.snap, "nothing-like-this", 0, 1), -1);
	assert_int_equal(vt_view_search(&w.view, &w.snap, "", 0, 1), -1);
	world_close(&w);
}

/*
 * A failed sample leaves the screen a cleared snapshot (sampler.c): no
 * lines, a search finds none, and the selection, following, tags and
 * cursor kept for the next sample, which puts the cursor back on the
 * followed process and its line.
 */
static void test_view_without_sample(void **state)
{
	world_t w;

	world_open(&w);
	vt_view_set_flag(&w.view, VT_VIEW_TREE, false);
	vt_view_set_sort(&w.view, vt_column_find("pid"), false);
	vt_view_build(&w.view, &w.snap);
	vt_view_select(&w.view, &w.snap, vt_view_find_line(&w.view, &w.snap, 102));
	vt_view_set_flag(&w.view, VT_VIEW_FOLLOW, true);
	vt_view_set_tagged(&w.view, row_of(&w, 101), true);
	assert_int_equal(vt_view_cursor(&w.view), 3);
	vt_snapshot_clear(&w.snap);
	vt_view_build(&w.view, &w.snap);
	assert_int_equal(vt_view_lines(&w.view), 0);
	assert_null(vt_view_row(&w.view, &w.snap, vt_view_cursor(&w.view)));
	assert_int_equal(vt_view_search(&w.view, &w.snap, "sleep", 0, 1), -1);
	assert_true(vt_view_flag(&w.view, VT_VIEW_FOLLOW));
	assert_int_equal(vt_view_selected(&w.view).pid, 102);
	/* the next sample, in reverse order: the followed process is found on its new line */
	vt_view_set_sort(&w.view, vt_column_find("pid"), true);
	tick(&w, 1);
	sample(&w);
	assert_string_equal(line_pids(&w), "200 102 101 100 1");
	assert_int_equal(vt_view_cursor(&w.view), 1);
	assert_int_equal(vt_view_selected(&w.view).pid, 102);
	assert_true(vt_view_is_tagged(&w.view, row_of(&w, 101)));
	world_close(&w);
}

static void test_selection_follow(void **state)
{
	world_t w;

	world_open(&w);
	vt_view_set_flag(&w.view, VT_VIEW_TREE, false);
	vt_view_set_sort(&w.view, vt_column_find("pid"), false);
	vt_view_build(&w.view, &w.snap);
	vt_view_select(&w.view, &w.snap, vt_view_find_line(&w.view, &w.snap, 100));
	assert_int_equal(vt_view_cursor(&w.view), 1);
	/* without follow the line stays put while the order changes under it: 1 100 101 102 200 reversed */
	vt_view_set_sort(&w.view, vt_column_find("pid"), true);
	vt_view_build(&w.view, &w.snap);
	assert_int_equal(vt_view_cursor(&w.view), 1);
	assert_int_equal(vt_view_selected(&w.view).pid, 102);
	/* with follow, the selection goes where the process goes */
	vt_view_set_flag(&w.view, VT_VIEW_FOLLOW, true);
	vt_view_set_sort(&w.view, vt_column_find("pid"), false);
	vt_view_build(&w.view, &w.snap);
	assert_int_equal(vt_view_row(&w.view, &w.snap, vt_view_cursor(&w.view))->pid, 102);
	assert_int_equal(vt_view_cursor(&w.view), 3);
	/* a followed process that goes away (here: filtered out) ends the follow */
	assert_int_equal(vt_view_set_filter(&w.view, "bash", false), 0);
	vt_view_build(&w.view, &w.snap);
	assert_false(vt_view_flag(&w.view, VT_VIEW_FOLLOW));
	/* moving stays within the lines */
	vt_view_move(&w.view, &w.snap, 100);
	assert_int_equal(vt_view_cursor(&w.view), vt_view_lines(&w.view) - 1);
	vt_view_move(&w.view, &w.snap, -100);
	assert_int_equal(vt_view_cursor(&w.view), 0);

	/* picked by name (a search, a typed pid): the process stays selected while the order changes */
	assert_int_equal(vt_view_set_filter(&w.view, "", false), 0);
	vt_view_set_sort(&w.view, vt_column_find("pid"), false);
	vt_view_build(&w.view, &w.snap);
	vt_view_pick(&w.view, &w.snap, vt_view_find_line(&w.view, &w.snap, 100));
	assert_int_equal(vt_view_cursor(&w.view), 1);
	vt_view_set_sort(&w.view, vt_column_find("pid"), true);
	vt_view_build(&w.view, &w.snap);
	assert_int_equal(vt_view_cursor(&w.view), 3);	/* 200 102 101 100 1 */
	assert_int_equal(vt_view_selected(&w.view).pid, 100);
	vt_view_set_sort(&w.view, vt_column_find("pid"), false);
	vt_view_build(&w.view, &w.snap);
	assert_int_equal(vt_view_cursor(&w.view), 1);
	/* ... until the cursor moves: then the line stays put again */
	vt_view_move(&w.view, &w.snap, 1);
	assert_int_equal(vt_view_selected(&w.view).pid, 101);
	vt_view_set_sort(&w.view, vt_column_find("pid"), true);
	vt_view_build(&w.view, &w.snap);
	assert_int_equal(vt_view_cursor(&w.view), 2);
	vt_view_move(&w.view, &w.snap, 1);
	vt_view_set_sort(&w.view, vt_column_find("pid"), false);
	vt_view_build(&w.view, &w.snap);
	assert_int_equal(vt_view_cursor(&w.view), 3);
	assert_int_equal(vt_view_selected(&w.view).pid, 102);
	world_close(&w);

	/*
	 * A process picked (a search, a pid typed, a click) stays selected while
	 * rows come and go above it, until the user moves; a line moved to stays
	 * a line.  By pid: 1 100 101 102 200, then 50 comes.
	 */
	world_open(&w);
	vt_view_set_flag(&w.view, VT_VIEW_TREE, false);
	vt_view_set_sort(&w.view, vt_column_find("pid"), false);
	vt_view_build(&w.view, &w.snap);
	vt_view_pick(&w.view, &w.snap, vt_view_find_line(&w.view, &w.snap, 101));
	assert_int_equal(vt_view_cursor(&w.view), 2);
	fixture_proc(&w.fx, 50, 1, "newcomer", 'S', 900, NULL);
	tick(&w, 1);
	sample(&w);
	assert_string_equal(line_pids(&w), "1 50 100 101 102 200");
	assert_int_equal(vt_view_selected(&w.view).pid, 101);
	assert_int_equal(vt_view_cursor(&w.view), 3);
	/* the sort changed by the user: still the picked process */
	vt_view_set_sort(&w.view, vt_column_find("pid"), true);
	vt_view_build(&w.view, &w.snap);
	assert_int_equal(vt_view_selected(&w.view).pid, 101);
	/* moved from: a line again, as htop */
	vt_view_move(&w.view, &w.snap, -1);
	assert_int_equal(vt_view_selected(&w.view).pid, 102);
	fixture_proc(&w.fx, 300, 1, "late", 'S', 950, NULL);
	tick(&w, 1);
	sample(&w);
	assert_int_equal(vt_view_cursor(&w.view), 1);
	assert_int_equal(vt_view_selected(&w.view).pid, 200);	/* the line stayed, another process is on it */
	/* a picked process that exits: its exited row while there is one, then the line it was on */
	vt_view_pick(&w.view, &w.snap, vt_view_find_line(&w.view, &w.snap, 102));
	fixture_remove(&w.fx, "102");
	tick(&w, 1);
	sample(&w);
	assert_true(vt_view_pinned(&w.view));
	assert_true(vt_view_row(&w.view, &w.snap, vt_view_cursor(&w.view))->flags & VT_ROW_EXITED);
	assert_int_equal(vt_view_selected(&w.view).pid, 102);
	for (int i = 0; i < w.cfg.exited_keep; i++) {
		tick(&w, 1);
		sample(&w);
	}
	assert_false(vt_view_pinned(&w.view));
	assert_int_not_equal(vt_view_selected(&w.view).pid, 102);
	world_close(&w);
}

static void test_exited_rows(void **state)
{
	world_t w;
	const vt_row_t *gone;
	char buf[64];
	int col;

	world_open(&w);
	tick(&w, 1);
	sample(&w);
	/* 102 becomes a zombie that exited with status 3, then is reaped */
	proc_stat(&w.fx, 102, 100, "sleep", 'Z', 520, 7, 3, 3 << 8);
	tick(&w, 1);
	sample(&w);
	/* the library reads its empty cmdline again; the row keeps the arguments it had */
	assert_int_equal(((vmon_proc_stat_t *)row_of(&w, 102)->stores[VMON_STORE_PROC_STAT])->argc, 0);
	assert_string_equal(row_of(&w, 102)->command, "sleep 20");
	fixture_remove(&w.fx, "102");
	tick(&w, 1);
	sample(&w);
	gone = row_of(&w, 102);
	assert_true(gone->flags & VT_ROW_EXITED);
	assert_int_equal(gone->state, 'X');
	assert_int_equal(gone->exited_age, 0);
	assert_int_equal(gone->exit_code, 3 << 8);
	assert_string_equal(gone->command, "sleep 20");
	assert_int_equal(w.snap.rows[gone->parent].pid, 100);
	assert_int_equal(w.snap.exited_now, 1);
	assert_int_equal(w.snap.events_nr, 1);
	assert_int_equal(w.snap.events[0].kind, 'X');
	assert_int_equal(w.snap.events[0].pid, 102);
	/* it is in the tree where it was, and its exit status is a column */
	assert_string_equal(line_pids(&w), "1 100 101 102 200");
	/* hidden (X), flat and in the tree */
	vt_view_set_flag(&w.view, VT_VIEW_EXITED, false);
	vt_view_build(&w.view, &w.snap);
	assert_string_equal(line_pids(&w), "1 100 101 200");
	vt_view_set_flag(&w.view, VT_VIEW_TREE, false);
	vt_view_build(&w.view, &w.snap);
	assert_int_equal(vt_view_lines(&w.view), 4);
	vt_view_set_flag(&w.view, VT_VIEW_TREE, true);
	vt_view_set_flag(&w.view, VT_VIEW_EXITED, true);
	vt_view_build(&w.view, &w.snap);
	col = vt_column_find("exit_status");
	assert_int_equal(vt_column_format(&vt_columns[col], gone, &w.snap, buf, sizeof(buf), false), 1);
	assert_string_equal(buf, "3");
	/* it stays for exited_keep refreshes, under its parent, then goes */
	for (int age = 1; age < w.cfg.exited_keep; age++) {
		tick(&w, 1);
		sample(&w);
		gone = row_of(&w, 102);
		assert_true(gone->flags & VT_ROW_EXITED);
		assert_int_equal(gone->exited_age, age);
		assert_int_equal(w.snap.rows[gone->parent].pid, 100);
		assert_int_equal(w.snap.exited_now, 0);
		assert_string_equal(line_pids(&w), "1 100 101 102 200");
	}
	tick(&w, 1);
	sample(&w);
	assert_int_equal(vt_snapshot_find(&w.snap, 102, 0), -1);
	assert_string_equal(line_pids(&w), "1 100 101 200");

	/*
	 * A parent and child gone together: the child's exited row stays under
	 * its parent's, also in the samples after (it was at the top, where
	 * folding everything left it out in the open).
	 */
	fixture_remove(&w.fx, "100");
	fixture_remove(&w.fx, "101");
	tick(&w, 1);
	sample(&w);
	assert_true(row_of(&w, 101)->flags & VT_ROW_EXITED);
	assert_int_equal(w.snap.exited_now, 2);
	for (int age = 1; age < w.cfg.exited_keep; age++) {
		tick(&w, 1);
		sample(&w);
		assert_int_equal(row_of(&w, 101)->exited_age, age);
		assert_int_equal(row_of(&w, 101)->parent, vt_snapshot_find(&w.snap, 100, 0));
		assert_int_equal(row_of(&w, 100)->parent, vt_snapshot_find(&w.snap, 1, 0));
		assert_string_equal(line_pids(&w), "1 100 101 200");
		vt_view_collapse_all(&w.view, &w.snap, true);
		vt_view_build(&w.view, &w.snap);
		assert_string_equal(line_pids(&w), "1");
		vt_view_collapse_all(&w.view, &w.snap, false);
		vt_view_build(&w.view, &w.snap);
	}
	world_close(&w);
}

/*
 * An exited row kept for its refreshes: the snapshots that show it share
 * one copy of it (its ghost's), where each had its own, and that copy
 * outlives the ghost for a snapshot still held.
 */
static void test_ghost_shared(void **state)
{
	world_t w;
	vt_snapshot_t found, older;
	const vt_row_t *r, *o, *f;

	world_open(&w);
	tick(&w, 1);
	sample(&w);
	fixture_remove(&w.fx, "102");
	tick(&w, 1);
	sample(&w);
	found = w.snap;
	vt_snapshot_init(&w.snap);
	tick(&w, 1);
	sample(&w);
	older = w.snap;
	vt_snapshot_init(&w.snap);
	tick(&w, 1);
	sample(&w);
	f = &found.rows[vt_snapshot_find(&found, 102, 0)];
	o = &older.rows[vt_snapshot_find(&older, 102, 0)];
	r = row_of(&w, 102);
	assert_true(f->flags & VT_ROW_EXITED);
	assert_int_equal(f->exited_age, 0);
	assert_int_equal(o->exited_age, 1);
	assert_int_equal(r->exited_age, 2);
	assert_ptr_equal(f->stores[VMON_STORE_PROC_STAT], o->stores[VMON_STORE_PROC_STAT]);
	assert_ptr_equal(o->stores[VMON_STORE_PROC_STAT], r->stores[VMON_STORE_PROC_STAT]);
	assert_ptr_equal(o->command, r->command);
	assert_string_equal(f->command, "sleep 20");
	assert_string_equal(r->command, "sleep 20");
	vt_snapshot_free(&found);
	/* its last refresh is past: the older snapshot's row is whole */
	tick(&w, 1);
	sample(&w);
	assert_int_equal(vt_snapshot_find(&w.snap, 102, 0), -1);
	assert_int_equal(((const vmon_proc_stat_t *)o->stores[VMON_STORE_PROC_STAT])->state, 'X');
	assert_int_equal(((const vmon_proc_stat_t *)o->stores[VMON_STORE_PROC_STAT])->start, 520);
	assert_string_equal(o->command, "sleep 20");
	vt_snapshot_free(&older);
	world_close(&w);
}

/*
 * The parent exits a sample before its child: the library moves the child
 * to the top when the parent's node goes, and the child, dead before it is
 * placed again, is stale there.  Its row goes under its parent's exited row,
 * found by the parent its stat named and by start time: a later process
 * with the parent's pid (a reuse) is not taken for it.
 */
static void test_exited_orphan(void **state)
{
	static const char *const argv[] = { "reused", NULL };
	world_t w;
	int parent;

	world_open(&w);
	w.cfg.exited_keep = 3;
	/* 103's start a tick before its parent's, as a start taken from an event's time can be */
	fixture_proc(&w.fx, 103, 100, NULL, 'S', 499, argv);
	tick(&w, 1);
	sample(&w);
	fixture_remove(&w.fx, "100");
	tick(&w, 1);
	sample(&w);
	assert_true(row_of(&w, 100)->flags & VT_ROW_EXITED);
	fixture_remove(&w.fx, "101");
	fixture_remove(&w.fx, "102");
	fixture_remove(&w.fx, "103");
	tick(&w, 1);
	sample(&w);
	assert_true(row_of(&w, 103)->flags & VT_ROW_EXITED);
	assert_int_equal(w.snap.rows[row_of(&w, 103)->parent].pid, 100);
	assert_true(row_of(&w, 101)->flags & VT_ROW_EXITED);
	parent = row_of(&w, 101)->parent;
	assert_true(parent >= 0);
	assert_int_equal(w.snap.rows[parent].pid, 100);
	assert_true(w.snap.rows[parent].flags & VT_ROW_EXITED);
	assert_int_equal(row_of(&w, 101)->ppid, 100);
	vt_view_collapse_all(&w.view, &w.snap, true);
	vt_view_build(&w.view, &w.snap);
	assert_string_equal(line_pids(&w), "1");
	vt_view_collapse_all(&w.view, &w.snap, false);

	/* pid 100 again, a new process (started after 101 and 102): not their parent */
	fixture_proc(&w.fx, 100, 1, NULL, 'S', 900, argv);
	tick(&w, 1);
	sample(&w);
	parent = row_of(&w, 102)->parent;
	assert_true(parent >= 0);
	assert_int_equal(w.snap.rows[parent].pid, 100);
	assert_int_equal(w.snap.rows[parent].start, 500);
	/* the old 100's exited row gone before its children's: orphans, under pid 1 (not under the new 100) */
	tick(&w, 1);
	sample(&w);
	assert_int_equal(vt_snapshot_find(&w.snap, 100, 500), -1);
	parent = row_of(&w, 102)->parent;
	assert_true(parent >= 0);
	assert_int_equal(w.snap.rows[parent].pid, 1);
	vt_view_collapse_all(&w.view, &w.snap, true);
	vt_view_build(&w.view, &w.snap);
	assert_string_equal(line_pids(&w), "1");
	world_close(&w);
}

/* a tag is a process's (pid, start time) and goes with it: kill and renice never act on a tag of a gone process */
static void test_tags(void **state)
{
	static const char *const argv[] = { "sleep", "30", NULL };
	world_t w;

	world_open(&w);
	vt_view_set_tagged(&w.view, row_of(&w, 101), true);
	vt_view_set_tagged(&w.view, row_of(&w, 102), true);
	vt_view_set_tagged(&w.view, row_of(&w, 200), true);
	vt_view_set_tagged(&w.view, row_of(&w, 200), false);
	assert_int_equal(vt_view_tagged_nr(&w.view), 2);
	/* hidden by a filter: still tagged */
	assert_int_equal(vt_view_set_filter(&w.view, "bash", false), 0);
	tick(&w, 1);
	sample(&w);
	assert_int_equal(vt_view_tagged_nr(&w.view), 2);
	assert_int_equal(vt_view_set_filter(&w.view, "", false), 0);
	/* a zombie is still the process: tagged; gone, its exited row is not */
	proc_stat(&w.fx, 102, 100, "sleep", 'Z', 520, 7, 3, 0);
	tick(&w, 1);
	sample(&w);
	assert_int_equal(vt_view_tagged_nr(&w.view), 2);
	fixture_remove(&w.fx, "102");
	tick(&w, 1);
	sample(&w);
	assert_true(row_of(&w, 102)->flags & VT_ROW_EXITED);
	assert_false(vt_view_is_tagged(&w.view, row_of(&w, 102)));
	assert_int_equal(vt_view_tagged_nr(&w.view), 1);
	assert_true(vt_view_is_tagged(&w.view, row_of(&w, 101)));
	/* an exited row cannot be tagged */
	vt_view_set_tagged(&w.view, row_of(&w, 102), true);
	assert_int_equal(vt_view_tagged_nr(&w.view), 1);
	/* 101 goes and its pid comes back as another process: that one is not tagged */
	fixture_remove(&w.fx, "101");
	tick(&w, 1);
	sample(&w);
	assert_int_equal(vt_view_tagged_nr(&w.view), 0);
	fixture_proc(&w.fx, 101, 100, NULL, 'S', 990, argv);
	tick(&w, 1);
	sample(&w);
	assert_int_equal(vt_view_tagged_nr(&w.view), 0);
	for (int i = 0; i < w.snap.rows_nr; i++)
		assert_false(vt_view_is_tagged(&w.view, &w.snap.rows[i]));
	/* the pid typed selects the live process, listed after its exited namesake (by start) */
	vt_view_set_flag(&w.view, VT_VIEW_TREE, false);
	vt_view_set_sort(&w.view, vt_column_find("start"), false);
	vt_view_build(&w.view, &w.snap);
	assert_false(vt_view_row(&w.view, &w.snap, vt_view_find_line(&w.view, &w.snap, 101))->flags & VT_ROW_EXITED);
	assert_int_equal(vt_view_row(&w.view, &w.snap, vt_view_find_line(&w.view, &w.snap, 101))->start, 990);
	world_close(&w);
}

/*
 * A process that lives and dies between two refreshes (here: gone during
 * its first read, as the library reads it) is new in the library's sample
 * and stale only in the next; it is shown exited at once, counted once,
 * and its row is there once in each refresh of its exited_keep.
 */
static void (*model_ctor)(vmon_t *, vmon_proc_t *);
static fixture_t *blink_fx;

static void blink_ctor(vmon_t *vmon, vmon_proc_t *proc)
{
	model_ctor(vmon, proc);
	if (proc->pid == 300)
		fixture_remove(blink_fx, "300");
}

static int rows_with(const world_t *w, int pid)
{
	int n = 0;

	for (int i = 0; i < w->snap.rows_nr; i++)
		n += w->snap.rows[i].pid == pid;
	return n;
}

static void test_short_life_exited_at_once(void **state)
{
	static const char *const argv[] = { "blink", "-n", NULL };
	const vt_row_t *r;
	world_t w;

	world_open(&w);
	model_ctor = w.src.vmon.proc_ctor_cb;
	w.src.vmon.proc_ctor_cb = blink_ctor;
	blink_fx = &w.fx;
	fixture_proc(&w.fx, 300, 200, NULL, 'R', 700, argv);
	tick(&w, 1);
	sample(&w);
	r = row_of(&w, 300);
	assert_true(r->flags & VT_ROW_EXITED);
	assert_true(r->flags & VT_ROW_NEW);
	assert_int_equal(r->state, 'X');
	assert_int_equal(r->exited_age, 0);
	assert_int_equal(r->exit_code, -1);	/* no feed, no zombie: how it ended is not known */
	assert_string_equal(r->command, "[blink]");	/* gone before its command line was read */
	assert_int_equal(w.snap.rows[r->parent].pid, 200);
	assert_int_equal(w.snap.exited_now, 1);
	assert_int_equal(w.snap.new_now, 1);
	assert_int_equal(rows_with(&w, 300), 1);
	for (int age = 1; age < w.cfg.exited_keep; age++) {
		tick(&w, 1);
		sample(&w);
		/* (the library has it stale in the first of these: its ghost stands for it) */
		assert_int_equal(rows_with(&w, 300), 1);
		r = row_of(&w, 300);
		assert_true(r->flags & VT_ROW_EXITED);
		assert_false(r->flags & VT_ROW_NEW);
		assert_int_equal(r->exited_age, age);
		assert_int_equal(w.snap.rows[r->parent].pid, 200);
		assert_int_equal(w.snap.exited_now, 0);
		for (int i = 0; i < w.snap.events_nr; i++)
			assert_int_not_equal(w.snap.events[i].pid, 300);
	}
	tick(&w, 1);
	sample(&w);
	assert_int_equal(rows_with(&w, 300), 0);
	world_close(&w);
}

/* processes from to to - 1, children of init, "worker" */
static void workers_add(world_t *w, int from, int to, unsigned long long start)
{
	static const char *const argv[] = { "worker", NULL };

	for (int pid = from; pid < to; pid++)
		fixture_proc(&w->fx, pid, 1, NULL, 'S', start, argv);
}

static void workers_remove(world_t *w, int from, int to)
{
	char dir[32];

	for (int pid = from; pid < to; pid++) {
		snprintf(dir, sizeof(dir), "%d", pid);
		fixture_remove(&w->fx, dir);
	}
}

/* more processes come and go in one refresh than any first guess of the event log's size */
static void test_many_events(void **state)
{
	world_t w;

	world_open(&w);
	workers_add(&w, 1000, 2100, 700);
	tick(&w, 1);
	sample(&w);
	assert_int_equal(w.snap.new_now, 1100);
	assert_int_equal(w.snap.events_nr, 1100);
	for (int i = 0; i < w.snap.events_nr; i++)
		assert_int_equal(w.snap.events[i].kind, 'N');
	workers_remove(&w, 1000, 2100);
	tick(&w, 1);
	sample(&w);
	assert_int_equal(w.snap.exited_now, 1100);
	assert_int_equal(w.snap.events_nr, 1100);
	assert_int_equal(w.snap.events[1099].kind, 'X');
	world_close(&w);
}

/*
 * vt_room_fit(), the one rule by which the rows, the exited rows, the
 * lines and the event log's text give a storm's room back: kept while a
 * quarter or more is used, else twice the use, never under the least,
 * never more than the room, always the use; and a room once cut is not
 * cut again by the same use.
 */
static void test_room_fit(void **state)
{
	static const size_t leasts[] = { 64, 1024, 4096 };

	(void)state;
	/* at or under the least: kept, however little is used */
	assert_int_equal(vt_room_fit(0, 0, 1024), 0);
	assert_int_equal(vt_room_fit(64, 0, 64), 64);
	assert_int_equal(vt_room_fit(1024, 1, 1024), 1024);
	/* a quarter used: kept; one under: cut to twice the use */
	assert_int_equal(vt_room_fit(16384, 4096, 1024), 16384);
	assert_int_equal(vt_room_fit(16384, 4095, 1024), 8190);
	assert_int_equal(vt_room_fit(65536, 5000, 1024), 10000);
	/* never under the least, nor over the room */
	assert_int_equal(vt_room_fit(65536, 10, 1024), 1024);
	assert_int_equal(vt_room_fit(65536, 0, 4096), 4096);
	assert_int_equal(vt_room_fit(1025, 0, 1024), 1024);
	assert_int_equal(vt_room_fit(2000, 499, 1024), 1024);
	for (size_t l = 0; l < sizeof(leasts) / sizeof(leasts[0]); l++) {
		size_t least = leasts[l];

		for (size_t room = 0; room <= 3 * least; room += room < 2 * least ? 1 : 7) {
			for (size_t used = 0; used <= room; used++) {
				size_t fit = vt_room_fit(room, used, least);

				assert_true(fit >= used && fit <= room);
				if (used >= room / 4 || room <= least)
					assert_int_equal(fit, room);
				else
					assert_true(fit >= least && fit >= 2 * used);
				assert_int_equal(vt_room_fit(fit, used, least), fit);
			}
		}
	}
}

/*
 * A storm's rows sized the snapshot's array and touched its pages; once
 * the storm's exited rows are gone the array is cut back to the rows a
 * build uses and an eighth more, though they fill more than a quarter of
 * it; steady builds never resize it, whose first room is the rows and an
 * eighth more, not the next power of two.
 */
static void test_storm_rows_cut_back(void **state)
{
	int steady, cap, storm_cap;
	world_t w;

	world_open(&w);
	workers_add(&w, 1000, 2500, 700);
	tick(&w, 1);
	sample(&w);
	steady = w.snap.rows_nr;
	assert_true(steady >= 1500);
	tick(&w, 1);
	sample(&w);
	cap = w.snap.rows_cap;
	/* sized to the tree before the build (rows_reserve()), not doubled past it: 2,048 for 1,500 rows */
	print_message("%d rows, room for %d\n", steady, cap);
	assert_true(cap >= steady && cap <= steady + steady / 8 + 1);
	/* steady: the same room, build after build */
	for (int i = 0; i < 3; i++) {
		tick(&w, 1);
		sample(&w);
		assert_int_equal(w.snap.rows_nr, steady);
		assert_int_equal(w.snap.rows_cap, cap);
	}
	/* the storm: as many lives again, then their ends, each kept three refreshes as an exited row */
	workers_add(&w, 3000, 4500, 800);
	tick(&w, 1);
	sample(&w);
	assert_int_equal(w.snap.rows_nr, steady + 1500);
	storm_cap = w.snap.rows_cap;
	assert_true(storm_cap >= steady + 1500);
	workers_remove(&w, 3000, 4500);
	for (int i = 0; i < 6; i++) {
		tick(&w, 1);
		sample(&w);
	}
	print_message("rows %d: room for %d, %d in the storm, %d after it\n", w.snap.rows_nr, cap, storm_cap,
		      w.snap.rows_cap);
	/* more than a quarter full, yet cut back: steady + an eighth (the storm's array would be 4,096) */
	assert_int_equal(w.snap.rows_nr, steady);
	assert_true(steady >= storm_cap / 4);
	assert_true(w.snap.rows_cap >= steady && w.snap.rows_cap <= steady + steady / 8 + 1);
	assert_true(w.snap.rows_touched <= w.snap.rows_cap);
	/* the rows themselves: every process once, none of the storm's */
	for (int pid = 1000; pid < 2500; pid++)
		assert_int_equal(rows_with(&w, pid), 1);
	assert_int_equal(rows_with(&w, 3000), 0);
	/* and steady again: no more resizing */
	cap = w.snap.rows_cap;
	for (int i = 0; i < 3; i++) {
		tick(&w, 1);
		sample(&w);
		assert_int_equal(w.snap.rows_cap, cap);
	}
	/* growing again after the cut is as before: the room doubles */
	workers_add(&w, 3000, 3300, 900);
	tick(&w, 1);
	sample(&w);
	assert_int_equal(w.snap.rows_nr, steady + 300);
	assert_int_equal(rows_with(&w, 3299), 1);
	world_close(&w);
}

/*
 * The view's room for lines, and the tree build's work space and prefixes,
 * follow a storm's rows up, and down once they are gone; the lines as before.
 */
static void test_storm_lines_cut_back(void **state)
{
	static const char *const chain_argv[] = { "chain", NULL };
	char before[64], prefixes[4096];
	int storm_cap, storm_scratch;
	size_t storm_prefix;
	world_t w;

	(void)state;
	world_open(&w);
	assert_true(w.view.set.tree);
	snprintf(before, sizeof(before), "%s", line_pids(&w));
	snprintf(prefixes, sizeof(prefixes), "%s", line_prefixes(&w));
	/* a line below the first level: its prefix is in the prefixes' room */
	assert_non_null(strpbrk(prefixes, "`-"));
	workers_add(&w, 1000, 5000, 700);
	/* and a chain 200 deep: a line's prefix is a byte a level below the first */
	for (int pid = 6000; pid < 6200; pid++)
		fixture_proc(&w.fx, pid, pid == 6000 ? 1 : pid - 1, NULL, 'S', 700, chain_argv);
	tick(&w, 1);
	sample(&w);
	assert_true(w.view.lines_nr >= 4200);
	storm_cap = w.view.lines_cap;
	storm_scratch = w.view.scratch_cap;
	storm_prefix = w.view.prefix_cap;
	assert_true(storm_cap >= 4000);
	/* the tree build's work space (5 ints a row) and its prefixes (a byte a level a line) grew with them */
	assert_true(storm_scratch >= 5 * 4000);
	assert_true(storm_prefix >= 199 * 198 / 2);
	workers_remove(&w, 1000, 5000);
	workers_remove(&w, 6000, 6200);
	for (int i = 0; i < 5; i++) {
		tick(&w, 1);
		sample(&w);
	}
	print_message("lines: room for %d in the storm, %d after it (%d lines); work space %d -> %d ints, "
		      "prefixes %zu -> %zu bytes\n", storm_cap, w.view.lines_cap, w.view.lines_nr, storm_scratch,
		      w.view.scratch_cap, storm_prefix, w.view.prefix_cap);
	assert_true(w.view.lines_cap < storm_cap / 4);
	assert_true(w.view.lines_cap >= w.view.lines_nr);
	assert_true(w.view.scratch_cap < storm_scratch / 4);
	assert_true(w.view.scratch_cap >= 5 * w.snap.rows_nr + 6);
	assert_true(w.view.prefix_cap < storm_prefix / 4);
	assert_true(w.view.prefix_cap >= w.view.prefix_len);
	assert_string_equal(line_prefixes(&w), prefixes);
	assert_string_equal(line_pids(&w), before);
	world_close(&w);
}

#if defined(HAVE_MALLINFO2) && defined(HAVE_MALLOC_TRIM)
/* the anonymous pages resident, in bytes (RSS less the file-backed and shared ones) */
static long anon_resident(void)
{
	unsigned long resident, shared;
	FILE *f = fopen("/proc/self/statm", "r");
	int n;

	assert_non_null(f);
	n = fscanf(f, "%*s %lu %lu", &resident, &shared);
	fclose(f);
	assert_int_equal(n, 2);
	return (long)(resident - shared) * sysconf(_SC_PAGESIZE);
}

#define HEAP_BLOCKS	4096
#define HEAP_BLOCK	4000

/* the storm's room malloc'd and touched, in blocks, in order; with keepers, every 16th too (to stay) */
static void heap_fill(char **blocks, bool keepers)
{
	for (int i = 0; i < HEAP_BLOCKS; i++) {
		if (i % 16 == 15 && !keepers)
			continue;
		blocks[i] = malloc(HEAP_BLOCK);
		assert_non_null(blocks[i]);
		memset(blocks[i], i, HEAP_BLOCK);
	}
}

static void heap_free(char **blocks)
{
	for (int i = 0; i < HEAP_BLOCKS; i++) {
		if (i % 16 != 15) {
			free(blocks[i]);
			blocks[i] = NULL;
		}
	}
}
#endif

/*
 * vt_heap_settle(), after each sample: the pages a storm's freed room left
 * resident are given back, and so are those of that room that later
 * allocations touched again, though the heap's free bytes did not grow
 * (what the free bytes alone missed).  A steady heap is left alone.
 */
static void test_heap_settle(void **state)
{
#if defined(HAVE_MALLINFO2) && defined(HAVE_MALLOC_TRIM)
	static char *blocks[HEAP_BLOCKS];
	vt_heap_t heap = { 0 };
	long before, freed, trimmed;
	int rows = 100000;

	(void)state;
	if (!mallinfo2().arena) {
		/* a sanitizer's or valgrind's malloc: the heap is not glibc's to trim */
		skip();
	}
	vt_heap_settle(&heap, rows);		/* the first count */
	assert_true(heap.counted);
	/* every 16th block kept: the storm's room cannot go back as the heap's top */
	heap_fill(blocks, true);
	rows -= 100;				/* the rows fell: counted at once */
	vt_heap_settle(&heap, rows);
	assert_int_equal(heap.trims, 0);	/* in use, every byte of it */
	before = anon_resident();
	heap_free(blocks);
	freed = anon_resident();
	rows -= 100;
	vt_heap_settle(&heap, rows);
	trimmed = anon_resident();
	print_message("a storm's 16 MB: %ld kB resident once freed, %ld kB after the trim\n",
		      (freed - before) / 1024, (trimmed - before) / 1024);
	assert_int_equal(heap.trims, 1);
	assert_true(freed - trimmed > 8L << 20);
	/* the same room used and let go again: resident again, no more free bytes than after the trim */
	heap_fill(blocks, false);
	heap_free(blocks);
	freed = anon_resident();
	assert_true(freed - trimmed > 8L << 20);
	rows -= 100;
	vt_heap_settle(&heap, rows);
	assert_int_equal(heap.trims, 2);
	assert_true(freed - anon_resident() > 8L << 20);
	/* steady: counted every 16 samples, nothing to give back */
	for (int i = 0; i < 40; i++)
		vt_heap_settle(&heap, rows);
	assert_int_equal(heap.trims, 2);
	for (int i = 15; i < HEAP_BLOCKS; i += 16)
		free(blocks[i]);
#else
	(void)state;
	skip();
#endif
}

static void test_new_rows_and_cpu(void **state)
{
	world_t w;
	static const char *const argv[] = { "newcomer", NULL };
	const vt_row_t *r;

	world_open(&w);
	assert_false(row_of(&w, 101)->flags & VT_ROW_NEW);	/* the first sample marks nothing new */
	/* one second later 200 used 0.5 s more CPU: 50 % */
	proc_stat(&w.fx, 200, 1, "bash", 'R', 600, 7 + 30, 3 + 20, 0);
	fixture_proc(&w.fx, 300, 200, NULL, 'R', 1234 * 100 + 56 + 50, argv);	/* born half a second ago */
	tick(&w, 1);
	sample(&w);
	r = row_of(&w, 200);
	assert_true(r->cpu_pct > 49.9 && r->cpu_pct < 50.1);
	assert_true(row_of(&w, 101)->cpu_pct == 0);
	r = row_of(&w, 300);
	assert_true(r->flags & VT_ROW_NEW);
	/* born during the interval: its 10 ticks over its 0.5 s of life */
	assert_true(r->cpu_pct > 19.9 && r->cpu_pct < 20.1);
	assert_int_equal(w.snap.new_now, 1);
	assert_true(w.snap.interval > 0.99 && w.snap.interval < 1.01);
	world_close(&w);
}

/*
 * A row's command text is made once and kept while its arguments stay: an
 * exec (new comm, new arguments) must show the new ones, in the sample that
 * reads them, with argv[0]'s last component found again.
 */
static void test_command_after_exec(void **state)
{
	static const char *const before[] = { "/usr/bin/sleep", "10", NULL };
	static const char *const after[] = { "/usr/local/bin/vi", "notes\x01", NULL };
	world_t w;
	const vt_row_t *r;

	world_open(&w);
	vt_view_set_flag(&w.view, VT_VIEW_PATH, false);	/* COMMAND as argv[0]'s last component */
	fixture_proc(&w.fx, 400, 1, NULL, 'S', 900, before);
	for (int i = 0; i < 2; i++) {
		tick(&w, 1);
		sample(&w);
		r = row_of(&w, 400);
		assert_string_equal(r->command, "/usr/bin/sleep 10");
		assert_string_equal(vt_view_command(&w.view, r), "sleep 10");
	}
	fixture_proc(&w.fx, 400, 1, NULL, 'S', 900, after);
	tick(&w, 1);
	sample(&w);
	r = row_of(&w, 400);
	assert_string_equal(r->command, "/usr/local/bin/vi notes\\x01");
	assert_string_equal(vt_view_command(&w.view, r), "vi notes\\x01");
	assert_int_equal(r->arg0_base, strlen("/usr/local/bin/"));
	/* a kernel thread: [comm], made from comm */
	r = row_of(&w, 3);
	assert_string_equal(r->command, "[kworker/0:0]");
	world_close(&w);
}

/* pid 400's stat line again: comm, state, and where its arguments start (an exec moves them) */
static void stat_400(world_t *w, const char *comm, char state, unsigned long long arg_start)
{
	fixture_stat_t st;

	fixture_stat_init(&st, 400, 1, comm, state, 900);
	fixture_stat_set(&st, 48, "%llu", arg_start);
	fixture_stat_set(&st, 49, "%llu", arg_start + 100);
	if (state == 'Z') {
		for (int f = 26; f <= 28; f++)
			fixture_stat_set(&st, f, "0");
	}
	fixture_stat_write(&w->fx, "400/stat", &st, FIXTURE_STAT_FIELDS, true);
}

/*
 * pid 400's arguments rewritten (len bytes, each argument with its NUL), as
 * setproctitle() does in place.  The library reads a title again every 5 s
 * of the real clock, or at once on an exec's signs: the stat line's
 * argument addresses move here, for the test not to wait.
 */
static void cmdline_400(world_t *w, const char *comm, const char *bytes, size_t len)
{
	static unsigned long long arg_start = 140730000010000ULL;

	fixture_write(&w->fx, "400/cmdline", bytes, len);
	arg_start += 1000;
	stat_400(w, comm, 'S', arg_start);
}

/* one refresh in which pid 400 ran after its arguments' refresh was due: the library reads them again */
static const vt_row_t *refresh_400(world_t *w, double secs)
{
	fixture_ran(&w->fx, 400);
	tick(w, secs);
	sample(w);
	return row_of(w, 400);
}

/*
 * pid 400 sets its title in place (comm, the cmdline's len bytes), a
 * refresh later its row shows command (NULL: not checked) with argv[0]'s
 * last component at arg0_base (-1: not checked)
 */
static const vt_row_t *title_400(world_t *w, const char *bytes, const char *command, int arg0_base)
{
	const vt_row_t *r;

	cmdline_400(w, "worker", bytes, 17);
	r = refresh_400(w, 1);
	if (command)
		assert_string_equal(r->command, command);
	if (arg0_base >= 0)
		assert_int_equal(r->arg0_base, arg0_base);
	return r;
}

/*
 * A node keeps no copy of the arguments its text was made from, and no
 * hash stands for them: whatever a process does to its arguments, its row
 * shows them, copied out (a replay, the tests' world) or borrowed (vtop -b,
 * the screen).  An exec to arguments of the same length and comm, titles
 * set in place (other bytes of the same length; the same text from one
 * argument instead of two, whose argv[0] is longer), a comm changed beside
 * unchanged arguments (the text kept, not made again, when borrowed), then
 * a live moment without arguments ([comm]) and a zombie and a dead row that
 * show the last arguments it had.
 */
static void test_command_same_length(void **state)
{
	static const char *const before[] = { "/bin/worker", "aaaa", NULL };
	static const char *const after[] = { "/bin/worker", "bbbb", NULL };

	for (int borrow = 0; borrow < 2; borrow++) {
		const vt_row_t *r;
		const char *text;
		world_t w;

		world_open(&w);
		vt_source_set_borrow(&w.src, borrow);
		fixture_proc(&w.fx, 400, 1, NULL, 'S', 900, before);
		for (int i = 0; i < 3; i++) {
			r = refresh_400(&w, 1);
			assert_string_equal(r->command, "/bin/worker aaaa");
		}
		/* exec: other bytes, the same length, the same comm */
		fixture_proc(&w.fx, 400, 1, NULL, 'S', 900, after);
		stat_400(&w, "worker", 'S', 140730000005000ULL);
		r = refresh_400(&w, 1);
		assert_string_equal(r->command, "/bin/worker bbbb");
		assert_int_equal(r->arg0_base, strlen("/bin/"));
		r = refresh_400(&w, 1);
		assert_string_equal(r->command, "/bin/worker bbbb");
		/* a title set in place: other bytes of the same length */
		title_400(&w, "/bin/worker\0bbab", "/bin/worker bbab", -1);
		/* the same text as one argument: argv[0] is all of it now, its last component after the last '/' */
		title_400(&w, "/bin/worker bbab", "/bin/worker bbab", (int)strlen("/bin/"));
		title_400(&w, "/bin/worker b/ab", NULL, (int)strlen("/bin/worker b/"));
		title_400(&w, "/bin/worker\0b/ab", "/bin/worker b/ab", (int)strlen("/bin/"));
		r = title_400(&w, "/bin/worker\0bbab", "/bin/worker bbab", (int)strlen("/bin/"));
		/* comm changed (prctl(PR_SET_NAME)), the arguments not: the text stays */
		text = r->command;
		stat_400(&w, "wrk", 'S', 140730000030000ULL);
		r = refresh_400(&w, 1);
		assert_string_equal(r->command, "/bin/worker bbab");
		if (borrow)
			assert_ptr_equal(r->command, text);
		/* its memory gone while it still runs: [comm], then a zombie with its last arguments */
		cmdline_400(&w, "wrk", "", 0);
		r = refresh_400(&w, 1);
		assert_string_equal(r->command, "[wrk]");
		stat_400(&w, "wrk", 'Z', 140730000005000ULL);
		for (int i = 0; i < 2; i++) {
			r = refresh_400(&w, 1);
			assert_int_equal(r->state, 'Z');
			assert_string_equal(r->command, "/bin/worker bbab");
			assert_int_equal(r->arg0_base, strlen("/bin/"));
		}
		fixture_remove(&w.fx, "400");
		tick(&w, 1);
		sample(&w);
		r = row_of(&w, 400);
		assert_true(r->flags & VT_ROW_EXITED);
		assert_string_equal(r->command, "/bin/worker bbab");
		tick(&w, 1);
		sample(&w);
		assert_string_equal(row_of(&w, 400)->command, "/bin/worker bbab");	/* its ghost */
		world_close(&w);
	}
}

static void test_escaped_command(void **state)
{
	static const char *const argv[] = { "/tmp/\x1b]2;pwned\x07", "a\xff" "b", NULL };
	world_t w;
	const vt_row_t *r;

	world_open(&w);
	fixture_proc(&w.fx, 400, 1, "\x1b[31mred", 'S', 900, argv);
	tick(&w, 1);
	sample(&w);
	r = row_of(&w, 400);
	assert_string_equal(r->command, "/tmp/\\x1b]2;pwned\\x07 a\\xffb");
	for (const char *p = r->command; *p; p++)
		assert_true((unsigned char)*p >= 0x20 && (unsigned char)*p != 0x7f);
	world_close(&w);
}

static void test_columns(void **state)
{
	world_t w;
	int cols[VT_MAX_COLUMNS];
	char err[128], buf[256];
	const vt_row_t *r;
	int n;

	world_open(&w);
	/* every field of the per-process defs tables is a column */
	for (int s = VMON_STORE_PROC_STAT; s < VMON_STORE_PROC_NR; s++) {
		const vmon_store_desc_t *desc = &vmon_proc_store_descs[s];

		for (int i = 0; i < desc->fields_nr; i++)
			assert_true(vt_column_find(desc->fields[i].name) >= 0);
	}
	n = vt_column_parse_list("pid,USER,CPU%,command,rchars", cols, VT_MAX_COLUMNS, err, sizeof(err));
	assert_int_equal(n, 5);
	assert_string_equal(vt_columns[cols[2]].name, "cpu_percent");
	assert_true(vt_columns_wants(cols, n) & VMON_WANT_PROC_IO);
	assert_false(vt_columns_wants(cols, 3) & VMON_WANT_PROC_IO);
	assert_int_equal(vt_column_parse_list("pid,nonesuch", cols, VT_MAX_COLUMNS, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "nonesuch"));
	assert_int_equal(vt_column_parse_list("pid,,user", cols, VT_MAX_COLUMNS, err, sizeof(err)), -1);

	r = row_of(&w, 100);
	assert_true(vt_column_format(&vt_columns[vt_column_find("pid")], r, &w.snap, buf, sizeof(buf), false) > 0);
	assert_string_equal(buf, "100");
	/* 300 pages resident */
	vt_column_format(&vt_columns[vt_column_find("res")], r, &w.snap, buf, sizeof(buf), true);
	assert_int_equal(atoll(buf), 300LL * sysconf(_SC_PAGESIZE));
	vt_column_format(&vt_columns[vt_column_find("time")], r, &w.snap, buf, sizeof(buf), false);
	assert_string_equal(buf, "0:00.10");
	/* not sampled (io is not wanted by the default columns): no value, not 0 */
	assert_int_equal(vt_column_format(&vt_columns[vt_column_find("rchars")], r, &w.snap, buf, sizeof(buf), true), -1);
	/* every column formats every row, both ways, within the buffer */
	for (int c = 0; c < vt_columns_nr; c++) {
		for (int i = 0; i < w.snap.rows_nr; i++) {
			vt_column_format(&vt_columns[c], &w.snap.rows[i], &w.snap, buf, sizeof(buf), false);
			assert_true(strlen(buf) < sizeof(buf));
			vt_column_format(&vt_columns[c], &w.snap.rows[i], &w.snap, buf, sizeof(buf), true);
		}
	}
	/* numbers too wide for their column are scaled */
	vt_format_number(buf, sizeof(buf), "123456789", 6);
	assert_string_equal(buf, "123M");
	vt_format_number(buf, sizeof(buf), "1234", 6);
	assert_string_equal(buf, "1234");
	vt_format_size(buf, sizeof(buf), 1536.0 * 1024);
	assert_string_equal(buf, "1.50M");
	world_close(&w);
}

/*
 * wchan is read only while a column shows it or the details page is open
 * (VMON_FLAG_NO_WCHAN otherwise): the fixture's /proc/PID/wchan says
 * "do_select" for a sleeping process, its row has nothing from it.
 */
static void test_wchan_when_shown(void **state)
{
	const vt_column_t *wchan = &vt_columns[vt_column_find("wchan")];
	int cols[VT_MAX_COLUMNS], n;
	char err[128], buf[64];
	world_t w;

	(void)state;
	world_open(&w);
	/* the default columns: not read, so no value (not an empty one) */
	assert_true(w.src.vmon.flags & VMON_FLAG_NO_WCHAN);
	assert_int_equal(vt_column_format(wchan, row_of(&w, 101), &w.snap, buf, sizeof(buf), true), -1);
	/* a wchan column: read */
	n = vt_column_parse_list("pid,wchan,command", cols, VT_MAX_COLUMNS, err, sizeof(err));
	assert_int_equal(n, 3);
	assert_true(vt_columns_wants(cols, n) & VT_WANT_WCHAN);
	assert_int_equal(vt_source_set_wants(&w.src, vt_columns_wants(cols, n), false), 0);
	assert_false(w.src.vmon.flags & VMON_FLAG_NO_WCHAN);
	sample(&w);
	assert_true(vt_column_format(wchan, row_of(&w, 101), &w.snap, buf, sizeof(buf), true) > 0);
	assert_string_equal(buf, "do_select");
	/* the column gone: not read again */
	assert_int_equal(vt_source_set_wants(&w.src, vt_columns_wants(w.cfg.columns, w.cfg.columns_nr), false), 0);
	sample(&w);
	assert_int_equal(vt_column_format(wchan, row_of(&w, 101), &w.snap, buf, sizeof(buf), true), -1);
	/* the details page of a process: read while it is open */
	vt_source_set_detail(&w.src, 101);
	sample(&w);
	assert_true(vt_column_format(wchan, row_of(&w, 101), &w.snap, buf, sizeof(buf), true) > 0);
	assert_string_equal(buf, "do_select");
	vt_source_set_detail(&w.src, 0);
	assert_true(w.src.vmon.flags & VMON_FLAG_NO_WCHAN);
	world_close(&w);
}

/* PSS (smaps_rollup) is read for the pids the screen says are shown, never for all */
static void test_rollup_visible(void **state)
{
	static const char rollup[] = "5600000-7ffd0000 ---p 00000000 00:00 0 [rollup]\nRss: 900 kB\nPss: %d kB\n"
				     "Pss_Anon: 10 kB\nPss_File: 20 kB\nPss_Shmem: 0 kB\nShared_Clean: 1 kB\n"
				     "Shared_Dirty: 0 kB\nPrivate_Clean: 2 kB\nPrivate_Dirty: 3 kB\nSwapPss: 0 kB\n";
	const vmon_store_desc_t *desc = &vmon_proc_store_descs[VMON_STORE_PROC_ROLLUP];
	int cols[VT_MAX_COLUMNS], n, one = 101, other = 102;
	char err[128], buf[64];
	world_t w;

	(void)state;
	world_open(&w);
	fixture_printf(&w.fx, "101/smaps_rollup", rollup, 333);
	fixture_printf(&w.fx, "102/smaps_rollup", rollup, 444);
	n = vt_column_parse_list("pid,pss_kb,command", cols, VT_MAX_COLUMNS, err, sizeof(err));
	assert_int_equal(n, 3);
	assert_true(vt_columns_wants(cols, n) & VMON_WANT_PROC_ROLLUP);
	/* the column's want is not the instance's: no process is read for it ... */
	assert_int_equal(vt_source_set_wants(&w.src, vt_columns_wants(cols, n), false), 0);
	sample(&w);
	for (int i = 0; i < w.snap.rows_nr; i++)
		assert_null(w.snap.rows[i].stores[VMON_STORE_PROC_ROLLUP]);
	/* ... but those shown */
	assert_int_equal(vt_source_set_rollup(&w.src, &one, 1), 0);
	sample(&w);
	assert_non_null(row_of(&w, 101)->stores[VMON_STORE_PROC_ROLLUP]);
	assert_null(row_of(&w, 102)->stores[VMON_STORE_PROC_ROLLUP]);
	assert_null(row_of(&w, 100)->stores[VMON_STORE_PROC_ROLLUP]);
	assert_true(vmon_field_present(desc, &desc->fields[VMON_PROC_ROLLUP_PSS_KB],
				       row_of(&w, 101)->stores[VMON_STORE_PROC_ROLLUP]));
	vt_column_format(&vt_columns[vt_column_find("pss_kb")], row_of(&w, 101), &w.snap, buf, sizeof(buf), true);
	assert_string_equal(buf, "333");
	assert_int_equal(vt_column_format(&vt_columns[vt_column_find("pss_kb")], row_of(&w, 102), &w.snap, buf,
					  sizeof(buf), true), -1);
	/* scrolled: the one that left loses it, the one that came gets it */
	assert_int_equal(vt_source_set_rollup(&w.src, &other, 1), 0);
	sample(&w);
	assert_null(row_of(&w, 101)->stores[VMON_STORE_PROC_ROLLUP]);
	vt_column_format(&vt_columns[vt_column_find("pss_kb")], row_of(&w, 102), &w.snap, buf, sizeof(buf), true);
	assert_string_equal(buf, "444");
	/* the column hidden: none */
	assert_int_equal(vt_source_set_rollup(&w.src, NULL, 0), 0);
	sample(&w);
	for (int i = 0; i < w.snap.rows_nr; i++)
		assert_null(w.snap.rows[i].stores[VMON_STORE_PROC_ROLLUP]);
	world_close(&w);
}

/* the old vt_format_size(), all printf: the ground truth for the integer path */
static void size_by_printf(char *buf, size_t size, double bytes)
{
	static const char units[] = "BKMGTPE";
	int u = 0;

	if (bytes < 0.5) {
		snprintf(buf, size, "0");
		return;
	}
	while (bytes >= 1024 && units[u + 1]) {
		bytes /= 1024;
		u++;
	}
	if (u == 0 || bytes >= 99.95)
		snprintf(buf, size, "%.0f%c", bytes, units[u]);
	else if (bytes >= 9.995)
		snprintf(buf, size, "%.1f%c", bytes, units[u]);
	else
		snprintf(buf, size, "%.2f%c", bytes, units[u]);
}

/*
 * The numbers of the columns are written without printf (vtop -b at 5,000
 * processes spent most of its own time in it): the text must be printf's,
 * byte for byte, ties and carries included.
 */
static void test_number_text(void **state)
{
	const int cpu = vt_column_find("cpu_percent"), time_col = vt_column_find("time");
	const int virt = vt_column_find("virt"), pid = vt_column_find("pid");
	world_t w;
	char got[64], want[64];
	vt_row_t *r;
	vmon_proc_stat_t *s;
	unsigned long long seed = 12345;

	world_open(&w);
	r = &w.snap.rows[vt_snapshot_find(&w.snap, 100, 0)];
	s = r->stores[VMON_STORE_PROC_STAT];
	for (int i = 0; i < 200000; i++) {
		double x;
		unsigned long long bytes, ticks;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		/* ties and near-ties of both precisions, and plain values over a wide range */
		switch (i % 5) {
		case 0: x = (double)(seed >> 40 & 0xfffff) / 200.0; break;
		case 1: x = (double)(seed >> 40 & 0xfffff) / 2000.0 + 0.0005; break;
		case 2: x = (double)(seed >> 11) / (double)(1ULL << 53) * 1000.0; break;
		/* either side of where the integer path hands over to snprintf() */
		case 3: x = (double)(seed >> 11) / (double)(1ULL << 53) * 4e9; break;
		default: x = (double)(seed >> 40 & 0xfff) / 8.0; break;
		}
		r->cpu_pct = x;
		vt_column_format(&vt_columns[cpu], r, &w.snap, got, sizeof(got), false);
		snprintf(want, sizeof(want), "%.1f", x);
		assert_string_equal(got, want);
		vt_column_format(&vt_columns[cpu], r, &w.snap, got, sizeof(got), true);
		snprintf(want, sizeof(want), "%.2f", x);
		assert_string_equal(got, want);

		/* sizes: whole numbers at every scale, and halves of the last digit exactly */
		bytes = (seed >> (i % 50)) + (i & 1 ? 0 : (1ULL << (i % 40)) * 5);
		vt_format_size(got, sizeof(got), (double)bytes);
		size_by_printf(want, sizeof(want), (double)bytes);
		assert_string_equal(got, want);
		s->vsize = bytes;
		vt_column_format(&vt_columns[virt], r, &w.snap, got, sizeof(got), true);
		snprintf(want, sizeof(want), "%.0f", (double)bytes);
		assert_string_equal(got, want);

		ticks = seed >> (20 + i % 40);
		s->utime = ticks;
		s->stime = ticks / 3;
		ticks = (ticks + ticks / 3) * 100 / (unsigned long long)w.snap.ticks_per_sec;
		vt_column_format(&vt_columns[time_col], r, &w.snap, got, sizeof(got), false);
		if (ticks < 360000ULL)
			snprintf(want, sizeof(want), "%llu:%02llu.%02llu", ticks / 6000, ticks / 100 % 60, ticks % 100);
		else
			snprintf(want, sizeof(want), "%lluh%02llu:%02llu", ticks / 360000, ticks / 6000 % 60, ticks / 100 % 60);
		assert_string_equal(got, want);
		vt_column_format(&vt_columns[time_col], r, &w.snap, got, sizeof(got), true);
		snprintf(want, sizeof(want), "%llu.%02llu", ticks / 100, ticks % 100);
		assert_string_equal(got, want);
	}
	/* cut as snprintf() cuts, with its length */
	assert_int_equal(vt_column_format(&vt_columns[pid], r, &w.snap, got, 3, false), 3);
	assert_string_equal(got, "10");
	r->cpu_pct = 12.25;
	assert_int_equal(vt_column_format(&vt_columns[cpu], r, &w.snap, got, 3, true), 5);
	assert_string_equal(got, "12");
	world_close(&w);
}

/* the event feed on a fixture tree: the kernel's events are not about it, and the meter says why */
static void test_feed_meter(void **state)
{
	world_t w;

	world_open(&w);
	assert_false(w.snap.feed_active);
	assert_string_equal(w.snap.feed, "none");
	/* auto wanted one: each backend's reason */
	assert_non_null(strstr(w.snap.feed_why, "ebpf: "));
	assert_non_null(strstr(w.snap.feed_why, "proc root"));
	/* comparing samples makes the event log */
	assert_false(w.src.builder.events_from_feed);
	world_close(&w);

	/* none asked for: no reason to give */
	memset(&w, 0, sizeof(w));
	fixture_init(&w.fx);
	make_tree(&w.fx);
	vt_config_defaults(&w.cfg);
	snprintf(w.cfg.backend, sizeof(w.cfg.backend), "none");
	{
		char err[256];

		assert_int_equal(vt_source_init(&w.src, &w.cfg, VMON_WANT_PROC_STAT, w.fx.root, err, sizeof(err)), 0);
		vt_snapshot_init(&w.snap);
		vt_view_init(&w.view);
		sample(&w);
		assert_string_equal(w.snap.feed, "none");
		assert_string_equal(w.snap.feed_why, "");
		/* and a name vtop does not know is an error that says so */
		vt_source_fini(&w.src);
		snprintf(w.cfg.backend, sizeof(w.cfg.backend), "bpf");
		assert_int_equal(vt_source_init(&w.src, &w.cfg, VMON_WANT_PROC_STAT, w.fx.root, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "--backend: auto, ebpf, perf, netlink or none, not \"bpf\""));
	}
	vt_view_free(&w.view);
	vt_snapshot_free(&w.snap);
	fixture_free(&w.fx);
}

/* the line --events prints for an entry, without its time stamp */
static const char *event_line(const vt_event_t *e)
{
	static char buf[1024];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	assert_non_null(f);
	vt_event_write(f, e);
	fclose(f);
	assert_non_null(strchr(buf, ' '));
	return strchr(buf, ' ') + 1;
}

/* the feed's events as the log and --events show them: escaped, cut whole, exit codes and signals */
static void test_feed_events(void **state)
{
	static const char args[] = "prog\0-x\0\xff\xfe\0";
	char long_args[3000];
	vmon_event_t ev;
	vt_event_t e;

	memset(&ev, 0, sizeof(ev));
	ev.kind = VMON_EVENT_FORK;
	ev.has = VMON_EVENT_HAS_COMM;
	ev.pid = 4242;
	ev.time_ns = 5000000000ull;
	snprintf(ev.comm, sizeof(ev.comm), "bash");
	vt_event_from_feed(&e, &ev, 1000.0, 0);
	assert_true(e.from_feed);
	assert_int_equal(e.kind, 'N');
	assert_true(e.when == 1005.0);
	assert_int_equal(e.ppid, 0);	/* not carried: unknown */
	assert_int_equal(e.exit_code, -1);
	assert_string_equal(event_line(&e), "fork pid=4242 ppid=0 comm=bash\n");

	ev.kind = VMON_EVENT_EXEC;
	ev.has = VMON_EVENT_HAS_COMM | VMON_EVENT_HAS_PPID | VMON_EVENT_HAS_FILENAME | VMON_EVENT_HAS_ARGS;
	ev.ppid = 1;
	memcpy(ev.comm, "ev\x1b[1mil\n", 10);
	ev.filename = "/tmp/a\tb";
	ev.args = args;
	ev.args_len = sizeof(args) - 1;
	vt_event_from_feed(&e, &ev, 0, 0);
	assert_int_equal(e.kind, 'E');
	assert_string_equal(e.comm, "ev\\x1b[1mil\\x0a");
	assert_string_equal(e.file, "/tmp/a\\x09b");
	assert_string_equal(e.args, "prog -x \\xff\\xfe");
	assert_string_equal(event_line(&e), "exec pid=4242 ppid=1 comm=ev\\x1b[1mil\\x0a file=/tmp/a\\x09b args=prog -x \\xff\\xfe\n");
	/* --ascii: nothing but ASCII */
	memcpy(ev.comm, "caf\xc3\xa9", 6);
	vt_event_from_feed(&e, &ev, 0, VMON_ESCAPE_ASCII);
	assert_string_equal(e.comm, "caf\\xc3\\xa9");

	/* arguments longer than the entry: cut between two characters, never inside one, and marked */
	memset(long_args, 'a', sizeof(long_args));
	for (size_t i = 100; i + 2 < sizeof(long_args); i += 3)
		memcpy(long_args + i, "\xc3\xa9\x01", 3);	/* two bytes of UTF-8, then a control */
	long_args[sizeof(long_args) - 1] = '\0';
	ev.args = long_args;
	ev.args_len = sizeof(long_args);
	vt_event_from_feed(&e, &ev, 0, 0);
	assert_true(strlen(e.args) < sizeof(e.args));
	assert_string_equal(e.args + strlen(e.args) - 3, "...");
	for (size_t i = 100; i < strlen(e.args) - 3;) {
		/* what is left is whole: é, or \x01, each complete */
		if (!strncmp(e.args + i, "\xc3\xa9", 2))
			i += 2;
		else if (!strncmp(e.args + i, "\\x01", 4))
			i += 4;
		else
			fail_msg("a character cut at byte %zu of \"%s\"", i, e.args);
	}
	/* arguments the kernel side cut are said cut, however short what is left */
	ev.args = "x";
	ev.args_len = 2;
	ev.args_truncated = 1;
	vt_event_from_feed(&e, &ev, 0, 0);
	assert_string_equal(e.args + strlen(e.args) - 3, "...");

	/* an exit: its code, or the signal that ended it */
	memset(&ev, 0, sizeof(ev));
	ev.kind = VMON_EVENT_EXIT;
	ev.has = VMON_EVENT_HAS_COMM | VMON_EVENT_HAS_PPID | VMON_EVENT_HAS_EXIT_STATUS;
	ev.pid = 77;
	ev.ppid = 7;
	snprintf(ev.comm, sizeof(ev.comm), "sh");
	ev.exit_status = 42 << 8;
	vt_event_from_feed(&e, &ev, 0, 0);
	assert_int_equal(e.kind, 'X');
	assert_int_equal(e.exit_code, 42 << 8);
	assert_string_equal(event_line(&e), "exit pid=77 ppid=7 code=42 comm=sh\n");
	ev.exit_status = SIGKILL;
	vt_event_from_feed(&e, &ev, 0, 0);
	assert_string_equal(event_line(&e), "exit pid=77 ppid=7 signal=SIGKILL comm=sh\n");
	ev.has &= ~VMON_EVENT_HAS_EXIT_STATUS;
	vt_event_from_feed(&e, &ev, 0, 0);
	assert_string_equal(event_line(&e), "exit pid=77 ppid=7 comm=sh\n");
}

/* escaped text cut to fit: before a whole character or escape, with "..." */
static void test_text_fit(void **state)
{
	char buf[16];

	vt_text_fit(buf, sizeof(buf), "short", 5);
	assert_string_equal(buf, "short");
	vt_text_fit(buf, 10, "abc\\x1bdefgh", 11);
	assert_string_equal(buf, "abc...");	/* \x1b does not fit whole: none of it */
	vt_text_fit(buf, 10, "abcd\\\\efgh", 10);
	assert_string_equal(buf, "abcd\\\\...");	/* an escaped backslash, whole */
	vt_text_fit(buf, 9, "abcd\xc3\xa9xyz", 9);
	assert_string_equal(buf, "abcd...");	/* é would end past the room */
	vt_text_fit(buf, 4, "abcdef", 6);
	assert_string_equal(buf, "");
}

/* a node of the tree made by hand: the same process as real (pid and start) where the library handed it twice */
static vmon_proc_t *fake_node(const vmon_proc_t *real, int pid, vmon_proc_stat_t *stat)
{
	vmon_proc_t *p = calloc(1, sizeof(*p));

	assert_non_null(p);
	INIT_LIST_HEAD(&p->children);
	INIT_LIST_HEAD(&p->threads);
	INIT_LIST_HEAD(&p->siblings);
	INIT_LIST_HEAD(&p->sample_callbacks);
	p->pid = pid;
	p->wants = real->wants;
	p->stores[VMON_STORE_PROC_STAT] = stat ? stat : real->stores[VMON_STORE_PROC_STAT];
	return p;
}

/* the i-th event of test_event_ring: texts of every length, some past their field and cut to fit */
static void ring_event(vt_event_t *e, int i)
{
	static const char cut_here[] = "\\\\\\x1b\xc3\xa9\xe2\x82\xac";	/* \\, \x1b, an e acute and a euro sign */
	char text[400];
	size_t len = (size_t)(i * 7) % sizeof(text);

	memset(e, 0, sizeof(*e));
	e->when = 1000.0 + i;
	e->kind = "NEX"[i % 3];
	e->from_feed = i % 2;
	e->pid = 100 + i;
	e->ppid = i % 5 ? 1 : 0;
	e->exit_code = i % 3 == 2 ? i % 256 : -1;
	for (size_t k = 0; k < len; k++)
		text[k] = (char)('a' + (i + (int)k) % 26);
	/* a cut must not fall inside an escape or a UTF-8 character */
	if (len > 40)
		memcpy(text + 35, cut_here, sizeof(cut_here) - 1);
	vt_text_fit(e->comm, sizeof(e->comm), text, len % 50);
	if (e->kind == 'E') {
		vt_text_fit(e->file, sizeof(e->file), text, len % 120);
		vt_text_fit(e->args, sizeof(e->args), text, len);
	}
}

/*
 * The event log's ring keeps the same count as the array it replaced and
 * every event's text as it was cut to fit, across the byte ring's wrap and
 * growth, for events whose text is empty, short or as long as its field.
 */
static void test_event_ring(void **state)
{
	enum { MAX = 10000, PUSHED = 25013 };
	vt_event_ring_t r;
	vt_event_t want, got;
	size_t full = 0;

	assert_int_equal(vt_event_ring_init(&r, MAX), 0);
	for (int i = 0; i < PUSHED; i++) {
		ring_event(&want, i);
		assert_int_equal(vt_event_ring_push(&r, &want), 0);
		assert_int_equal(r.nr, i < MAX ? i + 1 : MAX);
		if (i % 997 == 0) {
			/* the newest and the oldest kept, as they came */
			vt_event_ring_get(&r, 0, &got);
			assert_string_equal(got.args, want.args);
			ring_event(&want, i + 1 - r.nr);
			vt_event_ring_get(&r, r.nr - 1, &got);
			assert_string_equal(got.comm, want.comm);
			assert_true(got.when == want.when);
		}
	}
	for (int k = 0; k < MAX; k++) {
		ring_event(&want, PUSHED - 1 - k);
		vt_event_ring_get(&r, k, &got);
		assert_true(got.when == want.when);
		assert_int_equal(got.kind, want.kind);
		assert_int_equal(got.from_feed, want.from_feed);
		assert_int_equal(got.pid, want.pid);
		assert_int_equal(got.ppid, want.ppid);
		assert_int_equal(got.exit_code, want.exit_code);
		assert_string_equal(got.comm, want.comm);
		assert_string_equal(got.file, want.file);
		assert_string_equal(got.args, want.args);
		if (strlen(want.args) == sizeof(want.args) - 1 && strstr(want.args, "..."))
			full++;
	}
	/* long texts were among them, kept as cut; the text's bytes are those of the events kept */
	assert_true(full > 0);
	assert_true(r.text_cap < (size_t)MAX * (sizeof(want.comm) + sizeof(want.file) + sizeof(want.args)));
	vt_event_ring_clear(&r);
	assert_int_equal(r.nr, 0);
	ring_event(&want, 2);
	assert_int_equal(vt_event_ring_push(&r, &want), 0);
	vt_event_ring_get(&r, 0, &got);
	assert_int_equal(r.nr, 1);
	assert_string_equal(got.args, want.args);
	vt_event_ring_free(&r);
}

/*
 * Events written to a log, in a burst between two samples, and replayed:
 * what the replay's callback hands over, through the feed's ring, to the
 * screen's takes of 128 (event_log.c's).  The ring starts at
 * VT_FEED_RING_MIN and grows as the burst waits.
 */
static void feed_burst(int first_pid, int n, unsigned long long *dropped, int *got, int *first_got, int *last_got)
{
	vmon_log_writer_t *w;
	vmon_log_record_t rec;
	vmon_event_t ev;
	vmon_log_t *log;
	vt_feed_t *feed = NULL;
	vt_event_t batch[128];
	vmon_t live, replay;
	fixture_t fx;
	char err[256];
	int fd, taken, prev = first_pid - 1;
	unsigned long long lost;

	fixture_init(&fx);
	make_tree(&fx);
	assert_true(fixture_vmon(&fx, &live, VMON_FLAG_PROC_ALL, VMON_WANT_SYS_STAT, VMON_WANT_PROC_STAT));
	fd = memfd_create("vtop-feed", MFD_CLOEXEC);
	assert_true(fd >= 0);
	w = vmon_log_writer_open(fd, &live);
	assert_non_null(w);
	assert_true(vmon_sample(&live));
	assert_int_equal(vmon_log_write_sample(w, &live, NULL), 0);
	memset(&ev, 0, sizeof(ev));
	ev.kind = VMON_EVENT_FORK;
	ev.has = VMON_EVENT_HAS_PPID;
	ev.ppid = 1;
	for (int i = 0; i < n; i++) {
		ev.pid = ev.tid = first_pid + i;
		ev.time_ns = 1000000000ull + (unsigned long long)i;
		assert_int_equal(vmon_log_write_event(w, &ev), 0);
	}
	assert_true(vmon_sample(&live));
	assert_int_equal(vmon_log_write_sample(w, &live, NULL), 0);
	assert_int_equal(vmon_log_writer_close(w), 0);
	vmon_destroy(&live);

	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	log = vmon_log_open(fd);
	assert_non_null(log);
	assert_int_equal(vmon_log_read(log, &rec), 0);
	assert_int_equal(rec.type, VMON_LOG_HEADER);
	assert_int_equal(vmon_log_replay_init(&replay, rec.u.header, 0), 0);
	assert_int_equal(vt_feed_open_replay(&feed, &replay, 0, err, sizeof(err)), 0);
	while (vmon_log_read(log, &rec) == 0)
		assert_int_equal(vmon_log_replay_record(&replay, &rec), 0);
	assert_int_equal(rec.state, VMON_LOG_EOF);

	*dropped = 0;
	*got = 0;
	*first_got = *last_got = -1;
	while ((taken = vt_feed_take(feed, batch, 128, &lost)) > 0) {
		*dropped += lost;
		for (int i = 0; i < taken; i++) {
			/* as they came, the oldest first, none twice */
			assert_int_equal(batch[i].kind, 'N');
			assert_true(batch[i].pid > prev);
			prev = batch[i].pid;
			if (*first_got < 0)
				*first_got = batch[i].pid;
			*last_got = batch[i].pid;
		}
		*got += taken;
	}
	*dropped += lost;
	vmon_destroy(&replay);
	vt_feed_close(feed);	/* (after the instance whose callback it was: event_feed.c) */
	vmon_log_close(log);
	close(fd);
	fixture_free(&fx);
}

static void test_feed_handover(void **state)
{
	unsigned long long dropped;
	int got, first, last;

	(void)state;
	/* fewer than the first ring holds, then a burst it doubles for: every one, in order */
	feed_burst(1000, VT_FEED_RING_MIN / 2, &dropped, &got, &first, &last);
	assert_int_equal(got, VT_FEED_RING_MIN / 2);
	assert_int_equal(dropped, 0);
	assert_int_equal(first, 1000);
	assert_int_equal(last, 1000 + VT_FEED_RING_MIN / 2 - 1);
	feed_burst(1000, VT_FEED_RING_MIN + 1, &dropped, &got, &first, &last);
	assert_int_equal(got, VT_FEED_RING_MIN + 1);
	assert_int_equal(dropped, 0);
	feed_burst(1000, 5000, &dropped, &got, &first, &last);
	assert_int_equal(got, 5000);
	assert_int_equal(dropped, 0);
	assert_int_equal(first, 1000);
	assert_int_equal(last, 5999);
	/* as many as the ring's most, then more: the newest kept, the oldest counted dropped */
	feed_burst(1000, VT_FEED_RING, &dropped, &got, &first, &last);
	assert_int_equal(got, VT_FEED_RING);
	assert_int_equal(dropped, 0);
	assert_int_equal(first, 1000);
	feed_burst(1000, VT_FEED_RING + 500, &dropped, &got, &first, &last);
	assert_int_equal(got, VT_FEED_RING);
	assert_int_equal(dropped, 500);
	assert_int_equal(first, 1500);
	assert_int_equal(last, 1000 + VT_FEED_RING + 500 - 1);
}

/*
 * A storm's long exec lines, then short texts in their place: the byte
 * ring follows the texts down (it was the storm's size for good), and
 * every event kept reads back as it came, through each resize.
 */
static void test_event_ring_shrinks(void **state)
{
	enum { MAX = 1000 };
	vt_event_ring_t r;
	vt_event_t want, got;
	size_t storm_cap;

	(void)state;
	assert_int_equal(vt_event_ring_init(&r, MAX), 0);
	memset(&want, 0, sizeof(want));
	want.kind = 'E';
	memset(want.file, 'f', sizeof(want.file) - 1);
	memset(want.args, 'a', sizeof(want.args) - 1);
	for (int i = 0; i < MAX; i++) {
		want.pid = i;
		snprintf(want.comm, sizeof(want.comm), "storm%d", i);
		assert_int_equal(vt_event_ring_push(&r, &want), 0);
	}
	storm_cap = r.text_cap;
	assert_true(storm_cap >= (size_t)MAX * (sizeof(want.file) + sizeof(want.args) - 2));
	/* short texts replace them one by one; the log reads back whole after each */
	memset(&want, 0, sizeof(want));
	want.kind = 'X';
	for (int i = MAX; i < 2 * MAX; i++) {
		want.pid = i;
		snprintf(want.comm, sizeof(want.comm), "c%d", i % 10);
		assert_int_equal(vt_event_ring_push(&r, &want), 0);
		assert_true(r.text_used <= r.text_cap);
		if (i % 97 && i != 2 * MAX - 1)
			continue;
		for (int k = 0; k < MAX; k++) {
			int pid = i - k;

			vt_event_ring_get(&r, k, &got);
			assert_int_equal(got.pid, pid);
			if (pid >= MAX) {
				char comm[8];

				snprintf(comm, sizeof(comm), "c%d", pid % 10);
				assert_string_equal(got.comm, comm);
				assert_string_equal(got.args, "");
			} else {
				assert_int_equal(strlen(got.args), sizeof(got.args) - 1);
				assert_int_equal(strlen(got.file), sizeof(got.file) - 1);
			}
		}
	}
	print_message("a byte ring of %zu bytes for the storm's texts, %zu for 1,000 short ones (%zu used)\n",
		      storm_cap, r.text_cap, r.text_used);
	/* vt_room_fit()'s rule: cut to twice the use each time it fell under a quarter, and no more once over it */
	assert_int_equal(r.text_used, (size_t)MAX * 2);
	assert_true(r.text_cap / 4 <= r.text_used && r.text_cap < storm_cap / 32);
	vt_event_ring_free(&r);
}

static int rows_of(const world_t *w, int pid)
{
	int n = 0;

	for (int i = 0; i < w->snap.rows_nr; i++)
		n += w->snap.rows[i].pid == pid;
	return n;
}

/*
 * One row per process (pid, start), whatever the library hands: 101 a
 * second time under 200, and 100 a second time at the top with a child of
 * its own (103), which goes under 100's one row.  Without the builder's
 * index of identities this test sees 101 and 100 twice.
 */
static void test_one_row_per_process(void **state)
{
	vmon_proc_t *p101, *p100, *p200, *dup101, *dup100, *kid;
	vmon_proc_stat_t kid_stat;
	world_t w;

	world_open(&w);
	p100 = vmon_proc_lookup(&w.src.vmon, 100);
	p101 = vmon_proc_lookup(&w.src.vmon, 101);
	p200 = vmon_proc_lookup(&w.src.vmon, 200);
	assert_non_null(p100);
	assert_non_null(p101);
	assert_non_null(p200);
	dup101 = fake_node(p101, 101, NULL);
	dup100 = fake_node(p100, 100, NULL);
	memcpy(&kid_stat, p101->stores[VMON_STORE_PROC_STAT], sizeof(kid_stat));
	kid_stat.pid = 103;
	kid_stat.ppid = 100;
	kid_stat.start = 530;
	kid = fake_node(p101, 103, &kid_stat);
	list_add_tail(&dup101->siblings, &p200->children);
	list_add_tail(&dup100->siblings, &w.src.vmon.processes);
	list_add_tail(&kid->siblings, &dup100->children);

	assert_int_equal(vt_builder_build(&w.src.builder, &w.snap, 0), 0);
	vt_view_build(&w.view, &w.snap);
	assert_int_equal(rows_of(&w, 101), 1);
	assert_int_equal(rows_of(&w, 100), 1);
	assert_int_equal(rows_of(&w, 103), 1);
	assert_int_equal(w.snap.rows[row_of(&w, 101)->parent].pid, 100);
	assert_int_equal(w.snap.rows[row_of(&w, 103)->parent].pid, 100);
	assert_string_equal(line_pids(&w), "1 100 101 102 103 200");
	/* the flat list and the counts too */
	vt_view_set_flag(&w.view, VT_VIEW_TREE, false);
	vt_view_build(&w.view, &w.snap);
	assert_int_equal(vt_view_lines(&w.view), 6);
	assert_int_equal(w.snap.procs, 8);	/* 1 2 3 100 101 102 103 200 */

	list_del(&kid->siblings);
	list_del(&dup100->siblings);
	list_del(&dup101->siblings);
	free(kid);
	free(dup100);
	free(dup101);
	world_close(&w);
}

/*
 * The copy the library does not give for its pid walked before the one it
 * gives: 200 a second time under 100.  Its row is found among the other
 * rows when 200's own node comes, in this build and the next (where 200's
 * node still has the row it had before, and that row is another's now).
 */
static void test_one_row_copy_first(void **state)
{
	vmon_proc_t *p100, *p200, *dup200;
	world_t w;

	world_open(&w);
	p100 = vmon_proc_lookup(&w.src.vmon, 100);
	p200 = vmon_proc_lookup(&w.src.vmon, 200);
	assert_non_null(p100);
	assert_non_null(p200);
	dup200 = fake_node(p200, 200, NULL);
	list_add(&dup200->siblings, &p100->children);
	for (int build = 0; build < 2; build++) {
		assert_int_equal(vt_builder_build(&w.src.builder, &w.snap, 0), 0);
		vt_view_build(&w.view, &w.snap);
		assert_int_equal(rows_of(&w, 200), 1);
		assert_int_equal(w.snap.rows[row_of(&w, 200)->parent].pid, 100);
		assert_string_equal(line_pids(&w), "1 100 101 102 200");
	}
	list_del(&dup200->siblings);
	free(dup200);
	assert_int_equal(vt_builder_build(&w.src.builder, &w.snap, 0), 0);
	vt_view_build(&w.view, &w.snap);
	assert_int_equal(rows_of(&w, 200), 1);
	assert_int_equal(w.snap.rows[row_of(&w, 200)->parent].pid, 1);
	world_close(&w);
}

/*
 * The rows from *i on against the library's tree below proc, depth first as
 * the snapshot promises: the node, its threads (with what is under each),
 * then its children, each list in its order, each under its parent's row.
 */
static void expect_walk(const world_t *w, const vmon_proc_t *proc, int parent, int *i)
{
	const vmon_proc_t *child;
	int self = *i;

	assert_true(self < w->snap.rows_nr);
	assert_int_equal(w->snap.rows[self].pid, proc->pid);
	assert_int_equal(w->snap.rows[self].parent, parent);
	(*i)++;
	if (!proc->is_thread && w->snap.threads_shown) {
		list_for_each_entry(child, &proc->threads, threads) {
			if (child->pid != proc->pid)
				expect_walk(w, child, self, i);
		}
	}
	list_for_each_entry(child, &proc->children, siblings)
		expect_walk(w, child, self, i);
}

static void expect_tree_order(const world_t *w)
{
	const vmon_proc_t *proc;
	int i = 0;

	list_for_each_entry(proc, &w->src.vmon.processes, siblings)
		expect_walk(w, proc, -1, &i);
	assert_int_equal(i, w->snap.rows_nr);
}

/* a process's stat line again, saying it has n threads (the library lists its tasks then) */
static void threads_count(world_t *w, int pid, const char *comm, char state, unsigned long long start, int n)
{
	fixture_stat_t st;
	char path[64];

	fixture_stat_init(&st, pid, 1, comm, state, start);
	fixture_stat_set(&st, 20, "%d", n);
	snprintf(path, sizeof(path), "%d/stat", pid);
	fixture_stat_write(&w->fx, path, &st, FIXTURE_STAT_FIELDS, true);
}

#define CHAIN_DEPTH	300
#define WIDE_CHILDREN	500

/*
 * The walk on a chain of nested shells as deep as CHAIN_DEPTH and a parent
 * of WIDE_CHILDREN, with threads (one of them a thread's own children file
 * aside, a process with threads and children): every row once, under the
 * row of the parent the fixture gave it, in the tree's order.
 */
static void test_walk_deep_and_wide(void **state)
{
	static const char *const argv[] = { "sh", NULL };
	world_t w;

	world_open(&w);
	fixture_proc(&w.fx, 1000, 1, NULL, 'S', 700, argv);
	for (int d = 1; d < CHAIN_DEPTH; d++)
		fixture_proc(&w.fx, 1000 + d, 1000 + d - 1, NULL, 'S', 700 + (unsigned long long)d, argv);
	fixture_proc(&w.fx, 5000, 1, NULL, 'S', 800, argv);
	for (int c = 1; c <= WIDE_CHILDREN; c++)
		fixture_proc(&w.fx, 5000 + c, 5000, NULL, 'S', 900, argv);
	fixture_thread(&w.fx, 200, 201, "worker-1", 'S', 610);
	fixture_thread(&w.fx, 200, 202, "worker-2", 'S', 620);
	threads_count(&w, 200, "bash", 'R', 600, 3);
	fixture_thread(&w.fx, 5000, 4998, "helper", 'S', 810);
	threads_count(&w, 5000, "sh", 'S', 800, 2);
	assert_int_equal(vt_source_set_wants(&w.src, vt_columns_wants(w.cfg.columns, w.cfg.columns_nr), true), 0);
	tick(&w, 1);
	sample(&w);
	assert_true(w.snap.threads_shown);
	expect_tree_order(&w);
	assert_int_equal(rows_of(&w, 201), 1);
	assert_int_equal(w.snap.rows[row_of(&w, 201)->parent].pid, 200);
	assert_int_equal(w.snap.rows[row_of(&w, 4998)->parent].pid, 5000);
	for (int d = 1; d < CHAIN_DEPTH; d++)
		assert_int_equal(w.snap.rows[row_of(&w, 1000 + d)->parent].pid, 1000 + d - 1);
	for (int c = 1; c <= WIDE_CHILDREN; c++)
		assert_int_equal(w.snap.rows[row_of(&w, 5000 + c)->parent].pid, 5000);
	/* the threads hidden again: the same walk without them */
	assert_int_equal(vt_source_set_wants(&w.src, vt_columns_wants(w.cfg.columns, w.cfg.columns_nr), false), 0);
	tick(&w, 1);
	sample(&w);
	expect_tree_order(&w);
	assert_int_equal(rows_of(&w, 201), 0);
	world_close(&w);
}

/* a parent out of the tree (-p shows a process and its descendants): the row's ppid is still its real one */
static void test_real_ppid(void **state)
{
	world_t w;
	char err[256];

	memset(&w, 0, sizeof(w));
	assert_int_equal(vt_columns_init(), 0);
	fixture_init(&w.fx);
	make_tree(&w.fx);
	/* without every process listed, the tree below a monitored one comes from its children file */
	fixture_children(&w.fx, 100, (const int[]){ 101, 102 }, 2);
	vt_config_defaults(&w.cfg);
	w.cfg.pids[w.cfg.pids_nr++] = 100;
	if (vt_source_init(&w.src, &w.cfg, vt_columns_wants(w.cfg.columns, w.cfg.columns_nr), w.fx.root,
			   err, sizeof(err)) < 0)
		fail_msg("vt_source_init: %s", err);
	vt_snapshot_init(&w.snap);
	vt_view_init(&w.view);
	vt_view_configure(&w.view, &w.cfg);
	sample(&w);
	assert_string_equal(line_pids(&w), "100 101 102");
	assert_int_equal(row_of(&w, 100)->parent, -1);
	assert_int_equal(row_of(&w, 100)->ppid, 1);
	assert_int_equal(row_of(&w, 101)->ppid, 100);
	world_close(&w);
}

/* what a program reads: the bytes the process gave, as UTF-8, from the escaped text */
static void test_real_text(void **state)
{
	static const struct {
		const char	*raw;		/* what the process gave */
		size_t		raw_len;
		const char	*real;		/* Python's raw.decode("utf-8", "replace") */
		size_t		real_len;
	} cases[] = {
		{ "a\\b", 3, "a\\b", 3 },
		{ "\x1b[1m\"q\",c\n", 10, "\x1b[1m\"q\",c\n", 10 },
		{ "h\xc3\xa9 \xe2\x9c\x93", 7, "h\xc3\xa9 \xe2\x9c\x93", 7 },
		{ "x\xffy", 3, "x\xef\xbf\xbdy", 5 },
		/* a sequence cut short is one replacement; a byte that cannot start one is one each */
		{ "\xe2\x82" "A", 3, "\xef\xbf\xbd" "A", 4 },
		{ "\xf0\x9f\x98", 3, "\xef\xbf\xbd", 3 },
		{ "\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd", 6 },
		{ "\xed\xa0\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 9 },
		{ "a\0b", 3, "a\0b", 3 },
		{ "\xc2\x9b", 2, "\xc2\x9b", 2 },
	};
	char escaped[256], real[3 * 256 + 1], *json;
	size_t json_len;
	FILE *f;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = vmon_escape(escaped, sizeof(escaped), cases[i].raw, cases[i].raw_len, 0);

		assert_int_equal(vt_text_real(real, escaped, len), cases[i].real_len);
		assert_memory_equal(real, cases[i].real, cases[i].real_len);
		/* --ascii escapes every byte past ASCII: the same text comes back */
		len = vmon_escape(escaped, sizeof(escaped), cases[i].raw, cases[i].raw_len, VMON_ESCAPE_ASCII);
		assert_int_equal(vt_text_real(real, escaped, len), cases[i].real_len);
		assert_memory_equal(real, cases[i].real, cases[i].real_len);
	}
	/* json: its own escapes for quotes, backslashes and controls, C1 ones included */
	f = open_memstream(&json, &json_len);
	assert_non_null(f);
	vmon_escape(escaped, sizeof(escaped), "a\\\"\x1b\n\xc2\x9b\xff\0z", 10, 0);
	vt_json_string(f, escaped);
	fclose(f);
	assert_string_equal(json, "\"a\\\\\\\"\\u001b\\n\\u009b\xef\xbf\xbd\\u0000z\"");
	free(json);
}

/* the machine fields of the columns: addresses in hex, an exit as code and signal apart, headers unique */
static void test_machine_columns(void **state)
{
	const int startcode = vt_column_find("startcode"), flags = vt_column_find("flags");
	const int exit_col = vt_column_find("exit_status"), signal_col = vt_column_find("term_signal");
	int cols[VT_MAX_COLUMNS];
	char buf[64], err[128];
	vmon_proc_stat_t stat;
	void *stores[VMON_STORE_PROC_NR];
	vt_row_t row;
	world_t w;

	world_open(&w);
	/* the addresses are PROC_STAT_EXTRA's: not read for the default columns, read once a column shows one */
	assert_int_equal(vt_column_format(&vt_columns[startcode], row_of(&w, 100), &w.snap, buf, sizeof(buf), true), -1);
	assert_int_equal(vt_column_parse_list("pid,startcode,command", cols, VT_MAX_COLUMNS, err, sizeof(err)), 3);
	assert_true(vt_columns_wants(cols, 3) & VMON_WANT_PROC_STAT_EXTRA);
	assert_false(vt_columns_wants(w.cfg.columns, w.cfg.columns_nr) & VMON_WANT_PROC_STAT_EXTRA);
	assert_int_equal(vt_source_set_wants(&w.src, vt_columns_wants(cols, 3), false), 0);
	sample(&w);
	assert_int_equal(vt_column_format(&vt_columns[startcode], row_of(&w, 100), &w.snap, buf, sizeof(buf), true), 8);
	assert_string_equal(buf, "0x400000");
	vt_column_format(&vt_columns[startcode], row_of(&w, 100), &w.snap, buf, sizeof(buf), false);
	assert_string_equal(buf, "0x400000");
	assert_int_equal(vt_columns[startcode].kind, VT_VALUE_STRING);
	vt_column_format(&vt_columns[flags], row_of(&w, 100), &w.snap, buf, sizeof(buf), true);
	assert_string_equal(buf, "0x400000");
	/* PRI and NI are a few characters wide, a pid never scaled */
	assert_true(vt_columns[vt_column_find("priority")].width <= 4);
	assert_true(vt_columns[vt_column_find("nice")].width <= 4);
	assert_int_equal(vt_columns[vt_column_find("pid")].width, 7);
	memcpy(&row, row_of(&w, 100), sizeof(row));
	memcpy(&stat, row.stores[VMON_STORE_PROC_STAT], sizeof(stat));
	memcpy(stores, row.stores, sizeof(stores));
	stores[VMON_STORE_PROC_STAT] = &stat;
	row.stores = stores;
	row.flags &= (unsigned char)~VT_ROW_SHARED;
	stat.pid = row.pid = 4194304;
	vt_column_format(&vt_columns[vt_column_find("pid")], &row, &w.snap, buf, sizeof(buf), false);
	assert_string_equal(buf, "4194304");
	/* exit 7: the code for both; SIGKILL: its name for a person, 9 beside no code for a program */
	row.flags |= VT_ROW_EXITED;
	row.exit_code = 7 << 8;
	assert_int_equal(vt_column_format(&vt_columns[exit_col], &row, &w.snap, buf, sizeof(buf), true), 1);
	assert_string_equal(buf, "7");
	assert_int_equal(vt_column_format(&vt_columns[signal_col], &row, &w.snap, buf, sizeof(buf), true), -1);
	row.exit_code = SIGKILL;
	assert_int_equal(vt_column_format(&vt_columns[exit_col], &row, &w.snap, buf, sizeof(buf), true), -1);
	vt_column_format(&vt_columns[exit_col], &row, &w.snap, buf, sizeof(buf), false);
	assert_string_equal(buf, "SIGKILL");
	vt_column_format(&vt_columns[signal_col], &row, &w.snap, buf, sizeof(buf), true);
	assert_string_equal(buf, "9");
	assert_int_equal(vt_columns[exit_col].with, signal_col);
	/* names and labels are one each; a column asked for twice is refused */
	for (int i = 0; i < vt_columns_nr; i++) {
		for (int j = i + 1; j < vt_columns_nr; j++) {
			assert_int_not_equal(strcasecmp(vt_columns[i].name, vt_columns[j].name), 0);
			assert_int_not_equal(strcasecmp(vt_columns[i].label, vt_columns[j].label), 0);
		}
	}
	assert_int_equal(vt_column_parse_list("pid,cpu_percent,CPU%", cols, VT_MAX_COLUMNS, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "twice"));
	world_close(&w);
}

/* the list's filter, on any text (the event log uses it) */
static void test_text_filter(void **state)
{
	vt_view_t view;

	vt_view_init(&view);
	assert_true(vt_view_text_matches(&view, "anything"));
	assert_int_equal(vt_view_set_filter(&view, "Feed", false), 0);
	assert_true(vt_view_text_matches(&view, "a feed here"));
	assert_false(vt_view_text_matches(&view, "a fee d"));
	assert_int_equal(vt_view_set_filter(&view, "^sh .*exit [0-9]+$", true), 0);
	assert_true(vt_view_text_matches(&view, "sh -c exit 42"));
	assert_false(vt_view_text_matches(&view, "bash -c exit 42"));
	vt_view_free(&view);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_snapshot_copies),
		cmocka_unit_test(test_snapshot_shares),
		cmocka_unit_test(test_ghost_shared),
		cmocka_unit_test(test_borrowed_rows),
		cmocka_unit_test(test_row_memo),
		cmocka_unit_test(test_sampler_hold),
		cmocka_unit_test(test_tree_flattening),
		cmocka_unit_test(test_collapse),
		cmocka_unit_test(test_sort),
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_search),
		cmocka_unit_test(test_view_without_sample),
		cmocka_unit_test(test_selection_follow),
		cmocka_unit_test(test_exited_rows),
		cmocka_unit_test(test_short_life_exited_at_once),
		cmocka_unit_test(test_exited_orphan),
		cmocka_unit_test(test_tags),
		cmocka_unit_test(test_many_events),
		cmocka_unit_test(test_new_rows_and_cpu),
		cmocka_unit_test(test_escaped_command),
		cmocka_unit_test(test_command_after_exec),
		cmocka_unit_test(test_command_same_length),
		cmocka_unit_test(test_columns),
		cmocka_unit_test(test_rollup_visible),
		cmocka_unit_test(test_wchan_when_shown),
		cmocka_unit_test(test_command_text_shared),
		cmocka_unit_test(test_number_text),
		cmocka_unit_test(test_feed_meter),
		cmocka_unit_test(test_feed_events),
		cmocka_unit_test(test_text_fit),
		cmocka_unit_test(test_event_ring),
		cmocka_unit_test(test_event_ring_shrinks),
		cmocka_unit_test(test_feed_handover),
		cmocka_unit_test(test_text_filter),
		cmocka_unit_test(test_one_row_per_process),
		cmocka_unit_test(test_one_row_copy_first),
		cmocka_unit_test(test_walk_deep_and_wide),
		cmocka_unit_test(test_real_ppid),
		cmocka_unit_test(test_real_text),
		cmocka_unit_test(test_machine_columns),
		cmocka_unit_test(test_room_fit),
		cmocka_unit_test(test_storm_rows_cut_back),
		cmocka_unit_test(test_heap_settle),
		cmocka_unit_test(test_storm_lines_cut_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
