/*
 * idle.c: thousands of idle processes for a benchmark, and their end.
 *
 * Every child joins one process group, so one kill() ends them all; each sets
 * PR_SET_PDEATHSIG first, so that they die with us even if we are SIGKILLed
 * (and checks that we did not die before it could set it).  The group is
 * registered with bench_atexit_kill() for ^C and early exits.
 *
 * A child writes one byte on the wake pipe when it has set itself up, and one
 * byte each time it handles SIGUSR1: reading nr bytes back is knowing that
 * every child is there, or that every child has run since the signal.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

static int child_wake_wr = -1;

static void child_on_wake(int sig)
{
	(void)sig;
	if (write(child_wake_wr, "w", 1) < 0)
		_exit(3);
}

static void __attribute__((noreturn)) child_main(pid_t parent, pid_t pgid, int wake_wr)
{
	struct sigaction sa;
	sigset_t none;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(1);
	setpgid(0, pgid);
	/* nothing of the parent's but the wake pipe: not its stdout (make's pipe), not its /proc fds */
	if (wake_wr > 0)
		close_range(0, (unsigned)wake_wr - 1, 0);
	close_range((unsigned)wake_wr + 1, ~0u, 0);
	child_wake_wr = wake_wr;
	memset(&sa, 0, sizeof(sa));
	/* not the parent's handlers: its cleanup would kill the whole group */
	sa.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++) {
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &sa, NULL);
	}
	sa.sa_handler = child_on_wake;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (write(wake_wr, "r", 1) < 0)
		_exit(2);
	for (;;)
		pause();
}

void bench_idle_init(bench_idle_t *idle)
{
	memset(idle, 0, sizeof(*idle));
	idle->wake_rd = idle->wake_wr = -1;
}

/* read n bytes of the wake pipe: n children checked in */
static int collect(bench_idle_t *idle, int n)
{
	char buf[4096];

	while (n > 0) {
		ssize_t r = read(idle->wake_rd, buf, (size_t)(n < (int)sizeof(buf) ? n : (int)sizeof(buf)));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			fprintf(stderr, "bench: idle children: wake pipe: %s\n", r < 0 ? strerror(errno) : "closed");
			return -1;
		}
		n -= (int)r;
	}
	return 0;
}

int bench_idle_spawn(bench_idle_t *idle, int nr)
{
	pid_t self = getpid();
	int started = 0;

	if (nr > BENCH_IDLE_MAX) {
		fprintf(stderr, "bench: %d idle processes asked for; at most %d on this shared machine\n",
			nr, BENCH_IDLE_MAX);
		return -1;
	}
	if (idle->wake_rd < 0) {
		int p[2];

		if (pipe2(p, O_CLOEXEC) < 0) {
			perror("bench: pipe");
			return -1;
		}
		idle->wake_rd = p[0];
		idle->wake_wr = p[1];
	}
	while (idle->nr < nr) {
		pid_t pid = fork();

		if (pid < 0) {
			fprintf(stderr, "bench: fork after %d idle processes: %s\n", idle->nr, strerror(errno));
			collect(idle, started);
			return -1;
		}
		if (pid == 0)
			child_main(self, idle->pgid, idle->wake_wr);
		/* also from here, so the group exists before the next fork whichever runs first */
		setpgid(pid, idle->pgid ? idle->pgid : pid);
		if (!idle->pgid) {
			idle->pgid = pid;
			bench_atexit_kill(-pid);
		}
		idle->nr++;
		started++;
	}
	return collect(idle, started);
}

int bench_idle_wake(bench_idle_t *idle)
{
	if (!idle->pgid)
		return 0;
	if (kill(-idle->pgid, SIGUSR1) < 0) {
		perror("bench: waking the idle processes");
		return -1;
	}
	return collect(idle, idle->nr);
}

void bench_idle_kill(bench_idle_t *idle)
{
	if (idle->pgid) {
		kill(-idle->pgid, SIGKILL);
		while (idle->nr > 0) {
			if (waitpid(-idle->pgid, NULL, 0) < 0) {
				if (errno == EINTR)
					continue;
				break;
			}
			idle->nr--;
		}
		bench_atexit_forget(-idle->pgid);
	}
	if (idle->wake_rd >= 0)
		close(idle->wake_rd);
	if (idle->wake_wr >= 0)
		close(idle->wake_wr);
	bench_idle_init(idle);
}

int bench_count_procs(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int nr = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] >= '1' && de->d_name[0] <= '9')
			nr++;
	}
	closedir(d);
	return nr;
}
