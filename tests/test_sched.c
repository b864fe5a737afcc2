/*
 * test_sched.c: the PROC_SCHED and PROC_ROLLUP stores against what the test
 * sets on its own children (OOM adjustment, I/O priority, affinity, a count
 * of sleeps) and against /proc read by the test, through whichever sampling
 * source the instance uses (tests/sampler_forced.sh runs it with each).
 * PROC_ROLLUP is a per-node want: only the node that asks is read.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

#define SLEEPS		50	/* voluntary switches the child makes before it rests */
#define TOUCHED_MB	8

static vmon_proc_sched_t *psched(vmon_proc_t *proc) { return proc->stores[VMON_STORE_PROC_SCHED]; }
static vmon_proc_rollup_t *prollup(vmon_proc_t *proc) { return proc->stores[VMON_STORE_PROC_ROLLUP]; }

static int child_sleeps_then_rests(void *arg)
{
	struct timespec ms = { 0, 1000000 };
	size_t len = (size_t)TOUCHED_MB << 20;
	char *p = malloc(len);

	(void)arg;
	if (!p)
		return 1;
	memset(p, 7, len);
	/* the pages are used: the compiler may not drop the writes */
	__asm__ volatile("" : : "r"(p) : "memory");
	for (int i = 0; i < SLEEPS; i++)
		nanosleep(&ms, NULL);
	for (;;)
		pause();
	return 0;
}

/* "Key: N" of /proc/PID/FILE (status, smaps_rollup) */
static unsigned long long key_of(pid_t pid, const char *file, const char *key)
{
	char path[64], line[256];
	unsigned long long v = 0;
	size_t len = strlen(key);
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, file);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, len) == 0 && line[len] == ':')
			found = sscanf(line + len + 1, "%llu", &v) == 1;
	}
	fclose(f);
	assert_true(found);
	return v;
}

static long long number_of(pid_t pid, const char *file)
{
	char path[64];
	long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, file);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%lld", &v), 1);
	fclose(f);
	return v;
}

/* the child made its sleeps and rests in pause() */
static void wait_rested(pid_t pid)
{
	assert_true(wait_sleeping(pid, 10000));
	while (key_of(pid, "status", "voluntary_ctxt_switches") < SLEEPS || !wait_sleeping(pid, 10000))
		usleep(10000);
}

static void init_live(vmon_t *vmon, vmon_proc_wants_t wants)
{
	vmon_attr_t attr;

	vmon_attr_default(&attr);
	attr.flags = VMON_FLAG_PROC_ALL;
	attr.proc_wants = wants;
	attr.feed = "none";
	assert_true(vmon_init_attr(vmon, &attr));
}

