/*
 * test_fixtures.c: libvmon on captured and hand-made /proc trees: the tree
 * built from ppid (PROC_ALL) and from children files (explicit mode), the
 * lifecycle across snapshots (new and stale for exactly one sample, PID
 * reuse, processes vanishing between listing and reading), kernel threads,
 * zombies, threads coming and going, the flat array, vmon_dump_procs().
 * The parsers themselves are test_parse's; callbacks are test_tree's.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

static void test_tree_from_ppid(void **state)
{
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *init, *sh, *sleeper, *kworker;

	fixture_init(&fx);
	fixture_small_tree(&fx);
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
	fixture_small_tree(&fx);
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

/* the stat line of a task without memory (a kernel thread, a zombie): no addresses, no sizes */
static void write_memoryless_stat(fixture_t *fx, int pid, int ppid, const char *comm, char state,
				  unsigned long long start, unsigned flags, int exit_status)
{
	fixture_stat_t st;
	char path[64];

	fixture_stat_init(&st, pid, ppid, comm, state, start);
	fixture_stat_set(&st, 9, "%u", flags);
	for (int n = 23; n <= 51; n++) {
		if (n != 25 && n != 38 && n != 39)
			fixture_stat_set(&st, n, "0");
	}
	fixture_stat_set(&st, 52, "%d", exit_status);
	snprintf(path, sizeof(path), "%d/stat", pid);
	fixture_stat_write(fx, path, &st, FIXTURE_STAT_FIELDS, true);
}

/* a kernel thread as the kernel shows it: no cmdline, no exe, no memory */
static void fixture_kthread(fixture_t *fx, int pid, int ppid, const char *comm, char state, unsigned long long start)
{
	char path[64];

	fixture_proc(fx, pid, ppid, comm, state, start, NULL);
	write_memoryless_stat(fx, pid, ppid, comm, state, start, 0x208040, 0);	/* PF_KTHREAD | PF_NOFREEZE | PF_WQ_WORKER */
	snprintf(path, sizeof(path), "%d/statm", pid);
	fixture_printf(fx, path, "0 0 0 0 0 0 0\n");
	snprintf(path, sizeof(path), "%d/status", pid);
	fixture_printf(fx, path, "Name:\t%s\nUmask:\t0000\nState:\t%c (idle)\nTgid:\t%d\nPid:\t%d\nPPid:\t%d\n"
		       "Threads:\t1\nCpus_allowed_list:\t0-1\n", comm, state, pid, pid, ppid);
	snprintf(path, sizeof(path), "%d/exe", pid);
	fixture_remove(fx, path);
}

/* a zombie: its stat still there, its memory and executable gone */
static void fixture_zombie(fixture_t *fx, int pid, int ppid, const char *comm, unsigned long long start, int status)
{
	fixture_kthread(fx, pid, ppid, comm, 'Z', start);
	write_memoryless_stat(fx, pid, ppid, comm, 'Z', start, 0x400004, status);	/* PF_EXITING */
}

static const vmon_proc_wants_t all_wants = VMON_WANT_PROC_STAT | VMON_WANT_PROC_STAT_EXTRA | VMON_WANT_PROC_VM |
					   VMON_WANT_PROC_VM_STATUS | VMON_WANT_PROC_IO;

static void test_kernel_threads(void **state)
{
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *kthreadd, *kworker;
	const vmon_store_desc_t *vm_desc = &vmon_proc_store_descs[VMON_STORE_PROC_VM];

	fixture_init(&fx);
	fixture_system(&fx);
	fixture_proc(&fx, 1, 0, "init", 'S', 5, NULL);
	fixture_kthread(&fx, 2, 0, "kthreadd", 'S', 5);
	fixture_kthread(&fx, 3, 2, "kworker/0:0-events", 'I', 6);
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL, 0, all_wants));
	assert_true(vmon_sample(&vmon));
	kthreadd = must_find(&vmon, 2);
	kworker = must_find(&vmon, 3);
	assert_null(kthreadd->parent);
	assert_ptr_equal(kworker->parent, kthreadd);
	for (vmon_proc_t *k = kthreadd; k; k = k == kthreadd ? kworker : NULL) {
		for (int i = 0; i < VMON_STORE_PROC_NR; i++)
			assert_int_equal(k->errors[i], 0);
		assert_int_equal(pstat(k)->cmdline.len, 0);
		assert_int_equal(pstat(k)->argc, 0);
		assert_null(pstat(k)->argv[0]);
		assert_string_equal(pstat(k)->exe.array, "");
		assert_false(BITTEST(pstat(k)->present, VMON_PROC_STAT_EXE));
		assert_true(BITTEST(pstat(k)->present, VMON_PROC_STAT_CMDLINE));
		/* statm: present zeros; status: no memory lines, so those are absent */
		assert_int_equal(pvm(k)->size_pages, 0);
		assert_true(BITTEST(pvm(k)->present, VMON_PROC_VM_SIZE_PAGES));
		assert_true(BITTEST(pvm(k)->present, VMON_PROC_VM_DATA_PAGES));
		for (int sym = 0; sym < vm_desc->fields_nr; sym++) {
			if (vm_desc->fields[sym].source == VMON_SOURCE_KEY &&
			    (BITTEST(pvm(k)->present, sym) || field_value(&vm_desc->fields[sym], pvm(k))))
				fail_msg("kernel thread %d: %s is present or not zero", k->pid, vm_desc->fields[sym].name);
		}
	}
	assert_int_equal(pstat(kworker)->state, 'I');
	assert_string_equal(pstat(kworker)->comm.array, "kworker/0:0-events");
	assert_int_equal(pstat(kworker)->flags, 0x208040);

	/* they sleep on: nothing changes, nothing is re-read into changing */
	assert_true(vmon_sample(&vmon));
	assert_int_equal(kworker->activity, 0);
	assert_false(kworker->is_new);
	vmon_destroy(&vmon);
	fixture_free(&fx);
}

/* callbacks that count what happened to each pid (and check ctor before dtor) */
static struct lifecycle {
	int	ctor[1024];
	int	dtor[1024];
	int	stale_seen[1024];
	fixture_t *vanish_fx;	/* the ctor of a pid with vanish[pid] removes its directory, */
	bool	vanish[1024];
	int	vanish_also[1024];	/* ... and that of vanish_also[pid], if not 0 */
} life;

static void remove_pid_dir(fixture_t *fx, int pid)
{
	char path[32];

	snprintf(path, sizeof(path), "%d", pid);
	fixture_remove(fx, path);
}

static void count_ctor(vmon_t *vmon, vmon_proc_t *proc)
{
	assert_true(proc->pid < 1024);
	life.ctor[proc->pid]++;
	if (life.vanish_fx && life.vanish[proc->pid]) {
		remove_pid_dir(life.vanish_fx, proc->pid);
		if (life.vanish_also[proc->pid])
			remove_pid_dir(life.vanish_fx, life.vanish_also[proc->pid]);
	}
}

static void count_dtor(vmon_t *vmon, vmon_proc_t *proc)
{
	assert_true(proc->pid < 1024);
	life.dtor[proc->pid]++;
	if (life.dtor[proc->pid] > life.ctor[proc->pid])
		fail_msg("pid %d: dtor without its ctor", proc->pid);
}

