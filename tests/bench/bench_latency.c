/*
 * bench_latency.c: `bench latency`, how long a process's exit takes to
 * reach a caller that reads the feed's stream (vmon_feed_next()) in a poll
 * loop, per backend, at a low and a high rate.
 *
 * A spawner process forks children at the rate asked (each exits at once)
 * and notes, for each, the CLOCK_BOOTTIME at which its waitpid() returned,
 * in memory it shares with us; we poll the feed's fd with
 * vmon_feed_timeout(), take events with vmon_feed_next() and note when each
 * child's exit came.  The latency is the second time minus the first: it
 * can be negative (the kernel reports the exit before the parent's wait
 * returns).  "wakeups/s" is how often poll() returned with the fd readable,
 * which the ebpf ring bounds (vmon_feed(7)).
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libvmon/vmon.h"
#include "bench.h"

#define LAT_SECS	3
#define LAT_MAX		(5000 * LAT_SECS + 16)

struct shared {
	volatile int	done;
	volatile int	nr;
	int		pid[LAT_MAX];
	long long	reaped_ns[LAT_MAX];
};

static long long boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* fork children at rate a second for LAT_SECS, each waited for and noted */
static void spawner(struct shared *sh, int rate)
{
	long long t0 = boot_ns(), period = 1000000000LL / rate;
	int n = rate * LAT_SECS;

	for (int i = 0; i < n && i < LAT_MAX; i++) {
		long long at = t0 + i * period, now = boot_ns();
		pid_t pid;

		if (at > now) {
			struct timespec ts = { (at - now) / 1000000000LL, (at - now) % 1000000000LL };

			nanosleep(&ts, NULL);
		}
		pid = fork();
		if (pid < 0)
			continue;
		if (pid == 0)
			_exit(0);
		if (waitpid(pid, NULL, 0) != pid)
			continue;
		sh->pid[sh->nr] = pid;
		sh->reaped_ns[sh->nr] = boot_ns();
		__atomic_store_n(&sh->nr, sh->nr + 1, __ATOMIC_RELEASE);
	}
	sh->done = 1;
	_exit(0);
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

static int pid_max(void)
{
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");
	int n = 32768;

	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = 32768;
		fclose(f);
	}
	return n;
}

static int run_one(const char *backend, int rate, struct shared *sh, long long *arrived, int pids)
{
	vmon_feed_stats_t st;
	vmon_attr_t attr;
	vmon_event_t ev;
	long long *lat, t_end = 0, t_start;
	int n = 0, wakeups = 0, status;
	pid_t sp;
	vmon_t vmon;

	vmon_attr_default(&attr);
	attr.feed = backend;
	if (!vmon_init_attr(&vmon, &attr)) {
		printf("%-8s %6d  cannot open: %s\n", backend, rate, strerror(errno));
		return 0;
	}
	vmon_feed_get_stats(&vmon, &st);
	if (st.backend == VMON_FEED_NONE) {
		printf("%-8s %6d  skipped: %s\n", backend, rate, vmon_feed_reason(&vmon));
		vmon_destroy(&vmon);
		return 0;
	}
	if (vmon_feed_stream(&vmon, VMON_FEED_EVENTS, 0) < 0) {
		vmon_destroy(&vmon);
		return 1;
	}
	memset(sh, 0, sizeof(*sh));
	memset(arrived, 0, sizeof(*arrived) * (size_t)pids);
	sp = fork();
	if (sp < 0) {
		vmon_destroy(&vmon);
		return 1;
	}
	if (sp == 0)
		spawner(sh, rate);
	bench_atexit_kill(sp);
	t_start = boot_ns();
	for (;;) {
		struct pollfd pfd = { vmon_feed_fd(&vmon), POLLIN, 0 };
		int t = vmon_feed_timeout(&vmon);

		while (vmon_feed_next(&vmon, &ev) == 1) {
			if (ev.kind == VMON_EVENT_EXIT && ev.ppid == sp && ev.pid > 0 && ev.pid < pids)
				arrived[ev.pid] = boot_ns();
		}
		if (sh->done && !t_end)
			t_end = boot_ns() + 500000000LL;	/* the last exits' time to come */
		if (t_end && boot_ns() > t_end)
			break;
		if (poll(&pfd, 1, t >= 0 && t < 100 ? t : 100) > 0)
			wakeups++;
	}
	waitpid(sp, &status, 0);
	bench_atexit_forget(sp);
	lat = malloc(sizeof(*lat) * (size_t)(sh->nr + 1));
	for (int i = 0; lat && i < sh->nr; i++) {
		long long a = arrived[sh->pid[i]];

		/* a pid used twice in the run keeps its last arrival: only a plausible one counts */
		if (a && a > sh->reaped_ns[i] - 1000000000LL && a < sh->reaped_ns[i] + 5000000000LL)
			lat[n++] = a - sh->reaped_ns[i];
	}
	vmon_feed_get_stats(&vmon, &st);
	if (lat && n) {
		qsort(lat, (size_t)n, sizeof(*lat), cmp_ll);
		printf("%-8s %6d %8.0f %7d/%-6d %9.1f %9.1f %10.0f %6llu\n", backend, rate,
		       (double)sh->nr / LAT_SECS, n, sh->nr, lat[n / 2] / 1000.0, lat[(n * 99) / 100] / 1000.0,
		       wakeups / ((double)(boot_ns() - t_start) / 1e9), st.lost + st.stream_lost);
	} else {
		printf("%-8s %6d  no exit matched (%d spawned)\n", backend, rate, sh->nr);
	}
	free(lat);
	vmon_destroy(&vmon);
	return 0;
}

static int latency_run(int argc, char **argv)
{
	const char *backends[] = { "ebpf", "perf", "netlink" };
	const int rates[] = { 100, 5000 };
	struct shared *sh;
	long long *arrived;
	int pids = pid_max(), err = 0;

	(void)argc;
	(void)argv;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	arrived = calloc((size_t)pids, sizeof(*arrived));
	if (sh == MAP_FAILED || !arrived) {
		free(arrived);
		return 1;
	}
	printf("exit to vmon_feed_next(): latency from the parent's waitpid(), %d s per row\n", LAT_SECS);
	printf("%-8s %6s %8s %14s %9s %9s %10s %6s\n", "backend", "rate", "reached", "matched", "p50 us",
	       "p99 us", "wakeups/s", "lost");
	for (size_t b = 0; b < sizeof(backends) / sizeof(backends[0]); b++)
		for (size_t r = 0; r < sizeof(rates) / sizeof(rates[0]); r++)
			err |= run_one(backends[b], rates[r], sh, arrived, pids);
	munmap(sh, sizeof(*sh));
	free(arrived);
	return err;
}

static const struct bench_piece latency_piece = {
	"latency", "event feed: a child's exit to vmon_feed_next(), p50 and p99, per backend", latency_run,
};

static void __attribute__((constructor)) latency_register(void)
{
	bench_register(&latency_piece);
}