static void test_sched_values(void **state)
{
	const vmon_store_desc_t *desc = &vmon_proc_store_descs[VMON_STORE_PROC_SCHED];
	char text[64], want[32];
	cpu_set_t one;
	vmon_proc_sched_t *s;
	vmon_t vmon;
	pid_t pid;
	FILE *f;

	(void)state;
	/* the affinity set to every CPU must read back as all of them: none may go offline meanwhile */
	cpu1_lock();
	pid = spawn_fn(child_sleeps_then_rests, NULL);
	wait_rested(pid);

	/* what the test sets: raising oom_score_adj needs no privilege, nor lowering one's own I/O class */
	snprintf(text, sizeof(text), "/proc/%d/oom_score_adj", pid);
	f = fopen(text, "w");
	assert_non_null(f);
	assert_true(fprintf(f, "500\n") > 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(syscall(SYS_ioprio_set, 1, pid, (2 << 13) | 6), 0);	/* best-effort, level 6 */
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	assert_int_equal(sched_setaffinity(pid, sizeof(one), &one), 0);

	init_live(&vmon, VMON_WANT_PROC_STAT | VMON_WANT_PROC_SCHED);
	assert_true(vmon_sample(&vmon));
	assert_true(vmon_sample(&vmon));
	s = psched(must_find(&vmon, pid));
	assert_non_null(s);
	assert_int_equal(must_find(&vmon, pid)->errors[VMON_STORE_PROC_SCHED], 0);
	for (int i = 0; i < desc->fields_nr; i++)
		assert_true(vmon_field_present(desc, &desc->fields[i], s));
	assert_int_equal(s->oom_score_adj, 500);
	assert_int_equal(s->oom_score, number_of(pid, "oom_score"));
	assert_true(s->oom_score >= 500);
	assert_int_equal(s->io_class, 2);
	assert_int_equal(s->io_level, 6);
	vmon_field_format(&desc->fields[VMON_PROC_SCHED_CPUS_ALLOWED], s, text, sizeof(text), 0);
	assert_string_equal(text, "0");
	/* asleep since: status says the same */
	assert_true(s->voluntary_ctxt >= SLEEPS);
	assert_int_equal(s->voluntary_ctxt, key_of(pid, "status", "voluntary_ctxt_switches"));
	assert_int_equal(s->involuntary_ctxt, key_of(pid, "status", "nonvoluntary_ctxt_switches"));
	print_message("%s: vctx %llu, ictx %llu, oom %d (adj %d), io %d/%d, cpus %s\n",
		      vmon_sampler_name(vmon_get_sampler(&vmon)), s->voluntary_ctxt, s->involuntary_ctxt,
		      s->oom_score, s->oom_score_adj, s->io_class, s->io_level, text);

	/* changed by others while it sleeps: seen at the next sample */
	snprintf(text, sizeof(text), "/proc/%d/oom_score_adj", pid);
	f = fopen(text, "w");
	assert_non_null(f);
	assert_true(fprintf(f, "700\n") > 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(syscall(SYS_ioprio_set, 1, pid, 3 << 13), 0);	/* idle */
	CPU_ZERO(&one);
	for (int c = 0; c < CPU_SETSIZE && c < sysconf(_SC_NPROCESSORS_CONF); c++)
		CPU_SET(c, &one);
	assert_int_equal(sched_setaffinity(pid, sizeof(one), &one), 0);
	assert_true(vmon_sample(&vmon));
	s = psched(must_find(&vmon, pid));
	assert_int_equal(s->oom_score_adj, 700);
	assert_true(BITTEST(s->changed, VMON_PROC_SCHED_OOM_SCORE_ADJ));
	/* the badness follows its adjustment in the same sample */
	assert_int_equal(s->oom_score, number_of(pid, "oom_score"));
	assert_true(BITTEST(s->changed, VMON_PROC_SCHED_OOM_SCORE));
	assert_int_equal(s->io_class, 3);
	vmon_field_format(&desc->fields[VMON_PROC_SCHED_CPUS_ALLOWED], s, text, sizeof(text), 0);
	snprintf(want, sizeof(want), "0-%ld", sysconf(_SC_NPROCESSORS_CONF) - 1);
	assert_string_equal(text, sysconf(_SC_NPROCESSORS_CONF) > 1 ? want : "0");
	assert_true(BITTEST(s->changed, VMON_PROC_SCHED_CPUS_ALLOWED));

	vmon_destroy(&vmon);
	reap(pid, SIGKILL);
	cpu1_unlock();
}

/* a and b within 2% of the larger (and 64 kB) */
static bool near(unsigned long long a, unsigned long long b)
{
	unsigned long long d = a > b ? a - b : b - a, big = a > b ? a : b;

	return d <= 64 || d * 50 <= big;
}

/* smaps_rollup only where asked: one child's node, its PSS what the file says */
static void test_rollup_per_node(void **state)
{
	const vmon_store_desc_t *desc = &vmon_proc_store_descs[VMON_STORE_PROC_ROLLUP];
	vmon_proc_t *a, *b;
	vmon_t vmon;
	pid_t pa, pb;

	(void)state;
	pa = spawn_fn(child_sleeps_then_rests, NULL);
	pb = spawn_fn(child_sleeps_then_rests, NULL);
	wait_rested(pa);
	wait_rested(pb);

	init_live(&vmon, VMON_WANT_PROC_STAT);
	assert_true(vmon_sample(&vmon));
	a = must_find(&vmon, pa);
	assert_int_equal(vmon_proc_set_wants(&vmon, a, a->wants | VMON_WANT_PROC_ROLLUP), 0);
	assert_true(vmon_sample(&vmon));
	a = must_find(&vmon, pa);
	b = must_find(&vmon, pb);
	assert_null(b->stores[VMON_STORE_PROC_ROLLUP]);
	assert_non_null(prollup(a));
	assert_int_equal(a->errors[VMON_STORE_PROC_ROLLUP], 0);
	for (int i = 0; i < desc->fields_nr; i++)
		assert_true(vmon_field_present(desc, &desc->fields[i], prollup(a)));
	/*
	 * What the file says after the sample, though the child sleeps: PSS
	 * and private pages move whenever this process, which shares the
	 * child's pages since the fork, writes to one of them (copy on write;
	 * under valgrind, tens of kB between two reads): within 2%.
	 */
	assert_true(near(prollup(a)->pss_kb, key_of(pa, "smaps_rollup", "Pss")));
	assert_true(near(prollup(a)->private_dirty_kb, key_of(pa, "smaps_rollup", "Private_Dirty")));
	assert_true(prollup(a)->pss_anon_kb >= TOUCHED_MB * 1024);
	print_message("PSS %llu kB (anon %llu, file %llu), private dirty %llu kB\n", prollup(a)->pss_kb,
		      prollup(a)->pss_anon_kb, prollup(a)->pss_file_kb, prollup(a)->private_dirty_kb);

	/* dropped: the store goes */
	assert_int_equal(vmon_proc_set_wants(&vmon, a, a->wants & ~VMON_WANT_PROC_ROLLUP), 0);
	assert_true(vmon_sample(&vmon));
	assert_null(must_find(&vmon, pa)->stores[VMON_STORE_PROC_ROLLUP]);

	vmon_destroy(&vmon);
	reap(pa, SIGKILL);
	reap(pb, SIGKILL);
}

/* a fixture root: the syscalls would ask about real processes of those ids: absent, and no error */
static void test_sched_fixture(void **state)
{
	const vmon_store_desc_t *desc = &vmon_proc_store_descs[VMON_STORE_PROC_SCHED];
	vmon_proc_sched_t *s;
	fixture_t fx;
	vmon_t vmon;

	(void)state;
	fixture_init(&fx);
	fixture_system(&fx);
	fixture_proc(&fx, 1, 0, "init", 'S', 5, NULL);
	fixture_printf(&fx, "1/oom_score", "12\n");
	fixture_printf(&fx, "1/oom_score_adj", "-300\n");
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL, 0, VMON_WANT_PROC_STAT | VMON_WANT_PROC_SCHED));
	assert_true(vmon_sample(&vmon));
	s = psched(must_find(&vmon, 1));
	assert_non_null(s);
	assert_int_equal(s->oom_score, 12);
	assert_int_equal(s->oom_score_adj, -300);
	assert_false(vmon_field_present(desc, &desc->fields[VMON_PROC_SCHED_IO_CLASS], s));
	assert_false(vmon_field_present(desc, &desc->fields[VMON_PROC_SCHED_CPUS_ALLOWED], s));
	/* vmon_dump_procs() shows them, the absent as "-" */
	{
		char *text = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&text, &len);

		assert_non_null(out);
		vmon_dump_procs(&vmon, out);
		fclose(out);
		assert_non_null(strstr(text, " sched{voluntary_ctxt=- involuntary_ctxt=- oom_score=12 oom_score_adj=-300 "
					     "io_class=- io_level=- cpus_allowed=-}"));
		free(text);
	}
	vmon_destroy(&vmon);
	fixture_free(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sched_values),
		cmocka_unit_test(test_rollup_per_node),
		cmocka_unit_test(test_sched_fixture),
	};

	return cmocka_run_group_tests(tests, NULL, fixtures_cleanup);
}
