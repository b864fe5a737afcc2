/*
 * test_config.c: vtop's settings: the defaults, vtoprc (read, saved, read
 * back; bad lines reported and skipped), and the command line overriding
 * the file.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"
#include "vtop.h"
#include "data/columns.h"

static char dir[256];

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "%s/vtop-config-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(vt_columns_init(), 0);
	setenv("XDG_CONFIG_HOME", dir, 1);
	return 0;
}

static int teardown(void **state)
{
	char cmd[512];

	/* our own temporary directory, named by us: no quoting issue */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int args(vt_config_t *cfg, const char *a1, const char *a2, const char *a3, const char *a4)
{
	char *argv[6] = { "vtop", (char *)a1, (char *)a2, (char *)a3, (char *)a4, NULL };
	int argc = 1;

	while (argc < 5 && argv[argc])
		argc++;
	return vt_config_args(cfg, argc, argv);
}

static void test_defaults(void **state)
{
	vt_config_t cfg;
	char path[512];

	vt_config_defaults(&cfg);
	assert_true(cfg.view.tree);
	assert_int_equal(cfg.columns_nr, 11);
	assert_string_equal(vt_columns[cfg.columns[0]].label, "PID");
	assert_string_equal(vt_columns[cfg.columns[10]].label, "COMMAND");
	assert_int_equal(cfg.view.sort_col[0], vt_column_find("cpu_percent"));
	assert_true(cfg.view.sort_desc[0]);
	assert_string_equal(cfg.backend, "auto");	/* the event feed on, whichever backend works */
	assert_int_equal(vt_config_path(path, sizeof(path)), 0);
	assert_non_null(strstr(path, "/vtop/vtoprc"));
	assert_true(strncmp(path, dir, strlen(dir)) == 0);
}

static void test_file_and_warnings(void **state)
{
	char path[512];
	vt_config_t cfg;

	snprintf(path, sizeof(path), "%s/rc", dir);
	write_file(path,
		   "# a comment\n"
		   "columns = pid,USER,CPU%,command   # labels work too\n"
		   "sort = +pid\n"
		   "tree = no\n"
		   "delay = 2.5\n"
		   "no equals sign here\n"
		   "frobnicate = 1\n"
		   "threads = maybe\n"
		   "columns = pid,nonesuch\n"
		   "exited_refreshes = 7\n"
		   "backend = perf\n"
		   "backend = bpf\n");
	vt_config_defaults(&cfg);
	assert_int_equal(vt_config_load(&cfg, path), 0);
	assert_int_equal(cfg.columns_nr, 4);
	assert_string_equal(vt_columns[cfg.columns[2]].name, "cpu_percent");
	assert_int_equal(cfg.view.sort_col[0], vt_column_find("pid"));
	assert_false(cfg.view.sort_desc[0]);
	assert_false(cfg.view.tree);
	assert_true(cfg.delay == 2.5);
	assert_int_equal(cfg.exited_keep, 7);
	assert_string_equal(cfg.backend, "perf");	/* the bad one after it changed nothing */
	assert_false(cfg.view.threads);	/* the bad value left the default */
	/* every bad line said, with where it is */
	assert_non_null(strstr(cfg.warnings, ":6: not \"key = value\""));
	assert_non_null(strstr(cfg.warnings, ":7: unknown setting frobnicate"));
	assert_non_null(strstr(cfg.warnings, ":8: bad value for threads"));
	assert_non_null(strstr(cfg.warnings, ":9: bad value for columns"));
	assert_non_null(strstr(cfg.warnings, ":12: bad value for backend"));
	/* no file yet is no error */
	vt_config_defaults(&cfg);
	snprintf(path, sizeof(path), "%s/none", dir);
	assert_int_equal(vt_config_load(&cfg, path), 0);
	assert_string_equal(cfg.warnings, "");
}

