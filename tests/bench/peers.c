/*
 * peers.c: the programs a benchmark compares with or counts through: top and
 * htop (the peers), strace (the syscall counter).
 *
 * Peers are measured by their own CPU time, never by wall time, and as the
 * marginal cost of a refresh: top runs once with one iteration and once with
 * 1 + N, and the difference is N refreshes; htop, which has no batch mode,
 * runs in a detached tmux session of our own while we watch its CPU time
 * (/proc/PID/schedstat, in ns) move in bursts, one burst per refresh.
 *
 * Nothing here goes through a shell: every argument is ours (paths under
 * our temporary directory) and every program is run with execv().
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

const char *bench_which(const char *prog, char *path, size_t size)
{
	const char *env = getenv("PATH");
	char dirs[4096];

	/* sbin too: a root tool may live there while PATH is a user's */
	snprintf(dirs, sizeof(dirs), "%s:/usr/sbin:/sbin", env && *env ? env : "/usr/bin:/bin");
	for (char *save = NULL, *dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		if ((size_t)snprintf(path, size, "%s/%s", dir, prog) < size && access(path, X_OK) == 0)
			return path;
	}
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void bench_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/*
 * fork + execv argv with stdio on /dev/null; env entries "NAME=value" are
 * set in the child.  The child dies with us (PR_SET_PDEATHSIG) and is on the
 * kill list until reaped with wait_child().
 */
static pid_t spawn(char *const argv[], char *const env[])
{
	pid_t parent = getpid(), pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct sigaction sa;
		int null = open("/dev/null", O_RDWR);

		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(126);
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		for (int sig = 1; sig < NSIG; sig++) {
			if (sig != SIGKILL && sig != SIGSTOP)
				sigaction(sig, &sa, NULL);
		}
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		close_range(3, ~0u, 0);
		for (int i = 0; env && env[i]; i++)
			putenv(env[i]);
		execv(argv[0], argv);
		_exit(127);
	}
	bench_atexit_kill(pid);
	return pid;
}

static int wait_child(pid_t pid, struct rusage *ru)
{
	int status;

	while (wait4(pid, &status, 0, ru) < 0) {
		if (errno != EINTR) {
			bench_atexit_forget(pid);
			return -1;
		}
	}
	bench_atexit_forget(pid);
	return status;
}

/* --- syscalls, counted by strace --- */

static const char marker[] = "vmon-bench-mark";

int bench_syscalls_start(bench_syscalls_t *sc, const char **why)
{
	char strace[256], self[32];
	FILE *status;
	double give_up;

	memset(sc, 0, sizeof(*sc));
	if (!bench_which("strace", strace, sizeof(strace))) {
		*why = "strace is not installed (apt-get install strace)";
		return -1;
	}
	snprintf(sc->log, sizeof(sc->log), "%s/strace.log", bench_tmpdir());
	snprintf(self, sizeof(self), "%d", (int)getpid());
	/* Yama may let only an ancestor trace us: allow the strace we start (EINVAL without Yama) */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	{
		char *argv[] = { strace, "-qq", "-e", "signal=none", "-o", sc->log, "-p", self, NULL };

		sc->strace_pid = spawn(argv, NULL);
	}
	if (sc->strace_pid < 0) {
		*why = "cannot start strace";
		return -1;
	}
	/* attached when our TracerPid says so */
	for (give_up = now_s() + 10; now_s() < give_up; bench_sleep_ms(10)) {
		char line[256];
		int tracer = 0;

		if (waitpid(sc->strace_pid, NULL, WNOHANG) == sc->strace_pid) {
			bench_atexit_forget(sc->strace_pid);
			sc->strace_pid = 0;
			*why = "strace could not attach (ptrace not permitted?)";
			return -1;
		}
		status = fopen("/proc/self/status", "re");
		while (status && fgets(line, sizeof(line), status)) {
			if (sscanf(line, "TracerPid: %d", &tracer) == 1)
				break;
		}
		if (status)
			fclose(status);
		if (tracer == sc->strace_pid) {
			bench_syscalls_mark(sc);
			return 0;
		}
	}
	kill(sc->strace_pid, SIGKILL);
	wait_child(sc->strace_pid, NULL);
	sc->strace_pid = 0;
	*why = "strace did not attach within 10 s";
	return -1;
}

void bench_syscalls_mark(bench_syscalls_t *sc)
{
	/* a failing write that strace logs with its argument: the segment boundary */
	if (write(-1, marker, sizeof(marker) - 1) < 0)
		sc->segments++;
}

static int count_cmp(const void *a, const void *b)
{
	const bench_syscall_count_t *x = a, *y = b;

	return (x->count < y->count) - (x->count > y->count);
}

static void segment_add(bench_syscall_segment_t *seg, const char *name, size_t len)
{
	int i;

	seg->total++;
	if (len >= sizeof(seg->names[0].name))
		len = sizeof(seg->names[0].name) - 1;
	for (i = 0; i < seg->nr; i++) {
		if (strncmp(seg->names[i].name, name, len) == 0 && seg->names[i].name[len] == '\0')
			break;
	}
	if (i == seg->nr) {
		if (seg->nr == BENCH_SYSCALL_NAMES) {
			i = BENCH_SYSCALL_NAMES - 1;	/* the last slot becomes "other" */
			snprintf(seg->names[i].name, sizeof(seg->names[i].name), "other");
		} else {
			memcpy(seg->names[i].name, name, len);
			seg->names[i].name[len] = '\0';
			seg->nr++;
		}
	}
	seg->names[i].count++;
}