static void lifecycle_init(vmon_t *vmon)
{
	memset(&life, 0, sizeof(life));
	vmon->proc_ctor_cb = count_ctor;
	vmon->proc_dtor_cb = count_dtor;
}

/* init (1), a parent (100) and its zombie child 200, sampled once in PROC_ALL; the zombie's node */
static vmon_proc_t *sampled_zombie(fixture_t *fx, vmon_t *vmon, const char *comm, int status)
{
	fixture_init(fx);
	fixture_system(fx);
	fixture_proc(fx, 1, 0, "init", 'S', 5, NULL);
	fixture_proc(fx, 100, 1, "parent", 'S', 100, NULL);
	fixture_zombie(fx, 200, 100, comm, 200, status);
	assert_true(fixture_vmon(fx, vmon, VMON_FLAG_PROC_ALL, 0, all_wants));
	lifecycle_init(vmon);
	assert_true(vmon_sample(vmon));
	return must_find(vmon, 200);
}

static void test_zombie(void **state)
{
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *z;

	z = sampled_zombie(&fx, &vmon, "child", 3 << 8);
	assert_ptr_equal(z->parent, must_find(&vmon, 100));
	assert_int_equal(pstat(z)->state, 'Z');
	assert_int_equal(pstat(z)->exit_code, 3 << 8);
	assert_int_equal(pstat(z)->argc, 0);
	assert_false(BITTEST(pstat(z)->present, VMON_PROC_STAT_EXE));
	assert_int_equal(pvm(z)->resident_pages, 0);
	assert_false(BITTEST(pvmst(z)->present, VMON_PROC_VM_STATUS_RSS_ANON_KB));
	for (int i = 0; i < VMON_STORE_PROC_NR; i++)
		assert_int_equal(z->errors[i], 0);

	/* a zombie stays until it is reaped */
	for (int i = 0; i < 3; i++) {
		assert_true(vmon_sample(&vmon));
		assert_ptr_equal(must_find(&vmon, 200), z);
		assert_false(z->is_stale);
		assert_false(z->is_new);
	}
	/* reaped: stale for exactly one sample, with its last data (dead now, its exit code known), then gone */
	fixture_remove(&fx, "200");
	fixture_children(&fx, 100, NULL, 0);
	assert_true(vmon_sample(&vmon));
	assert_true(z->is_stale);
	assert_int_equal(pstat(z)->state, 'X');
	assert_true(BITTEST(pstat(z)->changed, VMON_PROC_STAT_STATE));
	assert_true(BITTEST(pstat(z)->present, VMON_PROC_STAT_EXIT_CODE));
	assert_int_equal(pstat(z)->exit_code, 3 << 8);
	assert_null(vmon_proc_lookup(&vmon, 200));
	assert_ptr_equal(find_child(&vmon, must_find(&vmon, 100), 200), z);
	assert_true(must_find(&vmon, 100)->children_changed);
	assert_int_equal(life.dtor[200], 0);
	assert_int_equal(assert_tree_consistent(&vmon), 3);
	assert_true(vmon_sample(&vmon));
	assert_null(find_child(&vmon, must_find(&vmon, 100), 200));
	assert_false(must_find(&vmon, 100)->children_changed);
	assert_int_equal(life.ctor[200], 1);
	assert_int_equal(life.dtor[200], 1);
	vmon_destroy(&vmon);
	assert_int_equal(life.dtor[100], 1);
	fixture_free(&fx);
}

/*
 * A task read while its parent reaps it shows state 'X' and, its signal
 * state gone, a parent of 0 and a group and session of -1 (captured from
 * Linux 6.18 under a fork loop).  Such a line is not the process's: it is
 * gone, stale under its parent with what the read before gave.
 */
static void test_read_while_reaped(void **state)
{
	fixture_stat_t st;
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *z;

	z = sampled_zombie(&fx, &vmon, "true", 0);
	assert_int_equal(pstat(z)->ppid, 100);

	fixture_stat_init(&st, 200, 0, "true", 'X', 200);
	fixture_stat_set(&st, 5, "-1");
	fixture_stat_set(&st, 6, "-1");
	fixture_stat_set(&st, 8, "-1");
	fixture_stat_write(&fx, "200/stat", &st, FIXTURE_STAT_FIELDS, true);
	fixture_stat_write(&fx, "200/task/200/stat", &st, FIXTURE_STAT_FIELDS, true);
	assert_true(vmon_sample(&vmon));
	assert_true(z->is_stale);
	assert_ptr_equal(find_child(&vmon, must_find(&vmon, 100), 200), z);
	assert_int_equal(pstat(z)->ppid, 100);
	assert_int_equal(pstat(z)->pgrp, 200);
	assert_int_equal(assert_tree_consistent(&vmon), 3);
	vmon_destroy(&vmon);
	fixture_free(&fx);
}

/*
 * The kernel writes a stat line's state first and its parent, group,
 * session and thread count under the task's signal lock: a task reaped in
 * between shows the state it had before ('S' here) with a parent of 0, a
 * group and session of -1 and no thread (seen as a running process's ppid
 * 0 in the churn tests).  Such a line is not the process's: a process known
 * is gone, stale under its parent with what the read before gave; one first
 * listed so vanished before it could be read.
 */
static void test_read_while_reaped_running(void **state)
{
	fixture_stat_t st;
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *p;

	(void)state;
	fixture_init(&fx);
	fixture_system(&fx);
	fixture_proc(&fx, 1, 0, "init", 'S', 5, NULL);
	fixture_proc(&fx, 100, 1, "parent", 'S', 100, NULL);
	fixture_proc(&fx, 200, 100, "child", 'S', 200, NULL);
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL, 0, all_wants));
	assert_true(vmon_sample(&vmon));
	p = must_find(&vmon, 200);
	assert_int_equal(pstat(p)->ppid, 100);

	for (int pid = 200; pid <= 300; pid += 100) {
		char path[32];

		fixture_stat_init(&st, pid, 0, "child", 'S', (unsigned long long)pid);
		fixture_stat_set(&st, 5, "-1");
		fixture_stat_set(&st, 6, "-1");
		fixture_stat_set(&st, 20, "0");
		snprintf(path, sizeof(path), "%d/stat", pid);
		fixture_stat_write(&fx, path, &st, FIXTURE_STAT_FIELDS, true);
		snprintf(path, sizeof(path), "%d/task/%d/stat", pid, pid);
		fixture_stat_write(&fx, path, &st, FIXTURE_STAT_FIELDS, true);
	}
	assert_true(vmon_sample(&vmon));
	assert_true(p->is_stale);
	assert_ptr_equal(find_child(&vmon, must_find(&vmon, 100), 200), p);
	assert_int_equal(pstat(p)->ppid, 100);
	assert_int_equal(pstat(p)->num_threads, 1);
	assert_int_equal(pstat(p)->pgrp, 200);
	assert_null(vmon_proc_lookup(&vmon, 300));
	assert_int_equal(assert_tree_consistent(&vmon), 3);
	vmon_destroy(&vmon);
	fixture_free(&fx);
}

