/*
 * vtop_bench.c: vtop's cost, against top's in the same run.
 *
 *	vtop_bench [--procs 1000,5000] [--refreshes N] [--secs S] [--vtop PATH] [--no-top]
 *		   [--churn LIVES]
 *
 * For each process count it starts that many idle children (in one process
 * group, each dying with us), then measures:
 *
 *   batch        the CPU time per refresh of `vtop -b` and of `top -b`, both
 *                at -d 0.1, as the difference between a run of N + K
 *                refreshes and one of K (each the median of three runs),
 *                so that start-up (the first pass opens every file) is not
 *                counted: the steady state;
 *   interactive  the CPU use of vtop on a pseudo-terminal (120x40) at a 1 s
 *                refresh, over S seconds after the first few have passed,
 *                as a percentage of one core, and the same for top (-d 1),
 *                htop (-d 10) and btop (its default 2 s) where they are
 *                installed;
 *   memory       the peak RSS (ru_maxrss, VmHWM) of each of those runs:
 *                vtop -b against top -b, vtop on the terminal against top,
 *                htop and btop on it (a viewer on a terminal has its
 *                curses screens and draws as well);
 *   churn        with --churn LIVES: vtop on the terminal (and htop) through
 *                a storm of LIVES short lives (fork, exec /bin/true, exit):
 *                its VmRSS before, its peak, its VmRSS 10, 30 and 60 s
 *                after, and how long it took to come back within 10 % (at
 *                least 1 MB) of its size before (the goal: a minute);
 *                and where its resident memory grew or fell by then, by
 *                kind of mapping (/proc/PID/smaps: heap, anonymous, BPF
 *                maps, files).
 *
 * After the table, batch and interactive again as CPU a process a refresh
 * (issue 14's goal is 1.0 us at 10,000 idle processes): the batch's ms a
 * refresh, and the interactive's % of a core at one refresh a second (1 %
 * is 10 ms a refresh), over the processes counted in all.  Then the
 * start-up's CPU of vtop -b and top -b: the K-refresh runs less K refreshes.
 *
 * Only CPU time is measured (the children's rusage and their utime + stime),
 * never wall time: the machine is shared.  Every peer runs with an empty
 * $HOME, so no one's settings change what it does.  Targets (vtop issue): batch at
 * most half of top's CPU per refresh at 5,000 processes; interactive at most
 * 2 % of a core with 5,000 processes.  The brief caps what a test holds at
 * about 5,000 processes, so 10,000 is measured only when asked for.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../smaps.h"

static pid_t idle_pgid;
static int idle_nr;
static pid_t running = -1;	/* the measured program, killed if we die */

static void kill_everything(void)
{
	if (running > 0)
		kill(running, SIGKILL);
	if (idle_pgid > 0)
		kill(-idle_pgid, SIGKILL);
}

static void on_signal(int sig)
{
	kill_everything();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void reap_idle(void)
{
	if (idle_pgid <= 0)
		return;
	kill(-idle_pgid, SIGKILL);
	while (idle_nr > 0) {
		if (waitpid(-idle_pgid, NULL, 0) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		idle_nr--;
	}
	idle_pgid = 0;
	idle_nr = 0;
}

/* grow the idle children to nr */
static int spawn_idle(int nr)
{
	while (idle_nr < nr) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("vtop_bench: fork");
			return -1;
		}
		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			setpgid(0, idle_pgid);
			if (getppid() == 1)
				_exit(0);
			for (;;)
				pause();
		}
		/* in the parent too, so that the group exists before the next fork */
		setpgid(pid, idle_pgid ? idle_pgid : pid);
		if (!idle_pgid)
			idle_pgid = pid;
		idle_nr++;
	}
	return 0;
}

/*
 * An empty $HOME of our own, removed at exit: htop and btop write their
 * settings into it (a path that does not exist would be created, as root,
 * and be there for everyone after us).
 */
static char home[] = "/tmp/vtop_bench.XXXXXX";

