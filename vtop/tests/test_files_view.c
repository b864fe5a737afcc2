/*
 * test_files_view.c: what vtop's open-files view is given (files.c and
 * vt_source_set_files()), on a fixture tree: the fds of the process shown,
 * escaped, with a socket's address and the other holders of each pipe; the
 * wants that reading them takes, and that closing the view gives back.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "vtop.h"
#include "data/columns.h"
#include "data/sampler.h"

typedef struct world {
	fixture_t	fx;
	vt_config_t	cfg;
	vt_source_t	src;
	vt_snapshot_t	snap;
} world_t;

static void fd_entry(fixture_t *fx, int pid, int fd, const char *target, const char *fdinfo)
{
	char path[64];

	snprintf(path, sizeof(path), "%d/fd/%d", pid, fd);
	fixture_symlink(fx, path, target);
	snprintf(path, sizeof(path), "%d/fdinfo/%d", pid, fd);
	fixture_printf(fx, path, "%s", fdinfo);
}

/* 100 (a shell) writes a pipe 101 (cat) reads; 100 also listens on 127.0.0.1:631 and has an odd file */
static void world_open(world_t *w)
{
	static const char *const init_argv[] = { "/sbin/init", NULL };
	static const char *const sh_argv[] = { "/bin/sh", "-c", "work", NULL };
	static const char *const cat_argv[] = { "cat", NULL };
	char err[256];

	memset(w, 0, sizeof(*w));
	assert_int_equal(vt_columns_init(), 0);
	fixture_init(&w->fx);
	fixture_system(&w->fx);
	fixture_printf(&w->fx, "loadavg", "0.50 0.25 0.10 1/123 4567\n");
	fixture_proc(&w->fx, 1, 0, "init", 'S', 5, init_argv);
	fixture_proc(&w->fx, 100, 1, NULL, 'S', 500, sh_argv);
	fixture_proc(&w->fx, 101, 100, NULL, 'S', 510, cat_argv);
	fd_entry(&w->fx, 100, 1, "pipe:[5000]", "pos:\t0\nflags:\t01\nmnt_id:\t16\nino:\t5000\n");
	fd_entry(&w->fx, 100, 3, "socket:[6000]", "pos:\t0\nflags:\t02\nmnt_id:\t10\nino:\t6000\n");
	fd_entry(&w->fx, 100, 4, "/tmp/a\033[31mb", "pos:\t77\nflags:\t0100000\nmnt_id:\t27\n");
	fd_entry(&w->fx, 101, 0, "pipe:[5000]", "pos:\t0\nflags:\t00\nmnt_id:\t16\nino:\t5000\n");
	fixture_printf(&w->fx, "net/tcp",
		"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
		"   0: 0100007F:0277 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 6000 1\n");
	vt_config_defaults(&w->cfg);
	if (vt_source_init(&w->src, &w->cfg, vt_columns_wants(w->cfg.columns, w->cfg.columns_nr), w->fx.root,
			   err, sizeof(err)) < 0)
		fail_msg("vt_source_init: %s", err);
	vt_snapshot_init(&w->snap);
}

static void world_close(world_t *w)
{
	vt_snapshot_free(&w->snap);
	vt_source_fini(&w->src);
	fixture_free(&w->fx);
}

static void sample(world_t *w)
{
	if (vt_source_sample(&w->src, &w->snap) < 0)
		fail_msg("vt_source_sample: %s", strerror(errno));
}

static const vt_file_t *file_of(const vt_files_t *f, int fd)
{
	for (int i = 0; i < f->nr; i++) {
		if (f->files[i].fd == fd)
			return &f->files[i];
	}
	fail_msg("no fd %d", fd);
	return NULL;
}

static void test_files_of_a_process(void **state)
{
	const vt_files_t *f;
	const vt_file_t *e;
	world_t w;

	world_open(&w);
	sample(&w);
	assert_null(w.snap.files);	/* not asked for: nothing read */
	assert_false(w.src.vmon.sys_wants & VMON_WANT_SYS_SOCKETS);
	assert_false(vmon_proc_lookup(&w.src.vmon, 100)->wants & VMON_WANT_PROC_FILES);

	assert_int_equal(vt_source_set_files(&w.src, 100), 0);
	assert_true(w.src.vmon.sys_wants & VMON_WANT_SYS_SOCKETS);
	assert_true(vmon_proc_lookup(&w.src.vmon, 101)->wants & VMON_WANT_PROC_FILES);
	sample(&w);
	f = w.snap.files;
	assert_non_null(f);
	assert_int_equal(f->pid, 100);
	assert_false(f->gone || f->pending);
	assert_int_equal(f->nr, 3);
	assert_int_equal(f->open_nr, 3);

	e = file_of(f, 1);
	assert_string_equal(e->type, "pipe");
	assert_string_equal(e->access, "w");
	assert_string_equal(e->name, "pipe:[5000]");
	assert_int_equal(e->holders_nr, 1);
	assert_int_equal(e->holders[0].pid, 101);
	assert_int_equal(e->holders[0].fd, 0);
	assert_string_equal(e->holders[0].comm, "cat");
	assert_string_equal(e->holders[0].access, "r");

	e = file_of(f, 3);
	assert_string_equal(e->type, "tcp");
	assert_string_equal(e->socket, "127.0.0.1:631 -> 0.0.0.0:0 LISTEN");
	assert_int_equal(e->holders_nr, 0);

	e = file_of(f, 4);
	assert_string_equal(e->name, "/tmp/a\\x1b[31mb");	/* a path is the process's text: escaped */
	assert_int_equal(e->pos, 77);
	assert_null(e->socket);

	/* the view closes: the wants go, and with them every open file and socket object */
	assert_int_equal(vt_source_set_files(&w.src, 0), 0);
	assert_false(w.src.vmon.sys_wants & VMON_WANT_SYS_SOCKETS);
	assert_false(vmon_proc_lookup(&w.src.vmon, 100)->wants & VMON_WANT_PROC_FILES);
	assert_int_equal(w.src.vmon.fobjects_nr, 0);
	sample(&w);
	assert_null(w.snap.files);

	/* a process that is not there */
	assert_int_equal(vt_source_set_files(&w.src, 4242), 0);
	sample(&w);
	assert_non_null(w.snap.files);
	assert_true(w.snap.files->gone);
	world_close(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_files_of_a_process),
	};

	return cmocka_run_group_tests(tests, NULL, fixtures_cleanup);
}