/* explicit mode: a followed child's pid is reused between two samples */
static void test_pid_reuse_explicit(void **state)
{
	static const int kids[] = { 200 };
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *parent, *old, *reborn;

	fixture_init(&fx);
	fixture_system(&fx);
	fixture_proc(&fx, 100, 1, "parent", 'S', 100, NULL);
	fixture_proc(&fx, 200, 100, "old", 'S', 200, NULL);
	fixture_children(&fx, 100, kids, 1);
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_NONE, 0, VMON_WANT_PROC_STAT | VMON_WANT_PROC_FOLLOW_CHILDREN));
	lifecycle_init(&vmon);
	parent = vmon_proc_monitor(&vmon, 100, VMON_WANT_PROC_INHERIT, NULL, NULL);
	assert_non_null(parent);
	assert_true(vmon_sample(&vmon));
	old = find_child(&vmon, parent, 200);
	assert_non_null(old);
	assert_true(old->is_new);
	assert_true(vmon_sample(&vmon));
	assert_false(old->is_new);

	fixture_remove(&fx, "200");
	fixture_proc(&fx, 200, 100, "new", 'S', 300, NULL);
	assert_true(vmon_sample(&vmon));
	assert_true(old->is_stale);
	assert_false(old->is_new);
	assert_string_equal(pstat(old)->comm.array, "old");
	reborn = must_find(&vmon, 200);
	assert_ptr_not_equal(reborn, old);
	assert_ptr_equal(reborn->parent, parent);
	assert_true(reborn->is_new);
	assert_false(reborn->is_stale);
	assert_string_equal(pstat(reborn)->comm.array, "new");
	assert_true(parent->children_changed);
	assert_int_equal(life.ctor[200], 2);
	assert_int_equal(life.dtor[200], 0);
	assert_tree_consistent(&vmon);

	assert_true(vmon_sample(&vmon));
	assert_false(reborn->is_new);
	assert_false(reborn->is_stale);
	assert_ptr_equal(find_child(&vmon, parent, 200), reborn);
	assert_ptr_equal(list_first_entry(&parent->children, vmon_proc_t, siblings), reborn);
	assert_true(parent->children.next->next == &parent->children);
	assert_int_equal(life.dtor[200], 1);
	vmon_proc_unmonitor(&vmon, parent, NULL, NULL);
	assert_int_equal(life.dtor[200], 2);
	assert_int_equal(life.dtor[100], 1);
	assert_true(list_empty(&vmon.processes));
	vmon_destroy(&vmon);
	fixture_free(&fx);
}

/*
 * A process that vanishes after it was listed: before its first read it is
 * never reported; during it (here: its ctor removes it), it is new in this
 * sample with what was read (and state X: it is gone), stale in the next,
 * and gets its dtor in the one after.
 */
static void test_vanish_mid_read(void **state)
{
	static const int kids[] = { 200, 201 };
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *p, *parent;
	vmon_stats_t stats;

	fixture_init(&fx);
	fixture_system(&fx);
	fixture_proc(&fx, 1, 0, "init", 'S', 5, NULL);
	fixture_proc(&fx, 77, 1, "doomed", 'S', 77, NULL);
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL, 0, all_wants));
	lifecycle_init(&vmon);
	life.vanish_fx = &fx;
	life.vanish[77] = true;
	assert_true(vmon_sample(&vmon));
	p = find_child(&vmon, must_find(&vmon, 1), 77);
	assert_non_null(p);
	assert_true(p->is_new);
	assert_false(p->is_stale);
	assert_string_equal(pstat(p)->comm.array, "doomed");
	assert_int_equal(pstat(p)->start, 77);
	assert_int_equal(pstat(p)->state, 'X');
	for (int i = 0; i < VMON_STORE_PROC_NR; i++)
		assert_int_equal(p->errors[i], 0);
	assert_null(vmon_proc_lookup(&vmon, 77));
	assert_int_equal(life.ctor[77], 1);
	assert_int_equal(life.dtor[77], 0);
	assert_tree_consistent(&vmon);
	assert_true(vmon_sample(&vmon));
	assert_ptr_equal(find_child(&vmon, must_find(&vmon, 1), 77), p);
	assert_false(p->is_new);
	assert_true(p->is_stale);
	assert_true(must_find(&vmon, 1)->children_changed);
	assert_int_equal(life.dtor[77], 0);
	assert_true(vmon_sample(&vmon));
	assert_null(find_child(&vmon, must_find(&vmon, 1), 77));
	assert_int_equal(life.dtor[77], 1);
	vmon_destroy(&vmon);

	/* explicit mode: a child listed by its parent whose directory is gone */
	fixture_proc(&fx, 100, 1, "parent", 'S', 100, NULL);
	fixture_proc(&fx, 201, 100, "alive", 'S', 201, NULL);
	fixture_children(&fx, 100, kids, 2);
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_NONE, 0, VMON_WANT_PROC_STAT | VMON_WANT_PROC_FOLLOW_CHILDREN));
	lifecycle_init(&vmon);
	parent = vmon_proc_monitor(&vmon, 100, VMON_WANT_PROC_INHERIT, NULL, NULL);
	assert_non_null(parent);
	assert_true(vmon_sample(&vmon));
	assert_null(find_child(&vmon, parent, 200));
	assert_non_null(find_child(&vmon, parent, 201));
	assert_int_equal(life.ctor[200], 0);
	assert_int_equal(vmon_get_stats(&vmon, &stats), 0);
	assert_int_equal(stats.vanished, 1);
	assert_int_equal(stats.procs, 2);
	vmon_destroy(&vmon);
	assert_int_equal(life.dtor[201], 1);
	fixture_free(&fx);
}

/*
 * A child and its parent, both new, both gone in the same pass: the child
 * dies during its first read (its ctor removes it, and its parent with it),
 * so it is new in this sample and stale in the next; the parent is listed
 * but gone by its own first read, so it is never reported.  Whichever of the two is
 * read first, the child must be in the tree (under its parent if that one
 * was read, at the top if not) and in the flat array, once each.  Which is
 * read first follows the pid index's order, so several pairs cover both.
 */
