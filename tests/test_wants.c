/*
 * test_wants.c: what vtop needs of the library: what a caller can ask of
 * one node or of the whole instance after vmon_init():
 * vmon_proc_set_wants(), vmon_set_proc_wants(); the PROC_ENV and
 * SYS_LOADAVG stores; the typed field helpers vmon_field_compare() and
 * vmon_field_present().
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

static const vmon_field_t *proc_field(vmon_proc_store_t store, int sym)
{
	return &vmon_proc_store_descs[store].fields[sym];
}

static void make_tree(fixture_t *fx)
{
	static const char *const sh_argv[] = { "/bin/sh", "-c", "x", NULL };
	static const char *const b_argv[] = { "/bin/bash", NULL };

	fixture_system(fx);
	fixture_proc(fx, 1, 0, "init", 'S', 5, NULL);
	fixture_proc(fx, 100, 1, NULL, 'S', 500, sh_argv);
	fixture_proc(fx, 101, 1, NULL, 'S', 510, b_argv);
}

static void test_loadavg(void **state)
{
	fixture_t fx;
	vmon_t vmon;
	vmon_sys_loadavg_t *la;

	fixture_init(&fx);
	make_tree(&fx);
	fixture_printf(&fx, "loadavg", "0.27 12.05 3.5 3/456 7890\n");
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL, VMON_WANT_SYS_LOADAVG, 0));
	assert_true(vmon_sample(&vmon));
	assert_int_equal(vmon.sys_errors[VMON_STORE_SYS_LOADAVG], 0);
	la = vmon.stores[VMON_STORE_SYS_LOADAVG];
	assert_int_equal(la->load1, 27);
	assert_int_equal(la->load5, 1205);
	assert_int_equal(la->load15, 350);
	assert_int_equal(la->runnable, 3);
	assert_int_equal(la->tasks, 456);
	assert_int_equal(la->last_pid, 7890);
	assert_true(vmon.activity & VMON_WANT_SYS_LOADAVG);

	/* the same text: nothing changed */
	assert_true(vmon_sample(&vmon));
	assert_false(vmon.activity & VMON_WANT_SYS_LOADAVG);
	assert_false(BITTEST(la->changed, VMON_SYS_LOADAVG_LOAD1));

	/* malformed: an error, and nothing half-parsed is shown */
	fixture_printf(&fx, "loadavg", "0.27 x 3.5 3/456 7890\n");
	assert_true(vmon_sample(&vmon));
	assert_int_equal(vmon.sys_errors[VMON_STORE_SYS_LOADAVG], EPROTO);
	assert_false(vmon_field_present(&vmon_sys_store_descs[VMON_STORE_SYS_LOADAVG],
					&vmon_sys_store_descs[VMON_STORE_SYS_LOADAVG].fields[VMON_SYS_LOADAVG_LOAD1], la));
	assert_int_equal(la->load1, 0);
	vmon_destroy(&vmon);
	fixture_free(&fx);
}

static void test_field_compare(void **state)
{
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *init, *sh, *bash;
	const vmon_field_t *comm = proc_field(VMON_STORE_PROC_STAT, VMON_PROC_STAT_COMM);
	const vmon_field_t *pid = proc_field(VMON_STORE_PROC_STAT, VMON_PROC_STAT_PID);
	const vmon_field_t *start = proc_field(VMON_STORE_PROC_STAT, VMON_PROC_STAT_START);
	const vmon_field_t *argv = proc_field(VMON_STORE_PROC_STAT, VMON_PROC_STAT_ARGV);
	const vmon_field_t *nice = proc_field(VMON_STORE_PROC_STAT, VMON_PROC_STAT_NICE);
	void *a, *b, *c;

	fixture_init(&fx);
	make_tree(&fx);
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL, 0, VMON_WANT_PROC_STAT));
	assert_true(vmon_sample(&vmon));
	init = must_find(&vmon, 1);
	sh = must_find(&vmon, 100);
	bash = must_find(&vmon, 101);
	a = init->stores[VMON_STORE_PROC_STAT];
	b = sh->stores[VMON_STORE_PROC_STAT];
	c = bash->stores[VMON_STORE_PROC_STAT];

	/* numbers by value: 100 < 101 although "100" and "101" would too, 5 < 500 unlike "5" > "500" */
	assert_true(vmon_field_compare(pid, b, c) < 0);
	assert_true(vmon_field_compare(pid, c, b) > 0);
	assert_int_equal(vmon_field_compare(pid, b, b), 0);
	assert_true(vmon_field_compare(start, a, b) < 0);
	/* text bytewise: "bash" < "init" < "sh" */
	assert_true(vmon_field_compare(comm, c, a) < 0);
	assert_true(vmon_field_compare(comm, a, b) < 0);
	/* argument vectors element by element; an empty one (init has no cmdline) first */
	assert_true(vmon_field_compare(argv, a, c) < 0);
	assert_true(vmon_field_compare(argv, c, b) < 0);
	assert_int_equal(vmon_field_compare(nice, a, b), 0);
	/* a missing store sorts first */
	assert_true(vmon_field_compare(pid, NULL, a) < 0);
	assert_true(vmon_field_compare(pid, a, NULL) > 0);
	assert_int_equal(vmon_field_compare(pid, NULL, NULL), 0);
	vmon_destroy(&vmon);
	fixture_free(&fx);
}