static void remove_home(void)
{
	pid_t pid;

	if (home[sizeof(home) - 2] == 'X')
		return;	/* mkdtemp() did not make it */
	/* rm -r without a shell: the path is ours, made by mkdtemp() */
	pid = fork();
	if (pid == 0) {
		execlp("rm", "rm", "-rf", "--", home, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
}

/* in a child about to exec a peer */
static void empty_home(void)
{
	setenv("HOME", home, 1);
	setenv("XDG_CONFIG_HOME", home, 1);
}

static double tv_ms(struct timeval tv)
{
	return (double)tv.tv_sec * 1e3 + (double)tv.tv_usec / 1e3;
}

/* run argv to the end with output to /dev/null; its CPU time in ms, or -1; *rss_kb its peak RSS */
static double run_cpu_ms(char *const *argv, long *rss_kb)
{
	struct rusage ru;
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		empty_home();	/* no one's vtoprc or toprc */
		execvp(argv[0], argv);
		_exit(127);
	}
	running = pid;
	while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
		;
	running = -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "vtop_bench: %s failed (status %d)\n", argv[0], status);
		return -1;
	}
	*rss_kb = ru.ru_maxrss;
	return tv_ms(ru.ru_utime) + tv_ms(ru.ru_stime);
}

static double median3(double a, double b, double c)
{
	if (a > b) {
		double t = a;

		a = b;
		b = t;
	}
	return c < a ? a : c > b ? b : c;
}

/*
 * Steady-state CPU ms per refresh of `prog -b -n N -d 0.1`: (N+K refreshes)
 * - (K refreshes), over N, each the median of three runs, the two lengths
 * alternately: a start-up that costs more one time than another (top's
 * first refresh reads every process) made a single pair's difference
 * swing by a factor of three at 1,000 processes.  *rss_kb: the longer
 * runs' highest peak RSS; *start_ms: the start-up's CPU, the shorter runs'
 * less their K refreshes at that rate (vtop's includes the kernel's check
 * of its BPF programs and the first pass's reads of every process).
 */
static double per_refresh(const char *prog, int n, int k, long *rss_kb, double *start_ms)
{
	char nk[16];
	char *a[] = { (char *)prog, "-b", "-n", nk, "-d", "0.1", NULL };
	double big[3], small[3];
	long rss, rss_small;

	*rss_kb = -1;
	*start_ms = -1;
	for (int i = 0; i < 3; i++) {
		snprintf(nk, sizeof(nk), "%d", n + k);
		big[i] = run_cpu_ms(a, &rss);
		snprintf(nk, sizeof(nk), "%d", k);
		small[i] = run_cpu_ms(a, &rss_small);
		if (big[i] < 0 || small[i] < 0)
			return -1;
		if (rss > *rss_kb)
			*rss_kb = rss;
	}
	double per = (median3(big[0], big[1], big[2]) - median3(small[0], small[1], small[2])) / n;

	*start_ms = median3(small[0], small[1], small[2]) - k * per;
	return per;
}

/* a line "Name:   N kB" of /proc/PID/status, in kB; -1 if there is none */
static long status_kb(pid_t pid, const char *name)
{
	char path[64], line[256];
	size_t len = strlen(name);
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (!(f = fopen(path, "re")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, name, len) == 0 && line[len] == ':') {
			kb = strtol(line + len + 1, NULL, 10);
			break;
		}
	fclose(f);
	return kb;
}

static double ticks_of(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long utime, stime;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -1;
	buf[len] = '\0';
	p = strrchr(buf, ')');
	/* fields 14 and 15 (utime, stime); p is at field 2's end */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2)
		return -1;
	return (double)(utime + stime);
}

/* drain what the terminal side writes for secs seconds (the screen must be consumed to be drawn) */
static void drain(int fd, double secs)
{
	struct timespec t0, t;
	char buf[65536];

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		double elapsed;

		clock_gettime(CLOCK_MONOTONIC, &t);
		elapsed = (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9;
		if (elapsed >= secs)
			return;
		if (poll(&pfd, 1, (int)((secs - elapsed) * 1000) + 1) > 0 && read(fd, buf, sizeof(buf)) <= 0)
			return;
	}
}