static void test_vanish_with_new_parent(void **state)
{
	enum { PAIRS = 8 };
	fixture_t fx;
	vmon_t vmon;
	int forgotten = 0, nodes;

	fixture_init(&fx);
	fixture_system(&fx);
	fixture_proc(&fx, 1, 0, "init", 'S', 5, NULL);
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL | VMON_FLAG_PROC_ARRAY, 0, all_wants));
	lifecycle_init(&vmon);
	assert_true(vmon_sample(&vmon));
	life.vanish_fx = &fx;
	for (int i = 0; i < PAIRS; i++) {
		int parent = 300 + i, child = 400 + 17 * i;

		fixture_proc(&fx, parent, 1, "parent", 'S', (unsigned long long)parent, NULL);
		fixture_proc(&fx, child, parent, "child", 'S', (unsigned long long)child, NULL);
		life.vanish[child] = true;
		life.vanish_also[child] = parent;
	}
	assert_true(vmon_sample(&vmon));
	nodes = assert_tree_consistent(&vmon);
	for (int i = 0; i < PAIRS; i++) {
		int parent = 300 + i, child = 400 + 17 * i;
		vmon_proc_t *p = find_child(&vmon, must_find(&vmon, 1), parent), *c;

		assert_null(vmon_proc_lookup(&vmon, child));
		if (life.ctor[parent]) {
			/* read before its child removed it: live in this sample, the child under it */
			assert_non_null(p);
			assert_ptr_equal(vmon_proc_lookup(&vmon, parent), p);
			assert_true(p->is_new);
			c = find_child(&vmon, p, child);
		} else {
			/* never read: never reported, and the child is at the top */
			forgotten++;
			assert_null(p);
			assert_null(vmon_proc_lookup(&vmon, parent));
			c = find_child(&vmon, NULL, child);
		}
		if (!c)
			fail_msg("child %d of parent %d (%s) is not in the tree", child, parent,
				 life.ctor[parent] ? "read" : "gone before its read");
		assert_true(c->is_new);
		assert_false(c->is_stale);
		assert_int_equal(pstat(c)->state, 'X');
		assert_int_equal(life.ctor[child], 1);
		assert_int_equal(life.dtor[child], 0);
	}
	/* both orders happened, or this test proves nothing */
	assert_true(forgotten > 0 && forgotten < PAIRS);
	assert_int_equal(nodes, 1 + (PAIRS - forgotten) + PAIRS);

	/* the parents that were read are stale now, and every child, where it was; then everyone is gone */
	assert_true(vmon_sample(&vmon));
	assert_int_equal(assert_tree_consistent(&vmon), 1 + (PAIRS - forgotten) + PAIRS);
	for (int i = 0; i < PAIRS; i++) {
		int parent = 300 + i, child = 400 + 17 * i;
		vmon_proc_t *p = find_child(&vmon, must_find(&vmon, 1), parent);
		vmon_proc_t *c = find_child(&vmon, life.ctor[parent] ? p : NULL, child);

		assert_non_null(c);
		assert_true(c->is_stale && !c->is_new);
		assert_true(!p || (p->is_stale && !p->is_new));
		assert_int_equal(life.dtor[child], 0);
	}
	assert_true(vmon_sample(&vmon));
	assert_int_equal(assert_tree_consistent(&vmon), 1);
	for (int i = 0; i < PAIRS; i++) {
		int parent = 300 + i, child = 400 + 17 * i;

		assert_int_equal(life.dtor[child], 1);
		assert_int_equal(life.dtor[parent], life.ctor[parent]);
	}
	vmon_destroy(&vmon);
	fixture_free(&fx);
}

/* threads: task/ entries appear and disappear; new and stale for exactly one sample each */
static void test_threads(void **state)
{
	fixture_t fx;
	fixture_stat_t st;
	vmon_t vmon;
	vmon_proc_t *p, *t100, *t101, *t102;

	fixture_init(&fx);
	fixture_system(&fx);
	fixture_proc(&fx, 1, 0, "init", 'S', 5, NULL);
	fixture_proc(&fx, 100, 1, "app", 'S', 100, NULL);
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL | VMON_FLAG_PROC_ARRAY, 0,
				 all_wants | VMON_WANT_PROC_FOLLOW_THREADS));
	lifecycle_init(&vmon);
	assert_true(vmon_sample(&vmon));
	p = must_find(&vmon, 100);
	/* single-threaded: no thread nodes */
	assert_true(list_empty(&p->threads));

	/* two threads appear */
	fixture_stat_init(&st, 100, 1, "app", 'S', 100);
	fixture_stat_set(&st, 20, "3");
	fixture_stat_write(&fx, "100/stat", &st, FIXTURE_STAT_FIELDS, true);
	fixture_thread(&fx, 100, 101, "worker-1", 'R', 150);
	fixture_thread(&fx, 100, 102, "worker-2", 'S', 160);
	fixture_printf(&fx, "100/task/102/statm", "1 2 3 4 0 6 0\n");
	assert_true(vmon_sample(&vmon));
	assert_true(p->threads_changed);
	assert_true(p->is_threaded);
	t100 = t101 = t102 = NULL;
	{
		vmon_proc_t *t;
		int n = 0;

		list_for_each_entry(t, &p->threads, threads) {
			assert_true(t->is_thread);
			assert_true(t->is_new);
			assert_ptr_equal(t->parent, p);
			if (t->pid == 100)
				t100 = t;
			else if (t->pid == 101)
				t101 = t;
			else if (t->pid == 102)
				t102 = t;
			n++;
		}
		assert_int_equal(n, 3);
	}
	assert_non_null(t100);
	assert_non_null(t101);
	assert_non_null(t102);
	assert_string_equal(pstat(t101)->comm.array, "worker-1");
	assert_int_equal(pstat(t101)->state, 'R');
	assert_int_equal(pstat(t102)->start, 160);
	assert_int_equal(pvm(t102)->size_pages, 1);
	assert_int_equal(pstat(t102)->cmdline.len, 0);	/* a thread's cmdline is its process's */
	assert_int_equal(life.ctor[101], 1);
	assert_int_equal(assert_tree_consistent(&vmon), 5);

	assert_true(vmon_sample(&vmon));
	assert_false(p->threads_changed);
	assert_false(t101->is_new);

	/* tid 102 is another thread's now (a later start): old stale and new new in the same sample */
	fixture_thread(&fx, 100, 102, "worker-3", 'S', 170);
	assert_true(vmon_sample(&vmon));
	assert_true(t102->is_stale);
	assert_string_equal(pstat(t102)->comm.array, "worker-2");
	{
		vmon_proc_t *t, *reborn = NULL;

		list_for_each_entry(t, &p->threads, threads) {
			if (t->pid == 102 && t != t102)
				reborn = t;
		}
		if (!reborn)
			fail_msg("tid 102 was reused: the new thread is not in the tree in the same sample");
		assert_true(reborn->is_new);
		assert_false(reborn->is_stale);
		assert_ptr_equal(reborn->parent, p);
		assert_string_equal(pstat(reborn)->comm.array, "worker-3");
		assert_true(p->threads_changed);
		assert_int_equal(life.ctor[102], 2);
		assert_int_equal(assert_tree_consistent(&vmon), 6);
		assert_true(vmon_sample(&vmon));
		assert_int_equal(life.dtor[102], 1);
		assert_false(reborn->is_new);
		assert_int_equal(assert_tree_consistent(&vmon), 5);
		t102 = reborn;
	}

	/* one exits */
	fixture_remove(&fx, "100/task/102");
	fixture_stat_set(&st, 20, "2");
	fixture_stat_write(&fx, "100/stat", &st, FIXTURE_STAT_FIELDS, true);
	assert_true(vmon_sample(&vmon));
	assert_true(p->threads_changed);
	assert_true(t102->is_stale);
	assert_false(t101->is_stale);
	assert_int_equal(life.dtor[102], 1);
	assert_int_equal(assert_tree_consistent(&vmon), 5);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(life.dtor[102], 2);
	assert_false(p->threads_changed);
	assert_int_equal(assert_tree_consistent(&vmon), 4);

	/* back to one thread: the thread nodes go, the process stays */
	fixture_remove(&fx, "100/task/101");
	fixture_stat_set(&st, 20, "1");
	fixture_stat_write(&fx, "100/stat", &st, FIXTURE_STAT_FIELDS, true);
	assert_true(vmon_sample(&vmon));
	assert_true(t101->is_stale);
	assert_true(t100->is_stale);
	assert_false(p->is_stale);
	assert_true(p->threads_changed);
	assert_true(vmon_sample(&vmon));
	assert_true(list_empty(&p->threads));
	assert_int_equal(life.dtor[101], 1);
	assert_int_equal(assert_tree_consistent(&vmon), 2);
	vmon_destroy(&vmon);
	fixture_free(&fx);
}

