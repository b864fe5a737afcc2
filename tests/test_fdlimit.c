/*
 * test_fdlimit.c: 5,000 idle children sampled under RLIMIT_NOFILE=1024.
 *
 * Every child must be sampled with data (no errors, present bits set) in
 * explicit mode (the test process followed with PROC_FOLLOW_CHILDREN) and
 * in PROC_ALL, while the files libvmon holds open stay within its budget
 * (half the soft limit by default) and the process never holds more fds
 * than that budget allows.  Then the caller takes most of the remaining fds
 * for itself: libvmon hits EMFILE, gives back what it held, and still loses
 * nothing; once the caller gives them back, the budget grows back.
 *
 * Under valgrind (VMON_UNDER_VALGRIND=1, set by make check-valgrind) the
 * test spawns 400 children instead of 5,000: enough to go past the budget,
 * small enough to finish.  The children are in one process group that the
 * teardown kills and reaps, whatever happened; each also dies with the test
 * (PR_SET_PDEATHSIG).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "puppet.h"
#include "testlib.h"

#define NOFILE	1024

/*
 * openat() as libvmon calls it, through this definition (the executable's
 * symbol comes first): an EBADF means libvmon opened relative to a
 * directory fd it had closed itself, which some callers would only see as
 * "cannot tell".
 */
static int openat_ebadf;

int openat(int dir_fd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode = 0;
	long fd;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	fd = syscall(SYS_openat, dir_fd, path, flags, mode);
	if (fd < 0 && errno == EBADF)
		openat_ebadf++;
	return (int)fd;
}

static pid_t *kids;
static int kids_nr;

static int children_wanted(void)
{
	return under_valgrind() ? 400 : 5000;
}

static int setup(void **state)
{
	struct rlimit rl;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < NOFILE)
		fail_msg("the hard RLIMIT_NOFILE is %llu, below %d", (unsigned long long)rl.rlim_max, NOFILE);
	rl.rlim_cur = NOFILE;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);

	kids_nr = children_wanted();
	kids = calloc((size_t)kids_nr, sizeof(*kids));
	assert_non_null(kids);
	fflush(NULL);
	for (int i = 0; i < kids_nr; i++) {
		pid_t pid;
		int tries = 0;

		/* pids are shared with the other users of this machine: wait out a short EAGAIN */
		while ((pid = fork()) < 0 && errno == EAGAIN && tries++ < 50) {
			struct timespec ts = { 0, 100 * 1000 * 1000 };

			nanosleep(&ts, NULL);
		}
		if (pid < 0)
			fail_msg("fork of child %d: %s", i, strerror(errno));
		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close_range(3, ~0U, 0);
			for (;;)
				pause();
		}
		puppets_track(pid);
		kids[i] = pid;
	}
	return 0;
}

static int teardown(void **state)
{
	puppets_cleanup();
	free(kids);
	kids = NULL;
	return 0;
}

/* the most fds seen open while sampling (the ctor runs in the middle of the pass) */
static int fds_peak, ctor_calls;

static void watch_fds(vmon_t *vmon, vmon_proc_t *proc)
{
	if (ctor_calls++ % 97 == 0) {
		int n = count_open_fds();

		if (n > fds_peak)
			fds_peak = n;
	}
}

