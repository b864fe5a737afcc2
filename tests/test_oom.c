/*
 * test_oom.c: libvmon when memory runs out.
 *
 * The test replaces malloc and its kin (glibc lets a program do so, and
 * calls the replacement from inside libc too: strdup, opendir, ...) with
 * versions that count what is allocated and can be told to fail the Nth
 * allocation.  A scenario on a fixture tree (init, sampling, a process that
 * exits, one that starts with a thread, then two samples with memory back)
 * runs once per allocation it makes, failing that one, in each of the two
 * ways a tree is made (PROC_ALL with the flat array; a monitored process
 * with its descendants and a sample callback), and checks:
 *   - every call that fails says ENOMEM and the tree stays consistent;
 *   - once memory is back, the next samples give the whole tree, every
 *     store filled: nothing lost for good (the read-avoidance rules must not
 *     skip what a failure left unread);
 *   - after vmon_destroy() every byte is freed, failure or not.
 * Not under AddressSanitizer (which replaces malloc itself); run under
 * valgrind it would only see __libc_malloc, so it is left out of
 * check-valgrind (ASan and the counts here cover the same ground).
 */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#if defined(__SANITIZE_ADDRESS__)
#define OOM_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OOM_UNDER_ASAN 1
#endif
#endif

#ifndef OOM_UNDER_ASAN

/* glibc's own allocator, which the replacements call */
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t nmemb, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *ptr);

static long countdown = -1;	/* the allocation that fails: 0 the next, -1 none */
static bool paused;		/* the test's own work: neither counted nor failed */
static long allocations;	/* made in this scenario */
static long injected;		/* failures made */
static long live;		/* blocks allocated and not freed */

/* where a failure is made (a place for a debugger's breakpoint) */
__attribute__((noinline)) static void injecting(void)
{
	injected++;
	__asm__ volatile("" ::: "memory");
}

static int fail_now(void)
{
	if (paused)
		return 0;
	allocations++;
	if (countdown < 0 || countdown-- != 0)
		return 0;
	injecting();
	errno = ENOMEM;
	return 1;
}

void *malloc(size_t size)
{
	void *p = fail_now() ? NULL : __libc_malloc(size);

	live += p != NULL;
	return p;
}

void *calloc(size_t nmemb, size_t size)
{
	void *p = fail_now() ? NULL : __libc_calloc(nmemb, size);

	live += p != NULL;
	return p;
}

void *realloc(void *ptr, size_t size)
{
	void *p;

	if (!ptr)
		return malloc(size);
	if (size == 0) {
		free(ptr);
		return NULL;
	}
	if (fail_now())
		return NULL;	/* ptr untouched, as realloc(3) leaves it */
	p = __libc_realloc(ptr, size);
	return p;
}

void *memalign(size_t alignment, size_t size)
{
	void *p = fail_now() ? NULL : __libc_memalign(alignment, size);

	live += p != NULL;
	return p;
}