/*
 * A process gone between its stat read and the listing of its threads (its
 * task directory, held open, is dead and lists nothing, not even the
 * leader): gone in that sample with its threads, not live without them
 * (the threads are stale; the process, monitored at the top, is kept).
 * A fixture's held stat file reads on after its removal, as a live
 * process's stat would have just before.
 */
static void test_threads_gone_mid_listing(void **state)
{
	fixture_t fx;
	fixture_stat_t st;
	vmon_attr_t attr;
	vmon_t vmon;
	vmon_proc_t *p, *t;

	fixture_init(&fx);
	fixture_system(&fx);
	fixture_proc(&fx, 100, 1, "app", 'S', 100, NULL);
	fixture_stat_init(&st, 100, 1, "app", 'S', 100);
	fixture_stat_set(&st, 20, "2");
	fixture_stat_write(&fx, "100/stat", &st, FIXTURE_STAT_FIELDS, true);
	fixture_thread(&fx, 100, 101, "worker", 'S', 150);
	vmon_attr_default(&attr);
	attr.proc_wants = VMON_WANT_PROC_STAT | VMON_WANT_PROC_FOLLOW_THREADS;
	attr.proc_root = fx.root;
	attr.fd_budget = 64;	/* the task directory stays open between samples */
	assert_true(vmon_init_attr(&vmon, &attr));
	p = vmon_proc_monitor(&vmon, 100, VMON_WANT_PROC_INHERIT, NULL, NULL);
	assert_non_null(p);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(assert_tree_consistent(&vmon), 3);

	fixture_remove(&fx, "100");
	assert_true(vmon_sample(&vmon));
	assert_false(p->is_stale);
	assert_int_equal(pstat(p)->state, 'X');
	assert_null(vmon_proc_lookup(&vmon, 100));
	for (int i = 0; i < VMON_STORE_PROC_NR; i++)
		assert_int_equal(p->errors[i], 0);
	list_for_each_entry(t, &p->threads, threads)
		assert_true(t->is_stale);
	assert_int_equal(assert_tree_consistent(&vmon), 3);
	/* then the threads go; the process stays, read no more: its generation is the last read's */
	assert_true(vmon_sample(&vmon));
	assert_true(list_empty(&p->threads));
	assert_false(p->is_stale);
	assert_int_equal(p->generation, vmon.generation - 1);
	assert_int_equal(assert_tree_consistent(&vmon), 1);
	vmon_proc_unmonitor(&vmon, p, NULL, NULL);
	vmon_destroy(&vmon);
	fixture_free(&fx);
}

/* PROC_ALL: a process whose ppid changes moves; orphans and ppid loops go to the top */
static void test_reparent_by_ppid(void **state)
{
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *init, *a, *b, *c;

	fixture_init(&fx);
	fixture_system(&fx);
	fixture_proc(&fx, 1, 0, "init", 'S', 5, NULL);
	fixture_proc(&fx, 10, 1, "a", 'S', 10, NULL);
	fixture_proc(&fx, 20, 10, "b", 'S', 20, NULL);
	fixture_proc(&fx, 30, 20, "c", 'S', 30, NULL);
	fixture_proc(&fx, 40, 999, "orphan", 'S', 40, NULL);	/* its parent is outside our view */
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL | VMON_FLAG_PROC_ARRAY, 0, VMON_WANT_PROC_STAT));
	assert_true(vmon_sample(&vmon));
	init = must_find(&vmon, 1);
	a = must_find(&vmon, 10);
	b = must_find(&vmon, 20);
	c = must_find(&vmon, 30);
	assert_ptr_equal(c->parent, b);
	assert_null(must_find(&vmon, 40)->parent);
	assert_true(vmon.processes_changed);
	assert_int_equal(assert_tree_consistent(&vmon), 5);
	assert_true(vmon_sample(&vmon));
	assert_false(vmon.processes_changed);

	/* b dies: c is re-parented to init (the kernel says so in c's stat) */
	fixture_remove(&fx, "20");
	fixture_proc(&fx, 30, 1, "c", 'S', 30, NULL);
	assert_true(vmon_sample(&vmon));
	assert_true(b->is_stale);
	assert_false(c->is_stale);
	assert_false(c->is_new);
	assert_ptr_equal(c->parent, init);
	assert_true(init->children_changed);
	assert_true(a->children_changed);
	assert_int_equal(assert_tree_consistent(&vmon), 5);
	assert_true(vmon_sample(&vmon));
	assert_false(init->children_changed);
	assert_int_equal(assert_tree_consistent(&vmon), 4);

	/* a ppid loop (stat lines read at different moments can disagree): no loop in the tree */
	fixture_proc(&fx, 10, 30, "a", 'S', 10, NULL);
	fixture_proc(&fx, 30, 10, "c", 'S', 30, NULL);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(assert_tree_consistent(&vmon), 4);
	assert_true(a->parent == c || c->parent == a);
	assert_true(a->parent == NULL || c->parent == NULL);
	vmon_destroy(&vmon);
	fixture_free(&fx);
}

/*
 * Explicit mode: the tree comes from children files.  A child gone from its
 * parent's file is stale; a grandchild adopted by a followed subreaper when
 * its parent dies moves there, the same process, neither stale nor new.
 */