/* argv started on a pty of 120x40 with an empty $HOME (the running one): its pid, *master the pty; -1 */
static pid_t start_on_pty(char *const *argv, int *master)
{
	struct winsize ws = { .ws_row = 40, .ws_col = 120 };
	pid_t pid = forkpty(master, NULL, NULL, &ws);

	if (pid < 0) {
		perror("vtop_bench: forkpty");
		return -1;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		setenv("TERM", "xterm-256color", 1);
		setenv("LANG", "C.UTF-8", 1);
		empty_home();
		execvp(argv[0], argv);
		_exit(127);
	}
	running = pid;
	return pid;
}

/*
 * A viewer on a pty (argv: vtop -d 1, top -d 1, htop -d 10, btop): its CPU
 * use over secs, after warm-up, in percent of one core; *rss_kb its peak
 * RSS then.  -1 for one that exited meanwhile (it could not run here): a
 * zombie's figures read, but are not a viewer's.
 */
static double interactive_pct(char *const *argv, double secs, long *rss_kb)
{
	long hz = sysconf(_SC_CLK_TCK);
	double before, after;
	int master, status;
	bool exited;
	pid_t pid = start_on_pty(argv, &master);

	if (pid < 0)
		return -1;
	drain(master, 4);	/* start-up and the first samples are not the steady state */
	before = ticks_of(pid);
	drain(master, secs);
	after = ticks_of(pid);
	*rss_kb = status_kb(pid, "VmHWM");
	exited = waitpid(pid, &status, WNOHANG) == pid;
	if (!exited) {
		if (write(master, "q", 1) != 1)
			kill(pid, SIGTERM);
		drain(master, 1);
		kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	running = -1;
	close(master);
	if (exited)
		*rss_kb = -1;
	if (exited || before < 0 || after < 0)
		return -1;
	return (after - before) / (double)hz / secs * 100.0;
}

/* kB as MB for the table; -1 for a run that gave none (a peer not installed, or failed) */
static double mb(long kb)
{
	return kb > 0 ? (double)kb / 1024.0 : -1.0;
}

/* how long a viewer's RSS is watched after a storm */
#define CHURN_WATCH_SECS	60

/* where a viewer's resident memory is, by /proc/PID/smaps: the kinds of mapping */
enum { MAP_HEAP, MAP_ANON, MAP_BPF, MAP_FILES, MAP_KINDS };
static const char *const map_kind_names[MAP_KINDS] = { "heap", "anonymous", "BPF maps", "files" };

struct churn {
	long	before, peak, at[3];	/* kB: at 10, 30, 60 s after the storm */
	int	back_secs;		/* -1: not back within CHURN_WATCH_SECS */
	long	map_before[MAP_KINDS], map_after[MAP_KINDS];	/* kB resident by kind, before and at 60 s */
};

/* a mapping's kind by its name */
static int map_kind(const char *name)
{
	if (!strcmp(name, "[heap]"))
		return MAP_HEAP;
	/* malloc's mmap()ed blocks, the stack, and memfd's anonymous memory ("/memfd:NAME (deleted)") */
	if (!name[0] || !strcmp(name, "[stack]") || !strncmp(name, "[anon", 5) || !strncmp(name, "/memfd:", 7))
		return MAP_ANON;
	if (!strcmp(name, "anon_inode:bpf-map"))
		return MAP_BPF;
	return MAP_FILES;
}

static void map_count(const smaps_map_t *map, void *arg)
{
	long *kb = arg;

	kb[map_kind(map->name)] += map->rss_kb;
}

/*
 * The Rss of pid's mappings by kind, kB: [heap]; anonymous (no name, the
 * stack, malloc's mmap()ed blocks, memfd's); BPF maps (anon_inode:bpf-map,
 * a ring resident from its mmap); files (the program, its libraries, and
 * the kernel's [vdso] and [vvar]).  -1 each when smaps cannot be read or
 * lists no mapping (the process is gone).
 */
static void smaps_kinds(pid_t pid, long kb[MAP_KINDS])
{
	for (int k = 0; k < MAP_KINDS; k++)
		kb[k] = 0;
	if (smaps_each(pid, map_count, kb) < 0)
		for (int k = 0; k < MAP_KINDS; k++)
			kb[k] = -1;
}

/* lives short lives, at most 200 at a time, from a child of ours (the caller drains the pty meanwhile) */
static pid_t start_storm(int lives)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (int started = 0, alive = 0; started < lives || alive > 0; ) {
		if (started < lives && alive < 200) {
			pid_t c = fork();

			if (c == 0) {
				execl("/bin/true", "true", "vtop_bench-churn", (char *)NULL);
				_exit(127);
			}
			if (c > 0) {
				started++;
				alive++;
				continue;
			}
		}
		if (wait(NULL) > 0)
			alive--;
		else if (errno == ECHILD)
			alive = 0;
	}
	_exit(0);
}