static void test_save_and_read_back(void **state)
{
	vt_config_t a, b;
	char path[512], err[256];

	vt_config_defaults(&a);
	a.columns_nr = vt_column_parse_list("pid,ppid,rchars,command", a.columns, VT_MAX_COLUMNS, err, sizeof(err));
	a.view.tree = false;
	a.view.kthreads = true;
	a.view.exited_rows = false;
	a.delay = 0.5;
	a.color = VT_COLOR_NEVER;
	a.view.sort_col[0] = vt_column_find("rchars");
	a.view.sort_desc[0] = true;
	a.exited_keep = 9;
	snprintf(a.backend, sizeof(a.backend), "netlink");
	a.source = VMON_SAMPLER_PROC;
	/* into a directory that does not exist yet */
	snprintf(path, sizeof(path), "%s/new/vtop/vtoprc", dir);
	assert_int_equal(vt_config_save(&a, path, err, sizeof(err)), 0);
	vt_config_defaults(&b);
	assert_int_equal(vt_config_load(&b, path), 0);
	assert_string_equal(b.warnings, "");
	assert_int_equal(b.columns_nr, 4);
	assert_memory_equal(a.columns, b.columns, sizeof(int) * 4);
	assert_false(b.view.tree);
	assert_true(b.view.kthreads);
	assert_false(b.view.exited_rows);
	assert_true(b.delay == 0.5);
	assert_int_equal(b.color, VT_COLOR_NEVER);
	assert_int_equal(b.view.sort_col[0], a.view.sort_col[0]);
	assert_true(b.view.sort_desc[0]);
	assert_int_equal(b.exited_keep, 9);
	assert_string_equal(b.backend, "netlink");
	assert_int_equal(b.source, VMON_SAMPLER_PROC);
	/* a place that cannot be written: an error that says so */
	assert_int_equal(vt_config_save(&a, "/proc/vtop-cannot/vtoprc", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "/proc/vtop-cannot"));
}