static void test_follow_children(void **state)
{
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *top, *mid, *leaf, *other;

	fixture_init(&fx);
	fixture_system(&fx);
	fixture_proc(&fx, 100, 1, "reaper", 'S', 100, NULL);
	fixture_proc(&fx, 200, 100, "mid", 'S', 200, NULL);
	fixture_proc(&fx, 201, 100, "other", 'S', 201, NULL);
	fixture_proc(&fx, 300, 200, "leaf", 'S', 300, NULL);
	fixture_children(&fx, 100, (const int[]){ 200, 201 }, 2);
	fixture_children(&fx, 200, (const int[]){ 300 }, 1);
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ARRAY, 0, VMON_WANT_PROC_STAT | VMON_WANT_PROC_FOLLOW_CHILDREN));
	lifecycle_init(&vmon);
	top = vmon_proc_monitor(&vmon, 100, VMON_WANT_PROC_INHERIT, NULL, NULL);
	assert_non_null(top);
	assert_true(vmon_sample(&vmon));
	mid = find_child(&vmon, top, 200);
	other = find_child(&vmon, top, 201);
	assert_non_null(mid);
	assert_non_null(other);
	leaf = find_child(&vmon, mid, 300);
	assert_non_null(leaf);
	assert_true(leaf->is_new);
	assert_int_equal(pstat(leaf)->ppid, 200);
	assert_int_equal(assert_tree_consistent(&vmon), 4);
	assert_true(vmon_sample(&vmon));
	assert_false(top->children_changed);

	/* mid dies; 100 is a subreaper and adopts 300, and reaps 200 */
	fixture_remove(&fx, "200");
	fixture_proc(&fx, 300, 100, "leaf", 'S', 300, NULL);
	fixture_children(&fx, 100, (const int[]){ 201, 300 }, 2);
	assert_true(vmon_sample(&vmon));
	assert_true(mid->is_stale);
	assert_ptr_equal(leaf->parent, top);
	assert_false(leaf->is_stale);
	assert_false(leaf->is_new);
	assert_ptr_equal(must_find(&vmon, 300), leaf);
	assert_int_equal(pstat(leaf)->ppid, 100);
	assert_true(top->children_changed);
	assert_int_equal(life.ctor[300], 1);
	assert_int_equal(assert_tree_consistent(&vmon), 4);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(life.dtor[200], 1);
	assert_int_equal(life.dtor[300], 0);
	assert_int_equal(assert_tree_consistent(&vmon), 3);

	/* 201 is reaped: gone from the file, stale, then gone */
	fixture_remove(&fx, "201");
	fixture_children(&fx, 100, (const int[]){ 300 }, 1);
	assert_true(vmon_sample(&vmon));
	assert_true(other->is_stale);
	assert_true(vmon_sample(&vmon));
	assert_null(find_child(&vmon, top, 201));
	assert_int_equal(life.dtor[201], 1);
	assert_int_equal(assert_tree_consistent(&vmon), 2);
	vmon_destroy(&vmon);
	assert_int_equal(life.dtor[100], 1);
	assert_int_equal(life.dtor[300], 1);
	fixture_free(&fx);
}

/* VMON_FLAG_PROC_ARRAY: every node in the array once, through churn and reuse */
static void test_proc_array(void **state)
{
	fixture_t fx;
	vmon_t vmon;

	fixture_init(&fx);
	fixture_system(&fx);
	fixture_proc(&fx, 1, 0, "init", 'S', 5, NULL);
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL | VMON_FLAG_PROC_ARRAY, 0,
				 VMON_WANT_PROC_STAT | VMON_WANT_PROC_FOLLOW_THREADS));
	for (int round = 0; round < 12; round++) {
		/* processes 10..10+4*round come and go, some reused, some threaded */
		for (int pid = 10; pid < 60; pid++) {
			char dir[16];
			bool alive = (pid * 7 + round * 3) % 5 != 0;

			snprintf(dir, sizeof(dir), "%d", pid);
			if (!alive) {
				fixture_remove(&fx, dir);
				continue;
			}
			/* every fourth round, every sixth pid is another process */
			fixture_proc(&fx, pid, pid % 3 ? 1 : 10, "p", 'S', (unsigned long long)(pid + (round / 4) * (pid % 6 == 0) * 1000), NULL);
			if (pid % 9 == 0 && round % 2) {
				fixture_stat_t st;
				char path[32];

				fixture_stat_init(&st, pid, pid % 3 ? 1 : 10, "p", 'S',
						  (unsigned long long)(pid + (round / 4) * (pid % 6 == 0) * 1000));
				fixture_stat_set(&st, 20, "2");
				snprintf(path, sizeof(path), "%d/stat", pid);
				fixture_stat_write(&fx, path, &st, FIXTURE_STAT_FIELDS, true);
				fixture_thread(&fx, pid, pid + 1000, "t", 'S', (unsigned long long)pid);
			}
		}
		assert_true(vmon_sample(&vmon));
		assert_tree_consistent(&vmon);
	}
	vmon_destroy(&vmon);
	assert_null(vmon.array);
	fixture_free(&fx);
}

/* vmon_dump_procs(): the documented line format, text from processes escaped */
static void test_dump_format(void **state)
{
	static const char *const init_argv[] = { "/sbin/init", NULL };
	static const char *const evil_argv[] = { "/bin/evil", "\x1b]0;pwn\x07", "back\\slash", NULL };
	static const char expected[] =
		"# generation 1: 3 processes, 2 threads\n"
		"1 0 1 n--- S init [/sbin/init] stat{utime=7 stime=3 nice=0 num_threads=1 vsize=10485760 rss=300}"
		" vm{size_pages=2560 resident_pages=300 shared_pages=200}"
		" status{rss_anon_kb=400 rss_file_kb=800 swap_kb=0}"
		" io{rchars=1000 wchars=2000 read_bytes=4096 write_bytes=8192}"
		" extra{policy=0 rt_priority=0 signal=0 blocked=0}\n"
		"  100 1 1 n--e S \\x1b[2J\\\\ [/bin/evil \\x1b]0;pwn\\x07 back\\\\slash]"
		" stat{utime=7 stime=3 nice=0 num_threads=2 vsize=10485760 rss=300}"
		" vm{size_pages=2560 resident_pages=300 shared_pages=200}"
		" status{rss_anon_kb=400 rss_file_kb=800 swap_kb=0}"
		" io{rchars=- wchars=- read_bytes=- write_bytes=-}"
		" extra{policy=0 rt_priority=0 signal=0 blocked=0} errors{proc_io=ENOENT}\n"
		"    100 100 1 n-t- S \\x1b[2J\\\\ stat{utime=7 stime=3 nice=0 num_threads=2 vsize=10485760 rss=300}"
		" vm{size_pages=2560 resident_pages=300 shared_pages=200}"
		" status{rss_anon_kb=400 rss_file_kb=800 swap_kb=0}"
		" io{rchars=1000 wchars=2000 read_bytes=4096 write_bytes=8192}"
		" extra{policy=0 rt_priority=0 signal=0 blocked=0}\n"
		"    101 100 1 n-t- R worker stat{utime=7 stime=3 nice=0 num_threads=1 vsize=10485760 rss=300}"
		" vm{size_pages=2560 resident_pages=300 shared_pages=200}"
		" status{rss_anon_kb=400 rss_file_kb=800 swap_kb=0}"
		" io{rchars=1000 wchars=2000 read_bytes=4096 write_bytes=8192}"
		" extra{policy=0 rt_priority=0 signal=0 blocked=0}\n"
		"2 0 1 n--- S kthreadd stat{utime=7 stime=3 nice=0 num_threads=1 vsize=0 rss=0}"
		" vm{size_pages=0 resident_pages=0 shared_pages=0}"
		" status{rss_anon_kb=- rss_file_kb=- swap_kb=-}"
		" io{rchars=1000 wchars=2000 read_bytes=4096 write_bytes=8192}"
		" extra{policy=0 rt_priority=0 signal=0 blocked=0}\n";
	fixture_t fx;
	fixture_stat_t st;
	vmon_t vmon;
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	fixture_init(&fx);
	fixture_system(&fx);
	fixture_proc(&fx, 1, 0, NULL, 'S', 5, init_argv);
	fixture_kthread(&fx, 2, 0, "kthreadd", 'S', 5);
	fixture_proc(&fx, 100, 1, "\x1b[2J\\", 'S', 100, evil_argv);
	fixture_stat_init(&st, 100, 1, "\x1b[2J\\", 'S', 100);
	fixture_stat_set(&st, 20, "2");
	fixture_stat_write(&fx, "100/stat", &st, FIXTURE_STAT_FIELDS, true);
	fixture_stat_write(&fx, "100/task/100/stat", &st, FIXTURE_STAT_FIELDS, true);
	fixture_thread(&fx, 100, 101, "worker", 'R', 150);
	fixture_remove(&fx, "100/io");
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL, 0, all_wants | VMON_WANT_PROC_FOLLOW_THREADS));
	assert_true(vmon_sample(&vmon));
	out = open_memstream(&text, &len);
	assert_non_null(out);
	vmon_dump_procs(&vmon, out);
	fclose(out);
	if (strcmp(text, expected) != 0)
		fail_msg("vmon_dump_procs() wrote\n%s\nnot\n%s", text, expected);
	free(text);
	vmon_destroy(&vmon);
	fixture_free(&fx);
}

