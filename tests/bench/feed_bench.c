/*
 * feed_bench.c: what the event feed sees of a storm of short-lived
 * processes, and what it costs, against sampling /proc once a second.
 *
 * For each backend (ebpf, perf, netlink, and none: polling) and each rate
 * (1,000/s, 5,000/s, flat out), one spawner process per CPU forks and execs
 * tests/feed_child ("exit 0 tag"), together at that rate, for --seconds; this program
 * meanwhile runs libvmon as a caller with an event loop would: poll() on
 * vmon_feed_fd() with vmon_feed_timeout(), vmon_feed_process() when it is
 * readable, vmon_sample() of the whole system (PROC_ALL) once a second.
 *
 *   spawned	children the spawners started (their own count)
 *   seen	those that appeared in the tree, under their spawner, new once
 *   named	those whose stale node had their name and arguments
 *   lost	what the backend says the kernel dropped
 *   feed CPU	what the library spent reading and applying events
 *		(vmon_feed_stats_t.cpu_ns, the thread's CPU clock: user and
 *		system together), per event applied
 *   user, sys	this whole process's CPU (getrusage), per event, over an
 *		idle run of the same backend and length (which samples the
 *		same system as often): what the storm cost, feed and sampling
 *		of the new processes together.  The kernel accounts user and
 *		system time by ticks, so these are statistical, and the idle
 *		run sees the other users' processes too: on a busy machine
 *		they are noisy, and can come out below zero.
 *
 * CPU time, never wall time: the machine is shared.  The spawner and its
 * children are not measured; they die with this program (PR_SET_PDEATHSIG).
 *
 *	tests/bench/feed_bench [--seconds N] [--rates 1000,5000,max] [--backends ebpf,perf,netlink,none]
 *			       [--buffer BYTES]
 *
 * --buffer sets vmon_attr_t.feed_buffer_bytes (0, the default: the
 * library's own size), to see what a smaller kernel buffer loses.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vmon.h"

#ifndef FEED_CHILD
#error "build with -DFEED_CHILD=\"$(abs_top_builddir)/tests/feed_child\""
#endif

#define SAMPLE_PERIOD_NS	1000000000ull	/* vmon_sample() once a second, as top does */
#define SPAWN_WINDOW		32		/* children the spawner has in flight at most */
#define TAIL_SAMPLES		2		/* samples after the spawners are done, for the last events */
#define SPAWNERS_MAX		64

static double now_secs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned long long tv_us(struct timeval tv)
{
	return (unsigned long long)tv.tv_sec * 1000000ull + (unsigned long long)tv.tv_usec;
}

/* --- the spawner: a child of ours, its children the storm --- */

/* vfork(): the spawner's copy of its memory is not made, which is most of a fork's cost */
static pid_t __attribute__((noinline)) spawn_one(void)
{
	pid_t pid = vfork();

	if (pid == 0) {
		execl(FEED_CHILD, "feed_child", "exit", "0", "bench", (char *)NULL);
		_exit(127);
	}
	return pid;
}

/*
 * Fork and exec feed_child at rate per second (0: as fast as it goes) for
 * secs seconds, at most SPAWN_WINDOW at a time, reaping as they end.  Writes
 * how many it spawned to the pipe, then waits for EOF on go_fd: its children
 * stay under it in the tree until the last sample.
 */
static void spawner(int go_fd, int done_fd, int rate, double secs)
{
	unsigned long long spawned = 0;
	int inflight = 0;
	double start, next;
	char c;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (read(go_fd, &c, 1) != 1)
		_exit(1);
	start = next = now_secs();
	while (now_secs() - start < secs || inflight) {
		bool more = now_secs() - start < secs;
		pid_t pid;

		while (more && inflight < SPAWN_WINDOW && (rate == 0 || now_secs() >= next)) {
			pid = spawn_one();
			if (pid < 0)
				break;
			spawned++;
			inflight++;
			next += rate ? 1.0 / rate : 0;
		}
		/* reap what ended; sleep a little when pacing and nothing is due */
		while (inflight && (pid = waitpid(-1, NULL, more && rate ? WNOHANG : 0)) > 0)
			inflight--;
		if (more && rate && now_secs() < next) {
			double wait = next - now_secs();
			struct timespec ts = { 0, (long)(wait > 0.001 ? 1000000 : wait * 1e9) };

			nanosleep(&ts, NULL);
		}
	}
	if (write(done_fd, &spawned, sizeof(spawned)) != (ssize_t)sizeof(spawned))
		_exit(1);
	while (read(go_fd, &c, 1) > 0)
		;
	_exit(0);
}

/* --- the measured side --- */