static void test_signed_compare(void **state)
{
	const vmon_field_t *nice = proc_field(VMON_STORE_PROC_STAT, VMON_PROC_STAT_NICE);
	vmon_proc_stat_t a, b;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.nice = -5;
	b.nice = 3;
	assert_true(vmon_field_compare(nice, &a, &b) < 0);
	assert_true(vmon_field_compare(nice, &b, &a) > 0);
}

static void test_field_present(void **state)
{
	const vmon_store_desc_t *io = &vmon_proc_store_descs[VMON_STORE_PROC_IO];
	const vmon_store_desc_t *vm = &vmon_proc_store_descs[VMON_STORE_PROC_VM];
	const vmon_store_desc_t *vmst = &vmon_proc_store_descs[VMON_STORE_PROC_VM_STATUS];
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *sh, *bash;

	fixture_init(&fx);
	make_tree(&fx);
	/* 101's io cannot be read (a directory: EISDIR, as another user's gives EACCES); 100's status lacks VmSwap */
	fixture_remove(&fx, "101/io");
	fixture_printf(&fx, "101/io/x", "%s", "");
	fixture_printf(&fx, "100/status", "Name:\tsh\nVmRSS:\t   1200 kB\n");
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL, 0,
				 VMON_WANT_PROC_STAT | VMON_WANT_PROC_IO | VMON_WANT_PROC_VM | VMON_WANT_PROC_VM_STATUS));
	assert_true(vmon_sample(&vmon));
	sh = must_find(&vmon, 100);
	bash = must_find(&vmon, 101);
	assert_int_not_equal(bash->errors[VMON_STORE_PROC_IO], 0);
	assert_false(vmon_field_present(io, &io->fields[VMON_PROC_IO_RCHAR], bash->stores[VMON_STORE_PROC_IO]));
	assert_true(vmon_field_present(io, &io->fields[VMON_PROC_IO_RCHAR], sh->stores[VMON_STORE_PROC_IO]));
	assert_false(vmon_field_present(vmst, &vmst->fields[VMON_PROC_VM_STATUS_SWAP_KB],
					sh->stores[VMON_STORE_PROC_VM_STATUS]));
	assert_true(vmon_field_present(vm, &vm->fields[VMON_PROC_VM_SIZE_PAGES], sh->stores[VMON_STORE_PROC_VM]));
	/* no store, nothing present */
	assert_false(vmon_field_present(io, &io->fields[VMON_PROC_IO_RCHAR], NULL));
	vmon_destroy(&vmon);
	fixture_free(&fx);
}