void *aligned_alloc(size_t alignment, size_t size)
{
	return memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size)
{
	void *p = memalign(alignment, size);

	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void free(void *ptr)
{
	if (!ptr)
		return;
	live--;
	__libc_free(ptr);
}

/* --- the scenario --- */

static void tree_before(fixture_t *fx)
{
	fixture_small_tree(fx);
	fixture_children(fx, 100, (const int[]){ 101 }, 1);
}

/*
 * 100 execs another program (a new command line: its old text and argument
 * vector, shared, go); 101 exits; 102, a program with a second thread,
 * starts under 100
 */
static void tree_after(fixture_t *fx)
{
	static const char *const bash_argv[] = { "/bin/bash", "-c", "top -d 1", "x", NULL };
	static const char *const top_argv[] = { "top", "-d", "1", NULL };
	fixture_stat_t st;

	fixture_proc(fx, 100, 1, NULL, 'S', 500, bash_argv);
	fixture_remove(fx, "101");
	fixture_proc(fx, 102, 100, NULL, 'S', 520, top_argv);
	fixture_stat_init(&st, 102, 100, "top", 'S', 520);
	fixture_stat_set(&st, 20, "2");		/* two threads */
	fixture_stat_write(fx, "102/stat", &st, FIXTURE_STAT_FIELDS, true);
	fixture_thread(fx, 102, 103, "top", 'S', 521);
	fixture_children(fx, 100, (const int[]){ 102 }, 1);
	fixture_ran(fx, 100);
}

/*
 * The tests link with vmon_sample() wrapped by a tree check (tests/local.mk),
 * which allocates: here the real one is called, and the check made with
 * failures paused, as it is no failure of the library's.
 */
int __real_vmon_sample(vmon_t *vmon);

static bool sample(vmon_t *vmon)
{
	return __real_vmon_sample(vmon) != 0;
}

/* assert_tree_consistent() allocates: not a failure of the library's */
static void consistent(vmon_t *vmon)
{
	paused = true;
	assert_tree_consistent(vmon);
	paused = false;
}

/* a failed call says why */
static void check_result(bool ok)
{
	if (!ok)
		assert_int_equal(errno, ENOMEM);
}

/*
 * The two ways a tree is made: every process (PROC_ALL, with the flat
 * array), or a monitored process and its descendants (the original
 * libvmon's explicit mode, as a window manager uses it), with a sample
 * callback.
 */
enum mode { MODE_ALL, MODE_EXPLICIT };

/* every process and thread of tree_after() the mode shows, every store filled as the fixture says */
static void check_whole(vmon_t *vmon, enum mode mode)
{
	static const struct { int pid; const char *comm; int argc; } want[] = {
		{ 1, "init", 2 }, { 2, "kthreadd", 0 }, { 3, "kworker/0:0-events", 0 },
		{ 100, "bash", 4 }, { 102, "top", 3 },
	};
	vmon_proc_t *top;

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		vmon_proc_t *proc;

		/* explicit mode: the monitored sh and its descendants */
		if (mode == MODE_EXPLICIT && want[i].pid < 100)
			continue;
		proc = must_find(vmon, want[i].pid);

		assert_false(proc->is_stale);
		assert_non_null(pstat(proc));
		assert_non_null(pvm(proc));
		assert_true(BITTEST(pstat(proc)->present, VMON_PROC_STAT_COMM));
		assert_string_equal(pstat(proc)->comm.array, want[i].comm);
		assert_int_equal(pstat(proc)->argc, want[i].argc);
		assert_true(BITTEST(pvm(proc)->present, VMON_PROC_VM_SIZE_PAGES));
		for (int e = 0; e < VMON_STORE_PROC_NR; e++)
			assert_int_equal(proc->errors[e], 0);
	}
	assert_null(vmon_proc_lookup(vmon, 101));
	top = must_find(vmon, 102);
	assert_int_equal(count_threads(top), 2);
	assert_string_equal(pstat(top)->argv[2], "1");
	assert_string_equal(pstat(must_find(vmon, 100))->argv[2], "top -d 1");
	assert_int_equal(must_find(vmon, 102)->parent->pid, 100);
}


static int callbacks;

static void sample_cb(vmon_t *vmon, void *sample_arg, vmon_proc_t *proc, void *proc_arg)
{
	(void)vmon;
	(void)sample_arg;
	(void)proc;
	(void)proc_arg;
	callbacks++;
}

/* where the failure goes: init and the first two samples, or vmon_destroy() after the rest */
enum phase { PHASE_SAMPLING, PHASE_DESTROY };

static long phase_allocations[2];	/* what each phase made in the last run */