/* --- a tree captured from a real kernel (tests/fixtures/capture) --- */

#define CAPTURED "linux-6.18-x86_64"

static struct captured {
	int	holder, parens, execd, zombie, threaded, kthreadd, kworker;
} cap;

static void read_manifest(void)
{
	FILE *f = fopen(FIXTURES_DIR "/" CAPTURED "/MANIFEST", "r");
	char role[32];
	int pid;

	assert_non_null(f);
	memset(&cap, 0, sizeof(cap));
	while (fscanf(f, "%31s %d", role, &pid) == 2) {
		int *slot = !strcmp(role, "holder") ? &cap.holder : !strcmp(role, "parens") ? &cap.parens :
			    !strcmp(role, "execd") ? &cap.execd : !strcmp(role, "zombie") ? &cap.zombie :
			    !strcmp(role, "threaded") ? &cap.threaded : !strcmp(role, "kthreadd") ? &cap.kthreadd :
			    !strcmp(role, "kworker") ? &cap.kworker : NULL;

		assert_non_null(slot);
		*slot = pid;
	}
	fclose(f);
	assert_true(cap.holder && cap.parens && cap.execd && cap.zombie && cap.threaded && cap.kthreadd && cap.kworker);
}

/*
 * every stat row of a node (PROC_STAT's and PROC_STAT_EXTRA's) against the
 * captured line, split here independently: after the last ')'
 */
static void check_stat_line(fixture_t *fx, vmon_proc_t *p, const char *dir)
{
	static const int ids[] = { VMON_STORE_PROC_STAT, VMON_STORE_PROC_STAT_EXTRA };
	char path[600], line[2048], *fields[64], *save, *rest;
	FILE *f;
	int n = 2;

	snprintf(path, sizeof(path), "%s/%s/stat", fx->root, dir);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	rest = strrchr(line, ')');
	assert_non_null(rest);
	for (char *w = strtok_r(rest + 1, " \n", &save); w && n < 63; w = strtok_r(NULL, " \n", &save))
		fields[++n] = w;
	for (size_t k = 0; k < sizeof(ids) / sizeof(ids[0]); k++) {
		const vmon_store_desc_t *desc = &vmon_proc_store_descs[ids[k]];
		const void *store = p->stores[ids[k]];

		assert_non_null(store);
		for (int sym = 0; sym < desc->fields_nr; sym++) {
			const vmon_field_t *fl = &desc->fields[sym];
			unsigned long long want;

			if (fl->source != VMON_SOURCE_POS || fl->n < 3)
				continue;
			assert_true(fl->n <= n);
			want = fl->type == VMON_TYPE_char ? (unsigned char)fields[fl->n][0] :
			       (fl->type == VMON_TYPE_int || fl->type == VMON_TYPE_longlong) ?
			       (unsigned long long)strtoll(fields[fl->n], NULL, 10) : strtoull(fields[fl->n], NULL, 10);
			if (field_value(fl, store) != want || !vmon_field_present(desc, fl, store))
				fail_msg("%s %d: %s is %llu, the captured line says %s", dir, p->pid, fl->name,
					 field_value(fl, store), fields[fl->n]);
		}
	}
}

static void check_no_errors(vmon_proc_t *p)
{
	for (int i = 0; i < VMON_STORE_PROC_NR; i++) {
		if (p->errors[i])
			fail_msg("captured %d: errors[%s] = %d", p->pid, vmon_proc_store_descs[i].name, p->errors[i]);
	}
}

static void check_no_memory_lines(vmon_proc_t *p)
{
	const vmon_store_desc_t *vm_desc = &vmon_proc_store_descs[VMON_STORE_PROC_VM];

	for (int sym = 0; sym < vm_desc->fields_nr; sym++) {
		if (vm_desc->fields[sym].source == VMON_SOURCE_KEY && BITTEST(pvm(p)->present, sym))
			fail_msg("%d has no memory lines, yet %s is present", p->pid, vm_desc->fields[sym].name);
		if (vm_desc->fields[sym].source == VMON_SOURCE_POS && field_value(&vm_desc->fields[sym], pvm(p)))
			fail_msg("%d has no memory, yet %s is %llu", p->pid, vm_desc->fields[sym].name,
				 field_value(&vm_desc->fields[sym], pvm(p)));
	}
}