/* every child of ours in the tree, with all its data */
/* a store's descriptor member is -1, or the file of that process it names (vmon(3)) */
static void check_held(pid_t pid, const char *name, int fd)
{
	char link[64], want[64], target[64];
	ssize_t n;

	if (fd < 0) {
		assert_int_equal(fd, -1);
		return;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	snprintf(want, sizeof(want), "/proc/%d/%s", pid, name);
	n = readlink(link, target, sizeof(target) - 1);
	assert_true(n > 0);
	target[n] = '\0';
	if (strcmp(target, want) != 0)
		fail_msg("child %d: its %s fd %d is %s", pid, name, fd, target);
}

static void check_children(vmon_t *vmon, vmon_proc_t *self)
{
	int found = 0;
	vmon_proc_t *c;

	list_for_each_entry(c, &self->children, siblings) {
		bool ours = false;

		for (int i = 0; i < kids_nr && !ours; i++)
			ours = kids[i] == c->pid;
		if (!ours)
			continue;
		found++;
		for (int i = 0; i < VMON_STORE_PROC_NR; i++) {
			if (c->errors[i])
				fail_msg("child %d: errors[%s] = %s", c->pid, vmon_proc_store_descs[i].name, strerror(c->errors[i]));
		}
		if (c->is_stale || !BITTEST(pstat(c)->present, VMON_PROC_STAT_START) || pstat(c)->ppid != getpid() ||
		    !BITTEST(pvm(c)->present, VMON_PROC_VM_RESIDENT_PAGES) || !pvm(c)->resident_pages ||
		    !BITTEST(pvmst(c)->present, VMON_PROC_VM_STATUS_RSS_ANON_KB) ||
		    !BITTEST(pio(c)->present, VMON_PROC_IO_RCHAR) || pstat(c)->state != 'S')
			fail_msg("child %d: data missing or wrong (stale %d, ppid %lld, state %c, resident %llu)", c->pid,
				 c->is_stale, pstat(c)->ppid, pstat(c)->state ? pstat(c)->state : '?', pvm(c)->resident_pages);
		check_held(c->pid, "stat", pstat(c)->stat_fd);
		check_held(c->pid, "statm", pvm(c)->statm_fd);
		check_held(c->pid, "io", pio(c)->io_fd);
		/* never held (vmon(3)) */
		assert_int_equal(pstat(c)->cmdline_fd, -1);
		assert_int_equal(pstat(c)->comm_fd, -1);
	}
	if (found != kids_nr)
		fail_msg("%d of our %d children in the tree", found, kids_nr);
}

static void check_budget(vmon_t *vmon, int baseline)
{
	vmon_feed_stats_t feed;
	vmon_stats_t st;
	int open_now = count_open_fds();

	assert_int_equal(vmon_get_stats(vmon, &st), 0);
	assert_int_equal(vmon_feed_get_stats(vmon, &feed), 0);
	if (st.fds_held > st.fd_budget)
		fail_msg("%d fds held, over the budget of %d", st.fds_held, st.fd_budget);
	/* what we see open: the caller's, the held ones, /proc/stat and /proc/meminfo, the proc root, the event feed's, the iterator's */
	if (open_now > baseline + st.fds_held + 3 + feed.fds + st.sampler_fds)
		fail_msg("%d fds open: %d before vmon_init(), %d held, %d the feed's, %d the iterator's", open_now, baseline,
			 st.fds_held, feed.fds, st.sampler_fds);
	/* mid-pass: the held ones, a few opened for one file at a time (the iterator's read one), the feed's */
	if (fds_peak > baseline + st.fd_budget + 8 + feed.fds + st.sampler_fds)
		fail_msg("%d fds open mid-pass: %d before vmon_init(), a budget of %d", fds_peak, baseline, st.fd_budget);
}

static void run(vmon_flags_t flags)
{
	const vmon_proc_wants_t wants = VMON_WANT_PROC_STAT | VMON_WANT_PROC_VM | VMON_WANT_PROC_VM_STATUS |
					VMON_WANT_PROC_IO | VMON_WANT_PROC_FOLLOW_CHILDREN;
	int baseline = count_open_fds();
	vmon_t vmon;
	vmon_stats_t st;
	vmon_proc_t *self;

	assert_true(vmon_init(&vmon, flags, VMON_WANT_SYS_STAT | VMON_WANT_SYS_VM, wants));
	vmon.proc_ctor_cb = watch_fds;
	fds_peak = ctor_calls = 0;
	assert_int_equal(vmon_get_stats(&vmon, &st), 0);
	assert_int_equal(st.fd_budget, NOFILE / 2);	/* the documented default */
	if (!(flags & VMON_FLAG_PROC_ALL))
		assert_non_null(vmon_proc_monitor(&vmon, getpid(), VMON_WANT_PROC_INHERIT, NULL, NULL));
	for (int pass = 0; pass < 3; pass++) {
		assert_true(vmon_sample(&vmon));
		self = must_find(&vmon, getpid());
		check_children(&vmon, self);
		check_budget(&vmon, baseline);
	}
	assert_int_equal(vmon_get_stats(&vmon, &st), 0);
	assert_true(st.fds_held > 0);			/* it did hold what it could */
	assert_true(ctor_calls >= kids_nr);
	vmon_destroy(&vmon);
	assert_int_equal(count_open_fds(), baseline);
}

static void test_explicit(void **state)
{
	run(VMON_FLAG_NONE);
}

static void test_proc_all(void **state)
{
	run(VMON_FLAG_PROC_ALL);
}

/*
 * The caller takes every fd left after vmon_init() and a first sample:
 * libvmon's next open fails (EMFILE).  It must give back what it holds
 * until under a smaller budget, and still read everything.  When the
 * caller closes them, the budget grows back to what it was, and libvmon
 * holds files again.
 */
static void test_emfile(void **state)
{
	const vmon_proc_wants_t wants = VMON_WANT_PROC_STAT | VMON_WANT_PROC_VM | VMON_WANT_PROC_VM_STATUS |
					VMON_WANT_PROC_IO | VMON_WANT_PROC_FOLLOW_CHILDREN;
	vmon_t vmon;
	vmon_stats_t st;
	int hog[NOFILE], hogs = 0, held;

	vmon_attr_t attr;

	/* what runs out here are /proc's files: the /proc source, whatever $VMON_SAMPLER says */
	vmon_attr_default(&attr);
	attr.sys_wants = VMON_WANT_SYS_STAT | VMON_WANT_SYS_VM;
	attr.proc_wants = wants;
	attr.sampler = VMON_SAMPLER_PROC;
	assert_true(vmon_init_attr(&vmon, &attr));
	openat_ebadf = 0;
	assert_non_null(vmon_proc_monitor(&vmon, getpid(), VMON_WANT_PROC_INHERIT, NULL, NULL));
	assert_true(vmon_sample(&vmon));
	check_children(&vmon, must_find(&vmon, getpid()));
	assert_int_equal(vmon_get_stats(&vmon, &st), 0);
	if (st.fds_held < 100)
		fail_msg("only %d fds held: nothing to give back", st.fds_held);

	while (hogs < NOFILE && (hog[hogs] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		hogs++;
	assert_int_equal(errno, EMFILE);
	for (int pass = 0; pass < 3; pass++) {
		assert_true(vmon_sample(&vmon));
		check_children(&vmon, must_find(&vmon, getpid()));
	}
	assert_int_equal(openat_ebadf, 0);
	assert_int_equal(vmon_get_stats(&vmon, &st), 0);
	if (st.fd_budget >= NOFILE / 2 || st.fds_held > st.fd_budget)
		fail_msg("after EMFILE: budget %d, %d held", st.fd_budget, st.fds_held);
	held = st.fds_held;
	for (int i = 0; i < hogs; i++)
		close(hog[i]);
	assert_true(count_open_fds() < NOFILE);

	/* the shortage is over: the budget grows back to the configured one, an eighth of it a pass */
	for (int pass = 0; pass < 10; pass++) {
		assert_true(vmon_sample(&vmon));
		check_children(&vmon, must_find(&vmon, getpid()));
	}
	assert_int_equal(vmon_get_stats(&vmon, &st), 0);
	if (st.fd_budget != NOFILE / 2 || st.fds_held <= held || st.fds_held > st.fd_budget)
		fail_msg("EMFILE is over: budget %d (configured %d), %d held (%d during the shortage)", st.fd_budget,
			 NOFILE / 2, st.fds_held, held);
	vmon_destroy(&vmon);
}

/*
 * EMFILE in the middle of a node: with a budget of 2, the first child
 * monitored holds its directory and its stat, and the caller takes every
 * other fd.  The next sample's first open (its schedstat, relative to that
 * held directory) fails: giving fds back must not close the directory the
 * open is relative to, nor anything else the node is using, and the node
 * must still be read, with one of its own held files given back.
 */
static void test_emfile_mid_node(void **state)
{
	vmon_attr_t attr;
	vmon_t vmon;
	vmon_proc_t *a;
	vmon_stats_t st;
	int hog[NOFILE], hogs = 0;

	vmon_attr_default(&attr);
	attr.proc_wants = VMON_WANT_PROC_STAT | VMON_WANT_PROC_VM | VMON_WANT_PROC_IO;
	attr.fd_budget = 2;
	attr.sampler = VMON_SAMPLER_PROC;	/* /proc's fds are the subject */
	assert_true(vmon_init_attr(&vmon, &attr));
	openat_ebadf = 0;
	a = vmon_proc_monitor(&vmon, kids[0], VMON_WANT_PROC_INHERIT, NULL, NULL);
	assert_non_null(a);
	assert_non_null(vmon_proc_monitor(&vmon, kids[1], VMON_WANT_PROC_INHERIT, NULL, NULL));
	assert_true(vmon_sample(&vmon));
	assert_int_equal(vmon_get_stats(&vmon, &st), 0);
	assert_int_equal(st.fds_held, 2);

	while (hogs < NOFILE && (hog[hogs] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		hogs++;
	assert_int_equal(errno, EMFILE);
	for (int pass = 0; pass < 2; pass++) {
		assert_true(vmon_sample(&vmon));
		for (int i = 0; i < VMON_STORE_PROC_NR; i++) {
			if (a->errors[i])
				fail_msg("pass %d: errors[%s] = %s", pass, vmon_proc_store_descs[i].name, strerror(a->errors[i]));
		}
		assert_false(a->is_stale);
		assert_int_equal(pstat(a)->ppid, getpid());
	}
	assert_int_equal(openat_ebadf, 0);
	assert_int_equal(vmon_get_stats(&vmon, &st), 0);
	assert_true(st.fd_budget < 2);
	for (int i = 0; i < hogs; i++)
		close(hog[i]);
	vmon_destroy(&vmon);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_explicit),
		cmocka_unit_test(test_proc_all),
		cmocka_unit_test(test_emfile),
		cmocka_unit_test(test_emfile_mid_node),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
