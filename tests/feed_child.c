/*
 * feed_child.c: the program the event feed tests exec, so that a child
 * has a known name, known arguments and a known exit status, and so that
 * the thread cases run outside the (instrumented) test process.
 *
 *	feed_child exit CODE [TAG]	exit with CODE at once
 *	feed_child wait CODE [TAG]	exit with CODE when stdin reaches EOF
 *	feed_child thread CODE		a thread starts and ends; then as wait
 *	feed_child leader CODE		a thread waits for stdin's EOF and exits
 *					the process with CODE; the leader exits
 *					first (pthread_exit)
 *	feed_child leader-last CODE	the same, but the thread leaves by exit(2)
 *					with CODE, not exit_group(2): the last
 *					thread's status is the process's
 *	feed_child grow CODE		when stdin reaches EOF, touch 32 MiB,
 *					then exit with CODE: a peak resident set
 *					no read before its exit saw
 *	feed_child exec CODE		a thread other than the leader execs
 *					"feed_child wait CODE exec-from-thread"
 *	feed_child storm N [ARGLEN]	N lives one after the other, life i
 *					"feed_child exit i%200 kkk..." (ARGLEN
 *					bytes of argument); each one's pid on a
 *					line of stdout once it is reaped, then
 *					"end" (a storm at this program's speed,
 *					not at that of a sanitized test)
 *
 * The thread modes write one byte to stdout when the test may look.  It is
 * built without sanitizers: the tests exec it thousands of times.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *code_arg;
static char self_path[4096];

static void wait_eof(void)
{
	char buf[64];

	while (read(0, buf, sizeof(buf)) > 0)
		;
}

static void ready(void)
{
	if (write(1, "r", 1) != 1)
		_exit(124);
}

static void *thread_returns(void *arg)
{
	return arg;
}

static void *thread_ends_process(void *arg)
{
	(void)arg;
	wait_eof();
	exit(atoi(code_arg));
}

static void *thread_leaves_last(void *arg)
{
	(void)arg;
	wait_eof();
	/* exit(2) itself: pthread_exit() in the last thread would call exit(0) */
	syscall(SYS_exit, atoi(code_arg));
	return NULL;
}

static void *thread_execs(void *arg)
{
	(void)arg;
	/* by its real path: the new comm is the path's last component */
	execl(self_path, "feed_child", "wait", code_arg, "exec-from-thread", (char *)NULL);
	_exit(127);
}

static int storm(int n, size_t arglen)
{
	char *arg = malloc(arglen + 1), code[16];

	if (!arg || readlink("/proc/self/exe", self_path, sizeof(self_path) - 1) <= 0)
		return 126;
	memset(arg, 'k', arglen);
	arg[arglen] = '\0';
	for (int i = 0; i < n; i++) {
		int status;
		pid_t pid;

		snprintf(code, sizeof(code), "%d", i % 200);
		pid = fork();
		if (pid < 0)
			return 126;
		if (pid == 0) {
			execl(self_path, "feed_child", "exit", code, arg, (char *)NULL);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) != pid)
			return 126;
		printf("%d\n", (int)pid);
	}
	printf("end\n");
	return fflush(stdout) == 0 ? 0 : 126;
}

/* 32 MiB made resident, a write to each page */
static int grow(void)
{
	const size_t size = 32u << 20;
	volatile char *p = malloc(size);

	if (!p)
		return -1;
	for (size_t i = 0; i < size; i += 4096)
		p[i] = 1;
	return p[size - 4096] == 1 ? 0 : -1;
}

int main(int argc, char **argv)
{
	pthread_t th;

	if (argc < 3)
		return 125;
	code_arg = argv[2];
	if (strcmp(argv[1], "exit") == 0)
		return atoi(code_arg);
	if (strcmp(argv[1], "storm") == 0)
		return storm(atoi(code_arg), argc > 3 ? (size_t)atoi(argv[3]) : 0);
	if (strcmp(argv[1], "wait") == 0) {
		wait_eof();
		return atoi(code_arg);
	}
	if (strcmp(argv[1], "grow") == 0) {
		ready();
		wait_eof();
		return grow() == 0 ? atoi(code_arg) : 126;
	}
	if (strcmp(argv[1], "thread") == 0) {
		if (pthread_create(&th, NULL, thread_returns, NULL) != 0 || pthread_join(th, NULL) != 0)
			return 126;
		ready();
		wait_eof();
		return atoi(code_arg);
	}
	if (strcmp(argv[1], "leader") == 0 || strcmp(argv[1], "leader-last") == 0) {
		if (pthread_create(&th, NULL, strcmp(argv[1], "leader") == 0 ? thread_ends_process : thread_leaves_last,
				   NULL) != 0)
			return 126;
		ready();
		pthread_exit(NULL);
	}
	if (strcmp(argv[1], "exec") == 0) {
		ssize_t n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);

		if (n <= 0)
			return 126;
		self_path[n] = '\0';
		if (pthread_create(&th, NULL, thread_execs, NULL) != 0)
			return 126;
		for (;;)
			pause();
	}
	return 125;
}