/* PROC_ALL over the capture: every file of a real kernel parses, every value is the file's */
static void test_captured_proc_all(void **state)
{
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *holder, *parens, *execd, *zombie, *threaded, *kthreadd, *kworker, *t;
	vmon_sys_vm_t *vm;
	vmon_sys_stat_t *ss;
	const vmon_store_desc_t *sys_vm_desc = &vmon_sys_store_descs[VMON_STORE_SYS_VM];
	char path[600], line[256];
	FILE *f;
	int keys = 0, present = 0, threads = 0;

	read_manifest();
	fixture_init(&fx);
	fixture_copy(&fx, CAPTURED);
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL | VMON_FLAG_PROC_ARRAY, VMON_WANT_SYS_STAT | VMON_WANT_SYS_VM,
				 all_wants | VMON_WANT_PROC_FOLLOW_THREADS));
	assert_true(vmon_sample(&vmon));
	assert_int_equal(assert_tree_consistent(&vmon), 7 + 3);
	assert_int_equal(vmon.sys_errors[VMON_STORE_SYS_STAT], 0);
	assert_int_equal(vmon.sys_errors[VMON_STORE_SYS_VM], 0);

	/* meminfo: each key of our table that the kernel printed is present, the others not */
	vm = vmon.stores[VMON_STORE_SYS_VM];
	snprintf(path, sizeof(path), "%s/meminfo", fx.root);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		for (int sym = 0; sym < sys_vm_desc->fields_nr; sym++) {
			const char *key = sys_vm_desc->fields[sym].key;
			size_t klen = strlen(key);

			if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
				keys++;
				if (field_value(&sys_vm_desc->fields[sym], vm) != strtoull(line + klen + 1, NULL, 10))
					fail_msg("meminfo %s is %llu: %s", key, field_value(&sys_vm_desc->fields[sym], vm), line);
			}
		}
	}
	fclose(f);
	for (int sym = 0; sym < sys_vm_desc->fields_nr; sym++)
		present += !!BITTEST(vm->present, sym);
	assert_true(keys > 40);
	assert_int_equal(present, keys);
	ss = vmon.stores[VMON_STORE_SYS_STAT];
	assert_int_equal(ss->cpus_nr, 2);
	assert_true(ss->cpus[0].online && ss->cpus[1].online);
	assert_true(ss->ctxt > 0 && ss->btime > 1700000000ULL);
	snprintf(path, sizeof(path), "%s/stat", fx.root);
	f = fopen(path, "r");
	assert_non_null(f);
	{
		unsigned long long user, nice, system;

		assert_int_equal(fscanf(f, "cpu %llu %llu %llu", &user, &nice, &system), 3);
		assert_int_equal(ss->user, user);
		assert_int_equal(ss->system, system);
	}
	fclose(f);

	holder = must_find(&vmon, cap.holder);
	parens = must_find(&vmon, cap.parens);
	execd = must_find(&vmon, cap.execd);
	zombie = must_find(&vmon, cap.zombie);
	threaded = must_find(&vmon, cap.threaded);
	kthreadd = must_find(&vmon, cap.kthreadd);
	kworker = must_find(&vmon, cap.kworker);
	for (vmon_proc_t *const *p = (vmon_proc_t *const[]){ holder, parens, execd, zombie, threaded, kthreadd, kworker, NULL }; *p; p++) {
		char dir[16];

		check_no_errors(*p);
		snprintf(dir, sizeof(dir), "%d", (*p)->pid);
		check_stat_line(&fx, *p, dir);
	}
	/* the tree */
	assert_null(holder->parent);
	assert_ptr_equal(parens->parent, holder);
	assert_ptr_equal(execd->parent, holder);
	assert_ptr_equal(threaded->parent, holder);
	assert_ptr_equal(zombie->parent, execd);
	assert_null(kthreadd->parent);
	assert_ptr_equal(kworker->parent, kthreadd);

	/* ") (" and spaces in a real comm, argv and exe */
	assert_string_equal(pstat(parens)->comm.array, "a) (b c");
	assert_int_equal(pstat(parens)->argc, 2);
	assert_string_equal(pstat(parens)->argv[0], "/tmp/capture/a) (b c");
	assert_string_equal(pstat(parens)->argv[1], "600");
	assert_string_equal(pstat(parens)->exe.array, "/tmp/capture/a) (b c");
	assert_true(pvm(parens)->resident_pages > 0);
	assert_true(BITTEST(pvmst(parens)->present, VMON_PROC_VM_STATUS_RSS_ANON_KB));
	assert_true(BITTEST(pio(parens)->present, VMON_PROC_IO_RCHAR));

	/* the zombie: no command line, executable or memory */
	assert_int_equal(pstat(zombie)->state, 'Z');
	assert_int_equal(pstat(zombie)->argc, 0);
	assert_false(BITTEST(pstat(zombie)->present, VMON_PROC_STAT_EXE));
	check_no_memory_lines(zombie);

	/* kernel threads */
	assert_true(pstat(kthreadd)->flags & 0x00200000);	/* PF_KTHREAD */
	assert_int_equal(pstat(kthreadd)->ppid, 0);
	assert_int_equal(pstat(kthreadd)->argc, 0);
	assert_false(BITTEST(pstat(kthreadd)->present, VMON_PROC_STAT_EXE));
	check_no_memory_lines(kthreadd);
	check_no_memory_lines(kworker);
	assert_int_equal(pstat(kworker)->state, 'I');
	assert_int_equal(pstat(kworker)->nice, -20);

	/* the threads of the threaded one: its stat says 3, task/ lists 3 */
	assert_int_equal(pstat(threaded)->num_threads, 3);
	list_for_each_entry(t, &threaded->threads, threads) {
		char dir[48];

		threads++;
		check_no_errors(t);
		snprintf(dir, sizeof(dir), "%d/task/%d", cap.threaded, t->pid);
		check_stat_line(&fx, t, dir);
		assert_true(BITTEST(pio(t)->present, VMON_PROC_IO_RCHAR));
	}
	assert_int_equal(threads, 3);
	assert_non_null(find_thread(threaded, cap.threaded));
	vmon_destroy(&vmon);
	fixture_free(&fx);
}

/* explicit mode over the capture: children files; kthreadd's lists kernel threads not captured */
static void test_captured_explicit(void **state)
{
	fixture_t fx;
	vmon_t vmon;
	vmon_proc_t *holder, *kthreadd;
	vmon_stats_t stats;
	char path[600];
	int listed = 0;
	FILE *f;

	read_manifest();
	fixture_init(&fx);
	fixture_copy(&fx, CAPTURED);
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_NONE, 0,
				 all_wants | VMON_WANT_PROC_FOLLOW_CHILDREN | VMON_WANT_PROC_FOLLOW_THREADS));
	holder = vmon_proc_monitor(&vmon, cap.holder, VMON_WANT_PROC_INHERIT, NULL, NULL);
	kthreadd = vmon_proc_monitor(&vmon, cap.kthreadd, VMON_WANT_PROC_INHERIT, NULL, NULL);
	assert_non_null(holder);
	assert_non_null(kthreadd);
	assert_true(vmon_sample(&vmon));
	assert_non_null(find_child(&vmon, holder, cap.parens));
	assert_non_null(find_child(&vmon, holder, cap.threaded));
	assert_non_null(find_child(&vmon, find_child(&vmon, holder, cap.execd), cap.zombie));
	assert_non_null(find_child(&vmon, kthreadd, cap.kworker));
	assert_null(find_child(&vmon, NULL, cap.kworker));
	assert_int_equal(assert_tree_consistent(&vmon), 7 + 3);

	snprintf(path, sizeof(path), "%s/%d/task/%d/children", fx.root, cap.kthreadd, cap.kthreadd);
	f = fopen(path, "r");
	assert_non_null(f);
	for (int pid; fscanf(f, "%d", &pid) == 1; )
		listed++;
	fclose(f);
	assert_int_equal(vmon_get_stats(&vmon, &stats), 0);
	assert_int_equal(stats.vanished, listed - 1);
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
		cmocka_unit_test(test_kernel_threads),
		cmocka_unit_test(test_zombie),
		cmocka_unit_test(test_read_while_reaped),
		cmocka_unit_test(test_read_while_reaped_running),
		cmocka_unit_test(test_pid_reuse_explicit),
		cmocka_unit_test(test_vanish_mid_read),
		cmocka_unit_test(test_vanish_with_new_parent),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_threads_gone_mid_listing),
		cmocka_unit_test(test_reparent_by_ppid),
		cmocka_unit_test(test_follow_children),
		cmocka_unit_test(test_proc_array),
		cmocka_unit_test(test_dump_format),
		cmocka_unit_test(test_captured_proc_all),
		cmocka_unit_test(test_captured_explicit),
	};

	return cmocka_run_group_tests(tests, NULL, fixtures_cleanup);
}