/* argv on a pty: its RSS at rest, through a storm of lives short lives, and for a minute after */
static int churn_rss(char *const *argv, int lives, struct churn *c)
{
	int master, status, k = 0;
	pid_t storm, pid = start_on_pty(argv, &master);

	if (pid < 0)
		return -1;
	drain(master, 6);
	c->before = status_kb(pid, "VmRSS");
	smaps_kinds(pid, c->map_before);
	storm = start_storm(lives);
	while (storm > 0 && waitpid(storm, &status, WNOHANG) == 0)
		drain(master, 0.2);
	c->peak = status_kb(pid, "VmHWM");
	c->back_secs = -1;
	for (int sec = 1; sec <= CHURN_WATCH_SECS; sec++) {
		long now;

		drain(master, 1);
		now = status_kb(pid, "VmRSS");
		if (c->back_secs < 0 && now >= 0 && now <= c->before + (c->before / 10 > 1024 ? c->before / 10 : 1024))
			c->back_secs = sec;
		if (sec == 10 || sec == 30 || sec == CHURN_WATCH_SECS)
			c->at[k++] = now;
	}
	smaps_kinds(pid, c->map_after);
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	running = -1;
	close(master);
	return c->before < 0 || storm < 0 ? -1 : 0;
}

static void churn_print(const char *who, int idle, int lives, const struct churn *c)
{
	char back[32];

	if (c->back_secs < 0)
		snprintf(back, sizeof(back), "> %d s", CHURN_WATCH_SECS);
	else
		snprintf(back, sizeof(back), "%d s", c->back_secs);
	printf("%-6s %8d %8d | %8.1f %8.1f | %8.1f %8.1f %8.1f | %10s\n", who, idle, lives, c->before / 1024.0,
	       c->peak / 1024.0, c->at[0] / 1024.0, c->at[1] / 1024.0, c->at[2] / 1024.0, back);
	/* what it kept: a storm's room not given back, or what it holds of the storm (the event log) */
	printf("%-6s kB at %d s against before:", "", CHURN_WATCH_SECS);
	for (int k = 0; k < MAP_KINDS; k++) {
		if (c->map_before[k] < 0 || c->map_after[k] < 0)
			printf(" %s -", map_kind_names[k]);
		else
			printf(" %s %+ld (%ld)", map_kind_names[k], c->map_after[k] - c->map_before[k], c->map_after[k]);
		printf(k + 1 < MAP_KINDS ? "," : "\n");
	}
}

/* the processes of the system, ours and everyone's: what the samplers had to read */
static int count_processes(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] >= '1' && de->d_name[0] <= '9';
	closedir(d);
	return n;
}