static void test_command_line_overrides(void **state)
{
	char path[512];
	vt_config_t cfg;

	snprintf(path, sizeof(path), "%s/vtop", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/vtop/vtoprc", dir);
	write_file(path, "delay = 3\ntree = no\ncolumns = pid,command\nbackend = none\n");
	vt_config_defaults(&cfg);
	assert_int_equal(args(&cfg, "-d", "0.5", NULL, NULL), 0);
	assert_true(cfg.delay == 0.5);	/* the command line wins */
	assert_false(cfg.view.tree);		/* the file's, where the command line says nothing */
	assert_int_equal(cfg.columns_nr, 2);
	assert_string_equal(cfg.backend, "none");
	vt_config_defaults(&cfg);
	assert_int_equal(args(&cfg, "--backend", "ebpf", NULL, NULL), 0);
	assert_string_equal(cfg.backend, "ebpf");	/* over the file's none */
	assert_int_equal(cfg.source, VMON_SAMPLER_AUTO);
	assert_int_equal(args(&cfg, "--source", "proc", NULL, NULL), 0);
	assert_int_equal(cfg.source, VMON_SAMPLER_PROC);
	assert_int_equal(args(&cfg, "--source", "iter", NULL, NULL), 0);
	assert_int_equal(cfg.source, VMON_SAMPLER_ITER);
	assert_int_equal(args(&cfg, "--source", "fast", NULL, NULL), -1);
	assert_int_equal(cfg.source, VMON_SAMPLER_ITER);	/* a bad name changes nothing */
	vt_config_defaults(&cfg);
	assert_int_equal(args(&cfg, "-t", "-o", "pid,user,command", NULL), 0);
	assert_true(cfg.view.tree);
	assert_int_equal(cfg.columns_nr, 3);
	/* -s sorts the view the options chose */
	vt_config_defaults(&cfg);
	assert_int_equal(args(&cfg, "-s", "-user", "--flat", NULL), 0);
	assert_int_equal(cfg.view.sort_col[0], vt_column_find("user"));
	assert_true(cfg.view.sort_desc[0]);
	/* --config: another file */
	snprintf(path, sizeof(path), "%s/other", dir);
	write_file(path, "delay = 7\n");
	vt_config_defaults(&cfg);
	assert_int_equal(args(&cfg, "--config", path, NULL, NULL), 0);
	assert_true(cfg.delay == 7);
	assert_string_equal(cfg.config_path, path);
}

static void test_bad_arguments(void **state)
{
	vt_config_t cfg;

	vt_config_defaults(&cfg);
	assert_int_equal(args(&cfg, "-d", "0", NULL, NULL), -1);
	assert_int_equal(args(&cfg, "-d", "x", NULL, NULL), -1);
	assert_int_equal(args(&cfg, "-o", "pid,bogus", NULL, NULL), -1);
	assert_int_equal(args(&cfg, "-p", "12,x", NULL, NULL), -1);
	assert_int_equal(args(&cfg, "-p", "0", NULL, NULL), -1);
	assert_int_equal(args(&cfg, "-u", "no-such-user-here", NULL, NULL), -1);
	assert_int_equal(args(&cfg, "-b", "--format", "yaml", NULL), -1);
	/* a feed backend vtop does not know: refused, not taken for auto */
	vt_config_defaults(&cfg);
	assert_int_equal(args(&cfg, "--backend", "bpf", NULL, NULL), -1);
	assert_int_equal(args(&cfg, "--backend", "", NULL, NULL), -1);
	assert_true(cfg.backend[0] && strcmp(cfg.backend, "bpf") != 0);	/* the file's or the default, still */
	vt_config_defaults(&cfg);
	assert_int_equal(args(&cfg, "-n", "3", NULL, NULL), -1);	/* -n without -b */
	assert_int_equal(args(&cfg, "-s", "nonesuch", NULL, NULL), -1);
	assert_int_equal(args(&cfg, "stray", NULL, NULL, NULL), -1);
	vt_config_defaults(&cfg);
	assert_int_equal(args(&cfg, "-p", "1,2,3", "-u", "0"), 0);
	assert_int_equal(cfg.pids_nr, 3);
	assert_int_equal(cfg.pids[2], 3);
	assert_true(cfg.view.user_set);
	assert_int_equal(cfg.view.user_uid, 0);
}

/* what the screen changes, each through its call: the columns, the steps of setup's options */
static void test_changes(void **state)
{
	vt_config_t cfg;
	char err[256];
	double d;

	vt_config_defaults(&cfg);
	cfg.columns_nr = vt_column_parse_list("pid,user,command", cfg.columns, VT_MAX_COLUMNS, err, sizeof(err));
	assert_int_equal(vt_config_column_move(&cfg, 0, 1), 1);
	assert_int_equal(cfg.columns[0], vt_column_find("user"));
	assert_int_equal(cfg.columns[1], vt_column_find("pid"));
	assert_int_equal(vt_config_column_move(&cfg, 2, 1), -1);	/* past the end: nothing moves */
	assert_int_equal(vt_config_column_insert(&cfg, 1, vt_column_find("ppid")), 0);
	assert_int_equal(cfg.columns_nr, 4);
	assert_int_equal(cfg.columns[1], vt_column_find("ppid"));
	assert_int_equal(cfg.columns[2], vt_column_find("pid"));
	for (int n = 4; n > 1; n--)
		assert_int_equal(vt_config_column_remove(&cfg, 0), 0);
	assert_int_equal(vt_config_column_remove(&cfg, 0), -1);	/* the last column stays */
	assert_int_equal(cfg.columns_nr, 1);
	assert_int_equal(cfg.columns[0], vt_column_find("command"));
	/* the delay steps through setup's list from where it is, and stops at its ends */
	cfg.delay = 1.2;
	vt_config_step(&cfg, VT_SETTING_DELAY, 1);
	assert_true(cfg.delay == 2);
	for (int i = 0; i < 20; i++)
		vt_config_step(&cfg, VT_SETTING_DELAY, -1);
	d = cfg.delay;
	assert_true(d == 0.25);
	cfg.color = VT_COLOR_AUTO;
	vt_config_step(&cfg, VT_SETTING_COLOR, -1);
	assert_int_equal(cfg.color, VT_COLOR_ALWAYS);
	cfg.exited_keep = 100;
	vt_config_step(&cfg, VT_SETTING_EXITED_KEEP, 1);
	assert_int_equal(cfg.exited_keep, 100);
}

/* --events -o: the events' fields (json and csv), wherever -o stands; the columns untouched */
static void test_events_fields(void **state)
{
	vt_config_t cfg;
	int cols;

	vt_config_defaults(&cfg);
	assert_int_equal(args(&cfg, "--events", "--format=json", NULL, NULL), 0);
	assert_int_equal(cfg.event_fields_nr, 0);	/* all of them */
	cols = cfg.columns_nr;
	vt_config_defaults(&cfg);
	assert_int_equal(args(&cfg, "-o", "pid,exit_code,args", "--events", "--format=json"), 0);
	assert_int_equal(cfg.event_fields_nr, 3);
	assert_int_equal(cfg.columns_nr, cols);
	vt_config_defaults(&cfg);
	assert_int_equal(args(&cfg, "--events", "--format=csv", "-o", "KIND,pid"), 0);
	assert_int_equal(cfg.event_fields_nr, 2);
	assert_int_not_equal(cfg.event_fields[0], cfg.event_fields[1]);
	/* a column that is no event field, text's fixed layout, a metrics format: refused */
	vt_config_defaults(&cfg);
	assert_int_equal(args(&cfg, "--events", "--format=json", "-o", "pid,user"), -1);
	vt_config_defaults(&cfg);
	assert_int_equal(args(&cfg, "--events", "-o", "pid", NULL), -1);
	assert_int_equal(args(&cfg, "--events", "--format=json", "-o", "pid,"), -1);
	assert_int_equal(args(&cfg, "--events", "--format=prometheus", NULL, NULL), -1);
	assert_int_equal(cfg.event_fields_nr, 0);
}

/* -w and -r: the paths kept; a replay neither recorded again, nor narrowed by -p, nor from a terminal's stdin */
static void test_record_replay(void **state)
{
	vt_config_t cfg;

	(void)state;
	vt_config_defaults(&cfg);
	assert_int_equal(args(&cfg, "-w", "/tmp/a.vlog", NULL, NULL), 0);
	assert_string_equal(cfg.write_path, "/tmp/a.vlog");
	assert_string_equal(cfg.replay_path, "");
	vt_config_defaults(&cfg);
	assert_int_equal(args(&cfg, "--replay", "b.vlog", "-b", NULL), 0);
	assert_string_equal(cfg.replay_path, "b.vlog");
	vt_config_defaults(&cfg);
	assert_int_equal(args(&cfg, "-r", "b.vlog", "-w", "c.vlog"), -1);
	vt_config_defaults(&cfg);
	assert_int_equal(args(&cfg, "-r", "b.vlog", "-p", "1"), -1);
	vt_config_defaults(&cfg);
	assert_int_equal(args(&cfg, "-r", "-", NULL, NULL), -1);
	vt_config_defaults(&cfg);
	assert_int_equal(args(&cfg, "-r", "-", "-b", NULL), 0);
	vt_config_defaults(&cfg);
	assert_int_equal(args(&cfg, "-w", "", NULL, NULL), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_file_and_warnings),
		cmocka_unit_test(test_save_and_read_back),
		cmocka_unit_test(test_command_line_overrides),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_changes),
		cmocka_unit_test(test_events_fields),
		cmocka_unit_test(test_record_replay),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