typedef struct run {
	unsigned long long	spawned, seen, named, lost, events;
	unsigned long long	user_us, sys_us;		/* the whole process */
	unsigned long long	feed_cpu_ns;			/* the library's feed */
	double			secs;
	char			backend[16];
	char			reason[200];
} run_t;

/* a spawner's children in this sample: new ones seen, stale ones named */
static void count_kids(vmon_t *vmon, pid_t spawner_pid, run_t *r)
{
	vmon_proc_t *sp = spawner_pid > 0 ? vmon_proc_lookup(vmon, spawner_pid) : NULL, *kid;

	if (!sp)
		return;
	list_for_each_entry(kid, &sp->children, siblings) {
		const vmon_proc_stat_t *s = kid->stores[VMON_STORE_PROC_STAT];

		if (kid->is_new)
			r->seen++;
		if (kid->is_stale && s && s->comm.len > 1 && strcmp(s->comm.array, "feed_child") == 0 &&
		    s->argc == 4 && strcmp(s->argv[1], "exit") == 0 && strcmp(s->argv[3], "bench") == 0)
			r->named++;

	}
}

/*
 * One run: a vmon on backend, the spawner at rate (or none at all: rate < 0,
 * the idle run), for secs seconds plus the tail samples.
 */
static size_t buffer_bytes;	/* --buffer */

static int measure(const char *backend, int rate, int spawners, double secs, run_t *r)
{
	int go[2] = { -1, -1 }, done[2] = { -1, -1 }, fd;
	unsigned long long next_sample;
	vmon_feed_stats_t st0, st;
	struct rusage ru0, ru1;
	pid_t sp[SPAWNERS_MAX] = { 0 };
	vmon_attr_t attr;
	vmon_t vmon;
	double t0;
	int tail = -1, nsp = 0;

	memset(r, 0, sizeof(*r));
	vmon_attr_default(&attr);
	attr.flags = VMON_FLAG_PROC_ALL;
	attr.proc_wants = VMON_WANT_PROC_STAT;
	attr.feed = backend;
	attr.feed_buffer_bytes = buffer_bytes;
	if (!vmon_init_attr(&vmon, &attr)) {
		perror("vmon_init_attr");
		return -1;
	}
	vmon_feed_get_stats(&vmon, &st0);
	snprintf(r->backend, sizeof(r->backend), "%s", vmon_feed_backend_name(st0.backend));
	snprintf(r->reason, sizeof(r->reason), "%s", vmon_feed_reason(&vmon));
	if (!vmon_sample(&vmon))
		goto fail;
	if (rate >= 0) {
		if (pipe2(go, O_CLOEXEC) < 0 || pipe2(done, O_CLOEXEC) < 0)
			goto fail;
		for (nsp = 0; nsp < spawners; nsp++) {
			sp[nsp] = fork();
			if (sp[nsp] < 0)
				goto fail;
			if (sp[nsp] == 0) {
				close(go[1]);	/* its EOF is ours to give */
				close(done[0]);
				spawner(go[0], done[1], rate / spawners, secs);
			}
		}
		close(go[0]);
		close(done[1]);
		go[0] = done[1] = -1;
		/* they must be in the tree before their children are */
		if (!vmon_sample(&vmon))
			goto fail;
	}

	vmon_feed_get_stats(&vmon, &st0);
	getrusage(RUSAGE_SELF, &ru0);
	t0 = now_secs();
	for (int i = 0; i < nsp; i++) {
		if (write(go[1], "g", 1) != 1)
			goto fail;
	}
	next_sample = (unsigned long long)(t0 * 1e9) + SAMPLE_PERIOD_NS;
	fd = vmon_feed_fd(&vmon);
	for (;;) {
		double now = now_secs();
		long long until = (long long)next_sample - (long long)(now * 1e9);
		int timeout = until > 0 ? (int)(until / 1000000) + 1 : 0, feed_timeout = vmon_feed_timeout(&vmon);
		struct pollfd pfd = { fd, POLLIN, 0 };

		if (feed_timeout >= 0 && feed_timeout < timeout)
			timeout = feed_timeout;
		if (poll(&pfd, fd >= 0 ? 1 : 0, timeout) > 0)
			vmon_feed_process(&vmon);
		if ((unsigned long long)(now_secs() * 1e9) < next_sample)
			continue;
		if (!vmon_sample(&vmon))
			goto fail;
		for (int i = 0; i < nsp; i++)
			count_kids(&vmon, sp[i], r);
		next_sample += SAMPLE_PERIOD_NS;
		if (tail < 0 && now_secs() - t0 >= secs) {
			/* the spawners reap their last children and report; they live on until the end */
			for (int i = 0; i < nsp; i++) {
				unsigned long long n;

				if (read(done[0], &n, sizeof(n)) != (ssize_t)sizeof(n))
					goto fail;
				r->spawned += n;
			}
			tail = 0;
		} else if (tail >= 0 && ++tail >= TAIL_SAMPLES) {
			break;
		}
	}
	getrusage(RUSAGE_SELF, &ru1);
	r->secs = now_secs() - t0;
	vmon_feed_get_stats(&vmon, &st);
	for (int k = 0; k < VMON_EVENT_KIND_NR; k++)
		r->events += st.events[k] - st0.events[k];
	r->lost = st.lost - st0.lost;
	r->feed_cpu_ns = st.cpu_ns - st0.cpu_ns;
	r->user_us = tv_us(ru1.ru_utime) - tv_us(ru0.ru_utime);
	r->sys_us = tv_us(ru1.ru_stime) - tv_us(ru0.ru_stime);
	close(go[1]);	/* the spawners' EOF */
	close(done[0]);
	for (int i = 0; i < nsp; i++)
		waitpid(sp[i], NULL, 0);
	vmon_destroy(&vmon);
	return 0;

fail:
	fprintf(stderr, "feed_bench: %s\n", strerror(errno));
	for (int i = 0; i < nsp; i++) {
		if (sp[i] > 0) {
			kill(sp[i], SIGKILL);
			waitpid(sp[i], NULL, 0);
		}
	}
	vmon_destroy(&vmon);
	return -1;
}

