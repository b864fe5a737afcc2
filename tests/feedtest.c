/* feedtest.c: see feedtest.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "feedtest.h"

vmon_feed_backend_t feedtest_backend_id(const char *name)
{
	for (int i = 0; i < VMON_FEED_BACKEND_NR; i++) {
		if (strcmp(vmon_feed_backend_name((vmon_feed_backend_t)i), name) == 0)
			return (vmon_feed_backend_t)i;
	}
	fail_msg("no backend named %s", name);
	return VMON_FEED_NONE;
}

bool feedtest_open(vmon_t *vmon, const char *backend, vmon_flags_t flags, vmon_proc_wants_t wants,
		   size_t buffer_bytes, char *why, size_t why_size)
{
	vmon_feed_stats_t st;
	vmon_attr_t attr;

	vmon_attr_default(&attr);
	attr.flags = flags;
	attr.proc_wants = wants;
	attr.feed = backend;
	attr.feed_buffer_bytes = buffer_bytes;
	assert_true(vmon_init_attr(vmon, &attr));
	assert_int_equal(vmon_feed_get_stats(vmon, &st), 0);
	if (st.backend == feedtest_backend_id(backend))
		return true;
	snprintf(why, why_size, "%s", vmon_feed_reason(vmon));
	vmon_destroy(vmon);
	return false;
}

pid_t feedtest_spawn(const char *mode, int code, const char *tag, int stdin_fd, int stdout_fd)
{
	char code_s[16];
	pid_t pid;

	snprintf(code_s, sizeof(code_s), "%d", code);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int in = stdin_fd >= 0 ? stdin_fd : open("/dev/null", O_RDONLY);

		/* dup2() clears O_CLOEXEC on the copies */
		if (in < 0 || dup2(in, 0) < 0 || (stdout_fd >= 0 && dup2(stdout_fd, 1) < 0))
			_exit(126);
		execl(FEED_CHILD, FEED_CHILD, mode, code_s, tag, (char *)NULL);
		_exit(127);
	}
	return pid;
}

ssize_t feedtest_read_proc(pid_t pid, const char *name, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

unsigned long long feedtest_start_of(pid_t pid)
{
	char buf[1024];
	const char *p;

	if (feedtest_read_proc(pid, "stat", buf, sizeof(buf)) <= 0)
		return 0;
	p = strrchr(buf, ')');
	/* fields 3..22 follow the comm: the start time is the 20th of them */
	for (int field = 3; p && field <= 22; field++)
		p = strchr(p + 1, ' ');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

pid_t feedtest_reap_any(unsigned long long *start, int *status)
{
	siginfo_t info;
	pid_t pid;

	memset(&info, 0, sizeof(info));
	while (waitid(P_ALL, 0, &info, WEXITED | WNOWAIT) < 0) {
		if (errno != EINTR)
			return -1;
	}
	pid = info.si_pid;
	*start = feedtest_start_of(pid);
	while (waitpid(pid, status, 0) < 0) {
		if (errno != EINTR)
			return -1;
	}
	return pid;
}

vmon_proc_t *feedtest_child_node(vmon_t *vmon, pid_t pid)
{
	vmon_proc_t *self = vmon_proc_lookup(vmon, getpid()), *child;

	if (!self)
		return NULL;
	list_for_each_entry(child, &self->children, siblings) {
		if (child->pid == pid)
			return child;
	}
	return NULL;
}

vmon_proc_stat_t *feedtest_stat(vmon_proc_t *proc)
{
	return proc->stores[VMON_STORE_PROC_STAT];
}

int feedtest_scale(int n)
{
	const char *v = getenv("VMON_UNDER_VALGRIND");

	return v && strcmp(v, "1") == 0 ? n / 10 : n;
}

int feedtest_teardown(void **state)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	int status;

	(void)state;
	/* main() made the test its own process group: what is left in it is ours */
	if (getpgrp() == getpid()) {
		sigaction(SIGTERM, &ign, &old);
		kill(0, SIGTERM);
		sigaction(SIGTERM, &old, NULL);
	}
	for (int i = 0; i < 200; i++) {
		pid_t pid = waitpid(-1, &status, WNOHANG);

		if (pid < 0)
			break;	/* ECHILD: none left */
		if (pid == 0)
			usleep(10000);
	}
	return 0;
}
