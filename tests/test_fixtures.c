/*
 * test_fixtures.c: libvmon on captured and hand-made /proc trees: the
 * parsers, the tree built from ppid, the lifecycle across snapshots.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"



static void make_tree(fixture_t *fx)
{
	static const char *const init_argv[] = { "/sbin/init", "splash", NULL };
	static const char *const sh_argv[] = { "/bin/sh", "-c", "sleep 1", NULL };
	static const char *const sleep_argv[] = { "sleep", "1", NULL };

	fixture_system(fx);
	fixture_proc(fx, 1, 0, NULL, 'S', 5, init_argv);
	fixture_proc(fx, 2, 0, "kthreadd", 'S', 5, NULL);
	fixture_proc(fx, 3, 2, "kworker/0:0-events", 'I', 6, NULL);
	fixture_proc(fx, 100, 1, NULL, 'S', 500, sh_argv);
	fixture_proc(fx, 101, 100, NULL, 'S', 510, sleep_argv);
}

static void test_tree_from_ppid(void **state)
{
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *init, *sh, *sleeper, *kworker;

	fixture_init(&fx);
	make_tree(&fx);
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL, VMON_WANT_SYS_STAT | VMON_WANT_SYS_VM,
				 VMON_WANT_PROC_STAT | VMON_WANT_PROC_VM | VMON_WANT_PROC_IO));
	assert_true(vmon_sample(&vmon));

	init = must_find(&vmon, 1);
	sh = must_find(&vmon, 100);
	sleeper = must_find(&vmon, 101);
	kworker = must_find(&vmon, 3);
	assert_null(init->parent);
	assert_ptr_equal(sh->parent, init);
	assert_ptr_equal(sleeper->parent, sh);
	assert_int_equal(kworker->parent->pid, 2);
	assert_true(sleeper->is_new && !sleeper->is_stale);

	assert_string_equal(pstat(sh)->comm.array, "sh");
	assert_int_equal(pstat(sh)->comm.len, 3);	/* counts the NUL, as libvmon clients expect */
	assert_int_equal(pstat(sh)->argc, 3);
	assert_string_equal(pstat(sh)->argv[2], "sleep 1");
	assert_string_equal(pstat(sh)->exe.array, "/bin/sh");
	assert_int_equal(pstat(sh)->ppid, 1);
	assert_int_equal(pstat(sh)->start, 500);
	assert_int_equal(pstat(sh)->utime, 7);
	assert_int_equal(pstat(kworker)->argc, 0);
	assert_int_equal(pstat(kworker)->state, 'I');
	assert_true(BITTEST(pstat(sh)->changed, VMON_PROC_STAT_UTIME));

	/* the second sample: nothing moved, nothing changed, nothing new */
	assert_true(vmon_sample(&vmon));
	assert_false(sleeper->is_new);
	assert_false(BITTEST(pstat(sh)->changed, VMON_PROC_STAT_UTIME));
	assert_int_equal(sh->activity & VMON_WANT_PROC_STAT, 0);

	vmon_destroy(&vmon);
	fixture_free(&fx);
}

static void test_system_stores(void **state)
{
	fixture_t fx;
	vmon_t vmon;
	vmon_sys_stat_t *ss;
	vmon_sys_vm_t *vm;

	fixture_init(&fx);
	make_tree(&fx);
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL, VMON_WANT_SYS_STAT | VMON_WANT_SYS_VM, 0));
	assert_true(vmon_sample(&vmon));
	ss = vmon.stores[VMON_STORE_SYS_STAT];
	vm = vmon.stores[VMON_STORE_SYS_VM];
	assert_int_equal(ss->user, 100);
	assert_int_equal(ss->idle, 1000);
	assert_int_equal(ss->cpus_nr, 2);
	assert_int_equal(ss->cpus[1].user, 40);
	assert_int_equal(ss->ctxt, 67890);
	assert_int_equal(ss->intr, 12345);
	assert_int_equal(ss->btime, 1700000000);
	assert_int_equal(ss->processes, 4242);
	assert_int_equal(ss->procs_running, 2);
	assert_int_equal(ss->boottime, 1234 * vmon.ticks_per_sec + 56 * vmon.ticks_per_sec / 100);
	assert_int_equal(vm->total_kb, 16000000);
	assert_int_equal(vm->available_kb, 12000000);
	/* a key this "kernel" does not print: zero, and known to be absent */
	assert_int_equal(vm->shmem_kb, 0);
	assert_false(BITTEST(vm->present, VMON_SYS_VM_SHMEM_KB));
	assert_true(BITTEST(vm->present, VMON_SYS_VM_SWAP_FREE_KB));
	vmon_destroy(&vmon);
	fixture_free(&fx);
}