/* is prog in $PATH? */
static bool installed(const char *prog)
{
	const char *path = getenv("PATH");
	char file[4096];

	for (const char *p = path ? path : "/usr/bin:/bin"; *p; ) {
		size_t len = strcspn(p, ":");

		snprintf(file, sizeof(file), "%.*s/%s", (int)len, p, prog);
		if (access(file, X_OK) == 0)
			return true;
		p += len + (p[len] == ':');
	}
	return false;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: vtop_bench [--procs 1000,5000] [--refreshes N] [--secs S] [--vtop PATH] [--no-top]"
		" [--churn LIVES]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "procs", required_argument, NULL, 'p' }, { "refreshes", required_argument, NULL, 'n' },
		{ "secs", required_argument, NULL, 's' }, { "vtop", required_argument, NULL, 'v' },
		{ "no-top", no_argument, NULL, 't' }, { "churn", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	const char *vtop = "vtop/vtop", *procs = "1000,5000";
	int refreshes = 10, opt, failed = 0, lives = 0;
	double secs = 20;
	bool with_top = true;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'p': procs = optarg; break;
		case 'n': refreshes = atoi(optarg); break;
		case 's': secs = atof(optarg); break;
		case 'v': vtop = optarg; break;
		case 't': with_top = false; break;
		case 'c': lives = atoi(optarg); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (refreshes < 1 || secs <= 0 || lives < 0) {
		usage(stderr);
		return 2;
	}
	if (!mkdtemp(home)) {
		perror("vtop_bench: mkdtemp");
		return 1;
	}
	atexit(remove_home);
	atexit(kill_everything);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);

	printf("vtop bench: CPU time, not wall time; the peers measured in the same run, with the same processes\n");
	printf("%8s %8s | %10s %10s %6s | %9s %9s %9s %9s | %8s %8s %6s | %8s %8s %8s %8s %6s %6s %6s\n", "idle",
	       "procs", "vtop -b", "top -b", "ratio", "vtop", "top", "htop", "btop", "vtop -b", "top -b", "ratio", "vtop",
	       "top", "htop", "btop", "ratio", "ratio", "ratio");
	printf("%8s %8s | %10s %10s %6s | %9s %9s %9s %9s | %8s %8s %6s | %8s %8s %8s %8s %6s %6s %6s\n", "children",
	       "in all", "ms/refr.", "ms/refr.", "", "% core", "% core", "% core", "% core", "MB peak", "MB peak", "",
	       "MB peak", "MB peak", "MB peak", "MB peak", "/top", "/htop", "/btop");
	/* each count's CPU a process a refresh, printed after the table (issue 14's goal is in those terms) */
	struct { int all; double v, t, i, it, vs, ts; } per[16];
	int per_nr = 0;

	for (const char *p = procs; *p; ) {
		int want = atoi(p);
		double v, t = -1, i, it = -1, ih = -1, ib = -1, vs, ts = -1;
		long rv = -1, rt = -1, riv = -1, rit = -1, rih = -1, rib = -1;

		if (want < 0 || want > 10000) {
			fprintf(stderr, "vtop_bench: --procs: 0 to 10000\n");
			return 2;
		}
		if (spawn_idle(want) < 0) {
			failed = 1;
			break;
		}
		/* the steady state: the same refreshes more, twice the count, measured apart */
		int all = count_processes();

		v = per_refresh(vtop, refreshes, 2, &rv, &vs);
		if (with_top)
			t = per_refresh("top", refreshes, 2, &rt, &ts);
		{
			char *av[] = { (char *)vtop, "-d", "1", NULL }, *ah[] = { "htop", "-d", "10", NULL };
			char *ab[] = { "btop", NULL }, *at[] = { "top", "-d", "1", NULL };

			i = interactive_pct(av, secs, &riv);
			if (with_top)
				it = interactive_pct(at, secs, &rit);
			if (with_top && installed("htop"))
				ih = interactive_pct(ah, secs, &rih);
			if (with_top && installed("btop"))
				ib = interactive_pct(ab, secs, &rib);
		}
		printf("%8d %8d | %10.2f %10.2f %6.2f | %9.2f %9.2f %9.2f %9.2f | %8.1f %8.1f %6.2f | %8.1f %8.1f %8.1f %8.1f"
		       " %6.2f %6.2f %6.2f\n",
		       want, all, v, t, t > 0 ? v / t : 0.0, i, it, ih, ib, mb(rv), mb(rt),
		       rt > 0 ? (double)rv / (double)rt : 0.0, mb(riv), mb(rit), mb(rih), mb(rib),
		       rit > 0 ? (double)riv / (double)rit : 0.0, rih > 0 ? (double)riv / (double)rih : 0.0,
		       rib > 0 ? (double)riv / (double)rib : 0.0);
		fflush(stdout);
		if (per_nr < (int)(sizeof(per) / sizeof(per[0])) && all > 0) {
			per[per_nr].all = all;
			per[per_nr].v = v;
			per[per_nr].t = t;
			per[per_nr].i = i;
			per[per_nr].it = it;
			per[per_nr].vs = vs;
			per[per_nr].ts = ts;
			per_nr++;
		}
		failed |= v < 0 || i < 0 || (with_top && (t < 0 || it < 0));
		p = strchr(p, ',');
		if (!p)
			break;
		p++;
	}
	if (per_nr) {
		/* ms a refresh, or % of a core at one refresh a second (10 ms a refresh each %), over the processes */
		printf("\nCPU a process a refresh, us (issue 14's goal: vtop at or below 1.0 at 10,000 idle):\n");
		printf("%8s | %8s %8s %8s %8s\n", "procs", "vtop -b", "vtop", "top -b", "top");
		for (int k = 0; k < per_nr; k++)
			printf("%8d | %8.2f %8.2f %8.2f %8.2f\n", per[k].all,
			       per[k].v >= 0 ? per[k].v * 1e3 / per[k].all : -1.0,
			       per[k].i >= 0 ? per[k].i * 10 * 1e3 / per[k].all : -1.0,
			       per[k].t >= 0 ? per[k].t * 1e3 / per[k].all : -1.0,
			       per[k].it >= 0 ? per[k].it * 10 * 1e3 / per[k].all : -1.0);
		printf("(-b at -d 0.1; vtop and top on a terminal at -d 1: their caches colder)\n");
		printf("\nstart-up CPU, ms (-b -n 2 less its two refreshes; vtop's includes the kernel's check of its BPF programs):\n");
		printf("%8s | %8s %8s %6s\n", "procs", "vtop -b", "top -b", "ratio");
		for (int k = 0; k < per_nr; k++)
			printf("%8d | %8.1f %8.1f %6.2f\n", per[k].all, per[k].vs, per[k].ts,
			       per[k].vs >= 0 && per[k].ts > 0 ? per[k].vs / per[k].ts : 0.0);
	}
	if (lives) {
		/* at the last count's idle children */
		char *av[] = { (char *)vtop, "-d", "1", NULL }, *ah[] = { "htop", "-d", "10", NULL };
		struct churn c;

		printf("\nchurn: VmRSS on a terminal, MB, before a storm of short lives, its peak, then after it\n");
		printf("%-6s %8s %8s | %8s %8s | %8s %8s %8s | %10s\n", "", "idle", "lives", "before", "VmHWM",
		       "10 s", "30 s", "60 s", "back within");
		memset(&c, 0, sizeof(c));
		failed |= churn_rss(av, lives, &c) < 0;
		churn_print("vtop", idle_nr, lives, &c);
		if (with_top && installed("htop")) {
			memset(&c, 0, sizeof(c));
			failed |= churn_rss(ah, lives, &c) < 0;
			churn_print("htop", idle_nr, lives, &c);
		}
		printf("(back within: 10 %% of its size before, at least 1 MB; the goal: a minute)\n");
	}
	reap_idle();
	printf("(-1: a peer not installed, or --no-top; ./bootstrap --deps installs htop and btop)\n");
	printf("targets: vtop -b <= 0.2 x top -b per refresh at 5,000 processes (issue 7; issue 4 asked 0.5);"
	       " interactive <= 2%% of a core at 5,000; peak RSS <= top's at 1,000, 5,000 and 10,000\n");
	return failed;
}