int bench_syscalls_stop(bench_syscalls_t *sc, bench_syscall_segment_t *seg, int seg_nr)
{
	char line[4096];
	FILE *log;
	int cur = -1;

	if (!sc->strace_pid)
		return -1;
	bench_syscalls_mark(sc);
	kill(sc->strace_pid, SIGINT);	/* strace detaches and writes out what it has */
	wait_child(sc->strace_pid, NULL);
	sc->strace_pid = 0;
	prctl(PR_SET_PTRACER, 0, 0, 0, 0);

	memset(seg, 0, sizeof(*seg) * (size_t)seg_nr);
	log = fopen(sc->log, "re");
	if (!log)
		return -1;
	while (fgets(line, sizeof(line), log)) {
		size_t len = strcspn(line, "(");

		if (strncmp(line, "write(-1, \"", 11) == 0 && strncmp(line + 11, marker, sizeof(marker) - 1) == 0) {
			cur++;
			continue;
		}
		/* signals, exits, and the second half of a call strace had to split */
		if (line[0] == '-' || line[0] == '+' || line[0] == '<' || !line[len] || len == 0)
			continue;
		if (cur >= 0 && cur < seg_nr)
			segment_add(&seg[cur], line, len);
	}
	fclose(log);
	unlink(sc->log);
	for (int i = 0; i < seg_nr; i++)
		qsort(seg[i].names, (size_t)seg[i].nr, sizeof(seg[i].names[0]), count_cmp);
	return cur >= seg_nr ? 0 : -1;
}

/* --- top --- */

static const char *peer_home(void)
{
	static char home[200];

	/* an empty home: the peers run with their default settings, not someone's rc file */
	snprintf(home, sizeof(home), "%s/home", bench_tmpdir());
	mkdir(home, 0700);
	return home;
}

static int run_top(const char *top, int iterations, uint64_t *cpu_us)
{
	char n[16], home[256];
	char *argv[] = { (char *)top, "-b", "-d", "0.2", "-w", "512", "-n", n, NULL };
	char *env[] = { home, "TERM=dumb", NULL };
	struct rusage ru;
	pid_t pid;
	int status;

	snprintf(n, sizeof(n), "%d", iterations);
	snprintf(home, sizeof(home), "HOME=%s", peer_home());
	pid = spawn(argv, env);
	if (pid < 0)
		return -1;
	status = wait_child(pid, &ru);
	if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -1;
	*cpu_us = (uint64_t)ru.ru_utime.tv_sec * 1000000u + (uint64_t)ru.ru_utime.tv_usec +
		  (uint64_t)ru.ru_stime.tv_sec * 1000000u + (uint64_t)ru.ru_stime.tv_usec;
	return 0;
}

int bench_peer_top(int refreshes, double *cpu_us_per_refresh, int *procs, const char **why)
{
	char top[256];
	uint64_t one, many;

	if (!bench_which("top", top, sizeof(top))) {
		*why = "top is not installed (apt-get install procps)";
		return -1;
	}
	*procs = bench_count_procs();
	if (run_top(top, 1, &one) < 0 || run_top(top, 1 + refreshes, &many) < 0) {
		*why = "top -b failed";
		return -1;
	}
	*cpu_us_per_refresh = many > one ? (double)(many - one) / refreshes : 0;
	return 0;
}

/* --- htop, in tmux, under a watcher --- */

/*
 * bench --watch PARENT PIDFILE PROGRAM ARGS...: runs in the tmux pane.  It
 * starts PROGRAM, writes its pid to PIDFILE, and kills it as soon as PARENT
 * (the benchmark) is gone, however that happened; when PROGRAM ends the
 * pane, the session and our private tmux server end with it.
 */
int bench_watch_main(int argc, char **argv)
{
	struct pollfd pfd[2];
	pid_t parent, child;
	char tmp[300];
	FILE *f;

	if (argc < 4)
		return 2;
	parent = (pid_t)atoi(argv[1]);
	pfd[0].fd = pidfd_open(parent, 0);
	if (pfd[0].fd < 0)
		return 1;
	child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execv(argv[3], argv + 3);
		_exit(127);
	}
	snprintf(tmp, sizeof(tmp), "%s.new", argv[2]);
	f = fopen(tmp, "we");
	if (f) {
		fprintf(f, "%d\n", (int)child);
		fclose(f);
		rename(tmp, argv[2]);
	}
	pfd[1].fd = pidfd_open(child, 0);
	pfd[0].events = pfd[1].events = POLLIN;
	for (;;) {
		if (poll(pfd, pfd[1].fd >= 0 ? 2 : 1, pfd[1].fd >= 0 ? -1 : 100) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents)
			break;
		if ((pfd[1].fd >= 0 && pfd[1].revents) || waitpid(child, NULL, WNOHANG) == child)
			return 0;
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	return 0;
}