static void usage(void)
{
	fprintf(stderr, "usage: feed_bench [--seconds N] [--rates 1000,5000,max] [--backends ebpf,perf,netlink,none] [--buffer BYTES]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *rates_arg = "1000,5000,max", *backends_arg = "ebpf,perf,netlink,none";
	char list[256], rates_list[128];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int spawners = cpus < 1 ? 1 : cpus > SPAWNERS_MAX ? SPAWNERS_MAX : (int)cpus;
	double secs = 3.0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
			secs = atof(argv[++i]);
		else if (strcmp(argv[i], "--rates") == 0 && i + 1 < argc)
			rates_arg = argv[++i];
		else if (strcmp(argv[i], "--backends") == 0 && i + 1 < argc)
			backends_arg = argv[++i];
		else if (strcmp(argv[i], "--buffer") == 0 && i + 1 < argc)
			buffer_bytes = strtoul(argv[++i], NULL, 0);
		else
			usage();
	}
	if (secs <= 0)
		usage();

	printf("event feed: fork+exec+exit of tests/feed_child at a rate for %.0f s; vmon_sample() of PROC_ALL once a second,\n"
	       "vmon_feed_process() when the feed's fd is readable.  feed: the library's CPU reading and applying events\n"
	       "(vmon_feed_stats_t.cpu_ns); user, sys: this process's CPU over an idle run's (getrusage, by ticks); per event.\n\n",
	       secs);
	printf("%-8s %7s %8s %8s %8s %8s %7s %7s %9s %9s %9s\n", "backend", "rate/s", "spawned", "seen", "seen%",
	       "named%", "lost", "events", "feed/ev", "user/ev", "sys/ev");
	snprintf(list, sizeof(list), "%s", backends_arg);
	for (char *save = NULL, *b = strtok_r(list, ",", &save); b; b = strtok_r(NULL, ",", &save)) {
		run_t idle;

		if (measure(b, -1, 0, secs, &idle) < 0)
			return 1;
		if (strcmp(idle.backend, b) != 0) {
			printf("%-8s (not here: %s)\n", b, idle.reason);
			continue;
		}
		snprintf(rates_list, sizeof(rates_list), "%s", rates_arg);
		for (char *save2 = NULL, *rs = strtok_r(rates_list, ",", &save2); rs; rs = strtok_r(NULL, ",", &save2)) {
			int rate = strcmp(rs, "max") == 0 ? 0 : atoi(rs);
			run_t r;

			if (measure(b, rate, spawners, secs, &r) < 0)
				return 1;
			printf("%-8s %7.0f %8llu %8llu %7.2f%% %7.2f%% %7llu %7llu", b, (double)r.spawned / secs,
			       r.spawned, r.seen, r.spawned ? 100.0 * (double)r.seen / (double)r.spawned : 0.0,
			       r.spawned ? 100.0 * (double)r.named / (double)r.spawned : 0.0, r.lost, r.events);
			if (r.events) {
				/* the storm's cost over the idle run's, which samples the same system as often */
				double user = (double)r.user_us - (double)idle.user_us * r.secs / idle.secs;
				double sys = (double)r.sys_us - (double)idle.sys_us * r.secs / idle.secs;

				printf(" %7.2fus %7.2fus %7.2fus\n", (double)r.feed_cpu_ns / 1000.0 / (double)r.events,
				       user / (double)r.events, sys / (double)r.events);
			} else {
				printf(" %9s %9s %9s\n", "-", "-", "-");
			}
			fflush(stdout);
		}
	}
	return 0;
}
