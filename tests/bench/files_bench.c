/*
 * files_bench: what PROC_FILES costs for a process with many open fds.
 *
 *	files_bench [-n FDS] [-r ROUNDS]
 *
 * A child opens FDS fds (pipes; default 50,000, or as many as its hard fd
 * limit allows, which is 20,000 on the project's machines: the output says
 * how many it got), stops itself, and is sampled with PROC_FILES alone:
 *
 *   first	the first sample: every fd new (target and fdinfo read, object found)
 *   asleep	the child did not run since: the listing is skipped
 *   ran	the child ran (SIGCONT, it stops again): listed, every fdinfo re-read
 *
 * Each is the median over ROUNDS (default 5) of the CPU time this process
 * spent in vmon_sample() (CLOCK_PROCESS_CPUTIME_ID: user and system, so the
 * kernel's work on /proc counts, and other load on the machine does not).
 * Children with 1/4 and 1/2 as many fds are measured in the same run: the
 * ratios to them show the cost is linear in the number of fds (1/4 -> 4x).
 * Exit status 0, or 1 with a message on stderr.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vmon.h"

enum { FIRST, ASLEEP, RAN, PHASES };

static const char *const phase_names[PHASES] = { "first", "asleep", "ran" };

struct holder {
	pid_t	pid;
	int	*nfds;		/* shared with the child: the fds it holds */
};

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int wait_stopped(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, WUNTRACED) < 0) {
		if (errno != EINTR)
			return -1;
	}
	return WIFSTOPPED(status) ? 0 : -1;
}

/* a child holding about want fds (pipes), stopped; it stops again after each SIGCONT */
static int holder_start(struct holder *h, int want)
{
	h->nfds = mmap(NULL, sizeof(*h->nfds), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (h->nfds == MAP_FAILED)
		return -1;
	*h->nfds = 0;
	h->pid = fork();
	if (h->pid < 0)
		return -1;
	if (h->pid == 0) {
		struct rlimit rl;
		int p[2];

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		close_range(3, ~0U, 0);
		*h->nfds = 3;
		while (*h->nfds + 2 <= want && pipe(p) == 0)
			*h->nfds += 2;
		for (;;)
			raise(SIGSTOP);
	}
	return wait_stopped(h->pid);
}

static void holder_stop(struct holder *h)
{
	kill(h->pid, SIGKILL);
	waitpid(h->pid, NULL, 0);
	munmap(h->nfds, sizeof(*h->nfds));
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* one sample of the holder, in CPU seconds */
static int timed_sample(vmon_t *vmon, double *secs)
{
	double t0 = cpu_now();

	if (!vmon_sample(vmon))
		return -1;
	*secs = cpu_now() - t0;
	return 0;
}

/* the median CPU time of each phase over rounds, for a holder of want fds */
static int measure(int want, int rounds, int *got, double med[PHASES])
{
	double *t[PHASES];
	struct holder h;
	int ret = -1;

	for (int p = 0; p < PHASES; p++)
		t[p] = calloc((size_t)rounds, sizeof(double));
	if (!t[0] || !t[1] || !t[2] || holder_start(&h, want) < 0)
		goto out;
	*got = *h.nfds;
	for (int r = 0; r < rounds; r++) {
		vmon_proc_files_t *files;
		vmon_proc_t *proc;
		vmon_t vmon;

		if (!vmon_init(&vmon, VMON_FLAG_NONE, 0, VMON_WANT_PROC_FILES))
			goto kill;
		proc = vmon_proc_monitor(&vmon, h.pid, VMON_WANT_PROC_FILES, NULL, NULL);
		if (!proc || timed_sample(&vmon, &t[FIRST][r]) < 0 || timed_sample(&vmon, &t[ASLEEP][r]) < 0 ||
		    kill(h.pid, SIGCONT) < 0 || wait_stopped(h.pid) < 0 || timed_sample(&vmon, &t[RAN][r]) < 0) {
			vmon_destroy(&vmon);
			goto kill;
		}
		files = proc->stores[VMON_STORE_PROC_FILES];
		if (!files || files->fds_nr != *h.nfds) {
			fprintf(stderr, "files_bench: sampled %d fds of %d\n", files ? files->fds_nr : -1, *h.nfds);
			vmon_destroy(&vmon);
			goto kill;
		}
		vmon_destroy(&vmon);
	}
	for (int p = 0; p < PHASES; p++) {
		qsort(t[p], (size_t)rounds, sizeof(double), cmp_double);
		med[p] = t[p][rounds / 2];
	}
	ret = 0;
kill:
	holder_stop(&h);
out:
	for (int p = 0; p < PHASES; p++)
		free(t[p]);
	return ret;
}

int main(int argc, char **argv)
{
	int want = 50000, rounds = 5, opt, got[3];
	double med[3][PHASES];

	while ((opt = getopt(argc, argv, "n:r:")) != -1) {
		char *end;

		switch (opt) {
		case 'n':
			want = (int)strtol(optarg, &end, 10);
			if (*end || want < 16) {
				fprintf(stderr, "files_bench: -n wants at least 16 fds, not \"%s\"\n", optarg);
				return 1;
			}
			break;
		case 'r':
			rounds = (int)strtol(optarg, &end, 10);
			if (*end || rounds < 1) {
				fprintf(stderr, "files_bench: -r wants a count of rounds, not \"%s\"\n", optarg);
				return 1;
			}
			break;
		default:
			fprintf(stderr, "usage: files_bench [-n FDS] [-r ROUNDS]\n");
			return 1;
		}
	}

	/* the full size first: it says how many fds the limit allows, the peers are fractions of that */
	if (measure(want, rounds, &got[2], med[2]) < 0 ||
	    measure(got[2] / 2, rounds, &got[1], med[1]) < 0 ||
	    measure(got[2] / 4, rounds, &got[0], med[0]) < 0) {
		fprintf(stderr, "files_bench: %s\n", strerror(errno));
		return 1;
	}
	if (got[2] < want)
		printf("files_bench: asked for %d fds, the fd limit allowed %d\n", want, got[2]);
	printf("files_bench: PROC_FILES, CPU time per vmon_sample() of one process (median of %d)\n", rounds);
	printf("%-8s %10s %12s %12s %12s\n", "phase", "fds", "ms", "us/fd", "x of 1/4");
	for (int p = 0; p < PHASES; p++) {
		for (int s = 0; s < 3; s++)
			printf("%-8s %10d %12.3f %12.3f %12.2f\n", phase_names[p], got[s], med[s][p] * 1e3,
			       med[s][p] * 1e6 / got[s], med[0][p] > 0 ? med[s][p] / med[0][p] : 0.0);
	}
	return 0;
}