/* htop's CPU time in ns and whether it is sleeping, from its /proc files */
static int task_cpu(pid_t pid, uint64_t *ns, bool *sleeping)
{
	char path[64], buf[512], *p;
	unsigned long long v;
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0 || sscanf(buf, "%llu", &v) != 1)
		return -1;
	*ns = v;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return -1;
	buf[r] = '\0';
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -1;
	*sleeping = p[2] == 'S';
	return 0;
}

/* a burst is over when htop has slept without running for this long */
#define QUIET_NS 150000000ull

int bench_peer_htop(int refreshes, double *cpu_us_per_refresh, int *procs, const char **why)
{
	char htop[256], tmux[256], self[256], parent[16], sock[256], pidfile[256], home[300];
	uint64_t cpu, last_cpu = 0, start_cpu = 0, burst_cpu = 0, max_burst = 0;
	uint64_t bursts_cpu[64];
	int bursts = 0, counted = 0, ret = -1;
	double last_change, give_up;
	bool sleeping, in_burst = false, started = false;
	pid_t htop_pid = 0, client;
	ssize_t n;
	FILE *f;

	if (!bench_which("htop", htop, sizeof(htop))) {
		*why = "htop is not installed (apt-get install htop)";
		return -1;
	}
	if (!bench_which("tmux", tmux, sizeof(tmux))) {
		*why = "tmux is not installed (apt-get install tmux): htop needs a terminal";
		return -1;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		*why = "cannot find this program's path for the watcher";
		return -1;
	}
	self[n] = '\0';
	if (refreshes > (int)(sizeof(bursts_cpu) / sizeof(bursts_cpu[0])) - 2)
		refreshes = (int)(sizeof(bursts_cpu) / sizeof(bursts_cpu[0])) - 2;
	snprintf(parent, sizeof(parent), "%d", (int)getpid());
	snprintf(sock, sizeof(sock), "%s/tmux.sock", bench_tmpdir());
	snprintf(pidfile, sizeof(pidfile), "%s/htop.pid", bench_tmpdir());
	snprintf(home, sizeof(home), "HOME=%s", peer_home());
	unlink(pidfile);
	{
		/* htop -d 10: a refresh every second, so the bursts stand well apart */
		char *argv[] = { tmux, "-S", sock, "-f", "/dev/null", "new-session", "-d", "-x", "200", "-y", "50",
				 "-e", home, self, "--watch", parent, pidfile, htop, "-d", "10", NULL };

		client = spawn(argv, NULL);
		if (client < 0 || wait_child(client, NULL) != 0) {
			*why = "tmux new-session failed";
			goto out;
		}
	}
	for (give_up = now_s() + 10; !htop_pid && now_s() < give_up; bench_sleep_ms(20)) {
		f = fopen(pidfile, "re");
		if (f) {
			int v;

			if (fscanf(f, "%d", &v) == 1)
				htop_pid = v;
			fclose(f);
		}
	}
	if (!htop_pid) {
		*why = "htop did not start in tmux";
		goto out;
	}
	bench_atexit_kill(htop_pid);
	*procs = bench_count_procs();

	/*
	 * Watch its CPU time every 20 ms.  The first burst (start-up and the first
	 * scans) is left out: counting starts at the first quiet spell after it.
	 */
	last_change = now_s();
	give_up = now_s() + 15 + refreshes * 5.0;
	while (now_s() < give_up) {
		if (task_cpu(htop_pid, &cpu, &sleeping) < 0) {
			*why = "htop exited";
			goto out;
		}
		if (cpu != last_cpu) {
			if (!in_burst)
				burst_cpu = last_cpu;
			in_burst = true;
			last_cpu = cpu;
			last_change = now_s();
		} else if (in_burst && sleeping && (now_s() - last_change) * 1e9 >= QUIET_NS) {
			in_burst = false;
			if (!started) {
				started = true;
				start_cpu = cpu;
			} else {
				bursts_cpu[bursts] = cpu - burst_cpu;
				if (bursts_cpu[bursts] > max_burst)
					max_burst = bursts_cpu[bursts];
				if (++bursts == refreshes)
					break;
			}
		}
		bench_sleep_ms(20);
	}
	if (bursts < refreshes) {
		*why = "htop did not refresh in time";
		goto out;
	}
	/* a wake-up that did not scan (a resize, a stray key) is not a refresh, but its CPU counts */
	for (int i = 0; i < bursts; i++) {
		if (bursts_cpu[i] * 5 >= max_burst)
			counted++;
	}
	*cpu_us_per_refresh = (double)(last_cpu - start_cpu) / 1000.0 / counted;
	ret = 0;
out:
	if (htop_pid) {
		kill(htop_pid, SIGKILL);
		bench_atexit_forget(htop_pid);
	}
	{
		char *argv[] = { tmux, "-S", sock, "kill-server", NULL };

		client = spawn(argv, NULL);
		if (client > 0)
			wait_child(client, NULL);
	}
	unlink(sock);
	unlink(pidfile);
	return ret;
}