/* the scenario with the phase's allocation fail_at failing (-1: none); whether one was failed */
static bool scenario(enum mode mode, enum phase phase, long fail_at)
{
	const vmon_proc_wants_t wants = VMON_WANT_PROC_STAT | VMON_WANT_PROC_VM | VMON_WANT_PROC_IO |
					VMON_WANT_PROC_FOLLOW_THREADS;
	fixture_t fx;
	vmon_attr_t attr;
	vmon_t vmon;
	vmon_proc_t *monitored = NULL;
	long before;
	bool ok;

	fixture_init(&fx);
	tree_before(&fx);
	vmon_attr_default(&attr);
	attr.flags = mode == MODE_ALL ? VMON_FLAG_PROC_ALL | VMON_FLAG_PROC_ARRAY : 0;
	attr.sys_wants = VMON_WANT_SYS_STAT | VMON_WANT_SYS_VM | VMON_WANT_SYS_LOADAVG;
	attr.proc_wants = wants;
	attr.proc_root = fx.root;
	attr.feed = "none";
	attr.sampler = VMON_SAMPLER_PROC;

	before = live;
	injected = 0;
	allocations = 0;
	countdown = phase == PHASE_SAMPLING ? fail_at : -1;
	ok = vmon_init_attr(&vmon, &attr);
	if (!ok) {
		countdown = -1;
		assert_int_equal(errno, ENOMEM);
		assert_int_equal(injected, 1);
		assert_int_equal(live, before);
		fixture_free(&fx);
		return true;
	}
	if (mode == MODE_EXPLICIT) {
		monitored = vmon_proc_monitor(&vmon, 100, wants | VMON_WANT_PROC_FOLLOW_CHILDREN, sample_cb, NULL);
		check_result(monitored != NULL);
	}
	check_result(sample(&vmon));
	consistent(&vmon);
	paused = true;
	tree_after(&fx);
	paused = false;
	check_result(sample(&vmon));
	consistent(&vmon);
	phase_allocations[PHASE_SAMPLING] = allocations;

	/* memory is back: two samples give everything (a monitor refused is asked for again) */
	countdown = -1;
	if (mode == MODE_EXPLICIT && !monitored)
		assert_non_null(monitored = vmon_proc_monitor(&vmon, 100, wants | VMON_WANT_PROC_FOLLOW_CHILDREN,
							      sample_cb, NULL));
	assert_true(sample(&vmon));
	consistent(&vmon);
	callbacks = 0;
	assert_true(sample(&vmon));
	consistent(&vmon);
	check_whole(&vmon, mode);
	if (mode == MODE_EXPLICIT) {
		assert_true(callbacks > 0);
		vmon_proc_unmonitor(&vmon, monitored, sample_cb, NULL);
	}

	/* and vmon_destroy() frees all, also when memory runs out in it */
	allocations = 0;
	if (phase == PHASE_DESTROY)
		countdown = fail_at;
	vmon_destroy(&vmon);
	countdown = -1;
	phase_allocations[PHASE_DESTROY] = allocations;
	assert_int_equal(live, before);
	fixture_free(&fx);
	return injected > 0;
}

static void every_allocation(enum mode mode)
{
	static const char *const phases[] = { "init and sampling", "vmon_destroy()" };
	static const char *const modes[] = { "PROC_ALL", "explicit" };

	/* once whole, which also makes what libc allocates once and keeps */
	assert_false(scenario(mode, PHASE_SAMPLING, -1));
	assert_false(scenario(mode, PHASE_SAMPLING, -1));
	for (int phase = PHASE_SAMPLING; phase <= PHASE_DESTROY; phase++) {
		long total = phase_allocations[phase];

		print_message("%s, %s: %ld allocations, each failed in turn\n", modes[mode], phases[phase], total);
		/* the counting malloc sees the library's: 72 and 50 since a node's stores are in its block */
		if (phase == PHASE_SAMPLING)
			assert_true(total > 40);
		for (long n = 0; n < total; n++) {
			if (getenv("OOM_TRACE"))
				print_message("failing allocation %ld of %s\n", n, phases[phase]);
			assert_true(scenario(mode, phase, n));
		}
		/* past the last, nothing fails */
		assert_false(scenario(mode, phase, total));
	}
}

static void test_every_allocation_all(void **state)
{
	(void)state;
	every_allocation(MODE_ALL);
}

static void test_every_allocation_explicit(void **state)
{
	(void)state;
	every_allocation(MODE_EXPLICIT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_allocation_all),
		cmocka_unit_test(test_every_allocation_explicit),
	};

	return cmocka_run_group_tests(tests, NULL, fixtures_cleanup);
}

#else	/* OOM_UNDER_ASAN */

static void test_every_allocation(void **state)
{
	(void)state;
	SKIP_IF(true, "AddressSanitizer replaces malloc itself: this test's counting allocator cannot run under it");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_allocation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