static void test_env_fixture(void **state)
{
	static const char env[] = "HOME=/root\0TERM=xterm\0EVIL=\x1b]2;x\a\0";
	const vmon_store_desc_t *desc = &vmon_proc_store_descs[VMON_STORE_PROC_ENV];
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *sh, *bash;
	vmon_proc_env_t *e;
	char buf[256];

	fixture_init(&fx);
	make_tree(&fx);
	fixture_write(&fx, "100/environ", env, sizeof(env) - 1);
	fixture_symlink(&fx, "100/cwd", "/home/user");
	fixture_symlink(&fx, "100/root", "/");
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL, 0, VMON_WANT_PROC_STAT));
	assert_true(vmon_sample(&vmon));
	sh = must_find(&vmon, 100);
	bash = must_find(&vmon, 101);
	assert_null(sh->stores[VMON_STORE_PROC_ENV]);

	/* wanted on one node: read there at the next sample, nowhere else */
	assert_int_equal(vmon_proc_set_wants(&vmon, sh, sh->wants | VMON_WANT_PROC_ENV), 0);
	assert_true(vmon_sample(&vmon));
	e = sh->stores[VMON_STORE_PROC_ENV];
	assert_non_null(e);
	assert_null(bash->stores[VMON_STORE_PROC_ENV]);
	assert_int_equal(sh->errors[VMON_STORE_PROC_ENV], 0);
	assert_int_equal(e->envc, 3);
	assert_string_equal(e->envv[0], "HOME=/root");
	assert_string_equal(e->envv[1], "TERM=xterm");
	assert_null(e->envv[3]);
	assert_string_equal(e->cwd.array, "/home/user");
	assert_string_equal(e->root.array, "/");
	assert_true(sh->activity & VMON_WANT_PROC_ENV);
	/* formatted, the environment is escaped like any text from a process */
	vmon_field_format(&desc->fields[VMON_PROC_ENV_ENVV], e, buf, sizeof(buf), 0);
	assert_string_equal(buf, "HOME=/root TERM=xterm EVIL=\\x1b]2;x\\x07");

	/* unreadable: missing, not what it was, and the error says why */
	fixture_remove(&fx, "100/environ");
	fixture_printf(&fx, "100/environ/x", "%s", "");	/* EISDIR, as another user's gives EACCES */
	fixture_printf(&fx, "100/schedstat", "2000000 3000 99\n");	/* it ran: read again */
	assert_true(vmon_sample(&vmon));
	assert_int_equal(sh->errors[VMON_STORE_PROC_ENV], EISDIR);
	assert_false(vmon_field_present(desc, &desc->fields[VMON_PROC_ENV_ENVIRON], e));
	assert_int_equal(e->envc, 0);
	assert_null(e->envv[0]);
	assert_true(vmon_field_present(desc, &desc->fields[VMON_PROC_ENV_CWD], e));
	assert_true(BITTEST(e->changed, VMON_PROC_ENV_ENVV));
	/* and again: still missing, which is no change */
	fixture_printf(&fx, "100/schedstat", "3000000 3000 100\n");
	assert_true(vmon_sample(&vmon));
	assert_int_equal(sh->errors[VMON_STORE_PROC_ENV], EISDIR);
	for (int sym = VMON_PROC_ENV_ENVIRON; sym <= VMON_PROC_ENV_ENVV; sym++) {
		if (BITTEST(e->changed, sym))
			fail_msg("%s changed, though it was missing before as well", desc->fields[sym].name);
	}

	/* dropped: the store goes */
	assert_int_equal(vmon_proc_set_wants(&vmon, sh, VMON_WANT_PROC_STAT), 0);
	assert_null(sh->stores[VMON_STORE_PROC_ENV]);
	assert_true(vmon_sample(&vmon));
	assert_null(sh->stores[VMON_STORE_PROC_ENV]);
	vmon_destroy(&vmon);
	fixture_free(&fx);
}

static void test_set_wants_errors(void **state)
{
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *sh;

	fixture_init(&fx);
	make_tree(&fx);
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL, 0, VMON_WANT_PROC_STAT));
	assert_true(vmon_sample(&vmon));
	sh = must_find(&vmon, 100);
	errno = 0;
	assert_int_equal(vmon_proc_set_wants(&vmon, sh, (vmon_proc_wants_t)(1L << 30)), -1);
	assert_int_equal(errno, EINVAL);
	/* PROC_FILES comes and goes like the others (this fixture has no fds to list) */
	assert_int_equal(vmon_proc_set_wants(&vmon, sh, VMON_WANT_PROC_FILES), 0);
	assert_true(vmon_sample(&vmon));
	assert_false(sh->is_stale);
	assert_non_null(sh->stores[VMON_STORE_PROC_FILES]);
	assert_int_equal(((vmon_proc_files_t *)sh->stores[VMON_STORE_PROC_FILES])->fds_nr, 0);
	assert_int_equal(vmon_proc_set_wants(&vmon, sh, VMON_WANT_PROC_STAT), 0);
	assert_null(sh->stores[VMON_STORE_PROC_FILES]);
	assert_int_equal(vmon_proc_set_wants(&vmon, NULL, VMON_WANT_PROC_STAT), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(vmon_set_proc_wants(&vmon, (vmon_proc_wants_t)(1L << 30)), -1);
	assert_int_equal(errno, EINVAL);
	/* PROC_STAT cannot be dropped: it is what proves a node is alive */
	assert_int_equal(vmon_proc_set_wants(&vmon, sh, 0), 0);
	assert_true(sh->wants & VMON_WANT_PROC_STAT);
	vmon_destroy(&vmon);
	fixture_free(&fx);
}