static void test_comm_with_parens(void **state)
{
	static const char *const argv[] = { "./a) (b", NULL };
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *p;

	fixture_init(&fx);
	fixture_system(&fx);
	fixture_proc(&fx, 1, 0, "init", 'S', 5, NULL);
	fixture_proc(&fx, 42, 1, "a) (b", 'R', 77, argv);
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL, 0, VMON_WANT_PROC_STAT));
	assert_true(vmon_sample(&vmon));
	p = must_find(&vmon, 42);
	assert_string_equal(pstat(p)->comm.array, "a) (b");
	assert_int_equal(pstat(p)->state, 'R');
	assert_int_equal(pstat(p)->ppid, 1);
	assert_int_equal(pstat(p)->start, 77);
	vmon_destroy(&vmon);
	fixture_free(&fx);
}

static void test_pid_reuse_between_snapshots(void **state)
{
	static const char *const a_argv[] = { "old", NULL };
	static const char *const b_argv[] = { "new", "--flag", NULL };
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *old, *reborn;

	fixture_init(&fx);
	fixture_system(&fx);
	fixture_proc(&fx, 1, 0, "init", 'S', 5, NULL);
	fixture_proc(&fx, 300, 1, NULL, 'S', 1000, a_argv);
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL, 0, VMON_WANT_PROC_STAT));
	assert_true(vmon_sample(&vmon));
	old = must_find(&vmon, 300);
	assert_true(vmon_sample(&vmon));
	assert_false(old->is_new);

	/* the same pid, another start time: another process */
	fixture_remove(&fx, "300");
	fixture_proc(&fx, 300, 1, NULL, 'S', 2000, b_argv);
	assert_true(vmon_sample(&vmon));
	assert_true(old->is_stale);
	assert_string_equal(pstat(old)->comm.array, "old");
	reborn = must_find(&vmon, 300);
	assert_ptr_not_equal(reborn, old);
	assert_true(reborn->is_new);
	assert_false(reborn->is_stale);
	assert_string_equal(pstat(reborn)->argv[1], "--flag");
	assert_int_equal(pstat(reborn)->start, 2000);

	/* stale for exactly one sample */
	assert_true(vmon_sample(&vmon));
	assert_false(reborn->is_new);
	assert_ptr_equal(vmon_proc_lookup(&vmon, 300), reborn);
	vmon_destroy(&vmon);
	fixture_free(&fx);
}

static void test_vanished_before_read(void **state)
{
	fixture_t fx;
	vmon_t vmon;
	vmon_stats_t stats;

	fixture_init(&fx);
	fixture_system(&fx);
	fixture_proc(&fx, 1, 0, "init", 'S', 5, NULL);
	/* listed in /proc, but its files are gone by the time they are read */
	fixture_printf(&fx, "77/.keep", "%s", "");
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL, 0, VMON_WANT_PROC_STAT));
	assert_true(vmon_sample(&vmon));
	assert_null(vmon_proc_lookup(&vmon, 77));
	assert_int_equal(vmon_get_stats(&vmon, &stats), 0);
	assert_int_equal(stats.vanished, 1);
	assert_int_equal(stats.procs, 1);
	vmon_destroy(&vmon);
	fixture_free(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree_from_ppid),
		cmocka_unit_test(test_system_stores),
		cmocka_unit_test(test_comm_with_parens),
		cmocka_unit_test(test_pid_reuse_between_snapshots),
		cmocka_unit_test(test_vanished_before_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
