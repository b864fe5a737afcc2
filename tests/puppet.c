/* puppet.c: see puppet.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "puppet.h"
#include "testlib.h"

struct puppet_msg {
	char	op;
	long	arg;
	long	arg2;
	char	text[240];
	size_t	text_len;
};

/* every puppet and its descendants are in one process group, killed whole by puppets_cleanup() */
static pid_t group;

/* --- in the puppet --- */

static struct puppet_thread {
	pid_t		tid;
	pthread_t	thread;
	int		wake[2];	/* a byte on wake[1] ends it */
	char		name[16];
} threads[64];

static int ready[2];	/* a new thread writes its tid here */

static void report_tid(void)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);

	if (write(ready[1], &tid, sizeof(tid)) != sizeof(tid))
		_exit(120);
}

static void *thread_wait(void *arg)
{
	struct puppet_thread *t = arg;
	char c;

	prctl(PR_SET_NAME, t->name);
	report_tid();
	while (read(t->wake[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

struct io_job {
	int	trigger;
	size_t	bytes;
};

static void *thread_io(void *arg)
{
	struct io_job job = *(struct io_job *)arg;
	static char block[65536];
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	char c;

	free(arg);
	prctl(PR_SET_NAME, "io-thread");
	report_tid();
	while (read(job.trigger, &c, 1) < 0 && errno == EINTR)
		;
	while (job.bytes > 0) {
		size_t n = job.bytes < sizeof(block) ? job.bytes : sizeof(block);

		if (write(null, block, n) != (ssize_t)n)
			break;
		job.bytes -= n;
	}
	close(null);
	close(job.trigger);
	return NULL;
}

static pid_t await_tid(void)
{
	pid_t tid;

	if (read(ready[0], &tid, sizeof(tid)) != sizeof(tid))
		return -1;
	return tid;
}

/* keep only fd (as 3) and stdio: no other puppet's socket may outlive the test through us */
static int keep_only(int fd)
{
	if (fd != 3) {
		if (dup2(fd, 3) < 0)
			_exit(121);
		fd = 3;
	}
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	close_range(4, ~0U, 0);
	return fd;
}

static void reply(int sock, long value)
{
	if (send(sock, &value, sizeof(value), MSG_NOSIGNAL) < 0)
		_exit(0);
}

static void puppet_main(int sock) __attribute__((noreturn));

static void do_exec(int sock, const struct puppet_msg *m, int received_fd)
{
	char *argv[16 + 20000], *buf = NULL;
	size_t argc = 0;
	int extra = (int)m->arg;

	for (size_t off = 0; off < m->text_len && argc < 16; off += strlen(m->text + off) + 1)
		argv[argc++] = (char *)m->text + off;
	if (extra > 0) {
		if (extra > 20000 || !(buf = malloc((size_t)extra * 8)))
			goto fail;
		for (int i = 0; i < extra; i++) {
			snprintf(buf + i * 8, 8, "%07d", i);
			argv[argc++] = buf + i * 8;
		}
	}
	argv[argc] = NULL;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	execv(argv[0], argv);
fail:
	free(buf);
	reply(sock, -errno);
}

static void puppet_main(int sock)
{
	if (pipe2(ready, O_CLOEXEC) < 0)
		_exit(122);
	for (;;) {
		struct puppet_msg m;
		char control[CMSG_SPACE(sizeof(int))];
		struct iovec iov = { &m, sizeof(m) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
				     .msg_controllen = sizeof(control) };
		struct cmsghdr *cm;
		int fd = -1;
		ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0);	/* the test is gone, or done with us */
		cm = CMSG_FIRSTHDR(&mh);
		if (cm && cm->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(cm), sizeof(fd));

		switch (m.op) {
		case 'f': {	/* fork a puppet child on the socket we were sent */
			pid_t pid = fork();

			if (pid == 0) {
				if (m.arg)
					prctl(PR_SET_PDEATHSIG, SIGKILL);
				puppet_main(keep_only(fd));
			}
			close(fd);
			reply(sock, pid);
			break;
		}
		case 's': {	/* a sleeper child */
			pid_t pid = fork();

			if (pid == 0) {
				prctl(PR_SET_PDEATHSIG, SIGKILL);
				close_range(3, ~0U, 0);
				for (;;)
					pause();
			}
			reply(sock, pid);
			break;
		}
		case 'x':
			_exit((int)m.arg);
		case 'w': {
			int status = 0;

			while (waitpid((pid_t)m.arg, &status, 0) < 0 && errno == EINTR)
				;
			reply(sock, status);
			break;
		}
		case 't': {
			struct puppet_thread *t = NULL;

			for (size_t i = 0; i < sizeof(threads) / sizeof(threads[0]) && !t; i++) {
				if (!threads[i].tid)
					t = &threads[i];
			}
			if (!t || pipe2(t->wake, O_CLOEXEC) < 0) {
				reply(sock, -1);
				break;
			}
			memcpy(t->name, m.text, sizeof(t->name) - 1);
			t->name[sizeof(t->name) - 1] = '\0';
			if (pthread_create(&t->thread, NULL, thread_wait, t) != 0) {
				reply(sock, -1);
				break;
			}
			t->tid = await_tid();
			reply(sock, t->tid);
			break;
		}
		case 'T': {
			long r = -1;

			for (size_t i = 0; i < sizeof(threads) / sizeof(threads[0]); i++) {
				struct puppet_thread *t = &threads[i];

				if (t->tid != (pid_t)m.arg)
					continue;
				if (write(t->wake[1], "x", 1) == 1 && pthread_join(t->thread, NULL) == 0)
					r = 0;
				close(t->wake[0]);
				close(t->wake[1]);
				t->tid = 0;
			}
			reply(sock, r);
			break;
		}
		case 'j': {
			struct io_job *job = malloc(sizeof(*job));
			pthread_attr_t attr;
			pthread_t thread;

			if (!job) {
				reply(sock, -1);
				break;
			}
			job->trigger = fd;
			job->bytes = (size_t)m.arg;
			pthread_attr_init(&attr);
			pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
			if (pthread_create(&thread, &attr, thread_io, job) != 0) {
				reply(sock, -1);
				break;
			}
			reply(sock, await_tid());
			break;
		}
		case 'e':
			do_exec(sock, &m, fd);
			break;
		case 'r':
			reply(sock, prctl(PR_SET_CHILD_SUBREAPER, 1));
			break;
		case 'n':
			reply(sock, prctl(PR_SET_NAME, m.text));
			break;
		case 'u':
			reply(sock, (setgroups(0, NULL) == 0 && setresgid((gid_t)m.arg2, (gid_t)m.arg2, (gid_t)m.arg2) == 0 &&
				     setresuid((uid_t)m.arg, (uid_t)m.arg, (uid_t)m.arg) == 0 &&
				     prctl(PR_SET_DUMPABLE, 1) == 0) ? 0 : -errno);
			break;
		default:
			reply(sock, -1);
		}
	}
}

/* --- in the test --- */

static long command(puppet_t *p, char op, long arg, long arg2, const void *text, size_t text_len, int pass_fd)
{
	struct puppet_msg m;
	char control[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &m, sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	long value;
	ssize_t n;

	assert_true(p->sock >= 0);
	memset(&m, 0, sizeof(m));
	m.op = op;
	m.arg = arg;
	m.arg2 = arg2;
	assert_true(text_len <= sizeof(m.text));
	if (text_len)
		memcpy(m.text, text, text_len);
	m.text_len = text_len;
	if (pass_fd >= 0) {
		struct cmsghdr *cm;

		memset(control, 0, sizeof(control));
		mh.msg_control = control;
		mh.msg_controllen = sizeof(control);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &pass_fd, sizeof(int));
	}
	assert_int_equal(sendmsg(p->sock, &mh, MSG_NOSIGNAL), (ssize_t)sizeof(m));
	if (op == 'x')
		return 0;
	do
		n = recv(p->sock, &value, sizeof(value), 0);
	while (n < 0 && errno == EINTR);
	if (op == 'e' && n == 0)
		return 0;	/* the socket closed on exec */
	if (n != (ssize_t)sizeof(value))
		fail_msg("puppet %d did not answer '%c' (%zd, %s)", p->pid, op, n, strerror(errno));
	return value;
}

void puppet_spawn(puppet_t *p)
{
	int sv[2];
	pid_t pid;

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (setpgid(0, group) < 0)
			setpgid(0, 0);
		close(sv[0]);
		puppet_main(keep_only(sv[1]));
	}
	puppets_track(pid);
	close(sv[1]);
	p->pid = pid;
	p->sock = sv[0];
}

void puppet_fork(puppet_t *p, puppet_t *child, bool die_with_parent)
{
	int sv[2];
	long pid;

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	pid = command(p, 'f', die_with_parent, 0, NULL, 0, sv[1]);
	close(sv[1]);
	assert_true(pid > 0);
	child->pid = (pid_t)pid;
	child->sock = sv[0];
}

pid_t puppet_sleeper(puppet_t *p)
{
	long pid = command(p, 's', 0, 0, NULL, 0, -1);

	assert_true(pid > 0);
	return (pid_t)pid;
}

void puppet_exit(puppet_t *p, int code)
{
	command(p, 'x', code, 0, NULL, 0, -1);
	close(p->sock);
	p->sock = -1;
}

int puppet_reap(puppet_t *p, pid_t pid)
{
	return (int)command(p, 'w', pid, 0, NULL, 0, -1);
}

pid_t puppet_thread(puppet_t *p, const char *name)
{
	long tid = command(p, 't', 0, 0, name, strlen(name) + 1, -1);

	assert_true(tid > 0);
	return (pid_t)tid;
}

void puppet_thread_end(puppet_t *p, pid_t tid)
{
	assert_int_equal(command(p, 'T', tid, 0, NULL, 0, -1), 0);
}

pid_t puppet_io_thread(puppet_t *p, int trigger_fd, size_t bytes)
{
	long tid = command(p, 'j', (long)bytes, 0, NULL, 0, trigger_fd);

	assert_true(tid > 0);
	return (pid_t)tid;
}

void puppet_exec(puppet_t *p, const char *const *argv, int extra_args)
{
	char text[240];
	size_t len = 0;

	for (int i = 0; argv[i]; i++) {
		size_t n = strlen(argv[i]) + 1;

		assert_true(len + n <= sizeof(text));
		memcpy(text + len, argv[i], n);
		len += n;
	}
	assert_int_equal(command(p, 'e', extra_args, 0, text, len, -1), 0);
	close(p->sock);
	p->sock = -1;
}

void puppet_subreaper(puppet_t *p)
{
	assert_int_equal(command(p, 'r', 0, 0, NULL, 0, -1), 0);
}

void puppet_name(puppet_t *p, const char *comm)
{
	assert_int_equal(command(p, 'n', 0, 0, comm, strlen(comm) + 1, -1), 0);
}

void puppet_setuid(puppet_t *p, uid_t uid, gid_t gid)
{
	assert_int_equal(command(p, 'u', (long)uid, (long)gid, NULL, 0, -1), 0);
}

/*
 * Into the group, from both sides of the fork (whichever runs first).  A
 * group whose members all died is no group to join: the child leads a new
 * one.
 */
void puppets_track(pid_t pid)
{
	if (group && setpgid(pid, group) == 0)
		return;
	group = pid;
	setpgid(pid, pid);
}

void puppets_cleanup(void)
{
	int status;

	if (group) {
		kill(-group, SIGKILL);
		/* the test's own children in the group; the others go to init or a subreaper */
		while (waitpid(-group, &status, 0) > 0 || errno == EINTR)
			;
	}
	group = 0;
	while (waitpid(-1, &status, WNOHANG) > 0)
		;
}