/* the instance's default: every node gets the new wants, and keeps what it had beyond the old default */
static void test_set_proc_wants_all(void **state)
{
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *init, *sh, *bash;

	fixture_init(&fx);
	make_tree(&fx);
	fixture_symlink(&fx, "100/cwd", "/tmp");
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL, 0, VMON_WANT_PROC_STAT | VMON_WANT_PROC_VM));
	assert_true(vmon_sample(&vmon));
	init = must_find(&vmon, 1);
	sh = must_find(&vmon, 100);
	bash = must_find(&vmon, 101);
	assert_int_equal(vmon_proc_set_wants(&vmon, sh, sh->wants | VMON_WANT_PROC_ENV), 0);
	assert_non_null(bash->stores[VMON_STORE_PROC_VM]);

	assert_int_equal(vmon_set_proc_wants(&vmon, VMON_WANT_PROC_IO), 0);
	assert_int_equal(vmon.proc_wants, VMON_WANT_PROC_STAT | VMON_WANT_PROC_IO);
	assert_null(bash->stores[VMON_STORE_PROC_VM]);	/* dropped: freed at once */
	assert_int_equal(init->wants, VMON_WANT_PROC_STAT | VMON_WANT_PROC_IO);
	assert_int_equal(sh->wants, VMON_WANT_PROC_STAT | VMON_WANT_PROC_IO | VMON_WANT_PROC_ENV);
	assert_true(vmon_sample(&vmon));
	assert_non_null(bash->stores[VMON_STORE_PROC_IO]);
	assert_null(bash->stores[VMON_STORE_PROC_VM]);
	assert_non_null(sh->stores[VMON_STORE_PROC_ENV]);

	/* a process found later gets the new default */
	fixture_proc(&fx, 102, 1, "late", 'S', 600, NULL);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(must_find(&vmon, 102)->wants, VMON_WANT_PROC_STAT | VMON_WANT_PROC_IO);
	vmon_destroy(&vmon);
	fixture_free(&fx);
}

/*
 * The live tests' child, killed and reaped by the teardown even when an
 * assertion ends the test early: a failed test leaves nothing running.
 */
static pid_t live_child;

static int reap_live_child(void **state)
{
	if (live_child > 0)
		reap(live_child, SIGKILL);
	live_child = 0;
	return 0;
}

/* live: the environment and cwd of a child we started */
static void test_env_live(void **state)
{
	static const char *const argv[] = { "sh", "-c", "cd /tmp && exec sleep 600", NULL };
	vmon_t vmon;
	vmon_proc_t *proc;
	vmon_proc_env_t *e;
	pid_t child;
	bool found = false;

	/* the environment a program starts with is what /proc/PID/environ shows */
	setenv("VMON_TEST_MARKER", "hello world", 1);
	child = live_child = spawn_exec(argv);
	unsetenv("VMON_TEST_MARKER");
	assert_true(wait_sleeping(child, 5000));
	assert_true(vmon_init(&vmon, VMON_FLAG_PROC_ALL, 0, VMON_WANT_PROC_STAT));
	assert_true(vmon_sample(&vmon));
	proc = vmon_proc_lookup(&vmon, child);
	assert_non_null(proc);
	assert_int_equal(vmon_proc_set_wants(&vmon, proc, proc->wants | VMON_WANT_PROC_ENV), 0);
	assert_true(vmon_sample(&vmon));
	e = proc->stores[VMON_STORE_PROC_ENV];
	assert_non_null(e);
	assert_int_equal(proc->errors[VMON_STORE_PROC_ENV], 0);
	assert_string_equal(e->cwd.array, "/tmp");
	for (int i = 0; i < e->envc; i++)
		found |= strcmp(e->envv[i], "VMON_TEST_MARKER=hello world") == 0;
	assert_true(found);
	vmon_destroy(&vmon);
}

/* a kernel thread's, else NULL: pid 2 is kthreadd outside a pid namespace */
static vmon_proc_t *kernel_thread(vmon_t *vmon)
{
	vmon_proc_t *proc = vmon_proc_lookup(vmon, 2);

	return proc && (pstat(proc)->flags & 0x00200000 /* PF_KTHREAD */) ? proc : NULL;
}

/*
 * A task without memory, a zombie or a kernel thread, reads ESRCH for its
 * environ like a task that is gone; it is not gone.  It was marked stale
 * and found again as a new node of the same pid and start time every
 * pass; now it keeps its node, with no environment and no error.
 */
