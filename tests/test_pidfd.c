/*
 * test_pidfd.c: vmon_pidfd_open() on children the test spawns: a pidfd for
 * the process of a given (pid, start time), and ESRCH for any other: a
 * wrong start, a process reaped, and (as root) the pid taken by a new
 * process, which a signal through the old identity must not reach.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD	O_EXCL	/* linux/pidfd.h, Linux 6.9 */
#endif

static int send_signal(int pidfd, int sig)
{
	return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

static void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* valgrind (3.19) does not know pidfd_open(), nor a kernel before 5.3 */
static bool have_pidfd(void)
{
	int fd = (int)syscall(SYS_pidfd_open, getpid(), 0);

	if (fd >= 0)
		close(fd);
	return fd >= 0 || errno != ENOSYS;
}

/* a child that sleeps until killed, and its start time */
static pid_t sleeper(unsigned long long *start)
{
	pid_t child = spawn_sleeper();

	assert_true(wait_sleeping(child, 5000));
	*start = proc_start(child);
	assert_true(*start > 0);
	return child;
}

static void test_own_process(void **state)
{
	unsigned long long start;
	pid_t child = sleeper(&start);
	int fd, status;

	(void)state;
	fd = vmon_pidfd_open(child, start, 0);
	assert_true(fd >= 0);
	/* the pidfd is the child's: a signal through it reaches it */
	assert_int_equal(send_signal(fd, SIGUSR1), 0);
	status = reap(child, 0);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGUSR1);
	/* gone: a signal through the pidfd finds nothing, and no new pidfd is had */
	assert_int_equal(send_signal(fd, 0), -1);
	assert_int_equal(errno, ESRCH);
	close(fd);
	errno = 0;
	assert_int_equal(vmon_pidfd_open(child, start, 0), -1);
	assert_int_equal(errno, ESRCH);
}

static void test_wrong_start(void **state)
{
	unsigned long long start;
	pid_t child = sleeper(&start);

	(void)state;
	errno = 0;
	assert_int_equal(vmon_pidfd_open(child, start + 1, 0), -1);
	assert_int_equal(errno, ESRCH);
	assert_int_equal(vmon_pidfd_open(child, start - 1, 0), -1);
	assert_int_equal(errno, ESRCH);
	/* nothing was done to it */
	assert_int_equal(kill(child, 0), 0);
	assert_int_equal(reap(child, SIGKILL) & 0x7f, SIGKILL);
	/* bad arguments */
	assert_int_equal(vmon_pidfd_open(0, 0, 0), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(vmon_pidfd_open(-5, 0, 0), -1);
	assert_int_equal(errno, EINVAL);
}

/* a zombie is still the process: its pid is not free until it is reaped */
static void test_zombie(void **state)
{
	unsigned long long start;
	pid_t child = sleeper(&start);
	struct pollfd p;
	int fd;

	(void)state;
	kill(child, SIGKILL);
	for (int i = 0; i < 500 && proc_state(child) != 'Z'; i++)
		msleep(10);
	assert_int_equal(proc_state(child), 'Z');
	fd = vmon_pidfd_open(child, start, 0);
	assert_true(fd >= 0);
	/* it exited: the pidfd says so */
	p.fd = fd;
	p.events = POLLIN;
	assert_int_equal(poll(&p, 1, 0), 1);
	close(fd);
	reap(child, 0);
}

static void *thread_sleep(void *arg)
{
	int *tid = arg;

	__atomic_store_n(tid, (int)gettid(), __ATOMIC_SEQ_CST);
	for (;;)
		pause();
	return NULL;
}

/* a thread, by its tid and start time, with PIDFD_THREAD (what a renice of one thread row needs) */
static void test_thread(void **state)
{
	pthread_t thread;
	int tid = 0, fd;

	(void)state;
	assert_int_equal(pthread_create(&thread, NULL, thread_sleep, &tid), 0);
	while (!__atomic_load_n(&tid, __ATOMIC_SEQ_CST))
		msleep(1);
	fd = vmon_pidfd_open(tid, proc_start(tid), PIDFD_THREAD);
	if (fd < 0 && errno == EINVAL) {
		pthread_cancel(thread);
		pthread_join(thread, NULL);
		SKIP_IF(true, "the kernel has no PIDFD_THREAD (Linux 6.9)");
	}
	assert_true(fd >= 0);
	assert_int_equal(send_signal(fd, 0), 0);
	close(fd);
	assert_int_equal(vmon_pidfd_open(tid, proc_start(tid) + 1, PIDFD_THREAD), -1);
	assert_int_equal(errno, ESRCH);
	pthread_cancel(thread);
	pthread_join(thread, NULL);
}

/*
 * The pid reused: the old process reaped, a new one made at its pid.  The
 * old identity gets no pidfd, and the new process is untouched (a kill(pid)
 * from a stale sample would have killed it).
 */
static void test_reused_pid(void **state)
{
	unsigned long long old_start;
	pid_t old, again;
	int fd;

	(void)state;
	SKIP_IF(!is_root(), "making a process at a chosen pid (clone3 set_tid, or ns_last_pid) needs CAP_SYS_ADMIN");
	old = sleeper(&old_start);
	reap(old, SIGKILL);
	msleep(30);	/* a later clock tick: the new process's start time differs */
	again = spawn_sleeper_at(old);
	if (again < 0)
		SKIP_IF(true, "cannot make a process at pid %d again: %s", old, strerror(errno));
	assert_int_equal(again, old);
	assert_true(wait_sleeping(again, 5000));
	assert_true(proc_start(again) != old_start);
	errno = 0;
	assert_int_equal(vmon_pidfd_open(old, old_start, 0), -1);
	assert_int_equal(errno, ESRCH);
	/* the new one is had by its own identity */
	fd = vmon_pidfd_open(again, proc_start(again), 0);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(kill(again, 0), 0);
	reap(again, SIGKILL);
}

/* no file descriptor is left behind, whatever the outcome */
static void test_no_leak(void **state)
{
	unsigned long long start;
	pid_t child = sleeper(&start);
	int before, fd;

	(void)state;
	before = count_open_fds();
	for (int i = 0; i < 100; i++) {
		fd = vmon_pidfd_open(child, start, 0);
		assert_true(fd >= 0);
		close(fd);
		assert_int_equal(vmon_pidfd_open(child, start + 1, 0), -1);
	}
	reap(child, SIGKILL);
	for (int i = 0; i < 10; i++)
		assert_int_equal(vmon_pidfd_open(child, start, 0), -1);
	assert_int_equal(count_open_fds(), before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_process),
		cmocka_unit_test(test_wrong_start),
		cmocka_unit_test(test_zombie),
		cmocka_unit_test(test_thread),
		cmocka_unit_test(test_reused_pid),
		cmocka_unit_test(test_no_leak),
	};

	if (!have_pidfd()) {
		printf("SKIP: no pidfd_open() here (valgrind 3.19 does not know it; Linux before 5.3 has none)\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
