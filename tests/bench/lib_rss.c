/*
 * lib_rss.c: the library's own memory, as a plain client sees it: the
 * resident size of a PROC_ALL client of PROC_STAT|PROC_VM|PROC_IO (the feed
 * and the sampler as they come by default) after three samples, with N idle
 * processes added, and what each added process cost.
 *
 *	tests/bench/lib_rss [--procs 0,1000,5000]
 *
 * The RSS and, apart, its anonymous part (RssAnon: the heap, where the
 * library's nodes, stores and the iterator's slots are): the rest is mostly
 * shared libraries and the BPF maps, whose pages become resident as they
 * are touched (the iterator's held table: 32 bytes an entry, one and a half
 * to three entries a task, in the pages the tids hash to; the feed's ring).  And the
 * peak (VmHWM): loading the BPF programs once read the kernel's BTF whole
 * into the heap (libbpf's skeletons), 9 to 10 MB of a start-up's peak.
 * And the bytes malloc has given out and not had back (glibc's
 * mallinfo2()), per process added: what the RSS shows only in whole pages
 * and with the heap's holes, to the byte (a node's malloc chunk is 16-byte
 * steps), and the same from run to run where the RSS is not.
 *
 * Each count is measured in a process of its own (forked before the library
 * is touched), so that no count inherits another's heap.  The idle children
 * are killed and reaped at the end, and die with this program should it die
 * first (PR_SET_PDEATHSIG).  Goal (vtop issue): at most
 * 1 KiB per process beyond its strings.
 */
#include "config.h"

#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vmon.h"

static long status_kb(const char *field)
{
	FILE *f = fopen("/proc/self/status", "re");
	size_t len = strlen(field);
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, field, len) == 0 && line[len] == ':')
			kb = atol(line + len + 1);
	}
	fclose(f);
	return kb;
}

/* the bytes malloc has given out and not had back, or -1 without glibc's mallinfo2() */
static long heap_in_use(void)
{
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 33)
	return (long)mallinfo2().uordblks;
#else
	return -1;
#endif
}

/* in a child: the client's RSS after three samples and its peak, written to fd as "procs kb anon_kb peak_kb ..." */
static void measure(int fd)
{
	const struct timespec pause_200ms = { 0, 200000000L };
	vmon_feed_stats_t fst;
	vmon_stats_t st;
	vmon_attr_t attr;
	vmon_t vmon;

	vmon_attr_default(&attr);
	attr.flags = VMON_FLAG_PROC_ALL;
	attr.proc_wants = VMON_WANT_PROC_STAT | VMON_WANT_PROC_VM | VMON_WANT_PROC_IO;
	if (!vmon_init_attr(&vmon, &attr))
		_exit(1);
	for (int i = 0; i < 3; i++) {
		if (!vmon_sample(&vmon))
			_exit(1);
		nanosleep(&pause_200ms, NULL);
	}
	vmon_get_stats(&vmon, &st);
	vmon_feed_get_stats(&vmon, &fst);
	dprintf(fd, "%d %ld %ld %ld %ld %s %s\n", st.procs, status_kb("VmRSS"), status_kb("RssAnon"), status_kb("VmHWM"),
		heap_in_use(),
		vmon_sampler_name(vmon_get_sampler(&vmon)),
		vmon_feed_backend_name(fst.backend));
	_exit(0);
}

static pid_t *idle;
static int idle_nr;

static void reap_idle(void)
{
	for (int i = 0; i < idle_nr; i++)
		kill(idle[i], SIGKILL);
	for (int i = 0; i < idle_nr; i++)
		waitpid(idle[i], NULL, 0);
	idle_nr = 0;
}

int main(int argc, char **argv)
{
	const char *procs = argc == 3 && strcmp(argv[1], "--procs") == 0 ? argv[2] : "0,1000,5000";
	long base_kb = -1, base_anon_kb = -1, base_heap = -1;
	int base_procs = 0, have = 0;

	if (argc != 1 && argc != 3) {
		fprintf(stderr, "usage: lib_rss [--procs 0,1000,5000]\n");
		return 2;
	}
	printf("%8s %8s %10s %12s %10s %12s %10s %11s  %s\n", "idle", "procs", "RSS KB", "KB/process", "anon KB", "anon KB/proc",
	       "peak KB", "malloc B/p", "sampler, feed");
	for (const char *p = procs; *p; ) {
		int want = atoi(p), pfd[2], nprocs;
		char line[256], sampler[64] = "", feed[64] = "";
		long kb, anon_kb, peak_kb, heap;
		ssize_t n;
		FILE *in;
		pid_t pid;

		if (want > have && !(idle = realloc(idle, sizeof(*idle) * (size_t)want))) {
			perror("lib_rss");
			return 1;
		}
		for (; have < want; have++) {
			pid = fork();
			if (pid < 0) {
				perror("lib_rss: fork");
				reap_idle();
				return 1;
			}
			if (pid == 0) {
				prctl(PR_SET_PDEATHSIG, SIGKILL);
				pause();
				_exit(0);
			}
			idle[idle_nr++] = pid;
		}
		if (pipe(pfd) < 0 || (pid = fork()) < 0) {
			perror("lib_rss");
			reap_idle();
			return 1;
		}
		if (pid == 0) {
			close(pfd[0]);
			measure(pfd[1]);
		}
		close(pfd[1]);
		in = fdopen(pfd[0], "r");
		n = in && fgets(line, sizeof(line), in) ? (ssize_t)strlen(line) : -1;
		if (in)
			fclose(in);
		waitpid(pid, NULL, 0);
		if (n <= 0 || sscanf(line, "%d %ld %ld %ld %ld %63s %63s", &nprocs, &kb, &anon_kb, &peak_kb, &heap, sampler,
					feed) != 7) {
			fprintf(stderr, "lib_rss: the client failed at %d idle processes\n", want);
			reap_idle();
			return 1;
		}
		if (base_kb < 0) {
			base_kb = kb;
			base_anon_kb = anon_kb;
			base_heap = heap;
			base_procs = nprocs;
		}
		printf("%8d %8d %10ld %12.2f %10ld %12.2f %10ld %11.0f  %s, %s\n", want, nprocs, kb,
		       nprocs > base_procs ? (double)(kb - base_kb) / (double)(nprocs - base_procs) : 0.0, anon_kb,
		       nprocs > base_procs ? (double)(anon_kb - base_anon_kb) / (double)(nprocs - base_procs) : 0.0,
		       peak_kb, nprocs > base_procs && heap >= 0 ? (double)(heap - base_heap) / (double)(nprocs - base_procs) : 0.0,
		       sampler, feed);
		fflush(stdout);
		p = strchr(p, ',');
		if (!p)
			break;
		p++;
	}
	reap_idle();
	free(idle);
	return 0;
}