static void test_env_no_memory(void **state)
{
	const vmon_store_desc_t *desc = &vmon_proc_store_descs[VMON_STORE_PROC_ENV];
	pid_t child = live_child = spawn_sleeper();
	vmon_proc_t *zombie = NULL, *kthread = NULL;
	vmon_t vmon;

	(void)state;
	assert_true(wait_sleeping(child, 5000));
	kill(child, SIGKILL);
	for (int i = 0; i < 500 && proc_state(child) != 'Z'; i++)
		usleep(10000);
	assert_int_equal(proc_state(child), 'Z');
	assert_true(vmon_init(&vmon, VMON_FLAG_PROC_ALL, 0, VMON_WANT_PROC_STAT | VMON_WANT_PROC_ENV));
	for (int pass = 0; pass < 3; pass++) {
		vmon_proc_t *z, *k;

		assert_true(vmon_sample(&vmon));
		z = vmon_proc_lookup(&vmon, child);
		assert_non_null(z);
		assert_false(z->is_stale);
		assert_int_equal(z->errors[VMON_STORE_PROC_ENV], 0);
		assert_false(vmon_field_present(desc, &desc->fields[VMON_PROC_ENV_ENVIRON], z->stores[VMON_STORE_PROC_ENV]));
		if (pass)
			assert_ptr_equal(z, zombie);	/* the same node, not a new one of the same process */
		zombie = z;
		k = kernel_thread(&vmon);
		if (!k)
			continue;
		assert_false(k->is_stale);
		assert_int_equal(k->errors[VMON_STORE_PROC_ENV], 0);
		assert_string_equal(((vmon_proc_env_t *)k->stores[VMON_STORE_PROC_ENV])->cwd.array, "/");
		if (pass && kthread)
			assert_ptr_equal(k, kthread);
		kthread = k;
	}
	if (!kthread)
		print_message("pid 2 is no kernel thread here: the zombie alone was checked\n");
	/* reaped: gone, once */
	reap(child, 0);
	live_child = 0;
	assert_true(vmon_sample(&vmon));
	assert_true(zombie->is_stale);
	assert_true(vmon_sample(&vmon));
	assert_null(vmon_proc_lookup(&vmon, child));
	vmon_destroy(&vmon);
}

static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static int threaded_child(void *arg)
{
	pthread_t t;

	(void)arg;
	for (int i = 0; i < 3; i++) {
		if (pthread_create(&t, NULL, idle_thread, NULL) != 0)
			return 1;
	}
	for (;;)
		pause();
	return 0;
}

/* threads followed from one sample on, and unfollowed: their nodes leave at once */
static void test_follow_threads_toggle(void **state)
{
	pid_t child = live_child = spawn_fn(threaded_child, NULL);
	vmon_stats_t stats;
	vmon_proc_t *proc;
	vmon_t vmon;
	int tries = 0;

	assert_true(vmon_init(&vmon, VMON_FLAG_PROC_ALL, 0, VMON_WANT_PROC_STAT));
	do {	/* until the child has made its threads */
		assert_true(vmon_sample(&vmon));
		proc = vmon_proc_lookup(&vmon, child);
		assert_non_null(proc);
	} while (((vmon_proc_stat_t *)proc->stores[VMON_STORE_PROC_STAT])->num_threads < 4 && ++tries < 500 &&
		 usleep(10000) == 0);
	assert_int_equal(count_threads(proc), 0);

	assert_int_equal(vmon_set_proc_wants(&vmon, VMON_WANT_PROC_STAT | VMON_WANT_PROC_FOLLOW_THREADS), 0);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(count_threads(proc), 4);	/* the leader's thread node too */

	assert_int_equal(vmon_set_proc_wants(&vmon, VMON_WANT_PROC_STAT), 0);
	assert_int_equal(count_threads(proc), 0);
	assert_int_equal(vmon_get_stats(&vmon, &stats), 0);
	assert_int_equal(stats.threads, 0);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(count_threads(proc), 0);
	vmon_destroy(&vmon);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loadavg),
		cmocka_unit_test(test_field_compare),
		cmocka_unit_test(test_signed_compare),
		cmocka_unit_test(test_field_present),
		cmocka_unit_test(test_env_fixture),
		cmocka_unit_test(test_set_wants_errors),
		cmocka_unit_test(test_set_proc_wants_all),
		cmocka_unit_test_teardown(test_env_live, reap_live_child),
		cmocka_unit_test_teardown(test_env_no_memory, reap_live_child),
		cmocka_unit_test_teardown(test_follow_threads_toggle, reap_live_child),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
